//! The cost bound's reports do not depend on the order in which the analysis meets the bodies
//! of a module: a memoised function call is the call a fresh analysis would make, and what a
//! body reports over the limit is its own.

use harness_compiler::Workspace;
use harness_compiler::codes::Code;
use harness_compiler::signatures::SignatureSet;

/// The builtins the cases call, as the prelude declares them.
fn signatures() -> SignatureSet {
    let mut signatures = SignatureSet::default();
    signatures
        .builtin("fn range(lo: Int, hi: Int) -> List<Int>", "", "")
        .builtin(
            "fn map<T, U>(self: List<T>, f: fn(T) -> U) -> List<U>",
            "",
            "",
        )
        .builtin("fn sum<T: Num>(self: List<T>) -> T", "", "");
    assert!(signatures.all_problems().is_empty());
    signatures
}

/// The text of every E0901 of `text` checked under `limit`, sorted; the check is otherwise
/// clean.
fn over_limit(text: &str, limit: u64) -> Vec<String> {
    let mut workspace = Workspace::new(signatures());
    workspace.set_file("t.harness", text);
    workspace.set_cost_limit(limit);
    let diagnostics = workspace.diagnostics();
    let errors = diagnostics.iter().filter(|d| d.is_error());
    assert!(
        errors.clone().all(|d| d.code == Code::CostOverLimit),
        "{diagnostics:?}"
    );
    let mut out: Vec<String> = errors
        .map(|d| text[d.span.start as usize..d.span.end as usize].to_owned())
        .collect();
    out.sort();
    out
}

/// Two calls of one function with arguments of the same length but elements of other sizes are
/// two analyses: the second call's bound is its own, not the first's.
#[test]
fn a_call_with_larger_elements_is_analysed_again() {
    let text = "\
harness t.calls

fn total(xs: List<List<Int>>) -> Int = xs.map(|r| r.sum()).sum()

layer l {
  computed small: Int = total(range(0, 10).map(|i| range(0, 10)))
  computed big: Int = total(range(0, 10).map(|i| range(0, 100000)))
  decide { }
}
";
    assert_eq!(
        over_limit(text, 500_000),
        vec![
            "range(0, 10).map(|i| range(0, 100000))",
            "xs.map(|r| r.sum())"
        ]
    );
}

/// A function whose body passes the limit is reported in its body, and the expressions around
/// each of its calls are judged alike: neither call is reported, whichever comes first.
#[test]
fn every_call_of_a_function_over_the_limit_is_judged_alike() {
    let text = "\
harness t.twice

fn heavy(n: Int) -> Int = range(0, 100000).map(|i| i + n).sum()

layer l {
  computed a: Int = heavy(1) + 1
  computed b: Int = heavy(1) + 2
  decide { }
}
";
    assert_eq!(over_limit(text, 50_000), vec!["range(0, 100000)"]);
}

/// A computed value that reads another one over the limit is judged on its own work, the same
/// whether the other one is declared before or after it.
#[test]
fn reading_a_computed_value_over_the_limit_does_not_hide_the_reader() {
    let reader = "  computed reader: Int = range(0, 2000).map(|i| heavy + i).sum()\n";
    let heavy = "  computed heavy: Int = range(0, 100000).map(|i| i * 2).sum()\n";
    let module = |first: &str, second: &str| {
        format!("harness t.reads\n\nlayer l {{\n{first}{second}  decide {{ }}\n}}\n")
    };
    let expected = vec![
        "range(0, 100000)".to_owned(),
        "range(0, 2000).map(|i| heavy + i)".to_owned(),
    ];
    assert_eq!(over_limit(&module(reader, heavy), 5_000), expected);
    assert_eq!(over_limit(&module(heavy, reader), 5_000), expected);
}
