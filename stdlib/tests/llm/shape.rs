//! Reply validation and lenient JSON extraction, without a server.

use harness_stdlib::llm::{
    FieldSpec, FieldType, FieldValue, LlmFailure, ReplyShape, ReplyValue, WHOLE_REPLY, extract_json,
};
use serde_json::json;

use crate::{GOOD_REPLY, revision_shape};

fn violation_field(failure: LlmFailure) -> (String, String, String) {
    match failure {
        LlmFailure::SchemaViolation {
            field,
            expected,
            found,
        } => (field, expected, found),
        other => panic!("expected a schema violation, got {other:?}"),
    }
}

#[test]
fn a_good_reply_becomes_ordered_typed_fields() {
    let value = revision_shape()
        .validate(&extract_json(GOOD_REPLY).unwrap())
        .unwrap();
    let ReplyValue::Record { fields } = &value else {
        panic!("{value:?}");
    };
    let names: Vec<&str> = fields.iter().map(|f| f.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "revisionKind",
            "coarseBudget",
            "exploitThreshold",
            "policyMode",
            "aggressive"
        ]
    );
    assert!(fields.iter().all(|f| !f.defaulted));
    assert_eq!(
        value.field("revisionKind"),
        Some(&FieldValue::Str("narrow".into()))
    );
    assert_eq!(value.field("coarseBudget"), Some(&FieldValue::Int(4)));
    assert_eq!(
        value.field("exploitThreshold"),
        Some(&FieldValue::Float(0.75))
    );
    assert_eq!(value.field("aggressive"), Some(&FieldValue::Bool(true)));
    assert_eq!(value.field("nope"), None);
}

#[test]
fn missing_or_null_optional_fields_take_their_defaults_and_extras_are_ignored() {
    let reply = json!({"revisionKind": "widen", "coarseBudget": 3.0, "policyMode": null,
                       "reasoning": "the model likes to explain"});
    let value = revision_shape().validate(&reply).unwrap();
    let ReplyValue::Record { fields } = &value else {
        panic!("{value:?}");
    };
    assert_eq!(
        value.field("coarseBudget"),
        Some(&FieldValue::Int(3)),
        "3.0 is whole"
    );
    assert_eq!(
        value.field("exploitThreshold"),
        Some(&FieldValue::Float(0.5))
    );
    assert_eq!(
        value.field("policyMode"),
        Some(&FieldValue::Str("hunt".into()))
    );
    let defaulted: Vec<bool> = fields.iter().map(|f| f.defaulted).collect();
    assert_eq!(defaulted, [false, false, true, true, true]);
}

#[test]
fn schema_violations_name_the_field_the_expectation_and_what_came() {
    let shape = revision_shape();
    let (field, expected, found) =
        violation_field(shape.validate(&json!({"coarseBudget": 1})).unwrap_err());
    assert_eq!(field, "revisionKind");
    assert_eq!(expected, r#"one of "widen" | "narrow" | "salvage""#);
    assert!(found.contains("missing"), "{found}");

    let cases = [
        (
            json!({"revisionKind": "explode", "coarseBudget": 1}),
            "revisionKind",
            "a string \"explode\"",
        ),
        (
            json!({"revisionKind": "widen", "coarseBudget": "4"}),
            "coarseBudget",
            "a string \"4\"",
        ),
        (
            json!({"revisionKind": "widen", "coarseBudget": 2.5}),
            "coarseBudget",
            "a number 2.5",
        ),
        (
            json!({"revisionKind": "widen", "coarseBudget": 1, "aggressive": "yes"}),
            "aggressive",
            "a string \"yes\"",
        ),
        (
            json!({"revisionKind": "widen", "coarseBudget": 1, "policyMode": 7}),
            "policyMode",
            "a number 7",
        ),
        (
            json!({"revisionKind": "widen", "coarseBudget": 1, "exploitThreshold": [1]}),
            "exploitThreshold",
            "an array [1]",
        ),
    ];
    for (reply, want_field, want_found) in cases {
        let failure = shape.validate(&reply).unwrap_err();
        let message = failure.to_string();
        let (field, _, found) = violation_field(failure);
        assert_eq!(
            (field.as_str(), found.as_str()),
            (want_field, want_found),
            "{reply}"
        );
        assert!(message.contains(want_field), "{message}");
    }

    let (field, expected, found) = violation_field(shape.validate(&json!([1, 2])).unwrap_err());
    assert_eq!(
        (field.as_str(), expected.as_str()),
        (WHOLE_REPLY, "a JSON object")
    );
    assert_eq!(found, "an array [1,2]");
}

#[test]
fn out_of_range_values_report_value_and_inclusive_range() {
    let shape = revision_shape();
    assert!(
        shape
            .validate(&json!({"revisionKind": "widen", "coarseBudget": 15}))
            .is_ok()
    );
    assert!(
        shape
            .validate(&json!({"revisionKind": "widen", "coarseBudget": 0, "exploitThreshold": 1.0}))
            .is_ok()
    );
    let cases = [
        (
            json!({"revisionKind": "widen", "coarseBudget": 16}),
            "coarseBudget",
            "16",
            "[0, 15]",
        ),
        (
            json!({"revisionKind": "widen", "coarseBudget": -1}),
            "coarseBudget",
            "-1",
            "[0, 15]",
        ),
        (
            json!({"revisionKind": "widen", "coarseBudget": 1, "exploitThreshold": 1.5}),
            "exploitThreshold",
            "1.5",
            "[0, 1]",
        ),
    ];
    for (reply, want_field, want_value, want_range) in cases {
        match shape.validate(&reply).unwrap_err() {
            LlmFailure::OutOfRange {
                field,
                value,
                range,
            } => assert_eq!(
                (field.as_str(), value.as_str(), range.as_str()),
                (want_field, want_value, want_range)
            ),
            other => panic!("{reply}: {other:?}"),
        }
    }
    let half_open = ReplyShape::Record {
        fields: vec![FieldSpec::required(
            "n",
            FieldType::Int {
                min: Some(1),
                max: None,
            },
        )],
    };
    let failure = half_open.validate(&json!({"n": 0})).unwrap_err();
    assert_eq!(
        failure.to_string(),
        "LLM reply field `n`: value 0 is outside [1, inf]"
    );
    assert!(
        half_open.validate(&json!({"n": 1e300})).is_err(),
        "too big for i64"
    );
}

#[test]
fn enum_replies_accept_a_bare_tag_or_a_choice_object() {
    let shape = ReplyShape::Enum {
        variants: vec!["ask".into(), "shoot".into()],
    };
    let shoot = ReplyValue::Enum {
        variant: "shoot".into(),
    };
    assert_eq!(shape.validate(&json!("shoot")), Ok(shoot.clone()));
    assert_eq!(shape.validate(&json!({"choice": "shoot"})), Ok(shoot));
    let (field, expected, found) = violation_field(shape.validate(&json!("pass")).unwrap_err());
    assert_eq!(
        (field.as_str(), expected.as_str(), found.as_str()),
        (WHOLE_REPLY, r#"one of "ask" | "shoot""#, "\"pass\"")
    );
    assert!(shape.validate(&json!({"action": "ask"})).is_err());
    assert!(shape.validate(&json!(3)).is_err());
    assert_eq!(shape.schema_hint(), r#"{"choice": one of "ask" | "shoot"}"#);
}

#[test]
fn schema_hint_describes_types_ranges_and_optional_fields() {
    assert_eq!(
        revision_shape().schema_hint(),
        r#"{"revisionKind": one of "widen" | "narrow" | "salvage", "coarseBudget": an integer in [0, 15], "exploitThreshold": a number in [0, 1] (optional), "policyMode": a string (optional), "aggressive": true or false (optional)}"#
    );
}

#[test]
fn extraction_is_lenient_like_the_reference() {
    assert_eq!(extract_json(" {\"a\": 1} \n").unwrap(), json!({"a": 1}));
    assert_eq!(extract_json("\"tag\"").unwrap(), json!("tag"));
    let prose = "Sure! Here is the revision:\n```json\n{\"a\": {\"b\": 2}}\n```\nGood luck.";
    assert_eq!(extract_json(prose).unwrap(), json!({"a": {"b": 2}}));
    for bad in [
        "",
        "no json here",
        "} backwards {",
        "{ \"a\": ",
        "{\"a\":1} and {\"b\":2}",
    ] {
        match extract_json(bad) {
            Err(LlmFailure::MalformedJson { excerpt, .. }) => {
                assert!(bad.starts_with(excerpt.trim_end_matches('…')), "{excerpt}");
            }
            other => panic!("{bad:?}: {other:?}"),
        }
    }
    let long = "é".repeat(500);
    let LlmFailure::MalformedJson { excerpt, .. } = extract_json(&long).unwrap_err() else {
        panic!("expected malformed JSON");
    };
    assert_eq!(
        excerpt.chars().count(),
        121,
        "120 characters and an ellipsis"
    );
}
