//! Provider configuration: which wire protocol, where, which model, and a secret that never prints.

use std::fmt;
use std::str::FromStr;

use serde::{Serialize, Serializer};

/// The wire protocol a provider speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ProviderKind {
    /// A locally served model behind Ollama's chat API (`POST {base}/api/chat`).
    Ollama,
    /// Any OpenAI-compatible chat-completions endpoint (`POST {base}/chat/completions`).
    #[serde(rename = "openai")]
    OpenAiCompatible,
}

impl ProviderKind {
    /// The stable lowercase name used on the command line, in traces and in request hashes.
    pub fn as_str(self) -> &'static str {
        match self {
            ProviderKind::Ollama => "ollama",
            ProviderKind::OpenAiCompatible => "openai",
        }
    }

    /// The environment variable that names this provider's base URL.
    pub fn base_url_var(self) -> &'static str {
        match self {
            ProviderKind::Ollama => "OLLAMA_BASE_URL",
            ProviderKind::OpenAiCompatible => "OPENAI_BASE_URL",
        }
    }

    /// The environment variable that names this provider's default model.
    pub fn model_var(self) -> &'static str {
        match self {
            ProviderKind::Ollama => "OLLAMA_MODEL",
            ProviderKind::OpenAiCompatible => "OPENAI_MODEL",
        }
    }

    /// The base URL used when neither a flag nor the environment gives one.
    pub fn default_base_url(self) -> &'static str {
        match self {
            ProviderKind::Ollama => "http://localhost:11434",
            ProviderKind::OpenAiCompatible => "https://api.openai.com/v1",
        }
    }

    /// The model used when neither a flag nor the environment gives one, if the provider has one.
    ///
    /// Only Ollama has a default: the reference experiment's local model. A hosted endpoint has
    /// no model that every account can use, so there the model must be named.
    pub fn default_model(self) -> Option<&'static str> {
        match self {
            ProviderKind::Ollama => Some("gemma4:e4b"),
            ProviderKind::OpenAiCompatible => None,
        }
    }
}

impl fmt::Display for ProviderKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for ProviderKind {
    type Err = ConfigError;

    /// Accepts `ollama`, and `openai` or `openai-compatible`, in any letter case.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.trim().to_ascii_lowercase().as_str() {
            "ollama" => Ok(ProviderKind::Ollama),
            "openai" | "openai-compatible" | "openai_compatible" => {
                Ok(ProviderKind::OpenAiCompatible)
            }
            _ => Err(ConfigError::UnknownProvider(s.to_owned())),
        }
    }
}

/// An API key. Its `Debug`, `Display` and `Serialize` all print `<redacted>`.
///
/// The only way to read the secret is [`ApiKey::expose_secret`], which the HTTP transport calls
/// to build the `Authorization` header, so a key cannot reach a trace or a message by accident.
#[derive(Clone, PartialEq, Eq)]
pub struct ApiKey(String);

/// The text that stands in for a secret wherever one would be printed.
pub const REDACTED: &str = "<redacted>";

impl ApiKey {
    /// Wraps a secret.
    pub fn new(secret: impl Into<String>) -> Self {
        ApiKey(secret.into())
    }

    /// The secret itself, for the `Authorization` header and for scrubbing echoed text.
    pub fn expose_secret(&self) -> &str {
        &self.0
    }

    /// Replaces every occurrence of the secret in `text` with [`REDACTED`].
    ///
    /// Servers sometimes echo the key in an error body, and URLs or IO errors may quote what
    /// they were given, so every string that leaves the transport passes through here.
    pub fn scrub(&self, text: &str) -> String {
        if self.0.is_empty() {
            text.to_owned()
        } else {
            text.replace(&self.0, REDACTED)
        }
    }
}

impl fmt::Debug for ApiKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ApiKey({REDACTED})")
    }
}

impl fmt::Display for ApiKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(REDACTED)
    }
}

impl Serialize for ApiKey {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(REDACTED)
    }
}

/// A resolved provider: protocol, base URL (without a trailing slash), model and optional key.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ProviderConfig {
    /// The wire protocol.
    pub kind: ProviderKind,
    /// The base URL, for example `http://localhost:11434` or `https://host/v1`.
    pub base_url: String,
    /// The model name sent with every request unless a request names its own.
    pub model: String,
    /// The bearer key; `None` sends no `Authorization` header (Ollama, local OpenAI servers).
    pub api_key: Option<ApiKey>,
}

/// Values given explicitly, typically by command-line flags; each one beats the environment.
#[derive(Debug, Clone, Default)]
pub struct ProviderSettings {
    /// `--llm-provider`; defaults to Ollama.
    pub provider: Option<ProviderKind>,
    /// `--llm-base-url`; else `OLLAMA_BASE_URL` or `OPENAI_BASE_URL`, else the provider default.
    pub base_url: Option<String>,
    /// `--llm-model`; else `OLLAMA_MODEL` or `OPENAI_MODEL`, else the provider default.
    pub model: Option<String>,
    /// An explicit key; else `OPENAI_API_KEY` for the OpenAI-compatible provider.
    pub api_key: Option<ApiKey>,
}

/// Why a provider configuration could not be resolved. No variant ever holds a key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ConfigError {
    /// The provider name is neither `ollama` nor `openai`.
    UnknownProvider(String),
    /// The base URL is not an absolute `http` or `https` URL with a host.
    InvalidBaseUrl(String),
    /// No model was given and the provider has no default.
    MissingModel(ProviderKind),
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ConfigError::UnknownProvider(name) => {
                write!(
                    f,
                    "unknown LLM provider {name:?}: expected `ollama` or `openai`"
                )
            }
            ConfigError::InvalidBaseUrl(url) => write!(
                f,
                "invalid LLM base URL {url:?}: expected an absolute http:// or https:// URL"
            ),
            ConfigError::MissingModel(kind) => write!(
                f,
                "no model for the {kind} provider: pass --llm-model or set {}",
                kind.model_var()
            ),
        }
    }
}

impl std::error::Error for ConfigError {}

impl ProviderConfig {
    /// Resolves a configuration from explicit settings, falling back to `env`, then to defaults.
    ///
    /// `env` looks a variable up; the command line passes `&|name| std::env::var(name).ok()` and
    /// tests pass a map, so this library never reads the process environment itself. Empty
    /// values count as unset, because `VAR=` in a shell usually means "not configured".
    pub fn resolve(
        settings: &ProviderSettings,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Result<ProviderConfig, ConfigError> {
        let lookup = |name: &str| env(name).filter(|value| !value.trim().is_empty());
        let given = |value: &Option<String>| value.clone().filter(|v| !v.trim().is_empty());

        let kind = settings.provider.unwrap_or(ProviderKind::Ollama);
        let base_url = given(&settings.base_url)
            .or_else(|| lookup(kind.base_url_var()))
            .unwrap_or_else(|| kind.default_base_url().to_owned());
        let base_url = normalize_base_url(&base_url)?;
        let model = given(&settings.model)
            .or_else(|| lookup(kind.model_var()))
            .or_else(|| kind.default_model().map(str::to_owned))
            .ok_or(ConfigError::MissingModel(kind))?;
        let api_key = match &settings.api_key {
            Some(key) if !key.expose_secret().is_empty() => Some(key.clone()),
            _ => match kind {
                ProviderKind::OpenAiCompatible => lookup("OPENAI_API_KEY").map(ApiKey::new),
                ProviderKind::Ollama => None,
            },
        };
        Ok(ProviderConfig {
            kind,
            base_url,
            model: model.trim().to_owned(),
            api_key,
        })
    }

    /// The full URL of the chat endpoint for this provider.
    pub fn endpoint(&self) -> String {
        match self.kind {
            ProviderKind::Ollama => format!("{}/api/chat", self.base_url),
            ProviderKind::OpenAiCompatible => format!("{}/chat/completions", self.base_url),
        }
    }
}

/// Checks the scheme and host of a base URL and drops trailing slashes.
///
/// The check is deliberately shallow: the HTTP client parses the URL fully, and reports what it
/// cannot use as a transport failure rather than a panic. Catching the common mistakes here
/// (a missing scheme, an empty host) gives a configuration error before any game starts.
fn normalize_base_url(raw: &str) -> Result<String, ConfigError> {
    let trimmed = raw.trim().trim_end_matches('/');
    let rest = trimmed
        .strip_prefix("http://")
        .or_else(|| trimmed.strip_prefix("https://"));
    let host_ok = rest.is_some_and(|rest| {
        let authority = rest.split('/').next().unwrap_or_default();
        !authority.is_empty() && !authority.contains(char::is_whitespace)
    });
    if host_ok {
        Ok(trimmed.to_owned())
    } else {
        Err(ConfigError::InvalidBaseUrl(raw.to_owned()))
    }
}
