//! One HTTP exchange with a chat endpoint: the transport trait and its `ureq` implementation.
//!
//! Together with the client's retry loop and the record/replay store, this is the one place in
//! the standard library that does IO; see `docs/decisions/0003-llm-io-in-stdlib.md`.

use std::io;
use std::time::Duration;

use super::config::redact_url;
use super::request::LlmRequest;
use super::secret::ApiKey;

/// The largest response body read, in bytes. A chat reply is a few kilobytes; the cap keeps a
/// misbehaving server from filling memory.
const MAX_BODY_BYTES: u64 = 4 * 1024 * 1024;

/// The most same-origin redirects followed for one exchange.
const MAX_REDIRECTS: u32 = 3;

/// Which call a POST carries, for transports that answer without a network.
#[derive(Debug, Clone, Copy)]
pub struct CallContext<'a> {
    /// The request as the harness made it (effect, prompts, reply shape).
    pub request: &'a LlmRequest,
    /// The replicate: the episode's seed.
    pub replicate: u64,
    /// How many times this episode has made this request, counting this call (from 1).
    pub occurrence: u32,
    /// The request hash.
    pub hash: &'a str,
}

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
    /// The call this POST carries. The HTTP transport ignores it.
    pub context: CallContext<'a>,
}

/// A response that arrived, whatever its status.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HttpReply {
    /// The HTTP status code.
    pub status: u16,
    /// The body, decoded as UTF-8 with invalid bytes replaced.
    pub body: String,
    /// The `Retry-After` header of a 429 or 503, as a pause.
    pub retry_after: Option<Duration>,
    /// The latency a simulated transport declares, reported instead of the wall time.
    pub simulated_latency_ms: Option<u64>,
}

impl HttpReply {
    /// A reply with this status and body.
    pub fn new(status: u16, body: impl Into<String>) -> Self {
        HttpReply {
            status,
            body: body.into(),
            ..HttpReply::default()
        }
    }
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

    /// Performs one GET (the probe that lists models before a run), bounded by `timeout`.
    /// Transports without a network have nothing to probe.
    fn get(
        &self,
        url: &str,
        api_key: Option<&ApiKey>,
        timeout: Duration,
    ) -> Result<HttpReply, TransportError> {
        let _ = (url, api_key, timeout);
        Err(TransportError::Failed {
            message: "this transport has nothing to probe".to_owned(),
            retryable: false,
        })
    }
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
    /// Redirects are not followed by `ureq`, which would turn a POST into a GET without the
    /// prompt on a 302 and would follow it to any host; [`UreqTransport::post`] follows only
    /// method-preserving redirects to the same origin.
    pub fn new() -> Self {
        let agent = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .proxy(None)
            .max_redirects(0)
            .build()
            .new_agent();
        UreqTransport { agent }
    }

    fn post_once(&self, url: &str, request: &HttpPost<'_>) -> Result<Response, TransportError> {
        refuse_credentials(url)?;
        // A global timeout covers DNS, connect, sending, the response head and the whole body,
        // so a server that accepts and then stalls mid-body is cut off too.
        let mut builder = self
            .agent
            .post(url)
            .config()
            .timeout_global(Some(request.timeout))
            .build()
            .content_type("application/json");
        if let Some(key) = request.api_key {
            builder = builder.header("Authorization", format!("Bearer {}", key.expose_secret()));
        }
        let response = builder.send(request.body).map_err(classify)?;
        read(response)
    }
}

/// A response with the headers this module reads.
struct Response {
    reply: HttpReply,
    location: Option<String>,
}

fn read(mut response: ureq::http::Response<ureq::Body>) -> Result<Response, TransportError> {
    let status = response.status().as_u16();
    let header = |name: &str| {
        response
            .headers()
            .get(name)
            .and_then(|value| value.to_str().ok())
            .map(str::to_owned)
    };
    let retry_after = header("retry-after").and_then(|v| parse_retry_after(&v));
    let location = header("location");
    let bytes = response
        .body_mut()
        .with_config()
        .limit(MAX_BODY_BYTES)
        .read_to_vec()
        .map_err(classify)?;
    Ok(Response {
        reply: HttpReply {
            status,
            body: String::from_utf8_lossy(&bytes).into_owned(),
            retry_after: retry_after.filter(|_| matches!(status, 429 | 503)),
            simulated_latency_ms: None,
        },
        location,
    })
}

impl ChatTransport for UreqTransport {
    fn post(&self, request: &HttpPost<'_>) -> Result<HttpReply, TransportError> {
        let mut url = request.url.to_owned();
        for _ in 0..=MAX_REDIRECTS {
            let response = self.post_once(&url, request)?;
            let status = response.reply.status;
            if !(300..400).contains(&status) {
                return Ok(response.reply);
            }
            let Some(location) = response.location else {
                return Ok(response.reply);
            };
            let target = resolve_location(&url, &location);
            if origin(&target) != origin(&url) {
                return Err(TransportError::Failed {
                    message: format!(
                        "the server answered {status} and redirected to another host ({}); \
                         redirects are followed only within one host, so set the base URL to \
                         where the server lives",
                        redact_url(&target)
                    ),
                    retryable: false,
                });
            }
            if !matches!(status, 307 | 308) {
                return Err(TransportError::Failed {
                    message: format!(
                        "the server answered {status}, a redirect that turns the POST into a GET \
                         without the prompt, to {}; set the base URL to that address",
                        redact_url(&target)
                    ),
                    retryable: false,
                });
            }
            url = target;
        }
        Err(TransportError::Failed {
            message: format!("more than {MAX_REDIRECTS} redirects"),
            retryable: false,
        })
    }

    fn get(
        &self,
        url: &str,
        api_key: Option<&ApiKey>,
        timeout: Duration,
    ) -> Result<HttpReply, TransportError> {
        refuse_credentials(url)?;
        let mut builder = self
            .agent
            .get(url)
            .config()
            .timeout_global(Some(timeout))
            .build();
        if let Some(key) = api_key {
            builder = builder.header("Authorization", format!("Bearer {}", key.expose_secret()));
        }
        let response = builder.call().map_err(classify)?;
        read(response).map(|response| response.reply)
    }
}

/// Refuses a URL with a user or password, which `ureq` would send as Basic auth (and a
/// recording would keep in base64). [`super::ProviderConfig::resolve`] refuses them first;
/// this covers configurations built by hand.
fn refuse_credentials(url: &str) -> Result<(), TransportError> {
    let authority = url.split_once("://").map_or("", |(_, rest)| {
        rest.split(['/', '?', '#']).next().unwrap_or_default()
    });
    if authority.contains('@') {
        return Err(TransportError::Failed {
            message: format!(
                "the URL {} carries credentials; put the key in OPENAI_API_KEY instead",
                redact_url(url)
            ),
            retryable: false,
        });
    }
    Ok(())
}

/// `Retry-After` as delta-seconds. An HTTP date is not honoured (the pause would depend on the
/// clocks of two machines); the client then uses its own backoff.
fn parse_retry_after(value: &str) -> Option<Duration> {
    value.trim().parse::<u64>().ok().map(Duration::from_secs)
}

/// `scheme://host:port` of an absolute URL, lowercased; empty for anything else.
fn origin(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return String::new();
    };
    let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
    format!("{}://{}", scheme, authority).to_ascii_lowercase()
}

/// A `Location` value made absolute against the URL that was asked.
fn resolve_location(base: &str, location: &str) -> String {
    if location.contains("://") {
        return location.to_owned();
    }
    let origin = {
        let (scheme, rest) = base.split_once("://").unwrap_or(("http", base));
        let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
        format!("{scheme}://{authority}")
    };
    if let Some(path) = location.strip_prefix("//") {
        let scheme = base.split_once("://").map_or("http", |(s, _)| s);
        return format!("{scheme}://{path}");
    }
    if location.starts_with('/') {
        return format!("{origin}{location}");
    }
    let dir = base.rsplit_once('/').map_or(base, |(dir, _)| dir);
    format!("{dir}/{location}")
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn locations_resolve_against_the_asked_url() {
        let base = "http://127.0.0.1:9/v1/chat/completions";
        assert_eq!(
            resolve_location(base, "/v2/chat/completions"),
            "http://127.0.0.1:9/v2/chat/completions"
        );
        assert_eq!(
            resolve_location(base, "https://evil.example/x"),
            "https://evil.example/x"
        );
        assert_eq!(
            resolve_location(base, "//evil.example/x"),
            "http://evil.example/x"
        );
        assert_eq!(
            resolve_location(base, "other"),
            "http://127.0.0.1:9/v1/chat/other"
        );
        assert_eq!(origin("HTTP://Host:1/a?b"), "http://host:1");
        assert_ne!(origin("http://host:1/a"), origin("http://host:2/a"));
    }
}
