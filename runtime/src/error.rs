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
}

impl ErrorCode {
    /// Every kind, in code order.
    pub const ALL: [ErrorCode; 17] = [
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
    ];

    /// The kind with this stable code.
    pub fn from_code(code: &str) -> Option<ErrorCode> {
        ErrorCode::ALL.into_iter().find(|kind| kind.code() == code)
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
        }
    }
}

/// A runtime error with its location. It reads back from a trace by its code.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RuntimeError {
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
        Ok(RuntimeError {
            code: kind.code(),
            kind,
            message: stored.message,
            span: stored.span,
            declared: stored.declared,
        })
    }
}

impl RuntimeError {
    /// An error of `kind` at `span`.
    pub fn new(kind: ErrorCode, span: SrcSpan, message: impl Into<String>) -> Self {
        Self {
            code: kind.code(),
            kind,
            message: message.into(),
            span,
            declared: None,
        }
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
