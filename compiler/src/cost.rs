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

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;

use crate::ir::{
    Action, BinaryOp, Body, ComputedId, Expr, ExprKind, FnId, Guard, Literal, MemberRef, Pattern,
    PatternKind, SrcSpan, Stmt, StmtKind,
};
use crate::lower::View;
use crate::types::Ty;

mod builtins;
mod measure;

use measure::{Work, deep};

/// The default limit on a phase's bound: the interpreter's default step budget per turn, so a
/// harness that checks within it never meets R0009 on that budget.
pub const DEFAULT_LIMIT: u64 = 50_000_000;

/// The longest list `range` builds (the interpreter refuses longer ones).
pub const RANGE_CAP: u64 = 1_000_000;

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

/// What the analysis knows of a value.
#[derive(Clone, Debug, PartialEq)]
struct Shape {
    /// For an `Int`: the interval it lies in.
    lo: i128,
    hi: i128,
    /// For a collection (an `Option` counts as one of at most one element): the most elements.
    len: u64,
    /// Why `len` is [`UNBOUNDED`].
    why: Option<Arc<str>>,
    /// The elements' shape (a map's values).
    elem: Option<Arc<Shape>>,
    /// A record's fields, when the record was built where the analysis saw it.
    fields: Option<Arc<Vec<Shape>>>,
}

impl Shape {
    fn scalar() -> Self {
        Shape {
            lo: i64::MIN as i128,
            hi: i64::MAX as i128,
            len: 0,
            why: None,
            elem: None,
            fields: None,
        }
    }

    fn int(lo: i128, hi: i128) -> Self {
        Shape {
            lo: lo.max(i64::MIN as i128),
            hi: hi.min(i64::MAX as i128),
            ..Shape::scalar()
        }
    }

    fn collection(len: u64, elem: Shape) -> Self {
        Shape {
            len,
            elem: Some(Arc::new(elem)),
            ..Shape::scalar()
        }
    }

    /// The shape every value of `ty` has; collections are unbounded, for `why`.
    fn of_type(ty: &Ty, why: &Arc<str>) -> Self {
        match ty {
            Ty::Option(t) => Shape::collection(1, Shape::of_type(t, why)),
            Ty::List(t) | Ty::Set(t) | Ty::Map(_, t) => Shape {
                why: Some(why.clone()),
                ..Shape::collection(UNBOUNDED, Shape::of_type(t, why))
            },
            Ty::Preview => Shape {
                why: Some(why.clone()),
                ..Shape::collection(UNBOUNDED, Shape::scalar())
            },
            _ => Shape::scalar(),
        }
    }

    /// [`Shape::of_type`], with the reason made only for a type that keeps it (one holding a
    /// collection): the analysis asks for the shape of a type at most nodes, and most are scalars.
    fn of_type_for(ty: &Ty, why: impl FnOnce() -> Arc<str>) -> Self {
        match ty {
            Ty::Option(_) | Ty::List(_) | Ty::Set(_) | Ty::Map(..) | Ty::Preview => {
                Shape::of_type(ty, &why())
            }
            _ => Shape::scalar(),
        }
    }

    fn elem(&self) -> Shape {
        self.elem.as_deref().cloned().unwrap_or_else(Shape::scalar)
    }

    /// The least shape covering both.
    fn join(&self, other: &Shape) -> Shape {
        let (len, why) = if self.len >= other.len {
            (self.len, self.why.clone().or_else(|| other.why.clone()))
        } else {
            (other.len, other.why.clone())
        };
        let elem = match (&self.elem, &other.elem) {
            (Some(a), Some(b)) => Some(Arc::new(a.join(b))),
            (a, b) => a.clone().or_else(|| b.clone()),
        };
        let fields = match (&self.fields, &other.fields) {
            (Some(a), Some(b)) if a.len() == b.len() => Some(Arc::new(
                a.iter().zip(b.iter()).map(|(x, y)| x.join(y)).collect(),
            )),
            _ => None,
        };
        Shape {
            lo: self.lo.min(other.lo),
            hi: self.hi.max(other.hi),
            len,
            why,
            elem,
            fields,
        }
    }
}

/// Computes the cost bound of `program`'s turn with every layer on. `bounds` are the game's
/// declared query bounds: the most elements of a collection query, the largest value of an
/// `Int` one. The report's spans are the view's, chunk-relative and labelled by chunk.
pub fn analyse(program: &View<'_>, bounds: &BTreeMap<String, u64>, limit: u64) -> CostReport {
    let mut a = Analyser {
        p: program,
        bounds,
        limit,
        consts: vec![None; program.consts.len()],
        computed: vec![None; program.computed.len()],
        sim: vec![None; program.computed.len()],
        state: Vec::new(),
        fns: HashMap::new(),
        over: Vec::new(),
        in_preview: false,
        snapshot_reads: BTreeSet::new(),
        computed_reads: vec![None; program.computed.len()],
        fn_reads: vec![None; program.fns.len()],
    };
    a.snapshot_reads = a.snapshot_reads();
    a.state = a.state_shapes();
    a.phases()
}

struct Analyser<'p> {
    p: &'p View<'p>,
    bounds: &'p BTreeMap<String, u64>,
    limit: u64,
    consts: Vec<Option<Shape>>,
    /// Each computed value's body: its work (computed reads in it cost one step) and shape.
    computed: Vec<Option<(Work, Shape)>>,
    /// Whether a computed value's evaluation can reach `sim.next`.
    sim: Vec<Option<bool>>,
    state: Vec<Shape>,
    /// Functions analysed at a call, by the function and its arguments' shapes.
    fns: HashMap<(FnId, String), (Work, Shape)>,
    over: Vec<(SrcSpan, u64)>,
    in_preview: bool,
    /// The computed values read in previews' successor snapshots ([`Analyser::snapshot_reads`]).
    snapshot_reads: BTreeSet<ComputedId>,
    /// What each computed value's body refers to directly, walked once for all the
    /// reachability questions ([`Analyser::reach`]) instead of once per question.
    computed_reads: Vec<Option<Reach>>,
    /// The same for each function's body.
    fn_reads: Vec<Option<Reach>>,
}

type Locals = Vec<Shape>;

/// What an expression refers to directly: a `sim.next`, computed values and functions.
#[derive(Clone, Default)]
struct Reach {
    sim: bool,
    computed: Vec<ComputedId>,
    fns: Vec<FnId>,
    /// Computed values read in a preview's successor snapshots (`s.member`).
    snapshot: Vec<ComputedId>,
}

impl Reach {
    fn of(body: &Expr) -> Reach {
        let mut reach = Reach::default();
        crate::visit::Visit::expr(&mut reach, body);
        reach
    }
}

impl crate::visit::Visit for Reach {
    fn expr(&mut self, e: &Expr) {
        match &e.kind {
            ExprKind::SimNext { .. } => self.sim = true,
            ExprKind::Member(MemberRef::Computed(c)) => self.computed.push(*c),
            ExprKind::CallFn { func, .. } | ExprKind::FnRef(func) => self.fns.push(*func),
            ExprKind::SnapshotRead {
                member: MemberRef::Computed(c),
                ..
            } => self.snapshot.push(*c),
            _ => {}
        }
        crate::visit::walk::expr(self, e);
    }
}

/// The roots of a reachability question: expressions and statement lists.
#[derive(Default)]
struct Roots<'p> {
    exprs: Vec<&'p Expr>,
    stmts: Vec<&'p [Stmt]>,
}

impl<'p> Analyser<'p> {
    fn locals(&self, body: &crate::ir::Frame) -> Locals {
        body.locals
            .iter()
            .map(|l| Shape::of_type_for(&l.ty, || Arc::from(format!("the local `{}`", l.name))))
            .collect()
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
            // Payload bindings keep the shape of their declared type.
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
            MemberRef::Computed(c) => self.computed(c).1,
        }
    }

    /// A computed value's body, analysed once: reads of it then cost one step each, and its
    /// evaluations are counted per snapshot by [`Analyser::recompute`].
    fn computed(&mut self, c: ComputedId) -> (Work, Shape) {
        if let Some(done) = &self.computed[c.index()] {
            return done.clone();
        }
        let body: &'p Body = &self.p.computed[c.index()].body;
        let mut locals = self.locals(&body.frame);
        let saved = std::mem::replace(&mut self.in_preview, false);
        let result = self.expr(&body.expr, &mut locals);
        self.in_preview = saved;
        self.computed[c.index()] = Some(result.clone());
        result
    }

    /// Whether evaluating a computed value can reach `sim.next`.
    fn reaches_sim(&mut self, c: ComputedId) -> bool {
        if let Some(done) = self.sim[c.index()] {
            return done;
        }
        self.sim[c.index()] = Some(false);
        let found = self.expr_reaches_sim(&self.p.computed[c.index()].body.expr);
        self.sim[c.index()] = Some(found);
        found
    }

    fn expr_reaches_sim(&mut self, e: &'p Expr) -> bool {
        let mut reach = Reach::default();
        crate::visit::Visit::expr(&mut reach, e);
        reach.sim
            || reach.computed.into_iter().any(|c| self.reaches_sim(c))
            || reach.fns.into_iter().any(|f| {
                let body = &self.p.fns[f.index()].body.expr;
                self.expr_reaches_sim(body)
            })
    }

    /// The computed values that evaluating `roots` can read in its snapshot, through other
    /// computed values and functions (not those read inside a preview's own snapshots).
    fn reach(&mut self, roots: &Roots<'p>) -> BTreeSet<ComputedId> {
        let mut reach = Reach::default();
        for e in &roots.exprs {
            crate::visit::Visit::expr(&mut reach, e);
        }
        for list in &roots.stmts {
            crate::visit::walk::stmts(&mut reach, list);
        }
        let mut found = BTreeSet::new();
        let mut fns_seen = BTreeSet::new();
        let (mut computed, mut fns) = (reach.computed, reach.fns);
        loop {
            if let Some(c) = computed.pop() {
                if found.insert(c) {
                    let inner = self.computed_reads(c);
                    computed.extend(inner.computed.iter().copied());
                    fns.extend(inner.fns.iter().copied());
                }
            } else if let Some(f) = fns.pop() {
                if fns_seen.insert(f) {
                    let inner = self.fn_reads(f);
                    computed.extend(inner.computed.iter().copied());
                    fns.extend(inner.fns.iter().copied());
                }
            } else {
                break;
            }
        }
        found
    }

    /// What a computed value's body refers to directly, walked on first use.
    fn computed_reads(&mut self, c: ComputedId) -> &Reach {
        let p = self.p;
        self.computed_reads[c.index()]
            .get_or_insert_with(|| Reach::of(&p.computed[c.index()].body.expr))
    }

    /// What a function's body refers to directly, walked on first use.
    fn fn_reads(&mut self, f: FnId) -> &Reach {
        let p = self.p;
        self.fn_reads[f.index()].get_or_insert_with(|| Reach::of(&p.fns[f.index()].body.expr))
    }

    /// The computed values read in any preview's successor snapshots, with what they read.
    fn snapshot_reads(&mut self) -> BTreeSet<ComputedId> {
        let p = self.p;
        let mut snapshot = Vec::new();
        for c in 0..p.computed.len() {
            snapshot.extend(
                self.computed_reads(ComputedId(c as u32))
                    .snapshot
                    .iter()
                    .copied(),
            );
        }
        for f in 0..p.fns.len() {
            snapshot.extend(self.fn_reads(FnId(f as u32)).snapshot.iter().copied());
        }
        let mut roots = Roots::default();
        let read: Vec<&'p Expr> = snapshot
            .iter()
            .map(|c| &p.computed[c.index()].body.expr)
            .collect();
        roots.exprs.extend(read);
        let mut set = self.reach(&roots);
        set.extend(snapshot);
        set
    }

    /// Evaluating the computed values of `set` once in a snapshot; inside a preview, only those
    /// that reach no `sim.next` (a preview cannot make another).
    fn recompute(&mut self, set: &BTreeSet<ComputedId>, in_preview: bool) -> Work {
        let mut total = Work::default();
        for &c in set {
            if in_preview && self.reaches_sim(c) {
                continue;
            }
            total.plus(&self.computed(c).0);
        }
        total
    }

    fn call_fn(&mut self, func: FnId, args: Vec<Shape>) -> (Work, Shape) {
        let key = (
            func,
            args.iter()
                .map(|s| format!("{}:{}:{}", s.lo, s.hi, s.len))
                .collect::<Vec<_>>()
                .join(","),
        );
        if let Some(done) = self.fns.get(&key) {
            return done.clone();
        }
        let f = &self.p.fns[func.index()];
        let mut locals = self.locals(&f.body.frame);
        for (slot, shape) in locals.iter_mut().zip(args) {
            *slot = shape;
        }
        let result = self.expr(&f.body.expr, &mut locals);
        self.fns.insert(key, result.clone());
        result
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
        set.extend(self.snapshot_reads.iter().copied());
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
                let mut locals = self.locals(&h.frame);
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

    /// The shape of every state slot: its initial value joined with every value patched into
    /// the whole slot; a collection that grows in place (`+=`, a new map key) is unbounded.
    fn state_shapes(&mut self) -> Vec<Shape> {
        let p = self.p;
        let mut shapes: Vec<Shape> = p
            .state
            .iter()
            .map(|s| Shape::of_type_for(&s.ty, || Arc::from(format!("the state `{}`", s.name))))
            .collect();
        // Initial values, in slot order: an initialiser reads only earlier slots. The slots
        // read are kept equal to `shapes` one slot at a time, not copied whole for each slot.
        self.state = shapes.clone();
        for (i, slot) in p.state.iter().enumerate() {
            let mut locals = self.locals(&slot.init.frame);
            shapes[i] = self.expr(&slot.init.expr, &mut locals).1;
            self.state[i] = shapes[i].clone();
        }
        let mut patched: Vec<Vec<(&'p Stmt, Locals)>> = vec![Vec::new(); p.state.len()];
        let mut collect = |stmts: &'p [Stmt], frame: &crate::ir::Frame, this: &Self| {
            let locals = this.locals(frame);
            let mut stack: Vec<&'p [Stmt]> = vec![stmts];
            while let Some(list) = stack.pop() {
                for stmt in list {
                    match &stmt.kind {
                        StmtKind::Patch { place, .. } => {
                            patched[place.state.index()].push((stmt, locals.clone()));
                        }
                        StmtKind::If {
                            then, otherwise, ..
                        } => {
                            stack.push(then);
                            stack.push(otherwise);
                        }
                        _ => {}
                    }
                }
            }
        };
        for a in &p.actions {
            collect(&a.body, &a.frame, self);
        }
        for layer in &p.layers {
            for h in &layer.handlers {
                collect(&h.body, &h.frame, self);
            }
            for r in &layer.revise {
                collect(&r.body, &r.frame, self);
            }
        }
        // Patches may copy one slot into another; a few rounds reach the join of them all.
        let unchanged_rounds = 3;
        for _ in 0..unchanged_rounds {
            self.state = shapes.clone();
            self.computed.iter_mut().for_each(|c| *c = None);
            self.fns.clear();
            for (i, list) in patched.iter().enumerate() {
                for (stmt, locals) in list {
                    let StmtKind::Patch { place, op, value } = &stmt.kind else {
                        continue;
                    };
                    let mut locals = locals.clone();
                    let (_, s) = self.expr(value, &mut locals);
                    let name = &p.state[i].name;
                    let grows = |why: &str| Shape {
                        len: UNBOUNDED,
                        why: Some(Arc::from(format!("the state `{name}`, which {why}"))),
                        ..shapes[i].clone()
                    };
                    let collection =
                        shapes[i].elem.is_some() && !matches!(p.state[i].ty, Ty::Option(_));
                    shapes[i] = match (place.path.is_empty(), op) {
                        (true, crate::ir::AssignOp::Set) => shapes[i].join(&s),
                        (true, _) if collection => grows("grows with a compound patch"),
                        (false, _) if matches!(p.state[i].ty, Ty::Map(..)) => {
                            grows("gains keys by patches")
                        }
                        _ => shapes[i].clone(),
                    };
                }
            }
            // A round reads only the shapes it starts from: one that changes none is a fixed
            // point, and the rounds after it would repeat it.
            if shapes == self.state {
                break;
            }
        }
        self.computed.iter_mut().for_each(|c| *c = None);
        self.fns.clear();
        self.over.clear();
        shapes
    }

    fn phases(&mut self) -> CostReport {
        let p = self.p;
        self.over.clear();
        // Analyse every computed value first: the offenders inside one belong to every phase
        // that reads it, which is judged by the phases' own walks below.
        let everything: BTreeSet<ComputedId> =
            (0..p.computed.len() as u32).map(ComputedId).collect();
        self.recompute(&everything, false);
        let shared = std::mem::take(&mut self.over);
        let mut phases = Vec::new();
        let mut finish = |this: &mut Self, phase, w: Work| {
            let mut over = std::mem::take(&mut this.over);
            over.extend(shared.iter().copied());
            over.sort();
            over.dedup();
            phases.push(PhaseBound {
                phase,
                steps: w.steps,
                previews: w.previews,
                unbounded: w.unbounded.iter().map(|s| s.to_string()).collect(),
                over,
            });
        };

        // Observations per turn: the game answers each effect with at most one observation of
        // each kind, and an action emits at most `most_emits` effects.
        let mut most_emits = 1u64;
        let mut act = Work::default();
        for a in &p.actions {
            let before = self.over.len();
            let (mut w, emits, patches) = self.action(a);
            let set = self.reach(&action_roots(a));
            w.plus(&self.recompute(&set, false).times(add(patches, 1)));
            self.judge(a.span, before, &w);
            most_emits = most_emits.max(emits.len() as u64);
            act.max(&w);
        }
        let act_over = std::mem::take(&mut self.over);

        let mut observe = Work::default();
        let kinds: BTreeSet<&str> = p
            .layers
            .iter()
            .flat_map(|l| l.handlers.iter().map(|h| h.observation.as_str()))
            .collect();
        let mut handler_patches = 0;
        for kind in kinds {
            let (w, patches) = self.handlers(kind);
            observe.plus(&w.times(most_emits));
            handler_patches = add(handler_patches, mul(patches, most_emits));
        }
        let mut roots = Roots::default();
        for layer in &p.layers {
            for h in &layer.handlers {
                roots.stmts.push(&h.body);
            }
        }
        let set = self.reach(&roots);
        observe.plus(&self.recompute(&set, false).times(add(handler_patches, 1)));
        finish(self, "observe", observe);

        let mut reflect = Work::default();
        let mut revise = Work::default();
        let mut revise_patches = 0;
        let mut bodies = Vec::new();
        let mut conds = Roots::default();
        let mut revise_roots = Roots::default();
        for layer in &p.layers {
            for r in &layer.revise {
                let mut locals = self.locals(&r.frame);
                reflect.plus(&self.expr(&r.cond, &mut locals).0);
                conds.exprs.push(&r.cond);
                revise_roots.exprs.push(&r.cond);
                revise_roots.stmts.push(&r.body);
                bodies.push((layer, r, locals));
            }
        }
        let set = self.reach(&conds);
        reflect.plus(&self.recompute(&set, false));
        finish(self, "reflect", reflect);
        for layer in &p.layers {
            let mut most = Work::default();
            let mut most_patches = 0;
            for (_, r, locals) in bodies
                .iter_mut()
                .filter(|(l, _, _)| std::ptr::eq(*l, layer))
            {
                let (w, _, patches) = self.stmts(&r.body, locals);
                most.max(&w);
                most_patches = most_patches.max(patches);
            }
            revise.plus(&most);
            revise_patches = add(revise_patches, most_patches);
        }
        let set = self.reach(&revise_roots);
        revise.plus(&self.recompute(&set, false).times(add(revise_patches, 1)));
        finish(self, "revise", revise);

        let mut decide = Work::default();
        let mut roots = Roots::default();
        for layer in &p.layers {
            for rule in &layer.decide {
                let mut locals = self.locals(&rule.frame);
                decide.plus(&self.guards(&rule.guards, &mut locals));
                decide.plus(&self.exprs(&rule.args, &mut locals).0);
                for g in &rule.guards {
                    match g {
                        Guard::Cond(e) | Guard::Let(_, e) => roots.exprs.push(e),
                    }
                }
                roots.exprs.extend(rule.args.iter());
            }
        }
        let set = self.reach(&roots);
        decide.plus(&self.recompute(&set, false));
        finish(self, "decide", decide);
        self.over = act_over;
        finish(self, "act", act);

        let turn = phases.iter().fold(0, |t, p| add(t, p.steps));
        let mut over: Vec<(SrcSpan, u64)> = phases.iter().flat_map(|p| p.over.clone()).collect();
        over.sort();
        over.dedup();
        CostReport {
            module: p.module.to_owned(),
            limit: self.limit,
            phases,
            turn,
            over,
        }
    }
}

/// The parts of an action a run of it evaluates.
fn action_roots(action: &Action) -> Roots<'_> {
    let mut roots = Roots::default();
    roots.exprs.extend(action.available.iter());
    roots.exprs.extend(action.requires.iter().map(|r| &r.cond));
    roots.stmts.push(&action.body);
    roots
}
