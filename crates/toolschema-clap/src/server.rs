//! The MCP server on rmcp: `tools/list` returns the tool set's tools unchanged, `tools/call`
//! checks a call, runs the command, and returns what it printed. Served over stdio, or over
//! Streamable HTTP ([`crate::http`]), where the guard decides which tools each client sees and
//! may call.

use crate::exec::{self, Limits};
use crate::tools::{CallError, ToolSet};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, CustomRequest,
    CustomResult, ErrorCode, Implementation, ListToolsResult, PaginatedRequestParams,
    ServerCapabilities, ServerConfig, Tool as WireTool,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler};
use serde_json::Value;
use std::path::PathBuf;
use std::sync::Arc;
use toolschema::json::Loss;
use toolschema_http::{AuthMethod, Guard, Principal};

/// Why the server cannot start.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    /// rmcp's tool type would not carry a tool exactly as built.
    #[error("tool '{name}' cannot be sent unchanged: {reason}")]
    Wire {
        /// The tool.
        name: String,
        /// What would change.
        reason: String,
    },
    /// The executable to run for calls cannot be found.
    #[error("cannot find the current executable: {0}")]
    CurrentExe(std::io::Error),
    /// Binding, accepting or serving failed.
    #[error("{0}")]
    Io(#[from] std::io::Error),
    /// The MCP session failed.
    #[error("MCP session failed: {0}")]
    Session(String),
    /// The HTTP guard refused to start (no authentication on an open address, a broken token
    /// file, an issuer that cannot be reached...).
    #[error("{0}")]
    Guard(#[from] toolschema_http::StartError),
}

/// The tools as rmcp types, each checked to serialize back to exactly the JSON of the tool.
pub(crate) fn wire_tools(tools: &ToolSet) -> Result<Vec<WireTool>, ServeError> {
    tools
        .tools()
        .iter()
        .map(|tool| {
            let value = tool.tool().to_value();
            let wire: WireTool =
                serde_json::from_value(value.clone()).map_err(|e| ServeError::Wire {
                    name: tool.name().to_string(),
                    reason: e.to_string(),
                })?;
            let back = serde_json::to_value(&wire).map_err(|e| ServeError::Wire {
                name: tool.name().to_string(),
                reason: e.to_string(),
            })?;
            if back != value {
                return Err(ServeError::Wire {
                    name: tool.name().to_string(),
                    reason: format!("rmcp would send {back} instead of {value}"),
                });
            }
            Ok(wire)
        })
        .collect()
}

/// The MCP handler for a tool set.
#[derive(Clone)]
pub(crate) struct ToolServer {
    tools: Arc<ToolSet>,
    wire: Arc<Vec<WireTool>>,
    info: ServerConfig,
    program: Arc<PathBuf>,
    /// Over HTTP: the guard, whose scopes decide what each client sees and may call.
    guard: Option<Arc<Guard>>,
}

impl ToolServer {
    /// A server for `tools`, presenting itself as `name` `version`; calls run `program`.
    pub(crate) fn new(
        tools: ToolSet,
        name: &str,
        version: &str,
        program: PathBuf,
    ) -> Result<ToolServer, ServeError> {
        let wire = wire_tools(&tools)?;
        let info = ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new(name, version));
        Ok(ToolServer {
            tools: Arc::new(tools),
            wire: Arc::new(wire),
            info,
            program: Arc::new(program),
            guard: None,
        })
    }

    /// The same server behind `guard`.
    pub(crate) fn with_guard(mut self, guard: Arc<Guard>) -> ToolServer {
        self.guard = Some(guard);
        self
    }

    /// The tool set.
    pub(crate) fn tools(&self) -> &ToolSet {
        &self.tools
    }

    /// Whether the client of `context` may call `tool`: always over stdio; over HTTP, when the
    /// guard's scopes allow it. A request the guard did not see (no principal) may call only
    /// tools that need no scope.
    fn may_call(&self, context: &RequestContext<RoleServer>, tool: &str) -> bool {
        let Some(guard) = &self.guard else {
            return true;
        };
        let principal = context
            .extensions
            .get::<http::request::Parts>()
            .and_then(|parts| parts.extensions.get::<Principal>());
        match principal {
            Some(principal) => guard.may_call(principal, tool),
            None => guard.may_call(
                &Principal::new("", AuthMethod::Token, Default::default()),
                tool,
            ),
        }
    }

    /// Check and run one call.
    pub(crate) async fn call(
        &self,
        name: &str,
        arguments: Value,
        cancel: tokio_util::sync::CancellationToken,
    ) -> Result<CallToolResult, ErrorData> {
        let invocation = match self.tools.prepare(name, &arguments) {
            Ok(invocation) => invocation,
            Err(error @ CallError::UnknownTool { .. }) => {
                return Err(ErrorData::invalid_params(error.to_string(), None))
            }
            Err(error) => {
                return Ok(CallToolResult::error(vec![ContentBlock::text(
                    error.to_string(),
                )]))
            }
        };
        let limits = Limits {
            timeout: self.tools.timeout,
            output_limit: self.tools.output_limit,
        };
        let output = exec::run(
            &self.program,
            &invocation.args,
            &self.tools.env_defaults,
            &limits,
            cancel,
        )
        .await;
        Ok(match output {
            Ok(output) if output.is_error() => {
                CallToolResult::structured_error(output.structured())
            }
            Ok(output) => CallToolResult::structured(output.structured()),
            Err(e) => CallToolResult::error(vec![ContentBlock::text(format!(
                "cannot run {}: {e}",
                self.program.display()
            ))]),
        })
    }
}

impl ServerHandler for ToolServer {
    fn get_info(&self) -> ServerConfig {
        self.info.clone()
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let visible = self
            .wire
            .iter()
            .filter(|tool| self.may_call(&context, &tool.name))
            .cloned()
            .collect();
        Ok(ListToolsResult::with_all_items(visible))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        // The guard refused such calls before they got here; this holds if it did not see one.
        if !self.may_call(&context, &request.name) {
            return Err(ErrorData::invalid_params(
                format!("this client may not call the tool '{}'", request.name),
                None,
            ));
        }
        let arguments = Value::Object(request.arguments.unwrap_or_default());
        self.call(&request.name, arguments, context.ct.clone())
            .await
            .map(CallToolResponse::from)
    }

    /// Requests rmcp could not read as what their method says: a request the stdio reader set
    /// aside ([`UNREADABLE`]), or a `tools/call` whose params are not MCP's (arguments sent as a
    /// JSON string, say), answered as invalid params rather than as an unknown method.
    async fn on_custom_request(
        &self,
        request: CustomRequest,
        _context: RequestContext<RoleServer>,
    ) -> Result<CustomResult, ErrorData> {
        let why = match request.method.as_str() {
            UNREADABLE => request
                .params
                .as_ref()
                .and_then(|p| p.get("why"))
                .and_then(Value::as_str)
                .unwrap_or("the request cannot be read")
                .to_string(),
            "tools/call" => "tools/call needs params with the tool's name (a string) and its arguments (a JSON object)".to_string(),
            method => {
                return Err(ErrorData::new(
                    ErrorCode::METHOD_NOT_FOUND,
                    format!("method not found: {method}"),
                    None,
                ))
            }
        };
        Err(ErrorData::invalid_params(why, None))
    }
}

/// The method a request the stdio reader cannot pass on exactly is renamed to, so that rmcp
/// answers it (with the reason in its params) instead of dropping it unanswered.
const UNREADABLE: &str = "toolschema/unreadable-request";

/// The request rmcp reads in place of one it cannot read exactly: the same id, the method
/// [`UNREADABLE`], and why.
fn unreadable(id: &str, why: &str) -> String {
    let params = serde_json::json!({ "why": why });
    format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"{UNREADABLE}","params":{params}}}"#)
}

/// What the stdio reader does with a line from the client.
#[derive(Debug, PartialEq)]
pub(crate) enum Inbound {
    /// Pass the line on to rmcp as it is.
    Pass,
    /// Pass this on to rmcp in its place: a request it would read with a value changed or not
    /// at all (a number past the float range or past what a float holds exactly, a lone
    /// surrogate), renamed to [`UNREADABLE`] so that it is answered with the reason.
    Replace(String),
    /// Answer the client with this line at once; rmcp never sees the line.
    Answer {
        /// The JSON-RPC error.
        line: String,
        /// Whether it answers a request (it carries the request's id), not a line that is none.
        to_request: bool,
    },
}

/// The longest request id quoted whole in an error message.
const QUOTED_ID_MAX: usize = 64;

/// What to do with a line from the client over stdio. rmcp answers a line it cannot read as a
/// message with an error that has no `id` at all, so a client waiting for the answer to its
/// request never gets one it can match; such lines are answered here instead, with the reason
/// and the id exactly as the client wrote it: a line that is not JSON (a parse error, id null),
/// a batch or any other JSON that is not an object (id null), and a request whose id rmcp cannot
/// hold exactly (a fraction, an integer past 63 bits, a lone surrogate) or that rmcp cannot read
/// as a request. Notifications and responses are left to rmcp, which ignores or refuses them
/// as it does.
pub(crate) fn inbound(line: &str) -> Inbound {
    use toolschema::json::{position_of, root_members};
    let text = line.trim();
    if text.is_empty() {
        return Inbound::Pass;
    }
    let members = match root_members(text) {
        Ok(Some(members)) => members,
        Ok(None) => {
            let why = if text.starts_with('[') {
                "a JSON-RPC batch (an array) is not something MCP takes: send each message on a line of its own"
            } else {
                "a JSON-RPC message is a JSON object"
            };
            return Inbound::Answer {
                line: error_line("null", ErrorCode::INVALID_REQUEST, why),
                to_request: false,
            };
        }
        Err(e) => {
            let column = position_of(text, e.offset).column;
            let why = format!(
                "the line is not valid JSON: {} at column {column}",
                e.message
            );
            return Inbound::Answer {
                line: error_line("null", ErrorCode::PARSE_ERROR, &why),
                to_request: false,
            };
        }
    };
    // Of a key given twice the last counts, as rmcp's reader takes it.
    let member = |key: &str| {
        members
            .iter()
            .rev()
            .find(|m| m.key == key)
            .map(|m| &text[m.value.clone()])
    };
    let id = member("id").filter(|id| *id != "null");
    let (Some(_), Some(id)) = (member("method"), id) else {
        return Inbound::Pass;
    };
    // JSON-RPC ids are strings or numbers; an answer to any other says null.
    let echoed = if id.starts_with(['"', '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9']) {
        id
    } else {
        "null"
    };
    let quoted = if id.len() <= QUOTED_ID_MAX {
        id.to_string()
    } else {
        format!("of {} characters", id.len())
    };
    let refuse = |why: String| Inbound::Answer {
        line: error_line(echoed, ErrorCode::INVALID_REQUEST, &why),
        to_request: echoed != "null",
    };
    if echoed == "null" {
        return refuse(format!(
            "the request id {quoted} is neither a string nor a number, as JSON-RPC ids are"
        ));
    }
    let held_exactly = serde_json::from_str::<rmcp::model::RequestId>(id).is_ok()
        && toolschema::json::first_lossy_value(id).is_none();
    if !held_exactly {
        return refuse(format!(
            "the request id {quoted} cannot be held exactly by this server, which takes ids that are strings (without lone surrogates) or integers from -2^63 to 2^63-1; send the request again with another id"
        ));
    }
    match serde_json::from_str::<rmcp::model::ClientJsonRpcMessage>(text) {
        // A value serde_json refuses (past the float range, a lone surrogate; the grammar was
        // checked above): rmcp could not read the request at all.
        Err(e) if e.classify() == serde_json::error::Category::Syntax => Inbound::Replace(unreadable(
            id,
            &format!(
                "the request is valid JSON that this server cannot read exactly ({e}): a number past the 64-bit float range or a lone surrogate (\\uD800-\\uDFFF)"
            ),
        )),
        Err(e) => {
            // serde's message for rmcp's message type says little; the usual reasons first.
            let why = if member("jsonrpc") != Some(r#""2.0""#) {
                r#"its "jsonrpc" member is not "2.0""#.to_string()
            } else if !member("method").is_some_and(|m| m.starts_with('"')) {
                r#"its "method" is not a string"#.to_string()
            } else if member("params").is_some_and(|p| !p.starts_with('{') && p != "null") {
                r#"its "params" is not a JSON object"#.to_string()
            } else {
                e.to_string()
            };
            refuse(format!(
                "the request with id {quoted} is not a JSON-RPC 2.0 request this server can read: {why}"
            ))
        }
        // Read, but a number read otherwise than written would reach the command changed.
        Ok(_) => match toolschema::json::first_lossy_value(text).map(|lossy| lossy.loss) {
            Some(Loss::Rounded { literal, read }) => Inbound::Replace(unreadable(
                id,
                &format!(
                    "the request holds the number {literal}, which this server reads as a 64-bit float and would pass on as {read}; send it as a string"
                ),
            )),
            // What serde_json reads at all it reads in range and without lone surrogates.
            _ => Inbound::Pass,
        },
    }
}

/// A JSON-RPC error answer, on one line: `id` is JSON text (the client's own, or `null`).
fn error_line(id: &str, code: ErrorCode, message: &str) -> String {
    let error = serde_json::json!({"code": code.0, "message": message});
    format!(r#"{{"jsonrpc":"2.0","id":{id},"error":{error}}}"#)
}

/// Standard input as rmcp reads it: line by line through [`inbound`], the answers it gives at
/// once sent to `answers`.
fn filtered_stdin(answers: tokio::sync::mpsc::UnboundedSender<String>) -> tokio::io::DuplexStream {
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt};
    let (mut to_rmcp, from_stdin) = tokio::io::duplex(64 * 1024);
    tokio::spawn(async move {
        let mut stdin = tokio::io::BufReader::new(tokio::io::stdin());
        let mut line = Vec::new();
        loop {
            line.clear();
            match stdin.read_until(b'\n', &mut line).await {
                Ok(0) | Err(_) => break,
                Ok(_) => {}
            }
            // A byte order mark is no part of a message (rmcp's reader refuses it).
            if line.starts_with(b"\xEF\xBB\xBF") {
                line.drain(..3);
            }
            let what = match std::str::from_utf8(&line) {
                Ok(text) => inbound(text),
                Err(e) => {
                    let why = format!("the line is not UTF-8 (at byte {})", e.valid_up_to());
                    Inbound::Answer {
                        line: error_line("null", ErrorCode::PARSE_ERROR, &why),
                        to_request: false,
                    }
                }
            };
            let written = match what {
                Inbound::Pass => to_rmcp.write_all(&line).await,
                Inbound::Replace(replacement) => {
                    tracing::warn!(
                        "a request cannot be read exactly; it is answered with an error"
                    );
                    to_rmcp
                        .write_all(format!("{replacement}\n").as_bytes())
                        .await
                }
                Inbound::Answer { line: answer, .. } => {
                    tracing::warn!("a line rmcp cannot read is answered with an error: {answer}");
                    answers
                        .send(answer)
                        .map_err(|_| std::io::ErrorKind::BrokenPipe.into())
                }
            };
            if written.is_err() {
                break;
            }
        }
        // Dropping the writer ends rmcp's input: the session ends as it would at the end of stdin.
    });
    from_stdin
}

/// Serve MCP over standard input and output until the client closes it, or until SIGINT or
/// SIGTERM. Returning drops the runtime, and with it every running command, which is killed.
pub(crate) async fn serve_stdio(server: ToolServer) -> Result<(), ServeError> {
    use rmcp::ServiceExt;
    let (answers, answered) = tokio::sync::mpsc::unbounded_channel();
    let (from_rmcp, to_stdout) = tokio::io::duplex(64 * 1024);
    let stdout = tokio::spawn(write_stdout(to_stdout, answered));
    let running = server
        .serve((filtered_stdin(answers), from_rmcp))
        .await
        .map_err(|e| ServeError::Session(e.to_string()))?;
    tokio::select! {
        ended = running.waiting() => {
            ended.map_err(|e| ServeError::Session(e.to_string()))?;
            // rmcp's output has ended: what is left of it and of the answers goes out.
            let _ = tokio::time::timeout(STDOUT_DRAIN, stdout).await;
        }
        // Clients stop servers with SIGTERM when closing takes long; commands still running
        // must not outlive the server.
        () = shutdown_signal() => {}
    }
    Ok(())
}

/// How long the last answers may take to be written once the session has ended.
const STDOUT_DRAIN: std::time::Duration = std::time::Duration::from_secs(5);

/// Write rmcp's messages and the answers [`inbound`] gives to standard output, each a whole
/// line, until rmcp's output ends.
async fn write_stdout(
    from_rmcp: tokio::io::DuplexStream,
    mut answers: tokio::sync::mpsc::UnboundedReceiver<String>,
) {
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt};
    let mut rmcp = tokio::io::BufReader::new(from_rmcp);
    let mut stdout = tokio::io::stdout();
    let mut line = Vec::new();
    let mut answers_open = true;
    loop {
        // A line of rmcp's is written only once whole (a read cut short by an answer keeps
        // what it read in `line` and goes on from there), so answers never split one.
        let out = tokio::select! {
            read = rmcp.read_until(b'\n', &mut line) => match read {
                Ok(0) | Err(_) => break,
                Ok(_) => std::mem::take(&mut line),
            },
            answer = answers.recv(), if answers_open => match answer {
                Some(answer) => format!("{answer}\n").into_bytes(),
                None => {
                    answers_open = false;
                    continue;
                }
            },
        };
        if stdout.write_all(&out).await.is_err() || stdout.flush().await.is_err() {
            return;
        }
    }
    while let Ok(answer) = answers.try_recv() {
        if stdout
            .write_all(format!("{answer}\n").as_bytes())
            .await
            .is_err()
        {
            return;
        }
    }
    let _ = stdout.flush().await;
}

/// Resolves on SIGINT (Ctrl-C) or, on Unix, SIGTERM. The handlers are in place when this
/// returns, before the future is first polled: a signal that arrives right after a server says
/// it is ready stops it gracefully instead of killing it.
pub(crate) fn shutdown_signal() -> impl std::future::Future<Output = ()> {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        let interrupt = signal(SignalKind::interrupt());
        let terminate = signal(SignalKind::terminate());
        async move {
            match (interrupt, terminate) {
                (Ok(mut interrupt), Ok(mut terminate)) => {
                    tokio::select! {
                        _ = interrupt.recv() => {}
                        _ = terminate.recv() => {}
                    }
                }
                _ => {
                    let _ = tokio::signal::ctrl_c().await;
                }
            }
        }
    }
    #[cfg(not(unix))]
    {
        async {
            let _ = tokio::signal::ctrl_c().await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The id an answer [`inbound`] gives carries, as JSON text.
    fn answered_id(answer: &str) -> &str {
        let rest = answer
            .strip_prefix(r#"{"jsonrpc":"2.0","id":"#)
            .expect("an answer starts with its id");
        let end = rest.rfind(r#","error":{"#).expect("an error answer");
        &rest[..end]
    }

    /// Whether rmcp reads `id` as a request id of the same JSON value.
    fn rmcp_holds(id: &str) -> bool {
        let Ok(held) = serde_json::from_str::<rmcp::model::RequestId>(id) else {
            return false;
        };
        let written = serde_json::to_string(&held).unwrap();
        let sent: Value = serde_json::from_str(id).unwrap();
        let back: Value = serde_json::from_str(&written).unwrap();
        match (&sent, &back) {
            (Value::Number(a), Value::Number(b)) => a.as_f64() == b.as_f64(),
            _ => sent == back,
        }
    }

    fn id_text() -> impl Strategy<Value = String> {
        prop_oneof![
            any::<i64>().prop_map(|n| n.to_string()),
            any::<u64>().prop_map(|n| n.to_string()),
            any::<i128>().prop_map(|n| n.to_string()),
            (any::<i32>(), 0u32..4)
                .prop_map(|(n, zeros)| format!("{n}.{}", "0".repeat(zeros as usize + 1))),
            any::<f64>()
                .prop_filter("finite", |f| f.is_finite())
                .prop_map(|f| format!("{f:e}")),
            (1u32..9, 300u32..400).prop_map(|(d, e)| format!("{d}e{e}")),
            "(0|[1-9][0-9]{0,29})\\.[0-9]{1,25}",
            "-?[1-9][0-9]{0,25}(e[+-]?[0-9]{1,3})?",
            "[a-zA-Z0-9 _-]{0,12}".prop_map(|s| format!("\"{s}\"")),
            (0xD800u32..0xE000).prop_map(|u| format!("\"a\\u{u:04x}b\"")),
            Just("\"\\ud83d\\ude00\"".to_string()),
            Just("true".to_string()),
            Just("false".to_string()),
            Just("{}".to_string()),
            Just("[1]".to_string()),
            Just("{\"a\":1}".to_string()),
        ]
    }

    proptest! {
        /// Every request gets an answer the client can match: either rmcp reads its id as the
        /// same value (and answers it), or it is answered here with the id exactly as sent (null
        /// for an id JSON-RPC does not allow).
        #[test]
        fn every_request_id_is_answered_as_sent_or_held_exactly(id in id_text()) {
            let line = format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"ping"}}"#);
            match inbound(&line) {
                Inbound::Pass => prop_assert!(rmcp_holds(&id), "{id} passed on to rmcp, which does not hold it"),
                Inbound::Replace(other) => prop_assert!(false, "{id} replaced: {other}"),
                Inbound::Answer { line: answer, .. } => {
                    let parsed: Value = toolschema::json::parse_with(&answer, toolschema::json::DuplicateKeys::KeepLast).unwrap();
                    prop_assert_eq!(&parsed["error"]["code"], &serde_json::json!(-32600));
                    let expected = if id.starts_with(['"', '-']) || id.starts_with(|c: char| c.is_ascii_digit()) { id.as_str() } else { "null" };
                    prop_assert_eq!(answered_id(&answer), expected);
                    prop_assert!(expected == "null" || !rmcp_holds(&id) || toolschema::json::first_lossy_value(&id).is_some(), "{id} answered though rmcp holds it");
                }
            }
        }
    }

    #[test]
    fn lines_that_are_no_request_are_answered_with_a_null_id() {
        for (line, code, says) in [
            (
                "{bad",
                -32700,
                "not valid JSON: expected an object key in double quotes at column 2",
            ),
            (
                "[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}]",
                -32600,
                "batch",
            ),
            ("\"x\"", -32600, "a JSON-RPC message is a JSON object"),
        ] {
            let Inbound::Answer { line: answer, .. } = inbound(line) else {
                panic!("{line} not answered");
            };
            assert_eq!(answered_id(&answer), "null", "{line}");
            let parsed: Value = serde_json::from_str(&answer).unwrap();
            assert_eq!(parsed["error"]["code"], code, "{line}");
            assert!(
                parsed["error"]["message"].as_str().unwrap().contains(says),
                "{answer}"
            );
        }
    }

    #[test]
    fn requests_rmcp_cannot_read_are_answered_with_the_reason() {
        for (line, says) in [
            (
                r#"{"jsonrpc":"1.0","id":8,"method":"ping"}"#,
                r#"its "jsonrpc" member is not "2.0""#,
            ),
            (
                r#"{"jsonrpc":"2.0","id":7,"method":5}"#,
                r#"its "method" is not a string"#,
            ),
            (
                r#"{"jsonrpc":"2.0","id":9,"method":"ping","params":[1]}"#,
                r#"its "params" is not a JSON object"#,
            ),
        ] {
            let Inbound::Answer { line: answer, .. } = inbound(line) else {
                panic!("{line} not answered");
            };
            let parsed: Value = serde_json::from_str(&answer).unwrap();
            assert!(parsed["id"].is_i64(), "{answer}");
            assert!(
                parsed["error"]["message"].as_str().unwrap().ends_with(says),
                "{answer}"
            );
        }
        // Notifications and well-formed requests are rmcp's.
        for line in [
            r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
            r#"{"jsonrpc":"2.0","method":"notifications/whatever","params":5}"#,
            r#"{"jsonrpc":"2.0","id":"a","method":"ping","params":null}"#,
            r#"{"jsonrpc":"2.0","id":2.0,"method":"ping"}"#,
            "",
        ] {
            assert_eq!(inbound(line), Inbound::Pass, "{line}");
        }
    }
}
