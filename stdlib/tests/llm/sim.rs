//! The simulated model: persona files, intents, noise channels scaled by temperature, seeded
//! draws, token counts, and the same client path as a real server.

use std::sync::Arc;

use harness_stdlib::llm::{
    CallMode, ClientOptions, Decoding, FieldSpec, FieldType, FieldValue, LlmClient, LlmRequest,
    OutcomeKind, Persona, ProviderConfig, ProviderKind, ReplyShape, SchemaMode, SimTransport,
};

const PERSONA: &str = r#"
name = "tester"
description = "Answers from the prompt, noisily above temperature 0."

[tokens]
chars_per_token = 4

[latency]
base_ms = 100
per_token_ms = 2

[effects.pick]
reply.cell = { capture = 'best cell: (\d+)' }
reply.label = "alpha_beta"
reply.note = { capture = 'note: (\w+)', default = "none" }
noise = { wrong_value = 0.3, malformed = 0.3, missing_field = 0.3, reorder = 0.3, paraphrase = 0.3, no_answer = 0.1 }

[effects.plan]
reply.steps = [ { tool = "load" }, { tool = "check" }, { tool = "report" } ]
noise = { reorder = 1.0 }

[effects.next]
reply = { next_in = ["load", "check", "report"], done = 'done: \[([^\]]*)\]', default = "stop" }
"#;

fn pick_shape() -> ReplyShape {
    ReplyShape::Record {
        fields: vec![
            FieldSpec::required(
                "cell",
                FieldType::Int {
                    min: Some(0),
                    max: Some(9),
                },
            ),
            FieldSpec::required(
                "label",
                FieldType::Choice {
                    allowed: vec!["alpha_beta".into(), "gamma".into()],
                },
            ),
            FieldSpec::required("note", FieldType::String),
        ],
    }
}

fn plan_shape() -> ReplyShape {
    ReplyShape::Record {
        fields: vec![FieldSpec::required(
            "steps",
            FieldType::List {
                item: Box::new(FieldType::Record {
                    fields: vec![FieldSpec::required("tool", FieldType::String)],
                }),
                min_len: 1,
                max_len: 5,
            },
        )],
    }
}

fn sim_client(temperature: Option<f64>, schema: SchemaMode) -> LlmClient {
    let persona = Persona::parse(PERSONA).unwrap();
    let config = ProviderConfig {
        kind: ProviderKind::Sim,
        base_url: ProviderKind::Sim.default_base_url().into(),
        model: persona.name.clone(),
        api_key: None,
    };
    let options = ClientOptions {
        decoding: Decoding {
            temperature,
            schema,
            ..Decoding::default()
        },
        ..ClientOptions::default()
    };
    LlmClient::new(
        config,
        Arc::new(SimTransport::new(persona)),
        options,
        CallMode::Live,
    )
}

fn pick(user: &str) -> LlmRequest {
    LlmRequest::new("Pick a cell.", user, pick_shape()).for_effect("pick")
}

#[test]
fn at_temperature_zero_the_intent_comes_back_exactly() {
    let mut client = sim_client(Some(0.0), SchemaMode::Json);
    for replicate in 0..50 {
        client.start_game(replicate);
        let call = client.call(&pick("best cell: 7, note: edge"));
        assert_eq!(call.record.outcome, OutcomeKind::Ok, "{:?}", call.outcome);
        let value = call.outcome.unwrap();
        assert_eq!(value.field("cell"), Some(&FieldValue::Int(7)));
        assert_eq!(
            value.field("label"),
            Some(&FieldValue::Str("alpha_beta".into()))
        );
        assert_eq!(value.field("note"), Some(&FieldValue::Str("edge".into())));
        assert_eq!(
            call.content.as_deref(),
            Some(r#"{"cell": 7, "label": "alpha_beta", "note": "edge"}"#),
            "no channel fires at temperature 0"
        );
    }
    // A pattern that does not match takes its default.
    client.start_game(0);
    let call = client.call(&pick("best cell: 2"));
    assert_eq!(
        call.outcome.unwrap().field("note"),
        Some(&FieldValue::Str("none".into()))
    );
}

#[test]
fn noise_fires_by_temperature_and_the_same_replicate_gives_the_same_answer() {
    let mut client = sim_client(Some(1.0), SchemaMode::Json);
    let mut kinds = std::collections::BTreeSet::new();
    let mut texts = std::collections::BTreeSet::new();
    for replicate in 0..200 {
        client.start_game(replicate);
        let call = client.call(&pick("best cell: 7, note: edge"));
        client.start_game(replicate);
        let again = client.call(&pick("best cell: 7, note: edge"));
        assert_eq!(call.content, again.content, "replicate {replicate}");
        assert_eq!(call.outcome, again.outcome);
        kinds.insert(format!("{:?}", call.record.outcome));
        texts.insert(call.content.unwrap_or_default());
    }
    for kind in ["Ok", "MalformedJson", "SchemaViolation", "OutOfRange"] {
        assert!(kinds.contains(kind), "{kind} never happened: {kinds:?}");
    }
    assert!(texts.len() > 20, "{} distinct replies", texts.len());
    assert!(texts.contains(""), "no_answer fired");
}

#[test]
fn strict_decoding_never_produces_what_a_schema_forbids() {
    let mut client = sim_client(Some(1.0), SchemaMode::Strict);
    for replicate in 0..200 {
        client.start_game(replicate);
        let call = client.call(&pick("best cell: 7, note: edge"));
        assert!(
            matches!(
                call.record.outcome,
                OutcomeKind::Ok | OutcomeKind::MalformedJson
            ),
            "{:?}",
            call.outcome
        );
        // The only malformed reply left is the empty one: no answer at all.
        if call.record.outcome == OutcomeKind::MalformedJson {
            assert_eq!(call.content.as_deref(), Some(""));
        }
    }
}

#[test]
fn lists_are_reordered_and_next_in_walks_a_procedure() {
    let mut client = sim_client(Some(1.0), SchemaMode::Json);
    client.start_game(1);
    let plan = LlmRequest::new("", "plan it", plan_shape()).for_effect("plan");
    let call = client.call(&plan);
    let Some(FieldValue::List(steps)) = call.outcome.unwrap().field("steps").cloned() else {
        panic!("a list");
    };
    assert_eq!(steps.len(), 3);
    let content = call.content.unwrap();
    assert_ne!(
        content, r#"{"steps": [{"tool": "load"}, {"tool": "check"}, {"tool": "report"}]}"#,
        "reorder fires at rate 1"
    );

    let next_shape = ReplyShape::Enum {
        variants: vec![
            "load".into(),
            "check".into(),
            "report".into(),
            "stop".into(),
        ],
    };
    let next = |done: &str| {
        LlmRequest::new("", format!("done: [{done}]"), next_shape.clone()).for_effect("next")
    };
    let mut answers = Vec::new();
    for done in ["", "load", "load, check", "\"load\", \"check\", \"report\""] {
        client.start_game(0);
        answers.push(format!("{:?}", client.call(&next(done)).outcome.unwrap()));
    }
    for (answer, want) in answers.iter().zip(["load", "check", "report", "stop"]) {
        assert!(answer.contains(&format!("\"{want}\"")), "{answer}");
    }
}

#[test]
fn tokens_and_latency_are_declared() {
    let mut client = sim_client(Some(0.0), SchemaMode::Json);
    client.start_game(0);
    let request = pick("best cell: 7, note: edge");
    let call = client.call(&request);
    let prompt_chars = "Pick a cell.\nbest cell: 7, note: edge".chars().count() as u64;
    assert_eq!(call.record.prompt_tokens, Some(prompt_chars.div_ceil(4)));
    let completion = call.content.as_ref().unwrap().chars().count() as u64;
    assert_eq!(call.record.completion_tokens, Some(completion.div_ceil(4)));
    assert_eq!(
        call.record.latency_ms,
        100 + 2 * completion.div_ceil(4),
        "the declared latency, not the wall time"
    );
    assert_eq!(call.record.provider, ProviderKind::Sim);
    assert_eq!(call.record.model, "tester");
}

#[test]
fn bad_personas_say_where_and_what() {
    let cases = [
        ("name = 3", "name"),
        ("name = \"x\"", "effects"),
        ("name = \"x\"\n[effects.a]\nnoise = {}", "reply"),
        (
            "name = \"x\"\n[effects.a]\nreply = 1\nnoise = { wrong_value = 2.0 }",
            "effects.a.noise.wrong_value",
        ),
        (
            "name = \"x\"\n[effects.a]\nreply = 1\nnoise = { wrong = 0.1 }",
            "unknown key `wrong`",
        ),
        (
            "name = \"x\"\n[effects.a]\nreply = { capture = '(' }",
            "effects.a.reply.capture",
        ),
        (
            "name = \"x\"\n[effects.a]\nreply = { capture = 'no group' }",
            "capture group",
        ),
        (
            "name = \"x\"\n[effects.a]\nreply = { next_in = [1] }",
            "done",
        ),
        ("not toml at all = = =", "expected"),
    ];
    for (text, wanted) in cases {
        let error = Persona::parse(text).unwrap_err().to_string();
        assert!(error.contains(wanted), "{text:?}: {error}");
    }
    let persona = Persona::parse(PERSONA).unwrap();
    assert_eq!(persona.digest.len(), 64);
    let missing = persona
        .check(&[("revise".into(), pick_shape())])
        .unwrap_err()
        .to_string();
    assert!(missing.contains("[effects.revise]"), "{missing}");
    let typo = Persona::parse("name = \"x\"\n[effects.pick]\nreply.cel = 1")
        .unwrap()
        .check(&[("pick".into(), pick_shape())])
        .unwrap_err()
        .to_string();
    assert!(typo.contains("no field `cel`"), "{typo}");
}
