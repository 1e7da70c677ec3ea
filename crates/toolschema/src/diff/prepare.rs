//! A tool as the model reads it, in the form the diff compares and the pins hash: lightweight
//! schema shapes translated to standard JSON Schema, and local `$ref`s replaced by what they point
//! to, so that moving a property behind a `$ref` changes nothing.

use crate::json::pointer::split_pointer;
use crate::json::{nesting_depth, MAX_DEPTH};
use crate::schema::document::{Document, Target};
use crate::schema::vocabulary::{self, Holds, Role};
use crate::schema::{detect_dialect, normalize_shape};
use serde_json::{Map, Value};
use std::collections::BTreeSet;

/// The most values inlining may produce for one schema. `$ref`s can multiply a schema (each
/// definition used twice by the one before it doubles it); past this the schema is compared as
/// written, `$ref`s and all, which is still exact, only less forgiving of refactoring.
const INLINE_BUDGET: usize = 100_000;

/// The tool's fields with `inputSchema` and `outputSchema` prepared by [`prepare_schema`]; every
/// other field as it is.
pub(crate) fn prepare_tool(tool: &Map<String, Value>) -> Map<String, Value> {
    let mut out = Map::with_capacity(tool.len());
    for (key, value) in tool {
        let value = match key.as_str() {
            "inputSchema" => prepare_schema(value, true),
            "outputSchema" => prepare_schema(value, false),
            _ => value.clone(),
        };
        out.insert(key.clone(), value);
    }
    out
}

/// A schema in the form the diff compares: a lightweight shape (input schemas only) translated to
/// standard JSON Schema, local `$ref`s inlined. A schema that cannot be translated is kept as
/// written; so is one with an embedded resource (`$id` below the root, whose `$ref`s resolve
/// against another base) or one whose inlining would exceed the budget.
pub(crate) fn prepare_schema(schema: &Value, input: bool) -> Value {
    let standard = if input {
        match normalize_shape(schema) {
            Ok((_, standard)) => standard.into_owned(),
            Err(_) => schema.clone(),
        }
    } else {
        schema.clone()
    };
    // A subschema with an `$id` of its own is a base its `$ref`s resolve against: such schemas
    // are compared as written.
    if Document::new(&standard).embeds_resources() {
        return standard;
    }
    // Whether the keywords beside a `$ref` apply depends on the dialect; under one toolschema
    // does not know, inlining could give the schema another meaning.
    let Ok(dialect) = detect_dialect(&standard) else {
        return standard;
    };
    let siblings_apply = !dialect.ref_ignores_siblings();
    // First find the recursive definitions (a `$ref` met again while it is being inlined), then
    // inline every other `$ref` and keep those to recursive definitions as written. Keeping them
    // everywhere, not only where the recursion closes, makes preparing a prepared schema change
    // nothing, so a definition stored in a lock compares and hashes as it did when pinned.
    let mut finder = Inliner::new(&standard, BTreeSet::new(), siblings_apply);
    if finder
        .schema(&standard, &mut vec![String::new()], 0)
        .is_none()
    {
        return standard;
    }
    let mut inliner = Inliner::new(&standard, finder.kept, siblings_apply);
    let Some(mut inlined) = inliner.schema(&standard, &mut Vec::new(), 0) else {
        return standard;
    };
    if nesting_depth(&inlined, MAX_DEPTH) > MAX_DEPTH {
        crate::json::drop_deep(inlined);
        return standard;
    }
    drop_inlined_definitions(&mut inlined, &inliner.inlined, &inliner.kept);
    inlined
}

struct Inliner<'a> {
    /// The schema, its references resolved.
    document: Document<'a>,
    /// Pointers never inlined: `$ref`s to them are kept as written.
    recursive: BTreeSet<String>,
    /// Values still allowed to be produced.
    budget: usize,
    /// Pointers of every definition inlined somewhere.
    inlined: BTreeSet<String>,
    /// Pointers still referenced by a `$ref` kept as written (a recursive one).
    kept: BTreeSet<String>,
    /// Whether the keywords beside a `$ref` apply with its target (2020-12) or are ignored
    /// (draft-07).
    siblings_apply: bool,
}

/// The member that holds, in the compared form, what stood beside a `$ref` in a dialect that
/// ignores it (draft-07): unknown to every dialect, so it constrains nothing.
const IGNORED_BESIDE_REF: &str = "x-ignored-beside-$ref";

/// Keywords kept beside an inlined `$ref` whose dialect ignores its siblings: they accept and
/// refuse nothing either way, and the model still reads them (the root's `$schema` and
/// definitions are needed as well).
fn describes(key: &str) -> bool {
    vocabulary::role(key).is_some_and(|role| {
        matches!(
            role,
            Role::Identifier | Role::Definitions | Role::Annotation
        )
    })
}

impl<'a> Inliner<'a> {
    fn new(root: &'a Value, recursive: BTreeSet<String>, siblings_apply: bool) -> Self {
        Inliner {
            document: Document::new(root),
            kept: recursive.clone(),
            recursive,
            budget: INLINE_BUDGET,
            inlined: BTreeSet::new(),
            siblings_apply,
        }
    }

    /// `schema` with its local `$ref`s inlined; `stack` holds the pointers being inlined (a `$ref`
    /// to one of them is recursive and is kept). `None` when over budget or too deep.
    fn schema(&mut self, schema: &Value, stack: &mut Vec<String>, depth: usize) -> Option<Value> {
        self.budget = self.budget.checked_sub(1)?;
        if depth > MAX_DEPTH {
            return None;
        }
        let Value::Object(map) = schema else {
            return Some(schema.clone());
        };
        let mut siblings = Map::with_capacity(map.len());
        for (key, value) in map {
            let value = self.keyword(key, value, stack, depth)?;
            siblings.insert(key.clone(), value);
        }
        let Some(reference) = map.get("$ref").and_then(Value::as_str) else {
            return Some(Value::Object(siblings));
        };
        let Ok(Target {
            pointer,
            value: target,
        }) = self.document.locate(reference)
        else {
            return Some(Value::Object(siblings)); // points nowhere: compared as written
        };
        if self.recursive.contains(&pointer) || stack.contains(&pointer) {
            self.kept.insert(pointer);
            return Some(Value::Object(siblings));
        }
        stack.push(pointer.clone());
        let resolved = self.schema(target, stack, depth + 1);
        stack.pop();
        let resolved = resolved?;
        self.inlined.insert(pointer);
        siblings.shift_remove("$ref");
        if !self.siblings_apply {
            // Draft-07: the target alone decides what is accepted. What beside the `$ref` only
            // describes stays; the rest, which a validator ignores but the model still reads,
            // is kept under a member that constrains nothing: it changes no verdict, and a
            // change to it is still a change (of text the model reads) and still moves a pin.
            let ignored: Map<String, Value> = siblings
                .iter()
                .filter(|(key, _)| !describes(key))
                .map(|(key, value)| (key.clone(), value.clone()))
                .collect();
            siblings.retain(|key, _| describes(key));
            if !ignored.is_empty() {
                siblings.insert(IGNORED_BESIDE_REF.to_string(), Value::Object(ignored));
            }
        }
        Some(merge(resolved, siblings))
    }

    /// The value of one keyword of a schema, its subschemas inlined.
    fn keyword(
        &mut self,
        key: &str,
        value: &Value,
        stack: &mut Vec<String>,
        depth: usize,
    ) -> Option<Value> {
        let holds = vocabulary::lookup(key).map_or(Holds::Nothing, |k| k.holds);
        let single = matches!(holds, Holds::Schema | Holds::SchemaOrList);
        let list = matches!(holds, Holds::List | Holds::SchemaOrList);
        let map = matches!(holds, Holds::Map | Holds::MapOfSchemasOrNames);
        match value {
            Value::Object(_) if single => self.schema(value, stack, depth + 1),
            Value::Array(items) if list => {
                let mut out = Vec::with_capacity(items.len());
                for item in items {
                    out.push(self.schema(item, stack, depth + 1)?);
                }
                Some(Value::Array(out))
            }
            Value::Object(members) if map => {
                let mut out = Map::with_capacity(members.len());
                for (name, member) in members {
                    out.insert(name.clone(), self.schema(member, stack, depth + 2)?);
                }
                Some(Value::Object(out))
            }
            _ => {
                self.budget = self.budget.checked_sub(1)?;
                Some(value.clone())
            }
        }
    }
}

/// The target of a `$ref` combined with the keywords beside the `$ref`: one schema when no keyword
/// is on both sides, else the target as an `allOf` branch so neither side's keyword is lost.
fn merge(target: Value, siblings: Map<String, Value>) -> Value {
    if siblings.is_empty() {
        return target;
    }
    match target {
        Value::Object(mut map) if siblings.keys().all(|k| !map.contains_key(k)) => {
            map.extend(siblings);
            Value::Object(map)
        }
        Value::Bool(true) => Value::Object(siblings),
        other => {
            let mut out = siblings;
            let branches = match out.shift_remove("allOf") {
                Some(Value::Array(mut branches)) => {
                    branches.insert(0, other);
                    branches
                }
                Some(kept) => {
                    // `allOf` that is not a list stays where it was, beside the new branch.
                    out.insert("x-allOf".into(), kept);
                    vec![other]
                }
                None => vec![other],
            };
            out.insert("allOf".into(), Value::Array(branches));
            Value::Object(out)
        }
    }
}

/// Remove the definitions (`$defs/NAME`, `definitions/NAME` at the root) that were inlined
/// wherever they were used and that no kept `$ref` still names; remove a definitions map left
/// empty.
fn drop_inlined_definitions(
    schema: &mut Value,
    inlined: &BTreeSet<String>,
    kept: &BTreeSet<String>,
) {
    let Value::Object(root) = schema else {
        return;
    };
    let still_named = |pointer: &str| {
        kept.iter()
            .any(|k| k == pointer || k.starts_with(&format!("{pointer}/")))
    };
    for pointer in inlined {
        let segments: Vec<_> = split_pointer(pointer).collect();
        let [container, name] = segments.as_slice() else {
            continue;
        };
        if !matches!(container.as_ref(), "$defs" | "definitions") || still_named(pointer) {
            continue;
        }
        if let Some(Value::Object(definitions)) = root.get_mut(container.as_ref()) {
            definitions.shift_remove(name.as_ref());
        }
    }
    for container in ["$defs", "definitions"] {
        if root
            .get(container)
            .and_then(Value::as_object)
            .is_some_and(Map::is_empty)
        {
            root.shift_remove(container);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_property_behind_a_ref_is_the_property() {
        let inline =
            json!({"type": "object", "properties": {"p": {"type": "string", "maxLength": 5}}});
        let behind = json!({"type": "object", "properties": {"p": {"$ref": "#/$defs/P"}},
            "$defs": {"P": {"type": "string", "maxLength": 5}}});
        assert_eq!(prepare_schema(&behind, true), inline);
    }

    #[test]
    fn recursive_refs_are_kept_with_their_definition() {
        let tree = json!({"type": "object", "properties": {"root": {"$ref": "#/$defs/node"},
            "label": {"$ref": "#/$defs/label"}},
            "$defs": {"label": {"type": "string"}, "node": {"type": "object",
                "properties": {"name": {"$ref": "#/$defs/label"},
                    "children": {"type": "array", "items": {"$ref": "#/$defs/node"}}}}}});
        let prepared = prepare_schema(&tree, true);
        assert_eq!(
            prepared,
            json!({"type": "object", "properties": {"root": {"$ref": "#/$defs/node"},
                "label": {"type": "string"}},
                "$defs": {"node": {"type": "object", "properties": {"name": {"type": "string"},
                    "children": {"type": "array", "items": {"$ref": "#/$defs/node"}}}}}})
        );
        // Preparing a prepared schema changes nothing.
        assert_eq!(prepare_schema(&prepared, true), prepared);
    }

    #[test]
    fn siblings_of_a_ref_are_kept() {
        let schema = json!({"properties": {"p": {"$ref": "#/$defs/P", "description": "d", "type": "integer"}},
            "$defs": {"P": {"type": "number", "minimum": 0}}});
        let prepared = prepare_schema(&schema, true);
        assert_eq!(
            prepared["properties"]["p"],
            json!({"description": "d", "type": "integer", "allOf": [{"type": "number", "minimum": 0}]})
        );
        assert!(prepared.get("$defs").is_none());
    }

    #[test]
    fn draft_07_drops_the_validating_siblings_of_a_ref() {
        let draft7 = "http://json-schema.org/draft-07/schema#";
        let schema = json!({"$schema": draft7, "type": "object",
            "properties": {"p": {"$ref": "#/definitions/A", "type": "string", "maxLength": 3,
                "description": "d", "x-note": "n"}},
            "definitions": {"A": {"minimum": 1}}});
        assert_eq!(
            prepare_schema(&schema, true),
            json!({"$schema": draft7, "type": "object",
                "properties": {"p": {"minimum": 1, "description": "d",
                    "x-ignored-beside-$ref": {"type": "string", "maxLength": 3, "x-note": "n"}}}})
        );
        // Annotations of any kind only describe: kept beside the target, as `description` is.
        let annotated = json!({"$schema": draft7, "type": "object",
            "properties": {"p": {"$ref": "#/definitions/A", "example": "e",
                "contentMediaType": "text/plain", "maxLength": 3}},
            "definitions": {"A": {"minimum": 1}}});
        assert_eq!(
            prepare_schema(&annotated, true),
            json!({"$schema": draft7, "type": "object",
                "properties": {"p": {"minimum": 1, "example": "e",
                    "contentMediaType": "text/plain",
                    "x-ignored-beside-$ref": {"maxLength": 3}}}})
        );
        // The root of a zod schema: `$ref`, `definitions` and `$schema` side by side.
        let root = json!({"$schema": draft7, "$ref": "#/definitions/T",
            "definitions": {"T": {"type": "object", "properties": {"q": {"type": "string"}}}}});
        assert_eq!(
            prepare_schema(&root, true),
            json!({"type": "object", "properties": {"q": {"type": "string"}}, "$schema": draft7})
        );
        // A dialect toolschema does not know is compared as written.
        let unknown = json!({"$schema": "http://json-schema.org/draft-04/schema#",
            "properties": {"p": {"$ref": "#/definitions/A", "type": "string"}},
            "definitions": {"A": {}}});
        assert_eq!(prepare_schema(&unknown, true), unknown);
    }

    #[test]
    fn unused_and_unresolvable_definitions_stay() {
        let schema = json!({"properties": {"p": {"$ref": "#/$defs/missing"}}, "$defs": {"q": {"type": "string"}}});
        assert_eq!(prepare_schema(&schema, true), schema);
        // A property named "$ref" is an argument, not a reference.
        let named = json!({"type": "object", "properties": {"$ref": {"type": "string"}}});
        assert_eq!(prepare_schema(&named, true), named);
    }

    #[test]
    fn exponential_inlining_is_given_up() {
        let mut defs = Map::new();
        for i in 0..30 {
            defs.insert(
                format!("d{i}"),
                json!({"anyOf": [{"$ref": format!("#/$defs/d{}", i + 1)}, {"$ref": format!("#/$defs/d{}", i + 1)}]}),
            );
        }
        defs.insert("d30".into(), json!({"type": "string"}));
        let schema = json!({"$ref": "#/$defs/d0", "$defs": defs});
        assert_eq!(prepare_schema(&schema, true), schema);
    }

    #[test]
    fn lightweight_input_shapes_are_translated() {
        let light = json!({"q": {"type": "string", "required": true}});
        assert_eq!(
            prepare_schema(&light, true),
            json!({"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"],
                "additionalProperties": false})
        );
    }
}
