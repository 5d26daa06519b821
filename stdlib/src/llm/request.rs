//! What a harness asks: the prompts, the model, the declared reply shape, and its hash.

use serde::Serialize;
use sha2::{Digest, Sha256};

use super::config::ProviderKind;
use super::shape::ReplyShape;

/// One LLM call as the harness declares it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LlmRequest {
    /// The system prompt; an empty one is not sent.
    pub system: String,
    /// The user prompt, already filled in from the harness's template.
    pub user: String,
    /// A model for this call only; `None` uses the provider configuration's model.
    pub model: Option<String>,
    /// The declared type of the reply.
    pub shape: ReplyShape,
    /// Ask the provider for JSON output (Ollama `format:"json"`, OpenAI `json_object`).
    pub json_mode: bool,
}

impl LlmRequest {
    /// A request in JSON mode with the configured model.
    pub fn new(system: impl Into<String>, user: impl Into<String>, shape: ReplyShape) -> Self {
        LlmRequest {
            system: system.into(),
            user: user.into(),
            model: None,
            shape,
            json_mode: true,
        }
    }

    /// The chat messages sent for this request, in order.
    pub fn messages(&self) -> Vec<ChatMessage> {
        let system = (!self.system.is_empty()).then(|| ChatMessage {
            role: "system".to_owned(),
            content: self.system.clone(),
        });
        let user = ChatMessage {
            role: "user".to_owned(),
            content: self.user.clone(),
        };
        system.into_iter().chain([user]).collect()
    }
}

/// One chat message as both wire protocols spell it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ChatMessage {
    /// `system` or `user`.
    pub role: String,
    /// The text.
    pub content: String,
}

/// Everything that determines a provider's answer, and nothing else: no URL, no key.
///
/// The field order is fixed by this struct, so its JSON is canonical whatever features other
/// crates enable on `serde_json`.
#[derive(Serialize)]
struct HashInput<'a> {
    provider: ProviderKind,
    model: &'a str,
    messages: &'a [ChatMessage],
    shape: &'a ReplyShape,
    json_mode: bool,
}

/// The canonical JSON of a request as sent to `provider` with `model`.
pub(crate) fn canonical_request(
    provider: ProviderKind,
    model: &str,
    request: &LlmRequest,
) -> serde_json::Value {
    let messages = request.messages();
    let input = HashInput {
        provider,
        model,
        messages: &messages,
        shape: &request.shape,
        json_mode: request.json_mode,
    };
    // Serializing plain structs of strings, numbers and enums cannot fail: serde_json only
    // fails on maps with non-string keys, and this input has none.
    serde_json::to_value(&input).unwrap_or(serde_json::Value::Null)
}

/// The record/replay key of a request: lowercase hex SHA-256 of its canonical JSON.
///
/// The base URL and the API key are left out on purpose, so a recording made against one host
/// replays against any other, and a key can never be recovered from a file name.
pub fn request_hash(provider: ProviderKind, model: &str, request: &LlmRequest) -> String {
    let canonical = canonical_request(provider, model, request).to_string();
    let digest = Sha256::digest(canonical.as_bytes());
    digest.iter().map(|byte| format!("{byte:02x}")).collect()
}
