//! The MCP server on rmcp: `tools/list` returns the tool set's tools unchanged, `tools/call`
//! checks a call, runs the command, and returns what it printed. Served over stdio or
//! Streamable HTTP.

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
        })
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
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(self.wire.as_ref().clone()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
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

/// Serve MCP over Streamable HTTP at `http://HOST:PORT/mcp` until SIGINT or SIGTERM; `ready` is
/// told the address bound (useful with port 0).
pub(crate) async fn serve_http(
    server: ToolServer,
    host: &str,
    port: u16,
    ready: impl FnOnce(std::net::SocketAddr),
) -> Result<(), ServeError> {
    use hyper_util::rt::TokioIo;
    use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
    use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};

    let listener = tokio::net::TcpListener::bind((host, port)).await?;
    let address = listener.local_addr()?;
    let shutdown = tokio_util::sync::CancellationToken::new();
    let mut config =
        StreamableHttpServerConfig::default().with_cancellation_token(shutdown.child_token());
    // rmcp accepts loopback hosts only (against DNS rebinding); a server bound elsewhere on
    // purpose must accept its own address too.
    config.allowed_hosts.push(host.to_string());
    config.allowed_hosts.push(address.to_string());
    let service = StreamableHttpService::new(
        move || Ok(server.clone()),
        Arc::new(LocalSessionManager::default()),
        config,
    );
    ready(address);
    let graceful = hyper_util::server::graceful::GracefulShutdown::new();
    let mut signal = Box::pin(shutdown_signal());
    loop {
        tokio::select! {
            accepted = listener.accept() => {
                let Ok((stream, _)) = accepted else { continue };
                let service = service.clone();
                let routed = hyper::service::service_fn(move |request: hyper::Request<hyper::body::Incoming>| {
                    let mut service = service.clone();
                    async move {
                        if request.uri().path() == "/mcp" {
                            tower_service::Service::call(&mut service, request).await
                        } else {
                            Ok(not_found())
                        }
                    }
                });
                let connection = hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), routed);
                let connection = graceful.watch(connection);
                tokio::spawn(async move {
                    let _ = connection.await;
                });
            }
            () = &mut signal => break,
        }
    }
    shutdown.cancel();
    drop(listener);
    // Open event streams end when their sessions close; give them a moment, then stop anyway.
    let _ = tokio::time::timeout(std::time::Duration::from_secs(5), graceful.shutdown()).await;
    Ok(())
}

fn not_found(
) -> http::Response<http_body_util::combinators::BoxBody<bytes::Bytes, std::convert::Infallible>> {
    use http_body_util::BodyExt;
    let body = http_body_util::Full::new(bytes::Bytes::from_static(
        b"not found: the MCP endpoint is /mcp\n",
    ))
    .boxed();
    let mut response = http::Response::new(body);
    *response.status_mut() = http::StatusCode::NOT_FOUND;
    response
}

/// Resolves on SIGINT (Ctrl-C) or, on Unix, SIGTERM.
async fn shutdown_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        match signal(SignalKind::terminate()) {
            Ok(mut terminate) => {
                tokio::select! {
                    _ = tokio::signal::ctrl_c() => {}
                    _ = terminate.recv() => {}
                }
            }
            Err(_) => {
                let _ = tokio::signal::ctrl_c().await;
            }
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
    }
}
