//! A machine's program compiled once, when the machine is built, into the form the evaluator
//! runs: every expression the runtime evaluates (the bodies of `fn`s and computed values,
//! constants, defaults and initialisers, guards, decide rules, model branches, `ensure`s) and
//! every statement (action, handler and revise bodies).
//!
//! The checked program is a tree of [`Expr`]s, and walking it costs the evaluator a dispatch on a
//! large enum per node, a lookup of every builtin call's site by its name, and a conversion of
//! every literal. A [`Node`] is the same expression with that work done ahead: a literal is its
//! value, a builtin call holds its resolved [`CallSite`], a `fn` call the size of its callee's
//! frame. Closures, which a builtin calls once per element, are compiled with the body they sit
//! in, so that `max_by(|c| hit_prob[c])` calls straight into its native.
//!
//! A node evaluates exactly as the expression it was compiled from: the same steps in the same
//! order, the same charges and the same errors (see `interp::node`). An expression the checker
//! should have ruled out (a record literal of another type, a call of an unknown `fn`, a
//! non-finite literal) compiles to a [`NodeKind::Fail`] that fails where it is evaluated, as
//! before; the machine is still built, since the expression may never run.

use std::sync::Arc;

use harness_compiler::ir::{
    ActionId, AssignOp, BinaryOp, Body, ComputedId, EnumId, Expr, ExprKind, FnId, Guard, LlmId,
    LocalId, MemberRef, Pattern, PlaceStep, Program, SrcSpan, StateId, Stmt, StmtKind, TunableId,
    UnaryOp,
};
use harness_compiler::types::{RecordTy, Ty};

use crate::calls::{CallSite, Target};
use crate::error::{ErrorCode, RuntimeError};
use crate::native::Natives;
use crate::ops;
use crate::value::Value;

/// A compiled expression.
pub(crate) struct Node {
    pub(crate) kind: NodeKind,
    pub(crate) span: SrcSpan,
}

/// The kinds of compiled expression; each mirrors the [`ExprKind`] it is named after.
///
/// The kind is a plain byte: without it, the compiler hides it in a niche of a variant's
/// field, and every dispatch of the evaluator decodes it first.
#[repr(u8)]
pub(crate) enum NodeKind {
    /// A local of the current frame.
    Local(LocalId),
    /// A literal, converted once.
    Lit(Value),
    /// A state slot.
    State(usize),
    /// A tunable.
    Tunable(usize),
    /// A computed value.
    Computed(ComputedId),
    /// A config value.
    Config(usize),
    /// A constant.
    Const(usize),
    /// A game query without arguments, with the address of its name in the program, which keys
    /// the evaluator's cache of query answers.
    Query { key: usize, name: String },
    /// A call of a `fn`, with the size of the callee's frame.
    CallFn {
        func: FnId,
        frame: usize,
        args: Vec<Node>,
    },
    /// A builtin call, resolved.
    Builtin {
        name: String,
        site: CallSite,
        args: Vec<Node>,
        /// Whether the checker typed the call `Float` (see `Eval::builtin_result`).
        float: bool,
    },
    /// A closure argument of a builtin.
    Closure {
        params: Vec<LocalId>,
        body: Box<Node>,
        /// How `Eval::lambda` evaluates the body, settled once here rather than at every call.
        shape: LambdaShape,
    },
    /// A `fn` passed as a closure.
    FnRef(FnId),
    /// An enum variant.
    Variant {
        enum_id: EnumId,
        index: u32,
        payload: Vec<Node>,
    },
    /// `Some(value)`.
    Some(Box<Node>),
    /// `None`.
    None,
    /// A record of type `ty`.
    Record {
        ty: Arc<RecordTy>,
        fields: Vec<Node>,
    },
    /// A list literal.
    List(Vec<Node>),
    /// A record field.
    Field(Box<Node>, u32),
    /// `base[index]` on a list or a map.
    Index(Box<Node>, Box<Node>),
    /// A prefix operator.
    Unary(UnaryOp, Box<Node>),
    /// An infix operator.
    Binary(BinaryOp, Box<Node>, Box<Node>),
    /// `if guards { then } else { otherwise }`.
    If {
        guards: Vec<NodeGuard>,
        then: Box<Node>,
        otherwise: Box<Node>,
    },
    /// `match`.
    Match(Box<Node>, Vec<(Pattern, Node)>),
    /// `let pattern = value` and the rest of the block.
    Let {
        pattern: Pattern,
        value: Box<Node>,
        body: Box<Node>,
    },
    /// `s.member` of a successor snapshot.
    SnapshotRead {
        snapshot: Box<Node>,
        member: MemberRef,
    },
    /// A game query with arguments, which is not cached.
    GameCall { name: String, args: Vec<Node> },
    /// A set literal.
    Set(Vec<Node>),
    /// The empty map.
    EmptyMap,
    /// `sim.next(action(args))`.
    SimNext { action: ActionId, args: Vec<Node> },
    /// An expression that fails with this error once its step is counted.
    Fail(RuntimeError),
}

/// How a closure's body is evaluated at each call (see `Eval::lambda`). A closure a builtin
/// calls once per element mostly has a body of one native call or field read on its parameters
/// and held values (`|c| hit_prob[c]`, `|s| s.score`), which is evaluated without binding the
/// parameters in the frame.
pub(crate) enum LambdaShape {
    /// The parameters are bound in the frame and the body is evaluated as any node.
    General,
    /// A native builtin call on at most three leaves that read no local but themselves; an
    /// operand that names the closure's `k`th parameter is `Some(k)`.
    Native(Vec<Option<usize>>),
    /// A field read on the closure's `k`th parameter.
    Field(usize),
}

/// The shape of the body of closure `|params| body`.
fn lambda_shape(params: &[LocalId], body: &Node) -> LambdaShape {
    // The last parameter of a name is the one the body sees.
    let param = |n: &Node| match &n.kind {
        NodeKind::Local(id) => params.iter().rposition(|p| p == id),
        _ => None,
    };
    match &body.kind {
        NodeKind::Builtin { site, args, .. }
            if matches!(site.target, Target::Native(_))
                && args.len() <= 3
                && args.iter().all(frame_free) =>
        {
            LambdaShape::Native(args.iter().map(param).collect())
        }
        NodeKind::Field(base, _) => param(base).map_or(LambdaShape::General, LambdaShape::Field),
        _ => LambdaShape::General,
    }
}

/// Whether a node is a leaf that reads no local of the frame other than itself, so that
/// `Eval::lambda` can evaluate it without the closure's parameters bound in the frame.
fn frame_free(n: &Node) -> bool {
    matches!(
        n.kind,
        NodeKind::Local(_)
            | NodeKind::Lit(_)
            | NodeKind::State(_)
            | NodeKind::Tunable(_)
            | NodeKind::Computed(_)
            | NodeKind::Config(_)
            | NodeKind::Const(_)
            | NodeKind::Query { .. }
    )
}

/// A compiled guard.
pub(crate) enum NodeGuard {
    Cond(Node),
    Let(Pattern, Node),
}

/// A compiled statement.
pub(crate) struct NodeStmt {
    pub(crate) kind: NodeStmtKind,
    pub(crate) span: SrcSpan,
}

/// The kinds of compiled statement; each mirrors the [`StmtKind`] it is named after.
pub(crate) enum NodeStmtKind {
    Let(Pattern, Node),
    Patch {
        state: StateId,
        path: Vec<NodePlaceStep>,
        op: AssignOp,
        value: Node,
    },
    LetLlm {
        pattern: Pattern,
        llm: LlmId,
        args: Vec<Node>,
    },
    /// An `emit`, with the effect's name shared with every effect it sends.
    Emit {
        effect: Arc<str>,
        args: Vec<Node>,
    },
    Revise {
        tunable: TunableId,
        op: AssignOp,
        value: Node,
    },
    If {
        guards: Vec<NodeGuard>,
        then: Vec<NodeStmt>,
        otherwise: Vec<NodeStmt>,
    },
    Halt {
        reason: String,
    },
}

/// One step of a patched place.
pub(crate) enum NodePlaceStep {
    Field(u32),
    Index(Node),
}

/// An action: its gate, its `requires` conditions in order, and its body.
pub(crate) struct NodeAction {
    pub(crate) available: Option<Node>,
    pub(crate) requires: Vec<Node>,
    pub(crate) body: Vec<NodeStmt>,
}

/// A decide rule's guards and its action's arguments.
pub(crate) struct NodeRule {
    pub(crate) guards: Vec<NodeGuard>,
    pub(crate) args: Vec<Node>,
}

/// A revise block's gate and body.
pub(crate) struct NodeRevise {
    pub(crate) cond: Node,
    pub(crate) body: Vec<NodeStmt>,
}

/// A model branch's observation arguments and probability.
pub(crate) struct NodeBranch {
    pub(crate) args: Vec<Node>,
    pub(crate) probability: Option<Node>,
}

/// What a layer runs, each list in the order of the layer's declarations.
pub(crate) struct NodeLayer {
    pub(crate) models: Vec<Vec<NodeBranch>>,
    pub(crate) handlers: Vec<Vec<NodeStmt>>,
    pub(crate) decide: Vec<NodeRule>,
    pub(crate) revise: Vec<NodeRevise>,
    pub(crate) tunable_defaults: Vec<Node>,
}

/// A program compiled: every part of it the runtime evaluates, by the ids and positions of the
/// program's own definitions.
pub(crate) struct Compiled {
    pub(crate) fns: Vec<Node>,
    pub(crate) computed: Vec<Node>,
    pub(crate) consts: Vec<Node>,
    pub(crate) config: Vec<Node>,
    pub(crate) tunables: Vec<Node>,
    pub(crate) state: Vec<Node>,
    pub(crate) actions: Vec<NodeAction>,
    pub(crate) layers: Vec<NodeLayer>,
    /// The `ensure` conditions of every LLM effect.
    pub(crate) ensures: Vec<Vec<Node>>,
}

impl Compiled {
    /// Compiles every evaluated part of `program`, resolving its builtin calls against
    /// `natives`.
    pub(crate) fn new(program: &Program, natives: &Natives) -> Self {
        let c = Compiler { program, natives };
        let bodies = |bodies: &mut dyn Iterator<Item = &Body>| -> Vec<Node> {
            bodies.map(|body| c.expr(&body.expr)).collect()
        };
        Compiled {
            fns: bodies(&mut program.fns.iter().map(|def| &def.body)),
            computed: bodies(&mut program.computed.iter().map(|def| &def.body)),
            consts: bodies(&mut program.consts.iter().map(|def| &def.value)),
            config: bodies(&mut program.config.iter().map(|def| &def.default)),
            tunables: bodies(&mut program.tunables.iter().map(|def| &def.default)),
            state: bodies(&mut program.state.iter().map(|def| &def.init)),
            actions: program
                .actions
                .iter()
                .map(|def| NodeAction {
                    available: def.available.as_ref().map(|e| c.expr(e)),
                    requires: def.requires.iter().map(|req| c.expr(&req.cond)).collect(),
                    body: c.stmts(&def.body),
                })
                .collect(),
            layers: program
                .layers
                .iter()
                .map(|layer| NodeLayer {
                    models: layer
                        .models
                        .iter()
                        .map(|model| {
                            model
                                .branches
                                .iter()
                                .map(|branch| NodeBranch {
                                    args: c.exprs(&branch.args),
                                    probability: branch.probability.as_ref().map(|p| c.expr(p)),
                                })
                                .collect()
                        })
                        .collect(),
                    handlers: layer.handlers.iter().map(|h| c.stmts(&h.body)).collect(),
                    decide: layer
                        .decide
                        .iter()
                        .map(|rule| NodeRule {
                            guards: c.guards(&rule.guards),
                            args: c.exprs(&rule.args),
                        })
                        .collect(),
                    revise: layer
                        .revise
                        .iter()
                        .map(|block| NodeRevise {
                            cond: c.expr(&block.cond),
                            body: c.stmts(&block.body),
                        })
                        .collect(),
                    tunable_defaults: bodies(
                        &mut layer.tunable_defaults.iter().map(|it| &it.value),
                    ),
                })
                .collect(),
            ensures: program
                .llms
                .iter()
                .map(|def| bodies(&mut def.ensures.iter().map(|e| &e.condition)))
                .collect(),
        }
    }
}

struct Compiler<'a> {
    program: &'a Program,
    natives: &'a Natives,
}

/// An internal error, as the evaluator words them.
fn internal(span: SrcSpan, message: &str) -> RuntimeError {
    RuntimeError::new(
        ErrorCode::Internal,
        span,
        format!("internal error: {message}"),
    )
}

impl Compiler<'_> {
    fn exprs(&self, es: &[Expr]) -> Vec<Node> {
        es.iter().map(|e| self.expr(e)).collect()
    }

    fn boxed(&self, e: &Expr) -> Box<Node> {
        Box::new(self.expr(e))
    }

    fn expr(&self, e: &Expr) -> Node {
        // Expressions nest as deep as the source does.
        let kind = harness_grammar::stack::guarded(|| self.kind(e));
        Node { kind, span: e.span }
    }

    fn guards(&self, guards: &[Guard]) -> Vec<NodeGuard> {
        guards
            .iter()
            .map(|guard| match guard {
                Guard::Cond(cond) => NodeGuard::Cond(self.expr(cond)),
                Guard::Let(pattern, value) => NodeGuard::Let(pattern.clone(), self.expr(value)),
            })
            .collect()
    }

    fn stmts(&self, stmts: &[Stmt]) -> Vec<NodeStmt> {
        stmts.iter().map(|stmt| self.stmt(stmt)).collect()
    }

    fn stmt(&self, stmt: &Stmt) -> NodeStmt {
        let kind = match &stmt.kind {
            StmtKind::Let(pattern, value) => NodeStmtKind::Let(pattern.clone(), self.expr(value)),
            StmtKind::Patch { place, op, value } => NodeStmtKind::Patch {
                state: place.state,
                path: place
                    .path
                    .iter()
                    .map(|step| match step {
                        PlaceStep::Field(i) => NodePlaceStep::Field(*i),
                        PlaceStep::Index(e) => NodePlaceStep::Index(self.expr(e)),
                    })
                    .collect(),
                op: *op,
                value: self.expr(value),
            },
            StmtKind::LetLlm { pattern, llm, args } => NodeStmtKind::LetLlm {
                pattern: pattern.clone(),
                llm: *llm,
                args: self.exprs(args),
            },
            StmtKind::Emit { effect, args } => NodeStmtKind::Emit {
                effect: Arc::from(effect.as_str()),
                args: self.exprs(args),
            },
            StmtKind::Revise { tunable, op, value } => NodeStmtKind::Revise {
                tunable: *tunable,
                op: *op,
                value: self.expr(value),
            },
            StmtKind::If {
                guards,
                then,
                otherwise,
            } => NodeStmtKind::If {
                guards: self.guards(guards),
                then: self.stmts(then),
                otherwise: self.stmts(otherwise),
            },
            StmtKind::Halt { reason } => NodeStmtKind::Halt {
                reason: reason.clone(),
            },
        };
        NodeStmt {
            kind,
            span: stmt.span,
        }
    }

    fn kind(&self, e: &Expr) -> NodeKind {
        match &e.kind {
            ExprKind::Lit(lit) => match ops::literal(lit, e.span) {
                Ok(value) => NodeKind::Lit(value),
                Err(error) => NodeKind::Fail(error),
            },
            ExprKind::Local(id) => NodeKind::Local(*id),
            ExprKind::Member(MemberRef::State(id)) => NodeKind::State(id.index()),
            ExprKind::Member(MemberRef::Tunable(id)) => NodeKind::Tunable(id.index()),
            ExprKind::Member(MemberRef::Computed(id)) => NodeKind::Computed(*id),
            ExprKind::Config(id) => NodeKind::Config(id.index()),
            ExprKind::Const(id) => NodeKind::Const(id.index()),
            ExprKind::GameProperty(name) => NodeKind::Query {
                key: name.as_ptr() as usize,
                name: name.clone(),
            },
            ExprKind::GameCall { name, args } => NodeKind::GameCall {
                name: name.clone(),
                args: self.exprs(args),
            },
            ExprKind::CallFn { func, args } => match self.program.fns.get(func.index()) {
                Some(def) => NodeKind::CallFn {
                    func: *func,
                    frame: def.body.frame.locals.len().max(args.len()),
                    args: self.exprs(args),
                },
                None => NodeKind::Fail(internal(e.span, "unknown fn")),
            },
            ExprKind::CallBuiltin { name, args } => NodeKind::Builtin {
                name: name.clone(),
                site: CallSite::of_call(name, args, &e.ty, self.natives),
                args: self.exprs(args),
                float: e.ty == Ty::Float,
            },
            ExprKind::Closure { params, body } => {
                let body = self.boxed(body);
                NodeKind::Closure {
                    shape: lambda_shape(params, &body),
                    params: params.clone(),
                    body,
                }
            }
            ExprKind::FnRef(func) => NodeKind::FnRef(*func),
            ExprKind::Variant {
                enum_id,
                index,
                payload,
            } => NodeKind::Variant {
                enum_id: *enum_id,
                index: *index,
                payload: self.exprs(payload),
            },
            ExprKind::Some(inner) => NodeKind::Some(self.boxed(inner)),
            ExprKind::None => NodeKind::None,
            ExprKind::Record(fields) => match &e.ty {
                Ty::Record(ty) => NodeKind::Record {
                    ty: ty.clone(),
                    fields: self.exprs(fields),
                },
                other => {
                    NodeKind::Fail(internal(e.span, &format!("record literal of type {other}")))
                }
            },
            ExprKind::List(items) => NodeKind::List(self.exprs(items)),
            ExprKind::Set(items) => NodeKind::Set(self.exprs(items)),
            ExprKind::EmptyMap => NodeKind::EmptyMap,
            ExprKind::Field(base, index) => NodeKind::Field(self.boxed(base), *index),
            ExprKind::Index(base, index) => NodeKind::Index(self.boxed(base), self.boxed(index)),
            ExprKind::Unary(op, operand) => NodeKind::Unary(*op, self.boxed(operand)),
            ExprKind::Binary(op, a, b) => NodeKind::Binary(*op, self.boxed(a), self.boxed(b)),
            ExprKind::If {
                guards,
                then,
                otherwise,
            } => NodeKind::If {
                guards: self.guards(guards),
                then: self.boxed(then),
                otherwise: self.boxed(otherwise),
            },
            ExprKind::Match(scrutinee, arms) => NodeKind::Match(
                self.boxed(scrutinee),
                arms.iter()
                    .map(|arm| (arm.pattern.clone(), self.expr(&arm.body)))
                    .collect(),
            ),
            ExprKind::Let {
                pattern,
                value,
                body,
            } => NodeKind::Let {
                pattern: pattern.clone(),
                value: self.boxed(value),
                body: self.boxed(body),
            },
            ExprKind::SimNext { action, args } => NodeKind::SimNext {
                action: *action,
                args: self.exprs(args),
            },
            ExprKind::SnapshotRead { snapshot, member } => NodeKind::SnapshotRead {
                snapshot: self.boxed(snapshot),
                member: *member,
            },
        }
    }
}
