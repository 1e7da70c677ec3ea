//! Compiled validators for `inputSchema` and `outputSchema`, with messages a model can act on.
//!
//! Compile once, validate many times. Every error carries the JSON Pointer of the offending value
//! inside the arguments and a message that names the argument as the caller wrote it and says what
//! would be accepted:
//!
//! ```
//! use serde_json::json;
//! use toolschema::Tool;
//!
//! let tool = Tool::from_value(json!({
//!     "name": "search",
//!     "inputSchema": {
//!         "query": {"type": "string", "required": true, "minLength": 3},
//!         "limit": {"type": "integer", "maximum": 100}
//!     }
//! })).unwrap();
//! let compiled = tool.compile().unwrap();
//! assert!(compiled.validate_input(&json!({"query": "rust"})).is_ok());
//!
//! let errors = compiled.validate_input(&json!({"limit": 500, "qyery": "x"})).unwrap_err();
//! let messages: Vec<&str> = errors.iter().map(|e| e.message.as_str()).collect();
//! assert_eq!(messages, [
//!     "missing required argument 'query'",
//!     "argument 'limit' value must be <= 100 (got 500)",
//!     "unexpected argument 'qyery' (did you mean 'query'?)",
//! ]);
//! ```

mod case_variants;
mod exact;
mod messages;

use crate::json::host::TextNotes;
use crate::json::number::StatedNumbers;
use crate::json::{nesting_depth, MAX_DEPTH};
use crate::schema::dialect::detect_dialect_with;
use crate::schema::document::Document;
use crate::schema::patterns::{patterns_the_validator_refuses, with_ecma_patterns};
use crate::schema::references::{check_references, stub_external_refs, UNFETCHED_REF};
use crate::schema::{normalize_shape, vocabulary, Dialect, SchemaError, SchemaShape};
use crate::tool::Tool;
use jsonschema::error::ValidationErrorKind;
use serde::Serialize;
use serde_json::Value;
use std::cell::RefCell;
use std::collections::{HashMap, HashSet};
use std::fmt;
use std::sync::Arc;

/// One reason a value does not fit its schema.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ValidationError {
    /// JSON Pointer to the offending value (for a missing property: where it would be).
    pub path: String,
    /// What is wrong and what would be accepted, naming the value as a caller writes it.
    pub message: String,
    /// The JSON Schema keyword that failed (`required`, `maxLength`, ...).
    #[serde(skip)]
    pub keyword: String,
}

impl ValidationError {
    /// Whether this says the value could not be judged at all (see
    /// [`ValidationErrors::is_unchecked`]), rather than what is wrong with it.
    pub fn is_unchecked(&self) -> bool {
        self.keyword == UNCHECKED_KEYWORD
    }
}

impl fmt::Display for ValidationError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

/// Every reason a value does not fit its schema: missing properties first, unexpected ones last.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(transparent)]
pub struct ValidationErrors(Vec<ValidationError>);

impl ValidationErrors {
    /// The errors.
    pub fn iter(&self) -> std::slice::Iter<'_, ValidationError> {
        self.0.iter()
    }

    /// How many errors.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Always false: an error list is only returned when something is wrong.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The messages, one per error.
    pub fn messages(&self) -> Vec<&str> {
        self.0.iter().map(|e| e.message.as_str()).collect()
    }

    /// The errors as a vector.
    pub fn into_vec(self) -> Vec<ValidationError> {
        self.0
    }

    /// Whether the value could not be judged at all: its validation reached a `$ref` that is
    /// never fetched (see [`CompileOptions::defer_external_refs`]), or it holds a number too
    /// large to be read exactly where the schema compares numbers exactly. The one error says
    /// which.
    pub fn is_unchecked(&self) -> bool {
        self.0.iter().any(ValidationError::is_unchecked)
    }
}

/// The keyword of the error that says a value could not be judged.
const UNCHECKED_KEYWORD: &str = "(unchecked)";

impl fmt::Display for ValidationErrors {
    /// One message per line: what an MCP `isError` result carries.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, e) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str("\n")?;
            }
            f.write_str(&e.message)?;
        }
        Ok(())
    }
}

impl std::error::Error for ValidationErrors {}

impl<'a> IntoIterator for &'a ValidationErrors {
    type Item = &'a ValidationError;
    type IntoIter = std::slice::Iter<'a, ValidationError>;

    fn into_iter(self) -> Self::IntoIter {
        self.0.iter()
    }
}

/// What is being validated; decides how messages name values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Subject {
    /// Tool-call arguments: `argument 'q'`, `arguments` for the root.
    #[default]
    Arguments,
    /// A tool result's `structuredContent`: `field 'total'`, `structured content` for the root.
    StructuredContent,
    /// Any value: `value 'a.b'`, `value` for the root.
    Value,
}

impl Subject {
    fn root(self) -> &'static str {
        match self {
            Subject::Arguments => "arguments",
            Subject::StructuredContent => "structured content",
            Subject::Value => "value",
        }
    }

    fn noun(self) -> &'static str {
        match self {
            Subject::Arguments => "argument",
            Subject::StructuredContent => "field",
            Subject::Value => "value",
        }
    }
}

/// How schemas are compiled.
#[derive(Clone, Default)]
pub struct CompileOptions {
    dialect: Option<Dialect>,
    assert_format: bool,
    refuse_unknown_formats: bool,
    documents: HashMap<String, Value>,
    defer_external_refs: bool,
}

impl fmt::Debug for CompileOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CompileOptions")
            .field("dialect", &self.dialect)
            .field("assert_format", &self.assert_format)
            .field("refuse_unknown_formats", &self.refuse_unknown_formats)
            .field("documents", &self.documents.keys().collect::<Vec<_>>())
            .field("defer_external_refs", &self.defer_external_refs)
            .finish()
    }
}

impl CompileOptions {
    /// Defaults: dialect from `$schema` (2020-12 when absent), `format` as an annotation only, no
    /// registered documents.
    pub fn new() -> Self {
        Self::default()
    }

    /// Take every schema as standard JSON Schema of this dialect, whatever its `$schema` says (no
    /// lightweight shape detection either).
    pub fn dialect(mut self, dialect: Dialect) -> Self {
        self.dialect = Some(dialect);
        self
    }

    /// Make `format` an assertion (by default it only annotates, as JSON Schema says).
    pub fn assert_format(mut self, yes: bool) -> Self {
        self.assert_format = yes;
        self
    }

    /// Refuse to compile a schema with a `format` the validator does not know (by default such a
    /// format is an annotation even when formats are asserted): for a caller who asked for
    /// formats to be asserted and must not have one pass unchecked (`validate --assert-format`).
    pub fn refuse_unknown_formats(mut self, yes: bool) -> Self {
        self.refuse_unknown_formats = yes;
        self
    }

    /// Compile a schema even when it has a `$ref` to a document outside it (one not registered):
    /// such a reference is never fetched, and a value whose validation reaches it cannot be
    /// judged ([`ValidationErrors::is_unchecked`]), while values that never reach it (the
    /// reference sits in an unused `$defs` entry, or in a property the value does not have) are
    /// validated as usual. Without this, such a schema does not compile.
    pub fn defer_external_refs(mut self, yes: bool) -> Self {
        self.defer_external_refs = yes;
        self
    }

    /// Make a document available to `$ref` (and `$schema`) under `uri`. Nothing else outside the
    /// schema itself is ever resolved, and nothing is fetched from the network.
    pub fn register_document(mut self, uri: impl Into<String>, document: Value) -> Self {
        let uri = uri.into();
        let uri = uri.strip_suffix('#').map(str::to_string).unwrap_or(uri);
        self.documents.insert(uri, document);
        self
    }
}

/// What the engines of a schema are built with.
struct EngineRecipe {
    /// The draft, unless the schema's `$schema` names a registered meta-schema.
    draft: Option<jsonschema::Draft>,
    assert_format: bool,
    refuse_unknown_formats: bool,
    documents: Arc<HashMap<String, Value>>,
    /// Whether the schema was read from text: its numbers not stated otherwise read back as
    /// written (see [`exact::SchemaNumbers`]).
    from_text: bool,
}

impl EngineRecipe {
    /// The engine for `schema`; with `exact`, judging numbers as [`exact`] does.
    fn build(
        &self,
        schema: &Value,
        exact: Option<&StatedNumbers>,
    ) -> Result<jsonschema::Validator, jsonschema::ValidationError<'static>> {
        let engine = jsonschema::options();
        let engine = match self.draft {
            Some(draft) => engine.with_draft(draft),
            None => engine,
        };
        let mut engine = engine
            .should_validate_formats(self.assert_format)
            .should_ignore_unknown_formats(!self.refuse_unknown_formats)
            .with_retriever(RegisteredDocuments(self.documents.clone()))
            .with_keyword(UNFETCHED_REF, |_, value, _| {
                let reference = value.as_str().unwrap_or_default().to_string();
                Ok(Box::new(UnfetchedRef(reference)))
            });
        if let Some(stated) = exact {
            // The engine borrows `schema` while it compiles: a stated number is known by the
            // address of its `Value` there.
            let numbers = Arc::new(exact::SchemaNumbers {
                stated: stated
                    .in_value(schema)
                    .into_iter()
                    .map(|(value, decimal)| (value as *const Value as usize, decimal.clone()))
                    .collect(),
                from_text: self.from_text,
            });
            for name in exact::EXACT_KEYWORDS {
                let numbers = numbers.clone();
                engine = engine.with_keyword(name, move |_, value, _| {
                    Ok(exact::compile(name, value, &|n| numbers.read(n)))
                });
            }
        }
        engine.build(schema)
    }
}

/// The engine's retriever: registered documents, and a refusal for anything else.
struct RegisteredDocuments(Arc<HashMap<String, Value>>);

#[derive(Debug)]
struct ExternalRefRefused(String);

impl fmt::Display for ExternalRefRefused {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "external $ref resolution is disabled: {}", self.0)
    }
}

impl std::error::Error for ExternalRefRefused {}

impl jsonschema::Retrieve for RegisteredDocuments {
    fn retrieve(
        &self,
        uri: &jsonschema::Uri<String>,
    ) -> Result<Value, Box<dyn std::error::Error + Send + Sync>> {
        let text = uri.as_str();
        let without_fragment = text.split('#').next().unwrap_or(text);
        match self.0.get(without_fragment) {
            Some(document) => Ok(document.clone()),
            None => Err(Box::new(ExternalRefRefused(text.to_string()))),
        }
    }
}

thread_local! {
    /// The first never-fetched `$ref` the current validation on this thread reached.
    static UNFETCHED_REACHED: RefCell<Option<String>> = const { RefCell::new(None) };
}

/// What an external `$ref` becomes with [`CompileOptions::defer_external_refs`]: reaching it
/// records the reference, and the value is then not judged.
struct UnfetchedRef(String);

impl UnfetchedRef {
    fn reached(&self) {
        UNFETCHED_REACHED.with(|reached| {
            reached.borrow_mut().get_or_insert_with(|| self.0.clone());
        });
    }
}

impl<'i> jsonschema::Keyword<'i> for UnfetchedRef {
    fn validate(&self, _: &'i Value) -> Result<(), jsonschema::ValidationError<'i>> {
        self.reached();
        Err(jsonschema::ValidationError::custom(format!(
            "could not be checked: its schema refers to {}, which is never fetched",
            self.0
        )))
    }

    fn is_valid(&self, _: &'i Value) -> bool {
        self.reached();
        false
    }
}

/// A schema compiled for repeated validation.
pub struct SchemaValidator {
    engine: jsonschema::Validator,
    /// The engine with the keywords that compare numbers judging them as their text states
    /// them (see [`exact`]): built when a value read from text first needs it.
    exact_engine: std::sync::OnceLock<Option<jsonschema::Validator>>,
    /// How the engines are built.
    recipe: EngineRecipe,
    /// The numbers of the schema its text states otherwise than its `Value` holds them, by
    /// pointer into `schema`: when there are any, `engine` is the exact one.
    stated: StatedNumbers,
    /// Whether the schema has a keyword that compares numbers (see [`exact::compares_numbers`]).
    compares_numbers: bool,
    /// Whether it has a `multipleOf`, which the engine computes with floats.
    has_multiple_of: bool,
    /// The standard schema validated against (lightweight shapes translated); messages read it.
    schema: Value,
    shape: SchemaShape,
    dialect: Dialect,
    /// Whether the schema can recurse along the instance (`$ref`) or compares whole items
    /// (`uniqueItems`): then instances are checked for depth first, so none can exhaust the stack.
    guard_depth: bool,
    /// The most subschemas it applies in a row at one place of a value through references
    /// (see [`check_references`]): the engine recurses that many times more at every level.
    in_place_chain: usize,
    /// Whether it holds `$ref`s that are never fetched.
    has_unfetched: bool,
    /// The top-level property names the schema declares, when it leaves the others to no
    /// explicit rule (see [`SchemaValidator::undeclared_properties`]).
    declared: Option<HashSet<String>>,
    /// Whether the schema compares numbers exactly somewhere, so that a number read with rounding
    /// could be judged wrongly (see [`exact_number_keyword`]).
    exact_numbers: Option<ExactNumbers>,
    /// The patterns the engine was given in ECMA-262's meaning, each with the pattern as written
    /// (see [`crate::schema::patterns`]), for messages.
    patterns: HashMap<String, String>,
    /// What in the schema may tell U+FFFD from a lone surrogate (see
    /// [`SchemaValidator::lone_surrogates_unchecked`]).
    examines_characters: Option<&'static str>,
}

impl fmt::Debug for SchemaValidator {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SchemaValidator")
            .field("schema", &self.schema)
            .field("shape", &self.shape)
            .field("dialect", &self.dialect)
            .finish_non_exhaustive()
    }
}

impl SchemaValidator {
    /// Compile a schema in any accepted shape with default options.
    pub fn new(schema: &Value) -> Result<Self, SchemaError> {
        Self::with_options(schema, &CompileOptions::default())
    }

    /// Compile a schema in any accepted shape, built in code: a number it holds as a float
    /// past 2^53 is compared as that float's value (see [`crate::json::number::Decimal::held_by`]). A schema read
    /// from text is better compiled with [`SchemaValidator::read_with_options`].
    pub fn with_options(schema: &Value, options: &CompileOptions) -> Result<Self, SchemaError> {
        Self::compile(schema, None, options)
    }

    /// Compile a schema read from JSON text, comparing its numbers as the text states them:
    /// `stated` holds those the `Value` holds otherwise (`StatedNumbers::read(text)`, or the
    /// part of it [below](StatedNumbers::below) the schema when the schema is part of a larger
    /// text). `{"maximum": 18446744073709551616}` then refuses 2^64 + 1, which the float
    /// nearest 2^64 would not.
    ///
    /// ```
    /// use toolschema::json::number::StatedNumbers;
    /// use toolschema::{CompileOptions, SchemaValidator};
    ///
    /// let text = r#"{"maximum": 18446744073709551616}"#;
    /// let schema = toolschema::json::parse(text).unwrap();
    /// let stated = StatedNumbers::read(text);
    /// let validator =
    ///     SchemaValidator::read_with_options(&schema, &stated, &CompileOptions::new()).unwrap();
    /// let over = "18446744073709551617";
    /// let value = toolschema::json::parse(over).unwrap();
    /// assert!(validator.validate_text(&value, over, toolschema::Subject::Value).is_err());
    /// ```
    pub fn read_with_options(
        schema: &Value,
        stated: &StatedNumbers,
        options: &CompileOptions,
    ) -> Result<Self, SchemaError> {
        Self::compile(schema, Some(stated), options)
    }

    fn compile(
        schema: &Value,
        stated: Option<&StatedNumbers>,
        options: &CompileOptions,
    ) -> Result<Self, SchemaError> {
        let (shape, standard) = match options.dialect {
            Some(_) => {
                if !schema.is_object() && !schema.is_boolean() {
                    return Err(SchemaError::NotASchema);
                }
                if nesting_depth(schema, MAX_DEPTH) > MAX_DEPTH {
                    return Err(SchemaError::TooDeep { limit: MAX_DEPTH });
                }
                (SchemaShape::Standard, std::borrow::Cow::Borrowed(schema))
            }
            None => normalize_shape(schema)?,
        };
        let dialect = match options.dialect {
            Some(d) => d,
            None => detect_dialect_with(&standard, |uri| options.documents.get(uri))?,
        };
        let in_place_chain = check_references(&standard)?;
        let stubbed = if options.defer_external_refs {
            stub_external_refs(&standard, |document| {
                options.documents.contains_key(document)
            })
        } else {
            None
        };
        let has_unfetched = stubbed.is_some();
        let standard = match stubbed {
            Some(stubbed) => std::borrow::Cow::Owned(stubbed),
            None => standard,
        };
        // A pattern the engine would read with a meaning of Rust's own is refused (fails
        // closed), in the schema and in every document it may reach.
        if let Some(bad) = patterns_the_validator_refuses(&standard).into_iter().next() {
            return Err(SchemaError::Invalid {
                pointer: bad.pointer.clone(),
                message: bad.to_string(),
            });
        }
        let mut documents: Vec<_> = options.documents.iter().collect();
        documents.sort_by_key(|(uri, _)| *uri);
        for (uri, document) in documents {
            if let Some(bad) = patterns_the_validator_refuses(document).into_iter().next() {
                return Err(SchemaError::Invalid {
                    pointer: format!("{uri}#{}", bad.pointer),
                    message: bad.to_string(),
                });
            }
        }
        // What the engine reads: patterns rewritten to mean what ECMA-262 means.
        let (for_engine, patterns) = match with_ecma_patterns(&standard) {
            Some((rewritten, patterns)) => (std::borrow::Cow::Owned(rewritten), patterns),
            None => (
                std::borrow::Cow::Borrowed(standard.as_ref()),
                HashMap::new(),
            ),
        };
        // A `$schema` naming a registered meta-schema is left to the engine, which reads its
        // vocabularies there (told the draft, it would take the draft's own vocabularies).
        let custom_meta_schema =
            standard
                .get("$schema")
                .and_then(Value::as_str)
                .is_some_and(|uri| {
                    options
                        .documents
                        .contains_key(uri.split('#').next().unwrap_or(uri))
                });
        let recipe = EngineRecipe {
            draft: (!custom_meta_schema).then(|| dialect.engine_draft()),
            assert_format: options.assert_format,
            refuse_unknown_formats: options.refuse_unknown_formats,
            documents: Arc::new(options.documents.clone()),
            from_text: stated.is_some() && !shape.is_lightweight(),
        };
        // The pointers of a lightweight shape's numbers are not those of the standard schema
        // it becomes; its numbers are read as the values hold them.
        let stated = match stated {
            Some(stated) if !shape.is_lightweight() => stated.clone(),
            _ => StatedNumbers::default(),
        };
        // A schema with numbers its values hold otherwise than stated is judged by the engine
        // that compares numbers exactly, whatever the value: even a small number may fall on
        // the other side of `0.10000000000000000001` than of the float nearest it.
        let engine = recipe
            .build(&for_engine, (!stated.is_empty()).then_some(&stated))
            .map_err(|error| compile_error(error, &patterns))?;
        drop(for_engine);
        Ok(SchemaValidator {
            engine,
            compares_numbers: exact::compares_numbers(&standard),
            has_multiple_of: crate::json::any_object(&standard, |map| {
                map.get("multipleOf").is_some_and(Value::is_number)
            }),
            exact_engine: std::sync::OnceLock::new(),
            recipe,
            stated,
            guard_depth: can_recurse(&standard),
            in_place_chain,
            has_unfetched,
            declared: declared_top_level(&standard),
            exact_numbers: exact_number_keyword(&standard),
            examines_characters: std::iter::once(standard.as_ref())
                .chain(options.documents.values())
                .find_map(|schema| character_keyword(schema, options.assert_format)),
            patterns,
            schema: standard.into_owned(),
            shape,
            dialect,
        })
    }

    /// Why a value read from text that holds a lone surrogate escape (see
    /// [`crate::json::has_lone_surrogate`]) cannot be judged exactly by this schema: the escape
    /// reads here as U+FFFD, and something in the schema (a `pattern`, names or patterns of
    /// names, an asserted `format`, a string holding U+FFFD) may tell that character from the
    /// surrogate a JavaScript or Python server keeps. `None` when nothing can: the verdict on
    /// the value read is the verdict on the text.
    pub fn lone_surrogates_unchecked(&self) -> Option<String> {
        self.examines_characters.map(|what| {
            format!(
                "a lone surrogate escape (\\uD800 to \\uDFFF) reads here as U+FFFD, and the schema examines characters ({what}), which a server keeping the surrogate may judge otherwise"
            )
        })
    }

    /// The standard JSON Schema this validator checks against.
    pub fn schema(&self) -> &Value {
        &self.schema
    }

    /// The shape the schema was written in.
    pub fn shape(&self) -> SchemaShape {
        self.shape
    }

    /// The dialect the schema is validated as.
    pub fn dialect(&self) -> Dialect {
        self.dialect
    }

    /// Whether `instance` fits, without building any message: the fast path. A value that
    /// cannot be judged (it reaches a `$ref` that is never fetched) does not.
    #[inline]
    pub fn is_valid(&self, instance: &Value) -> bool {
        let Some(steps) = self.recursion(instance) else {
            return false;
        };
        with_stack_for(steps, || {
            matches!(self.judge(instance, steps), Judgement::Valid)
        })
        .unwrap_or(false)
    }

    /// How many times the engine may recurse for `instance`: its levels times the subschemas
    /// applied in a row at each (0 when the schema cannot recurse along it); `None` when it
    /// nests deeper than [`MAX_DEPTH`] where that matters.
    #[inline]
    fn recursion(&self, instance: &Value) -> Option<usize> {
        if !self.guard_depth {
            return Some(0);
        }
        let depth = nesting_depth(instance, MAX_DEPTH);
        (depth <= MAX_DEPTH).then(|| (depth + 1) * (self.in_place_chain + 1))
    }

    /// The engine's verdict, unless it could not judge: the value reached a `$ref` that is
    /// never fetched, or the value was found to fit but holds a number read with rounding that
    /// the schema may compare exactly.
    ///
    /// `steps` is [`SchemaValidator::recursion`]'s count for `instance`.
    #[inline]
    fn judge(&self, instance: &Value, steps: usize) -> Judgement {
        let verdict = if !self.has_unfetched {
            match self.engine.is_valid(instance) {
                true => Judgement::Valid,
                false => Judgement::Invalid,
            }
        } else {
            UNFETCHED_REACHED.with(|reached| reached.borrow_mut().take());
            let valid = self.engine.is_valid(instance);
            match UNFETCHED_REACHED.with(|reached| reached.borrow_mut().take()) {
                Some(reference) => Judgement::Unchecked(format!(
                    "the schema refers to {reference}, which is never fetched"
                )),
                None if valid => Judgement::Valid,
                None => Judgement::Invalid,
            }
        };
        if matches!(verdict, Judgement::Unchecked(_)) {
            return verdict;
        }
        let Some(exact) = &self.exact_numbers else {
            return verdict;
        };
        let rounded = rounded_numbers(instance, exact.integers_too);
        // Integers the value holds exactly (not floats): the engine that compares numbers
        // exactly judges them as they are.
        if !rounded.is_empty() && rounded.iter().all(|(_, number)| !number.is_f64()) {
            if let Some(engine) = self.exact_engine() {
                return match engine.is_valid(instance) {
                    true => Judgement::Valid,
                    false => Judgement::InvalidExactly,
                };
            }
        }
        let mut compared = Vec::new();
        for (pointer, number) in rounded {
            let path: Vec<String> = crate::json::pointer::split_pointer(&pointer)
                .map(|step| step.into_owned())
                .collect();
            let is_integer = !number.is_f64();
            let walk = ExactWalk {
                root: &self.schema,
                is_integer,
            };
            if let Some(keyword) = walk.compares(&self.schema, instance, &path, 0, false) {
                let reason = format!(
                    "the number at '{}' (read as {:e}) is past 2^52, where a float cannot hold every number, and the schema compares it exactly (`{keyword}`)",
                    crate::json::pointer::caller_path(instance, &pointer),
                    number.as_f64().unwrap_or_default()
                );
                if let Judgement::Valid = verdict {
                    return Judgement::Unchecked(reason);
                }
                compared.push((pointer, reason));
            }
        }
        // Refused: for want of exactness only when every error is at such a number, or around
        // it from a keyword that judges what is inside (`not`, `oneOf`, `enum`, `uniqueItems`,
        // ...); any other error stands.
        let Some((_, reason)) = compared.first() else {
            return verdict;
        };
        let around_a_rounded_number = |error: &jsonschema::ValidationError<'_>| {
            let at = error.instance_path().to_string();
            // An `if` that compares the number decides whether `then` or `else` apply, and
            // with them what was evaluated: any error of theirs, or of `unevaluated*`, may be
            // the rounding's.
            let schema_path = error.schema_path().to_string();
            let conditional = ["/then/", "/else/"]
                .iter()
                .any(|step| schema_path.contains(step))
                || matches!(
                    error.kind(),
                    ValidationErrorKind::UnevaluatedProperties { .. }
                        | ValidationErrorKind::UnevaluatedItems { .. }
                );
            let place = match rounding_may_decide(error.kind()) {
                Some(place) => place,
                None if conditional => Place::AtOrAround,
                None => return false,
            };
            compared.iter().any(|(pointer, _)| {
                pointer == &at
                    || (place == Place::AtOrAround && pointer.starts_with(&format!("{at}/")))
            })
        };
        // Too deep to list the errors (see [`STEPS_DETAILED`]): whether the rounding decided
        // cannot be told, so the value is not judged.
        if steps > STEPS_DETAILED
            || self
                .engine
                .iter_errors(instance)
                .all(|e| around_a_rounded_number(&e))
        {
            return Judgement::Unchecked(reason.clone());
        }
        verdict
    }

    /// Validate any value; messages say `value 'a.b'`.
    pub fn validate(&self, instance: &Value) -> Result<(), ValidationErrors> {
        self.validate_as(instance, Subject::Value)
    }

    /// Validate, naming values as `subject` does in messages.
    #[inline]
    pub fn validate_as(&self, instance: &Value, subject: Subject) -> Result<(), ValidationErrors> {
        self.validate_first(instance, subject, usize::MAX)
    }

    /// Validate a value read from JSON text, which [holds a lone surrogate
    /// escape](crate::json::has_lone_surrogate) when `lone_surrogates` says so: then it
    /// "could not be checked" where [`SchemaValidator::lone_surrogates_unchecked`] says why.
    pub fn validate_read(
        &self,
        instance: &Value,
        subject: Subject,
        lone_surrogates: bool,
    ) -> Result<(), ValidationErrors> {
        // (The reason is only written when it is given: most values hold no lone surrogate.)
        match lone_surrogates
            .then(|| self.lone_surrogates_unchecked())
            .flatten()
        {
            Some(reason) => Err(unchecked(subject, &reason)),
            None => self.validate_as(instance, subject),
        }
    }

    /// Validate a value read from the JSON `text` (the text of this value alone), judging every
    /// number as the text states it: `9007199254740992.0` equals `9007199254740992`, `1e400` is
    /// more than the largest float, `0.10000000000000000001` is not `0.1`. A lone surrogate
    /// escape in the text is treated as [`SchemaValidator::validate_read`] treats it.
    pub fn validate_text(
        &self,
        instance: &Value,
        text: &str,
        subject: Subject,
    ) -> Result<(), ValidationErrors> {
        if crate::json::has_lone_surrogate(text) {
            if let Some(reason) = self.lone_surrogates_unchecked() {
                return Err(unchecked(subject, &reason));
            }
        }
        if !self.compares_numbers {
            return self.validate_as(instance, subject);
        }
        let inexact = crate::json::number::numbers_read_inexactly(text);
        self.validate_stated(instance, inexact, subject)
    }

    /// Validate a value as [`SchemaValidator::validate_text`] validates it when read from the
    /// text `notes` tell of (a host value built without text: see [`crate::json::host`]).
    pub fn validate_noted(
        &self,
        instance: &Value,
        notes: &TextNotes,
        subject: Subject,
    ) -> Result<(), ValidationErrors> {
        if notes.lone_surrogates {
            if let Some(reason) = self.lone_surrogates_unchecked() {
                return Err(unchecked(subject, &reason));
            }
        }
        if !self.compares_numbers {
            return self.validate_as(instance, subject);
        }
        self.validate_stated(instance, notes.inexact.clone(), subject)
    }

    /// Validate, judging the numbers of `inexact` (by JSON Pointer) as stated there.
    fn validate_stated(
        &self,
        instance: &Value,
        inexact: Vec<(String, crate::json::number::Decimal)>,
        subject: Subject,
    ) -> Result<(), ValidationErrors> {
        if inexact.is_empty() && self.stated.is_empty() && !self.engine_may_misjudge(instance) {
            return self.validate_as(instance, subject);
        }
        let Some(engine) = self.exact_engine() else {
            return self.validate_as(instance, subject);
        };
        let Some(steps) = self.recursion(instance) else {
            return Err(too_deep(subject));
        };
        // The numbers held inexactly, by the address of their `Value` in `instance`.
        let mut stated = HashMap::new();
        let mut pointers = HashMap::new();
        for (pointer, decimal) in inexact {
            if let Some(number) = instance.pointer(&pointer).filter(|v| v.is_number()) {
                let address = number as *const Value as usize;
                stated.insert(address, decimal);
                pointers.insert(address, pointer);
            }
        }
        with_stack_for(steps, || {
            let (verdict, unreadable) = exact::with_stated(stated, || {
                UNFETCHED_REACHED.with(|reached| reached.borrow_mut().take());
                let valid = engine.is_valid(instance);
                if let Some(reference) = UNFETCHED_REACHED.with(|reached| reached.borrow_mut().take()) {
                    return Err(unchecked(
                        subject,
                        &format!("the schema refers to {reference}, which is never fetched"),
                    ));
                }
                if valid {
                    Ok(())
                } else if steps > STEPS_DETAILED {
                    Err(too_deep_to_place(subject))
                } else {
                    Err(self.collect_errors_of(engine, instance, subject, usize::MAX))
                }
            });
            match unreadable.and_then(|address| pointers.get(&address)) {
                Some(pointer) => Err(unchecked(
                    subject,
                    &format!(
                        "the number at '{}' has a power of ten past 10^(2^60), and `uniqueItems` compares it with the other items, where toolschema cannot tell two such numbers apart",
                        crate::json::pointer::caller_path(instance, pointer)
                    ),
                )),
                None => verdict,
            }
        })
        .unwrap_or_else(|| {
            Err(unchecked(
                subject,
                "no thread could be started to check it on",
            ))
        })
    }

    /// Whether the engine, which reads numbers as 64-bit integers and floats, may judge a
    /// number of `instance` otherwise than its decimal: one past 2^52 (a float there is
    /// compared by its binary value, not the decimal it is written as), or any number where the
    /// schema has a `multipleOf` (divided with floats).
    fn engine_may_misjudge(&self, instance: &Value) -> bool {
        let mut stack = vec![instance];
        while let Some(value) = stack.pop() {
            match value {
                Value::Number(n)
                    if self.has_multiple_of
                        || n.as_f64().is_some_and(|f| f.abs() >= EXACT_FLOATS) =>
                {
                    return true;
                }
                Value::Object(map) => stack.extend(map.values()),
                Value::Array(items) => stack.extend(items),
                _ => {}
            }
        }
        false
    }

    /// The engine that judges numbers exactly (see [`exact`]); `None` if it could not be built
    /// (the schema compiled, so this is not expected): then values are judged as read.
    fn exact_engine(&self) -> Option<&jsonschema::Validator> {
        if !self.stated.is_empty() {
            return Some(&self.engine);
        }
        self.exact_engine
            .get_or_init(|| {
                let for_engine = match with_ecma_patterns(&self.schema) {
                    Some((rewritten, _)) => std::borrow::Cow::Owned(rewritten),
                    None => std::borrow::Cow::Borrowed(&self.schema),
                };
                self.recipe.build(&for_engine, Some(&self.stated)).ok()
            })
            .as_ref()
    }

    /// Validate, rendering at most the first `limit` errors the engine reports (a 100,000-item
    /// array whose every item is wrong has as many; a caller that shows a few need not render
    /// them all).
    #[inline]
    pub fn validate_first(
        &self,
        instance: &Value,
        subject: Subject,
        limit: usize,
    ) -> Result<(), ValidationErrors> {
        let Some(steps) = self.recursion(instance) else {
            return Err(too_deep(subject));
        };
        with_stack_for(steps, || match self.judge(instance, steps) {
            Judgement::Valid => Ok(()),
            Judgement::Invalid | Judgement::InvalidExactly if steps > STEPS_DETAILED => {
                Err(too_deep_to_place(subject))
            }
            Judgement::Invalid => Err(self.collect_errors(instance, subject, limit)),
            Judgement::InvalidExactly => match self.exact_engine() {
                Some(engine) => Err(self.collect_errors_of(engine, instance, subject, limit)),
                None => Err(self.collect_errors(instance, subject, limit)),
            },
            Judgement::Unchecked(reason) => Err(unchecked(subject, &reason)),
        })
        .unwrap_or_else(|| {
            Err(unchecked(
                subject,
                "no thread could be started to check it on",
            ))
        })
    }

    /// Top-level property names of `instance` (an object) that the schema does not declare,
    /// as `unexpected argument 'x'` errors with a did-you-mean. Nothing when the schema itself
    /// rules on undeclared names (`additionalProperties` or `unevaluatedProperties` at the
    /// root, or `patternProperties`): the validation reports those.
    ///
    /// An open schema (no such rule) accepts any name; this is for callers that want to refuse
    /// names a model invented even so.
    pub fn undeclared_properties(
        &self,
        instance: &Value,
        subject: Subject,
    ) -> Vec<ValidationError> {
        let (Some(declared), Some(object)) = (&self.declared, instance.as_object()) else {
            return Vec::new();
        };
        let renderer = messages::Renderer {
            instance,
            schema: &self.schema,
            patterns: &self.patterns,
            stated: &self.stated,
            subject,
            suggestions: std::cell::Cell::new(0),
        };
        let names: Vec<&str> = object
            .keys()
            .map(String::as_str)
            .filter(|name| !declared.contains(*name))
            .collect();
        let mut declared: Vec<String> = declared.iter().cloned().collect();
        declared.sort();
        let mut errors = Vec::new();
        renderer.unexpected(&mut errors, "", &names, &declared, "additionalProperties");
        errors
    }

    /// The slow path: the errors, rendered for a model.
    #[cold]
    #[inline(never)]
    fn collect_errors(&self, instance: &Value, subject: Subject, limit: usize) -> ValidationErrors {
        self.collect_errors_of(&self.engine, instance, subject, limit)
    }

    /// The errors `engine` finds, rendered for a model.
    #[cold]
    #[inline(never)]
    fn collect_errors_of(
        &self,
        engine: &jsonschema::Validator,
        instance: &Value,
        subject: Subject,
        limit: usize,
    ) -> ValidationErrors {
        let renderer = messages::Renderer {
            instance,
            schema: &self.schema,
            patterns: &self.patterns,
            stated: &self.stated,
            subject,
            suggestions: std::cell::Cell::new(0),
        };
        let mut errors = Vec::new();
        for error in engine.iter_errors(instance).take(limit) {
            renderer.render(&error, &mut errors);
        }
        dedup_in_order(&mut errors);
        // Missing arguments first, unexpected ones last, the rest in the schema's order.
        errors.sort_by_key(|e| match e.keyword.as_str() {
            "required" => 0,
            "additionalProperties" | "unevaluatedProperties" => 2,
            _ => 1,
        });
        if errors.is_empty() {
            // The engine found the value invalid; never report that as success.
            errors.push(ValidationError {
                path: String::new(),
                message: format!("{} does not match the schema", subject.root()),
                keyword: String::new(),
            });
        }
        ValidationErrors(errors)
    }
}

/// What the engine made of a value.
enum Judgement {
    Valid,
    Invalid,
    /// Found not to fit by the engine that compares numbers exactly, which then says why.
    InvalidExactly,
    /// It could not be judged, for this reason.
    Unchecked(String),
}

/// Recursion steps (see [`SchemaValidator::recursion`]) the engine may take on the caller's
/// thread, which may have 2 MiB of stack: collecting errors overflowed 2 MiB at 2,000 to 4,000
/// steps in a release build (0.5 to 1 KiB a step), and a debug build's frames are larger. Past
/// this it runs on a thread with a large stack; the most a compiled schema allows is 129 levels
/// of 65 steps.
const STEPS_ON_CALLERS_STACK: usize = 256;

/// Recursion steps past which the errors of an invalid value are not collected one by one: the
/// engine's errors repeat their path at every step, in memory that grows with its square (a
/// value 127 levels deep, through 25 subschemas at each level: 512 MB).
const STEPS_DETAILED: usize = 512;

/// Run `work` (the engine on a value of `steps` steps) on the caller's thread when its stack is
/// enough, else on a thread with a large one; `None` when no thread could be started.
#[inline]
fn with_stack_for<T: Send>(steps: usize, work: impl FnOnce() -> T + Send) -> Option<T> {
    if steps <= STEPS_ON_CALLERS_STACK {
        Some(work())
    } else {
        crate::json::on_large_stack("validation", work)
    }
}

#[cold]
fn too_deep_to_place(subject: Subject) -> ValidationErrors {
    ValidationErrors(vec![ValidationError {
        path: String::new(),
        message: format!(
            "the schema refuses the {}: too deep, through subschemas applied in a row at each \
             level, for toolschema to say where",
            subject.root()
        ),
        keyword: String::new(),
    }])
}

#[cold]
fn unchecked(subject: Subject, reason: &str) -> ValidationErrors {
    ValidationErrors(vec![ValidationError {
        path: String::new(),
        message: format!("{} could not be checked: {reason}", subject.root()),
        keyword: UNCHECKED_KEYWORD.into(),
    }])
}

/// Where an error may have been decided by a number read with rounding.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Place {
    /// At the number itself.
    At,
    /// At the number, or at a value holding it (a keyword that judges what is inside).
    AtOrAround,
}

/// Whether an error of this kind may be the rounding's, and where: a `multipleOf`, or a bound
/// past 2^52, at the number; a combinator whose branches may compare it (`not`, `oneOf`,
/// `anyOf`), a `uniqueItems` or `contains`, or a `const` or `enum` holding a number past 2^52, at
/// it or around it. Any other error (a type, a small bound, a required property) is decided the
/// same whatever the rounding: a float past 2^52 is a whole number, and rounding never carries
/// it across a bound below 2^52.
fn rounding_may_decide(kind: &ValidationErrorKind) -> Option<Place> {
    use ValidationErrorKind as K;
    match kind {
        // The exact engine's (a schema with stated numbers): any of its keywords may compare
        // the number.
        kind if exact::is_exact_error(kind) => Some(Place::AtOrAround),
        K::MultipleOf { .. } => Some(Place::At),
        K::Maximum { limit }
        | K::Minimum { limit }
        | K::ExclusiveMaximum { limit }
        | K::ExclusiveMinimum { limit } => holds_large_number(limit).then_some(Place::At),
        K::Constant { expected_value } => {
            holds_large_number(expected_value).then_some(Place::AtOrAround)
        }
        K::Enum { options } => holds_large_number(options).then_some(Place::AtOrAround),
        K::Not { .. }
        | K::OneOfNotValid { .. }
        | K::OneOfMultipleValid { .. }
        | K::AnyOf { .. }
        | K::UniqueItems
        | K::Contains => Some(Place::AtOrAround),
        _ => None,
    }
}

/// 2^52: from there up, a float holds no fraction (`4503599627370499.5` reads as
/// `4503599627370500`), and from 2^53 up not every integer has a float of its own
/// (`9007199254740993` as a float reads as `9007199254740992`).
const EXACT_FLOATS: f64 = 4_503_599_627_370_496.0;

/// 2^53: the engine divides integers exactly only by a `multipleOf` up to this; past it, as
/// floats.
const EXACT_DIVISOR: f64 = 9_007_199_254_740_992.0;

/// Where a schema compares numbers exactly (see [`exact_number_keyword`]).
#[derive(Debug, Clone)]
struct ExactNumbers {
    /// Whether integers past 2^52 are compared as floats too: a `multipleOf` that is not an
    /// integer divides them as floats.
    integers_too: bool,
}

/// Whether `schema` anywhere compares numbers so exactly that a number read with rounding
/// could be judged wrongly: `multipleOf`, an `integer` type, `uniqueItems`, or a bound, `const`
/// or `enum` holding a number past 2^52. A filter, computed once: most schemas have none, and then no
/// value is looked at; otherwise [`ExactWalk`] decides for each such number of a value whether
/// one of these keywords applies to it.
///
/// Numbers are read as 64-bit integers when they are integers that fit, and otherwise as
/// floats, rounded (a number past the largest float is read as the largest). The engine
/// compares those exactly, so a float past 2^52 (which holds no fraction) can be judged wrongly
/// by these keywords, and an integer past 2^52 by a `multipleOf` that is not whole. A float
/// below 2^52 written with more digits than a float holds (`1.00000000000000000001`) is rounded
/// as every reader of 64-bit floats rounds it, and judged as read.
fn exact_number_keyword(schema: &Value) -> Option<ExactNumbers> {
    let mut any = false;
    let mut integers_too = false;
    let mut stack = vec![schema];
    while let Some(value) = stack.pop() {
        match value {
            Value::Object(map) => {
                for (key, member) in map {
                    if key == "multipleOf"
                        && member
                            .as_f64()
                            .is_some_and(|m| m.fract() != 0.0 || m.abs() > EXACT_DIVISOR)
                        // (2^53 + 1 reads as the float 2^53.)
                        || member.as_u64().is_some_and(|m| m > 1 << 53)
                    {
                        integers_too = true;
                    }
                    let exact = match key.as_str() {
                        "multipleOf" => true,
                        "type" => match member {
                            Value::String(t) => t == "integer",
                            Value::Array(types) => types.iter().any(|t| t == "integer"),
                            _ => false,
                        },
                        "minimum" | "maximum" | "exclusiveMinimum" | "exclusiveMaximum"
                        | "const" | "enum" => holds_large_number(member),
                        "uniqueItems" => member == &Value::Bool(true),
                        _ => false,
                    };
                    any |= exact;
                    stack.push(member);
                }
            }
            Value::Array(items) => stack.extend(items),
            _ => {}
        }
    }
    any.then_some(ExactNumbers { integers_too })
}

/// The numbers of `instance` past 2^52 that may be judged as rounded floats (floats, or with
/// `integers_too` any number), with their JSON Pointers. Values are looked at without building
/// pointers; pointers are built only when one is found.
fn rounded_numbers(instance: &Value, integers_too: bool) -> Vec<(String, &serde_json::Number)> {
    let is_rounded = |value: &Value| match value {
        Value::Number(n) if integers_too || n.is_f64() => {
            n.as_f64().is_some_and(|f| f.abs() >= EXACT_FLOATS)
        }
        _ => false,
    };
    let mut stack = vec![instance];
    let mut any = false;
    while let Some(value) = stack.pop() {
        match value {
            Value::Object(map) => stack.extend(map.values()),
            Value::Array(items) => stack.extend(items),
            value if is_rounded(value) => {
                any = true;
                break;
            }
            _ => {}
        }
    }
    let mut found = Vec::new();
    if !any {
        return found;
    }
    let mut stack = vec![(instance, String::new())];
    while let Some((value, pointer)) = stack.pop() {
        match value {
            Value::Number(n) if is_rounded(value) => found.push((pointer, n)),
            Value::Object(map) => stack.extend(
                map.iter()
                    .map(|(k, v)| (v, crate::json::pointer::push_segment(&pointer, k))),
            ),
            Value::Array(items) => stack.extend(
                items
                    .iter()
                    .enumerate()
                    .map(|(i, v)| (v, format!("{pointer}/{i}"))),
            ),
            _ => {}
        }
    }
    found
}

/// How deep [`ExactWalk`] goes (through `$ref`s and nesting) before it stops and assumes the
/// worst: a keyword that compares exactly may apply.
const EXACT_WALK_LIMIT: usize = 256;

/// Something in `schema` (searched whole, conservatively: a property called `pattern` counts
/// too) that may judge U+FFFD otherwise than a lone surrogate: `pattern` (`\p{C}` holds a
/// surrogate, not U+FFFD), names checked by `patternProperties` or `propertyNames`, `format`
/// when asserted, and any name or string holding U+FFFD (an `enum`, a `const`, a property
/// name). Lengths count either as one character.
fn character_keyword(schema: &Value, formats_asserted: bool) -> Option<&'static str> {
    let mut pending = vec![schema];
    while let Some(value) = pending.pop() {
        match value {
            Value::Object(map) => {
                for (key, value) in map {
                    match key.as_str() {
                        "pattern" => return Some("`pattern`"),
                        "patternProperties" => return Some("`patternProperties`"),
                        "propertyNames" => return Some("`propertyNames`"),
                        "format" if formats_asserted => return Some("`format`"),
                        _ if key.contains(char::REPLACEMENT_CHARACTER) => {
                            return Some("a name holding U+FFFD")
                        }
                        _ => pending.push(value),
                    }
                }
            }
            Value::Array(items) => pending.extend(items),
            Value::String(text) if text.contains(char::REPLACEMENT_CHARACTER) => {
                return Some("a string holding U+FFFD")
            }
            _ => {}
        }
    }
    None
}

/// Finds whether a keyword that compares numbers exactly may apply to one number of a value:
/// walks the schema and the value together along the number's path, into every subschema that
/// may apply there (in-place applicators, local `$ref`s, the member and item keywords; every
/// `patternProperties` entry, whatever its pattern). What it cannot follow (another document,
/// an anchor, a dynamic reference, a walk too deep) counts as applying.
struct ExactWalk<'s> {
    root: &'s Value,
    /// Whether the number was read as an integer, exactly: then only a `multipleOf` that is
    /// not whole divides it as a float.
    is_integer: bool,
}

impl ExactWalk<'_> {
    /// The keyword that may compare the number at `path` (below `instance`) exactly, if any.
    fn compares(
        &self,
        schema: &Value,
        instance: &Value,
        path: &[String],
        depth: usize,
        nested: bool,
    ) -> Option<&'static str> {
        if depth > EXACT_WALK_LIMIT {
            return Some("$ref");
        }
        let Value::Object(map) = schema else {
            return None;
        };
        // Inside a resource of its own (a nested `$id`, here or around), a `$ref` resolves
        // against that `$id`, which this walk does not follow: it counts as applying.
        let nested = nested
            || (!std::ptr::eq(schema, self.root)
                && map
                    .get("$id")
                    .and_then(Value::as_str)
                    .is_some_and(|id| !id.starts_with('#')));
        if path.is_empty() {
            if let Some(keyword) = self.compares_here(map) {
                return Some(keyword);
            }
        } else {
            // The number is inside this value, which is compared whole: to a `const` or an
            // `enum` with numbers past 2^52, or item against item.
            if let Some(keyword) = ["const", "enum"]
                .into_iter()
                .find(|key| map.get(*key).is_some_and(holds_large_number))
            {
                return Some(keyword);
            }
            if instance.is_array() && map.get("uniqueItems") == Some(&Value::Bool(true)) {
                return Some("uniqueItems");
            }
        }
        // Subschemas of the same value.
        let in_place = vocabulary::subschemas(map)
            .filter(|sub| sub.in_place)
            .map(|sub| sub.value);
        for sub in in_place {
            if let Some(found) = self.compares(sub, instance, path, depth + 1, nested) {
                return Some(found);
            }
        }
        if map.contains_key("$dynamicRef") || map.contains_key("$recursiveRef") {
            return Some("$dynamicRef");
        }
        if nested && map.contains_key("$ref") {
            return Some("$ref");
        }
        if let Some(reference) = map.get("$ref") {
            let target = reference
                .as_str()
                .and_then(|r| Document::new(self.root).locate_pointer(r).ok())
                .map(|target| (target.value, inside_a_resource(self.root, &target.pointer)));
            match target {
                Some((target, inside)) => {
                    if let Some(found) =
                        self.compares(target, instance, path, depth + 1, nested || inside)
                    {
                        return Some(found);
                    }
                }
                None => return Some("$ref"),
            }
        }
        // Subschemas of the member or item the path goes on to.
        let (step, rest) = path.split_first()?;
        let mut applied: Vec<&Value> = Vec::new();
        let child = match instance {
            Value::Object(members) => {
                applied.extend(map.get("properties").and_then(|p| p.get(step.as_str())));
                if let Some(Value::Object(patterns)) = map.get("patternProperties") {
                    applied.extend(patterns.values());
                }
                applied.extend(
                    ["additionalProperties", "unevaluatedProperties"]
                        .iter()
                        .filter_map(|k| map.get(*k)),
                );
                members.get(step.as_str())?
            }
            Value::Array(items) => {
                let index: usize = step.parse().ok()?;
                match map.get("items") {
                    Some(Value::Array(list)) => applied.extend(list.get(index)),
                    Some(items) => applied.push(items),
                    None => {}
                }
                if let Some(Value::Array(list)) = map.get("prefixItems") {
                    applied.extend(list.get(index));
                }
                applied.extend(
                    ["additionalItems", "contains", "unevaluatedItems"]
                        .iter()
                        .filter_map(|k| map.get(*k)),
                );
                items.get(index)?
            }
            _ => return None,
        };
        applied
            .into_iter()
            .find_map(|sub| self.compares(sub, child, rest, depth + 1, nested))
    }

    /// The keyword of this schema object that compares the number exactly, if any.
    fn compares_here(&self, map: &serde_json::Map<String, Value>) -> Option<&'static str> {
        if let Some(multiple) = map.get("multipleOf").and_then(Value::as_f64) {
            if !self.is_integer || multiple.fract() != 0.0 || multiple.abs() > EXACT_DIVISOR {
                return Some("multipleOf");
            }
        }
        if self.is_integer {
            return None;
        }
        let names_integer = match map.get("type") {
            Some(Value::String(t)) => t == "integer",
            Some(Value::Array(types)) => types.iter().any(|t| t == "integer"),
            _ => false,
        };
        if names_integer {
            return Some("type");
        }
        [
            "minimum",
            "maximum",
            "exclusiveMinimum",
            "exclusiveMaximum",
            "const",
            "enum",
        ]
        .into_iter()
        .find(|key| map.get(*key).is_some_and(holds_large_number))
    }
}

/// Whether the way from `root` to `pointer` passes a schema with an `$id` of its own (the
/// target's included): `$ref`s there resolve against that `$id`.
fn inside_a_resource(root: &Value, pointer: &str) -> bool {
    let mut current = root;
    for step in crate::json::pointer::split_pointer(pointer) {
        let next = match current {
            Value::Object(map) => map.get(step.as_ref()),
            Value::Array(items) => step.parse::<usize>().ok().and_then(|i| items.get(i)),
            _ => None,
        };
        let Some(next) = next else {
            return false;
        };
        if next
            .get("$id")
            .and_then(Value::as_str)
            .is_some_and(|id| !id.starts_with('#'))
        {
            return true;
        }
        current = next;
    }
    false
}

/// Whether `value` holds a number past 2^52.
fn holds_large_number(value: &Value) -> bool {
    match value {
        Value::Number(n) => n.as_f64().is_some_and(|f| f.abs() >= EXACT_FLOATS),
        Value::Array(items) => items.iter().any(holds_large_number),
        Value::Object(map) => map.values().any(holds_large_number),
        _ => false,
    }
}

/// The top-level property names a schema declares (its `properties`, and those of the
/// subschemas applied in place at the root: `allOf`, `anyOf`, `oneOf`, `if`/`then`/`else`, a local
/// `$ref`), or `None` when the root rules on undeclared names itself.
fn declared_top_level(schema: &Value) -> Option<HashSet<String>> {
    let root = schema.as_object()?;
    let rules = [
        "additionalProperties",
        "unevaluatedProperties",
        "patternProperties",
    ];
    if rules.iter().any(|key| root.contains_key(*key)) {
        return None;
    }
    let mut declared = HashSet::new();
    let mut add = |subschema: &Value| {
        if let Some(properties) = subschema.get("properties").and_then(Value::as_object) {
            declared.extend(properties.keys().cloned());
        }
    };
    add(schema);
    for key in ["allOf", "anyOf", "oneOf"] {
        if let Some(Value::Array(branches)) = root.get(key) {
            branches.iter().for_each(&mut add);
        }
    }
    for key in ["if", "then", "else"] {
        if let Some(branch) = root.get(key) {
            add(branch);
        }
    }
    if let Some(target) = root
        .get("$ref")
        .and_then(Value::as_str)
        .and_then(|r| r.strip_prefix('#'))
        .and_then(|pointer| schema.pointer(pointer))
    {
        add(target);
    }
    Some(declared)
}

#[cold]
fn too_deep(subject: Subject) -> ValidationErrors {
    ValidationErrors(vec![ValidationError {
        path: String::new(),
        message: format!(
            "{} nest deeper than {MAX_DEPTH} levels of arrays and objects",
            subject.root()
        ),
        keyword: "depth".into(),
    }])
}

fn dedup_in_order(errors: &mut Vec<ValidationError>) {
    // An input with thousands of errors must not cost their square.
    let mut seen = std::collections::HashSet::with_capacity(errors.len());
    errors.retain(|e| seen.insert((e.path.clone(), e.message.clone())));
}

/// Whether validation can recurse along the instance or compare whole items.
fn can_recurse(schema: &Value) -> bool {
    let mut stack = vec![schema];
    while let Some(v) = stack.pop() {
        match v {
            Value::Object(map) => {
                if ["$ref", "$dynamicRef", "$recursiveRef", "uniqueItems"]
                    .iter()
                    .any(|k| map.contains_key(*k))
                {
                    return true;
                }
                stack.extend(map.values());
            }
            Value::Array(items) => stack.extend(items),
            _ => {}
        }
    }
    false
}

/// What the engine's refusal of a schema means; `patterns` maps the patterns rewritten for the
/// engine to their originals.
fn compile_error(
    error: jsonschema::ValidationError<'static>,
    patterns: &HashMap<String, String>,
) -> SchemaError {
    let original = |pattern: &str| {
        patterns
            .get(pattern)
            .cloned()
            .unwrap_or_else(|| pattern.to_string())
    };
    let pointer = error.instance_path().as_str().to_string();
    match error.kind() {
        ValidationErrorKind::Referencing(reference) => referencing_error(reference),
        // Only with CompileOptions::refuse_unknown_formats; the engine's own words tell a
        // programmer how to configure it.
        ValidationErrorKind::Custom { message, .. } if message.starts_with("Unknown format: '") => {
            let name = message["Unknown format: '".len()..]
                .split('\'')
                .next()
                .unwrap_or_default();
            SchemaError::Invalid {
                pointer,
                message: format!(
                    "format '{name}' is not one toolschema knows, so it cannot be asserted; the formats it asserts are JSON Schema's (date-time, date, time, duration, email, hostname, ipv4, ipv6, uri, uri-reference, iri, uuid, regex, json-pointer, ...)"
                ),
            }
        }
        // A pattern JavaScript reads (the ECMA-262 check passed it) that the engine cannot:
        // "is not a regex" would say the schema is wrong when the validator falls short.
        ValidationErrorKind::Format { format }
            if format == "regex"
                && error.instance().as_str().is_some_and(|pattern| {
                    crate::schema::patterns::ecma_syntax_error(&original(pattern)).is_none()
                }) =>
        {
            let pattern = original(error.instance().as_str().unwrap_or_default());
            let refused = crate::schema::patterns::NotEcmaPattern {
                pointer: pointer.clone(),
                pattern,
                problem: crate::schema::patterns::PatternProblem::BeyondEngine(
                    "the engine refuses it".into(),
                ),
            };
            SchemaError::Invalid {
                pointer,
                message: refused.to_string(),
            }
        }
        _ => SchemaError::Invalid {
            pointer,
            message: error.masked_with("the value").to_string(),
        },
    }
}

fn referencing_error(error: &jsonschema::ReferencingError) -> SchemaError {
    use jsonschema::ReferencingError as E;
    match error {
        E::Unretrievable { uri, .. } => SchemaError::ExternalRef { uri: uri.clone() },
        E::PointerToNowhere { pointer } => SchemaError::UnresolvedRef {
            reference: format!("#{pointer}"),
        },
        E::NoSuchAnchor { anchor } | E::InvalidAnchor { anchor } => SchemaError::UnresolvedRef {
            reference: format!("#{anchor}"),
        },
        other => SchemaError::Invalid {
            pointer: String::new(),
            message: format!("a $ref cannot be followed: {other}"),
        },
    }
}

/// Why a tool's schemas could not be compiled.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("tool '{tool}': {field}: {error}")]
pub struct CompileError {
    /// The tool's name.
    pub tool: String,
    /// `inputSchema` or `outputSchema`.
    pub field: &'static str,
    /// What is wrong with it.
    pub error: SchemaError,
}

/// A tool with its schemas compiled: validate arguments and structured results many times.
#[derive(Debug)]
pub struct CompiledTool {
    name: String,
    input: SchemaValidator,
    output: Option<SchemaValidator>,
}

impl CompiledTool {
    /// Compile a tool's `inputSchema` (any accepted shape) and `outputSchema`, their numbers
    /// as the text the tool was read from states them, if it was (see
    /// [`Tool::with_stated_numbers`]).
    pub fn new(tool: &Tool, options: &CompileOptions) -> Result<Self, CompileError> {
        let input = Value::Object(tool.input_schema().clone());
        let output = tool.output_schema().map(|s| Value::Object(s.clone()));
        Self::compile(
            tool.name(),
            &input,
            output.as_ref(),
            tool.stated_numbers(),
            options,
        )
    }

    /// Compile the schemas of a tool read from JSON text, as [`CompiledTool::from_schemas`]
    /// does, comparing their numbers as the text states them: `stated` holds those of the
    /// tool's text (pointers from the tool object: `/inputSchema/...`) that the values hold
    /// otherwise (see [`SchemaValidator::read_with_options`]).
    pub fn read_from_schemas(
        name: &str,
        input_schema: &Value,
        output_schema: Option<&Value>,
        stated: &StatedNumbers,
        options: &CompileOptions,
    ) -> Result<Self, CompileError> {
        Self::compile(name, input_schema, output_schema, Some(stated), options)
    }

    /// Compile the schemas of a tool known only by its name, as a server lists it: what the
    /// MCP rules say of the name and the other fields does not matter to validation.
    pub fn from_schemas(
        name: &str,
        input_schema: &Value,
        output_schema: Option<&Value>,
        options: &CompileOptions,
    ) -> Result<Self, CompileError> {
        Self::compile(name, input_schema, output_schema, None, options)
    }

    fn compile(
        name: &str,
        input_schema: &Value,
        output_schema: Option<&Value>,
        stated: Option<&StatedNumbers>,
        options: &CompileOptions,
    ) -> Result<Self, CompileError> {
        let compile = |field: &'static str, schema: &Value| {
            let stated = stated.map(|stated| stated.below(&format!("/{field}")));
            SchemaValidator::compile(schema, stated.as_ref(), options).map_err(|error| {
                CompileError {
                    tool: name.to_string(),
                    field,
                    error,
                }
            })
        };
        let input = compile("inputSchema", input_schema)?;
        let output = match output_schema {
            Some(schema) => Some(compile("outputSchema", schema)?),
            None => None,
        };
        Ok(CompiledTool {
            name: name.to_string(),
            input,
            output,
        })
    }

    /// The tool's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The compiled input schema.
    pub fn input(&self) -> &SchemaValidator {
        &self.input
    }

    /// The compiled output schema, if the tool has one.
    pub fn output(&self) -> Option<&SchemaValidator> {
        self.output.as_ref()
    }

    /// Check `tools/call` arguments. They must be a JSON object; every error is collected.
    #[inline]
    pub fn validate_input(&self, arguments: &Value) -> Result<(), ValidationErrors> {
        self.validate_input_first(arguments, usize::MAX)
    }

    /// Check `tools/call` arguments, rendering at most the first `limit` errors (see
    /// [`SchemaValidator::validate_first`]).
    #[inline]
    pub fn validate_input_first(
        &self,
        arguments: &Value,
        limit: usize,
    ) -> Result<(), ValidationErrors> {
        if !arguments.is_object() {
            return Err(ValidationErrors(vec![ValidationError {
                path: String::new(),
                message: format!(
                    "arguments must be an object (got {})",
                    messages::type_of(arguments)
                ),
                keyword: "type".into(),
            }]));
        }
        self.input
            .validate_first(arguments, Subject::Arguments, limit)
    }

    /// Check `tools/call` arguments read from JSON text, which [holds a lone surrogate
    /// escape](crate::json::has_lone_surrogate) when `lone_surrogates` says so (see
    /// [`SchemaValidator::validate_read`]).
    pub fn validate_input_read(
        &self,
        arguments: &Value,
        lone_surrogates: bool,
    ) -> Result<(), ValidationErrors> {
        if arguments.is_object() {
            self.input
                .validate_read(arguments, Subject::Arguments, lone_surrogates)
        } else {
            self.validate_input(arguments)
        }
    }

    /// Check `tools/call` arguments read from the JSON `text` (the text of the arguments
    /// alone), judging numbers as the text states them (see [`SchemaValidator::validate_text`]).
    pub fn validate_input_text(
        &self,
        arguments: &Value,
        text: &str,
    ) -> Result<(), ValidationErrors> {
        if arguments.is_object() {
            self.input
                .validate_text(arguments, text, Subject::Arguments)
        } else {
            self.validate_input(arguments)
        }
    }

    /// Check a result's `structuredContent` read from the JSON `text` (the text of the
    /// structured content alone), judging numbers as the text states them (see
    /// [`SchemaValidator::validate_text`]; otherwise as [`CompiledTool::validate_output`]).
    pub fn validate_output_text(
        &self,
        structured_content: Option<&Value>,
        is_error: bool,
        text: &str,
    ) -> Result<(), ValidationErrors> {
        match (&self.output, structured_content) {
            (Some(output), Some(content)) if !is_error => {
                output.validate_text(content, text, Subject::StructuredContent)
            }
            _ => self.validate_output(structured_content, is_error),
        }
    }

    /// Arguments that a server matching names without regard to case (Go's `encoding/json`)
    /// would read as others, at any depth: two names of one object that [fold
    /// alike](crate::text::folds_alike) (`path` beside `PATH`: which one it takes is not the one
    /// checked) unless the schema declares both there, and a name the schema does not declare
    /// for its object that folds like one it does (`PATH` alone, read as the declared `path`
    /// without having been checked as it). One message each, naming the place as a caller
    /// writes it (`opts.Path`, `rows[3].Path`).
    pub fn case_variant_arguments(&self, arguments: &Value) -> Vec<String> {
        case_variants::case_variants(&self.input.schema, arguments)
    }

    /// The top-level arguments the input schema does not declare, as `unexpected argument`
    /// errors (see [`SchemaValidator::undeclared_properties`]); `None` when there are none.
    pub fn undeclared_arguments(&self, arguments: &Value) -> Option<ValidationErrors> {
        let errors = self
            .input
            .undeclared_properties(arguments, Subject::Arguments);
        (!errors.is_empty()).then_some(ValidationErrors(errors))
    }

    /// Check arguments as [`CompiledTool::validate_input_text`] does when their JSON `text` is
    /// given (else as [`CompiledTool::validate_input`]), and with `refuse_undeclared` also refuse
    /// the top-level arguments the schema does not declare
    /// ([`CompiledTool::undeclared_arguments`], after the schema's own errors): what the proxy's
    /// `--unknown-arguments reject` refuses. Arguments that could not be checked stay so.
    pub fn validate_input_declared(
        &self,
        arguments: &Value,
        text: Option<&str>,
        refuse_undeclared: bool,
    ) -> Result<(), ValidationErrors> {
        let verdict = match text {
            Some(text) => self.validate_input_text(arguments, text),
            None => self.validate_input(arguments),
        };
        self.with_undeclared(arguments, verdict, refuse_undeclared)
    }

    /// Check arguments built from a host value as [`CompiledTool::validate_input_declared`]
    /// checks them read from text, with what that text would have told in `notes` (see
    /// [`SchemaValidator::validate_noted`]).
    pub fn validate_input_noted(
        &self,
        arguments: &Value,
        notes: &TextNotes,
        refuse_undeclared: bool,
    ) -> Result<(), ValidationErrors> {
        let verdict = if arguments.is_object() {
            self.input
                .validate_noted(arguments, notes, Subject::Arguments)
        } else {
            self.validate_input(arguments)
        };
        self.with_undeclared(arguments, verdict, refuse_undeclared)
    }

    /// A result's `structuredContent` built from a host value, checked as
    /// [`CompiledTool::validate_output_text`] checks it read from text, with what that text
    /// would have told in `notes`.
    pub fn validate_output_noted(
        &self,
        structured_content: &Value,
        is_error: bool,
        notes: &TextNotes,
    ) -> Result<(), ValidationErrors> {
        match &self.output {
            Some(output) if !is_error => {
                output.validate_noted(structured_content, notes, Subject::StructuredContent)
            }
            _ => self.validate_output(Some(structured_content), is_error),
        }
    }

    /// `verdict` on `arguments`, with their undeclared top-level arguments refused after it
    /// when `refuse_undeclared` says so; arguments that could not be checked stay so.
    fn with_undeclared(
        &self,
        arguments: &Value,
        verdict: Result<(), ValidationErrors>,
        refuse_undeclared: bool,
    ) -> Result<(), ValidationErrors> {
        if !refuse_undeclared || verdict.as_ref().is_err_and(ValidationErrors::is_unchecked) {
            return verdict;
        }
        match (verdict, self.undeclared_arguments(arguments)) {
            (verdict, None) => verdict,
            (Ok(()), Some(undeclared)) => Err(undeclared),
            (Err(mut errors), Some(undeclared)) => {
                errors.0.extend(undeclared.0);
                Err(errors)
            }
        }
    }

    /// Check a result's `structuredContent` against the output schema.
    ///
    /// Passes when the tool has no output schema, and when the result is an error (`isError:
    /// true`): error results are not held to the schema. A missing `structuredContent` where a
    /// schema is declared is an error.
    pub fn validate_output(
        &self,
        structured_content: Option<&Value>,
        is_error: bool,
    ) -> Result<(), ValidationErrors> {
        let Some(output) = &self.output else {
            return Ok(());
        };
        if is_error {
            return Ok(());
        }
        match structured_content {
            Some(content) => output.validate_as(content, Subject::StructuredContent),
            None => Err(ValidationErrors(vec![ValidationError {
                path: String::new(),
                message: "structured content is missing; the tool declares an outputSchema".into(),
                keyword: "outputSchema".into(),
            }])),
        }
    }
}

impl Tool {
    /// Compile this tool's schemas with default options.
    pub fn compile(&self) -> Result<CompiledTool, CompileError> {
        CompiledTool::new(self, &CompileOptions::default())
    }

    /// Compile this tool's schemas.
    pub fn compile_with(&self, options: &CompileOptions) -> Result<CompiledTool, CompileError> {
        CompiledTool::new(self, options)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn schemas_that_could_tell_a_lone_surrogate_from_u_fffd_are_known() {
        let examines = |schema: Value, options: CompileOptions| {
            let validator = SchemaValidator::with_options(&schema, &options).unwrap();
            let what = validator.examines_characters;
            // The reason given names it.
            let reason = validator.lone_surrogates_unchecked();
            assert_eq!(reason.is_some(), what.is_some());
            assert!(reason.is_none_or(|r| r.contains(&format!("({})", what.unwrap()))));
            what
        };
        let plain = CompileOptions::default;
        let cases = [
            (json!({"type": "string", "maxLength": 3}), None),
            (json!({"enum": ["a", "b"], "minLength": 1}), None),
            (json!({"pattern": "^a"}), Some("`pattern`")),
            (
                json!({"items": {"patternProperties": {"^x": {}}}}),
                Some("`patternProperties`"),
            ),
            (
                json!({"$defs": {"k": {"propertyNames": {"maxLength": 2}}}}),
                Some("`propertyNames`"),
            ),
            (
                json!({"const": "x\u{fffd}"}),
                Some("a string holding U+FFFD"),
            ),
            (
                json!({"required": ["\u{fffd}"], "type": "object"}),
                Some("a string holding U+FFFD"),
            ),
            (
                json!({"properties": {"\u{fffd}": {}}}),
                Some("a name holding U+FFFD"),
            ),
            // Counted conservatively: a property that happens to be called `pattern`.
            (json!({"properties": {"pattern": {}}}), Some("`pattern`")),
            // A format only counts where formats are asserted.
            (json!({"format": "hostname"}), None),
        ];
        for (schema, expected) in cases {
            assert_eq!(examines(schema.clone(), plain()), expected, "{schema}");
        }
        assert_eq!(
            examines(
                json!({"format": "hostname"}),
                CompileOptions::default().assert_format(true)
            ),
            Some("`format`")
        );
        // What a registered document holds counts too.
        let registered = CompileOptions::default()
            .register_document("https://example.com/s.json", json!({"pattern": "^a"}));
        assert_eq!(
            examines(json!({"$ref": "https://example.com/s.json"}), registered),
            Some("`pattern`")
        );
    }
}
