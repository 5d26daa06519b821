//! The builtin call sites of a program, resolved once when a machine is built.
//!
//! A builtin call names its implementation by a string (`Grid.index`, `List.max_by`,
//! `Preview.expect`). Looking that name up in the registry is a walk of string comparisons, and an
//! evaluator lives for one phase of one turn, so a cache per evaluator paid for every name again
//! each phase. Instead every call is resolved when the machine is built, and its compiled node
//! (see [`crate::compiled`]) holds the resolved site.
//!
//! A site also keeps what the checker's types say about the call's cost accounting: a call whose
//! arguments cannot be collections or strings walks no element, and one whose result cannot be
//! one builds none, so the evaluator skips counting them.

use harness_compiler::ir::Expr;
use harness_compiler::types::Ty;

use crate::native::{NativeBatchFn, NativeFn, Natives};

/// The prefix of the methods of previews, which the runtime implements itself.
const PREVIEW_PREFIX: &str = "Preview.";

/// What a builtin call runs.
pub(crate) enum Target {
    /// A registered native.
    Native(NativeFn),
    /// A method of `sim.next`'s previews.
    Preview(PreviewMethod),
    /// A name no native is registered under; calling it is an error.
    Missing,
}

/// The methods of previews.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum PreviewMethod {
    /// The weighted mean of a closure over the successor snapshots.
    Expect,
    /// The weight of the successors a closure holds on.
    Prob,
    /// The successor snapshots.
    Branches,
    /// Their weights.
    Weights,
    /// A name previews have no method of; calling it is an error.
    Unknown,
}

impl PreviewMethod {
    fn parse(method: &str) -> Self {
        match method {
            "expect" => PreviewMethod::Expect,
            "prob" => PreviewMethod::Prob,
            "branches" => PreviewMethod::Branches,
            "weights" => PreviewMethod::Weights,
            _ => PreviewMethod::Unknown,
        }
    }
}

/// A resolved builtin call site.
pub(crate) struct CallSite {
    pub(crate) target: Target,
    /// The batch form of the native the site calls, if it has one.
    pub(crate) batch: Option<NativeBatchFn>,
    /// Whether an argument may be a collection or a string, whose elements the call walks.
    pub(crate) walks: bool,
    /// Whether the result may be a collection or a string, whose elements the call builds.
    pub(crate) builds: bool,
}

impl CallSite {
    /// The site calling `name`; without the types of its arguments and result, it counts
    /// whatever they turn out to hold.
    fn resolve(name: &str, natives: &Natives) -> Self {
        let target = match name.strip_prefix(PREVIEW_PREFIX) {
            Some(method) => Target::Preview(PreviewMethod::parse(method)),
            None => natives
                .get(name)
                .map_or(Target::Missing, |native| Target::Native(native.clone())),
        };
        CallSite {
            target,
            batch: natives.batch(name).cloned(),
            walks: true,
            builds: true,
        }
    }

    /// The site of a call of `name` with `args`, typed `ty` by the checker: a call whose
    /// arguments cannot hold elements walks none, and one whose result cannot builds none.
    pub(crate) fn of_call(name: &str, args: &[Expr], ty: &Ty, natives: &Natives) -> Self {
        let mut site = CallSite::resolve(name, natives);
        site.walks = args.iter().any(|arg| may_hold_elements(&arg.ty));
        site.builds = may_hold_elements(ty);
        site
    }
}

/// Whether a value of type `ty` may be a string or a collection, the values the budgets count
/// elements of. A type the checker left open may be anything.
fn may_hold_elements(ty: &Ty) -> bool {
    matches!(
        ty,
        Ty::String
            | Ty::List(_)
            | Ty::Set(_)
            | Ty::Map(..)
            | Ty::Generic(_)
            | Ty::Var(_)
            | Ty::Error
    )
}
