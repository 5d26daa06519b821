//! The `harness` command line: the only place that renders diagnostics, writes files and prints.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand, ValueEnum};

mod check;
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
        /// The `.harness` file.
        file: PathBuf,
        /// The game to play.
        #[arg(long)]
        game: String,
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
    },
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
    // The checker turns its own panics into internal-error diagnostics; the default hook would
    // print a backtrace on top of them.
    std::panic::set_hook(Box::new(|_| {}));
    let cli = Cli::parse();
    match cli.command {
        Command::Check { paths, format } => check::run(&paths, format),
        Command::Explain { code, list } => check::explain(code.as_deref(), list),
        Command::Run {
            file,
            game,
            instance,
            seed,
            layers,
            without,
            set,
            format,
            trace,
            max_turns,
        } => run::run(&run::RunArgs {
            file: &file,
            game: &game,
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
        }),
    }
}
