//! `harness run`: one episode of a harness on a game instance and seed.
//!
//! Prints a readable turn-by-turn account (what was observed, what each layer concluded, what
//! was chosen and why) or, with `--format json`, a summary object; `--trace FILE` writes every
//! event as JSON lines. A runtime error is rendered with its location and the episode's result is
//! still printed.

use std::fmt::Write as _;
use std::io::Write as _;
use std::path::Path;
use std::process::ExitCode;

use harness::exec::trace_header;
use harness::games::Registry;
use harness::load::{CompileError, Sources};
use harness_compiler::ir::{Program, SrcSpan};
use harness_runtime::{
    EpisodeResult, Event, EventKind, Limits, LlmHost, Machine, Phase, RngStreams, RuntimeError,
    Switches, Value, run_episode_with_llm, write_json_lines,
};

use crate::render;

/// What `harness run` was asked to do.
pub struct RunArgs<'a> {
    /// The harness: a `.harness` file or a directory of them.
    pub file: &'a Path,
    /// The module to run, when the harness has several top modules.
    pub module: Option<&'a str>,
    /// The game's name; by default the one the harness uses.
    pub game: Option<&'a str>,
    /// Game options, `name=value`.
    pub options: Vec<(String, String)>,
    /// The instance; the first of the game's default set when absent.
    pub instance: Option<&'a str>,
    /// The seed.
    pub seed: u64,
    /// `--layers`, `--without`, `--set` and `--set-json`.
    pub switches: Switches,
    /// Print the JSON summary instead of the account.
    pub json: bool,
    /// Where to write the event trace.
    pub trace: Option<&'a Path>,
    /// The turn limit.
    pub max_turns: u32,
    /// Where LLM calls go.
    pub llm: crate::llm_args::LlmArgs,
}

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
    let registry = Registry::standard();
    let sources = Sources::load(Some(&args.file.display().to_string()))?;
    let program = match harness::load::compile(&registry, &sources, args.module) {
        Ok(program) => program,
        Err(error) => {
            if let CompileError::Diagnostics(diagnostics) = &error {
                if args.json {
                    println!("{}", render::json(diagnostics));
                } else {
                    render::human(diagnostics, sources.files.len());
                }
            }
            return Err(error.to_string());
        }
    };
    let game_name = match (args.game, program.game.as_deref()) {
        (Some(name), _) | (None, Some(name)) => name,
        (None, None) => return Err(format!("`{}` names no game; pass --game", program.module)),
    };
    let kind = registry.get(game_name)?;
    let (instances, options) =
        harness::plan::instances_and_options(&kind.manifest(), args.instance, &args.options)?;
    let sources_files = &sources.files;
    // Runtime errors name a span in one of the program's files; render it against that file.
    let source_of = |error: &RuntimeError| -> (String, String) {
        let path = program
            .files
            .get(error.span.file as usize)
            .cloned()
            .unwrap_or_default();
        let text = sources_files
            .iter()
            .find(|(p, _)| *p == path)
            .map(|(_, t)| t.clone())
            .unwrap_or_default();
        (path, text)
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
            let (path, text) = source_of(&error);
            eprint!("{}", render_error(&error, &program, &path, &text));
            return Ok(ExitCode::FAILURE);
        }
    };
    if instances.len() != 1 && args.instance.is_some() {
        return Err("--instance names one instance; `harness ablate` runs several".into());
    }
    let instance = instances.first().cloned().unwrap_or_default();
    let llm = args.llm.setup(&program)?;
    for warning in llm.iter().flat_map(|setup| setup.warnings()) {
        eprintln!("warning: {warning}");
    }
    let host = crate::llm_args::host(&llm, args.seed);
    let mut game = kind.start(&instance, &options, &RngStreams::new(args.seed))?;
    let result = run_episode_with_llm(
        &machine,
        game.as_mut(),
        host.as_ref().map(|h| h as &dyn LlmHost),
    );

    for note in llm.iter().flat_map(|setup| setup.notes()) {
        eprintln!("note: {note}");
    }
    if let Some(trace) = args.trace {
        let header = trace_header(&sources.file_table(&program));
        std::fs::File::create(trace)
            .and_then(|file| {
                let mut file = std::io::BufWriter::new(file);
                write_json_lines(&mut file, std::slice::from_ref(&header))?;
                write_json_lines(&mut file, &result.events)?;
                file.flush()
            })
            .map_err(|e| format!("cannot write the trace to {}: {e}", trace.display()))?;
    }
    if args.json {
        let summary = serde_json::json!({
            "harness": program.module,
            "game": game_name,
            "instance": instance,
            "options": options,
            "seed": args.seed,
            "layers": machine.enabled_layers(),
            "config": machine.config_values(),
            "llm": llm.as_ref().map(|setup| setup.settings()),
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
        let (path, text) = source_of(error);
        eprint!("{}", render_error(error, &program, &path, &text));
        return Ok(ExitCode::FAILURE);
    }
    Ok(ExitCode::SUCCESS)
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
            EventKind::Files { .. } => {}
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
            EventKind::Transition { field, from, to } => {
                let _ = writeln!(
                    out,
                    "  {layer:<10} {field} moved {} → {} (machine)",
                    short(from),
                    short(to)
                );
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
            EventKind::Forced {
                action,
                args,
                intervention,
            } => {
                flush(&mut out, &mut previews);
                let _ = writeln!(
                    out,
                    "  forced    {} (layer {layer}, intervention {intervention})",
                    call(action, args)
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
            EventKind::LlmCall {
                effect,
                outcome,
                model,
                ..
            } => {
                let model = model.as_deref().unwrap_or("no model");
                let _ = writeln!(out, "  {layer:<10} llm.{effect} ({model}): {outcome}");
            }
            EventKind::Error { error } => {
                flush(&mut out, &mut previews);
                let _ = writeln!(out, "  error     {} {}", error.code, error.message);
            }
            EventKind::EpisodeEnd {
                reason,
                metrics,
                halt,
            } => {
                flush(&mut out, &mut previews);
                let reason = match halt {
                    Some(halt) => format!("{reason}: {halt}"),
                    None => reason.clone(),
                };
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
                let _ = writeln!(
                    out,
                    "runtime cost: {} evaluation steps, {} previews, {} revisions",
                    result.costs.steps, result.costs.previews, result.costs.revisions
                );
                if !result.llm_calls.is_empty() {
                    let ok = result
                        .llm_calls
                        .iter()
                        .filter(|c| c.outcome == "ok")
                        .count();
                    let latency: u64 = result
                        .llm_calls
                        .iter()
                        .map(|c| c.accounting.latency_ms)
                        .sum();
                    // The simulated model's figures are a test instrument's, never a model's.
                    let simulated = result
                        .llm_calls
                        .iter()
                        .any(|c| c.accounting.provider == "sim");
                    let _ = writeln!(
                        out,
                        "llm calls: {} ({ok} ok), {latency} ms in total{}",
                        result.llm_calls.len(),
                        if simulated {
                            " (simulated model: a test instrument, not a model's figures)"
                        } else {
                            ""
                        }
                    );
                }
            }
        }
    }
    out
}
