//! The spans of one session, following the OpenTelemetry semantic conventions for MCP
//! (`docs/gen-ai/mcp.md`): a server span per request the client sends, named
//! `{mcp.method.name} {gen_ai.tool.name}` (the method alone when there is no tool), with a
//! child `validate` span for the gate's decision on a `tools/call` and a client span for the
//! call to the server behind, whose id goes to the server in `params._meta.traceparent`.
//!
//! The tracer watches what the transport hands the gate and what the gate decides; it changes
//! nothing but the `traceparent` of the requests forwarded.

use super::context::{
    format_traceparent, meta_parent, parse_traceparent, with_traceparent, Parent, SpanId, TraceId,
};
use super::export::Exporter;
use super::otlp::{Span, SpanKind, Value};
use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard};
use std::time::{Instant, SystemTime, UNIX_EPOCH};
use toolschema::json as core_json;
use toolschema_gate::message::{self, IdKey, Kind, Message, Read, RequestId};
use toolschema_gate::Action;

/// How many requests are followed at once; past it, the oldest is let go untraced (a request
/// never answered, cancelled say, must not grow the proxy's memory nor stop the tracing).
const MAX_OPEN: usize = 4096;

/// What `error.type` says of a result with `isError: true`.
pub const TOOL_ERROR: &str = "tool_error";

/// One request being followed.
struct Call {
    method: String,
    tool: Option<String>,
    id: String,
    trace: TraceId,
    span: SpanId,
    parent: Option<SpanId>,
    sampled: bool,
    trace_state: Option<String>,
    started: Instant,
    started_unix: u64,
    /// The gate's decision on it: `(from, to)`.
    decided: Option<(Instant, Instant)>,
    /// The call to the server: its span and when it was sent.
    upstream: Option<(SpanId, Instant)>,
    verdict: Option<&'static str>,
}

impl Call {
    fn at(&self, instant: Instant) -> u64 {
        let offset = instant.saturating_duration_since(self.started).as_nanos();
        self.started_unix
            .saturating_add(u64::try_from(offset).unwrap_or(u64::MAX))
    }

    fn name(&self) -> String {
        match &self.tool {
            Some(tool) => format!("{} {tool}", self.method),
            None => self.method.clone(),
        }
    }

    fn base_attributes(&self, session: &Shared) -> Vec<(&'static str, Value)> {
        let mut attributes = vec![
            ("mcp.method.name", Value::Str(self.method.clone())),
            ("jsonrpc.request.id", Value::Str(self.id.clone())),
        ];
        if let Some(tool) = &self.tool {
            attributes.push(("gen_ai.tool.name", Value::Str(tool.clone())));
            attributes.push(("gen_ai.operation.name", Value::Str("execute_tool".into())));
        }
        if let Some(id) = &session.session_id {
            attributes.push(("mcp.session.id", Value::Str(id.clone())));
        }
        if let Some(version) = &session.protocol_version {
            attributes.push(("mcp.protocol.version", Value::Str(version.clone())));
        }
        attributes
    }
}

/// What the spans of a session share.
#[derive(Default)]
struct Shared {
    session_id: Option<String>,
    protocol_version: Option<String>,
    calls: HashMap<IdKey, Call>,
    /// The request of the client message the gate is deciding on.
    deciding: Option<IdKey>,
    /// That message's text and what was read of it: when the gate forwards it unchanged, its
    /// upstream span starts without reading it again.
    deciding_read: Option<(String, Message)>,
}

/// The trace a request belongs to, decided when it arrives.
#[derive(Debug, Clone)]
pub struct TraceStart {
    /// Its trace: the caller's, or a new one.
    pub trace: TraceId,
    /// The caller's span, when it named a valid one.
    parent: Option<Parent>,
    /// The caller's `tracestate`, passed on with its parent.
    trace_state: Option<String>,
    /// The id of the request's server span, chosen now so that the guard's access log line
    /// can name it.
    pub span: SpanId,
}

impl TraceStart {
    /// The trace of the request at `message` in `text`: the parent its
    /// `params._meta.traceparent` names, else the one the HTTP `traceparent` header names,
    /// else a new trace.
    fn of(text: &str, message: &Message, header: Option<&str>) -> TraceStart {
        let from_meta = meta_parent(text, message);
        let parent = from_meta.or_else(|| header.and_then(parse_traceparent));
        // A tracestate goes with the traceparent it came with.
        let trace_state = from_meta
            .and_then(|_| message::meta_member(text, message, "tracestate"))
            .and_then(|at| match core_json::parse(&text[at]).ok()? {
                serde_json::Value::String(state) => Some(state),
                _ => None,
            });
        TraceStart {
            trace: parent.map_or_else(TraceId::random, |p| p.trace),
            parent,
            trace_state,
            span: SpanId::random(),
        }
    }

    /// The trace of an HTTP request's body, when it is one JSON-RPC request; `header` is its
    /// `traceparent` header.
    pub fn of_body(body: &[u8], header: Option<&str>) -> Option<TraceStart> {
        let text = std::str::from_utf8(body).ok()?;
        let Ok(Read::One(message)) = message::read(text) else {
            return None;
        };
        matches!(message.kind, Kind::Request { .. }).then(|| TraceStart::of(text, &message, header))
    }
}

/// The tracer of one session (one stdio relay, one HTTP session).
pub struct SessionTracer {
    exporter: Exporter,
    shared: Mutex<Shared>,
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

fn unix_nanos() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX))
}

/// A string member of the object at `range`.
fn string_member(text: &str, range: std::ops::Range<usize>, key: &str) -> Option<String> {
    let at = message::member_at(text, range, key)?;
    match core_json::parse(&text[at]).ok()? {
        serde_json::Value::String(value) => Some(value),
        _ => None,
    }
}

/// A request id as `jsonrpc.request.id` states it: a string's value, a number's text.
fn id_text(id: &RequestId) -> String {
    match id.to_value() {
        serde_json::Value::String(text) => text,
        _ => id.raw().to_string(),
    }
}

impl SessionTracer {
    /// A tracer sending its spans to `exporter`; `session_id` names the session
    /// (`mcp.session.id`) when it has one.
    pub fn new(exporter: Exporter, session_id: Option<String>) -> SessionTracer {
        SessionTracer {
            exporter,
            shared: Mutex::new(Shared {
                session_id,
                ..Shared::default()
            }),
        }
    }

    /// A message from the client, before the gate sees it: a request starts a server span,
    /// in the trace its `params._meta.traceparent` names (or a new one). Returns the trace
    /// id, for the log lines written while the gate decides. `start`: the trace the transport
    /// placed the request in already ([`TraceStart::of_body`]); `None`: it is read here.
    pub fn client_line(&self, line: &[u8], start: Option<TraceStart>) -> Option<TraceId> {
        let text = std::str::from_utf8(line).ok()?;
        let Ok(Read::One(message)) = message::read(text) else {
            return None;
        };
        self.client_message(text, &message, start)
    }

    /// [`client_line`](Self::client_line) of a message the gate has read already
    /// ([`Gate::client_message_seen`](toolschema_gate::Gate::client_message_seen)): `text`
    /// and `message` as the gate read them, not read again.
    pub fn client_message(
        &self,
        text: &str,
        message: &Message,
        start: Option<TraceStart>,
    ) -> Option<TraceId> {
        let mut shared = lock(&self.shared);
        shared.deciding = None;
        shared.deciding_read = None;
        let Kind::Request { id, method } = &message.kind else {
            return None;
        };
        if method == "initialize" {
            if let Some(params) = message.params.clone() {
                shared.protocol_version = string_member(text, params, "protocolVersion");
            }
        } else if let Some(revision) = message::declared_revision(text, message) {
            shared.protocol_version = Some(revision);
        }
        if shared.calls.contains_key(id.key()) {
            // Its answer could not be told from the first one's.
            return None;
        }
        if shared.calls.len() >= MAX_OPEN {
            let oldest = shared
                .calls
                .iter()
                .min_by_key(|(_, call)| call.started)
                .map(|(key, _)| key.clone());
            if let Some(oldest) = oldest {
                shared.calls.remove(&oldest);
            }
        }
        let tool = match (method.as_str(), &message.params) {
            ("tools/call", Some(params)) => string_member(text, params.clone(), "name"),
            _ => None,
        };
        let TraceStart {
            trace,
            parent,
            trace_state,
            span,
        } = start.unwrap_or_else(|| TraceStart::of(text, message, None));
        let call = Call {
            method: method.clone(),
            tool,
            id: id_text(id),
            trace,
            span,
            parent: parent.map(|p| p.span),
            sampled: parent.is_none_or(|p| p.sampled),
            trace_state,
            started: Instant::now(),
            started_unix: unix_nanos(),
            decided: None,
            upstream: None,
            verdict: None,
        };
        shared.deciding = Some(id.key().clone());
        shared.deciding_read = Some((text.to_string(), message.clone()));
        shared.calls.insert(id.key().clone(), call);
        Some(trace)
    }

    /// What the gate decided, before it is written: the requests it forwards get the
    /// `traceparent` of their upstream span; the answers it sends the client end their spans.
    /// `decided` is when the gate decided on the client message last given to
    /// [`client_line`](Self::client_line) (`None` for other decisions).
    pub fn observe(&self, actions: &mut [Action], decided: Option<(Instant, Instant)>) {
        let mut shared = lock(&self.shared);
        if let Some(window) = decided {
            if let Some(call) = shared
                .deciding
                .take()
                .and_then(|k| shared.calls.get_mut(&k))
            {
                call.decided = Some(window);
            }
        }
        // What was read of the client message holds for this decision's actions only.
        let read = shared.deciding_read.take();
        if shared.calls.is_empty() {
            return;
        }
        // The verdicts first: a refusal's record may follow its answer.
        for action in actions.iter() {
            if let Action::Audit(record) = action {
                if let (Some(call), Some(outcome)) =
                    (shared.calls.get_mut(record.id.key()), record.outcome())
                {
                    call.verdict = Some(outcome);
                }
            }
        }
        let now = Instant::now();
        for action in actions.iter_mut() {
            match action {
                Action::ToServer(line) => {
                    if let Some(traced) = forwarded(&mut shared, line, read.as_ref(), now) {
                        *line = traced;
                    }
                }
                Action::ToClient(line) => {
                    if let Some(spans) = answered(&mut shared, line, now) {
                        for span in spans {
                            self.exporter.send(span);
                        }
                    }
                }
                Action::Audit(_) => {}
            }
        }
    }
}

/// A request on its way to the server: if it is one being followed, its upstream span starts
/// and the request carries it as its parent. `read`: the client message just decided on, as it
/// was read; used when the line is that message unchanged (comparing costs less than reading).
fn forwarded(
    shared: &mut Shared,
    line: &[u8],
    read: Option<&(String, Message)>,
    now: Instant,
) -> Option<Vec<u8>> {
    let read_again;
    let (text, message) = match read {
        Some((text, message)) if text.as_bytes() == line => (text.as_str(), message),
        _ => {
            let text = std::str::from_utf8(line).ok()?;
            let Ok(Read::One(message)) = message::read(text) else {
                return None;
            };
            read_again = message;
            (text, &read_again)
        }
    };
    let Kind::Request { id, .. } = &message.kind else {
        return None;
    };
    let call = shared.calls.get_mut(id.key())?;
    if call.upstream.is_some() {
        return None;
    }
    let span = SpanId::random();
    call.upstream = Some((span, now));
    let traceparent = format_traceparent(call.trace, span, call.sampled);
    with_traceparent(text, message, &traceparent).map(String::into_bytes)
}

/// An answer on its way to the client: if it answers a request being followed, that
/// request's spans end.
fn answered(shared: &mut Shared, line: &[u8], now: Instant) -> Option<Vec<Span>> {
    let text = std::str::from_utf8(line).ok()?;
    let Ok(Read::One(message)) = message::read(text) else {
        return None;
    };
    let Kind::Response { id, .. } = &message.kind else {
        return None;
    };
    let call = shared.calls.remove(id.key())?;
    if !call.sampled {
        return None;
    }
    let error_type = error_type(text, &message);
    let mut spans = Vec::with_capacity(3);
    let mut attributes = call.base_attributes(shared);
    if let Some(verdict) = call.verdict {
        attributes.push(("toolschema.proxy.verdict", Value::Str(verdict.into())));
    }
    if let Some(kind) = &error_type {
        attributes.push(("error.type", Value::Str(kind.clone())));
    }
    if let Some((from, to)) = call.decided.filter(|_| call.tool.is_some()) {
        let refused = call.verdict.filter(|v| v.starts_with("refused_"));
        let mut validate = vec![("mcp.method.name", Value::Str(call.method.clone()))];
        if let Some(tool) = &call.tool {
            validate.push(("gen_ai.tool.name", Value::Str(tool.clone())));
        }
        if let Some(refused) = refused {
            validate.push(("error.type", Value::Str(refused.into())));
        }
        spans.push(Span {
            trace: call.trace,
            id: SpanId::random(),
            parent: Some(call.span),
            trace_state: None,
            name: "validate".into(),
            kind: SpanKind::Internal,
            start: call.at(from),
            end: call.at(to),
            attributes: validate,
            error: refused.map(|v| format!("the proxy refused the call ({v})")),
        });
    }
    if let Some((span, sent)) = call.upstream {
        let mut upstream = call.base_attributes(shared);
        if let Some(kind) = &error_type {
            upstream.push(("error.type", Value::Str(kind.clone())));
        }
        spans.push(Span {
            trace: call.trace,
            id: span,
            parent: Some(call.span),
            trace_state: None,
            name: call.name(),
            kind: SpanKind::Client,
            start: call.at(sent),
            end: call.at(now),
            attributes: upstream,
            error: error_type.clone(),
        });
    }
    spans.push(Span {
        trace: call.trace,
        id: call.span,
        parent: call.parent,
        trace_state: call.trace_state.clone(),
        name: call.name(),
        kind: SpanKind::Server,
        start: call.started_unix,
        end: call.at(now),
        attributes,
        error: error_type,
    });
    Some(spans)
}

/// `error.type` of an answer: the JSON-RPC error code as text, or `tool_error` for a result
/// with `isError: true`.
fn error_type(text: &str, message: &Message) -> Option<String> {
    if let Some(error) = message.error.clone() {
        let code = message::member_at(text, error, "code")
            .map(|at| text[at].trim().to_string())
            .unwrap_or_else(|| "error".into());
        return Some(code);
    }
    let result = message.result.clone()?;
    let at = message::member_at(text, result, "isError")?;
    (text[at].trim() == "true").then(|| TOOL_ERROR.to_string())
}
