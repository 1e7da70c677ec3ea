//! The proxy's decisions, apart from any transport.
//!
//! A [`Gate`] sees the messages of one session as they arrive from either side, and the passing
//! of time; it answers each with [`Action`]s, in the order they must happen: a message to write
//! to the server or to the client, an audit record to append. It learns the tools from the
//! listings that pass through, admits or refuses each `tools/call`, lists the tools itself when a
//! call needs them, checks results against the output schema, and says what the audit log
//! records. It does no I/O and never waits: a call that needs the tools listed first waits inside
//! the gate while the proxy's own `tools/list` is out, and is decided when the listing ends.
//!
//! The stdio relay drives one gate from its two threads; tests drive it directly.

use super::audit::{AuditRecord, OutputVerdict, Verdict};
use super::policy::ToolPolicy;
use super::registry::{Lookup, Page, ToolRegistry};
use super::OutputCheck;
use crate::framing::trim_line;
use crate::message::{
    self, error_response, inspect, result_response, to_line, tool_error_result, IdKey, Kind,
};
use rmcp::model::ErrorCode;
use serde_json::{json, Map, Value};
use std::collections::{HashMap, HashSet, VecDeque};
use std::time::{Duration, Instant};

/// The prefix of the proxy's own request ids. With a counter after it, and checked against the
/// client's requests in flight, an id the proxy makes never matches one of the client's.
const OWN_ID_PREFIX: &str = "toolschema-proxy-";

/// How much of a malformed message is quoted in a report.
const EXCERPT_CHARS: usize = 120;

/// How long the proxy waits for the server to answer its own `tools/list`, by default.
pub const DEFAULT_LISTING_TIMEOUT: Duration = Duration::from_secs(30);

/// Report something the proxy's user should know (through `tracing`: the binary decides where it
/// goes).
pub fn report(message: &str) {
    tracing::warn!("{message}");
}

/// What a gate decides with.
#[derive(Debug, Clone)]
pub struct GateConfig {
    /// The output check.
    pub output_check: OutputCheck,
    /// Which tools are let through.
    pub policy: ToolPolicy,
    /// Refuse calls to tools the server has not listed (by default the server answers them).
    pub deny_unlisted: bool,
    /// Produce an audit record for every `tools/call`.
    pub audit: bool,
    /// Keep each call's arguments in its audit record.
    pub audit_arguments: bool,
    /// The largest message the transport accepts, as the proxy's refusals state it.
    pub max_message_bytes: usize,
    /// How long the proxy waits for the server to answer a `tools/list` it sent itself.
    pub listing_timeout: Duration,
}

impl Default for GateConfig {
    fn default() -> Self {
        GateConfig {
            output_check: OutputCheck::default(),
            policy: ToolPolicy::default(),
            deny_unlisted: false,
            audit: false,
            audit_arguments: false,
            max_message_bytes: crate::framing::DEFAULT_MAX_MESSAGE_BYTES,
            listing_timeout: DEFAULT_LISTING_TIMEOUT,
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

/// A client request the server has not answered yet.
struct Pending {
    /// The id as the client sent it.
    id: Value,
    /// When the request arrived.
    started: Instant,
    /// What it asked.
    kind: PendingKind,
}

/// What a pending request asked, as far as its response matters.
enum PendingKind {
    /// `tools/list`: the response is learned (and filtered by the policy).
    ListTools {
        /// Asked without a cursor.
        first: bool,
        /// The registry's change count when asked.
        changes_at_request: u64,
    },
    /// `tools/call`: the response is checked against the output schema and audited.
    CallTool {
        /// The tool called.
        tool: String,
        /// The arguments, kept for the audit log only when it records them.
        arguments: Option<Value>,
    },
    /// Anything else.
    Other,
}

/// A page of a `tools/list` result passed to the client, learned the next time a call needs the
/// tools (the page goes to the client without waiting to be learned).
struct UnlearnedPage {
    line: Vec<u8>,
    first: bool,
    changes_at_request: u64,
}

/// The error requests get once the server has exited.
#[derive(Clone)]
struct ServerGone {
    message: String,
    data: Value,
}

/// A `tools/call` whose arguments are read and whose tool is allowed, about to be checked.
struct AdmittedCall {
    id: Value,
    tool: String,
    arguments: Value,
    line: Vec<u8>,
    started: Instant,
}

/// The proxy's own listing of the server's tools, under way.
struct OwnListing {
    /// The id of the page request out now.
    request: IdKey,
    /// The cursor it asked with (`None` for the first page).
    cursor: Option<String>,
    /// Cursors seen so far: a server that repeats one would be listed forever.
    seen: HashSet<String>,
    /// The registry's change count when the listing started, and when this page was asked for.
    changes_at_start: u64,
    changes_at_request: u64,
    /// When the server must have answered this page.
    deadline: Instant,
    /// The call that needs the list (in flight meanwhile, so a server that dies answers it).
    call: AdmittedCall,
}

/// How arguments fared against what the proxy knows of the tool.
enum ArgumentVerdict {
    Forward,
    Invalid(toolschema::ValidationErrors),
    Unlisted,
}

/// The decisions of one proxied session.
pub struct Gate {
    config: GateConfig,
    /// Client requests in flight at the server.
    pending: HashMap<IdKey, Pending>,
    next_own_id: u64,
    registry: ToolRegistry,
    /// Set once the server has exited and the requests in flight were failed.
    server_gone: Option<ServerGone>,
    /// Pages of the client's listings, in order, not learned yet.
    unlearned: Vec<UnlearnedPage>,
    /// The proxy's own listing, while it runs.
    listing: Option<OwnListing>,
    /// Client messages that arrived during the proxy's own listing, in order.
    parked: VecDeque<Vec<u8>>,
}

impl Gate {
    /// A gate for a new session.
    pub fn new(config: GateConfig) -> Gate {
        Gate {
            config,
            pending: HashMap::new(),
            next_own_id: 0,
            registry: ToolRegistry::default(),
            server_gone: None,
            unlearned: Vec::new(),
            listing: None,
            parked: VecDeque::new(),
        }
    }

    /// The gate's settings.
    pub fn config(&self) -> &GateConfig {
        &self.config
    }

    /// When [`Gate::tick`] must be called next, if anything waits on time.
    pub fn next_deadline(&self) -> Option<Instant> {
        self.listing.as_ref().map(|listing| listing.deadline)
    }

    /// Whether client messages wait in the gate to be decided (for the proxy's own listing).
    pub fn holds_client_messages(&self) -> bool {
        self.listing.is_some() || !self.parked.is_empty()
    }

    /// Time has passed: fail what waited too long.
    pub fn tick(&mut self, now: Instant, out: &mut Vec<Action>) {
        let expired = self
            .listing
            .as_ref()
            .is_some_and(|listing| listing.deadline <= now);
        if expired {
            report(&format!(
                "the server did not answer the proxy's tools/list within {}s; calls to tools not listed so far are forwarded unchecked",
                self.config.listing_timeout.as_secs_f64()
            ));
            self.finish_listing(false, now, out);
        }
    }

    // ----- client to server -----

    /// A message from the client (one line, without its newline).
    pub fn client_message(&mut self, line: Vec<u8>, now: Instant, out: &mut Vec<Action>) {
        if self.listing.is_some() {
            self.parked.push_back(line);
            return;
        }
        self.client_line(line, now, out);
    }

    fn client_line(&mut self, line: Vec<u8>, now: Instant, out: &mut Vec<Action>) {
        match inspect(trim_line(&line)) {
            Err(malformed) => report(&format!(
                "skipped a message from the client: {malformed}: {}",
                excerpt(&line)
            )),
            Ok(Kind::Request { id, method }) if method == "tools/call" => {
                self.tools_call(id, line, now, out)
            }
            Ok(Kind::Request { id, method }) => {
                let kind = if method == "tools/list" {
                    PendingKind::ListTools {
                        first: !has_cursor(&line),
                        changes_at_request: self.registry.changes(),
                    }
                } else {
                    PendingKind::Other
                };
                if self.track(id, kind, now, out) {
                    out.push(Action::ToServer(line));
                }
            }
            Ok(_) => out.push(Action::ToServer(line)),
        }
    }

    /// A message from the client longer than the transport accepts, of `length` bytes, with the
    /// request id found in what was kept of it.
    pub fn client_message_too_large(
        &mut self,
        length: usize,
        id: Option<Value>,
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
            let reply = error_response(&id, ErrorCode::INVALID_REQUEST, &text, None);
            out.push(Action::ToClient(line_of(&reply)));
        }
    }

    /// Remember a request about to be forwarded to the server, which arrived at `started`.
    ///
    /// Once the server is gone (the requests in flight were failed), the request is answered with
    /// the same error instead, and `false` says it must not be forwarded.
    fn track(
        &mut self,
        id: Value,
        kind: PendingKind,
        started: Instant,
        out: &mut Vec<Action>,
    ) -> bool {
        let pending = Pending { id, started, kind };
        match &self.server_gone {
            None => {
                self.pending.insert(IdKey::of(&pending.id), pending);
                true
            }
            Some(gone) => {
                let gone = gone.clone();
                self.answer_unanswered(&pending, &gone.message, &gone.data, out);
                false
            }
        }
    }

    /// A `tools/call` from the client: check it, then forward it or answer it.
    fn tools_call(&mut self, id: Value, line: Vec<u8>, started: Instant, out: &mut Vec<Action>) {
        let call = match message::parse_call(trim_line(&line)) {
            Ok(call) => call,
            Err(e) => {
                // Inspection passed, so it is JSON too deep to read: it cannot be checked.
                let message = format!("the tools/call request cannot be checked: {e}");
                report(&message);
                let reply = error_response(&id, ErrorCode::INVALID_PARAMS, &message, None);
                out.push(Action::ToClient(line_of(&reply)));
                let tool = message::tool_name(trim_line(&line)).unwrap_or_default();
                self.refused(&id, &tool, Verdict::Rejected, message, started, None, out);
                return;
            }
        };
        // Without a name there is nothing to check against: the server answers.
        let Some(tool) = call.name else {
            if self.track(id, PendingKind::Other, started, out) {
                out.push(Action::ToServer(line));
            }
            return;
        };
        // MCP treats absent arguments (and `null`, which some clients send) as none.
        let arguments = match call.arguments {
            None | Some(Value::Null) => Value::Object(Map::new()),
            Some(arguments) => arguments,
        };
        if !arguments.is_object() {
            let message = format!(
                "arguments of tool '{tool}' must be a JSON object (got {})",
                json_type(&arguments)
            );
            let reply = error_response(&id, ErrorCode::INVALID_PARAMS, &message, None);
            out.push(Action::ToClient(line_of(&reply)));
            self.refused(
                &id,
                &tool,
                Verdict::Rejected,
                message,
                started,
                Some(&arguments),
                out,
            );
            return;
        }
        if let Some(reason) = self.config.policy.refusal(&tool) {
            let reply = error_response(&id, ErrorCode::INVALID_PARAMS, &reason, None);
            out.push(Action::ToClient(line_of(&reply)));
            self.refused(
                &id,
                &tool,
                Verdict::Denied,
                reason,
                started,
                Some(&arguments),
                out,
            );
            return;
        }
        let call = AdmittedCall {
            id,
            tool,
            arguments,
            line,
            started,
        };
        self.learn_listed_pages();
        // Tools may have changed (or were never listed in full): check against the current list.
        if !self.registry.is_current() {
            // The call counts as in flight meanwhile, so a server dying during the listing still
            // gets it answered (with the error every request in flight gets).
            let kind = self.call_kind(&call.tool, &call.arguments);
            if self.track(call.id.clone(), kind, started, out) {
                self.start_listing(call, started, out);
            }
            return;
        }
        self.decide_call(call, out);
    }

    fn call_kind(&self, tool: &str, arguments: &Value) -> PendingKind {
        PendingKind::CallTool {
            tool: tool.to_string(),
            arguments: self.config.audit.then(|| arguments.clone()),
        }
    }

    /// Check a call against the tools as known now, and forward it or answer it.
    fn decide_call(&mut self, call: AdmittedCall, out: &mut Vec<Action>) {
        let AdmittedCall {
            id,
            tool,
            arguments,
            line,
            started,
        } = call;
        match self.check_arguments(&tool, &arguments) {
            ArgumentVerdict::Forward => {
                let kind = self.call_kind(&tool, &arguments);
                if self.track(id, kind, started, out) {
                    out.push(Action::ToServer(line));
                }
            }
            ArgumentVerdict::Invalid(errors) => {
                let result = tool_error_result(errors.to_string());
                out.push(Action::ToClient(line_of(&result_response(&id, result))));
                let messages = errors.messages().into_iter().map(String::from).collect();
                self.audit(
                    AuditRecord {
                        id,
                        tool,
                        verdict: Verdict::Rejected,
                        messages,
                        duration: started.elapsed(),
                        is_error: Some(true),
                        output_check: None,
                        error: None,
                        arguments: None,
                    },
                    Some(&arguments),
                    out,
                );
            }
            ArgumentVerdict::Unlisted => {
                let mut reason = format!("unknown tool '{tool}'");
                if let Some(suggestion) = toolschema::suggest::closest(&tool, self.registry.names())
                {
                    reason.push_str(&format!(" (did you mean '{suggestion}'?)"));
                }
                let reply = error_response(&id, ErrorCode::INVALID_PARAMS, &reason, None);
                out.push(Action::ToClient(line_of(&reply)));
                self.refused(
                    &id,
                    &tool,
                    Verdict::Denied,
                    reason,
                    started,
                    Some(&arguments),
                    out,
                );
            }
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn refused(
        &self,
        id: &Value,
        tool: &str,
        verdict: Verdict,
        message: String,
        started: Instant,
        arguments: Option<&Value>,
        out: &mut Vec<Action>,
    ) {
        self.audit(
            AuditRecord {
                id: id.clone(),
                tool: tool.to_string(),
                verdict,
                messages: vec![message],
                duration: started.elapsed(),
                is_error: None,
                output_check: None,
                error: None,
                arguments: None,
            },
            arguments,
            out,
        );
    }

    /// Emit an audit record, with the call's arguments when the log records them.
    fn audit(&self, mut record: AuditRecord, arguments: Option<&Value>, out: &mut Vec<Action>) {
        if !self.config.audit {
            return;
        }
        if self.config.audit_arguments {
            record.arguments = arguments.cloned();
        }
        out.push(Action::Audit(Box::new(record)));
    }

    fn check_arguments(&mut self, tool: &str, arguments: &Value) -> ArgumentVerdict {
        let (lookup, warning) = self.registry.lookup(tool);
        if let Some(warning) = warning {
            report(&warning);
        }
        match lookup {
            Lookup::Compiled(compiled) => match compiled.validate_input(arguments) {
                Ok(()) => ArgumentVerdict::Forward,
                Err(errors) => ArgumentVerdict::Invalid(errors),
            },
            Lookup::Unusable => ArgumentVerdict::Forward,
            Lookup::Unknown if self.config.deny_unlisted => ArgumentVerdict::Unlisted,
            Lookup::Unknown => ArgumentVerdict::Forward,
        }
    }

    // ----- the proxy's own listing -----

    /// List the server's tools (every page) with the proxy's own requests, whose responses are
    /// not passed to the client; `call` is decided when the listing ends.
    fn start_listing(&mut self, call: AdmittedCall, now: Instant, out: &mut Vec<Action>) {
        let changes = self.registry.changes();
        let call_key = IdKey::of(&call.id);
        let request = self.send_page(None, &call_key, out);
        self.listing = Some(OwnListing {
            request,
            cursor: None,
            seen: HashSet::new(),
            changes_at_start: changes,
            changes_at_request: changes,
            deadline: now + self.config.listing_timeout,
            call,
        });
    }

    /// Ask the server for one page of tools; returns the request's id.
    fn send_page(&mut self, cursor: Option<&str>, call: &IdKey, out: &mut Vec<Action>) -> IdKey {
        let id = self.own_id(call);
        let mut request = json!({"jsonrpc": "2.0", "id": id, "method": "tools/list"});
        if let Some(cursor) = cursor {
            request["params"] = json!({ "cursor": cursor });
        }
        out.push(Action::ToServer(line_of(&request)));
        IdKey::of(&id)
    }

    /// A fresh id for the proxy's own request: not the id of the call it is made for, nor of
    /// any client request in flight.
    fn own_id(&mut self, call: &IdKey) -> Value {
        loop {
            self.next_own_id += 1;
            let id = Value::String(format!("{OWN_ID_PREFIX}{}", self.next_own_id));
            let key = IdKey::of(&id);
            if key != *call && !self.pending.contains_key(&key) {
                return id;
            }
        }
    }

    /// The server's answer to the page the proxy asked for.
    fn own_page(&mut self, line: &[u8], now: Instant, out: &mut Vec<Action>) {
        let result = match own_result(line) {
            Ok(result) => result,
            Err(error) => {
                report(&format!(
                    "the server answered the proxy's tools/list with an error: {error}; calls to tools not listed so far are forwarded unchecked"
                ));
                return self.finish_listing(false, now, out);
            }
        };
        // Pages the client listed before these come first.
        self.learn_listed_pages();
        let Some(listing) = &self.listing else {
            return;
        };
        let next = next_cursor(&result);
        let warnings = self.registry.learn_page(
            tools_of(&result),
            Page {
                first: listing.cursor.is_none(),
                last: next.is_none(),
                changes_at_request: listing.changes_at_request,
            },
        );
        warnings.iter().for_each(|w| report(w));
        match next {
            None => self.finish_listing(true, now, out),
            Some(next) => {
                let repeated = self
                    .listing
                    .as_mut()
                    .is_some_and(|listing| !listing.seen.insert(next.clone()));
                if repeated {
                    report(&format!(
                        "the server returned nextCursor {} twice to the proxy's tools/list; stopped listing",
                        Value::String(next)
                    ));
                    return self.finish_listing(false, now, out);
                }
                let call_key = match &self.listing {
                    Some(listing) => IdKey::of(&listing.call.id),
                    None => return,
                };
                let changes = self.registry.changes();
                let request = self.send_page(Some(&next), &call_key, out);
                if let Some(listing) = &mut self.listing {
                    listing.request = request;
                    listing.cursor = Some(next);
                    listing.changes_at_request = changes;
                    listing.deadline = now + self.config.listing_timeout;
                }
            }
        }
    }

    /// The own listing ended (`listed`: every page was learned); decide the call that waited for
    /// it, then the client messages that arrived meanwhile.
    fn finish_listing(&mut self, listed: bool, now: Instant, out: &mut Vec<Action>) {
        let Some(listing) = self.listing.take() else {
            return;
        };
        if !listed {
            // What is known is all that will be known until the tools change again, so calls do
            // not each list again.
            self.registry.settle(listing.changes_at_start);
        }
        // Not in flight any more: a server gone meanwhile has already answered it.
        if self.pending.remove(&IdKey::of(&listing.call.id)).is_some() {
            self.decide_call(listing.call, out);
        }
        self.replay_parked(now, out);
    }

    /// Handle the client messages parked during the own listing, until one starts another.
    fn replay_parked(&mut self, now: Instant, out: &mut Vec<Action>) {
        while self.listing.is_none() {
            let Some(line) = self.parked.pop_front() else {
                return;
            };
            self.client_line(line, now, out);
        }
    }

    // ----- server to client -----

    /// A message from the server (one line, without its newline).
    pub fn server_message(&mut self, line: Vec<u8>, now: Instant, out: &mut Vec<Action>) {
        match inspect(trim_line(&line)) {
            Err(malformed) => report(&format!(
                "skipped a message from the server: {malformed}: {}",
                excerpt(&line)
            )),
            Ok(Kind::Response { id }) => self.response(&id, line, now, out),
            Ok(Kind::Notification { method }) => {
                if method == "notifications/tools/list_changed" {
                    self.registry.tools_changed();
                }
                out.push(Action::ToClient(line));
            }
            Ok(_) => out.push(Action::ToClient(line)),
        }
    }

    fn response(&mut self, id: &Value, line: Vec<u8>, now: Instant, out: &mut Vec<Action>) {
        let key = IdKey::of(id);
        if self
            .listing
            .as_ref()
            .is_some_and(|listing| listing.request == key)
        {
            return self.own_page(trim_line(&line), now, out);
        }
        match self.pending.remove(&key) {
            Some(Pending {
                kind:
                    PendingKind::ListTools {
                        first,
                        changes_at_request,
                    },
                ..
            }) => self.tools_list_result(line, first, changes_at_request, out),
            Some(Pending {
                id,
                started,
                kind: PendingKind::CallTool { tool, arguments },
            }) => self.tools_call_result(line, id, tool, started, arguments, out),
            Some(_) | None => out.push(Action::ToClient(line)),
        }
    }

    /// A `tools/list` result for the client: drop the tools the policy refuses, and leave the page
    /// to be learned.
    fn tools_list_result(
        &mut self,
        line: Vec<u8>,
        first: bool,
        changes_at_request: u64,
        out: &mut Vec<Action>,
    ) {
        // Queued before the client sees the page, so its next call is checked against it.
        let (learned, sent) = match self.without_refused_tools(&line) {
            Some(filtered) => (line, line_of(&filtered)),
            None => (line.clone(), line),
        };
        self.unlearned.push(UnlearnedPage {
            line: learned,
            first,
            changes_at_request,
        });
        out.push(Action::ToClient(sent));
    }

    /// The `tools/list` response without the tools the policy refuses, or `None` when it refuses
    /// none of them.
    fn without_refused_tools(&self, line: &[u8]) -> Option<Value> {
        let policy = &self.config.policy;
        if policy.is_open() {
            return None;
        }
        let mut message = message::parse(trim_line(line)).ok()?;
        let Some(Value::Array(tools)) = message.get_mut("result")?.get_mut("tools") else {
            return None;
        };
        let before = tools.len();
        tools.retain(|tool| {
            let name = tool.get("name").and_then(Value::as_str).unwrap_or_default();
            policy.refusal(name).is_none()
        });
        (tools.len() != before).then_some(message)
    }

    /// Learn the pages of the client's listings that arrived since the last time.
    fn learn_listed_pages(&mut self) {
        for page in std::mem::take(&mut self.unlearned) {
            let Ok(message) = message::parse(trim_line(&page.line)) else {
                continue;
            };
            let Some(result) = message.get("result") else {
                continue;
            };
            let warnings = self.registry.learn_page(
                tools_of(result),
                Page {
                    first: page.first,
                    last: next_cursor(result).is_none(),
                    changes_at_request: page.changes_at_request,
                },
            );
            warnings.iter().for_each(|w| report(w));
        }
    }

    /// A `tools/call` result for the client: check its structured content, audit it.
    fn tools_call_result(
        &mut self,
        line: Vec<u8>,
        id: Value,
        tool: String,
        started: Instant,
        arguments: Option<Value>,
        out: &mut Vec<Action>,
    ) {
        let mode = self.config.output_check;
        let nothing_to_check = mode == OutputCheck::Off || !self.registry.has_output_schema(&tool);
        if nothing_to_check && !self.config.audit {
            return out.push(Action::ToClient(line));
        }
        let record = |verdict, messages, is_error, output_check, error| AuditRecord {
            id: id.clone(),
            tool: tool.clone(),
            verdict,
            messages,
            duration: started.elapsed(),
            is_error,
            output_check,
            error,
            arguments: None,
        };
        let mut message = match message::parse(trim_line(&line)) {
            Ok(message) => message,
            Err(e) => {
                report(&format!(
                    "the result of tool '{tool}' cannot be checked: {e}"
                ));
                let entry = record(
                    Verdict::Forwarded,
                    vec![format!("the result cannot be checked: {e}")],
                    None,
                    Some(OutputVerdict::Skipped),
                    None,
                );
                self.audit(entry, arguments.as_ref(), out);
                return out.push(Action::ToClient(line));
            }
        };
        let error = message.get("error").map(|e| {
            e.get("message")
                .and_then(Value::as_str)
                .map_or_else(|| e.to_string(), String::from)
        });
        let is_error = message
            .get("result")
            .map(|r| r.get("isError").and_then(Value::as_bool).unwrap_or(false));
        let mut messages = Vec::new();
        let verdict = if error.is_some() || is_error == Some(true) {
            OutputVerdict::Skipped
        } else if mode == OutputCheck::Off {
            OutputVerdict::Off
        } else {
            let structured = message
                .get("result")
                .and_then(|r| r.get("structuredContent"));
            match self.registry.compiled(&tool) {
                Some(compiled) if compiled.output().is_some() => {
                    match compiled.validate_output(structured, false) {
                        Ok(()) => OutputVerdict::Passed,
                        Err(errors) => {
                            messages = errors.messages().into_iter().map(String::from).collect();
                            if mode == OutputCheck::Enforce {
                                OutputVerdict::Enforced
                            } else {
                                OutputVerdict::Failed
                            }
                        }
                    }
                }
                _ => OutputVerdict::NoSchema,
            }
        };
        if verdict == OutputVerdict::Failed {
            report(&format!(
                "tool '{tool}' returned a result that does not match its outputSchema: {}",
                messages.join("; ")
            ));
        }
        let replaced = (verdict == OutputVerdict::Enforced).then(|| {
            let text = format!(
                "the result of tool '{tool}' did not match its outputSchema and was withheld:\n{}",
                messages.join("\n")
            );
            message["result"] = tool_error_result(text);
            message
        });
        let is_error = if replaced.is_some() {
            Some(true)
        } else {
            is_error
        };
        // Audited before the client sees the result: the log keeps the order of the calls.
        let entry = record(Verdict::Forwarded, messages, is_error, Some(verdict), error);
        self.audit(entry, arguments.as_ref(), out);
        match replaced {
            Some(message) => out.push(Action::ToClient(line_of(&message))),
            None => out.push(Action::ToClient(line)),
        }
    }

    /// A message from the server longer than the transport accepts, of `length` bytes, with the
    /// request id found in what was kept of it.
    pub fn server_message_too_large(
        &mut self,
        length: usize,
        id: Option<Value>,
        out: &mut Vec<Action>,
    ) {
        let limit = self.config.max_message_bytes;
        report(&format!(
            "refused a message of {length} bytes from the server: the limit is {limit} bytes (--max-message-bytes)"
        ));
        let Some(id) = id else {
            return;
        };
        let Some(pending) = self.pending.remove(&IdKey::of(&id)) else {
            return;
        };
        let text = format!(
            "the server's response ({length} bytes) was refused by the proxy: the limit is {limit} bytes"
        );
        self.audit_unanswered(&pending, &text, out);
        let reply = error_response(&pending.id, ErrorCode::INTERNAL_ERROR, &text, None);
        out.push(Action::ToClient(line_of(&reply)));
    }

    /// The server is gone: answer every client request still in flight with an error, and the
    /// requests the client sends from now on with the same one.
    pub fn server_gone(&mut self, message: &str, data: Value, now: Instant, out: &mut Vec<Action>) {
        self.server_gone = Some(ServerGone {
            message: message.to_string(),
            data: data.clone(),
        });
        self.listing = None;
        let mut pending: Vec<Pending> = self.pending.drain().map(|(_, p)| p).collect();
        pending.sort_by_key(|p| p.started);
        for request in &pending {
            self.answer_unanswered(request, message, &data, out);
        }
        self.replay_parked(now, out);
    }

    /// Answer a request the server will never answer.
    fn answer_unanswered(
        &self,
        request: &Pending,
        message: &str,
        data: &Value,
        out: &mut Vec<Action>,
    ) {
        self.audit_unanswered(request, message, out);
        let reply = error_response(&request.id, ErrorCode(-32000), message, Some(data.clone()));
        out.push(Action::ToClient(line_of(&reply)));
    }

    fn audit_unanswered(&self, pending: &Pending, error: &str, out: &mut Vec<Action>) {
        if let PendingKind::CallTool { tool, arguments } = &pending.kind {
            let record = AuditRecord {
                id: pending.id.clone(),
                tool: tool.clone(),
                verdict: Verdict::Forwarded,
                messages: Vec::new(),
                duration: pending.started.elapsed(),
                is_error: None,
                output_check: Some(OutputVerdict::Skipped),
                error: Some(error.to_string()),
                arguments: None,
            };
            self.audit(record, arguments.as_ref(), out);
        }
    }
}

/// A message the proxy made, as one line without its newline.
fn line_of(message: &Value) -> Vec<u8> {
    let mut line = to_line(message);
    line.pop();
    line
}

/// The result of a response to the proxy's own request, or what went wrong.
fn own_result(line: &[u8]) -> Result<Value, String> {
    let mut message = message::parse(line).map_err(|e| e.to_string())?;
    match message.get_mut("result") {
        Some(result) => Ok(result.take()),
        None => Err(message
            .get("error")
            .map_or_else(|| "null".to_string(), Value::to_string)),
    }
}

fn has_cursor(line: &[u8]) -> bool {
    message::parse(trim_line(line)).is_ok_and(|request| {
        request
            .get("params")
            .and_then(|p| p.get("cursor"))
            .is_some_and(|cursor| !cursor.is_null())
    })
}

fn next_cursor(result: &Value) -> Option<String> {
    result
        .get("nextCursor")
        .and_then(Value::as_str)
        .map(String::from)
}

fn tools_of(result: &Value) -> &[Value] {
    result
        .get("tools")
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice)
}

fn json_type(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// The start of a line, for a report.
fn excerpt(line: &[u8]) -> String {
    let text = String::from_utf8_lossy(trim_line(line));
    match text.char_indices().nth(EXCERPT_CHARS) {
        Some((cut, _)) => format!("{}...", &text[..cut]),
        None => text.into_owned(),
    }
}

#[cfg(test)]
mod tests;
