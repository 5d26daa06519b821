//! `harness ablate`: the flags, a progress bar, and the report printed, over
//! [`harness::ablate::ablate`].

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::{Mutex, OnceLock};

use clap::{Args, ValueEnum};
use harness::ablate::{AblateError, Hooks, Progress, Request};
use harness::games::Registry;
use harness::load::CompileError;
use harness::plan::{self, Sweep};
use harness::report;
use harness_runtime::LlmHost;
use indicatif::{ProgressBar, ProgressStyle};

use crate::{ReportFormat, llm_args, parse_setting, render};

/// `--profile`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Profile {
    /// The harness's defaults.
    Default,
    /// Sets the harness's `compat` config to true (a harness's compatibility mode with the
    /// reference implementation it reproduces).
    Compat,
}

/// The flags of `harness ablate`.
#[derive(Args, Debug)]
pub struct AblateArgs {
    /// The harness: a directory of `.harness` files or one file (default: the bundled
    /// harness of the default game, see `harness games`). Not needed with --resume.
    pub harness: Option<PathBuf>,
    /// The module to run when the harness has several top modules.
    #[arg(long)]
    pub module: Option<String>,
    /// A plan file (TOML: instances, seeds, replicates, stacks, removals, options, set, named
    /// arms and sweeps) instead of the plan flags.
    #[arg(long, conflicts_with_all = ["instances", "seeds", "replicates", "stacks", "removals", "arms", "sweeps"])]
    pub plan: Option<PathBuf>,
    /// `compat` sets the harness's `compat` config to true; `default` leaves it.
    #[arg(long, value_enum, default_value_t = Profile::Default)]
    pub profile: Profile,
    /// Shorthand for `--set belief=...`.
    #[arg(long)]
    pub belief: Option<String>,
    /// Shorthand for `--set particles=...`.
    #[arg(long)]
    pub particles: Option<u32>,
    /// The instances: a set (`harness games describe GAME` lists them), `all`, or a
    /// comma-separated list (default: the game's first set that fits the options).
    #[arg(long)]
    pub instances: Option<String>,
    /// The seeds: a count (`3` is 0, 1, 2), a range (`0..100`) or a list (`3,7,11`)
    /// [default: 3].
    #[arg(long)]
    pub seeds: Option<String>,
    /// Replicates per instance and seed (runs that differ only in what an LLM answers)
    /// [default: 1].
    #[arg(long)]
    pub replicates: Option<u32>,
    /// A game option, `NAME=VALUE` (repeatable).
    #[arg(long = "option", value_parser = parse_setting)]
    pub options: Vec<(String, String)>,
    /// Set a config parameter or a tunable's default for every arm: `--set name=value`.
    #[arg(long, value_parser = parse_setting)]
    pub set: Vec<(String, String)>,
    /// Set a structured config parameter from a JSON file: `--set-json name=FILE`.
    #[arg(long, value_parser = parse_setting)]
    pub set_json: Vec<(String, String)>,
    /// Also run every single-layer removal from the full stack.
    #[arg(long)]
    pub removals: bool,
    /// Run only these of the harness's stacks and removals, e.g. `L1,L1-L2`.
    #[arg(long, value_delimiter = ',')]
    pub stacks: Option<Vec<String>>,
    /// A named arm: `--arm NAME=LAYER,LAYER` (repeatable).
    #[arg(long = "arm", value_parser = plan::parse_arm)]
    pub arms: Vec<(String, Vec<String>)>,
    /// Contrast two arms over their common episodes, every metric: `--contrast
    /// TREATMENT:BASELINE` (repeatable).
    #[arg(long = "contrast", value_parser = parse_contrast)]
    pub contrasts: Vec<(String, String)>,
    /// Sweep a config value: `--sweep NAME=V1,V2` (repeatable; several sweeps are crossed).
    #[arg(long = "sweep", value_parser = plan::parse_sweep)]
    pub sweeps: Vec<Sweep>,
    /// `human` for tables, `json` for the report as one object, `csv` for its rows.
    #[arg(long, value_enum, default_value_t = ReportFormat::Human)]
    pub format: ReportFormat,
    /// Where run folders are created.
    #[arg(long, default_value = "results/runs")]
    pub out: PathBuf,
    /// Finish an interrupted run: its folder (the plan and settings come from its manifest).
    #[arg(long)]
    pub resume: Option<PathBuf>,
    /// Worker threads (default: one per core).
    #[arg(long)]
    pub jobs: Option<usize>,
    /// A tag recorded in the run's manifest (repeatable), for `harness runs`.
    #[arg(long = "tag")]
    pub tags: Vec<String>,
    /// The run folder's name under --out (default: made from the module, the plan and the
    /// time). The shards of one run name the same id.
    #[arg(long)]
    pub run_id: Option<String>,
    /// Run only part K of N of the plan (`--shard 2/4`), into the folder named by --run-id,
    /// which the N shards share; the last to finish writes the summary.
    #[arg(long, value_parser = plan::Shard::parse)]
    pub shard: Option<plan::Shard>,
    /// Write a Slurm job-array script that runs the plan as N shards, instead of running it.
    #[arg(long, value_name = "N", conflicts_with_all = ["shard", "resume"])]
    pub slurm: Option<usize>,
    /// Where --slurm writes its script (default: OUT/RUN-ID.sbatch).
    #[arg(long, requires = "slurm")]
    pub slurm_script: Option<PathBuf>,
    /// An extra `#SBATCH` line for --slurm, e.g. `--slurm-option=--partition=short`
    /// (repeatable).
    #[arg(long = "slurm-option", requires = "slurm", allow_hyphen_values = true)]
    pub slurm_options: Vec<String>,
    /// Exit with 0 even when some episodes ended in a runtime error.
    #[arg(long)]
    pub allow_errors: bool,
    /// Where the harness's LLM calls go.
    #[command(flatten)]
    pub llm: llm_args::LlmArgs,
}

/// The `--set-json` values as the harness receives them, and the training seeds of the
/// advantage tables among them.
pub type SetJson = (
    Vec<(String, serde_json::Value)>,
    Vec<harness::estimate::Frozen>,
);

/// Reads `--set-json name=FILE` files as JSON. An advantage table written by `harness
/// estimate` gives the harness its `advantages` map, and its training seeds, which the run's
/// seeds must avoid.
pub fn read_set_json(given: &[(String, String)]) -> Result<SetJson, String> {
    let mut values = Vec::new();
    let mut frozen = Vec::new();
    for (name, path) in given {
        let text = std::fs::read_to_string(path)
            .map_err(|error| format!("--set-json {name}={path}: cannot read it: {error}"))?;
        let value = serde_json::from_str(&text)
            .map_err(|error| format!("--set-json {name}={path}: not JSON: {error}"))?;
        let (value, table) = harness::estimate::unwrap_table(name, path, value)?;
        values.push((name.clone(), value));
        frozen.extend(table);
    }
    Ok((values, frozen))
}

/// Parses `--contrast TREATMENT:BASELINE`.
fn parse_contrast(text: &str) -> Result<(String, String), String> {
    match text.split_once(':') {
        Some((t, b)) if !t.trim().is_empty() && !b.trim().is_empty() => {
            Ok((t.trim().to_string(), b.trim().to_string()))
        }
        _ => Err(format!(
            "`{text}` is not `TREATMENT:BASELINE` (two arm names)"
        )),
    }
}

/// The request the flags describe.
fn request(args: &AblateArgs) -> Result<Request, String> {
    let plan_file = match &args.plan {
        Some(path) => Some((
            path.display().to_string(),
            std::fs::read_to_string(path)
                .map_err(|error| format!("cannot read the plan {}: {error}", path.display()))?,
        )),
        None => None,
    };
    let mut settings = Vec::new();
    if args.profile == Profile::Compat {
        settings.push((
            "--profile compat".to_string(),
            vec![("compat".to_string(), "true".to_string())],
        ));
    }
    if let Some(belief) = &args.belief {
        settings.push((
            "--belief".to_string(),
            vec![("belief".to_string(), belief.clone())],
        ));
    }
    if let Some(particles) = args.particles {
        settings.push((
            "--particles".to_string(),
            vec![("particles".to_string(), particles.to_string())],
        ));
    }
    settings.push(("--set".to_string(), args.set.clone()));
    let (set_json, frozen) = read_set_json(&args.set_json)?;
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |elapsed| elapsed.as_secs());
    Ok(Request {
        harness: args.harness.as_ref().map(|p| p.display().to_string()),
        module: args.module.clone(),
        plan_file,
        instances: args.instances.clone(),
        seeds: args.seeds.clone(),
        replicates: args.replicates,
        stacks: args.stacks.clone(),
        removals: args.removals,
        arms: args.arms.clone(),
        sweeps: args.sweeps.clone(),
        contrasts: args.contrasts.clone(),
        options: args.options.clone(),
        settings,
        set_json,
        frozen,
        out: args.out.clone(),
        resume: args.resume.clone(),
        threads: args.jobs.unwrap_or(0),
        tags: args.tags.clone(),
        run_id: args.run_id.clone(),
        shard: args.shard,
        now,
        git_commit: option_env!("HARNESS_GIT_COMMIT").map(str::to_string),
    })
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

/// The command line's side of a run: the LLM the flags configure, and a progress bar.
struct CliHooks<'a> {
    llm: &'a llm_args::LlmArgs,
    setup: OnceLock<Option<llm_args::LlmSetup>>,
    bar: Mutex<Option<ProgressBar>>,
    quiet: bool,
}

impl Hooks for CliHooks<'_> {
    fn prepare(
        &self,
        program: &harness_compiler::ir::Program,
    ) -> Result<Option<serde_json::Value>, String> {
        // Every LLM setting is checked (and the server probed) before the folder is made.
        let setup = self.llm.setup(program)?;
        for warning in setup.iter().flat_map(|setup| setup.warnings()) {
            eprintln!("warning: {warning}");
        }
        let settings = setup
            .as_ref()
            .map(|setup| serde_json::to_value(setup.settings()))
            .transpose()
            .map_err(|error| error.to_string())?;
        let _ = self.setup.set(setup);
        Ok(settings)
    }

    fn llm(&self, unit: &harness::plan::Unit) -> Option<Box<dyn LlmHost>> {
        let setup = self.setup.get()?.as_ref()?;
        Some(Box::new(setup.host(unit.llm_replicate())))
    }

    fn progress(&self, event: Progress<'_>) {
        let Ok(mut bar) = self.bar.lock() else {
            return;
        };
        match event {
            Progress::Start {
                folder,
                planned,
                finished,
            } => {
                if !self.quiet {
                    eprintln!(
                        "run {}: {planned} episodes ({finished} already finished) in {}",
                        folder.manifest().run_id,
                        folder.root().display()
                    );
                }
                let progress = ProgressBar::new((planned - finished) as u64);
                progress.set_style(
                    ProgressStyle::with_template(
                        "{bar:40} {pos}/{len} episodes  {elapsed_precise} (eta {eta})",
                    )
                    .unwrap_or_else(|_| ProgressStyle::default_bar()),
                );
                *bar = Some(progress);
            }
            Progress::Finished(_) => {
                if let Some(bar) = bar.as_ref() {
                    bar.inc(1);
                }
            }
        }
    }
}

/// `--slurm N`: writes the job-array script and says how to submit it.
fn write_slurm_script(args: &AblateArgs, shards: usize) -> Result<ExitCode, String> {
    if shards == 0 {
        return Err("--slurm needs at least 1 shard".into());
    }
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |elapsed| elapsed.as_secs());
    let run_id = match &args.run_id {
        Some(id) => id.clone(),
        None => format!(
            "slurm-{}",
            harness::ablate::timestamp(now).replace(['-', ':'], "")
        ),
    };
    let all: Vec<String> = std::env::args().collect();
    let after = all
        .iter()
        .position(|arg| arg == "ablate")
        .map_or(all.len(), |i| i + 1);
    let program = std::env::current_exe()
        .map_err(|error| format!("cannot find this program's path: {error}"))?;
    let workdir = std::env::current_dir()
        .map_err(|error| format!("cannot read the current directory: {error}"))?;
    let job = harness::slurm::JobArray {
        run_id: run_id.clone(),
        shards,
        workdir: workdir.display().to_string(),
        program: program.display().to_string(),
        args: harness::slurm::forwarded_args(&all[after..]),
        out: args.out.display().to_string(),
        options: args.slurm_options.clone(),
    };
    let path = args
        .slurm_script
        .clone()
        .unwrap_or_else(|| args.out.join(format!("{run_id}.sbatch")));
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent)
            .map_err(|error| format!("cannot create {}: {error}", parent.display()))?;
    }
    std::fs::create_dir_all(&args.out)
        .map_err(|error| format!("cannot create {}: {error}", args.out.display()))?;
    std::fs::write(&path, harness::slurm::script(&job))
        .map_err(|error| format!("cannot write {}: {error}", path.display()))?;
    println!(
        "wrote {}: {shards} shards of run {run_id}\nsubmit it with `sbatch {}`; when they are \
         done, `harness lens run {}` reports the whole run",
        path.display(),
        path.display(),
        args.out.join(&run_id).display()
    );
    Ok(ExitCode::SUCCESS)
}

fn run_inner(args: &AblateArgs) -> Result<ExitCode, String> {
    if let Some(shards) = args.slurm {
        return write_slurm_script(args, shards);
    }
    let request = request(args)?;
    let hooks = CliHooks {
        llm: &args.llm,
        setup: OnceLock::new(),
        bar: Mutex::new(None),
        quiet: args.format != ReportFormat::Human,
    };
    let registry = Registry::standard();
    let outcome = harness::ablate::ablate(&registry, &request, &hooks);
    if let Ok(Some(bar)) = hooks.bar.lock().map(|mut bar| bar.take()) {
        bar.finish_and_clear();
    }
    for note in hooks
        .setup
        .get()
        .into_iter()
        .flatten()
        .flat_map(|setup| setup.notes())
    {
        eprintln!("note: {note}");
    }
    let outcome = match outcome {
        Ok(outcome) => outcome,
        Err(AblateError::Compile(CompileError::Diagnostics(diagnostics), sources)) => {
            // A tool that asked for JSON gets the diagnostics as `check --format json` gives them.
            match args.format {
                ReportFormat::Json => println!("{}", render::json(&diagnostics)),
                ReportFormat::Human | ReportFormat::Csv => {
                    render::human(&diagnostics, sources.files.len());
                }
            }
            return Err("the harness has errors; fix them and run again".into());
        }
        Err(error) => return Err(error.to_string()),
    };
    if let Some(shard) = args.shard
        && !outcome.missing.is_empty()
        && !hooks.quiet
    {
        eprintln!(
            "shard {shard} is done; {} episodes of the plan are not finished yet (other \
             shards); the table covers those that are",
            outcome.missing.len()
        );
    }
    match args.format {
        ReportFormat::Human => print!("{}", report::table(&outcome.report)),
        ReportFormat::Json => println!(
            "{}",
            serde_json::to_string_pretty(&outcome.report).map_err(|error| error.to_string())?
        ),
        ReportFormat::Csv => print!("{}", report::csv(&outcome.report)),
    }
    if !outcome.report.failures.is_empty() && !args.allow_errors {
        eprintln!(
            "error: {} episodes ended in a runtime error (listed above; all are in {}); fix the \
             harness, or pass --allow-errors to accept them",
            outcome.report.failures.len(),
            outcome.folder.root().display()
        );
        return Ok(ExitCode::FAILURE);
    }
    Ok(ExitCode::SUCCESS)
}
