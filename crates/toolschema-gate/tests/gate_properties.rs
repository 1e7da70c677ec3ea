//! The gate's promises as properties, over random sessions run in-process against a simulated
//! server: listings paged, failing, over the size limit, never answered, changing; calls valid,
//! invalid, to unknown tools, with ids of every kind, alone or in batches, cancelled; the server
//! dying. Whatever happens:
//!
//! - no call the server judges invalid (against the schema it holds when the call arrives)
//!   ever reaches it;
//! - every request the client sends gets exactly one answer, carrying its id exactly as sent
//!   (a request cancelled while it waited may get none), and no answer carries an id the client
//!   did not send.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use proptest::prelude::*;
use serde_json::{json, Value};
use std::collections::{HashMap, HashSet};
use std::time::{Duration, Instant};
use toolschema::json::{parse_with, DuplicateKeys};
use toolschema_gate::message::{self, Kind, Read, RequestId};
use toolschema_gate::{Action, Gate, GateConfig, UnknownArguments, Unlisted};

/// What the simulated server does with one tools/list request.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Listing {
    Ok,
    Error,
    Oversize,
    Hang,
}

/// How a request id is written.
#[derive(Debug, Clone, Copy)]
enum IdStyle {
    Integer,
    FloatInteger,
    Exponent,
    Negative,
    Beyond64Bits,
    Text,
    Escaped,
}

/// What the client (or the server, or time) does next.
#[derive(Debug, Clone)]
enum Step {
    /// Call tool `tool` (0, 1, 2: listed; 3: unknown) with valid or invalid arguments.
    Call {
        tool: usize,
        valid: bool,
        style: IdStyle,
    },
    /// Several calls and a ping in one batch.
    Batch(Vec<(usize, bool)>),
    /// The client lists the tools, following every page.
    List,
    Ping,
    /// The server changes its tools and says so.
    Change,
    /// The client cancels its latest request.
    Cancel,
    /// Time passes.
    Wait(u64),
    /// The server dies.
    Die,
}

/// The server, simulated: it answers at once, judges every call against its current schema,
/// and reads numeric ids as a JavaScript server does (as 64-bit floats).
struct Server {
    limit: u64,
    listings: Vec<Listing>,
    listed: usize,
    page_size: usize,
    alive: bool,
    invalid_calls: Vec<String>,
}

/// What the server writes: a message, or one over the proxy's size limit (with its id).
enum Out {
    Line(String),
    TooLarge(RequestId),
}

impl Server {
    fn tools(&self) -> Vec<Value> {
        vec![
            json!({"name": "count", "description": "cut \u{1F600}", "inputSchema": {"type": "object", "properties": {"n": {"type": "integer", "maximum": self.limit}}, "required": ["n"], "additionalProperties": false}}),
            json!({"name": "a b", "inputSchema": {"type": "object", "properties": {"s": {"type": "string", "minLength": 2}}, "required": ["s"]}}),
            json!({"name": "refs", "inputSchema": {"type": "object", "properties": {"k": {"enum": ["x", "y"]}}, "$defs": {"u": {"$ref": "https://example.com/u.json"}}}}),
        ]
    }

    /// Whether the server's own check passes `arguments` for `tool`.
    fn judge(&self, tool: &str, arguments: &Value) -> bool {
        let Some(object) = arguments.as_object() else {
            return false;
        };
        match tool {
            "count" => {
                object.keys().all(|k| k == "n")
                    && object
                        .get("n")
                        .and_then(Value::as_u64)
                        .is_some_and(|n| n <= self.limit)
            }
            "a b" => object
                .get("s")
                .and_then(Value::as_str)
                .is_some_and(|s| s.chars().count() >= 2),
            "refs" => object.get("k").is_none_or(|k| k == "x" || k == "y"),
            _ => true,
        }
    }

    /// The id as a JavaScript server writes it back.
    fn echo(raw: &str) -> String {
        if raw.starts_with(|c: char| c == '-' || c.is_ascii_digit()) {
            format!("{}", raw.parse::<f64>().unwrap())
        } else {
            raw.to_string()
        }
    }

    fn handle(&mut self, text: &str) -> Vec<Out> {
        match message::read(text).unwrap() {
            Read::One(m) => self.handle_one(text, &m).into_iter().collect(),
            Read::Batch(elements) => {
                let mut answers = Vec::new();
                let mut outs = Vec::new();
                for range in elements {
                    let element = &text[range];
                    let m = message::read_object(element, 0..element.len()).unwrap();
                    match self.handle_one(element, &m) {
                        Some(Out::Line(line)) => answers.push(line),
                        Some(other) => outs.push(other),
                        None => {}
                    }
                }
                if !answers.is_empty() {
                    outs.push(Out::Line(format!("[{}]", answers.join(","))));
                }
                outs
            }
        }
    }

    fn handle_one(&mut self, text: &str, m: &message::Message) -> Option<Out> {
        let Kind::Request { id, method } = &m.kind else {
            return None;
        };
        let echo = Self::echo(id.raw());
        let answer =
            |result: Value| format!(r#"{{"jsonrpc":"2.0","id":{echo},"result":{result}}}"#);
        match method.as_str() {
            "initialize" => Some(Out::Line(answer(json!({"protocolVersion": "2025-03-26"})))),
            "ping" => Some(Out::Line(answer(json!({})))),
            "tools/list" => {
                let behaviour = self
                    .listings
                    .get(self.listed)
                    .copied()
                    .unwrap_or(Listing::Ok);
                self.listed += 1;
                let params = m
                    .params
                    .clone()
                    .map(|at| message::parse_at(text, at).unwrap())
                    .unwrap_or(Value::Null);
                let start: usize = params["cursor"]
                    .as_str()
                    .and_then(|c| c.parse().ok())
                    .unwrap_or(0);
                let tools = self.tools();
                let page: Vec<Value> = tools
                    .iter()
                    .skip(start)
                    .take(self.page_size)
                    .cloned()
                    .collect();
                let mut result = json!({ "tools": page });
                if start + self.page_size < tools.len() {
                    result["nextCursor"] = json!((start + self.page_size).to_string());
                }
                match behaviour {
                    Listing::Ok => Some(Out::Line(answer(result))),
                    Listing::Error => Some(Out::Line(format!(
                        r#"{{"jsonrpc":"2.0","id":{echo},"error":{{"code":-32603,"message":"broken"}}}}"#
                    ))),
                    Listing::Oversize => Some(Out::TooLarge(RequestId::from_text(&echo))),
                    Listing::Hang => None,
                }
            }
            "tools/call" => {
                let call = message::tool_call(text, m);
                let name = call.name.unwrap_or_default();
                let arguments = match call.arguments {
                    Some(Ok(arguments)) => arguments,
                    _ => json!({}),
                };
                let known = self.tools().iter().any(|t| t["name"] == name);
                if !known {
                    return Some(Out::Line(format!(
                        r#"{{"jsonrpc":"2.0","id":{echo},"error":{{"code":-32602,"message":"Unknown tool"}}}}"#
                    )));
                }
                if !self.judge(&name, &arguments) {
                    self.invalid_calls.push(text.to_string());
                }
                Some(Out::Line(answer(json!({"content": []}))))
            }
            _ => Some(Out::Line(answer(json!({})))),
        }
    }
}

/// One session: the gate, the server, and what the client has seen.
struct Session {
    gate: Gate,
    server: Server,
    now: Instant,
    /// Every answer the client got, by the id's exact text.
    answers: HashMap<String, usize>,
    /// Answers whose id the client never sent.
    strangers: Vec<String>,
    sent: Vec<String>,
    cancelled: HashSet<String>,
    next_id: u64,
    /// The `nextCursor` of the last page the client got.
    last_cursor: Option<String>,
}

impl Session {
    fn run(&mut self, actions: Vec<Action>) {
        let mut queue: std::collections::VecDeque<Action> = actions.into();
        while let Some(action) = queue.pop_front() {
            match action {
                Action::ToServer(line) => {
                    if !self.server.alive {
                        continue;
                    }
                    let text = String::from_utf8(line).unwrap();
                    for out in self.server.handle(&text) {
                        let mut next = Vec::new();
                        match out {
                            Out::Line(line) => {
                                self.gate
                                    .server_message(line.into_bytes(), self.now, &mut next)
                            }
                            Out::TooLarge(id) => self.gate.server_message_too_large(
                                20_000_000,
                                Some(id),
                                self.now,
                                &mut next,
                            ),
                        }
                        queue.extend(next);
                    }
                }
                Action::ToClient(line) => self.received(&String::from_utf8(line).unwrap()),
                Action::Audit(_) => {}
            }
        }
    }

    fn received(&mut self, text: &str) {
        let value = parse_with(text, DuplicateKeys::KeepLast).unwrap();
        let messages: Vec<String> = match value {
            Value::Array(_) => match message::read(text).unwrap() {
                Read::Batch(ranges) => ranges.into_iter().map(|r| text[r].to_string()).collect(),
                Read::One(_) => unreachable!(),
            },
            _ => vec![text.to_string()],
        };
        for message_text in messages {
            let m = message::read_object(&message_text, 0..message_text.len()).unwrap();
            let raw = match &m.kind {
                Kind::Response { id, .. } => id.raw().to_string(),
                Kind::Other => "null".to_string(),
                // Notifications (list_changed) are not answers.
                _ => continue,
            };
            if let Some(at) = &m.result {
                let result = message::parse_at(&message_text, at.clone()).unwrap();
                if let Some(cursor) = result.get("nextCursor").and_then(Value::as_str) {
                    self.last_cursor = Some(cursor.to_string());
                }
            }
            if self.sent.contains(&raw) {
                *self.answers.entry(raw).or_default() += 1;
            } else {
                self.strangers.push(message_text);
            }
        }
    }

    fn id(&mut self, style: IdStyle) -> String {
        self.next_id += 1;
        let n = self.next_id;
        let raw = match style {
            IdStyle::Integer => n.to_string(),
            IdStyle::FloatInteger => format!("{n}.0"),
            IdStyle::Exponent => format!("{n}0e-1"),
            IdStyle::Negative => format!("-{n}"),
            // 4096 apart: distinct even as 64-bit floats.
            IdStyle::Beyond64Bits => {
                (18_446_744_073_709_551_616u128 + 4096 * n as u128).to_string()
            }
            IdStyle::Text => format!("\"r-{n}\""),
            IdStyle::Escaped => format!("\"\\u0072\\ud83d-{n}\""),
        };
        self.sent.push(raw.clone());
        raw
    }

    fn client(&mut self, text: String) {
        let mut out = Vec::new();
        self.gate
            .client_message(text.into_bytes(), self.now, &mut out);
        self.run(out);
    }

    fn call_text(&mut self, tool: usize, valid: bool, style: IdStyle) -> String {
        let id = self.id(style);
        let limit = self.server.limit;
        let (name, arguments) = match (tool, valid) {
            (0, true) => ("count", json!({"n": limit})),
            (0, false) => ("count", json!({"n": 9})),
            (1, true) => ("a b", json!({"s": "ok"})),
            (1, false) => ("a b", json!({"s": 5})),
            (2, true) => ("refs", json!({"k": "x"})),
            (2, false) => ("refs", json!({"k": "z"})),
            _ => ("nowhere", json!({})),
        };
        // `count` is invalid anyhow at 9 (its limit is 5 or 2), whichever the gate last learned.
        format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"{name}","arguments":{arguments}}}}}"#
        )
    }

    fn step(&mut self, step: &Step) {
        match *step {
            Step::Call { tool, valid, style } => {
                let text = self.call_text(tool, valid, style);
                self.client(text);
            }
            Step::Batch(ref calls) => {
                let mut parts: Vec<String> = calls
                    .iter()
                    .map(|&(tool, valid)| self.call_text(tool, valid, IdStyle::Integer))
                    .collect();
                let ping = self.id(IdStyle::Text);
                parts.push(format!(
                    r#"{{"jsonrpc":"2.0","id":{ping},"method":"ping"}}"#
                ));
                self.client(format!("[{}]", parts.join(",")));
            }
            Step::List => {
                let mut cursor: Option<String> = None;
                for _ in 0..5 {
                    let id = self.id(IdStyle::Integer);
                    let params = cursor
                        .as_ref()
                        .map(|c| format!(r#","params":{{"cursor":"{c}"}}"#))
                        .unwrap_or_default();
                    let before = self.answers.get(&id).copied().unwrap_or(0);
                    self.client(format!(
                        r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/list"{params}}}"#
                    ));
                    if self.answers.get(&id).copied().unwrap_or(0) == before {
                        return;
                    }
                    // The page the client got: follow its cursor.
                    cursor = self.last_cursor.take();
                    if cursor.is_none() {
                        return;
                    }
                }
            }
            Step::Ping => {
                let id = self.id(IdStyle::Exponent);
                self.client(format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"ping"}}"#));
            }
            Step::Change => {
                if !self.server.alive {
                    return;
                }
                self.server.limit = if self.server.limit == 5 { 2 } else { 5 };
                let mut out = Vec::new();
                self.gate.server_message(
                    br#"{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}"#.to_vec(),
                    self.now,
                    &mut out,
                );
                self.run(out);
            }
            Step::Cancel => {
                if let Some(last) = self.sent.last().cloned() {
                    self.cancelled.insert(last.clone());
                    self.client(format!(
                        r#"{{"jsonrpc":"2.0","method":"notifications/cancelled","params":{{"requestId":{last}}}}}"#
                    ));
                }
            }
            Step::Wait(seconds) => {
                self.now += Duration::from_secs(seconds);
                let mut out = Vec::new();
                self.gate.tick(self.now, &mut out);
                self.run(out);
            }
            Step::Die => self.die(),
        }
    }

    fn die(&mut self) {
        if !self.server.alive {
            return;
        }
        self.server.alive = false;
        let mut out = Vec::new();
        self.gate
            .server_gone("the MCP server exited", json!({}), self.now, &mut out);
        self.run(out);
    }
}

fn listing() -> impl Strategy<Value = Listing> {
    prop_oneof![
        6 => Just(Listing::Ok),
        1 => Just(Listing::Error),
        1 => Just(Listing::Oversize),
        1 => Just(Listing::Hang),
    ]
}

fn id_style() -> impl Strategy<Value = IdStyle> {
    prop_oneof![
        Just(IdStyle::Integer),
        Just(IdStyle::FloatInteger),
        Just(IdStyle::Exponent),
        Just(IdStyle::Negative),
        Just(IdStyle::Beyond64Bits),
        Just(IdStyle::Text),
        Just(IdStyle::Escaped),
    ]
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        8 => (0usize..4, any::<bool>(), id_style()).prop_map(|(tool, valid, style)| Step::Call { tool, valid, style }),
        1 => proptest::collection::vec((0usize..4, any::<bool>()), 1..4).prop_map(Step::Batch),
        2 => Just(Step::List),
        1 => Just(Step::Ping),
        2 => Just(Step::Change),
        1 => Just(Step::Cancel),
        2 => (1u64..40).prop_map(Step::Wait),
        1 => Just(Step::Die),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    #[test]
    fn no_invalid_call_reaches_the_server_and_every_request_is_answered_once(
        listings in proptest::collection::vec(listing(), 0..8),
        page_size in 1usize..4,
        batches_allowed in any::<bool>(),
        reject_unknown in any::<bool>(),
        forward_unlisted in any::<bool>(),
        steps in proptest::collection::vec(step(), 1..40),
    ) {
        let config = GateConfig {
            unknown_arguments: if reject_unknown { UnknownArguments::Reject } else { UnknownArguments::Allow },
            unlisted: if forward_unlisted { Unlisted::Forward } else { Unlisted::Refuse },
            audit: true,
            ..GateConfig::default()
        };
        let mut session = Session {
            gate: Gate::new(config),
            server: Server { limit: 5, listings, listed: 0, page_size, alive: true, invalid_calls: Vec::new() },
            now: Instant::now(),
            answers: HashMap::new(),
            strangers: Vec::new(),
            sent: Vec::new(),
            cancelled: HashSet::new(),
            next_id: 0,
            last_cursor: None,
        };
        let revision = if batches_allowed { "2025-03-26" } else { "2025-11-25" };
        let id = session.id(IdStyle::Integer);
        session.client(format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"initialize","params":{{"protocolVersion":"{revision}"}}}}"#));
        for step in &steps {
            session.step(step);
        }
        // Let every listing that hangs time out, then end the session.
        for _ in 0..3 {
            session.step(&Step::Wait(31));
        }
        session.die();

        prop_assert!(session.server.invalid_calls.is_empty(), "invalid calls reached the server: {:?}", session.server.invalid_calls);
        prop_assert!(session.strangers.is_empty(), "answers to ids the client never sent: {:?}", session.strangers);
        for raw in &session.sent {
            let got = session.answers.get(raw).copied().unwrap_or(0);
            if session.cancelled.contains(raw) {
                prop_assert!(got <= 1, "request {} answered {} times", raw, got);
            } else {
                prop_assert_eq!(got, 1, "request {} answered {} times", raw, got);
            }
        }
        prop_assert_eq!(session.gate.requests_in_flight(), 0);
    }
}
