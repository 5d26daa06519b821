//! `harness check` and `harness explain`.

use std::path::PathBuf;
use std::process::ExitCode;

use harness_compiler::Workspace;
use harness_compiler::codes::Code;
use harness_compiler::cost::{self, CostReport};
use harness_compiler::protocol::Protocol;
use harness_runtime::ErrorCode as RuntimeCode;
use serde_json::{Value, json};

use crate::Format;
use crate::render;

/// What `harness check` does with the cost bound of a turn.
#[derive(Clone, Copy, Debug)]
pub struct Cost {
    /// Print every module's bound per phase.
    pub report: bool,
    /// The limit past which a phase's bound is E0901.
    pub limit: u64,
}

/// Parses the value of `--protocol`.
pub fn parse_protocol(name: &str) -> Result<Protocol, String> {
    Protocol::parse(name).ok_or_else(|| {
        let known: Vec<&str> = Protocol::ALL.iter().map(|p| p.name()).collect();
        format!("unknown protocol `{name}`; known: {}", known.join(", "))
    })
}

/// Loads the files, checks them (and, with a protocol, checks it too) and prints the
/// diagnostics; with `cost.report`, each module's cost bound per turn phase too. With `quiet`,
/// only errors are printed (in either format), without the summary line.
pub fn run(
    paths: &[PathBuf],
    format: Format,
    quiet: bool,
    protocol: Option<Protocol>,
    cost: Cost,
) -> ExitCode {
    let mut files = Vec::new();
    let mut problems = Vec::new();
    for path in paths {
        harness::load::collect(path, &mut files, &mut problems);
    }
    files.sort();
    files.dedup();
    let mut workspace = Workspace::new(harness::games::Registry::standard().signatures());
    workspace.set_cost_limit(cost.limit);
    for file in &files {
        match std::fs::read(file) {
            // Invalid UTF-8 is replaced rather than refused, so the rest of the file is still
            // checked; but it is an error even where the parser accepts the replacement (inside a
            // string), as `harness fmt` refuses such a file.
            Ok(bytes) => {
                problems.extend(not_utf8(&file.display().to_string(), &bytes));
                workspace.set_file(
                    &file.display().to_string(),
                    &String::from_utf8_lossy(&bytes),
                )
            }
            Err(error) => problems.push(format!("cannot read {}: {error}", file.display())),
        }
    }
    for problem in &problems {
        eprintln!("error: {problem}");
    }
    let mut diagnostics = workspace.diagnostics();
    if let Some(protocol) = protocol {
        diagnostics.extend(workspace.protocol_diagnostics(protocol));
    }
    let shown: Vec<_> = if quiet {
        diagnostics
            .iter()
            .filter(|d| d.is_error())
            .cloned()
            .collect()
    } else {
        diagnostics.clone()
    };
    match format {
        Format::Human if quiet => render::diagnostics(&shown),
        Format::Human => render::human(&shown, files.len()),
        Format::Json if cost.report => println!(
            "{}",
            serde_json::json!({
                "diagnostics": serde_json::from_str::<serde_json::Value>(&render::json(&shown))
                    .unwrap_or_default(),
                "cost": cost_reports(&workspace).iter().map(cost_json).collect::<Vec<_>>(),
            })
        ),
        Format::Json => println!("{}", render::json(&shown)),
    }
    if cost.report && format == Format::Human {
        for report in cost_reports(&workspace) {
            print!("{}", cost_text(&report));
        }
    }
    // The process ends here: freeing every memo table one by one would only delay the exit.
    std::mem::forget(workspace);
    if problems.is_empty() && !diagnostics.iter().any(|d| d.is_error()) {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

/// The problem of a file that is not UTF-8: where its first bad byte is.
fn not_utf8(path: &str, bytes: &[u8]) -> Option<String> {
    let error = std::str::from_utf8(bytes).err()?;
    let at = error.valid_up_to();
    let line = bytes[..at].iter().filter(|&&b| b == b'\n').count() + 1;
    Some(format!(
        "{path}: byte {at} (line {line}) is not UTF-8; it is checked as U+FFFD, but save the file \
         as UTF-8"
    ))
}

/// The cost reports of the workspace's modules that check, in module order.
fn cost_reports(workspace: &Workspace) -> Vec<CostReport> {
    let mut modules = workspace.modules();
    modules.sort();
    modules
        .iter()
        .filter_map(|(module, _)| workspace.cost(module).ok())
        .collect()
}

/// A cost report as a table: one line per phase, then what leaves a phase unbounded.
fn cost_text(report: &CostReport) -> String {
    let mut out = format!(
        "cost of a turn of {} (every layer on; limit {} steps per phase)\n",
        report.module,
        cost::show(report.limit)
    );
    for phase in &report.phases {
        let verdict = if phase.steps == cost::UNBOUNDED {
            "  (unbounded: the runtime budgets end such a turn)"
        } else if phase.steps > report.limit {
            "  OVER THE LIMIT (E0901)"
        } else {
            ""
        };
        out.push_str(&format!(
            "  {:<8} {:>10} steps  {:>6} previews{verdict}\n",
            phase.phase,
            cost::show(phase.steps),
            cost::show(phase.previews),
        ));
    }
    out.push_str(&format!(
        "  {:<8} {:>10} steps\n",
        "turn",
        cost::show(report.turn)
    ));
    let mut reasons: Vec<&String> = report.phases.iter().flat_map(|p| &p.unbounded).collect();
    reasons.sort();
    reasons.dedup();
    for reason in reasons {
        out.push_str(&format!("  unbounded by {reason}\n"));
    }
    out
}

fn cost_json(report: &CostReport) -> serde_json::Value {
    let steps = |n: u64| {
        if n == cost::UNBOUNDED {
            serde_json::Value::Null
        } else {
            serde_json::Value::from(n)
        }
    };
    serde_json::json!({
        "module": report.module,
        "limit": report.limit,
        "turn": steps(report.turn),
        "phases": report.phases.iter().map(|p| serde_json::json!({
            "phase": p.phase,
            "steps": steps(p.steps),
            "previews": steps(p.previews),
            "unbounded_by": p.unbounded,
        })).collect::<Vec<_>>(),
    })
}

/// Prints a code's explanation page, or the list of codes.
pub fn explain(code: Option<&str>, list: bool, format: Format) -> ExitCode {
    let json = matches!(format, Format::Json);
    if list {
        if json {
            let entries: Vec<Value> = Code::ALL
                .iter()
                .map(|code| code_json(*code, false))
                .chain(
                    RuntimeCode::ALL
                        .iter()
                        .map(|code| runtime_json(*code, false)),
                )
                .collect();
            print_json(&Value::Array(entries));
            return ExitCode::SUCCESS;
        }
        for code in Code::ALL {
            let info = code.info();
            println!("{}  {}", info.code, info.title);
        }
        for code in RuntimeCode::ALL {
            println!("{}  {}", code.code(), code.explanation().0);
        }
        return ExitCode::SUCCESS;
    }
    let text = code.unwrap_or_default();
    if let Some(code) = RuntimeCode::from_code(&text.trim().to_ascii_uppercase()) {
        if json {
            print_json(&runtime_json(code, true));
        } else {
            print!("{}", runtime_page(code));
        }
        return ExitCode::SUCCESS;
    }
    match Code::parse(text) {
        Some(code) => {
            if json {
                print_json(&code_json(code, true));
            } else {
                print!("{}", code.info().page());
            }
            ExitCode::SUCCESS
        }
        None => {
            eprintln!(
                "error: `{text}` is not a diagnostic code; `harness explain --list` lists them"
            );
            ExitCode::FAILURE
        }
    }
}

/// A checker code as JSON: its code, severity and title, and with `full` the explanation, the
/// example that triggers it and the fix.
fn code_json(code: Code, full: bool) -> Value {
    let info = code.info();
    let mut value = json!({
        "code": info.code,
        "kind": "check",
        "severity": info.severity.as_str(),
        "title": info.title,
    });
    if full {
        value["explanation"] = json!(info.explanation);
        value["example"] = json!(info.example.trim());
        value["fix"] = json!(info.fix);
    }
    value
}

/// A runtime error code as JSON: its code and title, and with `full` when it happens and what
/// to do.
fn runtime_json(code: RuntimeCode, full: bool) -> Value {
    let (title, text) = code.explanation();
    let mut value = json!({
        "code": code.code(),
        "kind": "runtime",
        "severity": "error",
        "title": title,
    });
    if full {
        value["explanation"] = json!(text);
    }
    value
}

fn print_json(value: &Value) {
    println!(
        "{}",
        serde_json::to_string_pretty(value).unwrap_or_else(|_| "null".to_owned())
    );
}

/// The explanation page of a runtime error code: its title, when it happens and what to do.
fn runtime_page(code: RuntimeCode) -> String {
    let (title, text) = code.explanation();
    format!(
        "{}: {title} (a runtime error, reported by `harness run` and `harness ablate` and \
         recorded in traces)\n\n{text}\n",
        code.code()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn explanations_as_json_carry_the_whole_page() {
        for code in Code::ALL {
            let info = code.info();
            let value = code_json(*code, true);
            assert_eq!(value["code"], info.code);
            assert_eq!(value["severity"], info.severity.as_str());
            // The parts of the text page, each as its own field.
            assert_eq!(value["title"], info.title);
            assert_eq!(value["explanation"], info.explanation);
            assert_eq!(value["example"], info.example.trim());
            assert_eq!(value["fix"], info.fix);
            assert!(code_json(*code, false).get("explanation").is_none());
        }
        for code in RuntimeCode::ALL {
            let value = runtime_json(code, true);
            assert_eq!(value["code"], code.code());
            assert_eq!(value["explanation"], code.explanation().1);
        }
    }

    /// Issue 19's reproducer: invalid UTF-8 inside a string passed `check` while `fmt` refused
    /// the file.
    #[test]
    fn invalid_utf8_inside_a_string_is_a_problem() {
        let bytes = b"harness u\nconst _S: String = \"a\xffb\"\n";
        let problem = not_utf8("u.harness", bytes).unwrap_or_default();
        assert!(
            problem.starts_with("u.harness: byte 31 (line 2)"),
            "{problem}"
        );
        assert_eq!(not_utf8("ok.harness", b"const _N: Int = 1\n"), None);
    }
}
