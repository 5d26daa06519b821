//! L2 `wma`: the world-model agent's planning rule (§5).

use crate::belief::Belief;
use crate::cell::{Cell, cells_of};
use crate::game::{AskedQuestion, Game};
use crate::kernels::{Scorer, ScoringContext, frontier, shot_value};
use crate::questions::{Family, Group, catalogue};
use crate::reference::{Decision, Policy};

/// The question budget bucket of an asked question (§4.4).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Bucket {
    /// A coarse-family question asked before the late turn.
    Coarse,
    /// A local-family question asked before the late turn.
    Local,
    /// Any question asked at or after the late turn.
    Late,
}

/// `classifyQuestionBudgetBucket`: late if `turn_asked >= late_game_turn`, else by family group.
pub fn bucket(family: Family, turn_asked: u32, late_game_turn: u32) -> Bucket {
    if turn_asked >= late_game_turn {
        Bucket::Late
    } else if family.group() == Group::Coarse {
        Bucket::Coarse
    } else {
        Bucket::Local
    }
}

/// The world-model agent: frontier-first shooting, 6 coarse questions before the first hit, and
/// 6 late questions (coarse or 2×2 block) from turn 18 when the frontier is empty; a question is
/// asked when its adjusted score beats the best shot's value.
#[derive(Clone, Copy, Debug)]
pub struct Wma {
    /// Coarse questions allowed before the first hit (6).
    pub coarse_budget: usize,
    /// Late questions allowed (6).
    pub late_budget: usize,
    /// First turn of the late phase (18).
    pub late_game_turn: u32,
}

impl Default for Wma {
    fn default() -> Self {
        Self {
            coarse_budget: 6,
            late_budget: 6,
            late_game_turn: 18,
        }
    }
}

impl Wma {
    fn count(&self, asked: &[AskedQuestion], which: Bucket) -> usize {
        asked
            .iter()
            .filter(|q| bucket(q.family, q.turn_asked, self.late_game_turn) == which)
            .count()
    }
}

impl Policy for Wma {
    fn decide(&mut self, game: &Game, belief: &dyn Belief) -> Option<Decision> {
        let (hits, misses) = (game.hits(), game.misses());
        let revealed = hits | misses;
        let (h, total) = (game.hit_count(), game.total_ship_cells());
        let probs = belief.hit_probabilities(revealed);
        // The reference sorts shots by value with a stable sort; the first maximum in cell order
        // is the same choice.
        let best_in = |mask: u64| {
            let mut best: Option<(Cell, f64)> = None;
            for cell in cells_of(mask & !revealed) {
                let v = shot_value(probs[cell.index()], h, total);
                if best.is_none_or(|(_, b)| v > b) {
                    best = Some((cell, v));
                }
            }
            best
        };
        let (best_cell, best_value) = best_in(u64::MAX)?;
        let front = frontier(hits, misses);
        if front != 0 {
            return best_in(front).map(|(c, _)| Decision::Shoot(c));
        }
        let asked = game.asked();
        let phase = if game.questions_remaining() == 0 {
            None
        } else if h == 0 {
            (self.count(asked, Bucket::Coarse) < self.coarse_budget).then_some(Bucket::Coarse)
        } else if game.turn() >= self.late_game_turn {
            (self.count(asked, Bucket::Late) < self.late_budget).then_some(Bucket::Late)
        } else {
            None
        };
        if let Some(phase) = phase {
            // Before the first hit: every coarse template, coarse scorer. Late: coarse templates
            // and 2x2 blocks, salvage scorer.
            let (scorer, in_family): (Scorer, fn(Family) -> bool) = if phase == Bucket::Coarse {
                (Scorer::Coarse, |f| f.group() == Group::Coarse)
            } else {
                (Scorer::Salvage, |f| {
                    f.group() == Group::Coarse || f == Family::Block2x2
                })
            };
            let ctx =
                ScoringContext::new(belief.samples(), hits, misses, total, game.model_epsilon());
            let mut best: Option<(usize, f64)> = None;
            for (i, q) in catalogue().iter().enumerate() {
                if !in_family(q.family) || asked.iter().any(|a| a.id == q.id) {
                    continue;
                }
                let score = ctx.score(q, scorer).adjusted;
                if best.is_none_or(|(_, b)| score > b) {
                    best = Some((i, score));
                }
            }
            if let Some((i, score)) = best
                && score > best_value
            {
                return Some(Decision::Ask(catalogue()[i].clone()));
            }
        }
        Some(Decision::Shoot(best_cell))
    }
}
