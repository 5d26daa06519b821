//! Numeric kernels over weighted board samples, with the reference's tie-breaking rules.
//!
//! Every sum runs in sample order and every argmax keeps the first (lowest index, or first in
//! catalogue order) maximum under a strict `>`, because the reference does so and the paper
//! results depend on it bit for bit.

use crate::belief::SampleSet;
use crate::cell::{Cell, cells_of, neighbours4};
use crate::questions::{Family, Question};

/// Tempering factor the reference applies to answer likelihoods (§2.3).
pub const EVIDENCE_SCALE: f64 = 0.8;
/// Floor and ceiling distance of a likelihood from 0 and 1.
pub const LIKELIHOOD_FLOOR: f64 = 1e-10;

/// The reference's `answerLikelihood`: with ε ≤ 0, 1 or 1e-10; otherwise the raw (1−ε or ε)
/// pulled toward 0.5 by the evidence scale 0.8 and clamped to [1e-10, 1−1e-10]. With ε = 0.1 this
/// is 0.82 on a match and 0.18 on a mismatch.
pub fn answer_likelihood(matches: bool, epsilon: f64) -> f64 {
    if epsilon <= 0.0 {
        return if matches { 1.0 } else { LIKELIHOOD_FLOOR };
    }
    let raw = if matches { 1.0 - epsilon } else { epsilon };
    let tempered = 0.5 + (raw - 0.5) * EVIDENCE_SCALE;
    tempered.clamp(LIKELIHOOD_FLOOR, 1.0 - LIKELIHOOD_FLOOR)
}

/// Per-cell probability that a ship is there: the sum (in sample order) of the weights of the
/// samples covering the cell. Revealed cells get 0.
pub fn hit_probabilities(samples: &SampleSet, revealed: u64) -> [f64; 64] {
    weighted_hit_probabilities(&samples.unions, &samples.weights, revealed)
}

/// [`hit_probabilities`] with an explicit weight vector (e.g. a reweighted branch).
pub fn weighted_hit_probabilities(unions: &[u64], weights: &[f64], revealed: u64) -> [f64; 64] {
    let mut p = [0.0; 64];
    for (&u, &w) in unions.iter().zip(weights) {
        let mut m = u & !revealed;
        while m != 0 {
            p[m.trailing_zeros() as usize] += w;
            m &= m - 1;
        }
    }
    p
}

/// The unrevealed cell with the highest probability; lowest index on ties (strict `>`). `None`
/// only when every cell is revealed.
pub fn best_cell(probs: &[f64; 64], revealed: u64) -> Option<(Cell, f64)> {
    let mut best: Option<(Cell, f64)> = None;
    for cell in cells_of(!revealed) {
        let p = probs[cell.index()];
        if best.is_none_or(|(_, b)| p > b) {
            best = Some((cell, p));
        }
    }
    best
}

/// Sum of the weights of the samples with a ship in `region` (noise-free P(yes)).
pub fn p_yes(samples: &SampleSet, region: u64) -> f64 {
    weighted_p_yes(&samples.unions, &samples.weights, region)
}

/// [`p_yes`] of the samples whose ship cells are `unions`, under `weights` in place of their
/// own (a preview's reweighted samples).
pub fn weighted_p_yes(unions: &[u64], weights: &[f64], region: u64) -> f64 {
    unions
        .iter()
        .zip(weights)
        .filter(|&(&u, _)| u & region != 0)
        .fold(0.0, |acc, (_, &w)| acc + w)
}

/// Sample weights after observing `answer` to the region question with the tempered likelihood,
/// normalized; `None` when the reweighted mass is 0.
pub fn reweight(samples: &SampleSet, region: u64, answer: bool, epsilon: f64) -> Option<Vec<f64>> {
    let yes = answer_likelihood(answer, epsilon);
    let no = answer_likelihood(!answer, epsilon);
    let mut weights: Vec<f64> = samples
        .unions
        .iter()
        .zip(&samples.weights)
        .map(|(&u, &w)| w * if u & region != 0 { yes } else { no })
        .collect();
    let total = weights.iter().fold(0.0, |a, &w| a + w);
    if total > 0.0 {
        weights.iter_mut().for_each(|w| *w /= total);
        Some(weights)
    } else {
        None
    }
}

/// Effective sample size 1/Σw².
pub fn ess(weights: &[f64]) -> f64 {
    let s = weights.iter().fold(0.0, |a, &w| a + w * w);
    if s > 0.0 { 1.0 / s } else { 0.0 }
}

/// Binary entropy in bits (0 at 0 and 1).
pub fn binary_entropy(p: f64) -> f64 {
    if p <= 0.0 || p >= 1.0 {
        0.0
    } else {
        -(p * p.log2() + (1.0 - p) * (1.0 - p).log2())
    }
}

/// Noisy expected information gain in bits (§3.4): H_b(ε + (1−2ε)·p_yes) − H_b(ε).
pub fn noisy_eig(p_yes: f64, epsilon: f64) -> f64 {
    binary_entropy(epsilon + (1.0 - 2.0 * epsilon) * p_yes) - binary_entropy(epsilon)
}

/// The reference's boardValue: hits / ship cells.
pub fn board_value(hits: u32, ship_cells: u32) -> f64 {
    if ship_cells == 0 {
        0.0
    } else {
        f64::from(hits) / f64::from(ship_cells)
    }
}

/// The sim.next preview of a shot with hit probability `p`: p·(h+1)/T + (1−p)·h/T, i.e.
/// (h + p)/T. Ranking shots by it is ranking them by `p`.
pub fn shot_value(p: f64, hits: u32, ship_cells: u32) -> f64 {
    p * board_value(hits + 1, ship_cells) + (1.0 - p) * board_value(hits, ship_cells)
}

/// A question's one-step preview (§4.5 item 2).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct QuestionValue {
    /// Noise-free P(yes).
    pub p_yes: f64,
    /// Best unknown-cell hit probability after a "yes" (None if that branch has no mass).
    pub best_after_yes: Option<f64>,
    /// Best unknown-cell hit probability after a "no" (None if that branch has no mass).
    pub best_after_no: Option<f64>,
    /// pYes·V_yes + (1−pYes)·V_no, where V_a is the best shot value in branch a, or the
    /// current boardValue when branch a has zero mass.
    pub value: f64,
}

/// Scores a question: P(yes), then for each answer the best hit probability over unknown cells
/// after a tempered reweighting, combined into the expected best-next-shot value.
pub fn question_value(
    samples: &SampleSet,
    region: u64,
    revealed: u64,
    epsilon: f64,
    hits: u32,
    ship_cells: u32,
) -> QuestionValue {
    let p = p_yes(samples, region);
    let branch = |answer: bool| {
        reweight(samples, region, answer, epsilon).and_then(|w| {
            let probs = weighted_hit_probabilities(&samples.unions, &w, revealed);
            best_cell(&probs, revealed).map(|(_, m)| m)
        })
    };
    let (yes, no) = (branch(true), branch(false));
    let v = |m: Option<f64>| {
        m.map_or(board_value(hits, ship_cells), |m| {
            shot_value(m, hits, ship_cells)
        })
    };
    QuestionValue {
        p_yes: p,
        best_after_yes: yes,
        best_after_no: no,
        value: p * v(yes) + (1.0 - p) * v(no),
    }
}

/// Unknown 4-neighbours of hit cells (no sunk inference, as in the reference).
pub fn frontier(hits: u64, misses: u64) -> u64 {
    neighbours4(hits) & !(hits | misses)
}

/// 4-connected components of the hit cells, ordered by their lowest cell.
pub fn hit_clusters(hits: u64) -> Vec<u64> {
    let mut rest = hits;
    let mut clusters = Vec::new();
    while rest != 0 {
        let mut c = rest & rest.wrapping_neg();
        loop {
            let grown = (c | neighbours4(c)) & hits;
            if grown == c {
                break;
            }
            c = grown;
        }
        clusters.push(c);
        rest &= !c;
    }
    clusters
}

/// Split quality 1 − |2·p_yes − 1|: 1 for an even split, 0 for a sure answer.
pub fn split_quality(p_yes: f64) -> f64 {
    1.0 - (2.0 * p_yes - 1.0).abs()
}

/// Region masses of the world summary (§4.5 item 3): cell masses (hit probabilities of unknown
/// cells) accumulated in cell order into rows, columns, quadrants and 2×2 blocks.
#[derive(Clone, Debug, PartialEq)]
pub struct RegionMasses {
    /// Mass per cell (0 on revealed cells).
    pub cell: [f64; 64],
    /// Sum per row.
    pub row: [f64; 8],
    /// Sum per column.
    pub col: [f64; 8],
    /// Sum per quadrant (top-left, top-right, bottom-left, bottom-right).
    pub quadrant: [f64; 4],
    /// The reference's block mass: each cell counts only toward the block anchored at
    /// (min(r, 6), min(c, 6)), so a block's mass is mostly its top-left cell's.
    pub block: [f64; 49],
}

impl RegionMasses {
    /// Accumulates the masses from hit probabilities and the unknown-cell mask.
    pub fn new(probs: &[f64; 64], unknown: u64) -> Self {
        let mut m = Self {
            cell: [0.0; 64],
            row: [0.0; 8],
            col: [0.0; 8],
            quadrant: [0.0; 4],
            block: [0.0; 49],
        };
        for cell in cells_of(unknown) {
            let (r, c, x) = (cell.row(), cell.col(), probs[cell.index()]);
            m.cell[cell.index()] = x;
            m.row[r] += x;
            m.col[c] += x;
            m.quadrant[(r / 4) * 2 + c / 4] += x;
            m.block[r.min(6) * 7 + c.min(6)] += x;
        }
        m
    }

    /// A question's normalized region mass, clamped to [0, 1]: row and column mass / 8,
    /// quadrant / 16, block (with the quirk) / 4, anything else the mean cell mass of the region.
    pub fn of(&self, question: &Question) -> f64 {
        let top_left = question.region.trailing_zeros() as usize;
        let (r, c) = (top_left / 8, top_left % 8);
        let v = match question.family {
            Family::Row => self.row[r.min(7)] / 8.0,
            Family::Column => self.col[c] / 8.0,
            Family::Quadrant => self.quadrant[((r / 4) * 2 + c / 4).min(3)] / 16.0,
            Family::Block2x2 => self.block[(r.min(6)) * 7 + c.min(6)] / 4.0,
            _ => {
                let n = question.region.count_ones();
                let sum =
                    cells_of(question.region).fold(0.0, |a, cell| a + self.cell[cell.index()]);
                if n == 0 { 0.0 } else { sum / f64::from(n) }
            }
        };
        v.clamp(0.0, 1.0)
    }
}

fn rows_cols(mask: u64) -> (u8, u8) {
    cells_of(mask).fold((0u8, 0u8), |(r, c), cell| {
        (r | 1 << cell.row(), c | 1 << cell.col())
    })
}

/// Cluster relevance of a region: for each hit cluster, max(shared rows, shared columns) /
/// max(cluster rows, cluster columns); the maximum over clusters, 0 without clusters.
pub fn cluster_relevance(region: u64, clusters: &[u64]) -> f64 {
    let (rr, rc) = rows_cols(region);
    clusters.iter().fold(0.0, |best: f64, &cluster| {
        let (cr, cc) = rows_cols(cluster);
        let shared = (rr & cr).count_ones().max((rc & cc).count_ones());
        let span = cr.count_ones().max(cc.count_ones());
        let rel = if span == 0 {
            0.0
        } else {
            f64::from(shared) / f64::from(span)
        };
        if rel > best { rel } else { best }
    })
}

/// WMA's coarse scorer: raw + 0.015·split + 0.005·mass.
pub fn adjusted_coarse(raw: f64, split: f64, mass: f64) -> f64 {
    raw + 0.015 * split + 0.005 * mass
}

/// The salvage scorer: raw + 0.03·split + 0.035·mass + 0.025·relevance.
pub fn adjusted_salvage(raw: f64, split: f64, mass: f64, relevance: f64) -> f64 {
    raw + 0.03 * split + 0.035 * mass + 0.025 * relevance
}

/// Which bonus scheme scores a question.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scorer {
    /// [`adjusted_coarse`].
    Coarse,
    /// [`adjusted_salvage`].
    Salvage,
}

/// Everything the planners record about one scored question.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ScoredQuestion {
    /// The preview.
    pub preview: QuestionValue,
    /// Split quality.
    pub split: f64,
    /// Region mass.
    pub mass: f64,
    /// Cluster relevance.
    pub relevance: f64,
    /// Adjusted score.
    pub adjusted: f64,
}

/// Shared per-turn context for scoring many questions.
#[derive(Clone, Debug)]
pub struct ScoringContext<'a> {
    /// The belief's samples.
    pub samples: &'a SampleSet,
    /// Revealed cells.
    pub revealed: u64,
    /// Hit cells.
    pub hits: u64,
    /// Ship cells on the board (14 in the paper protocol).
    pub ship_cells: u32,
    /// Flip probability used for the tempered reweighting.
    pub epsilon: f64,
    /// Region masses of the current belief.
    pub masses: RegionMasses,
    /// Hit clusters.
    pub clusters: Vec<u64>,
}

impl<'a> ScoringContext<'a> {
    /// Builds the context (hit probabilities, masses and clusters) for one turn.
    pub fn new(
        samples: &'a SampleSet,
        hits: u64,
        misses: u64,
        ship_cells: u32,
        epsilon: f64,
    ) -> Self {
        let revealed = hits | misses;
        let probs = hit_probabilities(samples, revealed);
        Self {
            samples,
            revealed,
            hits,
            ship_cells,
            epsilon,
            masses: RegionMasses::new(&probs, !revealed),
            clusters: hit_clusters(hits),
        }
    }

    /// Scores one question with the given bonus scheme.
    pub fn score(&self, question: &Question, scorer: Scorer) -> ScoredQuestion {
        let preview = question_value(
            self.samples,
            question.region,
            self.revealed,
            self.epsilon,
            self.hits.count_ones(),
            self.ship_cells,
        );
        let split = split_quality(preview.p_yes);
        let mass = self.masses.of(question);
        let (relevance, adjusted) = match scorer {
            Scorer::Coarse => (0.0, adjusted_coarse(preview.value, split, mass)),
            Scorer::Salvage => {
                let rel = cluster_relevance(question.region, &self.clusters);
                (rel, adjusted_salvage(preview.value, split, mass, rel))
            }
        };
        ScoredQuestion {
            preview,
            split,
            mass,
            relevance,
            adjusted,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(unions: &[u64]) -> SampleSet {
        let n = unions.len() as f64;
        SampleSet {
            ships: unions.iter().map(|&u| [u, 0, 0, 0]).collect(),
            unions: unions.to_vec(),
            weights: vec![1.0 / n; unions.len()],
        }
    }

    #[test]
    fn likelihood_is_tempered() {
        assert!((answer_likelihood(true, 0.1) - 0.82).abs() < 1e-12);
        assert!((answer_likelihood(false, 0.1) - 0.18).abs() < 1e-12);
        assert_eq!(answer_likelihood(false, 0.0), 1e-10);
    }

    #[test]
    fn hit_probabilities_and_ties() {
        let s = set(&[0b11, 0b110, 0b100]);
        let p = hit_probabilities(&s, 0);
        assert!((p[1] - 2.0 / 3.0).abs() < 1e-12 && (p[2] - 2.0 / 3.0).abs() < 1e-12);
        assert_eq!(best_cell(&p, 0).map(|(c, _)| c.index()), Some(1));
        assert_eq!(best_cell(&p, 0b10).map(|(c, _)| c.index()), Some(2));
        assert_eq!(best_cell(&p, u64::MAX), None);
    }

    #[test]
    fn eig_peaks_at_even_split() {
        assert!((noisy_eig(0.5, 0.1) - 0.531).abs() < 1e-3);
        assert!(noisy_eig(0.0, 0.1).abs() < 1e-12);
        assert!(noisy_eig(0.3, 0.1) < noisy_eig(0.5, 0.1));
    }

    #[test]
    fn question_value_and_zero_mass_fallback() {
        let s = set(&[0b1, 0b10]);
        let q = question_value(&s, 0b1, 0, 0.1, 0, 14);
        assert!((q.p_yes - 0.5).abs() < 1e-12);
        assert!((q.best_after_yes.unwrap() - 0.82).abs() < 1e-12);
        assert!((q.value - 0.82 / 14.0).abs() < 1e-12);
        // With ε = 0 a mismatching branch keeps 1e-10 mass; with zero prior weight the branch
        // is empty and falls back to the current board value.
        let empty = SampleSet {
            ships: vec![[1, 0, 0, 0]],
            unions: vec![1],
            weights: vec![0.0],
        };
        let q = question_value(&empty, 0b1, 0, 0.1, 3, 14);
        assert_eq!(q.best_after_yes, None);
        assert!((q.value - 3.0 / 14.0).abs() < 1e-12);
    }

    #[test]
    fn frontier_and_clusters() {
        let c = |s: &str| s.parse::<Cell>().unwrap().bit();
        let hits = c("B2") | c("B3") | c("E5");
        let clusters = hit_clusters(hits);
        assert_eq!(clusters, vec![c("B2") | c("B3"), c("E5")]);
        let f = frontier(hits, c("A2"));
        assert_eq!(f.count_ones(), 5 + 4);
        assert_eq!(f & c("A2"), 0);
        // A region sharing row B with a one-row cluster spanning two columns: 1 / 2.
        assert!((cluster_relevance(c("B7") | c("B8"), &clusters[..1]) - 0.5).abs() < 1e-12);
        assert!((cluster_relevance(0xFF << 8, &clusters) - 1.0).abs() < 1e-12);
        assert_eq!(cluster_relevance(0xFF, &[]), 0.0);
    }

    #[test]
    fn block_mass_quirk() {
        let mut probs = [0.0; 64];
        probs[9] = 0.5; // B2 belongs to block B2-C3 only
        probs[63] = 0.8; // H8 belongs to block G7-H8
        let m = RegionMasses::new(&probs, u64::MAX);
        let cat = crate::questions::catalogue();
        let a1 = &cat[34]; // block A1-B2 contains B2 but does not collect its mass
        assert_eq!(m.of(a1), 0.0);
        let b2 = cat.iter().find(|q| q.id == "block-2x2:B2-C3").unwrap();
        assert!((m.of(b2) - 0.125).abs() < 1e-12);
        assert!((m.of(&cat[82]) - 0.2).abs() < 1e-12);
        assert!((m.of(&cat[1]) - 0.5 / 8.0).abs() < 1e-12);
        assert!((m.of(&cat[16]) - 0.5 / 16.0).abs() < 1e-12);
        assert!((split_quality(0.25) - 0.5).abs() < 1e-12);
    }
}
