//! The `harness` command line: the only place that renders diagnostics, writes files and prints.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand, ValueEnum};

mod ablate;
mod check;
mod fmt_cmd;
mod games;
mod lens;
mod llm_args;
mod lsp;
mod mci;
mod plot;
mod render;
mod results;
mod run;

/// Write, check, run and ablate declarative agent harnesses.
#[derive(Parser)]
#[command(name = "harness", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Check `.harness` files (or every `.harness` file under a directory) and report
    /// diagnostics. Exits with 1 when there is an error.
    Check {
        /// Files or directories; all loaded files form one workspace.
        #[arg(required = true)]
        paths: Vec<PathBuf>,
        /// How to print the diagnostics.
        #[arg(long, value_enum, default_value_t = Format::Human)]
        format: Format,
    },
    /// Explain a diagnostic code: what triggers it, an example and the fix.
    Explain {
        /// The code, such as `E0101`.
        #[arg(required_unless_present = "list")]
        code: Option<String>,
        /// List every code with its title instead.
        #[arg(long)]
        list: bool,
    },
    /// Run one episode of a harness on a game instance and seed, and print what happened.
    Run {
        /// The harness: a `.harness` file or a directory of them.
        file: PathBuf,
        /// The module to run, when the harness has several top modules.
        #[arg(long)]
        module: Option<String>,
        /// The game to play (default: the one the harness uses).
        #[arg(long)]
        game: Option<String>,
        /// The Battleship protocol.
        #[arg(long, value_enum, default_value_t = ProtocolArg::Paper)]
        protocol: ProtocolArg,
        /// The game instance (default: the game's first).
        #[arg(long)]
        instance: Option<String>,
        /// The seed of the episode's random streams.
        #[arg(long, default_value_t = 0)]
        seed: u64,
        /// Enable only these layers (comma-separated); layers whose needs are off are off too.
        #[arg(long, value_delimiter = ',')]
        layers: Option<Vec<String>>,
        /// Switch these layers off (repeatable or comma-separated).
        #[arg(long, value_delimiter = ',')]
        without: Vec<String>,
        /// Set a config parameter or a tunable's default: `--set name=value` (repeatable).
        #[arg(long, value_parser = parse_setting)]
        set: Vec<(String, String)>,
        /// `human` for a turn-by-turn account, `json` for a summary.
        #[arg(long, value_enum, default_value_t = Format::Human)]
        format: Format,
        /// Write every event as JSON lines to this file.
        #[arg(long)]
        trace: Option<PathBuf>,
        /// Stop after this many turns even if the game has not ended.
        #[arg(long, default_value_t = 1000)]
        max_turns: u32,
        /// Where the harness's LLM calls go.
        #[command(flatten)]
        llm: llm_args::LlmArgs,
    },
    /// Run a harness's cumulative layer stacks (and, with --removals, each single-layer removal)
    /// over a suite of game instances, and report each layer's marginal contribution.
    Ablate {
        /// The harness: a directory of `.harness` files or one file (default: the bundled
        /// Battleship harness). Not needed with --resume.
        harness: Option<PathBuf>,
        /// The module to run when the harness has several top modules.
        #[arg(long)]
        module: Option<String>,
        /// `compat` follows the reference implementation's rules and quirks exactly; `default`
        /// fixes its documented defects.
        #[arg(long, value_enum, default_value_t = Profile::Default)]
        profile: Profile,
        /// The Battleship protocol: `paper` (the seed paper's boards) or `grand` (Grand et al.'s).
        #[arg(long, value_enum, default_value_t = ProtocolArg::Paper)]
        protocol: ProtocolArg,
        /// The belief backend: `mcmc`, `smc` or `mcmc-compat` (sets the harness's `belief`).
        #[arg(long)]
        belief: Option<String>,
        /// Samples of the belief (sets the harness's `particles`).
        #[arg(long)]
        particles: Option<u32>,
        /// `all` or a comma-separated list of boards, such as `B01,B07`.
        #[arg(long, default_value = "all")]
        boards: String,
        /// Replicate games per board.
        #[arg(long, default_value_t = 3)]
        seeds: u32,
        /// Set a config parameter or a tunable's default: `--set name=value` (repeatable).
        #[arg(long, value_parser = parse_setting)]
        set: Vec<(String, String)>,
        /// Also run every single-layer removal from the full stack.
        #[arg(long)]
        removals: bool,
        /// Run only these stacks, e.g. `L1,L1-L2` (default: all).
        #[arg(long, value_delimiter = ',')]
        stacks: Option<Vec<String>>,
        /// `human` for tables, `json` for one JSON object.
        #[arg(long, value_enum, default_value_t = Format::Human)]
        format: Format,
        /// Where run folders are created.
        #[arg(long, default_value = "results/runs")]
        out: PathBuf,
        /// Finish an interrupted run: its folder (the settings come from its manifest).
        #[arg(long)]
        resume: Option<PathBuf>,
        /// Worker threads (default: one per core).
        #[arg(long)]
        jobs: Option<usize>,
        /// Where the harness's LLM calls go.
        #[command(flatten)]
        llm: llm_args::LlmArgs,
    },
    /// Look into a result folder written by `harness ablate`: the run, one game, the reflective
    /// confidence, LLM use, or a comparison of two runs. Exits with 1 when the folder is not a
    /// run or the game or stack is missing.
    Lens {
        /// The view.
        #[arg(value_enum)]
        view: lens::View,
        /// The run folder (default: the latest under results/runs).
        run: Option<PathBuf>,
        /// The stack (default: the top cumulative stack).
        #[arg(long)]
        stack: Option<String>,
        /// The game for `game` and `confidence`, as BOARD:SEED, such as `B07:1`.
        #[arg(long)]
        game: Option<String>,
        /// The game's board, with --seed (instead of --game).
        #[arg(long)]
        board: Option<String>,
        /// The game's seed index, with --board (default 0).
        #[arg(long)]
        seed: Option<u32>,
        /// For `run` and `compare`: the layer whose per-board effect to show (the stack with it
        /// against the stack below it).
        #[arg(long)]
        layer: Option<String>,
        /// For `compare`: the other run (Δ = RUN − RUN2).
        #[arg(long, value_name = "RUN2")]
        compare: Option<PathBuf>,
        /// `human` for text, `json` for one JSON object.
        #[arg(long, value_enum, default_value_t = Format::Human)]
        format: Format,
        /// Also draw the view's figure as SVG: `run` (win rates), `run --layer` and `compare`
        /// (per-board effects), `confidence --game` (the confidence trace).
        #[arg(long, value_name = "FILE.svg")]
        plot: Option<PathBuf>,
        /// Show at most this many turns of a game.
        #[arg(long)]
        max_turns: Option<usize>,
    },
    /// Format `.harness` files in place, or check that they are formatted.
    Fmt {
        /// List the files that would change and exit 1 if any; write nothing.
        #[arg(long)]
        check: bool,
        /// Files, or directories searched recursively for `.harness` files (default: `.`).
        paths: Vec<PathBuf>,
    },
    /// Run the language server on standard input and output (for editors).
    Lsp,
    /// Look at the Battleship game's instances.
    Battleship {
        #[command(subcommand)]
        command: BattleshipCommand,
    },
    /// Look at the infrastructure-operations games (`cooling`, `grid`).
    Mci {
        #[command(subcommand)]
        command: MciCommand,
    },
}

/// `harness mci ...`.
#[derive(Subcommand)]
enum MciCommand {
    /// List a game's tasks: id, class, family, scenario, time, split and prompt.
    Tasks {
        /// `cooling` or `grid`.
        #[arg(long)]
        game: String,
        /// Only this split: `construction` or `test`.
        #[arg(long)]
        split: Option<String>,
        /// Also print each task's ground truth, from the privileged oracle.
        #[arg(long)]
        truth: bool,
    },
}

/// `harness battleship ...`.
#[derive(Subcommand)]
enum BattleshipCommand {
    /// Print every board of a protocol: its placements and a grid picture.
    Boards {
        /// `paper` or `grand`.
        #[arg(long, value_enum, default_value_t = ProtocolArg::Paper)]
        protocol: ProtocolArg,
    },
}

/// `--profile`.
#[derive(Clone, Copy, ValueEnum)]
enum Profile {
    /// Documented defects of the reference fixed.
    Default,
    /// The reference implementation's rules, constants and quirks.
    Compat,
}

/// `--protocol`.
#[derive(Clone, Copy, ValueEnum)]
enum ProtocolArg {
    /// The seed paper's protocol: generated boards, hit/miss feedback.
    Paper,
    /// Grand et al.'s protocol: their 18 boards, colours revealed on a hit.
    Grand,
}

impl ProtocolArg {
    fn protocol(self) -> harness_battleship::Protocol {
        match self {
            ProtocolArg::Paper => harness_battleship::Protocol::Paper,
            ProtocolArg::Grand => harness_battleship::Protocol::Grand,
        }
    }
}

/// Parses `name=value`.
fn parse_setting(text: &str) -> Result<(String, String), String> {
    let (name, value) = text
        .split_once('=')
        .ok_or_else(|| format!("`{text}` is not `name=value`"))?;
    Ok((name.trim().to_string(), value.trim().to_string()))
}

/// Output formats of `harness check`.
#[derive(Clone, Copy, ValueEnum)]
enum Format {
    /// Rendered for a terminal.
    Human,
    /// One JSON array of diagnostic objects.
    Json,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    if matches!(cli.command, Command::Check { .. } | Command::Lsp) {
        // The checker and the language server turn their own panics into internal-error
        // diagnostics and responses; the default hook would print a backtrace on top of them.
        std::panic::set_hook(Box::new(|_| {}));
    } else {
        // Anywhere else a panic is a bug of ours: say so in one line, without a backtrace.
        std::panic::set_hook(Box::new(|info| {
            eprintln!("error: internal error ({info}); this is a bug in harness, please report it");
        }));
    }
    match cli.command {
        Command::Check { paths, format } => check::run(&paths, format),
        Command::Explain { code, list } => check::explain(code.as_deref(), list),
        Command::Run {
            file,
            module,
            game,
            protocol,
            instance,
            seed,
            layers,
            without,
            set,
            format,
            trace,
            max_turns,
            llm,
        } => run::run(&run::RunArgs {
            file: &file,
            module: module.as_deref(),
            game: game.as_deref(),
            protocol: protocol.protocol(),
            instance: instance.as_deref(),
            seed,
            switches: harness_runtime::Switches {
                layers,
                without,
                set,
            },
            json: matches!(format, Format::Json),
            trace: trace.as_deref(),
            max_turns,
            llm,
        }),
        Command::Ablate {
            harness,
            module,
            profile,
            protocol,
            belief,
            particles,
            boards,
            seeds,
            set,
            removals,
            stacks,
            format,
            out,
            resume,
            jobs,
            llm,
        } => ablate::run(&ablate::AblateArgs {
            harness,
            module,
            compat: matches!(profile, Profile::Compat),
            protocol: protocol.protocol(),
            belief,
            particles,
            boards,
            seeds,
            set,
            removals,
            stacks,
            json: matches!(format, Format::Json),
            out,
            resume,
            jobs,
            llm,
        }),
        Command::Lens {
            view,
            run,
            stack,
            game,
            board,
            seed,
            layer,
            compare,
            format,
            plot,
            max_turns,
        } => lens::run(&lens::LensArgs {
            view,
            run,
            stack,
            game,
            board,
            seed,
            layer,
            compare,
            json: matches!(format, Format::Json),
            plot,
            max_turns,
        }),
        Command::Fmt { check, paths } => fmt_cmd::run(&paths, check),
        Command::Lsp => lsp::run(),
        Command::Mci {
            command: MciCommand::Tasks { game, split, truth },
        } => mci::tasks(&game, split.as_deref(), truth),
        Command::Battleship {
            command: BattleshipCommand::Boards { protocol },
        } => match harness_battleship::render::render_suite(protocol.protocol()) {
            Ok(text) => {
                print!("{text}");
                ExitCode::SUCCESS
            }
            Err(error) => {
                eprintln!("error: {error}");
                ExitCode::FAILURE
            }
        },
    }
}
