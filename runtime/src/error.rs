//! Runtime errors: typed, located, never panics.
//!
//! A [`RuntimeError`] is data: a stable code (`R0001`...), a message that says what went wrong
//! and what to do, and the source span responsible. The runtime records it in the trace and in
//! the episode's result; only the command line renders it.

use harness_compiler::ir::SrcSpan;
use serde::{Deserialize, Serialize};

/// The kinds of runtime error, each with a stable code.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub enum ErrorCode {
    /// `R0001`: integer arithmetic overflowed.
    Overflow,
    /// `R0002`: division or remainder by zero.
    DivisionByZero,
    /// `R0003`: an index or key is not in the collection.
    IndexOutOfRange,
    /// `R0004`: `None` where a value was required.
    NoneUnwrapped,
    /// `R0005`: a float operation produced NaN or an infinity.
    NotFinite,
    /// `R0006`: an action's `requires` check failed; the action applied nothing.
    RequiresFailed,
    /// `R0007`: a revision would move a tunable outside its declared range.
    TunableOutOfRange,
    /// `R0008`: no `decide` rule matched in any enabled layer.
    NoDecision,
    /// `R0009`: the per-turn evaluation budget ran out.
    BudgetExhausted,
    /// `R0010`: `sim.next` was called inside a preview.
    NestedPreview,
    /// `R0011`: a native function (builtin, game query or opaque method) failed.
    Native,
    /// `R0012`: a value had a kind the checked program did not allow; an internal error.
    Internal,
    /// `R0013`: the game rejected an effect.
    EffectRejected,
    /// `R0014`: a `model` declared probabilities that are negative or sum past one.
    BadModel,
    /// `R0015`: a chosen action was not available when it was applied.
    Unavailable,
    /// `R0016`: a layer switch or `--set` names something unknown or gives a bad value.
    BadSwitch,
    /// `R0017`: a patch moved a state field governed by a `machine` along no declared edge.
    BadTransition,
    /// `R0018`: the per-turn memory budget ran out.
    MemoryExhausted,
}

impl ErrorCode {
    /// Every kind, in code order.
    pub const ALL: [ErrorCode; 18] = [
        ErrorCode::Overflow,
        ErrorCode::DivisionByZero,
        ErrorCode::IndexOutOfRange,
        ErrorCode::NoneUnwrapped,
        ErrorCode::NotFinite,
        ErrorCode::RequiresFailed,
        ErrorCode::TunableOutOfRange,
        ErrorCode::NoDecision,
        ErrorCode::BudgetExhausted,
        ErrorCode::NestedPreview,
        ErrorCode::Native,
        ErrorCode::Internal,
        ErrorCode::EffectRejected,
        ErrorCode::BadModel,
        ErrorCode::Unavailable,
        ErrorCode::BadSwitch,
        ErrorCode::BadTransition,
        ErrorCode::MemoryExhausted,
    ];

    /// The kind with this stable code.
    pub fn from_code(code: &str) -> Option<ErrorCode> {
        ErrorCode::ALL.into_iter().find(|kind| kind.code() == code)
    }

    /// The title and the explanation page of the code, as `harness explain` prints them: what
    /// triggers it and what to do.
    pub fn explanation(self) -> (&'static str, &'static str) {
        match self {
            ErrorCode::Overflow => (
                "integer overflow",
                "An integer operation (`+`, `-`, `*`, or a builtin such as `sum`) gave a result \
                 outside the 64-bit range. The episode stops at that turn.\n\nFix: bound the values \
                 that grow (a counter, a product), or compute with `Float`.",
            ),
            ErrorCode::DivisionByZero => (
                "division by zero",
                "An integer `/` or `%` had a zero divisor.\n\nFix: guard the division \
                 (`if n == 0 { 0 } else { total / n }`) or divide floats, which give a non-finite \
                 value (R0005) instead.",
            ),
            ErrorCode::IndexOutOfRange => (
                "index out of range",
                "`xs[i]` read a list at an index it does not have, or a map at a key it does not \
                 hold.\n\nFix: check the length or the key first, or use the methods that return an \
                 `Option` (`get`, `first`, `last`) with `unwrap_or`.",
            ),
            ErrorCode::NoneUnwrapped => (
                "`None` where a value was required",
                "`unwrap` (or an operation that needs a value) met `None`.\n\nFix: match on the \
                 option, or give a default with `unwrap_or`.",
            ),
            ErrorCode::NotFinite => (
                "non-finite float",
                "A float operation produced NaN or an infinity (a division by zero, `log` of zero, \
                 an overflow), and the value reached state, a decision or the game.\n\nFix: guard the \
                 operation's inputs, or clamp the result.",
            ),
            ErrorCode::RequiresFailed => (
                "an action's `requires` failed",
                "A `requires` clause of the chosen action was false; the action applied nothing \
                 and the trace records the declared error code.\n\nFix: make the `decide` rule's \
                 guard imply the action's requirements, or handle the error code.",
            ),
            ErrorCode::TunableOutOfRange => (
                "a revision leaves a tunable's range",
                "A `revise` statement would move a tunable outside the range its declaration \
                 gives (`in lo..=hi`).\n\nFix: clamp the new value to the range.",
            ),
            ErrorCode::NoDecision => (
                "no `decide` rule matched",
                "On a turn, no rule of any enabled layer's `decide` block matched, so there was no \
                 action to take.\n\nFix: end the lowest layer's `decide` with a rule that always \
                 matches (`otherwise => ...`), so a turn always has an action even with the layers \
                 above switched off.",
            ),
            ErrorCode::BudgetExhausted => (
                "evaluation budget exhausted",
                "A turn used more evaluation steps than the per-turn budget allows (a large \
                 `range`, a nested loop over a game collection, many previews). Every evaluated \
                 node is a step, and so is every element a builtin walks or builds (`range`, \
                 `map`, `sum`, `to_json`...), so an aggregate over a million elements costs a \
                 million steps. `harness check --cost` prints the static bound of each phase.\n\n\
                 Fix: make the turn's work smaller, for example by sampling fewer particles.",
            ),
            ErrorCode::NestedPreview => (
                "`sim.next` inside a preview",
                "`sim.next` was called while a preview was being evaluated. The checker rejects \
                 the direct case (E0403); this is the indirect one, through a function.\n\nFix: \
                 compute previews only at the top level of a member.",
            ),
            ErrorCode::Native => (
                "a builtin, game query or method failed",
                "A function implemented natively by the standard library or the game returned an \
                 error; the message says which and why.\n\nFix: check the arguments the message \
                 names.",
            ),
            ErrorCode::Internal => (
                "internal error",
                "A value had a kind the checked program does not allow. This is a bug in harness, \
                 not in the harness file.\n\nFix: please report it with the file and the seed.",
            ),
            ErrorCode::EffectRejected => (
                "the game rejected an effect",
                "The game refused an effect the harness emitted (a move that is not legal in the \
                 game's current state).\n\nFix: guard the action with the game's queries, in an \
                 `available` or `requires` clause.",
            ),
            ErrorCode::BadModel => (
                "a model's probabilities are invalid",
                "A `model` gave branch probabilities that are negative or sum to more than \
                 one.\n\nFix: clamp each probability to 0..=1 and make the explicit ones sum to at \
                 most one; `otherwise` takes the rest.",
            ),
            ErrorCode::Unavailable => (
                "the chosen action was not available",
                "A `decide` rule chose an action whose `available` clause was false when it was \
                 applied.\n\nFix: add the action's availability to the rule's guard.",
            ),
            ErrorCode::BadSwitch => (
                "bad layer switch or setting",
                "A command-line switch named a layer, config parameter or tunable the harness \
                 does not have, or `--set` gave a value of the wrong type or outside the declared \
                 range.\n\nFix: `harness check` the harness and compare the names and ranges it \
                 declares with the switches given.",
            ),
            ErrorCode::BadTransition => (
                "a transition that the machine does not declare",
                "A `patch` moved a state field that a `machine` governs from one state to another \
                 along no edge the machine declares (the checker proves the literal ones, E0303; \
                 this one was computed).\n\nFix: add the edge to the machine, or guard the patch \
                 so that it only runs from a state that has the edge.",
            ),
            ErrorCode::MemoryExhausted => (
                "memory budget exhausted",
                "A turn built more collections and strings than the per-turn memory budget \
                 allows (256 MiB by default, summed over the turn): lists from `range` and `map`, \
                 a `to_json` or `to_string` of a large value, a string doubled over and over. The \
                 turn ends here instead of exhausting the machine's memory.\n\nFix: build \
                 smaller values per turn, for example by aggregating with `sum` or `count` \
                 instead of materialising a list, or by passing less state to `to_json`.",
            ),
        }
    }

    /// The stable code, for example `"R0001"`.
    pub fn code(self) -> &'static str {
        match self {
            ErrorCode::Overflow => "R0001",
            ErrorCode::DivisionByZero => "R0002",
            ErrorCode::IndexOutOfRange => "R0003",
            ErrorCode::NoneUnwrapped => "R0004",
            ErrorCode::NotFinite => "R0005",
            ErrorCode::RequiresFailed => "R0006",
            ErrorCode::TunableOutOfRange => "R0007",
            ErrorCode::NoDecision => "R0008",
            ErrorCode::BudgetExhausted => "R0009",
            ErrorCode::NestedPreview => "R0010",
            ErrorCode::Native => "R0011",
            ErrorCode::Internal => "R0012",
            ErrorCode::EffectRejected => "R0013",
            ErrorCode::BadModel => "R0014",
            ErrorCode::Unavailable => "R0015",
            ErrorCode::BadSwitch => "R0016",
            ErrorCode::BadTransition => "R0017",
            ErrorCode::MemoryExhausted => "R0018",
        }
    }
}

/// A runtime error with its location. It reads back from a trace by its code.
///
/// The details sit behind one box: every evaluated node returns an [`RtResult`], so the error's
/// size is the size of every node's result, and a pointer keeps that result as small as a
/// [`crate::Value`]. Errors are rare, so the one allocation they cost is never on a hot path;
/// the fields read as the details' own through `Deref`.
#[derive(Clone, PartialEq, Serialize)]
#[serde(transparent)]
pub struct RuntimeError(Box<ErrorDetails>);

/// What a [`RuntimeError`] holds.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ErrorDetails {
    /// The stable code (`R0001`...).
    pub code: &'static str,
    /// The kind, for matching in code.
    #[serde(skip)]
    pub kind: ErrorCode,
    /// What went wrong and, where it helps, what to do.
    pub message: String,
    /// The source span responsible.
    pub span: SrcSpan,
    /// For [`ErrorCode::RequiresFailed`], the declared error code (`BUDGET_CLOSED`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub declared: Option<String>,
}

impl std::ops::Deref for RuntimeError {
    type Target = ErrorDetails;

    fn deref(&self) -> &ErrorDetails {
        &self.0
    }
}

impl std::ops::DerefMut for RuntimeError {
    fn deref_mut(&mut self) -> &mut ErrorDetails {
        &mut self.0
    }
}

// Debug output names the error, as it did before the details were boxed.
impl std::fmt::Debug for RuntimeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RuntimeError")
            .field("code", &self.code)
            .field("kind", &self.kind)
            .field("message", &self.message)
            .field("span", &self.span)
            .field("declared", &self.declared)
            .finish()
    }
}

/// A runtime error as stored: the kind is known by its code.
#[derive(Deserialize)]
struct StoredError {
    code: String,
    message: String,
    span: SrcSpan,
    #[serde(default)]
    declared: Option<String>,
}

impl<'de> Deserialize<'de> for RuntimeError {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let stored = StoredError::deserialize(d)?;
        let kind = ErrorCode::from_code(&stored.code).ok_or_else(|| {
            serde::de::Error::custom(format!("`{}` is not a runtime error code", stored.code))
        })?;
        Ok(RuntimeError(Box::new(ErrorDetails {
            code: kind.code(),
            kind,
            message: stored.message,
            span: stored.span,
            declared: stored.declared,
        })))
    }
}

impl RuntimeError {
    /// An error of `kind` at `span`.
    pub fn new(kind: ErrorCode, span: SrcSpan, message: impl Into<String>) -> Self {
        Self(Box::new(ErrorDetails {
            code: kind.code(),
            kind,
            message: message.into(),
            span,
            declared: None,
        }))
    }

    /// The same error carrying a declared error code.
    pub fn with_declared(mut self, declared: impl Into<String>) -> Self {
        self.declared = Some(declared.into());
        self
    }
}

impl std::fmt::Display for RuntimeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.code, self.message)
    }
}

impl std::error::Error for RuntimeError {}

/// The result of a runtime operation.
pub type RtResult<T> = Result<T, RuntimeError>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_code_reads_back_and_has_an_explanation_with_a_fix() {
        let mut titles = std::collections::BTreeSet::new();
        for code in ErrorCode::ALL {
            assert_eq!(ErrorCode::from_code(code.code()), Some(code));
            let (title, text) = code.explanation();
            assert!(
                titles.insert(title),
                "{} repeats the title {title:?}",
                code.code()
            );
            assert!(
                text.contains("\n\nFix: "),
                "{} says what to do",
                code.code()
            );
        }
    }
}
