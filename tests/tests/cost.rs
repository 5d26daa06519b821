//! The cost bound of a turn (issue 19): the checker's static bound per phase is a sufficient
//! step budget for real runs of bundled harnesses on two games, it is finite for every
//! Battleship module, and the hostile aggregates end their turn with an R-code within the
//! runtime's step and memory budgets instead of running for hours or exhausting the heap.

use std::path::Path;

use harness::games::Registry;
use harness_compiler::Workspace;
use harness_compiler::cost::{CostReport, UNBOUNDED};
use harness_compiler::ir::Program;
use harness_runtime::{
    EndReason, EpisodeResult, GameOptions, Limits, Machine, RngStreams, Switches, run_episode,
};
use std::sync::Arc;

fn root() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/.."))
}

/// A workspace of the given harness files (paths relative to the repository).
fn workspace(files: &[&str]) -> Workspace {
    let mut workspace = Workspace::new(Registry::standard().signatures());
    for file in files {
        let text = std::fs::read_to_string(root().join(file)).unwrap_or_else(|e| panic!("{e}"));
        workspace.set_file(file, &text);
    }
    workspace
}

fn program(workspace: &Workspace, module: &str) -> Arc<Program> {
    workspace
        .program(module)
        .unwrap_or_else(|d| panic!("{module} does not check: {d:?}"))
}

fn report(workspace: &Workspace, module: &str) -> CostReport {
    workspace
        .cost(module)
        .unwrap_or_else(|d| panic!("{module} has no cost report: {d:?}"))
}

/// Every phase of `module`'s report has a finite bound within the limit.
fn assert_every_phase_bounded(module: &str, bound: &CostReport) {
    for phase in &bound.phases {
        assert!(
            phase.steps != UNBOUNDED && phase.steps <= bound.limit,
            "{module} {}: {} steps, unbounded by {:?}",
            phase.phase,
            phase.steps,
            phase.unbounded
        );
    }
}

/// One episode of `program` on its game with `limits`.
fn episode(program: Arc<Program>, instance: &str, seed: u64, limits: Limits) -> EpisodeResult {
    let registry = Registry::standard();
    let kind = registry
        .get(program.game.as_deref().unwrap_or_default())
        .unwrap_or_else(|e| panic!("{e}"));
    let mut natives = harness_stdlib::prelude::natives();
    natives.extend(&kind.natives());
    let machine = Machine::new(program, natives, &Switches::default(), limits)
        .unwrap_or_else(|e| panic!("setup failed: {e}"));
    let mut game = kind
        .start(instance, &GameOptions::default(), &RngStreams::new(seed))
        .unwrap_or_else(|e| panic!("{e}"));
    run_episode(&machine, game.as_mut())
}

/// With the step budget set to the static bound of a whole turn, no turn runs out of it: the
/// bound is an upper bound of what the interpreter counts (evaluated nodes and the elements
/// builtins walk and build). A budget far below the bound does run out, so the runs are not
/// trivially cheap.
fn the_bound_suffices(files: &[&str], module: &str, instances: &[&str], seeds: u64) {
    let ws = workspace(files);
    let bound = report(&ws, module);
    assert_ne!(bound.turn, UNBOUNDED, "{module}: {bound:?}");
    for instance in instances {
        for seed in 0..seeds {
            let limits = Limits {
                steps_per_turn: bound.turn,
                ..Limits::default()
            };
            let result = episode(program(&ws, module), instance, seed, limits);
            assert_eq!(
                result.end,
                EndReason::GameOver,
                "{module} on {instance}, seed {seed}, with the bound {} as budget: {:?}",
                bound.turn,
                result.error
            );
        }
    }
    let starved = Limits {
        steps_per_turn: 20,
        ..Limits::default()
    };
    let result = episode(program(&ws, module), instances[0], 0, starved);
    assert_eq!(
        result.error.map(|e| e.code),
        Some("R0009"),
        "{module} ran within 20 steps a turn"
    );
}

#[test]
fn the_static_bound_is_a_sufficient_step_budget_for_the_search_example() {
    the_bound_suffices(
        &["harnesses/examples/search.harness"],
        "examples.search",
        &["n16-p10", "n100-p20"],
        3,
    );
}

#[test]
fn the_static_bound_is_a_sufficient_step_budget_for_battleship_planning() {
    the_bound_suffices(
        &[
            "harnesses/battleship/belief.harness",
            "harnesses/battleship/planning.harness",
        ],
        "battleship.planning",
        &["B01"],
        1,
    );
}

#[test]
fn every_battleship_module_has_a_finite_bound_per_phase_within_the_limit() {
    let files = [
        "harnesses/battleship/belief.harness",
        "harnesses/battleship/planning.harness",
        "harnesses/battleship/reflection.harness",
        "harnesses/battleship/revision.harness",
    ];
    let ws = workspace(&files);
    for module in [
        "battleship.belief",
        "battleship.planning",
        "battleship.reflection",
        "battleship.revision",
    ] {
        let bound = report(&ws, module);
        assert_eq!(bound.phases.len(), 5, "{module}");
        assert_every_phase_bounded(module, &bound);
        assert!(bound.over.is_empty(), "{module}: {:?}", bound.over);
    }
    // Planning previews each candidate question: the decide phase has previews, belief none.
    let planning = report(&ws, "battleship.planning");
    let decide = |r: &CostReport| r.phases.iter().find(|p| p.phase == "decide").cloned();
    assert!(decide(&planning).is_some_and(|p| p.previews > 0));
    assert!(decide(&report(&ws, "battleship.belief")).is_some_and(|p| p.previews == 0));
}

/// A search harness whose only decision reads the computed value `big`, defined by `expr`.
fn hostile(expr: &str) -> String {
    format!(
        "harness hostile.aggregate\nuse game search\nlayer l {{\n  computed big: Int = {expr}\n  \
         action guess(cell: Int) {{\n    emit game.guess(cell)\n  }}\n  decide {{\n    when big > 0 \
         => guess(0)\n    guess(1)\n  }}\n}}\n"
    )
}

/// The hostile aggregates: each is rejected statically (E0901 at its expression), and
/// run anyway (the interpreter does not rely on the checker) each ends its first turn with an
/// R-code within the budgets.
#[test]
fn hostile_aggregates_are_rejected_and_end_their_turn_with_an_r_code() {
    let cases = [
        "range(0, 1000000).map(|i| range(0, 1000000).sum()).sum()",
        "range(0, 1000000).map(|i| range(0, 1000000)).len()",
        "to_json(range(0, 1000).map(|i| range(0, 1000000))).len()",
    ];
    for expr in cases {
        let text = hostile(expr);
        let mut ws = Workspace::new(Registry::standard().signatures());
        ws.set_file("hostile.harness", &text);
        let e0801: Vec<_> = ws
            .diagnostics()
            .into_iter()
            .filter(|d| d.code.as_str() == "E0901")
            .collect();
        assert!(!e0801.is_empty(), "{expr}: not rejected");
        let start = text.find(expr).unwrap_or_default();
        assert!(
            e0801.iter().all(|d| {
                let at = d.span.start as usize;
                at >= start && at < start + expr.len()
            }),
            "{expr}: E0901 is not at the expression: {e0801:?}"
        );
        let result = episode(
            program(&ws, "hostile.aggregate"),
            "n16-p10",
            0,
            Limits::default(),
        );
        assert_eq!(result.end, EndReason::Error, "{expr}");
        assert_eq!(result.turns, 0, "{expr}");
        // Whichever budget runs out first: the steps (R0009) or the memory built (R0018).
        let code = result.error.map(|e| e.code);
        assert!(matches!(code, Some("R0009" | "R0018")), "{expr}: {code:?}");
    }
}

/// A value whose parts are shared many times over is cheap to build but huge to print: a
/// thousand references to one list of a million. `to_json` of it stops at the memory budget.
#[test]
fn printing_a_deeply_shared_value_ends_at_the_memory_budget() {
    let text = "harness hostile.shared\nuse game search\nlayer l {\n  computed xs: List<Int> = \
                range(0, 1000000)\n  computed big: Int = to_json(range(0, 1000).map(|i| xs)).len()\n  \
                action guess(cell: Int) {\n    emit game.guess(cell)\n  }\n  decide {\n    when big > \
                0 => guess(0)\n    guess(1)\n  }\n}\n";
    let mut ws = Workspace::new(Registry::standard().signatures());
    ws.set_file("shared.harness", text);
    let limits = Limits {
        memory_per_turn: 1 << 20,
        ..Limits::default()
    };
    let result = episode(program(&ws, "hostile.shared"), "n16-p10", 0, limits);
    let error = result.error.unwrap_or_else(|| panic!("no error"));
    assert_eq!(error.code, "R0018", "{}", error.message);
    // The same with a budget large enough for the text passes the memory check and runs.
    let small = text.replace(
        "range(0, 1000).map(|i| xs)",
        "range(0, 2).map(|i| range(0, 3))",
    );
    ws.set_file("shared.harness", &small);
    let result = episode(program(&ws, "hostile.shared"), "n16-p10", 0, limits);
    assert_eq!(result.end, EndReason::GameOver, "{:?}", result.error);
}

/// The limit is configurable: the search example checks within the default and is rejected
/// under a limit below its decide phase's bound.
#[test]
fn the_limit_is_configurable() {
    let mut ws = workspace(&["harnesses/examples/search.harness"]);
    assert!(
        !ws.diagnostics().iter().any(|d| d.code.as_str() == "E0901"),
        "the example is over the default limit"
    );
    let decide = report(&ws, "examples.search")
        .phases
        .iter()
        .find(|p| p.phase == "decide")
        .map(|p| p.steps)
        .unwrap_or_default();
    ws.set_cost_limit(decide - 1);
    assert!(
        ws.diagnostics().iter().any(|d| d.code.as_str() == "E0901"),
        "a limit below the decide bound {decide} does not reject"
    );
}

/// The `.harness` files under `dir` (relative to the repository), recursively, sorted.
fn harness_files(dir: &Path) -> Vec<String> {
    let mut found = Vec::new();
    let mut stack = vec![root().join(dir)];
    while let Some(at) = stack.pop() {
        for entry in std::fs::read_dir(&at).unwrap_or_else(|e| panic!("{}: {e}", at.display())) {
            let path = entry.expect("a directory entry").path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "harness") {
                let relative = path.strip_prefix(root()).expect("under the repository");
                found.push(relative.to_string_lossy().into_owned());
            }
        }
    }
    found.sort();
    found
}

/// Every bundled harness, on every game, has a finite bound on every phase within the default
/// limit, as `harness check --cost harnesses/<dir>` reports it: the games declare the sizes of
/// their queries' and observations' collections (and their opaque types' values), reply lists
/// carry their `len` bounds, a collection config entry its length range, and growing state is
/// bounded over the turns (or observations) of an episode. A harness that became unbounded, or
/// passed the limit, fails here with the reason.
#[test]
fn every_bundled_harness_has_a_finite_bound_per_phase_within_the_limit() {
    let mut modules = 0;
    let mut dirs: Vec<_> = std::fs::read_dir(root().join("harnesses"))
        .expect("the harnesses directory")
        .map(|e| e.expect("an entry").path())
        .filter(|p| p.is_dir())
        .collect();
    dirs.sort();
    for dir in dirs {
        let relative = dir.strip_prefix(root()).expect("under the repository");
        let files = harness_files(relative);
        let refs: Vec<&str> = files.iter().map(String::as_str).collect();
        let ws = workspace(&refs);
        let errors: Vec<_> = ws
            .diagnostics()
            .into_iter()
            .filter(|d| d.is_error())
            .collect();
        assert!(errors.is_empty(), "{}: {errors:?}", relative.display());
        for (module, _) in ws.modules() {
            let bound = report(&ws, &module);
            assert_every_phase_bounded(&module, &bound);
            modules += 1;
        }
    }
    // Battleship (4), chill (6), det (2), examples (5), jit (6), mci (20).
    assert!(modules >= 43, "only {modules} modules were found");
}

/// The corpus case E0901-deep-equality run anyway: `grid == grid` over ten thousand references
/// to one shared row of ten thousand walks a hundred million integers, and the interpreter
/// charges it by that whole size, so the turn ends with R0009 on the default budget instead of
/// walking them; the same comparison of one row (ten thousand elements) runs.
#[test]
fn a_deep_comparison_is_charged_by_its_whole_size_at_run_time() {
    let deep = hostile("if grid == grid { 1 } else { 0 }").replace(
        "  computed big: Int =",
        "  computed row: List<Int> = range(0, 10000)\n  computed grid: List<List<Int>> = \
         range(0, 10000).map(|i| row)\n  computed big: Int =",
    );
    let mut ws = Workspace::new(Registry::standard().signatures());
    ws.set_file("deep.harness", &deep);
    let result = episode(
        program(&ws, "hostile.aggregate"),
        "n16-p10",
        0,
        Limits::default(),
    );
    let error = result
        .error
        .unwrap_or_else(|| panic!("the comparison ran: {deep}"));
    assert_eq!(error.code, "R0009", "{}", error.message);
    assert_eq!(result.turns, 0);
    // One row against itself is ten thousand elements: within the budget.
    let shallow = deep.replace("grid == grid", "row == row");
    ws.set_file("deep.harness", &shallow);
    let result = episode(
        program(&ws, "hostile.aggregate"),
        "n16-p10",
        0,
        Limits::default(),
    );
    assert_eq!(result.end, EndReason::GameOver, "{:?}", result.error);
}
