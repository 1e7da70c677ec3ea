//! `toolschema proxy` over Streamable HTTP, in every combination, with the official TypeScript
//! (`StreamableHTTPClientTransport`) and Python (`mcp.Client`) clients, real servers
//! (server-everything over stdio and in its Streamable HTTP mode, a Python MCPServer speaking
//! 2025-11-25 and 2026-07-28), and the recording server that shows what reached it.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::http::{self, HttpServer, Listening};
use common::{node, recorded, recording_server, require, toolschema};
use serde_json::{json, Value};
use std::time::Duration;

fn everything_stdio() -> String {
    require("interop/node_modules/.bin/mcp-server-everything")
        .display()
        .to_string()
}

fn strings(values: &[&str]) -> Vec<String> {
    values.iter().map(|s| s.to_string()).collect()
}

/// The checks on a TypeScript client's session with server-everything through the proxy, against
/// the same session without it.
fn same_as_direct_typescript(direct: &Value, proxied: &Value, all_progress: bool) {
    assert_eq!(proxied["tools"], direct["tools"]);
    assert!(
        proxied["tools"]
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t["name"] == "trigger-sampling-request"),
        "the client's sampling capability reached the server: {}",
        proxied["tools"]
    );
    assert_eq!(proxied["valid"], direct["valid"]);
    assert_eq!(proxied["longRunning"], direct["longRunning"]);
    assert_eq!(proxied["sampling"], direct["sampling"]);
    // The server's elicitation request reached the client, and the client's answer the server,
    // which sends back what it received.
    assert_eq!(proxied["elicitation"], direct["elicitation"]);
    let elicited = proxied["elicitation"]["result"]["content"].to_string();
    assert!(elicited.contains("Ada"), "{}", proxied["elicitation"]);
    assert_eq!(
        proxied["asked"],
        json!(["sampling/createMessage", "elicitation/create"])
    );
    // Progress notifications arrive during the call. Over HTTP every one does; over stdio the
    // SDK drops one that arrives together with the answer (a microtask race of its own).
    let progress = proxied["progress"].as_array().unwrap();
    let expected = [
        json!({"progress": 1, "total": 3}),
        json!({"progress": 2, "total": 3}),
        json!({"progress": 3, "total": 3}),
    ];
    if all_progress {
        assert_eq!(progress, &expected);
    } else {
        assert!(
            progress.len() >= 2 && expected.starts_with(progress),
            "{progress:?}"
        );
    }
    refusals_are_model_readable(&proxied["invalid"], false);
}

fn refusals_are_model_readable(invalid: &Value, modern: bool) {
    let expected = [
        ("echoMissing", "missing required argument 'message'"),
        ("sumTypes", "argument 'a' must be a number (got a string)"),
    ];
    for (label, text) in expected {
        let mut result = json!({"content": [{"type": "text", "text": text}], "isError": true});
        if modern {
            result["resultType"] = json!("complete");
        }
        assert_eq!(invalid[label]["result"], result, "{label}: {invalid}");
    }
}

fn same_as_direct_python(direct: &Value, proxied: &Value) {
    for key in ["tools", "valid", "longRunning", "sampling"] {
        assert_eq!(proxied[key], direct[key], "{key}");
    }
    assert_eq!(
        proxied["progress"].as_array().unwrap().len(),
        3,
        "{proxied}"
    );
    for (label, text) in [
        ("echoMissing", "missing required argument 'message'"),
        ("sumTypes", "argument 'a' must be a number (got a string)"),
    ] {
        assert_eq!(
            proxied["invalid"][label]["result"]["content"][0]["text"],
            text
        );
        assert_eq!(proxied["invalid"][label]["result"]["isError"], true);
    }
    assert!(
        proxied["sampling"]["result"]["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("sampled: "),
        "{}",
        proxied["sampling"]
    );
}

#[test]
fn clients_through_listen_to_a_stdio_server() {
    let server = everything_stdio();
    let proxy = Listening::start(&strings(&["--", &server]));
    let direct = http::ts_client(&["everything", "--", &server]);
    let proxied = http::ts_client(&["everything", "--url", &proxy.url]);
    same_as_direct_typescript(&direct, &proxied, true);
    let direct = http::py_client(&["everything", "legacy", "--", &server]);
    let proxied = http::py_client(&["everything", "legacy", "--url", &proxy.url]);
    same_as_direct_python(&direct, &proxied);
    let stderr = proxy.stop();
    assert!(
        stderr.contains("toolschema: tools/call client=anonymous auth=none tool=echo"),
        "{stderr}"
    );
}

#[test]
fn clients_through_listen_to_an_http_upstream() {
    let upstream = HttpServer::everything();
    let proxy = Listening::start(&strings(&["--upstream", &upstream.url]));
    let direct = http::ts_client(&["everything", "--url", &upstream.url]);
    let proxied = http::ts_client(&["everything", "--url", &proxy.url]);
    same_as_direct_typescript(&direct, &proxied, true);
    let direct = http::py_client(&["everything", "legacy", "--url", &upstream.url]);
    let proxied = http::py_client(&["everything", "legacy", "--url", &proxy.url]);
    same_as_direct_python(&direct, &proxied);
    proxy.stop();
}

#[test]
fn stdio_clients_through_an_http_upstream() {
    let upstream = HttpServer::everything();
    let proxy = [toolschema(), "proxy", "--upstream", &upstream.url];
    let mut ts = vec!["everything", "--"];
    ts.extend(proxy);
    let direct = http::ts_client(&["everything", "--url", &upstream.url]);
    let proxied = http::ts_client(&ts);
    same_as_direct_typescript(&direct, &proxied, false);
    let mut py = vec!["everything", "legacy", "--"];
    py.extend(proxy);
    let direct = http::py_client(&["everything", "legacy", "--url", &upstream.url]);
    let proxied = http::py_client(&py);
    same_as_direct_python(&direct, &proxied);
}

/// A 2026-07-28 session (no initialize, the revision in every request's `_meta`): a refused
/// call before any listing (the proxy lists the tools itself, in the client's revision), valid
/// calls, progress. The server records every call it ran: the refused ones are not there.
fn modern_session(client: &[&str], record: &std::path::Path) {
    let mut args = vec!["modern", "2026-07-28"];
    args.extend(client);
    let out = http::py_client(&args);
    assert_eq!(out["protocol"], "2026-07-28");
    assert_eq!(
        out["first"]["result"],
        json!({"content": [{"type": "text", "text": "argument 'a' must be an integer (got a string)"}], "isError": true, "resultType": "complete"}),
        "{out}"
    );
    let names: Vec<&str> = out["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["add", "count", "echo"]);
    assert_eq!(
        out["valid"]["add"]["result"]["structuredContent"],
        json!({"result": 5})
    );
    assert_eq!(out["valid"]["add"]["result"]["resultType"], "complete");
    assert_eq!(
        out["invalid"]["echoMissing"]["result"]["content"][0]["text"],
        "missing required argument 'message'"
    );
    assert_eq!(out["progress"].as_array().unwrap().len(), 3, "{out}");
    let ran: Vec<Value> = recorded(record);
    assert_eq!(
        ran,
        [
            json!({"tool": "echo", "arguments": {"message": "hello"}}),
            json!({"tool": "add", "arguments": {"a": 2, "b": 3}}),
            json!({"tool": "count", "arguments": {"steps": 3}}),
        ],
        "only valid calls reached the server"
    );
}

#[test]
fn a_2026_07_28_session_through_every_combination() {
    let dir = tempfile::tempdir().unwrap();
    // HTTP in front of a server process.
    let record = dir.path().join("stdio.jsonl");
    let proxy = Listening::start(&[vec!["--".to_string()], http::python_server(&record)].concat());
    modern_session(&["--url", &proxy.url], &record);
    proxy.stop();
    // HTTP in front of an HTTP server.
    let record = dir.path().join("http.jsonl");
    let upstream = HttpServer::python(&record);
    let proxy = Listening::start(&strings(&["--upstream", &upstream.url]));
    modern_session(&["--url", &proxy.url], &record);
    proxy.stop();
    // A stdio client in front of an HTTP server.
    let record = dir.path().join("stdio-client.jsonl");
    let upstream = HttpServer::python(&record);
    modern_session(
        &["--", toolschema(), "proxy", "--upstream", &upstream.url],
        &record,
    );
}

#[test]
fn a_2026_07_28_request_whose_headers_disagree_with_its_body_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let record = dir.path().join("record.jsonl");
    let proxy = Listening::start(&[vec!["--".to_string()], http::python_server(&record)].concat());
    let call = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"message":"x"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}"#;
    let reply = http::request(
        "POST",
        &proxy.url,
        &[
            ("mcp-protocol-version", "2026-07-28"),
            ("mcp-method", "tools/call"),
            ("mcp-name", "add"),
        ],
        call,
    );
    assert_eq!(reply.status, 400, "{reply:?}");
    assert_eq!(
        reply.json(),
        json!({"jsonrpc": "2.0", "id": 1, "error": {"code": -32020, "message": "Header mismatch: the Mcp-Name header 'add' does not match the request's name 'echo'"}})
    );
    let reply = http::request(
        "POST",
        &proxy.url,
        &[
            ("mcp-protocol-version", "2026-07-28"),
            ("mcp-method", "tools/call"),
            ("mcp-name", "echo"),
        ],
        call,
    );
    assert_eq!(reply.status, 200, "{reply:?}");
    let answer = reply.messages().pop().unwrap();
    assert_eq!(answer["result"]["content"][0]["text"], "echo: x");
    proxy.stop();
    assert_eq!(recorded(&record).len(), 1);
}

/// `Mcp-Param-*` headers (2026-07-28: arguments a tool annotates `x-mcp-header`, which the
/// client mirrors into headers for intermediaries) are compared with the call's arguments as a
/// server that reads the body compares them: one that disagrees, is missing for an argument
/// given, or names an argument not given is refused with 400 and `-32020`, before the
/// upstream. What goes on is set from the body; a name the tool does not declare goes on as it
/// is; a 2025-11-25 call, whose revision has none, sends none on.
#[test]
fn mcp_param_headers_are_compared_with_the_arguments_and_set_from_them() {
    let dir = tempfile::tempdir().unwrap();
    let record = dir.path().join("record.jsonl");
    let upstream = HttpServer::scripted(&record);
    let proxy = Listening::start(&strings(&["--upstream", &upstream.url]));
    let call = |arguments: &str, params: &[(&str, &str)]| {
        let body = format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"route","arguments":{arguments},"_meta":{{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{{}}}}}}}}"#
        );
        let mut headers = vec![
            ("mcp-protocol-version", "2026-07-28"),
            ("mcp-method", "tools/call"),
            ("mcp-name", "route"),
        ];
        headers.extend_from_slice(params);
        http::request("POST", &proxy.url, &headers, &body)
    };
    let routed = |reply: &http::Reply| {
        assert_eq!(reply.status, 200, "{reply:?}");
        let answer = reply.messages().pop().unwrap();
        assert_eq!(
            answer["result"]["content"][0]["text"], "routed",
            "{reply:?}"
        );
    };
    let last_call_headers = || {
        recorded(&record)
            .into_iter()
            .filter(|e| e["message"]["params"]["name"] == "route")
            .map(|e| e["headers"].clone())
            .next_back()
    };
    let arguments = r#"{"region":"eu-west","dry":true,"target":{"shard":7},"note":"n"}"#;
    let right = [
        ("Mcp-Param-Region", "eu-west"),
        ("Mcp-Param-Dry", "true"),
        ("Mcp-Param-Shard", "7"),
    ];
    routed(&call(arguments, &right));
    let sent = last_call_headers().unwrap();
    assert_eq!(sent["mcp-param-region"], "eu-west", "{sent}");
    assert_eq!(sent["mcp-param-dry"], "true", "{sent}");
    assert_eq!(sent["mcp-param-shard"], "7", "{sent}");
    // The same values otherwise written: Base64, an integer with a leading zero; set from the
    // body on the way up. A name the tool does not declare goes on as it is.
    routed(&call(
        arguments,
        &[
            ("Mcp-Param-Region", "=?base64?ZXUtd2VzdA==?="),
            ("Mcp-Param-Dry", "true"),
            ("Mcp-Param-Shard", "07"),
            ("Mcp-Param-Trace", "abc"),
        ],
    ));
    let sent = last_call_headers().unwrap();
    assert_eq!(sent["mcp-param-region"], "eu-west", "{sent}");
    assert_eq!(sent["mcp-param-shard"], "7", "{sent}");
    assert_eq!(sent["mcp-param-trace"], "abc", "{sent}");
    let calls_before = recorded(&record).len();
    type Case<'a> = (&'a str, Vec<(&'a str, &'a str)>, &'a str);
    let refused: [Case; 4] = [
        (
            arguments,
            vec![right[0], right[1], ("Mcp-Param-Shard", "8")],
            "the Mcp-Param-Shard header '8' does not match the argument 'target.shard' ('7')",
        ),
        (
            arguments,
            vec![("Mcp-Param-Region", "us-east"), right[1], right[2]],
            "the Mcp-Param-Region header 'us-east' does not match the argument 'region' ('eu-west')",
        ),
        (
            arguments,
            vec![right[1], right[2]],
            "the Mcp-Param-Region header is missing for the argument 'region'",
        ),
        (
            r#"{"region":"eu-west","target":{"shard":7}}"#,
            vec![right[0], right[1], right[2]],
            "the Mcp-Param-Dry header is sent, but the call gives no argument 'dry' it could mirror",
        ),
    ];
    for (arguments, headers, why) in refused {
        let reply = call(arguments, &headers);
        assert_eq!(reply.status, 400, "{why}: {reply:?}");
        assert_eq!(
            reply.json(),
            json!({"jsonrpc": "2.0", "id": 1, "error": {"code": -32020, "message": format!("Header mismatch: {why}")}})
        );
    }
    assert_eq!(
        recorded(&record).len(),
        calls_before,
        "a refused call reached the upstream"
    );
    // 2025-11-25 has no Mcp-Param-* headers: none goes on.
    let session = http::initialize(&proxy.url, &[]);
    let reply = http::post(
        &proxy.url,
        &session,
        &[("Mcp-Param-Region", "us-east"), ("Mcp-Param-Trace", "abc")],
        &format!(
            r#"{{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{{"name":"route","arguments":{arguments}}}}}"#
        ),
    );
    routed(&reply);
    let sent = last_call_headers().unwrap();
    assert!(
        !sent
            .as_object()
            .unwrap()
            .keys()
            .any(|k| k.starts_with("mcp-param-")),
        "{sent}"
    );
    proxy.stop();
}

#[test]
fn faults_over_http_are_answered_and_nothing_invalid_is_forwarded() {
    let dir = tempfile::tempdir().unwrap();
    let record = dir.path().join("record.jsonl");
    let mut args = strings(&[
        "--max-sessions",
        "2",
        "--max-body-bytes",
        "64KiB",
        "--request-timeout",
        "3",
        "--audit",
    ]);
    args.push(dir.path().join("audit.jsonl").display().to_string());
    args.push("--".into());
    args.extend(recording_server(&record, &[]));
    let proxy = Listening::start(&args);
    let url = proxy.url.clone();
    let session = http::initialize(&url, &[]);

    // Invalid calls are answered by the proxy; the valid one reaches the server.
    let invalid = http::post(
        &url,
        &session,
        &[],
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"search","arguments":{"query":"x"}}}"#,
    );
    assert_eq!(invalid.status, 200);
    assert_eq!(
        invalid.json()["result"],
        json!({"content": [{"type": "text", "text": "argument 'query' string length must be >= 3 (got 1)"}], "isError": true})
    );
    let valid = http::post(
        &url,
        &session,
        &[],
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"search","arguments":{"query":"xyz"}}}"#,
    );
    assert_eq!(
        valid.json()["result"]["structuredContent"],
        json!({"total": 10, "query": "xyz"})
    );

    // An oversized body: 413, never read into a session.
    let big = format!(
        r#"{{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{{"name":"echo","arguments":{{"message":"{}"}}}}}}"#,
        "x".repeat(70_000)
    );
    let reply = http::post(&url, &session, &[], &big);
    assert_eq!(reply.status, 413, "{reply:?}");

    // Too many sessions: the second fits, the third is refused with 503 and says why.
    let second = http::initialize(&url, &[]);
    let third = http::request(
        "POST",
        &url,
        &[],
        r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#,
    );
    assert_eq!(third.status, 503, "{third:?}");
    assert_eq!(third.header("retry-after"), Some("5"));
    assert_eq!(
        third.json()["error"]["message"],
        "this proxy serves at most 2 sessions at once (--max-sessions); close one (HTTP DELETE) or try again later"
    );
    // DELETE ends one: the next session fits, and the deleted one is gone.
    let deleted = http::request("DELETE", &url, &[("mcp-session-id", &second)], "");
    assert_eq!(deleted.status, 200);
    let gone = http::post(
        &url,
        &second,
        &[],
        r#"{"jsonrpc":"2.0","id":9,"method":"ping"}"#,
    );
    assert_eq!(gone.status, 404);
    let fourth = http::initialize(&url, &[]);

    // A client that goes away mid-stream cancels its request at the server.
    let mut stream = http::open(
        "POST",
        &url,
        &[
            ("mcp-session-id", &session),
            ("mcp-protocol-version", "2025-11-25"),
        ],
        r#"{"jsonrpc":"2.0","id":"gone","method":"tools/call","params":{"name":"slow","arguments":{"ms":20000}}}"#,
    );
    let head = http::read_some(&mut stream, Duration::from_secs(5));
    assert!(head.contains("text/event-stream"), "{head}");
    drop(stream);
    let cancelled = http::eventually(Duration::from_secs(30), || {
        recorded(&record)
            .iter()
            .any(|m| m["method"] == "notifications/cancelled" && m["params"]["requestId"] == "gone")
    });
    assert!(cancelled, "{:?}", common::recorded_lines(&record));

    // A request past --request-timeout is answered with an error and cancelled at the server.
    let slow = http::post(
        &url,
        &fourth,
        &[],
        r#"{"jsonrpc":"2.0","id":"late","method":"tools/call","params":{"name":"slow","arguments":{"ms":20000}}}"#,
    );
    let messages = slow.messages();
    assert_eq!(
        messages.last().unwrap()["error"]["message"],
        "the request was not answered within 3 s (--request-timeout) and was cancelled",
        "{slow:?}"
    );
    // The cancellation is on its way to the server as the client reads the error.
    let cancelled = http::eventually(Duration::from_secs(10), || {
        recorded(&record)
            .iter()
            .any(|m| m["method"] == "notifications/cancelled" && m["params"]["requestId"] == "late")
    });
    assert!(cancelled, "{:?}", common::recorded_lines(&record));

    // The server dies mid-call: the client gets an error, not a hang.
    let crash = http::post(
        &url,
        &fourth,
        &[],
        r#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"crash","arguments":{}}}"#,
    );
    let answer = crash.messages().pop().unwrap();
    assert_eq!(
        answer["error"]["message"], "the MCP server exited (exit code 3) before answering",
        "{crash:?}"
    );
    assert_eq!(answer["error"]["data"]["exitCode"], 3);

    let stderr = proxy.stop();
    // What failed validation never reached the server.
    let calls: Vec<Value> = recorded(&record)
        .into_iter()
        .filter(|m| m["method"] == "tools/call")
        .map(|m| m["params"].clone())
        .collect();
    assert!(
        calls.iter().all(|p| p["arguments"]["query"] != "x"),
        "{calls:?}"
    );
    assert!(calls.iter().all(|p| p["name"] != "echo"), "{calls:?}");
    assert!(
        stderr.contains("refused a new session: this proxy serves at most 2 sessions"),
        "{stderr}"
    );
    let audit = std::fs::read_to_string(dir.path().join("audit.jsonl")).unwrap();
    assert!(
        audit.contains(r#""client":"anonymous","tool":"search","verdict":"rejected""#),
        "{audit}"
    );
}

#[test]
fn an_upstream_that_dies_mid_stream_fails_the_request_without_a_hang() {
    let mut upstream = HttpServer::everything();
    let proxy = Listening::start(&strings(&["--upstream", &upstream.url]));
    let session = http::initialize(&proxy.url, &[]);
    let mut stream = http::open(
        "POST",
        &proxy.url,
        &[
            ("mcp-session-id", &session),
            ("mcp-protocol-version", "2025-11-25"),
        ],
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"trigger-long-running-operation","arguments":{"duration":30,"steps":30},"_meta":{"progressToken":"p"}}}"#,
    );
    let mut first = String::new();
    let progressed = http::eventually(Duration::from_secs(20), || {
        first.push_str(&http::read_some(&mut stream, Duration::from_millis(200)));
        first.contains("notifications/progress")
    });
    assert!(progressed, "{first}");
    upstream.kill();
    let rest = http::read_reply_rest(&mut stream, Duration::from_secs(20));
    assert!(
        rest.contains(r#""id":1,"error":{"code":-32000,"message":"the upstream's stream broke off"#)
            || rest.contains(r#""id":1,"error":{"code":-32000,"message":"the upstream ended its stream without answering""#),
        "{rest}"
    );
    proxy.stop();
}

#[test]
fn token_policies_overrides_and_the_audit_name_tokens_never_show_them() {
    let dir = tempfile::tempdir().unwrap();
    let record = dir.path().join("record.jsonl");
    let alice = "alice-token-0123456789abcdef";
    let bob = "bob-token-0123456789abcdef01";
    std::fs::write(
        dir.path().join("tokens"),
        format!("alice:{alice}\nbob:{bob}\n"),
    )
    .unwrap();
    std::fs::write(
        dir.path().join("toolschema.toml"),
        r#"
[proxy.tokens.bob]
allow = ["echo", "search"]
deny = ["search"]

[proxy.overrides.search]
description = "Search the team's documents. Three letters at least."
title = "Document search"
"#,
    )
    .unwrap();
    let mut args = strings(&[
        "--auth-token-file",
        "tokens",
        "--audit",
        "audit.jsonl",
        "--",
    ]);
    args.extend(recording_server(&record, &[]));
    let proxy = Listening::start_in(Some(dir.path()), &args);
    let url = proxy.url.clone();

    // Without a token: 401 with the challenge.
    let refused = http::request(
        "POST",
        &url,
        &[],
        r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{}}"#,
    );
    assert_eq!(refused.status, 401);
    assert_eq!(
        refused.header("www-authenticate"),
        Some("Bearer realm=\"mcp\"")
    );

    let as_alice = format!("Bearer {alice}");
    let as_bob = format!("Bearer {bob}");
    let list = r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#;
    let alice_session = http::initialize(&url, &[("authorization", &as_alice)]);
    let tools = http::post(&url, &alice_session, &[("authorization", &as_alice)], list).json();
    let search = tools["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "search")
        .unwrap()
        .clone();
    assert_eq!(
        search["description"],
        "Search the team's documents. Three letters at least."
    );
    assert_eq!(search["title"], "Document search");
    assert_eq!(
        search["x-owner"], "docs-team",
        "the rest of the tool as the server sent it"
    );
    let call = r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"search","arguments":{"query":"xyz"}}}"#;
    let answer = http::post(&url, &alice_session, &[("authorization", &as_alice)], call).json();
    assert_eq!(answer["result"]["structuredContent"]["total"], 10);

    // bob sees echo alone, and his call to search is refused with a reason the model reads.
    let bob_session = http::initialize(&url, &[("authorization", &as_bob)]);
    let tools = http::post(&url, &bob_session, &[("authorization", &as_bob)], list).json();
    let names: Vec<&str> = tools["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["echo"]);
    let answer = http::post(&url, &bob_session, &[("authorization", &as_bob)], call).json();
    assert_eq!(
        answer["error"],
        json!({"code": -32602, "message": "tool 'search' is not available to 'bob' (denied by 'search' in its policy)"})
    );
    // A session belongs to the token that opened it.
    let stolen = http::post(&url, &alice_session, &[("authorization", &as_bob)], list);
    assert_eq!(stolen.status, 404);

    let stderr = proxy.stop();
    let audit = std::fs::read_to_string(dir.path().join("audit.jsonl")).unwrap();
    let lines: Vec<Value> = audit
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 2, "{audit}");
    assert_eq!(lines[0]["client"], "alice");
    assert_eq!(lines[0]["verdict"], "forwarded");
    assert_eq!(lines[0]["overridden"], json!(["title", "description"]));
    assert_eq!(lines[1]["client"], "bob");
    assert_eq!(lines[1]["verdict"], "denied");
    for secret in [alice, bob] {
        assert!(!audit.contains(secret) && !stderr.contains(secret));
    }
    let reached: Vec<Value> = recorded(&record)
        .into_iter()
        .filter(|m| m["method"] == "tools/call")
        .collect();
    assert_eq!(
        reached.len(),
        1,
        "bob's call never reached the server: {reached:?}"
    );
}

/// The guard's own checks, against the running proxy (the same script as for `mcp stream`):
/// 401 with `WWW-Authenticate`, bearer tokens and RS256/ES256 JWTs with the SDK client, refused
/// when expired, for another audience or issuer, badly signed, or without the tool's scope; the
/// metadata document; token names in the audit and the log, tokens nowhere.
#[test]
fn the_guard_in_front_of_the_proxy() {
    let dir = tempfile::tempdir().unwrap();
    let mut args = vec![
        require("interop/http-auth.mjs").display().to_string(),
        "--proxy".into(),
        toolschema().into(),
        "--".into(),
    ];
    args.extend(recording_server(&dir.path().join("record.jsonl"), &[]));
    let (status, stdout, stderr) = {
        let mut command = std::process::Command::new(node());
        command.args(&args).current_dir(dir.path());
        let output = command.output().unwrap();
        (
            output.status,
            String::from_utf8_lossy(&output.stdout).into_owned(),
            String::from_utf8_lossy(&output.stderr).into_owned(),
        )
    };
    assert!(status.success(), "{stderr}\n{stdout}");
    let out: Value = serde_json::from_str(&stdout).unwrap();
    let url = out["url"].as_str().unwrap();
    let metadata_url = format!(
        "{}/.well-known/oauth-protected-resource/mcp",
        url.trim_end_matches("/mcp")
    );
    assert_eq!(out["noToken"]["status"], 401);
    assert_eq!(
        out["noToken"]["wwwAuthenticate"],
        format!("Bearer realm=\"mcp\", resource_metadata=\"{metadata_url}\"")
    );
    assert_eq!(out["wrongScheme"]["status"], 401);
    let names = |session: &Value| -> Vec<String> {
        session["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t.as_str().unwrap().to_string())
            .collect()
    };
    // alice holds files:read and config:write: every tool; bob none: neither scoped tool.
    assert!(names(&out["alice"]).contains(&"delete_everything".to_string()));
    assert!(!names(&out["bob"]).contains(&"search".to_string()));
    assert!(!names(&out["bob"]).contains(&"delete_everything".to_string()));
    assert_eq!(
        out["alice"]["calls"]["listFiles"]["result"]["structuredContent"]["total"],
        10
    );
    assert_eq!(
        out["bob"]["calls"]["greet"]["result"]["content"][0]["text"],
        "echo: Ada"
    );
    let bob_refused = out["bob"]["calls"]["listFiles"]["error"]["message"]
        .as_str()
        .unwrap();
    assert!(bob_refused.contains("insufficient_scope"), "{bob_refused}");
    assert_eq!(out["unknownToken"]["connectError"]["code"], 401);
    // JWTs: RS256 with files:read, ES256 with both scopes.
    assert!(names(&out["rs256"]).contains(&"search".to_string()));
    assert!(!names(&out["rs256"]).contains(&"delete_everything".to_string()));
    assert!(names(&out["es256"]).contains(&"delete_everything".to_string()));
    for label in ["expired", "notYet", "audience", "issuer", "signature"] {
        assert_eq!(
            out["jwtRefused"][label]["connectError"]["code"], 401,
            "{label}"
        );
    }
    assert_eq!(out["keySetFetches"], 1);
    assert_eq!(
        out["metadata"]["/.well-known/oauth-protected-resource/mcp"]["body"]["scopes_supported"],
        json!(["config:write", "files:read"])
    );
    assert_eq!(out["bodyTooLarge"]["status"], 413);
    assert_eq!(out["foreignOrigin"]["status"], 403);
    let statuses: Vec<&Value> = out["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| &s["status"])
        .collect();
    assert_eq!(
        statuses,
        [&json!(200), &json!(200), &json!(200), &json!(429)]
    );
    assert_eq!(out["otherClientsSession"]["status"], 404);
    assert_eq!(out["reload"], json!({"carol": 200, "alice": 401}));
    assert_eq!(out["shutdown"], json!({"code": 0, "signal": null}));
    // Names in the audit and the log; no secret anywhere.
    let audit = std::fs::read_to_string(dir.path().join("audit.jsonl")).unwrap();
    for client in [
        "\"client\":\"alice\"",
        "\"client\":\"user-ec\"",
        "\"client\":\"user-rs\"",
    ] {
        assert!(audit.contains(client), "{client}: {audit}");
    }
    let log = out["stderr"].as_str().unwrap();
    assert!(
        log.contains("tools/call client=alice auth=token tool=echo"),
        "{log}"
    );
    let access = std::fs::read_to_string(dir.path().join("access.jsonl")).unwrap();
    for secret in out["secrets"].as_array().unwrap() {
        let secret = secret.as_str().unwrap();
        assert!(!log.contains(secret) && !audit.contains(secret) && !access.contains(secret));
    }
}

#[test]
fn listening_beyond_loopback_needs_authentication() {
    let (status, _, stderr) = common::run(
        toolschema(),
        &strings(&["proxy", "--listen", "0.0.0.0:0", "--", "true"]),
        Duration::from_secs(20),
    );
    assert_eq!(status.code(), Some(2));
    assert!(stderr.contains("refusing to serve on 0.0.0.0:"), "{stderr}");
    // The address is refused before it is bound: a port that is taken does not hide why.
    let taken = std::net::TcpListener::bind("0.0.0.0:0").unwrap();
    let port = taken.local_addr().unwrap().port();
    let (status, _, stderr) = common::run(
        toolschema(),
        &strings(&[
            "proxy",
            "--listen",
            &format!("0.0.0.0:{port}"),
            "--",
            "true",
        ]),
        Duration::from_secs(20),
    );
    assert_eq!(status.code(), Some(2));
    assert!(
        stderr.contains(&format!(
            "refusing to serve on 0.0.0.0:{port} without authentication"
        )),
        "{stderr}"
    );
    let (status, _, stderr) = common::run(
        toolschema(),
        &strings(&["proxy", "--auth-token-file", "tokens", "--", "true"]),
        Duration::from_secs(20),
    );
    assert_eq!(status.code(), Some(2));
    assert_eq!(
        stderr,
        "error: --auth-token-file protects the HTTP endpoint: use it with --listen\n"
    );
}

/// What an HTTP upstream gets from `proxy --listen --upstream`: the client's headers and
/// `--header`, the client's `Last-Event-ID`, the proxy's own resumption of a stream that broke
/// off, an event over `--max-message-bytes` refused, a client that goes away cancelling its
/// call, DELETE passed on. The upstream records every HTTP request.
#[test]
fn an_http_upstream_gets_headers_event_ids_and_departures() {
    let dir = tempfile::tempdir().unwrap();
    let record = dir.path().join("record.jsonl");
    let upstream = HttpServer::scripted(&record);
    let proxy = Listening::start(&strings(&[
        "--upstream",
        &upstream.url,
        "--header",
        "X-Team: platform",
        "--max-message-bytes",
        "64KiB",
    ]));
    let url = proxy.url.clone();
    let token = ("authorization", "Bearer for-the-upstream");
    let session = http::initialize(&url, &[token]);
    assert_eq!(session, "upstream-session-1", "the upstream's session id");

    // This upstream gives every session the same id: a second client would share the first
    // one's session. It is refused, and the first session is left as it was.
    let second = http::request(
        "POST",
        &url,
        &[token],
        r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"second","version":"1"}}}"#,
    );
    assert_eq!(second.status, 502, "{second:?}");
    assert_eq!(
        second.json()["error"]["message"],
        "the upstream gave the new session the id of a session already open, so two clients would share one; the new session was closed"
    );

    let echo = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"message":"hi"}}}"#;
    let answer = http::post(&url, &session, &[token], echo).messages();
    assert_eq!(answer[0]["result"]["content"][0]["text"], "echo: hi");
    let invalid =
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{}}}"#;
    let refused = http::post(&url, &session, &[token], invalid).messages();
    assert_eq!(refused[0]["result"]["isError"], true, "{refused:?}");

    // The stream of `resume` ends after event r-1: the proxy resumes it and the answer comes.
    let resume = r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"resume","arguments":{}}}"#;
    let messages = http::post(&url, &session, &[token], resume).messages();
    assert_eq!(
        messages.last().unwrap()["result"]["content"][0]["text"],
        "resumed",
        "{messages:?}"
    );
    assert_eq!(messages[0]["params"]["data"], "before the break");

    // One event of 200,000 bytes: refused as it arrives, the call fails and says why.
    let big =
        r#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"big","arguments":{}}}"#;
    let messages = http::post(&url, &session, &[token], big).messages();
    let error = messages.last().unwrap()["error"]["message"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert!(
        error.contains("65536") && error.contains("--max-message-bytes"),
        "{messages:?}"
    );

    // The client's GET stream resumes with its Last-Event-ID, which reaches the upstream.
    let mut get = http::open(
        "GET",
        &url,
        &[
            ("accept", "text/event-stream"),
            ("mcp-session-id", &session),
            ("mcp-protocol-version", "2025-11-25"),
            ("last-event-id", "g-5"),
            token,
        ],
        "",
    );
    let mut replayed = String::new();
    let arrived = http::eventually(Duration::from_secs(10), || {
        replayed.push_str(&http::read_some(&mut get, Duration::from_millis(200)));
        replayed.contains("replayed")
    });
    assert!(arrived && replayed.contains("id: g-6"), "{replayed}");
    drop(get);

    // A client that goes away mid-call: the upstream's request ends.
    let mut slow = http::open(
        "POST",
        &url,
        &[
            ("mcp-session-id", &session),
            ("mcp-protocol-version", "2025-11-25"),
            token,
        ],
        r#"{"jsonrpc":"2.0","id":"gone","method":"tools/call","params":{"name":"slow","arguments":{}}}"#,
    );
    let mut started = String::new();
    let began = http::eventually(Duration::from_secs(10), || {
        started.push_str(&http::read_some(&mut slow, Duration::from_millis(200)));
        started.contains("started")
    });
    assert!(began, "{started}");
    drop(slow);
    let ended = http::eventually(Duration::from_secs(20), || {
        recorded(&record).iter().any(|m| {
            m["closed"] == "gone"
                || (m["message"]["method"] == "notifications/cancelled"
                    && m["message"]["params"]["requestId"] == "gone")
        })
    });
    assert!(ended, "{:?}", common::recorded_lines(&record));

    let deleted = http::request("DELETE", &url, &[("mcp-session-id", &session), token], "");
    assert_eq!(deleted.status, 200, "{deleted:?}");
    proxy.stop();

    let seen = recorded(&record);
    // Every request carried the client's token and the --header value.
    for entry in seen.iter().filter(|m| m["http"].is_string()) {
        assert_eq!(
            entry["headers"]["authorization"], "Bearer for-the-upstream",
            "{entry}"
        );
        assert_eq!(entry["headers"]["x-team"], "platform", "{entry}");
    }
    let resumptions: Vec<&Value> = seen
        .iter()
        .filter(|m| m["http"] == "GET")
        .map(|m| &m["headers"]["last-event-id"])
        .collect();
    assert_eq!(resumptions, [&json!("r-1"), &json!("g-5")], "{seen:?}");
    let calls: Vec<&Value> = seen
        .iter()
        .filter(|m| m["message"]["method"] == "tools/call")
        .map(|m| &m["message"]["id"])
        .collect();
    assert_eq!(
        calls,
        [&json!(1), &json!(3), &json!(4), &json!("gone")],
        "the invalid call never reached the upstream"
    );
    assert!(seen.iter().any(|m| m["http"] == "DELETE"), "{seen:?}");
}

/// `--session-idle`: a session with no message for that long is closed (404 from then on); a
/// request body that does not arrive in `--request-timeout` gets 408.
#[test]
fn idle_sessions_close_and_slow_bodies_time_out() {
    let dir = tempfile::tempdir().unwrap();
    let record = dir.path().join("record.jsonl");
    let mut args = strings(&["--session-idle", "1", "--request-timeout", "2", "--"]);
    args.extend(recording_server(&record, &[]));
    let proxy = Listening::start(&args);
    let session = http::initialize(&proxy.url, &[]);
    let ping = r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#;
    assert_eq!(http::post(&proxy.url, &session, &[], ping).status, 200);
    // Every message keeps a session alive: wait past the idle time, then ask once.
    std::thread::sleep(Duration::from_millis(2500));
    let gone = http::post(&proxy.url, &session, &[], ping);
    assert_eq!(
        gone.status, 404,
        "the idle session was not closed: {gone:?}"
    );

    // Headers, then half the body, then nothing.
    let mut stream = http::open(
        "POST",
        &proxy.url,
        &[("content-length", "200")],
        r#"{"jsonrpc":"2.0","id":0,"#,
    );
    let reply = http::read_reply(&mut stream);
    assert_eq!(reply.status, 408, "{reply:?}");
    assert_eq!(
        reply.json()["error"]["message"],
        "the request body did not arrive within 2 s (--request-timeout)"
    );
    let stderr = proxy.stop();
    assert!(stderr.contains("closed an idle session"), "{stderr}");
}

/// A process known by its id and start time (an id the system reuses names another process).
#[cfg(target_os = "linux")]
#[derive(Debug, Clone, Copy, PartialEq)]
struct Proc {
    pid: u32,
    started: u64,
}

#[cfg(target_os = "linux")]
impl Proc {
    /// The state and start time of process `pid`, from `/proc`.
    fn stat(pid: u32) -> Option<(char, u64)> {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
        // `pid (command) state ...`: the command may hold spaces; the start time is the 22nd
        // field, the 20th after the command.
        let fields: Vec<&str> = stat.rsplit_once(") ")?.1.split(' ').collect();
        Some((
            fields.first()?.chars().next()?,
            fields.get(19)?.parse().ok()?,
        ))
    }

    fn new(pid: u32) -> Proc {
        let started = Proc::stat(pid).map(|(_, t)| t).unwrap_or(0);
        Proc { pid, started }
    }

    /// Whether it still runs (one that exited but was not reaped yet does not).
    fn running(&self) -> bool {
        Proc::stat(self.pid)
            .is_some_and(|(state, started)| started == self.started && !matches!(state, 'Z' | 'X'))
    }

    /// Wait up to ten seconds for it to stop running; whether it did.
    fn stops(&self) -> bool {
        let start = std::time::Instant::now();
        while start.elapsed() < Duration::from_secs(10) {
            if !self.running() {
                return true;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        false
    }
}

/// Kills the processes still running when a test ends, failed or not.
#[cfg(target_os = "linux")]
struct KillOnDrop(Vec<Proc>);

#[cfg(target_os = "linux")]
impl Drop for KillOnDrop {
    fn drop(&mut self) {
        for p in self.0.iter().filter(|p| p.running()) {
            let _ = std::process::Command::new("kill")
                .args(["-KILL", &p.pid.to_string()])
                .status();
        }
    }
}

/// The server processes of `--listen ADDR -- CMD`, one per session: DELETE stops its session's
/// server, and stopping the proxy (SIGTERM) stops every other one, even servers that outlive
/// their input and ignore SIGTERM; none is left behind.
#[cfg(target_os = "linux")]
#[test]
fn each_sessions_server_stops_with_its_session_and_all_with_the_proxy() {
    let dir = tempfile::tempdir().unwrap();
    let pids = dir.path().join("pids");
    let record = dir.path().join("record.jsonl");
    // Each server is a shell that ignores SIGTERM (its children inherit that), starts a
    // process that sleeps on, writes both ids, and runs the MCP server; the shell exits with it
    // (its input closed), and what it started is left, which only SIGKILL to the process group
    // ends.
    let server: Vec<String> = recording_server(&record, &[])
        .iter()
        .map(|a| format!("'{}'", a.replace('\'', r"'\''")))
        .collect();
    let script = format!(
        "trap '' TERM; sleep 120 & echo $$ $! >> '{}'; {}",
        pids.display(),
        server.join(" ")
    );
    let proxy = Listening::start(&strings(&["--", "sh", "-c", &script]));
    let ping = r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#;
    let sessions: Vec<String> = (0..3).map(|_| http::initialize(&proxy.url, &[])).collect();
    for session in &sessions {
        assert_eq!(http::post(&proxy.url, session, &[], ping).status, 200);
    }
    // (server, what it started) per session.
    let started: Vec<(Proc, Proc)> = std::fs::read_to_string(&pids)
        .unwrap()
        .lines()
        .map(|l| {
            let (server, child) = l.trim().split_once(' ').unwrap();
            (
                Proc::new(server.parse().unwrap()),
                Proc::new(child.parse().unwrap()),
            )
        })
        .collect();
    let all: Vec<Proc> = started.iter().flat_map(|&(a, b)| [a, b]).collect();
    let _cleanup = KillOnDrop(all.clone());
    assert_eq!(started.len(), 3, "one server per session: {started:?}");
    assert!(all.iter().all(Proc::running), "{started:?}");

    let deleted = http::request(
        "DELETE",
        &proxy.url,
        &[("mcp-session-id", &sessions[0])],
        "",
    );
    assert_eq!(deleted.status, 200);
    // Which server was the deleted session's is not known here: exactly one stops, with what
    // it started.
    let start = std::time::Instant::now();
    while all.iter().filter(|p| p.running()).count() > 4
        && start.elapsed() < Duration::from_secs(10)
    {
        std::thread::sleep(Duration::from_millis(50));
    }
    let left: Vec<(Proc, Proc)> = started
        .iter()
        .copied()
        .filter(|(server, _)| server.running())
        .collect();
    assert_eq!(left.len(), 2, "DELETE did not stop one server: {started:?}");
    let stopped = started.iter().find(|s| !left.contains(s)).unwrap();
    assert!(stopped.1.stops(), "{stopped:?}: its child outlived it");
    assert_eq!(http::post(&proxy.url, &sessions[1], &[], ping).status, 200);

    let stderr = proxy.stop();
    for p in left.iter().flat_map(|&(a, b)| [a, b]) {
        assert!(p.stops(), "{p:?} outlived the proxy; stderr:\n{stderr}");
    }
}

/// The processes below `root` in the process tree: (pid, command, state), `root` excluded.
#[cfg(target_os = "linux")]
fn descendants(root: u32) -> Vec<(u32, String, char)> {
    let mut all = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue;
        };
        // `pid (command) state ppid ...`: the command may hold spaces and parentheses.
        let (Some(open), Some(close)) = (stat.find('('), stat.rfind(')')) else {
            continue;
        };
        let fields: Vec<&str> = stat[close + 2..].split(' ').collect();
        let (Some(state), Some(Ok(ppid))) = (
            fields.first().and_then(|s| s.chars().next()),
            fields.get(1).map(|p| p.parse::<u32>()),
        ) else {
            continue;
        };
        all.push((pid, ppid, stat[open + 1..close].to_string(), state));
    }
    let mut found: Vec<(u32, String, char)> = Vec::new();
    let mut parents = vec![root];
    while let Some(parent) = parents.pop() {
        for (pid, ppid, command, state) in &all {
            if *ppid == parent {
                found.push((*pid, command.clone(), *state));
                parents.push(*pid);
            }
        }
    }
    found
}

/// As a container's first process (PID 1 of its PID namespace), the proxy runs as a reaping
/// init: what a session's server leaves behind when it stops is reaped, not kept as a zombie
/// for the life of the proxy, and SIGTERM reaches the proxy, whose exit status the init takes.
#[cfg(target_os = "linux")]
#[test]
fn as_a_containers_first_process_it_reaps_what_servers_leave_and_passes_signals_on() {
    let dir = tempfile::tempdir().unwrap();
    let server: Vec<String> = recording_server(&dir.path().join("record.jsonl"), &[])
        .iter()
        .map(|a| format!("'{}'", a.replace('\'', r"'\''")))
        .collect();
    // Each server leaves a process that sleeps on; stopping the session kills it with the
    // server's process group, and it is handed to PID 1.
    let script = format!("sleep 120 & exec {}", server.join(" "));
    // A PID namespace of its own, with a user namespace so that no privilege is needed.
    let namespace = [
        "unshare",
        "--user",
        "--map-root-user",
        "--pid",
        "--fork",
        "--mount-proc",
    ];
    let probe = std::process::Command::new(namespace[0])
        .args(&namespace[1..])
        .arg("true")
        .output();
    assert!(
        probe.as_ref().is_ok_and(|o| o.status.success()),
        "this test needs util-linux `unshare` and user namespaces (a PID namespace of its own): {probe:?}"
    );
    let mut proxy = Listening::start_under(&namespace, &strings(&["--", "sh", "-c", &script]));
    let unshare = proxy.process.pid();
    let first = descendants(unshare)
        .first()
        .map(|(pid, _, _)| *pid)
        .expect("unshare runs the proxy");
    // Ending the namespace's first process ends every process in it.
    let _cleanup = KillOnDrop(vec![Proc::new(first)]);
    let sleeping = || {
        descendants(unshare)
            .into_iter()
            .filter(|(_, command, _)| command == "sleep")
            .collect::<Vec<_>>()
    };

    let ping = r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#;
    let sessions: Vec<String> = (0..3).map(|_| http::initialize(&proxy.url, &[])).collect();
    for session in &sessions {
        assert_eq!(http::post(&proxy.url, session, &[], ping).status, 200);
    }
    // (A forked shell becomes `sleep` once it has run it.)
    let start = std::time::Instant::now();
    while sleeping().len() < 3 && start.elapsed() < Duration::from_secs(10) {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(sleeping().len(), 3, "{:?}", descendants(unshare));
    for session in &sessions {
        let deleted = http::request("DELETE", &proxy.url, &[("mcp-session-id", session)], "");
        assert_eq!(deleted.status, 200);
    }
    // Killed, they are zombies until PID 1 reaps them.
    let start = std::time::Instant::now();
    while !sleeping().is_empty() && start.elapsed() < Duration::from_secs(10) {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(sleeping(), vec![], "left unreaped");

    let _ = std::process::Command::new("kill")
        .args(["-TERM", &first.to_string()])
        .status();
    let (status, stderr) = proxy.process.wait();
    assert!(status.success(), "{status}: {stderr}");

    // The init ends as its child does: exit 2 for bad input.
    let bad = std::process::Command::new(namespace[0])
        .args(&namespace[1..])
        .args([toolschema(), "lint", "/nonexistent.json"])
        .output()
        .unwrap();
    assert_eq!(bad.status.code(), Some(2), "{bad:?}");
}

/// Every answer goes on the stream of the request it answers, and nowhere else: a request that
/// reuses the id of one in flight is refused on its own stream while the first still gets its
/// own answer; two clients of one 2026-07-28 lane that both use id 1 each get their own
/// answer; a 2025-03-26 batch whose first answer is the proxy's refusal of an invalid call is
/// answered, as a batch, on the batch's stream, when its other call runs out of time (the
/// recording server answers no batch).
#[test]
fn answers_never_cross_streams() {
    let dir = tempfile::tempdir().unwrap();
    let record = dir.path().join("record.jsonl");
    let mut args = strings(&["--request-timeout", "4", "--"]);
    args.extend(recording_server(&record, &[]));
    let proxy = Listening::start(&args);
    let url = proxy.url.clone();
    let slow = |id: &str| {
        format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"slow","arguments":{{"ms":1500}}}}}}"#
        )
    };

    // The same id twice in a session: the second is refused, the first answered as it was.
    let session = http::initialize(&url, &[]);
    let mut first = http::open(
        "POST",
        &url,
        &[
            ("mcp-session-id", &session),
            ("mcp-protocol-version", "2025-11-25"),
        ],
        &slow("5"),
    );
    std::thread::sleep(Duration::from_millis(300));
    let again = http::post(
        &url,
        &session,
        &[],
        r#"{"jsonrpc":"2.0","id":5,"method":"ping"}"#,
    );
    assert_eq!(
        again.messages(),
        [
            json!({"jsonrpc": "2.0", "id": 5, "error": {"code": -32600, "message": "request id 5 is already used by a request in flight"}})
        ],
        "{again:?}"
    );
    let answered = http::read_reply(&mut first);
    assert_eq!(
        answered.messages(),
        [
            json!({"jsonrpc": "2.0", "id": 5, "result": {"content": [{"type": "text", "text": "slow done"}]}})
        ],
        "{answered:?}"
    );

    // Two clients of the anonymous lane, both with id 1.
    let modern = |name: &str, arguments: &str| {
        format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"{name}","arguments":{arguments},"_meta":{{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{{}}}}}}}}"#
        )
    };
    let headers = |name: &'static str| {
        [
            ("mcp-protocol-version", "2026-07-28"),
            ("mcp-method", "tools/call"),
            ("mcp-name", name),
        ]
    };
    let mut a = http::open(
        "POST",
        &url,
        &headers("slow"),
        &modern("slow", r#"{"ms":1500}"#),
    );
    std::thread::sleep(Duration::from_millis(300));
    let b = http::request(
        "POST",
        &url,
        &headers("echo"),
        &modern("echo", r#"{"message":"for b"}"#),
    );
    assert_eq!(
        b.messages().last().unwrap()["result"]["content"][0]["text"],
        "echo: for b",
        "{b:?}"
    );
    assert_eq!(b.messages().last().unwrap()["id"], 1);
    let a = http::read_reply(&mut a);
    assert_eq!(
        a.messages().last().unwrap()["result"]["content"][0]["text"],
        "slow done",
        "{a:?}"
    );
    assert_eq!(a.messages().last().unwrap()["id"], 1);

    // A 2025-03-26 batch: a valid call and an invalid one.
    let reply = http::request(
        "POST",
        &url,
        &[],
        r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"test","version":"1"}}}"#,
    );
    let old = reply.header("mcp-session-id").unwrap().to_string();
    let in_old = [("mcp-session-id", old.as_str())];
    let ack = http::request(
        "POST",
        &url,
        &in_old,
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
    );
    assert_eq!(ack.status, 202, "{ack:?}");
    let batch = http::request(
        "POST",
        &url,
        &in_old,
        r#"[{"jsonrpc":"2.0","id":"c","method":"tools/call","params":{"name":"search","arguments":{"query":"xyz"}}},{"jsonrpc":"2.0","id":"d","method":"tools/call","params":{"name":"search","arguments":{"query":"x"}}}]"#,
    );
    let answers = batch.messages();
    let answers = match answers.as_slice() {
        [Value::Array(answers)] => answers.clone(),
        other => panic!("not one batch: {other:?} {batch:?}"),
    };
    let answer = |id: &str| answers.iter().find(|a| a["id"] == id).cloned();
    assert_eq!(answers.len(), 2, "{answers:?}");
    assert_eq!(
        answer("d").unwrap()["result"]["content"][0]["text"],
        "argument 'query' string length must be >= 3 (got 1)"
    );
    assert_eq!(
        answer("c").unwrap()["error"]["message"],
        "the request was not answered within 4 s (--request-timeout) and was cancelled"
    );
    proxy.stop();
}

/// What a client names reaches the proxy's logs escaped: a line feed in a tool name cannot
/// start a forged line on standard error, and bidirectional and C1 controls are `\u` escapes in
/// the access log and the audit log, which read back as the same names.
#[test]
fn client_text_in_the_logs_steers_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let record = dir.path().join("record.jsonl");
    let access = dir.path().join("access.jsonl");
    let audit = dir.path().join("audit.jsonl");
    let mut args = strings(&["--access-log"]);
    args.push(access.display().to_string());
    args.push("--audit".into());
    args.push(audit.display().to_string());
    args.push("--".into());
    args.extend(recording_server(&record, &[]));
    let proxy = Listening::start(&args);
    let session = http::initialize(&proxy.url, &[]);
    let forged = "echo\ntoolschema: tools/call client=admin auth=token tool=delete_everything";
    let hostile = "x\u{202E}gnp.exe\u{9B}31m\u{200B}";
    for (id, name) in [(1, forged), (2, hostile)] {
        let body = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": name, "arguments": {}}});
        http::post(&proxy.url, &session, &[], &body.to_string());
    }
    let stderr = proxy.stop();
    assert!(
        !stderr
            .lines()
            .any(|l| l.starts_with("toolschema: tools/call client=admin")),
        "{stderr}"
    );
    assert!(
        stderr.contains("tool=echo<U+000A>toolschema: tools/call client=admin"),
        "{stderr}"
    );
    for log in [&access, &audit] {
        let text = std::fs::read_to_string(log).unwrap();
        assert!(
            !text.contains(['\u{202E}', '\u{9B}', '\u{200B}']),
            "{}: {text}",
            log.display()
        );
        let names: Vec<Value> = text
            .lines()
            .map(|l| serde_json::from_str::<Value>(l).unwrap()["tool"].clone())
            .collect();
        assert!(names.contains(&json!(hostile)), "{}: {text}", log.display());
    }
}

/// `--access-log /dev/stdout` hands the log to a shipper that may stall: a refused request is
/// still answered at once (token guessing must not be able to stop the proxy through its log).
#[test]
fn a_reader_that_stops_reading_the_access_log_never_stops_the_requests() {
    let dir = tempfile::tempdir().unwrap();
    let record = dir.path().join("record.jsonl");
    std::fs::write(
        dir.path().join("tokens"),
        "alice:alice-token-0123456789abcdef\n",
    )
    .unwrap();
    let log = common::StalledFifo::new(&dir.path().join("access.fifo"));
    let mut args = strings(&["--auth-token-file", "tokens", "--access-log"]);
    args.push(log.path.display().to_string());
    args.push("--".into());
    args.extend(recording_server(&record, &[]));
    let proxy = Listening::start_in(Some(dir.path()), &args);
    let requests = 600;
    for n in 0..requests {
        let guess = format!("Bearer guess-{n:0>200}");
        let reply = http::request(
            "POST",
            &proxy.url,
            &[("authorization", &guess)],
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#,
        );
        assert_eq!(reply.status, 401, "request {n}");
    }
    log.start_reading();
    proxy.stop();
    let text = log.text();
    let refused = text
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|l| l["event"] == "refused" && l["status"] == 401)
        .count();
    assert_eq!(refused, requests);
}

/// An upstream message that is no JSON as it stands (SSE joins an event's `data:` lines with
/// "\n", here inside a string; a JSON body with a raw line break inside a string) is refused and
/// reported, and its request fails saying so: it is never mended into another message.
#[test]
fn an_upstream_message_that_is_no_json_as_it_stands_fails_its_request() {
    let dir = tempfile::tempdir().unwrap();
    let record = dir.path().join("record.jsonl");
    let upstream = HttpServer::scripted(&record);
    let proxy = Listening::start(&strings(&["--upstream", &upstream.url]));
    let session = http::initialize(&proxy.url, &[]);
    for (id, tool) in [(1, "split"), (2, "split-body")] {
        let call = format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"{tool}","arguments":{{}}}}}}"#
        );
        let messages = http::post(&proxy.url, &session, &[], &call).messages();
        assert!(
            !format!("{messages:?}").contains("line one"),
            "{tool}: a different message was passed on: {messages:?}"
        );
        let last = messages.last().unwrap();
        assert_eq!(last["id"], id, "{messages:?}");
        let error = last["error"]["message"].as_str().unwrap_or_default();
        assert!(
            error.contains("not a JSON-RPC message as it stands")
                && error.contains("not valid JSON"),
            "{tool}: {messages:?}"
        );
    }
    let stderr = proxy.stop();
    assert!(
        stderr.contains("it was refused, not passed on"),
        "reported: {stderr}"
    );
}

/// Whether the server closed `stream` within `limit`; what it sent before, or why not.
fn closed_within(stream: &mut std::net::TcpStream, limit: Duration) -> Result<String, String> {
    use std::io::Read;
    let start = std::time::Instant::now();
    let mut got = Vec::new();
    let mut buffer = vec![0u8; 1 << 16];
    while start.elapsed() < limit {
        stream
            .set_read_timeout(Some(Duration::from_millis(500)))
            .unwrap();
        match stream.read(&mut buffer) {
            Ok(0) => return Ok(String::from_utf8_lossy(&got).into_owned()),
            Ok(n) => got.extend_from_slice(&buffer[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => {
                return Ok(String::from_utf8_lossy(&got).into_owned())
            }
            Err(_) => {}
        }
    }
    Err(format!(
        "still open after {limit:?}; it sent {} bytes",
        got.len()
    ))
}

fn authority(url: &str) -> String {
    let rest = url.strip_prefix("http://").unwrap();
    rest.split('/').next().unwrap().to_string()
}

const PING: &str = r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#;

/// A peer that stalls is not held: half a request head, a connection that sends nothing, and
/// half a body (408) are each closed after `--read-timeout`; others are served meanwhile.
#[test]
fn stalled_peers_are_closed_after_the_read_timeout() {
    use std::io::Write;
    let proxy = Listening::start(&strings(&[
        "--read-timeout",
        "1",
        "--",
        &everything_stdio(),
    ]));
    let at = authority(&proxy.url);
    let mut half_head = std::net::TcpStream::connect(&at).unwrap();
    half_head
        .write_all(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: appl")
        .unwrap();
    let mut silent = std::net::TcpStream::connect(&at).unwrap();
    let mut half_body = http::open(
        "POST",
        &proxy.url,
        &[("content-length", "100")],
        r#"{"jsonrpc":"2.0","#,
    );
    // Served meanwhile: no session, so a 400 that says so.
    assert_eq!(http::request("POST", &proxy.url, &[], PING).status, 400);
    for (what, stream) in [("half a head", &mut half_head), ("nothing", &mut silent)] {
        closed_within(stream, Duration::from_secs(20)).unwrap_or_else(|e| panic!("{what}: {e}"));
    }
    let reply = http::read_reply(&mut half_body);
    assert_eq!(reply.status, 408, "{reply:?}");
    assert!(reply.body.contains("--read-timeout"), "{reply:?}");
    assert_eq!(http::request("POST", &proxy.url, &[], PING).status, 400);
    proxy.stop();
}

/// The CPU time (user and system) a process used so far, in clock ticks.
fn cpu_ticks(pid: u32) -> u64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    // After the command name in parentheses: state is field 3, utime 14 and stime 15.
    let fields: Vec<&str> = stat
        .rsplit_once(')')
        .unwrap()
        .1
        .split_whitespace()
        .collect();
    fields[11].parse::<u64>().unwrap() + fields[12].parse::<u64>().unwrap()
}

/// Peers that open connections and send nothing, more than the proxy has descriptors for (it
/// runs under `ulimit -n 64`, they stay for the whole read timeout): the proxy neither spins nor
/// keeps a client out, and still has descriptors to reach its upstream.
#[test]
fn out_of_descriptors_the_proxy_neither_spins_nor_keeps_clients_out() {
    let dir = tempfile::tempdir().unwrap();
    let upstream = HttpServer::scripted(&dir.path().join("record.jsonl"));
    let proxy = Listening::start_under(
        &["sh", "-c", "ulimit -n 64 && exec \"$0\" \"$@\""],
        &strings(&["--read-timeout", "60", "--upstream", &upstream.url]),
    );
    let at = authority(&proxy.url);
    let stalled: Vec<std::net::TcpStream> = (0..120)
        .map(|_| std::net::TcpStream::connect(&at).unwrap())
        .collect();
    std::thread::sleep(Duration::from_millis(500));
    let pid = proxy.process.pid();
    let before = cpu_ticks(pid);
    let window = Duration::from_secs(2);
    std::thread::sleep(window);
    let used = cpu_ticks(pid) - before;
    // 100 ticks a second: a loop that spins uses most of them, one that waits next to none.
    // A generous bound, on a spin, not a benchmark.
    assert!(
        used < 50,
        "the proxy used {used} ticks of CPU in {window:?} while peers held its connections"
    );
    // Served long before the stalled peers' 60 s are up, with descriptors left to reach the
    // upstream.
    let session = http::initialize(&proxy.url, &[]);
    let listed = http::list_tools(&proxy.url, &session, 2);
    assert_eq!(listed.status, 200, "{listed:?}");
    assert!(listed.body.contains(r#""tools":["#), "{listed:?}");
    drop(stalled);
    let stderr = proxy.stop();
    assert!(
        stderr.contains("connections are open, as many as this server takes"),
        "said once: {stderr}"
    );
}

/// The most memory a process held so far (its peak resident set), in bytes.
fn peak_rss(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let line = status.lines().find(|l| l.starts_with("VmHWM:")).unwrap();
    let kib: u64 = line.split_whitespace().nth(1).unwrap().parse().unwrap();
    kib * 1024
}

/// A client that stops reading its stream while the upstream floods it with large
/// notifications (400 of 1 MiB) costs the proxy a bounded amount of memory: past the stream's
/// byte budget the client loses its stream (reported) and its request is cancelled at the
/// upstream; what was queued for it is all it reads before its stream ends.
#[test]
fn a_client_that_stops_reading_loses_its_stream_and_memory_stays_bounded() {
    let dir = tempfile::tempdir().unwrap();
    let record = dir.path().join("record.jsonl");
    let upstream = HttpServer::scripted(&record);
    let proxy = Listening::start(&strings(&["--upstream", &upstream.url]));
    let session = http::initialize(&proxy.url, &[]);
    let call = r#"{"jsonrpc":"2.0","id":"flood","method":"tools/call","params":{"name":"flood","arguments":{"count":400,"size":1048576}}}"#;
    let mut slow = http::open(
        "POST",
        &proxy.url,
        &[
            ("mcp-session-id", &session),
            ("mcp-protocol-version", "2025-11-25"),
        ],
        call,
    );
    let lost = "a client did not read the stream of a request and lost it";
    let ended = http::eventually(Duration::from_secs(180), || {
        proxy.process.stderr().contains(lost)
            || recorded(&record).contains(&json!({"flooded": "flood"}))
    });
    assert!(ended, "the flood neither ended nor was cut off");
    let peak = peak_rss(proxy.process.pid());
    assert!(
        peak < 256 << 20,
        "the proxy held {} MiB for a client that does not read",
        peak >> 20
    );
    // Reading now, the client gets what was queued for it, then the end of its stream.
    let read = closed_within(&mut slow, Duration::from_secs(60))
        .unwrap_or_else(|e| panic!("the slow client's stream: {e}"));
    assert!(read.len() < 64 << 20, "it read {} MiB", read.len() >> 20);
    assert!(
        http::eventually(Duration::from_secs(20), || recorded(&record)
            .contains(&json!({"closed": "flood"}))),
        "the request was not cancelled at the upstream"
    );
    let stderr = proxy.stop();
    assert!(stderr.contains(lost), "reported: {stderr}");
}

/// A stdio client (`proxy --upstream` alone) that stops reading while the upstream floods it
/// (96 notifications of 1 MiB, `--max-message-bytes 2MiB`): past the room of what waits for the
/// client, the proxy reads neither side until the client reads (back-pressure, as a pipe), so
/// it holds a bounded amount, and nothing is lost: once the client reads, every notification
/// comes, whole and in order, then the answer.
#[test]
fn a_stdio_client_that_stops_reading_holds_the_upstream_back_and_loses_nothing() {
    use std::io::{BufRead, BufReader, Write};
    use std::process::{Command, Stdio};
    let dir = tempfile::tempdir().unwrap();
    let record = dir.path().join("record.jsonl");
    let upstream = HttpServer::scripted(&record);
    let stderr = dir.path().join("stderr");
    let mut proxy = Command::new(toolschema())
        .args([
            "proxy",
            "--max-message-bytes",
            "2MiB",
            "--upstream",
            &upstream.url,
        ])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(std::fs::File::create(&stderr).unwrap())
        .spawn()
        .unwrap();
    let mut input = proxy.stdin.take().unwrap();
    let mut output = BufReader::new(proxy.stdout.take().unwrap());
    let mut read = || {
        let mut line = String::new();
        output.read_line(&mut line).unwrap();
        serde_json::from_str::<Value>(&line).unwrap_or_else(|e| {
            let said = std::fs::read_to_string(&stderr).unwrap_or_default();
            panic!("not JSON ({e}): {line:?}; stderr: {said}")
        })
    };
    let count = 96;
    let lines = [
        r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"test","version":"1"}}}"#.to_string(),
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#.to_string(),
        format!(r#"{{"jsonrpc":"2.0","id":"flood","method":"tools/call","params":{{"name":"flood","arguments":{{"count":{count},"size":1048576}}}}}}"#),
    ];
    for line in &lines {
        writeln!(input, "{line}").unwrap();
    }
    input.flush().unwrap();
    assert_eq!(read()["id"], 0);
    // The client reads nothing more for now.
    let over = 48u64 << 20;
    let pid = proxy.id();
    let flooded = || recorded(&record).contains(&json!({"flooded": "flood"}));
    let wrote_all = http::eventually(Duration::from_secs(15), flooded);
    let peak = peak_rss(pid);
    assert!(
        peak <= over,
        "the proxy held {} MiB for a client that does not read",
        peak >> 20
    );
    assert!(
        !wrote_all,
        "the upstream wrote all {count} MiB while the client read nothing"
    );
    // Reading now: all of it, in order, then the answer.
    for n in 0..count {
        let note = read();
        assert_eq!(note["method"], "notifications/message", "message {n}");
        let data = note["params"]["data"].as_str().unwrap_or_default();
        assert_eq!(data.len(), 1 << 20, "message {n}");
    }
    let answer = read();
    assert_eq!(answer["id"], "flood", "{answer}");
    assert_eq!(
        answer["result"]["content"][0]["text"], "flooded",
        "{answer}"
    );
    drop(input);
    let status = proxy.wait().unwrap();
    assert!(status.success(), "{status}");
}

/// A stdio client that sends calls without waiting for their answers: at most 256 of its
/// requests are under way at the upstream at once (each a task and a connection); a call past
/// them is answered at once with an error that says why, and never sent.
#[test]
fn requests_under_way_at_the_upstream_are_bounded_and_those_past_the_bound_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let record = dir.path().join("record.jsonl");
    let upstream = HttpServer::scripted(&record);
    let mut client = common::Session::start(
        toolschema(),
        &strings(&["proxy", "--upstream", &upstream.url]),
    );
    client.initialize();
    client.send(r#"{"jsonrpc":"2.0","id":"list","method":"tools/list"}"#);
    assert!(client.recv_reply()["result"]["tools"].is_array());
    for n in 1..=260 {
        client.send(&format!(
            r#"{{"jsonrpc":"2.0","id":{n},"method":"tools/call","params":{{"name":"slow","arguments":{{}}}}}}"#
        ));
    }
    let mut refused = Vec::new();
    while refused.len() < 4 {
        let message = client.recv();
        if message.get("id").is_some() {
            refused.push(message);
        }
    }
    for (message, id) in refused.iter().zip(257..) {
        assert_eq!(message["id"], id, "{refused:?}");
        let text = message["error"]["message"].as_str().unwrap_or_default();
        assert!(
            text.contains("256 requests of this session are under way at the upstream already"),
            "{message}"
        );
    }
    let slow_calls = || {
        recorded(&record)
            .iter()
            .filter(|e| e["message"]["params"]["name"] == "slow")
            .count()
    };
    http::eventually(Duration::from_secs(20), || slow_calls() >= 256);
    assert_eq!(slow_calls(), 256);
    assert!(client
        .stderr()
        .contains("256 requests of the session are under way at the upstream"));
}

/// A server that answers `initialize`, then stops reading its input.
const DEAF_SERVER: &str = r#"
const rl = require("readline").createInterface({ input: process.stdin });
rl.on("line", (line) => {
  const m = JSON.parse(line);
  if (m.method === "initialize") {
    const result = { protocolVersion: "2025-11-25", capabilities: { tools: {} }, serverInfo: { name: "deaf", version: "1" } };
    process.stdout.write(JSON.stringify({ jsonrpc: "2.0", id: m.id, result }) + "\n");
  } else if (m.method === "notifications/initialized") {
    // Reads nothing more: the process sleeps.
    require("child_process").execSync("sleep 600");
  }
});
"#;

/// A client that keeps sending to a server that stopped reading its input (300 notifications
/// of 1 MiB) costs the proxy a bounded amount of memory: past the queue's budget the messages
/// are not sent (said on stderr), and a request is answered at once with an error that says why.
#[test]
fn a_server_that_stops_reading_costs_a_bounded_amount_of_memory() {
    let proxy = Listening::start(&strings(&["--", &node(), "-e", DEAF_SERVER]));
    let session = http::initialize(&proxy.url, &[]);
    let note = format!(
        r#"{{"jsonrpc":"2.0","method":"notifications/message","params":{{"level":"info","data":"{}"}}}}"#,
        "x".repeat(1 << 20)
    );
    for _ in 0..300 {
        let reply = http::post(&proxy.url, &session, &[], &note);
        assert_eq!(reply.status, 202, "{reply:?}");
    }
    let peak = peak_rss(proxy.process.pid());
    assert!(
        peak < 256 << 20,
        "the proxy held {} MiB for a server that does not read",
        peak >> 20
    );
    // A request larger than the room left.
    let ping = format!(
        r#"{{"jsonrpc":"2.0","id":9,"method":"ping","params":{{"_meta":{{"pad":"{}"}}}}}}"#,
        "x".repeat(1 << 20)
    );
    let ping = http::post(&proxy.url, &session, &[], &ping);
    let answer = ping.messages();
    assert_eq!(answer[0]["id"], 9, "{ping:?}");
    assert!(
        answer[0]["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("the server is not taking messages")),
        "{ping:?}"
    );
    let stderr = proxy.stop();
    let said = stderr
        .matches("the server has not taken what was sent to it before")
        .count();
    assert_eq!(said, 1, "said once: {stderr}");
}
