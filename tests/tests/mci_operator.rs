//! The symbolic operators of `harnesses/mci/<game>/operator`: every level answers, levels below
//! K5 never simulate, and an episode replays byte for byte.

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
