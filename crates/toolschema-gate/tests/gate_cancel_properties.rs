//! Cancellation as properties, over random sessions whose server holds requests and answers
//! them when it pleases, late or never. Whatever the order of calls, cancellations, answers and
//! the server's end:
//!
//! - a request the client cancelled while the server had it gets no answer from then on, not
//!   even the error every request gets when the server dies;
//! - the gate holds no request the client cancelled: its count of requests in flight is the
//!   requests neither answered nor cancelled;
//! - every cancellation reaches the server;
//! - every request not cancelled gets exactly one answer once the server answered it or died;
//! - a request that takes the id of a cancelled one the server has not answered is refused,
//!   never forwarded (its answer could not be told from the late answer of the one cancelled).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use proptest::prelude::*;
use serde_json::{json, Value};
use std::collections::{HashMap, HashSet};
use std::time::Instant;
use toolschema_gate::{Action, Gate, GateConfig};

/// What happens next.
#[derive(Debug, Clone)]
enum Step {
    /// The client calls the tool (a new id, or the id of its `n`th request again).
    Call { reuse: Option<usize> },
    /// The client cancels its `n`th request (modulo how many it sent).
    Cancel(usize),
    /// The server answers the `n`th request it holds (modulo how many), with a result or an
    /// error.
    Answer(usize, bool),
    /// The server dies.
    Die,
}

struct Session {
    gate: Gate,
    now: Instant,
    /// The ids the client sent, in order.
    sent: Vec<Value>,
    /// The ids the client cancelled (while the gate held them or not).
    cancelled: HashSet<String>,
    /// The ids the server received and has not answered, in order.
    held: Vec<Value>,
    /// The cancellations the server received, by id.
    cancels_received: HashSet<String>,
    /// Answers the client got, by id.
    answers: HashMap<String, usize>,
    /// Answers the client got after it cancelled their request.
    after_cancel: Vec<String>,
    /// Requests with a reused id that reached the server.
    reused_forwarded: Vec<String>,
    /// Requests neither answered nor cancelled.
    open: HashSet<String>,
    alive: bool,
}

impl Session {
    fn run(&mut self, out: Vec<Action>) {
        for action in out {
            match action {
                Action::ToServer(line) => {
                    let message: Value = serde_json::from_slice(&line).unwrap();
                    if message["method"] == "notifications/cancelled" {
                        self.cancels_received
                            .insert(message["params"]["requestId"].to_string());
                    } else if message["method"] == "tools/call" && self.alive {
                        self.held.push(message["id"].clone());
                    }
                }
                Action::ToClient(line) => {
                    let message: Value = serde_json::from_slice(&line).unwrap();
                    let id = message["id"].to_string();
                    if self.cancelled.contains(&id) {
                        self.after_cancel.push(id.clone());
                    }
                    self.open.remove(&id);
                    *self.answers.entry(id).or_default() += 1;
                }
                Action::Audit(_) => {}
            }
        }
    }

    fn client(&mut self, message: Value) {
        let mut out = Vec::new();
        self.gate
            .client_message(message.to_string().into_bytes(), self.now, &mut out);
        self.run(out);
    }

    fn server(&mut self, message: Value) {
        let mut out = Vec::new();
        self.gate
            .server_message(message.to_string().into_bytes(), self.now, &mut out);
        self.run(out);
    }

    fn step(&mut self, step: Step) {
        match step {
            Step::Call { reuse: Some(n) } => {
                if self.sent.is_empty() {
                    return;
                }
                let id = self.sent[n % self.sent.len()].clone();
                let key = id.to_string();
                if self.open.contains(&key) {
                    // An id in flight is another property's matter.
                    return;
                }
                let mut out = Vec::new();
                let call = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": "echo", "arguments": {"text": "again"}}});
                self.gate
                    .client_message(call.to_string().into_bytes(), self.now, &mut out);
                let forwarded = out.iter().any(|a| matches!(a, Action::ToServer(_)));
                if !forwarded {
                    // Refused at once: answered with an error, nothing held.
                    let answered = out
                        .iter()
                        .filter(|a| matches!(a, Action::ToClient(_)))
                        .count();
                    assert_eq!(answered, 1, "{out:?}");
                    return;
                }
                // Cancelled, and the server may still answer it.
                if self.cancelled.contains(&key)
                    && self.held.iter().map(Value::to_string).any(|h| h == key)
                {
                    self.reused_forwarded.push(key.clone());
                }
                // Answered before: the id is free again (for the gate, a new request).
                self.cancelled.remove(&key);
                self.answers.remove(&key);
                self.open.insert(key);
                self.run(out);
            }
            Step::Call { reuse: None } => {
                let id = if self.sent.len().is_multiple_of(2) {
                    json!(self.sent.len())
                } else {
                    json!(format!("call-{}", self.sent.len()))
                };
                self.sent.push(id.clone());
                self.open.insert(id.to_string());
                self.client(json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": "echo", "arguments": {"text": "hi"}}}));
            }
            Step::Cancel(n) => {
                if self.sent.is_empty() {
                    return;
                }
                let id = self.sent[n % self.sent.len()].clone();
                let key = id.to_string();
                // Only a request still open is cancelled (an answered one has nothing to stop).
                if !self.open.contains(&key) {
                    return;
                }
                self.cancelled.insert(key.clone());
                self.open.remove(&key);
                self.client(json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": id, "reason": "gave up"}}));
            }
            Step::Answer(n, ok) => {
                if self.held.is_empty() || !self.alive {
                    return;
                }
                let id = self.held.remove(n % self.held.len());
                if ok {
                    self.server(json!({"jsonrpc": "2.0", "id": id, "result": {"content": [{"type": "text", "text": "hi"}]}}));
                } else {
                    self.server(json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32603, "message": "boom"}}));
                }
            }
            Step::Die => {
                if !self.alive {
                    return;
                }
                self.alive = false;
                self.held.clear();
                let mut out = Vec::new();
                self.gate
                    .server_gone("the MCP server exited", json!({}), self.now, &mut out);
                self.run(out);
            }
        }
    }
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        4 => Just(Step::Call { reuse: None }),
        1 => (0usize..16).prop_map(|n| Step::Call { reuse: Some(n) }),
        3 => (0usize..16).prop_map(Step::Cancel),
        3 => ((0usize..16), any::<bool>()).prop_map(|(n, ok)| Step::Answer(n, ok)),
        1 => Just(Step::Die),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn a_cancelled_request_is_closed_and_never_answered(steps in proptest::collection::vec(step(), 1..60)) {
        let mut session = Session {
            gate: Gate::new(GateConfig { audit: true, ..GateConfig::default() }),
            now: Instant::now(),
            sent: Vec::new(),
            cancelled: HashSet::new(),
            held: Vec::new(),
            cancels_received: HashSet::new(),
            answers: HashMap::new(),
            after_cancel: Vec::new(),
            reused_forwarded: Vec::new(),
            open: HashSet::new(),
            alive: true,
        };
        // The tool is listed: calls go on to the server.
        session.client(json!({"jsonrpc": "2.0", "id": "list", "method": "tools/list"}));
        session.server(json!({"jsonrpc": "2.0", "id": "list", "result": {"tools": [{"name": "echo", "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}}}]}}));
        session.answers.clear();
        for step in steps {
            session.step(step);
            prop_assert!(session.after_cancel.is_empty(), "answered after its cancellation: {:?}", session.after_cancel);
            prop_assert_eq!(session.gate.requests_in_flight(), session.open.len());
            prop_assert!(session.reused_forwarded.is_empty(), "a reused id went on: {:?}", session.reused_forwarded);
        }
        for id in &session.cancelled {
            // Cancelled while the server was alive: the server was told.
            prop_assert!(!session.alive || session.cancels_received.contains(id), "{} not cancelled at the server", id);
        }
        // Once the server is gone, every request not cancelled was answered exactly once.
        session.step(Step::Die);
        for id in &session.sent {
            let key = id.to_string();
            let answers = session.answers.get(&key).copied().unwrap_or(0);
            if session.cancelled.contains(&key) {
                prop_assert_eq!(answers, 0, "{}", key);
            } else {
                prop_assert!(answers >= 1, "{} never answered", key);
            }
        }
        prop_assert_eq!(session.gate.requests_in_flight(), 0);
    }
}
