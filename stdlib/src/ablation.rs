//! Experiment statistics over declared metrics: per-arm summaries with intervals, paired
//! contrasts between arms, per-instance effects and the heavy-lifting verdict.
//!
//! The input is one [`Sample`] per finished episode: which unit it was (instance, seed,
//! replicate) and the value of each metric. What a metric means comes from its
//! [`MetricSpec`]: rates get Wilson intervals, means and counts bootstrap intervals. A contrast
//! between two arms is *paired*: it uses only the units both arms played, so that what a unit's
//! instance and seed contribute to both sides cancels out; its interval is a paired bootstrap,
//! and for rates McNemar's exact test gives a p-value. A layer is heavy-lifting iff it has the
//! single largest positive marginal on the primary metric (the seed paper's pre-registered
//! rule), where "positive" follows the metric's better direction.

use std::collections::BTreeMap;

use harness_runtime::{Better, MetricKind, MetricSpec};
use serde::{Deserialize, Serialize};

use crate::stats::{Interval, bootstrap_mean, mcnemar_exact, paired_bootstrap, wilson};

/// The confidence level of every interval in a report.
pub const LEVEL: f64 = 0.95;
/// Bootstrap resamples per interval.
pub const RESAMPLES: usize = 2000;
/// Seed of the bootstrap generator, fixed so that reports are reproducible.
pub const BOOTSTRAP_SEED: u64 = 0x5eed_ab1a;

/// Which episode of a plan a sample is: the unit that two arms are paired on.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct UnitKey {
    /// The game instance.
    pub instance: String,
    /// The seed of the episode's random streams.
    pub seed: u64,
    /// The replicate (repeated runs of one instance and seed, which differ only in what an LLM
    /// answers).
    pub replicate: u32,
}

/// One finished episode's metric values, in the order of the metric list the caller uses.
/// A rate is 1 or 0; a metric the episode did not report is `None`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Sample {
    /// The unit.
    pub key: UnitKey,
    /// The values, aligned with the caller's metric list.
    pub values: Vec<Option<f64>>,
}

/// A metric aggregated over one arm's episodes.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MetricSummary {
    /// The metric's name.
    pub metric: String,
    /// Episodes that reported it.
    pub n: usize,
    /// The rate or mean, with its 95% interval (Wilson for rates, bootstrap otherwise).
    pub value: Interval,
    /// For rates, the episodes where it held.
    pub successes: Option<u64>,
}

/// The values of metric `index` over `samples`, skipping episodes that did not report it.
fn column(samples: &[Sample], index: usize) -> Vec<f64> {
    samples
        .iter()
        .filter_map(|sample| sample.values.get(index).copied().flatten())
        .collect()
}

/// Aggregates metric `index` (declared by `spec`) over one arm's samples, in sample order (the
/// bootstrap's draws depend on it, so callers keep a fixed order).
pub fn summarize(spec: &MetricSpec, samples: &[Sample], index: usize) -> MetricSummary {
    let values = column(samples, index);
    match spec.kind {
        MetricKind::Rate => {
            let successes = values.iter().filter(|&&v| v > 0.5).count() as u64;
            MetricSummary {
                metric: spec.name.clone(),
                n: values.len(),
                value: wilson(successes, values.len() as u64, LEVEL),
                successes: Some(successes),
            }
        }
        MetricKind::Mean | MetricKind::Count => MetricSummary {
            metric: spec.name.clone(),
            n: values.len(),
            value: bootstrap_mean(&values, RESAMPLES, LEVEL, BOOTSTRAP_SEED),
            successes: None,
        },
    }
}

/// A paired contrast of one metric between a treatment arm and a baseline arm.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Contrast {
    /// The metric's name.
    pub metric: String,
    /// Units both arms played and reported the metric on.
    pub pairs: usize,
    /// The mean paired difference (treatment − baseline) with its paired-bootstrap interval.
    pub difference: Interval,
    /// For rates: units where only the treatment succeeded, and where only the baseline did.
    pub discordant: Option<(u64, u64)>,
    /// For rates: McNemar's exact two-sided p-value.
    pub p_value: Option<f64>,
}

/// The pairs of values of metric `index` on the units both sides have, in the treatment's
/// order.
fn pairs(treatment: &[Sample], baseline: &[Sample], index: usize) -> (Vec<f64>, Vec<f64>) {
    let by_key: BTreeMap<&UnitKey, f64> = baseline
        .iter()
        .filter_map(|s| Some((&s.key, s.values.get(index).copied().flatten()?)))
        .collect();
    treatment
        .iter()
        .filter_map(|s| {
            let t = s.values.get(index).copied().flatten()?;
            Some((t, *by_key.get(&s.key)?))
        })
        .unzip()
}

/// The paired contrast of metric `index` between two arms.
pub fn contrast(
    spec: &MetricSpec,
    treatment: &[Sample],
    baseline: &[Sample],
    index: usize,
) -> Contrast {
    let (t, b) = pairs(treatment, baseline, index);
    let difference = paired_bootstrap(&t, &b, RESAMPLES, LEVEL, BOOTSTRAP_SEED);
    let (discordant, p_value) = match spec.kind {
        MetricKind::Rate => {
            let only_treatment = t.iter().zip(&b).filter(|(t, b)| **t > 0.5 && **b <= 0.5);
            let only_baseline = t.iter().zip(&b).filter(|(t, b)| **t <= 0.5 && **b > 0.5);
            let (tb, bc) = (only_treatment.count() as u64, only_baseline.count() as u64);
            (Some((tb, bc)), Some(mcnemar_exact(tb, bc)))
        }
        MetricKind::Mean | MetricKind::Count => (None, None),
    };
    Contrast {
        metric: spec.name.clone(),
        pairs: t.len(),
        difference,
        discordant,
        p_value,
    }
}

/// How much better `difference` is in the metric's better direction (0 for descriptive
/// metrics).
pub fn improvement(better: Better, difference: f64) -> f64 {
    match better {
        Better::Higher => difference,
        Better::Lower => -difference,
        Better::Neither => 0.0,
    }
}

/// A layer's marginal on the primary metric, as the verdict sees it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LayerMarginal {
    /// The layer credited.
    pub layer: String,
    /// The paired difference on the primary metric.
    pub primary: f64,
    /// The paired difference on the secondary metric, if the game declares one.
    pub secondary: Option<f64>,
}

/// The heavy-lifting verdict under the pre-registered rule.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// One layer has the single largest positive marginal on the primary metric.
    HeavyLifting {
        /// The layer.
        layer: String,
        /// Its marginal on the primary metric.
        marginal: f64,
    },
    /// No layer improved the primary metric.
    NoPositiveMarginal,
    /// Two or more layers tie for the largest positive marginal, so no single layer qualifies.
    Tie {
        /// The tied layers.
        layers: Vec<String>,
        /// Their common marginal.
        marginal: f64,
    },
    /// No marginal could be computed (one stack, or every stack partial).
    NoMarginals,
}

/// Applies the rule to the layers' marginals on the primary metric, whose better direction is
/// `better`.
pub fn verdict(marginals: &[LayerMarginal], better: Better) -> Verdict {
    if marginals.is_empty() {
        return Verdict::NoMarginals;
    }
    let gain = |m: &LayerMarginal| improvement(better, m.primary);
    let best = marginals.iter().map(gain).fold(f64::NEG_INFINITY, f64::max);
    if best <= 0.0 {
        return Verdict::NoPositiveMarginal;
    }
    // Rates are ratios of small integers over the same number of games, so marginals that are
    // equal in exact arithmetic can differ in the last bit; compare with a tolerance far below
    // one game's weight.
    let tied: Vec<&LayerMarginal> = marginals
        .iter()
        .filter(|m| (gain(m) - best).abs() < 1e-9)
        .collect();
    match tied.as_slice() {
        [one] => Verdict::HeavyLifting {
            layer: one.layer.clone(),
            marginal: one.primary,
        },
        _ => Verdict::Tie {
            layers: tied.iter().map(|m| m.layer.clone()).collect(),
            marginal: tied[0].primary,
        },
    }
}

/// A pair of layers that the primary and the secondary metric rank in opposite orders.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RankDisagreement {
    /// The layer the primary metric ranks higher.
    pub by_primary: String,
    /// The layer the secondary metric ranks higher.
    pub by_secondary: String,
}

/// Every pair of layers whose marginals the primary and the secondary metric order differently
/// (each in its own better direction).
pub fn rank_disagreements(
    marginals: &[LayerMarginal],
    primary: Better,
    secondary: Better,
) -> Vec<RankDisagreement> {
    let mut found = Vec::new();
    for (i, a) in marginals.iter().enumerate() {
        for b in &marginals[i + 1..] {
            let (Some(a2), Some(b2)) = (a.secondary, b.secondary) else {
                continue;
            };
            let by_primary =
                improvement(primary, a.primary).total_cmp(&improvement(primary, b.primary));
            let by_secondary = improvement(secondary, a2).total_cmp(&improvement(secondary, b2));
            if by_primary.is_ne() && by_secondary.is_ne() && by_primary != by_secondary {
                let (primary_first, secondary_first) =
                    if by_primary.is_gt() { (a, b) } else { (b, a) };
                found.push(RankDisagreement {
                    by_primary: primary_first.layer.clone(),
                    by_secondary: secondary_first.layer.clone(),
                });
            }
        }
    }
    found
}

/// One instance's paired effect on a metric: how a treatment's episodes on it differ from a
/// baseline's (one bar of the seed paper's Figure 3).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct InstanceEffect {
    /// The instance.
    pub instance: String,
    /// Units on it that both sides played.
    pub pairs: usize,
    /// The baseline's mean on those units.
    pub baseline: f64,
    /// The treatment's mean on those units.
    pub treatment: f64,
    /// The mean paired difference with its paired-bootstrap interval.
    pub difference: Interval,
}

/// The per-instance paired effects of metric `index`, in the order in which instances first
/// appear in the baseline, then in the treatment. An instance with no common unit is left out:
/// its difference is not defined.
pub fn instance_effects(
    treatment: &[Sample],
    baseline: &[Sample],
    index: usize,
) -> Vec<InstanceEffect> {
    let mut order: Vec<&str> = Vec::new();
    for sample in baseline.iter().chain(treatment) {
        if !order.contains(&sample.key.instance.as_str()) {
            order.push(&sample.key.instance);
        }
    }
    order
        .into_iter()
        .filter_map(|instance| {
            let on = |samples: &[Sample]| -> Vec<Sample> {
                samples
                    .iter()
                    .filter(|s| s.key.instance == instance)
                    .cloned()
                    .collect()
            };
            let (t, b) = pairs(&on(treatment), &on(baseline), index);
            (!t.is_empty()).then(|| InstanceEffect {
                instance: instance.to_string(),
                pairs: t.len(),
                baseline: crate::stats::mean(&b),
                treatment: crate::stats::mean(&t),
                difference: paired_bootstrap(&t, &b, RESAMPLES, LEVEL, BOOTSTRAP_SEED),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use harness_runtime::MetricRole;

    fn rate() -> MetricSpec {
        MetricSpec::new(
            "won",
            MetricKind::Rate,
            Better::Higher,
            MetricRole::Primary,
            "",
        )
    }

    fn samples(values: &[f64]) -> Vec<Sample> {
        values
            .iter()
            .enumerate()
            .map(|(i, &v)| Sample {
                key: UnitKey {
                    instance: format!("i{}", i % 3),
                    seed: (i / 3) as u64,
                    replicate: 0,
                },
                values: vec![Some(v)],
            })
            .collect()
    }

    #[test]
    fn summaries_follow_the_metric_kind() {
        let s = summarize(&rate(), &samples(&[1.0, 0.0, 1.0, 1.0]), 0);
        assert_eq!((s.n, s.successes), (4, Some(3)));
        assert!((s.value.estimate - 0.75).abs() < 1e-12);
        let mean = MetricSpec::new("f", MetricKind::Mean, Better::Higher, MetricRole::Info, "");
        let s = summarize(&mean, &samples(&[0.2, 0.4]), 0);
        assert!((s.value.estimate - 0.3).abs() < 1e-12);
        assert_eq!(s.successes, None);
    }

    #[test]
    fn contrasts_pair_on_common_units_only() {
        let treatment = samples(&[1.0, 1.0, 1.0, 0.0, 1.0, 1.0]);
        // The baseline lacks the last unit: five pairs.
        let baseline = samples(&[0.0, 1.0, 0.0, 0.0, 0.0]);
        let c = contrast(&rate(), &treatment, &baseline, 0);
        assert_eq!(c.pairs, 5);
        assert_eq!(c.discordant, Some((3, 0)));
        assert!((c.difference.estimate - 0.6).abs() < 1e-12);
        assert!((c.p_value.unwrap() - 0.25).abs() < 1e-12);
    }

    #[test]
    fn the_largest_single_positive_marginal_is_heavy_lifting() {
        let m = |layer: &str, primary: f64, secondary: f64| LayerMarginal {
            layer: layer.into(),
            primary,
            secondary: Some(secondary),
        };
        let marginals = vec![m("planning", 0.24, 0.017), m("reflection", -0.17, 0.013)];
        assert_eq!(
            verdict(&marginals, Better::Higher),
            Verdict::HeavyLifting {
                layer: "planning".into(),
                marginal: 0.24
            }
        );
        assert_eq!(
            rank_disagreements(&marginals, Better::Higher, Better::Higher),
            vec![]
        );
        // For a cost-like primary metric, the larger decrease wins.
        assert!(matches!(
            verdict(&marginals, Better::Lower),
            Verdict::HeavyLifting { ref layer, .. } if layer == "reflection"
        ));
        let disagree = vec![m("a", 0.2, 0.01), m("b", 0.1, 0.05)];
        assert_eq!(
            rank_disagreements(&disagree, Better::Higher, Better::Higher),
            vec![RankDisagreement {
                by_primary: "a".into(),
                by_secondary: "b".into()
            }]
        );
        let tie = vec![m("a", 0.1, 0.0), m("b", 0.1, 0.0)];
        assert!(matches!(verdict(&tie, Better::Higher), Verdict::Tie { .. }));
        assert_eq!(
            verdict(&[m("a", -0.1, 0.0)], Better::Higher),
            Verdict::NoPositiveMarginal
        );
        assert_eq!(verdict(&[], Better::Higher), Verdict::NoMarginals);
    }

    #[test]
    fn instance_effects_are_paired_per_instance() {
        let treatment = samples(&[1.0, 0.5, 0.0, 1.0]);
        let baseline = samples(&[0.0, 0.5, 0.0]);
        let effects = instance_effects(&treatment, &baseline, 0);
        let names: Vec<&str> = effects.iter().map(|e| e.instance.as_str()).collect();
        assert_eq!(names, vec!["i0", "i1", "i2"]);
        assert_eq!(effects[0].pairs, 1, "the baseline has no seed 1 of i0");
        assert!((effects[0].difference.estimate - 1.0).abs() < 1e-12);
        assert!(effects[1].difference.estimate.abs() < 1e-12);
    }
}
