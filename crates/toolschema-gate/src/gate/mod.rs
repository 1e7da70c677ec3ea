//! The proxy's decisions, apart from any transport.
//!
//! A [`Gate`] sees the messages of one session as they arrive from either side, and the passing
//! of time; it answers each with [`Action`]s, in the order they must happen: a message to write
//! to the server or to the client, an audit record to append. It does no I/O and never waits.
//!
//! - It learns the tools from the listings that pass through (`listing`), and lists them
//!   itself when a call needs them: the call waits inside the gate while every other message
//!   keeps flowing, and a listing that fails or takes too long fails the waiting calls closed.
//! - It admits or refuses each `tools/call` (`calls`): every call is checked or refused, never
//!   forwarded unchecked unless the configuration says so; results are checked against the
//!   tool's `outputSchema`.
//! - It answers every request exactly once with the id as the client sent it, matching ids by
//!   their JSON value, and answers a JSON-RPC batch as a batch where the protocol allows them.
//!
//! The stdio relay drives one gate from its two threads; tests drive it directly.

mod admission;
mod calls;
mod listing;
mod pins;
mod revision;
#[cfg(test)]
mod tests;

use super::audit::{AuditRecord, InputVerdict, Operation, OutputVerdict, Verdict};
use super::overrides::ToolOverrides;
use super::policy::ToolPolicy;
use super::registry::ToolRegistry;
use super::{InputCheck, OnUnchecked, OutputCheck, UnknownArguments, Unlisted};
use crate::message::ErrorCode;
use crate::message::{
    self, batch_line, error_line, read, read_object, text_of, IdKey, Kind, Message, Read, RequestId,
};
pub use admission::{Admission, Admitted};
use calls::{CallRecord, Waiting};
use listing::{Listing, UnlearnedPage};
pub use pins::{PinMode, Pins};
use serde_json::Value;
use std::collections::{HashMap, HashSet, VecDeque};
use std::ops::Range;
use std::time::{Duration, Instant};

/// How much of a malformed message is quoted in a report.
const EXCERPT_CHARS: usize = 120;

/// How long the proxy waits for the server to answer a `tools/list` it sent itself, by default.
pub const DEFAULT_LISTING_TIMEOUT: Duration = Duration::from_secs(30);

/// How long the proxy waits before it lists the tools again after its listing failed, by
/// default; the wait doubles with each failure in a row.
pub const DEFAULT_LISTING_RETRY: Duration = Duration::from_secs(1);

/// How many ids of requests the client cancelled while the server had them are remembered,
/// the oldest forgotten first: their late answers are dropped, and a new request may not take
/// one of them. A server that answers a cancelled request later than this many cancellations
/// has its answer dropped all the same, reported as an answer no request waits for.
pub const CANCELLED_IDS: usize = 1024;

/// The protocol revisions that allow JSON-RPC batches (2025-03-26 added them, 2025-06-18
/// removed them again).
const BATCH_REVISIONS: &[&str] = &["2025-03-26"];

/// Report something the proxy's user should know (through `tracing`: the binary decides where it
/// goes).
pub fn report(message: &str) {
    tracing::warn!("{message}");
}

/// What a gate decides with.
#[derive(Debug, Clone)]
pub struct GateConfig {
    /// Whether `tools/call` arguments are checked, and what a failure does.
    pub input_check: InputCheck,
    /// What happens to top-level arguments an open schema does not declare.
    pub unknown_arguments: UnknownArguments,
    /// What happens to a call whose tool's schema cannot be learned.
    pub on_unchecked: OnUnchecked,
    /// The output check.
    pub output_check: OutputCheck,
    /// Which tools are let through.
    pub policy: ToolPolicy,
    /// Titles and descriptions shown in place of the server's.
    pub overrides: ToolOverrides,
    /// The pins the listed tools must match.
    pub pins: Option<Pins>,
    /// What becomes of a call to a tool the server has not listed, even to the proxy's own
    /// listing made for it.
    pub unlisted: Unlisted,
    /// Produce an audit record for every `tools/call`.
    pub audit: bool,
    /// Keep each call's arguments in its audit record.
    pub audit_arguments: bool,
    /// The largest message the transport accepts, as the proxy's refusals state it.
    pub max_message_bytes: usize,
    /// How long the proxy waits for the server to answer a `tools/list` it sent itself.
    pub listing_timeout: Duration,
    /// How long the proxy waits before listing again after its listing failed (doubling with
    /// each failure in a row, up to a minute).
    pub listing_retry: Duration,
    /// The servers of a front of many (`--server`), by name: the only servers a listed tool's
    /// origin may name, in its audit records and metrics.
    pub servers: Vec<String>,
    /// Checks set for one of those servers, by name, in place of `input_check` and
    /// `output_check` for the tools whose origin it is.
    pub server_checks: std::collections::BTreeMap<String, ServerChecks>,
}

/// The checks one server behind a front of many sets for its own tools (`None`: the front's).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ServerChecks {
    /// In place of [`GateConfig::input_check`].
    pub input: Option<InputCheck>,
    /// In place of [`GateConfig::output_check`].
    pub output: Option<OutputCheck>,
}

impl GateConfig {
    /// The input check of a call to a tool from `origin` (`None`: one server, or a tool not
    /// listed): its server's, else the front's.
    pub fn input_check_of(&self, origin: Option<&crate::servers::Origin>) -> InputCheck {
        origin
            .and_then(|origin| self.server_checks.get(&origin.server))
            .and_then(|checks| checks.input)
            .unwrap_or(self.input_check)
    }

    /// The output check of a call to a tool from `origin`: its server's, else the front's.
    pub fn output_check_of(&self, origin: Option<&crate::servers::Origin>) -> OutputCheck {
        origin
            .and_then(|origin| self.server_checks.get(&origin.server))
            .and_then(|checks| checks.output)
            .unwrap_or(self.output_check)
    }

    /// Whether no call's arguments are checked: the front's input check is off, and no server
    /// turns it on for its tools.
    pub fn checks_no_input(&self) -> bool {
        self.input_check == InputCheck::Off
            && self
                .server_checks
                .values()
                .all(|checks| checks.input.is_none_or(|input| input == InputCheck::Off))
    }
}

impl Default for GateConfig {
    fn default() -> Self {
        GateConfig {
            input_check: InputCheck::default(),
            unknown_arguments: UnknownArguments::default(),
            on_unchecked: OnUnchecked::default(),
            output_check: OutputCheck::default(),
            policy: ToolPolicy::default(),
            overrides: ToolOverrides::default(),
            pins: None,
            unlisted: Unlisted::Refuse,
            audit: false,
            audit_arguments: false,
            max_message_bytes: crate::framing::DEFAULT_MAX_MESSAGE_BYTES,
            listing_timeout: DEFAULT_LISTING_TIMEOUT,
            listing_retry: DEFAULT_LISTING_RETRY,
            servers: Vec::new(),
            server_checks: Default::default(),
        }
    }
}

/// Something the transport must do, in the order the gate gives them.
#[derive(Debug, Clone, PartialEq)]
pub enum Action {
    /// Write this message (one line of JSON, without its newline) to the server.
    ToServer(Vec<u8>),
    /// Write this message (one line of JSON, without its newline) to the client.
    ToClient(Vec<u8>),
    /// Append this record to the audit log.
    Audit(Box<AuditRecord>),
}

/// Where the outcome of one client message goes: straight to the transport, or into the batch
/// it came in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Route {
    Direct,
    Batch(u64),
}

/// A client request the server has not answered yet.
struct Pending {
    /// The id as the client sent it.
    id: RequestId,
    /// When the request arrived.
    started: Instant,
    /// What it asked.
    kind: PendingKind,
    /// Where its answer goes.
    route: Route,
    /// Its place in the order requests arrived in.
    order: u64,
}

/// What a pending request asked, as far as its response matters.
enum PendingKind {
    /// `initialize`: the response says which protocol revision the session speaks.
    Initialize,
    /// `tools/list`: the response is learned (and filtered by the policy).
    ListTools {
        /// The cursor it was asked with (`None`: the first page).
        cursor: Option<String>,
        /// The registry's change count when asked.
        changes_at_request: u64,
    },
    /// `tools/call`: the response is checked against the output schema and audited.
    CallTool(CallRecord),
    /// Anything else: its method, kept when operations are recorded.
    Other(Option<Box<str>>),
}

/// A JSON-RPC batch from the client, being answered.
struct Batch {
    /// Its messages for the server, sent together as one batch.
    to_server: Vec<Vec<u8>>,
    /// The answers gathered so far.
    answers: Vec<Vec<u8>>,
    /// Requests forwarded and not answered yet.
    outstanding: usize,
    /// Still being read: answers are not sent before it is read to the end.
    open: bool,
}

/// The error requests get once the server has exited.
#[derive(Clone)]
struct ServerGone {
    message: String,
    data: Value,
}

/// The decisions of one proxied session.
pub struct Gate {
    config: GateConfig,
    /// Client requests in flight at the server.
    pending: HashMap<IdKey, Pending>,
    registry: ToolRegistry,
    /// Pages of the client's latest listing, not learned yet.
    unlearned: Vec<UnlearnedPage>,
    /// The proxy's own listing.
    listing: Listing,
    /// Whether the tools known were learned from a complete listing of the proxy's own, with no
    /// page of a client's listing learned since. Only then is a call to a tool not among them
    /// known to be unlisted: a client's listing may be read otherwise by the server than by the
    /// proxy (a cursor it takes for another), and must never make the proxy check less.
    own_listing_holds: bool,
    /// Calls (and batches holding calls) waiting for the proxy's own listing, in order.
    waiting: VecDeque<Waiting>,
    /// The proxy's own request ids: the counter, and ids given up on whose answers may still
    /// come (they are dropped, never passed to the client).
    next_own_id: u64,
    abandoned: HashSet<IdKey>,
    /// Requests the client cancelled while the server had them, oldest first (at most
    /// [`CANCELLED_IDS`]): an answer the server sends anyway is dropped.
    cancelled: VecDeque<RequestId>,
    /// Set once the server has exited and the requests in flight were failed.
    server_gone: Option<ServerGone>,
    /// The protocol revision the server answered `initialize` with.
    protocol: Option<String>,
    /// What a 2026-07-28 (or later) client declared in its latest request.
    declared: Option<revision::Declared>,
    /// Listed tools that do not match their pins, and why.
    pin_mismatches: HashMap<String, String>,
    batches: HashMap<u64, Batch>,
    next_batch: u64,
    /// How many requests were tracked: their order of arrival.
    tracked: u64,
    /// What was reported once and is not reported again.
    reported: HashSet<String>,
    /// The requests other than `tools/call` answered, when recorded (for metrics).
    operations: Option<Vec<Operation>>,
}

impl Gate {
    /// A gate for a new session.
    pub fn new(config: GateConfig) -> Gate {
        let mut registry = ToolRegistry::default();
        registry.set_servers(config.servers.clone());
        Gate {
            listing: Listing::new(config.listing_retry),
            own_listing_holds: false,
            config,
            pending: HashMap::new(),
            registry,
            unlearned: Vec::new(),
            waiting: VecDeque::new(),
            next_own_id: 0,
            abandoned: HashSet::new(),
            cancelled: VecDeque::new(),
            server_gone: None,
            protocol: None,
            declared: None,
            pin_mismatches: HashMap::new(),
            batches: HashMap::new(),
            next_batch: 0,
            tracked: 0,
            reported: HashSet::new(),
            operations: None,
        }
    }

    /// Record each answered request other than `tools/call`, for [`Gate::take_operations`].
    pub fn record_operations(&mut self) {
        self.operations.get_or_insert_with(Vec::new);
    }

    /// The requests answered since the last time (none unless [`Gate::record_operations`]).
    pub fn take_operations(&mut self) -> Vec<Operation> {
        self.operations
            .as_mut()
            .map(std::mem::take)
            .unwrap_or_default()
    }

    /// The gate's settings.
    pub fn config(&self) -> &GateConfig {
        &self.config
    }

    /// When [`Gate::tick`] must be called next, if anything waits on time.
    pub fn next_deadline(&self) -> Option<Instant> {
        self.listing.deadline()
    }

    /// Whether client messages wait in the gate to be decided (for the proxy's own listing).
    pub fn holds_client_messages(&self) -> bool {
        !self.waiting.is_empty()
    }

    /// The arguments tool `name` mirrors into `Mcp-Param-*` headers, as last listed.
    pub fn mirrored_arguments(&self, name: &str) -> &[toolschema::tool::MirroredArgument] {
        self.registry.mirrored(name)
    }

    /// Client requests in flight at the server (or waiting in the gate).
    pub fn requests_in_flight(&self) -> usize {
        self.pending.len() + self.waiting.len()
    }

    /// Whether the server listed a tool of this name (the only names metrics may label with:
    /// a client's made-up names never grow a label set).
    pub fn knows_tool(&self, name: &str) -> bool {
        self.registry.knows(name)
    }

    /// Whether the tools were learned from a complete listing (the proxy is ready to check
    /// calls). The pages of the client's listings waiting to be learned are learned first.
    pub fn catalog_learned(&mut self) -> bool {
        self.learn_listed_pages();
        self.registry.is_current() || self.registry.len() > 0
    }

    /// Time has passed: fail what waited too long.
    pub fn tick(&mut self, now: Instant, out: &mut Vec<Action>) {
        if self
            .listing
            .deadline()
            .is_some_and(|deadline| deadline <= now)
        {
            let reason = format!(
                "the server did not answer the proxy's tools/list within {}s",
                self.config.listing_timeout.as_secs_f64()
            );
            self.listing_failed(reason, now, out);
        }
    }

    // ----- client to server -----

    /// A message from the client (one line, without its newline).
    pub fn client_message(&mut self, line: Vec<u8>, now: Instant, out: &mut Vec<Action>) {
        self.client_message_seen(line, now, out, |_, _| {})
    }

    /// [`client_message`](Self::client_message), giving `seen` the message as the gate read
    /// it, before the gate decides on it: a tracer follows the request from there without
    /// reading its text a second time.
    pub fn client_message_seen(
        &mut self,
        line: Vec<u8>,
        now: Instant,
        out: &mut Vec<Action>,
        seen: impl FnOnce(&str, &Read),
    ) {
        let Some((text, read)) = read_line(line, "client") else {
            return;
        };
        seen(&text, &read);
        match read {
            Read::One(message) => self.client_one(text, message, Route::Direct, now, out),
            Read::Batch(elements) => self.client_batch(text, elements, now, out),
        }
    }

    /// One message from the client, on its own or in a batch.
    fn client_one(
        &mut self,
        text: String,
        message: Message,
        route: Route,
        now: Instant,
        out: &mut Vec<Action>,
    ) {
        if let Some((variant, meant)) = envelope_misread(&text) {
            // A server that reads names without regard to case (Go's encoding/json) would
            // take it for the member checked here, or a server may read another of the two
            // given: not forwarded.
            let why = format!(
                "the message holds {}; it was not forwarded",
                message::misread_in_words(&variant, meant, "server")
            );
            report(&format!("refused a message from the client: {why}"));
            let id = match &message.kind {
                Kind::Request { id, .. } => Some(id.clone()),
                // An answer to the server's request gets none in return.
                Kind::Response { .. } => None,
                _ => id_member(&text),
            };
            if let Some(id) = id {
                let reply = error_line(Some(&id), ErrorCode::INVALID_REQUEST, &why, None);
                self.reply(route, reply, out);
            }
            return;
        }
        if let Some(misread) = message::params_case_variant(&text, &message) {
            // What the proxy read of it is not what such a server would: not forwarded.
            let why = misread.to_string();
            match &message.kind {
                Kind::Request { id, method } => {
                    report(&format!("refused a {method} request: {why}"));
                    let reply = error_line(Some(id), ErrorCode::INVALID_PARAMS, &why, None);
                    self.reply(route, reply, out);
                }
                // A notification gets no answer.
                _ => report(&format!("dropped a notification from the client: {why}")),
            }
            return;
        }
        if matches!(message.kind, Kind::Request { .. }) {
            self.note_revision(&text, &message);
        }
        match &message.kind {
            Kind::Request { method, .. } if method == "tools/call" => {
                self.tools_call(text, message, route, now, out)
            }
            Kind::Request { id, method } => {
                let kind = match method.as_str() {
                    "initialize" => PendingKind::Initialize,
                    "tools/list" => PendingKind::ListTools {
                        cursor: cursor_param(&text, &message),
                        changes_at_request: self.registry.changes(),
                    },
                    _ => PendingKind::Other(
                        self.operations.is_some().then(|| method.as_str().into()),
                    ),
                };
                if self.track(id.clone(), kind, route, now, out) {
                    self.send_on(route, text.into_bytes(), out);
                }
            }
            Kind::Notification { method } if method == "tools/call" => {
                self.call_without_id(&text, route, out)
            }
            Kind::Notification { method } if method == "notifications/cancelled" => {
                if !(self.cancel_waiting(&text, &message, now, out)
                    || self.drop_cancel_of_own(&text, &message))
                {
                    self.cancel_forwarded(&text, &message, now, out);
                    self.send_on(route, text.into_bytes(), out);
                }
            }
            Kind::Other => match request_with_bad_method(&text) {
                // Its answer could not be told apart from what no request waits for: answered
                // here, not forwarded.
                Some(id) => {
                    let reply = error_line(
                        Some(&id),
                        ErrorCode::INVALID_REQUEST,
                        "a request's method must be a string",
                        None,
                    );
                    self.reply(route, reply, out);
                }
                None => self.send_on(route, text.into_bytes(), out),
            },
            _ => self.send_on(route, text.into_bytes(), out),
        }
    }

    /// A message from the client longer than the transport accepts, of `length` bytes, with the
    /// request id found in what was kept of it.
    pub fn client_message_too_large(
        &mut self,
        length: usize,
        id: Option<RequestId>,
        out: &mut Vec<Action>,
    ) {
        let limit = self.config.max_message_bytes;
        report(&format!(
            "refused a message of {length} bytes from the client: the limit is {limit} bytes (--max-message-bytes)"
        ));
        if let Some(id) = id {
            let text = format!(
                "message of {length} bytes refused by the proxy: the limit is {limit} bytes"
            );
            out.push(Action::ToClient(error_line(
                Some(&id),
                ErrorCode::INVALID_REQUEST,
                &text,
                None,
            )));
        }
    }

    /// Remember a request about to be forwarded to the server, which arrived at `started`.
    ///
    /// Once the server is gone, the request is answered with the error every request in flight
    /// got, and `false` says it must not be forwarded; so is a request whose id is in flight
    /// already (its answers could not be told apart).
    fn track(
        &mut self,
        id: RequestId,
        kind: PendingKind,
        route: Route,
        started: Instant,
        out: &mut Vec<Action>,
    ) -> bool {
        self.tracked += 1;
        let pending = Pending {
            id,
            started,
            kind,
            route,
            order: self.tracked,
        };
        if let Some(gone) = self.server_gone.clone() {
            // Never counted in its batch: answered alongside, not as one of its outstanding.
            let reply = self.unanswerable(&pending, &gone.message, &gone.data, out);
            self.reply(route, reply, out);
            return false;
        }
        let key = pending.id.key().clone();
        if let Some(why) = self.unusable_id(&pending.id) {
            let reply = error_line(Some(&pending.id), ErrorCode::INVALID_REQUEST, &why, None);
            self.reply(route, reply, out);
            return false;
        }
        if let Route::Batch(batch) = route {
            if let Some(batch) = self.batches.get_mut(&batch) {
                batch.outstanding += 1;
            }
        }
        self.pending.insert(key, pending);
        true
    }

    /// Send a message on to the server, alone or with its batch.
    fn send_on(&mut self, route: Route, line: Vec<u8>, out: &mut Vec<Action>) {
        match route {
            Route::Direct => out.push(Action::ToServer(line)),
            Route::Batch(batch) => match self.batches.get_mut(&batch) {
                Some(batch) => batch.to_server.push(line),
                None => out.push(Action::ToServer(line)),
            },
        }
    }

    /// Send the client an answer, alone or with its batch.
    /// A `tools/call` without an id, or with `"id": null`: never forwarded, since no answer
    /// could carry its verdict, and a server that runs it anyway would run it unchecked. An id of
    /// `null` is answered with Invalid Request (MCP: a request id is a string or an integer);
    /// a call sent as a notification cannot be answered, and is only reported.
    fn call_without_id(&mut self, text: &str, route: Route, out: &mut Vec<Action>) {
        let has_null_id = toolschema::json::object_members(text, 0..text.len())
            .ok()
            .flatten()
            .is_some_and(|members| message::member(&members, "id").is_some());
        if has_null_id {
            report("refused a tools/call with \"id\": null (not forwarded)");
            let reply = error_line(
                None,
                ErrorCode::INVALID_REQUEST,
                "a tools/call request needs an id that is a string or an integer, not null; it was not forwarded",
                None,
            );
            self.reply(route, reply, out);
        } else {
            report(&format!(
                "dropped a tools/call sent as a notification (no id), which nothing could answer; it was not forwarded: {}",
                excerpt(text)
            ));
        }
    }

    /// Why a new request's id cannot be used, if it cannot: one in flight has it, or a
    /// JavaScript server would read it as the same number as one in flight (their answers
    /// could not be told apart, and one request's answer would be taken for the other's), or
    /// as no number at all (past the float range, answered with id null).
    fn unusable_id(&self, id: &RequestId) -> Option<String> {
        if self.pending.contains_key(id.key()) || self.is_own_id(id.key()) {
            return Some(in_flight_already(id));
        }
        let rounded = id_as_float(id);
        if let Some(cancelled) = self
            .cancelled
            .iter()
            .find(|c| c.key() == id.key() || (rounded.is_some() && id_as_float(c) == rounded))
        {
            // Its answer may still come, and would be taken for the new request's.
            return Some(format!(
                "request id {id} is the id of a request the client cancelled ({cancelled}), whose answer the server may still send; use another id"
            ));
        }
        let rounded = rounded?;
        if rounded.is_infinite() {
            return Some(format!(
                "request id {id} is past the range of a 64-bit float, which a JavaScript server answers with id null; use another id"
            ));
        }
        let other = self
            .pending
            .values()
            .find(|p| id_as_float(&p.id) == Some(rounded))?;
        Some(format!(
            "request id {id} reads as the same 64-bit number as the id of a request in flight ({}), so their answers could not be told apart; use another id",
            other.id
        ))
    }

    /// Whether the request with this key, sent in a batch, waits for the server's answer (not
    /// one of the same id sent alone).
    pub fn awaits_answer_in_batch(&self, key: &IdKey) -> bool {
        self.pending
            .get(key)
            .is_some_and(|pending| matches!(pending.route, Route::Batch(_)))
    }

    fn reply(&mut self, route: Route, line: Vec<u8>, out: &mut Vec<Action>) {
        match route {
            Route::Direct => out.push(Action::ToClient(line)),
            Route::Batch(batch) => match self.batches.get_mut(&batch) {
                Some(batch) => batch.answers.push(line),
                None => out.push(Action::ToClient(line)),
            },
        }
    }

    /// The answer to a request the server had: sent, or gathered with its batch.
    fn answered(&mut self, route: Route, line: Vec<u8>, out: &mut Vec<Action>) {
        self.reply(route, line, out);
        if let Route::Batch(batch) = route {
            if let Some(open) = self.batches.get_mut(&batch) {
                open.outstanding = open.outstanding.saturating_sub(1);
            }
            self.complete_batch(batch, out);
        }
    }

    // ----- batches -----

    /// A JSON-RPC batch from the client.
    fn client_batch(
        &mut self,
        text: String,
        elements: Vec<Range<usize>>,
        now: Instant,
        out: &mut Vec<Action>,
    ) {
        if elements.is_empty() {
            let reply = error_line(
                None,
                ErrorCode::INVALID_REQUEST,
                "an empty JSON-RPC batch is not a request",
                None,
            );
            return out.push(Action::ToClient(reply));
        }
        let revision = self.protocol.clone();
        if !revision
            .as_deref()
            .is_some_and(|r| BATCH_REVISIONS.contains(&r))
        {
            return self.refuse_batch(&text, &elements, revision.as_deref(), out);
        }
        if self.batch_waits_for_listing(&text, &elements, now, out) {
            self.waiting.push_back(Waiting::Batch(text));
            return;
        }
        let id = self.next_batch;
        self.next_batch += 1;
        self.batches.insert(
            id,
            Batch {
                to_server: Vec::new(),
                answers: Vec::new(),
                outstanding: 0,
                open: true,
            },
        );
        for range in elements {
            let element = text[range].to_string();
            match read_object(&element, 0..element.len()) {
                Ok(message) => self.client_one(element, message, Route::Batch(id), now, out),
                Err(malformed) => {
                    let reply = error_line(
                        None,
                        ErrorCode::INVALID_REQUEST,
                        &format!("a message in the batch is not a JSON-RPC message: {malformed}"),
                        None,
                    );
                    self.reply(Route::Batch(id), reply, out);
                }
            }
        }
        if let Some(batch) = self.batches.get_mut(&id) {
            batch.open = false;
            if !batch.to_server.is_empty() {
                let messages = std::mem::take(&mut batch.to_server);
                out.push(Action::ToServer(batch_line(&messages)));
            }
        }
        self.complete_batch(id, out);
    }

    /// Send a batch's answers once every request in it is answered.
    fn complete_batch(&mut self, id: u64, out: &mut Vec<Action>) {
        let done = self
            .batches
            .get(&id)
            .is_some_and(|batch| !batch.open && batch.outstanding == 0);
        if done {
            if let Some(batch) = self.batches.remove(&id) {
                if !batch.answers.is_empty() {
                    out.push(Action::ToClient(batch_line(&batch.answers)));
                }
            }
        }
    }

    /// A batch in a session whose protocol revision does not allow them: each request in it is
    /// answered with an Invalid Request error, as a batch.
    fn refuse_batch(
        &mut self,
        text: &str,
        elements: &[Range<usize>],
        revision: Option<&str>,
        out: &mut Vec<Action>,
    ) {
        let why = match revision {
            Some(revision) => format!(
                "JSON-RPC batches are not allowed in MCP {revision} (only in 2025-03-26); send each message on its own"
            ),
            None => "JSON-RPC batches are not allowed before the session is initialized with MCP 2025-03-26; send each message on its own".to_string(),
        };
        report(&format!("refused a JSON-RPC batch from the client: {why}"));
        // Every element a batch that is allowed would answer is answered: requests, requests
        // whose method is not a string, and what is not a message at all (with a null id).
        // Notifications and responses get no answer.
        let answers: Vec<Vec<u8>> = elements
            .iter()
            .filter_map(|range| match read_object(text, range.clone()) {
                Ok(Message {
                    kind: Kind::Request { id, .. },
                    ..
                }) => Some(Some(id)),
                Ok(Message {
                    kind: Kind::Other, ..
                }) => request_with_bad_method(&text[range.clone()]).map(Some),
                Ok(_) => None,
                Err(_) => Some(None),
            })
            .map(|id| error_line(id.as_ref(), ErrorCode::INVALID_REQUEST, &why, None))
            .collect();
        if answers.is_empty() {
            out.push(Action::ToClient(error_line(
                None,
                ErrorCode::INVALID_REQUEST,
                &why,
                None,
            )));
        } else {
            out.push(Action::ToClient(batch_line(&answers)));
        }
    }

    // ----- server to client -----

    /// A message from the server (one line, without its newline).
    pub fn server_message(&mut self, line: Vec<u8>, now: Instant, out: &mut Vec<Action>) {
        match read_line(line, "server") {
            Some((text, Read::One(message))) => self.server_one(text, message, now, out),
            // Each message of a batch is handled as if it came alone; answers to a client's
            // batch are gathered into the batch they belong to.
            Some((text, Read::Batch(elements))) => {
                for range in elements {
                    let element = text[range].to_string();
                    match read_object(&element, 0..element.len()) {
                        Ok(message) => self.server_one(element, message, now, out),
                        Err(malformed) => report(&format!(
                            "skipped a message in a batch from the server: {malformed}: {}",
                            excerpt(&element)
                        )),
                    }
                }
            }
            None => {}
        }
    }

    fn server_one(&mut self, text: String, message: Message, now: Instant, out: &mut Vec<Action>) {
        match &message.kind {
            Kind::Response { id, id_at } => {
                let (id, id_at) = (id.clone(), id_at.clone());
                self.response(text, message, &id, id_at, now, out)
            }
            Kind::Notification { method } => {
                if method == "notifications/tools/list_changed" {
                    self.registry.tools_changed();
                }
                out.push(Action::ToClient(text.into_bytes()));
            }
            // A result that names no request (an id of null, or none) answers nothing the
            // client asked: passed on, it would be unchecked.
            Kind::Other if message.result.is_some() => report(&format!(
                "dropped a result from the server without a request id: {}",
                excerpt(&text)
            )),
            _ => out.push(Action::ToClient(text.into_bytes())),
        }
    }

    fn response(
        &mut self,
        text: String,
        message: Message,
        id: &RequestId,
        id_at: Range<usize>,
        now: Instant,
        out: &mut Vec<Action>,
    ) {
        let key = id.key();
        if self.listing.is_waiting_for(key) {
            return self.own_page(&text, &message, now, out);
        }
        if self.abandoned.remove(key) {
            // The answer to a request the proxy gave up on: it is the proxy's, never the client's.
            return;
        }
        if !self.pending.contains_key(key) && self.forget_cancelled(id) {
            // The client cancelled it: it expects no answer, and gets none.
            return tracing::debug!("dropped the server's answer to cancelled request {id}");
        }
        let Some(pending) = self.pending.remove(key).or_else(|| self.take_rounded(id)) else {
            // A second answer to a request, or an answer to one never sent: passed on, it would
            // reach the client unchecked (and a request would get two answers).
            return report(&format!(
                "dropped an answer from the server with id {id}: no request with that id is waiting for one (an answer sent twice, or to an id never asked): {}",
                excerpt(&text)
            ));
        };
        // The client gets its own id back exactly as it sent it (`3.0`, not the server's `3`).
        let (text, message) = if id.raw() == pending.id.raw() {
            (text, message)
        } else {
            let text = message::with_id(&text, id_at, &pending.id);
            match read_object(&text, 0..text.len()) {
                Ok(message) => (text, message),
                Err(_) => (text, message),
            }
        };
        let Pending {
            id,
            started,
            kind,
            route,
            ..
        } = pending;
        if let Some(operations) = self.operations.as_mut() {
            let method = match &kind {
                PendingKind::Initialize => Some("initialize"),
                PendingKind::ListTools { .. } => Some("tools/list"),
                PendingKind::Other(method) => method.as_deref(),
                PendingKind::CallTool(_) => None,
            };
            if let Some(method) = method {
                operations.push(Operation {
                    method: method.to_string(),
                    duration: now.saturating_duration_since(started),
                    error_code: error_code(&text, &message),
                });
            }
        }
        match kind {
            PendingKind::Initialize => {
                self.protocol = message
                    .result
                    .as_ref()
                    .and_then(|at| message::parse_at(&text, at.clone()).ok())
                    .and_then(|result| {
                        result
                            .get("protocolVersion")
                            .and_then(Value::as_str)
                            .map(String::from)
                    });
                self.answered(route, text.into_bytes(), out);
            }
            PendingKind::ListTools {
                cursor,
                changes_at_request,
            } => {
                let line = self.tools_list_result(text, &id, cursor, changes_at_request, out);
                self.answered(route, line, out);
            }
            PendingKind::CallTool(record) => {
                let line = self.tools_call_result(text, &message, &id, started, record, out);
                self.answered(route, line, out);
            }
            PendingKind::Other(_) => self.answered(route, text.into_bytes(), out),
        }
    }

    /// The one request in flight whose numeric id equals `id` once both are read as 64-bit
    /// floats: a JavaScript server reads `18446744073709551617` as 18446744073709552000 and
    /// answers with that. `None` when no request, or more than one, matches so.
    fn take_rounded(&mut self, id: &RequestId) -> Option<Pending> {
        let value = id_as_float(id)?;
        let mut matching = self
            .pending
            .iter()
            .filter(|(_, p)| id_as_float(&p.id) == Some(value))
            .map(|(key, _)| key.clone());
        let key = matching.next()?;
        if matching.next().is_some() {
            return None;
        }
        self.pending.remove(&key)
    }

    /// A message from the server longer than the transport accepts, of `length` bytes, with the
    /// request id found in what was kept of it.
    pub fn server_message_too_large(
        &mut self,
        length: usize,
        id: Option<RequestId>,
        now: Instant,
        out: &mut Vec<Action>,
    ) {
        let limit = self.config.max_message_bytes;
        report(&format!(
            "refused a message of {length} bytes from the server: the limit is {limit} bytes (--max-message-bytes)"
        ));
        let Some(id) = id else {
            return;
        };
        if self.listing.is_waiting_for(id.key()) {
            let reason = format!(
                "the server's answer to the proxy's tools/list ({length} bytes) is over the limit of {limit} bytes (--max-message-bytes)"
            );
            return self.listing_failed(reason, now, out);
        }
        self.abandoned.remove(id.key());
        let Some(pending) = self.pending.remove(id.key()) else {
            return;
        };
        let text = format!(
            "the server's response ({length} bytes) was refused by the proxy: the limit is {limit} bytes"
        );
        self.audit_unanswered(&pending, &text, out);
        let reply = error_line(Some(&pending.id), ErrorCode::INTERNAL_ERROR, &text, None);
        self.answered(pending.route, reply, out);
    }

    /// The server is gone: answer every client request still in flight (or waiting for the
    /// proxy's own listing) with an error, and the requests the client sends from now on with
    /// the same one.
    pub fn server_gone(&mut self, message: &str, data: Value, now: Instant, out: &mut Vec<Action>) {
        self.server_gone = Some(ServerGone {
            message: message.to_string(),
            data: data.clone(),
        });
        self.listing = Listing::new(self.config.listing_retry);
        let mut pending: Vec<Pending> = self.pending.drain().map(|(_, p)| p).collect();
        pending.sort_by_key(|p| p.order);
        for request in pending {
            self.answer_unanswered(request, message, &data, out);
        }
        for waiting in std::mem::take(&mut self.waiting) {
            match waiting {
                Waiting::Call(call) => {
                    let pending = call.into_pending(self.config.audit);
                    self.answer_unanswered(pending, message, &data, out);
                }
                Waiting::Batch(text) => {
                    if let Ok(Read::Batch(elements)) = read(&text) {
                        self.client_batch(text, elements, now, out);
                    }
                }
            }
        }
    }

    /// Answer a request in flight that the server will never answer.
    fn answer_unanswered(
        &mut self,
        request: Pending,
        message: &str,
        data: &Value,
        out: &mut Vec<Action>,
    ) {
        let reply = self.unanswerable(&request, message, data, out);
        self.answered(request.route, reply, out);
    }

    /// Audit a request the server will never answer, and make its error answer.
    fn unanswerable(
        &self,
        request: &Pending,
        message: &str,
        data: &Value,
        out: &mut Vec<Action>,
    ) -> Vec<u8> {
        self.audit_unanswered(request, message, out);
        error_line(Some(&request.id), ErrorCode(-32000), message, Some(data))
    }

    fn audit_unanswered(&self, pending: &Pending, error: &str, out: &mut Vec<Action>) {
        if let PendingKind::CallTool(record) = &pending.kind {
            let entry = AuditRecord {
                id: pending.id.clone(),
                tool: record.tool.clone(),
                verdict: if record.forwarded {
                    Verdict::Forwarded
                } else {
                    Verdict::UncheckedRefused
                },
                input_check: Some(record.input),
                messages: record.messages.clone(),
                duration: pending.started.elapsed(),
                is_error: None,
                output_check: Some(OutputVerdict::Skipped),
                error: Some(error.to_string()),
                error_code: Some(-32000),
                keywords: record.keywords.clone(),
                arguments: record.arguments.clone(),
                origin: None,
            };
            self.audit(entry, out);
        }
    }

    /// Emit an audit record.
    fn audit(&self, mut record: AuditRecord, out: &mut Vec<Action>) {
        if self.config.audit {
            if record.origin.is_none() {
                record.origin = self.registry.origin(&record.tool).cloned();
            }
            out.push(Action::Audit(Box::new(record)));
        }
    }

    /// Report `message` the first time only.
    fn report_once(&mut self, message: String) {
        if self.reported.insert(message.clone()) {
            report(&message);
        }
    }

    /// Report `message` the first time something is reported under `key` only (the message
    /// may differ from one time to the next: the count of tools, the `$ref` a call reached).
    fn report_once_as(&mut self, key: String, message: impl FnOnce() -> String) {
        if self.reported.insert(key) {
            report(&message());
        }
    }

    /// A fresh id for the proxy's own request: none of the client's requests in flight or
    /// waiting has it.
    fn own_id(&mut self) -> RequestId {
        loop {
            self.next_own_id += 1;
            let id = RequestId::from_value(&Value::String(format!(
                "toolschema-proxy-{}",
                self.next_own_id
            )));
            let taken = self.pending.contains_key(id.key())
                || self.waiting.iter().any(|w| w.has_id(id.key()));
            if !taken {
                return id;
            }
        }
    }

    /// Remember request `id`, cancelled while the server had it, forgetting the oldest past
    /// [`CANCELLED_IDS`].
    fn remember_cancelled(&mut self, id: RequestId) {
        if self.cancelled.len() >= CANCELLED_IDS {
            self.cancelled.pop_front();
        }
        self.cancelled.push_back(id);
    }

    /// Forget the cancelled request an answer with `id` is for (its id, or the one id a
    /// JavaScript server would read as the same number); `false` when it is none of them.
    fn forget_cancelled(&mut self, id: &RequestId) -> bool {
        let at = self
            .cancelled
            .iter()
            .position(|c| c.key() == id.key())
            .or_else(|| {
                let value = id_as_float(id)?;
                let mut matching = self
                    .cancelled
                    .iter()
                    .enumerate()
                    .filter(|(_, c)| id_as_float(c) == Some(value));
                let (at, _) = matching.next()?;
                matching.next().is_none().then_some(at)
            });
        at.and_then(|at| self.cancelled.remove(at)).is_some()
    }

    /// Whether client request `key` waits for its answer (in flight at the server, or waiting
    /// in the gate for the proxy's own listing).
    pub fn awaits_answer(&self, key: &IdKey) -> bool {
        self.pending.contains_key(key) || self.waiting.iter().any(|w| w.has_id(key))
    }

    /// Whether `key` is the id of a request the proxy sent itself and has not seen answered.
    fn is_own_id(&self, key: &IdKey) -> bool {
        self.listing.is_waiting_for(key) || self.abandoned.contains(key)
    }
}

/// A line from `side` read as a message or a batch; `None` (reported) when it is neither.
fn read_line(line: Vec<u8>, side: &str) -> Option<(String, Read)> {
    let skipped = |malformed: message::Malformed, text: &str| {
        report(&format!(
            "skipped a message from the {side}: {malformed}: {}",
            excerpt(text)
        ))
    };
    let text = match text_of(line) {
        Ok(text) => text,
        Err((line, malformed)) => {
            skipped(malformed, &String::from_utf8_lossy(&line));
            return None;
        }
    };
    match read(&text) {
        Ok(read) => Some((text, read)),
        Err(malformed) => {
            skipped(malformed, &text);
            None
        }
    }
}

/// A member of a message that a server may read otherwise than the proxy reads one of
/// JSON-RPC's own: `"Method"` beside or instead of `"method"` (to a server matching names without
/// regard to case), or `"params"` given twice ([`message::misread_member`]).
fn envelope_misread(text: &str) -> Option<(String, &'static str)> {
    let members = toolschema::json::object_members(text, 0..text.len()).ok()??;
    message::misread_member(&members, &["jsonrpc", "id", "method", "params"])
}

/// Why a request whose id one in flight has is refused.
pub fn in_flight_already(id: &RequestId) -> String {
    format!("request id {id} is already used by a request in flight")
}

/// The `id` of a message, when it has one that is not null.
fn id_member(text: &str) -> Option<RequestId> {
    let members = toolschema::json::object_members(text, 0..text.len()).ok()??;
    let id = message::member(&members, "id").filter(|at| &text[at.clone()] != "null")?;
    Some(RequestId::from_text(&text[id]))
}

/// The id of a message from the client that has an id and a `method` that is not a string.
fn request_with_bad_method(text: &str) -> Option<RequestId> {
    let members = toolschema::json::object_members(text, 0..text.len()).ok()??;
    message::member(&members, "method")?;
    id_member(text)
}

/// A numeric request id read as a 64-bit float, as a JavaScript server reads it.
fn id_as_float(id: &RequestId) -> Option<f64> {
    let raw = id.raw();
    raw.starts_with(|c: char| c == '-' || c.is_ascii_digit())
        .then(|| raw.parse::<f64>().ok())
        .flatten()
}

/// The `cursor` a `tools/list` request asks with: `None` when absent or null (a first page); a
/// cursor that is not a string is kept as written, and matches no page's `nextCursor`.
fn cursor_param(text: &str, message: &Message) -> Option<String> {
    let params = message.params.as_ref()?;
    let members = toolschema::json::object_members(text, params.clone()).ok()??;
    let at = message::member(&members, "cursor")?;
    match message::parse_at(text, at.clone()) {
        Ok(Value::Null) => None,
        Ok(Value::String(cursor)) => Some(cursor),
        _ => Some(text[at].to_string()),
    }
}

/// The start of a message, for a report.
fn excerpt(text: &str) -> String {
    let text = text.trim_end_matches('\r');
    match text.char_indices().nth(EXCERPT_CHARS) {
        Some((cut, _)) => format!("{}...", &text[..cut]),
        None => text.to_string(),
    }
}

/// The code of a response's JSON-RPC error (`-32603` when it is not an integer: still an
/// error); `None` for a result.
pub(super) fn error_code(text: &str, message: &Message) -> Option<i64> {
    message.error.as_ref().map(|at| {
        message::parse_at(text, at.clone())
            .ok()
            .and_then(|e| e.get("code").and_then(Value::as_i64))
            .unwrap_or(ErrorCode::INTERNAL_ERROR.0.into())
    })
}

/// The verdict of an input check as the audit writes it, for calls the gate answered.
fn input_of(verdict: Verdict) -> Option<InputVerdict> {
    match verdict {
        Verdict::Rejected => Some(InputVerdict::Failed),
        Verdict::UncheckedRefused => Some(InputVerdict::Unchecked),
        _ => None,
    }
}
