//! The proxy's promises as a property, through the real process in front of the scripted server
//! (interop/scripted-server.mjs, which judges every call it receives with Ajv): over random
//! sessions of listings (paged, failing, over the size limit, late, the server dying on one),
//! tool changes, calls (valid, invalid, to unknown tools, with ids of every kind) and server
//! crashes, no invalid call ever reaches the server, and every request gets exactly one answer
//! carrying its id exactly as sent.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{scripted_server, Session};
use proptest::prelude::*;
use serde_json::{json, Value};
use std::time::Duration;
use toolschema::json::{parse_with, DuplicateKeys};
use toolschema_mcp::message::{read_object, Kind};

#[derive(Debug, Clone, Copy)]
enum IdStyle {
    Integer,
    FloatInteger,
    Beyond64Bits,
    Text,
    Escaped,
}

#[derive(Debug, Clone)]
enum Step {
    Call {
        tool: usize,
        valid: bool,
        style: IdStyle,
    },
    List,
    Ping,
    Change,
    Crash,
}

fn listing() -> impl Strategy<Value = &'static str> {
    prop_oneof![
        5 => Just("ok"),
        1 => Just("error"),
        1 => Just("oversize:70000"),
        1 => Just("delay:1500"),
        1 => Just("exit"),
    ]
}

fn id_style() -> impl Strategy<Value = IdStyle> {
    prop_oneof![
        Just(IdStyle::Integer),
        Just(IdStyle::FloatInteger),
        Just(IdStyle::Beyond64Bits),
        Just(IdStyle::Text),
        Just(IdStyle::Escaped),
    ]
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        8 => (0usize..3, any::<bool>(), id_style()).prop_map(|(tool, valid, style)| Step::Call { tool, valid, style }),
        2 => Just(Step::List),
        1 => Just(Step::Ping),
        2 => Just(Step::Change),
        1 => Just(Step::Crash),
    ]
}

fn tools(limit: u64) -> Value {
    json!([
        {"name": "count", "description": "cut \u{1F600} \u{FFFD}", "inputSchema": {"type": "object", "properties": {"n": {"type": "integer", "maximum": limit}}, "required": ["n"], "additionalProperties": false}},
        {"name": "a/b", "inputSchema": {"type": "object", "properties": {"s": {"type": "string", "minLength": 2}}, "required": ["s"]}},
        {"name": "filler", "description": "x", "inputSchema": {"type": "object"}}
    ])
}

/// What one random session saw.
struct Outcome {
    /// Every request sent, by the exact text of its id, and how many answers it got.
    answers: Vec<(String, usize)>,
    /// Lines the client got that answer no request it sent.
    strangers: Vec<String>,
    verdicts: Vec<Value>,
}

/// The client's side of a session: what it sent and what it got.
struct Client {
    proxy: Session,
    sent: Vec<String>,
    answers: Vec<usize>,
    strangers: Vec<String>,
}

impl Client {
    /// Count one line the client got; the id it answers, if it is an answer.
    fn count(&mut self, line: String) -> Option<String> {
        let message = read_object(&line, 0..line.len()).ok()?;
        let Kind::Response { id, .. } = message.kind else {
            if parse_with(&line, DuplicateKeys::KeepLast).is_ok_and(|m| m.get("id").is_some()) {
                self.strangers.push(line);
            }
            return None;
        };
        match self.sent.iter().position(|s| s == id.raw()) {
            Some(at) => self.answers[at] += 1,
            None => self.strangers.push(line),
        }
        Some(id.raw().to_string())
    }

    /// Send a request and read until its answer arrives; the answer, or `None` when the proxy
    /// ended first.
    fn request(&mut self, raw: String, text: &str) -> Option<String> {
        self.sent.push(raw.clone());
        self.answers.push(0);
        self.proxy.send(text);
        loop {
            let line = self.proxy.quiet_for(common::WAIT)?;
            if self.count(line.clone()).as_deref() == Some(raw.as_str()) {
                return Some(line);
            }
        }
    }
}

fn run_session(listings: &[&str], page_size: usize, steps: &[Step]) -> Outcome {
    let dir = tempfile::tempdir().unwrap();
    let record = dir.path().join("received.jsonl");
    let verdicts = dir.path().join("verdicts.jsonl");
    let script = json!({"tools": tools(5), "next_tools": tools(2), "page_size": page_size, "listings": listings}).to_string();
    let proxy = Session::proxy(
        &["--max-message-bytes", "64KiB", "--listing-timeout", "1"],
        &scripted_server(&record, &verdicts, &script),
    );
    let mut client = Client {
        proxy,
        sent: Vec::new(),
        answers: Vec::new(),
        strangers: Vec::new(),
    };
    let init = r#"{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"p","version":"1"}}}"#;
    let mut alive = client.request("\"init\"".into(), init).is_some();
    client
        .proxy
        .send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
    let mut limit = 5;
    for (n, step) in (1u64..).zip(steps) {
        if !alive {
            break;
        }
        let raw = match step {
            Step::Call { style, .. } => match style {
                IdStyle::Integer => n.to_string(),
                IdStyle::FloatInteger => format!("{n}.0"),
                IdStyle::Beyond64Bits => {
                    (18_446_744_073_709_551_616u128 + 4096 * n as u128).to_string()
                }
                IdStyle::Text => format!("\"c-{n}\""),
                IdStyle::Escaped => format!("\"\\u0063\\ud83d-{n}\""),
            },
            _ => n.to_string(),
        };
        let call = |name: &str, arguments: Value| {
            format!(
                r#"{{"jsonrpc":"2.0","id":{raw},"method":"tools/call","params":{{"name":"{name}","arguments":{arguments}}}}}"#
            )
        };
        let text = match step {
            Step::Call { tool, valid, .. } => match (tool, valid) {
                (0, true) => call("count", json!({"n": limit})),
                (0, false) => call("count", json!({"n": 9})),
                (1, true) => call("a/b", json!({"s": "ok"})),
                (1, false) => call("a/b", json!({"s": 1})),
                _ => call("nowhere", json!({})),
            },
            Step::List => format!(r#"{{"jsonrpc":"2.0","id":{raw},"method":"tools/list"}}"#),
            Step::Ping => format!(r#"{{"jsonrpc":"2.0","id":{raw},"method":"ping"}}"#),
            Step::Change => {
                limit = 2;
                call("change_tools", json!({}))
            }
            Step::Crash => call("crash", json!({})),
        };
        // A server that died answers with -32000, and the proxy ends: nothing more is sent.
        alive = client
            .request(raw, &text)
            .is_some_and(|answer| !answer.contains(r#""code":-32000"#));
    }
    client.proxy.close_stdin();
    // Whatever else comes until the proxy ends is counted too.
    while let Some(line) = client.proxy.quiet_for(Duration::from_secs(2)) {
        client.count(line);
    }
    client.proxy.wait();
    let verdicts = std::fs::read_to_string(&verdicts)
        .unwrap_or_default()
        .lines()
        .map(|l| parse_with(l, DuplicateKeys::KeepLast).unwrap())
        .collect();
    Outcome {
        answers: client.sent.into_iter().zip(client.answers).collect(),
        strangers: client.strangers,
        verdicts,
    }
}

proptest! {
    // Each case starts the proxy and a Node server: a few dozen sessions, not thousands (the
    // gate's own property test covers those in-process).
    #![proptest_config(ProptestConfig { cases: 24, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn through_the_process_no_invalid_call_arrives_and_every_request_is_answered_once(
        listings in proptest::collection::vec(listing(), 0..5),
        page_size in 1usize..4,
        steps in proptest::collection::vec(step(), 1..14),
    ) {
        let outcome = run_session(&listings, page_size, &steps);
        prop_assert!(
            outcome.verdicts.iter().all(|v| v["valid"] != false),
            "an invalid call reached the server: {:?}", outcome.verdicts
        );
        prop_assert!(outcome.strangers.is_empty(), "answers to ids never sent: {:?}", outcome.strangers);
        for (raw, count) in &outcome.answers {
            prop_assert_eq!(*count, 1, "request {} answered {} times", raw, count);
        }
    }
}
