//! `toolschema::adapt` on hostile schemas: any JSON as an input schema, very deep schemas,
//! `$ref` fan-outs that would blow up when written out, odd numbers. Nothing panics; a schema
//! is adapted (and then passes the provider's rules) or refused with a reason.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod provider_rules;

use proptest::prelude::*;
use serde_json::{json, Map, Value};
use toolschema::adapt::{adapt, adapt_tool, profile, PROFILES};
use toolschema::Tool;

const KEYWORDS: &[&str] = &[
    "type",
    "properties",
    "required",
    "additionalProperties",
    "items",
    "prefixItems",
    "enum",
    "const",
    "anyOf",
    "oneOf",
    "allOf",
    "not",
    "$ref",
    "$defs",
    "definitions",
    "minLength",
    "maxLength",
    "pattern",
    "format",
    "minimum",
    "maximum",
    "multipleOf",
    "default",
    "title",
    "description",
    "nullable",
    "x-vendor",
    "minItems",
    "uniqueItems",
    "patternProperties",
    "dependentRequired",
    "if",
    "then",
];

fn any_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(|n| json!(n)),
        any::<u64>().prop_map(|n| json!(n)),
        (-1e300f64..1e300).prop_map(|f| json!(f)),
        prop::sample::select(vec![
            "object",
            "string",
            "integer",
            "number",
            "array",
            "null",
            "boolean",
            "#",
            "#/$defs/a",
            "#/properties/x",
            "#/definitions/a",
            "uri",
            "^[a-z]+$",
            "",
            "\u{1F600}",
            "é",
        ])
        .prop_map(|s| Value::String(s.into())),
    ];
    leaf.prop_recursive(5, 64, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::vec(
                (prop::sample::select(KEYWORDS.to_vec()), inner.clone()),
                0..6
            )
            .prop_map(|members| {
                Value::Object(
                    members
                        .into_iter()
                        .map(|(k, v)| (k.to_string(), v))
                        .collect(),
                )
            }),
            prop::collection::vec(
                (prop::sample::select(vec!["a", "x", "my-arg", "2"]), inner),
                0..3
            )
            .prop_map(|members| {
                Value::Object(
                    members
                        .into_iter()
                        .map(|(k, v)| (k.to_string(), v))
                        .collect(),
                )
            }),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    /// Any object as an input schema: adapted (and then the provider takes it) or refused.
    #[test]
    fn any_schema_is_adapted_or_refused(
        members in prop::collection::vec((prop::sample::select(KEYWORDS.to_vec()), any_json()), 0..6)
    ) {
        let schema: Value = Value::Object(members.into_iter().map(|(k, v)| (k.to_string(), v)).collect());
        let tool = Tool::from_value(json!({"name": "t", "inputSchema": schema.clone()})).unwrap();
        for profile in PROFILES {
            match adapt_tool(profile, &tool) {
                Ok(adapted) => {
                    let problems = provider_rules::checker(profile.name)(&adapted.to_request());
                    prop_assert!(problems.is_empty(), "{profile}: {problems:?}\n{schema}");
                }
                Err(e) => prop_assert!(!e.message.is_empty()),
            }
        }
    }
}

fn tool(schema: Value) -> Tool {
    Tool::from_value(json!({"name": "t", "inputSchema": schema})).unwrap()
}

#[test]
fn very_deep_schemas_are_refused_not_overflowed() {
    let mut schema = json!({"type": "string"});
    for _ in 0..62 {
        schema = json!({"type": "object", "properties": {"a": schema}});
    }
    let tool = tool(schema);
    for profile in PROFILES {
        match adapt_tool(profile, &tool) {
            Ok(_) => panic!("{profile} adapted a schema 62 objects deep"),
            Err(e) => assert!(
                e.message.contains("nest") || e.message.contains("levels"),
                "{profile}: {e}"
            ),
        }
    }
}

#[test]
fn a_ref_fan_out_is_refused_when_written_out() {
    // Each definition refers twice to the next: written out, 2^24 copies.
    let mut defs = Map::new();
    for i in 0..24 {
        let next = format!("#/$defs/d{}", i + 1);
        defs.insert(
            format!("d{i}"),
            json!({"type": "object", "properties": {"l": {"$ref": next}, "r": {"$ref": next}}}),
        );
    }
    defs.insert("d24".into(), json!({"type": "string"}));
    let schema =
        json!({"type": "object", "properties": {"root": {"$ref": "#/$defs/d0"}}, "$defs": defs});
    let tool = tool(schema);
    let openapi = profile("gemini-openapi").unwrap();
    let error = adapt_tool(openapi, &tool).unwrap_err();
    assert!(
        error.message.contains("more than 100000 subschemas"),
        "{error}"
    );
    // Profiles that keep references take it as it is.
    let anthropic = profile("anthropic").unwrap();
    assert!(adapt_tool(anthropic, &tool).is_ok());
}

#[test]
fn odd_numbers_and_strings_pass_through() {
    let tool = tool(json!({"type": "object", "properties": {
        "big": {"type": "integer", "maximum": 18446744073709551615u64, "minimum": -9223372036854775808i64},
        "tiny": {"type": "number", "multipleOf": 1e-300},
        "text": {"type": "string", "description": "é \u{1F600} \u{0}", "enum": ["\u{1F600}", "a\u{0}b"]}
    }, "required": ["big", "tiny", "text"]}));
    for profile in PROFILES {
        let adapted = adapt_tool(profile, &tool).unwrap();
        let request = adapted.to_request();
        let props = &provider_rules::schema_of(&request)["properties"];
        assert_eq!(
            props["text"]["enum"],
            json!(["\u{1F600}", "a\u{0}b"]),
            "{profile}"
        );
        let args = json!({"big": 18446744073709551615u64, "tiny": 0.0, "text": "a\u{0}b"});
        let shaped = adapted.shape_arguments(&args);
        assert_eq!(
            adapted.restore_arguments(&shaped).unwrap(),
            args,
            "{profile}"
        );
    }
}

#[test]
fn a_key_holding_the_internal_mark_is_refused() {
    let tool = tool(
        json!({"type": "object", "properties": {"\u{0}toolschema-optional": {"type": "string"}}}),
    );
    let strict = profile("openai-strict").unwrap();
    let error = adapt_tool(strict, &tool).unwrap_err();
    assert_eq!(
        error.to_string(),
        "tool 't' cannot be adapted to openai-strict at /inputSchema: the schema holds a key that starts with a NUL character"
    );
}

#[test]
fn duplicate_tool_names_are_refused_by_name() {
    let a = tool(json!({"type": "object"}));
    let b = tool(json!({"type": "object", "properties": {"x": {"type": "string"}}}));
    let adaptation = adapt(profile("openai").unwrap(), [&a, &b]);
    assert_eq!(adaptation.tools().len(), 1);
    assert_eq!(
        adaptation.failures()[0].to_string(),
        "tool 't' cannot be adapted to openai at /name: another tool of the catalog has this \
         name, so a call by name could not be mapped back"
    );
}

/// Two forms whose `p` objects merge into one `anyOf`: `{"a": null}` fits both branches of
/// the adapted `p`, and only the second reading (a left out) is valid for the original.
#[test]
fn a_call_several_forms_fit_is_read_the_way_the_original_accepts() {
    let tool = tool(json!({"anyOf": [
        {"type": "object", "properties": {
            "p": {"type": "object", "properties": {"a": {"type": ["string", "null"]}},
                  "required": ["a"]},
            "t": {"type": "string"}
        }, "required": ["p", "t"]},
        {"type": "object", "properties": {
            "p": {"type": "object", "properties": {"a": {"type": "string"}}}
        }}
    ]}));
    let strict = profile("openai-strict").unwrap();
    let adapted = adapt_tool(strict, &tool).unwrap();
    let sent = json!({"p": {"a": null}, "t": null});
    assert_eq!(adapted.restore_arguments(&sent).unwrap(), json!({"p": {}}));
    // The first form, all given, reads as itself.
    let sent = json!({"p": {"a": null}, "t": "x"});
    assert_eq!(
        adapted.restore_arguments(&sent).unwrap(),
        json!({"p": {"a": null}, "t": "x"})
    );
    // No reading is valid: the first reading's errors are reported.
    let sent = json!({"p": {"a": 3}, "t": null});
    let error = adapted.restore_arguments(&sent).unwrap_err().to_string();
    assert!(error.contains("argument 'p.a'"), "{error}");
}

/// The parent's `additionalProperties: false` sees only the parent's own `properties`: a
/// property only an `allOf` branch declares is refused by the original, so the merged schema
/// must not offer it.
#[test]
fn a_closed_parent_keeps_refusing_what_only_an_allof_branch_declares() {
    let tool = tool(json!({
        "type": "object",
        "properties": {"a": {"type": "string"}},
        "additionalProperties": false,
        "allOf": [{"properties": {"b": {"type": "string"}}}]
    }));
    for profile in PROFILES {
        let adapted = adapt_tool(profile, &tool).unwrap();
        let schema = provider_rules::schema_of(&adapted.to_request()).clone();
        assert!(
            schema["properties"].get("b").is_none(),
            "{profile} offers 'b': {schema} {:?}",
            adapted.losses()
        );
        let left_out = adapted
            .losses()
            .iter()
            .find(|l| l.pointer == "/inputSchema/allOf/0/properties/b")
            .unwrap_or_else(|| panic!("{profile}: {:?}", adapted.losses()));
        assert!(
            left_out
                .message
                .contains("left out, as the original never accepts it"),
            "{left_out:?}"
        );
        // What the model may send comes back valid.
        let shaped = adapted.shape_arguments(&json!({"a": "x"}));
        assert_eq!(
            adapted.restore_arguments(&shaped).unwrap(),
            json!({"a": "x"})
        );
    }
    // An `additionalProperties` schema applies to the branch's property as well.
    let tool = self::tool(json!({
        "type": "object",
        "properties": {"a": {"type": "string"}},
        "additionalProperties": {"maxLength": 3},
        "allOf": [{"properties": {"b": {"type": "string"}}}]
    }));
    let anthropic = profile("anthropic").unwrap();
    let adapted = adapt_tool(anthropic, &tool).unwrap();
    let schema = provider_rules::schema_of(&adapted.to_request()).clone();
    let there = jsonschema::validator_for(&schema).unwrap();
    assert!(!there.is_valid(&json!({"b": "long"})), "{schema}");
    assert!(there.is_valid(&json!({"b": "abc"})), "{schema}");
}

/// Two descriptions merged from `allOf` branches are both kept; another annotation given
/// twice keeps its first value and the other is reported.
#[test]
fn merged_annotations_are_joined_or_reported() {
    let tool = tool(json!({
        "type": "object",
        "properties": {"a": {"type": "string"}},
        "allOf": [
            {"description": "first", "title": "One"},
            {"description": "second", "title": "Two"}
        ]
    }));
    for profile in PROFILES {
        let adapted = adapt_tool(profile, &tool).unwrap();
        let schema = provider_rules::schema_of(&adapted.to_request()).clone();
        let description = schema["description"].as_str().unwrap_or_default();
        assert!(
            description.starts_with("first. second"),
            "{profile}: {schema}"
        );
        assert!(
            adapted.losses().iter().any(|l| l.keyword == "title"
                && l.pointer == "/inputSchema/allOf/1"
                && l.message.contains("\"Two\" is left out")),
            "{profile}: {:?}",
            adapted.losses()
        );
    }
}

/// An object with some properties, maybe closed (by `false` or a schema, or to what nothing
/// evaluates), maybe with a pattern, and an `allOf` of one or two object branches.
fn closed_allof_schema() -> impl Strategy<Value = Value> {
    let property = prop::sample::select(vec![
        json!({"type": "string"}),
        json!({"type": "integer"}),
        json!({}),
        json!({"type": "string", "maxLength": 1}),
    ]);
    let properties = prop::collection::btree_map(
        prop::sample::select(vec!["a", "b", "x1", "c"]),
        property,
        0..3,
    )
    .prop_map(|m| {
        Value::Object(
            m.into_iter()
                .map(|(k, v)| (k.to_string(), v))
                .collect::<Map<String, Value>>(),
        )
    });
    let branch = (
        properties.clone(),
        prop::option::of(prop::sample::select(vec![
            json!(false),
            json!(true),
            json!({"type": "integer"}),
        ])),
        any::<bool>(),
    )
        .prop_map(|(properties, additional, pattern)| {
            let mut b = json!({"properties": properties});
            if let Some(a) = additional {
                b["additionalProperties"] = a;
            }
            if pattern {
                b["patternProperties"] = json!({"^c": {"type": "string"}});
            }
            b
        });
    (
        properties,
        prop::option::of(prop::sample::select(vec![
            json!(false),
            json!(true),
            json!({"type": "integer"}),
            json!({"type": "string"}),
        ])),
        any::<bool>(),
        prop::collection::vec(branch, 1..3),
        any::<bool>(),
    )
        .prop_map(|(properties, additional, pattern, branches, unevaluated)| {
            let mut s = json!({"type": "object", "properties": properties, "allOf": branches});
            if let Some(a) = additional {
                s["additionalProperties"] = a;
            }
            if unevaluated {
                // Sees what the branches evaluate, unlike additionalProperties.
                s["unevaluatedProperties"] = json!(false);
            }
            if pattern {
                s["patternProperties"] = json!({"^x": {"type": "integer"}});
            }
            s
        })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    /// Where every loss says the adapted schema accepts the same values, it does: an `allOf`
    /// merged under a closed parent gives the same verdicts as the original.
    #[test]
    fn a_merge_said_to_keep_the_meaning_keeps_it(
        schema in closed_allof_schema(),
        instances in prop::collection::vec(
            prop::collection::btree_map(
                prop::sample::select(vec!["a", "b", "c", "x1", "z"]),
                prop::sample::select(vec![json!(1), json!("s"), json!("long"), json!(null)]),
                0..4,
            ),
            8,
        ),
    ) {
        let original = jsonschema::validator_for(&schema).unwrap();
        let tool = tool(schema.clone());
        for name in ["anthropic", "openai"] {
            let Ok(adapted) = adapt_tool(profile(name).unwrap(), &tool) else { continue };
            if adapted.losses().iter().any(|l| l.accepts != toolschema::adapt::Accepts::Same) {
                continue;
            }
            let adapted_schema = provider_rules::schema_of(&adapted.to_request()).clone();
            let there = jsonschema::validator_for(&adapted_schema).unwrap();
            for instance in &instances {
                let instance = json!(instance);
                prop_assert_eq!(
                    original.is_valid(&instance),
                    there.is_valid(&instance),
                    "{}: {} on {} vs {}", name, instance, schema, adapted_schema
                );
            }
        }
    }
}

/// A `$ref` no provider can follow (to another document, to nothing, or around a cycle that
/// never reaches a value) is refused by every profile alike, with the reason; none is fetched.
#[test]
fn unusable_refs_are_refused_by_every_profile() {
    let cases = [
        (
            json!({"type": "object", "properties": {"p": {"$ref": "https://example.com/s.json"}}}),
            "/inputSchema/properties/p",
            "$ref https://example.com/s.json points outside the schema; adapt follows only \
             references inside it",
        ),
        (
            json!({"type": "object", "properties": {"p": {"$ref": "#/$defs/missing"}}}),
            "/inputSchema/properties/p",
            "$ref #/$defs/missing points at no schema",
        ),
        (
            json!({"type": "object", "properties": {"p": {"$ref": "#/$defs/a"}},
                   "$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"$ref": "#/$defs/a"}}}),
            "/inputSchema",
            "cyclic $ref never reaches a value to check: #/$defs/a -> #/$defs/b -> #/$defs/a; \
             no provider can follow it (toolschema lint reports it as SCH-008)",
        ),
    ];
    for (schema, pointer, message) in cases {
        let tool = tool(schema);
        for profile in PROFILES {
            let error = adapt_tool(profile, &tool).unwrap_err();
            assert_eq!(
                (error.pointer.as_str(), error.message.as_str()),
                (pointer, message),
                "{profile}"
            );
        }
    }
    // A reference through the root's own `$id` stays inside the schema.
    let tool = tool(json!({
        "$id": "https://example.com/tool.json",
        "type": "object",
        "properties": {"p": {"$ref": "https://example.com/tool.json#/$defs/a"}},
        "required": ["p"],
        "$defs": {"a": {"type": "string"}}
    }));
    for profile in PROFILES {
        let adapted = adapt_tool(profile, &tool).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            adapted.restore_arguments(&json!({"p": "x"})).unwrap(),
            json!({"p": "x"})
        );
    }
}

/// draft-07 ignores the keywords beside a `$ref`; 2020-12 applies them. Wherever adapt writes
/// the reference out or keeps it in a schema read as 2020-12, a draft-07 sibling is left out
/// (and reported), so the adapted schema accepts what the original accepts.
#[test]
fn draft_07_keywords_beside_a_ref_are_not_applied() {
    let schema = |dialect: Option<&str>| {
        let mut s = json!({
            "type": "object",
            "properties": {"p": {"$ref": "#/definitions/A", "type": "string", "description": "The p."}},
            "required": ["p"],
            "definitions": {"A": {"type": ["string", "integer"]}}
        });
        if let Some(uri) = dialect {
            s["$schema"] = json!(uri);
        }
        s
    };
    let draft7 = tool(schema(Some("http://json-schema.org/draft-07/schema#")));
    for profile in PROFILES {
        let adapted = adapt_tool(profile, &draft7).unwrap_or_else(|e| panic!("{e}"));
        let request = adapted.to_request();
        let mut there = provider_rules::schema_of(&request).clone();
        if profile.is_openapi() {
            there = provider_rules::openapi_as_json_schema(&there);
        }
        // What the adapted schema is read as: 2020-12 unless it says otherwise.
        let there_validator = jsonschema::validator_for(&there).unwrap();
        let call = json!({"p": 5});
        let shaped = adapted.shape_arguments(&call);
        assert!(there_validator.is_valid(&shaped), "{profile}: {there}");
        assert_eq!(
            adapted.restore_arguments(&shaped).unwrap(),
            call,
            "{profile}"
        );
        let dropped = adapted
            .losses()
            .iter()
            .find(|l| l.keyword == "$ref" && l.pointer == "/inputSchema/properties/p")
            .unwrap_or_else(|| panic!("{profile}: {:?}", adapted.losses()));
        assert!(
            dropped.message.starts_with(
                "draft-07 ignores the keywords beside a $ref: 'type' constrained nothing"
            ),
            "{dropped:?}"
        );
        // The description, which a model reads, stays.
        assert!(there.to_string().contains("The p."), "{profile}: {there}");
    }
    // In 2020-12 the sibling applies, and keeps applying (or the tool is refused: a type list
    // and a type cannot be merged into one OpenAPI type).
    let current = tool(schema(None));
    for profile in PROFILES {
        let adapted = match adapt_tool(profile, &current) {
            Ok(adapted) => adapted,
            Err(e) if profile.is_openapi() => {
                assert!(e.message.contains("type is given both here"), "{e}");
                continue;
            }
            Err(e) => panic!("{e}"),
        };
        let error = adapted.restore_arguments(&json!({"p": 5})).unwrap_err();
        assert!(
            error.to_string().contains("argument 'p'"),
            "{profile}: {error}"
        );
    }
}

/// Strict mode makes optional arguments required and nullable, and a null then stands for "not
/// given"; but where the original takes `null` itself (`["string", "null"]` where null means
/// "clear", `const: null`, an `enum` or `anyOf` with null), a null may be meant: restore keeps
/// it there, and drops only the nulls strict mode introduced.
#[test]
fn restore_keeps_a_null_the_original_takes() {
    let tool = tool(json!({"type": "object", "properties": {
        "q": {"type": "string"},
        "note": {"type": ["string", "null"], "description": "null clears the note"},
        "reset": {"const": null},
        "mode": {"enum": ["a", null]},
        "either": {"anyOf": [{"type": "integer"}, {"type": "null"}]},
        "limit": {"type": "integer"},
        "page": {"$ref": "#/$defs/Page"},
        "items": {"type": "array", "items": {"type": "object", "properties": {
            "tag": {"type": ["string", "null"]}, "n": {"type": "integer"}}}}
    }, "required": ["q"], "$defs": {"Page": {"type": ["object", "null"],
        "properties": {"cursor": {"type": ["string", "null"]}, "size": {"type": "integer"}}}}}));
    let strict = profile("openai-strict").unwrap();
    let adapted = adapt_tool(strict, &tool).unwrap();
    let sent = json!({"q": "x", "note": null, "reset": null, "mode": null, "either": null,
        "limit": null, "page": {"cursor": null, "size": null},
        "items": [{"tag": null, "n": null}, {"tag": "t", "n": 2}]});
    assert_eq!(
        adapted.restore_arguments(&sent).unwrap(),
        json!({"q": "x", "note": null, "reset": null, "mode": null, "either": null,
            "page": {"cursor": null}, "items": [{"tag": null}, {"tag": "t", "n": 2}]})
    );
    let sent = json!({"q": "x", "note": "n", "reset": null, "mode": "a", "either": 3,
        "limit": 5, "page": null, "items": null});
    assert_eq!(
        adapted.restore_arguments(&sent).unwrap(),
        json!({"q": "x", "note": "n", "reset": null, "mode": "a", "either": 3, "limit": 5,
            "page": null})
    );
}

/// A union whose forms merge into one strict object: a null one form requires (`q`, which
/// takes null) comes back, while a null another form's property refuses (`x.y` of the first
/// form is a string) stands for "not given". The forms' errors under `anyOf` name both places,
/// so each null is tried alone. (Found by `adapt_properties`.)
#[test]
fn restore_keeps_a_null_one_union_form_requires() {
    let tool = tool(json!({"anyOf": [
        {"type": "object", "properties": {"q": {"type": ["string", "null"]},
            "x.y": {"type": "string"}, "tags": {"type": "string"}}, "required": ["q"]},
        {"type": "object", "properties": {"x.y": {"type": ["string", "null"]}},
            "additionalProperties": false}
    ]}));
    let strict = profile("openai-strict").unwrap();
    let adapted = adapt_tool(strict, &tool).unwrap();
    let sent = json!({"q": null, "tags": " "});
    let shaped = adapted.shape_arguments(&sent);
    assert_eq!(
        adapted.restore_arguments(&shaped).unwrap(),
        sent,
        "shaped as {shaped}"
    );
}

/// Draft-07 ignores the keywords beside a `$ref`: the target alone says whether an optional
/// argument takes null, and a null sent for it is kept when it does.
#[test]
fn restore_keeps_a_null_a_draft_07_ref_takes() {
    let draft7 = "http://json-schema.org/draft-07/schema#";
    let tool = tool(json!({"$schema": draft7, "type": "object", "properties": {
        "q": {"type": "string"},
        "x": {"$ref": "#/definitions/N", "type": "string"},
        "y": {"$ref": "#/definitions/S", "type": ["string", "null"]}
    }, "required": ["q"], "definitions": {"N": {"type": ["integer", "null"]},
        "S": {"type": "string"}}}));
    let strict = profile("openai-strict").unwrap();
    let adapted = adapt_tool(strict, &tool).unwrap();
    let sent = json!({"q": "a", "x": null, "y": null});
    assert_eq!(
        adapted.restore_arguments(&sent).unwrap(),
        json!({"q": "a", "x": null})
    );
}

/// A `const` a profile cannot write keeps the type the validator gives its value: `2.0` and
/// `1e300` are integers, `2.5` a number; the adapted schema still accepts the value.
#[test]
fn a_const_written_as_a_type_keeps_the_validators_type_of_its_value() {
    let openapi = profile("gemini-openapi").unwrap();
    for (constant, expected) in [("2.0", "integer"), ("1e300", "integer"), ("2.5", "number")] {
        let value: Value = serde_json::from_str(constant).unwrap();
        let tool = tool(json!({"type": "object", "properties": {"c": {"const": value}}}));
        let adapted = adapt_tool(openapi, &tool).unwrap();
        let written = &adapted.schema()["properties"]["c"];
        assert_eq!(written["type"], json!(expected), "{constant}: {written}");
        let validator = jsonschema::validator_for(written).unwrap();
        assert!(validator.is_valid(&value), "{constant}: {written}");
    }
}
