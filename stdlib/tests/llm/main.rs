//! Tests of the LLM effects, driving the real HTTP transport against a loopback server.

mod config;
mod decoding;
mod hardening;
mod http;
mod replay;
mod replicates;
mod server;
mod shape;
mod sim;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use harness_stdlib::llm::{
    ApiKey, CallMode, ClientOptions, FieldSpec, FieldType, FieldValue, LlmClient, LlmRequest,
    ProviderConfig, ProviderKind, ReplyShape, RetryPolicy,
};

/// A key distinctive enough that finding it anywhere is certainly a leak.
pub(crate) const SECRET: &str = "sk-test-9f8e7d6c5b4a-SECRET";

/// The shape of the reference's revision reply, trimmed to one field of each kind.
pub(crate) fn revision_shape() -> ReplyShape {
    ReplyShape::Record {
        fields: vec![
            FieldSpec::required(
                "revisionKind",
                FieldType::Choice {
                    allowed: vec!["widen".into(), "narrow".into(), "salvage".into()],
                },
            ),
            FieldSpec::required(
                "coarseBudget",
                FieldType::Int {
                    min: Some(0),
                    max: Some(15),
                },
            ),
            FieldSpec::with_default(
                "exploitThreshold",
                FieldType::Float {
                    min: Some(0.0),
                    max: Some(1.0),
                },
                FieldValue::Float(0.5),
            ),
            FieldSpec::with_default(
                "policyMode",
                FieldType::String,
                FieldValue::Str("hunt".into()),
            ),
            FieldSpec::with_default("aggressive", FieldType::Bool, FieldValue::Bool(false)),
        ],
    }
}

/// A reply that satisfies [`revision_shape`].
pub(crate) const GOOD_REPLY: &str = r#"{"revisionKind":"narrow","coarseBudget":4,"exploitThreshold":0.75,"policyMode":"repair","aggressive":true}"#;

/// A revision request with the given user prompt.
pub(crate) fn request(user: &str) -> LlmRequest {
    LlmRequest::new(
        "Choose one reflective policy revision. Return JSON only.",
        user,
        revision_shape(),
    )
}

/// A provider configuration with the test model.
pub(crate) fn provider(kind: ProviderKind, base_url: String, key: Option<&str>) -> ProviderConfig {
    ProviderConfig {
        kind,
        base_url,
        model: "test-model".into(),
        api_key: key.map(ApiKey::new),
    }
}

/// Short bounds so failure paths finish in well under a second.
pub(crate) fn options(timeout_ms: u64, attempts: u32) -> ClientOptions {
    ClientOptions {
        timeout: Duration::from_millis(timeout_ms),
        retry: RetryPolicy {
            max_attempts: attempts,
            initial_backoff: Duration::from_millis(10),
            max_backoff: Duration::from_millis(40),
            max_retry_after: Duration::from_millis(500),
        },
        budget_per_game: None,
        ..ClientOptions::default()
    }
}

/// A client over the real HTTP transport.
pub(crate) fn client(config: ProviderConfig, options: ClientOptions, mode: CallMode) -> LlmClient {
    LlmClient::http(config, options, mode)
}

/// A fresh directory under the system temp dir, removed on drop.
pub(crate) struct TempDir(PathBuf);

impl TempDir {
    /// A unique, not yet existing path; the directory is made by whoever writes first.
    pub(crate) fn new(name: &str) -> Self {
        static COUNTER: AtomicU32 = AtomicU32::new(0);
        let unique = COUNTER.fetch_add(1, Ordering::Relaxed);
        let path = std::env::temp_dir().join(format!(
            "harness-llm-{name}-{}-{unique}",
            std::process::id()
        ));
        let _ = std::fs::remove_dir_all(&path);
        TempDir(path)
    }

    /// The directory's path.
    pub(crate) fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}
