//! The gate driven in-process: messages in, actions out, time given by the test.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use super::*;
use crate::policy::Glob;
use serde_json::json;

/// A gate with a clock the test moves.
struct Session {
    gate: Gate,
    now: Instant,
}

/// What one step made the gate do, sorted by destination.
#[derive(Debug, Default)]
struct Effects {
    to_server: Vec<Value>,
    to_client: Vec<Value>,
    /// The client's lines as written, for exact ids.
    client_lines: Vec<String>,
    audit: Vec<AuditRecord>,
}

impl Effects {
    fn of(actions: Vec<Action>) -> Effects {
        let mut effects = Effects::default();
        for action in actions {
            match action {
                Action::ToServer(line) => effects.to_server.push(parse(&line)),
                Action::ToClient(line) => {
                    effects.to_client.push(parse(&line));
                    effects.client_lines.push(String::from_utf8(line).unwrap());
                }
                Action::Audit(record) => effects.audit.push(*record),
            }
        }
        effects
    }

    fn nothing(&self) -> bool {
        self.to_server.is_empty() && self.to_client.is_empty()
    }
}

fn parse(line: &[u8]) -> Value {
    let text = std::str::from_utf8(line).unwrap();
    message::parse(text).unwrap_or_else(|e| panic!("{e}: {text}"))
}

impl Session {
    fn new(config: GateConfig) -> Session {
        Session {
            gate: Gate::new(config),
            now: Instant::now(),
        }
    }

    /// A session whose server has answered `initialize` with `revision`.
    fn initialized(config: GateConfig, revision: &str) -> Session {
        let mut session = Session::new(config);
        session.client_text(r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{}}"#);
        session.server(json!({"jsonrpc": "2.0", "id": 0, "result": {"protocolVersion": revision}}));
        session
    }

    fn client(&mut self, message: Value) -> Effects {
        self.client_text(&message.to_string())
    }

    fn client_text(&mut self, text: &str) -> Effects {
        let mut out = Vec::new();
        self.gate
            .client_message(text.as_bytes().to_vec(), self.now, &mut out);
        Effects::of(out)
    }

    fn server(&mut self, message: Value) -> Effects {
        self.server_text(&message.to_string())
    }

    fn server_text(&mut self, text: &str) -> Effects {
        let mut out = Vec::new();
        self.gate
            .server_message(text.as_bytes().to_vec(), self.now, &mut out);
        Effects::of(out)
    }

    fn advance(&mut self, by: Duration) -> Effects {
        self.now += by;
        let mut out = Vec::new();
        self.gate.tick(self.now, &mut out);
        Effects::of(out)
    }

    /// The client lists the tools and the server answers with `tools` in one page.
    fn listed(&mut self, tools: Value) {
        let asked = self.client(json!({"jsonrpc": "2.0", "id": "list", "method": "tools/list"}));
        assert_eq!(asked.to_server.len(), 1);
        let answered =
            self.server(json!({"jsonrpc": "2.0", "id": "list", "result": {"tools": tools}}));
        assert_eq!(answered.to_client.len(), 1);
    }
}

fn call(id: Value, name: &str, arguments: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": name, "arguments": arguments}})
}

fn search_tool() -> Value {
    json!({
        "name": "search",
        "inputSchema": {
            "type": "object",
            "properties": {"query": {"type": "string", "minLength": 3}, "limit": {"type": "integer", "maximum": 100}},
            "required": ["query"],
            "additionalProperties": false
        },
        "outputSchema": {"type": "object", "properties": {"total": {"type": "integer"}}, "required": ["total"]}
    })
}

fn tool_error(id: Value, text: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "result": {"content": [{"type": "text", "text": text}], "isError": true}})
}

fn audited() -> GateConfig {
    GateConfig {
        audit: true,
        ..GateConfig::default()
    }
}

#[test]
fn valid_calls_go_on_unchanged_and_invalid_ones_are_answered() {
    let mut session = Session::new(GateConfig::default());
    session.listed(json!([search_tool()]));
    let sent = r#"{"jsonrpc":"2.0", "id":1,"method":"tools/call","params":{"name":"search","arguments":{"query":"rust"}}}"#;
    let mut out = Vec::new();
    session
        .gate
        .client_message(sent.as_bytes().to_vec(), session.now, &mut out);
    assert_eq!(out, [Action::ToServer(sent.as_bytes().to_vec())]);

    let invalid = session.client(call(json!(2), "search", json!({"query": "ab", "limt": 5})));
    assert!(invalid.to_server.is_empty());
    assert_eq!(
        invalid.to_client,
        [tool_error(
            json!(2),
            "argument 'query' string length must be >= 3 (got 2)\nunexpected argument 'limt' (did you mean 'limit'?)"
        )]
    );
    // `null` arguments are no arguments.
    let null = session.client(call(json!(3), "search", Value::Null));
    assert_eq!(
        null.to_client,
        [tool_error(json!(3), "missing required argument 'query'")]
    );
}

#[test]
fn a_call_before_any_listing_waits_for_the_proxys_own_listing_of_every_page() {
    let mut session = Session::new(GateConfig::default());
    let asked = session.client(call(json!(1), "search", json!({"query": "x"})));
    assert!(asked.to_client.is_empty());
    assert_eq!(
        asked.to_server,
        [json!({"jsonrpc": "2.0", "id": "toolschema-proxy-1", "method": "tools/list"})]
    );
    assert!(session.gate.holds_client_messages());
    // The first page points to a second one.
    let next = session.server(json!({"jsonrpc": "2.0", "id": "toolschema-proxy-1", "result": {"tools": [], "nextCursor": "c2"}}));
    assert!(next.to_client.is_empty());
    assert_eq!(
        next.to_server,
        [
            json!({"jsonrpc": "2.0", "id": "toolschema-proxy-2", "method": "tools/list", "params": {"cursor": "c2"}})
        ]
    );
    let done = session.server(
        json!({"jsonrpc": "2.0", "id": "toolschema-proxy-2", "result": {"tools": [search_tool()]}}),
    );
    assert!(done.to_server.is_empty());
    assert_eq!(
        done.to_client,
        [tool_error(
            json!(1),
            "argument 'query' string length must be >= 3 (got 1)"
        )]
    );
    // Known now: the next call is decided at once.
    let valid = session.client(call(json!(2), "search", json!({"query": "rust"})));
    assert_eq!(valid.to_server.len(), 1);
}

/// The transport asks which client requests wait for one of the proxy's own requests (to
/// give them what the upstream answered that request, an expired session's 404): the calls
/// waiting for the page out now, and only for that page's id.
#[test]
fn the_calls_waiting_for_the_own_listing_are_named_by_its_page() {
    let mut session = Session::new(GateConfig::default());
    session.client(call(json!(1), "search", json!({"query": "rust"})));
    session.client(call(json!("b"), "search", json!({"query": "go"})));
    let own = RequestId::from_text("\"toolschema-proxy-1\"");
    let waiting = session.gate.waiting_on(own.key());
    assert_eq!(
        waiting,
        [
            RequestId::from_text("1").key().clone(),
            RequestId::from_text("\"b\"").key().clone()
        ]
    );
    assert!(session
        .gate
        .waiting_on(RequestId::from_text("1").key())
        .is_empty());
    // The page answered: nothing waits for it any more.
    session.server(
        json!({"jsonrpc": "2.0", "id": "toolschema-proxy-1", "result": {"tools": [search_tool()]}}),
    );
    assert!(session.gate.waiting_on(own.key()).is_empty());
}

#[test]
fn everything_but_the_waiting_calls_flows_during_the_own_listing() {
    let mut session = Session::new(audited());
    let listing = session.client(call(json!(1), "search", json!({"query": "rust"})));
    let own = listing.to_server[0]["id"].clone();
    // A second call waits too, behind the first.
    assert!(session
        .client(call(json!(2), "search", json!({"query": "go"})))
        .nothing());
    // The server asks the client something inside its tools/list handler, and the client's
    // answer, pings and notifications go through.
    let asked = session.server(json!({"jsonrpc": "2.0", "id": "srv-1", "method": "roots/list"}));
    assert_eq!(asked.to_client[0]["method"], "roots/list");
    let answer = json!({"jsonrpc": "2.0", "id": "srv-1", "result": {"roots": []}});
    assert_eq!(session.client(answer.clone()).to_server, [answer]);
    let ping = json!({"jsonrpc": "2.0", "id": 9, "method": "ping"});
    assert_eq!(session.client(ping.clone()).to_server, [ping]);
    assert_eq!(
        session
            .server(json!({"jsonrpc": "2.0", "id": 9, "result": {}}))
            .to_client,
        [json!({"jsonrpc": "2.0", "id": 9, "result": {}})]
    );
    // A cancelled waiting call is dropped, and so is its cancellation.
    let cancelled = session.client(json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 2.0}}));
    assert!(cancelled.nothing());
    assert_eq!(cancelled.audit[0].verdict, Verdict::Cancelled);
    // Other cancellations go on.
    let other =
        json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 77}});
    assert_eq!(session.client(other.clone()).to_server, [other]);
    let done =
        session.server(json!({"jsonrpc": "2.0", "id": own, "result": {"tools": [search_tool()]}}));
    assert_eq!(done.to_server.len(), 1);
    assert_eq!(done.to_server[0]["id"], 1);
    assert!(done.to_client.is_empty());
    assert!(!session.gate.holds_client_messages());
}

#[test]
fn a_forwarded_call_the_client_cancels_is_audited_once_as_cancelled() {
    let mut session = Session::new(audited());
    session.listed(json!([search_tool()]));
    let sent = session.client(call(json!(5), "search", json!({"query": "rust"})));
    assert_eq!(sent.to_server.len(), 1);
    assert!(sent.audit.is_empty());
    // The cancellation goes on to the server, and the call is audited then.
    let cancel =
        json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 5}});
    let cancelled = session.client(cancel.clone());
    assert_eq!(cancelled.to_server, std::slice::from_ref(&cancel));
    assert_eq!(cancelled.audit.len(), 1);
    assert_eq!(cancelled.audit[0].verdict, Verdict::Cancelled);
    assert_eq!(cancelled.audit[0].tool, "search");
    assert_eq!(cancelled.audit[0].input_check, Some(InputVerdict::Passed));
    // The gate holds it no more.
    assert_eq!(session.gate.requests_in_flight(), 0);
    // Cancelled twice: one record still.
    assert!(session.client(cancel.clone()).audit.is_empty());
    // A request may not take its id while its answer may still come.
    let reused = session.client(call(json!(5), "search", json!({"query": "rust"})));
    assert!(reused.to_server.is_empty());
    assert_eq!(
        reused.to_client[0]["error"]["code"], -32600,
        "{:?}",
        reused.to_client
    );
    // A late answer is dropped (MCP: the sender of a cancellation ignores it), unaudited.
    let late = session.server(json!({"jsonrpc": "2.0", "id": 5, "result": {"structuredContent": {"total": 1}, "content": []}}));
    assert!(late.nothing());
    assert!(late.audit.is_empty());
    // Once it came, the id is free again.
    let again = session.client(call(json!(5), "search", json!({"query": "rust"})));
    assert_eq!(again.to_server.len(), 1);
    session.server(json!({"jsonrpc": "2.0", "id": 5, "result": {"structuredContent": {"total": 1}, "content": []}}));
    // Nor is a cancelled call answered when the server goes away before answering it.
    session.client(call(json!(6), "search", json!({"query": "rust"})));
    session.client(
        json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 6}}),
    );
    let mut out = Vec::new();
    session
        .gate
        .server_gone("gone", Value::Null, session.now, &mut out);
    let gone = Effects::of(out);
    assert!(gone.to_client.is_empty(), "{:?}", gone.to_client);
    assert!(gone.audit.is_empty());
}

#[test]
fn a_cancelled_call_in_a_batch_is_left_out_of_its_answer() {
    let mut session = Session::initialized(audited(), "2025-03-26");
    session.listed(json!([search_tool()]));
    let sent = session.client(json!([
        call(json!(1), "search", json!({"query": "rust"})),
        call(json!(2), "search", json!({"query": "rust"}))
    ]));
    assert_eq!(sent.to_server.len(), 1);
    let cancelled = session.client(
        json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 2}}),
    );
    assert_eq!(cancelled.audit.len(), 1);
    let answered = session.server(json!([{"jsonrpc": "2.0", "id": 1, "result": {"structuredContent": {"total": 1}, "content": []}}, {"jsonrpc": "2.0", "id": 2, "result": {"structuredContent": {"total": 2}, "content": []}}]));
    assert_eq!(answered.to_client.len(), 1);
    let batch = answered.to_client[0].as_array().expect("a batch");
    assert_eq!(batch.len(), 1, "{batch:?}");
    assert_eq!(batch[0]["id"], 1);
    assert_eq!(session.gate.requests_in_flight(), 0);
}

#[test]
fn the_proxy_gives_up_on_a_request_for_its_client() {
    let mut session = Session::new(audited());
    session.listed(json!([search_tool()]));
    session.client(call(json!("x"), "search", json!({"query": "rust"})));
    let give_up = |session: &mut Session| {
        let mut out = Vec::new();
        let id = RequestId::from_value(&json!("x"));
        session.gate.give_up(&id, "too slow", session.now, &mut out);
        out
    };
    let gave_up = Effects::of(give_up(&mut session));
    assert_eq!(gave_up.to_server[0]["method"], "notifications/cancelled");
    assert_eq!(gave_up.to_server[0]["params"]["requestId"], "x");
    assert_eq!(gave_up.to_server[0]["params"]["reason"], "too slow");
    assert_eq!(gave_up.to_client[0]["id"], "x");
    assert_eq!(gave_up.to_client[0]["error"]["message"], "too slow");
    assert_eq!(gave_up.audit[0].verdict, Verdict::Cancelled);
    assert_eq!(session.gate.requests_in_flight(), 0);
    let late = session.server(json!({"jsonrpc": "2.0", "id": "x", "result": {"structuredContent": {"total": 1}, "content": []}}));
    assert!(late.nothing());
    // Answered already: nothing more.
    assert!(give_up(&mut session).is_empty());
}

#[test]
fn the_client_cannot_cancel_the_proxys_own_listing() {
    let mut session = Session::new(audited());
    let listing = session.client(call(json!(1), "search", json!({"query": "rust"})));
    let own = listing.to_server[0]["id"].clone();
    // The proxy's ids are easy to guess; a server that honours this would never answer the
    // listing, and every call would wait for it.
    let cancel = json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": own, "reason": "gone"}});
    let dropped = session.client(cancel);
    assert!(dropped.nothing(), "{:?}", dropped.to_server);
    // The listing goes on and the waiting call is decided with it.
    let done =
        session.server(json!({"jsonrpc": "2.0", "id": own, "result": {"tools": [search_tool()]}}));
    assert_eq!(done.to_server.len(), 1);
    assert_eq!(done.to_server[0]["id"], 1);
    // Once the listing is answered the id is no longer the proxy's: a cancellation naming it
    // is the client's business and goes on.
    let later = json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": own}});
    assert_eq!(session.client(later.clone()).to_server, [later]);
}

#[test]
fn a_failed_own_listing_fails_closed_and_is_tried_again_after_a_pause() {
    let mut session = Session::new(audited());
    let listing = session.client(call(json!(1), "search", json!({"query": "rust"})));
    let own = listing.to_server[0]["id"].clone();
    let failed = session.server(json!({"jsonrpc": "2.0", "id": own, "error": {"code": -32603, "message": "listing is broken"}}));
    assert!(failed.to_server.is_empty());
    assert_eq!(
        failed.to_client,
        [tool_error(
            json!(1),
            r#"the proxy could not learn this tool's schema: the server answered the proxy's tools/list with an error: {"code":-32603,"message":"listing is broken"} (the proxy lists the tools again for a call in 1s)"#
        )]
    );
    assert_eq!(failed.audit[0].verdict, Verdict::UncheckedRefused);
    assert_eq!(failed.audit[0].input_check, Some(InputVerdict::Unchecked));
    // Within the pause, a call is refused at once.
    let soon = session.client(call(json!(2), "search", json!({"query": "rust"})));
    assert!(soon.to_server.is_empty());
    let text = soon.to_client[0]["result"]["content"][0]["text"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        text.ends_with("(the proxy lists the tools again for a call in 1s)"),
        "{text}"
    );
    // After it, the next call lists again, and is checked.
    session.advance(DEFAULT_LISTING_RETRY);
    let again = session.client(call(json!(3), "search", json!({"query": "rust"})));
    assert_eq!(again.to_server[0]["method"], "tools/list");
    let own = again.to_server[0]["id"].clone();
    let done =
        session.server(json!({"jsonrpc": "2.0", "id": own, "result": {"tools": [search_tool()]}}));
    assert_eq!(done.to_server[0]["id"], 3);
}

#[test]
fn an_own_listing_that_times_out_fails_closed_and_its_late_answer_is_dropped() {
    let mut session = Session::new(GateConfig::default());
    let listing = session.client(call(json!(1), "search", json!({"query": "rust"})));
    let own = listing.to_server[0]["id"].clone();
    assert!(session.advance(Duration::from_secs(1)).nothing());
    let expired = session.advance(DEFAULT_LISTING_TIMEOUT);
    assert!(expired.to_server.is_empty());
    assert_eq!(
        expired.to_client,
        [tool_error(
            json!(1),
            "the proxy could not learn this tool's schema: the server did not answer the proxy's tools/list within 30s (the proxy lists the tools again for a call in 1s)"
        )]
    );
    assert_eq!(session.gate.next_deadline(), None);
    // The late answer is the proxy's: never passed to the client.
    let late =
        session.server(json!({"jsonrpc": "2.0", "id": own, "result": {"tools": [search_tool()]}}));
    assert!(late.nothing());
}

#[test]
fn an_own_listing_over_the_size_limit_or_looping_fails_closed() {
    let mut session = Session::new(GateConfig::default());
    let listing = session.client(call(json!(1), "search", json!({"query": "rust"})));
    let own = RequestId::from_value(&listing.to_server[0]["id"]);
    let mut out = Vec::new();
    session
        .gate
        .server_message_too_large(20_000_000, Some(own), session.now, &mut out);
    let refused = Effects::of(out);
    let text = refused.to_client[0]["result"]["content"][0]["text"]
        .as_str()
        .unwrap();
    assert!(
        text.ends_with("the server's answer to the proxy's tools/list (20000000 bytes) is over the limit of 16777216 bytes (--max-message-bytes) (the proxy lists the tools again for a call in 1s)"),
        "{text}"
    );

    let mut session = Session::new(GateConfig::default());
    let listing = session.client(call(json!(1), "search", json!({"query": "rust"})));
    let first = listing.to_server[0]["id"].clone();
    let second = session.server(
        json!({"jsonrpc": "2.0", "id": first, "result": {"tools": [], "nextCursor": "same"}}),
    );
    let again = second.to_server[0]["id"].clone();
    let looped = session.server(
        json!({"jsonrpc": "2.0", "id": again, "result": {"tools": [], "nextCursor": "same"}}),
    );
    assert!(looped.to_server.is_empty());
    let text = looped.to_client[0]["result"]["content"][0]["text"]
        .as_str()
        .unwrap();
    assert!(
        text.contains("returned nextCursor \"same\" twice to the proxy's tools/list"),
        "{text}"
    );
}

#[test]
fn an_own_listing_with_a_cursor_that_is_not_a_string_fails_closed() {
    let mut session = Session::new(GateConfig::default());
    // The tool called is on the page after the one the cursor would lead to.
    let listing = session.client(call(json!(1), "search", json!({"query": "rust"})));
    let own = listing.to_server[0]["id"].clone();
    let page = session
        .server(json!({"jsonrpc": "2.0", "id": own, "result": {"tools": [], "nextCursor": 2}}));
    assert!(page.to_server.is_empty());
    let text = page.to_client[0]["result"]["content"][0]["text"]
        .as_str()
        .unwrap();
    assert!(
        text.contains("the server's answer to the proxy's tools/list is unusable: its result's \"nextCursor\" is a number (2), not a string"),
        "{text}"
    );
}

#[test]
fn on_unchecked_forward_lets_calls_through_that_cannot_be_checked() {
    let config = GateConfig {
        on_unchecked: OnUnchecked::Forward,
        audit: true,
        ..GateConfig::default()
    };
    let mut session = Session::new(config);
    let listing = session.client(call(json!(1), "search", json!({"query": "x"})));
    let own = listing.to_server[0]["id"].clone();
    let failed = session.server(
        json!({"jsonrpc": "2.0", "id": own, "error": {"code": -32603, "message": "broken"}}),
    );
    assert_eq!(failed.to_server[0]["id"], 1);
    let result = session.server(json!({"jsonrpc": "2.0", "id": 1, "result": {"content": []}}));
    assert_eq!(result.audit[0].verdict, Verdict::Forwarded);
    assert_eq!(result.audit[0].input_check, Some(InputVerdict::Unchecked));
}

#[test]
fn listings_with_lone_surrogates_odd_names_and_unused_external_refs_are_checked() {
    let mut session = Session::new(GateConfig::default());
    let tools = r#"[
        {"name": "cut", "description": "cut \ud83d", "inputSchema": {"type": "object", "properties": {"n": {"type": "integer", "maximum": 3}}}},
        {"name": "a b", "inputSchema": {"type": "object", "properties": {"n": {"type": "integer", "maximum": 3}}}},
        {"name": "refs", "inputSchema": {"type": "object", "properties": {"n": {"type": "integer", "maximum": 3}, "cfg": {"$ref": "https://example.com/cfg.json"}}, "$defs": {"unused": {"$ref": "https://example.com/x.json"}}}}
    ]"#;
    session.client(json!({"jsonrpc": "2.0", "id": "l", "method": "tools/list"}));
    let listed = session.server_text(&format!(
        r#"{{"jsonrpc":"2.0","id":"l","result":{{"tools":{tools}}}}}"#
    ));
    // The listing reaches the client exactly as the server wrote it.
    assert!(listed.client_lines[0].contains(r"cut \ud83d"));
    for name in ["cut", "a b", "refs"] {
        let refused = session.client(call(json!(1), name, json!({"n": 4})));
        assert_eq!(
            refused.to_client,
            [tool_error(
                json!(1),
                "argument 'n' value must be <= 3 (got 4)"
            )],
            "{name}"
        );
        assert_eq!(
            session
                .client(call(json!(2), name, json!({"n": 3})))
                .to_server
                .len(),
            1
        );
        session.server(json!({"jsonrpc": "2.0", "id": 2, "result": {"content": []}}));
    }
    // A call that reaches the external $ref cannot be checked.
    let reached = session.client(call(json!(3), "refs", json!({"cfg": {}})));
    assert!(reached.to_server.is_empty());
    assert_eq!(
        reached.to_client,
        [tool_error(
            json!(3),
            "the proxy could not learn this tool's schema: the schema refers to https://example.com/cfg.json, which is never fetched"
        )]
    );
}

#[test]
fn a_lone_surrogate_is_not_forwarded_where_the_schema_could_tell_it_from_u_fffd() {
    let mut session = Session::new(GateConfig::default());
    session.listed(json!([
        // `\P{C}` takes U+FFFD (a symbol), not a surrogate: read as U+FFFD, a lone surrogate
        // would pass here and reach a server whose own check refuses it.
        {"name": "plain", "inputSchema": {"type": "object", "properties": {"s": {"type": "string", "pattern": "^\\P{C}*$"}}}},
        {"name": "picked", "inputSchema": {"type": "object", "properties": {"s": {"enum": ["ok", "\u{fffd}"]}}}},
        {"name": "length", "inputSchema": {"type": "object", "properties": {"s": {"type": "string", "maxLength": 3}}}}
    ]));
    let sent = |id: u32, tool: &str, s: &str| {
        format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"{tool}","arguments":{{"s":"{s}"}}}}}}"#
        )
    };
    for (id, tool, what) in [
        (1, "plain", "`pattern`"),
        (2, "picked", "a string holding U+FFFD"),
    ] {
        let refused = session.client_text(&sent(id, tool, r"ok\ud800"));
        assert!(refused.to_server.is_empty(), "{tool}");
        assert_eq!(
            refused.to_client,
            [tool_error(
                json!(id),
                &format!("the proxy could not check these arguments: a lone surrogate escape (\\uD800 to \\uDFFF) reads here as U+FFFD, and the schema examines characters ({what}), which a server keeping the surrogate may judge otherwise")
            )],
            "{tool}"
        );
        // A pair, an escaped backslash before `u`, and U+FFFD itself are read exactly.
        for exact in [r"ok\ud83d\ude00", r"ok\\ud800", "ok\u{fffd}"] {
            let passed = session.client_text(&sent(id + 10, "plain", exact));
            assert_eq!(passed.to_server.len(), 1, "{exact}");
            session.server(json!({"jsonrpc": "2.0", "id": id + 10, "result": {"content": []}}));
        }
    }
    // Nothing in this schema tells them apart (a surrogate is one character, as U+FFFD is):
    // checked and forwarded as sent, or refused for what is checked.
    let forwarded = session.client_text(&sent(3, "length", r"ok\ud800"));
    assert_eq!(forwarded.to_server.len(), 1);
    assert!(forwarded.client_lines.is_empty() && forwarded.to_client.is_empty());
    let too_long = session.client_text(&sent(4, "length", r"okk\ud800"));
    assert!(too_long.to_server.is_empty());
}

#[test]
fn a_result_with_a_lone_surrogate_is_withheld_where_the_output_schema_could_tell() {
    let config = GateConfig {
        output_check: OutputCheck::Enforce,
        audit: true,
        ..GateConfig::default()
    };
    let mut session = Session::new(config);
    session.listed(json!([{
        "name": "say",
        "inputSchema": {"type": "object"},
        "outputSchema": {"type": "object", "properties": {"text": {"type": "string", "pattern": "^\\P{C}*$"}}}
    }]));
    for (id, text) in [(1, r"ok\ud800"), (2, r"ok\ud83d\ude00")] {
        session.client(call(json!(id), "say", json!({})));
        // A lone surrogate in the text content beside it changes nothing.
        let result = session.server_text(&format!(
            r#"{{"jsonrpc":"2.0","id":{id},"result":{{"content":[{{"type":"text","text":"\udc00"}}],"structuredContent":{{"text":"{text}"}}}}}}"#
        ));
        if id == 1 {
            assert_eq!(
                result.to_client,
                [tool_error(
                    json!(1),
                    "the result of tool 'say' could not be checked and was withheld: structured content could not be checked: a lone surrogate escape (\\uD800 to \\uDFFF) reads here as U+FFFD, and the schema examines characters (`pattern`), which a server keeping the surrogate may judge otherwise"
                )]
            );
            assert_eq!(result.audit[0].output_check, Some(OutputVerdict::Unchecked));
        } else {
            assert_eq!(result.client_lines.len(), 1);
            assert!(result.client_lines[0].contains(text));
            assert_eq!(result.audit[0].output_check, Some(OutputVerdict::Passed));
        }
    }
}

#[test]
fn ids_match_by_value_and_are_answered_as_the_client_wrote_them() {
    let config = GateConfig {
        output_check: OutputCheck::Enforce,
        audit: true,
        ..GateConfig::default()
    };
    let mut session = Session::new(config);
    session.listed(json!([search_tool()]));
    session.client_text(r#"{"jsonrpc":"2.0","id":3.0,"method":"tools/call","params":{"name":"search","arguments":{"query":"rust"}}}"#);
    // The server reads 3.0 as 3 and answers so; the check and the audit still apply.
    let result = session.server_text(
        r#"{"jsonrpc":"2.0","id":3,"result":{"content":[],"structuredContent":{"total":"many"}}}"#,
    );
    assert!(result.client_lines[0].starts_with(r#"{"jsonrpc":"2.0","id":3.0,"result":{"content":[{"type":"text","text":"the result of tool 'search' did not match"#), "{}", result.client_lines[0]);
    assert_eq!(result.audit[0].id.raw(), "3.0");
    // A passed-on answer gets the client's id too.
    session.client_text(r#"{"jsonrpc":"2.0","id":1e1,"method":"ping"}"#);
    assert_eq!(
        session
            .server_text(r#"{"jsonrpc":"2.0","id":10,"result":{}}"#)
            .client_lines,
        [r#"{"jsonrpc":"2.0","id":1e1,"result":{}}"#]
    );
    // A JavaScript server reads an id beyond 53 bits as the nearest float, and answers so.
    let big = r#"{"jsonrpc":"2.0","id":18446744073709551617,"method":"tools/call","params":{"name":"search","arguments":{"query":"rust"}}}"#;
    assert_eq!(session.client_text(big).to_server.len(), 1);
    let answered = session.server_text(
        r#"{"jsonrpc":"2.0","id":18446744073709552000,"result":{"content":[],"structuredContent":{"total":1}}}"#,
    );
    assert_eq!(
        answered.client_lines,
        [
            r#"{"jsonrpc":"2.0","id":18446744073709551617,"result":{"content":[],"structuredContent":{"total":1}}}"#
        ]
    );
    // The proxy's own answers carry the id's exact text.
    let big = session.client_text(r#"{"jsonrpc":"2.0","id":18446744073709551617,"method":"tools/call","params":{"name":"search","arguments":{}}}"#);
    assert!(
        big.client_lines[0].starts_with(r#"{"jsonrpc":"2.0","id":18446744073709551617,"result":"#)
    );
    for id in [r#""\ud83d""#, "true", r#"{"a":[1]}"#, "-0.5"] {
        let refused = session.client_text(&format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"search","arguments":{{}}}}}}"#
        ));
        assert!(
            refused.client_lines[0]
                .starts_with(&format!(r#"{{"jsonrpc":"2.0","id":{id},"result":"#)),
            "{}",
            refused.client_lines[0]
        );
    }
}

#[test]
fn a_request_whose_id_is_in_flight_is_refused() {
    let mut session = Session::new(GateConfig::default());
    session.listed(json!([search_tool()]));
    assert_eq!(
        session
            .client(call(json!(5), "search", json!({"query": "rust"})))
            .to_server
            .len(),
        1
    );
    let again = session.client_text(r#"{"jsonrpc":"2.0","id":5.0,"method":"ping"}"#);
    assert!(again.to_server.is_empty());
    assert_eq!(
        again.client_lines,
        [
            r#"{"jsonrpc":"2.0","id":5.0,"error":{"code":-32600,"message":"request id 5.0 is already used by a request in flight"}}"#
        ]
    );
}

#[test]
fn batches_are_checked_and_answered_as_batches_where_the_protocol_allows_them() {
    let mut session = Session::initialized(GateConfig::default(), "2025-03-26");
    session.listed(json!([search_tool()]));
    let batch = json!([
        call(json!(1), "search", json!({"query": "rust"})),
        call(json!(2), "search", json!({"query": "x"})),
        {"jsonrpc": "2.0", "method": "notifications/progress", "params": {}},
        {"jsonrpc": "2.0", "id": 3, "method": "ping"},
    ]);
    let sent = session.client(batch);
    assert!(
        sent.to_client.is_empty(),
        "answered before the server answered"
    );
    assert_eq!(sent.to_server.len(), 1);
    let forwarded = sent.to_server[0].as_array().unwrap();
    assert_eq!(forwarded.len(), 3);
    assert_eq!(forwarded[0]["id"], 1);
    assert_eq!(forwarded[2]["id"], 3);
    let answered = session.server(json!([
        {"jsonrpc": "2.0", "id": 3, "result": {}},
        {"jsonrpc": "2.0", "id": 1, "result": {"content": [], "structuredContent": {"total": 1}}},
    ]));
    assert_eq!(answered.to_client.len(), 1);
    let answers = answered.to_client[0].as_array().unwrap();
    let mut ids: Vec<i64> = answers.iter().map(|a| a["id"].as_i64().unwrap()).collect();
    ids.sort();
    assert_eq!(ids, [1, 2, 3]);
    assert!(answers.contains(&tool_error(
        json!(2),
        "argument 'query' string length must be >= 3 (got 1)"
    )));
}

#[test]
fn a_batch_with_a_request_refused_at_once_still_waits_for_the_rest() {
    let mut session = Session::initialized(GateConfig::default(), "2025-03-26");
    session.listed(json!([search_tool()]));
    let sent = session.client_text(
        r#"[{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"search","arguments":{"query":"rust"}}},{"jsonrpc":"2.0","id":1.0,"method":"ping"}]"#,
    );
    assert!(sent.to_client.is_empty());
    let answered = session.server(json!([{"jsonrpc": "2.0", "id": 1, "result": {"content": [], "structuredContent": {"total": 1}}}]));
    let answers = answered.to_client[0].as_array().unwrap();
    assert_eq!(answers.len(), 2);
    assert_eq!(answers[0]["error"]["code"], -32600);
    assert_eq!(answers[1]["result"]["structuredContent"]["total"], 1);
}

#[test]
fn batches_are_refused_with_an_answer_where_the_protocol_does_not_allow_them() {
    let mut session = Session::initialized(GateConfig::default(), "2025-11-25");
    let refused = session.client(json!([
        {"jsonrpc": "2.0", "id": 1, "method": "ping"},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": "b", "method": "ping"},
        {"jsonrpc": "2.0", "id": 7, "method": ["tools/call"]},
        {"jsonrpc": "2.0", "id": 8, "result": {}},
        5,
    ]));
    assert!(refused.to_server.is_empty());
    let answers = refused.to_client[0].as_array().unwrap();
    assert_eq!(answers.len(), 4, "{answers:?}");
    assert_eq!(answers[0]["id"], 1);
    assert_eq!(answers[1]["id"], "b");
    // A request whose method is not a string, and what is not a message, are answered too.
    assert_eq!(answers[2]["id"], 7);
    assert_eq!(answers[3]["id"], Value::Null);
    assert!(answers.iter().all(|a| a["error"]["code"] == -32600));
    assert_eq!(answers[0]["error"]["code"], -32600);
    assert!(answers[0]["error"]["message"]
        .as_str()
        .unwrap()
        .starts_with("JSON-RPC batches are not allowed in MCP 2025-11-25"));
    let empty = session.client_text("[]");
    assert_eq!(empty.to_client[0]["id"], Value::Null);
    assert_eq!(empty.to_client[0]["error"]["code"], -32600);
}

#[test]
fn a_server_gone_answers_every_request_once() {
    let mut session = Session::initialized(GateConfig::default(), "2025-03-26");
    session.listed(json!([search_tool()]));
    session.client(call(json!(1), "search", json!({"query": "rust"})));
    session.client(json!([{"jsonrpc": "2.0", "id": 2, "method": "ping"}, {"jsonrpc": "2.0", "id": 3, "method": "ping"}]));
    let mut out = Vec::new();
    session
        .gate
        .server_gone("the MCP server exited", json!({}), session.now, &mut out);
    let gone = Effects::of(out);
    assert_eq!(gone.to_client.len(), 2);
    assert_eq!(gone.to_client[0]["id"], 1);
    assert_eq!(gone.to_client[1].as_array().unwrap().len(), 2);
    assert_eq!(session.gate.requests_in_flight(), 0);
    // Later requests get the same answer, and nothing reaches the dead server.
    let later = session.client(json!({"jsonrpc": "2.0", "id": 4, "method": "ping"}));
    assert!(later.to_server.is_empty());
    assert_eq!(
        later.to_client[0]["error"]["message"],
        "the MCP server exited"
    );
}

#[test]
fn repeated_listings_replace_each_other() {
    let mut session = Session::new(GateConfig::default());
    let tools: Vec<Value> = (0..50)
        .map(|i| json!({"name": format!("t{i}"), "inputSchema": {"type": "object"}}))
        .collect();
    for _ in 0..100 {
        session.listed(json!(tools));
    }
    assert_eq!(session.gate.unlearned.len(), 1);
    session.client(call(json!(1), "t3", json!({})));
    assert!(session.gate.unlearned.is_empty());
    assert_eq!(session.gate.registry.len(), 50);
    // A listing of other tools replaces the earlier one: nothing of it is kept.
    session.listed(json!([{"name": "other", "inputSchema": {"type": "object"}}]));
    session.client(call(json!(2), "other", json!({})));
    assert_eq!(session.gate.registry.len(), 1);
    assert!(matches!(
        session.gate.registry.lookup("t3"),
        crate::registry::Lookup::Unknown
    ));
}

#[test]
fn unknown_arguments_can_be_rejected_or_reported_where_the_schema_is_open() {
    let open = json!({"name": "git_log", "inputSchema": {"type": "object", "properties": {"repo_path": {"type": "string"}}, "required": ["repo_path"]}});
    let arguments = json!({"repo_path": "/src", "maxcount": 3});
    let mut allow = Session::new(GateConfig::default());
    allow.listed(json!([open]));
    assert_eq!(
        allow
            .client(call(json!(1), "git_log", arguments.clone()))
            .to_server
            .len(),
        1
    );

    let config = GateConfig {
        unknown_arguments: UnknownArguments::Reject,
        ..GateConfig::default()
    };
    let mut reject = Session::new(config);
    reject.listed(json!([open]));
    assert_eq!(
        reject
            .client(call(json!(1), "git_log", arguments.clone()))
            .to_client,
        [tool_error(json!(1), "unexpected argument 'maxcount'")]
    );
    assert_eq!(
        reject
            .client(call(json!(2), "git_log", json!({"repo_pth": "/src"})))
            .to_client,
        [tool_error(
            json!(2),
            "missing required argument 'repo_path' (did you misspell it as 'repo_pth'?)\nunexpected argument 'repo_pth' (did you mean 'repo_path'?)"
        )]
    );

    let config = GateConfig {
        unknown_arguments: UnknownArguments::Warn,
        audit: true,
        ..GateConfig::default()
    };
    let mut warn = Session::new(config);
    warn.listed(json!([open]));
    assert_eq!(
        warn.client(call(json!(1), "git_log", arguments))
            .to_server
            .len(),
        1
    );
    let result = warn.server(json!({"jsonrpc": "2.0", "id": 1, "result": {"content": []}}));
    assert_eq!(result.audit[0].messages, ["unexpected argument 'maxcount'"]);
}

#[test]
fn input_check_warn_forwards_and_off_does_not_check() {
    let config = GateConfig {
        input_check: InputCheck::Warn,
        audit: true,
        ..GateConfig::default()
    };
    let mut warn = Session::new(config);
    warn.listed(json!([search_tool()]));
    assert_eq!(
        warn.client(call(json!(1), "search", json!({"query": "x"})))
            .to_server
            .len(),
        1
    );
    let result = warn.server(json!({"jsonrpc": "2.0", "id": 1, "result": {"content": [], "structuredContent": {"total": 1}}}));
    assert_eq!(result.audit[0].input_check, Some(InputVerdict::Failed));
    assert_eq!(
        result.audit[0].messages,
        ["argument 'query' string length must be >= 3 (got 1)"]
    );

    let config = GateConfig {
        input_check: InputCheck::Off,
        ..GateConfig::default()
    };
    let mut off = Session::new(config);
    // No listing needed: the call goes on at once.
    let sent = off.client(call(json!(1), "search", json!({"query": "x"})));
    assert_eq!(sent.to_server.len(), 1);
    assert_eq!(sent.to_server[0]["id"], 1);
}

#[test]
fn list_changed_makes_the_next_call_wait_for_a_new_listing() {
    let mut session = Session::new(GateConfig::default());
    session.listed(json!([search_tool()]));
    let notice =
        session.server(json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}));
    assert_eq!(notice.to_client.len(), 1);
    let waiting = session.client(call(
        json!(3),
        "search",
        json!({"query": "rust", "limit": 50}),
    ));
    assert_eq!(waiting.to_server[0]["method"], "tools/list");
    let mut changed = search_tool();
    changed["inputSchema"]["properties"]["limit"]["maximum"] = json!(5);
    let done = session.server(
        json!({"jsonrpc": "2.0", "id": waiting.to_server[0]["id"], "result": {"tools": [changed]}}),
    );
    assert_eq!(
        done.to_client,
        [tool_error(
            json!(3),
            "argument 'limit' value must be <= 5 (got 50)"
        )]
    );
}

#[test]
fn denied_tools_are_refused_and_hidden_from_listings() {
    let config = GateConfig {
        policy: ToolPolicy {
            deny: vec![Glob::new("delete_*")],
            ..ToolPolicy::default()
        },
        ..GateConfig::default()
    };
    let mut session = Session::new(config);
    session.client(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}));
    let listed = session.server(json!({"jsonrpc": "2.0", "id": 1, "result": {"tools": [search_tool(), {"name": "delete_all", "inputSchema": {"type": "object"}}]}}));
    assert_eq!(
        listed.to_client[0]["result"]["tools"],
        json!([search_tool()])
    );
    let refused = session.client(call(json!(2), "delete_all", json!({})));
    assert!(refused.to_server.is_empty());
    assert_eq!(
        refused.to_client,
        [
            json!({"jsonrpc": "2.0", "id": 2, "error": {"code": -32602, "message": "tool 'delete_all' is denied by this proxy (--deny delete_*)"}})
        ]
    );
}

#[test]
fn output_check_enforce_withholds_a_result_that_breaks_the_output_schema() {
    let config = GateConfig {
        output_check: OutputCheck::Enforce,
        audit: true,
        ..GateConfig::default()
    };
    let mut session = Session::new(config);
    session.listed(json!([search_tool()]));
    session.client(call(json!(4), "search", json!({"query": "rust"})));
    let result = session.server(json!({"jsonrpc": "2.0", "id": 4, "result": {"content": [], "structuredContent": {"total": "many"}}}));
    assert_eq!(
        result.to_client,
        [tool_error(
            json!(4),
            "the result of tool 'search' did not match its outputSchema and was withheld:\nfield 'total' must be an integer (got a string)"
        )]
    );
    assert_eq!(result.audit.len(), 1);
    assert_eq!(result.audit[0].output_check, Some(OutputVerdict::Enforced));
    assert_eq!(result.audit[0].verdict, Verdict::Forwarded);
}

#[test]
fn names_a_server_could_read_without_regard_to_case_are_refused() {
    let mut session = Session::new(GateConfig::default());
    let open_search = json!({
        "name": "search",
        "inputSchema": {"type": "object", "properties": {"path": {"type": "string", "pattern": "^/srv/"}, "opts": {"type": "object"}}}
    });
    session.listed(json!([open_search]));
    // In params: 'Name' beside 'name', 'argumentſ' beside 'arguments' (ſ folds to s).
    for (params, variant, meant) in [
        (
            json!({"name": "search", "Name": "delete", "arguments": {}}),
            "Name",
            "name",
        ),
        (
            json!({"name": "search", "arguments": {}, "argumentſ": {"path": "/etc"}}),
            "argumentſ",
            "arguments",
        ),
    ] {
        let sent = session
            .client(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params}));
        assert!(sent.to_server.is_empty());
        assert_eq!(sent.to_client[0]["error"]["code"], -32602);
        assert_eq!(
            sent.to_client[0]["error"]["message"],
            format!("params holds '{variant}', which a server that reads names without regard to case would take for '{meant}' in place of the one checked; it was not forwarded")
        );
    }
    // In the arguments: an undeclared name folding like a declared one, and two names of one
    // object folding alike, at any depth.
    let cases = [
        (json!({"PATH": "/etc/passwd"}), "argument 'PATH' is not declared, and a server that reads names without regard to case would take it for 'path'"),
        (json!({"path": "/srv/a", "Path": "/etc"}), "arguments 'path' and 'Path' differ only in case: a server that reads names without regard to case would take one for the other"),
        (json!({"opts": {"mode": "r", "MODE": "w"}}), "arguments 'mode' and 'MODE' (in 'opts') differ only in case: a server that reads names without regard to case would take one for the other"),
    ];
    for (arguments, message) in cases {
        let sent = session.client(call(json!(2), "search", arguments));
        assert!(sent.to_server.is_empty(), "{message}");
        assert_eq!(sent.to_client[0], tool_error(json!(2), message));
    }
    // Names that differ otherwise pass, and so does ı beside i, which Go does not fold.
    let sent = session.client(call(
        json!(3),
        "search",
        json!({"path": "/srv/a", "paths": 1}),
    ));
    assert_eq!(sent.to_server.len(), 1);
    let sent = session.client(call(
        json!(4),
        "search",
        json!({"opts": {"ıd": 1, "id": 2}}),
    ));
    assert_eq!(sent.to_server.len(), 1);
    // JSON-RPC's own members too: 'Method' beside 'method', 'Params' beside 'params'.
    for text in [
        r#"{"jsonrpc":"2.0","id":5,"method":"tools/list","Method":"tools/call","params":{"name":"search","arguments":{}}}"#,
        r#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"search","arguments":{}},"Params":{"name":"search","arguments":{"path":"/etc"}}}"#,
    ] {
        let sent = session.client_text(text);
        assert!(sent.to_server.is_empty(), "{text}");
        assert_eq!(sent.to_client[0]["id"], 5);
        assert_eq!(sent.to_client[0]["error"]["code"], -32600);
    }
}

#[test]
fn names_a_schema_declares_in_both_cases_are_not_refused() {
    let mut session = Session::new(GateConfig::default());
    let both = json!({
        "name": "plot",
        "inputSchema": {"type": "object", "properties": {"x": {"type": "number"}, "X": {"type": "number"}},
                        "allOf": [{"properties": {"mode": {"type": "string"}}}]}
    });
    session.listed(json!([both]));
    let sent = session.client(call(json!(1), "plot", json!({"x": 1, "X": 2})));
    assert_eq!(sent.to_server.len(), 1);
    // A name declared in a branch is declared: its case variant alone is refused.
    let sent = session.client(call(json!(2), "plot", json!({"MODE": "w"})));
    assert!(sent.to_server.is_empty());
    // Objects in arrays are looked at, and named by their place in the array.
    let sent = session.client(call(
        json!(3),
        "plot",
        json!({"rows": [{"a": 1}, {"b": 1, "B": 2}]}),
    ));
    assert_eq!(
        sent.to_client[0],
        tool_error(json!(3), "arguments 'b' and 'B' (in 'rows[1]') differ only in case: a server that reads names without regard to case would take one for the other")
    );
    // Names a nested object's schema declares in both cases pass there too.
    let nested = json!({
        "name": "draw",
        "inputSchema": {"type": "object", "properties": {"at": {"type": "object", "properties": {"x": {"type": "number"}, "X": {"type": "number"}}}}}
    });
    session.listed(json!([nested]));
    let sent = session.client(call(json!(4), "draw", json!({"at": {"x": 1, "X": 2}})));
    assert_eq!(sent.to_server.len(), 1);
}

/// The message for an undeclared `variant` a case-insensitive reader takes for `meant`.
fn undeclared_variant(variant: &str, meant: &str) -> String {
    format!("argument '{variant}' is not declared, and a server that reads names without regard to case would take it for '{meant}'")
}

#[test]
fn undeclared_case_variants_of_nested_declared_names_are_refused() {
    let mut session = Session::new(GateConfig::default());
    let safe_path = json!({"type": "string", "pattern": "^/safe"});
    let tools = json!([
        {"name": "nested", "inputSchema": {"type": "object", "properties": {
            "opts": {"type": "object", "properties": {"path": safe_path}}}}},
        {"name": "rows", "inputSchema": {"type": "object", "properties": {
            "rows": {"type": "array", "items": {"type": "object", "properties": {"path": safe_path}}},
            "pair": {"type": "array", "prefixItems": [{"type": "object"}, {"type": "object", "properties": {"path": safe_path}}]}}}},
        {"name": "referenced", "inputSchema": {"type": "object",
            "properties": {"target": {"$ref": "#/$defs/target"}},
            "$defs": {"target": {"type": "object", "properties": {"path": safe_path, "next": {"$ref": "#/$defs/target"}}}}}},
        {"name": "branches", "inputSchema": {"type": "object", "properties": {
            "source": {"anyOf": [
                {"type": "object", "properties": {"path": safe_path}},
                {"type": "object", "properties": {"url": {"type": "string"}, "Path": {"type": "string"}}}]}}}},
        {"name": "map", "inputSchema": {"type": "object", "properties": {
            "mounts": {"type": "object", "additionalProperties": {"type": "object", "properties": {"path": safe_path}}}}}},
        {"name": "folds", "inputSchema": {"type": "object", "properties": {
            "opts": {"type": "object", "properties": {"mask": {"type": "string"}, "kind": {"type": "string"}, "id": {"type": "integer"}}}}}}
    ]);
    session.listed(tools);
    let refused = [
        (
            "nested",
            json!({"opts": {"Path": "/etc/passwd"}}),
            "opts.Path",
            "opts.path",
        ),
        (
            "rows",
            json!({"rows": [{"path": "/safe/a"}, {"PATH": "/etc"}]}),
            "rows[1].PATH",
            "rows[1].path",
        ),
        (
            "rows",
            json!({"pair": [{}, {"pAth": "/etc"}]}),
            "pair[1].pAth",
            "pair[1].path",
        ),
        (
            "referenced",
            json!({"target": {"path": "/safe", "next": {"next": {"Path": "/etc"}}}}),
            "target.next.next.Path",
            "target.next.next.path",
        ),
        (
            "branches",
            json!({"source": {"PATH": "/etc"}}),
            "source.PATH",
            "source.path",
        ),
        (
            "map",
            json!({"mounts": {"home": {"Path": "/etc"}}}),
            "mounts.home.Path",
            "mounts.home.path",
        ),
        // ſ (U+017F) folds to s, the Kelvin sign (U+212A) to k.
        (
            "folds",
            json!({"opts": {"maſk": "x"}}),
            "opts.maſk",
            "opts.mask",
        ),
        (
            "folds",
            json!({"opts": {"\u{212A}ind": "x"}}),
            "opts.\u{212A}ind",
            "opts.kind",
        ),
    ];
    for (id, (tool, arguments, variant, meant)) in refused.into_iter().enumerate() {
        let sent = session.client(call(json!(id), tool, arguments));
        assert!(sent.to_server.is_empty(), "{variant} reached the server");
        assert_eq!(
            sent.to_client[0],
            tool_error(json!(id), &undeclared_variant(variant, meant))
        );
    }
    // Exact names, names folding to nothing declared there, a spelling one anyOf branch
    // declares ('Path' beside 'path'), and ı (dotless i, which Go does not fold to i) pass.
    let passed = [
        ("nested", json!({"opts": {"path": "/safe/a", "paths": 1}})),
        ("nested", json!({"options": {"Path": 1}})),
        (
            "rows",
            json!({"rows": [{"path": "/safe"}, {"route": "/etc"}]}),
        ),
        ("branches", json!({"source": {"Path": "/x", "url": "u"}})),
        ("map", json!({"mounts": {"Path": {"path": "/safe"}}})),
        ("folds", json!({"opts": {"ıd": 1}})),
    ];
    for (id, (tool, arguments)) in passed.into_iter().enumerate() {
        let sent = session.client(call(json!(100 + id), tool, arguments.clone()));
        assert_eq!(
            sent.to_server.len(),
            1,
            "{tool} {arguments} was refused: {:?}",
            sent.to_client
        );
    }
}

/// What a server that reads names without regard to case (Go's `encoding/json`: last one wins,
/// `ſ` is `s`, the Kelvin sign is `k`) would read otherwise than the proxy, in any member of
/// `params` the proxy reads: refused with -32602 (a notification: dropped), never forwarded.
#[test]
fn params_a_server_could_read_otherwise_are_refused_in_every_request() {
    let mut session = Session::new(GateConfig::default());
    session.listed(json!([search_tool()]));
    let meta_revision = "io.modelcontextprotocol/protocolVersion";
    for (method, params, within, variant, meant) in [
        (
            "tools/list",
            json!({"Cursor": "p8"}),
            "params",
            "Cursor",
            "cursor",
        ),
        (
            "tools/list",
            json!({"cursor": null, "CURSOR": "p8"}),
            "params",
            "CURSOR",
            "cursor",
        ),
        (
            "tools/list",
            json!({"curſor": "p8"}),
            "params",
            "curſor",
            "cursor",
        ),
        (
            "initialize",
            json!({"protocolVersion": "2025-06-18", "ProtocolVersion": "2025-03-26"}),
            "params",
            "ProtocolVersion",
            "protocolVersion",
        ),
        (
            "initialize",
            json!({"Capabilities": {}}),
            "params",
            "Capabilities",
            "capabilities",
        ),
        (
            "tools/call",
            json!({"name": "search", "arguments": {"query": "rust"}, "_Meta": {"progressToken": 1}}),
            "params",
            "_Meta",
            "_meta",
        ),
        (
            "tools/call",
            json!({"name": "search", "arguments": {"query": "rust"}, "_meta": {"progressto\u{212A}en": 1}}),
            "params._meta",
            "progressto\u{212A}en",
            "progressToken",
        ),
        (
            "tools/list",
            json!({"_meta": {"IO.modelcontextprotocol/protocolVersion": "2026-07-28"}}),
            "params._meta",
            "IO.modelcontextprotocol/protocolVersion",
            meta_revision,
        ),
        (
            "prompts/get",
            json!({"name": "p", "NAME": "q"}),
            "params",
            "NAME",
            "name",
        ),
    ] {
        let sent =
            session.client(json!({"jsonrpc": "2.0", "id": 9, "method": method, "params": params}));
        assert!(sent.to_server.is_empty(), "{method} {params}");
        assert_eq!(
            sent.to_client,
            [
                json!({"jsonrpc": "2.0", "id": 9, "error": {"code": -32602, "message": format!(
                    "{within} holds '{variant}', which a server that reads names without regard to case would take for '{meant}' in place of the one checked; it was not forwarded"
                )}})
            ],
            "{method} {params}"
        );
    }
    // A cancellation naming another request than the one the proxy read: dropped, unanswered.
    for params in [
        json!({"requestId": 3, "RequestId": "toolschema-proxy-1"}),
        json!({"requestıd": 3, "requestID": 4}),
    ] {
        let sent = session.client(
            json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": params}),
        );
        assert!(sent.nothing(), "{params}");
    }
    // Names spelled as read pass, and so do members the proxy does not read.
    let sent = session.client(json!({"jsonrpc": "2.0", "id": 10, "method": "tools/list", "params": {"cursor": null, "Limit": 3, "_meta": {"Trace": 1}}}));
    assert_eq!(sent.to_server.len(), 1);
    let sent = session.client(json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 10, "Reason": "x"}}));
    assert_eq!(sent.to_server.len(), 1);
}

/// A client's listing that the server answered with fewer tools than it has (it read the
/// request otherwise, or it hides some) never makes a call pass unchecked: the call waits for
/// the proxy's own listing and is checked against it; a tool that listing does not name either
/// is refused with a did-you-mean. Calls to unknown names relist only once per client listing.
#[test]
fn a_tool_no_listing_named_is_looked_up_in_the_proxys_own_listing() {
    let mut session = Session::new(audited());
    let echo = json!({"name": "echo", "inputSchema": {"type": "object", "properties": {"message": {"type": "string"}}}});
    // The client's first page, as the server read the request: page 2 alone, and the last.
    session.listed(json!([echo.clone()]));
    let waiting = session.client(call(json!(1), "search", json!({"query": "x"})));
    assert!(waiting.to_client.is_empty());
    assert_eq!(
        waiting.to_server,
        [json!({"jsonrpc": "2.0", "id": "toolschema-proxy-1", "method": "tools/list"})]
    );
    let listed = session.server(json!({"jsonrpc": "2.0", "id": "toolschema-proxy-1", "result": {"tools": [search_tool(), echo]}}));
    assert!(listed.to_server.is_empty());
    assert_eq!(
        listed.to_client,
        [tool_error(
            json!(1),
            "argument 'query' string length must be >= 3 (got 1)"
        )]
    );
    // Not listed to the proxy either: refused at once, as often as it is called.
    for id in 2..5 {
        let refused = session.client(call(json!(id), "serch", json!({"query": "rust"})));
        assert!(refused.to_server.is_empty());
        assert_eq!(
            refused.to_client,
            [
                json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32602, "message": "unknown tool 'serch' (did you mean 'search'?)"}})
            ]
        );
        assert_eq!(refused.audit[0].verdict, Verdict::Denied);
    }
    // A client's listing learned since: the next unknown name is looked up once more.
    session.listed(json!([]));
    let waiting = session.client(call(json!(5), "serch", json!({})));
    assert_eq!(waiting.to_server[0]["method"], "tools/list");
    let own = waiting.to_server[0]["id"].clone();
    let done =
        session.server(json!({"jsonrpc": "2.0", "id": own, "result": {"tools": [search_tool()]}}));
    assert_eq!(done.to_client[0]["error"]["code"], -32602);
    let valid = session.client(call(json!(6), "search", json!({"query": "rust"})));
    assert_eq!(valid.to_server.len(), 1);
}

/// `--unlisted forward`: a tool that the proxy's own listing does not name either is forwarded
/// unchecked, and its audit line says so; a listed tool is still checked.
#[test]
fn unlisted_forward_lets_calls_to_hidden_tools_through_after_the_own_listing() {
    let mut session = Session::new(GateConfig {
        unlisted: Unlisted::Forward,
        ..audited()
    });
    session.listed(json!([]));
    let waiting = session.client(call(json!(1), "hidden", json!({"x": 1})));
    assert_eq!(waiting.to_server[0]["method"], "tools/list");
    let own = waiting.to_server[0]["id"].clone();
    let released =
        session.server(json!({"jsonrpc": "2.0", "id": own, "result": {"tools": [search_tool()]}}));
    assert_eq!(
        released.to_server,
        [call(json!(1), "hidden", json!({"x": 1}))]
    );
    let answered = session.server(json!({"jsonrpc": "2.0", "id": 1, "result": {"content": []}}));
    assert_eq!(answered.audit[0].input_check, Some(InputVerdict::Unlisted));
    assert_eq!(
        answered.audit[0].messages,
        ["the server does not list tool 'hidden'; the call was forwarded unchecked"]
    );
    let invalid = session.client(call(json!(2), "search", json!({"query": "x"})));
    assert!(invalid.to_server.is_empty());
}

/// A member the proxy reads, given twice: servers differ on which counts (the first, the last,
/// or both merged, as Go's `encoding/json` merges into a map or a struct), so whichever the proxy
/// checked, a server may run the other. Refused, never forwarded.
#[test]
fn members_the_proxy_reads_given_twice_are_refused() {
    let mut session = Session::new(GateConfig::default());
    let wipe = json!({"name": "wipe", "inputSchema": {"type": "object", "properties": {"table": {"type": "string"}}, "additionalProperties": false}});
    session.listed(json!([wipe]));
    let twice = |what: &str| {
        format!("{what} twice, which servers read differently (the first, the last, or both merged); it was not forwarded")
    };
    // The last params checked, the first (with an argument the schema forbids) run.
    let sent = session.client_text(
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"wipe","arguments":{"drop":true}},"params":{"name":"wipe"}}"#,
    );
    assert!(sent.to_server.is_empty());
    assert_eq!(
        sent.to_client,
        [
            json!({"jsonrpc": "2.0", "id": 1, "error": {"code": -32600, "message": format!("the message holds {}", twice("'params'"))}})
        ]
    );
    for (id, params, within, member) in [
        // Merged into a map by Go: {"drop": true, "table": "t"}.
        (
            2,
            r#"{"name":"wipe","arguments":{"drop":true},"arguments":{"table":"t"}}"#,
            "params",
            "arguments",
        ),
        (
            3,
            r#"{"name":"drop","name":"wipe","arguments":{}}"#,
            "params",
            "name",
        ),
        (
            4,
            r#"{"name":"wipe","arguments":{},"_meta":{"progressToken":1,"progressToken":2}}"#,
            "params._meta",
            "progressToken",
        ),
    ] {
        let sent = session.client_text(&format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{params}}}"#
        ));
        assert!(sent.to_server.is_empty(), "{params}");
        assert_eq!(
            sent.to_client,
            [
                json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32602, "message": format!("{within} holds {}", twice(&format!("'{member}'")))}})
            ]
        );
    }
    let sent = session.client_text(
        r#"{"jsonrpc":"2.0","id":5,"method":"tools/list","params":{"cursor":"a","cursor":"b"}}"#,
    );
    assert!(sent.to_server.is_empty());
    assert_eq!(sent.to_client[0]["error"]["code"], -32602);
    // Members the proxy does not read may repeat: the server's business.
    let sent = session.client_text(
        r#"{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"wipe","arguments":{"table":"t"},"x":1,"x":2}}"#,
    );
    assert_eq!(sent.to_server.len(), 1);
}

/// A call that arrives once the server is gone never reaches it, and its audit line says so
/// (not "forwarded").
#[test]
fn a_call_after_the_server_is_gone_is_not_audited_as_forwarded() {
    let mut session = Session::new(audited());
    session.listed(json!([search_tool()]));
    let mut out = Vec::new();
    session
        .gate
        .server_gone("the MCP server exited", json!({}), session.now, &mut out);
    let later = session.client(call(json!(1), "search", json!({"query": "rust"})));
    assert!(later.to_server.is_empty());
    assert_eq!(
        later.to_client[0]["error"]["message"],
        "the MCP server exited"
    );
    assert_eq!(later.audit.len(), 1);
    assert_eq!(later.audit[0].verdict, Verdict::UncheckedRefused);
    assert_eq!(
        later.audit[0].error.as_deref(),
        Some("the MCP server exited")
    );
}

/// While the server is slow to answer the proxy's own listing, the calls that wait for it are
/// bounded in count (and bytes): past the bound a call is refused as one that cannot be checked,
/// and the calls already waiting are decided once the listing comes.
#[test]
fn the_calls_waiting_for_the_own_listing_are_bounded() {
    let mut session = Session::new(audited());
    let first = session.client(call(json!(0), "search", json!({"query": "rust"})));
    let own = first.to_server[0]["id"].clone();
    for id in 1..listing::MAX_WAITING {
        let waits = session.client(call(json!(id), "search", json!({"query": "rust"})));
        assert!(waits.nothing(), "call {id}");
    }
    let over = session.client(call(json!("over"), "search", json!({"query": "rust"})));
    assert!(over.to_server.is_empty());
    assert_eq!(
        over.to_client,
        [tool_error(
            json!("over"),
            &format!(
                "the proxy could not learn this tool's schema: {} calls ({} bytes) already wait for the proxy's listing of the tools (at most {}, {} bytes)",
                listing::MAX_WAITING,
                (0..listing::MAX_WAITING)
                    .map(|id| call(json!(id), "search", json!({"query": "rust"})).to_string().len())
                    .sum::<usize>(),
                listing::MAX_WAITING,
                listing::MAX_WAITING_BYTES
            )
        )]
    );
    assert_eq!(over.audit[0].verdict, Verdict::UncheckedRefused);
    let released =
        session.server(json!({"jsonrpc": "2.0", "id": own, "result": {"tools": [search_tool()]}}));
    assert_eq!(released.to_server.len(), listing::MAX_WAITING);
}

/// A result a client may read otherwise than the proxy checks it (a member folding like
/// `structuredContent` or `isError`, or one given twice) is not checked as if it were read
/// alike: withheld with --output-check enforce, reported and audited as unchecked with warn.
#[test]
fn a_result_a_client_could_read_otherwise_is_not_passed_as_checked() {
    for (mode, withheld) in [(OutputCheck::Enforce, true), (OutputCheck::Warn, false)] {
        let mut session = Session::new(GateConfig {
            output_check: mode,
            ..audited()
        });
        session.listed(json!([search_tool()]));
        for (id, result, what) in [
            (
                1,
                r#"{"content":[],"structuredContent":{"total":1},"StructuredContent":{"total":"many"}}"#,
                "'StructuredContent', which a client that reads names without regard to case would take for 'structuredContent'",
            ),
            (
                2,
                r#"{"content":[],"isError":true,"IsError":false,"structuredContent":{"total":"many"}}"#,
                "'IsError', which a client that reads names without regard to case would take for 'isError'",
            ),
            (
                3,
                r#"{"content":[],"structuredContent":{"total":"many"},"structuredContent":{"total":1}}"#,
                "'structuredContent' twice, which clients read differently (the first, the last, or both merged)",
            ),
        ] {
            session.client(call(json!(id), "search", json!({"query": "rust"})));
            let answered = session.server_text(&format!(
                r#"{{"jsonrpc":"2.0","id":{id},"result":{result}}}"#
            ));
            let why = format!("the result holds {what}");
            assert_eq!(answered.audit[0].output_check, Some(OutputVerdict::Unchecked));
            assert_eq!(answered.audit[0].messages, std::slice::from_ref(&why));
            if withheld {
                assert_eq!(
                    answered.to_client,
                    [tool_error(
                        json!(id),
                        &format!("the result of tool 'search' could not be checked and was withheld: {why}")
                    )]
                );
            } else {
                assert_eq!(answered.client_lines[0], format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{result}}}"#));
            }
        }
    }
}

/// A batch calling a tool no listing named waits as a whole for the proxy's own listing, and is
/// then decided call by call.
#[test]
fn a_batch_calling_an_unknown_tool_waits_for_the_own_listing() {
    let mut session = Session::initialized(GateConfig::default(), "2025-03-26");
    session.listed(json!([]));
    let waits = session.client(json!([
        call(json!(1), "serch", json!({"query": "rust"})),
        call(json!(2), "search", json!({"query": "rust"})),
    ]));
    assert!(waits.to_client.is_empty());
    assert_eq!(waits.to_server.len(), 1);
    assert_eq!(waits.to_server[0]["method"], "tools/list");
    let own = waits.to_server[0]["id"].clone();
    let released =
        session.server(json!({"jsonrpc": "2.0", "id": own, "result": {"tools": [search_tool()]}}));
    assert_eq!(
        released.to_server,
        [json!([call(json!(2), "search", json!({"query": "rust"}))])]
    );
    let answered = session.server(json!([{"jsonrpc": "2.0", "id": 2, "result": {"content": [], "structuredContent": {"total": 1}}}]));
    assert_eq!(
        answered.to_client,
        [json!([
            {"jsonrpc": "2.0", "id": 1, "error": {"code": -32602, "message": "unknown tool 'serch' (did you mean 'search'?)"}},
            {"jsonrpc": "2.0", "id": 2, "result": {"content": [], "structuredContent": {"total": 1}}}
        ])]
    );
}

/// Numbers are judged as the text of the call states them, in arguments and in structured
/// content (before, each of these was refused as "could not be checked": a float past 2^52
/// where the schema compares it exactly).
#[test]
fn numbers_are_judged_as_the_text_states_them() {
    let mut session = Session::new(GateConfig {
        output_check: OutputCheck::Enforce,
        ..GateConfig::default()
    });
    let tool = json!({
        "name": "pick",
        "inputSchema": {"type": "object", "properties": {"id": {"const": 9007199254740992_u64}}},
        "outputSchema": {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}
    });
    session.listed(json!([tool]));
    let equal = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"pick","arguments":{"id":9007199254740992.0}}}"#;
    let passed = session.client_text(equal);
    assert_eq!(passed.to_server.len(), 1, "{:?}", passed.to_client);
    let other = r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"pick","arguments":{"id":9007199254740993.0}}}"#;
    let refused = session.client_text(other);
    assert!(refused.to_server.is_empty());
    assert_eq!(
        refused.to_client,
        [tool_error(
            json!(2),
            "argument 'id' must be exactly 9007199254740992"
        )]
    );
    // A structured result whose `n` is written with a fraction past 2^53 is not an integer
    // (read as a float, it is one: the check used to say it "could not be checked").
    let answered = session.server_text(
        r#"{"jsonrpc":"2.0","id":1,"result":{"content":[],"structuredContent":{"n":9007199254740993.5}}}"#,
    );
    assert_eq!(
        answered.to_client,
        [tool_error(
            json!(1),
            "the result of tool 'pick' did not match its outputSchema and was withheld:\nfield 'n' must be an integer (got a number)"
        )]
    );
}
