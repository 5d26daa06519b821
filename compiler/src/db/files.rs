//! The per-file queries: a file's outline into groups, each group's parse, signature and check,
//! the environment built from the signatures, and a file's diagnostics.

// The accessors that salsa generates for interned structs carry no docs of their own.
#![allow(missing_docs)]

use std::sync::Arc;

use super::{Inputs, SourceFile};
use crate::check::{self, ChunkCheck, Facts};
use crate::codes::Code;
use crate::diagnostic::{Diagnostic, SourceText};
use crate::env::{self, ChunkSig, Env, FileSig, Located};
use crate::global;
use crate::lower;
use crate::parse::{self, ParsedChunk};
use crate::split::{ChunkKind, RawChunk};

/// The most chunks a group holds. An edit parses and checks its whole group again, so a long
/// layer is cut into groups of this many chunks; a body edit keeps the number of chunks, and so
/// where the cuts fall.
const GROUP_CHUNKS: usize = 32;

/// One chunk of a group: how to parse it and where it lies in the group's text.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ChunkSpan {
    /// How to parse it.
    pub kind: ChunkKind,
    /// Byte offset of its first byte in the group.
    pub start: u32,
    /// Byte offset one past its last byte in the group.
    pub end: u32,
}

impl ChunkSpan {
    /// The chunk's text in its group's text.
    pub fn text(self, group: &str) -> &str {
        &group[self.start as usize..self.end as usize]
    }
}

/// A run of chunks that are parsed and checked together: a layer's header and its members (at
/// most [`GROUP_CHUNKS`] of them; a longer layer continues in groups of members), or one
/// top-level item. Interned by its text and its chunks' bounds, which are relative to its first
/// byte: equal runs are one group wherever they sit in their file.
///
/// Interned groups are never collected (`revisions = usize::MAX`): salsa's default would recycle
/// a group that an edit's revision did not read, and with it the memoised parse and check that
/// an incremental re-check is supposed to reuse. A workspace grows by one group per edited text.
#[salsa::interned(no_lifetime, debug, revisions = usize::MAX)]
pub struct Group {
    /// The text, from the first chunk's first byte to the last chunk's last byte.
    #[returns(ref)]
    pub text: String,
    /// The chunks, in order.
    #[returns(ref)]
    pub chunks: Vec<ChunkSpan>,
}

/// Where a group is checked: the module whose program it belongs to and, for a layer's group,
/// its layer. Interned once per layer, so that keying every group on it hashes two ids, not two
/// strings. Never collected, for the same reason as [`Group`].
#[salsa::interned(no_lifetime, debug, revisions = usize::MAX)]
pub struct Context {
    /// The workspace.
    pub inputs: Inputs,
    /// The module whose scope the group is checked in.
    #[returns(ref)]
    pub module: String,
    /// The layer of the group's member chunks.
    #[returns(ref)]
    pub layer: Option<String>,
}

/// What a group check is keyed on: the group and where it is checked. Never collected, for the
/// same reason as [`Group`].
#[salsa::interned(no_lifetime, debug, revisions = usize::MAX)]
pub struct GroupKey {
    /// Where the group is checked.
    pub context: Context,
    /// The group.
    pub group: Group,
}

/// One chunk of a checked group, interned so that its id labels the chunk's IR (see
/// [`ChunkCheck::label`]). Never collected, for the same reason as [`Group`].
#[salsa::interned(no_lifetime, debug, revisions = usize::MAX)]
pub struct ChunkLabel {
    /// The group check.
    pub key: GroupKey,
    /// The chunk's index in the group.
    pub index: u32,
}

/// A group of a file's outline and where it sits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PlacedGroup {
    /// The group.
    pub group: Group,
    /// Byte offset of its first byte in the file.
    pub offset: u32,
    /// The ordinal of its first chunk among the file's chunks.
    pub first: u32,
}

/// A file split into groups of chunks.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Outline {
    /// The groups in source order.
    pub groups: Vec<PlacedGroup>,
    /// How many chunks the groups hold; the chunks' ordinals run from 0 to this.
    pub chunks: u32,
    /// True when the file ends inside a layer.
    pub unclosed_layer: bool,
}

impl Outline {
    /// The index of the group that holds the chunk of `ordinal`, and the chunk's index in it.
    pub fn locate(&self, ordinal: u32) -> Option<(usize, usize)> {
        if ordinal >= self.chunks {
            return None;
        }
        let group = self
            .groups
            .partition_point(|placed| placed.first <= ordinal)
            .checked_sub(1)?;
        Some((group, (ordinal - self.groups[group].first) as usize))
    }
}

/// Splits a file into groups of chunks.
#[salsa::tracked(returns(ref))]
pub fn outline(db: &dyn salsa::Database, file: SourceFile) -> Outline {
    let text = file.text(db);
    let split = file.split(db);
    let mut groups = Vec::new();
    let mut spans = Vec::new();
    let mut place = |raws: &[RawChunk], first: usize| {
        let (Some(head), Some(last)) = (raws.first(), raws.last()) else {
            return;
        };
        spans.clear();
        spans.extend(raws.iter().map(|raw| ChunkSpan {
            kind: raw.kind,
            start: raw.offset - head.offset,
            end: raw.end - head.offset,
        }));
        let group_text = &text[head.offset as usize..last.end as usize];
        groups.push(PlacedGroup {
            group: Group::new(db, group_text, spans.as_slice()),
            offset: head.offset,
            first: first as u32,
        });
    };
    let mut start = 0;
    for (index, raw) in split.chunks.iter().enumerate() {
        // A member joins the group of its layer's header, up to the size of a group.
        let joins = raw.kind == ChunkKind::Member && index - start < GROUP_CHUNKS;
        if !joins && index > start {
            place(&split.chunks[start..index], start);
            start = index;
        }
    }
    place(&split.chunks[start..], start);
    Outline {
        groups,
        chunks: split.chunks.len() as u32,
        unclosed_layer: split.unclosed_layer,
    }
}

/// The byte offset in its file of the chunk of `ordinal`.
pub fn chunk_offset(db: &dyn salsa::Database, outline: &Outline, ordinal: u32) -> Option<u32> {
    let (group, index) = outline.locate(ordinal)?;
    let placed = outline.groups[group];
    let chunk = placed.group.chunks(db).get(index)?;
    Some(placed.offset + chunk.start)
}

/// Parses the chunks of a group, each on its own: spans are relative to the chunk.
#[salsa::tracked(returns(ref))]
pub fn parsed_group(db: &dyn salsa::Database, group: Group) -> Vec<ParsedChunk> {
    let text = group.text(db);
    group
        .chunks(db)
        .iter()
        .map(|chunk| parse::parse_chunk(chunk.kind, chunk.text(text)))
        .collect()
}

/// The signatures of a group's chunks: their declarations with bodies stripped.
#[salsa::tracked(returns(ref))]
pub fn group_signature(db: &dyn salsa::Database, group: Group) -> Shared<Vec<ChunkSig>> {
    let signatures = parsed_group(db, group)
        .iter()
        .zip(group.chunks(db))
        .map(|(parsed, chunk)| ChunkSig {
            header: parsed.header.as_ref().map(env::path_text),
            header_span: parsed.header.as_ref().map(|h| h.span).unwrap_or_default(),
            items: parsed.items.iter().map(env::strip_item).collect(),
            members: parsed
                .members
                .iter()
                .filter_map(env::strip_member)
                .collect(),
            is_member: chunk.kind == ChunkKind::Member,
        })
        .collect();
    Shared(Arc::new(signatures))
}

/// The signatures of a file's groups, in order. An edit inside a body changes the outline but
/// not this list, so salsa backdates it and the environment is not rebuilt.
#[salsa::tracked(returns(ref))]
pub fn file_signature(db: &dyn salsa::Database, file: SourceFile) -> Vec<Shared<Vec<ChunkSig>>> {
    outline(db, file)
        .groups
        .iter()
        .map(|placed| group_signature(db, placed.group).clone())
        .collect()
}

/// A shared value compared by pointer first: an unchanged group's memoised signature is the same
/// allocation in every revision, so comparing a file's signatures after an edit costs one pointer
/// comparison per unchanged group instead of a walk of its syntax trees.
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
                .flat_map(|group| group.0.iter())
                .collect(),
        })
        .collect();
    Arc::new(env::build(&files, inputs.signatures(db)))
}

/// The checks of a group's chunks.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct GroupCheck {
    /// Each chunk's check and lowering, in order; their diagnostics are moved into the group's.
    pub chunks: Vec<ChunkCheck>,
    /// The chunks' diagnostics, syntax errors first for each chunk, with spans relative to the
    /// group: one list, so that a file's diagnostics read one per group.
    pub diagnostics: Vec<Diagnostic>,
    /// The chunks' facts, in order, shared so that collecting them per file is one pointer per
    /// group.
    pub facts: Arc<Vec<Arc<Facts>>>,
}

/// Checks and lowers the chunks of one group in the scope of a module.
#[salsa::tracked(returns(ref))]
pub fn check_group(db: &dyn salsa::Database, key: GroupKey) -> GroupCheck {
    let context = key.context(db);
    let inputs = context.inputs(db);
    let env = environment(db, inputs);
    let group = key.group(db);
    let chunks = group.chunks(db);
    let Some(scope) = env.scopes.get(context.module(db)) else {
        let checks = vec![ChunkCheck::default(); chunks.len()];
        let facts = checks.iter().map(|check| check.facts.clone()).collect();
        return GroupCheck {
            chunks: checks,
            diagnostics: Vec::new(),
            facts: Arc::new(facts),
        };
    };
    let layer = context
        .layer(db)
        .as_deref()
        .and_then(|name| scope.layer(name));
    let mut out = GroupCheck::default();
    let mut facts = Vec::with_capacity(chunks.len());
    for (index, (chunk, parsed)) in chunks.iter().zip(parsed_group(db, group)).enumerate() {
        let mut check = check::check_chunk(
            scope,
            inputs.signatures(db),
            (chunk.kind == ChunkKind::Member).then_some(layer).flatten(),
            &parsed.items,
            &parsed.members,
        );
        // The IR's spans are labelled with the chunk, so that what an analysis of a module's
        // view reports can be placed in its file ([`cost`]).
        check.label = salsa::plumbing::AsId::as_id(&ChunkLabel::new(db, key, index as u32)).index();
        lower::label(&mut check.ir, check.label);
        // A checker diagnostic that overlaps a syntax error is usually its consequence (an
        // argument the parser dropped, an operand it rebuilt): one mistake, one diagnostic.
        let overlaps = |d: &Diagnostic| {
            parsed
                .errors
                .iter()
                .any(|e| d.span.start <= e.span.end && e.span.start <= d.span.end)
        };
        let found = std::mem::take(&mut check.diagnostics);
        let shifted = |d: &Diagnostic| d.clone().shifted(chunk.start);
        out.diagnostics.extend(parsed.errors.iter().map(shifted));
        out.diagnostics.extend(
            found
                .into_iter()
                .filter(|d| !overlaps(d))
                .map(|d| d.shifted(chunk.start)),
        );
        facts.push(check.facts.clone());
        out.chunks.push(check);
    }
    out.facts = Arc::new(facts);
    out
}

/// A file of a workspace: the key of the per-file queries. Never collected, for the same reason
/// as [`Group`].
#[salsa::interned(no_lifetime, debug, revisions = usize::MAX)]
pub struct FileKey {
    /// The workspace.
    pub inputs: Inputs,
    /// The file.
    pub file: SourceFile,
}

/// The layer of a group's member chunks, as the environment placed them.
pub(super) fn group_layer<'e>(
    db: &dyn salsa::Database,
    placed: &PlacedGroup,
    layers: Option<&'e Vec<Option<String>>>,
) -> Option<&'e String> {
    let member = placed
        .group
        .chunks(db)
        .iter()
        .position(|chunk| chunk.kind == ChunkKind::Member)?;
    layers?.get(placed.first as usize + member)?.as_ref()
}

/// The keys under which the groups of a file are checked in its module, or in `module` when
/// given (a module whose program uses the file's), by group index; empty for a file the
/// environment left out (its path is another file's module name).
pub(super) fn keys_of_groups(
    db: &dyn salsa::Database,
    inputs: Inputs,
    file: SourceFile,
    module: Option<&String>,
) -> Vec<GroupKey> {
    let env = environment(db, inputs);
    let Some(module) = module.or_else(|| env.file_modules.get(file.path(db))) else {
        return Vec::new();
    };
    let layers = env.chunk_layers.get(file.path(db));
    // Consecutive groups mostly differ in their layer; the context is interned once per run.
    let mut current: Option<(Option<&String>, Context)> = None;
    outline(db, file)
        .groups
        .iter()
        .map(|placed| {
            let layer = group_layer(db, placed, layers);
            let context = match current {
                Some((previous, context)) if previous == layer => context,
                _ => {
                    let context = Context::new(db, inputs, module.clone(), layer.cloned());
                    current = Some((layer, context));
                    context
                }
            };
            GroupKey::new(db, context, placed.group)
        })
        .collect()
}

/// The keys under which the groups of a file are checked in their own module, by group index.
#[salsa::tracked(returns(ref))]
pub fn group_keys(db: &dyn salsa::Database, key: FileKey) -> Vec<GroupKey> {
    keys_of_groups(db, key.inputs(db), key.file(db), None)
}

/// One chunk of a file, with its parse.
pub struct ChunkRef<'db> {
    /// How it was parsed.
    pub kind: ChunkKind,
    /// Byte offset of its first byte in the file.
    pub offset: u32,
    /// Its text.
    pub text: &'db str,
    /// Its parse.
    pub parsed: &'db ParsedChunk,
    group: usize,
    index: usize,
}

/// The chunk of `ordinal` in a file.
pub fn chunk(db: &dyn salsa::Database, file: SourceFile, ordinal: u32) -> Option<ChunkRef<'_>> {
    let outline = outline(db, file);
    let (group, index) = outline.locate(ordinal)?;
    let placed = outline.groups[group];
    let span = *placed.group.chunks(db).get(index)?;
    Some(ChunkRef {
        kind: span.kind,
        offset: placed.offset + span.start,
        text: span.text(placed.group.text(db)),
        parsed: parsed_group(db, placed.group).get(index)?,
        group,
        index,
    })
}

/// The check of a chunk of a file in the file's own module; `None` for a file the environment
/// left out.
pub fn chunk_check<'db>(
    db: &'db dyn salsa::Database,
    key: FileKey,
    chunk: &ChunkRef<'_>,
) -> Option<&'db ChunkCheck> {
    let group = *group_keys(db, key).get(chunk.group)?;
    check_group(db, group).chunks.get(chunk.index)
}

/// The facts of a file's groups, by the ordinal of each group's first chunk. An edit that leaves
/// references, uses and spans within members unchanged leaves this list equal, so the
/// whole-program checks do not re-run.
#[salsa::tracked(returns(ref))]
pub fn file_facts(db: &dyn salsa::Database, key: FileKey) -> Vec<(u32, Arc<Vec<Arc<Facts>>>)> {
    let outline = outline(db, key.file(db));
    group_keys(db, key)
        .iter()
        .zip(&outline.groups)
        .map(|(key, placed)| (placed.first, check_group(db, *key).facts.clone()))
        .collect()
}

/// The checks that need the whole workspace: cycles, nested `sim.next`, unused definitions.
#[salsa::tracked(returns(ref))]
pub fn global_checks(db: &dyn salsa::Database, inputs: Inputs) -> Vec<Located> {
    let env = environment(db, inputs);
    let mut facts = Vec::new();
    for file in inputs.files(db) {
        for (first, group) in file_facts(db, FileKey::new(db, inputs, *file)) {
            for (index, chunk_facts) in group.iter().enumerate() {
                facts.push((file.path(db).as_str(), first + index as u32, &**chunk_facts));
            }
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
    let keys = group_keys(db, key);
    let mut out = Vec::new();
    for (index, placed) in outline.groups.iter().enumerate() {
        match keys.get(index) {
            Some(key) => out.extend(
                check_group(db, *key)
                    .diagnostics
                    .iter()
                    .map(|d| d.clone().shifted(placed.offset)),
            ),
            // A file the environment left out (its path is another file's module name) is not
            // checked; its syntax errors are still reported.
            None => {
                let chunks = placed.group.chunks(db);
                for (chunk, parsed) in chunks.iter().zip(parsed_group(db, placed.group)) {
                    let offset = placed.offset + chunk.start;
                    out.extend(parsed.errors.iter().map(|d| d.clone().shifted(offset)));
                }
            }
        }
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
    if outline.groups.is_empty() {
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
            let offset = chunk_offset(db, outline, located.ordinal).unwrap_or_default();
            out.push(located.diagnostic.clone().shifted(offset));
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
