//! The lightweight schema shapes (schema version `2025-10-09`) and their translation to standard
//! JSON Schema.
//!
//! Two shapes are accepted: the direct map of argument name to property, and the
//! JSON-Schema-like `{"properties": {...}, "required": [...]}`. Both use the same property fields:
//!
//! - `type`: `string`, `integer`, `float` (a number), `number`, `boolean`, `enum` (the value must
//!   be one of `enum`), `array` (element type from `items.type`); `object` and `null` pass through;
//! - `required: true` on a property, or a top-level `required` list;
//! - `isArray: true`: the argument is an array of the property's type;
//! - on an array, `minLength`, `maxLength`, `minimum`, `maximum`, `enum` (and the other
//!   per-value keywords) apply to each element;
//! - enum values compare by string form: `1`, `1.0` and `"1"` are the same value.
//!
//! The result is a closed object schema (`additionalProperties: false` unless the shape sets it).

use super::SchemaError;
use crate::json::pointer::push_segment;
use serde_json::{Map, Number, Value};

/// Schema versions of the lightweight shapes toolschema reads, oldest first.
pub const SCHEMA_VERSIONS: &[&str] = &["2025-10-09"];

/// Keywords that constrain a single value; on an array property they move to `items`.
const ELEMENT_KEYWORDS: &[&str] = &[
    "minLength",
    "maxLength",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
    "pattern",
    "format",
    "enum",
    "const",
];

const LIGHTWEIGHT_TYPES: &str = "string, integer, float, number, boolean, enum, array";

/// Whether a property definition uses a feature only the lightweight shapes have.
pub(crate) fn is_lightweight_property(property: &Value) -> bool {
    let Some(p) = property.as_object() else {
        return false;
    };
    matches!(
        p.get("type").and_then(Value::as_str),
        Some("float" | "enum")
    ) || p.contains_key("isArray")
        || p.get("required").is_some_and(Value::is_boolean)
        || p.get("items").is_some_and(is_lightweight_property)
}

/// Check a top-level `schemaVersion`: a YYYY-MM-DD date naming a supported version.
pub(crate) fn check_schema_version(version: &Value) -> Result<(), SchemaError> {
    let text = version.as_str().unwrap_or_default();
    let well_formed = text.len() == 10
        && text.bytes().enumerate().all(|(i, b)| match i {
            4 | 7 => b == b'-',
            _ => b.is_ascii_digit(),
        });
    if !well_formed {
        return Err(SchemaError::Shape {
            pointer: "/schemaVersion".into(),
            message: format!("schemaVersion must be a date like 2025-10-09 (got {version})"),
        });
    }
    if !SCHEMA_VERSIONS.contains(&text) {
        return Err(SchemaError::UnsupportedSchemaVersion {
            version: text.to_string(),
        });
    }
    Ok(())
}

/// Translate a lightweight shape to a standard JSON Schema object schema.
///
/// `properties` is the map of argument name to property; `root` holds the other top-level keys of
/// the JSON-Schema-like shape (kept, after `type`, `properties` and `required`).
pub(crate) fn to_standard(
    properties: &Map<String, Value>,
    properties_pointer: &str,
    root: Option<&Map<String, Value>>,
) -> Result<Value, SchemaError> {
    let mut required: Vec<Value> = Vec::new();
    if let Some(list) = root.and_then(|r| r.get("required")) {
        let Some(names) = list.as_array().filter(|l| l.iter().all(Value::is_string)) else {
            return Err(SchemaError::Shape {
                pointer: "/required".into(),
                message: "required must be an array of argument names".into(),
            });
        };
        for name in names {
            if !required.contains(name) {
                required.push(name.clone());
            }
        }
    }
    let mut converted = Map::new();
    for (name, property) in properties {
        let pointer = push_segment(properties_pointer, name);
        let (schema, is_required) = convert_property(name, property, &pointer)?;
        if is_required && !required.iter().any(|r| r == name.as_str()) {
            required.push(Value::String(name.clone()));
        }
        converted.insert(name.clone(), schema);
    }
    let mut out = Map::new();
    out.insert("type".into(), Value::String("object".into()));
    out.insert("properties".into(), Value::Object(converted));
    if !required.is_empty() {
        out.insert("required".into(), Value::Array(required));
    }
    if let Some(root) = root {
        for (key, value) in root {
            if !matches!(
                key.as_str(),
                "type" | "properties" | "required" | "schemaVersion"
            ) {
                out.insert(key.clone(), value.clone());
            }
        }
    }
    if !out.contains_key("additionalProperties") && !out.contains_key("unevaluatedProperties") {
        out.insert("additionalProperties".into(), Value::Bool(false));
    }
    Ok(Value::Object(out))
}

fn shape_error(pointer: &str, name: &str, message: impl std::fmt::Display) -> SchemaError {
    SchemaError::Shape {
        pointer: pointer.to_string(),
        message: format!("argument '{name}': {message}"),
    }
}

/// Convert one property; returns its standard schema and whether it is required.
fn convert_property(
    name: &str,
    property: &Value,
    pointer: &str,
) -> Result<(Value, bool), SchemaError> {
    let Some(fields) = property.as_object() else {
        // `true`/`false` schemas are standard and pass through.
        if property.is_boolean() {
            return Ok((property.clone(), false));
        }
        return Err(shape_error(
            pointer,
            name,
            "a property must be a JSON object",
        ));
    };
    let mut fields = fields.clone();
    let required = match fields.get("required") {
        Some(Value::Bool(b)) => {
            let b = *b;
            fields.shift_remove("required");
            b
        }
        None | Some(Value::Array(_)) => false,
        Some(_) => {
            return Err(shape_error(
                &push_segment(pointer, "required"),
                name,
                "required must be true or false",
            ))
        }
    };
    Ok((convert_value_schema(name, fields, pointer)?, required))
}

/// Convert a property or `items` schema (without its `required` flag).
fn convert_value_schema(
    name: &str,
    mut fields: Map<String, Value>,
    pointer: &str,
) -> Result<Value, SchemaError> {
    let is_array = match fields.shift_remove("isArray") {
        None => false,
        Some(Value::Bool(b)) => b,
        Some(_) => {
            return Err(shape_error(
                &push_segment(pointer, "isArray"),
                name,
                "isArray must be true or false",
            ))
        }
    };
    let declared = match fields.get("type") {
        None => None,
        Some(Value::String(t)) => Some(t.clone()),
        // A standard type list passes through.
        Some(Value::Array(_)) => None,
        Some(other) => {
            return Err(shape_error(
                &push_segment(pointer, "type"),
                name,
                format!("type must be one of {LIGHTWEIGHT_TYPES} (got {other})"),
            ))
        }
    };
    match declared.as_deref() {
        None | Some("string" | "integer" | "number" | "boolean" | "object" | "null") => {}
        Some("float") => {
            fields.insert("type".into(), Value::String("number".into()));
        }
        Some("enum") => {
            if !fields.get("enum").is_some_and(Value::is_array) {
                return Err(shape_error(
                    pointer,
                    name,
                    "type \"enum\" needs an \"enum\" list of the allowed values",
                ));
            }
            fields.shift_remove("type");
        }
        Some("array") => return convert_array(name, fields, pointer),
        Some(other) => {
            return Err(shape_error(
                &push_segment(pointer, "type"),
                name,
                format!("type must be one of {LIGHTWEIGHT_TYPES} (got \"{other}\")"),
            ))
        }
    }
    if let Some(Value::Array(values)) = fields.get("enum") {
        let element_type = fields.get("type").and_then(Value::as_str);
        let expanded = expand_enum(values, element_type);
        fields.insert("enum".into(), Value::Array(expanded));
    }
    if is_array {
        return Ok(wrap_in_array(fields));
    }
    Ok(Value::Object(fields))
}

/// `type: "array"`: the element type comes from `items`, and per-value keywords on the array move
/// into `items`.
fn convert_array(
    name: &str,
    mut fields: Map<String, Value>,
    pointer: &str,
) -> Result<Value, SchemaError> {
    let mut items = match fields.shift_remove("items") {
        None => Map::new(),
        Some(Value::Object(items)) => items,
        Some(other) => {
            // A standard tuple or boolean `items` passes through untouched.
            fields.insert("items".into(), other);
            return Ok(Value::Object(fields));
        }
    };
    for key in ELEMENT_KEYWORDS {
        if let Some(value) = fields.shift_remove(*key) {
            items.entry(key.to_string()).or_insert(value);
        }
    }
    let items = convert_value_schema(name, items, &push_segment(pointer, "items"))?;
    fields.insert("items".into(), items);
    Ok(Value::Object(fields))
}

/// `isArray: true`: an array whose elements have the property's type and per-value keywords.
fn wrap_in_array(fields: Map<String, Value>) -> Value {
    let mut array = Map::new();
    array.insert("type".into(), Value::String("array".into()));
    let mut element = Map::new();
    let mut array_keys = Map::new();
    for (key, value) in fields {
        if key == "type" || ELEMENT_KEYWORDS.contains(&key.as_str()) {
            element.insert(key, value);
        } else {
            array_keys.insert(key, value);
        }
    }
    array.insert("items".into(), Value::Object(element));
    array.extend(array_keys);
    Value::Object(array)
}

/// The string form enum values compare by: a string is itself, a number its shortest decimal form
/// (`1.0` is `1`), booleans and null their literal.
pub fn string_form(value: &Value) -> Option<String> {
    match value {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(number_string_form(n)),
        Value::Bool(b) => Some(b.to_string()),
        Value::Null => Some("null".into()),
        Value::Array(_) | Value::Object(_) => None,
    }
}

fn number_string_form(n: &Number) -> String {
    if let Some(u) = n.as_u64() {
        return u.to_string();
    }
    if let Some(i) = n.as_i64() {
        return i.to_string();
    }
    let f = n.as_f64().unwrap_or(f64::NAN);
    if f.fract() == 0.0 && f.abs() < 9.0e15 {
        format!("{}", f as i64)
    } else {
        format!("{f}")
    }
}

/// Every JSON value whose string form equals one of `values`' string forms, limited to the
/// element type when there is one. Standard JSON Schema compares enum values strictly, so the
/// lightweight string-form comparison is spelled out as the list of values it accepts.
fn expand_enum(values: &[Value], element_type: Option<&str>) -> Vec<Value> {
    let mut out: Vec<Value> = Vec::new();
    let mut push = |candidate: Value| {
        let fits = match element_type {
            None => true,
            Some("string") => candidate.is_string(),
            Some("integer") => candidate.as_f64().is_some_and(|f| f.fract() == 0.0),
            Some("number") => candidate.is_number(),
            Some("boolean") => candidate.is_boolean(),
            Some("null") => candidate.is_null(),
            Some(_) => true,
        };
        if fits && !out.iter().any(|v| json_schema_equal(v, &candidate)) {
            out.push(candidate);
        }
    };
    for value in values {
        let Some(form) = string_form(value) else {
            push(value.clone());
            continue;
        };
        push(value.clone());
        match value {
            Value::String(_) => {}
            _ => push(Value::String(form.clone())),
        }
        if let Ok(number) = serde_json::from_str::<Number>(&form) {
            if number_string_form(&number) == form {
                push(Value::Number(number));
            }
        }
        match form.as_str() {
            "true" => push(Value::Bool(true)),
            "false" => push(Value::Bool(false)),
            "null" => push(Value::Null),
            _ => {}
        }
    }
    out
}

/// Equality as JSON Schema's `enum` sees it: numbers compare by value (`2` equals `2.0`).
fn json_schema_equal(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => match (x.as_i64(), y.as_i64()) {
            (Some(i), Some(j)) => i == j,
            _ => x.as_f64() == y.as_f64(),
        },
        _ => a == b,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn convert(props: Value) -> Value {
        to_standard(props.as_object().unwrap(), "", None).unwrap()
    }

    #[test]
    fn direct_map_from_the_issue() {
        let out = convert(json!({
            "q": {"type": "string", "required": true, "minLength": 3},
            "tags": {"type": "string", "isArray": true, "minLength": 2},
            "mode": {"type": "enum", "enum": ["fast", "accurate"]}
        }));
        assert_eq!(
            out,
            json!({
                "type": "object",
                "properties": {
                    "q": {"type": "string", "minLength": 3},
                    "tags": {"type": "array", "items": {"type": "string", "minLength": 2}},
                    "mode": {"enum": ["fast", "accurate"]}
                },
                "required": ["q"],
                "additionalProperties": false
            })
        );
    }

    #[test]
    fn float_is_number_and_array_takes_items_type() {
        let out = convert(json!({
            "ratio": {"type": "float", "minimum": 0, "description": "r"},
            "ids": {"type": "array", "items": {"type": "integer"}, "minimum": 1, "maxItems": 5},
            "weights": {"type": "array", "items": {"type": "float", "maximum": 1}}
        }));
        assert_eq!(
            out["properties"],
            json!({
                "ratio": {"type": "number", "minimum": 0, "description": "r"},
                "ids": {"type": "array", "maxItems": 5, "items": {"type": "integer", "minimum": 1}},
                "weights": {"type": "array", "items": {"type": "number", "maximum": 1}}
            })
        );
    }

    #[test]
    fn enum_compares_by_string_form() {
        let out = convert(json!({
            "level": {"type": "enum", "enum": [1, "2", true]},
            "size": {"type": "integer", "enum": ["1", 2.0]},
            "name": {"type": "string", "enum": [1]}
        }));
        assert_eq!(
            out["properties"]["level"]["enum"],
            json!([1, "1", "2", 2, true, "true"])
        );
        assert_eq!(out["properties"]["size"]["enum"], json!([1, 2.0]));
        assert_eq!(out["properties"]["name"]["enum"], json!(["1"]));
    }

    #[test]
    fn string_forms() {
        assert_eq!(string_form(&json!(1.0)).unwrap(), "1");
        assert_eq!(string_form(&json!(1)).unwrap(), "1");
        assert_eq!(string_form(&json!("1")).unwrap(), "1");
        assert_eq!(string_form(&json!(1.5)).unwrap(), "1.5");
        assert_eq!(string_form(&json!(-3)).unwrap(), "-3");
        assert_eq!(string_form(&json!([1])), None);
    }

    #[test]
    fn required_from_both_places() {
        let root = json!({"required": ["b"], "description": "d"});
        let out = to_standard(
            json!({"a": {"type": "string", "required": true}, "b": {"type": "string"}})
                .as_object()
                .unwrap(),
            "/properties",
            root.as_object(),
        )
        .unwrap();
        assert_eq!(out["required"], json!(["b", "a"]));
        assert_eq!(out["description"], "d");
    }

    #[test]
    fn shape_errors_point_at_the_property() {
        let err = |props: Value| {
            to_standard(props.as_object().unwrap(), "/properties", None)
                .unwrap_err()
                .to_string()
        };
        assert_eq!(
            err(json!({"q": {"type": "str"}})),
            "/properties/q/type: argument 'q': type must be one of string, integer, float, number, boolean, enum, array (got \"str\")"
        );
        assert_eq!(
            err(json!({"m": {"type": "enum"}})),
            "/properties/m: argument 'm': type \"enum\" needs an \"enum\" list of the allowed values"
        );
        assert_eq!(
            err(json!({"q": {"type": "string", "required": "yes"}})),
            "/properties/q/required: argument 'q': required must be true or false"
        );
        assert_eq!(
            err(json!({"q": 3})),
            "/properties/q: argument 'q': a property must be a JSON object"
        );
    }

    #[test]
    fn schema_versions() {
        assert!(check_schema_version(&json!("2025-10-09")).is_ok());
        assert_eq!(
            check_schema_version(&json!("2024-01-01"))
                .unwrap_err()
                .to_string(),
            "unsupported schemaVersion '2024-01-01': supported versions are 2025-10-09"
        );
        assert_eq!(
            check_schema_version(&json!("v1")).unwrap_err().to_string(),
            "/schemaVersion: schemaVersion must be a date like 2025-10-09 (got \"v1\")"
        );
    }
}
