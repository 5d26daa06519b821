//! `harness ablate`: run a harness's layer stacks over a suite of game instances and report what
//! each layer is worth.
//!
//! The cumulative stacks are the first layer, the first two, and so on up to all of them; with
//! `--removals`, every single-layer removal from the full stack is run too. Games run in parallel
//! on all cores. Every finished game is written to the run's result folder at once, so an
//! interrupted run resumes (`--resume DIR`) without redoing or losing a finished game.

use std::fmt::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;

use harness_battleship::Protocol;
use harness_compiler::ir::Program;
use harness_runtime::{
    EndReason, EpisodeResult, EventKind, GameKind, Limits, LlmCallLog, LlmHost, Machine,
    RngStreams, Switches, Value, run_episode_with_llm, to_json_lines,
};
use harness_stdlib::ablation::{self, GameOutcome, RankDisagreement, StackRow, Verdict};
use indicatif::{ProgressBar, ProgressStyle};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::games;
use crate::results::{FORMAT, Manifest, RunFolder, StackSpec, slug};

/// What `harness ablate` was asked to do.
pub struct AblateArgs {
    /// The harness: a `.harness` file or a directory of them; the bundled Battleship harness
    /// when absent.
    pub harness: Option<PathBuf>,
    /// The module to run, when the harness has several roots.
    pub module: Option<String>,
    /// `--profile compat` sets the harness's `compat` configuration to true.
    pub compat: bool,
    /// The Battleship protocol.
    pub protocol: Protocol,
    /// The belief backend (`--belief`), passed as the `belief` configuration.
    pub belief: Option<String>,
    /// Samples of the belief (`--particles`), passed as the `particles` configuration.
    pub particles: Option<u32>,
    /// `all` or a comma-separated list of instances.
    pub boards: String,
    /// Replicates per instance.
    pub seeds: u32,
    /// Further `--set name=value` settings.
    pub set: Vec<(String, String)>,
    /// Also run every single-layer removal.
    pub removals: bool,
    /// Run only these stacks (by name, e.g. `L1,L1-L2`).
    pub stacks: Option<Vec<String>>,
    /// Print JSON instead of tables.
    pub json: bool,
    /// Where run folders are created.
    pub out: PathBuf,
    /// Finish this interrupted run instead of starting a new one.
    pub resume: Option<PathBuf>,
    /// Worker threads (default: all cores).
    pub jobs: Option<usize>,
    /// Where LLM calls go.
    pub llm: crate::llm_args::LlmArgs,
}

/// One finished game as stored in the result folder.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct GameRecord {
    /// The stack's name.
    pub stack: String,
    /// The game instance.
    pub instance: String,
    /// The replicate index.
    pub seed_index: u32,
    /// What the report needs of the game.
    pub outcome: GameOutcome,
    /// How the episode ended: `game_over`, `turn_limit` or `error`.
    pub end: String,
    /// The runtime error that ended it, if any.
    pub error: Option<String>,
}

/// The report of a run, as printed with `--format json` and stored as `summary.json`.
#[derive(Clone, Debug, Serialize)]
pub struct Report {
    /// The run's id.
    pub run_id: String,
    /// The harness module that ran.
    pub harness: String,
    /// The settings of the run.
    pub settings: Vec<(String, String)>,
    /// The cumulative stacks, bottom first, each with its marginal over the one before.
    pub rows: Vec<StackRow>,
    /// The single-layer removals, each with the full stack's advantage over it.
    pub removals: Vec<StackRow>,
    /// The heavy-lifting verdict over the cumulative marginals.
    pub verdict: Verdict,
    /// Pairs of layers that win rate and F1 rank differently.
    pub disagreements: Vec<RankDisagreement>,
    /// Games that ended in a runtime error, as `stack instance seed: message`.
    pub failures: Vec<String>,
}

/// Runs the command.
pub fn run(args: &AblateArgs) -> ExitCode {
    match run_inner(args) {
        Ok(code) => code,
        Err(message) => {
            eprintln!("error: {message}");
            ExitCode::FAILURE
        }
    }
}

/// A stack to run: its name and enabled layers.
fn stacks(program: &Program, removals: bool) -> Vec<(StackSpec, bool)> {
    let names: Vec<String> = program
        .layers
        .iter()
        .map(|layer| layer.name.clone())
        .collect();
    let mut out: Vec<(StackSpec, bool)> = (1..=names.len())
        .map(|n| {
            let name = if n == 1 {
                "L1".to_string()
            } else {
                format!("L1-L{n}")
            };
            (
                StackSpec {
                    name,
                    layers: names[..n].to_vec(),
                },
                true,
            )
        })
        .collect();
    if removals && names.len() > 1 {
        for (index, removed) in names.iter().enumerate() {
            // Removing a layer also removes every layer that needs it, as a switch would.
            let layers: Vec<String> = program
                .layers
                .iter()
                .enumerate()
                .filter(|(i, layer)| {
                    *i != index && !layer.below.iter().any(|below| below.index() == index)
                })
                .map(|(_, layer)| layer.name.clone())
                .collect();
            // Removing a layer that every other layer builds on leaves nothing to run.
            if layers.is_empty() {
                continue;
            }
            out.push((
                StackSpec {
                    name: format!("without {removed}"),
                    layers,
                },
                false,
            ));
        }
    }
    out
}

/// The game kind a program plays.
fn game_kind(program: &Program, protocol: Protocol) -> Result<Box<dyn GameKind>, String> {
    let name = program
        .game
        .as_deref()
        .ok_or_else(|| format!("`{}` names no game (`use game NAME`)", program.module))?;
    games::game_kind(name, protocol)
}

/// SHA-256 over the paths and texts, in order.
fn source_hash(sources: &[(String, String)]) -> String {
    let mut hasher = Sha256::new();
    for (path, text) in sources {
        hasher.update(path.as_bytes());
        hasher.update([0]);
        hasher.update(text.as_bytes());
        hasher.update([0]);
    }
    hasher
        .finalize()
        .iter()
        .map(|byte| format!("{byte:02x}"))
        .collect()
}

fn run_inner(args: &AblateArgs) -> Result<ExitCode, String> {
    let (folder, manifest) = match &args.resume {
        Some(dir) => {
            let folder = RunFolder::open(dir).map_err(|error| error.to_string())?;
            let manifest = folder.manifest().clone();
            (Some(folder), Some(manifest))
        }
        None => (None, None),
    };
    let harness = match (&manifest, &args.harness) {
        (Some(manifest), _) => manifest.harness.clone(),
        (None, Some(path)) => path.display().to_string(),
        (None, None) => games::EMBEDDED_BATTLESHIP.to_string(),
    };
    let sources = games::sources_of(&harness)?;
    let hash = source_hash(&sources);
    let settings = match &manifest {
        Some(manifest) => {
            if manifest.harness_hash != hash {
                return Err(format!(
                    "the harness under {harness} changed since the run started; start a new run instead of resuming"
                ));
            }
            manifest.settings.clone()
        }
        None => settings(args),
    };
    let setting = |name: &str| {
        settings
            .iter()
            .find(|(key, _)| key == name)
            .map(|(_, value)| value.clone())
    };
    let module = setting("module");
    let program = games::compile(&sources, module.as_deref())?;
    let protocol = match setting("protocol").as_deref() {
        Some("grand") => Protocol::Grand,
        _ => Protocol::Paper,
    };
    let kind = game_kind(&program, protocol)?;
    let known = kind.instances();
    let instances = match &manifest {
        Some(manifest) => manifest.instances.clone(),
        None => instances(&args.boards, &known)?,
    };
    let seeds = manifest
        .as_ref()
        .map_or(args.seeds, |manifest| manifest.seeds);
    if seeds == 0 {
        return Err("--seeds must be at least 1".into());
    }
    let stack_specs: Vec<(StackSpec, bool)> = match &manifest {
        Some(manifest) => {
            let cumulative = stacks(&program, false).len();
            manifest
                .stacks
                .iter()
                .enumerate()
                .map(|(i, spec)| (spec.clone(), i < cumulative))
                .collect()
        }
        None => {
            let all = stacks(&program, args.removals);
            match &args.stacks {
                None => all,
                Some(wanted) => {
                    let names: Vec<&str> = all.iter().map(|(spec, _)| spec.name.as_str()).collect();
                    if let Some(unknown) =
                        wanted.iter().find(|name| !names.contains(&name.as_str()))
                    {
                        return Err(format!(
                            "unknown stack `{unknown}` in --stacks; the stacks are {}",
                            names.join(", ")
                        ));
                    }
                    all.into_iter()
                        .filter(|(spec, _)| wanted.contains(&spec.name))
                        .collect()
                }
            }
        }
    };
    let overrides: Vec<(String, String)> = settings
        .iter()
        .filter(|(key, _)| !matches!(key.as_str(), "module" | "protocol"))
        .cloned()
        .collect();

    let mut natives = harness_stdlib::prelude::natives();
    natives.extend(&kind.natives());
    let mut machines = Vec::new();
    for (spec, _) in &stack_specs {
        let switches = Switches {
            layers: Some(spec.layers.clone()),
            without: Vec::new(),
            set: overrides.clone(),
        };
        let machine = Machine::new(
            program.clone(),
            natives.clone(),
            &switches,
            Limits::default(),
        )
        .map_err(|error| format!("stack {}: {}", spec.name, error.message))?;
        machines.push(machine);
    }

    // Every LLM setting is checked (and the server probed) before the folder is made.
    let llm = args.llm.setup(&program)?;
    for warning in llm.iter().flat_map(|setup| setup.warnings()) {
        eprintln!("warning: {warning}");
    }

    let folder = match folder {
        Some(folder) => folder,
        None => {
            let manifest = Manifest {
                format: FORMAT.into(),
                run_id: free_run_id(&args.out, &run_id(&program.module, &settings)),
                program_version: env!("CARGO_PKG_VERSION").into(),
                harness: harness.clone(),
                harness_hash: hash,
                game: program.game.clone().unwrap_or_default(),
                stacks: stack_specs.iter().map(|(spec, _)| spec.clone()).collect(),
                instances: instances.clone(),
                seeds,
                settings: settings.clone(),
            };
            std::fs::create_dir_all(&args.out)
                .map_err(|error| format!("cannot create {}: {error}", args.out.display()))?;
            RunFolder::create(&args.out, manifest).map_err(|error| error.to_string())?
        }
    };

    let jobs: Vec<(usize, String, u32)> = (0..stack_specs.len())
        .flat_map(|stack| {
            instances.iter().flat_map(move |instance| {
                (0..seeds).map(move |seed| (stack, instance.clone(), seed))
            })
        })
        .collect();
    let mut pending = Vec::new();
    for job in &jobs {
        let (stack, instance, seed) = job;
        let done: Option<GameRecord> = folder
            .finished_game(&stack_specs[*stack].0.name, instance, *seed)
            .map_err(|error| error.to_string())?;
        if done.is_none() {
            pending.push(job.clone());
        }
    }
    if !args.json {
        eprintln!(
            "run {}: {} games ({} already finished) in {}",
            folder.manifest().run_id,
            jobs.len(),
            jobs.len() - pending.len(),
            folder.root().display()
        );
    }

    let progress = ProgressBar::new(pending.len() as u64);
    progress.set_style(
        ProgressStyle::with_template("{bar:40} {pos}/{len} games  {elapsed_precise} (eta {eta})")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(args.jobs.unwrap_or(0))
        .build()
        .map_err(|error| format!("cannot start the worker threads: {error}"))?;
    let written: Result<(), String> = pool.install(|| {
        pending.par_iter().try_for_each(|(stack, instance, seed)| {
            let name = &stack_specs[*stack].0.name;
            // One host per game: its per-game budget counts this game's calls only.
            let host = crate::llm_args::host(&llm, u64::from(*seed));
            let host = host.as_ref().map(|h| h as &dyn LlmHost);
            let (record, trace, calls) = play(
                &machines[*stack],
                kind.as_ref(),
                host,
                name,
                instance,
                *seed,
            );
            if !calls.is_empty() {
                folder
                    .record_llm_calls(name, instance, *seed, &calls)
                    .map_err(|error| error.to_string())?;
            }
            folder
                .record_game(name, instance, *seed, &record, &trace)
                .map_err(|error| error.to_string())?;
            progress.inc(1);
            Ok(())
        })
    });
    progress.finish_and_clear();
    written?;

    let mut records = Vec::new();
    for (stack, instance, seed) in &jobs {
        let record: GameRecord = folder
            .finished_game(&stack_specs[*stack].0.name, instance, *seed)
            .map_err(|error| error.to_string())?
            .ok_or_else(|| format!("game {instance} seed {seed} is missing after the run"))?;
        records.push(record);
    }
    folder
        .write_games_index(&records)
        .map_err(|error| error.to_string())?;
    let report = report(folder.manifest(), &program.module, &stack_specs, &records);
    folder
        .write_summary(&report)
        .map_err(|error| error.to_string())?;
    if args.json {
        println!(
            "{}",
            serde_json::to_string_pretty(&report).map_err(|error| error.to_string())?
        );
    } else {
        print!("{}", table(&report));
    }
    Ok(ExitCode::SUCCESS)
}

/// The settings recorded in the manifest: everything that changes what a game does.
fn settings(args: &AblateArgs) -> Vec<(String, String)> {
    let mut settings = Vec::new();
    if let Some(module) = &args.module {
        settings.push(("module".to_string(), module.clone()));
    }
    settings.push((
        "protocol".to_string(),
        match args.protocol {
            Protocol::Paper => "paper".to_string(),
            Protocol::Grand => "grand".to_string(),
        },
    ));
    if args.compat {
        settings.push(("compat".to_string(), "true".to_string()));
    }
    if let Some(belief) = &args.belief {
        settings.push(("belief".to_string(), belief.clone()));
    }
    if let Some(particles) = args.particles {
        settings.push(("particles".to_string(), particles.to_string()));
    }
    settings.extend(args.set.iter().cloned());
    settings
}

/// Resolves `--boards`: `all`, or a comma-separated list of known instances.
fn instances(boards: &str, known: &[String]) -> Result<Vec<String>, String> {
    if boards.trim() == "all" {
        return Ok(known.to_vec());
    }
    let mut out = Vec::new();
    for name in boards
        .split(',')
        .map(str::trim)
        .filter(|name| !name.is_empty())
    {
        let found = known
            .iter()
            .find(|known| known.eq_ignore_ascii_case(name))
            .ok_or_else(|| {
                format!(
                    "unknown board `{name}` in --boards; the boards are {} (or `all`)",
                    known.join(", ")
                )
            })?;
        if !out.contains(found) {
            out.push(found.clone());
        }
    }
    if out.is_empty() {
        return Err("--boards names no board; use `all` or a list such as B01,B07".into());
    }
    Ok(out)
}

/// A run id from the time, the harness and the settings: `YYYYMMDD-HHMMSS__<harness>__<hash>`.
fn run_id(module: &str, settings: &[(String, String)]) -> String {
    let seconds = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |elapsed| elapsed.as_secs());
    let (days, rest) = ((seconds / 86_400) as i64, seconds % 86_400);
    let (year, month, day) = civil_from_days(days);
    let mut hasher = Sha256::new();
    for (key, value) in settings {
        hasher.update(format!("{key}={value};").as_bytes());
    }
    let digest: String = hasher
        .finalize()
        .iter()
        .take(3)
        .map(|byte| format!("{byte:02x}"))
        .collect();
    format!(
        "{year:04}{month:02}{day:02}-{:02}{:02}{:02}__{}__{digest}",
        rest / 3600,
        rest % 3600 / 60,
        rest % 60,
        slug(module)
    )
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

/// Plays one game and returns its record and its trace.
fn play(
    machine: &Machine,
    kind: &dyn GameKind,
    llm: Option<&dyn LlmHost>,
    stack: &str,
    instance: &str,
    seed: u32,
) -> (GameRecord, String, Vec<LlmCallLog>) {
    let result = match kind.start(instance, &RngStreams::new(u64::from(seed))) {
        Ok(mut game) => run_episode_with_llm(machine, game.as_mut(), llm),
        Err(message) => {
            let record = GameRecord {
                stack: stack.to_string(),
                instance: instance.to_string(),
                seed_index: seed,
                outcome: GameOutcome {
                    instance: instance.to_string(),
                    seed_index: seed,
                    won: false,
                    f1: 0.0,
                    shots: 0,
                    questions: 0,
                    revisions: 0,
                    llm_turns: 0,
                    turns: 0,
                },
                end: "error".into(),
                error: Some(message),
            };
            return (record, String::new(), Vec::new());
        }
    };
    let record = GameRecord {
        stack: stack.to_string(),
        instance: instance.to_string(),
        seed_index: seed,
        outcome: outcome(instance, seed, &result),
        end: match result.end {
            EndReason::GameOver => "game_over",
            EndReason::TurnLimit => "turn_limit",
            EndReason::Error => "error",
        }
        .to_string(),
        error: result
            .error
            .as_ref()
            .map(|error| format!("{}: {}", error.code, error.message)),
    };
    (record, to_json_lines(&result.events), result.llm_calls)
}

/// What the report needs of an episode: its metrics and counts of its events.
fn outcome(instance: &str, seed: u32, result: &EpisodeResult) -> GameOutcome {
    let metric = |name: &str| result.metrics.get(name);
    let count = |name: &str| match metric(name) {
        Some(Value::Int(n)) => u32::try_from(*n).unwrap_or(0),
        _ => 0,
    };
    // A revision changes several tunables at once; it counts once per turn and layer.
    let mut revised: Vec<(u32, Option<&str>)> = result
        .events
        .iter()
        .filter(|event| matches!(event.kind, EventKind::Revision { .. }))
        .map(|event| (event.turn, event.layer.as_deref()))
        .collect();
    revised.dedup();
    let mut llm_turns: Vec<u32> = result
        .events
        .iter()
        .filter(|event| matches!(event.kind, EventKind::LlmCall { .. }))
        .map(|event| event.turn)
        .collect();
    llm_turns.dedup();
    GameOutcome {
        instance: instance.to_string(),
        seed_index: seed,
        won: matches!(metric("won"), Some(Value::Bool(true))),
        f1: metric("f1").and_then(Value::as_f64).unwrap_or(0.0),
        shots: count("shots"),
        questions: count("questions"),
        revisions: revised.len() as u32,
        llm_turns: llm_turns.len() as u32,
        turns: result.turns,
    }
}

/// Builds the report from the records, in the manifest's order. `harness` names the module that
/// ran; each stack is paired with whether it is cumulative (as opposed to a removal).
pub fn report(
    manifest: &Manifest,
    harness: &str,
    stacks: &[(StackSpec, bool)],
    records: &[GameRecord],
) -> Report {
    let rows_of = |cumulative: bool| -> Vec<StackRow> {
        stacks
            .iter()
            .filter(|(_, is_cumulative)| *is_cumulative == cumulative)
            .map(|(spec, _)| {
                let outcomes: Vec<GameOutcome> = records
                    .iter()
                    .filter(|record| record.stack == spec.name)
                    .map(|record| record.outcome.clone())
                    .collect();
                ablation::row(&spec.name, &spec.layers, &outcomes)
            })
            .collect()
    };
    let mut rows = rows_of(true);
    ablation::add_marginals(&mut rows);
    let mut removals = rows_of(false);
    if let Some(full) = rows.last() {
        for row in &mut removals {
            let removed = row.stack.trim_start_matches("without ").to_string();
            row.marginal = Some(ablation::Marginal {
                layer: removed,
                win_rate: full.win_rate - row.win_rate,
                f1: full.f1_mean - row.f1_mean,
            });
        }
    }
    let verdict = ablation::verdict(&rows);
    let disagreements = ablation::rank_disagreements(&rows);
    let failures = records
        .iter()
        .filter_map(|record| {
            record.error.as_ref().map(|error| {
                format!(
                    "{} {} seed {}: {error}",
                    record.stack, record.instance, record.seed_index
                )
            })
        })
        .collect();
    Report {
        run_id: manifest.run_id.clone(),
        harness: harness.to_string(),
        settings: manifest.settings.clone(),
        rows,
        removals,
        verdict,
        disagreements,
        failures,
    }
}

fn percent(x: f64) -> String {
    format!("{:.1}", x * 100.0)
}

/// The report as tables for the terminal.
pub fn table(report: &Report) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "harness {}   run {}", report.harness, report.run_id);
    let settings: Vec<String> = report
        .settings
        .iter()
        .map(|(key, value)| format!("{key}={value}"))
        .collect();
    let _ = writeln!(out, "settings: {}\n", settings.join(" "));
    let header = format!(
        "{:<22} {:>5} {:>5}  {:<21} {:<21} {:>6} {:>6} {:>6} {:>6}  {:>8} {:>8}",
        "stack",
        "games",
        "wins",
        "win rate [95% CI]",
        "F1 [95% CI]",
        "shots",
        "quest",
        "revis",
        "llm",
        "Δwin pp",
        "ΔF1"
    );
    let line = |out: &mut String, row: &StackRow| {
        let (delta_win, delta_f1) =
            row.marginal
                .as_ref()
                .map_or((String::from("—"), String::from("—")), |m| {
                    (
                        format!("{:+.1}", m.win_rate * 100.0),
                        format!("{:+.4}", m.f1),
                    )
                });
        let _ = writeln!(
            out,
            "{:<22} {:>5} {:>5}  {:<21} {:<21} {:>6.1} {:>6.2} {:>6.2} {:>5.1}%  {:>8} {:>8}",
            row.stack,
            row.games,
            row.wins,
            format!(
                "{}% [{}, {}]",
                percent(row.win_rate),
                percent(row.win_rate_ci.lo),
                percent(row.win_rate_ci.hi)
            ),
            format!(
                "{:.4} [{:.3}, {:.3}]",
                row.f1_mean, row.f1_ci.lo, row.f1_ci.hi
            ),
            row.shots_per_game,
            row.questions_per_game,
            row.revisions_per_game,
            row.llm_rate * 100.0,
            delta_win,
            delta_f1,
        );
    };
    let _ = writeln!(
        out,
        "cumulative stacks (Δ: marginal of the layer the row adds)"
    );
    let _ = writeln!(out, "{header}");
    for row in &report.rows {
        line(&mut out, row);
    }
    for row in &report.rows {
        let _ = writeln!(out, "  {:<20} = {}", row.stack, row.layers.join(" + "));
    }
    if !report.removals.is_empty() {
        let _ = writeln!(
            out,
            "\nsingle-layer removals (Δ: what the full stack gains over the row)"
        );
        let _ = writeln!(out, "{header}");
        for row in &report.removals {
            line(&mut out, row);
        }
    }
    let _ = writeln!(out);
    match &report.verdict {
        Verdict::HeavyLifting { layer, win_rate } => {
            let _ = writeln!(
                out,
                "heavy lifting: `{layer}` has the single largest positive marginal on win rate ({:+.1} pp)",
                win_rate * 100.0
            );
        }
        Verdict::NoPositiveMarginal => {
            let _ = writeln!(
                out,
                "heavy lifting: no layer has a positive marginal on win rate"
            );
        }
        Verdict::Tie { layers, win_rate } => {
            let _ = writeln!(
                out,
                "heavy lifting: none; {} tie for the largest marginal ({:+.1} pp)",
                layers.join(", "),
                win_rate * 100.0
            );
        }
    }
    if report.disagreements.is_empty() {
        let _ = writeln!(
            out,
            "win rate and F1 rank the layers' marginals the same way"
        );
    }
    for disagreement in &report.disagreements {
        let _ = writeln!(
            out,
            "metrics disagree: win rate ranks `{}` above `{}`, F1 the other way round",
            disagreement.by_win_rate, disagreement.by_f1
        );
    }
    if !report.failures.is_empty() {
        let _ = writeln!(
            out,
            "\n{} games ended in a runtime error:",
            report.failures.len()
        );
        for failure in report.failures.iter().take(10) {
            let _ = writeln!(out, "  {failure}");
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn board_lists_are_validated() {
        let known: Vec<String> = ["B01", "B02", "B03"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        assert_eq!(instances("all", &known).unwrap(), known);
        assert_eq!(
            instances("b02, B01,B02", &known).unwrap(),
            vec!["B02", "B01"]
        );
        let error = instances("B1", &known).unwrap_err();
        assert!(error.contains("unknown board `B1`"), "{error}");
        assert!(instances(" , ", &known).is_err());
    }

    #[test]
    fn dates_come_from_day_counts() {
        assert_eq!(civil_from_days(0), (1970, 1, 1));
        assert_eq!(civil_from_days(20_787), (2026, 11, 30));
        assert_eq!(civil_from_days(11_016), (2000, 2, 29));
    }
}
