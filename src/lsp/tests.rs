//! The server driven over JSON-RPC, as an editor drives it: an in-memory connection, the
//! initialize handshake, document sync, requests, and shutdown.

use std::thread::JoinHandle;
use std::time::Duration;

use lsp_server::{Connection, Message, Notification, Request, RequestId, Response};
use serde_json::{Value, json};

use super::*;

const MINI: &str = include_str!("../../harnesses/examples/battleship_mini.harness");
const URI: &str = "file:///nonexistent/harness-lsp-test/mini.harness";

/// An editor's side of a connection to a server running on its own thread.
struct Client {
    connection: Connection,
    server: Option<JoinHandle<Result<(), String>>>,
    next_id: i32,
    /// Notifications received while waiting for something else.
    pending: Vec<Notification>,
}

impl Client {
    fn start() -> Self {
        let (server_side, client_side) = Connection::memory();
        let server = std::thread::spawn(move || {
            serve(
                &server_side,
                harness::games::Registry::standard().signatures(),
            )
        });
        let mut client = Client {
            connection: client_side,
            server: Some(server),
            next_id: 0,
            pending: Vec::new(),
        };
        let response = client.request("initialize", json!({ "capabilities": {} }));
        let capabilities = &response.result.expect("initialize succeeds")["capabilities"];
        assert_eq!(capabilities["hoverProvider"], json!(true));
        assert_eq!(
            capabilities["textDocumentSync"]["change"],
            json!(2),
            "incremental sync"
        );
        client.notify("initialized", json!({}));
        client
    }

    fn receive(&self) -> Message {
        self.connection
            .receiver
            .recv_timeout(Duration::from_secs(20))
            .expect("the server answers within 20 s")
    }

    fn request(&mut self, method: &str, params: Value) -> Response {
        self.next_id += 1;
        let id = RequestId::from(self.next_id);
        let request = Request::new(id.clone(), method.to_owned(), params);
        self.connection
            .sender
            .send(Message::Request(request))
            .expect("the server is running");
        loop {
            match self.receive() {
                Message::Response(response) if response.id == id => return response,
                Message::Notification(notification) => self.pending.push(notification),
                other => panic!("unexpected message {other:?}"),
            }
        }
    }

    /// A request that must succeed; its result.
    fn call(&mut self, method: &str, params: Value) -> Value {
        let response = self.request(method, params);
        match response.error {
            None => response.result.unwrap_or(Value::Null),
            Some(error) => panic!("{method} failed: {}", error.message),
        }
    }

    /// A request that must fail; its error code.
    fn fail(&mut self, method: &str, params: Value) -> i32 {
        let response = self.request(method, params);
        response
            .error
            .unwrap_or_else(|| panic!("{method} should fail, got {:?}", response.result))
            .code
    }

    fn notify(&self, method: &str, params: Value) {
        let notification = Notification::new(method.to_owned(), params);
        self.connection
            .sender
            .send(Message::Notification(notification))
            .expect("the server is running");
    }

    /// The next diagnostics published for `uri`.
    fn diagnostics(&mut self, uri: &str) -> Vec<Value> {
        let is_ours = |n: &Notification| {
            n.method == "textDocument/publishDiagnostics" && n.params["uri"] == json!(uri)
        };
        if let Some(index) = self.pending.iter().position(is_ours) {
            let notification = self.pending.remove(index);
            return notification.params["diagnostics"]
                .as_array()
                .cloned()
                .unwrap_or_default();
        }
        loop {
            match self.receive() {
                Message::Notification(n) if is_ours(&n) => {
                    return n.params["diagnostics"]
                        .as_array()
                        .cloned()
                        .unwrap_or_default();
                }
                Message::Notification(n) => self.pending.push(n),
                other => panic!("unexpected message {other:?}"),
            }
        }
    }

    fn open(&mut self, uri: &str, text: &str) -> Vec<Value> {
        self.notify("textDocument/didOpen", json!({ "textDocument": { "uri": uri, "languageId": "harness", "version": 1, "text": text } }));
        self.diagnostics(uri)
    }

    /// Replaces the first occurrence of `old` in `text` by an incremental change; returns the
    /// published diagnostics.
    fn replace(&mut self, uri: &str, text: &mut String, old: &str, new: &str) -> Vec<Value> {
        let start = text
            .find(old)
            .unwrap_or_else(|| panic!("`{old}` is in the text"));
        let range =
            json!({ "start": position(text, start), "end": position(text, start + old.len()) });
        text.replace_range(start..start + old.len(), new);
        self.notify(
            "textDocument/didChange",
            json!({ "textDocument": { "uri": uri, "version": 2 }, "contentChanges": [{ "range": range, "text": new }] }),
        );
        self.diagnostics(uri)
    }

    fn shutdown(mut self) {
        self.call("shutdown", Value::Null);
        self.notify("exit", Value::Null);
        let server = self.server.take().expect("started");
        assert_eq!(
            server.join().expect("the server thread does not panic"),
            Ok(())
        );
    }
}

/// The protocol position of a byte offset (the test texts are ASCII).
fn position(text: &str, offset: usize) -> Value {
    let before = &text[..offset];
    let line = before.matches('\n').count();
    let character = offset - before.rfind('\n').map_or(0, |i| i + 1);
    json!({ "line": line, "character": character })
}

/// The position `delta` bytes into the `nth` occurrence of `needle`.
fn at(text: &str, needle: &str, nth: usize, delta: usize) -> Value {
    let offset = text
        .match_indices(needle)
        .nth(nth)
        .unwrap_or_else(|| panic!("`{needle}` occurs {} times", nth + 1))
        .0;
    position(text, offset + delta)
}

fn text_position(uri: &str, position: Value) -> Value {
    json!({ "textDocument": { "uri": uri }, "position": position })
}

fn codes(diagnostics: &[Value]) -> Vec<String> {
    diagnostics
        .iter()
        .map(|d| d["code"].as_str().unwrap_or_default().to_owned())
        .collect()
}

fn labels(completion: &Value) -> Vec<String> {
    completion
        .as_array()
        .expect("a list of items")
        .iter()
        .map(|i| i["label"].as_str().unwrap_or_default().to_owned())
        .collect()
}

#[test]
fn diagnostics_follow_open_and_incremental_changes() {
    let mut client = Client::start();
    let mut text = MINI.replacen(
        "clamp01(hit_prob[c] + EPSILON)",
        "clamp01(hit_prb[c] + EPSILON)",
        1,
    );
    let diagnostics = client.open(URI, &text);
    assert_eq!(codes(&diagnostics), ["E0101"]);
    let typo = &diagnostics[0];
    assert_eq!(typo["severity"], json!(1));
    assert_eq!(typo["range"]["start"], at(&text, "hit_prb", 0, 0));
    assert_eq!(typo["range"]["end"], at(&text, "hit_prb", 0, 7));
    assert!(
        typo["message"]
            .as_str()
            .unwrap_or_default()
            .contains("did you mean `hit_prob`?")
    );

    assert_eq!(
        client.replace(URI, &mut text, "hit_prb", "hit_prob"),
        Vec::<Value>::new()
    );
    let diagnostics = client.replace(URI, &mut text, "cooldown: Int = 0", "cooldown: Int = 0.5");
    assert_eq!(codes(&diagnostics), ["E0201"]);

    // A full-text change replaces the document.
    client.notify("textDocument/didChange", json!({ "textDocument": { "uri": URI, "version": 3 }, "contentChanges": [{ "text": MINI }] }));
    assert_eq!(client.diagnostics(URI), Vec::<Value>::new());
    client.shutdown();
}

#[test]
fn hover_shows_declarations_builtins_game_bindings_and_types() {
    let mut client = Client::start();
    client.open(URI, MINI);
    let mut hover = |needle: &str, nth: usize| -> String {
        let result = client.call(
            "textDocument/hover",
            text_position(URI, at(MINI, needle, nth, 1)),
        );
        result["contents"]["value"]
            .as_str()
            .unwrap_or_default()
            .to_owned()
    };
    let computed = hover("best_cell", 1);
    assert!(
        computed.contains("computed best_cell: Option<Cell>"),
        "{computed}"
    );
    let builtin = hover("hit_probabilities", 0);
    assert!(builtin.contains("fn hit_probabilities"), "{builtin}");
    let property = hover("shots_left", 0);
    assert!(property.contains("game.shots_left: Int"), "{property}");
    let local = hover("cell.row()", 0);
    assert!(local.contains("cell: Cell"), "{local}");
    let documented = hover("clamp01(hit_prob", 0);
    assert!(
        documented.contains("fn clamp01(x: Float) -> Float")
            && documented.contains("unit interval"),
        "{documented}"
    );
    let tunable = hover("coarse_budget -= 1", 0);
    assert!(tunable.contains("tunable coarse_budget: Int"), "{tunable}");
    client.shutdown();
}

#[test]
fn completion_offers_what_is_in_scope_and_nothing_from_higher_layers() {
    let mut client = Client::start();
    client.open(URI, MINI);
    // In the belief layer: its own members, builtins, items; not planning's state.
    let in_belief = labels(&client.call(
        "textDocument/completion",
        text_position(URI, at(MINI, "posterior.hit_probabilities", 0, 0)),
    ));
    for expected in [
        "hit_prob",
        "posterior",
        "clamp01",
        "EPSILON",
        "particles",
        "ema",
        "Budget",
        "belief",
    ] {
        assert!(
            in_belief.contains(&expected.to_owned()),
            "`{expected}` in {in_belief:?}"
        );
    }
    for hidden in ["budget", "asked", "confidence", "planning"] {
        assert!(
            !in_belief.contains(&hidden.to_owned()),
            "`{hidden}` is above belief"
        );
    }
    // In the planning layer, belief's members are visible.
    let in_planning = labels(&client.call(
        "textDocument/completion",
        text_position(URI, at(MINI, "budget.coarse < coarse_budget", 0, 0)),
    ));
    for expected in ["budget", "asked", "hit_prob", "coarse_budget", "q"] {
        assert!(
            in_planning.contains(&expected.to_owned()),
            "`{expected}` in {in_planning:?}"
        );
    }
    assert!(!in_planning.contains(&"cooldown".to_owned()));
    // After a dot: game bindings, record fields, methods, enum-like statics.
    let game = labels(&client.call(
        "textDocument/completion",
        text_position(URI, at(MINI, "game.shots_left", 0, 5)),
    ));
    assert!(
        game.contains(&"shots_left".to_owned()) && game.contains(&"fire".to_owned()),
        "{game:?}"
    );
    let fields = labels(&client.call(
        "textDocument/completion",
        text_position(URI, at(MINI, "budget.coarse <", 0, 7)),
    ));
    assert_eq!(fields, ["coarse", "late"]);
    let prefixed = labels(&client.call(
        "textDocument/completion",
        text_position(URI, at(MINI, "budget.coarse <", 0, 9)),
    ));
    assert_eq!(
        prefixed,
        ["coarse"],
        "the typed prefix `co` keeps only that field"
    );
    let methods = labels(&client.call(
        "textDocument/completion",
        text_position(URI, at(MINI, "posterior.hit_probabilities", 0, 10)),
    ));
    assert!(
        methods.contains(&"observe_shot".to_owned())
            && methods.contains(&"hit_probabilities".to_owned()),
        "{methods:?}"
    );
    let queries = labels(&client.call(
        "textDocument/completion",
        text_position(URI, at(MINI, "game.prior", 0, 5)),
    ));
    assert!(
        queries.contains(&"prior".to_owned()) && queries.contains(&"unknown_cells".to_owned()),
        "{queries:?}"
    );
    client.shutdown();
}

#[test]
fn completion_in_half_typed_code() {
    let mut client = Client::start();
    let mut text = MINI.to_owned();
    client.open(URI, &text);
    let diagnostics = client.replace(
        URI,
        &mut text,
        "patch cooldown = 3",
        "patch cooldown = 3\n    patch confidence = game.",
    );
    assert!(!diagnostics.is_empty(), "the half-typed line is an error");
    let offset = text.find("= game.").expect("typed") + "= game.".len();
    let items = labels(&client.call(
        "textDocument/completion",
        text_position(URI, position(&text, offset)),
    ));
    assert!(items.contains(&"hits".to_owned()), "{items:?}");
    client.shutdown();
}

#[test]
fn definition_across_layers_and_files() {
    let mut client = Client::start();
    client.open(URI, MINI);
    let result = client.call(
        "textDocument/definition",
        text_position(URI, at(MINI, "best_hit_prob + EPSILON", 0, 2)),
    );
    assert_eq!(result["uri"], json!(URI));
    assert_eq!(
        result["range"]["start"],
        at(MINI, "best_hit_prob: Float", 0, 0)
    );
    let result = client.call(
        "textDocument/definition",
        text_position(URI, at(MINI, "belief.exploit_threshold = 0.5", 0, 8)),
    );
    assert_eq!(
        result["range"]["start"],
        at(MINI, "exploit_threshold: Float", 0, 0)
    );
    let result = client.call(
        "textDocument/definition",
        text_position(URI, at(MINI, "BUDGET_CLOSED\n", 0, 0)),
    );
    assert_eq!(result["range"]["start"], at(MINI, "BUDGET_CLOSED", 0, 0));

    let base_uri = "file:///nonexistent/harness-lsp-test/base.harness";
    let top_uri = "file:///nonexistent/harness-lsp-test/top.harness";
    let base = "harness demo.base\n\n/// The limit.\nconst LIMIT: Int = 3\n";
    let top = "harness demo.top\n\nuse demo.base\n\nconst TWICE: Int = LIMIT * 2\n";
    client.open(base_uri, base);
    let diagnostics = client.open(top_uri, top);
    assert!(
        codes(&diagnostics).iter().all(|c| c.starts_with('W')),
        "{diagnostics:?}"
    );
    let result = client.call(
        "textDocument/definition",
        text_position(top_uri, at(top, "LIMIT", 0, 1)),
    );
    assert_eq!(result["uri"], json!(base_uri));
    assert_eq!(result["range"]["start"], at(base, "LIMIT", 0, 0));
    client.shutdown();
}

#[test]
fn references_and_rename() {
    let mut client = Client::start();
    client.open(URI, MINI);
    let params = |include: bool| json!({ "textDocument": { "uri": URI }, "position": at(MINI, "cooldown: Int", 0, 0), "context": { "includeDeclaration": include } });
    let all = client.call("textDocument/references", params(true));
    assert_eq!(
        all.as_array().map(Vec::len),
        Some(MINI.matches("cooldown").count())
    );
    let uses = client.call("textDocument/references", params(false));
    assert_eq!(
        uses.as_array().map(Vec::len),
        Some(MINI.matches("cooldown").count() - 1)
    );

    let edit = client.call(
        "textDocument/rename",
        json!({ "textDocument": { "uri": URI }, "position": at(MINI, "cooldown > 0", 0, 0), "newName": "pause" }),
    );
    let edits = edit["changes"][URI].as_array().cloned().unwrap_or_default();
    assert_eq!(edits.len(), MINI.matches("cooldown").count());
    assert!(edits.iter().all(|e| e["newText"] == json!("pause")));
    // Renaming a builtin, or to a keyword, is refused.
    let refused = client.fail("textDocument/rename", json!({ "textDocument": { "uri": URI }, "position": at(MINI, "max_by", 0, 0), "newName": "x" }));
    assert_eq!(refused, ErrorCode::RequestFailed as i32);
    let keyword = client.fail("textDocument/rename", json!({ "textDocument": { "uri": URI }, "position": at(MINI, "cooldown > 0", 0, 0), "newName": "layer" }));
    assert_eq!(keyword, ErrorCode::RequestFailed as i32);
    client.shutdown();
}

#[test]
fn formatting_document_symbols_semantic_tokens_and_code_actions() {
    let mut client = Client::start();
    let messy = "const   N: Int=1\nfn   f(x: Int) -> Int = x+N\n";
    let uri = "file:///nonexistent/harness-lsp-test/messy.harness";
    client.open(uri, messy);
    let edits = client.call("textDocument/formatting", json!({ "textDocument": { "uri": uri }, "options": { "tabSize": 2, "insertSpaces": true } }));
    let expected = harness_grammar::format::format(messy).expect("formats");
    assert_eq!(edits[0]["newText"], json!(expected));
    assert_ne!(expected, messy);

    client.open(URI, MINI);
    let symbols = client.call(
        "textDocument/documentSymbol",
        json!({ "textDocument": { "uri": URI } }),
    );
    let names: Vec<&str> = symbols
        .as_array()
        .expect("symbols")
        .iter()
        .filter_map(|s| s["name"].as_str())
        .collect();
    assert_eq!(
        names,
        [
            "Budget",
            "EPSILON",
            "BUDGET_CLOSED",
            "ALREADY_ASKED",
            "particles",
            "confidence_threshold",
            "clamp01",
            "belief",
            "planning",
            "reflection"
        ]
    );
    let belief = &symbols[7];
    let members: Vec<&str> = belief["children"]
        .as_array()
        .expect("members")
        .iter()
        .filter_map(|s| s["name"].as_str())
        .collect();
    assert_eq!(
        members,
        [
            "exploit_threshold",
            "posterior",
            "shots_by_row",
            "hit_prob",
            "best_cell",
            "best_hit_prob",
            "shoot"
        ]
    );
    assert_eq!(
        belief["selectionRange"]["start"],
        at(MINI, "belief {", 0, 0)
    );

    let tokens = client.call(
        "textDocument/semanticTokens/full",
        json!({ "textDocument": { "uri": URI } }),
    );
    let data = tokens["data"].as_array().expect("data");
    assert!(data.len() > 100 && data.len().is_multiple_of(5));

    let broken = MINI.replacen(
        "clamp01(hit_prob[c] + EPSILON)",
        "clamp01(hit_prb[c] + EPSILON)",
        1,
    );
    client.notify("textDocument/didChange", json!({ "textDocument": { "uri": URI, "version": 2 }, "contentChanges": [{ "text": broken }] }));
    client.diagnostics(URI);
    let typo = at(&broken, "hit_prb", 0, 2);
    let actions = client.call(
        "textDocument/codeAction",
        json!({ "textDocument": { "uri": URI }, "range": { "start": typo, "end": typo }, "context": { "diagnostics": [] } }),
    );
    assert_eq!(actions[0]["title"], json!("replace with `hit_prob`"));
    assert_eq!(
        actions[0]["edit"]["changes"][URI][0]["newText"],
        json!("hit_prob")
    );

    // A file with syntax errors is not formatted, and the request says why.
    client.open(
        "file:///nonexistent/harness-lsp-test/broken.harness",
        "const N: Int =\n",
    );
    let code = client.fail("textDocument/formatting", json!({ "textDocument": { "uri": "file:///nonexistent/harness-lsp-test/broken.harness" }, "options": { "tabSize": 2, "insertSpaces": true } }));
    assert_eq!(code, ErrorCode::RequestFailed as i32);
    client.shutdown();
}

#[test]
fn malformed_requests_get_errors_and_the_server_goes_on() {
    let mut client = Client::start();
    client.open(URI, MINI);
    assert_eq!(
        client.fail("textDocument/teleport", json!({})),
        ErrorCode::MethodNotFound as i32
    );
    assert_eq!(
        client.fail("textDocument/hover", json!({ "nonsense": true })),
        ErrorCode::InvalidParams as i32
    );
    assert_eq!(
        client.fail("textDocument/hover", json!(42)),
        ErrorCode::InvalidParams as i32
    );
    let unknown = text_position(
        "file:///nowhere.harness",
        json!({ "line": 0, "character": 0 }),
    );
    assert_eq!(
        client.fail("textDocument/hover", unknown),
        ErrorCode::InvalidParams as i32
    );
    let far = text_position(URI, json!({ "line": 100_000, "character": 0 }));
    assert_eq!(
        client.fail("textDocument/definition", far),
        ErrorCode::InvalidParams as i32
    );
    // A column past the end of its line is the end of the line.
    client.call(
        "textDocument/hover",
        text_position(URI, json!({ "line": 0, "character": 10_000 })),
    );
    // Notifications with bad parameters, or about unknown documents, are ignored.
    client.notify("textDocument/didChange", json!({ "textDocument": { "uri": "file:///nowhere.harness", "version": 1 }, "contentChanges": [] }));
    client.notify("textDocument/didOpen", json!({ "garbage": [] }));
    client.notify("$/unknownNotification", json!(null));
    // An edit whose range is past the end is clamped.
    client.notify(
        "textDocument/didChange",
        json!({ "textDocument": { "uri": URI, "version": 2 }, "contentChanges": [{ "range": { "start": { "line": 9999, "character": 0 }, "end": { "line": 9999, "character": 5 } }, "text": "\n" }] }),
    );
    assert_eq!(client.diagnostics(URI), Vec::<Value>::new());
    client.shutdown();
}

#[test]
fn half_typed_code_never_crashes_any_request() {
    let mut client = Client::start();
    client.open(URI, MINI);
    // Every prefix of the file, cut at a sample of places, queried at its end and middle.
    for cut in (0..MINI.len()).step_by(97) {
        let text = &MINI[..cut];
        client.notify("textDocument/didChange", json!({ "textDocument": { "uri": URI, "version": 2 }, "contentChanges": [{ "text": text }] }));
        client.diagnostics(URI);
        for offset in [cut, cut / 2] {
            let here = text_position(URI, position(text, offset));
            for method in [
                "textDocument/hover",
                "textDocument/completion",
                "textDocument/definition",
            ] {
                let response = client.request(method, here.clone());
                assert!(
                    response.error.is_none(),
                    "{method} at {offset} of a {cut}-byte prefix: {:?}",
                    response.error
                );
            }
            let references = json!({ "textDocument": { "uri": URI }, "position": position(text, offset), "context": { "includeDeclaration": true } });
            assert!(
                client
                    .request("textDocument/references", references)
                    .error
                    .is_none()
            );
        }
        for method in [
            "textDocument/documentSymbol",
            "textDocument/semanticTokens/full",
        ] {
            assert!(
                client
                    .request(method, json!({ "textDocument": { "uri": URI } }))
                    .error
                    .is_none()
            );
        }
    }
    client.shutdown();
}

#[test]
fn positions_count_utf16_code_units() {
    let text = "// é𝄞\nconst N: Int = 1\n";
    let index = LineIndex::new(text);
    // `𝄞` is two UTF-16 units and four bytes.
    let after = text.find('\n').expect("two lines") as u32;
    assert_eq!(
        index.position(text, after),
        lsp::Position {
            line: 0,
            character: 6
        }
    );
    assert_eq!(
        index.offset(
            text,
            lsp::Position {
                line: 0,
                character: 6
            }
        ),
        Some(after)
    );
    assert_eq!(
        index.offset(
            text,
            lsp::Position {
                line: 1,
                character: 6
            }
        ),
        Some(after + 7)
    );
    assert_eq!(
        index.offset(
            text,
            lsp::Position {
                line: 3,
                character: 0
            }
        ),
        None
    );
}

/// The issue's transport reproducers: invalid UTF-8 in a header, lengths too large to
/// allocate, and a short length, each followed by a good frame that must still arrive.
#[test]
fn the_transport_resynchronises_after_hostile_frames() {
    let good = b"Content-Length: 2\r\n\r\n{}";
    let hostile: [&[u8]; 5] = [
        b"Content-Le\xffngth: 3\r\n\r\n",
        b"Content-Length: 18446744073709551615\r\n\r\n",
        b"Content-Length: 1000000000000000\r\n\r\n",
        b"Content-Length: 8000000000\r\n\r\n",
        b"Content-Length: 99999999999999999999999\r\n\r\n",
    ];
    for frame in hostile {
        let input = [frame, good].concat();
        let mut reader = &input[..];
        assert!(matches!(read_frame(&mut reader), Some(Err(_))), "{frame:?}");
        assert_eq!(
            read_frame(&mut reader),
            Some(Ok(b"{}".to_vec())),
            "{frame:?}"
        );
        assert_eq!(read_frame(&mut reader), None);
    }
    // Garbage, even invalid UTF-8, before a header on its line is skipped.
    let input = [&b"\xff\xfe garbage without a line feed"[..], good].concat();
    assert_eq!(read_frame(&mut &input[..]), Some(Ok(b"{}".to_vec())));
    // A short length: the frame's tail is skipped and the next frame still found.
    let input =
        b"Content-Length: 10\r\n\r\n{\"jsonrpc\":\"2.0\",\"id\":1}Content-Length: 2\r\n\r\n{}";
    let mut reader = &input[..];
    assert_eq!(read_frame(&mut reader), Some(Ok(br#"{"jsonrpc""#.to_vec())));
    assert_eq!(read_frame(&mut reader), Some(Ok(b"{}".to_vec())));
    // A header line of a megabyte is bounded, and a length after it still counts.
    let mut input = vec![b'x'; 1 << 20];
    input.extend_from_slice(b"Content-Length: 2\r\n\r\n{}");
    let mut reader = &input[..];
    assert_eq!(read_frame(&mut reader), Some(Ok(b"{}".to_vec())));
}

#[test]
fn the_transport_skips_malformed_frames() {
    let input = b"Content-Length: 5\r\n\r\nhelloContent-Type: x\r\n\r\nContent-Length: 2\r\n\r\n{}";
    let mut reader = &input[..];
    assert_eq!(read_frame(&mut reader), Some(Ok(b"hello".to_vec())));
    assert!(
        matches!(read_frame(&mut reader), Some(Err(_))),
        "a frame without a length is an error"
    );
    assert_eq!(read_frame(&mut reader), Some(Ok(b"{}".to_vec())));
    assert_eq!(read_frame(&mut reader), None);
    assert_eq!(
        body_id(&(Some(br#"{"id": 7, "method": 3}"#.to_vec()), String::new())),
        Some(RequestId::from(7))
    );
    assert_eq!(body_id(&(Some(b"not json".to_vec()), String::new())), None);
    assert!(has_method(br#"{"id": 7, "method": 3}"#));
    assert!(!has_method(br#"{"id": 7, "result": 3}"#));
}

#[test]
fn uris_and_paths_round_trip() {
    assert_eq!(uri_to_path("file:///a%20b/c.harness"), "/a b/c.harness");
    assert_eq!(path_to_uri("/a b/c.harness"), "file:///a%20b/c.harness");
    assert_eq!(uri_to_path("untitled:Untitled-1"), "untitled:Untitled-1");
}

/// The variable that turns [`launched_process_entry`] into a server process: the command line
/// it runs, words separated by spaces.
const CHILD_COMMAND_LINE: &str = "HARNESS_TEST_CHILD_COMMAND_LINE";

/// Not a check of its own: the entry point of the process that
/// [`launched_with_stdio_as_vscode_languageclient_does`] starts. With the variable set it parses
/// that command line as `main` does and runs it on this process's real standard input and
/// output, then exits with its status before the test harness can print anything more.
#[test]
fn launched_process_entry() {
    let Ok(command_line) = std::env::var(CHILD_COMMAND_LINE) else {
        return;
    };
    let cli = <crate::Cli as clap::Parser>::try_parse_from(command_line.split(' ')).unwrap_or_else(
        |error| {
            eprintln!("{error}");
            std::process::exit(2)
        },
    );
    let status = crate::run_cli(cli);
    std::process::exit(if status == std::process::ExitCode::SUCCESS {
        0
    } else {
        1
    });
}

/// vscode-languageclient 9 starts an `Executable` server with `transport: stdio` as
/// `spawn(command, [...args, "--stdio"])` and speaks `Content-Length` framed JSON-RPC over the
/// child's pipes. This starts a process the same way, with `lsp --stdio` parsed by the same
/// `clap` definitions and served on the process's real standard streams, and waits for the
/// diagnostics of an opened document, then shuts it down and expects a clean exit.
///
/// The process is this test executable (Cargo builds the `harness` binary itself only for
/// integration tests, and each of those is another linked binary); before the server starts,
/// the test harness prints a `running 1 test` banner, which is skipped up to the first header.
#[test]
fn launched_with_stdio_as_vscode_languageclient_does() {
    use std::io::{BufReader, Read};
    use std::process::{Command, Stdio};

    let mut child = Command::new(std::env::current_exe().expect("the test executable"))
        .args([
            "--exact",
            "lsp::tests::launched_process_entry",
            "--nocapture",
        ])
        .args(["--test-threads", "1", "--quiet"])
        .env(CHILD_COMMAND_LINE, "harness lsp --stdio")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the process starts");
    let mut stdin = child.stdin.take().expect("piped");
    let mut stdout = BufReader::new(child.stdout.take().expect("piped"));
    let send = |stdin: &mut std::process::ChildStdin, message: Value| {
        let body = message.to_string();
        write!(stdin, "Content-Length: {}\r\n\r\n{body}", body.len()).expect("the server reads");
        stdin.flush().expect("the server reads");
    };
    // Skips the banner: everything before the first `Content-Length` header.
    let mut banner = Vec::new();
    let receive = |stdout: &mut BufReader<std::process::ChildStdout>, banner: &mut Vec<u8>| {
        let mut line = String::new();
        let mut length = None;
        loop {
            line.clear();
            assert_ne!(
                stdout.read_line(&mut line).expect("readable"),
                0,
                "the server closed its output"
            );
            let trimmed = line.trim_end();
            if let Some(value) = trimmed.strip_prefix("Content-Length: ") {
                length = Some(value.parse::<usize>().expect("a length"));
            } else if trimmed.is_empty() && length.is_some() {
                break;
            } else if length.is_none() {
                banner.extend_from_slice(line.as_bytes());
            }
        }
        let mut body = vec![0; length.expect("a header")];
        stdout.read_exact(&mut body).expect("the whole body");
        serde_json::from_slice::<Value>(&body).expect("the body is JSON")
    };
    let root = "file:///nonexistent/harness-lsp-launch";
    send(
        &mut stdin,
        json!({ "jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "processId": std::process::id(), "rootUri": root, "capabilities": {},
            "workspaceFolders": [{ "uri": root, "name": "launch" }] } }),
    );
    let initialized = receive(&mut stdout, &mut banner);
    assert_eq!(initialized["id"], json!(0));
    assert_eq!(
        initialized["result"]["serverInfo"]["name"],
        json!("harness")
    );
    send(
        &mut stdin,
        json!({ "jsonrpc": "2.0", "method": "initialized", "params": {} }),
    );
    let uri = format!("{root}/mini.harness");
    let text = MINI.replacen(
        "clamp01(hit_prob[c] + EPSILON)",
        "clamp01(hit_prb[c] + EPSILON)",
        1,
    );
    send(
        &mut stdin,
        json!({ "jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {
            "textDocument": { "uri": uri, "languageId": "harness", "version": 1, "text": text } } }),
    );
    let diagnostics = loop {
        let message = receive(&mut stdout, &mut banner);
        if message["method"] == json!("textDocument/publishDiagnostics")
            && message["params"]["uri"] == json!(uri)
        {
            break message["params"]["diagnostics"].clone();
        }
    };
    assert_eq!(
        codes(diagnostics.as_array().expect("a list")),
        ["E0101"],
        "{diagnostics}"
    );
    send(
        &mut stdin,
        json!({ "jsonrpc": "2.0", "id": 1, "method": "shutdown", "params": null }),
    );
    assert_eq!(receive(&mut stdout, &mut banner)["id"], json!(1));
    send(
        &mut stdin,
        json!({ "jsonrpc": "2.0", "method": "exit", "params": null }),
    );
    let status = child.wait().expect("the server exits");
    let mut stderr = String::new();
    child
        .stderr
        .take()
        .expect("piped")
        .read_to_string(&mut stderr)
        .expect("readable");
    assert!(status.success(), "exit status {status}, stderr: {stderr}");
    assert!(
        String::from_utf8_lossy(&banner).trim() == "running 1 test",
        "only the test harness's banner precedes the first message: {:?}",
        String::from_utf8_lossy(&banner)
    );
}

#[test]
fn signature_help_prepare_rename_and_range_formatting() {
    let mut client = Client::start();
    client.open(URI, MINI);
    let help = client.call(
        "textDocument/signatureHelp",
        text_position(URI, at(MINI, "clamp01(hit_prob[c]", 0, 8)),
    );
    let signature = &help["signatures"][0];
    assert!(
        signature["label"]
            .as_str()
            .is_some_and(|l| l.starts_with("fn clamp01(")),
        "{help}"
    );
    assert_eq!(help["activeParameter"], json!(0));
    let range = client.call(
        "textDocument/prepareRename",
        text_position(URI, at(MINI, "clamp01(hit_prob[c]", 0, 2)),
    );
    assert_eq!(range["start"], at(MINI, "clamp01(hit_prob[c]", 0, 0));
    assert_eq!(range["end"], at(MINI, "clamp01(hit_prob[c]", 0, 7));
    // The example is formatted, so no range of it needs an edit.
    let edits = client.call(
        "textDocument/rangeFormatting",
        json!({ "textDocument": { "uri": URI }, "options": { "tabSize": 2, "insertSpaces": true },
                "range": { "start": position(MINI, 0), "end": position(MINI, MINI.len()) } }),
    );
    assert_eq!(edits, json!([]));
    client.shutdown();
}

/// A 100,000-link chain that merely sits in the folder of the file being edited: the server
/// loads it as a sibling module and checks it with the rest, and still answers for the open file.
#[test]
fn a_chain_of_a_hundred_thousand_links_beside_the_open_file_does_not_stop_the_server() {
    let dir = std::env::temp_dir().join(format!("harness-lsp-sibling-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a temporary folder");
    let chain = format!(
        "harness chain\n\nconst A: Int = 1{}\nconst C: Int = 2\n",
        " + 1".repeat(100_000)
    );
    std::fs::write(dir.join("chain.harness"), chain).expect("the sibling is written");
    let uri = format!("file://{}/mini.harness", dir.display());
    let mut client = Client::start();
    let text = MINI.replacen(
        "clamp01(hit_prob[c] + EPSILON)",
        "clamp01(hit_prb[c] + EPSILON)",
        1,
    );
    let diagnostics = client.open(&uri, &text);
    assert_eq!(codes(&diagnostics), ["E0101"], "{diagnostics:?}");
    // A module that uses a constant of the chain's module resolves it: the sibling was loaded
    // and checked, not skipped.
    let user = format!("file://{}/user.harness", dir.display());
    let diagnostics = client.open(
        &user,
        "harness user\n\nuse chain.{C}\n\nconst _B: Int = C\n",
    );
    assert_eq!(codes(&diagnostics), Vec::<String>::new(), "{diagnostics:?}");
    let symbols = client.request(
        "textDocument/documentSymbol",
        json!({ "textDocument": { "uri": uri } }),
    );
    assert!(symbols.error.is_none(), "{:?}", symbols.error);
    client.shutdown();
    std::fs::remove_dir_all(&dir).expect("the temporary folder is removed");
}

/// The issue's flat chains, 100,000 links long, opened in the editor: the server answers with
/// diagnostics for each (the chain is too long, E0011) and stays alive for the requests that
/// follow. The server runs on a thread with the default stack, as a test thread does.
#[test]
fn chains_of_a_hundred_thousand_links_get_diagnostics_and_the_server_goes_on() {
    let links = 100_000;
    let chains = [
        format!("1{}", " + 1".repeat(links)),
        format!("xs{}.len()", ".take(1)".repeat(links)),
        format!("xs{}", "[0]".repeat(links)),
        format!("r{}", ".b".repeat(links)),
    ];
    let mut client = Client::start();
    for (i, chain) in chains.iter().enumerate() {
        let uri = format!("file:///nonexistent/harness-lsp-test/chain{i}.harness");
        let text =
            format!("harness chain{i}\n\nconst xs: List<Int> = [1]\nconst A: Int = {chain}\n");
        let diagnostics = client.open(&uri, &text);
        assert!(
            codes(&diagnostics).iter().any(|c| c == "E0011"),
            "chain {i}: {:?}",
            codes(&diagnostics)
        );
        // The server is still there: a request on the file is answered.
        let symbols = client.request(
            "textDocument/documentSymbol",
            json!({ "textDocument": { "uri": uri } }),
        );
        assert!(symbols.error.is_none(), "chain {i}: {:?}", symbols.error);
        let hover = client.request(
            "textDocument/hover",
            text_position(&uri, json!({ "line": 3, "character": 20 })),
        );
        assert!(hover.error.is_none(), "chain {i}: {:?}", hover.error);
    }
    client.shutdown();
}
