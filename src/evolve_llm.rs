//! The LLM generator of `harness evolve`: the prompts that ask a model for a candidate harness
//! and for its repair, and the reading of the model's reply into harness files.
//!
//! The model is behind [`Model`], so this module makes no call itself: the command line puts a
//! provider client (live, recording or replaying) behind it, and tests can put anything. A
//! prompt names the game, the protocol's four roles and the reference harnesses, best first;
//! a repair prompt carries every error diagnostic (code, span, message, help), the explain
//! page of each code once, and the harness that failed. A reply is one string holding the
//! harness's files; a reply without harness text is a rejected candidate with the reason, never
//! a failure of the run.

use harness_stdlib::llm::{FieldSpec, FieldType, FieldValue, LlmClient, LlmRequest, ReplyShape};

use crate::games::Registry;
use crate::load::Sources;
use crate::patch::{FileReplacement, Patch};
use crate::repair::{Repaired, Round};
use crate::validate::{Options, Report, validate};

/// The name the generator's first request is made under (what a simulated persona keys on).
pub const CANDIDATE_EFFECT: &str = "evolve_candidate";
/// The name of a repair request.
pub const REPAIR_EFFECT: &str = "evolve_repair";
/// The reply's one field: the harness's text.
pub const REPLY_FIELD: &str = "harness";
/// The line that starts each file of a reply holding several files.
pub const FILE_MARKER: &str = "// file: ";

/// A model the generator can ask: one request, answered with the text of the reply's
/// [`REPLY_FIELD`], or why there is none (a provider failure, a reply that is not the shape).
pub trait Model {
    /// Asks the model; `effect` is [`CANDIDATE_EFFECT`] or [`REPAIR_EFFECT`].
    fn ask(&mut self, effect: &str, system: &str, user: &str) -> Result<String, String>;
}

/// The LLM generator's model: a provider client asked for a record with one string field.
pub struct ClientModel {
    client: LlmClient,
}

impl ClientModel {
    /// The model behind `client`.
    pub fn new(client: LlmClient) -> Self {
        ClientModel { client }
    }
}

impl Model for ClientModel {
    fn ask(&mut self, effect: &str, system: &str, user: &str) -> Result<String, String> {
        let request = LlmRequest::new(system, user, reply()).for_effect(effect);
        let call = self.client.call(&request);
        match call.outcome {
            Ok(value) => match value.field(REPLY_FIELD) {
                Some(FieldValue::Str(text)) => Ok(text.clone()),
                _ => Err(format!("the model's reply has no `{REPLY_FIELD}` string")),
            },
            Err(failure) => Err(format!("the model call failed: {failure}")),
        }
    }
}

/// The shape of the generator's reply.
pub fn reply() -> ReplyShape {
    ReplyShape::Record {
        fields: vec![FieldSpec::required(REPLY_FIELD, FieldType::String)],
    }
}

/// The system prompt of every request.
pub const SYSTEM: &str = "You write agent harnesses in the declarative .harness language. \
A harness is one or more files; each file starts with `harness MODULE.NAME` and `use game GAME`. \
Reply with a JSON object {\"harness\": TEXT} whose TEXT is the complete source of one harness; \
when it has several files, start each with a line `// file: NAME.harness`. Write no commentary \
outside the JSON.";

/// A harness as a prompt shows it.
fn show(label: &str, sources: &Sources) -> String {
    let mut out = format!("<harness name=\"{label}\">\n");
    for (path, text) in &sources.files {
        out.push_str(FILE_MARKER);
        out.push_str(&file_name(path));
        out.push('\n');
        out.push_str(text);
        if !text.ends_with('\n') {
            out.push('\n');
        }
    }
    out.push_str("</harness>\n");
    out
}

fn file_name(path: &str) -> String {
    std::path::Path::new(path)
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| path.to_string())
}

/// The prompt asking for a new candidate from the references, best first.
/// `number` of `count` tells the candidates of a round apart, so each is its own request.
pub fn candidate_prompt(
    game: &str,
    references: &[&Sources],
    number: usize,
    count: usize,
) -> String {
    let mut out = format!(
        "Game: {game}. The harness follows the jit4 protocol: four layers with the roles memory, \
         planning, capability and action, each `needs` the one before; memory holds state and \
         no `decide` or `emit`; planning exposes a `directive`; capability exposes the set of \
         effects `exposed`; the action layer uses only those.\n\nThe reference harnesses of the \
         archive, best first:\n\n"
    );
    for (i, sources) in references.iter().enumerate() {
        out.push_str(&show(&format!("reference {}", i + 1), sources));
        out.push('\n');
    }
    out.push_str(&format!(
        "Write candidate {number} of {count}: one new harness for this game that differs \
             from every reference and may do better; change what the references decide, keep \
             what makes them valid.\n"
    ));
    out
}

/// The prompt asking to repair `sources` after `report`: every error with its code, span,
/// message and help, the explain page of each code once, and the harness itself.
pub fn repair_prompt(sources: &Sources, report: &Report) -> String {
    let mut out = format!(
        "The harness below is not valid: it stopped at the {} stage.\n\nDiagnostics:\n",
        report.stage.name()
    );
    for f in report.errors() {
        out.push_str(&format!(
            "- {} at {}:{}:{} (bytes {}..{}): {}\n",
            f.code,
            file_name(&f.file),
            f.line,
            f.column,
            f.start,
            f.end,
            f.message
        ));
        if let Some(help) = &f.help {
            out.push_str(&format!("  help: {help}\n"));
        }
    }
    for problem in &report.problems {
        out.push_str(&format!("- {problem}\n"));
    }
    let mut explained: Vec<&str> = Vec::new();
    for f in report.errors() {
        if explained.contains(&f.code.as_str()) || f.explain.is_empty() {
            continue;
        }
        explained.push(&f.code);
        out.push_str(&format!(
            "\nExplain {}:\n{}\n",
            f.code,
            f.explain.trim_end()
        ));
    }
    out.push('\n');
    out.push_str(&show("candidate", sources));
    out.push_str("\nReply with the complete corrected harness.\n");
    out
}

/// Reads a reply into harness files. A reply without a `// file:` line is one file, named
/// after the parent's first file; code fences around it are dropped. An empty reply, or one
/// in which no file starts with a `harness` header, is refused with the reason.
pub fn read_reply(reply: &str, parent: &Sources, name: &str) -> Result<Sources, String> {
    let text = strip_fences(reply);
    if text.trim().is_empty() {
        return Err("the model's reply holds no harness text".into());
    }
    let mut files: Vec<(String, String)> = Vec::new();
    if text.lines().any(|l| l.starts_with(FILE_MARKER)) {
        for line in text.split_inclusive('\n') {
            if let Some(name) = line.strip_prefix(FILE_MARKER) {
                files.push((name.trim().to_string(), String::new()));
            } else if let Some((_, body)) = files.last_mut() {
                body.push_str(line);
            } else if !line.trim().is_empty() {
                return Err("the model's reply has text before its first `// file:` line".into());
            }
        }
    } else {
        let Some((path, _)) = parent.files.first() else {
            return Err("the reference has no file to name the reply after".into());
        };
        files.push((file_name(path), text.to_string()));
    }
    for (file, body) in &files {
        if file.is_empty()
            || file.contains(['/', '\\'])
            || !file.ends_with(".harness")
            || file.starts_with('.')
        {
            return Err(format!(
                "the model's reply names the file `{file}`; a file is NAME.harness with no directory"
            ));
        }
        if !body
            .lines()
            .map(str::trim_start)
            .find(|l| !l.is_empty() && !l.starts_with("//"))
            .is_some_and(|l| l.starts_with("harness "))
        {
            return Err(format!(
                "the model's reply is not harness text: `{file}` does not start with a \
                 `harness MODULE` header"
            ));
        }
    }
    files.sort_by(|a, b| a.0.cmp(&b.0));
    if files.windows(2).any(|w| w[0].0 == w[1].0) {
        return Err("the model's reply names one file twice".into());
    }
    Ok(Sources {
        name: name.to_string(),
        files,
    })
}

/// The text inside a reply's code fences, or the reply itself without them.
fn strip_fences(reply: &str) -> &str {
    let trimmed = reply.trim();
    if let Some(rest) = trimmed.strip_prefix("```") {
        let body = rest.split_once('\n').map_or("", |(_, b)| b);
        return body.trim_end().strip_suffix("```").unwrap_or(body);
    }
    reply
}

/// Validates `sources` and, while it is invalid, asks the model for a repair, in at most
/// `max_rounds` rounds. Each round is recorded as a whole-file replacement under the rule
/// `llm`. A reply that cannot be read ends the repair with the harness as it stood and the
/// reason.
pub fn repair_with(
    registry: &Registry,
    sources: &Sources,
    options: &Options<'_>,
    max_rounds: usize,
    model: &mut dyn Model,
) -> (Repaired, Option<String>) {
    let mut current = sources.clone();
    let mut rounds = Vec::new();
    loop {
        let report = validate(registry, &current, options);
        let finish = |current, rounds: Vec<Round>, report: Report, why| {
            let valid_after = report.valid.then_some(rounds.len());
            (
                Repaired {
                    sources: current,
                    rounds,
                    report,
                    valid_after,
                },
                why,
            )
        };
        if report.valid || rounds.len() == max_rounds {
            return finish(current, rounds, report, None);
        }
        let reply = model
            .ask(REPAIR_EFFECT, SYSTEM, &repair_prompt(&current, &report))
            .and_then(|text| read_reply(&text, &current, &current.name));
        let repaired = match reply {
            Ok(repaired) => repaired,
            Err(why) => return finish(current, rounds, report, Some(why)),
        };
        rounds.push(Round {
            round: rounds.len() + 1,
            codes: report.errors().map(|f| f.code.clone()).collect(),
            rules: vec!["llm".into()],
            patch: Patch {
                files: repaired
                    .files
                    .iter()
                    .map(|(file, text)| FileReplacement {
                        file: file.clone(),
                        text: text.clone(),
                    })
                    .collect(),
                ..Patch::default()
            },
        });
        current = repaired;
    }
}
