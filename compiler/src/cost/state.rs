//! The shapes of the state slots over an episode: initial values joined with what patches
//! write, rounds to a fixed point, and linear growth extended over the most turns.

use std::sync::Arc;

use super::{Analyser, Locals, Shape, TURN_CAP, UNBOUNDED, add, mul};
use crate::ir::{Action, BinaryOp, Handler, Revise, StateSlot, Stmt, StmtKind};
use crate::lower::View;
use crate::types::Ty;

impl<'p> Analyser<'p> {
    /// The shape of every state slot: its initial value joined with every value patched into
    /// the whole slot; a collection that grows in place (`+=`, a new map key) is unbounded.
    pub(super) fn state_shapes(&mut self) -> Vec<Shape> {
        let p = self.p;
        let slots: Vec<&StateSlot> = (0..p.state.len()).map(|i| &p.state[i]).collect();
        let mut shapes: Vec<Shape> = slots
            .iter()
            .map(|s| Shape::of_type_for(&s.ty, || Arc::from(format!("the state `{}`", s.name))))
            .collect();
        // Initial values, in slot order: an initialiser reads only earlier slots. The slots
        // read are kept equal to `shapes` one slot at a time, not copied whole for each slot.
        self.state = shapes.clone();
        self.initialising = true;
        for (i, slot) in slots.iter().enumerate() {
            let mut locals = self.locals(&slot.init.frame);
            shapes[i] = self.expr(&slot.init.expr, &mut locals).1;
            self.state[i] = shapes[i].clone();
        }
        // What the initialisers evaluated saw the slots after them unset: not the state of any
        // round, so none of it is kept for the rounds ([`Analyser::patch_round`]).
        self.forget();
        self.initialising = false;
        let per_turn = p
            .actions
            .iter()
            .map(|a| count_emits(&a.body))
            .max()
            .unwrap_or(0)
            .max(1);
        // Handlers run once per observation: at most `per_turn` a turn, and at most as many as
        // the game sends in an episode when it declares that.
        let observations = self
            .bounds
            .get(crate::signatures::EPISODE_OBSERVATIONS)
            .map_or(UNBOUNDED, |n| *n)
            .min(mul(TURN_CAP, per_turn));
        let mut shapes = match self.summaries.settled(&shapes, observations) {
            Some(settled) => settled,
            None => self.settle(shapes, &PatchSites::of(p), observations),
        };
        // A set, or a map's keys, holds each value of its element type at most once.
        for (shape, slot) in shapes.iter_mut().zip(slots) {
            if let Ty::Set(t) | Ty::Map(t, _) = &slot.ty
                && let Some(most) = self.distinct(t)
                && most < shape.len
            {
                shape.len = most;
                shape.why = None;
            }
        }
        self.forget();
        self.over.clear();
        shapes
    }

    /// The shapes over an episode of the slots the patches of `patches` write, from the initial
    /// shapes `shapes`: rounds to a fixed point, then linear growth extended over the most
    /// turns, with handlers run at most `observations` times. A round reads only the slots its
    /// patches read and writes only those they patch, so the slots of patch sites that share
    /// no slot settle apart from each other exactly as they settle together.
    pub(super) fn settle(
        &mut self,
        mut shapes: Vec<Shape>,
        patches: &PatchSites<'p>,
        observations: u64,
    ) -> Vec<Shape> {
        let p = self.p;
        // Patches may copy one slot into another: a few rounds reach the join of them all. A
        // slot that still changes after them (`+=` on a list, a new map key, `n = n + 1`)
        // changes by the same amount each round when it grows linearly. A round runs every
        // patch once, and a turn runs each patch at most `per_turn` times (an action or revise
        // block once, a handler once per observation), so over the most turns an episode has
        // ([`TURN_CAP`]) a slot holds at most its settled size plus that many growths. A slot
        // whose growth itself grows (`xs = xs + xs`) is unbounded.
        let settle = 3;
        let mut fixed = false;
        for _ in 0..settle {
            shapes = self.patch_round(shapes, patches, Sites::All);
            // A round reads only the shapes it starts from: one that changes none is a fixed
            // point, and the rounds after it would repeat it.
            if shapes == self.state {
                fixed = true;
                break;
            }
        }
        let settled = shapes.clone();
        let mut grown = settled.clone();
        for (sites, runs) in [(Sites::Handlers, observations), (Sites::Others, TURN_CAP)] {
            let once = self.patch_round(settled.clone(), patches, sites);
            // A round is a function of the shapes it starts from: after one that changes
            // nothing, a second would repeat it.
            let twice = if once == settled {
                once.clone()
            } else {
                self.patch_round(once.clone(), patches, sites)
            };
            for (i, shape) in grown.iter_mut().enumerate() {
                let (a, b, c) = (&settled[i], &once[i], &twice[i]);
                if (a.lo, a.hi, a.len) == (c.lo, c.hi, c.len) {
                    continue;
                }
                let name = &p.state[i].name;
                let linear = b.len.wrapping_sub(a.len) == c.len.wrapping_sub(b.len)
                    && b.hi - a.hi == c.hi - b.hi
                    && b.lo - a.lo == c.lo - b.lo
                    && c.len >= b.len;
                *shape = shape.join(c);
                if linear {
                    let grow = |d: i128| d.saturating_mul(runs as i128);
                    shape.len = if c.len == UNBOUNDED || shape.len == UNBOUNDED {
                        UNBOUNDED
                    } else {
                        add(shape.len, mul(b.len - a.len, runs))
                    };
                    shape.hi = shape
                        .hi
                        .saturating_add(grow(b.hi - a.hi))
                        .min(i64::MAX as i128);
                    shape.lo = shape
                        .lo
                        .saturating_add(grow(b.lo - a.lo))
                        .max(i64::MIN as i128);
                    if shape.len == UNBOUNDED && shape.why.is_none() {
                        shape.why = Some(Arc::from(format!(
                            "the state `{name}`, which grows with patches"
                        )));
                    }
                } else {
                    shape.len = if shape.elem.is_some() { UNBOUNDED } else { 0 };
                    shape.lo = i64::MIN as i128;
                    shape.hi = i64::MAX as i128;
                    shape.why = Some(Arc::from(format!(
                        "the state `{name}`, which grows faster with each patch"
                    )));
                }
            }
        }
        // One more round carries the grown slots into those that copy them; when nothing grew
        // and the settled shapes are a fixed point, it would return them unchanged.
        if fixed && grown == settled {
            grown
        } else {
            self.patch_round(grown, patches, Sites::All)
        }
    }

    /// Forgets the analysed computed values and function calls, which hold for one state.
    fn forget(&mut self) {
        self.computed.clear();
        self.fns.clear();
        self.context = None;
    }

    /// How many distinct values `ty` has, when few: `Bool`, an enum without payloads, an
    /// opaque type whose game declares its count ([`crate::signatures::GameSig::distinct`]).
    pub(super) fn distinct(&self, ty: &Ty) -> Option<u64> {
        match ty {
            Ty::Bool => Some(2),
            Ty::Enum(name) => self
                .p
                .enums
                .iter()
                .find(|e| *e.name == **name)
                .filter(|e| e.variants.iter().all(|(_, payload)| payload.is_empty()))
                .map(|e| e.variants.len() as u64),
            Ty::Opaque(name, _) => self
                .bounds
                .get(&crate::signatures::distinct_values(name))
                .copied(),
            _ => None,
        }
    }

    /// Runs every patch of `patches` once (those of `sites`), evaluated on the state shapes
    /// `shapes`, and returns the shapes after them. Each body is walked with its `let`s and
    /// `if let` guards bound, so a patch sees what its locals hold (an `llm` reply's declared
    /// sizes, for one).
    pub(super) fn patch_round(
        &mut self,
        shapes: Vec<Shape>,
        patches: &PatchSites<'p>,
        sites: Sites,
    ) -> Vec<Shape> {
        // The computed values and calls analysed in the previous round hold while the state
        // they saw is the same: rounds that start from equal shapes share them.
        if self.state != shapes {
            self.state = shapes.clone();
            self.forget();
        }
        let mut next = shapes;
        let (handlers, others) = (sites != Sites::Others, sites != Sites::Handlers);
        for &a in patches.actions.iter().filter(|_| others) {
            let mut locals = self.locals(&a.frame);
            self.patch_walk(&a.body, &mut locals, &mut next);
        }
        for (layer_handlers, layer_revise) in &patches.layers {
            for &h in layer_handlers.iter().filter(|_| handlers) {
                let mut locals = self.handler_locals(h);
                self.patch_walk(&h.body, &mut locals, &mut next);
            }
            for &r in layer_revise.iter().filter(|_| others) {
                let mut locals = self.locals(&r.frame);
                self.patch_walk(&r.body, &mut locals, &mut next);
            }
        }
        next
    }

    pub(super) fn patch_walk(
        &mut self,
        stmts: &'p [Stmt],
        locals: &mut Locals,
        shapes: &mut [Shape],
    ) {
        let p = self.p;
        for stmt in stmts {
            match &stmt.kind {
                StmtKind::Let(pattern, value) => {
                    let (_, s) = self.expr(value, locals);
                    self.bind(pattern, &s, locals);
                }
                StmtKind::LetLlm { pattern, .. } => self.bind(pattern, &Shape::scalar(), locals),
                StmtKind::If {
                    guards,
                    then,
                    otherwise,
                } => {
                    let mut inner = locals.clone();
                    self.guards(guards, &mut inner);
                    self.patch_walk(then, &mut inner, shapes);
                    let mut other = locals.clone();
                    self.patch_walk(otherwise, &mut other, shapes);
                }
                StmtKind::Patch { place, op, value } => {
                    let i = place.state.index();
                    let (_, s) = self.expr(value, locals);
                    let old = &shapes[i];
                    let collection = old.elem.is_some() && !matches!(p.state[i].ty, Ty::Option(_));
                    shapes[i] = match (place.path.first(), op) {
                        (None, crate::ir::AssignOp::Set) => old.join(&s),
                        // `+=` appends to a list or a string, and adds to a number.
                        (None, crate::ir::AssignOp::Add) if collection => Shape {
                            len: add(old.len, s.len),
                            why: old.why.clone().or_else(|| s.why.clone()),
                            ..Shape::collection(0, old.elem().join(&s.elem()))
                        },
                        (None, _) if p.state[i].ty == Ty::Int => {
                            let op = match op {
                                crate::ir::AssignOp::Add => BinaryOp::Add,
                                crate::ir::AssignOp::Sub => BinaryOp::Sub,
                                _ => BinaryOp::Mul,
                            };
                            old.join(&self.binary(op, old, &s, &Ty::Int))
                        }
                        // A patch of a map's entry can add its key.
                        (Some(crate::ir::PlaceStep::Index(_)), _)
                            if matches!(p.state[i].ty, Ty::Map(..)) =>
                        {
                            Shape {
                                len: add(old.len, 1),
                                ..old.clone()
                            }
                        }
                        _ => old.clone(),
                    };
                }
                _ => {}
            }
        }
    }
}

/// The bodies whose patches the rounds of [`Analyser::settle`] run: actions, in id order, then
/// each layer's handlers and revise blocks, in layer order, as a turn can run them. Each patch
/// writes a slot of its own layer, so the patches of one slot keep their order in any subset
/// of the layers.
#[derive(Default)]
pub(crate) struct PatchSites<'p> {
    /// Actions, in id order.
    pub(crate) actions: Vec<&'p Action>,
    /// Each layer's handlers and revise blocks, in layer order.
    pub(crate) layers: Vec<(Vec<&'p Handler>, Vec<&'p Revise>)>,
}

impl<'p> PatchSites<'p> {
    /// Every patch site of a module's program.
    pub(crate) fn of(p: &'p View<'p>) -> Self {
        PatchSites {
            actions: p.actions.clone(),
            layers: p
                .layers
                .iter()
                .map(|layer| (layer.handlers.clone(), layer.revise.clone()))
                .collect(),
        }
    }
}

/// Which patches a round of [`Analyser::patch_round`] runs: handlers run once per observation,
/// actions and revise blocks once per turn.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Sites {
    All,
    Handlers,
    Others,
}

/// The effects a run of `stmts` can emit at most: every `emit` on any path, counted once.
pub(super) fn count_emits(stmts: &[Stmt]) -> u64 {
    stmts
        .iter()
        .map(|stmt| match &stmt.kind {
            StmtKind::Emit { .. } => 1,
            StmtKind::If {
                then, otherwise, ..
            } => count_emits(then).max(count_emits(otherwise)),
            _ => 0,
        })
        .sum()
}
