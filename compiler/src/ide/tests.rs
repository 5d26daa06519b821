//! The editor queries on small workspaces, below the language server's JSON-RPC.

use super::edit::{open_call, param_ranges};
use super::*;
use crate::signatures::SignatureSet;

const PLANNER: &str = "\
harness demo.planner

/// Multiplies.
fn scale(x: Int, factor: Int) -> Int = x * factor

layer belief {
  state { n: Int = 0 }
  /// How often to lie.
  tunable lie_rate: Float = 0.1 in 0.0..=1.0
  computed total: Int = scale(n, 2)
  action bump() {
    if n > 1 {
      let hidden = n + 1
      patch n += hidden
    }
    let after = n * 3
    patch n += after
  }
  decide { when total < 100 => bump() }
}
";

fn workspace(files: &[(&str, &str)]) -> Workspace {
    let mut ws = Workspace::new(SignatureSet::default());
    for (path, text) in files {
        ws.set_file(path, text);
    }
    ws
}

/// The byte offset `delta` bytes into the `nth` occurrence of `needle`.
fn at(text: &str, needle: &str, nth: usize, delta: u32) -> u32 {
    let (offset, _) = text
        .match_indices(needle)
        .nth(nth)
        .unwrap_or_else(|| panic!("`{needle}` occurs {} times", nth + 1));
    offset as u32 + delta
}

fn labels(items: &[Completion]) -> Vec<&str> {
    items.iter().map(|c| c.label.as_str()).collect()
}

#[test]
fn the_planner_checks_clean() {
    let ws = workspace(&[("planner.harness", PLANNER)]);
    let errors: Vec<_> = ws
        .file_diagnostics("planner.harness")
        .into_iter()
        .filter(Diagnostic::is_error)
        .collect();
    assert!(errors.is_empty(), "{errors:?}");
}

#[test]
fn a_second_file_with_the_same_header_keeps_its_diagnostics_and_answers() {
    // Files are taken in path order: `second` is the one whose header repeats.
    let copy = PLANNER.replace("patch n += after", "patch n += aftr");
    let ws = workspace(&[("a/planner.harness", PLANNER), ("a/second.harness", &copy)]);
    let diagnostics = ws.file_diagnostics("a/second.harness");
    let codes: Vec<&str> = diagnostics.iter().map(|d| d.code.as_str()).collect();
    assert_eq!(codes, ["E0105", "E0101"], "{diagnostics:?}");
    // The duplicate is reported on the header's path, not at 1:1.
    let header = at(&copy, "demo.planner", 0, 0);
    assert_eq!(diagnostics[0].span.start, header);
    assert_eq!(
        diagnostics[0].span.end,
        header + "demo.planner".len() as u32
    );
    assert!(
        ws.file_diagnostics("a/planner.harness")
            .iter()
            .all(|d| !d.is_error())
    );
    // Hover and completion still answer in the second file.
    let hover = hover(&ws, "a/second.harness", at(&copy, "total <", 0, 1)).expect("a hover");
    assert!(hover.markdown.contains("computed total: Int"), "{hover:?}");
    let items = completions(&ws, "a/second.harness", at(&copy, "aftr", 0, 2));
    assert!(labels(&items).contains(&"after"), "{:?}", labels(&items));
}

#[test]
fn hover_on_a_tunable_names_the_keyword_once() {
    let ws = workspace(&[("planner.harness", PLANNER)]);
    let hover = hover(&ws, "planner.harness", at(PLANNER, "lie_rate", 0, 2)).expect("a hover");
    assert!(
        hover
            .markdown
            .starts_with("```harness\ntunable lie_rate: Float = 0.1 in 0.0..=1.0\n```"),
        "{}",
        hover.markdown
    );
    assert!(hover.markdown.contains("How often to lie."));
}

#[test]
fn hover_on_a_local_declaration_shows_its_type() {
    let ws = workspace(&[("planner.harness", PLANNER)]);
    for (needle, ty) in [("hidden =", "Int"), ("after =", "Int")] {
        let hover = hover(&ws, "planner.harness", at(PLANNER, needle, 0, 1)).expect("a hover");
        let name = needle.split(' ').next().unwrap_or_default();
        assert_eq!(
            hover.markdown,
            format!("```harness\n{name}: {ty}\n```"),
            "hover on the declaration of `{name}`"
        );
    }
}

#[test]
fn completion_offers_only_the_locals_in_scope() {
    let ws = workspace(&[("planner.harness", PLANNER)]);
    let path = "planner.harness";
    // Inside the `if` block: `hidden` is in scope.
    let inside = completions(&ws, path, at(PLANNER, "patch n += hidden", 0, 11));
    assert!(labels(&inside).contains(&"hidden"), "{:?}", labels(&inside));
    // After the block closed: `hidden` is not, `after` is.
    let after = completions(&ws, path, at(PLANNER, "patch n += after", 0, 11));
    assert!(!labels(&after).contains(&"hidden"), "{:?}", labels(&after));
    assert!(labels(&after).contains(&"after"), "{:?}", labels(&after));
}

#[test]
fn signature_help_follows_the_argument_under_the_cursor() {
    let ws = workspace(&[("planner.harness", PLANNER)]);
    let path = "planner.harness";
    let help = signature_help(&ws, path, at(PLANNER, "scale(n, 2)", 0, 6)).expect("help");
    assert_eq!(help.label, "fn scale(x: Int, factor: Int) -> Int");
    let params: Vec<&str> = help
        .params
        .iter()
        .map(|&(s, e)| &help.label[s as usize..e as usize])
        .collect();
    assert_eq!(params, ["x: Int", "factor: Int"]);
    assert_eq!(help.active, 0);
    assert!(help.docs.contains("Multiplies."), "{help:?}");
    let second = signature_help(&ws, path, at(PLANNER, "scale(n, 2)", 0, 9)).expect("help");
    assert_eq!(second.active, 1);
    // After the closing parenthesis there is no call around the cursor.
    assert_eq!(
        signature_help(&ws, path, at(PLANNER, "scale(n, 2)", 0, 11)),
        None
    );
}

#[test]
fn signature_help_skips_strings_and_nested_brackets() {
    assert_eq!(open_call("f(a, \"x, (y\", [1, 2], "), Some((1, 3)));
    assert_eq!(open_call("f(g(1, 2), "), Some((1, 1)));
    assert_eq!(open_call("f(1) + 2"), None);
    let label = "fn max_by<T>(self: List<T>, key: fn(T) -> Float) -> Option<T>";
    assert_eq!(
        param_ranges(label)
            .iter()
            .map(|&(s, e)| &label[s as usize..e as usize])
            .collect::<Vec<_>>(),
        ["self: List<T>", "key: fn(T) -> Float"]
    );
}

#[test]
fn prepare_rename_selects_a_declared_name_and_refuses_the_rest() {
    let ws = workspace(&[("planner.harness", PLANNER)]);
    let path = "planner.harness";
    let offset = at(PLANNER, "lie_rate", 0, 3);
    let span = prepare_rename(&ws, path, offset).expect("a tunable can be renamed");
    assert_eq!(&PLANNER[span.range()], "lie_rate");
    let call = prepare_rename(&ws, path, at(PLANNER, "scale(n", 0, 1)).expect("a function");
    assert_eq!(&PLANNER[call.range()], "scale");
    assert_eq!(
        prepare_rename(&ws, path, at(PLANNER, "layer", 0, 1)),
        Err(RenameError::NoSymbol)
    );
}

#[test]
fn range_formatting_changes_only_the_lines_of_the_range() {
    let text = "harness demo.f\n\nconst A: Int=1\nconst B: Int=2\n";
    let line_b = at(text, "const B", 0, 0);
    let edits = format_range(
        text,
        Span {
            start: line_b,
            end: line_b + 3,
        },
    )
    .expect("it parses");
    assert_eq!(edits.len(), 1, "{edits:?}");
    let (span, new) = &edits[0];
    assert_eq!(&text[span.range()], "const B: Int=2\n");
    assert_eq!(new, "const B: Int = 2\n");
    // The whole text formats both.
    let all = format_range(
        text,
        Span {
            start: 0,
            end: text.len() as u32,
        },
    )
    .expect("it parses");
    let mut formatted = text.to_owned();
    for (span, new) in all.iter().rev() {
        formatted.replace_range(span.range(), new);
    }
    assert_eq!(
        formatted,
        harness_grammar::format::format(text).expect("formats")
    );
    assert!(format_range("const = ", Span::default()).is_err());
}

const ASKER: &str = "\
harness demo.asker

type Count = { value: Int }

/// Asks for a count.
llm pick(limit: Int) -> Count
  ensure reply.value <= limit else \"within the limit\"
{
  system \"Answer with a number.\"
  user \"a number up to {limit}\"
}

layer belief {
  state { n: Int = 0 }
  action ask() {
    let reply = emit llm.pick(3)
    let got = match reply {
      LlmResult.Ok(v) => v.value,
      LlmResult.Failed(_) => 0,
    }
    patch n = got
  }
  decide { when n == 0 => ask() }
}
";

#[test]
fn llm_functions_their_parameters_and_replies_are_names_the_editor_knows() {
    let ws = workspace(&[("asker.harness", ASKER)]);
    let path = "asker.harness";
    let errors: Vec<_> = ws
        .file_diagnostics(path)
        .into_iter()
        .filter(Diagnostic::is_error)
        .collect();
    assert!(errors.is_empty(), "{errors:?}");
    // The call sent with `emit llm.pick(...)` is a reference of the declaration.
    let declared = at(ASKER, "pick(limit", 0, 0);
    let call = at(ASKER, "pick(3)", 0, 0);
    let found: Vec<u32> = references(&ws, path, declared)
        .into_iter()
        .map(|(_, span)| span.start)
        .collect();
    assert_eq!(found, [declared, call]);
    // The parameter is a local of the declaration, read in its `ensure` clause.
    let limit = at(ASKER, "limit: Int", 0, 0);
    let uses: Vec<u32> = references(&ws, path, limit)
        .into_iter()
        .map(|(_, span)| span.start)
        .collect();
    assert_eq!(uses, [limit, at(ASKER, "limit else", 0, 0)]);
    let hover = hover(&ws, path, limit + 1).expect("a hover");
    assert_eq!(hover.markdown, "```harness\nlimit: Int\n```");
    // The variants of the reply resolve to the library's `LlmResult`.
    let (symbol, _) = symbol_at(&ws, path, at(ASKER, "Ok(v)", 0, 0)).expect("a symbol");
    assert_eq!(
        symbol,
        Symbol::Variant {
            module: None,
            enum_name: "LlmResult".into(),
            variant: "Ok".into(),
        }
    );
}

/// An `llm` item, a function item and a layer's function hover with their one-line outline:
/// keyword, name, parameters and reply or result type, then their documentation.
#[test]
fn hover_on_callables_shows_their_outline() {
    let ws = workspace(&[("asker.harness", ASKER), ("planner.harness", PLANNER)]);
    let member = "layer l {\n  /// Adds one.\n  fn next(x: Int) -> Int = x + 1\n  computed m: Int = next(2)\n}\n";
    let ws = {
        let mut ws = ws;
        ws.set_file("member.harness", &format!("harness demo.member\n{member}"));
        ws
    };
    let cases = [
        (
            "asker.harness",
            at(ASKER, "pick(3)", 0, 1),
            "llm pick(limit: Int) -> Count",
            "Asks for a count.",
        ),
        (
            "planner.harness",
            at(PLANNER, "scale(n", 0, 1),
            "fn scale(x: Int, factor: Int) -> Int",
            "Multiplies.",
        ),
        (
            "member.harness",
            at(member, "next(2)", 0, 1) + 20,
            "fn next(x: Int) -> Int",
            "Adds one.",
        ),
    ];
    for (path, offset, outline, docs) in cases {
        let hover = hover(&ws, path, offset).expect("a hover");
        assert!(
            hover
                .markdown
                .starts_with(&format!("```harness\n{outline}\n```")),
            "{path}: {}",
            hover.markdown
        );
        assert!(hover.markdown.contains(docs), "{path}: {}", hover.markdown);
    }
}
