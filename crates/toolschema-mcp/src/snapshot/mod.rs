//! `snapshot`: connect to a live MCP server, list every tool, and keep the tools exactly as the
//! server sent them.
//!
//! The session itself runs on rmcp: the `initialize` handshake and protocol version, the
//! `notifications/initialized` that follows, answers to the server's pings, request ids, and for
//! `--url` the Streamable HTTP session. What rmcp cannot give is the tools as sent (its typed
//! `Tool` drops fields it does not know and writes keys in its own order), so the transports keep
//! each raw result beside the typed message ([`raw`]) and the tools are read from there.

mod http_client;
mod raw;
mod stdio;

use crate::framing::DEFAULT_MAX_MESSAGE_BYTES;
use crate::server_process::{
    describe_exit, ServerCommand, ServerProcess, SpawnError, StderrMode, StderrTail,
    DEFAULT_SHUTDOWN_GRACE,
};
use raw::RawResults;
use rmcp::model::{
    ClientCapabilities, ClientConfig, ClientRequest, ErrorData, Implementation,
    PaginatedRequestParams, ProtocolVersion, RequestOptionalParam,
};
use rmcp::service::{PeerRequestOptions, RoleClient, RunningService, ServiceError};
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::{ClientHandler, ServiceExt};
use serde_json::{json, Value};
use std::collections::{HashMap, HashSet};
use std::fmt;
use std::sync::Mutex;
use std::time::Duration;
use tokio::signal::unix::Signal;

/// How long a server that failed the snapshot gets to exit before it is stopped.
const FAILED_SERVER_GRACE: Duration = Duration::from_millis(300);

/// Where the server is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// A server started as a child process, spoken to over stdio.
    Command(ServerCommand),
    /// A server at a Streamable HTTP endpoint (`http://` or `https://`).
    Url(String),
}

impl fmt::Display for Target {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Target::Command(command) => write!(f, "'{command}'"),
            Target::Url(url) => f.write_str(url),
        }
    }
}

/// How a snapshot is taken.
#[derive(Debug, Clone)]
pub struct SnapshotOptions {
    /// How long the whole snapshot may take, server start included.
    pub timeout: Duration,
    /// HTTP headers sent with every request (`--url` only).
    pub headers: Vec<(String, String)>,
    /// The largest message accepted from the server.
    pub max_message_bytes: usize,
}

impl Default for SnapshotOptions {
    fn default() -> Self {
        SnapshotOptions {
            timeout: Duration::from_secs(30),
            headers: Vec::new(),
            max_message_bytes: DEFAULT_MAX_MESSAGE_BYTES,
        }
    }
}

/// The tools a server listed, as it sent them.
#[derive(Debug, Clone, PartialEq)]
pub struct Snapshot {
    /// Every tool of every page, in order, each exactly as sent (keys in the server's order).
    pub tools: Vec<Value>,
    /// How many `tools/list` pages the server returned.
    pub pages: usize,
}

impl Snapshot {
    /// The snapshot as a `tools/list` result: `{"tools": [...]}`.
    pub fn to_value(&self) -> Value {
        json!({"tools": self.tools})
    }
}

/// What the snapshot was waiting for when it failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// The `initialize` handshake.
    Initialize,
    /// A `tools/list` page (1-based).
    ListTools(usize),
}

impl fmt::Display for Phase {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Phase::Initialize => f.write_str("the initialize response"),
            Phase::ListTools(1) => f.write_str("the tools/list response"),
            Phase::ListTools(page) => write!(f, "tools/list page {page}"),
        }
    }
}

/// Why a snapshot failed.
#[derive(Debug, thiserror::Error)]
pub enum SnapshotError {
    /// The server could not be started.
    #[error(transparent)]
    Spawn(#[from] SpawnError),
    /// The server exited before the snapshot was complete.
    #[error("the MCP server {target} exited with {status} while the snapshot waited for {phase}{}", stderr_note(.stderr))]
    ServerExited {
        /// The server.
        target: String,
        /// How it exited.
        status: String,
        /// What the snapshot was waiting for.
        phase: Phase,
        /// The last lines of its stderr.
        stderr: Option<String>,
    },
    /// The server did not answer in time.
    #[error("the MCP server {target} did not send {phase} within {}s (--timeout){}", .after.as_secs_f64(), stderr_note(.stderr))]
    Timeout {
        /// The server.
        target: String,
        /// What the snapshot was waiting for.
        phase: Phase,
        /// The time allowed.
        after: Duration,
        /// The last lines of its stderr.
        stderr: Option<String>,
    },
    /// The server answered with an error or with something that is not a tool list.
    #[error("the MCP server {target} failed while the snapshot waited for {phase}: {message}{}", stderr_note(.stderr))]
    Protocol {
        /// The server.
        target: String,
        /// What the snapshot was waiting for.
        phase: Phase,
        /// What went wrong.
        message: String,
        /// The last lines of its stderr.
        stderr: Option<String>,
    },
    /// Interrupted (Ctrl-C) before it was complete.
    #[error("interrupted; the snapshot is incomplete and was not written")]
    Interrupted,
    /// An option is unusable (a header that is not `Name: value`).
    #[error("{0}")]
    Options(String),
    /// Ctrl-C cannot be listened for.
    #[error("cannot listen for Ctrl-C: {0}")]
    Signal(std::io::Error),
}

fn stderr_note(stderr: &Option<String>) -> String {
    match stderr {
        Some(block) => format!("; the last lines of its stderr:\n{block}"),
        None => String::new(),
    }
}

/// Take a snapshot of a server's tools.
pub async fn take(target: &Target, options: &SnapshotOptions) -> Result<Snapshot, SnapshotError> {
    // Listen for Ctrl-C before the server starts: one that came earlier would end the process
    // with the default action, leaving the server running.
    let mut interrupt = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::interrupt())
        .map_err(SnapshotError::Signal)?;
    match target {
        Target::Command(command) => take_over_stdio(target, command, options, &mut interrupt).await,
        Target::Url(url) => take_over_http(target, url, options, &mut interrupt).await,
    }
}

/// The client's side of the handshake.
fn client_info() -> ClientConfig {
    ClientConfig::new(
        ClientCapabilities::default(),
        Implementation::new("toolschema", env!("CARGO_PKG_VERSION")),
    )
    .with_protocol_version(ProtocolVersion::LATEST_WITH_INITIALIZE)
}

/// A failed step of the session, before it is put in words with what is known about the server.
enum SessionFailure {
    /// The connection closed (for a child process: usually because it exited).
    Closed(String),
    /// The server answered with a JSON-RPC error.
    Error(ErrorData),
    /// The server answered, but with something the snapshot cannot use (a result that is not a
    /// tool list, a cursor it already sent): the server is running, so its exit is not awaited.
    Misbehaved(String),
    /// Anything else.
    Other(String),
}

async fn take_over_stdio(
    target: &Target,
    command: &ServerCommand,
    options: &SnapshotOptions,
    interrupt: &mut Signal,
) -> Result<Snapshot, SnapshotError> {
    let (mut process, stdin, stdout) = ServerProcess::spawn(command, StderrMode::Capture)?;
    let tail = process.stderr_tail();
    let results = RawResults::default();
    let transport =
        stdio::RawStdioTransport::new(stdin, stdout, results.clone(), options.max_message_bytes);
    let phase = Mutex::new(Phase::Initialize);
    let outcome = within_limits(options, interrupt, run_session(transport, &results, &phase)).await;
    let phase = phase.into_inner().unwrap_or(Phase::Initialize);
    let result = match outcome {
        Outcome::Done(snapshot) => Ok(snapshot),
        Outcome::Failed(failure) => {
            // A closed connection or a failed write is most often a server that exited: say how.
            let exited = match failure {
                SessionFailure::Error(_) | SessionFailure::Misbehaved(_) => None,
                SessionFailure::Closed(_) | SessionFailure::Other(_) => {
                    process.wait_for_exit(Duration::from_secs(2)).await
                }
            };
            Err(match exited {
                Some(status) => SnapshotError::ServerExited {
                    target: target.to_string(),
                    status: describe_exit(status),
                    phase,
                    stderr: tail.block(),
                },
                None => protocol_error(target, phase, failure, &tail),
            })
        }
        Outcome::TimedOut => Err(SnapshotError::Timeout {
            target: target.to_string(),
            phase,
            after: options.timeout,
            stderr: tail.block(),
        }),
        Outcome::Interrupted => Err(SnapshotError::Interrupted),
    };
    // A server that failed gets less time to exit than one that answered everything.
    let grace = if result.is_ok() {
        DEFAULT_SHUTDOWN_GRACE
    } else {
        FAILED_SERVER_GRACE
    };
    process.shut_down(grace).await;
    result
}

async fn take_over_http(
    target: &Target,
    url: &str,
    options: &SnapshotOptions,
    interrupt: &mut Signal,
) -> Result<Snapshot, SnapshotError> {
    let usable = url.parse::<http::Uri>().is_ok_and(|uri| {
        matches!(uri.scheme_str(), Some("http" | "https")) && uri.host().is_some()
    });
    if !usable {
        return Err(SnapshotError::Options(format!(
            "'{url}' is not an http:// or https:// URL with a host (like http://127.0.0.1:3001/mcp)"
        )));
    }
    let mut headers = HashMap::new();
    for (name, value) in &options.headers {
        let name = http::HeaderName::try_from(name.as_str())
            .map_err(|e| SnapshotError::Options(format!("header name '{name}': {e}")))?;
        let value = http::HeaderValue::try_from(value.as_str())
            .map_err(|e| SnapshotError::Options(format!("header '{name}' value: {e}")))?;
        headers.insert(name, value);
    }
    let results = RawResults::default();
    let client = http_client::HttpClient::new(results.clone(), options.max_message_bytes);
    let config = StreamableHttpClientTransportConfig::with_uri(url)
        .custom_headers(headers)
        .max_sse_event_size(options.max_message_bytes);
    let transport = StreamableHttpClientTransport::with_client(client, config);
    let phase = Mutex::new(Phase::Initialize);
    let outcome = within_limits(options, interrupt, run_session(transport, &results, &phase)).await;
    let phase = phase.into_inner().unwrap_or(Phase::Initialize);
    match outcome {
        Outcome::Done(snapshot) => Ok(snapshot),
        Outcome::Failed(failure) => Err(protocol_error(
            target,
            phase,
            failure,
            &StderrTail::default(),
        )),
        Outcome::TimedOut => Err(SnapshotError::Timeout {
            target: target.to_string(),
            phase,
            after: options.timeout,
            stderr: None,
        }),
        Outcome::Interrupted => Err(SnapshotError::Interrupted),
    }
}

/// How a session ended.
enum Outcome {
    Done(Snapshot),
    Failed(SessionFailure),
    TimedOut,
    Interrupted,
}

/// Run a session within `--timeout`, unless the user interrupts it (Ctrl-C) first.
async fn within_limits(
    options: &SnapshotOptions,
    interrupt: &mut Signal,
    session: impl std::future::Future<Output = Result<Snapshot, SessionFailure>>,
) -> Outcome {
    tokio::select! {
        outcome = tokio::time::timeout(options.timeout, session) => match outcome {
            Ok(Ok(snapshot)) => Outcome::Done(snapshot),
            Ok(Err(failure)) => Outcome::Failed(failure),
            Err(_) => Outcome::TimedOut,
        },
        _ = interrupt.recv() => Outcome::Interrupted,
    }
}

fn protocol_error(
    target: &Target,
    phase: Phase,
    failure: SessionFailure,
    tail: &StderrTail,
) -> SnapshotError {
    let message = match failure {
        SessionFailure::Closed(reason) => format!("the connection closed ({reason})"),
        SessionFailure::Error(error) => {
            format!("it answered with error {}: {}", error.code.0, error.message)
        }
        SessionFailure::Other(message) | SessionFailure::Misbehaved(message) => message,
    };
    SnapshotError::Protocol {
        target: target.to_string(),
        phase,
        message,
        stderr: tail.block(),
    }
}

/// Initialize, list every page of tools, close.
async fn run_session<T, E, A>(
    transport: T,
    results: &RawResults,
    phase: &Mutex<Phase>,
) -> Result<Snapshot, SessionFailure>
where
    T: rmcp::transport::IntoTransport<RoleClient, E, A>,
    E: std::error::Error + Send + Sync + 'static,
{
    let client = SnapshotClient(client_info())
        .serve(transport)
        .await
        .map_err(initialize_failure)?;
    let listed = list_all_tools(&client, results, phase).await;
    // Closing politely (stdin closed, or the HTTP session deleted) is best effort.
    let _ = tokio::time::timeout(Duration::from_secs(2), client.cancel()).await;
    listed
}

async fn list_all_tools(
    client: &RunningService<RoleClient, SnapshotClient>,
    results: &RawResults,
    phase: &Mutex<Phase>,
) -> Result<Snapshot, SessionFailure> {
    let mut tools = Vec::new();
    let mut cursor: Option<String> = None;
    let mut seen_cursors = HashSet::new();
    let mut pages = 0;
    loop {
        pages += 1;
        if let Ok(mut phase) = phase.lock() {
            *phase = Phase::ListTools(pages);
        }
        let params = PaginatedRequestParams::default().with_cursor(cursor.clone());
        let request = ClientRequest::ListToolsRequest(RequestOptionalParam::with_param(params));
        let handle = client
            .peer()
            .send_request_with_option(request, PeerRequestOptions::no_options())
            .await
            .map_err(service_failure)?;
        let id = handle.id.clone();
        handle.await_response().await.map_err(service_failure)?;
        let result = results.take(&id).ok_or_else(|| {
            SessionFailure::Misbehaved("its response carried no result".to_string())
        })?;
        let (page_tools, next) = read_page(result)?;
        tools.extend(page_tools);
        match next {
            None => break,
            Some(next) => {
                if !seen_cursors.insert(next.clone()) {
                    return Err(SessionFailure::Misbehaved(format!(
                        "it repeated nextCursor {}, which an earlier page already returned; the \
                         listing would never end",
                        Value::String(next)
                    )));
                }
                cursor = Some(next);
            }
        }
    }
    Ok(Snapshot { tools, pages })
}

/// The tools of one page and the cursor of the next.
fn read_page(result: Value) -> Result<(Vec<Value>, Option<String>), SessionFailure> {
    let Value::Object(mut result) = result else {
        return Err(SessionFailure::Misbehaved(
            "its result is not a JSON object".to_string(),
        ));
    };
    let tools = match result.remove("tools") {
        Some(Value::Array(tools)) => tools,
        Some(_) => {
            return Err(SessionFailure::Misbehaved(
                "its result's \"tools\" is not an array".to_string(),
            ))
        }
        None => {
            return Err(SessionFailure::Misbehaved(
                "its result has no \"tools\" array".to_string(),
            ))
        }
    };
    let next = match result.remove("nextCursor") {
        Some(Value::String(cursor)) => Some(cursor),
        _ => None,
    };
    Ok((tools, next))
}

fn initialize_failure(error: rmcp::service::ClientInitializeError) -> SessionFailure {
    use rmcp::service::ClientInitializeError as E;
    match error {
        E::ConnectionClosed(reason) => SessionFailure::Closed(reason),
        E::JsonRpcError(error) => SessionFailure::Error(error),
        E::TransportError { error, .. } => SessionFailure::Other(transport_message(&error)),
        other => SessionFailure::Other(other.to_string()),
    }
}

fn service_failure(error: ServiceError) -> SessionFailure {
    match error {
        ServiceError::McpError(error) => SessionFailure::Error(error),
        ServiceError::TransportClosed => SessionFailure::Closed("transport closed".to_string()),
        ServiceError::TransportSend(error) => SessionFailure::Closed(transport_message(&error)),
        other => SessionFailure::Other(other.to_string()),
    }
}

/// A transport error in words, without rmcp's wrapping (transport type names, "Client error").
fn transport_message(error: &rmcp::transport::DynamicTransportError) -> String {
    use rmcp::transport::streamable_http_client::StreamableHttpError;
    match error
        .error
        .downcast_ref::<StreamableHttpError<http_client::HttpError>>()
    {
        Some(StreamableHttpError::Client(inner)) => inner.to_string(),
        _ => error.error.to_string(),
    }
}

/// The snapshot's client: it declares no capabilities and answers the server's requests with
/// rmcp's defaults (pings answered, sampling and elicitation declined).
#[derive(Debug, Clone)]
struct SnapshotClient(ClientConfig);

impl ClientHandler for SnapshotClient {
    fn get_info(&self) -> ClientConfig {
        self.0.clone()
    }
}
