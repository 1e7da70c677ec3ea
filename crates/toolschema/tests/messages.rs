//! The validation messages a model reads, exactly, for every keyword; the lightweight shape rules
//! as a caller sees them; schema errors (dialects, `$ref`s, depth).

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use serde_json::{json, Value};
use toolschema::{
    CompileOptions, Dialect, SchemaError, SchemaValidator, Subject, Tool, ValidationErrors,
};

/// Validate `arguments` against `schema` as tool-call arguments; the (path, message) pairs.
fn check(schema: Value, arguments: Value) -> Vec<(String, String)> {
    let tool = Tool::from_value(json!({"name": "t", "inputSchema": schema})).unwrap();
    match tool.compile().unwrap().validate_input(&arguments) {
        Ok(()) => Vec::new(),
        Err(errors) => errors
            .into_vec()
            .into_iter()
            .map(|e| (e.path, e.message))
            .collect(),
    }
}

fn messages(schema: Value, arguments: Value) -> Vec<String> {
    check(schema, arguments)
        .into_iter()
        .map(|(_, m)| m)
        .collect()
}

fn object(properties: Value) -> Value {
    json!({"type": "object", "properties": properties})
}

#[test]
fn missing_required_argument() {
    let schema =
        json!({"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]});
    assert_eq!(
        check(schema, json!({})),
        [(
            "/q".to_string(),
            "missing required argument 'q'".to_string()
        )]
    );
}

#[test]
fn type_messages_for_every_type() {
    let cases = [
        (
            "array",
            json!("x"),
            "argument 'v' must be an array (got a string)",
        ),
        (
            "string",
            json!(1),
            "argument 'v' must be a string (got an integer)",
        ),
        (
            "integer",
            json!(1.5),
            "argument 'v' must be an integer (got a number)",
        ),
        (
            "number",
            json!("1"),
            "argument 'v' must be a number (got a string)",
        ),
        (
            "boolean",
            json!("true"),
            "argument 'v' must be a boolean (got a string)",
        ),
        (
            "object",
            json!([]),
            "argument 'v' must be an object (got an array)",
        ),
        (
            "null",
            json!(0),
            "argument 'v' must be null (got an integer)",
        ),
    ];
    for (ty, value, expected) in cases {
        assert_eq!(
            messages(object(json!({"v": {"type": ty}})), json!({"v": value})),
            [expected],
            "{ty}"
        );
    }
    assert_eq!(
        messages(
            object(json!({"v": {"type": ["string", "null"]}})),
            json!({"v": 3})
        ),
        ["argument 'v' must be a string or null (got an integer)"]
    );
    assert_eq!(
        messages(
            object(json!({"v": {"type": ["string", "integer", "null"]}})),
            json!({"v": true})
        ),
        ["argument 'v' must be a string, an integer or null (got a boolean)"]
    );
}

#[test]
fn string_length_messages() {
    let schema = object(json!({"q": {"type": "string", "minLength": 3, "maxLength": 64}}));
    assert_eq!(
        messages(schema.clone(), json!({"q": "ab"})),
        ["argument 'q' string length must be >= 3 (got 2)"]
    );
    assert_eq!(
        messages(schema, json!({"q": "é".repeat(65)})),
        ["argument 'q' string length must be <= 64 (got 65)"]
    );
}

#[test]
fn number_bound_messages() {
    let schema = object(json!({
        "limit": {"type": "integer", "minimum": 1, "maximum": 100},
        "ratio": {"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 1.5}
    }));
    assert_eq!(
        messages(schema.clone(), json!({"limit": 101})),
        ["argument 'limit' value must be <= 100 (got 101)"]
    );
    assert_eq!(
        messages(schema.clone(), json!({"limit": 0})),
        ["argument 'limit' value must be >= 1 (got 0)"]
    );
    assert_eq!(
        messages(schema.clone(), json!({"ratio": 0})),
        ["argument 'ratio' value must be > 0 (got 0)"]
    );
    assert_eq!(
        messages(schema, json!({"ratio": 1.5})),
        ["argument 'ratio' value must be < 1.5 (got 1.5)"]
    );
}

#[test]
fn enum_message_lists_the_values() {
    let schema = object(json!({"mode": {"type": "string", "enum": ["fast", "accurate"]}}));
    assert_eq!(
        messages(schema, json!({"mode": "slow"})),
        ["argument 'mode' must be one of the enum values: \"fast\", \"accurate\""]
    );
    let many: Vec<Value> = (0..30).map(|i| json!(i)).collect();
    let msg = messages(object(json!({"n": {"enum": many}})), json!({"n": 99}));
    assert!(msg[0].ends_with("19, … (10 more)"), "{}", msg[0]);
}

#[test]
fn nested_paths_read_like_a_caller_writes_them() {
    let schema = object(json!({
        "items": {"type": "array", "items": {"type": "object", "properties": {"id": {"type": "integer"}}, "required": ["id"]}},
        "tags": {"type": "array", "items": {"type": "string"}}
    }));
    assert_eq!(
        check(
            schema,
            json!({"items": [{}, {"id": "x"}], "tags": ["a", 2]})
        ),
        [
            (
                "/items/0/id".to_string(),
                "missing required argument 'items[0].id'".to_string()
            ),
            (
                "/items/1/id".to_string(),
                "argument 'items[1].id' must be an integer (got a string)".to_string()
            ),
            (
                "/tags/1".to_string(),
                "argument 'tags[1]' must be a string (got an integer)".to_string()
            ),
        ]
    );
}

#[test]
fn unexpected_arguments_get_a_suggestion() {
    let schema = json!({"type": "object", "properties": {"query": {"type": "string"}, "limit": {"type": "integer"}},
        "additionalProperties": false});
    assert_eq!(
        check(schema.clone(), json!({"qyery": "x", "zzz": 1})),
        [
            (
                "/qyery".to_string(),
                "unexpected argument 'qyery' (did you mean 'query'?)".to_string()
            ),
            ("/zzz".to_string(), "unexpected argument 'zzz'".to_string()),
        ]
    );
    // Nested objects too, and unevaluatedProperties in 2020-12.
    let nested = object(
        json!({"opts": {"type": "object", "properties": {"depth": {}}, "unevaluatedProperties": false}}),
    );
    assert_eq!(
        messages(nested, json!({"opts": {"dpeth": 1}})),
        ["unexpected argument 'opts.dpeth' (did you mean 'depth'?)"]
    );
}

#[test]
fn arguments_must_be_an_object() {
    for (arguments, got) in [
        (json!([]), "an array"),
        (json!("x"), "a string"),
        (json!(null), "null"),
        (json!(1), "an integer"),
    ] {
        assert_eq!(
            check(json!({"type": "object"}), arguments),
            [(
                String::new(),
                format!("arguments must be an object (got {got})")
            )]
        );
    }
}

#[test]
fn every_other_keyword_says_what_is_accepted() {
    let cases: Vec<(Value, Value, &str)> = vec![
        (json!({"type": "string", "pattern": "^[a-z]+$"}), json!("A1"), "argument 'v' must match the pattern ^[a-z]+$"),
        (json!({"type": "array", "minItems": 2}), json!([1]), "argument 'v' must have at least 2 items (got 1)"),
        (json!({"type": "array", "maxItems": 1}), json!([1, 2]), "argument 'v' must have at most 1 item (got 2)"),
        (json!({"uniqueItems": true}), json!([1, 2, 1]), "argument 'v' must not contain duplicate items (items 0 and 2 are equal)"),
        (json!({"const": "all"}), json!("some"), "argument 'v' must be exactly \"all\""),
        (json!({"multipleOf": 5}), json!(12), "argument 'v' must be a multiple of 5"),
        (json!({"multipleOf": 0.25}), json!(0.3), "argument 'v' must be a multiple of 0.25"),
        (json!({"anyOf": [{"type": "string"}, {"type": "integer"}]}), json!(1.5), "argument 'v' must be a string or an integer"),
        (
            json!({"anyOf": [{"type": "object", "required": ["id"]}, {"const": "all"}]}),
            json!("x"),
            "argument 'v' must match one of: (1) an object with 'id', (2) exactly \"all\"",
        ),
        (
            json!({"oneOf": [{"type": "integer"}, {"type": "number", "minimum": 0}]}),
            json!(3),
            "argument 'v' matches more than one alternative; it must match exactly one of: (1) an integer, (2) a number",
        ),
        (
            json!({"oneOf": [{"type": "string"}, {"type": "boolean"}]}),
            json!(3),
            "argument 'v' must match exactly one of: (1) a string, (2) a boolean",
        ),
        (json!({"not": {"type": "string"}}), json!("x"), "argument 'v' must not be a string"),
        (json!({"allOf": [{"type": "integer"}, {"minimum": 10}]}), json!(3), "argument 'v' value must be >= 10 (got 3)"),
        (json!({"type": "object", "minProperties": 1}), json!({}), "argument 'v' must have at least 1 property (got 0)"),
        (json!({"type": "object", "maxProperties": 1}), json!({"a": 1, "b": 2}), "argument 'v' must have at most 1 property (got 2)"),
        (json!({"contains": {"type": "integer"}}), json!(["a"]), "argument 'v' must contain at least one item that is an integer"),
        (
            json!({"contains": {"type": "integer"}, "minContains": 2}),
            json!([1, "a"]),
            "argument 'v' must contain at least 2 items that are an integer",
        ),
        (
            json!({"contains": {"type": "integer"}, "maxContains": 1}),
            json!([1, 2]),
            "argument 'v' must contain at most 1 item that is an integer",
        ),
        (
            json!({"prefixItems": [{"type": "string"}], "items": false}),
            json!(["a", 1]),
            "argument 'v[1]' is not allowed",
        ),
        (
            json!({"prefixItems": [{"type": "string"}], "unevaluatedItems": false}),
            json!(["a", 1, 2]),
            "argument 'v' has items that are not allowed at indexes 1, 2",
        ),
        (
            json!({"type": "object", "propertyNames": {"pattern": "^[a-z]+$"}}),
            json!({"Bad": 1}),
            "property name 'Bad' in argument 'v' must match the pattern ^[a-z]+$",
        ),
        (
            json!({"type": "object", "dependentRequired": {"start": ["end"]}}),
            json!({"start": 1}),
            "missing required argument 'v.end' (required when 'v.start' is present)",
        ),
        (
            json!({"if": {"minimum": 10}, "then": {"multipleOf": 10}, "else": {"maximum": 0}}),
            json!(15),
            "argument 'v' must be a multiple of 10",
        ),
        // The one alternative of the value's type explains best.
        (
            json!({"anyOf": [{"type": "string", "maxLength": 3}, {"type": "null"}]}),
            json!("long"),
            "argument 'v' string length must be <= 3 (got 4)",
        ),
    ];
    for (property, value, expected) in cases {
        let schema = object(json!({"v": property}));
        assert_eq!(
            messages(schema.clone(), json!({"v": value})),
            [expected],
            "{schema}"
        );
    }
}

#[test]
fn format_is_an_annotation_unless_asserted() {
    let schema = object(json!({"when": {"type": "string", "format": "date"}}));
    let tool = Tool::from_value(json!({"name": "t", "inputSchema": schema})).unwrap();
    let args = json!({"when": "yesterday"});
    assert!(tool.compile().unwrap().validate_input(&args).is_ok());
    let asserted = tool
        .compile_with(&CompileOptions::new().assert_format(true))
        .unwrap();
    assert_eq!(
        asserted.validate_input(&args).unwrap_err().messages(),
        ["argument 'when' must be a date like 2024-01-31 (format 'date')"]
    );
}

#[test]
fn dependencies_in_draft7() {
    let schema = json!({"$schema": "http://json-schema.org/draft-07/schema#", "type": "object",
        "dependencies": {"start": ["end"]}});
    assert_eq!(
        messages(schema, json!({"start": 1})),
        ["missing required argument 'end' (required when 'start' is present)"]
    );
}

#[test]
fn messages_never_repeat_the_value() {
    let secret = "s3cr3t-".repeat(20);
    let schema = object(
        json!({"token": {"type": "integer"}, "name": {"type": "string", "maxLength": 5, "pattern": "^x"}}),
    );
    for message in messages(schema, json!({"token": secret, "name": secret})) {
        assert!(!message.contains("s3cr3t"), "{message}");
    }
}

#[test]
fn errors_display_one_message_per_line() {
    let tool = Tool::from_value(json!({"name": "t", "inputSchema": {
        "q": {"type": "string", "required": true}, "n": {"type": "integer"}}}))
    .unwrap();
    let errors: ValidationErrors = tool
        .compile()
        .unwrap()
        .validate_input(&json!({"n": "x"}))
        .unwrap_err();
    assert_eq!(
        errors.to_string(),
        "missing required argument 'q'\nargument 'n' must be an integer (got a string)"
    );
    assert_eq!(
        serde_json::to_value(&errors).unwrap(),
        json!([{"path": "/q", "message": "missing required argument 'q'"},
               {"path": "/n", "message": "argument 'n' must be an integer (got a string)"}])
    );
}

// ---- lightweight shapes, as a caller sees them ----

#[test]
fn lightweight_direct_map_from_the_issue() {
    let schema = json!({
        "q": {"type": "string", "required": true, "minLength": 3},
        "tags": {"type": "string", "isArray": true, "minLength": 2},
        "mode": {"type": "enum", "enum": ["fast", "accurate"]}
    });
    assert_eq!(
        messages(
            schema.clone(),
            json!({"q": "rust", "tags": ["ab"], "mode": "fast"})
        ),
        Vec::<String>::new()
    );
    assert_eq!(
        messages(schema.clone(), json!({"tags": "ab"})),
        [
            "missing required argument 'q'",
            "argument 'tags' must be an array (got a string)"
        ]
    );
    assert_eq!(
        messages(schema.clone(), json!({"q": "rust", "tags": ["ok", "x"]})),
        ["argument 'tags[1]' string length must be >= 2 (got 1)"]
    );
    assert_eq!(
        messages(schema.clone(), json!({"q": "rust", "mode": "slow"})),
        ["argument 'mode' must be one of the enum values: \"fast\", \"accurate\""]
    );
    // Closed: an unknown argument is refused.
    assert_eq!(
        messages(schema, json!({"q": "rust", "qq": 1})),
        ["unexpected argument 'qq' (did you mean 'q'?)"]
    );
}

#[test]
fn lightweight_json_schema_like_shape() {
    let schema = json!({"properties": {"ratio": {"type": "float", "maximum": 1}, "n": {"type": "integer"}}, "required": ["n"]});
    assert_eq!(
        messages(schema.clone(), json!({"n": 1, "ratio": 0.5})),
        Vec::<String>::new()
    );
    assert_eq!(
        messages(schema, json!({"ratio": 2})),
        [
            "missing required argument 'n'",
            "argument 'ratio' value must be <= 1 (got 2)"
        ]
    );
}

#[test]
fn lightweight_array_type_takes_items_and_applies_limits_per_element() {
    let schema =
        json!({"ids": {"type": "array", "items": {"type": "integer"}, "minimum": 1, "maximum": 9}});
    assert_eq!(
        messages(schema.clone(), json!({"ids": [1, 9]})),
        Vec::<String>::new()
    );
    assert_eq!(
        messages(schema.clone(), json!({"ids": [0, 10, "x"]})),
        [
            "argument 'ids[0]' value must be >= 1 (got 0)",
            "argument 'ids[1]' value must be <= 9 (got 10)",
            "argument 'ids[2]' must be an integer (got a string)",
        ]
    );
    let with_enum = json!({"sizes": {"type": "array", "items": {"type": "string", "enum": ["s", "m"]}, "maxLength": 1}});
    assert_eq!(
        messages(with_enum, json!({"sizes": ["xl"]})),
        [
            "argument 'sizes[0]' must be one of the enum values: \"s\", \"m\"",
            "argument 'sizes[0]' string length must be <= 1 (got 2)",
        ]
    );
}

#[test]
fn lightweight_enums_compare_by_string_form() {
    let schema = json!({"level": {"type": "enum", "enum": [1, "2"]}});
    for ok in [
        json!(1),
        json!(1.0),
        json!("1"),
        json!(2),
        json!("2"),
        json!(2.0),
    ] {
        assert_eq!(
            messages(schema.clone(), json!({"level": ok})),
            Vec::<String>::new(),
            "{ok}"
        );
    }
    assert_eq!(messages(schema, json!({"level": 3})).len(), 1);
    // Standard JSON Schema keeps strict equality: "1" is not 1.
    let standard = object(json!({"level": {"enum": [1]}}));
    assert_eq!(
        messages(standard.clone(), json!({"level": 1.0})),
        Vec::<String>::new()
    );
    assert_eq!(
        messages(standard, json!({"level": "1"})),
        ["argument 'level' must be one of the enum values: 1"]
    );
}

#[test]
fn lightweight_errors_are_named() {
    let err = |schema: Value| {
        Tool::from_value(json!({"name": "t", "inputSchema": schema}))
            .unwrap()
            .compile()
            .unwrap_err()
            .to_string()
    };
    assert_eq!(
        err(json!({"q": {"type": "text"}})),
        "tool 't': inputSchema: /q/type: argument 'q': type must be one of string, integer, float, number, boolean, enum, array (got \"text\")"
    );
    assert_eq!(
        err(json!({"schemaVersion": "2024-01-01", "q": {"type": "string"}})),
        "tool 't': inputSchema: unsupported schemaVersion '2024-01-01': supported versions are 2025-10-09"
    );
}

// ---- schema errors ----

fn compile_error(schema: Value) -> SchemaError {
    compile_error_ref(&schema)
}

fn compile_error_ref(schema: &Value) -> SchemaError {
    SchemaValidator::new(schema).unwrap_err()
}

#[test]
fn dialects() {
    let draft7 = SchemaValidator::new(
        &json!({"$schema": "https://json-schema.org/draft-07/schema", "type": "object"}),
    )
    .unwrap();
    assert_eq!(draft7.dialect(), Dialect::Draft7);
    assert_eq!(
        SchemaValidator::new(&json!({"type": "object"}))
            .unwrap()
            .dialect(),
        Dialect::Draft202012
    );
    // Draft-07 semantics apply: `items` as an array is a tuple there.
    let tuple = SchemaValidator::new(&json!({"$schema": "http://json-schema.org/draft-07/schema#", "items": [{"type": "string"}]})).unwrap();
    assert!(tuple.is_valid(&json!(["a", 1])));
    assert_eq!(
        compile_error(json!({"$schema": "http://json-schema.org/draft-04/schema#"})).to_string(),
        "unsupported $schema 'http://json-schema.org/draft-04/schema#': supported dialects are 2020-12 (https://json-schema.org/draft/2020-12/schema) and draft-07 (http://json-schema.org/draft-07/schema#)"
    );
    // The override wins over `$schema`.
    let forced = SchemaValidator::with_options(
        &json!({"$schema": "http://json-schema.org/draft-04/schema#", "type": "string"}),
        &CompileOptions::new().dialect(Dialect::Draft7),
    )
    .unwrap();
    assert_eq!(forced.dialect(), Dialect::Draft7);
}

#[test]
fn remote_refs_are_refused_and_registered_documents_resolve() {
    for uri in [
        "https://example.com/schemas/user.json",
        "http://localhost:1234/integer.json",
        "file:///etc/passwd",
        "other.json#/x",
    ] {
        assert_eq!(
            compile_error(json!({"properties": {"u": {"$ref": uri}}})).to_string(),
            format!("external $ref resolution is disabled: {uri}")
        );
    }
    let options = CompileOptions::new().register_document(
        "https://example.com/user.json",
        json!({"type": "object", "required": ["id"]}),
    );
    let validator = SchemaValidator::with_options(
        &json!({"type": "object", "properties": {"user": {"$ref": "https://example.com/user.json"}}}),
        &options,
    )
    .unwrap();
    assert_eq!(
        validator
            .validate_as(&json!({"user": {}}), Subject::Arguments)
            .unwrap_err()
            .messages(),
        ["missing required argument 'user.id'"]
    );
}

#[test]
fn local_refs_resolve_and_dangling_ones_are_named() {
    let schema = json!({"type": "object", "properties": {"a": {"$ref": "#/$defs/pos"}}, "$defs": {"pos": {"type": "integer", "minimum": 1}}});
    assert_eq!(
        messages(schema, json!({"a": 0})),
        ["argument 'a' value must be >= 1 (got 0)"]
    );
    assert_eq!(
        compile_error(json!({"properties": {"a": {"$ref": "#/$defs/missing"}}})).to_string(),
        "$ref '#/$defs/missing' does not resolve inside the document"
    );
}

#[test]
fn ref_cycles_are_errors_not_hangs() {
    let err = compile_error(
        json!({"$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"$ref": "#/$defs/a"}}, "properties": {"x": {"$ref": "#/$defs/a"}}}),
    );
    assert!(matches!(err, SchemaError::CyclicRef { .. }), "{err}");
    assert_eq!(
        err.to_string(),
        "cyclic $ref never reaches a value to check: #/$defs/a -> #/$defs/b -> #/$defs/a"
    );
    // Recursion that walks down the value is fine, and deep values are refused, not overflowed.
    let tree = SchemaValidator::new(&json!({"type": "array", "items": {"$ref": "#"}})).unwrap();
    assert!(tree.is_valid(&json!([[[]], []])));
    let mut deep = json!([]);
    for _ in 0..100_000 {
        deep = Value::Array(vec![deep]);
    }
    assert!(!tree.is_valid(&deep));
    assert_eq!(
        tree.validate_as(&deep, Subject::Arguments)
            .unwrap_err()
            .messages(),
        ["arguments nest deeper than 128 levels of arrays and objects"]
    );
    toolschema::json::drop_deep(deep);
}

#[test]
fn invalid_schemas_name_the_place() {
    assert_eq!(
        compile_error(json!({"type": "object", "properties": {"q": {"type": "strin"}}})).to_string(),
        "invalid schema at '/properties/q/type': the value is not valid under any of the schemas listed in the 'anyOf' keyword"
    );
    assert_eq!(compile_error(json!([1])), SchemaError::NotASchema);
}

#[test]
fn deep_schemas_are_refused() {
    let mut schema = json!({"type": "string"});
    for _ in 0..20_000 {
        let mut map = serde_json::Map::new();
        map.insert("items".into(), schema);
        schema = Value::Object(map);
    }
    assert_eq!(
        compile_error_ref(&schema),
        SchemaError::TooDeep { limit: 128 }
    );
    toolschema::json::drop_deep(schema);
}

/// A chain of `length` references: `x` refers to `d0`, `d0` to `d1`, ..., the last to a string.
fn reference_chain(length: usize) -> Value {
    let mut defs = serde_json::Map::new();
    for i in 0..length {
        defs.insert(
            format!("d{i}"),
            json!({"$ref": format!("#/$defs/d{}", i + 1)}),
        );
    }
    defs.insert(format!("d{length}"), json!({"type": "string"}));
    json!({"type": "object", "properties": {"x": {"$ref": "#/$defs/d0"}}, "$defs": defs})
}

#[test]
fn schemas_with_more_reference_targets_than_are_compiled_are_refused() {
    // 10,001 targets (d0 to d10000 refer on; x refers to d0): refused before the engine, whose
    // compile time grows with the square of a chain's length.
    let error = compile_error_ref(&reference_chain(10_000));
    assert_eq!(error, SchemaError::TooManyReferences { limit: 10_000 });
    assert_eq!(
        error.to_string(),
        "schema has more than 10000 distinct $ref targets, more than toolschema compiles (compiling chains of references takes time that grows with the square of their length)"
    );
    // A target is counted once however often it is used: 20,000 uses of one definition compile.
    let properties: serde_json::Map<String, Value> = (0..20_000)
        .map(|i| (format!("p{i}"), json!({"$ref": "#/$defs/word"})))
        .collect();
    let schema =
        json!({"type": "object", "properties": properties, "$defs": {"word": {"type": "string"}}});
    let validator = SchemaValidator::new(&schema).unwrap();
    assert!(validator.is_valid(&json!({"p7": "a"})));
    assert!(!validator.is_valid(&json!({"p7": 7})));
    // A short chain compiles and is followed to its end.
    let validator = SchemaValidator::new(&reference_chain(50)).unwrap();
    assert!(validator.is_valid(&json!({"x": "a"})));
    assert!(!validator.is_valid(&json!({"x": 1})));
}

/// [`support::chained_schema`] and a value `levels` deep whose innermost value is `inner`.
fn chained_levels(chain: usize, levels: usize, inner: Value) -> (Value, Value) {
    let mut value = inner;
    for _ in 0..levels {
        value = json!({"x": value});
    }
    (support::chained_schema(chain), value)
}

/// `work` on a thread with 2 MiB of stack, as the proxy's and the fuzzer's threads have.
fn on_a_small_stack<T: Send>(work: impl FnOnce() -> T + Send) -> T {
    std::thread::scope(|scope| {
        std::thread::Builder::new()
            .stack_size(2 * 1024 * 1024)
            .spawn_scoped(scope, work)
            .unwrap()
            .join()
            .unwrap()
    })
}

#[test]
fn deep_values_through_long_chains_of_subschemas_never_exhaust_the_stack() {
    // 80 subschemas in a row: refused when compiled.
    let (schema, _) = chained_levels(40, 0, json!(1));
    assert_eq!(
        compile_error_ref(&schema).to_string(),
        "schema applies more than 64 subschemas in a row at one place of a value (through $ref, allOf, anyOf, oneOf, not, if, then, else, dependentSchemas), more than toolschema validates: validating recurses once for each, at every level of the value"
    );
    // 63 in a row (the root's reference, then anyOf and $ref 31 times), 127 levels deep: about
    // the most a schema may ask. On a 2 MiB stack this overflowed, and the errors of 50 in a row took
    // 512 MB. It is judged on a large stack, and refused without saying where.
    let (schema, invalid) = chained_levels(31, 127, json!(5));
    let (_, valid) = chained_levels(31, 127, json!("y".repeat(100)));
    let validator = SchemaValidator::new(&schema).unwrap();
    on_a_small_stack(|| {
        assert!(validator.is_valid(&valid));
        assert!(!validator.is_valid(&invalid));
        assert_eq!(validator.validate_as(&valid, Subject::Arguments), Ok(()));
        assert_eq!(
            validator
                .validate_as(&invalid, Subject::Arguments)
                .unwrap_err()
                .messages(),
            ["the schema refuses the arguments: too deep, through subschemas applied in a row at each level, for toolschema to say where"]
        );
    });
    // Two in a row, as a tree of values is written: every error, named.
    let (schema, invalid) = chained_levels(1, 126, json!(5));
    let validator = SchemaValidator::new(&schema).unwrap();
    let errors = on_a_small_stack(|| validator.validate_as(&invalid, Subject::Arguments));
    let errors = errors.unwrap_err();
    let messages = errors.messages();
    assert!(
        messages[0].starts_with(&format!(
            "argument '{}x' must match one of",
            "x.".repeat(125)
        )),
        "{messages:?}"
    );
}

#[test]
fn too_deep_to_list_the_errors_a_rounded_number_leaves_the_value_unjudged() {
    // Each level also compares `n` exactly; the innermost `n` is past 2^64, read with rounding.
    let (mut schema, _) = chained_levels(20, 0, json!(null));
    schema["$defs"]["c20"]["properties"]["n"] = json!({"type": "integer", "multipleOf": 3});
    // An error the rounding cannot have decided: the value is refused whatever `n` is, but only
    // a list of every error shows it.
    schema["required"] = json!(["top"]);
    let text = format!(
        "{}{{\"x\": 5, \"n\": 123456789012345678901234}}{}",
        "{\"x\": ".repeat(126),
        "}".repeat(126)
    );
    let invalid = toolschema::json::parse(&text).unwrap();
    let validator = SchemaValidator::new(&schema).unwrap();
    // Listing the errors to see whether the rounding decided would take hundreds of megabytes.
    let messages = on_a_small_stack(|| validator.validate_as(&invalid, Subject::Arguments));
    let messages = messages.unwrap_err();
    assert_eq!(messages.messages().len(), 1);
    assert!(
        messages.messages()[0].starts_with("arguments could not be checked: the number at '"),
        "{:?}",
        messages.messages()
    );
}

#[test]
fn huge_strings_get_a_verdict() {
    let schema = object(json!({"q": {"type": "string", "maxLength": 64}}));
    let big = "x".repeat(50 * 1024 * 1024);
    assert_eq!(
        messages(schema, json!({"q": big})),
        [format!(
            "argument 'q' string length must be <= 64 (got {})",
            50 * 1024 * 1024
        )]
    );
}

// ---- output ----

#[test]
fn structured_output_checks() {
    let tool = Tool::from_value(json!({"name": "sum", "inputSchema": {"type": "object"},
        "outputSchema": {"type": "object", "properties": {"total": {"type": "number"}}, "required": ["total"]}}))
    .unwrap();
    let compiled = tool.compile().unwrap();
    assert!(compiled
        .validate_output(Some(&json!({"total": 3})), false)
        .is_ok());
    assert_eq!(
        compiled
            .validate_output(Some(&json!({"total": "3"})), false)
            .unwrap_err()
            .messages(),
        ["field 'total' must be a number (got a string)"]
    );
    assert_eq!(
        compiled
            .validate_output(Some(&json!([])), false)
            .unwrap_err()
            .messages(),
        ["structured content must be an object (got an array)"]
    );
    assert_eq!(
        compiled
            .validate_output(None, false)
            .unwrap_err()
            .messages(),
        ["structured content is missing; the tool declares an outputSchema"]
    );
    // Error results are not held to the schema.
    assert!(compiled
        .validate_output(Some(&json!({"oops": 1})), true)
        .is_ok());
    assert!(compiled.validate_output(None, true).is_ok());
    // No outputSchema: anything passes.
    let plain = Tool::from_value(json!({"name": "p", "inputSchema": {}}))
        .unwrap()
        .compile()
        .unwrap();
    assert!(plain.validate_output(Some(&json!(42)), false).is_ok());
}

#[test]
fn messages_say_what_was_received() {
    assert_eq!(
        messages(
            object(json!({"head": {"type": "number"}})),
            json!({"head": "5"})
        ),
        ["argument 'head' must be a number (got a string)"]
    );
    // A number too large to print in full is printed as a person would write it.
    let huge = toolschema::json::parse(&format!("{{\"n\": 1{}}}", "0".repeat(300))).unwrap();
    assert_eq!(
        messages(object(json!({"n": {"maximum": 10}})), huge),
        ["argument 'n' value must be <= 10 (got 1e300)"]
    );
}

#[test]
fn an_enum_typo_gets_the_nearest_value() {
    let schema = object(json!({"mode": {"enum": ["fast", "thorough", 3]}}));
    assert_eq!(
        messages(schema.clone(), json!({"mode": "fsat"})),
        ["argument 'mode' must be one of the enum values: \"fast\", \"thorough\", 3 (did you mean \"fast\"?)"]
    );
    assert_eq!(
        messages(schema, json!({"mode": "quick"})),
        ["argument 'mode' must be one of the enum values: \"fast\", \"thorough\", 3"]
    );
}

#[test]
fn closed_objects_without_properties_name_the_offending_keys() {
    let closed = json!({"type": "object", "additionalProperties": false});
    assert_eq!(
        check(closed.clone(), json!({"meta": 1, "x": {}})),
        [
            (
                "/meta".to_string(),
                "unexpected argument 'meta'".to_string()
            ),
            ("/x".to_string(), "unexpected argument 'x'".to_string()),
        ]
    );
    assert_eq!(
        messages(
            object(json!({"opts": closed})),
            json!({"opts": {"deep": true}})
        ),
        ["unexpected argument 'opts.deep'"]
    );
}

#[test]
fn a_missing_argument_names_the_near_miss_the_caller_sent() {
    // An open schema accepts the misspelt key, so the missing one says what was sent instead.
    let open = json!({"type": "object", "properties": {"repo_path": {"type": "string"}, "max_count": {"type": "integer"}}, "required": ["repo_path"]});
    assert_eq!(
        messages(open, json!({"repo_pth": "/src", "maxcount": 3})),
        ["missing required argument 'repo_path' (did you misspell it as 'repo_pth'?)"]
    );
    // A closed one reports the key itself, with its own suggestion.
    let closed = json!({"type": "object", "properties": {"repo_path": {"type": "string"}}, "required": ["repo_path"], "additionalProperties": false});
    assert_eq!(
        messages(closed, json!({"repo_pth": "/src"})),
        [
            "missing required argument 'repo_path'",
            "unexpected argument 'repo_pth' (did you mean 'repo_path'?)"
        ]
    );
}

#[test]
fn plain_values_read_well() {
    let validator = SchemaValidator::new(
        &json!({"type": "object", "properties": {"n": {"type": "integer", "maximum": 10}}}),
    )
    .unwrap();
    let messages = |instance: Value| {
        validator
            .validate_as(&instance, Subject::Value)
            .unwrap_err()
            .messages()
            .into_iter()
            .map(String::from)
            .collect::<Vec<_>>()
    };
    assert_eq!(
        messages(json!({"n": 11})),
        ["value 'n' must be <= 10 (got 11)"]
    );
    assert_eq!(
        messages(json!({"n": "x"})),
        ["value 'n' must be an integer (got a string)"]
    );
    let root = SchemaValidator::new(&json!({"minimum": 1})).unwrap();
    assert_eq!(
        root.validate_as(&json!(0), Subject::Value)
            .unwrap_err()
            .messages(),
        ["value must be >= 1 (got 0)"]
    );
}

#[test]
fn thousands_of_unexpected_arguments_get_one_message_each_and_a_bounded_number_of_suggestions() {
    let mut properties = serde_json::Map::new();
    for i in 0..200 {
        properties.insert(format!("field_{i}"), json!({"type": "string"}));
    }
    let schema = json!({"type": "object", "properties": properties, "additionalProperties": false});
    let mut arguments = serde_json::Map::new();
    for i in 0..8000 {
        // Near misses, short enough to be compared, and long names that never are.
        let name = if i % 2 == 0 {
            format!("field_{i}x")
        } else {
            format!("{:x<210}", format!("undeclared_{i}_"))
        };
        arguments.insert(name, json!("v"));
    }
    let found = messages(schema, Value::Object(arguments));
    assert_eq!(found.len(), 8000);
    let suggested = found.iter().filter(|m| m.contains("did you mean")).count();
    assert!(suggested > 0 && suggested <= 20, "{suggested} suggestions");
    assert!(found.iter().all(|m| m.starts_with("unexpected argument '")));
}

#[test]
fn external_refs_can_be_deferred_until_a_value_reaches_them() {
    let schema = json!({
        "type": "object",
        "properties": {"config": {"$ref": "https://example.com/config.json"}, "n": {"type": "integer"}},
        "$defs": {"unused": {"$ref": "https://example.com/other.json#/$defs/x"}}
    });
    assert!(matches!(
        SchemaValidator::new(&schema),
        Err(SchemaError::ExternalRef { .. })
    ));
    let deferred = CompileOptions::new().defer_external_refs(true);
    let validator = SchemaValidator::with_options(&schema, &deferred).unwrap();
    let judge = |instance: Value| validator.validate_as(&instance, Subject::Arguments);
    assert!(judge(json!({"n": 1})).is_ok());
    let invalid = judge(json!({"n": "1"})).unwrap_err();
    assert!(!invalid.is_unchecked());
    assert_eq!(
        invalid.messages(),
        ["argument 'n' must be an integer (got a string)"]
    );
    let reached = judge(json!({"n": 1, "config": {}})).unwrap_err();
    assert!(reached.is_unchecked());
    assert_eq!(
        reached.messages(),
        ["arguments could not be checked: the schema refers to https://example.com/config.json, which is never fetched"]
    );
    assert!(!validator.is_valid(&json!({"config": 1})));
    // Under `not`, reaching it flips nothing: the value is not judged.
    let negated = json!({"not": {"$ref": "https://example.com/x.json"}});
    let validator = SchemaValidator::with_options(&negated, &deferred).unwrap();
    assert!(validator.validate(&json!(1)).unwrap_err().is_unchecked());
    // A registered document is resolved as usual.
    let registered = deferred.clone().register_document(
        "https://example.com/config.json",
        json!({"type": "object", "required": ["k"]}),
    );
    let validator = SchemaValidator::with_options(&schema, &registered).unwrap();
    assert_eq!(
        validator
            .validate_as(&json!({"config": {}}), Subject::Arguments)
            .unwrap_err()
            .messages(),
        ["missing required argument 'config.k'"]
    );
}

#[test]
fn undeclared_arguments_of_an_open_schema_can_be_named() {
    let tool = Tool::from_value(json!({
        "name": "git_log",
        "inputSchema": {
            "type": "object",
            "properties": {"repo_path": {"type": "string"}, "max_count": {"type": "integer"}},
            "allOf": [{"properties": {"since": {"type": "string"}}}]
        }
    }))
    .unwrap();
    let compiled = tool.compile().unwrap();
    let arguments = json!({"repo_pth": "/src", "max_count": 3, "since": "x", "zzz": 1});
    assert!(
        compiled.validate_input(&arguments).is_ok(),
        "the schema is open"
    );
    assert_eq!(
        compiled
            .undeclared_arguments(&arguments)
            .unwrap()
            .messages(),
        [
            "unexpected argument 'repo_pth' (did you mean 'repo_path'?)",
            "unexpected argument 'zzz'"
        ]
    );
    assert_eq!(
        compiled.undeclared_arguments(&json!({"repo_path": "/"})),
        None
    );
    // A schema that rules on other names itself is left to the validation.
    for rule in [
        json!({"additionalProperties": false}),
        json!({"additionalProperties": {"type": "string"}}),
        json!({"patternProperties": {"^x-": {}}}),
    ] {
        let mut schema = json!({"type": "object", "properties": {"a": {}}});
        schema
            .as_object_mut()
            .unwrap()
            .extend(rule.as_object().unwrap().clone());
        let compiled = Tool::from_value(json!({"name": "t", "inputSchema": schema}))
            .unwrap()
            .compile()
            .unwrap();
        assert_eq!(compiled.undeclared_arguments(&json!({"b": 1})), None);
    }
}

mod numbers_past_two_to_the_53 {
    //! Numbers read as rounded floats are never judged valid where the schema compares them
    //! exactly: what the validator calls valid is valid in exact arithmetic.
    use super::*;
    use proptest::prelude::*;
    use toolschema::json::parse;

    /// The verdict on `{"n": INSTANCE}` (both numbers as text, read by the project's reader):
    /// valid, invalid, or could not be checked.
    fn verdict(schema: &str, instance: &str) -> &'static str {
        let schema = parse(&format!(
            r#"{{"type": "object", "properties": {{"n": {schema}}}}}"#
        ))
        .unwrap();
        let arguments = parse(&format!(r#"{{"n": {instance}}}"#)).unwrap();
        let tool = Tool::from_value(json!({"name": "t", "inputSchema": schema})).unwrap();
        match tool.compile().unwrap().validate_input(&arguments) {
            Ok(()) => "valid",
            Err(e) if e.is_unchecked() => "unchecked",
            Err(_) => "invalid",
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]

        /// Both verdicts: what is called valid is valid, and what is called invalid is invalid,
        /// in exact arithmetic (anything else could not be checked).
        #[test]
        fn a_verdict_holds_in_exact_arithmetic(
            // Every power of two from 2^50 to 2^100 as likely: 64-bit integers and beyond.
            bound in (50u32..100).prop_flat_map(|e| (1i128 << e)..(1i128 << (e + 1))),
            delta in -3i128..=3,
            fraction in proptest::bool::ANY,
        ) {
            let n = bound + delta;
            let instance = if fraction { format!("{n}.5") } else { n.to_string() };
            let exact = |holds: bool| if holds { "valid" } else { "invalid" };
            // Where numbers fit 64 bits and have no fraction, the verdict is exact.
            let exact_reading = !fraction && i64::try_from(n).is_ok() && i64::try_from(bound).is_ok();
            let cases = [
                (format!(r#"{{"maximum": {bound}}}"#), n * 2 + i128::from(fraction) <= bound * 2),
                (format!(r#"{{"minimum": {bound}}}"#), n * 2 + i128::from(fraction) >= bound * 2),
                (format!(r#"{{"exclusiveMaximum": {bound}}}"#), n * 2 + i128::from(fraction) < bound * 2),
                (format!(r#"{{"const": {bound}}}"#), !fraction && n == bound),
                (format!(r#"{{"enum": [1, {bound}]}}"#), !fraction && n == bound),
                (r#"{"multipleOf": 2}"#.to_string(), !fraction && n % 2 == 0),
                // x / 2.5 = 2x / 5: a whole number when 5 divides 2x.
                (r#"{"multipleOf": 2.5}"#.to_string(), (2 * n + i128::from(fraction)) % 5 == 0),
                (r#"{"multipleOf": 0.5}"#.to_string(), true),
                (r#"{"type": "integer"}"#.to_string(), !fraction),
                (r#"{"not": {"type": "integer"}}"#.to_string(), fraction),
                (r#"{"oneOf": [{"type": "integer"}, {"minimum": 0}]}"#.to_string(), fraction || n < 0),
            ];
            // Two items, compared whole: distinct unless the number is the bound exactly.
            let pair = format!("[{instance}, {bound}]");
            let distinct = fraction || n != bound;
            let pairs = [
                (r#"{"uniqueItems": true}"#.to_string(), distinct),
                (r#"{"not": {"uniqueItems": true}}"#.to_string(), !distinct),
            ];
            let judged = cases
                .into_iter()
                .map(|(schema, holds)| (schema, instance.clone(), holds))
                .chain(pairs.into_iter().map(|(schema, holds)| (schema, pair.clone(), holds)));
            for (schema, instance, holds) in judged {
                let got = verdict(&schema, &instance);
                if got == "valid" {
                    prop_assert!(holds, "{schema} called {instance} valid");
                }
                if got == "invalid" {
                    prop_assert!(!holds, "{schema} called {instance} invalid");
                }
                if instance.starts_with('[') {
                    continue;
                }
                // A multipleOf that is not whole divides even exact integers as floats.
                let divides_as_floats = schema.contains('.') && n.abs() >= 1 << 52;
                if exact_reading && !divides_as_floats {
                    prop_assert_eq!(got, exact(holds), "{} with {}", schema, instance);
                }
            }
        }
    }

    #[test]
    fn numbers_the_schema_does_not_compare_exactly_are_still_judged() {
        assert_eq!(verdict(r#"{"type": "number"}"#, "1e400"), "valid");
        assert_eq!(
            verdict(r#"{"maximum": 100}"#, "123456789012345678901234567890"),
            "invalid"
        );
        assert_eq!(
            verdict(r#"{"minimum": 100}"#, "123456789012345678901234567890"),
            "valid"
        );
        assert_eq!(
            verdict(r#"{"type": "integer"}"#, "12345678901234567"),
            "valid"
        );
        assert_eq!(
            messages(
                parse(r#"{"type": "object", "properties": {"n": {"const": 123456789012345678901234567890}}}"#).unwrap(),
                parse(r#"{"n": 123456789012345678901234567891}"#).unwrap()
            ),
            vec!["arguments could not be checked: the number at 'n' (read as 1.2345678901234568e29) is past 2^52, where a float cannot hold every number, and the schema compares it exactly (`const`)"]
        );
        // Only a keyword that applies where the number is counts: an integer type or a
        // multipleOf elsewhere does not stop the check, through `$ref`s and items too.
        let schema = parse(
            r##"{"type": "object", "properties": {
                "big": {"$ref": "#/$defs/amount"}, "count": {"type": "integer"},
                "list": {"type": "array", "items": {"type": "number", "maximum": 1e301}},
                "tiny": {"multipleOf": 0.5}},
               "$defs": {"amount": {"type": "number", "minimum": 0}}}"##,
        )
        .unwrap();
        let arguments =
            parse(r#"{"big": 1e300, "count": 5, "list": [1, 2], "tiny": 1.5}"#).unwrap();
        assert_eq!(messages(schema.clone(), arguments), Vec::<String>::new());
        // An error rounding cannot decide stands: a small bound, or an error elsewhere.
        let small =
            parse(r#"{"type": "object", "properties": {"x": {"type": "integer", "maximum": 3}}}"#)
                .unwrap();
        assert_eq!(
            messages(small, parse(r#"{"x": 4503599627370497.5}"#).unwrap()),
            vec!["argument 'x' value must be <= 3 (got 4503599627370498)"]
        );
        // Where exactness is not followed (draft-07 `dependencies`, a `$ref` inside a resource
        // of its own, a `multipleOf` past 2^53), a rounded number could not be checked.
        for (schema, instance) in [
            (
                r#"{"$schema": "http://json-schema.org/draft-07/schema#", "dependencies": {"mode": {"properties": {"n": {"maximum": 18446744073709551616}}}}}"#,
                r#"{"mode": "x", "n": 18446744073709551617}"#,
            ),
            (
                r##"{"$defs": {"n": {"type": "number"}}, "properties": {"inner": {"$id": "https://example.com/inner", "$defs": {"n": {"maximum": 18446744073709551616}}, "properties": {"n": {"$ref": "#/$defs/n"}}}}}"##,
                r#"{"inner": {"n": 18446744073709551617}}"#,
            ),
            // A `$ref` into the inside of a resource of its own, and a `$ref` from there.
            (
                r##"{"properties": {"n": {"$ref": "#/$defs/a/properties/n"}}, "$defs": {"b": {}, "a": {"$id": "https://example.com/a", "$defs": {"b": {"maximum": 9007199254740992}}, "properties": {"n": {"$ref": "#/$defs/b"}}}}}"##,
                r#"{"n": 9007199254740993.0}"#,
            ),
            // An `if` that compares the number decides which errors apply.
            (
                r#"{"if": {"properties": {"amount": {"minimum": 1e16}}}, "then": {"required": ["approval"]}}"#,
                r#"{"amount": 9999999999999999.5}"#,
            ),
        ] {
            let got = messages(parse(schema).unwrap(), parse(instance).unwrap());
            assert!(
                got.len() == 1 && got[0].contains("could not be checked"),
                "{schema}: {got:?}"
            );
        }
        // A `multipleOf` past 2^53 divides an integer the value holds exactly (not a float)
        // exactly: judged, not left unchecked.
        let divisor = parse(r#"{"properties": {"n": {"multipleOf": 10000000000000000}}}"#).unwrap();
        assert_eq!(
            messages(
                divisor.clone(),
                parse(r#"{"n": 20000000000000001}"#).unwrap()
            ),
            vec!["argument 'n' must be a multiple of 1e16"]
        );
        assert!(messages(divisor, parse(r#"{"n": 20000000000000000}"#).unwrap()).is_empty());
        // An error elsewhere stands beside a number that could not be checked.
        let both = parse(r#"{"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "string"}}}"#).unwrap();
        assert_eq!(
            messages(both, parse(r#"{"a": 4503599627370496.5, "b": 5}"#).unwrap()),
            vec!["argument 'b' must be a string (got an integer)"]
        );
        // Where one applies, through the same `$ref` and items, it does.
        let arguments = parse(r#"{"big": 1e300, "list": [1e301]}"#).unwrap();
        assert_eq!(
            messages(schema, arguments),
            vec!["arguments could not be checked: the number at 'list[0]' (read as 1e301) is past 2^52, where a float cannot hold every number, and the schema compares it exactly (`maximum`)"]
        );
    }
}
