//! Criterion benches of the hot kernels: one `mcmc-compat` MH step, one full refresh (N = 500),
//! one `mcmc` refresh and `smc` updates (N = 500) on the same mid-game, and scoring all 83
//! questions on 500 samples.

// `criterion_group!` generates an undocumented public function.
#![allow(missing_docs)]

use criterion::{BatchSize, Criterion, criterion_group, criterion_main};
use std::hint::black_box;

use harness_battleship::belief::{Belief, Mcmc, McmcCompat, Smc};
use harness_battleship::game::{Game, Protocol, ShotOutcome, Spotter};
use harness_battleship::kernels::{Scorer, ScoringContext, best_cell};
use harness_battleship::paper::paper_board;
use harness_battleship::questions::catalogue;

/// A mid-game belief on B01 seed 0: six answered coarse questions and twelve greedy shots.
fn mid_game() -> (McmcCompat, Game) {
    let belief = McmcCompat::new(64964, 500).expect("belief");
    play_mid_game(belief)
}

/// Plays the mid-game of [`mid_game`] with any belief (the shots follow that belief).
fn play_mid_game<B: Belief>(mut belief: B) -> (B, Game) {
    let board = paper_board(0).expect("B01");
    let mut game = Game::new(board, Protocol::Paper, Spotter::paper(64964));
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
    let (mcmc, _) = play_mid_game(Mcmc::paper(64964));
    let mut refresher = mcmc.clone();
    c.bench_function("mcmc_refresh_500", |b| b.iter(|| refresher.refresh()));
    let (smc, smc_game) = play_mid_game(Smc::paper(64964));
    // A miss on the most likely unknown cell (p ≈ 0.95) zeroes almost every particle, so this
    // update resamples and rejuvenates: the expensive path.
    let probs = smc.hit_probabilities(smc_game.revealed());
    let (target, _) = best_cell(&probs, smc_game.revealed()).expect("cell");
    let miss = ShotOutcome {
        cell: target,
        hit: false,
        color: None,
        sunk: None,
    };
    c.bench_function("smc_shot_update_resample_500", |b| {
        b.iter_batched(
            || smc.clone(),
            |mut s| {
                s.observe_shot(&miss);
                s
            },
            BatchSize::SmallInput,
        )
    });
    // "Yes" on row H (P(yes) ≈ 0.82) keeps the ESS above N/2: a reweighting only.
    c.bench_function("smc_answer_update_500", |b| {
        b.iter_batched(
            || smc.clone(),
            |mut s| {
                s.observe_answer(0xFF << 56, true, 0.1);
                s
            },
            BatchSize::SmallInput,
        )
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
