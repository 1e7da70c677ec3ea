//! Size limits of an adapted schema (OpenAI strict mode documents them).

use super::profile::Limits;
use super::transform::Refusal;
use crate::json::pointer::push_segment;
use crate::schema::is_object_schema;
use serde_json::{Map, Value};

/// What the limits count in one schema.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct Size {
    pub properties: usize,
    pub depth: usize,
    pub enum_values: usize,
    pub string_length: usize,
}

/// Keywords whose value is one subschema a level deeper in the value.
const NESTED: &[&str] = &["items", "additionalProperties", "contains", "not"];
/// Keywords whose value is a list of subschemas at the same level.
const SAME_LEVEL_LISTS: &[&str] = &["anyOf", "allOf", "oneOf"];

/// Measure `schema` (an adapted schema). `$defs` entries count as schemas of their own: their
/// nesting starts again at their root, as the provider counts them.
pub(crate) fn measure(
    schema: &Value,
    oversized_enum: &mut Option<(String, usize, usize)>,
    large: usize,
) -> Size {
    let mut size = Size::default();
    // (schema, pointer, object levels above it)
    let mut stack: Vec<(&Value, String, usize)> = vec![(schema, String::new(), 0)];
    while let Some((value, pointer, level)) = stack.pop() {
        let Value::Object(map) = value else { continue };
        let level = if is_object_schema(map) {
            level + 1
        } else {
            level
        };
        size.depth = size.depth.max(level);
        count_strings(map, &pointer, &mut size, oversized_enum, large);
        if let Some(Value::Object(properties)) = map.get("properties") {
            size.properties += properties.len();
            for (name, sub) in properties {
                size.string_length += name.chars().count();
                stack.push((
                    sub,
                    push_segment(&push_segment(&pointer, "properties"), name),
                    level,
                ));
            }
        }
        if let Some(Value::Object(defs)) = map.get("$defs") {
            for (name, sub) in defs {
                size.string_length += name.chars().count();
                stack.push((sub, push_segment(&push_segment(&pointer, "$defs"), name), 0));
            }
        }
        for key in NESTED {
            if let Some(sub) = map.get(*key) {
                stack.push((sub, format!("{pointer}/{key}"), level));
            }
        }
        for key in SAME_LEVEL_LISTS.iter().chain(["prefixItems"].iter()) {
            if let Some(Value::Array(list)) = map.get(*key) {
                for (i, sub) in list.iter().enumerate() {
                    stack.push((sub, format!("{pointer}/{key}/{i}"), level));
                }
            }
        }
    }
    size
}

fn count_strings(
    map: &Map<String, Value>,
    pointer: &str,
    size: &mut Size,
    oversized_enum: &mut Option<(String, usize, usize)>,
    large: usize,
) {
    if let Some(Value::Array(values)) = map.get("enum") {
        size.enum_values += values.len();
        let chars: usize = values
            .iter()
            .filter_map(Value::as_str)
            .map(|s| s.chars().count())
            .sum();
        size.string_length += chars;
        if values.len() > large && oversized_enum.as_ref().is_none_or(|(_, _, c)| chars > *c) {
            *oversized_enum = Some((pointer.to_string(), values.len(), chars));
        }
    }
    if let Some(Value::String(s)) = map.get("const") {
        size.string_length += s.chars().count();
    }
}

/// Refuse a schema over `limits` (`source` says where they are written).
pub(crate) fn check(schema: &Value, limits: &Limits, source: &str) -> Result<(), Refusal> {
    let mut largest_enum = None;
    let size = measure(schema, &mut largest_enum, limits.large_enum);
    let over = |what: String| {
        Err(Refusal {
            pointer: String::new(),
            message: format!("{what} (source: {source})"),
        })
    };
    if size.properties > limits.properties {
        return over(format!(
            "the schema has {} object properties; the provider accepts at most {}",
            size.properties, limits.properties
        ));
    }
    if size.depth > limits.depth {
        return over(format!(
            "the schema nests objects {} levels deep; the provider accepts at most {}",
            size.depth, limits.depth
        ));
    }
    if size.enum_values > limits.enum_values {
        return over(format!(
            "the schema has {} enum values; the provider accepts at most {}",
            size.enum_values, limits.enum_values
        ));
    }
    if size.string_length > limits.total_string_length {
        return over(format!(
            "property names, definition names, enum and const values add up to {} characters; \
             the provider accepts at most {}",
            size.string_length, limits.total_string_length
        ));
    }
    if let Some((pointer, values, chars)) = largest_enum {
        if chars > limits.large_enum_string_length {
            return Err(Refusal {
                pointer,
                message: format!(
                    "this enum has {values} values of {chars} characters in all; over {} values \
                     the provider accepts at most {} characters (source: {source})",
                    limits.large_enum, limits.large_enum_string_length
                ),
            });
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn counts_properties_levels_enums_and_strings() {
        let schema = json!({
            "type": "object",
            "properties": {
                "a": {"type": "object", "properties": {"bb": {"type": "string", "enum": ["x", "yy"]}}},
                "c": {"type": "array", "items": {"type": "object", "properties": {"d": {"const": "zzz"}}}},
                "e": {"$ref": "#/$defs/node"}
            },
            "$defs": {"node": {"type": "object", "properties": {"f": {"type": "integer"}}}}
        });
        let size = measure(&schema, &mut None, 250);
        assert_eq!(
            size,
            Size {
                properties: 6,
                depth: 2,
                enum_values: 2,
                // a bb c d e node f + x yy + zzz
                string_length: 1 + 2 + 1 + 1 + 1 + 4 + 1 + 3 + 3,
            }
        );
    }

    #[test]
    fn refuses_what_is_over() {
        let limits = Limits {
            properties: 2,
            depth: 10,
            enum_values: 1000,
            total_string_length: 100,
            large_enum: 2,
            large_enum_string_length: 5,
        };
        let three = json!({"type": "object", "properties": {"a": {}, "b": {}, "c": {}}});
        let refusal = check(&three, &limits, "docs").unwrap_err();
        assert_eq!(
            refusal.message,
            "the schema has 3 object properties; the provider accepts at most 2 (source: docs)"
        );
        let big_enum = json!({"type": "object", "properties": {"a": {"enum": ["aa", "bb", "cc"]}}});
        let refusal = check(&big_enum, &limits, "docs").unwrap_err();
        assert_eq!(refusal.pointer, "/properties/a");
    }
}
