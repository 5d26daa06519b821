//! The repair game's ARCO (`harnesses/chill/repair/arco.harness`) through `harness ablate`, on
//! the arms of `tests/data/arco/plan.toml` and the tables under `tests/data/arco/`.
//!
//! The completion gate (CAE) lets an episode submit only on completion evidence, and without it
//! ARCO with an empty table plays move for move like the reference; Always-Full runs the Full
//! route's diagnostics on every feasible turn (more steps, Full turns up to the budget) and,
//! because the Full route values a candidate's information gain, authorises a family whose
//! estimated advantage lies within the margin, which CHILL's router skips.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use harness::ablate::{self, NoHooks, Request};
use harness::folder::GameRecord;
use harness::games::Registry;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The decide rules of the ARCO layer before its revisions: the completion gate's two.
const CAE_RULES: u64 = 2;

/// The Full turns allowed per episode (`full_budget`).
const FULL_BUDGET: usize = 30;

/// One episode's trace, reduced to what these tests read.
#[derive(Default)]
struct Trace {
    /// Per turn: the layer, rule and action chosen.
    chosen: Vec<(String, u64, String)>,
    /// Turns counted as Full turns.
    full_turns: usize,
    /// Per `submit` effect: whether the last test run found 0 failing with no patch since.
    submits: Vec<bool>,
    /// Test runs chosen by ARCO although nothing happened since the last run (no patch, no
    /// inspection): repeats of an ineffective workflow, which its admissible set excludes.
    repeated_tests: usize,
    /// Per `guess` effect (search): whether the last answer was `Here` to a probe of the
    /// guessed cell, and the probes made before it.
    guesses: Vec<(bool, usize)>,
}

fn read_trace(path: &Path) -> Trace {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut trace = Trace::default();
    let mut evidence = false;
    let mut news = true;
    let mut here: Option<i64> = None;
    let mut probes = 0;
    for line in text.lines() {
        let event: serde_json::Value = serde_json::from_str(line).unwrap();
        match event["event"].as_str() {
            Some("chosen") if event["layer"] == "arco" && event["action"] == "verify" && !news => {
                trace.repeated_tests += 1;
            }
            _ => {}
        }
        match event["event"].as_str() {
            Some("observation") if event["name"] == "tests" => news = false,
            Some("observation") if event["name"] == "evidence" || event["name"] == "patched" => {
                news = true;
            }
            _ => {}
        }
        match event["event"].as_str() {
            Some("chosen") => trace.chosen.push((
                event["layer"].as_str().unwrap_or_default().to_string(),
                event["rule"].as_u64().unwrap(),
                event["action"].as_str().unwrap().to_string(),
            )),
            Some("patch") if event["field"] == "arco.full_calls" => trace.full_turns += 1,
            Some("observation") if event["name"] == "tests" => {
                evidence = event["args"][0] == 0;
            }
            Some("observation") if event["name"] == "patched" => evidence = false,
            Some("effect") if event["name"] == "submit" => trace.submits.push(evidence),
            Some("observation") if event["name"] == "answer" => {
                here = (event["args"][1] == "Dir.Here").then(|| event["args"][0].as_i64().unwrap());
            }
            Some("effect") if event["name"] == "probe" => probes += 1,
            Some("effect") if event["name"] == "guess" => {
                let cell = event["args"][0].as_i64();
                trace.guesses.push((here.is_some() && here == cell, probes));
            }
            _ => {}
        }
    }
    trace
}

/// Per arm, its episodes' records and traces by (instance, seed).
type Arms = BTreeMap<String, BTreeMap<(String, u64), (GameRecord, Trace)>>;

/// Runs the repair plan with the table `table` (a file under `tests/data/arco/`, or none).
fn run(name: &str, table: Option<&str>) -> Arms {
    run_game("repair", "plan.toml", name, table)
}

/// Runs the plan `plan` (under `tests/data/arco/`) on `harnesses/chill/<game>` with the table
/// `table`, if any.
fn run_game(game: &str, plan: &str, name: &str, table: Option<&str>) -> Arms {
    let plan = root().join("tests/data/arco").join(plan);
    let text = std::fs::read_to_string(&plan).unwrap();
    let set_json = table
        .map(|file| {
            let path = root().join("tests/data/arco").join(file);
            let value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
            vec![("advantages".to_string(), value)]
        })
        .unwrap_or_default();
    let out = std::env::temp_dir().join(format!("harness-arco-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&out);
    let request = Request {
        harness: Some(
            root()
                .join("harnesses/chill")
                .join(game)
                .display()
                .to_string(),
        ),
        plan_file: Some((plan.display().to_string(), text)),
        set_json,
        out: out.clone(),
        threads: 1,
        ..Default::default()
    };
    let outcome =
        ablate::ablate(&Registry::standard(), &request, &NoHooks).unwrap_or_else(|e| panic!("{e}"));
    let mut arms = Arms::new();
    for (_, record) in outcome.records {
        let trace = read_trace(
            &outcome
                .folder
                .root()
                .join("traces")
                .join(&record.arm)
                .join(format!("{}-s{}.jsonl", record.instance, record.seed)),
        );
        arms.entry(record.arm.clone())
            .or_default()
            .insert((record.instance.clone(), record.seed), (record, trace));
    }
    let _ = std::fs::remove_dir_all(&out);
    arms
}

/// The actions chosen in an episode, in turn order.
fn actions(trace: &Trace) -> Vec<&str> {
    trace.chosen.iter().map(|(_, _, a)| a.as_str()).collect()
}

/// Every episode of `arm` makes the same moves and ends with the same metrics as `reference`'s.
fn assert_move_for_move(
    arm: &BTreeMap<(String, u64), (GameRecord, Trace)>,
    reference: &BTreeMap<(String, u64), (GameRecord, Trace)>,
) {
    for (key, (record, trace)) in arm {
        let (ref_record, ref_trace) = &reference[key];
        assert_eq!(
            actions(trace),
            actions(ref_trace),
            "{key:?}: not move for move"
        );
        assert_eq!(record.metrics, ref_record.metrics, "{key:?}");
    }
}

#[test]
fn arco_terminates_only_on_completion_evidence_and_is_the_reference_without_the_gate() {
    let arms = run("gate", None);
    let reference = &arms["reference"];
    let mut redirected = 0;
    for arm in ["chill", "always-full"] {
        for (key, (_, trace)) in &arms[arm] {
            assert!(
                trace.submits.iter().all(|&evidence| evidence),
                "{arm} {key:?} submitted without a clean test run since its last patch"
            );
            redirected += trace
                .chosen
                .iter()
                .filter(|(layer, rule, _)| layer == "arco" && *rule < CAE_RULES)
                .count();
            assert!(
                trace
                    .chosen
                    .iter()
                    .all(|(layer, rule, _)| layer != "arco" || *rule < CAE_RULES),
                "{arm} {key:?}: an empty table authorised a revision"
            );
        }
    }
    assert!(
        redirected > 0,
        "the gate never redirected a submission: the test shows nothing"
    );
    assert_move_for_move(&arms["chill-no-cae"], reference);
    // With nothing to authorise, Always-Full makes CHILL's decisions and pays for the Full
    // route's diagnostics on every feasible turn.
    for (key, (record, trace)) in &arms["always-full"] {
        let (chill_record, chill_trace) = &arms["chill"][key];
        assert_eq!(actions(trace), actions(chill_trace), "{key:?}");
        assert_eq!(record.metrics, chill_record.metrics, "{key:?}");
        assert_eq!(
            trace.full_turns,
            trace.chosen.len().min(FULL_BUDGET),
            "{key:?}"
        );
        assert_eq!(
            chill_trace.full_turns, 0,
            "{key:?}: CHILL routed Full with an empty table"
        );
        assert!(
            record.costs.steps > chill_record.costs.steps,
            "{key:?}: Always-Full's diagnostics cost nothing"
        );
    }
}

#[test]
fn arco_always_full_authorises_within_the_margin_where_chill_skips() {
    // Dedup at +0.015 in every context: inside the margin of 0.02, so CHILL's router takes
    // Skip; the Full route adds Dedup's information gain over the base's repeated inspection.
    let arms = run("margin", Some("dedup-within-margin.json"));
    let revisions = |arm: &str| -> Vec<String> {
        arms[arm]
            .values()
            .flat_map(|(_, trace)| trace.chosen.iter())
            .filter(|(layer, rule, _)| layer == "arco" && *rule >= CAE_RULES)
            .map(|(_, _, action)| action.clone())
            .collect()
    };
    assert!(
        revisions("chill").is_empty(),
        "CHILL revised within the margin"
    );
    let full = revisions("always-full");
    assert!(!full.is_empty(), "Always-Full never revised");
    assert!(full.iter().all(|a| a == "dedup"), "{full:?}");
}

#[test]
fn arco_never_repeats_an_ineffective_test_run() {
    // Verify at +0.5 in every context: without the admissible set's exclusion of repeated
    // ineffective workflows, ARCO would run the tests on every turn.
    let arms = run("repeat", Some("verify-everywhere.json"));
    for arm in ["chill", "always-full", "chill-no-cae"] {
        let verified: usize = arms[arm]
            .values()
            .map(|(_, t)| {
                t.chosen
                    .iter()
                    .filter(|(layer, rule, a)| {
                        layer == "arco" && *rule >= CAE_RULES && a == "verify"
                    })
                    .count()
            })
            .sum();
        assert!(verified > 0, "{arm} never verified: the test shows nothing");
        for (key, (_, trace)) in &arms[arm] {
            assert_eq!(trace.repeated_tests, 0, "{arm} {key:?} repeated a test run");
        }
    }
}

#[test]
fn arco_on_search_guesses_only_on_evidence_and_always_full_previews_every_turn() {
    let arms = run_game("search", "search.plan.toml", "search", None);
    let mut redirected = 0;
    for arm in ["chill", "always-full"] {
        for ((instance, seed), (_, trace)) in &arms[arm] {
            // The instance's probe budget: `n16-p10` has 10.
            let budget: usize = instance.rsplit("-p").next().unwrap().parse().unwrap();
            for &(confirmed, probes) in &trace.guesses {
                assert!(
                    confirmed || probes >= budget,
                    "{arm} {instance} seed {seed} guessed without a `Here` on the guessed cell"
                );
            }
            redirected += trace
                .chosen
                .iter()
                .filter(|(layer, rule, _)| layer == "arco" && *rule == 0)
                .count();
        }
    }
    assert!(
        redirected > 0,
        "the gate never redirected a guess: the test shows nothing"
    );
    assert_move_for_move(&arms["chill-no-cae"], &arms["reference"]);
    for (key, (record, trace)) in &arms["always-full"] {
        let (chill_record, chill_trace) = &arms["chill"][key];
        assert_eq!(actions(trace), actions(chill_trace), "{key:?}");
        assert_eq!(
            chill_record.costs.previews, 0,
            "{key:?}: CHILL previewed with no table"
        );
        assert!(
            record.costs.previews >= record.costs.turns,
            "{key:?}: Always-Full did not preview on every turn"
        );
    }
}
