//! The promise of a safe fix, checked mechanically: every instance the schema accepted before the
//! fix, using the properties the schema declares for it, is still accepted after.
//!
//! Schemas are generated (objects with properties, free-form and typed maps, `anyOf`/`oneOf`/
//! `allOf` branches, `if`/`then`/`else`, `dependentSchemas`, `not` and `not` of `not`, object
//! `const`s and `enum`s, `minProperties` written as integers or floats and around the number of
//! declared properties, properties whose schema accepts nothing, `propertyNames`, `$ref`s plain
//! and beside other keywords, lightweight shapes, non-standard formats), fixed with every safe fix
//! of every rule, and instances are generated from the schema as written: at each object, the
//! properties every schema that applies to it there declares (its branches, conditions,
//! references, what a `not` of a `not` holds) or names (a `not`, a `required`), members enough for
//! `minProperties` (declared ones that can be present first, then others), and any key where a
//! map accepts any key; never a name `propertyNames` refuses. Those valid before must be valid after. The real
//! servers' catalogs go through the same check.
//!
//! Values come from proptest's seeds and a small deterministic generator here (proptest alone
//! cannot generate values from a schema).

#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "support/mod.rs"]
mod support;

use proptest::prelude::*;
use serde_json::{json, Map, Value};
use toolschema::lint::{Linter, RuleSelection};
use toolschema::SchemaValidator;

/// A small deterministic generator (SplitMix64).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }

    fn chance(&mut self, p: f64) -> bool {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64 <= p
    }

    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}

const NAMES: &[&str] = &["a", "b", "kind", "r", "w", "path"];

/// The `$id` some generated schemas carry, and the ways a `$ref` may name that same document.
const ROOT_ID: &str = "https://example.com/schemas/s.json";
const SAME_DOCUMENT: &[&str] = &[ROOT_ID, "s.json", "./s.json"];

/// Generates schemas, collecting the definitions they refer to.
struct SchemaGen<'r> {
    rng: &'r mut Rng,
    defs: Map<String, Value>,
    defs_key: &'static str,
    /// Whether the root has `"$id": ROOT_ID`, so references may name the document through it.
    has_id: bool,
}

impl SchemaGen<'_> {
    fn reference(&mut self, schema: Value) -> Value {
        let name = format!("D{}", self.defs.len());
        self.defs.insert(name.clone(), schema);
        let fragment = format!("#/{}/{name}", self.defs_key);
        json!(self.through_id(fragment))
    }

    /// A local reference `#...`, written through the root's `$id` now and then when it has one.
    fn through_id(&mut self, fragment: String) -> String {
        if self.has_id && self.rng.chance(0.5) {
            format!("{}{fragment}", self.rng.pick(SAME_DOCUMENT))
        } else {
            fragment
        }
    }

    fn names(&mut self, most: usize) -> Vec<&'static str> {
        let mut names: Vec<&'static str> = Vec::new();
        for _ in 0..self.rng.below(most + 1) {
            let name = *self.rng.pick(NAMES);
            if !names.contains(&name) {
                names.push(name);
            }
        }
        names
    }

    fn properties(&mut self, depth: usize) -> Map<String, Value> {
        let mut properties = Map::new();
        for name in self.names(3) {
            let schema = if self.rng.chance(0.1) {
                self.accepting_nothing()
            } else {
                self.value(depth + 1)
            };
            properties.insert(name.into(), schema);
        }
        properties
    }

    /// A schema that accepts no value, so the property it describes is never present.
    fn accepting_nothing(&mut self) -> Value {
        match self.rng.below(4) {
            0 => json!(false),
            1 => json!({"not": {}}),
            2 => json!({"type": "string", "enum": []}),
            _ => {
                let target = if self.rng.chance(0.5) {
                    json!(false)
                } else {
                    json!({"not": {}})
                };
                json!({"$ref": self.reference(target)})
            }
        }
    }

    /// An object schema, with a little of everything an object can have.
    fn object(&mut self, depth: usize) -> Value {
        let mut map = Map::new();
        if self.rng.chance(0.8) {
            map.insert("type".into(), json!("object"));
        }
        if self.rng.chance(0.85) {
            let properties = self.properties(depth);
            map.insert("properties".into(), Value::Object(properties));
        }
        let declared: Vec<String> = map
            .get("properties")
            .and_then(Value::as_object)
            .map(|p| p.keys().cloned().collect())
            .unwrap_or_default();
        if self.rng.chance(0.1) {
            map.insert(
                "patternProperties".into(),
                json!({"^x_": {"type": "integer"}}),
            );
        } else if self.rng.chance(0.08) {
            // A pattern that names a property the object may declare too: both schemas apply
            // to that member.
            let pattern = format!("^{}$", self.rng.pick(NAMES));
            let schema = self.value(depth + 1);
            map.insert("patternProperties".into(), json!({ pattern: schema }));
        }
        if self.rng.chance(0.5) {
            let mut required: Vec<Value> = declared
                .iter()
                .filter(|_| self.rng.chance(0.5))
                .map(|n| json!(n))
                .collect();
            if self.rng.chance(0.1) {
                required.push(json!(self.rng.pick(NAMES)));
            }
            map.insert("required".into(), Value::Array(required));
        }
        match self.rng.below(20) {
            0..=11 => {}
            12 | 13 => {
                map.insert("additionalProperties".into(), json!(true));
            }
            14 => {
                map.insert("additionalProperties".into(), json!({}));
            }
            15 | 16 => {
                map.insert("additionalProperties".into(), json!({"type": "string"}));
            }
            _ => {
                map.insert("additionalProperties".into(), json!(false));
            }
        }
        if self.rng.chance(0.16) {
            // Names it accepts, or refuses, declared ones among them.
            let names = match self.rng.below(6) {
                0 => json!({"pattern": "^b"}),
                1 => json!({"maxLength": 0}),
                2 => json!({"enum": [self.rng.pick(NAMES), self.rng.pick(NAMES), "zz"]}),
                3 => json!({"const": self.rng.pick(NAMES)}),
                4 => json!({"pattern": "^(a|kind|zz)$"}),
                _ => json!({"maxLength": 1}),
            };
            map.insert("propertyNames".into(), names);
        }
        if self.rng.chance(0.1) {
            // The validator reads `2.0` as 2. Around the number of declared properties, where
            // one that can never be present decides whether declared ones can make up the count.
            let least = if self.rng.chance(0.5) {
                (declared.len() + self.rng.below(2)).saturating_sub(self.rng.below(2))
            } else {
                self.rng.below(4)
            };
            let least = if self.rng.chance(0.5) {
                json!(least)
            } else {
                json!(least as f64)
            };
            map.insert("minProperties".into(), least);
        }
        if self.rng.chance(0.08) {
            // Objects fixed by value, with the declared members and now and then another.
            let as_const = self.rng.chance(0.5);
            let mut fixed = || {
                let mut value = Map::new();
                for name in &declared {
                    if self.rng.chance(0.7) {
                        value.insert(name.clone(), json!("circle"));
                    }
                }
                if self.rng.chance(0.5) {
                    value.insert(self.rng.pick(NAMES).to_string(), json!("circle"));
                }
                Value::Object(value)
            };
            if as_const {
                let value = fixed();
                map.insert("const".into(), value);
            } else {
                let values = [fixed(), fixed()];
                map.insert("enum".into(), json!(values));
            }
        }
        if depth < 2 {
            let branch = |gen: &mut Self| {
                let mut branch = Map::new();
                if gen.rng.chance(0.6) {
                    let properties = gen.properties(depth + 1);
                    branch.insert("properties".into(), Value::Object(properties));
                }
                if gen.rng.chance(0.4) {
                    let names: Vec<Value> = gen.names(2).into_iter().map(|n| json!(n)).collect();
                    branch.insert("required".into(), Value::Array(names));
                }
                if gen.rng.chance(0.2) {
                    branch.insert("type".into(), json!("object"));
                }
                if gen.rng.chance(0.1) {
                    let target = gen.object(depth + 1);
                    branch.insert("$ref".into(), gen.reference(target));
                }
                Value::Object(branch)
            };
            for key in ["anyOf", "oneOf", "allOf"] {
                if self.rng.chance(0.12) {
                    let branches = (0..1 + self.rng.below(2)).map(|_| branch(self)).collect();
                    map.insert(key.into(), Value::Array(branches));
                }
            }
            if self.rng.chance(0.12) {
                map.insert("if".into(), branch(self));
                map.insert("then".into(), branch(self));
                if self.rng.chance(0.5) {
                    map.insert("else".into(), branch(self));
                }
            }
            if self.rng.chance(0.06) {
                let name = *self.rng.pick(NAMES);
                map.insert("dependentSchemas".into(), json!({name: branch(self)}));
            }
            match self.rng.below(40) {
                0 | 1 => {
                    map.insert("not".into(), branch(self));
                }
                // A `not` of a `not` declares and requires what its inner schema does.
                2 | 3 => {
                    map.insert("not".into(), json!({"not": branch(self)}));
                }
                // Requires the member it names.
                4 => {
                    let name = *self.rng.pick(NAMES);
                    map.insert("not".into(), json!({"properties": {name: false}}));
                }
                _ => {}
            }
            if self.rng.chance(0.08) {
                let target = self.object(depth + 1);
                map.insert("$ref".into(), self.reference(target));
            }
        }
        Value::Object(map)
    }

    /// A property's schema.
    fn value(&mut self, depth: usize) -> Value {
        let choice = if depth > 3 {
            self.rng.below(5)
        } else {
            self.rng.below(13)
        };
        match choice {
            0 => json!({"type": "string"}),
            1 => json!({"type": "string", "format": self.rng.pick(&["uint32", "date", "path"])}),
            2 => json!({"type": "integer", "minimum": 0}),
            3 => json!({"type": "boolean"}),
            4 => json!({"enum": ["circle", "square", 1]}),
            5 => json!({"type": "object"}),
            6 => json!({}),
            7 | 8 => self.object(depth),
            9 if self.rng.chance(0.3) => {
                // `contains` describes some of the items `items` describes.
                let items = self.value(depth + 1);
                let contains = self.object(depth + 1);
                json!({"type": "array", "items": items, "contains": contains})
            }
            9 => json!({"type": "array", "items": self.value(depth + 1)}),
            10 => {
                let target = self.object(depth);
                json!({"$ref": self.reference(target)})
            }
            11 => {
                let target = self.object(depth);
                json!({"anyOf": [{"$ref": self.reference(target)}, {"type": "null"}]})
            }
            _ => {
                let branches: Vec<Value> = (0..2).map(|_| self.object(depth + 1)).collect();
                json!({"oneOf": branches})
            }
        }
    }
}

/// A tool's `inputSchema`: standard JSON Schema (2020-12 or draft-07), or a lightweight shape.
fn input_schema(rng: &mut Rng) -> Value {
    if rng.chance(0.1) {
        let mut map = Map::new();
        for name in ["q", "n", "tags"] {
            if rng.chance(0.7) {
                let property = match name {
                    "q" => json!({"type": "string", "required": rng.chance(0.5)}),
                    "n" => json!({"type": "float", "format": "double"}),
                    _ => json!({"type": "string", "isArray": true}),
                };
                map.insert(name.into(), property);
            }
        }
        map.insert("extra".into(), json!({"type": "enum", "enum": ["x", 1]}));
        return Value::Object(map);
    }
    let draft7 = rng.chance(0.15);
    let has_id = rng.chance(0.2);
    let mut gen = SchemaGen {
        rng,
        defs: Map::new(),
        defs_key: if draft7 { "definitions" } else { "$defs" },
        has_id,
    };
    let mut root = gen.object(0);
    let defs = std::mem::take(&mut gen.defs);
    if let Value::Object(map) = &mut root {
        if draft7 {
            map.insert(
                "$schema".into(),
                json!("http://json-schema.org/draft-07/schema#"),
            );
        }
        if has_id {
            map.insert("$id".into(), json!(ROOT_ID));
        }
        if !defs.is_empty() {
            map.insert(gen.defs_key.into(), Value::Object(defs));
        }
    }
    if gen.rng.chance(0.25) {
        refer_to_property_schemas(&mut gen, &mut root);
    }
    root
}

/// Replace a property schema or two with a `$ref` to another property's schema (not a
/// definition), so that schema applies in two places.
fn refer_to_property_schemas(gen: &mut SchemaGen<'_>, root: &mut Value) {
    let mut properties = Vec::new();
    collect_property_schemas(root, String::new(), &mut properties);
    for _ in 0..1 + gen.rng.below(2) {
        if properties.len() < 2 {
            return;
        }
        let target = gen.rng.pick(&properties).clone();
        let user = gen.rng.pick(&properties).clone();
        // Replacing the target or a schema enclosing it would leave the reference dangling.
        if target == user || target.starts_with(&format!("{user}/")) {
            continue;
        }
        let reference = gen.through_id(format!("#{target}"));
        *root.pointer_mut(&user).unwrap() = json!({ "$ref": reference });
        properties.retain(|p| !p.starts_with(&format!("{user}/")));
    }
}

/// The pointers of the object schemas under `properties` in `schema` (at `pointer`), outside
/// `not`, where the generator puts nothing a reference should reach.
fn collect_property_schemas(schema: &Value, pointer: String, out: &mut Vec<String>) {
    match schema {
        Value::Object(map) => {
            for (key, value) in map {
                if key == "not" {
                    continue;
                }
                let escaped = key.replace('~', "~0").replace('/', "~1");
                let child = format!("{pointer}/{escaped}");
                if pointer.ends_with("/properties") && value.get("properties").is_some() {
                    out.push(child.clone());
                }
                collect_property_schemas(value, child, out);
            }
        }
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                collect_property_schemas(item, format!("{pointer}/{i}"), out);
            }
        }
        _ => {}
    }
}

/// Generates instances from a schema as written.
struct InstanceGen<'a> {
    root: &'a Value,
    rng: Rng,
}

impl<'a> InstanceGen<'a> {
    fn resolve(&self, reference: &str) -> Option<&'a Value> {
        let local = SAME_DOCUMENT
            .iter()
            .find_map(|document| reference.strip_prefix(document))
            .unwrap_or(reference);
        let pointer = local.strip_prefix('#')?;
        self.root.pointer(pointer)
    }

    /// `schema` and every schema that applies to the same value with it (branches, conditions,
    /// dependent schemas, references, what a `not` of a `not` holds), but not what is under a
    /// single `not`.
    fn applicable(&self, schema: &'a Value, out: &mut Vec<&'a Map<String, Value>>, depth: usize) {
        let Some(map) = schema.as_object() else {
            return;
        };
        if depth > 12 || out.iter().any(|m| std::ptr::eq(*m, map)) {
            return;
        }
        out.push(map);
        for key in ["allOf", "anyOf", "oneOf"] {
            for branch in map.get(key).and_then(Value::as_array).into_iter().flatten() {
                self.applicable(branch, out, depth + 1);
            }
        }
        for key in ["if", "then", "else"] {
            if let Some(branch) = map.get(key) {
                self.applicable(branch, out, depth + 1);
            }
        }
        for branch in map
            .get("dependentSchemas")
            .and_then(Value::as_object)
            .into_iter()
            .flat_map(|m| m.values())
        {
            self.applicable(branch, out, depth + 1);
        }
        if let Some(target) = map
            .get("$ref")
            .and_then(Value::as_str)
            .and_then(|r| self.resolve(r))
        {
            self.applicable(target, out, depth + 1);
        }
        if let Some(inner) = map.get("not").and_then(|n| n.get("not")) {
            self.applicable(inner, out, depth + 1);
        }
    }

    /// Whether `schema` accepts no value in the forms the generator writes: `false`,
    /// `{"not": {}}`, an empty `enum`, or a `$ref` to one of those.
    fn accepts_nothing(&self, schema: &Value) -> bool {
        let schema = match schema.get("$ref").and_then(Value::as_str) {
            Some(reference) => match self.resolve(reference) {
                Some(target) => target,
                None => return false,
            },
            None => schema,
        };
        schema == &json!(false)
            || schema.get("not") == Some(&json!({}))
            || schema.get("enum") == Some(&json!([]))
    }

    fn scalar(&mut self) -> Value {
        match self.rng.below(7) {
            0 => json!("circle"),
            1 => json!("x"),
            2 => json!(""),
            3 => json!(self.rng.below(5)),
            4 => json!(true),
            5 => Value::Null,
            _ => json!("2024-01-15"),
        }
    }

    fn instance(&mut self, schema: &'a Value, depth: usize) -> Value {
        self.instance_of_all(&[schema], depth)
    }

    /// A value for a place several schemas describe at once.
    fn instance_of_all(&mut self, at_once: &[&'a Value], depth: usize) -> Value {
        let mut schemas = Vec::new();
        for schema in at_once {
            self.applicable(schema, &mut schemas, 0);
        }
        if schemas.is_empty() || depth > 6 {
            return self.scalar();
        }
        let mut values: Vec<Value> = Vec::new();
        for map in &schemas {
            values.extend(
                map.get("enum")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .cloned(),
            );
            values.extend(map.get("const").cloned());
        }
        if !values.is_empty() && self.rng.chance(0.8) {
            return self.rng.pick(&values).clone();
        }
        let types: Vec<&str> = schemas
            .iter()
            .filter_map(|m| match m.get("type") {
                Some(Value::String(t)) => Some(t.as_str()),
                _ => None,
            })
            .collect();
        let objecty = schemas
            .iter()
            .any(|m| m.contains_key("properties") || m.contains_key("patternProperties"));
        let kind = if objecty && self.rng.chance(0.9) {
            "object"
        } else if types.is_empty() {
            *self
                .rng
                .pick(&["object", "string", "integer", "boolean", "array"])
        } else {
            *self.rng.pick(&types)
        };
        match kind {
            "object" => self.object(&schemas, depth),
            "array" => {
                // Each item fits every `items` and `contains` schema that applies.
                let items: Vec<&'a Value> = schemas
                    .iter()
                    .flat_map(|m| [m.get("items"), m.get("contains")])
                    .flatten()
                    .filter(|s| !s.is_array())
                    .collect();
                let n = self.rng.below(3);
                let mut out = Vec::new();
                for _ in 0..n {
                    out.push(if items.is_empty() {
                        self.scalar()
                    } else {
                        self.instance_of_all(&items, depth + 1)
                    });
                }
                Value::Array(out)
            }
            "string" => json!(self.rng.pick(&["circle", "x", "", "2024-01-15", "file"])),
            "integer" | "number" => json!(self.rng.below(6)),
            "boolean" => json!(self.rng.chance(0.5)),
            "null" => Value::Null,
            _ => self.scalar(),
        }
    }

    /// An object using the properties the applicable schemas declare, and any key where a map
    /// accepts any key.
    fn object(&mut self, schemas: &[&'a Map<String, Value>], depth: usize) -> Value {
        let mut out = Map::new();
        let mut declared: Vec<(&'a str, Option<&'a Value>)> = Vec::new();
        let mut patterns: Vec<(&'a str, &'a Value)> = Vec::new();
        let mut any_key: Vec<Option<&'a Value>> = Vec::new();
        let mut names_anywhere = false;
        for map in schemas {
            if let Some(properties) = map.get("properties").and_then(Value::as_object) {
                names_anywhere = true;
                for (name, schema) in properties {
                    declared.push((name, Some(schema)));
                }
            }
            // Names a `required` or a `not` mentions: `{"not": {"properties": {"b": false}}}`
            // needs `b`.
            let negated = map.get("not");
            let named = [map.get("required"), negated.and_then(|n| n.get("required"))]
                .into_iter()
                .flatten()
                .filter_map(Value::as_array)
                .flatten()
                .filter_map(Value::as_str)
                .chain(
                    negated
                        .and_then(|n| n.get("properties"))
                        .and_then(Value::as_object)
                        .into_iter()
                        .flat_map(|p| p.keys().map(String::as_str)),
                );
            for name in named {
                declared.push((name, None));
            }
            if let Some(map) = map.get("patternProperties").and_then(Value::as_object) {
                names_anywhere = true;
                for (pattern, schema) in map {
                    patterns.push((pattern, schema));
                    // A name the pattern matches: the generator's patterns are `^x_` and
                    // `^NAME$`.
                    let name = std::iter::once("x_1")
                        .chain(NAMES.iter().copied())
                        .find(|name| matches(pattern, name));
                    if let Some(name) = name {
                        declared.push((name, Some(schema)));
                    }
                }
            }
            match map.get("additionalProperties") {
                Some(Value::Bool(true)) => any_key.push(None),
                Some(schema @ Value::Object(_)) => any_key.push(Some(schema)),
                _ => {}
            }
        }
        if !names_anywhere {
            // A free-form map: any key is declared.
            any_key.push(None);
        }
        // Names a `propertyNames` refuses, or a schema accepting nothing describes, are never
        // present in a valid instance: leave them out.
        let names_schemas: Vec<&'a Value> = schemas
            .iter()
            .filter_map(|m| m.get("propertyNames"))
            .collect();
        let usable = |name: &str| {
            names_schemas
                .iter()
                .all(|s| jsonschema::is_valid(s, &json!(name)))
                && declared
                    .iter()
                    .filter(|(n, _)| *n == name)
                    .filter_map(|(_, schema)| *schema)
                    .all(|schema| !self.accepts_nothing(schema))
        };
        let usable: Vec<&'a str> = declared
            .iter()
            .map(|&(name, _)| name)
            .chain(["zz", "anything", "x_2", "x_3", "", "bz"])
            .filter(|name| usable(name))
            .collect();
        for &(name, _) in &declared {
            if out.contains_key(name) || !usable.contains(&name) || !self.rng.chance(0.7) {
                continue;
            }
            // The member fits every schema declared for its name, and every pattern it matches.
            let mut for_name: Vec<&'a Value> = declared
                .iter()
                .filter(|(n, _)| *n == name)
                .filter_map(|(_, schema)| *schema)
                .collect();
            for (pattern, schema) in &patterns {
                if matches(pattern, name) && !for_name.iter().any(|s| std::ptr::eq(*s, *schema)) {
                    for_name.push(schema);
                }
            }
            let value = if for_name.is_empty() {
                self.scalar()
            } else {
                self.instance_of_all(&for_name, depth + 1)
            };
            out.insert(name.to_string(), value);
        }
        if !any_key.is_empty() && self.rng.chance(0.5) {
            let schema = *self.rng.pick(&any_key);
            let value = match schema {
                Some(schema) => self.instance(schema, depth + 1),
                None => self.scalar(),
            };
            let names: Vec<&str> = ["zz", "anything", "x_2"]
                .into_iter()
                .filter(|n| usable.contains(n))
                .collect();
            if !names.is_empty() {
                out.insert(self.rng.pick(&names).to_string(), value);
            }
        }
        // Members enough for `minProperties` (read by value: `2.0` is 2): declared ones first,
        // then others, as a `required` name the object does not declare is added above.
        let least = schemas
            .iter()
            .filter_map(|m| m.get("minProperties").and_then(count))
            .max()
            .unwrap_or(0);
        let matched = |name: &&str| patterns.iter().any(|(pattern, _)| matches(pattern, name));
        let mut spare = declared
            .iter()
            .map(|&(name, _)| name)
            .chain(["x_2", "x_3"].into_iter().filter(matched))
            .chain(["zz", "anything", "x_2", "x_3", "", "bz"])
            .filter(|name| usable.contains(name));
        while (out.len() as u64) < least {
            let Some(name) = spare.next() else { break };
            if !out.contains_key(name) {
                let value = self.scalar();
                out.insert(name.to_string(), value);
            }
        }
        Value::Object(out)
    }
}

/// A count keyword's value as the validator reads it: `2.0` is 2.
fn count(value: &Value) -> Option<u64> {
    value.as_u64().or_else(|| {
        value
            .as_f64()
            .filter(|f| *f >= 0.0 && f.fract() == 0.0)
            .map(|f| f as u64)
    })
}

/// Whether `name` matches `pattern` as the engine reads it.
fn matches(pattern: &str, name: &str) -> bool {
    jsonschema::is_valid(&json!({ "pattern": pattern }), &json!(name))
}

/// Fix `schema` (as one tool's `inputSchema`) with every safe fix, and return the fixed schema.
fn safely_fixed(schema: &Value, pretty: bool) -> Value {
    let catalog = json!({"tools": [{"name": "t", "description": "A tool for the test.", "inputSchema": schema}]});
    let text = if pretty {
        serde_json::to_string_pretty(&catalog).unwrap()
    } else {
        catalog.to_string()
    };
    let fixed = Linter::new(RuleSelection::all())
        .fix("t.json", &text, false)
        .unwrap_or_else(|e| panic!("{e}\n{text}"));
    let fixed: Value = serde_json::from_str(&fixed.text).unwrap();
    fixed["tools"][0]["inputSchema"].clone()
}

/// Instances valid under `before` that `after` refuses, among `tries` generated from `before`.
fn broken_instances(before: &Value, after: &Value, seed: u64, tries: usize) -> Vec<Value> {
    let Ok(old) = SchemaValidator::new(before) else {
        return Vec::new();
    };
    let new = SchemaValidator::new(after)
        .unwrap_or_else(|e| panic!("the fixed schema does not compile ({e}): {after}"));
    let mut gen = InstanceGen {
        root: before,
        rng: Rng(seed),
    };
    let mut broken = Vec::new();
    for _ in 0..tries {
        let instance = gen.instance(before, 0);
        if old.is_valid(&instance) && !new.is_valid(&instance) {
            broken.push(instance);
        }
    }
    broken
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(384))]

    #[test]
    fn safe_fixes_keep_every_declared_instance_valid(seed: u64, pretty: bool) {
        let mut rng = Rng(seed);
        let schema = input_schema(&mut rng);
        let fixed = safely_fixed(&schema, pretty);
        let broken = broken_instances(&schema, &fixed, seed ^ 0x5eed, 60);
        prop_assert!(
            broken.is_empty(),
            "safe fixes refused {} instance(s) the schema accepted, like {}\nbefore: {}\nafter:  {}",
            broken.len(),
            broken[0],
            schema,
            fixed
        );
    }
}

/// The generator finds what closing an object wrongly refuses: the test above can fail.
#[test]
fn the_check_catches_closures_that_are_not_safe() {
    let closed = |mut schema: Value, pointer: &str| {
        schema
            .pointer_mut(pointer)
            .and_then(Value::as_object_mut)
            .unwrap()
            .insert("additionalProperties".into(), json!(false));
        schema
    };
    let cases = [
        // A union branch, beside a property its owner declares: {"kind": "circle", "r": 1}.
        (
            json!({"type": "object", "properties": {"kind": {"enum": ["circle", "square"]}},
                   "anyOf": [{"properties": {"r": {"type": "number"}}, "required": ["r"]},
                             {"properties": {"side": {"type": "number"}}, "required": ["side"]}]}),
            "/anyOf/0",
        ),
        // A root that takes more properties through if/then.
        (
            json!({"type": "object", "properties": {"kind": {"type": "string"}},
                   "if": {"properties": {"kind": {"const": "file"}}},
                   "then": {"properties": {"path": {"type": "string"}}}}),
            "",
        ),
        // A free-form map.
        (
            json!({"type": "object", "properties": {"metadata": {"type": "object"}}}),
            "/properties/metadata",
        ),
        // A definition a $ref uses beside properties.
        (
            json!({"type": "object", "properties": {"page": {"$ref": "#/$defs/p", "properties": {"x": {}}}},
                   "$defs": {"p": {"type": "object", "properties": {"n": {"type": "integer"}}}}}),
            "/$defs/p",
        ),
        // A property a pattern of its own object also describes: {"x": {"a": 1, "b": 2}}.
        (
            json!({"type": "object", "properties": {"x": {"type": "object", "properties": {"a": {"type": "integer"}}}},
                   "patternProperties": {"^x$": {"type": "object", "properties": {"b": {"type": "integer"}}, "required": ["b"]}},
                   "additionalProperties": false}),
            "/properties/x",
        ),
        (
            json!({"type": "object", "properties": {"x": {"type": "object", "properties": {"a": {"type": "integer"}}}},
                   "patternProperties": {"^x$": {"type": "object", "properties": {"b": {"type": "integer"}}, "required": ["b"]}},
                   "additionalProperties": false}),
            "/patternProperties/^x$",
        ),
        // Items that `contains` describes too: {"list": [{"a": 1, "b": 2}]}.
        (
            json!({"type": "object", "properties": {"list": {"type": "array",
                       "items": {"type": "object", "properties": {"a": {"type": "integer"}}},
                       "contains": {"type": "object", "properties": {"b": {"type": "integer"}}, "required": ["b"]}}},
                   "additionalProperties": false}),
            "/properties/list/items",
        ),
        // A property schema another property reaches by `$ref`, where a branch declares more:
        // {"b": {"x": 1, "y": 2}}.
        (
            json!({"type": "object", "properties": {"a": {"type": "object", "properties": {"x": {"type": "integer"}}},
                                                     "b": {"$ref": "#/properties/a"}},
                   "allOf": [{"properties": {"b": {"properties": {"y": {"type": "integer"}}}}}],
                   "additionalProperties": false}),
            "/properties/a",
        ),
        // A definition reached through the root's `$id` beside properties: {"p": {"x": 1, "y": 2}}.
        (
            json!({"$id": "https://example.com/schemas/s.json", "type": "object",
                   "properties": {"p": {"allOf": [{"$ref": "https://example.com/schemas/s.json#/$defs/o"}],
                                        "properties": {"y": {"type": "integer"}}}},
                   "additionalProperties": false,
                   "$defs": {"o": {"type": "object", "properties": {"x": {"type": "integer"}}}}}),
            "/$defs/o",
        ),
        // `minProperties` written as a float: {"x": "a", "zz": 1}.
        (
            json!({"type": "object", "properties": {"x": {"type": "string"}}, "minProperties": 2.0}),
            "",
        ),
        // An object `const` or `enum` with a member the object does not declare.
        (
            json!({"type": "object", "properties": {"x": {"type": "string"}}, "const": {"x": "1", "b": "2"}}),
            "",
        ),
        (
            json!({"type": "object", "properties": {"x": {"type": "string"}},
                   "enum": [{"x": "1", "b": "2"}, {"x": "3", "c": "4"}]}),
            "",
        ),
        // The enclosing object's `enum` fixes the property's value: {"v": {"x": "1", "b": "2"}}.
        (
            json!({"type": "object", "properties": {"v": {"type": "object", "properties": {"x": {"type": "string"}}}},
                   "additionalProperties": false, "enum": [{"v": {"x": "1", "b": "2"}}]}),
            "/properties/v",
        ),
        // A `not` of a `not` around the object declares `b` for it: {"v": {"x": "1", "b": "2"}}.
        (
            json!({"type": "object", "properties": {"v": {"type": "object", "properties": {"x": {"type": "string"}}}},
                   "not": {"not": {"properties": {"v": {"properties": {"b": {"type": "string"}}}}}},
                   "additionalProperties": false}),
            "/properties/v",
        ),
        // A `not` of a `not` beside it requires `b`, and so does `not` of `b: false`.
        (
            json!({"type": "object", "properties": {"x": {"type": "string"}}, "not": {"not": {"required": ["b"]}}}),
            "",
        ),
        (
            json!({"type": "object", "properties": {"x": {"type": "string"}}, "not": {"properties": {"b": false}}}),
            "",
        ),
        // `minProperties` only undeclared members can meet: the declared property accepts no
        // value, or `propertyNames` refuses its name ({"b": 1}, {"": 1}).
        (
            json!({"$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object",
                   "properties": {"a": false}, "minProperties": 1}),
            "",
        ),
        (
            json!({"$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object",
                   "properties": {"a": {}}, "minProperties": 1, "propertyNames": {"pattern": "^b"}}),
            "",
        ),
        (
            json!({"$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object",
                   "properties": {"a": {"not": {}}}, "minProperties": 1}),
            "",
        ),
        (
            json!({"$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object",
                   "properties": {"a": {"type": "string"}}, "minProperties": 1, "propertyNames": {"maxLength": 0}}),
            "",
        ),
        (
            json!({"type": "object", "properties": {"a": {"$ref": "#/$defs/never"}, "b": {"type": "string", "enum": []}},
                   "minProperties": 1, "$defs": {"never": false}}),
            "",
        ),
        (
            json!({"type": "object", "properties": {"a": {}, "b": {}}, "minProperties": 2,
                   "propertyNames": {"enum": ["a", "zz"]}}),
            "",
        ),
    ];
    let mut unnoticed = Vec::new();
    let mut broken_by_the_linter = Vec::new();
    for (schema, pointer) in cases {
        let wrong = closed(schema.clone(), pointer);
        if broken_instances(&schema, &wrong, 7, 400).is_empty() {
            unnoticed.push(format!("closing {pointer} of {schema}"));
        }
        // And the linter's safe fixes leave those objects open.
        let fixed = safely_fixed(&schema, true);
        if !broken_instances(&schema, &fixed, 7, 400).is_empty() {
            broken_by_the_linter.push(fixed.to_string());
        }
    }
    assert!(unnoticed.is_empty(), "went unnoticed: {unnoticed:#?}");
    assert!(
        broken_by_the_linter.is_empty(),
        "safe fixes broke: {broken_by_the_linter:#?}"
    );
}

/// The same promise on the real servers' catalogs: every tool fixed with every safe fix keeps
/// the instances its schema accepted.
#[test]
fn safe_fixes_on_the_real_catalogs() {
    for name in support::REAL_CATALOGS {
        let text = support::real_catalog_text(name);
        let fixed = Linter::new(RuleSelection::all())
            .fix(name, &text, false)
            .unwrap();
        assert!(fixed.fixed > 0, "{name}: nothing to fix");
        let before: Value = serde_json::from_str(&text).unwrap();
        let after: Value = serde_json::from_str(&fixed.text).unwrap();
        for (i, tool) in before["tools"].as_array().unwrap().iter().enumerate() {
            let schema = &tool["inputSchema"];
            let fixed_schema = &after["tools"][i]["inputSchema"];
            let broken = broken_instances(schema, fixed_schema, i as u64, 300);
            assert!(
                broken.is_empty(),
                "{name} tool {}: {:?} became invalid",
                tool["name"],
                broken
            );
        }
    }
}

/// The generated cases are not vacuous: about half the schemas get safe fixes, of every kind,
/// the shapes that once got a wrong fix come up, and most instances are valid before, so the
/// property above is tested where it matters.
#[test]
fn the_generated_cases_exercise_the_fixes() {
    let (mut fixed_schemas, mut checked, mut generated) = (0, 0, 0);
    let mut rules = std::collections::BTreeSet::new();
    let mut shapes = std::collections::BTreeSet::new();
    for seed in 0..300u64 {
        let mut rng = Rng(seed);
        let schema = input_schema(&mut rng);
        shapes.extend(shapes_in(&schema));
        let catalog = json!({"tools": [{"name": "t", "inputSchema": schema}]}).to_string();
        let fixed = Linter::new(RuleSelection::all())
            .fix("t.json", &catalog, false)
            .unwrap();
        if fixed.fixed > 0 {
            fixed_schemas += 1;
        }
        rules.extend(fixed.applied.iter().map(|f| f.rule.code()));
        let Ok(validator) = SchemaValidator::new(&schema) else {
            continue;
        };
        let mut gen = InstanceGen {
            root: &schema,
            rng: Rng(seed),
        };
        for _ in 0..20 {
            generated += 1;
            if validator.is_valid(&gen.instance(&schema, 0)) {
                checked += 1;
            }
        }
    }
    assert!(fixed_schemas > 135, "{fixed_schemas} of 300 schemas fixed");
    assert_eq!(
        rules.into_iter().collect::<Vec<_>>(),
        ["SCH-002", "SCH-011", "SCH-013"]
    );
    assert!(
        checked * 3 > generated,
        "{checked} of {generated} instances valid"
    );
    assert_eq!(
        shapes.into_iter().collect::<Vec<_>>(),
        [
            "minProperties beside a property accepting nothing",
            "minProperties written as a float",
            "not of not",
            "not requiring a member",
            "object const",
            "object enum",
            "propertyNames beside minProperties"
        ]
    );
}

/// Which of the shapes that once got a wrong safe fix `schema` holds, at any depth.
fn shapes_in(schema: &Value) -> Vec<&'static str> {
    let mut found = Vec::new();
    let mut pending = vec![schema];
    while let Some(value) = pending.pop() {
        match value {
            Value::Object(map) => {
                if map.get("minProperties").is_some_and(Value::is_f64) {
                    found.push("minProperties written as a float");
                }
                if map.contains_key("propertyNames") && map.contains_key("minProperties") {
                    found.push("propertyNames beside minProperties");
                }
                let nothing = [
                    json!(false),
                    json!({"not": {}}),
                    json!({"type": "string", "enum": []}),
                ];
                if map.contains_key("minProperties")
                    && map
                        .get("properties")
                        .and_then(Value::as_object)
                        .is_some_and(|p| p.values().any(|v| nothing.contains(v)))
                {
                    found.push("minProperties beside a property accepting nothing");
                }
                if map.get("const").is_some_and(Value::is_object) {
                    found.push("object const");
                }
                if map
                    .get("enum")
                    .and_then(Value::as_array)
                    .is_some_and(|values| values.iter().any(Value::is_object))
                {
                    found.push("object enum");
                }
                match map.get("not") {
                    Some(not) if not.get("not").is_some() => found.push("not of not"),
                    Some(not)
                        if not.pointer("/properties").is_some_and(|p| {
                            p.as_object()
                                .is_some_and(|p| p.values().any(|v| v == &json!(false)))
                        }) =>
                    {
                        found.push("not requiring a member")
                    }
                    _ => {}
                }
                pending.extend(map.values());
            }
            Value::Array(items) => pending.extend(items),
            _ => {}
        }
    }
    found
}
