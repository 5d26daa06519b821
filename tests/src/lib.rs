//! The data-driven test corpus: .harness cases with inline expectations and snapshots.
//!
//! Cases live in `tests/cases/<area>/<name>.harness`. A case states what the checker must report
//! with comments on the lines concerned:
//!
//! - `//~ ERROR E0101` on the line where the error's span starts;
//! - `//~^ ERROR E0101` for the line above (one `^` per line up);
//! - `//~ WARN W0001` for warnings.
//!
//! A case whose text holds a line `//@ protocol NAME` is also checked against that protocol, as
//! `harness check --protocol NAME` does.
//!
//! A case without expectations must check cleanly. Every case also has a sibling insta snapshot
//! of the rendered diagnostics, which includes the input. The runner is `tests/tests/corpus.rs`.

use std::fmt::Write;

use harness_compiler::protocol::Protocol;
use harness_compiler::signatures::SignatureSet;
use harness_compiler::{Diagnostic, Severity, Workspace};

/// The signatures the command line uses: those of the standard game registry.
pub fn signatures() -> SignatureSet {
    harness::games::Registry::standard().signatures()
}

/// Checks one file on its own and returns its diagnostics; with a `//@ protocol NAME` line,
/// also those of the protocol.
pub fn check(path: &str, text: &str) -> Vec<Diagnostic> {
    let mut workspace = Workspace::new(signatures());
    workspace.set_file(path, text);
    let mut diagnostics = workspace.diagnostics();
    if let Some(protocol) = protocol_directive(text) {
        diagnostics.extend(workspace.protocol_diagnostics(protocol));
    }
    diagnostics
}

/// The protocol a case asks for with a line `//@ protocol NAME`.
///
/// # Panics
/// When the line names no known protocol: the case itself is wrong.
pub fn protocol_directive(text: &str) -> Option<Protocol> {
    text.lines()
        .find_map(|line| line.trim().strip_prefix("//@ protocol "))
        .map(|name| {
            Protocol::parse(name.trim())
                .unwrap_or_else(|| panic!("`//@ protocol {name}` names no protocol"))
        })
}

/// One expected or reported finding: the 1-based line, the severity and the code.
pub type Finding = (usize, Severity, String);

/// The expectations written in a case's comments, sorted.
pub fn expectations(text: &str) -> Result<Vec<Finding>, String> {
    let mut out = Vec::new();
    for (index, line) in text.lines().enumerate() {
        for rest in line.split("//~").skip(1) {
            let ups = rest.chars().take_while(|c| *c == '^').count();
            let mut words = rest[ups..].split_whitespace();
            let severity = match words.next() {
                Some("ERROR") => Severity::Error,
                Some("WARN") => Severity::Warning,
                other => {
                    return Err(format!(
                        "line {}: expected ERROR or WARN after //~, found {other:?}",
                        index + 1
                    ));
                }
            };
            let code = words
                .next()
                .ok_or_else(|| format!("line {}: missing code", index + 1))?;
            let line_number = (index + 1)
                .checked_sub(ups)
                .filter(|n| *n > 0)
                .ok_or_else(|| format!("line {}: too many `^`", index + 1))?;
            out.push((line_number, severity, code.to_owned()));
        }
    }
    out.sort();
    Ok(out)
}

/// The findings of reported diagnostics, in the same form as [`expectations`].
pub fn findings(text: &str, diagnostics: &[Diagnostic]) -> Vec<Finding> {
    let mut out: Vec<Finding> = diagnostics
        .iter()
        .map(|d| {
            (
                line_of(text, d.span.start as usize),
                d.severity,
                d.code.as_str().to_owned(),
            )
        })
        .collect();
    out.sort();
    out
}

/// The 1-based line of a byte offset.
pub fn line_of(text: &str, offset: usize) -> usize {
    text.as_bytes()[..offset.min(text.len())]
        .iter()
        .filter(|&&b| b == b'\n')
        .count()
        + 1
}

/// Renders diagnostics the way the terminal shows them, without colours, at a fixed width.
pub fn render(diagnostics: &[Diagnostic]) -> String {
    let handler =
        miette::GraphicalReportHandler::new_themed(miette::GraphicalTheme::unicode_nocolor())
            .with_width(100)
            .with_links(false);
    let mut out = String::new();
    for diagnostic in diagnostics {
        let _ = writeln!(out, "[{}] {}", diagnostic.code.as_str(), diagnostic.file);
        if handler.render_report(&mut out, diagnostic).is_err() {
            let _ = writeln!(out, "(could not render: {})", diagnostic.message);
        }
    }
    if diagnostics.is_empty() {
        out.push_str("(no diagnostics)\n");
    }
    out
}

/// The search example and its broken variants, shared by the runtime tests and benchmark.
pub mod search_example;
