//! Assembles a module's [`ir::Program`] from the lowered chunks.
//!
//! Each chunk check lowers its own definitions with spans relative to the chunk; this module
//! places them in the program's arenas by id and moves every span into its file.

use std::collections::BTreeMap;

use crate::check::ChunkIr;
use crate::env::Scope;
use crate::ir::{self, SrcSpan};
use crate::visit::{VisitMut, walk_mut};

/// A lowered chunk with where it sits: the file index in the program and the chunk's offset.
pub struct Placed<'a> {
    /// Index into [`ir::Program::files`].
    pub file: u32,
    /// The chunk's byte offset in its file.
    pub offset: u32,
    /// The layer of a member chunk.
    pub layer: Option<ir::LayerId>,
    /// The lowered chunk.
    pub ir: &'a ChunkIr,
}

/// Builds the program; `Err` names a definition that no chunk lowered (a bug in the checker).
pub fn assemble(
    scope: &Scope,
    game: Option<String>,
    files: Vec<String>,
    layer_spans: &[SrcSpan],
    chunks: &[Placed<'_>],
) -> Result<ir::Program, String> {
    let mut consts = BTreeMap::new();
    let mut config = BTreeMap::new();
    let mut errors = BTreeMap::new();
    let mut fns = BTreeMap::new();
    let mut state = BTreeMap::new();
    let mut tunables = BTreeMap::new();
    let mut computed = BTreeMap::new();
    let mut actions = BTreeMap::new();
    let mut llms = BTreeMap::new();
    let mut layers: Vec<ir::Layer> = scope
        .layers
        .iter()
        .map(|info| ir::Layer {
            name: info.name.clone(),
            needs: info.needs.clone(),
            below: info.below.iter().copied().collect(),
            uses: info.uses.iter().cloned().collect(),
            state: Vec::new(),
            tunables: Vec::new(),
            computed: Vec::new(),
            fns: Vec::new(),
            actions: Vec::new(),
            models: Vec::new(),
            handlers: Vec::new(),
            decide: Vec::new(),
            revise: Vec::new(),
            tunable_defaults: Vec::new(),
            machines: Vec::new(),
            span: SrcSpan::default(),
        })
        .collect();
    for placed in chunks {
        let mut chunk = placed.ir.clone();
        walk_mut::chunk(
            &mut Shift {
                file: placed.file,
                offset: placed.offset,
            },
            &mut chunk,
        );
        consts.extend(chunk.consts);
        config.extend(chunk.config);
        errors.extend(chunk.errors);
        fns.extend(chunk.fns);
        state.extend(chunk.state);
        tunables.extend(chunk.tunables);
        computed.extend(chunk.computed);
        llms.extend(chunk.llms);
        actions.extend(chunk.actions);
        let Some(layer) = placed.layer.and_then(|id| layers.get_mut(id.index())) else {
            continue;
        };
        layer.models.extend(chunk.models);
        layer.handlers.extend(chunk.handlers);
        layer.decide.extend(chunk.rules);
        layer.revise.extend(chunk.revises);
        layer.tunable_defaults.extend(chunk.tunable_defaults);
        layer.machines.extend(chunk.machines);
    }
    for (index, info) in scope.layers.iter().enumerate() {
        let layer = &mut layers[index];
        for entry in info.members.values() {
            match &entry.def {
                crate::env::MemberDef::State(id, _) => layer.state.push(*id),
                crate::env::MemberDef::Tunable(id, ..) => layer.tunables.push(*id),
                crate::env::MemberDef::Computed(id, _) => layer.computed.push(*id),
                crate::env::MemberDef::Fn(info) => layer.fns.push(info.id),
                crate::env::MemberDef::Action(id, _) => layer.actions.push(*id),
            }
        }
        layer.state.sort();
        layer.tunables.sort();
        layer.computed.sort();
        layer.fns.sort();
        layer.actions.sort();
        layer.span = layer_spans.get(index).copied().unwrap_or_default();
    }
    Ok(ir::Program {
        module: scope.module.clone(),
        game,
        files,
        enums: scope
            .enums
            .iter()
            .map(|e| ir::EnumDef {
                name: e.name.clone(),
                variants: e.variants.clone(),
            })
            .collect(),
        errors: dense(errors, "error")?,
        consts: dense(consts, "constant")?,
        config: dense(config, "config entry")?,
        layers,
        state: dense(state, "state slot")?,
        tunables: dense(tunables, "tunable")?,
        computed: dense(computed, "computed value")?,
        fns: dense(fns, "function")?,
        actions: dense(actions, "action")?,
        llms: dense(llms, "LLM effect")?,
    })
}

/// The values of a map keyed by consecutive ids `0..n`, or the first missing id.
fn dense<K: Ord + Copy + std::fmt::Debug + Into<u32>, V>(
    map: BTreeMap<K, V>,
    what: &str,
) -> Result<Vec<V>, String> {
    let mut out = Vec::with_capacity(map.len());
    for (expected, (id, value)) in map.into_iter().enumerate() {
        if (id.into() as usize) != expected {
            return Err(format!("{what} {expected} was not lowered"));
        }
        out.push(value);
    }
    Ok(out)
}

macro_rules! into_u32 {
    ($($id:ident),*) => {$(
        impl From<ir::$id> for u32 {
            fn from(id: ir::$id) -> u32 {
                id.0
            }
        }
    )*};
}

into_u32!(
    ErrorId, ConstId, ConfigId, StateId, TunableId, ComputedId, FnId, ActionId, LlmId
);

/// Moves spans from chunk-relative to file-relative.
struct Shift {
    file: u32,
    offset: u32,
}

impl VisitMut for Shift {
    fn span(&mut self, span: &mut SrcSpan) {
        *span = SrcSpan {
            file: self.file,
            start: span.start + self.offset,
            end: span.end + self.offset,
        };
    }
}
