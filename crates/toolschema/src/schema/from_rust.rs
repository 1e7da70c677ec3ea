//! MCP-ready schemas from Rust types (cargo feature `schemars`).
//!
//! schemars describes a type faithfully, but not in the form MCP clients read best: it adds a root
//! `title` and `$schema`, puts nested types behind `$ref`s, leaves objects open, and writes
//! non-standard formats such as `uint32` that Ajv-based clients warn about. [`input_schema_for`]
//! produces what a tool should advertise instead.

use super::{SchemaError, STANDARD_FORMATS};
use schemars::generate::SchemaSettings;
use schemars::JsonSchema;
use serde_json::{Map, Value};

/// An MCP-ready `inputSchema` (or `outputSchema`) for `T`: an object root, draft 2020-12 (no
/// `$schema`, MCP's default), every object closed with `additionalProperties: false`, `required`
/// from the non-`Option` fields, subschemas inlined (`$ref`/`$defs` only where `T` is recursive),
/// non-standard formats such as `uint32` dropped (their `minimum: 0` kept), and no root title.
///
/// ```
/// use schemars::JsonSchema;
/// use serde_json::json;
///
/// /// Search the index.
/// #[derive(JsonSchema)]
/// struct SearchInput {
///     /// What to look for.
///     query: String,
///     max_results: Option<u32>,
///     case_sensitive: Option<bool>,
/// }
///
/// let schema = toolschema::schema::input_schema_for::<SearchInput>().unwrap();
/// assert_eq!(serde_json::Value::Object(schema), json!({
///     "description": "Search the index.",
///     "type": "object",
///     "properties": {
///         "query": {"description": "What to look for.", "type": "string"},
///         "max_results": {"type": ["integer", "null"], "minimum": 0},
///         "case_sensitive": {"type": ["boolean", "null"]}
///     },
///     "required": ["query"],
///     "additionalProperties": false
/// }));
/// ```
pub fn input_schema_for<T: JsonSchema>() -> Result<Map<String, Value>, SchemaError> {
    let generator = SchemaSettings::draft2020_12()
        .with(|settings| {
            settings.meta_schema = None;
            settings.inline_subschemas = true;
        })
        .into_generator();
    let schema = generator.into_root_schema_for::<T>().to_value();
    let Value::Object(mut root) = schema else {
        return Err(not_an_object::<T>());
    };
    let is_object = root.get("type").and_then(Value::as_str) == Some("object");
    if !is_object {
        return Err(not_an_object::<T>());
    }
    root.shift_remove("title");
    root.shift_remove("$schema");
    let mut value = Value::Object(root);
    make_mcp_ready(&mut value);
    match value {
        Value::Object(root) => Ok(root),
        _ => Err(not_an_object::<T>()),
    }
}

fn not_an_object<T: JsonSchema>() -> SchemaError {
    SchemaError::Shape {
        pointer: String::new(),
        message: format!(
            "the schema of {} is not an object; a tool's arguments must be a JSON object (use a struct)",
            T::schema_name()
        ),
    }
}

/// Close every object schema (except `allOf` branches, which closing would make unsatisfiable) and
/// drop non-standard formats, everywhere in the schema.
fn make_mcp_ready(schema: &mut Value) {
    // (schema, whether it is an allOf branch)
    let mut stack: Vec<(&mut Value, bool)> = vec![(schema, false)];
    while let Some((node, in_all_of)) = stack.pop() {
        let Value::Object(map) = node else { continue };
        let format_is_standard = map
            .get("format")
            .and_then(Value::as_str)
            .is_none_or(|f| STANDARD_FORMATS.contains(&f));
        if !format_is_standard {
            map.shift_remove("format");
        }
        let is_object = map.contains_key("properties")
            || match map.get("type") {
                Some(Value::String(t)) => t == "object",
                Some(Value::Array(types)) => types.iter().any(|t| t == "object"),
                _ => false,
            };
        if is_object
            && !in_all_of
            && !map.contains_key("additionalProperties")
            && !map.contains_key("unevaluatedProperties")
        {
            map.insert("additionalProperties".into(), Value::Bool(false));
        }
        for (key, child) in map.iter_mut() {
            match (key.as_str(), child) {
                ("allOf", Value::Array(branches)) => {
                    stack.extend(branches.iter_mut().map(|b| (b, true)));
                }
                ("anyOf" | "oneOf" | "prefixItems", Value::Array(branches)) => {
                    stack.extend(branches.iter_mut().map(|b| (b, false)));
                }
                (
                    "properties" | "$defs" | "definitions" | "patternProperties",
                    Value::Object(m),
                ) => {
                    stack.extend(m.values_mut().map(|b| (b, false)));
                }
                (
                    "items" | "additionalProperties" | "not" | "if" | "then" | "else" | "contains",
                    child @ Value::Object(_),
                ) => stack.push((child, false)),
                _ => {}
            }
        }
    }
}
