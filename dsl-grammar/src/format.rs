//! The canonical formatter behind `harness fmt`.
//!
//! [`format()`] parses a file and prints its syntax tree in one canonical layout: two-space
//! indentation, one member, field, statement or rule per line, `{` on the line of its header,
//! spaces around binary operators, and lines of at most [`WIDTH`] characters where the code
//! allows it. Blank lines between entries are kept (a run collapses to one); everything else
//! about the original layout is forgotten.
//!
//! # How it works
//!
//! The printer walks the tree and builds a small document (`Doc`) in the style of Wadler's
//! "prettier printer": text, line breaks that become a space or a newline, groups that are laid
//! out flat when they fit and broken otherwise, and indentation. The renderer then chooses the
//! layout of each group from the outside in, so the outermost construct breaks first.
//!
//! Comments are not in the tree; they come from the token stream. Each comment is either *own
//! line* (only whitespace before it on its line), printed as a leading comment on its own line
//! before the node that follows it, or *trailing* (code before it on its line), printed at the
//! end of the line of the code before it. The printer releases comments in source order at
//! fixed points, the start of every node, the separators of lists and the closing braces of
//! blocks, so a comment always stays between the same two pieces of code and never leaves the
//! declaration it was written in.
//!
//! # Safety net
//!
//! A file with syntax errors is not formatted. After formatting, the output is parsed again and
//! compared with the input: the same tree (ignoring spans) and the same comments. If they differ,
//! which would be a bug in this module, [`format()`] returns [`FormatError::Unstable`] instead of
//! text that would change the program or lose a comment.

use std::fmt;

use crate::ast::*;
use crate::lexer::{Token, TokenKind};
use crate::{Parse, SyntaxError, parse};

use TokenKind as K;

/// The line width the formatter fills up to before breaking a construct over several lines.
pub const WIDTH: usize = 100;

/// The indentation of one nesting level, in spaces.
const INDENT: usize = 2;

/// Why a text could not be formatted.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FormatError {
    /// The text has syntax errors, in source order; it is left as it is.
    Syntax(Vec<SyntaxError>),
    /// The formatted text would not parse back to the same tree with the same comments. This is
    /// a bug in the formatter; the message says what differed, and no text is produced so that
    /// nothing is overwritten with a changed program.
    Unstable(String),
}

impl fmt::Display for FormatError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FormatError::Syntax(errors) => match errors.first() {
                Some(first) if errors.len() == 1 => write!(f, "syntax error: {}", first.message),
                Some(first) => write!(
                    f,
                    "{} syntax errors, the first: {}",
                    errors.len(),
                    first.message
                ),
                None => write!(f, "syntax errors"),
            },
            FormatError::Unstable(what) => {
                write!(f, "the formatter could not format this file safely: {what}")
            }
        }
    }
}

impl std::error::Error for FormatError {}

/// Formats a whole `.harness` file into the canonical layout.
///
/// Returns the formatted text (ending with a newline unless it is empty), or the syntax errors
/// of `text`. Formatting is idempotent: formatting the result again gives the same text.
pub fn format(text: &str) -> Result<String, FormatError> {
    let parsed = parse(text);
    if !parsed.errors.is_empty() {
        return Err(FormatError::Syntax(parsed.errors));
    }
    let mut printer = Printer::new(text, &parsed.tokens);
    let doc = printer.file(&parsed.file);
    let output = render(&doc, WIDTH);
    verify(text, &parsed, &output)?;
    Ok(output)
}

/// The 1-based line and column (counted in characters) of byte `offset` in `text`, for
/// reporting errors as `file:line:col`. Offsets past the end count as the end of the text.
pub fn line_col(text: &str, offset: u32) -> (usize, usize) {
    let mut offset = (offset as usize).min(text.len());
    while !text.is_char_boundary(offset) {
        offset -= 1;
    }
    let before = &text[..offset];
    let line = before.matches('\n').count() + 1;
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    let col = before[line_start..].chars().count() + 1;
    (line, col)
}

/// Checks that `output` parses to the tree of `input` (spans aside) with the same comments.
fn verify(input: &str, parsed: &Parse, output: &str) -> Result<(), FormatError> {
    let reparsed = parse(output);
    if let Some(error) = reparsed.errors.first() {
        return Err(FormatError::Unstable(format!(
            "the output has a syntax error: {}",
            error.message
        )));
    }
    if erase_spans(&format!("{:?}", parsed.file)) != erase_spans(&format!("{:?}", reparsed.file)) {
        return Err(FormatError::Unstable(
            "the output parses to a different syntax tree".to_string(),
        ));
    }
    if comment_texts(input, &parsed.tokens) != comment_texts(output, &reparsed.tokens) {
        return Err(FormatError::Unstable(
            "the output does not have the same comments".to_string(),
        ));
    }
    Ok(())
}

/// Removes every `Span { start: .., end: .. }` from the debug rendering of a tree, so that two
/// trees that differ only in where their nodes sit compare equal.
fn erase_spans(debug: &str) -> String {
    const MARK: &str = "Span { start: ";
    let mut out = String::with_capacity(debug.len());
    let mut rest = debug;
    while let Some(at) = rest.find(MARK) {
        out.push_str(&rest[..at]);
        rest = &rest[at..];
        match rest.find('}') {
            Some(close) => rest = &rest[close + 1..],
            None => break,
        }
    }
    out.push_str(rest);
    out
}

/// The comments of a text, each without trailing whitespace, sorted: a multiset to compare.
fn comment_texts(text: &str, tokens: &[Token]) -> Vec<String> {
    let mut comments: Vec<String> = tokens
        .iter()
        .filter(|t| matches!(t.kind, K::Comment | K::DocComment))
        .map(|t| comment_text(text, *t))
        .collect();
    comments.sort();
    comments
}

/// The text of a comment token as it is printed: without trailing whitespace, which the
/// output never has (the parser leaves it out of documentation text too).
fn comment_text(text: &str, token: Token) -> String {
    text[token.span.range()].trim_end().to_string()
}

/// True when `text[from..to]` contains an empty line: two line feeds with only whitespace
/// between them.
fn has_blank_line(text: &str, from: u32, to: u32) -> bool {
    let Some(slice) = text.get(from as usize..to as usize) else {
        return false;
    };
    let mut seen_newline = false;
    let mut only_space = true;
    for byte in slice.bytes() {
        match byte {
            b'\n' => {
                if seen_newline && only_space {
                    return true;
                }
                seen_newline = true;
                only_space = true;
            }
            b' ' | b'\t' | b'\r' => {}
            _ => only_space = false,
        }
    }
    false
}

// -------------------------------------------------------------------------------------------
// The document
// -------------------------------------------------------------------------------------------

/// A layout-independent description of the output, chosen between flat and broken per group.
#[derive(Clone, Debug)]
enum Doc {
    /// Text without line feeds.
    Text(String),
    /// A space when the enclosing group is flat, a line break when it is broken.
    Line,
    /// Nothing when the enclosing group is flat, a line break when it is broken.
    SoftLine,
    /// Always a line break; forces the enclosing groups to break.
    HardLine,
    /// An empty line (unless at the start of the output or right after an opening bracket, or
    /// already there); forces the enclosing groups to break.
    BlankLine,
    /// Text printed only when the enclosing group is broken, such as a trailing comma.
    IfBreak(&'static str),
    /// The contents, with line breaks inside indented one more level.
    Indent(Box<Doc>),
    /// The contents, flat if they fit on the line and nothing forces a break; the flag records
    /// whether something does.
    Group(Box<Doc>, bool),
    /// A sequence.
    Concat(Vec<Doc>),
    /// A comment on its own line; the flag asks for an empty line before it.
    LeadingComment(String, bool),
    /// A comment at the end of the current line.
    TrailingComment(String),
}

impl Doc {
    /// True when the document contains a line break that no layout can avoid.
    fn forces_break(&self) -> bool {
        crate::stack::guarded(|| self.forces_break_here())
    }

    /// [`Doc::forces_break`] on the current stack segment.
    fn forces_break_here(&self) -> bool {
        match self {
            Doc::Text(_) | Doc::Line | Doc::SoftLine | Doc::IfBreak(_) => false,
            Doc::HardLine | Doc::BlankLine | Doc::LeadingComment(..) | Doc::TrailingComment(_) => {
                true
            }
            Doc::Indent(inner) => inner.forces_break(),
            Doc::Group(_, forced) => *forced,
            Doc::Concat(docs) => docs.iter().any(Doc::forces_break),
        }
    }
}

fn text(s: impl Into<String>) -> Doc {
    Doc::Text(s.into())
}

fn concat(docs: Vec<Doc>) -> Doc {
    Doc::Concat(docs)
}

fn group(docs: Vec<Doc>) -> Doc {
    let inner = Doc::Concat(docs);
    let forced = inner.forces_break();
    Doc::Group(Box::new(inner), forced)
}

fn indent(docs: Vec<Doc>) -> Doc {
    Doc::Indent(Box::new(Doc::Concat(docs)))
}

/// How a group is laid out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mode {
    Flat,
    Break,
}

/// The output buffer of the renderer, which owns the rules about line feeds: no trailing
/// whitespace, at most one empty line in a row, no empty line right after an opening bracket,
/// and nothing after a comment on its line.
struct Out {
    buf: String,
    /// The column of the end of `buf`.
    col: usize,
    /// At the start of a line whose indentation has not been written yet.
    need_indent: bool,
    /// A comment ends the current line: the next output goes on a new line.
    pending_newline: bool,
}

impl Out {
    fn at_line_start(&self) -> bool {
        self.buf.is_empty() || self.buf.ends_with('\n')
    }

    /// The column the next text would start at.
    fn column(&self, indent: usize) -> usize {
        if self.need_indent || self.pending_newline || self.buf.is_empty() {
            indent
        } else {
            self.col
        }
    }

    fn trim_trailing_spaces(&mut self) {
        let trimmed = self.buf.trim_end_matches(' ').len();
        self.buf.truncate(trimmed);
    }

    fn newline(&mut self) {
        self.pending_newline = false;
        self.trim_trailing_spaces();
        if self.buf.is_empty() || self.buf.ends_with("\n\n") {
            // Never start the output with empty lines, never print two empty lines in a row.
        } else {
            self.buf.push('\n');
        }
        self.need_indent = true;
        self.col = 0;
    }

    fn ensure_line_start(&mut self) {
        if self.pending_newline || !self.at_line_start() {
            self.newline();
        }
    }

    fn text(&mut self, indent: usize, s: &str) {
        if self.pending_newline {
            self.newline();
        }
        let mut s = s;
        if self.need_indent || self.buf.is_empty() {
            s = s.trim_start_matches(' ');
            if s.is_empty() {
                return;
            }
            self.buf.extend(std::iter::repeat_n(' ', indent));
            self.col = indent;
            self.need_indent = false;
        }
        self.buf.push_str(s);
        self.col += s.chars().count();
    }

    fn space(&mut self) {
        if self.pending_newline {
            self.newline();
        } else if !self.need_indent && !self.buf.is_empty() {
            self.buf.push(' ');
            self.col += 1;
        }
    }

    fn blank_line(&mut self) {
        if self.buf.is_empty() {
            return;
        }
        self.ensure_line_start();
        let last = self.buf.trim_end().chars().last();
        if matches!(last, Some('{' | '(' | '[') | None) || self.buf.ends_with("\n\n") {
            return;
        }
        self.buf.push('\n');
    }

    fn leading_comment(&mut self, indent: usize, comment: &str, blank_before: bool) {
        self.ensure_line_start();
        if blank_before {
            self.blank_line();
        }
        self.text(indent, comment);
        self.pending_newline = true;
    }

    fn trailing_comment(&mut self, indent: usize, comment: &str) {
        if self.pending_newline || self.need_indent || self.buf.is_empty() {
            self.text(indent, comment);
        } else {
            self.trim_trailing_spaces();
            self.buf.push(' ');
            self.buf.push_str(comment);
        }
        self.pending_newline = true;
    }

    fn finish(mut self) -> String {
        self.trim_trailing_spaces();
        let trimmed = self.buf.trim_end_matches('\n').len();
        self.buf.truncate(trimmed);
        if !self.buf.is_empty() {
            self.buf.push('\n');
        }
        self.buf
    }
}

/// Lays the document out within `width` columns.
fn render(doc: &Doc, width: usize) -> String {
    let mut out = Out {
        buf: String::new(),
        col: 0,
        need_indent: true,
        pending_newline: false,
    };
    let mut stack: Vec<(usize, Mode, &Doc)> = vec![(0, Mode::Break, doc)];
    while let Some((ind, mode, doc)) = stack.pop() {
        match doc {
            Doc::Text(s) => out.text(ind, s),
            Doc::Line => match mode {
                Mode::Flat => out.space(),
                Mode::Break => out.newline(),
            },
            Doc::SoftLine => {
                if mode == Mode::Break {
                    out.newline();
                }
            }
            Doc::HardLine => out.newline(),
            Doc::BlankLine => out.blank_line(),
            Doc::IfBreak(s) => {
                if mode == Mode::Break {
                    out.text(ind, s);
                }
            }
            Doc::Indent(inner) => stack.push((ind + INDENT, mode, inner)),
            Doc::Concat(docs) => stack.extend(docs.iter().rev().map(|d| (ind, mode, d))),
            Doc::Group(inner, forced) => {
                let flat = !forced
                    && (mode == Mode::Flat
                        || fits(inner, &stack, width.saturating_sub(out.column(ind))));
                let mode = if flat { Mode::Flat } else { Mode::Break };
                stack.push((ind, mode, inner));
            }
            Doc::LeadingComment(comment, blank) => out.leading_comment(ind, comment, *blank),
            Doc::TrailingComment(comment) => out.trailing_comment(ind, comment),
        }
    }
    out.finish()
}

/// True when `doc` laid out flat, followed by the rest of the output up to its next line
/// break, fits in `remaining` columns.
fn fits(doc: &Doc, rest: &[(usize, Mode, &Doc)], remaining: usize) -> bool {
    let mut remaining = remaining as isize;
    let mut local: Vec<(Mode, &Doc)> = vec![(Mode::Flat, doc)];
    let mut rest_index = rest.len();
    loop {
        let (mode, doc) = match local.pop() {
            Some(next) => next,
            None => {
                if rest_index == 0 {
                    return true;
                }
                rest_index -= 1;
                let (_, mode, doc) = rest[rest_index];
                (mode, doc)
            }
        };
        match doc {
            Doc::Text(s) => remaining -= s.chars().count() as isize,
            Doc::Line => match mode {
                Mode::Flat => remaining -= 1,
                Mode::Break => return true,
            },
            Doc::SoftLine => {
                if mode == Mode::Break {
                    return true;
                }
            }
            Doc::HardLine | Doc::BlankLine | Doc::LeadingComment(..) | Doc::TrailingComment(_) => {
                return true;
            }
            Doc::IfBreak(s) => {
                if mode == Mode::Break {
                    remaining -= s.len() as isize;
                }
            }
            Doc::Indent(inner) => local.push((mode, inner)),
            Doc::Concat(docs) => local.extend(docs.iter().rev().map(|d| (mode, d))),
            Doc::Group(inner, forced) => {
                local.push((if *forced { Mode::Break } else { mode }, inner));
            }
        }
        if remaining < 0 {
            return false;
        }
    }
}

// -------------------------------------------------------------------------------------------
// The printer: tree to document
// -------------------------------------------------------------------------------------------

/// A comment of the source, classified for printing.
struct Comment {
    span: Span,
    text: String,
    /// Nothing but whitespace before it on its line.
    own_line: bool,
    /// An empty line separates it from the code or comment before it.
    blank_before: bool,
}

/// One segment of a postfix chain such as `a.b(c)[d]`.
enum Segment<'e> {
    Field(&'e Ident),
    Method(&'e Ident, &'e [Arg]),
    Call(&'e [Arg], Span),
    Index(&'e Expr),
}

/// Builds the document of a file, releasing comments as it passes their positions.
struct Printer<'t> {
    text: &'t str,
    /// The significant tokens, to find the positions of punctuation the tree does not record.
    tokens: Vec<Token>,
    comments: Vec<Comment>,
    /// The first comment not printed yet.
    next: usize,
}

/// Binding strength of expressions for parenthesization, loosest first, following the table
/// in `docs/language.md`; closures bind loosest of all because their body extends as far as
/// it can.
const PREC_CLOSURE: u8 = 0;
const PREC_OR: u8 = 1;
const PREC_AND: u8 = 2;
const PREC_NOT: u8 = 3;
const PREC_CMP: u8 = 4;
const PREC_SUM: u8 = 5;
const PREC_PRODUCT: u8 = 6;
const PREC_NEG: u8 = 7;
const PREC_POSTFIX: u8 = 8;

fn binary_prec(op: BinaryOp) -> u8 {
    use BinaryOp::*;
    match op {
        Or => PREC_OR,
        And => PREC_AND,
        Eq | Ne | Lt | Le | Gt | Ge | In | NotIn => PREC_CMP,
        Add | Sub => PREC_SUM,
        Mul | Div | Rem => PREC_PRODUCT,
    }
}

fn prec(expr: &Expr) -> u8 {
    match &expr.kind {
        ExprKind::Binary(op, ..) => binary_prec(*op),
        ExprKind::Unary(UnaryOp::Not, _) => PREC_NOT,
        ExprKind::Unary(UnaryOp::Neg, _) => PREC_NEG,
        ExprKind::Closure(..) => PREC_CLOSURE,
        _ => PREC_POSTFIX + 1,
    }
}

/// Expressions that open their own braces or brackets: after `=` they stay on the line of the
/// `=` and break inside, instead of moving to the next line. A call counts unless it is a
/// method chain, which reads better moved to its own line and broken before each `.`.
fn is_block_like(expr: &Expr) -> bool {
    match &expr.kind {
        ExprKind::If { .. }
        | ExprKind::Match(..)
        | ExprKind::Block(..)
        | ExprKind::Record { .. }
        | ExprKind::List(_)
        | ExprKind::Call(..) => true,
        ExprKind::MethodCall(receiver, ..) => method_calls(receiver) == 0,
        _ => false,
    }
}

/// How many method calls a postfix chain makes, not counting those inside arguments.
fn method_calls(expr: &Expr) -> usize {
    match &expr.kind {
        ExprKind::MethodCall(inner, ..) => 1 + method_calls(inner),
        ExprKind::Field(inner, _) | ExprKind::Call(inner, _) | ExprKind::Index(inner, _) => {
            method_calls(inner)
        }
        _ => 0,
    }
}

fn guard_start(guard: &Guard) -> u32 {
    match guard {
        Guard::Cond(cond) => cond.span.start,
        Guard::Let(pattern, _) => pattern.span.start,
    }
}

fn path_text(path: &Path) -> String {
    let names: Vec<&str> = path.segments.iter().map(|s| s.name.as_str()).collect();
    names.join(".")
}

fn assign_op(op: AssignOp) -> &'static str {
    match op {
        AssignOp::Set => "=",
        AssignOp::Add => "+=",
        AssignOp::Sub => "-=",
        AssignOp::Mul => "*=",
    }
}

impl<'t> Printer<'t> {
    fn new(text: &'t str, all_tokens: &[Token]) -> Self {
        let mut tokens = Vec::new();
        let mut comments = Vec::new();
        // The end of the last token that is neither whitespace nor a line feed, and whether a
        // significant token has been seen on the current line.
        let mut last_end = 0;
        let mut code_on_line = false;
        for token in all_tokens {
            match token.kind {
                K::Whitespace => {}
                K::Newline => code_on_line = false,
                K::Comment | K::DocComment => {
                    comments.push(Comment {
                        span: token.span,
                        text: comment_text(text, *token),
                        own_line: !code_on_line,
                        blank_before: has_blank_line(text, last_end, token.span.start),
                    });
                    last_end = token.span.end;
                }
                _ => {
                    tokens.push(*token);
                    code_on_line = true;
                    last_end = token.span.end;
                }
            }
        }
        Printer {
            text,
            tokens,
            comments,
            next: 0,
        }
    }

    // ---------------------------------------------------------------------------------------
    // Positions and comments
    // ---------------------------------------------------------------------------------------

    /// The start of the first significant token of `kind` at or after `from`; `from` itself if
    /// there is none (which cannot happen in a file that parsed).
    fn next_token(&self, kind: TokenKind, from: u32) -> u32 {
        let first = self.tokens.partition_point(|t| t.span.start < from);
        self.tokens[first..]
            .iter()
            .find(|t| t.kind == kind)
            .map_or(from, |t| t.span.start)
    }

    /// The start of the significant token right before `pos`.
    fn previous_token(&self, pos: u32) -> u32 {
        let index = self.tokens.partition_point(|t| t.span.start < pos);
        index
            .checked_sub(1)
            .map_or(pos, |i| self.tokens[i].span.start)
    }

    /// The closing token of a list whose last entry ends at `last_end`, or, for an empty list,
    /// whose opening token is the first `open` at or after `from`.
    fn close_of(&self, open: TokenKind, close: TokenKind, from: u32, last_end: Option<u32>) -> u32 {
        match last_end {
            Some(end) => self.next_token(close, end),
            None => {
                let open_at = self.next_token(open, from);
                self.next_token(close, open_at + 1)
            }
        }
    }

    /// The literal token of `kind` inside `span` (a literal's span may include parentheses).
    fn literal(&self, span: Span, kind: TokenKind) -> String {
        let first = self.tokens.partition_point(|t| t.span.start < span.start);
        self.tokens[first..]
            .iter()
            .take_while(|t| t.span.end <= span.end)
            .find(|t| t.kind == kind)
            .map_or_else(
                || self.text[span.range()].to_string(),
                |t| self.text[t.span.range()].to_string(),
            )
    }

    /// Where the next unprinted comment starts, if it starts before `pos`.
    fn pending_comment_before(&self, pos: u32) -> Option<u32> {
        self.comments
            .get(self.next)
            .map(|c| c.span.start)
            .filter(|start| *start < pos)
    }

    /// Prints every comment that starts before `pos`: own-line comments on their own lines,
    /// trailing ones at the end of the current line. With `blank_after`, an empty line between
    /// the last of them and `pos` is kept.
    fn flush(&mut self, pos: u32, blank_after: bool, out: &mut Vec<Doc>) {
        let mut last_own_line_end = None;
        while let Some(comment) = self.comments.get(self.next) {
            if comment.span.start >= pos {
                break;
            }
            if comment.own_line {
                out.push(Doc::LeadingComment(
                    comment.text.clone(),
                    comment.blank_before,
                ));
                last_own_line_end = Some(comment.span.end);
            } else {
                out.push(Doc::TrailingComment(comment.text.clone()));
                last_own_line_end = None;
            }
            self.next += 1;
        }
        if blank_after
            && let Some(end) = last_own_line_end
            && has_blank_line(self.text, end, pos)
        {
            out.push(Doc::BlankLine);
        }
    }

    /// Prints the trailing comments that start before `pos`, up to the first own-line comment:
    /// the comments at the end of the line of the code just printed.
    fn flush_trailing(&mut self, pos: u32, out: &mut Vec<Doc>) {
        while let Some(comment) = self.comments.get(self.next) {
            if comment.span.start >= pos || comment.own_line {
                break;
            }
            out.push(Doc::TrailingComment(comment.text.clone()));
            self.next += 1;
        }
    }

    /// Text the printer has no layout for, printed as written. Only error nodes need it, and
    /// files with errors are never printed; the comments inside count as printed.
    fn verbatim(&mut self, span: Span) -> Doc {
        while self
            .comments
            .get(self.next)
            .is_some_and(|c| c.span.start < span.end)
        {
            self.next += 1;
        }
        text(self.text[span.range()].trim())
    }

    // ---------------------------------------------------------------------------------------
    // Lists
    // ---------------------------------------------------------------------------------------

    /// A braced block with one entry per line: `{`, the entries indented, `}` on its own line.
    /// Empty lines between entries are kept; `close` is the position of the `}`.
    fn vblock<T>(
        &mut self,
        entries: &[T],
        close: u32,
        span: impl Fn(&T) -> Span,
        mut print: impl FnMut(&mut Self, &T) -> Doc,
    ) -> Doc {
        if entries.is_empty() && self.pending_comment_before(close).is_none() {
            return text("{}");
        }
        let mut inner = Vec::new();
        let mut prev_end = None;
        for entry in entries {
            let entry_span = span(entry);
            self.flush_trailing(entry_span.start, &mut inner);
            inner.push(Doc::HardLine);
            if let Some(end) = prev_end {
                let to = self
                    .pending_comment_before(entry_span.start)
                    .unwrap_or(entry_span.start);
                if has_blank_line(self.text, end, to) {
                    inner.push(Doc::BlankLine);
                }
            }
            self.flush(entry_span.start, true, &mut inner);
            inner.push(print(self, entry));
            prev_end = Some(entry_span.end);
        }
        self.flush_trailing(close, &mut inner);
        self.flush(close, false, &mut inner);
        concat(vec![text("{"), indent(inner), Doc::HardLine, text("}")])
    }

    /// A bracketed, comma-separated list that stays on one line when it fits and otherwise puts
    /// one entry per line with a trailing comma. `pad` puts spaces inside the brackets on one
    /// line (`{ a, b }`); `close` is the position of the closing bracket.
    fn hlist<T>(
        &mut self,
        (open, close_text, pad): (&str, &str, bool),
        entries: &[T],
        close: u32,
        span: impl Fn(&T) -> Span,
        mut print: impl FnMut(&mut Self, &T) -> Doc,
    ) -> Doc {
        let edge = || if pad { Doc::Line } else { Doc::SoftLine };
        if entries.is_empty() {
            if self.pending_comment_before(close).is_none() {
                return text(format!("{open}{close_text}"));
            }
            let mut inner = Vec::new();
            self.flush_trailing(close, &mut inner);
            self.flush(close, false, &mut inner);
            return group(vec![
                text(open),
                indent(inner),
                Doc::SoftLine,
                text(close_text),
            ]);
        }
        let mut inner = Vec::new();
        self.flush_trailing(span(&entries[0]).start, &mut inner);
        inner.push(edge());
        for (i, entry) in entries.iter().enumerate() {
            self.flush(span(entry).start, false, &mut inner);
            inner.push(print(self, entry));
            match entries.get(i + 1) {
                Some(next) => {
                    inner.push(text(","));
                    self.flush_trailing(span(next).start, &mut inner);
                    inner.push(Doc::Line);
                }
                None => inner.push(Doc::IfBreak(",")),
            }
        }
        self.flush_trailing(close, &mut inner);
        self.flush(close, false, &mut inner);
        group(vec![text(open), indent(inner), edge(), text(close_text)])
    }

    /// ` = value` after a declaration head: block-like values stay on the line and break
    /// inside; others move to the next line, indented, when they do not fit.
    fn rhs(&mut self, op: &str, value: &Expr) -> Doc {
        let mut docs = vec![text(format!(" {op}"))];
        self.flush_trailing(value.span.start, &mut docs);
        if is_block_like(value) {
            docs.push(text(" "));
            docs.push(self.expr(value, false));
        } else {
            docs.push(group(vec![indent(vec![
                Doc::Line,
                self.expr(value, false),
            ])]));
        }
        concat(docs)
    }

    // ---------------------------------------------------------------------------------------
    // Files, items and members
    // ---------------------------------------------------------------------------------------

    fn file(&mut self, file: &File) -> Doc {
        let mut docs = Vec::new();
        let mut prev_end: Option<u32> = None;
        let mut entry =
            |p: &mut Self, docs: &mut Vec<Doc>, span: Span, doc: &dyn Fn(&mut Self) -> Doc| {
                p.flush_trailing(span.start, docs);
                if let Some(end) = prev_end {
                    docs.push(Doc::HardLine);
                    let to = p.pending_comment_before(span.start).unwrap_or(span.start);
                    if has_blank_line(p.text, end, to) {
                        docs.push(Doc::BlankLine);
                    }
                }
                p.flush(span.start, true, docs);
                docs.push(doc(p));
                prev_end = Some(span.end);
            };
        if let Some(module) = &file.module {
            let start = self.next_token(K::KwHarness, 0);
            let span = Span {
                start,
                end: module.span.end,
            };
            entry(self, &mut docs, span, &|p| {
                let mut header = vec![text("harness ")];
                p.flush(module.span.start, false, &mut header);
                header.push(text(path_text(module)));
                concat(header)
            });
        }
        for item in &file.items {
            entry(self, &mut docs, item.span(), &|p| p.item(item));
        }
        let end = self.text.len() as u32;
        self.flush_trailing(end, &mut docs);
        self.flush(end, false, &mut docs);
        concat(docs)
    }

    fn item(&mut self, item: &Item) -> Doc {
        match item {
            Item::Use(it) => self.use_item(it),
            Item::TypeAlias(it) => concat(vec![
                text(format!("type {} = ", it.name.name)),
                self.ty(&it.ty),
            ]),
            Item::Enum(it) => {
                let close = it.span.end.saturating_sub(1);
                let variants = self.hlist(
                    ("{", "}", true),
                    &it.variants,
                    close,
                    |v| v.span,
                    |p, v| p.variant(v),
                );
                concat(vec![text(format!("enum {} ", it.name.name)), variants])
            }
            Item::Const(it) => concat(vec![
                text(format!("const {}: ", it.name.name)),
                self.ty(&it.ty),
                self.rhs("=", &it.value),
            ]),
            Item::Config(it) => {
                let close = it.span.end.saturating_sub(1);
                let body = self.vblock(&it.params, close, |p| p.span, |p, param| p.param(param));
                concat(vec![text("config "), body])
            }
            Item::Fn(it) => self.fn_decl(it),
            Item::Error(it) => concat(vec![
                text(format!("error {} = ", it.name.name)),
                text(self.literal(it.message.span, K::String)),
            ]),
            Item::Layer(it) => self.layer(it),
            Item::Llm(it) => self.llm(it),
            Item::Invalid(span) => self.verbatim(*span),
        }
    }

    fn use_item(&mut self, it: &Use) -> Doc {
        match &it.kind {
            // A comment before the game's name stays before it: flushed after the name, a
            // second trailing comment would have to go on a line of its own, where a doc
            // comment that documented nothing would start documenting the next item.
            UseKind::Game(name) => {
                let mut docs = vec![text("use game")];
                self.flush_trailing(name.span.start, &mut docs);
                docs.push(indent(vec![Doc::Line, text(name.name.clone())]));
                group(docs)
            }
            UseKind::Module { path, names: None } => text(format!("use {}", path_text(path))),
            UseKind::Module {
                path,
                names: Some(names),
            } => {
                let close = it.span.end.saturating_sub(1);
                let list = self.hlist(
                    ("{", "}", false),
                    names,
                    close,
                    |n| n.span,
                    |_, n| text(n.name.clone()),
                );
                concat(vec![text(format!("use {}.", path_text(path))), list])
            }
        }
    }

    fn variant(&mut self, variant: &Variant) -> Doc {
        let mut docs = vec![text(variant.name.name.clone())];
        if !variant.payload.is_empty() {
            let close = self.next_token(
                K::RParen,
                variant.payload[variant.payload.len() - 1].span().end,
            );
            docs.push(self.hlist(
                ("(", ")", false),
                &variant.payload,
                close,
                TypeExpr::span,
                |p, t| p.ty(t),
            ));
        }
        concat(docs)
    }

    fn param(&mut self, param: &Param) -> Doc {
        let mut docs = vec![
            text(format!("{}: ", param.name.name)),
            self.ty(&param.ty),
            text(" = "),
            self.operand(&param.default, PREC_SUM, false),
        ];
        if let Some(range) = &param.range {
            docs.push(text(" in "));
            docs.push(self.operand(&range.lo, PREC_SUM, false));
            docs.push(text(if range.inclusive { "..=" } else { ".." }));
            docs.push(self.operand(&range.hi, PREC_SUM, false));
        }
        concat(docs)
    }

    fn typed_params(&mut self, params: &[TypedParam], after: u32) -> Doc {
        let close = self.close_of(
            K::LParen,
            K::RParen,
            after,
            params.last().map(|p| p.span.end),
        );
        self.hlist(
            ("(", ")", false),
            params,
            close,
            |p| p.span,
            |p, param| {
                concat(vec![
                    text(format!("{}: ", param.name.name)),
                    p.ty(&param.ty),
                ])
            },
        )
    }

    fn fn_decl(&mut self, it: &FnDecl) -> Doc {
        concat(vec![
            text(format!("fn {}", it.name.name)),
            self.typed_params(&it.params, it.name.span.end),
            text(" -> "),
            self.ty(&it.ret),
            self.rhs("=", &it.body),
        ])
    }

    /// `llm name(params) -> Reply where a in 0..=9, b in {X, Y}, c len in 1..=4 { ... }`: the
    /// bounds stay on the head's line when they fit, one per line otherwise; the two templates
    /// always go on lines of their own.
    fn llm(&mut self, it: &LlmDecl) -> Doc {
        let mut head = vec![
            text(format!("llm {}", it.name.name)),
            self.typed_params(&it.params, it.name.span.end),
            text(" -> "),
            self.ty(&it.reply),
        ];
        if !it.bounds.is_empty() {
            let mut bounds = vec![Doc::Line, text("where ")];
            for (i, bound) in it.bounds.iter().enumerate() {
                if i > 0 {
                    bounds.push(text(","));
                    bounds.push(Doc::Line);
                    bounds.push(Doc::IfBreak("      "));
                }
                let path: Vec<&str> = bound.path.iter().map(|p| p.name.as_str()).collect();
                bounds.push(text(path.join(".")));
                match &bound.kind {
                    LlmBoundKind::Range(range) | LlmBoundKind::Len(range) => {
                        let word = if matches!(bound.kind, LlmBoundKind::Len(_)) {
                            " len in "
                        } else {
                            " in "
                        };
                        bounds.push(text(word));
                        bounds.push(self.operand(&range.lo, PREC_SUM, false));
                        bounds.push(text(if range.inclusive { "..=" } else { ".." }));
                        bounds.push(self.operand(&range.hi, PREC_SUM, false));
                    }
                    LlmBoundKind::Variants(variants) => {
                        let names: Vec<&str> = variants.iter().map(|v| v.name.as_str()).collect();
                        bounds.push(text(format!(" in {{{}}}", names.join(", "))));
                    }
                }
            }
            head.push(indent(bounds));
        }
        for ensure in &it.ensures {
            let mut clause = vec![
                Doc::Line,
                text("ensure "),
                self.expr(&ensure.condition, true),
            ];
            if let Some(message) = &ensure.message {
                clause.push(text(format!(
                    " else {}",
                    self.literal(message.span, K::String)
                )));
            }
            head.push(indent(clause));
        }
        if let Some(retry) = &it.retry {
            head.push(indent(vec![
                Doc::Line,
                text("retry "),
                self.operand(&retry.count, PREC_SUM, false),
                text(format!(
                    " with {}",
                    self.literal(retry.feedback.span, K::String)
                )),
            ]));
        }
        if !it.bounds.is_empty() || !it.ensures.is_empty() || it.retry.is_some() {
            head.push(Doc::Line);
        } else {
            head.push(text(" "));
        }
        let mut body = vec![text("{")];
        let mut inner = Vec::new();
        for (word, template) in [("system", &it.system), ("user", &it.user)] {
            inner.push(Doc::HardLine);
            self.flush(template.span.start, false, &mut inner);
            inner.push(text(format!(
                "{word} {}",
                self.literal(template.span, K::String)
            )));
        }
        let close = it.span.end.saturating_sub(1);
        self.flush_trailing(close, &mut inner);
        self.flush(close, false, &mut inner);
        body.push(indent(inner));
        body.push(Doc::HardLine);
        body.push(text("}"));
        concat(vec![group(head), concat(body)])
    }

    fn layer(&mut self, it: &Layer) -> Doc {
        let mut head = format!("layer {}", it.name.name);
        if let Some(role) = &it.role {
            head.push_str(" role ");
            head.push_str(&role.name);
        }
        if !it.needs.is_empty() {
            let needs: Vec<&str> = it.needs.iter().map(|n| n.name.as_str()).collect();
            head.push_str(" needs ");
            head.push_str(&needs.join(", "));
        }
        if !it.uses.is_empty() {
            let uses: Vec<String> = it.uses.iter().map(|u| format!("game.{}", u.name)).collect();
            head.push_str(" uses ");
            head.push_str(&uses.join(", "));
        }
        head.push(' ');
        let close = it.span.end.saturating_sub(1);
        let body = self.vblock(&it.members, close, Member::span, |p, m| p.member(m));
        concat(vec![text(head), body])
    }

    fn member(&mut self, member: &Member) -> Doc {
        match member {
            Member::State(it) => {
                let close = it.span.end.saturating_sub(1);
                let body = self.vblock(
                    &it.fields,
                    close,
                    |f| f.span,
                    |p, f| {
                        concat(vec![
                            text(format!("{}: ", f.name.name)),
                            p.ty(&f.ty),
                            p.rhs("=", &f.init),
                        ])
                    },
                );
                concat(vec![text("state "), body])
            }
            Member::Tunable(it) => concat(vec![text("tunable "), self.param(it)]),
            Member::TunableDefault(it) => concat(vec![
                text("tunable "),
                self.expr(&it.target, false),
                text(" = "),
                self.operand(&it.value, PREC_SUM, false),
            ]),
            Member::Computed(it) => concat(vec![
                text(format!("computed {}: ", it.name.name)),
                self.ty(&it.ty),
                self.rhs("=", &it.body),
            ]),
            Member::Fn(it) => self.fn_decl(it),
            Member::Action(it) => self.action(it),
            Member::Model(it) => {
                let head = self.signature("model", &it.effect, &it.params);
                let close = it.span.end.saturating_sub(1);
                let body = self.vblock(
                    &it.branches,
                    close,
                    |b| b.span,
                    |p, b| {
                        let observation = p.expr(&b.observation, false);
                        match &b.probability {
                            Some(probability) => concat(vec![
                                observation,
                                text(" with probability "),
                                p.expr(probability, false),
                            ]),
                            None => concat(vec![observation, text(" otherwise")]),
                        }
                    },
                );
                concat(vec![head, text(" "), body])
            }
            Member::On(it) => {
                let head = self.signature("on", &it.observation, &it.params);
                concat(vec![head, text(" "), self.block(&it.body)])
            }
            Member::Decide(it) => {
                let close = it.span.end.saturating_sub(1);
                let body = self.vblock(&it.rules, close, |r| r.span, |p, r| p.rule(r));
                concat(vec![text("decide "), body])
            }
            Member::Revise(it) => concat(vec![
                text("revise when "),
                self.expr(&it.cond, true),
                text(" "),
                self.block(&it.body),
            ]),
            Member::Machine(it) => {
                let close = it.span.end.saturating_sub(1);
                let body = self.vblock(
                    &it.chains,
                    close,
                    |c| c.span,
                    |_, c| {
                        let mut parts: Vec<&str> = Vec::new();
                        if c.any.is_some() {
                            parts.push("*");
                        }
                        parts.extend(c.states.iter().map(|s| s.name.as_str()));
                        text(parts.join(" -> "))
                    },
                );
                concat(vec![text(format!("machine {} ", it.field.name)), body])
            }
            Member::Invalid(span) => self.verbatim(*span),
        }
    }

    /// `model game.fire(cell)` or `on game.shot(cell, hit)`.
    fn signature(&mut self, keyword: &str, path: &Path, params: &[Ident]) -> Doc {
        let mut head = format!("{keyword} {}", path_text(path));
        if !params.is_empty() {
            let names: Vec<&str> = params.iter().map(|n| n.name.as_str()).collect();
            head.push('(');
            head.push_str(&names.join(", "));
            head.push(')');
        }
        text(head)
    }

    fn action(&mut self, it: &Action) -> Doc {
        let mut head = vec![
            text(format!("action {}", it.name.name)),
            self.typed_params(&it.params, it.name.span.end),
        ];
        if it.available.is_none() && it.requires.is_empty() {
            head.push(text(" "));
            head.push(self.block(&it.body));
            return concat(head);
        }
        // The clauses go on one line with the head when everything fits, and otherwise one per
        // line, indented, with the body's `{` on a line of its own.
        let mut clauses = Vec::new();
        if let Some(cond) = &it.available {
            clauses.push(Doc::Line);
            clauses.push(text("available when "));
            clauses.push(self.expr(cond, true));
        }
        for requires in &it.requires {
            self.flush_trailing(requires.span.start, &mut clauses);
            clauses.push(Doc::Line);
            self.flush(requires.span.start, false, &mut clauses);
            clauses.push(text("requires "));
            clauses.push(self.expr(&requires.cond, true));
            clauses.push(text(format!(" else fail {}", requires.code.name)));
        }
        self.flush_trailing(it.body.span.start, &mut clauses);
        head.push(indent(clauses));
        head.push(Doc::Line);
        concat(vec![group(head), self.block(&it.body)])
    }

    fn rule(&mut self, rule: &Rule) -> Doc {
        if rule.guards.is_empty() {
            return self.expr(&rule.action, false);
        }
        let mut docs = vec![text("when "), self.guards(&rule.guards), text(" =>")];
        // The comments between `=>` and the action are flushed inside the action's indent: a
        // second one goes on a line of its own, where a second pass sees an own-line comment
        // before the action and indents it with the action.
        let mut action = Vec::new();
        self.flush_trailing(rule.action.span.start, &mut action);
        action.push(Doc::Line);
        action.push(self.expr(&rule.action, false));
        docs.push(indent(action));
        group(docs)
    }

    /// Comma-separated guards; they break after the commas when they do not fit.
    fn guards(&mut self, guards: &[Guard]) -> Doc {
        let mut docs = Vec::new();
        for (i, guard) in guards.iter().enumerate() {
            if i > 0 {
                docs.push(text(","));
                self.flush_trailing(guard_start(guard), &mut docs);
                docs.push(Doc::Line);
            }
            match guard {
                Guard::Cond(cond) => docs.push(self.expr(cond, true)),
                Guard::Let(pattern, value) => {
                    docs.push(text("let "));
                    docs.push(self.pattern(pattern));
                    docs.push(text(" = "));
                    docs.push(self.expr(value, true));
                }
            }
        }
        match docs.split_first() {
            Some((first, rest)) if !rest.is_empty() => {
                group(vec![first.clone(), indent(rest.to_vec())])
            }
            _ => concat(docs),
        }
    }

    // ---------------------------------------------------------------------------------------
    // Statements
    // ---------------------------------------------------------------------------------------

    fn block(&mut self, block: &Block) -> Doc {
        let close = block.span.end.saturating_sub(1);
        self.vblock(&block.stmts, close, Stmt::span, |p, s| p.stmt(s))
    }

    fn stmt(&mut self, stmt: &Stmt) -> Doc {
        match stmt {
            Stmt::Let(pattern, value, _) => concat(vec![
                text("let "),
                self.pattern(pattern),
                self.rhs("=", value),
            ]),
            Stmt::LetEmit(pattern, effect, _) => concat(vec![
                text("let "),
                self.pattern(pattern),
                text(" = emit "),
                self.expr(effect, false),
            ]),
            Stmt::Patch(patch) => self.patch("patch", patch),
            Stmt::Revise(patch) => self.patch("revise", patch),
            Stmt::Emit(effect, _) => concat(vec![text("emit "), self.expr(effect, false)]),
            Stmt::If(it) => self.if_stmt(it),
            Stmt::Halt(it) => match &it.reason {
                HaltReason::Name(name) => text(format!("halt {}", name.name)),
                HaltReason::Text(lit) => {
                    concat(vec![text("halt "), text(self.literal(lit.span, K::String))])
                }
            },
            Stmt::Invalid(span) => self.verbatim(*span),
        }
    }

    fn patch(&mut self, keyword: &str, patch: &Patch) -> Doc {
        concat(vec![
            text(format!("{keyword} ")),
            self.expr(&patch.target, false),
            self.rhs(assign_op(patch.op), &patch.value),
        ])
    }

    fn if_stmt(&mut self, it: &IfStmt) -> Doc {
        let mut docs = vec![
            text("if "),
            self.guards(&it.guards),
            text(" "),
            self.block(&it.then),
        ];
        if let Some(otherwise) = &it.otherwise {
            docs.push(text(" else "));
            // `else { if .. }` and `else if ..` are the same tree; the second is canonical.
            match otherwise.stmts.as_slice() {
                [Stmt::If(nested)] => {
                    self.flush(nested.span.start, false, &mut docs);
                    docs.push(self.if_stmt(nested));
                }
                _ => docs.push(self.block(otherwise)),
            }
        }
        concat(docs)
    }

    // ---------------------------------------------------------------------------------------
    // Types and patterns
    // ---------------------------------------------------------------------------------------

    fn ty(&mut self, ty: &TypeExpr) -> Doc {
        let mut docs = Vec::new();
        self.flush(ty.span().start, false, &mut docs);
        match ty {
            TypeExpr::Named { name, args, .. } => {
                docs.push(text(path_text(name)));
                if !args.is_empty() {
                    docs.push(text("<"));
                    for (i, arg) in args.iter().enumerate() {
                        if i > 0 {
                            docs.push(text(", "));
                        }
                        docs.push(self.ty(arg));
                    }
                    docs.push(text(">"));
                }
            }
            TypeExpr::Record { fields, span } => {
                let close = span.end.saturating_sub(1);
                docs.push(self.hlist(
                    ("{", "}", true),
                    fields,
                    close,
                    |(name, _)| name.span,
                    |p, (name, ty)| concat(vec![text(format!("{}: ", name.name)), p.ty(ty)]),
                ));
            }
            TypeExpr::Invalid(span) => docs.push(self.verbatim(*span)),
        }
        concat(docs)
    }

    fn pattern(&mut self, pattern: &Pattern) -> Doc {
        let mut docs = Vec::new();
        self.flush(pattern.span.start, false, &mut docs);
        match &pattern.kind {
            PatternKind::Wildcard => docs.push(text("_")),
            PatternKind::Bind(name) => docs.push(text(name.name.clone())),
            PatternKind::Literal(literal) => docs.push(self.expr(literal, false)),
            PatternKind::Variant(path, args) => {
                docs.push(text(path_text(path)));
                let lower_single = path.segments.len() == 1
                    && !path.segments[0]
                        .name
                        .starts_with(|c: char| c.is_ascii_uppercase());
                if !args.is_empty() || lower_single {
                    // A lone lower-case name without parentheses would bind instead.
                    docs.push(text("("));
                    for (i, arg) in args.iter().enumerate() {
                        if i > 0 {
                            docs.push(text(", "));
                        }
                        docs.push(self.pattern(arg));
                    }
                    docs.push(text(")"));
                }
            }
            PatternKind::Error => docs.push(self.verbatim(pattern.span)),
        }
        concat(docs)
    }

    // ---------------------------------------------------------------------------------------
    // Expressions
    // ---------------------------------------------------------------------------------------

    /// An expression, after the comments before it. `no_record` is true where a record literal
    /// must be parenthesized (directly in a condition).
    fn expr(&mut self, expr: &Expr, no_record: bool) -> Doc {
        crate::stack::guarded(|| self.expr_with_comments(expr, no_record))
    }

    /// [`Printer::expr`] on the current stack segment.
    fn expr_with_comments(&mut self, expr: &Expr, no_record: bool) -> Doc {
        let mut docs = Vec::new();
        self.flush(expr.span.start, false, &mut docs);
        docs.push(self.expr_kind(expr, no_record));
        concat(docs)
    }

    /// An operand that must bind at least as tightly as `min`; parenthesized otherwise.
    /// Parentheses lift the record restriction of conditions.
    fn operand(&mut self, expr: &Expr, min: u8, no_record: bool) -> Doc {
        if prec(expr) < min {
            concat(vec![text("("), self.expr(expr, false), text(")")])
        } else {
            self.expr(expr, no_record)
        }
    }

    fn expr_kind(&mut self, expr: &Expr, no_record: bool) -> Doc {
        match &expr.kind {
            ExprKind::Int(_) => text(self.literal(expr.span, K::Int)),
            ExprKind::Float(_) => text(self.literal(expr.span, K::Float)),
            ExprKind::String(_) => text(self.literal(expr.span, K::String)),
            ExprKind::Bool(value) => text(if *value { "true" } else { "false" }),
            ExprKind::Name(name) => text(name.name.clone()),
            ExprKind::List(items) => {
                let close = self.close_of(
                    K::LBracket,
                    K::RBracket,
                    expr.span.start,
                    items.last().map(|i| i.span.end),
                );
                self.hlist(
                    ("[", "]", false),
                    items,
                    close,
                    |e| e.span,
                    |p, e| p.expr(e, false),
                )
            }
            ExprKind::Record { name, fields } => {
                let close = self.close_of(
                    K::LBrace,
                    K::RBrace,
                    name.span.end,
                    fields.last().map(|(_, value)| value.span.end),
                );
                let body = self.hlist(
                    ("{", "}", true),
                    fields,
                    close,
                    |(name, _)| name.span,
                    |p, (name, value)| {
                        concat(vec![text(format!("{}: ", name.name)), p.expr(value, false)])
                    },
                );
                let record = concat(vec![text(format!("{} ", path_text(name))), body]);
                if no_record {
                    concat(vec![text("("), record, text(")")])
                } else {
                    record
                }
            }
            ExprKind::Field(..)
            | ExprKind::Call(..)
            | ExprKind::MethodCall(..)
            | ExprKind::Index(..) => self.postfix(expr, no_record),
            ExprKind::Unary(UnaryOp::Neg, operand) => {
                concat(vec![text("-"), self.operand(operand, PREC_NEG, no_record)])
            }
            ExprKind::Unary(UnaryOp::Not, operand) => concat(vec![
                text("not "),
                self.operand(operand, PREC_NOT, no_record),
            ]),
            ExprKind::Binary(..) => self.binary(expr, no_record),
            ExprKind::If { .. } => self.if_expr(expr),
            ExprKind::Match(scrutinee, arms) => {
                let close = self.close_of(
                    K::LBrace,
                    K::RBrace,
                    scrutinee.span.end,
                    arms.last().map(|a| a.span.end),
                );
                let scrutinee = self.expr(scrutinee, true);
                let arms = self.vblock(
                    arms,
                    close,
                    |a| a.span,
                    |p, arm| {
                        concat(vec![
                            p.pattern(&arm.pattern),
                            p.rhs("=>", &arm.body),
                            text(","),
                        ])
                    },
                );
                concat(vec![text("match "), scrutinee, text(" "), arms])
            }
            ExprKind::Block(..) => {
                let mut open = vec![text("{")];
                self.flush_trailing(self.branch_start(expr), &mut open);
                let contents = self.branch(expr);
                group(vec![
                    concat(open),
                    indent(vec![Doc::Line, contents]),
                    Doc::Line,
                    text("}"),
                ])
            }
            ExprKind::Closure(params, body) => {
                let mut docs = vec![text("|")];
                for (i, param) in params.iter().enumerate() {
                    if i > 0 {
                        docs.push(text(", "));
                    }
                    docs.push(text(param.name.name.clone()));
                    if let Some(ty) = &param.ty {
                        docs.push(text(": "));
                        docs.push(self.ty(ty));
                    }
                }
                docs.push(text("| "));
                docs.push(self.expr(body, no_record));
                concat(docs)
            }
            ExprKind::Error => self.verbatim(expr.span),
        }
    }

    /// A chain of operators of one precedence level, `a + b - c`, which breaks after the
    /// operators all at once. Comparisons do not chain.
    fn binary(&mut self, expr: &Expr, no_record: bool) -> Doc {
        let ExprKind::Binary(op, lhs, rhs) = &expr.kind else {
            return self.expr_kind(expr, no_record);
        };
        let level = binary_prec(*op);
        let mut rest = vec![(*op, rhs.as_ref())];
        let mut first = lhs.as_ref();
        if level != PREC_CMP {
            while let ExprKind::Binary(inner_op, inner_lhs, inner_rhs) = &first.kind
                && binary_prec(*inner_op) == level
            {
                rest.push((*inner_op, inner_rhs.as_ref()));
                first = inner_lhs;
            }
        }
        rest.reverse();
        // Left-associative levels accept the same level on the left; comparisons accept
        // neither side at their level.
        let left_min = if level == PREC_CMP { level + 1 } else { level };
        let first = self.operand(first, left_min, no_record);
        let mut tail = Vec::new();
        for (op, operand) in rest {
            tail.push(text(format!(" {}", op.symbol())));
            self.flush_trailing(operand.span.start, &mut tail);
            tail.push(Doc::Line);
            tail.push(self.operand(operand, level + 1, no_record));
        }
        group(vec![first, indent(tail)])
    }

    /// A postfix chain. With two or more method calls, it breaks before each `.method` when it
    /// does not fit; otherwise only its argument lists break.
    fn postfix(&mut self, expr: &Expr, no_record: bool) -> Doc {
        let mut segments = Vec::new();
        let mut base = expr;
        loop {
            match &base.kind {
                ExprKind::Field(inner, name) => {
                    segments.push(Segment::Field(name));
                    base = inner;
                }
                ExprKind::MethodCall(inner, name, args) => {
                    segments.push(Segment::Method(name, args));
                    base = inner;
                }
                ExprKind::Call(inner, args) => {
                    segments.push(Segment::Call(args, inner.span));
                    base = inner;
                }
                ExprKind::Index(inner, index) => {
                    segments.push(Segment::Index(index));
                    base = inner;
                }
                _ => break,
            }
        }
        segments.reverse();
        let base_is_name = matches!(base.kind, ExprKind::Name(_));
        let mut head = vec![self.operand(base, PREC_POSTFIX, no_record)];
        let methods = segments
            .iter()
            .filter(|s| matches!(s, Segment::Method(..)))
            .count();
        if methods < 2 {
            for segment in &segments {
                head.push(self.segment(segment));
            }
            return concat(head);
        }
        // The head keeps the leading fields and, after a plain name, the first method call:
        // `game.questions()` stays together.
        let mut index = 0;
        let mut absorbed_method = !base_is_name;
        while let Some(segment) = segments.get(index) {
            if let Segment::Method(name, _) = segment {
                // A comment before the `.` starts a line of the chain of its own.
                let dot = self.previous_token(name.span.start);
                if absorbed_method || self.pending_comment_before(dot).is_some() {
                    break;
                }
                absorbed_method = true;
            }
            head.push(self.segment(segment));
            index += 1;
        }
        let mut tail = Vec::new();
        for segment in &segments[index..] {
            if let Segment::Method(name, ..) = segment {
                let dot = self.previous_token(name.span.start);
                self.flush_trailing(dot, &mut tail);
                tail.push(Doc::SoftLine);
                self.flush(dot, false, &mut tail);
            }
            tail.push(self.segment(segment));
        }
        head.push(indent(tail));
        group(head)
    }

    fn segment(&mut self, segment: &Segment<'_>) -> Doc {
        match segment {
            Segment::Field(name) => text(format!(".{}", name.name)),
            Segment::Method(name, args) => concat(vec![
                text(format!(".{}", name.name)),
                self.args(args, name.span.end),
            ]),
            Segment::Call(args, callee) => self.args(args, callee.end),
            Segment::Index(index) => concat(vec![text("["), self.expr(index, false), text("]")]),
        }
    }

    fn args(&mut self, args: &[Arg], after: u32) -> Doc {
        let close = self.close_of(K::LParen, K::RParen, after, args.last().map(|a| a.span.end));
        self.hlist(
            ("(", ")", false),
            args,
            close,
            |a| a.span,
            |p, arg| match &arg.name {
                Some(name) => concat(vec![
                    text(format!("{}: ", name.name)),
                    p.expr(&arg.value, false),
                ]),
                None => p.expr(&arg.value, false),
            },
        )
    }

    /// `if .. { a } else if .. { b } else { c }`, on one line when it fits, otherwise with each
    /// branch on its own lines.
    fn if_expr(&mut self, expr: &Expr) -> Doc {
        let mut docs = vec![text("if ")];
        let mut current = expr;
        while let ExprKind::If {
            guards,
            then,
            otherwise,
        } = &current.kind
        {
            docs.push(self.guards(guards));
            docs.push(text(" {"));
            self.flush_trailing(self.branch_start(then), &mut docs);
            let close = self.branch_close(then);
            let then = self.branch(then);
            let mut inside = vec![Doc::Line, then];
            // Comments after the branch's value stay in the branch, not in the next one.
            self.flush(close, false, &mut inside);
            docs.push(indent(inside));
            docs.push(Doc::Line);
            if matches!(otherwise.kind, ExprKind::If { .. }) {
                docs.push(text("} else if "));
                self.flush(otherwise.span.start, false, &mut docs);
                current = otherwise;
            } else {
                docs.push(text("} else {"));
                self.flush_trailing(self.branch_start(otherwise), &mut docs);
                let close = self.branch_close(otherwise);
                let otherwise = self.branch(otherwise);
                let mut inside = vec![Doc::Line, otherwise];
                self.flush(close, false, &mut inside);
                docs.push(indent(inside));
                docs.push(Doc::Line);
                docs.push(text("}"));
                break;
            }
        }
        group(docs)
    }

    /// Where the `}` closing a branch is: a block's span ends with it; a branch without `let`
    /// bindings is its value alone, and the brace is the next one after it.
    fn branch_close(&self, expr: &Expr) -> u32 {
        match expr.kind {
            ExprKind::Block(..) => expr.span.end.saturating_sub(1),
            _ => self.next_token(K::RBrace, expr.span.end),
        }
    }

    /// Where the inside of the braces of a branch or block starts: at its first `let` keyword,
    /// or at its value. The comments before it end the line of the opening brace.
    fn branch_start(&self, expr: &Expr) -> u32 {
        match &expr.kind {
            ExprKind::Block(lets, result) => {
                lets.first().map_or(result.span.start, |(pattern, _)| {
                    self.previous_token(pattern.span.start)
                })
            }
            _ => expr.span.start,
        }
    }

    /// The inside of the braces of a branch or block: `let` bindings, then the result.
    fn branch(&mut self, expr: &Expr) -> Doc {
        let ExprKind::Block(lets, result) = &expr.kind else {
            return self.expr(expr, false);
        };
        let mut docs = Vec::new();
        for (i, (pattern, value)) in lets.iter().enumerate() {
            // The comments before a `let` stay before it (printing the pattern would release
            // them after the keyword, and the next pass would move them again).
            self.flush(self.previous_token(pattern.span.start), false, &mut docs);
            docs.push(text("let "));
            docs.push(self.pattern(pattern));
            docs.push(text(" = "));
            docs.push(self.expr(value, false));
            docs.push(text(";"));
            let next = lets
                .get(i + 1)
                .map_or(result.span.start, |(p, _)| p.span.start);
            self.flush_trailing(next, &mut docs);
            docs.push(Doc::Line);
        }
        docs.push(self.expr(result, false));
        concat(docs)
    }
}
