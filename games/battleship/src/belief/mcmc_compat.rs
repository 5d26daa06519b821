//! `mcmc-compat`: the anchor's Metropolis–Hastings belief (§3.2), reproduced draw for draw.

use crate::belief::{Belief, SampleSet};
use crate::board::{MAX_PLACEMENTS, NUM_SHIPS, placement_masks};
use crate::game::ShotOutcome;
use crate::kernels::{LIKELIHOOD_FLOOR, answer_likelihood};
use crate::paper::{GenerateError, PAPER_FLEET, generate_consistent, generate_masks};
use crate::prng::Prng;

/// Offset from the game seed to the first chain-initialisation board seed.
const INIT_SEED_OFFSET: i64 = 20_000;
/// Steps between stored samples.
const THIN: usize = 5;

/// One answer observation with its two precomputed log-likelihood terms.
#[derive(Clone, Copy, Debug)]
struct AnswerTerm {
    region: u64,
    answer: bool,
    log_match: f64,
    log_mismatch: f64,
}

/// The anchor's MCMC belief, defects included (documented, not fixed):
/// - one chain of single-ship moves, so hit ownership is frozen once covered;
/// - samples are consecutive chain states 5 steps apart (weights 1/N);
/// - the answer likelihood is tempered to 0.82/0.18;
/// - after every observation the chain is made shot-consistent (current state, else the first
///   consistent stored sample, else rejection from `generateBoard(nextSeed++)`), then run for
///   max(200, 2N) burn-in steps and N·5 sampling steps.
///
/// All randomness comes from PRNG(gameSeed) and the generator seeds gameSeed + 20000 + k.
#[derive(Clone, Debug)]
pub struct McmcCompat {
    particles: usize,
    burn_in: usize,
    rng: Prng,
    next_seed: i64,
    lens: [usize; NUM_SHIPS],
    current: [u64; NUM_SHIPS],
    current_lp: f64,
    hits: u64,
    misses: u64,
    answers: Vec<AnswerTerm>,
    samples: SampleSet,
    /// The step's legal placements. Kept between steps so that a step does not zero 112 words
    /// it then overwrites; only the first `n` entries a step writes are read.
    candidates: Box<[u64; MAX_PLACEMENTS]>,
}

impl McmcCompat {
    /// Creates the belief for a game: the chain starts at `generateBoard(seed + 20000)` and is
    /// refreshed once, so the first turn sees N prior samples after the burn-in.
    pub fn new(game_seed: i64, particles: usize) -> Result<Self, GenerateError> {
        let particles = particles.max(1);
        let init_seed = game_seed + INIT_SEED_OFFSET;
        let (current, _) = generate_masks(init_seed)?;
        let mut belief = Self {
            particles,
            burn_in: 200.max(2 * particles),
            rng: Prng::new(game_seed),
            next_seed: init_seed + 1,
            lens: PAPER_FLEET.map(|(_, len)| len),
            current,
            current_lp: 0.0,
            hits: 0,
            misses: 0,
            answers: Vec::new(),
            samples: SampleSet::default(),
            candidates: Box::new([0; MAX_PLACEMENTS]),
        };
        belief.refresh();
        Ok(belief)
    }

    /// Number of stored samples N.
    pub fn particles(&self) -> usize {
        self.particles
    }

    /// The chain's current state (ship masks in fleet order).
    pub fn current(&self) -> [u64; NUM_SHIPS] {
        self.current
    }

    fn shot_consistent(&self, union: u64) -> bool {
        union & (self.hits | self.misses) == self.hits
    }

    /// Log-posterior up to a constant: −∞ off the shot constraints, else the sum in observation
    /// order of the log tempered answer likelihoods.
    fn log_posterior(&self, union: u64) -> f64 {
        if !self.shot_consistent(union) {
            return f64::NEG_INFINITY;
        }
        let mut lp = 0.0;
        for a in &self.answers {
            let matches = (union & a.region != 0) == a.answer;
            lp += if matches { a.log_match } else { a.log_mismatch };
        }
        lp
    }

    fn ensure_shot_consistent(&mut self) {
        let union = self.current.iter().fold(0, |a, &m| a | m);
        if self.shot_consistent(union) {
            return;
        }
        if let Some(i) = self
            .samples
            .unions
            .iter()
            .position(|&u| self.shot_consistent(u))
        {
            self.current = self.samples.ships[i];
            return;
        }
        let attempts = 5000.max(20 * self.particles);
        for _ in 0..attempts {
            let seed = self.next_seed;
            self.next_seed += 1;
            // Abandons the seed at the first ship that rules it out; the boards that pass are
            // those `generate_masks(seed)` gives that are shot-consistent.
            if let Ok(Some((masks, _))) = generate_consistent(seed, self.hits, self.misses) {
                self.current = masks;
                return;
            }
        }
        // Like the reference, keep the inconsistent board; its log-posterior is −∞.
    }

    /// One Metropolis–Hastings step. Draws: the ship, then (if any placement is legal) the
    /// placement, then (only for a finite negative Δ) the acceptance uniform. Exposed for
    /// benchmarks; the observation methods already run the chain.
    pub fn step(&mut self) {
        let s = self.rng.next_int(NUM_SHIPS);
        let cur = self.current[s];
        let mut others = 0;
        for (i, &m) in self.current.iter().enumerate() {
            if i != s {
                others |= m;
            }
        }
        let shots = self.hits | self.misses;
        let candidates = &mut *self.candidates;
        let mut n = 0;
        let mut current_legal = false;
        // The reference checks shot cells outside the moving ship against the current board, so
        // this test does not depend on the candidate placement; cells the ship covers now must
        // keep their status under the new placement.
        if (others ^ self.hits) & shots & !cur == 0 {
            let need = self.hits & cur;
            let forbid = self.misses & cur;
            for &p in placement_masks(self.lens[s]) {
                if p & others == 0 && p & need == need && p & forbid == 0 {
                    if p == cur {
                        current_legal = true;
                    } else {
                        candidates[n] = p;
                        n += 1;
                    }
                }
            }
        }
        let proposal = if n > 0 {
            candidates[self.rng.next_int(n)]
        } else if current_legal {
            // Only the current placement is legal: the list is kept whole and still drawn from.
            self.rng.next_int(1);
            cur
        } else {
            return;
        };
        let proposed_lp = self.log_posterior(others | proposal);
        if !proposed_lp.is_finite() {
            return;
        }
        let accept = if !self.current_lp.is_finite() {
            true
        } else {
            let delta = proposed_lp - self.current_lp;
            delta >= 0.0 || self.rng.next_f64().max(f64::from_bits(1)).ln() < delta
        };
        if accept {
            self.current[s] = proposal;
            self.current_lp = proposed_lp;
        }
    }

    /// Re-establishes shot consistency and re-runs the chain: burn-in, then N samples 5 steps
    /// apart (3,500 steps for N = 500). Every observation does this; calling it again advances
    /// the streams.
    pub fn refresh(&mut self) {
        self.ensure_shot_consistent();
        self.current_lp = self.log_posterior(self.current.iter().fold(0, |a, &m| a | m));
        for _ in 0..self.burn_in {
            self.step();
        }
        let weight = 1.0 / self.particles as f64;
        let mut samples = std::mem::take(&mut self.samples);
        samples.clear();
        for _ in 0..self.particles {
            for _ in 0..THIN {
                self.step();
            }
            samples.push(self.current, weight);
        }
        self.samples = samples;
    }
}

impl Belief for McmcCompat {
    fn observe_shot(&mut self, outcome: &ShotOutcome) {
        if outcome.hit {
            self.hits |= outcome.cell.bit();
        } else {
            self.misses |= outcome.cell.bit();
        }
        self.refresh();
    }

    fn observe_answer(&mut self, region: u64, answer: bool, epsilon: f64) {
        self.answers.push(AnswerTerm {
            region,
            answer,
            log_match: answer_likelihood(true, epsilon).max(LIKELIHOOD_FLOOR).ln(),
            log_mismatch: answer_likelihood(false, epsilon).max(LIKELIHOOD_FLOOR).ln(),
        });
        self.refresh();
    }

    fn samples(&self) -> &SampleSet {
        &self.samples
    }

    /// The chain's samples all weigh 1/N, so the ESS is N (as in the reference).
    fn ess(&self) -> f64 {
        self.particles as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cell::Cell;

    fn shot(id: &str, hit: bool) -> ShotOutcome {
        ShotOutcome {
            cell: id.parse::<Cell>().unwrap(),
            hit,
            color: None,
            sunk: None,
        }
    }

    #[test]
    fn samples_respect_shots_and_are_deterministic() {
        let mut a = McmcCompat::new(64964, 100).unwrap();
        let mut b = McmcCompat::new(64964, 100).unwrap();
        assert_eq!(a.samples().len(), 100);
        for (id, hit) in [("F3", true), ("A1", false), ("F4", true)] {
            a.observe_shot(&shot(id, hit));
            b.observe_shot(&shot(id, hit));
        }
        assert_eq!(a.samples(), b.samples());
        let hits = shot("F3", true).cell.bit() | shot("F4", true).cell.bit();
        let miss = shot("A1", false).cell.bit();
        for &u in &a.samples().unions {
            assert_eq!(u & hits, hits);
            assert_eq!(u & miss, 0);
            assert_eq!(u.count_ones(), 14);
        }
        assert_eq!(a.ess(), 100.0);
        let p = a.hit_probabilities(hits | miss);
        assert_eq!(p[hits.trailing_zeros() as usize], 0.0);
        let total: f64 = p.iter().sum();
        assert!((total - 12.0).abs() < 1e-9);
    }

    #[test]
    fn every_sample_is_a_valid_paper_board() {
        let mut b = McmcCompat::new(988485, 200).unwrap();
        b.observe_answer(0xFF, false, 0.1);
        b.observe_shot(&shot("D4", false));
        for ships in &b.samples().ships {
            let mut union = 0u64;
            for (s, &mask) in ships.iter().enumerate() {
                assert!(placement_masks(PAPER_FLEET[s].1).contains(&mask));
                assert_eq!(union & mask, 0, "ships overlap");
                union |= mask;
            }
        }
    }

    #[test]
    fn answers_shift_the_posterior() {
        let row_a = 0xFF;
        let mut yes = McmcCompat::new(7, 300).unwrap();
        let mut no = McmcCompat::new(7, 300).unwrap();
        for _ in 0..4 {
            yes.observe_answer(row_a, true, 0.1);
            no.observe_answer(row_a, false, 0.1);
        }
        assert!(yes.p_yes(row_a) > no.p_yes(row_a) + 0.3);
    }
}
