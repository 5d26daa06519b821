//! Typed events and their JSON-lines form: the one schema of a trace, written and read back.
//!
//! Every phase of the turn loop emits [`Event`]s. Each names the turn, the phase, the layer and
//! the source span responsible. Events serialise with a fixed field order (struct declaration
//! order) and floats in their shortest round-trip form, so the same run always produces the same
//! bytes. The runtime returns events as data (see [`crate::Agent::take_events`] for
//! streaming them phase by phase); it never writes files itself.
//!
//! The event types are generic over the values they carry. The runtime emits them with its own
//! [`Value`]s; a trace read back from disk is a [`TraceEvent`], the same types with the values
//! left as JSON (a value's JSON form does not say its type, so it cannot become a [`Value`]
//! again, and readers only show or compare values). One definition serves both directions, so
//! the reader cannot drift from the writer.

use std::collections::BTreeMap;

use harness_compiler::ir::SrcSpan;
use serde::{Deserialize, Serialize};

use crate::error::RuntimeError;
use crate::value::Value;

/// An event as read back from a trace: values stay JSON.
pub type TraceEvent = Event<serde_json::Value>;

/// What a trace event records, as read back.
pub type TraceEventKind = EventKind<serde_json::Value>;

/// The phases of a turn, in order, plus the episode's start and end.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Phase {
    /// Initial state and the game's first observations, before turn 1.
    Start,
    /// Handlers run on the game's observations.
    Observe,
    /// Gates (computed values that control revisions) are evaluated and recorded.
    Reflect,
    /// Revise blocks change lower layers' tunables.
    Revise,
    /// One action is chosen.
    Decide,
    /// The action's patches apply and its effects go to the game.
    Act,
    /// The episode is over.
    End,
}

/// One thing that happened during an episode.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Event<V = Value> {
    /// The turn, from 1; 0 for the start of the episode.
    pub turn: u32,
    /// The phase.
    pub phase: Phase,
    /// The layer responsible, if any.
    pub layer: Option<String>,
    /// The source span responsible (the handler, rule, action or expression).
    pub span: SrcSpan,
    /// What happened.
    #[serde(flatten)]
    pub kind: EventKind<V>,
}

/// A source file of the program, for showing spans as `path:line:column`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TraceFile {
    /// The path the program was loaded from.
    pub path: String,
    /// The byte offset at which each line starts (the first is 0).
    pub line_starts: Vec<u32>,
}

impl TraceFile {
    /// The 1-based line and column (in bytes) of a byte offset.
    pub fn line_column(&self, offset: u32) -> (u32, u32) {
        let line = self
            .line_starts
            .partition_point(|&start| start <= offset)
            .max(1);
        let start = self.line_starts.get(line - 1).copied().unwrap_or(0);
        (line as u32, offset - start + 1)
    }
}

/// What an event records.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case")]
#[serde(bound(serialize = "V: Serialize", deserialize = "V: Deserialize<'de>"))]
pub enum EventKind<V = Value> {
    /// The first event of every trace: the program's source files, which [`SrcSpan::file`]
    /// indexes.
    Files {
        /// The files, in the program's order.
        files: Vec<TraceFile>,
    },
    /// The game sent an observation.
    Observation {
        /// The observation's name.
        name: String,
        /// Its fields.
        args: Vec<V>,
    },
    /// A state field (or an element or field of it) changed.
    Patch {
        /// The state field, qualified by its layer (`belief.probes`).
        field: String,
        /// The value before.
        old: V,
        /// The value after.
        new: V,
    },
    /// A preview made by `sim.next` was read (`expect`, `prob` or `branches`).
    Preview {
        /// The previewed action.
        action: String,
        /// Its arguments.
        args: Vec<V>,
        /// The number of weighted successor snapshots.
        branches: usize,
        /// The reading: `expect`, `prob` or `branches`.
        reading: String,
        /// What the reading returned.
        value: V,
    },
    /// A gate (a `revise when` condition) was evaluated.
    Gate {
        /// The gate's source text or name.
        gate: String,
        /// Whether it held.
        value: bool,
    },
    /// A state field governed by a `machine` moved along one of its edges (after its patch).
    Transition {
        /// The state field, qualified by its layer (`fsm.stage`).
        field: String,
        /// The state before.
        from: V,
        /// The state after.
        to: V,
    },
    /// A tunable of a lower layer was revised.
    Revision {
        /// The tunable, qualified by its layer (`belief.noise_guess`).
        tunable: String,
        /// The value before.
        old: V,
        /// The value after.
        new: V,
    },
    /// A `decide` rule chose an action.
    Chosen {
        /// The action's name.
        action: String,
        /// Its arguments.
        args: Vec<V>,
        /// The index of the rule in its `decide` block.
        rule: usize,
    },
    /// The caller made the turn's decision instead of the decide phase: a forked branch of a
    /// counterfactual replay taking an intervention (or, for the null intervention, the
    /// factual decision).
    Forced {
        /// The action's name.
        action: String,
        /// Its arguments.
        args: Vec<V>,
        /// The intervention, as the caller names it.
        intervention: String,
    },
    /// An action failed a `requires` check or was unavailable; nothing of it applied.
    Rejected {
        /// The action's name.
        action: String,
        /// The error.
        error: RuntimeError,
    },
    /// An effect went to the game.
    Effect {
        /// The effect's name.
        name: String,
        /// Its arguments.
        args: Vec<V>,
    },
    /// An LLM effect was called (or found no LLM configured). Only the deterministic part of
    /// the call is recorded here; latency is in the episode's accounting.
    LlmCall {
        /// The effect's name.
        effect: String,
        /// Which attempt of the item's `retry` this was, from 1.
        attempt: u32,
        /// `ok` or the failure kind (`timeout`, `not_configured`...).
        outcome: String,
        /// The provider, when a call went out or was replayed.
        provider: Option<String>,
        /// The model.
        model: Option<String>,
        /// Prompt tokens, when reported.
        prompt_tokens: Option<u64>,
        /// Completion tokens, when reported.
        completion_tokens: Option<u64>,
    },
    /// A runtime error ended the episode.
    Error {
        /// The error.
        error: RuntimeError,
    },
    /// The episode ended.
    EpisodeEnd {
        /// Why: `game_over`, `turn_limit`, `halted` or `error`.
        reason: String,
        /// The game's metrics.
        metrics: BTreeMap<String, V>,
        /// The reason given by the `halt` that ended the episode. Absent otherwise, so traces of
        /// harnesses that never halt keep their bytes.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        halt: Option<String>,
    },
}

impl<V: Serialize> Event<V> {
    /// The event as one line of JSON (without the newline).
    pub fn to_json_line(&self) -> String {
        let mut line = Vec::new();
        self.write_json_line(&mut line);
        // serde_json writes UTF-8 only.
        String::from_utf8(line).unwrap_or_default()
    }

    /// Appends the event as one line of JSON (without the newline) to `out`.
    fn write_json_line(&self, out: &mut Vec<u8>) {
        let start = out.len();
        // Serialising plain data with string keys cannot fail; the fallback keeps the trace
        // well-formed JSON even if a future opaque value's serialisation did, in place of
        // whatever part of the event was written before the failure.
        if let Err(e) = serde_json::to_writer(&mut *out, self) {
            out.truncate(start);
            let fallback =
                serde_json::json!({ "event": "serialisation_error", "message": e.to_string() });
            out.extend_from_slice(fallback.to_string().as_bytes());
        }
    }
}

/// Renders a trace as JSON lines, one event per line.
pub fn to_json_lines<V: Serialize>(events: &[Event<V>]) -> String {
    let mut out = Vec::new();
    // Writing to memory cannot fail.
    let _ = write_json_lines(&mut out, events);
    String::from_utf8(out).unwrap_or_default()
}

/// Writes a trace as JSON lines, one event per line, to `out`: the bytes of
/// [`to_json_lines`], without building the whole text first. Each event is serialised
/// straight into one line buffer, reused from event to event, and handed to `out` in one
/// piece, so a trace costs no allocation per event and no copy of the whole text.
pub fn write_json_lines<V: Serialize>(
    out: &mut dyn std::io::Write,
    events: &[Event<V>],
) -> std::io::Result<()> {
    let mut line = Vec::with_capacity(512);
    for event in events {
        line.clear();
        event.write_json_line(&mut line);
        line.push(b'\n');
        out.write_all(&line)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_serialise_with_a_fixed_field_order() {
        let event = Event {
            turn: 2,
            phase: Phase::Act,
            layer: Some("belief".into()),
            span: SrcSpan {
                file: 0,
                start: 3,
                end: 9,
            },
            kind: EventKind::Patch {
                field: "belief.probes".into(),
                old: Value::Int(1),
                new: Value::float(0.1).unwrap_or(Value::Unit),
            },
        };
        assert_eq!(
            event.to_json_line(),
            r#"{"turn":2,"phase":"act","layer":"belief","span":{"file":0,"start":3,"end":9},"event":"patch","field":"belief.probes","old":1,"new":0.1}"#
        );
    }
}
