//! One HTTP exchange with a chat endpoint: the transport trait and its `ureq` implementation.
//!
//! Together with the client's retry loop and the record/replay store, this is the one place in
//! the standard library that does IO; see `docs/decisions/0003-llm-io-in-stdlib.md`.

use std::io;
use std::time::Duration;

use super::config::ApiKey;

/// The largest response body read, in bytes. A chat reply is a few kilobytes; the cap keeps a
/// misbehaving server from filling memory.
const MAX_BODY_BYTES: u64 = 4 * 1024 * 1024;

/// One JSON POST, as the client hands it to a transport.
#[derive(Debug, Clone, Copy)]
pub struct HttpPost<'a> {
    /// The full endpoint URL.
    pub url: &'a str,
    /// The bearer key, sent only in the `Authorization` header.
    pub api_key: Option<&'a ApiKey>,
    /// The JSON body.
    pub body: &'a str,
    /// The bound on the whole exchange: connect, send, and reading the full response.
    pub timeout: Duration,
}

/// A response that arrived, whatever its status.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HttpReply {
    /// The HTTP status code.
    pub status: u16,
    /// The body, decoded as UTF-8 with invalid bytes replaced.
    pub body: String,
}

/// Why an exchange produced no response.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TransportError {
    /// The exchange did not finish within [`HttpPost::timeout`].
    Timeout,
    /// The exchange failed; `retryable` is false when repeating it cannot help (a bad URL).
    Failed {
        /// What the HTTP client said.
        message: String,
        /// Whether another attempt might succeed.
        retryable: bool,
    },
}

/// Sends one POST and returns the response. Implementations make exactly one attempt: the
/// client owns retries, so every transport gets the same retry and accounting rules.
pub trait ChatTransport: Send + Sync {
    /// Performs one exchange, bounded by `request.timeout`.
    fn post(&self, request: &HttpPost<'_>) -> Result<HttpReply, TransportError>;
}

/// The real transport: HTTP/1.1 over `ureq`, with rustls for `https`.
#[derive(Debug, Clone)]
pub struct UreqTransport {
    agent: ureq::Agent,
}

impl Default for UreqTransport {
    fn default() -> Self {
        Self::new()
    }
}

impl UreqTransport {
    /// A transport with its own connection pool.
    ///
    /// Non-2xx statuses are returned as replies rather than errors so the client can quote the
    /// body. Proxy settings are not taken from the environment, because this library never
    /// reads the environment; a stray `HTTP_PROXY` must not reroute loopback test traffic.
    pub fn new() -> Self {
        let agent = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .proxy(None)
            .build()
            .new_agent();
        UreqTransport { agent }
    }
}

impl ChatTransport for UreqTransport {
    fn post(&self, request: &HttpPost<'_>) -> Result<HttpReply, TransportError> {
        // A global timeout covers DNS, connect, sending, the response head and the whole body,
        // so a server that accepts and then stalls mid-body is cut off too.
        let mut builder = self
            .agent
            .post(request.url)
            .config()
            .timeout_global(Some(request.timeout))
            .build()
            .content_type("application/json");
        if let Some(key) = request.api_key {
            builder = builder.header("Authorization", format!("Bearer {}", key.expose_secret()));
        }
        let mut response = builder.send(request.body).map_err(classify)?;
        let status = response.status().as_u16();
        let bytes = response
            .body_mut()
            .with_config()
            .limit(MAX_BODY_BYTES)
            .read_to_vec()
            .map_err(classify)?;
        Ok(HttpReply {
            status,
            body: String::from_utf8_lossy(&bytes).into_owned(),
        })
    }
}

/// Sorts a `ureq` error into a timeout, a retryable failure, or a permanent one.
fn classify(error: ureq::Error) -> TransportError {
    let retryable = match &error {
        ureq::Error::Timeout(_) => return TransportError::Timeout,
        ureq::Error::Io(io_error)
            if matches!(
                io_error.kind(),
                io::ErrorKind::TimedOut | io::ErrorKind::WouldBlock
            ) =>
        {
            return TransportError::Timeout;
        }
        ureq::Error::BadUri(_)
        | ureq::Error::Http(_)
        | ureq::Error::RequireHttpsOnly(_)
        | ureq::Error::InvalidProxyUrl
        | ureq::Error::BodyExceedsLimit(_) => false,
        _ => true,
    };
    TransportError::Failed {
        message: error.to_string(),
        retryable,
    }
}
