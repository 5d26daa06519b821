//! `harness lens`: the flags, and a view printed as text, JSON or CSV, over
//! [`harness::lens::show`].

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Args, ValueEnum};
use harness::games::Registry;
use harness::lens::{self, Request, View};

use crate::ReportFormat;
use crate::figure::{self, FigureArgs};

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
    /// How reproducible each arm's runs are: PS, TPC, STS, OC, DI, RR, TSR, tokens, latency, and
    /// contrasts between arms; also written to RUN/determinism.json.
    Determinism,
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
    /// Also draw the view's figure, as SVG, PNG or PDF by the file's extension: `run` (the
    /// primary and secondary metric per arm), `run --layer` and `compare` (sorted per-instance
    /// effects with their intervals and the mean), `series --episode` (the series).
    #[arg(long, value_name = "FILE.svg|png|pdf")]
    pub plot: Option<PathBuf>,
    /// For `run --plot`: another run of the same game whose arms to draw beside this run's
    /// (repeatable); the legend names what the runs differ in.
    #[arg(long, value_name = "RUN2")]
    pub overlay: Vec<PathBuf>,
    /// The figure's size and font.
    #[command(flatten)]
    pub figure: FigureArgs,
    /// Show at most this many turns of an episode.
    #[arg(long)]
    pub max_turns: Option<usize>,
    /// For `determinism`: the plan fields, in order of preference (the first the arm has).
    #[arg(
        long = "plan",
        value_name = "FIELD,FIELD",
        default_value = "sp.plan,agent.plan_raw"
    )]
    pub plan_fields: String,
    /// For `determinism`: the state field whose values are the state sequence (arms without
    /// it use their tool sequence).
    #[arg(long = "state", value_name = "FIELD", default_value = "fsm.stage")]
    pub state_field: String,
    /// For `determinism`: the prefix of the output metrics compared field by field.
    #[arg(long = "output", value_name = "PREFIX", default_value = "out.")]
    pub output_prefix: String,
    /// For `determinism`: the arms to contrast pairwise (default: every pair).
    #[arg(long = "arms", value_name = "ARM,ARM")]
    pub contrast_arms: Option<String>,
    /// For `determinism`: bootstrap resamples and permutation relabellings.
    #[arg(long, default_value_t = 10_000)]
    pub iterations: usize,
    /// For `determinism`: the seed of the bootstrap and the permutations.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
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
    if args.view == ViewArg::Determinism {
        return determinism(args, &run);
    }
    let request = Request {
        view: match args.view {
            ViewArg::Run => View::Run,
            ViewArg::Game => View::Game,
            ViewArg::Series => View::Series,
            ViewArg::Llm => View::Llm,
            ViewArg::Compare => View::Compare,
            ViewArg::Determinism => unreachable!("handled above"),
        },
        run,
        arm: args.arm.clone(),
        episode: args.episode.clone(),
        layer: args.layer.clone(),
        metric: args.metric.clone(),
        field: args.field.clone(),
        against: args.against.clone(),
        compare: args.compare.clone(),
        overlay: args.overlay.clone(),
        max_turns: args.max_turns,
    };
    if !args.overlay.is_empty() && (args.view != ViewArg::Run || args.plot.is_none()) {
        return Err("--overlay draws other runs into the figure of `run --plot`".into());
    }
    if let Some(file) = &args.plot {
        figure::check(file, &args.figure)?;
    }
    let shown = lens::show(&Registry::standard(), &request)?;
    // The figure is checked and written before the view is printed, so that a failed --plot
    // does not follow a page of output.
    if let Some(file) = &args.plot {
        let svg = shown.svg.as_deref().ok_or(
            "--plot draws `run`, `run --layer`, `compare` and `series --episode`; this view has no figure",
        )?;
        figure::write(file, svg, &args.figure)?;
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

/// `harness lens determinism`: prints the analysis and writes it to RUN/determinism.json.
fn determinism(args: &LensArgs, run: &Path) -> Result<(), String> {
    let list = |text: &str| -> Vec<String> {
        text.split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(str::to_string)
            .collect()
    };
    if args.iterations == 0 {
        return Err("--iterations must be at least 1".into());
    }
    let options = lens::determinism::Options {
        plan_fields: list(&args.plan_fields),
        state_field: args.state_field.clone(),
        output_prefix: args.output_prefix.clone(),
        arms: args.contrast_arms.as_deref().map(list).unwrap_or_default(),
        iterations: args.iterations,
        seed: args.seed,
    };
    if args.plot.is_some() {
        return Err("--plot draws `run`, `run --layer`, `compare` and `series --episode`; this view has no figure".into());
    }
    let shown = lens::determinism_view(run, &options)?;
    let json = serde_json::to_string_pretty(&shown.json).map_err(|error| error.to_string())?;
    let file = run.join("determinism.json");
    std::fs::write(&file, format!("{json}\n"))
        .map_err(|error| format!("cannot write {}: {error}", file.display()))?;
    match args.format {
        ReportFormat::Human => print!("{}", shown.text),
        ReportFormat::Json => println!("{json}"),
        ReportFormat::Csv => print!("{}", shown.csv),
    }
    eprintln!("wrote {}", file.display());
    Ok(())
}
