//! The proxy's Streamable HTTP endpoint: requests through the guard to sessions.
//!
//! Each request is admitted by the guard of toolschema-http (Host, Origin, credentials), its
//! body read within the limit and its `tools/call`s checked against the token's scopes before
//! the proxy reads it. Then:
//!
//! - `initialize` without a session opens one (a server process, or a session at the upstream),
//!   within `--max-sessions` and the token's `--max-sessions-per-token`;
//! - a 2026-07-28 request (its revision in `_meta`, its standard headers agreeing with its
//!   body) goes to its client's lane;
//! - anything else goes to the session its `Mcp-Session-Id` names (at the upstream, a session
//!   another replica opened is taken over: its id is all the state there is).
//!
//! A request is answered with JSON when its answer comes first and soon, otherwise with an
//! event stream carrying what the server sends about it, then the answer. A client that goes
//! away before its answer cancels the request at the server; one that waits past
//! `--request-timeout` gets an error and the request is cancelled.

use super::queue::{Budget, StreamReceiver, SERVER_QUEUE};
use super::routes::{HttpFailure, Outgoing, Routes};
use super::session::{lock, Backend, ClientSide, Session, SessionParts};
use super::sse;
use super::stdio_server::StdioServer;
use super::upstream::{Takeover, Upstream, UpstreamLink};
use super::wire;
use super::{HttpProxyConfig, ServerSide};
use crate::audit_log::AuditLog;
use crate::trace::{log_span, traceparent_header, Exporter, SessionTracer, TraceStart};
use bytes::Bytes;
use http::header::{ACCEPT, CONTENT_TYPE};
use http::{HeaderMap, HeaderValue, Method, Request, Response, StatusCode};
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Full};
use hyper::body::{Body, Frame};
use std::collections::{HashMap, HashSet};
use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::task::{Context, Poll};
use std::time::Duration;
use toolschema_gate::message::ErrorCode;
use toolschema_gate::message::{self, error_line, IdKey, Kind, Message, Read, RequestId};
use toolschema_gate::HolderPolicy;
use toolschema_gate::{report, Gate};
use toolschema_http::access_log::TraceIds;
use toolschema_http::serve::RequestBody;
use toolschema_http::sessions::SessionPermit;
use toolschema_http::{Guard, Principal, Refusal};

/// The path of the MCP endpoint.
pub(crate) const ENDPOINT: &str = "/mcp";

/// How long an answer may take to still be sent as JSON; past it the answer comes on an event
/// stream, which shows a client that went away and keeps intermediaries from timing out.
const JSON_WINDOW: Duration = Duration::from_millis(500);

/// How often a quiet event stream gets a comment.
const KEEP_ALIVE: Duration = Duration::from_secs(5);

/// Headers that concern one hop, or that the proxy sets itself: never forwarded upstream.
const NOT_FORWARDED: &[&str] = &[
    "host",
    "content-length",
    "content-type",
    "accept",
    "accept-encoding",
    "connection",
    "keep-alive",
    "proxy-authenticate",
    "proxy-authorization",
    "te",
    "trailer",
    "transfer-encoding",
    "upgrade",
    "origin",
    "expect",
    "mcp-session-id",
];

pub(crate) type Answer = Response<BoxBody<Bytes, Infallible>>;

/// The endpoint's state: the guard, the sessions, the lanes.
pub(crate) struct Front {
    config: HttpProxyConfig,
    guard: Arc<Guard>,
    upstream: Option<Arc<Upstream>>,
    audit: Option<Arc<AuditLog>>,
    health: Arc<crate::health::Health>,
    /// Where the sessions' spans go, when the proxy exports traces.
    exporter: Option<Exporter>,
    sessions: Mutex<HashMap<String, Arc<Session>>>,
    lanes: Mutex<HashMap<String, Arc<Session>>>,
    /// The clients whose lane was swept after its server process exited: the next lane of
    /// each starts that server again (a restart, counted). At most `--max-sessions` of them.
    exited_lanes: Mutex<HashSet<String>>,
    /// Sessions being opened, counted against `--max-sessions` ([`Reservation`]).
    opening: Arc<Mutex<usize>>,
    counter: AtomicU64,
}

/// Why a request is answered before it reaches a session.
enum Refused {
    /// By the guard.
    Guard(Refusal),
    /// By the proxy: a status and a JSON-RPC error.
    Rpc(StatusCode, Option<RequestId>, i32, String),
    /// An answer as it is.
    Answer(Box<Answer>),
}

impl From<Refusal> for Refused {
    fn from(refusal: Refusal) -> Self {
        Refused::Guard(refusal)
    }
}

impl Refused {
    fn into_answer(self) -> Answer {
        match self {
            Refused::Guard(refusal) => refusal.into_response().map(BodyExt::boxed),
            Refused::Rpc(status, id, code, message) => {
                let body = error_line(id.as_ref(), ErrorCode(code), &message, None);
                json_answer(status, body)
            }
            Refused::Answer(answer) => *answer,
        }
    }
}

impl Front {
    /// The endpoint's state.
    pub fn new(
        config: HttpProxyConfig,
        guard: Arc<Guard>,
        upstream: Option<Arc<Upstream>>,
        audit: Option<Arc<AuditLog>>,
        health: Arc<crate::health::Health>,
        exporter: Option<Exporter>,
    ) -> Front {
        Front {
            config,
            guard,
            upstream,
            audit,
            health,
            exporter,
            sessions: Mutex::new(HashMap::new()),
            lanes: Mutex::new(HashMap::new()),
            exited_lanes: Mutex::new(HashSet::new()),
            opening: Arc::default(),
            counter: AtomicU64::new(0),
        }
    }

    /// Answer one HTTP request (counted by status).
    pub async fn handle(self: Arc<Self>, request: Request<RequestBody>) -> Answer {
        let metrics = self.config.metrics.clone();
        let answer = self.answer(request).await;
        if let Some(metrics) = metrics {
            metrics.http_request(answer.status().as_u16());
        }
        answer
    }

    /// A request refused before it reached a session (the guard's refusals counted by
    /// reason).
    fn refused(&self, refused: Refused) -> Answer {
        if let (Refused::Guard(refusal), Some(metrics)) = (&refused, &self.config.metrics) {
            metrics.auth_refusal(refusal.kind().code());
        }
        refused.into_answer()
    }

    async fn answer(self: Arc<Self>, request: Request<RequestBody>) -> Answer {
        let path = request.uri().path().to_string();
        // The probes: outside the MCP path, never behind a token.
        if let Some((status, text)) = self.health.answer(&path).await {
            let mut answer = Response::new(Full::new(Bytes::from(text)).boxed());
            *answer.status_mut() = status;
            return answer;
        }
        if self.guard.serves_metadata(&path) {
            return self.metadata(request);
        }
        if path != ENDPOINT {
            return plain(
                StatusCode::NOT_FOUND,
                "not found: the MCP endpoint is /mcp\n",
            );
        }
        let (parts, body) = request.into_parts();
        let principal = match self.guard.admit(&parts).await {
            Ok(principal) => principal,
            Err(refusal) => return self.refused(Refused::Guard(refusal)),
        };
        let result = match parts.method {
            Method::POST => self.post(&parts, body, &principal).await,
            Method::GET => self.get(&parts, &principal).await,
            Method::DELETE => self.delete(&parts, &principal).await,
            _ => Ok(plain(
                StatusCode::METHOD_NOT_ALLOWED,
                "the MCP endpoint takes POST, GET and DELETE\n",
            )),
        };
        result.unwrap_or_else(|refused| self.refused(refused))
    }

    fn metadata(&self, request: Request<RequestBody>) -> Answer {
        if request.method() != Method::GET {
            return plain(
                StatusCode::METHOD_NOT_ALLOWED,
                "the protected resource metadata is read with GET\n",
            );
        }
        let (parts, _) = request.into_parts();
        match self.guard.metadata(&parts) {
            Ok(document) => json_answer(StatusCode::OK, document.to_string().into_bytes()),
            Err(refusal) => refusal.into_response().map(BodyExt::boxed),
        }
    }

    async fn post(
        self: &Arc<Self>,
        parts: &http::request::Parts,
        body: RequestBody,
        principal: &Principal,
    ) -> Result<Answer, Refused> {
        let read = tokio::time::timeout(
            self.config.request_timeout,
            self.guard.read_body(principal, &parts.headers, body),
        )
        .await;
        let body = match read {
            Ok(body) => body?,
            Err(_) => {
                return Err(Refused::Rpc(
                    StatusCode::REQUEST_TIMEOUT,
                    None,
                    ErrorCode::INVALID_REQUEST.0,
                    format!(
                        "the request body did not arrive within {} s (--request-timeout)",
                        self.config.request_timeout.as_secs()
                    ),
                ))
            }
        };
        // The trace of the request, decided now so that the guard's lines carry it too.
        let trace = self
            .exporter
            .as_ref()
            .and_then(|_| TraceStart::of_body(&body, traceparent_header(&parts.headers)));
        let ids = trace.as_ref().map(|t| TraceIds {
            trace_id: t.trace.to_string(),
            span_id: t.span.to_string(),
        });
        log_span(trace.as_ref().map(|t| t.trace)).in_scope(|| {
            self.guard
                .check_calls(parts, principal, &body, ids.as_ref())
        })?;
        let parse_error = |why: String| {
            Refused::Rpc(StatusCode::BAD_REQUEST, None, ErrorCode::PARSE_ERROR.0, why)
        };
        let text = message::text_of(body.to_vec())
            .map_err(|(_, malformed)| parse_error(malformed.to_string()))?;
        let read = message::read(&text).map_err(|malformed| parse_error(malformed.to_string()))?;
        let (first, is_request) = match &read {
            Read::One(message) => (
                Some(message.clone()),
                matches!(message.kind, Kind::Request { .. }),
            ),
            Read::Batch(elements) => {
                let messages: Vec<Message> = elements
                    .iter()
                    .filter_map(|range| message::read_object(&text, range.clone()).ok())
                    .collect();
                let is_request = messages
                    .iter()
                    .any(|m| matches!(m.kind, Kind::Request { .. }));
                (messages.into_iter().next(), is_request)
            }
        };
        let request_id = match first.as_ref().map(|m| &m.kind) {
            Some(Kind::Request { id, .. }) => Some(id.clone()),
            _ => None,
        };
        let modern = first
            .as_ref()
            .and_then(|m| message::declared_revision(&text, m))
            .filter(|revision| message::is_modern(revision));
        let initialize = matches!(
            first.as_ref().map(|m| &m.kind),
            Some(Kind::Request { method, .. }) if method == "initialize"
        ) && matches!(read, Read::One(_));
        let session_header = session_id_of(&parts.headers);
        // A session being opened: closed, and its places in the counts given back, unless it
        // is registered below (dropped with this request if the client goes away first).
        let mut opening = None;
        let session = if let (Some(revision), Some(message)) = (&modern, &first) {
            wire::check_standard_headers(&parts.headers, &text, message, revision).map_err(
                |why| {
                    Refused::Rpc(
                        StatusCode::BAD_REQUEST,
                        request_id.clone(),
                        wire::HEADER_MISMATCH,
                        format!("Header mismatch: {why}"),
                    )
                },
            )?;
            self.lane(principal, &parts.headers).await?
        } else if let Some(id) = &session_header {
            self.session(id, principal)?
        } else if initialize {
            let new = self.open_session(principal).await?;
            let session = new.session.clone();
            opening = Some(new);
            session
        } else {
            return Err(Refused::Rpc(
                StatusCode::BAD_REQUEST,
                request_id,
                ErrorCode::INVALID_REQUEST.0,
                "Bad Request: no Mcp-Session-Id: send initialize first (MCP 2025-11-25), or a request with its protocol version in _meta (2026-07-28)".into(),
            ));
        };
        let headers = self.forwarded(&parts.headers);
        if !is_request {
            session.client_message(text.into_bytes(), Some(&headers));
            return Ok(empty(StatusCode::ACCEPTED));
        }
        let (key, id, receiver) = session
            .client_request(text.into_bytes(), &headers, trace)
            .map_err(|malformed| parse_error(malformed.to_string()))?;
        let streams = parts
            .headers
            .get_all(ACCEPT)
            .iter()
            .any(|v| v.to_str().is_ok_and(|v| v.contains("text/event-stream")));
        let answer = self
            .respond(&session, key, id, receiver, initialize, streams)
            .await;
        if let Some(opening) = opening {
            if let Some(refused) = self.opened(opening, principal, &answer) {
                return Err(refused);
            }
        }
        if let Some(id) = &session_header {
            self.settle_takeover(id, &session);
        }
        Ok(answer)
    }

    /// Wait for the first message for a request, and answer with JSON or an event stream (a
    /// client that does not accept streams gets the answer alone, as JSON).
    async fn respond(
        &self,
        session: &Arc<Session>,
        key: IdKey,
        id: RequestId,
        mut receiver: StreamReceiver,
        initialize: bool,
        streams: bool,
    ) -> Answer {
        let mut watch = RequestWatch {
            session: Arc::downgrade(session),
            key: key.clone(),
            id,
            // An initialize is never cancelled (MCP): one its client gave up on runs to its
            // end, so that the session it opens can be ended ([`Opening`]).
            answered: initialize,
            timeout: Some(Box::pin(tokio::time::sleep(self.config.request_timeout))),
            timeout_seconds: self.config.request_timeout.as_secs(),
        };
        // An upstream's session id comes with its answer to initialize: wait for it.
        let window = if initialize || !streams {
            self.config.request_timeout
        } else {
            JSON_WINDOW
        };
        let first = tokio::time::timeout(window, async {
            loop {
                match receiver.recv().await {
                    // What comes before the answer has nowhere to go without a stream.
                    Some(item) if !item.last && !streams => continue,
                    other => return other,
                }
            }
        })
        .await;
        if first.is_err() && !streams {
            let reason = format!(
                "the request was not answered within {} s (--request-timeout) and was cancelled",
                self.config.request_timeout.as_secs()
            );
            session.cancel(&key, &watch.id, &reason, false);
            watch.answered = true;
            return Refused::Rpc(
                StatusCode::GATEWAY_TIMEOUT,
                Some(watch.id.clone()),
                -32000,
                reason,
            )
            .into_answer();
        }
        let mut answer = match first {
            Ok(Some(item)) if item.last => {
                watch.answered = true;
                if let Some(failure) = session.take_failure(&key) {
                    return failure_answer(failure);
                }
                json_answer(StatusCode::OK, item.data)
            }
            Ok(None) => {
                watch.answered = true;
                return Refused::Rpc(
                    StatusCode::SERVICE_UNAVAILABLE,
                    Some(watch.id.clone()),
                    -32000,
                    "the session ended before the request was answered".into(),
                )
                .into_answer();
            }
            Ok(Some(item)) => stream_answer(Some(item), receiver, Some(watch)),
            Err(_) => stream_answer(None, receiver, Some(watch)),
        };
        if initialize {
            if let Some(id) = self.id_of(session) {
                if let Ok(value) = HeaderValue::from_str(&id) {
                    answer.headers_mut().insert("mcp-session-id", value);
                }
            }
        }
        answer
    }

    /// The session id a session is known by.
    fn id_of(&self, session: &Arc<Session>) -> Option<String> {
        match session.backend() {
            Backend::Upstream(link) => link.session_id(),
            Backend::Stdio(_) => Some(session.label.clone()),
        }
    }

    /// A session was opened by `initialize`: registered under its id, owned by its client
    /// (whose places in the counts it held since before its server started). An upstream that
    /// gives it the id of a session already open would have two clients share one: the new
    /// session is closed and its client refused instead, unless the open one was only taken
    /// over on a client's word (the upstream never confirmed it, or confirmed it only after
    /// this `initialize` was sent, so it may be this very session): that one is closed here,
    /// and the session is its opener's.
    fn opened(
        &self,
        mut opening: Opening,
        principal: &Principal,
        answer: &Answer,
    ) -> Option<Refused> {
        let id = answer
            .headers()
            .get("mcp-session-id")
            .and_then(|v| v.to_str().ok())
            .map(String::from);
        // No session came of it: dropping `opening` closes it.
        let id = id.filter(|_| answer.status().is_success())?;
        let mut sessions = lock(&self.sessions);
        if let Some(existing) = sessions.get(&id) {
            let yields = existing.is_closed()
                || match takeover_of(existing) {
                    Takeover::No => false,
                    Takeover::Unconfirmed | Takeover::Refused => true,
                    Takeover::Confirmed(at) => at > opening.sent_at,
                };
            if !yields {
                drop(sessions);
                let message = "the upstream gave the new session the id of a session already open, so two clients would share one; the new session was closed".to_string();
                report(&format!("refused a new session: {message}"));
                // Closed here only: ending it at the upstream would end the other client's too.
                if let Backend::Upstream(link) = opening.session.backend() {
                    link.forget_session_id();
                }
                return Some(Refused::Rpc(StatusCode::BAD_GATEWAY, None, -32000, message));
            }
            if let Some(claimed) = sessions.remove(&id) {
                self.guard.sessions().ended(&id);
                report(&format!(
                    "session {id} was taken over on a client's word before the upstream confirmed it, and the upstream has now given that id to a new session: the takeover is closed, the session is its opener's"
                ));
                close_here(claimed);
            }
        }
        self.guard
            .session_opened(&id, principal, opening.permit.take());
        sessions.insert(id, opening.session.clone());
        None
    }

    /// A session taken over on a client's word that the upstream refused (no such session, or
    /// an error) is no session: it is forgotten, with its owner, its places in the counts
    /// given back, and nothing ended at the upstream.
    fn settle_takeover(&self, id: &str, session: &Arc<Session>) {
        if takeover_of(session) != Takeover::Refused {
            return;
        }
        let mut sessions = lock(&self.sessions);
        if sessions
            .get(id)
            .is_some_and(|held| Arc::ptr_eq(held, session))
        {
            sessions.remove(id);
            self.guard.sessions().ended(id);
        }
        drop(sessions);
        close_here(session.clone());
    }

    async fn get(
        &self,
        parts: &http::request::Parts,
        principal: &Principal,
    ) -> Result<Answer, Refused> {
        let Some(id) = session_id_of(&parts.headers) else {
            return Ok(plain(
                StatusCode::METHOD_NOT_ALLOWED,
                "a GET stream belongs to a session (Mcp-Session-Id); 2026-07-28 has none\n",
            ));
        };
        let accepts = parts
            .headers
            .get_all(ACCEPT)
            .iter()
            .any(|v| v.to_str().is_ok_and(|v| v.contains("text/event-stream")));
        if !accepts {
            return Ok(plain(
                StatusCode::NOT_ACCEPTABLE,
                "the GET stream is text/event-stream: accept it\n",
            ));
        }
        let session = self.session(&id, principal)?;
        let Some(receiver) = session.open_standalone() else {
            return Ok(plain(StatusCode::METHOD_NOT_ALLOWED, "no GET stream\n"));
        };
        if let Backend::Upstream(link) = session.backend() {
            let headers = self.forwarded(&parts.headers);
            if let Err(failure) = link.open_standalone(&session, &headers).await {
                self.settle_takeover(&id, &session);
                return Ok(failure_answer(failure));
            }
        }
        Ok(stream_answer(None, receiver, None))
    }

    async fn delete(
        &self,
        parts: &http::request::Parts,
        principal: &Principal,
    ) -> Result<Answer, Refused> {
        let Some(id) = session_id_of(&parts.headers) else {
            return Ok(plain(
                StatusCode::BAD_REQUEST,
                "DELETE ends a session: say which (Mcp-Session-Id)\n",
            ));
        };
        let session = self.session(&id, principal)?;
        {
            let mut sessions = lock(&self.sessions);
            if sessions
                .get(&id)
                .is_some_and(|held| Arc::ptr_eq(held, &session))
            {
                sessions.remove(&id);
                self.guard.sessions().ended(&id);
            }
        }
        let status = match session.backend() {
            Backend::Upstream(link) => {
                let headers = self.forwarded(&parts.headers);
                match link.delete(&headers).await {
                    Some(Ok(status)) => status,
                    Some(Err(e)) => {
                        report(&format!("cannot end the upstream's session: {e}"));
                        StatusCode::BAD_GATEWAY
                    }
                    None => StatusCode::OK,
                }
            }
            Backend::Stdio(_) => StatusCode::OK,
        };
        session.close().await;
        Ok(empty(status))
    }

    /// The session `id` names, if `principal` owns it (404 otherwise, as for no session); at
    /// the upstream, a session another replica opened is taken over, owned by the client that
    /// named it, and counted for it, until the upstream refuses it ([`Front::settle_takeover`]).
    /// Looking up, refusing and registering happen under the lock of the sessions, so that
    /// two requests naming one id never make two sessions of it.
    fn session(&self, id: &str, principal: &Principal) -> Result<Arc<Session>, Refused> {
        {
            let mut sessions = lock(&self.sessions);
            if let Some(held) = sessions.get(id).cloned() {
                if upstream_refused(&held) {
                    sessions.remove(id);
                    self.guard.sessions().ended(id);
                    close_here(held);
                } else if !held.is_closed() {
                    self.guard.check_session(id, principal)?;
                    return Ok(held);
                }
            }
            self.guard.check_session(id, principal)?;
        }
        let Some(upstream) = &self.upstream else {
            return Err(Refused::Rpc(
                StatusCode::NOT_FOUND,
                None,
                -32001,
                "Session not found: it ended (DELETE, idle, or its server exited); initialize a new one".into(),
            ));
        };
        let reservation = self.reserve()?;
        let permit = self.guard.open_session(principal)?;
        let link = UpstreamLink::new(upstream.clone(), false, false);
        link.adopt_session_id(id);
        let session = self.new_session(
            principal,
            Backend::Upstream(link),
            false,
            format!("{id} (taken over)"),
        );
        let mut sessions = lock(&self.sessions);
        if let Some(held) = sessions.get(id).filter(|s| !s.is_closed()).cloned() {
            // Another request took it over (or opened it) meanwhile: that one is the session.
            drop(sessions);
            close_here(session);
            self.guard.check_session(id, principal)?;
            return Ok(held);
        }
        self.guard.session_opened(id, principal, Some(permit));
        sessions.insert(id.to_string(), session.clone());
        drop(sessions);
        drop(reservation);
        UpstreamLink::start(&session);
        Ok(session)
    }

    /// Open a session for an `initialize`: its places in `--max-sessions-per-token` and
    /// `--max-sessions` are taken before its server starts, and held until it is registered
    /// ([`Front::opened`]) or given up.
    async fn open_session(&self, principal: &Principal) -> Result<Opening, Refused> {
        let permit = self.guard.open_session(principal)?;
        let reservation = self.reserve()?;
        let sent_at = self.upstream.as_ref().map_or(0, |upstream| upstream.tick());
        let number = self.counter.fetch_add(1, Ordering::Relaxed);
        let session = match self.backend(false)? {
            (Backend::Stdio(server), Some(stdout)) => {
                let Some(id) = new_session_id() else {
                    return Err(Refused::Rpc(
                        StatusCode::INTERNAL_SERVER_ERROR,
                        None,
                        -32000,
                        "cannot make a session id: /dev/urandom cannot be read".into(),
                    ));
                };
                let session = self.new_session(principal, Backend::Stdio(server), false, id);
                StdioServer::start(&session, stdout, self.config.max_message_bytes);
                session
            }
            (backend, _) => {
                let label = format!("upstream session {number}");
                let session = self.new_session(principal, backend, false, label);
                UpstreamLink::start(&session);
                session
            }
        };
        Ok(Opening {
            session,
            permit: Some(permit),
            reservation: Some(reservation),
            sent_at,
            timeout: self.config.request_timeout,
        })
    }

    /// The lane of a 2026-07-28 client, opened on its first request.
    async fn lane(
        &self,
        principal: &Principal,
        _headers: &HeaderMap,
    ) -> Result<Arc<Session>, Refused> {
        let name = principal.to_string();
        let exited = {
            let lanes = lock(&self.lanes);
            match lanes.get(&name) {
                Some(lane) if !lane.is_closed() && !lane.is_gone() => return Ok(lane.clone()),
                Some(lane) => server_exited(lane),
                None => lock(&self.exited_lanes).contains(&name),
            }
        };
        let reservation = self.reserve()?;
        let lane = match self.backend(true)? {
            (Backend::Stdio(server), Some(stdout)) => {
                let lane = self.new_session(
                    principal,
                    Backend::Stdio(server),
                    true,
                    format!("lane of {name}"),
                );
                StdioServer::start(&lane, stdout, self.config.max_message_bytes);
                lane
            }
            (backend, _) => {
                let lane = self.new_session(principal, backend, true, format!("lane of {name}"));
                UpstreamLink::start(&lane);
                lane
            }
        };
        let mut lanes = lock(&self.lanes);
        // Another request of the same client may have opened it meanwhile.
        if let Some(existing) = lanes.get(&name).filter(|l| !l.is_closed() && !l.is_gone()) {
            let existing = existing.clone();
            drop(lanes);
            let extra = lane.clone();
            tokio::spawn(async move { extra.close().await });
            return Ok(existing);
        }
        let restarted = exited && matches!(lane.backend(), Backend::Stdio(_));
        lock(&self.exited_lanes).remove(&name);
        let replaced = lanes.insert(name, lane.clone());
        drop(lanes);
        if let Some(old) = replaced {
            // Its server exited (or it was closed) and the sweep has not come yet: closed here,
            // or it would hold its place among the sessions open.
            tokio::spawn(async move { old.close().await });
        }
        drop(reservation);
        if let (true, Some(metrics)) = (restarted, &self.config.metrics) {
            // The client's lane had a server process that exited; this one replaces it.
            metrics.upstream_restart();
        }
        Ok(lane)
    }

    /// Count one more session against `--max-sessions`, or refuse it. The place is held until
    /// the [`Reservation`] is dropped, which is after the session is registered (then counted
    /// as open), or when it is given up.
    fn reserve(&self) -> Result<Reservation, Refused> {
        let mut opening = lock(&self.opening);
        let open = lock(&self.sessions).len() + lock(&self.lanes).len() + *opening;
        if open >= self.config.max_sessions {
            let message = format!(
                "this proxy serves at most {} at once (--max-sessions); close one (HTTP DELETE) or try again later",
                toolschema::text::count(self.config.max_sessions, "session", "sessions")
            );
            report(&format!("refused a new session: {message}"));
            let mut answer =
                Refused::Rpc(StatusCode::SERVICE_UNAVAILABLE, None, -32000, message).into_answer();
            answer
                .headers_mut()
                .insert(http::header::RETRY_AFTER, HeaderValue::from_static("5"));
            return Err(Refused::Answer(Box::new(answer)));
        }
        *opening += 1;
        Ok(Reservation {
            opening: self.opening.clone(),
        })
    }

    /// The server side of a new session: a process (with its stdout), or a link to the
    /// upstream.
    fn backend(&self, stateless: bool) -> Result<(Backend, Option<std::fs::File>), Refused> {
        match (&self.config.server, &self.upstream) {
            (ServerSide::Command(command), _) => {
                let budget = Budget::new(SERVER_QUEUE, self.config.max_message_bytes);
                let (server, stdout) =
                    StdioServer::spawn(command, self.config.shutdown_grace, budget).map_err(
                        |e| {
                            report(&e.to_string());
                            Refused::Rpc(StatusCode::BAD_GATEWAY, None, -32000, e.to_string())
                        },
                    )?;
                Ok((Backend::Stdio(Box::new(server)), Some(stdout)))
            }
            (ServerSide::Upstream { .. }, Some(upstream)) => Ok((
                Backend::Upstream(UpstreamLink::new(upstream.clone(), stateless, false)),
                None,
            )),
            (ServerSide::Upstream { .. }, None) => Err(Refused::Rpc(
                StatusCode::BAD_GATEWAY,
                None,
                -32000,
                "no upstream".into(),
            )),
        }
    }

    fn new_session(
        &self,
        principal: &Principal,
        backend: Backend,
        lane: bool,
        label: String,
    ) -> Arc<Session> {
        // The tracer reads each call's verdict from the gate's records.
        let mut gate_config = self
            .config
            .session_gate(self.audit.is_some() || self.exporter.is_some());
        gate_config.policy.holder = Some(self.holder_policy(principal));
        // A session with a server process of its own is named by the id the proxy gave it.
        let session_id = (matches!(backend, Backend::Stdio(_)) && !lane).then(|| label.clone());
        let tracer = self
            .exporter
            .clone()
            .map(|exporter| SessionTracer::new(exporter, session_id));
        let session = Session::new(SessionParts {
            label,
            gate: Gate::new(gate_config),
            client: ClientSide::Http(Box::new(Routes::new(self.config.max_message_bytes))),
            backend,
            audit: self.audit.clone(),
            metrics: self.config.metrics.clone(),
            client_name: Some(principal.name().to_string()),
            lane,
            tracer,
        });
        session.watch_deadlines();
        session
    }

    /// What `principal` may see and call.
    fn holder_policy(&self, principal: &Principal) -> HolderPolicy {
        self.config.file.holder_policy(principal)
    }

    /// The client headers that go upstream: end-to-end ones only, and the client's credential
    /// only when the proxy does not authenticate clients itself (a token for the proxy is
    /// never passed on).
    fn forwarded(&self, headers: &HeaderMap) -> HeaderMap {
        if self.upstream.is_none() {
            return HeaderMap::new();
        }
        let mut kept = HeaderMap::new();
        for (name, value) in headers {
            let name_text = name.as_str();
            if NOT_FORWARDED.contains(&name_text) {
                continue;
            }
            if name == http::header::AUTHORIZATION && self.guard.requires_auth() {
                continue;
            }
            kept.append(name.clone(), value.clone());
        }
        kept
    }

    /// Close what is idle (no message for `--session-idle`, nothing in flight), dead (its
    /// server exited) or closed.
    pub async fn sweep(&self) {
        let idle = self.guard.limits().session_idle;
        let expired = |session: &Arc<Session>| {
            session.is_closed()
                || session.is_gone()
                || upstream_refused(session)
                || (session.idle_for() > idle && !session.is_busy())
        };
        let mut done = Vec::new();
        {
            let mut sessions = lock(&self.sessions);
            let ids: Vec<String> = sessions
                .iter()
                .filter(|(_, s)| expired(s))
                .map(|(id, _)| id.clone())
                .collect();
            for id in ids {
                if let Some(session) = sessions.remove(&id) {
                    self.guard.sessions().ended(&id);
                    done.push(session);
                }
            }
            // Lanes first, then the exited ones, as `lane` takes them.
            let mut lanes = lock(&self.lanes);
            let mut exited = lock(&self.exited_lanes);
            lanes.retain(|name, lane| {
                let keep = !expired(lane);
                if !keep {
                    // Remembered (within bounds) to count the restart its next request makes.
                    if server_exited(lane) && exited.len() < self.config.max_sessions {
                        exited.insert(name.clone());
                    }
                    done.push(lane.clone());
                }
                keep
            });
        }
        for session in done {
            if !session.is_closed() && !session.is_gone() {
                tracing::info!(session = %session.label, "closed an idle session");
            }
            session.close().await;
        }
    }

    /// Close every session (the proxy is stopping).
    pub async fn close_all(&self) {
        let mut all: Vec<Arc<Session>> = lock(&self.sessions).drain().map(|(_, s)| s).collect();
        all.extend(lock(&self.lanes).drain().map(|(_, s)| s));
        futures::future::join_all(all.iter().map(|s| s.close())).await;
    }
}

/// Whether `session`'s server process exited on its own (not closed by the proxy).
fn server_exited(session: &Session) -> bool {
    session.is_gone() && !session.is_closed() && matches!(session.backend(), Backend::Stdio(_))
}

/// A place counted against `--max-sessions` for a session not registered yet; given back when
/// dropped.
struct Reservation {
    opening: Arc<Mutex<usize>>,
}

impl Drop for Reservation {
    fn drop(&mut self) {
        let mut opening = lock(&self.opening);
        *opening = opening.saturating_sub(1);
    }
}

/// A session being opened by `initialize`, with its places in both counts. Dropped before it
/// was registered (its `initialize` failed, or its client went away), the session is closed
/// once what it has under way with the upstream is done (so that the upstream's session, whose
/// id comes with the answer, is ended too), and only then are its places given back.
struct Opening {
    session: Arc<Session>,
    /// Its client's place in `--max-sessions-per-token`; taken when the session is registered.
    permit: Option<SessionPermit>,
    reservation: Option<Reservation>,
    /// The upstream's clock before the `initialize` was sent ([`Upstream::tick`]).
    sent_at: u64,
    /// How long the `initialize` may take (`--request-timeout`).
    timeout: Duration,
}

impl Drop for Opening {
    fn drop(&mut self) {
        let Some(permit) = self.permit.take() else {
            return;
        };
        let (session, reservation, timeout) =
            (self.session.clone(), self.reservation.take(), self.timeout);
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            runtime.spawn(async move {
                if let Backend::Upstream(link) = session.backend() {
                    link.settle(timeout).await;
                }
                session.close().await;
                drop((permit, reservation));
            });
        }
    }
}

/// Whether a session was taken over, and what the upstream said of it.
fn takeover_of(session: &Session) -> Takeover {
    match session.backend() {
        Backend::Upstream(link) => link.takeover(),
        Backend::Stdio(_) => Takeover::No,
    }
}

/// Whether the upstream refused the session: it refused its takeover, or ended it (404). It is
/// no session of the proxy's from then on: a request naming its id is taken as naming one it
/// does not know (at an upstream, taken over again, and answered as the upstream answers).
fn upstream_refused(session: &Session) -> bool {
    match session.backend() {
        Backend::Upstream(link) => link.is_ended() || link.takeover() == Takeover::Refused,
        Backend::Stdio(_) => false,
    }
}

/// Close a session here only: its upstream session, if any, is another's (or none), so it is
/// not ended at the upstream.
fn close_here(session: Arc<Session>) {
    if let Backend::Upstream(link) = session.backend() {
        link.forget_session_id();
    }
    close_soon(session);
}

/// Close a session in the background (from code that cannot wait).
fn close_soon(session: Arc<Session>) {
    if let Ok(runtime) = tokio::runtime::Handle::try_current() {
        runtime.spawn(async move { session.close().await });
    }
}

/// Watches one request's stream: a client that goes before its answer cancels it, and one
/// that waits past the timeout gets an error.
struct RequestWatch {
    session: Weak<Session>,
    key: IdKey,
    id: RequestId,
    answered: bool,
    timeout: Option<Pin<Box<tokio::time::Sleep>>>,
    timeout_seconds: u64,
}

impl RequestWatch {
    /// Whether the request ran out of time now (the session then answers it with an error).
    fn poll_timeout(&mut self, cx: &mut Context<'_>) -> bool {
        let Some(timeout) = self.timeout.as_mut() else {
            return false;
        };
        if timeout.as_mut().poll(cx).is_pending() {
            return false;
        }
        self.timeout = None;
        if let Some(session) = self.session.upgrade() {
            let reason = format!(
                "the request was not answered within {} s (--request-timeout) and was cancelled",
                self.timeout_seconds
            );
            session.cancel(&self.key, &self.id, &reason, true);
        }
        true
    }
}

impl RequestWatch {
    /// The client lost the stream, not reading it: the request is cancelled at the server.
    fn lost(&mut self) {
        self.cancel_unanswered("the client did not read its stream and lost it");
    }

    /// Cancel the request at the server, for `reason`, unless it was answered.
    fn cancel_unanswered(&self, reason: &str) {
        if self.answered {
            return;
        }
        if let Some(session) = self.session.upgrade() {
            session.cancel(&self.key, &self.id, reason, false);
        }
    }
}

impl Drop for RequestWatch {
    fn drop(&mut self) {
        self.cancel_unanswered("the client closed its stream before the answer");
    }
}

/// An event stream for the client: its messages as events, comments while quiet.
struct EventStream {
    first: Option<Outgoing>,
    receiver: StreamReceiver,
    keep_alive: tokio::time::Interval,
    watch: Option<RequestWatch>,
    done: bool,
}

impl Body for EventStream {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        let this = &mut *self;
        if this.done {
            return Poll::Ready(None);
        }
        loop {
            let next = match this.first.take() {
                Some(item) => Poll::Ready(Some(item)),
                None => this.receiver.poll_recv(cx),
            };
            match next {
                Poll::Ready(Some(item)) => {
                    if item.last {
                        this.done = true;
                        if let Some(watch) = &mut this.watch {
                            watch.answered = true;
                        }
                    }
                    let event = sse::encode(item.event_id.as_deref(), &item.data);
                    return Poll::Ready(Some(Ok(Frame::data(event))));
                }
                Poll::Ready(None) => {
                    // The session closed the stream; or the client lost it, not reading it,
                    // and its request is cancelled (its answer has nowhere to go).
                    this.done = true;
                    if let Some(watch) = &mut this.watch {
                        if this.receiver.was_lost() {
                            watch.lost();
                        }
                        watch.answered = true;
                    }
                    return Poll::Ready(None);
                }
                Poll::Pending => {}
            }
            if this.watch.as_mut().is_some_and(|w| w.poll_timeout(cx)) {
                // The error answering it is queued now.
                continue;
            }
            if this.keep_alive.poll_tick(cx).is_ready() {
                return Poll::Ready(Some(Ok(Frame::data(Bytes::from_static(sse::KEEP_ALIVE)))));
            }
            return Poll::Pending;
        }
    }
}

fn stream_answer(
    first: Option<Outgoing>,
    receiver: StreamReceiver,
    watch: Option<RequestWatch>,
) -> Answer {
    let start = tokio::time::Instant::now() + KEEP_ALIVE;
    let stream = EventStream {
        first,
        receiver,
        keep_alive: tokio::time::interval_at(start, KEEP_ALIVE),
        watch,
        done: false,
    };
    let mut answer = Response::new(BodyExt::boxed(stream));
    let headers = answer.headers_mut();
    headers.insert(CONTENT_TYPE, HeaderValue::from_static("text/event-stream"));
    headers.insert(
        http::header::CACHE_CONTROL,
        HeaderValue::from_static("no-cache"),
    );
    headers.insert("x-accel-buffering", HeaderValue::from_static("no"));
    answer
}

fn json_answer(status: StatusCode, body: Vec<u8>) -> Answer {
    let mut answer = Response::new(Full::new(Bytes::from(body)).boxed());
    *answer.status_mut() = status;
    answer
        .headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    answer
}

fn failure_answer(failure: HttpFailure) -> Answer {
    let mut answer = Response::new(Full::new(failure.body).boxed());
    *answer.status_mut() = failure.status;
    *answer.headers_mut() = failure.headers;
    answer
}

fn plain(status: StatusCode, text: &'static str) -> Answer {
    let mut answer = Response::new(Full::new(Bytes::from_static(text.as_bytes())).boxed());
    *answer.status_mut() = status;
    answer
}

fn empty(status: StatusCode) -> Answer {
    let mut answer = Response::new(Full::new(Bytes::new()).boxed());
    *answer.status_mut() = status;
    answer
}

fn session_id_of(headers: &HeaderMap) -> Option<String> {
    headers
        .get("mcp-session-id")
        .and_then(|v| v.to_str().ok())
        .map(String::from)
}

/// A session id no one can guess: 128 random bits, in hex (`None` without a source of them).
fn new_session_id() -> Option<String> {
    use std::io::Read as _;
    let mut bytes = [0u8; 16];
    std::fs::File::open("/dev/urandom")
        .and_then(|mut f| f.read_exact(&mut bytes))
        .ok()?;
    Some(bytes.iter().map(|b| format!("{b:02x}")).collect())
}
