//! The salsa database and its queries.
//!
//! Inputs are the files ([`SourceFile`]) and the signature set ([`Inputs`]). The queries form a
//! pipeline whose grain is the chunk, one item or layer member (see [`crate::split`]):
//!
//! ```text
//! outline(file) ─► parsed(chunk) ─► chunk_signature(chunk) ─► environment(inputs)
//!                        │                                           │
//!                        └────────────► check_chunk(key) ◄──────────┘
//!                                              │
//!                  global_checks(inputs), own_keys(file), file_diagnostics(file)
//!                                              │
//!                  program(module)     cost(module) ─► cost_diagnostics(inputs)
//! ```
//!
//! `program` and `cost` both read a module's chunk checks: `program` assembles them into an
//! [`ir::Program`] for the commands that run a module, `cost` reads them by reference through a
//! [`lower::View`], so the diagnostics never clone the module's IR.
//!
//! A chunk is interned by its text, so an edit inside one member produces one new chunk; the
//! chunks of every other member keep their identity and their parses and checks are reused. The
//! environment re-runs after every edit (it reads the outline) but its value only changes when a
//! signature does, so salsa backdates it and the checks that depend on it stay valid.

// The accessors that salsa generates for inputs and interned structs carry no docs of their own.
#![allow(missing_docs)]

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex};

use crate::check::{self, ChunkCheck, Facts};
use crate::codes::Code;
use crate::cost::CostReport;
use crate::diagnostic::{Diagnostic, SourceText};
use crate::env::{self, ChunkSig, Env, FileSig, Located, Scope};
use crate::global;
use crate::ir::{self, SrcSpan};
use crate::lower;
use crate::parse::{self, ParsedChunk};
use crate::signatures::SignatureSet;
use crate::split::{self, ChunkKind};

/// One source file.
#[salsa::input(debug)]
pub struct SourceFile {
    /// The path as loaded; diagnostics name the file by it.
    #[returns(ref)]
    pub path: String,
    /// The text.
    #[returns(ref)]
    pub text: Arc<str>,
}

/// The workspace's inputs: its files, in path order, and the known signatures.
#[salsa::input(debug)]
pub struct Inputs {
    /// The files.
    #[returns(ref)]
    pub files: Vec<SourceFile>,
    /// Builtins, library modules and games.
    #[returns(ref)]
    pub signatures: Arc<SignatureSet>,
    /// The limit on a turn phase's cost bound, past which [`cost_diagnostics`] reports E0901.
    pub cost_limit: u64,
}

/// The text of one chunk, interned: equal texts are one chunk.
///
/// Interned chunks are never collected (`revisions = usize::MAX`): salsa's default would recycle
/// a chunk that an edit's revision did not read, and with it the memoised parse and check that
/// an incremental re-check is supposed to reuse. A workspace grows by one chunk per edited text.
#[salsa::interned(no_lifetime, debug, revisions = usize::MAX)]
pub struct Chunk {
    /// How to parse it.
    pub kind: ChunkKind,
    /// The text.
    #[returns(ref)]
    pub text: String,
}

/// Where a chunk is checked: the module whose program it belongs to and, for a member, its
/// layer. Interned once per layer, so that keying every chunk on it hashes two ids, not two
/// strings. Never collected, for the same reason as [`Chunk`].
#[salsa::interned(no_lifetime, debug, revisions = usize::MAX)]
pub struct Context {
    /// The workspace.
    pub inputs: Inputs,
    /// The module whose scope the chunk is checked in.
    #[returns(ref)]
    pub module: String,
    /// The layer of a member chunk.
    #[returns(ref)]
    pub layer: Option<String>,
}

/// What a chunk check is keyed on: the chunk and where it is checked. Never collected, for the
/// same reason as [`Chunk`].
#[salsa::interned(no_lifetime, debug, revisions = usize::MAX)]
pub struct CheckKey {
    /// Where the chunk is checked.
    pub context: Context,
    /// The chunk.
    pub chunk: Chunk,
}

/// A file split into chunks: each chunk and its offset in the file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Outline {
    /// The chunks in source order.
    pub chunks: Vec<(Chunk, u32)>,
    /// True when the file ends inside a layer.
    pub unclosed_layer: bool,
}

/// Splits a file into chunks.
#[salsa::tracked(returns(ref))]
pub fn outline(db: &dyn salsa::Database, file: SourceFile) -> Outline {
    let split = split::split(file.text(db));
    let chunks = split
        .chunks
        .into_iter()
        .map(|raw| (Chunk::new(db, raw.kind, raw.text), raw.offset))
        .collect();
    Outline {
        chunks,
        unclosed_layer: split.unclosed_layer,
    }
}

/// Parses one chunk.
#[salsa::tracked(returns(ref))]
pub fn parsed(db: &dyn salsa::Database, chunk: Chunk) -> ParsedChunk {
    parse::parse_chunk(chunk.kind(db), chunk.text(db))
}

/// The signature of a chunk: its declarations with bodies stripped.
#[salsa::tracked(returns(ref))]
pub fn chunk_signature(db: &dyn salsa::Database, chunk: Chunk) -> Arc<ChunkSig> {
    let parsed = parsed(db, chunk);
    Arc::new(ChunkSig {
        header: parsed.header.as_ref().map(env::path_text),
        header_span: parsed.header.as_ref().map(|h| h.span).unwrap_or_default(),
        items: parsed.items.iter().map(env::strip_item).collect(),
        members: parsed
            .members
            .iter()
            .filter_map(env::strip_member)
            .collect(),
        is_member: chunk.kind(db) == ChunkKind::Member,
    })
}

/// The signatures of a file's chunks, in order. An edit inside a body changes the outline but
/// not this list, so salsa backdates it and the environment is not rebuilt.
#[salsa::tracked(returns(ref))]
pub fn file_signature(db: &dyn salsa::Database, file: SourceFile) -> Vec<Shared<ChunkSig>> {
    outline(db, file)
        .chunks
        .iter()
        .map(|(chunk, _)| Shared(chunk_signature(db, *chunk).clone()))
        .collect()
}

/// A shared value compared by pointer first: an unchanged chunk's memoised signature is the same
/// allocation in every revision, so comparing a file's signatures after an edit costs one pointer
/// comparison per unchanged chunk instead of a walk of its syntax tree.
#[derive(Clone, Debug)]
pub struct Shared<T>(pub Arc<T>);

impl<T: PartialEq> PartialEq for Shared<T> {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0) || *self.0 == *other.0
    }
}

/// The environment of the whole workspace.
#[salsa::tracked(returns(ref))]
pub fn environment(db: &dyn salsa::Database, inputs: Inputs) -> Arc<Env> {
    let files: Vec<FileSig> = inputs
        .files(db)
        .iter()
        .map(|file| FileSig {
            path: file.path(db).clone(),
            chunks: file_signature(db, *file)
                .iter()
                .map(|sig| &*sig.0)
                .collect(),
        })
        .collect();
    Arc::new(env::build(&files, inputs.signatures(db)))
}

/// Checks and lowers one chunk in the scope of a module.
#[salsa::tracked(returns(ref))]
pub fn check_chunk(db: &dyn salsa::Database, key: CheckKey) -> ChunkCheck {
    let context = key.context(db);
    let inputs = context.inputs(db);
    let env = environment(db, inputs);
    let Some(scope) = env.scopes.get(context.module(db)) else {
        return ChunkCheck::default();
    };
    let layer = context
        .layer(db)
        .as_deref()
        .and_then(|name| scope.layer(name));
    let parsed = parsed(db, key.chunk(db));
    let mut out = check::check_chunk(
        scope,
        inputs.signatures(db),
        layer,
        &parsed.items,
        &parsed.members,
    );
    // The IR's spans are labelled with the key, so that what an analysis of a module's view
    // reports can be placed in its file ([`cost`]).
    out.label = salsa::plumbing::AsId::as_id(&key).index();
    lower::label(&mut out.ir, out.label);
    // A checker diagnostic that overlaps a syntax error is usually its consequence (an argument
    // the parser dropped, an operand it rebuilt): one mistake, one diagnostic.
    let overlaps = |d: &Diagnostic| {
        parsed
            .errors
            .iter()
            .any(|e| d.span.start <= e.span.end && e.span.start <= d.span.end)
    };
    out.diagnostics.retain(|d| !overlaps(d));
    // The chunk's syntax errors come first, so the file's diagnostics need one query per chunk.
    out.diagnostics.splice(0..0, parsed.errors.iter().cloned());
    out
}

/// A file of a workspace: the key of the per-file queries. Never collected, for the same reason
/// as [`Chunk`].
#[salsa::interned(no_lifetime, debug, revisions = usize::MAX)]
pub struct FileKey {
    /// The workspace.
    pub inputs: Inputs,
    /// The file.
    pub file: SourceFile,
}

/// The keys under which the chunks of a file are checked in their own module, by ordinal.
#[salsa::tracked(returns(ref))]
pub fn own_keys(db: &dyn salsa::Database, key: FileKey) -> Vec<Option<CheckKey>> {
    let (inputs, file) = (key.inputs(db), key.file(db));
    let env = environment(db, inputs);
    let Some(module) = env.file_modules.get(file.path(db)) else {
        return Vec::new();
    };
    let layers = env.chunk_layers.get(file.path(db));
    // Consecutive chunks mostly share their layer, so the context is interned once per run.
    let mut current: Option<(Option<&String>, Context)> = None;
    outline(db, file)
        .chunks
        .iter()
        .enumerate()
        .map(|(ordinal, (chunk, _))| {
            let layer = if chunk.kind(db) == ChunkKind::Member {
                layers
                    .and_then(|layers| layers.get(ordinal))
                    .and_then(Option::as_ref)
            } else {
                None
            };
            let context = match current {
                Some((previous, context)) if previous == layer => context,
                _ => {
                    let context = Context::new(db, inputs, module.clone(), layer.cloned());
                    current = Some((layer, context));
                    context
                }
            };
            Some(CheckKey::new(db, context, *chunk))
        })
        .collect()
}

/// The facts of a file's chunks, by ordinal. An edit that leaves references, uses and spans
/// within members unchanged leaves this list equal, so the whole-program checks do not re-run.
#[salsa::tracked(returns(ref))]
pub fn file_facts(db: &dyn salsa::Database, key: FileKey) -> Vec<(u32, Arc<Facts>)> {
    own_keys(db, key)
        .iter()
        .enumerate()
        .filter_map(|(ordinal, key)| Some((ordinal as u32, check_chunk(db, (*key)?).facts.clone())))
        .collect()
}

/// The checks that need the whole workspace: cycles, nested `sim.next`, unused definitions.
#[salsa::tracked(returns(ref))]
pub fn global_checks(db: &dyn salsa::Database, inputs: Inputs) -> Vec<Located> {
    let env = environment(db, inputs);
    let mut facts = Vec::new();
    for file in inputs.files(db) {
        for (ordinal, chunk_facts) in file_facts(db, FileKey::new(db, inputs, *file)) {
            facts.push((file.path(db).clone(), *ordinal, &**chunk_facts));
        }
    }
    global::check(env, &facts)
}

/// Every diagnostic of one file, with spans in the file, sorted by position.
#[salsa::tracked(returns(ref))]
pub fn file_diagnostics(db: &dyn salsa::Database, key: FileKey) -> Vec<Diagnostic> {
    let (inputs, file) = (key.inputs(db), key.file(db));
    let path = file.path(db);
    let outline = outline(db, file);
    let offset_of = |ordinal: u32| {
        outline
            .chunks
            .get(ordinal as usize)
            .map_or(0, |(_, offset)| *offset)
    };
    let keys = own_keys(db, key);
    let mut out = Vec::new();
    for (ordinal, (chunk, offset)) in outline.chunks.iter().enumerate() {
        let diagnostics = match keys.get(ordinal).copied().flatten() {
            Some(key) => &check_chunk(db, key).diagnostics,
            // A file the environment left out (its path is another file's module name) is not
            // checked; its syntax errors are still reported.
            None => &parsed(db, *chunk).errors,
        };
        out.extend(diagnostics.iter().map(|d| d.clone().shifted(*offset)));
    }
    if outline.unclosed_layer {
        // The same words as the formatter's parse of the whole file.
        let end = file.text(db).len() as u32;
        out.push(
            Diagnostic::new(
                Code::Syntax,
                harness_grammar::Span { start: end, end },
                "expected `}` to close the layer, found the end of the file".to_owned(),
            )
            .primary("expected `}`")
            .help("add the `}` that closes the layer after its last member"),
        );
    }
    if outline.chunks.is_empty() {
        out.push(
            Diagnostic::new(
                Code::EmptyFile,
                harness_grammar::Span::default(),
                "this file holds no items".to_owned(),
            )
            .help("write the harness, or leave the file out of the paths to check"),
        );
    }
    let env = environment(db, inputs);
    for located in env.diagnostics.iter().chain(global_checks(db, inputs)) {
        if located.file == *path {
            out.push(
                located
                    .diagnostic
                    .clone()
                    .shifted(offset_of(located.ordinal)),
            );
        }
    }
    if out.is_empty() {
        // A clean file needs no source text: indexing its lines is left to files that have
        // something to show.
        return out;
    }
    let source = SourceText::new(path.clone(), file.text(db).clone());
    let mut out: Vec<Diagnostic> = out
        .into_iter()
        .map(|d| d.in_file(path.clone()).with_source(source.clone()))
        .collect();
    out.sort_by(|a, b| a.sort_key().cmp(&b.sort_key()));
    out.dedup_by(|a, b| a.code == b.code && a.span == b.span && a.message == b.message);
    out
}

/// A module of a workspace: the key of the per-module queries. Never collected, for the same
/// reason as [`Chunk`].
#[salsa::interned(no_lifetime, debug, revisions = usize::MAX)]
pub struct ModuleKey {
    /// The workspace.
    pub inputs: Inputs,
    /// The module's name.
    #[returns(ref)]
    pub module: String,
}

/// The files of a module's program, by path: the files of the modules it is made of, in the
/// order of [`ir::Program::files`]. Empty for an unknown module.
#[salsa::tracked(returns(ref))]
pub fn program_files(db: &dyn salsa::Database, key: ModuleKey) -> Vec<String> {
    let env = environment(db, key.inputs(db));
    let Some(scope) = env.scopes.get(key.module(db)) else {
        return Vec::new();
    };
    scope
        .program_modules
        .iter()
        .filter_map(|m| {
            env.file_modules
                .iter()
                .find(|(_, module)| *module == m)
                .map(|(path, _)| path.clone())
        })
        .collect()
}

/// A checked module's chunks, in program order, with their file index in [`program_files`], their
/// offset in it, their layer and their check.
struct ModuleChunks<'db> {
    scope: &'db Scope,
    chunks: Vec<(u32, u32, Option<ir::LayerId>, &'db ChunkCheck)>,
}

impl<'db> ModuleChunks<'db> {
    /// The chunks as [`lower`] places them.
    fn placed(&self) -> Vec<lower::Placed<'db>> {
        self.chunks
            .iter()
            .map(|(file, offset, layer, check)| lower::Placed {
                file: *file,
                offset: *offset,
                layer: *layer,
                ir: &check.ir,
            })
            .collect()
    }
}

/// The chunks of a module's program, checked; the errors of the files of the modules it is
/// made of when they have any.
fn module_chunks(
    db: &dyn salsa::Database,
    key: ModuleKey,
) -> Result<ModuleChunks<'_>, Vec<Diagnostic>> {
    let inputs = key.inputs(db);
    let module = key.module(db);
    let env = environment(db, inputs);
    let Some(scope) = env.scopes.get(module) else {
        let loaded = env
            .file_modules
            .values()
            .map(|m| format!("`{m}`"))
            .collect::<Vec<_>>()
            .join(", ");
        return Err(vec![
            Diagnostic::new(
                Code::UnknownModule,
                harness_grammar::Span::default(),
                format!("unknown module `{module}`"),
            )
            .help(format!("the loaded modules are: {loaded}")),
        ]);
    };
    let by_path: std::collections::HashMap<&String, SourceFile> =
        inputs.files(db).iter().map(|f| (f.path(db), *f)).collect();
    let paths = program_files(db, key);
    let errors: Vec<Diagnostic> = paths
        .iter()
        .filter_map(|path| by_path.get(path))
        .flat_map(|file| file_diagnostics(db, FileKey::new(db, inputs, *file)))
        .filter(|d| d.is_error())
        .cloned()
        .collect();
    if !errors.is_empty() {
        return Err(errors);
    }
    let mut chunks = Vec::new();
    for (file_index, path) in paths.iter().enumerate() {
        let Some(file) = by_path.get(path).copied() else {
            continue;
        };
        let layers = env.chunk_layers.get(path);
        // The chunks of the module's own file are checked under the keys the file's
        // diagnostics already made; those of the modules it uses are keyed here.
        let own = (env.file_modules.get(path) == Some(module))
            .then(|| own_keys(db, FileKey::new(db, inputs, file)));
        let mut current: Option<(Option<&String>, Context)> = None;
        for (ordinal, (chunk, offset)) in outline(db, file).chunks.iter().enumerate() {
            let layer_name = if chunk.kind(db) == ChunkKind::Member {
                layers
                    .and_then(|layers| layers.get(ordinal))
                    .and_then(Option::as_ref)
            } else {
                None
            };
            let layer = layer_name.and_then(|name| scope.layer(name));
            let key = match own.and_then(|keys| keys.get(ordinal).copied().flatten()) {
                Some(key) => key,
                None => {
                    let context = match current {
                        Some((previous, context)) if previous == layer_name => context,
                        _ => {
                            let context =
                                Context::new(db, inputs, module.clone(), layer_name.cloned());
                            current = Some((layer_name, context));
                            context
                        }
                    };
                    CheckKey::new(db, context, *chunk)
                }
            };
            chunks.push((file_index as u32, *offset, layer, check_chunk(db, key)));
        }
    }
    Ok(ModuleChunks { scope, chunks })
}

/// The checked program of a module, lowered to IR; the errors of the files of the modules it
/// is made of when they have any.
///
/// Memoised, so the language server and the commands that run a module lower it once per
/// revision, and an edit elsewhere in the workspace does not lower it again. The diagnostics do
/// not read it: the cost bound reads a [`lower::View`] of the same chunks.
#[salsa::tracked(returns(ref))]
pub fn program(
    db: &dyn salsa::Database,
    key: ModuleKey,
) -> Result<Shared<ir::Program>, Vec<Diagnostic>> {
    let inputs = key.inputs(db);
    let module = key.module(db);
    let parts = module_chunks(db, key)?;
    let scope = parts.scope;
    let placed = parts.placed();
    let paths = program_files(db, key);
    let by_path: std::collections::HashMap<&String, SourceFile> =
        inputs.files(db).iter().map(|f| (f.path(db), *f)).collect();
    let layer_spans: Vec<SrcSpan> = scope
        .layers
        .iter()
        .map(|info| {
            let file = paths
                .iter()
                .position(|p| *p == info.at.file)
                .unwrap_or_default();
            let offset = by_path
                .get(&info.at.file)
                .and_then(|f| {
                    outline(db, *f)
                        .chunks
                        .get(info.at.ordinal as usize)
                        .map(|(_, o)| *o)
                })
                .unwrap_or_default();
            SrcSpan {
                file: file as u32,
                start: info.at.span.start + offset,
                end: info.at.span.end + offset,
            }
        })
        .collect();
    let game = scope.game.as_ref().map(|g| g.name.clone());
    match guarded(module, || {
        lower::assemble(scope, game, paths.clone(), &layer_spans, &placed)
    }) {
        Ok(Ok(program)) => Ok(Shared(Arc::new(program))),
        Ok(Err(problem)) => Err(vec![
            Diagnostic::internal(harness_grammar::Span::default(), problem).in_file(module),
        ]),
        Err(internal) => Err(vec![*internal]),
    }
}

/// The cost bound of a module's turn, per phase ([`crate::cost`]), with spans in the files of
/// [`program_files`]; the module's errors when it has any.
///
/// It reads the module's chunk checks through a [`lower::View`], its game's declared bounds and
/// the limit: an edit re-runs the analysis, but neither clones the chunks' IR nor moves their
/// spans, and the report only changes when a bound or a reported span does.
#[salsa::tracked(returns(ref))]
pub fn cost(db: &dyn salsa::Database, key: ModuleKey) -> Result<CostReport, Vec<Diagnostic>> {
    let module = key.module(db);
    let parts = module_chunks(db, key)?;
    let placed = parts.placed();
    let bounds = game_bounds(db, key);
    let limit = key.inputs(db).cost_limit(db);
    let view = match lower::view(parts.scope, &placed) {
        Ok(view) => view,
        Err(problem) => {
            return Err(vec![
                Diagnostic::internal(harness_grammar::Span::default(), problem).in_file(module),
            ]);
        }
    };
    let mut report = guarded(module, || crate::cost::analyse(&view, bounds, limit))
        .map_err(|internal| vec![*internal])?;
    // The analysis reports spans labelled by chunk (see `check_chunk`); each is moved into its
    // file here, and the lists sorted again in file order. Most reports name no span, so the
    // table of places is made only for one that does.
    let places: std::collections::HashMap<u32, (u32, u32)> = if report.over.is_empty() {
        std::collections::HashMap::new()
    } else {
        parts
            .chunks
            .iter()
            .map(|(file, offset, _, check)| (check.label, (*file, *offset)))
            .collect()
    };
    let place = |over: &mut Vec<(SrcSpan, u64)>| {
        for (span, _) in over.iter_mut() {
            let (file, offset) = places.get(&span.file).copied().unwrap_or_default();
            *span = SrcSpan {
                file,
                start: span.start + offset,
                end: span.end + offset,
            };
        }
        over.sort();
        over.dedup();
    };
    for phase in &mut report.phases {
        place(&mut phase.over);
    }
    place(&mut report.over);
    Ok(report)
}

/// The query bounds declared by the game of a module, by query. A query of its own so that the
/// cost of a module depends on its game's bounds, not on the whole environment.
#[salsa::tracked(returns(ref))]
pub fn game_bounds(db: &dyn salsa::Database, key: ModuleKey) -> BTreeMap<String, u64> {
    environment(db, key.inputs(db))
        .scopes
        .get(key.module(db))
        .and_then(|scope| scope.game.as_ref())
        .map(|game| game.bounds.iter().cloned().collect())
        .unwrap_or_default()
}

/// E0901 for every module whose turn has a phase bounded above the limit, at the expressions
/// whose own bound passes it. Modules with errors are skipped: their bound needs a checked
/// program.
#[salsa::tracked(returns(ref))]
pub fn cost_diagnostics(db: &dyn salsa::Database, inputs: Inputs) -> Vec<Diagnostic> {
    let env = environment(db, inputs);
    // A file's text is read only for a diagnostic placed in it, so that an edit does not make
    // this query run again when every module stays within the limit.
    let sourced = |path: &str, diagnostic: Diagnostic| {
        let diagnostic = diagnostic.in_file(path);
        match inputs.files(db).iter().find(|f| f.path(db) == path) {
            Some(file) => {
                diagnostic.with_source(SourceText::new(path.to_owned(), file.text(db).clone()))
            }
            None => diagnostic,
        }
    };
    let mut out: Vec<Diagnostic> = Vec::new();
    let mut seen = BTreeSet::new();
    for (path, module) in &env.file_modules {
        let key = ModuleKey::new(db, inputs, module.clone());
        let Ok(report) = cost(db, key) else {
            continue;
        };
        let limit = crate::cost::show(report.limit);
        for (span, steps) in &report.over {
            let file = program_files(db, key)
                .get(span.file as usize)
                .cloned()
                .unwrap_or_else(|| path.clone());
            if !seen.insert((file.clone(), span.start, span.end, "")) {
                continue;
            }
            out.push(sourced(
                &file,
                Diagnostic::new(
                    Code::CostOverLimit,
                    harness_grammar::Span::new(span.start as usize, span.end as usize),
                    format!(
                        "this expression's work is bounded by {} steps per turn, over the limit \
                         of {limit}",
                        crate::cost::show(*steps)
                    ),
                )
                .help(
                    "make the aggregate smaller or aggregate once instead of once per element; \
                     `harness check --cost` shows the bound of each phase",
                ),
            ));
        }
        for phase in report.over_limit().filter(|p| p.over.is_empty()) {
            // Many parts, none over the limit alone: the module is the culprit.
            if seen.insert((path.clone(), 0, 0, phase.phase)) {
                out.push(sourced(
                    path,
                    Diagnostic::new(
                        Code::CostOverLimit,
                        harness_grammar::Span::new(0, 0),
                        format!(
                            "the {} phase of a turn of `{module}` is bounded by {} steps, over \
                             the limit of {limit}",
                            phase.phase,
                            crate::cost::show(phase.steps)
                        ),
                    )
                    .help("`harness check --cost` shows the bound of each phase"),
                ));
            }
        }
    }
    out
}

/// Runs a pure computation, turning a panic (a bug of ours) into an internal-error diagnostic.
pub(crate) fn guarded<T>(what: &str, run: impl FnOnce() -> T) -> Result<T, Box<Diagnostic>> {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(run)) {
        Ok(value) => Ok(value),
        Err(payload) => {
            let message = payload
                .downcast_ref::<&str>()
                .map(|s| (*s).to_owned())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown panic".to_owned());
            Err(Box::new(
                Diagnostic::internal(harness_grammar::Span::default(), message).in_file(what),
            ))
        }
    }
}

/// The salsa database of a workspace.
#[salsa::db]
#[derive(Clone)]
pub struct Database {
    storage: salsa::Storage<Self>,
    log: Arc<Mutex<Option<Vec<String>>>>,
}

impl Default for Database {
    /// A database without a query log: salsa then skips building an event for every query.
    fn default() -> Self {
        Self {
            storage: salsa::Storage::new(None),
            log: Arc::default(),
        }
    }
}

impl Database {
    /// A database that can record which queries execute (see [`Database::start_log`]).
    pub fn with_log() -> Self {
        let log: Arc<Mutex<Option<Vec<String>>>> = Arc::default();
        let sink = log.clone();
        let callback = move |event: salsa::Event| {
            if let salsa::EventKind::WillExecute { database_key } = event.kind
                && let Ok(mut guard) = sink.lock()
                && let Some(log) = guard.as_mut()
            {
                log.push(format!("{database_key:?}"));
            }
        };
        Self {
            storage: salsa::Storage::new(Some(Box::new(callback))),
            log,
        }
    }
}

#[salsa::db]
impl salsa::Database for Database {}

impl Database {
    /// Starts recording which queries execute; only a database made with
    /// [`Database::with_log`] records anything.
    pub fn start_log(&self) {
        if let Ok(mut guard) = self.log.lock() {
            *guard = Some(Vec::new());
        }
    }

    /// The queries executed since [`Database::start_log`] or the previous call, as
    /// `query_name(id)` strings.
    pub fn take_log(&self) -> Vec<String> {
        match self.log.lock() {
            Ok(mut guard) => guard.as_mut().map(std::mem::take).unwrap_or_default(),
            Err(_) => Vec::new(),
        }
    }
}
