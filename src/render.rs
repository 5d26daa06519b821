//! Rendering diagnostics: miette's graphical report for terminals, JSON for tools.

use harness_compiler::Diagnostic;
use serde_json::{Value, json};

/// Prints diagnostics for a person, followed by a one-line summary.
pub fn human(diagnostics: &[Diagnostic], files: usize) {
    self::diagnostics(diagnostics);
    let errors = diagnostics.iter().filter(|d| d.is_error()).count();
    let warnings = diagnostics.len() - errors;
    eprintln!(
        "checked {files} file{}: {errors} error{}, {warnings} warning{}",
        plural(files),
        plural(errors),
        plural(warnings)
    );
}

/// The diagnostics rendered for a terminal, on standard error, without a summary.
pub fn diagnostics(diagnostics: &[Diagnostic]) {
    for diagnostic in diagnostics {
        eprintln!("{:?}", miette::Report::new(diagnostic.clone()));
    }
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

/// The diagnostics as one JSON array.
pub fn json(diagnostics: &[Diagnostic]) -> String {
    let values: Vec<Value> = diagnostics.iter().map(to_json).collect();
    serde_json::to_string_pretty(&Value::Array(values)).unwrap_or_else(|_| "[]".to_owned())
}

/// One diagnostic as a JSON object, with 1-based lines and columns.
pub fn to_json(diagnostic: &Diagnostic) -> Value {
    let position = |start: u32, end: u32| match &diagnostic.source {
        Some(source) => {
            let (line, column) = source.line_column(start as usize);
            let (end_line, end_column) = source.line_column(end as usize);
            (line, column, end_line, end_column)
        }
        None => (1, 1, 1, 1),
    };
    let (line, column, end_line, end_column) = position(diagnostic.span.start, diagnostic.span.end);
    let labels: Vec<Value> = diagnostic
        .labels
        .iter()
        .map(|label| {
            let (line, column, end_line, end_column) = position(label.span.start, label.span.end);
            json!({
                "message": label.message,
                "line": line, "column": column, "end_line": end_line, "end_column": end_column,
            })
        })
        .collect();
    json!({
        "code": diagnostic.code.as_str(),
        "severity": diagnostic.severity.as_str(),
        "message": diagnostic.message,
        "file": diagnostic.file,
        "line": line,
        "column": column,
        "end_line": end_line,
        "end_column": end_column,
        "label": diagnostic.primary_label,
        "labels": labels,
        "help": diagnostic.help,
        "related": diagnostic.related.iter().map(to_json).collect::<Vec<_>>(),
    })
}

/// The 1-based line and column (in characters) of a byte offset.
pub fn line_column(text: &str, offset: usize) -> (usize, usize) {
    let offset = offset.min(text.len());
    let before = text.get(..offset).unwrap_or(text);
    let line = before.matches('\n').count() + 1;
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    let column = before[line_start..].chars().count() + 1;
    (line, column)
}

#[cfg(test)]
mod tests {
    use harness_compiler::Workspace;
    use harness_compiler::signatures::SignatureSet;

    use super::*;

    #[test]
    fn lines_and_columns_are_one_based_and_count_characters() {
        assert_eq!(line_column("ab\ncé d", 0), (1, 1));
        assert_eq!(line_column("ab\ncé d", 3), (2, 1));
        assert_eq!(line_column("ab\ncé d", 7), (2, 4));
    }

    #[test]
    fn json_has_the_documented_fields() {
        let mut workspace = Workspace::new(SignatureSet::default());
        workspace.set_file("a.harness", "layer l {\n  computed x: Int = 0.5\n}\n");
        let parsed: Value =
            serde_json::from_str(&json(&workspace.diagnostics())).unwrap_or_default();
        let first = &parsed[0];
        assert_eq!(first["code"], "W0002");
        let error = &parsed[1];
        assert_eq!(error["code"], "E0201");
        assert_eq!(error["severity"], "error");
        assert_eq!(error["file"], "a.harness");
        assert_eq!(
            (error["line"].as_u64(), error["column"].as_u64()),
            (Some(2), Some(21))
        );
        assert_eq!(
            (error["end_line"].as_u64(), error["end_column"].as_u64()),
            (Some(2), Some(24))
        );
        assert!(error["labels"].is_array());
        assert_eq!(
            error["help"],
            "convert with `.round()`, `.floor()` or `.ceil()`"
        );
    }
}
