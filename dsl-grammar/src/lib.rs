//! The harness language's tokens, recovering parser, syntax tree and reference grammar.
//!
//! [`parse`] never fails: it returns a [`Parse`] with a syntax tree (containing error nodes where
//! the text is malformed), the full token stream including comments, and every syntax error found.
//! [`parse_item`] and [`parse_member`] parse one item or layer member from its own text, so that
//! incremental queries can re-parse a single declaration with spans relative to that text.
//!
//! The reference grammar `harness.pest` in this crate's root describes the same language in a
//! page; a test and a fuzz target keep the two parsers in agreement on which texts they accept.

pub mod ast;
pub mod diff;
pub mod format;
pub mod lexer;
mod parser;
pub mod stack;

pub use ast::Span;
pub use lexer::{Token, TokenKind, lex};
pub use parser::{MAX_DEPTH, MAX_HEIGHT};

use serde::Serialize;

/// The result of parsing one file: a tree, its tokens and the syntax errors.
#[derive(Clone, Debug)]
pub struct Parse {
    /// The syntax tree; malformed regions are error nodes.
    pub file: ast::File,
    /// Every token of the text, trivia included; their texts concatenate to the input.
    pub tokens: Vec<Token>,
    /// Every syntax error in the file, in source order.
    pub errors: Vec<SyntaxError>,
}

/// A syntax error: what was wrong and where.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct SyntaxError {
    /// What kind of mistake it is; the checker maps each kind to a stable diagnostic code.
    pub kind: SyntaxErrorKind,
    /// What went wrong, in plain words: "expected `=>` after the rule's guards, found `{`".
    pub message: String,
    /// Where.
    pub span: Span,
    /// For [`SyntaxErrorKind::UnexpectedToken`] and [`SyntaxErrorKind::MissingElse`], what
    /// would have been accepted at that point, for example "`=>`" or "an expression".
    pub expected: Option<String>,
}

/// The kinds of syntax error.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
pub enum SyntaxErrorKind {
    /// A token that does not fit the grammar at that point (including the end of the file).
    UnexpectedToken,
    /// A character that cannot start any token, such as `@` or `!` on its own.
    InvalidCharacter,
    /// A string literal without its closing quote.
    UnterminatedString,
    /// An unknown escape sequence in a string literal, such as `\q`.
    InvalidEscape,
    /// An integer literal that does not fit in 64 bits, or a float literal that overflows.
    NumberOutOfRange,
    /// An `if` expression without an `else` branch.
    MissingElse,
    /// A chained comparison such as `a < b < c`.
    NonAssociative,
    /// A record literal directly in the condition of `if`, `when`, `requires` or `match`.
    RecordInCondition,
    /// A positional argument after a named one.
    ArgumentOrder,
    /// Nesting deeper than [`MAX_DEPTH`]; the rest of the file is not parsed.
    TooDeep,
    /// An item whose tree would be higher than [`MAX_HEIGHT`] (long chains of
    /// operators, calls, fields, indexes or `else if` arms); the rest of the file is not parsed.
    TooLong,
}

/// Parses a whole file. Never panics and never fails.
pub fn parse(text: &str) -> Parse {
    let tokens = lex(text);
    let mut parser = parser::Parser::new(text, &tokens);
    let file = parser.parse_file();
    Parse {
        file,
        tokens,
        errors: parser.finish(),
    }
}

/// Parses one top-level item from a text that holds only that item (and trivia). Spans are
/// relative to `text`. Text after the item is reported as an error.
pub fn parse_item(text: &str) -> (ast::Item, Vec<SyntaxError>) {
    let tokens = lex(text);
    let mut parser = parser::Parser::new(text, &tokens);
    let item = parser.parse_single_item();
    (item, parser.finish())
}

/// Parses one layer member from a text that holds only that member (and trivia). Spans are
/// relative to `text`. Text after the member is reported as an error.
pub fn parse_member(text: &str) -> (ast::Member, Vec<SyntaxError>) {
    let tokens = lex(text);
    let mut parser = parser::Parser::new(text, &tokens);
    let member = parser.parse_single_member();
    (member, parser.finish())
}
