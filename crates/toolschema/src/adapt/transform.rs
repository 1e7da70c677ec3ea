//! The schema transformation: an original `inputSchema` (standard JSON Schema) in; the schema a
//! provider accepts, every loss, and what `restore_arguments` needs to map a call back, out.
//!
//! One pass over the schema, subschema by subschema. Each keyword is kept when the profile reads
//! it, else rewritten, widened, moved into the description in plain words, or dropped, and each
//! of those is reported. When no sound rewrite exists the tool is refused with the reason.

use super::describe;
use super::loss::{Accepts, LossAction, Topic};
use super::profile::{EnumValues, OneOf, OutputDialect, Profile, References};
use crate::json::pointer::push_segment;
use crate::schema::document::{Document, Target, Unresolved};
use crate::schema::references::check_ref_cycles;
use crate::schema::vocabulary::{self, Family, Role};
use crate::schema::{admits_type, compile_pattern, is_object_schema, value_type, Dialect};
use serde_json::{Map, Value};
use std::collections::HashSet;

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
struct Built {
    out: Map<String, Value>,
    sentences: Vec<String>,
    description: Option<Value>,
}

pub(crate) struct Engine<'a> {
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
    let mut engine = Engine {
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
    let mut adapted = engine.root_schema()?;
    let mut optional = Vec::new();
    let mut takes_null = Vec::new();
    take_marks(&mut adapted, String::new(), &mut optional, &mut takes_null);
    if let Some(limits) = profile.limits {
        super::limits::check(&adapted, &limits.rule, limits.source)?;
    }
    let renamed = engine.rename_parameters(&mut adapted)?;
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
        losses: engine.losses,
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

impl<'a> Engine<'a> {
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

    // -----------------------------------------------------------------------------------------
    // The root.

    fn root_schema(&mut self) -> Step<Value> {
        let Some(map) = self.root.as_object() else {
            return refuse("", "the inputSchema is not an object");
        };
        let mut map = self.ref_siblings_read(map, "").into_owned();
        // A root that is a reference: the provider needs the object itself.
        if let Some(reference) = map.get("$ref").and_then(Value::as_str).map(str::to_string) {
            let (target, at) = self.target(&reference, "")?;
            let target = target.as_object().cloned().unwrap_or_default();
            map.shift_remove("$ref");
            map = self.combine(target, map, "", &at)?;
            self.report(
                "",
                "$ref",
                LossAction::Rewritten,
                Accepts::Same,
                Topic::Rewrite,
                format!(
                    "the root refers to {reference}; {} needs the object at the root, so it is \
                     written out there",
                    self.name()
                ),
            );
        }
        if map.contains_key("allOf") {
            map = self.merge_all_of(&map, "")?;
        }
        // What no provider takes at the root, said in words instead.
        let mut sentences = Vec::new();
        for keyword in ["enum", "const", "not"] {
            let Some(value) = map.shift_remove(keyword) else {
                continue;
            };
            let sentence = describe::sentence(keyword, &value)
                .unwrap_or_else(|| format!("Must match {keyword} {value}."));
            self.report(
                "",
                keyword,
                LossAction::MovedToDescription,
                Accepts::More,
                Topic::Unsupported,
                format!(
                    "{} accepts no {keyword} at the root: the description says \"{sentence}\" \
                     instead",
                    self.name()
                ),
            );
            sentences.push(sentence);
        }
        if !sentences.is_empty() {
            let text = describe::append(map.get("description").and_then(Value::as_str), &sentences);
            map.insert("description".into(), Value::String(text));
        }
        // No provider takes a composition at the root today; the profile says so.
        if !self.profile.root.rule.composition
            && (map.contains_key("anyOf") || map.contains_key("oneOf"))
        {
            map = self.reshape_root_union(map)?;
        }
        match map.get("type").cloned() {
            Some(Value::String(t)) if t == "object" => {}
            None => {
                map.insert("type".into(), Value::String("object".into()));
                self.report(
                    "",
                    "type",
                    LossAction::Rewritten,
                    Accepts::Same,
                    Topic::Rewrite,
                    format!(
                        "the root has no type; {} needs \"type\": \"object\" (the arguments of a \
                         call are always an object)",
                        self.name()
                    ),
                );
            }
            Some(Value::Array(list)) if list.iter().any(|t| t == "object") => {
                map.insert("type".into(), Value::String("object".into()));
                let list = Value::Array(list);
                self.report(
                    "",
                    "type",
                    LossAction::Rewritten,
                    Accepts::Same,
                    Topic::Rewrite,
                    format!(
                        "the root's type list {} is written \"object\": the arguments of a call \
                         are always an object, as {} requires",
                        list,
                        self.name()
                    ),
                );
            }
            Some(other) => {
                return refuse(
                    "/type",
                    format!(
                        "the root has \"type\": {other}; the arguments of a call are an object, \
                         and {} accepts only an object root",
                        self.name()
                    ),
                )
            }
        }
        self.node(&Value::Object(map), "", 0, true)
    }

    /// A root `anyOf`/`oneOf` of object forms, as one object: every form's properties, required
    /// only what every form requires. Refused when a form is not an object or carries keywords
    /// that cannot be merged.
    fn reshape_root_union(&mut self, mut map: Map<String, Value>) -> Step<Map<String, Value>> {
        let (keyword, other) = if map.contains_key("anyOf") {
            ("anyOf", "oneOf")
        } else {
            ("oneOf", "anyOf")
        };
        if map.contains_key(other) {
            return refuse(
                "",
                format!(
                    "the root has both anyOf and oneOf; {} accepts no composition at the root and \
                     the two cannot be merged into one object",
                    self.name()
                ),
            );
        }
        let branches = match map.shift_remove(keyword) {
            Some(Value::Array(b)) => b,
            _ => return refuse(&format!("/{keyword}"), format!("{keyword} is not a list")),
        };
        let mut forms: Vec<Map<String, Value>> = Vec::new();
        for (i, branch) in branches.iter().enumerate() {
            let at = format!("/{keyword}/{i}");
            let mut form = match branch {
                Value::Bool(true) => Map::new(),
                Value::Object(m) => self.ref_siblings_read(m, &at).into_owned(),
                _ => {
                    return refuse(
                        &at,
                        format!(
                            "form {} of the root {keyword} accepts nothing; no object can stand \
                             for the union",
                            i + 1
                        ),
                    )
                }
            };
            if let Some(reference) = form.get("$ref").and_then(Value::as_str).map(str::to_string) {
                let (target, target_at) = self.target(&reference, &at)?;
                let target = target.as_object().cloned().unwrap_or_default();
                form.shift_remove("$ref");
                form = self.combine(target, form, &at, &target_at)?;
            }
            if form.contains_key("allOf") {
                form = self.merge_all_of(&form, &at)?;
            }
            let object_like = match form.get("type") {
                None => true,
                Some(Value::String(t)) => t == "object",
                Some(_) => false,
            };
            if !object_like {
                return refuse(
                    &at,
                    format!(
                        "form {} of the root {keyword} is not an object; the arguments of a call \
                         are an object, so the union cannot be made one object soundly",
                        i + 1
                    ),
                );
            }
            let mergeable = [
                "type",
                "properties",
                "required",
                "additionalProperties",
                "description",
                "title",
                "$comment",
            ];
            if let Some(k) = form.keys().find(|k| !mergeable.contains(&k.as_str())) {
                return refuse(
                    &format!("{at}/{k}"),
                    format!(
                        "form {} of the root {keyword} has {k}, which cannot be carried into one \
                         object soundly",
                        i + 1
                    ),
                );
            }
            forms.push(form);
        }
        if forms.is_empty() {
            return refuse(
                &format!("/{keyword}"),
                format!("the root {keyword} is empty"),
            );
        }
        let mut properties = match map.shift_remove("properties") {
            Some(Value::Object(p)) => p,
            _ => Map::new(),
        };
        let mut required: Option<Vec<String>> = None;
        let mut summaries = Vec::new();
        for (i, form) in forms.iter().enumerate() {
            let names: Vec<String> = form
                .get("properties")
                .and_then(Value::as_object)
                .map(|p| p.keys().cloned().collect())
                .unwrap_or_default();
            for (name, schema) in form
                .get("properties")
                .and_then(Value::as_object)
                .into_iter()
                .flatten()
            {
                match properties.get_mut(name) {
                    None => {
                        properties.insert(name.clone(), schema.clone());
                    }
                    Some(existing) if existing == schema => {}
                    Some(existing) => {
                        let alternatives = match existing.get("anyOf") {
                            Some(Value::Array(a))
                                if existing.as_object().is_some_and(|m| m.len() == 1) =>
                            {
                                let mut a = a.clone();
                                a.push(schema.clone());
                                a
                            }
                            _ => vec![existing.clone(), schema.clone()],
                        };
                        *existing = serde_json::json!({ "anyOf": alternatives });
                    }
                }
            }
            let form_required: Vec<String> = form
                .get("required")
                .and_then(Value::as_array)
                .map(|r| {
                    r.iter()
                        .filter_map(Value::as_str)
                        .map(str::to_string)
                        .collect()
                })
                .unwrap_or_default();
            required = Some(match required {
                None => form_required.clone(),
                Some(so_far) => so_far
                    .into_iter()
                    .filter(|n| form_required.contains(n))
                    .collect(),
            });
            let what = form
                .get("description")
                .or_else(|| form.get("title"))
                .and_then(Value::as_str)
                .map(str::to_string)
                .unwrap_or_else(|| {
                    if names.is_empty() {
                        "no arguments".to_string()
                    } else {
                        format!("with {}", names.join(", "))
                    }
                });
            let needs = if form_required.is_empty() {
                String::new()
            } else {
                format!(" (requires {})", form_required.join(", "))
            };
            summaries.push(format!("{}) {what}{needs}", i + 1));
        }
        let mut required_all: Vec<String> = match map.shift_remove("required") {
            Some(Value::Array(r)) => r
                .iter()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect(),
            _ => Vec::new(),
        };
        for name in required.unwrap_or_default() {
            if !required_all.contains(&name) {
                required_all.push(name);
            }
        }
        let closed = forms.iter().all(is_closed);
        for (i, form) in forms.iter().enumerate() {
            let at = format!("/{keyword}/{i}");
            let loose: Vec<&str> = form
                .get("required")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .filter(|n| !required_all.iter().any(|r| r == n))
                .collect();
            if !loose.is_empty() {
                self.report(
                    &at,
                    "required",
                    LossAction::Widened,
                    Accepts::More,
                    Topic::Widening,
                    format!(
                        "{} accepts no {keyword} at the root: form {} requires {}, which the \
                         merged object cannot require (another form does not); the description \
                         says so",
                        self.name(),
                        i + 1,
                        quoted(&loose)
                    ),
                );
            }
            if is_closed(form) && !closed {
                self.report(
                    &at,
                    "additionalProperties",
                    LossAction::Widened,
                    Accepts::More,
                    Topic::Widening,
                    format!(
                        "{} accepts no {keyword} at the root: form {} is closed but another form \
                         is not, so the merged object takes properties it does not declare",
                        self.name(),
                        i + 1
                    ),
                );
            }
        }
        let sentence = format!("Send one of these forms: {}.", summaries.join("; "));
        let description =
            describe::append(map.get("description").and_then(Value::as_str), &[sentence]);
        map.insert("type".into(), Value::String("object".into()));
        map.insert("description".into(), Value::String(description));
        map.insert("properties".into(), Value::Object(properties));
        if !required_all.is_empty() {
            map.insert(
                "required".into(),
                Value::Array(required_all.into_iter().map(Value::String).collect()),
            );
        }
        if closed && !map.contains_key("additionalProperties") {
            map.insert("additionalProperties".into(), Value::Bool(false));
        }
        let (action, accepts) = if forms.len() == 1 {
            (LossAction::Rewritten, Accepts::Same)
        } else {
            (LossAction::Widened, Accepts::More)
        };
        self.report(
            "",
            keyword,
            action,
            accepts,
            Topic::Widening,
            format!(
                "{} accepts no {keyword} at the root: its {} object forms became one object with \
                 the properties of every form, requiring only what every form requires (the forms \
                 are listed in the description; restore_arguments checks a call against the \
                 original forms)",
                self.name(),
                forms.len()
            ),
        );
        Ok(map)
    }

    // -----------------------------------------------------------------------------------------
    // References.

    /// Where a local reference points: the value and its pointer. Refused for references to
    /// other documents and for references that point at nothing.
    fn target(&self, reference: &str, at: &str) -> Step<(&'a Value, String)> {
        match self.references.locate(reference) {
            Ok(Target { pointer, value }) if value.is_object() || value.is_boolean() => {
                Ok((value, pointer))
            }
            Ok(_) | Err(Unresolved::NoValue) => {
                refuse(at, format!("$ref {reference} points at no schema"))
            }
            Err(Unresolved::NoAnchor) => refuse(
                at,
                format!("$ref {reference} names no $anchor in the schema"),
            ),
            Err(Unresolved::Malformed) => {
                refuse(at, format!("$ref {reference} is not a URI reference"))
            }
            Err(Unresolved::Elsewhere) => refuse(
                at,
                format!(
                    "$ref {reference} points outside the schema; adapt follows only references \
                     inside it"
                ),
            ),
        }
    }

    /// Whether a `$ref` stays a reference in the adapted schema.
    fn keeps_reference(&self, reference: &str) -> bool {
        match self.profile.references.rule {
            References::Any => true,
            References::None => false,
            References::DefinitionsOnly => {
                let reference = self.translated_ref(reference);
                reference == "#"
                    || reference
                        .strip_prefix("#/$defs/")
                        .is_some_and(|name| !name.contains('/'))
            }
        }
    }

    /// A reference as the adapted schema writes it (`#/definitions/x` -> `#/$defs/x`).
    fn translated_ref(&self, reference: &str) -> String {
        if self.to_2020 {
            if let Some(rest) = reference.strip_prefix("#/definitions/") {
                return format!("#/$defs/{rest}");
            }
        }
        reference.to_string()
    }

    /// `map` as its dialect reads it: in draft-07 the keywords beside a `$ref` are ignored, so
    /// they are left out (reported) before the reference is written out or kept in a schema
    /// read as 2020-12, where they would apply. Annotations a model reads, `$schema`, and the
    /// definitions the references lead to stay.
    fn ref_siblings_read<'m>(
        &mut self,
        map: &'m Map<String, Value>,
        at: &str,
    ) -> std::borrow::Cow<'m, Map<String, Value>> {
        if !self.dialect.ref_ignores_siblings() || !map.contains_key("$ref") {
            return std::borrow::Cow::Borrowed(map);
        }
        let stays = |k: &str| {
            matches!(k, "$ref" | "$schema" | "definitions" | "$defs" | "$comment")
                || (vocabulary::is_annotation(k) && !k.starts_with('$'))
        };
        let ignored: Vec<&String> = map.keys().filter(|k| !stays(k)).collect();
        if ignored.is_empty() {
            return std::borrow::Cow::Borrowed(map);
        }
        self.report(
            at,
            "$ref",
            LossAction::Dropped,
            Accepts::Same,
            Topic::Rewrite,
            format!(
                "draft-07 ignores the keywords beside a $ref: {} constrained nothing and is \
                 left out (beside the $ref in what {} reads, it would apply)",
                quoted(&ignored),
                self.name()
            ),
        );
        let read = map
            .iter()
            .filter(|(k, _)| stays(k))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        std::borrow::Cow::Owned(read)
    }

    /// `map` (which has a `$ref` the profile cannot keep) with its target written in place.
    fn inline(&mut self, map: &Map<String, Value>, at: &str, level: usize) -> Step<Value> {
        let reference = map
            .get("$ref")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        let (target, target_at) = self.target(&reference, at)?;
        if let Some(start) = self.inlining.iter().position(|t| *t == target_at) {
            let mut chain: Vec<String> = self.inlining[start..]
                .iter()
                .map(|p| format!("#{p}"))
                .collect();
            chain.push(format!("#{target_at}"));
            return refuse(
                at,
                format!(
                    "the $ref cycle {} cannot be written out: {} takes no recursive schemas here",
                    chain.join(" -> "),
                    self.name()
                ),
            );
        }
        let mut siblings = map.clone();
        siblings.shift_remove("$ref");
        self.inlining.push(target_at.clone());
        let result = if siblings.is_empty() {
            self.node(target, &target_at, level, false)
        } else {
            let target_map = match target {
                Value::Object(m) => m.clone(),
                Value::Bool(true) => Map::new(),
                _ => {
                    self.inlining.pop();
                    return refuse(at, format!("$ref {reference} points at `false`"));
                }
            };
            let combined = self.combine(target_map, siblings, at, &target_at);
            match combined {
                Ok(c) => self.node(&Value::Object(c), at, level, false),
                Err(e) => Err(e),
            }
        };
        self.inlining.pop();
        let value = result?;
        self.report(
            at,
            "$ref",
            LossAction::Rewritten,
            Accepts::Same,
            Topic::Rewrite,
            format!(
                "$ref {reference} is written out in place: {} takes no $ref {}",
                self.name(),
                match self.profile.references.rule {
                    References::None => "at all",
                    _ => "except to #/$defs/NAME, with nothing beside it",
                }
            ),
        );
        Ok(value)
    }

    /// One schema that means what `first` and `second` mean together (both apply, as a `$ref`
    /// and its siblings do). Refused when they constrain the same keyword differently.
    fn combine(
        &mut self,
        first: Map<String, Value>,
        second: Map<String, Value>,
        at: &str,
        first_at: &str,
    ) -> Step<Map<String, Value>> {
        let mut out = first;
        for (k, v) in second {
            self.merge_into(&mut out, k, v, at, |k, name| {
                format!(
                    "{k} is given both here and in #{first_at} with different values; they \
                     cannot be merged into one schema for {name}"
                )
            })?;
        }
        Ok(out)
    }

    /// [`merge_member`], with an annotation that could not be kept reported, and a conflict
    /// refused with `conflict(keyword, profile)`.
    fn merge_into(
        &mut self,
        out: &mut Map<String, Value>,
        key: String,
        value: Value,
        at: &str,
        conflict: impl FnOnce(&str, &str) -> String,
    ) -> Step<()> {
        let keyword = key.clone();
        match merge_member(out, key, value) {
            Ok(None) => Ok(()),
            Ok(Some(left_out)) => {
                let kept = out.get(&keyword).cloned().unwrap_or(Value::Null);
                self.report(
                    at,
                    &keyword,
                    LossAction::Dropped,
                    Accepts::Same,
                    Topic::Rewrite,
                    format!(
                        "{keyword} is given twice with different values ({kept} and {left_out}) \
                         in schemas merged into one, which holds one {keyword}: {left_out} is \
                         left out"
                    ),
                );
                Ok(())
            }
            Err(k) => Err(Refusal {
                pointer: at.to_string(),
                message: conflict(&k, self.name()),
            }),
        }
    }

    /// An `allOf` written as one schema (for a profile that has no `allOf`).
    ///
    /// The parent's `additionalProperties` sees only the parent's own `properties` and
    /// `patternProperties`, never a branch's: a property only a branch declares is refused by a
    /// parent closed with `false` (it is left out of the merged schema, where it would be
    /// offered) and must fit a parent's `additionalProperties` schema as well as the branch's
    /// (both are kept, under an `allOf` of the property). Whatever the merged schema accepts
    /// that the original did not is reported as widened.
    fn merge_all_of(&mut self, map: &Map<String, Value>, at: &str) -> Step<Map<String, Value>> {
        let mut merged = map.clone();
        let branches = match merged.shift_remove("allOf") {
            Some(Value::Array(b)) => b,
            _ => return Ok(merged),
        };
        let mut widenings: Vec<&'static str> = Vec::new();
        let mut evaluates_all = false;
        let mut widen = |why: &'static str| {
            if !widenings.contains(&why) {
                widenings.push(why);
            }
        };
        for (i, branch) in branches.iter().enumerate() {
            let branch_at = format!("{at}/allOf/{i}");
            let mut branch = match branch {
                Value::Bool(true) => continue,
                Value::Object(m) => self.ref_siblings_read(m, &branch_at).into_owned(),
                _ => {
                    return refuse(
                        &branch_at,
                        "an allOf branch is `false`: the schema accepts nothing",
                    )
                }
            };
            if let Some(reference) = branch
                .get("$ref")
                .and_then(Value::as_str)
                .map(str::to_string)
            {
                let (target, target_at) = self.target(&reference, &branch_at)?;
                if self.inlining.contains(&target_at) {
                    return refuse(
                        &branch_at,
                        format!("the allOf branch refers back to {reference}: a cycle"),
                    );
                }
                let target = target.as_object().cloned().unwrap_or_default();
                branch.shift_remove("$ref");
                branch = self.combine(target, branch, &branch_at, &target_at)?;
            }
            if branch.contains_key("allOf") {
                branch = self.merge_all_of(&branch, &branch_at)?;
            }
            for (k, mut v) in branch {
                if k == "additionalProperties" || k == "unevaluatedProperties" {
                    // Unless it is `false`, it marks every property it sees as evaluated, so
                    // the parent's `unevaluatedProperties` refuses none (dropped below).
                    evaluates_all |= v != Value::Bool(false);
                    if says_nothing(&v) {
                        continue;
                    }
                    // A branch closed to what it declares does not close the merged object.
                    widen(
                        "a branch closed to the properties it declares no longer refuses the \
                         others' properties",
                    );
                    continue;
                }
                if k == "properties" {
                    if let Value::Object(properties) = v {
                        v = Value::Object(
                            self.branch_properties(map, properties, &branch_at, &mut widen),
                        );
                    }
                } else if k == "patternProperties" && closes_undeclared(map) {
                    let parent = map.get("patternProperties").and_then(Value::as_object);
                    let added = v.as_object().is_some_and(|patterns| {
                        patterns
                            .keys()
                            .any(|p| !parent.is_some_and(|q| q.contains_key(p)))
                    });
                    if added {
                        widen(
                            "the parent's additionalProperties no longer applies to names that \
                             only a branch's patternProperties match",
                        );
                    }
                }
                self.merge_into(&mut merged, k, v, &branch_at, |k, name| {
                    format!(
                        "the allOf branches constrain {k} differently; {name} has no allOf and \
                         they cannot be merged into one schema"
                    )
                })?;
            }
        }
        if evaluates_all && merged.shift_remove("unevaluatedProperties").is_some() {
            self.report(
                at,
                "unevaluatedProperties",
                LossAction::Rewritten,
                Accepts::Same,
                Topic::Rewrite,
                "an allOf branch's additionalProperties (or unevaluatedProperties) marks every \
                 property as evaluated, so unevaluatedProperties refuses none; merged, it is \
                 left out"
                    .into(),
            );
        }
        let widened = !widenings.is_empty();
        let what = if widened {
            format!(
                "merged into one schema that accepts more: {}",
                widenings.join("; ")
            )
        } else {
            "merged into one schema with the same meaning".to_string()
        };
        let (action, accepts, topic) = if widened {
            (LossAction::Widened, Accepts::More, Topic::Widening)
        } else {
            (LossAction::Rewritten, Accepts::Same, Topic::Rewrite)
        };
        self.report(
            at,
            "allOf",
            action,
            accepts,
            topic,
            format!(
                "{} {}: its branches were {what}",
                self.name(),
                if at.is_empty() {
                    "accepts no allOf at the root"
                } else {
                    "has no allOf"
                }
            ),
        );
        Ok(merged)
    }

    /// The `properties` of an `allOf` branch as the merged schema takes them: a property the
    /// parent's `additionalProperties: false` refuses is left out, one its
    /// `additionalProperties` schema applies to keeps both schemas.
    fn branch_properties(
        &mut self,
        parent: &Map<String, Value>,
        properties: Map<String, Value>,
        branch_at: &str,
        widen: &mut impl FnMut(&'static str),
    ) -> Map<String, Value> {
        let mut kept = Map::new();
        for (name, schema) in properties {
            let here = push_segment(&push_segment(branch_at, "properties"), &name);
            match parent_on_branch_property(parent, &name) {
                ParentSays::Nothing => {
                    kept.insert(name, schema);
                }
                ParentSays::Refuses => {
                    self.report(
                        &here,
                        "properties",
                        LossAction::Dropped,
                        Accepts::Same,
                        Topic::Rewrite,
                        format!(
                            "property '{name}' is declared only in an allOf branch, and the \
                             parent's additionalProperties: false refuses it (it sees only the \
                             parent's own properties); merged, it is left out, as the original \
                             never accepts it"
                        ),
                    );
                }
                ParentSays::AlsoFits(additional) => {
                    self.report(
                        &here,
                        "additionalProperties",
                        LossAction::Rewritten,
                        Accepts::Same,
                        Topic::Rewrite,
                        format!(
                            "property '{name}' is declared only in an allOf branch, so the \
                             parent's additionalProperties applies to it too; merged, the \
                             property must fit both schemas"
                        ),
                    );
                    kept.insert(name, serde_json::json!({ "allOf": [additional, schema] }));
                }
                ParentSays::Unknown => {
                    widen(
                        "a property only a branch declares is no longer checked against the \
                         parent's additionalProperties (whether a parent patternProperties \
                         pattern matches its name cannot be told)",
                    );
                    kept.insert(name, schema);
                }
            }
        }
        kept
    }
    // -----------------------------------------------------------------------------------------
    // One subschema.

    fn node(&mut self, value: &Value, at: &str, level: usize, is_root: bool) -> Step<Value> {
        self.enter(at, level)?;
        match value {
            Value::Bool(b) => self.boolean(*b, at),
            Value::Object(map) => self.object(map, at, level, is_root),
            _ => refuse(at, "not a schema (an object or a boolean)"),
        }
    }

    /// A subschema under a keyword (`items`, `additionalProperties`, `not`, ...), where every
    /// JSON Schema profile takes `true` and `false` as they are.
    fn subschema(&mut self, value: &Value, at: &str, level: usize) -> Step<Value> {
        match value {
            Value::Bool(b) if !self.profile.is_openapi() => Ok(Value::Bool(*b)),
            _ => self.node(value, at, level, false),
        }
    }

    fn keeps_booleans(&self) -> bool {
        matches!(self.profile.vocabulary, super::profile::Vocabulary::Any)
    }

    fn boolean(&mut self, b: bool, at: &str) -> Step<Value> {
        if self.keeps_booleans() {
            return Ok(Value::Bool(b));
        }
        if !b {
            return refuse(
                at,
                format!(
                    "`false` (a schema nothing matches) has no form in {}",
                    self.name()
                ),
            );
        }
        if self.profile.strict.is_some() {
            return refuse(
                at,
                format!(
                    "`true` (any value) has no form in {}: strict mode needs a type here",
                    self.name()
                ),
            );
        }
        Ok(Value::Object(Map::new()))
    }

    fn object(
        &mut self,
        map: &Map<String, Value>,
        at: &str,
        level: usize,
        is_root: bool,
    ) -> Step<Value> {
        let map = &*self.ref_siblings_read(map, at);
        if let Some(reference) = map.get("$ref") {
            let Some(reference) = reference.as_str() else {
                return refuse(at, "$ref is not a string");
            };
            if !self.keeps_reference(reference) {
                return self.inline(map, at, level);
            }
            // The reference stays: its target must be there, whatever the profile (a provider
            // that takes any `$ref` still cannot follow one to nothing or to another document).
            self.target(reference, at)?;
        }
        let mut source = std::borrow::Cow::Borrowed(map);
        if source.contains_key("allOf") && !self.profile.supports("allOf") {
            source = std::borrow::Cow::Owned(self.merge_all_of(&source, at)?);
        }
        let mut built = Built {
            out: Map::new(),
            sentences: Vec::new(),
            description: None,
        };
        let mut ready: Map<String, Value> = Map::new();
        if let Some(Value::Array(types)) = source.get("type") {
            if !self.profile.type_lists.rule {
                let types = types.clone();
                source = std::borrow::Cow::Owned(
                    self.split_type_list(&source, &types, at, level, &mut ready)?,
                );
            }
        }
        if source.contains_key("oneOf")
            && source.contains_key("anyOf")
            && self.profile.one_of.rule != OneOf::Supported
        {
            return refuse(
                at,
                format!(
                    "the schema has both anyOf and oneOf; {} reads only anyOf and the two cannot \
                     be written as one",
                    self.name()
                ),
            );
        }
        for (key, value) in source.iter() {
            let key = key.as_str();
            self.member(key, value, &source, at, level, is_root, &mut built)?;
        }
        let Built {
            mut out,
            sentences,
            description,
        } = built;
        for (k, v) in ready {
            out.insert(k, v);
        }
        if let Some(text) = self.finish_description(description, &sentences) {
            out.insert("description".into(), text);
        }
        self.object_rules(&source, &mut out, at, is_root)?;
        self.array_rules(&source, &mut out, at)?;
        if let Some(wrapped) = self.wrap_ref_siblings(&mut out, at) {
            return Ok(wrapped);
        }
        if self.profile.strict.is_some() && !is_typed_map(&out) {
            return refuse(
                at,
                format!(
                    "this schema does not say what its values are; {} needs a type (or enum, \
                     anyOf, $ref) on every schema",
                    self.name()
                ),
            );
        }
        Ok(Value::Object(out))
    }

    fn finish_description(
        &self,
        description: Option<Value>,
        sentences: &[String],
    ) -> Option<Value> {
        if sentences.is_empty() {
            return description;
        }
        let text = describe::append(description.as_ref().and_then(Value::as_str), sentences);
        Some(Value::String(text))
    }

    /// One member of a schema object.
    #[allow(clippy::too_many_arguments)]
    fn member(
        &mut self,
        key: &str,
        value: &Value,
        source: &Map<String, Value>,
        at: &str,
        level: usize,
        is_root: bool,
        built: &mut Built,
    ) -> Step<()> {
        let child = |name: &str| push_segment(at, name);
        match key {
            "description" => {
                built.description = Some(value.clone());
                // Keep its place: filled in at the end (moved constraints are appended).
                built.out.insert(key.into(), value.clone());
            }
            "$ref" => {
                built.out.insert(
                    key.into(),
                    Value::String(self.translated_ref(value.as_str().unwrap_or_default())),
                );
            }
            "$schema" => {
                if self.profile.dialect.rule == OutputDialect::AsWritten {
                    built.out.insert(key.into(), value.clone());
                } else {
                    self.report(
                        at,
                        key,
                        LossAction::Dropped,
                        Accepts::Same,
                        Topic::Rewrite,
                        format!(
                            "$schema {value} is left out: {} reads the schema as {}",
                            self.name(),
                            if self.profile.is_openapi() {
                                "an OpenAPI 3.0 schema object"
                            } else {
                                "JSON Schema 2020-12 (draft-07 keywords are translated)"
                            }
                        ),
                    );
                }
            }
            "$defs" | "definitions" => self.definitions(key, value, at, level, is_root, built)?,
            "properties" => {
                let Value::Object(properties) = value else {
                    return refuse(&child(key), "properties is not an object");
                };
                let mut out = Map::new();
                for (name, schema) in properties {
                    let here = push_segment(&child(key), name);
                    if schema == &Value::Bool(false) && !self.keeps_booleans() {
                        let accepts = if is_closed(source) {
                            Accepts::Same
                        } else {
                            Accepts::More
                        };
                        self.report(
                            &here,
                            "properties",
                            LossAction::Dropped,
                            accepts,
                            Topic::Unsupported,
                            format!(
                                "property '{name}' is `false` (never accepted), which {} cannot \
                                 write; it is left out of properties",
                                self.name()
                            ),
                        );
                        continue;
                    }
                    out.insert(name.clone(), self.node(schema, &here, level + 1, false)?);
                }
                built.out.insert(key.into(), Value::Object(out));
            }
            "required" => {
                built.out.insert(key.into(), value.clone());
            }
            "type" => {
                built.out.insert(key.into(), value.clone());
            }
            "items" if value.is_array() => {
                // draft-07 tuple form.
                let adapted = self.branches(value, &child(key), level)?;
                if self.to_2020 {
                    self.report(
                        at,
                        key,
                        LossAction::Rewritten,
                        Accepts::Same,
                        Topic::Rewrite,
                        "the draft-07 list form of items is written prefixItems, as JSON Schema \
                         2020-12 names it"
                            .into(),
                    );
                    if source.contains_key("additionalItems") {
                        self.report(
                            at,
                            "additionalItems",
                            LossAction::Rewritten,
                            Accepts::Same,
                            Topic::Rewrite,
                            "draft-07 additionalItems (after a list of items) is written items, \
                             as JSON Schema 2020-12 names it"
                                .into(),
                        );
                    }
                    self.tuple(adapted, source, at, level, built)?;
                } else {
                    built.out.insert(key.into(), adapted);
                }
            }
            "additionalItems" => {
                let tuple = source.get("items").is_some_and(Value::is_array);
                if !self.to_2020 {
                    let adapted = self.subschema(value, &child(key), level + 1)?;
                    built.out.insert(key.into(), adapted);
                } else if !tuple {
                    self.report(
                        at,
                        key,
                        LossAction::Dropped,
                        Accepts::Same,
                        Topic::Rewrite,
                        "additionalItems without a list of items has no effect in draft-07; it is \
                         left out"
                            .into(),
                    );
                }
                // With a tuple, `tuple` writes it as the 2020-12 `items`.
            }
            "prefixItems" => {
                let adapted = self.branches(value, &child(key), level)?;
                self.tuple(adapted, source, at, level, built)?;
            }
            "items" => {
                if source.get("prefixItems").is_some() {
                    // Written by `tuple`, with the positions.
                    return Ok(());
                }
                let adapted = self.subschema(value, &child(key), level + 1)?;
                built.out.insert(key.into(), adapted);
            }
            "oneOf" => {
                let branches = self.branches(value, &child(key), level)?;
                match self.profile.one_of.rule {
                    OneOf::Supported => {
                        built.out.insert(key.into(), branches);
                    }
                    rule => {
                        let disjoint = distinct_types(value);
                        let (action, accepts) = if disjoint {
                            (LossAction::Rewritten, Accepts::Same)
                        } else {
                            (LossAction::Widened, Accepts::More)
                        };
                        let why = if rule == OneOf::ReadAsAnyOf {
                            "reads oneOf as anyOf without a word"
                        } else {
                            "has no oneOf"
                        };
                        let effect = if disjoint {
                            "its branches take values of different types, so the meaning is the same"
                        } else {
                            "a value matching several branches is now accepted too"
                        };
                        self.report(
                            at,
                            key,
                            action,
                            accepts,
                            if disjoint {
                                Topic::Rewrite
                            } else {
                                Topic::Widening
                            },
                            format!("{} {why}: written anyOf; {effect}", self.name()),
                        );
                        built.out.insert("anyOf".into(), branches);
                    }
                }
            }
            "anyOf" | "allOf" if self.profile.supports(key) => {
                let branches = self.branches(value, &child(key), level)?;
                built.out.insert(key.into(), branches);
            }
            "const" if !self.profile.supports(key) => self.constant(value, source, at, built),
            "enum" => self.enumeration(value, source, at, built),
            "format" => {
                let name = value.as_str().unwrap_or_default();
                if self.profile.supports(key) && self.profile.accepts_format(name) {
                    built.out.insert(key.into(), value.clone());
                } else {
                    let source_note = self
                        .profile
                        .formats
                        .map(|f| f.rule.join(", "))
                        .unwrap_or_default();
                    self.move_to_description(
                        key,
                        value,
                        at,
                        built,
                        Accepts::Same,
                        if source_note.is_empty() {
                            None
                        } else {
                            Some(format!("the formats it takes are {source_note}"))
                        },
                    );
                }
            }
            "additionalProperties" | "unevaluatedProperties"
                if self.profile.strict.is_some() && key == "additionalProperties" =>
            {
                // Strict mode closes every object: decided in `object_rules`.
                built.out.insert(key.into(), value.clone());
            }
            "dependencies" if self.to_2020 => self.dependencies(value, at, level, built)?,
            _ if self.profile.supports(key) => {
                let adapted = self.keyword_value(key, value, at, level)?;
                built.out.insert(key.into(), adapted);
            }
            _ => self.unsupported(key, value, source, at, built),
        }
        Ok(())
    }

    /// A kept keyword's value, with its subschemas adapted.
    fn keyword_value(&mut self, key: &str, value: &Value, at: &str, level: usize) -> Step<Value> {
        let here = push_segment(at, key);
        Ok(match key {
            "additionalProperties"
            | "unevaluatedProperties"
            | "unevaluatedItems"
            | "not"
            | "if"
            | "then"
            | "else"
            | "contains"
            | "propertyNames"
            | "contentSchema"
                if value.is_object() || value.is_boolean() =>
            {
                self.subschema(value, &here, level + 1)?
            }
            "patternProperties" | "dependentSchemas" => match value {
                Value::Object(map) => {
                    let mut out = Map::new();
                    for (name, schema) in map {
                        let there = push_segment(&here, name);
                        out.insert(name.clone(), self.node(schema, &there, level + 1, false)?);
                    }
                    Value::Object(out)
                }
                other => other.clone(),
            },
            _ => value.clone(),
        })
    }

    fn branches(&mut self, value: &Value, here: &str, level: usize) -> Step<Value> {
        let Value::Array(items) = value else {
            return refuse(here, "not a list of schemas");
        };
        let mut out = Vec::with_capacity(items.len());
        for (i, item) in items.iter().enumerate() {
            out.push(self.node(item, &format!("{here}/{i}"), level + 1, false)?);
        }
        Ok(Value::Array(out))
    }

    /// `$defs` (or draft-07 `definitions`): kept, each adapted, where the profile follows
    /// references to them; written out at every reference otherwise.
    fn definitions(
        &mut self,
        key: &str,
        value: &Value,
        at: &str,
        level: usize,
        is_root: bool,
        built: &mut Built,
    ) -> Step<()> {
        let Value::Object(defs) = value else {
            return refuse(&push_segment(at, key), format!("{key} is not an object"));
        };
        let keeps = match self.profile.references.rule {
            References::Any => true,
            References::DefinitionsOnly => is_root,
            References::None => false,
        };
        if !keeps {
            self.report(
                at,
                key,
                LossAction::Rewritten,
                Accepts::Same,
                Topic::Rewrite,
                format!(
                    "{key} is left out: {} follows no $ref{}, so each definition is written out \
                     where it is referenced",
                    self.name(),
                    if is_root {
                        ""
                    } else {
                        " to definitions below the root"
                    }
                ),
            );
            return Ok(());
        }
        let mut out = match built.out.shift_remove("$defs") {
            Some(Value::Object(m)) => m,
            _ => Map::new(),
        };
        for (name, schema) in defs {
            let here = push_segment(&push_segment(at, key), name);
            if out.contains_key(name) {
                return refuse(
                    &here,
                    format!("definition '{name}' is in both $defs and definitions"),
                );
            }
            out.insert(name.clone(), self.node(schema, &here, level + 1, false)?);
        }
        let out_key = if self.to_2020 { "$defs" } else { key };
        if key == "definitions" && self.to_2020 {
            self.report(
                at,
                key,
                LossAction::Rewritten,
                Accepts::Same,
                Topic::Rewrite,
                "definitions is written $defs, as JSON Schema 2020-12 names it (and every $ref to \
                 it follows)"
                    .into(),
            );
        }
        built.out.insert(out_key.into(), Value::Object(out));
        Ok(())
    }

    /// draft-07 `dependencies`, written as 2020-12's `dependentRequired` and `dependentSchemas`.
    fn dependencies(
        &mut self,
        value: &Value,
        at: &str,
        level: usize,
        built: &mut Built,
    ) -> Step<()> {
        let Value::Object(map) = value else {
            return Ok(());
        };
        let mut names = Map::new();
        let mut schemas = Map::new();
        for (k, v) in map {
            if v.is_array() {
                names.insert(k.clone(), v.clone());
            } else {
                schemas.insert(k.clone(), v.clone());
            }
        }
        self.report(
            at,
            "dependencies",
            LossAction::Rewritten,
            Accepts::Same,
            Topic::Rewrite,
            "draft-07 dependencies is written dependentRequired/dependentSchemas, as JSON Schema \
             2020-12 names it"
                .into(),
        );
        let source = Map::new();
        if !names.is_empty() {
            let names = Value::Object(names);
            if self.profile.supports("dependentRequired") {
                built.out.insert("dependentRequired".into(), names);
            } else {
                self.unsupported("dependentRequired", &names, &source, at, built);
            }
        }
        if !schemas.is_empty() {
            let schemas = Value::Object(schemas);
            if self.profile.supports("dependentSchemas") {
                let adapted = self.keyword_value("dependentSchemas", &schemas, at, level)?;
                built.out.insert("dependentSchemas".into(), adapted);
            } else {
                self.unsupported("dependentSchemas", &schemas, &source, at, built);
            }
        }
        Ok(())
    }

    /// `prefixItems` (already adapted) with the `items` after them: kept, or, where the profile
    /// has no tuples, one item schema for every position.
    fn tuple(
        &mut self,
        positions: Value,
        source: &Map<String, Value>,
        at: &str,
        level: usize,
        built: &mut Built,
    ) -> Step<()> {
        // What may follow the positions: 2020-12 `items` beside `prefixItems`, or draft-07
        // `additionalItems` beside a list of `items`.
        let rest_key = if source.get("prefixItems").is_some() {
            "items"
        } else {
            "additionalItems"
        };
        let rest = match source.get(rest_key) {
            // `true` and `false` are read below, whatever the profile writes.
            Some(Value::Bool(b)) => Some(Value::Bool(*b)),
            Some(r) => Some(self.subschema(r, &push_segment(at, rest_key), level + 1)?),
            None => None,
        };
        if self.profile.supports("prefixItems") {
            built.out.insert("prefixItems".into(), positions);
            if let Some(rest) = rest {
                built.out.insert("items".into(), rest);
            }
            return Ok(());
        }
        let Value::Array(list) = positions else {
            return Ok(());
        };
        let count = list.len();
        let mut kinds: Vec<Value> = Vec::new();
        for schema in list.iter().chain(rest.iter()) {
            if schema != &Value::Bool(false) && !kinds.contains(schema) {
                kinds.push(schema.clone());
            }
        }
        let items = match kinds.len() {
            0 => None,
            1 => kinds.pop(),
            _ => Some(serde_json::json!({ "anyOf": kinds })),
        };
        if let Some(items) = items {
            built.out.insert("items".into(), items);
        }
        if rest == Some(Value::Bool(false)) {
            let max = source
                .get("maxItems")
                .and_then(Value::as_u64)
                .map_or(count as u64, |m| m.min(count as u64));
            built.out.insert("maxItems".into(), Value::from(max));
        }
        let shown: Vec<String> = list
            .iter()
            .map(|position| {
                let mut position = position.clone();
                strip_marks(&mut position);
                position.to_string()
            })
            .collect();
        built
            .sentences
            .push(format!("Items by position: {}.", shown.join(", ")));
        self.report(
            at,
            "prefixItems",
            LossAction::Widened,
            Accepts::More,
            Topic::Widening,
            format!(
                "{} has no tuples: the {count} positions became one item schema that accepts any \
                 of them (the positions are listed in the description)",
                self.name()
            ),
        );
        Ok(())
    }

    /// `const` where the profile has none.
    fn constant(
        &mut self,
        value: &Value,
        source: &Map<String, Value>,
        at: &str,
        built: &mut Built,
    ) {
        let kind = value_type(value).name();
        let as_enum = match self.profile.enum_values.rule {
            EnumValues::Any => true,
            EnumValues::StringsAndNumbers => value.is_string() || value.is_number(),
            EnumValues::Strings => value.is_string(),
        };
        if as_enum && self.profile.supports("enum") && !source.contains_key("enum") {
            built
                .out
                .insert("enum".into(), Value::Array(vec![value.clone()]));
            if !source.contains_key("type") && self.profile.is_openapi() {
                built.out.insert("type".into(), Value::String(kind.into()));
            }
            self.report(
                at,
                "const",
                LossAction::Rewritten,
                Accepts::Same,
                Topic::Rewrite,
                format!(
                    "{} has no const: written as an enum of one value",
                    self.name()
                ),
            );
            return;
        }
        if value.is_null() && !source.contains_key("type") {
            built
                .out
                .insert("type".into(), Value::String("null".into()));
            self.report(
                at,
                "const",
                LossAction::Rewritten,
                Accepts::Same,
                Topic::Rewrite,
                format!(
                    "{} has no const: const null is written \"type\": \"null\"",
                    self.name()
                ),
            );
            return;
        }
        if !source.contains_key("type") && self.profile.supports("type") {
            built.out.insert("type".into(), Value::String(kind.into()));
        }
        self.move_to_description("const", value, at, built, Accepts::More, None);
    }

    /// `enum`, kept or moved into the description as the profile's enum values allow.
    fn enumeration(
        &mut self,
        value: &Value,
        source: &Map<String, Value>,
        at: &str,
        built: &mut Built,
    ) {
        let Value::Array(values) = value else {
            built.out.insert("enum".into(), value.clone());
            return;
        };
        if !self.profile.supports("enum") {
            self.move_to_description("enum", value, at, built, Accepts::More, None);
            return;
        }
        match self.profile.enum_values.rule {
            EnumValues::Any => {
                built.out.insert("enum".into(), value.clone());
            }
            EnumValues::StringsAndNumbers => {
                if values.iter().all(|v| v.is_string() || v.is_number()) {
                    built.out.insert("enum".into(), value.clone());
                } else {
                    self.move_to_description(
                        "enum",
                        value,
                        at,
                        built,
                        Accepts::More,
                        Some("its enum takes strings and numbers only".into()),
                    );
                }
            }
            EnumValues::Strings => {
                let strings: Vec<Value> =
                    values.iter().filter(|v| v.is_string()).cloned().collect();
                let nulls = values.iter().filter(|v| v.is_null()).count();
                if !strings.is_empty() && strings.len() + nulls == values.len() {
                    built.out.insert("enum".into(), Value::Array(strings));
                    if !source.contains_key("type") {
                        built
                            .out
                            .insert("type".into(), Value::String("string".into()));
                    }
                    if nulls > 0 {
                        built.out.insert("nullable".into(), Value::Bool(true));
                        self.report(
                            at,
                            "enum",
                            LossAction::Rewritten,
                            Accepts::Same,
                            Topic::Rewrite,
                            format!(
                                "{} takes string enum values only: null is written \"nullable\": true",
                                self.name()
                            ),
                        );
                    }
                } else {
                    self.move_to_description(
                        "enum",
                        value,
                        at,
                        built,
                        Accepts::More,
                        Some("its enum takes strings only".into()),
                    );
                }
            }
        }
    }

    /// A keyword the profile does not read: its sentence goes into the description, or, when it
    /// has none, it is dropped. Both are reported.
    fn unsupported(
        &mut self,
        key: &str,
        value: &Value,
        source: &Map<String, Value>,
        at: &str,
        built: &mut Built,
    ) {
        let annotation = describes_only(key);
        let closed = is_closed(source);
        let accepts = if annotation {
            Accepts::Same
        } else if key == "patternProperties" && closed {
            Accepts::Less
        } else if (key == "additionalProperties" || key == "unevaluatedProperties")
            && matches!(value, Value::Bool(true))
        {
            Accepts::Same
        } else {
            Accepts::More
        };
        if matches!(key, "additionalProperties" | "unevaluatedProperties") {
            if value == &Value::Bool(false) {
                self.report(
                    at,
                    key,
                    LossAction::Dropped,
                    Accepts::More,
                    Topic::Unsupported,
                    format!(
                        "{} has no {key}: undeclared properties are no longer refused by the \
                         schema (the server's own check still applies)",
                        self.name()
                    ),
                );
                return;
            }
            if value == &Value::Bool(true) || value == &Value::Object(Map::new()) {
                self.report(
                    at,
                    key,
                    LossAction::Dropped,
                    Accepts::Same,
                    Topic::Unsupported,
                    format!("{} has no {key}; {value} said nothing more", self.name()),
                );
                return;
            }
        }
        if describe::sentence(key, value).is_some() {
            self.move_to_description(key, value, at, built, accepts, None);
            return;
        }
        let effect = match accepts {
            Accepts::Same => "it did not constrain the arguments",
            _ => "the schema no longer enforces it",
        };
        self.report(
            at,
            key,
            LossAction::Dropped,
            accepts,
            Topic::Unsupported,
            format!("{} does not read {key}: dropped; {effect}", self.name()),
        );
    }

    fn move_to_description(
        &mut self,
        key: &str,
        value: &Value,
        at: &str,
        built: &mut Built,
        accepts: Accepts,
        note: Option<String>,
    ) {
        let Some(sentence) = describe::sentence(key, value) else {
            self.report(
                at,
                key,
                LossAction::Dropped,
                accepts,
                Topic::Unsupported,
                format!("{} does not read {key}: dropped", self.name()),
            );
            return;
        };
        let note = note.map(|n| format!(" ({n})")).unwrap_or_default();
        self.report(
            at,
            key,
            LossAction::MovedToDescription,
            accepts,
            Topic::Unsupported,
            format!(
                "{} does not read {key}{note}: the description says \"{sentence}\" instead",
                self.name()
            ),
        );
        if !built.sentences.contains(&sentence) {
            built.sentences.push(sentence);
        }
    }

    /// A type list, for a profile that takes one type: `nullable` for a type and null, else
    /// `anyOf` with one branch per type carrying that type's keywords.
    fn split_type_list(
        &mut self,
        source: &Map<String, Value>,
        types: &[Value],
        at: &str,
        level: usize,
        ready: &mut Map<String, Value>,
    ) -> Step<Map<String, Value>> {
        let names: Vec<&str> = types.iter().filter_map(Value::as_str).collect();
        let has_null = names.contains(&"null");
        let others: Vec<&str> = names.iter().copied().filter(|t| *t != "null").collect();
        let mut map = source.clone();
        match others.as_slice() {
            [] => {
                map.insert("type".into(), Value::String("null".into()));
            }
            [one] => {
                map.insert("type".into(), Value::String((*one).into()));
                if has_null {
                    map.insert("nullable".into(), Value::Bool(true));
                }
            }
            several => {
                if map.contains_key("anyOf") || map.contains_key("oneOf") {
                    return refuse(
                        at,
                        format!(
                            "a type list beside anyOf/oneOf cannot be written with one type per \
                             schema for {}",
                            self.name()
                        ),
                    );
                }
                map.shift_remove("type");
                let mut branches = Vec::new();
                for t in several {
                    let mut branch = Map::new();
                    branch.insert("type".into(), Value::String((*t).into()));
                    for k in keywords_of_type(t) {
                        if let Some(v) = source.get(k) {
                            branch.insert(k.into(), v.clone());
                        }
                    }
                    branches.push(self.node(&Value::Object(branch), at, level + 1, false)?);
                }
                map.retain(|k, _| !is_type_specific(k));
                ready.insert("anyOf".into(), Value::Array(branches));
                if has_null {
                    map.insert("nullable".into(), Value::Bool(true));
                }
            }
        }
        self.report(
            at,
            "type",
            LossAction::Rewritten,
            Accepts::Same,
            Topic::Rewrite,
            format!(
                "{} takes one type per schema: the type list {} is written as {}",
                self.name(),
                Value::Array(types.to_vec()),
                if others.len() > 1 {
                    "anyOf with one type per branch"
                } else if has_null && others.len() == 1 {
                    "one type with \"nullable\": true"
                } else {
                    "one type"
                }
            ),
        );
        Ok(map)
    }

    /// Objects: what strict mode and the profile's requirements ask of them.
    fn object_rules(
        &mut self,
        source: &Map<String, Value>,
        out: &mut Map<String, Value>,
        at: &str,
        is_root: bool,
    ) -> Step<()> {
        if !is_object_schema(source) && !is_object_schema(out) {
            return Ok(());
        }
        let declared: Vec<String> = out
            .get("properties")
            .and_then(Value::as_object)
            .map(|p| p.keys().cloned().collect())
            .unwrap_or_default();
        let required: Vec<String> = match out.get("required") {
            Some(Value::Array(r)) => r
                .iter()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect(),
            _ => Vec::new(),
        };
        // Sets for the lookups: a schema may declare and require tens of thousands of names.
        let declared_names: std::collections::HashSet<&str> =
            declared.iter().map(String::as_str).collect();
        let required_names: std::collections::HashSet<&str> =
            required.iter().map(String::as_str).collect();
        let undeclared: Vec<&String> = required
            .iter()
            .filter(|n| !declared_names.contains(n.as_str()))
            .collect();
        let needs_properties =
            self.profile.requirements.rule.object_properties && admits(out, "object");
        if needs_properties && !out.contains_key("properties") {
            out.insert("properties".into(), Value::Object(Map::new()));
            self.report(
                at,
                "properties",
                LossAction::Rewritten,
                Accepts::Same,
                Topic::Missing,
                format!(
                    "{} rejects an object schema without properties: \"properties\": {{}} is \
                     added (same meaning)",
                    self.name()
                ),
            );
        }
        if self.profile.requirements.rule.declared_required && !undeclared.is_empty() {
            {
                let list = quoted(&undeclared);
                self.report(
                    at,
                    "required",
                    LossAction::Dropped,
                    Accepts::More,
                    Topic::Unsupported,
                    format!(
                        "{} refuses required names that properties does not declare: {list} no \
                         longer required",
                        self.name()
                    ),
                );
                let kept: Vec<Value> = required
                    .iter()
                    .filter(|n| declared_names.contains(n.as_str()))
                    .map(|n| Value::String(n.clone()))
                    .collect();
                if kept.is_empty() {
                    out.shift_remove("required");
                } else {
                    out.insert("required".into(), Value::Array(kept));
                }
            }
        }
        let Some(strict) = self.profile.strict.map(|s| s.rule) else {
            return Ok(());
        };
        if !out.contains_key("type") {
            out.insert("type".into(), Value::String("object".into()));
            self.report(
                at,
                "type",
                LossAction::Rewritten,
                Accepts::Less,
                Topic::Strict,
                format!(
                    "{} needs a type on every schema: this one has properties, so it is \"type\": \
                     \"object\" (values that are not objects are refused)",
                    self.name()
                ),
            );
        }
        if strict.closed {
            let current = out.get("additionalProperties").cloned();
            if current != Some(Value::Bool(false)) {
                if declared.is_empty() && !is_root {
                    return refuse(
                        at,
                        format!(
                            "this object declares no properties (it takes any keys); {} closes \
                             every object, so it could only ever be {{}}",
                            self.name()
                        ),
                    );
                }
                out.insert("additionalProperties".into(), Value::Bool(false));
                let was = match &current {
                    None => "absent".to_string(),
                    Some(v) => v.to_string(),
                };
                self.report(
                    at,
                    "additionalProperties",
                    LossAction::Rewritten,
                    Accepts::Less,
                    Topic::Strict,
                    format!(
                        "{} closes every object: additionalProperties (was {was}) is false, so \
                         properties it does not declare are refused",
                        self.name()
                    ),
                );
            }
        }
        if strict.all_required {
            if !undeclared.is_empty() {
                return refuse(
                    &push_segment(at, "required"),
                    format!(
                        "required names {} are not declared in properties; {} closes the object, \
                         so no call could pass",
                        quoted(&undeclared),
                        self.name()
                    ),
                );
            }
            let optional: Vec<String> = declared
                .iter()
                .filter(|n| !required_names.contains(n.as_str()))
                .cloned()
                .collect();
            if !optional.is_empty() {
                let declared_in_source = source.get("properties").and_then(Value::as_object);
                let takes_null: Vec<&String> = optional
                    .iter()
                    .filter(|name| {
                        declared_in_source
                            .and_then(|p| p.get(name.as_str()))
                            .is_some_and(|schema| self.takes_null(schema, 0))
                    })
                    .collect();
                if !takes_null.is_empty() {
                    let names = takes_null.iter().map(|n| Value::String(n.to_string()));
                    out.insert(TAKES_NULL_MARK.into(), Value::Array(names.collect()));
                    self.report(
                        at,
                        "required",
                        LossAction::Rewritten,
                        Accepts::Reshaped,
                        Topic::Strict,
                        format!(
                            "{} requires every property: optional {} already accept null, which                              the model may mean, so restore_arguments keeps a null sent there                              where the original takes it; leaving them out cannot be said",
                            self.name(),
                            quoted(&takes_null)
                        ),
                    );
                }
                if let Some(Value::Object(properties)) = out.get_mut("properties") {
                    for name in &optional {
                        if let Some(schema) = properties.get_mut(name) {
                            *schema = nullable(std::mem::take(schema));
                        }
                    }
                }
                out.insert(
                    "required".into(),
                    Value::Array(declared.iter().cloned().map(Value::String).collect()),
                );
                out.insert(
                    OPTIONAL_MARK.into(),
                    Value::Array(optional.iter().cloned().map(Value::String).collect()),
                );
                self.report(
                    at,
                    "required",
                    LossAction::Rewritten,
                    Accepts::Reshaped,
                    Topic::Strict,
                    format!(
                        "{} requires every property: optional {} now required and accept null, \
                         which stands for \"not given\" (restore_arguments removes it)",
                        self.name(),
                        quoted(&optional.iter().collect::<Vec<_>>())
                    ),
                );
            }
        }
        Ok(())
    }

    /// Whether an original schema takes `null`, as far as its own keywords tell (`type`,
    /// `const`, `enum`, `$ref`, `anyOf`/`oneOf`/`allOf`); what it takes in context is for the
    /// original's validator to say when a call is restored.
    fn takes_null(&self, schema: &Value, hops: usize) -> bool {
        let map = match schema {
            Value::Bool(b) => return *b,
            Value::Object(map) => map,
            _ => return false,
        };
        if hops > MAX_NULL_HOPS {
            return false;
        }
        if let Some(reference) = map.get("$ref").and_then(Value::as_str) {
            // Draft-07 ignores the keywords beside a `$ref`: the target alone decides.
            if self.dialect == Dialect::Draft7 {
                return self
                    .target(reference, "")
                    .is_ok_and(|(target, _)| self.takes_null(target, hops + 1));
            }
        }
        if admits_type(map, "null") == Some(false) {
            return false;
        }
        if map.get("const").is_some_and(|c| !c.is_null()) {
            return false;
        }
        if let Some(Value::Array(values)) = map.get("enum") {
            if !values.iter().any(Value::is_null) {
                return false;
            }
        }
        if let Some(reference) = map.get("$ref").and_then(Value::as_str) {
            match self.target(reference, "") {
                Ok((target, _)) if self.takes_null(target, hops + 1) => {}
                _ => return false,
            }
        }
        let branches = |key: &str| map.get(key).and_then(Value::as_array);
        for key in ["anyOf", "oneOf"] {
            if let Some(list) = branches(key) {
                if !list.iter().any(|b| self.takes_null(b, hops + 1)) {
                    return false;
                }
            }
        }
        if let Some(list) = branches("allOf") {
            if !list.iter().all(|b| self.takes_null(b, hops + 1)) {
                return false;
            }
        }
        true
    }

    /// Arrays: `items` where the provider requires it.
    fn array_rules(
        &mut self,
        source: &Map<String, Value>,
        out: &mut Map<String, Value>,
        at: &str,
    ) -> Step<()> {
        if !admits(out, "array") && !admits(source, "array") {
            return Ok(());
        }
        let has_items = out.contains_key("items") || out.contains_key("prefixItems");
        if let Some(strict) = self.profile.strict.map(|s| s.rule) {
            if strict.typed_items && !out.get("items").is_some_and(is_typed) {
                return refuse(
                    at,
                    format!(
                        "this array does not say what its elements are; {} needs a typed items \
                         schema, and only the tool's author knows the type",
                        self.name()
                    ),
                );
            }
            return Ok(());
        }
        if self.profile.requirements.rule.array_items && !has_items {
            out.insert("items".into(), Value::Object(Map::new()));
            self.report(
                at,
                "items",
                LossAction::Rewritten,
                Accepts::Same,
                Topic::Missing,
                format!(
                    "{} rejects an array schema without items: \"items\": {{}} is added (any \
                     element, as before)",
                    self.name()
                ),
            );
        }
        Ok(())
    }

    /// A `$ref` with other keywords beside it, for a profile that allows only `$`-keywords
    /// there: the reference moves into an `anyOf` of one branch (same meaning).
    fn wrap_ref_siblings(&mut self, out: &mut Map<String, Value>, at: &str) -> Option<Value> {
        if self.profile.references.rule != References::DefinitionsOnly {
            return None;
        }
        out.get("$ref")?;
        let besides: Vec<&String> = out
            .keys()
            .filter(|k| !k.starts_with('$') && !k.starts_with('\u{0}'))
            .collect();
        if besides.is_empty() {
            return None;
        }
        let reference = out.shift_remove("$ref")?;
        let mut wrapped = Map::new();
        wrapped.insert(
            "anyOf".into(),
            Value::Array(vec![serde_json::json!({ "$ref": reference })]),
        );
        for (k, v) in std::mem::take(out) {
            wrapped.insert(k, v);
        }
        self.report(
            at,
            "$ref",
            LossAction::Rewritten,
            Accepts::Same,
            Topic::Rewrite,
            format!(
                "{} takes nothing beside a $ref: the reference is written as an anyOf of one \
                 branch (same meaning)",
                self.name()
            ),
        );
        Some(Value::Object(wrapped))
    }

    /// Root properties renamed to the profile's parameter-name rule.
    fn rename_parameters(&mut self, adapted: &mut Value) -> Step<Vec<(String, String)>> {
        let Some(rule) = self.profile.parameter_name else {
            return Ok(Vec::new());
        };
        let Some(Value::Object(properties)) = adapted.get("properties") else {
            return Ok(Vec::new());
        };
        let names: Vec<&str> = properties.keys().map(String::as_str).collect();
        if names.iter().all(|n| rule.rule.accepts(n)) {
            return Ok(Vec::new());
        }
        let assigned = super::names::assign(&rule.rule, &names);
        let mut renamed = Vec::new();
        for (old, new) in names.iter().zip(&assigned) {
            let Some(new) = new else { continue };
            if old != new {
                renamed.push((new.clone(), (*old).to_string()));
            }
        }
        drop(names);
        for (new, old) in &renamed {
            self.report(
                &push_segment("/properties", old),
                "properties",
                LossAction::Renamed,
                Accepts::Reshaped,
                Topic::Name,
                format!(
                    "{} parameter names must match {}: '{old}' is sent as '{new}' \
                     (restore_arguments maps it back)",
                    self.name(),
                    rule.rule.pattern()
                ),
            );
        }
        let Some(map) = adapted.as_object_mut() else {
            return Ok(renamed);
        };
        if let Some(Value::Object(properties)) = map.get_mut("properties") {
            let old = std::mem::take(properties);
            for (name, schema) in old {
                let new = renamed
                    .iter()
                    .find(|(_, o)| *o == name)
                    .map_or(name, |(n, _)| n.clone());
                properties.insert(new, schema);
            }
        }
        if let Some(Value::Array(required)) = map.get_mut("required") {
            for name in required.iter_mut() {
                if let Some((new, _)) = renamed
                    .iter()
                    .find(|(_, o)| Some(o.as_str()) == name.as_str())
                {
                    *name = Value::String(new.clone());
                }
            }
        }
        Ok(renamed)
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

/// Add `key: value` to `out`, as when both schemas apply to the same value. `Err(key)` when they
/// constrain it differently and no single value says both; `Ok(Some(value))` for an annotation
/// given differently whose second value could not be kept (two descriptions are joined).
fn merge_member(
    out: &mut Map<String, Value>,
    key: String,
    value: Value,
) -> Result<Option<Value>, String> {
    let Some(existing) = out.get_mut(&key) else {
        out.insert(key, value);
        return Ok(None);
    };
    if *existing == value {
        return Ok(None);
    }
    match key.as_str() {
        "description" => match (&*existing, &value) {
            (Value::String(first), Value::String(second)) => {
                let joined = describe::append(Some(first), std::slice::from_ref(second));
                *existing = Value::String(joined);
                Ok(None)
            }
            _ => Ok(Some(value)),
        },
        // Other annotations: the first one stays.
        k if describes_only(k) && k != "format" => Ok(Some(value)),
        "properties" | "$defs" | "definitions" | "patternProperties" | "dependentSchemas" => {
            let (Value::Object(mine), Value::Object(theirs)) = (existing, value) else {
                return Err(key);
            };
            for (name, schema) in theirs {
                match mine.get(&name) {
                    None => {
                        mine.insert(name, schema);
                    }
                    Some(s) if *s == schema => {}
                    Some(_) => return Err(format!("{key}/{name}")),
                }
            }
            Ok(None)
        }
        "required" => {
            let (Value::Array(mine), Value::Array(theirs)) = (existing, value) else {
                return Err(key);
            };
            for name in theirs {
                if !mine.contains(&name) {
                    mine.push(name);
                }
            }
            Ok(None)
        }
        "minimum" | "minLength" | "minItems" | "minProperties" | "exclusiveMinimum" => {
            tighter(existing, &value, true).map(|()| None).ok_or(key)
        }
        "maximum" | "maxLength" | "maxItems" | "maxProperties" | "exclusiveMaximum" => {
            tighter(existing, &value, false).map(|()| None).ok_or(key)
        }
        _ => Err(key),
    }
}

/// An `additionalProperties` (or `unevaluatedProperties`) that constrains nothing.
fn says_nothing(schema: &Value) -> bool {
    schema == &Value::Bool(true) || schema.as_object().is_some_and(Map::is_empty)
}

/// Whether a schema's `additionalProperties` constrains the properties it does not declare.
fn closes_undeclared(schema: &Map<String, Value>) -> bool {
    schema
        .get("additionalProperties")
        .is_some_and(|a| !says_nothing(a))
}

/// What a schema's `additionalProperties` says about a property that only one of its `allOf`
/// branches declares.
enum ParentSays {
    /// Nothing: the parent declares the name, a pattern of its matches it, or it is open.
    Nothing,
    /// `additionalProperties: false` refuses it.
    Refuses,
    /// The property must fit this `additionalProperties` schema too.
    AlsoFits(Value),
    /// Whether a `patternProperties` pattern matches the name cannot be told (the pattern does
    /// not compile).
    Unknown,
}

fn parent_on_branch_property(parent: &Map<String, Value>, name: &str) -> ParentSays {
    let Some(additional) = parent
        .get("additionalProperties")
        .filter(|a| !says_nothing(a))
    else {
        return ParentSays::Nothing;
    };
    let declared = parent
        .get("properties")
        .and_then(Value::as_object)
        .is_some_and(|p| p.contains_key(name));
    if declared {
        return ParentSays::Nothing;
    }
    if let Some(Value::Object(patterns)) = parent.get("patternProperties") {
        for pattern in patterns.keys() {
            match compile_pattern(pattern) {
                Some(p) if p.is_valid(&Value::String(name.to_string())) => {
                    return ParentSays::Nothing
                }
                Some(_) => {}
                None => return ParentSays::Unknown,
            }
        }
    }
    match additional {
        Value::Bool(false) => ParentSays::Refuses,
        other => ParentSays::AlsoFits(other.clone()),
    }
}

/// Keep the tighter of two numeric bounds in `existing`.
fn tighter(existing: &mut Value, other: &Value, lower: bool) -> Option<()> {
    let (a, b) = (existing.as_f64()?, other.as_f64()?);
    if (lower && b > a) || (!lower && b < a) {
        *existing = other.clone();
    }
    Some(())
}

/// Whether the branches of a `oneOf` take values of distinct types (so no value can match two).
fn distinct_types(branches: &Value) -> bool {
    let Some(list) = branches.as_array() else {
        return false;
    };
    let mut seen: Vec<&str> = Vec::new();
    for branch in list {
        let Some(Value::String(t)) = branch.get("type") else {
            return false;
        };
        let t = t.as_str();
        let overlaps = seen.contains(&t)
            || (t == "integer" && seen.contains(&"number"))
            || (t == "number" && seen.contains(&"integer"));
        if overlaps {
            return false;
        }
        seen.push(t);
    }
    true
}

/// A property schema that also accepts `null`.
fn nullable(schema: Value) -> Value {
    let null_branch = || serde_json::json!({"type": "null"});
    let Value::Object(mut map) = schema else {
        return serde_json::json!({"anyOf": [schema, null_branch()]});
    };
    let plain_anyof = map.contains_key("anyOf")
        && map
            .keys()
            .all(|k| matches!(k.as_str(), "anyOf" | "description" | "title"));
    if plain_anyof {
        if let Some(Value::Array(branches)) = map.get_mut("anyOf") {
            if !branches.iter().any(|b| b == &null_branch()) {
                branches.push(null_branch());
            }
        }
        return Value::Object(map);
    }
    let simple_type = match map.get("type") {
        Some(Value::String(_)) | Some(Value::Array(_)) => {
            !map.contains_key("const") && !map.contains_key("anyOf") && !map.contains_key("$ref")
        }
        _ => false,
    };
    if !simple_type {
        return serde_json::json!({"anyOf": [Value::Object(map), null_branch()]});
    }
    let null = Value::String("null".into());
    match map.get_mut("type") {
        Some(Value::String(t)) if t == "null" => {}
        Some(Value::String(t)) => {
            let t = std::mem::take(t);
            map.insert(
                "type".into(),
                Value::Array(vec![Value::String(t), null.clone()]),
            );
        }
        Some(Value::Array(list)) if !list.contains(&null) => list.push(null.clone()),
        _ => {}
    }
    if let Some(Value::Array(values)) = map.get_mut("enum") {
        if !values.contains(&Value::Null) {
            values.push(Value::Null);
        }
    }
    Value::Object(map)
}

