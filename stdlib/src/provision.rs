//! Task-aware provisioning over a cumulative level sweep: the task-to-level map (the smallest
//! level within ε of the best, per task class) and the provisioning policies evaluated from the
//! sweep's per-episode records (full provision, lookup, map-guided escalation, blind and gradual
//! escalation, class and task oracles), with paired bootstrap intervals.
//!
//! Levels are numbered 1..=L (cumulative stacks: level k holds layers 1..k). A record is one
//! episode of one task at one level and one seed. Escalation reuses the sweep: a retry at a
//! higher level is that level's record of the same task and seed, so its cost is added to the
//! first attempt's. (This is exact when the higher level's behaviour does not depend on what
//! the first attempt found; a runner that passes findings must re-run the retries instead.)

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;

use crate::stats::{Interval, bootstrap_mean};

/// One episode of the sweep.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Record {
    /// The task (instance) id.
    pub task: String,
    /// Its class.
    pub class: String,
    /// True for a construction-split task (the map is estimated there); false for test.
    pub construction: bool,
    /// The level, from 1.
    pub level: usize,
    /// The seed (a repetition).
    pub seed: u64,
    /// Its score in [0, 1].
    pub score: f64,
    /// Its cost (a token proxy, or any additive cost).
    pub cost: f64,
    /// Tool calls made.
    pub tool_calls: f64,
    /// The executor's self-check passed.
    pub self_check: bool,
}

/// The per-class, per-level mean scores of one split.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Grid {
    /// The classes, in order.
    pub classes: Vec<String>,
    /// The number of levels.
    pub levels: usize,
    /// `mean[class][level - 1]`; `None` where no record exists.
    pub mean: Vec<Vec<Option<f64>>>,
}

/// The mean score of every class at every level over the records of one split.
pub fn grid(records: &[Record], construction: bool) -> Grid {
    let levels = records.iter().map(|r| r.level).max().unwrap_or(0);
    let classes: Vec<String> = records
        .iter()
        .map(|r| r.class.clone())
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    let mean = classes
        .iter()
        .map(|class| {
            (1..=levels)
                .map(|level| {
                    let scores: Vec<f64> = records
                        .iter()
                        .filter(|r| {
                            r.construction == construction && &r.class == class && r.level == level
                        })
                        .map(|r| r.score)
                        .collect();
                    (!scores.is_empty()).then(|| scores.iter().sum::<f64>() / scores.len() as f64)
                })
                .collect()
        })
        .collect();
    Grid {
        classes,
        levels,
        mean,
    }
}

/// The map rule (§5.1): the smallest level whose support is within `epsilon` of the best
/// level's. Levels without support are skipped; a row with none maps to the top level.
pub fn floor(row: &[Option<f64>], epsilon: f64) -> usize {
    let best = row
        .iter()
        .flatten()
        .fold(f64::NEG_INFINITY, |m, &x| m.max(x));
    row.iter()
        .position(|x| x.is_some_and(|x| x >= best - epsilon - 1e-12))
        .map_or(row.len(), |i| i + 1)
}

/// The floor of every class of a grid.
pub fn floors(grid: &Grid, epsilon: f64) -> BTreeMap<String, usize> {
    grid.classes
        .iter()
        .zip(&grid.mean)
        .map(|(class, row)| (class.clone(), floor(row, epsilon)))
        .collect()
}

/// A provisioning policy.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub enum Policy {
    /// Every task at the top level.
    Full,
    /// Every task at its class's mapped level.
    Lookup,
    /// The mapped level; a failed self-check below the top retries once at the top (§6).
    MapEscalation,
    /// From level 1, one level up per failed self-check (F.5).
    BlindEscalation,
    /// From the mapped level, one level up per failed self-check (H.2).
    GradualEscalation,
    /// Per class, the level with the best test mean (peeks: a ceiling).
    ClassOracle,
    /// Per task, the level with the best mean over seeds (peeks: a ceiling).
    TaskOracle,
}

impl Policy {
    /// Every policy, in report order.
    pub const ALL: [Policy; 7] = [
        Policy::Full,
        Policy::Lookup,
        Policy::MapEscalation,
        Policy::BlindEscalation,
        Policy::GradualEscalation,
        Policy::ClassOracle,
        Policy::TaskOracle,
    ];

    /// The policy's command-line name.
    pub fn name(&self) -> &'static str {
        match self {
            Policy::Full => "full",
            Policy::Lookup => "exec-lookup",
            Policy::MapEscalation => "map-esc",
            Policy::BlindEscalation => "blind-esc",
            Policy::GradualEscalation => "gradual-esc",
            Policy::ClassOracle => "class-oracle",
            Policy::TaskOracle => "task-oracle",
        }
    }

    /// The policy called `name`.
    pub fn parse(name: &str) -> Option<Policy> {
        Policy::ALL.into_iter().find(|p| p.name() == name)
    }
}

/// What a policy did on one task and seed.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Outcome {
    /// The score of the accepted answer.
    pub score: f64,
    /// The summed cost of every attempt.
    pub cost: f64,
    /// The summed tool calls of every attempt.
    pub tool_calls: f64,
    /// Attempts made.
    pub attempts: usize,
    /// The level of the accepted answer.
    pub level: usize,
}

/// A policy's results on the test split.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PolicyResult {
    /// The policy.
    pub policy: Policy,
    /// Mean score over every test task and seed.
    pub score: f64,
    /// The population standard deviation of the per-seed means (the paper's ± over runs).
    pub spread: f64,
    /// Summed cost relative to full provision's.
    pub cost_ratio: f64,
    /// Mean tool calls per task.
    pub tool_calls: f64,
    /// Fraction of tasks that escalated.
    pub escalation_rate: f64,
    /// Mean attempts per task.
    pub attempts: f64,
    /// Paired bootstrap interval of the score difference against full provision (per-task
    /// scores averaged over seeds).
    pub delta_vs_full: Interval,
    /// Whether the policy peeks at test outcomes (an oracle: not deployable).
    pub oracle: bool,
}

/// The sweep's records indexed by task, seed and level.
struct Sweep<'r> {
    by_key: BTreeMap<(&'r str, u64), BTreeMap<usize, &'r Record>>,
    levels: usize,
}

impl<'r> Sweep<'r> {
    fn new(records: &'r [Record]) -> Sweep<'r> {
        let mut by_key: BTreeMap<(&str, u64), BTreeMap<usize, &Record>> = BTreeMap::new();
        for r in records {
            by_key
                .entry((r.task.as_str(), r.seed))
                .or_default()
                .insert(r.level, r);
        }
        let levels = records.iter().map(|r| r.level).max().unwrap_or(0);
        Sweep { by_key, levels }
    }
}

/// Runs one policy on one task and seed from its level records. `start` is the first level;
/// `next` the level to escalate to after a failed self-check at `level` (`None`: accept).
fn escalate(
    at: &BTreeMap<usize, &Record>,
    start: usize,
    next: &dyn Fn(usize) -> Option<usize>,
) -> Option<Outcome> {
    let mut level = start;
    let mut out = Outcome {
        score: 0.0,
        cost: 0.0,
        tool_calls: 0.0,
        attempts: 0,
        level,
    };
    loop {
        let r = at.get(&level)?;
        out.cost += r.cost;
        out.tool_calls += r.tool_calls;
        out.attempts += 1;
        out.score = r.score;
        out.level = level;
        match next(level) {
            Some(up) if !r.self_check => level = up,
            _ => return Some(out),
        }
    }
}

/// Evaluates `policies` on the test split with the map `floors` (class → level). Oracles read
/// the test split's own scores. `resamples` and `seed` drive the paired bootstrap.
pub fn evaluate(
    records: &[Record],
    floors: &BTreeMap<String, usize>,
    policies: &[Policy],
    resamples: usize,
    seed: u64,
) -> Vec<PolicyResult> {
    let test: Vec<Record> = records
        .iter()
        .filter(|r| !r.construction)
        .cloned()
        .collect();
    let sweep = Sweep::new(&test);
    let top = sweep.levels;
    let test_grid = grid(&test, false);
    let class_best: BTreeMap<String, usize> = test_grid
        .classes
        .iter()
        .zip(&test_grid.mean)
        .map(|(c, row)| {
            let best = (1..=top)
                .max_by(|&a, &b| {
                    let (x, y) = (row[a - 1].unwrap_or(-1.0), row[b - 1].unwrap_or(-1.0));
                    // Ties go to the lower level: `max_by` keeps the last maximum, so compare
                    // reversed levels on equal scores.
                    x.total_cmp(&y).then(b.cmp(&a))
                })
                .unwrap_or(top);
            (c.clone(), best)
        })
        .collect();
    // Per task, the level with the best mean over seeds (ties to the lower level).
    let mut task_best: BTreeMap<&str, usize> = BTreeMap::new();
    {
        let mut sums: BTreeMap<(&str, usize), (f64, usize)> = BTreeMap::new();
        for r in &test {
            let e = sums.entry((r.task.as_str(), r.level)).or_default();
            e.0 += r.score;
            e.1 += 1;
        }
        for (&(task, level), &(sum, n)) in &sums {
            let mean = sum / n as f64;
            let better = match task_best.get(task) {
                Some(&l) => {
                    let (s, m) = sums[&(task, l)];
                    mean > s / m as f64 + 1e-12
                }
                None => true,
            };
            if better {
                task_best.insert(task, level);
            }
        }
    }
    let class_of: BTreeMap<&str, &str> = test
        .iter()
        .map(|r| (r.task.as_str(), r.class.as_str()))
        .collect();
    let run = |policy: &Policy| -> BTreeMap<(&str, u64), Outcome> {
        sweep
            .by_key
            .iter()
            .filter_map(|(&(task, seed), at)| {
                let class = class_of.get(task).copied().unwrap_or("");
                let mapped = floors
                    .get(class)
                    .copied()
                    .unwrap_or(top)
                    .clamp(1, top.max(1));
                let outcome = match policy {
                    Policy::Full => escalate(at, top, &|_| None),
                    Policy::Lookup => escalate(at, mapped, &|_| None),
                    Policy::MapEscalation => escalate(at, mapped, &|l| (l < top).then_some(top)),
                    Policy::BlindEscalation => escalate(at, 1, &|l| (l < top).then_some(l + 1)),
                    Policy::GradualEscalation => {
                        escalate(at, mapped, &|l| (l < top).then_some(l + 1))
                    }
                    Policy::ClassOracle => {
                        escalate(at, class_best.get(class).copied().unwrap_or(top), &|_| None)
                    }
                    Policy::TaskOracle => {
                        escalate(at, task_best.get(task).copied().unwrap_or(top), &|_| None)
                    }
                };
                outcome.map(|o| ((task, seed), o))
            })
            .collect()
    };
    let full = run(&Policy::Full);
    let full_cost: f64 = full.values().map(|o| o.cost).sum();
    let per_task = |outcomes: &BTreeMap<(&str, u64), Outcome>| -> BTreeMap<String, f64> {
        let mut sums: BTreeMap<String, (f64, usize)> = BTreeMap::new();
        for (&(task, _), o) in outcomes {
            let e = sums.entry(task.to_owned()).or_default();
            e.0 += o.score;
            e.1 += 1;
        }
        sums.into_iter()
            .map(|(t, (s, n))| (t, s / n as f64))
            .collect()
    };
    let full_tasks = per_task(&full);
    policies
        .iter()
        .map(|policy| {
            let outcomes = run(policy);
            let n = outcomes.len().max(1) as f64;
            let mut seeds: BTreeMap<u64, (f64, usize)> = BTreeMap::new();
            for (&(_, seed), o) in &outcomes {
                let e = seeds.entry(seed).or_default();
                e.0 += o.score;
                e.1 += 1;
            }
            let seed_means: Vec<f64> = seeds.values().map(|(s, c)| s / *c as f64).collect();
            let grand = seed_means.iter().sum::<f64>() / seed_means.len().max(1) as f64;
            let spread = (seed_means.iter().map(|m| (m - grand).powi(2)).sum::<f64>()
                / seed_means.len().max(1) as f64)
                .sqrt();
            let tasks = per_task(&outcomes);
            let deltas: Vec<f64> = tasks
                .iter()
                .filter_map(|(t, s)| full_tasks.get(t).map(|f| s - f))
                .collect();
            PolicyResult {
                policy: policy.clone(),
                score: outcomes.values().map(|o| o.score).sum::<f64>() / n,
                spread,
                cost_ratio: if full_cost > 0.0 {
                    outcomes.values().map(|o| o.cost).sum::<f64>() / full_cost
                } else {
                    0.0
                },
                tool_calls: outcomes.values().map(|o| o.tool_calls).sum::<f64>() / n,
                escalation_rate: outcomes.values().filter(|o| o.attempts > 1).count() as f64 / n,
                attempts: outcomes.values().map(|o| o.attempts as f64).sum::<f64>() / n,
                delta_vs_full: bootstrap_mean(&deltas, resamples, 0.95, seed),
                oracle: matches!(policy, Policy::ClassOracle | Policy::TaskOracle),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(
        task: &str,
        class: &str,
        construction: bool,
        level: usize,
        score: f64,
        check: bool,
    ) -> Record {
        Record {
            task: task.into(),
            class: class.into(),
            construction,
            level,
            seed: 0,
            score,
            cost: level as f64,
            tool_calls: level as f64,
            self_check: check,
        }
    }

    #[test]
    fn the_floor_is_the_smallest_level_within_epsilon_of_the_best() {
        let row = |v: &[f64]| v.iter().map(|&x| Some(x)).collect::<Vec<_>>();
        assert_eq!(floor(&row(&[0.2, 0.6, 0.62, 0.61, 0.5]), 0.05), 2);
        assert_eq!(floor(&row(&[0.2, 0.6, 0.62, 0.61, 0.5]), 0.0), 3);
        // Ties at ε = 0 go to the lower level; all equal maps to level 1.
        assert_eq!(floor(&row(&[0.3, 0.7, 0.7, 0.1, 0.7]), 0.0), 2);
        assert_eq!(floor(&row(&[0.5; 5]), 0.0), 1);
        assert_eq!(floor(&[None, Some(0.4), None, Some(0.5), None], 0.05), 4);
        assert_eq!(floor(&[None, None], 0.05), 2);
    }

    #[test]
    fn grids_average_one_split_per_class_and_level() {
        let records = vec![
            rec("a", "I-N-S", true, 1, 0.0, false),
            rec("b", "I-N-S", true, 1, 1.0, false),
            rec("a", "I-N-S", true, 2, 1.0, true),
            rec("c", "I-N-S", false, 1, 1.0, true),
        ];
        let g = grid(&records, true);
        assert_eq!(g.classes, ["I-N-S"]);
        assert_eq!(g.mean[0], [Some(0.5), Some(1.0)]);
        assert_eq!(floors(&g, 0.05)["I-N-S"], 2);
    }

    /// A constructed 0/1 table: two test tasks of one class over three levels.
    fn table() -> Vec<Record> {
        vec![
            // Task x: level 1 wrong but its check passes (a false pass); level 3 right.
            rec("x", "C", false, 1, 0.0, true),
            rec("x", "C", false, 2, 1.0, false),
            rec("x", "C", false, 3, 1.0, true),
            // Task y: level 1 wrong and says so; level 2 right; level 3 wrong.
            rec("y", "C", false, 1, 0.0, false),
            rec("y", "C", false, 2, 1.0, true),
            rec("y", "C", false, 3, 0.0, true),
        ]
    }

    #[test]
    fn policies_follow_their_closed_forms_on_a_zero_one_table() {
        let floors = BTreeMap::from([("C".to_owned(), 1)]);
        let results = evaluate(&table(), &floors, &Policy::ALL, 100, 1);
        let get = |p: Policy| {
            results
                .iter()
                .find(|r| r.policy == p)
                .cloned()
                .unwrap_or_else(|| panic!("{p:?}"))
        };
        // Full: level 3: x right, y wrong; cost 3 + 3.
        let full = get(Policy::Full);
        assert_eq!(
            (full.score, full.cost_ratio, full.attempts),
            (0.5, 1.0, 1.0)
        );
        // Lookup at level 1: both wrong, cost 1 + 1 = 2/6.
        let lookup = get(Policy::Lookup);
        assert_eq!(lookup.score, 0.0);
        assert!((lookup.cost_ratio - 2.0 / 6.0).abs() < 1e-12);
        // Map-ESC: x passes its check at 1 (stays wrong); y fails and retries at 3 (wrong).
        let esc = get(Policy::MapEscalation);
        assert_eq!(
            (esc.score, esc.escalation_rate, esc.attempts),
            (0.0, 0.5, 1.5)
        );
        assert!((esc.cost_ratio - (1.0 + 1.0 + 3.0) / 6.0).abs() < 1e-12);
        // Gradual: y goes 1 -> 2 (passes, right).
        let gradual = get(Policy::GradualEscalation);
        assert_eq!(gradual.score, 0.5);
        assert!((gradual.cost_ratio - (1.0 + 1.0 + 2.0) / 6.0).abs() < 1e-12);
        // Blind escalation from 1 equals gradual here (the map is level 1).
        assert_eq!(get(Policy::BlindEscalation).score, 0.5);
        // Class oracle: the best test mean is level 2 (1.0); task oracle too.
        assert_eq!(get(Policy::ClassOracle).score, 1.0);
        assert_eq!(get(Policy::TaskOracle).score, 1.0);
        assert!(get(Policy::TaskOracle).oracle);
        // The paired difference against full: lookup loses 0.5 on average.
        assert!((lookup.delta_vs_full.estimate + 0.5).abs() < 1e-12);
    }

    #[test]
    fn the_paper_s_identities_hold_attempts_are_one_plus_the_escalation_rate() {
        // 7/4/1 floors × 5 tasks × 3 runs = 105/60/15 seeds (H.2): here, any mix of checks.
        let mut records = Vec::new();
        for t in 0..12 {
            for seed in 0..3 {
                for level in 1..=5 {
                    records.push(Record {
                        task: format!("t{t}"),
                        class: format!("c{}", t % 4),
                        construction: false,
                        level,
                        seed,
                        score: ((t + level + seed as usize) % 3) as f64 / 2.0,
                        cost: 10.0 * level as f64,
                        tool_calls: 1.0,
                        self_check: !(t + seed as usize).is_multiple_of(3),
                    });
                }
            }
        }
        let floors: BTreeMap<String, usize> = (0..4).map(|c| (format!("c{c}"), c + 1)).collect();
        for r in evaluate(&records, &floors, &[Policy::MapEscalation], 10, 1) {
            assert!((r.attempts - (1.0 + r.escalation_rate)).abs() < 1e-12);
        }
    }

    #[test]
    fn map_escalation_matches_its_closed_form_on_a_scripted_executor() {
        use rand::rngs::StdRng;
        use rand::{Rng, SeedableRng};
        // One class mapped to level 2 of 3. The scripted executor answers correctly with
        // probability 0.6 at level 2 and 0.8 at level 3; its self-check passes a correct
        // answer with probability 0.9 and a wrong one with probability 0.3.
        let (p2, p3, pass_right, pass_wrong) = (0.6, 0.8, 0.9, 0.3);
        let mut rng = StdRng::seed_from_u64(7);
        let n = 10_000;
        let mut records = Vec::new();
        for t in 0..n {
            for (level, p) in [(1, 0.0), (2, p2), (3, p3)] {
                let right = rng.random::<f64>() < p;
                let check = rng.random::<f64>() < if right { pass_right } else { pass_wrong };
                records.push(Record {
                    task: format!("t{t}"),
                    class: "C".into(),
                    construction: false,
                    level,
                    seed: 0,
                    score: f64::from(u8::from(right)),
                    cost: level as f64,
                    tool_calls: 1.0,
                    self_check: check,
                });
            }
        }
        let floors = BTreeMap::from([("C".to_owned(), 2)]);
        let r = &evaluate(&records, &floors, &[Policy::MapEscalation], 0, 1)[0];
        let accuracy =
            p2 * pass_right + p2 * (1.0 - pass_right) * p3 + (1.0 - p2) * (1.0 - pass_wrong) * p3;
        let escalations = p2 * (1.0 - pass_right) + (1.0 - p2) * (1.0 - pass_wrong);
        let cost = (2.0 + 3.0 * escalations) / 3.0;
        let se = |p: f64| (p * (1.0 - p) / n as f64).sqrt();
        assert!(
            (r.score - accuracy).abs() < 3.0 * se(accuracy),
            "{} vs {accuracy}",
            r.score
        );
        assert!((r.escalation_rate - escalations).abs() < 3.0 * se(escalations));
        assert!((r.cost_ratio - cost).abs() < 3.0 * se(escalations));
    }
}
