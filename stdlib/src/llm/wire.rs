//! The two wire protocols: request bodies and response envelopes, as pure functions.

use serde_json::{Map, Value, json};

use super::config::{ProviderKind, Wire};
use super::failure::LlmFailure;
use super::request::{Decoding, LlmRequest, SchemaMode};
use super::shape::excerpt;

/// The model's text and the provider's token counts, taken out of a response envelope.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ChatReply {
    pub content: String,
    pub prompt_tokens: Option<u64>,
    pub completion_tokens: Option<u64>,
}

/// The JSON body of a chat request.
///
/// `schema` is how JSON output is asked for on this attempt: the configured mode, or JSON mode
/// after a server refused a schema. Decoding settings go where each protocol wants them (Ollama
/// keeps sampling settings under `options`), and the extra body is merged last, so it can add
/// provider options but, being checked when it is configured, never replaces the request.
pub(crate) fn request_body(
    kind: ProviderKind,
    model: &str,
    decoding: &Decoding,
    schema: SchemaMode,
    request: &LlmRequest,
) -> Value {
    let messages = request.messages();
    let mut body = match kind.wire() {
        Wire::Ollama => {
            let mut body = json!({ "model": model, "messages": messages, "stream": false });
            if request.json_mode {
                body["format"] = match schema {
                    SchemaMode::Strict => request.shape.json_schema(),
                    SchemaMode::Json => json!("json"),
                };
            }
            let mut options = Map::new();
            if let Some(t) = decoding.temperature {
                options.insert("temperature".into(), json!(t));
            }
            if let Some(p) = decoding.top_p {
                options.insert("top_p".into(), json!(p));
            }
            if let Some(seed) = decoding.seed {
                options.insert("seed".into(), json!(seed));
            }
            if let Some(n) = decoding.max_tokens {
                options.insert("num_predict".into(), json!(n));
            }
            if !options.is_empty() {
                body["options"] = Value::Object(options);
            }
            body
        }
        Wire::OpenAi => {
            let mut body = json!({ "model": model, "messages": messages });
            if request.json_mode {
                body["response_format"] = match schema {
                    SchemaMode::Strict => json!({
                        "type": "json_schema",
                        "json_schema": {
                            "name": schema_name(&request.effect),
                            "schema": request.shape.json_schema(),
                            "strict": true,
                        },
                    }),
                    SchemaMode::Json => json!({ "type": "json_object" }),
                };
            }
            if let Some(t) = decoding.temperature {
                body["temperature"] = json!(t);
            }
            if let Some(p) = decoding.top_p {
                body["top_p"] = json!(p);
            }
            if let Some(seed) = decoding.seed {
                body["seed"] = json!(seed);
            }
            if let Some(n) = decoding.max_tokens {
                body["max_tokens"] = json!(n);
            }
            body
        }
    };
    if let (Some(extra), Value::Object(object)) = (&decoding.extra_body, &mut body) {
        for (key, value) in extra {
            match (object.get_mut(key), value) {
                (Some(Value::Object(existing)), Value::Object(more)) => {
                    for (k, v) in more {
                        existing.insert(k.clone(), v.clone());
                    }
                }
                _ => {
                    object.insert(key.clone(), value.clone());
                }
            }
        }
    }
    body
}

/// The schema's name for OpenAI: letters, digits, `_` and `-`, at most 64 characters.
fn schema_name(effect: &str) -> String {
    let name: String = effect
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-'))
        .take(64)
        .collect();
    if name.is_empty() {
        "reply".to_owned()
    } else {
        name
    }
}

/// Takes the reply text and token counts out of a 2xx response body.
///
/// Ollama: `message.content`, `prompt_eval_count`, `eval_count`. OpenAI-compatible:
/// `choices[0].message.content`, `usage.prompt_tokens`, `usage.completion_tokens`. Token counts
/// are optional because some servers omit them (Ollama does when the prompt was cached).
pub(crate) fn parse_response(kind: ProviderKind, body: &str) -> Result<ChatReply, LlmFailure> {
    let envelope: Value =
        serde_json::from_str(body).map_err(|error| LlmFailure::MalformedJson {
            detail: format!("response envelope: {error}"),
            excerpt: excerpt(body),
        })?;
    let (content, prompt, completion) = match kind.wire() {
        Wire::Ollama => (
            envelope.pointer("/message/content"),
            envelope.get("prompt_eval_count"),
            envelope.get("eval_count"),
        ),
        Wire::OpenAi => (
            envelope.pointer("/choices/0/message/content"),
            envelope.pointer("/usage/prompt_tokens"),
            envelope.pointer("/usage/completion_tokens"),
        ),
    };
    let path = match kind.wire() {
        Wire::Ollama => "message.content",
        Wire::OpenAi => "choices[0].message.content",
    };
    let content = content
        .and_then(Value::as_str)
        .ok_or_else(|| LlmFailure::MalformedJson {
            detail: format!("response envelope has no string {path}"),
            excerpt: excerpt(body),
        })?;
    Ok(ChatReply {
        content: content.to_owned(),
        prompt_tokens: prompt.and_then(Value::as_u64),
        completion_tokens: completion.and_then(Value::as_u64),
    })
}

/// The model names in a model list (Ollama `GET /api/tags`: `models[].name`; OpenAI
/// `GET /models`: `data[].id`); `None` when the body is not such a list.
pub(crate) fn parse_models(kind: ProviderKind, body: &str) -> Option<Vec<String>> {
    let envelope: Value = serde_json::from_str(body).ok()?;
    let (list, key) = match kind.wire() {
        Wire::Ollama => (envelope.get("models")?, "name"),
        Wire::OpenAi => (envelope.get("data")?, "id"),
    };
    Some(
        list.as_array()?
            .iter()
            .filter_map(|entry| entry.get(key).and_then(Value::as_str).map(str::to_owned))
            .collect(),
    )
}
