//! What the correct backends condition on: the fleet, the shot constraints (hits, misses,
//! revealed colours, sinkings) and the answers, with the untempered answer likelihood.
//!
//! The posterior all three correct backends target is
//! `p(board | evidence) ∝ prior(board) · 1[board agrees with every shot] · Π_answers L(answer)`,
//! where the prior is flat over labelled, non-overlapping straight placements of the fleet (every
//! start of the `9 − len` range, touching allowed) and `L` is `1 − ε` when the region's truth
//! matches the reported answer and `ε` otherwise (no tempering).

use std::fmt;

use crate::board::{MAX_SHIP_LEN, MIN_SHIP_LEN, NUM_SHIPS, Placement, placement_masks};
use crate::game::ShotOutcome;
use crate::grand::TrackerEntry;
use crate::kernels::LIKELIHOOD_FLOOR;
use crate::paper::PAPER_FLEET;

/// Why a fleet was rejected.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FleetError {
    /// A ship length is outside 2..=5.
    BadLength(usize),
    /// A tracker listed this many ships instead of four.
    ShipCount(usize),
}

impl fmt::Display for FleetError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::BadLength(n) => write!(f, "ship length {n} is outside 2..=5"),
            Self::ShipCount(n) => write!(f, "the tracker lists {n} ships, not {NUM_SHIPS}"),
        }
    }
}

impl std::error::Error for FleetError {}

/// The four ship lengths a belief assumes, and whether the captain knows which colour has which
/// length.
///
/// Ship slots are colours in [`crate::Color::ALL`] order. A *labelled* fleet fixes slot `i` to
/// `lengths[i]` (the paper fleet, where colours are never revealed and only the lengths matter).
/// An *unlabelled* fleet knows only the multiset of lengths (Grand's tracker): which colour has
/// which length is part of the hidden state, and the prior is flat over every colour-to-length
/// assignment and placement.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Fleet {
    lengths: [usize; NUM_SHIPS],
    labelled: bool,
}

impl Fleet {
    /// The paper fleet: red 5, green 4, purple 3, orange 2, labelled.
    pub const fn paper() -> Self {
        Self {
            lengths: [
                PAPER_FLEET[0].1,
                PAPER_FLEET[1].1,
                PAPER_FLEET[2].1,
                PAPER_FLEET[3].1,
            ],
            labelled: true,
        }
    }

    /// A fleet whose colour `i` (in [`crate::Color::ALL`] order) has length `lengths[i]`.
    pub fn labelled(lengths: [usize; NUM_SHIPS]) -> Result<Self, FleetError> {
        Self::checked(lengths, true)
    }

    /// A fleet known only by its multiset of lengths (the grand protocol's tracker): the
    /// colour-to-length assignment is inferred, from revealed colours and sinkings.
    pub fn unlabelled(mut lengths: [usize; NUM_SHIPS]) -> Result<Self, FleetError> {
        // Sorting makes equal multisets compare equal.
        lengths.sort_unstable();
        Self::checked(lengths, false)
    }

    /// The unlabelled fleet of Grand's ship tracker ([`crate::Game::tracker`]): the lengths it
    /// lists, without the colours of the ships still afloat.
    pub fn from_tracker(entries: &[TrackerEntry]) -> Result<Self, FleetError> {
        match entries {
            [a, b, c, d] => Self::unlabelled([a.len, b.len, c.len, d.len]),
            _ => Err(FleetError::ShipCount(entries.len())),
        }
    }

    fn checked(lengths: [usize; NUM_SHIPS], labelled: bool) -> Result<Self, FleetError> {
        match lengths
            .iter()
            .find(|l| !(MIN_SHIP_LEN..=MAX_SHIP_LEN).contains(l))
        {
            Some(&bad) => Err(FleetError::BadLength(bad)),
            None => Ok(Self { lengths, labelled }),
        }
    }

    /// The lengths: per colour when labelled, sorted ascending when unlabelled.
    pub fn lengths(&self) -> [usize; NUM_SHIPS] {
        self.lengths
    }

    /// True when each colour's length is known.
    pub fn is_labelled(&self) -> bool {
        self.labelled
    }

    /// Number of ship cells on every board of this fleet.
    pub fn ship_cells(&self) -> u32 {
        self.lengths.iter().sum::<usize>() as u32
    }

    /// Every distinct colour-to-length assignment the fleet allows: one when labelled, the
    /// distinct permutations of the multiset when unlabelled (at most 24).
    pub fn assignments(&self) -> Vec<[usize; NUM_SHIPS]> {
        if self.labelled {
            return vec![self.lengths];
        }
        let mut out: Vec<[usize; NUM_SHIPS]> = Vec::new();
        for a in 0..NUM_SHIPS {
            for b in 0..NUM_SHIPS {
                for c in 0..NUM_SHIPS {
                    for d in 0..NUM_SHIPS {
                        let idx = [a, b, c, d];
                        let mut seen = [false; NUM_SHIPS];
                        idx.iter().for_each(|&i| seen[i] = true);
                        let perm = idx.map(|i| self.lengths[i]);
                        if seen.iter().all(|&s| s) && !out.contains(&perm) {
                            out.push(perm);
                        }
                    }
                }
            }
        }
        out
    }

    /// True when ships of lengths `lens` (by slot) are a board of this fleet.
    pub(crate) fn matches(&self, lens: [usize; NUM_SHIPS]) -> bool {
        if self.labelled {
            lens == self.lengths
        } else {
            let mut sorted = lens;
            sorted.sort_unstable();
            sorted == self.lengths
        }
    }

    /// The lengths slot `slot` may have.
    pub(crate) fn slot_lengths(&self, slot: usize) -> Vec<usize> {
        if self.labelled {
            vec![self.lengths[slot]]
        } else {
            let mut v = self.lengths.to_vec();
            v.dedup();
            v
        }
    }

    /// True when some two slots can exchange placements and still match the fleet.
    pub(crate) fn swappable(&self, i: usize, j: usize) -> bool {
        i != j && (!self.labelled || self.lengths[i] == self.lengths[j])
    }
}

/// One answer observation with its two log-likelihood terms.
#[derive(Clone, Copy, Debug, PartialEq)]
struct AnswerTerm {
    region: u64,
    answer: bool,
    log_match: f64,
    log_mismatch: f64,
}

/// The untempered answer likelihood: `1 − ε` on a match and `ε` on a mismatch, clamped to
/// [1e-10, 1 − 1e-10] so that ε = 0 (a truthful spotter) is a near-hard constraint that a chain
/// started in a contradicting state can still leave.
pub fn untempered_likelihood(matches: bool, epsilon: f64) -> f64 {
    let raw = if matches { 1.0 - epsilon } else { epsilon };
    if raw.is_nan() {
        // A NaN ε carries no information; treat the answer as uninformative.
        return 0.5;
    }
    raw.clamp(LIKELIHOOD_FLOOR, 1.0 - LIKELIHOOD_FLOOR)
}

/// Sample weights after a hypothetical answer with the untempered likelihood, normalized; `None`
/// when the reweighted mass is 0.
pub fn reweight_untempered(
    unions: &[u64],
    weights: &[f64],
    region: u64,
    answer: bool,
    epsilon: f64,
) -> Option<Vec<f64>> {
    let yes = untempered_likelihood(answer, epsilon);
    let no = untempered_likelihood(!answer, epsilon);
    let mut out: Vec<f64> = unions
        .iter()
        .zip(weights)
        .map(|(&u, &w)| w * if u & region != 0 { yes } else { no })
        .collect();
    let total = out.iter().fold(0.0, |a, &w| a + w);
    if total > 0.0 {
        out.iter_mut().for_each(|w| *w /= total);
        Some(out)
    } else {
        None
    }
}

/// Everything observed so far in one game, as constraints on the hidden board.
///
/// Shots are hard constraints: a miss forbids every ship, a hit must be covered by some ship,
/// a hit whose colour was revealed must be covered by that colour's ship (and by no other), a
/// sunk colour's ship is exactly its revealed hits, and a colour that was hit but not reported
/// sunk has at least one cell not yet hit. Answers are soft, with the untempered likelihood.
#[derive(Clone, Debug, PartialEq)]
pub struct Evidence {
    fleet: Fleet,
    hits: u64,
    misses: u64,
    colour_hits: [u64; NUM_SHIPS],
    sunk: [bool; NUM_SHIPS],
    answers: Vec<AnswerTerm>,
}

impl Evidence {
    /// No observations yet.
    pub fn new(fleet: Fleet) -> Self {
        Self {
            fleet,
            hits: 0,
            misses: 0,
            colour_hits: [0; NUM_SHIPS],
            sunk: [false; NUM_SHIPS],
            answers: Vec::new(),
        }
    }

    /// The fleet.
    pub fn fleet(&self) -> &Fleet {
        &self.fleet
    }

    /// Hit cells.
    pub fn hits(&self) -> u64 {
        self.hits
    }

    /// Missed cells.
    pub fn misses(&self) -> u64 {
        self.misses
    }

    /// Number of answers observed.
    pub fn answer_count(&self) -> usize {
        self.answers.len()
    }

    /// Records a shot. A colour (grand protocol) pins the hit to that ship, and the `sunk` field
    /// of a coloured hit is authoritative: `None` means the hit ship is still afloat.
    pub fn observe_shot(&mut self, outcome: &ShotOutcome) {
        let bit = outcome.cell.bit();
        if outcome.hit {
            self.hits |= bit;
            if let Some(c) = outcome.color {
                self.colour_hits[c.index()] |= bit;
            }
        } else {
            self.misses |= bit;
        }
        if let Some(c) = outcome.sunk {
            self.sunk[c.index()] = true;
        }
    }

    /// Records an answer to "is there a ship cell in `region`?" from a spotter that flips
    /// answers with probability `epsilon`.
    pub fn observe_answer(&mut self, region: u64, answer: bool, epsilon: f64) {
        self.answers.push(AnswerTerm {
            region,
            answer,
            log_match: untempered_likelihood(true, epsilon).ln(),
            log_mismatch: untempered_likelihood(false, epsilon).ln(),
        });
    }

    /// Log-likelihood of the answers for a board with ship cells `union`, summed in observation
    /// order.
    pub fn log_likelihood(&self, union: u64) -> f64 {
        self.answers.iter().fold(0.0, |lp, a| {
            let matches = (union & a.region != 0) == a.answer;
            lp + if matches { a.log_match } else { a.log_mismatch }
        })
    }

    /// The largest possible answer log-likelihood (every answer matched by its likelier term),
    /// an upper bound used to keep exponentiated weights in range.
    pub fn max_log_likelihood(&self) -> f64 {
        self.answers
            .iter()
            .fold(0.0, |lp, a| lp + a.log_match.max(a.log_mismatch))
    }

    /// Cells slot `slot` must not cover: misses, other colours' revealed hits, and everything
    /// outside its hits once it is sunk.
    fn forbidden(&self, slot: usize) -> u64 {
        let mut f = self.misses;
        for (s, &h) in self.colour_hits.iter().enumerate() {
            if s != slot {
                f |= h;
            }
        }
        if self.sunk[slot] {
            f |= !self.colour_hits[slot];
        }
        f
    }

    /// True when placement `mask` for slot `slot` satisfies every constraint that involves only
    /// this ship (not overlap, not coverage of uncoloured hits).
    pub(crate) fn placement_ok(&self, slot: usize, mask: u64) -> bool {
        let must = self.colour_hits[slot];
        let afloat = must != 0 && !self.sunk[slot];
        mask & self.forbidden(slot) == 0
            && mask & must == must
            && (!afloat || mask & !self.hits != 0)
    }

    /// True when `ships` (masks by slot) is a board of the fleet that agrees with every shot.
    pub fn is_consistent(&self, ships: &[u64; NUM_SHIPS]) -> bool {
        let mut union = 0u64;
        for (s, &m) in ships.iter().enumerate() {
            if union & m != 0 || !self.placement_ok(s, m) {
                return false;
            }
            if Placement::from_mask(m).is_none() {
                return false;
            }
            union |= m;
        }
        union & self.hits == self.hits && self.fleet.matches(ships.map(|m| m.count_ones() as usize))
    }

    /// The placements each slot may take on its own, by length (index = length).
    pub(crate) fn candidates(&self) -> Candidates {
        let mut lists: [[Vec<u64>; MAX_SHIP_LEN + 1]; NUM_SHIPS] = Default::default();
        for (slot, per_len) in lists.iter_mut().enumerate() {
            for len in self.fleet.slot_lengths(slot) {
                per_len[len] = placement_masks(len)
                    .iter()
                    .copied()
                    .filter(|&p| self.placement_ok(slot, p))
                    .collect();
            }
        }
        Candidates { lists }
    }
}

/// Per slot and length, the placements that satisfy the slot's own constraints. Rebuilt after
/// every shot; answers do not change it.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct Candidates {
    lists: [[Vec<u64>; MAX_SHIP_LEN + 1]; NUM_SHIPS],
}

impl Candidates {
    /// The placements of length `len` slot `slot` may take (empty for impossible lengths).
    pub(crate) fn of(&self, slot: usize, len: usize) -> &[u64] {
        self.lists[slot].get(len).map_or(&[], Vec::as_slice)
    }
}

/// A 64-bit SplitMix64 stream: the seeded source of every draw in the correct backends. It
/// passes BigCrush, unlike the reference's xorshift32, whose draws only `mcmc-compat` needs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Stream(u64);

impl Stream {
    /// Stream number `stream` of a game seed; distinct streams are decorrelated by hashing both.
    pub(crate) fn derive(seed: i64, stream: u64) -> Self {
        let mut s = Self((seed as u64) ^ 0x6A09_E667_F3BC_C909);
        let base = s.next_u64();
        Self(base ^ mix(stream.wrapping_add(0xBB67_AE85_84CA_A73B)))
    }

    pub(crate) fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        mix(self.0)
    }

    /// A uniform draw in [0, 1) with 53 random bits.
    pub(crate) fn next_f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// A uniform index in `0..n` (0 when `n` is 0), by the multiply-shift method; its bias is
    /// below 2^-57 for the list sizes used here.
    pub(crate) fn below(&mut self, n: usize) -> usize {
        ((u128::from(self.next_u64()) * n as u128) >> 64) as usize
    }
}

fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Most attempts the prior rejection sampler makes before falling back to a search.
const PRIOR_ATTEMPTS: usize = 20_000;
/// Most search nodes the fallback search visits before giving up.
const SEARCH_NODES: usize = 2_000_000;

/// Draws a board from the prior conditioned on the shots, exactly, by rejection: every slot
/// draws uniformly from its own candidates over all lengths it may have (a set that does not
/// depend on the other ships), and the draw is kept only if the ships do not overlap, cover every
/// hit and match the fleet. Returns `None` after [`PRIOR_ATTEMPTS`] failures.
pub(crate) fn sample_prior(
    ev: &Evidence,
    cands: &Candidates,
    rng: &mut Stream,
) -> Option<[u64; NUM_SHIPS]> {
    let pools: Vec<Vec<u64>> = (0..NUM_SHIPS)
        .map(|s| {
            ev.fleet
                .slot_lengths(s)
                .into_iter()
                .flat_map(|l| cands.of(s, l).iter().copied())
                .collect()
        })
        .collect();
    if pools.iter().any(Vec::is_empty) {
        return None;
    }
    'attempt: for _ in 0..PRIOR_ATTEMPTS {
        let mut ships = [0u64; NUM_SHIPS];
        let mut union = 0u64;
        for (s, pool) in pools.iter().enumerate() {
            let p = pool[rng.below(pool.len())];
            if p & union != 0 {
                // Rejecting the whole board (not just this ship) keeps the draw uniform.
                continue 'attempt;
            }
            ships[s] = p;
            union |= p;
        }
        if union & ev.hits == ev.hits && ev.fleet.matches(ships.map(|m| m.count_ones() as usize)) {
            return Some(ships);
        }
    }
    None
}

/// Finds some consistent board by depth-first search over shuffled candidates, for when
/// rejection fails (late in a game the prior rarely covers every hit). The result is not a
/// posterior draw; callers run the Markov chain from it. `None` when no consistent board exists
/// or the search exceeds [`SEARCH_NODES`] nodes.
pub(crate) fn search_consistent(
    ev: &Evidence,
    cands: &Candidates,
    rng: &mut Stream,
) -> Option<[u64; NUM_SHIPS]> {
    let mut budget = SEARCH_NODES;
    let mut assignments = ev.fleet.assignments();
    shuffle(&mut assignments, rng);
    for lens in assignments {
        let mut lists: Vec<Vec<u64>> = (0..NUM_SHIPS)
            .map(|s| cands.of(s, lens[s]).to_vec())
            .collect();
        lists.iter_mut().for_each(|l| shuffle(l, rng));
        let mut ships = [0u64; NUM_SHIPS];
        if search(ev, &lists, &lens, 0, 0, &mut ships, &mut budget) {
            return Some(ships);
        }
        if budget == 0 {
            return None;
        }
    }
    None
}

fn search(
    ev: &Evidence,
    lists: &[Vec<u64>],
    lens: &[usize; NUM_SHIPS],
    slot: usize,
    union: u64,
    ships: &mut [u64; NUM_SHIPS],
    budget: &mut usize,
) -> bool {
    if slot == NUM_SHIPS {
        return union & ev.hits == ev.hits;
    }
    // The remaining ships cannot cover more uncovered hits than they have cells.
    let remaining: usize = lens[slot..].iter().sum();
    if (ev.hits & !union).count_ones() as usize > remaining {
        return false;
    }
    for &p in &lists[slot] {
        if *budget == 0 {
            return false;
        }
        *budget -= 1;
        if p & union == 0 {
            ships[slot] = p;
            if search(ev, lists, lens, slot + 1, union | p, ships, budget) {
                return true;
            }
        }
    }
    false
}

/// Fisher–Yates shuffle from `rng`.
pub(crate) fn shuffle<T>(items: &mut [T], rng: &mut Stream) {
    for i in (1..items.len()).rev() {
        items.swap(i, rng.below(i + 1));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::board::Color;
    use crate::cell::Cell;

    fn shot(id: &str, hit: bool, color: Option<Color>, sunk: Option<Color>) -> ShotOutcome {
        ShotOutcome {
            cell: id.parse::<Cell>().expect("cell"),
            hit,
            color,
            sunk,
        }
    }

    #[test]
    fn fleets_are_validated_and_assignments_are_distinct() {
        assert_eq!(Fleet::labelled([5, 4, 3, 6]), Err(FleetError::BadLength(6)));
        assert_eq!(
            Fleet::unlabelled([1, 4, 3, 2]),
            Err(FleetError::BadLength(1))
        );
        assert_eq!(Fleet::paper().assignments(), vec![[5, 4, 3, 2]]);
        assert_eq!(Fleet::paper().ship_cells(), 14);
        let f = Fleet::unlabelled([4, 2, 4, 2]).expect("fleet");
        assert_eq!(f.lengths(), [2, 2, 4, 4]);
        assert_eq!(f.assignments().len(), 6);
        assert_eq!(
            Fleet::unlabelled([3; 4])
                .expect("fleet")
                .assignments()
                .len(),
            1
        );
        assert_eq!(
            Fleet::unlabelled([2, 3, 4, 5])
                .expect("fleet")
                .assignments()
                .len(),
            24
        );
    }

    #[test]
    fn colours_and_sinkings_constrain_single_ships() {
        let mut ev = Evidence::new(Fleet::unlabelled([2, 2, 3, 3]).expect("fleet"));
        ev.observe_shot(&shot("A1", true, Some(Color::Red), None));
        ev.observe_shot(&shot("C1", true, Some(Color::Green), None));
        ev.observe_shot(&shot("C2", true, Some(Color::Green), Some(Color::Green)));
        let a12 = 0b11;
        let c12 = 0b11 << 16;
        // Red must cover A1 and, being afloat, some cell not yet hit.
        assert!(ev.placement_ok(0, a12));
        assert!(!ev.placement_ok(0, 0b110));
        // Green is sunk: it is exactly its hits.
        assert!(ev.placement_ok(1, c12));
        assert!(!ev.placement_ok(1, 0b111 << 16));
        // Nobody else may take a coloured hit.
        assert!(!ev.placement_ok(2, 0b111));
        let rest = [a12, c12, 0b111 << 40, 0b111 << 48];
        assert!(ev.is_consistent(&rest));
        // Red and green swapped break the colour constraints.
        assert!(!ev.is_consistent(&[c12, a12, rest[2], rest[3]]));
        // A board with lengths 2, 2, 2, 3 is not this fleet.
        assert!(!ev.is_consistent(&[a12, c12, 0b11 << 40, rest[3]]));
    }

    #[test]
    fn likelihood_is_untempered_and_clamped() {
        assert!((untempered_likelihood(true, 0.1) - 0.9).abs() < 1e-12);
        assert!((untempered_likelihood(false, 0.1) - 0.1).abs() < 1e-12);
        assert_eq!(untempered_likelihood(false, 0.0), LIKELIHOOD_FLOOR);
        assert_eq!(untempered_likelihood(true, f64::NAN), 0.5);
        let w = reweight_untempered(&[1, 2], &[0.5, 0.5], 1, true, 0.1).expect("mass");
        assert!((w[0] - 0.9).abs() < 1e-12);
        let mut ev = Evidence::new(Fleet::paper());
        ev.observe_answer(1, true, 0.1);
        ev.observe_answer(1, false, 0.1);
        assert!((ev.log_likelihood(1) - (0.9f64.ln() + 0.1f64.ln())).abs() < 1e-12);
        assert!((ev.max_log_likelihood() - 2.0 * 0.9f64.ln()).abs() < 1e-12);
    }

    #[test]
    fn prior_draws_and_search_respect_the_shots() {
        let mut ev = Evidence::new(Fleet::paper());
        for (id, hit) in [("D4", true), ("D5", true), ("A1", false), ("H8", false)] {
            ev.observe_shot(&shot(id, hit, None, None));
        }
        let cands = ev.candidates();
        let mut rng = Stream::derive(7, 0);
        for _ in 0..50 {
            let ships = sample_prior(&ev, &cands, &mut rng).expect("a draw");
            assert!(ev.is_consistent(&ships));
        }
        let found = search_consistent(&ev, &cands, &mut rng).expect("a board");
        assert!(ev.is_consistent(&found));
        // Contradictory shots: nothing is found, and nothing panics.
        ev.observe_shot(&shot("D4", false, None, None));
        let cands = ev.candidates();
        assert_eq!(sample_prior(&ev, &cands, &mut rng), None);
        assert_eq!(search_consistent(&ev, &cands, &mut rng), None);
    }

    #[test]
    fn streams_are_deterministic_and_distinct() {
        let mut a = Stream::derive(1, 0);
        let mut b = Stream::derive(1, 0);
        let mut c = Stream::derive(1, 1);
        let xs: Vec<u64> = (0..4).map(|_| a.next_u64()).collect();
        let ys: Vec<u64> = (0..4).map(|_| b.next_u64()).collect();
        let zs: Vec<u64> = (0..4).map(|_| c.next_u64()).collect();
        assert_eq!(xs, ys);
        assert_ne!(xs, zs);
        assert!((0..1000).all(|_| a.below(7) < 7));
        assert_eq!(a.below(0), 0);
    }
}
