//! `harness estimate` (CIEL) through the library call the command line makes.
//!
//! The null intervention (forcing the factual decision) has an advantage of exactly 0 with
//! variance exactly 0 at every checkpoint; the paired estimate agrees with a many-replay ground
//! truth on other salts; paired replays have a lower variance than unpaired ones on the repair
//! game; the written files are byte-identical on one and on two threads; every bad input gets
//! a diagnostic that says what to do. Both replay games (repair and search) are covered.

use std::path::{Path, PathBuf};

use harness::estimate::{self, Checkpoints, Fit, Request, TruthSpec, Utility};
use harness::games::Registry;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("harness-estimate-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

/// A small training request on one of the chill harnesses.
fn request(game: &str, instances: &str, seeds: &str, checkpoints: &str, replays: u32) -> Request {
    let (cost, cost_max, lambda) = match game {
        "repair" => ("tokens_env", 1_000_000.0, 1.0),
        _ => ("probes", 16.0, 0.5),
    };
    Request {
        harness: root()
            .join("harnesses/chill")
            .join(game)
            .display()
            .to_string(),
        module: None,
        instances: Some(instances.to_string()),
        seeds: seeds.to_string(),
        options: Vec::new(),
        set: Vec::new(),
        set_json: Vec::new(),
        interventions: "interventions".into(),
        context: "chill_context".into(),
        reference: None,
        checkpoints: Checkpoints::parse(checkpoints).unwrap(),
        replays,
        utility: Utility {
            success: "solved".into(),
            cost: Some(cost.into()),
            lambda,
            cost_max,
        },
        unpaired: false,
        keep: true,
        fit: Fit::default(),
        truth: None,
        compare_unpaired: false,
        threads: 1,
    }
}

fn run(request: &Request) -> estimate::Outcome {
    estimate::estimate(&Registry::standard(), request).unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn estimate_null_intervention_is_exactly_zero_on_both_games() {
    for (game, instances, every) in [
        ("repair", "m12-f2-n20-s5,m16-f2-n20-s10", "every:4"),
        ("search", "n16-p25", "every:1"),
    ] {
        let outcome = run(&request(game, instances, "0..3", every, 4));
        let keep: Vec<_> = outcome
            .pairs
            .iter()
            .filter(|r| r.intervention == "keep")
            .collect();
        assert!(keep.len() >= 6, "{game}: only {} checkpoints", keep.len());
        for record in &keep {
            assert_eq!(
                (record.gamma, record.s2),
                (0.0, 0.0),
                "{game} {} seed {} turn {}",
                record.instance,
                record.seed,
                record.turn
            );
            assert_eq!(record.u_factual, record.u_intervention);
        }
        // Some real intervention differs from the factual workflow somewhere.
        assert!(
            outcome
                .pairs
                .iter()
                .any(|r| r.intervention != "keep" && r.gamma != 0.0),
            "{game}: no intervention changes anything"
        );
        for entry in outcome
            .table
            .entries
            .iter()
            .filter(|e| e.intervention == "keep")
        {
            assert_eq!(entry.gamma, 0.0);
        }
        let (n, gamma, s2) = outcome.null_check.unwrap();
        assert_eq!((n, gamma, s2), (keep.len(), 0.0, 0.0));
    }
}

#[test]
fn estimate_agrees_with_a_many_replay_ground_truth() {
    let mut req = request(
        "repair",
        "m12-f2-n20-s5,m16-f3-n25-s5",
        "0..3",
        "every:6",
        8,
    );
    req.keep = false;
    req.truth = Some(TruthSpec {
        replays: 96,
        sample: 12,
    });
    let outcome = run(&req);
    let (records, report) = outcome.truth.unwrap();
    assert_eq!(report.checkpoints, 12);
    assert!(report.with_z >= 12, "{report:?}");
    assert_eq!(report.exact_mismatches, 0, "{report:?}");
    assert!(report.mean_z.abs() < 3.0, "{report:?}");
    assert!(report.mean_difference_z.abs() < 3.0, "{report:?}");
    assert!(report.band_coverage >= 0.95, "{report:?}");
    // The truth comes from other salts than the estimate: the two differ somewhere.
    assert!(records.iter().any(|r| r.estimate != r.truth));
}

#[test]
fn estimate_paired_replays_have_lower_variance_than_unpaired_on_repair() {
    let mut req = request(
        "repair",
        "m16-f2-n20-s10,m24-f3-n25-s10",
        "0..3",
        "every:6",
        8,
    );
    req.keep = false;
    req.compare_unpaired = true;
    let outcome = run(&req);
    let variance = outcome.variance.unwrap();
    assert!(variance.records >= 20, "{variance:?}");
    assert!(variance.median_ratio < 1.0, "{variance:?}");
    assert!(variance.mean_log_ratio_ci[1] < 0.0, "{variance:?}");
    let unpaired = outcome.unpaired_table.unwrap();
    assert_eq!(unpaired.manifest.design, "unpaired");
    assert!(
        outcome.pairs.iter().any(|r| r.design == "unpaired"),
        "the unpaired records are written too"
    );
}

/// Every file of an estimate written to `dir`, as name and bytes.
fn files(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut out: Vec<(String, Vec<u8>)> = std::fs::read_dir(dir)
        .unwrap()
        .map(|entry| {
            let path = entry.unwrap().path();
            (
                path.file_name().unwrap().to_string_lossy().into_owned(),
                std::fs::read(&path).unwrap(),
            )
        })
        .collect();
    out.sort();
    out
}

#[test]
fn estimate_files_are_byte_identical_on_one_and_two_threads() {
    for game in ["repair", "search"] {
        let instances = if game == "repair" {
            "m12-f2-n20-s5,m16-f2-n20-s10"
        } else {
            "n16-p10,n16-p25"
        };
        let mut req = request(game, instances, "0..3", "every:5", 3);
        req.compare_unpaired = true;
        req.truth = Some(TruthSpec {
            replays: 6,
            sample: 4,
        });
        let mut written = Vec::new();
        for threads in [1, 2] {
            req.threads = threads;
            let dir = scratch(&format!("{game}-{threads}"));
            estimate::write(&run(&req), &dir).unwrap();
            written.push(files(&dir));
            std::fs::remove_dir_all(&dir).unwrap();
        }
        let names: Vec<&str> = written[0].iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(
            names,
            [
                "advantages-unpaired.json",
                "advantages.json",
                "pairs.jsonl",
                "truth.json",
                "truth.jsonl",
                "variance.json"
            ]
        );
        assert!(
            written[0] == written[1],
            "{game}: the files depend on the threads"
        );
    }
}

#[test]
fn estimate_table_feeds_the_orchestrator_and_keeps_training_seeds_out() {
    let outcome = run(&request("repair", "m16-f2-n20-s10", "0..2", "every:8", 2));
    let text = serde_json::to_string(&outcome.table).unwrap();
    let value: serde_json::Value = serde_json::from_str(&text).unwrap();
    let (map, frozen) = estimate::unwrap_table("advantages", "a.json", value).unwrap();
    assert_eq!(
        map.as_object().unwrap().len(),
        outcome.table.entries.len(),
        "the harness receives the plain map"
    );
    let frozen = frozen.unwrap();
    assert!(frozen.check(&[1000, 1001]).is_ok());
    let error = frozen.check(&[1, 1000]).unwrap_err();
    assert!(error.contains("trained on seed 1 "), "{error}");
    assert!(error.contains("disjoint"), "{error}");
    // The same check stops an ablation before anything runs.
    let request = harness::ablate::Request {
        harness: Some(root().join("harnesses/chill/repair").display().to_string()),
        seeds: Some("0..3".into()),
        instances: Some("m16-f2-n20-s10".into()),
        arms: vec![(
            "chill".into(),
            vec!["base".into(), "interventions".into(), "arco".into()],
        )],
        set_json: vec![("advantages".into(), map)],
        frozen: vec![frozen],
        out: scratch("frozen"),
        ..Default::default()
    };
    let error = harness::ablate::ablate(&Registry::standard(), &request, &harness::ablate::NoHooks)
        .expect_err("an overlap is an error")
        .to_string();
    assert!(error.contains("seeds 0, 1"), "{error}");
}

#[test]
fn estimate_bad_inputs_get_diagnostics() {
    // (what is wrong, the request's change, a fragment of the message)
    type Change = fn(&mut Request);
    let cases: [(&str, Change, &str); 6] = [
        (
            "no interventions layer",
            |r| {
                r.harness = root()
                    .join("harnesses/examples/search.harness")
                    .display()
                    .to_string();
                r.instances = None;
                r.utility.cost = Some("probes".into());
            },
            "has no interventions layer `interventions`",
        ),
        (
            "a layer that decides",
            |r| r.interventions = "arco".into(),
            "is not inert",
        ),
        (
            "no context value",
            |r| r.context = "no_such_value".into(),
            "no computed value `no_such_value`",
        ),
        (
            "an unknown metric",
            |r| r.utility.success = "won".into(),
            "no metric `won`",
        ),
        ("no replays", |r| r.replays = 0, "--replays"),
        (
            "an unknown reference layer",
            |r| r.reference = Some(vec!["base".into(), "planner".into()]),
            "`planner`",
        ),
    ];
    for (what, change, expected) in cases {
        let mut req = request("repair", "m12-f1-n10-s0", "0..1", "every:20", 1);
        change(&mut req);
        let error = estimate::estimate(&Registry::standard(), &req)
            .err()
            .unwrap_or_else(|| panic!("{what}: no error"))
            .to_string();
        assert!(error.contains(expected), "{what}: {error}");
    }
    for spec in ["every:0", "every:x", "3,0", "5,5", "", "every 3"] {
        let error = Checkpoints::parse(spec).unwrap_err();
        assert!(error.contains("every:K"), "{spec}: {error}");
    }
    assert_eq!(
        Checkpoints::parse("10,5").unwrap(),
        Checkpoints::List(vec![5, 10])
    );
    // (the table file's JSON, a fragment of the message)
    let corrupt = [
        (
            r#"{"format": "harness-advantages/9"}"#,
            "not \"harness-advantages/1\"",
        ),
        (
            r#"{"format": "harness-advantages/1"}"#,
            "no `advantages` object",
        ),
        (
            r#"{"format": "harness-advantages/1", "advantages": {"a|b": "high"}}"#,
            "`a|b` is not a number",
        ),
        (
            r#"{"format": "harness-advantages/1", "advantages": {}, "manifest": {}}"#,
            "training_seeds",
        ),
    ];
    for (text, expected) in corrupt {
        let value = serde_json::from_str(text).unwrap();
        let error = estimate::unwrap_table("advantages", "t.json", value).unwrap_err();
        assert!(error.contains("corrupt advantage table"), "{error}");
        assert!(error.contains(expected), "{text}: {error}");
    }
    // Plain JSON passes through untouched.
    let plain = serde_json::json!({"a|b": 0.5});
    assert_eq!(
        estimate::unwrap_table("advantages", "t.json", plain.clone()).unwrap(),
        (plain, None)
    );
}
