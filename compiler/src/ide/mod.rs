//! Editor queries over a [`Workspace`]: the symbol under the cursor, its definition, its
//! references, hover text, completion, signature help, document symbols, rename edits, semantic
//! tokens, range formatting and quick fixes.
//!
//! Every function here is pure: it reads the workspace's salsa queries (the outline, the parsed
//! chunks, the environment and the chunk checks) and returns plain data with byte spans in the
//! file. The language server in `src/` turns that data into protocol messages. Nothing here
//! re-parses or re-checks more than the queries already did, so answering an editor after an edit
//! costs what the edit costs the checker.
//!
//! Names are not resolved here: the checker records what every name of a chunk resolved to (the
//! chunk's [`Names`](crate::symbol::Names): a span → symbol table and the locals with their scopes), and the queries
//! look spans up in it. The types of expressions come from the chunk's lowered IR, which carries a
//! type and a span on every node; that is how hover shows an expression's type and completion
//! knows the methods of a receiver.

//!
//! The queries are grouped by job: `view` gives a file and its chunks with what the checker
//! recorded about them, `describe` hover and the declarations of a file (outline, definition),
//! `complete` completion, `edit` signature help and range formatting; finding, renaming and
//! highlighting names is here.

mod complete;
mod describe;
mod edit;
mod view;

use std::collections::{BTreeMap, BTreeSet};

use harness_grammar::Span;

use crate::Workspace;
use crate::diagnostic::Diagnostic;
pub use crate::symbol::{DefKind, GameKind, Symbol};

pub use complete::completions;
use describe::declaration_of;
pub use describe::{declarations, hover, outline};
pub use edit::{SignatureHelp, format_range, signature_help};
use view::FileView;

#[cfg(test)]
mod tests;

/// A declaration in a file: what the outline, hover and go-to-definition show.
#[derive(Clone, Debug, PartialEq)]
pub struct Declaration {
    /// What it declares.
    pub symbol: Symbol,
    /// Its name.
    pub name: String,
    /// Where the name is written, in the file.
    pub name_span: Span,
    /// The whole declaration, in the file.
    pub span: Span,
    /// A one-line summary, such as `computed best_cell: Option<Cell>`.
    pub detail: String,
    /// Its `///` documentation.
    pub docs: String,
    /// The name of the enclosing declaration: the layer of a member, the enum of a variant, the
    /// record of a field.
    pub container: Option<String>,
}

/// A declaration with the declarations nested in it, for the document outline.
#[derive(Clone, Debug, PartialEq)]
pub struct OutlineNode {
    /// The declaration.
    pub declaration: Declaration,
    /// Layer members, enum variants, record fields.
    pub children: Vec<OutlineNode>,
}

/// The answer to a hover request.
#[derive(Clone, Debug, PartialEq)]
pub struct Hover {
    /// Markdown: a code block with the signature or type, then the documentation.
    pub markdown: String,
    /// The hovered range, in the file.
    pub span: Span,
}

/// What a completion item is, for its icon.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum CompletionKind {
    /// A local variable.
    Local,
    /// A state field, tunable, computed value or query property.
    Property,
    /// A function, builtin or query function.
    Function,
    /// A method of a type.
    Method,
    /// An action.
    Action,
    /// A constant or a config entry.
    Constant,
    /// A type.
    Type,
    /// An enum.
    Enum,
    /// An enum variant.
    Variant,
    /// A layer.
    Layer,
    /// An effect or an observation of the game.
    Event,
    /// A keyword.
    Keyword,
    /// A record field.
    Field,
}

/// One completion item.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Completion {
    /// The text inserted.
    pub label: String,
    /// What it is.
    pub kind: CompletionKind,
    /// Its type or signature.
    pub detail: String,
    /// Its documentation.
    pub docs: String,
}

/// How a semantic token is highlighted.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum TokenKind {
    /// A layer.
    Namespace,
    /// A type alias, a library or game type.
    Type,
    /// An enum.
    Enum,
    /// An enum variant.
    EnumMember,
    /// A parameter or other local.
    Variable,
    /// A state field, a tunable, a computed value, a record field, a game property.
    Property,
    /// A function or builtin.
    Function,
    /// An action.
    Method,
    /// A game effect or observation.
    Event,
    /// A constant, config entry or error code.
    Constant,
}

/// One semantic token: a name and how to highlight it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct SemanticToken {
    /// The name's span, in the file.
    pub span: Span,
    /// Its kind.
    pub kind: TokenKind,
    /// True at the name's declaration.
    pub declaration: bool,
    /// True for builtins and game bindings.
    pub library: bool,
}

/// A quick fix for a diagnostic: replace a span with a text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fix {
    /// What the editor shows, such as "replace with `hit_prob`".
    pub title: String,
    /// The span replaced, in the file.
    pub span: Span,
    /// The replacement.
    pub text: String,
}

/// Why a rename was refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RenameError {
    /// No name at the position.
    NoSymbol,
    /// The name belongs to the library or the game and cannot be renamed from a harness file.
    NotRenamable(String),
    /// The new name is not a valid identifier.
    InvalidName(String),
}

impl std::fmt::Display for RenameError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RenameError::NoSymbol => f.write_str("there is no name to rename here"),
            RenameError::NotRenamable(name) => {
                write!(
                    f,
                    "`{name}` belongs to the library or the game and cannot be renamed here"
                )
            }
            RenameError::InvalidName(name) => write!(f, "`{name}` is not a valid name"),
        }
    }
}

impl std::error::Error for RenameError {}

/// The symbol under `offset` in a file, and the span of the name there.
pub fn symbol_at(ws: &Workspace, path: &str, offset: u32) -> Option<(Symbol, Span)> {
    let file = FileView::new(ws, path)?;
    let chunk = file.chunk_at(offset)?;
    chunk
        .refs()
        .filter(|(span, _)| span.start <= offset && offset <= span.end)
        .min_by_key(|(span, _)| span.start)
        .map(|(span, symbol)| (symbol, span))
}

/// Where the symbol under `offset` is declared: a file path and the span of the name.
pub fn definition(ws: &Workspace, path: &str, offset: u32) -> Option<(String, Span)> {
    let (symbol, _) = symbol_at(ws, path, offset)?;
    declaration_of(ws, &symbol).map(|(file, decl)| (file, decl.name_span))
}

/// Every occurrence of the symbol under `offset`, across the workspace, declaration included,
/// sorted by file and position.
pub fn references(ws: &Workspace, path: &str, offset: u32) -> Vec<(String, Span)> {
    let Some((symbol, _)) = symbol_at(ws, path, offset) else {
        return Vec::new();
    };
    occurrences(ws, &symbol)
}

/// Every occurrence of a symbol across the workspace, sorted by file and position.
fn occurrences(ws: &Workspace, symbol: &Symbol) -> Vec<(String, Span)> {
    let paths = match symbol {
        // A local is visible only in the file that declares it.
        Symbol::Local { file, .. } => vec![file.clone()],
        _ => ws.paths(),
    };
    let mut out = Vec::new();
    for path in paths {
        let Some(file) = FileView::new(ws, &path) else {
            continue;
        };
        for chunk in file.chunks() {
            out.extend(
                chunk
                    .refs()
                    .filter(|(_, s)| s == symbol)
                    .map(|(span, _)| (path.clone(), span)),
            );
        }
    }
    out.sort();
    out.dedup();
    out
}

/// The edits that rename the symbol under `offset` to `new_name`: every occurrence, by file.
pub fn rename(
    ws: &Workspace,
    path: &str,
    offset: u32,
    new_name: &str,
) -> Result<BTreeMap<String, Vec<(Span, String)>>, RenameError> {
    let (symbol, _) = renamable(ws, path, offset)?;
    if !is_identifier(new_name) {
        return Err(RenameError::InvalidName(new_name.to_owned()));
    }
    let mut edits: BTreeMap<String, Vec<(Span, String)>> = BTreeMap::new();
    for (file, span) in occurrences(ws, &symbol) {
        edits
            .entry(file)
            .or_default()
            .push((span, new_name.to_owned()));
    }
    Ok(edits)
}

/// The name under `offset` that a rename would change, for the editor to select before it
/// asks for the new name; an error when there is none or it cannot be renamed.
pub fn prepare_rename(ws: &Workspace, path: &str, offset: u32) -> Result<Span, RenameError> {
    renamable(ws, path, offset).map(|(_, span)| span)
}

/// The symbol under `offset` and its span, if it is declared in the workspace (builtins, game
/// bindings and library types are not).
fn renamable(ws: &Workspace, path: &str, offset: u32) -> Result<(Symbol, Span), RenameError> {
    let (symbol, span) = symbol_at(ws, path, offset).ok_or(RenameError::NoSymbol)?;
    if matches!(
        symbol,
        Symbol::Builtin(_) | Symbol::Game(..) | Symbol::LibraryType(_)
    ) || matches!(&symbol, Symbol::Variant { module: None, .. })
    {
        let text = ws.text(path).unwrap_or_default();
        let name = text.get(span.range()).unwrap_or_default().to_owned();
        return Err(RenameError::NotRenamable(name));
    }
    Ok((symbol, span))
}

/// True for a name the lexer reads as one identifier and not as a keyword.
fn is_identifier(name: &str) -> bool {
    let mut chars = name.chars();
    let starts_well = chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_');
    starts_well && chars.all(|c| c.is_ascii_alphanumeric() || c == '_') && !KEYWORDS.contains(&name)
}

/// The language's keywords, for completion and for refusing them as names.
const KEYWORDS: &[&str] = &[
    "harness",
    "use",
    "game",
    "type",
    "enum",
    "const",
    "config",
    "fn",
    "error",
    "layer",
    "needs",
    "state",
    "tunable",
    "computed",
    "action",
    "available",
    "when",
    "requires",
    "else",
    "fail",
    "model",
    "with",
    "probability",
    "otherwise",
    "on",
    "decide",
    "machine",
    "revise",
    "patch",
    "emit",
    "halt",
    "let",
    "if",
    "match",
    "in",
    "not",
    "and",
    "or",
    "true",
    "false",
    "sim",
];

/// The semantic tokens of a file, in source order.
pub fn semantic_tokens(ws: &Workspace, path: &str) -> Vec<SemanticToken> {
    let Some(file) = FileView::new(ws, path) else {
        return Vec::new();
    };
    // A name is highlighted as a declaration where it is declared: a local at its own span, any
    // other symbol at the name of one of the file's declarations.
    let declared: BTreeSet<Span> = declarations(ws, path)
        .into_iter()
        .map(|d| d.name_span)
        .collect();
    let mut out = Vec::new();
    for chunk in file.chunks() {
        for (span, symbol) in chunk.refs() {
            let declaration = match &symbol {
                Symbol::Local { span: at, .. } => *at == span,
                Symbol::Builtin(_) | Symbol::Game(..) | Symbol::LibraryType(_) => false,
                _ => declared.contains(&span),
            };
            let library = matches!(
                symbol,
                Symbol::Builtin(_)
                    | Symbol::Game(..)
                    | Symbol::LibraryType(_)
                    | Symbol::Variant { module: None, .. }
            );
            let kind = match symbol {
                Symbol::Def(_, kind) => match kind {
                    DefKind::Const | DefKind::Config | DefKind::Error => TokenKind::Constant,
                    DefKind::Fn => TokenKind::Function,
                    DefKind::TypeAlias => TokenKind::Type,
                    DefKind::Enum => TokenKind::Enum,
                    DefKind::State | DefKind::Tunable | DefKind::Computed => TokenKind::Property,
                    DefKind::Action => TokenKind::Method,
                },
                Symbol::Layer { .. } => TokenKind::Namespace,
                Symbol::Variant { .. } => TokenKind::EnumMember,
                Symbol::Field { .. } => TokenKind::Property,
                Symbol::Local { .. } => TokenKind::Variable,
                Symbol::Builtin(_) => TokenKind::Function,
                Symbol::Game(GameKind::Query, _) => TokenKind::Property,
                Symbol::Game(..) => TokenKind::Event,
                Symbol::LibraryType(_) => TokenKind::Type,
            };
            out.push(SemanticToken {
                span,
                kind,
                declaration,
                library,
            });
        }
    }
    out.sort();
    out.dedup_by(|a, b| a.span == b.span);
    out
}

/// The quick fix a diagnostic's help line makes certain: a "did you mean `x`?" suggestion
/// replaces the diagnostic's span with `x`.
pub fn quick_fix(diagnostic: &Diagnostic) -> Option<Fix> {
    let help = diagnostic.help.as_deref()?;
    let rest = help.strip_prefix("did you mean `")?;
    let suggestion = rest.strip_suffix("`?")?;
    if suggestion.is_empty() || suggestion.contains('`') || diagnostic.span.is_empty() {
        return None;
    }
    Some(Fix {
        title: format!("replace with `{suggestion}`"),
        span: diagnostic.span,
        text: suggestion.to_owned(),
    })
}
