//! The lens: views over result folders written by `harness ablate`.
//!
//! - `run`: the report (per-arm metrics with intervals, paired marginals, the verdict), what is
//!   missing, and one arm's best and worst instances; `--layer` adds that layer's paired
//!   effect per instance;
//! - `game`: one episode turn by turn, with the rules that chose each action located in the
//!   harness's files;
//! - `series`: a state field or a computed value over the turns of one episode (or summarised
//!   over every episode of an arm), against a reference setting such as a threshold;
//! - `llm`: LLM calls per arm: outcomes, tokens and latency;
//! - `compare`: two runs, paired over their common episodes, per arm and per instance.
//!
//! Every view is data first ([`Shown`]: text, JSON, CSV and a figure), rendered by the caller.

pub mod determinism;
pub mod html;
pub mod turns;

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use harness_runtime::{MetricKind, MetricSpec, TraceEvent};
use harness_stdlib::ablation::{self, Contrast, InstanceEffect, Sample};
use harness_stdlib::stats::Interval;
use serde::Serialize;
use serde_json::json;

use crate::folder::{GameRecord, RunFolder, csv_field};
use crate::games::Registry;
use crate::plan::{ArmRole, Unit};
use crate::plot;
use crate::report::{self, Report};

/// The views.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum View {
    /// The run's report, what is missing, best and worst instances.
    Run,
    /// One episode turn by turn.
    Game,
    /// A state field or computed value over turns.
    Series,
    /// LLM calls, outcomes, tokens and latency.
    Llm,
    /// Two runs paired over their common episodes.
    Compare,
}

/// What to show.
#[derive(Clone, Debug)]
pub struct Request {
    /// The view.
    pub view: View,
    /// The run folder.
    pub run: PathBuf,
    /// The arm (default: the top cumulative stack).
    pub arm: Option<String>,
    /// The episode, `INSTANCE:SEED` or `INSTANCE:SEED:REPLICATE`.
    pub episode: Option<String>,
    /// For `run` and `compare`: the layer whose per-instance effect to show.
    pub layer: Option<String>,
    /// The metric of per-instance tables and effects (default: the secondary metric, else the
    /// primary).
    pub metric: Option<String>,
    /// For `series`: the state field (`layer.field`, or a path inside it) or computed value.
    pub field: Option<String>,
    /// For `series`: a config parameter or tunable whose value to draw as a reference line.
    pub against: Option<String>,
    /// For `compare`: the other run (differences are RUN − RUN2).
    pub compare: Option<PathBuf>,
    /// For `run`: further runs of the same game whose arms the figure draws beside this run's.
    pub overlay: Vec<PathBuf>,
    /// Show at most this many turns of an episode.
    pub max_turns: Option<usize>,
}

/// A view ready to print: text, JSON, CSV, and its figure if it has one.
pub struct Shown {
    /// For a terminal.
    pub text: String,
    /// As one JSON value.
    pub json: serde_json::Value,
    /// As CSV rows with a header.
    pub csv: String,
    /// The view's figure as SVG.
    pub svg: Option<String>,
}

/// The lexicographically last subfolder of `parent` that has a manifest: the latest run.
pub fn latest_run(parent: &Path) -> Option<PathBuf> {
    let mut runs: Vec<PathBuf> = std::fs::read_dir(parent)
        .ok()?
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .filter(|path| path.join("manifest.json").is_file())
        .collect();
    runs.sort();
    runs.pop()
}

/// A run folder read into memory: its finished episodes and its report.
pub struct Run {
    folder: RunFolder,
    records: Vec<(Unit, GameRecord)>,
    missing: Vec<Unit>,
    report: Report,
}

impl Run {
    /// Opens a run folder; a parent of run folders is named in the error.
    pub fn open(path: &Path) -> Result<Run, String> {
        let folder = RunFolder::open(path).map_err(|error| {
            let mut message = error.to_string();
            if let Some(child) = latest_run(path) {
                message.push_str(&format!(
                    "; it holds run folders, such as `{}`",
                    child.display()
                ));
            }
            message
        })?;
        let (records, missing) = folder.records().map_err(|error| error.to_string())?;
        let report = report::build(folder.manifest(), &records);
        Ok(Run {
            folder,
            records,
            missing,
            report,
        })
    }

    fn id(&self) -> &str {
        &self.folder.manifest().run_id
    }

    /// The arm named (case-insensitively), or the top cumulative stack.
    fn arm(&self, name: Option<&str>) -> Result<usize, String> {
        let arms = &self.folder.manifest().plan.arms;
        let names = || {
            arms.iter()
                .map(|arm| arm.name.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        };
        match name {
            Some(name) => arms
                .iter()
                .position(|arm| arm.name.eq_ignore_ascii_case(name))
                .ok_or_else(|| {
                    format!(
                        "run {} has no arm `{name}`; its arms are {}",
                        self.id(),
                        names()
                    )
                }),
            None => arms
                .iter()
                .rposition(|arm| arm.role == ArmRole::Cumulative)
                .or_else(|| arms.len().checked_sub(1))
                .ok_or_else(|| format!("run {} has no arms", self.id())),
        }
    }

    fn arm_name(&self, arm: usize) -> &str {
        &self.folder.manifest().plan.arms[arm].name
    }

    /// The samples of one arm over all metrics.
    fn samples(&self, arm: usize) -> Vec<Sample> {
        self.records
            .iter()
            .filter(|(unit, _)| unit.arm == arm)
            .map(|(_, record)| report::sample(&self.report.metrics, record))
            .collect()
    }

    /// The metric `--metric` names, or the secondary, or the primary.
    fn metric(&self, name: Option<&str>) -> Result<usize, String> {
        let metrics = &self.report.metrics;
        match name {
            Some(name) => metrics.iter().position(|m| m.name == name).ok_or_else(|| {
                format!(
                    "run {} has no metric `{name}`; its metrics are {}",
                    self.id(),
                    metrics
                        .iter()
                        .map(|m| m.name.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                )
            }),
            None => self
                .report
                .secondary()
                .or(self.report.primary())
                .ok_or_else(|| "the run declares no metric".to_string()),
        }
    }

    /// The episode `--episode` names in arm `arm`.
    fn episode(&self, arm: usize, text: Option<&str>) -> Result<(Unit, GameRecord), String> {
        let text =
            text.ok_or("this view needs an episode: --episode INSTANCE:SEED (e.g. B07:1)")?;
        let parts: Vec<&str> = text.split(':').map(str::trim).collect();
        let (instance, seed, replicate) = match parts.as_slice() {
            [instance, seed] => (*instance, *seed, "0"),
            [instance, seed, replicate] => (*instance, *seed, *replicate),
            _ => {
                return Err(format!(
                    "--episode `{text}` is not INSTANCE:SEED or INSTANCE:SEED:REPLICATE"
                ));
            }
        };
        let number = |part: &str, what: &str| {
            part.parse::<u64>().map_err(|_| {
                format!("--episode `{text}`: the {what} `{part}` is not a whole number")
            })
        };
        let (seed, replicate) = (
            number(seed, "seed")?,
            number(replicate, "replicate")? as u32,
        );
        self.records
            .iter()
            .find(|(unit, _)| {
                unit.arm == arm
                    && unit.instance.eq_ignore_ascii_case(instance)
                    && unit.seed == seed
                    && unit.replicate == replicate
            })
            .cloned()
            .ok_or_else(|| {
                let plan = &self.folder.manifest().plan;
                format!(
                    "run {} has no finished episode {instance} seed {seed} replicate {replicate} \
                     in arm {} (instances {}; seeds {}); finish the run with `harness ablate \
                     --resume` or pick another",
                    self.id(),
                    self.arm_name(arm),
                    plan.instances.join(", "),
                    plan.seeds
                        .iter()
                        .map(u64::to_string)
                        .collect::<Vec<_>>()
                        .join(", ")
                )
            })
    }

    fn events(&self, unit: &Unit) -> Result<Vec<TraceEvent>, String> {
        let text = self.folder.trace(unit).map_err(|error| error.to_string())?;
        turns::parse(
            &text,
            &format!(
                "of {} {} seed {}",
                self.arm_name(unit.arm),
                unit.instance,
                unit.seed
            ),
        )
    }

    /// The paired effect of `layer` per instance: the stack that adds it over the stack below,
    /// or else the full stack over its removal.
    fn layer_effect(&self, layer: &str, metric: usize) -> Result<LayerEffect, String> {
        let marginal = self
            .report
            .marginals
            .iter()
            .find(|m| m.layer.eq_ignore_ascii_case(layer))
            .ok_or_else(|| {
                format!(
                    "run {} has no complete pair of arms with and without `{layer}` (the first \
                     layer has none; partial arms get none); its marginals are for {}",
                    self.id(),
                    self.report
                        .marginals
                        .iter()
                        .map(|m| m.layer.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                )
            })?;
        let plan = &self.folder.manifest().plan;
        let treatment = plan.arm(&marginal.treatment).map(|(i, _)| i).unwrap_or(0);
        let baseline = plan.arm(&marginal.baseline).map(|(i, _)| i).unwrap_or(0);
        Ok(LayerEffect {
            layer: marginal.layer.clone(),
            treatment: marginal.treatment.clone(),
            baseline: marginal.baseline.clone(),
            metric: self.report.metrics[metric].name.clone(),
            mean: marginal.contrasts[metric].difference,
            instances: sorted(ablation::instance_effects(
                &self.samples(treatment),
                &self.samples(baseline),
                metric,
            )),
        })
    }
}

/// Per-instance effects sorted from the largest gain to the largest loss.
fn sorted(mut effects: Vec<InstanceEffect>) -> Vec<InstanceEffect> {
    effects.sort_by(|a, b| {
        b.difference
            .estimate
            .total_cmp(&a.difference.estimate)
            .then_with(|| a.instance.cmp(&b.instance))
    });
    effects
}

/// A layer's paired per-instance effect.
#[derive(Clone, Debug, Serialize)]
struct LayerEffect {
    layer: String,
    treatment: String,
    baseline: String,
    metric: String,
    /// The mean paired difference over every common episode, with its interval.
    mean: Interval,
    instances: Vec<InstanceEffect>,
}

/// One instance of one arm on one metric.
#[derive(Clone, Debug, Serialize)]
struct InstanceRow {
    instance: String,
    episodes: usize,
    mean: f64,
}

/// Shows the asked-for view.
pub fn show(registry: &Registry, request: &Request) -> Result<Shown, String> {
    let run = Run::open(&request.run)?;
    match request.view {
        View::Run => run_view(&run, request),
        View::Game => game_view(&run, request),
        View::Series => series_view(registry, &run, request),
        View::Llm => llm_view(&run),
        View::Compare => compare_view(&run, request),
    }
}

fn effects_text(out: &mut String, effect: &LayerEffect, spec: &MetricSpec) {
    let scale = if spec.kind == MetricKind::Rate {
        100.0
    } else {
        1.0
    };
    let _ = writeln!(
        out,
        "\nper-instance effect of `{}` on {}: {} minus {} (paired over seeds; 95% CI), largest gain first",
        effect.layer, spec.label, effect.treatment, effect.baseline
    );
    for e in &effect.instances {
        let _ = writeln!(
            out,
            "  {:<12} {:+.4} [{:+.4}, {:+.4}]  ({} pairs: {:.4} → {:.4})",
            e.instance,
            e.difference.estimate * scale,
            e.difference.lo * scale,
            e.difference.hi * scale,
            e.pairs,
            e.baseline * scale,
            e.treatment * scale
        );
    }
}

fn effects_csv(effects: &[InstanceEffect]) -> String {
    let mut csv = String::from("instance,pairs,baseline,treatment,difference,lo,hi\n");
    for e in effects {
        let _ = writeln!(
            csv,
            "{},{},{},{},{},{},{}",
            csv_field(&e.instance),
            e.pairs,
            e.baseline,
            e.treatment,
            e.difference.estimate,
            e.difference.lo,
            e.difference.hi
        );
    }
    csv
}

fn effects_plot(
    title: &str,
    subtitle: &str,
    axis: &str,
    effects: &[InstanceEffect],
    mean: &Interval,
) -> String {
    let bars: Vec<plot::Effect> = effects
        .iter()
        .map(|e| plot::Effect {
            label: e.instance.clone(),
            value: e.difference.estimate,
            lo: e.difference.lo,
            hi: e.difference.hi,
        })
        .collect();
    let mean = plot::Mean {
        value: mean.estimate,
        lo: mean.lo,
        hi: mean.hi,
    };
    plot::signed_effects(title, subtitle, axis, &bars, Some(mean))
}

/// `names` joined as prose: `a`, `a and b`, `a, b and c`, with at most `most` named and the
/// rest counted.
fn prose_list(names: &[String], most: usize) -> String {
    let mut shown: Vec<String> = names.iter().take(most).cloned().collect();
    if names.len() > most {
        shown.push(format!("{} more", names.len() - most));
    }
    match shown.as_slice() {
        [] => String::new(),
        [one] => one.clone(),
        [init @ .., last] => format!("{} and {last}", init.join(", ")),
    }
}

/// What every episode of a run shares, for a figure's subtitle: the game, how many instances
/// and seeds.
fn plan_caption(manifest: &crate::folder::Manifest) -> String {
    let plan = &manifest.plan;
    let mut text = format!(
        "{} · {} instance{} × {} seed{}",
        manifest.game,
        plan.instances.len(),
        if plan.instances.len() == 1 { "" } else { "s" },
        plan.seeds.len(),
        if plan.seeds.len() == 1 { "" } else { "s" }
    );
    if plan.replicates > 1 {
        let _ = write!(text, " × {} replicates", plan.replicates);
    }
    text
}

/// What a run's arms differ in (their layers, and each setting whose value is not the same in
/// every arm), with what they share: the subtitle of a figure over arms. Figures name what
/// varies rather than the run's id, which says nothing to a reader.
fn arms_caption(run: &Run) -> String {
    let manifest = run.folder.manifest();
    let arms = &manifest.plan.arms;
    let mut differing: Vec<String> = Vec::new();
    if arms.windows(2).any(|w| w[0].layers != w[1].layers) {
        differing.push("layers".into());
    }
    let value_of = |arm: &crate::folder::ArmSettings, name: &str| {
        arm.values
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.clone())
    };
    if let Some(first) = manifest.effective.first() {
        for (name, _) in &first.values {
            let values: Vec<Option<String>> = manifest
                .effective
                .iter()
                .map(|arm| value_of(arm, name))
                .collect();
            if values.windows(2).any(|w| w[0] != w[1]) {
                differing.push(name.clone());
            }
        }
    }
    let mut text = plan_caption(manifest);
    if arms.len() > 1 {
        if differing.is_empty() {
            text.push_str(" · the arms' settings are identical");
        } else {
            let _ = write!(text, " · arms differ in {}", prose_list(&differing, 4));
        }
    }
    text
}

/// A label per run naming what sets it apart from the others (the harness, its sources or
/// module, game options, settings, the LLM, the plan), and a caption of what they share. Runs
/// that differ in nothing are lettered.
fn run_labels(manifests: &[&crate::folder::Manifest]) -> (Vec<String>, String) {
    let facts = |m: &crate::folder::Manifest| -> Vec<(String, String)> {
        let mut facts = vec![
            ("harness".to_string(), m.harness.clone()),
            ("module".to_string(), m.module.clone()),
            (
                "sources".to_string(),
                m.harness_hash.chars().take(8).collect(),
            ),
            (
                "llm".to_string(),
                m.llm
                    .as_ref()
                    .and_then(|llm| llm.get("model").and_then(|v| v.as_str()))
                    .unwrap_or("none")
                    .to_string(),
            ),
            ("instances".to_string(), m.plan.instances.join(",")),
            (
                "seeds".to_string(),
                match (m.plan.seeds.first(), m.plan.seeds.last()) {
                    (Some(first), Some(last)) => format!("{first}..{last}"),
                    _ => String::new(),
                },
            ),
        ];
        facts.extend(m.game_options.iter().cloned());
        facts.extend(m.settings.iter().cloned());
        facts.extend(
            m.set_json
                .iter()
                .map(|(name, value)| (name.clone(), value.to_string())),
        );
        facts
    };
    let all: Vec<Vec<(String, String)>> = manifests.iter().map(|m| facts(m)).collect();
    let mut names: Vec<String> = Vec::new();
    for (name, _) in all.iter().flatten() {
        if !names.contains(name) {
            names.push(name.clone());
        }
    }
    let value = |run: &[(String, String)], name: &str| {
        run.iter()
            .find(|(n, _)| n == name)
            .map_or("—".to_string(), |(_, v)| v.clone())
    };
    let differing: Vec<&String> = names
        .iter()
        .filter(|name| {
            all.windows(2)
                .any(|w| value(&w[0], name) != value(&w[1], name))
        })
        // A harness's hash differs whenever its path does; the path says more.
        .filter(|name| {
            name.as_str() != "sources"
                || all
                    .windows(2)
                    .all(|w| value(&w[0], "harness") == value(&w[1], "harness"))
        })
        .collect();
    let labels = all
        .iter()
        .enumerate()
        .map(|(index, run)| {
            if differing.is_empty() {
                char::from(b'A' + (index % 26) as u8).to_string()
            } else {
                differing
                    .iter()
                    .take(3)
                    .map(|name| {
                        let v = value(run, name);
                        let v: String = if v.chars().count() > 28 {
                            v.chars().take(27).chain(['…']).collect()
                        } else {
                            v
                        };
                        format!("{name}={v}")
                    })
                    .collect::<Vec<_>>()
                    .join(" ")
            }
        })
        .collect();
    let caption = match manifests.first() {
        Some(first) if differing.is_empty() => {
            format!("{} · the runs' settings are identical", plan_caption(first))
        }
        Some(first) => format!(
            "{} · runs differ in {}",
            first.game,
            prose_list(&differing.into_iter().cloned().collect::<Vec<_>>(), 4)
        ),
        None => String::new(),
    };
    (labels, caption)
}

/// The run figure: a panel for the primary metric and one for the first secondary, each arm's
/// value with its interval and episode count, with the arms of `overlays` (runs of the same
/// game) drawn beside this run's.
fn arms_figure(run: &Run, overlays: &[Run]) -> Result<String, String> {
    let runs: Vec<&Run> = std::iter::once(run).chain(overlays).collect();
    for other in overlays {
        if other.report.metrics != run.report.metrics {
            return Err(format!(
                "run {} cannot be drawn over run {}: they play different games or declare \
                 different metrics ({} and {})",
                other.id(),
                run.id(),
                other.folder.manifest().game,
                run.folder.manifest().game
            ));
        }
    }
    let metrics: Vec<usize> = [run.report.primary(), run.report.secondary()]
        .into_iter()
        .flatten()
        .collect();
    let mut arm_names: Vec<&str> = Vec::new();
    for r in &runs {
        for row in &r.report.arms {
            if !arm_names.contains(&row.arm.as_str()) {
                arm_names.push(&row.arm);
            }
        }
    }
    let panels: Vec<plot::Panel> = metrics
        .iter()
        .map(|&metric| {
            let spec = &run.report.metrics[metric];
            plot::Panel {
                axis: format!("{} (95% interval)", spec.label),
                rate: spec.kind == MetricKind::Rate,
                groups: arm_names
                    .iter()
                    .map(|name| plot::Group {
                        label: (*name).to_string(),
                        bars: runs
                            .iter()
                            .map(|r| {
                                let row = r.report.arms.iter().find(|row| row.arm == *name)?;
                                let summary = &row.metrics[metric];
                                Some(plot::Bar {
                                    value: summary.value.estimate,
                                    lo: summary.value.lo,
                                    hi: summary.value.hi,
                                    n: summary.n,
                                })
                            })
                            .collect(),
                    })
                    .collect(),
            }
        })
        .collect();
    let labels: Vec<&str> = metrics
        .iter()
        .map(|&m| run.report.metrics[m].label.as_str())
        .collect();
    let title = format!(
        "{} by arm",
        prose_list(&labels.iter().map(|l| l.to_string()).collect::<Vec<_>>(), 2)
    );
    let (series, subtitle) = if overlays.is_empty() {
        (vec![], arms_caption(run))
    } else {
        let manifests: Vec<&crate::folder::Manifest> =
            runs.iter().map(|r| r.folder.manifest()).collect();
        run_labels(&manifests)
    };
    Ok(plot::panels(&title, &subtitle, &series, &panels))
}

fn run_view(run: &Run, request: &Request) -> Result<Shown, String> {
    let arm = run.arm(request.arm.as_deref())?;
    let metric = run.metric(request.metric.as_deref())?;
    let spec = &run.report.metrics[metric];
    let mut text = report::table(&run.report);
    let _ = writeln!(
        text,
        "\nepisodes finished: {}/{}",
        run.report.finished, run.report.planned
    );
    if !run.missing.is_empty() {
        let shown: Vec<String> = run
            .missing
            .iter()
            .take(8)
            .map(|u| format!("{} {} s{}", run.arm_name(u.arm), u.instance, u.seed))
            .collect();
        let _ = writeln!(
            text,
            "missing: {}{} (finish with `harness ablate --resume {}`)",
            shown.join(", "),
            if run.missing.len() > 8 { ", ..." } else { "" },
            run.folder.root().display()
        );
    }
    let ends = end_counts(run);
    if ends.iter().any(|row| row.halted > 0) {
        let _ = writeln!(text, "\nhalted by the harness:");
        for row in ends.iter().filter(|row| row.halted > 0) {
            let reasons: Vec<String> = row
                .halts
                .iter()
                .map(|(reason, n)| format!("{reason} {n}"))
                .collect();
            let _ = writeln!(
                text,
                "  {:<12} {}/{} ({})",
                row.arm,
                row.halted,
                row.episodes,
                reasons.join(", ")
            );
        }
    }
    // One arm's instances by their mean on the metric.
    let samples = run.samples(arm);
    let mut rows: Vec<InstanceRow> = Vec::new();
    for instance in &run.folder.manifest().plan.instances {
        let values: Vec<f64> = samples
            .iter()
            .filter(|s| &s.key.instance == instance)
            .filter_map(|s| s.values[metric])
            .collect();
        if !values.is_empty() {
            rows.push(InstanceRow {
                instance: instance.clone(),
                episodes: values.len(),
                mean: harness_stdlib::stats::mean(&values),
            });
        }
    }
    let better_first = spec.better != harness_runtime::Better::Lower;
    rows.sort_by(|a, b| {
        let order = b.mean.total_cmp(&a.mean);
        if better_first { order } else { order.reverse() }.then_with(|| a.instance.cmp(&b.instance))
    });
    let n = rows.len().min(3);
    let _ = writeln!(
        text,
        "\nbest instances of {} by {}: {}",
        run.arm_name(arm),
        spec.label,
        rows[..n]
            .iter()
            .map(|r| format!("{} {:.4}", r.instance, r.mean))
            .collect::<Vec<_>>()
            .join(", ")
    );
    let _ = writeln!(
        text,
        "worst instances: {}",
        rows[rows.len() - n..]
            .iter()
            .rev()
            .map(|r| format!("{} {:.4}", r.instance, r.mean))
            .collect::<Vec<_>>()
            .join(", ")
    );
    let effect = request
        .layer
        .as_deref()
        .map(|layer| run.layer_effect(layer, metric))
        .transpose()?;
    if let Some(effect) = &effect {
        effects_text(&mut text, effect, spec);
    }
    let svg = Some(match &effect {
        Some(effect) => effects_plot(
            &format!("Per-instance effect of {} on {}", effect.layer, spec.label),
            &format!(
                "{} · {} over {}, sorted",
                plan_caption(run.folder.manifest()),
                effect.treatment,
                effect.baseline
            ),
            &format!(
                "Δ{} = {} − {}, paired over each instance's seeds (95% interval)",
                spec.label, effect.treatment, effect.baseline
            ),
            &effect.instances,
            &effect.mean,
        ),
        None => {
            let overlays = request
                .overlay
                .iter()
                .map(|path| Run::open(path))
                .collect::<Result<Vec<_>, _>>()?;
            arms_figure(run, &overlays)?
        }
    });
    let csv = match &effect {
        Some(effect) => effects_csv(&effect.instances),
        None => report::csv(&run.report),
    };
    Ok(Shown {
        text,
        json: json!({
            "report": run.report,
            "missing": run.missing,
            "arm": run.arm_name(arm),
            "metric": spec.name,
            "instances": rows,
            "ends": ends,
            "layer_effect": effect,
        }),
        csv,
        svg,
    })
}

/// How one arm's episodes ended.
#[derive(Serialize)]
struct EndRow {
    arm: String,
    episodes: usize,
    halted: usize,
    /// Halted episodes by the reason their `halt` gave.
    halts: BTreeMap<String, usize>,
    /// Episodes by end reason (`game_over`, `turn_limit`, `halted`, `error`).
    ends: BTreeMap<String, usize>,
}

/// Per arm, in plan order, how its finished episodes ended.
fn end_counts(run: &Run) -> Vec<EndRow> {
    let arms = &run.folder.manifest().plan.arms;
    arms.iter()
        .enumerate()
        .map(|(i, arm)| {
            let mut row = EndRow {
                arm: arm.name.clone(),
                episodes: 0,
                halted: 0,
                halts: BTreeMap::new(),
                ends: BTreeMap::new(),
            };
            for (_, record) in run.records.iter().filter(|(unit, _)| unit.arm == i) {
                row.episodes += 1;
                *row.ends.entry(record.end.clone()).or_default() += 1;
                if let Some(reason) = &record.halt {
                    row.halted += 1;
                    *row.halts.entry(reason.clone()).or_default() += 1;
                }
            }
            row
        })
        .collect()
}

fn game_view(run: &Run, request: &Request) -> Result<Shown, String> {
    let arm = run.arm(request.arm.as_deref())?;
    let (unit, record) = run.episode(arm, request.episode.as_deref())?;
    let events = run.events(&unit)?;
    let (mut rows, end) = turns::turns(&events);
    let keep = request.max_turns.unwrap_or(usize::MAX);
    let hidden = rows.len().saturating_sub(keep);
    rows.truncate(keep);
    let mut text = format!(
        "episode {} seed {}{} · arm {} · run {}\n",
        unit.instance,
        unit.seed,
        if unit.replicate > 0 {
            format!(" replicate {}", unit.replicate)
        } else {
            String::new()
        },
        run.arm_name(arm),
        run.id()
    );
    for row in &rows {
        let _ = write!(text, "turn {:>3}", row.turn);
        if let Some(action) = &row.action {
            let _ = write!(
                text,
                "  {action}  ({} rule {}{})",
                row.layer.as_deref().unwrap_or("?"),
                row.rule.map_or(0, |r| r + 1),
                row.rule_at
                    .as_deref()
                    .map(|at| format!(" at {at}"))
                    .unwrap_or_default()
            );
        }
        if !row.result.is_empty() {
            let _ = write!(text, "  → {}", row.result.join("; "));
        }
        let _ = writeln!(text);
        if row.previews > 0 {
            let best = row
                .best_preview
                .as_ref()
                .map(|(action, value)| format!(", best {action} = {value:.4}"))
                .unwrap_or_default();
            let _ = writeln!(text, "          {} previews{best}", row.previews);
        }
        if row.gate_open {
            let _ = writeln!(text, "          gate open");
        }
        for change in &row.revisions {
            let _ = writeln!(
                text,
                "          revised: {} {}→{}",
                change.name, change.old, change.new
            );
        }
        for change in &row.patches {
            let _ = writeln!(
                text,
                "          {}: {} → {}",
                change.name, change.old, change.new
            );
        }
        for call in &row.llm {
            let _ = writeln!(text, "          llm {call}");
        }
        for problem in &row.problems {
            let _ = writeln!(text, "          {problem}");
        }
    }
    if hidden > 0 {
        let _ = writeln!(text, "... {hidden} more turns (--max-turns)");
    }
    if let Some(end) = &end {
        let metrics: Vec<String> = end
            .metrics
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect();
        let reason = match &end.halt {
            Some(halt) => format!("{}: {halt}", end.reason),
            None => end.reason.clone(),
        };
        let _ = writeln!(text, "ended ({reason}): {}", metrics.join(" "));
    }
    let mut csv =
        String::from("turn,action,layer,rule,rule_at,result,previews,gate_open,revisions\n");
    for row in &rows {
        let _ = writeln!(
            csv,
            "{},{},{},{},{},{},{},{},{}",
            row.turn,
            csv_field(row.action.as_deref().unwrap_or("")),
            csv_field(row.layer.as_deref().unwrap_or("")),
            row.rule.map_or(String::new(), |r| r.to_string()),
            csv_field(row.rule_at.as_deref().unwrap_or("")),
            csv_field(&row.result.join("; ")),
            row.previews,
            u8::from(row.gate_open),
            row.revisions.len()
        );
    }
    Ok(Shown {
        text,
        json: json!({
            "run_id": run.id(),
            "arm": run.arm_name(arm),
            "record": record,
            "turns": rows,
            "hidden_turns": hidden,
            "end": end,
        }),
        csv,
        svg: None,
    })
}

/// The value of a reference setting (`--against`) for an arm, from the manifest.
fn reference(run: &Run, arm: usize, name: &str) -> Result<f64, String> {
    let manifest = run.folder.manifest();
    let effective = manifest
        .effective
        .iter()
        .find(|e| e.arm == run.arm_name(arm))
        .ok_or("the run's manifest has no effective settings for the arm")?;
    let (_, value) = effective
        .values
        .iter()
        .find(|(n, _)| n == name)
        .ok_or_else(|| {
            format!(
                "--against {name}: arm {} has no config parameter or tunable `{name}`",
                run.arm_name(arm)
            )
        })?;
    value
        .parse::<f64>()
        .map_err(|_| format!("--against {name}: its value `{value}` is not a number"))
}

/// One episode's series: from the trace for a state field, else by replaying the episode and
/// reading the computed value at each decision.
fn series_of(
    registry: &Registry,
    run: &Run,
    unit: &Unit,
    field: &str,
    replay: &mut Option<crate::exec::Experiment>,
) -> Result<Vec<turns::SeriesPoint>, String> {
    let events = run.events(unit)?;
    if let Some(points) = turns::field_series(&events, field) {
        return Ok(points);
    }
    let manifest = run.folder.manifest();
    if manifest.llm.is_some() {
        return Err(format!(
            "`{field}` is not a state field the traces record, and a computed value is read by \
             replaying the episode, which a run with an LLM cannot do faithfully; follow a \
             state field instead"
        ));
    }
    if replay.is_none() {
        *replay = Some(replayer(registry, run)?);
    }
    let Some(experiment) = replay.as_ref() else {
        return Err("no replay".into());
    };
    let name = field.rsplit('.').next().unwrap_or(field);
    let marks = turns::gates_and_revisions(&events);
    Ok(experiment
        .computed_series(unit, name)?
        .into_iter()
        .map(|(turn, value)| {
            let (gate_open, revised) = marks.get(&turn).copied().unwrap_or_default();
            turns::SeriesPoint {
                turn,
                value: serde_json::to_value(&value).ok(),
                gate_open,
                revised,
            }
        })
        .collect())
}

/// The run's experiment rebuilt from its manifest, to replay episodes.
fn replayer(registry: &Registry, run: &Run) -> Result<crate::exec::Experiment, String> {
    let manifest = run.folder.manifest();
    let sources = crate::load::Sources::load(Some(&manifest.harness))?;
    if sources.hash() != manifest.harness_hash {
        return Err(format!(
            "the harness under {} changed since the run, so its episodes cannot be replayed to \
             read computed values; follow a state field instead",
            manifest.harness
        ));
    }
    let program = crate::load::compile(registry, &sources, Some(&manifest.module))
        .map_err(|error| error.to_string())?;
    let kind = registry.get(&manifest.game)?;
    let options = kind.manifest().options(&manifest.game_options)?;
    crate::exec::Experiment::new(
        program.clone(),
        kind,
        options,
        sources.file_table(&program),
        manifest.plan.clone(),
        &manifest.settings,
        &manifest.set_json,
        harness_runtime::Limits::default(),
    )
}

fn series_view(registry: &Registry, run: &Run, request: &Request) -> Result<Shown, String> {
    let field = request
        .field
        .as_deref()
        .ok_or("the series view needs --field LAYER.NAME (a state field or computed value)")?;
    let arm = run.arm(request.arm.as_deref())?;
    let against = request
        .against
        .as_deref()
        .map(|name| reference(run, arm, name))
        .transpose()?;
    let mut replay = None;
    if request.episode.is_some() {
        let (unit, _) = run.episode(arm, request.episode.as_deref())?;
        let mut points = series_of(registry, run, &unit, field, &mut replay)?;
        let svg = {
            let trace: Vec<plot::TracePoint> = points
                .iter()
                .filter_map(|p| {
                    Some(plot::TracePoint {
                        turn: p.turn,
                        value: p.value.as_ref()?.as_f64()?,
                        gate_open: p.gate_open,
                        revised: p.revised,
                    })
                })
                .collect();
            (!trace.is_empty()).then(|| {
                plot::series(
                    &format!(
                        "{field} over turns, {} {} seed {}",
                        run.arm_name(arm),
                        unit.instance,
                        unit.seed
                    ),
                    field,
                    request.against.as_deref().zip(against),
                    &trace,
                )
            })
        };
        let keep = request.max_turns.unwrap_or(usize::MAX);
        let hidden = points.len().saturating_sub(keep);
        points.truncate(keep);
        let mut text = format!(
            "{field} · {} seed {}{} · arm {}{}\n",
            unit.instance,
            unit.seed,
            if unit.replicate > 0 {
                format!(" replicate {}", unit.replicate)
            } else {
                String::new()
            },
            run.arm_name(arm),
            against
                .map(|x| format!(" · {} = {x}", request.against.as_deref().unwrap_or("")))
                .unwrap_or_default()
        );
        let mut csv = String::from("turn,value,gate_open,revised\n");
        for p in &points {
            let value = p
                .value
                .as_ref()
                .map(turns::show)
                .unwrap_or_else(|| "—".into());
            let below = match (against, p.value.as_ref().and_then(|v| v.as_f64())) {
                (Some(reference), Some(x)) if x < reference => " (below)",
                _ => "",
            };
            let _ = writeln!(
                text,
                "turn {:>3}  {value}{below}{}{}",
                p.turn,
                if p.gate_open { "  gate open" } else { "" },
                if p.revised { "  revised" } else { "" }
            );
            let _ = writeln!(
                csv,
                "{},{},{},{}",
                p.turn,
                csv_field(&p.value.as_ref().map(|v| v.to_string()).unwrap_or_default()),
                u8::from(p.gate_open),
                u8::from(p.revised)
            );
        }
        if hidden > 0 {
            let _ = writeln!(text, "... {hidden} more turns (--max-turns)");
        }
        return Ok(Shown {
            text,
            json: json!({"field": field, "arm": run.arm_name(arm), "unit": unit, "against": against, "points": points}),
            csv,
            svg,
        });
    }
    // Every episode of the arm, summarised.
    #[derive(Serialize)]
    struct Summary {
        instance: String,
        seed: u64,
        replicate: u32,
        turns: usize,
        mean: f64,
        min: f64,
        max: f64,
        last: f64,
        below: Option<usize>,
    }
    let mut rows = Vec::new();
    for (unit, _) in run.records.iter().filter(|(unit, _)| unit.arm == arm) {
        let points = series_of(registry, run, unit, field, &mut replay)?;
        let values: Vec<f64> = points
            .iter()
            .filter_map(|p| p.value.as_ref()?.as_f64())
            .collect();
        if values.is_empty() {
            return Err(format!(
                "`{field}` is not a number, so it has no summary; show one episode with --episode"
            ));
        }
        rows.push(Summary {
            instance: unit.instance.clone(),
            seed: unit.seed,
            replicate: unit.replicate,
            turns: values.len(),
            mean: harness_stdlib::stats::mean(&values),
            min: values.iter().copied().fold(f64::INFINITY, f64::min),
            max: values.iter().copied().fold(f64::NEG_INFINITY, f64::max),
            last: values[values.len() - 1],
            below: against.map(|r| values.iter().filter(|&&x| x < r).count()),
        });
    }
    rows.sort_by(|a, b| {
        a.mean
            .total_cmp(&b.mean)
            .then_with(|| a.instance.cmp(&b.instance))
    });
    let mut text = format!(
        "{field} per episode of arm {} (lowest mean first){}\n",
        run.arm_name(arm),
        against
            .map(|x| format!(
                "; turns below {} = {x}",
                request.against.as_deref().unwrap_or("")
            ))
            .unwrap_or_default()
    );
    let mut csv = String::from("instance,seed,replicate,turns,mean,min,max,last,below\n");
    for r in &rows {
        let _ = writeln!(
            text,
            "  {:<12} s{:<3} {:>4} turns  mean {:.4}  min {:.4}  max {:.4}  last {:.4}{}",
            r.instance,
            r.seed,
            r.turns,
            r.mean,
            r.min,
            r.max,
            r.last,
            r.below.map(|b| format!("  below {b}")).unwrap_or_default()
        );
        let _ = writeln!(
            csv,
            "{},{},{},{},{},{},{},{},{}",
            csv_field(&r.instance),
            r.seed,
            r.replicate,
            r.turns,
            r.mean,
            r.min,
            r.max,
            r.last,
            r.below.map_or(String::new(), |b| b.to_string())
        );
    }
    Ok(Shown {
        text,
        json: json!({"field": field, "arm": run.arm_name(arm), "against": against, "episodes": rows}),
        csv,
        svg: None,
    })
}

fn llm_view(run: &Run) -> Result<Shown, String> {
    #[derive(Serialize, Default)]
    struct ArmLlm {
        arm: String,
        episodes: usize,
        calls: usize,
        outcomes: std::collections::BTreeMap<String, usize>,
        tokens: u64,
        latency_ms_total: u64,
        latency_ms_mean: f64,
    }
    let mut arms: Vec<ArmLlm> = Vec::new();
    for (index, arm) in run.folder.manifest().plan.arms.iter().enumerate() {
        let mut row = ArmLlm {
            arm: arm.name.clone(),
            ..ArmLlm::default()
        };
        let mut latencies = Vec::new();
        for (unit, _) in run.records.iter().filter(|(unit, _)| unit.arm == index) {
            row.episodes += 1;
            let calls = turns::llm_calls(&run.events(unit)?);
            row.calls += calls.len();
            for call in &calls {
                *row.outcomes.entry(call.outcome.clone()).or_default() += 1;
                row.tokens += call.tokens;
            }
            let logs: Vec<harness_runtime::LlmCallLog> = run
                .folder
                .llm_calls(unit)
                .map_err(|error| error.to_string())?;
            for log in logs {
                row.latency_ms_total += log.accounting.latency_ms;
                latencies.push(log.accounting.latency_ms as f64);
            }
        }
        row.latency_ms_mean = harness_stdlib::stats::mean(&latencies);
        arms.push(row);
    }
    let total: usize = arms.iter().map(|a| a.calls).sum();
    let mut text = format!(
        "LLM calls of run {} (llm: {})\n",
        run.id(),
        run.folder
            .manifest()
            .llm
            .as_ref()
            .map_or("none configured".to_string(), |llm| llm.to_string())
    );
    if total == 0 {
        text.push_str("this run made no LLM calls (no trace has an `llm_call` event)\n");
    }
    let mut csv = String::from("arm,episodes,calls,outcome,count,tokens,latency_ms_total\n");
    for a in &arms {
        let outcomes: Vec<String> = a.outcomes.iter().map(|(k, v)| format!("{k} {v}")).collect();
        let _ = writeln!(
            text,
            "  {:<22} {:>4} episodes  {:>5} calls  {}  tokens {}  latency {} ms (mean {:.0})",
            a.arm,
            a.episodes,
            a.calls,
            if outcomes.is_empty() {
                "—".to_string()
            } else {
                outcomes.join(", ")
            },
            a.tokens,
            a.latency_ms_total,
            a.latency_ms_mean
        );
        for (outcome, count) in &a.outcomes {
            let _ = writeln!(
                csv,
                "{},{},{},{},{},{},{}",
                csv_field(&a.arm),
                a.episodes,
                a.calls,
                csv_field(outcome),
                count,
                a.tokens,
                a.latency_ms_total
            );
        }
    }
    Ok(Shown {
        text,
        json: json!({"run_id": run.id(), "llm": run.folder.manifest().llm, "arms": arms}),
        csv,
        svg: None,
    })
}

fn compare_view(run: &Run, request: &Request) -> Result<Shown, String> {
    let other = request
        .compare
        .as_deref()
        .ok_or("the compare view needs the other run: --compare RUN2")?;
    let other = Run::open(other)?;
    let metrics = &run.report.metrics;
    if other.folder.manifest().game != run.folder.manifest().game {
        return Err(format!(
            "runs {} and {} play different games ({} and {}); compare runs of one game",
            run.id(),
            other.id(),
            run.folder.manifest().game,
            other.folder.manifest().game
        ));
    }
    #[derive(Serialize)]
    struct ArmCompare {
        arm: String,
        contrasts: Vec<Contrast>,
    }
    let mut arms = Vec::new();
    for (index, arm) in run.folder.manifest().plan.arms.iter().enumerate() {
        let Some((theirs, _)) = other.folder.manifest().plan.arm(&arm.name) else {
            continue;
        };
        let (a, b) = (run.samples(index), other.samples(theirs));
        let contrasts: Vec<Contrast> = metrics
            .iter()
            .enumerate()
            .map(|(i, spec)| ablation::contrast(spec, &a, &b, i))
            .collect();
        if contrasts.first().is_some_and(|c| c.pairs > 0) {
            arms.push(ArmCompare {
                arm: arm.name.clone(),
                contrasts,
            });
        }
    }
    if arms.is_empty() {
        return Err(format!(
            "runs {} and {} have no episode in common (same arm name, instance, seed and replicate)",
            run.id(),
            other.id()
        ));
    }
    let metric = run.metric(request.metric.as_deref())?;
    let spec = &metrics[metric];
    let arm = match (&request.arm, &request.layer) {
        (Some(_), Some(_)) => {
            return Err("give either --arm or --layer to compare, not both".into());
        }
        (_, Some(layer)) => {
            let effect = run.layer_effect(layer, metric)?;
            run.arm(Some(&effect.treatment))?
        }
        (arm, None) => run.arm(arm.as_deref())?,
    };
    let theirs = other
        .folder
        .manifest()
        .plan
        .arm(run.arm_name(arm))
        .map(|(i, _)| i)
        .ok_or_else(|| format!("run {} has no arm `{}`", other.id(), run.arm_name(arm)))?;
    let instances = sorted(ablation::instance_effects(
        &run.samples(arm),
        &other.samples(theirs),
        metric,
    ));
    let shown: Vec<usize> = [run.report.primary(), run.report.secondary()]
        .into_iter()
        .flatten()
        .collect();
    let mut text = format!(
        "A = {}\nB = {}\ndifferences are A − B, paired over common episodes (95% bootstrap CI; McNemar exact p for rates)\n",
        run.id(),
        other.id()
    );
    for a in &arms {
        let parts: Vec<String> = shown
            .iter()
            .map(|&i| {
                let c = &a.contrasts[i];
                let scale = if metrics[i].kind == MetricKind::Rate {
                    100.0
                } else {
                    1.0
                };
                let mut part = format!(
                    "{} {:+.4} [{:+.4}, {:+.4}]",
                    metrics[i].label,
                    c.difference.estimate * scale,
                    c.difference.lo * scale,
                    c.difference.hi * scale
                );
                if let Some(p) = c.p_value {
                    let _ = write!(part, " p={p:.4}");
                }
                part
            })
            .collect();
        let _ = writeln!(
            text,
            "  {:<22} {} pairs  {}",
            a.arm,
            a.contrasts[0].pairs,
            parts.join("; ")
        );
    }
    let mean = arms
        .iter()
        .find(|a| a.arm == run.arm_name(arm))
        .map(|a| a.contrasts[metric].difference)
        .ok_or_else(|| {
            format!(
                "runs {} and {} have no episode of arm `{}` in common",
                run.id(),
                other.id(),
                run.arm_name(arm)
            )
        })?;
    effects_text(
        &mut text,
        &LayerEffect {
            layer: format!("run A over run B on {}", run.arm_name(arm)),
            treatment: "A".into(),
            baseline: "B".into(),
            metric: spec.name.clone(),
            mean,
            instances: instances.clone(),
        },
        spec,
    );
    let (labels, caption) = run_labels(&[run.folder.manifest(), other.folder.manifest()]);
    let svg = Some(effects_plot(
        &format!(
            "Per-instance Δ{} on {}: {} − {}",
            spec.label,
            run.arm_name(arm),
            labels[0],
            labels[1]
        ),
        &format!("{caption} · sorted"),
        &format!(
            "Δ{} = A − B, paired over each instance's seeds (95% interval)",
            spec.label
        ),
        &instances,
        &mean,
    ));
    let mut csv = String::from("arm,metric,pairs,difference,lo,hi,p_value\n");
    for a in &arms {
        for (spec, c) in metrics.iter().zip(&a.contrasts) {
            let _ = writeln!(
                csv,
                "{},{},{},{},{},{},{}",
                csv_field(&a.arm),
                csv_field(&spec.name),
                c.pairs,
                c.difference.estimate,
                c.difference.lo,
                c.difference.hi,
                c.p_value.map_or(String::new(), |p| p.to_string())
            );
        }
    }
    Ok(Shown {
        text,
        json: json!({"a": run.id(), "b": other.id(), "metrics": metrics, "arms": arms, "arm": run.arm_name(arm), "instances": instances}),
        csv,
        svg,
    })
}

/// `harness lens determinism`: the reproducibility of each arm's runs (see
/// [`determinism`](mod@determinism)).
pub fn determinism_view(path: &Path, options: &determinism::Options) -> Result<Shown, String> {
    let run = Run::open(path)?;
    let primary = run
        .report
        .primary()
        .map(|i| run.report.metrics[i].name.clone())
        .unwrap_or_default();
    let arms: Vec<String> = run
        .folder
        .manifest()
        .plan
        .arms
        .iter()
        .map(|arm| arm.name.clone())
        .collect();
    let mut runs = Vec::new();
    for (unit, _) in &run.records {
        let events = run.events(unit)?;
        let calls: Vec<serde_json::Value> = run
            .folder
            .llm_calls(unit)
            .map_err(|error| error.to_string())?;
        let latency = (!calls.is_empty()).then(|| {
            calls
                .iter()
                .filter_map(|c| c.get("latency_ms").and_then(serde_json::Value::as_f64))
                .sum::<f64>()
        });
        runs.push((
            run.arm_name(unit.arm).to_string(),
            unit.instance.clone(),
            determinism::project(&events, options, &primary, latency),
        ));
    }
    let report = determinism::analyse(&arms, &runs, options)?;
    let mut csv =
        String::from("arm,instance,n,ps,tpc,sts,oc,di,di_weighted,rr,tsr,tokens,latency_ms\n");
    for c in &report.cells {
        let _ = writeln!(
            csv,
            "{},{},{},{},{},{},{},{},{},{},{},{},{}",
            csv_field(&c.arm),
            csv_field(&c.instance),
            c.n,
            c.ps,
            c.tpc,
            c.sts,
            c.oc,
            c.di,
            c.di_weighted,
            c.rr,
            c.tsr.estimate,
            c.tokens,
            c.latency_ms.map_or(String::new(), |l| l.to_string())
        );
    }
    Ok(Shown {
        text: determinism::text(&report),
        json: serde_json::to_value(&report).map_err(|error| error.to_string())?,
        csv,
        svg: None,
    })
}
