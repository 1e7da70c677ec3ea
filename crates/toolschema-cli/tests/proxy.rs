//! `toolschema proxy` in front of the project's recording server (interop/recording-server.mjs),
//! driven line by line: what the client sees, byte for byte, and what reached the server.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{recorded, recorded_lines, recording_server, Session};
use serde_json::{json, Value};
use std::path::PathBuf;

struct Setup {
    _dir: tempfile::TempDir,
    record: PathBuf,
}

fn setup() -> Setup {
    let dir = tempfile::tempdir().unwrap();
    let record = dir.path().join("received.jsonl");
    Setup { _dir: dir, record }
}

fn start(setup: &Setup, proxy_args: &[&str], server_args: &[&str]) -> Session {
    let mut session = Session::proxy(proxy_args, &recording_server(&setup.record, server_args));
    session.initialize();
    session
}

fn call(id: impl Into<Value>, name: &str, arguments: Value) -> String {
    json!({"jsonrpc": "2.0", "id": id.into(), "method": "tools/call", "params": {"name": name, "arguments": arguments}}).to_string()
}

fn list(id: u64) -> String {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/list"}).to_string()
}

/// The ids of the requests (not responses) the server received, in order.
fn received_ids(setup: &Setup) -> Vec<Value> {
    recorded(&setup.record)
        .into_iter()
        .filter(|m| m.get("method").is_some())
        .filter_map(|m| m.get("id").cloned())
        .collect()
}

fn tool_error(id: u64, text: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "result": {"content": [{"type": "text", "text": text}], "isError": true}})
}

fn rpc_error(id: u64, code: i64, message: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
}

#[test]
fn messages_pass_through_byte_for_byte_in_both_directions() {
    let setup = setup();
    let mut proxy = Session::proxy(&[], &recording_server(&setup.record, &[]));
    let initialize = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"sampling":{}},"clientInfo":{"name":"test","version":"1"}}}"#;
    proxy.send(initialize);
    assert_eq!(
        proxy.recv_line(),
        r#"{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{"listChanged":true},"logging":{}},"serverInfo":{"name":"recording-server","version":"1.0.0"}}}"#
    );
    // Odd spacing, key order and methods nobody knows arrive exactly as sent.
    let initialized = r#"{"method":"notifications/initialized","jsonrpc":"2.0"}"#;
    let custom_notification = r#"{ "jsonrpc" : "2.0", "method": "notifications/x-vendor/ping", "params": {"z": 1, "a": [1,  2]} }"#;
    let custom_request =
        r#"{"params":{"b":{"y":2,"x":1}},"method":"vendor/custom","id":"c-1","jsonrpc":"2.0"}"#;
    let valid_call = r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","arguments":{"message":"héllo \u00e9"},"_meta":{"progressToken":"p"}}}"#;
    proxy.send(initialized);
    proxy.send(custom_notification);
    proxy.send(custom_request);
    assert_eq!(
        proxy.recv_line(),
        r#"{"jsonrpc":"2.0","id":"c-1","result":{"echoed":{"method":"vendor/custom","params":{"b":{"y":2,"x":1}}}}}"#
    );
    proxy.send(valid_call);
    assert_eq!(
        proxy.recv_line(),
        r#"{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"echo: héllo é"}]}}"#
    );
    // A server-to-client request and the client's answer pass through too.
    proxy.send(&call(8, "ask_client", json!({})));
    let ask = proxy.recv();
    assert_eq!(ask["method"], "sampling/createMessage");
    assert_eq!(ask["id"], "srv-8");
    let answer = r#"{"jsonrpc":"2.0","id":"srv-8","result":{"role":"assistant","content":{"type":"text","text":"hi"},"model":"m"}}"#;
    proxy.send(answer);
    let result = proxy.recv();
    assert_eq!(result["id"], 8);
    assert_eq!(
        result["result"]["content"][0]["text"],
        serde_json::to_string(&serde_json::from_str::<Value>(answer).unwrap()).unwrap()
    );
    // Notifications from the server arrive in order, before the result.
    proxy.send(r#"{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"progress","arguments":{},"_meta":{"progressToken":42}}}"#);
    for step in 1..=3 {
        assert_eq!(
            proxy.recv_line(),
            format!(
                r#"{{"jsonrpc":"2.0","method":"notifications/progress","params":{{"progressToken":42,"progress":{step},"total":3}}}}"#
            )
        );
    }
    assert_eq!(
        proxy.recv_line(),
        r#"{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","logger":"recording-server","data":"progress done"}}"#
    );
    assert_eq!(proxy.recv()["id"], 9);
    proxy.send(r#"{"jsonrpc":"2.0","id":10,"method":"ping"}"#);
    assert_eq!(
        proxy.recv_line(),
        r#"{"jsonrpc":"2.0","id":10,"result":{}}"#
    );

    let lines = recorded_lines(&setup.record);
    for sent in [
        initialize,
        initialized,
        custom_notification,
        custom_request,
        valid_call,
        answer,
    ] {
        assert!(
            lines.iter().any(|line| line == sent),
            "the server did not receive exactly {sent}\nit received:\n{}",
            lines.join("\n")
        );
    }
}

#[test]
fn messages_keep_their_order_under_load() {
    let setup = setup();
    let mut proxy = start(&setup, &[], &[]);
    proxy.send(&list(1));
    proxy.recv_reply();
    // Even ids are valid calls, odd ones are rejected by the proxy; all sent in one burst.
    let mut burst = String::new();
    for id in 100..400 {
        let message = if id % 2 == 0 {
            json!({"message": format!("m{id}")})
        } else {
            json!({"message": id})
        };
        burst.push_str(&call(id, "echo", message));
        burst.push('\n');
    }
    proxy.send_bytes(burst.as_bytes());
    let mut answered = Vec::new();
    for _ in 100..400 {
        answered.push(proxy.recv_reply()["id"].as_u64().unwrap());
    }
    let in_order = |even: u64| -> (Vec<u64>, Vec<u64>) {
        let got = answered
            .iter()
            .copied()
            .filter(|id| id % 2 == even)
            .collect();
        let want = (100..400).filter(|id| id % 2 == even).collect();
        (got, want)
    };
    let (got, want) = in_order(0);
    assert_eq!(got, want, "forwarded calls answered out of order");
    let (got, want) = in_order(1);
    assert_eq!(got, want, "rejected calls answered out of order");
    let received: Vec<Value> = received_ids(&setup).into_iter().skip(2).collect();
    let forwarded: Vec<Value> = (100..400)
        .filter(|id| id % 2 == 0)
        .map(|id| json!(id))
        .collect();
    assert_eq!(received, forwarded);
}

#[test]
fn invalid_arguments_are_answered_by_the_proxy_and_never_reach_the_server() {
    let setup = setup();
    let mut proxy = start(&setup, &[], &[]);
    proxy.send(&list(1));
    proxy.recv_reply();
    proxy.send(&call(
        2,
        "search",
        json!({"query": "ab", "limit": 500, "extra": 1}),
    ));
    assert_eq!(
        proxy.recv(),
        tool_error(
            2,
            "argument 'query' string length must be >= 3 (got 2)\nargument 'limit' value must be <= 100 (got 500)\nunexpected argument 'extra'"
        )
    );
    // Absent arguments are an empty object.
    proxy.send(r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"search"}}"#);
    assert_eq!(
        proxy.recv(),
        tool_error(3, "missing required argument 'query'")
    );
    proxy.send(&call(4, "search", json!({"query": "rust", "limt": 5})));
    assert_eq!(
        proxy.recv(),
        tool_error(4, "unexpected argument 'limt' (did you mean 'limit'?)")
    );
    // Arguments that are not an object are a protocol error.
    proxy.send(&call(5, "search", json!(["rust"])));
    assert_eq!(
        proxy.recv(),
        rpc_error(
            5,
            -32602,
            "arguments of tool 'search' must be a JSON object (got an array)"
        )
    );
    proxy.send(&call(6, "search", json!({"query": "rust", "limit": 3})));
    let valid = proxy.recv();
    assert_eq!(valid["id"], 6);
    assert_eq!(
        valid["result"]["structuredContent"],
        json!({"total": 3, "query": "rust"})
    );
    assert_eq!(received_ids(&setup), [json!(0), json!(1), json!(6)]);
}

#[test]
fn a_call_before_any_listing_makes_the_proxy_list_every_page_itself() {
    let setup = setup();
    let mut proxy = start(&setup, &[], &["--page-size", "4", "--extra-tools", "5"]);
    proxy.send(&call(1, "extra_4", json!({"n": 10})));
    // The proxy's own listing is not passed on: the next line is the answer to the call.
    assert_eq!(
        proxy.recv(),
        tool_error(1, "argument 'n' value must be <= 4 (got 10)")
    );
    let received = recorded(&setup.record);
    let own: Vec<&Value> = received
        .iter()
        .filter(|m| m["method"] == "tools/list")
        .collect();
    assert_eq!(
        own,
        [
            &json!({"jsonrpc": "2.0", "id": "toolschema-proxy-1", "method": "tools/list"}),
            &json!({"jsonrpc": "2.0", "id": "toolschema-proxy-2", "method": "tools/list", "params": {"cursor": "page-4"}}),
            &json!({"jsonrpc": "2.0", "id": "toolschema-proxy-3", "method": "tools/list", "params": {"cursor": "page-8"}}),
            &json!({"jsonrpc": "2.0", "id": "toolschema-proxy-4", "method": "tools/list", "params": {"cursor": "page-12"}}),
        ]
    );
    // Known now: no more listing for the next call.
    proxy.send(&call(2, "extra_3", json!({"n": 3})));
    assert_eq!(proxy.recv()["id"], 2);
    let lists = recorded(&setup.record)
        .iter()
        .filter(|m| m["method"] == "tools/list")
        .count();
    assert_eq!(lists, 4);
}

#[test]
fn the_proxys_own_ids_never_take_a_clients_id() {
    let setup = setup();
    let mut proxy = start(&setup, &[], &[]);
    // The call waiting for the proxy's listing has the id the proxy would use first.
    proxy.send(&call("toolschema-proxy-1", "echo", json!({"message": "a"})));
    assert_eq!(proxy.recv()["id"], "toolschema-proxy-1");
    proxy.send(&call(2, "change_tools", json!({})));
    assert_eq!(proxy.recv()["method"], "notifications/tools/list_changed");
    assert_eq!(proxy.recv()["id"], 2);
    // A call still in flight holds the id the proxy would use next.
    proxy.send(&call("toolschema-proxy-4", "slow", json!({"ms": 1000})));
    proxy.send(&call(5, "change_tools", json!({})));
    assert_eq!(proxy.recv()["method"], "notifications/tools/list_changed");
    assert_eq!(proxy.recv()["id"], 5);
    proxy.send(&call(6, "search", json!({"query": "x"})));
    assert_eq!(
        proxy.recv(),
        tool_error(6, "argument 'query' string length must be >= 3 (got 1)")
    );
    let slow = proxy.recv();
    assert_eq!(slow["id"], "toolschema-proxy-4");
    assert_eq!(slow["result"]["content"][0]["text"], "slow done");
    let lists: Vec<Value> = recorded(&setup.record)
        .into_iter()
        .filter(|m| m["method"] == "tools/list")
        .map(|m| m["id"].clone())
        .collect();
    assert_eq!(
        lists,
        [
            json!("toolschema-proxy-2"),
            json!("toolschema-proxy-3"),
            json!("toolschema-proxy-5")
        ]
    );
}

#[test]
fn learns_tools_from_the_clients_paginated_listing() {
    let setup = setup();
    let mut proxy = start(&setup, &[], &["--page-size", "4", "--extra-tools", "5"]);
    let mut cursor: Option<String> = None;
    let mut names = Vec::new();
    for id in 1.. {
        let mut request = json!({"jsonrpc": "2.0", "id": id, "method": "tools/list"});
        if let Some(cursor) = &cursor {
            request["params"] = json!({"cursor": cursor});
        }
        proxy.send(&request.to_string());
        let page = proxy.recv_reply();
        for tool in page["result"]["tools"].as_array().unwrap() {
            names.push(tool["name"].as_str().unwrap().to_string());
        }
        match page["result"]["nextCursor"].as_str() {
            Some(next) => cursor = Some(next.to_string()),
            None => break,
        }
    }
    assert_eq!(names.len(), 15);
    proxy.send(&call(50, "extra_4", json!({"n": 7})));
    assert_eq!(
        proxy.recv(),
        tool_error(50, "argument 'n' value must be <= 4 (got 7)")
    );
    let own = recorded(&setup.record)
        .iter()
        .filter(|m| {
            m["id"]
                .as_str()
                .is_some_and(|id| id.starts_with("toolschema-proxy"))
        })
        .count();
    assert_eq!(
        own, 0,
        "the proxy listed although the client had listed every page"
    );
}

#[test]
fn list_changed_makes_the_proxy_check_against_the_new_tools() {
    let setup = setup();
    let mut proxy = start(&setup, &[], &[]);
    proxy.send(&list(1));
    proxy.recv_reply();
    proxy.send(&call(2, "search", json!({"query": "rust", "limit": 50})));
    assert_eq!(proxy.recv()["result"]["structuredContent"]["total"], 50);
    proxy.send(&call(3, "change_tools", json!({})));
    assert_eq!(
        proxy.recv_line(),
        r#"{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}"#
    );
    assert_eq!(proxy.recv()["id"], 3);
    // The client has not listed again: the proxy does, and checks against the new schema.
    proxy.send(&call(4, "search", json!({"query": "rust", "limit": 50})));
    assert_eq!(
        proxy.recv(),
        tool_error(4, "argument 'limit' value must be <= 5 (got 50)")
    );
    proxy.send(&call(5, "search", json!({"query": "rust", "limit": 5})));
    assert_eq!(proxy.recv()["result"]["structuredContent"]["total"], 5);
    assert_eq!(
        received_ids(&setup),
        [
            json!(0),
            json!(1),
            json!(2),
            json!(3),
            json!("toolschema-proxy-1"),
            json!(5)
        ]
    );
}

#[test]
fn denied_tools_disappear_from_listings_and_their_calls_are_refused() {
    let setup = setup();
    let mut proxy = start(&setup, &["--deny", "delete_*", "--deny", "crash"], &[]);
    proxy.send(&list(1));
    let listed = proxy.recv_reply();
    let names: Vec<&str> = listed["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "search",
            "echo",
            "slow",
            "malformed_then_answer",
            "big",
            "change_tools",
            "progress",
            "ask_client"
        ]
    );
    // What is left of the listing keeps every field in the server's order.
    assert_eq!(
        serde_json::to_string(&listed["result"]["tools"][1]).unwrap(),
        r#"{"inputSchema":{"additionalProperties":false,"required":["message"],"properties":{"message":{"type":"string"}},"type":"object"},"name":"echo"}"#
    );
    proxy.send(&call(2, "delete_everything", json!({})));
    assert_eq!(
        proxy.recv(),
        rpc_error(
            2,
            -32602,
            "tool 'delete_everything' is denied by this proxy (--deny delete_*)"
        )
    );
    assert_eq!(received_ids(&setup), [json!(0), json!(1)]);
}

#[test]
fn allow_lets_only_matching_tools_through() {
    let setup = setup();
    let mut proxy = start(&setup, &["--allow", "se*", "--allow", "echo"], &[]);
    proxy.send(&list(1));
    let names: Vec<String> = proxy.recv_reply()["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(names, ["search", "echo"]);
    proxy.send(&call(2, "progress", json!({})));
    assert_eq!(
        proxy.recv(),
        rpc_error(
            2,
            -32602,
            "tool 'progress' is not allowed by this proxy (it matches no --allow pattern)"
        )
    );
    proxy.send(&call(3, "echo", json!({"message": "ok"})));
    assert_eq!(proxy.recv()["result"]["content"][0]["text"], "echo: ok");
}

/// A call to a tool the client's listing did not name waits for the proxy's own listing, and is
/// refused when that does not name it either (by default, and with the older `--deny-unlisted`),
/// or forwarded with `--unlisted forward`.
#[test]
fn unknown_tools_are_refused_after_the_proxys_own_listing_unless_forwarded() {
    for flags in [&[][..], &["--deny-unlisted"], &["--unlisted", "refuse"]] {
        let setup = setup();
        let mut proxy = start(&setup, flags, &[]);
        proxy.send(&list(1));
        proxy.recv_reply();
        proxy.send(&call(2, "serch", json!({"query": "rust"})));
        assert_eq!(
            proxy.recv(),
            rpc_error(2, -32602, "unknown tool 'serch' (did you mean 'search'?)"),
            "{flags:?}"
        );
        // Refused at once from then on: the proxy lists once per listing of the client's.
        proxy.send(&call(3, "serch", json!({})));
        assert_eq!(proxy.recv()["error"]["code"], -32602);
        assert_eq!(
            received_ids(&setup),
            [json!(0), json!(1), json!("toolschema-proxy-1")]
        );
    }

    let setup = self::setup();
    let mut proxy = start(&setup, &["--unlisted", "forward"], &[]);
    proxy.send(&list(1));
    proxy.recv_reply();
    proxy.send(&call(2, "serch", json!({"query": "rust"})));
    assert_eq!(proxy.recv(), rpc_error(2, -32602, "Unknown tool: serch"));
    assert_eq!(
        received_ids(&setup),
        [json!(0), json!(1), json!("toolschema-proxy-1"), json!(2)]
    );
}

#[test]
fn the_audit_log_has_one_line_per_call() {
    let setup = setup();
    let audit = setup.record.with_file_name("audit.jsonl");
    let audit_arg = audit.display().to_string();
    let mut proxy = start(
        &setup,
        &[
            "--audit",
            &audit_arg,
            "--audit-arguments",
            "--deny",
            "delete_*",
        ],
        &[],
    );
    proxy.send(&list(1));
    proxy.recv_reply();
    for (id, name, arguments) in [
        (2, "search", json!({"query": "rust"})),
        (3, "search", json!({"query": "r"})),
        (4, "delete_everything", json!({})),
        (5, "search", json!({"query": "bad-output"})),
        (6, "search", json!({"query": "tool-error"})),
        (7, "echo", json!({"message": "hi"})),
        (8, "nosuch", json!({})),
    ] {
        proxy.send(&call(id, name, arguments));
        proxy.recv_reply();
    }
    proxy.close_stdin();
    let (status, _) = proxy.wait();
    assert!(status.success());
    let lines: Vec<Value> = std::fs::read_to_string(&audit)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let stable: Vec<Value> = lines
        .iter()
        .map(|line| {
            let mut line = line.clone();
            let map = line.as_object_mut().unwrap();
            assert!(map.remove("time").unwrap().as_str().unwrap().ends_with('Z'));
            assert!(map.remove("duration_ms").unwrap().as_f64().unwrap() >= 0.0);
            line
        })
        .collect();
    assert_eq!(
        stable,
        [
            json!({"id": 2, "tool": "search", "verdict": "forwarded", "messages": [], "isError": false, "input_check": "passed", "output_check": "passed", "arguments": {"query": "rust"}}),
            json!({"id": 3, "tool": "search", "verdict": "rejected", "messages": ["argument 'query' string length must be >= 3 (got 1)"], "isError": true, "input_check": "failed", "output_check": null, "arguments": {"query": "r"}}),
            json!({"id": 4, "tool": "delete_everything", "verdict": "denied", "messages": ["tool 'delete_everything' is denied by this proxy (--deny delete_*)"], "isError": null, "input_check": null, "output_check": null, "arguments": {}}),
            json!({"id": 5, "tool": "search", "verdict": "forwarded", "messages": ["field 'total' must be an integer (got a string)"], "isError": false, "input_check": "passed", "output_check": "failed", "arguments": {"query": "bad-output"}}),
            json!({"id": 6, "tool": "search", "verdict": "forwarded", "messages": [], "isError": true, "input_check": "passed", "output_check": "skipped", "arguments": {"query": "tool-error"}}),
            json!({"id": 7, "tool": "echo", "verdict": "forwarded", "messages": [], "isError": false, "input_check": "passed", "output_check": "no_schema", "arguments": {"message": "hi"}}),
            json!({"id": 8, "tool": "nosuch", "verdict": "denied", "messages": ["unknown tool 'nosuch'"], "isError": null, "input_check": null, "output_check": null, "arguments": {}}),
        ]
    );
}

#[test]
fn audit_arguments_are_left_out_unless_asked_for() {
    let setup = setup();
    let audit = setup.record.with_file_name("audit.jsonl");
    let audit_arg = audit.display().to_string();
    let mut proxy = start(&setup, &["--audit", &audit_arg], &[]);
    proxy.send(&call(1, "search", json!({"query": "secret"})));
    proxy.recv_reply();
    proxy.close_stdin();
    proxy.wait();
    let text = std::fs::read_to_string(&audit).unwrap();
    assert_eq!(text.lines().count(), 1);
    assert!(!text.contains("secret"), "{text}");
}

#[test]
fn output_check_warn_reports_and_passes_the_result_on() {
    let setup = setup();
    let mut proxy = start(&setup, &[], &[]);
    proxy.send(&list(1));
    proxy.recv_reply();
    proxy.send(&call(2, "search", json!({"query": "bad-output"})));
    assert_eq!(
        proxy.recv_line(),
        r#"{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"bad"}],"structuredContent":{"total":"many"}}}"#
    );
    proxy.close_stdin();
    let (_, stderr) = proxy.wait();
    assert!(
        stderr.contains("toolschema proxy: tool 'search' returned a result that does not match its outputSchema: field 'total' must be an integer (got a string)\n"),
        "{stderr}"
    );
}

#[test]
fn output_check_enforce_replaces_the_result_with_an_error() {
    let setup = setup();
    let mut proxy = start(&setup, &["--output-check", "enforce"], &[]);
    proxy.send(&list(1));
    proxy.recv_reply();
    proxy.send(&call(2, "search", json!({"query": "bad-output"})));
    assert_eq!(
        proxy.recv(),
        tool_error(
            2,
            "the result of tool 'search' did not match its outputSchema and was withheld:\nfield 'total' must be an integer (got a string)"
        )
    );
    proxy.send(&call(3, "search", json!({"query": "no-structured"})));
    assert_eq!(
        proxy.recv(),
        tool_error(
            3,
            "the result of tool 'search' did not match its outputSchema and was withheld:\nstructured content is missing; the tool declares an outputSchema"
        )
    );
    // Error results are not held to the schema.
    proxy.send(&call(4, "search", json!({"query": "tool-error"})));
    assert_eq!(
        proxy.recv_line(),
        r#"{"jsonrpc":"2.0","id":4,"result":{"content":[{"type":"text","text":"search backend down"}],"isError":true}}"#
    );
    proxy.send(&call(5, "search", json!({"query": "good"})));
    assert_eq!(proxy.recv()["result"]["structuredContent"]["total"], 10);
}

#[test]
fn output_check_off_passes_everything() {
    let setup = setup();
    let mut proxy = start(&setup, &["--output-check", "off"], &[]);
    proxy.send(&list(1));
    proxy.recv_reply();
    proxy.send(&call(2, "search", json!({"query": "bad-output"})));
    assert_eq!(proxy.recv()["result"]["structuredContent"]["total"], "many");
    proxy.close_stdin();
    let (_, stderr) = proxy.wait();
    assert!(!stderr.contains("outputSchema"), "{stderr}");
}

#[test]
fn a_server_crash_fails_requests_in_flight_and_the_proxy_exits_with_its_code() {
    let setup = setup();
    let mut proxy = start(&setup, &[], &[]);
    proxy.send(&call(1, "slow", json!({"ms": 10_000})));
    proxy.send(&call(2, "crash", json!({})));
    let data = json!({"exitCode": 3, "stderr": ["recording-server: fatal: crash requested"]});
    for id in [1, 2] {
        assert_eq!(
            proxy.recv(),
            json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32000, "message": "the MCP server exited (exit code 3) before answering", "data": data}})
        );
    }
    let (status, stderr) = proxy.wait();
    assert_eq!(status.code(), Some(3));
    assert!(
        stderr.contains("exited with exit code 3; the last lines of its stderr:\n  | recording-server: fatal: crash requested\n"),
        "{stderr}"
    );
}

#[test]
fn a_call_waiting_for_the_proxys_own_listing_is_answered_when_the_server_dies() {
    let setup = setup();
    let mut proxy = start(&setup, &[], &["--crash-on-list"]);
    // No listing yet: the proxy lists the tools itself before it checks the call, and the server
    // dies on that listing.
    proxy.send(&call(1, "search", json!({"query": "rust"})));
    let data = json!({"exitCode": 4, "stderr": ["recording-server: fatal: crash on tools/list requested"]});
    assert_eq!(
        proxy.recv(),
        json!({"jsonrpc": "2.0", "id": 1, "error": {"code": -32000, "message": "the MCP server exited (exit code 4) before answering", "data": data}})
    );
    let (status, _) = proxy.wait();
    assert_eq!(status.code(), Some(4));
    // The call itself never reached the server.
    assert_eq!(
        received_ids(&setup).len(),
        2,
        "initialize and the proxy's tools/list only"
    );
}

#[test]
fn end_of_input_from_the_client_shuts_the_server_down_and_exits_zero() {
    let setup = setup();
    let mut proxy = start(&setup, &[], &[]);
    proxy.send(&call(1, "echo", json!({"message": "last"})));
    // The answer to a call sent just before the end of input still arrives.
    proxy.close_stdin();
    assert_eq!(proxy.recv()["result"]["content"][0]["text"], "echo: last");
    let (status, stderr) = proxy.wait();
    assert_eq!(status.code(), Some(0), "{stderr}");
}

#[test]
fn a_server_that_ignores_end_of_input_is_stopped() {
    // `sleep` never reads its input; the proxy must stop it after the grace period.
    let mut proxy = Session::proxy(
        &[],
        &[
            "sh".into(),
            "-c".into(),
            "echo $$ >&2; exec sleep 600".into(),
        ],
    );
    let pid: u32 = proxy
        .first_stderr_line()
        .parse()
        .expect("the server's pid on stderr");
    assert!(common::alive(pid));
    proxy.close_stdin();
    let (status, stderr) = proxy.wait();
    assert_eq!(status.code(), Some(0), "{stderr}");
    assert!(!common::alive(pid), "the server is still running");
}

#[test]
fn malformed_messages_are_reported_and_skipped() {
    let setup = setup();
    let mut proxy = start(&setup, &[], &[]);
    proxy.send("this is not JSON");
    // A batch is answered, never dropped: this session's protocol does not allow them. As
    // JSON-RPC 2.0 answers `[1, 2]`: an error for each element, as a batch.
    proxy.send("[1, 2]");
    let refusal = r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"JSON-RPC batches are not allowed in MCP 2025-11-25 (only in 2025-03-26); send each message on its own"}}"#;
    assert_eq!(proxy.recv_line(), format!("[{refusal},{refusal}]"));
    proxy.send("{\"jsonrpc\": \"2.0\", \"id\": 3,");
    proxy.send(r#"{"jsonrpc":"2.0","id":4,"method":"ping"}"#);
    assert_eq!(proxy.recv_line(), r#"{"jsonrpc":"2.0","id":4,"result":{}}"#);
    proxy.send(&call(5, "malformed_then_answer", json!({})));
    assert_eq!(
        proxy.recv_line(),
        r#"{"jsonrpc":"2.0","id":5,"result":{"content":[{"type":"text","text":"answered after a malformed line"}]}}"#
    );
    proxy.close_stdin();
    let (_, stderr) = proxy.wait();
    for expected in [
        "toolschema proxy: skipped a message from the client: not valid JSON: invalid literal, expected `true` at column 1: this is not JSON\n",
        "toolschema proxy: refused a JSON-RPC batch from the client: JSON-RPC batches are not allowed in MCP 2025-11-25 (only in 2025-03-26); send each message on its own\n",
        "toolschema proxy: skipped a message from the client: not valid JSON: unexpected end of input: expected an object key at column 28: {\"jsonrpc\": \"2.0\", \"id\": 3,\n",
        "toolschema proxy: skipped a message from the server: not valid JSON: invalid literal, expected `true` at column 1: this line is not JSON\n",
    ] {
        assert!(stderr.contains(expected), "missing {expected:?} in:\n{stderr}");
    }
    let lines = recorded_lines(&setup.record);
    assert!(
        !lines
            .iter()
            .any(|l| l.contains("not JSON") || l.starts_with('[')),
        "{lines:?}"
    );
}

#[test]
fn arguments_nested_too_deep_to_check_are_refused_and_audited() {
    let setup = setup();
    let audit = setup.record.with_file_name("audit.jsonl");
    let audit_arg = audit.display().to_string();
    let mut proxy = start(&setup, &["--audit", &audit_arg, "--audit-arguments"], &[]);
    let deep = format!("{}1{}", "[".repeat(200), "]".repeat(200));
    proxy.send(&format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"search","arguments":{{"query":{deep}}}}}}}"#
    ));
    let reply = proxy.recv();
    assert_eq!(reply["error"]["code"], -32602, "{reply}");
    let message = reply["error"]["message"].as_str().unwrap();
    assert!(
        message.starts_with(
            "the tools/call request cannot be checked: not valid JSON: JSON nests deeper than 128 levels"
        ),
        "{message}"
    );
    proxy.close_stdin();
    proxy.wait();
    assert!(!received_ids(&setup).contains(&json!(1)));
    let line: Value =
        serde_json::from_str(std::fs::read_to_string(&audit).unwrap().trim_end()).unwrap();
    assert_eq!(line["tool"], "search");
    assert_eq!(line["verdict"], "rejected");
    assert_eq!(line["messages"], json!([message]));
    assert_eq!(line["arguments"], Value::Null, "too deep to record");
}

#[test]
fn messages_over_the_limit_are_refused_in_both_directions() {
    let setup = setup();
    let mut proxy = start(&setup, &["--max-message-bytes", "4KiB"], &[]);
    let big_call = call(7, "echo", json!({"message": "m".repeat(10_000)}));
    proxy.send(&big_call);
    assert_eq!(
        proxy.recv(),
        rpc_error(
            7,
            -32600,
            &format!(
                "message of {} bytes refused by the proxy: the limit is 4096 bytes",
                big_call.len()
            )
        )
    );
    proxy.send(&call(8, "big", json!({"bytes": 10_000})));
    let reply = proxy.recv();
    assert_eq!(reply["id"], 8);
    assert_eq!(reply["error"]["code"], -32603);
    let message = reply["error"]["message"].as_str().unwrap();
    assert!(
        message.starts_with("the server's response (100")
            && message.ends_with(" bytes) was refused by the proxy: the limit is 4096 bytes"),
        "{message}"
    );
    // The connection goes on.
    proxy.send(r#"{"jsonrpc":"2.0","id":9,"method":"ping"}"#);
    assert_eq!(proxy.recv_line(), r#"{"jsonrpc":"2.0","id":9,"result":{}}"#);
    assert!(!received_ids(&setup).contains(&json!(7)));
    proxy.close_stdin();
    let (_, stderr) = proxy.wait();
    assert!(
        stderr.contains(&format!("refused a message of {} bytes from the client: the limit is 4096 bytes (--max-message-bytes)", big_call.len())),
        "{stderr}"
    );
}

#[test]
fn a_server_that_cannot_start_is_a_clear_error() {
    let (status, stdout, stderr) = common::run(
        common::toolschema(),
        &["proxy".into(), "--".into(), "no-such-mcp-server".into()],
        common::WAIT,
    );
    assert_eq!(status.code(), Some(2));
    assert_eq!(stdout, "");
    assert_eq!(
        stderr,
        "error: cannot start the MCP server 'no-such-mcp-server': No such file or directory (os error 2)\n"
    );
}

#[test]
fn an_audit_log_that_cannot_be_opened_is_a_clear_error() {
    let (status, _, stderr) = common::run(
        common::toolschema(),
        &[
            "proxy".into(),
            "--audit".into(),
            "/nonexistent-dir/audit.jsonl".into(),
            "--".into(),
            "true".into(),
        ],
        common::WAIT,
    );
    assert_eq!(status.code(), Some(2));
    assert_eq!(
        stderr,
        "error: cannot open the audit log /nonexistent-dir/audit.jsonl: No such file or directory (os error 2)\n"
    );
}

#[test]
fn a_terminated_proxy_stops_the_server() {
    let mut proxy = Session::proxy(
        &[],
        &[
            "sh".into(),
            "-c".into(),
            "echo $$ >&2; exec sleep 600".into(),
        ],
    );
    let server: u32 = proxy
        .first_stderr_line()
        .parse()
        .expect("the server's pid on stderr");
    let status = std::process::Command::new("kill")
        .args(["-TERM", &proxy.pid().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let (status, stderr) = proxy.wait();
    assert_eq!(status.code(), Some(128 + 15), "{stderr}");
    assert!(!common::alive(server), "the server is still running");
}

#[test]
fn a_reader_that_stops_reading_the_audit_log_never_stops_the_calls() {
    // `--audit /dev/stdout` in a container hands the log to a shipper that may stall: the calls
    // must go on, what the log cannot hold is dropped whole and counted in the log itself.
    let setup = setup();
    let log = common::StalledFifo::new(&setup.record.with_file_name("audit.fifo"));
    let fifo_arg = log.path.display().to_string();
    let mut proxy = start(&setup, &["--audit", &fifo_arg, "--audit-arguments"], &[]);
    let calls = 1_000;
    let padding = "x".repeat(8 * 1024);
    for id in 1..=calls {
        // No `message`: refused by the proxy, each record about 8 KiB with its arguments.
        proxy.send(&call(id, "echo", json!({"padding": padding})));
        assert_eq!(
            proxy.recv_reply(),
            tool_error(
                id,
                "missing required argument 'message'\nunexpected argument 'padding'"
            )
        );
    }
    log.start_reading();
    proxy.close_stdin();
    let (status, stderr) = proxy.wait();
    assert!(status.success(), "{stderr}");
    let text = log.text();
    let lines: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect();
    let kept = lines.iter().filter(|l| l["tool"] == "echo").count() as u64;
    let notes: Vec<&Value> = lines
        .iter()
        .filter(|l| l["verdict"] == "audit-dropped")
        .collect();
    let dropped: u64 = notes.iter().map(|l| l["dropped"].as_u64().unwrap()).sum();
    assert_eq!(kept + dropped, calls, "{notes:?}");
    assert!(dropped > 0 && kept > 0, "kept {kept}, dropped {dropped}");
    assert!(
        stderr.contains("the audit log is not being read: lines are dropped until it is"),
        "{stderr}"
    );
    // The records kept are in the order of the calls.
    let ids: Vec<u64> = lines.iter().filter_map(|l| l["id"].as_u64()).collect();
    assert!(ids.windows(2).all(|w| w[0] < w[1]), "{ids:?}");
}
