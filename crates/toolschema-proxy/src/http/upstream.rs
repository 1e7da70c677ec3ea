//! The upstream: a remote MCP server over Streamable HTTP, behind the proxy's sessions.
//!
//! Each message the gate lets through is posted on its own, with the client headers it came
//! with (the client's token, when the proxy does not authenticate clients itself), the
//! `--header` values, the upstream's session id and, from 2026-07-28 on, the standard request
//! headers derived from the message itself. Requests go out at once, each on its own
//! connection from the pool; notifications and responses go out one after the other, each
//! accepted before the next (so `notifications/initialized` arrives before what follows it).
//!
//! Answers come back as JSON or as an event stream; each message goes to the gate with the
//! stream it came on. A stream that ends before it answered, after an event id, is resumed
//! with `Last-Event-ID` (2025-11-25); otherwise, and when the upstream fails, answers with an
//! HTTP error or breaks off, the gate answers the request with an error that says so.

use super::queue::{Budget, Permit, SERVER_QUEUE};
use super::routes::{HttpFailure, Origin};
use super::session::{lock, NotSent, Outbound, Session};
use super::sse::Decoder;
use super::wire;
use crate::metrics::UpstreamError;
use bytes::Bytes;
use http::header::{ACCEPT, CONTENT_TYPE, WWW_AUTHENTICATE};
use http::{HeaderMap, HeaderName, HeaderValue, Method, Request, StatusCode};
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use serde_json::Value;
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;
use tokio::sync::mpsc;
use tokio::task::AbortHandle;
use toolschema_gate::message::{self, read, IdKey, Kind, Read, RequestId};
use toolschema_gate::report;
use toolschema_http::client::{read_body, PooledClient};

/// How many times a broken event stream is resumed before the request fails.
const RESUMPTIONS: usize = 3;

/// The largest error body passed on from the upstream.
const ERROR_BODY_BYTES: usize = 64 * 1024;

/// How long an idle pooled connection stays open.
const POOL_IDLE: Duration = Duration::from_secs(30);

/// How many requests one session (or 2026-07-28 lane) may have under way at the upstream at
/// once, each a task and a connection: past it a request is not sent, and its client gets an
/// error that says so (a stdio client may send without waiting for answers).
pub(crate) const UPSTREAM_REQUESTS: usize = 256;

/// The remote server, shared by every session of the proxy.
pub(crate) struct Upstream {
    url: String,
    client: PooledClient,
    headers: HeaderMap,
    max_message_bytes: usize,
    request_timeout: Duration,
    /// The order of what the proxy sends and hears: see [`Upstream::tick`].
    clock: AtomicU64,
}

/// How a session taken over from another replica stands with the upstream. Ownership of a
/// taken-over session rests on the client's word (its id) until the upstream confirms the
/// session exists; a session the upstream refused is none.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Takeover {
    /// Opened here with `initialize` (or a lane): not taken over.
    No,
    /// Taken over; the upstream has not answered a message in it yet.
    Unconfirmed,
    /// The upstream accepted a message in it; its answer came at this [`Upstream::tick`].
    Confirmed(u64),
    /// The upstream refused the first message in it (no such session, or an error).
    Refused,
}

impl Upstream {
    /// The upstream at `url` (`http://` or `https://`), with `headers` added to every request.
    pub fn new(
        url: &str,
        headers: HeaderMap,
        max_message_bytes: usize,
        request_timeout: Duration,
    ) -> Result<Arc<Upstream>, String> {
        let uri: http::Uri = url
            .parse()
            .map_err(|e| format!("--upstream '{url}' is not a URL: {e}"))?;
        if !matches!(uri.scheme_str(), Some("http" | "https")) || uri.host().is_none() {
            return Err(format!(
                "--upstream '{url}' is not an http:// or https:// URL"
            ));
        }
        Ok(Arc::new(Upstream {
            url: url.to_string(),
            client: PooledClient::new(POOL_IDLE, 256),
            headers,
            max_message_bytes,
            request_timeout,
            clock: AtomicU64::new(0),
        }))
    }

    /// The next point of the proxy's clock of the upstream: taken before an `initialize` is
    /// sent and when a taken-over session is confirmed, so that the proxy can tell whether the
    /// confirmation came before the `initialize` was sent (the session existed before) or not
    /// (it may be the session the `initialize` created).
    pub fn tick(&self) -> u64 {
        self.clock.fetch_add(1, Ordering::Relaxed) + 1
    }

    /// The upstream's URL.
    pub fn url(&self) -> &str {
        &self.url
    }
}

/// What a session knows of its upstream.
struct LinkState {
    upstream: Arc<Upstream>,
    /// The upstream's session id (2025-11-25), learned from its answer to `initialize`.
    session_id: Mutex<Option<String>>,
    /// The protocol revision the upstream answered `initialize` with.
    protocol: Mutex<Option<String>>,
    /// Requests of independent 2026-07-28 clients: no session.
    stateless: bool,
    /// The client cannot open a GET stream itself (it is on stdio): the proxy opens it.
    own_standalone: bool,
    /// Requests under way, to stop when their client goes.
    tasks: Mutex<HashMap<IdKey, AbortHandle>>,
    standalone: Mutex<Option<AbortHandle>>,
    /// Whether the session was taken over, and what the upstream said of it.
    takeover: Mutex<Takeover>,
    /// The upstream answered 404 to a message naming the session: it ended it (expired, or
    /// never had it), and every later message in it would get the same (MCP).
    ended: AtomicBool,
}

impl LinkState {
    /// The upstream answered a request of this session with `status` (`None`: no answer
    /// came); a taken-over session is confirmed or refused by its first answer. A 404 to a
    /// message (a POST) naming the session, `session_id`, ends the session; a GET is `None`
    /// there, since servers without a GET stream may answer it 404 while the session lives.
    fn heard(&self, status: Option<StatusCode>, session_id: Option<&str>) {
        let success = status.is_some_and(|s| s.is_success());
        if status == Some(StatusCode::NOT_FOUND) && session_id.is_some() && !self.stateless {
            self.ended.store(true, Ordering::Relaxed);
        }
        let mut takeover = lock(&self.takeover);
        if *takeover == Takeover::Unconfirmed {
            *takeover = if success {
                Takeover::Confirmed(self.upstream.tick())
            } else {
                Takeover::Refused
            };
        }
    }
}

/// A message for the upstream, holding its room in the link's budget until it is sent; a
/// request holds its place among the requests under way until it ends.
struct Queued {
    outbound: Outbound,
    _room: Permit,
    under_way: Option<Permit>,
}

/// One session's link to the upstream.
pub(crate) struct UpstreamLink {
    state: Arc<LinkState>,
    queue: mpsc::UnboundedSender<Queued>,
    receiver: Mutex<Option<mpsc::UnboundedReceiver<Queued>>>,
    /// What the upstream has not taken yet may take (the queue is bounded by it).
    budget: Arc<Budget>,
    /// The requests under way ([`UPSTREAM_REQUESTS`]).
    requests: Arc<Budget>,
}

impl UpstreamLink {
    /// A link; `stateless` for a lane of 2026-07-28 requests, `own_standalone` when the proxy
    /// opens the GET stream for a client that cannot (a stdio client).
    pub fn new(upstream: Arc<Upstream>, stateless: bool, own_standalone: bool) -> UpstreamLink {
        let (queue, receiver) = mpsc::unbounded_channel();
        let budget = Budget::new(SERVER_QUEUE, upstream.max_message_bytes);
        UpstreamLink {
            budget,
            requests: Budget::new(UPSTREAM_REQUESTS, usize::MAX),
            state: Arc::new(LinkState {
                upstream,
                session_id: Mutex::new(None),
                protocol: Mutex::new(None),
                stateless,
                own_standalone,
                tasks: Mutex::new(HashMap::new()),
                standalone: Mutex::new(None),
                takeover: Mutex::new(Takeover::No),
                ended: AtomicBool::new(false),
            }),
            queue,
            receiver: Mutex::new(Some(receiver)),
        }
    }

    /// Start sending what the session queues.
    pub fn start(session: &Arc<Session>) {
        let super::session::Backend::Upstream(link) = session.backend() else {
            return;
        };
        let Some(receiver) = lock(&link.receiver).take() else {
            return;
        };
        let state = link.state.clone();
        let weak = Arc::downgrade(session);
        tokio::spawn(send_queued(state, receiver, weak));
    }

    /// Queue a message for the upstream, or say why not: the upstream has not taken enough of
    /// what came before to make room for it, or it is a request and the session has as many
    /// under way as it may.
    pub fn send(&self, outbound: Outbound) -> Result<(), NotSent> {
        let under_way = match outbound.request {
            Some(_) => Some(self.requests.take(0).ok_or(NotSent::Requests)?),
            None => None,
        };
        let room = self
            .budget
            .take(outbound.line.len())
            .ok_or(NotSent::Queue)?;
        // A closed queue: the session is closing.
        let _ = self.queue.send(Queued {
            outbound,
            _room: room,
            under_way,
        });
        Ok(())
    }

    /// Whether this is a lane of 2026-07-28 requests.
    pub fn is_stateless(&self) -> bool {
        self.state.stateless
    }

    /// The upstream's session id, once known.
    pub fn session_id(&self) -> Option<String> {
        lock(&self.state.session_id).clone()
    }

    /// Use the session id a client sent (a session another replica of the proxy opened): the
    /// session is taken over, unconfirmed until the upstream answers a message in it.
    pub fn adopt_session_id(&self, id: &str) {
        *lock(&self.state.session_id) = Some(id.to_string());
        *lock(&self.state.takeover) = Takeover::Unconfirmed;
    }

    /// Whether the upstream ended the session (it answered 404 to a message in it).
    pub fn is_ended(&self) -> bool {
        self.state.ended.load(Ordering::Relaxed)
    }

    /// Whether the session was taken over, and what the upstream said of it.
    pub fn takeover(&self) -> Takeover {
        *lock(&self.state.takeover)
    }

    /// Stop the request `key` (its client went away): the upstream sees its stream close.
    pub fn abort(&self, key: &IdKey) {
        if let Some(task) = lock(&self.state.tasks).remove(key) {
            task.abort();
        }
    }

    /// Open the upstream's GET stream for `session`, with the client's headers (its
    /// `Last-Event-ID` among them); an HTTP failure is the upstream's answer to pass on.
    pub async fn open_standalone(
        &self,
        session: &Arc<Session>,
        headers: &HeaderMap,
    ) -> Result<(), HttpFailure> {
        open_standalone(self.state.clone(), Arc::downgrade(session), headers).await
    }

    /// Wait until no request of this link is under way with the upstream, at most `limit`: a
    /// session given up while its `initialize` is under way is ended once the upstream has
    /// given its id.
    pub async fn settle(&self, limit: Duration) {
        let deadline = tokio::time::Instant::now() + limit;
        while !lock(&self.state.tasks).is_empty() && tokio::time::Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// Forget the upstream's session id, so that closing the link does not end a session that
    /// is another's too.
    pub fn forget_session_id(&self) {
        lock(&self.state.session_id).take();
    }

    /// End the upstream's session (DELETE), returning its answer; nothing to end: `None`.
    pub async fn delete(&self, headers: &HeaderMap) -> Option<Result<StatusCode, String>> {
        let id = lock(&self.state.session_id).take()?;
        let request = build(&self.state, Method::DELETE, headers, None, Some(&id));
        let result = match request {
            Ok(request) => match self.state.upstream.client.send(request).await {
                Ok(response) => Ok(response.status()),
                Err(e) => Err(e.to_string()),
            },
            Err(e) => Err(e),
        };
        Some(result)
    }

    /// Close the link: requests under way stop, the upstream's session is ended.
    pub async fn close(&self, headers: &HeaderMap) {
        for (_, task) in lock(&self.state.tasks).drain() {
            task.abort();
        }
        if let Some(task) = lock(&self.state.standalone).take() {
            task.abort();
        }
        if let Some(Err(e)) = self.delete(headers).await {
            report(&format!("cannot end the upstream's session: {e}"));
        }
    }
}

/// Send the session's messages: requests at once, each on its own; the rest in order.
async fn send_queued(
    state: Arc<LinkState>,
    mut queue: mpsc::UnboundedReceiver<Queued>,
    session: Weak<Session>,
) {
    // Each message holds its room until it is sent (a request's, until its task is started;
    // its place among the requests under way, until the task ends).
    while let Some(Queued {
        outbound,
        under_way,
        ..
    }) = queue.recv().await
    {
        if let Some(id) = outbound.request.clone() {
            let key = id.key().clone();
            let exchanged = exchange(state.clone(), session.clone(), outbound, id);
            let task = tokio::spawn(async move {
                exchanged.await;
                drop(under_way);
            });
            lock(&state.tasks).insert(key, task.abort_handle());
            continue;
        }
        let method = outbound.method.clone();
        if state.stateless && method.as_deref() == Some("notifications/cancelled") {
            // Over HTTP from 2026-07-28 on, a request is cancelled by closing its stream.
            cancel_stateless(&state, &session, &outbound.line);
            continue;
        }
        post_message(&state, outbound).await;
        if state.own_standalone && method.as_deref() == Some("notifications/initialized") {
            let headers = HeaderMap::new();
            if let Err(failure) = open_standalone(state.clone(), session.clone(), &headers).await {
                if failure.status != StatusCode::METHOD_NOT_ALLOWED {
                    report(&format!(
                        "the upstream refused its GET stream (HTTP {}): what it sends unasked does not reach the client",
                        failure.status
                    ));
                }
            }
        }
    }
}

/// A client's `notifications/cancelled` in a stateless session: the request's stream is
/// closed, and the gate closes the request.
fn cancel_stateless(state: &LinkState, session: &Weak<Session>, line: &[u8]) {
    let Some(id) = cancelled_request(line) else {
        return;
    };
    if let Some(task) = lock(&state.tasks).remove(id.key()) {
        task.abort();
        if let Some(session) = session.upgrade() {
            session.request_failed(&id, "the request was cancelled by the client", None);
        }
    }
}

/// The `requestId` of a `notifications/cancelled` (`None` for any other message).
pub(crate) fn cancelled_request(line: &[u8]) -> Option<RequestId> {
    let text = std::str::from_utf8(line).ok()?;
    let Ok(Read::One(notification)) = read(text) else {
        return None;
    };
    let message::Kind::Notification { method } = &notification.kind else {
        return None;
    };
    if method != "notifications/cancelled" {
        return None;
    }
    let at = message::member_at(text, notification.params?, "requestId")?;
    Some(RequestId::from_text(&text[at]))
}

/// Post a notification or a response, and wait until the upstream took it.
async fn post_message(state: &LinkState, outbound: Outbound) {
    let session_id = lock(&state.session_id).clone();
    let request = match build(
        state,
        Method::POST,
        &outbound.headers,
        Some(&outbound),
        session_id.as_deref(),
    ) {
        Ok(request) => request,
        Err(e) => return report(&format!("cannot send a message to the upstream: {e}")),
    };
    let sent = state.upstream.client.send(request).await;
    state.heard(
        sent.as_ref().ok().map(|r| r.status()),
        session_id.as_deref(),
    );
    match sent {
        Ok(response) if response.status().is_success() => {
            let _ = response.into_body().collect().await;
        }
        Ok(response) => report(&format!(
            "the upstream refused a message (HTTP {}): {}",
            response.status(),
            excerpt(&read_error_body(response).await)
        )),
        Err(e) => report(&format!("cannot send a message to the upstream: {e}")),
    }
}

/// Post a request and hand its answer to the session.
async fn exchange(
    state: Arc<LinkState>,
    session: Weak<Session>,
    outbound: Outbound,
    id: RequestId,
) {
    let key = id.key().clone();
    let timeout = state.upstream.request_timeout;
    let initialize = outbound.method.as_deref() == Some("initialize");
    let outcome = tokio::time::timeout(timeout, answer(&state, &session, &outbound, &id)).await;
    let kind = match &outcome {
        Ok(Ok(_)) => None,
        Ok(Err((_, Some(_)))) => Some(UpstreamError::Status),
        Ok(Err((reason, None))) if reason.starts_with(UNREACHABLE) => Some(UpstreamError::Connect),
        Ok(Err(_)) => Some(UpstreamError::Protocol),
        Err(_) => Some(UpstreamError::Timeout),
    };
    if let (Some(kind), Some(session)) = (kind, session.upgrade()) {
        session.upstream_error(kind);
    }
    let failure = match outcome {
        Ok(Ok(answered)) => {
            if initialize {
                if let Some(protocol) = answered.and_then(|data| protocol_of(&data)) {
                    *lock(&state.protocol) = Some(protocol);
                }
            }
            None
        }
        Ok(Err((reason, failure))) => Some((reason, failure)),
        Err(_) => Some((
            format!(
                "the upstream did not answer within {} s (--request-timeout)",
                timeout.as_secs()
            ),
            None,
        )),
    };
    lock(&state.tasks).remove(&key);
    if let (Some((reason, failure)), Some(session)) = (failure, session.upgrade()) {
        session.request_failed(&id, &reason, failure);
    }
}

type Failed = (String, Option<HttpFailure>);

/// How a failure to reach the upstream begins (counted as a connection error).
const UNREACHABLE: &str = "the upstream cannot be reached";

/// Post the request and pass on its answer; `Ok` with the answer when one came.
async fn answer(
    state: &Arc<LinkState>,
    session: &Weak<Session>,
    outbound: &Outbound,
    id: &RequestId,
) -> Result<Option<Vec<u8>>, Failed> {
    let session_id = lock(&state.session_id).clone();
    let request = build(
        state,
        Method::POST,
        &outbound.headers,
        Some(outbound),
        session_id.as_deref(),
    )
    .map_err(|e| {
        (
            format!("cannot send the request to the upstream: {e}"),
            None,
        )
    })?;
    let sent = state.upstream.client.send(request).await;
    state.heard(
        sent.as_ref().ok().map(|r| r.status()),
        session_id.as_deref(),
    );
    let response = sent.map_err(|e| (format!("{UNREACHABLE}: {e}"), None))?;
    if let Some(new_id) = response
        .headers()
        .get("mcp-session-id")
        .and_then(|v| v.to_str().ok())
    {
        if !state.stateless {
            *lock(&state.session_id) = Some(new_id.to_string());
        }
    }
    let status = response.status();
    if !status.is_success() {
        let headers = passed_on(response.headers());
        let body = read_error_body(response).await;
        let reason = format!("the upstream answered HTTP {status}: {}", excerpt(&body));
        return Err((
            reason,
            Some(HttpFailure {
                status,
                headers,
                body,
            }),
        ));
    }
    if matches!(status, StatusCode::ACCEPTED | StatusCode::NO_CONTENT) {
        return Err((
            "the upstream accepted the request without answering it".to_string(),
            None,
        ));
    }
    let key = id.key().clone();
    let origin = Origin::Request(key.clone());
    if is_event_stream(response.headers()) {
        let mut end = pump(state, session, response.into_body(), &origin, Some(&key)).await;
        let mut resumed = 0;
        while end.answer.is_none() && end.error.is_none() && resumed < RESUMPTIONS {
            let Some(last) = end.last_event_id.clone() else {
                break;
            };
            resumed += 1;
            let body = resume(state, &outbound.headers, &last)
                .await
                .map_err(|e| (e, None))?;
            let next = pump(state, session, body, &origin, Some(&key)).await;
            end = Pumped {
                last_event_id: next.last_event_id.or(end.last_event_id),
                ..next
            };
        }
        return match (end.answer, end.error) {
            (Some(answer), _) => Ok(Some(answer)),
            (None, Some(error)) => Err((error, None)),
            (None, None) => Err((
                "the upstream ended its stream without answering".to_string(),
                None,
            )),
        };
    }
    let body = read_body(response.into_body(), state.upstream.max_message_bytes)
        .await
        .map_err(|e| (format!("the upstream's answer cannot be read: {e}"), None))?;
    let data = wire::upstream_message(body.to_vec()).map_err(|why| {
        let reason = refused_message("answer", &why);
        report(&reason);
        (reason, None)
    })?;
    let answered = answers(&data, &key);
    if let Some(session) = session.upgrade() {
        session.client_room().await;
        session.server_message(data.clone(), None, &origin);
    }
    if answered {
        Ok(Some(data))
    } else {
        Err((
            "the upstream's answer was not a response to the request".to_string(),
            None,
        ))
    }
}

/// What reading an event stream came to.
#[derive(Default)]
struct Pumped {
    /// The response to the request the stream was opened for, if it came.
    answer: Option<Vec<u8>>,
    /// The last event id seen.
    last_event_id: Option<String>,
    /// Why the stream ended early.
    error: Option<String>,
}

/// Read an event stream into the session until it ends (or the request it belongs to is
/// answered and the stream closes).
async fn pump(
    state: &LinkState,
    session: &Weak<Session>,
    mut body: Incoming,
    origin: &Origin,
    expect: Option<&IdKey>,
) -> Pumped {
    let mut decoder = Decoder::new(state.upstream.max_message_bytes);
    let mut end = Pumped::default();
    loop {
        let frame = match body.frame().await {
            None => return end,
            Some(Err(e)) => {
                end.error = Some(format!("the upstream's stream broke off: {e}"));
                return end;
            }
            Some(Ok(frame)) => frame,
        };
        let Ok(chunk) = frame.into_data() else {
            continue;
        };
        let events = match decoder.push(&chunk) {
            Ok(events) => events,
            Err(e) => {
                end.error = Some(format!("{e} (--max-message-bytes)"));
                return end;
            }
        };
        if let Some(last) = decoder.last_event_id() {
            end.last_event_id = Some(last.to_string());
        }
        for event in events {
            if event.data.iter().all(u8::is_ascii_whitespace) {
                // A priming event: an id for resumption, no message.
                continue;
            }
            let data = match wire::upstream_message(event.data) {
                Ok(data) => data,
                Err(why) => {
                    let reason = refused_message("event", &why);
                    report(&reason);
                    if matches!(origin, Origin::Request(_)) {
                        // The request the stream belongs to fails with the reason.
                        end.error = Some(reason);
                        return end;
                    }
                    continue;
                }
            };
            if expect.is_some_and(|key| answers(&data, key)) {
                end.answer = Some(data.clone());
            }
            let Some(session) = session.upgrade() else {
                return end;
            };
            // A stdio client that does not read holds the stream back.
            session.client_room().await;
            session.server_message(data, event.id, origin);
        }
    }
}

/// Why an upstream's message (an `event`'s data or an `answer`'s body) was refused: `why` it is
/// not a message as it stands.
fn refused_message(what: &str, why: &str) -> String {
    format!(
        "the upstream sent an {what} that is not a JSON-RPC message as it stands ({why}); it was refused, not passed on"
    )
}

/// Resume a broken stream with GET and `Last-Event-ID`.
async fn resume(state: &LinkState, headers: &HeaderMap, last: &str) -> Result<Incoming, String> {
    let mut headers = headers.clone();
    let value = HeaderValue::from_str(last)
        .map_err(|e| format!("the upstream's event id cannot be sent back: {e}"))?;
    headers.insert("last-event-id", value);
    let session_id = lock(&state.session_id).clone();
    let request = build(state, Method::GET, &headers, None, session_id.as_deref())?;
    let sent = state.upstream.client.send(request).await;
    state.heard(sent.as_ref().ok().map(|r| r.status()), None);
    let response =
        sent.map_err(|e| format!("the upstream's stream broke off and cannot be resumed: {e}"))?;
    if !response.status().is_success() || !is_event_stream(response.headers()) {
        return Err(format!(
            "the upstream's stream broke off and cannot be resumed (HTTP {})",
            response.status()
        ));
    }
    Ok(response.into_body())
}

/// Open the upstream's GET stream and read it into the session.
async fn open_standalone(
    state: Arc<LinkState>,
    session: Weak<Session>,
    headers: &HeaderMap,
) -> Result<(), HttpFailure> {
    let session_id = lock(&state.session_id).clone();
    let bad_gateway = |text: String| HttpFailure {
        status: StatusCode::BAD_GATEWAY,
        headers: HeaderMap::new(),
        body: Bytes::from(text),
    };
    let request =
        build(&state, Method::GET, headers, None, session_id.as_deref()).map_err(bad_gateway)?;
    let sent = state.upstream.client.send(request).await;
    state.heard(sent.as_ref().ok().map(|r| r.status()), None);
    let response = sent.map_err(|e| bad_gateway(format!("the upstream cannot be reached: {e}")))?;
    let status = response.status();
    if !status.is_success() || !is_event_stream(response.headers()) {
        let headers = passed_on(response.headers());
        let body = read_error_body(response).await;
        return Err(HttpFailure {
            status: if status.is_success() {
                StatusCode::BAD_GATEWAY
            } else {
                status
            },
            headers,
            body,
        });
    }
    let pumping = state.clone();
    let task = tokio::spawn(async move {
        let end = pump(
            &pumping,
            &session,
            response.into_body(),
            &Origin::Standalone,
            None,
        )
        .await;
        if let Some(error) = end.error {
            report(&error);
        }
    });
    if let Some(old) = lock(&state.standalone).replace(task.abort_handle()) {
        old.abort();
    }
    Ok(())
}

/// The request to the upstream: the client's headers, `--header`, the session id, and the
/// standard headers of the message's revision.
fn build(
    state: &LinkState,
    method: Method,
    client_headers: &HeaderMap,
    message: Option<&Outbound>,
    session_id: Option<&str>,
) -> Result<Request<Full<Bytes>>, String> {
    let mut headers = client_headers.clone();
    for (name, value) in &state.upstream.headers {
        headers.insert(name.clone(), value.clone());
    }
    headers.remove("mcp-session-id");
    // The standard headers say what the message is: set from the message below, never taken
    // from the client, whose own were compared with its body only where its revision defines
    // them and only when the method names something.
    for name in wire::DERIVED_HEADERS {
        headers.remove(*name);
    }
    if let (Some(id), false) = (session_id, state.stateless) {
        if let Ok(value) = HeaderValue::from_str(id) {
            headers.insert("mcp-session-id", value);
        }
    }
    let body = match message {
        Some(outbound) => {
            headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
            headers.insert(
                ACCEPT,
                HeaderValue::from_static("application/json, text/event-stream"),
            );
            standard_headers(&mut headers, &outbound.line);
            Bytes::from(outbound.line.clone())
        }
        None => {
            headers.insert(ACCEPT, HeaderValue::from_static("text/event-stream"));
            Bytes::new()
        }
    };
    if !headers.contains_key("mcp-protocol-version") {
        if let Some(protocol) = lock(&state.protocol).as_deref() {
            if let Ok(value) = HeaderValue::from_str(protocol) {
                headers.insert("mcp-protocol-version", value);
            }
        }
    }
    let mut request = Request::builder()
        .method(method)
        .uri(&state.upstream.url)
        .body(Full::new(body))
        .map_err(|e| e.to_string())?;
    *request.headers_mut() = headers;
    Ok(request)
}

/// The standard request headers of a 2026-07-28 message, from the message itself (the proxy's
/// own requests have no client headers; a client's must agree with its body anyway).
fn standard_headers(headers: &mut HeaderMap, line: &[u8]) {
    let Ok(text) = std::str::from_utf8(line) else {
        return;
    };
    let Ok(Read::One(message)) = read(text) else {
        return;
    };
    let Some(revision) = message::declared_revision(text, &message) else {
        return;
    };
    if !message::is_modern(&revision) {
        return;
    }
    let mut set = |name: &'static str, value: &str| {
        if let Ok(value) = HeaderValue::from_str(value) {
            headers.insert(HeaderName::from_static(name), value);
        }
    };
    set("mcp-protocol-version", &revision);
    if let Some((method, name)) = wire::standard_headers(text, &message) {
        set("mcp-method", &method);
        if let Some(name) = name {
            set("mcp-name", &name);
        }
    }
}

/// Whether `data` is the response to request `key`.
fn answers(data: &[u8], key: &IdKey) -> bool {
    let Ok(text) = std::str::from_utf8(data) else {
        return false;
    };
    match read(text) {
        Ok(Read::One(message)) => {
            matches!(&message.kind, Kind::Response { id, .. } if id.key() == key)
        }
        _ => false,
    }
}

/// The protocol revision of an `initialize` response.
fn protocol_of(data: &[u8]) -> Option<String> {
    let value: Value = serde_json::from_slice(data).ok()?;
    value
        .get("result")?
        .get("protocolVersion")?
        .as_str()
        .map(String::from)
}

fn is_event_stream(headers: &HeaderMap) -> bool {
    headers
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("text/event-stream"))
}

/// The headers of an upstream's failure worth passing on to the client.
fn passed_on(headers: &HeaderMap) -> HeaderMap {
    let mut kept = HeaderMap::new();
    for name in [WWW_AUTHENTICATE, CONTENT_TYPE] {
        for value in headers.get_all(&name) {
            kept.append(name.clone(), value.clone());
        }
    }
    kept
}

async fn read_error_body(response: http::Response<Incoming>) -> Bytes {
    read_body(response.into_body(), ERROR_BODY_BYTES)
        .await
        .unwrap_or_default()
}

/// The start of a body, for a message.
fn excerpt(body: &[u8]) -> String {
    let text = String::from_utf8_lossy(body);
    let text = text.trim();
    match text.char_indices().nth(200) {
        Some((cut, _)) => format!("{}...", &text[..cut]),
        None if text.is_empty() => "(no body)".to_string(),
        None => text.to_string(),
    }
}
