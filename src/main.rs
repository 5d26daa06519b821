//! The `harness` command line: the only place that renders diagnostics, writes files and prints.

use clap::Parser;

mod plot;
mod results;

/// Write, check, run and ablate declarative agent harnesses.
#[derive(Parser)]
#[command(name = "harness", version, about)]
struct Cli {}

fn main() {
    let _cli = Cli::parse();
}
