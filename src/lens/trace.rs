//! Traces read back: JSON lines parsed into events, then folded into per-turn rows.
//!
//! The runtime writes one [`harness_runtime::Event`] per line. Reading them back goes through
//! this module's own tolerant mirror of that type rather than the runtime's, because a trace on
//! disk may come from another version: unknown event kinds are kept as [`Kind::Other`], and
//! values stay JSON, so a lens never fails on a field it does not need.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// One event of a trace.
#[derive(Clone, Debug, PartialEq, Deserialize)]
pub struct TraceEvent {
    /// The turn, from 1; 0 for the start of the episode.
    pub turn: u32,
    /// The phase, such as `observe` or `revise`.
    #[serde(default)]
    pub phase: String,
    /// The layer responsible, if any.
    #[serde(default)]
    pub layer: Option<String>,
    /// What happened.
    #[serde(flatten)]
    pub kind: Kind,
}

/// What an event records (see `runtime/src/event.rs`), plus the LLM calls the LLM effect will
/// record.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum Kind {
    /// The game sent an observation.
    Observation {
        /// Its name.
        name: String,
        /// Its fields.
        #[serde(default)]
        args: Vec<Value>,
    },
    /// A state field changed.
    Patch {
        /// The field, qualified by its layer.
        field: String,
        /// The value before.
        old: Value,
        /// The value after.
        new: Value,
    },
    /// A `sim.next` preview was read.
    Preview {
        /// The previewed action.
        action: String,
        /// Its arguments.
        #[serde(default)]
        args: Vec<Value>,
        /// What the reading returned.
        value: Value,
    },
    /// A revision gate was evaluated.
    Gate {
        /// The gate's name.
        gate: String,
        /// Whether it held.
        value: bool,
    },
    /// A tunable was revised.
    Revision {
        /// The tunable, qualified by its layer.
        tunable: String,
        /// The value before.
        old: Value,
        /// The value after.
        new: Value,
    },
    /// A rule chose an action.
    Chosen {
        /// The action.
        action: String,
        /// Its arguments.
        #[serde(default)]
        args: Vec<Value>,
        /// The rule's index in its `decide` block.
        rule: usize,
    },
    /// An action was rejected.
    Rejected {
        /// The action.
        action: String,
        /// The error.
        error: Value,
    },
    /// An effect went to the game.
    Effect {
        /// The effect.
        name: String,
        /// Its arguments.
        #[serde(default)]
        args: Vec<Value>,
    },
    /// A runtime error ended the episode.
    Error {
        /// The error.
        error: Value,
    },
    /// The episode ended.
    EpisodeEnd {
        /// Why.
        reason: String,
        /// The game's metrics.
        #[serde(default)]
        metrics: BTreeMap<String, Value>,
    },
    /// An LLM was called (recorded by the LLM effect).
    LlmCall(LlmCall),
    /// An event kind this version does not know.
    #[serde(other)]
    Other,
}

/// One LLM call as the LLM effect records it.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct LlmCall {
    /// The provider, such as `anthropic`.
    pub provider: String,
    /// The model.
    pub model: String,
    /// Tokens used (prompt and completion).
    pub tokens: u64,
    /// Wall-clock latency in milliseconds.
    pub latency_ms: f64,
    /// `ok`, or what went wrong (`timeout`, `invalid`...).
    pub outcome: String,
    /// Whether the symbolic fallback was used instead of the reply.
    pub fallback: bool,
}

/// Parses a trace; `name` says which trace a bad line is in.
pub fn parse(text: &str, name: &str) -> Result<Vec<TraceEvent>, String> {
    text.lines()
        .enumerate()
        .filter(|(_, line)| !line.trim().is_empty())
        .map(|(index, line)| {
            serde_json::from_str(line).map_err(|error| {
                format!(
                    "the trace {name} is corrupt: line {} is not an event ({error}); rerun the game \
                     with `harness ablate --resume` after deleting its record",
                    index + 1
                )
            })
        })
        .collect()
}

/// A JSON value in a compact, readable form: strings without quotes, numbers short.
pub fn show(value: &Value) -> String {
    match value {
        Value::String(text) => text.clone(),
        Value::Number(number) => match number.as_f64() {
            Some(x) if number.is_f64() => format!("{}", (x * 10_000.0).round() / 10_000.0),
            _ => number.to_string(),
        },
        Value::Bool(flag) => if *flag { "yes" } else { "no" }.to_string(),
        Value::Null => "none".to_string(),
        Value::Array(items) => items.iter().map(show).collect::<Vec<_>>().join(", "),
        Value::Object(fields) => {
            // A record with a `question` field (a scored question) reads best as the question.
            if let Some(question) = fields.get("question") {
                return show(question);
            }
            let inner: Vec<String> = fields
                .iter()
                .map(|(key, value)| format!("{key}: {}", show(value)))
                .collect();
            format!("{{{}}}", inner.join(", "))
        }
    }
}

/// A revised tunable whose value changed (revisions also re-state unchanged tunables).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Change {
    /// The tunable.
    pub tunable: String,
    /// Its old value, shown.
    pub old: String,
    /// Its new value, shown.
    pub new: String,
}

/// One turn of a game, as the `game` view shows it.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct TurnRow {
    /// The turn.
    pub turn: u32,
    /// What the game reported at the start of the turn (the previous action's result).
    pub observations: Vec<String>,
    /// The chosen action and its arguments.
    pub action: Option<String>,
    /// What the game answered to it: the next turn's observations.
    pub result: Vec<String>,
    /// The layer whose rule chose it.
    pub layer: Option<String>,
    /// The rule's index in its `decide` block.
    pub rule: Option<usize>,
    /// Whether a revision gate was open.
    pub gate_open: bool,
    /// Tunables revised this turn whose value changed.
    pub revisions: Vec<Change>,
    /// Previews read this turn.
    pub previews: usize,
    /// The best preview: its action and value, when the values are numbers.
    pub best_preview: Option<(String, f64)>,
    /// Notable patches: scalar fields that changed (not posteriors or bookkeeping records).
    pub patches: Vec<Change>,
    /// Rejected actions and errors.
    pub problems: Vec<String>,
}

/// The end of a game as recorded by its `episode_end` event.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct GameEnd {
    /// Why it ended.
    pub reason: String,
    /// The game's metrics, shown.
    pub metrics: BTreeMap<String, String>,
}

/// Folds events into per-turn rows and the game's end. Turn 0 (the start) gets a row only if
/// something happened in it.
pub fn turns(events: &[TraceEvent]) -> (Vec<TurnRow>, Option<GameEnd>) {
    let mut rows: Vec<TurnRow> = Vec::new();
    let mut end = None;
    for event in events {
        if let Kind::EpisodeEnd { reason, metrics } = &event.kind {
            end = Some(GameEnd {
                reason: reason.clone(),
                metrics: metrics
                    .iter()
                    .map(|(key, value)| (key.clone(), show(value)))
                    .collect(),
            });
            continue;
        }
        if rows.last().is_none_or(|row| row.turn != event.turn) {
            rows.push(TurnRow {
                turn: event.turn,
                ..TurnRow::default()
            });
        }
        let Some(row) = rows.last_mut() else { continue };
        match &event.kind {
            Kind::Observation { name, args } => {
                row.observations.push(format!("{name} {}", show_args(args)));
            }
            Kind::Chosen { action, args, rule } => {
                row.action = Some(format!("{action} {}", show_args(args)).trim().to_string());
                row.layer.clone_from(&event.layer);
                row.rule = Some(*rule);
            }
            Kind::Gate { value, .. } => row.gate_open |= *value,
            Kind::Revision { tunable, old, new } if old != new => row.revisions.push(Change {
                tunable: tunable.clone(),
                old: show(old),
                new: show(new),
            }),
            Kind::Preview {
                action,
                args,
                value,
            } => {
                row.previews += 1;
                if let Some(x) = value.as_f64()
                    && row.best_preview.as_ref().is_none_or(|(_, best)| x > *best)
                {
                    row.best_preview = Some((format!("{action} {}", show_args(args)), x));
                }
            }
            Kind::Patch { field, old, new } if old != new && is_scalar(new) => {
                row.patches.push(Change {
                    tunable: field.clone(),
                    old: show(old),
                    new: show(new),
                });
            }
            Kind::Rejected { action, error } => {
                row.problems
                    .push(format!("rejected {action}: {}", error_message(error)));
            }
            Kind::Error { error } => row
                .problems
                .push(format!("error: {}", error_message(error))),
            _ => {}
        }
    }
    // A turn's observations are the result of the turn before's action.
    for index in 1..rows.len() {
        rows[index - 1].result = rows[index].observations.clone();
    }
    rows.retain(|row| row.turn > 0 || *row != TurnRow::default());
    (rows, end)
}

fn show_args(args: &[Value]) -> String {
    args.iter().map(show).collect::<Vec<_>>().join(" ")
}

fn is_scalar(value: &Value) -> bool {
    matches!(value, Value::Bool(_) | Value::Number(_) | Value::String(_))
}

/// A runtime error's message: its code and message when it is a located error record.
fn error_message(error: &Value) -> String {
    match (
        error.get("code").and_then(Value::as_str),
        error.get("message").and_then(Value::as_str),
    ) {
        (Some(code), Some(message)) => format!("{code}: {message}"),
        _ => show(error),
    }
}

/// The reflective monitor's reading on one turn, as the `confidence` view shows it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ConfidenceRow {
    /// The turn.
    pub turn: u32,
    /// The prediction-error EMA when the gate was evaluated.
    pub prediction_ema: f64,
    /// The calibration-error EMA when the gate was evaluated.
    pub calibration_ema: f64,
    /// `max(0, 1 − (prediction_ema + calibration_ema) / 2)`, the harness's confidence.
    pub confidence: f64,
    /// Consecutive low-confidence observations.
    pub low_confidence_streak: i64,
    /// Observations left before another revision may apply.
    pub cooldown: i64,
    /// Whether a revision gate was open.
    pub gate_open: bool,
    /// Tunables revised this turn whose value changed.
    pub revisions: Vec<Change>,
    /// The chosen action.
    pub action: Option<String>,
}

/// The monitor's confidence: one minus the mean of its two error EMAs, floored at zero.
pub fn confidence(prediction_ema: f64, calibration_ema: f64) -> f64 {
    (1.0 - (prediction_ema + calibration_ema) / 2.0).max(0.0)
}

/// Whether a patched field is the reflective monitor record (`<layer>.monitor`), or one of its
/// fields (`<layer>.monitor.<field>`), which is returned.
fn monitor_field(field: &str) -> Option<Option<&str>> {
    let (_, rest) = field.split_once('.')?;
    match rest.split_once('.') {
        None => (rest == "monitor").then_some(None),
        Some(("monitor", inner)) => Some(Some(inner)),
        Some(_) => None,
    }
}

/// Per-turn readings of the reflective monitor. The monitor is read when the turn's gate is
/// evaluated (after the observation updated it), because that is the value the gate decided on;
/// a turn without a gate is read at its end. Returns no rows when the trace never patches a
/// monitor (a stack without the reflection layer).
pub fn confidence_rows(events: &[TraceEvent]) -> Vec<ConfidenceRow> {
    let mut monitor = serde_json::Map::new();
    let mut seen_monitor = false;
    let mut rows: Vec<ConfidenceRow> = Vec::new();
    let mut current: Option<ConfidenceRow> = None;
    let mut read = false;
    let reading = |monitor: &serde_json::Map<String, Value>, row: &mut ConfidenceRow| {
        let number = |key: &str| monitor.get(key).and_then(Value::as_f64).unwrap_or(0.0);
        let int = |key: &str| monitor.get(key).and_then(Value::as_i64).unwrap_or(0);
        row.prediction_ema = number("prediction_ema");
        row.calibration_ema = number("calibration_ema");
        row.confidence = confidence(row.prediction_ema, row.calibration_ema);
        row.low_confidence_streak = int("low_confidence_streak");
        row.cooldown = int("cooldown");
    };
    for event in events {
        if matches!(event.kind, Kind::EpisodeEnd { .. }) {
            continue;
        }
        if current.as_ref().is_none_or(|row| row.turn != event.turn) {
            if let Some(mut row) = current.take() {
                if !read {
                    reading(&monitor, &mut row);
                }
                rows.push(row);
            }
            current = Some(ConfidenceRow {
                turn: event.turn,
                prediction_ema: 0.0,
                calibration_ema: 0.0,
                confidence: 1.0,
                low_confidence_streak: 0,
                cooldown: 0,
                gate_open: false,
                revisions: Vec::new(),
                action: None,
            });
            read = false;
        }
        let Some(row) = current.as_mut() else {
            continue;
        };
        match &event.kind {
            Kind::Patch { field, new, .. } => match monitor_field(field) {
                Some(None) => {
                    if let Value::Object(fields) = new {
                        monitor = fields.clone();
                        seen_monitor = true;
                    }
                }
                Some(Some(inner)) => {
                    monitor.insert(inner.to_string(), new.clone());
                    seen_monitor = true;
                }
                None => {}
            },
            Kind::Gate { value, .. } => {
                row.gate_open |= *value;
                if !read {
                    reading(&monitor, row);
                    read = true;
                }
            }
            Kind::Revision { tunable, old, new } if old != new => row.revisions.push(Change {
                tunable: tunable.clone(),
                old: show(old),
                new: show(new),
            }),
            Kind::Chosen { action, args, .. } => {
                row.action = Some(format!("{action} {}", show_args(args)).trim().to_string());
            }
            _ => {}
        }
    }
    if let Some(mut row) = current {
        if !read {
            reading(&monitor, &mut row);
        }
        rows.push(row);
    }
    if !seen_monitor {
        return Vec::new();
    }
    rows.retain(|row| row.turn > 0);
    rows
}

/// The LLM calls of a trace.
pub fn llm_calls(events: &[TraceEvent]) -> Vec<LlmCall> {
    events
        .iter()
        .filter_map(|event| match &event.kind {
            Kind::LlmCall(call) => Some(call.clone()),
            _ => None,
        })
        .collect()
}

/// The turns on which a revision was applied (one per turn and layer, as `ablate` counts them).
pub fn revision_turns(events: &[TraceEvent]) -> Vec<u32> {
    let mut turns: Vec<u32> = events
        .iter()
        .filter(|event| matches!(event.kind, Kind::Revision { .. }))
        .map(|event| event.turn)
        .collect();
    turns.dedup();
    turns
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A small reflective game: a monitor patched on turns 2 and 3, a gate opening on turn 3
    /// with a revision that changes one tunable and re-states another, and the end.
    pub(crate) const TRACE: &str = r#"{"turn":1,"phase":"reflect","layer":"reflection","span":{"file":2,"start":1,"end":2},"event":"gate","gate":"revise #0","value":false}
{"turn":1,"phase":"decide","layer":"reflection","span":{"file":1,"start":1,"end":2},"event":"preview","action":"ask","args":["row:A"],"branches":2,"reading":"expect","value":0.02}
{"turn":1,"phase":"decide","layer":"reflection","span":{"file":1,"start":1,"end":2},"event":"preview","action":"ask","args":["row:B"],"branches":2,"reading":"expect","value":0.03}
{"turn":1,"phase":"decide","layer":"reflection","span":{"file":2,"start":1,"end":2},"event":"chosen","action":"probe","args":[{"question":"row:B","score":0.03}],"rule":0}
{"turn":1,"phase":"act","layer":"reflection","span":{"file":2,"start":1,"end":2},"event":"patch","field":"reflection.used_coarse","old":0,"new":1}
{"turn":1,"phase":"act","layer":"reflection","span":{"file":2,"start":1,"end":2},"event":"effect","name":"ask","args":["row:B"]}
{"turn":2,"phase":"observe","layer":null,"span":{"file":0,"start":0,"end":0},"event":"observation","name":"answer","args":["row:B",false]}
{"turn":2,"phase":"observe","layer":"reflection","span":{"file":2,"start":1,"end":2},"event":"patch","field":"reflection.monitor","old":{},"new":{"prediction_ema":0.6,"calibration_ema":0.2,"observed":1,"low_confidence_streak":1,"cooldown":0}}
{"turn":2,"phase":"reflect","layer":"reflection","span":{"file":2,"start":1,"end":2},"event":"gate","gate":"revise #0","value":false}
{"turn":2,"phase":"decide","layer":"belief","span":{"file":0,"start":1,"end":2},"event":"chosen","action":"shoot","args":["C4"],"rule":0}
{"turn":3,"phase":"observe","layer":null,"span":{"file":0,"start":0,"end":0},"event":"observation","name":"shot","args":["C4",true]}
{"turn":3,"phase":"observe","layer":"reflection","span":{"file":2,"start":1,"end":2},"event":"patch","field":"reflection.monitor","old":{},"new":{"prediction_ema":0.7,"calibration_ema":0.3,"observed":2,"low_confidence_streak":2,"cooldown":0}}
{"turn":3,"phase":"reflect","layer":"reflection","span":{"file":2,"start":1,"end":2},"event":"gate","gate":"revise #0","value":true}
{"turn":3,"phase":"revise","layer":"reflection","span":{"file":2,"start":1,"end":2},"event":"revision","tunable":"reflection.coarse_quota","old":6,"new":5}
{"turn":3,"phase":"revise","layer":"reflection","span":{"file":2,"start":1,"end":2},"event":"revision","tunable":"reflection.late_quota","old":4,"new":4}
{"turn":3,"phase":"revise","layer":"reflection","span":{"file":2,"start":1,"end":2},"event":"patch","field":"reflection.monitor.cooldown","old":0,"new":3}
{"turn":3,"phase":"decide","layer":"reflection","span":{"file":2,"start":1,"end":2},"event":"chosen","action":"strike","args":["C5"],"rule":1}
{"turn":4,"phase":"observe","layer":null,"span":{"file":0,"start":0,"end":0},"event":"observation","name":"shot","args":["C5",true]}
{"turn":4,"phase":"end","layer":null,"span":{"file":0,"start":0,"end":0},"event":"episode_end","reason":"game_over","metrics":{"f1":0.5,"won":true}}
"#;

    #[test]
    fn traces_parse_and_unknown_kinds_are_kept() {
        let mut text = TRACE.to_string();
        text.push_str(r#"{"turn":4,"phase":"end","event":"something_new","x":1}"#);
        let events = parse(&text, "t").unwrap();
        assert_eq!(events.len(), 20);
        assert_eq!(events[19].kind, Kind::Other);
        let error = parse("{\"turn\":1}\nnot json\n", "traces/l1/b01-s0.jsonl").unwrap_err();
        assert!(error.contains("line 1"), "{error}");
    }

    #[test]
    fn turns_collect_actions_changes_and_previews() {
        let events = parse(TRACE, "t").unwrap();
        let (rows, end) = turns(&events);
        assert_eq!(rows.len(), 4);
        assert_eq!(rows[0].action.as_deref(), Some("probe row:B"));
        assert_eq!(rows[0].previews, 2);
        assert_eq!(rows[0].best_preview, Some(("ask row:B".to_string(), 0.03)));
        assert_eq!(rows[0].patches[0].tunable, "reflection.used_coarse");
        assert_eq!(rows[1].observations, vec!["answer row:B no"]);
        assert_eq!(rows[0].result, rows[1].observations);
        assert_eq!(rows[1].layer.as_deref(), Some("belief"));
        assert!(rows[2].gate_open && !rows[1].gate_open);
        // The re-stated, unchanged tunable is not a change.
        assert_eq!(rows[2].revisions.len(), 1);
        assert_eq!(
            (
                rows[2].revisions[0].old.as_str(),
                rows[2].revisions[0].new.as_str()
            ),
            ("6", "5")
        );
        let end = end.unwrap();
        assert_eq!(end.reason, "game_over");
        assert_eq!(end.metrics["won"], "yes");
    }

    #[test]
    fn confidence_is_read_when_the_gate_is_evaluated() {
        let events = parse(TRACE, "t").unwrap();
        let rows = confidence_rows(&events);
        assert_eq!(
            rows.iter().map(|r| r.turn).collect::<Vec<_>>(),
            vec![1, 2, 3, 4]
        );
        assert!((rows[0].confidence - 1.0).abs() < 1e-12, "no monitor yet");
        assert!((rows[1].confidence - 0.6).abs() < 1e-12);
        assert!((rows[2].confidence - 0.5).abs() < 1e-12);
        assert_eq!(rows[2].low_confidence_streak, 2);
        // The cooldown set by the revision is after the gate: turn 3 reads 0, turn 4 reads 3.
        assert_eq!((rows[2].cooldown, rows[3].cooldown), (0, 3));
        assert!(rows[2].gate_open);
        assert_eq!(rows[2].revisions.len(), 1);
        assert_eq!(revision_turns(&events), vec![3]);
    }

    #[test]
    fn a_trace_without_a_monitor_has_no_confidence() {
        let line = r#"{"turn":1,"phase":"decide","layer":"belief","event":"chosen","action":"shoot","args":["A1"],"rule":0}"#;
        assert!(confidence_rows(&parse(line, "t").unwrap()).is_empty());
        assert!((confidence(1.5, 1.5)).abs() < 1e-12, "floored at zero");
    }

    #[test]
    fn llm_calls_are_read_with_defaults() {
        let line = r#"{"turn":5,"phase":"decide","layer":"reflection","event":"llm_call","provider":"anthropic","model":"m","tokens":812,"latency_ms":950.5,"outcome":"invalid","fallback":true}"#;
        let calls = llm_calls(&parse(line, "t").unwrap());
        assert_eq!(calls.len(), 1);
        assert_eq!(calls[0].tokens, 812);
        assert!(calls[0].fallback);
        let sparse = r#"{"turn":5,"event":"llm_call","provider":"p"}"#;
        assert_eq!(llm_calls(&parse(sparse, "t").unwrap())[0].outcome, "");
    }
}
