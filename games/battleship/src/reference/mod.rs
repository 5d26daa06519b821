//! Reference policies in plain Rust (L1 `greedy`, L2 `wma`, L3 `mra`) and a game runner: test
//! oracles for the `.harness` implementations.

mod greedy;
mod mra;
mod wma;

pub use greedy::Greedy;
pub use mra::{Mra, MraConfig, PresetVersion, RevisionKind};
pub use wma::Wma;

use std::fmt;

use crate::belief::{Belief, McmcCompat};
use crate::board::Board;
use crate::cell::Cell;
use crate::game::{Game, GameError, Protocol, ShotOutcome, Spotter};
use crate::paper::{GenerateError, PAPER_BOARD_IDS, game_seed, paper_board};
use crate::questions::Question;

/// One action chosen by a policy.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Decision {
    /// Fire at a cell.
    Shoot(Cell),
    /// Ask a question.
    Ask(Question),
}

/// What the last action produced, as passed to [`Policy::after_turn`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TurnOutcome {
    /// A shot's result.
    Shot(ShotOutcome),
    /// A question's reported answer.
    Answer(bool),
}

/// A captain. Policies read only the visible part of the game (hits, misses, counters, asked
/// questions), never the true board.
pub trait Policy {
    /// Chooses the next action, or `None` if it has none (the reference would loop forever).
    fn decide(&mut self, game: &Game, belief: &dyn Belief) -> Option<Decision>;

    /// Called after the action was applied and the belief updated (the reference's
    /// `afterTurn`); reflective policies update their state here. Not called once the game is
    /// over.
    fn after_turn(&mut self, _game: &Game, _belief: &dyn Belief, _outcome: TurnOutcome) {}
}

/// One action as played, with its result.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ActionRecord {
    /// A shot and whether it hit.
    Shot {
        /// The cell.
        cell: Cell,
        /// True on a hit.
        hit: bool,
    },
    /// A question and the spotter's answer.
    Question {
        /// The question id.
        id: String,
        /// The reported (possibly flipped) answer.
        answer: bool,
    },
}

impl fmt::Display for ActionRecord {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Shot { cell, hit } => write!(f, "{cell}{}", if *hit { "!" } else { "." }),
            Self::Question { id, answer } => write!(f, "{id}?{}", if *answer { "y" } else { "n" }),
        }
    }
}

/// The outcome of one game.
#[derive(Clone, Debug, PartialEq)]
pub struct GameRecord {
    /// Board id, e.g. `B07`.
    pub board_id: String,
    /// Replicate index 0..3.
    pub seed_index: usize,
    /// The game seed.
    pub game_seed: i64,
    /// Shots fired.
    pub shots: u32,
    /// Questions asked.
    pub questions: u32,
    /// Hits.
    pub hits: u32,
    /// Targeting F1.
    pub f1: f64,
    /// True when every ship cell was hit within 40 shots.
    pub won: bool,
    /// Every action in order.
    pub actions: Vec<ActionRecord>,
}

/// Why a game could not be played.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RunError {
    /// The board index is not 0..18.
    UnknownBoard(usize),
    /// The generator failed.
    Generate(GenerateError),
    /// The policy chose an illegal action.
    Game(GameError),
    /// The policy returned no action.
    NoDecision,
}

impl fmt::Display for RunError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::UnknownBoard(i) => write!(f, "no board with index {i}"),
            Self::Generate(e) => write!(f, "{e}"),
            Self::Game(e) => write!(f, "illegal action: {e}"),
            Self::NoDecision => f.write_str("the policy returned no action"),
        }
    }
}

impl std::error::Error for RunError {}

impl From<GameError> for RunError {
    fn from(e: GameError) -> Self {
        Self::Game(e)
    }
}

impl From<GenerateError> for RunError {
    fn from(e: GenerateError) -> Self {
        Self::Generate(e)
    }
}

/// Plays one game to the end (win or 40 shots) and records it. The belief observes every
/// action except the game's final one, after which it could no longer matter.
pub fn play_game(
    mut game: Game,
    belief: &mut dyn Belief,
    policy: &mut dyn Policy,
) -> Result<Vec<ActionRecord>, RunError> {
    let epsilon = game.model_epsilon();
    let mut actions = Vec::new();
    while !game.is_over() {
        match policy.decide(&game, belief).ok_or(RunError::NoDecision)? {
            Decision::Shoot(cell) => {
                let outcome = game.shoot(cell)?;
                actions.push(ActionRecord::Shot {
                    cell,
                    hit: outcome.hit,
                });
                if !game.is_over() {
                    belief.observe_shot(&outcome);
                    policy.after_turn(&game, belief, TurnOutcome::Shot(outcome));
                }
            }
            Decision::Ask(question) => {
                let answer = game.ask(&question)?;
                actions.push(ActionRecord::Question {
                    id: question.id,
                    answer,
                });
                belief.observe_answer(question.region, answer, epsilon);
                policy.after_turn(&game, belief, TurnOutcome::Answer(answer));
            }
        }
    }
    Ok(actions)
}

/// Summarizes a finished game's actions into a record.
fn record(
    board: Board,
    board_id: &str,
    seed_index: usize,
    seed: i64,
    actions: Vec<ActionRecord>,
) -> GameRecord {
    let shots = actions
        .iter()
        .filter(|a| matches!(a, ActionRecord::Shot { .. }))
        .count() as u32;
    let hits = actions
        .iter()
        .filter(|a| matches!(a, ActionRecord::Shot { hit: true, .. }))
        .count() as u32;
    let metrics = crate::game::Metrics::new(hits, shots, board.ship_cells());
    GameRecord {
        board_id: board_id.to_string(),
        seed_index,
        game_seed: seed,
        shots,
        questions: actions.len() as u32 - shots,
        hits,
        f1: metrics.f1,
        won: hits == board.ship_cells(),
        actions,
    }
}

/// Plays paper board `board_index` (0 = B01), replicate `seed_index`, with `mcmc-compat` and
/// `particles` samples: the paper's protocol.
pub fn play_paper_game(
    board_index: usize,
    seed_index: usize,
    policy: &mut dyn Policy,
    particles: usize,
) -> Result<GameRecord, RunError> {
    let board = paper_board(board_index).ok_or(RunError::UnknownBoard(board_index))?;
    let id = PAPER_BOARD_IDS[board_index];
    let seed = game_seed(id, seed_index);
    let mut belief = McmcCompat::new(seed, particles)?;
    let game = Game::new(board, Protocol::Paper, Spotter::paper(seed));
    let actions = play_game(game, &mut belief, policy)?;
    Ok(record(board, id, seed_index, seed, actions))
}

/// Aggregate of a suite run.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SuiteSummary {
    /// Games played.
    pub games: usize,
    /// Games won.
    pub wins: usize,
    /// Mean per-game F1.
    pub mean_f1: f64,
    /// Mean questions per game.
    pub mean_questions: f64,
}

/// Summarizes game records (mean F1 summed in record order).
pub fn summarize(records: &[GameRecord]) -> SuiteSummary {
    let n = records.len();
    let denom = n.max(1) as f64;
    SuiteSummary {
        games: n,
        wins: records.iter().filter(|r| r.won).count(),
        mean_f1: records.iter().fold(0.0, |a, r| a + r.f1) / denom,
        mean_questions: records.iter().map(|r| f64::from(r.questions)).sum::<f64>() / denom,
    }
}
