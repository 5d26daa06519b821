//! L1 `greedy`: shoot the unrevealed cell with the highest hit probability (§6).

use crate::belief::Belief;
use crate::game::Game;
use crate::kernels::best_cell;
use crate::reference::{Decision, Policy};

/// The belief-only layer: argmax of the hit probability over unrevealed cells, lowest index on
/// ties; never asks.
#[derive(Clone, Copy, Debug, Default)]
pub struct Greedy;

impl Policy for Greedy {
    fn decide(&mut self, game: &Game, belief: &dyn Belief) -> Option<Decision> {
        let revealed = game.revealed();
        let probs = belief.hit_probabilities(revealed);
        best_cell(&probs, revealed).map(|(cell, _)| Decision::Shoot(cell))
    }
}
