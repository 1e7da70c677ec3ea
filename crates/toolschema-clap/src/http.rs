//! `mcp stream`: MCP over Streamable HTTP at `/mcp`, on rmcp's service, behind the guard of
//! toolschema-http.
//!
//! Each request to `/mcp` is admitted by the guard (Host, Origin, credentials), its body read
//! within the limit, every `tools/call` in it authorized, and a new session counted against its
//! client, before rmcp sees it. The client's [`Principal`] rides along in the request's
//! extensions, so that `tools/list` shows only the tools it may call. The protected resource
//! metadata is served beside the endpoint when OAuth is on.

use crate::server::{inbound, shutdown_signal, Inbound, ServeError, ToolServer};
use bytes::Bytes;
use http::{Method, Request, Response, StatusCode};
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Full};

use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use rmcp::transport::common::http_header::HEADER_SESSION_ID;
use rmcp::transport::streamable_http_server::session::local::{
    LocalSessionManager, LocalSessionManagerError,
};
use rmcp::transport::streamable_http_server::session::{
    RestoreOutcome, ServerSseMessage, SessionId, SessionManager,
};
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;
use toolschema_http::serve::RequestBody;
use toolschema_http::sessions::SessionRegistry;
use toolschema_http::{Guard, GuardConfig};

/// The path of the MCP endpoint.
pub(crate) const ENDPOINT: &str = "/mcp";

type Answer = Response<BoxBody<Bytes, Infallible>>;
type Service = StreamableHttpService<ToolServer, TrackedSessions>;

/// Serve MCP over Streamable HTTP at `http://HOST:PORT/mcp` until SIGINT or SIGTERM, behind a
/// guard configured by `guard`; `ready` is told the address bound (useful with port 0) and the
/// guard. The token file and key set file are read again on SIGHUP.
pub(crate) async fn serve_http(
    server: ToolServer,
    host: &str,
    port: u16,
    guard: GuardConfig,
    ready: impl FnOnce(SocketAddr, &Guard),
) -> Result<(), ServeError> {
    for asked in tokio::net::lookup_host((host, port)).await? {
        guard.check_address(asked)?;
    }
    let listener = tokio::net::TcpListener::bind((host, port)).await?;
    let address = listener.local_addr()?;
    let guard = Arc::new(Guard::start(guard, address).await?);
    #[cfg(unix)]
    guard.reload_on_sighup()?;
    let server = server.with_guard(guard.clone());
    let shutdown = tokio_util::sync::CancellationToken::new();
    // The guard checks Host and Origin and bounds the body before rmcp sees a request; rmcp's
    // own checks would only repeat them with a list of their own.
    let config = StreamableHttpServerConfig::default()
        .with_cancellation_token(shutdown.child_token())
        .disable_allowed_hosts()
        .disable_allowed_origins()
        .with_max_request_body_bytes(guard.limits().max_body_bytes);
    let mut local = LocalSessionManager::default();
    local.session_config.keep_alive = Some(guard.limits().session_idle);
    let sessions = TrackedSessions {
        inner: local,
        registry: guard.sessions().clone(),
    };
    let service: Service =
        StreamableHttpService::new(move || Ok(server.clone()), Arc::new(sessions), config);
    // Signals are caught from before `ready`: a SIGTERM right after it stops the server cleanly.
    let stop = shutdown_signal();
    ready(address, &guard);
    let limits = *guard.limits();
    let make_service = || {
        let service = service.clone();
        let guard = guard.clone();
        hyper::service::service_fn(move |request: Request<RequestBody>| {
            route(request, service.clone(), guard.clone())
        })
    };
    // Open event streams end when their sessions close.
    toolschema_http::serve::serve_until_stopped(listener, limits, make_service, stop, || async {
        shutdown.cancel();
    })
    .await;
    Ok(())
}

async fn route(
    request: Request<RequestBody>,
    service: Service,
    guard: Arc<Guard>,
) -> Result<Answer, Infallible> {
    let path = request.uri().path();
    if guard.serves_metadata(path) {
        return Ok(metadata(request, &guard));
    }
    if path != ENDPOINT {
        return Ok(plain(
            StatusCode::NOT_FOUND,
            "not found: the MCP endpoint is /mcp\n",
        ));
    }
    Ok(match guarded(request, service, &guard).await {
        Ok(answer) => answer,
        Err(refusal) => refusal.into_response().map(BodyExt::boxed),
    })
}

/// A request to the endpoint, through the guard to rmcp.
async fn guarded(
    request: Request<RequestBody>,
    mut service: Service,
    guard: &Guard,
) -> Result<Answer, toolschema_http::Refusal> {
    let (mut parts, body) = request.into_parts();
    let principal = guard.admit(&parts).await?;
    if let Some(id) = parts
        .headers
        .get(HEADER_SESSION_ID)
        .and_then(|v| v.to_str().ok())
    {
        guard.check_session(id, &principal)?;
    }
    let body = without_bom(guard.read_body(&principal, &parts.headers, body).await?);
    let mut permit = None;
    let mut body_read = body.clone();
    if parts.method == Method::POST {
        guard.check_calls(&parts, &principal, &body, None)?;
        match exact_body(body.clone()) {
            Ok(read) => body_read = read,
            Err(answer) => return Ok(*answer),
        }
        if !parts.headers.contains_key(HEADER_SESSION_ID) && toolschema_http::is_initialize(&body) {
            permit = Some(guard.open_session(&principal)?);
        }
    }
    parts.extensions.insert(principal.clone());
    let ends_session = parts.method == Method::DELETE;
    let request = Request::from_parts(parts, Full::new(body_read));
    let call = tower_service::Service::call(&mut service, request);
    let opens = permit.is_some();
    // The session rmcp creates for an initialize is its client's from its creation (the
    // permit is in scope when rmcp creates it); no session created, the permit is given back.
    let response = match permit {
        Some(permit) => SessionRegistry::opening(permit, call).await,
        None => call.await,
    };
    let mut response = match response {
        Ok(response) => response,
        Err(never) => match never {},
    };
    // rmcp answers a DELETE that ended the session 202; it is done, not accepted for later, and
    // clients (the Python SDK) log "Session termination failed: 202" at the end of every
    // session. 200, as the proxy answers.
    if ends_session && response.status() == StatusCode::ACCEPTED {
        *response.status_mut() = StatusCode::OK;
    }
    if opens {
        if let Some(id) = response
            .headers()
            .get(HEADER_SESSION_ID)
            .and_then(|v| v.to_str().ok())
        {
            guard.session_opened(id, &principal, None);
        }
    }
    Ok(response)
}

/// A body without its byte order mark, which is no part of a message (rmcp refuses it).
fn without_bom(body: Bytes) -> Bytes {
    match body.strip_prefix(b"\xEF\xBB\xBF") {
        Some(rest) => body.slice(body.len() - rest.len()..),
        None => body,
    }
}

/// The body rmcp reads, or the answer to give at once, as over stdio ([`inbound`]): a request
/// whose values rmcp cannot read exactly is replaced, so that it is answered with the reason
/// instead of reaching the command with a number changed; a request whose id rmcp cannot hold
/// exactly or that it cannot read at all, and a body that is no JSON-RPC message, are answered
/// here with the id as sent (rmcp answers them 415 in plain text, the id lost): a JSON-RPC
/// error, 200 for a request, 400 when there is no request to answer.
fn exact_body(body: Bytes) -> Result<Bytes, Box<Answer>> {
    let Ok(text) = std::str::from_utf8(&body) else {
        return Ok(body);
    };
    match inbound(text) {
        Inbound::Pass => Ok(body),
        Inbound::Replace(replacement) => {
            tracing::warn!("a request cannot be read exactly; it is answered with an error");
            Ok(Bytes::from(replacement))
        }
        Inbound::Answer { line, to_request } => {
            tracing::warn!("a body rmcp cannot read is answered with an error: {line}");
            let mut response = Response::new(Full::new(Bytes::from(line)).boxed());
            if !to_request {
                *response.status_mut() = StatusCode::BAD_REQUEST;
            }
            response.headers_mut().insert(
                http::header::CONTENT_TYPE,
                http::HeaderValue::from_static("application/json"),
            );
            Err(Box::new(response))
        }
    }
}

fn metadata(request: Request<RequestBody>, guard: &Guard) -> Answer {
    if request.method() != Method::GET {
        return plain(
            StatusCode::METHOD_NOT_ALLOWED,
            "the protected resource metadata is read with GET\n",
        );
    }
    let (parts, _) = request.into_parts();
    match guard.metadata(&parts) {
        Ok(document) => {
            let mut response = Response::new(Full::new(Bytes::from(document.to_string())).boxed());
            response.headers_mut().insert(
                http::header::CONTENT_TYPE,
                http::HeaderValue::from_static("application/json"),
            );
            response
        }
        Err(refusal) => refusal.into_response().map(BodyExt::boxed),
    }
}

fn plain(status: StatusCode, text: &'static str) -> Answer {
    let mut response = Response::new(Full::new(Bytes::from_static(text.as_bytes())).boxed());
    *response.status_mut() = status;
    response
}

/// rmcp's in-memory sessions, told to the guard's registry as they begin and end, so that each
/// session's place in its client's count is given back however it ends (DELETE, idle timeout,
/// shutdown).
struct TrackedSessions {
    inner: LocalSessionManager,
    registry: SessionRegistry,
}

impl SessionManager for TrackedSessions {
    type Error = LocalSessionManagerError;
    type Transport = <LocalSessionManager as SessionManager>::Transport;

    async fn create_session(&self) -> Result<(SessionId, Self::Transport), Self::Error> {
        let (id, transport) = self.inner.create_session().await?;
        self.registry.created(&id);
        Ok((id, transport))
    }

    async fn initialize_session(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<ServerJsonRpcMessage, Self::Error> {
        self.inner.initialize_session(id, message).await
    }

    async fn has_session(&self, id: &SessionId) -> Result<bool, Self::Error> {
        self.inner.has_session(id).await
    }

    async fn close_session(&self, id: &SessionId) -> Result<(), Self::Error> {
        let closed = self.inner.close_session(id).await;
        self.registry.ended(id);
        closed
    }

    async fn create_stream(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<impl futures::Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error>
    {
        self.inner.create_stream(id, message).await
    }

    async fn accept_message(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<(), Self::Error> {
        self.inner.accept_message(id, message).await
    }

    async fn create_standalone_stream(
        &self,
        id: &SessionId,
    ) -> Result<impl futures::Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error>
    {
        self.inner.create_standalone_stream(id).await
    }

    async fn resume(
        &self,
        id: &SessionId,
        last_event_id: String,
    ) -> Result<impl futures::Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error>
    {
        self.inner.resume(id, last_event_id).await
    }

    async fn restore_session(
        &self,
        id: SessionId,
    ) -> Result<RestoreOutcome<Self::Transport>, Self::Error> {
        self.inner.restore_session(id).await
    }
}
