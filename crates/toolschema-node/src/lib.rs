//! `require("toolschema")`: the core's validator, lint, fix, adapt and diff for Node.js, as a
//! Node-API module (`toolschema.node`, wrapped by the npm package's `lib/index.js`).
//!
//! Every verdict and message comes from the same core functions the command calls, so a Node
//! program and `toolschema validate` say the same thing about the same JSON. Values cross the
//! boundary as JSON text: the JavaScript layer writes a JS value with `JSON.stringify` (or passes
//! the caller's own text, whose big integers stay exact), and the core reads that text as the
//! command reads a file.
//!
//! Errors cross as a JavaScript `Error` whose message is a JSON object `{"toolschema": CLASS,
//! "message": ..., ...}`; the JavaScript layer turns it into the typed error `CLASS` (see
//! [`Failure`]).

use napi::{Error, Result, Status};
use napi_derive::napi;
use serde_json::{json, Map, Value};
use std::sync::Arc;
use toolschema::adapt::{Profile, RestoreError};
use toolschema::lint::{Applicability, FixError, LintConfig, LintSettings, Linter};
use toolschema::{CompileOptions, CompiledTool, Subject, Tool, ValidationErrors};

/// A typed error for the JavaScript layer: its class (`JSONError`, `CatalogError`,
/// `SchemaError`, ...), its message, and the fields the class carries.
struct Failure {
    fields: Map<String, Value>,
}

impl Failure {
    fn new(class: &str, message: impl Into<String>) -> Failure {
        let mut fields = Map::new();
        fields.insert("toolschema".into(), class.into());
        fields.insert("message".into(), Value::String(message.into()));
        Failure { fields }
    }

    fn with(mut self, name: &str, value: impl Into<Value>) -> Failure {
        self.fields.insert(name.into(), value.into());
        self
    }
}

impl From<Failure> for Error {
    fn from(failure: Failure) -> Error {
        Error::new(Status::GenericFailure, Value::Object(failure.fields))
    }
}

/// `JSONError` (with file, line and column) for text that is not JSON.
fn json_error(error: &toolschema::json::PlacedSyntaxError) -> Failure {
    Failure::new("JSONError", error.to_string())
        .with("file", error.name.as_str())
        .with("line", error.position.line)
        .with("column", error.position.column)
}

/// `CatalogError` (or `JSONError` for text that is not JSON) for a catalog that cannot be read.
fn catalog_error(error: &toolschema::CatalogError) -> Failure {
    let class = match error.kind {
        toolschema::catalog::CatalogErrorKind::Syntax(_) => "JSONError",
        _ => "CatalogError",
    };
    Failure::new(class, error.to_string())
        .with("file", error.file.as_str())
        .with("line", error.position.map(|p| p.line))
        .with("column", error.position.map(|p| p.column))
}

/// The JSON value of `text`, read by the core's reader (`what` names it in errors).
fn parse(what: &str, text: &str) -> std::result::Result<Value, Failure> {
    toolschema::json::parse_named(what, text).map_err(|e| json_error(&e))
}

/// One reason a value does not fit its schema.
#[napi(object)]
pub struct ArgumentError {
    /// Where, as a caller writes it: `rows[3].id`; empty for the whole value.
    pub path: String,
    /// Where, as a JSON Pointer: `/rows/3/id`.
    pub pointer: String,
    /// The JSON Schema keyword that failed (`required`, `maxLength`, ...).
    pub keyword: String,
    /// What is wrong and what would be accepted, as `toolschema validate` prints it.
    pub message: String,
}

/// The verdict on one value: valid, invalid (with its errors), or not checked at all.
#[napi(object)]
pub struct Verdict {
    /// True only when the value was checked and fits; never for a value that could not be
    /// checked.
    pub valid: bool,
    /// Why the value could not be checked (neither valid nor invalid), when it could not.
    pub could_not_be_checked: Option<String>,
    /// The errors, in the order `toolschema validate` prints them.
    pub errors: Vec<ArgumentError>,
}

/// The verdict for `value` from the core's answer: `None` when the value is valid (the
/// JavaScript layer then makes the valid verdict itself: a valid call, the common one, crosses
/// back as `null`, without an object built on this side).
fn verdict_of(
    value: &Value,
    verdict: std::result::Result<(), ValidationErrors>,
) -> Option<Verdict> {
    let errors = verdict.err()?;
    let could_not_be_checked = errors.is_unchecked().then(|| errors.to_string());
    Some(Verdict {
        valid: false,
        could_not_be_checked,
        errors: argument_errors(value, errors),
    })
}

fn argument_errors(value: &Value, errors: ValidationErrors) -> Vec<ArgumentError> {
    errors
        .into_vec()
        .into_iter()
        .map(|e| ArgumentError {
            path: toolschema::json::pointer::caller_path(value, &e.path),
            message: e.message,
            keyword: e.keyword,
            pointer: e.path,
        })
        .collect()
}

/// A tool's schemas compiled once (made by `NativeCatalog.validator`).
#[napi]
pub struct NativeValidator {
    compiled: CompiledTool,
    refuse_undeclared: bool,
}

#[napi]
impl NativeValidator {
    /// The tool's name.
    #[napi(getter)]
    pub fn name(&self) -> String {
        self.compiled.name().to_string()
    }

    /// Check a call's arguments given as JSON text: `null` when they are valid.
    #[napi]
    pub fn validate(&self, text: String) -> Result<Option<Verdict>> {
        let value = parse("arguments", &text)?;
        let verdict =
            self.compiled
                .validate_input_declared(&value, Some(&text), self.refuse_undeclared);
        Ok(verdict_of(&value, verdict))
    }

    /// Check a result's structured content (JSON text; `None` when the result has none)
    /// against the tool's output schema; an error result always passes. `null` when it fits.
    #[napi]
    pub fn validate_output(&self, text: Option<String>, is_error: bool) -> Result<Option<Verdict>> {
        let Some(text) = text else {
            return Ok(verdict_of(
                &Value::Null,
                self.compiled.validate_output(None, is_error),
            ));
        };
        let value = parse("structured content", &text)?;
        let verdict = self
            .compiled
            .validate_output_text(Some(&value), is_error, &text);
        Ok(verdict_of(&value, verdict))
    }
}

/// A list of MCP tools read from JSON text in any shape the command reads.
#[napi]
pub struct NativeCatalog {
    inner: Arc<toolschema::Catalog>,
    left_out: Vec<toolschema::CatalogError>,
}

impl NativeCatalog {
    /// The tool named `name`, or the error the command gives for it.
    fn require(&self, name: &str) -> std::result::Result<&Tool, Failure> {
        if let Some(error) = self.left_out.iter().find(|e| e.tool_name() == Some(name)) {
            return Err(catalog_error(error));
        }
        self.inner.require(name).map_err(|e| {
            Failure::new("UnknownToolError", format!("{}: {e}", self.inner.file()))
                .with("tool", e.name.as_str())
                .with("suggestion", e.suggestion.as_deref())
        })
    }

    /// Every tool, or the first tool left out: what the command's strict reading refuses.
    fn strict(&self) -> std::result::Result<&toolschema::Catalog, Failure> {
        match self.left_out.first() {
            Some(error) => Err(catalog_error(error)),
            None => Ok(&self.inner),
        }
    }
}

#[napi]
impl NativeCatalog {
    /// Read a catalog from JSON text; `file` names it in errors. Tools that break a rule are
    /// left out (see `leftOut`), as `toolschema validate` leaves them out.
    #[napi(factory)]
    pub fn read(text: String, file: String) -> Result<NativeCatalog> {
        let (inner, left_out) =
            toolschema::Catalog::from_json_lenient(&file, &text).map_err(|e| catalog_error(&e))?;
        Ok(NativeCatalog {
            inner: Arc::new(inner),
            left_out,
        })
    }

    /// The name the catalog is reported under.
    #[napi(getter)]
    pub fn file(&self) -> String {
        self.inner.file().to_string()
    }

    /// The tools' names, in file order.
    #[napi(getter)]
    pub fn names(&self) -> Vec<String> {
        self.inner.tools().map(|t| t.name().to_string()).collect()
    }

    /// Why each tool left out was left out, one message each (file, line and column first).
    #[napi(getter)]
    pub fn left_out(&self) -> Vec<String> {
        self.left_out.iter().map(ToString::to_string).collect()
    }

    /// Every tool's definition, as the JSON text of an array.
    #[napi]
    pub fn tools_json(&self) -> String {
        Value::Array(self.inner.tools().map(Tool::to_value).collect()).to_string()
    }

    /// The definition of the tool `name` as JSON text.
    #[napi]
    pub fn tool_json(&self, name: String) -> Result<String> {
        Ok(self.require(&name)?.to_value().to_string())
    }

    /// The tool `name` compiled once. `refuse_undeclared`: as `--unknown-arguments reject`;
    /// `assert_format`: as `--assert-format`.
    #[napi]
    pub fn validator(
        &self,
        name: String,
        refuse_undeclared: bool,
        assert_format: bool,
    ) -> Result<NativeValidator> {
        let tool = self.require(&name)?;
        let options = CompileOptions::new()
            .assert_format(assert_format)
            .refuse_unknown_formats(assert_format);
        let compiled = tool.compile_with(&options).map_err(|e| {
            Failure::new("SchemaError", format!("{}: {e}", self.inner.file())).with("tool", name)
        })?;
        Ok(NativeValidator {
            compiled,
            refuse_undeclared,
        })
    }
}

/// Any JSON schema compiled once (`toolschema validate --schema`): messages say `value`, or
/// `structured content` for a tool result's.
#[napi]
pub struct NativeSchema {
    validator: toolschema::SchemaValidator,
    subject: Subject,
}

#[napi]
impl NativeSchema {
    /// Compile the schema of JSON text `schema`. `dialect` (`2020-12` or `draft-07`) overrides
    /// its `$schema`; `documents` (the JSON text of an object of URI to document) holds what a
    /// `$ref` may name: nothing is fetched. `subject`: `value` or `structured content`.
    #[napi(factory)]
    pub fn compile(
        schema: String,
        dialect: Option<String>,
        documents: Option<String>,
        subject: Option<String>,
    ) -> Result<NativeSchema> {
        let subject = match subject.as_deref() {
            None | Some("value") => Subject::Value,
            Some("structured content") => Subject::StructuredContent,
            Some(other) => {
                return Err(Failure::new(
                    "UsageError",
                    format!("subject '{other}': use 'value' or 'structured content'"),
                )
                .into())
            }
        };
        let value = parse("schema", &schema)?;
        let mut options = CompileOptions::new();
        if let Some(dialect) = dialect {
            let dialect: toolschema::Dialect = dialect
                .parse()
                .map_err(|e: toolschema::SchemaError| Failure::new("UsageError", e.to_string()))?;
            options = options.dialect(dialect);
        }
        if let Some(documents) = documents {
            let Value::Object(documents) = parse("documents", &documents)? else {
                return Err(Failure::new(
                    "UsageError",
                    "documents: give an object of URI to JSON document",
                )
                .into());
            };
            for (uri, document) in documents {
                options = options.register_document(uri, document);
            }
        }
        let stated = toolschema::json::number::StatedNumbers::read(&schema);
        let validator = toolschema::SchemaValidator::read_with_options(&value, &stated, &options)
            .map_err(|e| Failure::new("SchemaError", format!("schema: {e}")))?;
        Ok(NativeSchema { validator, subject })
    }

    /// Check a value given as JSON text: `null` when it is valid.
    #[napi]
    pub fn validate(&self, text: String) -> Result<Option<Verdict>> {
        let value = parse("value", &text)?;
        let verdict = self.validator.validate_text(&value, &text, self.subject);
        Ok(verdict_of(&value, verdict))
    }
}

/// One finding of `lint`.
#[napi(object)]
pub struct Diagnostic {
    /// The catalog's name.
    pub file: String,
    /// The rule's code, like `SCH-001`.
    pub code: String,
    /// `critical`, `warning` or `info`.
    pub severity: String,
    /// What is wrong, as `toolschema lint` prints it.
    pub message: String,
    /// The tool it is about, when it is about one.
    pub tool: Option<String>,
    /// JSON Pointer into the catalog.
    pub pointer: String,
    /// 1-based line in the catalog's text.
    pub line: u32,
    /// 1-based column, in characters.
    pub column: u32,
    /// `safe` or `unsafe` when a fix exists, else absent.
    pub fix: Option<String>,
}

/// The linter for the rules selected, as the command's flags select them.
fn linter(
    select: Option<Vec<String>>,
    ignore: Option<Vec<String>>,
    target: Option<Vec<String>>,
) -> std::result::Result<Linter, Failure> {
    let config = LintConfig {
        select,
        ignore: ignore.unwrap_or_default(),
        target,
        ..LintConfig::default()
    };
    let settings = LintSettings::resolve([("options", &config)])
        .map_err(|e| Failure::new("UsageError", e.to_string()))?;
    Ok(Linter::from_settings(&settings))
}

/// Lint the catalog of JSON text `text` (`file` names it) with the rules `select` names (the
/// default set when absent), less those `ignore` names, plus the compatibility rules of the
/// providers `target` names. No `toolschema.toml` is read.
#[napi]
pub fn lint(
    text: String,
    file: String,
    select: Option<Vec<String>>,
    ignore: Option<Vec<String>>,
    target: Option<Vec<String>>,
) -> Result<Vec<Diagnostic>> {
    let linter = linter(select, ignore, target)?;
    let report = linter.lint(&file, &text).map_err(|e| catalog_error(&e))?;
    Ok(report
        .diagnostics
        .iter()
        .map(|d| Diagnostic {
            file: file.clone(),
            code: d.code().to_string(),
            severity: d.severity().as_str().to_string(),
            message: d.message.clone(),
            tool: d.tool.as_deref().map(str::to_string),
            pointer: d.pointer.clone(),
            line: d.position.line,
            column: d.position.column,
            fix: d
                .fix_applicability()
                .map(Applicability::as_str)
                .map(str::to_string),
        })
        .collect())
}

/// The catalog text with the fixes applied (`unsafe_fixes` also applies the unsafe ones), every
/// other byte kept; as `toolschema lint --fix`.
#[napi]
pub fn fix(
    text: String,
    file: String,
    unsafe_fixes: bool,
    select: Option<Vec<String>>,
    ignore: Option<Vec<String>>,
    target: Option<Vec<String>>,
) -> Result<String> {
    let linter = linter(select, ignore, target)?;
    match linter.fix(&file, &text, unsafe_fixes) {
        Ok(fixed) => Ok(fixed.text),
        Err(FixError::Catalog(e)) => Err(catalog_error(&e).into()),
        Err(e) => Err(Failure::new("Error", e.to_string()).into()),
    }
}

/// A catalog's tools written for a model provider (made by `adapt`).
#[napi]
pub struct NativeAdapted {
    catalog: Arc<toolschema::Catalog>,
    profile: &'static Profile,
    output: String,
    failures: Vec<String>,
}

#[napi]
impl NativeAdapted {
    /// Everything, as `toolschema adapt` prints it, as JSON text.
    #[napi(getter)]
    pub fn json(&self) -> String {
        self.output.clone()
    }

    /// The tools that could not be adapted, one message each.
    #[napi(getter)]
    pub fn failures(&self) -> Vec<String> {
        self.failures.clone()
    }

    /// Map a model's call back to the server's tool: the JSON text of `{name, arguments}`, the
    /// arguments (JSON text) in the original schema's form.
    #[napi]
    pub fn restore(&self, tool: String, arguments: String) -> Result<String> {
        let value = parse("arguments", &arguments)?;
        let adaptation = toolschema::adapt::adapt(self.profile, self.catalog.tools());
        let file = self.catalog.file();
        match adaptation.restore(&tool, &value) {
            Ok(restored) => {
                Ok(json!({"name": restored.name, "arguments": restored.arguments}).to_string())
            }
            Err(e @ RestoreError::UnknownTool { .. }) => {
                Err(Failure::new("UnknownToolError", format!("{file}: {e}")).into())
            }
            Err(RestoreError::Invalid { errors, tool, .. }) => {
                let message = errors
                    .iter()
                    .map(|e| format!("tool '{tool}': {}", e.message))
                    .collect::<Vec<_>>()
                    .join("\n");
                let list: Vec<Value> = argument_errors(&value, errors)
                    .into_iter()
                    .map(|e| {
                        json!({"path": e.path, "pointer": e.pointer, "keyword": e.keyword,
                               "message": e.message})
                    })
                    .collect();
                Err(Failure::new("InvalidArgumentsError", message)
                    .with("errors", list)
                    .into())
            }
            Err(e) => Err(Failure::new("Error", format!("{file}: {e}")).into()),
        }
    }
}

/// Write a catalog's tools for a model provider (`openai`, `openai-strict`, `anthropic`,
/// `gemini`, `gemini-openapi`); every loss reported (`toolschema adapt`).
#[napi]
pub fn adapt(catalog: &NativeCatalog, target: String) -> Result<NativeAdapted> {
    let profile = toolschema::adapt::profile(&target)
        .map_err(|e| Failure::new("UsageError", e.to_string()))?;
    let inner = catalog.strict()?;
    let adaptation = toolschema::adapt::adapt(profile, inner.tools());
    let failures = adaptation
        .failures()
        .iter()
        .map(ToString::to_string)
        .collect();
    Ok(NativeAdapted {
        catalog: Arc::clone(&catalog.inner),
        profile,
        output: adaptation.to_json().to_string(),
        failures,
    })
}

/// Compare two catalogs by meaning (`toolschema diff`): the JSON text of the changes as
/// `toolschema diff --format json` lists them (`before` and `after` null when absent).
#[napi]
pub fn diff(old: &NativeCatalog, new: &NativeCatalog) -> Result<String> {
    let (old, new) = (old.strict()?, new.strict()?);
    let changes =
        toolschema::diff::diff_tools(old.tools().map(Tool::fields), new.tools().map(Tool::fields));
    let list: Vec<Value> = changes.changes.iter().map(|c| c.to_value()).collect();
    Ok(Value::Array(list).to_string())
}

/// The module's version (the workspace's).
#[napi]
pub fn version() -> String {
    env!("CARGO_PKG_VERSION").to_string()
}
