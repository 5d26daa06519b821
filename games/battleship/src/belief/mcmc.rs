//! `mcmc`: the default belief, a correct Metropolis–Hastings sampler over full boards.
//!
//! The target is the posterior of [`Evidence`]: a flat prior over labelled placements, hard shot
//! constraints and the untempered answer likelihood. Three moves, each reversible on its own, are
//! mixed with fixed probabilities (a mixture of kernels that each satisfy detailed balance
//! satisfies it too):
//!
//! - **single**: one ship moves to another placement of its length. Its legal set (no overlap
//!   with the other three, its own constraints, and every hit still covered) is the same from both
//!   endpoints because the other ships do not move, so the uniform proposal is symmetric and the
//!   acceptance ratio is the likelihood ratio.
//! - **pair**: an ordered pair (i, j) is re-placed jointly: i draws uniformly from its own
//!   candidates that avoid the two fixed ships (a set `A` that does not depend on the current
//!   placements of i and j), then j draws uniformly from the `B(i′)` placements that make the
//!   whole board consistent. The reverse move uses the same `A`, so the Hastings ratio is
//!   `|B(i′)| / |B(i)|`. This is the move that hands a hit from one ship to another: i leaves the
//!   hit while j takes it over, which no single-ship move can do.
//! - **swap**: two ships exchange placements (allowed when their lengths are equal, or always
//!   when the fleet is unlabelled, which is how the colour-to-length assignment changes). It is
//!   an involution, hence symmetric; the union of ship cells, and so the likelihood, is
//!   unchanged, so it is accepted exactly when the swapped board is consistent.
//!
//! Several chains (four by default) run from independent starts with their own seeded streams,
//! and their thinned states are pooled with equal weights.
//!
//! Irreducibility is not proven for every constraint pattern (a cycle of hit owners among three
//! ships needs three ships to move at once); the independent starts guard against a chain stuck in
//! one component, and `tests/belief_accuracy.rs` measures the pooled marginals against the exact
//! posterior. The samples are autocorrelated, so the weight-based ESS (1/Σw² = N) overstates the
//! effective sample size.

use crate::belief::evidence::{
    Candidates, Evidence, Fleet, Stream, reweight_untempered, sample_prior, search_consistent,
};
use crate::belief::{Belief, SampleSet};
use crate::board::{MAX_PLACEMENTS, NUM_SHIPS};
use crate::game::ShotOutcome;

/// Probability of a single-ship move (the rest is split between pair and swap moves).
const P_SINGLE: f64 = 0.4;
/// Probability of a pair move when the fleet allows swaps (0.6 when it does not).
const P_PAIR: f64 = 0.4;

/// One Markov chain state: ship masks by slot, their union and the answers' log-likelihood.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct State {
    pub(crate) ships: [u64; NUM_SHIPS],
    pub(crate) union: u64,
    pub(crate) log_lik: f64,
}

impl State {
    /// The state of a consistent board under `ev`.
    pub(crate) fn new(ships: [u64; NUM_SHIPS], ev: &Evidence) -> Self {
        let union = ships.iter().fold(0, |a, &m| a | m);
        Self {
            ships,
            union,
            log_lik: ev.log_likelihood(union),
        }
    }
}

/// The Metropolis–Hastings kernel shared by `mcmc` and `smc`'s rejuvenation.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Kernel {
    labelled: bool,
    p_pair: f64,
    swaps: Vec<(usize, usize)>,
}

impl Kernel {
    /// The kernel for a fleet: swap moves only between slots that may exchange placements.
    pub(crate) fn new(fleet: &Fleet) -> Self {
        let mut swaps = Vec::new();
        for i in 0..NUM_SHIPS {
            for j in i + 1..NUM_SHIPS {
                if fleet.swappable(i, j) {
                    swaps.push((i, j));
                }
            }
        }
        let p_pair = if swaps.is_empty() {
            1.0 - P_SINGLE
        } else {
            P_PAIR
        };
        Self {
            labelled: fleet.is_labelled(),
            p_pair,
            swaps,
        }
    }

    /// One step from a consistent `state`; the state stays consistent.
    pub(crate) fn step(&self, ev: &Evidence, cands: &Candidates, s: &mut State, rng: &mut Stream) {
        let u = rng.next_f64();
        if u < P_SINGLE {
            single(ev, cands, s, rng);
        } else if u < P_SINGLE + self.p_pair {
            // Half the pair moves of an unlabelled fleet trade lengths; the choice does not
            // depend on the state, so each kind keeps detailed balance on its own.
            let exchange = !self.labelled && rng.below(2) == 1;
            pair(ev, cands, s, rng, exchange);
        } else {
            let (i, j) = self.swaps[rng.below(self.swaps.len())];
            swap(ev, s, i, j);
        }
    }
}

/// Metropolis acceptance of a move with log acceptance ratio `log_ratio`.
fn accept(log_ratio: f64, rng: &mut Stream) -> bool {
    log_ratio >= 0.0 || rng.next_f64().ln() < log_ratio
}

fn single(ev: &Evidence, cands: &Candidates, s: &mut State, rng: &mut Stream) {
    let k = rng.below(NUM_SHIPS);
    let cur = s.ships[k];
    // Ships never overlap, so removing one from the union is an exclusive or.
    let others = s.union ^ cur;
    let need = ev.hits() & !others;
    let mut buf = [0u64; MAX_PLACEMENTS];
    let mut n = 0;
    // Branch-free appends: the slot past the end is overwritten by the next candidate.
    for &p in cands.of(k, cur.count_ones() as usize) {
        buf[n] = p;
        n += usize::from(p != cur && p & others == 0 && p & need == need);
    }
    if n == 0 {
        return;
    }
    let p = buf[rng.below(n)];
    let union = others | p;
    let log_lik = ev.log_likelihood(union);
    if accept(log_lik - s.log_lik, rng) {
        s.ships[k] = p;
        s.union = union;
        s.log_lik = log_lik;
    }
}

/// Number of placements of slot `i` (length `len`) that avoid `fixed`.
fn fitting(cands: &Candidates, i: usize, len: usize, fixed: u64) -> usize {
    cands.of(i, len).iter().filter(|&&p| p & fixed == 0).count()
}

/// Number of placements of slot `j` (length `len`) that complete `fixed` into a consistent board.
fn completions(ev: &Evidence, cands: &Candidates, j: usize, len: usize, fixed: u64) -> usize {
    let need = ev.hits() & !fixed;
    cands
        .of(j, len)
        .iter()
        .filter(|&&p| p & fixed == 0 && p & need == need)
        .count()
}

/// The pair move on the ordered pair (i, j). With `exchange` the two ships also trade lengths
/// (unlabelled fleets only), which is the only way a ship pinned by a revealed colour can change
/// length: i draws from its candidates of j's length and j from its candidates of i's length.
fn pair(ev: &Evidence, cands: &Candidates, s: &mut State, rng: &mut Stream, exchange: bool) {
    let pick = rng.below(NUM_SHIPS * (NUM_SHIPS - 1));
    let i = pick / (NUM_SHIPS - 1);
    let j = (i + 1 + pick % (NUM_SHIPS - 1)) % NUM_SHIPS;
    let (old_i, old_j) = (
        s.ships[i].count_ones() as usize,
        s.ships[j].count_ones() as usize,
    );
    let (len_i, len_j) = if exchange {
        (old_j, old_i)
    } else {
        (old_i, old_j)
    };
    let rest = s.union ^ s.ships[i] ^ s.ships[j];
    // Draw i' uniformly from A = {i's candidates of the new length avoiding the fixed ships}.
    let mut buf = [0u64; MAX_PLACEMENTS];
    let mut a = 0;
    for &p in cands.of(i, len_i) {
        buf[a] = p;
        a += usize::from(p & rest == 0);
    }
    if a == 0 {
        return;
    }
    let new_i = buf[rng.below(a)];
    // Draw j' uniformly from B(i') = {j's candidates completing the board}.
    let fixed = rest | new_i;
    let need = ev.hits() & !fixed;
    let mut b = 0;
    for &p in cands.of(j, len_j) {
        buf[b] = p;
        b += usize::from(p & fixed == 0 && p & need == need);
    }
    if b == 0 {
        return;
    }
    let new_j = buf[rng.below(b)];
    // The reverse move draws the current placements from the same kind of sets at the old
    // lengths. Without an exchange its A is this A (the fixed ships are the same); its B is
    // never empty because the current j completes the current board.
    let back_a = if exchange {
        fitting(cands, i, old_i, rest)
    } else {
        a
    };
    let back_b = completions(ev, cands, j, old_j, rest | s.ships[i]);
    let union = fixed | new_j;
    let log_lik = ev.log_likelihood(union);
    let log_ratio = log_lik - s.log_lik + ((a * b) as f64).ln() - ((back_a * back_b) as f64).ln();
    if accept(log_ratio, rng) {
        s.ships[i] = new_i;
        s.ships[j] = new_j;
        s.union = union;
        s.log_lik = log_lik;
    }
}

fn swap(ev: &Evidence, s: &mut State, i: usize, j: usize) {
    let mut ships = s.ships;
    ships.swap(i, j);
    if ev.placement_ok(i, ships[i]) && ev.placement_ok(j, ships[j]) {
        s.ships = ships;
    }
}

/// Sample counts and chain settings of [`Mcmc`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct McmcConfig {
    /// Samples N pooled over all chains (at least 1).
    pub samples: usize,
    /// Independent chains (at least 1).
    pub chains: usize,
    /// Steps each chain runs after every observation before it records samples.
    pub burn_in: usize,
    /// Steps between recorded samples.
    pub thin: usize,
}

impl Default for McmcConfig {
    /// 500 samples from 4 chains, 250 burn-in steps per chain and observation, thinning 10:
    /// 6,000 steps per refresh.
    fn default() -> Self {
        Self {
            samples: 500,
            chains: 4,
            burn_in: 250,
            thin: 10,
        }
    }
}

/// One chain: its stream and its state (`None` while no consistent board is known).
#[derive(Clone, Debug)]
struct Chain {
    rng: Stream,
    state: Option<State>,
}

/// The correct MCMC belief (see the module docs for the moves and why they are valid).
///
/// After every observation each chain keeps its state if it is still consistent; otherwise it
/// restarts from a consistent stored sample drawn at random (a stored sample that agrees with the
/// new shot is a draw from the new posterior, up to the chain's error), else from an exact draw of
/// the prior conditioned on the shots (rejection), else from a board found by search. Then each
/// chain runs its burn-in and records its share of the N samples. All weights are 1/N.
#[derive(Clone, Debug)]
pub struct Mcmc {
    config: McmcConfig,
    evidence: Evidence,
    cands: Candidates,
    kernel: Kernel,
    chains: Vec<Chain>,
    samples: SampleSet,
}

impl Mcmc {
    /// A belief over boards of `fleet` for the game with seed `game_seed`. Chain `k` draws from
    /// stream `k` of the seed. Each chain starts from an exact draw of the prior, and the
    /// belief is refreshed once so that N prior samples are available at once.
    pub fn new(fleet: Fleet, game_seed: i64, config: McmcConfig) -> Self {
        let config = McmcConfig {
            samples: config.samples.max(1),
            chains: config.chains.max(1),
            ..config
        };
        let evidence = Evidence::new(fleet);
        let cands = evidence.candidates();
        let chains = (0..config.chains)
            .map(|k| Chain {
                rng: Stream::derive(game_seed, k as u64),
                state: None,
            })
            .collect();
        let mut belief = Self {
            config,
            kernel: Kernel::new(&fleet),
            evidence,
            cands,
            chains,
            samples: SampleSet::default(),
        };
        belief.refresh();
        belief
    }

    /// The paper fleet with the default configuration (500 samples).
    pub fn paper(game_seed: i64) -> Self {
        Self::new(Fleet::paper(), game_seed, McmcConfig::default())
    }

    /// The configuration in use.
    pub fn config(&self) -> &McmcConfig {
        &self.config
    }

    /// The observations conditioned on so far.
    pub fn evidence(&self) -> &Evidence {
        &self.evidence
    }

    /// False when no board consistent with the shots was found (contradictory observations):
    /// the sample set is then empty and every probability is 0.
    pub fn is_consistent(&self) -> bool {
        !self.samples.is_empty()
    }

    /// Restarts inconsistent chains, runs every chain's burn-in and re-records the N samples.
    /// Every observation does this; calling it again draws fresh samples.
    pub fn refresh(&mut self) {
        let ev = &self.evidence;
        let cands = &self.cands;
        // The stored samples that agree with the shots are only needed to restart a chain.
        let mut stored: Option<Vec<usize>> = None;
        let config = self.config;
        let mut fresh = SampleSet::default();
        let weight = 1.0 / config.samples as f64;
        for (k, chain) in self.chains.iter_mut().enumerate() {
            let rng = &mut chain.rng;
            let keep = chain
                .state
                .filter(|s| ev.is_consistent(&s.ships))
                .map(|s| State::new(s.ships, ev));
            chain.state = keep.or_else(|| {
                let stored = stored.get_or_insert_with(|| {
                    (0..self.samples.len())
                        .filter(|&i| ev.is_consistent(&self.samples.ships[i]))
                        .collect()
                });
                let start = if stored.is_empty() {
                    sample_prior(ev, cands, rng).or_else(|| search_consistent(ev, cands, rng))
                } else {
                    Some(self.samples.ships[stored[rng.below(stored.len())]])
                };
                start.map(|ships| State::new(ships, ev))
            });
            let Some(state) = chain.state.as_mut() else {
                continue;
            };
            for _ in 0..config.burn_in {
                self.kernel.step(ev, cands, state, rng);
            }
            // Chains share the N samples as evenly as possible, the first ones taking the
            // remainder.
            let share =
                config.samples / config.chains + usize::from(k < config.samples % config.chains);
            for _ in 0..share {
                for _ in 0..config.thin {
                    self.kernel.step(ev, cands, state, rng);
                }
                fresh.push(state.ships, weight);
            }
        }
        // If some chains found no consistent board the weights must still sum to 1.
        let n = fresh.len();
        if n > 0 && n != config.samples {
            fresh.weights.iter_mut().for_each(|w| *w = 1.0 / n as f64);
        }
        self.samples = fresh;
    }
}

impl Belief for Mcmc {
    fn observe_shot(&mut self, outcome: &ShotOutcome) {
        self.evidence.observe_shot(outcome);
        self.cands = self.evidence.candidates();
        self.refresh();
    }

    fn observe_answer(&mut self, region: u64, answer: bool, epsilon: f64) {
        self.evidence.observe_answer(region, answer, epsilon);
        self.refresh();
    }

    fn samples(&self) -> &SampleSet {
        &self.samples
    }

    /// Reweights with the same untempered likelihood the belief conditions on, so that a
    /// hypothetical answer moves the samples exactly as the real one would.
    fn reweighted(&self, region: u64, answer: bool, epsilon: f64) -> Option<Vec<f64>> {
        reweight_untempered(
            &self.samples.unions,
            &self.samples.weights,
            region,
            answer,
            epsilon,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::board::{Color, placement_masks};
    use crate::cell::Cell;

    fn shot(id: &str, hit: bool, color: Option<Color>, sunk: Option<Color>) -> ShotOutcome {
        ShotOutcome {
            cell: id.parse::<Cell>().expect("cell"),
            hit,
            color,
            sunk,
        }
    }

    fn small() -> McmcConfig {
        McmcConfig {
            samples: 200,
            ..McmcConfig::default()
        }
    }

    #[test]
    fn samples_are_consistent_boards_and_deterministic() {
        let mut a = Mcmc::new(Fleet::paper(), 11, small());
        let mut b = Mcmc::new(Fleet::paper(), 11, small());
        assert_eq!(a.samples().len(), 200);
        for (id, hit) in [("D4", true), ("D5", true), ("C4", false), ("A1", false)] {
            a.observe_shot(&shot(id, hit, None, None));
            b.observe_shot(&shot(id, hit, None, None));
        }
        a.observe_answer(0xFF, true, 0.1);
        b.observe_answer(0xFF, true, 0.1);
        assert_eq!(a.samples(), b.samples());
        for (k, ships) in a.samples().ships.iter().enumerate() {
            assert!(a.evidence().is_consistent(ships));
            for (s, &m) in ships.iter().enumerate() {
                assert!(placement_masks(Fleet::paper().lengths()[s]).contains(&m));
            }
            assert_eq!(a.samples().unions[k].count_ones(), 14);
        }
        let total: f64 = a.samples().weights.iter().sum();
        assert!((total - 1.0).abs() < 1e-9);
        let other = Mcmc::new(Fleet::paper(), 12, small());
        assert_ne!(
            other.samples(),
            Mcmc::new(Fleet::paper(), 11, small()).samples()
        );
    }

    #[test]
    fn colour_hits_and_sinkings_are_respected() {
        let fleet = Fleet::unlabelled([2, 3, 3, 4]).expect("fleet");
        let mut belief = Mcmc::new(fleet, 5, small());
        belief.observe_shot(&shot("B2", true, Some(Color::Purple), None));
        belief.observe_shot(&shot("B3", true, Some(Color::Purple), Some(Color::Purple)));
        belief.observe_shot(&shot("E5", true, Some(Color::Red), None));
        let purple = (0b11u64) << 9;
        for ships in &belief.samples().ships {
            assert_eq!(ships[Color::Purple.index()], purple);
            assert_ne!(ships[Color::Red.index()] & (1 << 36), 0);
        }
        assert!(belief.is_consistent());
    }

    #[test]
    fn contradictory_shots_leave_an_empty_belief() {
        let mut belief = Mcmc::new(Fleet::paper(), 3, small());
        belief.observe_shot(&shot("D4", true, None, None));
        belief.observe_shot(&shot("D4", false, None, None));
        assert!(!belief.is_consistent());
        assert_eq!(belief.hit_probabilities(0), [0.0; 64]);
        // Later observations keep working.
        belief.observe_answer(0xFF, true, 0.1);
        assert!(belief.samples().is_empty());
    }

    #[test]
    fn hypothetical_answers_use_the_untempered_likelihood() {
        let belief = Mcmc::new(Fleet::paper(), 9, small());
        let region = 0xFF;
        let p = belief.p_yes(region);
        let w = belief.reweighted(region, true, 0.1).expect("mass");
        let p_after: f64 = belief
            .samples()
            .unions
            .iter()
            .zip(&w)
            .filter(|&(&u, _)| u & region != 0)
            .map(|(_, &x)| x)
            .sum();
        // Bayes with a 9:1 likelihood ratio.
        let expected = 0.9 * p / (0.9 * p + 0.1 * (1.0 - p));
        assert!((p_after - expected).abs() < 1e-9);
    }
}
