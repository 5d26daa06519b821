//! Diagnostics and recovery are linear in the number of errors and warnings (issue 19, item 2):
//! 10k unused constants took 12.8 s to check and 20k 51 s; 20k syntax errors 18.7 s. Work is
//! counted, not timed: the salsa queries a check executes, the diagnostics it makes, and the
//! bytes of source the rendering scans (to miette for the report of each diagnostic, and to
//! place its line and column as the JSON output does). Each count for twice the errors must be
//! about twice the count for the errors: a quadratic step makes it about four times.

use harness_compiler::{Diagnostic, Workspace};

/// What checking and rendering one file took.
#[derive(Debug)]
struct Work {
    diagnostics: u64,
    queries: u64,
    scanned: u64,
}

fn work(text: &str) -> Work {
    let mut workspace =
        Workspace::with_query_log(harness::games::Registry::standard().signatures());
    workspace.database().start_log();
    workspace.set_file("hostile.harness", text);
    let diagnostics: Vec<Diagnostic> = workspace.diagnostics();
    let queries = workspace.database().take_log().len() as u64;
    let source = diagnostics
        .iter()
        .find_map(|d| d.source.clone())
        .expect("the diagnostics carry their file's text");
    let before = source.scanned();
    for diagnostic in &diagnostics {
        let rendered = format!("{:?}", miette::Report::new(diagnostic.clone()));
        assert!(rendered.contains(diagnostic.code.as_str()), "{rendered}");
        let text = diagnostic.source.as_ref().expect("a source");
        let _ = text.line_column(diagnostic.span.start as usize);
        let _ = text.line_column(diagnostic.span.end as usize);
    }
    Work {
        diagnostics: diagnostics.len() as u64,
        queries,
        scanned: source.scanned() - before,
    }
}

/// Asserts that each count of `big` (twice the errors of `small`) is about twice `small`'s; the
/// queries at most twice (a file of one chunk runs the same queries at any size).
fn linear(what: &str, small: &Work, big: &Work) {
    let pairs = [
        ("diagnostics", small.diagnostics, big.diagnostics, 1.8),
        ("queries", small.queries, big.queries, 0.99),
        ("scanned bytes", small.scanned, big.scanned, 1.8),
    ];
    for (name, a, b, least) in pairs {
        let ratio = b as f64 / a.max(1) as f64;
        assert!(
            (least..=2.3).contains(&ratio),
            "{what}: {name} grew {ratio:.2}x for twice the errors ({a} -> {b}): {small:?} {big:?}"
        );
    }
}

fn unused_consts(n: usize) -> String {
    let mut text = String::from("harness hostile\n");
    for i in 0..n {
        text.push_str(&format!("const C{i}: Int = {i}\n"));
    }
    text
}

fn syntax_errors(n: usize) -> String {
    let mut text = String::from("harness hostile\n");
    for i in 0..n {
        text.push_str(&format!("const C{i}: Int = = {i}\n"));
    }
    text
}

#[test]
fn ten_and_twenty_thousand_unused_constants_cost_linear_work() {
    let (small, big) = (work(&unused_consts(10_000)), work(&unused_consts(20_000)));
    assert_eq!(small.diagnostics, 10_000, "one W0004 per constant");
    linear("unused constants", &small, &big);
}

#[test]
fn ten_and_twenty_thousand_syntax_errors_cost_linear_work() {
    let (small, big) = (work(&syntax_errors(10_000)), work(&syntax_errors(20_000)));
    assert!(small.diagnostics >= 10_000, "{small:?}");
    linear("syntax errors", &small, &big);
}

/// A soup of keywords and punctuation, one fragment per line: recovery at every line.
fn keyword_soup(n: usize) -> String {
    let fragments = [
        "layer ",
        "state {",
        "fn ",
        "decide ",
        "when ",
        "=> ",
        "patch ",
        "}",
        "computed ",
        "match ",
        "if ",
        "else ",
        "action ",
        "emit ",
        "use game ",
        "(",
        ")",
        "[",
        "]",
        ": Int = ",
    ];
    let mut text = String::from("harness hostile\n");
    for i in 0..n {
        text.push_str(fragments[i % fragments.len()]);
        text.push_str(fragments[(i * 7 + 3) % fragments.len()]);
        text.push('\n');
    }
    text
}

#[test]
fn ten_and_twenty_thousand_lines_of_keyword_soup_cost_linear_work() {
    let (small, big) = (work(&keyword_soup(10_000)), work(&keyword_soup(20_000)));
    assert!(small.diagnostics > 0, "{small:?}");
    linear("keyword soup", &small, &big);
}

/// A `match` of ten (twenty) thousand literal arms, each written twice: every second arm is
/// unreachable, a warning each (the check keeps an index of the earlier arms).
fn repeated_arms(n: usize) -> String {
    let mut arms = String::new();
    for i in 0..n / 2 {
        arms.push_str(&format!("    {i} => {i},\n    {i} => {i},\n"));
    }
    format!(
        "harness hostile\n\nconst X: Int = 3\nconst Y: Int = match X {{\n{arms}    _ => 0,\n}}\n\n\
         layer l {{\n  computed y: Int = Y\n  decide {{ }}\n}}\n"
    )
}

#[test]
fn ten_and_twenty_thousand_match_arms_cost_linear_work() {
    let (small, big) = (work(&repeated_arms(10_000)), work(&repeated_arms(20_000)));
    assert!(small.diagnostics >= 5_000, "{small:?}");
    linear("repeated match arms", &small, &big);
}
