//! libFuzzer entry of the `fmt` target; the property is [`harness_grammar_fuzz::fmt`].

#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| harness_grammar_fuzz::fmt(data));
