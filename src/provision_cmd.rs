//! `harness map` and `harness provision`: the flags, and the map or policy table printed as
//! text or JSON, over [`harness::provision`].

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;
use harness::games::Registry;
use harness::provision::{self, Columns, MapReport};
use harness_stdlib::provision::Policy;

use crate::Format;
use crate::figure::{self, FigureArgs};

/// Which metrics and instance sets of the run play which part.
#[derive(Args, Debug)]
pub struct ColumnArgs {
    /// The score (default: the run's primary metric).
    #[arg(long)]
    pub metric: Option<String>,
    /// The string metric that gives each episode's class.
    #[arg(long, default_value = "class")]
    pub group_by: String,
    /// The instance set the map is estimated on.
    #[arg(long, default_value = "construction")]
    pub construction: String,
    /// The instance set policies are evaluated on.
    #[arg(long, default_value = "test")]
    pub test: String,
}

/// The flags of `harness map`.
#[derive(Args, Debug)]
pub struct MapArgs {
    /// The run folder of a level sweep written by `harness ablate`.
    pub run: PathBuf,
    /// The tolerances ε of the floor rule (comma-separated); the first is outlined in the
    /// figure and starred in the table.
    #[arg(long, value_delimiter = ',', default_value = "0.05,0,0.1,0.15")]
    pub epsilon: Vec<f64>,
    /// Which metrics and sets play which part.
    #[command(flatten)]
    pub columns: ColumnArgs,
    /// `human` for tables, `json` for one object (the form `harness provision --map` reads).
    #[arg(long, value_enum, default_value_t = Format::Human)]
    pub format: Format,
    /// Also draw the grid as a heat map with the floors outlined, as SVG, PNG or PDF by the
    /// file's extension.
    #[arg(long, value_name = "FILE.svg|png|pdf")]
    pub plot: Option<PathBuf>,
    /// The figure's size and font.
    #[command(flatten)]
    pub figure: FigureArgs,
}

/// The flags of `harness provision`.
#[derive(Args, Debug)]
pub struct ProvisionArgs {
    /// The run folder of a level sweep written by `harness ablate`.
    pub run: PathBuf,
    /// A map written by `harness map --format json` (default: the map of this run's
    /// construction split at --epsilon).
    #[arg(long, value_name = "FILE.json")]
    pub map: Option<PathBuf>,
    /// The map's ε (with --map: one of the file's; default: its first).
    #[arg(long)]
    pub epsilon: Option<f64>,
    /// The policies, comma-separated: full, exec-lookup, map-esc, blind-esc, gradual-esc,
    /// class-oracle, task-oracle.
    #[arg(
        long,
        default_value = "full,exec-lookup,map-esc,blind-esc,gradual-esc,class-oracle,task-oracle"
    )]
    pub policy: String,
    /// The additive cost (default: the declared cost metric `tokens`, else the first declared
    /// cost metric).
    #[arg(long)]
    pub cost: Option<String>,
    /// The count shown as calls per task (default: `tool_calls` if declared, else `turns`).
    #[arg(long)]
    pub calls: Option<String>,
    /// The boolean metric that holds the executor's self-check (escalation follows it).
    #[arg(long, default_value = "self_check")]
    pub check: String,
    /// Which metrics and sets play which part.
    #[command(flatten)]
    pub columns: ColumnArgs,
    /// Paired bootstrap resamples for the intervals against full provision.
    #[arg(long, default_value_t = 10_000)]
    pub resamples: usize,
    /// The bootstrap's seed.
    #[arg(long, default_value_t = 0)]
    pub bootstrap_seed: u64,
    /// `human` for tables, `json` for one object.
    #[arg(long, value_enum, default_value_t = Format::Human)]
    pub format: Format,
    /// Also draw the score–cost trade-off of the policies, as SVG, PNG or PDF by the file's
    /// extension.
    #[arg(long, value_name = "FILE.svg|png|pdf")]
    pub plot: Option<PathBuf>,
    /// The figure's size and font.
    #[command(flatten)]
    pub figure: FigureArgs,
}

fn columns(args: &ColumnArgs) -> Columns {
    Columns {
        metric: args.metric.clone(),
        group_by: args.group_by.clone(),
        construction: args.construction.clone(),
        test: args.test.clone(),
        ..Columns::default()
    }
}

fn finish(result: Result<(), String>) -> ExitCode {
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("error: {message}");
            ExitCode::FAILURE
        }
    }
}

fn write_plot(
    file: &Option<PathBuf>,
    figure: &FigureArgs,
    svg: impl FnOnce() -> String,
) -> Result<(), String> {
    match file {
        Some(file) => figure::write(file, &svg(), figure),
        None => Ok(()),
    }
}

fn epsilons_ok(epsilons: &[f64]) -> Result<(), String> {
    match epsilons.iter().find(|e| !e.is_finite() || **e < 0.0) {
        Some(e) => Err(format!(
            "--epsilon {e}: a tolerance is a number of score units ≥ 0, such as 0.05"
        )),
        None if epsilons.is_empty() => Err("--epsilon needs at least one value".into()),
        None => Ok(()),
    }
}

/// Runs `harness map`.
pub fn run_map(args: &MapArgs) -> ExitCode {
    finish((|| {
        if let Some(file) = &args.plot {
            figure::check(file, &args.figure)?;
        }
        epsilons_ok(&args.epsilon)?;
        let sweep = provision::load(&Registry::standard(), &args.run, &columns(&args.columns))?;
        let report = provision::map(&sweep, &args.epsilon);
        write_plot(&args.plot, &args.figure, || provision::map_svg(&report))?;
        match args.format {
            Format::Human => print!("{}", provision::map_table(&report)),
            Format::Json => println!(
                "{}",
                serde_json::to_string_pretty(&report).map_err(|error| error.to_string())?
            ),
        }
        if let Some(file) = &args.plot {
            eprintln!("wrote {}", file.display());
        }
        Ok(())
    })())
}

/// Runs `harness provision`.
pub fn run_provision(args: &ProvisionArgs) -> ExitCode {
    finish((|| {
        if let Some(file) = &args.plot {
            figure::check(file, &args.figure)?;
        }
        let policies: Vec<Policy> = provision::parse_policies(&args.policy)?;
        if policies.is_empty() {
            return Err("--policy names no policy".into());
        }
        let mut cols = columns(&args.columns);
        cols.cost = args.cost.clone();
        cols.calls = args.calls.clone();
        cols.check = args.check.clone();
        let sweep = provision::load(&Registry::standard(), &args.run, &cols)?;
        let map: MapReport = match &args.map {
            Some(path) => {
                let text = std::fs::read_to_string(path)
                    .map_err(|error| format!("cannot read the map {}: {error}", path.display()))?;
                serde_json::from_str(&text).map_err(|error| {
                    format!(
                        "{} is not a map written by `harness map --format json`: {error}",
                        path.display()
                    )
                })?
            }
            None => {
                let epsilon = args.epsilon.unwrap_or(0.05);
                epsilons_ok(&[epsilon])?;
                provision::map(&sweep, &[epsilon])
            }
        };
        let report = provision::provision(
            &sweep,
            &map,
            args.epsilon,
            &policies,
            args.resamples,
            args.bootstrap_seed,
        )?;
        write_plot(&args.plot, &args.figure, || {
            provision::provision_svg(&report)
        })?;
        match args.format {
            Format::Human => print!("{}", provision::provision_table(&report)),
            Format::Json => println!(
                "{}",
                serde_json::to_string_pretty(&report).map_err(|error| error.to_string())?
            ),
        }
        if let Some(file) = &args.plot {
            eprintln!("wrote {}", file.display());
        }
        Ok(())
    })())
}
