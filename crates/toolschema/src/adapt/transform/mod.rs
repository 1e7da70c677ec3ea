//! The schema transformation: an original `inputSchema` (standard JSON Schema) in; the schema a
//! provider accepts, every loss, and what `restore_arguments` needs to map a call back, out.
//!
//! One pass over the schema, subschema by subschema. Each keyword is kept when the profile reads
//! it, else rewritten, widened, moved into the description in plain words, or dropped, and each
//! of those is reported. When no sound rewrite exists the tool is refused with the reason.

mod all_of;
mod array;
mod fallback;
mod object;
mod refs;
mod root;
mod subschema;
mod value;

use super::describe;
use super::loss::{Accepts, LossAction, Topic};
use super::profile::{EnumValues, OneOf, OutputDialect, Profile, References};
use crate::json::pointer::push_segment;
use crate::schema::document::{Document, Target, Unresolved};
use crate::schema::references::check_ref_cycles;
use crate::schema::vocabulary::{self, Family, Role};
use crate::schema::{admits_type, compile_pattern, is_object_schema, value_type, Dialect};
use all_of::merge_member;
use serde_json::{Map, Value};
use std::collections::HashSet;
use value::{distinct_types, nullable};

/// Most subschemas an adapted schema may hold (inlining `$ref`s multiplies them).
const MAX_NODES: usize = 100_000;
/// Most levels of subschemas in an adapted schema.
const MAX_LEVELS: usize = 60;

/// Marks, inside the schema being built, an object whose listed properties strict mode made
/// required and nullable. Removed before the schema leaves this module; a NUL byte keeps it
/// apart from any keyword a schema uses (inputs holding it are refused).
const OPTIONAL_MARK: &str = "\u{0}toolschema-optional";

/// Marks, beside [`OPTIONAL_MARK`], those of the listed properties whose original schema takes
/// `null` itself: there a null the model sends may be meant, not stand for "not given".
const TAKES_NULL_MARK: &str = "\u{0}toolschema-takes-null";

/// Most `$ref`s followed, and levels of `anyOf`/`oneOf`/`allOf` entered, to tell whether a
/// schema takes `null`.
const MAX_NULL_HOPS: usize = 32;

/// A loss, with its pointer relative to the schema root.
#[derive(Debug, Clone)]
pub(crate) struct SchemaLoss {
    pub pointer: String,
    pub keyword: String,
    pub action: LossAction,
    pub accepts: Accepts,
    pub topic: Topic,
    pub message: String,
}

/// Why a schema cannot be adapted: where, and what would have to change.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Refusal {
    /// JSON Pointer relative to the schema root.
    pub pointer: String,
    pub message: String,
}

/// The adapted schema and what it took.
#[derive(Debug, Clone)]
pub(crate) struct Outcome {
    pub schema: Value,
    pub losses: Vec<SchemaLoss>,
    /// Adapted-schema pointers of objects whose listed properties are optional in the original
    /// (strict mode sends them as `null`).
    pub optional: Vec<(String, Vec<String>)>,
    /// Of those, the properties whose original schema takes `null` itself.
    pub takes_null: Vec<(String, Vec<String>)>,
    /// Root properties renamed for the provider: (provider name, original name).
    pub renamed: Vec<(String, String)>,
}

type Step<T> = Result<T, Refusal>;

fn refuse<T>(pointer: &str, message: impl Into<String>) -> Step<T> {
    Err(Refusal {
        pointer: pointer.to_string(),
        message: message.into(),
    })
}

/// Whether `key` describes and never constrains, so that dropping it changes no verdict: an
/// annotation, a name, or `format` (which a validator asserts only when asked to).
fn describes_only(key: &str) -> bool {
    vocabulary::role(key)
        .is_some_and(|role| matches!(role, Role::Annotation | Role::Identifier | Role::Format))
}

/// The keywords that apply only to values of type `t`, by type (for splitting a type list), in
/// the order they are written; annotations stay on the schema.
fn keywords_of_type(t: &str) -> impl Iterator<Item = &'static str> {
    let family = match t {
        "string" => Some(Family::String),
        "integer" | "number" => Some(Family::Number),
        "array" => Some(Family::Array),
        "object" => Some(Family::Object),
        _ => None,
    };
    vocabulary::names(move |k| Some(k.family) == family && k.role != Role::Annotation)
}

fn is_type_specific(keyword: &str) -> bool {
    vocabulary::lookup(keyword)
        .is_some_and(|k| k.family != Family::Any && k.role != Role::Annotation)
}

/// Whether a schema names what its values are (strict mode refuses a schema that does not).
fn is_typed(schema: &Value) -> bool {
    schema.as_object().is_some_and(is_typed_map)
}

fn is_typed_map(schema: &Map<String, Value>) -> bool {
    ["type", "$ref", "anyOf", "enum", "const"]
        .iter()
        .any(|k| schema.contains_key(*k))
}

/// Whether a schema's `type` admits `name`.
fn admits(schema: &Map<String, Value>, name: &str) -> bool {
    admits_type(schema, name) == Some(true)
}

/// Whether a subschema is closed to undeclared properties.
fn is_closed(schema: &Map<String, Value>) -> bool {
    schema.get("additionalProperties") == Some(&Value::Bool(false))
        || schema.get("unevaluatedProperties") == Some(&Value::Bool(false))
}

/// The members kept as the loop meets them, and the members built beforehand that it adds at
/// the end (subschemas adapted from a place other than their own key).
struct AdaptedMembers {
    out: Map<String, Value>,
    sentences: Vec<String>,
    description: Option<Value>,
}

/// One schema being adapted to one profile: what it reads, and the losses it has reported.
pub(crate) struct Adaptation<'a> {
    profile: &'static Profile,
    /// The profile as messages name it, made once.
    label: String,
    root: &'a Value,
    /// The schema's references, resolved.
    references: Document<'a>,
    /// The dialect the original is written in (it decides whether keywords beside a `$ref`
    /// apply).
    dialect: Dialect,
    /// Translate draft-07 keywords to their 2020-12 names.
    to_2020: bool,
    losses: Vec<SchemaLoss>,
    seen: HashSet<(String, String, LossAction)>,
    /// `$ref` targets being inlined, for cycles.
    inlining: Vec<String>,
    nodes: usize,
}

/// Adapt `schema` (standard JSON Schema of `dialect`, an object) to `profile`.
pub(crate) fn adapt_schema(
    profile: &'static Profile,
    schema: &Value,
    dialect: Dialect,
) -> Result<Outcome, Refusal> {
    check_input(schema, dialect)?;
    adapt_checked(profile, schema, dialect)
}

/// The first error of `schema` against a meta-schema: where, and what.
fn first_meta_error(meta: &jsonschema::Validator, schema: &Value) -> Option<(String, String)> {
    // `is_valid` first: it stops early, and almost every schema passes.
    (!meta.is_valid(schema))
        .then(|| meta.iter_errors(schema).next())
        .flatten()
        .map(|e| (e.instance_path().as_str().to_string(), e.to_string()))
}

/// What every profile refuses alike: a schema that breaks its dialect's meta-schema, holds the
/// engine's own marks, or has `$ref`s that lead back to themselves without reaching a value.
pub(crate) fn check_input(schema: &Value, dialect: Dialect) -> Result<(), Refusal> {
    if contains_mark(schema) {
        return refuse(
            "",
            "the schema holds a key that starts with a NUL character",
        );
    }
    let meta = match dialect {
        Dialect::Draft7 => jsonschema::draft7::meta::validator(),
        Dialect::Draft202012 => jsonschema::draft202012::meta::validator(),
    };
    if let Some((pointer, error)) = first_meta_error(&meta, schema) {
        return refuse(
            &pointer,
            format!(
                "the inputSchema breaks the {} meta-schema ({error}); fix it first (toolschema \
                 lint reports it as SCH-007)",
                dialect.name()
            ),
        );
    }
    if let Err(cycle) = check_ref_cycles(schema) {
        return refuse(
            "",
            format!("{cycle}; no provider can follow it (toolschema lint reports it as SCH-008)"),
        );
    }
    Ok(())
}

/// [`adapt_schema`] for a schema [`check_input`] passed.
pub(crate) fn adapt_checked(
    profile: &'static Profile,
    schema: &Value,
    dialect: Dialect,
) -> Result<Outcome, Refusal> {
    let mut adaptation = Adaptation {
        profile,
        dialect,
        label: profile.label(),
        root: schema,
        references: Document::new(schema),
        to_2020: profile.dialect.rule != OutputDialect::AsWritten,
        losses: Vec::new(),
        seen: HashSet::new(),
        inlining: Vec::new(),
        nodes: 0,
    };
    let mut adapted = adaptation.root_schema()?;
    let mut optional = Vec::new();
    let mut takes_null = Vec::new();
    take_marks(&mut adapted, String::new(), &mut optional, &mut takes_null);
    if let Some(limits) = profile.limits {
        super::limits::check(&adapted, &limits.rule, limits.source)?;
    }
    let renamed = adaptation.rename_parameters(&mut adapted)?;
    if profile.dialect.rule == OutputDialect::Draft202012 {
        let meta = jsonschema::draft202012::meta::validator();
        if let Some((pointer, error)) = first_meta_error(&meta, &adapted) {
            return refuse(
                &pointer,
                format!("the adapted schema would break the 2020-12 meta-schema: {error}"),
            );
        }
    }
    Ok(Outcome {
        schema: adapted,
        losses: adaptation.losses,
        optional,
        takes_null,
        renamed,
    })
}

fn contains_mark(value: &Value) -> bool {
    match value {
        Value::Object(map) => map
            .iter()
            .any(|(k, v)| k.starts_with('\u{0}') || contains_mark(v)),
        Value::Array(items) => items.iter().any(contains_mark),
        _ => false,
    }
}

/// Remove the optional-property marks (from a copy shown in a description).
fn strip_marks(value: &mut Value) {
    take_marks(value, String::new(), &mut Vec::new(), &mut Vec::new());
}

type Marked = Vec<(String, Vec<String>)>;

/// Remove the optional-property marks, recording where they were: the optional properties, and
/// those of them whose original takes `null`.
fn take_marks(value: &mut Value, pointer: String, optional: &mut Marked, takes_null: &mut Marked) {
    match value {
        Value::Object(map) => {
            let names = |names: Vec<Value>| -> Vec<String> {
                names
                    .into_iter()
                    .filter_map(|n| n.as_str().map(str::to_string))
                    .collect()
            };
            if let Some(Value::Array(list)) = map.shift_remove(OPTIONAL_MARK) {
                optional.push((pointer.clone(), names(list)));
            }
            if let Some(Value::Array(list)) = map.shift_remove(TAKES_NULL_MARK) {
                takes_null.push((pointer.clone(), names(list)));
            }
            for (key, child) in map.iter_mut() {
                take_marks(child, push_segment(&pointer, key), optional, takes_null);
            }
        }
        Value::Array(items) => {
            for (i, child) in items.iter_mut().enumerate() {
                take_marks(child, format!("{pointer}/{i}"), optional, takes_null);
            }
        }
        _ => {}
    }
}

impl<'a> Adaptation<'a> {
    fn name(&self) -> &str {
        &self.label
    }

    #[allow(clippy::too_many_arguments)]
    fn report(
        &mut self,
        pointer: &str,
        keyword: &str,
        action: LossAction,
        accepts: Accepts,
        topic: Topic,
        message: String,
    ) {
        let key = (pointer.to_string(), keyword.to_string(), action);
        if self.seen.insert(key) {
            self.losses.push(SchemaLoss {
                pointer: pointer.to_string(),
                keyword: keyword.to_string(),
                action,
                accepts,
                topic,
                message,
            });
        }
    }

    fn enter(&mut self, at: &str, level: usize) -> Step<()> {
        self.nodes += 1;
        if self.nodes > MAX_NODES {
            return refuse(
                at,
                format!("the adapted schema would hold more than {MAX_NODES} subschemas (inlining $refs multiplies them)"),
            );
        }
        if level > MAX_LEVELS {
            return refuse(
                at,
                format!("the adapted schema would nest more than {MAX_LEVELS} subschemas deep"),
            );
        }
        Ok(())
    }
}

/// `'a', 'b'`.
fn quoted<S: AsRef<str>>(names: &[S]) -> String {
    names
        .iter()
        .map(|n| format!("'{}'", n.as_ref()))
        .collect::<Vec<_>>()
        .join(", ")
}
