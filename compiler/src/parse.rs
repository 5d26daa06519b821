//! Parses one chunk of a file (see [`crate::split`]) with the grammar crate's parser.
//!
//! Items and members are parsed from their own text with [`harness_grammar::parse_item`] and
//! [`harness_grammar::parse_member`], so every span in the result is relative to the chunk's first
//! byte and nothing depends on where the chunk sits in its file. That is what makes the per-chunk
//! queries reusable across edits of other chunks; the edge of the checker adds the chunk's offset.

use harness_grammar::{Span, SyntaxError, SyntaxErrorKind, ast};

use crate::codes::Code;
use crate::diagnostic::Diagnostic;
use crate::split::ChunkKind;

/// The syntax of one chunk.
#[derive(Clone, Debug, PartialEq)]
pub struct ParsedChunk {
    /// The module path of a header chunk.
    pub header: Option<ast::Path>,
    /// The items of an item or layer-header chunk (a layer header yields a layer without
    /// members).
    pub items: Vec<ast::Item>,
    /// The members of a member chunk.
    pub members: Vec<ast::Member>,
    /// Syntax errors.
    pub errors: Vec<Diagnostic>,
}

/// Parses one chunk of the given kind.
pub fn parse_chunk(kind: ChunkKind, text: &str) -> ParsedChunk {
    let mut result = ParsedChunk {
        header: None,
        items: Vec::new(),
        members: Vec::new(),
        errors: Vec::new(),
    };
    let errors = match kind {
        ChunkKind::Header => {
            let parse = harness_grammar::parse(text);
            result.header = parse.file.module;
            result.items = parse.file.items;
            parse.errors
        }
        ChunkKind::Item => {
            let (item, errors) = harness_grammar::parse_item(text);
            result.items.push(item);
            errors
        }
        ChunkKind::LayerHeader => {
            // The header ends with the layer's `{`; the members are chunks of their own.
            let (item, errors) = harness_grammar::parse_item(&format!("{text}}}"));
            result.items.push(item);
            errors
        }
        ChunkKind::Member => {
            let (member, errors) = harness_grammar::parse_member(text);
            result.members.push(member);
            errors
        }
    };
    let end = text.len() as u32;
    result.errors = errors
        .iter()
        .map(|error| syntax_diagnostic(error, text, end))
        .collect();
    result
}

/// The diagnostic for a syntax error the grammar's parser reported in the whole text `text`,
/// with the code and help the checker gives it: for tools that parse a file themselves, such as
/// the formatter.
pub fn syntax_error(error: &SyntaxError, text: &str) -> Diagnostic {
    syntax_diagnostic(error, text, text.len() as u32)
}

/// The diagnostic for a syntax error in `text`; spans past the chunk's end (the synthetic `}`
/// closing a layer header) are moved onto the end.
fn syntax_diagnostic(error: &SyntaxError, text: &str, end: u32) -> Diagnostic {
    let mut span = error.span;
    span.start = span.start.min(end);
    span.end = span.end.min(end).max(span.start);
    let code = match error.kind {
        SyntaxErrorKind::UnexpectedToken => Code::Syntax,
        SyntaxErrorKind::InvalidCharacter => Code::InvalidCharacter,
        SyntaxErrorKind::UnterminatedString => Code::UnterminatedString,
        SyntaxErrorKind::InvalidEscape => Code::InvalidEscape,
        SyntaxErrorKind::NumberOutOfRange => Code::NumberOutOfRange,
        SyntaxErrorKind::MissingElse => Code::MissingElse,
        SyntaxErrorKind::NonAssociative => Code::ChainedComparison,
        SyntaxErrorKind::RecordInCondition => Code::RecordInCondition,
        SyntaxErrorKind::ArgumentOrder => Code::ArgumentOrder,
        SyntaxErrorKind::TooDeep => Code::TooDeep,
        SyntaxErrorKind::TooLong => Code::TooLong,
    };
    let at = text.get(span.start as usize..).unwrap_or_default();
    if error.kind == SyntaxErrorKind::UnexpectedToken && starts_with_word(at, "emit") {
        // The grammar has no `emit` expression, so in a function or a computed value it is a
        // syntax error; what the writer needs to hear is the effect rule.
        return Diagnostic::new(
            Code::EmitOutsideAction,
            Span {
                start: span.start,
                end: span.start + 4,
            },
            "`emit` is only allowed in actions".to_owned(),
        )
        .help(
            "functions and computed values only compute a value; move the effect into an \
             action and choose that action in `decide`",
        );
    }
    let diagnostic = Diagnostic::new(code, span, error.message.clone());
    let diagnostic = match &error.expected {
        Some(expected) => diagnostic.primary(format!("expected {expected}")),
        None => diagnostic,
    };
    match slip_help(
        error.kind,
        &text[..(span.start as usize).min(text.len())],
        at,
    ) {
        Some(help) => diagnostic.help(help),
        None => diagnostic,
    }
}

/// A hint for the slips that habits from other languages bring, from the text before and at
/// the error.
fn slip_help(kind: SyntaxErrorKind, before: &str, at: &str) -> Option<&'static str> {
    match kind {
        SyntaxErrorKind::InvalidCharacter if at.starts_with("&&") || at.starts_with('&') => {
            Some("use `and` for logical and: `a and b`")
        }
        SyntaxErrorKind::InvalidCharacter if at.starts_with('!') => {
            Some("use `not` for negation: `not done` (`!=` is not-equal)")
        }
        SyntaxErrorKind::UnexpectedToken if at.starts_with("||") => {
            Some("use `or` for logical or: `a or b`")
        }
        SyntaxErrorKind::UnexpectedToken
            if at.starts_with('=') && !at.starts_with("==") && !at.starts_with("=>") =>
        {
            Some("did you mean `==`? A single `=` only gives a value, in `let` and declarations")
        }
        SyntaxErrorKind::UnexpectedToken if after_let_mut(before) => Some(
            "`let` bindings never change, so there is no `let mut`: drop `mut`; a value that \
             changes from turn to turn is a `state` field, changed with `patch`",
        ),
        _ => None,
    }
}

/// True when `text` starts with `word` as a whole word.
fn starts_with_word(text: &str, word: &str) -> bool {
    text.strip_prefix(word)
        .is_some_and(|rest| !rest.starts_with(|c: char| c.is_ascii_alphanumeric() || c == '_'))
}

/// True when `text` ends with `let mut` (and blanks).
fn after_let_mut(text: &str) -> bool {
    text.trim_end()
        .strip_suffix("mut")
        .filter(|rest| rest.ends_with(char::is_whitespace))
        .and_then(|rest| rest.trim_end().strip_suffix("let"))
        .is_some_and(|rest| !rest.ends_with(|c: char| c.is_ascii_alphanumeric() || c == '_'))
}
