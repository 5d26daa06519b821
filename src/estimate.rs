//! `harness estimate` as a library call (CIEL): paired counterfactual replays at
//! pre-registered checkpoints, and the advantage table fitted from them.
//!
//! At every checkpoint (turn `t` after its observations and revisions, before its decision) of
//! every training episode, the episode is forked; the factual branch takes the continuation
//! policy's own decision and each admissible intervention (a nullary action of the inert
//! interventions layer whose `available when` holds) is forced in a branch of its own. Every
//! branch then runs on under the continuation policy. Replicate `k` reseeds the factual branch
//! and every intervention branch with the same salt `k`, so that they share common random
//! numbers and differ only where their workflows differ; `--unpaired` salts each branch
//! separately. The utility of a finished branch is `U = success − λ·cost/cost_max`.
//!
//! A pair record holds the `K` utilities of both sides, the mean difference `Γ̃` and its sample
//! variance `s²`. The table fits, per (context, intervention), the shrunk weighted mean
//! `Γ̂ = Σ w·Γ̃ / (Σ w + λ₀)` with `w = K / (s² + σ₀²)` and `λ₀ = n₀ · mean w` (`n₀` pseudo-records
//! at zero), with an interval from the records' spread. Everything depends only on the request,
//! never on the thread that ran a checkpoint, so the files are byte-identical on any number of
//! threads. Nothing here prints or reads the clock; the command line does.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::sync::Arc;

use harness_compiler::ir::{LayerId, Program};
use harness_runtime::{
    Costs, EpisodeResult, EpisodeRun, GameKind, GameOptions, Limits, Machine, RngStreams, Switches,
    Value,
};
use serde::{Deserialize, Serialize};

use crate::exec;
use crate::games::Registry;
use crate::load::{self, CompileError, Sources};
use crate::plan;

/// The `format` of an advantage table file.
pub const TABLE_FORMAT: &str = "harness-advantages/1";

/// The salt of replicate `k` of the branch `branch` (0 the factual, `i + 1` the `i`-th
/// intervention) when each branch is salted separately.
fn unpaired_salt(branch: usize, k: u32) -> u64 {
    ((branch as u64) << 32) | u64::from(k)
}

/// The salts of the ground truth's replicates start here, far from every estimation salt.
const TRUTH_SALT: u64 = 1 << 48;

/// The pre-registered checkpoints of an episode.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Checkpoints {
    /// Turns `K`, `2K`, `3K`, ... while the episode runs.
    Every(u32),
    /// These turns, ascending.
    List(Vec<u32>),
}

impl Checkpoints {
    /// Parses `every:K` or a comma-separated list of turns.
    pub fn parse(text: &str) -> Result<Checkpoints, String> {
        let text = text.trim();
        let bad = || {
            format!(
                "`{text}` is not a checkpoint spec: give `every:K` (turns K, 2K, ...) or a list of \
                 turns such as `5,10,20` (turns count from 1)"
            )
        };
        if let Some(every) = text.strip_prefix("every:") {
            let k: u32 = every.trim().parse().map_err(|_| bad())?;
            if k == 0 {
                return Err(bad());
            }
            return Ok(Checkpoints::Every(k));
        }
        let mut turns = BTreeSet::new();
        for part in text.split(',') {
            let turn: u32 = part.trim().parse().map_err(|_| bad())?;
            if turn == 0 || !turns.insert(turn) {
                return Err(bad());
            }
        }
        Ok(Checkpoints::List(turns.into_iter().collect()))
    }

    /// The spec as text.
    pub fn text(&self) -> String {
        match self {
            Checkpoints::Every(k) => format!("every:{k}"),
            Checkpoints::List(turns) => turns
                .iter()
                .map(u32::to_string)
                .collect::<Vec<_>>()
                .join(","),
        }
    }

    /// The checkpoint turns up to `max`.
    fn turns(&self, max: u32) -> Vec<u32> {
        match self {
            Checkpoints::Every(k) => (1..=max / k).map(|i| i * k).collect(),
            Checkpoints::List(turns) => turns.iter().copied().filter(|&t| t <= max).collect(),
        }
    }
}

/// The declared utility of a finished branch: `success − lambda · cost / cost_max`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Utility {
    /// The metric that says whether the task was solved (a boolean, or a number in 0..=1).
    pub success: String,
    /// The metric that counts the cost, if any.
    pub cost: Option<String>,
    /// The cost's weight.
    pub lambda: f64,
    /// The cost that counts as 1.
    pub cost_max: f64,
}

impl Utility {
    /// The range the utility is declared in: `[-lambda, 1]` (success in 0..=1, the cost in
    /// 0..=cost_max).
    pub fn range(&self) -> (f64, f64) {
        if self.cost.is_some() {
            (-self.lambda, 1.0)
        } else {
            (0.0, 1.0)
        }
    }

    /// A metric of a finished episode as a number.
    fn metric(metrics: &BTreeMap<String, Value>, name: &str) -> Result<f64, String> {
        match metrics.get(name) {
            Some(Value::Bool(b)) => Ok(f64::from(u8::from(*b))),
            Some(value) => value
                .as_f64()
                .ok_or_else(|| format!("the metric `{name}` is `{value}`, not a number")),
            None => Err(format!(
                "the game reports no metric `{name}`; its metrics are {}",
                metrics.keys().cloned().collect::<Vec<_>>().join(", ")
            )),
        }
    }

    /// The utility of an episode's final metrics, and whether it lies outside the range.
    fn of(&self, metrics: &BTreeMap<String, Value>) -> Result<(f64, bool), String> {
        let success = Self::metric(metrics, &self.success)?;
        let cost = match &self.cost {
            Some(name) => Self::metric(metrics, name)? / self.cost_max,
            None => 0.0,
        };
        let outside = !(0.0..=1.0).contains(&success) || !(0.0..=1.0).contains(&cost);
        Ok((success - self.lambda * cost, outside))
    }

    /// The cost metric's value, 0 without one.
    fn cost_of(&self, metrics: &BTreeMap<String, Value>) -> f64 {
        self.cost
            .as_ref()
            .and_then(|name| Self::metric(metrics, name).ok())
            .unwrap_or(0.0)
    }
}

/// How the table is fitted from the pair records.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Fit {
    /// `σ₀²` of the weight `w = K / (s² + σ₀²)`: the variance floor that keeps a record whose
    /// replays all agreed from outweighing every other.
    pub sigma0_sq: f64,
    /// `n₀`: pseudo-records at zero advantage (the shrinkage `λ₀ = n₀ · mean w`).
    pub prior_records: f64,
    /// `w ≡ 1` (the ablation of the weights).
    pub unit_weights: bool,
}

impl Default for Fit {
    fn default() -> Self {
        Fit {
            sigma0_sq: 0.01,
            prior_records: 1.0,
            unit_weights: false,
        }
    }
}

/// `--truth N --sample M`: a many-replay ground truth at a sample of the checkpoints.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TruthSpec {
    /// Paired replays per (checkpoint, intervention) of the ground truth.
    pub replays: u32,
    /// Checkpoints sampled, evenly spaced over all checkpoints in order.
    pub sample: usize,
}

/// What to estimate, as plain data.
#[derive(Clone, Debug)]
pub struct Request {
    /// The harness's path.
    pub harness: String,
    /// The module to run when the harness has several top modules.
    pub module: Option<String>,
    /// `--instances`: a set, `all`, or a list (default: the game's first set).
    pub instances: Option<String>,
    /// `--seeds`: the training seeds.
    pub seeds: String,
    /// Game options.
    pub options: Vec<(String, String)>,
    /// `--set` settings.
    pub set: Vec<(String, String)>,
    /// `--set-json` data.
    pub set_json: Vec<(String, serde_json::Value)>,
    /// The inert layer whose actions are the interventions.
    pub interventions: String,
    /// The computed value that names the context.
    pub context: String,
    /// The layers of the continuation policy (default: the interventions layer and every layer
    /// it needs).
    pub reference: Option<Vec<String>>,
    /// The checkpoints.
    pub checkpoints: Checkpoints,
    /// Replays `K` per (checkpoint, intervention).
    pub replays: u32,
    /// The utility.
    pub utility: Utility,
    /// Salt each branch separately.
    pub unpaired: bool,
    /// Also force the factual decision itself (`keep`), whose advantage must be exactly 0.
    pub keep: bool,
    /// The fit.
    pub fit: Fit,
    /// The ground truth, if asked for.
    pub truth: Option<TruthSpec>,
    /// Also replay every intervention unpaired and compare the variances.
    pub compare_unpaired: bool,
    /// Worker threads (0: one per core).
    pub threads: usize,
}

/// One (checkpoint, intervention) of one design: the `K` replays of both sides.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PairRecord {
    /// `paired` (common salts) or `unpaired` (a salt per branch).
    pub design: String,
    /// The instance.
    pub instance: String,
    /// The seed.
    pub seed: u64,
    /// The checkpoint's turn.
    pub turn: u32,
    /// The context at the checkpoint.
    pub context: String,
    /// The continuation policy's own decision there (`ω⁰`).
    pub factual: String,
    /// The intervention forced instead.
    pub intervention: String,
    /// Replays.
    pub replays: u32,
    /// The factual branch's utility per replay.
    pub u_factual: Vec<f64>,
    /// The intervention branch's utility per replay.
    pub u_intervention: Vec<f64>,
    /// `Γ̃`: the mean of the differences.
    pub gamma: f64,
    /// `s²`: the differences' sample variance (0 with one replay).
    pub s2: f64,
    /// The fit's weight of this record.
    pub weight: f64,
}

/// The fitted advantage of one (context, intervention).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Entry {
    /// `context|intervention`: the key the orchestrator looks up.
    pub key: String,
    /// The context.
    pub context: String,
    /// The intervention.
    pub intervention: String,
    /// `Γ̂`, shrunk toward 0.
    pub gamma: f64,
    /// The weighted mean before shrinkage.
    pub raw: f64,
    /// Pair records.
    pub n: usize,
    /// Replays, over the records.
    pub replays: u64,
    /// `Σ w`.
    pub weight: f64,
    /// The standard error of `Γ̂`.
    pub se: f64,
    /// The 95% interval `Γ̂ ± 1.96 · se`.
    pub ci: [f64; 2],
}

/// What replays cost, beyond their checkpoints: reported apart from evaluation cost.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ReplayCost {
    /// Branches run from a checkpoint to their end.
    pub continuations: u64,
    /// Turns run after the checkpoints.
    pub turns: u64,
    /// Evaluation steps after the checkpoints.
    pub steps: u64,
    /// `sim.next` previews after the checkpoints.
    pub previews: u64,
    /// The utility's cost metric accrued after the checkpoints (the environment's cost).
    pub cost: f64,
}

impl ReplayCost {
    fn add(&mut self, other: &ReplayCost) {
        self.continuations += other.continuations;
        self.turns += other.turns;
        self.steps += other.steps;
        self.previews += other.previews;
        self.cost += other.cost;
    }
}

/// The manifest of an advantage table: what it was trained on and how.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TableManifest {
    /// The harness's path.
    pub harness: String,
    /// The SHA-256 of its sources.
    pub harness_hash: String,
    /// The module.
    pub module: String,
    /// The game.
    pub game: String,
    /// The game options.
    pub game_options: Vec<(String, String)>,
    /// The training instances.
    pub instances: Vec<String>,
    /// The training seeds: evaluation seeds must be disjoint from them.
    pub training_seeds: Vec<u64>,
    /// The continuation policy's layers.
    pub reference: Vec<String>,
    /// The interventions layer.
    pub interventions_layer: String,
    /// The interventions it offers (nullary actions).
    pub interventions: Vec<String>,
    /// The computed value that names the context.
    pub context: String,
    /// The checkpoint spec.
    pub checkpoints: String,
    /// Replays `K` per (checkpoint, intervention).
    pub replays: u32,
    /// `paired` or `unpaired`.
    pub design: String,
    /// The utility.
    pub utility: Utility,
    /// The utility's declared range.
    pub utility_range: [f64; 2],
    /// Branch utilities that fell outside the range (the A11 band assumes none).
    pub outside_range: u64,
    /// The fit.
    pub fit: Fit,
    /// Checkpoints reached (an episode that ends first reaches fewer).
    pub checkpoints_reached: u64,
    /// Pair records.
    pub records: u64,
    /// What the replays of this table cost.
    pub replay_cost: ReplayCost,
}

/// An advantage table file (`advantages.json`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Table {
    /// [`TABLE_FORMAT`].
    pub format: String,
    /// What it was trained on.
    pub manifest: TableManifest,
    /// `context|intervention` to `Γ̂`: what a harness's `Map<String, Float>` config receives.
    pub advantages: BTreeMap<String, f64>,
    /// Every entry with its weight and interval.
    pub entries: Vec<Entry>,
}

/// One (checkpoint, intervention) of the ground truth.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TruthRecord {
    /// The instance.
    pub instance: String,
    /// The seed.
    pub seed: u64,
    /// The turn.
    pub turn: u32,
    /// The intervention.
    pub intervention: String,
    /// The estimate `Γ̃` (K paired replays).
    pub estimate: f64,
    /// Its `s²`.
    pub s2: f64,
    /// The ground truth `Γ` (N paired replays on other salts).
    pub truth: f64,
    /// Its `s²`.
    pub truth_s2: f64,
    /// `(Γ̃ − Γ) / sqrt(s²/K + s²_truth/N)`; `None` when both variances are 0.
    pub z: Option<f64>,
}

/// The ground truth's verdict.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TruthReport {
    /// Ground-truth replays per pair.
    pub replays: u32,
    /// Checkpoints sampled.
    pub checkpoints: usize,
    /// (checkpoint, intervention) pairs compared.
    pub pairs: usize,
    /// Pairs with a z (both variances 0 gives none).
    pub with_z: usize,
    /// Pairs without a z whose estimate differs from the truth (must be 0).
    pub exact_mismatches: usize,
    /// The mean of z.
    pub mean_z: f64,
    /// The standard deviation of z.
    pub sd_z: f64,
    /// The share of pairs with |z| ≤ 1.96.
    pub within_196: f64,
    /// The mean of `Γ̃ − Γ` over the pairs, and its z (the mean over its standard error).
    pub mean_difference: f64,
    /// z of the mean difference.
    pub mean_difference_z: f64,
    /// ζ of the A11 band.
    pub zeta: f64,
    /// The share of checkpoints at which `sup_ω |Γ̃ − Γ| ≤ R·sqrt(2 log(2 M_t / ζ) / K)`.
    pub band_coverage: f64,
    /// The band's smallest and largest half-width over the checkpoints.
    pub band_width: [f64; 2],
    /// What the ground truth's replays cost.
    pub replay_cost: ReplayCost,
}

/// `--compare-unpaired`: the variances of the two designs, record by record.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct VarianceReport {
    /// Records compared (both designs at one checkpoint and intervention).
    pub records: usize,
    /// Records where both variances are 0 (no ratio).
    pub both_zero: usize,
    /// Records where only the paired variance is 0 (ratio 0; no log).
    pub paired_zero: usize,
    /// Records where only the unpaired variance is 0 (ratio infinite; no log).
    pub unpaired_zero: usize,
    /// The median of `Var(paired) / Var(unpaired)` over the records with an unpaired variance.
    pub median_ratio: f64,
    /// Records with both variances positive, over which the log ratio is averaged.
    pub logged: usize,
    /// The mean of `ln(Var(paired) / Var(unpaired))`.
    pub mean_log_ratio: f64,
    /// Its 95% percentile-bootstrap interval (2,000 resamples of the records).
    pub mean_log_ratio_ci: [f64; 2],
}

/// What a finished estimate produced.
#[derive(Clone, Debug)]
pub struct Outcome {
    /// Every pair record, in checkpoint order (the design's, then unpaired ones when compared).
    pub pairs: Vec<PairRecord>,
    /// The fitted table of the request's design.
    pub table: Table,
    /// With `--compare-unpaired` (and a paired design): the table fitted from the unpaired
    /// records.
    pub unpaired_table: Option<Table>,
    /// With `--truth`: the records and the verdict.
    pub truth: Option<(Vec<TruthRecord>, TruthReport)>,
    /// With `--compare-unpaired`.
    pub variance: Option<VarianceReport>,
    /// With `--keep`: records, the largest |Γ̃| and the largest s² of the null intervention.
    pub null_check: Option<(usize, f64, f64)>,
}

/// Why an estimate could not be made.
#[derive(Debug)]
pub enum EstimateError {
    /// The harness does not compile.
    Compile(CompileError, Sources),
    /// Anything else, with what to do.
    Message(String),
}

impl From<String> for EstimateError {
    fn from(message: String) -> Self {
        EstimateError::Message(message)
    }
}

impl std::fmt::Display for EstimateError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            EstimateError::Compile(error, _) => write!(f, "{error}"),
            EstimateError::Message(message) => write!(f, "{message}"),
        }
    }
}

/// Everything a checkpoint's replays need.
struct Setup<'a> {
    request: &'a Request,
    kind: Arc<dyn GameKind>,
    options: GameOptions,
    machine: Machine,
    /// The interventions: nullary actions of the interventions layer.
    interventions: Vec<String>,
    max_turns: u32,
}

/// An intervention's name and the decision it forces (`None`: the continuation policy's).
type Forced = (String, Option<(String, Vec<Value>)>);

/// The ground truth at one checkpoint: per admissible intervention its name, mean difference
/// and variance; and what the replays cost.
type TruthAt = (Vec<(String, f64, f64)>, ReplayCost);

/// One finished branch.
struct Branch {
    utility: f64,
    outside: bool,
    cost: ReplayCost,
}

/// A checkpoint reached, with what its replays found.
struct Checkpoint {
    instance: String,
    seed: u64,
    turn: u32,
    /// The admissible interventions, in the layer's order.
    admissible: Vec<String>,
    records: Vec<PairRecord>,
    unpaired: Vec<PairRecord>,
    outside: u64,
    cost: ReplayCost,
    unpaired_cost: ReplayCost,
}

impl Setup<'_> {
    fn run(&self, instance: &str, seed: u64) -> Result<EpisodeRun<'_>, String> {
        let game = self
            .kind
            .start(instance, &self.options, &RngStreams::new(seed))
            .map_err(|message| {
                format!("{instance} seed {seed}: the game could not start: {message}")
            })?;
        Ok(EpisodeRun::start(&self.machine, game, None))
    }

    /// Runs `branch` (a fork at a checkpoint) to its end under `salt`, forced to `forced` when
    /// given, and returns its utility and what it cost beyond the checkpoint.
    fn branch(
        &self,
        at: &EpisodeRun<'_>,
        salt: u64,
        forced: Option<(&str, Vec<Value>, &str)>,
        place: &str,
    ) -> Result<Branch, String> {
        let mut branch = at.fork_untraced().ok_or_else(|| {
            "the game cannot fork an episode, so it cannot be replayed".to_string()
        })?;
        if !branch.reseed(salt) {
            return Err(
                "the game cannot reseed a forked episode (no common random numbers), so it \
                 cannot be replayed"
                    .into(),
            );
        }
        let prefix = (branch.costs(), branch.metrics());
        match forced {
            Some((action, args, name)) => branch
                .force(action, args, name)
                .map_err(|message| format!("{place}: cannot force `{action}`: {message}"))?,
            None => {
                if branch.decide().is_none() {
                    return Err(format!("{place}: the continuation policy made no decision"));
                }
            }
        }
        let result = branch.finish();
        if let Some(error) = &result.error {
            return Err(format!(
                "{place}: a replay ended in a runtime error ({}: {}); fix the harness and run \
                 again",
                error.code, error.message
            ));
        }
        let (utility, outside) = self.request.utility.of(&result.metrics)?;
        Ok(Branch {
            utility,
            outside,
            cost: continuation_cost(&self.request.utility, &prefix, &result),
        })
    }

    /// Every checkpoint of one training episode, in turn order.
    fn episode(&self, instance: &str, seed: u64) -> Result<Vec<Checkpoint>, String> {
        let mut out = Vec::new();
        for turn in self.request.checkpoints.turns(self.max_turns) {
            let mut run = self.run(instance, seed)?;
            if !run.pause_at(turn) {
                break;
            }
            out.push(self.checkpoint(&mut run, instance, seed, turn)?);
        }
        Ok(out)
    }

    fn checkpoint(
        &self,
        run: &mut EpisodeRun<'_>,
        instance: &str,
        seed: u64,
        turn: u32,
    ) -> Result<Checkpoint, String> {
        let request = self.request;
        let place = format!("{instance} seed {seed} turn {turn}");
        let context = match run.computed(&request.context) {
            Some(Ok(Value::Str(text))) => text.to_string(),
            Some(Ok(other)) => other.to_string(),
            Some(Err(error)) => {
                return Err(format!(
                    "{place}: the context `{}` failed: {}",
                    request.context, error.message
                ));
            }
            None => {
                return Err(format!(
                    "the continuation policy has no computed value `{}` to name the context; \
                     declare it in a layer of the policy or name another with --context",
                    request.context
                ));
            }
        };
        let mut probe = run
            .fork_untraced()
            .ok_or("the game cannot fork an episode")?;
        let (action, args) = probe
            .decide()
            .ok_or_else(|| format!("{place}: the continuation policy made no decision"))?;
        let factual = describe(&action, &args);
        let admissible: Vec<String> = self
            .interventions
            .iter()
            .filter(|name| {
                run.fork_untraced()
                    .is_some_and(|mut probe| probe.force(name, Vec::new(), name).is_ok())
            })
            .cloned()
            .collect();
        let mut forced: Vec<Forced> = admissible
            .iter()
            .map(|name| (name.clone(), Some((name.clone(), Vec::new()))))
            .collect();
        if request.keep {
            forced.push(("keep".to_string(), Some((action.clone(), args.clone()))));
        }
        let k_all = request.replays;
        let mut cost = ReplayCost::default();
        let mut unpaired_cost = ReplayCost::default();
        let mut outside = 0;
        let mut u_factual = Vec::new();
        let mut u_paired = vec![Vec::new(); forced.len()];
        let mut u_unpaired = vec![Vec::new(); forced.len()];
        for k in 0..k_all {
            let factual_branch = self.branch(run, u64::from(k), None, &place)?;
            outside += u64::from(factual_branch.outside);
            cost.add(&factual_branch.cost);
            u_factual.push(factual_branch.utility);
            for (i, (name, target)) in forced.iter().enumerate() {
                let forced_as = || {
                    target
                        .as_ref()
                        .map(|(a, args)| (a.as_str(), args.clone(), name.as_str()))
                };
                let own = unpaired_salt(i + 1, k);
                let design_salt = if request.unpaired { own } else { u64::from(k) };
                let b = self.branch(run, design_salt, forced_as(), &place)?;
                outside += u64::from(b.outside);
                cost.add(&b.cost);
                u_paired[i].push(b.utility);
                if request.compare_unpaired && !request.unpaired {
                    let b = self.branch(run, own, forced_as(), &place)?;
                    unpaired_cost.add(&b.cost);
                    u_unpaired[i].push(b.utility);
                }
            }
        }
        let record = |design: &str, name: &str, u_int: &[f64]| {
            let deltas: Vec<f64> = u_int.iter().zip(&u_factual).map(|(a, b)| a - b).collect();
            let (gamma, s2) = mean_var(&deltas);
            PairRecord {
                design: design.to_string(),
                instance: instance.to_string(),
                seed,
                turn,
                context: context.clone(),
                factual: factual.clone(),
                intervention: name.to_string(),
                replays: k_all,
                u_factual: u_factual.clone(),
                u_intervention: u_int.to_vec(),
                gamma,
                s2,
                weight: weight(&request.fit, k_all, s2),
            }
        };
        let design = if request.unpaired {
            "unpaired"
        } else {
            "paired"
        };
        let records = forced
            .iter()
            .zip(&u_paired)
            .map(|((name, _), u)| record(design, name, u))
            .collect();
        let unpaired = if request.compare_unpaired && !request.unpaired {
            forced
                .iter()
                .zip(&u_unpaired)
                .map(|((name, _), u)| record("unpaired", name, u))
                .collect()
        } else {
            Vec::new()
        };
        Ok(Checkpoint {
            instance: instance.to_string(),
            seed,
            turn,
            admissible,
            records,
            unpaired,
            outside,
            cost,
            unpaired_cost,
        })
    }

    /// The ground truth at one checkpoint: `replays` paired replays per admissible intervention
    /// on salts no estimate uses.
    fn truth(&self, point: &Checkpoint, replays: u32) -> Result<TruthAt, String> {
        let mut run = self.run(&point.instance, point.seed)?;
        if !run.pause_at(point.turn) {
            return Err(format!(
                "{} seed {} turn {}: the checkpoint is not reached again (the replay is not \
                 deterministic)",
                point.instance, point.seed, point.turn
            ));
        }
        let place = format!("{} seed {} turn {}", point.instance, point.seed, point.turn);
        let mut cost = ReplayCost::default();
        let mut deltas = vec![Vec::new(); point.admissible.len()];
        for j in 0..replays {
            let salt = TRUTH_SALT + u64::from(j);
            let factual = self.branch(&run, salt, None, &place)?;
            cost.add(&factual.cost);
            for (i, name) in point.admissible.iter().enumerate() {
                let b = self.branch(&run, salt, Some((name, Vec::new(), name)), &place)?;
                cost.add(&b.cost);
                deltas[i].push(b.utility - factual.utility);
            }
        }
        let out = point
            .admissible
            .iter()
            .zip(&deltas)
            .map(|(name, d)| {
                let (mean, var) = mean_var(d);
                (name.clone(), mean, var)
            })
            .collect();
        Ok((out, cost))
    }
}

/// `action(arg, ...)`.
fn describe(action: &str, args: &[Value]) -> String {
    let args: Vec<String> = args.iter().map(Value::to_string).collect();
    format!("{action}({})", args.join(", "))
}

/// What a branch cost after its checkpoint.
fn continuation_cost(
    utility: &Utility,
    prefix: &(Costs, BTreeMap<String, Value>),
    result: &EpisodeResult,
) -> ReplayCost {
    ReplayCost {
        continuations: 1,
        turns: result.costs.turns.saturating_sub(prefix.0.turns),
        steps: result.costs.steps.saturating_sub(prefix.0.steps),
        previews: result.costs.previews.saturating_sub(prefix.0.previews),
        cost: utility.cost_of(&result.metrics) - utility.cost_of(&prefix.1),
    }
}

/// The mean and the sample variance (0 for fewer than two values).
fn mean_var(values: &[f64]) -> (f64, f64) {
    if values.is_empty() {
        return (0.0, 0.0);
    }
    let n = values.len() as f64;
    let mean = values.iter().sum::<f64>() / n;
    if values.len() < 2 {
        return (mean, 0.0);
    }
    // Identical values have variance exactly 0, whatever rounding the sum of squares would do.
    if values.iter().all(|v| *v == values[0]) {
        return (values[0], 0.0);
    }
    let var = values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1.0);
    (mean, var)
}

/// The weight of a record of `k` replays with variance `s2`.
fn weight(fit: &Fit, k: u32, s2: f64) -> f64 {
    if fit.unit_weights {
        1.0
    } else {
        f64::from(k) / (s2 + fit.sigma0_sq)
    }
}

/// Fits the table's entries from the records: per (context, intervention), in key order.
pub fn fit(records: &[PairRecord], fit: &Fit) -> Vec<Entry> {
    let mut cells: BTreeMap<(&str, &str), Vec<&PairRecord>> = BTreeMap::new();
    for record in records {
        cells
            .entry((record.context.as_str(), record.intervention.as_str()))
            .or_default()
            .push(record);
    }
    cells
        .into_iter()
        .map(|((context, intervention), cell)| {
            let n = cell.len();
            let sw: f64 = cell.iter().map(|r| r.weight).sum();
            let swg: f64 = cell.iter().map(|r| r.weight * r.gamma).sum();
            let raw = if sw > 0.0 { swg / sw } else { 0.0 };
            let lambda0 = fit.prior_records * sw / n as f64;
            let shrink = if sw + lambda0 > 0.0 {
                sw / (sw + lambda0)
            } else {
                0.0
            };
            // The spread of the records around their weighted mean (a sandwich estimate, which
            // holds when the advantage differs between the checkpoints of one context); one
            // record falls back on its own replays' variance.
            let se_raw = if n >= 2 && sw > 0.0 {
                let spread: f64 = cell
                    .iter()
                    .map(|r| (r.weight * (r.gamma - raw)).powi(2))
                    .sum();
                (spread * n as f64 / (n as f64 - 1.0)).sqrt() / sw
            } else {
                (cell[0].s2 / f64::from(cell[0].replays.max(1))).sqrt()
            };
            let gamma = raw * shrink;
            let se = se_raw * shrink;
            Entry {
                key: format!("{context}|{intervention}"),
                context: context.to_string(),
                intervention: intervention.to_string(),
                gamma,
                raw,
                n,
                replays: cell.iter().map(|r| u64::from(r.replays)).sum(),
                weight: sw,
                se,
                ci: [gamma - 1.96 * se, gamma + 1.96 * se],
            }
        })
        .collect()
}

/// The interventions of `layer`: its nullary actions, in declaration order, and the names of
/// those that take arguments (which cannot be forced without them, so are left out).
fn interventions(program: &Program, layer: LayerId) -> (Vec<String>, Vec<String>) {
    let mut nullary = Vec::new();
    let mut with_args = Vec::new();
    for id in &program.layers[layer.index()].actions {
        let action = &program.actions[id.index()];
        if action.params.is_empty() {
            nullary.push(action.name.clone());
        } else {
            with_args.push(action.name.clone());
        }
    }
    (nullary, with_args)
}

/// Runs an estimate.
pub fn estimate(registry: &Registry, request: &Request) -> Result<Outcome, EstimateError> {
    if request.replays == 0 {
        return Err("--replays must be at least 1".to_string().into());
    }
    if let Some(truth) = request.truth {
        if truth.replays < 2 || truth.sample == 0 {
            return Err(
                "--truth needs at least 2 replays and --sample at least 1 checkpoint"
                    .to_string()
                    .into(),
            );
        }
        if request.unpaired {
            return Err(
                "--truth checks the paired estimate; drop --unpaired (compare designs with \
                 --compare-unpaired)"
                    .to_string()
                    .into(),
            );
        }
    }
    if request.utility.cost.is_some()
        && (!request.utility.cost_max.is_finite() || request.utility.cost_max <= 0.0)
    {
        return Err("--cost-max must be a positive number".to_string().into());
    }
    if !request.utility.lambda.is_finite() || request.utility.lambda < 0.0 {
        return Err("--lambda must be a number at least 0".to_string().into());
    }
    let sources = Sources::load(Some(&request.harness))?;
    let program = match load::compile(registry, &sources, request.module.as_deref()) {
        Ok(program) => program,
        Err(error) => return Err(EstimateError::Compile(error, sources)),
    };
    let game = program
        .game
        .clone()
        .ok_or_else(|| format!("`{}` names no game to replay", program.module))?;
    let kind = registry.get(&game)?;
    let (instances, options) = plan::instances_and_options(
        &kind.manifest(),
        request.instances.as_deref(),
        &request.options,
    )?;
    let seeds = plan::parse_seeds(&request.seeds)?;
    let declared: Vec<String> = kind
        .manifest()
        .metrics
        .iter()
        .map(|m| m.name.clone())
        .collect();
    for name in std::iter::once(&request.utility.success).chain(&request.utility.cost) {
        if !declared.contains(name) {
            return Err(format!(
                "the game `{}` reports no metric `{name}` for the utility; its metrics are {}",
                kind.name(),
                declared.join(", ")
            )
            .into());
        }
    }
    let layer_names: Vec<&str> = program.layers.iter().map(|l| l.name.as_str()).collect();
    let layer = program
        .layers
        .iter()
        .position(|l| l.name == request.interventions)
        .ok_or_else(|| {
            format!(
                "the harness has no interventions layer `{}` (its layers are {}); name it with \
                 --interventions, or add an inert layer whose nullary actions are the \
                 interventions",
                request.interventions,
                layer_names.join(", ")
            )
        })?;
    let def = &program.layers[layer];
    if !def.decide.is_empty() || !def.revise.is_empty() {
        return Err(format!(
            "layer `{}` decides or revises, so it is not inert: the continuation policy would \
             take its actions by itself; move its rules to a layer above it",
            def.name
        )
        .into());
    }
    let (offered, with_args) = interventions(&program, LayerId(layer as u32));
    if offered.is_empty() {
        return Err(format!(
            "layer `{}` has no action without arguments to force as an intervention{}",
            def.name,
            if with_args.is_empty() {
                String::new()
            } else {
                format!(" (it has {}, which take arguments)", with_args.join(", "))
            }
        )
        .into());
    }
    if request.keep && offered.iter().any(|name| name == "keep") {
        return Err(
            "the interventions layer has an action `keep`, which --keep names"
                .to_string()
                .into(),
        );
    }
    let reference: Vec<String> = match &request.reference {
        Some(layers) => {
            plan::named(&program, "reference", layers)?;
            layers.clone()
        }
        None => def
            .below
            .iter()
            .map(|id| program.layers[id.index()].name.clone())
            .chain([def.name.clone()])
            .collect(),
    };
    let mut natives = harness_stdlib::prelude::natives();
    natives.extend(&kind.natives());
    let switches = Switches {
        layers: Some(reference.clone()),
        without: Vec::new(),
        set: request.set.clone(),
        set_json: request.set_json.clone(),
    };
    let limits = Limits::default();
    let machine = Machine::new(program.clone(), natives, &switches, limits)
        .map_err(|error| format!("the continuation policy: {}", error.message))?;
    if !machine.is_enabled(LayerId(layer as u32)) {
        return Err(format!(
            "the continuation policy's layers ({}) leave the interventions layer `{}` off",
            reference.join(", "),
            def.name
        )
        .into());
    }
    if !program
        .computed
        .iter()
        .any(|c| c.name == request.context && machine.is_enabled(c.layer))
    {
        return Err(format!(
            "the continuation policy ({}) has no computed value `{}` to name the context; \
             declare it in one of its layers or name another with --context",
            reference.join(", "),
            request.context
        )
        .into());
    }
    let setup = Setup {
        request,
        kind: kind.clone(),
        options: options.clone(),
        machine,
        interventions: offered.clone(),
        max_turns: limits.max_turns,
    };
    let units: Vec<(String, u64)> = instances
        .iter()
        .flat_map(|i| seeds.iter().map(move |s| (i.clone(), *s)))
        .collect();

    use rayon::prelude::*;
    let pool = exec::pool(request.threads)?;
    let episodes: Vec<Result<Vec<Checkpoint>, String>> = pool.install(|| {
        units
            .par_iter()
            .map(|(instance, seed)| setup.episode(instance, *seed))
            .collect()
    });
    let mut points = Vec::new();
    for episode in episodes {
        points.append(&mut episode?);
    }

    let mut pairs: Vec<PairRecord> = Vec::new();
    let mut unpaired: Vec<PairRecord> = Vec::new();
    let mut cost = ReplayCost::default();
    let mut unpaired_cost = ReplayCost::default();
    let mut outside = 0;
    for point in &points {
        pairs.extend(point.records.iter().cloned());
        unpaired.extend(point.unpaired.iter().cloned());
        cost.add(&point.cost);
        unpaired_cost.add(&point.unpaired_cost);
        outside += point.outside;
    }
    let (lo, hi) = request.utility.range();
    let manifest = |design: &str, records: usize, replay_cost: ReplayCost| TableManifest {
        harness: sources.name.clone(),
        harness_hash: sources.hash(),
        module: program.module.clone(),
        game: kind.name().to_string(),
        game_options: options.pairs(),
        instances: instances.clone(),
        training_seeds: seeds.clone(),
        reference: reference.clone(),
        interventions_layer: def.name.clone(),
        interventions: offered.clone(),
        context: request.context.clone(),
        checkpoints: request.checkpoints.text(),
        replays: request.replays,
        design: design.to_string(),
        utility: request.utility.clone(),
        utility_range: [lo, hi],
        outside_range: outside,
        fit: request.fit.clone(),
        checkpoints_reached: points.len() as u64,
        records: records as u64,
        replay_cost,
    };
    let table_of = |records: &[PairRecord], design: &str, replay_cost: ReplayCost| {
        let entries = fit(records, &request.fit);
        Table {
            format: TABLE_FORMAT.to_string(),
            manifest: manifest(design, records.len(), replay_cost),
            advantages: entries.iter().map(|e| (e.key.clone(), e.gamma)).collect(),
            entries,
        }
    };
    let design = if request.unpaired {
        "unpaired"
    } else {
        "paired"
    };
    let table = table_of(&pairs, design, cost);
    let unpaired_table = (!unpaired.is_empty()).then(|| {
        let mut both = cost;
        both.add(&unpaired_cost);
        table_of(&unpaired, "unpaired", both)
    });
    let variance = (!unpaired.is_empty()).then(|| variance(&pairs, &unpaired));
    let null_check = request.keep.then(|| {
        let keep: Vec<&PairRecord> = pairs.iter().filter(|r| r.intervention == "keep").collect();
        (
            keep.len(),
            keep.iter().map(|r| r.gamma.abs()).fold(0.0, f64::max),
            keep.iter().map(|r| r.s2).fold(0.0, f64::max),
        )
    });

    let truth = match request.truth {
        None => None,
        Some(spec) => {
            let sampled = sample(points.len(), spec.sample);
            let found: Vec<Result<TruthAt, String>> = pool.install(|| {
                sampled
                    .par_iter()
                    .map(|&i| setup.truth(&points[i], spec.replays))
                    .collect()
            });
            let mut records = Vec::new();
            let mut sup_ok = 0usize;
            let mut widths: Vec<f64> = Vec::new();
            let mut truth_cost = ReplayCost::default();
            let zeta = 0.05;
            for (&i, found) in sampled.iter().zip(found) {
                let (values, c) = found?;
                truth_cost.add(&c);
                let point = &points[i];
                let mut sup = 0.0f64;
                for (name, truth, truth_s2) in values {
                    let Some(estimate) = point.records.iter().find(|r| r.intervention == name)
                    else {
                        continue;
                    };
                    let d = estimate.gamma - truth;
                    sup = sup.max(d.abs());
                    let se = (estimate.s2 / f64::from(estimate.replays)
                        + truth_s2 / f64::from(spec.replays))
                    .sqrt();
                    records.push(TruthRecord {
                        instance: point.instance.clone(),
                        seed: point.seed,
                        turn: point.turn,
                        intervention: name,
                        estimate: estimate.gamma,
                        s2: estimate.s2,
                        truth,
                        truth_s2,
                        z: (se > 0.0).then(|| d / se),
                    });
                }
                let m = point.admissible.len().max(1) as f64;
                let width =
                    (hi - lo) * (2.0 * (2.0 * m / zeta).ln() / f64::from(request.replays)).sqrt();
                widths.push(width);
                sup_ok += usize::from(sup <= width);
            }
            let zs: Vec<f64> = records.iter().filter_map(|r| r.z).collect();
            let (mean_z, var_z) = mean_var(&zs);
            let diffs: Vec<f64> = records.iter().map(|r| r.estimate - r.truth).collect();
            let (mean_d, var_d) = mean_var(&diffs);
            let se_d = (var_d / diffs.len().max(1) as f64).sqrt();
            let report = TruthReport {
                replays: spec.replays,
                checkpoints: sampled.len(),
                pairs: records.len(),
                with_z: zs.len(),
                exact_mismatches: records
                    .iter()
                    .filter(|r| r.z.is_none() && r.estimate != r.truth)
                    .count(),
                mean_z,
                sd_z: var_z.sqrt(),
                within_196: zs.iter().filter(|z| z.abs() <= 1.96).count() as f64
                    / zs.len().max(1) as f64,
                mean_difference: mean_d,
                mean_difference_z: if se_d > 0.0 { mean_d / se_d } else { 0.0 },
                zeta,
                band_coverage: sup_ok as f64 / sampled.len().max(1) as f64,
                band_width: [
                    widths.iter().copied().fold(f64::INFINITY, f64::min),
                    widths.iter().copied().fold(0.0, f64::max),
                ],
                replay_cost: truth_cost,
            };
            Some((records, report))
        }
    };
    pairs.extend(unpaired);
    Ok(Outcome {
        pairs,
        table,
        unpaired_table,
        truth,
        variance,
        null_check,
    })
}

/// `m` indices evenly spaced over `0..n` (all of them when `m ≥ n`).
fn sample(n: usize, m: usize) -> Vec<usize> {
    if m >= n {
        return (0..n).collect();
    }
    (0..m).map(|i| i * n / m).collect()
}

/// Compares the paired and unpaired records of the same checkpoints and interventions.
fn variance(paired: &[PairRecord], unpaired: &[PairRecord]) -> VarianceReport {
    let mut ratios = Vec::new();
    let mut logs = Vec::new();
    let (mut both_zero, mut paired_zero, mut unpaired_zero) = (0, 0, 0);
    // The null intervention is paired with the factual branch by construction (variance 0),
    // so it says nothing about the designs.
    let compared: Vec<(&PairRecord, &PairRecord)> = paired
        .iter()
        .zip(unpaired)
        .filter(|(p, _)| p.intervention != "keep")
        .collect();
    for &(p, u) in &compared {
        match (p.s2 > 0.0, u.s2 > 0.0) {
            (false, false) => both_zero += 1,
            (false, true) => {
                paired_zero += 1;
                ratios.push(0.0);
            }
            (true, false) => unpaired_zero += 1,
            (true, true) => {
                ratios.push(p.s2 / u.s2);
                logs.push((p.s2 / u.s2).ln());
            }
        }
    }
    ratios.sort_by(f64::total_cmp);
    let median = if ratios.is_empty() {
        f64::NAN
    } else if ratios.len() % 2 == 1 {
        ratios[ratios.len() / 2]
    } else {
        (ratios[ratios.len() / 2 - 1] + ratios[ratios.len() / 2]) / 2.0
    };
    let ci = harness_stdlib::stats::bootstrap_mean(&logs, 2000, 0.95, 0);
    VarianceReport {
        records: compared.len(),
        both_zero,
        paired_zero,
        unpaired_zero,
        median_ratio: median,
        logged: logs.len(),
        mean_log_ratio: ci.estimate,
        mean_log_ratio_ci: [ci.lo, ci.hi],
    }
}

/// Writes an outcome's files into `dir`: `pairs.jsonl`, `advantages.json`, and with the checks
/// that made them `advantages-unpaired.json`, `truth.jsonl`, `truth.json` and `variance.json`.
/// Returns the paths written.
pub fn write(outcome: &Outcome, dir: &Path) -> Result<Vec<String>, String> {
    std::fs::create_dir_all(dir)
        .map_err(|error| format!("cannot create {}: {error}", dir.display()))?;
    let mut written = Vec::new();
    let mut put = |name: &str, text: String| -> Result<(), String> {
        let path = dir.join(name);
        std::fs::write(&path, text)
            .map_err(|error| format!("cannot write {}: {error}", path.display()))?;
        written.push(path.display().to_string());
        Ok(())
    };
    put(
        "pairs.jsonl",
        outcome.pairs.iter().map(line).collect::<String>(),
    )?;
    put("advantages.json", pretty(&outcome.table))?;
    if let Some(table) = &outcome.unpaired_table {
        put("advantages-unpaired.json", pretty(table))?;
    }
    if let Some((records, report)) = &outcome.truth {
        put("truth.jsonl", records.iter().map(line).collect::<String>())?;
        put("truth.json", pretty(report))?;
    }
    if let Some(report) = &outcome.variance {
        put("variance.json", pretty(report))?;
    }
    Ok(written)
}

/// A value as pretty JSON and a newline. The outcome's parts are plain data (strings, numbers,
/// lists), whose serialisation cannot fail.
fn pretty<T: Serialize>(value: &T) -> String {
    serde_json::to_string_pretty(value).unwrap_or_default() + "\n"
}

/// A value as one JSON line.
fn line<T: Serialize>(value: &T) -> String {
    serde_json::to_string(value).unwrap_or_default() + "\n"
}

/// The training seeds of a table given to a run, which its evaluation seeds must avoid.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Frozen {
    /// The `--set-json` name the table was given as.
    pub name: String,
    /// Its file.
    pub path: String,
    /// The seeds it was trained on.
    pub seeds: BTreeSet<u64>,
}

impl Frozen {
    /// An error when some of `seeds` were training seeds of the table.
    pub fn check(&self, seeds: &[u64]) -> Result<(), String> {
        let overlap: Vec<String> = seeds
            .iter()
            .filter(|s| self.seeds.contains(s))
            .map(u64::to_string)
            .collect();
        if overlap.is_empty() {
            return Ok(());
        }
        let shown: Vec<String> = overlap.iter().take(8).cloned().collect();
        Err(format!(
            "--set-json {}={}: the table was trained on seed{} {}{} that this run evaluates; \
             evaluation seeds must be disjoint from training seeds (the table's manifest lists \
             them): evaluate on other seeds, e.g. --seeds 1000..1050",
            self.name,
            self.path,
            if overlap.len() == 1 { "" } else { "s" },
            shown.join(", "),
            if overlap.len() > shown.len() {
                format!(" and {} more", overlap.len() - shown.len())
            } else {
                String::new()
            }
        ))
    }
}

/// A `--set-json` value as a harness receives it: an advantage table file (one with `format`
/// [`TABLE_FORMAT`]) gives its `advantages` map, and its training seeds to keep evaluation off;
/// any other JSON is given as it is.
pub fn unwrap_table(
    name: &str,
    path: &str,
    value: serde_json::Value,
) -> Result<(serde_json::Value, Option<Frozen>), String> {
    let Some(format) = value.get("format") else {
        return Ok((value, None));
    };
    let corrupt = |what: &str| {
        format!(
            "--set-json {name}={path}: a corrupt advantage table ({what}); write it again with \
             `harness estimate`"
        )
    };
    if format.as_str() != Some(TABLE_FORMAT) {
        return Err(corrupt(&format!(
            "its format is {format}, not \"{TABLE_FORMAT}\""
        )));
    }
    let advantages = value
        .get("advantages")
        .and_then(serde_json::Value::as_object)
        .ok_or_else(|| corrupt("no `advantages` object"))?;
    if let Some((key, _)) = advantages.iter().find(|(_, v)| !v.is_number()) {
        return Err(corrupt(&format!(
            "the advantage of `{key}` is not a number"
        )));
    }
    let seeds = value
        .get("manifest")
        .and_then(|m| m.get("training_seeds"))
        .and_then(serde_json::Value::as_array)
        .ok_or_else(|| corrupt("no `manifest.training_seeds` list"))?
        .iter()
        .map(|s| {
            s.as_u64()
                .ok_or_else(|| corrupt("a training seed is not a whole number"))
        })
        .collect::<Result<BTreeSet<u64>, String>>()?;
    Ok((
        serde_json::Value::Object(advantages.clone()),
        Some(Frozen {
            name: name.to_string(),
            path: path.to_string(),
            seeds,
        }),
    ))
}
