//! `harness ablate` as a library call: resolve a request into a plan, create or resume its
//! result folder, run the missing episodes in parallel, and build the report.
//!
//! The command line is a thin shell over [`ablate`]: it parses flags into a [`Request`],
//! supplies the LLM host of each episode and a progress display through [`Hooks`], and prints
//! the report. Tests call the same function, so the path users run is the path tested.

use std::collections::HashSet;
use std::path::PathBuf;
use std::sync::Arc;

use harness_compiler::ir::Program;
use harness_runtime::{Limits, LlmHost};

use crate::exec::{self, Experiment};
use crate::folder::{FORMAT, GameRecord, Manifest, RunFolder, slug};
use crate::games::Registry;
use crate::load::{self, CompileError, Sources};
use crate::plan::{self, Arm, Plan, PlanFile, Shard, Sweep, Unit};
use crate::report::{self, Report};

/// What to ablate, as plain data.
#[derive(Clone, Debug, Default)]
pub struct Request {
    /// The harness: a path, or `None` for the bundled one.
    pub harness: Option<String>,
    /// The module to run when the harness has several top modules.
    pub module: Option<String>,
    /// A plan file's path and text (`--plan`), instead of the plan flags below.
    pub plan_file: Option<(String, String)>,
    /// `--instances`: a set, `all`, or a list.
    pub instances: Option<String>,
    /// `--seeds`: a count, a range or a list (default 3).
    pub seeds: Option<String>,
    /// `--replicates` (default 1).
    pub replicates: Option<u32>,
    /// `--stacks`: only these of the harness's stacks and removals.
    pub stacks: Option<Vec<String>>,
    /// `--removals`.
    pub removals: bool,
    /// `--arm NAME=LAYERS`.
    pub arms: Vec<(String, Vec<String>)>,
    /// `--sweep NAME=VALUES`.
    pub sweeps: Vec<Sweep>,
    /// `--contrast TREATMENT:BASELINE`: arms to contrast over common episodes.
    pub contrasts: Vec<(String, String)>,
    /// `--option NAME=VALUE`: game options.
    pub options: Vec<(String, String)>,
    /// Settings for every arm, each list with the flag it came from (for conflict messages).
    pub settings: Vec<(String, Vec<(String, String)>)>,
    /// `--set-json NAME=FILE`, read: structured settings.
    pub set_json: Vec<(String, serde_json::Value)>,
    /// The training seeds of the advantage tables among them, which the plan's seeds must
    /// avoid.
    pub frozen: Vec<crate::estimate::Frozen>,
    /// Where run folders are created.
    pub out: PathBuf,
    /// `--resume DIR`.
    pub resume: Option<PathBuf>,
    /// Worker threads (0: one per core).
    pub threads: usize,
    /// `--tag`.
    pub tags: Vec<String>,
    /// `--run-id`: the run folder's name under `out`, instead of one made from the plan and
    /// the time (the shards of a run name the same one).
    pub run_id: Option<String>,
    /// `--shard K/N`: run only this part of the plan, into a folder the shards share.
    pub shard: Option<Shard>,
    /// The run's start, in seconds since the Unix epoch (the caller reads the clock).
    pub now: u64,
    /// The git commit the program was built from, if known.
    pub git_commit: Option<String>,
}

/// What the caller supplies to a run: its LLM and its progress display.
pub trait Hooks: Sync {
    /// Called once the harness is compiled, before a folder is made or an episode runs: checks
    /// the LLM configuration against the program (and may probe its server), and returns the
    /// LLM settings to record in the manifest (`None`: no LLM). An error stops the run.
    fn prepare(&self, program: &Program) -> Result<Option<serde_json::Value>, String> {
        let _ = program;
        Ok(None)
    }

    /// Makes one episode's LLM host (`None`: no LLM, every call fails as `NotConfigured`). A
    /// fresh host per episode keeps per-episode budgets apart.
    fn llm(&self, unit: &Unit) -> Option<Box<dyn LlmHost>> {
        let _ = unit;
        None
    }

    /// Told what happens, from any worker thread.
    fn progress(&self, event: Progress<'_>) {
        let _ = event;
    }
}

/// No LLM and no progress display.
pub struct NoHooks;

impl Hooks for NoHooks {}

/// What a run tells its caller while it goes.
pub enum Progress<'a> {
    /// The run starts: its folder, the episodes planned and those already finished.
    Start {
        /// The folder.
        folder: &'a RunFolder,
        /// Episodes planned.
        planned: usize,
        /// Episodes finished before this start (when resuming).
        finished: usize,
    },
    /// One episode finished.
    Finished(&'a GameRecord),
}

/// Why a run could not be done.
#[derive(Debug)]
pub enum AblateError {
    /// The harness does not compile.
    Compile(CompileError, Sources),
    /// Anything else, with what to do.
    Message(String),
}

impl From<String> for AblateError {
    fn from(message: String) -> Self {
        AblateError::Message(message)
    }
}

impl std::fmt::Display for AblateError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            AblateError::Compile(error, _) => write!(f, "{error}"),
            AblateError::Message(message) => write!(f, "{message}"),
        }
    }
}

/// The finished run: its folder, every record in plan order, and the report.
#[derive(Debug)]
pub struct Outcome {
    /// The folder.
    pub folder: RunFolder,
    /// The records with their units.
    pub records: Vec<(Unit, GameRecord)>,
    /// Episodes of the plan not finished yet: those of other shards still running (empty
    /// without `--shard`).
    pub missing: Vec<Unit>,
    /// The report (over the finished episodes; partial arms are marked).
    pub report: Report,
}

/// A named arm as the request gives it: name, layers, own settings.
type NamedArm = (String, Vec<String>, Vec<(String, String)>);

/// Runs (or resumes) an ablation and returns its report; the folder holds every episode.
pub fn ablate(
    registry: &Registry,
    request: &Request,
    hooks: &dyn Hooks,
) -> Result<Outcome, AblateError> {
    let (folder, experiment) = match &request.resume {
        Some(dir) => resume(registry, hooks, dir)?,
        None => start(registry, request, hooks)?,
    };
    let (mut done, mut pending) = folder.records().map_err(|e| e.to_string())?;
    if let Some(shard) = request.shard {
        let mine: HashSet<Unit> = shard.units(&folder.manifest().plan).into_iter().collect();
        done.retain(|(unit, _)| mine.contains(unit));
        pending.retain(|unit| mine.contains(unit));
    }
    hooks.progress(Progress::Start {
        folder: &folder,
        planned: done.len() + pending.len(),
        finished: done.len(),
    });
    exec::run(
        &experiment,
        &pending,
        request.threads,
        &|unit| hooks.llm(unit),
        &|unit, played| {
            if !played.llm_calls.is_empty() {
                folder
                    .record_llm_calls(unit, &played.llm_calls)
                    .map_err(|error| error.to_string())?;
            }
            folder
                .record_game(unit, &played.record, &mut |file| played.write_trace(file))
                .map_err(|error| error.to_string())?;
            hooks.progress(Progress::Finished(&played.record));
            Ok(())
        },
    )?;
    let (records, missing) = folder.records().map_err(|e| e.to_string())?;
    if request.shard.is_some() && !missing.is_empty() {
        // Other shards are still running: report what is finished, and leave the index files
        // and the summary to the shard that finishes the plan.
        let report = report::build(folder.manifest(), &records);
        return Ok(Outcome {
            folder,
            records,
            missing,
            report,
        });
    }
    if let Some(unit) = missing.first() {
        return Err(format!(
            "episode {} seed {} of arm {} is missing after the run",
            unit.instance,
            unit.seed,
            folder.manifest().plan.arms[unit.arm].name
        )
        .into());
    }
    let plain: Vec<GameRecord> = records.iter().map(|(_, r)| r.clone()).collect();
    folder
        .write_games_index(&plain)
        .map_err(|error| error.to_string())?;
    let report = report::build(folder.manifest(), &records);
    folder
        .write_summary(&report)
        .map_err(|error| error.to_string())?;
    Ok(Outcome {
        folder,
        records,
        missing,
        report,
    })
}

/// Compiles the harness named by the request (or a manifest).
fn compile(
    registry: &Registry,
    sources: &Sources,
    module: Option<&str>,
) -> Result<Arc<harness_compiler::ir::Program>, AblateError> {
    load::compile(registry, sources, module)
        .map_err(|error| AblateError::Compile(error, sources.clone()))
}

/// The game a program plays.
fn game_of(
    registry: &Registry,
    program: &harness_compiler::ir::Program,
) -> Result<Arc<dyn harness_runtime::GameKind>, String> {
    let name = program
        .game
        .as_deref()
        .ok_or_else(|| format!("`{}` names no game (`use game NAME`)", program.module))?;
    registry.get(name)
}

/// Starts a new run from the request.
fn start(
    registry: &Registry,
    request: &Request,
    hooks: &dyn Hooks,
) -> Result<(RunFolder, Experiment), AblateError> {
    let sources = Sources::load(request.harness.as_deref())?;
    let program = compile(registry, &sources, request.module.as_deref())?;
    let kind = game_of(registry, &program)?;
    let manifest = kind.manifest();
    let file = match &request.plan_file {
        Some((path, text)) => Some(PlanFile::parse(text, path)?),
        None => None,
    };
    let mut settings = request.settings.clone();
    let mut options = request.options.clone();
    let (instances_spec, seeds, replicates, stacks, removals, arms, sweeps) = match &file {
        Some(file) => {
            settings.push(("the plan's `set`".into(), plan::scalars(&file.set)));
            options.extend(plan::scalars(&file.options));
            let instances = file.instances.as_ref().map(|spec| match spec {
                plan::InstancesSpec::Text(text) => text.clone(),
                plan::InstancesSpec::List(list) => list.join(","),
            });
            let seeds = match &file.seeds {
                None => plan::parse_seeds("3")?,
                Some(plan::SeedsSpec::Count(n)) => plan::parse_seeds(&n.to_string())?,
                Some(plan::SeedsSpec::Text(text)) => plan::parse_seeds(text)?,
                Some(plan::SeedsSpec::List(list)) => plan::parse_seeds(
                    &list
                        .iter()
                        .map(u64::to_string)
                        .collect::<Vec<_>>()
                        .join(","),
                )?,
            };
            let stacks = match &file.stacks {
                None if !file.arm.is_empty() => Some(Vec::new()),
                None => None,
                Some(plan::StacksSpec::Keyword(word)) if word == "cumulative" => None,
                Some(plan::StacksSpec::Keyword(word)) if word == "none" => Some(Vec::new()),
                Some(plan::StacksSpec::Keyword(word)) => {
                    return Err(format!(
                        "the plan's `stacks = \"{word}\"` is not `cumulative`, `none` or a list"
                    )
                    .into());
                }
                Some(plan::StacksSpec::List(list)) => Some(list.clone()),
            };
            let arms: Vec<NamedArm> = file
                .arm
                .iter()
                .map(|arm| {
                    (
                        arm.name.clone(),
                        arm.layers.clone(),
                        plan::scalars(&arm.set),
                    )
                })
                .collect();
            let sweeps: Vec<Sweep> = file
                .sweep
                .iter()
                .map(|(name, values)| (name.clone(), values.iter().map(|v| v.text()).collect()))
                .collect();
            (
                instances,
                seeds,
                file.replicates.unwrap_or(1),
                stacks,
                file.removals,
                arms,
                sweeps,
            )
        }
        None => (
            request.instances.clone(),
            plan::parse_seeds(request.seeds.as_deref().unwrap_or("3"))?,
            request.replicates.unwrap_or(1),
            request.stacks.clone(),
            request.removals,
            request
                .arms
                .iter()
                .map(|(name, layers)| (name.clone(), layers.clone(), Vec::new()))
                .collect(),
            request.sweeps.clone(),
        ),
    };
    if replicates == 0 {
        return Err("--replicates must be at least 1".to_string().into());
    }
    for table in &request.frozen {
        table.check(&seeds)?;
    }
    let sources_settings: Vec<(&str, Vec<(String, String)>)> = settings
        .iter()
        .map(|(source, list)| (source.as_str(), list.clone()))
        .collect();
    let settings = plan::merge_settings(&sources_settings)?;
    for (name, _) in &request.set_json {
        if settings.iter().any(|(n, _)| n == name) {
            return Err(format!("`{name}` is set both as text and with --set-json").into());
        }
    }
    let (instances, game_options) =
        plan::instances_and_options(&manifest, instances_spec.as_deref(), &options)?;

    let mut base: Vec<Arm> = plan::cumulative(&program);
    if removals {
        base.extend(plan::removals(&program));
    }
    if let Some(wanted) = &stacks {
        let names: Vec<String> = plan::cumulative(&program)
            .into_iter()
            .chain(plan::removals(&program))
            .map(|arm| arm.name)
            .collect();
        if let Some(unknown) = wanted.iter().find(|name| !names.contains(name)) {
            return Err(format!(
                "unknown stack `{unknown}`; the stacks are {}",
                names.join(", ")
            )
            .into());
        }
        base = plan::cumulative(&program)
            .into_iter()
            .chain(plan::removals(&program))
            .filter(|arm| wanted.contains(&arm.name))
            .collect();
    }
    for (name, layers, set) in &arms {
        let mut arm = plan::named(&program, name, layers)?;
        arm.set = set.clone();
        base.push(arm);
    }
    if base.is_empty() {
        return Err(
            "the plan has no arm: name stacks with --stacks or layer sets with --arm"
                .to_string()
                .into(),
        );
    }
    let arms = plan::cross(base, &sweeps)?;
    check_names(&arms)?;
    for (treatment, baseline) in &request.contrasts {
        for name in [treatment, baseline] {
            if !arms.iter().any(|arm| &arm.name == name) {
                return Err(format!(
                    "--contrast {treatment}:{baseline} names arm `{name}`, which the plan does not \
                     have; its arms are {}",
                    arms.iter()
                        .map(|a| a.name.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                )
                .into());
            }
        }
    }
    let plan = Plan {
        arms,
        instances,
        seeds,
        replicates,
        contrasts: request.contrasts.clone(),
    };
    let llm = hooks.prepare(&program)?;
    let experiment = Experiment::new(
        program.clone(),
        kind.clone(),
        game_options.clone(),
        sources.file_table(&program),
        plan.clone(),
        &settings,
        &request.set_json,
        Limits::default(),
    )?;
    let id = match &request.run_id {
        Some(id) => checked_run_id(id)?,
        None if request.shard.is_some() => {
            return Err(
                "--shard needs --run-id NAME: the shards of a run share its folder"
                    .to_string()
                    .into(),
            );
        }
        None => free_run_id(
            &request.out,
            &run_id(&program.module, &settings, &plan, request.now),
        ),
    };
    let folder_manifest = Manifest {
        format: FORMAT.into(),
        run_id: id,
        created: timestamp(request.now),
        program_version: env!("CARGO_PKG_VERSION").into(),
        git_commit: request.git_commit.clone(),
        harness: sources.name.clone(),
        harness_hash: sources.hash(),
        module: program.module.clone(),
        game: kind.name().to_string(),
        game_options: game_options.pairs(),
        metrics: manifest.metrics.clone(),
        plan,
        settings,
        set_json: request.set_json.clone(),
        effective: experiment.effective(),
        llm,
        tags: request.tags.clone(),
    };
    std::fs::create_dir_all(&request.out)
        .map_err(|error| format!("cannot create {}: {error}", request.out.display()))?;
    let folder = if request.shard.is_some() {
        RunFolder::create_or_join(&request.out, folder_manifest)
    } else {
        RunFolder::create(&request.out, folder_manifest)
    }
    .map_err(|e| e.to_string())?;
    Ok((folder, experiment))
}

/// Reopens an interrupted run: the plan and settings come from its manifest; the harness must
/// be unchanged and the LLM configuration the same.
fn resume(
    registry: &Registry,
    hooks: &dyn Hooks,
    dir: &std::path::Path,
) -> Result<(RunFolder, Experiment), AblateError> {
    let folder = RunFolder::open(dir).map_err(|error| error.to_string())?;
    let manifest = folder.manifest().clone();
    let sources = Sources::load(Some(&manifest.harness))?;
    if sources.hash() != manifest.harness_hash {
        return Err(format!(
            "the harness under {} changed since the run started; start a new run instead of resuming",
            manifest.harness
        )
        .into());
    }
    let program = compile(registry, &sources, Some(&manifest.module))?;
    let llm = hooks.prepare(&program)?;
    if llm != manifest.llm {
        let show = |llm: &Option<serde_json::Value>| {
            llm.as_ref()
                .map_or("no LLM".to_string(), |value| value.to_string())
        };
        return Err(format!(
            "the run was started with {} but is resumed with {}; resume it with the same --llm-* flags",
            show(&manifest.llm),
            show(&llm)
        )
        .into());
    }
    let kind = game_of(registry, &program)?;
    let options = kind.manifest().options(&manifest.game_options)?;
    let experiment = Experiment::new(
        program.clone(),
        kind,
        options,
        sources.file_table(&program),
        manifest.plan.clone(),
        &manifest.settings,
        &manifest.set_json,
        Limits::default(),
    )?;
    Ok((folder, experiment))
}

/// A run id given with `--run-id` names a folder: letters, digits, `.`, `-` and `_`, not
/// starting with a dot.
fn checked_run_id(id: &str) -> Result<String, String> {
    let fits = |c: char| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_');
    if id.is_empty() || id.starts_with('.') || !id.chars().all(fits) {
        return Err(format!(
            "`--run-id {id}`: a run id is a folder name of letters, digits, `.`, `-` and `_`, \
             not starting with `.`"
        ));
    }
    Ok(id.to_string())
}

/// Arm names must be unique, and so must the file names made from them.
fn check_names(arms: &[Arm]) -> Result<(), String> {
    for (i, a) in arms.iter().enumerate() {
        for b in &arms[..i] {
            if a.name == b.name {
                return Err(format!("two arms are called `{}`", a.name));
            }
            if slug(&a.name) == slug(&b.name) {
                return Err(format!(
                    "arms `{}` and `{}` would share the folder name `{}`; rename one",
                    b.name,
                    a.name,
                    slug(&a.name)
                ));
            }
        }
    }
    Ok(())
}

/// A run id from the time, the harness and the plan: `YYYYMMDD-HHMMSS__<harness>__<hash>`.
fn run_id(module: &str, settings: &[(String, String)], plan: &Plan, now: u64) -> String {
    use sha2::{Digest, Sha256};
    let mut hasher = Sha256::new();
    for (key, value) in settings {
        hasher.update(format!("{key}={value};").as_bytes());
    }
    hasher.update(serde_json::to_string(plan).unwrap_or_default().as_bytes());
    let digest = load::hex(&hasher.finalize()[..3]);
    let stamp = timestamp(now);
    // 2026-12-01T22:35:48Z → 20261201-223548
    let compact: String = stamp
        .chars()
        .filter(|c| c.is_ascii_digit() || *c == 'T')
        .map(|c| if c == 'T' { '-' } else { c })
        .collect();
    format!("{compact}__{}__{digest}", slug(module))
}

/// `base`, or `base-2`, `base-3`... when a run with that id exists already (two runs started in
/// the same second with the same settings).
fn free_run_id(out: &std::path::Path, base: &str) -> String {
    (1..)
        .map(|n| {
            if n == 1 {
                base.to_string()
            } else {
                format!("{base}-{n}")
            }
        })
        .find(|id| !out.join(id).exists())
        .unwrap_or_else(|| base.to_string())
}

/// Seconds since the epoch as `YYYY-MM-DDTHH:MM:SSZ`.
pub fn timestamp(seconds: u64) -> String {
    let (days, rest) = ((seconds / 86_400) as i64, seconds % 86_400);
    let (year, month, day) = civil_from_days(days);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        rest / 3600,
        rest % 3600 / 60,
        rest % 60
    )
}

/// The proleptic Gregorian date of a day count since 1970-01-01 (Howard Hinnant's algorithm).
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_come_from_day_counts() {
        assert_eq!(civil_from_days(0), (1970, 1, 1));
        assert_eq!(civil_from_days(20_787), (2026, 11, 30));
        assert_eq!(civil_from_days(11_016), (2000, 2, 29));
        assert_eq!(timestamp(86_400 + 3_661), "1970-01-02T01:01:01Z");
    }
}
