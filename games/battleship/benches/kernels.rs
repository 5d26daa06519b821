//! Criterion benches of the hot kernels: one `mcmc-compat` MH step, one full refresh (N = 500)
//! and scoring all 83 questions on 500 samples.

// `criterion_group!` generates an undocumented public function.
#![allow(missing_docs)]

use criterion::{Criterion, criterion_group, criterion_main};
use std::hint::black_box;

use harness_battleship::belief::{Belief, McmcCompat};
use harness_battleship::game::{Game, Protocol, Spotter};
use harness_battleship::kernels::{Scorer, ScoringContext, best_cell};
use harness_battleship::paper::paper_board;
use harness_battleship::questions::catalogue;

/// A mid-game belief on B01 seed 0: six answered coarse questions and twelve greedy shots.
fn mid_game() -> (McmcCompat, Game) {
    let board = paper_board(0).expect("B01");
    let mut game = Game::new(board, Protocol::Paper, Spotter::paper(64964));
    let mut belief = McmcCompat::new(64964, 500).expect("belief");
    for q in [0, 7, 15, 8, 3, 12] {
        let question = &catalogue()[q];
        let answer = game.ask(question).expect("question");
        belief.observe_answer(question.region, answer, 0.1);
    }
    for _ in 0..12 {
        let probs = belief.hit_probabilities(game.revealed());
        let (cell, _) = best_cell(&probs, game.revealed()).expect("cell");
        let outcome = game.shoot(cell).expect("shot");
        belief.observe_shot(&outcome);
    }
    (belief, game)
}

fn benches(c: &mut Criterion) {
    let (belief, game) = mid_game();
    let mut stepper = belief.clone();
    c.bench_function("mcmc_compat_mh_step", |b| b.iter(|| stepper.step()));
    let mut refresher = belief.clone();
    c.bench_function("mcmc_compat_refresh_500", |b| {
        b.iter(|| refresher.refresh())
    });
    c.bench_function("score_83_questions_500", |b| {
        b.iter(|| {
            let ctx = ScoringContext::new(belief.samples(), game.hits(), game.misses(), 14, 0.1);
            let total: f64 = catalogue()
                .iter()
                .map(|q| ctx.score(q, Scorer::Salvage).adjusted)
                .sum();
            black_box(total)
        })
    });
}

criterion_group!(kernel_benches, benches);
criterion_main!(kernel_benches);
