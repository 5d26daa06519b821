//! A loopback HTTP/1.1 server that speaks both chat protocols and misbehaves on request.

use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use harness_stdlib::llm::ProviderKind;
use serde_json::{Value, json};

/// The longest a server lives, even if a test forgets to drop it.
const LIFETIME: Duration = Duration::from_secs(30);
/// How often loops check whether to stop.
const TICK: Duration = Duration::from_millis(5);
/// Tokens the server reports in its usage fields, per protocol.
pub const OLLAMA_USAGE: (u64, u64) = (11, 7);
pub const OPENAI_USAGE: (u64, u64) = (13, 5);

/// What the server does with one request.
#[derive(Debug, Clone)]
pub enum Behavior {
    /// 200 with `content` as the model's text, in the protocol's envelope, with usage counts.
    Reply(String),
    /// Like `Reply`, after a pause.
    Slow(Duration, String),
    /// 200 with this raw body instead of an envelope.
    RawBody(String),
    /// This status and raw body.
    Status(u16, String),
    /// Read the request and never answer (until the server stops).
    Stall,
    /// Read the request and close the connection without a response.
    Close,
    /// This redirect status with a `Location` header.
    Redirect(u16, String),
    /// 429 Too Many Requests, with this `Retry-After` value if any.
    RateLimited(Option<String>),
    /// 400 when the request asks for a JSON Schema (as servers without schema decoding do);
    /// otherwise like `Reply`.
    RefuseSchema(String),
}

/// What the server's model list endpoints answer.
#[derive(Debug, Clone)]
pub enum ModelList {
    /// 200 with these model names.
    Listed(Vec<String>),
    /// This status (401 for a refused key).
    Refused(u16),
}

/// One request as the server received it.
#[derive(Debug, Clone)]
pub struct Received {
    pub method: String,
    pub path: String,
    /// Header names in lowercase, in arrival order.
    pub headers: Vec<(String, String)>,
    pub body: String,
}

impl Received {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(key, _)| key == name)
            .map(|(_, value)| value.as_str())
    }

    pub fn json(&self) -> Value {
        serde_json::from_str(&self.body).expect("the client sends JSON bodies")
    }
}

struct Shared {
    /// Behaviours in order; the last one repeats.
    script: Mutex<VecDeque<Behavior>>,
    /// What `GET /api/tags` and `GET /v1/models` answer; `None` answers 404 there.
    models: Option<ModelList>,
    received: Mutex<Vec<Received>>,
    stop: AtomicBool,
    started: Instant,
}

impl Shared {
    fn stopping(&self) -> bool {
        self.stop.load(Ordering::Relaxed) || self.started.elapsed() > LIFETIME
    }

    fn next_behavior(&self) -> Behavior {
        let mut script = self.script.lock().unwrap();
        if script.len() > 1 {
            script.pop_front().unwrap()
        } else {
            script
                .front()
                .cloned()
                .unwrap_or(Behavior::Status(500, "empty script".into()))
        }
    }
}

/// A running server; dropping it stops the accept loop and every connection thread.
pub struct TestServer {
    port: u16,
    shared: Arc<Shared>,
    handle: Option<JoinHandle<()>>,
}

impl TestServer {
    pub fn start(script: Vec<Behavior>) -> Self {
        Self::start_with_models(script, None)
    }

    /// A server whose model list endpoints answer `models`, for the probe before a run.
    pub fn start_with_models(script: Vec<Behavior>, models: Option<ModelList>) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        let port = listener.local_addr().unwrap().port();
        let shared = Arc::new(Shared {
            script: Mutex::new(script.into()),
            models,
            received: Mutex::new(Vec::new()),
            stop: AtomicBool::new(false),
            started: Instant::now(),
        });
        let accept_shared = Arc::clone(&shared);
        let handle = thread::spawn(move || accept_loop(&listener, &accept_shared));
        TestServer {
            port,
            shared,
            handle: Some(handle),
        }
    }

    /// The base URL a provider of `kind` would be configured with.
    pub fn base_url(&self, kind: ProviderKind) -> String {
        match kind {
            ProviderKind::Ollama => format!("http://127.0.0.1:{}", self.port),
            ProviderKind::OpenAiCompatible | ProviderKind::Sim => {
                format!("http://127.0.0.1:{}/v1", self.port)
            }
        }
    }

    pub fn received(&self) -> Vec<Received> {
        self.shared.received.lock().unwrap().clone()
    }
}

impl Drop for TestServer {
    fn drop(&mut self) {
        self.shared.stop.store(true, Ordering::Relaxed);
        if let Some(handle) = self.handle.take() {
            let _ = handle.join();
        }
    }
}

/// A loopback port with nothing listening on it.
pub fn closed_port_url() -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    drop(listener);
    format!("http://127.0.0.1:{port}")
}

fn accept_loop(listener: &TcpListener, shared: &Arc<Shared>) {
    let mut workers = Vec::new();
    while !shared.stopping() {
        match listener.accept() {
            Ok((stream, _)) => {
                let shared = Arc::clone(shared);
                workers.push(thread::spawn(move || serve(stream, &shared)));
            }
            Err(_) => thread::sleep(TICK),
        }
    }
    for worker in workers {
        let _ = worker.join();
    }
}

fn serve(stream: TcpStream, shared: &Shared) {
    let _ = stream.set_nonblocking(false);
    let _ = stream.set_read_timeout(Some(Duration::from_secs(2)));
    let Some(request) = read_request(&stream) else {
        return;
    };
    let kind = if request.path == "/api/chat" {
        Some(ProviderKind::Ollama)
    } else if request.path.ends_with("/chat/completions") {
        Some(ProviderKind::OpenAiCompatible)
    } else {
        None
    };
    let lists = if request.path == "/api/tags" {
        Some(ProviderKind::Ollama)
    } else if request.path.ends_with("/models") {
        Some(ProviderKind::OpenAiCompatible)
    } else {
        None
    };
    let asks_schema = {
        let body: Value = serde_json::from_str(&request.body).unwrap_or(Value::Null);
        body.pointer("/response_format/type") == Some(&json!("json_schema"))
            || body.get("format").is_some_and(Value::is_object)
    };
    shared.received.lock().unwrap().push(request);
    if let (Some(kind), Some(list)) = (lists, &shared.models) {
        let models = match list {
            ModelList::Listed(models) => models,
            ModelList::Refused(code) => {
                respond(&stream, *code, &[], "{\"error\":\"invalid key\"}");
                return;
            }
        };
        let body = match kind {
            ProviderKind::Ollama => {
                json!({ "models": models.iter().map(|m| json!({ "name": m })).collect::<Vec<_>>() })
            }
            _ => {
                json!({ "object": "list", "data": models.iter().map(|m| json!({ "id": m })).collect::<Vec<_>>() })
            }
        };
        respond(&stream, 200, &[], &body.to_string());
        return;
    }
    let Some(kind) = kind else {
        respond(&stream, 404, &[], "{\"error\":\"no such endpoint\"}");
        return;
    };
    match shared.next_behavior() {
        Behavior::Reply(content) => respond(&stream, 200, &[], &envelope(kind, &content)),
        Behavior::Slow(pause, content) => {
            wait(shared, pause);
            respond(&stream, 200, &[], &envelope(kind, &content));
        }
        Behavior::RawBody(body) => respond(&stream, 200, &[], &body),
        Behavior::Status(code, body) => respond(&stream, code, &[], &body),
        Behavior::Stall => wait(shared, LIFETIME),
        Behavior::Close => {}
        Behavior::Redirect(code, location) => {
            respond(&stream, code, &[("Location", &location)], "");
        }
        Behavior::RateLimited(retry_after) => {
            let headers: Vec<(&str, &str)> = retry_after
                .as_deref()
                .map(|v| ("Retry-After", v))
                .into_iter()
                .collect();
            respond(&stream, 429, &headers, "{\"error\":\"rate limited\"}");
        }
        Behavior::RefuseSchema(content) => {
            if asks_schema {
                respond(
                    &stream,
                    400,
                    &[],
                    "{\"error\":\"response_format json_schema is not supported\"}",
                );
            } else {
                respond(&stream, 200, &[], &envelope(kind, &content));
            }
        }
    }
}

/// Sleeps for `pause`, or less if the server is stopping.
fn wait(shared: &Shared, pause: Duration) {
    let until = Instant::now() + pause;
    while Instant::now() < until && !shared.stopping() {
        thread::sleep(TICK);
    }
}

fn read_request(stream: &TcpStream) -> Option<Received> {
    let mut reader = BufReader::new(stream);
    let mut line = String::new();
    reader.read_line(&mut line).ok()?;
    let mut parts = line.split_whitespace();
    let method = parts.next()?.to_owned();
    let path = parts.next()?.to_owned();
    let mut headers = Vec::new();
    for _ in 0..100 {
        let mut header = String::new();
        reader.read_line(&mut header).ok()?;
        let header = header.trim_end();
        if header.is_empty() {
            break;
        }
        let (name, value) = header.split_once(':')?;
        headers.push((name.trim().to_ascii_lowercase(), value.trim().to_owned()));
    }
    let length: usize = headers
        .iter()
        .find(|(name, _)| name == "content-length")
        .and_then(|(_, value)| value.parse().ok())
        .unwrap_or(0);
    let mut body = vec![0; length.min(1 << 20)];
    reader.read_exact(&mut body).ok()?;
    Some(Received {
        method,
        path,
        headers,
        body: String::from_utf8_lossy(&body).into_owned(),
    })
}

fn respond(mut stream: &TcpStream, code: u16, headers: &[(&str, &str)], body: &str) {
    let reason = match code {
        200 => "OK",
        302 => "Found",
        307 => "Temporary Redirect",
        400 => "Bad Request",
        401 => "Unauthorized",
        404 => "Not Found",
        429 => "Too Many Requests",
        500 => "Internal Server Error",
        _ => "Status",
    };
    let extra: String = headers
        .iter()
        .map(|(name, value)| format!("{name}: {value}\r\n"))
        .collect();
    let response = format!(
        "HTTP/1.1 {code} {reason}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n{extra}Connection: close\r\n\r\n{body}",
        body.len()
    );
    let _ = stream.write_all(response.as_bytes());
    let _ = stream.flush();
}

fn envelope(kind: ProviderKind, content: &str) -> String {
    match kind {
        ProviderKind::Ollama => json!({
            "model": "test-model",
            "created_at": "2025-01-01T00:00:00Z",
            "message": { "role": "assistant", "content": content },
            "done": true,
            "prompt_eval_count": OLLAMA_USAGE.0,
            "eval_count": OLLAMA_USAGE.1,
        }),
        ProviderKind::OpenAiCompatible | ProviderKind::Sim => json!({
            "id": "chatcmpl-test",
            "object": "chat.completion",
            "choices": [{
                "index": 0,
                "message": { "role": "assistant", "content": content },
                "finish_reason": "stop",
            }],
            "usage": {
                "prompt_tokens": OPENAI_USAGE.0,
                "completion_tokens": OPENAI_USAGE.1,
                "total_tokens": OPENAI_USAGE.0 + OPENAI_USAGE.1,
            },
        }),
    }
    .to_string()
}
