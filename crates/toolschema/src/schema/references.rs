//! `$ref` checks made before a schema reaches the engine: cycles that would never consume any
//! input are reported as errors instead of being evaluated.

use super::document::{percent_decode, subschemas};
use super::{vocabulary, SchemaError};
use crate::json::pointer::resolve;
use crate::json::Members;
use serde_json::Value;
use std::collections::{HashMap, HashSet};

/// The most distinct reference targets a schema may hold to be compiled. The engine compiles a
/// chain of references (`a` refers to `b`, which refers to `c`, ...) in time that grows with the
/// square of its length (measured with jsonschema 0.61.2: 10,000 in 0.3 s, 40,000 in 2.6 s,
/// 80,000 in 8 s), and the proxy and the fuzzer compile whatever a server lists: a schema past
/// this is refused, saying so, rather than left to stall them.
pub(crate) const MAX_REFERENCES: usize = 10_000;

/// How many distinct reference targets `schema` holds (each reference keyword's string counted
/// once, however often it is used); an error past [`MAX_REFERENCES`].
fn count_reference_targets(schema: &Value) -> Result<usize, SchemaError> {
    let mut targets: HashSet<&str> = HashSet::new();
    let too_many = crate::json::any_object(schema, |map| {
        for keyword in vocabulary::references() {
            if let Some(Value::String(target)) = map.get(keyword) {
                targets.insert(target);
            }
        }
        targets.len() > MAX_REFERENCES
    });
    if too_many {
        return Err(SchemaError::TooManyReferences {
            limit: MAX_REFERENCES,
        });
    }
    Ok(targets.len())
}

/// Whether any object in `value` has a reference keyword with a string value. A cheap scan
/// (no pointers, nothing allocated but a stack) that lets the checks below skip the common
/// schema without any reference; a property *named* `$ref` only makes them look closer.
fn holds_references(value: &Value) -> bool {
    crate::json::any_object(value, |map| {
        vocabulary::references().any(|k| map.member(k).is_some_and(Value::is_string))
    })
}

/// The locations a schema applies in place (to the same instance), with the `$ref` that leads
/// there when it is a reference.
fn in_place_edges(schema: &Value, pointer: &str, resource: &str) -> Vec<Edge> {
    let mut out = Vec::new();
    let Some(Value::Object(map)) = resolve(schema, pointer) else {
        return out;
    };
    for keyword in vocabulary::references() {
        if let Some(reference) = map.get(keyword).and_then(Value::as_str) {
            if let Some(fragment) = reference.strip_prefix('#') {
                // Only JSON Pointer fragments are followed; anchors are left to the engine.
                if fragment.is_empty() || fragment.starts_with('/') {
                    let decoded = percent_decode(fragment);
                    out.push((format!("{resource}{decoded}"), Some(reference.to_string())));
                }
            }
        }
    }
    out.extend(
        vocabulary::subschemas(map)
            .filter(|sub| sub.in_place)
            .map(|sub| (sub.pointer(pointer), None)),
    );
    out
}

/// The keyword an external `$ref` becomes in [`stub_external_refs`].
pub(crate) const UNFETCHED_REF: &str = "x-toolschema-unfetched-ref";

/// A copy of `schema` in which every `$ref` to a document that is neither the schema itself, nor
/// one of its `$id`s, nor `known`, is replaced by [`UNFETCHED_REF`] with the reference as its
/// value (the other keywords of that subschema stay). `None` when there is no such `$ref`.
pub(crate) fn stub_external_refs(schema: &Value, known: impl Fn(&str) -> bool) -> Option<Value> {
    if !holds_references(schema) {
        return None;
    }
    let locations = subschemas(schema);
    let ids: Vec<&str> = locations
        .iter()
        .filter_map(|(pointer, _)| resolve(schema, pointer)?.get("$id")?.as_str())
        .map(|id| id.split('#').next().unwrap_or(id))
        .collect();
    let is_local = |reference: &str| {
        let document = reference.split('#').next().unwrap_or(reference);
        document.is_empty()
            || known(document)
            || ids
                .iter()
                .any(|id| *id == document || id.ends_with(&format!("/{document}")))
    };
    let external: Vec<&String> = locations
        .iter()
        .map(|(pointer, _)| pointer)
        .filter(|pointer| {
            resolve(schema, pointer)
                .and_then(|s| s.get("$ref"))
                .and_then(Value::as_str)
                .is_some_and(|reference| !is_local(reference))
        })
        .collect();
    if external.is_empty() {
        return None;
    }
    let mut stubbed = schema.clone();
    for pointer in external {
        if let Some(Value::Object(map)) = stubbed.pointer_mut(pointer) {
            if let Some(reference) = map.shift_remove("$ref") {
                map.insert(UNFETCHED_REF.to_string(), reference);
            }
        }
    }
    Some(stubbed)
}

/// An in-place edge: the target location and the `$ref` that leads there, if it is one.
type Edge = (String, Option<String>);
/// A location on the search path, its edges, and the index of the next edge to follow.
type PathFrame = (String, Vec<Edge>, usize);

/// The most subschemas a schema may apply in a row at one place of a value (through `$ref`,
/// `allOf`, `anyOf`, `oneOf`, `not`, `if`/`then`/`else`, `dependentSchemas`). The engine
/// recurses once for each, at every level of the value: a chain this long, at each of the 128
/// levels a value may nest, keeps the recursion within what validation is given (see
/// `validate`).
pub(crate) const MAX_IN_PLACE_CHAIN: usize = 64;

/// Refuse `$ref` cycles that never move into the instance (`a` refers to `b`, `b` back to `a`):
/// evaluating them can only loop. Recursion through `properties`, `items` and the like is fine.
///
/// Returns the length of the longest chain of subschemas applied in a row at one place of a
/// value, counted in references followed and in-place keywords entered (0 for a schema without
/// references: literal nesting alone is bounded by the reader's depth limit, so it is not
/// counted).
pub(crate) fn check_ref_cycles(schema: &Value) -> Result<usize, SchemaError> {
    #[derive(Clone, Copy, PartialEq)]
    enum State {
        OnPath,
        /// Done, with the longest chain that starts there.
        Done(usize),
    }
    if !holds_references(schema) {
        return Ok(0);
    }
    let locations = subschemas(schema);
    let resources: HashMap<&str, &str> = locations
        .iter()
        .map(|(p, r)| (p.as_str(), r.as_str()))
        .collect();
    let mut state: HashMap<String, State> = HashMap::new();
    let mut longest = 0;
    for (start, _) in &locations {
        if state.contains_key(start) {
            continue;
        }
        // Iterative depth-first search; each frame is a location, its edges and the next edge.
        let resource = resources.get(start.as_str()).copied().unwrap_or("");
        let mut path: Vec<PathFrame> =
            vec![(start.clone(), in_place_edges(schema, start, resource), 0)];
        state.insert(start.clone(), State::OnPath);
        while let Some((_, edges, next)) = path.last_mut() {
            let Some((target, via)) = edges.get(*next).cloned() else {
                // Every edge is followed: the chain from here is one longer than the longest
                // from any of them (the graph has no cycle, or the search has returned).
                let (done, edges, _) = path.pop().unwrap_or_default();
                let chain = edges
                    .iter()
                    .filter_map(|(target, _)| match state.get(target) {
                        Some(State::Done(chain)) => Some(chain + 1),
                        _ => None,
                    })
                    .max()
                    .unwrap_or(0);
                longest = longest.max(chain);
                state.insert(done, State::Done(chain));
                continue;
            };
            *next += 1;
            match state.get(&target) {
                Some(State::Done(_)) => {}
                Some(State::OnPath) => {
                    let chain = cycle_chain(&path, &target, via);
                    return Err(SchemaError::CyclicRef { chain });
                }
                None => {
                    if resolve(schema, &target).is_none() {
                        continue; // unresolvable: reported by the engine
                    }
                    let resource = resources.get(target.as_str()).copied().unwrap_or("");
                    let edges = in_place_edges(schema, &target, resource);
                    state.insert(target.clone(), State::OnPath);
                    path.push((target, edges, 0));
                }
            }
        }
    }
    Ok(longest)
}

/// The checks a schema's references must pass to be compiled: at most [`MAX_REFERENCES`]
/// distinct targets, no cycle that never moves into the value, and no chain of subschemas
/// applied in a row longer than [`MAX_IN_PLACE_CHAIN`]. Returns the longest chain (see
/// [`check_ref_cycles`]).
pub(crate) fn check_references(schema: &Value) -> Result<usize, SchemaError> {
    if count_reference_targets(schema)? == 0 {
        return Ok(0);
    }
    let chain = check_ref_cycles(schema)?;
    if chain > MAX_IN_PLACE_CHAIN {
        return Err(SchemaError::ChainTooLong {
            limit: MAX_IN_PLACE_CHAIN,
        });
    }
    Ok(chain)
}

/// The `$ref`s along a cycle, from the location where it starts back to itself.
fn cycle_chain(path: &[PathFrame], target: &str, closing: Option<String>) -> Vec<String> {
    let start = path.iter().position(|(p, _, _)| p == target).unwrap_or(0);
    let mut chain = vec![format!("#{target}")];
    for window in path[start..].windows(2) {
        let (_, edges, next) = &window[0];
        if let Some((_, Some(via))) = edges.get(next.wrapping_sub(1)) {
            chain.push(via.clone());
        }
    }
    if let Some(via) = closing {
        chain.push(via);
    }
    chain
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn counts_the_longest_chain_of_subschemas_applied_in_a_row() {
        // No reference: not counted (the reader's depth limit bounds literal nesting).
        assert_eq!(check_ref_cycles(&json!({"allOf": [{"not": {}}]})), Ok(0));
        // root -> a, a -> a's allOf item, that item -> b: three in a row.
        let schema = json!({
            "$ref": "#/$defs/a",
            "$defs": {"a": {"allOf": [{"$ref": "#/$defs/b"}]}, "b": {"type": "string"}}
        });
        assert_eq!(check_ref_cycles(&schema), Ok(3));
        // Entering the value (properties, items) ends a chain: a tree is one in a row.
        let tree = json!({"type": "object", "properties": {"kids": {"type": "array", "items": {"$ref": "#"}}}});
        assert_eq!(check_ref_cycles(&tree), Ok(1));
        // The longest of several branches, each location counted once.
        let chain = |n: usize| {
            let defs: serde_json::Map<String, Value> = (0..n)
                .map(|i| (format!("d{i}"), json!({"anyOf": [{"$ref": format!("#/$defs/d{}", i + 1)}, {"type": "null"}]})))
                .chain([(format!("d{n}"), json!({"type": "string"}))])
                .collect();
            json!({"anyOf": [{"$ref": "#/$defs/d0"}, {"$ref": "#/$defs/d1"}], "$defs": defs})
        };
        assert_eq!(check_ref_cycles(&chain(31)), Ok(64));
        assert_eq!(check_references(&chain(31)), Ok(64));
        assert_eq!(
            check_references(&chain(32)),
            Err(SchemaError::ChainTooLong { limit: 64 })
        );
    }

    #[test]
    fn finds_pure_cycles() {
        let schema = json!({
            "$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"allOf": [{"$ref": "#/$defs/a"}]}},
            "$ref": "#/$defs/a"
        });
        let err = check_ref_cycles(&schema).unwrap_err();
        assert_eq!(
            err.to_string(),
            "cyclic $ref never reaches a value to check: #/$defs/a -> #/$defs/b -> #/$defs/a"
        );
        assert!(check_ref_cycles(&json!({"$ref": "#"})).is_err());
    }

    /// Draft-07's `dependencies` applies a member's schema to the same object, as
    /// `dependentSchemas` does: a reference back to the root from there never reaches a value.
    /// (The walk read it as applying to a member once, and let this cycle through.)
    #[test]
    fn dependencies_apply_in_place_as_dependent_schemas_do() {
        let draft7 = json!({
            "$schema": "http://json-schema.org/draft-07/schema#",
            "type": "object",
            "dependencies": {"a": {"$ref": "#"}, "b": ["a"]}
        });
        assert_eq!(
            check_ref_cycles(&draft7).unwrap_err().to_string(),
            "cyclic $ref never reaches a value to check: # -> #"
        );
        let current = json!({"type": "object", "dependentSchemas": {"a": {"$ref": "#"}}});
        assert_eq!(
            check_ref_cycles(&current).unwrap_err(),
            check_ref_cycles(&draft7).unwrap_err()
        );
        // A name list holds no schema: nothing to follow.
        assert_eq!(
            check_ref_cycles(
                &json!({"$ref": "#/$defs/d", "$defs": {"d": {"dependencies": {"b": ["a"]}}}})
            ),
            Ok(1)
        );
    }

    #[test]
    fn allows_recursion_through_the_instance() {
        let tree = json!({
            "type": "object",
            "properties": {"children": {"type": "array", "items": {"$ref": "#"}}},
            "$defs": {"node": {"properties": {"next": {"$ref": "#/$defs/node"}}}}
        });
        assert!(check_ref_cycles(&tree).is_ok());
        // The same definition used twice is not a cycle.
        let twice = json!({"$defs": {"int": {"type": "integer"}},
            "allOf": [{"$ref": "#/$defs/int"}, {"$ref": "#/$defs/int"}]});
        assert!(check_ref_cycles(&twice).is_ok());
    }
}
