//! Declared reply shapes, lenient JSON extraction, and validation into typed reply values.

use std::fmt;

use serde::Serialize;
use serde_json::{Value, json};

use super::failure::LlmFailure;

/// The name used for the reply as a whole in failure messages.
pub const WHOLE_REPLY: &str = "(reply)";

/// The object key under which an enum-shaped reply may carry its tag: `{"choice": "tag"}`.
pub const CHOICE_KEY: &str = "choice";

/// The longest excerpt of model output quoted in a failure message, in characters.
const EXCERPT_CHARS: usize = 120;

/// A data description of the type a harness declared for an LLM reply.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "shape", rename_all = "snake_case")]
pub enum ReplyShape {
    /// A JSON object with named fields, validated in declaration order. Extra keys are ignored,
    /// because models often add commentary fields that the harness has no use for.
    Record {
        /// The declared fields.
        fields: Vec<FieldSpec>,
    },
    /// One of a fixed set of string tags, given either as a bare JSON string or as
    /// `{"choice": "tag"}` (JSON mode on hosted providers only produces objects).
    Enum {
        /// The allowed tags.
        variants: Vec<String>,
    },
}

/// One declared field of a record reply.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FieldSpec {
    /// The JSON key.
    pub name: String,
    /// The field's type and range.
    pub ty: FieldType,
    /// The value used when the key is missing or `null`; `None` makes the field required.
    pub default: Option<FieldValue>,
}

/// The type of a record field.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum FieldType {
    /// A whole number, with an optional inclusive range. `3.0` counts as 3; `2.5` does not.
    Int {
        /// Inclusive lower bound.
        min: Option<i64>,
        /// Inclusive upper bound.
        max: Option<i64>,
    },
    /// A finite number, with an optional inclusive range.
    Float {
        /// Inclusive lower bound.
        min: Option<f64>,
        /// Inclusive upper bound.
        max: Option<f64>,
    },
    /// `true` or `false`.
    Bool,
    /// Any string.
    String,
    /// One of a fixed set of strings.
    Choice {
        /// The allowed values.
        allowed: Vec<String>,
    },
    /// The inner type, or nothing: a missing key or `null` is [`FieldValue::Null`].
    Optional {
        /// The type of a present value.
        inner: Box<FieldType>,
    },
    /// A JSON array of between `min_len` and `max_len` items of one type.
    List {
        /// The type of every item.
        item: Box<FieldType>,
        /// The fewest items.
        min_len: u32,
        /// The most items.
        max_len: u32,
    },
    /// A JSON object with named fields (the items of a list of records).
    Record {
        /// The declared fields.
        fields: Vec<FieldSpec>,
    },
}

/// A typed field value.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum FieldValue {
    /// A whole number.
    Int(i64),
    /// A finite number.
    Float(f64),
    /// A truth value.
    Bool(bool),
    /// A string, either free text or one of a choice's allowed values.
    Str(String),
    /// The items of a list, in order.
    List(Vec<FieldValue>),
    /// The fields of a nested record, in declaration order.
    Record(Vec<ReplyField>),
    /// An optional field the reply left out or gave as `null`.
    Null,
}

/// One validated field, in declaration order.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ReplyField {
    /// The declared name.
    pub name: String,
    /// The validated value, or the declared default when the reply left it out.
    pub value: FieldValue,
    /// Whether the value is the declared default rather than something the model said.
    pub defaulted: bool,
}

/// A reply that passed validation against its [`ReplyShape`].
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "shape", rename_all = "snake_case")]
pub enum ReplyValue {
    /// Every declared field, in declaration order.
    Record {
        /// The fields.
        fields: Vec<ReplyField>,
    },
    /// The chosen tag of an enum reply.
    Enum {
        /// The tag.
        variant: String,
    },
}

impl ReplyValue {
    /// The value of a record field by name; `None` for enum replies and unknown names.
    pub fn field(&self, name: &str) -> Option<&FieldValue> {
        match self {
            ReplyValue::Record { fields } => fields
                .iter()
                .find(|field| field.name == name)
                .map(|field| &field.value),
            ReplyValue::Enum { .. } => None,
        }
    }
}

impl FieldValue {
    /// The value as the JSON a reply would carry.
    pub fn to_json(&self) -> Value {
        match self {
            FieldValue::Int(v) => Value::from(*v),
            FieldValue::Float(v) => Value::from(*v),
            FieldValue::Bool(v) => Value::from(*v),
            FieldValue::Str(v) => Value::from(v.clone()),
            FieldValue::List(items) => {
                Value::Array(items.iter().map(FieldValue::to_json).collect())
            }
            FieldValue::Record(fields) => Value::Object(
                fields
                    .iter()
                    .map(|field| (field.name.clone(), field.value.to_json()))
                    .collect(),
            ),
            FieldValue::Null => Value::Null,
        }
    }
}

impl fmt::Display for FieldValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FieldValue::Int(v) => write!(f, "{v}"),
            FieldValue::Float(v) => write!(f, "{v}"),
            FieldValue::Bool(v) => write!(f, "{v}"),
            FieldValue::Str(v) => write!(f, "{v:?}"),
            FieldValue::List(_) | FieldValue::Record(_) | FieldValue::Null => {
                write!(f, "{}", self.to_json())
            }
        }
    }
}

impl FieldSpec {
    /// A required field.
    pub fn required(name: impl Into<String>, ty: FieldType) -> Self {
        FieldSpec {
            name: name.into(),
            ty,
            default: None,
        }
    }

    /// An optional field that takes `default` when the reply leaves it out.
    pub fn with_default(name: impl Into<String>, ty: FieldType, default: FieldValue) -> Self {
        FieldSpec {
            name: name.into(),
            ty,
            default: Some(default),
        }
    }
}

impl ReplyShape {
    /// Validates a parsed reply against this shape.
    ///
    /// Failures name the field, what was expected and what came. The first failing field in
    /// declaration order is reported, so the message is stable for a given reply.
    pub fn validate(&self, reply: &Value) -> Result<ReplyValue, LlmFailure> {
        match self {
            ReplyShape::Record { fields } => {
                let Value::Object(object) = reply else {
                    return Err(violation(WHOLE_REPLY, "a JSON object", reply));
                };
                Ok(ReplyValue::Record {
                    fields: validate_record("", fields, object)?,
                })
            }
            ReplyShape::Enum { variants } => {
                let tag = match reply {
                    Value::String(tag) => Some(tag),
                    Value::Object(object) => match object.get(CHOICE_KEY) {
                        Some(Value::String(tag)) => Some(tag),
                        _ => None,
                    },
                    _ => None,
                };
                let expected = format!("one of {}", list(variants));
                match tag.map(|tag| (tag, find_tag(variants, tag))) {
                    Some((_, Some(variant))) => Ok(ReplyValue::Enum {
                        variant: variant.to_owned(),
                    }),
                    Some((tag, None)) => Err(LlmFailure::SchemaViolation {
                        field: WHOLE_REPLY.to_owned(),
                        expected,
                        found: excerpt(&format!("{tag:?}")),
                    }),
                    None => Err(violation(
                        WHOLE_REPLY,
                        &format!("{expected}, as a string or as {{\"{CHOICE_KEY}\": tag}}"),
                        reply,
                    )),
                }
            }
        }
    }

    /// A compact description of the expected JSON, for prompt templates to quote.
    pub fn schema_hint(&self) -> String {
        match self {
            ReplyShape::Record { fields } => record_hint(fields),
            ReplyShape::Enum { variants } => {
                format!("{{\"{CHOICE_KEY}\": one of {}}}", list(variants))
            }
        }
    }

    /// The reply's JSON Schema, for providers that constrain decoding to it.
    ///
    /// Every property is listed as required and no others are allowed, which is what OpenAI's
    /// strict mode demands; a field that may be left out is instead allowed to be `null`. An
    /// enum reply is the object `{"choice": tag}` that JSON mode produces.
    pub fn json_schema(&self) -> Value {
        match self {
            ReplyShape::Record { fields } => record_schema(fields),
            ReplyShape::Enum { variants } => json!({
                "type": "object",
                "properties": { CHOICE_KEY: { "type": "string", "enum": variants } },
                "required": [CHOICE_KEY],
                "additionalProperties": false,
            }),
        }
    }

    /// True when the shape uses only what the first store format could describe: a record of
    /// scalars and choices, or an enum. Recordings of such shapes made in that format replay.
    pub fn is_first_format(&self) -> bool {
        match self {
            ReplyShape::Enum { .. } => true,
            ReplyShape::Record { fields } => fields.iter().all(|spec| {
                matches!(
                    spec.ty,
                    FieldType::Int { .. }
                        | FieldType::Float { .. }
                        | FieldType::Bool
                        | FieldType::String
                        | FieldType::Choice { .. }
                )
            }),
        }
    }
}

impl FieldType {
    /// What a value of this type looks like, in words, including its range.
    pub fn describe(&self) -> String {
        match self {
            FieldType::Int { min, max } => match range_text(min, max) {
                Some(range) => format!("an integer in {range}"),
                None => "an integer".to_owned(),
            },
            FieldType::Float { min, max } => match range_text(min, max) {
                Some(range) => format!("a number in {range}"),
                None => "a number".to_owned(),
            },
            FieldType::Bool => "true or false".to_owned(),
            FieldType::String => "a string".to_owned(),
            FieldType::Choice { allowed } => format!("one of {}", list(allowed)),
            FieldType::Optional { inner } => format!("{} or null", inner.describe()),
            FieldType::List {
                item,
                min_len,
                max_len,
            } => {
                let count = if min_len == max_len {
                    format!("{min_len}")
                } else {
                    format!("{min_len} to {max_len}")
                };
                format!("a list of {count} items, each {}", item.describe())
            }
            FieldType::Record { fields } => format!("an object {}", record_hint(fields)),
        }
    }

    /// This type's JSON Schema.
    fn json_schema(&self) -> Value {
        match self {
            FieldType::Int { min, max } => number_schema("integer", min, max),
            FieldType::Float { min, max } => number_schema("number", min, max),
            FieldType::Bool => json!({ "type": "boolean" }),
            FieldType::String => json!({ "type": "string" }),
            FieldType::Choice { allowed } => json!({ "type": "string", "enum": allowed }),
            FieldType::Optional { inner } => {
                json!({ "anyOf": [inner.json_schema(), { "type": "null" }] })
            }
            FieldType::List {
                item,
                min_len,
                max_len,
            } => json!({
                "type": "array",
                "items": item.json_schema(),
                "minItems": min_len,
                "maxItems": max_len,
            }),
            FieldType::Record { fields } => record_schema(fields),
        }
    }
}

fn record_hint(fields: &[FieldSpec]) -> String {
    let parts: Vec<String> = fields
        .iter()
        .map(|spec| {
            let optional = if spec.default.is_some() {
                " (optional)"
            } else {
                ""
            };
            format!("\"{}\": {}{optional}", spec.name, spec.ty.describe())
        })
        .collect();
    format!("{{{}}}", parts.join(", "))
}

fn record_schema(fields: &[FieldSpec]) -> Value {
    let properties: serde_json::Map<String, Value> = fields
        .iter()
        .map(|spec| {
            let schema = match (&spec.ty, &spec.default) {
                (FieldType::Optional { .. }, _) | (_, None) => spec.ty.json_schema(),
                (ty, Some(_)) => json!({ "anyOf": [ty.json_schema(), { "type": "null" }] }),
            };
            (spec.name.clone(), schema)
        })
        .collect();
    let required: Vec<&str> = fields.iter().map(|spec| spec.name.as_str()).collect();
    json!({
        "type": "object",
        "properties": properties,
        "required": required,
        "additionalProperties": false,
    })
}

fn number_schema<T: Serialize>(kind: &str, min: &Option<T>, max: &Option<T>) -> Value {
    let mut schema = json!({ "type": kind });
    if let Some(min) = min {
        schema["minimum"] = json!(min);
    }
    if let Some(max) = max {
        schema["maximum"] = json!(max);
    }
    schema
}

/// Validates the fields of an object in declaration order; `prefix` names the enclosing field
/// (`steps[2].`) in failures.
fn validate_record(
    prefix: &str,
    fields: &[FieldSpec],
    object: &serde_json::Map<String, Value>,
) -> Result<Vec<ReplyField>, LlmFailure> {
    let mut values = Vec::with_capacity(fields.len());
    for spec in fields {
        let path = format!("{prefix}{}", spec.name);
        // A `null` counts as missing: models write `null` for "no opinion", which is what a
        // default and an optional field are for.
        let given = object.get(&spec.name).filter(|value| !value.is_null());
        let field = match (given, &spec.default, &spec.ty) {
            (Some(value), _, _) => ReplyField {
                name: spec.name.clone(),
                value: validate_field(&path, &spec.ty, value)?,
                defaulted: false,
            },
            (None, Some(default), _) => ReplyField {
                name: spec.name.clone(),
                value: default.clone(),
                defaulted: true,
            },
            (None, None, FieldType::Optional { .. }) => ReplyField {
                name: spec.name.clone(),
                value: FieldValue::Null,
                defaulted: false,
            },
            (None, None, _) => {
                return Err(LlmFailure::SchemaViolation {
                    field: path,
                    expected: spec.ty.describe(),
                    found: "nothing (the field is missing)".to_owned(),
                });
            }
        };
        values.push(field);
    }
    Ok(values)
}

/// Parses model output as JSON, leniently, as the reference does.
///
/// The whole text is tried first; if it is not JSON, the greedy substring from the first `{`
/// to the last `}` is tried, which recovers replies wrapped in prose or code fences.
pub fn extract_json(text: &str) -> Result<Value, LlmFailure> {
    let whole_error = match serde_json::from_str::<Value>(text.trim()) {
        Ok(value) => return Ok(value),
        Err(error) => error,
    };
    if let (Some(start), Some(end)) = (text.find('{'), text.rfind('}'))
        && start < end
        && let Ok(value) = serde_json::from_str::<Value>(&text[start..=end])
    {
        return Ok(value);
    }
    Err(LlmFailure::MalformedJson {
        detail: whole_error.to_string(),
        excerpt: excerpt(text),
    })
}

/// Validates one present, non-null field value.
fn validate_field(name: &str, ty: &FieldType, value: &Value) -> Result<FieldValue, LlmFailure> {
    match ty {
        FieldType::Int { min, max } => {
            let Some(number) = as_integer(value) else {
                return Err(violation(name, &ty.describe(), value));
            };
            if min.is_some_and(|min| number < min) || max.is_some_and(|max| number > max) {
                return Err(out_of_range(name, number.to_string(), min, max));
            }
            Ok(FieldValue::Int(number))
        }
        FieldType::Float { min, max } => {
            let Some(number) = value.as_f64().filter(|n| n.is_finite()) else {
                return Err(violation(name, &ty.describe(), value));
            };
            if min.is_some_and(|min| number < min) || max.is_some_and(|max| number > max) {
                return Err(out_of_range(name, number.to_string(), min, max));
            }
            Ok(FieldValue::Float(number))
        }
        FieldType::Bool => value
            .as_bool()
            .map(FieldValue::Bool)
            .ok_or_else(|| violation(name, &ty.describe(), value)),
        FieldType::String => value
            .as_str()
            .map(|text| FieldValue::Str(text.to_owned()))
            .ok_or_else(|| violation(name, &ty.describe(), value)),
        FieldType::Choice { allowed } => match value.as_str().and_then(|t| find_tag(allowed, t)) {
            Some(tag) => Ok(FieldValue::Str(tag.to_owned())),
            None => Err(violation(name, &ty.describe(), value)),
        },
        FieldType::Optional { .. } if value.is_null() => Ok(FieldValue::Null),
        FieldType::Optional { inner } => validate_field(name, inner, value),
        FieldType::List {
            item,
            min_len,
            max_len,
        } => {
            let Value::Array(items) = value else {
                return Err(violation(name, &ty.describe(), value));
            };
            let len = items.len();
            if len < *min_len as usize || len > *max_len as usize {
                return Err(LlmFailure::OutOfRange {
                    field: name.to_owned(),
                    value: format!("{len} items"),
                    range: format!("[{min_len}, {max_len}] items"),
                });
            }
            items
                .iter()
                .enumerate()
                .map(|(i, v)| validate_field(&format!("{name}[{i}]"), item, v))
                .collect::<Result<Vec<_>, _>>()
                .map(FieldValue::List)
        }
        FieldType::Record { fields } => {
            let Value::Object(object) = value else {
                return Err(violation(name, &ty.describe(), value));
            };
            validate_record(&format!("{name}."), fields, object).map(FieldValue::Record)
        }
    }
}

/// The allowed tag that `text` names, ignoring letter case, `_`, `-` and spaces: models write
/// `"Late"`, `"LATE"` or `"late "` for `late`, and all of them mean it. The runtime matches
/// variant names by the same rule.
fn find_tag<'a>(allowed: &'a [String], text: &str) -> Option<&'a str> {
    harness_runtime::llm::match_variant(allowed, text).map(|i| allowed[i].as_str())
}

/// A JSON number with no fractional part that fits an `i64`.
fn as_integer(value: &Value) -> Option<i64> {
    if let Some(n) = value.as_i64() {
        return Some(n);
    }
    let n = value.as_f64()?;
    // The bounds are powers of two, so the comparison is exact in f64 and the cast cannot
    // saturate silently.
    let fits = n.fract() == 0.0 && n >= -(2f64.powi(63)) && n < 2f64.powi(63);
    fits.then_some(n as i64)
}

fn violation(field: &str, expected: &str, found: &Value) -> LlmFailure {
    LlmFailure::SchemaViolation {
        field: field.to_owned(),
        expected: expected.to_owned(),
        found: describe_value(found),
    }
}

fn out_of_range<T: fmt::Display>(
    field: &str,
    value: String,
    min: &Option<T>,
    max: &Option<T>,
) -> LlmFailure {
    LlmFailure::OutOfRange {
        field: field.to_owned(),
        value,
        range: range_text(min, max).unwrap_or_default(),
    }
}

/// `[min, max]`, with `-inf` or `inf` for a missing side; `None` when both are missing.
fn range_text<T: fmt::Display>(min: &Option<T>, max: &Option<T>) -> Option<String> {
    if min.is_none() && max.is_none() {
        return None;
    }
    let low = min.as_ref().map_or("-inf".to_owned(), ToString::to_string);
    let high = max.as_ref().map_or("inf".to_owned(), ToString::to_string);
    Some(format!("[{low}, {high}]"))
}

/// A JSON value as it appeared, prefixed with its kind, and shortened.
fn describe_value(value: &Value) -> String {
    let kind = match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    };
    format!("{kind} {}", excerpt(&value.to_string()))
}

fn list(items: &[String]) -> String {
    let quoted: Vec<String> = items.iter().map(|item| format!("{item:?}")).collect();
    quoted.join(" | ")
}

/// At most [`EXCERPT_CHARS`] characters of `text`, cut on a character boundary.
pub(crate) fn excerpt(text: &str) -> String {
    let mut chars = text.chars();
    let head: String = chars.by_ref().take(EXCERPT_CHARS).collect();
    if chars.next().is_some() {
        format!("{head}…")
    } else {
        head
    }
}
