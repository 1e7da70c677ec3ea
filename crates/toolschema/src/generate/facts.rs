//! What a schema says about the values at one place, gathered from every subschema that applies
//! there: `$ref`s followed (inside the document), `allOf` merged, one branch of each
//! `anyOf`/`oneOf` (and of `if`/`then`/`else`) chosen.
//!
//! The facts are a guide for building values, never the judge: every case is validated against
//! the real schema afterwards, so a keyword read loosely here (`not`, `dependentSchemas`,
//! `propertyNames`, relative `$id`s) costs a rejected candidate, never a wrong label.

use super::rng::SplitMix64;
use crate::json::{as_count, Members};
use crate::schema::document::Document;
use crate::schema::{value_type, Dialect, JsonType};
use serde_json::Value;
use std::collections::{HashMap, HashSet};

/// How deep `$ref`s and combinators are followed at one place before giving up.
const MAX_EXPANSION: usize = 24;

/// JSON types as a set, with integers and fractional numbers apart (`number` is both).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Types(u8);

impl Types {
    pub(crate) const NULL: Types = Types(1);
    pub(crate) const BOOLEAN: Types = Types(2);
    pub(crate) const OBJECT: Types = Types(4);
    pub(crate) const ARRAY: Types = Types(8);
    pub(crate) const STRING: Types = Types(16);
    pub(crate) const INTEGER: Types = Types(32);
    pub(crate) const FRACTION: Types = Types(64);
    pub(crate) const NUMBER: Types = Types(32 | 64);

    pub(crate) fn named(name: &str) -> Types {
        match name {
            "null" => Types::NULL,
            "boolean" => Types::BOOLEAN,
            "object" => Types::OBJECT,
            "array" => Types::ARRAY,
            "string" => Types::STRING,
            "integer" => Types::INTEGER,
            "number" => Types::NUMBER,
            _ => Types(0),
        }
    }

    /// Whether every type of `other` is in this set.
    pub(crate) fn has(self, other: Types) -> bool {
        self.0 & other.0 == other.0 && other.0 != 0
    }

    /// Whether some type of `other` is in this set.
    pub(crate) fn any(self, other: Types) -> bool {
        self.0 & other.0 != 0
    }

    fn and(self, other: Types) -> Types {
        Types(self.0 & other.0)
    }

    pub(crate) fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// The single types in the set, in a fixed order.
    pub(crate) fn each(self) -> impl Iterator<Item = Types> {
        [
            Types::STRING,
            Types::INTEGER,
            Types::FRACTION,
            Types::BOOLEAN,
            Types::OBJECT,
            Types::ARRAY,
            Types::NULL,
        ]
        .into_iter()
        .filter(move |t| self.has(*t))
    }
}

/// The type of a value (see [`value_type`]), a number with a fraction as [`Types::FRACTION`].
pub(crate) fn type_of(value: &Value) -> Types {
    match value_type(value) {
        JsonType::Null => Types::NULL,
        JsonType::Boolean => Types::BOOLEAN,
        JsonType::Object => Types::OBJECT,
        JsonType::Array => Types::ARRAY,
        JsonType::String => Types::STRING,
        JsonType::Integer => Types::INTEGER,
        JsonType::Number => Types::FRACTION,
    }
}

/// The schema document and what `$ref` can reach in it.
pub(crate) struct Root<'s> {
    pub(crate) document: &'s Value,
    pub(crate) dialect: Dialect,
    /// The document's references, resolved.
    references: Document<'s>,
}

impl<'s> Root<'s> {
    pub(crate) fn new(document: &'s Value, dialect: Dialect) -> Root<'s> {
        Root {
            document,
            dialect,
            references: Document::new(document),
        }
    }

    /// The subschema a reference names, when it is inside this document.
    pub(crate) fn resolve(&self, reference: &str) -> Option<&'s Value> {
        self.references.resolve(reference)
    }
}

/// What the schemas at one place say about its values.
#[derive(Debug, Clone, Default)]
pub(crate) struct Facts<'s> {
    /// No value can fit (a `false` schema, contradictory types), or the schema could not be read
    /// (a reference outside the document): why.
    pub(crate) never: Option<String>,
    /// The allowed types; `None` when nothing restricts them.
    pub(crate) types: Option<Types>,
    /// The allowed values (`enum`, `const`); `None` when any value may do.
    pub(crate) choices: Option<Vec<&'s Value>>,
    pub(crate) minimum: Option<f64>,
    pub(crate) exclusive_minimum: Option<f64>,
    pub(crate) maximum: Option<f64>,
    pub(crate) exclusive_maximum: Option<f64>,
    pub(crate) multiple_of: Option<f64>,
    pub(crate) min_length: Option<u64>,
    pub(crate) max_length: Option<u64>,
    pub(crate) patterns: Vec<&'s str>,
    pub(crate) format: Option<&'s str>,
    /// Schemas of the leading items (`prefixItems`, or draft-07's `items` array), by position.
    pub(crate) prefix_items: Vec<Vec<&'s Value>>,
    /// Schemas every further item must fit.
    pub(crate) items: Vec<&'s Value>,
    pub(crate) min_items: Option<u64>,
    pub(crate) max_items: Option<u64>,
    pub(crate) unique_items: bool,
    pub(crate) contains: Vec<&'s Value>,
    pub(crate) min_contains: Option<u64>,
    /// Declared properties with the schemas of each, in declaration order.
    pub(crate) properties: Vec<(&'s str, Vec<&'s Value>)>,
    /// Where each declared property is in `properties`: a schema may declare tens of thousands.
    property_index: HashMap<&'s str, usize>,
    /// Required names, each once, in the order first seen.
    pub(crate) required: Vec<&'s str>,
    /// The names in `required`, to look them up.
    pub(crate) required_names: HashSet<&'s str>,
    pub(crate) pattern_properties: Vec<(&'s str, &'s Value)>,
    /// Schemas an undeclared property must fit (`additionalProperties`).
    pub(crate) additional: Vec<&'s Value>,
    /// Undeclared properties are refused (`additionalProperties` or `unevaluatedProperties`
    /// false).
    pub(crate) closed: bool,
    pub(crate) min_properties: Option<u64>,
    pub(crate) max_properties: Option<u64>,
    pub(crate) dependent_required: Vec<(&'s str, Vec<&'s str>)>,
    /// Keywords only objects (arrays) answer to were seen, that the facts do not keep
    /// (`propertyNames`, `dependentSchemas`; `unevaluatedItems`, `maxContains`).
    pub(crate) object_keywords: bool,
    pub(crate) array_keywords: bool,
}

fn tighter_min(slot: &mut Option<f64>, value: Option<f64>) {
    if let Some(v) = value {
        *slot = Some(slot.map_or(v, |s| s.max(v)));
    }
}

fn tighter_max(slot: &mut Option<f64>, value: Option<f64>) {
    if let Some(v) = value {
        *slot = Some(slot.map_or(v, |s| s.min(v)));
    }
}

fn tighter_min_count(slot: &mut Option<u64>, value: Option<u64>) {
    if let Some(v) = value {
        *slot = Some(slot.map_or(v, |s| s.max(v)));
    }
}

fn tighter_max_count(slot: &mut Option<u64>, value: Option<u64>) {
    if let Some(v) = value {
        *slot = Some(slot.map_or(v, |s| s.min(v)));
    }
}

/// A non-negative count keyword (`maxLength`, ...); `5.0` counts as 5.
fn count(value: Option<&Value>) -> Option<u64> {
    value.and_then(as_count)
}

impl<'s> Facts<'s> {
    /// The facts of the schemas in `schemas`, all of which apply.
    pub(crate) fn gather(
        root: &Root<'s>,
        schemas: &[&'s Value],
        rng: &mut SplitMix64,
    ) -> Facts<'s> {
        let mut facts = Facts::default();
        for schema in schemas {
            facts.absorb(root, schema, rng, 0);
        }
        facts.settle();
        facts
    }

    /// Whether a value of type `t` can fit, as far as the types say.
    pub(crate) fn allows(&self, t: Types) -> bool {
        self.types.is_none_or(|types| types.any(t))
    }

    fn refuse(&mut self, why: impl Into<String>) {
        if self.never.is_none() {
            self.never = Some(why.into());
        }
    }

    fn restrict_types(&mut self, types: Types) {
        let merged = match self.types {
            Some(existing) => existing.and(types),
            None => types,
        };
        self.types = Some(merged);
    }

    fn absorb(&mut self, root: &Root<'s>, schema: &'s Value, rng: &mut SplitMix64, depth: usize) {
        if depth > MAX_EXPANSION {
            self.refuse("references nest too deeply to follow");
            return;
        }
        let map = match schema {
            Value::Bool(true) => return,
            Value::Bool(false) => {
                self.refuse("the schema is false: no value fits");
                return;
            }
            Value::Object(map) => map,
            _ => return,
        };
        if let Some(reference) = map.member("$ref").and_then(Value::as_str) {
            match root.resolve(reference) {
                Some(target) => self.absorb(root, target, rng, depth + 1),
                None => self.refuse(format!("$ref '{reference}' is not inside the schema")),
            }
            // In draft-07 a `$ref` replaces every keyword beside it.
            if root.dialect.ref_ignores_siblings() {
                return;
            }
        }
        for key in ["$dynamicRef", "$recursiveRef"] {
            if let Some(reference) = map.member(key).and_then(Value::as_str) {
                match root.resolve(reference) {
                    Some(target) => self.absorb(root, target, rng, depth + 1),
                    None => self.refuse(format!("{key} '{reference}' is not inside the schema")),
                }
            }
        }
        match map.member("type") {
            Some(Value::String(name)) => self.restrict_types(Types::named(name)),
            Some(Value::Array(names)) => {
                let mut set = Types(0);
                for name in names.iter().filter_map(Value::as_str) {
                    set = Types(set.0 | Types::named(name).0);
                }
                self.restrict_types(set);
            }
            _ => {}
        }
        if let Some(constant) = map.member("const") {
            self.restrict_choices(std::slice::from_ref(constant));
        }
        if let Some(Value::Array(values)) = map.member("enum") {
            self.restrict_choices(values);
        }
        self.absorb_numbers(map);
        self.absorb_strings(map);
        self.absorb_arrays(root, map);
        self.absorb_objects(map);
        if let Some(Value::Array(all)) = map.member("allOf") {
            for branch in all {
                self.absorb(root, branch, rng, depth + 1);
            }
        }
        for key in ["anyOf", "oneOf"] {
            if let Some(Value::Array(branches)) = map.member(key) {
                if let Some(branch) = choose_branch(branches, rng) {
                    self.absorb(root, branch, rng, depth + 1);
                }
            }
        }
        if let Some(condition) = map.member("if") {
            let then = map.member("then");
            let otherwise = map.member("else");
            if then.is_some() && (otherwise.is_none() || rng.chance(1, 2)) {
                self.absorb(root, condition, rng, depth + 1);
                if let Some(then) = then {
                    self.absorb(root, then, rng, depth + 1);
                }
            } else if let Some(otherwise) = otherwise {
                self.absorb(root, otherwise, rng, depth + 1);
            }
        }
    }

    fn restrict_choices(&mut self, values: &'s [Value]) {
        let next: Vec<&'s Value> = match &self.choices {
            None => values.iter().collect(),
            Some(existing) => existing
                .iter()
                .copied()
                .filter(|v| values.iter().any(|w| crate::json::same_value(v, w)))
                .collect(),
        };
        if next.is_empty() {
            self.refuse("enum and const leave no value");
        }
        self.choices = Some(next);
    }

    fn absorb_numbers(&mut self, map: &'s serde_json::Map<String, Value>) {
        let number = |key: &str| map.member(key).and_then(Value::as_f64);
        tighter_min(&mut self.minimum, number("minimum"));
        tighter_max(&mut self.maximum, number("maximum"));
        tighter_min(&mut self.exclusive_minimum, number("exclusiveMinimum"));
        tighter_max(&mut self.exclusive_maximum, number("exclusiveMaximum"));
        if let Some(m) = number("multipleOf").filter(|m| *m > 0.0) {
            // Two multiples: their product is a multiple of both (the validator has the last word).
            self.multiple_of = Some(match self.multiple_of {
                Some(existing) if (m / existing).fract() == 0.0 => m,
                Some(existing) if (existing / m).fract() == 0.0 => existing,
                Some(existing) => existing * m,
                None => m,
            });
        }
    }

    fn absorb_strings(&mut self, map: &'s serde_json::Map<String, Value>) {
        tighter_min_count(&mut self.min_length, count(map.member("minLength")));
        tighter_max_count(&mut self.max_length, count(map.member("maxLength")));
        if let Some(pattern) = map.member("pattern").and_then(Value::as_str) {
            self.patterns.push(pattern);
        }
        if let Some(format) = map.member("format").and_then(Value::as_str) {
            self.format.get_or_insert(format);
        }
    }

    fn absorb_arrays(&mut self, root: &Root<'s>, map: &'s serde_json::Map<String, Value>) {
        let (prefix, rest) = match root.dialect {
            Dialect::Draft7 => match map.member("items") {
                Some(Value::Array(prefix)) => (Some(prefix), map.member("additionalItems")),
                other => (None, other),
            },
            Dialect::Draft202012 => match map.member("prefixItems") {
                Some(Value::Array(prefix)) => (Some(prefix), map.member("items")),
                _ => (None, map.member("items")),
            },
        };
        if let Some(prefix) = prefix {
            for (i, schema) in prefix.iter().enumerate() {
                if self.prefix_items.len() <= i {
                    self.prefix_items.push(Vec::new());
                }
                self.prefix_items[i].push(schema);
            }
        }
        if let Some(rest) = rest {
            if rest == &Value::Bool(false) {
                let fixed = prefix.map_or(0, |p| p.len() as u64);
                tighter_max_count(&mut self.max_items, Some(fixed));
            }
            self.items.push(rest);
        }
        tighter_min_count(&mut self.min_items, count(map.member("minItems")));
        tighter_max_count(&mut self.max_items, count(map.member("maxItems")));
        if map.member("uniqueItems") == Some(&Value::Bool(true)) {
            self.unique_items = true;
        }
        if let Some(contains) = map.member("contains") {
            self.contains.push(contains);
            tighter_min_count(&mut self.min_contains, count(map.member("minContains")));
        }
    }

    fn absorb_objects(&mut self, map: &'s serde_json::Map<String, Value>) {
        if let Some(Value::Object(properties)) = map.member("properties") {
            for (name, schema) in properties {
                match self.property_index.get(name.as_str()) {
                    Some(&at) => self.properties[at].1.push(schema),
                    None => {
                        self.property_index.insert(name, self.properties.len());
                        self.properties.push((name.as_str(), vec![schema]));
                    }
                }
            }
        }
        if let Some(Value::Array(required)) = map.member("required") {
            for name in required.iter().filter_map(Value::as_str) {
                if self.required_names.insert(name) {
                    self.required.push(name);
                }
            }
        }
        if let Some(Value::Object(patterns)) = map.member("patternProperties") {
            for (pattern, schema) in patterns {
                self.pattern_properties.push((pattern.as_str(), schema));
            }
        }
        if let Some(additional) = map.member("additionalProperties") {
            if additional == &Value::Bool(false) {
                self.closed = true;
            }
            self.additional.push(additional);
        }
        if map.member("unevaluatedProperties") == Some(&Value::Bool(false)) {
            self.closed = true;
        }
        if ["propertyNames", "dependentSchemas", "unevaluatedProperties"]
            .iter()
            .any(|k| map.contains_key(*k))
        {
            self.object_keywords = true;
        }
        if ["unevaluatedItems", "maxContains", "minContains"]
            .iter()
            .any(|k| map.contains_key(*k))
        {
            self.array_keywords = true;
        }
        tighter_min_count(&mut self.min_properties, count(map.member("minProperties")));
        tighter_max_count(&mut self.max_properties, count(map.member("maxProperties")));
        let dependent = map
            .member("dependentRequired")
            .or_else(|| map.member("dependencies"));
        if let Some(Value::Object(dependencies)) = dependent {
            for (name, needs) in dependencies {
                if let Value::Array(needs) = needs {
                    let needs: Vec<&str> = needs.iter().filter_map(Value::as_str).collect();
                    self.dependent_required.push((name.as_str(), needs));
                }
            }
        }
    }

    /// Settle what the merged keywords imply.
    fn settle(&mut self) {
        if self.types.is_some_and(Types::is_empty) {
            self.refuse("the allowed types contradict each other");
        }
        if let Some(choices) = &mut self.choices {
            if let Some(types) = self.types {
                choices.retain(|v| types.any(type_of(v)));
                if choices.is_empty() {
                    self.never
                        .get_or_insert_with(|| "no enum value has an allowed type".into());
                }
            }
        }
    }

    /// The smallest allowed integer, from the bounds.
    pub(crate) fn integer_low(&self) -> Option<i64> {
        let inclusive = self.minimum.map(|m| m.ceil());
        let exclusive = self.exclusive_minimum.map(|m| m.floor() + 1.0);
        let low = match (inclusive, exclusive) {
            (Some(a), Some(b)) => Some(a.max(b)),
            (a, b) => a.or(b),
        };
        low.map(clamp_to_i64)
    }

    /// The largest allowed integer, from the bounds.
    pub(crate) fn integer_high(&self) -> Option<i64> {
        let inclusive = self.maximum.map(|m| m.floor());
        let exclusive = self.exclusive_maximum.map(|m| m.ceil() - 1.0);
        let high = match (inclusive, exclusive) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        high.map(clamp_to_i64)
    }

    /// Whether anything about a value's kind is said beyond its type: used to guess a type when
    /// none is declared.
    pub(crate) fn implied_types(&self) -> Types {
        let mut implied = Types(0);
        if !self.properties.is_empty()
            || !self.required.is_empty()
            || !self.additional.is_empty()
            || !self.pattern_properties.is_empty()
            || self.closed
            || self.min_properties.is_some()
            || self.max_properties.is_some()
            || !self.dependent_required.is_empty()
            || self.object_keywords
        {
            implied = Types(implied.0 | Types::OBJECT.0);
        }
        if !self.items.is_empty()
            || !self.prefix_items.is_empty()
            || !self.contains.is_empty()
            || self.min_items.is_some()
            || self.max_items.is_some()
            || self.unique_items
            || self.array_keywords
        {
            implied = Types(implied.0 | Types::ARRAY.0);
        }
        if self.min_length.is_some()
            || self.max_length.is_some()
            || !self.patterns.is_empty()
            || self.format.is_some()
        {
            implied = Types(implied.0 | Types::STRING.0);
        }
        if self.minimum.is_some()
            || self.maximum.is_some()
            || self.exclusive_minimum.is_some()
            || self.exclusive_maximum.is_some()
            || self.multiple_of.is_some()
        {
            implied = Types(implied.0 | Types::NUMBER.0);
        }
        implied
    }

    /// The schemas that apply to property `name`'s value.
    pub(crate) fn property_schemas(&self, name: &str) -> Vec<&'s Value> {
        let declared = self
            .property_index
            .get(name)
            .map(|&at| &self.properties[at]);
        match declared {
            Some((_, schemas)) => schemas.clone(),
            None => self.additional.clone(),
        }
    }

    /// The schemas that apply to item `index` of an array.
    pub(crate) fn item_schemas(&self, index: usize) -> Vec<&'s Value> {
        match self.prefix_items.get(index) {
            Some(schemas) => schemas.clone(),
            None => self.items.clone(),
        }
    }
}

/// Pick a branch of `anyOf`/`oneOf`, preferring one that allows more than `null` (optional
/// values are mostly written `anyOf: [X, {type: null}]`, and `X` is the interesting half).
fn choose_branch<'s>(branches: &'s [Value], rng: &mut SplitMix64) -> Option<&'s Value> {
    if branches.is_empty() {
        return None;
    }
    let first = &branches[rng.index(branches.len())];
    let only_null = |b: &Value| b.member("type").and_then(Value::as_str) == Some("null");
    if only_null(first) && branches.len() > 1 && !rng.chance(1, 4) {
        return Some(&branches[rng.index(branches.len())]);
    }
    Some(first)
}

/// An f64 bound as an i64, saturating at the ends.
fn clamp_to_i64(value: f64) -> i64 {
    if value >= 9.2e18 {
        i64::MAX
    } else if value <= -9.2e18 {
        i64::MIN
    } else {
        value as i64
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn facts_of(schema: &Value, dialect: Dialect) -> Facts<'_> {
        let root = Root::new(schema, dialect);
        Facts::gather(&root, &[schema], &mut SplitMix64::new(1))
    }

    #[test]
    fn follows_references_and_merges_all_of() {
        let schema = json!({
            "$defs": {"small": {"type": "integer", "maximum": 10}},
            "allOf": [{"$ref": "#/$defs/small"}, {"minimum": 3, "maximum": 20}]
        });
        let facts = facts_of(&schema, Dialect::Draft202012);
        assert_eq!(facts.types, Some(Types::INTEGER));
        assert_eq!(
            (facts.integer_low(), facts.integer_high()),
            (Some(3), Some(10))
        );
        assert!(facts.never.is_none());
    }

    #[test]
    fn draft_07_references_replace_their_siblings() {
        let schema = json!({"definitions": {"s": {"type": "string"}}, "$ref": "#/definitions/s", "type": "integer"});
        assert_eq!(
            facts_of(&schema, Dialect::Draft7).types,
            Some(Types::STRING)
        );
        assert!(facts_of(&schema, Dialect::Draft202012).never.is_some());
    }

    #[test]
    fn outside_references_and_false_schemas_are_never() {
        let schema = json!({"$ref": "https://example.com/other.json"});
        assert!(facts_of(&schema, Dialect::Draft202012).never.is_some());
        assert!(facts_of(&json!(false), Dialect::Draft202012)
            .never
            .is_some());
        let contradiction = json!({"allOf": [{"type": "string"}, {"type": "integer"}]});
        assert!(facts_of(&contradiction, Dialect::Draft202012)
            .never
            .is_some());
    }

    #[test]
    fn enums_intersect_and_respect_types() {
        let schema =
            json!({"enum": [1, "a", 2.0], "allOf": [{"enum": [2, "a"]}], "type": "integer"});
        let facts = facts_of(&schema, Dialect::Draft202012);
        assert_eq!(facts.choices, Some(vec![&json!(2.0)]));
    }

    #[test]
    fn names_and_anchors_resolve() {
        let schema = json!({"$id": "https://example.com/root.json", "$defs": {
            "a": {"$anchor": "thing", "type": "string"},
            "b": {"$id": "b.json", "type": "integer"}}});
        let root = Root::new(&schema, Dialect::Draft202012);
        assert_eq!(root.resolve("#thing"), Some(&schema["$defs"]["a"]));
        assert_eq!(
            root.resolve("https://example.com/root.json#/$defs/a"),
            Some(&schema["$defs"]["a"])
        );
        assert_eq!(root.resolve("b.json"), Some(&schema["$defs"]["b"]));
        assert_eq!(root.resolve("#/nowhere"), None);
    }
}
