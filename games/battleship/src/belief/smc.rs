//! `smc`: weighted particles with systematic resampling and Metropolis rejuvenation.
//!
//! The particles start as exact draws from the prior (unlike the reference, whose particles are
//! boards from consecutive generator seeds and share their biases). A shot zeroes the weight of
//! every particle it contradicts; an answer multiplies the weights by the untempered likelihood.
//! When the effective sample size falls below N/2 the particles are resampled systematically and
//! every particle then takes a few steps of the `mcmc` kernel, which targets the current posterior
//! and so leaves it invariant while restoring the diversity resampling removed.

use crate::belief::evidence::{
    Candidates, Evidence, Fleet, Stream, reweight_untempered, sample_prior, search_consistent,
};
use crate::belief::mcmc::{Kernel, State};
use crate::belief::{Belief, SampleSet};
use crate::game::ShotOutcome;
use crate::kernels;

/// Particle count and rejuvenation length of [`Smc`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SmcConfig {
    /// Particles N (at least 1).
    pub particles: usize,
    /// Kernel steps each particle takes after a resampling.
    pub rejuvenation_steps: usize,
}

impl Default for SmcConfig {
    /// 500 particles, 10 rejuvenation steps each after a resampling.
    fn default() -> Self {
        Self {
            particles: 500,
            rejuvenation_steps: 10,
        }
    }
}

/// The SMC belief. Particle weights are normalized after every update; the ESS reported is
/// 1/Σw² of those weights. A particle a shot contradicts stays in the set with weight 0 until the
/// next resampling, so the set always holds N particles.
#[derive(Clone, Debug)]
pub struct Smc {
    config: SmcConfig,
    evidence: Evidence,
    cands: Candidates,
    kernel: Kernel,
    rng: Stream,
    particles: SampleSet,
    log_liks: Vec<f64>,
}

impl Smc {
    /// A belief over boards of `fleet` for the game with seed `game_seed`, drawing from stream
    /// 1,000 of the seed (distinct from `mcmc`'s chain streams). The N initial particles are exact
    /// prior draws with weights 1/N.
    pub fn new(fleet: Fleet, game_seed: i64, config: SmcConfig) -> Self {
        let config = SmcConfig {
            particles: config.particles.max(1),
            ..config
        };
        let evidence = Evidence::new(fleet);
        let mut belief = Self {
            config,
            cands: evidence.candidates(),
            kernel: Kernel::new(&fleet),
            evidence,
            rng: Stream::derive(game_seed, 1_000),
            particles: SampleSet::default(),
            log_liks: Vec::new(),
        };
        belief.regenerate();
        belief
    }

    /// The paper fleet with the default configuration (500 particles).
    pub fn paper(game_seed: i64) -> Self {
        Self::new(Fleet::paper(), game_seed, SmcConfig::default())
    }

    /// The configuration in use.
    pub fn config(&self) -> &SmcConfig {
        &self.config
    }

    /// The observations conditioned on so far.
    pub fn evidence(&self) -> &Evidence {
        &self.evidence
    }

    /// False when no board consistent with the shots was found (contradictory observations):
    /// the particle set is then empty and every probability is 0.
    pub fn is_consistent(&self) -> bool {
        !self.particles.is_empty()
    }

    /// Replaces every particle when all weights are 0: exact draws from the prior conditioned on
    /// the shots, weighted by the answers' likelihood (importance sampling). When rejection fails
    /// (late in a game), the particles instead start from a searched board and are rejuvenated
    /// with the kernel, as an MCMC would be, with equal weights.
    fn regenerate(&mut self) {
        let n = self.config.particles;
        self.particles.clear();
        self.log_liks.clear();
        let ev = &self.evidence;
        // Weights relative to the largest possible likelihood stay representable however many
        // answers there are.
        let shift = ev.max_log_likelihood();
        let mut fallback = None;
        for _ in 0..n {
            match sample_prior(ev, &self.cands, &mut self.rng) {
                Some(ships) => {
                    let state = State::new(ships, ev);
                    self.particles.push(ships, (state.log_lik - shift).exp());
                    self.log_liks.push(state.log_lik);
                }
                None => {
                    fallback = search_consistent(ev, &self.cands, &mut self.rng);
                    break;
                }
            }
        }
        if self.particles.len() < n {
            self.particles.clear();
            self.log_liks.clear();
            let Some(start) = fallback else {
                return;
            };
            let mut state = State::new(start, ev);
            // Each particle continues the chain of the previous one, a burn-in's worth of steps
            // apart, so the set spreads out from the searched board.
            for _ in 0..n {
                for _ in 0..self.config.rejuvenation_steps.max(1) * 4 {
                    self.kernel.step(ev, &self.cands, &mut state, &mut self.rng);
                }
                self.particles.push(state.ships, 1.0);
                self.log_liks.push(state.log_lik);
            }
        }
        self.normalize();
    }

    /// Normalizes the weights; returns false when they are all 0.
    fn normalize(&mut self) -> bool {
        let total = self.particles.weights.iter().fold(0.0, |a, &w| a + w);
        if total > 0.0 && total.is_finite() {
            self.particles.weights.iter_mut().for_each(|w| *w /= total);
            true
        } else {
            false
        }
    }

    /// Systematic resampling (one uniform offset, N evenly spaced pointers) followed by the
    /// rejuvenation steps, when the ESS is below N/2.
    fn maybe_resample(&mut self) {
        let n = self.particles.len();
        if n == 0 || kernels::ess(&self.particles.weights) >= n as f64 / 2.0 {
            return;
        }
        let step = 1.0 / n as f64;
        let mut pointer = self.rng.next_f64() * step;
        let mut cumulative = 0.0;
        let mut src = 0;
        let mut states = Vec::with_capacity(n);
        for _ in 0..n {
            // Floating-point round-off can leave the last pointer past the final cumulative sum;
            // the last particle then takes it.
            while src + 1 < n && cumulative + self.particles.weights[src] <= pointer {
                cumulative += self.particles.weights[src];
                src += 1;
            }
            states.push(State {
                ships: self.particles.ships[src],
                union: self.particles.unions[src],
                log_lik: self.log_liks[src],
            });
            pointer += step;
        }
        self.particles.clear();
        self.log_liks.clear();
        for mut state in states {
            for _ in 0..self.config.rejuvenation_steps {
                self.kernel
                    .step(&self.evidence, &self.cands, &mut state, &mut self.rng);
            }
            self.particles.push(state.ships, step);
            self.log_liks.push(state.log_lik);
        }
    }
}

impl Belief for Smc {
    fn observe_shot(&mut self, outcome: &ShotOutcome) {
        self.evidence.observe_shot(outcome);
        self.cands = self.evidence.candidates();
        for (ships, w) in self
            .particles
            .ships
            .iter()
            .zip(self.particles.weights.iter_mut())
        {
            if !self.evidence.is_consistent(ships) {
                *w = 0.0;
            }
        }
        if !self.normalize() {
            self.regenerate();
        }
        self.maybe_resample();
    }

    fn observe_answer(&mut self, region: u64, answer: bool, epsilon: f64) {
        self.evidence.observe_answer(region, answer, epsilon);
        let yes = super::evidence::untempered_likelihood(answer, epsilon);
        let no = super::evidence::untempered_likelihood(!answer, epsilon);
        for ((&u, w), ll) in self
            .particles
            .unions
            .iter()
            .zip(self.particles.weights.iter_mut())
            .zip(self.log_liks.iter_mut())
        {
            let l = if u & region != 0 { yes } else { no };
            *w *= l;
            *ll += l.ln();
        }
        if !self.normalize() {
            self.regenerate();
        }
        self.maybe_resample();
    }

    fn samples(&self) -> &SampleSet {
        &self.particles
    }

    /// Reweights with the same untempered likelihood the belief conditions on.
    fn reweighted(&self, region: u64, answer: bool, epsilon: f64) -> Option<Vec<f64>> {
        reweight_untempered(
            &self.particles.unions,
            &self.particles.weights,
            region,
            answer,
            epsilon,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cell::Cell;

    fn shot(id: &str, hit: bool) -> ShotOutcome {
        ShotOutcome {
            cell: id.parse::<Cell>().expect("cell"),
            hit,
            color: None,
            sunk: None,
        }
    }

    fn small() -> SmcConfig {
        SmcConfig {
            particles: 300,
            ..SmcConfig::default()
        }
    }

    #[test]
    fn initial_particles_are_prior_draws() {
        let belief = Smc::new(Fleet::paper(), 4, small());
        assert_eq!(belief.samples().len(), 300);
        assert!((belief.ess() - 300.0).abs() < 1e-6);
        // The reference's consecutive-seed particles always have a vertical red ship; exact
        // prior draws have it horizontal about half the time.
        let horizontal = belief
            .samples()
            .ships
            .iter()
            .filter(|s| s[0].trailing_zeros() / 8 == (63 - s[0].leading_zeros()) / 8)
            .count();
        assert!((100..200).contains(&horizontal), "{horizontal}");
    }

    #[test]
    fn shots_zero_or_resample_and_answers_reweight() {
        let mut a = Smc::new(Fleet::paper(), 8, small());
        let mut b = Smc::new(Fleet::paper(), 8, small());
        for (id, hit) in [("D4", true), ("D5", false), ("E4", true)] {
            a.observe_shot(&shot(id, hit));
            b.observe_shot(&shot(id, hit));
        }
        a.observe_answer(0xFF, false, 0.1);
        b.observe_answer(0xFF, false, 0.1);
        assert_eq!(a.samples(), b.samples());
        let s = a.samples();
        let total: f64 = s.weights.iter().sum();
        assert!((total - 1.0).abs() < 1e-9);
        for (ships, &w) in s.ships.iter().zip(&s.weights) {
            if w > 0.0 {
                assert!(a.evidence().is_consistent(ships));
            }
        }
        assert!(a.ess() >= 150.0, "resampling keeps the ESS above N/2");
        // The answer's likelihood is carried in the rejuvenation target.
        for (k, &u) in s.unions.iter().enumerate() {
            assert!((a.log_liks[k] - a.evidence().log_likelihood(u)).abs() < 1e-9);
        }
    }

    #[test]
    fn a_surprising_shot_regenerates_the_particles() {
        let config = SmcConfig {
            particles: 5,
            ..SmcConfig::default()
        };
        // Twelve of B01's fourteen ship cells hit at once: rejection from the prior cannot cover
        // them, so regeneration starts from a searched board and rejuvenates.
        let board = crate::paper::paper_board(0).expect("B01");
        let mut belief = Smc::new(Fleet::paper(), 2, config);
        for c in board.cells().take(12) {
            belief.evidence.observe_shot(&ShotOutcome {
                cell: c,
                hit: true,
                color: None,
                sunk: None,
            });
        }
        belief.cands = belief.evidence.candidates();
        assert_eq!(
            sample_prior(&belief.evidence, &belief.cands, &mut belief.rng.clone()),
            None
        );
        belief.regenerate();
        assert_eq!(belief.samples().len(), 5);
        for ships in &belief.samples().ships {
            assert!(belief.evidence().is_consistent(ships));
        }
        // A single surprising hit is handled by rejection from the prior.
        let mut fresh = Smc::new(Fleet::paper(), 2, config);
        let uncovered = (0..64)
            .find(|&i| fresh.samples().unions.iter().all(|u| u >> i & 1 == 0))
            .expect("five boards leave cells uncovered");
        fresh.observe_shot(&ShotOutcome {
            cell: Cell::new(uncovered).expect("cell"),
            hit: true,
            color: None,
            sunk: None,
        });
        assert_eq!(fresh.samples().len(), 5);
        assert!(
            fresh
                .samples()
                .unions
                .iter()
                .all(|u| u >> uncovered & 1 == 1)
        );
    }

    #[test]
    fn contradictory_shots_leave_an_empty_belief() {
        let mut belief = Smc::new(Fleet::paper(), 3, small());
        belief.observe_shot(&shot("D4", true));
        belief.observe_shot(&shot("D4", false));
        assert!(!belief.is_consistent());
        belief.observe_answer(0xFF, true, 0.1);
        assert_eq!(belief.hit_probabilities(0), [0.0; 64]);
    }
}
