//! `harness validate`: the staged validity report of a harness, for a terminal or as JSON.

use std::path::Path;
use std::process::ExitCode;

use harness::games::Registry;
use harness::load::Sources;
use harness::validate::{Options, Report, validate};
use harness_compiler::protocol::Protocol;

use crate::Format;

/// The command's arguments.
pub struct Args<'a> {
    pub path: &'a Path,
    pub game: &'a str,
    pub smoke: Option<&'a str>,
    pub seed: u64,
    pub protocol: &'a str,
    pub max_turns: u32,
    pub format: Format,
}

/// Validates the harness, prints the report and exits with 1 unless it is valid.
pub fn run(args: &Args<'_>) -> ExitCode {
    let protocol = match args.protocol {
        "none" => None,
        name => match crate::check::parse_protocol(name) {
            Ok(protocol) => Some(protocol),
            Err(message) => {
                eprintln!("error: {message} (or `none`)");
                return ExitCode::FAILURE;
            }
        },
    };
    let sources = match Sources::load(Some(&args.path.display().to_string())) {
        Ok(sources) => sources,
        Err(message) => {
            eprintln!("error: {message}");
            return ExitCode::FAILURE;
        }
    };
    let report = validate(
        &Registry::standard(),
        &sources,
        &Options {
            game: args.game,
            protocol,
            smoke: args.smoke.map(|instance| (instance, args.seed)),
            max_turns: args.max_turns,
        },
    );
    match args.format {
        Format::Json => println!(
            "{}",
            serde_json::to_string_pretty(&report).unwrap_or_default()
        ),
        Format::Human => print!("{}", human(&report, protocol)),
    }
    if report.valid {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

/// The report for a terminal: one line per diagnostic with its place and help, then the verdict.
fn human(report: &Report, protocol: Option<Protocol>) -> String {
    let mut out = String::new();
    for finding in &report.diagnostics {
        out.push_str(&format!(
            "{}[{}] {}:{}:{}: {}\n",
            finding.severity,
            finding.code,
            finding.file,
            finding.line,
            finding.column,
            finding.message
        ));
        if let Some(help) = &finding.help {
            out.push_str(&format!("  help: {help}\n"));
        }
    }
    for problem in &report.problems {
        out.push_str(&format!("error: {problem}\n"));
    }
    if let Some(smoke) = &report.smoke {
        out.push_str(&format!(
            "smoke episode: {} seed {}, {} after {} turns and {} steps\n",
            smoke.instance, smoke.seed, smoke.end, smoke.turns, smoke.steps
        ));
    }
    let protocol = protocol.map_or("no protocol".to_string(), |p| {
        format!("protocol {}", p.name())
    });
    if report.valid {
        let stages: Vec<&str> = report
            .passed
            .iter()
            .chain([&report.stage])
            .map(|s| s.name())
            .collect();
        out.push_str(&format!(
            "valid for {} ({protocol}): passed {}\n",
            report.game,
            stages.join(", ")
        ));
    } else {
        out.push_str(&format!(
            "not valid for {} ({protocol}): stopped at the {} stage; `harness explain CODE` explains each code\n",
            report.game,
            report.stage.name()
        ));
    }
    out
}
