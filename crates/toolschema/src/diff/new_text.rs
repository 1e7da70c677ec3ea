//! Text the model reads that arrives with something new: an argument, a branch, a
//! `patternProperties` entry, an output field, a whole `outputSchema`. The change that brings the
//! subschema says what it accepts; its text is reported apart, as security changes, the way a
//! change of that text on an existing schema is: a new argument is a place to hide instructions
//! for the model as much as a changed description is. Text is every string the model reads:
//! descriptions, titles, other annotations, `enum` and `const` values, and the strings of
//! keywords that also validate: member names (`properties`, `patternProperties`,
//! `dependentSchemas` keys, names in `required`, `dependentRequired`, `dependencies`),
//! `pattern` and `format`. A name the old schema already mentioned at the same place is not new
//! text.

use super::schema::{holds_text, is_annotation, join, shown, SchemaDiff};
use super::{ChangeClass, ChangeCode};
use crate::json::pointer::push_segment;
use crate::json::MAX_DEPTH;
use crate::schema::vocabulary::{self, Holds, Under};
use crate::text::visible;
use serde_json::{Map, Value};
use std::collections::BTreeSet;

impl SchemaDiff<'_> {
    /// Report the text in `schema`, a new subschema at `at` describing the argument (or output
    /// field) at `path`, and in every subschema below it. `known` holds the member names the old
    /// schema mentioned at `path`'s instance location (empty for a new location): they are no
    /// new text.
    pub(super) fn new_text(
        &mut self,
        schema: &Value,
        at: &str,
        path: &str,
        depth: usize,
        known: &BTreeSet<String>,
    ) {
        let Value::Object(map) = schema else {
            return;
        };
        self.names_arrived(map, at, path, known, &mut BTreeSet::new());
        for (key, value) in map {
            self.new_keyword_text(key, value, &push_segment(at, key), path, depth, known);
        }
    }

    /// Report the text in the keyword `key` of a new subschema, its value `value` at `at`
    /// (member names apart: see [`SchemaDiff::names_arrived`]).
    pub(super) fn new_keyword_text(
        &mut self,
        key: &str,
        value: &Value,
        at: &str,
        path: &str,
        depth: usize,
        known: &BTreeSet<String>,
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
        // Subschemas at another instance location: what the old schema named here is no help.
        let elsewhere = BTreeSet::new();
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
            "pattern" | "format" => self.constraint_text_changed(key, None, Some(value), at, path),
            _ => {
                for sub in vocabulary::subschemas_of(key, value) {
                    let sub_path = match sub.under {
                        _ if sub.in_place => path.to_string(),
                        Some(Under::Member(name)) if key == "properties" => join(path, name),
                        Some(Under::Member(_)) => path.to_string(),
                        Some(Under::Index(i)) => format!("{path}[{i}]"),
                        None => match key {
                            "additionalProperties" | "unevaluatedProperties" => join(path, "*"),
                            "propertyNames" | "contentSchema" => path.to_string(),
                            _ => join(path, "[]"),
                        },
                    };
                    // `propertyNames` describes the names of the members here, not a member:
                    // its `enum`, `const` and `pattern` are reported as its text above.
                    let known = if sub.in_place { known } else { &elsewhere };
                    self.new_text(sub.value, &sub.place(at), &sub_path, depth, known);
                }
            }
        }
    }

    /// Report the member names `new`, an object schema at `at` describing `path`, brings that
    /// neither `known` nor `reported` holds: the keys of `properties`, `patternProperties`,
    /// `dependentSchemas` and `dependencies`, and the names in `required` and
    /// `dependentRequired` (and draft-07 `dependencies` lists). Each name is reported once, at
    /// the first keyword naming it, and added to `reported`.
    pub(super) fn names_arrived(
        &mut self,
        new: &Map<String, Value>,
        at: &str,
        path: &str,
        known: &BTreeSet<String>,
        reported: &mut BTreeSet<String>,
    ) {
        for (keyword, name, name_at) in mentioned_names(new, at) {
            if known.contains(name) || !reported.insert(name.to_string()) {
                continue;
            }
            let subject_path = if keyword == "properties" {
                join(path, name)
            } else {
                path.to_string()
            };
            let text = Value::String(name.to_string());
            // Arrived, not changed: said as an addition (the name written out, hidden
            // characters made visible by the subject or by `visible`).
            let message = if keyword == "properties" {
                format!(
                    "{} added: its name is new text the model reads",
                    self.subject(&subject_path)
                )
            } else {
                format!(
                    "'{}' added to {keyword} of {}",
                    visible(name),
                    self.subject(&subject_path)
                )
            };
            self.push_class(
                ChangeCode::SchemaTextChanged,
                ChangeClass::Security,
                &name_at,
                message,
                None,
                Some(&text),
            );
        }
    }

    /// A string of a keyword that also validates (`pattern`, `format`) changed or arrived,
    /// shown as a word diff (security). Nothing when the new value is not a string, or is gone:
    /// no new text.
    pub(super) fn constraint_text_changed(
        &mut self,
        key: &str,
        o: Option<&Value>,
        n: Option<&Value>,
        at: &str,
        path: &str,
    ) {
        let Some(Value::String(new)) = n else {
            return;
        };
        let old = o.and_then(Value::as_str).unwrap_or_default();
        self.push_word_diff(
            ChangeCode::SchemaTextChanged,
            key,
            (old, new),
            (o, n),
            at,
            path,
        );
    }
}

/// The member names `schema` mentions at its own level, each with the keyword naming it and a
/// pointer to where it is written: keys of `properties`, `patternProperties`,
/// `dependentSchemas`, `dependencies`, then the names of `required`, `dependentRequired` and
/// `dependencies` lists.
pub(super) fn mentioned_names<'a>(
    schema: &'a Map<String, Value>,
    at: &str,
) -> Vec<(&'static str, &'a str, String)> {
    let mut names = Vec::new();
    // Maps whose member names are names of members of the value, then the patterns.
    let naming_maps = vocabulary::names(|k| {
        k.family == vocabulary::Family::Object
            && matches!(k.holds, Holds::Map | Holds::MapOfSchemasOrNames)
            && k.name != "patternProperties"
    });
    for keyword in naming_maps.chain(["patternProperties"]) {
        let keyword_at = push_segment(at, keyword);
        for name in schema
            .get(keyword)
            .and_then(Value::as_object)
            .into_iter()
            .flat_map(Map::keys)
        {
            names.push((keyword, name.as_str(), push_segment(&keyword_at, name)));
        }
    }
    let strings = |list: &'a Value| {
        list.as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
    };
    if let Some(required) = schema.get("required") {
        let keyword_at = push_segment(at, "required");
        names.extend(strings(required).map(|name| ("required", name, keyword_at.clone())));
    }
    for keyword in ["dependentRequired", "dependencies"] {
        let keyword_at = push_segment(at, keyword);
        for (key, listed) in schema
            .get(keyword)
            .and_then(Value::as_object)
            .into_iter()
            .flatten()
        {
            let listed_at = push_segment(&keyword_at, key);
            if keyword == "dependentRequired" {
                names.push((keyword, key.as_str(), listed_at.clone()));
            }
            names.extend(strings(listed).map(|name| (keyword, name, listed_at.clone())));
        }
    }
    names
}
