//! Provider configuration: which wire protocol, where, which model, and a secret that never prints.

use std::fmt;
use std::net::IpAddr;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use super::secret::{ApiKey, REDACTED};

/// Who answers a call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ProviderKind {
    /// A locally served model behind Ollama's chat API (`POST {base}/api/chat`).
    Ollama,
    /// Any OpenAI-compatible chat-completions endpoint (`POST {base}/chat/completions`).
    #[serde(rename = "openai")]
    OpenAiCompatible,
    /// The simulated model of a persona file: no network, OpenAI-compatible bodies. A test
    /// instrument whose figures are never a model's.
    Sim,
}

/// The two wire protocols; the simulated model speaks the OpenAI-compatible one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wire {
    /// Ollama's `/api/chat`.
    Ollama,
    /// OpenAI's `/chat/completions`.
    OpenAi,
}

impl ProviderKind {
    /// The stable lowercase name used on the command line, in traces and in request hashes.
    pub fn as_str(self) -> &'static str {
        match self {
            ProviderKind::Ollama => "ollama",
            ProviderKind::OpenAiCompatible => "openai",
            ProviderKind::Sim => "sim",
        }
    }

    /// The wire protocol of this provider's request and response bodies.
    pub fn wire(self) -> Wire {
        match self {
            ProviderKind::Ollama => Wire::Ollama,
            ProviderKind::OpenAiCompatible | ProviderKind::Sim => Wire::OpenAi,
        }
    }

    /// The environment variable that names this provider's base URL, if it has one.
    pub fn base_url_var(self) -> Option<&'static str> {
        match self {
            ProviderKind::Ollama => Some("OLLAMA_BASE_URL"),
            ProviderKind::OpenAiCompatible => Some("OPENAI_BASE_URL"),
            ProviderKind::Sim => None,
        }
    }

    /// The environment variable that names this provider's default model, if it has one.
    pub fn model_var(self) -> Option<&'static str> {
        match self {
            ProviderKind::Ollama => Some("OLLAMA_MODEL"),
            ProviderKind::OpenAiCompatible => Some("OPENAI_MODEL"),
            ProviderKind::Sim => None,
        }
    }

    /// The base URL used when neither a flag nor the environment gives one. The simulated model
    /// is never dialled; its URL only names it in messages.
    pub fn default_base_url(self) -> &'static str {
        match self {
            ProviderKind::Ollama => "http://localhost:11434",
            ProviderKind::OpenAiCompatible => "https://api.openai.com/v1",
            ProviderKind::Sim => "sim://persona",
        }
    }

    /// The model used when neither a flag nor the environment gives one, if the provider has one.
    ///
    /// Only Ollama has a default: the reference experiment's local model. A hosted endpoint has
    /// no model that every account can use, so there the model must be named; the simulated
    /// model is named after its persona by whoever loads it.
    pub fn default_model(self) -> Option<&'static str> {
        match self {
            ProviderKind::Ollama => Some("gemma4:e4b"),
            ProviderKind::OpenAiCompatible | ProviderKind::Sim => None,
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

    /// Accepts `ollama`, `openai` or `openai-compatible`, and `sim`, in any letter case.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.trim().to_ascii_lowercase().as_str() {
            "ollama" => Ok(ProviderKind::Ollama),
            "openai" | "openai-compatible" | "openai_compatible" => {
                Ok(ProviderKind::OpenAiCompatible)
            }
            "sim" => Ok(ProviderKind::Sim),
            _ => Err(ConfigError::UnknownProvider(s.to_owned())),
        }
    }
}

/// A resolved provider: protocol, base URL (without a trailing slash), model and optional key.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ProviderConfig {
    /// The wire protocol.
    pub kind: ProviderKind,
    /// The base URL, for example `http://localhost:11434` or `https://host/v1`. It never holds
    /// credentials: [`ProviderConfig::resolve`] refuses a URL with a user or password.
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

/// Why a provider configuration could not be resolved. No variant ever holds a key, and none
/// quotes a base URL whole: a URL pasted in the wrong place may be a secret.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ConfigError {
    /// The provider name is not `ollama`, `openai` or `sim`.
    UnknownProvider(String),
    /// The base URL is not an absolute `http` or `https` URL with a host.
    InvalidBaseUrl {
        /// Where the URL came from: `--llm-base-url` or an environment variable.
        source: String,
        /// What is wrong with it, without quoting it.
        problem: String,
    },
    /// The base URL carries a user name or password, which would be sent as Basic auth and
    /// land in recordings.
    CredentialsInBaseUrl {
        /// Where the URL came from.
        source: String,
        /// The URL with its credentials replaced by [`REDACTED`].
        redacted: String,
    },
    /// No model was given and the provider has no default.
    MissingModel(ProviderKind),
    /// The OpenAI-compatible provider has no key for a host that is not on this machine.
    MissingKey {
        /// The host the key is for.
        host: String,
    },
    /// A base URL was given to the simulated model, which has none.
    SimHasNoUrl,
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ConfigError::UnknownProvider(name) => write!(
                f,
                "unknown LLM provider {name:?}: expected `ollama`, `openai` or `sim`"
            ),
            ConfigError::InvalidBaseUrl { source, problem } => write!(
                f,
                "the LLM base URL from {source} is not usable: {problem}; expected an absolute \
                 http:// or https:// URL such as http://127.0.0.1:11434"
            ),
            ConfigError::CredentialsInBaseUrl { source, redacted } => write!(
                f,
                "the LLM base URL from {source} ({redacted}) carries credentials, which would be \
                 sent as Basic auth and written to recordings; remove them from the URL and put \
                 the key in OPENAI_API_KEY"
            ),
            ConfigError::MissingModel(kind) => match kind.model_var() {
                Some(var) => write!(
                    f,
                    "no model for the {kind} provider: pass --llm-model or set {var}"
                ),
                None => write!(f, "no model for the {kind} provider: pass --llm-model"),
            },
            ConfigError::MissingKey { host } => write!(
                f,
                "no API key for the openai provider at {host}: set OPENAI_API_KEY (a server that \
                 needs none accepts any value)"
            ),
            ConfigError::SimHasNoUrl => f.write_str(
                "the simulated model (--llm-provider sim) has no base URL: drop --llm-base-url",
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
        let base_url = if kind == ProviderKind::Sim {
            if given(&settings.base_url).is_some() {
                return Err(ConfigError::SimHasNoUrl);
            }
            kind.default_base_url().to_owned()
        } else {
            let from_env = kind
                .base_url_var()
                .and_then(|var| lookup(var).map(|url| (var.to_owned(), url)));
            let (source, url) = match (given(&settings.base_url), from_env) {
                (Some(url), _) => ("--llm-base-url".to_owned(), url),
                (None, Some(found)) => found,
                (None, None) => (
                    "the provider's default".to_owned(),
                    kind.default_base_url().to_owned(),
                ),
            };
            normalize_base_url(&url, &source)?
        };
        let model = given(&settings.model)
            .or_else(|| kind.model_var().and_then(lookup))
            .or_else(|| kind.default_model().map(str::to_owned))
            .ok_or(ConfigError::MissingModel(kind))?;
        let api_key = match &settings.api_key {
            Some(key) if !key.expose_secret().is_empty() => Some(key.clone()),
            _ => match kind {
                ProviderKind::OpenAiCompatible => lookup("OPENAI_API_KEY").map(ApiKey::new),
                ProviderKind::Ollama | ProviderKind::Sim => None,
            },
        };
        Ok(ProviderConfig {
            kind,
            base_url,
            model: model.trim().to_owned(),
            api_key,
        })
    }

    /// Checks that a live call can authenticate: the OpenAI-compatible provider needs a key
    /// unless its server runs on this machine (local servers usually take none). Replay sends
    /// nothing and needs no key, so this is separate from [`ProviderConfig::resolve`].
    pub fn require_key(&self) -> Result<(), ConfigError> {
        if self.kind == ProviderKind::OpenAiCompatible
            && self.api_key.is_none()
            && !self.is_loopback()
        {
            return Err(ConfigError::MissingKey {
                host: self.host().to_owned(),
            });
        }
        Ok(())
    }

    /// The full URL of the chat endpoint for this provider.
    pub fn endpoint(&self) -> String {
        match self.kind.wire() {
            Wire::Ollama => format!("{}/api/chat", self.base_url),
            Wire::OpenAi => format!("{}/chat/completions", self.base_url),
        }
    }

    /// The URL that lists the provider's models, for the probe before the first game.
    pub fn models_url(&self) -> String {
        match self.kind.wire() {
            Wire::Ollama => format!("{}/api/tags", self.base_url),
            Wire::OpenAi => format!("{}/models", self.base_url),
        }
    }

    /// The host of the base URL (with its port, if any).
    pub fn host(&self) -> &str {
        split_url(&self.base_url).map_or("", |parts| parts.host_port)
    }

    /// True when the base URL names this machine: `localhost`, a `127.x.x.x` address or `::1`.
    pub fn is_loopback(&self) -> bool {
        split_url(&self.base_url).is_some_and(|parts| is_loopback_host(parts.host()))
    }

    /// The base URL as it may be printed or stored: query values are replaced by [`REDACTED`]
    /// (some gateways take a key as `?key=`), so a manifest never holds a secret.
    pub fn display_base_url(&self) -> String {
        redact_url(&self.base_url)
    }

    /// Things worth telling the user before the run starts: a key about to travel over plain
    /// `http` to another machine, where anyone on the path can read it.
    pub fn warnings(&self) -> Vec<String> {
        let mut warnings = Vec::new();
        let plain_http = self.base_url.starts_with("http://");
        if self.api_key.is_some() && plain_http && !self.is_loopback() {
            warnings.push(format!(
                "the API key will be sent over plain http to {}, where anyone on the network \
                 path can read it; use https:// or a tunnel to a loopback port",
                self.host()
            ));
        }
        warnings
    }
}

/// The pieces of an absolute URL that matter here.
struct UrlParts<'a> {
    scheme: &'a str,
    /// `user:password` before an `@`, if any.
    userinfo: Option<&'a str>,
    /// The host and port, as written (`[::1]:8080`).
    host_port: &'a str,
    /// Everything from the first `/`, `?` or `#` after the authority.
    rest: &'a str,
}

impl UrlParts<'_> {
    /// The host without its port or IPv6 brackets.
    fn host(&self) -> &str {
        let hp = self.host_port;
        if let Some(inner) = hp.strip_prefix('[') {
            return inner.split(']').next().unwrap_or_default();
        }
        hp.rsplit_once(':').map_or(hp, |(host, _)| host)
    }
}

fn split_url(url: &str) -> Option<UrlParts<'_>> {
    let (scheme, after) = url.split_once("://")?;
    let end = after.find(['/', '?', '#']).unwrap_or(after.len());
    let (authority, rest) = after.split_at(end);
    let (userinfo, host_port) = match authority.rsplit_once('@') {
        Some((user, host)) => (Some(user), host),
        None => (None, authority),
    };
    Some(UrlParts {
        scheme,
        userinfo,
        host_port,
        rest,
    })
}

/// True for `localhost` (and `*.localhost`), `127.0.0.0/8`, `::1`.
pub(crate) fn is_loopback_host(host: &str) -> bool {
    let host = host.to_ascii_lowercase();
    host == "localhost"
        || host.ends_with(".localhost")
        || host.parse::<IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

/// A URL with any credentials and query values replaced by [`REDACTED`]; a string that is not
/// a URL at all is not quoted.
pub(crate) fn redact_url(url: &str) -> String {
    let Some(parts) = split_url(url) else {
        return REDACTED.to_owned();
    };
    let mut out = format!("{}://", parts.scheme);
    if parts.userinfo.is_some() {
        out.push_str(REDACTED);
        out.push('@');
    }
    out.push_str(parts.host_port);
    let (path, query) = match parts.rest.split_once('?') {
        Some((path, query)) => (path, Some(query)),
        None => (parts.rest, None),
    };
    out.push_str(path.split('#').next().unwrap_or_default());
    if let Some(query) = query {
        let query = query.split('#').next().unwrap_or_default();
        let redacted: Vec<String> = query
            .split('&')
            .map(|pair| match pair.split_once('=') {
                Some((name, _)) => format!("{name}={REDACTED}"),
                None => pair.to_owned(),
            })
            .collect();
        out.push('?');
        out.push_str(&redacted.join("&"));
    }
    out
}

/// Checks the scheme and host of a base URL and drops trailing slashes.
///
/// The check is deliberately shallow: the HTTP client parses the URL fully, and reports what it
/// cannot use as a transport failure rather than a panic. Catching the common mistakes here
/// (a missing scheme, an empty host, credentials) gives a configuration error before any game
/// starts. Errors describe the problem without quoting the URL, which may be a misplaced key.
fn normalize_base_url(raw: &str, source: &str) -> Result<String, ConfigError> {
    let trimmed = raw.trim().trim_end_matches('/');
    let invalid = |problem: &str| ConfigError::InvalidBaseUrl {
        source: source.to_owned(),
        problem: problem.to_owned(),
    };
    let Some(parts) = split_url(trimmed) else {
        return Err(invalid("it has no scheme (no `://`)"));
    };
    if !matches!(parts.scheme, "http" | "https") {
        let shown = if parts.scheme.len() <= 10 && parts.scheme.chars().all(char::is_alphanumeric) {
            format!("its scheme is `{}`", parts.scheme)
        } else {
            "its scheme is not http or https".to_owned()
        };
        return Err(invalid(&shown));
    }
    if parts.userinfo.is_some() {
        return Err(ConfigError::CredentialsInBaseUrl {
            source: source.to_owned(),
            redacted: redact_url(trimmed),
        });
    }
    if parts.host().is_empty() {
        return Err(invalid("it has no host"));
    }
    if trimmed.contains(char::is_whitespace) {
        return Err(invalid("it contains white space"));
    }
    Ok(trimmed.to_owned())
}
