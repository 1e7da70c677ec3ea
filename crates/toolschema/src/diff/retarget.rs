//! A local `$ref` that points somewhere else in the new schema. The diff compares schemas with
//! their local `$ref`s inlined, so a retargeted `$ref` shows as what its new target accepts
//! against what the old one did (classed as any other change of what is accepted), and the two
//! definitions as one used definition gone and one unused definition come. That pair is how
//! inlining shows the move, not a change of the definitions: it is replaced by one change saying
//! the reference was retargeted, classed as the worst of the changes found below it.

use super::{Change, ChangeClass, ChangeCode};
use crate::json::pointer::resolve;
use crate::json::same_value;
use crate::schema::document::fragment_pointer;
use crate::text::visible;
use serde_json::Value;
use std::collections::BTreeMap;

/// Replace, among `changes[first..]` (those of the schema at `at`, prepared from `old` and
/// `new` as written), the changes inlining made of each retargeted local `$ref`'s two
/// definitions by one change naming the retarget.
pub(super) fn report_retargets(
    tool: &str,
    old: &Value,
    new: &Value,
    at: &str,
    first: usize,
    changes: &mut Vec<Change>,
) {
    let old_refs = local_references(old);
    let new_refs = local_references(new);
    for (site, from) in &old_refs {
        let Some(to) = new_refs.get(site).filter(|to| *to != from) else {
            continue;
        };
        let (Some(from_pointer), Some(to_pointer)) = (fragment_pointer(from), fragment_pointer(to))
        else {
            continue;
        };
        let site_at = format!("{at}{site}");
        // Kept as written (a recursive definition): compared, and reported, as a keyword.
        let ref_at = format!("{site_at}/$ref");
        if changes[first..].iter().any(|c| c.pointer == ref_at) {
            continue;
        }
        // A definition unchanged as written whose changes are only its moving in or out of the
        // inlined schema.
        let moved = |pointer: &str| {
            is_definition(pointer)
                && matches!((resolve(old, pointer), resolve(new, pointer)), (Some(a), Some(b)) if same_value(a, b))
        };
        let under = |change: &Change, pointer: &str| {
            let prefix = format!("{at}{pointer}");
            change.pointer == prefix || change.pointer.starts_with(&format!("{prefix}/"))
        };
        let mut position = None;
        let mut i = first;
        while i < changes.len() {
            let artefact = [&from_pointer, &to_pointer]
                .iter()
                .any(|p| moved(p) && under(&changes[i], p));
            if artefact {
                changes.remove(i);
                position.get_or_insert(i);
            } else {
                i += 1;
            }
        }
        let below: Vec<ChangeClass> = changes[first..]
            .iter()
            .filter(|c| c.pointer == site_at || c.pointer.starts_with(&format!("{site_at}/")))
            .map(|c| c.class)
            .collect();
        let targets_alike = matches!(
            (resolve(old, &from_pointer), resolve(new, &to_pointer)),
            (Some(a), Some(b)) if same_value(a, b)
        );
        let (code, class, why) = match below.iter().min() {
            Some(&class) => (
                ChangeCode::ConstraintChanged,
                class,
                "the changes at it say what the new target accepts",
            ),
            None if targets_alike => (
                ChangeCode::SchemaRewritten,
                ChangeClass::Compatible,
                "both targets are the same schema",
            ),
            None => (
                ChangeCode::ConstraintChanged,
                ChangeClass::Breaking,
                "the new target may accept other values",
            ),
        };
        let message = format!(
            "$ref at {} retargeted from '{}' to '{}': {why}",
            visible(if site_at.is_empty() { "/" } else { &site_at }),
            visible(from),
            visible(to)
        );
        let change = Change::new(
            tool,
            class,
            code,
            &ref_at,
            message,
            Some(&Value::String(from.clone())),
            Some(&Value::String(to.clone())),
        );
        changes.insert(position.unwrap_or(changes.len()), change);
    }
}

/// Every local `$ref` (`#...`) of `schema` as written, by the pointer of the schema holding it.
fn local_references(schema: &Value) -> BTreeMap<String, String> {
    let mut found = BTreeMap::new();
    let mut stack = vec![(String::new(), schema)];
    while let Some((pointer, value)) = stack.pop() {
        match value {
            Value::Object(map) => {
                if let Some(Value::String(reference)) = map.get("$ref") {
                    if reference.starts_with('#') {
                        found.insert(pointer.clone(), reference.clone());
                    }
                }
                for (key, member) in map {
                    if member.is_object() || member.is_array() {
                        stack.push((crate::json::pointer::push_segment(&pointer, key), member));
                    }
                }
            }
            Value::Array(items) => {
                for (i, item) in items.iter().enumerate() {
                    stack.push((format!("{pointer}/{i}"), item));
                }
            }
            _ => {}
        }
    }
    found
}

/// Whether `pointer` names a definition at the root: `/$defs/NAME`, `/definitions/NAME`.
fn is_definition(pointer: &str) -> bool {
    let mut segments = crate::json::pointer::split_pointer(pointer);
    matches!(
        (segments.next().as_deref(), segments.next(), segments.next()),
        (Some("$defs" | "definitions"), Some(_), None)
    )
}
