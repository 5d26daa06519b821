//! Parses one chunk of a file (see [`crate::split`]) with the grammar crate's parser.
//!
//! Items and members are parsed from their own text with [`harness_grammar::parse_item`] and
//! [`harness_grammar::parse_member`], so every span in the result is relative to the chunk's first
//! byte and nothing depends on where the chunk sits in its file. That is what makes the per-chunk
//! queries reusable across edits of other chunks; the edge of the checker adds the chunk's offset.

use harness_grammar::{SyntaxError, SyntaxErrorKind, ast};

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
        .map(|error| syntax_diagnostic(error, end))
        .collect();
    result
}

/// The diagnostic for a syntax error; spans past the chunk's end (the synthetic `}` closing a
/// layer header) are moved onto the end.
fn syntax_diagnostic(error: &SyntaxError, end: u32) -> Diagnostic {
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
    let diagnostic = Diagnostic::new(code, span, error.message.clone());
    match &error.expected {
        Some(expected) => diagnostic.primary(format!("expected {expected}")),
        None => diagnostic,
    }
}
