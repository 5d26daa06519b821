//! Typed failures of an LLM call, and the outcome type a harness handles.

use std::fmt;

use serde::{Deserialize, Serialize};

use super::shape::ReplyValue;

/// The result of one LLM effect: a validated reply, or a typed failure the harness handles.
pub type LlmOutcome = Result<ReplyValue, LlmFailure>;

/// Why an LLM call produced no usable reply.
///
/// Messages quote at most a short excerpt of what the server said, and the transport scrubs
/// the API key from every string before it gets here, so `Display` and `Debug` never show it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum LlmFailure {
    /// The connection failed: refused, reset, DNS, TLS, or an unusable URL.
    Transport {
        /// What went wrong, as the HTTP client said it.
        message: String,
    },
    /// An attempt did not complete within the per-call timeout.
    Timeout {
        /// The per-attempt bound that was exceeded, in milliseconds.
        after_ms: u64,
    },
    /// The server answered with a status other than 2xx.
    HttpStatus {
        /// The HTTP status code.
        code: u16,
        /// The start of the response body.
        body_excerpt: String,
    },
    /// The reply (or the provider's envelope around it) is not the JSON it should be.
    MalformedJson {
        /// The parser's message, or which envelope field was missing.
        detail: String,
        /// The start of the offending text.
        excerpt: String,
    },
    /// The reply is JSON but a field is missing or has the wrong type.
    SchemaViolation {
        /// The field name, or `(reply)` for the reply as a whole.
        field: String,
        /// What the declared type expects.
        expected: String,
        /// What the reply contained.
        found: String,
    },
    /// A number has the right type but lies outside the declared inclusive range.
    OutOfRange {
        /// The field name.
        field: String,
        /// The value the reply gave.
        value: String,
        /// The declared range, as `[min, max]`.
        range: String,
    },
    /// The request body is larger than the configured limit; it was not sent.
    RequestTooLarge {
        /// The body's size, in bytes.
        bytes: usize,
        /// The limit, in bytes.
        limit: usize,
    },
    /// The per-game call budget is spent; no request was sent.
    BudgetExhausted {
        /// The budget.
        budget: u32,
    },
    /// Replay mode found no recorded answer for this request.
    ReplayMissing {
        /// The request hash that was looked up.
        key: String,
    },
    /// The record/replay store could not be read or written.
    Store {
        /// What went wrong.
        message: String,
    },
}

/// The kind of an outcome, for accounting: one word per [`LlmFailure`] variant, plus `ok`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OutcomeKind {
    /// A validated reply.
    Ok,
    /// [`LlmFailure::Transport`].
    Transport,
    /// [`LlmFailure::Timeout`].
    Timeout,
    /// [`LlmFailure::HttpStatus`].
    HttpStatus,
    /// [`LlmFailure::MalformedJson`].
    MalformedJson,
    /// [`LlmFailure::SchemaViolation`].
    SchemaViolation,
    /// [`LlmFailure::OutOfRange`].
    OutOfRange,
    /// [`LlmFailure::RequestTooLarge`].
    RequestTooLarge,
    /// [`LlmFailure::BudgetExhausted`].
    BudgetExhausted,
    /// [`LlmFailure::ReplayMissing`].
    ReplayMissing,
    /// [`LlmFailure::Store`].
    Store,
}

impl LlmFailure {
    /// The kind of this failure.
    pub fn kind(&self) -> OutcomeKind {
        match self {
            LlmFailure::Transport { .. } => OutcomeKind::Transport,
            LlmFailure::Timeout { .. } => OutcomeKind::Timeout,
            LlmFailure::HttpStatus { .. } => OutcomeKind::HttpStatus,
            LlmFailure::MalformedJson { .. } => OutcomeKind::MalformedJson,
            LlmFailure::SchemaViolation { .. } => OutcomeKind::SchemaViolation,
            LlmFailure::OutOfRange { .. } => OutcomeKind::OutOfRange,
            LlmFailure::RequestTooLarge { .. } => OutcomeKind::RequestTooLarge,
            LlmFailure::BudgetExhausted { .. } => OutcomeKind::BudgetExhausted,
            LlmFailure::ReplayMissing { .. } => OutcomeKind::ReplayMissing,
            LlmFailure::Store { .. } => OutcomeKind::Store,
        }
    }
}

impl OutcomeKind {
    /// The kind of an outcome.
    pub fn of(outcome: &LlmOutcome) -> OutcomeKind {
        match outcome {
            Ok(_) => OutcomeKind::Ok,
            Err(failure) => failure.kind(),
        }
    }
}

impl fmt::Display for LlmFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LlmFailure::Transport { message } => write!(f, "LLM transport error: {message}"),
            LlmFailure::Timeout { after_ms } => {
                write!(f, "LLM call timed out after {after_ms} ms")
            }
            LlmFailure::HttpStatus { code, body_excerpt } => {
                write!(f, "LLM server answered HTTP {code}: {body_excerpt}")
            }
            LlmFailure::MalformedJson { detail, excerpt } => {
                write!(f, "LLM reply is not valid JSON ({detail}): {excerpt}")
            }
            LlmFailure::SchemaViolation {
                field,
                expected,
                found,
            } => write!(
                f,
                "LLM reply field `{field}`: expected {expected}, found {found}"
            ),
            LlmFailure::OutOfRange {
                field,
                value,
                range,
            } => write!(
                f,
                "LLM reply field `{field}`: value {value} is outside {range}"
            ),
            LlmFailure::RequestTooLarge { bytes, limit } => write!(
                f,
                "the LLM request is {bytes} bytes, over the limit of {limit}; it was not sent \
                 (shorten the prompt's arguments, or raise --llm-max-request-bytes)"
            ),
            LlmFailure::BudgetExhausted { budget } => {
                write!(f, "LLM call budget of {budget} per game is exhausted")
            }
            LlmFailure::ReplayMissing { key } => write!(
                f,
                "no recorded LLM answer for request {key} in replay mode; \
                 record it first with --llm-record"
            ),
            LlmFailure::Store { message } => write!(f, "LLM record/replay store: {message}"),
        }
    }
}

impl std::error::Error for LlmFailure {}
