//! Reachability: which computed values and functions an expression reads, directly and
//! through others, and whether its evaluation can reach `sim.next`. A turn's phases and
//! previews evaluate the computed values they can read once per snapshot.

use std::collections::BTreeSet;
use std::sync::Arc;

use super::Analyser;
use crate::ir::{Action, ComputedId, Expr, ExprKind, FnId, MemberRef, StateId, Stmt, TunableId};

/// What an expression refers to directly: a `sim.next`, computed values and functions.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Reach {
    sim: bool,
    computed: Vec<ComputedId>,
    fns: Vec<FnId>,
    /// Computed values read in a preview's successor snapshots (`s.member`).
    snapshot: Vec<ComputedId>,
}

impl Reach {
    pub(super) fn of(body: &Expr) -> Reach {
        let mut reach = Reach::default();
        crate::visit::Visit::expr(&mut reach, body);
        reach
    }

    /// What `roots` refer to directly, together.
    pub(super) fn of_roots(roots: &Roots<'_>) -> Reach {
        let mut reach = Reach::default();
        for e in &roots.exprs {
            crate::visit::Visit::expr(&mut reach, e);
        }
        for list in &roots.stmts {
            crate::visit::walk::stmts(&mut reach, list);
        }
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

/// What analysing a body needs besides itself: the functions it calls or passes, the members it
/// reads, and whether it makes a preview (which walks the whole module).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Needs {
    pub(crate) fns: Vec<FnId>,
    pub(crate) tunables: Vec<TunableId>,
    pub(crate) states: Vec<StateId>,
    pub(crate) computed: Vec<ComputedId>,
    pub(crate) preview: bool,
}

impl Needs {
    /// Adds what `other` needs.
    pub(crate) fn extend(&mut self, other: &Needs) {
        self.fns.extend(other.fns.iter().copied());
        self.tunables.extend(other.tunables.iter().copied());
        self.states.extend(other.states.iter().copied());
        self.computed.extend(other.computed.iter().copied());
        self.preview |= other.preview;
    }
}

impl crate::visit::Visit for Needs {
    fn expr(&mut self, e: &Expr) {
        match &e.kind {
            ExprKind::SimNext { .. } => self.preview = true,
            ExprKind::CallFn { func, .. } | ExprKind::FnRef(func) => self.fns.push(*func),
            ExprKind::Member(member) | ExprKind::SnapshotRead { member, .. } => match member {
                MemberRef::Tunable(t) => self.tunables.push(*t),
                MemberRef::State(s) => self.states.push(*s),
                MemberRef::Computed(c) => self.computed.push(*c),
            },
            _ => {}
        }
        crate::visit::walk::expr(self, e);
    }
}

/// The roots of a reachability question: expressions and statement lists.
#[derive(Default)]
pub(super) struct Roots<'p> {
    pub(super) exprs: Vec<&'p Expr>,
    pub(super) stmts: Vec<&'p [Stmt]>,
}

impl<'p> Analyser<'p> {
    /// Whether evaluating a computed value can reach `sim.next`.
    pub(super) fn reaches_sim(&mut self, c: ComputedId) -> bool {
        if let Some(done) = self.sim.get(&c) {
            return *done;
        }
        self.sim.insert(c, false);
        let found = self.expr_reaches_sim(&self.p.computed[c.index()].body.expr);
        self.sim.insert(c, found);
        found
    }

    pub(super) fn expr_reaches_sim(&mut self, e: &'p Expr) -> bool {
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
    pub(super) fn reach(&mut self, roots: &Roots<'p>) -> BTreeSet<ComputedId> {
        self.reached(&[&Reach::of_roots(roots)])
    }

    /// The computed values that evaluating expressions that refer directly to what `direct`
    /// lists can read in their snapshot ([`Analyser::reach`]).
    pub(super) fn reached(&mut self, direct: &[&Reach]) -> BTreeSet<ComputedId> {
        let mut found = BTreeSet::new();
        let mut fns_seen = BTreeSet::new();
        let mut computed: Vec<ComputedId> = direct
            .iter()
            .flat_map(|r| r.computed.iter().copied())
            .collect();
        let mut fns: Vec<FnId> = direct.iter().flat_map(|r| r.fns.iter().copied()).collect();
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

    /// What a computed value's body refers to directly, walked on first use or read from its
    /// kept analysis.
    pub(super) fn computed_reads(&mut self, c: ComputedId) -> &Reach {
        if !self.computed_reads.contains_key(&c) {
            let reach = match self.kept(c) {
                Some((done, reads)) => {
                    self.computed.entry(c).or_insert(done);
                    reads
                }
                None => Arc::new(Reach::of(&self.p.computed[c.index()].body.expr)),
            };
            self.computed_reads.insert(c, reach);
        }
        &self.computed_reads[&c]
    }

    /// What a function's body refers to directly, walked on first use.
    pub(super) fn fn_reads(&mut self, f: FnId) -> &Reach {
        let p = self.p;
        self.fn_reads
            .entry(f)
            .or_insert_with(|| Reach::of(&p.fns[f.index()].body.expr))
    }

    /// The computed values read in any preview's successor snapshots, with what they read.
    pub(super) fn snapshot_reads(&mut self) -> BTreeSet<ComputedId> {
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
}

/// The parts of an action a run of it evaluates.
pub(super) fn action_roots(action: &Action) -> Roots<'_> {
    let mut roots = Roots::default();
    roots.exprs.extend(action.available.iter());
    roots.exprs.extend(action.requires.iter().map(|r| &r.cond));
    roots.stmts.push(&action.body);
    roots
}
