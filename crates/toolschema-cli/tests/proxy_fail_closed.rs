//! `toolschema proxy` in front of the project's scripted server (interop/scripted-server.mjs),
//! which pages, fails, asks the client back, dies, and judges every call it receives with a
//! validator of its own: an invalid call never reaches it, every request gets one answer with
//! its own id, valid calls still work, and the session keeps flowing while the proxy lists.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;
#[path = "../../toolschema/tests/support/mod.rs"]
mod support;

use common::{recorded_lines, scripted_server, Session, WAIT};
use serde_json::{json, Value};
use std::path::PathBuf;
use std::time::{Duration, Instant};
use toolschema::json::{parse_with, DuplicateKeys};

struct Setup {
    _dir: tempfile::TempDir,
    record: PathBuf,
    verdicts: PathBuf,
}

fn setup() -> Setup {
    let dir = tempfile::tempdir().unwrap();
    Setup {
        record: dir.path().join("received.jsonl"),
        verdicts: dir.path().join("verdicts.jsonl"),
        _dir: dir,
    }
}

impl Setup {
    fn server(&self, script: &str) -> Vec<String> {
        scripted_server(&self.record, &self.verdicts, script)
    }

    /// The server's own verdict on every call it received: none may be invalid.
    fn verdicts(&self) -> Vec<Value> {
        std::fs::read_to_string(&self.verdicts)
            .unwrap_or_default()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }

    fn assert_no_invalid_call_arrived(&self) {
        let verdicts = self.verdicts();
        assert!(
            verdicts.iter().all(|v| v["valid"] != false),
            "the server received an invalid call: {verdicts:?}"
        );
    }

    /// The ids of the calls the server received.
    fn called(&self) -> Vec<Value> {
        self.verdicts().iter().map(|v| v["id"].clone()).collect()
    }
}

fn start(setup: &Setup, proxy_args: &[&str], script: &str) -> Session {
    let mut session = Session::proxy(proxy_args, &setup.server(script));
    session.initialize();
    session
}

/// The proxy in front of the scripted server listing `tools` (a script too large for a command
/// line: it goes through a file), after the client's first listing.
fn start_listed(setup: &Setup, tools: Value) -> Session {
    let script = setup.record.with_file_name("script.json");
    std::fs::write(&script, json!({ "tools": tools }).to_string()).unwrap();
    let mut proxy = start(setup, &[], &format!("@{}", script.display()));
    proxy.send(r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#);
    reply(&mut proxy);
    proxy
}

/// A line the client received, read as the core reads it (it may hold lone surrogates).
fn read(line: &str) -> Value {
    parse_with(line, DuplicateKeys::KeepLast).unwrap_or_else(|e| panic!("{e:?}: {line}"))
}

/// The next message that is not a notification, read as the core reads it.
fn reply(session: &mut Session) -> Value {
    loop {
        let message = read(&session.recv_line());
        if message.get("id").is_some() {
            return message;
        }
    }
}

fn call(id: impl Into<Value>, name: &str, arguments: Value) -> String {
    json!({"jsonrpc": "2.0", "id": id.into(), "method": "tools/call", "params": {"name": name, "arguments": arguments}}).to_string()
}

fn tool(name: &str, max: u64) -> Value {
    json!({"name": name, "inputSchema": {"type": "object", "properties": {"n": {"type": "integer", "maximum": max}}, "required": ["n"]}})
}

fn tool_error(id: impl Into<Value>, text: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id.into(), "result": {"content": [{"type": "text", "text": text}], "isError": true}})
}

fn text_of(reply: &Value) -> &str {
    reply["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
}

#[test]
fn a_listing_with_a_lone_surrogate_is_learned_filtered_and_enforced() {
    let setup = setup();
    // What JSON.stringify writes for a description cut inside an emoji: "\ud83d".
    let script = r#"{"tools": [
        {"name": "count", "description": "Counts 😀 things \ud83d", "inputSchema": {"type": "object", "properties": {"n": {"type": "integer", "maximum": 3}}},
         "outputSchema": {"type": "object", "properties": {"total": {"type": "integer"}}, "required": ["total"]},
         "x-result": {"content": [], "structuredContent": {"total": "many"}}},
        {"name": "delete_all", "description": "\ud83d", "inputSchema": {"type": "object"}}
    ]}"#;
    let mut proxy = start(
        &setup,
        &["--deny", "delete_*", "--output-check", "enforce"],
        script,
    );
    proxy.send(r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#);
    let listed = reply(&mut proxy);
    let names: Vec<&str> = listed["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["count"], "--deny still filters");
    proxy.send(&call(2, "count", json!({"n": 4})));
    assert_eq!(
        reply(&mut proxy),
        tool_error(2, "argument 'n' value must be <= 3 (got 4)")
    );
    proxy.send(&call(3, "count", json!({"n": 1})));
    assert_eq!(
        reply(&mut proxy),
        tool_error(
            3,
            "the result of tool 'count' did not match its outputSchema and was withheld:\nfield 'total' must be an integer (got a string)"
        )
    );
    assert_eq!(setup.called(), [json!(3)]);
    setup.assert_no_invalid_call_arrived();

    // snapshot reads the same listing (no timeout that did not happen).
    let (status, stdout, stderr) = common::run(
        common::toolschema(),
        &[
            vec!["snapshot".to_string(), "--".to_string()],
            setup.server(script),
        ]
        .concat(),
        WAIT,
    );
    assert!(status.success(), "{stderr}");
    let snapshot: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(
        snapshot["tools"][0]["description"],
        "Counts 😀 things \u{fffd}"
    );
}

#[test]
fn a_failed_listing_refuses_calls_and_is_tried_again() {
    let setup = setup();
    let script = json!({"tools": [tool("count", 3)], "listings": ["error", "ok"]}).to_string();
    let audit = setup.record.with_file_name("audit.jsonl");
    let audit_arg = audit.display().to_string();
    let mut proxy = start(&setup, &["--audit", &audit_arg], &script);
    proxy.send(&call(1, "count", json!({"n": 1})));
    assert_eq!(
        reply(&mut proxy),
        tool_error(
            1,
            r#"the proxy could not learn this tool's schema: the server answered the proxy's tools/list with an error: {"code":-32603,"message":"listing is broken"} (the proxy lists the tools again for a call in 1s)"#
        )
    );
    // After the pause, a call lists again and is checked.
    let deadline = Instant::now() + WAIT;
    let mut id = 10;
    loop {
        id += 1;
        proxy.send(&call(id, "count", json!({"n": 9})));
        let answer = reply(&mut proxy);
        if text_of(&answer) == "argument 'n' value must be <= 3 (got 9)" {
            break;
        }
        assert!(
            text_of(&answer).starts_with("the proxy could not learn this tool's schema"),
            "{answer}"
        );
        assert!(
            Instant::now() < deadline,
            "the listing was never tried again"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    proxy.send(&call(100, "count", json!({"n": 2})));
    assert_eq!(
        reply(&mut proxy)["result"]["content"][0]["text"],
        "called count"
    );
    assert_eq!(setup.called(), [json!(100)]);
    proxy.close_stdin();
    let (_, stderr) = proxy.wait();
    assert!(
        stderr.contains("toolschema proxy: the server answered the proxy's tools/list with an error: {\"code\":-32603,\"message\":\"listing is broken\"}; calls to its tools cannot be checked until the proxy lists them again (on a call, after 1s)\n"),
        "{stderr}"
    );
    let first: Value = serde_json::from_str(
        std::fs::read_to_string(&audit)
            .unwrap()
            .lines()
            .next()
            .unwrap(),
    )
    .unwrap();
    assert_eq!(first["verdict"], "unchecked-refused");
    assert_eq!(first["input_check"], "unchecked");
}

#[test]
fn an_own_listing_over_the_size_limit_refuses_calls() {
    let setup = setup();
    let script = json!({"tools": [tool("count", 3)], "listings": ["oversize:70000"]}).to_string();
    let mut proxy = start(&setup, &["--max-message-bytes", "64KiB"], &script);
    proxy.send(&call(1, "count", json!({"n": 1})));
    let answer = reply(&mut proxy);
    assert!(
        text_of(&answer).starts_with("the proxy could not learn this tool's schema: the server's answer to the proxy's tools/list ("),
        "{answer}"
    );
    assert!(
        text_of(&answer).contains("bytes) is over the limit of 65536 bytes (--max-message-bytes)")
    );
    // With --on-unchecked forward, the same call goes through (the proxy says so on stderr).
    let setup = self::setup();
    let mut proxy = start(
        &setup,
        &["--max-message-bytes", "64KiB", "--on-unchecked", "forward"],
        &script,
    );
    for id in [1, 2] {
        proxy.send(&call(id, "count", json!({"n": 9})));
        assert_eq!(text_of(&reply(&mut proxy)), "called count");
    }
    proxy.close_stdin();
    let (_, stderr) = proxy.wait();
    // A warning for every call let through.
    let warning = "toolschema proxy: forwarded a call to tool 'count' unchecked: the proxy could not learn its schema: ";
    assert_eq!(stderr.matches(warning).count(), 2, "{stderr}");
}

#[test]
fn names_mcp_frowns_on_and_unused_external_refs_do_not_stop_checking() {
    let setup = setup();
    let long = "n".repeat(129);
    let mut tools: Vec<Value> = ["a b", "a/b", "ä", long.as_str()]
        .iter()
        .map(|name| tool(name, 3))
        .collect();
    tools.push(json!({"name": "refs", "inputSchema": {
        "type": "object",
        "properties": {"n": {"type": "integer", "maximum": 3}, "cfg": {"$ref": "https://example.com/cfg.json"}},
        "$defs": {"unused": {"$ref": "https://example.com/other.json"}}
    }}));
    let script = json!({ "tools": tools }).to_string();
    let audit = setup.record.with_file_name("audit.jsonl");
    let audit_arg = audit.display().to_string();
    let mut proxy = start(&setup, &["--audit", &audit_arg], &script);
    let mut id = 0;
    for name in ["a b", "a/b", "ä", long.as_str(), "refs"] {
        id += 1;
        proxy.send(&call(id, name, json!({"n": 4})));
        assert_eq!(
            reply(&mut proxy),
            tool_error(id, "argument 'n' value must be <= 3 (got 4)"),
            "{name}"
        );
        id += 1;
        proxy.send(&call(id, name, json!({"n": 3})));
        assert_eq!(text_of(&reply(&mut proxy)), format!("called {name}"));
    }
    // A call that reaches the external $ref cannot be checked: refused, saying why, every
    // time; stderr says it once for the tool; the audit says unchecked-refused.
    for id in [98, 99] {
        proxy.send(&call(id, "refs", json!({"n": 1, "cfg": {}})));
        assert_eq!(
            reply(&mut proxy),
            tool_error(
                id,
                "the proxy could not learn this tool's schema: the schema refers to https://example.com/cfg.json, which is never fetched"
            )
        );
    }
    assert_eq!(setup.called().len(), 5);
    setup.assert_no_invalid_call_arrived();
    proxy.close_stdin();
    let (_, stderr) = proxy.wait();
    let warning = "toolschema proxy: calls to tool 'refs' that reach a part of its schema the proxy cannot check are refused: the schema refers to https://example.com/cfg.json, which is never fetched\n";
    assert_eq!(stderr.matches(warning).count(), 1, "{stderr}");
    let verdicts: Vec<Value> = std::fs::read_to_string(&audit)
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str::<Value>(line).unwrap()["verdict"].clone())
        .collect();
    assert_eq!(
        verdicts[verdicts.len() - 2..],
        [json!("unchecked-refused"), json!("unchecked-refused")]
    );
}

#[test]
fn the_session_flows_while_the_proxy_lists_and_the_server_asks_the_client_back() {
    let setup = setup();
    let script = json!({"tools": [tool("count", 3)], "listings": ["ask_roots"]}).to_string();
    let mut proxy = start(&setup, &[], &script);
    // The call needs a listing; the server asks the client for its roots inside the listing.
    proxy.send(&call(1, "count", json!({"n": 5})));
    let ask = read(&proxy.recv_line());
    assert_eq!(ask["method"], "roots/list");
    // A ping waits behind nothing.
    proxy.send(r#"{"jsonrpc":"2.0","id":"p","method":"ping"}"#);
    assert_eq!(
        proxy.recv_line(),
        r#"{"jsonrpc":"2.0","id":"p","result":{}}"#
    );
    proxy.send(&json!({"jsonrpc": "2.0", "id": ask["id"], "result": {"roots": []}}).to_string());
    // The listing ends, and the call is checked: never the proxy's own answer.
    assert_eq!(
        reply(&mut proxy),
        tool_error(1, "argument 'n' value must be <= 3 (got 5)")
    );
    proxy.send(&call(2, "count", json!({"n": 3})));
    assert_eq!(text_of(&reply(&mut proxy)), "called count");
    assert_eq!(proxy.quiet_for(Duration::from_millis(300)), None);
    assert_eq!(setup.called(), [json!(2)]);
    let lines = recorded_lines(&setup.record);
    assert!(
        lines.iter().any(|l| l.contains(r#""result":{"roots":[]}"#)),
        "{lines:?}"
    );
}

#[test]
fn a_listing_that_never_ends_fails_closed_and_its_late_answer_stays_with_the_proxy() {
    let setup = setup();
    let script = json!({"tools": [tool("count", 3)], "listings": ["delay:3000", "ok"]}).to_string();
    let mut proxy = start(&setup, &["--listing-timeout", "1"], &script);
    proxy.send(&call(1, "count", json!({"n": 1})));
    assert_eq!(
        reply(&mut proxy),
        tool_error(
            1,
            "the proxy could not learn this tool's schema: the server did not answer the proxy's tools/list within 1s (the proxy lists the tools again for a call in 1s)"
        )
    );
    // The late answer (after 3 s) never reaches the client.
    assert_eq!(proxy.quiet_for(Duration::from_secs(4)), None);
    proxy.send(&call(2, "count", json!({"n": 2})));
    assert_eq!(text_of(&reply(&mut proxy)), "called count");
    assert_eq!(setup.called(), [json!(2)]);
}

#[test]
fn ids_are_matched_by_value_and_answered_as_the_client_wrote_them() {
    let setup = setup();
    let script = json!({"tools": [{
        "name": "count",
        "inputSchema": {"type": "object", "properties": {"n": {"type": "integer"}}},
        "outputSchema": {"type": "object", "properties": {"total": {"type": "integer"}}, "required": ["total"]},
        "x-result": {"content": [], "structuredContent": {"total": "many"}}
    }]})
    .to_string();
    let audit = setup.record.with_file_name("audit.jsonl");
    let audit_arg = audit.display().to_string();
    let mut proxy = start(
        &setup,
        // `slow` and `crash` are built into the scripted server, which does not list them.
        &[
            "--output-check",
            "enforce",
            "--audit",
            &audit_arg,
            "--unlisted",
            "forward",
        ],
        &script,
    );
    // Node reads 3.0 as 3 and answers with 3: the check, the audit and the id still hold.
    proxy.send(r#"{"jsonrpc":"2.0","id":3.0,"method":"tools/call","params":{"name":"count","arguments":{}}}"#);
    let line = proxy.recv_line();
    assert!(
        line.starts_with(r#"{"jsonrpc":"2.0","id":3.0,"result":{"content":[{"type":"text","text":"the result of tool 'count' did not match its outputSchema"#),
        "{line}"
    );
    // The proxy's own answer to an id beyond 64 bits carries the id as sent.
    proxy.send(r#"{"jsonrpc":"2.0","id":18446744073709551617,"method":"tools/call","params":{"name":"count","arguments":{"n":"x"}}}"#);
    assert_eq!(
        proxy.recv_line(),
        r#"{"jsonrpc":"2.0","id":18446744073709551617,"result":{"content":[{"type":"text","text":"argument 'n' must be an integer (got a string)"}],"isError":true}}"#
    );
    // A call in flight when the server dies gets exactly one answer, with its own id.
    proxy.send(r#"{"jsonrpc":"2.0","id":7.0,"method":"tools/call","params":{"name":"slow","arguments":{"ms":10000}}}"#);
    proxy.send(&call(8, "crash", json!({})));
    let mut answered = vec![proxy.recv_line(), proxy.recv_line()];
    answered.sort();
    assert!(
        answered[0].starts_with(r#"{"jsonrpc":"2.0","id":7.0,"error":{"code":-32000"#),
        "{answered:?}"
    );
    assert!(
        answered[1].starts_with(r#"{"jsonrpc":"2.0","id":8,"error":{"code":-32000"#),
        "{answered:?}"
    );
    let (status, _) = proxy.wait();
    assert_eq!(status.code(), Some(3));
    let first = std::fs::read_to_string(&audit).unwrap();
    assert!(
        first.lines().next().unwrap().contains(r#""id":3.0,"#),
        "{first}"
    );
}

#[test]
fn batches_are_checked_and_answered_as_batches_in_2025_03_26_sessions() {
    let setup = setup();
    let script = json!({"tools": [tool("count", 3)]}).to_string();
    let mut proxy = Session::proxy(&[], &setup.server(&script));
    proxy.send(r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"test","version":"1"}}}"#);
    proxy.recv_reply();
    proxy.send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
    let batch = json!([
        {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "count", "arguments": {"n": 1}}},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "count", "arguments": {"n": 7}}},
        {"jsonrpc": "2.0", "id": 3, "method": "ping"}
    ]);
    proxy.send(&batch.to_string());
    let answers = read(&proxy.recv_line());
    let mut answers = answers.as_array().unwrap().clone();
    answers.sort_by_key(|a| a["id"].as_i64());
    assert_eq!(answers.len(), 3);
    assert_eq!(text_of(&answers[0]), "called count");
    assert_eq!(
        answers[1],
        tool_error(2, "argument 'n' value must be <= 3 (got 7)")
    );
    assert_eq!(answers[2]["result"], json!({}));
    assert_eq!(setup.called(), [json!(1)]);
    setup.assert_no_invalid_call_arrived();

    // In a later revision, a batch is refused with an answer for each request in it.
    let setup = self::setup();
    let mut proxy = start(&setup, &[], &script);
    proxy.send(&batch.to_string());
    let refused = read(&proxy.recv_line());
    let refused = refused.as_array().unwrap();
    assert_eq!(refused.len(), 3);
    assert!(refused.iter().all(|a| a["error"]["code"] == -32600));
    assert!(setup.called().is_empty());
}

#[test]
fn a_huge_call_with_thousands_of_unknown_arguments_is_answered_and_the_session_goes_on() {
    let setup = setup();
    let mut properties = serde_json::Map::new();
    for i in 0..200 {
        properties.insert(format!("field_{i}"), json!({"type": "string"}));
    }
    let script = json!({"tools": [{"name": "wide", "inputSchema": {"type": "object", "properties": properties, "additionalProperties": false}}]}).to_string();
    let mut proxy = start(&setup, &[], &script);
    let mut arguments = serde_json::Map::new();
    for i in 0..8000 {
        arguments.insert(
            format!("{:x<210}", format!("undeclared_argument_{i}_")),
            json!("v"),
        );
    }
    let huge = call(1, "wide", Value::Object(arguments));
    assert!(huge.len() > 1_700_000);
    proxy.send(&huge);
    proxy.send(r#"{"jsonrpc":"2.0","id":2,"method":"ping"}"#);
    // Both are answered, in either order (the ping does not wait for the proxy's own listing).
    let mut answers = [proxy.recv(), proxy.recv()];
    answers.sort_by_key(|a| a["id"].as_u64());
    assert_eq!(answers[0]["id"], 1);
    assert_eq!(text_of(&answers[0]).lines().count(), 8000);
    assert_eq!(answers[1], json!({"jsonrpc": "2.0", "id": 2, "result": {}}));
    assert!(setup.called().is_empty());
}

#[test]
fn a_server_that_exits_while_a_child_holds_its_stdout_is_noticed() {
    let setup = setup();
    let script = json!({"tools": [tool("count", 3)], "hold_stdout": true}).to_string();
    // `slow` and `crash` are built into the scripted server, which does not list them.
    let mut proxy = start(&setup, &["--unlisted", "forward"], &script);
    let holder: u32 = proxy
        .first_stderr_line()
        .strip_prefix("scripted-server: holder ")
        .unwrap()
        .parse()
        .unwrap();
    proxy.send(&call(1, "slow", json!({"ms": 30000})));
    proxy.send(&call(2, "crash", json!({})));
    let mut ids: Vec<Value> = (0..2)
        .map(|_| proxy.recv())
        .map(|a| {
            assert_eq!(a["error"]["code"], -32000, "{a}");
            a["id"].clone()
        })
        .collect();
    ids.sort_by_key(|id| id.as_i64());
    assert_eq!(ids, [json!(1), json!(2)]);
    let (status, _) = proxy.wait();
    assert_eq!(status.code(), Some(3));
    assert!(
        !common::alive(holder),
        "the child holding the server's stdout is still running"
    );
}

#[test]
fn arguments_the_model_invented_can_be_refused_with_a_did_you_mean() {
    let setup = setup();
    let script = json!({"tools": [{
        "name": "git_log",
        "inputSchema": {
            "type": "object",
            "properties": {
                "repo_path": {"type": "string"},
                "max_count": {"type": "integer"},
                "mode": {"enum": ["oneline", "full"]},
                "meta": {"type": "object", "additionalProperties": false}
            },
            "required": ["repo_path"]
        }
    }]})
    .to_string();
    // By default the schema rules: it is open, so the misspelt argument passes.
    let mut proxy = start(&setup, &[], &script);
    proxy.send(&call(
        1,
        "git_log",
        json!({"repo_path": "/src", "maxcount": 3}),
    ));
    assert_eq!(text_of(&reply(&mut proxy)), "called git_log");
    // A missing argument names the near miss; messages say what was received and suggest.
    proxy.send(&call(
        2,
        "git_log",
        json!({"repo_pth": "/src", "max_count": "3", "mode": "onelin", "meta": {"x": 1}}),
    ));
    assert_eq!(
        reply(&mut proxy),
        tool_error(
            2,
            "missing required argument 'repo_path' (did you misspell it as 'repo_pth'?)\nargument 'max_count' must be an integer (got a string)\nargument 'mode' must be one of the enum values: \"oneline\", \"full\" (did you mean \"oneline\"?)\nunexpected argument 'meta.x'"
        )
    );
    // `null` arguments are no arguments, as validate --calls takes them.
    proxy.send(&json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "git_log", "arguments": null}}).to_string());
    assert_eq!(
        reply(&mut proxy),
        tool_error(3, "missing required argument 'repo_path'")
    );
    drop(proxy);

    let setup = self::setup();
    let mut proxy = start(&setup, &["--unknown-arguments", "reject"], &script);
    proxy.send(&call(
        1,
        "git_log",
        json!({"repo_path": "/src", "maxcount": 3}),
    ));
    assert_eq!(
        reply(&mut proxy),
        tool_error(
            1,
            "unexpected argument 'maxcount' (did you mean 'max_count'?)"
        )
    );
    assert!(setup.called().is_empty());
}

#[test]
fn nested_names_a_case_insensitive_server_would_misread_never_reach_it() {
    let setup = setup();
    let safe_path = json!({"type": "string", "pattern": "^/safe"});
    let script = json!({"tools": [{
        "name": "read_files",
        "inputSchema": {
            "type": "object",
            "properties": {
                "opts": {"type": "object", "properties": {"path": safe_path}},
                "batch": {"type": "array", "items": {"$ref": "#/$defs/file"}}
            },
            "$defs": {"file": {"type": "object", "properties": {"path": safe_path}}}
        }
    }]})
    .to_string();
    let mut proxy = start(&setup, &[], &script);
    // A Go server would read each of these as the declared 'path', never checked as it.
    let refused = [
        (
            json!({"opts": {"Path": "/etc/passwd"}}),
            "opts.Path",
            "opts.path",
        ),
        (
            json!({"batch": [{"path": "/safe/a"}, {"PATH": "/etc/shadow"}]}),
            "batch[1].PATH",
            "batch[1].path",
        ),
        (json!({"opts": {"pAtH": "/etc"}}), "opts.pAtH", "opts.path"),
    ];
    for (id, (arguments, variant, meant)) in refused.into_iter().enumerate() {
        proxy.send(&call(id, "read_files", arguments));
        assert_eq!(
            reply(&mut proxy),
            tool_error(
                id,
                &format!("argument '{variant}' is not declared, and a server that reads names without regard to case would take it for '{meant}'")
            )
        );
    }
    // Exact names and names folding to nothing declared reach it.
    proxy.send(&call(
        10,
        "read_files",
        json!({"opts": {"path": "/safe/x", "mode": "r"}, "batch": [{"path": "/safe/y", "ıd": 1}]}),
    ));
    assert_eq!(text_of(&reply(&mut proxy)), "called read_files");
    proxy.close_stdin();
    proxy.wait();
    assert_eq!(setup.called(), [json!(10)]);
    setup.assert_no_invalid_call_arrived();
}

#[test]
fn input_check_warn_reports_and_forwards() {
    let setup = setup();
    let script = json!({"tools": [tool("count", 3)]}).to_string();
    let mut proxy = start(
        &setup,
        &[
            "--input-check",
            "warn",
            "--allow",
            "count",
            "--deny",
            "nothing_*",
        ],
        &script,
    );
    // Listed twice: the pattern that matches nothing is reported once.
    for id in [7, 8] {
        proxy.send(&json!({"jsonrpc": "2.0", "id": id, "method": "tools/list"}).to_string());
        assert_eq!(reply(&mut proxy)["result"]["tools"][0]["name"], "count");
    }
    proxy.send(&call(1, "count", json!({"n": 9})));
    assert_eq!(text_of(&reply(&mut proxy)), "called count");
    proxy.close_stdin();
    let (_, stderr) = proxy.wait();
    for expected in [
        "toolschema proxy: tool 'count' was called with arguments that break its inputSchema (forwarded, --input-check warn): argument 'n' value must be <= 3 (got 9)\n",
        "toolschema proxy: --deny 'nothing_*' matches none of the 1 tool the server lists\n",
    ] {
        assert_eq!(stderr.matches(expected).count(), 1, "{expected:?} once in:\n{stderr}");
    }
    assert!(!stderr.contains("--allow 'count'"), "{stderr}");
}

#[test]
fn a_byte_order_mark_before_the_client_stream_is_not_passed_on() {
    let setup = setup();
    let script = json!({"tools": [tool("count", 3)]}).to_string();
    let mut proxy = Session::proxy(&[], &setup.server(&script));
    let initialize = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"test","version":"1"}}}"#;
    proxy.send(&format!("\u{feff}{initialize}"));
    assert_eq!(proxy.recv_reply()["id"], 0);
    assert_eq!(recorded_lines(&setup.record)[0], initialize);
}

/// The next reply whose id is `id`, with every reply before it.
fn replies_until(session: &mut Session, id: Value) -> Vec<Value> {
    let mut replies = Vec::new();
    loop {
        let message = reply(session);
        let done = message["id"] == id;
        replies.push(message);
        if done {
            return replies;
        }
    }
}

#[test]
fn a_call_without_an_id_or_a_tool_name_is_never_forwarded() {
    let setup = setup();
    let script = json!({"tools": [tool("delete_rows", 10)]}).to_string();
    let mut proxy = start(&setup, &[], &script);
    let params = json!({"name": "delete_rows", "arguments": {"n": 100_000}});
    // A call sent as a notification, one with a null id, a name that is not a string (a
    // JavaScript server reads ["delete_rows"] as "delete_rows"), params that are an array.
    proxy.send(&json!({"jsonrpc": "2.0", "method": "tools/call", "params": params}).to_string());
    proxy.send(
        &json!({"jsonrpc": "2.0", "id": null, "method": "tools/call", "params": params})
            .to_string(),
    );
    proxy.send(&json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": ["delete_rows"], "arguments": {"n": 100_000}}}).to_string());
    proxy.send(
        &json!({"jsonrpc": "2.0", "id": 8, "method": "tools/call", "params": [params]}).to_string(),
    );
    proxy.send(&call(9, "delete_rows", json!({"n": 3})));
    let replies = replies_until(&mut proxy, json!(9));
    let codes: Vec<(Value, Value)> = replies
        .iter()
        .map(|r| (r["id"].clone(), r["error"]["code"].clone()))
        .collect();
    assert_eq!(
        codes,
        [
            (Value::Null, json!(-32600)),
            (json!(7), json!(-32602)),
            (json!(8), json!(-32602)),
            (json!(9), Value::Null)
        ],
        "{replies:?}"
    );
    assert_eq!(
        setup.called(),
        [json!(9)],
        "only the call with an id and a name reaches the server"
    );
    setup.assert_no_invalid_call_arrived();
}

#[test]
fn a_listing_of_the_clients_beside_the_proxys_own_leaves_no_listed_tool_unchecked() {
    let setup = setup();
    // One tool per page; the proxy's own listing asks three pages and the third is slow, so the
    // client's listing starts while it runs.
    let script = json!({
        "page_size": 1,
        "listings": ["ok", "ok", "delay:1500", "ok"],
        "tools": [tool("alpha", 1), tool("delete_rows", 10), tool("gamma", 1)],
    })
    .to_string();
    let mut proxy = start(&setup, &[], &script);
    proxy.send(&call(3, "delete_rows", json!({"n": 100_000})));
    std::thread::sleep(Duration::from_millis(400));
    proxy.send(r#"{"jsonrpc":"2.0","id":4,"method":"tools/list"}"#);
    let replies = replies_until(&mut proxy, json!(3));
    let answer = replies.last().unwrap();
    assert_eq!(
        *answer,
        tool_error(3, "argument 'n' value must be <= 10 (got 100000)"),
        "{replies:?}"
    );
    setup.assert_no_invalid_call_arrived();
}

#[test]
fn a_tool_listed_twice_with_different_schemas_is_refused_not_guessed() {
    let setup = setup();
    let loose = json!({"name": "delete_rows", "inputSchema": {"type": "object"}});
    let script = json!({"tools": [tool("delete_rows", 10), loose]}).to_string();
    let mut proxy = start(&setup, &[], &script);
    proxy.send(r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#);
    reply(&mut proxy);
    for (id, n) in [(2, 100_000), (3, 5)] {
        proxy.send(&call(id, "delete_rows", json!({"n": n})));
        let answer = reply(&mut proxy);
        assert_eq!(
            answer,
            tool_error(
                id,
                "the proxy could not learn this tool's schema: the server lists it twice, with different definitions, in one listing"
            )
        );
    }
    assert!(setup.called().is_empty(), "{:?}", setup.verdicts());
}

#[test]
fn ids_a_javascript_server_reads_alike_are_not_in_flight_together() {
    let setup = setup();
    let script = json!({"tools": [tool("delete_rows", 10)]}).to_string();
    // `slow` is built into the scripted server, which does not list it.
    let mut proxy = start(&setup, &["--unlisted", "forward"], &script);
    proxy.send(r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#);
    reply(&mut proxy);
    // The first call to it waits for the proxy's own listing; the next go on at once.
    proxy.send(&call("first", "slow", json!({"ms": 1})));
    assert_eq!(reply(&mut proxy)["id"], "first");
    // Both read as 18446744073709552000 in JavaScript: the server's answers to them would carry
    // the same id, and the call's result could be taken for the listing.
    proxy.send(r#"{"jsonrpc":"2.0","id":18446744073709552000,"method":"tools/call","params":{"name":"slow","arguments":{"ms":300}}}"#);
    proxy.send(r#"{"jsonrpc":"2.0","id":18446744073709551617,"method":"tools/list"}"#);
    let refused = proxy.recv_line();
    assert!(
        refused.starts_with(r#"{"jsonrpc":"2.0","id":18446744073709551617,"error":{"code":-32600,"message":"request id 18446744073709551617 reads as the same 64-bit number as the id of a request in flight (18446744073709552000)"#),
        "{refused}"
    );
    let slow = proxy.recv_line();
    assert!(
        slow.starts_with(r#"{"jsonrpc":"2.0","id":18446744073709552000,"result":"#),
        "{slow}"
    );
    // The listing stayed as it was: an invalid call is still refused.
    proxy.send(&call(4, "delete_rows", json!({"n": 100_000})));
    assert_eq!(
        reply(&mut proxy),
        tool_error(4, "argument 'n' value must be <= 10 (got 100000)")
    );
    setup.assert_no_invalid_call_arrived();
}

#[test]
fn a_second_answer_to_a_call_never_reaches_the_client() {
    let setup = setup();
    let script = json!({"tools": [{
        "name": "weather",
        "inputSchema": {"type": "object"},
        "outputSchema": {"type": "object", "properties": {"temp": {"type": "number"}}, "required": ["temp"]},
        "x-result": {"content": [{"type": "text", "text": "21"}], "structuredContent": {"temp": 21}},
        "x-second-result": {"content": [{"type": "text", "text": "hot"}], "structuredContent": {"temp": "hot"}},
    }]})
    .to_string();
    let mut proxy = start(&setup, &["--output-check", "enforce"], &script);
    proxy.send(r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#);
    reply(&mut proxy);
    proxy.send(&call(2, "weather", json!({})));
    assert_eq!(
        reply(&mut proxy)["result"]["structuredContent"],
        json!({"temp": 21})
    );
    // The server's second answer comes 20 ms after the first; a ping sent after it is the next
    // thing the client hears.
    std::thread::sleep(Duration::from_millis(300));
    proxy.send(r#"{"jsonrpc":"2.0","id":3,"method":"ping"}"#);
    assert_eq!(
        reply(&mut proxy),
        json!({"jsonrpc": "2.0", "id": 3, "result": {}})
    );
}

#[test]
fn keys_that_differ_only_in_lone_surrogates_are_refused_not_merged() {
    let setup = setup();
    let script = json!({"tools": [{"name": "keys", "inputSchema": {"type": "object", "maxProperties": 1, "additionalProperties": {"type": "integer"}}}]}).to_string();
    let mut proxy = start(&setup, &[], &script);
    proxy.send(r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#);
    reply(&mut proxy);
    // Read here as one key "k\uFFFD" (the last value, 1, fits); JavaScript sees two keys.
    proxy.send(r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"keys","arguments":{"k\ud800":"not an integer","k\udc00":1}}}"#);
    let answer = reply(&mut proxy);
    assert_eq!(answer["error"]["code"], -32602, "{answer}");
    let message = answer["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("which a lone surrogate (\\uD800-\\uDFFF) also reads as here"),
        "{message}"
    );
    // In the other order too: a key written as U+FFFD first, the lone surrogate after.
    proxy.send(r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"keys","arguments":{"k\ufffd":1,"k\ud800":"not an integer"}}}"#);
    assert_eq!(reply(&mut proxy)["error"]["code"], -32602);
    assert!(setup.called().is_empty(), "{:?}", setup.verdicts());
}

#[test]
fn a_lone_surrogate_the_schema_could_tell_from_u_fffd_never_reaches_the_server() {
    let setup = setup();
    // The server's own validator (Ajv, in JavaScript) keeps lone surrogates, which `\P{C}`
    // refuses; read here as U+FFFD, which it takes, the call would pass.
    let script = json!({"tools": [{"name": "say", "inputSchema": {"type": "object", "properties": {"s": {"type": "string", "pattern": "^\\P{C}*$"}}}}]}).to_string();
    let mut proxy = start(&setup, &[], &script);
    proxy.send(r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#);
    reply(&mut proxy);
    proxy.send(r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"say","arguments":{"s":"ok\ud800"}}}"#);
    let refused = reply(&mut proxy);
    assert_eq!(refused["result"]["isError"], true, "{refused}");
    assert!(
        text_of(&refused)
            .starts_with("the proxy could not check these arguments: a lone surrogate escape"),
        "{refused}"
    );
    // A whole character written as a pair is read exactly, and goes through.
    proxy.send(r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"say","arguments":{"s":"ok\ud83d\ude00"}}}"#);
    let passed = reply(&mut proxy);
    assert_ne!(passed["result"]["isError"], true, "{passed}");
    assert_eq!(setup.called(), [json!(3)]);
    setup.assert_no_invalid_call_arrived();
}

#[test]
fn requests_whose_answers_could_not_be_matched_are_answered_here() {
    let setup = setup();
    let script = json!({"tools": [tool("delete_rows", 10)]}).to_string();
    let mut proxy = start(&setup, &[], &script);
    // A JavaScript server answers an id past the float range with id null, and a request whose
    // method is not a string with an error the proxy could not tie to it.
    proxy.send(r#"{"jsonrpc":"2.0","id":1e400,"method":"tools/list"}"#);
    let refused = proxy.recv_line();
    assert!(
        refused.starts_with(r#"{"jsonrpc":"2.0","id":1e400,"error":{"code":-32600,"message":"request id 1e400 is past the range of a 64-bit float"#),
        "{refused}"
    );
    proxy.send(r#"{"jsonrpc":"2.0","id":9,"method":5}"#);
    assert_eq!(
        reply(&mut proxy),
        json!({"jsonrpc": "2.0", "id": 9, "error": {"code": -32600, "message": "a request's method must be a string"}})
    );
    proxy.send(&call(10, "delete_rows", json!({"n": 3})));
    assert_eq!(reply(&mut proxy)["id"], 10);
    let received = std::fs::read_to_string(&setup.record).unwrap_or_default();
    assert!(
        !received.contains("1e400") && !received.contains(r#""method":5"#),
        "{received}"
    );
}

#[test]
fn a_pattern_javascript_cannot_read_refuses_calls_instead_of_reading_it_as_rust_would() {
    let setup = setup();
    // Rust's regex syntax reads `(?i)` as "any case", so `ADMIN` would pass; JavaScript (with
    // the u flag, as Ajv compiles patterns) refuses the pattern.
    let login = json!({"name": "login", "inputSchema": {"type": "object", "properties": {"user": {"type": "string", "pattern": "(?i)^admin$"}}, "required": ["user"]}});
    let script = json!({"tools": [login, tool("count", 10)]}).to_string();
    let mut proxy = start(&setup, &[], &script);
    proxy.send(r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#);
    reply(&mut proxy);
    for (id, user) in [(2, "ADMIN"), (3, "admin")] {
        proxy.send(&call(id, "login", json!({"user": user})));
        let answer = reply(&mut proxy);
        assert_eq!(
            answer,
            tool_error(
                id,
                "the proxy could not learn this tool's schema: inputSchema: invalid schema at '/properties/user/pattern': the pattern '(?i)^admin$' is not an ECMA-262 regular expression as JavaScript reads it with the u flag (invalid group modifier); write it in JavaScript's syntax"
            )
        );
    }
    // The other tool is still checked and called.
    proxy.send(&call(4, "count", json!({"n": 3})));
    assert!(reply(&mut proxy).get("result").is_some());
    assert_eq!(setup.called(), [json!(4)], "{:?}", setup.verdicts());
}

#[test]
fn a_schema_with_more_reference_targets_than_are_compiled_refuses_calls() {
    let setup = setup();
    // A chain of 10,001 references: compiling such a chain takes time that grows with the square
    // of its length (80,000 took 8 s), and a server may list anything within the size limit.
    let mut defs = serde_json::Map::new();
    for i in 0..10_000 {
        defs.insert(
            format!("d{i}"),
            json!({"$ref": format!("#/$defs/d{}", i + 1)}),
        );
    }
    defs.insert("d10000".into(), json!({"type": "string"}));
    let chain = json!({"name": "chain", "inputSchema": {"type": "object", "properties": {"x": {"$ref": "#/$defs/d0"}}, "$defs": defs}});
    let mut proxy = start_listed(&setup, json!([chain, tool("count", 10)]));
    proxy.send(&call(2, "chain", json!({"x": "a"})));
    assert_eq!(
        reply(&mut proxy),
        tool_error(
            2,
            "the proxy could not learn this tool's schema: inputSchema: schema has more than 10000 distinct $ref targets, more than toolschema compiles (compiling chains of references takes time that grows with the square of their length)"
        )
    );
    // The other tool is still checked and called.
    proxy.send(&call(3, "count", json!({"n": 3})));
    assert!(reply(&mut proxy).get("result").is_some());
    assert_eq!(setup.called(), [json!(3)], "{:?}", setup.verdicts());
}

#[test]
fn deep_calls_through_long_chains_of_subschemas_are_answered_and_longer_chains_refused() {
    let setup = setup();
    // `anyOf` then `$ref`, `chain` times in a row at each level of `{"x": ...}`.
    let chained = |name: &str, chain: usize| json!({"name": name, "inputSchema": support::chained_schema(chain)});
    let mut proxy = start_listed(
        &setup,
        json!([
            chained("deep", 31),
            chained("longer", 40),
            tool("count", 10)
        ]),
    );
    // 127 levels deep, wrong at the bottom: this overflowed the proxy's stack (the process
    // aborted).
    let mut deep = json!(5);
    for _ in 0..127 {
        deep = json!({"x": deep});
    }
    proxy.send(&call(2, "deep", deep));
    let answer = reply(&mut proxy);
    assert_eq!(answer["result"]["isError"], true, "{answer}");
    assert!(
        text_of(&answer).contains(
            "the schema refuses the arguments: too deep, through subschemas applied in a row at each level, for toolschema to say where"
        ),
        "{answer}"
    );
    proxy.send(&call(3, "longer", json!({"x": "a"})));
    assert!(
        text_of(&reply(&mut proxy)).starts_with(
            "the proxy could not learn this tool's schema: inputSchema: schema applies more than 64 subschemas in a row"
        )
    );
    // The session goes on.
    proxy.send(&call(4, "count", json!({"n": 3})));
    assert!(reply(&mut proxy).get("result").is_some());
    assert_eq!(setup.called(), [json!(4)], "{:?}", setup.verdicts());
}

/// The command that starts interop/folding-server.mjs (it reads the members of `params` as Go's
/// encoding/json does, and lists one tool a page: `delete_rows`, then `echo`), recording into
/// `record`.
fn folding_server(record: &std::path::Path) -> Vec<String> {
    vec![
        common::node(),
        common::require("interop/folding-server.mjs")
            .display()
            .to_string(),
        "--record".into(),
        record.display().to_string(),
    ]
}

/// What the client sends in the folding test: a listing asking for page 2 the way a folding
/// server reads it (the proxy would read a first page), then an invalid call to the tool of
/// page 1 (`limit` over its maximum, a table outside `tmp_`).
const FOLDED_LISTING: &str =
    r#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"Cursor":"1"}}"#;
const CALL_OF_PAGE_1: &str = r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"delete_rows","arguments":{"table":"users","limit":1000}}}"#;

/// The answers a client gets in the folding test, whatever the transport.
fn assert_folded_listing_refused_and_call_checked(listing: &Value, call: &Value) {
    assert_eq!(
        listing,
        &json!({"jsonrpc": "2.0", "id": 1, "error": {"code": -32602, "message": "params holds 'Cursor', which a server that reads names without regard to case would take for 'cursor' in place of the one checked; it was not forwarded"}})
    );
    assert_eq!(call["id"], 2);
    assert_eq!(call["result"]["isError"], true, "{call}");
}

/// Nothing of the two reached the folding server: no listing with `Cursor`, no call.
fn assert_folding_server_got_neither(record: &std::path::Path) {
    let received = recorded_lines(record);
    assert!(
        received
            .iter()
            .all(|line| !line.contains("Cursor") && !line.contains("tools/call")),
        "the folding server received: {received:#?}"
    );
}

/// A server that reads `params` without regard to case, behind the proxy over stdio with default
/// settings: the client's `{"Cursor": "1"}` listing is refused, and a call with invalid
/// arguments to a tool of the page it would have hidden never reaches the server.
#[test]
fn a_listing_a_folding_server_reads_otherwise_never_lets_a_call_through_over_stdio() {
    let setup = setup();
    let mut proxy = Session::proxy(&[], &folding_server(&setup.record));
    proxy.initialize();
    proxy.send(FOLDED_LISTING);
    let listing = reply(&mut proxy);
    proxy.send(CALL_OF_PAGE_1);
    let call = reply(&mut proxy);
    assert_folding_server_got_neither(&setup.record);
    assert_folded_listing_refused_and_call_checked(&listing, &call);
    assert_eq!(
        text_of(&call),
        "argument 'table' must match the pattern ^tmp_\nargument 'limit' value must be <= 10 (got 1000)"
    );
}

/// The same over HTTP (`--listen`, the folding server started per session).
#[test]
fn a_listing_a_folding_server_reads_otherwise_never_lets_a_call_through_over_http() {
    let setup = setup();
    let mut args = vec!["--".to_string()];
    args.extend(folding_server(&setup.record));
    let proxy = common::http::Listening::start(&args);
    let session = common::http::initialize(&proxy.url, &[]);
    let listing = common::http::post(&proxy.url, &session, &[], FOLDED_LISTING).json();
    let call = common::http::post(&proxy.url, &session, &[], CALL_OF_PAGE_1).json();
    assert_folding_server_got_neither(&setup.record);
    assert_folded_listing_refused_and_call_checked(&listing, &call);
    proxy.stop();
}

/// A tool the server answers but does not list (the scripted server's built-in `crash`) is not
/// called through the proxy by default: the proxy lists the tools itself, does not find it, and
/// refuses the call; the server never gets it (and lives on). `--unlisted forward` lets it
/// through.
#[test]
fn a_tool_the_server_does_not_list_is_refused_by_default() {
    let setup = setup();
    let script = json!({"tools": [tool("count", 3)]}).to_string();
    let mut proxy = start(&setup, &[], &script);
    proxy.send(r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#);
    reply(&mut proxy);
    proxy.send(&call(2, "crash", json!({})));
    assert_eq!(
        reply(&mut proxy),
        json!({"jsonrpc": "2.0", "id": 2, "error": {"code": -32602, "message": "unknown tool 'crash'"}})
    );
    proxy.send(&call(3, "count", json!({"n": 1})));
    assert_eq!(text_of(&reply(&mut proxy)), "called count");
    let received = recorded_lines(&setup.record);
    assert!(
        received.iter().all(|line| !line.contains("crash")),
        "{received:#?}"
    );

    let setup = self::setup();
    let mut proxy = start(&setup, &["--unlisted", "forward"], &script);
    proxy.send(&call(2, "crash", json!({})));
    assert_eq!(reply(&mut proxy)["error"]["code"], -32000);
    let (status, stderr) = proxy.wait();
    assert_eq!(status.code(), Some(3));
    assert!(
        stderr.contains("calls to tool 'crash', which the server does not list, are forwarded unchecked (--unlisted forward)"),
        "{stderr}"
    );
}

/// A Python server states its bounds past 2^64 exactly (`"maximum": 18446744073709551616`,
/// which no 64-bit float holds): the proxy compares them as stated, so 2^64 + 1 never reaches
/// the server while 2^64 does, as the server itself judges.
#[test]
fn bounds_a_python_server_states_past_2_to_the_64_are_enforced_as_stated() {
    let dir = tempfile::tempdir().unwrap();
    let record = dir.path().join("received.jsonl");
    let server = vec![
        common::http::python(),
        common::require("interop/py-big-numbers-server.py")
            .display()
            .to_string(),
        record.display().to_string(),
    ];
    let mut proxy = Session::proxy(&[], &server);
    proxy.initialize();
    proxy.send(r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#);
    let listing = reply(&mut proxy);
    assert_eq!(
        listing["result"]["tools"][0]["name"], "transfer",
        "{listing}"
    );
    let call_with = |id: u32, amount: &str| {
        format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"transfer","arguments":{{"amount":{amount}}}}}}}"#
        )
    };
    proxy.send(&call_with(2, "18446744073709551617"));
    assert_eq!(
        reply(&mut proxy),
        tool_error(
            2,
            "argument 'amount' value must be <= 18446744073709551616 (got 18446744073709551617)"
        )
    );
    proxy.send(&call_with(3, "-18446744073709551617"));
    assert_eq!(
        reply(&mut proxy),
        tool_error(
            3,
            "argument 'amount' value must be >= -18446744073709551616 (got -18446744073709551617)"
        )
    );
    proxy.send(&call_with(4, "18446744073709551616"));
    assert_eq!(
        text_of(&reply(&mut proxy)),
        "transferred 18446744073709551616"
    );
    drop(proxy);
    let received = std::fs::read_to_string(&record).unwrap_or_default();
    assert_eq!(
        received,
        "{\"tool\": \"transfer\", \"amount\": 18446744073709551616}\n"
    );
}
