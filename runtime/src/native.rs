//! Native functions: builtins, game queries and methods of opaque types, registered by name.
//!
//! The interpreter never knows what a native does; it looks the name up in a [`Natives`]
//! registry and calls it with evaluated arguments. A native that takes a closure (`max_by`,
//! `filter`, `expect`...) calls back into the interpreter through [`NativeCtx::call`].

use std::collections::BTreeMap;
use std::sync::Arc;

use crate::error::{ErrorCode, RuntimeError};
use crate::value::Value;

/// Why a native function failed.
#[derive(Clone, Debug, PartialEq)]
pub enum NativeError {
    /// The native reports an error of this kind; the interpreter adds the call's span.
    Failed(ErrorCode, String),
    /// A closure the native called failed; the error already names its own span.
    Runtime(RuntimeError),
}

impl NativeError {
    /// A failure of kind [`ErrorCode::Native`] with this message.
    pub fn msg(message: impl Into<String>) -> Self {
        NativeError::Failed(ErrorCode::Native, message.into())
    }
}

impl From<RuntimeError> for NativeError {
    fn from(e: RuntimeError) -> Self {
        NativeError::Runtime(e)
    }
}

/// What a native function may ask of the interpreter while it runs.
pub trait NativeCtx {
    /// Calls the closure `closure` (a [`Value::Closure`]) with `args`.
    fn call(&mut self, closure: &Value, args: &[Value]) -> Result<Value, NativeError>;

    /// Calls the one-parameter closure `closure` with each of `items` in order, handing every
    /// element and its result to `each`, until `each` answers `false` or anything fails. It
    /// behaves exactly as calling [`NativeCtx::call`] on each element would; the interpreter
    /// overrides it to settle what the closure's body reads once for the whole walk.
    fn call_each(
        &mut self,
        closure: &Value,
        items: &[Value],
        each: &mut dyn FnMut(&Value, Value) -> Result<bool, NativeError>,
    ) -> Result<(), NativeError> {
        for x in items {
            let v = self.call(closure, std::slice::from_ref(x))?;
            if !each(x, v)? {
                break;
            }
        }
        Ok(())
    }

    /// Calls the one-parameter closure `closure`, whose results are numbers, with every one of
    /// `items` in order, handing `each` the results as floats in runs: `each(start, keys)`
    /// receives the results of the elements from index `start` on. It stops only when anything
    /// fails, and behaves exactly as [`NativeCtx::call_each`] with every result read by
    /// [`key_of`]; the interpreter overrides it to walk a closure body whose native has a batch
    /// form (see [`NativeBatchFn`]) without a [`Value`] per element, handing over one run.
    fn call_each_key(
        &mut self,
        closure: &Value,
        items: &[Value],
        each: &mut dyn FnMut(usize, &[f64]),
    ) -> Result<(), NativeError> {
        let mut index = 0;
        self.call_each(closure, items, &mut |_, v| {
            each(index, &[key_of(&v)?]);
            index += 1;
            Ok(true)
        })
    }

    /// True while a `sim.next` preview is being evaluated (the previewed action, the handlers
    /// run on its branches, and the readings of its successor snapshots). A native that would
    /// draw randomness must not do so then: a preview draws none.
    fn in_preview(&self) -> bool {
        false
    }

    /// The bytes the turn's memory budget has left: a native that builds a value whose size it
    /// cannot know in advance (`to_json` of a deeply shared value) stops with
    /// [`ErrorCode::MemoryExhausted`] once it would pass this.
    fn memory_left(&self) -> u64 {
        u64::MAX
    }
}

/// A native implementation: evaluated arguments in, a value or an error out. The receiver of a
/// method call is the first argument.
pub type NativeFn =
    Arc<dyn Fn(&mut dyn NativeCtx, &[Value]) -> Result<Value, NativeError> + Send + Sync>;

/// The batch form of a pure native whose results are `Float`s, which the interpreter may call
/// instead of the ordinary form when a builtin such as `max_by` walks a closure whose body is
/// one call of the native with the closure's parameter in one argument position:
/// `batch(args, at, items, out)` appends to `out` the number each `Float` the ordinary form
/// returns for `args` with the argument at `at` replaced by each of `items` in turn, all in
/// order. It must agree with the ordinary form on every element and neither draw randomness nor
/// call back into the interpreter. Where the ordinary form would fail or return anything but a
/// `Float`, or the batch cannot serve this argument position, it answers the index of the first
/// such element, and the interpreter calls the ordinary form from there so that the error is
/// reported as it always is. Writing numbers rather than values spares a walk that only
/// compares or adds the results (`max_by`, `max_of`) a value per element.
pub type NativeBatchFn =
    Arc<dyn Fn(&[Value], usize, &[Value], &mut Vec<f64>) -> Result<(), usize> + Send + Sync>;

/// The number a closure result that a builtin ranks or adds (a `max_by` key) stands for: an
/// `Int` or a `Float`; anything else is an internal error, which the checker rules out.
pub fn key_of(v: &Value) -> Result<f64, NativeError> {
    v.as_f64()
        .ok_or_else(|| NativeError::Failed(ErrorCode::Internal, "expected a number".into()))
}

/// A registry of native functions by qualified name (`List.filter`, `Posterior.observe`...).
///
/// A B-tree keeps any listing of the registry in name order.
#[derive(Clone, Default)]
pub struct Natives {
    by_name: BTreeMap<String, NativeFn>,
    /// The batch forms of some of the natives, by the same names.
    batches: BTreeMap<String, NativeBatchFn>,
}

impl Natives {
    /// An empty registry.
    pub fn new() -> Self {
        Self::default()
    }

    /// Registers `f` under `name`, replacing an earlier registration of the same name and any
    /// batch form of it, which belonged to the replaced native.
    pub fn register(
        &mut self,
        name: impl Into<String>,
        f: impl Fn(&mut dyn NativeCtx, &[Value]) -> Result<Value, NativeError> + Send + Sync + 'static,
    ) {
        let name = name.into();
        self.batches.remove(&name);
        self.by_name.insert(name, Arc::new(f));
    }

    /// Registers `batch` as the batch form (see [`NativeBatchFn`]) of the native registered
    /// under `name`, which must be registered first.
    pub fn register_batch(
        &mut self,
        name: &str,
        batch: impl Fn(&[Value], usize, &[Value], &mut Vec<f64>) -> Result<(), usize>
        + Send
        + Sync
        + 'static,
    ) {
        assert!(
            self.by_name.contains_key(name),
            "the batch form of `{name}` is registered before the native"
        );
        self.batches.insert(name.to_string(), Arc::new(batch));
    }

    /// Adds every entry of `other`, which wins on a clash, batch forms included: a native of
    /// `other` without one drops the batch form of the native it replaces.
    pub fn extend(&mut self, other: &Natives) {
        for (name, f) in &other.by_name {
            self.by_name.insert(name.clone(), f.clone());
            match other.batches.get(name) {
                Some(batch) => self.batches.insert(name.clone(), batch.clone()),
                None => self.batches.remove(name),
            };
        }
    }

    /// The implementation registered under `name`.
    pub fn get(&self, name: &str) -> Option<&NativeFn> {
        self.by_name.get(name)
    }

    /// The batch form of the native registered under `name`, if it has one.
    pub fn batch(&self, name: &str) -> Option<&NativeBatchFn> {
        self.batches.get(name)
    }

    /// The registered names, in order.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.by_name.keys().map(String::as_str)
    }
}

impl std::fmt::Debug for Natives {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.by_name.keys()).finish()
    }
}
