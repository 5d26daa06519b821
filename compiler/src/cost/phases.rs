//! The bound of each phase of a turn (observe, reflect, revise, decide, act) and the
//! expressions over the limit in each.

use std::collections::BTreeSet;

use super::measure::Work;
use super::reach::{Roots, action_roots};
use super::{Analyser, CostReport, PhaseBound, add, mul};
use crate::ir::{ComputedId, Guard, SrcSpan};

impl<'p> Analyser<'p> {
    pub(super) fn phases(&mut self) -> CostReport {
        let p = self.p;
        self.over.clear();
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
