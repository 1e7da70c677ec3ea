//! Whether a value written in a schema (an `enum` member, a `default`) satisfies the schema it
//! sits in, checked by hand on the keywords that constrain one value.
//!
//! Compiling a validator per property would cost microseconds each, a lot across thousands of
//! tools; these checks cost nanoseconds. Keywords they do not read (`$ref`, `allOf`, `if`, ...)
//! are taken as satisfied, so a finding is always real.

use super::context::RunCache;
use crate::json::{as_count, same_value, Members};
use crate::schema::{admits_type, compile_pattern, value_type};
use serde_json::{Map, Number, Value};

/// Deepest value the check follows into arrays and objects.
const MAX_DEPTH: usize = 32;

/// Keywords to leave out when checking a value against the schema it belongs to.
#[derive(Clone, Copy)]
pub(crate) struct Skip<'k>(pub &'k [&'k str]);

/// Why `value` does not satisfy `schema`, if it does not.
pub(crate) fn misfit(
    value: &Value,
    schema: &Map<String, Value>,
    skip: Skip<'_>,
    cache: &RunCache,
) -> Option<String> {
    check(value, schema, skip, cache, 0)
}

fn check(
    value: &Value,
    schema: &Map<String, Value>,
    skip: Skip<'_>,
    cache: &RunCache,
    depth: usize,
) -> Option<String> {
    if depth > MAX_DEPTH {
        return None;
    }
    let has = |key: &str| !skip.0.contains(&key);
    let get = |key: &str| if has(key) { schema.member(key) } else { None };
    if has("type") && schema.member("type").is_some() {
        let type_name = value_type(value).name();
        if admits_type(schema, type_name) == Some(false)
            && !(type_name == "integer" && admits_type(schema, "number") == Some(true))
        {
            return Some(format!(
                "is {}, not {}",
                describe_type(type_name),
                expected_types(&schema["type"])
            ));
        }
    }
    if let Some(Value::Array(allowed)) = get("enum") {
        if !allowed.iter().any(|a| same_value(a, value)) {
            return Some("is not one of the enum values".into());
        }
    }
    if let Some(constant) = get("const") {
        if !same_value(constant, value) {
            return Some(format!("is not the const value {constant}"));
        }
    }
    match value {
        Value::Number(n) => check_number(n, &get),
        Value::String(s) => check_string(s, &get, cache),
        Value::Array(items) => check_array(items, &get, cache, depth),
        Value::Object(map) => check_object(map, &get, cache, depth),
        _ => None,
    }
}

fn check_number<'s>(n: &Number, get: &impl Fn(&str) -> Option<&'s Value>) -> Option<String> {
    let x = n.as_f64()?;
    let bound = |key: &str| get(key).and_then(Value::as_f64);
    if let Some(min) = bound("minimum").filter(|m| x < *m) {
        return Some(format!("is less than minimum {}", fmt_number(min)));
    }
    if let Some(max) = bound("maximum").filter(|m| x > *m) {
        return Some(format!("is greater than maximum {}", fmt_number(max)));
    }
    if let Some(min) = bound("exclusiveMinimum").filter(|m| x <= *m) {
        return Some(format!(
            "is not greater than exclusiveMinimum {}",
            fmt_number(min)
        ));
    }
    if let Some(max) = bound("exclusiveMaximum").filter(|m| x >= *m) {
        return Some(format!(
            "is not less than exclusiveMaximum {}",
            fmt_number(max)
        ));
    }
    if let Some(step) = bound("multipleOf").filter(|m| *m > 0.0) {
        let quotient = x / step;
        if quotient.is_finite() && (quotient - quotient.round()).abs() > 1e-9 {
            return Some(format!("is not a multiple of {}", fmt_number(step)));
        }
    }
    None
}

fn check_string<'s>(
    s: &str,
    get: &impl Fn(&str) -> Option<&'s Value>,
    cache: &RunCache,
) -> Option<String> {
    let length = || s.chars().count() as u64;
    if let Some(min) = get("minLength").and_then(as_count) {
        if length() < min {
            return Some(format!("is shorter than minLength {min}"));
        }
    }
    if let Some(max) = get("maxLength").and_then(as_count) {
        if length() > max {
            return Some(format!("is longer than maxLength {max}"));
        }
    }
    if let Some(pattern) = get("pattern").and_then(Value::as_str) {
        if !matches_pattern(s, pattern, cache) {
            return Some(format!("does not match pattern {}", Value::from(pattern)));
        }
    }
    None
}

/// Whether `s` matches `pattern` as the validation engine reads it (ECMA-262 regular
/// expressions). A pattern the engine refuses counts as matching: SCH-007 reports it.
pub(crate) fn matches_pattern(s: &str, pattern: &str, cache: &RunCache) -> bool {
    let mut patterns = cache.patterns.borrow_mut();
    let validator = patterns
        .entry(pattern.to_string())
        .or_insert_with(|| compile_pattern(pattern));
    validator
        .as_ref()
        .is_none_or(|v| v.is_valid(&Value::String(s.to_string())))
}

fn check_array<'s>(
    items: &[Value],
    get: &impl Fn(&str) -> Option<&'s Value>,
    cache: &RunCache,
    depth: usize,
) -> Option<String> {
    let count = items.len() as u64;
    if let Some(min) = get("minItems").and_then(as_count).filter(|m| count < *m) {
        return Some(format!("has fewer items than minItems {min}"));
    }
    if let Some(max) = get("maxItems").and_then(as_count).filter(|m| count > *m) {
        return Some(format!("has more items than maxItems {max}"));
    }
    if get("uniqueItems") == Some(&Value::Bool(true)) {
        for (i, a) in items.iter().enumerate() {
            if items[..i].iter().any(|b| same_value(a, b)) {
                return Some(format!("repeats item {a} (uniqueItems)"));
            }
        }
    }
    let no_skip = Skip(&[]);
    let prefix = get("prefixItems").and_then(Value::as_array);
    let prefix_len = prefix.map_or(0, Vec::len);
    for (i, item) in items.iter().enumerate() {
        let schema = match prefix.and_then(|p| p.get(i)) {
            Some(s) => Some(s),
            None if i >= prefix_len => get("items"),
            None => None,
        };
        if let Some(Value::Object(item_schema)) = schema {
            if let Some(reason) = check(item, item_schema, no_skip, cache, depth + 1) {
                return Some(format!("item {i} {reason}"));
            }
        }
    }
    None
}

fn check_object<'s>(
    map: &Map<String, Value>,
    get: &impl Fn(&str) -> Option<&'s Value>,
    cache: &RunCache,
    depth: usize,
) -> Option<String> {
    if let Some(Value::Array(required)) = get("required") {
        if let Some(missing) = required
            .iter()
            .filter_map(Value::as_str)
            .find(|name| !map.contains_key(*name))
        {
            return Some(format!("lacks required property '{missing}'"));
        }
    }
    let count = map.len() as u64;
    if let Some(min) = get("minProperties")
        .and_then(as_count)
        .filter(|m| count < *m)
    {
        return Some(format!("has fewer properties than minProperties {min}"));
    }
    if let Some(max) = get("maxProperties")
        .and_then(as_count)
        .filter(|m| count > *m)
    {
        return Some(format!("has more properties than maxProperties {max}"));
    }
    let properties = get("properties").and_then(Value::as_object);
    let closed = get("additionalProperties") == Some(&Value::Bool(false))
        && get("patternProperties").is_none();
    for (name, member) in map {
        match properties.and_then(|p| p.member(name)) {
            Some(Value::Object(schema)) => {
                if let Some(reason) = check(member, schema, Skip(&[]), cache, depth + 1) {
                    return Some(format!("property '{name}' {reason}"));
                }
            }
            Some(_) => {}
            None if closed => return Some(format!("has property '{name}', which is not declared")),
            None => {}
        }
    }
    None
}

fn describe_type(name: &str) -> String {
    match name {
        "integer" | "number" => "a number".into(),
        "null" => "null".into(),
        "array" | "object" => format!("an {name}"),
        other => format!("a {other}"),
    }
}

fn expected_types(types: &Value) -> String {
    match types {
        Value::String(t) => format!("type \"{t}\""),
        other => format!("any of the types {other}"),
    }
}

fn fmt_number(x: f64) -> String {
    Value::from(x)
        .as_f64()
        .map(|f| {
            if f.fract() == 0.0 && f.abs() < 1e15 {
                format!("{}", f as i64)
            } else {
                format!("{f}")
            }
        })
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn why(value: Value, schema: Value) -> Option<String> {
        misfit(
            &value,
            schema.as_object().unwrap(),
            Skip(&[]),
            &RunCache::default(),
        )
    }

    #[test]
    fn finds_what_does_not_fit() {
        assert_eq!(
            why(json!(5), json!({"type": "integer", "maximum": 3})).unwrap(),
            "is greater than maximum 3"
        );
        assert_eq!(
            why(json!("x"), json!({"type": "integer"})).unwrap(),
            "is a string, not type \"integer\""
        );
        assert_eq!(why(json!(1.0), json!({"type": "integer"})), None);
        assert_eq!(why(json!(2), json!({"type": "number"})), None);
        assert_eq!(why(json!(null), json!({"type": ["string", "null"]})), None);
        assert_eq!(
            why(json!("abcd"), json!({"maxLength": 3})).unwrap(),
            "is longer than maxLength 3"
        );
        assert_eq!(why(json!("é"), json!({"maxLength": 1})), None);
        assert_eq!(
            why(json!("b"), json!({"enum": ["a"]})).unwrap(),
            "is not one of the enum values"
        );
        assert_eq!(
            why(json!("ab"), json!({"pattern": "^a$"})).unwrap(),
            "does not match pattern \"^a$\""
        );
        assert_eq!(why(json!("a"), json!({"pattern": "^a$"})), None);
        assert_eq!(why(json!(0.3), json!({"multipleOf": 0.1})), None);
        assert_eq!(
            why(json!(0.35), json!({"multipleOf": 0.1})).unwrap(),
            "is not a multiple of 0.1"
        );
        assert_eq!(
            why(json!([1, "x"]), json!({"items": {"type": "integer"}})).unwrap(),
            "item 1 is a string, not type \"integer\""
        );
        assert_eq!(
            why(
                json!({"a": 1}),
                json!({"properties": {"b": {}}, "additionalProperties": false})
            )
            .unwrap(),
            "has property 'a', which is not declared"
        );
        assert_eq!(
            why(json!([1, 1.0]), json!({"uniqueItems": true})).unwrap(),
            "repeats item 1.0 (uniqueItems)"
        );
        // Keywords the check does not read are taken as satisfied.
        assert_eq!(
            why(
                json!(1),
                json!({"$ref": "#/x", "allOf": [{"type": "string"}]})
            ),
            None
        );
    }

    #[test]
    fn counts_are_read_by_value() {
        // The validator reads `3.0` as 3.
        assert_eq!(
            why(json!("abcd"), json!({"maxLength": 3.0})).unwrap(),
            "is longer than maxLength 3"
        );
        assert_eq!(
            why(json!({"a": 1}), json!({"minProperties": 2.0})).unwrap(),
            "has fewer properties than minProperties 2"
        );
        assert_eq!(
            why(json!([1, 2]), json!({"maxItems": 1.0})).unwrap(),
            "has more items than maxItems 1"
        );
    }

    #[test]
    fn skipped_keywords_are_not_read() {
        let schema = json!({"type": "string", "enum": ["a"]});
        let value = json!("b");
        assert!(misfit(
            &value,
            schema.as_object().unwrap(),
            Skip(&["enum"]),
            &RunCache::default()
        )
        .is_none());
    }
}
