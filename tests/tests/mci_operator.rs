//! The symbolic operators of `harnesses/mci/<game>/operator`: every level answers, levels below
//! K5 never simulate, an episode replays byte for byte, and a level sweep through the engine
//! reads back into the map and the provisioning policies.

use std::sync::Arc;

use harness_compiler::Workspace;
use harness_compiler::ir::Program;
use harness_mci::game::Mci;
use harness_mci::suite::Domain;
use harness_runtime::{
    EndReason, EpisodeResult, EventKind, GameKind, GameOptions, Limits, Machine, RngStreams,
    Switches, Value, run_episode, to_json_lines,
};

const LEVELS: [&str; 5] = ["k1", "k2", "k3", "k4", "k5"];

/// The simulator tools of both games (K5 only).
const SIMULATORS: [&str; 4] = ["simulate", "steady_state", "power_flow", "n1_screen"];

fn program(domain: Domain) -> Arc<Program> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../harnesses/mci")
        .join(domain.name())
        .join("operator");
    let mut workspace = Workspace::new(harness_tests::signatures());
    for level in LEVELS {
        let path = dir.join(format!("{level}.harness"));
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path:?}: {e}"));
        workspace.set_file(&format!("{level}.harness"), &text);
    }
    let module = format!("mci.{}.operator.k5", domain.name());
    workspace
        .program(&module)
        .unwrap_or_else(|d| panic!("{module} does not check: {d:?}"))
}

fn run(program: &Arc<Program>, domain: Domain, level: usize, task: &str) -> EpisodeResult {
    let mut natives = harness_stdlib::prelude::natives();
    natives.extend(&Mci(domain).natives());
    let switches = Switches {
        layers: Some(LEVELS[..=level].iter().map(|l| l.to_string()).collect()),
        ..Switches::default()
    };
    let machine = Machine::new(program.clone(), natives, &switches, Limits::default())
        .unwrap_or_else(|e| panic!("{e}"));
    let mut game = Mci(domain)
        .start(task, &GameOptions::default(), &RngStreams::new(1))
        .unwrap_or_else(|e| panic!("{e}"));
    run_episode(&machine, game.as_mut())
}

#[test]
fn every_level_answers_and_only_k5_simulates() {
    for domain in Domain::ALL {
        let program = program(domain);
        // The first construction task of every class.
        let tasks: Vec<_> = domain.tasks().iter().filter(|t| t.index() == 0).collect();
        assert_eq!(tasks.len(), 12);
        for task in tasks {
            for (level, name) in LEVELS.iter().enumerate() {
                let result = run(&program, domain, level, &task.id);
                let at = format!("{} at {name}", task.id);
                assert_eq!(result.end, EndReason::GameOver, "{at}: {:?}", result.error);
                assert_eq!(result.metrics["answered"], Value::Bool(true), "{at}");
                let simulated = result.events.iter().any(|e| {
                    matches!(&e.kind, EventKind::Effect { name, .. } if SIMULATORS.contains(&name.as_str()))
                });
                if level < 4 {
                    assert!(!simulated, "{at} simulated");
                }
            }
        }
    }
}

#[test]
fn an_operator_episode_replays_exactly() {
    for domain in Domain::ALL {
        let program = program(domain);
        let task = &domain.tasks()[70].id;
        let a = run(&program, domain, 4, task);
        let b = run(&program, domain, 4, task);
        assert_eq!(to_json_lines(&a.events), to_json_lines(&b.events), "{task}");
    }
}

/// A level sweep through the experiment engine (what `harness ablate` runs), read back by
/// `harness map` and `harness provision`, on both games.
mod provisioning {
    use std::collections::BTreeMap;
    use std::path::{Path, PathBuf};

    use harness::ablate::{NoHooks, Outcome, Request, ablate};
    use harness::folder::GameRecord;
    use harness::games::Registry;
    use harness::provision::{self, Columns, MapReport};
    use harness_stdlib::provision::Policy;

    use super::SIMULATORS;

    /// Two classes, each with one construction and one test task: A-F-M (where the twin can
    /// be wrong) and I-N-S (direct readings).
    fn sweep(game: &str, instances: &str) -> (Outcome, PathBuf) {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let out = std::env::temp_dir().join(format!(
            "harness-provision-{game}-{}-{}",
            instances.len(),
            std::process::id()
        ));
        let _ = std::fs::remove_dir_all(&out);
        let request = Request {
            harness: Some(
                root.join(format!("harnesses/mci/{game}/operator"))
                    .display()
                    .to_string(),
            ),
            instances: Some(instances.into()),
            seeds: Some("1".into()),
            out: out.clone(),
            ..Request::default()
        };
        let outcome = ablate(&Registry::standard(), &request, &NoHooks)
            .unwrap_or_else(|e| panic!("{game}: {e}"));
        let folder = outcome.folder.root().to_path_buf();
        (outcome, folder)
    }

    fn f(record: &GameRecord, name: &str) -> f64 {
        match &record.metrics[name] {
            serde_json::Value::Bool(b) => f64::from(u8::from(*b)),
            v => v.as_f64().unwrap(),
        }
    }

    #[test]
    fn map_and_provision_follow_the_sweep_s_records_on_both_games() {
        for game in ["cooling", "grid"] {
            let tasks: Vec<String> = ["I-N-S.00", "I-N-S.05", "A-F-M.00", "A-F-M.05"]
                .iter()
                .map(|t| format!("{game}.{t}"))
                .collect();
            let (outcome, folder) = sweep(game, &tasks.join(","));
            // Every record by (instance, level 1..=5), from the folder itself.
            let mut at: BTreeMap<(String, usize), GameRecord> = BTreeMap::new();
            for (unit, record) in &outcome.records {
                at.insert((record.instance.clone(), unit.arm + 1), record.clone());
                // No trace of a stack below the top simulates.
                if unit.arm < 4 {
                    let trace = outcome.folder.trace(unit).unwrap();
                    for line in trace.lines() {
                        let event: serde_json::Value = serde_json::from_str(line).unwrap();
                        if event["event"] == "effect" {
                            let name = event["name"].as_str().unwrap();
                            assert!(
                                !SIMULATORS.contains(&name),
                                "{} at {} emitted {name}",
                                record.instance,
                                record.arm
                            );
                        }
                    }
                }
            }
            assert_eq!(at.len(), 4 * 5, "{game}");
            let registry = Registry::standard();
            let sweep = provision::load(&registry, &folder, &Columns::default()).unwrap();
            assert_eq!(sweep.levels, ["k1", "k2", "k3", "k4", "k5"]);
            assert_eq!(sweep.cost, "tokens");
            assert!(sweep.notes.is_empty(), "{:?}", sweep.notes);

            // The map: one construction task per class, so a cell is that task's score and the
            // floor is the first level within ε of the row's best.
            let map = provision::map(&sweep, &[0.05, 0.0]);
            assert_eq!(map.classes, ["A-F-M", "I-N-S"]);
            for (i, class) in map.classes.iter().enumerate() {
                let task = format!("{game}.{class}.00");
                let row: Vec<f64> = (1..=5)
                    .map(|k| f(&at[&(task.clone(), k)], "score"))
                    .collect();
                assert_eq!(
                    map.mean[i],
                    row.iter().map(|&v| Some(v)).collect::<Vec<_>>(),
                    "{task}"
                );
                let best = row.iter().copied().fold(f64::NEG_INFINITY, f64::max);
                for m in &map.maps {
                    let floor = row
                        .iter()
                        .position(|&v| v >= best - m.epsilon - 1e-12)
                        .unwrap();
                    assert_eq!(
                        m.floors[class], sweep.levels[floor],
                        "{task} ε={}",
                        m.epsilon
                    );
                }
            }
            assert!(provision::map_table(&map).contains("floors"));
            assert_eq!(
                provision::map_svg(&map)
                    .matches("stroke-width=\"3\"")
                    .count(),
                2,
                "one floor outlined per class"
            );

            // The policies, recomputed by hand from the test records.
            let report =
                provision::provision(&sweep, &map, Some(0.05), &Policy::ALL, 1000, 3).unwrap();
            assert_eq!((report.tasks, report.runs), (2, 1));
            let (_, floors) = map.floors(Some(0.05)).unwrap();
            let test: Vec<(String, usize)> = ["I-N-S", "A-F-M"]
                .iter()
                .map(|c| (format!("{game}.{c}.05"), floors[*c]))
                .collect();
            let full_cost: f64 = test
                .iter()
                .map(|(t, _)| f(&at[&(t.clone(), 5)], "tokens"))
                .sum();
            let (mut lookup, mut esc, mut esc_cost, mut escalated) = (0.0, 0.0, 0.0, 0.0);
            for (task, floor) in &test {
                let first = &at[&(task.clone(), *floor)];
                lookup += f(first, "score") / 2.0;
                esc_cost += f(first, "tokens");
                if f(first, "self_check") < 0.5 && *floor < 5 {
                    let retry = &at[&(task.clone(), 5)];
                    esc += f(retry, "score") / 2.0;
                    esc_cost += f(retry, "tokens");
                    escalated += 0.5;
                } else {
                    esc += f(first, "score") / 2.0;
                }
            }
            let row = |name: &str| {
                report
                    .policies
                    .iter()
                    .find(|r| r.policy == name)
                    .unwrap()
                    .clone()
            };
            let full = row("full");
            let full_score: f64 = test
                .iter()
                .map(|(t, _)| f(&at[&(t.clone(), 5)], "score") / 2.0)
                .sum();
            assert!((full.score - full_score).abs() < 1e-12, "{game}");
            assert_eq!((full.cost_ratio, full.attempts), (1.0, 1.0));
            assert!((report.full_cost - full_cost / 2.0).abs() < 1e-9);
            assert!((row("exec-lookup").score - lookup).abs() < 1e-12);
            let map_esc = row("map-esc");
            assert!((map_esc.score - esc).abs() < 1e-12, "{game}");
            assert!((map_esc.cost_ratio - esc_cost / full_cost).abs() < 1e-12);
            assert!((map_esc.escalation_rate - escalated).abs() < 1e-12);
            assert!((map_esc.attempts - (1.0 + escalated)).abs() < 1e-12);
            assert!(row("task-oracle").oracle && !map_esc.oracle);
            assert!(row("task-oracle").score >= row("class-oracle").score - 1e-12);
            let table = provision::provision_table(&report);
            assert!(
                table.contains("map-esc") && table.contains("(oracle)"),
                "{table}"
            );
            assert_eq!(
                provision::provision_svg(&report).matches("<circle").count(),
                7
            );

            // A map read back from its JSON gives the same table.
            let text = serde_json::to_string(&map).unwrap();
            let again: MapReport = serde_json::from_str(&text).unwrap();
            let replay =
                provision::provision(&sweep, &again, Some(0.05), &Policy::ALL, 1000, 3).unwrap();
            assert_eq!(replay, report);
            assert!(
                provision::provision(&sweep, &again, Some(0.2), &Policy::ALL, 10, 3)
                    .unwrap_err()
                    .contains("no floors at ε = 0.2")
            );

            // What a user can get wrong is said, with what to do.
            let bad = Columns {
                group_by: "nope".into(),
                ..Columns::default()
            };
            let error = provision::load(&registry, &folder, &bad).unwrap_err();
            assert!(error.contains("--group-by"), "{error}");
            let bad = Columns {
                test: "held-out".into(),
                ..Columns::default()
            };
            let error = provision::load(&registry, &folder, &bad).unwrap_err();
            assert!(error.contains("no instance set `held-out`"), "{error}");
            let error =
                provision::load(&registry, &folder.join("games"), &Columns::default()).unwrap_err();
            assert!(error.contains("not a run folder"), "{error}");
            let _ = std::fs::remove_dir_all(folder);
        }
        let error = provision::parse_policies("full,lit-lookup").unwrap_err();
        assert!(
            error.contains("exec-lookup") && error.contains("--map"),
            "{error}"
        );
    }

    #[test]
    fn provisioning_needs_test_episodes() {
        let (_, folder) = sweep("cooling", "cooling.I-N-S.00");
        let sweep = provision::load(&Registry::standard(), &folder, &Columns::default()).unwrap();
        let map = provision::map(&sweep, &[0.05]);
        let error = provision::provision(&sweep, &map, None, &[Policy::Full], 10, 0).unwrap_err();
        assert!(
            error.contains("no episode on the `test` instances"),
            "{error}"
        );
        let _ = std::fs::remove_dir_all(folder);
    }
}

/// The ReAct harnesses of `harnesses/mci/<game>/react`, driven by the simulated model (a test
/// instrument: these tests check plumbing, never a model's quality).
mod react {
    use std::path::Path;
    use std::sync::Arc;

    use harness_compiler::Workspace;
    use harness_compiler::ir::Program;
    use harness_mci::game::Mci;
    use harness_mci::suite::Domain;
    use harness_runtime::{
        EpisodeResult, EventKind, GameKind, GameOptions, Limits, Machine, RngStreams, Switches,
        Value, run_episode_with_llm, to_json_lines,
    };
    use harness_stdlib::llm::{
        CallMode, CallStore, ClientHost, ClientOptions, Decoding, DirStore, LlmClient, Persona,
        ProviderConfig, ProviderKind, STORE_FORMAT, SimTransport, StoreManifest,
    };

    use super::LEVELS;

    fn program(domain: Domain) -> Arc<Program> {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../harnesses/mci")
            .join(domain.name())
            .join("react");
        let mut workspace = Workspace::new(harness_tests::signatures());
        for level in LEVELS {
            let path = dir.join(format!("{level}.harness"));
            workspace.set_file(
                &format!("{level}.harness"),
                &std::fs::read_to_string(&path).unwrap(),
            );
        }
        let module = format!("mci.{}.react.k5", domain.name());
        workspace
            .program(&module)
            .unwrap_or_else(|d| panic!("{module} does not check: {d:?}"))
    }

    /// The probe persona; `broken` makes every step call reply with nothing, so only the
    /// tool-free answer call is usable.
    fn persona(broken: bool) -> Persona {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("data/mci-react/probe.toml");
        let mut text = std::fs::read_to_string(path).unwrap();
        if broken {
            for k in 2..=5 {
                text.push_str(&format!("\n[effects.react_k{k}.noise]\nno_answer = 1.0\n"));
            }
        }
        Persona::parse(&text).unwrap()
    }

    fn config() -> (ProviderConfig, ClientOptions) {
        (
            ProviderConfig {
                kind: ProviderKind::Sim,
                base_url: ProviderKind::Sim.default_base_url().into(),
                model: "probe".into(),
                api_key: None,
            },
            ClientOptions {
                decoding: Decoding {
                    temperature: Some(1.0),
                    ..Decoding::default()
                },
                ..ClientOptions::default()
            },
        )
    }

    fn play(
        program: &Arc<Program>,
        domain: Domain,
        level: usize,
        task: &str,
        client: LlmClient,
    ) -> EpisodeResult {
        let mut natives = harness_stdlib::prelude::natives();
        natives.extend(&Mci(domain).natives());
        let switches = Switches {
            layers: Some(LEVELS[..=level].iter().map(|l| l.to_string()).collect()),
            ..Switches::default()
        };
        let machine = Machine::new(program.clone(), natives, &switches, Limits::default())
            .unwrap_or_else(|e| panic!("{e}"));
        let mut game = Mci(domain)
            .start(task, &GameOptions::default(), &RngStreams::new(1))
            .unwrap_or_else(|e| panic!("{e}"));
        let host = ClientHost::new(client, 1);
        let result = run_episode_with_llm(&machine, game.as_mut(), Some(&host));
        assert!(
            result.error.is_none(),
            "{task} at k{}: {:?}",
            level + 1,
            result.error
        );
        result
    }

    /// The effects sent and the LLM calls made (effect and outcome), and the prompt tokens the
    /// calls report.
    fn summary(result: &EpisodeResult) -> (Vec<String>, Vec<(String, String)>, u64) {
        let mut effects = Vec::new();
        let mut calls = Vec::new();
        let mut tokens = 0;
        for event in &result.events {
            match &event.kind {
                EventKind::Effect { name, .. } => effects.push(name.to_string()),
                EventKind::LlmCall {
                    effect,
                    outcome,
                    prompt_tokens,
                    ..
                } => {
                    calls.push((effect.clone(), outcome.clone()));
                    tokens += prompt_tokens.unwrap_or(0);
                }
                _ => {}
            }
        }
        (effects, calls, tokens)
    }

    #[test]
    fn every_level_steps_through_its_tools_and_answers_on_both_games() {
        for domain in Domain::ALL {
            let program = program(domain);
            let task = &domain.tasks()[0].id;
            let (config, options) = config();
            for level in 0..5 {
                let client = LlmClient::new(
                    config.clone(),
                    Arc::new(SimTransport::new(persona(false))),
                    options.clone(),
                    CallMode::Live,
                );
                let result = play(&program, domain, level, task, client);
                let (effects, calls, tokens) = summary(&result);
                // The probe reads what its level has, in order, then answers.
                let expected: &[&str] = match level {
                    0 => &["submit_number"],
                    1 => &["read_manual", "submit_number"],
                    _ => &[
                        "read_manual",
                        "list_signals",
                        "read_snapshot",
                        "submit_number",
                    ],
                };
                assert_eq!(effects, expected, "{task} at k{}", level + 1);
                let step = if level == 0 {
                    "answer_k1".to_string()
                } else {
                    format!("react_k{}", level + 1)
                };
                assert!(
                    calls.iter().all(|(e, o)| *e == step && o == "ok"),
                    "{calls:?}"
                );
                assert_eq!(calls.len(), expected.len());
                assert_eq!(result.metrics["answered"], Value::Bool(true));
                assert_eq!(result.costs.prompt_tokens, tokens, "the calls' tokens sum");
                assert!(tokens > 0);
            }
        }
    }

    #[test]
    fn an_unusable_step_falls_back_to_the_tool_free_answer() {
        for domain in Domain::ALL {
            let program = program(domain);
            let task = &domain.tasks()[0].id;
            let (config, options) = config();
            let client = LlmClient::new(
                config,
                Arc::new(SimTransport::new(persona(true))),
                options,
                CallMode::Live,
            );
            let result = play(&program, domain, 2, task, client);
            let (effects, calls, _) = summary(&result);
            assert_eq!(effects, ["submit_number"]);
            assert_eq!(calls.len(), 2, "{calls:?}");
            assert_eq!(calls[0].0, "react_k3");
            assert_ne!(calls[0].1, "ok");
            assert_eq!(calls[1], ("answer_k1".to_string(), "ok".to_string()));
            assert_eq!(
                result.metrics["findings"],
                Value::str("probe: tool-free answer")
            );
        }
    }

    #[test]
    fn a_recorded_react_episode_replays_byte_for_byte() {
        let domain = Domain::Grid;
        let program = program(domain);
        let task = &domain.tasks()[3].id;
        let dir = std::env::temp_dir().join(format!("harness-mci-react-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let store = DirStore::new(&dir);
        let (config, options) = config();
        store
            .prepare_for_recording(&StoreManifest {
                format: STORE_FORMAT,
                provider: ProviderKind::Sim,
                model: "probe".into(),
                decoding: options.decoding.clone(),
            })
            .unwrap();
        let store: Arc<dyn CallStore> = Arc::new(store);
        let recorder = LlmClient::new(
            config.clone(),
            Arc::new(SimTransport::new(persona(false))),
            options.clone(),
            CallMode::Record(Arc::clone(&store)),
        );
        let recorded = play(&program, domain, 4, task, recorder);
        // Replay through an HTTP client pointed nowhere: every answer comes from the store.
        let nowhere = ProviderConfig {
            base_url: "http://127.0.0.1:9".into(),
            ..config
        };
        let replayer = LlmClient::http(nowhere, options, CallMode::Replay(store));
        let replayed = play(&program, domain, 4, task, replayer);
        assert_eq!(
            to_json_lines(&recorded.events),
            to_json_lines(&replayed.events)
        );
        assert_eq!(summary(&replayed).0.len(), 4);
        let _ = std::fs::remove_dir_all(dir);
    }
}
