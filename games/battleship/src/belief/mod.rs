//! The belief interface over weighted board samples, and its implementations.
//!
//! # Backends
//!
//! Every backend implements [`Belief`]: observe a shot, observe an answer, and expose weighted
//! samples, from which the provided methods compute hit probabilities, P(yes) of a region, the
//! reweighting for a hypothetical answer, region masses and the ESS. A game picks one by
//! constructing it:
//!
//! - [`Mcmc`] (the default): `Mcmc::new(fleet, game_seed, McmcConfig::default())`, or
//!   [`Mcmc::paper`]. A correct Metropolis–Hastings sampler of the posterior defined in
//!   [`Evidence`] (flat prior over placements with the full `9 − len` start range, hard shot
//!   constraints, untempered 0.9/0.1 answer likelihood): single-ship, joint two-ship (which hands
//!   hits between ships, and trades lengths in an unlabelled fleet) and swap moves, four chains
//!   started from exact prior draws with seeds derived from the game seed. Use it for play.
//! - [`Smc`]: `Smc::new(fleet, game_seed, SmcConfig::default())`, or [`Smc::paper`]. Weighted
//!   particles drawn exactly from the prior, systematic resampling when the ESS falls below N/2,
//!   then rejuvenation with the `mcmc` kernel. Its weights are genuinely unequal, so its ESS is
//!   informative; it is also cheaper per observation when no resampling is needed.
//! - [`McmcCompat`]: `McmcCompat::new(game_seed, 500)`. The anchor's sampler draw for draw, paper
//!   fleet only, to reproduce the paper's numbers. Its defects (tempered 0.82/0.18 likelihood,
//!   frozen hit ownership, one autocorrelated chain) are kept.
//! - [`ExactPosterior`]: not a [`Belief`] but the reference: it enumerates every consistent board
//!   and returns exact marginals. Its cost is the number of consistent boards (tens of thousands
//!   mid-game, microseconds to milliseconds), so it is exact for tests and late-game analysis but
//!   not for an empty board.
//!
//! The fleet is a parameter: [`Fleet::paper`] for the paper protocol, and for the grand protocol
//! [`Fleet::unlabelled`] with the tracker's lengths (the colour-to-length assignment is then
//! inferred). Grand shot outcomes carry the hit colour and sinkings, which `mcmc`, `smc` and the
//! exact posterior treat as hard constraints: a hit of colour C is covered by ship C only, a sunk
//! ship is exactly its hits, and a hit ship not reported sunk has a cell not yet hit.
//!
//! # Measured accuracy
//!
//! Against [`ExactPosterior`] on the five scripted mid-game situations of
//! `tests/belief_accuracy.rs` (three paper boards, two of them with ambiguous hit ownership; two
//! grand boards with colours, a sinking and unlabelled fleets), as the maximum absolute error over
//! the unrevealed cells' hit probabilities and a few P(yes) regions, over game seeds 1..=10:
//!
//! | backend | N | mean error per situation | worst |
//! |---|---|---|---|
//! | `mcmc` | 500 | 0.038–0.072 | 0.122 |
//! | `mcmc` | 4,000 | 0.017–0.030 | 0.043 |
//! | `smc` | 500 | 0.047–0.067 | 0.088 |
//! | `smc` | 4,000 | 0.014–0.024 | 0.034 |
//! | `mcmc-compat` | 500 | 0.31–0.60 (paper situations) | best run 0.12 |
//!
//! The compat error is bias, not noise: it does not shrink with N (mean 0.33–0.62 at N = 2,000),
//! and `mcmc` without its pair move is as wrong (0.75 on the 2×2 block of hits).
//!
//! Cost at N = 500 on a mid-game (`benches/kernels.rs`, a loaded 2-core machine): an `mcmc`
//! refresh (6,000 steps) takes about 1.0 ms against 0.38 ms for a `mcmc-compat` refresh (3,500
//! steps); an `smc` update takes about 8 µs when it only reweights and 0.9 ms when it resamples
//! and rejuvenates.

mod evidence;
mod exact;
mod mcmc;
mod mcmc_compat;
mod smc;

pub use evidence::{Evidence, Fleet, FleetError, reweight_untempered, untempered_likelihood};
pub use exact::{ExactError, ExactPosterior};
pub use mcmc::{Mcmc, McmcConfig};
pub use mcmc_compat::McmcCompat;
pub use smc::{Smc, SmcConfig};

use crate::board::NUM_SHIPS;
use crate::game::ShotOutcome;
use crate::kernels;

/// Weighted board samples in struct-of-arrays form: per sample the four ship masks (colour
/// order), their union, and a weight. Weights sum to 1 (an empty set means no consistent board).
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
