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

/// What rmcp should read in place of a message from the client (a stdio line or an HTTP body),
/// when not the message itself: valid JSON that serde_json refuses (a number past the float
/// range, a lone surrogate) or would read rounded (an integer past 64 bits, which the command
/// would then get changed), in a request, becomes a request of [`UNREADABLE`] with the same id
/// and the reason. Anything else (a notification, malformed JSON) is left to rmcp.
pub(crate) fn in_place_of(line: &str) -> Option<String> {
    let text = line.trim();
    if text.is_empty() {
        return None;
    }
    let why = match serde_json::from_str::<Value>(text) {
        Ok(_) => match toolschema::json::first_lossy_value(text)?.loss {
            Loss::Rounded { literal, read } => format!(
                "the request holds the number {literal}, which this server reads as a 64-bit float and would pass on as {read}; send it as a string"
            ),
            // What serde_json reads at all it reads in range and without lone surrogates.
            Loss::PastFloatRange { .. } | Loss::LoneSurrogate { .. } => return None,
        },
        Err(e) => format!(
            "the request is valid JSON that this server cannot read exactly ({e}): a number past the 64-bit float range or a lone surrogate (\\uD800-\\uDFFF)"
        ),
    };
    let request =
        toolschema::json::parse_with(text, toolschema::json::DuplicateKeys::KeepLast).ok()?;
    request.get("method")?;
    let id = request.get("id").filter(|id| !id.is_null())?;
    Some(
        serde_json::json!({"jsonrpc": "2.0", "id": id, "method": UNREADABLE, "params": {"why": why}})
            .to_string(),
    )
}

/// Standard input as rmcp reads it: line by line through [`in_place_of`].
fn filtered_stdin() -> tokio::io::DuplexStream {
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
            let replaced = std::str::from_utf8(&line).ok().and_then(in_place_of);
            let written = match replaced {
                Some(replacement) => {
                    tracing::warn!(
                        "a request cannot be read exactly; it is answered with an error"
                    );
                    to_rmcp
                        .write_all(format!("{replacement}\n").as_bytes())
                        .await
                }
                None => to_rmcp.write_all(&line).await,
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
    let running = server
        .serve((filtered_stdin(), tokio::io::stdout()))
        .await
        .map_err(|e| ServeError::Session(e.to_string()))?;
    tokio::select! {
        ended = running.waiting() => {
            ended.map_err(|e| ServeError::Session(e.to_string()))?;
        }
        // Clients stop servers with SIGTERM when closing takes long; commands still running
        // must not outlive the server.
        () = shutdown_signal() => {}
    }
    Ok(())
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
