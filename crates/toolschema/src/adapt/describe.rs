//! Constraints in plain words, for the description of a schema whose provider cannot enforce
//! them: the model still reads them.

use serde_json::Value;

/// A value as a model reads it: strings quoted, everything else as JSON.
pub(crate) fn shown(value: &Value) -> String {
    match value {
        Value::String(s) => format!("\"{s}\""),
        other => other.to_string(),
    }
}

fn shown_list(values: &[Value]) -> String {
    values.iter().map(shown).collect::<Vec<_>>().join(", ")
}

fn count(value: &Value, one: &str, many: &str) -> Option<String> {
    let n = crate::json::as_count(value)?;
    Some(format!("{n} {}", crate::text::noun(n, one, many)))
}

/// The sentence that states `keyword: value`, or `None` when the keyword is not a constraint a
/// sentence can carry (annotations for tools, identifiers, subschemas in general).
pub(crate) fn sentence(keyword: &str, value: &Value) -> Option<String> {
    let text = match keyword {
        "minLength" => format!("At least {}.", count(value, "character", "characters")?),
        "maxLength" => format!("At most {}.", count(value, "character", "characters")?),
        "pattern" => format!("Must match the regular expression {}.", shown(value)),
        "format" => format!("Format: {}.", value.as_str()?),
        "minimum" => format!("At least {value}."),
        "maximum" => format!("At most {value}."),
        "exclusiveMinimum" if value.is_number() => format!("Greater than {value}."),
        "exclusiveMaximum" if value.is_number() => format!("Less than {value}."),
        "multipleOf" => format!("A multiple of {value}."),
        "minItems" => format!("At least {}.", count(value, "item", "items")?),
        "maxItems" => format!("At most {}.", count(value, "item", "items")?),
        "uniqueItems" if value == &Value::Bool(true) => "Items must be unique.".to_string(),
        "minProperties" => format!("At least {}.", count(value, "property", "properties")?),
        "maxProperties" => format!("At most {}.", count(value, "property", "properties")?),
        "const" => format!("Must be {}.", shown(value)),
        "enum" => format!("One of: {}.", shown_list(value.as_array()?)),
        "default" => format!("Default: {}.", shown(value)),
        "examples" => format!("Examples: {}.", shown_list(value.as_array()?)),
        "example" => format!("Example: {}.", shown(value)),
        "title" => {
            let title = value.as_str()?.trim();
            if title.is_empty() {
                return None;
            }
            if title.ends_with(['.', '!', '?']) {
                title.to_string()
            } else {
                format!("{title}.")
            }
        }
        "deprecated" if value == &Value::Bool(true) => "Deprecated.".to_string(),
        "dependentRequired" => {
            let map = value.as_object()?;
            let parts: Vec<String> = map
                .iter()
                .filter_map(|(name, needs)| {
                    let needs: Vec<String> = needs
                        .as_array()?
                        .iter()
                        .filter_map(Value::as_str)
                        .map(|n| format!("'{n}'"))
                        .collect();
                    Some(format!(
                        "When '{name}' is given, {} must be given too.",
                        needs.join(", ")
                    ))
                })
                .collect();
            if parts.is_empty() {
                return None;
            }
            parts.join(" ")
        }
        "contentMediaType" => format!("Media type: {}.", value.as_str()?),
        "contentEncoding" => format!("Encoding: {}.", value.as_str()?),
        // Subschemas a model can still read as JSON.
        "not" => format!("Must not match the schema {value}."),
        "contains" => format!("At least one item must match the schema {value}."),
        "propertyNames" => format!("Property names must match the schema {value}."),
        "patternProperties" => {
            let map = value.as_object()?;
            let parts: Vec<String> = map
                .iter()
                .map(|(pattern, schema)| {
                    format!("Properties whose names match \"{pattern}\" take {schema}.")
                })
                .collect();
            parts.join(" ")
        }
        "additionalProperties" => format!("Other properties take {value}."),
        "minContains" => format!("At least {} matching items.", crate::json::as_count(value)?),
        "maxContains" => format!("At most {} matching items.", crate::json::as_count(value)?),
        _ => return None,
    };
    Some(text)
}

/// `description` with `sentences` after it.
pub(crate) fn append(description: Option<&str>, sentences: &[String]) -> String {
    let added = sentences.join(" ");
    match description.map(str::trim_end).filter(|d| !d.is_empty()) {
        None => added,
        Some(d) if d.ends_with(['.', '!', '?', ':']) => format!("{d} {added}"),
        Some(d) => format!("{d}. {added}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn constraints_in_words() {
        assert_eq!(
            sentence("maxLength", &json!(64)).unwrap(),
            "At most 64 characters."
        );
        assert_eq!(sentence("minItems", &json!(1)).unwrap(), "At least 1 item.");
        // A count written as a float is the same count.
        assert_eq!(
            sentence("maxLength", &json!(3.0)).unwrap(),
            "At most 3 characters."
        );
        assert_eq!(
            sentence("minContains", &json!(2.0)).unwrap(),
            "At least 2 matching items."
        );
        assert_eq!(
            sentence("enum", &json!(["a", 1, null])).unwrap(),
            "One of: \"a\", 1, null."
        );
        assert_eq!(sentence("format", &json!("uri")).unwrap(), "Format: uri.");
        assert_eq!(
            sentence("dependentRequired", &json!({"a": ["b", "c"]})).unwrap(),
            "When 'a' is given, 'b', 'c' must be given too."
        );
        assert_eq!(sentence("$comment", &json!("x")), None);
        assert_eq!(sentence("maxLength", &json!(-1)), None);
    }

    #[test]
    fn descriptions_grow_by_sentences() {
        let added = ["At most 3 items.".to_string()];
        assert_eq!(append(Some("Tags"), &added), "Tags. At most 3 items.");
        assert_eq!(append(Some("Tags."), &added), "Tags. At most 3 items.");
        assert_eq!(append(None, &added), "At most 3 items.");
        assert_eq!(append(Some("  "), &added), "At most 3 items.");
    }
}
