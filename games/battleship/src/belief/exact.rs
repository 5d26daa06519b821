//! The exact posterior by enumeration: every board consistent with the shots, weighted by the
//! untempered answer likelihood. It is the reference the sampling backends are tested against,
//! and it is affordable whenever the shots constrain the fleet enough (mid-game, or a colour-
//! revealing protocol): the cost is the number of consistent boards.

use std::fmt;

use crate::belief::evidence::Evidence;
use crate::board::NUM_SHIPS;

/// Why the enumeration produced no posterior.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ExactError {
    /// More than `limit` search nodes would be needed.
    TooLarge {
        /// The node budget that was exceeded.
        limit: u64,
    },
    /// No board agrees with the shots.
    Inconsistent,
}

impl fmt::Display for ExactError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::TooLarge { limit } => {
                write!(f, "exact enumeration needs more than {limit} search nodes")
            }
            Self::Inconsistent => f.write_str("no board agrees with the shots"),
        }
    }
}

impl std::error::Error for ExactError {}

/// Exact marginals of the posterior: per-cell ship probabilities and noise-free P(yes) for the
/// regions asked for at construction.
#[derive(Clone, Debug, PartialEq)]
pub struct ExactPosterior {
    boards: u64,
    cells: [f64; 64],
    regions: Vec<(u64, f64)>,
}

impl ExactPosterior {
    /// Enumerates every consistent board of `evidence`, visiting at most `limit` search nodes,
    /// and computes the marginals, including P(yes) for each of `regions`.
    pub fn compute(evidence: &Evidence, regions: &[u64], limit: u64) -> Result<Self, ExactError> {
        let cands = evidence.candidates();
        let shift = evidence.max_log_likelihood();
        let mut acc = Accumulator {
            ev: evidence,
            shift,
            regions: regions.to_vec(),
            budget: limit,
            boards: 0,
            total: 0.0,
            cells: [0.0; 64],
            region_mass: vec![0.0; regions.len()],
        };
        for lens in evidence.fleet().assignments() {
            // Enumerating the most constrained ship first prunes the most.
            let mut order: [usize; NUM_SHIPS] = [0, 1, 2, 3];
            order.sort_by_key(|&s| cands.of(s, lens[s]).len());
            let lists: Vec<&[u64]> = order.iter().map(|&s| cands.of(s, lens[s])).collect();
            let sizes: Vec<usize> = order.iter().map(|&s| lens[s]).collect();
            if !acc.descend(&lists, &sizes, 0, 0) {
                return Err(ExactError::TooLarge { limit });
            }
        }
        if acc.total <= 0.0 {
            return Err(ExactError::Inconsistent);
        }
        let total = acc.total;
        Ok(Self {
            boards: acc.boards,
            cells: acc.cells.map(|w| w / total),
            regions: regions
                .iter()
                .zip(&acc.region_mass)
                .map(|(&r, &m)| (r, m / total))
                .collect(),
        })
    }

    /// Number of consistent boards (labelled: colour-swapped boards count separately).
    pub fn boards(&self) -> u64 {
        self.boards
    }

    /// Ship probability of every cell not in `revealed` (0 on revealed cells), as
    /// [`crate::Belief::hit_probabilities`] reports it.
    pub fn hit_probabilities(&self, revealed: u64) -> [f64; 64] {
        let mut p = self.cells;
        for (i, x) in p.iter_mut().enumerate() {
            if revealed >> i & 1 == 1 {
                *x = 0.0;
            }
        }
        p
    }

    /// Noise-free probability that `region` holds a ship cell, for a region passed to
    /// [`ExactPosterior::compute`].
    pub fn p_yes(&self, region: u64) -> Option<f64> {
        self.regions
            .iter()
            .find(|(r, _)| *r == region)
            .map(|&(_, p)| p)
    }
}

/// Running sums of the enumeration.
struct Accumulator<'a> {
    ev: &'a Evidence,
    shift: f64,
    regions: Vec<u64>,
    budget: u64,
    boards: u64,
    total: f64,
    cells: [f64; 64],
    region_mass: Vec<f64>,
}

impl Accumulator<'_> {
    /// Places ship `depth` of the ordered lists on top of `union`; false once the budget is
    /// spent.
    fn descend(&mut self, lists: &[&[u64]], sizes: &[usize], depth: usize, union: u64) -> bool {
        let hits = self.ev.hits();
        if depth == lists.len() {
            if union & hits == hits {
                self.record(union);
            }
            return true;
        }
        // The remaining ships cannot cover more uncovered hits than they have cells.
        let remaining: usize = sizes[depth..].iter().sum();
        if (hits & !union).count_ones() as usize > remaining {
            return true;
        }
        let last = depth + 1 == lists.len();
        let need = hits & !union;
        for &p in lists[depth] {
            if self.budget == 0 {
                return false;
            }
            self.budget -= 1;
            if p & union != 0 {
                continue;
            }
            if last {
                if p & need == need {
                    self.record(union | p);
                }
            } else if !self.descend(lists, sizes, depth + 1, union | p) {
                return false;
            }
        }
        true
    }

    fn record(&mut self, union: u64) {
        let w = (self.ev.log_likelihood(union) - self.shift).exp();
        self.boards += 1;
        self.total += w;
        let mut m = union;
        while m != 0 {
            self.cells[m.trailing_zeros() as usize] += w;
            m &= m - 1;
        }
        for (r, mass) in self.regions.iter().zip(self.region_mass.iter_mut()) {
            if union & r != 0 {
                *mass += w;
            }
        }
    }
}
