//! The evaluator: expressions, statements, atomic action steps and `sim.next`.
//!
//! An [`Eval`] evaluates the bodies of a [`Machine`]'s program against a [`Snapshot`] and a
//! read-only view of the game. It counts every evaluated node against a per-turn budget, tracks
//! which slots each computed value reads (see [`crate::snapshot`]) and keeps the closures that
//! are alive during a builtin call in a stack, so that a closure is a plain index while it is
//! passed around and disappears when the call returns.

use std::sync::Arc;

use harness_compiler::ir::{
    ActionId, BinaryOp, ComputedId, FnId, LayerId, LlmId, LocalId, MemberRef, Pattern, PatternKind,
    SrcSpan, StateId,
};

use crate::calls::{CallSite, PreviewMethod, Target};
use crate::compiled::{LambdaShape, Node, NodePlaceStep, NodeStmt, NodeStmtKind};
use crate::error::{ErrorCode, RtResult, RuntimeError};
use crate::event::{Event, EventKind, Phase};
use crate::game::{Effect, Game};
use crate::llm::{self, LlmAnswer, LlmCall, LlmCallLog, LlmFailureKind, LlmHost, LlmMessage};
use crate::machine::Machine;
use crate::native::{NativeCtx, NativeError, NativeFn};
use crate::ops;

mod node;

use node::Each;

/// Nested expressions between two checks of the stack. Asking how much stack is left costs a
/// thread-local read and keeps the evaluator from being inlined into itself; the guard's red
/// zone (256 KiB) holds this many levels of the evaluator's frames, and the native calls between
/// them, many times over, even in a debug build.
const GUARD_EVERY: u32 = 8;

/// How far a model's probability may stray outside 0..=1 (and their sum above 1) by rounding.
const PROBABILITY_TOLERANCE: f64 = 1e-9;
use crate::snapshot::{DepSet, Memo, Preview, Snapshot};
use crate::value::{Value, VariantValue};

/// A closure alive during a builtin call.
#[derive(Clone, Copy)]
enum ClosureDef<'m> {
    /// `|a, b| body`: parameters are slots of the enclosing frame.
    Lambda(&'m [LocalId], &'m LambdaShape, &'m Node),
    /// A `fn` passed by name.
    Fn(FnId),
}

/// A change one step made, kept until the step commits so that a failed step leaves no trace of
/// its patches.
#[derive(Clone, Debug)]
pub(crate) enum Change {
    /// A state slot changed.
    Patch {
        layer: LayerId,
        field: String,
        old: Value,
        new: Value,
        span: SrcSpan,
    },
    /// A state field governed by a machine moved along one of its edges.
    Transition {
        layer: LayerId,
        field: String,
        from: Value,
        to: Value,
        span: SrcSpan,
    },
    /// A tunable was revised.
    Revision {
        layer: LayerId,
        tunable: String,
        old: Value,
        new: Value,
        span: SrcSpan,
    },
}

/// What a committed step did.
#[derive(Debug, Default)]
pub(crate) struct StepLog {
    pub(crate) changes: Vec<Change>,
    pub(crate) effects: Vec<(Effect, SrcSpan)>,
    /// The reason of the first `halt` the step ran, if it ran one.
    pub(crate) halt: Option<String>,
}

/// An evaluator for one phase of one turn.
pub(crate) struct Eval<'m> {
    m: &'m Machine,
    game: &'m dyn Game,
    steps: u64,
    /// The elements builtins walked and built this turn: counted against the step budget
    /// together with `steps`, but kept apart so that the steps a trace records stay the
    /// evaluated nodes alone.
    work: u64,
    /// The steps the budget allows while `work` stands: the budget less `work`, kept so that
    /// the check of every step is one comparison.
    step_limit: u64,
    /// The bytes of collections and strings built this turn, against the memory budget.
    memory: u64,
    /// The `sim.next` previews made.
    previews: u64,
    /// The steps and previews already handed to the episode's cost accounting.
    counted: (u64, u64),
    closures: Vec<ClosureDef<'m>>,
    deps: Vec<DepSet>,
    in_preview: bool,
    /// Whether the evaluation is traced: an untraced one (a replay's) records neither its
    /// changes nor its preview readings, only what the costs count (revisions, LLM calls).
    pub(crate) traced: bool,
    /// How deep the evaluation of expressions is nested, counted so that only every
    /// [`GUARD_EVERY`]th level checks the stack.
    depth: u32,
    /// Spare frames and argument buffers, reused so that a call does not allocate.
    pool: Vec<Vec<Value>>,
    /// The numbers a batch form writes (see [`crate::native::NativeBatchFn`]), reused across
    /// walks.
    keys: Vec<f64>,
    /// The answers of argument-less game queries (`game.turn`, `game.unknown_cells()`) read so
    /// far, by the address of the query's name in the program, with the view version they were
    /// read at. A query answers from the view alone, so while the version stands a second read
    /// is the first one's value; previews read the same few queries once per branch and per
    /// candidate, and a list-valued one is rebuilt by the game on every read.
    queries: (u64, Vec<(usize, Value)>),
    /// Preview events produced while evaluating, drained by the turn loop.
    pub(crate) events: Vec<Event>,
    /// Where LLM calls go; `None` makes every call fail with `NotConfigured`.
    pub(crate) llm: Option<&'m dyn LlmHost>,
    /// The accounting of the LLM calls made, drained by the turn loop.
    pub(crate) llm_calls: Vec<LlmCallLog>,
    /// The turn, phase and layer that events are tagged with.
    pub(crate) tag: (u32, Phase, Option<LayerId>),
}

fn internal(span: SrcSpan, message: impl Into<String>) -> RuntimeError {
    RuntimeError::new(
        ErrorCode::Internal,
        span,
        format!("internal error: {}", message.into()),
    )
}

/// A `match` that no arm matched.
fn no_arm(span: SrcSpan) -> RuntimeError {
    internal(
        span,
        "no match arm matched; the checker should have proved one does",
    )
}

/// The value of a builtin call whose checked type is `Float` when `float` holds. A generic
/// numeric builtin over an empty collection (`[].sum()` of a `List<Float>`) sees no element to
/// tell `Int` from `Float` and answers the integer zero; the call's checked type says which it
/// is.
fn builtin_result(value: Value, float: bool, span: SrcSpan) -> RtResult<Value> {
    match value {
        Value::Int(n) if float => {
            Value::float(n as f64).ok_or_else(|| internal(span, "a non-finite conversion"))
        }
        value => Ok(value),
    }
}

/// The boolean of an evaluated condition, read where the evaluation left it rather than from
/// a copy of the whole value (see `local`); a condition that is not a `Bool` fails at `span`.
#[inline(always)]
fn condition(v: RtResult<Value>, span: SrcSpan) -> RtResult<bool> {
    match v {
        Ok(Value::Bool(b)) => Ok(b),
        Ok(other) => expect_bool(other, span),
        Err(error) => Err(error),
    }
}

fn expect_bool(v: Value, span: SrcSpan) -> RtResult<bool> {
    v.as_bool()
        .ok_or_else(|| internal(span, format!("expected Bool, found {}", v.kind_name())))
}

impl<'m> Eval<'m> {
    /// An evaluator with a fresh budget.
    pub(crate) fn new(
        m: &'m Machine,
        game: &'m dyn Game,
        tag: (u32, Phase, Option<LayerId>),
    ) -> Self {
        Self::with_frames(m, game, tag, true, Vec::new())
    }

    /// An evaluator with a fresh budget, tracing when `traced` holds, whose spare frames are
    /// `frames`, handed on from an earlier evaluator.
    pub(crate) fn with_frames(
        m: &'m Machine,
        game: &'m dyn Game,
        tag: (u32, Phase, Option<LayerId>),
        traced: bool,
        frames: Vec<Vec<Value>>,
    ) -> Self {
        Self {
            m,
            game,
            steps: 0,
            work: 0,
            step_limit: m.budget,
            memory: 0,
            previews: 0,
            counted: (0, 0),
            closures: Vec::new(),
            deps: Vec::new(),
            in_preview: false,
            traced,
            depth: 0,
            pool: frames,
            keys: Vec::new(),
            queries: (0, Vec::new()),
            events: Vec::new(),
            llm: None,
            llm_calls: Vec::new(),
            tag,
        }
    }

    /// The steps and previews spent since the last call, for the episode's cost accounting;
    /// the budget still counts every step of the phase.
    pub(crate) fn take_counts(&mut self) -> (u64, u64) {
        let counts = (self.steps - self.counted.0, self.previews - self.counted.1);
        self.counted = (self.steps, self.previews);
        counts
    }

    /// Continues with another phase, keeping the budget spent so far this turn.
    pub(crate) fn retag(&mut self, phase: Phase, layer: Option<LayerId>) {
        self.tag.1 = phase;
        self.tag.2 = layer;
    }

    /// Counts one evaluated node against the budget. Every node calls it, so the check stays
    /// inline and the error is built out of line.
    #[inline]
    fn tick(&mut self, span: SrcSpan) -> RtResult<()> {
        self.steps += 1;
        // `steps + work > budget`, with `work` already subtracted.
        if self.steps > self.step_limit {
            return Err(self.out_of_steps(span));
        }
        Ok(())
    }

    #[cold]
    #[inline(never)]
    fn out_of_steps(&self, span: SrcSpan) -> RuntimeError {
        RuntimeError::new(
            ErrorCode::BudgetExhausted,
            span,
            format!(
                "the evaluation budget of {} steps per turn ran out here; reduce the work per \
                 turn (fewer candidates or previews) or raise the budget",
                self.m.budget
            ),
        )
    }

    /// Counts the elements a builtin, literal or operator walked or built against the step
    /// budget, and the bytes it built against the memory budget.
    fn charge(&mut self, elements: u64, bytes: u64, span: SrcSpan) -> RtResult<()> {
        self.work = self.work.saturating_add(elements);
        self.step_limit = self.m.budget.saturating_sub(self.work);
        if self.steps.saturating_add(self.work) > self.m.budget {
            return Err(RuntimeError::new(
                ErrorCode::BudgetExhausted,
                span,
                format!(
                    "the evaluation budget of {} steps per turn ran out here (the elements \
                     builtins walk and build count as steps); reduce the work per turn (smaller \
                     ranges and collections, fewer previews) or raise the budget",
                    self.m.budget
                ),
            ));
        }
        self.memory = self.memory.saturating_add(bytes);
        if self.memory > self.m.limits.memory_per_turn {
            return Err(RuntimeError::new(
                ErrorCode::MemoryExhausted,
                span,
                format!(
                    "the memory budget of {} bytes per turn ran out here; build smaller \
                     collections and strings per turn",
                    self.m.limits.memory_per_turn
                ),
            ));
        }
        Ok(())
    }

    /// Charges a value just built: its elements (or bytes, for a string) as work and its shallow
    /// size as memory.
    fn charge_built(&mut self, v: &Value, span: SrcSpan) -> RtResult<()> {
        let (elements, bytes) = built_size(v);
        if elements == 0 {
            return Ok(());
        }
        self.charge(elements, bytes, span)
    }

    /// The bytes the memory budget has left this turn.
    fn memory_left(&self) -> u64 {
        self.m.limits.memory_per_turn.saturating_sub(self.memory)
    }

    fn dep(&mut self, i: usize) {
        if let Some(top) = self.deps.last_mut() {
            top.insert(i);
        }
    }

    /// The spare frames, for the next evaluator.
    pub(crate) fn take_frames(&mut self) -> Vec<Vec<Value>> {
        std::mem::take(&mut self.pool)
    }

    /// A frame of `n` unit slots, from the pool when one is spare.
    fn take(&mut self, n: usize) -> Vec<Value> {
        let mut frame = self.pool.pop().unwrap_or_default();
        frame.clear();
        // Writing each slot's unit in place: `resize` would clone a unit value into each.
        frame.extend(std::iter::repeat_with(|| Value::Unit).take(n));
        frame
    }

    /// Returns a frame to the pool.
    fn give(&mut self, mut frame: Vec<Value>) {
        // Dropping the values now releases what they share (lists, snapshots) at once.
        frame.clear();
        if self.pool.len() < 64 {
            self.pool.push(frame);
        }
    }

    /// Evaluates a compiled body with `locals` locals, in a frame of its own.
    pub(crate) fn body_value(
        &mut self,
        snap: &Snapshot,
        body: &'m Node,
        locals: usize,
    ) -> RtResult<Value> {
        let mut frame = self.take(locals);
        let value = self.node(snap, &mut frame, body);
        self.give(frame);
        value
    }

    /// The initial value of state slot `slot`.
    pub(crate) fn state_init(&mut self, snap: &Snapshot, slot: usize) -> RtResult<Value> {
        let m = self.m;
        let locals = m.program.state[slot].init.frame.locals.len();
        self.body_value(snap, &m.compiled.state[slot], locals)
    }

    /// The gate of revise block `i` of `layer`.
    pub(crate) fn revise_gate(
        &mut self,
        snap: &Snapshot,
        layer: LayerId,
        i: usize,
    ) -> RtResult<Value> {
        let m = self.m;
        let locals = m.program.layers[layer.index()].revise[i].frame.locals.len();
        self.body_value(
            snap,
            &m.compiled.layers[layer.index()].revise[i].cond,
            locals,
        )
    }

    /// Runs the body of revise block `i` of `layer` on `snap`.
    pub(crate) fn revise(
        &mut self,
        snap: &mut Snapshot,
        layer: LayerId,
        i: usize,
        log: &mut StepLog,
    ) -> RtResult<()> {
        let m = self.m;
        let mut frame = self.take(m.program.layers[layer.index()].revise[i].frame.locals.len());
        let body = &m.compiled.layers[layer.index()].revise[i].body;
        let ran = self.stmts(snap, &mut frame, body, layer, log);
        self.give(frame);
        ran
    }

    /// The arguments of decide rule `i` of `layer` when its guards hold, `None` when one fails.
    pub(crate) fn rule(
        &mut self,
        snap: &Snapshot,
        layer: LayerId,
        i: usize,
    ) -> RtResult<Option<Vec<Value>>> {
        let m = self.m;
        let rule = &m.compiled.layers[layer.index()].decide[i];
        let mut frame = self.take(m.program.layers[layer.index()].decide[i].frame.locals.len());
        let args = match self.node_guards(snap, &mut frame, &rule.guards) {
            Ok(true) => self.nodes(snap, &mut frame, &rule.args).map(Some),
            Ok(false) => Ok(None),
            Err(error) => Err(error),
        };
        self.give(frame);
        args
    }

    /// A member read in a successor snapshot.
    fn snapshot_read(&mut self, v: &Value, member: MemberRef, span: SrcSpan) -> RtResult<Value> {
        match v {
            Value::Snapshot(other) => self.member(other, member, span),
            other => Err(internal(
                span,
                format!("member read on {}", other.kind_name()),
            )),
        }
    }

    /// The body of `fn` `func` in `frame`, its arguments already in place.
    fn body(&mut self, snap: &Snapshot, frame: &mut [Value], func: FnId) -> RtResult<Value> {
        let m: &'m Machine = self.m;
        match m.compiled.fns.get(func.index()) {
            Some(body) => self.node(snap, frame, body),
            None => Err(internal(SrcSpan::default(), "unknown fn")),
        }
    }

    /// An infix operator other than `and` and `or` on evaluated operands.
    fn binary(&mut self, op: BinaryOp, a: Value, b: Value, span: SrcSpan) -> RtResult<Value> {
        // Numbers and booleans walk nothing and build nothing: the general path below would
        // count zero for them, so they skip it.
        if scalar(&a) && scalar(&b) {
            // Float arithmetic, the commonest operation of the bundled harnesses' scores, is
            // done here, as `ops::binary` does it; every other operator goes there.
            if let (Value::Float(x), Value::Float(y)) = (&a, &b) {
                let (x, y) = (x.get(), y.get());
                let r = match op {
                    BinaryOp::Add => x + y,
                    BinaryOp::Sub => x - y,
                    BinaryOp::Mul => x * y,
                    _ => return ops::binary(op, a, b, span),
                };
                return ops::finite(r, span, op.symbol());
            }
            return ops::binary(op, a, b, span);
        }
        // Only `+` builds (concatenated strings and lists); `in`, `==` and the other comparisons
        // walk both operands in step, at most every element of the larger at every depth, as
        // the checker's cost bound counts them. Counting stops past the budget left, which the
        // charge then refuses.
        let walked = match op {
            BinaryOp::Add => 0,
            _ => {
                let left = self.m.budget.saturating_sub(self.steps + self.work);
                compared_size(&a, left).max(compared_size(&b, left))
            }
        };
        if walked > 0 {
            self.charge(walked, 0, span)?;
        }
        let v = ops::binary(op, a, b, span)?;
        if op == BinaryOp::Add {
            self.charge_built(&v, span)?;
        }
        Ok(v)
    }

    fn member(&mut self, snap: &Snapshot, member: MemberRef, span: SrcSpan) -> RtResult<Value> {
        match member {
            MemberRef::State(id) => {
                self.dep(self.m.state_dep(id.index()));
                Ok(snap.state(id.index()).clone())
            }
            MemberRef::Tunable(id) => {
                self.dep(self.m.tunable_dep(id.index()));
                Ok(snap.tunable(id.index()).clone())
            }
            MemberRef::Computed(id) => self.computed(snap, id, span),
        }
    }

    /// The value of a computed value in `snap`, memoised with its dependencies.
    pub(crate) fn computed(
        &mut self,
        snap: &Snapshot,
        id: ComputedId,
        span: SrcSpan,
    ) -> RtResult<Value> {
        if let Some(memo) = snap.memo(id.index()) {
            if let Some(top) = self.deps.last_mut() {
                top.union(&memo.deps);
            }
            return Ok(memo.value.clone());
        }
        let def = self
            .m
            .program
            .computed
            .get(id.index())
            .ok_or_else(|| internal(span, "unknown computed value"))?;
        let m: &'m Machine = self.m;
        let body = m
            .compiled
            .computed
            .get(id.index())
            .ok_or_else(|| internal(span, "unknown computed value"))?;
        let locals = def.body.frame.locals.len();
        self.deps.push(DepSet::default());
        // Most computed values bind no local, and need no frame from the pool.
        let result = if locals == 0 {
            self.node(snap, &mut [], body)
        } else {
            let mut frame = self.take(locals);
            let result = self.node(snap, &mut frame, body);
            self.give(frame);
            result
        };
        let deps = self.deps.pop().unwrap_or_default();
        let value = result?;
        if let Some(top) = self.deps.last_mut() {
            top.union(&deps);
        }
        snap.set_memo(
            id.index(),
            Memo {
                value: value.clone(),
                deps,
            },
        );
        Ok(value)
    }

    /// The game query `name` with `args`; `key`, the address of the name in the program,
    /// keys the answers of argument-less queries read this turn.
    fn query(&mut self, key: usize, name: &str, args: &[Value], span: SrcSpan) -> RtResult<Value> {
        self.dep(self.m.game_dep());
        if args.is_empty() {
            let version = self.game.view_version();
            if self.queries.0 != version {
                self.queries = (version, Vec::new());
            }
            if let Some((_, v)) = self.queries.1.iter().find(|(k, _)| *k == key) {
                return Ok(v.clone());
            }
        }
        let value = self.game.query(name, args).map_err(|message| {
            RuntimeError::new(
                ErrorCode::Native,
                span,
                format!("game query `game.{name}` failed: {message}"),
            )
        })?;
        if args.is_empty() {
            self.queries.1.push((key, value.clone()));
        }
        Ok(value)
    }

    fn call_fn(
        &mut self,
        snap: &Snapshot,
        func: FnId,
        args: &[Value],
        span: SrcSpan,
    ) -> RtResult<Value> {
        let def = self
            .m
            .program
            .fns
            .get(func.index())
            .ok_or_else(|| internal(span, "unknown fn"))?;
        let mut frame = self.take(def.body.frame.locals.len().max(args.len()));
        frame[..args.len()].clone_from_slice(args);
        let result = self.body(snap, &mut frame, func);
        self.give(frame);
        result
    }

    /// Calls the builtin `name`, resolved to `site`, with evaluated arguments.
    fn call_site(
        &mut self,
        snap: &Snapshot,
        frame: &mut [Value],
        name: &str,
        site: &CallSite,
        args: &[Value],
        span: SrcSpan,
    ) -> RtResult<Value> {
        let native = match &site.target {
            Target::Native(native) => native,
            Target::Preview(method) => {
                return self.preview_method(snap, frame, name, *method, args, span);
            }
            Target::Missing => {
                return Err(RuntimeError::new(
                    ErrorCode::Native,
                    span,
                    format!("no native implementation of the builtin `{name}` is registered"),
                ));
            }
        };
        self.call_native(snap, frame, name, site, native, args, span)
    }

    /// Calls the native `native` that `site` resolves `name` to, with evaluated arguments,
    /// charging what it walks and builds.
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    fn call_native(
        &mut self,
        snap: &Snapshot,
        frame: &mut [Value],
        name: &str,
        site: &CallSite,
        native: &NativeFn,
        args: &[Value],
        span: SrcSpan,
    ) -> RtResult<Value> {
        // A builtin walks its collection arguments and builds its result: both count, so that
        // `range(0, 1000000).sum()` costs a million steps rather than two.
        if site.walks {
            let walked = args.iter().map(|a| built_size(a).0).sum::<u64>();
            if walked > 0 {
                self.charge(walked, 0, span)?;
            }
        }
        let mut ctx = CallCtx {
            ev: self,
            snap,
            frame,
        };
        let v = native(&mut ctx, args).map_err(|e| match e {
            NativeError::Failed(kind, message) => {
                RuntimeError::new(kind, span, format!("`{name}`: {message}"))
            }
            NativeError::Runtime(e) => e,
        })?;
        if site.builds {
            self.charge_built(&v, span)?;
        }
        Ok(v)
    }

    /// Calls a closure value with arguments.
    fn call_closure(
        &mut self,
        snap: &Snapshot,
        frame: &mut [Value],
        closure: &Value,
        args: &[Value],
    ) -> RtResult<Value> {
        let def = match closure {
            Value::Closure(i) => self.closures.get(*i as usize).copied(),
            _ => None,
        };
        match def {
            Some(ClosureDef::Lambda(params, shape, body)) => {
                self.lambda(snap, frame, (params, shape), args, body)
            }
            Some(ClosureDef::Fn(func)) => self.call_fn(snap, func, args, SrcSpan::default()),
            None => Err(internal(
                SrcSpan::default(),
                "a closure was called after its call ended",
            )),
        }
    }

    /// `expect`, `prob`, `branches` and `weights` on a preview: the runtime owns previews, so it implements
    /// their methods itself and records each reading as a preview event.
    fn preview_method(
        &mut self,
        snap: &Snapshot,
        frame: &mut [Value],
        name: &str,
        method: PreviewMethod,
        args: &[Value],
        span: SrcSpan,
    ) -> RtResult<Value> {
        let Some(Value::Preview(preview)) = args.first() else {
            return Err(internal(span, "a preview method without a preview"));
        };
        let reading = name.strip_prefix("Preview.").unwrap_or(name);
        let result = match method {
            PreviewMethod::Expect | PreviewMethod::Prob => {
                let f = args
                    .get(1)
                    .ok_or_else(|| internal(span, "missing closure"))?;
                let mut total = 0.0;
                for (weight, branch) in &preview.branches {
                    // Reading a successor snapshot is part of the preview: a `sim.next` reached
                    // from here would be a second step.
                    let outer = std::mem::replace(&mut self.in_preview, true);
                    let v = self.call_closure(snap, frame, f, &[Value::Snapshot(branch.clone())]);
                    self.in_preview = outer;
                    let v = v?;
                    total += weight
                        * if method == PreviewMethod::Prob {
                            if expect_bool(v, span)? { 1.0 } else { 0.0 }
                        } else {
                            v.as_f64()
                                .ok_or_else(|| internal(span, "expect of a non-number"))?
                        };
                }
                ops::finite(total, span, reading)?
            }
            PreviewMethod::Branches => Value::list(
                preview
                    .branches
                    .iter()
                    .map(|(_, s)| Value::Snapshot(s.clone()))
                    .collect(),
            ),
            PreviewMethod::Weights => Value::list(
                preview
                    .branches
                    .iter()
                    .map(|(w, _)| ops::finite(*w, span, "weights"))
                    .collect::<RtResult<_>>()?,
            ),
            PreviewMethod::Unknown => {
                return Err(RuntimeError::new(
                    ErrorCode::Native,
                    span,
                    format!("previews have no method `{reading}`"),
                ));
            }
        };
        if !self.traced {
            return Ok(result);
        }
        let (turn, phase, layer) = self.tag;
        self.events.push(Event {
            turn,
            phase,
            layer: layer.map(|l| self.m.layer_name(l)),
            span,
            kind: EventKind::Preview {
                action: preview.action.to_string(),
                args: preview.args.clone(),
                branches: preview.branches.len(),
                reading: reading.to_string(),
                value: result.clone(),
            },
        });
        Ok(result)
    }

    /// `sim.next(action(args))`: runs the action on a copy of `snap`, expands the branches of the
    /// models of its effects and runs the observation handlers on each branch.
    fn sim_next(
        &mut self,
        snap: &Snapshot,
        action: ActionId,
        args: Vec<Value>,
        span: SrcSpan,
    ) -> RtResult<Value> {
        if self.in_preview {
            return Err(RuntimeError::new(
                ErrorCode::NestedPreview,
                span,
                "`sim.next` inside a preview: previews are one step deep",
            ));
        }
        self.previews += 1;
        self.in_preview = true;
        let result = self.sim_next_inner(snap, action, args, span);
        self.in_preview = false;
        result
    }

    fn sim_next_inner(
        &mut self,
        snap: &Snapshot,
        action: ActionId,
        args: Vec<Value>,
        span: SrcSpan,
    ) -> RtResult<Value> {
        let name = self.m.action_names[action.index()].clone();
        let mut copy = snap.clone();
        // The copy is the preview's own: a failed step discards it with the preview, so the
        // step runs on it in place rather than on a second copy.
        let step = self.run_step(&mut copy, action, &args, span, false)?;
        let mut branches = Vec::new();
        if let Ok(log) = step {
            branches.push((1.0, copy));
            for (effect, _) in &log.effects {
                let Some((model, compiled)) = self.m.model(&effect.name) else {
                    continue;
                };
                let mut next = Vec::new();
                for (weight, state) in branches {
                    let mut frame = self.take(model.frame.locals.len().max(effect.args.len()));
                    for (slot, arg) in frame.iter_mut().zip(&effect.args) {
                        *slot = arg.clone();
                    }
                    // Probabilities add up from 0.0 in model order, and `otherwise` takes
                    // `1.0 - sum`: one fixed order of float operations, so previews are
                    // bit-for-bit reproducible.
                    let mut sum = 0.0;
                    // The last outcome takes the state itself rather than a copy.
                    let mut state = Some(state);
                    let outcomes = model.branches.len().min(compiled.len());
                    for (k, (branch, node)) in model.branches.iter().zip(compiled).enumerate() {
                        let Some(current) = &state else {
                            break;
                        };
                        let p = match &node.probability {
                            Some(p) => {
                                let v = self.node(current, &mut frame, p)?;
                                let p = v
                                    .as_f64()
                                    .ok_or_else(|| internal(branch.span, "probability"))?;
                                // Probabilities computed as sums of sample weights overshoot 0 and 1
                                // by rounding; a tolerance far below any meaningful mass
                                // accepts them unchanged, so the arithmetic stays exact.
                                if !(-PROBABILITY_TOLERANCE..=1.0 + PROBABILITY_TOLERANCE)
                                    .contains(&p)
                                    || sum + p > 1.0 + PROBABILITY_TOLERANCE
                                {
                                    return Err(RuntimeError::new(
                                        ErrorCode::BadModel,
                                        branch.span,
                                        format!(
                                            "this outcome's probability is {p}, but the earlier \
                                             outcomes already take {sum}; probabilities must lie \
                                             in 0..=1 and sum to at most 1"
                                        ),
                                    ));
                                }
                                sum += p;
                                p
                            }
                            None => (1.0 - sum).max(0.0),
                        };
                        if p <= 0.0 {
                            continue;
                        }
                        let obs_args = self.nodes(current, &mut frame, &node.args)?;
                        let mut successor = match state.take() {
                            Some(last) if k + 1 == outcomes => last,
                            Some(kept) => state.insert(kept).clone(),
                            None => break,
                        };
                        self.observe(
                            &mut successor,
                            &branch.observation,
                            &obs_args,
                            &mut StepLog::default(),
                        )?;
                        next.push((weight * p, successor));
                    }
                    self.give(frame);
                }
                branches = next;
            }
        }
        Ok(Value::Preview(Arc::new(Preview {
            action: name,
            args,
            branches: branches
                .into_iter()
                .map(|(w, s)| (w, Arc::new(s)))
                .collect(),
        })))
    }

    /// Runs every enabled handler of an observation, bottom-up.
    pub(crate) fn observe(
        &mut self,
        snap: &mut Snapshot,
        name: &str,
        args: &[Value],
        log: &mut StepLog,
    ) -> RtResult<()> {
        let m = self.m;
        for &layer in &m.order {
            let compiled = &m.compiled.layers[layer.index()].handlers;
            for (handler, body) in m.program.layers[layer.index()]
                .handlers
                .iter()
                .zip(compiled)
                .filter(|(h, _)| h.observation == name)
            {
                let mut frame = self.take(handler.frame.locals.len().max(args.len()));
                for (slot, arg) in frame.iter_mut().zip(args) {
                    *slot = arg.clone();
                }
                let ran = self.stmts(snap, &mut frame, body, layer, log);
                self.give(frame);
                ran?;
            }
        }
        Ok(())
    }

    /// Whether an action is available with these arguments.
    pub(crate) fn available(
        &mut self,
        snap: &Snapshot,
        action: ActionId,
        args: &[Value],
    ) -> RtResult<bool> {
        let m = self.m;
        let def = &m.program.actions[action.index()];
        let Some(cond) = &m.compiled.actions[action.index()].available else {
            return Ok(true);
        };
        let mut frame = self.take(def.frame.locals.len().max(args.len()));
        for (slot, arg) in frame.iter_mut().zip(args) {
            *slot = arg.clone();
        }
        let holds = self.node(snap, &mut frame, cond);
        self.give(frame);
        expect_bool(holds?, cond.span)
    }

    /// Runs an action as one atomic step on `snap`.
    ///
    /// The outer error is a runtime error that ends the episode; the inner one a rejected step
    /// (unavailable, or a `requires` failed). Either way, when the result is not `Ok(Ok(_))`,
    /// the slots and tunables of `snap` are unchanged (after a runtime error in the body, its
    /// memo is empty).
    pub(crate) fn step(
        &mut self,
        snap: &mut Snapshot,
        action: ActionId,
        args: &[Value],
        span: SrcSpan,
    ) -> RtResult<Result<StepLog, RuntimeError>> {
        self.run_step(snap, action, args, span, true)
    }

    /// [`Eval::step`]; with `atomic` false, the body's patches go straight to `snap`, which a
    /// runtime error then leaves half-patched (for a copy that the caller discards on error).
    fn run_step(
        &mut self,
        snap: &mut Snapshot,
        action: ActionId,
        args: &[Value],
        span: SrcSpan,
        atomic: bool,
    ) -> RtResult<Result<StepLog, RuntimeError>> {
        let m = self.m;
        let def = m
            .program
            .actions
            .get(action.index())
            .ok_or_else(|| internal(span, "unknown action"))?;
        let compiled = &m.compiled.actions[action.index()];
        let mut frame = self.take(def.frame.locals.len().max(args.len()));
        frame[..args.len()].clone_from_slice(args);
        if let Some(cond) = &compiled.available
            && !condition(self.node(snap, &mut frame, cond), cond.span)?
        {
            return Ok(Err(RuntimeError::new(
                ErrorCode::Unavailable,
                cond.span,
                format!(
                    "action `{}` is not available: its `available when` is false",
                    def.name
                ),
            )));
        }
        for (req, cond) in def.requires.iter().zip(&compiled.requires) {
            if !condition(self.node(snap, &mut frame, cond), cond.span)? {
                let error = m.program.errors.get(req.error.index());
                let (code, message) = error.map_or(("?", "no message"), |e| {
                    (e.code.as_str(), e.message.as_str())
                });
                return Ok(Err(RuntimeError::new(
                    ErrorCode::RequiresFailed,
                    req.span,
                    format!(
                        "action `{}` failed with {code}: {message}; no patch of it applied",
                        def.name
                    ),
                )
                .with_declared(code)));
            }
        }
        let mut log = StepLog::default();
        if atomic {
            // The body runs on `snap` itself, and a runtime error puts its slots and tunables
            // back: that spares copying the memo table on every action, at the price of
            // emptying it after an error, which ends the episode anyway.
            let before = snap.rollback_point();
            if let Err(error) = self.stmts(snap, &mut frame, &compiled.body, def.layer, &mut log) {
                snap.roll_back(before);
                return Err(error);
            }
        } else {
            self.stmts(snap, &mut frame, &compiled.body, def.layer, &mut log)?;
        }
        self.give(frame);
        Ok(Ok(log))
    }

    /// Whether the patches of a step are recorded as changes: a preview's are thrown away with
    /// its branches, and an untraced step records none.
    fn records_changes(&self) -> bool {
        !self.in_preview && self.traced
    }

    /// Runs statements, applying patches to `snap` as they come.
    pub(crate) fn stmts(
        &mut self,
        snap: &mut Snapshot,
        frame: &mut [Value],
        stmts: &'m [NodeStmt],
        layer: LayerId,
        log: &mut StepLog,
    ) -> RtResult<()> {
        for stmt in stmts {
            self.tick(stmt.span)?;
            match &stmt.kind {
                NodeStmtKind::Let(pattern, value) => {
                    let v = self.node(snap, frame, value)?;
                    if !bind(pattern, &v, frame)? {
                        return Err(internal(pattern.span, "a `let` pattern did not match"));
                    }
                }
                NodeStmtKind::Patch {
                    state,
                    path,
                    op,
                    value,
                } => {
                    let v = self.node(snap, frame, value)?;
                    let mut keys = Vec::with_capacity(path.len());
                    for step in path {
                        keys.push(match step {
                            NodePlaceStep::Field(i) => Key::Field(*i as usize),
                            NodePlaceStep::Index(e) => Key::Index(self.node(snap, frame, e)?),
                        });
                    }
                    let slot = state.index();
                    if !keys.is_empty() && !self.records_changes() {
                        // Nothing records the old value of an element or field patch here
                        // (nor can it be a transition), so the slot's own value is updated,
                        // in place when nothing else shares it. An error leaves the slot
                        // `Unit`, in a copy that a preview discards or a snapshot whose
                        // episode the error ends (an action's is rolled back).
                        let old = snap.take_state(slot);
                        let new = update(old, &keys, *op, v, stmt.span)?;
                        snap.set_state(slot, new, self.m.state_dep(slot));
                        continue;
                    }
                    let old = snap.state(slot).clone();
                    let new = update(old.clone(), &keys, *op, v, stmt.span)?;
                    let def = &self.m.program.state[slot];
                    let transition =
                        path.is_empty() && self.transition(*state, &old, &new, stmt.span)?;
                    if !self.records_changes() {
                        snap.set_state(slot, new, self.m.state_dep(slot));
                        continue;
                    }
                    snap.set_state(slot, new.clone(), self.m.state_dep(slot));
                    let field = state_field(self.m, slot);
                    if transition {
                        log.changes.push(Change::Patch {
                            layer: def.layer,
                            field: field.clone(),
                            old: old.clone(),
                            new: new.clone(),
                            span: stmt.span,
                        });
                        log.changes.push(Change::Transition {
                            layer: def.layer,
                            field,
                            from: old,
                            to: new,
                            span: stmt.span,
                        });
                    } else {
                        log.changes.push(Change::Patch {
                            layer: def.layer,
                            field,
                            old,
                            new,
                            span: stmt.span,
                        });
                    }
                }
                NodeStmtKind::LetLlm { pattern, llm, args } => {
                    let args = self.nodes(snap, frame, args)?;
                    let v = self.llm_call(snap, *llm, &args, stmt.span)?;
                    if !bind(pattern, &v, frame)? {
                        return Err(internal(pattern.span, "a `let` pattern did not match"));
                    }
                }
                NodeStmtKind::Emit { effect, args } => {
                    let args = self.nodes(snap, frame, args)?;
                    log.effects.push((
                        Effect {
                            name: effect.clone(),
                            args,
                        },
                        stmt.span,
                    ));
                }
                NodeStmtKind::Revise { tunable, op, value } => {
                    let v = self.node(snap, frame, value)?;
                    let t = tunable.index();
                    let old = snap.tunable(t).clone();
                    let new = ops::assign(*op, old.clone(), v, stmt.span)?;
                    let def = &self.m.program.tunables[t];
                    let name = format!(
                        "{}.{}",
                        def.layer.map(|l| self.m.layer_name(l)).unwrap_or_default(),
                        def.name
                    );
                    if let Some(range) = &def.range
                        && !ops::in_range(&new, range)
                    {
                        return Err(RuntimeError::new(
                            ErrorCode::TunableOutOfRange,
                            stmt.span,
                            format!(
                                "this revision would set `{name}` to {new}, outside its declared \
                                     range {}; nothing of the revise block applied",
                                ops::range_text(range)
                            ),
                        ));
                    }
                    snap.set_tunable(t, new.clone(), self.m.tunable_dep(t));
                    log.changes.push(Change::Revision {
                        layer,
                        tunable: name,
                        old,
                        new,
                        span: stmt.span,
                    });
                }
                NodeStmtKind::Halt { reason } => {
                    if log.halt.is_none() {
                        log.halt = Some(reason.clone());
                    }
                }
                NodeStmtKind::If {
                    guards,
                    then,
                    otherwise,
                } => {
                    let branch = if self.node_guards(snap, frame, guards)? {
                        then
                    } else {
                        otherwise
                    };
                    self.stmts(snap, frame, branch, layer, log)?;
                }
            }
        }
        Ok(())
    }
}

impl<'m> Eval<'m> {
    /// Whether a patch of the whole of slot `state` from `old` to `new` is a transition (true)
    /// or no move or no machine (false); a move along no edge is an error.
    fn transition(
        &self,
        state: StateId,
        old: &Value,
        new: &Value,
        span: SrcSpan,
    ) -> RtResult<bool> {
        let def = &self.m.program.state[state.index()];
        let Some(machine) = self.m.program.layers[def.layer.index()]
            .machines
            .iter()
            .find(|m| m.state == state)
        else {
            return Ok(false);
        };
        let (Value::Variant(from), Value::Variant(to)) = (old, new) else {
            return Ok(false);
        };
        if from.index == to.index {
            return Ok(false);
        }
        if !machine.allows(from.index, to.index) {
            let field = state_field(self.m, state.index());
            return Err(RuntimeError::new(
                ErrorCode::BadTransition,
                span,
                format!(
                    "`{field}` cannot go from {old} to {new}: its machine has no such edge; add \
                     `{} -> {}` to the machine, or patch it to a state the machine allows",
                    from.name, to.name
                ),
            ));
        }
        Ok(true)
    }

    /// Makes an LLM call (or, in a preview, none) and returns its `LlmResult` value. A reply
    /// that is malformed, breaks its type or bounds, or fails an `ensure` is asked again, in the
    /// same conversation with the item's feedback, as often as its `retry` allows. Every
    /// attempt that went to the host (or found none) is an `llm_call` event with its attempt
    /// number; its latency goes to the accounting only.
    fn llm_call(
        &mut self,
        snap: &Snapshot,
        id: LlmId,
        args: &[Value],
        span: SrcSpan,
    ) -> RtResult<Value> {
        let m = self.m;
        let def = m
            .program
            .llms
            .get(id.index())
            .ok_or_else(|| internal(span, "unknown LLM effect"))?;
        if self.in_preview {
            // Previews are pure: the call is not made and not recorded.
            return self.llm_failed(def, LlmFailureKind::InPreview);
        }
        let system = llm::render(&def.system, def, args, None);
        let user = llm::render(&def.user, def, args, None);
        let attempts = 1 + def.retry.as_ref().map_or(0, |retry| retry.count);
        let mut history = Vec::new();
        for attempt in 1..=attempts {
            let call = LlmCall {
                effect: def.name.clone(),
                system: system.clone(),
                user: user.clone(),
                history: history.clone(),
                attempt,
                shape: def.shape.clone(),
            };
            let answer = match self.llm {
                Some(host) => host.call(&call),
                None => LlmAnswer::failed(
                    LlmFailureKind::NotConfigured,
                    "no LLM is configured for this run (pass --llm-provider or --llm-replay)",
                ),
            };
            let mut result = match &answer.outcome {
                Ok(json) => llm::reply_value(def, json, &mut |e, i| {
                    m.variant(e, i, Vec::new(), span).ok()
                })
                .map_err(|message| (LlmFailureKind::SchemaViolation, message)),
                Err(failure) => Err((failure.kind, failure.message.clone())),
            };
            if let Ok(reply) = &result
                && let Some(message) = self.failed_ensure(snap, id, reply, args)?
            {
                result = Err((LlmFailureKind::Invalid, message));
            }
            self.log_llm_call(def, &call, &answer, &result, span);
            let (kind, message) = match result {
                Ok(reply) => return m.variant(def.result_enum, 0, vec![reply], span),
                Err(failure) => failure,
            };
            let model_at_fault = matches!(
                kind,
                LlmFailureKind::MalformedJson
                    | LlmFailureKind::SchemaViolation
                    | LlmFailureKind::OutOfRange
                    | LlmFailureKind::Invalid
            );
            match &def.retry {
                Some(retry) if model_at_fault && attempt < attempts => {
                    history.push(LlmMessage {
                        role: "assistant".to_owned(),
                        content: answer.content.unwrap_or_default(),
                    });
                    history.push(LlmMessage {
                        role: "user".to_owned(),
                        content: llm::render(&retry.feedback, def, args, Some(&message)),
                    });
                }
                _ => return self.llm_failed(def, kind),
            }
        }
        Err(internal(span, "an LLM call ended without an answer"))
    }

    /// The message of the first `ensure` of LLM effect `id` that `reply` fails, if any.
    fn failed_ensure(
        &mut self,
        snap: &Snapshot,
        id: LlmId,
        reply: &Value,
        args: &[Value],
    ) -> RtResult<Option<String>> {
        let m = self.m;
        let def = &m.program.llms[id.index()];
        for (ensure, cond) in def.ensures.iter().zip(&m.compiled.ensures[id.index()]) {
            let body = &ensure.condition;
            let mut frame = self.take(body.frame.locals.len().max(1 + args.len()));
            frame[0] = reply.clone();
            frame[1..=args.len()].clone_from_slice(args);
            let held = self.node(snap, &mut frame, cond);
            self.give(frame);
            if held? != Value::Bool(true) {
                return Ok(Some(ensure.message.clone()));
            }
        }
        Ok(None)
    }

    /// The `llm_call` event and the accounting entry of one attempt.
    fn log_llm_call(
        &mut self,
        def: &harness_compiler::ir::LlmDef,
        call: &LlmCall,
        answer: &LlmAnswer,
        result: &Result<Value, (LlmFailureKind, String)>,
        span: SrcSpan,
    ) {
        let (outcome, message) = match result {
            Ok(_) => ("ok".to_owned(), None),
            Err((kind, message)) => (kind.as_str().to_owned(), Some(message.clone())),
        };
        let (turn, phase, layer) = self.tag;
        let accounting = answer.accounting.clone();
        let provider = (!accounting.provider.is_empty()).then(|| accounting.provider.clone());
        let model = (!accounting.model.is_empty()).then(|| accounting.model.clone());
        self.events.push(Event {
            turn,
            phase,
            layer: layer.map(|l| self.m.layer_name(l)),
            span,
            kind: EventKind::LlmCall {
                effect: def.name.clone(),
                attempt: call.attempt,
                outcome: outcome.clone(),
                provider,
                model,
                prompt_tokens: accounting.prompt_tokens,
                completion_tokens: accounting.completion_tokens,
            },
        });
        self.llm_calls.push(LlmCallLog {
            turn,
            effect: def.name.clone(),
            attempt: call.attempt,
            outcome,
            message,
            accounting,
        });
    }

    /// `LlmResult.Failed(kind)`.
    fn llm_failed(
        &self,
        def: &harness_compiler::ir::LlmDef,
        kind: LlmFailureKind,
    ) -> RtResult<Value> {
        let span = def.span;
        let failure = self
            .m
            .variant(def.failure_enum, kind.index(), Vec::new(), span)?;
        self.m.variant(def.result_enum, 1, vec![failure], span)
    }
}

/// The qualified name of state slot `slot`, `layer.field`, as events and messages show it.
fn state_field(m: &Machine, slot: usize) -> String {
    let def = &m.program.state[slot];
    format!("{}.{}", m.layer_name(def.layer), def.name)
}

/// One step into a patched place, evaluated.
enum Key {
    Field(usize),
    Index(Value),
}

/// The value `old` with the place under `keys` combined with `v`.
fn update(
    old: Value,
    keys: &[Key],
    op: harness_compiler::ir::AssignOp,
    v: Value,
    span: SrcSpan,
) -> RtResult<Value> {
    let Some((key, rest)) = keys.split_first() else {
        return ops::assign(op, old, v, span);
    };
    match (old, key) {
        (Value::Record(mut record), Key::Field(i)) => {
            let r = Arc::make_mut(&mut record);
            let slot = r
                .values
                .get_mut(*i)
                .ok_or_else(|| internal(span, "record field out of range"))?;
            *slot = update(std::mem::replace(slot, Value::Unit), rest, op, v, span)?;
            Ok(Value::Record(record))
        }
        (Value::List(mut items), Key::Index(index)) => {
            let len = items.len();
            let i = list_index(index, len, span)?;
            let list = Arc::make_mut(&mut items);
            list[i] = update(
                std::mem::replace(&mut list[i], Value::Unit),
                rest,
                op,
                v,
                span,
            )?;
            Ok(Value::List(items))
        }
        (Value::Map(mut map), Key::Index(k)) => {
            let entries = Arc::make_mut(&mut map);
            match entries.remove(k) {
                Some(current) => {
                    entries.insert(k.clone(), update(current, rest, op, v, span)?);
                }
                None if rest.is_empty() && op == harness_compiler::ir::AssignOp::Set => {
                    entries.insert(k.clone(), v);
                }
                None => {
                    return Err(RuntimeError::new(
                        ErrorCode::IndexOutOfRange,
                        span,
                        format!("the map has no key {k} to update; set it with `=` first"),
                    ));
                }
            }
            Ok(Value::Map(map))
        }
        (other, _) => Err(internal(
            span,
            format!("cannot patch inside {}", other.kind_name()),
        )),
    }
}

fn list_index(index: &Value, len: usize, span: SrcSpan) -> RtResult<usize> {
    match index {
        Value::Int(i) if *i >= 0 && (*i as u64) < len as u64 => Ok(*i as usize),
        Value::Int(i) => Err(RuntimeError::new(
            ErrorCode::IndexOutOfRange,
            span,
            format!("index {i} is out of range for a list of length {len}"),
        )),
        other => Err(internal(
            span,
            format!("list indexed by {}", other.kind_name()),
        )),
    }
}

fn index_value(base: &Value, index: &Value, span: SrcSpan) -> RtResult<Value> {
    match base {
        Value::List(items) => Ok(items[list_index(index, items.len(), span)?].clone()),
        Value::Map(map) => map.get(index).cloned().ok_or_else(|| {
            RuntimeError::new(
                ErrorCode::IndexOutOfRange,
                span,
                format!("the map has no key {index}"),
            )
        }),
        other => Err(internal(
            span,
            format!("indexing into {}", other.kind_name()),
        )),
    }
}

/// True for the values that comparing walks no member of and that no operator builds from.
fn scalar(v: &Value) -> bool {
    matches!(
        v,
        Value::Unit | Value::Int(_) | Value::Float(_) | Value::Bool(_)
    )
}

/// Assigns a closure's arguments to its parameters, slots of the enclosing frame.
fn bind_params(params: &[LocalId], args: &[Value], frame: &mut [Value]) {
    for (param, arg) in params.iter().zip(args) {
        if let Some(slot) = frame.get_mut(param.index()) {
            *slot = arg.clone();
        }
    }
}

fn local(frame: &[Value], id: LocalId, span: SrcSpan) -> RtResult<Value> {
    // A number is copied here rather than by a call to `Value::clone`, whose result the caller
    // would then read back from memory in wider pieces than the call wrote it, a stall.
    match frame.get(id.index()) {
        Some(Value::Int(n)) => Ok(Value::Int(*n)),
        Some(Value::Float(x)) => Ok(Value::Float(*x)),
        Some(v) => Ok(v.clone()),
        None => Err(internal(span, "local out of frame")),
    }
}

/// Matches `v` against `pattern`, binding its names in `frame`.
fn bind(pattern: &Pattern, v: &Value, frame: &mut [Value]) -> RtResult<bool> {
    Ok(match (&pattern.kind, v) {
        (PatternKind::Wildcard, _) => true,
        (PatternKind::Bind(id), _) => {
            let slot = frame
                .get_mut(id.index())
                .ok_or_else(|| internal(pattern.span, "local out of frame"))?;
            *slot = v.clone();
            true
        }
        (PatternKind::Lit(lit), _) => ops::literal(lit, pattern.span)? == *v,
        (PatternKind::Some(inner), Value::Option(Some(x))) => bind(inner, x, frame)?,
        (PatternKind::Some(_), _) => false,
        (PatternKind::None, Value::Option(x)) => x.is_none(),
        (PatternKind::None, _) => false,
        (PatternKind::Variant { index, payload, .. }, Value::Variant(variant)) => {
            let VariantValue {
                index: actual,
                payload: values,
                ..
            } = variant.as_ref();
            if actual != index {
                return Ok(false);
            }
            for (p, x) in payload.iter().zip(values) {
                if !bind(p, x, frame)? {
                    return Ok(false);
                }
            }
            true
        }
        (PatternKind::Variant { .. }, _) => false,
    })
}

/// The interpreter as seen by a native function during one call.
struct CallCtx<'a, 'm> {
    ev: &'a mut Eval<'m>,
    snap: &'a Snapshot,
    frame: &'a mut [Value],
}

impl NativeCtx for CallCtx<'_, '_> {
    fn call(&mut self, closure: &Value, args: &[Value]) -> Result<Value, NativeError> {
        Ok(self.ev.call_closure(self.snap, self.frame, closure, args)?)
    }

    fn call_each(
        &mut self,
        closure: &Value,
        items: &[Value],
        each: &mut dyn FnMut(&Value, Value) -> Result<bool, NativeError>,
    ) -> Result<(), NativeError> {
        self.ev
            .call_each(self.snap, self.frame, closure, items, Each::Value(each))
    }

    fn call_each_key(
        &mut self,
        closure: &Value,
        items: &[Value],
        each: &mut dyn FnMut(usize, &[f64]),
    ) -> Result<(), NativeError> {
        self.ev
            .call_each(self.snap, self.frame, closure, items, Each::Key(each))
    }

    fn in_preview(&self) -> bool {
        self.ev.in_preview
    }

    fn memory_left(&self) -> u64 {
        self.ev.memory_left()
    }
}

/// The shallow size of a value as the budgets count it: its elements (a string's bytes) and the
/// bytes it holds directly.
/// What comparing `v` walks at most: the bytes of a string, or every member of every
/// collection in it at any depth (map keys and values, record fields; an `Option`'s value
/// counts as one member), counted up to just past `cap`. A collection of plain values is counted
/// by its length alone, so the common comparison costs no walk to count.
fn compared_size(v: &Value, cap: u64) -> u64 {
    fn nested(v: &Value) -> bool {
        matches!(
            v,
            Value::List(_) | Value::Set(_) | Value::Map(_) | Value::Option(_) | Value::Record(_)
        )
    }
    fn members(v: &Value, cap: u64, total: &mut u64) {
        if *total > cap {
            return;
        }
        // State can nest a value a level per turn, deeper than any one expression.
        let each = |items: &mut dyn Iterator<Item = &Value>, total: &mut u64| {
            for item in items {
                if *total > cap {
                    return;
                }
                harness_grammar::stack::guarded(|| members(item, cap, total));
            }
        };
        match v {
            Value::List(items) => {
                *total += items.len() as u64;
                if items.first().is_some_and(nested) {
                    each(&mut items.iter(), total);
                }
            }
            Value::Set(items) => {
                *total += items.len() as u64;
                if items.first().is_some_and(nested) {
                    each(&mut items.iter(), total);
                }
            }
            Value::Map(entries) => {
                *total += entries.len() as u64;
                if entries.keys().next().is_some_and(nested) {
                    each(&mut entries.keys(), total);
                }
                if entries.values().next().is_some_and(nested) {
                    each(&mut entries.values(), total);
                }
            }
            Value::Option(Some(item)) => {
                *total += 1;
                each(&mut std::iter::once(&**item), total);
            }
            Value::Record(record) => each(&mut record.values.iter(), total),
            _ => {}
        }
    }
    let mut total = 0;
    members(v, cap, &mut total);
    total.max(built_size(v).0)
}

fn built_size(v: &Value) -> (u64, u64) {
    const SLOT: u64 = std::mem::size_of::<Value>() as u64;
    match v {
        Value::Str(text) => (text.len() as u64, text.len() as u64),
        Value::List(items) => (items.len() as u64, items.len() as u64 * SLOT),
        Value::Set(items) => (items.len() as u64, items.len() as u64 * SLOT),
        Value::Map(entries) => (entries.len() as u64, entries.len() as u64 * 2 * SLOT),
        _ => (0, 0),
    }
}
