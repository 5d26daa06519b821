//! The language server's edit latency: the time from a one-character `didChange` in a
//! generated 2,000-line file to the `publishDiagnostics` that answers it.
//!
//! The bench drives the real `harness lsp` binary over its standard input and output, as an
//! editor does, so the figure includes the JSON-RPC framing, the document sync and the
//! incremental re-check. Run it with `cargo bench --bench lsp`.

// criterion's macros generate functions without documentation.
#![allow(missing_docs)]

use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::{Value, json};

const URI: &str = "file:///nonexistent/harness-bench/generated.harness";

/// A `harness lsp` process and the pipes to it.
struct Session {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    next_id: i64,
}

impl Session {
    fn start() -> Self {
        let mut child = Command::new(env!("CARGO_BIN_EXE_harness"))
            .arg("lsp")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("harness lsp starts");
        let stdin = child.stdin.take().expect("piped stdin");
        let stdout = BufReader::new(child.stdout.take().expect("piped stdout"));
        let mut session = Session {
            child,
            stdin,
            stdout,
            next_id: 0,
        };
        session.request("initialize", json!({ "capabilities": {} }));
        session.send(json!({ "jsonrpc": "2.0", "method": "initialized", "params": {} }));
        session
    }

    fn send(&mut self, message: Value) {
        let body = message.to_string();
        write!(self.stdin, "Content-Length: {}\r\n\r\n{body}", body.len())
            .expect("the server reads");
        self.stdin.flush().expect("the server reads");
    }

    fn receive(&mut self) -> Value {
        let mut length = 0;
        loop {
            let mut line = String::new();
            self.stdout.read_line(&mut line).expect("the server writes");
            let line = line.trim_end();
            if line.is_empty() {
                break;
            }
            if let Some(value) = line.strip_prefix("Content-Length:") {
                length = value.trim().parse().expect("a length");
            }
        }
        let mut body = vec![0; length];
        self.stdout.read_exact(&mut body).expect("a body");
        serde_json::from_slice(&body).expect("JSON")
    }

    fn request(&mut self, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let id = self.next_id;
        self.send(json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params }));
        loop {
            let message = self.receive();
            if message["id"] == json!(id) {
                return message;
            }
        }
    }

    fn notify(&mut self, method: &str, params: Value) {
        self.send(json!({ "jsonrpc": "2.0", "method": method, "params": params }));
    }

    /// Waits for the next diagnostics published for the generated file.
    fn diagnostics(&mut self) -> Value {
        loop {
            let message = self.receive();
            if message["method"] == json!("textDocument/publishDiagnostics")
                && message["params"]["uri"] == json!(URI)
            {
                return message["params"]["diagnostics"].clone();
            }
        }
    }

    fn stop(mut self) {
        self.request("shutdown", Value::Null);
        self.notify("exit", Value::Null);
        let _ = self.child.wait();
    }
}

/// A harness of about `lines` lines: a stack of layers, each with a state field, a chain of
/// computed values that read the layer below, and an action.
fn generated(lines: usize) -> String {
    let mut text = String::from("harness bench.generated\n\nuse game battleship\n\n");
    let mut layer = 0;
    while text.lines().count() < lines {
        let needs = if layer == 0 {
            String::new()
        } else {
            format!(" needs l{}", layer - 1)
        };
        text.push_str(&format!("/// Layer {layer}.\nlayer l{layer}{needs} {{\n  state {{\n    s{layer}: Int = 0\n  }}\n\n"));
        for i in 0..20 {
            let previous = match (i, layer) {
                (0, 0) => format!("s{layer}"),
                (0, _) => format!("s{layer} + c{}_19", layer - 1),
                _ => format!("c{layer}_{}", i - 1),
            };
            text.push_str(&format!(
                "  computed c{layer}_{i}: Int =\n    {previous} + 1\n\n"
            ));
        }
        text.push_str(&format!(
            "  action step{layer}(n: Int)\n    available when n > 0 and c{layer}_19 < 1_000_000\n  {{\n    patch s{layer} += n\n  }}\n\n  decide {{\n    step{layer}(1)\n  }}\n}}\n\n"
        ));
        layer += 1;
    }
    text
}

/// The position of a byte offset (the generated text is ASCII).
fn position(text: &str, offset: usize) -> Value {
    let before = &text[..offset];
    let line = before.matches('\n').count();
    let character = offset - before.rfind('\n').map_or(0, |i| i + 1);
    json!({ "line": line, "character": character })
}

fn edit_latency(c: &mut Criterion) {
    let text = generated(2_000);
    let lines = text.lines().count();
    let mut session = Session::start();
    session.notify("textDocument/didOpen", json!({ "textDocument": { "uri": URI, "languageId": "harness", "version": 1, "text": text } }));
    let initial = session.diagnostics();
    assert!(
        initial
            .as_array()
            .is_some_and(|d| d.iter().all(|d| d["severity"] != json!(1))),
        "the generated file checks without errors: {initial}"
    );
    // The one-character edit: a digit in the middle of the file, toggled so the file keeps its
    // size and stays valid.
    let middle = text.len() / 2;
    let offset = middle + text[middle..].find("+ 1\n").expect("a computed body") + 2;
    let range = json!({ "start": position(&text, offset), "end": position(&text, offset + 1) });
    let mut version = 1;
    c.bench_function(&format!("lsp: one-character edit in a {lines}-line file to published diagnostics"), |b| {
        b.iter_custom(|iterations| {
            let mut total = Duration::ZERO;
            for _ in 0..iterations {
                version += 1;
                let digit = if version % 2 == 0 { "2" } else { "1" };
                let start = Instant::now();
                session.notify(
                    "textDocument/didChange",
                    json!({ "textDocument": { "uri": URI, "version": version }, "contentChanges": [{ "range": range, "text": digit }] }),
                );
                session.diagnostics();
                total += start.elapsed();
            }
            total
        });
    });
    session.stop();
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(50).measurement_time(Duration::from_secs(5));
    targets = edit_latency
}
criterion_main!(benches);
