//! libFuzzer entry of the `check` target; the property is [`harness_grammar_fuzz::check`].

#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| harness_grammar_fuzz::check(data));
