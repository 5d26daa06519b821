//! Traces read back and folded into per-turn rows, with spans shown as `path:line:column`.
//!
//! A trace is JSON lines of the runtime's own event type ([`TraceEvent`]); its first event is
//! the program's file table.

use std::collections::BTreeMap;

use harness_compiler::ir::SrcSpan;
use harness_runtime::{TraceEvent, TraceEventKind as Kind, TraceFile};
use serde::Serialize;
use serde_json::Value;

/// Parses a trace; `name` says which trace a bad line is in.
pub fn parse(text: &str, name: &str) -> Result<Vec<TraceEvent>, String> {
    text.lines()
        .enumerate()
        .filter(|(_, line)| !line.trim().is_empty())
        .map(|(index, line)| {
            serde_json::from_str(line).map_err(|error| {
                format!(
                    "the trace {name} is corrupt: line {} is not an event ({error}); delete the \
                     episode's record under games/ and finish the run with `harness ablate --resume`",
                    index + 1
                )
            })
        })
        .collect()
}

/// The trace's file table (its first event), empty for a trace without one.
pub fn files(events: &[TraceEvent]) -> Vec<TraceFile> {
    events
        .iter()
        .find_map(|event| match &event.kind {
            Kind::Files { files } => Some(files.clone()),
            _ => None,
        })
        .unwrap_or_default()
}

/// A span as `path:line:column`, or `None` for the empty span of the game's own events.
pub fn location(files: &[TraceFile], span: SrcSpan) -> Option<String> {
    if span == SrcSpan::default() {
        return None;
    }
    let file = files.get(span.file as usize)?;
    let (line, column) = file.line_column(span.start);
    Some(format!("{}:{line}:{column}", file.path))
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
            let inner: Vec<String> = fields
                .iter()
                .map(|(key, value)| format!("{key}: {}", show(value)))
                .collect();
            format!("{{{}}}", inner.join(", "))
        }
    }
}

fn show_args(args: &[Value]) -> String {
    args.iter().map(show).collect::<Vec<_>>().join(" ")
}

fn is_scalar(value: &Value) -> bool {
    matches!(value, Value::Bool(_) | Value::Number(_) | Value::String(_))
}

/// A value that changed.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Change {
    /// The state field or tunable.
    pub name: String,
    /// Its old value, shown.
    pub old: String,
    /// Its new value, shown.
    pub new: String,
}

/// One turn of an episode, as the `game` view shows it.
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
    /// Where the rule is, as `path:line:column`.
    pub rule_at: Option<String>,
    /// Whether a revision gate was open.
    pub gate_open: bool,
    /// Tunables revised this turn whose value changed.
    pub revisions: Vec<Change>,
    /// Previews read this turn.
    pub previews: usize,
    /// The best preview: its action and value, when the values are numbers.
    pub best_preview: Option<(String, f64)>,
    /// Scalar state fields that changed.
    pub patches: Vec<Change>,
    /// LLM calls, as `effect: outcome`.
    pub llm: Vec<String>,
    /// Rejected actions and errors, with where they happened.
    pub problems: Vec<String>,
}

/// The end of an episode as recorded by its `episode_end` event.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct EpisodeEnd {
    /// Why it ended.
    pub reason: String,
    /// The reason given by the `halt` that ended it, if one did.
    pub halt: Option<String>,
    /// The game's metrics, shown.
    pub metrics: BTreeMap<String, String>,
}

/// Folds a trace into per-turn rows and its end.
pub fn turns(events: &[TraceEvent]) -> (Vec<TurnRow>, Option<EpisodeEnd>) {
    let files = files(events);
    let mut rows: Vec<TurnRow> = Vec::new();
    let mut end = None;
    for event in events {
        match &event.kind {
            Kind::EpisodeEnd {
                reason,
                metrics,
                halt,
            } => {
                end = Some(EpisodeEnd {
                    reason: reason.clone(),
                    halt: halt.clone(),
                    metrics: metrics
                        .iter()
                        .map(|(key, value)| (key.clone(), show(value)))
                        .collect(),
                });
                continue;
            }
            Kind::Files { .. } => continue,
            _ => {}
        }
        if rows.last().is_none_or(|row| row.turn != event.turn) {
            rows.push(TurnRow {
                turn: event.turn,
                ..TurnRow::default()
            });
        }
        let Some(row) = rows.last_mut() else { continue };
        let at = || {
            location(&files, event.span)
                .map(|at| format!(" at {at}"))
                .unwrap_or_default()
        };
        match &event.kind {
            Kind::Observation { name, args } => {
                row.observations.push(format!("{name} {}", show_args(args)));
            }
            Kind::Chosen { action, args, rule } => {
                row.action = Some(format!("{action} {}", show_args(args)).trim().to_string());
                row.layer.clone_from(&event.layer);
                row.rule = Some(*rule);
                row.rule_at = location(&files, event.span);
            }
            Kind::Gate { value, .. } => row.gate_open |= *value,
            Kind::Revision { tunable, old, new } if old != new => row.revisions.push(Change {
                name: tunable.clone(),
                old: show(old),
                new: show(new),
            }),
            Kind::Preview {
                action,
                args,
                value,
                ..
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
                    name: field.clone(),
                    old: show(old),
                    new: show(new),
                });
            }
            Kind::LlmCall {
                effect, outcome, ..
            } => row.llm.push(format!("{effect}: {outcome}")),
            Kind::Rejected { action, error } => row.problems.push(format!(
                "rejected {action}: {}: {}{}",
                error.code,
                error.message,
                at()
            )),
            Kind::Error { error } => {
                row.problems
                    .push(format!("error {}: {}{}", error.code, error.message, at()))
            }
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

/// A state field's value over turns: for each turn, the value after the turn's events (the
/// last patch so far), and whether a gate was open or a revision applied that turn. `field`
/// is `layer.name`, or a path into a record (`layer.name.inner`). Returns `None` when the trace
/// never patches the field.
pub fn field_series(events: &[TraceEvent], field: &str) -> Option<Vec<SeriesPoint>> {
    let (state, path) = split_field(events, field)?;
    let mut current: Option<Value> = None;
    let mut points: Vec<SeriesPoint> = Vec::new();
    let mut seen = false;
    for event in events {
        if matches!(event.kind, Kind::Files { .. } | Kind::EpisodeEnd { .. }) || event.turn == 0 {
            if let Kind::Patch { field: f, new, .. } = &event.kind
                && event.turn == 0
            {
                apply_patch(&mut current, &mut seen, f, new, &state);
            }
            continue;
        }
        if points.last().is_none_or(|p| p.turn != event.turn) {
            points.push(SeriesPoint {
                turn: event.turn,
                value: None,
                gate_open: false,
                revised: false,
            });
        }
        let Some(point) = points.last_mut() else {
            continue;
        };
        match &event.kind {
            Kind::Patch { field: f, new, .. } => {
                apply_patch(&mut current, &mut seen, f, new, &state);
            }
            Kind::Gate { value, .. } => point.gate_open |= *value,
            Kind::Revision { old, new, .. } if old != new => point.revised = true,
            _ => {}
        }
        point.value = current.as_ref().and_then(|v| pick(v, &path)).cloned();
    }
    seen.then_some(points)
}

/// Splits `layer.name.inner.path` into the state field (`layer.name`) and the path inside it,
/// choosing the longest prefix that the trace patches.
fn split_field(events: &[TraceEvent], field: &str) -> Option<(String, Vec<String>)> {
    let parts: Vec<&str> = field.split('.').collect();
    (2..=parts.len()).rev().find_map(|n| {
        let state = parts[..n].join(".");
        let patched = events.iter().any(|event| match &event.kind {
            Kind::Patch { field: f, .. } => {
                *f == state
                    || f.starts_with(&format!("{state}."))
                    || state.starts_with(&format!("{f}."))
            }
            _ => false,
        });
        patched.then(|| {
            (
                parts[..2].join("."),
                parts[2..].iter().map(|p| p.to_string()).collect(),
            )
        })
    })
}

/// Applies a patch of `field` (the whole state field or a path inside it) to `current`.
fn apply_patch(
    current: &mut Option<Value>,
    seen: &mut bool,
    field: &str,
    new: &Value,
    state: &str,
) {
    if field == state {
        *current = Some(new.clone());
        *seen = true;
    } else if let Some(inner) = field.strip_prefix(&format!("{state}.")) {
        let value = current.get_or_insert_with(|| Value::Object(Default::default()));
        let mut target = value;
        for part in inner.split('.') {
            let Value::Object(map) = target else { return };
            target = map.entry(part.to_string()).or_insert(Value::Null);
        }
        *target = new.clone();
        *seen = true;
    }
}

fn pick<'a>(value: &'a Value, path: &[String]) -> Option<&'a Value> {
    path.iter().try_fold(value, |v, key| v.get(key))
}

/// One turn of a series.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SeriesPoint {
    /// The turn.
    pub turn: u32,
    /// The value (after the turn for a state field, at decision time for a computed value).
    pub value: Option<Value>,
    /// Whether a revision gate was open.
    pub gate_open: bool,
    /// Whether a revision changed a tunable.
    pub revised: bool,
}

/// The gates and revisions of each turn, to mark a series of computed values read elsewhere.
pub fn gates_and_revisions(events: &[TraceEvent]) -> BTreeMap<u32, (bool, bool)> {
    let mut out: BTreeMap<u32, (bool, bool)> = BTreeMap::new();
    for event in events {
        match &event.kind {
            Kind::Gate { value, .. } => out.entry(event.turn).or_default().0 |= *value,
            Kind::Revision { old, new, .. } if old != new => {
                out.entry(event.turn).or_default().1 = true;
            }
            _ => {}
        }
    }
    out
}

/// An LLM call as a trace records it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TracedCall {
    /// The turn.
    pub turn: u32,
    /// The effect.
    pub effect: String,
    /// `ok` or the failure kind.
    pub outcome: String,
    /// The model, when a call went out.
    pub model: Option<String>,
    /// Prompt and completion tokens, where reported.
    pub tokens: u64,
}

/// The LLM calls of a trace.
pub fn llm_calls(events: &[TraceEvent]) -> Vec<TracedCall> {
    events
        .iter()
        .filter_map(|event| match &event.kind {
            Kind::LlmCall {
                effect,
                outcome,
                model,
                prompt_tokens,
                completion_tokens,
                ..
            } => Some(TracedCall {
                turn: event.turn,
                effect: effect.clone(),
                outcome: outcome.clone(),
                model: model.clone(),
                tokens: prompt_tokens.unwrap_or(0) + completion_tokens.unwrap_or(0),
            }),
            _ => None,
        })
        .collect()
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A small reflective episode: a monitor patched on turns 2 and 3, a gate opening on turn 3
    /// with a revision that changes one tunable and re-states another, and the end.
    pub(crate) const TRACE: &str = r#"{"turn":0,"phase":"start","layer":null,"span":{"file":0,"start":0,"end":0},"event":"files","files":[{"path":"a.harness","line_starts":[0,10]},{"path":"b.harness","line_starts":[0,4,8]},{"path":"c.harness","line_starts":[0,3]}]}
{"turn":1,"phase":"reflect","layer":"reflection","span":{"file":2,"start":1,"end":2},"event":"gate","gate":"revise #0","value":false}
{"turn":1,"phase":"decide","layer":"reflection","span":{"file":1,"start":1,"end":2},"event":"preview","action":"ask","args":["row:A"],"branches":2,"reading":"expect","value":0.02}
{"turn":1,"phase":"decide","layer":"reflection","span":{"file":1,"start":1,"end":2},"event":"preview","action":"ask","args":["row:B"],"branches":2,"reading":"expect","value":0.03}
{"turn":1,"phase":"decide","layer":"reflection","span":{"file":1,"start":5,"end":6},"event":"chosen","action":"probe","args":[{"question":"row:B","score":0.03}],"rule":0}
{"turn":1,"phase":"act","layer":"reflection","span":{"file":2,"start":1,"end":2},"event":"patch","field":"reflection.used_coarse","old":0,"new":1}
{"turn":1,"phase":"act","layer":"reflection","span":{"file":2,"start":1,"end":2},"event":"effect","name":"ask","args":["row:B"]}
{"turn":2,"phase":"observe","layer":null,"span":{"file":0,"start":0,"end":0},"event":"observation","name":"answer","args":["row:B",false]}
{"turn":2,"phase":"observe","layer":"reflection","span":{"file":2,"start":1,"end":2},"event":"patch","field":"reflection.monitor","old":{},"new":{"prediction_ema":0.6,"calibration_ema":0.2,"low_confidence_streak":1,"cooldown":0}}
{"turn":2,"phase":"reflect","layer":"reflection","span":{"file":2,"start":1,"end":2},"event":"gate","gate":"revise #0","value":false}
{"turn":2,"phase":"decide","layer":"belief","span":{"file":0,"start":1,"end":2},"event":"chosen","action":"shoot","args":["C4"],"rule":0}
{"turn":3,"phase":"observe","layer":null,"span":{"file":0,"start":0,"end":0},"event":"observation","name":"reply","args":["C4",true]}
{"turn":3,"phase":"observe","layer":"reflection","span":{"file":2,"start":1,"end":2},"event":"patch","field":"reflection.monitor","old":{},"new":{"prediction_ema":0.7,"calibration_ema":0.3,"low_confidence_streak":2,"cooldown":0}}
{"turn":3,"phase":"reflect","layer":"reflection","span":{"file":2,"start":1,"end":2},"event":"gate","gate":"revise #0","value":true}
{"turn":3,"phase":"revise","layer":"reflection","span":{"file":2,"start":1,"end":2},"event":"revision","tunable":"reflection.coarse_quota","old":6,"new":5}
{"turn":3,"phase":"revise","layer":"reflection","span":{"file":2,"start":1,"end":2},"event":"revision","tunable":"reflection.late_quota","old":4,"new":4}
{"turn":3,"phase":"revise","layer":"reflection","span":{"file":2,"start":1,"end":2},"event":"patch","field":"reflection.monitor.cooldown","old":0,"new":3}
{"turn":3,"phase":"decide","layer":"reflection","span":{"file":2,"start":1,"end":2},"event":"chosen","action":"strike","args":["C5"],"rule":1}
{"turn":3,"phase":"decide","layer":"reflection","span":{"file":2,"start":1,"end":2},"event":"llm_call","effect":"revise_policy","attempt":1,"outcome":"not_configured","provider":null,"model":null,"prompt_tokens":null,"completion_tokens":null}
{"turn":4,"phase":"observe","layer":null,"span":{"file":0,"start":0,"end":0},"event":"observation","name":"reply","args":["C5",true]}
{"turn":4,"phase":"end","layer":null,"span":{"file":0,"start":0,"end":0},"event":"episode_end","reason":"game_over","metrics":{"score":0.5,"solved":true}}
"#;

    #[test]
    fn traces_parse_with_the_runtime_schema() {
        let events = parse(TRACE, "t").unwrap();
        assert_eq!(events.len(), 21);
        assert_eq!(files(&events).len(), 3);
        let error = parse("{\"turn\":1}\nnot json\n", "traces/l1/b01-s0.jsonl").unwrap_err();
        assert!(error.contains("line 1"), "{error}");
    }

    #[test]
    fn turns_collect_actions_changes_previews_and_locations() {
        let events = parse(TRACE, "t").unwrap();
        let (rows, end) = turns(&events);
        assert_eq!(rows.len(), 4);
        assert_eq!(
            rows[0].action.as_deref(),
            Some("probe {question: row:B, score: 0.03}")
        );
        assert_eq!(rows[0].rule_at.as_deref(), Some("b.harness:2:2"));
        assert_eq!(rows[0].previews, 2);
        assert_eq!(rows[0].best_preview, Some(("ask row:B".to_string(), 0.03)));
        assert_eq!(rows[0].patches[0].name, "reflection.used_coarse");
        assert_eq!(rows[1].observations, vec!["answer row:B no"]);
        assert_eq!(rows[0].result, rows[1].observations);
        assert!(rows[2].gate_open && !rows[1].gate_open);
        // The re-stated, unchanged tunable is not a change.
        assert_eq!(rows[2].revisions.len(), 1);
        assert_eq!(rows[2].llm, vec!["revise_policy: not_configured"]);
        let end = end.unwrap();
        assert_eq!(end.reason, "game_over");
        assert_eq!(end.metrics["solved"], "yes");
    }

    #[test]
    fn a_field_series_follows_whole_and_partial_patches() {
        let events = parse(TRACE, "t").unwrap();
        let series = field_series(&events, "reflection.monitor.cooldown").unwrap();
        let values: Vec<Option<Value>> = series.iter().map(|p| p.value.clone()).collect();
        assert_eq!(
            values,
            vec![None, Some(0.into()), Some(3.into()), Some(3.into())]
        );
        assert!(series[2].gate_open && series[2].revised);
        let used = field_series(&events, "reflection.used_coarse").unwrap();
        assert_eq!(used[0].value, Some(1.into()));
        assert!(field_series(&events, "reflection.nothing").is_none());
        assert_eq!(llm_calls(&events).len(), 1);
    }
}
