//! The bound of each phase of a turn (observe, reflect, revise, decide, act) and the
//! expressions over the limit in each.
//!
//! Each layer's bodies are walked on their own ([`Analyser::layer_turn`]): their own work, in
//! which a computed value read costs one step, what they count (patches, effects) and what
//! they read directly ([`LayerTurn`]). The phases then add, for the computed values those reads
//! reach, the work of evaluating them once per snapshot. A layer's walk reads only the shapes
//! of the state and of the computed values, so the query database keeps it per layer and state
//! ([`Summaries::turn`]) and an edit inside one layer walks only that layer again.

use std::collections::BTreeSet;
use std::sync::Arc;

use super::measure::Work;
use super::reach::{Reach, Roots, action_roots};
use super::{Analyser, CostReport, PhaseBound, Summaries, add, mul};
use crate::ir::{Action, ActionId, ComputedId, Guard, Handler, Revise, Rule, SrcSpan};

/// The bodies of one layer that a turn's phases walk.
#[derive(Default)]
pub(crate) struct Turn<'p> {
    /// Its actions, by id.
    pub(crate) actions: Vec<(ActionId, &'p Action)>,
    /// Its observation handlers, in order.
    pub(crate) handlers: Vec<&'p Handler>,
    /// Its revise blocks, in order.
    pub(crate) revise: Vec<&'p Revise>,
    /// Its decide rules, in order.
    pub(crate) decide: Vec<&'p Rule>,
}

/// What walking one layer's bodies in one state found ([`Analyser::layer_turn`]): each walk's
/// work, in which a computed value read costs one step, what it counts, what it finds over the
/// limit, and what it reads directly.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct LayerTurn {
    actions: Vec<ActionWalk>,
    handlers: Vec<HandlerWalk>,
    handler_reads: Reach,
    /// The revise blocks' conditions, together.
    reflect: Walk,
    /// The most work and patches of one revise block's body.
    revise: Walk,
    revise_patches: u64,
    decide: Walk,
}

/// One walk's work, what it found over the limit and what it read directly.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
struct Walk {
    work: Work,
    over: Vec<(SrcSpan, u64)>,
    reads: Reach,
}

/// The walk of one action: availability, validations and body.
#[derive(Clone, Debug, PartialEq, Eq)]
struct ActionWalk {
    id: ActionId,
    span: SrcSpan,
    walk: Walk,
    emits: u64,
    patches: u64,
}

/// The walk of one handler's body.
#[derive(Clone, Debug, PartialEq, Eq)]
struct HandlerWalk {
    observation: String,
    work: Work,
    patches: u64,
    over: Vec<(SrcSpan, u64)>,
}

impl<'p> Analyser<'p> {
    /// Runs `walk` with a list of its own for what it finds over the limit.
    fn walked<T>(&mut self, walk: impl FnOnce(&mut Self) -> T) -> (T, Vec<(SrcSpan, u64)>) {
        let outer = std::mem::take(&mut self.over);
        let result = walk(self);
        (result, std::mem::replace(&mut self.over, outer))
    }

    /// Walks one layer's bodies in the current state.
    pub(crate) fn layer_turn(&mut self, turn: &Turn<'p>) -> LayerTurn {
        let mut out = LayerTurn::default();
        for &(id, a) in &turn.actions {
            let ((work, emits, patches), over) = self.walked(|this| this.action(a));
            out.actions.push(ActionWalk {
                id,
                span: a.span,
                walk: Walk {
                    work,
                    over,
                    reads: Reach::of_roots(&action_roots(a)),
                },
                emits: emits.len() as u64,
                patches,
            });
        }
        let mut roots = Roots::default();
        for &h in &turn.handlers {
            let mut locals = self.handler_locals(h);
            let ((work, _, patches), over) = self.walked(|this| this.stmts(&h.body, &mut locals));
            out.handlers.push(HandlerWalk {
                observation: h.observation.clone(),
                work,
                patches,
                over,
            });
            roots.stmts.push(&h.body);
        }
        out.handler_reads = Reach::of_roots(&roots);
        let mut conds = Roots::default();
        let mut bodies = Roots::default();
        let mut walks = Vec::new();
        for &r in &turn.revise {
            let mut locals = self.locals(&r.frame);
            let (work, over) = self.walked(|this| this.expr(&r.cond, &mut locals).0);
            out.reflect.work.plus(&work);
            out.reflect.over.extend(over);
            conds.exprs.push(&r.cond);
            bodies.stmts.push(&r.body);
            walks.push((r, locals));
        }
        for (r, locals) in &mut walks {
            let body: &'p [crate::ir::Stmt] = &r.body;
            let ((work, _, patches), over) = self.walked(|this| this.stmts(body, locals));
            out.revise.work.max(&work);
            out.revise.over.extend(over);
            out.revise_patches = out.revise_patches.max(patches);
        }
        out.reflect.reads = Reach::of_roots(&conds);
        out.revise.reads = Reach::of_roots(&bodies);
        let mut roots = Roots::default();
        for &rule in &turn.decide {
            let mut locals = self.locals(&rule.frame);
            let (work, over) = self.walked(|this| {
                let mut work = this.guards(&rule.guards, &mut locals);
                work.plus(&this.exprs(&rule.args, &mut locals).0);
                work
            });
            out.decide.work.plus(&work);
            out.decide.over.extend(over);
            for g in &rule.guards {
                match g {
                    Guard::Cond(e) | Guard::Let(_, e) => roots.exprs.push(e),
                }
            }
            roots.exprs.extend(rule.args.iter());
        }
        out.decide.reads = Reach::of_roots(&roots);
        out
    }

    /// Each layer's walk in the current state: kept in [`Analyser::summaries`], or walked here.
    fn layer_turns(&mut self) -> Vec<Arc<LayerTurn>> {
        let p = self.p;
        let mut turns: Vec<Turn<'p>> = p
            .layers
            .iter()
            .map(|layer| Turn {
                actions: Vec::new(),
                handlers: layer.handlers.clone(),
                revise: layer.revise.clone(),
                decide: layer.decide.clone(),
            })
            .collect();
        for (index, a) in p.actions.iter().enumerate() {
            if let Some(turn) = turns.get_mut(a.layer.index()) {
                turn.actions.push((ActionId(index as u32), a));
            }
        }
        let context = match self.context {
            Some(context) => context,
            None => *self.context.insert(self.summaries.context(&self.state)),
        };
        let summaries: &dyn Summaries = self.summaries;
        turns
            .iter()
            .enumerate()
            .map(|(layer, turn)| match summaries.turn(layer, context) {
                Some(kept) => kept,
                None => Arc::new(self.layer_turn(turn)),
            })
            .collect()
    }

    pub(super) fn phases(&mut self) -> CostReport {
        let p = self.p;
        self.over.clear();
        let turns = self.layer_turns();
        // Analyse every computed value first: the offenders inside one belong to every phase
        // that reads it, which is judged by the phases' own walks below.
        let everything: BTreeSet<ComputedId> =
            (0..p.computed.len() as u32).map(ComputedId).collect();
        self.recompute(&everything, false);
        let shared: Vec<(SrcSpan, u64)> = everything
            .iter()
            .filter_map(|c| self.computed.get(c))
            .flat_map(|done| done.over.iter().copied())
            .collect();
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
        let mut actions: Vec<&ActionWalk> = turns.iter().flat_map(|t| &t.actions).collect();
        actions.sort_by_key(|a| a.id);
        for a in actions {
            let before = self.over.len();
            self.over.extend(a.walk.over.iter().copied());
            let mut w = a.walk.work.clone();
            let set = self.reached(&[&a.walk.reads]);
            w.plus(&self.recompute(&set, false).times(add(a.patches, 1)));
            self.judge(a.span, before, &w);
            most_emits = most_emits.max(a.emits);
            act.max(&w);
        }
        let act_over = std::mem::take(&mut self.over);

        let mut observe = Work::default();
        let kinds: BTreeSet<&str> = turns
            .iter()
            .flat_map(|t| t.handlers.iter().map(|h| h.observation.as_str()))
            .collect();
        let mut handler_patches = 0;
        for kind in kinds {
            let mut w = Work::default();
            let mut patches = 0;
            for h in turns
                .iter()
                .flat_map(|t| &t.handlers)
                .filter(|h| h.observation == kind)
            {
                w.plus(&h.work);
                patches = add(patches, h.patches);
                self.over.extend(h.over.iter().copied());
            }
            observe.plus(&w.times(most_emits));
            handler_patches = add(handler_patches, mul(patches, most_emits));
        }
        let reads: Vec<&Reach> = turns.iter().map(|t| &t.handler_reads).collect();
        let set = self.reached(&reads);
        observe.plus(&self.recompute(&set, false).times(add(handler_patches, 1)));
        finish(self, "observe", observe);

        let mut reflect = Work::default();
        for t in &turns {
            reflect.plus(&t.reflect.work);
            self.over.extend(t.reflect.over.iter().copied());
        }
        let conds: Vec<&Reach> = turns.iter().map(|t| &t.reflect.reads).collect();
        let set = self.reached(&conds);
        reflect.plus(&self.recompute(&set, false));
        finish(self, "reflect", reflect);

        let mut revise = Work::default();
        let mut revise_patches = 0;
        for t in &turns {
            revise.plus(&t.revise.work);
            revise_patches = add(revise_patches, t.revise_patches);
            self.over.extend(t.revise.over.iter().copied());
        }
        let mut reads = conds;
        reads.extend(turns.iter().map(|t| &t.revise.reads));
        let set = self.reached(&reads);
        revise.plus(&self.recompute(&set, false).times(add(revise_patches, 1)));
        finish(self, "revise", revise);

        let mut decide = Work::default();
        for t in &turns {
            decide.plus(&t.decide.work);
            self.over.extend(t.decide.over.iter().copied());
        }
        let reads: Vec<&Reach> = turns.iter().map(|t| &t.decide.reads).collect();
        let set = self.reached(&reads);
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
