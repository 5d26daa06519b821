//! LLM effects as seen by the runtime: the [`LlmHost`] seam, the call it receives, the answer it
//! gives, and the conversion of that answer into the harness's `LlmResult` value.
//!
//! The runtime never talks to a model. A statement `let reply = emit llm.name(args)` renders the
//! item's templates, hands an [`LlmCall`] to the machine's host, and turns the [`LlmAnswer`] into
//! `LlmResult.Ok(reply)` or `LlmResult.Failed(kind)`. Without a host every call fails with
//! `NotConfigured` and no IO happens; inside a `sim.next` preview no call is made at all and the
//! value is `Failed(InPreview)`, so previews stay pure and deterministic.
//!
//! The deterministic part of each call (effect, outcome, provider, model, token counts) becomes an
//! `llm_call` event of the trace; wall-clock latency and attempts go only to
//! [`crate::EpisodeResult::llm_calls`], so traces stay byte-identical for the same inputs.

use std::fmt;
use std::sync::Arc;

use harness_compiler::ir::{self, LlmDef, LlmFieldKind, LlmShape};
use harness_compiler::types::Ty;
use serde::{Deserialize, Serialize};

use crate::value::{RecordValue, Value};

/// One LLM call, ready for a host: the templates rendered, the reply shape as data.
#[derive(Clone, Debug, PartialEq)]
pub struct LlmCall {
    /// The effect's name (`revise_policy`).
    pub effect: String,
    /// The rendered system prompt.
    pub system: String,
    /// The rendered user prompt.
    pub user: String,
    /// The conversation after the user prompt: for each earlier attempt of a `retry`, the
    /// model's rejected reply and the rendered feedback on it.
    pub history: Vec<LlmMessage>,
    /// Which attempt this is, from 1.
    pub attempt: u32,
    /// What the reply must look like; the host validates the model's JSON against it.
    pub shape: LlmShape,
}

/// One message of a conversation with the model.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct LlmMessage {
    /// `assistant` (the model's reply) or `user` (the harness's feedback).
    pub role: String,
    /// The text.
    pub content: String,
}

/// The kinds of failure of an LLM call, in the order of the prelude enum `LlmFailure`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum LlmFailureKind {
    /// The connection failed (or the record/replay store could not be used).
    Transport,
    /// The call did not complete within its timeout.
    Timeout,
    /// The server answered with a non-2xx status.
    HttpStatus,
    /// The reply is not the JSON it should be.
    MalformedJson,
    /// A field is missing or has the wrong type.
    SchemaViolation,
    /// A number lies outside its `where` bound.
    OutOfRange,
    /// The per-game call budget is spent.
    BudgetExhausted,
    /// Replay mode has no recorded answer for this call.
    ReplayMissing,
    /// No LLM is configured for this run.
    NotConfigured,
    /// The call was reached inside a `sim.next` preview, which never calls out.
    InPreview,
    /// The reply has the declared type but fails the item's `ensure`.
    Invalid,
    /// The request is larger than the configured limit and was not sent.
    RequestTooLarge,
}

impl LlmFailureKind {
    /// Every kind, in the order of [`ir::LLM_FAILURE_VARIANTS`].
    pub const ALL: [LlmFailureKind; 12] = [
        LlmFailureKind::Transport,
        LlmFailureKind::Timeout,
        LlmFailureKind::HttpStatus,
        LlmFailureKind::MalformedJson,
        LlmFailureKind::SchemaViolation,
        LlmFailureKind::OutOfRange,
        LlmFailureKind::BudgetExhausted,
        LlmFailureKind::ReplayMissing,
        LlmFailureKind::NotConfigured,
        LlmFailureKind::InPreview,
        LlmFailureKind::Invalid,
        LlmFailureKind::RequestTooLarge,
    ];

    /// The variant's index in the prelude enum `LlmFailure`.
    pub fn index(self) -> u32 {
        Self::ALL.iter().position(|k| *k == self).unwrap_or(0) as u32
    }

    /// The variant's name in the prelude enum (`NotConfigured`).
    pub fn variant(self) -> &'static str {
        ir::LLM_FAILURE_VARIANTS[self.index() as usize]
    }

    /// The kind as one snake_case word, as traces spell it (`not_configured`).
    pub fn as_str(self) -> &'static str {
        match self {
            LlmFailureKind::Transport => "transport",
            LlmFailureKind::Timeout => "timeout",
            LlmFailureKind::HttpStatus => "http_status",
            LlmFailureKind::MalformedJson => "malformed_json",
            LlmFailureKind::SchemaViolation => "schema_violation",
            LlmFailureKind::OutOfRange => "out_of_range",
            LlmFailureKind::BudgetExhausted => "budget_exhausted",
            LlmFailureKind::ReplayMissing => "replay_missing",
            LlmFailureKind::NotConfigured => "not_configured",
            LlmFailureKind::InPreview => "in_preview",
            LlmFailureKind::Invalid => "invalid",
            LlmFailureKind::RequestTooLarge => "request_too_large",
        }
    }
}

impl fmt::Display for LlmFailureKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Why a call produced no reply: the kind the harness matches on, and a message for people.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct LlmFailureInfo {
    /// The kind.
    pub kind: LlmFailureKind,
    /// What happened, without secrets.
    pub message: String,
}

/// What one call cost and who answered it.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct LlmAccounting {
    /// The provider (`ollama`, `openai`), empty when no call went out.
    pub provider: String,
    /// The model.
    pub model: String,
    /// Prompt tokens, when the provider reported them.
    pub prompt_tokens: Option<u64>,
    /// Completion tokens, when the provider reported them.
    pub completion_tokens: Option<u64>,
    /// Wall-clock time of the call, in milliseconds; never written to traces.
    pub latency_ms: u64,
    /// HTTP attempts made (0 for a replayed or refused call).
    pub attempts: u32,
    /// Whether the server refused the reply's JSON Schema and the call went out in JSON mode.
    pub schema_fallback: bool,
}

/// A host's answer to one call.
#[derive(Clone, Debug, PartialEq)]
pub struct LlmAnswer {
    /// The reply as JSON already validated against the call's shape (an object with one entry
    /// per field for a record; a string naming the variant for an enum), or why there is none.
    pub outcome: Result<serde_json::Value, LlmFailureInfo>,
    /// The model's text, when a reply arrived (valid or not): what a retry quotes back.
    pub content: Option<String>,
    /// The accounting of the call.
    pub accounting: LlmAccounting,
}

impl LlmAnswer {
    /// A failure without any accounting: nothing was sent.
    pub fn failed(kind: LlmFailureKind, message: impl Into<String>) -> Self {
        LlmAnswer {
            outcome: Err(LlmFailureInfo {
                kind,
                message: message.into(),
            }),
            content: None,
            accounting: LlmAccounting::default(),
        }
    }
}

/// Where LLM calls go: a provider client, a replay store, or a test double.
///
/// A host serves one episode at a time (its per-game budget counts that episode's calls), so a
/// parallel runner creates one host per episode. `call` must not panic and must return within
/// its own bounds (timeouts, retries); the runtime waits for it.
pub trait LlmHost: Send + Sync {
    /// Makes one call.
    fn call(&self, call: &LlmCall) -> LlmAnswer;
}

/// One call of an episode with its full accounting, for [`crate::EpisodeResult::llm_calls`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LlmCallLog {
    /// The turn of the call.
    pub turn: u32,
    /// The effect.
    pub effect: String,
    /// Which attempt of the item's `retry` this was, from 1.
    pub attempt: u32,
    /// `ok` or the failure kind.
    pub outcome: String,
    /// The failure's message, if the call failed.
    pub message: Option<String>,
    /// Provider, model, tokens, latency and attempts.
    #[serde(flatten)]
    pub accounting: LlmAccounting,
}

/// Renders a template: `{param}` becomes the argument as text (a string without quotes),
/// `{schema}` the shape's schema hint, `{error}` (in a retry's feedback) `error`, `{{` and `}}`
/// literal braces. The checker guarantees that every placeholder is known; an unknown one is
/// kept as written.
pub fn render(template: &str, def: &LlmDef, args: &[Value], error: Option<&str>) -> String {
    let mut out = String::with_capacity(template.len());
    let mut rest = template;
    while let Some(i) = rest.find(['{', '}']) {
        out.push_str(&rest[..i]);
        let tail = &rest[i..];
        if tail.starts_with("{{") || tail.starts_with("}}") {
            out.push_str(&tail[..1]);
            rest = &tail[2..];
            continue;
        }
        if let (true, Some(end)) = (tail.starts_with('{'), tail.find('}')) {
            let name = &tail[1..end];
            if name == "schema" {
                out.push_str(&schema_hint(&def.shape));
            } else if let (Some(error), "error") = (error, name) {
                out.push_str(error);
            } else if let Some(k) = def.params.iter().position(|(p, _)| p == name) {
                match args.get(k) {
                    Some(Value::Str(text)) => out.push_str(text),
                    Some(other) => out.push_str(&other.to_string()),
                    None => {}
                }
            } else {
                out.push_str(&tail[..=end]);
            }
            rest = &tail[end + 1..];
        } else {
            out.push_str(&tail[..1]);
            rest = &tail[1..];
        }
    }
    out.push_str(rest);
    out
}

/// The snake_case form of a variant name (`CoarseRoiCollapse` → `coarse_roi_collapse`), the
/// spelling prompts and replies use.
pub fn snake_case(name: &str) -> String {
    let mut out = String::with_capacity(name.len() + 4);
    for (i, c) in name.chars().enumerate() {
        if c.is_ascii_uppercase() {
            if i > 0 {
                out.push('_');
            }
            out.push(c.to_ascii_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}

/// The variant of `variants` that `text` names, ignoring case, `_`, `-` and spaces.
pub fn match_variant(variants: &[String], text: &str) -> Option<usize> {
    let norm = |s: &str| -> String {
        s.chars()
            .filter(|c| !matches!(c, '_' | '-' | ' '))
            .flat_map(char::to_lowercase)
            .collect()
    };
    let wanted = norm(text);
    variants.iter().position(|v| norm(v) == wanted)
}

/// A compact description of the JSON a reply must be, for the `{schema}` placeholder:
/// `{"coarse": integer in [0, 15], "kind": one of "a" | "b"}`. An enum restricted by a `where`
/// bound shows only its allowed variants.
pub fn schema_hint(shape: &LlmShape) -> String {
    match shape {
        LlmShape::Enum(e) => format!("{{\"choice\": {}}}", choices(&e.allowed)),
        LlmShape::Record(fields) => record_hint(fields),
    }
}

fn choices(variants: &[String]) -> String {
    let names: Vec<String> = variants
        .iter()
        .map(|v| format!("\"{}\"", snake_case(v)))
        .collect();
    format!("one of {}", names.join(" | "))
}

fn record_hint(fields: &[ir::LlmField]) -> String {
    let parts: Vec<String> = fields
        .iter()
        .map(|f| format!("\"{}\": {}", f.name, kind_hint(&f.kind, &f.range)))
        .collect();
    format!("{{{}}}", parts.join(", "))
}

fn kind_hint(kind: &LlmFieldKind, range: &Option<ir::Range>) -> String {
    let bound = || -> String {
        let lit = |l: &ir::Literal| match l {
            ir::Literal::Int(v) => v.to_string(),
            ir::Literal::Float(v) => format!("{v:?}"),
            ir::Literal::Bool(v) => v.to_string(),
            ir::Literal::String(v) => format!("{v:?}"),
        };
        match range {
            Some(r) => format!(
                " in [{}, {}{}",
                lit(&r.lo),
                lit(&r.hi),
                if r.inclusive { "]" } else { ")" }
            ),
            None => String::new(),
        }
    };
    match kind {
        LlmFieldKind::Int => format!("integer{}", bound()),
        LlmFieldKind::Float => format!("number{}", bound()),
        LlmFieldKind::Bool => "true or false".to_owned(),
        LlmFieldKind::String => "string".to_owned(),
        LlmFieldKind::Enum(e) => choices(&e.allowed),
        LlmFieldKind::Optional(inner) => format!("{} or null", kind_hint(inner, range)),
        LlmFieldKind::List {
            item,
            min_len,
            max_len,
        } => {
            let count = if min_len == max_len {
                min_len.to_string()
            } else {
                format!("{min_len} to {max_len}")
            };
            format!("a list of {count} items, each {}", kind_hint(item, range))
        }
        LlmFieldKind::Record(fields) => record_hint(fields),
    }
}

/// Why a host's JSON could not become a value of the reply type (a host bug or a lenient host):
/// the message of a `SchemaViolation`.
pub(crate) type Mismatch = String;

/// Converts a validated reply into a value of the reply type. `variant` builds an enum value
/// from its enum id and variant index.
pub(crate) fn reply_value(
    def: &LlmDef,
    json: &serde_json::Value,
    variant: &mut dyn FnMut(ir::EnumId, u32) -> Option<Value>,
) -> Result<Value, Mismatch> {
    match (&def.shape, &def.reply) {
        (LlmShape::Enum(e), _) => enum_value(e, json, variant),
        (LlmShape::Record(fields), Ty::Record(record)) => {
            record_value(fields, &record.fields, record, json, variant, "")
        }
        (LlmShape::Record(_), other) => Err(format!("the reply type `{other}` is not a record")),
    }
}

fn enum_value(
    e: &ir::LlmEnum,
    v: &serde_json::Value,
    variant: &mut dyn FnMut(ir::EnumId, u32) -> Option<Value>,
) -> Result<Value, Mismatch> {
    let text = v
        .as_str()
        .or_else(|| v.get("choice").and_then(serde_json::Value::as_str))
        .ok_or_else(|| format!("expected a variant name, found {v}"))?;
    match match_variant(&e.allowed, text) {
        Some(allowed) => {
            let index = e
                .variants
                .iter()
                .position(|v| *v == e.allowed[allowed])
                .unwrap_or(allowed);
            variant(e.enum_id, index as u32).ok_or_else(|| "unknown enum".to_owned())
        }
        None => Err(format!("`{text}` is not one of {}", e.allowed.join(", "))),
    }
}

fn record_value(
    fields: &[ir::LlmField],
    types: &[(String, Ty)],
    record: &Arc<harness_compiler::types::RecordTy>,
    json: &serde_json::Value,
    variant: &mut dyn FnMut(ir::EnumId, u32) -> Option<Value>,
    prefix: &str,
) -> Result<Value, Mismatch> {
    let object = json
        .as_object()
        .ok_or_else(|| format!("expected a JSON object, found {json}"))?;
    let mut values = Vec::with_capacity(fields.len());
    for (field, (_, ty)) in fields.iter().zip(types) {
        let path = format!("{prefix}{}", field.name);
        let v = object.get(&field.name).unwrap_or(&serde_json::Value::Null);
        values.push(field_value(
            &field.kind,
            &field.range,
            ty,
            v,
            variant,
            &path,
        )?);
    }
    Ok(Value::Record(Arc::new(RecordValue {
        ty: record.clone(),
        values,
    })))
}

fn field_value(
    kind: &LlmFieldKind,
    range: &Option<ir::Range>,
    ty: &Ty,
    v: &serde_json::Value,
    variant: &mut dyn FnMut(ir::EnumId, u32) -> Option<Value>,
    path: &str,
) -> Result<Value, Mismatch> {
    let wrong = || format!("field `{path}` has the wrong type: {v}");
    let value = match (kind, ty) {
        (LlmFieldKind::Optional(inner), Ty::Option(inner_ty)) => {
            return if v.is_null() {
                Ok(Value::none())
            } else {
                field_value(inner, range, inner_ty, v, variant, path).map(Value::some)
            };
        }
        (LlmFieldKind::List { item, .. }, Ty::List(item_ty)) => {
            let items = v.as_array().ok_or_else(wrong)?;
            let values = items
                .iter()
                .enumerate()
                .map(|(i, item_json)| {
                    field_value(
                        item,
                        range,
                        item_ty,
                        item_json,
                        variant,
                        &format!("{path}[{i}]"),
                    )
                })
                .collect::<Result<Vec<_>, _>>()?;
            return Ok(Value::List(Arc::new(values)));
        }
        (LlmFieldKind::Record(fields), Ty::Record(record)) => {
            return record_value(
                fields,
                &record.fields,
                record,
                v,
                variant,
                &format!("{path}."),
            );
        }
        (LlmFieldKind::Int, _) => v.as_i64().map(Value::Int).ok_or_else(wrong)?,
        (LlmFieldKind::Float, _) => v.as_f64().and_then(Value::float).ok_or_else(wrong)?,
        (LlmFieldKind::Bool, _) => v.as_bool().map(Value::Bool).ok_or_else(wrong)?,
        (LlmFieldKind::String, _) => v.as_str().map(Value::str).ok_or_else(wrong)?,
        (LlmFieldKind::Enum(e), _) => enum_value(e, v, variant)?,
        _ => {
            return Err(format!(
                "field `{path}` does not match its declared type `{ty}`"
            ));
        }
    };
    if v.is_null() {
        return Err(format!("field `{path}` is missing"));
    }
    if let Some(range) = range
        && !crate::ops::in_range(&value, range)
    {
        return Err(format!(
            "field `{path}` = {value} lies outside {}",
            crate::ops::range_text(range)
        ));
    }
    Ok(value)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn variant_names_match_in_any_case_and_spelling() {
        let variants = vec!["CoarseRoiCollapse".to_owned(), "Late".to_owned()];
        assert_eq!(match_variant(&variants, "coarse_roi_collapse"), Some(0));
        assert_eq!(match_variant(&variants, "COARSE-ROI-COLLAPSE"), Some(0));
        assert_eq!(match_variant(&variants, "late"), Some(1));
        assert_eq!(match_variant(&variants, "early"), None);
        assert_eq!(snake_case("CoarseRoiCollapse"), "coarse_roi_collapse");
    }
}
