//! Text the model reads that arrives with something new: an argument, a branch, a
//! `patternProperties` entry, an output field, a whole `outputSchema`. The change that brings the
//! subschema says what it accepts; its text (descriptions, titles, other annotations, `enum` and
//! `const` values) is reported apart, as security changes, the way a change of that text on an
//! existing schema is: a new argument is a place to hide instructions for the model as much as a
//! changed description is.

use super::schema::{holds_text, is_annotation, join, shown, SchemaDiff};
use super::{ChangeClass, ChangeCode};
use crate::json::pointer::push_segment;
use crate::json::MAX_DEPTH;
use crate::schema::references::{
    IN_PLACE_LISTS, IN_PLACE_MAPS, IN_PLACE_SINGLE, NESTED_LISTS, NESTED_MAPS, NESTED_SINGLE,
};
use serde_json::Value;

impl SchemaDiff<'_> {
    /// Report the text in `schema`, a new subschema at `at` describing the argument (or output
    /// field) at `path`, and in every subschema below it.
    pub(super) fn new_text(&mut self, schema: &Value, at: &str, path: &str, depth: usize) {
        let Value::Object(map) = schema else {
            return;
        };
        for (key, value) in map {
            self.new_keyword_text(key, value, &push_segment(at, key), path, depth);
        }
    }

    /// Report the text in the keyword `key` of a new subschema, its value `value` at `at`.
    pub(super) fn new_keyword_text(
        &mut self,
        key: &str,
        value: &Value,
        at: &str,
        path: &str,
        depth: usize,
    ) {
        if depth > MAX_DEPTH {
            // Not read below here: said, never dropped in silence.
            let message = format!(
                "{key} of {} holds text nested too deeply to show",
                self.subject(path)
            );
            return self.push_class(
                ChangeCode::SchemaAnnotationChanged,
                ChangeClass::Security,
                at,
                message,
                None,
                Some(value),
            );
        }
        let depth = depth + 1;
        match key {
            "description" | "title" => self.text_changed(key, None, Some(value), at, path),
            _ if is_annotation(key) => self.annotation_changed(key, None, Some(value), at, path),
            "enum" | "const" if holds_text(value) => {
                let message = format!("{key} {} added to {}", shown(value), self.subject(path));
                self.push_class(
                    ChangeCode::EnumValueAdded,
                    ChangeClass::Security,
                    at,
                    message,
                    None,
                    Some(value),
                );
            }
            _ if NESTED_MAPS.contains(&key) || IN_PLACE_MAPS.contains(&key) => {
                for (name, schema) in value.as_object().into_iter().flatten() {
                    let member_path = if key == "properties" {
                        join(path, name)
                    } else {
                        path.to_string()
                    };
                    self.new_text(schema, &push_segment(at, name), &member_path, depth);
                }
            }
            _ if value.is_array()
                && (IN_PLACE_LISTS.contains(&key) || NESTED_LISTS.contains(&key)) =>
            {
                for (i, schema) in value.as_array().into_iter().flatten().enumerate() {
                    let item_path = if IN_PLACE_LISTS.contains(&key) {
                        path.to_string()
                    } else {
                        format!("{path}[{i}]")
                    };
                    self.new_text(schema, &format!("{at}/{i}"), &item_path, depth);
                }
            }
            _ if IN_PLACE_SINGLE.contains(&key) => self.new_text(value, at, path, depth),
            _ if NESTED_SINGLE.contains(&key) => {
                let nested = match key {
                    "additionalProperties" | "unevaluatedProperties" => join(path, "*"),
                    "propertyNames" | "contentSchema" => path.to_string(),
                    _ => join(path, "[]"),
                };
                self.new_text(value, at, &nested, depth);
            }
            _ => {}
        }
    }
}
