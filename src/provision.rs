//! Task-aware provisioning from a level sweep's result folder: the per-class score grid and its
//! floors over several ε (`harness map`), and the provisioning policies on the held-out
//! instances (`harness provision`), with their tables, JSON and figures.
//!
//! A level sweep is a run of `harness ablate` whose cumulative stacks are the levels (stack k
//! holds layers 1..k). Nothing here knows a game: the score is the run's declared primary
//! metric, the cost one of its declared cost metrics, the class a string metric of every
//! episode (`--group-by`), the self-check a boolean metric, and the construction and test
//! splits two of the game's declared instance sets. The arithmetic is
//! [`harness_stdlib::provision`]'s.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::Path;

use harness_runtime::{MetricRole, MetricSpec};
use harness_stdlib::provision::{self as core, Grid, Policy, Record};
use harness_stdlib::stats::Interval;
use serde::{Deserialize, Serialize};

use crate::folder::{GameRecord, RunFolder};
use crate::games::Registry;
use crate::plan::ArmRole;
use crate::plot;
use crate::report;

/// Which of a run's metrics and instance sets play which part. `None` picks the default.
#[derive(Clone, Debug, PartialEq)]
pub struct Columns {
    /// The score (default: the run's primary metric).
    pub metric: Option<String>,
    /// The additive cost (default: the declared cost metric `tokens`, else the first declared
    /// cost metric).
    pub cost: Option<String>,
    /// The tool-call count shown beside the cost (default: `tool_calls` when the game declares
    /// it, else the runtime's `turns`).
    pub calls: Option<String>,
    /// The boolean metric holding the executor's self-check.
    pub check: String,
    /// The string metric holding each episode's class.
    pub group_by: String,
    /// The instance set the map is estimated on.
    pub construction: String,
    /// The instance set policies are evaluated on.
    pub test: String,
}

impl Default for Columns {
    fn default() -> Columns {
        Columns {
            metric: None,
            cost: None,
            calls: None,
            check: "self_check".into(),
            group_by: "class".into(),
            construction: "construction".into(),
            test: "test".into(),
        }
    }
}

/// A level sweep read from a run folder.
#[derive(Clone, Debug, PartialEq)]
pub struct Sweep {
    /// The run's id.
    pub run_id: String,
    /// The game played.
    pub game: String,
    /// The harness module that ran.
    pub module: String,
    /// The levels' names: the layer each cumulative stack adds, bottom first.
    pub levels: Vec<String>,
    /// The columns resolved to metric names.
    pub metric: String,
    /// The cost metric.
    pub cost: String,
    /// The tool-call metric.
    pub calls: String,
    /// The self-check metric.
    pub check: String,
    /// The class metric.
    pub group_by: String,
    /// The construction and test sets' names.
    pub construction: String,
    /// The test set's name.
    pub test: String,
    /// Every episode of a level on an instance of either split.
    pub records: Vec<Record>,
    /// Things a reader should know: episodes that are missing, ended in an error, or lie in
    /// neither split.
    pub notes: Vec<String>,
}

/// A metric's value in a record: a game metric (a boolean is 1 or 0) or a runtime counter.
fn value(record: &GameRecord, name: &str) -> Option<f64> {
    match record.metrics.get(name) {
        Some(serde_json::Value::Bool(b)) => Some(f64::from(u8::from(*b))),
        Some(v) => v.as_f64(),
        None => record
            .costs
            .pairs()
            .iter()
            .find(|(counter, _)| *counter == name)
            .map(|(_, v)| *v as f64),
    }
}

fn names(metrics: &[MetricSpec]) -> String {
    metrics
        .iter()
        .map(|m| m.name.as_str())
        .collect::<Vec<_>>()
        .join(", ")
}

/// Reads the level sweep of the run folder at `path`. The game must be in `registry` (its
/// instance sets are the splits).
pub fn load(registry: &Registry, path: &Path, columns: &Columns) -> Result<Sweep, String> {
    let folder = RunFolder::open(path).map_err(|error| {
        let mut message = error.to_string();
        if let Some(child) = crate::lens::latest_run(path) {
            message.push_str(&format!(
                "; it holds run folders, such as `{}`",
                child.display()
            ));
        }
        message
    })?;
    let manifest = folder.manifest().clone();
    let metrics = report::all_metrics(&manifest);
    let declared = |name: &str| metrics.iter().any(|m| m.name == name);
    let metric = match &columns.metric {
        Some(name) if declared(name) => name.clone(),
        Some(name) => {
            return Err(format!(
                "run {} has no metric `{name}`; its metrics are {}",
                manifest.run_id,
                names(&metrics)
            ));
        }
        None => manifest
            .metrics
            .iter()
            .find(|m| m.role == MetricRole::Primary)
            .map(|m| m.name.clone())
            .ok_or_else(|| format!("run {} declares no primary metric", manifest.run_id))?,
    };
    let costs: Vec<&MetricSpec> = manifest
        .metrics
        .iter()
        .filter(|m| m.role == MetricRole::Cost)
        .collect();
    let cost = match &columns.cost {
        Some(name) if declared(name) => name.clone(),
        Some(name) => {
            return Err(format!(
                "run {} has no metric `{name}` to use as the cost; its metrics are {}",
                manifest.run_id,
                names(&metrics)
            ));
        }
        None => costs
            .iter()
            .find(|m| m.name == "tokens")
            .or(costs.first())
            .map(|m| m.name.clone())
            .unwrap_or_else(|| "steps".into()),
    };
    let calls = match &columns.calls {
        Some(name) if declared(name) => name.clone(),
        Some(name) => {
            return Err(format!(
                "run {} has no metric `{name}` to count calls with; its metrics are {}",
                manifest.run_id,
                names(&metrics)
            ));
        }
        None if declared("tool_calls") => "tool_calls".into(),
        None => "turns".into(),
    };
    // The levels: the cumulative stacks of the run's (only) sweep point.
    let first_point = manifest.plan.arms.first().map(|a| a.point.clone());
    let levels: Vec<usize> = manifest
        .plan
        .arms
        .iter()
        .enumerate()
        .filter(|(_, arm)| {
            arm.role == ArmRole::Cumulative && Some(&arm.point) == first_point.as_ref()
        })
        .map(|(i, _)| i)
        .collect();
    if levels.is_empty() {
        return Err(format!(
            "run {} has no cumulative stacks, so it is not a level sweep; run `harness ablate` \
             without --stacks, --arm or --removals-only plans",
            manifest.run_id
        ));
    }
    if manifest
        .plan
        .arms
        .iter()
        .any(|a| Some(&a.point) != first_point.as_ref())
    {
        return Err(format!(
            "run {} sweeps config values (--sweep), so its stacks are not one level ladder; \
             run the level sweep at one setting",
            manifest.run_id
        ));
    }
    let level_names: Vec<String> = levels
        .iter()
        .map(|&i| {
            let arm = &manifest.plan.arms[i];
            arm.layers
                .last()
                .cloned()
                .unwrap_or_else(|| arm.name.clone())
        })
        .collect();
    // The splits come from the game's declared instance sets.
    let game = registry.get(&manifest.game)?;
    let sets = game.manifest().instance_sets;
    let set = |name: &str| -> Result<BTreeSet<String>, String> {
        sets.iter()
            .find(|s| s.name == name)
            .map(|s| s.instances.iter().cloned().collect())
            .ok_or_else(|| {
                format!(
                    "game {} has no instance set `{name}`; its sets are {} (choose the splits \
                     with --construction and --test)",
                    manifest.game,
                    sets.iter()
                        .map(|s| s.name.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                )
            })
    };
    let construction = set(&columns.construction)?;
    let test = set(&columns.test)?;
    if let Some(both) = construction.intersection(&test).next() {
        return Err(format!(
            "instance `{both}` is in both `{}` and `{}`; the splits must be disjoint",
            columns.construction, columns.test
        ));
    }
    let (finished, missing) = folder.records().map_err(|error| error.to_string())?;
    // A run (seed and replicate) gets a dense index, so replicates count as runs.
    let runs: BTreeSet<(u64, u32)> = finished
        .iter()
        .map(|(_, r)| (r.seed, r.replicate))
        .collect();
    let run_index: BTreeMap<(u64, u32), u64> = runs
        .iter()
        .enumerate()
        .map(|(i, &k)| (k, i as u64))
        .collect();
    let mut records = Vec::new();
    let (mut errors, mut outside) = (0usize, BTreeSet::new());
    for (unit, record) in &finished {
        let Some(level) = levels.iter().position(|&arm| arm == unit.arm) else {
            continue;
        };
        let construction_split = if construction.contains(&record.instance) {
            true
        } else if test.contains(&record.instance) {
            false
        } else {
            outside.insert(record.instance.clone());
            continue;
        };
        if record.error.is_some() {
            errors += 1;
        }
        let class = match record.metrics.get(&columns.group_by) {
            Some(serde_json::Value::String(class)) => class.clone(),
            Some(other) => other.to_string(),
            None => {
                return Err(format!(
                    "episode {} of arm {} has no metric `{}` to group by; pass --group-by with \
                     one of its metrics: {}",
                    record.instance,
                    record.arm,
                    columns.group_by,
                    record
                        .metrics
                        .keys()
                        .cloned()
                        .collect::<Vec<_>>()
                        .join(", ")
                ));
            }
        };
        records.push(Record {
            task: record.instance.clone(),
            class,
            construction: construction_split,
            level: level + 1,
            seed: run_index[&(record.seed, record.replicate)],
            score: value(record, &metric).unwrap_or(0.0),
            cost: value(record, &cost).unwrap_or(0.0),
            tool_calls: value(record, &calls).unwrap_or(0.0),
            self_check: value(record, &columns.check).is_some_and(|v| v > 0.5),
        });
    }
    let mut notes = Vec::new();
    let level_missing = missing.iter().filter(|u| levels.contains(&u.arm)).count();
    if level_missing > 0 {
        notes.push(format!(
            "{level_missing} planned episodes are missing (finish the run with `harness ablate \
             --resume {}`); policies skip a task and run without every level",
            folder.root().display()
        ));
    }
    if errors > 0 {
        notes.push(format!(
            "{errors} episodes ended in a runtime error; they count with the metrics they ended with"
        ));
    }
    if !outside.is_empty() {
        notes.push(format!(
            "{} instances are in neither `{}` nor `{}` and are left out",
            outside.len(),
            columns.construction,
            columns.test
        ));
    }
    Ok(Sweep {
        run_id: manifest.run_id.clone(),
        game: manifest.game.clone(),
        module: manifest.module.clone(),
        levels: level_names,
        metric,
        cost,
        calls,
        check: columns.check.clone(),
        group_by: columns.group_by.clone(),
        construction: columns.construction.clone(),
        test: columns.test.clone(),
        records,
        notes,
    })
}

/// The floors of every class at one ε.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Floors {
    /// The tolerance.
    pub epsilon: f64,
    /// Per class, the floor's level name.
    pub floors: BTreeMap<String, String>,
}

/// What `harness map` computes: the construction split's grid and its floors.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MapReport {
    /// The sweep's run id.
    pub run_id: String,
    /// The game.
    pub game: String,
    /// The harness module.
    pub module: String,
    /// The score metric.
    pub metric: String,
    /// The instance set the grid is over.
    pub split: String,
    /// The levels, bottom first.
    pub levels: Vec<String>,
    /// The classes, in order.
    pub classes: Vec<String>,
    /// `mean[class][level]`: the mean score, `None` where no episode exists.
    pub mean: Vec<Vec<Option<f64>>>,
    /// Distinct tasks per class.
    pub tasks: Vec<usize>,
    /// Runs (seed and replicate pairs) per task.
    pub runs: usize,
    /// The floors at each ε, in the order given.
    pub maps: Vec<Floors>,
    /// Notes on the sweep.
    pub notes: Vec<String>,
}

impl MapReport {
    /// The floors at `epsilon` (the first map when `None`), as level numbers from 1.
    pub fn floors(&self, epsilon: Option<f64>) -> Result<(f64, BTreeMap<String, usize>), String> {
        let map = match epsilon {
            Some(e) => self.maps.iter().find(|m| (m.epsilon - e).abs() < 1e-9),
            None => self.maps.first(),
        }
        .ok_or_else(|| {
            format!(
                "the map has no floors at ε = {}; it has ε = {}",
                epsilon.unwrap_or(f64::NAN),
                self.maps
                    .iter()
                    .map(|m| m.epsilon.to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        })?;
        let floors = map
            .floors
            .iter()
            .map(|(class, name)| {
                self.levels
                    .iter()
                    .position(|l| l == name)
                    .map(|i| (class.clone(), i + 1))
                    .ok_or_else(|| format!("the map's level `{name}` is not a level of the map"))
            })
            .collect::<Result<_, String>>()?;
        Ok((map.epsilon, floors))
    }
}

/// Computes the map of a sweep's construction split at every ε of `epsilons`.
pub fn map(sweep: &Sweep, epsilons: &[f64]) -> MapReport {
    let construction: Vec<Record> = sweep
        .records
        .iter()
        .filter(|r| r.construction)
        .cloned()
        .collect();
    let grid = pad(core::grid(&construction, true), sweep.levels.len());
    let maps = epsilons
        .iter()
        .map(|&epsilon| Floors {
            epsilon,
            floors: core::floors(&grid, epsilon)
                .into_iter()
                .map(|(class, level)| (class, sweep.levels[level - 1].clone()))
                .collect(),
        })
        .collect();
    let tasks = grid
        .classes
        .iter()
        .map(|c| {
            construction
                .iter()
                .filter(|r| &r.class == c)
                .map(|r| r.task.as_str())
                .collect::<BTreeSet<_>>()
                .len()
        })
        .collect();
    let runs = construction
        .iter()
        .map(|r| r.seed)
        .collect::<BTreeSet<_>>()
        .len();
    MapReport {
        run_id: sweep.run_id.clone(),
        game: sweep.game.clone(),
        module: sweep.module.clone(),
        metric: sweep.metric.clone(),
        split: sweep.construction.clone(),
        levels: sweep.levels.clone(),
        classes: grid.classes,
        mean: grid.mean,
        tasks,
        runs,
        maps,
        notes: sweep.notes.clone(),
    }
}

/// A grid widened to `levels` columns (a split may lack the top levels' episodes).
fn pad(mut grid: Grid, levels: usize) -> Grid {
    for row in &mut grid.mean {
        row.resize(levels, None);
    }
    grid.levels = levels;
    grid
}

/// One policy's row of the provisioning table.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PolicyRow {
    /// The policy's name.
    pub policy: String,
    /// Mean score over every test task and run.
    pub score: f64,
    /// The population standard deviation of the per-run means.
    pub spread: f64,
    /// Summed cost relative to full provision's.
    pub cost_ratio: f64,
    /// Mean calls per task.
    pub calls: f64,
    /// Fraction of tasks that escalated.
    pub escalation_rate: f64,
    /// Mean attempts per task.
    pub attempts: f64,
    /// Paired bootstrap interval of the score difference against full provision.
    pub delta_vs_full: Interval,
    /// Whether the policy peeks at test outcomes (a ceiling, not deployable).
    pub oracle: bool,
}

/// What `harness provision` computes.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ProvisionReport {
    /// The sweep's run id.
    pub run_id: String,
    /// The game.
    pub game: String,
    /// The harness module.
    pub module: String,
    /// The score metric.
    pub metric: String,
    /// The cost metric.
    pub cost: String,
    /// The call metric.
    pub calls: String,
    /// The self-check metric.
    pub check: String,
    /// The instance set evaluated.
    pub split: String,
    /// Where the map came from: a run id and its split.
    pub map_from: String,
    /// The map's ε.
    pub epsilon: f64,
    /// The map: per class, the floor's level name.
    pub floors: BTreeMap<String, String>,
    /// The levels, bottom first.
    pub levels: Vec<String>,
    /// Test tasks.
    pub tasks: usize,
    /// Runs (seed and replicate pairs) per task.
    pub runs: usize,
    /// Full provision's mean cost per task and run, in the cost metric's unit.
    pub full_cost: f64,
    /// Bootstrap resamples.
    pub resamples: usize,
    /// The policies, in the order asked.
    pub policies: Vec<PolicyRow>,
    /// Notes on the sweep.
    pub notes: Vec<String>,
}

/// Evaluates `policies` on the sweep's test split with the floors of `map` at `epsilon`.
pub fn provision(
    sweep: &Sweep,
    map: &MapReport,
    epsilon: Option<f64>,
    policies: &[Policy],
    resamples: usize,
    seed: u64,
) -> Result<ProvisionReport, String> {
    if map.levels.len() != sweep.levels.len() {
        return Err(format!(
            "the map has {} levels ({}) but run {} has {} ({})",
            map.levels.len(),
            map.levels.join(", "),
            sweep.run_id,
            sweep.levels.len(),
            sweep.levels.join(", ")
        ));
    }
    let (epsilon, floors) = map.floors(epsilon)?;
    let test: Vec<Record> = sweep
        .records
        .iter()
        .filter(|r| !r.construction)
        .cloned()
        .collect();
    if test.is_empty() {
        return Err(format!(
            "run {} has no episode on the `{}` instances; run the sweep with --instances all \
             (or a set that includes them)",
            sweep.run_id, sweep.test
        ));
    }
    let tasks: BTreeSet<&str> = test.iter().map(|r| r.task.as_str()).collect();
    let runs: BTreeSet<u64> = test.iter().map(|r| r.seed).collect();
    let top = sweep.levels.len();
    let full: Vec<&Record> = test.iter().filter(|r| r.level == top).collect();
    let full_cost = full.iter().map(|r| r.cost).sum::<f64>() / full.len().max(1) as f64;
    let mut notes = sweep.notes.clone();
    let unmapped: Vec<&str> = test
        .iter()
        .map(|r| r.class.as_str())
        .collect::<BTreeSet<_>>()
        .into_iter()
        .filter(|c| !floors.contains_key(*c))
        .collect();
    if !unmapped.is_empty() {
        notes.push(format!(
            "classes without a floor in the map start at the top level: {}",
            unmapped.join(", ")
        ));
    }
    let rows = core::evaluate(&test, &floors, policies, resamples, seed)
        .into_iter()
        .map(|r| PolicyRow {
            policy: r.policy.name().to_string(),
            score: r.score,
            spread: r.spread,
            cost_ratio: r.cost_ratio,
            calls: r.tool_calls,
            escalation_rate: r.escalation_rate,
            attempts: r.attempts,
            delta_vs_full: r.delta_vs_full,
            oracle: r.oracle,
        })
        .collect();
    Ok(ProvisionReport {
        run_id: sweep.run_id.clone(),
        game: sweep.game.clone(),
        module: sweep.module.clone(),
        metric: sweep.metric.clone(),
        cost: sweep.cost.clone(),
        calls: sweep.calls.clone(),
        check: sweep.check.clone(),
        split: sweep.test.clone(),
        map_from: format!("{} ({})", map.run_id, map.split),
        epsilon,
        floors: floors
            .into_iter()
            .map(|(class, level)| (class, sweep.levels[level - 1].clone()))
            .collect(),
        levels: sweep.levels.clone(),
        tasks: tasks.len(),
        runs: runs.len(),
        full_cost,
        resamples,
        policies: rows,
        notes,
    })
}

/// Parses a comma-separated list of policy names.
pub fn parse_policies(text: &str) -> Result<Vec<Policy>, String> {
    text.split(',')
        .map(str::trim)
        .filter(|name| !name.is_empty())
        .map(|name| {
            Policy::parse(name).ok_or_else(|| {
                let known: Vec<&str> = Policy::ALL.iter().map(|p| p.name()).collect();
                let hint = if name == "lit-lookup" {
                    " (a literature lookup is `exec-lookup` with --map FILE holding the \
                     literature's map)"
                } else {
                    ""
                };
                format!(
                    "unknown policy `{name}`; the policies are {}{hint}",
                    known.join(", ")
                )
            })
        })
        .collect()
}

fn cell(value: Option<f64>) -> String {
    value.map_or_else(|| "—".into(), |v| format!("{v:.2}"))
}

/// The map as text: the grid with the first ε's floors starred, then the floors per ε.
pub fn map_table(report: &MapReport) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "map of run {} (game {}, {}): mean {} on the `{}` split",
        report.run_id, report.game, report.module, report.metric, report.split
    );
    let width = report
        .classes
        .iter()
        .map(|c| c.chars().count())
        .max()
        .unwrap_or(5)
        .max(5);
    let first = report.maps.first();
    let _ = write!(out, "\n{:<width$}", "class");
    for level in &report.levels {
        let _ = write!(out, " {level:>7}");
    }
    let _ = writeln!(out, "  tasks");
    for (i, class) in report.classes.iter().enumerate() {
        let _ = write!(out, "{class:<width$}");
        for (k, level) in report.levels.iter().enumerate() {
            let floor = first.is_some_and(|m| m.floors.get(class) == Some(level));
            let text = format!(
                "{}{}",
                cell(report.mean[i][k]),
                if floor { "*" } else { " " }
            );
            let _ = write!(out, " {text:>7}");
        }
        let _ = writeln!(out, "  {}", report.tasks[i]);
    }
    if let Some(m) = first {
        let _ = writeln!(
            out,
            "  * the floor at ε = {}: the smallest level within ε of the class's best; a cell \
             averages its class's tasks × {} runs",
            m.epsilon, report.runs
        );
    }
    let best_below_top = report
        .mean
        .iter()
        .filter(|row| {
            let top = row.last().copied().flatten().unwrap_or(f64::NEG_INFINITY);
            row.iter()
                .take(row.len().saturating_sub(1))
                .flatten()
                .any(|&v| v > top + 1e-12)
        })
        .count();
    let _ = writeln!(
        out,
        "  {best_below_top} of {} classes score best below the top level",
        report.classes.len()
    );
    let _ = write!(out, "\nfloors\n{:<width$}", "class");
    for m in &report.maps {
        let _ = write!(out, " {:>7}", format!("ε={}", m.epsilon));
    }
    out.push('\n');
    for class in &report.classes {
        let _ = write!(out, "{class:<width$}");
        for m in &report.maps {
            let _ = write!(
                out,
                " {:>7}",
                m.floors.get(class).map_or("—", String::as_str)
            );
        }
        out.push('\n');
    }
    for m in &report.maps {
        let used: BTreeSet<&String> = m.floors.values().collect();
        let counts: Vec<String> = report
            .levels
            .iter()
            .filter(|l| used.contains(l))
            .map(|l| format!("{}×{l}", m.floors.values().filter(|f| *f == l).count()))
            .collect();
        let changed = first.map_or(0, |f| {
            m.floors
                .iter()
                .filter(|(c, l)| f.floors.get(*c) != Some(*l))
                .count()
        });
        let _ = writeln!(
            out,
            "  ε = {}: {} ({} levels used; {changed} floors differ from ε = {})",
            m.epsilon,
            counts.join(", "),
            used.len(),
            first.map_or(0.0, |f| f.epsilon)
        );
    }
    for note in &report.notes {
        let _ = writeln!(out, "note: {note}");
    }
    out
}

/// The policy table as text.
pub fn provision_table(report: &ProvisionReport) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "provisioning on run {} (game {}, {}): `{}` split, {} tasks × {} runs",
        report.run_id, report.game, report.module, report.split, report.tasks, report.runs
    );
    let _ = writeln!(
        out,
        "map from {} at ε = {}; score = {}, cost = {} (full provision: {:.1} per task), \
         calls = {}, self-check = {}",
        report.map_from,
        report.epsilon,
        report.metric,
        report.cost,
        report.full_cost,
        report.calls,
        report.check
    );
    let _ = writeln!(
        out,
        "\n{:<13} {:>15} {:>9} {:>7} {:>6} {:>8}  Δ vs full [95% CI]",
        "policy",
        format!("{} ± spread", report.metric),
        "cost×full",
        "calls",
        "esc%",
        "attempts",
    );
    for row in &report.policies {
        let delta = &row.delta_vs_full;
        let _ = writeln!(
            out,
            "{:<13} {:>15} {:>9.2} {:>7.2} {:>6.1} {:>8.2}  {:+.3} [{:+.3}, {:+.3}]{}",
            row.policy,
            format!("{:.3} ± {:.3}", row.score, row.spread),
            row.cost_ratio,
            row.calls,
            100.0 * row.escalation_rate,
            row.attempts,
            delta.estimate,
            delta.lo,
            delta.hi,
            if row.oracle { "  (oracle)" } else { "" }
        );
    }
    let _ = writeln!(
        out,
        "  spread: population std of the per-run means; Δ: paired bootstrap over tasks \
         ({} resamples); oracles peek at the test split",
        report.resamples
    );
    let mut by_level: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for (class, level) in &report.floors {
        by_level.entry(level).or_default().push(class);
    }
    let _ = writeln!(out, "\nmap (ε = {}):", report.epsilon);
    for level in &report.levels {
        if let Some(classes) = by_level.get(level.as_str()) {
            let _ = writeln!(out, "  {level}: {}", classes.join(" "));
        }
    }
    for note in &report.notes {
        let _ = writeln!(out, "note: {note}");
    }
    out
}

/// The map as a heat map in the style of the paper's Figure 3: classes by levels, each cell
/// its mean score, the floors at the first ε outlined.
pub fn map_svg(report: &MapReport) -> String {
    let marked: Vec<Option<usize>> = report
        .classes
        .iter()
        .map(|class| {
            report
                .maps
                .first()
                .and_then(|m| m.floors.get(class))
                .and_then(|name| report.levels.iter().position(|l| l == name))
        })
        .collect();
    let epsilon = report.maps.first().map_or(0.0, |m| m.epsilon);
    plot::heat_map(
        &format!(
            "{}: mean {} on the {} split (outlined: floor at ε = {epsilon})",
            report.game, report.metric, report.split
        ),
        &report.classes,
        &report.levels,
        &report.mean,
        &marked,
    )
}

/// The policies as an accuracy–cost scatter in the style of the paper's Figure 4, with the
/// Pareto frontier of the deployable policies dashed.
pub fn provision_svg(report: &ProvisionReport) -> String {
    let points: Vec<plot::TradeOff> = report
        .policies
        .iter()
        .map(|row| plot::TradeOff {
            label: row.policy.clone(),
            cost: row.cost_ratio,
            value: row.score,
            spread: row.spread,
            hollow: row.oracle,
        })
        .collect();
    plot::trade_off(
        &format!(
            "{}: {} against {} on the {} split (map ε = {})",
            report.game, report.metric, report.cost, report.split, report.epsilon
        ),
        &format!("{} × full provision", report.cost),
        &format!("mean {}", report.metric),
        &points,
    )
}
