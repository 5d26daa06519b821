//! The evaluation of compiled expressions ([`crate::compiled`]), the runtime's one expression
//! evaluator.
//!
//! Every node counts one step before its operands, evaluates its operands left to right, and
//! charges the elements its builtin or operator walks and builds. The commonest leaves are
//! answered without a call into the large frame of [`Eval::node_kind`], and a value already held
//! (a local, a slot, a memoised computed value) that an operator only reads is read in place
//! rather than copied out.

use std::collections::BTreeSet;
use std::sync::Arc;

use harness_compiler::ir::{BinaryOp, LocalId, SrcSpan};

use super::{
    ClosureDef, Eval, GUARD_EVERY, bind, bind_params, builtin_result, condition, index_value,
    internal, local, no_arm,
};
use crate::calls::{CallSite, Target};
use crate::compiled::{LambdaShape, Node, NodeGuard, NodeKind};
use crate::error::{ErrorCode, RtResult};
use crate::native::{NativeError, key_of};
use crate::snapshot::Snapshot;
use crate::value::{RecordValue, Value};

/// The most locals a `fn` call's frame holds on the stack rather than in a pooled vector.
const SMALL_FRAME: usize = 8;

/// The most operands of a closure body that [`Eval::call_each`] walks itself; this is the most
/// [`LambdaShape::Native`] allows.
const HELD_OPERANDS: usize = 3;

/// Where [`Eval::call_each`] hands the closure's results: one by one as values with their
/// elements (`map`, `filter`), which may stop the walk, or as numbers in runs from an element's
/// index on (`max_by`, `max_of`), which rank every element, so that a walk with a batch form
/// hands over all its results at once without building a value.
pub(super) enum Each<'a> {
    Value(&'a mut dyn FnMut(&Value, Value) -> Result<bool, NativeError>),
    Key(&'a mut dyn FnMut(usize, &[f64])),
}

impl Each<'_> {
    /// Hands over the result `v` of element `i`, `x`: whether to go on.
    fn give(&mut self, i: usize, x: &Value, v: Value) -> Result<bool, NativeError> {
        match self {
            Each::Value(each) => each(x, v),
            Each::Key(each) => {
                each(i, &[key_of(&v)?]);
                Ok(true)
            }
        }
    }
}

impl<'m> Eval<'m> {
    /// Evaluates a compiled expression.
    pub(super) fn node(
        &mut self,
        snap: &Snapshot,
        frame: &mut [Value],
        n: &'m Node,
    ) -> RtResult<Value> {
        // The leaves are answered here, as `expr` answers them.
        match &n.kind {
            NodeKind::Local(id) => {
                self.tick(n.span)?;
                local(frame, *id, n.span)
            }
            NodeKind::Lit(value) => {
                self.tick(n.span)?;
                Ok(value.clone())
            }
            NodeKind::State(i) => {
                self.tick(n.span)?;
                self.dep(self.m.state_dep(*i));
                Ok(snap.state(*i).clone())
            }
            NodeKind::Tunable(i) => {
                self.tick(n.span)?;
                self.dep(self.m.tunable_dep(*i));
                Ok(snap.tunable(*i).clone())
            }
            NodeKind::Computed(id) if let Some(memo) = snap.memo(id.index()) => {
                self.tick(n.span)?;
                if let Some(top) = self.deps.last_mut() {
                    top.union(&memo.deps);
                }
                Ok(memo.value.clone())
            }
            NodeKind::Config(_)
            | NodeKind::Const(_)
            | NodeKind::Query { .. }
            | NodeKind::None
            | NodeKind::EmptyMap
            | NodeKind::Fail(_) => self.node_kind(snap, frame, n),
            // The commonest inner nodes are evaluated in frames of their own, each far smaller
            // than that of `node_kind`, whose every call saves and restores what its largest
            // arm needs.
            NodeKind::Binary(op, a, b) if !matches!(op, BinaryOp::And | BinaryOp::Or) => {
                self.nested(|ev| ev.node_binary(snap, frame, *op, a, b, n))
            }
            NodeKind::Binary(op, a, b) => {
                self.nested(|ev| ev.node_logic(snap, frame, *op, a, b, n))
            }
            NodeKind::Builtin { .. } => self.nested(|ev| ev.node_call(snap, frame, n)),
            NodeKind::CallFn { .. } => self.nested(|ev| ev.node_call_fn(snap, frame, n)),
            NodeKind::Field(..) => self.nested(|ev| ev.node_field(snap, frame, n)),
            NodeKind::If { .. } | NodeKind::Match(..) | NodeKind::Let { .. } => {
                self.nested(|ev| ev.node_branch(snap, frame, n))
            }
            _ => self.nested(|ev| ev.node_kind(snap, frame, n)),
        }
    }

    /// Evaluates an inner node one level deeper, checking the stack at every [`GUARD_EVERY`]th
    /// level.
    #[inline(always)]
    fn nested(&mut self, eval: impl FnOnce(&mut Self) -> RtResult<Value>) -> RtResult<Value> {
        self.depth += 1;
        let v = if self.depth.is_multiple_of(GUARD_EVERY) {
            harness_grammar::stack::guarded(|| eval(self))
        } else {
            eval(self)
        };
        self.depth -= 1;
        v
    }

    /// [`Eval::node`] with a local read in place. A local is the commonest operand of a call
    /// or an operator (a quarter of the evaluated nodes on the bundled harnesses), and reading
    /// it here spares the call into `node` and that function's saved registers.
    #[inline(always)]
    fn node_operand(
        &mut self,
        snap: &Snapshot,
        frame: &mut [Value],
        n: &'m Node,
    ) -> RtResult<Value> {
        if let NodeKind::Local(id) = &n.kind {
            self.tick(n.span)?;
            return local(frame, *id, n.span);
        }
        self.node(snap, frame, n)
    }

    /// An infix operator other than `and` and `or`, the commonest inner node (a third of the
    /// evaluated nodes on the bundled harnesses): evaluated in a frame of its own rather than
    /// in the large one of [`Eval::node_kind`], with arithmetic and comparisons on two floats or
    /// two integers done here, as `ops::binary` does them. Anything else, and every case that
    /// fails (a division by zero, an overflow, a non-finite result), goes to [`Eval::binary`].
    #[inline(never)]
    fn node_binary(
        &mut self,
        snap: &Snapshot,
        frame: &mut [Value],
        op: BinaryOp,
        a: &'m Node,
        b: &'m Node,
        n: &'m Node,
    ) -> RtResult<Value> {
        self.tick(n.span)?;
        let a = self.node_operand(snap, frame, a)?;
        let b = self.node_operand(snap, frame, b)?;
        match (&a, &b) {
            (Value::Float(x), Value::Float(y)) => {
                let order = x.cmp(y);
                let (x, y) = (x.get(), y.get());
                let r = match op {
                    BinaryOp::Add => x + y,
                    BinaryOp::Sub => x - y,
                    BinaryOp::Mul => x * y,
                    BinaryOp::Div if y != 0.0 => x / y,
                    _ => match compare(op, order) {
                        Some(holds) => return Ok(Value::Bool(holds)),
                        None => return self.binary(op, a, b, n.span),
                    },
                };
                if let Some(v) = Value::float(r) {
                    return Ok(v);
                }
            }
            (Value::Int(x), Value::Int(y)) => {
                let r = match op {
                    BinaryOp::Add => x.checked_add(*y),
                    BinaryOp::Sub => x.checked_sub(*y),
                    BinaryOp::Mul => x.checked_mul(*y),
                    _ => match compare(op, x.cmp(y)) {
                        Some(holds) => return Ok(Value::Bool(holds)),
                        None => None,
                    },
                };
                if let Some(r) = r {
                    return Ok(Value::Int(r));
                }
            }
            _ => {}
        }
        self.binary(op, a, b, n.span)
    }

    /// `and` and `or`, counting their step: the right operand is evaluated only when the left
    /// one does not settle the value.
    #[inline(never)]
    fn node_logic(
        &mut self,
        snap: &Snapshot,
        frame: &mut [Value],
        op: BinaryOp,
        a: &'m Node,
        b: &'m Node,
        n: &'m Node,
    ) -> RtResult<Value> {
        self.tick(n.span)?;
        let a = condition(self.node(snap, frame, a), n.span)?;
        if a == (op == BinaryOp::Or) {
            return Ok(Value::Bool(a));
        }
        Ok(Value::Bool(condition(self.node(snap, frame, b), n.span)?))
    }

    /// A builtin call, counting its step. The closures created for its arguments die with it.
    #[inline(never)]
    fn node_call(&mut self, snap: &Snapshot, frame: &mut [Value], n: &'m Node) -> RtResult<Value> {
        self.tick(n.span)?;
        let NodeKind::Builtin {
            name,
            site,
            args,
            float,
        } = &n.kind
        else {
            return Err(internal(n.span, "a builtin call expected"));
        };
        let alive = self.closures.len();
        let result = self.node_builtin(snap, frame, name, site, args, n.span);
        self.closures.truncate(alive);
        builtin_result(result?, *float, n.span)
    }

    /// A call of a `fn`, counting its step; its arguments are evaluated straight into the
    /// callee's frame.
    #[inline(never)]
    fn node_call_fn(
        &mut self,
        snap: &Snapshot,
        frame: &mut [Value],
        n: &'m Node,
    ) -> RtResult<Value> {
        self.tick(n.span)?;
        let NodeKind::CallFn {
            func,
            frame: locals,
            args,
        } = &n.kind
        else {
            return Err(internal(n.span, "a fn call expected"));
        };
        // Most `fn`s have a handful of locals: their frame lives on the stack, where making and
        // dropping it costs less than a round trip through the pool.
        if *locals <= SMALL_FRAME {
            // The frame's slots hold `Unit`, which owns nothing, until they are written, and
            // the callee can write only the first `locals`: an argument is written over its
            // slot's `Unit` without dropping it, and at the end only those slots are dropped,
            // not the whole array, each drop a call.
            let mut callee: [Value; SMALL_FRAME] = Default::default();
            for (slot, arg) in callee.iter_mut().zip(args) {
                std::mem::forget(std::mem::replace(
                    slot,
                    self.node_operand(snap, frame, arg)?,
                ));
            }
            let result = self.body(snap, &mut callee[..*locals], *func);
            for slot in &mut callee[..*locals] {
                drop(std::mem::take(slot));
            }
            std::mem::forget(callee);
            return result;
        }
        let mut callee = self.take(*locals);
        for (i, arg) in args.iter().enumerate() {
            match self.node_operand(snap, frame, arg) {
                Ok(v) => callee[i] = v,
                Err(e) => {
                    self.give(callee);
                    return Err(e);
                }
            }
        }
        let result = self.body(snap, &mut callee, *func);
        self.give(callee);
        result
    }

    /// A record field, counting its step; a record already held is read in place.
    #[inline(never)]
    fn node_field(&mut self, snap: &Snapshot, frame: &mut [Value], n: &'m Node) -> RtResult<Value> {
        self.tick(n.span)?;
        let span = n.span;
        let NodeKind::Field(base, index) = &n.kind else {
            return Err(internal(span, "a field read expected"));
        };
        let field = |record: &Value| match record {
            Value::Record(r) => r
                .values
                .get(*index as usize)
                .cloned()
                .ok_or_else(|| internal(span, "record field out of range")),
            other => Err(internal(span, format!("field of {}", other.kind_name()))),
        };
        match self.node_leaf(snap, frame, base) {
            Some(record) => field(record?),
            None => field(&self.node(snap, frame, base)?),
        }
    }

    /// `if`, `match` and `let`, counting their step.
    #[inline(never)]
    fn node_branch(
        &mut self,
        snap: &Snapshot,
        frame: &mut [Value],
        n: &'m Node,
    ) -> RtResult<Value> {
        self.tick(n.span)?;
        let span = n.span;
        match &n.kind {
            NodeKind::If {
                guards,
                then,
                otherwise,
            } => {
                if self.node_guards(snap, frame, guards)? {
                    self.node(snap, frame, then)
                } else {
                    self.node(snap, frame, otherwise)
                }
            }
            NodeKind::Match(scrutinee, arms) => {
                // A slot or a memoised value is matched where it lies; a local is copied, since
                // the arms' bindings write to the frame it lives in.
                let owned;
                let v = match self.node_held(snap, scrutinee) {
                    Some(v) => v?,
                    None => {
                        owned = self.node(snap, frame, scrutinee)?;
                        &owned
                    }
                };
                for (pattern, body) in arms {
                    if bind(pattern, v, frame)? {
                        return self.node(snap, frame, body);
                    }
                }
                Err(no_arm(span))
            }
            NodeKind::Let {
                pattern,
                value,
                body,
            } => {
                let v = self.node(snap, frame, value)?;
                if !bind(pattern, &v, frame)? {
                    return Err(internal(pattern.span, "a `let` pattern did not match"));
                }
                self.node(snap, frame, body)
            }
            _ => Err(internal(span, "an if, match or let expected")),
        }
    }

    /// [`Eval::node`] on the current stack segment.
    fn node_kind(&mut self, snap: &Snapshot, frame: &mut [Value], n: &'m Node) -> RtResult<Value> {
        self.tick(n.span)?;
        let span = n.span;
        match &n.kind {
            NodeKind::Local(id) => local(frame, *id, span),
            NodeKind::Lit(value) => Ok(value.clone()),
            NodeKind::State(i) => {
                self.dep(self.m.state_dep(*i));
                Ok(snap.state(*i).clone())
            }
            NodeKind::Tunable(i) => {
                self.dep(self.m.tunable_dep(*i));
                Ok(snap.tunable(*i).clone())
            }
            NodeKind::Computed(id) => self.computed(snap, *id, span),
            NodeKind::Config(i) => self
                .m
                .config
                .get(*i)
                .cloned()
                .ok_or_else(|| internal(span, "unknown config parameter")),
            NodeKind::Const(i) => self
                .m
                .consts
                .get(*i)
                .cloned()
                .ok_or_else(|| internal(span, "constant read before it was evaluated")),
            NodeKind::Query { key, name } => self.query(*key, name, &[], span),
            NodeKind::GameCall { name, args } => {
                let args = self.nodes(snap, frame, args)?;
                self.query(name.as_ptr() as usize, name, &args, span)
            }
            NodeKind::Closure {
                params,
                body,
                shape,
            } => {
                self.closures.push(ClosureDef::Lambda(params, shape, body));
                Ok(Value::Closure((self.closures.len() - 1) as u32))
            }
            NodeKind::FnRef(func) => {
                self.closures.push(ClosureDef::Fn(*func));
                Ok(Value::Closure((self.closures.len() - 1) as u32))
            }
            NodeKind::Variant {
                enum_id,
                index,
                payload,
            } => {
                let payload = self.nodes(snap, frame, payload)?;
                self.m.variant(*enum_id, *index, payload, span)
            }
            NodeKind::Some(inner) => Ok(Value::some(self.node(snap, frame, inner)?)),
            NodeKind::None => Ok(Value::none()),
            NodeKind::Record { ty, fields } => {
                let values = self.nodes(snap, frame, fields)?;
                Ok(Value::Record(Arc::new(RecordValue {
                    ty: ty.clone(),
                    values,
                })))
            }
            NodeKind::List(items) => {
                let v = Value::list(self.nodes(snap, frame, items)?);
                self.charge_built(&v, span)?;
                Ok(v)
            }
            NodeKind::Set(items) => {
                let items: BTreeSet<Value> = self.nodes(snap, frame, items)?.into_iter().collect();
                let v = Value::Set(Arc::new(items));
                self.charge_built(&v, span)?;
                Ok(v)
            }
            NodeKind::EmptyMap => Ok(Value::Map(Arc::default())),
            NodeKind::Index(base, index) => {
                if let Some(base) = self.node_held(snap, base) {
                    let base = base?;
                    // A local index is read in place, as the base is.
                    if let Some(index) = self.node_leaf(snap, frame, index) {
                        return index_value(base, index?, span);
                    }
                    let index = self.node(snap, frame, index)?;
                    return index_value(base, &index, span);
                }
                let base = self.node(snap, frame, base)?;
                let index = self.node(snap, frame, index)?;
                index_value(&base, &index, span)
            }
            NodeKind::Unary(op, operand) => {
                let v = self.node(snap, frame, operand)?;
                crate::ops::unary(*op, v, span)
            }
            NodeKind::Binary(..)
            | NodeKind::Builtin { .. }
            | NodeKind::CallFn { .. }
            | NodeKind::Field(..)
            | NodeKind::If { .. }
            | NodeKind::Match(..)
            | NodeKind::Let { .. } => Err(internal(span, "a node kind that `node` dispatches")),
            NodeKind::SnapshotRead { snapshot, member } => {
                let owned;
                let v = match self.node_leaf(snap, frame, snapshot) {
                    Some(v) => v?,
                    None => {
                        owned = self.node(snap, frame, snapshot)?;
                        &owned
                    }
                };
                self.snapshot_read(v, *member, span)
            }
            NodeKind::SimNext { action, args } => {
                let args = self.nodes(snap, frame, args)?;
                self.sim_next(snap, *action, args, span)
            }
            NodeKind::Fail(error) => Err(error.clone()),
        }
    }

    /// A node that names a value already held (a local, a slot, a tunable or a memoised
    /// computed value), read in place: the step and the dependency are counted as
    /// [`Eval::node`] counts them, without copying the value out. `None` for any other node,
    /// which the caller evaluates.
    fn node_leaf<'a>(
        &mut self,
        snap: &'a Snapshot,
        frame: &'a [Value],
        n: &Node,
    ) -> Option<RtResult<&'a Value>> {
        let NodeKind::Local(id) = &n.kind else {
            return self.node_held(snap, n);
        };
        Some(self.tick(n.span).and_then(|()| {
            frame
                .get(id.index())
                .ok_or_else(|| internal(n.span, "local out of frame"))
        }))
    }

    /// [`Eval::node_leaf`] for the values that live in the snapshot: slots, tunables and
    /// memoised computed values.
    fn node_held<'a>(&mut self, snap: &'a Snapshot, n: &Node) -> Option<RtResult<&'a Value>> {
        let (value, dep) = match &n.kind {
            NodeKind::State(i) => (snap.state(*i), self.m.state_dep(*i)),
            NodeKind::Tunable(i) => (snap.tunable(*i), self.m.tunable_dep(*i)),
            NodeKind::Computed(id) => {
                let memo = snap.memo(id.index())?;
                if let Err(error) = self.tick(n.span) {
                    return Some(Err(error));
                }
                if let Some(top) = self.deps.last_mut() {
                    top.union(&memo.deps);
                }
                return Some(Ok(&memo.value));
            }
            _ => return None,
        };
        if let Err(error) = self.tick(n.span) {
            return Some(Err(error));
        }
        self.dep(dep);
        Some(Ok(value))
    }

    pub(super) fn nodes(
        &mut self,
        snap: &Snapshot,
        frame: &mut [Value],
        ns: &'m [Node],
    ) -> RtResult<Vec<Value>> {
        let mut values = Vec::with_capacity(ns.len());
        for n in ns {
            values.push(self.node(snap, frame, n)?);
        }
        Ok(values)
    }

    /// Evaluates guards left to right; false at the first that fails.
    pub(super) fn node_guards(
        &mut self,
        snap: &Snapshot,
        frame: &mut [Value],
        guards: &'m [NodeGuard],
    ) -> RtResult<bool> {
        for guard in guards {
            let holds = match guard {
                NodeGuard::Cond(cond) => condition(self.node(snap, frame, cond), cond.span)?,
                NodeGuard::Let(pattern, value) => {
                    let v = self.node(snap, frame, value)?;
                    bind(pattern, &v, frame)?
                }
            };
            if !holds {
                return Ok(false);
            }
        }
        Ok(true)
    }

    /// A builtin call's arguments and the call. Most builtins take a receiver and an argument
    /// or two: their values stay on the stack, in an array of exactly their number, so that no
    /// placeholder is written and dropped.
    fn node_builtin(
        &mut self,
        snap: &Snapshot,
        frame: &mut [Value],
        name: &str,
        site: &'m CallSite,
        args: &'m [Node],
        span: SrcSpan,
    ) -> RtResult<Value> {
        match args {
            [] => return self.call_site(snap, frame, name, site, &[], span),
            [a] => {
                let a = self.node_operand(snap, frame, a)?;
                return self.call_site(snap, frame, name, site, std::slice::from_ref(&a), span);
            }
            [a, b] => {
                let a = self.node_operand(snap, frame, a)?;
                let b = self.node_operand(snap, frame, b)?;
                return self.call_site(snap, frame, name, site, &[a, b], span);
            }
            [a, b, c] => {
                let a = self.node_operand(snap, frame, a)?;
                let b = self.node_operand(snap, frame, b)?;
                let c = self.node_operand(snap, frame, c)?;
                return self.call_site(snap, frame, name, site, &[a, b, c], span);
            }
            _ => {}
        }
        let mut values = self.take(0);
        for arg in args {
            match self.node(snap, frame, arg) {
                Ok(v) => values.push(v),
                Err(e) => {
                    self.give(values);
                    return Err(e);
                }
            }
        }
        let result = self.call_site(snap, frame, name, site, &values, span);
        self.give(values);
        result
    }

    /// Calls a closure `|params| body` with `args`. A body of the [`LambdaShape`] of one native
    /// call or field read on parameters and held values is evaluated here with its parameters
    /// read from `args`, counting the same steps in the same order as [`Eval::node`] would after
    /// binding them, which spares the binding and the general dispatch of every call. Its
    /// parameters are not written to the frame: only the body can read them, and this path reads
    /// them from `args`.
    pub(super) fn lambda(
        &mut self,
        snap: &Snapshot,
        frame: &mut [Value],
        (params, shape): (&[LocalId], &LambdaShape),
        args: &[Value],
        body: &'m Node,
    ) -> RtResult<Value> {
        if params.len() == args.len() {
            match (shape, &body.kind) {
                (
                    LambdaShape::Native(sources),
                    NodeKind::Builtin {
                        name,
                        site,
                        args: operands,
                        float,
                    },
                ) if sources.len() == operands.len() => {
                    let span = body.span;
                    let result = match operands.as_slice() {
                        [] => {
                            self.tick(span)?;
                            self.call_site(snap, frame, name, site, &[], span)
                        }
                        [a] => {
                            self.tick(span)?;
                            let a = self.lambda_operand(snap, frame, args, sources[0], a)?;
                            self.call_site(snap, frame, name, site, std::slice::from_ref(&a), span)
                        }
                        [a, b] => {
                            self.tick(span)?;
                            let a = self.lambda_operand(snap, frame, args, sources[0], a)?;
                            let b = self.lambda_operand(snap, frame, args, sources[1], b)?;
                            self.call_site(snap, frame, name, site, &[a, b], span)
                        }
                        [a, b, c] => {
                            self.tick(span)?;
                            let a = self.lambda_operand(snap, frame, args, sources[0], a)?;
                            let b = self.lambda_operand(snap, frame, args, sources[1], b)?;
                            let c = self.lambda_operand(snap, frame, args, sources[2], c)?;
                            self.call_site(snap, frame, name, site, &[a, b, c], span)
                        }
                        _ => {
                            bind_params(params, args, frame);
                            return self.node(snap, frame, body);
                        }
                    };
                    return builtin_result(result?, *float, span);
                }
                (LambdaShape::Field(k), NodeKind::Field(base, index)) => {
                    let span = body.span;
                    self.tick(span)?;
                    self.tick(base.span)?;
                    return match &args[*k] {
                        Value::Record(r) => r
                            .values
                            .get(*index as usize)
                            .cloned()
                            .ok_or_else(|| internal(span, "record field out of range")),
                        other => Err(internal(span, format!("field of {}", other.kind_name()))),
                    };
                }
                _ => {}
            }
        }
        bind_params(params, args, frame);
        self.node(snap, frame, body)
    }

    /// Calls the closure `closure` with each of `items` in order, handing each result to
    /// `each`, as [`crate::native::NativeCtx::call_each`] and
    /// [`crate::native::NativeCtx::call_each_key`] do. A one-parameter closure of the
    /// [`LambdaShape`] of one native call is walked here: the native is resolved once, and an
    /// operand that reads a held value (a state slot, a tunable, a memoised computed value, a
    /// literal) is read from the snapshot for the first element only, while every element
    /// counts the same steps in the same order, records the same dependencies and checks the
    /// budget at the same nodes as [`Eval::lambda`] does for it.
    pub(super) fn call_each(
        &mut self,
        snap: &Snapshot,
        frame: &mut [Value],
        closure: &Value,
        items: &[Value],
        mut each: Each<'_>,
    ) -> Result<(), NativeError> {
        let def = match closure {
            Value::Closure(i) => self.closures.get(*i as usize).copied(),
            _ => None,
        };
        if let Some(ClosureDef::Lambda([_], LambdaShape::Native(sources), body)) = def
            && let NodeKind::Builtin {
                name,
                site,
                args: operands,
                float,
            } = &body.kind
            && let Target::Native(native) = &site.target
            && sources.len() == operands.len()
            && operands.len() <= HELD_OPERANDS
        {
            let span = body.span;
            let mut values: [Value; HELD_OPERANDS] = Default::default();
            let values = &mut values[..operands.len()];
            for (i, x) in items.iter().enumerate() {
                if i == 1
                    && let Some(batch) = &site.batch
                    && self.each_batch(
                        snap, site, batch, sources, operands, values, items, &mut each,
                    )?
                {
                    return Ok(());
                }
                self.tick(span)?;
                for ((value, source), n) in values.iter_mut().zip(sources).zip(operands) {
                    if source.is_some() {
                        self.tick(n.span)?;
                        *value = x.clone();
                    } else if i == 0 || !self.held_again(snap, n)? {
                        *value = self.node_operand(snap, frame, n)?;
                    }
                }
                let v = self.call_native(snap, frame, name, site, native, values, span)?;
                if !each.give(i, x, builtin_result(v, *float, span)?)? {
                    break;
                }
            }
            return Ok(());
        }
        for (i, x) in items.iter().enumerate() {
            let v = self.call_closure(snap, frame, closure, std::slice::from_ref(x))?;
            if !each.give(i, x, v)? {
                break;
            }
        }
        Ok(())
    }

    /// Walks `items` after the first, which [`Eval::call_each`] has called the closure body on
    /// (so that `values` holds its operands and every held value's dependencies are recorded),
    /// with the batch form `batch` of the body's native: `false`, having done nothing, when it
    /// cannot stand in for the per-element walk.
    ///
    /// Every element of the per-element walk counts one step for the call and one for each
    /// operand (the parameter, a local of the enclosing frame, or a held value read again as
    /// [`Eval::held_again`] does), and nothing else when the site neither walks nor builds
    /// elements. So when the step budget covers all the remaining elements, no element can
    /// run out of it, and the steps of the elements `each` consumes are counted in one
    /// addition at the end. `each` may stop early, but the batch form is pure, so the results
    /// it computed past that point are unobservable. A batch that fails at any element leaves
    /// the whole walk to the per-element loop, which reports the error as it always does.
    #[allow(clippy::too_many_arguments)]
    fn each_batch(
        &mut self,
        snap: &Snapshot,
        site: &CallSite,
        batch: &crate::native::NativeBatchFn,
        sources: &[Option<usize>],
        operands: &'m [Node],
        values: &[Value],
        items: &[Value],
        each: &mut Each<'_>,
    ) -> Result<bool, NativeError> {
        let mut at = None;
        for (k, (source, n)) in sources.iter().zip(operands).enumerate() {
            let fixed = match &n.kind {
                _ if source.is_some() => {
                    if at.is_some() {
                        return Ok(false);
                    }
                    at = Some(k);
                    true
                }
                NodeKind::Lit(_)
                | NodeKind::State(_)
                | NodeKind::Tunable(_)
                | NodeKind::Local(_) => true,
                NodeKind::Computed(id) => snap.memo(id.index()).is_some(),
                _ => false,
            };
            if !fixed {
                return Ok(false);
            }
        }
        let rest = &items[1..];
        let per = 1 + operands.len() as u64;
        let Some(at) = at else { return Ok(false) };
        if site.walks
            || site.builds
            || (rest.len() as u64).saturating_mul(per) > self.step_limit.saturating_sub(self.steps)
        {
            return Ok(false);
        }
        let mut keys = std::mem::take(&mut self.keys);
        keys.clear();
        // A batch form that breaks its contract (a number that no `Float` holds, or too few)
        // leaves the walk to the ordinary form, which reports what it does.
        if batch(values, at, rest, &mut keys).is_err()
            || keys.len() != rest.len()
            || !keys.iter().all(|k| k.is_finite())
        {
            self.keys = keys;
            return Ok(false);
        }
        let (used, outcome) = match each {
            Each::Key(each) => {
                each(1, &keys);
                (rest.len() as u64, Ok(true))
            }
            Each::Value(each) => {
                let mut used = 0;
                let mut outcome = Ok(true);
                for (x, &k) in rest.iter().zip(&keys) {
                    used += 1;
                    let Some(v) = Value::float(k) else {
                        outcome = Err(NativeError::Failed(
                            ErrorCode::Internal,
                            "a finite number that is not a Float".into(),
                        ));
                        break;
                    };
                    match each(x, v) {
                        Ok(true) => {}
                        Ok(false) => break,
                        Err(e) => {
                            outcome = Err(e);
                            break;
                        }
                    }
                }
                (used, outcome)
            }
        };
        self.keys = keys;
        self.steps += used * per;
        outcome
    }

    /// Counts the step of reading the held value `n` again, and records its dependencies, as
    /// [`Eval::node`] does, when its value cannot have changed since it was last read in this
    /// walk: `false` for a node that must be evaluated afresh.
    #[inline(always)]
    fn held_again(&mut self, snap: &Snapshot, n: &'m Node) -> RtResult<bool> {
        match &n.kind {
            NodeKind::Lit(_) => self.tick(n.span)?,
            NodeKind::State(i) => {
                self.tick(n.span)?;
                self.dep(self.m.state_dep(*i));
            }
            NodeKind::Tunable(i) => {
                self.tick(n.span)?;
                self.dep(self.m.tunable_dep(*i));
            }
            NodeKind::Computed(id) if let Some(memo) = snap.memo(id.index()) => {
                self.tick(n.span)?;
                if let Some(top) = self.deps.last_mut() {
                    top.union(&memo.deps);
                }
            }
            _ => return Ok(false),
        }
        Ok(true)
    }

    /// An operand of a closure body that [`Eval::lambda`] evaluates: the parameter `source`
    /// names is read from the call's arguments, anything else as [`Eval::node_operand`] reads
    /// it.
    #[inline(always)]
    fn lambda_operand(
        &mut self,
        snap: &Snapshot,
        frame: &mut [Value],
        args: &[Value],
        source: Option<usize>,
        n: &'m Node,
    ) -> RtResult<Value> {
        if let Some(k) = source {
            self.tick(n.span)?;
            return Ok(args[k].clone());
        }
        self.node_operand(snap, frame, n)
    }
}

/// The value of comparison `op` on operands that order as `order`; `None` for an operator that
/// is not a comparison.
fn compare(op: BinaryOp, order: std::cmp::Ordering) -> Option<bool> {
    Some(match op {
        BinaryOp::Eq => order.is_eq(),
        BinaryOp::Ne => order.is_ne(),
        BinaryOp::Lt => order.is_lt(),
        BinaryOp::Le => order.is_le(),
        BinaryOp::Gt => order.is_gt(),
        BinaryOp::Ge => order.is_ge(),
        _ => return None,
    })
}
