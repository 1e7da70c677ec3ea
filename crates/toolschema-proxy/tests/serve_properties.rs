//! Properties of `toolschema serve`'s decisions ([`Decider`]), over generated arguments:
//! - a call is admitted exactly when the core finds nothing wrong with its arguments (its schema
//!   errors and its case-variant argument names), and a refusal says what the core says;
//! - a call of a tool the catalog does not list is never admitted, unless the service fails
//!   open (`--unlisted forward`), and then the decision says so.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use proptest::prelude::*;
use serde_json::{json, Map, Value};
use toolschema::json::number::StatedNumbers;
use toolschema::tool::Tool;
use toolschema_proxy::serve::Decider;
use toolschema_proxy::{GateConfig, Unlisted};

fn catalog() -> Vec<Value> {
    vec![json!({
        "name": "echo",
        "inputSchema": {
            "type": "object",
            "properties": {
                "note": {"type": "string", "minLength": 1, "pattern": "^[^a-z]*$"},
                "count": {"type": "integer", "minimum": 0, "maximum": 100},
                "tags": {"type": "array", "items": {"type": "string"}, "maxItems": 3},
                "mode": {"enum": ["a", "b", null]}
            },
            "required": ["note"],
            "additionalProperties": false
        }
    })]
}

/// JSON values of every kind, keys from a small set (so that they hit the schema's names and
/// their case variants).
fn value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(|n| json!(n)),
        (-1000i32..1000).prop_map(|n| json!(n)),
        (-1.0e6f64..1.0e6).prop_map(|f| json!(f)),
        "[A-Za-z ]{0,6}".prop_map(Value::String),
        Just(json!("HI")),
    ];
    leaf.prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::vec((key(), inner), 0..4)
                .prop_map(|members| Value::Object(members.into_iter().collect::<Map<_, _>>())),
        ]
    })
}

fn key() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("note".to_string()),
        Just("Note".to_string()),
        Just("count".to_string()),
        Just("tags".to_string()),
        Just("mode".to_string()),
        "[a-z]{1,5}",
    ]
}

/// Arguments: mostly objects with the schema's names, sometimes anything.
fn arguments() -> impl Strategy<Value = Value> {
    prop_oneof![
        4 => prop::collection::vec((key(), value()), 0..5)
            .prop_map(|members| Value::Object(members.into_iter().collect::<Map<_, _>>())),
        1 => value(),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn a_call_is_admitted_exactly_when_the_core_finds_nothing_wrong(arguments in arguments()) {
        let decider = Decider::new(&catalog(), &StatedNumbers::default(), &GateConfig::default());
        let compiled = Tool::from_value(catalog()[0].clone()).unwrap().compile().unwrap();
        let mut expected: Vec<String> = match compiled.validate_input(&arguments) {
            Ok(()) => Vec::new(),
            Err(errors) => errors.messages().into_iter().map(String::from).collect(),
        };
        expected.extend(compiled.case_variant_arguments(&arguments));
        let decision = decider.check_call("echo", &arguments, None).unwrap();
        prop_assert_eq!(decision.allowed, expected.is_empty(), "{} -> {:?}", arguments, decision.messages);
        // The messages are the core's. Arguments that are no object are refused by the gate
        // before the schema, in the protocol's words.
        if !decision.allowed && arguments.is_object() {
            prop_assert_eq!(&decision.messages, &expected);
        }
        prop_assert!(decision.unchecked.is_none());
    }

    #[test]
    fn an_unlisted_tool_is_admitted_only_failing_open_and_then_says_so(
        name in "[a-z_]{1,12}".prop_filter("not the listed tool", |n| n != "echo"),
        arguments in arguments(),
    ) {
        let closed = Decider::new(&catalog(), &StatedNumbers::default(), &GateConfig::default());
        let refused = closed.check_call(&name, &arguments, None).unwrap();
        prop_assert!(!refused.allowed);
        prop_assert!(!refused.listed);
        if !arguments.is_object() && !arguments.is_null() {
            // Refused before the tool is looked up, and so when failing open too (`null` is
            // read as no arguments).
            let not_object = format!("arguments of tool '{name}' must be a JSON object");
            prop_assert!(refused.messages[0].starts_with(&not_object), "{:?}", refused.messages);
            return Ok(());
        }
        let unknown = format!("unknown tool '{name}'");
        prop_assert!(refused.messages[0].starts_with(&unknown), "{:?}", refused.messages);

        let config = GateConfig { unlisted: Unlisted::Forward, ..GateConfig::default() };
        let open = Decider::new(&catalog(), &StatedNumbers::default(), &config);
        let passed = open.check_call(&name, &arguments, None).unwrap();
        prop_assert!(passed.allowed);
        let why = passed.unchecked.expect("a fail-open decision says so");
        prop_assert!(why.contains(&format!("tool '{name}' was let through unchecked")), "{}", why);
    }
}
