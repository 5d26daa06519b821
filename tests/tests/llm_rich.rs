//! Richer LLM replies end to end: `Option` fields, `List` fields with their `len` bound, enum
//! fields restricted to a subset, and bounds on list items, from the checker through the
//! runtime's host seam, the standard library's validation and the simulated model's bodies.

use std::sync::{Arc, Mutex};

use harness_compiler::Workspace;
use harness_runtime::{
    EventKind, GameKind, Limits, LlmAnswer, LlmCall, LlmHost, Machine, RngStreams, Switches, Value,
    run_episode_with_llm,
};
use harness_stdlib::llm::{
    CallMode, ClientHost, ClientOptions, Decoding, LlmClient, Persona, ProviderConfig,
    ProviderKind, SchemaMode, SimTransport,
};

const HARNESS: &str = r#"harness rich

use game search

type Advice = { dir: Dir, cells: List<Int>, note: Option<String> }

llm advise(n: Int) -> Advice
  where dir in {Left, Right},
        cells len in 1..=3,
        cells in 0..=15
{
  system "Answer with JSON only: {schema}"
  user "cells: {n}"
}

layer l {
  state {
    dir: Option<Dir> = None
    cells: List<Int> = []
    note: String = "unset"
    outcome: String = ""
  }

  action ask()
    available when outcome == ""
  {
    let reply = emit llm.advise(game.cells)
    if let LlmResult.Ok(a) = reply {
      patch dir = Some(a.dir)
      patch cells = a.cells
      patch note = match a.note {
        Some(text) => text,
        None => "none",
      }
      patch outcome = "ok"
    } else {
      patch outcome = "failed"
    }
    emit game.guess(if cells.len() > 0 { cells[0] } else { 0 })
  }

  decide { ask() }
}
"#;

/// A host that remembers the system prompts it was given.
struct Capture {
    inner: ClientHost,
    systems: Mutex<Vec<String>>,
}

impl LlmHost for Capture {
    fn call(&self, call: &LlmCall) -> LlmAnswer {
        self.systems.lock().unwrap().push(call.system.clone());
        self.inner.call(call)
    }
}

/// The machine of a one-file harness on the search game.
fn machine(path: &str, text: &str, module: &str) -> Machine {
    let mut workspace = Workspace::new(harness_tests::signatures());
    workspace.set_file(path, text);
    let program = workspace
        .program(module)
        .unwrap_or_else(|_| panic!("the harness checks: {:?}", workspace.diagnostics()));
    let mut natives = harness_stdlib::prelude::natives();
    natives.extend(&harness_search::LineSearch.natives());
    Machine::new(program, natives, &Switches::default(), Limits::default())
        .expect("the machine starts")
}

/// The simulated model answering the `llm` item `effect` with the intent `reply`.
fn sim(effect: &str, reply: &str, options: ClientOptions) -> LlmClient {
    let persona = Persona::parse(&format!(
        "name = \"fixed\"\n[effects.{effect}]\nreply = {reply}\n"
    ))
    .expect("the persona parses");
    let config = ProviderConfig {
        kind: ProviderKind::Sim,
        base_url: ProviderKind::Sim.default_base_url().into(),
        model: "fixed".into(),
        api_key: None,
    };
    LlmClient::new(
        config,
        Arc::new(SimTransport::new(persona)),
        options,
        CallMode::Live,
    )
}

/// Plays one game with the simulated model answering `reply`; the final state's patches and
/// the system prompt.
fn play(reply: &str) -> (Vec<(String, Value)>, Vec<String>, String) {
    let machine = machine("rich.harness", HARNESS, "rich");
    let options = ClientOptions {
        decoding: Decoding {
            temperature: Some(0.0),
            schema: SchemaMode::Strict,
            ..Decoding::default()
        },
        ..ClientOptions::default()
    };
    let client = sim("advise", reply, options);
    let kind = harness_search::LineSearch;
    let host = Capture {
        inner: ClientHost::new(client, 0),
        systems: Mutex::new(Vec::new()),
    };
    let mut game = kind
        .start(
            "n16-p10",
            &harness_runtime::GameOptions::default(),
            &RngStreams::new(0),
        )
        .unwrap();
    let result = run_episode_with_llm(&machine, game.as_mut(), Some(&host));
    assert!(result.error.is_none(), "{:?}", result.error);
    let patches = result
        .events
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::Patch { field, new, .. } => Some((field.clone(), new.clone())),
            _ => None,
        })
        .collect();
    let outcomes = result
        .events
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::LlmCall { outcome, .. } => Some(outcome.clone()),
            _ => None,
        })
        .collect();
    let system = host
        .systems
        .lock()
        .unwrap()
        .first()
        .cloned()
        .unwrap_or_default();
    (patches, outcomes, system)
}

fn patched<'a>(patches: &'a [(String, Value)], field: &str) -> Option<&'a Value> {
    patches
        .iter()
        .rev()
        .find(|(f, _)| f == field)
        .map(|(_, v)| v)
}

#[test]
fn a_reply_with_a_list_and_no_optional_field_becomes_typed_values() {
    let (patches, outcomes, system) = play(r#"{ dir = "left", cells = [3, 4] }"#);
    assert_eq!(outcomes, ["ok"]);
    assert_eq!(
        patched(&patches, "l.dir")
            .map(ToString::to_string)
            .as_deref(),
        Some("Some(Dir.Left)")
    );
    assert_eq!(
        patched(&patches, "l.cells")
            .map(ToString::to_string)
            .as_deref(),
        Some("[3, 4]")
    );
    assert_eq!(
        patched(&patches, "l.note"),
        Some(&Value::str("none")),
        "a missing optional field is None"
    );
    // The schema shows only the allowed variants, the list's length and the items' range.
    assert!(
        system.contains(r#""dir": one of "left" | "right""#),
        "{system}"
    );
    assert!(
        system.contains(r#""cells": a list of 1 to 3 items, each integer in [0, 15]"#),
        "{system}"
    );
    assert!(system.contains(r#""note": string or null"#), "{system}");
}

#[test]
fn an_optional_field_that_is_given_is_some() {
    let (patches, outcomes, _) = play(r#"{ dir = "Right", cells = [9], note = "edge" }"#);
    assert_eq!(outcomes, ["ok"]);
    assert_eq!(patched(&patches, "l.note"), Some(&Value::str("edge")));
}

#[test]
fn replies_outside_the_bounds_are_failures_not_values() {
    for (reply, outcome) in [
        // `Here` is a variant of `Dir`, but the bound allows only `Left` and `Right`.
        (r#"{ dir = "here", cells = [3] }"#, "schema_violation"),
        (r#"{ dir = "left", cells = [1, 2, 3, 4] }"#, "out_of_range"),
        (r#"{ dir = "left", cells = [] }"#, "out_of_range"),
        (r#"{ dir = "left", cells = [16] }"#, "out_of_range"),
        (r#"{ dir = "left", cells = ["x"] }"#, "schema_violation"),
    ] {
        let (patches, outcomes, _) = play(reply);
        assert_eq!(outcomes, [outcome], "{reply}");
        assert_eq!(
            patched(&patches, "l.outcome"),
            Some(&Value::str("failed")),
            "{reply}"
        );
    }
}

const RETRYING: &str = r#"harness retrying

use game search

type Pick = { cell: Int }

fn even(n: Int) -> Bool = n % 2 == 0

llm pick(n: Int) -> Pick
  where cell in 0..=15
  ensure even(reply.cell) and reply.cell < n else "the cell must be even"
  retry 2 with "Rejected: {error}. Think again."
{
  system "Answer with JSON only: {schema}"
  user "cells: {n}"
}

layer l {
  state { picked: Int = -1 }

  action choose()
    available when picked < 0
  {
    let reply = emit llm.pick(game.cells)
    patch picked = match reply {
      LlmResult.Ok(p) => p.cell,
      LlmResult.Failed(LlmFailure.Invalid) => 100,
      LlmResult.Failed(_) => 200,
    }
    emit game.guess(if picked >= 0 and picked < game.cells { picked } else { 0 })
  }

  decide { choose() }
}
"#;

/// Plays the retrying harness with the simulated model's `reply` intent; the attempts' events,
/// the conversations the host saw, and the cell picked.
fn play_retrying(reply: &str) -> (Vec<(u32, String)>, Vec<Vec<String>>, Value) {
    let machine = machine("retrying.harness", RETRYING, "retrying");
    let kind = harness_search::LineSearch;
    let client = sim("pick", reply, ClientOptions::default());
    struct Conversations {
        inner: ClientHost,
        seen: Mutex<Vec<Vec<String>>>,
    }
    impl LlmHost for Conversations {
        fn call(&self, call: &LlmCall) -> LlmAnswer {
            let turns = call
                .history
                .iter()
                .map(|m| format!("{}: {}", m.role, m.content))
                .collect();
            self.seen.lock().unwrap().push(turns);
            self.inner.call(call)
        }
    }
    let host = Conversations {
        inner: ClientHost::new(client, 0),
        seen: Mutex::new(Vec::new()),
    };
    let mut game = kind
        .start(
            "n16-p10",
            &harness_runtime::GameOptions::default(),
            &RngStreams::new(0),
        )
        .unwrap();
    let result = run_episode_with_llm(&machine, game.as_mut(), Some(&host));
    assert!(result.error.is_none(), "{:?}", result.error);
    let attempts = result
        .events
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::LlmCall {
                attempt, outcome, ..
            } => Some((*attempt, outcome.clone())),
            _ => None,
        })
        .collect();
    let picked = result
        .events
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::Patch { field, new, .. } if field == "l.picked" => Some(new.clone()),
            _ => None,
        })
        .next_back()
        .expect("a pick");
    let seen = host.seen.lock().unwrap().clone();
    (attempts, seen, picked)
}

#[test]
fn a_reply_failing_ensure_is_asked_again_and_the_second_succeeds() {
    // The persona answers the first of 7, 8 that its own earlier reply in the conversation has
    // not named: 7 (odd, so `ensure` fails), then, shown its rejected reply, 8.
    let (attempts, conversations, picked) =
        play_retrying(r#"{ cell = { next_in = [7, 8], done = '"cell": (\d+)' } }"#);
    assert_eq!(attempts, [(1, "invalid".to_owned()), (2, "ok".to_owned())]);
    assert_eq!(picked, Value::Int(8));
    assert_eq!(
        conversations,
        [
            Vec::<String>::new(),
            vec![
                r#"assistant: {"cell": 7}"#.to_owned(),
                "user: Rejected: the cell must be even. Think again.".to_owned(),
            ],
        ]
    );
}

#[test]
fn retries_stop_after_their_count_and_cover_replies_out_of_bounds() {
    let (attempts, _, picked) = play_retrying("{ cell = 7 }");
    let outcomes: Vec<&str> = attempts.iter().map(|(_, o)| o.as_str()).collect();
    assert_eq!(outcomes, ["invalid", "invalid", "invalid"], "1 + retry 2");
    assert_eq!(
        attempts.iter().map(|(a, _)| *a).collect::<Vec<_>>(),
        [1, 2, 3]
    );
    assert_eq!(
        picked,
        Value::Int(100),
        "LlmFailure.Invalid after the last attempt"
    );
    // A reply out of its bounds is the model's mistake too, and is retried.
    let (attempts, _, _) = play_retrying("{ cell = 40 }");
    assert_eq!(attempts.len(), 3);
    assert!(attempts.iter().all(|(_, o)| o == "out_of_range"));
}
