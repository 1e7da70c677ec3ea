//! Schema comparison by meaning: each keyword change is read as accepting less (narrows), more
//! (widens) or something else (changes), and classed by the direction values flow: a caller's
//! arguments into `inputSchema`, the server's results out of `outputSchema`.

use super::location::{names_at_location, Location, Unevaluated};
use super::new_text::mentioned_names;
use super::words::word_diff;
use super::{Change, ChangeClass, ChangeCode};
use crate::json::pointer::push_segment;
use crate::json::{compare_numbers, same_value, same_value_opt, MAX_DEPTH};
use crate::schema::vocabulary::{self, Bound, Role};
use crate::schema::Dialect;
use crate::text::visible;
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

    /// An `enum` on one side and a `const` on the other that accept the same values
    /// (`enum: ["a"]` and `const: "a"`): reported once as rewritten, and `true`, so that neither
    /// keyword is reported alone as added or removed.
    fn listed_values_alike(
        &mut self,
        old: &Map<String, Value>,
        new: &Map<String, Value>,
        pointer: &str,
        path: &str,
    ) -> bool {
        let (Some((old_key, old_values)), Some((new_key, new_values))) =
            (listed_values(old), listed_values(new))
        else {
            return false;
        };
        let within =
            |a: &[&Value], b: &[&Value]| a.iter().all(|v| b.iter().any(|w| same_value(v, w)));
        if old_key == new_key
            || !within(&old_values, &new_values)
            || !within(&new_values, &old_values)
        {
            return false;
        }
        let (o, n) = (old.get(old_key), new.get(new_key));
        let message = format!(
            "{old_key} {} of {} rewritten as {new_key} {}, accepting the same values",
            short(o),
            self.subject(path),
            short(n)
        );
        let at = push_segment(pointer, new_key);
        self.push_class(
            ChangeCode::SchemaRewritten,
            ChangeClass::Compatible,
            &at,
            message,
            o,
            n,
        );
        true
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

    /// A `description` or `title` changed, shown as a word diff (security).
    pub(super) fn text_changed(
        &mut self,
        key: &str,
        o: Option<&Value>,
        n: Option<&Value>,
        at: &str,
        path: &str,
    ) {
        let text = |v: Option<&Value>| match v {
            Some(Value::String(s)) => s.clone(),
            Some(other) => other.to_string(),
            None => String::new(),
        };
        let (old, new) = (text(o), text(n));
        self.push_word_diff(
            ChangeCode::SchemaDescriptionChanged,
            key,
            (&old, &new),
            (o, n),
            at,
            path,
        );
    }

    /// A change of model-visible text at `at`, shown as a word diff of `texts` (security).
    pub(super) fn push_word_diff(
        &mut self,
        code: ChangeCode,
        key: &str,
        (old, new): (&str, &str),
        (o, n): (Option<&Value>, Option<&Value>),
        at: &str,
        path: &str,
    ) {
        let message = format!(
            "{key} of {} changed: {}",
            self.subject(path),
            word_diff(old, new)
        );
        self.push_class(code, ChangeClass::Security, at, message, o, n);
    }

    /// Another annotation changed: `default`, `examples`, `$comment`, an unknown keyword
    /// (security).
    pub(super) fn annotation_changed(
        &mut self,
        key: &str,
        o: Option<&Value>,
        n: Option<&Value>,
        at: &str,
        path: &str,
    ) {
        // New text is shown whole, as a description is: cut, it could hide what follows.
        let after = match n {
            Some(value) => shown(value),
            None => short(n),
        };
        let message = format!(
            "{key} of {} changed from {} to {after}",
            self.subject(path),
            short(o),
        );
        self.push_class(
            ChangeCode::SchemaAnnotationChanged,
            ChangeClass::Security,
            at,
            message,
            o,
            n,
        );
    }

    /// Where an `unevaluatedProperties` or `unevaluatedItems` applies, a keyword that evaluates
    /// members (items) is more than a declaration: the members it evaluated and no other keyword
    /// does are left to the `unevaluated*` keyword, which may refuse them. Reports, as breaking, a
    /// change that may take evaluation away, and says whether it did.
    fn evaluation_lost(
        &mut self,
        key: &str,
        o: Option<&Value>,
        n: Option<&Value>,
        at: &str,
        path: &str,
    ) -> bool {
        let (around, here) = (self.location.around, self.location.here);
        // Gone, and it evaluated something (`false` refused what it saw instead).
        let removed = o.is_some_and(|v| !is_false_schema(v)) && n.is_none();
        let (properties, items) = match key {
            "additionalProperties" => (here.properties && removed, false),
            "unevaluatedProperties" => (around.properties && removed, false),
            "items" | "additionalItems" | "contains" => (false, here.items && removed),
            "unevaluatedItems" => (false, around.items && removed),
            "allOf" | "anyOf" | "oneOf" | "dependentSchemas" | "$ref" | "$dynamicRef"
            | "$recursiveRef" => (here.properties && removed, here.items && removed),
            // `if` evaluates whatever it sees when it holds, even without `then` or `else`; which
            // members it (and so `then` or `else`) evaluates may differ after any change.
            "if" | "then" | "else" => (here.properties, here.items),
            _ => (false, false),
        };
        if !properties && !items {
            return false;
        }
        let subject = self.subject(path);
        let (code, message) = match (o, n) {
            (Some(_), None) => (
                ChangeCode::ConstraintRemoved,
                format!("{key} {} removed from {subject}", short(o)),
            ),
            (None, _) => (
                ChangeCode::ConstraintAdded,
                format!("{key} {} added to {subject}", short(n)),
            ),
            (Some(_), Some(_)) => (
                ChangeCode::ConstraintChanged,
                format!(
                    "{key} of {subject} changed from {} to {}",
                    short(o),
                    short(n)
                ),
            ),
        };
        let message = format!("{message}: {}", self.left_unevaluated(properties, items));
        self.push(code, Effect::Changes, at, message, o.cloned(), n.cloned());
        true
    }

    /// Why a change that may take evaluation away is breaking, for messages.
    fn left_unevaluated(&self, properties: bool, items: bool) -> &'static str {
        let Unevaluated {
            properties: p,
            items: i,
        } = self.location.here;
        match (properties && p, items && i) {
            (true, false) => {
                "members it evaluated may now be left to unevaluatedProperties, which may refuse them"
            }
            (false, true) => {
                "items it evaluated may now be left to unevaluatedItems, which may refuse them"
            }
            _ => {
                "members and items it evaluated may now be left to unevaluatedProperties and \
                 unevaluatedItems, which may refuse them"
            }
        }
    }

    fn types(&mut self, o: Option<&Value>, n: Option<&Value>, at: &str, path: &str) {
        let malformed = |v: Option<&Value>| match v {
            None | Some(Value::String(_)) => false,
            Some(Value::Array(types)) => !types.iter().all(Value::is_string),
            Some(_) => true,
        };
        if malformed(o) || malformed(n) {
            return self.constraint("type", o, n, at, path);
        }
        let old = type_set(o);
        let new = type_set(n);
        let covered = |set: &Option<Vec<String>>, t: &str| match set {
            None => true,
            Some(set) => set
                .iter()
                .any(|s| s == t || (t == "integer" && s == "number")),
        };
        let all_covered = |from: &Option<Vec<String>>, by: &Option<Vec<String>>| match from {
            None => by.is_none(),
            Some(types) => types.iter().all(|t| covered(by, t)),
        };
        let narrower = all_covered(&new, &old);
        let wider = all_covered(&old, &new);
        let (code, effect, verb) = match (narrower, wider) {
            (true, true) => return,
            (true, false) => (ChangeCode::TypeNarrowed, Effect::Narrows, "narrowed"),
            (false, true) => (ChangeCode::TypeWidened, Effect::Widens, "widened"),
            (false, false) => (ChangeCode::TypeChanged, Effect::Changes, "changed"),
        };
        let message = format!(
            "type of {} {verb} from {} to {}",
            self.subject(path),
            show_types(&old),
            show_types(&new)
        );
        self.push(code, effect, at, message, o.cloned(), n.cloned());
    }

    fn properties(
        &mut self,
        old: &Map<String, Value>,
        new: &Map<String, Value>,
        at: &str,
        path: &str,
        depth: usize,
    ) {
        let not_map = |m: &Map<String, Value>| m.get("properties").is_some_and(|p| !p.is_object());
        if not_map(old) || not_map(new) {
            return self.constraint(
                "properties",
                old.get("properties"),
                new.get("properties"),
                at,
                path,
            );
        }
        let empty = Map::new();
        let old_props = old
            .get("properties")
            .and_then(Value::as_object)
            .unwrap_or(&empty);
        let new_props = new
            .get("properties")
            .and_then(Value::as_object)
            .unwrap_or(&empty);
        let old_required = required_names(old);
        let new_required = required_names(new);
        let names = union_keys(old_props, new_props);
        for name in names {
            let member_at = push_segment(at, name);
            let member_path = join(path, name);
            match (old_props.get(name.as_str()), new_props.get(name.as_str())) {
                (Some(o), Some(n)) => self.compare(o, n, &member_at, &member_path, depth + 1),
                (None, Some(n)) => {
                    self.property_added(name, n, old, &new_required, &member_at, &member_path);
                    self.new_text(n, &member_at, &member_path, depth + 1, &BTreeSet::new());
                }
                (Some(o), None) => {
                    // Its values now meet what the object says of undeclared members.
                    let rest = self.undeclared(new);
                    let was_required = old_required.contains(name.as_str());
                    let subject = self.subject(&member_path);
                    let (class, why) = match (self.direction, rest) {
                        (Direction::Input, Undeclared::Refused) => (
                            ChangeClass::Breaking,
                            "the object is closed: callers that send it are refused",
                        ),
                        (Direction::Input, Undeclared::Anything) => (
                            ChangeClass::Compatible,
                            "the object is open: it is no longer checked",
                        ),
                        (Direction::Input, Undeclared::Checked) => (
                            ChangeClass::Breaking,
                            "its values now meet what the object allows of undeclared members, \
                             which may refuse them",
                        ),
                        (Direction::Input, Undeclared::Unevaluated) => (
                            ChangeClass::Breaking,
                            "its values now meet unevaluatedProperties unless another keyword \
                             evaluates it, which may refuse them",
                        ),
                        (Direction::Output, _) if was_required => (
                            ChangeClass::Breaking,
                            "it was required: results promised it",
                        ),
                        (Direction::Output, Undeclared::Anything) => (
                            ChangeClass::Breaking,
                            "the object is open: its values are no longer promised",
                        ),
                        (Direction::Output, Undeclared::Checked) => (
                            ChangeClass::Breaking,
                            "its values now meet only what the object allows of undeclared members",
                        ),
                        (Direction::Output, Undeclared::Unevaluated) => (
                            ChangeClass::Breaking,
                            "its values now meet only what unevaluatedProperties allows",
                        ),
                        (Direction::Output, Undeclared::Refused) => {
                            (ChangeClass::Compatible, "it was optional")
                        }
                    };
                    self.push_class(
                        ChangeCode::PropertyRemoved,
                        class,
                        &member_at,
                        format!("{subject} removed ({why})"),
                        Some(o),
                        None,
                    );
                }
                (None, None) => {}
            }
        }
    }

    /// A member `name` that `properties` of the new schema declares and of the old does not.
    fn property_added(
        &mut self,
        name: &str,
        n: &Value,
        old: &Map<String, Value>,
        new_required: &HashSet<&str>,
        at: &str,
        path: &str,
    ) {
        let subject = self.subject(path);
        if new_required.contains(name) {
            if required_names(old).contains(name) {
                // Required before without a declaration (any value): now it is checked.
                let message =
                    format!("{subject} declared with a schema (it was required, unchecked)");
                self.push(
                    ChangeCode::PropertyAdded,
                    Effect::Narrows,
                    at,
                    message,
                    None,
                    Some(n.clone()),
                );
            }
            // Otherwise a new required argument: reported with `required`.
            return;
        }
        // A name `propertyNames` listed, in an object that let undeclared members in, was
        // accepted with any value.
        let listed = self.undeclared(old) != Undeclared::Refused
            && listed_names(old).any(|listed| listed == name);
        if !is_anything(n) && (self.location.known_names.contains(name) || listed) {
            // Declared, required or named elsewhere at this location (beside a branch, in
            // another branch, by `propertyNames`): callers may send it, and its values must now
            // meet this schema.
            let message = format!(
                "{subject} declared with a schema here (callers could already send it: its \
                 values must now meet this schema too)"
            );
            self.push(
                ChangeCode::PropertyAdded,
                Effect::Narrows,
                at,
                message,
                None,
                Some(n.clone()),
            );
            return;
        }
        let message = match self.direction {
            Direction::Input => format!("new optional argument '{path}'"),
            Direction::Output => format!("new optional field '{path}'"),
        };
        // Its values met what the object allowed of undeclared members (a schema, patternProperties
        // entries, unevaluatedProperties); now they meet its own schema instead. In an object that
        // took any undeclared member, or none, a new optional member is compatible: callers do not
        // send what was never declared.
        // A patternProperties entry may have matched the name and let any value of it in.
        let patterns = old
            .get("patternProperties")
            .is_some_and(|p| p.as_object().is_none_or(|m| !m.is_empty()));
        let why = match self.undeclared(old) {
            _ if is_anything(n) => None,
            Undeclared::Anything if patterns => Some(
                "its values met what the object allowed of undeclared members; its own schema may \
                 refuse them",
            ),
            Undeclared::Checked => Some(
                "its values met what the object allowed of undeclared members; its own schema may \
                 refuse them",
            ),
            Undeclared::Unevaluated => Some(
                "unevaluatedProperties applies here: its values met what it allowed, or another \
                 keyword evaluated it; its own schema may refuse them",
            ),
            Undeclared::Anything | Undeclared::Refused => None,
        };
        match why {
            Some(why) => self.push(
                ChangeCode::PropertyAdded,
                Effect::Changes,
                at,
                format!("{message} ({why})"),
                None,
                Some(n.clone()),
            ),
            None => self.push_class(
                ChangeCode::PropertyAdded,
                ChangeClass::Compatible,
                at,
                message,
                None,
                Some(n),
            ),
        }
    }

    /// What an undeclared member of the object `schema` meets, counting an
    /// `unevaluatedProperties` of a schema that applies this one in place.
    fn undeclared(&self, schema: &Map<String, Value>) -> Undeclared {
        let rest = undeclared_members(schema);
        // `additionalProperties` or `unevaluatedProperties` that take anything evaluate every
        // member: none is left to the one around.
        let evaluates_all = ["additionalProperties", "unevaluatedProperties"]
            .iter()
            .any(|key| schema.get(*key).is_some_and(is_anything));
        if rest == Undeclared::Anything && self.location.around.properties && !evaluates_all {
            Undeclared::Unevaluated
        } else {
            rest
        }
    }

    fn required(
        &mut self,
        old: &Map<String, Value>,
        new: &Map<String, Value>,
        at: &str,
        path: &str,
    ) {
        let not_list = |m: &Map<String, Value>| {
            m.get("required").is_some_and(|r| {
                !r.as_array()
                    .is_some_and(|names| names.iter().all(Value::is_string))
            })
        };
        if not_list(old) || not_list(new) {
            return self.constraint(
                "required",
                old.get("required"),
                new.get("required"),
                at,
                path,
            );
        }
        let old_required = required_names(old);
        let new_required = required_names(new);
        let old_props = old.get("properties").and_then(Value::as_object);
        let new_props = new.get("properties").and_then(Value::as_object);
        let declared = |props: Option<&Map<String, Value>>, name: &str| {
            props.is_some_and(|p| p.contains_key(name))
        };
        for name in ordered(new, &new_required) {
            if old_required.contains(name) {
                continue;
            }
            let member_path = join(path, name);
            let is_new = declared(new_props, name) && !declared(old_props, name);
            let message = match (self.direction, is_new) {
                (Direction::Input, true) => format!("new required argument '{member_path}'"),
                (Direction::Output, true) => format!("new required field '{member_path}'"),
                (_, false) => format!("{} is now required", self.subject(&member_path)),
            };
            self.push(
                ChangeCode::RequiredAdded,
                Effect::Narrows,
                at,
                message,
                None,
                Some(Value::String(name.to_string())),
            );
        }
        for name in ordered(old, &old_required) {
            // A removed argument is reported as removed.
            if new_required.contains(name)
                || (declared(old_props, name) && !declared(new_props, name))
            {
                continue;
            }
            let member_path = join(path, name);
            let message = match self.direction {
                Direction::Input => format!("{} is no longer required", self.subject(&member_path)),
                Direction::Output => format!(
                    "{} is no longer required: results may leave it out",
                    self.subject(&member_path)
                ),
            };
            self.push(
                ChangeCode::RequiredRemoved,
                Effect::Widens,
                at,
                message,
                Some(Value::String(name.to_string())),
                None,
            );
        }
    }

    fn openness(
        &mut self,
        key: &str,
        o: Option<&Value>,
        n: Option<&Value>,
        at: &str,
        path: &str,
        depth: usize,
    ) {
        let (o_any, n_any) = (or_anything(o), or_anything(n));
        let parent = path
            .strip_suffix(".*")
            .or_else(|| path.strip_suffix('*'))
            .unwrap_or("");
        match (is_false_schema(o_any), is_false_schema(n_any)) {
            (false, true) => {
                let message = format!(
                    "{} is now closed ({key}: false): undeclared members are refused",
                    self.object_subject(parent)
                );
                self.push(
                    ChangeCode::ObjectClosed,
                    Effect::Narrows,
                    at,
                    message,
                    o.cloned(),
                    n.cloned(),
                );
            }
            (true, false) => {
                let message = format!(
                    "{} is now open ({key} {}): undeclared members are accepted",
                    self.object_subject(parent),
                    if n.is_some() {
                        "allows them"
                    } else {
                        "removed"
                    }
                );
                self.push(
                    ChangeCode::ObjectOpened,
                    Effect::Widens,
                    at,
                    message,
                    o.cloned(),
                    n.cloned(),
                );
            }
            _ => self.compare(o_any, n_any, at, path, depth + 1),
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn items(
        &mut self,
        o: Option<&Value>,
        n: Option<&Value>,
        old: &Map<String, Value>,
        new: &Map<String, Value>,
        at: &str,
        path: &str,
        depth: usize,
    ) {
        match (o, n) {
            (Some(Value::Array(_)), Some(Value::Array(_))) => {
                let rest = [old.get("additionalItems"), new.get("additionalItems")];
                self.tuple("items", o, n, rest, at, path, depth)
            }
            (Some(Value::Array(_)), _) | (_, Some(Value::Array(_))) => {
                self.constraint("items", o, n, at, path)
            }
            _ => self.compare(
                or_anything(o),
                or_anything(n),
                at,
                &join(path, "[]"),
                depth + 1,
            ),
        }
    }

    /// `prefixItems` (or `items` as a list), item by item. `rest` is what the old and the new
    /// schema say of the items after the list (`items`, or `additionalItems`), which an item
    /// meets once the list no longer reaches it.
    #[allow(clippy::too_many_arguments)]
    fn tuple(
        &mut self,
        key: &str,
        o: Option<&Value>,
        n: Option<&Value>,
        rest: [Option<&Value>; 2],
        at: &str,
        path: &str,
        depth: usize,
    ) {
        let empty = Vec::new();
        let old = o.and_then(Value::as_array).unwrap_or(&empty);
        let new = n.and_then(Value::as_array).unwrap_or(&empty);
        if (o.is_some() && !o.is_some_and(Value::is_array))
            || (n.is_some() && !n.is_some_and(Value::is_array))
        {
            return self.constraint(key, o, n, at, path);
        }
        let [old_rest, new_rest] = rest.map(|r| r.filter(|r| !r.is_array()));
        for i in 0..old.len().max(new.len()) {
            let item_path = format!("{path}[{i}]");
            let item_at = format!("{at}/{i}");
            let (a, b) = (old.get(i), new.get(i));
            if let (Some(a), None, None) = (a, b, new_rest) {
                if self.location.here.items {
                    // Nothing evaluates the item any more.
                    let message = format!(
                        "{key} entry {} removed from {}: {}",
                        short(Some(a)),
                        self.subject(&item_path),
                        self.left_unevaluated(false, true)
                    );
                    self.push(
                        ChangeCode::ConstraintRemoved,
                        Effect::Changes,
                        &item_at,
                        message,
                        Some(a.clone()),
                        None,
                    );
                    continue;
                }
            }
            self.compare(
                a.or(old_rest).unwrap_or(&ANYTHING),
                b.or(new_rest).unwrap_or(&ANYTHING),
                &item_at,
                &item_path,
                depth + 1,
            );
        }
    }

    fn enumeration(&mut self, o: Option<&Value>, n: Option<&Value>, at: &str, path: &str) {
        let subject = self.subject(path);
        match (o.and_then(Value::as_array), n.and_then(Value::as_array)) {
            (Some(old), Some(new)) => {
                for value in old.iter().filter(|v| !new.iter().any(|w| same_value(v, w))) {
                    let message =
                        format!("enum value {} removed from {subject}", short(Some(value)));
                    self.push(
                        ChangeCode::EnumValueRemoved,
                        Effect::Narrows,
                        at,
                        message,
                        Some(value.clone()),
                        None,
                    );
                }
                for value in new.iter().filter(|v| !old.iter().any(|w| same_value(v, w))) {
                    let message = format!("enum value {} added to {subject}", shown(value));
                    self.push_values(
                        ChangeCode::EnumValueAdded,
                        Effect::Widens,
                        at,
                        message,
                        None,
                        Some(value),
                    );
                }
            }
            (None, Some(_)) if o.is_none() => {
                let message = format!("{subject} is now limited to the enum values {}", short(n));
                self.push_values(
                    ChangeCode::EnumValueRemoved,
                    Effect::Narrows,
                    at,
                    message,
                    None,
                    n,
                );
            }
            (Some(_), None) if n.is_none() => {
                let message =
                    format!("enum of {subject} removed: any value of its type is accepted");
                self.push(
                    ChangeCode::EnumValueAdded,
                    Effect::Widens,
                    at,
                    message,
                    o.cloned(),
                    None,
                );
            }
            _ => self.constraint("enum", o, n, at, path),
        }
    }

    fn branches(
        &mut self,
        key: &str,
        o: Option<&Value>,
        n: Option<&Value>,
        at: &str,
        path: &str,
        depth: usize,
    ) {
        let (Some(Value::Array(old)), Some(Value::Array(new))) = (o, n) else {
            return self.constraint(key, o, n, at, path);
        };
        let mut new_matched = vec![false; new.len()];
        let mut old_unmatched = Vec::new();
        for (i, branch) in old.iter().enumerate() {
            match (0..new.len()).find(|&j| !new_matched[j] && same_value(branch, &new[j])) {
                Some(j) => new_matched[j] = true,
                None => old_unmatched.push(i),
            }
        }
        let new_unmatched: Vec<usize> = (0..new.len()).filter(|&j| !new_matched[j]).collect();
        // A value is accepted by oneOf when exactly one branch accepts it: a branch that accepts
        // more, or a new one, may make a value match two branches and be refused; a branch that
        // accepts less, or one removed, may leave a value that matched two with one, accepted.
        // Unless the branches are proved disjoint, any change of what a branch accepts is
        // breaking both ways.
        let one = key == "oneOf";
        if old_unmatched.len() == new_unmatched.len() {
            let first = self.changes.len();
            for (&i, &j) in old_unmatched.iter().zip(&new_unmatched) {
                self.compare_in_place(&old[i], &new[j], &format!("{at}/{j}"), path, depth + 1);
            }
            if one {
                for change in &mut self.changes[first..] {
                    let same_values = change.code == ChangeCode::SchemaRewritten;
                    if change.class == ChangeClass::Compatible && !same_values {
                        change.class = ChangeClass::Breaking;
                        change.message.push_str(ONE_OF_COUNTS);
                    }
                }
            }
            return;
        }
        // More branches of anyOf accept more; more branches of allOf accept less.
        let all = key == "allOf";
        let subject = self.subject(path);
        for &j in &new_unmatched {
            let (code, effect) = if all {
                (ChangeCode::BranchRemoved, Effect::Narrows)
            } else if one {
                (ChangeCode::BranchAdded, Effect::Changes)
            } else {
                (ChangeCode::BranchAdded, Effect::Widens)
            };
            let mut message = format!("{key} branch {} added to {subject}", short(Some(&new[j])));
            if one {
                message.push_str(ONE_OF_COUNTS);
            }
            let branch_at = format!("{at}/{j}");
            self.push(
                code,
                effect,
                &branch_at,
                message,
                None,
                Some(new[j].clone()),
            );
            let known = Rc::clone(&self.location.known_names);
            self.new_text(&new[j], &branch_at, path, depth + 1, &known);
        }
        for &i in &old_unmatched {
            // Under unevaluated*, an allOf branch that goes may take with it the evaluation of
            // members that are then refused.
            let unevaluated = all && self.location.here.any();
            let (code, effect) = if unevaluated {
                (ChangeCode::BranchAdded, Effect::Changes)
            } else if all {
                (ChangeCode::BranchAdded, Effect::Widens)
            } else if one {
                (ChangeCode::BranchRemoved, Effect::Changes)
            } else {
                (ChangeCode::BranchRemoved, Effect::Narrows)
            };
            let mut message = format!(
                "{key} branch {} removed from {subject}",
                short(Some(&old[i]))
            );
            if one && self.direction == Direction::Output {
                message.push_str(ONE_OF_COUNTS);
            }
            if unevaluated {
                message = format!("{message}: {}", self.left_unevaluated(true, true));
            }
            self.push(
                code,
                effect,
                &format!("{at}/{i}"),
                message,
                Some(old[i].clone()),
                None,
            );
        }
    }

    fn pattern_or_format(
        &mut self,
        key: &str,
        o: Option<&Value>,
        n: Option<&Value>,
        at: &str,
        path: &str,
    ) {
        let pattern = key == "pattern";
        let subject = self.subject(path);
        let (code, effect, message) = match (o, n) {
            (None, Some(_)) => (
                if pattern {
                    ChangeCode::PatternAdded
                } else {
                    ChangeCode::FormatAdded
                },
                Effect::Narrows,
                format!("{key} {} added to {subject}", short(n)),
            ),
            (Some(_), None) => (
                if pattern {
                    ChangeCode::PatternRemoved
                } else {
                    ChangeCode::FormatRemoved
                },
                Effect::Widens,
                format!("{key} {} removed from {subject}", short(o)),
            ),
            _ => (
                if pattern {
                    ChangeCode::PatternChanged
                } else {
                    ChangeCode::FormatChanged
                },
                Effect::Changes,
                format!(
                    "{key} of {subject} changed from {} to {}",
                    short(o),
                    short(n)
                ),
            ),
        };
        self.push(code, effect, at, message, o.cloned(), n.cloned());
    }

    fn bound(&mut self, key: &str, o: Option<&Value>, n: Option<&Value>, at: &str, path: &str) {
        // A length or count of at least 0 is no bound at all.
        let counts_from_zero = matches!(key, "minLength" | "minItems" | "minProperties");
        let no_bound = |v: &Option<Option<&serde_json::Number>>| {
            counts_from_zero
                && v.flatten()
                    .is_some_and(|n| compare_numbers(n, &0.into()) == Some(Ordering::Equal))
        };
        let (old_bound, new_bound) = (o.map(Value::as_number), n.map(Value::as_number));
        let old_bound = if no_bound(&old_bound) {
            None
        } else {
            old_bound
        };
        let new_bound = if no_bound(&new_bound) {
            None
        } else {
            new_bound
        };
        let upper = vocabulary::lookup(key).is_some_and(|k| k.bound == Some(Bound::Upper));
        let effect = match (old_bound, new_bound) {
            (Some(None), _) | (_, Some(None)) => return self.constraint(key, o, n, at, path),
            (None, Some(_)) => Effect::Narrows,
            (Some(_), None) => Effect::Widens,
            // Compared exactly: 2^53 + 1 and 2^53 are one 64-bit float but two bounds.
            (Some(Some(a)), Some(Some(b))) => match compare_numbers(a, b) {
                Some(Ordering::Equal) => return,
                Some(Ordering::Greater) if upper => Effect::Narrows,
                Some(Ordering::Less) if !upper => Effect::Narrows,
                Some(_) => Effect::Widens,
                None => Effect::Changes,
            },
            (None, None) => return,
        };
        let (code, verb) = match effect {
            Effect::Narrows => (ChangeCode::BoundTightened, "tightened"),
            Effect::Widens => (ChangeCode::BoundLoosened, "loosened"),
            Effect::Changes => (ChangeCode::ConstraintChanged, "changed"),
        };
        let show = |v: Option<&Value>| v.map_or("none".to_string(), |v| short(Some(v)));
        let message = format!(
            "{key} of {} {verb} from {} to {}",
            self.subject(path),
            show(o),
            show(n)
        );
        self.push(code, effect, at, message, o.cloned(), n.cloned());
    }

    fn constraint(
        &mut self,
        key: &str,
        o: Option<&Value>,
        n: Option<&Value>,
        at: &str,
        path: &str,
    ) {
        let subject = self.subject(path);
        // `uniqueItems: false` is the same as no `uniqueItems`.
        let o = o.filter(|v| !(key == "uniqueItems" && **v == Value::Bool(false)));
        let n = n.filter(|v| !(key == "uniqueItems" && **v == Value::Bool(false)));
        let (code, effect, message) = match (o, n) {
            (None, None) => return,
            (None, Some(value)) if key == "const" => {
                let message = format!("{key} {} added to {subject}", shown(value));
                return self.push_values(
                    ChangeCode::ConstraintAdded,
                    Effect::Narrows,
                    at,
                    message,
                    None,
                    Some(value),
                );
            }
            (None, Some(_)) => (
                ChangeCode::ConstraintAdded,
                Effect::Narrows,
                format!("{key} {} added to {subject}", short(n)),
            ),
            // A `$ref` left as written (recursive, unresolved, or in a dialect toolschema does
            // not know) may be what made the keywords beside it ignored (draft-07 and older):
            // without it they may apply.
            (Some(_), None) if vocabulary::is_reference(key) => (
                ChangeCode::ConstraintRemoved,
                Effect::Changes,
                format!(
                    "{key} {} removed from {subject} (keywords beside it may now apply)",
                    short(o)
                ),
            ),
            (Some(_), None) => (
                ChangeCode::ConstraintRemoved,
                Effect::Widens,
                format!("{key} {} removed from {subject}", short(o)),
            ),
            (Some(a), Some(b)) => {
                let effect = match (key, a.as_f64(), b.as_f64()) {
                    // A multiple of a multiple accepts less; of a divisor, more.
                    ("multipleOf", Some(a), Some(b)) if a > 0.0 && b > 0.0 => {
                        if (b / a).fract() == 0.0 {
                            Effect::Narrows
                        } else if (a / b).fract() == 0.0 {
                            Effect::Widens
                        } else {
                            Effect::Changes
                        }
                    }
                    _ => Effect::Changes,
                };
                (
                    ChangeCode::ConstraintChanged,
                    effect,
                    format!(
                        "{key} of {subject} changed from {} to {}",
                        short(o),
                        short(n)
                    ),
                )
            }
        };
        self.push(code, effect, at, message, o.cloned(), n.cloned());
    }

    /// `patternProperties`, entry by entry: a member a removed entry matched now meets what
    /// the object says of undeclared members, and a new entry may let members into a closed
    /// object as well as check those it matches.
    fn patterns(
        &mut self,
        o: Option<&Value>,
        n: Option<&Value>,
        new_schema: &Map<String, Value>,
        at: &str,
        path: &str,
        depth: usize,
    ) {
        let empty = Map::new();
        let (old, new) = (
            o.map_or(Some(&empty), Value::as_object),
            n.map_or(Some(&empty), Value::as_object),
        );
        let (Some(old), Some(new)) = (old, new) else {
            return self.constraint("patternProperties", o, n, at, path);
        };
        let rest = self.undeclared(new_schema);
        let subject = self.object_subject(path);
        for name in union_keys(old, new) {
            let member_at = push_segment(at, name);
            let pattern = visible(name);
            let (a, b) = (old.get(name.as_str()), new.get(name.as_str()));
            let (code, effect, message) = match (a, b) {
                (Some(a), Some(b)) => {
                    self.compare(a, b, &member_at, path, depth + 1);
                    continue;
                }
                (None, None) => continue,
                (Some(_), None) if rest == Undeclared::Anything => (
                    ChangeCode::ConstraintRemoved,
                    Effect::Widens,
                    format!("patternProperties '{pattern}' removed from {subject}"),
                ),
                (Some(_), None) => (
                    ChangeCode::ConstraintChanged,
                    Effect::Changes,
                    format!(
                        "patternProperties '{pattern}' removed from {subject}: the members it \
                         matched now meet what the object allows of undeclared members{}",
                        match rest {
                            Undeclared::Refused => " (none)",
                            Undeclared::Unevaluated => " (unevaluatedProperties)",
                            Undeclared::Anything | Undeclared::Checked => "",
                        }
                    ),
                ),
                (None, Some(_)) if rest == Undeclared::Anything => (
                    ChangeCode::ConstraintAdded,
                    Effect::Narrows,
                    format!("patternProperties '{pattern}' added to {subject}"),
                ),
                (None, Some(_)) => (
                    ChangeCode::ConstraintChanged,
                    Effect::Changes,
                    format!(
                        "patternProperties '{pattern}' added to {subject}: members it matches \
                         are now checked by it, not by what the object allows of undeclared members"
                    ),
                ),
            };
            self.push(code, effect, &member_at, message, a.cloned(), b.cloned());
            if let (None, Some(b)) = (a, b) {
                self.new_text(b, &member_at, path, depth + 1, &BTreeSet::new());
            }
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn members(
        &mut self,
        key: &str,
        o: Option<&Value>,
        n: Option<&Value>,
        at: &str,
        path: &str,
        depth: usize,
        definitions: bool,
    ) {
        let empty = Value::Object(Map::new());
        let (o_or_empty, n_or_empty) = if definitions {
            (o.or(Some(&empty)), n.or(Some(&empty)))
        } else {
            (o, n)
        };
        let (Some(Value::Object(old)), Some(Value::Object(new))) = (o_or_empty, n_or_empty) else {
            if definitions {
                let message = format!("{key} of {} changed", self.subject(path));
                return self.push_class(
                    ChangeCode::SchemaAnnotationChanged,
                    ChangeClass::Security,
                    at,
                    message,
                    o,
                    n,
                );
            }
            return self.constraint(key, o, n, at, path);
        };
        let names = union_keys(old, new);
        for name in names {
            let member_at = push_segment(at, name);
            match (old.get(name.as_str()), new.get(name.as_str())) {
                (Some(a), Some(b)) if definitions => {
                    self.compare(a, b, &member_at, path, depth + 1)
                }
                (Some(a), Some(b)) => self.compare_in_place(a, b, &member_at, path, depth + 1),
                (a, b) if definitions => {
                    // A definition no `$ref` uses only adds text the model may read.
                    let message = format!(
                        "unused definition '{}' {} in {}",
                        visible(name),
                        if a.is_some() { "removed" } else { "added" },
                        self.subject(path)
                    );
                    self.push_class(
                        ChangeCode::SchemaAnnotationChanged,
                        ChangeClass::Security,
                        &member_at,
                        message,
                        a,
                        b,
                    );
                    if let (None, Some(b)) = (a, b) {
                        self.new_text(b, &member_at, path, depth + 1, &BTreeSet::new());
                    }
                }
                (Some(a), None) if self.location.here.any() => {
                    let message = format!(
                        "{key} '{}' {} removed from {}: {}",
                        visible(name),
                        short(Some(a)),
                        self.subject(path),
                        self.left_unevaluated(true, true)
                    );
                    self.push(
                        ChangeCode::ConstraintRemoved,
                        Effect::Changes,
                        &member_at,
                        message,
                        Some(a.clone()),
                        None,
                    );
                }
                (a, b) => {
                    self.constraint(
                        &format!("{key} '{}'", visible(name)),
                        a,
                        b,
                        &member_at,
                        path,
                    );
                    if let (None, Some(b)) = (a, b) {
                        // A `dependentSchemas` entry applies in place: names known here stay so.
                        let known = Rc::clone(&self.location.known_names);
                        self.new_text(b, &member_at, path, depth + 1, &known);
                    }
                }
            }
        }
    }

    /// How the argument or output field at `path` is named in messages.
    pub(super) fn subject(&self, path: &str) -> String {
        match (path.is_empty(), self.direction) {
            (true, Direction::Input) => "the input schema".into(),
            (true, Direction::Output) => "the output schema".into(),
            (false, Direction::Input) => format!("argument '{}'", visible(path)),
            (false, Direction::Output) => format!("field '{}'", visible(path)),
        }
    }

    /// How the object at `path` is named in messages.
    fn object_subject(&self, path: &str) -> String {
        if path.is_empty() {
            self.subject(path)
        } else {
            format!("the object {}", self.subject(path))
        }
    }

    fn push(
        &mut self,
        code: ChangeCode,
        effect: Effect,
        pointer: &str,
        message: String,
        before: Option<Value>,
        after: Option<Value>,
    ) {
        self.changes.push(Change {
            tool: self.tool.to_string(),
            class: class_of(effect, self.direction),
            code,
            pointer: pointer.to_string(),
            message,
            before,
            after,
        });
    }

    /// A change that brings values the model reads (`enum`, `const`): when a value holds text,
    /// it is a security change unless it is breaking (decided once the whole schema is read:
    /// under `oneOf` a compatible change becomes breaking).
    fn push_values(
        &mut self,
        code: ChangeCode,
        effect: Effect,
        pointer: &str,
        message: String,
        before: Option<&Value>,
        after: Option<&Value>,
    ) {
        if after.is_some_and(holds_text) {
            self.bring_text.push(self.changes.len());
        }
        self.push(
            code,
            effect,
            pointer,
            message,
            before.cloned(),
            after.cloned(),
        );
    }

    pub(super) fn push_class(
        &mut self,
        code: ChangeCode,
        class: ChangeClass,
        pointer: &str,
        message: String,
        before: Option<&Value>,
        after: Option<&Value>,
    ) {
        let change = Change::new(self.tool, class, code, pointer, message, before, after);
        self.changes.push(change);
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

/// The values an `enum` alone or a `const` alone lists, with the keyword.
fn listed_values(schema: &Map<String, Value>) -> Option<(&'static str, Vec<&Value>)> {
    match (schema.get("enum"), schema.get("const")) {
        (Some(Value::Array(values)), None) => Some(("enum", values.iter().collect())),
        (None, Some(value)) => Some(("const", vec![value])),
        _ => None,
    }
}

/// Whether a schema accepts anything (`true`, `{}`).
fn is_anything(schema: &Value) -> bool {
    as_object_schema(schema).is_some_and(|m| m.is_empty())
}

/// What an object's members that `properties` does not declare must meet, as far as the diff
/// can tell without matching patterns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Undeclared {
    /// Any value (no `additionalProperties`, or `true`, `{}`): whatever a `patternProperties`
    /// entry that matches asks, it asks no more than a declaration did with it.
    Anything,
    /// Nothing: the object is closed and no `patternProperties` entry may let them in.
    Refused,
    /// A schema (`additionalProperties`, `patternProperties` entries): what it accepts is not
    /// known here.
    Checked,
    /// An `unevaluatedProperties` (here, beside keywords that evaluate members elsewhere, or in a
    /// schema that applies this one in place): what it accepts, and which members other
    /// keywords evaluate, is not known here.
    Unevaluated,
}

/// Whether `key` applies other schemas to the same object, whose members then count as evaluated
/// for `unevaluatedProperties`: a reference, or an in-place applicator but `not` (whose
/// annotations are dropped) and draft-07's `dependencies` (which the validator's
/// `unevaluatedProperties` does not look into).
fn evaluates_in_place(key: &str) -> bool {
    vocabulary::is_reference(key)
        || (!matches!(key, "not" | "dependencies") && vocabulary::role(key) == Some(Role::InPlace))
}

/// What an undeclared member of the object `schema` meets.
fn undeclared_members(schema: &Map<String, Value>) -> Undeclared {
    let rest = match schema.get("additionalProperties") {
        Some(additional) if is_false_schema(additional) => Undeclared::Refused,
        Some(additional) if !is_anything(additional) => Undeclared::Checked,
        // `additionalProperties` evaluates every member it sees: none is left unevaluated.
        Some(_) => Undeclared::Anything,
        None => match schema.get("unevaluatedProperties") {
            None => Undeclared::Anything,
            Some(unevaluated) if is_anything(unevaluated) => Undeclared::Anything,
            Some(unevaluated)
                if is_false_schema(unevaluated)
                    && !schema.keys().any(|k| evaluates_in_place(k)) =>
            {
                Undeclared::Refused
            }
            Some(_) => Undeclared::Unevaluated,
        },
    };
    let patterns = schema
        .get("patternProperties")
        .is_some_and(|p| p.as_object().is_none_or(|m| !m.is_empty()));
    match rest {
        Undeclared::Refused if patterns => Undeclared::Checked,
        rest => rest,
    }
}

/// The names a `propertyNames` of `enum` or `const` strings lists: the only member names the
/// object takes.
fn listed_names(schema: &Map<String, Value>) -> impl Iterator<Item = &str> {
    let names = schema.get("propertyNames").and_then(Value::as_object);
    let listed = names.and_then(|n| n.get("enum")).and_then(Value::as_array);
    let single = names.and_then(|n| n.get("const"));
    listed
        .into_iter()
        .flatten()
        .chain(single)
        .filter_map(Value::as_str)
}

fn required_names(schema: &Map<String, Value>) -> HashSet<&str> {
    schema
        .get("required")
        .and_then(Value::as_array)
        .map(|names| names.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default()
}

/// The names of `set` in the order `schema`'s `required` lists them, each once.
fn ordered<'a>(schema: &'a Map<String, Value>, set: &HashSet<&'a str>) -> Vec<&'a str> {
    let mut seen = HashSet::new();
    schema
        .get("required")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .filter(|n| set.contains(n) && seen.insert(*n))
        .collect()
}

/// The types a `type` keyword allows; `None` when any type is.
fn type_set(value: Option<&Value>) -> Option<Vec<String>> {
    match value? {
        Value::String(t) => Some(vec![t.clone()]),
        Value::Array(types) => Some(
            types
                .iter()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect(),
        ),
        _ => None,
    }
}

fn show_types(types: &Option<Vec<String>>) -> String {
    match types {
        None => "any".into(),
        Some(types) if types.is_empty() => "none".into(),
        Some(types) => visible(&types.join("|")),
    }
}

/// A path one level down: `options` + `depth` is `options.depth`.
pub(super) fn join(path: &str, name: &str) -> String {
    match (path.is_empty(), name) {
        (_, "[]") => format!("{path}[]"),
        (true, _) => name.to_string(),
        (false, _) => format!("{path}.{name}"),
    }
}

/// Whether a value holds text the model reads: a string, or an array or object with one (or
/// with a member name).
pub(super) fn holds_text(value: &Value) -> bool {
    let mut stack = vec![value];
    while let Some(value) = stack.pop() {
        match value {
            Value::String(_) => return true,
            Value::Object(map) if !map.is_empty() => return true,
            Value::Array(items) => stack.extend(items),
            _ => {}
        }
    }
    false
}

/// A value as canonical JSON for a message, hidden characters written out: in full when it holds
/// text the model reads (a change that brings it is there to show it), else as [`short`].
pub(super) fn shown(value: &Value) -> String {
    if !holds_text(value) {
        return short(Some(value));
    }
    let json = serde_json_canonicalizer::to_string(value).unwrap_or_else(|_| value.to_string());
    visible(&json)
}

/// Longest value shown in a message before it is cut.
const SHORT_LIMIT: usize = 80;

/// A value as canonical JSON (RFC 8785) for a message, hidden characters written out, cut at
/// [`SHORT_LIMIT`] characters.
pub(crate) fn short(value: Option<&Value>) -> String {
    let Some(value) = value else {
        return "(absent)".into();
    };
    // A number as written: canonical JSON writes numbers as 64-bit floats, which shows
    // 9007199254740993 as 9007199254740992.
    if let Value::Number(number) = value {
        return number.to_string();
    }
    // Canonical JSON (keys sorted): a message never depends on the order keys were written in.
    let json = serde_json_canonicalizer::to_string(value).unwrap_or_else(|_| value.to_string());
    crate::text::shorten(&visible(&json), SHORT_LIMIT)
}
