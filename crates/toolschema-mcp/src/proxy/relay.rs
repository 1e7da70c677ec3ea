//! The two directions of the proxy: client to server and server to client.
//!
//! Each direction is one thread reading one line at a time with blocking I/O, so messages keep
//! their order and a message wakes the thread that handles it directly (no reactor between the
//! read and the write: a relay's latency is mostly wake-ups). A line is inspected (`id` and
//! `method` only) and written on unchanged; only `tools/call` requests and the
//! responses to `tools/list` and `tools/call` are parsed in full. Messages the proxy answers
//! itself (rejected or denied calls, over-limit messages) and results it changes (denied tools
//! removed from a listing, results replaced by `--output-check enforce`) are the only ones it
//! writes from a parsed value.

use super::audit::{AuditLog, AuditRecord, OutputVerdict, Verdict};
use super::registry::{Lookup, Page, ToolRegistry};
use super::{OutputCheck, ProxyConfig};
use crate::framing::{trim_line, Frame, LineReader, OversizedLine};
use crate::message::{
    self, error_response, inspect, result_response, sniff_id, to_line, tool_error_result, IdKey,
    Kind,
};
use rmcp::model::ErrorCode;
use serde_json::{json, Map, Value};
use std::collections::{HashMap, HashSet};
use std::fs::File;
use std::io::{BufRead, BufWriter, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{sync_channel, RecvTimeoutError, SyncSender};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// The prefix of the proxy's own request ids. With a counter after it, and checked against the
/// client's requests in flight, an id the proxy makes never matches one of the client's.
const OWN_ID_PREFIX: &str = "toolschema-proxy-";

/// How much of a malformed line is quoted in a report.
const EXCERPT_CHARS: usize = 120;

/// Report something the proxy's user should know (through `tracing`: the binary decides where it
/// goes).
pub fn report(message: &str) {
    tracing::warn!("{message}");
}

/// A client request the server has not answered yet.
pub struct Pending {
    /// The id as the client sent it.
    pub id: Value,
    /// When the request arrived.
    pub started: Instant,
    /// What it asked.
    pub kind: PendingKind,
}

/// What a pending request asked, as far as its response matters.
pub enum PendingKind {
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

/// The answer to a request the proxy sent itself: the response line, parsed by the thread that
/// waits for it.
type OwnAnswer = Vec<u8>;

/// State both directions share. Never held while reading or writing.
#[derive(Default)]
pub struct State {
    /// Client requests in flight at the server.
    pub pending: HashMap<IdKey, Pending>,
    /// The proxy's own requests in flight.
    own: HashMap<IdKey, SyncSender<OwnAnswer>>,
    next_own_id: u64,
    registry: ToolRegistry,
    /// Set once the server has exited and the requests in flight were failed.
    server_gone: Option<ServerGone>,
    /// Pages of the client's listings, in order, not learned yet.
    unlearned: Vec<UnlearnedPage>,
}

/// A page of a `tools/list` result passed to the client, left for the client-to-server thread to
/// learn the next time it needs the tools. That thread also compiles the validators, so the
/// listing's memory is reused for them (each thread allocates from its own arena), and the page
/// goes to the client without waiting to be learned.
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

/// How much of a message is gathered before it is written: most messages go out in one `write`.
const WRITE_BUFFER_BYTES: usize = 64 * 1024;

/// Write one line and its newline, then flush.
fn write_line(writer: &mut impl Write, line: &[u8]) -> std::io::Result<()> {
    writer.write_all(line)?;
    writer.write_all(b"\n")?;
    writer.flush()
}

/// Writes whole lines to the client; shared by both directions.
pub struct ClientOutput {
    writer: Mutex<BufWriter<Box<dyn Write + Send>>>,
    failed: AtomicBool,
}

impl ClientOutput {
    /// Output to the client over `writer`.
    pub fn new(writer: Box<dyn Write + Send>) -> Self {
        ClientOutput {
            writer: Mutex::new(BufWriter::with_capacity(WRITE_BUFFER_BYTES, writer)),
            failed: AtomicBool::new(false),
        }
    }

    /// Write one line (without its newline) and flush. A client that stopped reading is reported
    /// once, not treated as fatal: its end of input ends the proxy.
    pub fn send_line(&self, line: &[u8]) {
        let mut writer = self
            .writer
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        if let Err(e) = write_line(&mut *writer, line) {
            if !self.failed.swap(true, Ordering::Relaxed) {
                report(&format!("cannot write to the client: {e}"));
            }
        }
    }

    /// Write a message the proxy made.
    pub fn send(&self, message: &Value) {
        let mut line = to_line(message);
        line.pop();
        self.send_line(&line);
    }
}

/// The server's stdin, which the proxy closes to ask the server to exit.
pub struct ServerInput {
    writer: Mutex<Option<BufWriter<File>>>,
}

impl ServerInput {
    /// Input to the server over `writer`.
    pub fn new(writer: File) -> Self {
        ServerInput {
            writer: Mutex::new(Some(BufWriter::with_capacity(WRITE_BUFFER_BYTES, writer))),
        }
    }

    fn send_line(&self, line: &[u8]) -> std::io::Result<()> {
        let mut writer = self
            .writer
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        match writer.as_mut() {
            Some(writer) => write_line(writer, line),
            None => Err(std::io::ErrorKind::BrokenPipe.into()),
        }
    }

    /// Close the server's stdin, unless a write to it is under way (a server that does not read
    /// is stopped by signals instead).
    pub fn close(&self) {
        if let Ok(mut writer) = self.writer.try_lock() {
            writer.take();
        }
    }
}

/// Everything the two directions share.
pub struct Relay {
    /// The proxy's settings.
    pub config: Arc<ProxyConfig>,
    /// Shared state.
    pub state: Mutex<State>,
    /// Output to the client.
    pub client: ClientOutput,
    /// Input to the server.
    pub server: ServerInput,
    /// The audit log, if any.
    pub audit: Option<AuditLog>,
}

/// Why the client-to-server direction stopped.
pub enum ClientEnd {
    /// The client closed its output.
    EndOfInput,
    /// The server's stdin is closed: the server is gone.
    ServerGone,
}

impl Relay {
    fn state(&self) -> MutexGuard<'_, State> {
        // A panic elsewhere must not stop the proxy: the state stays usable.
        self.state
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    fn audit(&self, record: AuditRecord<'_>) {
        if let Some(audit) = &self.audit {
            audit.write(&record);
        }
    }

    // ----- client to server -----

    /// Read the client's messages and pass them to the server until either side is done.
    pub fn client_to_server<R: BufRead>(&self, mut reader: LineReader<R>) -> ClientEnd {
        loop {
            let line = match reader.next_blocking() {
                Ok(Some(Frame::Line(line))) => line,
                Ok(Some(Frame::Oversized(over))) => {
                    self.client_message_too_large(&over);
                    continue;
                }
                Ok(None) => return ClientEnd::EndOfInput,
                Err(e) => {
                    report(&format!("cannot read from the client: {e}"));
                    return ClientEnd::EndOfInput;
                }
            };
            let forwarded: std::io::Result<()> = match inspect(trim_line(&line)) {
                Err(malformed) => {
                    report(&format!(
                        "skipped a message from the client: {malformed}: {}",
                        excerpt(&line)
                    ));
                    Ok(())
                }
                Ok(Kind::Request { id, method }) if method == "tools/call" => {
                    self.tools_call(id, &line)
                }
                Ok(Kind::Request { id, method }) => {
                    let kind = if method == "tools/list" {
                        PendingKind::ListTools {
                            first: !has_cursor(&line),
                            changes_at_request: self.state().registry.changes(),
                        }
                    } else {
                        PendingKind::Other
                    };
                    self.track(id, kind, Instant::now())
                        .and_then(|()| self.server.send_line(&line))
                }
                Ok(_) => self.server.send_line(&line),
            };
            if forwarded.is_err() {
                return ClientEnd::ServerGone;
            }
        }
    }

    /// Remember a request about to be forwarded to the server, which arrived at `started`.
    ///
    /// Once the server is gone (the requests in flight were failed), the request is answered with
    /// the same error instead, and `Err` says nothing more can be forwarded.
    fn track(&self, id: Value, kind: PendingKind, started: Instant) -> std::io::Result<()> {
        let key = IdKey::of(&id);
        let pending = Pending { id, started, kind };
        let gone = {
            let mut state = self.state();
            match &state.server_gone {
                None => {
                    state.pending.insert(key, pending);
                    return Ok(());
                }
                Some(gone) => gone.clone(),
            }
        };
        self.answer_unanswered(&pending, &gone.message, &gone.data);
        Err(std::io::ErrorKind::BrokenPipe.into())
    }

    fn client_message_too_large(&self, over: &OversizedLine) {
        let limit = self.config.max_message_bytes;
        report(&format!(
            "refused a message of {} bytes from the client: the limit is {limit} bytes (--max-message-bytes)",
            over.length
        ));
        if let Some(id) = sniff_id(&over.head, &over.tail) {
            let text = format!(
                "message of {} bytes refused by the proxy: the limit is {limit} bytes",
                over.length
            );
            let reply = error_response(&id, ErrorCode::INVALID_REQUEST, &text, None);
            self.client.send(&reply);
        }
    }

    /// A `tools/call` from the client: check it, then forward it or answer it.
    fn tools_call(&self, id: Value, line: &[u8]) -> std::io::Result<()> {
        let started = Instant::now();
        let call = match message::parse_call(trim_line(line)) {
            Ok(call) => call,
            Err(e) => {
                // Inspection passed, so it is JSON too deep to read: it cannot be checked.
                let message = format!("the tools/call request cannot be checked: {e}");
                report(&message);
                let reply = error_response(&id, ErrorCode::INVALID_PARAMS, &message, None);
                self.client.send(&reply);
                let tool = message::tool_name(trim_line(line)).unwrap_or_default();
                self.refused(&id, &tool, Verdict::Rejected, message, started, None);
                return Ok(());
            }
        };
        // Without a name there is nothing to check against: the server answers.
        let Some(tool) = call.name.as_deref() else {
            self.track(id, PendingKind::Other, started)?;
            return self.server.send_line(line);
        };
        let empty = Value::Object(Map::new());
        // MCP treats absent arguments (and `null`, which some clients send) as none.
        let arguments = match &call.arguments {
            None | Some(Value::Null) => &empty,
            Some(arguments) => arguments,
        };
        if !arguments.is_object() {
            let message = format!(
                "arguments of tool '{tool}' must be a JSON object (got {})",
                toolschema::json::kind_in_words(arguments)
            );
            let reply = error_response(&id, ErrorCode::INVALID_PARAMS, &message, None);
            self.client.send(&reply);
            self.refused(
                &id,
                tool,
                Verdict::Rejected,
                message,
                started,
                Some(arguments),
            );
            return Ok(());
        }
        if let Some(reason) = self.config.policy.refusal(tool) {
            let reply = error_response(&id, ErrorCode::INVALID_PARAMS, &reason, None);
            self.client.send(&reply);
            self.refused(&id, tool, Verdict::Denied, reason, started, Some(arguments));
            return Ok(());
        }
        let kind = || PendingKind::CallTool {
            tool: tool.to_string(),
            arguments: self.audit.is_some().then(|| arguments.clone()),
        };
        self.learn_listed_pages();
        // Tools may have changed (or were never listed in full): check against the current list.
        if !self.state().registry.is_current() {
            // The call counts as in flight meanwhile, so a server dying during the listing still
            // gets it answered (with the error every request in flight gets).
            let key = IdKey::of(&id);
            self.track(id.clone(), kind(), started)?;
            self.list_tools_itself(&key)?;
            if self.state().pending.remove(&key).is_none() {
                // Already answered: the server is gone.
                return Err(std::io::ErrorKind::BrokenPipe.into());
            }
        }
        let verdict = self.check_arguments(tool, arguments);
        match verdict {
            ArgumentVerdict::Forward => {
                self.track(id, kind(), started)?;
                self.server.send_line(line)
            }
            ArgumentVerdict::Invalid(errors) => {
                let result = tool_error_result(errors.to_string());
                self.client.send(&result_response(&id, result));
                let messages = errors.messages().into_iter().map(String::from).collect();
                self.audit(AuditRecord {
                    id: &id,
                    tool,
                    verdict: Verdict::Rejected,
                    messages,
                    duration: started.elapsed(),
                    is_error: Some(true),
                    output_check: None,
                    error: None,
                    arguments: Some(arguments),
                });
                Ok(())
            }
            ArgumentVerdict::Unlisted => {
                let known: Vec<String> = self.state().registry.names().map(String::from).collect();
                let mut reason = format!("unknown tool '{tool}'");
                if let Some(suggestion) =
                    toolschema::suggest::closest(tool, known.iter().map(String::as_str))
                {
                    reason.push_str(&format!(" (did you mean '{suggestion}'?)"));
                }
                let reply = error_response(&id, ErrorCode::INVALID_PARAMS, &reason, None);
                self.client.send(&reply);
                self.refused(&id, tool, Verdict::Denied, reason, started, Some(arguments));
                Ok(())
            }
        }
    }

    fn refused(
        &self,
        id: &Value,
        tool: &str,
        verdict: Verdict,
        message: String,
        started: Instant,
        arguments: Option<&Value>,
    ) {
        self.audit(AuditRecord {
            id,
            tool,
            verdict,
            messages: vec![message],
            duration: started.elapsed(),
            is_error: None,
            output_check: None,
            error: None,
            arguments,
        });
    }

    fn check_arguments(&self, tool: &str, arguments: &Value) -> ArgumentVerdict {
        let mut state = self.state();
        let (lookup, warning) = state.registry.lookup(tool);
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

    /// List the server's tools (every page) with the proxy's own requests, whose responses are
    /// not passed to the client. `call` is the id of the call waiting for the list.
    ///
    /// If the listing fails, the registry is taken as current anyway, so calls do not each try
    /// again; the next `list_changed` (or client listing) refreshes it.
    fn list_tools_itself(&self, call: &IdKey) -> std::io::Result<()> {
        let changes_at_start = self.state().registry.changes();
        let listed = self.list_pages(call);
        if !matches!(listed, Ok(true)) {
            self.state().registry.settle(changes_at_start);
        }
        listed.map(|_| ())
    }

    /// Whether every page was listed.
    fn list_pages(&self, call: &IdKey) -> std::io::Result<bool> {
        let mut cursor: Option<String> = None;
        let mut seen = HashSet::new();
        loop {
            let (id, answer, changes_at_request) = {
                let mut state = self.state();
                let id = state.own_id(call);
                let (sender, answer) = sync_channel(1);
                state.own.insert(IdKey::of(&id), sender);
                (id, answer, state.registry.changes())
            };
            let mut request = json!({"jsonrpc": "2.0", "id": id, "method": "tools/list"});
            if let Some(cursor) = &cursor {
                request["params"] = json!({ "cursor": cursor });
            }
            let mut line = to_line(&request);
            line.pop();
            self.server.send_line(&line)?;
            let answer = match answer.recv_timeout(self.config.listing_timeout) {
                Ok(line) => own_result(&line),
                // The server is gone: the proxy is ending.
                Err(RecvTimeoutError::Disconnected) => return Ok(false),
                Err(RecvTimeoutError::Timeout) => {
                    self.state().own.remove(&IdKey::of(&id));
                    report(&format!(
                        "the server did not answer the proxy's tools/list within {}s; calls to tools not listed so far are forwarded unchecked",
                        self.config.listing_timeout.as_secs_f64()
                    ));
                    return Ok(false);
                }
            };
            let result = match answer {
                Ok(result) => result,
                Err(error) => {
                    report(&format!(
                        "the server answered the proxy's tools/list with an error: {error}; calls to tools not listed so far are forwarded unchecked"
                    ));
                    return Ok(false);
                }
            };
            // Pages the client listed before these come first.
            self.learn_listed_pages();
            let next = next_cursor(&result);
            let tools = tools_of(&result);
            let warnings = self.state().registry.learn_page(
                tools,
                Page {
                    first: cursor.is_none(),
                    last: next.is_none(),
                    changes_at_request,
                },
            );
            warnings.iter().for_each(|w| report(w));
            match next {
                Some(next) if seen.insert(next.clone()) => cursor = Some(next),
                Some(next) => {
                    report(&format!(
                        "the server returned nextCursor {} twice to the proxy's tools/list; stopped listing",
                        Value::String(next)
                    ));
                    return Ok(false);
                }
                None => return Ok(true),
            }
        }
    }

    // ----- server to client -----

    /// Read the server's messages and pass them to the client until the server closes its
    /// stdout.
    pub fn server_to_client<R: BufRead>(&self, mut reader: LineReader<R>) {
        loop {
            let line = match reader.next_blocking() {
                Ok(Some(Frame::Line(line))) => line,
                Ok(Some(Frame::Oversized(over))) => {
                    self.server_message_too_large(&over);
                    continue;
                }
                Ok(None) => return,
                Err(e) => {
                    report(&format!("cannot read from the server: {e}"));
                    return;
                }
            };
            match inspect(trim_line(&line)) {
                Err(malformed) => report(&format!(
                    "skipped a message from the server: {malformed}: {}",
                    excerpt(&line)
                )),
                Ok(Kind::Response { id }) => self.response(&id, &line),
                Ok(Kind::Notification { method }) => {
                    if method == "notifications/tools/list_changed" {
                        self.state().registry.tools_changed();
                    }
                    self.client.send_line(&line);
                }
                Ok(_) => self.client.send_line(&line),
            }
        }
    }

    fn response(&self, id: &Value, line: &[u8]) {
        let key = IdKey::of(id);
        let (own, pending) = {
            let mut state = self.state();
            match state.own.remove(&key) {
                Some(own) => (Some(own), None),
                None => (None, state.pending.remove(&key)),
            }
        };
        if let Some(own) = own {
            let _ = own.try_send(line.to_vec());
            return;
        }
        match pending {
            Some(Pending {
                kind:
                    PendingKind::ListTools {
                        first,
                        changes_at_request,
                    },
                ..
            }) => self.tools_list_result(line, first, changes_at_request),
            Some(Pending {
                id,
                started,
                kind: PendingKind::CallTool { tool, arguments },
            }) => self.tools_call_result(line, &id, &tool, started, arguments.as_ref()),
            Some(_) | None => self.client.send_line(line),
        }
    }

    /// A `tools/list` result for the client: drop the tools the policy refuses, and leave the page
    /// to be learned.
    fn tools_list_result(&self, line: &[u8], first: bool, changes_at_request: u64) {
        // Queued before the client sees the page, so its next call is checked against it.
        self.state().unlearned.push(UnlearnedPage {
            line: line.to_vec(),
            first,
            changes_at_request,
        });
        match self.without_refused_tools(line) {
            Some(filtered) => self.client.send(&filtered),
            None => self.client.send_line(line),
        }
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
    fn learn_listed_pages(&self) {
        let pages = std::mem::take(&mut self.state().unlearned);
        for page in pages {
            let Ok(message) = message::parse(trim_line(&page.line)) else {
                continue;
            };
            let Some(result) = message.get("result") else {
                continue;
            };
            let warnings = self.state().registry.learn_page(
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
        &self,
        line: &[u8],
        id: &Value,
        tool: &str,
        started: Instant,
        arguments: Option<&Value>,
    ) {
        let mode = self.config.output_check;
        let nothing_to_check =
            mode == OutputCheck::Off || !self.state().registry.has_output_schema(tool);
        if nothing_to_check && self.audit.is_none() {
            return self.client.send_line(line);
        }
        let mut message = match message::parse(trim_line(line)) {
            Ok(message) => message,
            Err(e) => {
                report(&format!(
                    "the result of tool '{tool}' cannot be checked: {e}"
                ));
                self.audit(AuditRecord {
                    id,
                    tool,
                    verdict: Verdict::Forwarded,
                    messages: vec![format!("the result cannot be checked: {e}")],
                    duration: started.elapsed(),
                    is_error: None,
                    output_check: Some(OutputVerdict::Skipped),
                    error: None,
                    arguments,
                });
                self.client.send_line(line);
                return;
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
            let state = self.state();
            match state.registry.compiled(tool) {
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
        // Audited before the client sees the result: its next call may be audited by the other
        // thread, and the log keeps the order of the calls.
        self.audit(AuditRecord {
            id,
            tool,
            verdict: Verdict::Forwarded,
            messages,
            duration: started.elapsed(),
            is_error,
            output_check: Some(verdict),
            error,
            arguments,
        });
        match replaced {
            Some(message) => self.client.send(&message),
            None => self.client.send_line(line),
        }
    }

    fn server_message_too_large(&self, over: &OversizedLine) {
        let limit = self.config.max_message_bytes;
        report(&format!(
            "refused a message of {} bytes from the server: the limit is {limit} bytes (--max-message-bytes)",
            over.length
        ));
        let Some(id) = sniff_id(&over.head, &over.tail) else {
            return;
        };
        let key = IdKey::of(&id);
        let pending = {
            let mut state = self.state();
            state.own.remove(&key);
            state.pending.remove(&key)
        };
        if let Some(pending) = pending {
            let text = format!(
                "the server's response ({} bytes) was refused by the proxy: the limit is {limit} bytes",
                over.length
            );
            self.audit_unanswered(&pending, &text);
            self.client.send(&error_response(
                &pending.id,
                ErrorCode::INTERNAL_ERROR,
                &text,
                None,
            ));
        }
    }

    /// Answer every client request still in flight with an error: the server is gone.
    /// Requests the client sends from now on get the same answer.
    pub fn fail_pending(&self, message: &str, data: Value) {
        let pending: Vec<Pending> = {
            let mut state = self.state();
            state.server_gone = Some(ServerGone {
                message: message.to_string(),
                data: data.clone(),
            });
            state.own.clear();
            let mut pending: Vec<Pending> = state.pending.drain().map(|(_, p)| p).collect();
            pending.sort_by_key(|p| p.started);
            pending
        };
        for request in &pending {
            self.answer_unanswered(request, message, &data);
        }
    }

    /// Answer a request the server will never answer.
    fn answer_unanswered(&self, request: &Pending, message: &str, data: &Value) {
        self.audit_unanswered(request, message);
        let reply = error_response(&request.id, ErrorCode(-32000), message, Some(data.clone()));
        self.client.send(&reply);
    }

    fn audit_unanswered(&self, pending: &Pending, error: &str) {
        if let PendingKind::CallTool { tool, arguments } = &pending.kind {
            self.audit(AuditRecord {
                id: &pending.id,
                tool,
                verdict: Verdict::Forwarded,
                messages: Vec::new(),
                duration: pending.started.elapsed(),
                is_error: None,
                output_check: Some(OutputVerdict::Skipped),
                error: Some(error.to_string()),
                arguments: arguments.as_ref(),
            });
        }
    }
}

enum ArgumentVerdict {
    Forward,
    Invalid(toolschema::ValidationErrors),
    Unlisted,
}

impl State {
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
}

/// The result of a response to the proxy's own request, or what went wrong.
fn own_result(line: &[u8]) -> Result<Value, String> {
    let mut message = message::parse(trim_line(line)).map_err(|e| e.to_string())?;
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

/// The start of a line, for a report.
fn excerpt(line: &[u8]) -> String {
    let text = String::from_utf8_lossy(trim_line(line));
    match text.char_indices().nth(EXCERPT_CHARS) {
        Some((cut, _)) => format!("{}...", &text[..cut]),
        None => text.into_owned(),
    }
}

/// How long the proxy waits for the server to answer its own `tools/list`.
pub const DEFAULT_LISTING_TIMEOUT: Duration = Duration::from_secs(30);
