//! The gate driven in-process: messages in, actions out, time given by the test.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use super::*;
use crate::proxy::policy::Glob;
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
    audit: Vec<AuditRecord>,
}

impl Effects {
    fn of(actions: Vec<Action>) -> Effects {
        let mut effects = Effects::default();
        for action in actions {
            match action {
                Action::ToServer(line) => effects.to_server.push(parse(&line)),
                Action::ToClient(line) => effects.to_client.push(parse(&line)),
                Action::Audit(record) => effects.audit.push(*record),
            }
        }
        effects
    }
}

fn parse(line: &[u8]) -> Value {
    serde_json::from_slice(line)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(line)))
}

impl Session {
    fn new(config: GateConfig) -> Session {
        Session {
            gate: Gate::new(config),
            now: Instant::now(),
        }
    }

    fn client(&mut self, message: Value) -> Effects {
        let mut out = Vec::new();
        self.gate
            .client_message(message.to_string().into_bytes(), self.now, &mut out);
        Effects::of(out)
    }

    fn server(&mut self, message: Value) -> Effects {
        let mut out = Vec::new();
        self.gate
            .server_message(message.to_string().into_bytes(), self.now, &mut out);
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

#[test]
fn a_server_gone_during_the_own_listing_answers_the_waiting_call() {
    let mut session = Session::new(GateConfig::default());
    session.client(call(json!(1), "search", json!({"query": "rust"})));
    let mut out = Vec::new();
    session.gate.server_gone(
        "the MCP server exited",
        json!({"exitCode": 4}),
        session.now,
        &mut out,
    );
    let effects = Effects::of(out);
    assert!(effects.to_server.is_empty());
    assert_eq!(
        effects.to_client,
        [
            json!({"jsonrpc": "2.0", "id": 1, "error": {"code": -32000, "message": "the MCP server exited", "data": {"exitCode": 4}}})
        ]
    );
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
            allow: Vec::new(),
            deny: vec![Glob::new("delete_*")],
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
            "the result of tool 'search' did not match its outputSchema and was withheld:\nfield 'total' must be an integer"
        )]
    );
    assert_eq!(result.audit.len(), 1);
    assert_eq!(result.audit[0].output_check, Some(OutputVerdict::Enforced));
    assert_eq!(result.audit[0].verdict, Verdict::Forwarded);
}

#[test]
fn an_own_listing_that_times_out_lets_the_waiting_call_be_decided() {
    let mut session = Session::new(GateConfig::default());
    session.client(call(json!(1), "search", json!({"query": "rust"})));
    // Another message waits behind the listing.
    let parked = session.client(json!({"jsonrpc": "2.0", "id": 2, "method": "ping"}));
    assert!(parked.to_server.is_empty());
    assert!(session.advance(Duration::from_secs(1)).to_server.is_empty());
    let expired = session.advance(DEFAULT_LISTING_TIMEOUT);
    assert_eq!(expired.to_server.len(), 2);
    assert_eq!(expired.to_server[0]["id"], 1);
    assert_eq!(expired.to_server[1]["method"], "ping");
    assert_eq!(session.gate.next_deadline(), None);
}
