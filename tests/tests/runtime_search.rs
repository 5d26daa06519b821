//! End-to-end runs of the search example (harnesses/examples/search.harness) on the search game:
//! every layer combination, determinism across runs and threads, and the mistakes a new user
//! makes ending in located runtime diagnostics.

use harness_runtime::{
    EndReason, EpisodeResult, EventKind, GameKind, GameOptions, Limits, Machine, RngStreams,
    Switches, run_episode, to_json_lines,
};
use harness_search::LineSearch;
use harness_tests::search_example::{self as search_ir, Variant, natives, text_at};

fn switches(layers: Option<&[&str]>, without: &[&str], set: &[(&str, &str)]) -> Switches {
    Switches {
        layers: layers.map(|l| l.iter().map(|s| s.to_string()).collect()),
        without: without.iter().map(|s| s.to_string()).collect(),
        set: set
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
        set_json: Vec::new(),
    }
}

fn run(variant: Variant, switches: &Switches, instance: &str, seed: u64) -> EpisodeResult {
    let machine = Machine::new(
        search_ir::program(variant),
        natives(),
        switches,
        Limits::default(),
    )
    .unwrap_or_else(|e| panic!("setup failed: {e}"));
    let mut game = LineSearch
        .start(instance, &GameOptions::default(), &RngStreams::new(seed))
        .unwrap_or_else(|e| panic!("{e}"));
    run_episode(&machine, game.as_mut())
}

#[test]
fn the_full_stack_finds_the_target_more_often_than_guessing() {
    let all = switches(None, &[], &[]);
    let mut solved = 0;
    for seed in 0..6 {
        let result = run(Variant::Example, &all, "n16-p10", seed);
        assert_eq!(
            result.end,
            EndReason::GameOver,
            "seed {seed}: {:?}",
            result.error
        );
        solved += i32::from(result.metrics["solved"] == harness_runtime::Value::Bool(true));
        // Planning probes before the guess, so the trace holds previews and chosen probes.
        assert!(
            result.events.iter().any(
                |e| matches!(&e.kind, EventKind::Preview { reading, .. } if reading == "expect")
            )
        );
        assert!(
            result
                .events
                .iter()
                .any(|e| matches!(&e.kind, EventKind::Chosen { action, .. } if action == "probe"))
        );
    }
    assert!(solved >= 4, "solved only {solved} of 6");
}

#[test]
fn every_layer_combination_runs_and_disabled_layers_leave_no_trace() {
    let combos: [(&[&str], &[&str]); 4] = [
        (&["belief"], &["planning", "reflection"]),
        (&["belief", "planning"], &["reflection"]),
        (&["belief", "planning", "reflection"], &[]),
        // A layer whose needs are switched off is off too.
        (&["belief", "reflection"], &["planning", "reflection"]),
    ];
    for (layers, off) in combos {
        let result = run(
            Variant::Example,
            &switches(Some(layers), &[], &[]),
            "n16-p25",
            7,
        );
        assert!(result.error.is_none(), "{layers:?}: {:?}", result.error);
        for event in &result.events {
            if let Some(layer) = &event.layer {
                assert!(
                    !off.contains(&layer.as_str()),
                    "{layers:?}: event of disabled {layer}"
                );
            }
        }
    }
    // Without belief nothing can run: that is a setup error, not a silent empty episode.
    let none = Machine::new(
        search_ir::program(Variant::Example),
        natives(),
        &switches(Some(&["planning", "reflection"]), &[], &[]),
        Limits::default(),
    );
    assert!(none.err().is_some_and(|e| e.code == "R0016"));
    // Belief alone guesses at once: one turn, no probes.
    let alone = run(
        Variant::Example,
        &switches(Some(&["belief"]), &[], &[]),
        "n16-p25",
        7,
    );
    assert_eq!(alone.turns, 1);
    assert_eq!(alone.metrics["probes"], harness_runtime::Value::Int(0));
    // --without reflection equals --layers belief,planning.
    let a = run(
        Variant::Example,
        &switches(None, &["reflection"], &[]),
        "n16-p25",
        7,
    );
    let b = run(
        Variant::Example,
        &switches(Some(&["belief", "planning"]), &[], &[]),
        "n16-p25",
        7,
    );
    assert_eq!(to_json_lines(&a.events), to_json_lines(&b.events));
}

#[test]
fn set_changes_config_and_is_range_checked() {
    let low = run(
        Variant::Example,
        &switches(None, &[], &[("confidence", "0.5")]),
        "n32-p10",
        3,
    );
    let high = run(
        Variant::Example,
        &switches(None, &[], &[("confidence", "0.99")]),
        "n32-p10",
        3,
    );
    let probes = |r: &EpisodeResult| r.metrics["probes"].as_int().unwrap_or(-1);
    assert!(
        probes(&low) < probes(&high),
        "{} vs {}",
        probes(&low),
        probes(&high)
    );
    let bad = Machine::new(
        search_ir::program(Variant::Example),
        natives(),
        &switches(None, &[], &[("confidence", "2.0")]),
        Limits::default(),
    );
    let error = bad
        .err()
        .unwrap_or_else(|| panic!("out-of-range --set accepted"));
    assert_eq!(error.code, "R0016");
    assert!(
        text_at(Variant::Example, error.span).contains("confidence"),
        "{:?}",
        error.span
    );
    let unknown = Machine::new(
        search_ir::program(Variant::Example),
        natives(),
        &switches(None, &["nope"], &[]),
        Limits::default(),
    );
    assert!(
        unknown
            .err()
            .is_some_and(|e| e.message.contains("belief, planning, reflection"))
    );
}

#[test]
fn traces_are_byte_identical_across_runs_and_threads() {
    let cases: Vec<(Switches, &str, u64)> = vec![
        (switches(None, &[], &[]), "n16-p25", 1),
        (switches(None, &[], &[]), "n32-p20", 2),
        (switches(None, &["reflection"], &[]), "n16-p10", 3),
        (switches(Some(&["belief"]), &[], &[]), "n16-p10", 4),
    ];
    let sequential: Vec<String> = cases
        .iter()
        .map(|(s, i, seed)| to_json_lines(&run(Variant::Example, s, i, *seed).events))
        .collect();
    let again: Vec<String> = cases
        .iter()
        .map(|(s, i, seed)| to_json_lines(&run(Variant::Example, s, i, *seed).events))
        .collect();
    assert_eq!(sequential, again);
    let threaded: Vec<String> = std::thread::scope(|scope| {
        let handles: Vec<_> = cases
            .iter()
            .rev()
            .map(|(s, i, seed)| {
                scope.spawn(move || to_json_lines(&run(Variant::Example, s, i, *seed).events))
            })
            .collect();
        let mut out: Vec<String> = handles
            .into_iter()
            .map(|h| h.join().unwrap_or_default())
            .collect();
        out.reverse();
        out
    });
    assert_eq!(sequential, threaded);
    // Different seeds give different traces: the test can fail.
    assert_ne!(
        sequential[0],
        to_json_lines(&run(Variant::Example, &cases[0].0, "n16-p25", 99).events)
    );
}

#[test]
fn a_requires_that_fails_mid_game_is_a_located_error_and_applies_nothing() {
    let result = run(
        Variant::RequiresFailsMidGame,
        &switches(None, &[], &[]),
        "n32-p20",
        1,
    );
    assert_eq!(result.end, EndReason::Error);
    let error = result.error.clone().unwrap_or_else(|| panic!("no error"));
    assert_eq!(error.code, "R0006");
    assert_eq!(error.declared.as_deref(), Some("OFF_LINE"));
    assert_eq!(
        text_at(Variant::RequiresFailsMidGame, error.span),
        "requires game.probes_used < 2 else fail OFF_LINE"
    );
    // Two probes happened; the third was rejected before its patch of `probes`.
    assert_eq!(result.metrics["probes"], harness_runtime::Value::Int(2));
    let rejected = result
        .events
        .iter()
        .position(|e| matches!(e.kind, EventKind::Rejected { .. }));
    let rejected = rejected.unwrap_or_else(|| panic!("no rejection event"));
    assert!(
        !result.events[rejected..]
            .iter()
            .any(|e| matches!(e.kind, EventKind::Patch { .. } | EventKind::Effect { .. }))
    );
}

#[test]
fn a_division_by_zero_in_a_computed_value_names_its_span() {
    let result = run(
        Variant::DivisionByZero,
        &switches(None, &[], &[]),
        "n16-p10",
        1,
    );
    let error = result.error.unwrap_or_else(|| panic!("no error"));
    assert_eq!(error.code, "R0002");
    assert_eq!(
        text_at(Variant::DivisionByZero, error.span),
        "weights[best_cell] / (answers - answers).to_float()"
    );
    assert_eq!(result.end, EndReason::Error);
    assert!(result.metrics.contains_key("solved"));
}

#[test]
fn a_revision_out_of_range_is_refused_with_its_span() {
    let mut found = false;
    for seed in 0..20 {
        let result = run(
            Variant::ReviseLeavesRange,
            &switches(None, &[], &[]),
            "n32-p20",
            seed,
        );
        if let Some(error) = result.error {
            assert_eq!(error.code, "R0007");
            assert_eq!(
                text_at(Variant::ReviseLeavesRange, error.span),
                "revise belief.noise_guess += 0.5"
            );
            assert!(error.message.contains("0.01..=0.45"), "{}", error.message);
            // The refused block applied nothing: no revision event at all.
            assert!(
                !result
                    .events
                    .iter()
                    .any(|e| matches!(e.kind, EventKind::Revision { .. }))
            );
            found = true;
            break;
        }
    }
    assert!(found, "no seed made reflection revise");
}

#[test]
fn no_matching_rule_in_any_layer_is_a_located_error() {
    let result = run(
        Variant::NoRuleMatches,
        &switches(None, &[], &[]),
        "n16-p10",
        1,
    );
    let error = result.error.unwrap_or_else(|| panic!("no error"));
    assert_eq!(error.code, "R0008");
    assert!(
        text_at(Variant::NoRuleMatches, error.span).contains("reflection"),
        "{:?}",
        error.span
    );
    assert!(result.turns > 0);
    assert!(matches!(
        result.events.last().map(|e| &e.kind),
        Some(EventKind::EpisodeEnd { .. })
    ));
}

/// The example with long but legal chains in belief: a 2,000-deep chain of computed values, a
/// 900-term sum, a 900-arm `else if` chain and a 900-call method chain with closures, all read by `total`.
fn deep_source() -> String {
    let mut members = String::from("  computed c0: Int = 1\n");
    for i in 1..2000 {
        members.push_str(&format!("  computed c{i}: Int = c{} + 1\n", i - 1));
    }
    members.push_str(&format!(
        "  computed terms: Int = {}\n",
        vec!["answers"; 900].join(" + ")
    ));
    members.push_str("  computed arms: Int = ");
    for i in 0..900 {
        members.push_str(&format!("if answers == {i} {{ {i} }} else "));
    }
    members.push_str("{ 0 }\n");
    members.push_str(&format!(
        "  computed calls: Int = [answers]{}.len()\n",
        ".filter(|w| w >= 0)".repeat(900)
    ));
    let total = "  computed total: Float = weights.sum()\n";
    assert!(search_ir::SOURCE.contains(total));
    search_ir::SOURCE.replacen(
        total,
        &format!(
            "{members}  computed total: Float = weights.sum() + (c1999 - c1999 + terms - terms + \
             arms - arms + calls - calls).to_float()\n"
        ),
        1,
    )
}

/// Long chains check and run on a thread with the 2 MiB stack of a test or worker thread, and
/// play exactly the game the example plays.
#[test]
fn long_chains_check_and_run_on_a_small_stack() {
    let plain = run(Variant::Example, &switches(None, &[], &[]), "n16-p10", 1);
    let deep = std::thread::Builder::new()
        .stack_size(2 << 20)
        .spawn(|| {
            let mut workspace = harness_compiler::Workspace::new(search_ir::signatures());
            workspace.set_file(search_ir::PATH, &deep_source());
            let program = workspace
                .program("examples.search")
                .unwrap_or_else(|d| panic!("{} diagnostics, first: {:?}", d.len(), d.first()));
            let machine = Machine::new(
                program,
                natives(),
                &switches(None, &[], &[]),
                Limits::default(),
            )
            .unwrap_or_else(|e| panic!("setup failed: {e}"));
            let mut game = LineSearch
                .start("n16-p10", &GameOptions::default(), &RngStreams::new(1))
                .unwrap_or_else(|e| panic!("{e}"));
            run_episode(&machine, game.as_mut())
        })
        .unwrap_or_else(|e| panic!("{e}"))
        .join()
        .unwrap_or_else(|_| panic!("the deep run panicked"));
    assert_eq!(deep.error, None);
    assert_eq!(deep.end, plain.end);
    assert_eq!(deep.metrics, plain.metrics);
}
