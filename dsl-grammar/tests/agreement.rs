//! The hand-written parser and the reference grammar `harness.pest` accept the same files.

mod common;

use common::{harness_files, parser_accepts, reference_accepts};
use proptest::prelude::*;

#[test]
fn both_grammars_agree_on_every_harness_file() {
    let files = harness_files();
    assert!(
        files.len() >= 40,
        "the corpus should hold at least 40 files, found {}",
        files.len()
    );
    let mut disagreements = Vec::new();
    for path in &files {
        let text = std::fs::read_to_string(path).expect("read a .harness file");
        let Some(parser) = parser_accepts(&text) else {
            continue;
        };
        let reference = reference_accepts(&text);
        if parser != reference {
            disagreements.push(format!(
                "{}: parser {}, reference {}",
                path.display(),
                verdict(parser),
                verdict(reference)
            ));
        }
    }
    assert!(
        disagreements.is_empty(),
        "the grammars disagree:\n{}",
        disagreements.join("\n")
    );
}

fn verdict(accepted: bool) -> &'static str {
    if accepted { "accepts" } else { "rejects" }
}

/// Pieces of the language, so that random sequences often come close to valid code.
const PIECES: &[&str] = &[
    "layer l",
    "{",
    "}",
    "(",
    ")",
    "[",
    "]",
    ",",
    ";",
    ":",
    ".",
    "..",
    "..=",
    "=",
    "==",
    "!=",
    "<",
    "<=",
    ">",
    ">=",
    "+",
    "-",
    "*",
    "/",
    "%",
    "+=",
    "-=",
    "*=",
    "=>",
    "->",
    "|",
    "x",
    "Foo",
    "_",
    "1",
    "2.5",
    "1e3",
    "\"s\"",
    "true",
    "state",
    "computed c: Int =",
    "fn f(a: Int) -> Int =",
    "action a()",
    "available when",
    "requires",
    "else fail E",
    "model game.f(c)",
    "on game.o(c)",
    "decide",
    "revise when",
    "patch",
    "emit",
    "let",
    "if",
    "else",
    "match",
    "in",
    "not",
    "and",
    "or",
    "game",
    "sim",
    "with probability",
    "otherwise",
    "when",
    "const X: Int =",
    "type T =",
    "enum E",
    "use",
    "config",
    "error E = \"m\"",
    "tunable t: Int = 1 in",
    "Some(",
    "List<Int>",
    "Budget { a: 1 }",
    "\n",
    " ",
    "// c\n",
];

fn token_soup() -> impl Strategy<Value = String> {
    prop::collection::vec(prop::sample::select(PIECES), 0..40).prop_map(|pieces| pieces.join(" "))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn both_grammars_agree_on_token_soup(text in token_soup()) {
        if let Some(parser) = parser_accepts(&text) {
            prop_assert_eq!(parser, reference_accepts(&text), "text: {:?}", text);
        }
    }
}
