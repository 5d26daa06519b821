//! libFuzzer entry of the `agree` target; the property is [`harness_grammar_fuzz::agree`].

#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| harness_grammar_fuzz::agree(data));
