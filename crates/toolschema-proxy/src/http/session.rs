//! One proxied session on the HTTP side: a [`Gate`], the server behind it (a process over
//! stdio, or the upstream over HTTP) and the client's streams.
//!
//! Every message, from either side, is decided under one lock, and what the gate decides is
//! handed on under the same lock, in order: to the server's outbox (a channel), to the client's
//! streams ([`Routes`], or standard output for a stdio client), to the audit log. Nothing
//! waits under the lock.
//!
//! A 2025-11-25 client has a session of its own (`Mcp-Session-Id`). Requests of 2026-07-28
//! clients carry no session: those of one client (one token) share a *lane*, a session whose
//! request ids are made unique before the gate sees them, since independent requests may
//! reuse an id.

use super::queue::{Budget, StreamReceiver};
use super::routes::{Delivery, HttpFailure, Origin, Outgoing, Routes};
use super::stdio_server::{Queued, StdioServer};
use super::upstream::{UpstreamLink, UPSTREAM_REQUESTS};
use super::wire;
use crate::audit_log::AuditLog;
use crate::metrics::{Metrics, OpenSession, UpstreamError};
use crate::trace::{log_span, SessionTracer, TraceStart};
use http::HeaderMap;
use serde_json::{json, Value};
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Instant;
use tokio::sync::Notify;
use toolschema_gate::message::ErrorCode;
use toolschema_gate::message::{
    self, error_line, member_at, read, sniff_id, IdKey, Kind, Malformed, Read, RequestId,
};
use toolschema_gate::{report, Action, Gate};
use toolschema_mcp::framing::{Frame, OversizedLine};

/// Lock a mutex; a panic elsewhere must not stop the proxy, so a poisoned lock is used as it is.
pub(crate) fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Where the client is.
pub(crate) enum ClientSide {
    /// An HTTP client: its streams.
    Http(Box<Routes>),
    /// A client on this process's standard output.
    Stdio(StdioClient),
}

/// A client on this process's standard output: one line per message, to its writer. What it
/// has not read is bounded by `budget`: what the proxy reads for it (from the client itself,
/// from the upstream) waits for room there ([`Session::client_room`]), so a client that does
/// not read holds the upstream back, as a pipe does, and loses nothing.
pub(crate) struct StdioClient {
    /// The writer of standard output.
    pub writer: std::sync::mpsc::Sender<Queued>,
    /// The room of what waits for the writer.
    pub budget: Arc<Budget>,
}

/// The server behind the session.
pub(crate) enum Backend {
    /// A process over stdio.
    Stdio(Box<StdioServer>),
    /// The upstream, over HTTP.
    Upstream(UpstreamLink),
}

/// A message for the server, with the client headers an upstream gets with it.
#[derive(Debug)]
pub(crate) struct Outbound {
    /// One line of JSON.
    pub line: Vec<u8>,
    /// The headers to send with it (an upstream only).
    pub headers: HeaderMap,
    /// The request id, when it is a request.
    pub request: Option<RequestId>,
    /// The method, when it is a request or a notification.
    pub method: Option<String>,
}

/// Why a request the gate let through was answered instead of sent.
enum Refusal {
    /// The server (or the upstream) had no room for it.
    NotSent(NotSent),
    /// Its `Mcp-Param-*` headers disagree with its body: why.
    Headers(String),
}

/// Why a message was not sent to the server.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum NotSent {
    /// The server has not taken enough of what came before to make room for it.
    Queue,
    /// It is a request, and as many as a session may have are under way at the upstream
    /// ([`UPSTREAM_REQUESTS`]).
    Requests,
}

impl Backend {
    /// Queue a message for the server, or say why not.
    fn send(&self, outbound: Outbound) -> Result<(), NotSent> {
        match self {
            Backend::Stdio(server) => server
                .send(outbound.line)
                .then_some(())
                .ok_or(NotSent::Queue),
            Backend::Upstream(link) => link.send(outbound),
        }
    }
}

/// Request ids of a lane: ids unique in the lane, and the client's own where they were changed.
#[derive(Default)]
struct LaneIds {
    /// Requests in flight by their key in the lane: their id in the lane, and the client's id
    /// where it was changed.
    in_flight: HashMap<IdKey, (RequestId, Option<RequestId>)>,
    next: u64,
}

/// The client headers an upstream gets: each request's own, and the latest for the rest (the
/// proxy's own requests, notifications).
#[derive(Default)]
struct Forwarding {
    by_request: HashMap<IdKey, HeaderMap>,
    latest: HeaderMap,
}

/// Headers that belong to one request and never go with another message.
const PER_REQUEST: &[&str] = &["mcp-method", "mcp-name", "last-event-id"];

struct Core {
    gate: Gate,
    client: ClientSide,
    forwarding: Option<Forwarding>,
    lane: Option<LaneIds>,
}

/// One proxied session.
pub(crate) struct Session {
    /// How the session is named in reports: its id, or its lane.
    pub label: String,
    core: Mutex<Core>,
    backend: Backend,
    audit: Option<Arc<AuditLog>>,
    metrics: Option<Arc<Metrics>>,
    /// Counted among the sessions open until it closes.
    open: Mutex<Option<OpenSession>>,
    /// The client's name for the audit log (a token's name, never the token).
    client_name: Option<String>,
    last_active: Mutex<Instant>,
    closed: AtomicBool,
    /// Set once the server is gone.
    gone: AtomicBool,
    /// The server's queue had no room for the last message (said once until it has).
    server_full: AtomicBool,
    /// The upstream had as many requests of the session under way as it may (said once until
    /// a message is sent again).
    requests_full: AtomicBool,
    /// Woken when the gate's next deadline moved, or the session closed.
    pub deadline_moved: Notify,
    /// The room of a stdio client's queue, waited for outside the lock.
    client_room: Option<Arc<Budget>>,
    /// The spans of the session, when the proxy exports traces.
    tracer: Option<SessionTracer>,
}

/// How a session is set up.
pub(crate) struct SessionParts {
    pub label: String,
    pub gate: Gate,
    pub client: ClientSide,
    pub backend: Backend,
    pub audit: Option<Arc<AuditLog>>,
    pub metrics: Option<Arc<Metrics>>,
    pub client_name: Option<String>,
    /// Requests of independent clients share it: ids are made unique.
    pub lane: bool,
    /// The spans of the session, when the proxy exports traces.
    pub tracer: Option<SessionTracer>,
}

impl Session {
    /// A session; the caller starts what reads the server ([`StdioServer::start`],
    /// [`UpstreamLink::start`]) and [`Session::watch_deadlines`].
    pub fn new(parts: SessionParts) -> Arc<Session> {
        let forwarding = matches!(parts.backend, Backend::Upstream(_)).then(Forwarding::default);
        let client_room = match &parts.client {
            ClientSide::Stdio(client) => Some(client.budget.clone()),
            ClientSide::Http(_) => None,
        };
        Arc::new(Session {
            client_room,
            label: parts.label,
            core: Mutex::new(Core {
                gate: {
                    let mut gate = parts.gate;
                    if parts.metrics.is_some() {
                        gate.record_operations();
                    }
                    gate
                },
                client: parts.client,
                forwarding,
                lane: parts.lane.then(LaneIds::default),
            }),
            backend: parts.backend,
            audit: parts.audit,
            open: Mutex::new(Some(OpenSession::new(parts.metrics.clone()))),
            metrics: parts.metrics,
            client_name: parts.client_name,
            last_active: Mutex::new(Instant::now()),
            closed: AtomicBool::new(false),
            gone: AtomicBool::new(false),
            server_full: AtomicBool::new(false),
            requests_full: AtomicBool::new(false),
            deadline_moved: Notify::new(),
            tracer: parts.tracer,
        })
    }

    /// The server behind the session.
    pub fn backend(&self) -> &Backend {
        &self.backend
    }

    /// Tell the gate the time at each of its deadlines, until the session closes.
    pub fn watch_deadlines(self: &Arc<Self>) {
        let session = self.clone();
        tokio::spawn(async move {
            while !session.is_closed() {
                let deadline = lock(&session.core).gate.next_deadline();
                let moved = session.deadline_moved.notified();
                let wait = async {
                    match deadline {
                        Some(deadline) => tokio::time::sleep_until(deadline.into()).await,
                        None => std::future::pending().await,
                    }
                };
                tokio::select! {
                    () = wait => session.decide(None, &Origin::Client, |gate, out| {
                        gate.tick(Instant::now(), out)
                    }),
                    () = moved => {}
                }
            }
        });
    }

    /// Wait until a stdio client's queue has room for what is read next for it (at once for
    /// an HTTP client, whose streams are bounded on their own). Waited for before a message
    /// from the client or the server is decided, never under the lock: what one decision adds
    /// may take the queue past its budget, by what the gate answers one message with.
    pub async fn client_room(&self) {
        if let Some(budget) = &self.client_room {
            budget.wait_for_room().await;
        }
    }

    /// Whether the session was closed.
    pub fn is_closed(&self) -> bool {
        self.closed.load(Ordering::Relaxed)
    }

    /// Whether the server is gone.
    pub fn is_gone(&self) -> bool {
        self.gone.load(Ordering::Relaxed)
    }

    /// How long ago the client last sent something.
    pub fn idle_for(&self) -> std::time::Duration {
        lock(&self.last_active).elapsed()
    }

    /// Whether the gate has learned the server's tools.
    pub fn catalog_learned(&self) -> bool {
        lock(&self.core).gate.catalog_learned()
    }

    /// Whether requests are in flight (an idle session with requests in flight is not idle).
    pub fn is_busy(&self) -> bool {
        lock(&self.core).gate.requests_in_flight() > 0
    }

    fn touch(&self) {
        *lock(&self.last_active) = Instant::now();
    }

    /// Decide under the lock and hand on what was decided.
    fn decide(
        &self,
        event_id: Option<String>,
        origin: &Origin,
        decide: impl FnOnce(&mut Gate, &mut Vec<Action>),
    ) {
        let mut core = lock(&self.core);
        self.decide_locked(&mut core, event_id, origin, decide);
    }

    fn decide_locked(
        &self,
        core: &mut Core,
        event_id: Option<String>,
        origin: &Origin,
        decide: impl FnOnce(&mut Gate, &mut Vec<Action>),
    ) {
        self.decide_marking(core, event_id, origin, decide, |_, _| {});
    }

    /// Decide, let `mark` see what was decided before it is handed on, and hand it on.
    fn decide_marking(
        &self,
        core: &mut Core,
        event_id: Option<String>,
        origin: &Origin,
        decide: impl FnOnce(&mut Gate, &mut Vec<Action>),
        mark: impl FnOnce(&mut Core, &[Action]),
    ) {
        let mut actions = Vec::new();
        let before = core.gate.next_deadline();
        let started = Instant::now();
        decide(&mut core.gate, &mut actions);
        if let Some(metrics) = &self.metrics {
            for operation in core.gate.take_operations() {
                metrics.operation(&operation);
            }
        }
        if let Some(tracer) = &self.tracer {
            let window = matches!(origin, Origin::Client).then(|| (started, Instant::now()));
            tracer.observe(&mut actions, window);
        }
        mark(core, &actions);
        self.hand_on(core, actions, event_id, origin);
        if core.gate.next_deadline() != before {
            self.deadline_moved.notify_one();
        }
    }

    /// Hand on what the gate decided, in order.
    fn hand_on(
        &self,
        core: &mut Core,
        actions: Vec<Action>,
        event_id: Option<String>,
        origin: &Origin,
    ) {
        let to_client = actions
            .iter()
            .filter(|a| matches!(a, Action::ToClient(_)))
            .count();
        let mut refused = Vec::new();
        for action in actions {
            match action {
                Action::ToServer(line) => {
                    let mut outbound = core.outbound(line);
                    if let Err(why) = core.mirror_params(&mut outbound) {
                        refused.extend(outbound.request.map(|id| (id, Refusal::Headers(why))));
                        continue;
                    }
                    let request = outbound.request.clone();
                    let method = outbound.method.clone();
                    let Err(why) = self.backend.send(outbound) else {
                        self.server_full.store(false, Ordering::Relaxed);
                        self.requests_full.store(false, Ordering::Relaxed);
                        continue;
                    };
                    // Said once until the server takes messages again.
                    let (said, report) = match why {
                        NotSent::Queue => (
                            &self.server_full,
                            format!(
                                "the server has not taken what was sent to it before ({} messages or --max-message-bytes wait), so a {} was not sent, nor what follows until it takes some",
                                super::queue::SERVER_QUEUE,
                                method.as_deref().unwrap_or("message")
                            ),
                        ),
                        NotSent::Requests => (
                            &self.requests_full,
                            format!(
                                "{UPSTREAM_REQUESTS} requests of the session are under way at the upstream, as many as one session may have: a {} was not sent, nor requests that follow until one ends",
                                method.as_deref().unwrap_or("request")
                            ),
                        ),
                    };
                    if !said.swap(true, Ordering::Relaxed) {
                        report_for(&self.label, &report);
                    }
                    refused.extend(request.map(|id| (id, Refusal::NotSent(why))));
                }
                Action::ToClient(line) => {
                    // The upstream's event id goes with the message it came with.
                    let id = if to_client == 1 {
                        event_id.clone()
                    } else {
                        None
                    };
                    core.hand_to_client(line, id, origin);
                }
                Action::Audit(record) => {
                    if let Some(metrics) = &self.metrics {
                        metrics.call(&record, core.gate.knows_tool(&record.tool));
                    }
                    if let Some(audit) = &self.audit {
                        audit.write_for(&record, self.client_name.as_deref());
                    }
                }
            }
        }
        // A request the server had no room for is answered with an error that says so.
        for (id, why) in refused {
            let (code, reason) = match why {
                Refusal::NotSent(NotSent::Queue) => (-32000, "the server is not taking messages (too many wait for it); the request was not sent".to_string()),
                Refusal::NotSent(NotSent::Requests) => (-32000, format!("{UPSTREAM_REQUESTS} requests of this session are under way at the upstream already (at most {UPSTREAM_REQUESTS} at once); the request was not sent")),
                Refusal::Headers(why) => (wire::HEADER_MISMATCH, format!("Header mismatch: {why}")),
            };
            let line = error_line(Some(&id), ErrorCode(code), &reason, None);
            if let (ClientSide::Http(routes), wire::HEADER_MISMATCH) = (&mut core.client, code) {
                // Refused as a server that reads the body refuses it: 400.
                let mut headers = HeaderMap::new();
                headers.insert(
                    http::header::CONTENT_TYPE,
                    http::HeaderValue::from_static("application/json"),
                );
                let failure = HttpFailure {
                    status: http::StatusCode::BAD_REQUEST,
                    headers,
                    body: line.clone().into(),
                };
                routes.fail_request(id.key(), failure);
            }
            let mut answered = Vec::new();
            core.gate
                .server_message(line, Instant::now(), &mut answered);
            self.hand_on(core, answered, None, &Origin::Request(id.key().clone()));
        }
    }

    /// A request from an HTTP client: a stream for its answer (keyed by its id in the session),
    /// then the gate's decision.
    pub fn client_request(
        &self,
        body: Vec<u8>,
        headers: &HeaderMap,
        trace: Option<TraceStart>,
    ) -> Result<(IdKey, RequestId, StreamReceiver), Malformed> {
        self.touch();
        let text = message::text_of(body).map_err(|(_, malformed)| malformed)?;
        let mut guard = lock(&self.core);
        let core = &mut *guard;
        let ClientSide::Http(routes) = &mut core.client else {
            return Err(Malformed::NotAnObject);
        };
        let (text, id, key, receiver) = match read(&text)? {
            Read::One(message) => {
                let Kind::Request { id, .. } = &message.kind else {
                    return Err(Malformed::NotAnObject);
                };
                if core.lane.is_none() && routes.is_open(id.key()) {
                    // Its answer could not be told from the one in flight's, whose stream
                    // stays as it is: refused here, on a stream of its own.
                    return Ok(refused_at_once(id));
                }
                let token = wire::progress_token(&text, &message);
                let (text, key) = match &mut core.lane {
                    Some(lane) => lane.admit(text, &message, id),
                    None => (text, id.key().clone()),
                };
                let receiver = routes.open_request(key.clone(), token);
                (text, id.clone(), key, receiver)
            }
            // The answer to a batch is a batch, on a stream of the batch's own.
            Read::Batch(elements) => {
                let requests: Vec<RequestId> = elements
                    .iter()
                    .filter_map(|range| {
                        match toolschema_gate::message::read_object(&text, range.clone()) {
                            Ok(toolschema_gate::message::Message {
                                kind: Kind::Request { id, .. },
                                ..
                            }) => Some(id),
                            _ => None,
                        }
                    })
                    .collect();
                let Some(id) = requests.first().cloned() else {
                    return Err(Malformed::NotAnObject);
                };
                let (key, receiver) = routes.open_batch(requests);
                (text, id, key, receiver)
            }
        };
        if let Some(forwarding) = &mut core.forwarding {
            forwarding.remember(Some(&key), headers);
        }
        // Under the session's lock: the gate's next decision is this message's.
        let trace = self
            .tracer
            .as_ref()
            .and_then(|t| t.client_line(text.as_bytes(), trace));
        let _in_trace = log_span(trace).entered();
        self.decide_locked(core, None, &Origin::Client, |gate, out| {
            gate.client_message(text.into_bytes(), Instant::now(), out)
        });
        Ok((key, id, receiver))
    }

    /// A notification or a response from the client (or any message, from a stdio client).
    pub fn client_message(&self, body: Vec<u8>, headers: Option<&HeaderMap>) {
        self.touch();
        let mut core = lock(&self.core);
        if let (Some(forwarding), Some(headers)) = (&mut core.forwarding, headers) {
            forwarding.remember(None, headers);
        }
        // A stdio client's requests come this way too.
        let trace = self
            .tracer
            .as_ref()
            .and_then(|t| t.client_line(&body, None));
        let _in_trace = log_span(trace).entered();
        let cancelled = super::upstream::cancelled_request(&body);
        self.decide_locked(&mut core, None, &Origin::Client, |gate, out| {
            gate.client_message(body, Instant::now(), out)
        });
        // A request the client cancelled and the gate closed gets no answer: its stream ends.
        if let (Some(id), None) = (cancelled, &core.lane) {
            if !core.gate.awaits_answer(id.key()) {
                if let ClientSide::Http(routes) = &mut core.client {
                    routes.close_request(id.key());
                }
            }
        }
    }

    /// A message from a stdio client longer than the limit.
    pub fn client_message_too_large(&self, over: &OversizedLine) {
        let id = sniff_id(&over.head, &over.tail);
        self.decide(None, &Origin::Client, |gate, out| {
            gate.client_message_too_large(over.length, id, out)
        });
    }

    /// A frame from a server over stdio.
    pub fn server_frame(&self, frame: Frame) {
        match frame {
            Frame::Line(line) => self.server_message(line, None, &Origin::Stdio),
            Frame::Oversized(over) => {
                let id = sniff_id(&over.head, &over.tail);
                self.decide(None, &Origin::Stdio, |gate, out| {
                    gate.server_message_too_large(over.length, id, Instant::now(), out)
                });
            }
        }
    }

    /// A message from the server, with the upstream's event id, from `origin`.
    pub fn server_message(&self, data: Vec<u8>, event_id: Option<String>, origin: &Origin) {
        self.decide(event_id, origin, |gate, out| {
            gate.server_message(data, Instant::now(), out)
        });
    }

    /// The upstream did not answer request `id` with a message (it failed, answered with an
    /// HTTP error, broke off or was cancelled): the gate answers it with an error saying why,
    /// and an HTTP failure is passed on to the client as it was. When `id` is the proxy's own
    /// (its listing) and the failure speaks of the client's standing (an expired session, its
    /// credentials), the client's requests that waited for it, and that the gate answers now,
    /// get that failure too, as they would have had they gone on.
    pub fn request_failed(&self, id: &RequestId, reason: &str, failure: Option<HttpFailure>) {
        let mut core = lock(&self.core);
        let waiting = match &failure {
            Some(failure) if failure.concerns_the_client() => core.gate.waiting_on(id.key()),
            _ => Vec::new(),
        };
        if let (Some(failure), ClientSide::Http(routes)) = (&failure, &mut core.client) {
            routes.fail_request(id.key(), failure.clone());
        }
        let line = error_line(Some(id), ErrorCode(-32000), reason, None);
        self.decide_marking(
            &mut core,
            None,
            &Origin::Request(id.key().clone()),
            |gate, out| gate.server_message(line, Instant::now(), out),
            |core, actions| {
                let (Some(failure), ClientSide::Http(routes)) = (&failure, &mut core.client) else {
                    return;
                };
                if waiting.is_empty() {
                    return;
                }
                for action in actions {
                    if let Action::ToClient(line) = action {
                        if let Some(stream) = routes.answers_any(line, &waiting) {
                            routes.fail_request(&stream, failure.clone());
                        }
                    }
                }
            },
        );
    }

    /// The client went away from request `key` (or it ran out of time, `answer` then says
    /// with what the client is answered): the server is told to stop, and the gate closes the
    /// request; for a batch's stream, every request of the batch.
    pub fn cancel(&self, key: &IdKey, id: &RequestId, reason: &str, answer: bool) {
        let mut core = lock(&self.core);
        let batch = match &mut core.client {
            ClientSide::Http(routes) => routes.batch_requests(key),
            ClientSide::Stdio(_) => Vec::new(),
        };
        if !answer {
            if let ClientSide::Http(routes) = &mut core.client {
                routes.close_request(key);
            }
        }
        if batch.is_empty() {
            return self.cancel_one(&mut core, key, id, reason);
        }
        // What the server answered already is in the batch's answer, waiting for the rest.
        let waiting: Vec<&RequestId> = batch
            .iter()
            .filter(|r| core.gate.awaits_answer_in_batch(r.key()))
            .collect();
        for request in waiting {
            self.cancel_one(&mut core, request.key(), request, reason);
        }
    }

    fn cancel_one(&self, core: &mut Core, key: &IdKey, id: &RequestId, reason: &str) {
        let lane_id = core.lane_request_id(key).unwrap_or_else(|| id.clone());
        let modern = matches!(&self.backend, Backend::Upstream(link) if link.is_stateless());
        match &self.backend {
            // Over HTTP from 2026-07-28 on, closing the response stream is the cancellation.
            Backend::Upstream(link) if modern => {
                link.abort(key);
                // The gate closes the request (and audits it); a late answer from the server
                // finds no stream and is dropped.
                let line = error_line(Some(&lane_id), ErrorCode(-32000), reason, None);
                self.decide_locked(core, None, &Origin::Request(key.clone()), |gate, out| {
                    gate.server_message(line, Instant::now(), out)
                });
            }
            _ => {
                // The server is told, the gate closes the request (a call audited as
                // cancelled) and drops a late answer, and the client's stream, if it still
                // has one, gets the error.
                self.decide_locked(core, None, &Origin::Request(key.clone()), |gate, out| {
                    gate.give_up(&lane_id, reason, Instant::now(), out)
                });
                if let Backend::Upstream(link) = &self.backend {
                    link.abort(key);
                }
            }
        }
    }

    /// The upstream failed a request, or the server exited (counted).
    pub fn upstream_error(&self, kind: UpstreamError) {
        if let Some(metrics) = &self.metrics {
            metrics.upstream_error(kind);
        }
    }

    /// The server is gone: every request in flight is answered with this error.
    pub fn server_gone(&self, message: &str, data: Value) {
        self.gone.store(true, Ordering::Relaxed);
        self.decide(None, &Origin::Stdio, |gate, out| {
            gate.server_gone(message, data, Instant::now(), out)
        });
    }

    /// The client's GET stream (what waited for it comes first).
    pub fn open_standalone(&self) -> Option<StreamReceiver> {
        self.touch();
        match &mut lock(&self.core).client {
            ClientSide::Http(routes) => Some(routes.open_standalone()),
            ClientSide::Stdio(_) => None,
        }
    }

    /// The HTTP failure the upstream answered request `key` with, if it did.
    pub fn take_failure(&self, key: &IdKey) -> Option<HttpFailure> {
        match &mut lock(&self.core).client {
            ClientSide::Http(routes) => routes.take_failure(key),
            ClientSide::Stdio(_) => None,
        }
    }

    /// The latest client headers, for what the proxy sends the upstream on the client's behalf
    /// (a GET stream, a DELETE).
    pub fn latest_headers(&self) -> HeaderMap {
        lock(&self.core)
            .forwarding
            .as_ref()
            .map(|f| f.latest.clone())
            .unwrap_or_default()
    }

    /// Close the session: its streams end, the server is stopped.
    pub async fn close(&self) {
        if self.closed.swap(true, Ordering::Relaxed) {
            return;
        }
        lock(&self.open).take();
        if let ClientSide::Http(routes) = &mut lock(&self.core).client {
            routes.close_all();
        }
        self.deadline_moved.notify_one();
        match &self.backend {
            Backend::Stdio(server) => server.shut_down().await,
            Backend::Upstream(link) => link.close(&self.latest_headers()).await,
        }
    }
}

impl Core {
    /// A message for the server, with the headers it goes with.
    fn outbound(&mut self, line: Vec<u8>) -> Outbound {
        let (request, method) = match std::str::from_utf8(&line).ok().map(read) {
            Some(Ok(Read::One(message))) => match message.kind {
                Kind::Request { id, method } => (Some(id), Some(method)),
                Kind::Notification { method } => (None, Some(method)),
                _ => (None, None),
            },
            _ => (None, None),
        };
        let headers = match &mut self.forwarding {
            Some(forwarding) => forwarding.headers_for(request.as_ref().map(RequestId::key)),
            None => HeaderMap::new(),
        };
        Outbound {
            line,
            headers,
            request,
            method,
        }
    }

    /// Set the `Mcp-Param-*` headers of a message for the upstream from its body, or say how
    /// the client's disagree with it ([`wire::mirror_params`]).
    fn mirror_params(&self, outbound: &mut Outbound) -> Result<(), String> {
        if self.forwarding.is_none() {
            return Ok(());
        }
        let Ok(text) = std::str::from_utf8(&outbound.line) else {
            return Ok(());
        };
        wire::mirror_params(&mut outbound.headers, text, |tool| {
            self.gate.mirrored_arguments(tool)
        })
    }

    /// Hand a message on to the client.
    fn hand_to_client(&mut self, line: Vec<u8>, event_id: Option<String>, origin: &Origin) {
        if let Some(forwarding) = self
            .forwarding
            .as_mut()
            .filter(|f| !f.by_request.is_empty())
        {
            // A request the gate answered itself never took its headers.
            if let Some(Ok(Read::One(message))) = std::str::from_utf8(&line).ok().map(read) {
                if let Kind::Response { id, .. } = &message.kind {
                    forwarding.by_request.remove(id.key());
                }
            }
        }
        // A lane's answer is routed by its id in the lane (clients of the lane may use the same
        // ids), and carries the client's own id once its stream is chosen.
        let mut restore = |line: Vec<u8>| match &mut self.lane {
            Some(lane) => lane.restore(line),
            None => line,
        };
        match &mut self.client {
            ClientSide::Http(routes) => {
                if routes.deliver_shown(line, event_id, origin, restore) == Delivery::Dropped {
                    tracing::debug!("a message for a client stream that is gone was dropped");
                }
            }
            ClientSide::Stdio(client) => {
                let line = restore(line);
                let permit = client.budget.take_anyway(line.len());
                // A closed writer: the client is gone, and its end of input ends the proxy.
                let _ = client.writer.send(Queued {
                    line,
                    _permit: Some(permit),
                });
            }
        }
    }

    /// The id request `key` has in the lane, if it is a lane's request.
    fn lane_request_id(&self, key: &IdKey) -> Option<RequestId> {
        let lane = self.lane.as_ref()?;
        lane.in_flight.get(key).map(|(id, _)| id.clone())
    }
}

impl LaneIds {
    /// A request entering the lane: its text with an id no other request in flight has (the
    /// client's own when it is free), and that id's key.
    fn admit(
        &mut self,
        text: String,
        message: &message::Message,
        id: &RequestId,
    ) -> (String, IdKey) {
        if !self.in_flight.contains_key(id.key()) {
            self.in_flight.insert(id.key().clone(), (id.clone(), None));
            return (text, id.key().clone());
        }
        let unique = loop {
            self.next += 1;
            let unique = RequestId::from_value(&json!(format!("toolschema-lane-{}", self.next)));
            if !self.in_flight.contains_key(unique.key()) {
                break unique;
            }
        };
        let text = match member_at(&text, 0..text.len(), "id") {
            Some(at) if matches!(message.kind, Kind::Request { .. }) => {
                message::with_id(&text, at, &unique)
            }
            _ => text,
        };
        self.in_flight
            .insert(unique.key().clone(), (unique.clone(), Some(id.clone())));
        (text, unique.key().clone())
    }

    /// An answer for the client, with the client's own id back where the lane changed it.
    fn restore(&mut self, line: Vec<u8>) -> Vec<u8> {
        let Ok(text) = std::str::from_utf8(&line) else {
            return line;
        };
        let Ok(Read::One(message)) = read(text) else {
            return line;
        };
        let Kind::Response { id, id_at } = &message.kind else {
            return line;
        };
        match self.in_flight.remove(id.key()) {
            Some((_, Some(original))) => {
                message::with_id(text, id_at.clone(), &original).into_bytes()
            }
            _ => line,
        }
    }
}

impl Forwarding {
    /// Remember the headers of a client message: as the request's own, and as the latest.
    fn remember(&mut self, request: Option<&IdKey>, headers: &HeaderMap) {
        if let Some(key) = request {
            self.by_request.insert(key.clone(), headers.clone());
        }
        let mut latest = headers.clone();
        for name in PER_REQUEST {
            latest.remove(*name);
        }
        let params: Vec<http::HeaderName> = latest
            .keys()
            .filter(|name| name.as_str().starts_with(wire::PARAM_PREFIX))
            .cloned()
            .collect();
        for name in params {
            latest.remove(name);
        }
        self.latest = latest;
    }

    /// The headers for a message: its request's own, or the latest.
    fn headers_for(&mut self, request: Option<&IdKey>) -> HeaderMap {
        request
            .and_then(|key| self.by_request.remove(key))
            .unwrap_or_else(|| self.latest.clone())
    }
}

/// The answer to a request whose id one in flight in the session has, on a stream of its own:
/// an Invalid Request error, as the gate words it.
fn refused_at_once(id: &RequestId) -> (IdKey, RequestId, StreamReceiver) {
    let (sender, receiver) = super::queue::stream(1, usize::MAX);
    let reason = toolschema_gate::in_flight_already(id);
    let _ = sender.try_send(Outgoing {
        event_id: None,
        data: error_line(Some(id), ErrorCode::INVALID_REQUEST, &reason, None),
        last: true,
    });
    (IdKey::unrouted(), id.clone(), receiver)
}

/// Report what the session cannot do, once per session and reason.
pub(crate) fn report_for(session: &str, what: &str) {
    report(&format!("session {session}: {what}"));
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use proptest::prelude::*;

    fn request(id: &str) -> (String, message::Message, RequestId) {
        let text = format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{}}}}"#);
        let Ok(Read::One(message)) = read(&text) else {
            panic!("{text}");
        };
        let Kind::Request { id, .. } = &message.kind else {
            panic!("{text}");
        };
        let id = id.clone();
        (text, message, id)
    }

    proptest! {
        /// Independent clients of one lane reuse ids (`3` and `3.0` are one id): in the lane
        /// every request in flight has an id of its own, and each answer goes back with the id
        /// exactly as its client wrote it, whatever the order of the answers.
        #[test]
        fn every_client_gets_its_own_id_back(
            ids in proptest::collection::vec(
                prop_oneof![
                    Just("1".to_string()), Just("1.0".to_string()), Just("10e-1".to_string()),
                    Just("\"1\"".to_string()), Just("\"toolschema-lane-1\"".to_string()),
                    Just("18446744073709551617".to_string()), (0u8..4).prop_map(|n| n.to_string()),
                ],
                1..24,
            ),
            order in proptest::collection::vec(any::<proptest::sample::Index>(), 24),
        ) {
            let mut lane = LaneIds::default();
            let mut in_lane = Vec::new();
            for raw in &ids {
                let (text, message, id) = request(raw);
                let (text, key) = lane.admit(text, &message, &id);
                let Ok(Read::One(admitted)) = read(&text) else { panic!("{text}") };
                let Kind::Request { id: lane_id, .. } = admitted.kind else { panic!("{text}") };
                prop_assert_eq!(lane_id.key(), &key);
                prop_assert!(!in_lane.iter().any(|(k, _)| *k == key), "unique in the lane");
                in_lane.push((key, (raw.clone(), lane_id)));
            }
            let mut pending: Vec<(String, RequestId)> = in_lane.into_iter().map(|(_, v)| v).collect();
            let mut picks = order.into_iter();
            while !pending.is_empty() {
                let at = picks.next().map_or(0, |i| i.index(pending.len()));
                let (raw, lane_id) = pending.remove(at);
                let answer = format!(r#"{{"jsonrpc":"2.0","id":{},"result":{{}}}}"#, lane_id.raw());
                let restored = String::from_utf8(lane.restore(answer.into_bytes())).unwrap();
                prop_assert_eq!(restored, format!(r#"{{"jsonrpc":"2.0","id":{raw},"result":{{}}}}"#));
            }
            prop_assert!(lane.in_flight.is_empty());
        }
    }
}
