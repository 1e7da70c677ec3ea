//! Schema comparison by meaning: each keyword change is read as accepting less (narrows), more
//! (widens) or something else (changes), and classed by the direction values flow: a caller's
//! arguments into `inputSchema`, the server's results out of `outputSchema`.

mod array;
mod bounds;
mod combinators;
mod object;
mod report;
mod values;

use super::location::{names_at_location, Location, Unevaluated};
use super::new_text::mentioned_names;
use super::words::word_diff;
use super::{Change, ChangeClass, ChangeCode};
use crate::json::pointer::push_segment;
use crate::json::{compare_numbers, same_value, same_value_opt, MAX_DEPTH};
use crate::schema::vocabulary::{self, Bound, Role};
use crate::schema::Dialect;
use crate::text::visible;
use object::listed_names;
pub(crate) use report::short;
pub(super) use report::{holds_text, join, shown};
use serde_json::{Map, Value};
use std::cmp::Ordering;
use std::collections::{BTreeSet, HashSet};
use std::rc::Rc;

/// Which way values flow through a schema.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Direction {
    /// Arguments from the caller (`inputSchema`): accepting less breaks callers.
    Input,
    /// Results from the server (`outputSchema`): promising less breaks consumers.
    Output,
}

/// What a keyword change does to the set of accepted values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Effect {
    Narrows,
    Widens,
    Changes,
}

fn class_of(effect: Effect, direction: Direction) -> ChangeClass {
    match (effect, direction) {
        (Effect::Narrows, Direction::Input) | (Effect::Widens, Direction::Output) => {
            ChangeClass::Breaking
        }
        (Effect::Changes, _) => ChangeClass::Breaking,
        _ => ChangeClass::Compatible,
    }
}

/// Why a change of what a `oneOf` branch accepts is breaking, either way.
const ONE_OF_COUNTS: &str =
    " (under oneOf a value may now match more than one branch, or one where it matched two)";
/// Whether `key` is an annotation: a keyword that accepts and refuses nothing (`default`,
/// `examples`, `$comment`, `deprecated`, `$id`, unknown keywords), only text the model reads.
/// `description`, `title` and `$schema` are read by their own arm of [`SchemaDiff::keyword`].
pub(super) fn is_annotation(key: &str) -> bool {
    !matches!(key, "description" | "title" | "$schema")
        && vocabulary::role(key)
            .is_none_or(|role| matches!(role, Role::Annotation | Role::Identifier))
}

/// Compares two schemas and records what changed.
pub(crate) struct SchemaDiff<'c> {
    pub tool: &'c str,
    pub direction: Direction,
    pub changes: &'c mut Vec<Change>,
    /// The instance location of the schemas being compared.
    pub(super) location: Location,
    /// Set just before comparing subschemas applied in place: they describe the same location.
    in_place: bool,
    /// The changes (indices into `changes`) that bring text the model reads: security where they
    /// are not breaking.
    bring_text: Vec<usize>,
}

impl<'c> SchemaDiff<'c> {
    /// A comparison of `tool`'s schemas in `direction`, recording into `changes`.
    pub fn new(tool: &'c str, direction: Direction, changes: &'c mut Vec<Change>) -> Self {
        SchemaDiff {
            tool,
            direction,
            changes,
            location: Location::default(),
            in_place: false,
            bring_text: Vec::new(),
        }
    }

    /// Compare two schemas of the tool, `old` and `new`, at `pointer` (see
    /// [`SchemaDiff::compare`]), and record what changed.
    pub fn compare_schemas(mut self, old: &Value, new: &Value, pointer: &str) {
        self.compare(old, new, pointer, "", 0);
        for &i in &self.bring_text {
            if let Some(change) = self.changes.get_mut(i) {
                if change.class == ChangeClass::Compatible {
                    change.class = ChangeClass::Security;
                }
            }
        }
    }
}

impl SchemaDiff<'_> {
    /// Compare `old` and `new`, schemas at `pointer` (into the tool) describing the argument (or
    /// output field) at `path` (`options.depth`, `items[]`; empty for the root).
    fn compare(&mut self, old: &Value, new: &Value, pointer: &str, path: &str, depth: usize) {
        let in_place = std::mem::take(&mut self.in_place);
        if same_value(old, new) {
            return;
        }
        let own = match (old, new) {
            (Value::Object(old), Value::Object(new)) => {
                Unevaluated::of(old).or(Unevaluated::of(new))
            }
            (Value::Object(one), _) | (_, Value::Object(one)) => Unevaluated::of(one),
            _ => Unevaluated::default(),
        };
        let location = if in_place {
            Location {
                around: self.location.here,
                here: self.location.here.or(own),
                known_names: self.location.known_names.clone(),
            }
        } else {
            Location {
                around: Unevaluated::default(),
                here: own,
                known_names: Rc::new(names_at_location(old)),
            }
        };
        let outer = std::mem::replace(&mut self.location, location);
        self.compare_here(old, new, pointer, path, depth);
        self.location = outer;
    }

    /// Compare `old` and `new`, subschemas applied in place to the instance the schemas being
    /// compared describe (branches of `allOf`, `anyOf`, `oneOf`, `dependentSchemas` entries).
    fn compare_in_place(
        &mut self,
        old: &Value,
        new: &Value,
        pointer: &str,
        path: &str,
        depth: usize,
    ) {
        self.in_place = true;
        self.compare(old, new, pointer, path, depth);
    }

    /// [`SchemaDiff::compare`] once the location is set.
    fn compare_here(&mut self, old: &Value, new: &Value, pointer: &str, path: &str, depth: usize) {
        let (Some(old_map), Some(new_map)) = (as_object_schema(old), as_object_schema(new)) else {
            self.push(
                ChangeCode::ConstraintChanged,
                Effect::Changes,
                pointer,
                format!("schema of {} changed", self.subject(path)),
                Some(old.clone()),
                Some(new.clone()),
            );
            return;
        };
        if depth > MAX_DEPTH {
            self.push(
                ChangeCode::ConstraintChanged,
                Effect::Changes,
                pointer,
                format!(
                    "schema of {} changed (nested too deeply to compare in detail)",
                    self.subject(path)
                ),
                Some(old.clone()),
                Some(new.clone()),
            );
            return;
        }
        let (old, new) = (old_map.as_ref(), new_map.as_ref());
        let listed_alike = self.listed_values_alike(old, new, pointer, path);
        let mut members_reported = false;
        let keys = union_keys(old, new);
        for key in keys {
            let (o, n) = (old.get(key.as_str()), new.get(key.as_str()));
            if o.is_some() && n.is_some() && same_value_opt(o, n) {
                continue;
            }
            if listed_alike && matches!(key.as_str(), "enum" | "const") {
                continue;
            }
            let at = push_segment(pointer, key);
            let before = self.changes.len();
            self.keyword(key, o, n, old, new, &at, path, depth);
            // `properties` and `required` are read together: a new required argument is reported
            // once, under `required`.
            if matches!(key.as_str(), "properties" | "required") {
                members_reported |= self.changes.len() > before;
                continue;
            }
            if self.changes.len() == before {
                // Written differently, accepting the same values: an enum or `required` in
                // another order, an equivalent type list, `true` for `{}`. The model reads the
                // new text, so it is reported (and a pin drifts), as compatible.
                let message = format!(
                    "{key} of {} rewritten with the same meaning: {} to {}",
                    self.subject(path),
                    short(o),
                    short(n)
                );
                self.push_class(
                    ChangeCode::SchemaRewritten,
                    ChangeClass::Compatible,
                    &at,
                    message,
                    o,
                    n,
                );
            }
        }
        // Member names the new schema brings: text the model reads, whichever keyword names them.
        let mut reported: BTreeSet<String> = mentioned_names(old, pointer)
            .into_iter()
            .map(|(_, name, _)| name.to_string())
            .chain(listed_names(old).map(str::to_string))
            .collect();
        let known = Rc::clone(&self.location.known_names);
        self.names_arrived(new, pointer, path, &known, &mut reported);
        if !members_reported {
            for key in ["properties", "required"] {
                let (o, n) = (old.get(key), new.get(key));
                if !same_value_opt(o, n) {
                    let message = format!(
                        "{key} of {} rewritten with the same meaning: {} to {}",
                        self.subject(path),
                        short(o),
                        short(n)
                    );
                    let at = push_segment(pointer, key);
                    self.push_class(
                        ChangeCode::SchemaRewritten,
                        ChangeClass::Compatible,
                        &at,
                        message,
                        o,
                        n,
                    );
                }
            }
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn keyword(
        &mut self,
        key: &str,
        o: Option<&Value>,
        n: Option<&Value>,
        old: &Map<String, Value>,
        new: &Map<String, Value>,
        at: &str,
        path: &str,
        depth: usize,
    ) {
        if !self.evaluation_lost(key, o, n, at, path) {
            self.keyword_meaning(key, o, n, old, new, at, path, depth);
        }
        // A keyword that appeared with subschemas is reported above as one constraint; the text
        // in those subschemas is new text the model reads.
        if let (None, Some(n)) = (o, n) {
            // Keywords reported as one constraint when they appear, though they hold subschemas
            // (whose text is then reported apart).
            if vocabulary::role(key) == Some(Role::InPlace) || key == "contains" {
                let known = Rc::clone(&self.location.known_names);
                self.new_keyword_text(key, n, at, path, depth + 1, &known);
            }
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn keyword_meaning(
        &mut self,
        key: &str,
        o: Option<&Value>,
        n: Option<&Value>,
        old: &Map<String, Value>,
        new: &Map<String, Value>,
        at: &str,
        path: &str,
        depth: usize,
    ) {
        if is_annotation(key) {
            return self.annotation_changed(key, o, n, at, path);
        }
        match key {
            "type" => self.types(o, n, at, path),
            "properties" => self.properties(old, new, at, path, depth),
            "required" => self.required(old, new, at, path),
            "additionalProperties" | "unevaluatedProperties" => {
                self.openness(key, o, n, at, &join(path, "*"), depth)
            }
            "items" => self.items(o, n, old, new, at, path, depth),
            "prefixItems" => {
                let rest = [old.get("items"), new.get("items")];
                self.tuple(key, o, n, rest, at, path, depth)
            }
            "enum" => self.enumeration(o, n, at, path),
            "anyOf" | "oneOf" | "allOf" => self.branches(key, o, n, at, path, depth),
            "pattern" | "format" => {
                self.pattern_or_format(key, o, n, at, path);
                self.constraint_text_changed(key, o, n, at, path);
            }
            "description" | "title" => self.text_changed(key, o, n, at, path),
            "$schema" => {
                // Another spelling of the same dialect (`https`, a trailing `#`, the 2020-12 URI
                // where none was written at the root) is a rewrite, reported by the caller.
                let dialect = |v: Option<&Value>| match v {
                    None if path.is_empty() => Some(Dialect::Draft202012),
                    Some(Value::String(uri)) => Dialect::from_uri(uri),
                    _ => None,
                };
                if dialect(o).is_some() && dialect(o) == dialect(n) {
                    return;
                }
                let message = format!(
                    "$schema of {} changed from {} to {}",
                    self.subject(path),
                    short(o),
                    short(n)
                );
                self.push(
                    ChangeCode::DialectChanged,
                    Effect::Changes,
                    at,
                    message,
                    o.cloned(),
                    n.cloned(),
                );
            }
            "$defs" | "definitions" => self.members(key, o, n, at, path, depth, true),
            "patternProperties" => self.patterns(o, n, new, at, path, depth),
            // `patternProperties` is read apart: removing an entry can refuse.
            "dependentSchemas" => self.members(key, o, n, at, path, depth, false),
            // Subschemas that apply to members or items; absent means `{}` (anything).
            "additionalItems" | "unevaluatedItems" | "propertyNames" => {
                let nested = if key == "propertyNames" {
                    path.to_string()
                } else {
                    join(path, "[]")
                };
                self.compare(or_anything(o), or_anything(n), at, &nested, depth + 1)
            }
            _ if vocabulary::lookup(key).is_some_and(|k| k.bound.is_some()) => {
                self.bound(key, o, n, at, path)
            }
            "if" | "then" | "else" => {
                // `if` without `then` or `else`, or either without `if`, constrains nothing.
                let applies = |schema: &Map<String, Value>| {
                    schema.contains_key("if")
                        && (schema.contains_key("then") || schema.contains_key("else"))
                };
                let o = o.filter(|_| applies(old));
                let n = n.filter(|_| applies(new));
                self.constraint(key, o, n, at, path)
            }
            // Every other keyword that is no annotation is compared as a whole: present narrows,
            // absent widens, a change is a change.
            _ => self.constraint(key, o, n, at, path),
        }
    }
}

/// The keys of two objects, each once, in sorted order: the order of the changes never depends
/// on the order keys were written in.
pub(crate) fn union_keys<'a>(
    old: &'a Map<String, Value>,
    new: &'a Map<String, Value>,
) -> Vec<&'a String> {
    let mut keys: Vec<&String> = old.keys().chain(new.keys()).collect();
    keys.sort_unstable();
    keys.dedup();
    keys
}

/// The schema `{}`, which accepts anything.
static ANYTHING: Value = Value::Bool(true);

fn or_anything(value: Option<&Value>) -> &Value {
    value.unwrap_or(&ANYTHING)
}

/// A schema as an object: `true` is `{}`, `false` is `{"not": {}}`; `None` for anything else.
fn as_object_schema(schema: &Value) -> Option<std::borrow::Cow<'_, Map<String, Value>>> {
    use std::borrow::Cow;
    match schema {
        Value::Object(map) => Some(Cow::Borrowed(map)),
        Value::Bool(true) => Some(Cow::Owned(Map::new())),
        Value::Bool(false) => {
            let mut map = Map::new();
            map.insert("not".into(), Value::Object(Map::new()));
            Some(Cow::Owned(map))
        }
        _ => None,
    }
}

/// Whether a schema accepts nothing (`false`, `{"not": {}}`).
fn is_false_schema(schema: &Value) -> bool {
    match schema {
        Value::Bool(b) => !b,
        Value::Object(map) => {
            map.len() == 1
                && map
                    .get("not")
                    .is_some_and(|not| as_object_schema(not).is_some_and(|m| m.is_empty()))
        }
        _ => false,
    }
}

/// Whether a schema accepts anything (`true`, `{}`).
fn is_anything(schema: &Value) -> bool {
    as_object_schema(schema).is_some_and(|m| m.is_empty())
}
