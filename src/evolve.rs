//! Harness evolution and its archive: generate candidates from reference harnesses, validate and
//! repair them, evaluate the selected one on common seeds, and keep it under a retention rule.
//!
//! One round: the references are the archive's best entries by (reward ↓, latency ↑, cost ↑,
//! id); `candidates` mutants are drawn from them with streams seeded by (seed, round, index);
//! each is validated and repaired in at most `repair_rounds` rounds with its reference as the
//! parent; the first valid one that is new to the archive is selected without any rollout and
//! evaluated on every (instance, seed) of the plan through the experiment engine. In streaming
//! mode it is retained, and becomes the incumbent, iff its reward matches the incumbent's and
//! it strictly improves reward, latency or cost; in static mode the bank's incumbent stays and
//! the references come from the bank only.
//!
//! Reward is the mean of a game metric, latency the mean turns (actions) of an episode and cost
//! its mean evaluation steps: all deterministic, so two runs with the same arguments write
//! byte-identical archives. Nothing in this module names a game; the game, its instances and
//! the reward metric are arguments.
//!
//! The archive is a folder: `archive.json` (the index), `entries/<id>/` (an evaluated harness
//! and its `entry.json`), `rejected/<id>/` (candidates still invalid after repair, kept as a
//! repair corpus) and `rounds.jsonl` (one record per round). An entry's id is the first 12 hex
//! digits of the SHA-256 of its sources.

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use harness_grammar::ast::{Item, Member};
use harness_grammar::lexer::{TokenKind, lex};
use harness_runtime::{Limits, RngStreams, Stream};
use serde::{Deserialize, Serialize};

use crate::evolve_llm::Model;
use crate::exec::{Experiment, run};
use crate::folder::GameRecord;
use crate::games::Registry;
use crate::load::{Sources, compile};
use crate::patch::{Edit, LayerReplacement, Patch, apply};
use crate::plan::{Arm, ArmRole, Plan, Unit};
use crate::repair::{Repaired, Round, repair};
use crate::validate::Options;

/// The archive format's name and version.
pub const FORMAT: &str = "harness-archive/1";

/// The mutation operators of the offline generator.
pub const OPERATORS: [&str; 4] = ["tunable", "literal", "crossover", "decide"];

/// The candidate generators.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Generator {
    /// One of [`OPERATORS`] on one reference.
    Mutate,
    /// Every role module drawn from the references: a reference's harness with each role
    /// layer replaced by the same role's layer of a reference drawn for it.
    Template,
    /// A model asked for a new harness given the references, and for its repair given the
    /// diagnostics and their explain pages ([`crate::evolve_llm`]).
    Llm,
}

/// Whether the archive changes as it goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    /// The bank's incumbent stays; references come from the bank.
    Static,
    /// A candidate that meets the retention rule becomes the incumbent.
    Streaming,
}

/// What an evolution run does.
#[derive(Clone, Debug)]
pub struct Config {
    /// The game.
    pub game: String,
    /// The instances every candidate is evaluated on.
    pub instances: Vec<String>,
    /// Seeds `0..seeds` of every instance.
    pub seeds: u64,
    /// Rounds.
    pub rounds: usize,
    /// Candidates per round.
    pub candidates: usize,
    /// References per round.
    pub refs: usize,
    /// The most repair rounds per candidate.
    pub repair_rounds: usize,
    /// Static or streaming.
    pub mode: Mode,
    /// The candidate generator.
    pub generator: Generator,
    /// The seed of the generator.
    pub seed: u64,
    /// The metric whose mean is the reward.
    pub reward: String,
    /// The instance of the validation's smoke episode.
    pub smoke: String,
    /// Worker threads (0: one per core).
    pub jobs: usize,
}

/// An entry's measured metrics.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Metrics {
    /// The mean reward over the episodes (an episode that ended in an error counts 0).
    pub reward: f64,
    /// The 95% percentile-bootstrap interval of the reward (1,000 resamples).
    pub reward_ci: [f64; 2],
    /// Mean turns per episode.
    pub latency: f64,
    /// Mean evaluation steps per episode.
    pub cost: f64,
    /// Total turns.
    pub turns: u64,
    /// Total evaluation steps.
    pub steps: u64,
    /// Episodes played.
    pub episodes: usize,
    /// Episodes that ended in a runtime error.
    pub errors: usize,
}

/// One archived harness.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Entry {
    /// The id: SHA-256 of the sources, 12 hex digits.
    pub id: String,
    /// The harness's files, by name within the entry's folder.
    pub files: Vec<String>,
    /// The entries it was made from.
    pub parents: Vec<String>,
    /// `bank`, or `mutate:<operator>`.
    pub generator: String,
    /// What the operator changed, in words.
    pub change: String,
    /// The round that made it (0 for the bank).
    pub round: usize,
    /// Whether it validated (after repair).
    pub valid: bool,
    /// The repair rounds it took.
    pub repair: Vec<Round>,
    /// Its metrics, when evaluated.
    pub metrics: Option<Metrics>,
    /// Whether it is (or was) an incumbent.
    pub retained: bool,
    /// Why it was retained or not.
    pub reason: String,
}

/// The archive's index.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Index {
    /// [`FORMAT`].
    pub format: String,
    /// The game.
    pub game: String,
    /// The reward metric, and the measures of latency and cost.
    pub metric: MetricNames,
    /// The mode of the run that wrote it.
    pub mode: Mode,
    /// The generator's seed.
    pub seed: u64,
    /// The instances and seed count every entry was evaluated on.
    pub instances: Vec<String>,
    /// The seed count.
    pub seeds: u64,
    /// The evaluated entries, in the order they were made.
    pub entries: Vec<String>,
    /// The rejected candidates, in the order they were made.
    pub rejected: Vec<String>,
    /// The incumbent.
    pub incumbent: Option<String>,
}

/// The names of the three measures.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MetricNames {
    /// The reward metric.
    pub reward: String,
    /// Always `turns`.
    pub latency: String,
    /// Always `steps`.
    pub cost: String,
}

/// One candidate of a round, as the round's record lists it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Candidate {
    /// Its id after repair.
    pub id: String,
    /// The reference it was made from.
    pub parent: String,
    /// The operator.
    pub operator: String,
    /// What it changed.
    pub change: String,
    /// After how many repair rounds it was valid; `None` when it stayed invalid.
    pub valid_after: Option<usize>,
}

/// One round's record in `rounds.jsonl`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RoundRecord {
    /// The round, from 1.
    pub round: usize,
    /// The references.
    pub refs: Vec<String>,
    /// The candidates in generation order.
    pub candidates: Vec<Candidate>,
    /// The selected candidate.
    pub selected: Option<String>,
    /// Its metrics.
    pub metrics: Option<Metrics>,
    /// The incumbent before the decision, with its metrics.
    pub incumbent_before: Option<(String, Metrics)>,
    /// The incumbent after.
    pub incumbent_after: Option<String>,
    /// `retained`, `kept the incumbent`, `static` or `no new valid candidate`.
    pub decision: String,
}

/// The whole archive in memory.
#[derive(Clone, Debug, PartialEq)]
pub struct Archive {
    /// The index.
    pub index: Index,
    /// Every entry and rejected candidate with its sources, in order.
    pub items: Vec<(Entry, Sources)>,
    /// The rounds.
    pub rounds: Vec<RoundRecord>,
}

/// The retention rule: `r ≥ b_r` and (`r > b_r` or `ℓ < b_ℓ` or `κ < b_κ`).
pub fn retains(candidate: &Metrics, incumbent: &Metrics) -> bool {
    candidate.reward >= incumbent.reward
        && (candidate.reward > incumbent.reward
            || candidate.latency < incumbent.latency
            || candidate.cost < incumbent.cost)
}

/// The ranking of references: reward down, latency up, cost up, then id.
fn rank(a: &(&Entry, &Metrics), b: &(&Entry, &Metrics)) -> std::cmp::Ordering {
    b.1.reward
        .total_cmp(&a.1.reward)
        .then(a.1.latency.total_cmp(&b.1.latency))
        .then(a.1.cost.total_cmp(&b.1.cost))
        .then(a.0.id.cmp(&b.0.id))
}

/// The id of a harness: SHA-256 of its sources, 12 hex digits.
pub fn id_of(sources: &Sources) -> String {
    sources.hash()[..12].to_string()
}

impl Archive {
    fn entry(&self, id: &str) -> Option<&(Entry, Sources)> {
        self.items.iter().find(|(e, _)| e.id == id)
    }

    fn metrics(&self, id: &str) -> Option<&Metrics> {
        self.entry(id).and_then(|(e, _)| e.metrics.as_ref())
    }

    /// The non-dominated evaluated entries over (reward ↑, latency ↓, cost ↓), ranked.
    pub fn frontier(&self) -> Vec<&Entry> {
        let evaluated: Vec<(&Entry, &Metrics)> = self
            .items
            .iter()
            .filter_map(|(e, _)| e.metrics.as_ref().map(|m| (e, m)))
            .collect();
        let dominates = |a: &Metrics, b: &Metrics| {
            a.reward >= b.reward
                && a.latency <= b.latency
                && a.cost <= b.cost
                && (a.reward > b.reward || a.latency < b.latency || a.cost < b.cost)
        };
        let mut front: Vec<(&Entry, &Metrics)> = evaluated
            .iter()
            .filter(|(_, m)| !evaluated.iter().any(|(_, o)| dominates(o, m)))
            .copied()
            .collect();
        front.sort_by(rank);
        front.into_iter().map(|(e, _)| e).collect()
    }

    /// Re-checks every recorded decision: ids match the sources, every round's retention
    /// follows the rule against the incumbent of its time, and the incumbents chain. Returns
    /// the problems found (none: the archive verifies).
    pub fn verify(&self) -> Vec<String> {
        let mut problems = Vec::new();
        for (entry, sources) in &self.items {
            if id_of(sources) != entry.id {
                problems.push(format!(
                    "{}: its sources hash to {}",
                    entry.id,
                    id_of(sources)
                ));
            }
        }
        let mut incumbent = self
            .rounds
            .first()
            .and_then(|r| r.incumbent_before.as_ref().map(|(id, _)| id.clone()));
        for round in &self.rounds {
            let before = round.incumbent_before.as_ref().map(|(id, _)| id.clone());
            if before != incumbent {
                problems.push(format!(
                    "round {}: starts from incumbent {before:?}, but the previous round left {incumbent:?}",
                    round.round
                ));
            }
            if let (Some((id, recorded)), Some(stored)) = (
                &round.incumbent_before,
                round
                    .incumbent_before
                    .as_ref()
                    .and_then(|(id, _)| self.metrics(id)),
            ) && recorded != stored
            {
                problems.push(format!(
                    "round {}: the incumbent {id}'s metrics differ from its entry",
                    round.round
                ));
            }
            let expected = match (&round.selected, &round.metrics, &round.incumbent_before) {
                (Some(id), Some(metrics), Some((old, old_metrics))) => {
                    if self.metrics(id) != Some(metrics) {
                        problems.push(format!(
                            "round {}: the selected {id}'s metrics differ from its entry",
                            round.round
                        ));
                    }
                    if self.index.mode == Mode::Streaming && retains(metrics, old_metrics) {
                        Some(id.clone())
                    } else {
                        Some(old.clone())
                    }
                }
                (_, _, before) => before.as_ref().map(|(id, _)| id.clone()),
            };
            if round.incumbent_after != expected {
                problems.push(format!(
                    "round {}: the incumbent after is {:?}, the rule gives {expected:?}",
                    round.round, round.incumbent_after
                ));
            }
            incumbent = round.incumbent_after.clone();
        }
        if self.rounds.last().is_some() && incumbent != self.index.incumbent {
            problems.push(format!(
                "the index names incumbent {:?}, the rounds end with {incumbent:?}",
                self.index.incumbent
            ));
        }
        problems
    }

    /// Writes the archive into `dir`, replacing what is there.
    pub fn write(&self, dir: &Path) -> Result<(), String> {
        let io = |what: &Path, e: std::io::Error| format!("cannot write {}: {e}", what.display());
        if dir.exists() {
            std::fs::remove_dir_all(dir).map_err(|e| io(dir, e))?;
        }
        for (entry, sources) in &self.items {
            let folder = dir
                .join(if entry.valid { "entries" } else { "rejected" })
                .join(&entry.id);
            std::fs::create_dir_all(&folder).map_err(|e| io(&folder, e))?;
            for (name, (_, text)) in entry.files.iter().zip(&sources.files) {
                std::fs::write(folder.join(name), text).map_err(|e| io(&folder, e))?;
            }
            let json = serde_json::to_string_pretty(entry).map_err(|e| e.to_string())?;
            std::fs::write(folder.join("entry.json"), json + "\n").map_err(|e| io(&folder, e))?;
        }
        let index = serde_json::to_string_pretty(&self.index).map_err(|e| e.to_string())?;
        std::fs::write(dir.join("archive.json"), index + "\n").map_err(|e| io(dir, e))?;
        let mut lines = String::new();
        for round in &self.rounds {
            lines.push_str(&serde_json::to_string(round).map_err(|e| e.to_string())?);
            lines.push('\n');
        }
        std::fs::write(dir.join("rounds.jsonl"), lines).map_err(|e| io(dir, e))
    }

    /// Reads an archive written by [`Archive::write`].
    pub fn read(dir: &Path) -> Result<Archive, String> {
        let read = |path: PathBuf| {
            std::fs::read_to_string(&path)
                .map_err(|e| format!("cannot read {}: {e}", path.display()))
        };
        let index: Index = serde_json::from_str(&read(dir.join("archive.json"))?)
            .map_err(|e| format!("{}: not an archive index: {e}", dir.display()))?;
        if index.format != FORMAT {
            return Err(format!(
                "{}: format {}, expected {FORMAT}",
                dir.display(),
                index.format
            ));
        }
        let mut items = Vec::new();
        for (kind, ids) in [("entries", &index.entries), ("rejected", &index.rejected)] {
            for id in ids {
                let folder = dir.join(kind).join(id);
                let entry: Entry = serde_json::from_str(&read(folder.join("entry.json"))?)
                    .map_err(|e| format!("{}: {e}", folder.display()))?;
                let files = entry
                    .files
                    .iter()
                    .map(|name| Ok((name.clone(), read(folder.join(name))?)))
                    .collect::<Result<Vec<_>, String>>()?;
                items.push((
                    entry,
                    Sources {
                        name: id.clone(),
                        files,
                    },
                ));
            }
        }
        // The index lists entries and rejected candidates apart; restore the order they were made.
        items.sort_by_key(|(e, _)| e.round);
        let rounds = read(dir.join("rounds.jsonl"))?
            .lines()
            .map(|line| serde_json::from_str(line).map_err(|e| format!("rounds.jsonl: {e}")))
            .collect::<Result<Vec<RoundRecord>, String>>()?;
        Ok(Archive {
            index,
            items,
            rounds,
        })
    }
}

/// Evaluates a harness on every (instance, seed) of the configuration.
pub fn evaluate(
    registry: &Registry,
    sources: &Sources,
    config: &Config,
) -> Result<Metrics, String> {
    let program = compile(registry, sources, None).map_err(|e| e.to_string())?;
    let kind = registry.get(&config.game)?;
    let plan = Plan {
        arms: vec![Arm {
            name: "full".into(),
            layers: program.layers.iter().map(|l| l.name.clone()).collect(),
            set: Vec::new(),
            role: ArmRole::Named,
            point: String::new(),
        }],
        instances: config.instances.clone(),
        seeds: (0..config.seeds).collect(),
        replicates: 1,
        contrasts: Vec::new(),
    };
    let units: Vec<Unit> = plan
        .instances
        .iter()
        .flat_map(|instance| {
            plan.seeds.iter().map(move |seed| Unit {
                arm: 0,
                instance: instance.clone(),
                seed: *seed,
                replicate: 0,
            })
        })
        .collect();
    let files = sources.file_table(&program);
    let experiment = Experiment::new(
        program,
        kind,
        Default::default(),
        files,
        plan,
        &[],
        &[],
        Limits::default(),
    )?;
    let records: Mutex<Vec<(usize, GameRecord)>> = Mutex::new(Vec::new());
    let position = |unit: &Unit| {
        units
            .iter()
            .position(|u| u.instance == unit.instance && u.seed == unit.seed)
            .unwrap_or(0)
    };
    run(
        &experiment,
        &units,
        config.jobs,
        &|_| None,
        &|unit, played| {
            records
                .lock()
                .map_err(|_| "a worker panicked".to_string())?
                .push((position(unit), played.record));
            Ok(())
        },
    )?;
    let mut records = records
        .into_inner()
        .map_err(|_| "a worker panicked".to_string())?;
    records.sort_by_key(|(i, _)| *i);
    let rewards: Vec<f64> = records
        .iter()
        .map(|(_, r)| {
            if r.error.is_some() {
                return 0.0;
            }
            match r.metrics.get(&config.reward) {
                Some(serde_json::Value::Bool(b)) => f64::from(u8::from(*b)),
                Some(value) => value.as_f64().unwrap_or(0.0),
                None => 0.0,
            }
        })
        .collect();
    if !records.is_empty()
        && !records
            .iter()
            .any(|(_, r)| r.metrics.contains_key(&config.reward))
    {
        return Err(format!("no episode reports the metric `{}`", config.reward));
    }
    let n = records.len().max(1) as f64;
    let turns: u64 = records.iter().map(|(_, r)| r.costs.turns).sum();
    let steps: u64 = records.iter().map(|(_, r)| r.costs.steps).sum();
    let ci = harness_stdlib::stats::bootstrap_mean(&rewards, 1000, 0.95, config.seed);
    Ok(Metrics {
        reward: ci.estimate,
        reward_ci: [ci.lo, ci.hi],
        latency: turns as f64 / n,
        cost: steps as f64 / n,
        turns,
        steps,
        episodes: records.len(),
        errors: records.iter().filter(|(_, r)| r.error.is_some()).count(),
    })
}

/// A bank harness's file name inside an entry: its last path component.
fn file_name(path: &str) -> String {
    Path::new(path)
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| path.to_string())
}

/// Runs the evolution with an offline generator and returns the archive. `bank` holds the
/// reference harnesses.
pub fn evolve(registry: &Registry, bank: &[Sources], config: &Config) -> Result<Archive, String> {
    evolve_with(registry, bank, config, None)
}

/// Runs the evolution and returns the archive; `model` answers the LLM generator and is
/// required by it.
pub fn evolve_with(
    registry: &Registry,
    bank: &[Sources],
    config: &Config,
    mut model: Option<&mut dyn Model>,
) -> Result<Archive, String> {
    if config.generator == Generator::Llm && model.is_none() {
        return Err("the llm generator needs a model (--llm-provider or --llm-replay)".into());
    }
    let options = Options {
        game: &config.game,
        protocol: Some(harness_compiler::protocol::Protocol::Jit4),
        smoke: Some((&config.smoke, 0)),
        max_turns: 200,
    };
    let mut archive = Archive {
        index: Index {
            format: FORMAT.to_string(),
            game: config.game.clone(),
            metric: MetricNames {
                reward: config.reward.clone(),
                latency: "turns".into(),
                cost: "steps".into(),
            },
            mode: config.mode,
            seed: config.seed,
            instances: config.instances.clone(),
            seeds: config.seeds,
            entries: Vec::new(),
            rejected: Vec::new(),
            incumbent: None,
        },
        items: Vec::new(),
        rounds: Vec::new(),
    };
    for harness in bank {
        // Entries name their files by file name; the bank's paths stay out of the archive.
        let sources = Sources {
            name: harness.name.clone(),
            files: harness
                .files
                .iter()
                .map(|(path, text)| (file_name(path), text.clone()))
                .collect(),
        };
        let report = crate::validate::validate(registry, &sources, &options);
        if !report.valid {
            return Err(format!(
                "the bank harness {} is not valid: stopped at the {} stage ({})",
                harness.name,
                report.stage.name(),
                report
                    .errors()
                    .map(|f| f.code.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
        let id = id_of(&sources);
        if archive.entry(&id).is_some() {
            continue;
        }
        let metrics = evaluate(registry, &sources, config)?;
        archive.index.entries.push(id.clone());
        archive.items.push((
            Entry {
                id: id.clone(),
                files: sources.files.iter().map(|(p, _)| p.clone()).collect(),
                parents: Vec::new(),
                generator: "bank".into(),
                change: harness.name.clone(),
                round: 0,
                valid: true,
                repair: Vec::new(),
                metrics: Some(metrics),
                retained: false,
                reason: "bank".into(),
            },
            Sources {
                name: id,
                ..sources
            },
        ));
    }
    let best = |archive: &Archive, pool: &dyn Fn(&Entry) -> bool| -> Vec<String> {
        let mut ranked: Vec<(&Entry, &Metrics)> = archive
            .items
            .iter()
            .filter(|(e, _)| pool(e))
            .filter_map(|(e, _)| e.metrics.as_ref().map(|m| (e, m)))
            .collect();
        ranked.sort_by(rank);
        ranked.into_iter().map(|(e, _)| e.id.clone()).collect()
    };
    let incumbent = best(&archive, &|e| e.generator == "bank")
        .into_iter()
        .next();
    if let Some(id) = &incumbent
        && let Some(item) = archive.items.iter_mut().find(|(e, _)| e.id == *id)
    {
        item.0.retained = true;
        item.0.reason = "the bank's best".into();
    }
    archive.index.incumbent = incumbent;
    let streams = RngStreams::new(config.seed);
    for round in 1..=config.rounds {
        let refs: Vec<String> = match config.mode {
            Mode::Static => best(&archive, &|e| e.generator == "bank"),
            Mode::Streaming => best(&archive, &|e| e.retained || e.generator == "bank"),
        }
        .into_iter()
        .take(config.refs.max(1))
        .collect();
        let mut record = RoundRecord {
            round,
            refs: refs.clone(),
            candidates: Vec::new(),
            selected: None,
            metrics: None,
            incumbent_before: archive
                .index
                .incumbent
                .as_ref()
                .and_then(|id| archive.metrics(id).map(|m| (id.clone(), m.clone()))),
            incumbent_after: archive.index.incumbent.clone(),
            decision: "no new valid candidate".into(),
        };
        let mut selected: Option<(Entry, Sources)> = None;
        for index in 0..config.candidates {
            let mut stream = streams.stream(&format!("evolve/{round}/{index}"));
            let parent_id = &refs[stream.below(refs.len() as u64) as usize];
            let Some((_, parent)) = archive.entry(parent_id).cloned() else {
                continue;
            };
            let others: Vec<Sources> = refs
                .iter()
                .filter(|id| *id != parent_id)
                .filter_map(|id| archive.entry(id).map(|(_, s)| s.clone()))
                .collect();
            let mut parents = vec![parent_id.clone()];
            let mut refusal: Option<String> = None;
            let (operator, change, repaired) = match (config.generator, model.as_deref_mut()) {
                (Generator::Llm, Some(model)) => {
                    parents = refs.clone();
                    let references: Vec<&Sources> = refs
                        .iter()
                        .filter_map(|id| archive.entry(id).map(|(_, s)| s))
                        .collect();
                    let prompt = crate::evolve_llm::candidate_prompt(
                        &config.game,
                        &references,
                        index + 1,
                        config.candidates,
                    );
                    let asked = model.ask(
                        crate::evolve_llm::CANDIDATE_EFFECT,
                        crate::evolve_llm::SYSTEM,
                        &prompt,
                    );
                    let read = asked.as_ref().map_err(Clone::clone).and_then(|text| {
                        crate::evolve_llm::read_reply(text, &parent, &parent.name)
                    });
                    match read {
                        Ok(child) => {
                            let (repaired, why) = crate::evolve_llm::repair_with(
                                registry,
                                &child,
                                &options,
                                config.repair_rounds,
                                model,
                            );
                            let change = match why {
                                Some(why) => format!("written by the model; repair stopped: {why}"),
                                None => "written by the model".to_string(),
                            };
                            ("llm", change, repaired)
                        }
                        Err(why) => {
                            // The reply is kept as the rejected candidate's one file, so the
                            // repair corpus shows what the model said.
                            let text = asked.unwrap_or_else(|e| e.clone());
                            let sources = Sources {
                                name: String::new(),
                                files: vec![("reply.txt".into(), text)],
                            };
                            let report = crate::validate::Report {
                                valid: false,
                                stage: crate::validate::Stage::Syntax,
                                passed: Vec::new(),
                                game: config.game.clone(),
                                protocol: options.protocol.map(|p| p.name().to_string()),
                                smoke: None,
                                diagnostics: Vec::new(),
                                problems: vec![why.clone()],
                            };
                            refusal = Some(why.clone());
                            (
                                "llm",
                                format!("rejected: {why}"),
                                Repaired {
                                    sources,
                                    rounds: Vec::new(),
                                    report,
                                    valid_after: None,
                                },
                            )
                        }
                    }
                }
                (generator, _) => {
                    let (operator, made) = match generator {
                        Generator::Template => {
                            ("template", template(&parent, &others, &mut stream))
                        }
                        _ => {
                            let operator = OPERATORS[stream.below(OPERATORS.len() as u64) as usize];
                            (operator, mutate(&parent, &others, operator, &mut stream))
                        }
                    };
                    let Some((change, child)) = made else {
                        continue;
                    };
                    let repaired = repair(
                        registry,
                        &child,
                        &options,
                        Some(&parent),
                        config.repair_rounds,
                    );
                    (operator, change, repaired)
                }
            };
            let id = id_of(&repaired.sources);
            record.candidates.push(Candidate {
                id: id.clone(),
                parent: parent_id.clone(),
                operator: operator.into(),
                change: change.clone(),
                valid_after: repaired.valid_after,
            });
            let known =
                archive.entry(&id).is_some() || selected.as_ref().is_some_and(|(e, _)| e.id == id);
            let entry = Entry {
                id: id.clone(),
                files: repaired
                    .sources
                    .files
                    .iter()
                    .map(|(p, _)| p.clone())
                    .collect(),
                parents,
                generator: match config.generator {
                    Generator::Mutate => format!("mutate:{operator}"),
                    Generator::Template => "template".into(),
                    Generator::Llm => "llm".into(),
                },
                change,
                round,
                valid: repaired.valid_after.is_some(),
                repair: repaired.rounds.clone(),
                metrics: None,
                retained: false,
                reason: String::new(),
            };
            if known {
                continue;
            }
            if repaired.valid_after.is_none() {
                archive.index.rejected.push(id.clone());
                archive.items.push((
                    Entry {
                        reason: match &refusal {
                            Some(why) => format!("refused before validation: {why}"),
                            None => format!(
                                "invalid after {} repair round(s) at the {} stage",
                                repaired.rounds.len(),
                                repaired.report.stage.name()
                            ),
                        },
                        ..entry
                    },
                    Sources {
                        name: id,
                        ..repaired.sources
                    },
                ));
            } else if selected.is_none() {
                selected = Some((
                    entry,
                    Sources {
                        name: id,
                        ..repaired.sources
                    },
                ));
            }
        }
        if let Some((mut entry, sources)) = selected {
            let metrics = evaluate(registry, &sources, config)?;
            record.selected = Some(entry.id.clone());
            record.metrics = Some(metrics.clone());
            let keep = match (&config.mode, &record.incumbent_before) {
                (Mode::Streaming, Some((_, incumbent))) => retains(&metrics, incumbent),
                (Mode::Streaming, None) => true,
                (Mode::Static, _) => false,
            };
            entry.retained = keep;
            entry.reason = match (config.mode, keep) {
                (Mode::Static, _) => "static mode keeps the bank's incumbent".into(),
                (_, true) => {
                    "matches the incumbent's reward and strictly improves reward, latency or cost"
                        .into()
                }
                (_, false) => {
                    "does not both match the incumbent's reward and improve a measure".into()
                }
            };
            entry.metrics = Some(metrics);
            record.decision = match (config.mode, keep) {
                (Mode::Static, _) => "static".into(),
                (_, true) => "retained".into(),
                (_, false) => "kept the incumbent".into(),
            };
            if keep {
                archive.index.incumbent = Some(entry.id.clone());
            }
            archive.index.entries.push(entry.id.clone());
            archive.items.push((entry, sources));
        }
        record.incumbent_after = archive.index.incumbent.clone();
        archive.rounds.push(record);
    }
    Ok(archive)
}

/// The role layers of a harness's files: role, layer name, file and declaration text.
fn role_layers(sources: &Sources) -> Vec<(String, String, String, String)> {
    let mut out = Vec::new();
    for (path, text) in &sources.files {
        for item in harness_grammar::parse(text).file.items {
            if let Item::Layer(layer) = item
                && let Some(role) = &layer.role
                && let Some(declaration) =
                    text.get(layer.span.start as usize..layer.span.end as usize)
            {
                out.push((
                    role.name.clone(),
                    layer.name.name.clone(),
                    path.clone(),
                    declaration.to_string(),
                ));
            }
        }
    }
    out
}

/// A template candidate: `parent` with each role layer replaced by the layer of the same role
/// of a module drawn from `parent` and `others`; `None` when every draw kept the parent's.
pub fn template(
    parent: &Sources,
    others: &[Sources],
    stream: &mut Stream,
) -> Option<(String, Sources)> {
    let mut patch = Patch::default();
    let mut drawn = Vec::new();
    for (role, layer, file, _) in role_layers(parent) {
        let pick = stream.below(others.len() as u64 + 1) as usize;
        let Some(donor) = pick.checked_sub(1).map(|i| &others[i]) else {
            continue;
        };
        if let Some((_, _, _, text)) = role_layers(donor).into_iter().find(|(r, ..)| *r == role) {
            drawn.push(format!("{role} from {}", donor.name));
            patch.layers.push(LayerReplacement { file, layer, text });
        }
    }
    if patch.is_empty() {
        return None;
    }
    let applied = apply(parent, &patch).ok()?;
    Some((drawn.join(", "), applied.sources))
}

/// One offline mutation of `parent` by `operator`, with what it changed; `None` when the
/// parent has no site for it.
pub fn mutate(
    parent: &Sources,
    others: &[Sources],
    operator: &str,
    stream: &mut Stream,
) -> Option<(String, Sources)> {
    let file = stream.below(parent.files.len() as u64) as usize;
    let (path, text) = &parent.files[file];
    let edit = |start: u32, end: u32, replacement: String| Edit {
        file: path.clone(),
        start: start as usize,
        end: end as usize,
        text: replacement,
    };
    let items = harness_grammar::parse(text).file.items;
    let layers: Vec<_> = items
        .iter()
        .filter_map(|item| match item {
            Item::Layer(layer) => Some(layer),
            _ => None,
        })
        .collect();
    let (change, patch) = match operator {
        "tunable" => {
            let mut params = Vec::new();
            for item in &items {
                match item {
                    Item::Config(config) => params.extend(config.params.iter()),
                    Item::Layer(layer) => {
                        params.extend(layer.members.iter().filter_map(|m| match m {
                            Member::Tunable(p) => Some(p),
                            _ => None,
                        }))
                    }
                    _ => {}
                }
            }
            let params: Vec<_> = params.into_iter().filter(|p| p.range.is_some()).collect();
            let param = params.get(stream.below(params.len().max(1) as u64) as usize)?;
            let range = param.range.as_ref()?;
            let bound = |e: &harness_grammar::ast::Expr| {
                text.get(e.span.start as usize..e.span.end as usize)
            };
            let (lo, hi) = (
                bound(&range.lo)?.replace('_', ""),
                bound(&range.hi)?.replace('_', ""),
            );
            let value = match (lo.parse::<i64>(), hi.parse::<i64>()) {
                (Ok(lo), Ok(hi)) => {
                    let top = if range.inclusive { hi } else { hi - 1 };
                    if top < lo {
                        return None;
                    }
                    (lo + stream.below((top - lo + 1) as u64) as i64).to_string()
                }
                _ => {
                    let (lo, hi) = (lo.parse::<f64>().ok()?, hi.parse::<f64>().ok()?);
                    let u = stream.below(1001) as f64 / 1000.0;
                    format!("{:?}", ((lo + u * (hi - lo)) * 100.0).round() / 100.0)
                }
            };
            (
                format!("`{}` = {value}", param.name.name),
                Patch {
                    edits: vec![edit(
                        param.default.span.start,
                        param.default.span.end,
                        value,
                    )],
                    ..Patch::default()
                },
            )
        }
        "literal" => {
            // A numeric literal in a computed value, a function or a handler: not a range bound
            // or a declared default, which the tunable operator resamples within range.
            let mut spans = Vec::new();
            for layer in &layers {
                for member in &layer.members {
                    if matches!(member, Member::Computed(_) | Member::Fn(_) | Member::On(_)) {
                        spans.push(member.span());
                    }
                }
            }
            let tokens: Vec<_> = lex(text)
                .into_iter()
                .filter(|t| matches!(t.kind, TokenKind::Int | TokenKind::Float))
                .filter(|t| {
                    spans
                        .iter()
                        .any(|s| s.start <= t.span.start && t.span.end <= s.end)
                })
                .collect();
            let token = tokens.get(stream.below(tokens.len().max(1) as u64) as usize)?;
            let written = text.get(token.span.start as usize..token.span.end as usize)?;
            let double = stream.below(2) == 0;
            let value = match written.replace('_', "").parse::<i64>() {
                Ok(v) => (if double { v * 2 } else { v / 2 }).to_string(),
                Err(_) => {
                    let v: f64 = written.parse().ok()?;
                    format!("{:?}", if double { v * 2.0 } else { v / 2.0 })
                }
            };
            (
                format!("literal {written} → {value}"),
                Patch {
                    edits: vec![edit(token.span.start, token.span.end, value.clone())],
                    ..Patch::default()
                },
            )
        }
        "crossover" => {
            let other = others.get(stream.below(others.len().max(1) as u64) as usize)?;
            let with_role: Vec<_> = layers.iter().filter(|l| l.role.is_some()).collect();
            let layer = with_role.get(stream.below(with_role.len().max(1) as u64) as usize)?;
            let role = &layer.role.as_ref()?.name;
            let replacement = other.files.iter().find_map(|(_, other_text)| {
                harness_grammar::parse(other_text)
                    .file
                    .items
                    .into_iter()
                    .find_map(|item| match item {
                        Item::Layer(l) if l.role.as_ref().is_some_and(|r| r.name == *role) => {
                            other_text
                                .get(l.span.start as usize..l.span.end as usize)
                                .map(str::to_string)
                        }
                        _ => None,
                    })
            })?;
            (
                format!("the {role} layer from {}", other.name),
                Patch {
                    layers: vec![LayerReplacement {
                        file: path.clone(),
                        layer: layer.name.name.clone(),
                        text: replacement,
                    }],
                    ..Patch::default()
                },
            )
        }
        "decide" => {
            let rules = layers.iter().find_map(|layer| {
                layer.members.iter().find_map(|m| match m {
                    Member::Decide(d) if d.rules.len() >= 2 => Some(d),
                    _ => None,
                })
            })?;
            let at = stream.below(rules.rules.len() as u64 - 1) as usize;
            let (a, b) = (&rules.rules[at], &rules.rules[at + 1]);
            let (a_text, b_text) = (
                text.get(a.span.start as usize..a.span.end as usize)?,
                text.get(b.span.start as usize..b.span.end as usize)?,
            );
            if stream.below(2) == 0 {
                (
                    format!("decide rules {} and {} swapped", at + 1, at + 2),
                    Patch {
                        edits: vec![
                            edit(a.span.start, a.span.end, b_text.to_string()),
                            edit(b.span.start, b.span.end, a_text.to_string()),
                        ],
                        ..Patch::default()
                    },
                )
            } else {
                (
                    format!("decide rule {} dropped", at + 1),
                    Patch {
                        edits: vec![edit(a.span.start, b.span.start, String::new())],
                        ..Patch::default()
                    },
                )
            }
        }
        _ => return None,
    };
    let applied = apply(parent, &patch).ok()?;
    Some((change, applied.sources))
}
