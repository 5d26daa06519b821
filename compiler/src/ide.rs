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
//! chunk's [`Names`]: a span → symbol table and the locals with their scopes), and the queries
//! look spans up in it. The types of expressions come from the chunk's lowered IR, which carries a
//! type and a span on every node; that is how hover shows an expression's type and completion
//! knows the methods of a receiver.

use std::collections::{BTreeMap, BTreeSet};

use harness_grammar::{Span, ast};

use crate::Workspace;
use crate::check::ChunkIr;
use crate::db::{self, Database, Inputs, SourceFile};
use crate::diagnostic::Diagnostic;
use crate::env::{DefKey, Env, MemberDef, Scope, TypeDef, ValueDef};
use crate::ir::{self, LayerId};
use crate::signatures::{Builtin, BuiltinKind, SignatureSet, type_constructor};
use crate::split::ChunkKind;
pub use crate::symbol::{DefKind, GameKind, Symbol};
use crate::symbol::{LocalDecl, Names};
use crate::types::Ty;
use crate::visit::{Visit, walk};

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

/// The signature of the call around the cursor, for signature help.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SignatureHelp {
    /// The signature line, as hover shows it.
    pub label: String,
    /// The byte ranges of the parameters in `label`, without a method's `self`.
    pub params: Vec<(u32, u32)>,
    /// The index in `params` of the argument the cursor is in.
    pub active: u32,
    /// The callee's documentation.
    pub docs: String,
}

/// The signature of the innermost call whose parentheses hold `offset`: a function, builtin,
/// method, action, or game query, effect or observation.
pub fn signature_help(ws: &Workspace, path: &str, offset: u32) -> Option<SignatureHelp> {
    let file = FileView::new(ws, path)?;
    let chunk = file.chunk_at(offset)?;
    let text = file.text;
    let (open, commas) = open_call(text.get(chunk.offset as usize..offset as usize)?)?;
    let open = chunk.offset as usize + open;
    let bytes = text.as_bytes();
    let mut start = open;
    while start > 0 && (bytes[start - 1].is_ascii_alphanumeric() || bytes[start - 1] == b'_') {
        start -= 1;
    }
    if start == open {
        return None;
    }
    let (symbol, _) = symbol_at(ws, path, start as u32)?;
    let (label, docs) = describe(ws, &chunk, &symbol, None);
    let mut params = param_ranges(&label);
    let is_method = start > 0 && bytes[start - 1] == b'.';
    if is_method
        && params
            .first()
            .is_some_and(|&(s, _)| label[s as usize..].starts_with("self"))
    {
        params.remove(0);
    }
    Some(SignatureHelp {
        label,
        params,
        active: commas,
        docs,
    })
}

/// In the text of a chunk up to the cursor, the offset of the innermost `(` still open and the
/// number of commas at its level after it. Strings and comments are skipped.
fn open_call(text: &str) -> Option<(usize, u32)> {
    // Each open bracket with its commas so far.
    let mut open: Vec<(u8, usize, u32)> = Vec::new();
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'"' => {
                i += 1;
                while i < bytes.len() && bytes[i] != b'"' {
                    i += if bytes[i] == b'\\' { 2 } else { 1 };
                }
            }
            b'/' if bytes.get(i + 1) == Some(&b'/') => {
                while i < bytes.len() && bytes[i] != b'\n' {
                    i += 1;
                }
            }
            c @ (b'(' | b'[' | b'{') => open.push((c, i, 0)),
            b')' | b']' | b'}' => {
                open.pop();
            }
            b',' => {
                if let Some(top) = open.last_mut() {
                    top.2 += 1;
                }
            }
            _ => {}
        }
        i += 1;
    }
    open.iter()
        .rev()
        .find(|(c, _, _)| *c == b'(')
        .map(|&(_, at, commas)| (at, commas))
}

/// The byte ranges of the parameters of a signature line: the comma-separated parts of its
/// first parenthesised list, each trimmed.
fn param_ranges(label: &str) -> Vec<(u32, u32)> {
    let Some(open) = label.find('(') else {
        return Vec::new();
    };
    let bytes = label.as_bytes();
    let mut out = Vec::new();
    let mut depth = 0;
    let mut start = open + 1;
    let push = |from: usize, to: usize, out: &mut Vec<(u32, u32)>| {
        let part = &label[from..to];
        let trimmed = part.trim();
        if !trimmed.is_empty() {
            let lead = part.len() - part.trim_start().len();
            out.push(((from + lead) as u32, (from + lead + trimmed.len()) as u32));
        }
    };
    for i in open + 1..bytes.len() {
        match bytes[i] {
            b'(' | b'[' | b'{' | b'<' => depth += 1,
            // The `>` of `->` closes nothing.
            b'>' if i > 0 && bytes[i - 1] == b'-' => {}
            b')' | b']' | b'}' | b'>' if depth > 0 => depth -= 1,
            b')' => {
                push(start, i, &mut out);
                return out;
            }
            b',' if depth == 0 => {
                push(start, i, &mut out);
                start = i + 1;
            }
            _ => {}
        }
    }
    out
}

/// The edits that format the lines of `range` (byte offsets in `text`): the hunks of the whole
/// file's formatting that touch those lines, each as a replacement of whole lines. The text
/// outside them is left as it is; an error when the file does not parse.
pub fn format_range(text: &str, range: Span) -> Result<Vec<(Span, String)>, String> {
    let formatted = harness_grammar::format::format(text).map_err(|e| e.to_string())?;
    let starts = line_starts(text);
    let new_starts = line_starts(&formatted);
    let line_of = |offset: u32| starts.partition_point(|&s| s <= offset).saturating_sub(1);
    let (first, last) = (line_of(range.start), line_of(range.end.max(range.start)));
    let at =
        |starts: &[u32], len: usize, line: usize| starts.get(line).copied().unwrap_or(len as u32);
    let (old_lines, new_lines): (Vec<&str>, Vec<&str>) = (
        text.split_inclusive('\n').collect(),
        formatted.split_inclusive('\n').collect(),
    );
    Ok(harness_grammar::diff::line_hunks(text, &formatted)
        .into_iter()
        // A hunk that rewrites as many lines as it replaces is taken line by line, so that
        // adjacent lines outside the range stay as they are.
        .flat_map(|h| {
            if h.old.len() == h.new.len() {
                h.old
                    .clone()
                    .zip(h.new.clone())
                    .filter(|&(i, j)| old_lines[i] != new_lines[j])
                    .map(|(i, j)| harness_grammar::diff::Hunk {
                        old: i..i + 1,
                        new: j..j + 1,
                    })
                    .collect()
            } else {
                vec![h]
            }
        })
        // A hunk touches the range when its old lines overlap it, or, for an insertion, when it
        // falls inside it.
        .filter(|h| {
            h.old.start <= last && (h.old.end > first || (h.old.is_empty() && h.old.start >= first))
        })
        .map(|h| {
            let span = Span {
                start: at(&starts, text.len(), h.old.start),
                end: at(&starts, text.len(), h.old.end),
            };
            let new = &formatted[at(&new_starts, formatted.len(), h.new.start) as usize
                ..at(&new_starts, formatted.len(), h.new.end) as usize];
            (span, new.to_owned())
        })
        .collect())
}

/// The offset of the start of every line of a text.
fn line_starts(text: &str) -> Vec<u32> {
    std::iter::once(0)
        .chain(
            text.match_indices('\n')
                .map(|(i, _)| i as u32 + 1)
                .filter(|&s| (s as usize) < text.len()),
        )
        .collect()
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

/// The hover text for `offset`: the symbol's signature and documentation, and the type of the
/// expression under the cursor.
pub fn hover(ws: &Workspace, path: &str, offset: u32) -> Option<Hover> {
    let file = FileView::new(ws, path)?;
    let chunk = file.chunk_at(offset)?;
    let symbol = symbol_at(ws, path, offset);
    let expr_ty = chunk.type_at(offset);
    let mut parts: Vec<String> = Vec::new();
    let mut span = None;
    if let Some((symbol, at)) = &symbol {
        span = Some(*at);
        let (signature, docs) = describe(ws, &chunk, symbol, expr_ty.as_ref().map(|(_, ty)| ty));
        parts.push(format!("```harness\n{signature}\n```"));
        if !docs.is_empty() {
            parts.push(docs);
        }
    } else if let Some((at, ty)) = &expr_ty {
        span = Some(*at);
        parts.push(format!("```harness\n{ty}\n```"));
    }
    Some(Hover {
        markdown: parts.join("\n\n"),
        span: span?,
    })
}

/// A symbol's signature line and documentation.
fn describe(
    ws: &Workspace,
    chunk: &ChunkView<'_>,
    symbol: &Symbol,
    ty: Option<&Ty>,
) -> (String, String) {
    let sigs = chunk.file.sigs;
    let game = chunk.scope.and_then(|s| s.game.as_ref());
    match symbol {
        Symbol::Local { file, span } => {
            let name = ws
                .text(file)
                .and_then(|t| t.get(span.range()).map(str::to_owned))
                .unwrap_or_default();
            match ty {
                Some(ty) => (format!("{name}: {ty}"), String::new()),
                None => (name, String::new()),
            }
        }
        Symbol::Builtin(name) => {
            let builtin = sigs
                .builtins
                .iter()
                .chain(game.into_iter().flat_map(|g| g.builtins.iter()))
                .find(|b| b.name == *name);
            match builtin {
                Some(b) => (b.text.clone(), with_example(&b.doc, &b.example)),
                None => (name.clone(), String::new()),
            }
        }
        Symbol::Game(kind, name) => {
            let Some(game) = game else {
                return (format!("game.{name}"), String::new());
            };
            match kind {
                GameKind::Query => match game.queries.iter().find(|q| q.name == *name) {
                    Some(q) => {
                        let sig = match &q.sig {
                            Some(sig) => format!(
                                "game.{}({}) -> {}",
                                q.name,
                                params_text(&sig.params),
                                sig.ret
                            ),
                            None => format!("game.{}: {}", q.name, q.ty),
                        };
                        (sig, with_example(&q.doc, &q.example))
                    }
                    None => (format!("game.{name}"), String::new()),
                },
                GameKind::Effect | GameKind::Observation => {
                    let list = if *kind == GameKind::Effect {
                        &game.effects
                    } else {
                        &game.observations
                    };
                    let what = if *kind == GameKind::Effect {
                        "effect"
                    } else {
                        "observation"
                    };
                    match list.iter().find(|m| m.name == *name) {
                        Some(m) => (
                            format!("{what} game.{}({})", m.name, params_text(&m.params)),
                            m.doc.clone(),
                        ),
                        None => (format!("{what} game.{name}"), String::new()),
                    }
                }
            }
        }
        Symbol::LibraryType(name) => {
            let doc = sigs
                .types
                .iter()
                .chain(game.into_iter().flat_map(|g| g.types.iter()))
                .find(|t| t.name == *name)
                .map(|t| t.doc.clone())
                .or_else(|| {
                    sigs.enums
                        .iter()
                        .chain(game.into_iter().flat_map(|g| g.enums.iter()))
                        .find(|e| e.name == *name)
                        .map(|e| {
                            let variants: Vec<&str> =
                                e.variants.iter().map(|(v, _)| v.as_str()).collect();
                            format!("{}\n\nvariants: {}", e.doc, variants.join(", "))
                        })
                })
                .unwrap_or_default();
            (format!("type {name}"), doc)
        }
        Symbol::Variant {
            module: None,
            enum_name,
            variant,
        } => {
            let payload = chunk
                .scope
                .and_then(|s| s.enum_named(enum_name))
                .and_then(|e| e.variants.iter().find(|(v, _)| v == variant))
                .map(|(_, payload)| {
                    payload
                        .iter()
                        .map(ToString::to_string)
                        .collect::<Vec<_>>()
                        .join(", ")
                })
                .unwrap_or_default();
            let payload = if payload.is_empty() {
                String::new()
            } else {
                format!("({payload})")
            };
            (format!("{enum_name}.{variant}{payload}"), String::new())
        }
        _ => match declaration_of(ws, symbol) {
            Some((_, decl)) => {
                let detail = match (ty, &symbol) {
                    // A member read through a preview or a layer path: the declared type is in
                    // the detail already.
                    (_, Symbol::Def(..)) | (None, _) => decl.detail,
                    (Some(ty), _) => format!("{}: {ty}", decl.detail),
                };
                (detail, decl.docs)
            }
            None => (format!("{symbol:?}"), String::new()),
        },
    }
}

fn with_example(doc: &str, example: &str) -> String {
    if example.is_empty() {
        doc.to_owned()
    } else {
        format!("{doc}\n\nExample: `{example}`")
    }
}

fn params_text(params: &[crate::signatures::ParamSig]) -> String {
    params
        .iter()
        .map(|p| format!("{}: {}", p.name, p.ty))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Finds the declaration of a symbol in the workspace.
fn declaration_of(ws: &Workspace, symbol: &Symbol) -> Option<(String, Declaration)> {
    if let Symbol::Local { file, span } = symbol {
        let text = ws.text(file)?;
        let name = text.get(span.range())?.to_owned();
        let decl = Declaration {
            symbol: symbol.clone(),
            name: name.clone(),
            name_span: *span,
            span: *span,
            detail: name,
            docs: String::new(),
            container: None,
        };
        return Some((file.clone(), decl));
    }
    let module = match symbol {
        Symbol::Def(key, _) => Some(&key.module),
        Symbol::Layer { module, .. } => Some(module),
        Symbol::Variant { module, .. } => module.as_ref(),
        Symbol::Field { record, .. } => Some(&record.module),
        _ => None,
    }?;
    let (db, inputs) = ws.query_parts();
    let env = db::environment(db, inputs);
    let path = env
        .file_modules
        .iter()
        .find(|(_, m)| *m == module)
        .map(|(p, _)| p.clone())?;
    let decl = declarations(ws, &path)
        .into_iter()
        .find(|d| d.symbol == *symbol)?;
    Some((path, decl))
}

/// Every declaration of a file, in source order: items, layers, members, state fields, enum
/// variants and record fields.
pub fn declarations(ws: &Workspace, path: &str) -> Vec<Declaration> {
    let Some(file) = FileView::new(ws, path) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for chunk in file.chunks() {
        chunk.declarations(&mut out);
    }
    out
}

/// The document outline: items, and layers with their members.
pub fn outline(ws: &Workspace, path: &str) -> Vec<OutlineNode> {
    let mut roots: Vec<OutlineNode> = Vec::new();
    for declaration in declarations(ws, path) {
        let node = OutlineNode {
            declaration,
            children: Vec::new(),
        };
        let parent = node.declaration.container.as_deref().and_then(|container| {
            roots.iter_mut().rev().find(|root| {
                root.declaration.name == container
                    && root.declaration.span.start <= node.declaration.span.start
            })
        });
        match parent {
            // State fields are nested one level below their layer in the source, but they are
            // members of the layer, so they sit beside the other members.
            Some(parent) => parent.children.push(node),
            None => roots.push(node),
        }
    }
    roots
}

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

/// The completion items at `offset`: after `x.`, the members, fields, methods or variants of
/// `x`; elsewhere, the locals declared before the cursor, the members of the cursor's layer and
/// of the layers it needs (never of a layer above), the items, builtins, types and keywords.
pub fn completions(ws: &Workspace, path: &str, offset: u32) -> Vec<Completion> {
    let Some(file) = FileView::new(ws, path) else {
        return Vec::new();
    };
    let text = file.text;
    let offset = (offset as usize).min(text.len());
    let bytes = text.as_bytes();
    let mut start = offset;
    while start > 0 && (bytes[start - 1].is_ascii_alphanumeric() || bytes[start - 1] == b'_') {
        start -= 1;
    }
    let chunk = file.chunk_at(offset as u32);
    let mut items = match (start > 0 && bytes[start - 1] == b'.', &chunk) {
        (true, Some(chunk)) => chunk.dot_completions(start as u32 - 1),
        (true, None) => Vec::new(),
        (false, Some(chunk)) => chunk.scope_completions(offset as u32),
        (false, None) => keyword_completions(),
    };
    let prefix = &text[start..offset];
    items.retain(|item| item.label.starts_with(prefix));
    items.sort();
    items.dedup_by(|a, b| a.label == b.label);
    items
}

fn keyword_completions() -> Vec<Completion> {
    KEYWORDS
        .iter()
        .map(|k| Completion {
            label: (*k).to_owned(),
            kind: CompletionKind::Keyword,
            detail: String::new(),
            docs: String::new(),
        })
        .collect()
}

/// A file as the editor queries see it.
struct FileView<'w> {
    db: &'w Database,
    inputs: Inputs,
    file: SourceFile,
    path: &'w str,
    text: &'w str,
    env: &'w Env,
    sigs: &'w SignatureSet,
    module: Option<&'w String>,
}

impl<'w> FileView<'w> {
    fn new(ws: &'w Workspace, path: &'w str) -> Option<Self> {
        let (db, inputs) = ws.query_parts();
        let file = ws.source_file(path)?;
        let env: &Env = db::environment(db, inputs);
        Some(Self {
            db,
            inputs,
            file,
            path,
            text: file.text(db),
            env,
            sigs: inputs.signatures(db),
            module: env.file_modules.get(path),
        })
    }

    /// The chunks of the file, in order.
    fn chunks(&self) -> Vec<ChunkView<'_>> {
        (0..db::outline(self.db, self.file).chunks.len())
            .filter_map(|ordinal| self.chunk(ordinal))
            .collect()
    }

    /// The chunk that holds `offset`, or the one that ends right before it (the cursor after
    /// the last character of a member still belongs to it).
    fn chunk_at(&self, offset: u32) -> Option<ChunkView<'_>> {
        let chunks = &db::outline(self.db, self.file).chunks;
        let ordinal = chunks.iter().rposition(|(_, start)| *start <= offset)?;
        self.chunk(ordinal)
    }

    fn chunk(&self, ordinal: usize) -> Option<ChunkView<'_>> {
        let (chunk, offset) = *db::outline(self.db, self.file).chunks.get(ordinal)?;
        let parsed = db::parsed(self.db, chunk);
        let layer_name = if chunk.kind(self.db) == ChunkKind::Member
            || chunk.kind(self.db) == ChunkKind::LayerHeader
        {
            self.env
                .chunk_layers
                .get(self.path)
                .and_then(|layers| layers.get(ordinal).cloned().flatten())
        } else {
            None
        };
        let scope = self
            .module
            .and_then(|m| self.env.scopes.get(m))
            .map(|s| &**s);
        let layer = match (scope, &layer_name) {
            (Some(scope), Some(name)) => scope.layer(name),
            _ => None,
        };
        let file_key = db::FileKey::new(self.db, self.inputs, self.file);
        let check = db::own_keys(self.db, file_key)
            .get(ordinal)
            .copied()
            .flatten()
            .map(|key| db::check_chunk(self.db, key));
        let mut types = Vec::new();
        if let Some(check) = check {
            collect_chunk_types(&check.ir, &mut types);
        }
        Some(ChunkView {
            file: self,
            offset,
            items: &parsed.items,
            members: &parsed.members,
            scope,
            layer,
            layer_name,
            types,
            names: check.map(|c| &c.names),
        })
    }
}

/// One chunk with what the checker recorded about it.
struct ChunkView<'f> {
    file: &'f FileView<'f>,
    offset: u32,
    items: &'f [ast::Item],
    members: &'f [ast::Member],
    scope: Option<&'f Scope>,
    layer: Option<LayerId>,
    layer_name: Option<String>,
    /// The types of the chunk's expressions, with chunk-relative spans.
    types: Vec<(Span, Ty)>,
    /// What the checker resolved the chunk's names to, with chunk-relative spans.
    names: Option<&'f Names>,
}

impl<'f> ChunkView<'f> {
    fn file_span(&self, span: Span) -> Span {
        Span {
            start: span.start + self.offset,
            end: span.end + self.offset,
        }
    }

    fn module(&self) -> String {
        self.file.module.cloned().unwrap_or_default()
    }

    fn def_key(&self, name: &str, member: bool) -> DefKey {
        DefKey {
            module: self.module(),
            layer: if member {
                self.layer_name.clone()
            } else {
                None
            },
            name: name.to_owned(),
        }
    }

    /// Every name the checker resolved in this chunk, in the order it met them: the name's span
    /// in the file and its symbol, a local's placed in this file.
    fn refs(&self) -> impl Iterator<Item = (Span, Symbol)> + '_ {
        self.names
            .into_iter()
            .flat_map(|names| names.refs.iter())
            .map(|(span, symbol)| {
                let symbol = match symbol {
                    Symbol::Local { span, .. } => Symbol::Local {
                        file: self.file.path.to_owned(),
                        span: self.file_span(*span),
                    },
                    other => other.clone(),
                };
                (self.file_span(*span), symbol)
            })
    }

    /// The symbol the checker recorded for the name written exactly at `span` (in the file).
    fn recorded(&self, span: Span) -> Option<Symbol> {
        self.refs()
            .find(|(at, _)| *at == span)
            .map(|(_, symbol)| symbol)
    }

    /// The type of the smallest expression that holds `offset` (in the file), with its span in
    /// the file.
    fn type_at(&self, offset: u32) -> Option<(Span, Ty)> {
        let rel = offset.checked_sub(self.offset)?;
        self.types
            .iter()
            .filter(|(span, ty)| span.start <= rel && rel <= span.end && !matches!(ty, Ty::Error))
            .min_by_key(|(span, _)| span.len())
            .map(|(span, ty)| (self.file_span(*span), ty.clone()))
    }

    /// The declared type of a name visible in this chunk.
    fn name_type(&self, name: &str, locals: &[&LocalDecl]) -> Option<Ty> {
        let scope = self.scope?;
        if let Some(local) = locals.iter().rev().find(|l| l.name == name) {
            return (!local.ty.has_error()).then(|| local.ty.clone());
        }
        if let Some((_, entry)) = self.find_member(name) {
            return match &entry.def {
                MemberDef::State(_, ty)
                | MemberDef::Tunable(_, ty, _)
                | MemberDef::Computed(_, ty) => Some(ty.clone()),
                _ => None,
            };
        }
        match scope.values.get(name) {
            Some((ValueDef::Const { ty, .. } | ValueDef::Config { ty, .. }, _, _)) => {
                Some(ty.clone())
            }
            _ => None,
        }
    }

    /// A layer member by name, as the checker finds it: the chunk's layer, the layers it needs
    /// (nearest first), then any layer.
    fn find_member(&self, name: &str) -> Option<(LayerId, &'f crate::env::MemberEntry)> {
        self.scope?.find_member(self.layer, name)
    }

    /// The builtins visible in this chunk's module: the prelude, imported library modules and
    /// the game's methods.
    fn builtins(&self) -> Vec<&'f Builtin> {
        let Some(scope) = self.scope else {
            return Vec::new();
        };
        let visible = |b: &Builtin| match &b.module {
            None => true,
            Some(module) => match scope.std_imports.get(module) {
                Some(None) => true,
                Some(Some(names)) => {
                    names.contains(&b.short_name)
                        || matches!(&b.kind, BuiltinKind::Method(owner) | BuiltinKind::Static(owner) if names.contains(owner))
                }
                None => false,
            },
        };
        let game = scope.game.iter().flat_map(|g| g.builtins.iter());
        self.file
            .sigs
            .builtins
            .iter()
            .filter(|b| visible(b))
            .chain(game)
            .collect()
    }

    /// True when the bare name `name`, written at `span` (in the file) before a dot, is not a
    /// value, so `name.x` reads a namespace (an enum, a type or a layer). The checker's record
    /// says so when it resolved the name; a name it did not see is a namespace unless a value of
    /// that name is in scope.
    fn is_namespace(&self, name: &str, span: Span, locals: &[&LocalDecl]) -> bool {
        match self.recorded(span) {
            Some(
                Symbol::Layer { .. }
                | Symbol::LibraryType(_)
                | Symbol::Def(_, DefKind::Enum | DefKind::TypeAlias),
            ) => true,
            Some(_) => false,
            None => self.scope.is_some_and(|scope| {
                !(locals.iter().any(|l| l.name == name)
                    || self.find_member(name).is_some()
                    || scope.values.contains_key(name))
            }),
        }
    }

    /// Collects the declarations of this chunk.
    fn declarations(&self, out: &mut Vec<Declaration>) {
        let text = self.file.text;
        let src = |span: Span| {
            text.get(self.file_span(span).range())
                .unwrap_or_default()
                .trim()
                .to_owned()
        };
        let mut push = |symbol: Symbol,
                        name: &ast::Ident,
                        span: Span,
                        detail: String,
                        docs: &ast::Docs,
                        container: Option<String>| {
            out.push(Declaration {
                symbol,
                name: name.name.clone(),
                name_span: self.file_span(name.span),
                span: self.file_span(span),
                detail,
                docs: docs.text.clone(),
                container,
            });
        };
        let no_docs = ast::Docs::default();
        let params = |params: &[ast::TypedParam]| {
            params
                .iter()
                .map(|p| src(p.span))
                .collect::<Vec<_>>()
                .join(", ")
        };
        for item in self.items {
            let def = |name: &ast::Ident, kind| Symbol::Def(self.def_key(&name.name, false), kind);
            match item {
                ast::Item::TypeAlias(decl) => {
                    push(
                        def(&decl.name, DefKind::TypeAlias),
                        &decl.name,
                        decl.span,
                        format!("type {} = {}", decl.name.name, src(decl.ty.span())),
                        &decl.docs,
                        None,
                    );
                    if let ast::TypeExpr::Record { fields, .. } = &decl.ty {
                        for (field, ty) in fields {
                            let record = self.def_key(&decl.name.name, false);
                            let symbol = Symbol::Field {
                                record,
                                field: field.name.clone(),
                            };
                            push(
                                symbol,
                                field,
                                field.span.to(ty.span()),
                                format!("{}: {}", field.name, src(ty.span())),
                                &no_docs,
                                Some(decl.name.name.clone()),
                            );
                        }
                    }
                }
                ast::Item::Enum(decl) => {
                    push(
                        def(&decl.name, DefKind::Enum),
                        &decl.name,
                        decl.span,
                        format!("enum {}", decl.name.name),
                        &decl.docs,
                        None,
                    );
                    for variant in &decl.variants {
                        let symbol = Symbol::Variant {
                            module: Some(self.module()),
                            enum_name: decl.name.name.clone(),
                            variant: variant.name.name.clone(),
                        };
                        push(
                            symbol,
                            &variant.name,
                            variant.span,
                            format!("{}.{}", decl.name.name, src(variant.span)),
                            &no_docs,
                            Some(decl.name.name.clone()),
                        );
                    }
                }
                ast::Item::Const(decl) => {
                    push(
                        def(&decl.name, DefKind::Const),
                        &decl.name,
                        decl.span,
                        format!("const {}: {}", decl.name.name, src(decl.ty.span())),
                        &decl.docs,
                        None,
                    );
                }
                ast::Item::Config(block) => {
                    for param in &block.params {
                        push(
                            def(&param.name, DefKind::Config),
                            &param.name,
                            param.span,
                            format!("config {}", src(param.span)),
                            &param.docs,
                            None,
                        );
                    }
                }
                ast::Item::Llm(decl) => {
                    let detail = format!(
                        "llm {}({}) -> {}",
                        decl.name.name,
                        params(&decl.params),
                        src(decl.reply.span())
                    );
                    push(
                        def(&decl.name, DefKind::Fn),
                        &decl.name,
                        decl.span,
                        detail,
                        &decl.docs,
                        None,
                    );
                }
                ast::Item::Fn(decl) => {
                    let detail = format!(
                        "fn {}({}) -> {}",
                        decl.name.name,
                        params(&decl.params),
                        src(decl.ret.span())
                    );
                    push(
                        def(&decl.name, DefKind::Fn),
                        &decl.name,
                        decl.span,
                        detail,
                        &decl.docs,
                        None,
                    );
                }
                ast::Item::Error(decl) => {
                    push(
                        def(&decl.name, DefKind::Error),
                        &decl.name,
                        decl.span,
                        format!("error {} = {}", decl.name.name, src(decl.message.span)),
                        &decl.docs,
                        None,
                    );
                }
                ast::Item::Layer(layer) => {
                    let needs: Vec<&str> = layer.needs.iter().map(|n| n.name.as_str()).collect();
                    let detail = if needs.is_empty() {
                        format!("layer {}", layer.name.name)
                    } else {
                        format!("layer {} needs {}", layer.name.name, needs.join(", "))
                    };
                    let symbol = Symbol::Layer {
                        module: self.module(),
                        name: layer.name.name.clone(),
                    };
                    // The header chunk ends at the layer's `{`; the outline spans the members too.
                    let span = Span {
                        start: layer.span.start,
                        end: layer.span.end.min(self.end_of_layer(layer.span.start)),
                    };
                    push(symbol, &layer.name, span, detail, &layer.docs, None);
                }
                ast::Item::Use(_) | ast::Item::Invalid(_) => {}
            }
        }
        let container = self.layer_name.clone();
        for member in self.members {
            let def = |name: &ast::Ident, kind| Symbol::Def(self.def_key(&name.name, true), kind);
            match member {
                ast::Member::State(block) => {
                    for field in &block.fields {
                        let detail = format!("state {}: {}", field.name.name, src(field.ty.span()));
                        push(
                            def(&field.name, DefKind::State),
                            &field.name,
                            field.span,
                            detail,
                            &field.docs,
                            container.clone(),
                        );
                    }
                }
                ast::Member::Tunable(param) => {
                    push(
                        def(&param.name, DefKind::Tunable),
                        &param.name,
                        param.span,
                        // From the name on: the declaration's span starts at the keyword.
                        format!(
                            "tunable {}",
                            src(Span {
                                start: param.name.span.start,
                                end: param.span.end,
                            })
                        ),
                        &param.docs,
                        container.clone(),
                    );
                }
                ast::Member::Computed(decl) => {
                    let detail = format!("computed {}: {}", decl.name.name, src(decl.ty.span()));
                    push(
                        def(&decl.name, DefKind::Computed),
                        &decl.name,
                        decl.span,
                        detail,
                        &decl.docs,
                        container.clone(),
                    );
                }
                ast::Member::Fn(decl) => {
                    let detail = format!(
                        "fn {}({}) -> {}",
                        decl.name.name,
                        params(&decl.params),
                        src(decl.ret.span())
                    );
                    push(
                        def(&decl.name, DefKind::Fn),
                        &decl.name,
                        decl.span,
                        detail,
                        &decl.docs,
                        container.clone(),
                    );
                }
                ast::Member::Action(decl) => {
                    let detail = format!("action {}({})", decl.name.name, params(&decl.params));
                    push(
                        def(&decl.name, DefKind::Action),
                        &decl.name,
                        decl.span,
                        detail,
                        &decl.docs,
                        container.clone(),
                    );
                }
                ast::Member::Model(_)
                | ast::Member::On(_)
                | ast::Member::Decide(_)
                | ast::Member::Revise(_)
                | ast::Member::TunableDefault(_)
                | ast::Member::Machine(_)
                | ast::Member::Invalid(_) => {}
            }
        }
    }

    /// The end of the layer whose header starts at `start` (chunk-relative), in chunk-relative
    /// terms: the end of its last member chunk, or of the header when it has none.
    fn end_of_layer(&self, start: u32) -> u32 {
        let chunks = &db::outline(self.file.db, self.file.file).chunks;
        let Some(ordinal) = chunks.iter().position(|(_, offset)| *offset == self.offset) else {
            return u32::MAX;
        };
        let layers = self.file.env.chunk_layers.get(self.file.path);
        let mut end = None;
        for (index, (chunk, offset)) in chunks.iter().enumerate().skip(ordinal + 1) {
            let is_member = chunk.kind(self.file.db) == ChunkKind::Member;
            let same_layer =
                layers.and_then(|l| l.get(index)).cloned().flatten() == self.layer_name;
            if !is_member || !same_layer {
                break;
            }
            end = Some(offset + chunk.text(self.file.db).trim_end().len() as u32);
        }
        match end {
            // One past the member's end covers the closing brace when it follows right away.
            Some(end) => (end + 1).saturating_sub(self.offset).max(start),
            None => u32::MAX,
        }
    }

    /// Completion after `base.`, where `dot` is the file offset of the dot.
    fn dot_completions(&self, dot: u32) -> Vec<Completion> {
        let text = self.file.text;
        let bytes = text.as_bytes();
        let mut start = dot as usize;
        while start > 0
            && (bytes[start - 1].is_ascii_alphanumeric()
                || bytes[start - 1] == b'_'
                || bytes[start - 1] == b'.')
        {
            start -= 1;
        }
        let chain: Vec<&str> = text[start..dot as usize].split('.').collect();
        let Some(scope) = self.scope else {
            return Vec::new();
        };
        let locals = self.locals_at(dot);
        let item = |label: &str, kind, detail: String, docs: &str| Completion {
            label: label.to_owned(),
            kind,
            detail,
            docs: docs.to_owned(),
        };
        // The type of a receiver that is not a plain name (a call, an index...) comes from the
        // expression that ends right at the dot, when the checker saw one.
        let typed = || -> Option<Ty> {
            let rel = dot.checked_sub(self.offset)?;
            let from_ir = self
                .types
                .iter()
                .filter(|(span, ty)| span.end == rel && !ty.has_error())
                .max_by_key(|(span, _)| span.len())
                .map(|(_, ty)| ty.clone());
            from_ir.or_else(|| {
                let (first, rest) = chain.split_first()?;
                let mut ty = self.name_type(first, &locals)?;
                for field in rest {
                    ty = match ty {
                        Ty::Record(r) => r.fields.iter().find(|(n, _)| n == field)?.1.clone(),
                        _ => return None,
                    };
                }
                Some(ty)
            })
        };
        let mut out = Vec::new();
        match chain.as_slice() {
            ["game"] => {
                if let Some(game) = &scope.game {
                    for q in &game.queries {
                        let (kind, detail) = match &q.sig {
                            Some(sig) => (
                                CompletionKind::Function,
                                format!("fn({}) -> {}", params_text(&sig.params), sig.ret),
                            ),
                            None => (CompletionKind::Property, q.ty.to_string()),
                        };
                        out.push(item(&q.name, kind, detail, &q.doc));
                    }
                    for m in &game.effects {
                        out.push(item(
                            &m.name,
                            CompletionKind::Event,
                            format!("effect ({})", params_text(&m.params)),
                            &m.doc,
                        ));
                    }
                    for m in &game.observations {
                        out.push(item(
                            &m.name,
                            CompletionKind::Event,
                            format!("observation ({})", params_text(&m.params)),
                            &m.doc,
                        ));
                    }
                }
                return out;
            }
            ["sim"] => {
                return vec![item(
                    "next",
                    CompletionKind::Function,
                    "sim.next(action(args)) -> Preview".into(),
                    "A one-step preview of an action.",
                )];
            }
            [name]
                if self.is_namespace(
                    name,
                    Span {
                        start: start as u32,
                        end: dot,
                    },
                    &locals,
                ) =>
            {
                if let Some(TypeDef::Enum(index)) = scope.types.get(*name) {
                    if let Some(info) = scope.enums.get(*index) {
                        for (variant, payload) in &info.variants {
                            let payload = payload
                                .iter()
                                .map(ToString::to_string)
                                .collect::<Vec<_>>()
                                .join(", ");
                            out.push(item(
                                variant,
                                CompletionKind::Variant,
                                if payload.is_empty() {
                                    info.name.clone()
                                } else {
                                    format!("{}({payload})", info.name)
                                },
                                "",
                            ));
                        }
                    }
                    return out;
                }
                if let Some(id) = scope.layer(name) {
                    // Only a layer the cursor's layer may read (itself or one it needs).
                    let visible = self.layer.is_none_or(|own| {
                        own == id
                            || scope
                                .layers
                                .get(own.index())
                                .is_some_and(|l| l.below.contains(&id))
                    });
                    if let (true, Some(layer)) = (visible, scope.layers.get(id.index())) {
                        out.extend(
                            layer
                                .members
                                .iter()
                                .map(|(n, e)| member_completion(n, &e.def)),
                        );
                    }
                    return out;
                }
                for b in self.builtins() {
                    if matches!(&b.kind, BuiltinKind::Static(owner) if owner == name) {
                        out.push(item(
                            &b.short_name,
                            CompletionKind::Function,
                            b.text.clone(),
                            &b.doc,
                        ));
                    }
                }
                return out;
            }
            _ => {}
        }
        let Some(ty) = typed() else { return out };
        match &ty {
            Ty::Record(record) => {
                for (field, ty) in &record.fields {
                    out.push(item(field, CompletionKind::Field, ty.to_string(), ""));
                }
            }
            Ty::Snapshot => out.extend(
                self.visible_members()
                    .into_iter()
                    .filter(|(_, e)| !matches!(e.def, MemberDef::Fn(_) | MemberDef::Action(..)))
                    .map(|(n, e)| member_completion(n, &e.def)),
            ),
            _ => {}
        }
        if let Some(owner) = type_constructor(&ty) {
            for b in self.builtins() {
                if matches!(&b.kind, BuiltinKind::Method(o) if *o == owner) {
                    out.push(item(
                        &b.short_name,
                        CompletionKind::Method,
                        b.text.clone(),
                        &b.doc,
                    ));
                }
            }
        }
        out
    }

    /// The members of the chunk's layer and of the layers it needs: what a member may read.
    fn visible_members(&self) -> Vec<(&'f String, &'f crate::env::MemberEntry)> {
        let (Some(scope), Some(own)) = (self.scope, self.layer) else {
            return Vec::new();
        };
        let mut ids = vec![own];
        if let Some(layer) = scope.layers.get(own.index()) {
            ids.extend(layer.below.iter().copied());
        }
        ids.iter()
            .filter_map(|id| scope.layers.get(id.index()))
            .flat_map(|l| l.members.iter())
            .collect()
    }

    /// The locals in scope at `offset` (in the file): declared before it, in a scope that has
    /// not closed before it, in declaration order.
    fn locals_at(&self, offset: u32) -> Vec<&'f LocalDecl> {
        self.names
            .into_iter()
            .flat_map(|names| names.locals.iter())
            .filter(|local| {
                self.file_span(local.span).end <= offset
                    && local.scope_end.saturating_add(self.offset) >= offset
            })
            .collect()
    }

    /// Completion of a bare name at `offset`.
    fn scope_completions(&self, offset: u32) -> Vec<Completion> {
        let mut out = keyword_completions();
        let Some(scope) = self.scope else { return out };
        let item = |label: &str, kind, detail: String, docs: &str| Completion {
            label: label.to_owned(),
            kind,
            detail,
            docs: docs.to_owned(),
        };
        for local in self.locals_at(offset) {
            let detail = if local.ty.has_error() {
                String::new()
            } else {
                local.ty.to_string()
            };
            out.push(item(&local.name, CompletionKind::Local, detail, ""));
        }
        out.extend(
            self.visible_members()
                .into_iter()
                .map(|(n, e)| member_completion(n, &e.def)),
        );
        if let (Some(scope), Some(own)) = (self.scope, self.layer) {
            // Layer names for qualified reads and `revise layer.tunable`: this layer and below.
            let mut ids = vec![own];
            ids.extend(
                scope
                    .layers
                    .get(own.index())
                    .into_iter()
                    .flat_map(|l| l.below.iter().copied()),
            );
            for layer in ids.iter().filter_map(|id| scope.layers.get(id.index())) {
                out.push(item(
                    &layer.name,
                    CompletionKind::Layer,
                    format!("layer {}", layer.name),
                    "",
                ));
            }
        }
        for (name, (def, _, _)) in &scope.values {
            let (kind, detail) = match def {
                ValueDef::Const { ty, .. } => {
                    (CompletionKind::Constant, format!("const {name}: {ty}"))
                }
                ValueDef::Config { ty, .. } => {
                    (CompletionKind::Constant, format!("config {name}: {ty}"))
                }
                ValueDef::Fn(info) => (
                    CompletionKind::Function,
                    fn_detail(name, &info.params, &info.ret),
                ),
            };
            out.push(item(name, kind, detail, ""));
        }
        for b in self.builtins() {
            if b.kind == BuiltinKind::Function {
                out.push(item(
                    &b.short_name,
                    CompletionKind::Function,
                    b.text.clone(),
                    &b.doc,
                ));
            }
        }
        for (name, def) in &scope.types {
            let kind = if matches!(def, TypeDef::Enum(_)) {
                CompletionKind::Enum
            } else {
                CompletionKind::Type
            };
            out.push(item(name, kind, format!("type {name}"), ""));
        }
        for name in [
            "Int", "Float", "Bool", "String", "Option", "List", "Set", "Map", "Some", "None",
        ] {
            let kind = if matches!(name, "Some" | "None") {
                CompletionKind::Variant
            } else {
                CompletionKind::Type
            };
            out.push(item(name, kind, String::new(), ""));
        }
        for name in scope.errors.keys() {
            out.push(item(
                name,
                CompletionKind::Constant,
                format!("error {name}"),
                "",
            ));
        }
        out
    }
}

fn fn_detail(name: &str, params: &[(String, Ty)], ret: &Ty) -> String {
    let params = params
        .iter()
        .map(|(n, t)| format!("{n}: {t}"))
        .collect::<Vec<_>>()
        .join(", ");
    format!("fn {name}({params}) -> {ret}")
}

fn member_completion(name: &str, def: &MemberDef) -> Completion {
    let (kind, detail) = match def {
        MemberDef::State(_, ty) => (CompletionKind::Property, format!("state {name}: {ty}")),
        MemberDef::Tunable(_, ty, _) => (CompletionKind::Property, format!("tunable {name}: {ty}")),
        MemberDef::Computed(_, ty) => (CompletionKind::Property, format!("computed {name}: {ty}")),
        MemberDef::Fn(info) => (
            CompletionKind::Function,
            fn_detail(name, &info.params, &info.ret),
        ),
        MemberDef::Action(_, params) => {
            let params = params
                .iter()
                .map(|(n, t)| format!("{n}: {t}"))
                .collect::<Vec<_>>()
                .join(", ");
            (CompletionKind::Action, format!("action {name}({params})"))
        }
    };
    Completion {
        label: name.to_owned(),
        kind,
        detail,
        docs: String::new(),
    }
}

/// Collects the type of every expression of a chunk's IR and of every local a pattern binds,
/// with chunk-relative spans.
fn collect_chunk_types(ir: &ChunkIr, out: &mut Vec<(Span, Ty)>) {
    struct Types<'o> {
        out: &'o mut Vec<(Span, Ty)>,
        /// The types of the locals of the definition being walked.
        locals: Vec<Ty>,
    }
    fn span(span: ir::SrcSpan) -> Span {
        Span {
            start: span.start,
            end: span.end,
        }
    }
    impl Visit for Types<'_> {
        fn expr(&mut self, expr: &ir::Expr) {
            self.out.push((span(expr.span), expr.ty.clone()));
            walk::expr(self, expr);
        }
        fn pattern(&mut self, pattern: &ir::Pattern) {
            if let ir::PatternKind::Bind(id) = pattern.kind
                && let Some(ty) = self.locals.get(id.index())
            {
                self.out.push((span(pattern.span), ty.clone()));
            }
            walk::pattern(self, pattern);
        }
        fn frame(&mut self, frame: &ir::Frame) {
            self.locals = frame.locals.iter().map(|l| l.ty.clone()).collect();
        }
    }
    walk::chunk(
        &mut Types {
            out,
            locals: Vec::new(),
        },
        ir,
    );
}
