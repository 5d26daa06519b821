//! The LLM client: configuration, transport, retries, budget, record/replay and accounting.

use std::fmt;
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use serde::Serialize;

use super::config::{ProviderConfig, ProviderKind};
use super::failure::{LlmFailure, LlmOutcome, OutcomeKind};
use super::request::{LlmRequest, canonical_request, request_hash};
use super::shape::{excerpt, extract_json};
use super::store::{CallStore, Exchange, STORE_FORMAT, StoredCall};
use super::transport::{ChatTransport, HttpPost, TransportError, UreqTransport};
use super::wire::{parse_response, request_body};

/// How often and how patiently to retry transport failures and timeouts.
///
/// HTTP statuses, malformed replies and schema violations are never retried: the server
/// answered, and asking again would change the experiment rather than recover a lost message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct RetryPolicy {
    /// Attempts in total, including the first; `0` is treated as `1`.
    pub max_attempts: u32,
    /// The pause before the second attempt; each later pause doubles.
    pub initial_backoff: Duration,
    /// The longest pause.
    pub max_backoff: Duration,
}

impl Default for RetryPolicy {
    /// Three attempts, pausing 250 ms and then 500 ms.
    fn default() -> Self {
        RetryPolicy {
            max_attempts: 3,
            initial_backoff: Duration::from_millis(250),
            max_backoff: Duration::from_secs(4),
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

/// Bounds on every call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct ClientOptions {
    /// The bound on one attempt, from connecting to reading the last byte of the reply.
    pub timeout: Duration,
    /// Retries for transport failures and timeouts.
    pub retry: RetryPolicy,
    /// The most calls per game; `None` is unlimited. Calls that fail still count.
    pub budget_per_game: Option<u32>,
}

impl Default for ClientOptions {
    /// A 120 s timeout (a local model on a CPU is slow), default retries, and the reference's
    /// budget of 999 calls per game.
    fn default() -> Self {
        ClientOptions {
            timeout: Duration::from_secs(120),
            retry: RetryPolicy::default(),
            budget_per_game: Some(999),
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
    /// The record/replay store.
    Replay,
    /// Nowhere: the budget was spent, or the store failed, before anything was asked.
    NotSent,
}

/// The accounting event of one call.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LlmCallRecord {
    /// The provider's wire protocol.
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
    /// The request hash, which is also the record/replay key.
    pub request_hash: String,
    /// Where the answer came from.
    pub source: CallSource,
    /// Whether the harness applied its fallback. The client sets `false`; the runtime sets it
    /// once the harness has handled the outcome, so the record is the whole call event.
    pub fallback_applied: bool,
}

/// What [`LlmClient::call`] returns: the outcome the harness handles, and the event to log.
#[derive(Debug, Clone, PartialEq)]
pub struct LlmCall {
    /// A validated reply or a typed failure.
    pub outcome: LlmOutcome,
    /// The accounting event.
    pub record: LlmCallRecord,
}

/// Makes LLM calls for one game at a time.
///
/// Cloning is cheap (the transport and store are shared), so a parallel executor clones one
/// client per worker and calls [`LlmClient::start_game`] before each game.
#[derive(Clone)]
pub struct LlmClient {
    config: ProviderConfig,
    transport: Arc<dyn ChatTransport>,
    options: ClientOptions,
    mode: CallMode,
    calls_this_game: u32,
}

impl fmt::Debug for LlmClient {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LlmClient")
            .field("config", &self.config)
            .field("options", &self.options)
            .field("mode", &self.mode)
            .field("calls_this_game", &self.calls_this_game)
            .finish_non_exhaustive()
    }
}

/// What a live or replayed exchange produced, before interpretation.
struct Answer {
    exchange: Exchange,
    latency_ms: u64,
    attempts: u32,
    source: CallSource,
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
            calls_this_game: 0,
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

    /// Resets the per-game call counter; call it before each game.
    pub fn start_game(&mut self) {
        self.calls_this_game = 0;
    }

    /// Calls made in the current game, including failed ones.
    pub fn calls_this_game(&self) -> u32 {
        self.calls_this_game
    }

    /// The record/replay key `request` would have with this client's provider.
    pub fn request_hash(&self, request: &LlmRequest) -> String {
        request_hash(self.config.kind, self.model_for(request), request)
    }

    /// Makes one call: checks the budget, asks the server or the store, parses, validates.
    ///
    /// Never panics and never blocks longer than the retry policy allows: at most
    /// `max_attempts` attempts of at most `timeout` each, plus the pauses between them.
    pub fn call(&mut self, request: &LlmRequest) -> LlmCall {
        let model = self.model_for(request).to_owned();
        let key = request_hash(self.config.kind, &model, request);
        let mut record = LlmCallRecord {
            provider: self.config.kind,
            model,
            prompt_tokens: None,
            completion_tokens: None,
            latency_ms: 0,
            attempts: 0,
            outcome: OutcomeKind::Ok,
            request_hash: key,
            source: CallSource::NotSent,
            fallback_applied: false,
        };

        if let Some(budget) = self.options.budget_per_game
            && self.calls_this_game >= budget
        {
            return finish(record, Err(LlmFailure::BudgetExhausted { budget }));
        }
        self.calls_this_game += 1;

        let answer = match &self.mode {
            CallMode::Replay(store) => match store.load(&record.request_hash) {
                Ok(Some(stored)) => Answer {
                    exchange: stored.exchange,
                    latency_ms: stored.latency_ms,
                    attempts: stored.attempts,
                    source: CallSource::Replay,
                },
                Ok(None) => {
                    let key = record.request_hash.clone();
                    return finish(record, Err(LlmFailure::ReplayMissing { key }));
                }
                Err(error) => return finish(record, Err(self.store_failure(&error))),
            },
            CallMode::Live => self.live(&record.model, request),
            CallMode::Record(store) => {
                let answer = self.live(&record.model, request);
                let stored = StoredCall {
                    format: STORE_FORMAT,
                    key: record.request_hash.clone(),
                    request: canonical_request(self.config.kind, &record.model, request),
                    exchange: answer.exchange.clone(),
                    latency_ms: answer.latency_ms,
                    attempts: answer.attempts,
                };
                if let Err(error) = store.save(&stored) {
                    // A recording with holes cannot be replayed, so a failed write is reported
                    // instead of the reply, and the runtime can stop the experiment.
                    record.latency_ms = answer.latency_ms;
                    record.attempts = answer.attempts;
                    record.source = CallSource::Live;
                    return finish(record, Err(self.store_failure(&error)));
                }
                answer
            }
        };

        record.latency_ms = answer.latency_ms;
        record.attempts = answer.attempts;
        record.source = answer.source;
        let outcome = self.interpret(&answer.exchange, request, &mut record);
        finish(record, outcome)
    }

    fn model_for<'a>(&'a self, request: &'a LlmRequest) -> &'a str {
        request
            .model
            .as_deref()
            .filter(|model| !model.trim().is_empty())
            .unwrap_or(&self.config.model)
    }

    /// Asks the server, retrying transport failures and timeouts with exponential backoff.
    fn live(&self, model: &str, request: &LlmRequest) -> Answer {
        let url = self.config.endpoint();
        let body = request_body(self.config.kind, model, request).to_string();
        let post = HttpPost {
            url: &url,
            api_key: self.config.api_key.as_ref(),
            body: &body,
            timeout: self.options.timeout,
        };
        let max_attempts = self.options.retry.max_attempts.max(1);
        let started = Instant::now();
        let mut attempts = 0;
        let exchange = loop {
            attempts += 1;
            let (failure, retryable) = match self.transport.post(&post) {
                Ok(reply) => {
                    break Exchange::Reply {
                        status: reply.status,
                        body: self.scrub(&reply.body),
                    };
                }
                Err(TransportError::Timeout) => (
                    LlmFailure::Timeout {
                        after_ms: millis(self.options.timeout),
                    },
                    true,
                ),
                Err(TransportError::Failed { message, retryable }) => (
                    LlmFailure::Transport {
                        message: self.scrub(&message),
                    },
                    retryable,
                ),
            };
            if !retryable || attempts >= max_attempts {
                break Exchange::Failed { failure };
            }
            thread::sleep(self.options.retry.backoff_before(attempts + 1));
        };
        Answer {
            exchange,
            latency_ms: millis(started.elapsed()),
            attempts,
            source: CallSource::Live,
        }
    }

    /// Turns an exchange into an outcome, filling in the token counts.
    fn interpret(
        &self,
        exchange: &Exchange,
        request: &LlmRequest,
        record: &mut LlmCallRecord,
    ) -> LlmOutcome {
        let (status, body) = match exchange {
            Exchange::Failed { failure } => return Err(failure.clone()),
            Exchange::Reply { status, body } => (*status, body),
        };
        if !(200..300).contains(&status) {
            return Err(LlmFailure::HttpStatus {
                code: status,
                body_excerpt: excerpt(&self.scrub(body)),
            });
        }
        let reply = parse_response(self.config.kind, body)?;
        record.prompt_tokens = reply.prompt_tokens;
        record.completion_tokens = reply.completion_tokens;
        let value = extract_json(&reply.content)?;
        request.shape.validate(&value)
    }

    fn store_failure(&self, error: &std::io::Error) -> LlmFailure {
        LlmFailure::Store {
            message: self.scrub(&error.to_string()),
        }
    }

    /// Removes the API key from text that came from the server or the HTTP client.
    fn scrub(&self, text: &str) -> String {
        match &self.config.api_key {
            Some(key) => key.scrub(text),
            None => text.to_owned(),
        }
    }
}

fn finish(mut record: LlmCallRecord, outcome: LlmOutcome) -> LlmCall {
    record.outcome = OutcomeKind::of(&outcome);
    LlmCall { outcome, record }
}

fn millis(duration: Duration) -> u64 {
    u64::try_from(duration.as_millis()).unwrap_or(u64::MAX)
}
