//! What the diff knows of the instance location a schema describes, beyond the schema itself:
//! whether an `unevaluatedProperties`/`unevaluatedItems` there depends on what this schema
//! evaluates, and which member names the old schema mentions anywhere at that location.
//!
//! Under JSON Schema 2019-09 and 2020-12, `unevaluatedProperties` (and `unevaluatedItems`) sees
//! every member (item) evaluated by the keywords beside it and by the subschemas applied to the
//! same instance in place (`allOf`, `anyOf`, `oneOf`, `if`, `then`, `else`, `dependentSchemas`,
//! `$ref`), including an `if` without `then` or `else`. Where one applies, a keyword that
//! evaluates members is no longer a mere declaration: removing it can leave members unevaluated,
//! and so refused.

use crate::schema::vocabulary;
use serde_json::{Map, Value};
use std::collections::BTreeSet;
use std::rc::Rc;

/// Which `unevaluated*` keywords apply at an instance location and depend on what is evaluated
/// there.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Unevaluated {
    /// An `unevaluatedProperties` that is not `true` or `{}`.
    pub properties: bool,
    /// An `unevaluatedItems` that is not `true` or `{}`.
    pub items: bool,
}

impl Unevaluated {
    /// Both kinds that apply in `self` or in `other`.
    pub fn or(self, other: Unevaluated) -> Unevaluated {
        Unevaluated {
            properties: self.properties || other.properties,
            items: self.items || other.items,
        }
    }

    /// The `unevaluated*` keywords `schema` itself has.
    pub fn of(schema: &Map<String, Value>) -> Unevaluated {
        let applies = |key: &str| schema.get(key).is_some_and(|v| !is_true_schema(v));
        Unevaluated {
            properties: applies("unevaluatedProperties"),
            items: applies("unevaluatedItems"),
        }
    }

    /// Whether either kind applies.
    pub fn any(self) -> bool {
        self.properties || self.items
    }
}

/// The instance location a schema being compared describes.
#[derive(Debug, Clone, Default)]
pub(crate) struct Location {
    /// `unevaluated*` keywords of the schemas that apply this one in place (not its own).
    pub around: Unevaluated,
    /// `unevaluated*` keywords that apply here: those around and this schema's own, old or new.
    pub here: Unevaluated,
    /// Member names the old schema mentions anywhere at this location (declared, required,
    /// named by `dependentRequired` or `dependentSchemas`, keys of an object `const` or `enum`
    /// value), in this schema and in every subschema applied in place: callers may send them.
    pub known_names: Rc<BTreeSet<String>>,
}

/// The member names `schema` mentions at its own instance location, in place subschemas
/// included (see [`Location::known_names`]).
pub(crate) fn names_at_location(schema: &Value) -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    let mut stack = vec![schema];
    while let Some(schema) = stack.pop() {
        let Value::Object(map) = schema else {
            continue;
        };
        names.extend(keys_of(map.get("properties")));
        names.extend(keys_of(map.get("dependentRequired")));
        names.extend(keys_of(map.get("dependentSchemas")));
        names.extend(keys_of(map.get("dependencies")));
        names.extend(keys_of(map.get("const")));
        names.extend(strings(map.get("required")));
        for listed in map
            .get("dependentRequired")
            .and_then(Value::as_object)
            .into_iter()
            .flat_map(Map::values)
        {
            names.extend(strings(Some(listed)));
        }
        for value in map
            .get("enum")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            names.extend(keys_of(Some(value)));
        }
        stack.extend(
            vocabulary::subschemas(map)
                .filter(|sub| sub.in_place)
                .map(|sub| sub.value),
        );
    }
    names
}

/// The member names of an object value.
fn keys_of(value: Option<&Value>) -> impl Iterator<Item = String> + '_ {
    value
        .and_then(Value::as_object)
        .into_iter()
        .flat_map(|m| m.keys().cloned())
}

/// The strings of an array value.
fn strings(value: Option<&Value>) -> impl Iterator<Item = String> + '_ {
    value
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .map(str::to_string)
}

/// `true` or `{}`: a schema that accepts anything and evaluates whatever it is applied to.
fn is_true_schema(schema: &Value) -> bool {
    match schema {
        Value::Bool(b) => *b,
        Value::Object(map) => map.is_empty(),
        _ => false,
    }
}
