//! The Battleship L4 layer end to end: the harness's `llm revise_policy` effect, the runtime's
//! `LlmHost` seam, the standard library's `ClientHost` and the real HTTP transport, against the
//! loopback server of the LLM transport tests.

#[allow(dead_code)]
#[path = "../../stdlib/tests/llm/server.rs"]
mod server;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use harness_compiler::Workspace;
use harness_compiler::ir::Program;
use harness_runtime::EpisodeResult;
use harness_runtime::{
    Event, EventKind, GameKind, GameOptions, Limits, LlmHost, Machine, RngStreams, Switches, Value,
    run_episode_with_llm, to_json_lines,
};
use harness_stdlib::llm::{
    CallMode, ClientHost, ClientOptions, DirStore, LlmClient, ProviderConfig, ProviderKind,
    RetryPolicy,
};
use server::{Behavior, TestServer};

/// The four Battleship layers, checked and lowered with `battleship.revision` on top.
fn program() -> Arc<Program> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../harnesses/battleship");
    let mut workspace = Workspace::new(harness_tests::signatures());
    for name in ["belief", "planning", "reflection", "revision"] {
        let path = dir.join(format!("{name}.harness"));
        let text = std::fs::read_to_string(&path).expect("the Battleship harness is readable");
        workspace.set_file(&path.display().to_string(), &text);
    }
    workspace
        .program("battleship.revision")
        .expect("the Battleship harness checks")
}

/// A machine for the given layers. A confidence threshold of 1.0 (the paper's L4 setting) opens
/// the revision gate often; few particles keep the games quick.
fn machine(layers: &[&str]) -> Machine {
    let kind = harness_battleship::play::Battleship;
    let mut natives = harness_stdlib::prelude::natives();
    natives.extend(&kind.natives());
    let switches = Switches {
        layers: Some(layers.iter().map(|l| (*l).to_owned()).collect()),
        without: Vec::new(),
        set: vec![
            ("particles".into(), "60".into()),
            ("confidence_threshold".into(), "1.0".into()),
        ],
        set_json: Vec::new(),
    };
    Machine::new(program(), natives, &switches, Limits::default()).expect("the machine starts")
}

const L4: &[&str] = &["belief", "planning", "reflection", "revision"];
const L3: &[&str] = &["belief", "planning", "reflection"];

/// The seed of every game here, which is also the replicate of its LLM calls.
const SEED: u64 = 1;

/// Plays board B03, seed 1.
fn play(machine: &Machine, host: Option<&dyn LlmHost>) -> EpisodeResult {
    let kind = harness_battleship::play::Battleship;
    let mut game = kind
        .start("B03", &GameOptions::default(), &RngStreams::new(SEED))
        .expect("the board exists");
    let result = run_episode_with_llm(machine, game.as_mut(), host);
    assert!(
        result.error.is_none(),
        "the game failed: {:?}",
        result.error
    );
    result
}

fn client(base_url: String, timeout_ms: u64, mode: CallMode) -> LlmClient {
    let config = ProviderConfig {
        kind: ProviderKind::Ollama,
        base_url,
        model: "test-model".into(),
        api_key: None,
    };
    let options = ClientOptions {
        timeout: Duration::from_millis(timeout_ms),
        retry: RetryPolicy::none(),
        budget_per_game: Some(999),
        ..ClientOptions::default()
    };
    LlmClient::http(config, options, mode)
}

/// The `llm_call` events' outcomes, in order.
fn outcomes(events: &[Event]) -> Vec<String> {
    events
        .iter()
        .filter_map(|event| match &event.kind {
            EventKind::LlmCall { outcome, .. } => Some(outcome.clone()),
            _ => None,
        })
        .collect()
}

/// The values a state field was patched to, in order.
fn patched(events: &[Event], field: &str) -> Vec<Value> {
    events
        .iter()
        .filter_map(|event| match &event.kind {
            EventKind::Patch { field: f, new, .. } if f == field => Some(new.clone()),
            _ => None,
        })
        .collect()
}

/// The values a tunable was revised to, in order.
fn revised(events: &[Event], tunable: &str) -> Vec<Value> {
    events
        .iter()
        .filter_map(|event| match &event.kind {
            EventKind::Revision {
                tunable: t, new, ..
            } if t == tunable => Some(new.clone()),
            _ => None,
        })
        .collect()
}

fn reply(coarse: i64, local: i64, late: i64, salvage: i64, exploit: f64) -> Behavior {
    Behavior::Reply(
        serde_json::json!({
            "kind": "reopen_local_probe",
            "coarse": coarse,
            "local": local,
            "late": late,
            "salvage": salvage,
            "exploit": exploit,
        })
        .to_string(),
    )
}

/// A fresh directory under the target's temporary space.
struct Scratch(PathBuf);

impl Scratch {
    fn new(name: &str) -> Self {
        static NEXT: AtomicU32 = AtomicU32::new(0);
        let dir = std::env::temp_dir().join(format!(
            "harness-llm-l4-{name}-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("a scratch directory");
        Scratch(dir)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

#[test]
fn without_an_llm_every_gate_opening_is_a_not_configured_call_and_l3_is_unchanged() {
    let l4 = play(&machine(L4), None);
    let calls = outcomes(&l4.events);
    assert!(!calls.is_empty(), "the revision gate never opened");
    assert!(calls.iter().all(|o| o == "not_configured"), "{calls:?}");
    assert_eq!(l4.llm_calls.len(), calls.len());
    assert_eq!(
        patched(&l4.events, "reflection.llm_fallbacks").len(),
        calls.len(),
        "every failed call falls back to the symbolic preset"
    );
    // With the fallback always taken, L4 plays exactly as L3: same revisions, same game.
    let l3 = play(&machine(L3), None);
    assert!(outcomes(&l3.events).is_empty());
    assert_eq!(l3.metrics, l4.metrics);
    // L4 switches reflection to the model as a default it sets, not as a revision.
    assert_eq!(l3.costs.revisions, l4.costs.revisions);
    for tunable in ["reflection.local_quota", "reflection.exploit_threshold"] {
        assert_eq!(revised(&l3.events, tunable), revised(&l4.events, tunable));
    }
}

#[test]
fn correct_answers_are_applied_with_source_llm() {
    let server = TestServer::start(vec![reply(3, 5, 2, 14, 0.45)]);
    let host = ClientHost::new(
        client(server.base_url(ProviderKind::Ollama), 5_000, CallMode::Live),
        SEED,
    );
    let result = play(&machine(L4), Some(&host));
    let calls = outcomes(&result.events);
    assert!(!calls.is_empty());
    assert!(calls.iter().all(|o| o == "ok"), "{calls:?}");
    assert_eq!(
        patched(&result.events, "reflection.revision_source"),
        vec![Value::str("llm"); calls.len()]
    );
    assert_eq!(
        patched(&result.events, "reflection.llm_revisions").last(),
        Some(&Value::Int(calls.len() as i64))
    );
    assert!(patched(&result.events, "reflection.llm_fallbacks").is_empty());
    // The tunables took the model's values.
    assert_eq!(
        revised(&result.events, "reflection.local_quota"),
        vec![Value::Int(5); calls.len()]
    );
    assert_eq!(
        revised(&result.events, "reflection.salvage_turn"),
        vec![Value::Int(14); calls.len()]
    );
    assert_eq!(
        revised(&result.events, "reflection.exploit_threshold"),
        vec![Value::float(0.45).expect("finite"); calls.len()]
    );
    // The model saw the reference's prompt, with the state and the preview as JSON.
    let received = server.received();
    assert_eq!(received.len(), calls.len());
    let body = received[0].json();
    let messages = body["messages"].as_array().expect("chat messages");
    let system = messages[0]["content"].as_str().unwrap_or_default();
    let user = messages[1]["content"].as_str().unwrap_or_default();
    assert!(
        system.contains("\"coarse\": integer in [0, 15]"),
        "{system}"
    );
    assert!(system.contains("\"reopen_local_probe\""), "{system}");
    let prompt: serde_json::Value = serde_json::from_str(user).expect("the user prompt is JSON");
    assert_eq!(
        prompt["task"],
        "Revise reflective policy under low-confidence model mismatch."
    );
    assert!(prompt["state"]["confidence"].is_number(), "{prompt}");
    assert!(
        prompt["symbolicPreview"]["policy"]["coarse"].is_number(),
        "{prompt}"
    );
    // Tokens reach the trace; latency does not.
    assert!(result.events.iter().any(|e| matches!(
        &e.kind,
        EventKind::LlmCall { provider: Some(p), model: Some(m), prompt_tokens: Some(_), .. }
            if p == "ollama" && m == "test-model"
    )));
    assert!(!to_json_lines(&result.events).contains("latency"));
    assert!(result.llm_calls.iter().all(|c| c.accounting.attempts == 1));
}

#[test]
fn malformed_and_invalid_answers_fall_back_to_the_preset() {
    let server = TestServer::start(vec![
        Behavior::Reply("I would lower the coarse budget.".into()),
        reply(99, 0, 0, 14, 0.5),
        // Each number is in range, but the budgets total 30 > 15: the harness's guard.
        reply(10, 10, 10, 14, 0.5),
    ]);
    let host = ClientHost::new(
        client(server.base_url(ProviderKind::Ollama), 5_000, CallMode::Live),
        SEED,
    );
    let result = play(&machine(L4), Some(&host));
    let calls = outcomes(&result.events);
    assert!(calls.len() >= 3, "{calls:?}");
    assert_eq!(calls[0], "malformed_json");
    assert_eq!(calls[1], "out_of_range");
    assert!(calls[2..].iter().all(|o| o == "ok"));
    assert_eq!(
        patched(&result.events, "reflection.llm_fallbacks").len(),
        calls.len(),
        "every call fell back"
    );
    assert!(patched(&result.events, "reflection.llm_revisions").is_empty());
    assert!(
        patched(&result.events, "reflection.revision_source")
            .iter()
            .all(|s| *s == Value::str("symbolic"))
    );
    // The symbolic presets never set a budget above 15.
    assert!(
        revised(&result.events, "reflection.coarse_quota")
            .iter()
            .all(|v| matches!(v, Value::Int(n) if *n <= 15))
    );
}

#[test]
fn a_stalled_server_times_out_every_call_and_the_game_completes() {
    let server = TestServer::start(vec![Behavior::Stall]);
    let host = ClientHost::new(
        client(server.base_url(ProviderKind::Ollama), 150, CallMode::Live),
        SEED,
    );
    let result = play(&machine(L4), Some(&host));
    let calls = outcomes(&result.events);
    assert!(!calls.is_empty());
    assert!(calls.iter().all(|o| o == "timeout"), "{calls:?}");
    assert_eq!(
        patched(&result.events, "reflection.llm_fallbacks").len(),
        calls.len()
    );
    // Each call gave up after its one bounded attempt.
    for call in &result.llm_calls {
        assert_eq!(call.accounting.attempts, 1);
        assert!(call.accounting.latency_ms < 5_000, "{call:?}");
    }
    assert!(matches!(result.metrics.get("shots"), Some(Value::Int(n)) if *n > 0));
}

#[test]
fn a_recorded_run_replays_offline_with_an_identical_trace() {
    let store = Scratch::new("record");
    let recorded = {
        let server = TestServer::start(vec![reply(4, 4, 4, 15, 0.5)]);
        let mode = CallMode::Record(Arc::new(DirStore::new(&store.0)));
        let host = ClientHost::new(
            client(server.base_url(ProviderKind::Ollama), 5_000, mode),
            SEED,
        );
        play(&machine(L4), Some(&host))
    };
    assert!(outcomes(&recorded.events).iter().all(|o| o == "ok"));
    // Replay needs no server: the base URL points nowhere.
    let mode = CallMode::Replay(Arc::new(DirStore::new(&store.0)));
    let host = ClientHost::new(client(server::closed_port_url(), 5_000, mode), SEED);
    let replayed = play(&machine(L4), Some(&host));
    assert_eq!(
        to_json_lines(&recorded.events),
        to_json_lines(&replayed.events)
    );
}

#[test]
fn a_missing_replay_entry_is_a_clear_failure_and_the_preset_applies() {
    let store = Scratch::new("empty");
    let mode = CallMode::Replay(Arc::new(DirStore::new(&store.0)));
    let host = ClientHost::new(client(server::closed_port_url(), 5_000, mode), SEED);
    let result = play(&machine(L4), Some(&host));
    let calls = outcomes(&result.events);
    assert!(!calls.is_empty());
    assert!(calls.iter().all(|o| o == "replay_missing"), "{calls:?}");
    let message = result.llm_calls[0].message.clone().unwrap_or_default();
    assert!(message.contains("--llm-record"), "{message}");
    assert_eq!(
        patched(&result.events, "reflection.llm_fallbacks").len(),
        calls.len()
    );
}
