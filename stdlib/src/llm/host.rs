//! The runtime's [`LlmHost`] over an [`LlmClient`]: builds the [`ReplyShape`] from the call's
//! shape, makes the call and maps the outcome back to the runtime's terms.

use std::sync::Mutex;

use harness_compiler::ir::{self, LlmFieldKind, LlmShape};
use harness_runtime::llm::snake_case;
use harness_runtime::{LlmAccounting, LlmAnswer, LlmCall, LlmFailureInfo, LlmFailureKind, LlmHost};

use super::client::LlmClient;
use super::failure::LlmFailure;
use super::request::{ChatMessage, LlmRequest};
use super::shape::{FieldSpec, FieldType, FieldValue, ReplyShape, ReplyValue};

/// An [`LlmHost`] for one game: a client whose per-game budget and occurrence counts start
/// afresh when the host is made. Make one per episode (clients are cheap to clone), so parallel
/// episodes never share a budget.
#[derive(Debug)]
pub struct ClientHost {
    client: Mutex<LlmClient>,
}

impl ClientHost {
    /// A host for one game of replicate `replicate` (the episode's seed) over `client`.
    pub fn new(mut client: LlmClient, replicate: u64) -> Self {
        client.start_game(replicate);
        ClientHost {
            client: Mutex::new(client),
        }
    }
}

impl LlmHost for ClientHost {
    fn call(&self, call: &LlmCall) -> LlmAnswer {
        let mut request = LlmRequest::new(
            call.system.clone(),
            call.user.clone(),
            reply_shape(&call.shape),
        )
        .for_effect(call.effect.clone());
        request.history = call
            .history
            .iter()
            .map(|m| ChatMessage::new(&m.role, &m.content))
            .collect();
        // A poisoned lock means an earlier call panicked; the client holds no invariant that a
        // panic could break (a counter and shared handles), so its state is still usable.
        let mut client = match self.client.lock() {
            Ok(client) => client,
            Err(poisoned) => poisoned.into_inner(),
        };
        let result = client.call(&request);
        let record = result.record;
        let accounting = LlmAccounting {
            provider: record.provider.as_str().to_owned(),
            model: record.model,
            prompt_tokens: record.prompt_tokens,
            completion_tokens: record.completion_tokens,
            latency_ms: record.latency_ms,
            attempts: record.attempts,
            schema_fallback: record.schema_fallback,
        };
        let outcome = match result.outcome {
            Ok(value) => Ok(reply_json(&value)),
            Err(failure) => Err(LlmFailureInfo {
                kind: failure_kind(&failure),
                message: failure.to_string(),
            }),
        };
        LlmAnswer {
            outcome,
            content: result.content,
            accounting,
        }
    }
}

/// The transport's shape of a declared reply. Enum variants are offered in their snake_case
/// spelling (only those a `where` bound allows) and accepted in any case and `_`/`-` spelling;
/// the numeric `where` bounds become the inclusive ranges the client checks (`OutOfRange`), and
/// a list's `len` bound its item count.
pub fn reply_shape(shape: &LlmShape) -> ReplyShape {
    match shape {
        LlmShape::Enum(e) => ReplyShape::Enum {
            variants: e.allowed.iter().map(|v| snake_case(v)).collect(),
        },
        LlmShape::Record(fields) => ReplyShape::Record {
            fields: field_specs(fields),
        },
    }
}

fn field_specs(fields: &[ir::LlmField]) -> Vec<FieldSpec> {
    fields
        .iter()
        .map(|field| {
            FieldSpec::required(
                field.name.clone(),
                field_type(&field.kind, field.range.as_ref()),
            )
        })
        .collect()
}

fn field_type(kind: &LlmFieldKind, range: Option<&ir::Range>) -> FieldType {
    match kind {
        LlmFieldKind::Int => {
            let (min, max) = int_bounds(range);
            FieldType::Int { min, max }
        }
        LlmFieldKind::Float => {
            let (min, max) = float_bounds(range);
            FieldType::Float { min, max }
        }
        LlmFieldKind::Bool => FieldType::Bool,
        LlmFieldKind::String => FieldType::String,
        LlmFieldKind::Enum(e) => FieldType::Choice {
            allowed: e.allowed.iter().map(|v| snake_case(v)).collect(),
        },
        LlmFieldKind::Optional(inner) => FieldType::Optional {
            inner: Box::new(field_type(inner, range)),
        },
        LlmFieldKind::List {
            item,
            min_len,
            max_len,
        } => FieldType::List {
            item: Box::new(field_type(item, range)),
            min_len: *min_len,
            max_len: *max_len,
        },
        LlmFieldKind::Record(fields) => FieldType::Record {
            fields: field_specs(fields),
        },
    }
}

fn int_bounds(range: Option<&ir::Range>) -> (Option<i64>, Option<i64>) {
    let Some(range) = range else {
        return (None, None);
    };
    let lo = match range.lo {
        ir::Literal::Int(v) => Some(v),
        _ => None,
    };
    let hi = match range.hi {
        ir::Literal::Int(v) if range.inclusive => Some(v),
        ir::Literal::Int(v) => v.checked_sub(1),
        _ => None,
    };
    (lo, hi)
}

/// Float bounds; an exclusive upper bound is checked as inclusive here, and exactly by the
/// runtime when it converts the reply.
fn float_bounds(range: Option<&ir::Range>) -> (Option<f64>, Option<f64>) {
    let Some(range) = range else {
        return (None, None);
    };
    let value = |l: &ir::Literal| match l {
        ir::Literal::Float(v) => Some(*v),
        ir::Literal::Int(v) => Some(*v as f64),
        _ => None,
    };
    (value(&range.lo), value(&range.hi))
}

/// A validated reply as the JSON the runtime converts: an object of fields, or a variant name.
fn reply_json(value: &ReplyValue) -> serde_json::Value {
    match value {
        ReplyValue::Enum { variant } => serde_json::Value::String(variant.clone()),
        ReplyValue::Record { fields } => FieldValue::Record(fields.clone()).to_json(),
    }
}

/// The language's failure kind of a transport failure. A record/replay store that cannot be
/// used is reported as `Transport`: like a dead connection, the answer could not be fetched.
pub fn failure_kind(failure: &LlmFailure) -> LlmFailureKind {
    match failure {
        LlmFailure::Transport { .. } | LlmFailure::Store { .. } => LlmFailureKind::Transport,
        LlmFailure::Timeout { .. } => LlmFailureKind::Timeout,
        LlmFailure::HttpStatus { .. } => LlmFailureKind::HttpStatus,
        LlmFailure::MalformedJson { .. } => LlmFailureKind::MalformedJson,
        LlmFailure::SchemaViolation { .. } => LlmFailureKind::SchemaViolation,
        LlmFailure::OutOfRange { .. } => LlmFailureKind::OutOfRange,
        LlmFailure::RequestTooLarge { .. } => LlmFailureKind::RequestTooLarge,
        LlmFailure::BudgetExhausted { .. } => LlmFailureKind::BudgetExhausted,
        LlmFailure::ReplayMissing { .. } => LlmFailureKind::ReplayMissing,
    }
}
