//! The seed paper's Battleship ablation, reproduced through the language.
//!
//! The bundled harness (`harnesses/battleship`) runs under its `compat` profile with the
//! reference's `mcmc-compat` belief and 500 samples on the 18 paper boards × 3 seeds. The paper
//! and the reference's own replay report: L1 27/54 wins with mean F1 0.5219; L1–L2 40/54 wins,
//! F1 0.5388 and 11.89 questions per game; L1–L3 31/54 wins, F1 0.5521, 8.78 questions and 1.15
//! revisions per game. Every decision rule, gate and preset of those layers is `.harness` code, so
//! this test pins the checker, the interpreter, `sim.next` and the game bindings together.

use std::sync::Arc;

use harness_battleship::Protocol;
use harness_battleship::play::Battleship;
use harness_compiler::Workspace;
use harness_compiler::ir::Program;
use harness_runtime::{
    EventKind, GameKind, Limits, Machine, RngStreams, Switches, Value, run_episode,
};

/// One stack's totals over the suite.
#[derive(Debug, Default)]
struct Totals {
    games: u32,
    wins: u32,
    f1: f64,
    questions: i64,
    revisions: u32,
}

fn program() -> Arc<Program> {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../harnesses/battleship");
    let mut workspace = Workspace::new(harness_tests::signatures());
    for name in ["belief", "planning", "reflection"] {
        let path = format!("{root}/{name}.harness");
        let text = std::fs::read_to_string(&path).expect("the bundled harness is readable");
        workspace.set_file(&path, &text);
    }
    let errors: Vec<_> = workspace
        .diagnostics()
        .into_iter()
        .filter(|d| d.is_error())
        .collect();
    assert!(errors.is_empty(), "{errors:?}");
    workspace
        .program("battleship.reflection")
        .expect("the harness lowers")
}

fn run_stack(program: &Arc<Program>, layers: &[&str]) -> Totals {
    let kind = Battleship::new(Protocol::Paper);
    let mut natives = harness_stdlib::prelude::natives();
    natives.extend(&kind.natives());
    let switches = Switches {
        layers: Some(layers.iter().map(|layer| layer.to_string()).collect()),
        without: Vec::new(),
        set: vec![
            ("compat".into(), "true".into()),
            ("belief".into(), "mcmc-compat".into()),
            ("particles".into(), "500".into()),
        ],
    };
    let machine = Machine::new(program.clone(), natives, &switches, Limits::default())
        .expect("the switches are valid");
    let games: Vec<(String, u64)> = kind
        .instances()
        .into_iter()
        .flat_map(|board| (0..3).map(move |seed| (board.clone(), seed)))
        .collect();
    // Two threads, each a fixed half of the games: results do not depend on the split.
    let halves: Vec<Totals> = std::thread::scope(|scope| {
        let handles: Vec<_> = games
            .chunks(games.len().div_ceil(2))
            .map(|chunk| {
                let (kind, machine) = (&kind, &machine);
                scope.spawn(move || {
                    let mut totals = Totals::default();
                    for (board, seed) in chunk {
                        let mut game = kind.start(board, &RngStreams::new(*seed)).expect("a board");
                        let result = run_episode(machine, game.as_mut());
                        assert!(
                            result.error.is_none(),
                            "{board} seed {seed}: {:?}",
                            result.error
                        );
                        totals.games += 1;
                        totals.wins +=
                            u32::from(result.metrics.get("won") == Some(&Value::Bool(true)));
                        totals.f1 += result
                            .metrics
                            .get("f1")
                            .and_then(Value::as_f64)
                            .unwrap_or(0.0);
                        totals.questions += result
                            .metrics
                            .get("questions")
                            .and_then(Value::as_int)
                            .unwrap_or(0);
                        let mut turns: Vec<u32> = result
                            .events
                            .iter()
                            .filter(|event| matches!(event.kind, EventKind::Revision { .. }))
                            .map(|event| event.turn)
                            .collect();
                        turns.dedup();
                        totals.revisions += turns.len() as u32;
                    }
                    totals
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|handle| handle.join().expect("no panic"))
            .collect()
    });
    halves.into_iter().fold(Totals::default(), |a, b| Totals {
        games: a.games + b.games,
        wins: a.wins + b.wins,
        f1: a.f1 + b.f1,
        questions: a.questions + b.questions,
        revisions: a.revisions + b.revisions,
    })
}

fn mean_f1(totals: &Totals) -> String {
    format!("{:.4}", totals.f1 / f64::from(totals.games))
}

#[test]
fn belief_alone_reproduces_l1() {
    let totals = run_stack(&program(), &["belief"]);
    assert_eq!((totals.games, totals.wins), (54, 27));
    assert_eq!(mean_f1(&totals), "0.5219");
    assert_eq!(totals.questions, 0);
}

#[test]
fn planning_reproduces_l2() {
    let totals = run_stack(&program(), &["belief", "planning"]);
    assert_eq!((totals.games, totals.wins), (54, 40));
    assert_eq!(mean_f1(&totals), "0.5388");
    // 11.89 questions per game in the reference's replay.
    assert_eq!(totals.questions, 642);
}

#[test]
fn reflection_reproduces_l3() {
    let totals = run_stack(&program(), &["belief", "planning", "reflection"]);
    assert_eq!((totals.games, totals.wins), (54, 31));
    assert_eq!(mean_f1(&totals), "0.5521");
    // 8.78 questions and 1.15 revisions (21 coarse_roi_collapse + 41 reopen_local_probe) per game.
    assert_eq!(totals.questions, 474);
    assert_eq!(totals.revisions, 62);
}
