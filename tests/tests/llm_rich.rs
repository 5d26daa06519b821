//! Richer LLM replies end to end: `Option` fields, `List` fields with their `len` bound, enum
//! fields restricted to a subset, and bounds on list items, from the checker through the
//! runtime's host seam, the standard library's validation and the simulated model's bodies.

use std::sync::{Arc, Mutex};

use harness_compiler::Workspace;
use harness_runtime::{
    EventKind, GameKind, Limits, LlmAnswer, LlmCall, LlmHost, Machine, RngStreams, Switches,
    Value, run_episode_with_llm,
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

fn persona(reply: &str) -> Persona {
    Persona::parse(&format!("name = \"fixed\"\n[effects.advise]\nreply = {reply}\n")).unwrap()
}

/// Plays one game with the simulated model answering `reply`; the final state's patches and
/// the system prompt.
fn play(reply: &str) -> (Vec<(String, Value)>, Vec<String>, String) {
    let mut workspace = Workspace::new(harness_tests::signatures());
    workspace.set_file("rich.harness", HARNESS);
    let program = workspace.program("rich").unwrap_or_else(|_| {
        panic!("the harness checks: {:?}", workspace.diagnostics())
    });
    let kind = harness_search::LineSearch;
    let mut natives = harness_stdlib::prelude::natives();
    natives.extend(&kind.natives());
    let machine = Machine::new(program, natives, &Switches::default(), Limits::default())
        .expect("the machine starts");
    let config = ProviderConfig {
        kind: ProviderKind::Sim,
        base_url: ProviderKind::Sim.default_base_url().into(),
        model: "fixed".into(),
        api_key: None,
    };
    let options = ClientOptions {
        decoding: Decoding {
            temperature: Some(0.0),
            schema: SchemaMode::Strict,
            ..Decoding::default()
        },
        ..ClientOptions::default()
    };
    let client = LlmClient::new(
        config,
        Arc::new(SimTransport::new(persona(reply))),
        options,
        CallMode::Live,
    );
    let host = Capture {
        inner: ClientHost::new(client, 0),
        systems: Mutex::new(Vec::new()),
    };
    let mut game = kind.start("n16-p10", &RngStreams::new(0)).unwrap();
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
    let system = host.systems.lock().unwrap().first().cloned().unwrap_or_default();
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
        patched(&patches, "l.dir").map(ToString::to_string).as_deref(),
        Some("Some(Dir.Left)")
    );
    assert_eq!(
        patched(&patches, "l.cells").map(ToString::to_string).as_deref(),
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
