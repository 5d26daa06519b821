//! libFuzzer entry of the `parse` target; the property is [`harness_grammar_fuzz::parse`].

#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| harness_grammar_fuzz::parse(data));
