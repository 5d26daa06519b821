//! `harness lens determinism`: how reproducible each arm's runs are, from their traces.
//!
//! Each finished episode is projected onto four parts: its **plan** (the last value patched into
//! the first listed plan field the arm has: a list of steps, or a string holding a JSON array),
//! its **tools** (the effects it sent, in order), its **states** (the state field's initial value
//! and every value patched into it; an arm without the field logs its tools as its states, so
//! STS ≡ TPC there) and its **output** (the `episode_end` metrics under the output prefix). Per
//! cell (an arm on one instance), with `sim(a, b) = 1 − lev(a, b) / max(|a|, |b|)` (1 when both
//! are empty; items compared exactly):
//!
//! - PS, TPC, STS: the mean `sim` over all pairs i < j of plans, tool sequences, state sequences;
//! - OC: the mean pairwise field-match ratio of outputs (equal values over the union of keys,
//!   recursive into objects; two absent values match);
//! - DI = ¼(PS + TPC + STS + OC);
//! - RR: the share of runs whose full signature (canonical JSON of the four parts) is the modal
//!   one;
//! - TSR: the share of runs whose primary success metric holds; tokens (mean per run, from the
//!   `llm_call` events) and latency (the median per run of the recorded LLM latency).
//!
//! Contrasts between two arms on one instance give the RR difference with a seeded bootstrap
//! interval, a permutation p-value (relabelling runs and recomputing each group's RR) and Cohen's
//! d on the per-run indicator "matches its group's modal signature", plus a bootstrap interval of
//! the DI difference. The definitions follow the study's published metric code.

use std::collections::BTreeMap;

use harness_runtime::{TraceEvent, TraceEventKind};
use harness_stdlib::stats::{self, Interval};
use serde::{Deserialize, Serialize};
use serde_json::Value as Json;

/// What to project and how to contrast.
#[derive(Clone, Debug)]
pub struct Options {
    /// The plan fields, in order of preference (`sp.plan,agent.plan_raw`).
    pub plan_fields: Vec<String>,
    /// The state field (`fsm.stage`).
    pub state_field: String,
    /// The prefix of the output metrics (`out.`).
    pub output_prefix: String,
    /// The arms to contrast, pairwise (empty: every pair of arms).
    pub arms: Vec<String>,
    /// Bootstrap resamples and permutation relabellings.
    pub iterations: usize,
    /// The seed of both.
    pub seed: u64,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            plan_fields: vec!["sp.plan".into(), "agent.plan_raw".into()],
            state_field: "fsm.stage".into(),
            output_prefix: "out.".into(),
            arms: Vec::new(),
            iterations: 10_000,
            seed: 0,
        }
    }
}

/// One run reduced to what the metrics compare.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Projection {
    /// The plan's steps.
    pub plan: Vec<String>,
    /// The tools called (effects sent), in order.
    pub tools: Vec<String>,
    /// The states visited, in order.
    pub states: Vec<String>,
    /// The output fields.
    pub output: BTreeMap<String, Json>,
    /// Whether the run succeeded.
    pub success: bool,
    /// Prompt plus completion tokens.
    pub tokens: u64,
    /// The run's LLM latency in milliseconds, when recorded.
    pub latency_ms: Option<f64>,
}

impl Projection {
    /// The canonical JSON of plan, tools, states and output: equal signatures, equal runs.
    pub fn signature(&self) -> String {
        serde_json::json!({
            "plan": self.plan,
            "tools": self.tools,
            "states": self.states,
            "output": self.output,
        })
        .to_string()
    }
}

/// A JSON value as a sequence item: strings as they are, everything else as JSON.
fn item(value: &Json) -> String {
    match value {
        Json::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// A plan field's value as steps: a list, or a string holding a JSON array, or one step.
fn steps(value: &Json) -> Vec<String> {
    match value {
        Json::Array(items) => items.iter().map(item).collect(),
        Json::String(text) => match serde_json::from_str::<Json>(text) {
            Ok(Json::Array(items)) => items.iter().map(item).collect(),
            _ if text.is_empty() => Vec::new(),
            _ => vec![text.clone()],
        },
        Json::Null => Vec::new(),
        other => vec![item(other)],
    }
}

/// Projects one run's trace. `latency_ms` comes from the run's recorded LLM calls.
pub fn project(
    events: &[TraceEvent],
    options: &Options,
    success_metric: &str,
    latency_ms: Option<f64>,
) -> Projection {
    let mut plans: BTreeMap<&str, &Json> = BTreeMap::new();
    let mut tools = Vec::new();
    let mut states: Vec<String> = Vec::new();
    let mut output = BTreeMap::new();
    let mut success = false;
    let mut tokens = 0;
    for event in events {
        match &event.kind {
            TraceEventKind::Patch { field, old, new } => {
                if let Some(name) = options.plan_fields.iter().find(|f| *f == field) {
                    plans.insert(name, new);
                }
                if *field == options.state_field {
                    if states.is_empty() {
                        states.push(item(old));
                    }
                    states.push(item(new));
                }
            }
            TraceEventKind::Effect { name, args } => {
                let args: Vec<String> = args.iter().map(item).collect();
                tools.push(if args.is_empty() {
                    name.clone()
                } else {
                    format!("{name}({})", args.join(", "))
                });
            }
            TraceEventKind::LlmCall {
                prompt_tokens,
                completion_tokens,
                ..
            } => tokens += prompt_tokens.unwrap_or(0) + completion_tokens.unwrap_or(0),
            TraceEventKind::EpisodeEnd { metrics, .. } => {
                for (key, value) in metrics {
                    if let Some(field) = key.strip_prefix(&options.output_prefix) {
                        output.insert(field.to_string(), value.clone());
                    }
                }
                success = match metrics.get(success_metric) {
                    Some(Json::Bool(b)) => *b,
                    Some(other) => other.as_f64().is_some_and(|x| x > 0.0),
                    None => false,
                };
            }
            _ => {}
        }
    }
    let plan = options
        .plan_fields
        .iter()
        .find_map(|f| plans.get(f.as_str()))
        .map(|v| steps(v))
        .unwrap_or_default();
    if states.is_empty() {
        // Without a state machine the tools are the states, as in the study's baseline logs.
        states = tools.clone();
    }
    Projection {
        plan,
        tools,
        states,
        output,
        success,
        tokens,
        latency_ms,
    }
}

/// The field-match ratio of two JSON values: for two objects, the mean over the union of their
/// keys of the ratio of the values under each key (a key on one side only gives 0); otherwise 1
/// when equal and 0 when not. Two empty objects, like two nulls, match fully.
pub fn field_match(a: &Json, b: &Json) -> f64 {
    match (a, b) {
        (Json::Object(x), Json::Object(y)) => {
            let keys: std::collections::BTreeSet<&String> = x.keys().chain(y.keys()).collect();
            if keys.is_empty() {
                return 1.0;
            }
            keys.iter()
                .map(|k| match (x.get(*k), y.get(*k)) {
                    (Some(u), Some(v)) => field_match(u, v),
                    _ => 0.0,
                })
                .sum::<f64>()
                / keys.len() as f64
        }
        _ => f64::from(u8::from(a == b)),
    }
}

/// The share of `signatures` equal to the most frequent one (0 for none).
pub fn reproducibility_rate<S: Ord>(signatures: &[S]) -> f64 {
    if signatures.is_empty() {
        return 0.0;
    }
    let mut counts: BTreeMap<&S, usize> = BTreeMap::new();
    for s in signatures {
        *counts.entry(s).or_default() += 1;
    }
    *counts.values().max().unwrap_or(&0) as f64 / signatures.len() as f64
}

/// One cell's figures.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Cell {
    /// The arm.
    pub arm: String,
    /// The instance.
    pub instance: String,
    /// Runs.
    pub n: usize,
    /// Plan similarity.
    pub ps: f64,
    /// Tool-path consistency.
    pub tpc: f64,
    /// State-sequence similarity.
    pub sts: f64,
    /// Output consistency.
    pub oc: f64,
    /// The Determinism Index, ¼(PS + TPC + STS + OC).
    pub di: f64,
    /// The study's sensitivity weighting, .15 PS + .35 TPC + .35 STS + .15 OC.
    pub di_weighted: f64,
    /// The reproducibility rate.
    pub rr: f64,
    /// Runs with the modal signature.
    pub modal: usize,
    /// The task success rate, with its 95% Wilson interval.
    pub tsr: Interval,
    /// Mean tokens per run.
    pub tokens: f64,
    /// Median LLM latency per run, in milliseconds, when recorded.
    pub latency_ms: Option<f64>,
}

/// A cell's runs grouped by signature: runs with equal signatures have equal parts, so every
/// pairwise mean is a weighted sum over the distinct runs, which keeps the bootstrap cheap.
struct Classes {
    /// Per run, its class.
    of_run: Vec<usize>,
    /// Per pair of classes, the mean of the four similarities (1 on the diagonal).
    di: Vec<Vec<f64>>,
}

impl Classes {
    /// The mean DI over the pairs i < j of the runs `picks` (a run drawn twice pairs with itself
    /// at similarity 1).
    fn mean_di(&self, picks: &[usize]) -> f64 {
        let n = picks.len();
        if n < 2 {
            return 1.0;
        }
        let mut counts = vec![0.0; self.di.len()];
        for &p in picks {
            counts[self.of_run[p]] += 1.0;
        }
        weighted_pair_mean(&counts, &self.di, n)
    }
}

/// The mean over pairs i < j of n runs of a similarity given per class pair, with `counts`
/// runs per class: (Σ c_a c_b S[a][b] − n) / (n (n − 1)), the diagonal being 1.
fn weighted_pair_mean(counts: &[f64], sim: &[Vec<f64>], n: usize) -> f64 {
    let mut total = 0.0;
    for (a, ca) in counts.iter().enumerate() {
        if *ca == 0.0 {
            continue;
        }
        for (b, cb) in counts.iter().enumerate() {
            total += ca * cb * sim[a][b];
        }
    }
    let n = n as f64;
    (total - n) / (n * (n - 1.0))
}

/// One cell's figures and classes; `signatures` are the runs' signature ids.
fn cell(arm: &str, instance: &str, runs: &[Projection], signatures: &[usize]) -> (Cell, Classes) {
    let n = runs.len();
    let mut class_of: BTreeMap<usize, usize> = BTreeMap::new();
    let mut representatives: Vec<usize> = Vec::new();
    let of_run: Vec<usize> = signatures
        .iter()
        .enumerate()
        .map(|(run, id)| {
            *class_of.entry(*id).or_insert_with(|| {
                representatives.push(run);
                representatives.len() - 1
            })
        })
        .collect();
    let k = representatives.len();
    let mut counts = vec![0.0; k];
    for &c in &of_run {
        counts[c] += 1.0;
    }
    let outputs: Vec<Json> = representatives
        .iter()
        .map(|&r| Json::Object(runs[r].output.clone().into_iter().collect()))
        .collect();
    let mut parts = vec![vec![vec![1.0; k]; k]; 4];
    for a in 0..k {
        for b in a + 1..k {
            let (x, y) = (&runs[representatives[a]], &runs[representatives[b]]);
            let values = [
                stats::sequence_similarity(&x.plan, &y.plan),
                stats::sequence_similarity(&x.tools, &y.tools),
                stats::sequence_similarity(&x.states, &y.states),
                field_match(&outputs[a], &outputs[b]),
            ];
            for (part, value) in parts.iter_mut().zip(values) {
                part[a][b] = value;
                part[b][a] = value;
            }
        }
    }
    let mean = |part: &[Vec<f64>]| {
        if n < 2 {
            1.0
        } else {
            weighted_pair_mean(&counts, part, n)
        }
    };
    let (ps, tpc, sts, oc) = (
        mean(&parts[0]),
        mean(&parts[1]),
        mean(&parts[2]),
        mean(&parts[3]),
    );
    let di: Vec<Vec<f64>> = (0..k)
        .map(|a| {
            (0..k)
                .map(|b| parts.iter().map(|p| p[a][b]).sum::<f64>() / 4.0)
                .collect()
        })
        .collect();
    let rr = counts.iter().copied().fold(0.0, f64::max) / n.max(1) as f64;
    let successes = runs.iter().filter(|r| r.success).count() as u64;
    let mut latencies: Vec<f64> = runs.iter().filter_map(|r| r.latency_ms).collect();
    latencies.sort_by(f64::total_cmp);
    let latency_ms = (!latencies.is_empty()).then(|| {
        let m = latencies.len();
        if m % 2 == 1 {
            latencies[m / 2]
        } else {
            (latencies[m / 2 - 1] + latencies[m / 2]) / 2.0
        }
    });
    let figures = Cell {
        arm: arm.to_string(),
        instance: instance.to_string(),
        n,
        ps,
        tpc,
        sts,
        oc,
        di: (ps + tpc + sts + oc) / 4.0,
        di_weighted: 0.15 * ps + 0.35 * tpc + 0.35 * sts + 0.15 * oc,
        rr,
        modal: (rr * n as f64).round() as usize,
        tsr: stats::wilson(successes, n as u64, 0.95),
        tokens: stats::mean(&runs.iter().map(|r| r.tokens as f64).collect::<Vec<_>>()),
        latency_ms,
    };
    (figures, Classes { of_run, di })
}

/// The share of a group of signature ids equal to its most frequent one.
fn rr_of(ids: &[usize]) -> f64 {
    reproducibility_rate(ids)
}

/// A contrast between two arms on one instance: `a − b`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Contrast {
    /// The first arm.
    pub a: String,
    /// The second arm.
    pub b: String,
    /// The instance.
    pub instance: String,
    /// RR(a) − RR(b) with its 95% bootstrap interval.
    pub rr_difference: Interval,
    /// The two-sided permutation p-value of the RR difference.
    pub rr_p: f64,
    /// Cohen's d on "matches its group's modal signature" (`None` when unbounded: both groups
    /// constant and different).
    pub cohens_d: Option<f64>,
    /// DI(a) − DI(b) with its 95% bootstrap interval.
    pub di_difference: Interval,
    /// Bootstrap resamples and permutation relabellings.
    pub iterations: usize,
    /// Their seed.
    pub seed: u64,
}

fn contrast(
    (a, ma, sa): (&Cell, &Classes, &[usize]),
    (b, mb, sb): (&Cell, &Classes, &[usize]),
    options: &Options,
) -> Contrast {
    let rr_difference =
        stats::bootstrap_difference(sa, sb, rr_of, options.iterations, 0.95, options.seed);
    let rr_p = stats::permutation_test(sa, sb, rr_of, options.iterations, options.seed);
    let indicator = |group: &[usize]| -> Vec<f64> {
        let mut counts: BTreeMap<usize, usize> = BTreeMap::new();
        for s in group {
            *counts.entry(*s).or_default() += 1;
        }
        // The modal signature; ties go to the smallest id, which is deterministic.
        let modal = counts
            .iter()
            .max_by(|x, y| x.1.cmp(y.1).then(y.0.cmp(x.0)))
            .map(|(s, _)| *s);
        group
            .iter()
            .map(|s| f64::from(u8::from(Some(*s) == modal)))
            .collect()
    };
    let cohens_d = stats::cohens_d(&indicator(sa), &indicator(sb));
    // The DI bootstrap resamples run indices within each cell.
    let ia: Vec<usize> = (0..sa.len()).collect();
    let ib: Vec<usize> = (0..sb.len()).collect();
    let di_difference = stats::bootstrap_difference_of(
        &ia,
        &ib,
        |picks: &[usize]| ma.mean_di(picks),
        |picks: &[usize]| mb.mean_di(picks),
        options.iterations,
        0.95,
        options.seed.wrapping_add(1),
    );
    Contrast {
        a: a.arm.clone(),
        b: b.arm.clone(),
        instance: a.instance.clone(),
        rr_difference,
        rr_p,
        cohens_d,
        di_difference,
        iterations: options.iterations,
        seed: options.seed,
    }
}

/// The whole analysis: a cell per arm and instance, and the contrasts.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Determinism {
    /// The cells, in plan order of arms, then instance order.
    pub cells: Vec<Cell>,
    /// The contrasts, `a − b` for each pair of compared arms (a before b in plan order).
    pub contrasts: Vec<Contrast>,
    /// The projection's fields.
    pub plan_fields: Vec<String>,
    /// The state field.
    pub state_field: String,
    /// The output prefix.
    pub output_prefix: String,
}

/// Analyses projected runs, given as (arm, instance, projection) with arms in plan order.
pub fn analyse(
    arms: &[String],
    runs: &[(String, String, Projection)],
    options: &Options,
) -> Result<Determinism, String> {
    for name in &options.arms {
        if !arms.contains(name) {
            return Err(format!(
                "the run has no arm `{name}`; its arms are {}",
                arms.join(", ")
            ));
        }
    }
    // Signatures become ids shared by all cells, so a contrast compares like with like.
    let mut ids: BTreeMap<String, usize> = BTreeMap::new();
    let mut instances: Vec<&str> = Vec::new();
    for (_, instance, _) in runs {
        if !instances.contains(&instance.as_str()) {
            instances.push(instance);
        }
    }
    let mut cells = Vec::new();
    let mut parts: BTreeMap<(usize, usize), (Classes, Vec<usize>)> = BTreeMap::new();
    for (a, arm) in arms.iter().enumerate() {
        for (i, instance) in instances.iter().enumerate() {
            let group: Vec<Projection> = runs
                .iter()
                .filter(|(r, inst, _)| r == arm && inst == instance)
                .map(|(_, _, p)| p.clone())
                .collect();
            if group.is_empty() {
                continue;
            }
            let signatures: Vec<usize> = group
                .iter()
                .map(|p| {
                    let next = ids.len();
                    *ids.entry(p.signature()).or_insert(next)
                })
                .collect();
            let (figures, classes) = cell(arm, instance, &group, &signatures);
            parts.insert((a, i), (classes, signatures));
            cells.push(figures);
        }
    }
    let compared: Vec<usize> = if options.arms.is_empty() {
        (0..arms.len()).collect()
    } else {
        (0..arms.len())
            .filter(|a| options.arms.contains(&arms[*a]))
            .collect()
    };
    let mut contrasts = Vec::new();
    for (x, &a) in compared.iter().enumerate() {
        for &b in &compared[x + 1..] {
            for (i, instance) in instances.iter().enumerate() {
                let (Some((ma, sa)), Some((mb, sb))) = (parts.get(&(a, i)), parts.get(&(b, i)))
                else {
                    continue;
                };
                let find = |arm: usize| {
                    cells
                        .iter()
                        .find(|c| c.arm == arms[arm] && c.instance == *instance)
                };
                let (Some(ca), Some(cb)) = (find(a), find(b)) else {
                    continue;
                };
                contrasts.push(contrast((ca, ma, sa), (cb, mb, sb), options));
            }
        }
    }
    Ok(Determinism {
        cells,
        contrasts,
        plan_fields: options.plan_fields.clone(),
        state_field: options.state_field.clone(),
        output_prefix: options.output_prefix.clone(),
    })
}

/// The analysis as a table and the contrasts, for a terminal.
pub fn text(report: &Determinism) -> String {
    use std::fmt::Write as _;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "determinism (plan: {}; states: {}, or the tools where the arm has no such field; output: {}*)",
        report.plan_fields.join(" or "),
        report.state_field,
        report.output_prefix
    );
    let _ = writeln!(
        out,
        "{:<10} {:<10} {:>4} {:>6} {:>6} {:>6} {:>6} {:>6} {:>6} {:>6}  {:<20} {:>8} {:>10}",
        "arm",
        "instance",
        "N",
        "PS",
        "TPC",
        "STS",
        "OC",
        "DI",
        "RR",
        "TSR",
        "TSR 95% CI",
        "tokens",
        "latency ms"
    );
    for c in &report.cells {
        let _ = writeln!(
            out,
            "{:<10} {:<10} {:>4} {:>6.3} {:>6.3} {:>6.3} {:>6.3} {:>6.3} {:>6.3} {:>6.2}  [{:.3}, {:.3}]       {:>8.1} {:>10}",
            c.arm,
            c.instance,
            c.n,
            c.ps,
            c.tpc,
            c.sts,
            c.oc,
            c.di,
            c.rr,
            c.tsr.estimate,
            c.tsr.lo,
            c.tsr.hi,
            c.tokens,
            c.latency_ms.map_or("—".to_string(), |l| format!("{l:.0}"))
        );
    }
    if !report.contrasts.is_empty() {
        let _ = writeln!(
            out,
            "\ncontrasts (a − b; 95% bootstrap CI; two-sided permutation p; Cohen's d on matching the modal signature)"
        );
    }
    for k in &report.contrasts {
        let d = k
            .cohens_d
            .map_or("unbounded".to_string(), |d| format!("{d:+.3}"));
        let _ = writeln!(
            out,
            "  {} − {} on {}: RR {:+.3} [{:+.3}, {:+.3}] p={:.4} d={}; DI {:+.3} [{:+.3}, {:+.3}]  ({} iterations, seed {})",
            k.a,
            k.b,
            k.instance,
            k.rr_difference.estimate,
            k.rr_difference.lo,
            k.rr_difference.hi,
            k.rr_p,
            d,
            k.di_difference.estimate,
            k.di_difference.lo,
            k.di_difference.hi,
            k.iterations,
            k.seed
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_metric_definitions_hold_on_small_cases() {
        assert_eq!(stats::sequence_similarity(&["a", "b"], &["a", "B"]), 0.5);
        assert_eq!(
            field_match(
                &json!({"x": 1, "y": {"z": 2}}),
                &json!({"x": 1, "y": {"z": 3}})
            ),
            0.5
        );
        assert_eq!(field_match(&json!({}), &json!({})), 1.0);
        assert_eq!(field_match(&json!(null), &json!(null)), 1.0);
        assert_eq!(field_match(&json!({"x": 1}), &json!({"y": 1})), 0.0);
        let rr = reproducibility_rate(&["s", "s", "t"]);
        assert_eq!(format!("{rr:.3}"), "0.667");
        assert_eq!(steps(&json!("[\"a\", \"b\"]")), ["a", "b"]);
        assert_eq!(steps(&json!(["a", 1])), ["a", "1"]);
    }

    fn run(plan: &[&str], tools: &[&str]) -> Projection {
        Projection {
            plan: plan.iter().map(|s| s.to_string()).collect(),
            tools: tools.iter().map(|s| s.to_string()).collect(),
            states: tools.iter().map(|s| s.to_string()).collect(),
            output: BTreeMap::from([("x".to_string(), json!(1))]),
            success: true,
            tokens: 10,
            latency_ms: Some(5.0),
        }
    }

    #[test]
    fn cells_and_contrasts_follow_the_definitions() {
        let arms = vec!["A".to_string(), "B".to_string()];
        let mut runs = Vec::new();
        for k in 0..20 {
            runs.push(("A".into(), "i".into(), run(&["p", "q"], &["t", "u"])));
            let plan = if k % 4 == 0 { ["P", "q"] } else { ["p", "q"] };
            runs.push(("B".into(), "i".into(), run(&plan, &["t", "u"])));
        }
        let options = Options {
            iterations: 2000,
            ..Options::default()
        };
        let report = analyse(&arms, &runs, &options).unwrap();
        let (a, b) = (&report.cells[0], &report.cells[1]);
        assert_eq!(
            (a.ps, a.tpc, a.sts, a.oc, a.di, a.rr),
            (1.0, 1.0, 1.0, 1.0, 1.0, 1.0)
        );
        assert_eq!(b.rr, 0.75);
        assert_eq!((b.tpc, b.sts, b.oc), (1.0, 1.0, 1.0));
        // 5 of 20 plans differ in one of two steps: the pairs across the split have sim 0.5.
        let cross = 5.0 * 15.0;
        let expected_ps = 1.0 - 0.5 * cross / 190.0;
        assert!((b.ps - expected_ps).abs() < 1e-12, "{}", b.ps);
        let k = &report.contrasts[0];
        assert_eq!(k.rr_difference.estimate, 0.25);
        assert!(k.rr_p < 0.05, "{}", k.rr_p);
        assert!(k.cohens_d.is_some_and(|d| d > 0.5));
        assert_eq!(report, analyse(&arms, &runs, &options).unwrap(), "seeded");
        assert!(
            analyse(
                &arms,
                &runs,
                &Options {
                    arms: vec!["C".into()],
                    ..options
                }
            )
            .is_err()
        );
    }
}
