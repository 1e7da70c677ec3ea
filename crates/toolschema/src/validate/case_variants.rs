//! Names in arguments that a server matching names without regard to case (Go's
//! `encoding/json`) would read as others.
//!
//! Such a server takes `Path` for a declared `path`, so a value the validator never checked as
//! `path` reaches the code that reads `path`; and of `path` beside `Path` it keeps the last one,
//! which need not be the one checked. The arguments are walked together with the schema: every
//! object is looked at with the names declared for it (the `properties` of every subschema that
//! may apply there), and two things are reported:
//!
//! - two names of one object that [fold alike](crate::text::folds_alike), unless the schema
//!   declares both there (a struct with fields `x` and `X` tells them apart: an exact match wins);
//! - a name not declared for its object that folds like one that is, the declared one being
//!   absent (beside it, the pair is reported instead).
//!
//! What may apply is read generously, so that nothing declared is taken for undeclared: every
//! branch (`allOf`, `anyOf`, `oneOf`, `if`/`then`/`else`, `dependentSchemas`), every
//! `patternProperties` entry whatever its pattern, `additionalProperties` beside it, every
//! `items`/`prefixItems` entry that may reach an item. Where the walk cannot know what applies (a
//! `$ref` to another document, an anchor, a dynamic reference, references inside an embedded
//! resource), no name below is called undeclared; names folding alike are still reported.
//!
//! Memory stays in proportion to the arguments: each object or array is remembered as a link to
//! its parent (a path is spelled out only for a message), and the schemas applying at a place are
//! computed once per distinct set and member name, not once per value.

use crate::json::pointer::push_key;
use crate::schema::document::Document;
use crate::text::fold;
use serde_json::{Map, Value};
use std::cell::OnceCell;
use std::collections::{HashMap, HashSet};

/// Messages, one per name a case-insensitive reader would take for another (see the module
/// docs), for `arguments` checked against `schema` (a standard JSON Schema).
pub(super) fn case_variants(schema: &Value, arguments: &Value) -> Vec<String> {
    let mut walk = Walk {
        root: schema,
        embeds_resources: OnceCell::new(),
        sets: Vec::new(),
        set_ids: HashMap::new(),
        steps: HashMap::new(),
    };
    let root_set = walk.applying(vec![schema], true);
    let mut found = Vec::new();
    // A place is a link to its parent's, with the step from there.
    let mut places: Vec<(usize, Step<'_>)> = vec![(0, Step::Index(0))];
    let mut pending: Vec<(usize, &Value, usize)> = vec![(0, arguments, root_set)];
    while let Some((place, value, set)) = pending.pop() {
        match value {
            Value::Object(object) => {
                walk.look_at(object, set, &places, place, &mut found);
                for (name, inner) in object {
                    if inner.is_object() || inner.is_array() {
                        let inner_set = walk.step(set, Step::Name(name));
                        places.push((place, Step::Name(name)));
                        pending.push((places.len() - 1, inner, inner_set));
                    }
                }
            }
            Value::Array(items) => {
                for (index, item) in items.iter().enumerate() {
                    if item.is_object() || item.is_array() {
                        let item_set = walk.step(set, Step::Index(index));
                        places.push((place, Step::Index(index)));
                        pending.push((places.len() - 1, item, item_set));
                    }
                }
            }
            _ => {}
        }
    }
    found
}

/// One step from a value to a member (by name) or an item (by index).
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
enum Step<'a> {
    Name(&'a str),
    Index(usize),
}

/// The schemas that may apply at one place of the arguments, and what they declare.
struct Applying<'s> {
    /// Schema objects, each once.
    schemas: Vec<&'s Map<String, Value>>,
    /// Whether every schema that may apply is among them.
    known: bool,
    /// The names declared in their `properties`.
    declared: HashSet<&'s str>,
    /// The declared names by their folded spelling (the first of those folding alike).
    by_fold: HashMap<String, &'s str>,
    /// The longest item list (`prefixItems`, or `items` as a list) among them: items past it
    /// all get the same schemas.
    tuple_len: usize,
}

struct Walk<'s, 'a> {
    root: &'s Value,
    /// Whether a subschema below the root has an `$id` of its own, against which the `$ref`s
    /// inside it resolve (this walk reads references against the root only).
    embeds_resources: OnceCell<bool>,
    sets: Vec<Applying<'s>>,
    /// A set's id by its schemas' addresses and whether it is known.
    set_ids: HashMap<(Vec<usize>, bool), usize>,
    /// The set reached from a set by a step (an index past every item list counts as the list's
    /// length, so a long array costs one entry).
    steps: HashMap<(usize, Step<'a>), usize>,
}

impl<'s, 'a> Walk<'s, 'a> {
    /// Report the names of `object` (at `place`, checked against set `set`) that a
    /// case-insensitive reader would take for others.
    fn look_at(
        &self,
        object: &Map<String, Value>,
        set: usize,
        places: &[(usize, Step<'_>)],
        place: usize,
        found: &mut Vec<String>,
    ) {
        let applying = &self.sets[set];
        let mut seen: HashMap<String, &str> = HashMap::with_capacity(object.len());
        for name in object.keys() {
            let folded: String = name.chars().map(fold).collect();
            let declared = applying.declared.contains(name.as_str());
            if !declared && applying.known {
                let like = applying
                    .by_fold
                    .get(&folded)
                    .filter(|like| !object.contains_key(**like));
                if let Some(like) = like {
                    let at = path_of(places, place);
                    found.push(format!(
                        "argument '{}' is not declared, and a server that reads names without regard to case would take it for '{}'",
                        joined(&at, name),
                        joined(&at, like)
                    ));
                }
            }
            if let Some(first) = seen.insert(folded, name) {
                if !(declared && applying.declared.contains(first)) {
                    let at = path_of(places, place);
                    let within = if at.is_empty() {
                        String::new()
                    } else {
                        format!(" (in '{at}')")
                    };
                    found.push(format!(
                        "arguments '{first}' and '{name}'{within} differ only in case: a server that reads names without regard to case would take one for the other"
                    ));
                }
            }
        }
    }

    /// The set of schemas that may apply one step below a place where set `from` applies.
    fn step(&mut self, from: usize, step: Step<'a>) -> usize {
        let key = match step {
            Step::Index(index) => (from, Step::Index(index.min(self.sets[from].tuple_len))),
            Step::Name(_) => (from, step),
        };
        if let Some(&to) = self.steps.get(&key) {
            return to;
        }
        let applying = &self.sets[from];
        let known = applying.known;
        let mut next: Vec<&'s Value> = Vec::new();
        for schema in &applying.schemas {
            match key.1 {
                Step::Name(name) => {
                    let declared = schema.get("properties").and_then(|p| p.get(name));
                    next.extend(declared);
                    if let Some(Value::Object(patterns)) = schema.get("patternProperties") {
                        next.extend(patterns.values());
                    }
                    if declared.is_none() {
                        next.extend(
                            ["additionalProperties", "unevaluatedProperties"]
                                .iter()
                                .filter_map(|k| schema.get(*k)),
                        );
                    }
                }
                Step::Index(index) => {
                    for list in ["prefixItems", "items"] {
                        if let Some(Value::Array(list)) = schema.get(list) {
                            next.extend(list.get(index));
                        }
                    }
                    next.extend(
                        ["items", "additionalItems", "contains", "unevaluatedItems"]
                            .iter()
                            .filter_map(|k| schema.get(*k))
                            .filter(|s| !s.is_array()),
                    );
                }
            }
        }
        let to = self.applying(next, known);
        self.steps.insert(key, to);
        to
    }

    /// The id of the set of `starts` and every schema applying in place beside them.
    fn applying(&mut self, starts: Vec<&'s Value>, mut known: bool) -> usize {
        let mut schemas: Vec<&'s Map<String, Value>> = Vec::new();
        let mut visited: HashSet<usize> = HashSet::new();
        let mut pending = starts;
        pending.reverse();
        while let Some(schema) = pending.pop() {
            let Value::Object(map) = schema else {
                continue;
            };
            if !visited.insert(map as *const Map<String, Value> as usize) {
                continue;
            }
            schemas.push(map);
            let mut in_place: Vec<&'s Value> = Vec::new();
            if let Some(reference) = map.get("$ref") {
                match self.resolve_ref(reference) {
                    Some(target) => in_place.push(target),
                    None => known = false,
                }
            }
            if map.contains_key("$dynamicRef") || map.contains_key("$recursiveRef") {
                known = false;
            }
            for key in ["allOf", "anyOf", "oneOf"] {
                if let Some(Value::Array(branches)) = map.get(key) {
                    in_place.extend(branches);
                }
            }
            in_place.extend(["if", "then", "else"].iter().filter_map(|k| map.get(*k)));
            // Draft-07's `dependencies` holds schemas beside name lists.
            for key in ["dependentSchemas", "dependencies"] {
                if let Some(Value::Object(entries)) = map.get(key) {
                    in_place.extend(entries.values().filter(|e| e.is_object()));
                }
            }
            // Visited in the schema's order, so that of two declared names folding alike a
            // message names the first one written.
            pending.extend(in_place.into_iter().rev());
        }
        let mut addresses: Vec<usize> = visited.into_iter().collect();
        addresses.sort_unstable();
        let key = (addresses, known);
        if let Some(&id) = self.set_ids.get(&key) {
            return id;
        }
        let mut declared = HashSet::new();
        let mut by_fold = HashMap::new();
        let mut tuple_len = 0;
        for schema in &schemas {
            if let Some(Value::Object(properties)) = schema.get("properties") {
                for name in properties.keys() {
                    if declared.insert(name.as_str()) {
                        by_fold
                            .entry(name.chars().map(fold).collect())
                            .or_insert(name.as_str());
                    }
                }
            }
            for list in ["prefixItems", "items"] {
                if let Some(Value::Array(list)) = schema.get(list) {
                    tuple_len = tuple_len.max(list.len());
                }
            }
        }
        let id = self.sets.len();
        self.sets.push(Applying {
            schemas,
            known,
            declared,
            by_fold,
            tuple_len,
        });
        self.set_ids.insert(key, id);
        id
    }

    /// The subschema a `$ref` reaches, when this walk can tell: a JSON Pointer into the schema
    /// itself, with no embedded resource that could change what it resolves against.
    fn resolve_ref(&self, reference: &Value) -> Option<&'s Value> {
        let document = Document::new(self.root);
        if *self
            .embeds_resources
            .get_or_init(|| document.embeds_resources())
        {
            return None;
        }
        let target = document.locate_pointer(reference.as_str()?).ok()?;
        Some(target.value)
    }
}

/// The place at `at`, written as a caller writes it (`rows[3].opts`; the root is empty).
fn path_of(places: &[(usize, Step<'_>)], mut at: usize) -> String {
    let mut steps = Vec::new();
    while at != 0 {
        let (parent, step) = places[at];
        steps.push(step);
        at = parent;
    }
    let mut out = String::new();
    for step in steps.into_iter().rev() {
        match step {
            Step::Name(name) => push_key(&mut out, name),
            Step::Index(index) => out.push_str(&format!("[{index}]")),
        }
    }
    out
}

/// The member `name` of the object at `at`, written as a caller writes it.
fn joined(at: &str, name: &str) -> String {
    let mut out = at.to_string();
    push_key(&mut out, name);
    out
}
