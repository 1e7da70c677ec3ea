//! The MCP server on rmcp: `tools/list` returns the tool set's tools unchanged, `tools/call`
//! checks a call, runs the command, and returns what it printed. Served over stdio, or over
//! Streamable HTTP ([`crate::http`]), where the guard decides which tools each client sees and
//! may call.

use crate::exec::{self, Limits};
use crate::tools::{CallError, ToolSet};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool as WireTool,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler};
use serde_json::Value;
use std::path::PathBuf;
use std::sync::Arc;
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
}

/// Serve MCP over standard input and output until the client closes it, or until SIGINT or
/// SIGTERM. Returning drops the runtime, and with it every running command, which is killed.
pub(crate) async fn serve_stdio(server: ToolServer) -> Result<(), ServeError> {
    use rmcp::ServiceExt;
    let running = server
        .serve(rmcp::transport::stdio())
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
