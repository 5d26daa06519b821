//! Checks one chunk (an item or a layer member) against its module's scope, and lowers it.
//!
//! The checker resolves names, infers and checks types (with unification for `let`, closures and
//! generic builtins), enforces the per-member rules (layer isolation, where `emit` and `revise`
//! may appear, declared error codes, ranges, exhaustive `match`) and, in the same walk, builds
//! the member's [`crate::ir`]. Rules that need the whole program (cycles, nested `sim.next`,
//! unused items) use the [`Facts`] each member check records; see [`crate::global`].
//!
//! Spans here are relative to the parsed chunk; the edge of the checker moves them into the file.
//!
//! One `Checker` walks a chunk; its methods are grouped by job, one module each: `infer`
//! (unification), `finalize` (replacing inference variables in the lowered IR), `items`,
//! `members`, `stmts` (statements, guards and places), `names`, `exprs`, `calls`,
//! `operators` and `patterns` (with exhaustiveness). This module holds the chunk's results,
//! the checker's state and the helpers every job uses.

use std::collections::BTreeSet;
use std::sync::Arc;

use harness_grammar::{Span, ast};

use crate::codes::Code;
use crate::diagnostic::Diagnostic;
use crate::env::{self, DefKey, MemberDef, Scope};
use crate::ir::{self, LayerId, LocalId};
use crate::signatures::SignatureSet;
use crate::symbol::Names;
use crate::types::Ty;

mod calls;
mod exprs;
mod finalize;
mod infer;
mod items;
mod members;
mod names;
mod operators;
mod patterns;
mod record;
mod stmts;

pub use items::placeholders;

/// What a definition in a chunk is, for the whole-program checks.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum NodeKind {
    /// A computed value.
    Computed,
    /// A function.
    Fn,
    /// A constant.
    Const,
    /// An action.
    Action,
    /// Code that runs inside every preview: handlers and models.
    InPreview,
    /// Anything else (state initialisers, rules, revise blocks, constants...).
    Other,
}

/// The references of one definition, for cycle and nesting checks.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Node {
    /// The definition, when it has a name others can refer to.
    pub key: Option<DefKey>,
    /// What it is.
    pub kind: NodeKind,
    /// Its name's span.
    pub span: Span,
    /// Computed values and constants it reads and functions it calls, in order. Spans are left
    /// out on purpose: an edit that moves a reference inside a body leaves the facts equal, so
    /// the whole-program checks are not re-run.
    pub refs: Vec<DefKey>,
    /// The `sim.next` calls it makes: the previewed action and the call's span.
    pub sims: Vec<(DefKey, Span)>,
    /// Members read from preview snapshots (`s.member`), evaluated inside a preview.
    pub snapshot_reads: Vec<DefKey>,
}

/// What a member check records for the whole-program checks.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Facts {
    /// Every definition read or called (patches are not reads).
    pub uses: BTreeSet<DefKey>,
    /// The definitions of the chunk, with their references.
    pub nodes: Vec<Node>,
}

/// The lowered form of one chunk; spans are relative to the parsed chunk.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ChunkIr {
    /// Constants.
    pub consts: Vec<(ir::ConstId, ir::ConstDef)>,
    /// Config entries.
    pub config: Vec<(ir::ConfigId, ir::Param)>,
    /// Error codes.
    pub errors: Vec<(ir::ErrorId, ir::ErrorDef)>,
    /// Functions.
    pub fns: Vec<(ir::FnId, ir::Function)>,
    /// State slots.
    pub state: Vec<(ir::StateId, ir::StateSlot)>,
    /// Tunables.
    pub tunables: Vec<(ir::TunableId, ir::Param)>,
    /// Computed values.
    pub computed: Vec<(ir::ComputedId, ir::Computed)>,
    /// Actions.
    pub actions: Vec<(ir::ActionId, ir::Action)>,
    /// Models.
    pub models: Vec<ir::Model>,
    /// Handlers.
    pub handlers: Vec<ir::Handler>,
    /// Decide rules.
    pub rules: Vec<ir::Rule>,
    /// Revise blocks.
    pub revises: Vec<ir::Revise>,
    /// Defaults the layer sets for needed layers' tunables.
    pub tunable_defaults: Vec<ir::TunableDefault>,
    /// Machines.
    pub machines: Vec<ir::MachineDef>,
    /// LLM effects.
    pub llms: Vec<(ir::LlmId, ir::LlmDef)>,
}

/// The result of checking one chunk.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ChunkCheck {
    /// Diagnostics, relative to the parsed chunk. The database moves them into the list of the
    /// chunk's group ([`crate::db::GroupCheck`]), which a file's diagnostics read.
    pub diagnostics: Vec<Diagnostic>,
    /// Facts for the whole-program checks, shared so that collecting them per group is cheap.
    pub facts: Arc<Facts>,
    /// The lowered chunk. Its spans are relative to the chunk, and their `file` is [`label`].
    ///
    /// [`label`]: ChunkCheck::label
    pub ir: ChunkIr,
    /// What names the chunk in its IR's spans, unique among the chunks of a workspace: the
    /// database sets it to the id of the chunk's [`crate::db::ChunkLabel`].
    pub label: u32,
    /// What every name of the chunk resolved to.
    pub names: Names,
}

/// Checks the items or members of one parsed chunk. `layer` is the layer a member chunk belongs
/// to; `report` is false when the chunk belongs to another module and is checked only to lower
/// it into this module's program.
pub fn check_chunk(
    scope: &Scope,
    sigs: &SignatureSet,
    layer: Option<LayerId>,
    items: &[ast::Item],
    members: &[ast::Member],
) -> ChunkCheck {
    let mut out = ChunkCheck::default();
    for item in items {
        let mut ck = Checker::new(scope, sigs, None, Ctx::Const);
        ck.declare_item(item);
        ck.item(item, &mut out);
        ck.finish(&mut out, item.span().end);
    }
    for member in members {
        // A member chunk has no layer when its layer's header did not parse (`layer l, x {`):
        // that syntax error is reported with the header, and the members are checked once it
        // is fixed.
        let Some(layer) = layer else {
            continue;
        };
        let mut ck = Checker::new(scope, sigs, Some(layer), Ctx::Computed);
        ck.machines = scope
            .layers
            .get(layer.index())
            .map(|info| info.machines.clone())
            .unwrap_or_default();
        ck.declare_member(member);
        ck.member(member, &mut out);
        ck.finish(&mut out, member.span().end);
    }
    out
}

/// Where an expression is evaluated, which decides what it may read and which statements it may
/// contain.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Ctx {
    /// A `const` value or a type: only literals, constants and pure builtins.
    Const,
    /// A config default: constants too.
    Config,
    /// A tunable default: constants and config.
    Tunable,
    /// Anything inside a layer.
    Layer,
    /// A top-level `fn`: no layer members.
    TopFn,
    /// A `computed` body (like `Layer`).
    Computed,
}

/// Statement permissions of a block.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Block {
    Action,
    Handler,
    Revise,
}

struct Checker<'a> {
    scope: &'a Scope,
    sigs: &'a SignatureSet,
    layer: Option<LayerId>,
    ctx: Ctx,
    diags: Vec<Diagnostic>,
    /// Inference variables: their binding and whether they stand for a number.
    vars: Vec<(Option<Ty>, bool)>,
    frame: Vec<ir::Local>,
    locals: Vec<(String, LocalId)>,
    uses: BTreeSet<DefKey>,
    node: Node,
    done_nodes: Vec<Node>,
    /// Types of expressions that need checking once all inference is done (empty list literals).
    pending: Vec<(Ty, Span)>,
    /// What the names of the chunk resolved to.
    names: Names,
    /// For each local of the frame, by [`LocalId`], its declaration in [`Names::locals`].
    decl_of: Vec<usize>,
    /// The chunk's machines as written: field and edges by variant name (`None`: from `*`).
    machines: Vec<crate::env::WrittenMachine>,
    /// What the enclosing guards prove about machine fields: (field, variant) pairs.
    known_states: Vec<(String, String)>,
}

type Lowered = ir::Expr;

fn rel(span: Span) -> ir::SrcSpan {
    ir::SrcSpan {
        file: 0,
        start: span.start,
        end: span.end,
    }
}

impl<'a> Checker<'a> {
    fn new(scope: &'a Scope, sigs: &'a SignatureSet, layer: Option<LayerId>, ctx: Ctx) -> Self {
        Self {
            scope,
            sigs,
            layer,
            ctx,
            diags: Vec::new(),
            vars: Vec::new(),
            frame: Vec::new(),
            locals: Vec::new(),
            uses: BTreeSet::new(),
            node: Node {
                key: None,
                kind: NodeKind::Other,
                span: Span::default(),
                refs: Vec::new(),
                sims: Vec::new(),
                snapshot_reads: Vec::new(),
            },
            done_nodes: Vec::new(),
            pending: Vec::new(),
            names: Names::default(),
            decl_of: Vec::new(),
            machines: Vec::new(),
            known_states: Vec::new(),
        }
    }

    /// Starts a new definition inside the same chunk: fresh frame, fresh node.
    fn begin(&mut self, ctx: Ctx, kind: NodeKind, key: Option<DefKey>, span: Span) {
        self.ctx = ctx;
        self.frame.clear();
        self.locals.clear();
        self.decl_of.clear();
        self.flush_node();
        self.node.kind = kind;
        self.node.key = key;
        self.node.span = span;
    }

    fn flush_node(&mut self) {
        if !self.node.refs.is_empty()
            || !self.node.sims.is_empty()
            || !self.node.snapshot_reads.is_empty()
            || self.node.key.is_some()
        {
            let node = std::mem::replace(
                &mut self.node,
                Node {
                    key: None,
                    kind: NodeKind::Other,
                    span: Span::default(),
                    refs: Vec::new(),
                    sims: Vec::new(),
                    snapshot_reads: Vec::new(),
                },
            );
            self.done_nodes.push(node);
        }
    }

    /// Ends the check of an item or member whose text ends at `end`.
    fn finish(mut self, out: &mut ChunkCheck, end: u32) {
        self.flush_node();
        let mut locals = std::mem::take(&mut self.names.locals);
        for local in &mut locals {
            local.ty = self.finalize(&local.ty);
            local.scope_end = local.scope_end.min(end);
        }
        out.names.locals.append(&mut locals);
        out.names.refs.append(&mut self.names.refs);
        for (ty, span) in std::mem::take(&mut self.pending) {
            if matches!(self.zonk(&ty), Ty::Var(_)) || contains_var(&self.zonk(&ty)) {
                self.error(Code::CannotInfer, span, "the type of this expression cannot be inferred".to_owned(), Some("give it a declared type, for example through a typed `const` or `state` field".into()));
            }
        }
        out.diagnostics.append(&mut self.diags);
        let facts = Arc::make_mut(&mut out.facts);
        facts.uses.append(&mut self.uses);
        facts.nodes.append(&mut self.done_nodes);
    }
}

fn contains_var(ty: &Ty) -> bool {
    match ty {
        Ty::Var(_) => true,
        Ty::Option(t) | Ty::List(t) | Ty::Set(t) => contains_var(t),
        Ty::Map(k, v) => contains_var(k) || contains_var(v),
        Ty::Opaque(_, args) => args.iter().any(contains_var),
        Ty::Fn(params, ret) => params.iter().any(contains_var) || contains_var(ret),
        Ty::Record(r) => r.fields.iter().any(|(_, t)| contains_var(t)),
        _ => false,
    }
}

/// Diagnostics, locals, types and keys: what every part of the checker records and asks.
impl<'a> Checker<'a> {
    fn error(&mut self, code: Code, span: Span, message: String, help: Option<String>) {
        self.diags
            .push(Diagnostic::new(code, span, message).maybe_help(help));
    }

    fn push(&mut self, diagnostic: Diagnostic) {
        self.diags.push(diagnostic);
    }

    fn new_local(&mut self, name: &ast::Ident, ty: Ty) -> LocalId {
        let id = LocalId(self.frame.len() as u32);
        self.declare_local(name, id, &ty);
        self.frame.push(ir::Local {
            name: name.name.clone(),
            ty,
        });
        self.locals.push((name.name.clone(), id));
        id
    }

    /// Checks `expr` against `ty` as the whole body of a definition (a constant, a default, a
    /// state field's start, a computed value, a function, an `ensure`): its types finalised,
    /// and the locals it bound taken as its frame.
    fn body(&mut self, expr: &ast::Expr, ty: &Ty) -> ir::Body {
        let mut expr = self.check(expr, ty);
        self.fix_expr(&mut expr);
        ir::Body {
            frame: self.take_frame(),
            expr,
        }
    }

    fn take_frame(&mut self) -> ir::Frame {
        let locals = std::mem::take(&mut self.frame)
            .into_iter()
            .map(|local| ir::Local {
                ty: self.finalize(&local.ty),
                name: local.name,
            })
            .collect();
        self.locals.clear();
        self.decl_of.clear();
        ir::Frame { locals }
    }

    fn resolve(&mut self, ty: &ast::TypeExpr) -> Ty {
        self.note_type(ty);
        let mut diags = Vec::new();
        let resolved = self.scope.resolve_type(ty, &mut diags);
        self.diags.extend(diags);
        resolved
    }

    fn current_layer(&self) -> Option<&env::LayerInfo> {
        self.layer.and_then(|id| self.scope.layers.get(id.index()))
    }

    /// The environment's entry for the member `name` of the current layer.
    fn member_entry(&self, name: &str) -> Option<&'a env::MemberEntry> {
        let scope: &'a Scope = self.scope;
        scope.layers.get(self.layer?.index())?.members.get(name)
    }

    fn layer_key(&self, name: &str) -> DefKey {
        // A member the environment knows already has its key: sharing it saves three strings
        // and a hash for every member the checker declares, and gives the same names.
        if let Some(entry) = self.member_entry(name) {
            return entry.key.clone();
        }
        let layer = self.current_layer();
        DefKey::new(
            layer.map_or_else(|| self.scope.module.clone(), |l| l.module.clone()),
            layer.map(|l| l.name.clone()),
            name,
        )
    }

    fn item_key(&self, name: &str) -> DefKey {
        DefKey::new(self.scope.module.clone(), None, name)
    }

    /// True when the current layer may read members of `other`.
    fn sees(&self, other: LayerId) -> bool {
        match self.current_layer() {
            Some(layer) => Some(other) == self.layer || layer.below.contains(&other),
            None => false,
        }
    }
}

fn member_kind_name(def: &MemberDef) -> &'static str {
    match def {
        MemberDef::State(..) => "state field",
        MemberDef::Tunable(..) => "tunable",
        MemberDef::Computed(..) => "computed value",
        MemberDef::Fn(..) => "function",
        MemberDef::Action(..) => "action",
    }
}

fn lowered(kind: ir::ExprKind, ty: Ty, span: Span) -> Lowered {
    ir::Expr {
        kind,
        ty,
        span: rel(span),
    }
}

/// A placeholder for an expression that already has an error; it never reaches a program,
/// because programs are produced only without errors.
fn poisoned(span: Span) -> Lowered {
    lowered(ir::ExprKind::Lit(ir::Literal::Bool(false)), Ty::Error, span)
}

trait IntoSpan {
    fn into_span(self) -> Span;
}

impl IntoSpan for ir::SrcSpan {
    fn into_span(self) -> Span {
        Span {
            start: self.start,
            end: self.end,
        }
    }
}

fn param_list(params: &[(String, Ty)]) -> String {
    params
        .iter()
        .map(|(n, t)| format!("{n}: {t}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// True for `llm.name(args)`.
fn is_llm_call(expr: &ast::Expr) -> bool {
    matches!(method_call(expr), Some((base, ..)) if matches!(&base.kind, ast::ExprKind::Name(n) if n.name == "llm"))
}

/// `base.name(args)`, written as a method call or as a call of a field.
fn method_call(expr: &ast::Expr) -> Option<(&ast::Expr, &ast::Ident, &[ast::Arg])> {
    match &expr.kind {
        ast::ExprKind::MethodCall(base, name, args) => Some((base, name, args)),
        ast::ExprKind::Call(callee, args) => match &callee.kind {
            ast::ExprKind::Field(base, name) => Some((base, name, args)),
            _ => None,
        },
        _ => None,
    }
}
