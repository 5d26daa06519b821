//! The simulated model: a persona file turned into a transport that answers without any IO.
//!
//! `--llm-provider sim --llm-sim PERSONA.toml` puts a [`SimTransport`] where the HTTP transport
//! would be. It reads the request body the client built (messages, temperature, schema mode),
//! and writes an OpenAI-compatible response body, so parsing, validation, budgets, record and
//! replay run unchanged on it. It is a test instrument and an offline stand-in: what it answers
//! is what its persona declares, and its figures are never a model's.
//!
//! A persona declares, per `llm` item, an **intent** (a literal reply, or values taken from the
//! rendered prompt by pattern, optionally edited by literal `replace = [['from', 'to']]`
//! substitutions) and **noise channels** (wrong value, malformed JSON, missing
//! field, reordering, paraphrase of strings, no answer). Each channel fires with probability
//! `min(1, rate × temperature)`, so temperature 0 is noise-free. Every draw comes from a stream
//! of the episode's seeded streams named after the request hash and its occurrence, so the
//! answer depends only on the replicate, the request and how many times the episode has made
//! it: byte-identical traces for the same seed, on any number of threads. Under strict schema
//! decoding the channels a schema-constrained decoder cannot produce (malformed JSON, a missing
//! field, a value outside its bounds) do not fire.

use std::collections::BTreeMap;

use harness_runtime::{RngStreams, Stream};
use regex::Regex;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use super::request::LlmRequest;
use super::shape::{CHOICE_KEY, FieldSpec, FieldType, ReplyShape};
use super::transport::{ChatTransport, HttpPost, HttpReply, TransportError};

/// The temperature assumed when a request sets none: the OpenAI API's default.
pub const DEFAULT_TEMPERATURE: f64 = 1.0;

/// A persona: who the simulated model pretends to be.
#[derive(Debug, Clone)]
pub struct Persona {
    /// The persona's name, reported as the model.
    pub name: String,
    /// What the persona is for, in one sentence.
    pub description: String,
    /// Characters per token, for the usage report (`ceil(chars / chars_per_token)`).
    pub chars_per_token: f64,
    /// The declared latency, reported instead of the (near-zero) wall time.
    pub latency: Latency,
    /// The SHA-256 of the persona file, for manifests.
    pub digest: String,
    effects: BTreeMap<String, EffectPersona>,
}

/// A declared latency: `base_ms + per_token_ms × completion tokens + U(0, jitter_ms)`.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Latency {
    /// Fixed part, in milliseconds.
    pub base_ms: f64,
    /// Per completion token, in milliseconds.
    pub per_token_ms: f64,
    /// The largest uniform jitter, in milliseconds, drawn from its own stream.
    pub jitter_ms: f64,
}

/// The rates of the noise channels, each scaled by the temperature.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Noise {
    /// One field (or list item) gets another value of its type.
    pub wrong_value: f64,
    /// The reply text is cut short, so it is not JSON.
    pub malformed: f64,
    /// One field is left out.
    pub missing_field: f64,
    /// Two neighbouring list items swap places (or, without lists, the keys are shuffled).
    pub reorder: f64,
    /// Per string value: another spelling or a declared synonym.
    pub paraphrase: f64,
    /// The reply is empty.
    pub no_answer: f64,
}

#[derive(Debug, Clone)]
struct EffectPersona {
    intent: Intent,
    noise: Noise,
    /// Alternative words for paraphrase, keyed by the lowercased original.
    synonyms: BTreeMap<String, Vec<String>>,
}

/// What the persona means to answer, before noise.
#[derive(Debug, Clone)]
enum Intent {
    /// This value.
    Literal(Value),
    /// The first capture group of a pattern over the rendered prompt; `default` when the
    /// pattern does not match (without one, the value is left out).
    Capture {
        pattern: Regex,
        default: Option<Box<Intent>>,
        /// Literal `(from, to)` substitutions applied in order to the captured text: a test
        /// instrument's stand-in for a model that edits what it read (a harness taken from
        /// the prompt and changed), not a model of anything.
        replace: Vec<(String, String)>,
    },
    /// The first of `items` that is not in the list captured by `done` (a procedure's next
    /// step); `default` when every item is done or `done` does not match.
    NextIn {
        items: Items,
        done: Regex,
        default: Option<Box<Intent>>,
    },
    /// An object whose fields have their own intents.
    Record(BTreeMap<String, Intent>),
    /// A list whose items have their own intents.
    List(Vec<Intent>),
}

/// The items a `next_in` intent walks.
#[derive(Debug, Clone)]
enum Items {
    /// Declared in the persona.
    Fixed(Vec<Value>),
    /// The list captured from the prompt by a pattern (`next_in = { capture = '...' }`), split
    /// like a `done` list: the procedure the prompt shows.
    Captured(Regex),
}

/// Why a persona file cannot be used: where, and what is wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PersonaError(pub String);

impl std::fmt::Display for PersonaError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for PersonaError {}

fn error(path: &str, message: impl std::fmt::Display) -> PersonaError {
    PersonaError(format!("{path}: {message}"))
}

impl Persona {
    /// Reads a persona from the text of its TOML file.
    pub fn parse(text: &str) -> Result<Persona, PersonaError> {
        let table: toml::Table = text
            .parse()
            .map_err(|e: toml::de::Error| PersonaError(e.to_string()))?;
        let digest = Sha256::digest(text.as_bytes())
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        only_keys(
            "the persona",
            &table,
            &["name", "description", "tokens", "latency", "effects"],
        )?;
        let name = match table.get("name") {
            Some(toml::Value::String(name)) if !name.trim().is_empty() => name.trim().to_owned(),
            _ => return Err(error("name", "expected the persona's name as a string")),
        };
        let description = match table.get("description") {
            Some(toml::Value::String(text)) => text.clone(),
            None => String::new(),
            Some(_) => return Err(error("description", "expected a string")),
        };
        let mut chars_per_token = 4.0;
        if let Some(tokens) = table.get("tokens") {
            let tokens = as_table("tokens", tokens)?;
            only_keys("tokens", tokens, &["chars_per_token"])?;
            if let Some(value) = tokens.get("chars_per_token") {
                chars_per_token = number("tokens.chars_per_token", value)?;
                if chars_per_token <= 0.0 {
                    return Err(error("tokens.chars_per_token", "must be above 0"));
                }
            }
        }
        let mut latency = Latency::default();
        if let Some(value) = table.get("latency") {
            let t = as_table("latency", value)?;
            only_keys("latency", t, &["base_ms", "per_token_ms", "jitter_ms"])?;
            let get = |key: &str| -> Result<f64, PersonaError> {
                let path = format!("latency.{key}");
                let v = t.get(key).map_or(Ok(0.0), |v| number(&path, v))?;
                if v < 0.0 {
                    return Err(error(&path, "must not be negative"));
                }
                Ok(v)
            };
            latency = Latency {
                base_ms: get("base_ms")?,
                per_token_ms: get("per_token_ms")?,
                jitter_ms: get("jitter_ms")?,
            };
        }
        let mut effects = BTreeMap::new();
        if let Some(value) = table.get("effects") {
            for (name, entry) in as_table("effects", value)? {
                let path = format!("effects.{name}");
                effects.insert(name.clone(), effect_persona(&path, entry)?);
            }
        }
        if effects.is_empty() {
            return Err(error(
                "effects",
                "the persona declares no `[effects.<llm item>]` entry",
            ));
        }
        Ok(Persona {
            name,
            description,
            chars_per_token,
            latency,
            digest,
            effects,
        })
    }

    /// Checks the persona against the `llm` items of a harness, before any game: every item
    /// needs an entry, and every field an entry names must be a field of the item's reply.
    pub fn check(&self, items: &[(String, ReplyShape)]) -> Result<(), PersonaError> {
        let missing: Vec<&str> = items
            .iter()
            .filter(|(name, _)| !self.effects.contains_key(name))
            .map(|(name, _)| name.as_str())
            .collect();
        if !missing.is_empty() {
            return Err(PersonaError(format!(
                "persona {:?} has no entry for the llm item{} {}; add `[effects.{}]` with a \
                 `reply`",
                self.name,
                if missing.len() == 1 { "" } else { "s" },
                missing.join(", "),
                missing[0]
            )));
        }
        for (name, shape) in items {
            let entry = &self.effects[name];
            if let (Intent::Record(fields), ReplyShape::Record { fields: specs }) =
                (&entry.intent, shape)
            {
                check_fields(&format!("effects.{name}.reply"), fields, specs)?;
            }
        }
        Ok(())
    }
}

fn check_fields(
    path: &str,
    fields: &BTreeMap<String, Intent>,
    specs: &[FieldSpec],
) -> Result<(), PersonaError> {
    for (field, intent) in fields {
        let Some(spec) = specs.iter().find(|s| &s.name == field) else {
            let known: Vec<&str> = specs.iter().map(|s| s.name.as_str()).collect();
            return Err(error(
                &format!("{path}.{field}"),
                format!(
                    "the reply has no field `{field}` (it has {})",
                    known.join(", ")
                ),
            ));
        };
        let mut ty = &spec.ty;
        if let FieldType::Optional { inner } = ty {
            ty = inner;
        }
        match (intent, ty) {
            (Intent::Record(inner), FieldType::Record { fields }) => {
                check_fields(&format!("{path}.{field}"), inner, fields)?;
            }
            (Intent::List(items), FieldType::List { item, .. }) => {
                if let FieldType::Record { fields } = item.as_ref() {
                    for (i, intent) in items.iter().enumerate() {
                        if let Intent::Record(inner) = intent {
                            check_fields(&format!("{path}.{field}[{i}]"), inner, fields)?;
                        }
                    }
                }
            }
            _ => {}
        }
    }
    Ok(())
}

fn effect_persona(path: &str, value: &toml::Value) -> Result<EffectPersona, PersonaError> {
    let table = as_table(path, value)?;
    only_keys(path, table, &["reply", "noise", "synonyms"])?;
    let intent = match table.get("reply") {
        Some(reply) => intent(&format!("{path}.reply"), reply)?,
        None => return Err(error(path, "expected a `reply` (the persona's intent)")),
    };
    let mut noise = Noise::default();
    if let Some(value) = table.get("noise") {
        let npath = format!("{path}.noise");
        let t = as_table(&npath, value)?;
        only_keys(
            &npath,
            t,
            &[
                "wrong_value",
                "malformed",
                "missing_field",
                "reorder",
                "paraphrase",
                "no_answer",
            ],
        )?;
        let rate = |key: &str| -> Result<f64, PersonaError> {
            let p = format!("{npath}.{key}");
            let r = t.get(key).map_or(Ok(0.0), |v| number(&p, v))?;
            if !(0.0..=1.0).contains(&r) {
                return Err(error(&p, "a rate must lie in [0, 1]"));
            }
            Ok(r)
        };
        noise = Noise {
            wrong_value: rate("wrong_value")?,
            malformed: rate("malformed")?,
            missing_field: rate("missing_field")?,
            reorder: rate("reorder")?,
            paraphrase: rate("paraphrase")?,
            no_answer: rate("no_answer")?,
        };
    }
    let mut synonyms = BTreeMap::new();
    if let Some(value) = table.get("synonyms") {
        let spath = format!("{path}.synonyms");
        for (word, alternatives) in as_table(&spath, value)? {
            let p = format!("{spath}.{word}");
            let list = match alternatives {
                toml::Value::Array(items) => items
                    .iter()
                    .map(|item| match item {
                        toml::Value::String(s) => Ok(s.clone()),
                        _ => Err(error(&p, "expected a list of strings")),
                    })
                    .collect::<Result<Vec<_>, _>>()?,
                _ => return Err(error(&p, "expected a list of strings")),
            };
            if list.is_empty() {
                return Err(error(&p, "expected at least one synonym"));
            }
            synonyms.insert(word.to_lowercase(), list);
        }
    }
    Ok(EffectPersona {
        intent,
        noise,
        synonyms,
    })
}

fn intent(path: &str, value: &toml::Value) -> Result<Intent, PersonaError> {
    match value {
        toml::Value::Table(table) if table.contains_key("capture") => {
            only_keys(path, table, &["capture", "default", "replace"])?;
            Ok(Intent::Capture {
                pattern: pattern(&format!("{path}.capture"), &table["capture"])?,
                default: default_intent(path, table)?,
                replace: replacements(&format!("{path}.replace"), table.get("replace"))?,
            })
        }
        toml::Value::Table(table) if table.contains_key("next_in") => {
            only_keys(path, table, &["next_in", "done", "default"])?;
            let items = match &table["next_in"] {
                toml::Value::Array(items) if !items.is_empty() => {
                    Items::Fixed(items.iter().map(to_json).collect())
                }
                toml::Value::Table(t) if t.len() == 1 && t.contains_key("capture") => {
                    Items::Captured(pattern(&format!("{path}.next_in.capture"), &t["capture"])?)
                }
                _ => {
                    return Err(error(
                        &format!("{path}.next_in"),
                        "expected a non-empty list, or `{ capture = '...' }` taking the list from the prompt",
                    ));
                }
            };
            let Some(done) = table.get("done") else {
                return Err(error(
                    path,
                    "`next_in` needs `done`, a pattern capturing the items already done",
                ));
            };
            Ok(Intent::NextIn {
                items,
                done: pattern(&format!("{path}.done"), done)?,
                default: default_intent(path, table)?,
            })
        }
        toml::Value::Table(table) if table.contains_key("value") => {
            only_keys(path, table, &["value"])?;
            Ok(Intent::Literal(to_json(&table["value"])))
        }
        toml::Value::Table(table) => table
            .iter()
            .map(|(key, value)| Ok((key.clone(), intent(&format!("{path}.{key}"), value)?)))
            .collect::<Result<BTreeMap<_, _>, _>>()
            .map(Intent::Record),
        toml::Value::Array(items) => items
            .iter()
            .enumerate()
            .map(|(i, item)| intent(&format!("{path}[{i}]"), item))
            .collect::<Result<Vec<_>, _>>()
            .map(Intent::List),
        scalar => Ok(Intent::Literal(to_json(scalar))),
    }
}

/// `replace = [['from', 'to'], ...]` of a capture intent.
fn replacements(
    path: &str,
    value: Option<&toml::Value>,
) -> Result<Vec<(String, String)>, PersonaError> {
    let Some(value) = value else {
        return Ok(Vec::new());
    };
    let expected = || error(path, "expected a list of ['from', 'to'] pairs of strings");
    let toml::Value::Array(pairs) = value else {
        return Err(expected());
    };
    pairs
        .iter()
        .map(|pair| match pair.as_array().map(Vec::as_slice) {
            Some([toml::Value::String(from), toml::Value::String(to)]) if !from.is_empty() => {
                Ok((from.clone(), to.clone()))
            }
            _ => Err(expected()),
        })
        .collect()
}

fn default_intent(path: &str, table: &toml::Table) -> Result<Option<Box<Intent>>, PersonaError> {
    table
        .get("default")
        .map(|d| intent(&format!("{path}.default"), d).map(Box::new))
        .transpose()
}

fn pattern(path: &str, value: &toml::Value) -> Result<Regex, PersonaError> {
    let toml::Value::String(text) = value else {
        return Err(error(path, "expected a regular expression as a string"));
    };
    let regex = Regex::new(text).map_err(|e| error(path, e))?;
    if regex.captures_len() < 2 {
        return Err(error(
            path,
            "the pattern needs a capture group `( )` around the value it takes",
        ));
    }
    Ok(regex)
}

fn as_table<'a>(path: &str, value: &'a toml::Value) -> Result<&'a toml::Table, PersonaError> {
    value
        .as_table()
        .ok_or_else(|| error(path, "expected a table"))
}

fn only_keys(path: &str, table: &toml::Table, allowed: &[&str]) -> Result<(), PersonaError> {
    match table.keys().find(|key| !allowed.contains(&key.as_str())) {
        Some(key) => Err(error(
            path,
            format!("unknown key `{key}` (expected {})", allowed.join(", ")),
        )),
        None => Ok(()),
    }
}

fn number(path: &str, value: &toml::Value) -> Result<f64, PersonaError> {
    match value {
        toml::Value::Integer(n) => Ok(*n as f64),
        toml::Value::Float(x) if x.is_finite() => Ok(*x),
        _ => Err(error(path, "expected a number")),
    }
}

fn to_json(value: &toml::Value) -> Value {
    match value {
        toml::Value::String(s) => Value::from(s.clone()),
        toml::Value::Integer(n) => Value::from(*n),
        toml::Value::Float(x) => Value::from(*x),
        toml::Value::Boolean(b) => Value::from(*b),
        toml::Value::Datetime(d) => Value::from(d.to_string()),
        toml::Value::Array(items) => Value::Array(items.iter().map(to_json).collect()),
        toml::Value::Table(t) => {
            Value::Object(t.iter().map(|(k, v)| (k.clone(), to_json(v))).collect())
        }
    }
}

/// The simulated model as a transport.
#[derive(Debug, Clone)]
pub struct SimTransport {
    persona: Persona,
}

impl SimTransport {
    /// A transport answering as `persona`.
    pub fn new(persona: Persona) -> Self {
        SimTransport { persona }
    }

    /// The persona.
    pub fn persona(&self) -> &Persona {
        &self.persona
    }
}

impl ChatTransport for SimTransport {
    fn post(&self, post: &HttpPost<'_>) -> Result<HttpReply, TransportError> {
        let request = post.context.request;
        let Some(entry) = self.persona.effects.get(&request.effect) else {
            return Ok(HttpReply::new(
                404,
                json!({ "error": format!(
                    "persona {:?} has no entry for the llm item {:?}",
                    self.persona.name, request.effect
                ) })
                .to_string(),
            ));
        };
        let body: Value = serde_json::from_str(post.body).unwrap_or(Value::Null);
        let temperature = body
            .get("temperature")
            .and_then(Value::as_f64)
            .unwrap_or(DEFAULT_TEMPERATURE)
            .max(0.0);
        let strict = body.pointer("/response_format/type") == Some(&json!("json_schema"));
        let provider_seed = body.get("seed").and_then(Value::as_u64).unwrap_or(0);
        let streams = RngStreams::new(post.context.replicate);
        let name = format!(
            "llm.sim/{}/{}/{provider_seed}",
            post.context.hash, post.context.occurrence
        );
        let mut draws = streams.stream(&name);
        let prompt = prompt_text(request);

        let content = answer(
            entry,
            &request.shape,
            &prompt,
            temperature,
            strict,
            &mut draws,
        );
        let prompt_tokens = tokens(&prompt, self.persona.chars_per_token);
        let completion_tokens = tokens(&content, self.persona.chars_per_token);
        let latency = self.persona.latency;
        let jitter = streams.stream(&format!("{name}/latency")).next_f64() * latency.jitter_ms;
        let latency_ms = latency.base_ms + latency.per_token_ms * completion_tokens as f64 + jitter;
        let envelope = json!({
            "id": format!("sim-{}", &post.context.hash[..post.context.hash.len().min(12)]),
            "object": "chat.completion",
            "model": self.persona.name,
            "choices": [{
                "index": 0,
                "message": { "role": "assistant", "content": content },
                "finish_reason": "stop",
            }],
            "usage": {
                "prompt_tokens": prompt_tokens,
                "completion_tokens": completion_tokens,
                "total_tokens": prompt_tokens + completion_tokens,
            },
        });
        Ok(HttpReply {
            simulated_latency_ms: Some(latency_ms.round() as u64),
            ..HttpReply::new(200, envelope.to_string())
        })
    }
}

/// Every message's text, one per line: what captures search.
fn prompt_text(request: &LlmRequest) -> String {
    request
        .messages()
        .iter()
        .map(|m| m.content.as_str())
        .collect::<Vec<_>>()
        .join("\n")
}

fn tokens(text: &str, chars_per_token: f64) -> u64 {
    (text.chars().count() as f64 / chars_per_token).ceil() as u64
}

/// A reply under construction: JSON whose object keys keep the order they are written in.
#[derive(Debug, Clone, PartialEq)]
enum Node {
    Scalar(Value),
    List(Vec<Node>),
    Object(Vec<(String, Node)>),
}

impl Node {
    fn render(&self, out: &mut String) {
        match self {
            Node::Scalar(v) => out.push_str(&v.to_string()),
            Node::List(items) => {
                out.push('[');
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    item.render(out);
                }
                out.push(']');
            }
            Node::Object(fields) => {
                out.push('{');
                for (i, (key, value)) in fields.iter().enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    out.push_str(&Value::from(key.clone()).to_string());
                    out.push_str(": ");
                    value.render(out);
                }
                out.push('}');
            }
        }
    }

    fn from_json(value: &Value) -> Node {
        match value {
            Value::Array(items) => Node::List(items.iter().map(Node::from_json).collect()),
            Value::Object(map) => Node::Object(
                map.iter()
                    .map(|(k, v)| (k.clone(), Node::from_json(v)))
                    .collect(),
            ),
            scalar => Node::Scalar(scalar.clone()),
        }
    }
}

/// The reply text: the intent made concrete for this prompt, then the noise channels.
fn answer(
    entry: &EffectPersona,
    shape: &ReplyShape,
    prompt: &str,
    temperature: f64,
    strict: bool,
    draws: &mut Stream,
) -> String {
    let p = |rate: f64| (rate * temperature).clamp(0.0, 1.0);
    let noise = entry.noise;
    // Every channel draws on every call, fired or not, so one channel's rate never shifts
    // another's draws.
    let no_answer = draws.chance(p(noise.no_answer));
    let wrong_value = draws.chance(p(noise.wrong_value));
    let missing_field = draws.chance(p(noise.missing_field)) && !strict;
    let reorder = draws.chance(p(noise.reorder));
    let malformed = draws.chance(p(noise.malformed)) && !strict;

    let mut node = match shape {
        ReplyShape::Record { fields } => {
            let ty = FieldType::Record {
                fields: fields.clone(),
            };
            build(&entry.intent, Some(&ty), prompt).unwrap_or(Node::Object(Vec::new()))
        }
        ReplyShape::Enum { variants } => {
            let ty = FieldType::Choice {
                allowed: variants.clone(),
            };
            let tag = build(&entry.intent, Some(&ty), prompt).unwrap_or(Node::Scalar(Value::Null));
            Node::Object(vec![(CHOICE_KEY.to_owned(), tag)])
        }
    };
    let top_ty = match shape {
        ReplyShape::Record { fields } => FieldType::Record {
            fields: fields.clone(),
        },
        ReplyShape::Enum { variants } => FieldType::Record {
            fields: vec![FieldSpec::required(
                CHOICE_KEY,
                FieldType::Choice {
                    allowed: variants.clone(),
                },
            )],
        },
    };
    if wrong_value {
        wrong(&mut node, &top_ty, strict, draws);
    }
    if missing_field
        && let Node::Object(fields) = &mut node
        && !fields.is_empty()
    {
        let i = draws.below(fields.len() as u64) as usize;
        fields.remove(i);
    }
    if reorder {
        reorder_node(&mut node, draws);
    }
    paraphrase(&mut node, &entry.synonyms, p(noise.paraphrase), draws);

    let mut text = String::new();
    node.render(&mut text);
    if malformed && let Some(last) = text.rfind('}') {
        let mut cut = 1 + draws.below(last as u64) as usize;
        while !text.is_char_boundary(cut) {
            cut -= 1;
        }
        text.truncate(cut);
    }
    if no_answer {
        text.clear();
    }
    text
}

/// The value an intent stands for in this prompt, shaped by the declared type; `None` leaves
/// the value out.
fn build(intent: &Intent, ty: Option<&FieldType>, prompt: &str) -> Option<Node> {
    let ty = match ty {
        Some(FieldType::Optional { inner }) => Some(inner.as_ref()),
        other => other,
    };
    match intent {
        Intent::Literal(value) => Some(Node::from_json(value)),
        Intent::Capture {
            pattern,
            default,
            replace,
        } => match pattern.captures(prompt).and_then(|c| c.get(1)) {
            Some(text) => {
                let text = replace
                    .iter()
                    .fold(text.as_str().to_string(), |t, (from, to)| {
                        t.replace(from, to)
                    });
                Some(Node::from_json(&coerce(&text, ty)))
            }
            None => default.as_ref().and_then(|d| build(d, ty, prompt)),
        },
        Intent::NextIn {
            items,
            done,
            default,
        } => {
            let finished: Vec<String> = captured_list(done, prompt)
                .iter()
                .map(|s| s.to_lowercase())
                .collect();
            let items: Vec<Value> = match items {
                Items::Fixed(items) => items.clone(),
                Items::Captured(pattern) => captured_list(pattern, prompt)
                    .into_iter()
                    .map(Value::from)
                    .collect(),
            };
            let next = items.iter().find(|item| {
                let text = item
                    .as_str()
                    .map_or_else(|| item.to_string(), str::to_owned);
                !finished.contains(&text.to_lowercase())
            });
            match next {
                Some(item) => Some(Node::from_json(item)),
                None => default.as_ref().and_then(|d| build(d, ty, prompt)),
            }
        }
        Intent::Record(fields) => {
            let specs: &[FieldSpec] = match ty {
                Some(FieldType::Record { fields }) => fields,
                _ => &[],
            };
            // Declared fields first, in declaration order, as a model following the schema
            // writes them; then any the persona adds, which validation ignores.
            let mut out = Vec::new();
            for spec in specs {
                if let Some(intent) = fields.get(&spec.name)
                    && let Some(node) = build(intent, Some(&spec.ty), prompt)
                {
                    out.push((spec.name.clone(), node));
                }
            }
            for (name, intent) in fields {
                if !specs.iter().any(|s| &s.name == name)
                    && let Some(node) = build(intent, None, prompt)
                {
                    out.push((name.clone(), node));
                }
            }
            Some(Node::Object(out))
        }
        Intent::List(items) => {
            let item_ty = match ty {
                Some(FieldType::List { item, .. }) => Some(item.as_ref()),
                _ => None,
            };
            Some(Node::List(
                items
                    .iter()
                    .filter_map(|item| build(item, item_ty, prompt))
                    .collect(),
            ))
        }
    }
}

/// The words of the list a pattern's first group captures (`[a, "b"]` gives `a`, `b`); empty
/// when the pattern does not match.
fn captured_list(pattern: &Regex, prompt: &str) -> Vec<String> {
    pattern
        .captures(prompt)
        .and_then(|c| c.get(1))
        .map(|m| {
            m.as_str()
                .split(|c: char| c == ',' || c.is_whitespace() || "[]\"'".contains(c))
                .filter(|s| !s.is_empty())
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default()
}

/// Captured text as a value of the declared type: numbers and truth values parsed, strings
/// kept, lists and records read as JSON.
fn coerce(text: &str, ty: Option<&FieldType>) -> Value {
    let trimmed = text.trim();
    match ty {
        Some(FieldType::String | FieldType::Choice { .. }) => Value::from(text.to_owned()),
        Some(FieldType::Int { .. }) => trimmed
            .parse::<i64>()
            .map(Value::from)
            .unwrap_or_else(|_| Value::from(text.to_owned())),
        Some(FieldType::Float { .. }) => trimmed
            .parse::<f64>()
            .ok()
            .and_then(|x| serde_json::Number::from_f64(x).map(Value::Number))
            .unwrap_or_else(|| Value::from(text.to_owned())),
        Some(FieldType::Bool) => match trimmed {
            "true" => Value::Bool(true),
            "false" => Value::Bool(false),
            _ => Value::from(text.to_owned()),
        },
        _ => serde_json::from_str(trimmed).unwrap_or_else(|_| Value::from(text.to_owned())),
    }
}

/// Gives one field (or item) another value of its type. Under strict decoding the value stays
/// within its declared bounds; otherwise half the time it lands just outside them.
fn wrong(node: &mut Node, ty: &FieldType, strict: bool, draws: &mut Stream) {
    match (node, ty) {
        (Node::Object(fields), FieldType::Record { fields: specs }) if !fields.is_empty() => {
            let i = draws.below(fields.len() as u64) as usize;
            let (name, value) = &mut fields[i];
            if let Some(spec) = specs.iter().find(|s| &s.name == name) {
                wrong(value, &spec.ty, strict, draws);
            }
        }
        (Node::List(items), FieldType::List { item, .. }) if !items.is_empty() => {
            let i = draws.below(items.len() as u64) as usize;
            wrong(&mut items[i], item, strict, draws);
        }
        (node, FieldType::Optional { inner }) => match node {
            Node::Scalar(Value::Null) => {}
            _ if draws.chance(0.5) => *node = Node::Scalar(Value::Null),
            node => wrong(node, inner, strict, draws),
        },
        (Node::Scalar(value), FieldType::Int { min, max }) => {
            let current = value.as_i64().unwrap_or(0);
            let outside = !strict && draws.chance(0.5);
            let next = match (outside, min, max) {
                (true, _, Some(hi)) => hi.saturating_add(1),
                (true, Some(lo), None) => lo.saturating_sub(1),
                _ => {
                    let lo = min.unwrap_or(current.saturating_sub(10));
                    let hi = max.unwrap_or(current.saturating_add(10));
                    let span = hi.saturating_sub(lo).max(0) as u64;
                    if span == 0 {
                        lo
                    } else {
                        // A value of the range other than the current one.
                        let k = draws.below(span) as i64;
                        let candidate = lo + k;
                        if candidate >= current {
                            candidate + 1
                        } else {
                            candidate
                        }
                    }
                }
            };
            *value = Value::from(next);
        }
        (Node::Scalar(value), FieldType::Float { min, max }) => {
            let current = value.as_f64().unwrap_or(0.0);
            let outside = !strict && draws.chance(0.5);
            let next = match (outside, min, max) {
                (true, _, Some(hi)) => hi + 1.0,
                (true, Some(lo), None) => lo - 1.0,
                _ => {
                    let lo = min.unwrap_or(current - 1.0);
                    let hi = max.unwrap_or(current + 1.0);
                    lo + draws.next_f64() * (hi - lo)
                }
            };
            if let Some(n) = serde_json::Number::from_f64(next) {
                *value = Value::Number(n);
            }
        }
        (Node::Scalar(value), FieldType::Bool) => {
            *value = Value::Bool(!value.as_bool().unwrap_or(false));
        }
        (Node::Scalar(value), FieldType::Choice { allowed }) if allowed.len() > 1 => {
            let current = value.as_str().unwrap_or_default().to_lowercase();
            let others: Vec<&String> = allowed
                .iter()
                .filter(|a| a.to_lowercase() != current)
                .collect();
            if !others.is_empty() {
                let pick = others[draws.below(others.len() as u64) as usize];
                *value = Value::from(pick.clone());
            }
        }
        (Node::Scalar(value), FieldType::String) => {
            *value = Value::from("unknown");
        }
        _ => {}
    }
}

/// Swaps two neighbouring items of one list; a reply without lists gets its keys shuffled.
fn reorder_node(node: &mut Node, draws: &mut Stream) {
    fn lists<'a>(node: &'a mut Node, out: &mut Vec<&'a mut Vec<Node>>) {
        match node {
            Node::List(items) => {
                // A list is collected before its items, so one borrow covers it; its items'
                // own lists are not candidates (one list per reply is disturbed).
                if items.len() >= 2 {
                    out.push(items);
                } else {
                    for item in items {
                        lists(item, out);
                    }
                }
            }
            Node::Object(fields) => {
                for (_, value) in fields {
                    lists(value, out);
                }
            }
            Node::Scalar(_) => {}
        }
    }
    let mut candidates = Vec::new();
    lists(node, &mut candidates);
    if !candidates.is_empty() {
        let i = draws.below(candidates.len() as u64) as usize;
        let list = &mut candidates[i];
        let j = draws.below(list.len() as u64 - 1) as usize;
        list.swap(j, j + 1);
    } else if let Node::Object(fields) = node {
        for i in (1..fields.len()).rev() {
            let j = draws.below(i as u64 + 1) as usize;
            fields.swap(i, j);
        }
    }
}

/// Rewrites each string value with probability `p`: a declared synonym when there is one,
/// otherwise another spelling (upper case, title case, spaces for underscores, a trailing
/// space).
fn paraphrase(
    node: &mut Node,
    synonyms: &BTreeMap<String, Vec<String>>,
    p: f64,
    draws: &mut Stream,
) {
    match node {
        Node::Scalar(Value::String(text)) => {
            if !draws.chance(p) {
                return;
            }
            if let Some(alternatives) = synonyms.get(&text.to_lowercase()) {
                let pick = draws.below(alternatives.len() as u64) as usize;
                *text = alternatives[pick].clone();
                return;
            }
            *text = match draws.below(4) {
                0 => text.to_uppercase(),
                1 => title_case(text),
                2 => text.replace('_', " "),
                _ => format!("{text} "),
            };
        }
        Node::Scalar(_) => {}
        Node::List(items) => {
            for item in items {
                paraphrase(item, synonyms, p, draws);
            }
        }
        Node::Object(fields) => {
            for (_, value) in fields {
                paraphrase(value, synonyms, p, draws);
            }
        }
    }
}

fn title_case(text: &str) -> String {
    text.split('_')
        .map(|word| {
            let mut chars = word.chars();
            match chars.next() {
                Some(first) => first.to_uppercase().chain(chars).collect(),
                None => String::new(),
            }
        })
        .collect::<Vec<String>>()
        .join("_")
}
