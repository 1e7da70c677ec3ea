//! Turning the engine's errors into messages a model can act on.
//!
//! Each message names the value the way a caller writes it (`argument 'items[0].id'`), states the
//! constraint, and says what would be accepted. Messages never repeat an argument's value, which
//! may be huge or sensitive; they quote only the schema (limits, enum values, patterns), shortened
//! when long.

use super::{Subject, ValidationError};
use crate::json::pointer::{caller_path, push_segment, resolve};
use crate::text::shorten;
use jsonschema::error::{TypeKind, ValidationErrorKind};
use jsonschema::JsonType;
use serde_json::Value;

/// Longest quoted schema value in a message, in characters.
const MAX_QUOTE: usize = 80;
/// Most enum values listed in a message.
const MAX_ENUM_VALUES: usize = 20;
/// Most did-you-mean suggestions computed for one value: each costs a bounded time, so a value
/// with thousands of unexpected names is still rendered in time linear in its size.
const MAX_SUGGESTIONS: usize = 20;

pub(super) struct Renderer<'a> {
    pub(super) instance: &'a Value,
    pub(super) schema: &'a Value,
    /// Patterns as the engine read them, each with the pattern as written.
    pub(super) patterns: &'a std::collections::HashMap<String, String>,
    pub(super) subject: Subject,
    /// The schema's numbers as its text states them, where its values hold them otherwise.
    pub(super) stated: &'a crate::json::number::StatedNumbers,
    /// Suggestions computed so far.
    pub(super) suggestions: std::cell::Cell<usize>,
}

impl Renderer<'_> {
    /// How the value at `pointer` is named: `arguments`, or `argument 'items[0].id'`.
    fn subject_at(&self, pointer: &str) -> String {
        if pointer.is_empty() {
            self.subject.root().to_string()
        } else {
            format!(
                "{} '{}'",
                self.subject.noun(),
                caller_path(self.instance, pointer)
            )
        }
    }

    /// How a numeric bound names the value: `argument 'n' value must be <= 10`, but `value 'n'
    /// must be <= 10` where the value is what is named anyway.
    fn number_subject(&self, subject: &str) -> String {
        match self.subject {
            Subject::Value => subject.to_string(),
            _ => format!("{subject} value"),
        }
    }

    /// ` (did you mean 'query'?)`-style text from `suggest`, until [`MAX_SUGGESTIONS`] were
    /// computed for this value.
    fn suggest(&self, suggest: impl FnOnce() -> Option<String>) -> String {
        let made = self.suggestions.get();
        if made >= MAX_SUGGESTIONS {
            return String::new();
        }
        self.suggestions.set(made + 1);
        suggest().unwrap_or_default()
    }

    fn push(&self, out: &mut Vec<ValidationError>, path: String, keyword: &str, message: String) {
        out.push(ValidationError {
            path,
            message,
            keyword: keyword.to_string(),
        });
    }

    /// Render one engine error (some become several messages, one per offending property).
    pub(super) fn render(
        &self,
        error: &jsonschema::ValidationError<'_>,
        out: &mut Vec<ValidationError>,
    ) {
        let path = error.instance_path().as_str().to_string();
        let schema_path = error.schema_path().as_str();
        let worded;
        let kind = match self.exact_kind(error) {
            Some(kind) => {
                worded = kind;
                &worded
            }
            None => error.kind(),
        };
        let keyword = kind.keyword().to_string();
        match kind {
            ValidationErrorKind::Required { property } => {
                let name = property.as_str().unwrap_or_default();
                let missing = push_segment(&path, name);
                let mut message = format!(
                    "missing required {} '{}'",
                    self.subject.noun(),
                    caller_path(self.instance, &missing)
                );
                if let Some(trigger) = self.dependent_trigger(schema_path, &path, name) {
                    message.push_str(&format!(
                        " (required when '{}' is present)",
                        caller_path(self.instance, &push_segment(&path, &trigger))
                    ));
                }
                message.push_str(&self.suggest(|| self.near_miss(schema_path, &path, name)));
                self.push(out, missing, &keyword, message);
            }
            ValidationErrorKind::AdditionalProperties { unexpected }
            | ValidationErrorKind::UnevaluatedProperties { unexpected } => {
                let declared = self.declared_properties(schema_path);
                let names: Vec<&str> = unexpected.iter().map(String::as_str).collect();
                self.unexpected(out, &path, &names, &declared, &keyword);
            }
            // `additionalProperties: false` with neither `properties` nor `patternProperties`:
            // the engine blames the object (and quotes its first value), but what is wrong is
            // each of its keys.
            ValidationErrorKind::FalseSchema if schema_path.ends_with("/additionalProperties") => {
                let names: Vec<&str> = resolve(self.instance, &path)
                    .and_then(Value::as_object)
                    .map(|object| object.keys().map(String::as_str).collect())
                    .unwrap_or_default();
                if names.is_empty() {
                    let subject = self.subject_at(&path);
                    let message =
                        self.constraint_message(kind, schema_path, error.instance(), &subject);
                    self.push(out, path, &keyword, message);
                } else {
                    self.unexpected(out, &path, &names, &[], "additionalProperties");
                }
            }
            ValidationErrorKind::AnyOf { context }
            | ValidationErrorKind::OneOfNotValid { context } => {
                let exactly_one = matches!(kind, ValidationErrorKind::OneOfNotValid { .. });
                // When exactly one alternative has the value's type, its own errors say more than
                // a list of alternatives would.
                let fitting: Vec<&Vec<jsonschema::ValidationError<'static>>> = context
                    .iter()
                    .filter(|branch| !branch.iter().any(|e| is_shape_mismatch(e, &path)))
                    .collect();
                if let [branch] = fitting.as_slice() {
                    for inner in branch.iter() {
                        self.render(inner, out);
                    }
                } else {
                    let message = self.alternatives_message(&path, schema_path, exactly_one);
                    self.push(out, path, &keyword, message);
                }
            }
            ValidationErrorKind::PropertyNames { error: inner } => {
                let name = inner.instance().as_str().unwrap_or_default();
                let subject = format!(
                    "property name '{}' in {}",
                    shorten(name, MAX_QUOTE),
                    self.subject_at(&path)
                );
                let message = self.constraint_message(
                    inner.kind(),
                    inner.schema_path().as_str(),
                    inner.instance(),
                    &subject,
                );
                self.push(out, path, &keyword, message);
            }
            _ => {
                let subject = self.subject_at(&path);
                // The value itself, not the engine's copy: a number stated otherwise than it
                // reads is known by where it is (see `exact_kind`).
                let instance = match error.instance() {
                    std::borrow::Cow::Borrowed(instance) => instance,
                    std::borrow::Cow::Owned(copy) => resolve(self.instance, &path).unwrap_or(copy),
                };
                let message = self.constraint_message(kind, schema_path, instance, &subject);
                self.push(out, path, &keyword, message);
            }
        }
    }

    /// The engine's own kind of error for an error of a keyword judging numbers exactly (see
    /// [`super::exact`]), built from the keyword in the schema, so that it is worded alike.
    fn exact_kind(&self, error: &jsonschema::ValidationError<'_>) -> Option<ValidationErrorKind> {
        if !super::exact::is_exact_error(error.kind()) {
            return None;
        }
        let schema_path = error.schema_path().as_str();
        let keyword = schema_path.rsplit('/').next()?;
        let value = resolve(self.schema, schema_path).cloned();
        use ValidationErrorKind as K;
        Some(match (keyword, value) {
            ("const", Some(expected_value)) => K::Constant {
                expected_value: std::sync::Arc::new(expected_value),
            },
            ("enum", Some(options)) => K::Enum {
                options: std::sync::Arc::new(options),
            },
            ("multipleOf", Some(value)) => K::MultipleOf {
                multiple_of: value.as_f64().unwrap_or_default(),
            },
            ("minimum", Some(limit)) => K::Minimum { limit },
            ("maximum", Some(limit)) => K::Maximum { limit },
            ("exclusiveMinimum", Some(limit)) => K::ExclusiveMinimum { limit },
            ("exclusiveMaximum", Some(limit)) => K::ExclusiveMaximum { limit },
            ("uniqueItems", _) => K::UniqueItems,
            ("type", _) => K::Type {
                kind: TypeKind::Single(JsonType::Integer),
            },
            (keyword, _) => K::Custom {
                keyword: keyword.to_string(),
                message: format!("does not meet its `{keyword}`"),
            },
        })
    }

    /// A bound as the schema's text states it, where it was read from text.
    fn limit(&self, limit: &Value, schema_path: &str) -> String {
        self.stated
            .stated_at(schema_path, limit)
            .map_or_else(|| number(limit), ToString::to_string)
    }

    /// A message for a single-value constraint, about `subject`.
    fn constraint_message(
        &self,
        kind: &ValidationErrorKind,
        schema_path: &str,
        instance: &Value,
        subject: &str,
    ) -> String {
        use ValidationErrorKind as K;
        match kind {
            K::Type { kind } => format!(
                "{subject} must be {} (got {})",
                self.declared_types(schema_path)
                    .unwrap_or_else(|| type_names(kind)),
                type_of(instance)
            ),
            K::MinLength { limit } => format!(
                "{subject} string length must be >= {limit}{}",
                got(instance.as_str().map(|s| s.chars().count()))
            ),
            K::MaxLength { limit } => format!(
                "{subject} string length must be <= {limit}{}",
                got(instance.as_str().map(|s| s.chars().count()))
            ),
            K::Minimum { limit } => format!("{} must be >= {}{}", self.number_subject(subject), self.limit(limit, schema_path), got_number(instance)),
            K::Maximum { limit } => format!("{} must be <= {}{}", self.number_subject(subject), self.limit(limit, schema_path), got_number(instance)),
            K::ExclusiveMinimum { limit } => {
                format!("{} must be > {}{}", self.number_subject(subject), self.limit(limit, schema_path), got_number(instance))
            }
            K::ExclusiveMaximum { limit } => {
                format!("{} must be < {}{}", self.number_subject(subject), self.limit(limit, schema_path), got_number(instance))
            }
            K::Enum { options } => {
                let values = options.as_array().map_or(&[][..], Vec::as_slice);
                format!(
                    "{subject} must be one of the enum values: {}{}",
                    list_values(values),
                    self.suggest(|| nearest_value(instance, values))
                )
            }
            K::Constant { expected_value } => {
                format!("{subject} must be exactly {}", quote(expected_value))
            }
            K::Pattern { pattern } => {
                let written = self.patterns.get(pattern).unwrap_or(pattern);
                format!("{subject} must match the pattern {}", shorten(written, MAX_QUOTE))
            }
            K::Format { format } => {
                format!("{subject} must be {} (format '{format}')", describe_format(format))
            }
            K::MinItems { limit } => format!(
                "{subject} must have at least {limit} {}{}",
                crate::text::noun(*limit, "item", "items"),
                got(instance.as_array().map(Vec::len))
            ),
            K::MaxItems { limit } => format!(
                "{subject} must have at most {limit} {}{}",
                crate::text::noun(*limit, "item", "items"),
                got(instance.as_array().map(Vec::len))
            ),
            K::AdditionalItems { limit } => format!(
                "{subject} must have at most {limit} {}{}",
                crate::text::noun(*limit as u64, "item", "items"),
                got(instance.as_array().map(Vec::len))
            ),
            K::UnevaluatedItems { unexpected } => format!(
                "{subject} has items that are not allowed at {} {}",
                crate::text::noun(unexpected.len() as u64, "index", "indexes"),
                unexpected.join(", ")
            ),
            K::MinProperties { limit } => format!(
                "{subject} must have at least {limit} {}{}",
                crate::text::noun(*limit, "property", "properties"),
                got(instance.as_object().map(|m| m.len()))
            ),
            K::MaxProperties { limit } => format!(
                "{subject} must have at most {limit} {}{}",
                crate::text::noun(*limit, "property", "properties"),
                got(instance.as_object().map(|m| m.len()))
            ),
            K::UniqueItems => match first_duplicate(instance) {
                Some((i, j)) => format!(
                    "{subject} must not contain duplicate items (items {i} and {j} are equal)"
                ),
                None => format!("{subject} must not contain duplicate items"),
            },
            K::MultipleOf { multiple_of } => {
                let divisor = resolve(self.schema, schema_path)
                    .and_then(|held| self.stated.stated_at(schema_path, held))
                    .map_or_else(|| float(*multiple_of), ToString::to_string);
                format!("{subject} must be a multiple of {divisor}")
            }
            K::Not { schema } => format!("{subject} must not be {}", self.describe(schema, 0)),
            K::Contains => self.contains_message(schema_path, subject),
            K::OneOfMultipleValid { .. } => {
                let parent = schema_path.to_string();
                let alternatives = self.describe_alternatives(&parent);
                match alternatives {
                    Some(list) => format!(
                        "{subject} matches more than one alternative; it must match exactly one of: {list}"
                    ),
                    None => format!("{subject} matches more than one alternative; it must match exactly one"),
                }
            }
            K::AnyOf { .. } | K::OneOfNotValid { .. } => {
                let exactly_one = matches!(kind, K::OneOfNotValid { .. });
                self.alternatives_message_for(subject, schema_path, exactly_one)
            }
            K::FalseSchema => format!("{subject} is not allowed"),
            K::Required { property } => format!(
                "{subject} must have the property '{}'",
                property.as_str().unwrap_or_default()
            ),
            K::AdditionalProperties { unexpected } | K::UnevaluatedProperties { unexpected } => {
                format!("{subject} has unexpected properties: {}", unexpected.join(", "))
            }
            K::PropertyNames { .. } => format!("{subject} has an invalid property name"),
            K::ContentEncoding { content_encoding } => {
                format!("{subject} must be a {content_encoding}-encoded string")
            }
            K::ContentMediaType { content_media_type } => {
                format!("{subject} must be a string holding valid {content_media_type}")
            }
            K::FromUtf8 { .. } => format!("{subject} must decode to valid UTF-8"),
            K::BacktrackLimitExceeded { .. } | K::RegexEngineFailure { .. } => format!(
                "{subject} could not be checked against its pattern (the regular expression is too complex)"
            ),
            K::Referencing(error) => format!("{subject} could not be checked: {error}"),
            K::Custom { message, .. } => format!("{subject} {message}"),
        }
    }

    /// The type list as the schema declares it (`["string", "null"]` reads `a string or null`).
    fn declared_types(&self, schema_path: &str) -> Option<String> {
        let names: Vec<String> = match resolve(self.schema, schema_path)? {
            Value::String(name) => vec![type_name(name).to_string()],
            Value::Array(names) => names
                .iter()
                .map(|t| t.as_str().map(|t| type_name(t).to_string()))
                .collect::<Option<_>>()?,
            _ => return None,
        };
        Some(join_or(&names))
    }

    fn alternatives_message(&self, path: &str, schema_path: &str, exactly_one: bool) -> String {
        let subject = self.subject_at(path);
        self.alternatives_message_for(&subject, schema_path, exactly_one)
    }

    fn alternatives_message_for(
        &self,
        subject: &str,
        schema_path: &str,
        exactly_one: bool,
    ) -> String {
        let how = if exactly_one { "exactly one" } else { "one" };
        let branches = resolve(self.schema, schema_path).and_then(Value::as_array);
        let Some(branches) = branches else {
            return format!("{subject} must match {how} of the allowed alternatives");
        };
        let descriptions: Vec<String> = branches.iter().map(|b| self.describe(b, 0)).collect();
        let all_simple = branches.iter().all(is_type_only);
        if all_simple && !exactly_one {
            return format!("{subject} must be {}", join_or(&descriptions));
        }
        let numbered: Vec<String> = descriptions
            .iter()
            .enumerate()
            .map(|(i, d)| format!("({}) {d}", i + 1))
            .collect();
        format!("{subject} must match {how} of: {}", numbered.join(", "))
    }

    fn describe_alternatives(&self, schema_path: &str) -> Option<String> {
        let branches = resolve(self.schema, schema_path)?.as_array()?;
        let numbered: Vec<String> = branches
            .iter()
            .enumerate()
            .map(|(i, b)| format!("({}) {}", i + 1, self.describe(b, 0)))
            .collect();
        Some(numbered.join(", "))
    }

    fn contains_message(&self, schema_path: &str, subject: &str) -> String {
        let (parent, last) = match schema_path.rsplit_once('/') {
            Some((parent, last)) => (parent, last),
            None => ("", schema_path),
        };
        let parent_schema = resolve(self.schema, parent);
        let contains = parent_schema
            .and_then(|s| s.get("contains"))
            .map(|c| self.describe(c, 0))
            .unwrap_or_else(|| "of the required kind".to_string());
        let count = |key: &str| {
            parent_schema
                .and_then(|s| s.get(key))
                .and_then(crate::json::as_count)
        };
        let (n, bound) = match last {
            "maxContains" => (count("maxContains").unwrap_or(0), "at most"),
            "minContains" => (count("minContains").unwrap_or(1), "at least"),
            _ => return format!("{subject} must contain at least one item that is {contains}"),
        };
        format!(
            "{subject} must contain {bound} {n} {} that {} {contains}",
            crate::text::noun(n, "item", "items"),
            crate::text::noun(n, "is", "are")
        )
    }

    /// One `unexpected argument 'x'` message per name, with a did-you-mean among `declared`.
    pub(super) fn unexpected(
        &self,
        out: &mut Vec<ValidationError>,
        path: &str,
        names: &[&str],
        declared: &[String],
        keyword: &str,
    ) {
        for name in names {
            let at = push_segment(path, name);
            let mut message = format!(
                "unexpected {} '{}'",
                self.subject.noun(),
                caller_path(self.instance, &at)
            );
            if !declared.is_empty() {
                message.push_str(&self.suggest(|| suggestion(name, declared)));
            }
            self.push(out, at, keyword, message);
        }
    }

    /// ` (did you misspell it as 'repo_pth'?)` when the object at `instance_path` has an
    /// undeclared key close to the missing `name`.
    fn near_miss(&self, schema_path: &str, instance_path: &str, name: &str) -> Option<String> {
        let object = resolve(self.instance, instance_path)?.as_object()?;
        let parent = schema_path.rsplit_once('/').map_or("", |(p, _)| p);
        let parent_schema = resolve(self.schema, parent);
        // A closed object reports the misspelt key itself, with its own did-you-mean.
        let closed = ["additionalProperties", "unevaluatedProperties"]
            .iter()
            .any(|key| parent_schema.and_then(|s| s.get(*key)) == Some(&Value::Bool(false)));
        if closed {
            return None;
        }
        let declared = parent_schema
            .and_then(|s| s.get("properties"))
            .and_then(Value::as_object);
        let undeclared = object
            .keys()
            .filter(|key| declared.is_none_or(|declared| !declared.contains_key(*key)))
            .map(String::as_str);
        let sent = crate::suggest::closest(name, undeclared)?;
        Some(format!(
            " (did you misspell it as '{}'?)",
            caller_path(self.instance, &push_segment(instance_path, sent))
        ))
    }

    /// The property that makes `name` required through `dependentRequired` (or draft-07
    /// `dependencies`), when that is why it is required.
    fn dependent_trigger(
        &self,
        schema_path: &str,
        instance_path: &str,
        name: &str,
    ) -> Option<String> {
        if !(schema_path.ends_with("/dependentRequired") || schema_path.contains("/dependencies")) {
            return None;
        }
        let map_path = match schema_path.find("/dependencies") {
            Some(i) => &schema_path[..i + "/dependencies".len()],
            None => schema_path,
        };
        let dependencies = resolve(self.schema, map_path)?.as_object()?;
        let object = resolve(self.instance, instance_path)?.as_object()?;
        dependencies
            .iter()
            .find(|(trigger, needed)| {
                object.contains_key(*trigger)
                    && needed
                        .as_array()
                        .is_some_and(|list| list.iter().any(|n| n == name))
            })
            .map(|(trigger, _)| trigger.clone())
    }

    /// Property names declared next to the `additionalProperties` (or `unevaluatedProperties`)
    /// that failed, for did-you-mean suggestions.
    fn declared_properties(&self, schema_path: &str) -> Vec<String> {
        let parent = schema_path.rsplit_once('/').map_or("", |(p, _)| p);
        resolve(self.schema, parent)
            .and_then(|s| s.get("properties"))
            .and_then(Value::as_object)
            .map(|props| props.keys().cloned().collect())
            .unwrap_or_default()
    }

    /// A short description of what a schema accepts: `a string`, `an object with 'id'`,
    /// `exactly "all"`.
    fn describe(&self, schema: &Value, depth: usize) -> String {
        let Some(map) = schema.as_object() else {
            return match schema {
                Value::Bool(true) => "anything".into(),
                _ => "nothing".into(),
            };
        };
        if depth < 3 {
            if let Some(target) = map
                .get("$ref")
                .and_then(Value::as_str)
                .and_then(|r| r.strip_prefix('#'))
                .and_then(|pointer| resolve(self.schema, pointer))
            {
                return self.describe(target, depth + 1);
            }
        }
        if let Some(value) = map.get("const") {
            return format!("exactly {}", quote(value));
        }
        if let Some(Value::Array(values)) = map.get("enum") {
            return format!("one of {}", list_values(values));
        }
        let types: Vec<&str> = match map.get("type") {
            Some(Value::String(t)) => vec![t.as_str()],
            Some(Value::Array(list)) => list.iter().filter_map(Value::as_str).collect(),
            _ => Vec::new(),
        };
        if types.is_empty() {
            for key in ["anyOf", "oneOf"] {
                if let (Some(Value::Array(branches)), true) = (map.get(key), depth < 3) {
                    let parts: Vec<String> = branches
                        .iter()
                        .map(|b| self.describe(b, depth + 1))
                        .collect();
                    return join_or(&parts);
                }
            }
            if map.contains_key("properties") || map.contains_key("required") {
                return describe_object(map);
            }
            return format!("a value matching {}", quote(schema));
        }
        let described: Vec<String> = types
            .iter()
            .map(|t| match *t {
                "object" => describe_object(map),
                "string" => {
                    let mut s = "a string".to_string();
                    if let Some(format) = map.get("format").and_then(Value::as_str) {
                        s.push_str(&format!(" in format '{format}'"));
                    } else if let Some(pattern) = map.get("pattern").and_then(Value::as_str) {
                        s.push_str(&format!(" matching {}", shorten(pattern, MAX_QUOTE)));
                    }
                    s
                }
                other => type_name(other).to_string(),
            })
            .collect();
        join_or(&described)
    }
}

/// Whether an error inside an alternative says the value has the wrong shape for it (rather than
/// breaking one of its constraints).
fn is_shape_mismatch(error: &jsonschema::ValidationError<'_>, path: &str) -> bool {
    let exact_shape = super::exact::is_exact_error(error.kind())
        && ["/type", "/const", "/enum"]
            .iter()
            .any(|keyword| error.schema_path().as_str().ends_with(keyword));
    error.instance_path().as_str() == path
        && (exact_shape
            || matches!(
                error.kind(),
                ValidationErrorKind::Type { .. }
                    | ValidationErrorKind::Constant { .. }
                    | ValidationErrorKind::Enum { .. }
                    | ValidationErrorKind::FalseSchema
                    | ValidationErrorKind::Required { .. }
                    | ValidationErrorKind::AnyOf { .. }
                    | ValidationErrorKind::OneOfNotValid { .. }
                    | ValidationErrorKind::Not { .. }
            ))
}

/// Whether a schema says nothing but a type, so a list of alternatives reads as `a string or null`.
fn is_type_only(schema: &Value) -> bool {
    schema.as_object().is_some_and(|m| {
        m.keys()
            .all(|k| matches!(k.as_str(), "type" | "description" | "title"))
            && m.get("type")
                .is_some_and(|t| t.as_str().is_some_and(|t| t != "object"))
    })
}

fn describe_object(map: &serde_json::Map<String, Value>) -> String {
    let required: Vec<String> = map
        .get("required")
        .and_then(Value::as_array)
        .map(|r| {
            r.iter()
                .filter_map(Value::as_str)
                .map(|s| format!("'{s}'"))
                .collect()
        })
        .unwrap_or_default();
    if required.is_empty() {
        "an object".into()
    } else {
        format!("an object with {}", required.join(", "))
    }
}

fn type_name(name: &str) -> &str {
    match name {
        "array" => "an array",
        "boolean" => "a boolean",
        "integer" => "an integer",
        "null" => "null",
        "number" => "a number",
        "object" => "an object",
        "string" => "a string",
        other => other,
    }
}

fn json_type_name(t: JsonType) -> &'static str {
    match t {
        JsonType::Array => "an array",
        JsonType::Boolean => "a boolean",
        JsonType::Integer => "an integer",
        JsonType::Null => "null",
        JsonType::Number => "a number",
        JsonType::Object => "an object",
        JsonType::String => "a string",
    }
}

fn type_names(kind: &TypeKind) -> String {
    match kind {
        TypeKind::Single(t) => json_type_name(*t).to_string(),
        TypeKind::Multiple(set) => {
            let names: Vec<String> = set.iter().map(|t| json_type_name(t).to_string()).collect();
            join_or(&names)
        }
    }
}

/// `a`, `a or b`, `a, b or c`.
fn join_or(parts: &[String]) -> String {
    match parts {
        [] => String::new(),
        [only] => only.clone(),
        [init @ .., last] => format!("{} or {last}", init.join(", ")),
    }
}

fn got(n: Option<usize>) -> String {
    n.map(|n| format!(" (got {n})")).unwrap_or_default()
}

fn got_number(instance: &Value) -> String {
    if let Some(stated) = super::exact::stated_otherwise(instance) {
        return format!(" (got {stated})");
    }
    match instance {
        Value::Number(n) => format!(" (got {})", number(&Value::Number(n.clone()))),
        _ => String::new(),
    }
}

/// A number as a person writes it: `5`, not `5.0`.
fn number(value: &Value) -> String {
    match value {
        Value::Number(n) if n.is_f64() => float(n.as_f64().unwrap_or_default()),
        other => other.to_string(),
    }
}

fn float(f: f64) -> String {
    if f.fract() == 0.0 && f.abs() < 1e15 {
        format!("{}", f as i64)
    } else if f.abs() >= 1e16 {
        // Every digit of a float this large is not worth printing: 1e300, not 1000...0.
        format!("{f:e}")
    } else {
        format!("{f}")
    }
}

/// A schema value in JSON, shortened to [`MAX_QUOTE`] characters.
fn quote(value: &Value) -> String {
    shorten(&value.to_string(), MAX_QUOTE)
}

fn list_values(values: &[Value]) -> String {
    let mut parts: Vec<String> = values.iter().take(MAX_ENUM_VALUES).map(quote).collect();
    if values.len() > MAX_ENUM_VALUES {
        parts.push(format!("… ({} more)", values.len() - MAX_ENUM_VALUES));
    }
    parts.join(", ")
}

fn first_duplicate(instance: &Value) -> Option<(usize, usize)> {
    let items = instance.as_array()?;
    for (j, b) in items.iter().enumerate() {
        if let Some(i) = items[..j].iter().position(|a| a == b) {
            return Some((i, j));
        }
    }
    None
}

/// ` (did you mean 'query'?)` when a declared name is close to `name`.
fn suggestion(name: &str, declared: &[String]) -> Option<String> {
    crate::suggest::closest(name, declared.iter().map(String::as_str))
        .map(|candidate| format!(" (did you mean '{candidate}'?)"))
}

/// ` (did you mean "fast"?)` when the string `instance` is close to one of the string `values`.
fn nearest_value(instance: &Value, values: &[Value]) -> Option<String> {
    let sent = instance.as_str()?;
    let nearest = crate::suggest::closest(sent, values.iter().filter_map(Value::as_str))?;
    Some(format!(
        " (did you mean {}?)",
        quote(&Value::String(nearest.to_string()))
    ))
}

/// What kind of JSON value was sent, for `(got a string)`.
pub(super) fn type_of(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(n) if n.is_f64() => "a number",
        Value::Number(_) => "an integer",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// What a `format` accepts, in words.
fn describe_format(format: &str) -> String {
    match format {
        "date-time" => "a date-time like 2024-01-31T12:00:00Z".into(),
        "date" => "a date like 2024-01-31".into(),
        "time" => "a time like 12:00:00Z".into(),
        "duration" => "an ISO 8601 duration like P3D".into(),
        "email" | "idn-email" => "an email address".into(),
        "hostname" | "idn-hostname" => "a host name".into(),
        "ipv4" => "an IPv4 address".into(),
        "ipv6" => "an IPv6 address".into(),
        "uri" | "iri" => "an absolute URI".into(),
        "uri-reference" | "iri-reference" => "a URI reference".into(),
        "uri-template" => "a URI template".into(),
        "uuid" => "a UUID".into(),
        "regex" => "a regular expression".into(),
        "json-pointer" => "a JSON Pointer".into(),
        "relative-json-pointer" => "a relative JSON Pointer".into(),
        other => format!("a valid {other}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suggestions_pick_close_names() {
        let declared = vec!["query".to_string(), "limit".to_string()];
        assert_eq!(
            suggestion("qyery", &declared).as_deref(),
            Some(" (did you mean 'query'?)")
        );
        assert_eq!(suggestion("zzz", &declared), None);
    }

    #[test]
    fn joins_and_numbers() {
        assert_eq!(join_or(&["a".into(), "b".into(), "c".into()]), "a, b or c");
        assert_eq!(float(5.0), "5");
        assert_eq!(float(0.5), "0.5");
        assert_eq!(shorten(&"x".repeat(100), 5), "xxxxx…");
    }
}
