//! Properties of `toolschema::adapt` on generated schemas and arguments:
//!
//! - every profile adapts every schema of the family (objects with optional and required
//!   properties, strings with bounds and formats, enums, consts, type lists, disjoint `oneOf`,
//!   `anyOf`, `allOf`, `$ref`s to `$defs`, tuples, root unions), and the result passes the
//!   provider's published rules (the checkers in `provider_rules`);
//! - every keyword the adapted schema uses less than the original is in the loss report;
//! - round trip: arguments valid for the original, shaped for the adapted schema, validate
//!   there, and `restore_arguments` gives back exactly the original arguments, every null the
//!   original takes (`["string", "null"]`, `const: null`, an `enum` or `anyOf` with null, in
//!   nested objects and arrays too) kept; the one reading strict mode cannot tell apart, an
//!   optional argument that takes null left out, comes back as null.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod provider_rules;

use proptest::prelude::*;
use serde_json::{json, Map, Value};
use std::collections::BTreeSet;
use toolschema::adapt::{adapt_tool, PROFILES};
use toolschema::Tool;

/// A schema of the family, from which both the JSON Schema and valid values are made.
#[derive(Debug, Clone)]
enum Gen {
    Str {
        min: u32,
        max: Option<u32>,
        format: Option<&'static str>,
        letters: bool,
    },
    Int {
        min: i64,
        max: i64,
        exclusive: bool,
    },
    Half,
    Bool,
    StrEnum(Vec<String>),
    IntEnum(Vec<i64>),
    ConstStr(String),
    ConstInt(i64),
    /// `["string", "null"]`, where null may mean "clear".
    NullableStr,
    /// `{"const": null}`.
    ConstNull,
    /// A string `enum` with `null` among its values.
    EnumWithNull(Vec<String>),
    /// `anyOf` of an integer and `{"type": "null"}`.
    IntOrNull,
    StrOrInt,
    Array {
        item: Box<Gen>,
        min: u32,
        max: u32,
    },
    Object {
        properties: Vec<(String, Gen, bool)>,
        closed: bool,
    },
    /// `oneOf` of a string and an integer (branches of distinct types).
    OneOf,
    AnyOf(Vec<Gen>),
    /// Two object parts with distinct property names, under `allOf`.
    AllOf(Vec<(String, Gen, bool)>, Vec<(String, Gen, bool)>),
    Ref(Box<Gen>),
    Tuple(Vec<Gen>),
}

const NAMES: &[&str] = &["path", "limit", "my-arg", "2nd", "q", "x.y", "mode", "tags"];

impl Gen {
    fn schema(&self, defs: &mut Map<String, Value>) -> Value {
        match self {
            Gen::Str {
                min,
                max,
                format,
                letters,
            } => {
                let mut s = json!({"type": "string"});
                if *min > 0 {
                    s["minLength"] = json!(min);
                }
                if let Some(max) = max {
                    s["maxLength"] = json!(max);
                }
                if let Some(format) = format {
                    s["format"] = json!(format);
                }
                if *letters {
                    s["pattern"] = json!("^[a-z]*$");
                }
                s
            }
            Gen::Int {
                min,
                max,
                exclusive,
            } => {
                if *exclusive {
                    json!({"type": "integer", "exclusiveMinimum": min - 1, "maximum": max})
                } else {
                    json!({"type": "integer", "minimum": min, "maximum": max})
                }
            }
            Gen::Half => json!({"type": "number", "multipleOf": 0.5, "default": 1.5}),
            Gen::Bool => json!({"type": "boolean", "description": "A flag."}),
            Gen::StrEnum(values) => json!({"type": "string", "enum": values}),
            Gen::IntEnum(values) => json!({"enum": values}),
            Gen::ConstStr(v) => json!({"const": v}),
            Gen::ConstInt(v) => json!({"type": "integer", "const": v}),
            Gen::NullableStr => json!({"type": ["string", "null"], "maxLength": 8}),
            Gen::ConstNull => json!({"const": null}),
            Gen::EnumWithNull(values) => {
                let mut values: Vec<Value> = values.iter().map(|v| json!(v)).collect();
                values.push(Value::Null);
                json!({"enum": values})
            }
            Gen::IntOrNull => json!({"anyOf": [{"type": "integer"}, {"type": "null"}]}),
            Gen::StrOrInt => json!({"type": ["string", "integer"], "maxLength": 5, "minimum": 0}),
            Gen::Array { item, min, max } => {
                json!({"type": "array", "items": item.schema(defs), "minItems": min, "maxItems": max})
            }
            Gen::Object { properties, closed } => {
                let mut s = object(properties, defs);
                if *closed {
                    s["additionalProperties"] = json!(false);
                }
                s
            }
            Gen::OneOf => json!({"oneOf": [{"type": "string"}, {"type": "integer"}]}),
            Gen::AnyOf(branches) => {
                json!({"anyOf": branches.iter().map(|b| b.schema(defs)).collect::<Vec<_>>()})
            }
            Gen::AllOf(a, b) => {
                json!({"type": "object", "allOf": [object(a, defs), object(b, defs)]})
            }
            Gen::Ref(inner) => {
                let name = format!("d{}", defs.len());
                defs.insert(name.clone(), Value::Null);
                let schema = inner.schema(defs);
                defs.insert(name.clone(), schema);
                json!({"$ref": format!("#/$defs/{name}"), "description": "From a definition."})
            }
            Gen::Tuple(items) => json!({
                "type": "array",
                "prefixItems": items.iter().map(|i| i.schema(defs)).collect::<Vec<_>>(),
                "items": false
            }),
        }
    }

    fn value(&self) -> BoxedStrategy<Value> {
        match self {
            Gen::Str {
                min, max, letters, ..
            } => {
                let max = max.unwrap_or(min + 6);
                let chars = if *letters {
                    prop::char::range('a', 'z').boxed()
                } else {
                    prop_oneof![
                        prop::char::range('a', 'z'),
                        Just('É'),
                        Just(' '),
                        Just('\u{1F600}')
                    ]
                    .boxed()
                };
                prop::collection::vec(chars, *min as usize..=max as usize)
                    .prop_map(|c| Value::String(c.into_iter().collect()))
                    .boxed()
            }
            Gen::Int { min, max, .. } => (*min..=*max).prop_map(|n| json!(n)).boxed(),
            Gen::Half => (-20i64..20).prop_map(|n| json!(n as f64 / 2.0)).boxed(),
            Gen::Bool => any::<bool>().prop_map(Value::Bool).boxed(),
            Gen::StrEnum(values) => prop::sample::select(values.clone())
                .prop_map(Value::String)
                .boxed(),
            Gen::IntEnum(values) => prop::sample::select(values.clone())
                .prop_map(|n| json!(n))
                .boxed(),
            Gen::ConstStr(v) => Just(Value::String(v.clone())).boxed(),
            Gen::ConstInt(v) => Just(json!(v)).boxed(),
            Gen::NullableStr => {
                prop_oneof![Just(Value::Null), "[a-z]{0,8}".prop_map(Value::String)].boxed()
            }
            Gen::ConstNull => Just(Value::Null).boxed(),
            Gen::EnumWithNull(values) => prop_oneof![
                Just(Value::Null),
                prop::sample::select(values.clone()).prop_map(Value::String)
            ]
            .boxed(),
            Gen::IntOrNull => {
                prop_oneof![Just(Value::Null), (-9i64..9).prop_map(|n| json!(n))].boxed()
            }
            Gen::StrOrInt => prop_oneof![
                "[a-z]{0,5}".prop_map(Value::String),
                (0i64..1000).prop_map(|n| json!(n))
            ]
            .boxed(),
            Gen::Array { item, min, max } => {
                prop::collection::vec(item.value(), *min as usize..=*max as usize)
                    .prop_map(Value::Array)
                    .boxed()
            }
            Gen::Object { properties, .. } => object_value(properties),
            Gen::OneOf => prop_oneof![
                "[a-z]{0,4}".prop_map(Value::String),
                any::<i32>().prop_map(|n| json!(n))
            ]
            .boxed(),
            Gen::AnyOf(branches) => {
                let strategies: Vec<BoxedStrategy<Value>> =
                    branches.iter().map(Gen::value).collect();
                prop::sample::select((0..strategies.len()).collect::<Vec<_>>())
                    .prop_flat_map(move |i| strategies[i].clone())
                    .boxed()
            }
            Gen::AllOf(a, b) => (object_value(a), object_value(b))
                .prop_map(|(mut x, y)| {
                    if let (Some(x), Value::Object(y)) = (x.as_object_mut(), y) {
                        x.extend(y);
                    }
                    x
                })
                .boxed(),
            Gen::Ref(inner) => inner.value(),
            Gen::Tuple(items) => {
                let strategies: Vec<BoxedStrategy<Value>> = items.iter().map(Gen::value).collect();
                (strategies, 0..=items.len())
                    .prop_map(|(values, n)| Value::Array(values.into_iter().take(n).collect()))
                    .boxed()
            }
        }
    }
}

fn object(properties: &[(String, Gen, bool)], defs: &mut Map<String, Value>) -> Value {
    let mut props = Map::new();
    let mut required = Vec::new();
    for (name, gen, needed) in properties {
        props.insert(name.clone(), gen.schema(defs));
        if *needed {
            required.push(json!(name));
        }
    }
    let mut s = json!({"type": "object", "properties": props});
    if !required.is_empty() {
        s["required"] = Value::Array(required);
    }
    s
}

/// Values for an object: required properties always, optional ones or not.
fn object_value(properties: &[(String, Gen, bool)]) -> BoxedStrategy<Value> {
    let members: Vec<BoxedStrategy<Option<(String, Value)>>> = properties
        .iter()
        .map(|(name, gen, needed)| {
            let name = name.clone();
            let value = gen.value();
            if *needed {
                value.prop_map(move |v| Some((name.clone(), v))).boxed()
            } else {
                prop::option::of(value.prop_map(move |v| (name.clone(), v))).boxed()
            }
        })
        .collect();
    members
        .prop_map(|m| Value::Object(m.into_iter().flatten().collect()))
        .boxed()
}

fn leaf() -> impl Strategy<Value = Gen> {
    prop_oneof![
        (
            0u32..3,
            prop::option::of(3u32..10),
            prop::option::of(prop::sample::select(vec!["uri", "date", "email", "uuid"])),
            any::<bool>()
        )
            .prop_map(|(min, max, format, letters)| Gen::Str {
                min,
                max,
                format,
                letters
            }),
        (-5i64..5, 5i64..50, any::<bool>()).prop_map(|(min, max, exclusive)| Gen::Int {
            min,
            max,
            exclusive
        }),
        Just(Gen::Half),
        Just(Gen::Bool),
        prop::collection::btree_set("[a-z]{1,6}", 1..4)
            .prop_map(|s| Gen::StrEnum(s.into_iter().collect())),
        prop::collection::btree_set(-3i64..9, 1..4)
            .prop_map(|s| Gen::IntEnum(s.into_iter().collect())),
        "[a-z]{1,5}".prop_map(Gen::ConstStr),
        (0i64..9).prop_map(Gen::ConstInt),
        Just(Gen::StrOrInt),
        Just(Gen::OneOf),
        Just(Gen::NullableStr),
        Just(Gen::ConstNull),
        prop::collection::btree_set("[a-z]{1,6}", 1..3)
            .prop_map(|s| Gen::EnumWithNull(s.into_iter().collect())),
        Just(Gen::IntOrNull),
    ]
}

/// Properties with distinct names, required or not; `nullable` adds more `["string", "null"]`.
fn properties(
    inner: BoxedStrategy<Gen>,
    min: usize,
    nullable: bool,
) -> BoxedStrategy<Vec<(String, Gen, bool)>> {
    let member = if nullable {
        prop_oneof![inner, Just(Gen::NullableStr)].boxed()
    } else {
        inner
    };
    (
        prop::sample::subsequence(NAMES.to_vec(), min..=4),
        prop::collection::vec((member, any::<bool>()), 4),
    )
        .prop_map(|(names, gens)| {
            names
                .into_iter()
                .zip(gens)
                .map(|(name, (gen, required))| (name.to_string(), gen, required))
                .collect()
        })
        .boxed()
}

fn gen() -> impl Strategy<Value = Gen> {
    leaf().prop_recursive(3, 24, 4, |inner| {
        let inner = inner.boxed();
        prop_oneof![
            (inner.clone(), 0u32..2, 2u32..4).prop_map(|(item, min, max)| Gen::Array {
                item: Box::new(item),
                min,
                max
            }),
            (properties(inner.clone(), 1, true), any::<bool>())
                .prop_map(|(properties, closed)| Gen::Object { properties, closed }),
            prop::collection::vec(inner.clone(), 1..3).prop_map(Gen::AnyOf),
            inner.clone().prop_map(|g| Gen::Ref(Box::new(g))),
            prop::collection::vec(inner.clone(), 1..3).prop_map(Gen::Tuple),
            (
                properties(inner.clone(), 1, true),
                properties(inner, 1, true)
            )
                .prop_map(|(a, b)| {
                    let taken: BTreeSet<String> = a.iter().map(|(n, _, _)| n.clone()).collect();
                    let b = b
                        .into_iter()
                        .filter(|(n, _, _)| !taken.contains(n))
                        .collect();
                    Gen::AllOf(a, b)
                }),
        ]
    })
}

/// A root: an object, or a union of two object forms (merged, a property one form requires may
/// be optional, and a null sent for it is kept only where the original takes it).
fn root() -> impl Strategy<Value = (Value, BoxedStrategy<Value>)> {
    let object = (properties(gen().boxed(), 0, true), any::<bool>())
        .prop_map(|(properties, closed)| Gen::Object { properties, closed });
    let form = (properties(gen().boxed(), 0, false), any::<bool>())
        .prop_map(|(properties, closed)| Gen::Object { properties, closed });
    prop_oneof![
        3 => object.clone().prop_map(|g| {
            let mut defs = Map::new();
            let mut schema = g.schema(&mut defs);
            if !defs.is_empty() {
                schema["$defs"] = Value::Object(defs);
            }
            (schema, g.value())
        }),
        1 => (form.clone(), form).prop_map(|(a, b)| {
            let mut defs = Map::new();
            let mut schema = json!({"anyOf": [a.schema(&mut defs), b.schema(&mut defs)]});
            if !defs.is_empty() {
                schema["$defs"] = Value::Object(defs);
            }
            let values = prop_oneof![a.value(), b.value()].boxed();
            (schema, values)
        }),
    ]
}

/// Whether `restored` is `sent` with, at most, a `null` for some members `sent` leaves out.
fn same_but_nulls_for_absent(restored: &Value, sent: &Value) -> bool {
    match (restored, sent) {
        (Value::Object(r), Value::Object(s)) => {
            s.keys().all(|k| r.contains_key(k))
                && r.iter().all(|(k, v)| match s.get(k) {
                    Some(sv) => same_but_nulls_for_absent(v, sv),
                    None => v.is_null(),
                })
        }
        (Value::Array(r), Value::Array(s)) => {
            r.len() == s.len()
                && r.iter()
                    .zip(s)
                    .all(|(a, b)| same_but_nulls_for_absent(a, b))
        }
        (r, s) => r == s,
    }
}

fn validator(schema: &Value) -> jsonschema::Validator {
    jsonschema::validator_for(schema).unwrap_or_else(|e| panic!("{e}: {schema}"))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 128, ..ProptestConfig::default() })]

    #[test]
    fn adapted_schemas_keep_the_rules_and_arguments_come_back(
        (schema, values) in root(),
        seed in any::<u64>(),
    ) {
        let original = validator(&schema);
        let tool = Tool::from_value(json!({"name": "t.tool", "inputSchema": schema.clone()})).unwrap();
        // Several argument values per schema, drawn with the seed.
        let mut runner = proptest::test_runner::TestRunner::new_with_rng(
            ProptestConfig::default(),
            proptest::test_runner::TestRng::from_seed(
                proptest::test_runner::RngAlgorithm::ChaCha,
                &{
                    let mut bytes = [0u8; 32];
                    bytes[..8].copy_from_slice(&seed.to_le_bytes());
                    bytes
                },
            ),
        );
        let instances: Vec<Value> = (0..4)
            .map(|_| values.new_tree(&mut runner).unwrap().current())
            .collect();
        for instance in &instances {
            prop_assert!(original.is_valid(instance), "generated {instance} breaks {schema}");
        }
        for profile in PROFILES {
            let adapted = adapt_tool(profile, &tool)
                .unwrap_or_else(|e| panic!("{e}\n{schema}"));
            let request = adapted.to_request();
            let problems = provider_rules::checker(profile.name)(&request);
            prop_assert!(problems.is_empty(), "{profile}: {problems:?}\n{request}");
            let adapted_schema = provider_rules::schema_of(&request).clone();
            let reported: BTreeSet<&str> =
                adapted.losses().iter().map(|l| l.keyword.as_str()).collect();
            // A tuple's equal positions become one item schema: their keywords are merged, not
            // lost, so there only a keyword gone altogether counts.
            let tuples_merged = adapted.losses().iter().any(|l| l.keyword == "prefixItems");
            let lost = if tuples_merged {
                let after = provider_rules::keyword_counts(&adapted_schema);
                provider_rules::keyword_counts(&schema)
                    .into_keys()
                    .filter(|k| !after.contains_key(k))
                    .collect()
            } else if adapted
                .losses()
                .iter()
                .any(|l| l.keyword == "anyOf" || l.keyword == "oneOf")
            {
                // A union's forms merged into one object: a property they declare alike is
                // one schema now.
                provider_rules::keywords_lost_merging(&schema, &adapted_schema)
            } else {
                provider_rules::keywords_lost(&schema, &adapted_schema)
            };
            for keyword in lost {
                prop_assert!(
                    reported.contains(keyword.as_str()),
                    "{profile}: {keyword} left without a loss line\n{schema}\n{adapted_schema}"
                );
            }
            let as_json_schema = if profile.is_openapi() {
                provider_rules::openapi_as_json_schema(&adapted_schema)
            } else {
                adapted_schema.clone()
            };
            let there = validator(&as_json_schema);
            for instance in &instances {
                let shaped = adapted.shape_arguments(instance);
                prop_assert!(
                    there.is_valid(&shaped),
                    "{profile}: {shaped} (from {instance}) breaks the adapted {as_json_schema}"
                );
                let restored = adapted.restore_arguments(&shaped);
                prop_assert!(restored.is_ok(), "{profile}: {restored:?}\nfrom {instance} shaped as {shaped}");
                let restored = restored.unwrap();
                if profile.strict.is_none() {
                    prop_assert_eq!(&restored, instance, "{}", profile);
                } else {
                    // Every value of the call is back, nulls the original takes included; an
                    // argument left out may come back as null only where the original takes
                    // one (strict mode sends null for both).
                    prop_assert!(
                        same_but_nulls_for_absent(&restored, instance),
                        "{profile}: {restored} restored from {shaped}, sent as {instance}"
                    );
                    prop_assert!(original.is_valid(&restored), "{profile}: {restored} breaks {schema}");
                }
            }
        }
    }
}
