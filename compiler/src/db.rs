//! The salsa database and its queries.
//!
//! Inputs are the files ([`SourceFile`]) and the signature set ([`Inputs`]). The queries form a
//! pipeline whose grain is the group: a layer's header with its members, or one top-level item
//! (see [`Group`]), each made of chunks, one item or layer member each (see [`crate::split`]):
//!
//! ```text
//! outline(file) ─► parsed_group(group) ─► group_signature(group) ─► environment(inputs)
//!                          │                                               │
//!                          └──────────────► check_group(key) ◄─────────────┘
//!                                                 │
//!                  global_checks(inputs), group_keys(file), file_diagnostics(file)
//!                                                 │
//!                  program(module)        cost(module) ─► cost_diagnostics(inputs)
//! ```
//!
//! `program` and `cost` both read a module's chunk checks: `program` assembles them into an
//! [`ir::Program`] for the commands that run a module, `cost` reads them by reference through a
//! [`lower::View`], so the diagnostics never clone the module's IR. `cost` takes the analyses of
//! the computed values from `layer_cost`, one per layer and state of the slots, keyed on the
//! layer's groups and on what its bodies read (`layer_reads`), and from it too the walk of each
//! layer's actions, handlers, revise blocks and decide rules in the state the phases see: an
//! edit inside one member analyses and walks only its layer's bodies again.
//!
//! A group is interned by its text and the bounds of its chunks, both relative to its first
//! byte, so an edit inside one member produces one new group; every other group keeps its
//! identity, wherever the edit moved it, and its parse and check are reused. Spans stay relative
//! to their chunk or group and are moved into the file only by the queries that report them. A
//! re-check after an edit therefore verifies one memo per group, not one per chunk. The
//! environment re-runs after every edit (it reads the outline) but its value only changes when a
//! signature does, so salsa backdates it and the checks that depend on it stay valid.
//!
//! The per-file queries, from `outline` to `file_diagnostics`, are in `files`; `cost` and what it
//! reads are in `bounds`; `program` and the database are here.

// The accessors that salsa generates for inputs and interned structs carry no docs of their own.
#![allow(missing_docs)]

use std::sync::{Arc, Mutex};

use crate::check::ChunkCheck;
use crate::codes::Code;
use crate::diagnostic::Diagnostic;
use crate::env::Scope;
use crate::ir::{self, SrcSpan};
use crate::lower;
use crate::signatures::SignatureSet;
use crate::split::ChunkKind;

mod bounds;
mod files;

pub use bounds::{Chunks, CostLayout, cost, cost_diagnostics, cost_layout, game_bounds};

pub use files::{
    ChunkLabel, ChunkRef, ChunkSpan, Context, FileKey, Group, GroupCheck, GroupKey, Outline,
    PlacedGroup, Shared, check_group, chunk, chunk_check, chunk_offset, environment,
    file_diagnostics, file_facts, file_signature, global_checks, group_keys, group_signature,
    outline, parsed_group,
};
use files::{group_layer, keys_of_groups};

/// One source file.
#[salsa::input(debug)]
pub struct SourceFile {
    /// The path as loaded; diagnostics name the file by it.
    #[returns(ref)]
    pub path: String,
    /// The text.
    #[returns(ref)]
    pub text: Arc<str>,
    /// The text split into chunks. The workspace sets it with the text: after an edit it splits
    /// again only the lines around the edit ([`crate::split::resplit`]), which needs the previous
    /// split, and a query cannot read its own previous value.
    #[returns(ref)]
    pub split: Arc<crate::split::Split>,
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
/// offset in it, their layer, the key of their group and their check.
struct ModuleChunks<'db> {
    scope: &'db Scope,
    chunks: Vec<(u32, u32, Option<ir::LayerId>, GroupKey, &'db ChunkCheck)>,
}

impl<'db> ModuleChunks<'db> {
    /// The chunks as [`lower`] places them.
    fn placed(&self) -> Vec<lower::Placed<'db>> {
        self.chunks
            .iter()
            .map(|(file, offset, layer, _, check)| lower::Placed {
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
        // The groups of the module's own file are checked under the keys the file's
        // diagnostics already made; those of the modules it uses are keyed here.
        let keys = if env.file_modules.get(path) == Some(module) {
            std::borrow::Cow::Borrowed(group_keys(db, FileKey::new(db, inputs, file)))
        } else {
            std::borrow::Cow::Owned(keys_of_groups(db, inputs, file, Some(module)))
        };
        for (placed, key) in outline(db, file).groups.iter().zip(keys.iter()) {
            let layer = group_layer(db, placed, layers).and_then(|name| scope.layer(name));
            let spans = placed.group.chunks(db);
            for (span, check) in spans.iter().zip(&check_group(db, *key).chunks) {
                let layer = if span.kind == ChunkKind::Member {
                    layer
                } else {
                    None
                };
                chunks.push((
                    file_index as u32,
                    placed.offset + span.start,
                    layer,
                    *key,
                    check,
                ));
            }
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
                .and_then(|f| chunk_offset(db, outline(db, *f), info.at.ordinal))
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
    log: Arc<Mutex<Option<QueryLog>>>,
}

/// What a database made with [`Database::with_log`] records, as `query_name(id)` strings.
#[derive(Default)]
struct QueryLog {
    /// The queries executed.
    executed: Vec<String>,
    /// The memoised values found still valid without executing their query.
    validated: Vec<String>,
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
    /// A database that can record which queries execute and which memoised values are
    /// validated (see [`Database::start_log`]).
    pub fn with_log() -> Self {
        let log: Arc<Mutex<Option<QueryLog>>> = Arc::default();
        let sink = log.clone();
        let callback = move |event: salsa::Event| {
            let (list, key): (fn(&mut QueryLog) -> &mut Vec<String>, _) = match event.kind {
                salsa::EventKind::WillExecute { database_key } => {
                    (|log| &mut log.executed, database_key)
                }
                salsa::EventKind::DidValidateMemoizedValue { database_key } => {
                    (|log| &mut log.validated, database_key)
                }
                _ => return,
            };
            if let Ok(mut guard) = sink.lock()
                && let Some(log) = guard.as_mut()
            {
                list(log).push(format!("{key:?}"));
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
    /// Starts recording which queries execute and which memoised values are validated; only a
    /// database made with [`Database::with_log`] records anything.
    pub fn start_log(&self) {
        if let Ok(mut guard) = self.log.lock() {
            *guard = Some(QueryLog::default());
        }
    }

    /// The queries executed since [`Database::start_log`] or the previous call, as
    /// `query_name(id)` strings.
    pub fn take_log(&self) -> Vec<String> {
        self.take(|log| &mut log.executed)
    }

    /// The memoised values validated without executing their query since
    /// [`Database::start_log`] or the previous call, as `query_name(id)` strings.
    pub fn take_validated(&self) -> Vec<String> {
        self.take(|log| &mut log.validated)
    }

    fn take(&self, list: impl FnOnce(&mut QueryLog) -> &mut Vec<String>) -> Vec<String> {
        match self.log.lock() {
            Ok(mut guard) => guard
                .as_mut()
                .map(|log| std::mem::take(list(log)))
                .unwrap_or_default(),
            Err(_) => Vec::new(),
        }
    }
}
