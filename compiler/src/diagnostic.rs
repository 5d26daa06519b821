//! Diagnostics: the one data type every check reports, rendered only at the edge.
//!
//! A [`Diagnostic`] is plain data: a stable [`Code`], a severity, a message, the file and span it
//! is about, labels on related spans, an optional help line and related diagnostics (for spans in
//! other files). It implements [`miette::Diagnostic`] once [`Diagnostic::with_source`] has attached
//! the file's text; the command line renders it, tools read its fields.

use std::fmt;
use std::sync::Arc;

use harness_grammar::Span;

pub use crate::codes::{Code, CodeInfo};

/// How serious a diagnostic is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Severity {
    /// The program is rejected.
    Error,
    /// The program is accepted, but something is probably a mistake (for example an unused
    /// item).
    Warning,
}

impl Severity {
    /// `"error"` or `"warning"`.
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
        }
    }
}

/// A secondary span with a message, such as "declared here".
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Label {
    /// The span, in the same file as the diagnostic.
    pub span: Span,
    /// What the span shows.
    pub message: String,
}

/// The text of a source file, shared between diagnostics of that file.
#[derive(Clone)]
pub struct SourceText {
    name: String,
    text: Arc<str>,
}

impl SourceText {
    /// Wraps a file's path and text.
    pub fn new(name: impl Into<String>, text: Arc<str>) -> Self {
        Self {
            name: name.into(),
            text,
        }
    }

    /// The text.
    pub fn text(&self) -> &str {
        &self.text
    }
}

/// Shows the file name only: the text would drown every debug print of a diagnostic.
impl fmt::Debug for SourceText {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "SourceText({:?})", self.name)
    }
}

impl PartialEq for SourceText {
    fn eq(&self, other: &Self) -> bool {
        self.name == other.name && (Arc::ptr_eq(&self.text, &other.text) || self.text == other.text)
    }
}

impl Eq for SourceText {}

impl miette::SourceCode for SourceText {
    fn read_span<'a>(
        &'a self,
        span: &miette::SourceSpan,
        context_lines_before: usize,
        context_lines_after: usize,
    ) -> Result<Box<dyn miette::SpanContents<'a> + 'a>, miette::MietteError> {
        let contents = self
            .text
            .read_span(span, context_lines_before, context_lines_after)?;
        Ok(Box::new(miette::MietteSpanContents::new_named(
            self.name.clone(),
            contents.data(),
            *contents.span(),
            contents.line(),
            contents.column(),
            contents.line_count(),
        )))
    }
}

/// One finding of the checker.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diagnostic {
    /// The rule that was broken.
    pub code: Code,
    /// Error or warning; given by the code.
    pub severity: Severity,
    /// What is wrong, in one sentence.
    pub message: String,
    /// The file, by path as loaded.
    pub file: String,
    /// The primary span.
    pub span: Span,
    /// The message on the primary span, if it adds to the main message.
    pub primary_label: Option<String>,
    /// Secondary spans in the same file.
    pub labels: Vec<Label>,
    /// How to fix it, when known.
    pub help: Option<String>,
    /// Related findings, typically spans in other files.
    pub related: Vec<Diagnostic>,
    /// The file's text, attached by [`Diagnostic::with_source`] for rendering.
    pub source: Option<SourceText>,
}

impl Diagnostic {
    /// A diagnostic with the code's severity and no labels, file or help yet.
    pub fn new(code: Code, span: Span, message: impl Into<String>) -> Self {
        Self {
            code,
            severity: code.info().severity,
            message: message.into(),
            file: String::new(),
            span,
            primary_label: None,
            labels: Vec::new(),
            help: None,
            related: Vec::new(),
            source: None,
        }
    }

    /// Adds a message on the primary span.
    pub fn primary(mut self, message: impl Into<String>) -> Self {
        self.primary_label = Some(message.into());
        self
    }

    /// Adds a label on a related span of the same file.
    pub fn label(mut self, span: Span, message: impl Into<String>) -> Self {
        self.labels.push(Label {
            span,
            message: message.into(),
        });
        self
    }

    /// Sets the help line.
    pub fn help(mut self, help: impl Into<String>) -> Self {
        self.help = Some(help.into());
        self
    }

    /// Sets the help line when there is one.
    pub fn maybe_help(mut self, help: Option<String>) -> Self {
        if help.is_some() {
            self.help = help;
        }
        self
    }

    /// Sets the file the diagnostic is about.
    pub fn in_file(mut self, file: impl Into<String>) -> Self {
        self.file = file.into();
        self
    }

    /// Moves every span of this diagnostic (not of its related ones) by `offset` bytes.
    pub fn shifted(mut self, offset: u32) -> Self {
        let shift = |span: Span| Span {
            start: span.start + offset,
            end: span.end + offset,
        };
        self.span = shift(self.span);
        for label in &mut self.labels {
            label.span = shift(label.span);
        }
        self
    }

    /// Attaches the file's text so miette can render the spans.
    pub fn with_source(mut self, source: SourceText) -> Self {
        self.source = Some(source);
        self
    }

    /// True for errors.
    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }

    /// An internal error of the checker: a bug of ours, reported instead of a panic.
    pub fn internal(span: Span, what: impl fmt::Display) -> Self {
        Self::new(
            Code::Internal,
            span,
            format!("internal error in the checker: {what}"),
        )
        .help("this is a bug in harness; please report it with the file that triggers it")
    }

    /// The order in which diagnostics are reported: by file, then span, then code.
    pub fn sort_key(&self) -> (&str, u32, u32, &'static str) {
        (
            &self.file,
            self.span.start,
            self.span.end,
            self.code.as_str(),
        )
    }
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Diagnostic {}

fn miette_span(span: Span) -> miette::SourceSpan {
    miette::SourceSpan::new((span.start as usize).into(), span.len())
}

impl miette::Diagnostic for Diagnostic {
    fn code<'a>(&'a self) -> Option<Box<dyn fmt::Display + 'a>> {
        Some(Box::new(self.code.as_str()))
    }

    fn severity(&self) -> Option<miette::Severity> {
        Some(match self.severity {
            Severity::Error => miette::Severity::Error,
            Severity::Warning => miette::Severity::Warning,
        })
    }

    fn help<'a>(&'a self) -> Option<Box<dyn fmt::Display + 'a>> {
        self.help
            .as_ref()
            .map(|help| Box::new(help) as Box<dyn fmt::Display>)
    }

    fn source_code(&self) -> Option<&dyn miette::SourceCode> {
        self.source
            .as_ref()
            .map(|source| source as &dyn miette::SourceCode)
    }

    fn labels(&self) -> Option<Box<dyn Iterator<Item = miette::LabeledSpan> + '_>> {
        self.source.as_ref()?;
        let primary = miette::LabeledSpan::new_primary_with_span(
            self.primary_label.clone(),
            miette_span(self.span),
        );
        let others = self.labels.iter().map(|label| {
            miette::LabeledSpan::new_with_span(Some(label.message.clone()), miette_span(label.span))
        });
        Some(Box::new(std::iter::once(primary).chain(others)))
    }

    fn related<'a>(&'a self) -> Option<Box<dyn Iterator<Item = &'a dyn miette::Diagnostic> + 'a>> {
        if self.related.is_empty() {
            return None;
        }
        Some(Box::new(
            self.related.iter().map(|d| d as &dyn miette::Diagnostic),
        ))
    }
}

/// The edit distance between two names, for "did you mean" suggestions.
pub fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let above = row[j + 1];
            row[j + 1] = if ca == *cb {
                diagonal
            } else {
                1 + diagonal.min(above).min(row[j])
            };
            diagonal = above;
        }
    }
    row[b.len()]
}

/// The candidate closest to `name`, if it is close enough to be a plausible typo.
pub fn did_you_mean<'a>(
    name: &str,
    candidates: impl IntoIterator<Item = &'a str>,
) -> Option<String> {
    let limit = (name.chars().count() / 3).max(1);
    candidates
        .into_iter()
        .filter(|candidate| *candidate != name)
        .map(|candidate| (edit_distance(name, candidate), candidate))
        .filter(|(distance, _)| *distance <= limit)
        .min()
        .map(|(_, candidate)| format!("did you mean `{candidate}`?"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suggests_close_names_only() {
        assert_eq!(edit_distance("hit_prb", "hit_prob"), 1);
        assert_eq!(
            did_you_mean("hit_prb", ["hit_prob", "best_cell"]).as_deref(),
            Some("did you mean `hit_prob`?")
        );
        assert_eq!(did_you_mean("zzz", ["hit_prob"]), None);
    }
}
