//! `toolschema call`: call one tool of a live server by hand, its arguments checked first.

use crate::input::{json_argument_text, parse_json, parse_seconds, InputError};
use crate::output::{say, TerminalSafe};
use crate::server_args::ServerAddress;
use crate::validate::{write_error, write_verdict, Format, ReadCatalog, UnknownArguments};
use crate::Outcome;
use serde_json::{json, Value};
use std::io::Write;
use std::time::Duration;
use toolschema::json::number::StatedNumbers;
use toolschema::CompiledTool;
use toolschema_mcp::call::{unless_interrupted, CallOptions, Caller};
use toolschema_mcp::fuzz::checks::call_tool_result_problem;
use toolschema_mcp::fuzz::{Answer, CallRecord};
use toolschema_mcp::snapshot::Target;

/// Arguments of `toolschema call`.
#[derive(Debug, clap::Args)]
#[command(after_help = "\
Examples:
  toolschema call --list -- npx -y @modelcontextprotocol/server-everything
  toolschema call echo --args '{\"message\": \"hi\"}' -- npx -y @modelcontextprotocol/server-everything
  toolschema call get_current_time --args '{\"timezone\": \"Europe/Paris\"}' --format json -- python -m mcp_server_time
  toolschema call get-sum --args '{\"a\": 2, \"b\": 3}' --url http://127.0.0.1:3001/mcp --header 'Authorization: Bearer TOKEN'

The arguments are checked against the tool's inputSchema first, with validate's messages: when
they break it, nothing is sent (--no-check sends them anyway). The result's text content is
printed as text, its structuredContent as JSON (--format json: the whole result, as sent), and
structuredContent is checked against the tool's outputSchema.
Exit status: 0 the call succeeded; 1 the arguments break the schema (not sent), the result is an
error (isError, or a JSON-RPC error) or breaks the outputSchema; 2 bad input, or the server could
not be started, died, or did not answer within --timeout.")]
pub struct CallArgs {
    /// The tool to call.
    #[arg(
        value_name = "TOOL",
        required_unless_present = "list",
        conflicts_with = "list"
    )]
    tool: Option<String>,

    /// The call's arguments: inline JSON, or @FILE (@- for standard input); `{}` when not given.
    #[arg(long = "args", value_name = "JSON", conflicts_with = "list")]
    args: Option<String>,

    /// List the server's tools (name and description) instead of calling one.
    #[arg(long)]
    list: bool,

    /// Send the arguments without checking them against the tool's inputSchema (to a tool the
    /// server does not list, too).
    #[arg(long)]
    no_check: bool,

    /// Top-level arguments the tool's schema does not declare where the schema accepts them:
    /// allow (as the schema says) or reject, as `validate --unknown-arguments`.
    #[arg(long, value_enum, value_name = "WHAT", default_value_t = UnknownArguments::Allow)]
    unknown_arguments: UnknownArguments,

    /// Output: text (text content as text, structured content as JSON) or json (the whole
    /// result; the whole listing with --list).
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,

    #[command(flatten)]
    address: ServerAddress,

    /// Give up when the server has not started and listed its tools within this many seconds,
    /// or has not answered the call within as many again (progress notifications stretch that
    /// wait, up to three times).
    #[arg(long, value_name = "SECONDS", default_value = "60", value_parser = parse_seconds)]
    timeout: Duration,
}

/// How a session with the server ended.
enum Session {
    /// `--list`: the tools, as sent.
    Listed(Vec<Value>),
    /// The arguments break the schema: not sent.
    Refused(toolschema::ValidationErrors),
    /// The call was sent; its answer, and the tool compiled when it was checked.
    Called(Box<CallRecord>, Option<Box<CompiledTool>>),
}

/// Run `toolschema call`.
pub fn run(args: CallArgs, out: &mut dyn Write) -> Result<Outcome, InputError> {
    let target = args.address.require_target()?;
    let mut out = TerminalSafe::new(out, args.format.escapes());
    let out: &mut dyn Write = &mut out;
    // The arguments are read before the server starts: bad input costs no server.
    let arguments = match &args.args {
        Some(raw) => {
            let (name, text) = json_argument_text("--args", raw)?;
            let value = parse_json(&name, &text)?;
            // What is sent must be what was written: a value reading would change is refused,
            // as `adapt --restore` refuses it.
            if let Some(lossy) = toolschema::json::first_lossy_value(&text) {
                let at = toolschema::json::position_of(&text, lossy.offset);
                return Err(InputError(format!(
                    "{name}:{}:{}: {}; the call would not send what you wrote",
                    at.line, at.column, lossy.loss
                )));
            }
            value
        }
        None => json!({}),
    };
    let options = CallOptions {
        timeout: args.timeout,
        headers: args.address.headers()?,
        max_message_bytes: args.address.max_message_bytes,
    };
    let runtime = toolschema_mcp::runtime()
        .map_err(|e| InputError(format!("cannot start the async runtime: {e}")))?;
    let session = runtime.block_on(unless_interrupted(session(
        &args, &target, &options, arguments,
    )));
    runtime.shutdown_background();
    let session =
        session.unwrap_or_else(|| Err(InputError("interrupted; the server was stopped".into())));
    match session? {
        Session::Listed(tools) => list(&tools, args.format, &target, out),
        Session::Refused(errors) => {
            let verdict = Err(errors);
            write_verdict(&verdict, args.format == Format::Json, out)?;
            say!(
                "toolschema: not sent: the arguments break the inputSchema of '{}' (--no-check sends them anyway)",
                args.tool.as_deref().unwrap_or_default()
            );
            Ok(Outcome::Invalid)
        }
        Session::Called(record, compiled) => {
            report(&record, compiled.as_deref(), &args, &target, out)
        }
    }
}

/// Start the server, list its tools, check the arguments and send the call.
async fn session(
    args: &CallArgs,
    target: &Target,
    options: &CallOptions,
    arguments: Value,
) -> Result<Session, InputError> {
    let (caller, tools, stated) = Caller::open(target, options)
        .await
        .map_err(|e| InputError(e.0))?;
    let name = match (&args.tool, args.list) {
        (Some(name), false) => name,
        _ => {
            caller.close().await;
            return Ok(Session::Listed(tools));
        }
    };
    let compiled = if args.no_check {
        None
    } else {
        match check(args, target, (&tools, &stated), name, &arguments) {
            Ok(compiled) => Some(compiled),
            Err(failure) => {
                caller.close().await;
                return failure;
            }
        }
    };
    let record = caller.call(name, arguments).await;
    caller.close().await;
    let record = record.map_err(|e| InputError(e.0))?;
    Ok(Session::Called(Box::new(record), compiled))
}

/// The tool compiled from the listing, when the arguments pass its schema; otherwise how the
/// session ends: refused (the schema's messages), or bad input (no such tool, a schema that does
/// not compile).
fn check(
    args: &CallArgs,
    target: &Target,
    (tools, stated): (&[Value], &[StatedNumbers]),
    name: &str,
    arguments: &Value,
) -> Result<Box<CompiledTool>, Result<Session, InputError>> {
    let listing = target.to_string();
    let text = serde_json::to_string(&json!({ "tools": tools }))
        .map_err(|e| Err(InputError(format!("cannot read the listing: {e}"))))?;
    let catalog = ReadCatalog::read(&listing, &text).map_err(Err)?;
    let tool = catalog.require(name).map_err(|e| {
        Err(InputError(format!(
            "{} (--no-check sends the call anyway)",
            e.in_file(&format!("the tools of {listing}"))
        )))
    })?;
    // The numbers of its schemas as the server's text states them (the catalog was read from
    // the values, written again).
    let listed = tools
        .iter()
        .position(|t| t.get("name") == Some(&json!(name)));
    let tool = match listed.and_then(|at| stated.get(at)) {
        Some(stated) => tool.clone().with_stated_numbers(stated.clone()),
        None => tool.clone(),
    };
    let compiled = tool.compile_with(&Default::default()).map_err(|e| {
        Err(InputError(format!(
            "the tools of {listing}: {e} (--no-check sends the call anyway)"
        )))
    })?;
    // (No text: arguments that reading changes, a lone surrogate or a number a double does not
    // hold, were refused before, so the value read is what is sent.)
    match compiled.validate_input_declared(arguments, None, args.unknown_arguments.rejects()) {
        Ok(()) => Ok(Box::new(compiled)),
        Err(errors) => Err(Ok(Session::Refused(errors))),
    }
}

/// `--list`: one line per tool, names aligned, with the first line of its description; or the
/// whole listing as JSON.
fn list(
    tools: &[Value],
    format: Format,
    target: &Target,
    out: &mut dyn Write,
) -> Result<Outcome, InputError> {
    if format == Format::Json {
        let mut text = serde_json::to_string_pretty(&json!({ "tools": tools }))
            .map_err(|e| InputError(format!("cannot write the listing: {e}")))?;
        text.push('\n');
        out.write_all(text.as_bytes()).map_err(write_error)?;
    } else {
        let rows: Vec<(String, String)> = tools
            .iter()
            .map(|tool| {
                let name = match tool.get("name") {
                    Some(Value::String(name)) => name.clone(),
                    _ => "(no name)".into(),
                };
                let description = tool
                    .get("description")
                    .and_then(Value::as_str)
                    .and_then(|d| d.lines().map(str::trim).find(|l| !l.is_empty()))
                    .map(|line| toolschema::text::shorten(line, 100))
                    .unwrap_or_default();
                (name, description)
            })
            .collect();
        let width = rows
            .iter()
            .map(|(n, _)| n.chars().count())
            .max()
            .unwrap_or(0);
        for (name, description) in rows {
            let line = if description.is_empty() {
                name
            } else {
                format!("{name:width$}  {description}")
            };
            writeln!(out, "{}", line.trim_end()).map_err(write_error)?;
        }
    }
    say!(
        "toolschema: {} listed by {target}",
        toolschema::text::count(tools.len(), "tool", "tools")
    );
    Ok(Outcome::Valid)
}

/// Print the answer to the call and say what is wrong with it: an error result, a JSON-RPC
/// error, a result that is no `CallToolResult` or breaks the `outputSchema`.
fn report(
    record: &CallRecord,
    compiled: Option<&CompiledTool>,
    args: &CallArgs,
    target: &Target,
    out: &mut dyn Write,
) -> Result<Outcome, InputError> {
    let name = args.tool.as_deref().unwrap_or_default();
    let format = args.format;
    for stray in &record.strays {
        say!("warning: during the call of '{name}', {stray}");
    }
    let (result, structured_text, as_sent) = match &record.answer {
        Answer::Result {
            result,
            structured_content,
            as_sent,
        } => (result, structured_content.as_deref(), as_sent.as_deref()),
        Answer::Error {
            code,
            message,
            data,
        } => {
            if format == Format::Json {
                let error = json!({"error": {"code": code, "message": message, "data": data}});
                writeln!(out, "{error}").map_err(write_error)?;
            }
            let data = data
                .as_ref()
                .map(|data| format!(" (data: {data})"))
                .unwrap_or_default();
            say!("toolschema: the MCP server {target} answered the call of '{name}' with error {code}: {message}{data}");
            return Ok(Outcome::Invalid);
        }
        Answer::Hang => {
            return Err(InputError(format!(
            "the MCP server {target} did not answer the call of '{name}' within {}s (--timeout)",
            args.timeout.as_secs_f64()
        )))
        }
        Answer::Closed { how, stderr } => {
            return Err(InputError(format!(
                "the MCP server {target} {how} before it answered the call of '{name}'{}",
                toolschema_mcp::server_process::stderr_note(stderr.as_deref())
            )))
        }
        Answer::Unreadable(why) => {
            return Err(InputError(format!(
                "the MCP server {target} broke the protocol answering the call of '{name}': {why}"
            )))
        }
        Answer::Unread(why) => {
            return Err(InputError(format!(
                "cannot read the answer to the call of '{name}': {why}"
            )))
        }
        Answer::Interrupted => {
            return Err(InputError(format!(
                "the call of '{name}' was interrupted (the server stopped answering)"
            )))
        }
    };
    match format {
        Format::Json => {
            // A result whose reading rounded a number or replaced a lone surrogate is printed
            // as the server sent it: writing the value back would print another one.
            let mut text = match as_sent {
                Some(text) => text.to_string(),
                None => serde_json::to_string_pretty(result)
                    .map_err(|e| InputError(format!("cannot write the result: {e}")))?,
            };
            text.push('\n');
            out.write_all(text.as_bytes()).map_err(write_error)?;
        }
        Format::Text => out
            .write_all(result_text(result, structured_text).as_bytes())
            .map_err(write_error)?,
    }
    let mut outcome = Outcome::Valid;
    if let Some(problem) = call_tool_result_problem(result) {
        say!("toolschema: the result of '{name}' is not a valid CallToolResult: {problem}");
        outcome = Outcome::Invalid;
    }
    let is_error = result.get("isError") == Some(&Value::Bool(true));
    if is_error {
        say!("toolschema: '{name}' answered with an error result (isError)");
        outcome = Outcome::Invalid;
    }
    if let Some(compiled) = compiled {
        let structured = result.get("structuredContent");
        // Judged as the text states it, as the proxy judges it.
        let verdict = match structured_text {
            Some(text) => compiled.validate_output_text(structured, is_error, text),
            None => compiled.validate_output(structured, is_error),
        };
        match verdict {
            Ok(()) => {}
            Err(errors) if errors.is_unchecked() => {
                say!(
                    "warning: the result of '{name}' could not be checked against its outputSchema: {}",
                    errors.messages().join("; ")
                );
            }
            Err(errors) => {
                say!("toolschema: the result of '{name}' breaks its outputSchema:");
                for message in errors.messages() {
                    say!("  {message}");
                }
                outcome = Outcome::Invalid;
            }
        }
    }
    Ok(outcome)
}

/// A result as a person reads it: each text block as text, other blocks in a line that says
/// what they are, and `structuredContent` as JSON. A text block that states the structured
/// content again (as MCP asks servers to, for older clients) is not printed twice. Structured
/// content whose reading changed a value (`structured_text` is its text as sent) is printed as
/// sent, never with a rounded number.
fn result_text(result: &Value, structured_text: Option<&str>) -> String {
    let structured = result.get("structuredContent");
    let mut out = String::new();
    let mut push = |text: &str| {
        out.push_str(text);
        if !text.ends_with('\n') {
            out.push('\n');
        }
    };
    let blocks = result
        .get("content")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default();
    for block in blocks {
        let field = |key: &str| block.get(key).and_then(Value::as_str);
        match (field("type"), field("text")) {
            (Some("text"), Some(text)) => {
                let restates = structured.is_some()
                    && toolschema::json::parse(text).ok().as_ref() == structured;
                if !restates {
                    push(text);
                }
            }
            (Some(kind @ ("image" | "audio")), _) => push(&format!(
                "[{kind}: {}, {} bytes of base64]",
                field("mimeType").unwrap_or("no mimeType"),
                field("data").map_or(0, str::len)
            )),
            (Some("resource_link"), _) => push(&format!(
                "[resource link: {}]",
                field("uri").unwrap_or("no uri")
            )),
            (Some("resource"), _) => {
                let resource = block.get("resource");
                let inner = |key: &str| resource.and_then(|r| r.get(key)).and_then(Value::as_str);
                match inner("text") {
                    Some(text) => push(text),
                    None => push(&format!(
                        "[resource: {}, {}]",
                        inner("uri").unwrap_or("no uri"),
                        inner("mimeType").unwrap_or("no mimeType")
                    )),
                }
            }
            _ => push(&block.to_string()),
        }
    }
    let lossy = structured_text.filter(|text| toolschema::json::first_lossy_value(text).is_some());
    match (lossy, structured) {
        (Some(text), _) => push(text),
        (None, Some(structured)) => push(
            &serde_json::to_string_pretty(structured).unwrap_or_else(|_| structured.to_string()),
        ),
        (None, None) => {}
    }
    out
}
