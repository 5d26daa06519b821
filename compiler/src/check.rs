//! Checks one chunk (an item or a layer member) against its module's scope, and lowers it.
//!
//! The checker resolves names, infers and checks types (with unification for `let`, closures and
//! generic builtins), enforces the per-member rules (layer isolation, where `emit` and `revise`
//! may appear, declared error codes, ranges, exhaustive `match`) and, in the same walk, builds
//! the member's [`crate::ir`]. Rules that need the whole program (cycles, nested `sim.next`,
//! unused items) use the [`Facts`] each member check records; see [`crate::global`].
//!
//! Spans here are relative to the parsed chunk; the edge of the checker moves them into the file.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use harness_grammar::{Span, ast};

use crate::codes::Code;
use crate::diagnostic::{Diagnostic, did_you_mean};
use crate::env::{self, DefKey, FnInfo, MemberDef, Scope, TypeDef, ValueDef};
use crate::ir::{self, LayerId, LocalId};
use crate::signatures::{Builtin, BuiltinKind, FnSig, SignatureSet, type_constructor};
use crate::types::{RecordTy, Ty};

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
    /// LLM effects.
    pub llms: Vec<(ir::LlmId, ir::LlmDef)>,
}

/// The result of checking one chunk.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ChunkCheck {
    /// Diagnostics, relative to the parsed chunk.
    pub diagnostics: Vec<Diagnostic>,
    /// Facts for the whole-program checks, shared so that collecting them per file is cheap.
    pub facts: Arc<Facts>,
    /// The lowered chunk.
    pub ir: ChunkIr,
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
        ck.item(item, &mut out);
        ck.finish(&mut out);
    }
    for member in members {
        let Some(layer) = layer else {
            out.diagnostics.push(Diagnostic::internal(
                member.span(),
                "a layer member outside a layer",
            ));
            continue;
        };
        let mut ck = Checker::new(scope, sigs, Some(layer), Ctx::Computed);
        ck.member(member, &mut out);
        ck.finish(&mut out);
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
        }
    }

    /// Starts a new definition inside the same chunk: fresh frame, fresh node.
    fn begin(&mut self, ctx: Ctx, kind: NodeKind, key: Option<DefKey>, span: Span) {
        self.ctx = ctx;
        self.frame.clear();
        self.locals.clear();
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

    fn finish(mut self, out: &mut ChunkCheck) {
        self.flush_node();
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

/// Type inference: variables, unification and substitution.
impl Checker<'_> {
    fn fresh(&mut self, numeric: bool) -> Ty {
        self.vars.push((None, numeric));
        Ty::Var(self.vars.len() as u32 - 1)
    }

    /// Follows variable bindings at the top of a type.
    fn shallow(&self, ty: &Ty) -> Ty {
        let mut ty = ty.clone();
        while let Ty::Var(v) = ty {
            match self
                .vars
                .get(v as usize)
                .and_then(|(binding, _)| binding.clone())
            {
                Some(bound) => ty = bound,
                None => break,
            }
        }
        ty
    }

    /// Substitutes every bound variable, deeply.
    fn zonk(&self, ty: &Ty) -> Ty {
        match self.shallow(ty) {
            Ty::Option(t) => Ty::Option(Box::new(self.zonk(&t))),
            Ty::List(t) => Ty::List(Box::new(self.zonk(&t))),
            Ty::Set(t) => Ty::Set(Box::new(self.zonk(&t))),
            Ty::Map(k, v) => Ty::Map(Box::new(self.zonk(&k)), Box::new(self.zonk(&v))),
            Ty::Opaque(name, args) => Ty::Opaque(name, args.iter().map(|a| self.zonk(a)).collect()),
            Ty::Fn(params, ret) => Ty::Fn(
                params.iter().map(|p| self.zonk(p)).collect(),
                Box::new(self.zonk(&ret)),
            ),
            other => other,
        }
    }

    /// The final type for the IR: unbound numeric variables default to `Int`, others to the
    /// error type (an error was or will be reported for them).
    fn finalize(&self, ty: &Ty) -> Ty {
        match self.shallow(ty) {
            Ty::Var(v) => {
                if self
                    .vars
                    .get(v as usize)
                    .is_some_and(|(_, numeric)| *numeric)
                {
                    Ty::Int
                } else {
                    Ty::Error
                }
            }
            Ty::Option(t) => Ty::Option(Box::new(self.finalize(&t))),
            Ty::List(t) => Ty::List(Box::new(self.finalize(&t))),
            Ty::Set(t) => Ty::Set(Box::new(self.finalize(&t))),
            Ty::Map(k, v) => Ty::Map(Box::new(self.finalize(&k)), Box::new(self.finalize(&v))),
            Ty::Opaque(name, args) => {
                Ty::Opaque(name, args.iter().map(|a| self.finalize(a)).collect())
            }
            Ty::Fn(params, ret) => Ty::Fn(
                params.iter().map(|p| self.finalize(p)).collect(),
                Box::new(self.finalize(&ret)),
            ),
            other => other,
        }
    }

    fn occurs(&self, v: u32, ty: &Ty) -> bool {
        match self.shallow(ty) {
            Ty::Var(w) => v == w,
            Ty::Option(t) | Ty::List(t) | Ty::Set(t) => self.occurs(v, &t),
            Ty::Map(k, val) => self.occurs(v, &k) || self.occurs(v, &val),
            Ty::Opaque(_, args) => args.iter().any(|a| self.occurs(v, a)),
            Ty::Fn(params, ret) => params.iter().any(|p| self.occurs(v, p)) || self.occurs(v, &ret),
            _ => false,
        }
    }

    /// Makes two types equal, binding variables; false when they cannot be.
    fn unify(&mut self, a: &Ty, b: &Ty) -> bool {
        let (a, b) = (self.shallow(a), self.shallow(b));
        match (&a, &b) {
            (Ty::Error, _) | (_, Ty::Error) => true,
            (Ty::Var(x), Ty::Var(y)) if x == y => true,
            (Ty::Var(v), other) | (other, Ty::Var(v)) => {
                let numeric = self.vars[*v as usize].1;
                if numeric {
                    match other {
                        Ty::Var(w) => self.vars[*w as usize].1 = true,
                        Ty::Int | Ty::Float => {}
                        _ => return false,
                    }
                }
                if self.occurs(*v, other) {
                    return false;
                }
                self.vars[*v as usize].0 = Some(other.clone());
                true
            }
            (Ty::Option(x), Ty::Option(y))
            | (Ty::List(x), Ty::List(y))
            | (Ty::Set(x), Ty::Set(y)) => self.unify(x, y),
            (Ty::Map(k1, v1), Ty::Map(k2, v2)) => self.unify(k1, k2) && self.unify(v1, v2),
            (Ty::Opaque(n1, a1), Ty::Opaque(n2, a2)) => {
                n1 == n2 && a1.len() == a2.len() && a1.iter().zip(a2).all(|(x, y)| self.unify(x, y))
            }
            (Ty::Fn(p1, r1), Ty::Fn(p2, r2)) => {
                p1.len() == p2.len()
                    && p1.iter().zip(p2).all(|(x, y)| self.unify(x, y))
                    && self.unify(r1, r2)
            }
            _ => a == b,
        }
    }

    /// Unifies the found type with the expected one, reporting a mismatch at `span`.
    fn expect_ty(&mut self, span: Span, found: &Ty, expected: &Ty) {
        if !self.unify(found, expected) {
            let (found, expected) = (self.zonk(found), self.zonk(expected));
            let help = match (&found, &expected) {
                (Ty::Int, Ty::Float) => Some("convert with `.to_float()`".to_owned()),
                (Ty::Float, Ty::Int) => {
                    Some("convert with `.round()`, `.floor()` or `.ceil()`".to_owned())
                }
                (found, Ty::Option(inner)) if self.unify(found, inner) => {
                    Some("wrap the value in `Some(...)`".to_owned())
                }
                _ => None,
            };
            self.error(
                Code::TypeMismatch,
                span,
                format!("expected `{expected}`, found `{found}`"),
                help,
            );
        }
    }

    fn error(&mut self, code: Code, span: Span, message: String, help: Option<String>) {
        self.diags
            .push(Diagnostic::new(code, span, message).maybe_help(help));
    }

    fn push(&mut self, diagnostic: Diagnostic) {
        self.diags.push(diagnostic);
    }

    fn new_local(&mut self, name: &str, ty: Ty) -> LocalId {
        let id = LocalId(self.frame.len() as u32);
        self.frame.push(ir::Local {
            name: name.to_owned(),
            ty,
        });
        self.locals.push((name.to_owned(), id));
        id
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
        ir::Frame { locals }
    }

    fn resolve(&mut self, ty: &ast::TypeExpr) -> Ty {
        let mut diags = Vec::new();
        let resolved = self.scope.resolve_type(ty, &mut diags);
        self.diags.extend(diags);
        resolved
    }

    fn current_layer(&self) -> Option<&env::LayerInfo> {
        self.layer.and_then(|id| self.scope.layers.get(id.index()))
    }

    fn layer_key(&self, name: &str) -> DefKey {
        DefKey {
            module: self
                .current_layer()
                .map_or_else(|| self.scope.module.clone(), |l| l.module.clone()),
            layer: self.current_layer().map(|l| l.name.clone()),
            name: name.to_owned(),
        }
    }

    fn item_key(&self, name: &str) -> DefKey {
        DefKey {
            module: self.scope.module.clone(),
            layer: None,
            name: name.to_owned(),
        }
    }

    /// True when the current layer may read members of `other`.
    fn sees(&self, other: LayerId) -> bool {
        match self.current_layer() {
            Some(layer) => Some(other) == self.layer || layer.below.contains(&other),
            None => false,
        }
    }
}

/// Walks lowered IR to replace inference variables by final types.
impl Checker<'_> {
    fn fix_expr(&self, expr: &mut ir::Expr) {
        expr.ty = self.finalize(&expr.ty);
        use ir::ExprKind as K;
        match &mut expr.kind {
            K::GameCall { args, .. }
            | K::CallFn { args, .. }
            | K::CallBuiltin { args, .. }
            | K::SimNext { args, .. } => args.iter_mut().for_each(|a| self.fix_expr(a)),
            K::Variant { payload, .. } => payload.iter_mut().for_each(|a| self.fix_expr(a)),
            K::Record(items) | K::List(items) | K::Set(items) => {
                items.iter_mut().for_each(|a| self.fix_expr(a))
            }
            K::Closure { body, .. } => self.fix_expr(body),
            K::Some(inner) | K::Field(inner, _) | K::Unary(_, inner) => self.fix_expr(inner),
            K::SnapshotRead { snapshot, .. } => self.fix_expr(snapshot),
            K::Index(a, b) | K::Binary(_, a, b) => {
                self.fix_expr(a);
                self.fix_expr(b);
            }
            K::If {
                guards,
                then,
                otherwise,
            } => {
                self.fix_guards(guards);
                self.fix_expr(then);
                self.fix_expr(otherwise);
            }
            K::Match(scrutinee, arms) => {
                self.fix_expr(scrutinee);
                arms.iter_mut().for_each(|arm| self.fix_expr(&mut arm.body));
            }
            K::Let { value, body, .. } => {
                self.fix_expr(value);
                self.fix_expr(body);
            }
            K::Lit(_)
            | K::Local(_)
            | K::Member(_)
            | K::Config(_)
            | K::Const(_)
            | K::GameProperty(_)
            | K::FnRef(_)
            | K::EmptyMap
            | K::None => {}
        }
    }

    fn fix_guards(&self, guards: &mut [ir::Guard]) {
        for guard in guards {
            match guard {
                ir::Guard::Cond(e) | ir::Guard::Let(_, e) => self.fix_expr(e),
            }
        }
    }

    fn fix_stmts(&self, stmts: &mut [ir::Stmt]) {
        for stmt in stmts {
            match &mut stmt.kind {
                ir::StmtKind::Let(_, e) | ir::StmtKind::Revise { value: e, .. } => self.fix_expr(e),
                ir::StmtKind::Patch { place, value, .. } => {
                    for step in &mut place.path {
                        if let ir::PlaceStep::Index(e) = step {
                            self.fix_expr(e);
                        }
                    }
                    self.fix_expr(value);
                }
                ir::StmtKind::Emit { args, .. } | ir::StmtKind::LetLlm { args, .. } => {
                    args.iter_mut().for_each(|a| self.fix_expr(a))
                }
                ir::StmtKind::If {
                    guards,
                    then,
                    otherwise,
                } => {
                    self.fix_guards(guards);
                    self.fix_stmts(then);
                    self.fix_stmts(otherwise);
                }
            }
        }
    }
}

/// Items and members.
impl Checker<'_> {
    fn item(&mut self, item: &ast::Item, out: &mut ChunkCheck) {
        match item {
            ast::Item::TypeAlias(alias) => {
                self.resolve(&alias.ty);
            }
            ast::Item::Enum(decl) => {
                for variant in &decl.variants {
                    for ty in &variant.payload {
                        self.resolve(ty);
                    }
                }
            }
            ast::Item::Const(decl) => {
                self.begin(
                    Ctx::Const,
                    NodeKind::Const,
                    Some(self.item_key(&decl.name.name)),
                    decl.name.span,
                );
                let ty = self.resolve(&decl.ty);
                let mut value = self.check(&decl.value, &ty);
                self.fix_expr(&mut value);
                let frame = self.take_frame();
                if let Some((ValueDef::Const { id, .. }, _, _)) =
                    self.scope.values.get(&decl.name.name)
                {
                    out.ir.consts.push((
                        *id,
                        ir::ConstDef {
                            name: decl.name.name.clone(),
                            ty,
                            value: ir::Body { frame, expr: value },
                            span: rel(decl.span),
                        },
                    ));
                }
            }
            ast::Item::Config(block) => {
                for param in &block.params {
                    self.begin(Ctx::Config, NodeKind::Other, None, param.name.span);
                    let lowered = self.param(param, None);
                    if let Some((ValueDef::Config { id, .. }, _, _)) =
                        self.scope.values.get(&param.name.name)
                    {
                        out.ir.config.push((*id, lowered));
                    }
                }
            }
            ast::Item::Fn(decl) => {
                self.begin(
                    Ctx::TopFn,
                    NodeKind::Fn,
                    Some(self.item_key(&decl.name.name)),
                    decl.name.span,
                );
                let lowered = self.function(decl);
                if let Some((ValueDef::Fn(info), _, _)) = self.scope.values.get(&decl.name.name) {
                    out.ir.fns.push((info.id, lowered));
                }
            }
            ast::Item::Error(decl) => {
                if let Some((id, _)) = self.scope.errors.get(&decl.name.name) {
                    out.ir.errors.push((
                        *id,
                        ir::ErrorDef {
                            code: decl.name.name.clone(),
                            message: decl.message.value.clone(),
                            span: rel(decl.span),
                        },
                    ));
                }
            }
            ast::Item::Llm(decl) => {
                if let Some(lowered) = self.llm_item(decl) {
                    out.ir.llms.push(lowered);
                }
            }
            ast::Item::Use(_) | ast::Item::Layer(_) | ast::Item::Invalid(_) => {}
        }
    }

    /// Checks an `llm` item: its reply type, its `where` bounds and its templates' placeholders;
    /// lowers it when the environment knows it.
    fn llm_item(&mut self, decl: &ast::LlmDecl) -> Option<(ir::LlmId, ir::LlmDef)> {
        for param in &decl.params {
            self.resolve(&param.ty);
        }
        let reply = self.resolve(&decl.reply);
        let shape = self.llm_shape(&reply, decl.reply.span());
        let mut fields = match &shape {
            Some(ir::LlmShape::Record(fields)) => fields.clone(),
            _ => Vec::new(),
        };
        for bound in &decl.bounds {
            self.llm_bound(bound, &reply, &mut fields);
        }
        let names: Vec<&str> = decl.params.iter().map(|p| p.name.name.as_str()).collect();
        for template in [&decl.system, &decl.user] {
            for (name, offset) in placeholders(&template.value) {
                if name != "schema" && !names.contains(&name.as_str()) {
                    let mut candidates = names.clone();
                    candidates.push("schema");
                    // The offset is into the unescaped text; the literal's span is close enough
                    // to point at, and exact when the template has no escapes before it.
                    let start = template.span.start + 1 + offset as u32;
                    let span = Span {
                        start: start.min(template.span.end),
                        end: (start + name.len() as u32 + 2).min(template.span.end),
                    };
                    self.error(
                        Code::LlmPlaceholder,
                        span,
                        format!(
                            "`{{{name}}}` is neither a parameter of `{}` nor `{{schema}}`",
                            decl.name.name
                        ),
                        did_you_mean(&name, candidates)
                            .or_else(|| Some("write `{{` and `}}` for literal braces".into())),
                    );
                }
            }
        }
        let info = self.scope.llms.get(&decl.name.name)?.clone();
        let result = self.scope.enum_named(&ir::llm_result_name(&info.reply))?;
        let failure = self.scope.enum_named(ir::LLM_FAILURE_ENUM)?;
        let shape = match shape? {
            ir::LlmShape::Record(_) => ir::LlmShape::Record(fields),
            other => other,
        };
        Some((
            info.id,
            ir::LlmDef {
                name: decl.name.name.clone(),
                params: info.params.clone(),
                system: decl.system.value.clone(),
                user: decl.user.value.clone(),
                reply,
                shape,
                result_enum: result.id,
                failure_enum: failure.id,
                span: rel(decl.span),
            },
        ))
    }

    /// The shape of a reply type, or an E0613 when it is not a record of scalars or an enum of
    /// unit variants.
    fn llm_shape(&mut self, reply: &Ty, span: Span) -> Option<ir::LlmShape> {
        let unit_enum = |this: &Self, name: &str| -> Option<ir::LlmEnum> {
            let info = this.scope.enum_named(name)?;
            if info.variants.is_empty() || info.variants.iter().any(|(_, p)| !p.is_empty()) {
                return None;
            }
            Some(ir::LlmEnum {
                enum_id: info.id,
                variants: info.variants.iter().map(|(v, _)| v.clone()).collect(),
            })
        };
        let shape = match reply {
            Ty::Error => return None,
            Ty::Enum(name) => unit_enum(self, name).map(ir::LlmShape::Enum),
            Ty::Record(record) => {
                let mut fields = Vec::new();
                let mut ok = true;
                for (name, ty) in &record.fields {
                    let kind = match ty {
                        Ty::Int => Some(ir::LlmFieldKind::Int),
                        Ty::Float => Some(ir::LlmFieldKind::Float),
                        Ty::Bool => Some(ir::LlmFieldKind::Bool),
                        Ty::String => Some(ir::LlmFieldKind::String),
                        Ty::Enum(e) => unit_enum(self, e).map(ir::LlmFieldKind::Enum),
                        _ => None,
                    };
                    match kind {
                        Some(kind) => fields.push(ir::LlmField {
                            name: name.clone(),
                            kind,
                            range: None,
                        }),
                        None => {
                            ok = false;
                            if !ty.has_error() {
                                self.error(
                                    Code::LlmReplyType,
                                    span,
                                    format!("field `{name}` of the reply has type `{ty}`, which an LLM reply cannot carry"),
                                    Some("reply fields are `Int`, `Float`, `Bool`, `String` or an enum of unit variants".into()),
                                );
                            }
                        }
                    }
                }
                if !ok {
                    return None;
                }
                if fields.is_empty() {
                    None
                } else {
                    Some(ir::LlmShape::Record(fields))
                }
            }
            _ => None,
        };
        if shape.is_none()
            && !reply.has_error()
            && !matches!(reply, Ty::Record(r) if !r.fields.is_empty())
        {
            self.error(
                Code::LlmReplyType,
                span,
                format!("an LLM cannot reply with `{reply}`"),
                Some("reply with a record of `Int`, `Float`, `Bool`, `String` and unit-enum fields, or with an enum of unit variants".into()),
            );
        }
        shape
    }

    /// Checks one `where` bound and records its range on the field.
    fn llm_bound(&mut self, bound: &ast::LlmBound, reply: &Ty, fields: &mut [ir::LlmField]) {
        let Ty::Record(record) = reply else {
            if !reply.has_error() {
                self.error(
                    Code::LlmBound,
                    bound.field.span,
                    format!(
                        "`where` bounds fields of a record reply, and `{reply}` is not a record"
                    ),
                    None,
                );
            }
            return;
        };
        let Some((_, ty)) = record.fields.iter().find(|(n, _)| *n == bound.field.name) else {
            self.error(
                Code::LlmBound,
                bound.field.span,
                format!("the reply `{reply}` has no field `{}`", bound.field.name),
                did_you_mean(
                    &bound.field.name,
                    record.fields.iter().map(|(n, _)| n.as_str()),
                ),
            );
            return;
        };
        if !ty.is_numeric() {
            self.error(
                Code::LlmBound,
                bound.field.span,
                format!(
                    "field `{}` has type `{ty}`; only `Int` and `Float` fields take a range",
                    bound.field.name
                ),
                None,
            );
            return;
        }
        let Some(range) = env::literal_range(&bound.range) else {
            self.error(
                Code::LlmBound,
                bound.range.span,
                "the bounds of a range must be literals".to_owned(),
                Some("write the bounds as numbers, for example `in 0..=10`".into()),
            );
            return;
        };
        let fits = |l: &ir::Literal| {
            matches!(
                (ty, l),
                (Ty::Int, ir::Literal::Int(_)) | (Ty::Float, ir::Literal::Float(_))
            )
        };
        if !fits(&range.lo) || !fits(&range.hi) {
            self.error(
                Code::LlmBound,
                bound.range.span,
                format!(
                    "the bounds of field `{}` must be `{ty}` literals",
                    bound.field.name
                ),
                Some(if *ty == Ty::Float {
                    "write `0.0..=1.0`, not `0..=1`".into()
                } else {
                    "write whole numbers".into()
                }),
            );
            return;
        }
        let as_f64 = |l: &ir::Literal| match l {
            ir::Literal::Int(v) => *v as f64,
            ir::Literal::Float(v) => *v,
            _ => 0.0,
        };
        let (lo, hi) = (as_f64(&range.lo), as_f64(&range.hi));
        if lo > hi || (lo == hi && !range.inclusive) {
            self.error(
                Code::LlmBound,
                bound.range.span,
                "this range is empty".to_owned(),
                None,
            );
            return;
        }
        if let Some(field) = fields.iter_mut().find(|f| f.name == bound.field.name) {
            field.range = Some(range);
        }
    }

    /// A `config` entry or a `tunable`.
    fn param(&mut self, param: &ast::Param, layer: Option<LayerId>) -> ir::Param {
        let ty = self.resolve(&param.ty);
        let mut default = self.check(&param.default, &ty);
        self.fix_expr(&mut default);
        let frame = self.take_frame();
        let mut range = None;
        if let Some(written) = &param.range {
            match env::literal_range(written) {
                None => self.error(
                    Code::InvalidRange,
                    written.span,
                    "the bounds of a range must be literals".to_owned(),
                    Some("write the bounds as numbers, for example `in 0..=10`".into()),
                ),
                Some(r) => {
                    let bound_ok = |l: &ir::Literal| {
                        matches!(
                            (l, &ty),
                            (ir::Literal::Int(_), Ty::Int)
                                | (ir::Literal::Float(_), Ty::Float)
                                | (_, Ty::Error)
                        )
                    };
                    let ordered = env::in_range(
                        &r.lo,
                        &ir::Range {
                            lo: r.lo.clone(),
                            hi: r.hi.clone(),
                            inclusive: true,
                        },
                    );
                    if !bound_ok(&r.lo) || !bound_ok(&r.hi) {
                        self.error(
                            Code::InvalidRange,
                            written.span,
                            format!("the bounds of a range for a `{ty}` parameter must be `{ty}` literals"),
                            None,
                        );
                    } else if ordered == Some(false) || (!r.inclusive && r.lo == r.hi) {
                        self.error(
                            Code::InvalidRange,
                            written.span,
                            "this range is empty: its lower bound is not below its upper bound"
                                .to_owned(),
                            Some("write `lo..=hi` with `lo <= hi`".into()),
                        );
                    } else {
                        if let Some(value) = env::literal(&param.default)
                            && env::in_range(&value, &r) == Some(false)
                        {
                            self.push(
                                Diagnostic::new(
                                    Code::DefaultOutOfRange,
                                    param.default.span,
                                    format!(
                                        "the default of `{}` lies outside its range",
                                        param.name.name
                                    ),
                                )
                                .label(written.span, "the declared range"),
                            );
                        }
                        range = Some(r);
                    }
                }
            }
        }
        ir::Param {
            name: param.name.name.clone(),
            layer,
            ty,
            default: ir::Body {
                frame,
                expr: default,
            },
            range,
            span: rel(param.span),
        }
    }

    fn function(&mut self, decl: &ast::FnDecl) -> ir::Function {
        let mut params = Vec::new();
        let mut seen = BTreeSet::new();
        for param in &decl.params {
            if !seen.insert(param.name.name.as_str()) {
                self.error(
                    Code::Duplicate,
                    param.name.span,
                    format!("parameter `{}` is declared twice", param.name.name),
                    None,
                );
            }
            let ty = self.resolve(&param.ty);
            self.new_local(&param.name.name, ty.clone());
            params.push(ty);
        }
        let ret = self.resolve(&decl.ret);
        let mut body = self.check(&decl.body, &ret);
        self.fix_expr(&mut body);
        let frame = self.take_frame();
        ir::Function {
            name: decl.name.name.clone(),
            layer: self.layer,
            params,
            ret,
            body: ir::Body { frame, expr: body },
            span: rel(decl.span),
        }
    }

    fn member_def(&self, name: &str) -> Option<&MemberDef> {
        self.current_layer()?
            .members
            .get(name)
            .map(|entry| &entry.def)
    }

    fn member(&mut self, member: &ast::Member, out: &mut ChunkCheck) {
        let Some(layer) = self.layer else { return };
        match member {
            ast::Member::State(block) => {
                for field in &block.fields {
                    self.begin(Ctx::Layer, NodeKind::Other, None, field.name.span);
                    let ty = self.resolve(&field.ty);
                    let mut init = self.check(&field.init, &ty);
                    self.fix_expr(&mut init);
                    let frame = self.take_frame();
                    if let Some(MemberDef::State(id, _)) = self.member_def(&field.name.name) {
                        out.ir.state.push((
                            *id,
                            ir::StateSlot {
                                name: field.name.name.clone(),
                                layer,
                                ty,
                                init: ir::Body { frame, expr: init },
                                span: rel(field.span),
                            },
                        ));
                    }
                }
            }
            ast::Member::Tunable(param) => {
                self.begin(Ctx::Tunable, NodeKind::Other, None, param.name.span);
                let lowered = self.param(param, Some(layer));
                if let Some(MemberDef::Tunable(id, ..)) = self.member_def(&param.name.name) {
                    out.ir.tunables.push((*id, lowered));
                }
            }
            ast::Member::Computed(decl) => {
                self.begin(
                    Ctx::Computed,
                    NodeKind::Computed,
                    Some(self.layer_key(&decl.name.name)),
                    decl.name.span,
                );
                let ty = self.resolve(&decl.ty);
                let mut body = self.check(&decl.body, &ty);
                self.fix_expr(&mut body);
                let frame = self.take_frame();
                if let Some(MemberDef::Computed(id, _)) = self.member_def(&decl.name.name) {
                    out.ir.computed.push((
                        *id,
                        ir::Computed {
                            name: decl.name.name.clone(),
                            layer,
                            ty,
                            body: ir::Body { frame, expr: body },
                            span: rel(decl.span),
                        },
                    ));
                }
            }
            ast::Member::Fn(decl) => {
                self.begin(
                    Ctx::Layer,
                    NodeKind::Fn,
                    Some(self.layer_key(&decl.name.name)),
                    decl.name.span,
                );
                let lowered = self.function(decl);
                if let Some(MemberDef::Fn(info)) = self.member_def(&decl.name.name) {
                    out.ir.fns.push((info.id, lowered));
                }
            }
            ast::Member::Action(decl) => {
                self.begin(
                    Ctx::Layer,
                    NodeKind::Action,
                    Some(self.layer_key(&decl.name.name)),
                    decl.name.span,
                );
                let mut params = Vec::new();
                for param in &decl.params {
                    let ty = self.resolve(&param.ty);
                    self.new_local(&param.name.name, ty.clone());
                    params.push(ty);
                }
                let available = decl.available.as_ref().map(|cond| {
                    let mut e = self.check(cond, &Ty::Bool);
                    self.fix_expr(&mut e);
                    e
                });
                let mut requires = Vec::new();
                for clause in &decl.requires {
                    let mut cond = self.check(&clause.cond, &Ty::Bool);
                    self.fix_expr(&mut cond);
                    match self.scope.errors.get(&clause.code.name) {
                        Some((id, key)) => {
                            self.uses.insert(key.clone());
                            requires.push(ir::Requires {
                                cond,
                                error: *id,
                                span: rel(clause.span),
                            });
                        }
                        None => {
                            let help = did_you_mean(
                                &clause.code.name,
                                self.scope.errors.keys().map(String::as_str),
                            )
                            .unwrap_or_else(|| {
                                format!(
                                    "declare it: `error {} = \"what went wrong\"`",
                                    clause.code.name
                                )
                            });
                            self.error(
                                Code::UnknownError,
                                clause.code.span,
                                format!("error code `{}` is not declared", clause.code.name),
                                Some(help),
                            );
                        }
                    }
                }
                let mut body = self.block(&decl.body, Block::Action);
                self.fix_stmts(&mut body);
                let frame = self.take_frame();
                if let Some(MemberDef::Action(id, _)) = self.member_def(&decl.name.name) {
                    out.ir.actions.push((
                        *id,
                        ir::Action {
                            name: decl.name.name.clone(),
                            layer,
                            params,
                            frame,
                            available,
                            requires,
                            body,
                            span: rel(decl.span),
                        },
                    ));
                }
            }
            ast::Member::Model(model) => {
                self.begin(Ctx::Layer, NodeKind::InPreview, None, model.effect.span);
                if let Some(lowered) = self.model(model) {
                    out.ir.models.push(lowered);
                }
            }
            ast::Member::On(handler) => {
                self.begin(
                    Ctx::Layer,
                    NodeKind::InPreview,
                    None,
                    handler.observation.span,
                );
                let Some(fields) = self.message_path(&handler.observation, false) else {
                    return;
                };
                self.bind_message_params(
                    &handler.params,
                    &fields,
                    handler.observation.span,
                    "observation",
                );
                let mut body = self.block(&handler.body, Block::Handler);
                self.fix_stmts(&mut body);
                let frame = self.take_frame();
                out.ir.handlers.push(ir::Handler {
                    observation: handler
                        .observation
                        .segments
                        .last()
                        .map(|s| s.name.clone())
                        .unwrap_or_default(),
                    frame,
                    body,
                    span: rel(handler.span),
                });
            }
            ast::Member::Decide(decide) => {
                for rule in &decide.rules {
                    self.begin(Ctx::Layer, NodeKind::Other, None, rule.span);
                    let depth = self.locals.len();
                    let mut guards = self.guards(&rule.guards);
                    let call = self.action_call(&rule.action, Code::RuleNotAction);
                    self.locals.truncate(depth);
                    self.fix_guards(&mut guards);
                    let Some((action, mut args)) = call else {
                        continue;
                    };
                    args.iter_mut().for_each(|a| self.fix_expr(a));
                    let frame = self.take_frame();
                    out.ir.rules.push(ir::Rule {
                        frame,
                        guards,
                        action,
                        args,
                        span: rel(rule.span),
                    });
                }
            }
            ast::Member::Revise(revise) => {
                self.begin(Ctx::Layer, NodeKind::Other, None, revise.span);
                let mut cond = self.check(&revise.cond, &Ty::Bool);
                self.fix_expr(&mut cond);
                let mut body = self.block(&revise.body, Block::Revise);
                self.fix_stmts(&mut body);
                let frame = self.take_frame();
                out.ir.revises.push(ir::Revise {
                    frame,
                    cond,
                    body,
                    span: rel(revise.span),
                });
            }
            ast::Member::Invalid(_) => {}
        }
    }

    /// Looks up `game.name` as an effect (`effect`) or an observation, reporting problems.
    fn message_path(&mut self, path: &ast::Path, effect: bool) -> Option<Vec<(String, Ty)>> {
        let (code, what) = if effect {
            (Code::UnknownEffect, "effect")
        } else {
            (Code::UnknownObservation, "observation")
        };
        let [base, name] = path.segments.as_slice() else {
            self.error(code, path.span, format!("expected `game.<{what}>`"), None);
            return None;
        };
        if base.name != "game" {
            self.error(
                code,
                path.span,
                format!("expected `game.<{what}>`, found `{}`", env::path_text(path)),
                None,
            );
            return None;
        }
        self.message(name, effect)
    }

    fn message(&mut self, name: &ast::Ident, effect: bool) -> Option<Vec<(String, Ty)>> {
        let (code, what) = if effect {
            (Code::UnknownEffect, "effect")
        } else {
            (Code::UnknownObservation, "observation")
        };
        let Some(game) = &self.scope.game else {
            self.error(
                Code::NoGame,
                name.span,
                format!("`game.{}` needs a game", name.name),
                Some("add `use game <name>` at the top of the file".into()),
            );
            return None;
        };
        let list = if effect {
            &game.effects
        } else {
            &game.observations
        };
        match list.iter().find(|m| m.name == name.name) {
            Some(message) => Some(
                message
                    .params
                    .iter()
                    .map(|p| (p.name.clone(), self.scope.normalize(&p.ty)))
                    .collect(),
            ),
            None => {
                let help = did_you_mean(&name.name, list.iter().map(|m| m.name.as_str()))
                    .unwrap_or_else(|| {
                        format!(
                            "the game's {what}s are: {}",
                            list.iter()
                                .map(|m| m.name.as_str())
                                .collect::<Vec<_>>()
                                .join(", ")
                        )
                    });
                self.error(
                    code,
                    name.span,
                    format!("game `{}` has no {what} `{}`", game.name, name.name),
                    Some(help),
                );
                None
            }
        }
    }

    fn bind_message_params(
        &mut self,
        params: &[ast::Ident],
        fields: &[(String, Ty)],
        span: Span,
        what: &str,
    ) {
        if params.len() != fields.len() {
            let expected = fields
                .iter()
                .map(|(n, t)| format!("{n}: {t}"))
                .collect::<Vec<_>>()
                .join(", ");
            self.error(
                Code::MessageParams,
                span,
                format!(
                    "this {what} has {} field(s), but {} name(s) are bound",
                    fields.len(),
                    params.len()
                ),
                Some(format!("bind one name per field: ({expected})")),
            );
        }
        for (i, param) in params.iter().enumerate() {
            let ty = fields.get(i).map_or(Ty::Error, |(_, t)| t.clone());
            self.new_local(&param.name, ty);
        }
    }

    fn model(&mut self, model: &ast::Model) -> Option<ir::Model> {
        let params = self.message_path(&model.effect, true)?;
        self.bind_message_params(&model.params, &params, model.effect.span, "effect");
        let mut branches = Vec::new();
        let count = model.branches.len();
        let mut otherwise_seen = false;
        for (i, branch) in model.branches.iter().enumerate() {
            if branch.probability.is_none() {
                if otherwise_seen || i + 1 != count {
                    self.error(
                        Code::OtherwiseNotLast,
                        branch.span,
                        "an `otherwise` branch must be the last and only one".to_owned(),
                        Some("keep one `otherwise` branch, at the end".into()),
                    );
                }
                otherwise_seen = true;
            }
            let probability = branch.probability.as_ref().map(|p| {
                let mut e = self.check(p, &Ty::Float);
                self.fix_expr(&mut e);
                e
            });
            let Some((name, args)) = self.observation_call(&branch.observation) else {
                continue;
            };
            let mut args = args;
            args.iter_mut().for_each(|a| self.fix_expr(a));
            branches.push(ir::ModelBranch {
                observation: name,
                args,
                probability,
                span: rel(branch.span),
            });
        }
        let frame = self.take_frame();
        Some(ir::Model {
            effect: model
                .effect
                .segments
                .last()
                .map(|s| s.name.clone())
                .unwrap_or_default(),
            frame,
            branches,
            span: rel(model.span),
        })
    }

    /// `game.observation(args)` in a model branch.
    fn observation_call(&mut self, expr: &ast::Expr) -> Option<(String, Vec<Lowered>)> {
        let Some((base, name, args)) = method_call(expr) else {
            self.error(
                Code::UnknownObservation,
                expr.span,
                "expected an observation: `game.<observation>(...)`".to_owned(),
                None,
            );
            return None;
        };
        if !matches!(&base.kind, ast::ExprKind::Name(n) if n.name == "game") {
            self.error(
                Code::UnknownObservation,
                expr.span,
                "expected an observation: `game.<observation>(...)`".to_owned(),
                None,
            );
            return None;
        }
        let fields = self.message(name, false)?;
        let args = self.args(
            &fields,
            args,
            expr.span,
            &format!("observation `{}`", name.name),
        );
        Some((name.name.clone(), args))
    }
}

/// `base.name(args)`, written as a method call or as a call of a field.
/// True for `llm.name(args)`.
fn is_llm_call(expr: &ast::Expr) -> bool {
    matches!(method_call(expr), Some((base, ..)) if matches!(&base.kind, ast::ExprKind::Name(n) if n.name == "llm"))
}

/// The `{name}` placeholders of a template with their byte offsets; `{{` and `}}` are literal
/// braces.
pub fn placeholders(template: &str) -> Vec<(String, usize)> {
    let mut out = Vec::new();
    let bytes = template.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'{' if bytes.get(i + 1) == Some(&b'{') => i += 2,
            b'}' if bytes.get(i + 1) == Some(&b'}') => i += 2,
            b'{' => match template[i + 1..].find('}') {
                Some(len) => {
                    out.push((template[i + 1..i + 1 + len].to_owned(), i));
                    i += len + 2;
                }
                None => i += 1,
            },
            _ => i += 1,
        }
    }
    out
}

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

/// Statements, guards and places.
impl Checker<'_> {
    fn block(&mut self, block: &ast::Block, kind: Block) -> Vec<ir::Stmt> {
        let depth = self.locals.len();
        let stmts = block
            .stmts
            .iter()
            .filter_map(|stmt| self.stmt(stmt, kind))
            .collect();
        self.locals.truncate(depth);
        stmts
    }

    fn stmt(&mut self, stmt: &ast::Stmt, kind: Block) -> Option<ir::Stmt> {
        let span = rel(stmt.span());
        let lowered = match stmt {
            ast::Stmt::Let(pattern, value, _) => {
                let value = self.infer(value, None);
                let pattern = self.pattern(pattern, &value.ty.clone(), true);
                ir::StmtKind::Let(pattern, value)
            }
            ast::Stmt::Patch(patch) => {
                let place = self.place(&patch.target)?;
                let (place, place_ty) = place;
                let value = self.assign_value(patch, &place_ty);
                ir::StmtKind::Patch {
                    place,
                    op: patch.op,
                    value,
                }
            }
            ast::Stmt::LetEmit(pattern, expr, span) => self.llm_call(pattern, expr, *span, kind)?,
            ast::Stmt::Emit(expr, span) if is_llm_call(expr) => {
                self.error(
                    Code::LlmOutsideBlock,
                    *span,
                    "the reply of an LLM call must be bound".to_owned(),
                    Some(
                        "write `let reply = emit llm.name(args)` and handle `reply` with `match`"
                            .into(),
                    ),
                );
                if let Some((_, _, args)) = method_call(expr) {
                    for arg in args {
                        self.infer_loose(&arg.value);
                    }
                }
                return None;
            }
            ast::Stmt::Emit(expr, span) => {
                if kind != Block::Action {
                    self.error(
                        Code::EmitOutsideAction,
                        *span,
                        "`emit` is only allowed in actions".to_owned(),
                        Some("move the effect into an action; handlers and revise blocks only patch state".into()),
                    );
                }
                let (base, name, args) = method_call(expr).filter(|(base, ..)| matches!(&base.kind, ast::ExprKind::Name(n) if n.name == "game"))
                    .or_else(|| {
                        self.error(Code::UnknownEffect, expr.span, "expected an effect: `emit game.<effect>(...)`".to_owned(), None);
                        None
                    })?;
                let _ = base;
                let params = self.message(name, true)?;
                let args = self.args(&params, args, expr.span, &format!("effect `{}`", name.name));
                ir::StmtKind::Emit {
                    effect: name.name.clone(),
                    args,
                }
            }
            ast::Stmt::Revise(patch) => {
                if kind != Block::Revise {
                    self.error(
                        Code::ReviseOutsideBlock,
                        patch.span,
                        "`revise` statements are only allowed in `revise when ... { }` blocks"
                            .to_owned(),
                        Some(
                            "move it into a revise block, so it runs in the turn's revise phase"
                                .into(),
                        ),
                    );
                }
                let (tunable, ty, range) = self.revise_target(&patch.target)?;
                let value = self.assign_value(patch, &ty);
                if let (ast::AssignOp::Set, Some(range), Some(literal)) =
                    (patch.op, &range, env::literal(&patch.value))
                    && env::in_range(&literal, range) == Some(false)
                {
                    self.error(
                            Code::ReviseOutOfRange,
                            patch.value.span,
                            format!("this revision sets the tunable outside its range {}", range_text(range)),
                            Some("stay within the declared range, or widen it where the tunable is declared".into()),
                        );
                }
                ir::StmtKind::Revise {
                    tunable,
                    op: patch.op,
                    value,
                }
            }
            ast::Stmt::If(if_stmt) => self.if_stmt(if_stmt, kind),
            ast::Stmt::Invalid(_) => return None,
        };
        Some(ir::Stmt {
            kind: lowered,
            span,
        })
    }

    /// `let pattern = emit llm.name(args)`.
    fn llm_call(
        &mut self,
        pattern: &ast::Pattern,
        expr: &ast::Expr,
        span: Span,
        kind: Block,
    ) -> Option<ir::StmtKind> {
        if kind == Block::Handler {
            self.error(
                Code::LlmOutsideBlock,
                span,
                "LLM calls are only allowed in revise blocks and actions".to_owned(),
                Some("move the call into a `revise when ... { }` block or an action".into()),
            );
        }
        let Some((_, name, args)) = method_call(expr).filter(|_| is_llm_call(expr)) else {
            self.error(
                Code::UnknownLlm,
                expr.span,
                "only LLM effects have a value: expected `emit llm.<effect>(...)`".to_owned(),
                Some(
                    "game effects produce no value; write `emit game.effect(...)` on its own"
                        .into(),
                ),
            );
            self.infer_loose(expr);
            return None;
        };
        let Some(info) = self.scope.llms.get(&name.name).cloned() else {
            let help = did_you_mean(&name.name, self.scope.llms.keys().map(String::as_str))
                .or_else(|| {
                    Some(
                        "declare it: `llm name(params) -> Reply { system \"...\" user \"...\" }`"
                            .into(),
                    )
                });
            self.error(
                Code::UnknownLlm,
                name.span,
                format!("unknown LLM effect `{}`", name.name),
                help,
            );
            for arg in args {
                self.infer_loose(&arg.value);
            }
            return None;
        };
        if args.len() != info.params.len() {
            self.error(
                Code::LlmArguments,
                expr.span,
                format!(
                    "LLM effect `{}` takes {} argument(s), found {}",
                    name.name,
                    info.params.len(),
                    args.len()
                ),
                Some(format!("the parameters are ({})", param_list(&info.params))),
            );
            for arg in args {
                self.infer_loose(&arg.value);
            }
            return None;
        }
        let args = self.args(
            &info.params,
            args,
            expr.span,
            &format!("LLM effect `{}`", name.name),
        );
        let pattern = self.pattern(pattern, &info.result, true);
        Some(ir::StmtKind::LetLlm {
            pattern,
            llm: info.id,
            args,
        })
    }

    fn if_stmt(&mut self, if_stmt: &ast::IfStmt, kind: Block) -> ir::StmtKind {
        let depth = self.locals.len();
        let guards = self.guards(&if_stmt.guards);
        let then = self.block(&if_stmt.then, kind);
        self.locals.truncate(depth);
        let otherwise = if_stmt
            .otherwise
            .as_ref()
            .map(|b| self.block(b, kind))
            .unwrap_or_default();
        ir::StmtKind::If {
            guards,
            then,
            otherwise,
        }
    }

    /// The value of a patch or revision, checked against the place's type and operator.
    fn assign_value(&mut self, patch: &ast::Patch, place_ty: &Ty) -> Lowered {
        match patch.op {
            ast::AssignOp::Set => self.check(&patch.value, place_ty),
            op => {
                let value = self.infer(&patch.value, Some(place_ty));
                let target = self.shallow(place_ty);
                let ok = match (&target, op) {
                    (Ty::Int | Ty::Float | Ty::Error, _) => self.unify(&value.ty, &target),
                    (Ty::List(_) | Ty::Set(_), ast::AssignOp::Add) => {
                        self.unify(&value.ty, &target)
                    }
                    (Ty::Var(_), _) => self.unify(&value.ty, &target),
                    _ => false,
                };
                if !ok {
                    let (found, target) = (self.zonk(&value.ty), self.zonk(&target));
                    self.error(
                        Code::BadOperands,
                        patch.span,
                        format!(
                            "cannot apply `{}` to a `{target}` place with a `{found}` value",
                            assign_symbol(op)
                        ),
                        None,
                    );
                }
                value
            }
        }
    }

    /// Resolves the target of a `patch`: a state field of the current layer, then fields and
    /// elements.
    fn place(&mut self, target: &ast::Expr) -> Option<(ir::Place, Ty)> {
        match &target.kind {
            ast::ExprKind::Name(name) => {
                if let Some((_, id)) = self.locals.iter().rev().find(|(n, _)| *n == name.name) {
                    let _ = id;
                    self.error(
                        Code::PatchNotState,
                        target.span,
                        format!("`{}` is a local binding, not state", name.name),
                        Some("only state fields can be patched".into()),
                    );
                    return None;
                }
                let own = self.layer;
                let found = self.find_member(&name.name);
                match found {
                    Some((layer_id, entry)) => match &entry.def {
                        MemberDef::State(id, ty) if Some(layer_id) == own => Some((
                            ir::Place {
                                state: *id,
                                path: Vec::new(),
                            },
                            ty.clone(),
                        )),
                        MemberDef::State(..) => {
                            let owner = &self.scope.layers[layer_id.index()].name;
                            self.error(
                                Code::ForeignPatch,
                                target.span,
                                format!("`{}` is state of layer `{owner}`; a layer patches only its own state", name.name),
                                Some(format!("to change `{owner}`, have it declare a `tunable` and `revise` it")),
                            );
                            None
                        }
                        other => {
                            let what = member_kind_name(other);
                            self.error(
                                Code::PatchNotState,
                                target.span,
                                format!("`{}` is a {what}, not state", name.name),
                                Some(if matches!(other, MemberDef::Tunable(..)) {
                                    "a tunable changes only through `revise` from a layer that needs it".to_owned()
                                } else {
                                    "patch the state it is computed from".to_owned()
                                }),
                            );
                            None
                        }
                    },
                    None => {
                        if self.scope.values.contains_key(&name.name) {
                            self.error(
                                Code::PatchNotState,
                                target.span,
                                format!("`{}` is not state", name.name),
                                Some("only state fields can be patched".into()),
                            );
                        } else {
                            self.unknown_name(name);
                        }
                        None
                    }
                }
            }
            ast::ExprKind::Field(base, field) => {
                let (mut place, ty) = self.place(base)?;
                match self.shallow(&ty) {
                    Ty::Record(record) => {
                        match record.fields.iter().position(|(n, _)| *n == field.name) {
                            Some(index) => {
                                place.path.push(ir::PlaceStep::Field(index as u32));
                                Some((place, record.fields[index].1.clone()))
                            }
                            None => {
                                self.unknown_field(field, &record);
                                None
                            }
                        }
                    }
                    Ty::Error => None,
                    other => {
                        self.error(
                            Code::UnknownField,
                            field.span,
                            format!("`{other}` has no fields"),
                            None,
                        );
                        None
                    }
                }
            }
            ast::ExprKind::Index(base, index) => {
                let (mut place, ty) = self.place(base)?;
                let (key, elem) = match self.shallow(&ty) {
                    Ty::List(elem) => (Ty::Int, *elem),
                    Ty::Map(key, value) => (*key, *value),
                    Ty::Error => return None,
                    other => {
                        self.error(
                            Code::NotIndexable,
                            base.span,
                            format!("a `{other}` place cannot be indexed in a patch"),
                            Some("patch a list element or a map entry".into()),
                        );
                        return None;
                    }
                };
                let key = self.check(index, &key);
                place.path.push(ir::PlaceStep::Index(key));
                Some((place, elem))
            }
            // The parser accepts only names, fields and elements as places.
            _ => {
                self.push(Diagnostic::internal(
                    target.span,
                    "the parser produced a patch target that is not a place",
                ));
                None
            }
        }
    }

    /// Resolves the target of a `revise`: `layer.tunable` (or a bare tunable name).
    fn revise_target(
        &mut self,
        target: &ast::Expr,
    ) -> Option<(ir::TunableId, Ty, Option<ir::Range>)> {
        let (layer_name, name) = match &target.kind {
            ast::ExprKind::Field(base, name) => match &base.kind {
                ast::ExprKind::Name(layer) => (Some(layer), name),
                _ => (None, name),
            },
            ast::ExprKind::Name(name) => (None, name),
            _ => {
                self.error(
                    Code::ReviseNotTunable,
                    target.span,
                    "expected `layer.tunable`".to_owned(),
                    None,
                );
                return None;
            }
        };
        let layer_id = match layer_name {
            Some(layer) => match self.scope.layer(&layer.name) {
                Some(id) => id,
                None => {
                    let help = did_you_mean(
                        &layer.name,
                        self.scope.layers.iter().map(|l| l.name.as_str()),
                    );
                    self.error(
                        Code::UnknownLayer,
                        layer.span,
                        format!("unknown layer `{}`", layer.name),
                        help,
                    );
                    return None;
                }
            },
            None => match self.find_member(&name.name) {
                Some((id, _)) => id,
                None => {
                    self.unknown_name(name);
                    return None;
                }
            },
        };
        let info = &self.scope.layers[layer_id.index()];
        let Some(entry) = info.members.get(&name.name) else {
            let help = did_you_mean(&name.name, info.members.keys().map(String::as_str));
            self.error(
                Code::UnknownName,
                name.span,
                format!("layer `{}` has no member `{}`", info.name, name.name),
                help,
            );
            return None;
        };
        let MemberDef::Tunable(id, ty, range) = &entry.def else {
            let what = member_kind_name(&entry.def);
            self.error(
                Code::ReviseNotTunable,
                target.span,
                format!("`{}.{}` is a {what}, not a tunable", info.name, name.name),
                Some(format!(
                    "declare it in layer `{}` as `tunable {}: Type = default in lo..=hi`",
                    info.name, name.name
                )),
            );
            return None;
        };
        let (id, ty, range) = (*id, ty.clone(), range.clone());
        // A layer may revise its own tunables and those of the layers it needs: both are
        // parameters it is allowed to read, and the declared range still bounds every change
        // (docs/decisions/0006-revise-own-tunables.md).
        if Some(layer_id) != self.layer && !self.sees(layer_id) {
            let own = self
                .current_layer()
                .map(|l| l.name.clone())
                .unwrap_or_default();
            self.error(
                Code::ReviseNotNeeded,
                target.span,
                format!(
                    "layer `{own}` does not need layer `{}`, so it cannot revise it",
                    info.name
                ),
                Some(
                    "a layer revises only its own tunables and those of the layers it needs".into(),
                ),
            );
            return None;
        }
        Some((id, ty, range))
    }

    fn guards(&mut self, guards: &[ast::Guard]) -> Vec<ir::Guard> {
        guards
            .iter()
            .map(|guard| match guard {
                ast::Guard::Cond(cond) => ir::Guard::Cond(self.check(cond, &Ty::Bool)),
                ast::Guard::Let(pattern, value) => {
                    let value = self.infer(value, None);
                    let pattern = self.pattern(pattern, &value.ty.clone(), false);
                    ir::Guard::Let(pattern, value)
                }
            })
            .collect()
    }

    /// An action call in a decide rule or `sim.next`: the action and its positional arguments.
    fn action_call(
        &mut self,
        expr: &ast::Expr,
        code: Code,
    ) -> Option<(ir::ActionId, Vec<Lowered>)> {
        let ast::ExprKind::Call(callee, args) = &expr.kind else {
            self.error(
                code,
                expr.span,
                "expected an action call, such as `shoot(cell)`".to_owned(),
                None,
            );
            return None;
        };
        let ast::ExprKind::Name(name) = &callee.kind else {
            self.error(
                code,
                expr.span,
                "expected an action call, such as `shoot(cell)`".to_owned(),
                None,
            );
            return None;
        };
        let Some((layer_id, entry)) = self.find_member(&name.name) else {
            self.unknown_name(name);
            return None;
        };
        let MemberDef::Action(id, params) = &entry.def else {
            self.error(
                code,
                callee.span,
                format!(
                    "`{}` is a {}, not an action",
                    name.name,
                    member_kind_name(&entry.def)
                ),
                None,
            );
            return None;
        };
        let (id, params, key) = (*id, params.clone(), entry.key.clone());
        if !self.sees(layer_id) {
            self.higher_layer(name, layer_id);
            return None;
        }
        self.uses.insert(key);
        let args = self.args(&params, args, expr.span, &format!("action `{}`", name.name));
        Some((id, args))
    }
}

fn assign_symbol(op: ast::AssignOp) -> &'static str {
    match op {
        ast::AssignOp::Set => "=",
        ast::AssignOp::Add => "+=",
        ast::AssignOp::Sub => "-=",
        ast::AssignOp::Mul => "*=",
    }
}

fn range_text(range: &ir::Range) -> String {
    let show = |l: &ir::Literal| match l {
        ir::Literal::Int(v) => v.to_string(),
        ir::Literal::Float(v) => format!("{v:?}"),
        ir::Literal::Bool(v) => v.to_string(),
        ir::Literal::String(v) => format!("{v:?}"),
    };
    format!(
        "{}..{}{}",
        show(&range.lo),
        if range.inclusive { "=" } else { "" },
        show(&range.hi)
    )
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

/// Names.
impl<'a> Checker<'a> {
    /// Finds a layer member by name: the current layer first, then the layers it needs (nearest
    /// first), then any other layer (so that a read of a higher layer gets its own diagnostic).
    fn find_member(&self, name: &str) -> Option<(LayerId, &'a env::MemberEntry)> {
        let scope: &'a Scope = self.scope;
        scope.find_member(self.layer, name)
    }

    fn local(&self, name: &str) -> Option<LocalId> {
        self.locals
            .iter()
            .rev()
            .find(|(n, _)| n == name)
            .map(|(_, id)| *id)
    }

    /// Every name a bare identifier could refer to here, for suggestions.
    fn names_in_scope(&self) -> Vec<&str> {
        let mut names: Vec<&str> = self.locals.iter().map(|(n, _)| n.as_str()).collect();
        if let Some(own) = self.layer {
            let mut visible = vec![own];
            visible.extend(self.scope.layers[own.index()].below.iter().copied());
            for id in visible {
                names.extend(
                    self.scope.layers[id.index()]
                        .members
                        .keys()
                        .map(String::as_str),
                );
            }
        }
        names.extend(self.scope.values.keys().map(String::as_str));
        names
    }

    fn unknown_name(&mut self, name: &ast::Ident) {
        let help = did_you_mean(&name.name, self.names_in_scope());
        self.push(
            Diagnostic::new(
                Code::UnknownName,
                name.span,
                format!("unknown name `{}`", name.name),
            )
            .primary("not found in this scope")
            .maybe_help(help),
        );
    }

    fn unknown_field(&mut self, field: &ast::Ident, record: &RecordTy) {
        let ty = Ty::Record(Arc::new(record.clone()));
        let help = did_you_mean(&field.name, record.fields.iter().map(|(n, _)| n.as_str()))
            .unwrap_or_else(|| {
                format!(
                    "the fields of `{ty}` are: {}",
                    record
                        .fields
                        .iter()
                        .map(|(n, _)| n.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                )
            });
        self.push(
            Diagnostic::new(
                Code::UnknownField,
                field.span,
                format!("`{ty}` has no field `{}`", field.name),
            )
            .primary("unknown field")
            .help(help),
        );
    }

    fn higher_layer(&mut self, name: &ast::Ident, owner: LayerId) {
        let owner = &self.scope.layers[owner.index()];
        let message = match self.current_layer() {
            Some(own) => format!(
                "layer `{}` reads `{}` of layer `{}`, which it does not need",
                own.name, name.name, owner.name
            ),
            None => format!(
                "`{}` is a member of layer `{}`; top-level items cannot read layer members",
                name.name, owner.name
            ),
        };
        let help = match self.current_layer() {
            Some(own) => format!(
                "a layer reads only its own members and those of the layers it needs; move `{}` down, or make `{}` need `{}` if it really is below",
                name.name, own.name, owner.name
            ),
            None => "move the item into a layer, or pass the value as a parameter".to_owned(),
        };
        self.push(
            Diagnostic::new(Code::HigherLayerRead, name.span, message)
                .primary("read here")
                .help(help),
        );
    }

    fn not_constant(&mut self, span: Span, what: &str) {
        let help = match self.ctx {
            Ctx::Const => {
                "a constant reads only literals, other constants and pure builtins; use `config` for run parameters"
            }
            Ctx::Config => "a config default reads only literals and constants",
            _ => "a tunable default reads only literals, constants and config",
        };
        self.push(
            Diagnostic::new(
                Code::NotConstant,
                span,
                format!(
                    "{what} cannot be read here: the value must be known before the episode starts"
                ),
            )
            .help(help),
        );
    }

    fn in_constant_context(&self) -> bool {
        matches!(self.ctx, Ctx::Const | Ctx::Config | Ctx::Tunable)
    }

    /// A bare name in expression position.
    fn name(&mut self, name: &ast::Ident, span: Span, hint: Option<&Ty>) -> Lowered {
        if let Some(id) = self.local(&name.name) {
            let ty = self.frame[id.index()].ty.clone();
            return lowered(ir::ExprKind::Local(id), ty, span);
        }
        if name.name == "None" {
            let inner = self.fresh(false);
            return lowered(ir::ExprKind::None, Ty::Option(Box::new(inner)), span);
        }
        if name.name == "game" || name.name == "sim" {
            self.error(
                Code::UnknownName,
                span,
                format!("`{}` is not a value", name.name),
                Some(format!("use one of its members: `{}.<name>`", name.name)),
            );
            return poisoned(span);
        }
        if let Some((layer_id, entry)) = self.find_member(&name.name) {
            return self.member_read(name, span, layer_id, entry, hint);
        }
        if let Some((def, key, _)) = self.scope.values.get(&name.name) {
            let key = key.clone();
            match def {
                ValueDef::Const { id, ty } => {
                    self.uses.insert(key.clone());
                    self.node.refs.push(key);
                    return lowered(ir::ExprKind::Const(*id), ty.clone(), span);
                }
                ValueDef::Config { id, ty } => {
                    if matches!(self.ctx, Ctx::Const | Ctx::Config) {
                        self.not_constant(span, &format!("config entry `{}`", name.name));
                    }
                    self.uses.insert(key);
                    return lowered(ir::ExprKind::Config(*id), ty.clone(), span);
                }
                ValueDef::Fn(info) => {
                    let info = info.clone();
                    return self.fn_ref(name, span, &info, key, hint);
                }
            }
        }
        if self.scope.types.contains_key(&name.name) {
            self.error(
                Code::UnknownName,
                span,
                format!("`{}` is a type, not a value", name.name),
                Some(format!(
                    "use one of its variants or functions: `{}.<name>`",
                    name.name
                )),
            );
            return poisoned(span);
        }
        self.unknown_name(name);
        poisoned(span)
    }

    /// A function used as a value: allowed only where a function type is expected.
    fn fn_ref(
        &mut self,
        name: &ast::Ident,
        span: Span,
        info: &FnInfo,
        key: DefKey,
        hint: Option<&Ty>,
    ) -> Lowered {
        let ty = Ty::Fn(
            info.params.iter().map(|(_, t)| t.clone()).collect(),
            Box::new(info.ret.clone()),
        );
        match hint.map(|h| self.shallow(h)) {
            Some(Ty::Fn(..)) => {
                self.uses.insert(key.clone());
                self.node.refs.push(key);
                lowered(ir::ExprKind::FnRef(info.id), ty, span)
            }
            _ => {
                self.error(
                    Code::TypeMismatch,
                    span,
                    format!("function `{}` is used as a value", name.name),
                    Some(format!("call it: `{}(...)`", name.name)),
                );
                poisoned(span)
            }
        }
    }

    fn member_read(
        &mut self,
        name: &ast::Ident,
        span: Span,
        layer_id: LayerId,
        entry: &env::MemberEntry,
        hint: Option<&Ty>,
    ) -> Lowered {
        if self.in_constant_context() {
            self.not_constant(
                span,
                &format!("{} `{}`", member_kind_name(&entry.def), name.name),
            );
            return poisoned(span);
        }
        if !self.sees(layer_id) {
            self.higher_layer(name, layer_id);
            return poisoned(span);
        }
        let key = entry.key.clone();
        match &entry.def {
            MemberDef::State(id, ty) => {
                self.uses.insert(key);
                lowered(
                    ir::ExprKind::Member(ir::MemberRef::State(*id)),
                    ty.clone(),
                    span,
                )
            }
            MemberDef::Tunable(id, ty, _) => {
                self.uses.insert(key);
                lowered(
                    ir::ExprKind::Member(ir::MemberRef::Tunable(*id)),
                    ty.clone(),
                    span,
                )
            }
            MemberDef::Computed(id, ty) => {
                self.uses.insert(key.clone());
                self.node.refs.push(key);
                lowered(
                    ir::ExprKind::Member(ir::MemberRef::Computed(*id)),
                    ty.clone(),
                    span,
                )
            }
            MemberDef::Fn(info) => {
                let info = info.clone();
                self.fn_ref(name, span, &info, key, hint)
            }
            MemberDef::Action(..) => {
                self.error(
                    Code::NotCallable,
                    span,
                    format!("`{}` is an action; actions are chosen by decide rules or previewed with `sim.next`", name.name),
                    Some(format!("to preview it: `sim.next({}(...))`", name.name)),
                );
                poisoned(span)
            }
        }
    }
}

/// Expressions.
impl Checker<'_> {
    /// Checks an expression against an expected type.
    fn check(&mut self, expr: &ast::Expr, expected: &Ty) -> Lowered {
        let lowered = self.infer(expr, Some(expected));
        self.expect_ty(expr.span, &lowered.ty, expected);
        lowered
    }

    /// Infers an expression's type; `hint` is the expected type, when known, which guides list
    /// literals, closures and `None`.
    fn infer(&mut self, expr: &ast::Expr, hint: Option<&Ty>) -> Lowered {
        let span = expr.span;
        use ast::ExprKind as E;
        match &expr.kind {
            E::Int(v) => lowered(ir::ExprKind::Lit(ir::Literal::Int(*v)), Ty::Int, span),
            E::Float(v) => lowered(ir::ExprKind::Lit(ir::Literal::Float(*v)), Ty::Float, span),
            E::Bool(v) => lowered(ir::ExprKind::Lit(ir::Literal::Bool(*v)), Ty::Bool, span),
            E::String(v) => lowered(
                ir::ExprKind::Lit(ir::Literal::String(v.clone())),
                Ty::String,
                span,
            ),
            E::Name(name) => self.name(name, span, hint),
            E::List(items) => self.list(items, span, hint),
            E::Record { name, fields } => self.record(name, fields, span),
            E::Field(base, field) => self.field(base, field, span, hint),
            E::Call(callee, args) => match &callee.kind {
                E::Field(base, name) => self.method(base, name, args, span, hint),
                E::Name(name) => self.call(name, args, span, hint),
                _ => {
                    self.infer(callee, None);
                    self.error(
                        Code::NotCallable,
                        callee.span,
                        "this expression cannot be called".to_owned(),
                        None,
                    );
                    poisoned(span)
                }
            },
            E::MethodCall(base, name, args) => self.method(base, name, args, span, hint),
            E::Index(base, index) => self.index(base, index, span),
            E::Unary(op, operand) => self.unary(*op, operand, span, hint),
            E::Binary(op, lhs, rhs) => self.binary(*op, lhs, rhs, span, hint),
            E::If {
                guards,
                then,
                otherwise,
            } => {
                let depth = self.locals.len();
                let guards = self.guards(guards);
                let then = self.infer(then, hint);
                self.locals.truncate(depth);
                let ty = then.ty.clone();
                let otherwise = self.check(otherwise, &ty);
                lowered(
                    ir::ExprKind::If {
                        guards,
                        then: Box::new(then),
                        otherwise: Box::new(otherwise),
                    },
                    ty,
                    span,
                )
            }
            E::Match(scrutinee, arms) => self.match_expr(scrutinee, arms, span, hint),
            E::Block(lets, result) => {
                let depth = self.locals.len();
                let mut bound = Vec::new();
                for (pattern, value) in lets {
                    let value = self.infer(value, None);
                    let pattern = self.pattern(pattern, &value.ty.clone(), true);
                    bound.push((pattern, value));
                }
                let mut body = self.infer(result, hint);
                self.locals.truncate(depth);
                for (pattern, value) in bound.into_iter().rev() {
                    let ty = body.ty.clone();
                    body = lowered(
                        ir::ExprKind::Let {
                            pattern,
                            value: Box::new(value),
                            body: Box::new(body),
                        },
                        ty,
                        span,
                    );
                }
                body
            }
            E::Closure(..) => {
                self.error(
                    Code::ClosureEscapes,
                    span,
                    "a closure can only be passed directly to a builtin such as `filter` or `max_by`".to_owned(),
                    Some("pass it to the builtin that uses it, or write a `fn`".into()),
                );
                poisoned(span)
            }
            E::Error => poisoned(span),
        }
    }

    fn list(&mut self, items: &[ast::Expr], span: Span, hint: Option<&Ty>) -> Lowered {
        let hint = hint.map(|h| self.shallow(h));
        // `[]` where a map is expected is the empty map; maps have no literal with entries.
        if let (true, Some(Ty::Map(..))) = (items.is_empty(), &hint) {
            let ty = hint.clone().unwrap_or(Ty::Error);
            return lowered(ir::ExprKind::EmptyMap, ty, span);
        }
        let (elem, is_set) = match &hint {
            Some(Ty::Set(t)) => ((**t).clone(), true),
            Some(Ty::List(t)) => ((**t).clone(), false),
            _ => (self.fresh(false), false),
        };
        let lowered_items: Vec<Lowered> =
            items.iter().map(|item| self.check(item, &elem)).collect();
        if items.is_empty() && !matches!(hint, Some(Ty::Set(_) | Ty::List(_) | Ty::Error)) {
            self.pending.push((elem.clone(), span));
        }
        if is_set {
            lowered(
                ir::ExprKind::Set(lowered_items),
                Ty::Set(Box::new(elem)),
                span,
            )
        } else {
            lowered(
                ir::ExprKind::List(lowered_items),
                Ty::List(Box::new(elem)),
                span,
            )
        }
    }

    fn record(
        &mut self,
        name: &ast::Path,
        fields: &[(ast::Ident, ast::Expr)],
        span: Span,
    ) -> Lowered {
        let text = env::path_text(name);
        let record = match self.scope.types.get(&text) {
            Some(TypeDef::Alias(Ty::Record(record))) => record.clone(),
            Some(_) => {
                self.error(
                    Code::TypeMismatch,
                    name.span,
                    format!("`{text}` is not a record type"),
                    None,
                );
                return poisoned(span);
            }
            None => {
                let help = did_you_mean(&text, self.scope.types.keys().map(String::as_str));
                self.error(
                    Code::UnknownType,
                    name.span,
                    format!("unknown type `{text}`"),
                    help,
                );
                for (_, value) in fields {
                    self.infer(value, None);
                }
                return poisoned(span);
            }
        };
        let mut values: Vec<Option<Lowered>> = vec![None; record.fields.len()];
        for (field, value) in fields {
            match record.fields.iter().position(|(n, _)| *n == field.name) {
                Some(index) => {
                    let lowered_value = self.check(value, &record.fields[index].1.clone());
                    if values[index].is_some() {
                        self.error(
                            Code::Duplicate,
                            field.span,
                            format!("field `{}` is given twice", field.name),
                            None,
                        );
                    }
                    values[index] = Some(lowered_value);
                }
                None => {
                    self.unknown_field(field, &record);
                    self.infer(value, None);
                }
            }
        }
        let missing: Vec<&str> = record
            .fields
            .iter()
            .zip(&values)
            .filter(|(_, v)| v.is_none())
            .map(|((n, _), _)| n.as_str())
            .collect();
        if !missing.is_empty() {
            self.error(
                Code::MissingField,
                span,
                format!(
                    "record `{text}` is missing field(s): {}",
                    missing.join(", ")
                ),
                Some(format!(
                    "add {}",
                    missing
                        .iter()
                        .map(|m| format!("`{m}: ...`"))
                        .collect::<Vec<_>>()
                        .join(", ")
                )),
            );
        }
        let values = values
            .into_iter()
            .map(|v| v.unwrap_or_else(|| poisoned(span)))
            .collect();
        lowered(ir::ExprKind::Record(values), Ty::Record(record), span)
    }

    /// True when `base` is a bare name that means a namespace (a type or a layer) rather than a
    /// value.
    fn namespace<'e>(&self, base: &'e ast::Expr) -> Option<&'e ast::Ident> {
        let ast::ExprKind::Name(name) = &base.kind else {
            return None;
        };
        if self.local(&name.name).is_some()
            || self.find_member(&name.name).is_some()
            || self.scope.values.contains_key(&name.name)
        {
            return None;
        }
        Some(name)
    }

    fn field(
        &mut self,
        base: &ast::Expr,
        field: &ast::Ident,
        span: Span,
        hint: Option<&Ty>,
    ) -> Lowered {
        if let ast::ExprKind::Name(n) = &base.kind
            && n.name == "game"
        {
            return self.game_query(field, None, span);
        }
        if let Some(ns) = self.namespace(base) {
            if let Some(TypeDef::Enum(index)) = self.scope.types.get(&ns.name) {
                return self.variant(*index, field, &[], span, false);
            }
            if let Some(layer_id) = self.scope.layer(&ns.name) {
                let Some(entry) = self.scope.layers[layer_id.index()].members.get(&field.name)
                else {
                    let help = did_you_mean(
                        &field.name,
                        self.scope.layers[layer_id.index()]
                            .members
                            .keys()
                            .map(String::as_str),
                    );
                    self.error(
                        Code::UnknownName,
                        field.span,
                        format!("layer `{}` has no member `{}`", ns.name, field.name),
                        help,
                    );
                    return poisoned(span);
                };
                let scope: &Scope = self.scope;
                let entry: &env::MemberEntry = entry;
                let entry = scope.layers[layer_id.index()]
                    .members
                    .get(&entry.key.name)
                    .unwrap_or(entry);
                return self.member_read(field, span, layer_id, entry, hint);
            }
        }
        let base = self.infer(base, None);
        match self.shallow(&base.ty) {
            Ty::Record(record) => match record.fields.iter().position(|(n, _)| *n == field.name) {
                Some(index) => {
                    let ty = record.fields[index].1.clone();
                    lowered(ir::ExprKind::Field(Box::new(base), index as u32), ty, span)
                }
                None => {
                    self.unknown_field(field, &record);
                    poisoned(span)
                }
            },
            Ty::Snapshot => {
                let Some((layer_id, entry)) = self.find_member(&field.name) else {
                    self.unknown_name(field);
                    return poisoned(span);
                };
                if !self.sees(layer_id) {
                    self.higher_layer(field, layer_id);
                    return poisoned(span);
                }
                let (member, ty) = match &entry.def {
                    MemberDef::State(id, ty) => (ir::MemberRef::State(*id), ty.clone()),
                    MemberDef::Computed(id, ty) => (ir::MemberRef::Computed(*id), ty.clone()),
                    MemberDef::Tunable(id, ty, _) => (ir::MemberRef::Tunable(*id), ty.clone()),
                    other => {
                        self.error(
                            Code::UnknownField,
                            field.span,
                            format!("a snapshot holds state, computed values and tunables; `{}` is a {}", field.name, member_kind_name(other)),
                            None,
                        );
                        return poisoned(span);
                    }
                };
                self.uses.insert(entry.key.clone());
                self.node.snapshot_reads.push(entry.key.clone());
                lowered(
                    ir::ExprKind::SnapshotRead {
                        snapshot: Box::new(base),
                        member,
                    },
                    ty,
                    span,
                )
            }
            Ty::Error => poisoned(span),
            Ty::Var(_) => {
                self.error(
                    Code::CannotInfer,
                    base.span.into_span(),
                    "the type of this value must be known before its fields are read".to_owned(),
                    Some("annotate the closure parameter, for example `|s: Snapshot| ...`".into()),
                );
                poisoned(span)
            }
            other => {
                self.error(
                    Code::UnknownField,
                    field.span,
                    format!("`{other}` has no field `{}`", field.name),
                    None,
                );
                poisoned(span)
            }
        }
    }

    /// `game.name` (a property) or `game.name(args)` (a query function).
    fn game_query(&mut self, name: &ast::Ident, args: Option<&[ast::Arg]>, span: Span) -> Lowered {
        if self.in_constant_context() {
            self.not_constant(span, &format!("game query `game.{}`", name.name));
            return poisoned(span);
        }
        let Some(game) = &self.scope.game else {
            self.error(
                Code::NoGame,
                span,
                format!("`game.{}` needs a game", name.name),
                Some("add `use game <name>` at the top of the file".into()),
            );
            return poisoned(span);
        };
        let Some(query) = game.queries.iter().find(|q| q.name == name.name) else {
            let help = if game.effects.iter().any(|e| e.name == name.name) {
                Some(format!(
                    "`{}` is an effect: send it from an action with `emit game.{}(...)`",
                    name.name, name.name
                ))
            } else if game.observations.iter().any(|o| o.name == name.name) {
                Some(format!(
                    "`{}` is an observation: handle it with `on game.{}(...) {{ ... }}`",
                    name.name, name.name
                ))
            } else {
                did_you_mean(&name.name, game.queries.iter().map(|q| q.name.as_str()))
            };
            self.push(
                Diagnostic::new(
                    Code::UnknownGameMember,
                    name.span,
                    format!("game `{}` has no query `{}`", game.name, name.name),
                )
                .maybe_help(help),
            );
            if let Some(args) = args {
                for arg in args {
                    self.infer(&arg.value, None);
                }
            }
            return poisoned(span);
        };
        let query = query.clone();
        match (&query.sig, args) {
            (None, None) => lowered(
                ir::ExprKind::GameProperty(query.name.clone()),
                self.scope.normalize(&query.ty),
                span,
            ),
            (Some(sig), Some(args)) => {
                let params: Vec<(String, Ty)> = sig
                    .params
                    .iter()
                    .map(|p| (p.name.clone(), self.scope.normalize(&p.ty)))
                    .collect();
                let args = self.args(&params, args, span, &format!("query `game.{}`", name.name));
                lowered(
                    ir::ExprKind::GameCall {
                        name: query.name.clone(),
                        args,
                    },
                    self.scope.normalize(&sig.ret),
                    span,
                )
            }
            (Some(_), None) => {
                self.error(
                    Code::TypeMismatch,
                    span,
                    format!("`game.{}` is a query function", name.name),
                    Some(format!("call it: `game.{}(...)`", name.name)),
                );
                poisoned(span)
            }
            (None, Some(_)) => {
                self.error(
                    Code::NotCallable,
                    span,
                    format!("`game.{}` is a property, not a function", name.name),
                    Some(format!("remove the parentheses: `game.{}`", name.name)),
                );
                poisoned(span)
            }
        }
    }

    /// An enum variant value, `Enum.Variant` or `Enum.Variant(args)`.
    fn variant(
        &mut self,
        index: usize,
        name: &ast::Ident,
        args: &[ast::Arg],
        span: Span,
        called: bool,
    ) -> Lowered {
        let info = self.scope.enums[index].clone();
        let ty = Ty::Enum(info.name.as_str().into());
        let Some(position) = info.variants.iter().position(|(v, _)| *v == name.name) else {
            let help = did_you_mean(&name.name, info.variants.iter().map(|(v, _)| v.as_str()));
            self.error(
                Code::UnknownVariant,
                name.span,
                format!("enum `{}` has no variant `{}`", info.name, name.name),
                help,
            );
            return poisoned(span);
        };
        let payload_types = &info.variants[position].1;
        if !called && !payload_types.is_empty() {
            self.error(
                Code::Arity,
                span,
                format!(
                    "variant `{}.{}` takes {} value(s)",
                    info.name,
                    name.name,
                    payload_types.len()
                ),
                Some(format!("write `{}.{}(...)`", info.name, name.name)),
            );
            return poisoned(span);
        }
        let params: Vec<(String, Ty)> = payload_types
            .iter()
            .enumerate()
            .map(|(i, t)| (format!("{i}"), t.clone()))
            .collect();
        let payload = self.args(
            &params,
            args,
            span,
            &format!("variant `{}.{}`", info.name, name.name),
        );
        lowered(
            ir::ExprKind::Variant {
                enum_id: info.id,
                index: position as u32,
                payload,
            },
            ty,
            span,
        )
    }
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

/// Calls.
impl Checker<'_> {
    fn visible_builtin(&self, builtin: &Builtin) -> bool {
        match &builtin.module {
            None => true,
            Some(module) => match self.scope.std_imports.get(module) {
                Some(None) => true,
                Some(Some(names)) => {
                    names.contains(&builtin.short_name)
                        || matches!(&builtin.kind, BuiltinKind::Method(owner) | BuiltinKind::Static(owner) if names.contains(owner))
                }
                None => false,
            },
        }
    }

    /// Builtins of the library and the game, in a stable order.
    fn builtins(&self) -> impl Iterator<Item = &Builtin> {
        let game = self.scope.game.iter().flat_map(|g| g.builtins.iter());
        self.sigs
            .builtins
            .iter()
            .filter(|b| self.visible_builtin(b))
            .chain(game)
    }

    fn method(
        &mut self,
        base: &ast::Expr,
        name: &ast::Ident,
        args: &[ast::Arg],
        span: Span,
        hint: Option<&Ty>,
    ) -> Lowered {
        if let ast::ExprKind::Name(n) = &base.kind {
            if n.name == "game" {
                return self.game_query(name, Some(args), span);
            }
            if n.name == "sim" {
                return self.sim(name, args, span);
            }
        }
        if let Some(ns) = self.namespace(base) {
            if let Some(TypeDef::Enum(index)) = self.scope.types.get(&ns.name) {
                return self.variant(*index, name, args, span, true);
            }
            if self.scope.types.contains_key(&ns.name) {
                let found = self
                    .builtins()
                    .find(|b| {
                        b.short_name == name.name
                            && matches!(&b.kind, BuiltinKind::Static(owner) if *owner == ns.name)
                    })
                    .cloned();
                return match found {
                    Some(builtin) => self.call_builtin(&builtin, None, args, span, hint),
                    None => {
                        let candidates: Vec<String> = self
                            .builtins()
                            .filter(|b| matches!(&b.kind, BuiltinKind::Static(owner) if *owner == ns.name))
                            .map(|b| b.short_name.clone())
                            .collect();
                        let help = did_you_mean(&name.name, candidates.iter().map(String::as_str));
                        self.error(
                            Code::UnknownMethod,
                            name.span,
                            format!("type `{}` has no function `{}`", ns.name, name.name),
                            help,
                        );
                        poisoned(span)
                    }
                };
            }
        }
        let receiver = self.infer(base, None);
        let receiver_ty = self.shallow(&receiver.ty);
        if matches!(receiver_ty, Ty::Error) {
            for arg in args {
                self.infer_loose(&arg.value);
            }
            return poisoned(span);
        }
        if matches!(receiver_ty, Ty::Var(_)) {
            self.error(
                Code::CannotInfer,
                base.span,
                format!(
                    "the type of this value must be known to call `.{}()` on it",
                    name.name
                ),
                Some("annotate the closure parameter or give the value a declared type".into()),
            );
            return poisoned(span);
        }
        let Some(owner) = type_constructor(&receiver_ty) else {
            self.error(
                Code::UnknownMethod,
                name.span,
                format!("`{receiver_ty}` has no methods"),
                None,
            );
            return poisoned(span);
        };
        let found = self
            .builtins()
            .find(|b| {
                b.short_name == name.name
                    && matches!(&b.kind, BuiltinKind::Method(o) if *o == owner)
            })
            .cloned();
        match found {
            Some(builtin) => self.call_builtin(&builtin, Some(receiver), args, span, hint),
            None => {
                let candidates: Vec<String> = self
                    .builtins()
                    .filter(|b| matches!(&b.kind, BuiltinKind::Method(o) if *o == owner))
                    .map(|b| b.short_name.clone())
                    .collect();
                let help = did_you_mean(&name.name, candidates.iter().map(String::as_str));
                self.push(
                    Diagnostic::new(
                        Code::UnknownMethod,
                        name.span,
                        format!(
                            "`{}` has no method `{}`",
                            self.zonk(&receiver_ty),
                            name.name
                        ),
                    )
                    .maybe_help(help),
                );
                for arg in args {
                    self.infer_loose(&arg.value);
                }
                poisoned(span)
            }
        }
    }

    /// Checks an argument whose expected type is unknown because the call failed, so that
    /// errors inside it are still reported. Closures are accepted silently here.
    fn infer_loose(&mut self, expr: &ast::Expr) {
        if !matches!(expr.kind, ast::ExprKind::Closure(..)) {
            self.infer(expr, None);
        }
    }

    fn sim(&mut self, name: &ast::Ident, args: &[ast::Arg], span: Span) -> Lowered {
        if name.name != "next" {
            self.error(
                Code::UnknownMethod,
                name.span,
                format!("`sim` has no function `{}`", name.name),
                Some("the only one is `sim.next(action(args))`".into()),
            );
            return poisoned(span);
        }
        if self.layer.is_none() || self.in_constant_context() {
            self.error(
                Code::SimNextArgument,
                span,
                "`sim.next` previews an action, so it is only allowed inside layers".to_owned(),
                None,
            );
            return poisoned(span);
        }
        let [arg] = args else {
            self.error(
                Code::Arity,
                span,
                format!(
                    "`sim.next` takes one action call, found {} argument(s)",
                    args.len()
                ),
                None,
            );
            return poisoned(span);
        };
        let Some((action, action_args)) = self.action_call(&arg.value, Code::SimNextArgument)
        else {
            return poisoned(span);
        };
        if let ast::ExprKind::Call(callee, _) = &arg.value.kind
            && let ast::ExprKind::Name(action_name) = &callee.kind
            && let Some((_, entry)) = self.find_member(&action_name.name)
        {
            self.node.sims.push((entry.key.clone(), span));
        }
        lowered(
            ir::ExprKind::SimNext {
                action,
                args: action_args,
            },
            Ty::Preview,
            span,
        )
    }

    fn call(
        &mut self,
        name: &ast::Ident,
        args: &[ast::Arg],
        span: Span,
        hint: Option<&Ty>,
    ) -> Lowered {
        if self.local(&name.name).is_some() {
            self.error(
                Code::NotCallable,
                name.span,
                format!("`{}` is a local value, not a function", name.name),
                None,
            );
            return poisoned(span);
        }
        if name.name == "Some" {
            let inner_hint = match hint.map(|h| self.shallow(h)) {
                Some(Ty::Option(inner)) => *inner,
                _ => self.fresh(false),
            };
            let values = self.args(
                &[("value".to_owned(), inner_hint.clone())],
                args,
                span,
                "`Some`",
            );
            let value = values.into_iter().next().unwrap_or_else(|| poisoned(span));
            return lowered(
                ir::ExprKind::Some(Box::new(value)),
                Ty::Option(Box::new(inner_hint)),
                span,
            );
        }
        if let Some((layer_id, entry)) = self.find_member(&name.name) {
            match &entry.def {
                MemberDef::Fn(info) => {
                    if self.in_constant_context() {
                        self.not_constant(span, &format!("function `{}`", name.name));
                        return poisoned(span);
                    }
                    if !self.sees(layer_id) {
                        self.higher_layer(name, layer_id);
                        return poisoned(span);
                    }
                    let (info, key) = (info.clone(), entry.key.clone());
                    return self.call_fn(name, &info, key, args, span);
                }
                MemberDef::Action(..) => {
                    self.error(
                        Code::NotCallable,
                        name.span,
                        format!("`{}` is an action; actions are chosen by decide rules or previewed with `sim.next`", name.name),
                        Some(format!("to preview it: `sim.next({}(...))`", name.name)),
                    );
                    return poisoned(span);
                }
                other => {
                    self.error(
                        Code::NotCallable,
                        name.span,
                        format!(
                            "`{}` is a {}, not a function",
                            name.name,
                            member_kind_name(other)
                        ),
                        None,
                    );
                    return poisoned(span);
                }
            }
        }
        if let Some((def, key, _)) = self.scope.values.get(&name.name) {
            return match def {
                ValueDef::Fn(info) => {
                    let (info, key) = (info.clone(), key.clone());
                    self.call_fn(name, &info, key, args, span)
                }
                _ => {
                    self.error(
                        Code::NotCallable,
                        name.span,
                        format!("`{}` is a value, not a function", name.name),
                        None,
                    );
                    poisoned(span)
                }
            };
        }
        let found = self
            .builtins()
            .find(|b| b.short_name == name.name && b.kind == BuiltinKind::Function)
            .cloned();
        if let Some(builtin) = found {
            return self.call_builtin(&builtin, None, args, span, hint);
        }
        let mut candidates = self
            .names_in_scope()
            .into_iter()
            .map(str::to_owned)
            .collect::<Vec<_>>();
        candidates.extend(
            self.builtins()
                .filter(|b| b.kind == BuiltinKind::Function)
                .map(|b| b.short_name.clone()),
        );
        let help = did_you_mean(&name.name, candidates.iter().map(String::as_str));
        self.push(
            Diagnostic::new(
                Code::UnknownName,
                name.span,
                format!("unknown function `{}`", name.name),
            )
            .primary("not found in this scope")
            .maybe_help(help),
        );
        for arg in args {
            self.infer_loose(&arg.value);
        }
        poisoned(span)
    }

    fn call_fn(
        &mut self,
        name: &ast::Ident,
        info: &FnInfo,
        key: DefKey,
        args: &[ast::Arg],
        span: Span,
    ) -> Lowered {
        self.uses.insert(key.clone());
        self.node.refs.push(key);
        let args = self.args(
            &info.params,
            args,
            span,
            &format!("function `{}`", name.name),
        );
        lowered(
            ir::ExprKind::CallFn {
                func: info.id,
                args,
            },
            info.ret.clone(),
            span,
        )
    }

    /// Instantiates a builtin's generics and checks a call of it.
    fn call_builtin(
        &mut self,
        builtin: &Builtin,
        receiver: Option<Lowered>,
        args: &[ast::Arg],
        span: Span,
        hint: Option<&Ty>,
    ) -> Lowered {
        let sig: FnSig = builtin.sig.clone();
        let mut map = BTreeMap::new();
        for generic in &sig.generics {
            let var = self.fresh(generic.numeric);
            map.insert(generic.name.clone(), var);
        }
        let subst = |ty: &Ty| self.scope.normalize(&substitute(ty, &map));
        let mut params: Vec<(String, Ty)> = sig
            .params
            .iter()
            .map(|p| (p.name.clone(), subst(&p.ty)))
            .collect();
        let ret = subst(&sig.ret);
        if let Some(hint) = hint {
            // The expected result guides the instantiation (for example of an empty collection),
            // but a mismatch is reported by the caller, against the whole call.
            let snapshot = self.vars.clone();
            if !self.unify(&ret, hint) {
                self.vars = snapshot;
            }
        }
        let mut lowered_args = Vec::new();
        if let Some(receiver) = receiver {
            let (_, self_ty) = params.remove(0);
            if !self.unify(&receiver.ty, &self_ty) {
                let found = self.zonk(&receiver.ty);
                self.error(
                    Code::TypeMismatch,
                    receiver.span.into_span(),
                    format!(
                        "`{}` needs a receiver of type `{}`, found `{found}`",
                        builtin.short_name,
                        self.zonk(&self_ty)
                    ),
                    None,
                );
            }
            lowered_args.push(receiver);
        }
        lowered_args.extend(self.args(&params, args, span, &format!("`{}`", builtin.short_name)));
        lowered(
            ir::ExprKind::CallBuiltin {
                name: builtin.name.clone(),
                args: lowered_args,
            },
            ret,
            span,
        )
    }

    /// Matches arguments to parameters (positional, then named) and checks each.
    fn args(
        &mut self,
        params: &[(String, Ty)],
        args: &[ast::Arg],
        span: Span,
        what: &str,
    ) -> Vec<Lowered> {
        let mut slots: Vec<Option<Lowered>> = vec![None; params.len()];
        let mut next = 0;
        for arg in args {
            let index = match &arg.name {
                None => {
                    let index = next;
                    next += 1;
                    if index >= params.len() {
                        self.error(
                            Code::Arity,
                            arg.span,
                            format!(
                                "{what} takes {} argument(s), but more are given",
                                params.len()
                            ),
                            Some(format!("the parameters are ({})", param_list(params))),
                        );
                        self.infer_loose(&arg.value);
                        continue;
                    }
                    index
                }
                Some(name) => match params.iter().position(|(p, _)| *p == name.name) {
                    Some(index) if slots[index].is_none() => index,
                    Some(_) => {
                        self.error(
                            Code::NamedArgument,
                            name.span,
                            format!("parameter `{}` is given twice", name.name),
                            None,
                        );
                        self.infer_loose(&arg.value);
                        continue;
                    }
                    None => {
                        let help = did_you_mean(&name.name, params.iter().map(|(p, _)| p.as_str()))
                            .unwrap_or_else(|| {
                                format!("the parameters are ({})", param_list(params))
                            });
                        self.error(
                            Code::NamedArgument,
                            name.span,
                            format!("{what} has no parameter `{}`", name.name),
                            Some(help),
                        );
                        self.infer_loose(&arg.value);
                        continue;
                    }
                },
            };
            let expected = params[index].1.clone();
            slots[index] = Some(self.arg(&arg.value, &expected));
        }
        let missing: Vec<&str> = params
            .iter()
            .zip(&slots)
            .filter(|(_, s)| s.is_none())
            .map(|((p, _), _)| p.as_str())
            .collect();
        if !missing.is_empty() && slots.len() >= missing.len() {
            self.error(
                Code::Arity,
                span,
                format!(
                    "{what} takes {} argument(s), but {} are given",
                    params.len(),
                    params.len() - missing.len()
                ),
                Some(format!("the parameters are ({})", param_list(params))),
            );
        }
        slots
            .into_iter()
            .map(|s| s.unwrap_or_else(|| poisoned(span)))
            .collect()
    }

    /// One argument: closures and function names are allowed where a function type is expected.
    fn arg(&mut self, value: &ast::Expr, expected: &Ty) -> Lowered {
        let expected_now = self.shallow(expected);
        match (&value.kind, &expected_now) {
            (ast::ExprKind::Closure(params, body), Ty::Fn(param_tys, ret)) => {
                if params.len() != param_tys.len() {
                    self.error(
                        Code::Arity,
                        value.span,
                        format!(
                            "this closure takes {} parameter(s), but {} are expected",
                            params.len(),
                            param_tys.len()
                        ),
                        None,
                    );
                    return poisoned(value.span);
                }
                let depth = self.locals.len();
                let mut ids = Vec::new();
                for (param, ty) in params.iter().zip(param_tys) {
                    if let Some(annotation) = &param.ty {
                        let annotated = self.resolve(annotation);
                        self.expect_ty(annotation.span(), &annotated, ty);
                    }
                    ids.push(self.new_local(&param.name.name, ty.clone()));
                }
                let body = self.check(body, ret);
                self.locals.truncate(depth);
                lowered(
                    ir::ExprKind::Closure {
                        params: ids,
                        body: Box::new(body),
                    },
                    expected_now.clone(),
                    value.span,
                )
            }
            (ast::ExprKind::Closure(..), _) => {
                self.error(
                    Code::ClosureEscapes,
                    value.span,
                    format!(
                        "a closure is passed where a `{}` is expected",
                        self.zonk(expected)
                    ),
                    None,
                );
                poisoned(value.span)
            }
            _ => self.check(value, expected),
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

fn substitute(ty: &Ty, map: &BTreeMap<Arc<str>, Ty>) -> Ty {
    match ty {
        Ty::Generic(name) => map.get(name).cloned().unwrap_or(Ty::Error),
        Ty::Option(t) => Ty::Option(Box::new(substitute(t, map))),
        Ty::List(t) => Ty::List(Box::new(substitute(t, map))),
        Ty::Set(t) => Ty::Set(Box::new(substitute(t, map))),
        Ty::Map(k, v) => Ty::Map(Box::new(substitute(k, map)), Box::new(substitute(v, map))),
        Ty::Opaque(name, args) => Ty::Opaque(
            name.clone(),
            args.iter().map(|a| substitute(a, map)).collect(),
        ),
        Ty::Fn(params, ret) => Ty::Fn(
            params.iter().map(|p| substitute(p, map)).collect(),
            Box::new(substitute(ret, map)),
        ),
        other => other.clone(),
    }
}

/// Operators and indexing.
impl Checker<'_> {
    fn index(&mut self, base: &ast::Expr, index: &ast::Expr, span: Span) -> Lowered {
        let base_lowered = self.infer(base, None);
        match self.shallow(&base_lowered.ty) {
            Ty::List(elem) => {
                let index = self.check(index, &Ty::Int);
                lowered(
                    ir::ExprKind::Index(Box::new(base_lowered), Box::new(index)),
                    *elem,
                    span,
                )
            }
            Ty::Map(key, value) => {
                let index = self.check(index, &key);
                lowered(
                    ir::ExprKind::Index(Box::new(base_lowered), Box::new(index)),
                    *value,
                    span,
                )
            }
            Ty::Error => {
                self.infer(index, None);
                poisoned(span)
            }
            other => {
                let owner = type_constructor(&other);
                let found = owner.and_then(|owner| {
                    self.builtins()
                        .find(|b| {
                            b.short_name == "index"
                                && matches!(&b.kind, BuiltinKind::Method(o) if *o == owner)
                        })
                        .cloned()
                });
                match found {
                    Some(builtin) => {
                        let arg = ast::Arg {
                            name: None,
                            value: index.clone(),
                            span: index.span,
                        };
                        self.call_builtin(&builtin, Some(base_lowered), &[arg], span, None)
                    }
                    None => {
                        self.error(
                            Code::NotIndexable,
                            base.span,
                            format!("a `{}` cannot be indexed", self.zonk(&other)),
                            Some("index a list with an `Int`, a map with a key, or a grid with a cell".into()),
                        );
                        self.infer(index, None);
                        poisoned(span)
                    }
                }
            }
        }
    }

    fn unary(
        &mut self,
        op: ast::UnaryOp,
        operand: &ast::Expr,
        span: Span,
        hint: Option<&Ty>,
    ) -> Lowered {
        match op {
            ast::UnaryOp::Not => {
                let inner = self.check(operand, &Ty::Bool);
                lowered(ir::ExprKind::Unary(op, Box::new(inner)), Ty::Bool, span)
            }
            ast::UnaryOp::Neg => {
                let inner = self.infer(operand, hint);
                let numeric = self.fresh(true);
                if !self.unify(&inner.ty, &numeric) {
                    let found = self.zonk(&inner.ty);
                    self.error(
                        Code::BadOperands,
                        span,
                        format!("cannot negate a `{found}`"),
                        Some("`-` applies to `Int` and `Float`".into()),
                    );
                    return poisoned(span);
                }
                let ty = inner.ty.clone();
                lowered(ir::ExprKind::Unary(op, Box::new(inner)), ty, span)
            }
        }
    }

    fn binary(
        &mut self,
        op: ast::BinaryOp,
        lhs: &ast::Expr,
        rhs: &ast::Expr,
        span: Span,
        hint: Option<&Ty>,
    ) -> Lowered {
        use ast::BinaryOp as B;
        let (left, right, ty) = match op {
            B::And | B::Or => (
                self.check(lhs, &Ty::Bool),
                self.check(rhs, &Ty::Bool),
                Ty::Bool,
            ),
            B::In | B::NotIn => {
                let right = self.infer(rhs, None);
                let left = match self.shallow(&right.ty) {
                    Ty::List(elem) | Ty::Set(elem) | Ty::Map(elem, _) => self.check(lhs, &elem),
                    Ty::Error => self.infer(lhs, None),
                    other => {
                        let left = self.infer(lhs, None);
                        self.error(
                            Code::BadOperands,
                            rhs.span,
                            format!(
                                "`{}` needs a list, a set or a map on its right, found `{}`",
                                op.symbol(),
                                self.zonk(&other)
                            ),
                            None,
                        );
                        left
                    }
                };
                (left, right, Ty::Bool)
            }
            _ => {
                let arithmetic = matches!(op, B::Add | B::Sub | B::Mul | B::Div | B::Rem);
                let left = self.infer(lhs, if arithmetic { hint } else { None });
                let right = self.infer(rhs, Some(&left.ty.clone()));
                if !self.unify(&left.ty, &right.ty) {
                    let (l, r) = (self.zonk(&left.ty), self.zonk(&right.ty));
                    let help = match (&l, &r) {
                        (Ty::Int, Ty::Float) | (Ty::Float, Ty::Int) => Some(
                            "there is no implicit conversion: use `.to_float()` on the `Int`"
                                .to_owned(),
                        ),
                        _ => None,
                    };
                    self.push(
                        Diagnostic::new(
                            Code::BadOperands,
                            span,
                            format!("cannot apply `{}` to `{l}` and `{r}`", op.symbol()),
                        )
                        .label(
                            Span {
                                start: left.span.start,
                                end: left.span.end,
                            },
                            format!("this is `{l}`"),
                        )
                        .label(
                            Span {
                                start: right.span.start,
                                end: right.span.end,
                            },
                            format!("this is `{r}`"),
                        )
                        .maybe_help(help),
                    );
                    return poisoned(span);
                }
                let operand = self.shallow(&left.ty);
                let ok = match op {
                    B::Eq | B::Ne => true,
                    B::Lt | B::Le | B::Gt | B::Ge => {
                        matches!(operand, Ty::String) || {
                            let numeric = self.fresh(true);
                            self.unify(&operand, &numeric)
                        }
                    }
                    _ => {
                        let numeric = self.fresh(true);
                        self.unify(&operand, &numeric)
                    }
                };
                if !ok {
                    self.error(
                        Code::BadOperands,
                        span,
                        format!(
                            "cannot apply `{}` to `{}`",
                            op.symbol(),
                            self.zonk(&operand)
                        ),
                        Some(if arithmetic {
                            "arithmetic applies to `Int` and `Float`".into()
                        } else {
                            "ordering applies to numbers and strings".into()
                        }),
                    );
                    return poisoned(span);
                }
                let ty = if arithmetic {
                    left.ty.clone()
                } else {
                    Ty::Bool
                };
                (left, right, ty)
            }
        };
        lowered(
            ir::ExprKind::Binary(op, Box::new(left), Box::new(right)),
            ty,
            span,
        )
    }
}

/// Patterns and `match`.
impl Checker<'_> {
    fn pattern(&mut self, pattern: &ast::Pattern, ty: &Ty, irrefutable: bool) -> ir::Pattern {
        let span = rel(pattern.span);
        let kind = match &pattern.kind {
            ast::PatternKind::Wildcard | ast::PatternKind::Error => ir::PatternKind::Wildcard,
            ast::PatternKind::Bind(name) if name.name == "None" => {
                self.option_pattern(None, ty, pattern.span)
            }
            ast::PatternKind::Bind(name) => {
                ir::PatternKind::Bind(self.new_local(&name.name, ty.clone()))
            }
            ast::PatternKind::Literal(expr) => {
                let value = self.check(expr, ty);
                match value.kind {
                    ir::ExprKind::Lit(literal) => ir::PatternKind::Lit(literal),
                    ir::ExprKind::Unary(ast::UnaryOp::Neg, _) => match env::literal(expr) {
                        Some(literal) => ir::PatternKind::Lit(literal),
                        None => ir::PatternKind::Wildcard,
                    },
                    _ => ir::PatternKind::Wildcard,
                }
            }
            ast::PatternKind::Variant(path, subpatterns) => {
                let segments: Vec<&str> = path.segments.iter().map(|s| s.name.as_str()).collect();
                match segments.as_slice() {
                    ["Some"] => {
                        let inner = subpatterns.first();
                        if subpatterns.len() != 1 {
                            self.error(
                                Code::Arity,
                                pattern.span,
                                "`Some` takes one pattern".to_owned(),
                                None,
                            );
                        }
                        self.option_pattern(inner, ty, pattern.span)
                    }
                    ["None"] => self.option_pattern(None, ty, pattern.span),
                    _ => self.variant_pattern(path, subpatterns, ty, pattern.span),
                }
            }
        };
        let lowered = ir::Pattern { kind, span };
        if irrefutable && !is_irrefutable(&lowered) {
            self.error(
                Code::RefutablePattern,
                pattern.span,
                "this pattern does not match every value, so it cannot be used in `let`".to_owned(),
                Some(
                    "use `match`, or a guard: `if let Pattern = value { ... } else { ... }`".into(),
                ),
            );
        }
        lowered
    }

    fn option_pattern(
        &mut self,
        inner: Option<&ast::Pattern>,
        ty: &Ty,
        span: Span,
    ) -> ir::PatternKind {
        let elem = self.fresh(false);
        self.expect_ty(span, &Ty::Option(Box::new(elem.clone())), ty);
        match inner {
            Some(inner) => ir::PatternKind::Some(Box::new(self.pattern(inner, &elem, false))),
            None => ir::PatternKind::None,
        }
    }

    fn variant_pattern(
        &mut self,
        path: &ast::Path,
        subpatterns: &[ast::Pattern],
        ty: &Ty,
        span: Span,
    ) -> ir::PatternKind {
        let (enum_name, variant) = match path.segments.as_slice() {
            [e, v] => (Some(e), v),
            [v] => (None, v),
            _ => {
                self.error(
                    Code::UnknownVariant,
                    path.span,
                    format!("`{}` is not a variant", env::path_text(path)),
                    None,
                );
                return ir::PatternKind::Wildcard;
            }
        };
        let index = match enum_name {
            // `LlmResult.Ok(r)`: the generic result enum is the scrutinee's `LlmResult<Reply>`.
            Some(e)
                if e.name == "LlmResult"
                    && !self.scope.types.contains_key("LlmResult")
                    && matches!(self.shallow(ty), Ty::Enum(name) if name.starts_with("LlmResult<")) =>
            {
                let Ty::Enum(name) = self.shallow(ty) else {
                    return ir::PatternKind::Wildcard;
                };
                match self.scope.enums.iter().position(|e| *e.name == *name) {
                    Some(index) => index,
                    None => return ir::PatternKind::Wildcard,
                }
            }
            Some(e) => match self.scope.types.get(&e.name) {
                Some(TypeDef::Enum(index)) => *index,
                _ => {
                    let help = did_you_mean(&e.name, self.scope.types.keys().map(String::as_str));
                    self.error(
                        Code::UnknownType,
                        e.span,
                        format!("unknown enum `{}`", e.name),
                        help,
                    );
                    return ir::PatternKind::Wildcard;
                }
            },
            None => match self.shallow(ty) {
                Ty::Enum(name) => match self.scope.enums.iter().position(|e| *e.name == *name) {
                    Some(index) => index,
                    None => return ir::PatternKind::Wildcard,
                },
                _ => {
                    self.error(
                        Code::UnknownVariant,
                        path.span,
                        format!("unknown variant `{}`", variant.name),
                        Some("qualify it with its enum: `Enum.Variant`".into()),
                    );
                    return ir::PatternKind::Wildcard;
                }
            },
        };
        let info = self.scope.enums[index].clone();
        self.expect_ty(span, &Ty::Enum(info.name.as_str().into()), ty);
        let Some(position) = info.variants.iter().position(|(v, _)| *v == variant.name) else {
            let help = did_you_mean(&variant.name, info.variants.iter().map(|(v, _)| v.as_str()));
            self.error(
                Code::UnknownVariant,
                variant.span,
                format!("enum `{}` has no variant `{}`", info.name, variant.name),
                help,
            );
            return ir::PatternKind::Wildcard;
        };
        let payload_types = &info.variants[position].1;
        if payload_types.len() != subpatterns.len() {
            self.error(
                Code::Arity,
                span,
                format!(
                    "variant `{}.{}` has {} value(s), but the pattern has {}",
                    info.name,
                    variant.name,
                    payload_types.len(),
                    subpatterns.len()
                ),
                None,
            );
        }
        let payload = subpatterns
            .iter()
            .enumerate()
            .map(|(i, p)| {
                self.pattern(
                    p,
                    &payload_types.get(i).cloned().unwrap_or(Ty::Error),
                    false,
                )
            })
            .collect();
        ir::PatternKind::Variant {
            enum_id: info.id,
            index: position as u32,
            payload,
        }
    }

    fn match_expr(
        &mut self,
        scrutinee: &ast::Expr,
        arms: &[ast::MatchArm],
        span: Span,
        hint: Option<&Ty>,
    ) -> Lowered {
        let scrutinee = self.infer(scrutinee, None);
        let scrutinee_ty = scrutinee.ty.clone();
        let mut result_ty = hint.cloned().unwrap_or_else(|| self.fresh(false));
        let mut lowered_arms = Vec::new();
        for (i, arm) in arms.iter().enumerate() {
            let depth = self.locals.len();
            let pattern = self.pattern(&arm.pattern, &scrutinee_ty, false);
            let body = if i == 0 && hint.is_none() {
                let body = self.infer(&arm.body, None);
                result_ty = body.ty.clone();
                body
            } else {
                self.check(&arm.body, &result_ty)
            };
            self.locals.truncate(depth);
            let unreachable = lowered_arms
                .iter()
                .any(|earlier: &ir::MatchArm| covers(&earlier.pattern, &pattern));
            if unreachable {
                self.push(
                    Diagnostic::new(Code::UnreachableArm, arm.pattern.span, "this arm is never reached".to_owned())
                        .help("earlier arms already match every value it would match; remove it or move it up"),
                );
            }
            lowered_arms.push(ir::MatchArm { pattern, body });
        }
        let ty = self.zonk(&scrutinee_ty);
        if !ty.has_error() {
            let patterns: Vec<&ir::Pattern> = lowered_arms.iter().map(|a| &a.pattern).collect();
            let missing = self.missing(&patterns, &ty);
            if !missing.is_empty() {
                self.error(
                    Code::NonExhaustive,
                    span,
                    format!("this `match` does not handle: {}", missing.join(", ")),
                    Some(format!(
                        "add arms for {}, or a final `_ => ...` arm",
                        missing.join(", ")
                    )),
                );
            }
        }
        lowered(
            ir::ExprKind::Match(Box::new(scrutinee), lowered_arms),
            result_ty,
            span,
        )
    }

    /// The cases of `ty` that none of `patterns` match, written as patterns.
    fn missing(&self, patterns: &[&ir::Pattern], ty: &Ty) -> Vec<String> {
        if patterns.iter().any(|p| is_irrefutable(p)) {
            return Vec::new();
        }
        match self.shallow(ty) {
            Ty::Bool => [true, false]
                .into_iter()
                .filter(|b| {
                    !patterns
                        .iter()
                        .any(|p| p.kind == ir::PatternKind::Lit(ir::Literal::Bool(*b)))
                })
                .map(|b| b.to_string())
                .collect(),
            Ty::Option(inner) => {
                let mut missing = Vec::new();
                if !patterns.iter().any(|p| p.kind == ir::PatternKind::None) {
                    missing.push("None".to_owned());
                }
                let somes: Vec<&ir::Pattern> = patterns
                    .iter()
                    .filter_map(|p| match &p.kind {
                        ir::PatternKind::Some(inner) => Some(&**inner),
                        _ => None,
                    })
                    .collect();
                if somes.is_empty() {
                    missing.push("Some(_)".to_owned());
                } else {
                    missing.extend(
                        self.missing(&somes, &inner)
                            .into_iter()
                            .map(|m| format!("Some({m})")),
                    );
                }
                missing
            }
            Ty::Enum(name) => {
                let Some(info) = self.scope.enum_named(&name) else {
                    return Vec::new();
                };
                let mut missing = Vec::new();
                for (index, (variant, payload)) in info.variants.iter().enumerate() {
                    let rows: Vec<&Vec<ir::Pattern>> = patterns
                        .iter()
                        .filter_map(|p| match &p.kind {
                            ir::PatternKind::Variant {
                                index: i, payload, ..
                            } if *i as usize == index => Some(payload),
                            _ => None,
                        })
                        .collect();
                    let shown = if payload.is_empty() {
                        format!("{name}.{variant}")
                    } else {
                        format!("{name}.{variant}(..)")
                    };
                    if rows.is_empty() {
                        missing.push(shown);
                    } else if payload.len() == 1 {
                        let column: Vec<&ir::Pattern> =
                            rows.iter().filter_map(|r| r.first()).collect();
                        missing.extend(
                            self.missing(&column, &payload[0])
                                .into_iter()
                                .map(|m| format!("{name}.{variant}({m})")),
                        );
                    } else if payload.len() > 1
                        && !rows.iter().any(|r| r.iter().all(is_irrefutable))
                    {
                        missing.push(shown);
                    }
                }
                missing
            }
            _ => vec!["_".to_owned()],
        }
    }
}

fn is_irrefutable(pattern: &ir::Pattern) -> bool {
    matches!(
        pattern.kind,
        ir::PatternKind::Wildcard | ir::PatternKind::Bind(_)
    )
}

/// True when `earlier` matches every value `later` matches (a conservative approximation).
fn covers(earlier: &ir::Pattern, later: &ir::Pattern) -> bool {
    match (&earlier.kind, &later.kind) {
        (ir::PatternKind::Wildcard | ir::PatternKind::Bind(_), _) => true,
        (ir::PatternKind::Lit(a), ir::PatternKind::Lit(b)) => a == b,
        (ir::PatternKind::None, ir::PatternKind::None) => true,
        (ir::PatternKind::Some(a), ir::PatternKind::Some(b)) => covers(a, b),
        (
            ir::PatternKind::Variant {
                enum_id: e1,
                index: i1,
                payload: p1,
            },
            ir::PatternKind::Variant {
                enum_id: e2,
                index: i2,
                payload: p2,
            },
        ) => {
            e1 == e2
                && i1 == i2
                && p1.len() == p2.len()
                && p1.iter().zip(p2).all(|(a, b)| covers(a, b))
        }
        _ => false,
    }
}
