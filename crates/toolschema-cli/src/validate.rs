//! `toolschema validate`: check tool-call arguments against a catalog, or instances against a
//! schema.

use crate::input::{
    display_name, json_argument_text, parse_json, parse_json_line, read_text, InputError,
};
use crate::output::{say, Escapes, TerminalSafe};
use crate::Outcome;
use serde_json::{json, Value};
use std::io::Write;
use toolschema::{Catalog, CompileOptions, CompiledTool, Dialect, SchemaValidator, Subject};

/// Arguments of `toolschema validate`.
#[derive(Debug, clap::Args)]
#[command(after_help = "\
Examples:
  toolschema validate examples/catalog.json --tool search_docs --args '{\"query\": \"rust\"}'
  toolschema validate examples/catalog.json --tool search_docs --args @examples/args.json --format json
  toolschema validate examples/catalog.json --calls examples/calls.jsonl
  toolschema validate --schema examples/port.schema.json --instances examples/ports.jsonl

Exit status: 0 valid, 1 invalid, 2 bad input (unreadable or malformed files, unknown tool).")]
pub struct ValidateArgs {
    /// Tool catalog: {"tools": [...]}, a JSON-RPC tools/list response, an array of tools, or one
    /// tool (`-` reads standard input).
    #[arg(value_name = "CATALOG", required_unless_present = "schema")]
    catalog: Option<String>,

    /// The tool whose inputSchema the arguments are checked against.
    #[arg(long, value_name = "NAME", requires = "args", conflicts_with_all = ["calls", "schema"])]
    tool: Option<String>,

    /// The call's arguments: inline JSON, or @FILE (@- for standard input).
    #[arg(long = "args", value_name = "JSON", requires = "tool")]
    args: Option<String>,

    /// A JSON Lines file of tools/call params, {"name": ..., "arguments": ...} per line; one JSON
    /// line out per call.
    #[arg(long, value_name = "FILE.jsonl", conflicts_with = "schema")]
    calls: Option<String>,

    /// Validate instances against this schema instead of a catalog.
    #[arg(
        long,
        value_name = "SCHEMA.json",
        requires = "instances",
        conflicts_with = "catalog"
    )]
    schema: Option<String>,

    /// A JSON Lines file of instances to check against --schema; one JSON line out per instance.
    #[arg(long, value_name = "FILE.jsonl", requires = "schema")]
    instances: Option<String>,

    /// Validate as this dialect whatever `$schema` says: 2020-12 or draft-07.
    #[arg(long, value_name = "DIALECT", value_parser = DialectParser)]
    dialect: Option<Dialect>,

    /// Treat `format` as an assertion (by default it only annotates); a `format` toolschema does
    /// not know is then refused, not passed unchecked.
    #[arg(long)]
    assert_format: bool,

    /// Top-level arguments the tool's schema does not declare where the schema accepts them (no
    /// additionalProperties): allow (as the schema says) or reject (with a did-you-mean), as the
    /// proxy's --unknown-arguments.
    #[arg(long, value_enum, value_name = "WHAT", default_value_t = UnknownArguments::Allow)]
    unknown_arguments: UnknownArguments,

    /// Make a JSON document available to `$ref` under URI (repeatable); nothing is ever
    /// fetched from the network.
    #[arg(long = "document", value_name = "URI=FILE")]
    documents: Vec<String>,

    /// Output for a single call: text (one message per line) or json.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
}

/// `--unknown-arguments` of `validate` and `call`: whether an open schema's undeclared top-level
/// arguments pass.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum UnknownArguments {
    /// As the schema says.
    Allow,
    /// Refused, as the proxy's `--unknown-arguments reject` refuses them.
    Reject,
}

impl UnknownArguments {
    /// Whether undeclared arguments are refused.
    pub fn rejects(self) -> bool {
        self == UnknownArguments::Reject
    }
}

/// `--format` of `validate` and `call`: text for people, or JSON.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum Format {
    Text,
    Json,
}

impl Format {
    /// How what would steer a terminal is written in this format.
    pub(crate) fn escapes(self) -> Escapes {
        match self {
            Format::Text => Escapes::Text,
            Format::Json => Escapes::Json,
        }
    }
}

fn parse_dialect(value: &str) -> Result<Dialect, String> {
    value
        .parse()
        .map_err(|_| format!("unsupported dialect '{value}': use 2020-12 or draft-07"))
}

/// `--dialect`: read by [`parse_dialect`], with the two dialects named for shell completion.
#[derive(Clone)]
struct DialectParser;

impl clap::builder::TypedValueParser for DialectParser {
    type Value = Dialect;

    fn parse_ref(
        &self,
        cmd: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &std::ffi::OsStr,
    ) -> Result<Dialect, clap::Error> {
        let parse: fn(&str) -> Result<Dialect, String> = parse_dialect;
        parse.parse_ref(cmd, arg, value)
    }

    fn possible_values(
        &self,
    ) -> Option<Box<dyn Iterator<Item = clap::builder::PossibleValue> + '_>> {
        Some(Box::new(
            ["2020-12", "draft-07"]
                .into_iter()
                .map(clap::builder::PossibleValue::new),
        ))
    }
}

impl ValidateArgs {
    fn compile_options(&self) -> Result<CompileOptions, InputError> {
        let mut options = CompileOptions::new()
            .assert_format(self.assert_format)
            .refuse_unknown_formats(self.assert_format);
        if let Some(dialect) = self.dialect {
            options = options.dialect(dialect);
        }
        for document in &self.documents {
            let Some((uri, path)) = document.split_once('=') else {
                return Err(InputError(format!(
                    "--document {document}: give the document as URI=FILE"
                )));
            };
            let text = read_text(path)?;
            options = options.register_document(uri, parse_json(display_name(path), &text)?);
        }
        Ok(options)
    }
}

/// Run `toolschema validate`.
pub fn run(args: ValidateArgs, out: &mut dyn Write) -> Result<Outcome, InputError> {
    let mut out = TerminalSafe::new(out, args.format.escapes());
    let out: &mut dyn Write = &mut out;
    if let (Some(schema), Some(instances)) = (&args.schema, &args.instances) {
        return validate_instances(&args, schema, instances, out);
    }
    let catalog_path = args.catalog.as_deref().unwrap_or("-");
    let text = read_text(catalog_path)?;
    let catalog = ReadCatalog::read(display_name(catalog_path), &text)?;
    if let Some(calls) = &args.calls {
        catalog.warn_left_out(None);
        return validate_calls(&args, &catalog, calls, out);
    }
    let (Some(tool_name), Some(raw_args)) = (&args.tool, &args.args) else {
        return Err(InputError(
            "say what to validate: --tool NAME --args JSON, or --calls FILE.jsonl".into(),
        ));
    };
    let tool = catalog
        .require(tool_name)
        .map_err(|e| InputError(e.in_file(catalog.catalog.file())))?;
    catalog.warn_left_out(Some(tool_name));
    let compiled = tool
        .compile_with(&args.compile_options()?)
        .map_err(|e| InputError(format!("{}: {e}", catalog.catalog.file())))?;
    let (name, text) = json_argument_text("--args", raw_args)?;
    let arguments = parse_json(&name, &text)?;
    let verdict =
        compiled.validate_input_declared(&arguments, Some(&text), args.unknown_arguments.rejects());
    toolschema::json::drop_deep(arguments);
    let valid = verdict.is_ok();
    write_verdict(&verdict, args.format == Format::Json, out)?;
    Ok(if valid {
        Outcome::Valid
    } else {
        Outcome::Invalid
    })
}

/// A catalog read for validation: a tool that breaks a rule is left out with a warning, so the
/// other tools of a real server's catalog can still be checked; asking for the tool left out is an
/// error.
pub(crate) struct ReadCatalog {
    pub(crate) catalog: Catalog,
    left_out: Vec<toolschema::CatalogError>,
}

impl ReadCatalog {
    pub(crate) fn read(file: &str, text: &str) -> Result<ReadCatalog, InputError> {
        let (catalog, left_out) = Catalog::from_json_lenient(file, text)?;
        Ok(ReadCatalog { catalog, left_out })
    }

    /// The tool named `name`, or why it cannot be checked.
    pub(crate) fn require(&self, name: &str) -> Result<&toolschema::Tool, Unavailable<'_>> {
        if let Some(error) = self.left_out.iter().find(|e| e.tool_name() == Some(name)) {
            return Err(Unavailable::LeftOut(error));
        }
        self.catalog.require(name).map_err(Unavailable::Unknown)
    }

    /// Say once, on stderr, which tools were left out (all but `selected`, whose error is
    /// reported on its own).
    pub(crate) fn warn_left_out(&self, selected: Option<&str>) {
        let others: Vec<String> = self
            .left_out
            .iter()
            .filter(|e| selected.is_none() || e.tool_name() != selected)
            .map(ToString::to_string)
            .collect();
        if others.is_empty() {
            return;
        }
        say!(
            "warning: {}: left out {} tool{} that cannot be read:",
            self.catalog.file(),
            others.len(),
            if others.len() == 1 { "" } else { "s" },
        );
        for error in others {
            say!("  {error}");
        }
    }
}

/// Why a named tool cannot be checked.
pub(crate) enum Unavailable<'c> {
    /// The tool breaks a rule; its error names the file, line and column.
    LeftOut(&'c toolschema::CatalogError),
    /// There is no such tool (with a did-you-mean).
    Unknown(toolschema::UnknownTool),
}

impl Unavailable<'_> {
    /// The message, with the catalog's file name in front when it does not have it yet.
    pub(crate) fn in_file(&self, file: &str) -> String {
        match self {
            Unavailable::LeftOut(error) => error.to_string(),
            Unavailable::Unknown(error) => format!("{file}: {error}"),
        }
    }
}

impl std::fmt::Display for Unavailable<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Unavailable::LeftOut(error) => error.fmt(f),
            Unavailable::Unknown(error) => error.fmt(f),
        }
    }
}

pub(crate) fn write_error(e: std::io::Error) -> InputError {
    InputError(format!("cannot write output: {e}"))
}

/// Write the verdict on one call's arguments as `validate --tool` does: `valid` or one message
/// per line, or with `json` one JSON line.
pub(crate) fn write_verdict(
    verdict: &Result<(), toolschema::ValidationErrors>,
    json: bool,
    out: &mut dyn Write,
) -> Result<(), InputError> {
    match (json, verdict) {
        (true, _) => writeln!(out, "{}", verdict_json(verdict)),
        (false, Ok(())) => writeln!(out, "valid"),
        (false, Err(errors)) => writeln!(out, "{errors}"),
    }
    .map_err(write_error)
}

/// A verdict as `validate --format json` writes it.
pub(crate) fn verdict_json(verdict: &Result<(), toolschema::ValidationErrors>) -> Value {
    match verdict {
        Ok(()) => json!({"valid": true, "errors": []}),
        Err(errors) => json!({"valid": false, "errors": errors}),
    }
}

/// Lines of a JSON Lines file with their 1-based numbers, blank lines skipped.
fn json_lines(text: &str) -> impl Iterator<Item = (usize, &str)> {
    text.lines()
        .enumerate()
        .map(|(i, line)| (i + 1, line.trim_end_matches('\r')))
        .filter(|(_, line)| !line.trim().is_empty())
}

/// Tally of a batch: decides the exit status.
#[derive(Default)]
struct Tally {
    invalid: bool,
    bad_input: bool,
}

impl Tally {
    fn outcome(&self) -> Outcome {
        if self.bad_input {
            Outcome::BadInput
        } else if self.invalid {
            Outcome::Invalid
        } else {
            Outcome::Valid
        }
    }
}

fn validate_calls(
    args: &ValidateArgs,
    catalog: &ReadCatalog,
    calls_path: &str,
    out: &mut dyn Write,
) -> Result<Outcome, InputError> {
    let text = read_text(calls_path)?;
    let name = display_name(calls_path);
    let options = args.compile_options()?;
    // Compile each tool once, when a call first needs it.
    let mut compiled: std::collections::HashMap<String, Result<CompiledTool, String>> =
        std::collections::HashMap::new();
    let refuse_undeclared = args.unknown_arguments.rejects();
    check_json_lines(name, &text, out, |call, line, tally| {
        check_call(
            catalog,
            &options,
            refuse_undeclared,
            &mut compiled,
            call,
            line,
            tally,
        )
    })
}

fn check_call(
    catalog: &ReadCatalog,
    options: &CompileOptions,
    refuse_undeclared: bool,
    compiled: &mut std::collections::HashMap<String, Result<CompiledTool, String>>,
    call: &Value,
    line: &str,
    tally: &mut Tally,
) -> Value {
    let Some(tool_name) = call.get("name").and_then(Value::as_str) else {
        tally.bad_input = true;
        return json!({"error": "a call needs a string \"name\" (tools/call params: {\"name\": ..., \"arguments\": ...})"});
    };
    let entry = compiled.entry(tool_name.to_string()).or_insert_with(|| {
        catalog
            .require(tool_name)
            .map_err(|e| e.to_string())
            .and_then(|tool| tool.compile_with(options).map_err(|e| e.to_string()))
    });
    let tool = match entry {
        Ok(tool) => tool,
        Err(message) => {
            tally.bad_input = true;
            return json!({"tool": tool_name, "error": message});
        }
    };
    // MCP treats absent arguments (and `null`, which some clients send) as an empty object, as
    // the proxy does.
    let empty = Value::Object(Default::default());
    let arguments = match call.get("arguments") {
        None | Some(Value::Null) => &empty,
        Some(arguments) => arguments,
    };
    // The arguments' own text: numbers are judged as it states them (the last `arguments`
    // member counts, as it does in the value read).
    let arguments_text = toolschema::json::root_members(line)
        .ok()
        .flatten()
        .and_then(|members| members.into_iter().rev().find(|m| m.key == "arguments"))
        .map_or("{}", |member| &line[member.value]);
    let verdict = tool.validate_input_declared(arguments, Some(arguments_text), refuse_undeclared);
    tally.invalid |= verdict.is_err();
    let mut record = verdict_json(&verdict);
    if let Value::Object(map) = &mut record {
        map.shift_insert(0, "tool".into(), json!(tool_name));
    }
    record
}

fn validate_instances(
    args: &ValidateArgs,
    schema_path: &str,
    instances_path: &str,
    out: &mut dyn Write,
) -> Result<Outcome, InputError> {
    let schema_text = read_text(schema_path)?;
    let schema = parse_json(display_name(schema_path), &schema_text)?;
    let stated = toolschema::json::number::StatedNumbers::read(&schema_text);
    let validator = SchemaValidator::read_with_options(&schema, &stated, &args.compile_options()?)
        .map_err(|e| InputError(format!("{}: {e}", display_name(schema_path))))?;
    let text = read_text(instances_path)?;
    let name = display_name(instances_path);
    check_json_lines(name, &text, out, |instance, line, tally| {
        let verdict = validator.validate_text(instance, line, Subject::Value);
        tally.invalid |= verdict.is_err();
        verdict_json(&verdict)
    })
}

/// Check each line of a JSON Lines file with `check`, writing one record per line with its number
/// first (`{"line": 3, ...}`); a line that is not JSON gets `{"line": 3, "error": ...}`.
fn check_json_lines(
    name: &str,
    text: &str,
    out: &mut dyn Write,
    mut check: impl FnMut(&Value, &str, &mut Tally) -> Value,
) -> Result<Outcome, InputError> {
    let mut tally = Tally::default();
    for (number, line) in json_lines(text) {
        let record = match parse_json_line(name, number, line) {
            Err(e) => {
                tally.bad_input = true;
                json!({"line": number, "error": e.to_string()})
            }
            Ok(value) => {
                let mut record = check(&value, line, &mut tally);
                toolschema::json::drop_deep(value);
                if let Value::Object(map) = &mut record {
                    map.shift_insert(0, "line".into(), json!(number));
                }
                record
            }
        };
        writeln!(out, "{record}").map_err(write_error)?;
    }
    Ok(tally.outcome())
}
