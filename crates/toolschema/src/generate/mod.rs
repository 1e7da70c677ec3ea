//! Values from a schema, valid and invalid, deterministic from a seed.
//!
//! [`values`] makes cases for any schema, [`arguments`] for a tool's `tools/call` arguments (with
//! the cases only arguments have: absent, `{}`, sent as JSON text). Each case is one of:
//!
//! - **valid**: typical values, every optional property and none, every `enum` value, each bound
//!   exactly (`minimum`, `maxLength`, `maxItems`, empty strings and arrays when allowed), 0, -1,
//!   integers past what a double holds exactly, fractions, and Unicode that breaks naive code
//!   (astral characters, combining marks, right-to-left text, NUL);
//! - **invalid**, one fault at a time: a required property missing, a wrong type, `null`, one
//!   past each bound, a string that breaks its `pattern` or `format`, a value outside its `enum`,
//!   an undeclared property on a closed object, and the mistakes models make (numbers and
//!   booleans as strings, objects and arrays sent as JSON text, one item for a list, an invented
//!   extra argument);
//! - **heavy**, valid or invalid as the schema says: a 1 MiB string, a 100,000-item array, arrays
//!   nested 100 deep.
//!
//! Each case is a whole value, so a value with many places gets the one-place changes at a
//! bounded number of them (the shallowest 64 places; 32 required properties of one object left
//! out, chosen by the seed): what a schema of thousands of properties costs stays linear in its
//! size.
//!
//! Every case is checked with the validator it was made for before it is returned: a valid case
//! validates, an invalid one does not, and [`Case::errors`] says why. A candidate that is not
//! what it was meant to be, or a value that cannot be made (a `pattern` with look-around, a
//! `$ref` outside the document), is never guessed: it is left out and counted in
//! [`Generated::skipped`] with the reason.
//!
//! The same schema, seed and options give the same cases in the same order on every machine: the
//! randomness is SplitMix64 (see `rng.rs` for why), and strings for `pattern` come from
//! `rand_regex` after the pattern is read the way the validator reads it.
//!
//! ```
//! use serde_json::json;
//! use toolschema::generate::{self, GenerateOptions, Kind};
//! use toolschema::Tool;
//!
//! let tool = Tool::from_value(json!({"name": "search", "inputSchema": {
//!     "type": "object",
//!     "properties": {"query": {"type": "string", "maxLength": 50}, "limit": {"type": "integer", "maximum": 100}},
//!     "required": ["query"], "additionalProperties": false
//! }})).unwrap();
//! let compiled = tool.compile().unwrap();
//! let generated = generate::arguments(&compiled, &GenerateOptions { seed: 7, cases: 40 });
//! assert_eq!(generated.cases.len(), 40);
//! for case in &generated.cases {
//!     let arguments = case.value.clone().unwrap_or(json!({}));
//!     assert_eq!(compiled.validate_input(&arguments).is_ok(), case.kind == Kind::Valid, "{}", case.label);
//! }
//! assert!(generated.cases.iter().any(|c| c.label == "missing required 'query'"));
//! assert!(generated.cases.iter().any(|c| c.label == "'limit' above its maximum (101)"));
//! ```

pub(crate) mod facts;
mod mutate;
mod rng;
mod sample;
mod shrink;
mod strings;

pub use shrink::smaller;

use crate::json::pointer::resolve;
use crate::validate::{CompiledTool, SchemaValidator, Subject, ValidationError};
use facts::Root;
use mutate::{Candidate, Intent, Mutator, MAX_HEAVY_PLACES};
use rng::{stable_hash, SplitMix64};
use sample::{Fill, NoSample, Node, Sampler};
use serde_json::{json, Value};
use std::collections::HashSet;
use strings::Patterns;

/// How many places of a value get the cases made by changing one place.
const MAX_MUTATED_PLACES: usize = 64;

/// How many of a case's validation errors it keeps: a 100,000-item array can have as many.
pub const MAX_ERRORS: usize = 16;

/// How many cases to make, from which seed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GenerateOptions {
    /// The seed: the same seed gives the same cases.
    pub seed: u64,
    /// How many cases at most.
    pub cases: usize,
}

impl Default for GenerateOptions {
    fn default() -> Self {
        GenerateOptions {
            seed: 0,
            cases: 100,
        }
    }
}

/// Whether a case fits its schema, as the validator says.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Kind {
    /// The validator accepts it.
    Valid,
    /// The validator refuses it.
    Invalid,
}

/// What a case tries.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Category {
    /// A typical value; every optional property, or only the required ones.
    Typical,
    /// A required property left out.
    MissingRequired,
    /// A value of another type, or `null`.
    WrongType,
    /// A bound exactly (`minimum`, `maximum`, `minLength`, `maxLength`, `minItems`,
    /// `maxItems`), an empty string or array, 0, -1: where faults sit most often, so these come
    /// early.
    Bound,
    /// Large integers, fractions, the other boolean.
    Boundary,
    /// One past a bound (`maximum`, `maxLength`, `minItems`, `multipleOf`, `uniqueItems`, ...).
    PastBound,
    /// What models get wrong: numbers and booleans as strings, JSON text for objects and arrays,
    /// one item for a list, an invented argument.
    ModelMistake,
    /// Each value of an `enum`.
    EnumValue,
    /// A value outside an `enum` or `const`.
    OutsideEnum,
    /// A string that breaks its `pattern` or `format`.
    PatternOrFormat,
    /// Unicode that breaks naive code.
    Unicode,
    /// An undeclared property on a closed object.
    Undeclared,
    /// Arguments absent, `{}`, or sent as JSON text.
    Arguments,
    /// A 1 MiB string or a 100,000-item array.
    Oversized,
    /// Arrays nested 100 deep.
    DeepNesting,
}

/// The order categories take turns in, so that the first cases already cover every kind.
const CATEGORY_ORDER: [Category; 15] = [
    Category::Typical,
    Category::Bound,
    Category::MissingRequired,
    Category::WrongType,
    Category::Boundary,
    Category::PastBound,
    Category::ModelMistake,
    Category::EnumValue,
    Category::OutsideEnum,
    Category::PatternOrFormat,
    Category::Unicode,
    Category::Undeclared,
    Category::Arguments,
    Category::Oversized,
    Category::DeepNesting,
];

/// One generated value with what it tries and whether it fits.
#[derive(Debug, Clone, PartialEq)]
pub struct Case {
    /// Whether the validator accepts it.
    pub kind: Kind,
    /// What it tries.
    pub category: Category,
    /// What it tries in words, naming the place as a caller writes it:
    /// `'limit' above its maximum (101)`, `missing required 'query'`.
    pub label: String,
    /// The value; `None` for absent `tools/call` arguments.
    pub value: Option<Value>,
    /// Why the validator refuses it, the first [`MAX_ERRORS`] reasons (empty for a valid case).
    pub errors: Vec<ValidationError>,
}

/// A case that was not made, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skipped {
    /// What it would have tried.
    pub label: String,
    /// Why it was not made.
    pub reason: String,
}

/// The cases for one schema, in the order to try them.
#[derive(Debug, Clone, Default)]
pub struct Generated {
    /// The cases: categories take turns, each category in a seeded order.
    pub cases: Vec<Case>,
    /// Candidates that were left out: values that could not be made, and values that were not
    /// what they meant to be (a "valid" value the schema refuses, a "fault" the schema accepts).
    pub skipped: Vec<Skipped>,
}

/// Cases for any schema, checked with `validator`.
pub fn values(validator: &SchemaValidator, options: &GenerateOptions) -> Generated {
    let judge = Checker::Schema(validator);
    let mut run = Run::new(validator, judge, "the value", options.seed);
    run.make(options.cases);
    run.finish(options.cases)
}

/// Cases for a tool's `tools/call` arguments, checked with the tool's `inputSchema`.
///
/// Each tool gets its own stream under one seed (the seed mixed with a hash of the tool's name),
/// so adding a tool to a server changes no other tool's cases. Absent arguments are judged as `{}`
/// (what MCP servers take them for).
pub fn arguments(tool: &CompiledTool, options: &GenerateOptions) -> Generated {
    let seed = options.seed ^ stable_hash(tool.name());
    let mut run = Run::new(tool.input(), Checker::Tool(tool), "the arguments", seed);
    run.make(options.cases);
    run.finish(options.cases)
}

/// What decides whether a value fits.
#[derive(Clone, Copy)]
enum Checker<'v> {
    Schema(&'v SchemaValidator),
    Tool(&'v CompiledTool),
}

impl Checker<'_> {
    fn check(&self, value: Option<&Value>) -> Result<(), Vec<ValidationError>> {
        let empty = json!({});
        let value = value.unwrap_or(&empty);
        let result = match self {
            Checker::Schema(validator) => {
                validator.validate_first(value, Subject::Value, MAX_ERRORS)
            }
            Checker::Tool(tool) => tool.validate_input_first(value, MAX_ERRORS),
        };
        result.map_err(|errors| {
            let mut errors = errors.into_vec();
            errors.truncate(MAX_ERRORS);
            errors
        })
    }
}

/// One run of the generator: the pool of accepted cases and what was left out.
struct Run<'v> {
    judge: Checker<'v>,
    root: Root<'v>,
    root_name: &'static str,
    /// Whether the values are a tool's arguments.
    tool: bool,
    rng: SplitMix64,
    patterns: Patterns,
    cases: Vec<Case>,
    /// How many of `cases` came from the systematic pass (the rest are fill-up).
    systematic: usize,
    seen: HashSet<(Kind, u64)>,
    skipped: Vec<Skipped>,
}

impl<'v> Run<'v> {
    fn new(
        validator: &'v SchemaValidator,
        judge: Checker<'v>,
        root_name: &'static str,
        seed: u64,
    ) -> Self {
        Run {
            judge,
            root: Root::new(validator.schema(), validator.dialect()),
            root_name,
            tool: matches!(judge, Checker::Tool(_)),
            rng: SplitMix64::new(seed),
            patterns: Patterns::default(),
            cases: Vec::new(),
            systematic: 0,
            seen: HashSet::new(),
            skipped: Vec::new(),
        }
    }

    /// Check a candidate and keep it when it is what it means to be.
    fn offer(&mut self, candidate: Candidate) {
        self.offer_value(
            candidate.intent,
            candidate.category,
            candidate.label,
            Some(candidate.value),
        );
    }

    fn offer_value(
        &mut self,
        intent: Intent,
        category: Category,
        label: String,
        value: Option<Value>,
    ) {
        let verdict = self.judge.check(value.as_ref());
        // A value the schema cannot judge (a number past 2^52 where the schema compares numbers
        // exactly) is neither valid nor invalid: no case can be made of it.
        if let Err(errors) = &verdict {
            if let Some(unchecked) = errors.iter().find(|e| e.is_unchecked()) {
                let why = unchecked.message.clone();
                self.skip(label, format!("the schema cannot judge it: {why}"));
                return;
            }
        }
        let (kind, errors) = match (intent, verdict) {
            (Intent::Valid | Intent::Either, Ok(())) => (Kind::Valid, Vec::new()),
            (Intent::Invalid | Intent::Either, Err(errors)) => (Kind::Invalid, errors),
            (Intent::Valid, Err(errors)) => {
                let why = errors
                    .first()
                    .map_or_else(String::new, |e| e.message.clone());
                self.skip(
                    label,
                    format!("meant to be valid, but the schema refuses it: {why}"),
                );
                return;
            }
            (Intent::Invalid, Ok(())) => {
                self.skip(
                    label,
                    "meant to break the schema, but the schema accepts it".into(),
                );
                return;
            }
        };
        // The same value twice is one case, except the argument cases (`{}` is worth sending
        // as itself even when it is also "missing required 'q'") and the heavy ones, which are
        // made once per place and would cost more to fingerprint than to keep.
        let always = matches!(
            category,
            Category::Arguments | Category::Oversized | Category::DeepNesting
        );
        if !always && !self.seen.insert((kind, fingerprint(value.as_ref()))) {
            return;
        }
        self.cases.push(Case {
            kind,
            category,
            label,
            value,
            errors,
        });
    }

    fn skip(&mut self, label: String, reason: String) {
        let skipped = Skipped { label, reason };
        if !self.skipped.contains(&skipped) {
            self.skipped.push(skipped);
        }
    }

    /// A valid value built with `fill`: several tries, since a sample can miss what the sampler
    /// reads loosely (`oneOf`, `not`, `if`).
    fn base(&mut self, fill: Fill) -> Result<(Value, Vec<Node<'v>>), String> {
        let mut last = String::from("no value could be made");
        for _ in 0..8 {
            let mut rng = self.rng.fork();
            let sampler = Sampler::new(&self.root, &mut self.patterns, &mut rng, fill);
            match sampler.sample() {
                Ok((value, nodes)) => match self.judge.check(Some(&value)) {
                    Ok(()) => return Ok((value, nodes)),
                    Err(errors) => {
                        last = format!(
                            "the values made did not validate: {}",
                            errors.first().map_or("", |e| e.message.as_str())
                        );
                    }
                },
                // Another try reads the same schema with other random choices: when a value
                // needed more places than a sample may fill, it would likely again.
                Err(NoSample::TooManyPlaces) => return Err(NoSample::TooManyPlaces.to_string()),
                Err(NoSample::Cannot(why)) => last = why,
            }
        }
        Err(last)
    }

    fn make(&mut self, wanted: usize) {
        if wanted == 0 {
            return;
        }
        let fills = [
            (Fill::Everything, "every optional property"),
            (Fill::RequiredOnly, "only the required properties"),
            (Fill::Typical, "a typical value"),
            (Fill::Typical, "a typical value"),
        ];
        let mut primary: Option<(Value, Vec<Node<'v>>)> = None;
        for (fill, label) in fills {
            match self.base(fill) {
                Ok((value, nodes)) => {
                    self.offer_value(
                        Intent::Valid,
                        Category::Typical,
                        label.into(),
                        Some(value.clone()),
                    );
                    if primary.is_none() {
                        primary = Some((value, nodes));
                    }
                }
                Err(why) => self.skip(label.into(), why),
            }
        }
        if self.tool {
            self.argument_cases(primary.as_ref().map(|(v, _)| v));
        }
        if let Some((base, nodes)) = &primary {
            self.mutations(base, nodes);
        }
        self.probes();
        self.systematic = self.cases.len();
        self.fill_up(wanted);
    }

    /// Cases only `tools/call` arguments have.
    fn argument_cases(&mut self, base: Option<&Value>) {
        self.offer_value(
            Intent::Either,
            Category::Arguments,
            "arguments absent".into(),
            None,
        );
        self.offer_value(
            Intent::Either,
            Category::Arguments,
            "arguments {}".into(),
            Some(json!({})),
        );
        let text = base.map_or_else(|| "{}".to_string(), Value::to_string);
        self.offer_value(
            Intent::Invalid,
            Category::Arguments,
            "arguments sent as JSON text".into(),
            Some(Value::String(text)),
        );
    }

    /// Every place of the base changed one way at a time, plus the heavy values.
    fn mutations(&mut self, base: &Value, nodes: &[Node<'v>]) {
        let tool = self.tool;
        let mut mutator = Mutator::new(base, nodes.len(), self.root_name, tool, &mut self.patterns);
        // The shallowest places first, and not all of a very large value: every place gets
        // a dozen candidates, each a copy of the base.
        let mut by_depth: Vec<&Node<'v>> = nodes.iter().collect();
        by_depth.sort_by_key(|n| n.depth);
        for node in by_depth.into_iter().take(MAX_MUTATED_PLACES) {
            mutator.place(node, &mut self.rng);
        }
        if tool {
            if let Some(root) = nodes.first() {
                if let Value::Object(map) = base {
                    let extra = mutate::invented_name(map, &root.facts);
                    let mut with = map.clone();
                    with.insert(extra.clone(), json!(true));
                    mutator.out.push(Candidate {
                        intent: Intent::Either,
                        category: Category::ModelMistake,
                        label: format!("an invented extra argument '{extra}'"),
                        value: Value::Object(with),
                    });
                }
            }
        }
        // Heavy values at a few places only (each is large to send), the shallowest first: a
        // top-level argument is where a server meets them. They have room of their own.
        mutator.room = 3 * MAX_HEAVY_PLACES;
        let mut order: Vec<usize> = (0..nodes.len()).collect();
        self.rng.shuffle(&mut order);
        order.sort_by_key(|&i| nodes[i].depth.max(1));
        let (mut strings, mut arrays) = (0, 0);
        for &i in &order {
            let counter = match resolve(base, &nodes[i].pointer) {
                Some(Value::String(_)) => &mut strings,
                Some(Value::Array(_)) => &mut arrays,
                _ => continue,
            };
            if *counter < MAX_HEAVY_PLACES && mutator.oversized(&nodes[i]) {
                *counter += 1;
            }
        }
        let deep_places: Vec<usize> = order
            .iter()
            .copied()
            .filter(|&i| !tool || nodes[i].depth > 0)
            .take(MAX_HEAVY_PLACES)
            .collect();
        for i in deep_places {
            mutator.deep(&nodes[i]);
        }
        for candidate in mutator.out {
            self.offer(candidate);
        }
    }

    /// A value of each type at the root, valid or not as the schema says (for tools, arguments
    /// that are not an object are covered by the argument cases).
    fn probes(&mut self) {
        if self.tool {
            return;
        }
        for (what, value) in [
            ("null", json!(null)),
            ("true", json!(true)),
            ("0", json!(0)),
            ("-1", json!(-1)),
            ("7", json!(7)),
            ("2.5", json!(2.5)),
            ("-1.5", json!(-1.5)),
            ("an empty string", json!("")),
            ("a word", json!("text")),
            ("an empty array", json!([])),
            ("an empty object", json!({})),
        ] {
            self.offer_value(
                Intent::Either,
                Category::WrongType,
                format!("the value as {what}"),
                Some(value),
            );
        }
    }

    /// More typical values and faults on them until there are `wanted` cases (or no new ones
    /// come).
    fn fill_up(&mut self, wanted: usize) {
        // Give up when a run of attempts brings nothing new (a schema with few values).
        let mut stale = 0;
        while self.cases.len() < wanted && stale < 12 {
            let before = self.cases.len();
            stale += 1;
            let Ok((value, nodes)) = self.base(Fill::Typical) else {
                return;
            };
            self.offer_value(
                Intent::Valid,
                Category::Typical,
                "a typical value".into(),
                Some(value.clone()),
            );
            let node = &nodes[self.rng.index(nodes.len())];
            let mut mutator = Mutator::new(
                &value,
                nodes.len(),
                self.root_name,
                self.tool,
                &mut self.patterns,
            );
            mutator.place(node, &mut self.rng);
            if !mutator.out.is_empty() {
                let i = self.rng.index(mutator.out.len());
                let candidate = mutator.out.swap_remove(i);
                self.offer(candidate);
            }
            if self.cases.len() > before {
                stale = 0;
            }
        }
    }

    /// The cases in the order to try them: the systematic ones first, then the fill-up; within
    /// each, categories take turns, each category in a seeded order.
    fn finish(mut self, wanted: usize) -> Generated {
        let mut all = std::mem::take(&mut self.cases);
        let fill_up = all.split_off(self.systematic.min(all.len()));
        let mut ordered = self.interleave(all);
        ordered.extend(self.interleave(fill_up));
        ordered.truncate(wanted);
        Generated {
            cases: ordered,
            skipped: self.skipped,
        }
    }

    fn interleave(&mut self, cases: Vec<Case>) -> Vec<Case> {
        let mut groups: Vec<Vec<Case>> = CATEGORY_ORDER.iter().map(|_| Vec::new()).collect();
        let mut first = None;
        for case in cases {
            let slot = CATEGORY_ORDER
                .iter()
                .position(|c| *c == case.category)
                .unwrap_or(0);
            // The first typical value stays first: a run starts with a call that should work.
            if slot == 0 && first.is_none() {
                first = Some(case);
                continue;
            }
            groups[slot].push(case);
        }
        for group in &mut groups {
            self.rng.shuffle(group);
        }
        let mut ordered: Vec<Case> = first.into_iter().collect();
        // The exact bounds take every other turn, so that a small budget still tries each of
        // them; the other categories share the turns between.
        let bound = CATEGORY_ORDER
            .iter()
            .position(|c| *c == Category::Bound)
            .unwrap_or(0);
        let mut bounds = std::mem::take(&mut groups[bound]).into_iter();
        let mut iters: Vec<std::vec::IntoIter<Case>> =
            groups.into_iter().map(Vec::into_iter).collect();
        loop {
            let before = ordered.len();
            for iter in &mut iters {
                if let Some(case) = iter.next() {
                    ordered.extend(bounds.next());
                    ordered.push(case);
                }
            }
            if ordered.len() == before {
                ordered.extend(bounds);
                return ordered;
            }
        }
    }
}

/// A hash of a value's JSON text, computed without building the text: equal values, equal
/// fingerprints.
fn fingerprint(value: Option<&Value>) -> u64 {
    use std::hash::Hasher;
    struct HashWriter(std::collections::hash_map::DefaultHasher);
    impl std::io::Write for HashWriter {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            self.0.write(bytes);
            Ok(bytes.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut writer = HashWriter(std::collections::hash_map::DefaultHasher::new());
    match value {
        // Writing to a hasher cannot fail; a value that cannot be written hashes as absent.
        Some(value) => {
            if serde_json::to_writer(&mut writer, value).is_err() {
                writer.0.write_u8(0);
            }
        }
        None => writer.0.write_u8(1),
    }
    writer.0.finish()
}

#[cfg(test)]
mod tests;
