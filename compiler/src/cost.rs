//! The cost bound of a turn: an upper bound, computed from the program alone, on the work of
//! each phase of a turn, in the interpreter's units (evaluated nodes plus the elements builtins
//! walk and build; see `harness_runtime`'s step budget).
//!
//! The analysis is an abstract interpretation of the lowered [`Program`]. Every value gets a
//! [`Shape`]: for an `Int`, an interval; for a collection, a bound on its length and the shape of
//! its elements. Sizes come from literals and ranges (`range(0, 64)`), from the declared ranges of
//! config entries and tunables, from the bounds games declare for their queries
//! ([`crate::signatures::GameSig::bound`]), and from the cap on `range` itself ([`RANGE_CAP`]).
//! Every builtin that takes a closure runs it once per element of its receiver; a `sim.next`
//! runs the action, the branches of its effects' models and the observation handlers on each
//! branch. Functions are analysed at each call with the shapes of their arguments (they cannot
//! recurse); computed values once per snapshot and again after each patch that could change them.
//!
//! What has no bound is reported as unbounded, with the reason (a game query without a declared
//! size, a state list that grows with `+=`): the runtime's step and memory budgets still end such
//! a turn with an R-code. A finite bound over the limit is the error E0901, at the smallest
//! expression whose own bound passes it.
//!
//! This file walks expressions, statements, calls and previews. Its parts: `shape` (what is
//! known of a value), `measure` (work and the size a comparison walks), `builtins` (builtin
//! calls and closures), `reach` (what evaluating an expression reads), `state` (the state
//! slots' shapes over an episode) and `phases` (the bound of each phase of a turn).

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;

use rustc_hash::FxHashMap;

use crate::ir::{
    Action, BinaryOp, Body, ComputedId, Expr, ExprKind, FnId, Guard, Literal, MemberRef, Pattern,
    PatternKind, SrcSpan, Stmt, StmtKind,
};
use crate::lower::View;
use crate::types::Ty;

mod builtins;
mod measure;
mod phases;
mod reach;
mod shape;
mod state;

use measure::{Work, deep};
pub(crate) use phases::{LayerTurn, Turn};
use reach::action_roots;
pub(crate) use reach::{Needs, Reach};
pub(crate) use shape::Shape;
use shape::reply_shape;
pub(crate) use state::PatchSites;

/// The default limit on a phase's bound: the interpreter's default step budget per turn, so a
/// harness that checks within it never meets R0009 on that budget.
pub const DEFAULT_LIMIT: u64 = 50_000_000;

/// The longest list `range` builds (the interpreter refuses longer ones).
pub const RANGE_CAP: u64 = 1_000_000;

/// The most turns of an episode the cost bound assumes when a state grows turn after turn:
/// the runtime's default turn limit. A run allowed more turns (`--max-turns`) keeps the
/// runtime's step and memory budgets as the guarantee for such a state.
pub const TURN_CAP: u64 = 10_000;

/// A bound too large to state: nothing bounds it, or it passed `u64`.
pub const UNBOUNDED: u64 = u64::MAX;

/// The phases of a turn whose work is bounded, in turn order.
pub const PHASES: [&str; 5] = ["observe", "reflect", "revise", "decide", "act"];

/// The bound of one phase.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PhaseBound {
    /// The phase's name, one of [`PHASES`].
    pub phase: &'static str,
    /// The bound in steps; [`UNBOUNDED`] when nothing bounds it.
    pub steps: u64,
    /// The most `sim.next` previews the phase can make.
    pub previews: u64,
    /// Why the bound is unbounded, one line per source, sorted.
    pub unbounded: Vec<String>,
    /// The smallest expressions whose own bound passes the limit, with their bounds.
    pub over: Vec<(SrcSpan, u64)>,
}

/// The cost bound of a program's turn.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CostReport {
    /// The module.
    pub module: String,
    /// The limit the bounds were judged against.
    pub limit: u64,
    /// One bound per phase, in [`PHASES`] order.
    pub phases: Vec<PhaseBound>,
    /// The bound of a whole turn: the sum of the phases.
    pub turn: u64,
    /// Every expression evaluated in a turn whose own bound passes the limit (the smallest
    /// such ones), sorted: in the phases and in every computed value, read or not.
    pub over: Vec<(SrcSpan, u64)>,
}

impl CostReport {
    /// The phases whose finite bound passes the limit.
    pub fn over_limit(&self) -> impl Iterator<Item = &PhaseBound> {
        self.phases
            .iter()
            .filter(|p| p.steps != UNBOUNDED && p.steps > self.limit)
    }
}

/// Writes a bound for people: `1.2e6`-style for large ones, `unbounded` for [`UNBOUNDED`].
pub fn show(steps: u64) -> String {
    if steps == UNBOUNDED {
        "unbounded".to_owned()
    } else if steps < 100_000 {
        steps.to_string()
    } else {
        format!("{:.2e}", steps as f64)
    }
}

fn add(a: u64, b: u64) -> u64 {
    a.saturating_add(b)
}

fn mul(a: u64, b: u64) -> u64 {
    if a == 0 || b == 0 {
        0
    } else {
        a.saturating_mul(b)
    }
}

/// Computes the cost bound of `program`'s turn with every layer on. `bounds` are the game's
/// declared query bounds: the most elements of a collection query, the largest value of an
/// `Int` one. The report's spans are the view's, chunk-relative and labelled by chunk. The
/// computed values that `summaries` holds analyses of are read from it instead of analysed
/// again.
pub(crate) fn analyse(
    program: &View<'_>,
    bounds: &BTreeMap<String, u64>,
    limit: u64,
    summaries: &dyn Summaries,
) -> CostReport {
    let mut a = Analyser::new(program, bounds, limit, summaries);
    a.state = a.state_shapes();
    a.phases()
}

/// Analyses kept outside one run of the analysis: the query database keeps those of each group
/// of members (a layer's) per state of the slots, so that an edit inside one member analyses
/// again only its group's computed values.
pub(crate) trait Summaries {
    /// A number naming the state whose slots have the shapes `state`, for [`Summaries::get`].
    fn context(&self, state: &[Shape]) -> u32;
    /// The analysis of the computed value `c` in the state `context`, with what its body reads
    /// directly; `None` when it is to be analysed here. Shared, so that the many reads of one
    /// value copy no work or shape.
    fn get(&self, c: ComputedId, context: u32) -> Option<(Arc<Analysed>, Arc<Reach>)>;
    /// The walk of the bodies of the layer of index `layer` in the state `context`
    /// ([`Analyser::layer_turn`]); `None` when it is to be walked here.
    fn turn(&self, layer: usize, context: u32) -> Option<Arc<LayerTurn>>;
    /// The shapes of every state slot over an episode ([`Analyser::settle`]) from their
    /// initial shapes `initial`, with handlers run at most `observations` times; `None` when
    /// they are to be settled here.
    fn settled(&self, initial: &[Shape], observations: u64) -> Option<Vec<Shape>>;
}

/// The shapes over an episode of the state slots that the patches of `patches` write, from
/// their initial shapes `initial` (by slot; the others keep theirs), with handlers run at most
/// `observations` times ([`Analyser::settle`]). `program` is a partial view that holds the
/// slots, and every computed value, function and tunable the patches' bodies read: they are
/// analysed here.
pub(crate) fn settle<'p>(
    program: &'p View<'p>,
    patches: &PatchSites<'p>,
    initial: Vec<Shape>,
    bounds: &'p BTreeMap<String, u64>,
    observations: u64,
) -> Vec<Shape> {
    // The shapes do not depend on the limit: no expression is judged against one.
    let mut a = Analyser::new(program, bounds, UNBOUNDED, &Unkept);
    a.settle(initial, patches, observations)
}

/// No analyses kept: [`settle`] analyses every computed value it reads itself.
struct Unkept;

impl Summaries for Unkept {
    fn context(&self, _: &[Shape]) -> u32 {
        0
    }

    fn get(&self, _: ComputedId, _: u32) -> Option<(Arc<Analysed>, Arc<Reach>)> {
        None
    }

    fn turn(&self, _: usize, _: u32) -> Option<Arc<LayerTurn>> {
        None
    }

    fn settled(&self, _: &[Shape], _: u64) -> Option<Vec<Shape>> {
        None
    }
}

/// A computed value's analysis in one state, with what its body reads directly.
pub(crate) type Summary = (ComputedId, Arc<Analysed>, Arc<Reach>);

/// The analyses of the computed values `own` of a partial view `program` ([`Arena::Some`]) in
/// the state whose slots have the shapes `state`, with what each body reads directly, by id;
/// with `turn`, the walk of a layer's bodies in that state too ([`Analyser::layer_turn`]).
/// The computed values of other groups that they read come from `summaries`.
///
/// [`Arena::Some`]: crate::lower::Arena::Some
pub(crate) fn summarise<'p>(
    program: &'p View<'p>,
    own: &[ComputedId],
    turn: Option<&Turn<'p>>,
    state: Vec<Shape>,
    bounds: &'p BTreeMap<String, u64>,
    limit: u64,
    summaries: &'p dyn Summaries,
) -> (Vec<Summary>, Option<LayerTurn>) {
    let mut a = Analyser::new(program, bounds, limit, summaries);
    a.state = state;
    let computed = own
        .iter()
        .map(|&c| {
            let done = a.computed(c);
            let reads = Arc::new(Reach::of(&program.computed[c.index()].body.expr));
            (c, done, reads)
        })
        .collect();
    (computed, turn.map(|turn| a.layer_turn(turn)))
}

struct Analyser<'p> {
    p: &'p View<'p>,
    bounds: &'p BTreeMap<String, u64>,
    limit: u64,
    consts: Vec<Option<Shape>>,
    /// Each computed value's body, analysed in the current state ([`Analysed`]).
    computed: FxHashMap<ComputedId, Arc<Analysed>>,
    /// Whether a computed value's evaluation can reach `sim.next`.
    sim: FxHashMap<ComputedId, bool>,
    state: Vec<Shape>,
    /// Functions analysed at a call, by the function and its arguments' whole shapes: a call
    /// with other element shapes, fields or reasons is analysed again, so a memoised result is
    /// the one a fresh analysis would give. Shared, so that a memoised call copies no work or
    /// shape it does not return.
    fns: FxHashMap<(FnId, Vec<Shape>), Arc<Analysed>>,
    over: Vec<(SrcSpan, u64)>,
    in_preview: bool,
    /// The computed values read in previews' successor snapshots ([`Analyser::snapshot_reads`]),
    /// found at the first preview: finding them walks every body, and most harnesses make none.
    snapshot_reads: Option<BTreeSet<ComputedId>>,
    /// The shape of an `llm` reply by its `LlmResult` enum (`Ok` carries it), from the reply's
    /// declared bounds: the `len` bound every list field must have and the numeric ranges.
    replies: HashMap<crate::ir::EnumId, Shape>,
    /// What each computed value's body refers to directly, walked once for all the
    /// reachability questions ([`Analyser::reach`]) instead of once per question.
    computed_reads: FxHashMap<ComputedId, Arc<Reach>>,
    /// The same for each function's body.
    fn_reads: FxHashMap<FnId, Reach>,
    /// Where analyses of computed values are kept ([`Summaries`]).
    summaries: &'p dyn Summaries,
    /// The state of [`Analyser::state`] as [`Summaries::context`] names it, asked for at the
    /// first computed value read in it; `None` after the state changes.
    context: Option<u32>,
    /// Set while the state initialisers run: they see the slots after theirs unset, a state no
    /// round has, so what they read is analysed here and not kept.
    initialising: bool,
}

impl Analysed {
    /// What is known of a computed value's analysis when only its shape is: enough for a body
    /// that reads it, which counts one step for the read.
    pub(crate) fn of_shape(shape: Shape) -> Self {
        Analysed {
            shape,
            ..Analysed::default()
        }
    }

    /// The shape of the value.
    pub(crate) fn shape(&self) -> &Shape {
        &self.shape
    }
}

impl<'p> Analyser<'p> {
    fn new(
        program: &'p View<'p>,
        bounds: &'p BTreeMap<String, u64>,
        limit: u64,
        summaries: &'p dyn Summaries,
    ) -> Self {
        let mut a = Analyser {
            p: program,
            bounds,
            limit,
            consts: vec![None; program.consts.len()],
            computed: FxHashMap::default(),
            sim: FxHashMap::default(),
            state: Vec::new(),
            fns: FxHashMap::default(),
            over: Vec::new(),
            in_preview: false,
            snapshot_reads: None,
            replies: HashMap::new(),
            computed_reads: FxHashMap::default(),
            fn_reads: FxHashMap::default(),
            summaries,
            context: None,
            initialising: false,
        };
        for llm in &program.llms {
            let reply = reply_shape(&llm.shape);
            let joined = match a.replies.get(&llm.result_enum) {
                Some(other) => other.join(&reply),
                None => reply,
            };
            a.replies.insert(llm.result_enum, joined);
        }
        a
    }

    /// The analysis of `c` in the current state kept in [`Analyser::summaries`], if any.
    fn kept(&mut self, c: ComputedId) -> Option<(Arc<Analysed>, Arc<Reach>)> {
        if self.initialising {
            return None;
        }
        let context = match self.context {
            Some(context) => context,
            None => *self.context.insert(self.summaries.context(&self.state)),
        };
        self.summaries.get(c, context)
    }
}

type Locals = Vec<Shape>;

/// A body analysed once: its work (the computed values it reads cost one step each), its
/// value's shape and the expressions in it over the limit. What a body reports is its own: it
/// does not depend on which other bodies were analysed before it, so the same body gives the
/// same result whatever the order of the walk that reached it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Analysed {
    work: Work,
    shape: Shape,
    over: Vec<(SrcSpan, u64)>,
}

impl<'p> Analyser<'p> {
    fn locals(&self, body: &crate::ir::Frame) -> Locals {
        body.locals
            .iter()
            .map(|l| Shape::of_type_for(&l.ty, || Arc::from(format!("the local `{}`", l.name))))
            .collect()
    }

    /// A handler's locals: the observation's fields first, with the sizes the game declares.
    fn handler_locals(&self, h: &crate::ir::Handler) -> Locals {
        let mut locals = self.locals(&h.frame);
        for ((slot, bound), local) in locals.iter_mut().zip(&h.bounds).zip(&h.frame.locals) {
            if let Some(max) = bound {
                let why = Arc::from(format!("the field `{}` of `{}`", local.name, h.observation));
                *slot = Shape::bounded(&local.ty, *max, &why);
            }
        }
        locals
    }

    /// Notes an expression whose own bound passes the limit when none inside it does.
    fn judge(&mut self, span: SrcSpan, before: usize, work: &Work) {
        if work.steps != UNBOUNDED && work.steps > self.limit && self.over.len() == before {
            self.over.push((span, work.steps));
        }
    }

    fn expr(&mut self, e: &'p Expr, locals: &mut Locals) -> (Work, Shape) {
        harness_grammar::stack::guarded(|| {
            let before = self.over.len();
            let (mut work, shape) = self.expr_kind(e, locals);
            work.steps = add(work.steps, 1);
            self.judge(e.span, before, &work);
            (work, shape)
        })
    }

    fn exprs(&mut self, es: &'p [Expr], locals: &mut Locals) -> (Work, Vec<Shape>) {
        let mut work = Work::default();
        let mut shapes = Vec::with_capacity(es.len());
        for e in es {
            let (w, s) = self.expr(e, locals);
            work.plus(&w);
            shapes.push(s);
        }
        (work, shapes)
    }

    fn expr_kind(&mut self, e: &'p Expr, locals: &mut Locals) -> (Work, Shape) {
        match &e.kind {
            ExprKind::Lit(Literal::Int(n)) => (Work::default(), Shape::int(*n as i128, *n as i128)),
            ExprKind::Lit(_) | ExprKind::None | ExprKind::FnRef(_) => (
                Work::default(),
                Shape::of_type_for(&e.ty, || Arc::from("a literal")),
            ),
            ExprKind::EmptyMap => (Work::default(), Shape::collection(0, Shape::scalar())),
            ExprKind::Local(l) => (
                Work::default(),
                locals.get(l.index()).cloned().unwrap_or_else(Shape::scalar),
            ),
            ExprKind::Member(m) => (Work::default(), self.member(*m)),
            ExprKind::Config(c) => {
                let param = &self.p.config[c.index()];
                (Work::default(), self.param_shape(param))
            }
            ExprKind::Const(c) => (Work::default(), self.constant(c.index())),
            ExprKind::GameProperty(name) => (Work::default(), self.query(name, &e.ty)),
            ExprKind::GameCall { name, args } => {
                let (work, _) = self.exprs(args, locals);
                (work, self.query(name, &e.ty))
            }
            ExprKind::CallFn { func, args } => {
                let (mut work, shapes) = self.exprs(args, locals);
                let (w, s) = self.call_fn(*func, shapes);
                work.plus(&w);
                (work, s)
            }
            ExprKind::CallBuiltin { name, args } => self.builtin(name, args, &e.ty, locals),
            ExprKind::Closure { body, .. } => self.expr(body, locals),
            ExprKind::Variant { payload, .. } => {
                let (work, _) = self.exprs(payload, locals);
                (work, Shape::scalar())
            }
            ExprKind::Some(inner) => {
                let (work, s) = self.expr(inner, locals);
                (work, Shape::collection(1, s))
            }
            ExprKind::Record(fields) => {
                let (work, shapes) = self.exprs(fields, locals);
                (
                    work,
                    Shape {
                        fields: Some(Arc::new(shapes)),
                        ..Shape::scalar()
                    },
                )
            }
            ExprKind::List(items) | ExprKind::Set(items) => {
                let (mut work, shapes) = self.exprs(items, locals);
                let elem = shapes.iter().skip(1).fold(
                    shapes.first().cloned().unwrap_or_else(Shape::scalar),
                    |a, b| a.join(b),
                );
                let shape = Shape::collection(items.len() as u64, elem);
                work.walk(&shape);
                (work, shape)
            }
            ExprKind::Field(base, index) => {
                let (work, s) = self.expr(base, locals);
                let field = s
                    .fields
                    .as_ref()
                    .and_then(|f| f.get(*index as usize).cloned())
                    .unwrap_or_else(|| {
                        Shape::of_type_for(&e.ty, || {
                            Arc::from("a record field read where the record's making is not seen")
                        })
                    });
                (work, field)
            }
            ExprKind::Index(base, index) => {
                let (mut work, s) = self.expr(base, locals);
                let (w, _) = self.expr(index, locals);
                work.plus(&w);
                (work, s.elem())
            }
            ExprKind::Unary(_, inner) => {
                let (work, s) = self.expr(inner, locals);
                let shape = if e.ty == Ty::Int {
                    Shape::int(-s.hi, -s.lo)
                } else {
                    Shape::scalar()
                };
                (work, shape)
            }
            ExprKind::Binary(op, x, y) => {
                let (mut work, a) = self.expr(x, locals);
                let (w, b) = self.expr(y, locals);
                work.plus(&w);
                let shape = self.binary(*op, &a, &b, &e.ty);
                match op {
                    BinaryOp::Add if shape.len > 0 => work.walk(&shape),
                    BinaryOp::Add | BinaryOp::And | BinaryOp::Or => {}
                    // A comparison walks both operands in step until they differ: at most every
                    // element of the smaller one at every depth, which the larger one bounds.
                    _ => {
                        let (da, db) = (deep(&a, &x.ty), deep(&b, &y.ty));
                        work.walk(if da.len >= db.len { &da } else { &db });
                    }
                }
                (work, shape)
            }
            ExprKind::If {
                guards,
                then,
                otherwise,
            } => {
                let mut work = self.guards(guards, locals);
                let (t, ts) = self.expr(then, locals);
                let (o, os) = self.expr(otherwise, locals);
                let mut branch = t;
                branch.max(&o);
                work.plus(&branch);
                (work, ts.join(&os))
            }
            ExprKind::Match(scrutinee, arms) => {
                let (mut work, s) = self.expr(scrutinee, locals);
                let mut arm_work = Work::default();
                let mut shape: Option<Shape> = None;
                for arm in arms {
                    self.bind(&arm.pattern, &s, locals);
                    let (w, a) = self.expr(&arm.body, locals);
                    arm_work.max(&w);
                    shape = Some(match shape {
                        Some(prev) => prev.join(&a),
                        None => a,
                    });
                }
                work.plus(&arm_work);
                (work, shape.unwrap_or_else(Shape::scalar))
            }
            ExprKind::Let {
                pattern,
                value,
                body,
            } => {
                let (mut work, s) = self.expr(value, locals);
                self.bind(pattern, &s, locals);
                let (w, b) = self.expr(body, locals);
                work.plus(&w);
                (work, b)
            }
            ExprKind::SimNext { action, args } => {
                let (mut work, _) = self.exprs(args, locals);
                let (w, branches) = self.preview(self.p.actions[action.index()]);
                work.plus(&w);
                work.previews = add(work.previews, 1);
                (work, Shape::collection(branches, Shape::scalar()))
            }
            ExprKind::SnapshotRead { snapshot, member } => {
                let (work, _) = self.expr(snapshot, locals);
                (work, self.member(*member))
            }
        }
    }

    fn binary(&self, op: BinaryOp, a: &Shape, b: &Shape, ty: &Ty) -> Shape {
        if *ty == Ty::Int {
            return match op {
                BinaryOp::Add => Shape::int(a.lo + b.lo, a.hi + b.hi),
                BinaryOp::Sub => Shape::int(a.lo - b.hi, a.hi - b.lo),
                BinaryOp::Mul => {
                    let c = [
                        a.lo.saturating_mul(b.lo),
                        a.lo.saturating_mul(b.hi),
                        a.hi.saturating_mul(b.lo),
                        a.hi.saturating_mul(b.hi),
                    ];
                    Shape::int(
                        c.iter().copied().min().unwrap_or(0),
                        c.iter().copied().max().unwrap_or(0),
                    )
                }
                BinaryOp::Div if b.lo > 0 => Shape::int(a.lo.min(0), a.hi.max(0)),
                BinaryOp::Rem if b.lo > 0 => Shape::int((1 - b.hi).min(0), (b.hi - 1).max(0)),
                _ => Shape::scalar(),
            };
        }
        match op {
            BinaryOp::Add if a.len > 0 || b.len > 0 => Shape {
                why: a.why.clone().or_else(|| b.why.clone()),
                ..Shape::collection(add(a.len, b.len), a.elem().join(&b.elem()))
            },
            _ => Shape::scalar(),
        }
    }

    fn guards(&mut self, guards: &'p [Guard], locals: &mut Locals) -> Work {
        let mut work = Work::default();
        for guard in guards {
            match guard {
                Guard::Cond(e) => work.plus(&self.expr(e, locals).0),
                Guard::Let(pattern, e) => {
                    let (w, s) = self.expr(e, locals);
                    work.plus(&w);
                    self.bind(pattern, &s, locals);
                }
            }
        }
        work
    }

    fn bind(&self, pattern: &Pattern, shape: &Shape, locals: &mut Locals) {
        match &pattern.kind {
            PatternKind::Bind(l) => {
                if let Some(slot) = locals.get_mut(l.index()) {
                    *slot = shape.clone();
                }
            }
            PatternKind::Some(inner) => self.bind(inner, &shape.elem(), locals),
            // The `Ok` payload of an `llm` result is a reply, whose sizes are declared.
            PatternKind::Variant {
                enum_id,
                index: 0,
                payload,
            } if self.replies.contains_key(enum_id) => {
                if let (Some(inner), Some(reply)) = (payload.first(), self.replies.get(enum_id)) {
                    self.bind(inner, reply, locals);
                }
            }
            // Other payload bindings keep the shape of their declared type.
            _ => {}
        }
    }

    fn param_shape(&self, param: &crate::ir::Param) -> Shape {
        match (&param.ty, &param.range) {
            (Ty::Int, Some(range)) => match (&range.lo, &range.hi) {
                (Literal::Int(lo), Literal::Int(hi)) => {
                    Shape::int(*lo as i128, *hi as i128 - i128::from(!range.inclusive))
                }
                _ => Shape::scalar(),
            },
            // A collection's range bounds its length (the runtime refuses a longer value).
            (
                Ty::List(_) | Ty::Set(_) | Ty::Map(..),
                Some(crate::ir::Range {
                    hi: Literal::Int(hi),
                    inclusive,
                    ..
                }),
            ) => {
                let why = Arc::from(format!("the parameter `{}`", param.name));
                let most = u64::try_from(*hi - i64::from(!inclusive)).unwrap_or(0);
                Shape {
                    len: most,
                    why: None,
                    ..Shape::of_type(&param.ty, &why)
                }
            }
            (ty, _) => {
                Shape::of_type_for(ty, || Arc::from(format!("the parameter `{}`", param.name)))
            }
        }
    }

    fn constant(&mut self, i: usize) -> Shape {
        if let Some(s) = &self.consts[i] {
            return s.clone();
        }
        let body = &self.p.consts[i].value;
        let mut locals = self.locals(&body.frame);
        // A constant is computed once before the episode, so its work is no turn's.
        let before = self.over.len();
        let (_, s) = self.expr(&body.expr, &mut locals);
        self.over.truncate(before);
        self.consts[i] = Some(s.clone());
        s
    }

    fn query(&self, name: &str, ty: &Ty) -> Shape {
        let bound = self.bounds.get(name).copied();
        match (ty, bound) {
            (Ty::Int, Some(max)) => Shape::int(0, max as i128),
            (Ty::Int, None) => Shape::scalar(),
            (Ty::List(t) | Ty::Set(t), Some(max)) => {
                Shape::collection(max, Shape::of_type(t, &Arc::from(format!("`game.{name}`"))))
            }
            (ty, _) => Shape::of_type(
                ty,
                &Arc::from(format!(
                    "`game.{name}`, whose size the game does not declare"
                )),
            ),
        }
    }

    fn member(&mut self, m: MemberRef) -> Shape {
        match m {
            MemberRef::State(s) => self
                .state
                .get(s.index())
                .cloned()
                .unwrap_or_else(Shape::scalar),
            MemberRef::Tunable(t) => {
                let param = &self.p.tunables[t.index()];
                self.param_shape(param)
            }
            MemberRef::Computed(c) => self.computed(c).shape.clone(),
        }
    }

    /// A computed value's body, analysed once: reads of it then cost one step each, and its
    /// evaluations are counted per snapshot by [`Analyser::recompute`]. The expressions over the
    /// limit in it are kept with it ([`Analyser::phases`] reports them), not among those of the
    /// walk that first read it: a read costs one step, so they do not explain that walk's bound.
    fn computed(&mut self, c: ComputedId) -> Arc<Analysed> {
        if let Some(done) = self.computed.get(&c) {
            return done.clone();
        }
        if let Some((done, reads)) = self.kept(c) {
            self.computed.insert(c, done.clone());
            self.computed_reads.entry(c).or_insert(reads);
            return done;
        }
        let body: &'p Body = &self.p.computed[c.index()].body;
        let done = self.isolated(|this| {
            let mut locals = this.locals(&body.frame);
            let saved = std::mem::replace(&mut this.in_preview, false);
            let result = this.expr(&body.expr, &mut locals);
            this.in_preview = saved;
            result
        });
        let done = Arc::new(done);
        self.computed.insert(c, done.clone());
        done
    }

    /// Analyses a body with a list of its own for what it finds over the limit.
    fn isolated(&mut self, run: impl FnOnce(&mut Self) -> (Work, Shape)) -> Analysed {
        let outer = std::mem::take(&mut self.over);
        let (work, shape) = run(self);
        let over = std::mem::replace(&mut self.over, outer);
        Analysed { work, shape, over }
    }

    /// Evaluating the computed values of `set` once in a snapshot; inside a preview, only those
    /// that reach no `sim.next` (a preview cannot make another).
    fn recompute(&mut self, set: &BTreeSet<ComputedId>, in_preview: bool) -> Work {
        let mut total = Work::default();
        for &c in set {
            if in_preview && self.reaches_sim(c) {
                continue;
            }
            total.plus(&self.computed(c).work);
        }
        total
    }

    /// A call of `func` with arguments of the shapes `args`. The call's work includes the
    /// body's, so what the body finds over the limit is noted at every call, memoised or not:
    /// the expressions around a call are judged the same at each of them.
    fn call_fn(&mut self, func: FnId, args: Vec<Shape>) -> (Work, Shape) {
        let key = (func, args);
        let done = match self.fns.get(&key) {
            Some(done) => done.clone(),
            None => {
                let f = &self.p.fns[func.index()];
                let done = Arc::new(self.isolated(|this| {
                    let mut locals = this.locals(&f.body.frame);
                    for (slot, shape) in locals.iter_mut().zip(&key.1) {
                        *slot = shape.clone();
                    }
                    this.expr(&f.body.expr, &mut locals)
                }));
                self.fns.insert(key, done.clone());
                done
            }
        };
        self.over.extend(done.over.iter().copied());
        (done.work.clone(), done.shape.clone())
    }

    /// The work of a `sim.next` of `action` and the most successor snapshots it yields.
    fn preview(&mut self, action: &'p Action) -> (Work, u64) {
        let saved = std::mem::replace(&mut self.in_preview, true);
        let (mut work, emits, patches) = self.action(action);
        let mut roots = action_roots(action);
        for layer in &self.p.layers {
            for h in &layer.handlers {
                roots.stmts.push(&h.body);
            }
        }
        let mut set = self.reach(&roots);
        if self.snapshot_reads.is_none() {
            self.snapshot_reads = Some(self.snapshot_reads());
        }
        set.extend(self.snapshot_reads.iter().flatten().copied());
        let once = self.recompute(&set, true);
        work.plus(&once.times(add(patches, 1)));
        let mut branches = 1u64;
        for effect in emits {
            let mut most = Work::default();
            let mut most_branches = 0u64;
            for layer in &self.p.layers {
                for model in layer.models.iter().filter(|m| m.effect == effect) {
                    let mut locals = self.locals(&model.frame);
                    let mut w = Work::default();
                    for branch in &model.branches {
                        w.plus(&self.exprs(&branch.args, &mut locals).0);
                        if let Some(p) = &branch.probability {
                            w.plus(&self.expr(p, &mut locals).0);
                        }
                        let (h, hp) = self.handlers(&branch.observation);
                        w.plus(&h);
                        // Each successor snapshot evaluates what is read in it afresh.
                        w.plus(&once.times(add(hp, 1)));
                    }
                    most.max(&w);
                    most_branches = most_branches.max(model.branches.len() as u64);
                }
            }
            work.plus(&most);
            branches = mul(branches, most_branches.max(1));
        }
        self.in_preview = saved;
        (work, branches)
    }

    /// The handlers of one observation kind: their work and the patches they can make.
    fn handlers(&mut self, observation: &str) -> (Work, u64) {
        let mut work = Work::default();
        let mut patches = 0;
        for layer in &self.p.layers {
            for h in layer
                .handlers
                .iter()
                .filter(|h| h.observation == observation)
            {
                let mut locals = self.handler_locals(h);
                let (w, _, p) = self.stmts(&h.body, &mut locals);
                work.plus(&w);
                patches = add(patches, p);
            }
        }
        (work, patches)
    }

    /// An action's availability, validations and body: work, the effects it can emit, and the
    /// patches it can make.
    fn action(&mut self, action: &'p Action) -> (Work, Vec<String>, u64) {
        let mut locals = self.locals(&action.frame);
        let mut work = Work::default();
        if let Some(a) = &action.available {
            work.plus(&self.expr(a, &mut locals).0);
        }
        for r in &action.requires {
            work.plus(&self.expr(&r.cond, &mut locals).0);
        }
        let (w, emits, patches) = self.stmts(&action.body, &mut locals);
        work.plus(&w);
        (work, emits, patches)
    }

    /// Statements: their work, the effects they can emit (with repeats), and the patches they
    /// can make along the longest path.
    fn stmts(&mut self, stmts: &'p [Stmt], locals: &mut Locals) -> (Work, Vec<String>, u64) {
        let mut work = Work::default();
        let mut emits = Vec::new();
        let mut patches = 0u64;
        for stmt in stmts {
            work.steps = add(work.steps, 1);
            match &stmt.kind {
                StmtKind::Let(pattern, value) => {
                    let (w, s) = self.expr(value, locals);
                    work.plus(&w);
                    self.bind(pattern, &s, locals);
                }
                StmtKind::Patch { place, value, .. } => {
                    for step in &place.path {
                        if let crate::ir::PlaceStep::Index(i) = step {
                            work.plus(&self.expr(i, locals).0);
                        }
                    }
                    let (w, s) = self.expr(value, locals);
                    work.plus(&w);
                    work.walk(&s);
                    patches = add(patches, 1);
                }
                StmtKind::LetLlm { pattern, args, .. } => {
                    work.plus(&self.exprs(args, locals).0);
                    let s = Shape::scalar();
                    self.bind(pattern, &s, locals);
                }
                StmtKind::Emit { effect, args } => {
                    work.plus(&self.exprs(args, locals).0);
                    emits.push(effect.clone());
                }
                StmtKind::Revise { value, .. } => {
                    work.plus(&self.expr(value, locals).0);
                    patches = add(patches, 1);
                }
                StmtKind::If {
                    guards,
                    then,
                    otherwise,
                } => {
                    work.plus(&self.guards(guards, locals));
                    let (t, te, tp) = self.stmts(then, locals);
                    let (o, oe, op) = self.stmts(otherwise, locals);
                    let mut branch = t;
                    branch.max(&o);
                    work.plus(&branch);
                    emits.extend(if te.len() >= oe.len() { te } else { oe });
                    patches = add(patches, tp.max(op));
                }
                StmtKind::Halt { .. } => {}
            }
        }
        (work, emits, patches)
    }
}
