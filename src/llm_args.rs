//! The `--llm-*` flags of `run` and `ablate`, the LLM client they configure, and the effective
//! settings a result folder records.
//!
//! Without `--llm-provider` or `--llm-replay` there is no client: every LLM call of the harness
//! fails with `NotConfigured` and takes its fallback, and nothing touches the network. The API key
//! comes only from `OPENAI_API_KEY` and is never printed or written.
//!
//! [`LlmArgs::setup`] does everything that can fail before the first game: it parses the flags,
//! resolves the provider, reads and checks a persona, opens the record or replay directory and
//! probes the server. An engine then asks the [`LlmSetup`] for one host per game with
//! [`LlmSetup::host`], passing the game's seed as its replicate.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use clap::{Args, ValueEnum};
use harness_compiler::ir::Program;
use harness_stdlib::llm::{
    CallMode, ClientHost, ClientOptions, DEFAULT_MAX_REQUEST_BYTES, Decoding, DirStore, LlmClient,
    Persona, ProviderConfig, ProviderKind, ProviderSettings, RetryPolicy, STORE_FORMAT, SchemaMode,
    SimTransport, StoreManifest, reply_shape,
};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// The LLM providers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum ProviderArg {
    /// A local or remote Ollama server (`OLLAMA_BASE_URL`, default http://localhost:11434).
    Ollama,
    /// An OpenAI-compatible endpoint (`OPENAI_BASE_URL`, key in `OPENAI_API_KEY`).
    Openai,
    /// The simulated model of a persona file (`--llm-sim`): offline, a test instrument.
    Sim,
}

impl ProviderArg {
    fn kind(self) -> ProviderKind {
        match self {
            ProviderArg::Ollama => ProviderKind::Ollama,
            ProviderArg::Openai => ProviderKind::OpenAiCompatible,
            ProviderArg::Sim => ProviderKind::Sim,
        }
    }
}

/// How JSON output is requested.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, ValueEnum)]
pub enum SchemaArg {
    /// The reply's JSON Schema (OpenAI `json_schema`, Ollama `format: <schema>`), falling back
    /// to JSON mode if the server refuses it.
    #[default]
    Strict,
    /// Any JSON object (OpenAI `json_object`, Ollama `format: "json"`).
    Json,
}

/// Where the harness's LLM calls go.
#[derive(Args, Clone, Debug, Default)]
pub struct LlmArgs {
    /// The LLM provider for the harness's `llm` effects; without it (and without
    /// --llm-replay) every LLM call fails with `NotConfigured` and takes its fallback.
    #[arg(long, value_enum)]
    pub llm_provider: Option<ProviderArg>,
    /// The persona file of the simulated model (`--llm-provider sim`), for example
    /// harnesses/personas/steady.toml.
    #[arg(long, value_name = "PERSONA.toml")]
    pub llm_sim: Option<PathBuf>,
    /// The provider's base URL (default: `OLLAMA_BASE_URL` or `OPENAI_BASE_URL`, else the
    /// provider's default).
    #[arg(long)]
    pub llm_base_url: Option<String>,
    /// The model (default: `OLLAMA_MODEL` or `OPENAI_MODEL`, else `gemma4:e4b` for Ollama).
    #[arg(long)]
    pub llm_model: Option<String>,
    /// The sampling temperature, in [0, 2]; the provider's default when absent. The simulated
    /// model assumes 1 and is noise-free at 0.
    #[arg(long)]
    pub llm_temperature: Option<f64>,
    /// Nucleus sampling's probability mass, in (0, 1].
    #[arg(long)]
    pub llm_top_p: Option<f64>,
    /// The provider's sampling seed.
    #[arg(long)]
    pub llm_seed: Option<u64>,
    /// The most tokens of a reply.
    #[arg(long)]
    pub llm_max_tokens: Option<u32>,
    /// A JSON object merged into every request body: provider options such as OpenRouter's
    /// `{"provider":{"order":["x"],"allow_fallbacks":false}}`.
    #[arg(long, value_name = "JSON")]
    pub llm_extra_body: Option<String>,
    /// How JSON output is requested.
    #[arg(long, value_enum, default_value_t = SchemaArg::Strict)]
    pub llm_schema: SchemaArg,
    /// The bound on one HTTP attempt, in milliseconds.
    #[arg(long, default_value_t = 120_000)]
    pub llm_timeout_ms: u64,
    /// The largest request body sent, in bytes; a larger prompt fails as `RequestTooLarge`.
    #[arg(long, default_value_t = DEFAULT_MAX_REQUEST_BYTES)]
    pub llm_max_request_bytes: usize,
    /// Store every exchange in this directory, for a later --llm-replay.
    #[arg(long, conflicts_with = "llm_replay")]
    pub llm_record: Option<PathBuf>,
    /// Answer every call from this directory of recorded exchanges, offline; a call that was
    /// not recorded fails with `ReplayMissing`. A directory recorded by this version names its
    /// provider, model and decoding settings, so no other flag is needed.
    #[arg(long)]
    pub llm_replay: Option<PathBuf>,
}

/// The persona of a simulated model, as a manifest records it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SimPersona {
    /// The persona file as given on the command line.
    pub path: PathBuf,
    /// The SHA-256 of its text.
    pub sha256: String,
    /// The persona's name.
    pub name: String,
}

/// The effective LLM settings of a run: everything that decides what the model is asked and
/// where answers come from, with no secret in it. A result folder stores it to refuse resuming
/// a run under different settings.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LlmSettings {
    /// `ollama`, `openai` or `sim`.
    pub provider: ProviderKind,
    /// The model.
    pub model: String,
    /// The base URL, without credentials and with query values redacted; `None` for the
    /// simulated model.
    pub base_url: Option<String>,
    /// The decoding settings (temperature, top-p, seed, max tokens, extra body, schema mode).
    pub decoding: Decoding,
    /// The persona of the simulated model.
    pub sim: Option<SimPersona>,
    /// `--llm-record`.
    pub record: Option<PathBuf>,
    /// `--llm-replay`.
    pub replay: Option<PathBuf>,
    /// `--llm-timeout-ms`.
    pub timeout_ms: u64,
    /// `--llm-max-request-bytes`.
    pub max_request_bytes: usize,
    /// The most calls per game.
    pub budget_per_game: Option<u32>,
}

/// A configured LLM: the client every game's host is cloned from, and what to record about it.
#[derive(Debug)]
pub struct LlmSetup {
    client: LlmClient,
    settings: LlmSettings,
    warnings: Vec<String>,
}

impl LlmSetup {
    /// A host for one game of replicate `replicate` (the game's seed), with a fresh per-game
    /// budget and occurrence counts.
    pub fn host(&self, replicate: u64) -> ClientHost {
        ClientHost::new(self.client.clone(), replicate)
    }

    /// A client of its own, for calls outside any game.
    pub fn client(&self) -> LlmClient {
        self.client.clone()
    }

    /// The effective settings, for the run's manifest.
    pub fn settings(&self) -> &LlmSettings {
        &self.settings
    }

    /// What the user should hear before the run: a key over plain http, a harness without
    /// `llm` items.
    pub fn warnings(&self) -> &[String] {
        &self.warnings
    }

    /// What the user should hear after the run.
    pub fn notes(&self) -> Vec<String> {
        let mut notes = Vec::new();
        if self.client.schema_refused() {
            notes.push(
                "the LLM server refused the reply's JSON Schema; calls after the first went out \
                 in JSON mode (pass --llm-schema json to skip the attempt)"
                    .to_owned(),
            );
        }
        notes
    }
}

/// A host for one game of replicate `replicate`, or none when no LLM is configured.
pub fn host(setup: &Option<LlmSetup>, replicate: u64) -> Option<ClientHost> {
    setup.as_ref().map(|setup| setup.host(replicate))
}

impl LlmArgs {
    /// Everything that can go wrong with the LLM settings, checked before the first game: the
    /// client, or `None` when no LLM is configured. `program` is the harness the games run, whose
    /// `llm` items a persona must cover.
    pub fn setup(&self, program: &Program) -> Result<Option<LlmSetup>, String> {
        let items: Vec<(String, harness_stdlib::llm::ReplyShape)> = program
            .llms
            .iter()
            .map(|def| (def.name.clone(), reply_shape(&def.shape)))
            .collect();
        let mut warnings = Vec::new();
        if items.is_empty() && (self.llm_provider.is_some() || self.llm_replay.is_some()) {
            warnings.push(format!(
                "`{}` declares no `llm` item, so the LLM flags change nothing",
                program.module
            ));
        }
        self.setup_for(&items, warnings)
    }

    /// The client for calls named `items` (what a persona must cover), with `warnings` to
    /// pass on: [`LlmArgs::setup`] without a harness, for calls the toolchain itself makes.
    pub fn setup_for(
        &self,
        items: &[(String, harness_stdlib::llm::ReplyShape)],
        warnings: Vec<String>,
    ) -> Result<Option<LlmSetup>, String> {
        if self.llm_provider.is_none() && self.llm_replay.is_none() {
            self.refuse_without_provider()?;
            return Ok(None);
        }
        let decoding = self.decoding()?;
        let options = ClientOptions {
            timeout: Duration::from_millis(self.llm_timeout_ms.max(1)),
            retry: RetryPolicy::default(),
            budget_per_game: ClientOptions::default().budget_per_game,
            decoding,
            max_request_bytes: self.llm_max_request_bytes,
        };
        match &self.llm_replay {
            Some(dir) => self.replay(dir, options, warnings),
            None => self.live(items, options, warnings),
        }
    }

    fn refuse_without_provider(&self) -> Result<(), String> {
        let needs = |flag: &str| format!("{flag} needs --llm-provider (or --llm-replay)");
        if self.llm_record.is_some() {
            return Err("--llm-record needs --llm-provider: recording asks a live model".into());
        }
        let given = [
            ("--llm-sim", self.llm_sim.is_some()),
            ("--llm-base-url", self.llm_base_url.is_some()),
            ("--llm-model", self.llm_model.is_some()),
            ("--llm-temperature", self.llm_temperature.is_some()),
            ("--llm-top-p", self.llm_top_p.is_some()),
            ("--llm-seed", self.llm_seed.is_some()),
            ("--llm-max-tokens", self.llm_max_tokens.is_some()),
            ("--llm-extra-body", self.llm_extra_body.is_some()),
        ];
        match given.iter().find(|(_, set)| *set) {
            Some((flag, _)) => Err(needs(flag)),
            None => Ok(()),
        }
    }

    /// The decoding flags, checked.
    fn decoding(&self) -> Result<Decoding, String> {
        if let Some(t) = self.llm_temperature
            && !(t.is_finite() && (0.0..=2.0).contains(&t))
        {
            return Err(format!(
                "--llm-temperature {t}: expected a number in [0, 2]"
            ));
        }
        if let Some(p) = self.llm_top_p
            && !(p.is_finite() && p > 0.0 && p <= 1.0)
        {
            return Err(format!("--llm-top-p {p}: expected a number in (0, 1]"));
        }
        if self.llm_max_tokens == Some(0) {
            return Err("--llm-max-tokens 0: a reply needs at least one token".into());
        }
        let extra_body = match &self.llm_extra_body {
            None => None,
            Some(text) => Some(parse_extra_body(text)?),
        };
        Ok(Decoding {
            temperature: self.llm_temperature,
            top_p: self.llm_top_p,
            seed: self.llm_seed,
            max_tokens: self.llm_max_tokens,
            extra_body,
            schema: match self.llm_schema {
                SchemaArg::Strict => SchemaMode::Strict,
                SchemaArg::Json => SchemaMode::Json,
            },
        })
    }

    /// Live or recording: a provider, a persona for the simulated model, the probe.
    fn live(
        &self,
        items: &[(String, harness_stdlib::llm::ReplyShape)],
        options: ClientOptions,
        mut warnings: Vec<String>,
    ) -> Result<Option<LlmSetup>, String> {
        let Some(provider) = self.llm_provider else {
            return Err("--llm-record needs --llm-provider: recording asks a live model".into());
        };
        let kind = provider.kind();
        let persona = match (kind, &self.llm_sim) {
            (ProviderKind::Sim, Some(path)) => Some((path.clone(), read_persona(path, items)?)),
            (ProviderKind::Sim, None) => {
                return Err(
                    "--llm-provider sim needs --llm-sim PERSONA.toml (see harnesses/personas/)"
                        .into(),
                );
            }
            (_, Some(_)) => return Err("--llm-sim needs --llm-provider sim".into()),
            (_, None) => None,
        };
        if kind == ProviderKind::Sim && self.llm_model.is_some() {
            return Err("the simulated model is named by its persona: drop --llm-model".into());
        }
        let settings = ProviderSettings {
            provider: Some(kind),
            base_url: self.llm_base_url.clone(),
            model: match &persona {
                Some((_, persona)) => Some(persona.name.clone()),
                None => self.llm_model.clone(),
            },
            api_key: None,
        };
        let config = ProviderConfig::resolve(&settings, &|name| std::env::var(name).ok())
            .map_err(|error| error.to_string())?;
        config.require_key().map_err(|error| error.to_string())?;
        warnings.extend(config.warnings());
        let mode = match &self.llm_record {
            Some(dir) => {
                let store = DirStore::new(dir);
                store
                    .prepare_for_recording(&StoreManifest {
                        format: STORE_FORMAT,
                        provider: config.kind,
                        model: config.model.clone(),
                        decoding: options.decoding.clone(),
                    })
                    .map_err(|error| format!("--llm-record {}: {error}", dir.display()))?;
                CallMode::Record(Arc::new(store))
            }
            None => CallMode::Live,
        };
        let sim = persona.as_ref().map(|(path, persona)| SimPersona {
            path: path.clone(),
            sha256: persona.digest.clone(),
            name: persona.name.clone(),
        });
        let client = match persona {
            Some((_, persona)) => {
                LlmClient::new(config, Arc::new(SimTransport::new(persona)), options, mode)
            }
            None => LlmClient::http(config, options, mode),
        };
        client.probe().map_err(|error| error.to_string())?;
        let settings = self.settings(&client, sim);
        Ok(Some(LlmSetup {
            client,
            settings,
            warnings,
        }))
    }

    /// Replay: the provider, model and decoding settings come from the directory when it names
    /// them; flags that contradict it are refused, since no recorded key would match.
    fn replay(
        &self,
        dir: &Path,
        mut options: ClientOptions,
        warnings: Vec<String>,
    ) -> Result<Option<LlmSetup>, String> {
        if !dir.is_dir() {
            return Err(format!(
                "--llm-replay {}: no such directory of recorded LLM exchanges",
                dir.display()
            ));
        }
        let store = DirStore::new(dir);
        let manifest = store
            .manifest()
            .map_err(|error| format!("--llm-replay {}: {error}", dir.display()))?;
        let (kind, model) = match &manifest {
            Some(recorded) => {
                let clash = |flag: &str, given: String, recorded: String| {
                    format!(
                        "--llm-replay {}: it was recorded with {flag} {recorded}, not {given}; \
                         drop {flag} (the recording names it) or record again",
                        dir.display()
                    )
                };
                if let Some(p) = self.llm_provider
                    && p.kind() != recorded.provider
                {
                    return Err(clash(
                        "--llm-provider",
                        p.kind().to_string(),
                        recorded.provider.to_string(),
                    ));
                }
                if let Some(m) = &self.llm_model
                    && m != &recorded.model
                {
                    return Err(clash("--llm-model", m.clone(), recorded.model.clone()));
                }
                let given = &options.decoding;
                let flags_given = self.llm_temperature.is_some()
                    || self.llm_top_p.is_some()
                    || self.llm_seed.is_some()
                    || self.llm_max_tokens.is_some()
                    || self.llm_extra_body.is_some();
                if flags_given && given != &recorded.decoding {
                    return Err(format!(
                        "--llm-replay {}: it was recorded with other decoding settings ({}); \
                         drop the decoding flags (the recording names them) or record again",
                        dir.display(),
                        serde_json::to_string(&recorded.decoding).unwrap_or_default()
                    ));
                }
                options.decoding = recorded.decoding.clone();
                (recorded.provider, Some(recorded.model.clone()))
            }
            None => (
                self.llm_provider
                    .map_or(ProviderKind::Ollama, ProviderArg::kind),
                self.llm_model.clone(),
            ),
        };
        let settings = ProviderSettings {
            provider: Some(kind),
            base_url: self.llm_base_url.clone(),
            model,
            api_key: None,
        };
        // Replay sends nothing, so it needs no key and reads none.
        let mut config = ProviderConfig::resolve(&settings, &|name| std::env::var(name).ok())
            .map_err(|error| error.to_string())?;
        config.api_key = None;
        let client = LlmClient::http(config, options, CallMode::Replay(Arc::new(store)));
        let settings = self.settings(&client, None);
        Ok(Some(LlmSetup {
            client,
            settings,
            warnings,
        }))
    }

    fn settings(&self, client: &LlmClient, sim: Option<SimPersona>) -> LlmSettings {
        let config = client.config();
        let options = client.options();
        LlmSettings {
            provider: config.kind,
            model: config.model.clone(),
            base_url: (config.kind != ProviderKind::Sim).then(|| config.display_base_url()),
            decoding: options.decoding.clone(),
            sim,
            record: self.llm_record.clone(),
            replay: self.llm_replay.clone(),
            timeout_ms: self.llm_timeout_ms,
            max_request_bytes: options.max_request_bytes,
            budget_per_game: options.budget_per_game,
        }
    }
}

/// `--llm-extra-body`: a JSON object that does not replace the request itself.
fn parse_extra_body(text: &str) -> Result<Map<String, Value>, String> {
    let value: Value = serde_json::from_str(text)
        .map_err(|error| format!("--llm-extra-body is not JSON: {error}"))?;
    let Value::Object(map) = value else {
        return Err("--llm-extra-body must be a JSON object, such as '{\"provider\":{}}'".into());
    };
    if let Some(key) = Decoding::RESERVED_KEYS
        .iter()
        .find(|key| map.contains_key(**key))
    {
        return Err(format!(
            "--llm-extra-body may not set `{key}`: it is the request itself (use the \
             --llm-* flags for decoding settings)"
        ));
    }
    Ok(map)
}

/// Reads a persona file and checks it against the harness's `llm` items.
fn read_persona(
    path: &Path,
    items: &[(String, harness_stdlib::llm::ReplyShape)],
) -> Result<Persona, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|error| format!("--llm-sim {}: {error}", path.display()))?;
    let persona =
        Persona::parse(&text).map_err(|error| format!("--llm-sim {}: {error}", path.display()))?;
    persona
        .check(items)
        .map_err(|error| format!("--llm-sim {}: {error}", path.display()))?;
    Ok(persona)
}
