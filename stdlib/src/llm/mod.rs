//! LLM effects: a harness asks a language model for a reply of a declared type.
//!
//! The pieces, in the order a call passes through them:
//! - [`ProviderConfig`](crate::llm::ProviderConfig): Ollama or an OpenAI-compatible endpoint,
//!   resolved from explicit settings and an environment lookup the caller supplies;
//! - [`LlmRequest`](crate::llm::LlmRequest) with its [`ReplyShape`](crate::llm::ReplyShape),
//!   and [`request_hash`](crate::llm::request_hash), the record/replay key;
//! - [`LlmClient`](crate::llm::LlmClient): the per-game budget,
//!   [`CallMode`](crate::llm::CallMode) (live, record, replay), retries with backoff for
//!   transport failures only, and accounting in an [`LlmCallRecord`](crate::llm::LlmCallRecord);
//! - [`ChatTransport`](crate::llm::ChatTransport) with
//!   [`UreqTransport`](crate::llm::UreqTransport), one bounded HTTP exchange;
//! - [`extract_json`](crate::llm::extract_json) and
//!   [`ReplyShape::validate`](crate::llm::ReplyShape::validate), which turn the model's text
//!   into a [`ReplyValue`](crate::llm::ReplyValue) or a typed
//!   [`LlmFailure`](crate::llm::LlmFailure).
//!
//! [`ClientHost`](crate::llm::ClientHost) puts a client behind the runtime's `LlmHost` seam, one
//! host per game.
//!
//! This module is the only part of the standard library that does IO or reads the clock;
//! `docs/decisions/0003-llm-io-in-stdlib.md` says why.

mod client;
mod config;
mod failure;
mod host;
mod request;
mod secret;
mod shape;
mod sim;
mod store;
mod transport;
mod wire;

pub use client::{
    CallMode, CallSource, ClientOptions, DEFAULT_MAX_REQUEST_BYTES, LlmCall, LlmCallRecord,
    LlmClient, ProbeError, ProbeReport, RetryPolicy,
};
pub use config::{ConfigError, ProviderConfig, ProviderKind, ProviderSettings, Wire};
pub use failure::{LlmFailure, LlmOutcome, OutcomeKind};
pub use host::{ClientHost, failure_kind, reply_shape};
pub use request::{ChatMessage, Decoding, LlmRequest, SchemaMode, request_hash};
pub use secret::{ApiKey, REDACTED};
pub use shape::{
    CHOICE_KEY, FieldSpec, FieldType, FieldValue, ReplyField, ReplyShape, ReplyValue, WHOLE_REPLY,
    extract_json,
};
pub use sim::{DEFAULT_TEMPERATURE, Latency, Noise, Persona, PersonaError, SimTransport};
pub use store::{
    CallStore, DirStore, Exchange, RecordKey, STORE_FORMAT, STORE_MANIFEST, StoreManifest,
    StoredCall,
};
pub use transport::{
    CallContext, ChatTransport, HttpPost, HttpReply, TransportError, UreqTransport,
};
