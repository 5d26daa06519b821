//! The `harness` command line: the only place that renders diagnostics, writes files and prints.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand, ValueEnum};

mod check;
mod lsp;
mod plot;
mod render;
mod results;

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
    /// Run the language server on standard input and output (for editors).
    Lsp,
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
        Command::Lsp => lsp::run(),
    }
}
