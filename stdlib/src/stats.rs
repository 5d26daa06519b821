//! Statistics for experiments: Wilson score intervals, seeded bootstrap intervals (plain,
//! paired and of a difference between two groups), McNemar's exact test, a seeded permutation
//! test, Cohen's d, sequence similarity and EMAs.
//!
//! Everything here is deterministic: the bootstrap draws from a generator seeded by the caller,
//! so the same inputs and seed always give the same interval.

use std::cell::RefCell;
use std::rc::Rc;

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde::{Deserialize, Serialize};
use statrs::distribution::{Binomial, ContinuousCDF, DiscreteCDF, Normal};

/// A two-sided interval around a point estimate.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Interval {
    /// The point estimate.
    pub estimate: f64,
    /// The lower bound.
    pub lo: f64,
    /// The upper bound.
    pub hi: f64,
}

/// The two-sided standard-normal quantile for a confidence level, e.g. 1.959964 for 0.95.
///
/// Levels outside (0, 1) are clamped to a sane range rather than producing NaN.
pub fn normal_quantile(level: f64) -> f64 {
    let level = level.clamp(1e-9, 1.0 - 1e-9);
    // The constructor only fails for a non-positive standard deviation, which 1.0 is not.
    let standard = Normal::standard();
    standard.inverse_cdf(0.5 + level / 2.0)
}

/// The Wilson score interval for `successes` out of `trials` at the given confidence level.
///
/// With no trials the estimate is 0 and the interval is the whole of [0, 1]: nothing is known.
pub fn wilson(successes: u64, trials: u64, level: f64) -> Interval {
    if trials == 0 {
        return Interval {
            estimate: 0.0,
            lo: 0.0,
            hi: 1.0,
        };
    }
    let n = trials as f64;
    let p = successes.min(trials) as f64 / n;
    let z = normal_quantile(level);
    let z2 = z * z;
    let denominator = 1.0 + z2 / n;
    let centre = (p + z2 / (2.0 * n)) / denominator;
    let half = z * ((p * (1.0 - p) / n + z2 / (4.0 * n * n)).sqrt()) / denominator;
    // At p = 0 and p = 1 the bound is exactly 0 or 1; the closed form only gets there up to
    // rounding, so the edges are set exactly.
    let lo = if successes == 0 {
        0.0
    } else {
        (centre - half).max(0.0)
    };
    let hi = if successes >= trials {
        1.0
    } else {
        (centre + half).min(1.0)
    };
    Interval {
        estimate: p,
        lo,
        hi,
    }
}

/// The arithmetic mean, or 0 for an empty slice.
pub fn mean(values: &[f64]) -> f64 {
    if values.is_empty() {
        0.0
    } else {
        values.iter().sum::<f64>() / values.len() as f64
    }
}

/// A percentile-bootstrap interval for the mean of `values`.
///
/// `resamples` resamples are drawn with replacement from a generator seeded with `seed`; the
/// interval is read off the sorted resample means at the two tails of `level`. An empty input
/// gives a degenerate interval at 0.
pub fn bootstrap_mean(values: &[f64], resamples: usize, level: f64, seed: u64) -> Interval {
    let estimate = mean(values);
    if values.is_empty() || resamples == 0 {
        return Interval {
            estimate,
            lo: estimate,
            hi: estimate,
        };
    }
    let n = values.len();
    let mut means: Vec<f64> = match resample_draws(n, resamples, seed) {
        Some(draws) => draws
            .chunks_exact(n)
            .map(|row| row.iter().map(|&i| values[i as usize]).sum::<f64>() / n as f64)
            .collect(),
        None => {
            let mut rng = StdRng::seed_from_u64(seed);
            (0..resamples)
                .map(|_| (0..n).map(|_| values[rng.random_range(0..n)]).sum::<f64>() / n as f64)
                .collect()
        }
    };
    means.sort_by(f64::total_cmp);
    let tail = (1.0 - level.clamp(0.0, 1.0)) / 2.0;
    let at = |q: f64| {
        let index = ((resamples - 1) as f64 * q).round() as usize;
        means[index.min(resamples - 1)]
    };
    Interval {
        estimate,
        lo: at(tail),
        hi: at(1.0 - tail),
    }
}

/// The largest table of resample draws [`resample_draws`] keeps: 4 Mi indices (16 MiB).
const MAX_CACHED_DRAWS: usize = 1 << 22;

/// How many tables of resample draws [`resample_draws`] keeps per thread.
const CACHED_TABLES: usize = 4;

/// A table of resample draws and what it was drawn for: (sample size, resamples, seed).
type DrawTable = ((usize, usize, u64), Rc<[u32]>);

thread_local! {
    /// The resample draws of recent bootstraps, newest last.
    static DRAWS: RefCell<Vec<DrawTable>> =
        const { RefCell::new(Vec::new()) };
}

/// The indices a bootstrap of `n` values draws: `resamples` rows of `n` indices, exactly the
/// draws of `random_range(0..n)` in turn from a generator seeded with `seed`, or `None` when the
/// table would be too large to keep (the caller then draws as it goes).
///
/// The draws depend only on `n`, `resamples` and `seed`, never on the values, and a report
/// bootstraps dozens of intervals of the same sample size with the same seed (every arm's
/// summaries, every contrast, every instance's effect). Drawing them once and reading them
/// again gives the same intervals bit for bit, at the cost of a gather instead of a generator
/// call per draw.
fn resample_draws(n: usize, resamples: usize, seed: u64) -> Option<Rc<[u32]>> {
    let size = n.checked_mul(resamples)?;
    if size > MAX_CACHED_DRAWS || u32::try_from(n).is_err() {
        return None;
    }
    let key = (n, resamples, seed);
    DRAWS.with(|cell| {
        let mut tables = cell.borrow_mut();
        if let Some(at) = tables.iter().position(|(k, _)| *k == key) {
            let entry = tables.remove(at);
            let draws = entry.1.clone();
            tables.push(entry);
            return Some(draws);
        }
        let mut rng = StdRng::seed_from_u64(seed);
        // `n` fits in a `u32` (checked above), so every index does too.
        let draws: Rc<[u32]> = (0..size).map(|_| rng.random_range(0..n) as u32).collect();
        if tables.len() == CACHED_TABLES {
            tables.remove(0);
        }
        tables.push((key, draws.clone()));
        Some(draws)
    })
}

/// A percentile-bootstrap interval for the mean difference `treatment[i] - baseline[i]` of
/// paired observations: each resample draws pairs, not the two sides independently, so what the
/// two sides share (the instance, the seed) cancels out of the interval.
///
/// The slices must have equal lengths; extra elements of the longer one are ignored.
pub fn paired_bootstrap(
    treatment: &[f64],
    baseline: &[f64],
    resamples: usize,
    level: f64,
    seed: u64,
) -> Interval {
    let differences: Vec<f64> = treatment.iter().zip(baseline).map(|(t, b)| t - b).collect();
    bootstrap_mean(&differences, resamples, level, seed)
}

/// McNemar's exact two-sided test for paired binary outcomes: `b` pairs where only the
/// treatment succeeded, `c` where only the baseline did. Under the null hypothesis that both
/// are equally likely, the smaller count is binomial with `b + c` trials and probability ½; the
/// p-value is twice its lower tail, at most 1. With no discordant pair the p-value is 1.
pub fn mcnemar_exact(b: u64, c: u64) -> f64 {
    let n = b + c;
    if n == 0 {
        return 1.0;
    }
    // The probability ½ is valid, so the constructor cannot fail; 1.0 is the safe answer.
    match Binomial::new(0.5, n) {
        Ok(binomial) => (2.0 * binomial.cdf(b.min(c))).min(1.0),
        Err(_) => 1.0,
    }
}

/// A percentile-bootstrap interval for `stat(a) - stat(b)` of two independent groups: each
/// resample draws each group with replacement from itself (same sizes), with a generator
/// seeded by `seed`.
pub fn bootstrap_difference<T: Clone>(
    a: &[T],
    b: &[T],
    stat: impl Fn(&[T]) -> f64,
    resamples: usize,
    level: f64,
    seed: u64,
) -> Interval {
    bootstrap_difference_of(a, b, &stat, &stat, resamples, level, seed)
}

/// [`bootstrap_difference`] with a statistic of its own for each group: `stat_a(a) −
/// stat_b(b)`, for groups whose statistic reads data of its own (a similarity matrix per group).
pub fn bootstrap_difference_of<T: Clone>(
    a: &[T],
    b: &[T],
    stat_a: impl Fn(&[T]) -> f64,
    stat_b: impl Fn(&[T]) -> f64,
    resamples: usize,
    level: f64,
    seed: u64,
) -> Interval {
    let estimate = stat_a(a) - stat_b(b);
    if a.is_empty() || b.is_empty() || resamples == 0 {
        return Interval {
            estimate,
            lo: estimate,
            hi: estimate,
        };
    }
    let mut rng = StdRng::seed_from_u64(seed);
    let draw = |group: &[T], rng: &mut StdRng| -> Vec<T> {
        (0..group.len())
            .map(|_| group[rng.random_range(0..group.len())].clone())
            .collect()
    };
    let mut diffs: Vec<f64> = (0..resamples)
        .map(|_| {
            let ra = draw(a, &mut rng);
            let rb = draw(b, &mut rng);
            stat_a(&ra) - stat_b(&rb)
        })
        .collect();
    diffs.sort_by(f64::total_cmp);
    let tail = (1.0 - level.clamp(0.0, 1.0)) / 2.0;
    let at = |q: f64| diffs[(((resamples - 1) as f64 * q).round() as usize).min(resamples - 1)];
    Interval {
        estimate,
        lo: at(tail),
        hi: at(1.0 - tail),
    }
}

/// A two-sided permutation test of `stat(a) - stat(b)`: the groups are pooled and relabelled
/// `iterations` times at random (group sizes kept, generator seeded by `seed`), and the p-value
/// is the share of relabellings whose absolute difference is at least the observed one, counting
/// the observed labelling itself: `(1 + hits) / (1 + iterations)`, so it is never 0.
pub fn permutation_test<T: Clone>(
    a: &[T],
    b: &[T],
    stat: impl Fn(&[T]) -> f64,
    iterations: usize,
    seed: u64,
) -> f64 {
    let observed = (stat(a) - stat(b)).abs();
    let mut pooled: Vec<T> = a.iter().chain(b).cloned().collect();
    let mut rng = StdRng::seed_from_u64(seed);
    // A tolerance keeps relabellings that tie the observed difference from being missed by
    // rounding.
    let tolerance = 1e-12 * observed.max(1.0);
    let mut hits = 0usize;
    for _ in 0..iterations {
        // A Fisher-Yates shuffle; the first |a| items form the relabelled first group.
        for i in (1..pooled.len()).rev() {
            let j = rng.random_range(0..=i);
            pooled.swap(i, j);
        }
        let (left, right) = pooled.split_at(a.len());
        if (stat(left) - stat(right)).abs() + tolerance >= observed {
            hits += 1;
        }
    }
    (1 + hits) as f64 / (1 + iterations) as f64
}

/// Cohen's d of two groups: the difference of their means over the pooled standard deviation
/// (with n − 1 denominators). `None` when a group has fewer than two values, or when both groups
/// are constant and differ (the effect is unbounded); two equal constant groups give 0.
pub fn cohens_d(a: &[f64], b: &[f64]) -> Option<f64> {
    let (na, nb) = (a.len(), b.len());
    if na < 2 || nb < 2 {
        return None;
    }
    let (ma, mb) = (mean(a), mean(b));
    let ss = |values: &[f64], m: f64| values.iter().map(|v| (v - m) * (v - m)).sum::<f64>();
    let pooled = ((ss(a, ma) + ss(b, mb)) / (na + nb - 2) as f64).sqrt();
    if pooled == 0.0 {
        return (ma == mb).then_some(0.0);
    }
    Some((ma - mb) / pooled)
}

/// The Levenshtein edit distance between two sequences, with items compared exactly.
pub fn levenshtein<T: PartialEq>(a: &[T], b: &[T]) -> usize {
    let mut previous: Vec<usize> = (0..=b.len()).collect();
    let mut current = vec![0; b.len() + 1];
    for (i, x) in a.iter().enumerate() {
        current[0] = i + 1;
        for (j, y) in b.iter().enumerate() {
            let substitute = previous[j] + usize::from(x != y);
            current[j + 1] = substitute.min(previous[j + 1] + 1).min(current[j] + 1);
        }
        std::mem::swap(&mut previous, &mut current);
    }
    previous[b.len()]
}

/// The normalised similarity of two sequences: `1 − lev(a, b) / max(|a|, |b|)`, and 1 when both
/// are empty.
pub fn sequence_similarity<T: PartialEq>(a: &[T], b: &[T]) -> f64 {
    let longest = a.len().max(b.len());
    if longest == 0 {
        return 1.0;
    }
    1.0 - levenshtein(a, b) as f64 / longest as f64
}

/// An exponential moving average: the first value is taken as is, then
/// `next = (1 - alpha) * previous + alpha * value`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct Ema {
    value: Option<f64>,
}

impl Ema {
    /// Folds one observation into the average.
    pub fn update(&mut self, alpha: f64, value: f64) -> f64 {
        let next = match self.value {
            None => value,
            Some(previous) => (1.0 - alpha) * previous + alpha * value,
        };
        self.value = Some(next);
        next
    }

    /// The current average, if any value has been seen.
    pub fn get(&self) -> Option<f64> {
        self.value
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sequence_similarity_compares_items_exactly() {
        assert_eq!(sequence_similarity(&["a", "b"], &["a", "B"]), 0.5);
        assert_eq!(sequence_similarity::<&str>(&[], &[]), 1.0);
        assert_eq!(
            levenshtein(
                &['k', 'i', 't', 't', 'e', 'n'],
                &['s', 'i', 't', 't', 'i', 'n', 'g']
            ),
            3
        );
        assert_eq!(sequence_similarity(&[1, 2, 3], &[1, 2, 3]), 1.0);
        assert_eq!(sequence_similarity(&[1], &[2, 3]), 0.0);
    }

    #[test]
    fn cohens_d_uses_the_pooled_deviation() {
        // Means 2 and 3, each group's variance 1: d = -1.
        assert_eq!(cohens_d(&[1.0, 2.0, 3.0], &[2.0, 3.0, 4.0]), Some(-1.0));
        assert_eq!(cohens_d(&[1.0, 1.0], &[1.0, 1.0]), Some(0.0));
        assert_eq!(cohens_d(&[1.0, 1.0], &[0.0, 0.0]), None);
        assert_eq!(cohens_d(&[1.0], &[0.0, 0.0]), None);
    }

    #[test]
    fn the_permutation_test_separates_different_groups_and_not_equal_ones() {
        let mean_of = |v: &[f64]| mean(v);
        let a = vec![1.0; 30];
        let b = vec![0.0; 30];
        let p = permutation_test(&a, &b, mean_of, 2000, 7);
        assert!(p < 0.001, "{p}");
        assert_eq!(p, permutation_test(&a, &b, mean_of, 2000, 7), "seeded");
        let mixed: Vec<f64> = (0..30).map(|i| f64::from(i % 2)).collect();
        let p = permutation_test(&mixed, &mixed, mean_of, 2000, 7);
        assert!(p > 0.5, "{p}");
        let ci = bootstrap_difference(&a, &b, mean_of, 500, 0.95, 3);
        assert_eq!((ci.estimate, ci.lo, ci.hi), (1.0, 1.0, 1.0));
        let ci = bootstrap_difference(&mixed, &b, mean_of, 2000, 0.95, 3);
        assert!(
            ci.lo > 0.2 && ci.hi < 0.8 && ci.lo < 0.5 && ci.hi > 0.5,
            "{ci:?}"
        );
    }

    fn percent(x: f64) -> f64 {
        (x * 1000.0).round() / 10.0
    }

    #[test]
    fn wilson_matches_the_published_intervals_for_54_games() {
        // The reference lists these 95% intervals for its ablation table (n = 54).
        for (wins, lo, hi) in [
            (27, 37.1, 62.9),
            (40, 61.1, 83.9),
            (31, 44.2, 69.7),
            (29, 40.6, 66.3),
            (33, 47.8, 73.0),
        ] {
            let interval = wilson(wins, 54, 0.95);
            assert_eq!(
                (percent(interval.lo), percent(interval.hi)),
                (lo, hi),
                "{wins}/54"
            );
        }
    }

    #[test]
    fn wilson_handles_the_edges() {
        assert_eq!(
            wilson(0, 0, 0.95),
            Interval {
                estimate: 0.0,
                lo: 0.0,
                hi: 1.0
            }
        );
        let all = wilson(10, 10, 0.95);
        assert_eq!(all.hi, 1.0);
        assert!(all.lo > 0.69 && all.lo < 0.73, "{all:?}");
        let none = wilson(0, 10, 0.95);
        assert_eq!(none.lo, 0.0);
    }

    #[test]
    fn bootstrap_is_deterministic_and_brackets_the_mean() {
        let values: Vec<f64> = (0..54).map(|i| (i % 7) as f64 / 7.0).collect();
        let a = bootstrap_mean(&values, 2000, 0.95, 7);
        let b = bootstrap_mean(&values, 2000, 0.95, 7);
        assert_eq!(a, b);
        assert!(a.lo < a.estimate && a.estimate < a.hi, "{a:?}");
        assert!(a.hi - a.lo < 0.2, "{a:?}");
    }

    #[test]
    fn cached_draws_give_the_intervals_of_drawing_as_you_go() {
        // The draws of the original loop, one generator call per draw, for comparison.
        let direct = |values: &[f64], resamples: usize, seed: u64| -> Vec<f64> {
            let mut rng = StdRng::seed_from_u64(seed);
            let n = values.len();
            let mut means: Vec<f64> = (0..resamples)
                .map(|_| (0..n).map(|_| values[rng.random_range(0..n)]).sum::<f64>() / n as f64)
                .collect();
            means.sort_by(f64::total_cmp);
            means
        };
        for n in [1, 2, 5, 54, 55] {
            let values: Vec<f64> = (0..n).map(|i| ((i * 37) % 11) as f64 / 3.0).collect();
            let means = direct(&values, 2000, 0x5eed_ab1a);
            let tail = (1.0 - 0.95) / 2.0;
            let at = |q: f64| means[((1999.0 * q).round() as usize).min(1999)];
            // Twice, so the second reads the cached table.
            for _ in 0..2 {
                let interval = bootstrap_mean(&values, 2000, 0.95, 0x5eed_ab1a);
                assert_eq!(interval.lo.to_bits(), at(tail).to_bits(), "n = {n}");
                assert_eq!(interval.hi.to_bits(), at(1.0 - tail).to_bits(), "n = {n}");
            }
        }
    }

    #[test]
    fn paired_intervals_cancel_what_the_pairs_share() {
        // Large per-pair differences in level, a constant treatment effect of 0.1.
        let baseline: Vec<f64> = (0..40).map(|i| (i % 10) as f64 / 10.0).collect();
        let treatment: Vec<f64> = baseline.iter().map(|b| b + 0.1).collect();
        let paired = paired_bootstrap(&treatment, &baseline, 2000, 0.95, 3);
        assert!((paired.estimate - 0.1).abs() < 1e-12);
        assert!(paired.hi - paired.lo < 1e-9, "{paired:?}");
        // Unpaired, the same data give a wide interval for the difference of means.
        let t = bootstrap_mean(&treatment, 2000, 0.95, 3);
        let b = bootstrap_mean(&baseline, 2000, 0.95, 4);
        assert!(t.hi - t.lo > 0.1 && b.hi - b.lo > 0.1);
    }

    #[test]
    fn mcnemar_matches_the_binomial_tail() {
        assert_eq!(mcnemar_exact(0, 0), 1.0);
        assert_eq!(mcnemar_exact(3, 3), 1.0);
        // 10 discordant pairs all one way: 2 * 0.5^10.
        assert!((mcnemar_exact(10, 0) - 2.0 / 1024.0).abs() < 1e-12);
        // b = 1, c = 9: 2 * (1 + 10) / 1024.
        assert!((mcnemar_exact(1, 9) - 22.0 / 1024.0).abs() < 1e-12);
        assert_eq!(mcnemar_exact(1, 9), mcnemar_exact(9, 1));
    }

    #[test]
    fn ema_starts_at_the_first_value_then_weights_by_alpha() {
        let mut ema = Ema::default();
        assert_eq!(ema.get(), None);
        assert_eq!(ema.update(0.25, 0.8), 0.8);
        assert!((ema.update(0.25, 0.0) - 0.6).abs() < 1e-12);
    }
}
