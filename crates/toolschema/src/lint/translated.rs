//! Lint what goes on the wire: a tool whose `inputSchema` is written in a lightweight shape is
//! linted through its standard JSON Schema translation, with every finding pointing back at the
//! text it came from.
//!
//! The rules read a tool as a value with spans into the file. For a lightweight schema this
//! module builds a stand-in: the tool with its `inputSchema` replaced by the translation, and
//! spans whose positions are those of the written values each translated value comes from (a
//! property's schema from the property as written, a `type` from the `type` written, what the
//! translation adds from the schema itself). Findings inside the translation get the source's
//! JSON Pointer back; they carry no fix, since their edits would land in text that is not there
//! (the lightweight-shape rule's fix translates the schema first, and the next round fixes the
//! rest).

use crate::catalog::SourceTool;
use crate::json::pointer::{push_segment, resolve, split_pointer};
use crate::json::{SpanEntry, Spans};
use crate::schema::{detect_shape, normalize, SchemaShape};
use serde_json::Value;

/// A tool with a lightweight `inputSchema`, as the rules read it.
pub(crate) struct Translated {
    /// The tool with its `inputSchema` translated, with spans into the file.
    pub tool: SourceTool,
    /// The `inputSchema` as written.
    pub written: Value,
    /// The shape it is written in.
    pub shape: SchemaShape,
    /// JSON Pointer to the `inputSchema` in the file.
    input_pointer: String,
}

impl Translated {
    /// The stand-in for `tool`, when its `inputSchema` is a lightweight shape that translates.
    pub fn of(tool: &SourceTool) -> Option<Translated> {
        let written = tool.value.get("inputSchema")?;
        // Most schemas are standard: tell from the root's keys before translating anything.
        if !detect_shape(written).is_lightweight() {
            return None;
        }
        let normalized = normalize(written).ok()?;
        let shape = normalized.shape;
        let standard = normalized.schema.into_owned();
        let mut value = tool.value.clone();
        if let Some(slot) = value.get_mut("inputSchema") {
            *slot = standard;
        }
        let written = written.clone();
        let mut entries = Vec::new();
        let locate = |pointer: &str| -> SpanEntry {
            let source = match pointer.strip_prefix("/inputSchema") {
                Some(local) if local.is_empty() || local.starts_with('/') => {
                    ["/inputSchema", &source_local(&written, shape, local)].concat()
                }
                _ => pointer.to_string(),
            };
            tool.spans
                .locate(&tool.value, &source)
                .map(|(span, _)| span)
                .or_else(|| tool.spans.root())
                .unwrap_or(SpanEntry::open(0, crate::json::spans::NO_KEY))
        };
        record(&value, &mut String::new(), &mut entries, &locate);
        Some(Translated {
            tool: SourceTool {
                value,
                spans: Spans::new(entries),
                pointer: tool.pointer.clone(),
            },
            input_pointer: push_segment(&tool.pointer, "inputSchema"),
            written,
            shape,
        })
    }

    /// JSON Pointer to the `inputSchema` in the file.
    pub fn input_pointer(&self) -> &str {
        &self.input_pointer
    }

    /// The JSON Pointer in the file of what a pointer into the translation came from, when it
    /// points inside the translated `inputSchema`.
    pub fn source_pointer(&self, pointer: &str) -> Option<String> {
        let local = pointer.strip_prefix(self.input_pointer.as_str())?;
        if !local.is_empty() && !local.starts_with('/') {
            return None;
        }
        Some(
            [
                self.input_pointer.as_str(),
                &source_local(&self.written, self.shape, local),
            ]
            .concat(),
        )
    }
}

/// Where, in the schema as written, the value at `local` (a pointer into the translation) comes
/// from: the same place, else without the `items` the translation adds around an array's
/// element, else the deepest written ancestor.
fn source_local(written: &Value, shape: SchemaShape, local: &str) -> String {
    let segments: Vec<String> = split_pointer(local).map(|s| s.into_owned()).collect();
    // The direct map has no `properties` level: `/properties/q/...` was written as `/q/...`.
    let segments: Vec<&str> = match (shape, segments.split_first()) {
        (SchemaShape::DirectMap, Some((first, rest))) if first == "properties" => {
            rest.iter().map(String::as_str).collect()
        }
        (SchemaShape::DirectMap, Some(_)) => Vec::new(),
        _ => segments.iter().map(String::as_str).collect(),
    };
    let join = |parts: &[&str]| {
        parts
            .iter()
            .fold(String::new(), |pointer, part| push_segment(&pointer, part))
    };
    let direct = join(&segments);
    if resolve(written, &direct).is_some() {
        return direct;
    }
    let without_items: Vec<&str> = segments.iter().copied().filter(|s| *s != "items").collect();
    let candidate = join(&without_items);
    if resolve(written, &candidate).is_some() {
        return candidate;
    }
    // The deepest written ancestor.
    let mut deepest = String::new();
    for segment in &segments {
        let next = push_segment(&deepest, segment);
        if resolve(written, &next).is_none() {
            break;
        }
        deepest = next;
    }
    deepest
}

/// Record spans for `value` and its children in pre-order, each at the place `locate` gives for
/// its pointer.
fn record(
    value: &Value,
    pointer: &mut String,
    entries: &mut Vec<SpanEntry>,
    locate: &dyn Fn(&str) -> SpanEntry,
) {
    let index = entries.len();
    let source = locate(pointer);
    entries.push(SpanEntry { next: 0, ..source });
    let length = pointer.len();
    match value {
        Value::Object(map) => {
            for (key, child) in map {
                *pointer = push_segment(pointer, key);
                record(child, pointer, entries, locate);
                pointer.truncate(length);
            }
        }
        Value::Array(items) => {
            for (i, child) in items.iter().enumerate() {
                *pointer = push_segment(pointer, &i.to_string());
                record(child, pointer, entries, locate);
                pointer.truncate(length);
            }
        }
        _ => {}
    }
    let next = entries.len() as u32;
    if let Some(entry) = entries.get_mut(index) {
        entry.next = next;
    }
}
