//! Cases made by changing one place of a valid value: the boundaries the schema allows, and one
//! fault at a time.
//!
//! Each candidate says what it means to be ([`Intent`]); the validator decides whether it is, and
//! a candidate that is not what it meant to be is dropped, never relabelled.

use super::facts::{type_of, Facts, Types};
use super::rng::SplitMix64;
use super::sample::Node;
use super::strings::{self, Patterns};
use super::Category;
use crate::json::pointer::{caller_path, split_pointer};
use serde_json::{json, Map, Number, Value};

/// How many characters the oversized string has: 1 MiB of ASCII.
pub(crate) const OVERSIZED_STRING: usize = 1 << 20;
/// How many items the oversized array has.
pub(crate) const OVERSIZED_ARRAY: usize = 100_000;
/// How deep the deeply nested value goes: far deeper than any argument a model writes, and
/// within what every JSON reader on the way reads (serde_json and the validator stop at 128
/// levels, pydantic-core at 200), so a finding it causes can be read back and replayed.
pub(crate) const DEEP_NESTING: usize = 100;
/// How many places get an oversized or deeply nested value in one run of the generator: each is
/// large to send, and one or two find what they find.
pub(crate) const MAX_HEAVY_PLACES: usize = 2;

/// How many required properties of one object get a case that leaves them out, at most.
pub(crate) const MAX_MISSING_REQUIRED: usize = 32;

/// What a candidate means to be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Intent {
    /// A value the schema accepts.
    Valid,
    /// A value the schema refuses.
    Invalid,
    /// Whatever the validator says (an extra property on an object that may be open).
    Either,
}

/// A value to be checked by the validator before it becomes a case.
#[derive(Debug, Clone)]
pub(crate) struct Candidate {
    pub(crate) intent: Intent,
    pub(crate) category: Category,
    pub(crate) label: String,
    pub(crate) value: Value,
}

/// Makes the candidates for each place of one base value.
pub(crate) struct Mutator<'b> {
    pub(crate) base: &'b Value,
    /// How the root is named in labels ("the arguments", "the value").
    pub(crate) root_name: &'static str,
    /// Whether the value is a tool's arguments.
    pub(crate) tool: bool,
    /// Patterns compiled for sampling (property names for `patternProperties`).
    pub(crate) patterns: &'b mut Patterns,
    pub(crate) out: Vec<Candidate>,
    /// How many more candidates it may make: each is a copy of the base, so a base of many
    /// places gets fewer (see [`copies_for`]).
    pub(crate) room: usize,
}

/// The fewest one-place changes of a base value made however large it is.
const MIN_COPIES: usize = 24;

/// How many candidates (each a whole copy) a base of `places` places may get: all that 64 places
/// give for a base of up to about a thousand places, then fewer, so that the copies of a base of
/// tens of thousands of places stay within a few hundred megabytes.
pub(crate) fn copies_for(places: usize) -> usize {
    ((1 << 20) / places.max(1)).max(MIN_COPIES)
}

impl<'b> Mutator<'b> {
    /// A mutator of `base`, a value of `places` places, with room for [`copies_for`] them.
    pub(crate) fn new(
        base: &'b Value,
        places: usize,
        root_name: &'static str,
        tool: bool,
        patterns: &'b mut Patterns,
    ) -> Self {
        Mutator {
            base,
            root_name,
            tool,
            patterns,
            out: Vec::new(),
            room: copies_for(places),
        }
    }
}

impl Mutator<'_> {
    /// The name of the place at `pointer`, as a caller writes it.
    fn name(&self, pointer: &str) -> String {
        if pointer.is_empty() {
            self.root_name.to_string()
        } else {
            format!("'{}'", caller_path(self.base, pointer))
        }
    }

    /// The base with the place at `pointer` replaced by `value`.
    fn with(&self, pointer: &str, value: Value) -> Option<Value> {
        if self.room == 0 {
            return None;
        }
        let mut copy = self.base.clone();
        *place_mut(&mut copy, pointer)? = value;
        Some(copy)
    }

    fn push(&mut self, intent: Intent, category: Category, label: String, value: Option<Value>) {
        if let Some(value) = value.filter(|_| self.room > 0) {
            self.room -= 1;
            self.out.push(Candidate {
                intent,
                category,
                label,
                value,
            });
        }
    }

    fn replace(
        &mut self,
        intent: Intent,
        category: Category,
        pointer: &str,
        what: String,
        value: Value,
    ) {
        let label = format!("{} {what}", self.name(pointer));
        let replaced = self.with(pointer, value);
        self.push(intent, category, label, replaced);
    }

    /// Every candidate for one place.
    pub(crate) fn place(&mut self, node: &Node<'_>, rng: &mut SplitMix64) {
        let Some(current) = crate::json::pointer::resolve(self.base, &node.pointer).cloned() else {
            return;
        };
        let facts = &node.facts;
        let pointer = node.pointer.as_str();
        self.enum_cases(pointer, facts, &current);
        match &current {
            Value::Number(_) => self.number_cases(pointer, facts, &current),
            Value::String(text) => self.string_cases(pointer, facts, text, rng),
            Value::Array(items) => self.array_cases(pointer, facts, items),
            Value::Object(map) => self.object_cases(pointer, facts, map, rng),
            Value::Bool(b) => {
                self.replace(
                    Intent::Valid,
                    Category::Boundary,
                    pointer,
                    format!("= {}", !b),
                    Value::Bool(!b),
                );
                self.replace(
                    Intent::Invalid,
                    Category::ModelMistake,
                    pointer,
                    format!("as a string (\"{b}\")"),
                    Value::String(b.to_string()),
                );
            }
            Value::Null => {}
        }
        self.wrong_types(pointer, facts, &current);
    }

    fn enum_cases(&mut self, pointer: &str, facts: &Facts<'_>, current: &Value) {
        let Some(choices) = &facts.choices else {
            return;
        };
        for choice in choices.iter().take(20) {
            self.replace(
                Intent::Valid,
                Category::EnumValue,
                pointer,
                format!("= {choice} (enum)"),
                (*choice).clone(),
            );
        }
        let mut outside = Vec::new();
        match current {
            Value::String(text) => {
                let flipped: String = text
                    .chars()
                    .map(|c| {
                        if c.is_lowercase() {
                            c.to_ascii_uppercase()
                        } else {
                            c.to_ascii_lowercase()
                        }
                    })
                    .collect();
                outside.push(Value::String(flipped));
                outside.push(Value::String(format!("{text}_other")));
                outside.push(Value::String("unknown".into()));
            }
            Value::Number(n) => {
                let largest = choices
                    .iter()
                    .filter_map(|c| c.as_f64())
                    .fold(n.as_f64().unwrap_or(0.0), f64::max);
                if let Some(n) = Number::from_f64((largest + 1.0).floor()) {
                    outside.push(Value::Number(n));
                }
            }
            _ => {}
        }
        for value in outside {
            if !choices.iter().any(|c| crate::json::same_value(c, &value)) {
                self.replace(
                    Intent::Invalid,
                    Category::OutsideEnum,
                    pointer,
                    format!("= {value}, not one of its allowed values"),
                    value,
                );
                break;
            }
        }
    }

    fn number_cases(&mut self, pointer: &str, facts: &Facts<'_>, current: &Value) {
        let integral = type_of(current) == Types::INTEGER && !facts.allows(Types::FRACTION);
        if facts.choices.is_none() {
            let boundary = |this: &mut Self, category: Category, what: &str, value: Value| {
                this.replace(Intent::Valid, category, pointer, what.to_string(), value);
            };
            if integral || facts.allows(Types::INTEGER) {
                if let Some(low) = facts.integer_low() {
                    boundary(
                        self,
                        Category::Bound,
                        &format!("at its minimum ({low})"),
                        int_value(i128::from(low)),
                    );
                }
                if let Some(high) = facts.integer_high() {
                    boundary(
                        self,
                        Category::Bound,
                        &format!("at its maximum ({high})"),
                        int_value(i128::from(high)),
                    );
                }
                for (category, what, value) in [
                    (Category::Bound, "= 0", json!(0)),
                    (Category::Bound, "= -1", json!(-1)),
                    (
                        Category::Boundary,
                        "= 2^53 + 1 (past exact doubles)",
                        json!(9_007_199_254_740_993_i64),
                    ),
                    (
                        Category::Boundary,
                        "= the largest 64-bit integer",
                        json!(i64::MAX),
                    ),
                    (
                        Category::Boundary,
                        "= the smallest 64-bit integer",
                        json!(i64::MIN),
                    ),
                ] {
                    boundary(self, category, what, value);
                }
            }
            if facts.allows(Types::FRACTION) {
                if let Some(low) = facts.minimum.and_then(Number::from_f64) {
                    boundary(
                        self,
                        Category::Bound,
                        &format!("at its minimum ({low})"),
                        Value::Number(low),
                    );
                }
                if let Some(high) = facts.maximum.and_then(Number::from_f64) {
                    boundary(
                        self,
                        Category::Bound,
                        &format!("at its maximum ({high})"),
                        Value::Number(high),
                    );
                }
                for (what, value) in [
                    ("= 0.5", json!(0.5)),
                    ("= -2.75", json!(-2.75)),
                    ("= 1e-7", json!(1e-7)),
                    ("= 1e300", json!(1e300)),
                ] {
                    boundary(self, Category::Boundary, what, value);
                }
            }
        }
        // One past each bound.
        let past = |this: &mut Self, what: String, value: Option<Value>| {
            if let Some(value) = value {
                this.replace(Intent::Invalid, Category::PastBound, pointer, what, value);
            }
        };
        if let Some(m) = facts.minimum {
            past(
                self,
                format!("below its minimum ({})", show(m - 1.0)),
                float_or_int(m - 1.0),
            );
        }
        if let Some(m) = facts.maximum {
            past(
                self,
                format!("above its maximum ({})", show(m + 1.0)),
                float_or_int(m + 1.0),
            );
        }
        if let Some(m) = facts.exclusive_minimum {
            past(
                self,
                format!("at its exclusive minimum ({})", show(m)),
                float_or_int(m),
            );
        }
        if let Some(m) = facts.exclusive_maximum {
            past(
                self,
                format!("at its exclusive maximum ({})", show(m)),
                float_or_int(m),
            );
        }
        if let (Some(m), Some(v)) = (facts.multiple_of, current.as_f64()) {
            let off = if integral && m > 1.0 {
                v + 1.0
            } else {
                v + m / 2.0
            };
            past(
                self,
                format!("not a multiple of {}", show(m)),
                float_or_int(off),
            );
        }
        if integral {
            self.replace(
                Intent::Invalid,
                Category::WrongType,
                pointer,
                "a fraction where an integer is expected".into(),
                json!(current.as_f64().unwrap_or(0.0) + 0.5),
            );
        }
        self.replace(
            Intent::Invalid,
            Category::ModelMistake,
            pointer,
            format!("as a string (\"{current}\")"),
            Value::String(current.to_string()),
        );
    }

    fn string_cases(&mut self, pointer: &str, facts: &Facts<'_>, text: &str, rng: &mut SplitMix64) {
        let min = facts.min_length.unwrap_or(0);
        let max = facts.max_length;
        if facts.choices.is_none() {
            if min > 0 {
                let exact = strings::fit_length(text, min, Some(min));
                self.replace(
                    Intent::Valid,
                    Category::Bound,
                    pointer,
                    format!("at its minLength ({min})"),
                    Value::String(exact),
                );
            } else {
                self.replace(
                    Intent::Valid,
                    Category::Bound,
                    pointer,
                    "empty".into(),
                    Value::String(String::new()),
                );
            }
            if let Some(max) = max.filter(|m| *m <= 100_000) {
                let exact = strings::fit_length(text, max, Some(max));
                self.replace(
                    Intent::Valid,
                    Category::Bound,
                    pointer,
                    format!("at its maxLength ({max})"),
                    Value::String(exact),
                );
            }
            if facts.patterns.is_empty() && facts.format.is_none() {
                for (what, hostile) in strings::HOSTILE_UNICODE {
                    let fitted = strings::fit_length(hostile, min, max);
                    self.replace(
                        Intent::Valid,
                        Category::Unicode,
                        pointer,
                        format!("with {what}"),
                        Value::String(fitted),
                    );
                }
            }
        }
        if min > 0 {
            let short = strings::fit_length(text, min - 1, Some(min - 1));
            self.replace(
                Intent::Invalid,
                Category::PastBound,
                pointer,
                format!("shorter than its minLength ({})", min - 1),
                Value::String(short),
            );
        }
        if let Some(max) = max.filter(|m| *m < OVERSIZED_STRING as u64) {
            let long: String = text.chars().cycle().take(max as usize + 1).collect();
            let long = if long.chars().count() as u64 == max + 1 {
                long
            } else {
                strings::fit_length(text, max + 1, Some(max + 1))
            };
            self.replace(
                Intent::Invalid,
                Category::PastBound,
                pointer,
                format!("longer than its maxLength ({})", max + 1),
                Value::String(long),
            );
        }
        if !facts.patterns.is_empty() {
            let mut breakers: Vec<String> = strings::pattern_breakers()
                .into_iter()
                .map(|b| strings::fit_length(&b, min, max))
                .collect();
            rng.shuffle(&mut breakers);
            for breaker in breakers.into_iter().take(3) {
                self.replace(
                    Intent::Invalid,
                    Category::PatternOrFormat,
                    pointer,
                    "does not match its pattern".into(),
                    Value::String(breaker),
                );
            }
        }
        if let Some(format) = facts.format {
            for breaker in strings::format_breakers(format) {
                self.replace(
                    Intent::Invalid,
                    Category::PatternOrFormat,
                    pointer,
                    format!("is not a valid {format} ({breaker:?})"),
                    Value::String((*breaker).to_string()),
                );
            }
        }
    }

    fn array_cases(&mut self, pointer: &str, facts: &Facts<'_>, items: &[Value]) {
        let min = facts.min_items.unwrap_or(0) as usize;
        let max = facts.max_items.map(|m| m as usize);
        let filler = items.last().cloned().unwrap_or(Value::Null);
        let sized = |n: usize| -> Value {
            let mut out: Vec<Value> = items.iter().take(n).cloned().collect();
            while out.len() < n {
                out.push(filler.clone());
            }
            Value::Array(out)
        };
        if min == 0 {
            self.replace(
                Intent::Valid,
                Category::Bound,
                pointer,
                "empty".into(),
                json!([]),
            );
        } else {
            self.replace(
                Intent::Valid,
                Category::Bound,
                pointer,
                format!("with its minItems ({min})"),
                sized(min),
            );
            self.replace(
                Intent::Invalid,
                Category::PastBound,
                pointer,
                format!("with fewer items than its minItems ({})", min - 1),
                sized(min - 1),
            );
        }
        if let Some(max) = max.filter(|m| *m <= 1_000) {
            self.replace(
                Intent::Valid,
                Category::Bound,
                pointer,
                format!("with its maxItems ({max})"),
                sized(max),
            );
            self.replace(
                Intent::Invalid,
                Category::PastBound,
                pointer,
                format!("with more items than its maxItems ({})", max + 1),
                sized(max + 1),
            );
        }
        if facts.unique_items && !items.is_empty() {
            let mut repeated = items.to_vec();
            repeated.push(items[0].clone());
            self.replace(
                Intent::Invalid,
                Category::PastBound,
                pointer,
                "with a repeated item".into(),
                Value::Array(repeated),
            );
        }
        if let Some(first) = items.first() {
            self.replace(
                Intent::Invalid,
                Category::ModelMistake,
                pointer,
                "as one item instead of a list".into(),
                first.clone(),
            );
        }
        let text = Value::Array(items.to_vec()).to_string();
        self.replace(
            Intent::Invalid,
            Category::ModelMistake,
            pointer,
            "sent as JSON text".into(),
            Value::String(text),
        );
    }

    fn object_cases(
        &mut self,
        pointer: &str,
        facts: &Facts<'_>,
        map: &Map<String, Value>,
        rng: &mut SplitMix64,
    ) {
        let name = self.name(pointer);
        // Each case is a copy of the whole value: an object requiring thousands of names gets a
        // seeded choice of them, not a copy per name (quadratic in time and memory).
        let mut missing_ones: Vec<&str> = facts.required.clone();
        if missing_ones.len() > MAX_MISSING_REQUIRED {
            rng.shuffle(&mut missing_ones);
            missing_ones.truncate(MAX_MISSING_REQUIRED);
        }
        for required in &missing_ones {
            if map.contains_key(*required) {
                let mut without = map.clone();
                without.shift_remove(*required);
                let missing = if pointer.is_empty() {
                    format!("missing required '{required}'")
                } else {
                    format!("{name} missing required '{required}'")
                };
                let value = self.with(pointer, Value::Object(without));
                self.push(Intent::Invalid, Category::MissingRequired, missing, value);
            }
        }
        let optional: Vec<&String> = map
            .keys()
            .filter(|k| !facts.required_names.contains(k.as_str()))
            .collect();
        if !optional.is_empty() && !pointer.is_empty() {
            let mut only = map.clone();
            only.retain(|k, _| facts.required_names.contains(k.as_str()));
            self.replace(
                Intent::Valid,
                Category::Typical,
                pointer,
                "with only its required properties".into(),
                Value::Object(only),
            );
        }
        // An undeclared property: refused by a closed object, and judged by `propertyNames`
        // and an `additionalProperties` schema on an open one. (At the root of a tool's
        // arguments an open object gets the invented argument instead.)
        if facts.closed || !pointer.is_empty() || !self.tool {
            let extra = invented_name(map, facts);
            let mut with = map.clone();
            with.insert(extra.clone(), json!("unexpected"));
            let label = format!("{name} with undeclared property '{extra}'");
            let value = self.with(pointer, Value::Object(with));
            let intent = if facts.closed {
                Intent::Invalid
            } else {
                Intent::Either
            };
            self.push(intent, Category::Undeclared, label, value);
        }
        // Declared properties the base left out, each added alone: a property declared `false`
        // (or `not: {}`) is refused.
        for (declared, _) in facts.properties.iter().take(16) {
            if !map.contains_key(*declared) {
                let mut with = map.clone();
                with.insert((*declared).to_string(), json!("x"));
                let label = format!("{name} with its optional property '{declared}' = \"x\"");
                let value = self.with(pointer, Value::Object(with));
                self.push(Intent::Either, Category::Typical, label, value);
            }
        }
        // A property that needs others (`dependentRequired`) without them.
        for (present, needs) in &facts.dependent_required {
            let Some(need) = needs.first() else { continue };
            let mut with = map.clone();
            with.entry((*present).to_string()).or_insert(json!("x"));
            with.shift_remove(*need);
            let label = format!("{name} with '{present}' but without '{need}', which it requires");
            let value = self.with(pointer, Value::Object(with));
            self.push(Intent::Invalid, Category::MissingRequired, label, value);
        }
        // A property named by a `patternProperties` pattern, with a value of the wrong type.
        for (pattern, _) in facts.pattern_properties.iter().take(4) {
            let Ok(key) = self.patterns.sample(pattern, rng) else {
                continue;
            };
            for wrong in [json!("text"), json!(12345)] {
                let mut with = map.clone();
                with.insert(key.clone(), wrong.clone());
                let label = format!("{name} with '{key}' = {wrong} (matching pattern '{pattern}')");
                let value = self.with(pointer, Value::Object(with));
                self.push(Intent::Either, Category::WrongType, label, value);
            }
        }
        if let Some(max) = facts.max_properties.filter(|m| (*m as usize) < 1_000) {
            let mut more = map.clone();
            let mut i = 0;
            while more.len() <= max as usize {
                i += 1;
                more.insert(format!("extra_{i}"), json!("x"));
            }
            self.replace(
                Intent::Invalid,
                Category::PastBound,
                pointer,
                format!("with more properties than its maxProperties ({max})"),
                Value::Object(more),
            );
        }
        if pointer.is_empty() {
            return;
        }
        let text = Value::Object(map.clone()).to_string();
        self.replace(
            Intent::Invalid,
            Category::ModelMistake,
            pointer,
            "sent as JSON text".into(),
            Value::String(text),
        );
    }

    /// `null`, and values of a type the place does not allow.
    fn wrong_types(&mut self, pointer: &str, facts: &Facts<'_>, current: &Value) {
        // `null` arguments would read as absent ones in a findings file; absent is its own case.
        let root_of_arguments = self.tool && pointer.is_empty();
        if (!facts.allows(Types::NULL) || facts.choices.is_some()) && !root_of_arguments {
            self.replace(
                Intent::Invalid,
                Category::WrongType,
                pointer,
                "is null".into(),
                Value::Null,
            );
        }
        let representatives: [(Types, &str, Value); 6] = [
            (Types::STRING, "a string", json!("text")),
            (Types::INTEGER, "a number", json!(12345)),
            (Types::BOOLEAN, "a boolean", json!(true)),
            (Types::OBJECT, "an object", json!({"key": "value"})),
            (Types::ARRAY, "an array", json!([current.clone()])),
            (Types::FRACTION, "a fractional number", json!(2.5)),
        ];
        let mut made = 0;
        for (t, what, value) in representatives {
            if made == 2 {
                break;
            }
            if type_of(current) == t || facts.allows(t) {
                continue;
            }
            self.replace(
                Intent::Invalid,
                Category::WrongType,
                pointer,
                format!("as {what}"),
                value,
            );
            made += 1;
        }
    }

    /// An oversized value for a string or array place.
    pub(crate) fn oversized(&mut self, node: &Node<'_>) -> bool {
        let Some(current) = crate::json::pointer::resolve(self.base, &node.pointer) else {
            return false;
        };
        match current {
            Value::String(_) => {
                let big = "x".repeat(OVERSIZED_STRING);
                self.replace(
                    Intent::Either,
                    Category::Oversized,
                    &node.pointer,
                    "as a 1 MiB string".into(),
                    Value::String(big),
                );
                true
            }
            Value::Array(items) => {
                let item = items.first().cloned().unwrap_or(json!(0));
                let big = Value::Array(vec![item; OVERSIZED_ARRAY]);
                self.replace(
                    Intent::Either,
                    Category::Oversized,
                    &node.pointer,
                    "with 100,000 items".into(),
                    big,
                );
                true
            }
            _ => false,
        }
    }

    /// A value nested [`DEEP_NESTING`] arrays deep at a place.
    pub(crate) fn deep(&mut self, node: &Node<'_>) {
        self.replace(
            Intent::Either,
            Category::DeepNesting,
            &node.pointer,
            format!("as arrays nested {DEEP_NESTING} deep"),
            deeply_nested(DEEP_NESTING),
        );
    }
}

/// `[[[...]]]`, `depth` arrays deep, built without recursion.
pub(crate) fn deeply_nested(depth: usize) -> Value {
    let mut value = json!([]);
    for _ in 1..depth {
        value = Value::Array(vec![value]);
    }
    value
}

/// A property name a model might invent next to the declared ones: a declared name with an `s`,
/// or a common option name.
pub(crate) fn invented_name(map: &Map<String, Value>, facts: &Facts<'_>) -> String {
    let declared: Vec<&str> = facts.properties.iter().map(|(n, _)| *n).collect();
    let candidates = declared
        .iter()
        .map(|n| format!("{n}s"))
        .chain(["verbose", "options", "format", "extra"].map(String::from));
    for candidate in candidates {
        if !declared.contains(&candidate.as_str()) && !map.contains_key(&candidate) {
            return candidate;
        }
    }
    "undeclared_argument".into()
}

/// The place at `pointer` inside `value`, for writing.
pub(crate) fn place_mut<'v>(value: &'v mut Value, pointer: &str) -> Option<&'v mut Value> {
    let mut here = value;
    for segment in split_pointer(pointer) {
        here = match here {
            Value::Object(map) => map.get_mut(segment.as_ref())?,
            Value::Array(items) => items.get_mut(segment.parse::<usize>().ok()?)?,
            _ => return None,
        };
    }
    Some(here)
}

/// A JSON number for an integer of any size (a float past 64 bits).
fn int_value(i: i128) -> Value {
    if let Ok(v) = i64::try_from(i) {
        return json!(v);
    }
    if let Ok(v) = u64::try_from(i) {
        return json!(v);
    }
    Number::from_f64(i as f64).map_or(Value::Null, Value::Number)
}

/// A number as an integer when it is one (and fits), else as a float.
fn float_or_int(v: f64) -> Option<Value> {
    if v.fract() == 0.0 && v.abs() < 9.0e15 {
        return Some(int_value(v as i128));
    }
    Number::from_f64(v).map(Value::Number)
}

fn show(v: f64) -> String {
    float_or_int(v).map_or_else(|| v.to_string(), |n| n.to_string())
}
