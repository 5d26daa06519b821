//! The parser never panics, and its tokens reproduce the input, on any UTF-8 text.

#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let parse = harness_grammar::parse(&text);
    let rebuilt: String = parse.tokens.iter().map(|t| &text[t.span.range()]).collect();
    assert_eq!(rebuilt, text);
    for error in &parse.errors {
        assert!(text.get(error.span.range()).is_some(), "error span off the text: {error:?}");
    }
    let _ = harness_grammar::parse_item(&text);
    let _ = harness_grammar::parse_member(&text);
});
