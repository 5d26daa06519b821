//! The workspace environment: every module's scope, built from the signatures of all chunks.
//!
//! The environment knows names, declared types, ranges and the layer graph, and nothing about
//! bodies: it is built from each chunk's declarations with their bodies stripped ([`strip_item`],
//! [`strip_member`]), so editing a body leaves it equal and salsa reuses every member check that
//! depends on it. It also numbers definitions the way the [`crate::ir`] does, per module, so that
//! member checks can produce IR directly.

//!
//! The jobs are split by module: `build` builds the environment, `scope` answers
//! what a module sees (members, layers, types), `strip` cuts the bodies off declarations; the
//! definitions and the literal helpers are here.

mod build;
mod scope;
mod strip;

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use harness_grammar::{Span, ast};
use rustc_hash::FxHashMap;

use crate::codes::Code;
use crate::diagnostic::Diagnostic;
use crate::ir::{self, LayerId};
use crate::signatures::GameSig;
use crate::types::Ty;

pub use build::build;
pub use strip::{strip_item, strip_member};

/// Identifies a definition across the workspace: its module, its layer if it is a member, and
/// its name ([`DefName`], which it dereferences to).
///
/// Shared, because the checker copies a definition's key into every use, reference and
/// resolution it records: a copy costs a reference count instead of three strings. Equality,
/// order and hash are those of the names, so two keys built apart still compare equal. The hash
/// of the names is computed once, when the key is made: the global checks hash every definition
/// and reference on every check, and hashing three strings each time was most of their cost.
#[derive(Clone)]
pub struct DefKey(Arc<Hashed>);

/// A key's names with their hash.
struct Hashed {
    hash: u64,
    names: DefName,
}

/// The names a [`DefKey`] identifies a definition by.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct DefName {
    /// The module.
    pub module: String,
    /// The layer, for a layer member.
    pub layer: Option<String>,
    /// The name.
    pub name: String,
}

impl DefKey {
    /// The key of `name` in `module`, in `layer` for a layer member.
    pub fn new(module: impl Into<String>, layer: Option<String>, name: impl Into<String>) -> Self {
        use std::hash::{Hash, Hasher};
        let names = DefName {
            module: module.into(),
            layer,
            name: name.into(),
        };
        // A fixed hasher, so that the hash, like the names, is the same in every run.
        let mut hasher = rustc_hash::FxHasher::default();
        names.hash(&mut hasher);
        Self(Arc::new(Hashed {
            hash: hasher.finish(),
            names,
        }))
    }
}

impl PartialEq for DefKey {
    /// Equal names; a shared key or a different hash decides without reading them.
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
            || (self.0.hash == other.0.hash && self.0.names == other.0.names)
    }
}

impl Eq for DefKey {}

impl PartialOrd for DefKey {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for DefKey {
    /// The order of the names.
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        if Arc::ptr_eq(&self.0, &other.0) {
            return std::cmp::Ordering::Equal;
        }
        self.0.names.cmp(&other.0.names)
    }
}

impl std::hash::Hash for DefKey {
    /// The names' hash, computed once: equal names give equal hashes, as `Eq` requires.
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        state.write_u64(self.0.hash);
    }
}

impl std::ops::Deref for DefKey {
    type Target = DefName;

    fn deref(&self) -> &DefName {
        &self.0.names
    }
}

impl std::fmt::Debug for DefKey {
    /// As the names, under the key's own name.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DefKey")
            .field("module", &self.module)
            .field("layer", &self.layer)
            .field("name", &self.name)
            .finish()
    }
}

/// Where a definition is written: a chunk of a file and a span relative to the parsed chunk.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Location {
    /// The file's path.
    pub file: String,
    /// The chunk's position in the file's outline.
    pub ordinal: u32,
    /// The span, relative to the parsed chunk.
    pub span: Span,
}

/// A diagnostic located in a chunk; the edge turns it into a file diagnostic.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Located {
    /// The file's path.
    pub file: String,
    /// The chunk's position in the file's outline.
    pub ordinal: u32,
    /// The diagnostic, with spans relative to the parsed chunk.
    pub diagnostic: Diagnostic,
}

/// One chunk of a file as the environment sees it.
#[derive(Clone, Debug, PartialEq)]
pub struct ChunkSig {
    /// The header module path, for a header chunk.
    pub header: Option<String>,
    /// The span of the header's path in the chunk.
    pub header_span: Span,
    /// Items with bodies stripped.
    pub items: Vec<ast::Item>,
    /// Members with bodies stripped.
    pub members: Vec<ast::Member>,
    /// True for a layer member (the layer is the nearest preceding layer header).
    pub is_member: bool,
}

/// One file as the environment sees it.
#[derive(Clone, Debug, PartialEq)]
pub struct FileSig<'a> {
    /// The path.
    pub path: String,
    /// Its chunks, in order; a chunk's index is its ordinal.
    pub chunks: Vec<&'a ChunkSig>,
}

/// A value-level definition visible in a module: constant, config entry or top-level function.
#[derive(Clone, Debug, PartialEq)]
pub enum ValueDef {
    /// A constant.
    Const {
        /// Its IR id.
        id: ir::ConstId,
        /// Its declared type.
        ty: Ty,
    },
    /// A config entry.
    Config {
        /// Its IR id.
        id: ir::ConfigId,
        /// Its declared type.
        ty: Ty,
    },
    /// A top-level function.
    Fn(FnInfo),
}

/// A function's identity and signature.
#[derive(Clone, Debug, PartialEq)]
pub struct FnInfo {
    /// Its IR id.
    pub id: ir::FnId,
    /// Its parameters.
    pub params: Vec<(String, Ty)>,
    /// Its result type.
    pub ret: Ty,
}

/// What a layer member is.
#[derive(Clone, Debug, PartialEq)]
pub enum MemberDef {
    /// A state field.
    State(ir::StateId, Ty),
    /// A tunable, with its literal range if it has one.
    Tunable(ir::TunableId, Ty, Option<ir::Range>),
    /// A computed value.
    Computed(ir::ComputedId, Ty),
    /// A layer-local function.
    Fn(FnInfo),
    /// An action and its parameters.
    Action(ir::ActionId, Vec<(String, Ty)>),
}

/// A member with its key and where it is declared.
#[derive(Clone, Debug, PartialEq)]
pub struct MemberEntry {
    /// What it is.
    pub def: MemberDef,
    /// Its key.
    pub key: DefKey,
    /// Where its name is written.
    pub at: Location,
}

/// A layer as a scope sees it.
#[derive(Clone, Debug, PartialEq)]
pub struct LayerInfo {
    /// The name.
    pub name: String,
    /// The module that declares it.
    pub module: String,
    /// Direct needs.
    pub needs: Vec<LayerId>,
    /// Every layer it needs, transitively.
    pub below: BTreeSet<LayerId>,
    /// Its members by name.
    pub members: BTreeMap<String, MemberEntry>,
    /// The gated game effects it provides (`uses game.e`), by name.
    pub uses: BTreeSet<String>,
    /// Its `machine`s as written: the field and the edges by variant name (`None`: from `*`),
    /// so that any member can prove its literal transitions.
    pub machines: Vec<WrittenMachine>,
    /// Where its name is written.
    pub at: Location,
}

/// A machine as written: its field, and its edges by variant name (`None`: from every state).
pub type WrittenMachine = (String, Vec<(Option<String>, String)>);

/// The edges of a machine declaration by variant name: `A -> B -> C` gives A→B and B→C, and
/// `* -> D` gives an edge into D from every state.
pub(crate) fn machine_edges(decl: &ast::MachineDecl) -> Vec<(Option<String>, String)> {
    let mut edges = Vec::new();
    for chain in &decl.chains {
        let mut from = if chain.any.is_some() {
            Some(None)
        } else {
            None
        };
        for state in &chain.states {
            if let Some(source) = from {
                edges.push((source, state.name.clone()));
            }
            from = Some(Some(state.name.clone()));
        }
    }
    edges
}

/// An enum as a scope sees it.
#[derive(Clone, Debug, PartialEq)]
pub struct EnumInfo {
    /// Its IR id.
    pub id: ir::EnumId,
    /// The qualified name used in [`Ty::Enum`].
    pub name: String,
    /// The variants.
    pub variants: Vec<(String, Vec<Ty>)>,
}

/// An LLM effect as a scope sees it.
#[derive(Clone, Debug, PartialEq)]
pub struct LlmInfo {
    /// Its IR id.
    pub id: ir::LlmId,
    /// Its declaration.
    pub key: DefKey,
    /// Its parameters.
    pub params: Vec<(String, Ty)>,
    /// The declared reply type.
    pub reply: Ty,
    /// The type of a call's value: the `LlmResult<Reply>` enum.
    pub result: Ty,
}

/// A type name visible in a module.
#[derive(Clone, Debug, PartialEq)]
pub enum TypeDef {
    /// A `type` alias, resolved.
    Alias(Ty),
    /// An enum, by index into [`Scope::enums`].
    Enum(usize),
    /// An opaque type of the game or the library, with its arity.
    Opaque(usize),
}

/// Everything visible from one module, and the IR numbering of its program.
#[derive(Clone, Debug, PartialEq)]
pub struct Scope {
    /// The module's name.
    pub module: String,
    /// The game's bindings, after `use game`.
    pub game: Option<GameSig>,
    /// Constants, config entries and top-level functions by name.
    pub values: BTreeMap<String, (ValueDef, DefKey, Location)>,
    /// Types by name (aliases, enums, opaque types), excluding the builtin ones.
    pub types: BTreeMap<String, TypeDef>,
    /// The declarations of the types that harness files declare (aliases and enums), by name.
    pub type_keys: BTreeMap<String, DefKey>,
    /// All enums of the program.
    pub enums: Vec<EnumInfo>,
    /// Declared error codes by name.
    pub errors: BTreeMap<String, (ir::ErrorId, DefKey)>,
    /// LLM effects of the program by name (this module's names win).
    pub llms: BTreeMap<String, LlmInfo>,
    /// All layers of the program in dependency order; [`LayerId`] indexes this list.
    pub layers: Vec<LayerInfo>,
    /// The first layer of each name, and for each member name the layers that declare it, in
    /// id order: derived from [`Scope::layers`], so that resolving a name costs one lookup
    /// instead of a search of every layer (which made a check quadratic in the layers).
    pub layer_index: LayerIndex,
    /// Standard-library modules imported with their names (`None` for a glob import).
    pub std_imports: BTreeMap<String, Option<BTreeSet<String>>>,
    /// The modules of the program: this one and those it uses, transitively.
    pub program_modules: Vec<String>,
}

/// The lookups of [`Scope::layer_index`].
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LayerIndex {
    /// Each layer's id by name; the first, for a name defined twice.
    pub by_name: FxHashMap<String, LayerId>,
    /// For each member name, the layers that have a member of that name, in id order.
    pub members: FxHashMap<String, Vec<LayerId>>,
}

impl LayerIndex {
    /// The index of `layers`.
    pub fn of(layers: &[LayerInfo]) -> Self {
        // Sized up front so that the maps never rehash as they grow; a member name is cloned
        // only the first time it is seen, not once for each layer that repeats it.
        let mut index = Self::default();
        index.by_name.reserve(layers.len());
        index
            .members
            .reserve(layers.iter().map(|layer| layer.members.len()).sum());
        for (i, layer) in layers.iter().enumerate() {
            let id = LayerId(i as u32);
            if !index.by_name.contains_key(&layer.name) {
                index.by_name.insert(layer.name.clone(), id);
            }
            for name in layer.members.keys() {
                match index.members.get_mut(name.as_str()) {
                    Some(ids) => ids.push(id),
                    None => {
                        index.members.insert(name.clone(), vec![id]);
                    }
                }
            }
        }
        index
    }
}

/// The environment of a whole workspace.
#[derive(Clone, Debug, PartialEq)]
pub struct Env {
    /// Each module's scope, by module name.
    pub scopes: BTreeMap<String, Arc<Scope>>,
    /// The module of each file, by path.
    pub file_modules: BTreeMap<String, String>,
    /// For each file, for each chunk ordinal, the layer the chunk belongs to (for members and
    /// layer headers).
    pub chunk_layers: BTreeMap<String, Vec<Option<String>>>,
    /// Diagnostics about the structure of the workspace: duplicates, unknown modules, games and
    /// layers, cycles of `needs`.
    pub diagnostics: Vec<Located>,
    /// Every declared definition that a warning may call unused, with where it is declared.
    pub declared: Vec<(DefKey, Code, Location)>,
}

/// The dotted text of a path.
pub fn path_text(path: &ast::Path) -> String {
    path.segments
        .iter()
        .map(|s| s.name.as_str())
        .collect::<Vec<_>>()
        .join(".")
}

/// A literal value written in the source, possibly negated.
pub fn literal(expr: &ast::Expr) -> Option<ir::Literal> {
    match &expr.kind {
        ast::ExprKind::Int(v) => Some(ir::Literal::Int(*v)),
        ast::ExprKind::Float(v) => Some(ir::Literal::Float(*v)),
        ast::ExprKind::Bool(v) => Some(ir::Literal::Bool(*v)),
        ast::ExprKind::String(v) => Some(ir::Literal::String(v.clone())),
        ast::ExprKind::Unary(ast::UnaryOp::Neg, inner) => match literal(inner)? {
            ir::Literal::Int(v) => v.checked_neg().map(ir::Literal::Int),
            ir::Literal::Float(v) => Some(ir::Literal::Float(-v)),
            _ => None,
        },
        _ => None,
    }
}

/// A range whose bounds are both numeric literals.
pub fn literal_range(range: &ast::RangeExpr) -> Option<ir::Range> {
    let lo = literal(&range.lo)?;
    let hi = literal(&range.hi)?;
    Some(ir::Range {
        lo,
        hi,
        inclusive: range.inclusive,
    })
}

/// Whether a literal lies in a range; `None` when the kinds do not compare.
pub fn in_range(value: &ir::Literal, range: &ir::Range) -> Option<bool> {
    let as_f64 = |l: &ir::Literal| match l {
        ir::Literal::Int(v) => Some(*v as f64),
        ir::Literal::Float(v) => Some(*v),
        _ => None,
    };
    let (v, lo, hi) = (as_f64(value)?, as_f64(&range.lo)?, as_f64(&range.hi)?);
    Some(v >= lo && if range.inclusive { v <= hi } else { v < hi })
}
