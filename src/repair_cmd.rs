//! `harness patch` and `harness repair`: applying a patch to a harness, and the offline
//! repairer's bounded rounds.

use std::path::Path;
use std::process::ExitCode;

use harness::games::Registry;
use harness::load::Sources;
use harness::patch::{Patch, apply};
use harness::repair::repair;
use harness::validate::Options;

use crate::Format;

fn load(path: &Path) -> Result<Sources, String> {
    Sources::load(Some(&path.display().to_string()))
}

fn write(sources: &Sources, changed: &[String]) -> Result<(), String> {
    for (path, text) in &sources.files {
        if changed.contains(path) {
            std::fs::write(path, text).map_err(|e| format!("cannot write {path}: {e}"))?;
        }
    }
    Ok(())
}

/// Applies the JSON patch in `patch` to the harness at `path`, in place (or prints the patched
/// files with `dry_run`).
pub fn patch(path: &Path, patch: &Path, dry_run: bool) -> ExitCode {
    let result = (|| -> Result<(), String> {
        let sources = load(path)?;
        let text = std::fs::read_to_string(patch)
            .map_err(|e| format!("cannot read {}: {e}", patch.display()))?;
        let patch: Patch = serde_json::from_str(&text)
            .map_err(|e| format!("{} is not a patch: {e}", patch.display()))?;
        let applied = apply(&sources, &patch)?;
        for file in &applied.unformatted {
            eprintln!("warning: {file} does not parse after the patch; it is written unformatted");
        }
        if dry_run {
            for (path, text) in &applied.sources.files {
                if applied.changed.contains(path) {
                    println!("// {path}\n{text}");
                }
            }
        } else {
            write(&applied.sources, &applied.changed)?;
            println!("patched {}", applied.changed.join(", "));
        }
        Ok(())
    })();
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("error: {message}");
            ExitCode::FAILURE
        }
    }
}

/// The arguments of `harness repair`.
pub struct RepairArgs<'a> {
    pub path: &'a Path,
    pub game: &'a str,
    pub parent: Option<&'a Path>,
    pub rounds: usize,
    pub smoke: Option<&'a str>,
    pub seed: u64,
    pub write: bool,
    pub format: Format,
}

/// Repairs the harness in at most `rounds` rounds and prints what each round did; writes the
/// result with `write`. Exits with 1 unless the harness ends valid.
pub fn run(args: &RepairArgs<'_>) -> ExitCode {
    let result = (|| -> Result<bool, String> {
        let sources = load(args.path)?;
        let parent = args.parent.map(load).transpose()?;
        let options = Options {
            game: args.game,
            protocol: Some(harness_compiler::protocol::Protocol::Jit4),
            smoke: args.smoke.map(|instance| (instance, args.seed)),
            max_turns: 200,
        };
        let repaired = repair(
            &Registry::standard(),
            &sources,
            &options,
            parent.as_ref(),
            args.rounds,
        );
        match args.format {
            Format::Json => println!(
                "{}",
                serde_json::to_string_pretty(&serde_json::json!({
                    "valid_after": repaired.valid_after,
                    "rounds": repaired.rounds,
                    "report": repaired.report,
                }))
                .unwrap_or_default()
            ),
            Format::Human => {
                for round in &repaired.rounds {
                    println!(
                        "round {}: answered {}; applied {}",
                        round.round,
                        round.codes.join(", "),
                        if round.rules.is_empty() {
                            "nothing".to_string()
                        } else {
                            round.rules.join("; ")
                        }
                    );
                }
                match repaired.valid_after {
                    Some(0) => println!("valid as given"),
                    Some(n) => println!("valid after {n} round(s)"),
                    None => println!(
                        "still not valid after {} round(s): stopped at the {} stage with {}",
                        repaired.rounds.len(),
                        repaired.report.stage.name(),
                        repaired
                            .report
                            .errors()
                            .map(|f| f.code.as_str())
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                }
            }
        }
        if args.write && !repaired.rounds.is_empty() {
            let changed: Vec<String> = repaired
                .sources
                .files
                .iter()
                .map(|(p, _)| p.clone())
                .collect();
            write(&repaired.sources, &changed)?;
        }
        Ok(repaired.valid_after.is_some())
    })();
    match result {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(message) => {
            eprintln!("error: {message}");
            ExitCode::FAILURE
        }
    }
}
