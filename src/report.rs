//! The report of a run: per-arm summaries of the declared metrics, paired marginals, the
//! heavy-lifting verdict, and its renderings as a table, JSON and CSV.
//!
//! The columns come from the game's declared metrics and the runtime's cost counters; nothing
//! here knows a game. A layer's marginal is a paired contrast over the units both arms played.
//! An arm with missing episodes is marked partial and gets no marginal.

use std::fmt::Write as _;

use harness_runtime::{Better, Costs, MetricKind, MetricRole, MetricSpec};
use harness_stdlib::ablation::{
    self, Contrast, LayerMarginal, MetricSummary, RankDisagreement, Sample, UnitKey, Verdict,
};
use serde::{Deserialize, Serialize};

use crate::folder::{GameRecord, Manifest, csv_field};
use crate::plan::{ArmRole, Unit};

/// The runtime's cost counters as metrics, declared like a game's.
pub fn runtime_metrics() -> Vec<MetricSpec> {
    use harness_runtime::{Better::*, MetricKind::*, MetricRole::*};
    let doc = |name: &str| match name {
        "turns" => "Actions taken.",
        "steps" => "Expression-evaluation steps of the interpreter.",
        "previews" => "`sim.next` previews made.",
        "revisions" => "Revise blocks that changed a tunable.",
        "llm_calls" => "LLM calls, failed ones included.",
        "llm_turns" => "Turns with an LLM call.",
        "prompt_tokens" => "Prompt tokens reported by the LLM provider.",
        "overrides" => "Actions chosen by a layer above the lowest enabled one.",
        _ => "Completion tokens reported by the LLM provider.",
    };
    Costs::NAMES
        .iter()
        .map(|&name| {
            let (better, role) = match name {
                "turns" | "revisions" | "llm_turns" | "overrides" => (Neither, Info),
                _ => (Lower, Cost),
            };
            let spec = MetricSpec::new(name, Count, better, role, doc(name));
            match name {
                "revisions" => spec.labelled("revis"),
                _ => spec.hidden(),
            }
        })
        .collect()
}

/// Every metric of a run: the game's, then the runtime's.
pub fn all_metrics(manifest: &Manifest) -> Vec<MetricSpec> {
    let mut metrics = manifest.metrics.clone();
    metrics.extend(runtime_metrics());
    metrics
}

/// One record as a sample over `metrics`: game metrics from the record's metrics (a rate is 1
/// or 0), runtime metrics from its costs.
pub fn sample(metrics: &[MetricSpec], record: &GameRecord) -> Sample {
    let costs = record.costs.pairs();
    Sample {
        key: UnitKey {
            instance: record.instance.clone(),
            seed: record.seed,
            replicate: record.replicate,
        },
        values: metrics
            .iter()
            .map(|spec| match record.metrics.get(&spec.name) {
                Some(serde_json::Value::Bool(b)) => Some(f64::from(u8::from(*b))),
                Some(value) => value.as_f64(),
                None => costs
                    .iter()
                    .find(|(name, _)| *name == spec.name)
                    .map(|(_, value)| *value as f64),
            })
            .collect(),
    }
}

/// One arm's row.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ArmRow {
    /// The arm's name.
    pub arm: String,
    /// Its layers.
    pub layers: Vec<String>,
    /// Its sweep point (empty without sweeps).
    pub point: String,
    /// What the arm is.
    pub role: ArmRole,
    /// Episodes planned.
    pub planned: usize,
    /// Episodes finished.
    pub games: usize,
    /// Whether some planned episodes are missing (then the arm gets no marginal).
    pub partial: bool,
    /// Every metric, aggregated, in the report's metric order.
    pub metrics: Vec<MetricSummary>,
    /// The share of turns in which an LLM was called.
    pub llm_turn_share: f64,
}

/// A layer's paired marginal: an arm with the layer against the arm without it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Marginal {
    /// The layer credited.
    pub layer: String,
    /// The arm with the layer.
    pub treatment: String,
    /// The arm without it.
    pub baseline: String,
    /// `cumulative` (the stack over the one below), `removal` (the full stack over the stack
    /// without the layer) or `contrast` (two named arms, `--contrast`).
    pub kind: String,
    /// The sweep point of both arms.
    pub point: String,
    /// A paired contrast per metric, in the report's metric order.
    pub contrasts: Vec<Contrast>,
}

/// The verdict of one sweep point.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PointVerdict {
    /// The sweep point (empty without sweeps).
    pub point: String,
    /// The heavy-lifting verdict on the primary metric over the cumulative marginals.
    pub verdict: Verdict,
    /// Pairs of layers the primary and secondary metric rank differently.
    pub disagreements: Vec<RankDisagreement>,
}

/// The report of a run, as printed with `--format json` and stored as `summary.json`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Report {
    /// The run's id.
    pub run_id: String,
    /// The harness module that ran.
    pub module: String,
    /// The game.
    pub game: String,
    /// The game's options.
    pub game_options: Vec<(String, String)>,
    /// The settings given for every arm.
    pub settings: Vec<(String, String)>,
    /// The metrics, in column order: the game's, then the runtime's.
    pub metrics: Vec<MetricSpec>,
    /// One row per arm.
    pub arms: Vec<ArmRow>,
    /// The layers' paired marginals.
    pub marginals: Vec<Marginal>,
    /// The verdict of each sweep point.
    pub verdicts: Vec<PointVerdict>,
    /// Episodes that ended in a runtime error, as `arm instance seed: message`.
    pub failures: Vec<String>,
    /// Episodes planned and finished.
    pub planned: usize,
    /// Episodes finished.
    pub finished: usize,
}

impl Report {
    /// The index of the primary metric.
    pub fn primary(&self) -> Option<usize> {
        self.metrics
            .iter()
            .position(|m| m.role == MetricRole::Primary)
    }

    /// The index of the first secondary metric.
    pub fn secondary(&self) -> Option<usize> {
        self.metrics
            .iter()
            .position(|m| m.role == MetricRole::Secondary)
    }
}

/// Builds the report from the finished records (each with its unit) of a run.
pub fn build(manifest: &Manifest, records: &[(Unit, GameRecord)]) -> Report {
    let metrics = all_metrics(manifest);
    let plan = &manifest.plan;
    let per_arm = plan.instances.len() * plan.seeds.len() * plan.replicates as usize;
    let samples_of = |arm: usize| -> Vec<Sample> {
        records
            .iter()
            .filter(|(unit, _)| unit.arm == arm)
            .map(|(_, record)| sample(&metrics, record))
            .collect()
    };
    let samples: Vec<Vec<Sample>> = (0..plan.arms.len()).map(samples_of).collect();
    let arms: Vec<ArmRow> = plan
        .arms
        .iter()
        .enumerate()
        .map(|(index, arm)| {
            let mine: Vec<&GameRecord> = records
                .iter()
                .filter(|(unit, _)| unit.arm == index)
                .map(|(_, record)| record)
                .collect();
            let turns: u64 = mine.iter().map(|r| r.costs.turns).sum();
            let llm_turns: u64 = mine.iter().map(|r| r.costs.llm_turns).sum();
            ArmRow {
                arm: arm.name.clone(),
                layers: arm.layers.clone(),
                point: arm.point.clone(),
                role: arm.role.clone(),
                planned: per_arm,
                games: mine.len(),
                partial: mine.len() < per_arm,
                metrics: metrics
                    .iter()
                    .enumerate()
                    .map(|(i, spec)| ablation::summarize(spec, &samples[index], i))
                    .collect(),
                llm_turn_share: if turns == 0 {
                    0.0
                } else {
                    llm_turns as f64 / turns as f64
                },
            }
        })
        .collect();
    let contrast = |treatment: usize, baseline: usize| -> Vec<Contrast> {
        metrics
            .iter()
            .enumerate()
            .map(|(i, spec)| ablation::contrast(spec, &samples[treatment], &samples[baseline], i))
            .collect()
    };
    let complete = |index: usize| !arms[index].partial;
    let mut marginals = Vec::new();
    let mut points: Vec<&str> = Vec::new();
    for arm in &plan.arms {
        if !points.contains(&arm.point.as_str()) {
            points.push(&arm.point);
        }
    }
    let mut verdicts = Vec::new();
    let primary = metrics.iter().position(|m| m.role == MetricRole::Primary);
    let secondary = metrics.iter().position(|m| m.role == MetricRole::Secondary);
    for point in &points {
        let cumulative: Vec<usize> = (0..plan.arms.len())
            .filter(|&i| plan.arms[i].point == *point && plan.arms[i].role == ArmRole::Cumulative)
            .collect();
        let mut layer_marginals = Vec::new();
        for pair in cumulative.windows(2) {
            let (below, above) = (pair[0], pair[1]);
            if !(complete(below) && complete(above)) {
                continue;
            }
            let layer = plan.arms[above]
                .layers
                .iter()
                .find(|l| !plan.arms[below].layers.contains(l))
                .cloned()
                .unwrap_or_default();
            let contrasts = contrast(above, below);
            if let Some(p) = primary {
                layer_marginals.push(LayerMarginal {
                    layer: layer.clone(),
                    primary: contrasts[p].difference.estimate,
                    secondary: secondary.map(|s| contrasts[s].difference.estimate),
                });
            }
            marginals.push(Marginal {
                layer,
                treatment: plan.arms[above].name.clone(),
                baseline: plan.arms[below].name.clone(),
                kind: "cumulative".into(),
                point: point.to_string(),
                contrasts,
            });
        }
        // A removal's marginal is the full stack of its point over it.
        let full = cumulative.last().copied();
        for index in 0..plan.arms.len() {
            let ArmRole::Removal { layer } = &plan.arms[index].role else {
                continue;
            };
            if plan.arms[index].point != *point {
                continue;
            }
            let Some(full) = full.filter(|&f| complete(f) && complete(index)) else {
                continue;
            };
            marginals.push(Marginal {
                layer: layer.clone(),
                treatment: plan.arms[full].name.clone(),
                baseline: plan.arms[index].name.clone(),
                kind: "removal".into(),
                point: point.to_string(),
                contrasts: contrast(full, index),
            });
        }
        let better = |i: Option<usize>| i.map_or(Better::Higher, |i| metrics[i].better);
        verdicts.push(PointVerdict {
            point: point.to_string(),
            verdict: ablation::verdict(&layer_marginals, better(primary)),
            disagreements: ablation::rank_disagreements(
                &layer_marginals,
                better(primary),
                better(secondary),
            ),
        });
    }
    for (treatment, baseline) in &plan.contrasts {
        let index = |name: &str| plan.arms.iter().position(|arm| arm.name == name);
        if let (Some(t), Some(b)) = (index(treatment), index(baseline))
            && complete(t)
            && complete(b)
        {
            marginals.push(Marginal {
                layer: String::new(),
                treatment: treatment.clone(),
                baseline: baseline.clone(),
                kind: "contrast".into(),
                point: String::new(),
                contrasts: contrast(t, b),
            });
        }
    }
    let failures = records
        .iter()
        .filter_map(|(_, record)| {
            record.error.as_ref().map(|error| {
                format!(
                    "{} {} seed {}{}: {error}",
                    record.arm,
                    record.instance,
                    record.seed,
                    if record.replicate > 0 {
                        format!(" replicate {}", record.replicate)
                    } else {
                        String::new()
                    }
                )
            })
        })
        .collect();
    Report {
        run_id: manifest.run_id.clone(),
        module: manifest.module.clone(),
        game: manifest.game.clone(),
        game_options: manifest.game_options.clone(),
        settings: manifest.settings.clone(),
        metrics,
        arms,
        marginals,
        verdicts,
        failures,
        planned: per_arm * plan.arms.len(),
        finished: records.len(),
    }
}

fn percent(x: f64) -> String {
    format!("{:.1}", x * 100.0)
}

/// A summary as a table cell: rates as percentages with their interval, means with four
/// decimals and their interval, counts as the mean per episode.
fn cell(spec: &MetricSpec, summary: &MetricSummary) -> String {
    let v = &summary.value;
    match spec.kind {
        MetricKind::Rate => format!(
            "{}% [{}, {}]",
            percent(v.estimate),
            percent(v.lo),
            percent(v.hi)
        ),
        MetricKind::Mean => format!("{:.4} [{:.3}, {:.3}]", v.estimate, v.lo, v.hi),
        MetricKind::Count => format!("{:.2}", v.estimate),
    }
}

/// A difference as a table cell: rates in percentage points.
fn delta(spec: &MetricSpec, difference: f64) -> String {
    match spec.kind {
        MetricKind::Rate => format!("{:+.1}", difference * 100.0),
        _ => format!("{:+.4}", difference),
    }
}

/// The header of a difference column.
fn delta_header(spec: &MetricSpec) -> String {
    match spec.kind {
        MetricKind::Rate => format!("Δ{} pp", spec.label),
        _ => format!("Δ{}", spec.label),
    }
}

/// The columns of the table: the metrics shown, in order. A descriptive (info) column appears
/// only when some arm has a non-zero value in it, so a harness that never revises has no
/// revisions column.
fn columns(report: &Report) -> Vec<usize> {
    report
        .metrics
        .iter()
        .enumerate()
        .filter(|(i, spec)| {
            spec.column
                && (spec.role != MetricRole::Info
                    || report
                        .arms
                        .iter()
                        .any(|arm| arm.metrics[*i].value.estimate != 0.0))
        })
        .map(|(i, _)| i)
        .collect()
}

/// The report as tables for the terminal.
pub fn table(report: &Report) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "harness {}   run {}", report.module, report.run_id);
    let settings: Vec<String> = report
        .game_options
        .iter()
        .chain(&report.settings)
        .map(|(key, value)| format!("{key}={value}"))
        .collect();
    let _ = writeln!(
        out,
        "game {}   settings: {}\n",
        report.game,
        settings.join(" ")
    );
    let shown = columns(report);
    let show_llm = report.arms.iter().any(|arm| arm.llm_turn_share > 0.0);
    let (primary, secondary) = (report.primary(), report.secondary());
    // The table's cells, row by row, so that column widths can fit their contents.
    let mut header: Vec<String> = vec!["arm".into(), "games".into()];
    for &i in &shown {
        let spec = &report.metrics[i];
        if let Some(label) = &spec.count_label {
            header.push(label.clone());
        }
        header.push(match spec.kind {
            MetricKind::Count => spec.label.clone(),
            _ => format!("{} [95% CI]", spec.label),
        });
    }
    if show_llm {
        header.push("llm".into());
    }
    for index in [primary, secondary].into_iter().flatten() {
        header.push(delta_header(&report.metrics[index]));
    }
    let marginal_of = |arm: &str| {
        report
            .marginals
            .iter()
            .find(|m| m.treatment == arm && m.kind == "cumulative")
    };
    let removal_of = |arm: &str| {
        report
            .marginals
            .iter()
            .find(|m| m.baseline == arm && m.kind == "removal")
    };
    let row = |arm: &ArmRow| -> Vec<String> {
        let mut cells = vec![
            arm.arm.clone(),
            if arm.partial {
                format!("{}/{}", arm.games, arm.planned)
            } else {
                arm.games.to_string()
            },
        ];
        for &i in &shown {
            let spec = &report.metrics[i];
            if spec.count_label.is_some() {
                cells.push(arm.metrics[i].successes.unwrap_or(0).to_string());
            }
            cells.push(cell(spec, &arm.metrics[i]));
        }
        if show_llm {
            cells.push(format!("{:.1}%", arm.llm_turn_share * 100.0));
        }
        let marginal = match arm.role {
            ArmRole::Removal { .. } => removal_of(&arm.arm),
            _ => marginal_of(&arm.arm),
        };
        for index in [primary, secondary].into_iter().flatten() {
            cells.push(marginal.map_or("—".to_string(), |m| {
                delta(
                    &report.metrics[index],
                    m.contrasts[index].difference.estimate,
                )
            }));
        }
        cells
    };
    // The table's sections, in the order of `group`.
    let groups = [
        "cumulative stacks (Δ: paired marginal of the layer the row adds)",
        "single-layer removals (Δ: what the full stack gains over the row)",
        "named arms",
    ];
    let group = |role: &ArmRole| match role {
        ArmRole::Cumulative => 0,
        ArmRole::Removal { .. } => 1,
        ArmRole::Named => 2,
    };
    let all_rows: Vec<Vec<String>> = report.arms.iter().map(row).collect();
    let widths: Vec<usize> = (0..header.len())
        .map(|c| {
            std::iter::once(&header)
                .chain(&all_rows)
                .map(|cells| cells.get(c).map_or(0, |s| s.chars().count()))
                .max()
                .unwrap_or(0)
        })
        .collect();
    let line = |cells: &[String]| -> String {
        let mut text = String::new();
        for (c, cell) in cells.iter().enumerate() {
            let pad = widths[c].saturating_sub(cell.chars().count());
            if c == 0 {
                let _ = write!(text, "{cell}{}", " ".repeat(pad));
            } else {
                let _ = write!(text, "  {}{cell}", " ".repeat(pad));
            }
        }
        text.trim_end().to_string()
    };
    for (index, title) in groups.iter().enumerate() {
        let rows: Vec<usize> = (0..report.arms.len())
            .filter(|&i| group(&report.arms[i].role) == index)
            .collect();
        if rows.is_empty() {
            continue;
        }
        let _ = writeln!(out, "{title}");
        let _ = writeln!(out, "{}", line(&header));
        for &i in &rows {
            let _ = writeln!(out, "{}", line(&all_rows[i]));
        }
        if index == 0 {
            for &i in &rows {
                let arm = &report.arms[i];
                let _ = writeln!(out, "  {} = {}", arm.arm, arm.layers.join(" + "));
            }
        }
        let _ = writeln!(out);
    }
    if report.arms.iter().any(|arm| arm.partial) {
        let _ = writeln!(
            out,
            "games n/m: the arm is partial ({} of {} episodes finished); it gets no marginal\n",
            report.finished, report.planned
        );
    }
    marginals_section(&mut out, report);
    verdict_section(&mut out, report);
    if !report.failures.is_empty() {
        let _ = writeln!(
            out,
            "\n{} episodes ended in a runtime error:",
            report.failures.len()
        );
        for failure in report.failures.iter().take(10) {
            let _ = writeln!(out, "  {failure}");
        }
        if report.failures.len() > 10 {
            let _ = writeln!(out, "  ... and {} more", report.failures.len() - 10);
        }
    }
    out
}

/// The paired marginals with their intervals and, for rates, McNemar's test.
fn marginals_section(out: &mut String, report: &Report) {
    if report.marginals.is_empty() {
        return;
    }
    let shown: Vec<usize> = [report.primary(), report.secondary()]
        .into_iter()
        .flatten()
        .collect();
    let _ = writeln!(
        out,
        "paired marginals (treatment − baseline over common episodes; 95% bootstrap CI; McNemar exact p for rates)"
    );
    // A contrast of two arms shows every metric that differs anywhere in its interval; a layer's
    // marginal the primary and secondary metric.
    let every: Vec<usize> = (0..report.metrics.len()).collect();
    for marginal in &report.marginals {
        let mut parts = Vec::new();
        let metrics = if marginal.kind == "contrast" {
            &every
        } else {
            &shown
        };
        for &i in metrics {
            let c = &marginal.contrasts[i];
            if marginal.kind == "contrast"
                && c.difference.estimate == 0.0
                && c.difference.lo == 0.0
                && c.difference.hi == 0.0
            {
                continue;
            }
            let spec = &report.metrics[i];
            let scale = if spec.kind == MetricKind::Rate {
                100.0
            } else {
                1.0
            };
            let unit = if spec.kind == MetricKind::Rate {
                " pp"
            } else {
                ""
            };
            let decimals = if spec.kind == MetricKind::Rate { 1 } else { 4 };
            let mut part = format!(
                "{} {:+.*}{unit} [{:+.*}, {:+.*}]",
                spec.label,
                decimals,
                c.difference.estimate * scale,
                decimals,
                c.difference.lo * scale,
                decimals,
                c.difference.hi * scale,
            );
            if let (Some(p), Some((b, c))) = (c.p_value, c.discordant) {
                let _ = write!(part, " p={p:.4} ({b}:{c})");
            }
            parts.push(part);
        }
        let pairs = marginal.contrasts.first().map_or(0, |c| c.pairs);
        let _ = writeln!(
            out,
            "  {:<12} {} vs {} ({pairs} pairs): {}",
            if marginal.kind == "contrast" {
                "contrast"
            } else {
                &marginal.layer
            },
            marginal.treatment,
            marginal.baseline,
            parts.join("; ")
        );
    }
    let _ = writeln!(out);
}

/// The heavy-lifting verdict per sweep point, and where the metrics disagree.
fn verdict_section(out: &mut String, report: &Report) {
    let Some(primary) = report.primary().map(|i| &report.metrics[i]) else {
        return;
    };
    let secondary = report.secondary().map(|i| &report.metrics[i]);
    let scale = |x: f64| match primary.kind {
        MetricKind::Rate => format!("{:+.1} pp", x * 100.0),
        _ => format!("{x:+.4}"),
    };
    for point in &report.verdicts {
        let at = if point.point.is_empty() {
            String::new()
        } else {
            format!(" at {}", point.point)
        };
        let _ = match &point.verdict {
            Verdict::HeavyLifting { layer, marginal } => writeln!(
                out,
                "heavy lifting{at}: `{layer}` has the single largest positive marginal on {} ({})",
                primary.label,
                scale(*marginal)
            ),
            Verdict::NoPositiveMarginal => writeln!(
                out,
                "heavy lifting{at}: no layer has a positive marginal on {}",
                primary.label
            ),
            Verdict::Tie { layers, marginal } => writeln!(
                out,
                "heavy lifting{at}: none; {} tie for the largest marginal on {} ({})",
                layers.join(", "),
                primary.label,
                scale(*marginal)
            ),
            Verdict::NoMarginals => writeln!(
                out,
                "heavy lifting{at}: no marginal to judge (one stack, or partial stacks)"
            ),
        };
        if let Some(secondary) = secondary {
            if point.disagreements.is_empty() && !matches!(point.verdict, Verdict::NoMarginals) {
                let _ = writeln!(
                    out,
                    "{} and {} rank the layers' marginals the same way",
                    primary.label, secondary.label
                );
            }
            for d in &point.disagreements {
                let _ = writeln!(
                    out,
                    "metrics disagree: {} ranks `{}` above `{}`, {} the other way round",
                    primary.label, d.by_primary, d.by_secondary, secondary.label
                );
            }
        }
    }
}

/// The report as CSV: one row per arm and metric (estimate and interval), then one row per
/// marginal and metric (paired difference, interval, p-value).
pub fn csv(report: &Report) -> String {
    let mut out = String::from("section,arm,baseline,point,metric,n,estimate,lo,hi,p_value\n");
    for arm in &report.arms {
        for (spec, summary) in report.metrics.iter().zip(&arm.metrics) {
            let _ = writeln!(
                out,
                "arm,{},,{},{},{},{},{},{},",
                csv_field(&arm.arm),
                csv_field(&arm.point),
                csv_field(&spec.name),
                summary.n,
                summary.value.estimate,
                summary.value.lo,
                summary.value.hi
            );
        }
    }
    for marginal in &report.marginals {
        for (spec, contrast) in report.metrics.iter().zip(&marginal.contrasts) {
            let _ = writeln!(
                out,
                "marginal,{},{},{},{},{},{},{},{},{}",
                csv_field(&marginal.treatment),
                csv_field(&marginal.baseline),
                csv_field(&marginal.point),
                csv_field(&spec.name),
                contrast.pairs,
                contrast.difference.estimate,
                contrast.difference.lo,
                contrast.difference.hi,
                contrast.p_value.map_or(String::new(), |p| p.to_string())
            );
        }
    }
    out
}
