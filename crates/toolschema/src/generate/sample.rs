//! Typical values for a schema: the valid starting point every other case is made from.
//!
//! The sampler walks the schema as it builds a value and records, for each place it filled, what
//! the schema says there ([`Node`]): the boundary and fault cases are made by changing one of
//! those places.

use super::facts::{Facts, Root, Types};
use super::mutate::OVERSIZED_STRING;
use super::rng::SplitMix64;
use super::strings::{self, Patterns};
use crate::json::pointer::push_segment;
use crate::json::MAX_DEPTH;
use serde_json::{Map, Number, Value};

/// How deep the sampler nests arrays and objects before it fills only what is required.
const SHALLOW_AFTER: usize = 4;
/// How many places one sample may have before it fills only what is required.
const MAX_PLACES: usize = 200;
/// How many places one sample may try to fill in all (failed attempts included). What is
/// required alone can need more than any run can build: two required properties that each refer
/// to the level below, forty levels down, need 2^40 places.
const MAX_ATTEMPTED_PLACES: usize = 20_000;

/// Why no value was made.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum NoSample {
    /// The sample stopped at [`MAX_ATTEMPTED_PLACES`]: another try with other random choices
    /// would likely need as many.
    TooManyPlaces,
    /// What the schema asked that could not be made this time.
    Cannot(String),
}

impl std::fmt::Display for NoSample {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            NoSample::TooManyPlaces => {
                write!(f, "a value needs more than {MAX_ATTEMPTED_PLACES} places")
            }
            NoSample::Cannot(why) => f.write_str(why),
        }
    }
}

/// A place in a sampled value and what the schema says of the values there.
#[derive(Debug, Clone)]
pub(crate) struct Node<'s> {
    /// JSON Pointer of the place in the sampled value.
    pub(crate) pointer: String,
    /// What the schema says of it.
    pub(crate) facts: Facts<'s>,
    /// How deep the place is (the root is 0).
    pub(crate) depth: usize,
}

/// Which optional properties a sample fills.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Fill {
    /// Each optional property with even odds.
    Typical,
    /// None: only what is required.
    RequiredOnly,
    /// Every declared property.
    Everything,
}

/// Builds one value; see [`Sampler::sample`].
pub(crate) struct Sampler<'a, 's> {
    root: &'a Root<'s>,
    patterns: &'a mut Patterns,
    rng: &'a mut SplitMix64,
    fill: Fill,
    nodes: Vec<Node<'s>>,
    /// Places tried so far, failed attempts included (see [`MAX_ATTEMPTED_PLACES`]).
    attempted: usize,
}

impl<'a, 's> Sampler<'a, 's> {
    pub(crate) fn new(
        root: &'a Root<'s>,
        patterns: &'a mut Patterns,
        rng: &'a mut SplitMix64,
        fill: Fill,
    ) -> Self {
        Sampler {
            root,
            patterns,
            rng,
            fill,
            nodes: Vec::new(),
            attempted: 0,
        }
    }

    /// A value for the whole schema and the places it is made of (parents before children), or
    /// why none could be made.
    pub(crate) fn sample(mut self) -> Result<(Value, Vec<Node<'s>>), NoSample> {
        let document = self.root.document;
        match self.value(&[document], String::new(), 0) {
            Ok(value) => Ok((value, self.nodes)),
            // Past the bound every place fails: whatever message made it up here, the bound
            // is why.
            Err(_) if self.attempted > MAX_ATTEMPTED_PLACES => Err(NoSample::TooManyPlaces),
            Err(why) => Err(NoSample::Cannot(why)),
        }
    }

    /// A value for the place at `pointer`, where all of `schemas` apply.
    pub(crate) fn value(
        &mut self,
        schemas: &[&'s Value],
        pointer: String,
        depth: usize,
    ) -> Result<Value, String> {
        // A required property that refers back to its own object has no finite value; one whose
        // values must nest deeper than the validator reads is refused by it anyway.
        if depth > MAX_DEPTH {
            return Err(format!(
                "a value here must nest deeper than {MAX_DEPTH} levels of arrays and objects"
            ));
        }
        self.attempted += 1;
        if self.attempted > MAX_ATTEMPTED_PLACES {
            return Err(NoSample::TooManyPlaces.to_string());
        }
        let facts = Facts::gather(self.root, schemas, self.rng);
        if let Some(why) = &facts.never {
            return Err(why.clone());
        }
        let at = self.nodes.len();
        let value = match &facts.choices {
            Some(choices) => choices[self.rng.index(choices.len())].clone(),
            None => {
                let shallow = depth >= SHALLOW_AFTER || self.nodes.len() >= MAX_PLACES;
                // The types in a random order: when one cannot be made (no integer between
                // -1.5 and -1.25), the next may.
                let mut last = String::new();
                let mut made = None;
                for t in self.type_order(&facts, shallow) {
                    let attempt = match t {
                        t if t == Types::STRING => self.string(&facts).map(Value::String),
                        t if t == Types::INTEGER => self.integer(&facts),
                        t if t == Types::FRACTION => self.fraction(&facts),
                        t if t == Types::BOOLEAN => Ok(Value::Bool(self.rng.chance(1, 2))),
                        t if t == Types::NULL => Ok(Value::Null),
                        t if t == Types::OBJECT => self.object(&facts, &pointer, depth, shallow),
                        _ => self.array(&facts, &pointer, depth, shallow),
                    };
                    match attempt {
                        Ok(value) => {
                            made = Some(value);
                            break;
                        }
                        Err(why) => {
                            // Places recorded for the failed attempt are not part of the value.
                            self.nodes.truncate(at);
                            last = why;
                        }
                    }
                }
                made.ok_or(last)?
            }
        };
        self.nodes.insert(
            at,
            Node {
                pointer,
                facts,
                depth,
            },
        );
        Ok(value)
    }

    /// The types to try building, in a random order: those the schema allows (guessed from its
    /// keywords when it names none), `null` last, containers left out when deep.
    fn type_order(&mut self, facts: &Facts<'s>, shallow: bool) -> Vec<Types> {
        let allowed = match facts.types {
            Some(types) => types,
            None => {
                let implied = facts.implied_types();
                if implied.is_empty() {
                    Types::STRING
                } else {
                    implied
                }
            }
        };
        let mut options: Vec<Types> = allowed.each().filter(|t| *t != Types::NULL).collect();
        if shallow
            && options
                .iter()
                .any(|t| !matches!(*t, Types::OBJECT | Types::ARRAY))
        {
            options.retain(|t| !matches!(*t, Types::OBJECT | Types::ARRAY));
        }
        self.rng.shuffle(&mut options);
        if allowed.has(Types::NULL) {
            options.push(Types::NULL);
        }
        options
    }

    fn string(&mut self, facts: &Facts<'s>) -> Result<String, String> {
        let min = facts.min_length.unwrap_or(0);
        // As long as the oversized case's string, at most: every case holds a copy of it.
        if min > OVERSIZED_STRING as u64 {
            return Err(format!(
                "a string of at least {min} characters is too long to build"
            ));
        }
        let max = facts.max_length;
        if let Some(pattern) = facts.patterns.first() {
            let mut last = None;
            for _ in 0..12 {
                let sample = self.patterns.sample(pattern, self.rng)?;
                let n = strings::length(&sample);
                if n >= min && max.is_none_or(|m| n <= m) {
                    return Ok(sample);
                }
                last = Some(sample);
            }
            return last.ok_or_else(|| format!("pattern '{pattern}' gave nothing"));
        }
        if let Some(format) = facts.format {
            let examples = strings::format_examples(format);
            if !examples.is_empty() {
                return Ok(examples[self.rng.index(examples.len())].to_string());
            }
        }
        let high = max.unwrap_or(u64::MAX).min(min.saturating_add(12));
        let low = min.max(3).min(high);
        let n = self.rng.between(low as i64, high as i64) as usize;
        Ok(strings::word(self.rng, n))
    }

    fn integer(&mut self, facts: &Facts<'s>) -> Result<Value, String> {
        let (low, high) = integer_range(facts)?;
        let value = match facts.multiple_of {
            Some(m) => {
                let step = integral_step(m).ok_or("multipleOf has no integer multiple")?;
                let first = (low as f64 / step).ceil();
                let last = (high as f64 / step).floor();
                if first > last {
                    return Err("no multiple of multipleOf lies within the bounds".into());
                }
                let k = self
                    .rng
                    .between(first as i64, (last as i64).min(first as i64 + 50));
                (k as f64 * step) as i64
            }
            None => {
                let wide = (i128::from(high) - i128::from(low)) > 1_000;
                if wide && !self.rng.chance(1, 8) {
                    let near = if low <= 0 && high >= 100 { 0 } else { low };
                    self.rng.between(near, near.saturating_add(100).min(high))
                } else {
                    self.rng.between(low, high)
                }
            }
        };
        Ok(Value::Number(value.into()))
    }

    fn fraction(&mut self, facts: &Facts<'s>) -> Result<Value, String> {
        let low = facts
            .minimum
            .into_iter()
            .chain(facts.exclusive_minimum)
            .fold(f64::NEG_INFINITY, f64::max);
        let high = facts
            .maximum
            .into_iter()
            .chain(facts.exclusive_maximum)
            .fold(f64::INFINITY, f64::min);
        let (low, high) = match (low.is_finite(), high.is_finite()) {
            (true, true) => (low, high),
            (true, false) => (low, low + 100.0),
            (false, true) => (high - 100.0, high),
            (false, false) => (0.0, 100.0),
        };
        if low > high {
            return Err("the bounds leave no number".into());
        }
        let value = match facts.multiple_of {
            Some(m) => {
                let first = (low / m).ceil();
                let last = (high / m).floor();
                if first > last {
                    return Err("no multiple of multipleOf lies within the bounds".into());
                }
                let k = self
                    .rng
                    .between(first as i64, (last as i64).min(first as i64 + 50));
                k as f64 * m
            }
            None => {
                let raw = low + self.rng.unit() * (high - low);
                let rounded = (raw * 100.0).round() / 100.0;
                if rounded.fract() == 0.0 {
                    rounded + 0.25
                } else {
                    rounded
                }
            }
        };
        Number::from_f64(value)
            .map(Value::Number)
            .ok_or_else(|| "the bounds give no finite number".into())
    }

    fn object(
        &mut self,
        facts: &Facts<'s>,
        pointer: &str,
        depth: usize,
        shallow: bool,
    ) -> Result<Value, String> {
        let mut names: Vec<&'s str> = Vec::new();
        // Sets beside the lists: an object may declare and require tens of thousands of names.
        let mut chosen: std::collections::HashSet<&'s str> = std::collections::HashSet::new();
        let required = |name: &str| facts.required_names.contains(name);
        for (name, _) in &facts.properties {
            let wanted = required(name)
                || (!shallow
                    && match self.fill {
                        Fill::Everything => true,
                        Fill::RequiredOnly => false,
                        Fill::Typical => self.rng.chance(1, 2),
                    });
            if wanted && chosen.insert(name) {
                names.push(name);
            }
        }
        for name in &facts.required {
            if chosen.insert(name) {
                names.push(name);
            }
        }
        // Properties that come with others (`dependentRequired`).
        let mut i = 0;
        while i < names.len() {
            if let Some((_, needs)) = facts
                .dependent_required
                .iter()
                .find(|(n, _)| *n == names[i])
            {
                for need in needs {
                    if chosen.insert(need) {
                        names.push(need);
                    }
                }
            }
            i += 1;
        }
        if let Some(max) = facts.max_properties {
            // Optional names go, the last first, until the maximum is met or none is left.
            let mut excess = (names.len() as u64).saturating_sub(max);
            let mut keep = vec![true; names.len()];
            for (at, name) in names.iter().enumerate().rev() {
                if excess == 0 {
                    break;
                }
                if !required(name) {
                    keep[at] = false;
                    excess -= 1;
                }
            }
            let mut kept = keep.into_iter();
            names.retain(|_| kept.next().unwrap_or(true));
        }
        let mut map = Map::new();
        for name in names {
            let schemas = facts.property_schemas(name);
            let place = push_segment(pointer, name);
            match self.value(&schemas, place, depth + 1) {
                Ok(value) => {
                    map.insert(name.to_string(), value);
                }
                Err(why) if required(name) => return Err(why),
                Err(_) => {}
            }
        }
        let min = facts.min_properties.unwrap_or(0);
        let mut extra = 0;
        while (map.len() as u64) < min && extra < 64 {
            extra += 1;
            let (name, schemas) = if !facts.pattern_properties.is_empty() {
                let (pattern, schema) =
                    facts.pattern_properties[extra % facts.pattern_properties.len()];
                (self.patterns.sample(pattern, self.rng)?, vec![schema])
            } else if facts.closed {
                break;
            } else {
                (format!("extra_{extra}"), facts.additional.clone())
            };
            if map.contains_key(&name) {
                continue;
            }
            let place = push_segment(pointer, &name);
            let value = self.value(&schemas, place, depth + 1)?;
            map.insert(name, value);
        }
        Ok(Value::Object(map))
    }

    fn array(
        &mut self,
        facts: &Facts<'s>,
        pointer: &str,
        depth: usize,
        shallow: bool,
    ) -> Result<Value, String> {
        let min = facts.min_items.unwrap_or(0);
        let needed_contains = if facts.contains.is_empty() {
            0
        } else {
            facts.min_contains.unwrap_or(1)
        };
        let min = min.max(needed_contains);
        let max = facts.max_items.unwrap_or(u64::MAX);
        if min > max {
            return Err("minItems is larger than maxItems".into());
        }
        if min > 10_000 {
            return Err(format!("{min} items are too many to build"));
        }
        let length = if shallow {
            min
        } else {
            let high = max.min(min + 3);
            let low = min.max(1).min(high);
            self.rng.between(low as i64, high as i64) as u64
        };
        let mut items: Vec<Value> = Vec::with_capacity(length as usize);
        for i in 0..length as usize {
            let mut schemas = facts.item_schemas(i);
            if (i as u64) < needed_contains {
                schemas.extend(facts.contains.iter().copied());
            }
            let place = format!("{pointer}/{i}");
            let mut made = None;
            for _ in 0..if facts.unique_items { 6 } else { 1 } {
                let candidate = match self.value(&schemas, place.clone(), depth + 1) {
                    Ok(v) => v,
                    Err(why) if (i as u64) < min => return Err(why),
                    Err(_) => break,
                };
                if facts.unique_items
                    && items.iter().any(|v| crate::json::same_value(v, &candidate))
                {
                    // The place was recorded for the duplicate; drop it before trying again.
                    self.nodes.retain(|n| {
                        n.pointer != place && !n.pointer.starts_with(&format!("{place}/"))
                    });
                    continue;
                }
                made = Some(candidate);
                break;
            }
            match made {
                Some(v) => items.push(v),
                None if (i as u64) < min => return Err("cannot make enough distinct items".into()),
                None => break,
            }
        }
        Ok(Value::Array(items))
    }
}

/// The allowed integers, from the bounds (a window of typical values when unbounded).
pub(crate) fn integer_range(facts: &Facts<'_>) -> Result<(i64, i64), String> {
    let (low, high) = match (facts.integer_low(), facts.integer_high()) {
        (Some(low), Some(high)) => (low, high),
        (Some(low), None) => (low, low.saturating_add(100)),
        (None, Some(high)) => (high.saturating_sub(100), high),
        (None, None) => (0, 100),
    };
    if low > high {
        return Err("the bounds leave no integer".into());
    }
    Ok((low, high))
}

/// The smallest positive integer that is a multiple of `m`, if a small one exists.
fn integral_step(m: f64) -> Option<f64> {
    (1..=1_000)
        .map(|i| i as f64 * m)
        .find(|v| v.fract() == 0.0 && *v >= 1.0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::Dialect;
    use serde_json::json;

    fn sample(schema: &Value, seed: u64, fill: Fill) -> Result<(Value, Vec<String>), String> {
        let root = Root::new(schema, Dialect::Draft202012);
        let mut patterns = Patterns::default();
        let mut rng = SplitMix64::new(seed);
        let (value, nodes) = Sampler::new(&root, &mut patterns, &mut rng, fill)
            .sample()
            .map_err(|e| e.to_string())?;
        Ok((value, nodes.into_iter().map(|n| n.pointer).collect()))
    }

    #[test]
    fn fills_objects_and_records_places() {
        let schema = json!({"type": "object", "properties": {
            "q": {"type": "string", "minLength": 2, "maxLength": 4},
            "n": {"type": "integer", "minimum": 5, "maximum": 7},
            "tags": {"type": "array", "items": {"enum": ["a", "b"]}, "minItems": 1, "maxItems": 2}
        }, "required": ["q"]});
        let (value, places) = sample(&schema, 1, Fill::Everything).unwrap();
        let validator = crate::SchemaValidator::new(&schema).unwrap();
        assert!(validator.is_valid(&value), "{value}");
        assert_eq!(places[..3], ["", "/q", "/n"]);
        assert!(places.contains(&"/tags/0".to_string()));
        let (only, _) = sample(&schema, 1, Fill::RequiredOnly).unwrap();
        assert_eq!(only.as_object().unwrap().keys().collect::<Vec<_>>(), ["q"]);
    }

    #[test]
    fn the_same_seed_gives_the_same_value() {
        let schema = json!({"type": "object", "properties": {"a": {"type": "number"}, "b": {"type": "string"}}});
        for seed in 0..20 {
            assert_eq!(
                sample(&schema, seed, Fill::Typical),
                sample(&schema, seed, Fill::Typical)
            );
        }
    }

    #[test]
    fn numbers_respect_bounds_and_multiples() {
        let validator_of = |s: &Value| crate::SchemaValidator::new(s).unwrap();
        for schema in [
            json!({"type": "integer", "exclusiveMinimum": 3, "exclusiveMaximum": 6}),
            json!({"type": "integer", "multipleOf": 7, "minimum": 20}),
            json!({"type": "number", "minimum": -1.5, "maximum": -1.25}),
            json!({"type": "number", "multipleOf": 0.25}),
            json!({"type": "integer", "minimum": 9_000_000_000_000_000_000u64}),
        ] {
            let validator = validator_of(&schema);
            for seed in 0..30 {
                let (value, _) = sample(&schema, seed, Fill::Typical).unwrap();
                assert!(validator.is_valid(&value), "{schema}: {value}");
            }
        }
    }

    #[test]
    fn recursive_schemas_stay_finite() {
        let schema = json!({"$defs": {"node": {"type": "object", "properties": {
            "children": {"type": "array", "items": {"$ref": "#/$defs/node"}}}}}, "$ref": "#/$defs/node"});
        let (value, _) = sample(&schema, 4, Fill::Everything).unwrap();
        assert!(crate::json::nesting_depth(&value, 64) < 20);
    }

    #[test]
    fn impossible_schemas_say_why() {
        let why = sample(
            &json!({"type": "integer", "minimum": 5, "maximum": 4}),
            1,
            Fill::Typical,
        )
        .unwrap_err();
        assert_eq!(why, "the bounds leave no integer");
    }
}
