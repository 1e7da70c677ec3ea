//! The providers' published rules, written down again for the tests, apart from
//! `toolschema::adapt`'s profiles: what each provider accepts in a tool request. A checker returns
//! every rule the request breaks (empty when the provider would take it).
//!
//! Sources (the same documents the profiles cite): OpenAI's structured-outputs guide ("Supported
//! schemas") and openai-python's `FunctionDefinition`; Anthropic's tool definition page and
//! anthropic-sdk-python's `ToolParam`; google-genai's `FunctionDeclaration` and `Schema`, and the
//! Gemini API reference of `Schema`.

#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use serde_json::{Map, Value};

/// What a schema object holds, with its pointer.
fn schemas(root: &Value) -> Vec<(String, &Map<String, Value>)> {
    let mut out = Vec::new();
    let mut stack = vec![(String::new(), root)];
    while let Some((pointer, value)) = stack.pop() {
        let Value::Object(map) = value else { continue };
        out.push((pointer.clone(), map));
        for (key, child) in map {
            let here = format!("{pointer}/{key}");
            match key.as_str() {
                "properties" | "patternProperties" | "$defs" | "definitions"
                | "dependentSchemas" => {
                    if let Value::Object(members) = child {
                        for (name, sub) in members {
                            stack.push((format!("{here}/{name}"), sub));
                        }
                    }
                }
                "items"
                | "additionalProperties"
                | "unevaluatedProperties"
                | "not"
                | "if"
                | "then"
                | "else"
                | "contains"
                | "propertyNames"
                | "additionalItems"
                | "unevaluatedItems" => match child {
                    Value::Array(list) => {
                        for (i, sub) in list.iter().enumerate() {
                            stack.push((format!("{here}/{i}"), sub));
                        }
                    }
                    other => stack.push((here, other)),
                },
                "anyOf" | "allOf" | "oneOf" | "prefixItems" => {
                    if let Value::Array(list) = child {
                        for (i, sub) in list.iter().enumerate() {
                            stack.push((format!("{here}/{i}"), sub));
                        }
                    }
                }
                _ => {}
            }
        }
    }
    out
}

fn name_matches(name: &str, first: impl Fn(char) -> bool, rest: &str, max: usize) -> bool {
    let mut chars = name.chars();
    chars.next().is_some_and(first)
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || rest.contains(c))
        && name.chars().count() <= max
}

fn is_type(schema: &Map<String, Value>, t: &str) -> bool {
    match schema.get("type") {
        Some(Value::String(s)) => s == t,
        Some(Value::Array(l)) => l.iter().any(|x| x == t),
        _ => false,
    }
}

fn root_rules(schema: &Value, problems: &mut Vec<String>) {
    if schema.get("type") != Some(&Value::String("object".into())) {
        problems.push("root: type must be \"object\"".into());
    }
    for k in ["anyOf", "oneOf", "allOf", "not", "enum"] {
        if schema.get(k).is_some() {
            problems.push(format!("root: {k} is not accepted at the root"));
        }
    }
}

/// OpenAI function tool, non-strict: `{"type": "function", "function": {...}}`.
pub fn openai(tool: &Value) -> Vec<String> {
    let mut problems = Vec::new();
    let Some(function) = tool.get("function") else {
        return vec!["no function".into()];
    };
    if tool.get("type") != Some(&Value::String("function".into())) {
        problems.push("type must be \"function\"".into());
    }
    let name = function["name"].as_str().unwrap_or_default();
    // "Must be a-z, A-Z, 0-9, or contain underscores and dashes, with a maximum length of 64."
    if !name_matches(
        name,
        |c| c.is_ascii_alphanumeric() || "_-".contains(c),
        "_-",
        64,
    ) {
        problems.push(format!("name '{name}'"));
    }
    let parameters = &function["parameters"];
    root_rules(parameters, &mut problems);
    for (pointer, map) in schemas(parameters) {
        // "array schema missing items"
        if is_type(map, "array") && !map.contains_key("items") {
            problems.push(format!("{pointer}: array schema missing items"));
        }
        // "object schema missing properties"
        if is_type(map, "object") && !map.contains_key("properties") {
            problems.push(format!("{pointer}: object schema missing properties"));
        }
    }
    problems
}

/// OpenAI function tool with `"strict": true` (structured outputs).
pub fn openai_strict(tool: &Value) -> Vec<String> {
    let mut problems = openai(tool);
    let function = &tool["function"];
    if function.get("strict") != Some(&Value::Bool(true)) {
        problems.push("strict must be true".into());
    }
    let parameters = &function["parameters"];
    // Supported types and properties, "Definitions are supported", and the keywords a schema
    // names itself with.
    const KEYWORDS: &[&str] = &[
        "type",
        "properties",
        "required",
        "additionalProperties",
        "items",
        "enum",
        "const",
        "anyOf",
        "$ref",
        "$defs",
        "description",
        "title",
        "pattern",
        "format",
        "minLength",
        "maxLength",
        "multipleOf",
        "maximum",
        "exclusiveMaximum",
        "minimum",
        "exclusiveMinimum",
        "minItems",
        "maxItems",
    ];
    const FORMATS: &[&str] = &[
        "date-time",
        "time",
        "date",
        "duration",
        "email",
        "hostname",
        "ipv4",
        "ipv6",
        "uuid",
    ];
    let mut properties = 0;
    let mut enum_values = 0;
    let mut strings = 0;
    for (pointer, map) in schemas(parameters) {
        for key in map.keys() {
            if !KEYWORDS.contains(&key.as_str()) {
                problems.push(format!("{pointer}: {key} is not supported"));
            }
        }
        if let Some(reference) = map.get("$ref").and_then(Value::as_str) {
            let ok = reference == "#"
                || reference
                    .strip_prefix("#/$defs/")
                    .is_some_and(|n| !n.contains('/'));
            if !ok {
                problems.push(format!("{pointer}: $ref {reference}"));
            }
            if map.len() > 1 {
                problems.push(format!("{pointer}: keywords beside $ref"));
            }
        }
        if let Some(format) = map.get("format").and_then(Value::as_str) {
            if !FORMATS.contains(&format) {
                problems.push(format!("{pointer}: format {format}"));
            }
        }
        let typed = ["type", "$ref", "anyOf", "enum", "const"]
            .iter()
            .any(|k| map.contains_key(*k));
        let is_definitions_map = pointer.ends_with("/$defs");
        if !typed && !is_definitions_map {
            problems.push(format!("{pointer}: no type"));
        }
        // "additionalProperties: false must always be set in objects"; "All fields must be
        // required".
        if is_type(map, "object") || map.contains_key("properties") {
            if map.get("additionalProperties") != Some(&Value::Bool(false)) {
                problems.push(format!("{pointer}: additionalProperties must be false"));
            }
            let declared: Vec<&String> = map
                .get("properties")
                .and_then(Value::as_object)
                .map(|p| p.keys().collect())
                .unwrap_or_default();
            let required: Vec<&str> = map
                .get("required")
                .and_then(Value::as_array)
                .map(|r| r.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            if declared.iter().any(|d| !required.contains(&d.as_str())) {
                problems.push(format!("{pointer}: every property must be required"));
            }
            properties += declared.len();
            strings += declared.iter().map(|d| d.chars().count()).sum::<usize>();
        }
        if is_type(map, "array") {
            let items_typed = map.get("items").is_some_and(|i| {
                ["type", "$ref", "anyOf", "enum", "const"]
                    .iter()
                    .any(|k| i.get(k).is_some())
            });
            if !items_typed {
                problems.push(format!("{pointer}: items must name a type"));
            }
        }
        if let Some(Value::Array(values)) = map.get("enum") {
            enum_values += values.len();
            strings += values
                .iter()
                .filter_map(Value::as_str)
                .map(|s| s.chars().count())
                .sum::<usize>();
        }
    }
    // "up to 5000 object properties total"; "up to 1000 enum values"; "120,000 characters".
    if properties > 5000 {
        problems.push(format!("{properties} properties"));
    }
    if enum_values > 1000 {
        problems.push(format!("{enum_values} enum values"));
    }
    if strings > 120_000 {
        problems.push(format!("{strings} characters of names and values"));
    }
    problems
}

/// Anthropic tool: `{"name", "description", "input_schema"}`; the schema must pass the JSON
/// Schema 2020-12 meta-schema (checked apart, by the caller).
pub fn anthropic(tool: &Value) -> Vec<String> {
    let mut problems = Vec::new();
    let name = tool["name"].as_str().unwrap_or_default();
    // "Must match the regex ^[a-zA-Z0-9_-]{1,128}$"
    if !name_matches(
        name,
        |c| c.is_ascii_alphanumeric() || "_-".contains(c),
        "_-",
        128,
    ) {
        problems.push(format!("name '{name}'"));
    }
    let schema = &tool["input_schema"];
    // InputSchemaTyped: type Required[Literal["object"]]; "input_schema does not support oneOf,
    // allOf, or anyOf at the top level".
    root_rules(schema, &mut problems);
    for key in tool.as_object().into_iter().flat_map(|m| m.keys()) {
        if !["name", "description", "input_schema"].contains(&key.as_str()) {
            problems.push(format!("unknown field {key}"));
        }
    }
    problems
}

fn gemini_name(name: &str) -> bool {
    // "Must start with a letter or an underscore. Must be a-z, A-Z, 0-9, or contain underscores,
    // dots, colons and dashes, with a maximum length of 128."
    name_matches(name, |c| c.is_ascii_alphabetic() || c == '_', "_.:-", 128)
}

/// Gemini function declaration with `parametersJsonSchema`.
pub fn gemini(tool: &Value) -> Vec<String> {
    let mut problems = Vec::new();
    let name = tool["name"].as_str().unwrap_or_default();
    if !gemini_name(name) {
        problems.push(format!("name '{name}'"));
    }
    let schema = &tool["parametersJsonSchema"];
    root_rules(schema, &mut problems);
    // "Only the following properties are supported: ..."
    const KEYWORDS: &[&str] = &[
        "$id",
        "$defs",
        "$ref",
        "$anchor",
        "type",
        "format",
        "title",
        "description",
        "enum",
        "items",
        "prefixItems",
        "minItems",
        "maxItems",
        "minimum",
        "maximum",
        "anyOf",
        "oneOf",
        "properties",
        "additionalProperties",
        "required",
        "propertyOrdering",
    ];
    for (pointer, map) in schemas(schema) {
        for key in map.keys() {
            if !KEYWORDS.contains(&key.as_str()) {
                problems.push(format!("{pointer}: {key} is not supported"));
            }
        }
        // "enum (for strings and numbers)"
        if let Some(Value::Array(values)) = map.get("enum") {
            if !values.iter().all(|v| v.is_string() || v.is_number()) {
                problems.push(format!("{pointer}: enum of other values"));
            }
        }
        // "If $ref is set on a sub-schema, no other properties, except for those starting as a
        // $, may be set."
        if map.contains_key("$ref") && map.keys().any(|k| !k.starts_with('$')) {
            problems.push(format!("{pointer}: keywords beside $ref"));
        }
        required_declared(&pointer, map, &mut problems);
    }
    problems
}

fn required_declared(pointer: &str, map: &Map<String, Value>, problems: &mut Vec<String>) {
    if let Some(Value::Array(required)) = map.get("required") {
        let declared = map.get("properties").and_then(Value::as_object);
        for name in required.iter().filter_map(Value::as_str) {
            if !declared.is_some_and(|d| d.contains_key(name)) {
                problems.push(format!("{pointer}: required '{name}' is not declared"));
            }
        }
    }
}

/// Gemini function declaration with `parameters` (the OpenAPI 3.0 subset).
pub fn gemini_openapi(tool: &Value) -> Vec<String> {
    let mut problems = Vec::new();
    let name = tool["name"].as_str().unwrap_or_default();
    if !gemini_name(name) {
        problems.push(format!("name '{name}'"));
    }
    let schema = &tool["parameters"];
    root_rules(schema, &mut problems);
    // google-genai types.Schema fields, as the API writes them.
    const KEYWORDS: &[&str] = &[
        "type",
        "format",
        "title",
        "description",
        "nullable",
        "enum",
        "maxItems",
        "minItems",
        "properties",
        "required",
        "minProperties",
        "maxProperties",
        "minLength",
        "maxLength",
        "pattern",
        "example",
        "anyOf",
        "propertyOrdering",
        "default",
        "items",
        "minimum",
        "maximum",
    ];
    const TYPES: &[&str] = &[
        "string", "number", "integer", "boolean", "array", "object", "null",
    ];
    for (pointer, map) in schemas(schema) {
        for key in map.keys() {
            if !KEYWORDS.contains(&key.as_str()) {
                problems.push(format!("{pointer}: {key} is not in the OpenAPI subset"));
            }
        }
        match map.get("type") {
            None => {}
            Some(Value::String(t)) if TYPES.contains(&t.to_ascii_lowercase().as_str()) => {}
            Some(other) => problems.push(format!("{pointer}: type {other}")),
        }
        if let Some(Value::Array(values)) = map.get("enum") {
            if !values.iter().all(Value::is_string) {
                problems.push(format!("{pointer}: enum values must be strings"));
            }
        }
        required_declared(&pointer, map, &mut problems);
    }
    // "Parameter names must start with a letter or an underscore and must only contain chars
    // a-z, A-Z, 0-9, or underscores with a maximum length of 64."
    for parameter in schema
        .get("properties")
        .and_then(Value::as_object)
        .into_iter()
        .flat_map(|p| p.keys())
    {
        if !name_matches(parameter, |c| c.is_ascii_alphabetic() || c == '_', "_", 64) {
            problems.push(format!("parameter name '{parameter}'"));
        }
    }
    problems
}

/// The checker of a profile, by name.
pub fn checker(profile: &str) -> fn(&Value) -> Vec<String> {
    match profile {
        "openai" => openai,
        "openai-strict" => openai_strict,
        "anthropic" => anthropic,
        "gemini" => gemini,
        "gemini-openapi" => gemini_openapi,
        other => panic!("no checker for {other}"),
    }
}

/// The input schema inside a request-format tool.
pub fn schema_of(tool: &Value) -> &Value {
    tool.get("function")
        .map(|f| &f["parameters"])
        .or_else(|| tool.get("input_schema"))
        .or_else(|| tool.get("parametersJsonSchema"))
        .or_else(|| tool.get("parameters"))
        .unwrap()
}

/// Every keyword used in a schema, with how many times.
pub fn keyword_counts(schema: &Value) -> std::collections::BTreeMap<String, usize> {
    let mut counts = std::collections::BTreeMap::new();
    for (_, map) in schemas(schema) {
        for key in map.keys() {
            *counts.entry(key.clone()).or_insert(0) += 1;
        }
    }
    counts
}

/// How many distinct subschemas use each keyword: where merged forms collapse identical
/// schemas into one (a property two forms of a union declare alike), nothing is lost.
pub fn distinct_keyword_counts(schema: &Value) -> std::collections::BTreeMap<String, usize> {
    let mut seen = std::collections::BTreeSet::new();
    let mut counts = std::collections::BTreeMap::new();
    for (_, map) in schemas(schema) {
        if !seen.insert(Value::Object(map.clone()).to_string()) {
            continue;
        }
        for key in map.keys() {
            *counts.entry(key.clone()).or_insert(0) += 1;
        }
    }
    counts
}

/// Keywords that give an object its shape: merging schemas (an `allOf`, a root union) makes one
/// of several, so for these only a keyword gone altogether counts as lost.
const SHAPE_KEYWORDS: &[&str] = &[
    "type",
    "properties",
    "required",
    "additionalProperties",
    "description",
    "title",
    "$defs",
];

/// Keywords the adapted schema uses fewer times than the original (gone altogether, for the
/// shape keywords); each one must be in the loss report.
pub fn keywords_lost(original: &Value, adapted: &Value) -> Vec<String> {
    keywords_lost_by(keyword_counts(original), keyword_counts(adapted))
}

/// [`keywords_lost`] where forms were merged: the original counted over distinct subschemas.
pub fn keywords_lost_merging(original: &Value, adapted: &Value) -> Vec<String> {
    // The adapted side counts every use: two schemas the merge made alike (a property made
    // nullable beside one that already was) are still two uses of their keywords.
    keywords_lost_by(distinct_keyword_counts(original), keyword_counts(adapted))
}

fn keywords_lost_by(
    before: std::collections::BTreeMap<String, usize>,
    after: std::collections::BTreeMap<String, usize>,
) -> Vec<String> {
    before
        .into_iter()
        .filter(|(k, n)| {
            let left = after.get(k).copied().unwrap_or(0);
            if SHAPE_KEYWORDS.contains(&k.as_str()) {
                left == 0
            } else {
                left < *n
            }
        })
        .map(|(k, _)| k)
        .collect()
}

/// The schema an OpenAPI 3.0 subset schema means, in JSON Schema (`nullable` as a type list),
/// to validate instances against it.
pub fn openapi_as_json_schema(schema: &Value) -> Value {
    match schema {
        Value::Object(map) => {
            let mut out = Map::new();
            let nullable = map.get("nullable") == Some(&Value::Bool(true));
            for (k, v) in map {
                match k.as_str() {
                    "nullable" | "propertyOrdering" | "example" => {}
                    "properties" => {
                        let props: Map<String, Value> = v
                            .as_object()
                            .unwrap()
                            .iter()
                            .map(|(n, s)| (n.clone(), openapi_as_json_schema(s)))
                            .collect();
                        out.insert(k.clone(), Value::Object(props));
                    }
                    "items" => {
                        out.insert(k.clone(), openapi_as_json_schema(v));
                    }
                    "anyOf" => {
                        let list = v
                            .as_array()
                            .unwrap()
                            .iter()
                            .map(openapi_as_json_schema)
                            .collect();
                        out.insert(k.clone(), Value::Array(list));
                    }
                    _ => {
                        out.insert(k.clone(), v.clone());
                    }
                }
            }
            if nullable {
                match out.get("type").cloned() {
                    Some(Value::String(t)) => {
                        out.insert("type".into(), serde_json::json!([t, "null"]));
                    }
                    _ => {
                        let inner = Value::Object(out);
                        return serde_json::json!({"anyOf": [inner, {"type": "null"}]});
                    }
                }
                if let Some(Value::Array(values)) = out.get_mut("enum") {
                    values.push(Value::Null);
                }
            }
            Value::Object(out)
        }
        other => other.clone(),
    }
}
