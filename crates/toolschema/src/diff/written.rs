//! Text the model reads in a schema as written that the compared form does not carry: the names
//! of the definitions inlining removes, the `$ref`s that named them, and what translating a
//! lightweight shape replaces (its root `type`, `schemaVersion`, `float`, `isArray`, ...). The
//! diff compares schemas by meaning, so such text could change unseen there; it is found here,
//! in the schemas as written, and reported as text the model reads (security). A pin hashes the
//! definition as received, so the same change moves it.

use super::words::word_diff;
use super::{Change, ChangeClass, ChangeCode};
use crate::json::pointer::{push_segment, split_pointer};
use crate::schema::document::fragment_pointer;
use crate::schema::vocabulary::{self, Role};
use serde_json::Value;
use std::collections::HashSet;

/// Report each string of `new` (a schema as written: member names and string values) that
/// neither `old` as written nor `prepared` (the compared form of `new`) holds: new text the
/// model reads that the comparison by meaning cannot see. Each distinct text once, where it is
/// first met (members in name order); pointers are into the schema as written, below `at`.
pub(super) fn report_written_text(
    tool: &str,
    old: Option<&Value>,
    new: &Value,
    prepared: &Value,
    at: &str,
    changes: &mut Vec<Change>,
) {
    // The keywords inlining removes are structure, not text; a `$ref` is text for the names
    // it holds.
    let mut known: HashSet<&str> = structure().collect();
    if let Some(old) = old {
        strings(old, &mut known);
    }
    strings(prepared, &mut known);
    let mut stack: Vec<(String, &Value)> = vec![(String::new(), new)];
    while let Some((pointer, value)) = stack.pop() {
        match value {
            Value::Object(map) => {
                // In name order, whatever the key order (which is never a change): names
                // first, then the values, pushed reversed so that they are met in that order.
                let mut members: Vec<(&String, &Value)> = map.iter().collect();
                members.sort_by(|a, b| a.0.cmp(b.0));
                let mut below = Vec::with_capacity(members.len());
                for (key, member) in members {
                    let member_at = push_segment(&pointer, key);
                    if known.insert(key.as_str()) {
                        let what = if is_definitions(&pointer) {
                            "definition name"
                        } else {
                            "member name"
                        };
                        changes.push(change(tool, what, key, &format!("{at}{member_at}")));
                    }
                    below.push((member_at, member));
                }
                stack.extend(below.into_iter().rev());
            }
            Value::Array(items) => {
                for (i, item) in items.iter().enumerate().rev() {
                    stack.push((format!("{pointer}/{i}"), item));
                }
            }
            Value::String(text) if pointer.ends_with("/$ref") => {
                // A local `$ref` names definitions: new text only when a name in it is (a
                // definition renamed is reported by its name, met first).
                let new_name = match value.as_str().and_then(fragment_pointer) {
                    Some(target) => split_pointer(&target).any(|name| !known.contains(&*name)),
                    None => !known.contains(text.as_str()),
                };
                if new_name {
                    changes.push(change(tool, "$ref", text, &format!("{at}{pointer}")));
                }
                known.insert(text.as_str());
            }
            Value::String(text) if known.insert(text.as_str()) => {
                changes.push(change(tool, "text", text, &format!("{at}{pointer}")));
            }
            _ => {}
        }
    }
}

/// Keywords inlining removes: structure, not text the model reads.
fn structure() -> impl Iterator<Item = &'static str> {
    std::iter::once("$ref").chain(vocabulary::names(|k| k.role == Role::Definitions))
}

fn change(tool: &str, what: &str, text: &str, pointer: &str) -> Change {
    let message = format!(
        "{what} the model reads (not compared by meaning) changed: {}",
        word_diff("", text)
    );
    let after = Value::String(text.to_string());
    Change::new(
        tool,
        ChangeClass::Security,
        ChangeCode::SchemaTextChanged,
        pointer,
        message,
        None,
        Some(&after),
    )
}

/// Whether `pointer` (into a schema) is a definitions map at its root: `/$defs`, `/definitions`.
fn is_definitions(pointer: &str) -> bool {
    matches!(pointer, "/$defs" | "/definitions")
}

/// Every member name and string value in `value`.
fn strings<'a>(value: &'a Value, out: &mut HashSet<&'a str>) {
    let mut stack = vec![value];
    while let Some(value) = stack.pop() {
        match value {
            Value::Object(map) => {
                for (key, member) in map {
                    out.insert(key.as_str());
                    stack.push(member);
                }
            }
            Value::Array(items) => stack.extend(items),
            Value::String(text) => {
                out.insert(text.as_str());
            }
            _ => {}
        }
    }
}
