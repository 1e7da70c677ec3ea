//! `import toolschema`: the core's validator, lint, fix, adapt, diff and pins for Python
//! (the extension module `toolschema._toolschema`, wrapped by the `toolschema` package).
//!
//! Every verdict and message comes from the same core functions the command calls, so a Python
//! program and `toolschema validate` say the same thing about the same JSON. The GIL is released
//! while large inputs are validated or linted; nothing is global.

mod convert;
mod errors;

use convert::{json_text_of, parse, to_python, Given};
use errors::{catalog_error, raise, Raise};
use pyo3::prelude::*;
use pyo3::types::PyList;
use serde_json::Value;
use std::sync::Arc;
use toolschema::adapt::{Profile, RestoreError};
use toolschema::lint::{
    Applicability, Diagnostic as CoreDiagnostic, LintConfig, LintSettings, Linter,
};
use toolschema::{CompileOptions, CompiledTool, Subject, Tool, ValidationErrors};

/// Inputs of at least this many bytes are validated or linted with the GIL released: below it,
/// releasing and taking it back costs more than the other threads gain.
const DETACH_BYTES: usize = 16 * 1024;

/// Run `work` with the GIL released when the input is large.
fn maybe_detached<T: Send>(py: Python<'_>, bytes: usize, work: impl FnOnce() -> T + Send) -> T {
    if bytes >= DETACH_BYTES {
        py.detach(work)
    } else {
        work()
    }
}

/// One reason a call's arguments (or a result's structured content) do not fit the schema.
#[pyclass(frozen, module = "toolschema", name = "ArgumentError")]
struct ArgumentError {
    /// Where, as a caller writes it: `rows[3].id`; empty for the whole value.
    #[pyo3(get)]
    path: String,
    /// What is wrong and what would be accepted, as `toolschema validate` prints it.
    #[pyo3(get)]
    message: String,
    /// The JSON Schema keyword that failed (`required`, `maxLength`, ...).
    #[pyo3(get)]
    keyword: String,
    /// Where, as a JSON Pointer: `/rows/3/id`.
    #[pyo3(get)]
    pointer: String,
}

#[pymethods]
impl ArgumentError {
    fn __repr__(&self) -> String {
        format!(
            "ArgumentError(path={:?}, keyword={:?}, message={:?})",
            self.path, self.keyword, self.message
        )
    }

    fn __str__(&self) -> &str {
        &self.message
    }

    fn __eq__(&self, other: &Bound<'_, PyAny>) -> bool {
        other.cast::<ArgumentError>().is_ok_and(|o| {
            let o = o.get();
            (&o.path, &o.message, &o.keyword, &o.pointer)
                == (&self.path, &self.message, &self.keyword, &self.pointer)
        })
    }

    fn __hash__(&self) -> u64 {
        use std::hash::{Hash, Hasher};
        let mut h = std::collections::hash_map::DefaultHasher::new();
        (&self.path, &self.message, &self.keyword, &self.pointer).hash(&mut h);
        h.finish()
    }
}

/// The errors of a verdict as Python objects; a value that could not be checked raises
/// `UncheckedError` (it is neither valid nor invalid).
fn errors_of(
    py: Python<'_>,
    value: &Value,
    verdict: Result<(), ValidationErrors>,
) -> PyResult<Vec<ArgumentError>> {
    let Err(errors) = verdict else {
        return Ok(Vec::new());
    };
    if errors.is_unchecked() {
        return Err(raise(py, "UncheckedError", errors.to_string()));
    }
    Ok(errors
        .into_vec()
        .into_iter()
        .map(|e| ArgumentError {
            path: toolschema::json::pointer::caller_path(value, &e.path),
            message: e.message,
            keyword: e.keyword,
            pointer: e.path,
        })
        .collect())
}

/// A tool's schemas compiled once: validate its calls' arguments and its results many times.
///
/// Made by ``Catalog.validator(name)``. Thread-safe; validation of large arguments releases
/// the GIL.
#[pyclass(frozen, module = "toolschema", name = "Validator")]
struct Validator {
    compiled: CompiledTool,
    refuse_undeclared: bool,
}

impl Validator {
    /// The arguments' value and text, and the verdict on them.
    fn judge(
        &self,
        py: Python<'_>,
        arguments: &Bound<'_, PyAny>,
    ) -> PyResult<(Given, Result<(), ValidationErrors>)> {
        let given = Given::of(py, arguments, "arguments")?;
        let verdict = maybe_detached(py, given.size(), || match &given {
            Given::Text(text, value) => {
                self.compiled
                    .validate_input_declared(value, Some(text), self.refuse_undeclared)
            }
            Given::Built(value, notes, _) => {
                self.compiled
                    .validate_input_noted(value, notes, self.refuse_undeclared)
            }
        });
        Ok((given, verdict))
    }
}

#[pymethods]
impl Validator {
    /// The tool's name.
    #[getter]
    fn name(&self) -> &str {
        self.compiled.name()
    }

    /// Check a call's arguments: a dict (any JSON value: list, str, int, float, bool, None
    /// inside; ints of any size kept exact) or its JSON text as a str or bytes.
    ///
    /// Returns the errors, in the order ``toolschema validate`` prints them; an empty list when
    /// the arguments are valid. Raises ``UncheckedError`` when the arguments could not be
    /// checked at all, ``JSONError`` for text that is not JSON, ``NotJSONError`` for a Python
    /// value that has no JSON form.
    fn validate(
        &self,
        py: Python<'_>,
        arguments: &Bound<'_, PyAny>,
    ) -> PyResult<Vec<ArgumentError>> {
        let (given, verdict) = self.judge(py, arguments)?;
        errors_of(py, given.value(), verdict)
    }

    /// Whether a call's arguments are valid (see ``validate``). Raises ``UncheckedError``
    /// when they could not be checked: that is never valid.
    fn is_valid(&self, py: Python<'_>, arguments: &Bound<'_, PyAny>) -> PyResult<bool> {
        // (No error is rendered for Python: only whether there is one.)
        match self.judge(py, arguments)?.1 {
            Ok(()) => Ok(true),
            Err(errors) if errors.is_unchecked() => {
                Err(raise(py, "UncheckedError", errors.to_string()))
            }
            Err(_) => Ok(false),
        }
    }

    /// Check a result's ``structuredContent`` (``None`` when the result has none) against the
    /// tool's ``outputSchema``. A tool without one, or an error result (``is_error=True``),
    /// always passes; a missing structured content where a schema is declared is an error.
    #[pyo3(signature = (structured_content, is_error = false))]
    fn validate_output(
        &self,
        py: Python<'_>,
        structured_content: &Bound<'_, PyAny>,
        is_error: bool,
    ) -> PyResult<Vec<ArgumentError>> {
        if structured_content.is_none() {
            let verdict = self.compiled.validate_output(None, is_error);
            return errors_of(py, &Value::Null, verdict);
        }
        let given = Given::of(py, structured_content, "structured content")?;
        let verdict = maybe_detached(py, given.size(), || match &given {
            Given::Text(text, value) => {
                self.compiled
                    .validate_output_text(Some(value), is_error, text)
            }
            Given::Built(value, notes, _) => {
                self.compiled.validate_output_noted(value, is_error, notes)
            }
        });
        errors_of(py, given.value(), verdict)
    }

    fn __repr__(&self) -> String {
        format!("<toolschema.Validator for tool {:?}>", self.compiled.name())
    }
}

/// A list of MCP tools, read from a file in any shape the command reads: ``{"tools": [...]}``
/// (a ``tools/list`` result), a JSON-RPC response holding one, a bare list of tools, or one
/// tool.
///
/// A tool that breaks a rule (a bad name, a name used twice) is left out, as
/// ``toolschema validate`` leaves it out; ``left_out`` says which and why, and asking for it
/// raises ``CatalogError``. ``adapt``, ``diff``, ``pin`` and ``verify`` refuse such a catalog,
/// as the command does.
#[pyclass(frozen, module = "toolschema", name = "Catalog")]
struct Catalog {
    inner: Arc<toolschema::Catalog>,
    left_out: Vec<toolschema::CatalogError>,
    text: String,
}

impl Catalog {
    fn read(py: Python<'_>, file: &str, text: String) -> PyResult<Catalog> {
        let (inner, left_out) = maybe_detached(py, text.len(), || {
            toolschema::Catalog::from_json_lenient(file, &text)
        })
        .map_err(|e| catalog_error(py, &e))?;
        Ok(Catalog {
            inner: Arc::new(inner),
            left_out,
            text,
        })
    }

    /// The tool named `name`, or the error the command gives for it.
    fn require(&self, py: Python<'_>, name: &str) -> PyResult<&Tool> {
        if let Some(error) = self.left_out.iter().find(|e| e.tool_name() == Some(name)) {
            return Err(catalog_error(py, error));
        }
        self.inner.require(name).map_err(|e| {
            Raise::new(
                py,
                "UnknownToolError",
                format!("{}: {e}", self.inner.file()),
            )
            .with("name", e.name.as_str())
            .with("suggestion", e.suggestion.as_deref())
            .err()
        })
    }

    /// Every tool, or the first tool left out: what the command's strict reading refuses.
    fn strict(&self, py: Python<'_>) -> PyResult<&toolschema::Catalog> {
        match self.left_out.first() {
            Some(error) => Err(catalog_error(py, error)),
            None => Ok(&self.inner),
        }
    }
}

#[pymethods]
impl Catalog {
    /// Read a catalog from JSON text; ``file`` names it in errors. Raises ``JSONError`` (with
    /// ``line`` and ``column``) for text that is not JSON, ``CatalogError`` for JSON that is
    /// not a catalog.
    #[staticmethod]
    #[pyo3(signature = (text, file = "<input>"))]
    fn from_json(py: Python<'_>, text: &Bound<'_, PyAny>, file: &str) -> PyResult<Catalog> {
        let text = json_text_of(text, file)?;
        Catalog::read(py, file, text)
    }

    /// Read a catalog file (UTF-8 JSON). Raises ``OSError`` when it cannot be read.
    #[staticmethod]
    fn from_file(py: Python<'_>, path: std::path::PathBuf) -> PyResult<Catalog> {
        let name = path.display().to_string();
        let bytes = std::fs::read(&path).map_err(|e| {
            pyo3::exceptions::PyOSError::new_err((
                e.raw_os_error().unwrap_or(0),
                e.to_string(),
                name.clone(),
            ))
        })?;
        let text = String::from_utf8(bytes).map_err(|e| {
            Raise::new(
                py,
                "CatalogError",
                format!(
                    "{name}: not valid UTF-8 (at byte {})",
                    e.utf8_error().valid_up_to()
                ),
            )
            .with("file", name.as_str())
            .err()
        })?;
        Catalog::read(py, &name, text)
    }

    /// A catalog of tool definitions given as Python dicts (as a server's ``tools/list``
    /// lists them).
    #[staticmethod]
    fn from_tools(py: Python<'_>, tools: &Bound<'_, PyAny>) -> PyResult<Catalog> {
        if tools.cast::<PyList>().is_err() && tools.cast::<pyo3::types::PyTuple>().is_err() {
            return Err(raise(
                py,
                "CatalogError",
                "<tools>: give the tools as a list of dicts".into(),
            ));
        }
        let text = json_text_of(tools, "<tools>")?;
        Catalog::read(py, "<tools>", text)
    }

    /// The name the catalog is reported under (its file, ``<input>`` or ``<tools>``).
    #[getter]
    fn file(&self) -> &str {
        self.inner.file()
    }

    /// The tools' names, in file order.
    #[getter]
    fn names(&self) -> Vec<String> {
        self.inner.tools().map(|t| t.name().to_string()).collect()
    }

    /// Why each tool left out was left out, one message each (file, line and column first).
    #[getter]
    fn left_out(&self) -> Vec<String> {
        self.left_out.iter().map(ToString::to_string).collect()
    }

    /// The catalog's JSON text, as read.
    #[getter]
    fn text(&self) -> &str {
        &self.text
    }

    /// The definition of the tool named ``name``, as a dict. Raises ``UnknownToolError`` (with
    /// a did-you-mean) when there is none.
    fn tool<'py>(&self, py: Python<'py>, name: &str) -> PyResult<Bound<'py, PyAny>> {
        to_python(py, &self.require(py, name)?.to_value())
    }

    fn __getitem__<'py>(&self, py: Python<'py>, name: &str) -> PyResult<Bound<'py, PyAny>> {
        self.tool(py, name)
    }

    fn __contains__(&self, name: &str) -> bool {
        self.inner.get(name).is_some()
    }

    fn __len__(&self) -> usize {
        self.inner.len()
    }

    fn __repr__(&self) -> String {
        format!(
            "<toolschema.Catalog {:?}: {} tools>",
            self.inner.file(),
            self.inner.len()
        )
    }

    /// The tool ``name`` compiled once, to validate many calls.
    ///
    /// ``unknown_arguments="reject"`` also refuses top-level arguments the schema does not
    /// declare where it would accept them (as ``--unknown-arguments reject``);
    /// ``assert_format=True`` makes ``format`` an assertion (as ``--assert-format``). Raises
    /// ``UnknownToolError``, ``CatalogError`` for a tool left out, ``SchemaError`` for a schema
    /// that cannot be compiled (a ``$ref`` to a document elsewhere: nothing is fetched).
    #[pyo3(signature = (name, *, unknown_arguments = "allow", assert_format = false))]
    fn validator(
        &self,
        py: Python<'_>,
        name: &str,
        unknown_arguments: &str,
        assert_format: bool,
    ) -> PyResult<Validator> {
        let refuse_undeclared = match unknown_arguments {
            "allow" => false,
            "reject" => true,
            other => {
                return Err(raise(
                    py,
                    "UsageError",
                    format!("unknown_arguments='{other}': use 'allow' or 'reject'"),
                ))
            }
        };
        let tool = self.require(py, name)?;
        let options = CompileOptions::new()
            .assert_format(assert_format)
            .refuse_unknown_formats(assert_format);
        let compiled = tool
            .compile_with(&options)
            .map_err(|e| raise(py, "SchemaError", format!("{}: {e}", self.inner.file())))?;
        Ok(Validator {
            compiled,
            refuse_undeclared,
        })
    }
}

/// A catalog given as a `Catalog`, or as JSON text to read as one.
fn catalog_arg(py: Python<'_>, catalog: &Bound<'_, PyAny>) -> PyResult<Py<Catalog>> {
    if let Ok(catalog) = catalog.cast::<Catalog>() {
        return Ok(catalog.clone().unbind());
    }
    if catalog.cast::<pyo3::types::PyString>().is_ok() {
        return Py::new(py, Catalog::from_json(py, catalog, "<input>")?);
    }
    Py::new(py, Catalog::from_tools(py, catalog)?)
}

/// One finding of ``lint``.
#[pyclass(frozen, module = "toolschema", name = "Diagnostic")]
struct Diagnostic {
    /// The catalog's name.
    #[pyo3(get)]
    file: String,
    /// The rule's code, like ``SCH-001``.
    #[pyo3(get)]
    code: &'static str,
    /// ``critical``, ``warning`` or ``info``.
    #[pyo3(get)]
    severity: &'static str,
    /// What is wrong, as ``toolschema lint`` prints it.
    #[pyo3(get)]
    message: String,
    /// The tool it is about, when it is about one.
    #[pyo3(get)]
    tool: Option<String>,
    /// JSON Pointer into the catalog.
    #[pyo3(get)]
    pointer: String,
    /// 1-based line in the catalog's text.
    #[pyo3(get)]
    line: u32,
    /// 1-based column, in characters.
    #[pyo3(get)]
    column: u32,
    /// ``safe`` or ``unsafe`` when a fix exists (see ``fix``), else ``None``.
    #[pyo3(get)]
    fix: Option<&'static str>,
}

#[pymethods]
impl Diagnostic {
    fn __repr__(&self) -> String {
        format!(
            "Diagnostic({}:{}:{}: {} {})",
            self.file, self.line, self.column, self.code, self.message
        )
    }

    fn __str__(&self) -> String {
        format!(
            "{}:{}:{}: {} {}",
            self.file, self.line, self.column, self.code, self.message
        )
    }
}

impl Diagnostic {
    fn of(file: &str, d: &CoreDiagnostic) -> Diagnostic {
        Diagnostic {
            file: file.to_string(),
            code: d.code(),
            severity: d.severity().as_str(),
            message: d.message.clone(),
            tool: d.tool.as_deref().map(str::to_string),
            pointer: d.pointer.clone(),
            line: d.position.line,
            column: d.position.column,
            fix: d.fix_applicability().map(Applicability::as_str),
        }
    }
}

/// The linter for the rules selected, as the command's flags select them.
fn linter(
    py: Python<'_>,
    select: Option<Vec<String>>,
    ignore: Option<Vec<String>>,
    target: Option<Vec<String>>,
) -> PyResult<Linter> {
    let config = LintConfig {
        select,
        ignore: ignore.unwrap_or_default(),
        target,
        ..LintConfig::default()
    };
    let settings = LintSettings::resolve([("arguments", &config)])
        .map_err(|e| raise(py, "UsageError", e.to_string()))?;
    Ok(Linter::from_settings(&settings))
}

/// Lint a catalog (a ``Catalog``, its JSON text, or a list of tool dicts) with the rules
/// ``select`` names (codes, prefixes, names, ``default``, ``pedantic``, ``ALL``; the default set
/// when ``None``), less those ``ignore`` names, plus the compatibility rules of the providers
/// ``target`` names. No ``toolschema.toml`` is read.
#[pyfunction]
#[pyo3(signature = (catalog, *, select = None, ignore = None, target = None))]
fn lint(
    py: Python<'_>,
    catalog: &Bound<'_, PyAny>,
    select: Option<Vec<String>>,
    ignore: Option<Vec<String>>,
    target: Option<Vec<String>>,
) -> PyResult<Vec<Diagnostic>> {
    let linter = linter(py, select, ignore, target)?;
    let catalog = catalog_arg(py, catalog)?;
    let catalog = catalog.get();
    let file = catalog.inner.file();
    let report = maybe_detached(py, catalog.text.len(), || linter.lint(file, &catalog.text))
        .map_err(|e| catalog_error(py, &e))?;
    Ok(report
        .diagnostics
        .iter()
        .map(|d| Diagnostic::of(file, d))
        .collect())
}

/// The catalog text with the fixes applied (``unsafe=True`` also applies the unsafe ones, which
/// change what callers must send), every other byte kept; as ``toolschema lint --fix``.
#[pyfunction]
#[pyo3(signature = (catalog_text, *, unsafe_fixes = false, select = None, ignore = None, target = None, file = "<input>"))]
#[allow(clippy::too_many_arguments)]
fn fix(
    py: Python<'_>,
    catalog_text: &str,
    unsafe_fixes: bool,
    select: Option<Vec<String>>,
    ignore: Option<Vec<String>>,
    target: Option<Vec<String>>,
    file: &str,
) -> PyResult<String> {
    let linter = linter(py, select, ignore, target)?;
    let fixed = maybe_detached(py, catalog_text.len(), || {
        linter.fix(file, catalog_text, unsafe_fixes)
    });
    match fixed {
        Ok(fixed) => Ok(fixed.text),
        Err(toolschema::lint::FixError::Catalog(e)) => Err(catalog_error(py, &e)),
        Err(e) => Err(raise(py, "Error", e.to_string())),
    }
}

/// A catalog's tools written for a model provider (see ``adapt``).
#[pyclass(frozen, module = "toolschema", name = "Adapted")]
struct Adapted {
    catalog: Py<Catalog>,
    profile: &'static Profile,
    output: Value,
    failures: Vec<String>,
}

#[pymethods]
impl Adapted {
    /// The provider profile's name.
    #[getter]
    fn target(&self) -> &'static str {
        self.profile.name
    }

    /// The tool declarations in the provider's request form (``toolschema adapt
    /// --tools-only``).
    #[getter]
    fn tools<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        to_python(py, &self.output["tools"])
    }

    /// Every loss: dicts with ``tool``, ``pointer``, ``keyword``, ``action`` and ``message``.
    #[getter]
    fn losses<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        to_python(py, &self.output["losses"])
    }

    /// The provider's name of each tool whose name had to change, to the original name.
    #[getter]
    fn names<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        to_python(py, &self.output["names"])
    }

    /// The tools that could not be adapted, one message each (the others are in ``tools``).
    #[getter]
    fn failures(&self) -> Vec<String> {
        self.failures.clone()
    }

    /// Everything, as ``toolschema adapt`` prints it.
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        to_python(py, &self.output)
    }

    /// Map a model's call back to the server's tool: ``(name, arguments)`` with the original
    /// name and the arguments in the original schema's form. ``arguments`` as in
    /// ``Validator.validate``. Raises ``InvalidArgumentsError`` when the restored arguments
    /// break the original schema, ``UnknownToolError`` for a name the adapted tools do not have.
    fn restore<'py>(
        &self,
        py: Python<'py>,
        tool: &str,
        arguments: &Bound<'_, PyAny>,
    ) -> PyResult<(String, Bound<'py, PyAny>)> {
        let text = json_text_of(arguments, "arguments")?;
        let value = parse(py, "arguments", &text)?;
        let catalog = self.catalog.get();
        let adaptation = toolschema::adapt::adapt(self.profile, catalog.inner.tools());
        match adaptation.restore(tool, &value) {
            Ok(restored) => Ok((restored.name, to_python(py, &restored.arguments)?)),
            Err(e @ RestoreError::UnknownTool { .. }) => Err(raise(
                py,
                "UnknownToolError",
                format!("{}: {e}", catalog.inner.file()),
            )),
            Err(RestoreError::Invalid { errors, tool, .. }) => {
                let message = errors
                    .iter()
                    .map(|e| format!("tool '{tool}': {}", e.message))
                    .collect::<Vec<_>>()
                    .join("\n");
                let list = errors_of(py, &value, Err(errors))?;
                Err(Raise::new(py, "InvalidArgumentsError", message)
                    .with("errors", list)
                    .err())
            }
            Err(e) => Err(raise(py, "Error", format!("{}: {e}", catalog.inner.file()))),
        }
    }

    fn __repr__(&self) -> String {
        format!("<toolschema.Adapted for {}>", self.profile.name)
    }
}

/// Write a catalog's tools for a model provider: ``openai``, ``openai-strict``, ``anthropic``,
/// ``gemini`` or ``gemini-openapi``; every loss reported (``toolschema adapt``).
#[pyfunction]
fn adapt(py: Python<'_>, catalog: &Bound<'_, PyAny>, target: &str) -> PyResult<Adapted> {
    let profile =
        toolschema::adapt::profile(target).map_err(|e| raise(py, "UsageError", e.to_string()))?;
    let catalog = catalog_arg(py, catalog)?;
    let (output, failures) = {
        let inner = catalog.get().strict(py)?;
        let adaptation = toolschema::adapt::adapt(profile, inner.tools());
        let failures = adaptation
            .failures()
            .iter()
            .map(ToString::to_string)
            .collect();
        (adaptation.to_json(), failures)
    };
    Ok(Adapted {
        catalog,
        profile,
        output,
        failures,
    })
}

/// One difference between two catalogs (see ``diff``), or between pinned tools and a catalog
/// (see ``verify``).
#[pyclass(frozen, module = "toolschema", name = "Change")]
struct Change {
    /// The tool's name (the old name for a rename).
    #[pyo3(get)]
    tool: String,
    /// ``breaking``, ``security`` or ``compatible``.
    #[pyo3(get)]
    class_: &'static str,
    /// What changed, as a code like ``property-removed``.
    #[pyo3(get)]
    code: &'static str,
    /// JSON Pointer into the tool; empty for the whole tool.
    #[pyo3(get)]
    pointer: String,
    /// What changed, for a person, as ``toolschema diff`` prints it.
    #[pyo3(get)]
    message: String,
    before: Option<Value>,
    after: Option<Value>,
}

#[pymethods]
impl Change {
    /// The old value at ``pointer``, or ``None``.
    #[getter]
    fn before<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyAny>>> {
        self.before.as_ref().map(|v| to_python(py, v)).transpose()
    }

    /// The new value at ``pointer``, or ``None``.
    #[getter]
    fn after<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyAny>>> {
        self.after.as_ref().map(|v| to_python(py, v)).transpose()
    }

    fn __repr__(&self) -> String {
        format!(
            "Change({}: {} {}: {})",
            self.tool, self.class_, self.code, self.message
        )
    }

    fn __str__(&self) -> String {
        format!(
            "{}: {} {}: {}",
            self.tool, self.class_, self.code, self.message
        )
    }
}

fn changes_of(diff: toolschema::diff::Diff) -> Vec<Change> {
    diff.changes
        .into_iter()
        .map(|c| Change {
            tool: c.tool,
            class_: c.class.as_str(),
            code: c.code.as_str(),
            pointer: c.pointer,
            message: c.message,
            before: c.before,
            after: c.after,
        })
        .collect()
}

/// Compare two catalogs by meaning (``toolschema diff``): each change classed as breaking,
/// security or compatible, in the command's order.
#[pyfunction]
fn diff(py: Python<'_>, old: &Bound<'_, PyAny>, new: &Bound<'_, PyAny>) -> PyResult<Vec<Change>> {
    let (old, new) = (catalog_arg(py, old)?, catalog_arg(py, new)?);
    let (old, new) = (old.get().strict(py)?, new.get().strict(py)?);
    Ok(changes_of(toolschema::diff::diff_tools(
        old.tools().map(Tool::fields),
        new.tools().map(Tool::fields),
    )))
}

fn read_lock(py: Python<'_>, lock: &str) -> PyResult<toolschema::diff::Lock> {
    toolschema::diff::Lock::from_json(lock)
        .map_err(|e| raise(py, "LockError", format!("lock: {e}")))
}

/// Pin a catalog's tools under ``key`` (``toolschema pin``): the text of the lock file, with
/// ``lock`` (the text of an existing one) kept for its other keys.
#[pyfunction]
#[pyo3(signature = (catalog, key, lock = None))]
fn pin(
    py: Python<'_>,
    catalog: &Bound<'_, PyAny>,
    key: &str,
    lock: Option<&str>,
) -> PyResult<String> {
    let mut lock = match lock {
        Some(text) => read_lock(py, text)?,
        None => toolschema::diff::Lock::default(),
    };
    let catalog = catalog_arg(py, catalog)?;
    let inner = catalog.get().strict(py)?;
    lock.pin(key, inner.tools().map(Tool::fields))
        .map_err(|e| raise(py, "LockError", e.to_string()))?;
    Ok(lock.to_json())
}

/// Check a catalog against the tools pinned under ``key`` in ``lock`` (the lock file's text):
/// the changes, empty when every pinned tool matches (``toolschema verify``).
#[pyfunction]
fn verify(
    py: Python<'_>,
    catalog: &Bound<'_, PyAny>,
    lock: &str,
    key: &str,
) -> PyResult<Vec<Change>> {
    let lock = read_lock(py, lock)?;
    let pins = lock
        .require_server(key)
        .map_err(|e| raise(py, "LockError", format!("lock: {e}")))?;
    let catalog = catalog_arg(py, catalog)?;
    let inner = catalog.get().strict(py)?;
    Ok(changes_of(pins.verify(inner.tools().map(Tool::fields))))
}

/// Validate any JSON value against any schema (``toolschema validate --schema``): the list of
/// errors (messages say ``value``). ``dialect`` (``2020-12`` or ``draft-07``) overrides the
/// schema's ``$schema``; ``documents`` maps URIs to the JSON documents a ``$ref`` may name
/// (``--document``): nothing is ever fetched.
#[pyfunction]
#[pyo3(signature = (schema, instance, *, dialect = None, documents = None))]
fn validate_value(
    py: Python<'_>,
    schema: &Bound<'_, PyAny>,
    instance: &Bound<'_, PyAny>,
    dialect: Option<&str>,
    documents: Option<&Bound<'_, pyo3::types::PyDict>>,
) -> PyResult<Vec<ArgumentError>> {
    let schema_text = json_text_of(schema, "schema")?;
    let schema = parse(py, "schema", &schema_text)?;
    let mut options = CompileOptions::new();
    if let Some(dialect) = dialect {
        let dialect: toolschema::Dialect = dialect
            .parse()
            .map_err(|e: toolschema::SchemaError| raise(py, "UsageError", e.to_string()))?;
        options = options.dialect(dialect);
    }
    for (uri, document) in documents.into_iter().flat_map(|d| d.iter()) {
        let uri: String = uri.extract()?;
        let text = json_text_of(&document, &uri)?;
        options = options.register_document(uri.clone(), parse(py, &uri, &text)?);
    }
    let stated = toolschema::json::number::StatedNumbers::read(&schema_text);
    let validator = toolschema::SchemaValidator::read_with_options(&schema, &stated, &options)
        .map_err(|e| raise(py, "SchemaError", format!("schema: {e}")))?;
    let text = json_text_of(instance, "value")?;
    let value = parse(py, "value", &text)?;
    let verdict = maybe_detached(py, text.len(), || {
        validator.validate_text(&value, &text, Subject::Value)
    });
    errors_of(py, &value, verdict)
}

/// The extension module; `toolschema/__init__.py` re-exports it.
#[pymodule]
fn _toolschema(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add_class::<Catalog>()?;
    m.add_class::<Validator>()?;
    m.add_class::<ArgumentError>()?;
    m.add_class::<Diagnostic>()?;
    m.add_class::<Adapted>()?;
    m.add_class::<Change>()?;
    m.add_function(wrap_pyfunction!(lint, m)?)?;
    m.add_function(wrap_pyfunction!(fix, m)?)?;
    m.add_function(wrap_pyfunction!(adapt, m)?)?;
    m.add_function(wrap_pyfunction!(diff, m)?)?;
    m.add_function(wrap_pyfunction!(pin, m)?)?;
    m.add_function(wrap_pyfunction!(verify, m)?)?;
    m.add_function(wrap_pyfunction!(validate_value, m)?)?;
    Ok(())
}
