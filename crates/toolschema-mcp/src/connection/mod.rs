//! A client session with a live server, over stdio or Streamable HTTP, that keeps what rmcp's
//! typed model would lose: results exactly as sent, and anything the server sent that does not
//! belong in a session ([`raw`]). `snapshot` and `fuzz` both connect through here.
//!
//! The session itself runs on rmcp: the `initialize` handshake and protocol version, the
//! `notifications/initialized` that follows, answers to the server's pings, request ids, and for
//! `--url` the Streamable HTTP session.

pub mod client;
pub(crate) mod http_client;
pub mod raw;
pub(crate) mod stdio;

use crate::server_process::{ServerCommand, ServerProcess, SpawnError, StderrMode};
use raw::{RawResults, Unreadable, Watch};
use rmcp::model::{
    ClientCapabilities, ClientConfig, ClientRequest, ErrorData, Implementation,
    PaginatedRequestParams, ProtocolVersion, RequestOptionalParam,
};
use rmcp::service::{PeerRequestOptions, RoleClient, RunningService, ServiceError};
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::{ClientHandler, ServiceExt};
use serde_json::Value;
use std::collections::{HashMap, HashSet};
use std::fmt;

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

/// The client's side of the handshake.
pub(crate) fn client_info() -> ClientConfig {
    ClientConfig::new(
        ClientCapabilities::default(),
        Implementation::new("toolschema", env!("CARGO_PKG_VERSION")),
    )
    .with_protocol_version(ProtocolVersion::LATEST_WITH_INITIALIZE)
}

/// The client: it declares no capabilities and answers the server's requests with rmcp's
/// defaults (pings answered, sampling and elicitation declined).
#[derive(Debug, Clone)]
pub(crate) struct PlainClient(ClientConfig);

impl PlainClient {
    pub(crate) fn new() -> Self {
        PlainClient(client_info())
    }
}

impl ClientHandler for PlainClient {
    fn get_info(&self) -> ClientConfig {
        self.0.clone()
    }
}

/// A running session.
pub(crate) type Session = RunningService<RoleClient, PlainClient>;

/// A failed step of the session, before it is put in words with what is known about the server.
#[derive(Debug)]
pub(crate) enum SessionFailure {
    /// The connection closed (for a child process: usually because it exited).
    Closed(String),
    /// The server answered with a JSON-RPC error.
    Error(ErrorData),
    /// The server's answer could not be read (not JSON, not JSON-RPC, over the size limit):
    /// what it sent. A server that breaks the protocol this way may be on its way out.
    Unreadable(Unreadable),
    /// The server answered, but with something the client cannot use (a result that is not a
    /// tool list, a cursor it already sent): the server is running, so its exit is not awaited.
    Misbehaved(String),
    /// Anything else.
    Other(String),
}

impl SessionFailure {
    /// How long to wait for the server (a child process) to exit before saying how the step
    /// failed: a closed connection is most often a server that exited, and an answer that is
    /// not JSON-RPC may be the cut-off last words of one that died while writing. `None` for a
    /// server that answered and so is running.
    pub(crate) fn exit_wait(&self) -> Option<std::time::Duration> {
        use std::time::Duration;
        match self {
            SessionFailure::Closed(_) | SessionFailure::Other(_) => Some(Duration::from_secs(2)),
            SessionFailure::Unreadable(unreadable) if unreadable.breaks_protocol => {
                Some(Duration::from_secs(1))
            }
            SessionFailure::Unreadable(_)
            | SessionFailure::Error(_)
            | SessionFailure::Misbehaved(_) => None,
        }
    }

    /// What the server sent that could not be read, to say beside its exit.
    pub(crate) fn unreadable_sent(&self) -> Option<&str> {
        match self {
            SessionFailure::Unreadable(unreadable) => Some(&unreadable.why),
            _ => None,
        }
    }
}

impl fmt::Display for SessionFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SessionFailure::Closed(reason) => write!(f, "the connection closed ({reason})"),
            SessionFailure::Error(error) => write!(
                f,
                "it answered with error {}: {}",
                error.code.0, error.message
            ),
            SessionFailure::Unreadable(unreadable) => f.write_str(&unreadable.why),
            SessionFailure::Other(message) | SessionFailure::Misbehaved(message) => {
                f.write_str(message)
            }
        }
    }
}

/// Start a server command with its stderr captured, and open a session over its stdio
/// (the handshake is not done yet: see [`handshake`]).
pub(crate) fn spawn_stdio(
    command: &ServerCommand,
    results: &RawResults,
    watch: &Watch,
    max_message_bytes: usize,
) -> Result<(ServerProcess, stdio::RawStdioTransport), SpawnError> {
    let (process, stdin, stdout) = ServerProcess::spawn(command, StderrMode::Capture)?;
    let transport = stdio::RawStdioTransport::new(
        stdin,
        stdout,
        results.clone(),
        watch.clone(),
        max_message_bytes,
    );
    Ok((process, transport))
}

/// Check that `url` can be spoken to: `http://` or `https://` with a host.
pub(crate) fn check_url(url: &str) -> Result<(), String> {
    let usable = url.parse::<http::Uri>().is_ok_and(|uri| {
        matches!(uri.scheme_str(), Some("http" | "https")) && uri.host().is_some()
    });
    if usable {
        Ok(())
    } else {
        Err(format!(
            "'{url}' is not an http:// or https:// URL with a host (like http://127.0.0.1:3001/mcp)"
        ))
    }
}

/// A Streamable HTTP transport to `url` sending `headers` with every request.
pub(crate) fn http_transport(
    url: &str,
    headers: &[(String, String)],
    results: &RawResults,
    watch: &Watch,
    max_message_bytes: usize,
) -> Result<StreamableHttpClientTransport<http_client::HttpClient>, String> {
    check_url(url)?;
    let mut custom = HashMap::new();
    for (name, value) in headers {
        let name = http::HeaderName::try_from(name.as_str())
            .map_err(|e| format!("header name '{name}': {e}"))?;
        let value = http::HeaderValue::try_from(value.as_str())
            .map_err(|e| format!("header '{name}' value: {e}"))?;
        custom.insert(name, value);
    }
    let client = http_client::HttpClient::new(results.clone(), watch.clone(), max_message_bytes);
    let config = StreamableHttpClientTransportConfig::with_uri(url)
        .custom_headers(custom)
        .max_sse_event_size(max_message_bytes);
    Ok(StreamableHttpClientTransport::with_client(client, config))
}

/// The `initialize` handshake over a transport that reports to `watch`.
pub(crate) async fn handshake<T, E, A>(
    transport: T,
    watch: &Watch,
) -> Result<Session, SessionFailure>
where
    T: rmcp::transport::IntoTransport<RoleClient, E, A>,
    E: std::error::Error + Send + Sync + 'static,
{
    PlainClient::new()
        .serve(transport)
        .await
        .map_err(|error| match initialize_failure(error) {
            // The only request in flight is `initialize`.
            SessionFailure::Error(error) => match watch.any_unreadable_answer() {
                Some(unreadable) => SessionFailure::Unreadable(unreadable),
                None => SessionFailure::Error(error),
            },
            failure => failure,
        })
}

/// How many `tools/list` pages a listing may have: a server that hands out a new cursor with every
/// page would otherwise be listed until the time limit.
const MAX_PAGES: usize = 10_000;

/// Every tool of every `tools/list` page, each as read.
pub(crate) struct Listed {
    /// The tools, in order.
    pub tools: Vec<Value>,
    /// How many pages there were.
    pub pages: usize,
    /// The tools whose definitions hold a value that reading changed, by their place in
    /// `tools`, with one such value of each: its lone surrogate escape where it holds one, or
    /// else its first changed number ([`crate::message::lossy_tools`]).
    pub lossy: Vec<(usize, toolschema::json::Loss)>,
    /// For each tool, the numbers of its definition that reading changed, as the text states
    /// them (pointers from the tool object).
    pub stated: Vec<toolschema::json::number::StatedNumbers>,
}

/// Every tool of every `tools/list` page, each as sent, and how many pages there were.
/// `on_page` is told the number of each page before it is asked for.
pub(crate) async fn list_all_tools(
    peer: &rmcp::service::Peer<RoleClient>,
    results: &RawResults,
    watch: &Watch,
    mut on_page: impl FnMut(usize),
) -> Result<Listed, SessionFailure> {
    let mut tools = Vec::new();
    let mut lossy = Vec::new();
    let mut stated = Vec::new();
    let mut cursor: Option<String> = None;
    let mut seen_cursors = HashSet::new();
    let mut pages = 0;
    loop {
        pages += 1;
        if pages > MAX_PAGES {
            return Err(SessionFailure::Misbehaved(format!(
                "it returned {MAX_PAGES} pages of tools and a cursor for more; the listing would never end"
            )));
        }
        on_page(pages);
        let params = PaginatedRequestParams::default().with_cursor(cursor.clone());
        let request = ClientRequest::ListToolsRequest(RequestOptionalParam::with_param(params));
        let handle = peer
            .send_request_with_option(request, PeerRequestOptions::no_options())
            .await
            .map_err(service_failure)?;
        let id = handle.id.clone();
        match handle.await_response().await {
            Ok(_) => {}
            Err(ServiceError::McpError(error)) => {
                return Err(match watch.unreadable_answer(&id) {
                    Some(unreadable) => SessionFailure::Unreadable(unreadable),
                    None => SessionFailure::Error(error),
                })
            }
            Err(error) => return Err(service_failure(error)),
        }
        let (result, loss) = results.take_read(&id).ok_or_else(|| {
            SessionFailure::Misbehaved("its response carried no result".to_string())
        })?;
        let before = tools.len();
        let (page_tools, next) = read_page(result)?;
        stated.extend((0..page_tools.len()).map(|at| loss.stated_tools.below(&format!("/{at}"))));
        lossy.extend(
            loss.lossy_tools
                .into_iter()
                .map(|(at, loss)| (before + at, loss)),
        );
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
    Ok(Listed {
        tools,
        pages,
        lossy,
        stated,
    })
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
    let next = crate::message::next_cursor(&Value::Object(result))
        .map_err(SessionFailure::Misbehaved)?
        .map(str::to_string);
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

/// A request's failure as a step of the session.
pub(crate) fn service_failure(error: ServiceError) -> SessionFailure {
    match error {
        ServiceError::McpError(error) => SessionFailure::Error(error),
        ServiceError::TransportClosed => SessionFailure::Closed("transport closed".to_string()),
        ServiceError::TransportSend(error) => SessionFailure::Closed(transport_message(&error)),
        other => SessionFailure::Other(other.to_string()),
    }
}

/// A transport error in words, without rmcp's wrapping (transport type names, "Client error").
pub(crate) fn transport_message(error: &rmcp::transport::DynamicTransportError) -> String {
    use rmcp::transport::streamable_http_client::StreamableHttpError;
    match error
        .error
        .downcast_ref::<StreamableHttpError<http_client::HttpError>>()
    {
        Some(StreamableHttpError::Client(inner)) => inner.to_string(),
        _ => error.error.to_string(),
    }
}
