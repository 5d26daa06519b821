//! The seed paper's Battleship ablation, reproduced through the language and through the
//! experiment engine that `harness ablate` runs.
//!
//! The bundled harness (`harnesses/battleship`) runs under its `compat` profile with the
//! reference's `mcmc-compat` belief and 500 samples on the 18 paper boards × 3 seeds. The paper
//! and the reference's own replay report: L1 27/54 wins with mean F1 0.5219; L1–L2 40/54 wins,
//! F1 0.5388 and 11.89 questions per game; L1–L3 31/54 wins, F1 0.5521, 8.78 questions and 1.15
//! revisions per game. Every decision rule, gate and preset of those layers is `.harness` code, so
//! this test pins the checker, the interpreter, `sim.next`, the game bindings and the engine
//! (plan, executor, result folder, report) together.

use harness::ablate::{NoHooks, Request, ablate};
use harness::games::Registry;
use harness::report::Report;

/// Runs the compat ablation of the L1–L3 stacks on `threads` threads into a fresh folder.
fn compat_run(name: &str, threads: usize) -> (Report, Vec<(String, String)>) {
    let out = std::env::temp_dir().join(format!("harness-repro-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&out);
    let request = Request {
        harness: Some(concat!(env!("CARGO_MANIFEST_DIR"), "/../harnesses/battleship").into()),
        stacks: Some(vec!["L1".into(), "L1-L2".into(), "L1-L3".into()]),
        settings: vec![(
            "test".into(),
            vec![
                ("compat".into(), "true".into()),
                ("belief".into(), "mcmc-compat".into()),
                ("particles".into(), "500".into()),
            ],
        )],
        out: out.clone(),
        threads,
        ..Request::default()
    };
    let outcome =
        ablate(&Registry::standard(), &request, &NoHooks).unwrap_or_else(|error| panic!("{error}"));
    // Every trace, keyed by its file name, for the determinism check.
    let mut traces = Vec::new();
    for (unit, record) in &outcome.records {
        traces.push((
            format!("{} {} {}", record.arm, unit.instance, unit.seed),
            outcome.folder.trace(unit).expect("a trace"),
        ));
    }
    std::fs::remove_dir_all(&out).expect("the run folder is removable");
    (outcome.report, traces)
}

/// One arm's wins, mean F1, questions and revisions (totals over its 54 games).
fn row(report: &Report, arm: &str) -> (u64, String, String, String) {
    let row = report
        .arms
        .iter()
        .find(|row| row.arm == arm)
        .unwrap_or_else(|| panic!("no arm {arm}"));
    let metric = |name: &str| {
        let index = report
            .metrics
            .iter()
            .position(|m| m.name == name)
            .unwrap_or_else(|| panic!("no metric {name}"));
        &row.metrics[index]
    };
    assert_eq!(row.games, 54);
    (
        metric("won").successes.unwrap_or(0),
        format!("{:.4}", metric("f1").value.estimate),
        format!("{:.2}", metric("questions").value.estimate),
        format!("{:.2}", metric("revisions").value.estimate),
    )
}

#[test]
fn the_compat_ablation_reproduces_the_paper_and_is_thread_count_independent() {
    let (report, traces) = compat_run("two", 2);
    assert_eq!(
        row(&report, "L1"),
        (27, "0.5219".into(), "0.00".into(), "0.00".into())
    );
    // 11.89 questions per game in the reference's replay (642 in all).
    assert_eq!(
        row(&report, "L1-L2"),
        (40, "0.5388".into(), "11.89".into(), "0.00".into())
    );
    // 8.78 questions (474) and 1.15 revisions (21 coarse_roi_collapse + 41 reopen_local_probe)
    // per game.
    assert_eq!(
        row(&report, "L1-L3"),
        (31, "0.5521".into(), "8.78".into(), "1.15".into())
    );
    assert!(report.failures.is_empty(), "{:?}", report.failures);
    let planning = report
        .marginals
        .iter()
        .find(|m| m.layer == "planning")
        .expect("a planning marginal");
    assert_eq!(planning.contrasts[0].discordant, Some((19, 6)));
    // One thread gives the same traces, byte for byte.
    let (_, single) = compat_run("one", 1);
    assert_eq!(traces.len(), single.len());
    for ((name, a), (_, b)) in traces.iter().zip(&single) {
        assert!(a == b, "the trace of {name} depends on the thread count");
    }
}
