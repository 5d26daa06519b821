//! Decoding control: temperature, top-p, seed, max tokens and the extra body on both wires, in
//! the request hash; strict schema decoding and its fallback to JSON mode.

use harness_stdlib::llm::{
    CallMode, Decoding, LlmFailure, ProviderKind, ReplyShape, SchemaMode, request_hash,
};
use serde_json::json;

use crate::server::{Behavior, TestServer};
use crate::{GOOD_REPLY, client, options, provider, request};

fn decoding() -> Decoding {
    Decoding {
        temperature: Some(0.7),
        top_p: Some(0.9),
        seed: Some(42),
        max_tokens: Some(256),
        extra_body: Some(
            json!({ "provider": { "order": ["a"], "allow_fallbacks": false }, "options": { "num_ctx": 4096 } })
                .as_object()
                .unwrap()
                .clone(),
        ),
        schema: SchemaMode::Json,
    }
}

#[test]
fn decoding_settings_go_where_each_protocol_wants_them() {
    for kind in [ProviderKind::Ollama, ProviderKind::OpenAiCompatible] {
        let server = TestServer::start(vec![Behavior::Reply(GOOD_REPLY.into())]);
        let mut opts = options(2_000, 1);
        opts.decoding = decoding();
        let mut client = client(
            provider(kind, server.base_url(kind), None),
            opts,
            CallMode::Live,
        );
        assert!(client.call(&request("x")).outcome.is_ok());
        let body = server.received()[0].json();
        assert_eq!(
            body["provider"]["order"],
            json!(["a"]),
            "{kind}: extra body"
        );
        match kind {
            ProviderKind::Ollama => {
                assert_eq!(
                    body["options"],
                    json!({ "temperature": 0.7, "top_p": 0.9, "seed": 42, "num_predict": 256, "num_ctx": 4096 }),
                    "Ollama's options are merged key by key"
                );
                assert_eq!(body["format"], "json");
                assert!(body.get("temperature").is_none());
            }
            _ => {
                assert_eq!(
                    (
                        &body["temperature"],
                        &body["top_p"],
                        &body["seed"],
                        &body["max_tokens"]
                    ),
                    (&json!(0.7), &json!(0.9), &json!(42), &json!(256))
                );
                assert_eq!(body["response_format"], json!({ "type": "json_object" }));
            }
        }
    }
}

#[test]
fn every_decoding_setting_is_part_of_the_request_hash() {
    let base = request("state");
    let hash = |d: &Decoding| request_hash(ProviderKind::OpenAiCompatible, "m", d, &base);
    let plain = hash(&Decoding::default());
    let variants = [
        Decoding {
            temperature: Some(0.0),
            ..Decoding::default()
        },
        Decoding {
            temperature: Some(1.0),
            ..Decoding::default()
        },
        Decoding {
            top_p: Some(0.5),
            ..Decoding::default()
        },
        Decoding {
            seed: Some(1),
            ..Decoding::default()
        },
        Decoding {
            max_tokens: Some(9),
            ..Decoding::default()
        },
        Decoding {
            extra_body: Some(json!({"x": 1}).as_object().unwrap().clone()),
            ..Decoding::default()
        },
        Decoding {
            schema: SchemaMode::Json,
            ..Decoding::default()
        },
    ];
    let mut seen = vec![plain];
    for variant in &variants {
        let h = hash(variant);
        assert!(!seen.contains(&h), "{variant:?}");
        seen.push(h);
    }
    // The effect's name is part of the request, too.
    let named = base.clone().for_effect("plan");
    assert_ne!(
        request_hash(
            ProviderKind::OpenAiCompatible,
            "m",
            &Decoding::default(),
            &named
        ),
        seen[0]
    );
}

#[test]
fn a_server_refusing_the_schema_gets_json_mode_for_the_rest_of_the_run() {
    for kind in [ProviderKind::Ollama, ProviderKind::OpenAiCompatible] {
        let server = TestServer::start(vec![Behavior::RefuseSchema(GOOD_REPLY.into())]);
        let mut client = client(
            provider(kind, server.base_url(kind), None),
            options(2_000, 1),
            CallMode::Live,
        );
        let mut worker = client.clone();
        let first = client.call(&request("1"));
        assert!(first.outcome.is_ok(), "{kind}: {:?}", first.outcome);
        assert!(first.record.schema_fallback);
        assert_eq!(first.record.attempts, 2);
        assert!(client.schema_refused());
        // A clone made before the refusal learns it too: clones share what the run learnt.
        let second = worker.call(&request("2"));
        assert!(second.outcome.is_ok());
        assert_eq!(second.record.attempts, 1, "{kind}: JSON mode straight away");
        let received = server.received();
        assert_eq!(received.len(), 3);
        let json_mode = |i: usize| {
            let body = received[i].json();
            body["format"] == "json" || body["response_format"]["type"] == "json_object"
        };
        assert_eq!(
            (json_mode(0), json_mode(1), json_mode(2)),
            (false, true, true)
        );
    }
}

#[test]
fn a_bad_request_in_json_mode_too_is_reported_and_not_learnt() {
    let kind = ProviderKind::OpenAiCompatible;
    let server = TestServer::start(vec![Behavior::Status(400, "{\"error\":\"bad\"}".into())]);
    let mut client = client(
        provider(kind, server.base_url(kind), None),
        options(2_000, 1),
        CallMode::Live,
    );
    let call = client.call(&request("x"));
    assert!(matches!(
        call.outcome,
        Err(LlmFailure::HttpStatus { code: 400, .. })
    ));
    assert!(!client.schema_refused(), "the schema was not the problem");
}

#[test]
fn enum_and_list_replies_have_json_schemas() {
    let shape = ReplyShape::Enum {
        variants: vec!["left".into(), "right".into()],
    };
    assert_eq!(
        shape.json_schema(),
        json!({
            "type": "object",
            "properties": { "choice": { "type": "string", "enum": ["left", "right"] } },
            "required": ["choice"],
            "additionalProperties": false,
        })
    );
}
