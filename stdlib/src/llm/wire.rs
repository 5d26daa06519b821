//! The two wire protocols: request bodies and response envelopes, as pure functions.

use serde_json::{Value, json};

use super::config::ProviderKind;
use super::failure::LlmFailure;
use super::request::LlmRequest;
use super::shape::excerpt;

/// The model's text and the provider's token counts, taken out of a response envelope.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ChatReply {
    pub content: String,
    pub prompt_tokens: Option<u64>,
    pub completion_tokens: Option<u64>,
}

/// The JSON body of a chat request.
pub(crate) fn request_body(kind: ProviderKind, model: &str, request: &LlmRequest) -> Value {
    let messages = request.messages();
    match kind {
        ProviderKind::Ollama => {
            let mut body = json!({ "model": model, "messages": messages, "stream": false });
            if request.json_mode {
                body["format"] = json!("json");
            }
            body
        }
        ProviderKind::OpenAiCompatible => {
            let mut body = json!({ "model": model, "messages": messages });
            if request.json_mode {
                body["response_format"] = json!({ "type": "json_object" });
            }
            body
        }
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
    let (content, prompt, completion) = match kind {
        ProviderKind::Ollama => (
            envelope.pointer("/message/content"),
            envelope.get("prompt_eval_count"),
            envelope.get("eval_count"),
        ),
        ProviderKind::OpenAiCompatible => (
            envelope.pointer("/choices/0/message/content"),
            envelope.pointer("/usage/prompt_tokens"),
            envelope.pointer("/usage/completion_tokens"),
        ),
    };
    let path = match kind {
        ProviderKind::Ollama => "message.content",
        ProviderKind::OpenAiCompatible => "choices[0].message.content",
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
