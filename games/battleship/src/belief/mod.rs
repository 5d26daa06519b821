//! The belief interface over weighted board samples, and its implementations.

mod mcmc_compat;

pub use mcmc_compat::McmcCompat;

use crate::board::NUM_SHIPS;
use crate::game::ShotOutcome;
use crate::kernels;

/// Weighted board samples in struct-of-arrays form: per sample the four ship masks (colour
/// order), their union, and a weight. Weights sum to 1.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SampleSet {
    /// Ship masks per sample, in colour order.
    pub ships: Vec<[u64; NUM_SHIPS]>,
    /// Union of the ship masks per sample.
    pub unions: Vec<u64>,
    /// Weight per sample.
    pub weights: Vec<f64>,
}

impl SampleSet {
    /// Number of samples.
    pub fn len(&self) -> usize {
        self.unions.len()
    }

    /// True when there are no samples.
    pub fn is_empty(&self) -> bool {
        self.unions.is_empty()
    }

    /// Removes every sample, keeping the allocations.
    pub fn clear(&mut self) {
        self.ships.clear();
        self.unions.clear();
        self.weights.clear();
    }

    /// Appends one sample.
    pub fn push(&mut self, ships: [u64; NUM_SHIPS], weight: f64) {
        self.unions.push(ships.iter().fold(0, |a, &m| a | m));
        self.ships.push(ships);
        self.weights.push(weight);
    }
}

/// A posterior over full boards given shots and (noisy) answers, represented by weighted
/// samples. Every kernel the planners need is a provided method over [`Belief::samples`], so a
/// new backend (a correct MCMC, SMC) only implements the three observation/sample methods.
pub trait Belief {
    /// Conditions on a shot result. Backends that ignore colours use only `cell` and `hit`.
    fn observe_shot(&mut self, outcome: &ShotOutcome);

    /// Conditions on the answer to "is there a ship cell in `region`?" from a spotter that flips
    /// answers with probability `epsilon`.
    fn observe_answer(&mut self, region: u64, answer: bool, epsilon: f64);

    /// The current weighted samples.
    fn samples(&self) -> &SampleSet;

    /// Hit probability of every unrevealed cell (0 on revealed cells).
    fn hit_probabilities(&self, revealed: u64) -> [f64; 64] {
        kernels::hit_probabilities(self.samples(), revealed)
    }

    /// Noise-free probability that `region` holds a ship cell.
    fn p_yes(&self, region: u64) -> f64 {
        kernels::p_yes(self.samples(), region)
    }

    /// Normalized sample weights after a hypothetical answer (tempered likelihood); `None` when
    /// the reweighted mass is 0.
    fn reweighted(&self, region: u64, answer: bool, epsilon: f64) -> Option<Vec<f64>> {
        kernels::reweight(self.samples(), region, answer, epsilon)
    }

    /// Expected number of ship cells among the unrevealed cells of `region`.
    fn region_mass(&self, region: u64, revealed: u64) -> f64 {
        let p = self.hit_probabilities(revealed);
        crate::cell::cells_of(region & !revealed).fold(0.0, |a, c| a + p[c.index()])
    }

    /// Effective sample size 1/Σw².
    fn ess(&self) -> f64 {
        kernels::ess(&self.samples().weights)
    }
}
