//! `harness run`: one episode of a harness on a game instance and seed.
//!
//! Prints a readable turn-by-turn account (what was observed, what each layer concluded, what
//! was chosen and why) or, with `--format json`, a summary object; `--trace FILE` writes every
//! event as JSON lines. A runtime error is rendered with its location and the episode's result is
//! still printed.

use std::fmt::Write as _;
use std::path::Path;
use std::process::ExitCode;

use harness_compiler::Workspace;
use harness_compiler::ir::{Program, SrcSpan};
use harness_compiler::signatures::SignatureSet;
use harness_runtime::{
    EpisodeResult, Event, EventKind, GameKind, Limits, Machine, Phase, RngStreams, RuntimeError,
    Switches, Value, run_episode, to_json_lines,
};

use crate::render;

/// What `harness run` was asked to do.
pub struct RunArgs<'a> {
    /// The `.harness` file.
    pub file: &'a Path,
    /// The game's name.
    pub game: &'a str,
    /// The instance; the game's first when absent.
    pub instance: Option<&'a str>,
    /// The seed.
    pub seed: u64,
    /// `--layers`, `--without` and `--set`.
    pub switches: Switches,
    /// Print the JSON summary instead of the account.
    pub json: bool,
    /// Where to write the event trace.
    pub trace: Option<&'a Path>,
    /// The turn limit.
    pub max_turns: u32,
}

/// The games the command line can run, by name.
fn game_kind(name: &str) -> Option<Box<dyn GameKind>> {
    match name {
        harness_search::NAME => Some(Box::new(harness_search::LineSearch)),
        _ => None,
    }
}

/// The names accepted by `--game`.
const GAMES: &[&str] = &[harness_search::NAME];

/// Runs the command.
pub fn run(args: &RunArgs<'_>) -> ExitCode {
    match run_inner(args) {
        Ok(code) => code,
        Err(message) => {
            eprintln!("error: {message}");
            ExitCode::FAILURE
        }
    }
}

fn run_inner(args: &RunArgs<'_>) -> Result<ExitCode, String> {
    let kind = game_kind(args.game).ok_or_else(|| {
        format!(
            "unknown game `{}`; the games are {}",
            args.game,
            GAMES.join(", ")
        )
    })?;
    let path = args.file.display().to_string();
    let text =
        std::fs::read_to_string(args.file).map_err(|e| format!("cannot read {path}: {e}"))?;
    let program = compile(&path, &text, kind.as_ref())?;
    let Some(program) = program else {
        return Ok(ExitCode::FAILURE);
    };

    let mut natives = harness_stdlib::prelude::natives();
    natives.extend(&kind.natives());
    let limits = Limits {
        max_turns: args.max_turns,
        ..Limits::default()
    };
    let machine = match Machine::new(program.clone(), natives, &args.switches, limits) {
        Ok(machine) => machine,
        Err(error) => {
            eprint!("{}", render_error(&error, &program, &path, &text));
            return Ok(ExitCode::FAILURE);
        }
    };
    let instances = kind.instances();
    let instance = args
        .instance
        .map(str::to_string)
        .or_else(|| instances.first().cloned())
        .unwrap_or_default();
    let mut game = kind.start(&instance, &RngStreams::new(args.seed))?;
    let result = run_episode(&machine, game.as_mut());

    if let Some(trace) = args.trace {
        std::fs::write(trace, to_json_lines(&result.events))
            .map_err(|e| format!("cannot write the trace to {}: {e}", trace.display()))?;
    }
    if args.json {
        let summary = serde_json::json!({
            "harness": program.module,
            "game": args.game,
            "instance": instance,
            "seed": args.seed,
            "layers": machine.enabled_layers(),
            "config": machine.config_values(),
            "result": &result,
        });
        println!(
            "{}",
            serde_json::to_string_pretty(&summary).unwrap_or_default()
        );
    } else {
        print!(
            "{}",
            account(&result, &machine.enabled_layers(), &instance, args.seed)
        );
    }
    if let Some(error) = &result.error {
        eprint!("{}", render_error(error, &program, &path, &text));
        return Ok(ExitCode::FAILURE);
    }
    Ok(ExitCode::SUCCESS)
}

/// The signatures a run is checked against: the prelude, the runtime's preview methods and the
/// game's bindings.
fn signatures(kind: &dyn GameKind) -> SignatureSet {
    let mut set = harness_stdlib::prelude::signatures();
    set.extend(harness_runtime::signatures());
    set.game(kind.bindings());
    set
}

/// Checks and lowers the file; prints the diagnostics and returns `None` when it has errors.
fn compile(
    path: &str,
    text: &str,
    kind: &dyn GameKind,
) -> Result<Option<std::sync::Arc<Program>>, String> {
    let mut workspace = Workspace::new(signatures(kind));
    workspace.set_file(path, text);
    let module = workspace
        .modules()
        .into_iter()
        .find(|(_, p)| p == path)
        .map(|(module, _)| module)
        .ok_or_else(|| format!("{path} declares no module"))?;
    match workspace.program(&module) {
        Ok(program) => Ok(Some(program)),
        Err(diagnostics) => {
            render::human(&diagnostics, 1);
            Ok(None)
        }
    }
}

/// A runtime error with its location and the source line, for the terminal.
fn render_error(error: &RuntimeError, program: &Program, path: &str, text: &str) -> String {
    let mut out = format!("error[{}]: {}\n", error.code, error.message);
    if let Some(declared) = &error.declared {
        let _ = writeln!(out, "  = declared error: {declared}");
    }
    if error.span == SrcSpan::default() {
        return out;
    }
    let file = program
        .files
        .get(error.span.file as usize)
        .map_or(path, String::as_str);
    let (line, column) = render::line_column(text, error.span.start as usize);
    let _ = writeln!(out, "  --> {file}:{line}:{column}");
    if let Some(source) = text.lines().nth(line - 1) {
        let width = line.to_string().len();
        let length = (error.span.end - error.span.start).max(1) as usize;
        let underline = length
            .min(source.chars().count().saturating_sub(column - 1))
            .max(1);
        let _ = writeln!(out, "{:width$} |", "");
        let _ = writeln!(out, "{line} | {source}");
        let _ = writeln!(
            out,
            "{:width$} | {}{}",
            "",
            " ".repeat(column - 1),
            "^".repeat(underline)
        );
    }
    out
}

/// Shortens a value's display for the account.
fn short(value: &Value) -> String {
    let text = value.to_string();
    if text.chars().count() > 60 {
        format!("{}…", text.chars().take(57).collect::<String>())
    } else {
        text
    }
}

fn call(name: &str, args: &[Value]) -> String {
    format!(
        "{name}({})",
        args.iter().map(short).collect::<Vec<_>>().join(", ")
    )
}

/// The readable turn-by-turn account of an episode.
fn account(result: &EpisodeResult, layers: &[String], instance: &str, seed: u64) -> String {
    let mut out = format!(
        "layers: {}   instance: {instance}   seed: {seed}\n",
        layers.join(", ")
    );
    let mut turn = u32::MAX;
    // Previews are many per turn; the account summarises them per action instead of listing each.
    let mut previews: Vec<(String, f64)> = Vec::new();
    let flush = |out: &mut String, previews: &mut Vec<(String, f64)>| {
        let lowest = previews.iter().min_by(|a, b| a.1.total_cmp(&b.1));
        let highest = previews.iter().max_by(|a, b| a.1.total_cmp(&b.1));
        if let (Some((lo_action, lo)), Some((hi_action, hi))) = (lowest, highest) {
            let _ = writeln!(
                out,
                "  previewed {} actions with sim.next; values from {lo:.3} ({lo_action}) to {hi:.3} ({hi_action})",
                previews.len()
            );
        }
        previews.clear();
    };
    for Event {
        turn: t,
        phase,
        layer,
        kind,
        ..
    } in &result.events
    {
        if *t != turn && *phase != Phase::End {
            flush(&mut out, &mut previews);
            turn = *t;
            let _ = writeln!(out, "turn {t}");
        }
        let layer = layer.as_deref().unwrap_or("game");
        match kind {
            EventKind::Observation { name, args } => {
                let _ = writeln!(out, "  observed  {}", call(name, args));
            }
            // A patch that leaves the value as it was says nothing to a reader (the trace keeps it).
            EventKind::Patch { field, old, new } if old != new => {
                let _ = writeln!(
                    out,
                    "  {layer:<10} {field}: {} → {}",
                    short(old),
                    short(new)
                );
            }
            EventKind::Patch { .. } => {}
            EventKind::Preview {
                action,
                args,
                reading,
                value,
                ..
            } => {
                if reading == "expect" || reading == "prob" {
                    previews.push((call(action, args), value.as_f64().unwrap_or(0.0)));
                }
            }
            EventKind::Gate { gate, value } => {
                if *value {
                    let _ = writeln!(out, "  {layer:<10} gate {gate} holds");
                }
            }
            EventKind::Revision { tunable, old, new } => {
                let _ = writeln!(
                    out,
                    "  {layer:<10} revised {tunable}: {} → {}",
                    short(old),
                    short(new)
                );
            }
            EventKind::Chosen { action, args, rule } => {
                flush(&mut out, &mut previews);
                let _ = writeln!(
                    out,
                    "  decided   {} (layer {layer}, rule {})",
                    call(action, args),
                    rule + 1
                );
            }
            EventKind::Rejected { action, error } => {
                let _ = writeln!(
                    out,
                    "  rejected  {action}: {} {}",
                    error.code, error.message
                );
            }
            EventKind::Effect { name, args } => {
                let _ = writeln!(out, "  sent      game.{}", call(name, args));
            }
            EventKind::Error { error } => {
                flush(&mut out, &mut previews);
                let _ = writeln!(out, "  error     {} {}", error.code, error.message);
            }
            EventKind::EpisodeEnd { reason, metrics } => {
                flush(&mut out, &mut previews);
                let metrics: Vec<String> = metrics
                    .iter()
                    .map(|(k, v)| format!("{k}={}", short(v)))
                    .collect();
                let _ = writeln!(
                    out,
                    "episode ended ({reason}) after {} actions: {}",
                    result.turns,
                    metrics.join(" ")
                );
            }
        }
    }
    out
}
