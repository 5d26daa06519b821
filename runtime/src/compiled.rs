//! The bodies of `fn`s and computed values, compiled once when a machine is built.
//!
//! The checked program is a tree of [`Expr`]s, and walking it costs the evaluator a dispatch on a
//! large enum per node, a lookup of every builtin call's site by the address of its name, and a
//! conversion of every literal. A [`Node`] is the same expression with that work done ahead: a
//! literal is its value, a builtin call holds its resolved [`CallSite`], a `fn` call the size of
//! its callee's frame. Closures, which a builtin calls once per element, are compiled with the
//! body they sit in, so that `max_by(|c| hit_prob[c])` calls straight into its native.
//!
//! A node evaluates exactly as the expression it was compiled from: the same steps in the same
//! order, the same charges and the same errors (see `interp::node`). The few kinds of
//! expression that gain nothing from compiling (previews, game calls with arguments, sets and
//! empty maps) keep their expression, copied into the node, and the evaluator walks it as
//! before; their builtin call sites are registered with the machine's others, so they count
//! their work as the originals do.

use std::sync::Arc;

use harness_compiler::ir::{
    BinaryOp, ComputedId, EnumId, Expr, ExprKind, FnId, Guard, LocalId, MemberRef, Pattern,
    Program, SrcSpan, UnaryOp,
};
use harness_compiler::types::{RecordTy, Ty};

use crate::calls::{CallSite, CallSites};
use crate::native::Natives;
use crate::ops;
use crate::value::Value;

/// A compiled expression.
pub(crate) struct Node {
    pub(crate) kind: NodeKind,
    pub(crate) span: SrcSpan,
}

/// The kinds of compiled expression; each mirrors the [`ExprKind`] it is named after.
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
    /// An expression the evaluator walks as it is.
    Tree(Box<Expr>),
}

/// A compiled guard.
pub(crate) enum NodeGuard {
    Cond(Node),
    Let(Pattern, Node),
}

/// The compiled bodies of a program: one per `fn` and one per computed value, by id.
#[derive(Default)]
pub(crate) struct Compiled {
    pub(crate) fns: Vec<Node>,
    pub(crate) computed: Vec<Node>,
}

impl Compiled {
    /// Compiles every `fn` and computed body of `program`, registering the builtin calls of the
    /// expressions kept as trees with `sites`.
    pub(crate) fn new(program: &Program, natives: &Natives, sites: &mut CallSites) -> Self {
        let mut compiler = Compiler {
            program,
            natives,
            sites,
        };
        Compiled {
            fns: program
                .fns
                .iter()
                .map(|def| compiler.expr(&def.body.expr))
                .collect(),
            computed: program
                .computed
                .iter()
                .map(|def| compiler.expr(&def.body.expr))
                .collect(),
        }
    }
}

struct Compiler<'a> {
    program: &'a Program,
    natives: &'a Natives,
    sites: &'a mut CallSites,
}

impl Compiler<'_> {
    fn exprs(&mut self, es: &[Expr]) -> Vec<Node> {
        es.iter().map(|e| self.expr(e)).collect()
    }

    fn boxed(&mut self, e: &Expr) -> Box<Node> {
        Box::new(self.expr(e))
    }

    fn expr(&mut self, e: &Expr) -> Node {
        // Expressions nest as deep as the source does.
        let kind = harness_grammar::stack::guarded(|| self.kind(e));
        Node { kind, span: e.span }
    }

    fn tree(&mut self, e: &Expr) -> NodeKind {
        let copy = Box::new(e.clone());
        self.sites.add(&copy, self.natives);
        NodeKind::Tree(copy)
    }

    fn kind(&mut self, e: &Expr) -> NodeKind {
        match &e.kind {
            ExprKind::Lit(lit) => match ops::literal(lit, e.span) {
                Ok(value) => NodeKind::Lit(value),
                // A literal without a value fails where it is evaluated, as the tree does.
                Err(_) => self.tree(e),
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
            ExprKind::CallFn { func, args } => match self.program.fns.get(func.index()) {
                Some(def) => NodeKind::CallFn {
                    func: *func,
                    frame: def.body.frame.locals.len().max(args.len()),
                    args: self.exprs(args),
                },
                None => self.tree(e),
            },
            ExprKind::CallBuiltin { name, args } => NodeKind::Builtin {
                name: name.clone(),
                site: CallSite::of_call(name, args, &e.ty, self.natives),
                args: self.exprs(args),
                float: e.ty == Ty::Float,
            },
            ExprKind::Closure { params, body } => NodeKind::Closure {
                params: params.clone(),
                body: self.boxed(body),
            },
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
                _ => self.tree(e),
            },
            ExprKind::List(items) => NodeKind::List(self.exprs(items)),
            ExprKind::Field(base, index) => NodeKind::Field(self.boxed(base), *index),
            ExprKind::Index(base, index) => NodeKind::Index(self.boxed(base), self.boxed(index)),
            ExprKind::Unary(op, operand) => NodeKind::Unary(*op, self.boxed(operand)),
            ExprKind::Binary(op, a, b) => NodeKind::Binary(*op, self.boxed(a), self.boxed(b)),
            ExprKind::If {
                guards,
                then,
                otherwise,
            } => NodeKind::If {
                guards: guards
                    .iter()
                    .map(|guard| match guard {
                        Guard::Cond(cond) => NodeGuard::Cond(self.expr(cond)),
                        Guard::Let(pattern, value) => {
                            NodeGuard::Let(pattern.clone(), self.expr(value))
                        }
                    })
                    .collect(),
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
            ExprKind::SnapshotRead { snapshot, member } => NodeKind::SnapshotRead {
                snapshot: self.boxed(snapshot),
                member: *member,
            },
            ExprKind::GameCall { .. }
            | ExprKind::Set(_)
            | ExprKind::EmptyMap
            | ExprKind::SimNext { .. } => self.tree(e),
        }
    }
}
