//! Property tests for the lightweight shapes: any direct map normalizes to a standard schema the
//! engine accepts, normalizing is idempotent, `required` is kept, and enums compare by string form.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use proptest::prelude::*;
use serde_json::{json, Map, Value};
use toolschema::schema::{detect_shape, normalize, string_form, SchemaShape};
use toolschema::{SchemaValidator, Subject};

fn scalar_type() -> impl Strategy<Value = &'static str> {
    prop_oneof![
        Just("string"),
        Just("integer"),
        Just("float"),
        Just("number"),
        Just("boolean")
    ]
}

fn enum_value() -> impl Strategy<Value = Value> {
    prop_oneof![
        (-5i64..5).prop_map(Value::from),
        (-5i64..5).prop_map(|n| Value::from(n as f64)),
        (-5i64..5).prop_map(|n| Value::from(n.to_string())),
        "[a-c]{1,2}".prop_map(Value::from),
        any::<bool>().prop_map(Value::from),
    ]
}

/// One lightweight property definition.
fn property() -> impl Strategy<Value = Value> {
    (
        prop_oneof![scalar_type().prop_map(Some), Just(None)],
        any::<bool>(),
        any::<bool>(),
        proptest::option::of(0u64..4),
        proptest::option::of(-10i64..10),
        proptest::collection::vec(enum_value(), 1..4),
    )
        .prop_map(|(ty, required, is_array, min_length, maximum, values)| {
            let mut p = Map::new();
            match ty {
                Some(t) => {
                    p.insert("type".into(), json!(t));
                    if t == "string" {
                        if let Some(n) = min_length {
                            p.insert("minLength".into(), json!(n));
                        }
                    } else if matches!(t, "integer" | "float" | "number") {
                        if let Some(m) = maximum {
                            p.insert("maximum".into(), json!(m));
                        }
                    }
                }
                None => {
                    p.insert("type".into(), json!("enum"));
                    p.insert("enum".into(), Value::Array(values));
                }
            }
            if required {
                p.insert("required".into(), json!(true));
            }
            if is_array {
                p.insert("isArray".into(), json!(true));
            }
            p.insert("description".into(), json!("an argument"));
            Value::Object(p)
        })
}

fn direct_map() -> impl Strategy<Value = Value> {
    proptest::collection::btree_map("[a-z][a-z_]{0,7}", property(), 1..6)
        .prop_map(|props| Value::Object(props.into_iter().collect()))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn direct_maps_normalize_to_standard_schemas(map in direct_map()) {
        prop_assert_eq!(detect_shape(&map), SchemaShape::DirectMap);
        let normalized = normalize(&map).unwrap();
        let schema = normalized.schema.into_owned();
        // Standard now: detected as such, and normalizing again changes nothing.
        prop_assert_eq!(detect_shape(&schema), SchemaShape::Standard);
        let again = normalize(&schema).unwrap();
        prop_assert_eq!(&*again.schema, &schema);
        // The engine accepts it (it checks the 2020-12 meta-schema while compiling).
        prop_assert!(jsonschema::options().build(&schema).is_ok(), "{}", schema);
        // `required: true` became the required list, in declaration order.
        let expected: Vec<&str> = map.as_object().unwrap().iter()
            .filter(|(_, p)| p["required"] == json!(true))
            .map(|(k, _)| k.as_str())
            .collect();
        let required: Vec<&str> = schema.get("required").and_then(Value::as_array)
            .map(|r| r.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        prop_assert_eq!(required, expected);
        // No lightweight-only field is left anywhere.
        let text = schema.to_string();
        prop_assert!(!text.contains("isArray") && !text.contains("\"float\"") && !text.contains("\"enum\":\"enum\""));
    }

    #[test]
    fn enum_values_match_by_string_form(values in proptest::collection::vec(enum_value(), 1..5), probe in enum_value()) {
        let schema = json!({"v": {"type": "enum", "enum": values.clone(), "required": true}});
        let validator = SchemaValidator::new(&schema).unwrap();
        let form = string_form(&probe).unwrap();
        let expected = values.iter().any(|v| string_form(v).as_deref() == Some(form.as_str()));
        let verdict = validator.validate_as(&json!({"v": probe}), Subject::Arguments);
        prop_assert_eq!(verdict.is_ok(), expected, "{} against {:?}", form, values);
    }

    #[test]
    fn standard_schemas_pass_through_unchanged(props in proptest::collection::btree_map("[a-z]{1,6}", scalar_type(), 0..5)) {
        let properties: Map<String, Value> = props.into_iter()
            .map(|(k, t)| (k, json!({"type": if t == "float" { "number" } else { t }})))
            .collect();
        let schema = json!({"type": "object", "properties": properties, "$schema": "http://json-schema.org/draft-07/schema#"});
        let normalized = normalize(&schema).unwrap();
        prop_assert_eq!(normalized.shape, SchemaShape::Standard);
        prop_assert_eq!(serde_json::to_string(&*normalized.schema).unwrap(), schema.to_string());
    }
}
