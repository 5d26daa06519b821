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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::belief::evidence::Fleet;
    use crate::board::placement_masks;
    use crate::cell::Cell;
    use crate::game::ShotOutcome;

    /// Brute force over every labelled board with plain loops, for a situation with so many
    /// misses that the loops are short.
    #[test]
    fn matches_brute_force() {
        let fleet = Fleet::paper();
        let mut ev = Evidence::new(fleet);
        // Water everywhere except rows C–E, columns 2–7; hits on D3 and D4.
        let open: u64 = (0x7E << 16) | (0x7E << 24) | (0x7E << 32);
        for i in 0..64 {
            let hit = i == 27 || i == 28;
            if open >> i & 1 == 1 && !hit {
                continue;
            }
            ev.observe_shot(&ShotOutcome {
                cell: Cell::new(i).expect("cell"),
                hit,
                color: None,
                sunk: None,
            });
        }
        ev.observe_answer(1 << 18, true, 0.2);
        ev.observe_answer(0x7E << 32, false, 0.1);
        let regions = [1u64 << 18, 0x7E << 32];
        let exact = ExactPosterior::compute(&ev, &regions, 1 << 30).expect("enumerates");
        let lists: Vec<Vec<u64>> = fleet
            .lengths()
            .iter()
            .map(|&l| {
                placement_masks(l)
                    .iter()
                    .copied()
                    .filter(|&p| p & ev.misses() == 0)
                    .collect()
            })
            .collect();
        let (mut z, mut cells, mut yes, mut boards) = (0.0, [0.0; 64], [0.0; 2], 0u64);
        for &a in &lists[0] {
            for &b in &lists[1] {
                for &c in &lists[2] {
                    for &d in &lists[3] {
                        let ships = [a, b, c, d];
                        if !ev.is_consistent(&ships) {
                            continue;
                        }
                        let u = a | b | c | d;
                        let w = ev.log_likelihood(u).exp();
                        boards += 1;
                        z += w;
                        for (i, x) in cells.iter_mut().enumerate() {
                            if u >> i & 1 == 1 {
                                *x += w;
                            }
                        }
                        for (k, &r) in regions.iter().enumerate() {
                            if u & r != 0 {
                                yes[k] += w;
                            }
                        }
                    }
                }
            }
        }
        assert!(boards > 0);
        assert_eq!(exact.boards(), boards);
        let p = exact.hit_probabilities(0);
        for i in 0..64 {
            assert!((p[i] - cells[i] / z).abs() < 1e-12, "cell {i}");
        }
        for (k, &r) in regions.iter().enumerate() {
            let got = exact.p_yes(r).expect("region");
            assert!((got - yes[k] / z).abs() < 1e-12);
        }
        assert_eq!(exact.p_yes(1), None);
        assert_eq!(exact.hit_probabilities(1 << 27)[27], 0.0);
    }

    #[test]
    fn budget_and_contradictions_are_errors() {
        let ev = Evidence::new(Fleet::paper());
        assert_eq!(
            ExactPosterior::compute(&ev, &[], 1_000),
            Err(ExactError::TooLarge { limit: 1_000 })
        );
        let mut ev = Evidence::new(Fleet::paper());
        for hit in [true, false] {
            ev.observe_shot(&ShotOutcome {
                cell: Cell::new(0).expect("cell"),
                hit,
                color: None,
                sunk: None,
            });
        }
        assert_eq!(
            ExactPosterior::compute(&ev, &[], 1 << 30),
            Err(ExactError::Inconsistent)
        );
    }
}
