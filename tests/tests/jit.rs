//! The four-role protocol end to end: every harness of the bank `harnesses/jit/` validates
//! (syntax, check, protocol jit4, a smoke episode) and plays every instance of its game on
//! several seeds; `harness validate` stops at the right stage with the right codes.

use std::path::{Path, PathBuf};

use harness::games::Registry;
use harness::load::{Sources, compile};
use harness::validate::{Options, Report, Stage, validate};
use harness_compiler::protocol::Protocol;
use harness_runtime::{
    EndReason, GameOptions, Limits, Machine, RngStreams, Switches, Value, run_episode,
};

fn bank(game: &str) -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../harnesses/jit")
        .join(game);
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "harness"))
        .collect();
    files.sort();
    files
}

fn sources(path: &Path) -> Sources {
    Sources::load(Some(&path.display().to_string())).unwrap_or_else(|e| panic!("{e}"))
}

fn options<'a>(game: &'a str, smoke: Option<(&'a str, u64)>) -> Options<'a> {
    Options {
        game,
        protocol: Some(Protocol::Jit4),
        smoke,
        max_turns: 200,
    }
}

fn codes(report: &Report) -> Vec<&str> {
    report.errors().map(|f| f.code.as_str()).collect()
}

/// The solve rate of a harness over every instance of the search game on `seeds` seeds.
fn solve_rate(path: &Path, seeds: u64) -> f64 {
    let registry = Registry::standard();
    let program = compile(&registry, &sources(path), None).unwrap_or_else(|e| panic!("{e}"));
    let kind = registry.get("search").unwrap_or_else(|e| panic!("{e}"));
    let mut natives = harness_stdlib::prelude::natives();
    natives.extend(&kind.natives());
    let machine = Machine::new(program, natives, &Switches::default(), Limits::default())
        .unwrap_or_else(|e| panic!("{}", e.message));
    let mut solved = 0;
    let mut played = 0;
    for instance in kind.instances() {
        for seed in 0..seeds {
            let mut game = kind
                .start(&instance, &GameOptions::default(), &RngStreams::new(seed))
                .unwrap_or_else(|e| panic!("{e}"));
            let result = run_episode(&machine, game.as_mut());
            assert_eq!(
                result.end,
                EndReason::GameOver,
                "{} on {instance} seed {seed}: {:?}",
                path.display(),
                result.error
            );
            played += 1;
            solved += i32::from(result.metrics["solved"] == Value::Bool(true));
        }
    }
    f64::from(solved) / f64::from(played)
}

#[test]
fn the_search_bank_holds_five_valid_role_structured_harnesses() {
    let files = bank("search");
    assert!(files.len() >= 5, "the bank holds {} harnesses", files.len());
    let registry = Registry::standard();
    for path in &files {
        for (instance, seed) in [("n16-p25", 0), ("n64-p15", 1), ("n100-p20", 2)] {
            let report = validate(
                &registry,
                &sources(path),
                &options("search", Some((instance, seed))),
            );
            assert!(
                report.valid && report.stage == Stage::Smoke,
                "{} on {instance}: {report:#?}",
                path.display()
            );
            assert_eq!(
                report.passed,
                [Stage::Syntax, Stage::Check, Stage::Protocol]
            );
        }
    }
}

#[test]
fn every_search_bank_harness_plays_every_instance_and_beats_a_blind_guess() {
    // A blind guess finds the target with probability 1/cells, at most 1/16 here; every
    // harness of the bank probes first, so each must do far better on 6 instances x 4 seeds.
    for path in bank("search") {
        let rate = solve_rate(&path, 4);
        assert!(rate > 0.25, "{} solves {rate:.2}", path.display());
    }
}

#[test]
fn the_information_greedy_harness_solves_more_than_face_value_bisection() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../harnesses/jit/search");
    let bisect = solve_rate(&dir.join("bisect.harness"), 6);
    let infogain = solve_rate(&dir.join("infogain.harness"), 6);
    assert!(
        infogain > bisect,
        "infogain {infogain:.3} vs bisect {bisect:.3}"
    );
}

#[test]
fn the_protocol_holds_for_a_second_game() {
    let registry = Registry::standard();
    for path in bank("finance_ecl") {
        let report = validate(
            &registry,
            &sources(&path),
            &options("finance_ecl", Some(("default", 0))),
        );
        assert!(report.valid, "{}: {report:#?}", path.display());
        let smoke = report.smoke.as_ref().map(|s| s.metrics["success"].clone());
        assert_eq!(smoke, Some(serde_json::json!(true)), "{report:#?}");
    }
}

/// The bisection harness with one textual edit, written to a scratch folder.
fn edited(name: &str, from: &str, to: &str) -> Sources {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../harnesses/jit/search/bisect.harness");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{e}"));
    assert!(text.contains(from), "the harness no longer holds `{from}`");
    Sources {
        name: name.to_string(),
        files: vec![(format!("{name}.harness"), text.replacen(from, to, 1))],
    }
}

#[test]
fn validation_stops_at_the_stage_that_fails_with_its_codes_and_pages() {
    let registry = Registry::standard();
    let smoke = options("search", Some(("n16-p10", 0)));
    // A syntax error: only the syntax stage's codes are reported.
    let report = validate(
        &registry,
        &edited("syntax", "hi: Int =", "hi: Int = ="),
        &smoke,
    );
    assert_eq!((report.valid, report.stage), (false, Stage::Syntax));
    assert_eq!(codes(&report), ["E0001"]);
    // A typo: the check stage, with the code's help and its explanation page.
    let report = validate(
        &registry,
        &edited("typo", "(lo + hi) / 2", "(lo + hj) / 2"),
        &smoke,
    );
    assert_eq!((report.valid, report.stage), (false, Stage::Check));
    assert_eq!(codes(&report), ["E0101"]);
    let finding = &report.diagnostics[0];
    assert!(
        finding.help.as_deref().is_some_and(|h| h.contains("`hi`")),
        "{finding:#?}"
    );
    assert!(finding.explain.starts_with("# E0101: unknown name"));
    assert_eq!(finding.stage, Stage::Check);
    assert!(finding.line > 1 && finding.start < finding.end);
    // A role line removed: the protocol stage.
    let report = validate(
        &registry,
        &edited("role", "layer planning role planning", "layer planning"),
        &smoke,
    );
    assert_eq!((report.valid, report.stage), (false, Stage::Protocol));
    assert!(codes(&report).contains(&"E0801"), "{:?}", codes(&report));
    // A decide block that can match nothing once the interval closes: the smoke stage, R0008.
    let report = validate(&registry, &edited("stuck", "    guess(lo)\n", ""), &smoke);
    assert_eq!((report.valid, report.stage), (false, Stage::Smoke));
    assert_eq!(codes(&report), ["R0008"]);
    assert!(report.diagnostics[0].explain.starts_with("# R0008"));
    // Without a smoke instance a checked harness is valid after the protocol stage.
    let report = validate(&registry, &edited("fine", "", ""), &options("search", None));
    assert_eq!((report.valid, report.stage), (true, Stage::Protocol));
    // A harness for another game is refused at the check stage with a problem.
    let report = validate(
        &registry,
        &edited("fine", "", ""),
        &options("finance_ecl", None),
    );
    assert_eq!((report.valid, report.stage), (false, Stage::Check));
    assert_eq!(report.problems.len(), 1, "{report:#?}");
}

#[test]
fn the_report_reads_back_as_written() {
    let report = validate(
        &Registry::standard(),
        &edited("typo", "(lo + hi) / 2", "(lo + hj) / 2"),
        &options("search", None),
    );
    let text = serde_json::to_string(&report).unwrap_or_default();
    let back: Report = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(back, report);
    let value: serde_json::Value = serde_json::from_str(&text).unwrap_or_default();
    assert_eq!(value["stage"], "check");
    assert_eq!(value["diagnostics"][0]["code"], "E0101");
}

#[test]
fn an_empty_float_sum_is_a_float() {
    // `sum` over an empty `List<Float>` has no element to say it is a float; the smoke episode
    // would stop with an internal error (R0012) if the runtime answered the integer zero.
    let sources = edited(
        "empty_sum",
        "hi: Int = game.cells - 1",
        "hi: Int = game.cells - 1 + range(0, 0).map(|t| 1.0).sum().round()",
    );
    let report = validate(
        &Registry::standard(),
        &sources,
        &options("search", Some(("n16-p10", 0))),
    );
    assert!(report.valid, "{report:#?}");
}
