//! The hand-written parser and the reference grammar accept the same UTF-8 texts.
//!
//! Texts on which the parser gives up because of nesting depth are skipped (the reference grammar
//! has no limit), and literals out of range do not count as rejections (a grammar cannot see
//! them): the same rules as `tests/agreement.rs`.

#![no_main]

use harness_grammar::SyntaxErrorKind;
use libfuzzer_sys::fuzz_target;
use pest::Parser as _;

#[derive(pest_derive::Parser)]
#[grammar = "../harness.pest"]
struct Reference;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let parse = harness_grammar::parse(text);
    if parse.errors.iter().any(|e| e.kind == SyntaxErrorKind::TooDeep) {
        return;
    }
    let parser = parse.errors.iter().all(|e| e.kind == SyntaxErrorKind::NumberOutOfRange);
    let reference = Reference::parse(Rule::file, text).is_ok();
    assert_eq!(parser, reference, "parser errors: {:?}", parse.errors);
});
