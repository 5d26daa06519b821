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

/// A registry of native functions by qualified name (`List.filter`, `Posterior.observe`...).
///
/// A B-tree keeps any listing of the registry in name order.
#[derive(Clone, Default)]
pub struct Natives {
    by_name: BTreeMap<String, NativeFn>,
}

impl Natives {
    /// An empty registry.
    pub fn new() -> Self {
        Self::default()
    }

    /// Registers `f` under `name`, replacing an earlier registration of the same name.
    pub fn register(
        &mut self,
        name: impl Into<String>,
        f: impl Fn(&mut dyn NativeCtx, &[Value]) -> Result<Value, NativeError> + Send + Sync + 'static,
    ) {
        self.by_name.insert(name.into(), Arc::new(f));
    }

    /// Adds every entry of `other`, which wins on a clash.
    pub fn extend(&mut self, other: &Natives) {
        for (name, f) in &other.by_name {
            self.by_name.insert(name.clone(), f.clone());
        }
    }

    /// The implementation registered under `name`.
    pub fn get(&self, name: &str) -> Option<&NativeFn> {
        self.by_name.get(name)
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
