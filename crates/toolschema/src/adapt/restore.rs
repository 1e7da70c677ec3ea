//! Arguments between the two schemas: what a model sent for the adapted schema, mapped back to
//! what the server's original schema expects (and, for tests and previews, the other way).
//!
//! The walk follows the adapted schema alongside the arguments; where an `anyOf` offers several
//! branches, a branch whose shape fits the value is followed: the first by default, another when
//! the caller asks (several may fit one value, and only the original schema can tell which
//! reading is meant; see [`next_choices`]). A null strict mode sent for an optional property is
//! dropped as "not given" unless the original schema takes null there itself: such nulls are
//! kept where the caller, asking the original's validator, says so ([`Walker::run_keeping`]).

use crate::json::pointer::push_segment;
use crate::schema::document::Document;
use serde_json::{Map, Value};
use std::collections::BTreeSet;

/// What the adapted schema changed about the arguments' shape.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Plan {
    /// Adapted-schema pointers of objects, with the properties there that are optional in the
    /// original and that strict mode sends as `null`.
    pub optional: Vec<(String, Vec<String>)>,
    /// Of those, by the same pointers, the properties whose original schema takes `null`
    /// itself: a null sent there may be meant, and is kept where the original takes it.
    pub takes_null: Vec<(String, Vec<String>)>,
    /// Root properties the provider knows by another name: (provider name, original name).
    pub renamed: Vec<(String, String)>,
}

impl Plan {
    /// The first original parameter name that two keys of `arguments` (an object) both stand
    /// for: the provider's name for it and the original name itself. Mapping both back would
    /// keep one value and lose the other, so such a call cannot be restored.
    pub fn name_collision(&self, arguments: &Map<String, Value>) -> Option<(String, Vec<String>)> {
        if self.renamed.is_empty() {
            return None;
        }
        let mut seen: Vec<(&str, Vec<String>)> = Vec::new();
        for key in arguments.keys() {
            let original = self
                .renamed
                .iter()
                .find(|(provider, _)| provider == key)
                .map_or(key.as_str(), |(_, original)| original.as_str());
            match seen.iter_mut().find(|(o, _)| *o == original) {
                Some((_, keys)) => keys.push(key.clone()),
                None => seen.push((original, vec![key.clone()])),
            }
        }
        seen.into_iter()
            .find(|(_, keys)| keys.len() > 1)
            .map(|(original, keys)| (original.to_string(), keys))
    }

    fn optional_at(&self, pointer: &str) -> &[String] {
        names_at(&self.optional, pointer)
    }

    fn takes_null_at(&self, pointer: &str) -> &[String] {
        names_at(&self.takes_null, pointer)
    }
}

fn names_at<'p>(marked: &'p [(String, Vec<String>)], pointer: &str) -> &'p [String] {
    marked
        .iter()
        .find(|(p, _)| p == pointer)
        .map_or(&[], |(_, names)| names.as_slice())
}

#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Direction {
    /// Adapted -> original: nulls that stand for "not given" removed, names mapped back.
    Restore,
    /// Adapted -> original, names mapped back but every null kept (for a call whose nulls the
    /// original schema requires: a property several merged forms disagree on).
    RestoreKeepingNulls,
    /// Original -> adapted: "not given" written as null, names mapped, undeclared keys of closed
    /// objects left out.
    Shape,
}

/// Most `$ref`s followed without moving into the arguments, and most levels a branch is tried
/// to.
const MAX_HOPS: usize = 64;
/// Most levels of arguments walked (deeper values are left as they are; validation judges them).
const MAX_LEVELS: usize = 256;

/// Where a walk is: the adapted schema's pointer and the arguments' (as sent).
struct Place {
    schema: String,
    instance: String,
}

pub(crate) struct Walker<'a> {
    pub schema: &'a Value,
    pub plan: &'a Plan,
    pub direction: Direction,
}

/// The branch taken at each `anyOf` where more than one branch fits the value, in the order
/// the walk meets them; and the nulls of optional properties kept and dropped.
struct Choices<'c> {
    /// Index among the fitting branches wanted at each such `anyOf` (the first past the end).
    wanted: &'c [usize],
    /// How many branches fitted at each such `anyOf` the walk met.
    met: Vec<usize>,
    /// Where (JSON Pointers into the arguments) a null of an optional property is kept when
    /// restoring: the original schema takes it there.
    keep: &'c BTreeSet<String>,
    /// Where a null of an optional property was dropped when restoring.
    dropped: Vec<String>,
}

/// What one restoring walk did: how many branches fitted at each ambiguous `anyOf` (for
/// [`next_choices`]), and where it dropped a null the original may take (for the caller to try
/// keeping, with [`Walker::run_keeping`]).
pub(crate) struct Walked {
    pub met: Vec<usize>,
    pub dropped: Vec<String>,
}

impl Walker<'_> {
    /// Map `arguments` (the root object) in place, taking the first fitting branch of every
    /// `anyOf`.
    pub fn run(&self, arguments: &mut Value) {
        self.run_choosing(arguments, &[]);
    }

    /// Map `arguments` in place, taking at the k-th `anyOf` where several branches fit the
    /// `choices[k]`-th of them (the first past the end of `choices`). Returns how many branches
    /// fitted at each such `anyOf`, for [`next_choices`].
    pub fn run_choosing(&self, arguments: &mut Value, choices: &[usize]) -> Vec<usize> {
        self.run_keeping(arguments, choices, &BTreeSet::new()).met
    }

    /// [`Walker::run_choosing`], keeping, when restoring, the nulls of optional properties at
    /// the places in `keep` (JSON Pointers into the arguments as sent); says where it dropped
    /// the others.
    pub fn run_keeping(
        &self,
        arguments: &mut Value,
        choices: &[usize],
        keep: &BTreeSet<String>,
    ) -> Walked {
        let mut choices = Choices {
            wanted: choices,
            met: Vec::new(),
            keep,
            dropped: Vec::new(),
        };
        if self.direction == Direction::Shape {
            self.rename_root(arguments);
        }
        let at = Place {
            schema: String::new(),
            instance: String::new(),
        };
        self.walk(arguments, self.schema, at, 0, &mut choices);
        if self.direction != Direction::Shape {
            self.rename_root(arguments);
        }
        Walked {
            met: choices.met,
            dropped: choices.dropped,
        }
    }

    fn rename_root(&self, arguments: &mut Value) {
        if self.plan.renamed.is_empty() {
            return;
        }
        let Value::Object(map) = arguments else {
            return;
        };
        let old = std::mem::take(map);
        for (key, value) in old {
            let renamed =
                self.plan
                    .renamed
                    .iter()
                    .find_map(|(provider, original)| match self.direction {
                        Direction::Restore | Direction::RestoreKeepingNulls if *provider == key => {
                            Some(original.clone())
                        }
                        Direction::Shape if *original == key => Some(provider.clone()),
                        _ => None,
                    });
            map.insert(renamed.unwrap_or(key), value);
        }
    }

    /// The schema a `$ref` leads to, with its pointer (following at most [`MAX_HOPS`]).
    fn follow<'s>(&'s self, mut node: &'s Value, mut pointer: String) -> (&'s Value, String) {
        for _ in 0..MAX_HOPS {
            let Some(reference) = node.get("$ref").and_then(Value::as_str) else {
                break;
            };
            let Ok(target) = Document::new(self.schema).locate(reference) else {
                break;
            };
            node = target.value;
            pointer = target.pointer;
        }
        (node, pointer)
    }

    fn walk(
        &self,
        value: &mut Value,
        node: &Value,
        at: Place,
        level: usize,
        choices: &mut Choices<'_>,
    ) {
        if level > MAX_LEVELS {
            return;
        }
        let (node, pointer) = self.follow(node, at.schema);
        let instance = at.instance;
        let Some(schema) = node.as_object() else {
            return;
        };
        match value {
            Value::Object(map) => self.object(map, schema, &pointer, &instance, level, choices),
            Value::Array(items) => {
                let prefix = schema.get("prefixItems").and_then(Value::as_array);
                let prefix_len = prefix.map_or(0, Vec::len);
                for (i, item) in items.iter_mut().enumerate() {
                    let (sub, at) = match prefix.and_then(|p| p.get(i)) {
                        Some(sub) => (sub, format!("{pointer}/prefixItems/{i}")),
                        None => match schema.get("items") {
                            Some(sub) if sub.is_object() => (sub, format!("{pointer}/items")),
                            Some(Value::Array(list)) if i >= prefix_len => match list.get(i) {
                                Some(sub) => (sub, format!("{pointer}/items/{i}")),
                                None => continue,
                            },
                            _ => continue,
                        },
                    };
                    let at = Place {
                        schema: at,
                        instance: format!("{instance}/{i}"),
                    };
                    self.walk(item, sub, at, level + 1, choices);
                }
            }
            _ => {}
        }
        if let Some(Value::Array(branches)) = schema.get("anyOf") {
            let fitting: Vec<usize> = branches
                .iter()
                .enumerate()
                .filter(|(i, b)| self.fits(value, b, format!("{pointer}/anyOf/{i}"), 0))
                .map(|(i, _)| i)
                .collect();
            let chosen = match fitting.len() {
                0 => None,
                1 => Some(fitting[0]),
                n => {
                    let wanted = choices.wanted.get(choices.met.len()).copied();
                    choices.met.push(n);
                    Some(fitting[wanted.unwrap_or(0).min(n - 1)])
                }
            };
            if let Some(i) = chosen {
                let at = Place {
                    schema: format!("{pointer}/anyOf/{i}"),
                    instance,
                };
                self.walk(value, &branches[i], at, level + 1, choices);
            }
        }
    }

    fn object(
        &self,
        map: &mut Map<String, Value>,
        schema: &Map<String, Value>,
        pointer: &str,
        instance: &str,
        level: usize,
        choices: &mut Choices<'_>,
    ) {
        let optional = self.plan.optional_at(pointer);
        let properties = schema.get("properties").and_then(Value::as_object);
        match self.direction {
            Direction::Restore => {
                // A null strict mode sent for "not given" goes, unless the original schema
                // takes a null there and the caller keeps it (then the null may be meant).
                let takes_null = self.plan.takes_null_at(pointer);
                map.retain(|k, v| {
                    if !(v.is_null() && optional.contains(k)) {
                        return true;
                    }
                    if !takes_null.contains(k) {
                        return false;
                    }
                    let place = push_segment(instance, k);
                    if choices.keep.contains(&place) {
                        return true;
                    }
                    choices.dropped.push(place);
                    false
                });
            }
            Direction::RestoreKeepingNulls => {}
            Direction::Shape => {
                if let Some(properties) = properties {
                    if schema.get("additionalProperties") == Some(&Value::Bool(false)) {
                        map.retain(|k, _| properties.contains_key(k));
                    }
                }
                for name in optional {
                    if !map.contains_key(name) {
                        map.insert(name.clone(), Value::Null);
                    }
                }
            }
        }
        let Some(properties) = properties else {
            return;
        };
        let base = push_segment(pointer, "properties");
        for (key, child) in map.iter_mut() {
            if let Some(sub) = properties.get(key) {
                let at = Place {
                    schema: push_segment(&base, key),
                    instance: push_segment(instance, key),
                };
                self.walk(child, sub, at, level + 1, choices);
            }
        }
    }

    /// Whether `value` has the shape of `node` (types, enum, const, for objects the names
    /// required and allowed, and the same of their members and items); a structural test to
    /// pick an `anyOf` branch, not a validation.
    fn fits(&self, value: &Value, node: &Value, pointer: String, hops: usize) -> bool {
        if hops > MAX_HOPS {
            return false;
        }
        let (node, pointer) = self.follow(node, pointer);
        let schema = match node {
            Value::Bool(b) => return *b,
            Value::Object(map) => map,
            _ => return false,
        };
        let nullable = schema.get("nullable") == Some(&Value::Bool(true));
        if value.is_null() && nullable {
            return true;
        }
        match schema.get("type") {
            Some(Value::String(t)) if !type_fits(value, t) => return false,
            Some(Value::Array(list))
                if !list
                    .iter()
                    .any(|t| t.as_str().is_some_and(|t| type_fits(value, t))) =>
            {
                return false
            }
            _ => {}
        }
        if let Some(Value::Array(values)) = schema.get("enum") {
            if !values.contains(value) {
                return false;
            }
        }
        if let Some(constant) = schema.get("const") {
            if constant != value {
                return false;
            }
        }
        if let Value::Array(items) = value {
            let prefix = schema.get("prefixItems").and_then(Value::as_array);
            for (i, item) in items.iter().enumerate() {
                let (sub, at) = match prefix.and_then(|p| p.get(i)) {
                    Some(sub) => (sub, format!("{pointer}/prefixItems/{i}")),
                    None => match schema.get("items") {
                        Some(sub) if !sub.is_array() => (sub, format!("{pointer}/items")),
                        _ => continue,
                    },
                };
                if !self.fits(item, sub, at, hops + 1) {
                    return false;
                }
            }
        }
        if let Value::Object(map) = value {
            if let Some(Value::Object(properties)) = schema.get("properties") {
                let base = push_segment(&pointer, "properties");
                for (key, item) in map {
                    if let Some(sub) = properties.get(key) {
                        if !self.fits(item, sub, push_segment(&base, key), hops + 1) {
                            return false;
                        }
                    }
                }
            }
            let optional = self.plan.optional_at(&pointer);
            if let Some(Value::Array(required)) = schema.get("required") {
                // Shaping adds the nulls for optional properties after the branch is chosen.
                let will_be_added = |name: &str| {
                    self.direction == Direction::Shape && optional.iter().any(|o| o == name)
                };
                let missing = required
                    .iter()
                    .filter_map(Value::as_str)
                    .any(|name| !(map.contains_key(name) || will_be_added(name)));
                if missing {
                    return false;
                }
            }
            if schema.get("additionalProperties") == Some(&Value::Bool(false)) {
                let declared = schema.get("properties").and_then(Value::as_object);
                if !map
                    .keys()
                    .all(|k| declared.is_some_and(|d| d.contains_key(k)))
                {
                    return false;
                }
            }
        }
        if let Some(Value::Array(branches)) = schema.get("anyOf") {
            return branches
                .iter()
                .enumerate()
                .any(|(i, b)| self.fits(value, b, format!("{pointer}/anyOf/{i}"), hops + 1));
        }
        true
    }
}

/// The branch choices to try after `choices`, given how many branches fitted at each `anyOf`
/// the walk with `choices` met (`met`), or `None` when every combination has been tried: the
/// last `anyOf` with a branch left moves to it, and those after it start over (they may differ
/// once an earlier branch changes, so they are found again by the next walk).
pub(crate) fn next_choices(choices: &[usize], met: &[usize]) -> Option<Vec<usize>> {
    let mut next: Vec<usize> = (0..met.len())
        .map(|k| choices.get(k).copied().unwrap_or(0))
        .collect();
    while let Some(last) = next.len().checked_sub(1) {
        if next[last] + 1 < met[last] {
            next[last] += 1;
            return Some(next);
        }
        next.pop();
    }
    None
}

fn type_fits(value: &Value, t: &str) -> bool {
    match t {
        "null" => value.is_null(),
        "boolean" => value.is_boolean(),
        "integer" => {
            value.is_i64() || value.is_u64() || value.as_f64().is_some_and(|f| f.fract() == 0.0)
        }
        "number" => value.is_number(),
        "string" => value.is_string(),
        "array" => value.is_array(),
        "object" => value.is_object(),
        _ => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn nulls_for_optional_properties_come_and_go() {
        let schema = json!({
            "type": "object",
            "properties": {
                "q": {"type": "string"},
                "page": {"anyOf": [
                    {"type": "object", "properties": {"n": {"type": ["integer", "null"]}},
                     "required": ["n"], "additionalProperties": false},
                    {"type": "null"}
                ]}
            },
            "required": ["q", "page"],
            "additionalProperties": false
        });
        let plan = Plan {
            optional: vec![
                (String::new(), vec!["page".into()]),
                ("/properties/page/anyOf/0".into(), vec!["n".into()]),
            ],
            takes_null: vec![],
            renamed: vec![],
        };
        let restore = Walker {
            schema: &schema,
            plan: &plan,
            direction: Direction::Restore,
        };
        let mut sent = json!({"q": "x", "page": null});
        restore.run(&mut sent);
        assert_eq!(sent, json!({"q": "x"}));
        let mut sent = json!({"q": "x", "page": {"n": null}});
        restore.run(&mut sent);
        assert_eq!(sent, json!({"q": "x", "page": {}}));

        let shape = Walker {
            schema: &schema,
            plan: &plan,
            direction: Direction::Shape,
        };
        let mut original = json!({"q": "x", "page": {}, "extra": 1});
        shape.run(&mut original);
        assert_eq!(original, json!({"q": "x", "page": {"n": null}}));
    }

    #[test]
    fn readings_are_counted_like_an_odometer_whose_later_wheels_are_found_again() {
        // Two ambiguous `anyOf`s with 2 and 3 fitting branches.
        assert_eq!(next_choices(&[], &[2, 3]), Some(vec![0, 1]));
        assert_eq!(next_choices(&[0, 2], &[2, 3]), Some(vec![1]));
        assert_eq!(next_choices(&[1, 2], &[2, 3]), None);
        assert_eq!(next_choices(&[], &[]), None);
    }

    #[test]
    fn two_keys_for_one_parameter_are_a_collision() {
        // `x_y` fits the rule and keeps its name; `x-y` and `x.y` are sent as hashed names.
        let plan = Plan {
            optional: vec![],
            takes_null: vec![],
            renamed: vec![
                ("x_y_1".into(), "x-y".into()),
                ("x_y_2".into(), "x.y".into()),
            ],
        };
        let collision = |arguments: Value| plan.name_collision(arguments.as_object().unwrap());
        // Each name once, whichever way it is written: no collision.
        assert_eq!(collision(json!({"x_y": 1, "x_y_1": 2, "x_y_2": 3})), None);
        assert_eq!(collision(json!({"x-y": 1, "x.y": 2, "x_y": 3})), None);
        // The provider's name and the original name for one parameter.
        assert_eq!(
            collision(json!({"x_y": 0, "x-y": 1, "x_y_1": 2})),
            Some(("x-y".into(), vec!["x-y".into(), "x_y_1".into()]))
        );
        assert_eq!(
            collision(json!({"x_y_2": 1, "x_y_1": 2, "x.y": 3})),
            Some(("x.y".into(), vec!["x_y_2".into(), "x.y".into()]))
        );
    }

    #[test]
    fn renamed_parameters_map_both_ways() {
        let schema = json!({"type": "object", "properties": {"my_arg": {"type": "string"}}});
        let plan = Plan {
            optional: vec![],
            takes_null: vec![],
            renamed: vec![("my_arg".into(), "my-arg".into())],
        };
        let mut sent = json!({"my_arg": "v"});
        Walker {
            schema: &schema,
            plan: &plan,
            direction: Direction::Restore,
        }
        .run(&mut sent);
        assert_eq!(sent, json!({"my-arg": "v"}));
        // Keeping nulls maps the names back too.
        let mut kept = json!({"my_arg": null});
        Walker {
            schema: &schema,
            plan: &plan,
            direction: Direction::RestoreKeepingNulls,
        }
        .run(&mut kept);
        assert_eq!(kept, json!({"my-arg": null}));
        Walker {
            schema: &schema,
            plan: &plan,
            direction: Direction::Shape,
        }
        .run(&mut sent);
        assert_eq!(sent, json!({"my_arg": "v"}));
    }
}
