//! The LLM client: configuration, transport, retries, budget, record/replay and accounting.

use std::collections::HashMap;
use std::fmt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::thread;
use std::time::{Duration, Instant};

use serde::Serialize;

use super::config::{ProviderConfig, ProviderKind};
use super::failure::{LlmFailure, LlmOutcome, OutcomeKind};
use super::request::{
    Decoding, LlmRequest, SchemaMode, canonical_request, request_hash, request_hash_v1,
};
use super::shape::{excerpt, extract_json};
use super::store::{CallStore, Exchange, RecordKey, STORE_FORMAT, StoredCall};
use super::transport::{
    CallContext, ChatTransport, HttpPost, HttpReply, TransportError, UreqTransport,
};
use super::wire::{parse_models, parse_response, request_body};

/// How often and how patiently to retry transport failures, timeouts and rate limits.
///
/// Other HTTP statuses, malformed replies and schema violations are never retried here: the
/// server answered, and asking again would change the experiment rather than recover a lost
/// message. (A harness may ask again with feedback: that is its `retry`, a new request.)
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct RetryPolicy {
    /// Attempts in total, including the first; `0` is treated as `1`.
    pub max_attempts: u32,
    /// The pause before the second attempt; each later pause doubles.
    pub initial_backoff: Duration,
    /// The longest pause.
    pub max_backoff: Duration,
    /// The longest `Retry-After` of a 429 or 503 that is waited for; a server asking for a
    /// longer pause ends the call with its status.
    pub max_retry_after: Duration,
}

impl Default for RetryPolicy {
    /// Three attempts, pausing 250 ms and then 500 ms; a rate limit is waited out for up to 30 s.
    fn default() -> Self {
        RetryPolicy {
            max_attempts: 3,
            initial_backoff: Duration::from_millis(250),
            max_backoff: Duration::from_secs(4),
            max_retry_after: Duration::from_secs(30),
        }
    }
}

impl RetryPolicy {
    /// No retries: one attempt only.
    pub fn none() -> Self {
        RetryPolicy {
            max_attempts: 1,
            ..RetryPolicy::default()
        }
    }

    /// The pause before attempt `attempt` (counted from 1); zero before the first.
    ///
    /// There is no jitter: one experiment talks to one server, so there is no herd to spread,
    /// and a fixed schedule keeps timings explainable.
    pub fn backoff_before(&self, attempt: u32) -> Duration {
        if attempt <= 1 {
            return Duration::ZERO;
        }
        let doublings = (attempt - 2).min(20);
        self.initial_backoff
            .saturating_mul(1 << doublings)
            .min(self.max_backoff)
    }
}

/// The largest request body sent by default, in bytes: far more than any model's context
/// window holds as text, far less than a runaway prompt can grow to.
pub const DEFAULT_MAX_REQUEST_BYTES: usize = 1024 * 1024;

/// Bounds and settings for every call.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ClientOptions {
    /// The bound on one attempt, from connecting to reading the last byte of the reply.
    pub timeout: Duration,
    /// Retries for transport failures, timeouts and rate limits.
    pub retry: RetryPolicy,
    /// The most calls per game; `None` is unlimited. Calls that fail still count.
    pub budget_per_game: Option<u32>,
    /// The decoding settings sent with every request, part of every request hash.
    pub decoding: Decoding,
    /// The largest request body sent; a larger one fails as
    /// [`LlmFailure::RequestTooLarge`] without being sent or recorded.
    pub max_request_bytes: usize,
}

impl Default for ClientOptions {
    /// A 120 s timeout (a local model on a CPU is slow), default retries, the reference's
    /// budget of 999 calls per game, the provider's default decoding with the reply's schema,
    /// and requests of at most 1 MiB.
    fn default() -> Self {
        ClientOptions {
            timeout: Duration::from_secs(120),
            retry: RetryPolicy::default(),
            budget_per_game: Some(999),
            decoding: Decoding::default(),
            max_request_bytes: DEFAULT_MAX_REQUEST_BYTES,
        }
    }
}

/// Where answers come from.
#[derive(Clone)]
pub enum CallMode {
    /// Ask the server.
    Live,
    /// Ask the server and store every exchange (`--llm-record DIR`).
    Record(Arc<dyn CallStore>),
    /// Answer from the store only; a missing entry is [`LlmFailure::ReplayMissing`]
    /// (`--llm-replay DIR`).
    Replay(Arc<dyn CallStore>),
}

impl CallMode {
    /// `live`, `record` or `replay`.
    pub fn name(&self) -> &'static str {
        match self {
            CallMode::Live => "live",
            CallMode::Record(_) => "record",
            CallMode::Replay(_) => "replay",
        }
    }
}

impl fmt::Debug for CallMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Where a call's answer came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CallSource {
    /// The server.
    Live,
    /// The record/replay store (in record mode: the answer another game of the same run
    /// recorded for the same key).
    Replay,
    /// Nowhere: the budget was spent, the request was too large, or the store failed, before
    /// anything was asked.
    NotSent,
}

/// The accounting event of one call.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LlmCallRecord {
    /// The provider.
    pub provider: ProviderKind,
    /// The model asked.
    pub model: String,
    /// Prompt tokens from the provider's usage report, when it gave one.
    pub prompt_tokens: Option<u64>,
    /// Completion tokens from the provider's usage report, when it gave one.
    pub completion_tokens: Option<u64>,
    /// Wall time of the live exchange including retries and pauses; in replay, the recorded
    /// latency, so a replayed trace matches the recorded one.
    pub latency_ms: u64,
    /// HTTP attempts made (recorded attempts in replay; 0 when nothing was sent).
    pub attempts: u32,
    /// The outcome's kind.
    pub outcome: OutcomeKind,
    /// The request hash.
    pub request_hash: String,
    /// The replicate the call belongs to: the episode's seed.
    pub replicate: u64,
    /// How many times the episode had made this request, counting this call (from 1).
    pub occurrence: u32,
    /// Where the answer came from.
    pub source: CallSource,
    /// Whether the server refused the reply's JSON Schema and the call went out in JSON mode.
    pub schema_fallback: bool,
    /// Whether the harness applied its fallback. The client sets `false`; the runtime sets it
    /// once the harness has handled the outcome, so the record is the whole call event.
    pub fallback_applied: bool,
}

/// What [`LlmClient::call`] returns: the outcome the harness handles, and the event to log.
#[derive(Debug, Clone, PartialEq)]
pub struct LlmCall {
    /// A validated reply or a typed failure.
    pub outcome: LlmOutcome,
    /// The model's text, when a reply arrived: what a retry quotes back to the model.
    pub content: Option<String>,
    /// The accounting event.
    pub record: LlmCallRecord,
}

/// What the probe before a run found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ProbeReport {
    /// The server answered and lists the configured model.
    ModelListed,
    /// The server answered but does not list models (or lists none); the model is unchecked.
    Reachable,
    /// Nothing to probe: the simulated model.
    NothingToProbe,
}

/// Why the probe before a run says the run cannot work. Messages say what to set.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ProbeError {
    /// No answer from the server.
    Unreachable {
        /// The URL probed, with query values redacted.
        url: String,
        /// What the HTTP client said (scrubbed).
        message: String,
    },
    /// The server refused the key.
    KeyRefused {
        /// 401 or 403.
        status: u16,
    },
    /// The server lists its models and the configured one is not among them.
    UnknownModel {
        /// The configured model.
        model: String,
        /// Some of the models the server has.
        available: Vec<String>,
    },
}

impl fmt::Display for ProbeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ProbeError::Unreachable { url, message } => write!(
                f,
                "the LLM server at {url} did not answer ({message}); start it, or point \
                 --llm-base-url (or OLLAMA_BASE_URL / OPENAI_BASE_URL) at where it runs"
            ),
            ProbeError::KeyRefused { status } => write!(
                f,
                "the LLM server refused the API key (HTTP {status}); set OPENAI_API_KEY to a \
                 key it accepts"
            ),
            ProbeError::UnknownModel { model, available } => write!(
                f,
                "the LLM server has no model {model:?}; pass --llm-model with one it has ({})",
                if available.is_empty() {
                    "it lists none".to_owned()
                } else {
                    available.join(", ")
                }
            ),
        }
    }
}

impl std::error::Error for ProbeError {}

/// State shared by every clone of a client: what the whole run has learnt.
#[derive(Default)]
struct Shared {
    /// The server refused a JSON Schema once; later calls go out in JSON mode directly.
    schema_refused: AtomicBool,
    /// In record mode, the answer of each key recorded by this run. The first game to make a
    /// request asks the model; another game making the same request in the same replicate and
    /// occurrence (a concurrent stack, say) gets that answer, so replaying the directory
    /// reproduces every game, not only the last writer's.
    recorded: Mutex<HashMap<String, Arc<RecordedCell>>>,
}

/// The answer recorded for one key, set once by the first game to ask: the stored call, or why
/// it could not be stored.
type RecordedCell = OnceLock<Result<StoredCall, String>>;

/// Makes LLM calls for one game at a time.
///
/// Cloning is cheap (the transport, the store and what the run has learnt are shared), so a
/// parallel executor clones one client per worker and calls [`LlmClient::start_game`] before
/// each game.
#[derive(Clone)]
pub struct LlmClient {
    config: ProviderConfig,
    transport: Arc<dyn ChatTransport>,
    options: ClientOptions,
    mode: CallMode,
    shared: Arc<Shared>,
    calls_this_game: u32,
    replicate: u64,
    occurrences: HashMap<String, u32>,
}

impl fmt::Debug for LlmClient {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LlmClient")
            .field("config", &self.config)
            .field("options", &self.options)
            .field("mode", &self.mode)
            .field("calls_this_game", &self.calls_this_game)
            .field("replicate", &self.replicate)
            .finish_non_exhaustive()
    }
}

/// What a live or replayed exchange produced, before interpretation.
struct Answer {
    exchange: Exchange,
    latency_ms: u64,
    attempts: u32,
    source: CallSource,
    schema_fallback: bool,
}

impl Answer {
    fn from_stored(stored: &StoredCall, source: CallSource) -> Self {
        Answer {
            exchange: stored.exchange.clone(),
            latency_ms: stored.latency_ms,
            attempts: stored.attempts,
            source,
            schema_fallback: stored.schema_fallback,
        }
    }
}

impl LlmClient {
    /// A client over any transport.
    pub fn new(
        config: ProviderConfig,
        transport: Arc<dyn ChatTransport>,
        options: ClientOptions,
        mode: CallMode,
    ) -> Self {
        LlmClient {
            config,
            transport,
            options,
            mode,
            shared: Arc::default(),
            calls_this_game: 0,
            replicate: 0,
            occurrences: HashMap::new(),
        }
    }

    /// A client over the real HTTP transport.
    pub fn http(config: ProviderConfig, options: ClientOptions, mode: CallMode) -> Self {
        Self::new(config, Arc::new(UreqTransport::new()), options, mode)
    }

    /// The provider configuration (its key prints redacted).
    pub fn config(&self) -> &ProviderConfig {
        &self.config
    }

    /// The bounds in force.
    pub fn options(&self) -> &ClientOptions {
        &self.options
    }

    /// Starts a game of replicate `replicate` (the episode's seed): resets the per-game call
    /// counter and the occurrence counts.
    pub fn start_game(&mut self, replicate: u64) {
        self.calls_this_game = 0;
        self.replicate = replicate;
        self.occurrences.clear();
    }

    /// Calls made in the current game, including failed ones.
    pub fn calls_this_game(&self) -> u32 {
        self.calls_this_game
    }

    /// True once the server has refused a JSON Schema and calls go out in JSON mode.
    pub fn schema_refused(&self) -> bool {
        self.shared.schema_refused.load(Ordering::Relaxed)
    }

    /// The request hash of `request` with this client's provider and decoding settings.
    pub fn request_hash(&self, request: &LlmRequest) -> String {
        request_hash(
            self.config.kind,
            self.model_for(request),
            &self.options.decoding,
            request,
        )
    }

    /// Asks the server for its models before a run, so a wrong URL, key or model is reported
    /// before the first game rather than as a failure of every call.
    pub fn probe(&self) -> Result<ProbeReport, ProbeError> {
        if self.config.kind == ProviderKind::Sim {
            return Ok(ProbeReport::NothingToProbe);
        }
        let url = self.config.models_url();
        let timeout = self.options.timeout.min(Duration::from_secs(10));
        let reply = match self
            .transport
            .get(&url, self.config.api_key.as_ref(), timeout)
        {
            Ok(reply) => reply,
            Err(error) => {
                let message = match error {
                    TransportError::Timeout => format!("no answer within {} ms", millis(timeout)),
                    TransportError::Failed { message, .. } => self.scrub(&message),
                };
                return Err(ProbeError::Unreachable {
                    url: super::config::redact_url(&url),
                    message,
                });
            }
        };
        match reply.status {
            401 | 403 => Err(ProbeError::KeyRefused {
                status: reply.status,
            }),
            200..=299 => match parse_models(self.config.kind, &reply.body) {
                Some(models) if !models.is_empty() => {
                    let model = &self.config.model;
                    let listed = models
                        .iter()
                        .any(|m| m == model || m.strip_suffix(":latest") == Some(model));
                    if listed {
                        Ok(ProbeReport::ModelListed)
                    } else {
                        Err(ProbeError::UnknownModel {
                            model: model.clone(),
                            available: models.into_iter().take(12).collect(),
                        })
                    }
                }
                _ => Ok(ProbeReport::Reachable),
            },
            _ => Ok(ProbeReport::Reachable),
        }
    }

    /// Makes one call: checks the size and the budget, asks the server or the store, parses,
    /// validates.
    ///
    /// Never panics and never blocks longer than the retry policy allows: at most
    /// `max_attempts` attempts of at most `timeout` each, plus the pauses between them.
    pub fn call(&mut self, request: &LlmRequest) -> LlmCall {
        let model = self.model_for(request).to_owned();
        let decoding = &self.options.decoding;
        let hash = request_hash(self.config.kind, &model, decoding, request);
        let occurrence = {
            let count = self.occurrences.entry(hash.clone()).or_insert(0);
            *count += 1;
            *count
        };
        let key = RecordKey {
            hash: hash.clone(),
            replicate: self.replicate,
            occurrence,
            first_format_hash: request_hash_v1(self.config.kind, &model, decoding, request),
        };
        let mut record = LlmCallRecord {
            provider: self.config.kind,
            model,
            prompt_tokens: None,
            completion_tokens: None,
            latency_ms: 0,
            attempts: 0,
            outcome: OutcomeKind::Ok,
            request_hash: hash,
            replicate: self.replicate,
            occurrence,
            source: CallSource::NotSent,
            schema_fallback: false,
            fallback_applied: false,
        };

        // The size is checked on the body as configured, in every mode, so a replay fails the
        // same calls as the recording did.
        let body_len = self.body(&record.model, decoding.schema, request).len();
        if body_len > self.options.max_request_bytes {
            return finish(
                record,
                None,
                Err(LlmFailure::RequestTooLarge {
                    bytes: body_len,
                    limit: self.options.max_request_bytes,
                }),
            );
        }
        if let Some(budget) = self.options.budget_per_game
            && self.calls_this_game >= budget
        {
            return finish(record, None, Err(LlmFailure::BudgetExhausted { budget }));
        }
        self.calls_this_game += 1;

        let answer = match &self.mode {
            CallMode::Replay(store) => match store.load(&key) {
                Ok(Some(stored)) => Answer::from_stored(&stored, CallSource::Replay),
                Ok(None) => {
                    let key = key.to_string();
                    return finish(record, None, Err(LlmFailure::ReplayMissing { key }));
                }
                Err(error) => return finish(record, None, Err(self.store_failure(&error))),
            },
            CallMode::Live => self.live(&record.model, request, &key),
            CallMode::Record(store) => {
                match self.record(store.as_ref(), &record.model, request, &key) {
                    Ok(answer) => answer,
                    Err((message, answer)) => {
                        // A recording with holes cannot be replayed, so a failed write is
                        // reported instead of the reply, and the runtime can stop the
                        // experiment.
                        if let Some(answer) = answer {
                            record.latency_ms = answer.latency_ms;
                            record.attempts = answer.attempts;
                            record.source = answer.source;
                        }
                        return finish(record, None, Err(LlmFailure::Store { message }));
                    }
                }
            }
        };

        record.latency_ms = answer.latency_ms;
        record.attempts = answer.attempts;
        record.source = answer.source;
        record.schema_fallback = answer.schema_fallback;
        let (content, outcome) = self.interpret(&answer.exchange, request, &mut record);
        finish(record, content, outcome)
    }

    fn model_for<'a>(&'a self, request: &'a LlmRequest) -> &'a str {
        request
            .model
            .as_deref()
            .filter(|model| !model.trim().is_empty())
            .unwrap_or(&self.config.model)
    }

    fn body(&self, model: &str, schema: SchemaMode, request: &LlmRequest) -> String {
        request_body(
            self.config.kind,
            model,
            &self.options.decoding,
            schema,
            request,
        )
        .to_string()
    }

    /// Asks the server once for `key` in this run and stores the exchange; a second game
    /// asking for the same key gets the stored answer. The error carries the live answer when
    /// there was one.
    fn record(
        &self,
        store: &dyn CallStore,
        model: &str,
        request: &LlmRequest,
        key: &RecordKey,
    ) -> Result<Answer, (String, Option<Answer>)> {
        let cell = {
            let mut recorded = match self.shared.recorded.lock() {
                Ok(recorded) => recorded,
                Err(poisoned) => poisoned.into_inner(),
            };
            Arc::clone(recorded.entry(key.to_string()).or_default())
        };
        let mut fresh = None;
        let stored = cell.get_or_init(|| {
            let answer = self.live(model, request, key);
            let stored = StoredCall {
                format: STORE_FORMAT,
                key: key.hash.clone(),
                replicate: Some(key.replicate),
                occurrence: Some(key.occurrence),
                request: canonical_request(
                    self.config.kind,
                    model,
                    &self.options.decoding,
                    request,
                ),
                exchange: answer.exchange.clone(),
                latency_ms: answer.latency_ms,
                attempts: answer.attempts,
                schema_fallback: answer.schema_fallback,
            };
            let saved = store
                .save(&stored)
                .map(|()| stored)
                .map_err(|error| self.scrub(&error.to_string()));
            fresh = Some(answer);
            saved
        });
        match (stored, fresh) {
            (Ok(_), Some(answer)) => Ok(answer),
            (Ok(stored), None) => Ok(Answer::from_stored(stored, CallSource::Replay)),
            (Err(message), answer) => Err((message.clone(), answer)),
        }
    }

    /// Asks the server, retrying transport failures, timeouts and rate limits with backoff,
    /// and resending in JSON mode once if the server refuses the reply's schema.
    fn live(&self, model: &str, request: &LlmRequest, key: &RecordKey) -> Answer {
        let mut schema = self.options.decoding.schema;
        if self.schema_refused() {
            schema = SchemaMode::Json;
        }
        let mut schema_fallback = false;
        let url = self.config.endpoint();
        let max_attempts = self.options.retry.max_attempts.max(1);
        let started = Instant::now();
        let mut attempts = 0;
        let mut failures = 0;
        let mut simulated = None;
        let exchange = loop {
            attempts += 1;
            let body = self.body(model, schema, request);
            let post = HttpPost {
                url: &url,
                api_key: self.config.api_key.as_ref(),
                body: &body,
                timeout: self.options.timeout,
                context: CallContext {
                    request,
                    replicate: key.replicate,
                    occurrence: key.occurrence,
                    hash: &key.hash,
                },
            };
            let (failure, retryable, pause) = match self.transport.post(&post) {
                Ok(reply) => {
                    simulated = reply.simulated_latency_ms;
                    if request.json_mode
                        && schema == SchemaMode::Strict
                        && matches!(reply.status, 400 | 422)
                    {
                        // Servers that cannot decode to a schema say so with a 400 or 422;
                        // the same request in JSON mode tells whether that was the reason.
                        schema = SchemaMode::Json;
                        schema_fallback = true;
                        continue;
                    }
                    if schema_fallback && (200..300).contains(&reply.status) {
                        self.shared.schema_refused.store(true, Ordering::Relaxed);
                    }
                    match self.rate_limited(&reply, failures + 1, max_attempts) {
                        Some(pause) => (None, true, Some(pause)),
                        None => {
                            break Exchange::Reply {
                                status: reply.status,
                                body: self.scrub(&reply.body),
                            };
                        }
                    }
                }
                Err(TransportError::Timeout) => (
                    Some(LlmFailure::Timeout {
                        after_ms: millis(self.options.timeout),
                    }),
                    true,
                    None,
                ),
                Err(TransportError::Failed { message, retryable }) => (
                    Some(LlmFailure::Transport {
                        message: self.scrub(&message),
                    }),
                    retryable,
                    None,
                ),
            };
            failures += 1;
            if let Some(failure) = failure
                && (!retryable || failures >= max_attempts)
            {
                break Exchange::Failed { failure };
            }
            let pause = pause.unwrap_or_else(|| self.options.retry.backoff_before(failures + 1));
            thread::sleep(pause);
        };
        Answer {
            exchange,
            latency_ms: simulated.unwrap_or_else(|| millis(started.elapsed())),
            attempts,
            source: CallSource::Live,
            schema_fallback,
        }
    }

    /// The pause before asking again when `reply` is a rate limit (429, or 503 with
    /// `Retry-After`) that the retry budget covers; `None` when the reply stands.
    fn rate_limited(
        &self,
        reply: &HttpReply,
        failures: u32,
        max_attempts: u32,
    ) -> Option<Duration> {
        let limited = reply.status == 429 || (reply.status == 503 && reply.retry_after.is_some());
        if !limited || failures >= max_attempts {
            return None;
        }
        let pause = reply
            .retry_after
            .unwrap_or_else(|| self.options.retry.backoff_before(failures + 1));
        (pause <= self.options.retry.max_retry_after).then_some(pause)
    }

    /// Turns an exchange into the model's text and an outcome, filling in the token counts.
    fn interpret(
        &self,
        exchange: &Exchange,
        request: &LlmRequest,
        record: &mut LlmCallRecord,
    ) -> (Option<String>, LlmOutcome) {
        let (status, body) = match exchange {
            Exchange::Failed { failure } => return (None, Err(failure.clone())),
            Exchange::Reply { status, body } => (*status, body),
        };
        if !(200..300).contains(&status) {
            return (
                None,
                Err(LlmFailure::HttpStatus {
                    code: status,
                    body_excerpt: excerpt(&self.scrub(body)),
                }),
            );
        }
        let reply = match parse_response(self.config.kind, body) {
            Ok(reply) => reply,
            Err(failure) => return (None, Err(failure)),
        };
        record.prompt_tokens = reply.prompt_tokens;
        record.completion_tokens = reply.completion_tokens;
        let outcome = extract_json(&reply.content).and_then(|value| request.shape.validate(&value));
        (Some(reply.content), outcome)
    }

    fn store_failure(&self, error: &std::io::Error) -> LlmFailure {
        LlmFailure::Store {
            message: self.scrub(&error.to_string()),
        }
    }

    /// Removes the API key, in any encoding, from text that came from the server or the HTTP
    /// client.
    fn scrub(&self, text: &str) -> String {
        match &self.config.api_key {
            Some(key) => key.scrub(text),
            None => text.to_owned(),
        }
    }
}

fn finish(mut record: LlmCallRecord, content: Option<String>, outcome: LlmOutcome) -> LlmCall {
    record.outcome = OutcomeKind::of(&outcome);
    LlmCall {
        outcome,
        content,
        record,
    }
}

fn millis(duration: Duration) -> u64 {
    u64::try_from(duration.as_millis()).unwrap_or(u64::MAX)
}
