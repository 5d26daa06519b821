//! Parses one chunk of a file (see [`crate::split`]) with the grammar crate's parser.
//!
//! A member is parsed inside a synthetic `layer _ { ... }` wrapper, so the parser needs only its
//! whole-file entry point. Spans in the result are relative to the wrapped text; [`ParsedChunk::base`]
//! says how far the wrapped text is from the chunk's own first byte, and the edge of the checker
//! adds the chunk's offset in the file. Nothing here depends on where the chunk sits in its file,
//! which is what makes the per-chunk queries reusable across edits of other chunks.

use harness_grammar::{Span, ast};

use crate::codes::Code;
use crate::diagnostic::Diagnostic;
use crate::split::ChunkKind;

const MEMBER_PREFIX: &str = "layer _ {\n";
const MEMBER_SUFFIX: &str = "\n}";

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
    /// Syntax errors, in the spans of this result.
    pub errors: Vec<Diagnostic>,
    /// Subtract this from a span of this result to get an offset into the chunk's text.
    pub base: u32,
}

/// Parses one chunk of the given kind.
pub fn parse_chunk(kind: ChunkKind, text: &str) -> ParsedChunk {
    let (wrapped, base) = match kind {
        ChunkKind::Header | ChunkKind::Item => (text.to_owned(), 0),
        ChunkKind::LayerHeader => (format!("{text}}}"), 0),
        ChunkKind::Member => (format!("{MEMBER_PREFIX}{text}{MEMBER_SUFFIX}"), MEMBER_PREFIX.len()),
    };
    let parse = harness_grammar::parse(&wrapped);
    let lo = base as u32;
    let hi = (base + text.len()) as u32;
    // Errors the parser places in the synthetic wrapper belong to the chunk's own edge.
    let clamp = |span: Span| Span {
        start: span.start.clamp(lo, hi),
        end: span.end.clamp(lo, hi).max(span.start.clamp(lo, hi)),
    };
    let errors = parse
        .errors
        .iter()
        .map(|error| Diagnostic::new(Code::Syntax, clamp(error.span), error.message.clone()))
        .collect();
    let mut result = ParsedChunk {
        header: None,
        items: Vec::new(),
        members: Vec::new(),
        errors,
        base: base as u32,
    };
    match kind {
        ChunkKind::Header => result.header = parse.file.module,
        ChunkKind::Item | ChunkKind::LayerHeader => result.items = parse.file.items,
        ChunkKind::Member => {
            for item in parse.file.items {
                match item {
                    ast::Item::Layer(layer) => result.members.extend(layer.members),
                    other => result.members.push(ast::Member::Invalid(other.span())),
                }
            }
        }
    }
    result
}
