//! The experiment engine end to end, through the library calls `harness ablate` and `harness
//! lens` make: plans (stacks, removals, named arms, sweeps, plan files), settings, the one trace
//! schema read back, every lens view, and every bundled harness on several seeds.

use std::path::{Path, PathBuf};

use harness::ablate::{NoHooks, Outcome, Request, ablate};
use harness::games::Registry;
use harness::lens::{self, View};
use harness::plan::Shard;
use harness_runtime::TraceEvent;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("harness-engine-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

fn run(request: &Request) -> Result<Outcome, String> {
    ablate(&Registry::standard(), request, &NoHooks).map_err(|error| error.to_string())
}

fn request(harness: &str, out: &Path) -> Request {
    Request {
        harness: Some(root().join(harness).display().to_string()),
        out: out.to_path_buf(),
        ..Request::default()
    }
}

fn lens_request(view: View, run: &Path) -> lens::Request {
    lens::Request {
        view,
        run: run.to_path_buf(),
        arm: None,
        episode: None,
        layer: None,
        metric: None,
        field: None,
        against: None,
        compare: None,
        overlay: Vec::new(),
        max_turns: None,
    }
}

/// Every trace of every stack (and removal) of the bundled harness reads back into the
/// runtime's own event type and serialises to the same JSON, and every lens view works on the
/// folder.
#[test]
fn every_trace_reads_back_with_the_runtime_schema_and_every_lens_view_works() {
    let out = scratch("roundtrip");
    let mut req = request("harnesses/battleship", &out);
    req.instances = Some("B01,B02".into());
    req.seeds = Some("1".into());
    req.removals = true;
    req.settings = vec![("--set".into(), vec![("particles".into(), "100".into())])];
    let outcome = run(&req).unwrap();
    assert_eq!(
        outcome.records.len(),
        2 * (4 + 3),
        "4 stacks and 3 removals"
    );
    for (unit, record) in &outcome.records {
        let text = outcome.folder.trace(unit).unwrap();
        for line in text.lines() {
            let event: TraceEvent = serde_json::from_str(line)
                .unwrap_or_else(|e| panic!("{} {}: {e}\n{line}", record.arm, unit.instance));
            let again = serde_json::to_value(&event).unwrap();
            let original: serde_json::Value = serde_json::from_str(line).unwrap();
            assert_eq!(again, original, "{} {}", record.arm, unit.instance);
        }
        assert!(
            text.starts_with("{\"turn\":0,\"phase\":\"start\",\"layer\":null,"),
            "the file table comes first"
        );
    }
    let folder = outcome.folder.root().to_path_buf();
    let registry = Registry::standard();
    let show = |request: &lens::Request| lens::show(&registry, request);

    let shown = show(&lens_request(View::Run, &folder)).unwrap();
    assert!(
        shown.text.contains("episodes finished: 14/14"),
        "{}",
        shown.text
    );
    assert!(shown.svg.is_some() && !shown.csv.is_empty());
    let mut by_layer = lens_request(View::Run, &folder);
    by_layer.layer = Some("planning".into());
    let shown = show(&by_layer).unwrap();
    assert!(
        shown
            .text
            .contains("per-instance effect of `planning` on F1"),
        "{}",
        shown.text
    );

    let mut game = lens_request(View::Game, &folder);
    game.episode = Some("B02:0".into());
    let shown = show(&game).unwrap();
    assert!(
        shown.text.contains("episode B02 seed 0 · arm L1-L4"),
        "{}",
        shown.text
    );
    assert!(
        shown.text.contains("harnesses/battleship/"),
        "rules are located in their files: {}",
        shown.text
    );

    // A computed value is read by replaying the episode; the threshold comes from the run.
    let mut series = lens_request(View::Series, &folder);
    series.field = Some("reflection.confidence".into());
    series.against = Some("confidence_threshold".into());
    series.episode = Some("B01:0".into());
    let shown = show(&series).unwrap();
    assert!(
        shown.text.contains("confidence_threshold = 0.72"),
        "{}",
        shown.text
    );
    assert!(shown.svg.unwrap().contains("confidence_threshold 0.72"));
    // A state field is read from the traces.
    series.field = Some("reflection.monitor.low_confidence_streak".into());
    series.episode = None;
    series.against = None;
    let shown = show(&series).unwrap();
    assert_eq!(shown.json["episodes"].as_array().map(Vec::len), Some(2));

    let shown = show(&lens_request(View::Llm, &folder)).unwrap();
    assert!(shown.text.contains("not_configured"), "{}", shown.text);

    let mut compare = lens_request(View::Compare, &folder);
    compare.compare = Some(folder.clone());
    let shown = show(&compare).unwrap();
    assert!(
        shown.text.contains("win rate +0.0000 [+0.0000, +0.0000]"),
        "{}",
        shown.text
    );

    std::fs::remove_dir_all(&out).unwrap();
}

/// The module each `.harness` file under `dir` declares (`harness NAME`), sorted.
fn modules(dir: &Path) -> Vec<String> {
    let mut out: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|entry| {
            let path = entry.ok()?.path();
            let text = std::fs::read_to_string(path.with_extension("harness")).ok()?;
            text.lines()
                .find_map(|line| line.strip_prefix("harness "))
                .map(|name| name.trim().to_string())
        })
        .collect();
    out.sort();
    out.dedup();
    out
}

/// Every bundled harness and example runs on five seeds without a runtime error: each module of
/// each folder under `harnesses/` (a module may use another of its folder).
#[test]
fn every_bundled_harness_and_example_runs_on_five_seeds() {
    let registry = Registry::standard();
    let out = scratch("five-seeds");
    let mut ran = 0;
    for folder in ["harnesses/battleship", "harnesses/examples"] {
        for module in modules(&root().join(folder)) {
            let mut req = request(folder, &out);
            req.module = Some(module.clone());
            req.seeds = Some("0..5".into());
            let sources = harness::load::Sources::load(req.harness.as_deref()).unwrap();
            let program = harness::load::compile(&registry, &sources, Some(&module))
                .unwrap_or_else(|e| panic!("{module}: {e:?}"));
            let kind = registry.get(program.game.as_deref().unwrap()).unwrap();
            // One instance and the full stack: what the other tests do not already cover.
            req.instances = kind.manifest().instance_sets[0].instances.first().cloned();
            req.stacks = harness::plan::cumulative(&program)
                .last()
                .map(|arm| vec![arm.name.clone()]);
            if program.config.iter().any(|p| p.name == "particles") {
                req.settings = vec![("--set".into(), vec![("particles".into(), "100".into())])];
            }
            let outcome = run(&req).unwrap_or_else(|e| panic!("{module}: {e}"));
            assert_eq!(outcome.records.len(), 5, "{module}");
            assert!(
                outcome.report.failures.is_empty(),
                "{module}: {:?}",
                outcome.report.failures
            );
            ran += 1;
        }
    }
    assert!(ran >= 7, "every module ran: {ran}");
    std::fs::remove_dir_all(&out).unwrap();
}

/// A plan file with three arbitrary layer sets and a sweep, and the errors of bad plans.
#[test]
fn plan_files_name_layer_sets_and_sweeps() {
    let out = scratch("plan");
    let mut req = request("harnesses/examples/search.harness", &out);
    req.plan_file = Some((
        "plan.toml".into(),
        r#"
instances = ["n16-p10", "n32-p20"]
seeds = [3, 7]
[[arm]]
name = "belief only"
layers = ["belief"]
[[arm]]
name = "plan"
layers = ["belief", "planning"]
[[arm]]
name = "all"
layers = ["belief", "planning", "reflection"]
set = { confidence = 0.8 }
[sweep]
confidence = [0.9, 0.95]
"#
        .into(),
    ));
    let error = run(&req).unwrap_err();
    assert!(error.contains("sets `confidence` itself"), "{error}");
    let text = req
        .plan_file
        .as_ref()
        .unwrap()
        .1
        .replace("set = { confidence = 0.8 }\n", "");
    req.plan_file = Some(("plan.toml".into(), text));
    let outcome = run(&req).unwrap();
    let names: Vec<&str> = outcome
        .folder
        .manifest()
        .plan
        .arms
        .iter()
        .map(|a| a.name.as_str())
        .collect();
    assert_eq!(
        names,
        [
            "belief only confidence=0.9",
            "plan confidence=0.9",
            "all confidence=0.9",
            "belief only confidence=0.95",
            "plan confidence=0.95",
            "all confidence=0.95"
        ]
    );
    assert_eq!(outcome.records.len(), 6 * 2 * 2);
    assert_eq!(outcome.folder.manifest().plan.seeds, vec![3, 7]);
    let effective = &outcome.folder.manifest().effective[3];
    assert!(
        effective
            .values
            .contains(&("confidence".into(), "0.95".into())),
        "{effective:?}"
    );
    assert!(outcome.folder.root().join("games.csv").is_file());
    std::fs::remove_dir_all(&out).unwrap();
}

/// Conflicting settings, unknown stacks and instances are errors that say what to do.
#[test]
fn bad_requests_are_clear_errors() {
    let out = scratch("bad");
    let mut req = request("harnesses/examples/search.harness", &out);
    req.settings = vec![
        (
            "--particles".into(),
            vec![("confidence".into(), "0.9".into())],
        ),
        ("--set".into(), vec![("confidence".into(), "0.8".into())]),
    ];
    let error = run(&req).unwrap_err();
    assert!(
        error.contains("--particles gives `0.9`, --set gives `0.8`"),
        "{error}"
    );
    req.settings.clear();
    req.stacks = Some(vec!["L9".into()]);
    assert!(run(&req).unwrap_err().contains("unknown stack `L9`"));
    req.stacks = None;
    req.instances = Some("n17".into());
    assert!(run(&req).unwrap_err().contains("unknown instance `n17`"));
    req.instances = None;
    req.options = vec![("protocol".into(), "grand".into())];
    assert!(run(&req).unwrap_err().contains("this game has no options"));
    req.options.clear();
    req.seeds = Some("0".into());
    assert!(run(&req).unwrap_err().contains("names no seed"));
    assert!(
        !out.exists() || std::fs::read_dir(&out).unwrap().next().is_none(),
        "no folder is left"
    );
}

/// A run's LLM settings are part of what it is: resuming it with other settings (here none, as
/// when the `--llm-*` flags are forgotten) is refused before any episode runs, and resuming it
/// with the same settings finishes it.
#[test]
fn resuming_with_other_llm_settings_is_refused() {
    use harness::ablate::Hooks;

    /// Records one LLM configuration in the manifest; its episodes ask no model.
    struct Settings(serde_json::Value);

    impl Hooks for Settings {
        fn prepare(
            &self,
            _program: &harness_compiler::ir::Program,
        ) -> Result<Option<serde_json::Value>, String> {
            Ok(Some(self.0.clone()))
        }
    }

    let out = scratch("resume-llm");
    let mut req = request("harnesses/examples/search.harness", &out);
    req.instances = Some("n16-p10".into());
    req.seeds = Some("1".into());
    let settings = Settings(serde_json::json!({ "provider": "sim", "model": "steady" }));
    let outcome = ablate(&Registry::standard(), &req, &settings).unwrap();
    let folder = outcome.folder.root().to_path_buf();
    let resumed = Request {
        resume: Some(folder.clone()),
        ..Request::default()
    };
    let error = ablate(&Registry::standard(), &resumed, &NoHooks)
        .map_err(|error| error.to_string())
        .unwrap_err();
    assert!(
        error.contains("resume it with the same --llm-* flags"),
        "{error}"
    );
    let other = Settings(serde_json::json!({ "provider": "sim", "model": "other" }));
    assert!(ablate(&Registry::standard(), &resumed, &other).is_err());
    ablate(&Registry::standard(), &resumed, &settings).unwrap();
    std::fs::remove_dir_all(&out).unwrap();
}

/// `--set-json` gives a structured config value, converted and checked against its type.
#[test]
fn structured_settings_come_as_json() {
    let dir = scratch("set-json");
    std::fs::create_dir_all(&dir).unwrap();
    let harness = dir.join("table.harness");
    std::fs::write(
        &harness,
        r#"harness table

use game search

config {
  weights: Map<String, Float> = []
}

layer guess {
  computed cell: Int = match weights.get("cell") {
    Some(w) => w.round(),
    None => 0,
  }

  action pick(c: Int) {
    emit game.guess(c)
  }

  decide {
    when true => pick(cell)
  }
}
"#,
    )
    .unwrap();
    let mut req = Request {
        harness: Some(harness.display().to_string()),
        out: dir.join("runs"),
        instances: Some("n16-p10".into()),
        seeds: Some("1".into()),
        ..Request::default()
    };
    req.set_json = vec![("weights".into(), serde_json::json!({"cell": 3.0}))];
    let outcome = run(&req).unwrap();
    assert_eq!(
        outcome.folder.manifest().effective[0].values,
        vec![("weights".to_string(), "{\"cell\": 3.0}".to_string())]
    );
    req.set_json = vec![("weights".into(), serde_json::json!({"cell": "three"}))];
    let error = run(&req).unwrap_err();
    assert!(
        error.contains("at key `cell`: expected a value of type Float"),
        "{error}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `tunable layer.name = value`: a layer sets a needed layer's tunable default while it is on,
/// recorded as the arm's effective setting, with no revision; `--set` still wins.
#[test]
fn a_layer_sets_a_needed_layers_tunable_default_while_it_is_on() {
    let dir = scratch("tunable-default");
    std::fs::create_dir_all(&dir).unwrap();
    let harness = dir.join("tuned.harness");
    std::fs::write(
        &harness,
        r#"harness tuned

use game search

layer base {
  tunable cell: Int = 1 in 0..=15

  action pick(c: Int) {
    emit game.guess(c)
  }

  decide {
    when true => pick(cell)
  }
}

layer tuned needs base {
  tunable base.cell = 4
}
"#,
    )
    .unwrap();
    let mut req = Request {
        harness: Some(harness.display().to_string()),
        out: dir.join("runs"),
        instances: Some("n16-p10".into()),
        seeds: Some("1".into()),
        ..Request::default()
    };
    let cell = |outcome: &Outcome| -> Vec<(String, String)> {
        let manifest = outcome.folder.manifest();
        manifest
            .effective
            .iter()
            .map(|arm| {
                let value = arm.values.iter().find(|(name, _)| name == "cell");
                (arm.arm.clone(), value.expect("cell is a setting").1.clone())
            })
            .collect()
    };
    let outcome = run(&req).unwrap();
    assert_eq!(
        cell(&outcome),
        vec![("L1".into(), "1".into()), ("L1-L2".into(), "4".into())]
    );
    let (records, missing) = outcome.folder.records().unwrap();
    assert!(missing.is_empty());
    assert!(
        records.iter().all(|(_, r)| r.costs.revisions == 0),
        "no turn revised"
    );
    req.settings = vec![("--set".into(), vec![("cell".into(), "7".into())])];
    let outcome = run(&req).unwrap();
    assert_eq!(
        cell(&outcome),
        vec![("L1".into(), "7".into()), ("L1-L2".into(), "7".into())]
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `halt REASON` ends the episode after the action's effects: the record keeps the reason, the
/// trace's end event carries it, and `lens run` counts the halted episodes per arm.
#[test]
fn a_harness_can_halt_its_episode() {
    let dir = scratch("halt");
    std::fs::create_dir_all(&dir).unwrap();
    let harness = dir.join("halting.harness");
    std::fs::write(
        &harness,
        r#"harness halting

use game search

layer probing {
  state {
    probes: Int = 0
  }

  action probe(c: Int) {
    patch probes += 1
    emit game.probe(c)
  }

  action give_up() {
    emit game.probe(0)
    halt gave_up
  }

  decide {
    when probes < 2 => probe(probes)
    when true => give_up()
  }
}
"#,
    )
    .unwrap();
    let req = Request {
        harness: Some(harness.display().to_string()),
        out: dir.join("runs"),
        instances: Some("n16-p10".into()),
        seeds: Some("3".into()),
        ..Request::default()
    };
    let outcome = run(&req).unwrap();
    assert_eq!(outcome.records.len(), 3);
    for (unit, record) in &outcome.records {
        assert_eq!(record.end, "halted", "{record:?}");
        assert_eq!(record.halt.as_deref(), Some("gave_up"));
        assert_eq!(record.costs.turns, 3, "the halting action counts as a turn");
        let trace = outcome.folder.trace(unit).unwrap();
        let last = trace.lines().last().unwrap();
        assert!(
            last.contains(r#""event":"episode_end","reason":"halted""#)
                && last.ends_with(r#","halt":"gave_up"}"#),
            "{last}"
        );
        // The halting action's effect reached the game before the episode ended.
        let probes = trace.matches(r#""event":"effect","name":"probe""#).count();
        assert_eq!(probes, 3, "{trace}");
    }
    let shown = lens::show(
        &Registry::standard(),
        &lens_request(View::Run, outcome.folder.root()),
    )
    .unwrap();
    assert!(
        shown.text.contains("halted by the harness:") && shown.text.contains("3/3 (gave_up 3)"),
        "{}",
        shown.text
    );
    assert_eq!(shown.json["ends"][0]["ends"]["halted"], 3);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `--shard K/N` into one folder: the shards together write exactly what one run writes, a
/// shard refuses a folder of another plan, and a shard needs a run id.
#[test]
fn shards_of_a_plan_merge_into_the_folder_of_a_single_run() {
    let dir = scratch("shards");
    let mut req = request("harnesses/examples/search.harness", &dir.join("shared"));
    req.seeds = Some("2".into());
    req.instances = Some("n16-p10,n16-p25".into());
    req.run_id = Some("r".into());
    req.shard = Some(Shard::parse("1/2").unwrap());
    let first = run(&req).unwrap();
    assert!(
        !first.missing.is_empty(),
        "the other shard's episodes are missing"
    );
    assert!(
        !dir.join("shared/r/summary.json").exists(),
        "only a complete run has a summary"
    );
    req.shard = Some(Shard::parse("2/2").unwrap());
    let second = run(&req).unwrap();
    assert!(second.missing.is_empty());

    let mut single = request("harnesses/examples/search.harness", &dir.join("single"));
    single.seeds = Some("2".into());
    single.instances = Some("n16-p10,n16-p25".into());
    single.run_id = Some("r".into());
    run(&single).unwrap();
    for file in ["games.jsonl", "games.csv", "summary.json"] {
        assert_eq!(
            std::fs::read(dir.join("shared/r").join(file)).unwrap(),
            std::fs::read(dir.join("single/r").join(file)).unwrap(),
            "{file}"
        );
    }

    req.seeds = Some("3".into());
    let error = run(&req).unwrap_err();
    assert!(error.contains("the plan differs"), "{error}");
    req.run_id = None;
    let error = run(&req).unwrap_err();
    assert!(error.contains("--shard needs --run-id"), "{error}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `harness runs`: the index lists every run of a folder with its tags and progress, filters
/// by tag, game and setting, and names an unreadable folder instead of failing on it.
#[test]
fn the_run_index_lists_and_filters_runs() {
    use harness::runs::{Filter, list};
    let dir = scratch("runs");
    let out = dir.join("runs");
    let mut search = request("harnesses/examples/search.harness", &out);
    search.instances = Some("n16-p10".into());
    search.seeds = Some("1".into());
    search.tags = vec!["smoke".into()];
    search.settings = vec![("--set".into(), vec![("confidence".into(), "0.8".into())])];
    run(&search).unwrap();
    let mut cooling = request("harnesses/examples/cooling_floor.harness", &out);
    cooling.seeds = Some("1".into());
    cooling.now = 60;
    run(&cooling).unwrap();
    std::fs::create_dir_all(out.join("broken")).unwrap();
    std::fs::write(out.join("broken/manifest.json"), "{").unwrap();
    std::fs::create_dir_all(out.join("not-a-run")).unwrap();

    let (runs, unreadable) = list(&out, &Filter::default()).unwrap();
    let games: Vec<&str> = runs.iter().map(|r| r.game.as_str()).collect();
    assert_eq!(games, ["search", "cooling"], "oldest first");
    assert_eq!((runs[0].done, runs[0].planned), (3, 3));
    assert_eq!(runs[0].tags, ["smoke"]);
    assert_eq!(unreadable.len(), 1);
    assert!(
        unreadable[0].reason.contains("corrupt"),
        "{:?}",
        unreadable[0]
    );
    let only = |filter: Filter| -> Vec<String> {
        list(&out, &filter)
            .unwrap()
            .0
            .into_iter()
            .map(|r| r.game)
            .collect()
    };
    let tagged = Filter {
        tags: vec!["smoke".into()],
        ..Filter::default()
    };
    assert_eq!(only(tagged), ["search"]);
    let cooling_only = Filter {
        game: Some("cooling".into()),
        ..Filter::default()
    };
    assert_eq!(only(cooling_only), ["cooling"]);
    let set = Filter {
        settings: vec![("confidence".into(), "0.8".into())],
        ..Filter::default()
    };
    assert_eq!(only(set), ["search"]);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The deterministic-execution study on the procedure game, through `harness ablate` and
/// `harness lens determinism` with the simulated model. The simulated model is a test
/// instrument: these tests check the harnesses, the metrics and the plumbing, never a model.
mod det {
    use std::sync::Arc;

    use harness::ablate::{Hooks, Request};
    use harness::lens::determinism::{Determinism, Options};
    use harness_runtime::LlmHost;
    use harness_stdlib::llm::{
        CallMode, CallStore, ClientHost, ClientOptions, Decoding, DirStore, LlmClient, Persona,
        ProviderConfig, ProviderKind, STORE_FORMAT, SimTransport, StoreManifest,
    };
    use harness_stdlib::stats;

    use super::{root, run, scratch};

    /// The LLM of a run: the simulated model of a persona, or a replayer that has none.
    struct SimHooks(LlmClient);

    impl Hooks for SimHooks {
        fn llm(&self, unit: &harness::plan::Unit) -> Option<Box<dyn LlmHost>> {
            Some(Box::new(ClientHost::new(
                self.0.clone(),
                unit.llm_replicate(),
            )))
        }
    }

    fn config(model: &str) -> ProviderConfig {
        ProviderConfig {
            kind: ProviderKind::Sim,
            base_url: ProviderKind::Sim.default_base_url().into(),
            model: model.into(),
            api_key: None,
        }
    }

    fn sim(persona: &str, mode: CallMode) -> LlmClient {
        let path = root().join(format!("harnesses/det/personas/{persona}.toml"));
        let persona = Persona::parse(&std::fs::read_to_string(path).unwrap()).unwrap();
        LlmClient::new(
            config(&persona.name.clone()),
            Arc::new(SimTransport::new(persona)),
            ClientOptions::default(),
            mode,
        )
    }

    /// Every lens view on an L4 Battleship run whose revisions go to an LLM (the simulated
    /// model, a test instrument): the calls are recorded, read back and shown.
    #[test]
    fn every_lens_view_works_on_an_l4_run_with_an_llm() {
        let out = scratch("l4-sim");
        let path = root().join("harnesses/personas/steady.toml");
        let persona = Persona::parse(&std::fs::read_to_string(path).unwrap()).unwrap();
        let client = LlmClient::new(
            config(&persona.name.clone()),
            Arc::new(SimTransport::new(persona)),
            ClientOptions::default(),
            CallMode::Live,
        );
        let req = Request {
            harness: Some(root().join("harnesses/battleship").display().to_string()),
            out: out.clone(),
            instances: Some("B01".into()),
            seeds: Some("1".into()),
            stacks: Some(vec!["L1-L4".into()]),
            settings: vec![(
                "--set".into(),
                vec![
                    ("particles".into(), "100".into()),
                    ("confidence_threshold".into(), "1.0".into()),
                ],
            )],
            ..Request::default()
        };
        let outcome = harness::ablate::ablate(
            &harness::games::Registry::standard(),
            &req,
            &SimHooks(client),
        )
        .map_err(|e| e.to_string())
        .unwrap();
        let calls = outcome.records[0].1.costs.llm_calls;
        assert!(calls > 0, "the revision gate opened and asked the model");
        let registry = harness::games::Registry::standard();
        let folder = outcome.folder.root().to_path_buf();
        let view = |view| {
            let mut request = super::lens_request(view, &folder);
            request.episode = Some("B01:0".into());
            request
        };
        let llm = harness::lens::show(&registry, &view(super::View::Llm)).unwrap();
        assert!(
            llm.text.contains(&format!("{calls} calls  ok {calls}")),
            "{}",
            llm.text
        );
        for other in [super::View::Run, super::View::Game] {
            harness::lens::show(&registry, &view(other)).unwrap();
        }
        let mut series = view(super::View::Series);
        series.field = Some("reflection.llm_revisions".into());
        let shown = harness::lens::show(&registry, &series).unwrap();
        assert!(shown.svg.is_some(), "{}", shown.text);
        std::fs::remove_dir_all(&out).unwrap();
    }

    /// Runs the three conditions of one task over `seeds` seeds and analyses the run.
    fn study(
        task: &str,
        seeds: u64,
        hooks: &SimHooks,
        out: &std::path::Path,
        iterations: usize,
    ) -> (Determinism, harness::ablate::Outcome) {
        let req = Request {
            harness: Some(
                root()
                    .join(format!("harnesses/det/{task}.harness"))
                    .display()
                    .to_string(),
            ),
            out: out.to_path_buf(),
            seeds: Some(seeds.to_string()),
            ..Request::default()
        };
        let outcome = harness::ablate::ablate(&harness::games::Registry::standard(), &req, hooks)
            .map_err(|e| e.to_string())
            .unwrap();
        let options = Options {
            iterations,
            ..Options::default()
        };
        let shown = harness::lens::determinism_view(outcome.folder.root(), &options).unwrap();
        let report: Determinism = serde_json_round(&shown.json);
        println!("{task}:\n{}", harness::lens::determinism::text(&report));
        (report, outcome)
    }

    /// The analysis back from its JSON (what `determinism.json` holds).
    fn serde_json_round(json: &serde_json::Value) -> Determinism {
        serde_json::from_value(json.clone()).unwrap()
    }

    /// With a noise-free persona every condition on both tasks is fully reproducible and
    /// always succeeds, over 100 seeds.
    #[test]
    fn det_noise_free_persona_gives_determinism_one_everywhere() {
        let hooks = SimHooks(sim("det-t0", CallMode::Live));
        for task in ["finance_ecl", "legal_clause"] {
            let out = scratch(&format!("det-t0-{task}"));
            let (report, _) = study(task, 100, &hooks, &out, 200);
            assert_eq!(report.cells.len(), 3);
            for c in &report.cells {
                assert_eq!(c.n, 100);
                assert_eq!(
                    (c.ps, c.tpc, c.sts, c.oc, c.di, c.rr, c.tsr.estimate),
                    (1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0),
                    "{task} {}",
                    c.arm
                );
            }
            std::fs::remove_dir_all(&out).unwrap();
        }
    }

    /// With plan paraphrase as the only noise, the Harness keeps its tools, states and outputs
    /// (TPC = STS = OC = 1) but not its logged plan, so its RR falls below Structured
    /// Planning's 1.000; each stack's RR lies in the 95% Wilson interval of its closed form,
    /// (1 − p)^4 for the free-text plan of four steps paraphrased with p = 0.1 each, and 1 with
    /// the canonical plan.
    #[test]
    fn det_rr_analytic_and_the_paraphrase_diagnosis() {
        let hooks = SimHooks(sim("det-paraphrase", CallMode::Live));
        let p: f64 = 0.1;
        for task in ["finance_ecl", "legal_clause"] {
            let out = scratch(&format!("det-para-{task}"));
            let (report, _) = study(task, 100, &hooks, &out, 2000);
            let cell = |arm: &str| report.cells.iter().find(|c| c.arm == arm).unwrap();
            let (harness, sp) = (cell("L1-L2"), cell("L1-L3"));
            assert_eq!(
                (harness.tpc, harness.sts, harness.oc),
                (1.0, 1.0, 1.0),
                "{task}"
            );
            assert!(harness.ps < 1.0, "{task}");
            assert_eq!((sp.rr, sp.di), (1.0, 1.0), "{task}");
            assert!(harness.rr < sp.rr);
            let contrast = report
                .contrasts
                .iter()
                .find(|k| k.a == "L1-L2" && k.b == "L1-L3")
                .unwrap();
            println!(
                "{task}: RR(L1-L2) − RR(L1-L3) permutation p = {}",
                contrast.rr_p
            );
            assert!(contrast.rr_p < 0.001, "{}", contrast.rr_p);
            for (arm, closed) in [
                ("L1", (1.0 - p).powi(4)),
                ("L1-L2", (1.0 - p).powi(4)),
                ("L1-L3", 1.0),
            ] {
                let c = cell(arm);
                let ci = stats::wilson(c.modal as u64, c.n as u64, 0.95);
                assert!(
                    ci.lo <= closed && closed <= ci.hi,
                    "{task} {arm}: RR {} [{}, {}] misses its closed form {closed}",
                    c.rr,
                    ci.lo,
                    ci.hi
                );
            }
            std::fs::remove_dir_all(&out).unwrap();
        }
    }

    /// Recording a sim run and replaying it without the sim gives identical per-replicate
    /// traces and the same RR: the replicates are not one answer replayed N times.
    #[test]
    fn det_record_then_replay_gives_the_same_traces_and_rr() {
        let dir = scratch("det-record");
        let store = DirStore::new(dir.join("llm"));
        store
            .prepare_for_recording(&StoreManifest {
                format: STORE_FORMAT,
                provider: ProviderKind::Sim,
                model: "det-paraphrase".into(),
                decoding: Decoding::default(),
            })
            .unwrap();
        let store: Arc<dyn CallStore> = Arc::new(store);
        let recorder = SimHooks(sim("det-paraphrase", CallMode::Record(Arc::clone(&store))));
        let (recorded, first) = study("finance_ecl", 20, &recorder, &dir.join("a"), 100);
        let replayer = SimHooks(LlmClient::http(
            config("det-paraphrase"),
            ClientOptions::default(),
            CallMode::Replay(store),
        ));
        let (replayed, second) = study("finance_ecl", 20, &replayer, &dir.join("b"), 100);
        assert_eq!(first.records.len(), 60);
        for ((unit, _), (again, _)) in first.records.iter().zip(&second.records) {
            assert_eq!(unit, again);
            assert_eq!(
                first.folder.trace(unit).unwrap(),
                second.folder.trace(again).unwrap(),
                "{unit:?}"
            );
        }
        let rr = |d: &Determinism| d.cells.iter().map(|c| c.rr).collect::<Vec<_>>();
        assert_eq!(rr(&recorded), rr(&replayed));
        assert!(
            rr(&recorded)[1] < 1.0,
            "the replicates differ: {:?}",
            rr(&recorded)
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// The study does not depend on how many threads run it: one and two threads give
    /// byte-identical traces for every episode of both tasks and the same analysis.
    #[test]
    fn det_traces_and_the_analysis_are_independent_of_the_thread_count() {
        let dir = scratch("det-threads");
        let hooks = SimHooks(sim("det-paraphrase", CallMode::Live));
        for task in ["finance_ecl", "legal_clause"] {
            let mut outcomes = Vec::new();
            for threads in [1, 2] {
                let req = Request {
                    harness: Some(
                        root()
                            .join(format!("harnesses/det/{task}.harness"))
                            .display()
                            .to_string(),
                    ),
                    out: dir.join(format!("{task}-{threads}")),
                    seeds: Some("12".into()),
                    threads,
                    ..Request::default()
                };
                let outcome =
                    harness::ablate::ablate(&harness::games::Registry::standard(), &req, &hooks)
                        .map_err(|e| e.to_string())
                        .unwrap();
                let shown = harness::lens::determinism_view(
                    outcome.folder.root(),
                    &Options {
                        iterations: 200,
                        ..Options::default()
                    },
                )
                .unwrap();
                outcomes.push((outcome, shown.json));
            }
            let (one, two) = (&outcomes[0], &outcomes[1]);
            assert_eq!(one.0.records.len(), 36);
            for ((unit, record), (again, other)) in one.0.records.iter().zip(&two.0.records) {
                assert_eq!((unit, record), (again, other));
                assert_eq!(
                    one.0.folder.trace(unit).unwrap(),
                    two.0.folder.trace(again).unwrap(),
                    "{task} {unit:?}"
                );
            }
            assert_eq!(one.1, two.1, "{task}: the analysis");
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// Escalation halts: with no LLM the Harness cannot call its state's tool, retries twice
    /// and halts with `escalated`; `--set max_retries=0` halts after the first failure.
    #[test]
    fn det_escalation_halts_after_the_bounded_retries() {
        let out = scratch("det-escalate");
        for (retries, calls) in [(None, 3), (Some("0"), 1)] {
            let mut req = Request {
                harness: Some(
                    root()
                        .join("harnesses/det/legal_clause.harness")
                        .display()
                        .to_string(),
                ),
                out: out.clone(),
                seeds: Some("1".into()),
                stacks: Some(vec!["L1-L2".into()]),
                ..Request::default()
            };
            if let Some(r) = retries {
                req.settings = vec![("--set".into(), vec![("max_retries".into(), r.into())])];
            }
            let outcome = run(&req).unwrap();
            let (unit, record) = &outcome.records[0];
            assert_eq!(
                (record.end.as_str(), record.halt.as_deref()),
                ("halted", Some("escalated"))
            );
            let trace = outcome.folder.trace(unit).unwrap();
            let failed = trace.matches(r#""effect":"state_call""#).count();
            assert_eq!(failed, calls, "{trace}");
        }
        std::fs::remove_dir_all(&out).unwrap();
    }
}

/// `harness report`: one self-contained page with every section, an episode drill-down per
/// finished episode, and no script or remote resource.
#[test]
fn the_html_report_holds_every_section_and_no_script() {
    let dir = scratch("report");
    let mut req = request("harnesses/examples/search.harness", &dir);
    req.instances = Some("n16-p10".into());
    req.seeds = Some("2".into());
    req.run_id = Some("r".into());
    let outcome = run(&req).unwrap();
    let page =
        harness::lens::html::page(&Registry::standard(), outcome.folder.root(), None).unwrap();
    for section in [
        "settings",
        "arms",
        "marginals",
        "figures",
        "instances",
        "episodes",
    ] {
        assert!(
            page.contains(&format!("<section id=\"{section}\">")),
            "{section}"
        );
    }
    assert_eq!(
        page.matches("<details>").count(),
        6,
        "one drill-down per episode"
    );
    assert_eq!(
        page.matches("<table").count(),
        page.matches("</table>").count()
    );
    assert!(page.contains("<svg"), "the figure is inline");
    for banned in ["<script", "http://", "https://", "<link"] {
        let outside_svg = page
            .split("<svg")
            .enumerate()
            .map(|(i, part)| {
                if i == 0 {
                    part
                } else {
                    part.split_once("</svg>").map_or("", |(_, rest)| rest)
                }
            })
            .collect::<String>();
        assert!(!outside_svg.contains(banned), "{banned}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A `machine` makes each transition of its field a trace event, and a computed transition that
/// is not an edge a runtime error (R0017) that ends the episode.
#[test]
fn machine_transitions_are_events_and_a_bad_dynamic_one_is_r0017() {
    let dir = scratch("machine");
    std::fs::create_dir_all(&dir).unwrap();
    let harness = dir.join("machine.harness");
    let text = |jump: &str| {
        format!(
            r#"harness machines

use game search

enum Phase {{ Probe, Guess, Over }}

/// The phase after `p`; `{jump}` is where probing leads.
fn after(p: Phase) -> Phase = match p {{
  Phase.Probe => Phase.{jump},
  _ => Phase.Over,
}}

layer l {{
  state {{
    phase: Phase = Phase.Probe
  }}

  machine phase {{
    Probe -> Guess -> Over
  }}

  action probe() available when phase == Phase.Probe {{
    patch phase = after(phase)
    emit game.probe(0)
  }}

  action guess() available when phase == Phase.Guess {{
    patch phase = Phase.Over
    emit game.guess(0)
  }}

  decide {{
    when phase == Phase.Probe => probe()
    when true => guess()
  }}
}}
"#
        )
    };
    let req = Request {
        harness: Some(harness.display().to_string()),
        out: dir.join("runs"),
        instances: Some("n16-p10".into()),
        seeds: Some("1".into()),
        ..Request::default()
    };
    std::fs::write(&harness, text("Guess")).unwrap();
    let outcome = run(&req).unwrap();
    let (unit, record) = &outcome.records[0];
    assert_eq!(record.end, "game_over", "{record:?}");
    let trace = outcome.folder.trace(unit).unwrap();
    let moves: Vec<&str> = trace
        .lines()
        .filter(|line| line.contains(r#""event":"transition""#))
        .collect();
    assert_eq!(moves.len(), 2, "{trace}");
    assert!(
        moves[0].ends_with(r#""field":"l.phase","from":"Phase.Probe","to":"Phase.Guess"}"#),
        "{}",
        moves[0]
    );
    // Probing straight to `Over` skips `Guess`: not an edge, found when it runs.
    std::fs::write(&harness, text("Over")).unwrap();
    let mut req = req;
    req.out = dir.join("runs-bad");
    let outcome = run(&req).unwrap();
    let (_, record) = &outcome.records[0];
    assert_eq!(record.end, "error");
    let error = record.error.as_deref().unwrap_or_default();
    assert!(
        error.starts_with("R0017: `l.phase` cannot go from Phase.Probe to Phase.Over"),
        "{error}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The figures of `lens run` name what differs between arms (or runs), never a run id: the
/// run plot has the primary and secondary metric with counts, per-instance effects carry their
/// intervals and the mean, and overlays get a legend. Tried on two games.
#[test]
fn figures_are_titled_by_what_differs_and_carry_no_run_id() {
    let dir = scratch("figures");
    let mut first = request("harnesses/examples/search.harness", &dir);
    first.instances = Some("n16-p10,n16-p25,n32-p10".into());
    first.seeds = Some("2".into());
    first.run_id = Some("run-one".into());
    let one = run(&first).unwrap();
    let mut second = request("harnesses/examples/search.harness", &dir);
    second.instances = first.instances.clone();
    second.seeds = Some("3".into());
    second.run_id = Some("run-two".into());
    let two = run(&second).unwrap();
    let text_of = |svg: &str| -> String {
        svg.split('>')
            .filter_map(|part| part.split('<').next())
            .collect::<Vec<_>>()
            .join("|")
    };

    let shown = lens::show(
        &Registry::standard(),
        &lens_request(View::Run, one.folder.root()),
    )
    .unwrap();
    let svg = shown.svg.unwrap();
    let words = text_of(&svg);
    assert!(words.contains("solve rate and score by arm"), "{words}");
    assert!(words.contains("arms differ in layers"), "{words}");
    assert!(words.contains("n=6"), "each bar's episodes: {words}");
    assert!(!svg.contains("run-one"), "no run id in the figure");

    let mut effect = lens_request(View::Run, one.folder.root());
    effect.layer = Some("planning".into());
    let svg = lens::show(&Registry::standard(), &effect)
        .unwrap()
        .svg
        .unwrap();
    assert!(
        text_of(&svg).contains("mean +"),
        "the mean and its interval"
    );
    assert_eq!(
        svg.matches("stroke-width=\"1.2\"").count(),
        3,
        "a whisker per instance"
    );

    let mut overlay = lens_request(View::Run, one.folder.root());
    overlay.overlay = vec![two.folder.root().to_path_buf()];
    let svg = lens::show(&Registry::standard(), &overlay)
        .unwrap()
        .svg
        .unwrap();
    let words = text_of(&svg);
    assert!(
        words.contains("seeds=0..1") && words.contains("seeds=0..2"),
        "the legend names what the runs differ in: {words}"
    );
    assert!(!svg.contains("run-one") && !svg.contains("run-two"));

    let mut compare = lens_request(View::Compare, two.folder.root());
    compare.compare = Some(one.folder.root().to_path_buf());
    let svg = lens::show(&Registry::standard(), &compare)
        .unwrap()
        .svg
        .unwrap();
    assert!(
        text_of(&svg).contains("seeds=0..2 − seeds=0..1"),
        "{}",
        text_of(&svg)
    );

    // A second game, whose arms also differ in a layer's tunable default.
    let mut cooling = request("harnesses/examples/cooling_floor.harness", &dir);
    cooling.seeds = Some("1".into());
    cooling.now = 60;
    let other = run(&cooling).unwrap();
    let svg = lens::show(
        &Registry::standard(),
        &lens_request(View::Run, other.folder.root()),
    )
    .unwrap()
    .svg
    .unwrap();
    assert!(text_of(&svg).contains("cooling ·"), "{}", text_of(&svg));
    assert!(!svg.contains(&other.folder.manifest().run_id));

    let error = lens::show(&Registry::standard(), &{
        let mut r = lens_request(View::Run, one.folder.root());
        r.overlay = vec![other.folder.root().to_path_buf()];
        r
    })
    .map(|_| ())
    .unwrap_err();
    assert!(error.contains("different games"), "{error}");
    std::fs::remove_dir_all(&dir).unwrap();
}
