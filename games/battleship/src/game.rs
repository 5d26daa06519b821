//! Game state and rules: shots, questions, budgets, turn counter, win detection and metrics.

use std::fmt;

use crate::board::{Board, Color, NUM_SHIPS};
use crate::cell::Cell;
use crate::grand::{TrackerEntry, tracker};
use crate::prng::Prng;
use crate::questions::{Family, Question};

/// Shot budget per game.
pub const MAX_SHOTS: u32 = 40;
/// Question budget per game.
pub const MAX_QUESTIONS: u32 = 15;
/// The spotter's flip probability in the paper protocol.
pub const PAPER_EPSILON: f64 = 0.1;
/// Offset between a game seed and its spotter seed.
pub const SPOTTER_SEED_OFFSET: i64 = 1_000_003;

/// Which rules variant a game follows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Protocol {
    /// The anchor's protocol: hit/miss feedback only, noisy answers.
    Paper,
    /// Grand et al.'s protocol: a hit reveals the ship's colour, and a tracker lists lengths and
    /// sunk ships.
    Grand,
}

/// Answers questions about the true board, flipping each answer with probability `epsilon`.
#[derive(Clone, Debug)]
pub struct Spotter {
    rng: Prng,
    epsilon: f64,
}

impl Spotter {
    /// The paper spotter: ε = 0.1, stream PRNG(gameSeed + 1,000,003), one draw per question.
    pub fn paper(game_seed: i64) -> Self {
        Self::noisy(game_seed + SPOTTER_SEED_OFFSET, PAPER_EPSILON)
    }

    /// A spotter with its own stream seed and flip probability. With `epsilon <= 0` it always
    /// tells the truth and never draws.
    pub fn noisy(stream_seed: i64, epsilon: f64) -> Self {
        Self {
            rng: Prng::new(stream_seed),
            epsilon,
        }
    }

    /// A truthful spotter (the grand protocol's real answers are not flipped).
    pub fn truthful() -> Self {
        Self::noisy(1, 0.0)
    }

    /// The flip probability.
    pub fn epsilon(&self) -> f64 {
        self.epsilon
    }

    /// Reports the answer to `truth`: flipped when a draw falls below ε, else the truth.
    pub fn answer(&mut self, truth: bool) -> bool {
        if self.epsilon > 0.0 && self.rng.next_f64() < self.epsilon {
            !truth
        } else {
            truth
        }
    }
}

/// What a shot revealed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ShotOutcome {
    /// The cell shot.
    pub cell: Cell,
    /// True on a ship cell.
    pub hit: bool,
    /// The hit ship's colour; only the grand protocol reveals it.
    pub color: Option<Color>,
    /// The ship this shot sank; only the grand protocol reveals it.
    pub sunk: Option<Color>,
}

/// A question as asked, with the spotter's (possibly flipped) answer.
#[derive(Clone, Debug, PartialEq)]
pub struct AskedQuestion {
    /// Question id (the dedup key).
    pub id: String,
    /// Its family.
    pub family: Family,
    /// Its region.
    pub region: u64,
    /// The reported answer.
    pub answer: bool,
    /// The turn number after the question was counted (the reference's `turnAsked`).
    pub turn_asked: u32,
}

/// Why an action was refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum GameError {
    /// The game is won or the shots are used up.
    GameOver,
    /// The cell was already shot.
    AlreadyRevealed(Cell),
    /// All 15 questions are used.
    NoQuestionsLeft,
}

impl fmt::Display for GameError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::GameOver => f.write_str("the game is over"),
            Self::AlreadyRevealed(c) => write!(f, "{c} was already shot"),
            Self::NoQuestionsLeft => f.write_str("no questions left"),
        }
    }
}

impl std::error::Error for GameError {}

/// One game: the true board, the spotter and everything revealed so far.
#[derive(Clone, Debug)]
pub struct Game {
    board: Board,
    protocol: Protocol,
    spotter: Spotter,
    model_epsilon: f64,
    hits: u64,
    misses: u64,
    turn: u32,
    questions: Vec<AskedQuestion>,
}

impl Game {
    /// A fresh game on `board`. The captain models answer flips with ε = 0.1 in both protocols
    /// (see [`Game::with_model_epsilon`]), whatever the spotter really does.
    pub fn new(board: Board, protocol: Protocol, spotter: Spotter) -> Self {
        Self {
            board,
            protocol,
            spotter,
            model_epsilon: PAPER_EPSILON,
            hits: 0,
            misses: 0,
            turn: 0,
            questions: Vec::new(),
        }
    }

    /// The true board (for referees and tests; a captain must not read it).
    pub fn board(&self) -> &Board {
        &self.board
    }

    /// The rules variant.
    pub fn protocol(&self) -> Protocol {
        self.protocol
    }

    /// Hit cells.
    pub fn hits(&self) -> u64 {
        self.hits
    }

    /// Missed cells.
    pub fn misses(&self) -> u64 {
        self.misses
    }

    /// Revealed cells (hits and misses).
    pub fn revealed(&self) -> u64 {
        self.hits | self.misses
    }

    /// Cells not shot yet.
    pub fn unknown(&self) -> u64 {
        !self.revealed()
    }

    /// Number of hits.
    pub fn hit_count(&self) -> u32 {
        self.hits.count_ones()
    }

    /// Shots fired.
    pub fn shots_fired(&self) -> u32 {
        self.revealed().count_ones()
    }

    /// Shots left out of 40.
    pub fn shots_remaining(&self) -> u32 {
        MAX_SHOTS.saturating_sub(self.shots_fired())
    }

    /// Questions asked.
    pub fn questions_asked(&self) -> u32 {
        self.questions.len() as u32
    }

    /// Questions left out of 15.
    pub fn questions_remaining(&self) -> u32 {
        MAX_QUESTIONS.saturating_sub(self.questions_asked())
    }

    /// Actions taken so far (shots plus questions).
    pub fn turn(&self) -> u32 {
        self.turn
    }

    /// The questions asked so far, in order.
    pub fn asked(&self) -> &[AskedQuestion] {
        &self.questions
    }

    /// Number of ship cells on the true board (14 in the paper protocol).
    pub fn total_ship_cells(&self) -> u32 {
        self.board.ship_cells()
    }

    /// True when every ship cell has been hit.
    pub fn is_won(&self) -> bool {
        self.board.union() & !self.hits == 0
    }

    /// True when the game is won or the shots are used up.
    pub fn is_over(&self) -> bool {
        self.is_won() || self.shots_remaining() == 0
    }

    /// Which ships are fully hit, in colour order.
    pub fn sunk(&self) -> [bool; NUM_SHIPS] {
        self.board.ships().map(|s| s.mask() & self.hits == s.mask())
    }

    /// Grand's ship tracker (lengths and sunk colours). Paper captains must not read it.
    pub fn tracker(&self) -> Vec<TrackerEntry> {
        tracker(&self.board, self.hits)
    }

    /// Fires at `cell`. Counts a turn and a shot and reveals hit or miss (and, in the grand
    /// protocol, the colour and a sinking).
    pub fn shoot(&mut self, cell: Cell) -> Result<ShotOutcome, GameError> {
        if self.is_over() {
            return Err(GameError::GameOver);
        }
        if self.revealed() & cell.bit() != 0 {
            return Err(GameError::AlreadyRevealed(cell));
        }
        self.turn += 1;
        let ship = self.board.ship_at(cell);
        let hit = ship.is_some();
        if hit {
            self.hits |= cell.bit();
        } else {
            self.misses |= cell.bit();
        }
        let (color, sunk) = match (self.protocol, ship) {
            (Protocol::Grand, Some(c)) => {
                let mask = self.board.ships()[c.index()].mask();
                (Some(c), (mask & self.hits == mask).then_some(c))
            }
            _ => (None, None),
        };
        Ok(ShotOutcome {
            cell,
            hit,
            color,
            sunk,
        })
    }

    /// Asks `question`. Counts a turn and a question, and returns the spotter's answer to
    /// "is there a ship cell in the region" (hit cells included).
    pub fn ask(&mut self, question: &Question) -> Result<bool, GameError> {
        self.ask_flipped(question, None)
    }

    /// [`Game::ask`] with the spotter's flip decided by the caller when `flip` is given (a
    /// forked episode draws it from its own keyed stream); with `None` the spotter draws.
    pub fn ask_flipped(
        &mut self,
        question: &Question,
        flip: Option<bool>,
    ) -> Result<bool, GameError> {
        if self.is_over() {
            return Err(GameError::GameOver);
        }
        if self.questions_remaining() == 0 {
            return Err(GameError::NoQuestionsLeft);
        }
        self.turn += 1;
        let truth = self.board.exists_ship(question.region);
        let answer = match flip {
            Some(flip) => truth != flip,
            None => self.spotter.answer(truth),
        };
        self.questions.push(AskedQuestion {
            id: question.id.clone(),
            family: question.family,
            region: question.region,
            answer,
            turn_asked: self.turn,
        });
        Ok(answer)
    }

    /// Sets the flip probability captains and beliefs assume.
    pub fn with_model_epsilon(mut self, epsilon: f64) -> Self {
        self.model_epsilon = epsilon;
        self
    }

    /// The flip probability captains and beliefs assume (0.1 unless set): the ε passed to
    /// [`crate::Belief::observe_answer`] and to question scoring. In the grand protocol the
    /// spotter is truthful but the captain still models ε = 0.1.
    pub fn model_epsilon(&self) -> f64 {
        self.model_epsilon
    }

    /// The spotter's real flip probability.
    pub fn spotter_epsilon(&self) -> f64 {
        self.spotter.epsilon()
    }

    /// Current metrics.
    pub fn metrics(&self) -> Metrics {
        Metrics::new(
            self.hit_count(),
            self.shots_fired(),
            self.total_ship_cells(),
        )
    }
}

/// Targeting metrics of one game.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Metrics {
    /// hits / shots (0 with no shots).
    pub precision: f64,
    /// hits / ship cells.
    pub recall: f64,
    /// 2PR/(P+R) = 2·hits/(shots + ship cells); 0 when undefined.
    pub f1: f64,
}

impl Metrics {
    /// Metrics from counts, computed as the reference's MEL does (precision and recall first).
    pub fn new(hits: u32, shots: u32, ship_cells: u32) -> Self {
        let precision = if shots == 0 {
            0.0
        } else {
            f64::from(hits) / f64::from(shots)
        };
        let recall = if ship_cells == 0 {
            0.0
        } else {
            f64::from(hits) / f64::from(ship_cells)
        };
        let f1 = if precision + recall == 0.0 {
            0.0
        } else {
            2.0 * precision * recall / (precision + recall)
        };
        Self {
            precision,
            recall,
            f1,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::paper::paper_board;
    use crate::questions::catalogue;

    #[test]
    fn shots_budgets_and_win() {
        let board = paper_board(0).unwrap();
        let mut game = Game::new(board, Protocol::Paper, Spotter::paper(64964));
        let first = game.shoot("F2".parse().unwrap()).unwrap();
        assert!(first.hit && first.color.is_none());
        assert_eq!(
            game.shoot("F2".parse().unwrap()),
            Err(GameError::AlreadyRevealed("F2".parse().unwrap()))
        );
        for cell in board.cells() {
            if game.revealed() & cell.bit() == 0 {
                game.shoot(cell).unwrap();
            }
        }
        assert!(game.is_won() && game.is_over());
        assert_eq!(game.shots_fired(), 14);
        assert_eq!(game.metrics().f1, 1.0);
        assert_eq!(game.shoot("A1".parse().unwrap()), Err(GameError::GameOver));
    }

    #[test]
    fn questions_count_turns_not_shots() {
        let board = paper_board(0).unwrap();
        let mut game = Game::new(board, Protocol::Paper, Spotter::truthful());
        let row_f = &catalogue()[5];
        for k in 0..MAX_QUESTIONS {
            assert_eq!(game.ask(row_f), Ok(true));
            assert_eq!(game.asked()[k as usize].turn_asked, k + 1);
        }
        assert_eq!(game.ask(row_f), Err(GameError::NoQuestionsLeft));
        assert_eq!(game.turn(), 15);
        assert_eq!(game.shots_remaining(), 40);
    }

    #[test]
    fn losing_at_forty_shots() {
        let board = paper_board(0).unwrap();
        let mut game = Game::new(board, Protocol::Paper, Spotter::truthful());
        let water: Vec<Cell> = Cell::all()
            .filter(|c| board.union() & c.bit() == 0)
            .collect();
        for &c in water.iter().take(39) {
            game.shoot(c).unwrap();
        }
        game.shoot("F2".parse().unwrap()).unwrap();
        assert!(game.is_over() && !game.is_won());
        let m = game.metrics();
        assert!((m.f1 - 2.0 / 54.0).abs() < 1e-12);
        assert!((m.precision - 1.0 / 40.0).abs() < 1e-12);
    }

    #[test]
    fn grand_reveals_colour_and_sinking() {
        let board = crate::grand::grand_board(11).unwrap().unwrap(); // B12: red F6-F7
        let mut game = Game::new(board, Protocol::Grand, Spotter::truthful());
        let a = game.shoot("F6".parse().unwrap()).unwrap();
        assert_eq!((a.color, a.sunk), (Some(Color::Red), None));
        let b = game.shoot("F7".parse().unwrap()).unwrap();
        assert_eq!((b.color, b.sunk), (Some(Color::Red), Some(Color::Red)));
        assert_eq!(game.sunk(), [true, false, false, false]);
        let tracker = game.tracker();
        assert_eq!(
            tracker
                .iter()
                .filter(|e| e.sunk == Some(Color::Red))
                .count(),
            1
        );
        assert_eq!(tracker.iter().filter(|e| e.sunk.is_some()).count(), 1);
    }

    #[test]
    fn spotter_flips_about_ten_percent_with_one_draw_each() {
        let mut s = Spotter::paper(64964);
        let mut rng = Prng::new(64964 + SPOTTER_SEED_OFFSET);
        let mut flips = 0;
        for _ in 0..10_000 {
            let flipped = rng.next_f64() < 0.1;
            assert_eq!(s.answer(true), !flipped);
            flips += usize::from(flipped);
        }
        assert!((800..1200).contains(&flips));
    }
}
