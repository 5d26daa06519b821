//! The `--llm-*` flags of `run` and `ablate`, and the LLM client they configure.
//!
//! Without `--llm-provider` or `--llm-replay` there is no client: every LLM call of the harness
//! fails with `NotConfigured` and takes its fallback, and nothing touches the network. The API key
//! comes only from `OPENAI_API_KEY` and is never printed or written.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use clap::{Args, ValueEnum};
use harness_stdlib::llm::{
    CallMode, ClientHost, ClientOptions, DirStore, LlmClient, ProviderConfig, ProviderKind,
    ProviderSettings,
};

/// The LLM providers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum ProviderArg {
    /// A local or remote Ollama server (`OLLAMA_BASE_URL`, default http://localhost:11434).
    Ollama,
    /// An OpenAI-compatible endpoint (`OPENAI_BASE_URL`, key in `OPENAI_API_KEY`).
    Openai,
}

/// Where the harness's LLM calls go.
#[derive(Args, Clone, Debug, Default)]
pub struct LlmArgs {
    /// The LLM provider for the harness's `llm` effects; without it (and without
    /// --llm-replay) every LLM call fails with `NotConfigured` and takes its fallback.
    #[arg(long, value_enum)]
    pub llm_provider: Option<ProviderArg>,
    /// The provider's base URL (default: `OLLAMA_BASE_URL` or `OPENAI_BASE_URL`, else the
    /// provider's default).
    #[arg(long)]
    pub llm_base_url: Option<String>,
    /// The model (default: `OLLAMA_MODEL` or `OPENAI_MODEL`, else `gemma4:e4b` for Ollama).
    #[arg(long)]
    pub llm_model: Option<String>,
    /// The bound on one HTTP attempt, in milliseconds.
    #[arg(long, default_value_t = 120_000)]
    pub llm_timeout_ms: u64,
    /// Store every exchange in this directory, for a later --llm-replay.
    #[arg(long, conflicts_with = "llm_replay")]
    pub llm_record: Option<PathBuf>,
    /// Answer every call from this directory of recorded exchanges, offline; a call that was
    /// not recorded fails with `ReplayMissing`.
    #[arg(long)]
    pub llm_replay: Option<PathBuf>,
}

impl LlmArgs {
    /// What the flags configure, for a run's manifest: provider, model, base URL (without any
    /// credentials), timeout and record/replay folders; never a key. `None` without an LLM.
    pub fn describe(&self) -> Option<serde_json::Value> {
        if self.llm_provider.is_none() && self.llm_replay.is_none() {
            return None;
        }
        let base_url = self
            .llm_base_url
            .as_deref()
            .map(|url| match url.split_once('@') {
                // `scheme://user:password@host` keeps only the scheme and the host.
                Some((before, after)) => match before.split_once("://") {
                    Some((scheme, _)) => format!("{scheme}://{after}"),
                    None => after.to_string(),
                },
                None => url.to_string(),
            });
        Some(serde_json::json!({
            "provider": self.llm_provider.map(|p| match p {
                ProviderArg::Ollama => "ollama",
                ProviderArg::Openai => "openai",
            }),
            "model": self.llm_model,
            "base_url": base_url,
            "timeout_ms": self.llm_timeout_ms,
            "record": self.llm_record.as_ref().map(|p| p.display().to_string()),
            "replay": self.llm_replay.as_ref().map(|p| p.display().to_string()),
        }))
    }

    /// The client the flags describe, or `None` when no LLM is configured.
    pub fn client(&self) -> Result<Option<LlmClient>, String> {
        if self.llm_provider.is_none() && self.llm_replay.is_none() {
            if self.llm_record.is_some() {
                return Err(
                    "--llm-record needs --llm-provider: recording asks a live model".into(),
                );
            }
            return Ok(None);
        }
        let settings = ProviderSettings {
            provider: self.llm_provider.map(|p| match p {
                ProviderArg::Ollama => ProviderKind::Ollama,
                ProviderArg::Openai => ProviderKind::OpenAiCompatible,
            }),
            base_url: self.llm_base_url.clone(),
            model: self.llm_model.clone(),
            api_key: None,
        };
        let config = ProviderConfig::resolve(&settings, &|name| std::env::var(name).ok())
            .map_err(|error| error.to_string())?;
        let mode = match (&self.llm_record, &self.llm_replay) {
            (_, Some(dir)) => {
                if !dir.is_dir() {
                    return Err(format!(
                        "--llm-replay {}: no such directory of recorded LLM exchanges",
                        dir.display()
                    ));
                }
                CallMode::Replay(Arc::new(DirStore::new(dir)))
            }
            (Some(dir), None) => {
                std::fs::create_dir_all(dir)
                    .map_err(|error| format!("cannot create {}: {error}", dir.display()))?;
                CallMode::Record(Arc::new(DirStore::new(dir)))
            }
            (None, None) => CallMode::Live,
        };
        let options = ClientOptions {
            timeout: Duration::from_millis(self.llm_timeout_ms.max(1)),
            ..ClientOptions::default()
        };
        Ok(Some(LlmClient::http(config, options, mode)))
    }
}

/// A host for one game over a clone of `client` (fresh per-game budget).
pub fn host(client: &Option<LlmClient>) -> Option<ClientHost> {
    client
        .as_ref()
        .map(|client| ClientHost::new(client.clone()))
}
