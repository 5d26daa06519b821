//! `harness lens`: the flags, and a view printed as text, JSON or CSV, over
//! [`harness::lens::show`].

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Args, ValueEnum};
use harness::games::Registry;
use harness::lens::{self, Request, View};

use crate::ReportFormat;

/// Where runs are looked for when none is named.
const RUNS: &str = "results/runs";

/// The views.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum ViewArg {
    /// The run: the report with paired marginals, what is missing, best and worst instances.
    Run,
    /// One episode turn by turn.
    Game,
    /// A state field or computed value over turns (`--field LAYER.NAME`).
    Series,
    /// LLM calls, outcomes, tokens and latency per arm.
    Llm,
    /// Two runs paired over their common episodes (`--compare RUN2`).
    Compare,
}

/// The flags of `harness lens`.
#[derive(Args, Debug)]
pub struct LensArgs {
    /// The view.
    #[arg(value_enum)]
    pub view: ViewArg,
    /// The run folder (default: the latest under results/runs).
    pub run: Option<PathBuf>,
    /// The arm (default: the top cumulative stack).
    #[arg(long, alias = "stack")]
    pub arm: Option<String>,
    /// The episode for `game` and `series`: INSTANCE:SEED or INSTANCE:SEED:REPLICATE, such
    /// as `B07:1`.
    #[arg(long, alias = "game")]
    pub episode: Option<String>,
    /// For `run` and `compare`: the layer whose paired per-instance effect to show.
    #[arg(long)]
    pub layer: Option<String>,
    /// The metric of per-instance tables and effects (default: the game's secondary metric,
    /// else its primary).
    #[arg(long)]
    pub metric: Option<String>,
    /// For `series`: the state field (`layer.field`, or a path inside a record field) or
    /// computed value to follow.
    #[arg(long)]
    pub field: Option<String>,
    /// For `series`: a config parameter or tunable of the arm whose value to draw as a
    /// reference line, such as `confidence_threshold`.
    #[arg(long)]
    pub against: Option<String>,
    /// For `compare`: the other run (differences are RUN − RUN2).
    #[arg(long, value_name = "RUN2")]
    pub compare: Option<PathBuf>,
    /// `human` for text, `json` for one object, `csv` for rows.
    #[arg(long, value_enum, default_value_t = ReportFormat::Human)]
    pub format: ReportFormat,
    /// Also draw the view's figure as SVG: `run` (the primary metric per arm), `run --layer`
    /// and `compare` (per-instance effects), `series --episode` (the series).
    #[arg(long, value_name = "FILE.svg")]
    pub plot: Option<PathBuf>,
    /// Show at most this many turns of an episode.
    #[arg(long)]
    pub max_turns: Option<usize>,
}

/// Runs the command.
pub fn run(args: &LensArgs) -> ExitCode {
    match run_inner(args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("error: {message}");
            ExitCode::FAILURE
        }
    }
}

fn run_inner(args: &LensArgs) -> Result<(), String> {
    let run = match &args.run {
        Some(path) => path.clone(),
        None => lens::latest_run(Path::new(RUNS)).ok_or_else(|| {
            format!("no run folder under {RUNS}; run `harness ablate` first or name a run folder")
        })?,
    };
    let request = Request {
        view: match args.view {
            ViewArg::Run => View::Run,
            ViewArg::Game => View::Game,
            ViewArg::Series => View::Series,
            ViewArg::Llm => View::Llm,
            ViewArg::Compare => View::Compare,
        },
        run,
        arm: args.arm.clone(),
        episode: args.episode.clone(),
        layer: args.layer.clone(),
        metric: args.metric.clone(),
        field: args.field.clone(),
        against: args.against.clone(),
        compare: args.compare.clone(),
        max_turns: args.max_turns,
    };
    let shown = lens::show(&Registry::standard(), &request)?;
    // The figure is checked and written before the view is printed, so that a failed --plot
    // does not follow a page of output.
    if let Some(file) = &args.plot {
        let svg = shown.svg.as_deref().ok_or(
            "--plot draws `run`, `run --layer`, `compare` and `series --episode`; this view has no figure",
        )?;
        std::fs::write(file, svg)
            .map_err(|error| format!("cannot write {}: {error}", file.display()))?;
    }
    match args.format {
        ReportFormat::Human => print!("{}", shown.text),
        ReportFormat::Json => println!(
            "{}",
            serde_json::to_string_pretty(&shown.json).map_err(|error| error.to_string())?
        ),
        ReportFormat::Csv => print!("{}", shown.csv),
    }
    if let Some(file) = &args.plot {
        eprintln!("wrote {}", file.display());
    }
    Ok(())
}
