//! Validating a harness in stages: syntax, check, protocol and a smoke episode, with one report.
//!
//! A generated or repaired harness is valid when its files parse, check, follow the protocol
//! asked for and, when a smoke instance is given, play one episode without a runtime error. The
//! report says which stage was reached and lists every diagnostic of it with its code, span,
//! help and the code's explanation page, so that a repairer (a program or a model) has all it
//! needs in one document. Harnesses are checked, total and free of IO, so the smoke episode
//! needs no sandbox.

use harness_compiler::Workspace;
use harness_compiler::codes::Code;
use harness_compiler::diagnostic::Diagnostic;
use harness_compiler::ir::Program;
use harness_compiler::protocol::Protocol;
use harness_runtime::{Limits, Machine, RngStreams, RuntimeError, Switches, run_episode};
use serde::{Deserialize, Serialize};

use crate::games::Registry;
use crate::load::{CompileError, Sources, compile};

/// The stages of validation, in order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Stage {
    /// The files parse (no E00xx).
    Syntax,
    /// They check (no other E-code) and are written for the game.
    Check,
    /// They follow the protocol (E08xx).
    Protocol,
    /// One episode runs without a runtime error (R-codes).
    Smoke,
}

impl Stage {
    /// The stage's name, as the report writes it.
    pub fn name(self) -> &'static str {
        match self {
            Stage::Syntax => "syntax",
            Stage::Check => "check",
            Stage::Protocol => "protocol",
            Stage::Smoke => "smoke",
        }
    }
}

/// One finding of the report: a checker diagnostic or a runtime error.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Finding {
    /// The stable code: `E0101`, `R0008`.
    pub code: String,
    /// `error` or `warning`.
    pub severity: String,
    /// The stage that reported it.
    pub stage: Stage,
    /// What is wrong.
    pub message: String,
    /// The file, by path as loaded; empty when the finding has no place.
    pub file: String,
    /// The byte span in the file.
    pub start: u32,
    /// One past the span's last byte.
    pub end: u32,
    /// The 1-based line of the span's start.
    pub line: usize,
    /// The 1-based column (in characters) of the span's start.
    pub column: usize,
    /// How to fix it, when known.
    pub help: Option<String>,
    /// The code's explanation page, as `harness explain CODE` prints it.
    pub explain: String,
}

/// The smoke episode's outcome.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Smoke {
    /// The instance played.
    pub instance: String,
    /// The seed.
    pub seed: u64,
    /// How the episode ended.
    pub end: String,
    /// The actions it took.
    pub turns: u64,
    /// The expression-evaluation steps it took.
    pub steps: u64,
    /// The game's metrics at the end.
    pub metrics: serde_json::Map<String, serde_json::Value>,
}

/// The validation report: one schema, written by `harness validate --format json` and read by
/// the repairer.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Report {
    /// Whether every stage asked for passed.
    pub valid: bool,
    /// The last stage run: the one that failed, or the last one when all passed.
    pub stage: Stage,
    /// The stages that passed, in order.
    pub passed: Vec<Stage>,
    /// The game the harness was validated for.
    pub game: String,
    /// The protocol enforced, if any.
    pub protocol: Option<String>,
    /// The smoke episode, when one was played.
    pub smoke: Option<Smoke>,
    /// Every diagnostic of the stages run (warnings included), in stage and source order.
    pub diagnostics: Vec<Finding>,
    /// Problems that have no code: an unknown game, a harness for another game, no top module.
    pub problems: Vec<String>,
}

/// What to validate against.
#[derive(Clone, Debug)]
pub struct Options<'a> {
    /// The game the harness must be written for.
    pub game: &'a str,
    /// The protocol to enforce.
    pub protocol: Option<Protocol>,
    /// The instance of the smoke episode, and its seed; `None` skips the stage.
    pub smoke: Option<(&'a str, u64)>,
    /// The turn limit of the smoke episode.
    pub max_turns: u32,
}

impl Report {
    fn new(options: &Options<'_>) -> Report {
        Report {
            valid: false,
            stage: Stage::Syntax,
            passed: Vec::new(),
            game: options.game.to_string(),
            protocol: options.protocol.map(|p| p.name().to_string()),
            smoke: None,
            diagnostics: Vec::new(),
            problems: Vec::new(),
        }
    }

    /// The error findings.
    pub fn errors(&self) -> impl Iterator<Item = &Finding> {
        self.diagnostics.iter().filter(|f| f.severity == "error")
    }

    /// Moves on to `stage` after the current one passed.
    fn pass(&mut self, next: Stage) {
        self.passed.push(self.stage);
        self.stage = next;
    }
}

/// A checker diagnostic as a finding of `stage`.
pub fn finding(stage: Stage, diagnostic: &Diagnostic, text: &str) -> Finding {
    let (line, column) = line_column(text, diagnostic.span.start as usize);
    Finding {
        code: diagnostic.code.as_str().to_string(),
        severity: diagnostic.severity.as_str().to_string(),
        stage,
        message: diagnostic.message.clone(),
        file: diagnostic.file.clone(),
        start: diagnostic.span.start,
        end: diagnostic.span.end,
        line,
        column,
        help: diagnostic.help.clone(),
        explain: diagnostic.code.info().page(),
    }
}

/// The 1-based line and column (in characters) of a byte offset.
fn line_column(text: &str, offset: usize) -> (usize, usize) {
    let offset = offset.min(text.len());
    let before = text.get(..offset).unwrap_or(text);
    let line = before.matches('\n').count() + 1;
    let start = before.rfind('\n').map_or(0, |i| i + 1);
    (line, before[start..].chars().count() + 1)
}

fn is_syntax(code: Code) -> bool {
    code.as_str().starts_with("E00")
}

/// Validates `sources` in stages and reports where they stopped.
pub fn validate(registry: &Registry, sources: &Sources, options: &Options<'_>) -> Report {
    let mut report = Report::new(options);
    let kind = match registry.get(options.game) {
        Ok(kind) => kind,
        Err(message) => {
            report.stage = Stage::Check;
            report.problems.push(message);
            return report;
        }
    };
    let mut workspace = Workspace::new(registry.signatures());
    for (path, text) in &sources.files {
        workspace.set_file(path, text);
    }
    let text_of = |path: &str| sources.text(path).unwrap_or_default();
    let diagnostics = workspace.diagnostics();
    let syntax_errors = diagnostics
        .iter()
        .any(|d| d.is_error() && is_syntax(d.code));
    let stage_of = |d: &Diagnostic| {
        if is_syntax(d.code) {
            Stage::Syntax
        } else {
            Stage::Check
        }
    };
    // At the syntax stage only the syntax errors are relevant: the checker's findings on a
    // text that does not parse are mostly consequences.
    report.diagnostics.extend(
        diagnostics
            .iter()
            .filter(|d| !syntax_errors || is_syntax(d.code))
            .map(|d| finding(stage_of(d), d, text_of(&d.file))),
    );
    if syntax_errors {
        return report;
    }
    report.pass(Stage::Check);
    if diagnostics.iter().any(Diagnostic::is_error) {
        return report;
    }
    let program = match compile(registry, sources, None) {
        Ok(program) => program,
        Err(CompileError::Module(message)) => {
            report.problems.push(message);
            return report;
        }
        Err(CompileError::Diagnostics(errors)) => {
            report.diagnostics.extend(
                errors
                    .iter()
                    .filter(|d| d.is_error())
                    .map(|d| finding(Stage::Check, d, text_of(&d.file))),
            );
            return report;
        }
    };
    if program.game.as_deref() != Some(options.game) {
        report.problems.push(match &program.game {
            Some(other) => format!(
                "`{}` is written for the game `{other}`, not `{}`",
                program.module, options.game
            ),
            None => format!(
                "`{}` names no game; add `use game {}`",
                program.module, options.game
            ),
        });
        return report;
    }
    if let Some(protocol) = options.protocol {
        report.pass(Stage::Protocol);
        let found = workspace.protocol_diagnostics(protocol);
        report.diagnostics.extend(
            found
                .iter()
                .map(|d| finding(Stage::Protocol, d, text_of(&d.file))),
        );
        if found.iter().any(Diagnostic::is_error) {
            return report;
        }
    }
    let Some((instance, seed)) = options.smoke else {
        report.valid = true;
        return report;
    };
    report.pass(Stage::Smoke);
    let mut natives = harness_stdlib::prelude::natives();
    natives.extend(&kind.natives());
    let limits = Limits {
        max_turns: options.max_turns,
        ..Limits::default()
    };
    let (instances, game_options) =
        match crate::plan::instances_and_options(&kind.manifest(), Some(instance), &[]) {
            Ok(found) => found,
            Err(message) => {
                report.problems.push(message);
                return report;
            }
        };
    let instance = instances.first().cloned().unwrap_or_default();
    let machine = match Machine::new(program.clone(), natives, &Switches::default(), limits) {
        Ok(machine) => machine,
        Err(error) => {
            push_runtime(&mut report, &program, sources, &error);
            return report;
        }
    };
    let mut game = match kind.start(&instance, &game_options, &RngStreams::new(seed)) {
        Ok(game) => game,
        Err(message) => {
            report
                .problems
                .push(format!("the game could not start `{instance}`: {message}"));
            return report;
        }
    };
    let result = run_episode(&machine, game.as_mut());
    match &result.error {
        Some(error) => push_runtime(&mut report, &program, sources, error),
        None => report.valid = true,
    }
    report.smoke = Some(Smoke {
        instance,
        seed,
        end: result.end.name().to_string(),
        turns: result.costs.turns,
        steps: result.costs.steps,
        metrics: result
            .metrics
            .iter()
            .map(|(name, value)| {
                (
                    name.clone(),
                    serde_json::to_value(value).unwrap_or(serde_json::Value::Null),
                )
            })
            .collect(),
    });
    report
}

/// A runtime error of the smoke episode as a finding.
fn push_runtime(report: &mut Report, program: &Program, sources: &Sources, error: &RuntimeError) {
    let path = program
        .files
        .get(error.span.file as usize)
        .cloned()
        .unwrap_or_default();
    let (line, column) = line_column(
        sources.text(&path).unwrap_or_default(),
        error.span.start as usize,
    );
    let (title, page) = error.kind.explanation();
    report.diagnostics.push(Finding {
        code: error.code.to_string(),
        severity: "error".into(),
        stage: Stage::Smoke,
        message: error.message.clone(),
        file: path,
        start: error.span.start,
        end: error.span.end,
        line,
        column,
        help: error
            .declared
            .clone()
            .map(|d| format!("declared error: {d}")),
        explain: format!("# {}: {title}\n\n{page}\n", error.code),
    });
}
