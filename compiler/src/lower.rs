//! Assembles a module's [`ir::Program`] from the lowered chunks, or a [`View`] of it.
//!
//! Each chunk check lowers its own definitions with spans relative to the chunk; this module
//! places them in the program's arenas by id and moves every span into its file. A view places
//! them by reference instead and leaves their spans where they are: it is what the cost bound
//! reads, so that a re-check after an edit neither clones every chunk's IR nor moves its spans.

use std::collections::BTreeMap;

use rustc_hash::FxHashMap;

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

/// A module's program by reference: the lowered chunks' definitions in the arenas'
/// order, each borrowed from its chunk. Spans stay chunk-relative and carry their chunk's label
/// ([`label`]) in place of a file.
pub struct View<'a> {
    /// The root module's name.
    pub module: &'a str,
    /// Constants, by id.
    pub consts: Vec<&'a ir::ConstDef>,
    /// Config entries, by id.
    pub config: Vec<&'a ir::Param>,
    /// State slots, by id.
    pub state: Arena<'a, ir::StateSlot>,
    /// Tunables, by id.
    pub tunables: Arena<'a, ir::Param>,
    /// Computed values, by id.
    pub computed: Arena<'a, ir::Computed>,
    /// Functions, by id.
    pub fns: Arena<'a, ir::Function>,
    /// Actions, by id.
    pub actions: Vec<&'a ir::Action>,
    /// The layers' blocks, in the program's layer order.
    pub layers: Vec<LayerView<'a>>,
    /// `llm` effects, by id.
    pub llms: Vec<&'a ir::LlmDef>,
    /// The enums in scope, by id.
    pub enums: &'a [crate::env::EnumInfo],
}

/// Definitions of one kind by id: every one of the module, or only those one part of the cost
/// analysis reads (the analysis of one group of members, [`crate::cost::summarise`]), so that
/// such a part neither fetches nor indexes the whole module.
pub enum Arena<'a, T> {
    /// Every definition, by id.
    All(Vec<&'a T>),
    /// Some definitions, by id.
    Some(FxHashMap<u32, &'a T>),
}

impl<'a, T> Arena<'a, T> {
    /// How many definitions the arena holds.
    pub fn len(&self) -> usize {
        match self {
            Arena::All(all) => all.len(),
            Arena::Some(some) => some.len(),
        }
    }

    /// Whether it holds none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl<'a, T> std::ops::Index<usize> for Arena<'a, T> {
    type Output = T;

    /// The definition of id `index`; a partial arena panics for one it was not given, which is
    /// a bug of the part that made it (the analysis turns a panic into an internal error).
    fn index(&self, index: usize) -> &T {
        match self {
            Arena::All(all) => all[index],
            Arena::Some(some) => some
                .get(&(index as u32))
                .copied()
                .unwrap_or_else(|| panic!("definition {index} is not in the partial view")),
        }
    }
}

/// The blocks of one layer in a [`View`], in source order.
#[derive(Default)]
pub struct LayerView<'a> {
    /// Its effect models.
    pub models: Vec<&'a ir::Model>,
    /// Its observation handlers.
    pub handlers: Vec<&'a ir::Handler>,
    /// Its decide rules.
    pub decide: Vec<&'a ir::Rule>,
    /// Its revise blocks.
    pub revise: Vec<&'a ir::Revise>,
}

/// Builds the view of a module's program from its lowered chunks, in the order [`assemble`]
/// takes them (`offset` and `file` are not read); `Err` names a definition that no chunk
/// lowered, as [`assemble`] does.
pub fn view<'a>(scope: &'a Scope, chunks: &[Placed<'a>]) -> Result<View<'a>, String> {
    let mut consts = ById::default();
    let mut config = ById::default();
    let mut state = ById::default();
    let mut tunables = ById::default();
    let mut computed = ById::default();
    let mut fns = ById::default();
    let mut actions = ById::default();
    let mut llms = ById::default();
    let mut layers: Vec<LayerView<'a>> =
        scope.layers.iter().map(|_| LayerView::default()).collect();
    for placed in chunks {
        let chunk = placed.ir;
        consts.extend(&chunk.consts);
        config.extend(&chunk.config);
        state.extend(&chunk.state);
        tunables.extend(&chunk.tunables);
        computed.extend(&chunk.computed);
        fns.extend(&chunk.fns);
        actions.extend(&chunk.actions);
        llms.extend(&chunk.llms);
        let Some(layer) = placed.layer.and_then(|id| layers.get_mut(id.index())) else {
            continue;
        };
        layer.models.extend(chunk.models.iter());
        layer.handlers.extend(chunk.handlers.iter());
        layer.decide.extend(chunk.rules.iter());
        layer.revise.extend(chunk.revises.iter());
    }
    Ok(View {
        module: &scope.module,
        consts: consts.dense("constant")?,
        config: config.dense("config entry")?,
        state: Arena::All(state.dense("state slot")?),
        tunables: Arena::All(tunables.dense("tunable")?),
        computed: Arena::All(computed.dense("computed value")?),
        fns: Arena::All(fns.dense("function")?),
        actions: actions.dense("action")?,
        layers,
        llms: llms.dense("LLM effect")?,
        enums: &scope.enums,
    })
}

/// Definitions of one kind by reference, placed by id: the arenas of a [`View`] as they fill.
/// Ids are dense, so a vector indexed by id holds them, not an ordered map: a re-check builds
/// the view of the whole module after every edit.
struct ById<'a, T>(Vec<Option<&'a T>>);

impl<T> Default for ById<'_, T> {
    fn default() -> Self {
        Self(Vec::new())
    }
}

impl<'a, T> ById<'a, T> {
    /// Places a chunk's definitions; a later definition of an id replaces an earlier one, as
    /// [`assemble`]'s maps do.
    fn extend<K: Copy + Into<u32>>(&mut self, defs: &'a [(K, T)]) {
        for (id, def) in defs {
            let index = (*id).into() as usize;
            if index >= self.0.len() {
                self.0.resize(index + 1, None);
            }
            self.0[index] = Some(def);
        }
    }

    /// The definitions by id, or the first id that none was placed under, as [`dense`] names it.
    fn dense(self, what: &str) -> Result<Vec<&'a T>, String> {
        self.0
            .into_iter()
            .enumerate()
            .map(|(id, def)| def.ok_or_else(|| format!("{what} {id} was not lowered")))
            .collect()
    }
}

/// The definitions a partial [`View`] is made of: the module's items (its constants, config
/// entries and `llm` effects, all of them) and the state slots, computed values, functions and
/// tunables one part of the analysis reads.
pub struct Parts<'a> {
    /// The chunks of the items, whose constants, config entries and effects are taken whole.
    pub items: Vec<&'a ChunkIr>,
    /// Computed values, by id.
    pub computed: FxHashMap<u32, &'a ir::Computed>,
    /// Functions, by id.
    pub fns: FxHashMap<u32, &'a ir::Function>,
    /// Tunables, by id.
    pub tunables: FxHashMap<u32, &'a ir::Param>,
    /// State slots, by id.
    pub state: FxHashMap<u32, &'a ir::StateSlot>,
}

/// A view of part of a module's program: no actions or layer blocks; `Err` names an item that
/// no chunk lowered, as [`view`] does.
pub fn partial<'a>(scope: &'a Scope, parts: Parts<'a>) -> Result<View<'a>, String> {
    let mut consts = ById::default();
    let mut config = ById::default();
    let mut llms = ById::default();
    for chunk in &parts.items {
        consts.extend(&chunk.consts);
        config.extend(&chunk.config);
        llms.extend(&chunk.llms);
    }
    Ok(View {
        module: &scope.module,
        consts: consts.dense("constant")?,
        config: config.dense("config entry")?,
        state: Arena::Some(parts.state),
        tunables: Arena::Some(parts.tunables),
        computed: Arena::Some(parts.computed),
        fns: Arena::Some(parts.fns),
        actions: Vec::new(),
        layers: Vec::new(),
        llms: llms.dense("LLM effect")?,
        enums: &scope.enums,
    })
}

/// Sets the `file` of every span of a chunk's IR to `label`, so that a span a [`View`]'s reader
/// reports names the chunk it lies in.
pub fn label(chunk: &mut ChunkIr, label: u32) {
    walk_mut::chunk(&mut Label(label), chunk);
}

/// Names the chunk of every span (see [`label`]).
struct Label(u32);

impl VisitMut for Label {
    fn span(&mut self, span: &mut SrcSpan) {
        span.file = self.0;
    }
}

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
