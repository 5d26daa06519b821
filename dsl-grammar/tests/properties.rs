//! Properties over arbitrary and mutated input: the lexer is lossless, the parser never panics,
//! and every span lies within the input on char boundaries.

mod common;

use common::{check_invariants, corpus_files};
use proptest::prelude::*;

fn corpus_texts() -> Vec<String> {
    corpus_files()
        .iter()
        .map(|p| std::fs::read_to_string(p).expect("read corpus file"))
        .collect()
}

/// A corpus file with a few random edits: deletions, insertions of snippets and duplications.
fn mutated_corpus() -> impl Strategy<Value = String> {
    let texts = corpus_texts();
    let edits = prop::collection::vec(
        (
            any::<prop::sample::Index>(),
            0usize..12,
            0usize..4,
            "\\PC{0,4}",
        ),
        1..6,
    );
    (prop::sample::select(texts), edits).prop_map(|(mut text, edits)| {
        for (at, len, op, snippet) in edits {
            if text.is_empty() {
                text.push_str(&snippet);
                continue;
            }
            let mut start = at.index(text.len());
            while !text.is_char_boundary(start) {
                start -= 1;
            }
            let mut end = (start + len).min(text.len());
            while !text.is_char_boundary(end) {
                end += 1;
            }
            match op {
                0 => text.replace_range(start..end, ""),
                1 => text.insert_str(start, &snippet),
                2 => {
                    let piece = text[start..end].to_string();
                    text.insert_str(end, &piece);
                }
                _ => text.replace_range(start..end, &snippet),
            }
        }
        text
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1000))]

    #[test]
    fn arbitrary_text_keeps_the_invariants(text in any::<String>()) {
        prop_assert_eq!(check_invariants(&text), Ok(()));
    }

    #[test]
    fn printable_text_keeps_the_invariants(text in "[a-z{}()\\[\\]<>=.,;:|\"\\\\ \n0-9_+*/%!-]{0,80}") {
        prop_assert_eq!(check_invariants(&text), Ok(()));
    }

    #[test]
    fn mutated_corpus_files_keep_the_invariants(text in mutated_corpus()) {
        prop_assert_eq!(check_invariants(&text), Ok(()));
    }

    #[test]
    fn single_items_and_members_never_panic(text in mutated_corpus()) {
        let _ = harness_grammar::parse_item(&text);
        let _ = harness_grammar::parse_member(&text);
    }
}

#[test]
fn every_corpus_file_keeps_the_invariants() {
    for (path, text) in corpus_files().iter().zip(corpus_texts()) {
        assert_eq!(check_invariants(&text), Ok(()), "{}", path.display());
    }
}

/// Deep nesting of every recursive construct ends in one `TooDeep` error, not a stack overflow.
/// Test threads have a 2 MiB stack, so this also bounds the parser's stack use.
#[test]
fn deep_nesting_is_an_error_not_a_crash() {
    let n = 100_000;
    let cases = [
        format!("const A: Int = {}1", "(".repeat(n)),
        format!("const A: Int = {}1", "-".repeat(n)),
        format!("const A: Bool = {}x", "not ".repeat(n)),
        format!("const A: List<Int> = {}", "[".repeat(n)),
        format!("const A: Int = {}", "{".repeat(n)),
        format!("const A: Int = {}", "f(".repeat(n)),
        format!("const A: Int = {}", "if a { ".repeat(n)),
        format!("const A: Int = {}", "|x| ".repeat(n)),
        format!("type T = {}", "List<".repeat(n)),
        format!("type T = {}", "{ a: ".repeat(n)),
        format!("fn f() -> Int = match x {{ {} }}", "Some(".repeat(n)),
        format!("layer l {{ action a() {{ {} }} }}", "if a { ".repeat(n)),
    ];
    expect_one(&cases, harness_grammar::SyntaxErrorKind::TooDeep);
}

/// Flat chains do not nest brackets, but each link nests the tree: past the height limit they
/// end in one `TooLong` error, and every chain of the reproducers is covered.
#[test]
fn long_chains_are_an_error_not_a_crash() {
    let n = 100_000;
    let cases = [
        format!("const A: Int = {}1", "1 + ".repeat(n)),
        format!("const A: Int = {}1", "2 * ".repeat(n)),
        format!("const A: Bool = {}x", "a and ".repeat(n)),
        format!("const A: Bool = {}x", "a or ".repeat(n)),
        format!("const A: Int = x{}", ".f()".repeat(n)),
        format!("const A: Int = x{}", "[0]".repeat(n)),
        format!("const A: Int = x{}", ".b".repeat(n)),
        format!("const A: Int = f{}", "(1)".repeat(n)),
        format!("const A: Int = {}{{ 0 }}", "if a { 1 } else ".repeat(n)),
        format!(
            "layer l {{ action a() {{ {} }} }}",
            "if a {} else ".repeat(n)
        ),
        // A chain whose first operand is itself deep is bounded by the whole tree's height.
        format!("const A: Int = {}", nested_chains(5, 300)),
    ];
    expect_one(&cases, harness_grammar::SyntaxErrorKind::TooLong);
}

/// Chains and `else if` arms below the height limit parse without errors.
#[test]
fn chains_below_the_limit_are_fine() {
    let n = harness_grammar::MAX_HEIGHT - 10;
    let cases = [
        format!("const A: Int = {}1", "1 + ".repeat(n)),
        format!("const A: Int = x{}", ".f()".repeat(n)),
        format!("const A: Int = {}{{ 0 }}", "if a { 1 } else ".repeat(n)),
        format!(
            "layer l {{ action a() {{ {} {{}} }} }}",
            "if a {} else ".repeat(n)
        ),
        format!("const A: Int = {}", nested_chains(3, 300)),
    ];
    for text in &cases {
        assert_eq!(
            harness_grammar::parse(text).errors,
            vec![],
            "{}",
            &text[..40]
        );
    }
}

/// `levels` brackets, each around a chain of `links` additions: `((1 + 1 + 1) + 1 + 1)`.
fn nested_chains(levels: usize, links: usize) -> String {
    let mut text = "1".to_owned();
    for _ in 0..levels {
        text = format!("({text}{})", " + 1".repeat(links));
    }
    text
}

fn expect_one(cases: &[String], kind: harness_grammar::SyntaxErrorKind) {
    for text in cases {
        let parse = harness_grammar::parse(text);
        let too_deep: Vec<_> = parse.errors.iter().filter(|e| e.kind == kind).collect();
        assert_eq!(too_deep.len(), 1, "{}...: {:?}", &text[..40], parse.errors);
        assert_eq!(
            parse.errors.len(),
            1,
            "{}...: {:?}",
            &text[..40],
            parse.errors
        );
    }
}

#[test]
fn nesting_up_to_the_limit_is_fine() {
    let depth = harness_grammar::MAX_DEPTH - 2;
    let text = format!("const A: Int = {}1{}", "(".repeat(depth), ")".repeat(depth));
    assert_eq!(harness_grammar::parse(&text).errors, vec![]);
}
