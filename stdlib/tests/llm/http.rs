//! The real HTTP transport against the loopback server: both protocols and every failure.

use std::time::{Duration, Instant};

use harness_stdlib::llm::{
    CallMode, CallSource, FieldValue, LlmCall, LlmFailure, OutcomeKind, ProviderConfig,
    ProviderKind, ReplyShape, ReplyValue,
};

use crate::server::{Behavior, OLLAMA_USAGE, OPENAI_USAGE, TestServer, closed_port_url};
use crate::{GOOD_REPLY, SECRET, client, options, provider, request};

/// One call with the given provider against a server following `script`.
fn call_once(kind: ProviderKind, script: Vec<Behavior>) -> (LlmCall, TestServer) {
    let server = TestServer::start(script);
    let mut client = client(
        provider(kind, server.base_url(kind), Some(SECRET)),
        options(2_000, 1),
        CallMode::Live,
    );
    let call = client.call(&request("state"));
    (call, server)
}

fn both() -> [ProviderKind; 2] {
    [ProviderKind::Ollama, ProviderKind::OpenAiCompatible]
}

#[test]
fn ollama_reply_is_typed_and_accounted() {
    let server = TestServer::start(vec![Behavior::Reply(GOOD_REPLY.into())]);
    let config = provider(
        ProviderKind::Ollama,
        server.base_url(ProviderKind::Ollama),
        None,
    );
    let mut client = client(config, options(2_000, 1), CallMode::Live);
    let call = client.call(&request("turn 7"));

    let value = call.outcome.unwrap();
    assert_eq!(value.field("coarseBudget"), Some(&FieldValue::Int(4)));
    let record = call.record;
    assert_eq!(record.provider, ProviderKind::Ollama);
    assert_eq!(record.model, "test-model");
    assert_eq!(
        (record.prompt_tokens, record.completion_tokens),
        (Some(OLLAMA_USAGE.0), Some(OLLAMA_USAGE.1))
    );
    assert_eq!(
        (record.attempts, record.outcome, record.source),
        (1, OutcomeKind::Ok, CallSource::Live)
    );
    assert!(!record.fallback_applied);
    assert_eq!(record.request_hash.len(), 64);

    let received = server.received();
    assert_eq!(received.len(), 1);
    let sent = &received[0];
    assert_eq!(
        (sent.method.as_str(), sent.path.as_str()),
        ("POST", "/api/chat")
    );
    assert_eq!(sent.header("authorization"), None, "no key, no header");
    let body = sent.json();
    assert_eq!(body["model"], "test-model");
    assert_eq!(body["stream"], false);
    // Strict decoding by default: the reply's JSON Schema, every field listed.
    assert_eq!(body["format"]["type"], "object");
    assert_eq!(body["format"]["required"].as_array().unwrap().len(), 5);
    assert_eq!(
        body["format"]["properties"]["coarseBudget"],
        serde_json::json!({"type": "integer", "minimum": 0, "maximum": 15})
    );
    assert_eq!(body["messages"][0]["role"], "system");
    assert_eq!(body["messages"][1]["role"], "user");
    assert_eq!(body["messages"][1]["content"], "turn 7");
}

#[test]
fn openai_reply_is_typed_and_the_key_goes_only_in_the_authorization_header() {
    let (call, server) = call_once(
        ProviderKind::OpenAiCompatible,
        vec![Behavior::Reply(GOOD_REPLY.into())],
    );
    assert_eq!(
        call.outcome.unwrap().field("revisionKind"),
        Some(&FieldValue::Str("narrow".into()))
    );
    assert_eq!(
        (call.record.prompt_tokens, call.record.completion_tokens),
        (Some(OPENAI_USAGE.0), Some(OPENAI_USAGE.1))
    );
    let received = server.received();
    let sent = &received[0];
    assert_eq!(sent.path, "/v1/chat/completions");
    assert_eq!(
        sent.header("authorization"),
        Some(format!("Bearer {SECRET}").as_str())
    );
    let elsewhere = sent
        .headers
        .iter()
        .filter(|(name, _)| name != "authorization")
        .any(|(name, value)| name.contains(SECRET) || value.contains(SECRET));
    assert!(!elsewhere && !sent.body.contains(SECRET) && !sent.path.contains(SECRET));
    let body = sent.json();
    assert_eq!(body["response_format"]["type"], "json_schema");
    assert_eq!(body["response_format"]["json_schema"]["strict"], true);
    assert_eq!(
        body["response_format"]["json_schema"]["schema"]["properties"]["revisionKind"]["enum"],
        serde_json::json!(["widen", "narrow", "salvage"])
    );
    assert_eq!(body["model"], "test-model");
    assert!(body.get("stream").is_none() && body.get("format").is_none());
}

#[test]
fn json_mode_off_sends_no_format_flag_and_a_request_may_name_its_model() {
    for kind in both() {
        let server = TestServer::start(vec![Behavior::Reply(GOOD_REPLY.into())]);
        let mut client = client(
            provider(kind, server.base_url(kind), None),
            options(2_000, 1),
            CallMode::Live,
        );
        let mut req = request("x");
        req.json_mode = false;
        req.model = Some("decision-model".into());
        req.system.clear();
        let call = client.call(&req);
        assert!(call.outcome.is_ok(), "{kind}: {:?}", call.outcome);
        assert_eq!(call.record.model, "decision-model");
        let body = server.received()[0].json();
        assert_eq!(body["model"], "decision-model");
        assert!(body.get("format").is_none() && body.get("response_format").is_none());
        assert_eq!(
            body["messages"].as_array().unwrap().len(),
            1,
            "empty system prompt dropped"
        );
    }
}

#[test]
fn prose_around_the_json_is_tolerated_and_enum_replies_work() {
    for kind in both() {
        let wrapped = format!("Here you go:\n```json\n{GOOD_REPLY}\n```");
        let (call, _server) = call_once(kind, vec![Behavior::Reply(wrapped)]);
        assert!(call.outcome.is_ok(), "{kind}: {:?}", call.outcome);

        let server = TestServer::start(vec![Behavior::Reply(r#"{"choice":"shoot"}"#.into())]);
        let mut client = client(
            provider(kind, server.base_url(kind), None),
            options(2_000, 1),
            CallMode::Live,
        );
        let mut req = request("x");
        req.shape = ReplyShape::Enum {
            variants: vec!["ask".into(), "shoot".into()],
        };
        assert_eq!(
            client.call(&req).outcome,
            Ok(ReplyValue::Enum {
                variant: "shoot".into()
            })
        );
    }
}

#[test]
fn malformed_replies_and_envelopes_are_malformed_json() {
    for kind in both() {
        let (call, _server) = call_once(kind, vec![Behavior::Reply("I think narrow, 4".into())]);
        assert!(
            matches!(&call.outcome, Err(LlmFailure::MalformedJson { excerpt, .. }) if excerpt == "I think narrow, 4"),
            "{kind}: {:?}",
            call.outcome
        );
        assert_eq!(call.record.outcome, OutcomeKind::MalformedJson);
        assert!(
            call.record.prompt_tokens.is_some(),
            "usage is kept for bad replies"
        );

        let (call, _server) = call_once(kind, vec![Behavior::RawBody("<html>oops</html>".into())]);
        assert!(
            matches!(&call.outcome, Err(LlmFailure::MalformedJson { detail, .. }) if detail.starts_with("response envelope")),
            "{kind}: {:?}",
            call.outcome
        );
        let (call, _server) = call_once(kind, vec![Behavior::RawBody(r#"{"done":true}"#.into())]);
        assert!(
            matches!(&call.outcome, Err(LlmFailure::MalformedJson { detail, .. }) if detail.contains("message.content")),
            "{kind}: {:?}",
            call.outcome
        );
    }
}

#[test]
fn out_of_schema_and_out_of_range_replies_are_typed_failures() {
    for kind in both() {
        let (call, server) = call_once(
            kind,
            vec![Behavior::Reply(
                r#"{"revisionKind":"narrow","coarseBudget":"lots"}"#.into(),
            )],
        );
        assert_eq!(
            call.outcome,
            Err(LlmFailure::SchemaViolation {
                field: "coarseBudget".into(),
                expected: "an integer in [0, 15]".into(),
                found: "a string \"lots\"".into(),
            }),
            "{kind}"
        );
        assert_eq!(server.received().len(), 1, "schema errors are not retried");

        let (call, _server) = call_once(
            kind,
            vec![Behavior::Reply(
                r#"{"revisionKind":"narrow","coarseBudget":40}"#.into(),
            )],
        );
        assert_eq!(
            call.outcome,
            Err(LlmFailure::OutOfRange {
                field: "coarseBudget".into(),
                value: "40".into(),
                range: "[0, 15]".into(),
            }),
            "{kind}"
        );
        assert_eq!(call.record.outcome, OutcomeKind::OutOfRange);
    }
}

#[test]
fn http_errors_are_reported_with_status_and_never_retried() {
    for kind in both() {
        for code in [500, 401] {
            let server =
                TestServer::start(vec![Behavior::Status(code, "{\"error\":\"no\"}".into())]);
            let mut client = client(
                provider(kind, server.base_url(kind), Some(SECRET)),
                options(2_000, 3),
                CallMode::Live,
            );
            let call = client.call(&request("x"));
            assert_eq!(
                call.outcome,
                Err(LlmFailure::HttpStatus {
                    code,
                    body_excerpt: "{\"error\":\"no\"}".into()
                }),
                "{kind}"
            );
            assert_eq!(call.record.attempts, 1, "{kind} {code}");
            assert_eq!(server.received().len(), 1, "{kind} {code}");
            assert_eq!(call.record.outcome, OutcomeKind::HttpStatus);
        }
    }
}

#[test]
fn a_stalled_server_times_out_within_the_bound() {
    for kind in both() {
        let server = TestServer::start(vec![Behavior::Stall]);
        let mut client = client(
            provider(kind, server.base_url(kind), None),
            options(300, 1),
            CallMode::Live,
        );
        let started = Instant::now();
        let call = client.call(&request("x"));
        let elapsed = started.elapsed();
        assert_eq!(
            call.outcome,
            Err(LlmFailure::Timeout { after_ms: 300 }),
            "{kind}"
        );
        assert!(
            elapsed >= Duration::from_millis(250) && elapsed < Duration::from_millis(1_500),
            "{kind}: took {elapsed:?}"
        );
        assert_eq!(call.record.attempts, 1);
        assert!(call.record.latency_ms >= 250, "{}", call.record.latency_ms);
    }
}

#[test]
fn timeouts_are_retried_a_bounded_number_of_times() {
    let server = TestServer::start(vec![Behavior::Stall]);
    let kind = ProviderKind::Ollama;
    let mut client = client(
        provider(kind, server.base_url(kind), None),
        options(200, 3),
        CallMode::Live,
    );
    let started = Instant::now();
    let call = client.call(&request("x"));
    assert_eq!(call.outcome, Err(LlmFailure::Timeout { after_ms: 200 }));
    assert_eq!(call.record.attempts, 3);
    assert_eq!(server.received().len(), 3);
    // Three 200 ms attempts and pauses of 10 and 20 ms, with slack for a busy machine.
    assert!(
        started.elapsed() < Duration::from_millis(2_000),
        "{:?}",
        started.elapsed()
    );
}

#[test]
fn a_slow_first_answer_is_retried_and_the_second_succeeds() {
    for kind in both() {
        let server = TestServer::start(vec![
            Behavior::Slow(Duration::from_millis(900), GOOD_REPLY.into()),
            Behavior::Reply(GOOD_REPLY.into()),
        ]);
        let mut client = client(
            provider(kind, server.base_url(kind), None),
            options(300, 3),
            CallMode::Live,
        );
        let call = client.call(&request("x"));
        assert!(call.outcome.is_ok(), "{kind}: {:?}", call.outcome);
        assert_eq!(call.record.attempts, 2, "{kind}");
        assert_eq!(server.received().len(), 2, "{kind}");
    }
}

#[test]
fn dropped_and_refused_connections_are_transport_errors_and_are_retried() {
    let server = TestServer::start(vec![Behavior::Close, Behavior::Reply(GOOD_REPLY.into())]);
    let kind = ProviderKind::OpenAiCompatible;
    let mut client_a = client(
        provider(kind, server.base_url(kind), None),
        options(2_000, 3),
        CallMode::Live,
    );
    let call = client_a.call(&request("x"));
    assert!(call.outcome.is_ok(), "{:?}", call.outcome);
    assert_eq!(call.record.attempts, 2);

    let mut client_b = client(
        provider(kind, closed_port_url(), None),
        options(2_000, 3),
        CallMode::Live,
    );
    let call = client_b.call(&request("x"));
    assert!(
        matches!(call.outcome, Err(LlmFailure::Transport { .. })),
        "{:?}",
        call.outcome
    );
    assert_eq!(call.record.attempts, 3);
    assert_eq!(call.record.outcome, OutcomeKind::Transport);
}

#[test]
fn unusable_urls_fail_without_panicking_or_retrying() {
    for base_url in ["http://[::1", "http://exa mple.org", "not a url", ""] {
        let config = ProviderConfig {
            base_url: base_url.into(),
            ..provider(ProviderKind::Ollama, String::new(), None)
        };
        let mut client = client(config, options(500, 3), CallMode::Live);
        let call = client.call(&request("x"));
        assert!(
            matches!(call.outcome, Err(LlmFailure::Transport { .. })),
            "{base_url}: {:?}",
            call.outcome
        );
        assert_eq!(call.record.attempts, 1, "{base_url}");
    }
}

#[test]
fn the_budget_stops_calls_until_the_next_game() {
    let server = TestServer::start(vec![Behavior::Reply(GOOD_REPLY.into())]);
    let kind = ProviderKind::Ollama;
    let mut opts = options(2_000, 1);
    opts.budget_per_game = Some(2);
    let mut client = client(
        provider(kind, server.base_url(kind), None),
        opts,
        CallMode::Live,
    );
    assert!(client.call(&request("1")).outcome.is_ok());
    assert!(client.call(&request("2")).outcome.is_ok());
    let third = client.call(&request("3"));
    assert_eq!(
        third.outcome,
        Err(LlmFailure::BudgetExhausted { budget: 2 })
    );
    assert_eq!(
        (third.record.attempts, third.record.source),
        (0, CallSource::NotSent)
    );
    assert_eq!(
        server.received().len(),
        2,
        "an exhausted budget sends nothing"
    );
    assert_eq!(client.calls_this_game(), 2);

    client.start_game(0);
    assert_eq!(client.calls_this_game(), 0);
    assert!(client.call(&request("4")).outcome.is_ok());
    assert_eq!(server.received().len(), 3);
}

#[test]
fn the_key_appears_in_no_failure_record_or_debug_string() {
    let echo = format!("{{\"error\":\"Incorrect API key provided: {SECRET}\"}}");
    let kind = ProviderKind::OpenAiCompatible;
    let server = TestServer::start(vec![
        Behavior::Status(401, echo.clone()),
        Behavior::RawBody(echo),
        Behavior::Reply(format!(
            "{{\"revisionKind\":\"{SECRET}\",\"coarseBudget\":1}}"
        )),
        Behavior::Stall,
    ]);
    let mut calls = Vec::new();
    let mut live = client(
        provider(kind, server.base_url(kind), Some(SECRET)),
        options(300, 1),
        CallMode::Live,
    );
    for _ in 0..4 {
        calls.push(live.call(&request("x")));
    }
    // A key pasted into the URL by mistake must not leak through the client's error either.
    let mut leaky_url = client(
        provider(
            kind,
            format!("{}/{SECRET}", closed_port_url()),
            Some(SECRET),
        ),
        options(300, 1),
        CallMode::Live,
    );
    calls.push(leaky_url.call(&request("x")));
    let kinds: Vec<OutcomeKind> = calls.iter().map(|c| c.record.outcome).collect();
    assert_eq!(
        kinds,
        [
            OutcomeKind::HttpStatus,
            OutcomeKind::MalformedJson,
            OutcomeKind::SchemaViolation,
            OutcomeKind::Timeout,
            OutcomeKind::Transport
        ]
    );
    for call in &calls {
        let failure = call.outcome.as_ref().unwrap_err();
        for text in [
            failure.to_string(),
            format!("{failure:?}"),
            format!("{:?}", call.record),
            serde_json::to_string(failure).unwrap(),
            serde_json::to_string(&call.record).unwrap(),
        ] {
            assert!(!text.contains(SECRET), "{text}");
        }
    }
    assert!(
        calls[0]
            .outcome
            .as_ref()
            .unwrap_err()
            .to_string()
            .contains("<redacted>")
    );
    assert!(!format!("{live:?}").contains(SECRET));
}

#[test]
fn backoff_doubles_from_the_initial_pause_up_to_the_cap() {
    let policy = harness_stdlib::llm::RetryPolicy {
        max_attempts: 10,
        initial_backoff: Duration::from_millis(100),
        max_backoff: Duration::from_millis(350),
        max_retry_after: Duration::from_secs(1),
    };
    let pauses: Vec<u128> = (1..=5)
        .map(|n| policy.backoff_before(n).as_millis())
        .collect();
    assert_eq!(pauses, [0, 100, 200, 350, 350]);
    assert_eq!(harness_stdlib::llm::RetryPolicy::none().max_attempts, 1);
}
