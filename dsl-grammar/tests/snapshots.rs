//! Snapshot tests of the syntax tree for representative corpus files.
//!
//! Each snapshot holds the input, the syntax errors and the tree. After an intended change,
//! regenerate them with `INSTA_UPDATE=always cargo test -p harness-grammar --test snapshots`
//! (or `cargo insta review`) and read the diff before committing.

use std::fmt::Write as _;

fn render(text: &str) -> String {
    let parse = harness_grammar::parse(text);
    let mut out = String::new();
    let _ = writeln!(out, "--- input ---\n{text}\n--- errors ---");
    for error in &parse.errors {
        let _ = writeln!(
            out,
            "{:?} at {}..{}: {}",
            error.kind, error.span.start, error.span.end, error.message
        );
    }
    let _ = writeln!(out, "--- tree ---\n{:#?}", parse.file);
    out
}

fn snapshot(name: &str) {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/corpus")
        .join(format!("{name}.harness"));
    let text = std::fs::read_to_string(&path).expect("read corpus file");
    insta::assert_snapshot!(name, render(&text));
}

#[test]
fn full_example() {
    snapshot("valid_full_example");
}

#[test]
fn decide_rules() {
    snapshot("valid_decide_rules");
}

#[test]
fn statements() {
    snapshot("valid_statements");
}

#[test]
fn match_patterns() {
    snapshot("valid_match");
}

#[test]
fn records() {
    snapshot("valid_records");
}

#[test]
fn operators() {
    snapshot("valid_not_in_and_logic");
}

#[test]
fn doc_comments() {
    snapshot("valid_doc_comments");
}

#[test]
fn config_ranges() {
    snapshot("valid_config_ranges");
}

#[test]
fn several_mistakes() {
    snapshot("invalid_several_mistakes");
}

/// Which declaration a doc comment documents does not depend on the layout around brackets.
#[test]
fn stray_doc_comments() {
    snapshot("valid_stray_doc_comments");
}
