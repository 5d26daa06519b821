//! What a harness asks: the prompts, the model, the declared reply shape, the decoding settings,
//! and the hash that keys a recorded answer.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

use super::config::ProviderKind;
use super::shape::ReplyShape;

/// One LLM call as the harness declares it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LlmRequest {
    /// The `llm` item that makes the call (`revise_policy`); empty for calls made outside a
    /// harness. The simulated model picks its intent by it.
    pub effect: String,
    /// The system prompt; an empty one is not sent.
    pub system: String,
    /// The user prompt, already filled in from the harness's template.
    pub user: String,
    /// Earlier turns of the same conversation after the first user prompt: a rejected reply and
    /// the feedback on it, for each retry so far.
    pub history: Vec<ChatMessage>,
    /// A model for this call only; `None` uses the provider configuration's model.
    pub model: Option<String>,
    /// The declared type of the reply.
    pub shape: ReplyShape,
    /// Ask the provider for JSON output (a schema or JSON mode, as [`Decoding::schema`] says).
    pub json_mode: bool,
}

impl LlmRequest {
    /// A request in JSON mode with the configured model.
    pub fn new(system: impl Into<String>, user: impl Into<String>, shape: ReplyShape) -> Self {
        LlmRequest {
            effect: String::new(),
            system: system.into(),
            user: user.into(),
            history: Vec::new(),
            model: None,
            shape,
            json_mode: true,
        }
    }

    /// The same request, made by the `llm` item `effect`.
    pub fn for_effect(mut self, effect: impl Into<String>) -> Self {
        self.effect = effect.into();
        self
    }

    /// The chat messages sent for this request, in order.
    pub fn messages(&self) -> Vec<ChatMessage> {
        let system = (!self.system.is_empty()).then(|| ChatMessage::new("system", &self.system));
        let user = ChatMessage::new("user", &self.user);
        system
            .into_iter()
            .chain([user])
            .chain(self.history.iter().cloned())
            .collect()
    }
}

/// One chat message as both wire protocols spell it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChatMessage {
    /// `system`, `user` or `assistant`.
    pub role: String,
    /// The text.
    pub content: String,
}

impl ChatMessage {
    /// A message from `role`.
    pub fn new(role: &str, content: &str) -> Self {
        ChatMessage {
            role: role.to_owned(),
            content: content.to_owned(),
        }
    }
}

/// How the provider is asked to constrain its output to JSON.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SchemaMode {
    /// Send the reply's JSON Schema (OpenAI `response_format: json_schema`, Ollama `format:
    /// <schema>`), falling back to JSON mode for the rest of the run if the server refuses it.
    #[default]
    Strict,
    /// Ask for any JSON object only (OpenAI `json_object`, Ollama `format: "json"`).
    Json,
}

/// The decoding settings sent with every request. Each one is part of the request hash, so a
/// recording made at one temperature never answers a run at another.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Decoding {
    /// The sampling temperature; `None` leaves the provider's default.
    pub temperature: Option<f64>,
    /// Nucleus sampling's probability mass; `None` leaves the provider's default.
    pub top_p: Option<f64>,
    /// The provider's sampling seed; `None` sends none.
    pub seed: Option<u64>,
    /// The most tokens of the reply (`max_tokens`, Ollama `num_predict`).
    pub max_tokens: Option<u32>,
    /// Provider-specific options merged into the request body (for example OpenRouter's
    /// `provider` routing object). Ollama's `options` object is merged key by key.
    pub extra_body: Option<Map<String, Value>>,
    /// How JSON output is requested.
    pub schema: SchemaMode,
}

impl Decoding {
    /// The keys of the request body that `extra_body` may not replace: they carry the request
    /// itself, and replacing them would make the hash lie about what was sent.
    pub const RESERVED_KEYS: [&'static str; 4] = ["model", "messages", "stream", "response_format"];

    /// True when nothing but the schema mode is set: the settings a first-format recording was
    /// made with.
    pub fn is_default(&self) -> bool {
        self.temperature.is_none()
            && self.top_p.is_none()
            && self.seed.is_none()
            && self.max_tokens.is_none()
            && self.extra_body.is_none()
    }
}

/// Everything that determines a provider's answer, and nothing else: no URL, no key.
#[derive(Serialize)]
struct HashInput<'a> {
    provider: ProviderKind,
    model: &'a str,
    effect: &'a str,
    messages: &'a [ChatMessage],
    shape: &'a ReplyShape,
    json_mode: bool,
    decoding: &'a Decoding,
}

/// What the first store format hashed.
#[derive(Serialize)]
struct HashInputV1<'a> {
    provider: ProviderKind,
    model: &'a str,
    messages: &'a [ChatMessage],
    shape: &'a ReplyShape,
    json_mode: bool,
}

/// The canonical JSON of a request as sent to `provider` with `model` and `decoding`.
pub(crate) fn canonical_request(
    provider: ProviderKind,
    model: &str,
    decoding: &Decoding,
    request: &LlmRequest,
) -> Value {
    let messages = request.messages();
    let input = HashInput {
        provider,
        model,
        effect: &request.effect,
        messages: &messages,
        shape: &request.shape,
        json_mode: request.json_mode,
        decoding,
    };
    // Serializing plain structs of strings, numbers, enums and JSON values cannot fail:
    // serde_json only fails on maps with non-string keys, and this input has none.
    serde_json::to_value(&input).unwrap_or(Value::Null)
}

/// The record/replay key of a request: lowercase hex SHA-256 of its canonical JSON.
///
/// The base URL and the API key are left out on purpose, so a recording made against one host
/// replays against any other, and a key can never be recovered from a file name.
pub fn request_hash(
    provider: ProviderKind,
    model: &str,
    decoding: &Decoding,
    request: &LlmRequest,
) -> String {
    sha256_hex(&canonical_json(&canonical_request(
        provider, model, decoding, request,
    )))
}

/// The key the first store format gave `request`, when that format could have recorded it: a
/// single-turn request with no decoding settings.
pub(crate) fn request_hash_v1(
    provider: ProviderKind,
    model: &str,
    decoding: &Decoding,
    request: &LlmRequest,
) -> Option<String> {
    if !decoding.is_default() || !request.history.is_empty() || !request.shape.is_first_format() {
        return None;
    }
    let messages = request.messages();
    let input = HashInputV1 {
        provider,
        model,
        messages: &messages,
        shape: &request.shape,
        json_mode: request.json_mode,
    };
    let value = serde_json::to_value(&input).unwrap_or(Value::Null);
    Some(sha256_hex(&canonical_json(&value)))
}

fn sha256_hex(text: &str) -> String {
    let digest = Sha256::digest(text.as_bytes());
    digest.iter().map(|byte| format!("{byte:02x}")).collect()
}

/// JSON text with every object's keys in sorted order and no white space.
///
/// The hash must not depend on how `serde_json` is built (its `preserve_order` feature keeps
/// insertion order), so the order is fixed here. Strings and numbers are printed by
/// `serde_json` itself, which makes this the same text the first store format hashed.
pub(crate) fn canonical_json(value: &Value) -> String {
    let mut out = String::new();
    write_canonical(value, &mut out);
    out
}

fn write_canonical(value: &Value, out: &mut String) {
    match value {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            out.push('{');
            for (i, key) in keys.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&Value::String(key.clone()).to_string());
                out.push(':');
                write_canonical(&map[key], out);
            }
            out.push('}');
        }
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_canonical(item, out);
            }
            out.push(']');
        }
        scalar => out.push_str(&scalar.to_string()),
    }
}
