//! Whole games with the correct backends in both protocols: after every observation the true
//! board must be consistent with what the belief conditions on (so no constraint it derives is
//! wrong), every sample with positive weight must be consistent too, and the weights must sum to
//! 1.

use harness_battleship::belief::{Belief, Evidence, Fleet, Mcmc, McmcConfig, Smc, SmcConfig};
use harness_battleship::game::{Game, Protocol, Spotter};
use harness_battleship::grand::grand_board;
use harness_battleship::kernels::best_cell;
use harness_battleship::paper::{game_seed, paper_board};
use harness_battleship::questions::catalogue;

/// Plays greedily, with a question every fourth turn while they last, and checks the invariants
/// after every observation. Returns true when the game was won.
fn play<B: Belief>(mut game: Game, belief: &mut B, evidence: fn(&B) -> &Evidence) -> bool {
    let questions = catalogue();
    let truth = game.board().ship_masks();
    let mut turn = 0;
    while !game.is_over() {
        turn += 1;
        if turn % 4 == 0 && game.questions_remaining() > 0 {
            let q = &questions[(turn * 7) % questions.len()];
            let answer = game.ask(q).expect("question");
            belief.observe_answer(q.region, answer, game.model_epsilon());
        } else {
            let probs = belief.hit_probabilities(game.revealed());
            let (cell, _) = best_cell(&probs, game.revealed()).expect("an unrevealed cell");
            let outcome = game.shoot(cell).expect("shot");
            belief.observe_shot(&outcome);
        }
        let ev = evidence(belief);
        assert!(
            ev.is_consistent(&truth),
            "the true board contradicts the evidence"
        );
        let samples = belief.samples();
        assert!(!samples.is_empty());
        // SMC keeps the particles a shot contradicted, with weight 0, until it resamples.
        assert!(
            samples
                .ships
                .iter()
                .zip(&samples.weights)
                .all(|(ships, &w)| w == 0.0 || ev.is_consistent(ships))
        );
        let total: f64 = samples.weights.iter().sum();
        assert!((total - 1.0).abs() < 1e-9);
        let probs = belief.hit_probabilities(game.revealed());
        assert!(
            probs
                .iter()
                .enumerate()
                .all(|(c, &p)| game.revealed() >> c & 1 == 0 || p == 0.0)
        );
    }
    game.is_won()
}

fn mcmc(fleet: Fleet, seed: i64) -> Mcmc {
    let config = McmcConfig {
        samples: 200,
        ..McmcConfig::default()
    };
    Mcmc::new(fleet, seed, config)
}

fn smc(fleet: Fleet, seed: i64) -> Smc {
    let config = SmcConfig {
        particles: 200,
        ..SmcConfig::default()
    };
    Smc::new(fleet, seed, config)
}

#[test]
fn paper_games_keep_the_truth_consistent() {
    let mut wins = 0;
    for board_index in [0, 5, 11] {
        let board = paper_board(board_index).expect("board");
        let seed = game_seed("B01", board_index);
        let game = Game::new(board, Protocol::Paper, Spotter::paper(seed));
        wins += usize::from(play(
            game.clone(),
            &mut mcmc(Fleet::paper(), seed),
            Mcmc::evidence,
        ));
        wins += usize::from(play(game, &mut smc(Fleet::paper(), seed), Smc::evidence));
    }
    // Greedy play on a correct posterior wins most paper games within 40 shots.
    assert!(wins >= 3, "{wins} of 6 won");
}

#[test]
fn grand_games_use_colours_and_sinkings() {
    for board_index in [0, 1, 9, 15] {
        let board = grand_board(board_index).expect("index").expect("parses");
        let game = Game::new(board, Protocol::Grand, Spotter::truthful());
        let fleet = Fleet::from_tracker(&game.tracker()).expect("fleet");
        let seed = 42 + board_index as i64;
        // Revealed colours make every grand game winnable quickly; the checks are the point.
        assert!(play(game.clone(), &mut mcmc(fleet, seed), Mcmc::evidence));
        assert!(play(game, &mut smc(fleet, seed), Smc::evidence));
    }
}
