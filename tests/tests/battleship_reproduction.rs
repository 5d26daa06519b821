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

/// The settings of `--profile compat --belief mcmc-compat --particles 500`.
fn compat_settings() -> Vec<(String, String)> {
    vec![
        ("compat".into(), "true".into()),
        ("belief".into(), "mcmc-compat".into()),
        ("particles".into(), "500".into()),
    ]
}

/// Runs the compat ablation of the L1–L3 stacks on `threads` threads into a fresh folder.
fn compat_run(name: &str, threads: usize) -> (Report, Vec<(String, String)>) {
    run(name, threads, compat_settings(), None)
}

/// Runs the L1–L3 stacks with `settings` on `instances` (all when `None`) into a fresh folder,
/// and returns the report and every trace keyed by arm, instance and seed.
fn run(
    name: &str,
    threads: usize,
    settings: Vec<(String, String)>,
    instances: Option<&str>,
) -> (Report, Vec<(String, String)>) {
    let out = std::env::temp_dir().join(format!("harness-repro-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&out);
    let request = Request {
        harness: Some(concat!(env!("CARGO_MANIFEST_DIR"), "/../harnesses/battleship").into()),
        stacks: Some(vec!["L1".into(), "L1-L2".into(), "L1-L3".into()]),
        instances: instances.map(str::to_string),
        settings: vec![("test".into(), settings)],
        out: out.clone(),
        threads,
        ..Request::default()
    };
    let outcome =
        ablate(&Registry::standard(), &request, &NoHooks).unwrap_or_else(|error| panic!("{error}"));
    // Every trace, keyed by its file name, for the determinism check.
    let mut traces = Vec::new();
    for (unit, record) in &outcome.records {
        // The trace's file table names the harness files by the path they were loaded from,
        // which is where this checkout lives. The digests below were recorded in a checkout at
        // `RECORDED_ROOT`, so this checkout's path is written as that one before hashing: the
        // digests then depend on what the games did, not on where the tests run.
        let trace = outcome.folder.trace(unit).expect("a trace");
        traces.push((
            format!("{} {} {}", record.arm, unit.instance, unit.seed),
            trace.replace(concat!(env!("CARGO_MANIFEST_DIR"), "/.."), RECORDED_ROOT),
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
    // The traces are the ones the reproduction gave before the runtime was optimised, byte for
    // byte (every shot, answer, revision and event of the 162 games).
    assert_eq!(
        format!("{:016x}", digest(&traces)),
        COMPAT_DIGEST,
        "the compat traces changed"
    );
    // One thread gives the same traces, byte for byte.
    let (_, single) = compat_run("one", 1);
    assert_eq!(traces.len(), single.len());
    for ((name, a), (_, b)) in traces.iter().zip(&single) {
        assert!(a == b, "the trace of {name} depends on the thread count");
    }
}

/// The harness root as the trace digests were recorded (see [`run`]).
const RECORDED_ROOT: &str = "/work/wt/perf/tests/..";

/// FNV-1a (64-bit) over the traces' names and bytes in order: a fingerprint that any change of
/// one byte of one trace changes.
fn digest(traces: &[(String, String)]) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for (name, trace) in traces {
        for byte in name.bytes().chain([0]).chain(trace.bytes()).chain([0]) {
            hash ^= u64::from(byte);
            hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
    hash
}

/// The digest of the 162 compat traces, recorded before the runtime's performance work
/// (issue 18) so that every optimisation is shown to leave the reproduction's draws alone.
const COMPAT_DIGEST: &str = "c240b58528af6838";

/// Per-trace digests of the default profile (the `mcmc` belief, 500 samples) on three boards
/// chosen for their spread (B01, B08 and B16: an early, a mid-suite and an edge-heavy board),
/// three seeds and the three stacks, recorded before the performance work.
const DEFAULT_DIGESTS: &[(&str, &str)] = &[
    ("L1 B01 0", "7f702a56e2196415"),
    ("L1 B01 1", "00d01df42a252ae3"),
    ("L1 B01 2", "ae7ba23284ddad6e"),
    ("L1 B08 0", "c36dd2bd59b1c155"),
    ("L1 B08 1", "783f1d6e978fdb4f"),
    ("L1 B08 2", "b2b47ee77f640420"),
    ("L1 B16 0", "dbc4f682794f2b09"),
    ("L1 B16 1", "f530c11e0b7ec783"),
    ("L1 B16 2", "27c75d8864b81ff2"),
    ("L1-L2 B01 0", "8664f674f988ab49"),
    ("L1-L2 B01 1", "39f13fa79662ebbc"),
    ("L1-L2 B01 2", "a215e83bc7fbf0f8"),
    ("L1-L2 B08 0", "e0ff181221c8937b"),
    ("L1-L2 B08 1", "6637d27b5888b529"),
    ("L1-L2 B08 2", "fe3dcf5d12aa225e"),
    ("L1-L2 B16 0", "8d8c48ecb0dbb11b"),
    ("L1-L2 B16 1", "351ec044dabd5c4a"),
    ("L1-L2 B16 2", "e8b116906cb389b1"),
    ("L1-L3 B01 0", "6816e73b88d76410"),
    ("L1-L3 B01 1", "cfe20fbb16b1d43d"),
    ("L1-L3 B01 2", "df199f51f9156e34"),
    ("L1-L3 B08 0", "16d63a811402cb74"),
    ("L1-L3 B08 1", "c76b044b7d5194cb"),
    ("L1-L3 B08 2", "041497d25cf99b96"),
    ("L1-L3 B16 0", "b4f135db0f2ae688"),
    ("L1-L3 B16 1", "f69389fbbff8831e"),
    ("L1-L3 B16 2", "038a2938f5f5a6b9"),
];

#[test]
fn the_default_profile_traces_are_unchanged() {
    let (report, traces) = run("default", 2, Vec::new(), Some("B01,B08,B16"));
    assert!(report.failures.is_empty(), "{:?}", report.failures);
    let got: Vec<(String, String)> = traces
        .iter()
        .map(|(name, trace)| {
            (
                name.clone(),
                format!(
                    "{:016x}",
                    digest(std::slice::from_ref(&(String::new(), trace.clone())))
                ),
            )
        })
        .collect();
    assert_eq!(got.len(), 27);
    for ((name, hash), (want_name, want)) in got.iter().zip(DEFAULT_DIGESTS) {
        assert_eq!(name, want_name);
        assert_eq!(hash, want, "the trace of {name} changed");
    }
    assert_eq!(got.len(), DEFAULT_DIGESTS.len());
}
