//! `tools/call`: admitting or refusing a call, and checking its result.
//!
//! Every call is either checked against its tool's `inputSchema` or refused: a call whose
//! tool's schema the proxy could not learn (no listing, a schema that does not compile, a `$ref`
//! the call reaches that the proxy never fetches) gets a tool error that says why, unless
//! `--on-unchecked forward` or `--input-check warn` let it through with a warning.

use super::{excerpt, input_of, report, Action, Gate, Pending, PendingKind, Route, Verdict};
use crate::audit::{AuditRecord, InputVerdict, OutputVerdict};
use crate::message::ErrorCode;
use crate::message::{self, error_line, result_line, IdKey, Message, RequestId};
use crate::registry::{Lookup, OutputSchema};
use crate::{InputCheck, OnUnchecked, OutputCheck, UnknownArguments, Unlisted};
use serde_json::{Map, Value};
use std::time::Instant;

/// What the audit record of a forwarded call carries until its result comes back.
pub(super) struct CallRecord {
    /// The tool called.
    pub(super) tool: String,
    /// The arguments, kept only when the audit log records them.
    pub(super) arguments: Option<Value>,
    /// What the input check found.
    pub(super) input: InputVerdict,
    /// What it reported (with `--input-check warn` or `--unknown-arguments warn`).
    pub(super) messages: Vec<String>,
    /// Whether it reached the server.
    pub(super) forwarded: bool,
    /// The JSON Schema keywords the arguments failed (forwarded with `--input-check warn`).
    pub(super) keywords: Vec<String>,
}

/// A `tools/call` whose arguments are read and whose tool is allowed, about to be checked.
pub(super) struct AdmittedCall {
    id: RequestId,
    tool: String,
    arguments: Value,
    /// Whether the arguments' text holds a lone surrogate escape (read as U+FFFD).
    lone_surrogates: bool,
    /// Where the arguments are in `text`.
    arguments_at: Option<std::ops::Range<usize>>,
    text: String,
    started: Instant,
    route: Route,
    /// What the audit line of the call says besides the checks (a pin it does not match).
    notes: Vec<String>,
    /// The JSON Schema keywords its arguments failed, once checked.
    keywords: Vec<String>,
}

impl AdmittedCall {
    /// The size of the call as sent.
    pub(super) fn text_len(&self) -> usize {
        self.text.len()
    }

    /// The key of the call's id.
    pub(super) fn key(&self) -> &IdKey {
        self.id.key()
    }

    /// The call as a request that never reached the server.
    pub(super) fn into_pending(self, audit_arguments: bool) -> Pending {
        Pending {
            id: self.id,
            started: self.started,
            kind: PendingKind::CallTool(CallRecord {
                tool: self.tool,
                arguments: audit_arguments.then_some(self.arguments),
                input: InputVerdict::Unchecked,
                messages: Vec::new(),
                forwarded: false,
                keywords: Vec::new(),
            }),
            route: self.route,
            order: 0,
        }
    }
}

/// What waits for the proxy's own listing.
pub(super) enum Waiting {
    /// A call (boxed: it is ten times the size of a batch's text).
    Call(Box<AdmittedCall>),
    /// A batch holding calls (read again once the listing ends).
    Batch(String),
}

impl Waiting {
    /// The size of what waits, as sent.
    pub(super) fn text_len(&self) -> usize {
        match self {
            Waiting::Call(call) => call.text_len(),
            Waiting::Batch(text) => text.len(),
        }
    }

    /// Whether this is a call with id `key`.
    pub(super) fn has_id(&self, key: &IdKey) -> bool {
        matches!(self, Waiting::Call(call) if call.key() == key)
    }
}

/// How the proxy answers a call it refuses.
enum Answer {
    /// A tool error the model can read (`isError: true`).
    ToolError(String),
    /// A JSON-RPC error.
    Error(ErrorCode, String),
}

/// What the registry says of a call's arguments.
enum Decision {
    /// Checked: the schema's errors, and the undeclared arguments (when they are looked for).
    Checked {
        errors: Vec<String>,
        undeclared: Vec<String>,
        /// The keywords behind `errors`.
        keywords: Vec<String>,
    },
    /// It cannot be checked: why.
    Unchecked(String),
    /// Its text holds a lone surrogate escape that the schema may judge otherwise than the
    /// U+FFFD checked here: why.
    LoneSurrogates(String),
    /// The tool's schema cannot be learned; `first_time` says whether that was just found.
    Unusable { reason: String, first_time: bool },
    /// The server has not listed the tool.
    Unlisted,
}

impl Gate {
    /// A `tools/call` from the client: read it, then admit it or refuse it.
    pub(super) fn tools_call(
        &mut self,
        text: String,
        message: Message,
        route: Route,
        now: Instant,
        out: &mut Vec<Action>,
    ) {
        let crate::message::Kind::Request { id, .. } = &message.kind else {
            return;
        };
        let id = id.clone();
        // A case variant of its name or arguments was refused before (`client_one`).
        let read = message::tool_call(&text, &message);
        // Without a name there is nothing to check against, and a server may still make one
        // of what it got (JavaScript reads `["delete"]` as "delete"): refused, not forwarded.
        let Some(tool) = read.name else {
            let why = "a tools/call request needs params, an object with the tool's name as a string in 'name'; it was not forwarded";
            report(&format!(
                "refused a tools/call without a tool name: {}",
                excerpt(&text)
            ));
            let reply = error_line(Some(&id), ErrorCode::INVALID_PARAMS, why, None);
            return self.reply(route, reply, out);
        };
        let mut call = AdmittedCall {
            id,
            tool,
            arguments: Value::Null,
            lone_surrogates: read.lone_surrogates,
            arguments_at: read.arguments_at.clone(),
            text,
            started: now,
            route,
            keywords: Vec::new(),
            notes: Vec::new(),
        };
        // MCP treats absent arguments (and `null`, which some clients send) as none.
        call.arguments = match read.arguments {
            None | Some(Ok(Value::Null)) => Value::Object(Map::new()),
            Some(Ok(arguments)) => arguments,
            Some(Err(e)) => {
                let reason = format!("the tools/call request cannot be checked: {e}");
                report(&reason);
                let answer = Answer::Error(ErrorCode::INVALID_PARAMS, reason);
                return self.refuse(call, answer, Verdict::Rejected, None, out);
            }
        };
        if !call.arguments.is_object() {
            let reason = not_an_object(&call.tool, &call.arguments);
            let answer = Answer::Error(ErrorCode::INVALID_PARAMS, reason);
            return self.refuse(call, answer, Verdict::Rejected, None, out);
        }
        if let Some(reason) = self.config.policy.refusal(&call.tool) {
            let answer = Answer::Error(ErrorCode::INVALID_PARAMS, reason);
            return self.refuse(call, answer, Verdict::Denied, None, out);
        }
        self.admit(call, now, out);
    }

    /// Check a call against the tools as known now (listing them first if need be), and
    /// forward it or answer it.
    pub(super) fn admit(&mut self, call: AdmittedCall, now: Instant, out: &mut Vec<Action>) {
        if let Some(gone) = self.server_gone.clone() {
            // Answered with the error every request gets once the server is gone, and audited
            // as what it is: never sent.
            let pending = call.into_pending(self.config.audit_arguments);
            let reply = self.unanswerable(&pending, &gone.message, &gone.data, out);
            return self.reply(pending.route, reply, out);
        }
        if self.config.checks_no_input() {
            return self.forward(call, InputVerdict::Off, Vec::new(), out);
        }
        self.learn_listed_pages();
        if !self.registry.is_current() {
            if call.route != Route::Direct {
                // A batch waits as a whole before it is read; this one was read meanwhile.
                let reason = "the server's tools changed while the batch was read".to_string();
                return self.unchecked(call, reason, out);
            }
            return self.wait_for_listing(call, now, out);
        }
        // Behind a front of many servers, the tool's server may turn its check off (known
        // once the listing is).
        if self.input_check_for(&call.tool) == InputCheck::Off {
            return self.forward(call, InputVerdict::Off, Vec::new(), out);
        }
        let mut call = call;
        if let Some((reason, refuse)) = self.pin_verdict(&call.tool) {
            if refuse {
                let answer = Answer::ToolError(reason);
                return self.refuse(call, answer, Verdict::PinRefused, None, out);
            }
            // --pin-mode warn: passed on, and its audit line says why it would have been refused.
            call.notes.push(reason);
        }
        let decision = self.decide(&call);
        match decision {
            Decision::Checked {
                errors,
                undeclared,
                keywords,
            } => {
                call.keywords = keywords;
                self.checked(call, errors, undeclared, out)
            }
            Decision::Unchecked(reason) => {
                let what = self.fate_of_unchecked(&call.tool);
                // Once per tool: each call may reach a different part.
                let key = format!("unchecked part of tool '{}'", call.tool);
                self.report_once_as(key, || {
                    format!(
                        "calls to tool '{}' that reach a part of its schema the proxy cannot check are {what}: {reason}",
                        call.tool
                    )
                });
                self.unchecked(call, reason, out)
            }
            Decision::LoneSurrogates(reason) => {
                let done = self.fate_of_unchecked(&call.tool);
                let key = format!("lone surrogates to tool '{}'", call.tool);
                self.report_once_as(key, || {
                    format!(
                        "calls to tool '{}' whose arguments hold a lone surrogate escape are {done}: its schema examines characters, which U+FFFD (what the proxy reads) and the surrogate (what the server gets) may not share",
                        call.tool
                    )
                });
                let what = "the proxy could not check these arguments";
                self.unchecked_because(call, reason, (what, what), out)
            }
            Decision::Unusable { reason, first_time } => {
                if first_time {
                    self.report_once(format!(
                        "the proxy could not learn the schema of tool '{}': {reason}; its calls are {}",
                        call.tool,
                        self.fate_of_unchecked(&call.tool)
                    ));
                }
                self.unchecked(call, reason, out)
            }
            Decision::Unlisted => self.unlisted(call, now, out),
        }
    }

    /// A call to a tool the proxy does not know. Until the proxy's own listing says the server
    /// does not list it, the call waits for one (the tools a client's listings taught may be
    /// short of the server's: a server may read a listing's request otherwise than the proxy).
    /// The proxy lists again only when a client's listing was learned since its last own one,
    /// so calls to names nothing lists never make it list over and over. Then the call is
    /// refused with a did-you-mean, or forwarded with `--unlisted forward` (or `--input-check
    /// warn`) and a warning.
    fn unlisted(&mut self, call: AdmittedCall, now: Instant, out: &mut Vec<Action>) {
        if !self.own_listing_holds {
            if call.route != Route::Direct {
                // A batch waits as a whole before it is read: the listing it waited for failed,
                // or could not start, or a client's listing was learned meanwhile.
                let reason = format!(
                    "tool '{}' is not among the tools the proxy knows, and the proxy could not list them again for this batch",
                    call.tool
                );
                return self.unchecked(call, reason, out);
            }
            return self.wait_for_listing(call, now, out);
        }
        if let Some(flag) = forwards_unlisted(&self.config) {
            let why = unlisted_forwarded(&call.tool);
            let key = format!("unlisted tool '{}'", call.tool);
            self.report_once_as(key, || {
                format!(
                    "calls to tool '{}', which the server does not list, are forwarded unchecked ({flag})",
                    call.tool
                )
            });
            return self.forward(call, InputVerdict::Unlisted, vec![why], out);
        }
        let reason = unknown_tool(&call.tool, self.registry.names());
        let answer = Answer::Error(ErrorCode::INVALID_PARAMS, reason);
        self.refuse(call, answer, Verdict::Denied, None, out)
    }

    /// What the registry says of the call.
    fn decide(&mut self, call: &AdmittedCall) -> Decision {
        let look_for_undeclared = self.config.unknown_arguments != UnknownArguments::Allow;
        match self.registry.lookup(&call.tool) {
            Lookup::Compiled(compiled) if call.lone_surrogates => {
                match compiled.input().lone_surrogates_unchecked() {
                    Some(reason) => Decision::LoneSurrogates(reason),
                    None => Self::judged(compiled, call, look_for_undeclared),
                }
            }
            Lookup::Compiled(compiled) => Self::judged(compiled, call, look_for_undeclared),
            Lookup::Unusable { reason, first_time } => Decision::Unusable {
                reason: reason.to_string(),
                first_time,
            },
            Lookup::Unknown => Decision::Unlisted,
        }
    }

    /// What the schema says of the call's arguments.
    fn judged(
        compiled: &toolschema::CompiledTool,
        call: &AdmittedCall,
        look_for_undeclared: bool,
    ) -> Decision {
        // Numbers are judged as the text states them (`9007199254740993.0` is not 2^53).
        let text = call
            .arguments_at
            .as_ref()
            .and_then(|at| call.text.get(at.clone()));
        match judge(compiled, &call.arguments, text, look_for_undeclared) {
            Judged::Checked {
                errors,
                undeclared,
                keywords,
            } => Decision::Checked {
                errors,
                undeclared,
                keywords,
            },
            Judged::Unchecked(reason) => Decision::Unchecked(reason),
        }
    }

    /// A call checked against its schema: forward it, or refuse it.
    fn checked(
        &mut self,
        mut call: AdmittedCall,
        errors: Vec<String>,
        undeclared: Vec<String>,
        out: &mut Vec<Action>,
    ) {
        match settle(
            &self.config,
            self.input_check_for(&call.tool),
            &call.tool,
            errors,
            undeclared,
            &mut call.keywords,
        ) {
            Settled::Forward {
                input,
                messages,
                logged,
            } => {
                for line in &logged {
                    report(line);
                }
                self.forward(call, input, messages, out)
            }
            Settled::Refuse(errors) => {
                let answer = Answer::ToolError(errors.join("\n"));
                self.refuse(call, answer, Verdict::Rejected, Some(errors), out);
            }
        }
    }

    /// The input check of a call to `tool`: its server's, behind a front of many servers
    /// that sets one, else the front's.
    fn input_check_for(&self, tool: &str) -> InputCheck {
        self.config.input_check_of(self.registry.origin(tool))
    }

    /// Whether calls to `tool` the proxy cannot check are forwarded (with a warning each).
    fn lets_unchecked_through(&self, tool: &str) -> bool {
        lets_unchecked_through(&self.config, self.input_check_for(tool))
    }

    /// What becomes of calls to `tool` the proxy cannot check, in words.
    fn fate_of_unchecked(&self, tool: &str) -> &'static str {
        if self.lets_unchecked_through(tool) {
            "forwarded unchecked"
        } else {
            "refused"
        }
    }

    /// A call the proxy cannot check, because of `reason`: refused with a tool error that says
    /// why, or forwarded with a warning when the configuration lets it through.
    pub(super) fn unchecked(&mut self, call: AdmittedCall, reason: String, out: &mut Vec<Action>) {
        let what = ("the proxy could not learn its schema", UNLEARNED);
        self.unchecked_because(call, reason, what, out)
    }

    /// A call the proxy cannot check, because of `reason`, which `what` leads into (as said in a
    /// warning, and to the client): refused with a tool error, or forwarded with a warning when
    /// the configuration lets it through.
    fn unchecked_because(
        &mut self,
        call: AdmittedCall,
        reason: String,
        (warning, refusal): (&str, &str),
        out: &mut Vec<Action>,
    ) {
        if self.lets_unchecked_through(&call.tool) {
            report(&format!(
                "forwarded a call to tool '{}' unchecked: {warning}: {reason}",
                call.tool
            ));
            return self.forward(call, InputVerdict::Unchecked, vec![reason], out);
        }
        let answer = Answer::ToolError(format!("{refusal}: {reason}"));
        self.refuse(call, answer, Verdict::UncheckedRefused, None, out);
    }

    /// Send the call to the server.
    fn forward(
        &mut self,
        call: AdmittedCall,
        input: InputVerdict,
        mut messages: Vec<String>,
        out: &mut Vec<Action>,
    ) {
        messages.extend(call.notes);
        let record = CallRecord {
            tool: call.tool,
            arguments: self.config.audit_arguments.then_some(call.arguments),
            input,
            messages,
            forwarded: true,
            keywords: call.keywords,
        };
        let kind = PendingKind::CallTool(record);
        if self.track(call.id, kind, call.route, call.started, out) {
            self.send_on(call.route, call.text.into_bytes(), out);
        }
    }

    /// Answer a call the proxy refuses, and audit it with `messages` (by default, the answer's
    /// text).
    fn refuse(
        &mut self,
        call: AdmittedCall,
        answer: Answer,
        verdict: Verdict,
        messages: Option<Vec<String>>,
        out: &mut Vec<Action>,
    ) {
        let (reply, is_error, error_code, text) = match answer {
            Answer::ToolError(text) => (
                result_line(&call.id, &self.tool_error(text.clone())),
                Some(true),
                None,
                text,
            ),
            Answer::Error(code, text) => (
                error_line(Some(&call.id), code, &text, None),
                None,
                Some(i64::from(code.0)),
                text,
            ),
        };
        let record = AuditRecord {
            id: call.id,
            tool: call.tool,
            verdict,
            input_check: input_of(verdict),
            messages: messages.unwrap_or_else(|| vec![text]),
            duration: call.started.elapsed(),
            is_error,
            output_check: None,
            error: None,
            error_code,
            keywords: call.keywords,
            arguments: self.config.audit_arguments.then_some(call.arguments),
            origin: None,
        };
        // Audited before the client sees the answer: the log keeps the order of the calls.
        self.audit(record, out);
        self.reply(call.route, reply, out);
    }

    /// A `notifications/cancelled` for a call waiting for the proxy's own listing: the call is
    /// dropped (it never reached the server, and a cancelled request gets no answer), and so is
    /// the notification. `false` when it cancels nothing the gate holds.
    pub(super) fn cancel_waiting(
        &mut self,
        text: &str,
        message: &Message,
        now: Instant,
        out: &mut Vec<Action>,
    ) -> bool {
        let Some(cancelled) = cancelled_request(text, message) else {
            return false;
        };
        let Some(at) = self.waiting.iter().position(|w| w.has_id(cancelled.key())) else {
            return false;
        };
        let Some(super::Waiting::Call(call)) = self.waiting.remove(at) else {
            return false;
        };
        let record = waiting_cancelled(*call, self.config.audit_arguments, now);
        self.audit(record, out);
        true
    }

    /// A `notifications/cancelled` for a request forwarded to the server: the request is
    /// closed now (a call is audited as cancelled), and its answer, should the server send one
    /// anyway, is dropped (MCP: the sender of a cancellation ignores a response that arrives
    /// after it). The notification goes on to the server. An `initialize` is never cancelled
    /// (MCP): it stays open.
    pub(super) fn cancel_forwarded(
        &mut self,
        text: &str,
        message: &Message,
        now: Instant,
        out: &mut Vec<Action>,
    ) {
        let Some(cancelled) = cancelled_request(text, message) else {
            return;
        };
        if let Some(pending) = self.close_cancelled(cancelled.key(), now, out) {
            if let Route::Batch(batch) = pending.route {
                // One answer fewer to wait for; the batch is answered without it.
                if let Some(open) = self.batches.get_mut(&batch) {
                    open.outstanding = open.outstanding.saturating_sub(1);
                }
                self.complete_batch(batch, out);
            }
        }
    }

    /// The proxy gives up on request `id` of the client's (its client went away from it, or
    /// it ran out of time): the server is told with a `notifications/cancelled` saying
    /// `reason`, the request is closed as the client's own cancellation closes it, and the
    /// client is answered with an error saying `reason` (a client that went away finds no
    /// stream for it). Nothing happens to a request answered already.
    pub fn give_up(&mut self, id: &RequestId, reason: &str, now: Instant, out: &mut Vec<Action>) {
        let key = id.key();
        if let Some(at) = self.waiting.iter().position(|w| w.has_id(key)) {
            // It never reached the server: nothing to tell it.
            if let Some(super::Waiting::Call(call)) = self.waiting.remove(at) {
                let route = call.route;
                let id = call.id.clone();
                let record = waiting_cancelled(*call, self.config.audit_arguments, now);
                self.audit(record, out);
                let reply = error_line(Some(&id), ErrorCode(-32000), reason, None);
                self.reply(route, reply, out);
            }
            return;
        }
        if !self.pending.contains_key(key) {
            return;
        }
        let notification = serde_json::json!({
            "jsonrpc": "2.0",
            "method": "notifications/cancelled",
            "params": {"requestId": id.to_value(), "reason": reason},
        });
        out.push(Action::ToServer(
            serde_json::to_vec(&notification).unwrap_or_default(),
        ));
        if let Some(pending) = self.close_cancelled(key, now, out) {
            let reply = error_line(Some(&pending.id), ErrorCode(-32000), reason, None);
            self.answered(pending.route, reply, out);
        }
    }

    /// Close request `key`, cancelled while the server has it: out of the requests in flight
    /// (a call audited as cancelled), its id remembered so that a late answer is dropped.
    /// `None` when no such request is in flight, or it is an `initialize`.
    fn close_cancelled(
        &mut self,
        key: &IdKey,
        now: Instant,
        out: &mut Vec<Action>,
    ) -> Option<Pending> {
        if matches!(self.pending.get(key)?.kind, PendingKind::Initialize) {
            return None;
        }
        let pending = self.pending.remove(key)?;
        if let PendingKind::CallTool(call) = &pending.kind {
            let record = AuditRecord {
                id: pending.id.clone(),
                tool: call.tool.clone(),
                verdict: Verdict::Cancelled,
                input_check: Some(call.input),
                messages: call.messages.clone(),
                duration: now.saturating_duration_since(pending.started),
                is_error: None,
                output_check: None,
                error: None,
                error_code: None,
                keywords: call.keywords.clone(),
                arguments: call.arguments.clone(),
                origin: None,
            };
            self.audit(record, out);
        }
        self.remember_cancelled(pending.id.clone());
        Some(pending)
    }

    /// A `notifications/cancelled` from the client naming a request the proxy sent itself (its
    /// own `tools/list`): the client never sent that request and may not cancel it (a server
    /// that honours the cancellation would leave the proxy without the listing it checks
    /// calls against). Dropped and reported; `false` when it names no such request.
    pub(super) fn drop_cancel_of_own(&mut self, text: &str, message: &Message) -> bool {
        let Some(cancelled) = cancelled_request(text, message) else {
            return false;
        };
        if !self.is_own_id(cancelled.key()) {
            return false;
        }
        report(&format!(
            "dropped the client's notifications/cancelled for {cancelled}, a request of the proxy's own"
        ));
        true
    }

    /// A `tools/call` result for the client: check its structured content, audit it. Returns
    /// the line the client gets.
    pub(super) fn tools_call_result(
        &mut self,
        text: String,
        message: &Message,
        id: &RequestId,
        started: Instant,
        record: CallRecord,
        out: &mut Vec<Action>,
    ) -> Vec<u8> {
        let mode = self
            .config
            .output_check_of(self.registry.origin(&record.tool));
        if mode != OutputCheck::Off {
            // A call forwarded without an input check has not compiled its tool yet.
            let _ = self.registry.lookup(&record.tool);
        }
        let has_schema = self.registry.has_output_schema(&record.tool);
        if (mode == OutputCheck::Off || !has_schema) && !self.config.audit {
            return text.into_bytes();
        }
        let CallRecord {
            tool,
            arguments,
            input,
            messages: mut all_messages,
            keywords,
            ..
        } = record;
        let error_code = super::error_code(&text, message);
        let error = message.error.as_ref().map(|at| {
            message::parse_at(&text, at.clone())
                .ok()
                .and_then(|e| e.get("message").and_then(Value::as_str).map(String::from))
                .unwrap_or_else(|| text[at.clone()].to_string())
        });
        let result = match &message.result {
            Some(at) => match message::parse_at(&text, at.clone()) {
                Ok(result) => Some(result),
                Err(e) => {
                    report(&format!(
                        "the result of tool '{tool}' cannot be checked: {e}"
                    ));
                    all_messages.push(format!("the result cannot be checked: {e}"));
                    let entry = AuditRecord {
                        id: id.clone(),
                        tool,
                        verdict: Verdict::Forwarded,
                        input_check: Some(input),
                        messages: all_messages,
                        duration: started.elapsed(),
                        is_error: None,
                        output_check: Some(OutputVerdict::Skipped),
                        error,
                        error_code,
                        keywords,
                        arguments,
                        origin: None,
                    };
                    self.audit(entry, out);
                    return text.into_bytes();
                }
            },
            None => None,
        };
        let is_error = result
            .as_ref()
            .map(|r| r.get("isError").and_then(Value::as_bool).unwrap_or(false));
        // A member a client may read otherwise than the proxy checks it (`StructuredContent`
        // beside `structuredContent`, `IsError` beside `isError`, to a client matching names
        // without regard to case; either given twice): the check would not be of what it reads.
        let misread = message
            .result
            .as_ref()
            .filter(|_| has_schema && mode != OutputCheck::Off)
            .and_then(|at| toolschema::json::object_members(&text, at.clone()).ok()?)
            .and_then(|members| {
                message::misread_member(&members, &["structuredContent", "isError"])
            });
        let mut messages = Vec::new();
        let verdict = if let Some((variant, meant)) = misread {
            messages = vec![format!(
                "the result holds {}",
                message::misread_in_words(&variant, meant, "client")
            )];
            OutputVerdict::Unchecked
        } else if error.is_some() || is_error == Some(true) {
            OutputVerdict::Skipped
        } else if mode == OutputCheck::Off {
            OutputVerdict::Off
        } else {
            let structured = result.as_ref().and_then(|r| r.get("structuredContent"));
            match self.registry.output_schema(&tool) {
                OutputSchema::Compiled(compiled) => {
                    // The structured content's own text: its numbers are judged as it states
                    // them, and a lone surrogate escape in it is seen.
                    let structured_text = message
                        .result
                        .as_ref()
                        .and_then(|at| toolschema::json::object_members(&text, at.clone()).ok()?)
                        .and_then(|members| message::member(&members, "structuredContent"))
                        .and_then(|at| text.get(at));
                    let verdict = match structured_text {
                        Some(structured_text) => {
                            compiled.validate_output_text(structured, false, structured_text)
                        }
                        None => compiled.validate_output(structured, false),
                    };
                    match verdict {
                        Ok(()) => OutputVerdict::Passed,
                        // Neither a match nor a mismatch: a number or a lone surrogate the
                        // schema cannot judge.
                        Err(errors) if errors.is_unchecked() => {
                            messages = errors.messages().into_iter().map(String::from).collect();
                            OutputVerdict::Unchecked
                        }
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
                OutputSchema::Unusable(problem) => {
                    messages = vec![format!("the proxy could not learn its {problem}")];
                    OutputVerdict::Unchecked
                }
                OutputSchema::None => OutputVerdict::NoSchema,
            }
        };
        let replacement = match verdict {
            OutputVerdict::Failed => {
                report(&format!(
                    "tool '{tool}' returned a result that does not match its outputSchema: {}",
                    messages.join("; ")
                ));
                None
            }
            OutputVerdict::Unchecked if mode == OutputCheck::Enforce => Some(format!(
                "the result of tool '{tool}' could not be checked and was withheld: {}",
                messages.join("\n")
            )),
            OutputVerdict::Unchecked => {
                self.report_once(format!(
                    "the results of tool '{tool}' are not checked: {}",
                    messages.join("; ")
                ));
                None
            }
            OutputVerdict::Enforced => Some(format!(
                "the result of tool '{tool}' did not match its outputSchema and was withheld:\n{}",
                messages.join("\n")
            )),
            _ => None,
        };
        all_messages.extend(messages);
        let entry = AuditRecord {
            id: id.clone(),
            tool,
            verdict: Verdict::Forwarded,
            input_check: Some(input),
            messages: all_messages,
            duration: started.elapsed(),
            is_error: if replacement.is_some() {
                Some(true)
            } else {
                is_error
            },
            output_check: Some(verdict),
            error,
            error_code,
            keywords,
            arguments,
            origin: None,
        };
        // Audited before the client sees the result: the log keeps the order of the calls.
        self.audit(entry, out);
        match replacement {
            Some(text) => result_line(id, &self.tool_error(text)),
            None => text.into_bytes(),
        }
    }
}

/// The audit record of a call cancelled while it waited for the proxy's own listing.
fn waiting_cancelled(call: AdmittedCall, audit_arguments: bool, now: Instant) -> AuditRecord {
    AuditRecord {
        id: call.id,
        tool: call.tool,
        verdict: Verdict::Cancelled,
        input_check: None,
        messages: Vec::new(),
        duration: now.saturating_duration_since(call.started),
        is_error: None,
        output_check: None,
        error: None,
        error_code: None,
        keywords: Vec::new(),
        arguments: audit_arguments.then_some(call.arguments),
        origin: None,
    }
}

/// The `requestId` a `notifications/cancelled` names, if it names one.
fn cancelled_request(text: &str, message: &Message) -> Option<RequestId> {
    let params = message.params.as_ref()?;
    let members = toolschema::json::object_members(text, params.clone()).ok()??;
    let request = message::member(&members, "requestId")?;
    Some(RequestId::from_text(&text[request]))
}

/// The refusal of a call the proxy cannot check because it could not learn the tool's schema
/// (followed by why).
pub(super) const UNLEARNED: &str = "the proxy could not learn this tool's schema";

/// Why the arguments of a call to `tool` are refused when they are not an object.
pub(super) fn not_an_object(tool: &str, arguments: &Value) -> String {
    format!(
        "arguments of tool '{tool}' must be a JSON object (got {})",
        toolschema::json::kind_in_words(arguments)
    )
}

/// Why a call to `tool`, which the server does not list, is refused: with a did-you-mean
/// from `names`, the tools it lists.
pub(super) fn unknown_tool<'a>(tool: &str, names: impl IntoIterator<Item = &'a str>) -> String {
    let mut reason = format!("unknown tool '{tool}'");
    if let Some(suggestion) = toolschema::suggest::closest(tool, names) {
        reason.push_str(&format!(" (did you mean '{suggestion}'?)"));
    }
    reason
}

/// The flag that lets calls to unlisted tools through, if one does.
pub(super) fn forwards_unlisted(config: &super::GateConfig) -> Option<&'static str> {
    match (config.unlisted, config.input_check) {
        (Unlisted::Forward, _) => Some("--unlisted forward"),
        (Unlisted::Refuse, InputCheck::Warn) => Some("--input-check warn"),
        _ => None,
    }
}

/// What a call to unlisted `tool` let through says.
pub(super) fn unlisted_forwarded(tool: &str) -> String {
    format!("the server does not list tool '{tool}'; the call was forwarded unchecked")
}

/// Whether calls the proxy cannot check are forwarded (with a warning each), under the input
/// check `input_check` (the call's tool's: see [`super::GateConfig::input_check_of`]).
pub(super) fn lets_unchecked_through(config: &super::GateConfig, input_check: InputCheck) -> bool {
    config.on_unchecked == OnUnchecked::Forward || input_check == InputCheck::Warn
}

/// What `compiled`'s schema says of `arguments` (`text`: their JSON text, whose numbers are
/// judged as it states them), and of the arguments it does not declare when
/// `look_for_undeclared`.
pub(super) fn judge(
    compiled: &toolschema::CompiledTool,
    arguments: &Value,
    text: Option<&str>,
    look_for_undeclared: bool,
) -> Judged {
    let verdict = match text {
        Some(text) => compiled.validate_input_text(arguments, text),
        None => compiled.validate_input(arguments),
    };
    match verdict {
        Err(errors) if errors.is_unchecked() => {
            let message = errors.messages().join("; ");
            let reason = message
                .strip_prefix("arguments could not be checked: ")
                .unwrap_or(&message)
                .to_string();
            Judged::Unchecked(reason)
        }
        verdict => Judged::Checked {
            keywords: match &verdict {
                Err(errors) => errors.iter().map(|e| e.keyword.clone()).collect(),
                Ok(_) => Vec::new(),
            },
            errors: verdict
                .err()
                .map(|errors| {
                    errors
                        .messages()
                        .into_iter()
                        .map(String::from)
                        .collect::<Vec<_>>()
                })
                .unwrap_or_default()
                .into_iter()
                .chain(compiled.case_variant_arguments(arguments))
                .collect(),
            undeclared: look_for_undeclared
                .then(|| compiled.undeclared_arguments(arguments))
                .flatten()
                .map(|errors| errors.messages().into_iter().map(String::from).collect())
                .unwrap_or_default(),
        },
    }
}

/// What a schema says of a call's arguments.
pub(super) enum Judged {
    /// Checked: the schema's errors, and the undeclared arguments (when they are looked for).
    Checked {
        errors: Vec<String>,
        undeclared: Vec<String>,
        /// The keywords behind `errors`.
        keywords: Vec<String>,
    },
    /// They cannot be checked: why.
    Unchecked(String),
}

/// What becomes of a call checked against its schema, as the settings say.
pub(super) enum Settled {
    /// It goes on, its input check `input`, with these `messages` (the warnings); `logged`
    /// is what the log says of it.
    Forward {
        input: InputVerdict,
        messages: Vec<String>,
        logged: Vec<String>,
    },
    /// It is refused, for these errors.
    Refuse(Vec<String>),
}

/// Settle a call to `tool` whose arguments broke their schema with `errors` and hold the
/// `undeclared` arguments, as `--unknown-arguments` and the input check `input_check` (the
/// tool's) say; the keywords failed gain `additionalProperties` when an undeclared argument is
/// refused.
pub(super) fn settle(
    config: &super::GateConfig,
    input_check: InputCheck,
    tool: &str,
    mut errors: Vec<String>,
    undeclared: Vec<String>,
    keywords: &mut Vec<String>,
) -> Settled {
    let mut warnings = Vec::new();
    let mut logged = Vec::new();
    match config.unknown_arguments {
        UnknownArguments::Reject if !undeclared.is_empty() => {
            // An argument the schema does not declare, refused as a closed schema would.
            keywords.push("additionalProperties".into());
            errors.extend(undeclared);
        }
        UnknownArguments::Warn if !undeclared.is_empty() => {
            logged.push(format!(
                "tool '{tool}' was called with arguments its inputSchema does not declare (forwarded, --unknown-arguments warn): {}",
                undeclared.join("; ")
            ));
            warnings = undeclared;
        }
        _ => {}
    }
    if errors.is_empty() {
        return Settled::Forward {
            input: InputVerdict::Passed,
            messages: warnings,
            logged,
        };
    }
    if input_check == InputCheck::Warn {
        logged.push(format!(
            "tool '{tool}' was called with arguments that break its inputSchema (forwarded, --input-check warn): {}",
            errors.join("; ")
        ));
        errors.extend(warnings);
        return Settled::Forward {
            input: InputVerdict::Failed,
            messages: errors,
            logged,
        };
    }
    Settled::Refuse(errors)
}
