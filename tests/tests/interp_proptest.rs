//! A property test over generated valid programs for the interpreter (issue 19): each
//! generated harness checks without an error, and an episode of it on the search game
//! - terminates, ending with the game over or a located R-code of arithmetic;
//! - is deterministic (two runs give byte-identical traces);
//! - never exhausts a step budget set to the checker's static bound of a whole turn, so the
//!   cost bound is an upper bound on random programs too, not only on the bundled ones.

use std::sync::Arc;

use harness::games::Registry;
use harness_compiler::Workspace;
use harness_compiler::cost::UNBOUNDED;
use harness_runtime::{
    EndReason, GameKind, GameOptions, Limits, Machine, RngStreams, Switches, run_episode,
    to_json_lines,
};
use harness_search::LineSearch;
use proptest::prelude::*;

/// An `Int` expression; closure parameters are referred to by an index into the scope.
#[derive(Clone, Debug)]
enum Gen {
    Lit(i64),
    Var(u8),
    Cells,
    ProbesLeft,
    Add(Box<Gen>, Box<Gen>),
    Sub(Box<Gen>, Box<Gen>),
    Mul(Box<Gen>, Box<Gen>),
    If(Box<Gen>, Box<Gen>, Box<Gen>, Box<Gen>),
    MapSum(u8, Box<Gen>),
    FilterLen(u8, Box<Gen>),
    Count(u8, Box<Gen>),
    MaxBy(u8, Box<Gen>),
    ListSum(Vec<Gen>),
    Let(Box<Gen>, Box<Gen>),
}

fn program() -> impl Strategy<Value = Gen> {
    let leaf = prop_oneof![
        (-20i64..20).prop_map(Gen::Lit),
        any::<u8>().prop_map(Gen::Var),
        Just(Gen::Cells),
        Just(Gen::ProbesLeft),
    ];
    leaf.prop_recursive(4, 24, 3, |inner| {
        let boxed = inner.clone();
        let b = move || boxed.clone().prop_map(Box::new);
        prop_oneof![
            (b(), b()).prop_map(|(x, y)| Gen::Add(x, y)),
            (b(), b()).prop_map(|(x, y)| Gen::Sub(x, y)),
            (b(), b()).prop_map(|(x, y)| Gen::Mul(x, y)),
            (b(), b(), b(), b()).prop_map(|(a, c, t, o)| Gen::If(a, c, t, o)),
            (0u8..12, b()).prop_map(|(k, e)| Gen::MapSum(k, e)),
            (0u8..12, b()).prop_map(|(k, e)| Gen::FilterLen(k, e)),
            (0u8..12, b()).prop_map(|(k, e)| Gen::Count(k, e)),
            (0u8..12, b()).prop_map(|(k, e)| Gen::MaxBy(k, e)),
            proptest::collection::vec(inner.clone(), 1..4).prop_map(Gen::ListSum),
            (b(), b()).prop_map(|(v, e)| Gen::Let(v, e)),
        ]
    })
}

/// The expression's text with `depth` closure parameters or lets in scope (`v0`, `v1`...).
fn render(g: &Gen, depth: usize) -> String {
    let bin =
        |op: &str, a: &Gen, b: &Gen| format!("({} {op} {})", render(a, depth), render(b, depth));
    let over = |k: &u8, body: &str| format!("range(0, {k}).{body}");
    let v = format!("v{depth}");
    match g {
        Gen::Lit(n) if *n < 0 => format!("({n})"),
        Gen::Lit(n) => n.to_string(),
        Gen::Var(i) if depth == 0 => (i % 7).to_string(),
        Gen::Var(i) => format!("v{}", usize::from(*i) % depth),
        Gen::Cells => "game.cells".into(),
        Gen::ProbesLeft => "game.probes_left".into(),
        Gen::Add(a, b) => bin("+", a, b),
        Gen::Sub(a, b) => bin("-", a, b),
        Gen::Mul(a, b) => bin("*", a, b),
        Gen::If(a, c, t, o) => format!(
            "if {} > {} {{ {} }} else {{ {} }}",
            render(a, depth),
            render(c, depth),
            render(t, depth),
            render(o, depth)
        ),
        Gen::MapSum(k, e) => over(k, &format!("map(|{v}| {}).sum()", render(e, depth + 1))),
        Gen::FilterLen(k, e) => over(
            k,
            &format!("filter(|{v}| {} > 0).len()", render(e, depth + 1)),
        ),
        Gen::Count(k, e) => over(k, &format!("count(|{v}| {} > 0)", render(e, depth + 1))),
        Gen::MaxBy(k, e) => format!(
            "match {} {{ Some(m{depth}) => m{depth}, None => 0 }}",
            over(
                k,
                &format!("max_by(|{v}| ({}).to_float())", render(e, depth + 1))
            )
        ),
        Gen::ListSum(items) => format!(
            "[{}].sum()",
            items
                .iter()
                .map(|i| render(i, depth))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        Gen::Let(value, body) => format!(
            "{{ let {v} = {}; {} }}",
            render(value, depth),
            render(body, depth + 1)
        ),
    }
}

/// A harness whose decision reads the generated value each turn and whose state accumulates it.
fn program_text(g: &Gen) -> String {
    format!(
        "harness prop.generated\n\nuse game search\n\nlayer l {{\n  state {{\n    seen: Int = 0\n  }}\n\n  \
         computed value: Int = {}\n\n  action probe(cell: Int) {{\n    patch seen += 1\n    emit \
         game.probe(cell)\n  }}\n\n  action guess(cell: Int) {{\n    emit game.guess(cell)\n  }}\n\n  \
         decide {{\n    when value > seen, game.probes_left > 0 => probe(seen % game.cells)\n    \
         guess(0)\n  }}\n}}\n",
        render(g, 0)
    )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn generated_programs_run_terminate_within_their_bound_and_are_deterministic(g in program()) {
        let text = program_text(&g);
        let mut ws = Workspace::new(Registry::standard().signatures());
        ws.set_file("generated.harness", &text);
        let errors: Vec<String> = ws
            .diagnostics()
            .iter()
            .filter(|d| d.is_error())
            .map(|d| format!("{} {}", d.code.as_str(), d.message))
            .collect();
        prop_assert!(errors.is_empty(), "{text}\n{errors:?}");
        let program = ws.program("prop.generated").unwrap_or_else(|d| panic!("{d:?}"));
        let bound = ws.cost("prop.generated").unwrap_or_else(|d| panic!("{d:?}"));
        prop_assert_ne!(bound.turn, UNBOUNDED, "{}", text);
        let limits = Limits { steps_per_turn: bound.turn, ..Limits::default() };
        let mut natives = harness_stdlib::prelude::natives();
        natives.extend(&LineSearch.natives());
        let machine = Machine::new(Arc::clone(&program), natives, &Switches::default(), limits)
            .unwrap_or_else(|e| panic!("{e}"));
        let run = || {
            let mut game = LineSearch
                .start("n16-p10", &GameOptions::default(), &RngStreams::new(7))
                .unwrap_or_else(|e| panic!("{e}"));
            run_episode(&machine, game.as_mut())
        };
        let (first, second) = (run(), run());
        match (&first.end, &first.error) {
            (EndReason::GameOver, None) => {}
            (EndReason::Error, Some(error)) => prop_assert!(
                error.code == "R0001",
                "{text}\nonly overflow may end a generated program, not {}: {}",
                error.code,
                error.message
            ),
            other => prop_assert!(false, "{text}\nended with {other:?}"),
        }
        prop_assert_eq!(
            to_json_lines(&first.events),
            to_json_lines(&second.events),
            "{}", text
        );
    }
}
