//! The `cooling` and `grid` games: one episode is one task. Tools are effects and their
//! results observations; the game meters every call, enforces the call budget, the visibility
//! gate (no sample after the task's current time) and the masking of hidden families, and
//! scores the submitted answer with the task's rule grader.
//!
//! The tools form the paper's cumulative ladder (App. C): K1 only answers; K2 adds the
//! manual; K3 telemetry (signal list, series capped at 100 points, snapshots, alarms); K4 the
//! physical model; K5 the domain's simulator (a transient twin rollout and a steady state for
//! cooling; an AC power flow and N-1 screening for the grid). K1–K3 are the same in both
//! domains, as in the paper (C.4).

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use harness_compiler::signatures::GameSig;
use harness_runtime::{
    Effect, Game, GameKind, GameManifest, GameOptions, InstanceSet, MetricSpec, Natives,
    Observation, RngStreams, Value,
};

use crate::knowledge::Doc;
use crate::suite::Domain;
use crate::task::{Answer, Task};
use crate::telemetry::{Telemetry, thin};
use crate::{cooling, grid};

/// Tool calls an episode may make before it must answer (the paper's 20 ReAct iterations).
pub const BUDGET: i64 = 20;

/// Points a series read returns at most (C.2).
pub const SERIES_CAP: usize = 100;

/// Items any list of an observation holds at most (for a list of lists, each level): the size
/// every observation field declares to the checker's cost bound. A tool whose answer would be
/// longer is refused, with a hint to narrow the request, so the declaration always holds.
pub const OBSERVATION_CAP: usize = 128;

/// Observations an episode sends at most: the budget's counted calls, as many refusals of
/// tools outside the registry (which do not count), and the answer. The episode ends when it
/// has sent them, which the checker's cost bound relies on for state the handlers grow.
pub const MAX_OBSERVATIONS: usize = 2 * BUDGET as usize + 1;

/// Items the facts of a manual topic or a model component hold at most: the grid's network
/// has 160 (eight per line).
pub const DOC_CAP: usize = 160;

/// The bound an observation's list fields keep.
fn cap_of(observation: &str) -> usize {
    if matches!(observation, "manual" | "physics") {
        DOC_CAP
    } else {
        OBSERVATION_CAP
    }
}

/// One tool: its effect signature, documentation and the harness level that provides it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Tool {
    /// The effect's name.
    pub name: &'static str,
    /// The lowest level K (1–5) whose registry holds it.
    pub level: u8,
    /// Its signature in harness syntax.
    pub sig: &'static str,
    /// What it does, as the tool schema states it.
    pub doc: &'static str,
}

const fn tool(name: &'static str, level: u8, sig: &'static str, doc: &'static str) -> Tool {
    Tool {
        name,
        level,
        sig,
        doc,
    }
}

/// The tools shared by both domains.
const COMMON: [Tool; 11] = [
    tool(
        "submit_number",
        1,
        "fn submit_number(value: Float, self_check: Bool, findings: String)",
        "Answer with a number; `self_check` is whether the answer passed your own check, `findings` what a retry should know. Ends the task.",
    ),
    tool(
        "submit_label",
        1,
        "fn submit_label(label: String, self_check: Bool, findings: String)",
        "Answer with one name (a plate or line number, `none`, `up`/`down`/`flat`). Ends the task.",
    ),
    tool(
        "submit_set",
        1,
        "fn submit_set(labels: List<String>, self_check: Bool, findings: String)",
        "Answer with a set of names. Ends the task.",
    ),
    tool(
        "submit_bool",
        1,
        "fn submit_bool(value: Bool, self_check: Bool, findings: String)",
        "Answer yes (true) or no (false). Ends the task.",
    ),
    tool(
        "submit_action",
        1,
        "fn submit_action(control: String, value: Float, self_check: Bool, findings: String)",
        "Answer with an intervention: set `control` to `value` from now on. Ends the task.",
    ),
    tool(
        "read_manual",
        2,
        "fn read_manual(topic: String)",
        "Read a topic of the operating manual (`index` lists them); answered by `manual`.",
    ),
    tool(
        "list_signals",
        3,
        "fn list_signals()",
        "List the telemetry signals and their units; answered by `signals`.",
    ),
    tool(
        "read_series",
        3,
        "fn read_series(signal: String, t0: Int, t1: Int)",
        "Read a signal's samples between t0 and t1 (at most 100, thinned evenly; never after now); answered by `series`.",
    ),
    tool(
        "read_snapshot",
        3,
        "fn read_snapshot(t: Int)",
        "Read every signal at time t (the last sample at or before it; never after now); answered by `snapshot`.",
    ),
    tool(
        "read_alarms",
        3,
        "fn read_alarms(t0: Int, t1: Int)",
        "Read the alarms raised between t0 and t1; answered by `alarms`.",
    ),
    tool(
        "read_model",
        4,
        "fn read_model(component: String)",
        "Read a component of the physical model: parameters and governing equations; answered by `physics`.",
    ),
];

/// The cooling simulator's tools (K5).
const COOLING_SIM: [Tool; 2] = [
    tool(
        "simulate",
        5,
        "fn simulate(horizon: Int, controls: List<String>, values: List<Float>, signals: List<String>)",
        "Roll the digital twin forward `horizon` s from now with the controls overridden (pump.speed, valve.opening, power.NN in kW); present inputs are held. 18 samples of the chosen signals (all if empty) and their peaks; answered by `trajectory`.",
    ),
    tool(
        "steady_state",
        5,
        "fn steady_state(controls: List<String>, values: List<Float>)",
        "The steady state the loop settles to under the present inputs with the overrides; answered by `solved`.",
    ),
];

/// The grid simulator's tools (K5).
const GRID_SIM: [Tool; 2] = [
    tool(
        "power_flow",
        5,
        "fn power_flow(controls: List<String>, values: List<Float>)",
        "Solve the AC power flow at the present operating point with overrides (redispatch.Gk MW, vset.Gk pu, gen.Gk MW, load.Bxx MW, load.scale, line.Lxx 0/1); answered by `solved` (loadings, flows, all bus voltages, outputs, losses).",
    ),
    tool(
        "n1_screen",
        5,
        "fn n1_screen(controls: List<String>, values: List<Float>)",
        "N-1 screening with the same overrides: the worst loading after each single line outage; answered by `screen`.",
    ),
];

/// Every tool of `domain`, level by level.
pub fn tools(domain: Domain) -> Vec<Tool> {
    let sim: &[Tool] = match domain {
        Domain::Cooling => &COOLING_SIM,
        Domain::Grid => &GRID_SIM,
    };
    COMMON.iter().chain(sim).copied().collect()
}

/// The names of the tools at harness level `level` (cumulative).
pub fn registry(domain: Domain, level: u8) -> BTreeSet<String> {
    tools(domain)
        .into_iter()
        .filter(|t| t.level <= level)
        .map(|t| t.name.to_owned())
        .collect()
}

/// The game kind of one domain.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Mci(pub Domain);

impl Mci {
    /// One sentence on the game.
    fn doc(&self) -> &'static str {
        match self.0 {
            Domain::Cooling => {
                "Operate a liquid-cooling loop of 20 cold plates: one task per episode."
            }
            Domain::Grid => "Operate the IEEE 14-bus grid through a day: one task per episode.",
        }
    }
}

impl GameKind for Mci {
    fn name(&self) -> &str {
        self.0.name()
    }

    fn about(&self) -> &str {
        self.doc()
    }

    fn manifest(&self) -> GameManifest {
        use harness_runtime::{Better::*, MetricKind::*, MetricRole::*};
        let tasks = self.0.tasks();
        let set = |name: &str, doc: &str, split: Option<&str>| InstanceSet {
            name: name.to_string(),
            doc: doc.to_string(),
            instances: tasks
                .iter()
                .filter(|t| split.is_none_or(|s| t.split().name() == s))
                .map(|t| t.id.clone())
                .collect(),
            implies: Vec::new(),
        };
        GameManifest {
            metrics: vec![
                MetricSpec::new(
                    "score",
                    Mean,
                    Higher,
                    Primary,
                    "The rule grader's score of the answer, in [0, 1].",
                ),
                MetricSpec::new(
                    "answered",
                    Rate,
                    Higher,
                    Secondary,
                    "Whether an answer was submitted.",
                ),
                MetricSpec::new(
                    "self_check",
                    Rate,
                    Higher,
                    Info,
                    "Whether the executor's self-check passed.",
                )
                .hidden(),
                MetricSpec::new("tool_calls", Count, Lower, Cost, "Tool calls made.")
                    .labelled("calls"),
                MetricSpec::new(
                    "observation_bytes",
                    Count,
                    Lower,
                    Cost,
                    "Bytes of tool results returned.",
                )
                .hidden(),
                MetricSpec::new(
                    "tokens",
                    Count,
                    Lower,
                    Cost,
                    "Tokens of schemas, calls and results (bytes / 4).",
                )
                .hidden(),
                MetricSpec::new(
                    "sim_steps",
                    Count,
                    Lower,
                    Cost,
                    "Simulator steps the tools ran.",
                )
                .hidden(),
            ],
            instance_sets: vec![
                set("all", "Every task: 12 classes × 10 tasks.", None),
                set(
                    "construction",
                    "The construction split, from which the map is built.",
                    Some("construction"),
                ),
                set(
                    "test",
                    "The test split, on which policies are evaluated.",
                    Some("test"),
                ),
            ],
            options: Vec::new(),
        }
    }

    fn describe_instance(
        &self,
        instance: &str,
        _options: &GameOptions,
    ) -> Option<Result<String, String>> {
        let task = self.0.tasks().iter().find(|t| t.id == instance);
        Some(task.map_or_else(
            || Err(format!("no task `{instance}` in {}", self.0.name())),
            |task| {
                Ok(format!(
                    "{} {} {} {} {} t={}{}: {}\n",
                    task.id,
                    task.class,
                    task.split().name(),
                    task.family,
                    task.scenario,
                    task.t_now,
                    self.0.time_unit(),
                    task.prompt
                ))
            },
        ))
    }

    fn bindings(&self) -> GameSig {
        let domain = self.0;
        let mut sig = GameSig::new(domain.name(), self.doc());
        sig.query("task_id: String", "The task's id.", "game.task_id")
            .query(
                "task_class: String",
                "The task's class <omega>-<tau>-<e>, for example `I-N-S` or `A-F-X`.",
                "game.task_class == \"I-N-S\"",
            )
            .query(
                "task_family: String",
                "The task's template family, for example `value_at`.",
                "game.task_family",
            )
            .query("prompt: String", "The task as a sentence.", "game.prompt")
            .query(
                "t_now: Int",
                "The current time (s for cooling, min for grid); nothing later is visible.",
                "game.t_now",
            )
            .query(
                "horizon: Int",
                "The task's horizon Delta for a Future task; 0 for a Now task.",
                "game.t_now + game.horizon",
            )
            .query(
                "fn task_num(name: String) -> Option<Float>",
                "A numeric argument the prompt states (`limit`, `horizon`).",
                "game.task_num(\"limit\").unwrap_or(45.0)",
            )
            .query(
                "fn task_text(name: String) -> Option<String>",
                "A name argument the prompt states (`signal`, `plate`, `line`, `bus`).",
                "game.task_text(\"signal\")",
            )
            .query(
                "fn family_of(signal: String) -> String",
                "The family part of a signal name: `T_out` for `T_out.07`, `rho` for `rho.L03`.",
                "game.family_of(\"T_out.07\") == \"T_out\"",
            )
            .query(
                "fn target_of(signal: String) -> String",
                "The target part of a signal name: `07` for `T_out.07`; empty for `T_supply`.",
                "game.target_of(\"rho.L03\") == \"L03\"",
            )
            .query(
                "tool_calls_left: Int",
                "Tool calls left before the task must be answered.",
                "game.tool_calls_left > 0",
            )
            .query(
                "tool_calls_used: Int",
                "Tool calls made so far.",
                "game.tool_calls_used",
            );
        // Every tool above K1 is gated: a layer reaches it only through `uses game.<tool>`, so
        // the level a stack provides is checked by the compiler.
        for t in tools(domain) {
            sig.effect(t.sig, t.doc);
            if t.level > 1 {
                sig.gate(t.name);
            }
        }
        sig.observation(
            "fn accepted(kind: String)",
            "The answer was recorded; the task is over.",
        )
        .observation(
            "fn refused(tool: String, reason: String)",
            "A tool call that could not be served, and why (it still counts).",
        )
        .observation(
            "fn manual(topic: String, text: String, keys: List<String>, values: List<Float>)",
            "A manual topic: prose and its facts as named numbers.",
        )
        .observation(
            "fn signals(names: List<String>, units: List<String>)",
            "The telemetry signals and their units.",
        )
        .observation(
            "fn series(signal: String, times: List<Int>, values: List<Float>)",
            "A signal's samples.",
        )
        .observation(
            "fn snapshot(t: Int, names: List<String>, values: List<Float>)",
            "Every signal at one time.",
        )
        .observation(
            "fn alarms(times: List<Int>, names: List<String>, kinds: List<String>)",
            "Alarms raised: when, on which signal, and what kind.",
        )
        .observation(
            "fn physics(component: String, text: String, keys: List<String>, values: List<Float>)",
            "A model component: equations as prose and parameters as named numbers.",
        )
        .observation(
            "fn trajectory(times: List<Int>, names: List<String>, values: List<List<Float>>, peaks: List<Float>)",
            "A twin rollout: sample times, and per signal its samples and its peak.",
        )
        .observation(
            "fn solved(ok: Bool, names: List<String>, values: List<Float>)",
            "A steady state or power flow; `ok` is false when it has no solution.",
        )
        .observation(
            "fn screen(outages: List<String>, max_rho: List<Float>, worst: List<String>)",
            "N-1 screening: per outage, the highest loading left and the line carrying it.",
        );
        let lists: Vec<(String, String)> = sig
            .observations
            .iter()
            .flat_map(|o| {
                o.params
                    .iter()
                    .filter(|p| matches!(p.ty, harness_compiler::types::Ty::List(_)))
                    .map(|p| (o.name.clone(), p.name.clone()))
            })
            .collect();
        for (observation, field) in lists {
            sig.observation_bound(&observation, &field, cap_of(&observation) as u64);
        }
        // The tasks are bundled, so the largest time and horizon any of them shows bound the
        // two integer queries.
        let tasks = domain.tasks();
        let most = |f: fn(&Task) -> i64| tasks.iter().map(f).max().unwrap_or(0).unsigned_abs();
        sig.episode_observations(MAX_OBSERVATIONS as u64);
        sig.bound("t_now", most(|t| t.t_now));
        sig.bound("horizon", most(|t| t.horizon()));
        sig
    }

    fn natives(&self) -> Natives {
        // Tasks, series and model facts are plain values: there are no opaque types.
        Natives::new()
    }

    fn start(
        &self,
        instance: &str,
        _options: &GameOptions,
        _streams: &RngStreams,
    ) -> Result<Box<dyn Game>, String> {
        // Every episode replays its scenario exactly (the paper's D.5): the seed changes
        // nothing the game does, only what a harness draws from its own streams.
        Episode::new(self.0, instance).map(|e| Box::new(e) as Box<dyn Game>)
    }
}

/// The submitted answer and what came with it.
#[derive(Clone, Debug, PartialEq)]
struct Submission {
    answer: Answer,
    self_check: bool,
    findings: String,
    score: f64,
}

/// One episode: a task, its meters and its answer.
#[derive(Clone, Debug)]
pub struct Episode {
    domain: Domain,
    task: &'static Task,
    telemetry: &'static Telemetry,
    provisioned: BTreeSet<String>,
    schema_bytes: usize,
    calls: i64,
    transcript_bytes: usize,
    tokens: usize,
    observation_bytes: usize,
    sim_steps: usize,
    out_of_budget: bool,
    /// Observations sent so far; the episode ends at [`MAX_OBSERVATIONS`].
    sent: usize,
    submission: Option<Submission>,
    version: u64,
    pending: Vec<Observation>,
}

fn list_str<S: AsRef<str>>(items: &[S]) -> Value {
    Value::list(items.iter().map(|s| Value::str(s.as_ref())).collect())
}

fn float(x: f64) -> Value {
    // Every simulated quantity is finite; a non-finite one would be a defect, reported as 0.
    Value::float(x).unwrap_or(Value::float(0.0).unwrap_or(Value::Int(0)))
}

fn list_float(items: &[f64]) -> Value {
    Value::list(items.iter().map(|&x| float(x)).collect())
}

fn list_int(items: &[i64]) -> Value {
    Value::list(items.iter().map(|&x| Value::Int(x)).collect())
}

fn obs(name: &str, args: Vec<Value>) -> Observation {
    Observation {
        name: Arc::from(name),
        args,
    }
}

fn doc_obs(kind: &str, topic: &str, doc: Doc) -> Observation {
    let keys: Vec<&str> = doc.entries.iter().map(|(k, _)| k.as_str()).collect();
    let values: Vec<f64> = doc.entries.iter().map(|(_, v)| *v).collect();
    obs(
        kind,
        vec![
            Value::str(topic),
            Value::str(&doc.text),
            list_str(&keys),
            list_float(&values),
        ],
    )
}

/// The positional arguments of an effect, typed.
struct Args<'a>(&'a [Value]);

impl Args<'_> {
    fn get(&self, i: usize) -> Result<&Value, String> {
        self.0
            .get(i)
            .ok_or_else(|| format!("missing argument {}", i + 1))
    }
    fn text(&self, i: usize) -> Result<String, String> {
        match self.get(i)? {
            Value::Str(s) => Ok(s.to_string()),
            other => Err(format!(
                "argument {} must be a String, not {}",
                i + 1,
                other.kind_name()
            )),
        }
    }
    fn int(&self, i: usize) -> Result<i64, String> {
        self.get(i)?
            .as_int()
            .ok_or_else(|| format!("argument {} must be an Int", i + 1))
    }
    fn num(&self, i: usize) -> Result<f64, String> {
        self.get(i)?
            .as_f64()
            .ok_or_else(|| format!("argument {} must be a number", i + 1))
    }
    fn flag(&self, i: usize) -> Result<bool, String> {
        self.get(i)?
            .as_bool()
            .ok_or_else(|| format!("argument {} must be a Bool", i + 1))
    }
    fn texts(&self, i: usize) -> Result<Vec<String>, String> {
        self.get(i)?
            .elements()
            .ok_or_else(|| format!("argument {} must be a List<String>", i + 1))?
            .iter()
            .map(|v| match v {
                Value::Str(s) => Ok(s.to_string()),
                other => Err(format!(
                    "argument {} holds {}, not String",
                    i + 1,
                    other.kind_name()
                )),
            })
            .collect()
    }
    fn nums(&self, i: usize) -> Result<Vec<f64>, String> {
        self.get(i)?
            .elements()
            .ok_or_else(|| format!("argument {} must be a List<Float>", i + 1))?
            .iter()
            .map(|v| {
                v.as_f64()
                    .ok_or_else(|| format!("argument {} holds {}, not Float", i + 1, v.kind_name()))
            })
            .collect()
    }
    /// Parallel `controls` and `values` lists as pairs.
    fn controls(&self, i: usize) -> Result<Vec<(String, f64)>, String> {
        let names = self.texts(i)?;
        let values = self.nums(i + 1)?;
        if names.len() != values.len() {
            return Err(format!(
                "{} controls but {} values: give one value per control",
                names.len(),
                values.len()
            ));
        }
        Ok(names.into_iter().zip(values).collect())
    }
}

impl Episode {
    /// An episode of the task `id` of `domain`, with every tool provisioned.
    pub fn new(domain: Domain, id: &str) -> Result<Episode, String> {
        let task = domain.task(id).ok_or_else(|| {
            format!(
                "unknown {} task `{id}`; `harness mci tasks --game {}` lists them",
                domain.name(),
                domain.name()
            )
        })?;
        let telemetry = match domain {
            Domain::Cooling => cooling::oracle::recorded(&task.scenario).map(|r| &r.telemetry),
            Domain::Grid => grid::oracle::recorded(&task.scenario).map(|r| &r.telemetry),
        }
        .ok_or_else(|| format!("task `{id}` names an unknown scenario `{}`", task.scenario))?;
        let mut episode = Episode {
            domain,
            task,
            telemetry,
            provisioned: BTreeSet::new(),
            schema_bytes: 0,
            calls: 0,
            transcript_bytes: task.prompt.len(),
            tokens: 0,
            observation_bytes: 0,
            sim_steps: 0,
            out_of_budget: false,
            sent: 0,
            submission: None,
            version: 0,
            pending: Vec::new(),
        };
        episode.set_registry(&registry(domain, 5));
        Ok(episode)
    }

    /// Restricts the episode to the tools named (a level's registry); any other tool is
    /// refused. The cost proxy charges the schema of exactly these tools on every call.
    pub fn set_registry(&mut self, names: &BTreeSet<String>) {
        self.provisioned = names.clone();
        self.schema_bytes = tools(self.domain)
            .iter()
            .filter(|t| names.contains(t.name))
            .map(|t| t.sig.len() + t.doc.len())
            .sum();
    }

    /// The task being played.
    pub fn task(&self) -> &'static Task {
        self.task
    }

    /// The submitted answer's score, once answered.
    pub fn score(&self) -> Option<f64> {
        self.submission.as_ref().map(|s| s.score)
    }

    /// The visibility gate: a time clamped to the episode's past.
    fn gate(&self, t: i64) -> i64 {
        t.clamp(0, self.task.t_now)
    }

    fn submit(&mut self, answer: Answer, self_check: bool, findings: String) -> Observation {
        let kind = match &answer {
            Answer::Number(_) => "number",
            Answer::Label(_) => "label",
            Answer::Set(_) => "set",
            Answer::Bool(_) => "bool",
            Answer::Action { .. } => "action",
        };
        // A grading failure (a malformed bundled task) scores 0 rather than ending the run.
        let score = self.domain.grade(self.task, &answer).unwrap_or(0.0);
        self.submission = Some(Submission {
            answer,
            self_check,
            findings,
            score,
        });
        obs("accepted", vec![Value::str(kind)])
    }

    /// Serves one tool call: the observation, or why it is refused.
    fn serve(&mut self, name: &str, a: &Args) -> Result<Observation, String> {
        let t_now = self.task.t_now;
        Ok(match name {
            "read_manual" => {
                let topic = a.text(0)?;
                let doc = match self.domain {
                    Domain::Cooling => cooling::knowledge::manual(&topic),
                    Domain::Grid => grid::knowledge::manual(&topic),
                }
                .ok_or_else(|| format!("no manual topic `{topic}`; read `index`"))?;
                doc_obs("manual", &topic, doc)
            }
            "list_signals" => {
                let visible: Vec<_> = self
                    .telemetry
                    .signals
                    .iter()
                    .filter(|s| !s.hidden)
                    .collect();
                let names: Vec<&str> = visible.iter().map(|s| s.name.as_str()).collect();
                let units: Vec<&str> = visible.iter().map(|s| s.unit).collect();
                obs("signals", vec![list_str(&names), list_str(&units)])
            }
            "read_series" => {
                let signal = a.text(0)?;
                if !self.telemetry.is_visible(&signal) {
                    return Err(format!(
                        "`{signal}` is not a visible signal; see list_signals"
                    ));
                }
                let (t0, t1) = (self.gate(a.int(1)?), self.gate(a.int(2)?));
                let (times, values) = self
                    .telemetry
                    .window(&signal, t0.min(t1), t0.max(t1))
                    .unwrap_or_default();
                let (times, values) = thin(times, values, SERIES_CAP);
                obs(
                    "series",
                    vec![Value::str(&signal), list_int(&times), list_float(&values)],
                )
            }
            "read_snapshot" => {
                let t = self.gate(a.int(0)?);
                let sample = self.telemetry.sample_at(t);
                let mut names = Vec::new();
                let mut values = Vec::new();
                for (spec, column) in self.telemetry.signals.iter().zip(&self.telemetry.values) {
                    if !spec.hidden {
                        names.push(spec.name.as_str());
                        values.push(column[sample]);
                    }
                }
                obs(
                    "snapshot",
                    vec![
                        Value::Int(self.telemetry.times[sample]),
                        list_str(&names),
                        list_float(&values),
                    ],
                )
            }
            "read_alarms" => {
                let (t0, t1) = (self.gate(a.int(0)?), self.gate(a.int(1)?));
                let (times, names, kinds) =
                    alarms(self.domain, self.telemetry, t0.min(t1), t0.max(t1));
                obs(
                    "alarms",
                    vec![list_int(&times), list_str(&names), list_str(&kinds)],
                )
            }
            "read_model" => {
                let component = a.text(0)?;
                let doc = match self.domain {
                    Domain::Cooling => cooling::knowledge::model(&component),
                    Domain::Grid => grid::oracle::recorded(&self.task.scenario).and_then(|r| {
                        grid::knowledge::model(&component, &r.point(t_now).case.in_service)
                    }),
                }
                .ok_or_else(|| {
                    let known = match self.domain {
                        Domain::Cooling => cooling::knowledge::MODEL_COMPONENTS.join(", "),
                        Domain::Grid => format!(
                            "{}, sensitivity.Lxx, outage.Lxx",
                            grid::knowledge::MODEL_COMPONENTS.join(", ")
                        ),
                    };
                    format!("no model component `{component}`; the components are {known}")
                })?;
                doc_obs("physics", &component, doc)
            }
            "simulate" => {
                let rec = cooling::oracle::recorded(&self.task.scenario).ok_or("no scenario")?;
                let horizon = a.int(0)?;
                let controls = a.controls(1)?;
                let wanted = a.texts(3)?;
                let roll = cooling::twin::rollout(rec, t_now, horizon, &controls, &wanted)?;
                self.sim_steps += roll.steps;
                obs(
                    "trajectory",
                    vec![
                        list_int(&roll.times),
                        list_str(&roll.names),
                        Value::list(roll.values.iter().map(|v| list_float(v)).collect()),
                        list_float(&roll.peaks),
                    ],
                )
            }
            "steady_state" | "power_flow" => {
                let controls = a.controls(0)?;
                let result = match self.domain {
                    Domain::Cooling => {
                        let rec =
                            cooling::oracle::recorded(&self.task.scenario).ok_or("no scenario")?;
                        cooling::twin::steady(rec, t_now, &controls)
                    }
                    Domain::Grid => {
                        let rec =
                            grid::oracle::recorded(&self.task.scenario).ok_or("no scenario")?;
                        grid::twin::power_flow(rec, t_now, &controls)
                    }
                };
                self.sim_steps += 1;
                match result {
                    Ok(pairs) => {
                        let names: Vec<&str> = pairs.iter().map(|(n, _)| n.as_str()).collect();
                        let values: Vec<f64> = pairs.iter().map(|(_, v)| *v).collect();
                        obs(
                            "solved",
                            vec![Value::Bool(true), list_str(&names), list_float(&values)],
                        )
                    }
                    // A bad override is refused; an operating point without a solution is an
                    // answer the operator needs to hear.
                    Err(why) if why.contains("does not converge") || why.contains("islanded") => {
                        obs(
                            "solved",
                            vec![Value::Bool(false), list_str::<&str>(&[]), list_float(&[])],
                        )
                    }
                    Err(why) => return Err(why),
                }
            }
            "n1_screen" => {
                let rec = grid::oracle::recorded(&self.task.scenario).ok_or("no scenario")?;
                let controls = a.controls(0)?;
                let rows = grid::twin::n1_screen(rec, t_now, &controls)?;
                self.sim_steps += 2 * rows.len();
                let outages: Vec<&str> = rows.iter().map(|r| r.0.as_str()).collect();
                let rho: Vec<f64> = rows.iter().map(|r| r.1).collect();
                let worst: Vec<&str> = rows.iter().map(|r| r.2.as_str()).collect();
                obs(
                    "screen",
                    vec![list_str(&outages), list_float(&rho), list_str(&worst)],
                )
            }
            other => {
                return Err(format!(
                    "the {} game has no tool `{other}`",
                    self.domain.name()
                ));
            }
        })
    }

    /// Meters one model call: the schema and transcript it reads, then what it adds.
    fn meter(&mut self, effect: &Effect, answer: &Observation) {
        self.tokens += (self.schema_bytes + self.transcript_bytes).div_ceil(4);
        let effect_bytes = serde_json::to_string(effect).map_or(0, |s| s.len());
        let answer_bytes = serde_json::to_string(answer).map_or(0, |s| s.len());
        self.transcript_bytes += effect_bytes + answer_bytes;
        self.observation_bytes += answer_bytes;
    }
}

/// The alarms raised in `[t0, t1]`: a rising edge of a signal past its alarm threshold.
fn alarms(
    domain: Domain,
    telemetry: &Telemetry,
    t0: i64,
    t1: i64,
) -> (Vec<i64>, Vec<String>, Vec<String>) {
    // (signal family, threshold, true when the alarm is "above", its kind).
    let rules: &[(&str, f64, bool, &str)] = match domain {
        Domain::Cooling => &[
            ("T_out", 45.0, true, "high_outlet_temperature"),
            ("T_supply", 33.0, true, "high_supply_temperature"),
            ("flow", 4.3, false, "low_loop_flow"),
        ],
        Domain::Grid => &[
            ("rho", 1.0, true, "line_overload"),
            ("status", 0.5, false, "line_out_of_service"),
            ("v", 0.94, false, "low_voltage"),
        ],
    };
    let mut events = Vec::new();
    for (spec, column) in telemetry.signals.iter().zip(&telemetry.values) {
        if spec.hidden {
            continue;
        }
        for &(family, threshold, above, kind) in rules {
            if spec.family() != family || (family == "flow" && spec.name != "flow.loop") {
                continue;
            }
            let alarmed = |v: f64| if above { v > threshold } else { v < threshold };
            for (i, (&t, &v)) in telemetry.times.iter().zip(column).enumerate() {
                let was = i > 0 && alarmed(column[i - 1]);
                if (t0..=t1).contains(&t) && alarmed(v) && !was {
                    events.push((t, spec.name.clone(), kind.to_owned()));
                }
            }
        }
    }
    events.sort();
    let times = events.iter().map(|e| e.0).collect();
    let names = events.iter().map(|e| e.1.clone()).collect();
    let kinds = events.into_iter().map(|e| e.2).collect();
    (times, names, kinds)
}

impl Game for Episode {
    fn query(&self, name: &str, args: &[Value]) -> Result<Value, String> {
        let arg = || match args.first() {
            Some(Value::Str(s)) => Ok(s.to_string()),
            _ => Err(format!("`{name}` takes one String argument")),
        };
        let t = self.task;
        Ok(match name {
            "task_id" => Value::str(&t.id),
            "task_class" => Value::str(&t.class.to_string()),
            "task_family" => Value::str(&t.family),
            "prompt" => Value::str(&t.prompt),
            "t_now" => Value::Int(t.t_now),
            "horizon" => Value::Int(t.horizon()),
            "task_num" => t
                .num(&arg()?)
                .map_or(Value::none(), |x| Value::some(float(x))),
            "task_text" => t
                .text(&arg()?)
                .map_or(Value::none(), |s| Value::some(Value::str(s))),
            "family_of" => {
                let name = arg()?;
                Value::str(name.split_once('.').map_or(name.as_str(), |(f, _)| f))
            }
            "target_of" => Value::str(arg()?.split_once('.').map_or("", |(_, t)| t)),
            "tool_calls_left" => Value::Int((BUDGET - self.calls).max(0)),
            "tool_calls_used" => Value::Int(self.calls),
            other => {
                return Err(format!(
                    "the {} game has no query `{other}`",
                    self.domain.name()
                ));
            }
        })
    }

    fn view_version(&self) -> u64 {
        self.version
    }

    fn apply(&mut self, effect: &Effect) -> Result<(), String> {
        if self.is_over() {
            return Err("the task is over".into());
        }
        self.version += 1;
        let a = Args(&effect.args);
        let name = &*effect.name;
        let answer = if let Some(kind) = name.strip_prefix("submit_") {
            let (answer, rest) = match kind {
                "number" => (Answer::Number(a.num(0)?), 1),
                "label" => (Answer::Label(a.text(0)?), 1),
                "set" => (Answer::Set(a.texts(0)?), 1),
                "bool" => (Answer::Bool(a.flag(0)?), 1),
                "action" => (
                    Answer::Action {
                        control: a.text(0)?,
                        value: a.num(1)?,
                    },
                    2,
                ),
                other => return Err(format!("there is no `submit_{other}`")),
            };
            let (check, findings) = (a.flag(rest)?, a.text(rest + 1)?);
            self.submit(answer, check, findings)
        } else if !self.provisioned.contains(name) {
            obs(
                "refused",
                vec![
                    Value::str(name),
                    Value::str("this tool is not provisioned at the harness's level"),
                ],
            )
        } else if self.calls >= BUDGET {
            // A call past the budget ends the task unanswered (the runner's hard timeout).
            self.out_of_budget = true;
            obs(
                "refused",
                vec![Value::str(name), Value::str("the tool budget is spent")],
            )
        } else {
            self.calls += 1;
            match self.serve(name, &a) {
                // Only the list fields are declared; an integer field is not bounded.
                Ok(o)
                    if !o.args.iter().all(|v| {
                        matches!(v, Value::Int(_)) || v.within(cap_of(&o.name) as u64)
                    }) =>
                {
                    obs(
                        "refused",
                        vec![
                            Value::str(name),
                            Value::str(&format!(
                                "the answer would hold more than {} items; ask for a shorter \
                                 window or fewer signals",
                                cap_of(name)
                            )),
                        ],
                    )
                }
                Ok(o) => o,
                Err(why) => obs("refused", vec![Value::str(name), Value::str(&why)]),
            }
        };
        self.meter(effect, &answer);
        self.pending.push(answer);
        self.sent += 1;
        if self.sent >= MAX_OBSERVATIONS {
            self.out_of_budget = true;
        }
        Ok(())
    }

    fn take_observations(&mut self) -> Vec<Observation> {
        std::mem::take(&mut self.pending)
    }

    fn is_over(&self) -> bool {
        self.submission.is_some() || self.out_of_budget
    }

    fn fork(&self) -> Option<Box<dyn Game>> {
        Some(Box::new(self.clone()))
    }

    fn reseed(&mut self, _salt: u64) -> bool {
        // No effect draws anything at random: the copies already agree.
        true
    }

    /// The registry is the ungated answer tools plus the gated tools the enabled layers
    /// `uses`: a K3 stack is offered exactly K3's tools, as the paper's level-K process is
    /// built with K's registry only (C.3).
    fn provision(&mut self, provided: &BTreeSet<String>) {
        let names = tools(self.domain)
            .into_iter()
            .filter(|t| t.level == 1 || provided.contains(t.name))
            .map(|t| t.name.to_owned())
            .collect();
        self.set_registry(&names);
    }

    fn metrics(&self) -> BTreeMap<String, Value> {
        let t = self.task;
        let sub = self.submission.as_ref();
        BTreeMap::from([
            ("answered".into(), Value::Bool(sub.is_some())),
            ("class".into(), Value::str(&t.class.to_string())),
            ("family".into(), Value::str(&t.family)),
            (
                "findings".into(),
                Value::str(sub.map_or("", |s| s.findings.as_str())),
            ),
            (
                "observation_bytes".into(),
                Value::Int(self.observation_bytes as i64),
            ),
            ("score".into(), float(sub.map_or(0.0, |s| s.score))),
            (
                "self_check".into(),
                Value::Bool(sub.is_some_and(|s| s.self_check)),
            ),
            ("sim_steps".into(), Value::Int(self.sim_steps as i64)),
            ("split".into(), Value::str(t.split().name())),
            ("tokens".into(), Value::Int(self.tokens as i64)),
            ("tool_calls".into(), Value::Int(self.calls)),
        ])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn effect(name: &str, args: Vec<Value>) -> Effect {
        Effect {
            name: Arc::from(name),
            args,
        }
    }

    #[test]
    fn both_games_bind_cleanly_and_levels_are_cumulative() {
        for domain in Domain::ALL {
            let sig = Mci(domain).bindings();
            assert!(sig.problems.is_empty(), "{:?}", sig.problems);
            assert_eq!(sig.effects.len(), 13);
            let sizes: Vec<usize> = (1..=5).map(|k| registry(domain, k).len()).collect();
            assert_eq!(sizes, [5, 6, 10, 11, 13]);
        }
        assert_eq!(Mci(Domain::Grid).instances().len(), 120);
    }

    #[test]
    fn the_budget_ends_an_unanswered_task_and_tokens_grow_with_the_transcript() {
        let mut e =
            Episode::new(Domain::Cooling, "cooling.I-N-S.00").unwrap_or_else(|e| panic!("{e}"));
        let read = || {
            effect(
                "read_series",
                vec![Value::str("T_supply"), Value::Int(0), Value::Int(1200)],
            )
        };
        let mut last = 0;
        for _ in 0..BUDGET {
            e.apply(&read()).unwrap_or_else(|e| panic!("{e}"));
            let tokens = e.metrics()["tokens"].as_int().unwrap_or(0);
            assert!(tokens > last);
            last = tokens;
        }
        assert!(!e.is_over());
        e.apply(&read()).unwrap_or_else(|e| panic!("{e}"));
        assert!(e.is_over());
        assert_eq!(e.metrics()["answered"], Value::Bool(false));
        assert!(e.apply(&read()).is_err());
    }

    #[test]
    fn an_unprovisioned_tool_is_refused_and_a_submission_is_scored() {
        let mut e = Episode::new(Domain::Grid, "grid.I-N-S.00").unwrap_or_else(|e| panic!("{e}"));
        e.set_registry(&registry(Domain::Grid, 3));
        e.apply(&effect(
            "power_flow",
            vec![list_str::<&str>(&[]), list_float(&[])],
        ))
        .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(&*e.take_observations()[0].name, "refused");
        let truth = Domain::Grid
            .resolve(e.task())
            .unwrap_or_else(|e| panic!("{e}"));
        let Answer::Number(x) = truth else {
            panic!("a number task")
        };
        e.apply(&effect(
            "submit_number",
            vec![float(x), Value::Bool(true), Value::str("read it")],
        ))
        .unwrap_or_else(|e| panic!("{e}"));
        assert!(e.is_over());
        assert_eq!(e.metrics()["score"], float(1.0));
        assert_eq!(e.metrics()["findings"], Value::str("read it"));
    }
}
