//! The cost of builtin calls: a closure argument runs once per element of its receiver, and
//! the collections a builtin is given and builds are charged as walked.

use std::sync::Arc;

use super::measure::Work;
use super::{Analyser, Locals, RANGE_CAP, Shape, UNBOUNDED, add};
use crate::ir::{Expr, ExprKind};
use crate::types::Ty;

impl<'p> Analyser<'p> {
    /// Calls a closure argument once with an element of `elem`'s shape.
    pub(super) fn closure(
        &mut self,
        closure: &'p Expr,
        elem: &Shape,
        locals: &mut Locals,
    ) -> (Work, Shape) {
        match &closure.kind {
            ExprKind::Closure { params, body } => {
                for p in params {
                    if let Some(slot) = locals.get_mut(p.index()) {
                        *slot = elem.clone();
                    }
                }
                self.expr(body, locals)
            }
            ExprKind::FnRef(func) => {
                let arity = self.p.fns[func.index()].params.len();
                self.call_fn(*func, vec![elem.clone(); arity])
            }
            _ => (Work::default(), Shape::scalar()),
        }
    }

    pub(super) fn builtin(
        &mut self,
        name: &str,
        args: &'p [Expr],
        ty: &Ty,
        locals: &mut Locals,
    ) -> (Work, Shape) {
        let mut work = Work::default();
        let mut shapes = Vec::with_capacity(args.len());
        let mut closure_result = None;
        for arg in args {
            if matches!(arg.kind, ExprKind::Closure { .. } | ExprKind::FnRef(_)) {
                let receiver = shapes.first().cloned().unwrap_or_else(Shape::scalar);
                let (w, s) = self.closure(arg, &receiver.elem(), locals);
                let mut runs = w.times(receiver.len.max(1));
                if receiver.len == UNBOUNDED
                    && let Some(why) = &receiver.why
                {
                    runs.unbounded.insert(why.clone());
                }
                work.plus(&runs);
                // The closure expression itself is a node the interpreter evaluates once.
                work.steps = add(work.steps, 1);
                closure_result = Some(s);
                shapes.push(Shape::scalar());
            } else {
                let (w, s) = self.expr(arg, locals);
                work.plus(&w);
                shapes.push(s);
            }
        }
        // The interpreter charges every collection argument's elements as walked.
        for s in &shapes {
            if s.len > 0 && !matches!(args.first().map(|a| &a.ty), Some(Ty::Option(_))) {
                work.walk(s);
            }
        }
        let receiver = shapes.first().cloned().unwrap_or_else(Shape::scalar);
        let method = name.rsplit('.').next().unwrap_or(name);
        let shape = match method {
            "range" => {
                let lo = receiver.lo;
                let hi = shapes.get(1).map_or(lo, |s| s.hi);
                let len = if hi <= lo {
                    0
                } else {
                    u64::try_from(hi - lo).unwrap_or(UNBOUNDED).min(RANGE_CAP)
                };
                Shape::collection(len, Shape::int(lo, hi - 1))
            }
            "map" if matches!(ty, Ty::List(_)) => Shape {
                why: receiver.why.clone(),
                ..Shape::collection(receiver.len, closure_result.unwrap_or_else(Shape::scalar))
            },
            "map" => Shape::collection(1, closure_result.unwrap_or_else(Shape::scalar)),
            "filter" | "take" | "to_set" | "to_list" | "keys" | "values" | "remove" => Shape {
                elem: receiver.elem.clone(),
                ..receiver.clone()
            },
            "push" | "insert" => Shape {
                len: add(receiver.len, 1),
                ..receiver.clone()
            },
            "union" => receiver.join(&shapes.get(1).cloned().unwrap_or_else(Shape::scalar)),
            "len" | "count" => Shape::int(0, receiver.len as i128),
            // `min` and `max` of integers keep the intervals' order, so `range(0, min(a, b))`
            // is as long as the shorter of two bounded lists, not `range`'s cap.
            "min" | "max" if *ty == Ty::Int && shapes.len() == 2 => {
                let other = &shapes[1];
                if method == "min" {
                    Shape::int(receiver.lo.min(other.lo), receiver.hi.min(other.hi))
                } else {
                    Shape::int(receiver.lo.max(other.lo), receiver.hi.max(other.hi))
                }
            }
            "clamp" if *ty == Ty::Int && shapes.len() == 3 => {
                let (lo, hi) = (&shapes[1], &shapes[2]);
                Shape::int(
                    receiver.lo.max(lo.lo).min(hi.hi),
                    receiver.hi.max(lo.lo).min(hi.hi),
                )
            }
            "first" | "last" | "get" | "max_by" | "min_by" | "argmax" | "max" | "min"
                if matches!(ty, Ty::Option(_)) =>
            {
                Shape::collection(1, receiver.elem())
            }
            // An index of the receiver: below its length, which `Shape::int` caps for an
            // unbounded one.
            "index_of" => Shape::collection(1, Shape::int(0, (receiver.len as i128 - 1).max(0))),
            "unwrap" | "unwrap_or" | "expect" => receiver.elem(),
            _ => Shape::of_type_for(ty, || Arc::from(format!("the result of `{name}`"))),
        };
        // ... and its result's elements as built.
        if !matches!(ty, Ty::Option(_)) && shape.len > 0 {
            work.walk(&shape);
        }
        (work, shape)
    }
}
