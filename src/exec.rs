//! Running a plan: one machine per arm, episodes in parallel on a worker pool, each finished
//! episode handed to the caller's sink at once.
//!
//! Every episode's result depends only on its unit (arm, instance, seed, replicate) and the
//! plan, never on which thread ran it or when, so a run gives byte-identical records and traces
//! on any number of threads. The caller supplies the LLM host of each episode (a fresh host per
//! episode keeps per-episode budgets separate) and the sink, which writes the result and may
//! draw progress.

use std::sync::Arc;

use harness_compiler::ir::Program;
use harness_runtime::{
    Event, EventKind, GameKind, GameOptions, Limits, LlmCallLog, LlmHost, Machine, Phase,
    RngStreams, Switches, TraceFile, run_episode_with_llm, write_json_lines,
};

use crate::folder::{ArmSettings, GameRecord};
use crate::plan::{Plan, Unit};

/// The stack size of every thread that runs episodes: deep but legal programs (long chains of
/// computed values, deeply nested expressions) recurse in the interpreter, and the default
/// 2 MiB of a worker thread is far less than a main thread's 8 MiB.
pub const WORKER_STACK: usize = 64 << 20;

/// A plan ready to run: the program, the game and one machine per arm.
pub struct Experiment {
    /// The program.
    pub program: Arc<Program>,
    /// The game.
    pub kind: Arc<dyn GameKind>,
    /// The game's options.
    pub options: GameOptions,
    /// The program's files, for the first event of every trace.
    pub files: Vec<TraceFile>,
    /// What to run.
    pub plan: Plan,
    machines: Vec<Machine>,
}

/// One finished episode: its record, its trace and its LLM accounting.
#[derive(Clone, Debug)]
pub struct Played {
    /// The record.
    pub record: GameRecord,
    /// The trace's first event: the program's files.
    pub header: Event,
    /// The episode's events, after the header.
    pub events: Vec<Event>,
    /// Every LLM call with latency and attempts.
    pub llm_calls: Vec<LlmCallLog>,
}

impl Played {
    /// Writes the trace as JSON lines, the file table first. The events are serialised
    /// straight into `out` rather than into one text first: a trace runs to hundreds of
    /// kilobytes, and a fresh buffer of that size per episode costs more in page faults than
    /// its serialisation.
    pub fn write_trace(&self, out: &mut dyn std::io::Write) -> std::io::Result<()> {
        write_json_lines(out, std::slice::from_ref(&self.header))?;
        write_json_lines(out, &self.events)
    }
}

impl Experiment {
    /// Builds one machine per arm: the arm's layers, the plan's `settings` and then the arm's
    /// own, and `set_json` data. Fails when a switch or a setting is invalid for an arm.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        program: Arc<Program>,
        kind: Arc<dyn GameKind>,
        options: GameOptions,
        files: Vec<TraceFile>,
        plan: Plan,
        settings: &[(String, String)],
        set_json: &[(String, serde_json::Value)],
        limits: Limits,
    ) -> Result<Experiment, String> {
        let mut natives = harness_stdlib::prelude::natives();
        natives.extend(&kind.natives());
        let mut machines = Vec::new();
        for arm in &plan.arms {
            let mut set = settings.to_vec();
            for (name, value) in &arm.set {
                if let Some((_, given)) = settings.iter().find(|(n, _)| n == name)
                    && given != value
                {
                    return Err(format!(
                        "arm `{}` sets `{name}={value}`, which conflicts with the run's `{name}={given}`",
                        arm.name
                    ));
                }
                set.push((name.clone(), value.clone()));
            }
            let switches = Switches {
                layers: Some(arm.layers.clone()),
                without: Vec::new(),
                set,
                set_json: set_json.to_vec(),
            };
            let machine = Machine::new(program.clone(), natives.clone(), &switches, limits)
                .map_err(|error| format!("arm `{}`: {}", arm.name, error.message))?;
            machines.push(machine);
        }
        Ok(Experiment {
            program,
            kind,
            options,
            files,
            plan,
            machines,
        })
    }

    /// Per arm, every config parameter and tunable default in effect.
    pub fn effective(&self) -> Vec<ArmSettings> {
        self.plan
            .arms
            .iter()
            .zip(&self.machines)
            .map(|(arm, machine)| ArmSettings {
                arm: arm.name.clone(),
                values: machine
                    .effective_settings()
                    .into_iter()
                    .map(|(name, value)| (name, value.to_string()))
                    .collect(),
            })
            .collect()
    }

    /// Plays one unit with its own LLM host (`None`: no LLM configured).
    pub fn play(&self, unit: &Unit, llm: Option<&dyn LlmHost>) -> Played {
        let arm = &self.plan.arms[unit.arm];
        let header = trace_header(&self.files);
        let streams = RngStreams::new(unit.seed);
        let mut game = match self.kind.start(&unit.instance, &self.options, &streams) {
            Ok(game) => game,
            Err(message) => {
                return Played {
                    record: GameRecord {
                        arm: arm.name.clone(),
                        instance: unit.instance.clone(),
                        seed: unit.seed,
                        replicate: unit.replicate,
                        end: "error".into(),
                        halt: None,
                        error: Some(format!("the game could not start: {message}")),
                        metrics: Default::default(),
                        costs: Default::default(),
                    },
                    header,
                    events: Vec::new(),
                    llm_calls: Vec::new(),
                };
            }
        };
        let result = run_episode_with_llm(&self.machines[unit.arm], game.as_mut(), llm);
        let record = GameRecord {
            arm: arm.name.clone(),
            instance: unit.instance.clone(),
            seed: unit.seed,
            replicate: unit.replicate,
            end: result.end.name().to_string(),
            halt: result.halt.clone(),
            error: result
                .error
                .as_ref()
                .map(|error| format!("{}: {}", error.code, error.message)),
            metrics: result
                .metrics
                .iter()
                .map(|(name, value)| {
                    (
                        name.clone(),
                        serde_json::to_value(value).unwrap_or(serde_json::Value::Null),
                    )
                })
                .collect(),
            costs: result.costs,
        };
        Played {
            record,
            header,
            events: result.events,
            llm_calls: result.llm_calls,
        }
    }
}

/// The first event of every trace: the program's files.
pub fn trace_header(files: &[TraceFile]) -> Event {
    Event {
        turn: 0,
        phase: Phase::Start,
        layer: None,
        span: Default::default(),
        kind: EventKind::Files {
            files: files.to_vec(),
        },
    }
}

/// A worker pool whose threads have [`WORKER_STACK`] of stack; `threads` 0 is one per core.
pub fn pool(threads: usize) -> Result<rayon::ThreadPool, String> {
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .stack_size(WORKER_STACK)
        .build()
        .map_err(|error| format!("cannot start the worker threads: {error}"))
}

/// Plays `units` of `experiment` on `threads` worker threads (0: one per core). `llm` makes
/// each episode's host; `sink` receives each finished episode as soon as it ends (from any
/// worker thread) and stops the run by returning an error.
pub fn run(
    experiment: &Experiment,
    units: &[Unit],
    threads: usize,
    llm: &(dyn Fn(&Unit) -> Option<Box<dyn LlmHost>> + Sync),
    sink: &(dyn Fn(&Unit, Played) -> Result<(), String> + Sync),
) -> Result<(), String> {
    use rayon::prelude::*;
    pool(threads)?.install(|| {
        units.par_iter().try_for_each(|unit| {
            let host = llm(unit);
            let played = experiment.play(unit, host.as_deref());
            sink(unit, played)
        })
    })
}

impl Experiment {
    /// Replays a unit phase by phase without an LLM and reads the computed value `name` at
    /// every decision (after the turn's observations and revisions, before its action), so a
    /// value the trace does not record can still be followed over turns. The replay is the
    /// episode itself: same seed, same streams, same decisions.
    pub fn computed_series(
        &self,
        unit: &Unit,
        name: &str,
    ) -> Result<Vec<(u32, harness_runtime::Value)>, String> {
        let machine = &self.machines[unit.arm];
        let streams = RngStreams::new(unit.seed);
        let mut game = self.kind.start(&unit.instance, &self.options, &streams)?;
        let mut agent = harness_runtime::Agent::start(machine, game.as_ref())
            .map_err(|error| error.to_string())?
            .with_llm_host(None);
        let mut series = Vec::new();
        while agent.turn() < machine.limits().max_turns {
            agent.next_turn();
            let step = (|| {
                agent.observe(game.as_mut())?;
                if game.is_over() {
                    return Ok(false);
                }
                agent.reflect_and_revise(game.as_ref())?;
                Ok(true)
            })();
            let going = step.map_err(|error: harness_runtime::RuntimeError| error.to_string())?;
            if !going {
                break;
            }
            match agent.computed(game.as_ref(), name) {
                Some(Ok(value)) => series.push((agent.turn(), value)),
                Some(Err(error)) => return Err(error.to_string()),
                None => {
                    return Err(format!(
                        "arm `{}` has no computed value `{name}` (or its layer is off)",
                        self.plan.arms[unit.arm].name
                    ));
                }
            }
            let decision = agent.decide(game.as_ref()).map_err(|e| e.to_string())?;
            agent
                .act(game.as_mut(), &decision)
                .map_err(|e| e.to_string())?;
        }
        Ok(series)
    }
}
