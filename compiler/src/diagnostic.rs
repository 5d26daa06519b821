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

/// The text of a source file, shared between diagnostics of that file, with an index of where
/// its lines start so that placing a span costs a binary search rather than a scan of the text
/// before it (a file with thousands of diagnostics would otherwise render in quadratic time).
#[derive(Clone)]
pub struct SourceText {
    name: String,
    text: Arc<str>,
    /// The offset of every line's first byte; lines end at `\n`, `\r\n` or a lone `\r`, as in
    /// miette's renderer and the language server protocol.
    lines: Arc<[u32]>,
    /// A hash of the text, so that unequal texts compare unequal without reading them.
    hash: u64,
    /// The bytes handed out to be scanned so far, shared by the clones ([`SourceText::scanned`]).
    scanned: Arc<std::sync::atomic::AtomicU64>,
}

impl SourceText {
    /// Wraps a file's path and text.
    pub fn new(name: impl Into<String>, text: Arc<str>) -> Self {
        use std::hash::{Hash, Hasher};
        let bytes = text.as_bytes();
        let mut lines = vec![0u32];
        let mut i = 0;
        while i < bytes.len() {
            match bytes[i] {
                b'\r' if bytes.get(i + 1) == Some(&b'\n') => {
                    lines.push((i + 2) as u32);
                    i += 1;
                }
                b'\r' | b'\n' => lines.push((i + 1) as u32),
                _ => {}
            }
            i += 1;
        }
        let mut hasher = std::collections::hash_map::DefaultHasher::new();
        text.hash(&mut hasher);
        Self {
            name: name.into(),
            text,
            lines: lines.into(),
            hash: hasher.finish(),
            scanned: Arc::default(),
        }
    }

    /// The bytes of the text handed out so far to be scanned (to miette's renderer, which
    /// reads from the start of what it is given to the end of the lines it shows, and to find
    /// columns), by this value and its clones: the rendering work, which a test compares across
    /// file sizes to keep rendering linear in the number of diagnostics.
    pub fn scanned(&self) -> u64 {
        self.scanned.load(std::sync::atomic::Ordering::Relaxed)
    }

    fn scan(&self, bytes: usize) {
        self.scanned
            .fetch_add(bytes as u64, std::sync::atomic::Ordering::Relaxed);
    }

    /// The text.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// The 0-based line that holds byte `offset`.
    fn line_of(&self, offset: usize) -> usize {
        self.lines
            .partition_point(|start| *start as usize <= offset)
            .saturating_sub(1)
    }

    /// The 1-based line and column (in characters) of a byte offset.
    pub fn line_column(&self, offset: usize) -> (usize, usize) {
        let offset = offset.min(self.text.len());
        let line = self.line_of(offset);
        let start = self.lines[line] as usize;
        self.scan(offset - start);
        let column = self
            .text
            .get(start..offset)
            .map_or(0, |before| before.chars().count());
        (line + 1, column + 1)
    }
}

impl SourceText {
    /// For a span inside one very long line (a whole file on one line, say), only the part of
    /// the line around the span, without context lines: printing the whole line with each of
    /// thousands of diagnostics would print the file thousands of times.
    fn clip_long_line<'a>(
        &'a self,
        span: &miette::SourceSpan,
        context_lines_before: usize,
    ) -> Option<miette::MietteSpanContents<'a>> {
        const LONG_LINE: usize = 1000;
        const MARGIN: usize = 120;
        let line = self.line_of(span.offset());
        let line_start = self.lines[line] as usize;
        let line_end = self
            .lines
            .get(line + 1)
            .map_or(self.text.len(), |next| *next as usize);
        let line_end = line_start.max(
            line_end
                - self.text[line_start..line_end].len().saturating_sub(
                    self.text[line_start..line_end]
                        .trim_end_matches(['\r', '\n'])
                        .len(),
                ),
        );
        let end = span.offset() + span.len();
        if line_end - line_start <= LONG_LINE || end > line_end {
            return None;
        }
        let floor = |mut at: usize| {
            while !self.text.is_char_boundary(at) {
                at -= 1;
            }
            at
        };
        let ceil = |mut at: usize| {
            while !self.text.is_char_boundary(at) {
                at += 1;
            }
            at
        };
        let start = if context_lines_before == 0 {
            span.offset()
        } else {
            floor(span.offset().saturating_sub(MARGIN).max(line_start))
        };
        let stop = ceil((end + MARGIN).min(line_end)).max(end);
        self.scan(stop - start);
        Some(miette::MietteSpanContents::new_named(
            self.name.clone(),
            &self.text.as_bytes()[start..stop],
            miette::SourceSpan::new(start.into(), stop - start),
            line,
            start - line_start,
            line + 1,
        ))
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
        self.name == other.name
            && (Arc::ptr_eq(&self.text, &other.text)
                || (self.hash == other.hash && self.text == other.text))
    }
}

impl Eq for SourceText {}

impl miette::SourceCode for SourceText {
    /// Hands miette only the lines around the span: miette finds lines by scanning from the
    /// start of what it is given, so the window starts one line before the context it needs.
    fn read_span<'a>(
        &'a self,
        span: &miette::SourceSpan,
        context_lines_before: usize,
        context_lines_after: usize,
    ) -> Result<Box<dyn miette::SpanContents<'a> + 'a>, miette::MietteError> {
        if let Some(clipped) = self.clip_long_line(span, context_lines_before) {
            return Ok(Box::new(clipped));
        }
        let first_line = self
            .line_of(span.offset())
            .saturating_sub(context_lines_before + 1);
        let window_start = self.lines[first_line] as usize;
        let window = &self.text.as_bytes()[window_start.min(self.text.len())..];
        let local = miette::SourceSpan::new(
            span.offset().saturating_sub(window_start).into(),
            span.len(),
        );
        let contents = window.read_span(&local, context_lines_before, context_lines_after)?;
        let found = *contents.span();
        self.scan(found.offset() + found.len());
        Ok(Box::new(miette::MietteSpanContents::new_named(
            self.name.clone(),
            contents.data(),
            miette::SourceSpan::new((found.offset() + window_start).into(), found.len()),
            contents.line() + first_line,
            contents.column(),
            contents.line_count() + first_line,
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
    use miette::SourceCode;

    #[test]
    fn source_windows_place_spans_as_the_whole_text_does() {
        let text = "harness a\r\n\nconst X: Int = 1\rconst Y: Int = 2\n\n  layer l {\n}\ntail";
        let source = SourceText::new("a.harness", Arc::from(text));
        for start in 0..text.len() {
            for len in [0, 1, 5] {
                for (before, after) in [(0, 0), (1, 1), (2, 3)] {
                    let span = miette::SourceSpan::new(start.into(), len.min(text.len() - start));
                    let whole = text.read_span(&span, before, after);
                    let window = source.read_span(&span, before, after);
                    match (whole, window) {
                        (Ok(whole), Ok(window)) => {
                            assert_eq!(whole.data(), window.data(), "{start} {len}");
                            assert_eq!(whole.span(), window.span(), "{start} {len}");
                            assert_eq!(whole.line(), window.line(), "{start} {len}");
                            assert_eq!(whole.column(), window.column(), "{start} {len}");
                            assert_eq!(whole.line_count(), window.line_count());
                        }
                        (Err(_), Err(_)) => {}
                        (whole, window) => {
                            panic!("{start} {len}: {:?} {:?}", whole.is_ok(), window.is_ok())
                        }
                    }
                }
            }
        }
        assert_eq!(source.line_column(0), (1, 1));
        assert_eq!(source.line_column(12), (3, 1));
        assert_eq!(source.line_column(text.len()), (8, 5));
    }

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
