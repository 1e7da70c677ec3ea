//! `toolschema serve` as a process, with real catalog files, driven as the gateways drive it:
//! - the interceptor protocol (SEP-2624), from cases written from the working group's
//!   conformance fixtures (tests/fixtures/serve/interceptors-conformance.json names each
//!   fixture and the commit of modelcontextprotocol/experimental-ext-interceptors it was read
//!   at), replayed as its conformance/ADAPTER.md says, with a gateway-side chain written here;
//! - ToolHive's validating webhook (stacklok/toolhive RFC-0017, pkg/webhook at
//!   e25de16cf9720b13cf0b400c861a2f6840e2763c), by a client written from it that signs its
//!   requests;
//! - the catalogs reloaded on SIGHUP, and a broken file keeping the old catalog.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::http::request;
use common::{require, toolschema, Session, WAIT};
use serde_json::{json, Value};
use std::path::Path;
use std::process::Command;
use std::thread;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// `toolschema serve --listen 127.0.0.1:0 ARGS`, and its base URL.
struct Served {
    process: Option<Session>,
    base: String,
}

impl Served {
    fn start(args: &[String]) -> Served {
        let mut all: Vec<String> = ["serve", "--listen", "127.0.0.1:0"]
            .map(String::from)
            .to_vec();
        all.extend(args.iter().cloned());
        let process = Session::start(toolschema(), &all);
        let start = Instant::now();
        loop {
            let stderr = process.stderr();
            if let Some(rest) = stderr.split("interceptors at ").nth(1) {
                if let Some((url, _)) = rest.split_once('\n') {
                    let base = url.trim().trim_end_matches("/mcp").to_string();
                    return Served {
                        process: Some(process),
                        base,
                    };
                }
            }
            assert!(
                start.elapsed() < WAIT,
                "serve did not start; stderr:\n{stderr}"
            );
            thread::sleep(Duration::from_millis(20));
        }
    }

    fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    fn stderr(&self) -> String {
        self.process
            .as_ref()
            .map(Session::stderr)
            .unwrap_or_default()
    }

    fn pid(&self) -> u32 {
        self.process.as_ref().expect("running").pid()
    }

    /// Stop it with SIGTERM; its stderr.
    fn stop(&mut self) -> String {
        let Some(mut process) = self.process.take() else {
            return String::new();
        };
        signal(process.pid(), "-TERM");
        let (status, stderr) = process.wait();
        assert!(status.success(), "serve exited with {status}: {stderr}");
        stderr
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        if let Some(process) = &self.process {
            signal(process.pid(), "-KILL");
        }
    }
}

fn signal(pid: u32, which: &str) {
    let _ = Command::new("kill")
        .arg(which)
        .arg(pid.to_string())
        .status();
}

fn catalog() -> String {
    require("crates/toolschema-cli/tests/fixtures/serve/echo.json")
        .display()
        .to_string()
}

/// One JSON-RPC request to the interceptor server: `Ok(result)` or `Err(error code)`; `None`
/// when the service cannot be reached.
fn rpc(base: &str, method: &str, params: Value) -> Option<Result<Value, i64>> {
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}).to_string();
    let url = format!("{base}/mcp");
    // A service that is down: the connection is refused.
    let authority = url
        .trim_start_matches("http://")
        .split('/')
        .next()?
        .to_string();
    std::net::TcpStream::connect(&authority).ok()?;
    let reply = request("POST", &url, &[], &body);
    let answer = reply.json();
    Some(match answer.get("error") {
        Some(error) => Err(error["code"].as_i64().unwrap()),
        None => Ok(answer["result"].clone()),
    })
}

/// Drop the volatile keys, at any depth.
fn scrub(value: &mut Value, volatile: &[&str]) {
    match value {
        Value::Object(map) => {
            for key in volatile {
                map.remove(*key);
            }
            map.values_mut().for_each(|v| scrub(v, volatile));
        }
        Value::Array(items) => items.iter_mut().for_each(|v| scrub(v, volatile)),
        _ => {}
    }
}

/// RFC 8785 for the values these cases hold (strings, booleans, small integers): sorted keys,
/// no whitespace.
fn canonical(value: &Value) -> String {
    match value {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            let members: Vec<String> = keys
                .iter()
                .map(|k| format!("{}:{}", Value::String((*k).clone()), canonical(&map[*k])))
                .collect();
            format!("{{{}}}", members.join(","))
        }
        Value::Array(items) => {
            format!(
                "[{}]",
                items.iter().map(canonical).collect::<Vec<_>>().join(",")
            )
        }
        other => other.to_string(),
    }
}

/// A gateway's chain over the service's interceptors, as SEP-2624 runs validators: each
/// interceptor that hooks the event and phase is invoked; an invalid result with severity
/// error blocks in enforce mode and never in audit mode; an interceptor that cannot be reached
/// blocks unless `fail_open`. The service's interceptors are listed first (and when it is down,
/// the gateway knows the one it was configured with).
fn chain(base: &str, event: &str, phase: &str, payload: &Value, fail_open: bool) -> &'static str {
    let listed = match rpc(base, "interceptors/list", json!({"event": event})) {
        Some(Ok(listed)) => listed["interceptors"].as_array().unwrap().clone(),
        _ => vec![json!({"name": "toolschema/schema", "type": "validation",
            "hooks": [{"events": [event], "phase": phase}]})],
    };
    for interceptor in listed {
        let hooked = interceptor["hooks"].as_array().unwrap().iter().any(|hook| {
            hook["phase"] == phase
                && hook["events"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .any(|e| e == event || e == "*")
        });
        if !hooked {
            continue;
        }
        let audit = interceptor.get("mode").and_then(Value::as_str) == Some("audit");
        let params = json!({"name": interceptor["name"], "event": event, "phase": phase,
            "payload": payload});
        match rpc(base, "interceptor/invoke", params) {
            Some(Ok(result)) => {
                let blocks = result["valid"] == false && result["severity"] == "error";
                if blocks && !audit {
                    return "deny";
                }
            }
            // Unreachable, or an RPC error: the interceptor failed.
            _ if fail_open || audit => continue,
            _ => return "deny",
        }
    }
    "allow"
}

#[test]
fn the_interceptor_conformance_cases_pass_over_http() {
    let text = std::fs::read_to_string(require(
        "crates/toolschema-cli/tests/fixtures/serve/interceptors-conformance.json",
    ))
    .unwrap();
    let cases: Value = serde_json::from_str(&text).unwrap();
    let volatile: Vec<&str> = cases["volatile"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    let mut passed = 0;
    for case in cases["cases"].as_array().unwrap() {
        let name = format!("{} @ {}", case["fixture"], case["commit"]);
        let mut args = vec!["--catalog".to_string(), catalog()];
        args.extend(
            case["serve"]
                .as_array()
                .unwrap()
                .iter()
                .map(|a| a.as_str().unwrap().to_string()),
        );
        let mut served = Served::start(&args);
        let base = served.base.clone();
        for step in case["steps"].as_array().unwrap() {
            let expect = &step["expect"];
            match step["op"].as_str().unwrap() {
                "stop" => {
                    served.stop();
                }
                "list" => {
                    let params = match &step["event"] {
                        Value::Null => json!({}),
                        event => json!({ "event": event }),
                    };
                    let mut result = rpc(&base, "interceptors/list", params)
                        .unwrap()
                        .unwrap_or_else(|code| panic!("{name}: list failed with {code}"));
                    scrub(&mut result, &volatile);
                    let listed = result["interceptors"].as_array().unwrap();
                    if let Some(canon) = expect.get("canonical") {
                        assert_eq!(canonical(&result), canon.as_str().unwrap(), "{name}");
                    }
                    if let Some(count) = expect.get("count") {
                        assert_eq!(listed.len() as u64, count.as_u64().unwrap(), "{name}");
                    }
                    if let Some(mode) = expect.get("mode") {
                        assert_eq!(&listed[0]["mode"], mode, "{name}");
                    }
                }
                "invoke" => {
                    let answer = rpc(&base, "interceptor/invoke", step["params"].clone()).unwrap();
                    if let Some(code) = expect.get("errorCode") {
                        assert_eq!(answer, Err(code.as_i64().unwrap()), "{name}");
                        continue;
                    }
                    let mut result = answer.unwrap_or_else(|code| panic!("{name}: error {code}"));
                    assert!(result["durationMs"].is_number(), "{name}: {result}");
                    scrub(&mut result, &volatile);
                    if let Some(canon) = expect.get("canonical") {
                        assert_eq!(canonical(&result), canon.as_str().unwrap(), "{name}");
                    }
                    if let Some(valid) = expect.get("valid") {
                        assert_eq!(&result["valid"], valid, "{name}: {result}");
                        assert_eq!(&result["severity"], &expect["severity"], "{name}");
                        let wanted = expect["message_contains"].as_str().unwrap();
                        let messages = result["messages"].as_array().unwrap();
                        assert!(
                            messages.iter().all(|m| m["severity"] == "error")
                                && messages
                                    .iter()
                                    .any(|m| m["message"].as_str().unwrap().contains(wanted)),
                            "{name}: {result}"
                        );
                    }
                }
                "chain" => {
                    let fail_open = step["failOpen"].as_bool().unwrap_or(false);
                    let payload = &step["payload"];
                    let decision = chain(
                        &base,
                        step["event"].as_str().unwrap(),
                        step["phase"].as_str().unwrap(),
                        payload,
                        fail_open,
                    );
                    assert_eq!(decision, expect["decision"].as_str().unwrap(), "{name}");
                    if let Some(canon) = expect.get("finalPayloadCanonical") {
                        // Validators never change the payload.
                        assert_eq!(canonical(payload), canon.as_str().unwrap(), "{name}");
                    }
                }
                other => panic!("{name}: unknown op {other}"),
            }
        }
        served.stop();
        passed += 1;
    }
    assert_eq!(passed, cases["cases"].as_array().unwrap().len());
}

#[test]
fn the_interceptor_server_answers_over_stdio() {
    let mut session = Session::start(
        toolschema(),
        &["serve".into(), "--catalog".into(), catalog()],
    );
    session.send(r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#);
    let initialized = session.recv();
    assert_eq!(
        initialized["result"]["capabilities"]["interceptors"],
        json!({})
    );
    session.send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
    session.send(r#"{"jsonrpc":"2.0","id":2,"method":"interceptor/invoke","params":{"name":"toolschema/schema","event":"tools/call","phase":"request","payload":{"name":"echo","arguments":{"note":7}}}}"#);
    let refused = session.recv();
    assert_eq!(refused["id"], 2);
    assert_eq!(refused["result"]["valid"], false);
    assert_eq!(
        refused["result"]["messages"][0]["message"],
        "argument 'note' must be a string (got an integer)"
    );
    session.send(r#"{"jsonrpc":"2.0","id":3,"method":"interceptor/invoke","params":{"name":"toolschema/schema","event":"tools/call","phase":"request","payload":{"name":"ecko","arguments":{}}}}"#);
    let unknown = session.recv();
    assert_eq!(unknown["result"]["valid"], false);
    assert_eq!(
        unknown["result"]["messages"][0]["message"],
        "unknown tool 'ecko' (did you mean 'echo'?)"
    );
    session.send("not json");
    assert_eq!(session.recv()["error"]["code"], -32700);
    session.close_stdin();
    let (status, _) = session.wait();
    assert!(status.success());
}

#[test]
fn a_tool_the_service_does_not_know_passes_only_when_it_fails_open_and_says_so() {
    let params = json!({"name": "toolschema/schema", "event": "tools/call", "phase": "request",
        "payload": {"name": "unheard_of", "arguments": {}}});
    let mut closed = Served::start(&["--catalog".into(), catalog()]);
    let refused = rpc(&closed.base, "interceptor/invoke", params.clone())
        .unwrap()
        .unwrap();
    assert_eq!(refused["valid"], false, "{refused}");
    assert_eq!(
        refused["messages"][0]["message"],
        "unknown tool 'unheard_of'"
    );
    closed.stop();

    let audit = tempfile::tempdir().unwrap();
    let log = audit.path().join("audit.jsonl");
    // The catalog named `docs`; the request names a server the service has no catalog for,
    // which the only catalog answers: records name `docs`, never the request's name.
    let mut open = Served::start(&[
        "--catalog".into(),
        format!("docs={}", catalog()),
        "--unlisted".into(),
        "forward".into(),
        "--audit".into(),
        log.display().to_string(),
    ]);
    let mut params = params;
    params["context"] = json!({"server": "named-by-the-request"});
    for _ in 0..2 {
        let passed = rpc(&open.base, "interceptor/invoke", params.clone())
            .unwrap()
            .unwrap();
        assert_eq!(passed["valid"], true, "{passed}");
        assert_eq!(passed["severity"], "warn", "{passed}");
        assert_eq!(passed["info"]["failedOpen"], true, "{passed}");
    }
    let stderr = open.stop();
    // Reported on every decision, not once.
    assert_eq!(
        stderr.matches("let through unchecked").count(),
        2,
        "{stderr}"
    );
    let lines = std::fs::read_to_string(&log).unwrap();
    let records: Vec<Value> = lines
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(records.len(), 2, "{lines}");
    assert!(
        records.iter().all(|r| r["input_check"] == "unlisted"
            && r["server"] == "docs"
            && r["server_tool"] == "unheard_of"
            && r["client"] == "anonymous"),
        "{lines}"
    );
}

/// A bound past 2^64 in a catalog file is judged and told as the file states it
/// (`minimum: 18446744073709551617`, whose nearest 64-bit float is 2^64), not as the float.
#[test]
fn numbers_in_a_catalog_are_judged_as_the_file_states_them() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("big.json");
    std::fs::write(
        &file,
        r#"{"tools": [{"name": "transfer", "inputSchema": {"type": "object",
            "properties": {"amount": {"type": "integer", "minimum": 18446744073709551617}}}}]}"#,
    )
    .unwrap();
    let mut served = Served::start(&["--catalog".into(), file.display().to_string()]);
    let params = json!({"name": "toolschema/schema", "event": "tools/call", "phase": "request",
        "payload": {"name": "transfer", "arguments": {"amount": 5}}});
    let refused = rpc(&served.base, "interceptor/invoke", params)
        .unwrap()
        .unwrap();
    assert_eq!(refused["valid"], false, "{refused}");
    assert_eq!(
        refused["messages"][0]["message"],
        "argument 'amount' value must be >= 18446744073709551617 (got 5)",
        "{refused}"
    );
    served.stop();
}

/// ToolHive's signature of `body` at `timestamp`: `sha256=` and the hex of
/// HMAC-SHA256(secret, "{timestamp}.{body}") (pkg/webhook/signing.go).
fn toolhive_signature(secret: &[u8], timestamp: i64, body: &str) -> String {
    let key = ring::hmac::Key::new(ring::hmac::HMAC_SHA256, secret);
    let tag = ring::hmac::sign(&key, format!("{timestamp}.{body}").as_bytes());
    let hex: String = tag.as_ref().iter().map(|b| format!("{b:02x}")).collect();
    format!("sha256={hex}")
}

/// A ToolHive webhook request (pkg/webhook/types.go `Request`), `mcp_request` the client's
/// JSON-RPC request as sent.
fn toolhive_request(uid: &str, mcp: Value) -> String {
    json!({
        "version": "v0.1.0",
        "uid": uid,
        "timestamp": "2026-11-29T06:00:00Z",
        "principal": {"sub": "alice"},
        "mcp_request": mcp,
        "context": {"server_name": "echo-server", "source_ip": "127.0.0.1", "transport": "streamable-http"},
    })
    .to_string()
}

fn now() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64
}

#[test]
fn the_toolhive_webhook_checks_signatures_and_answers_per_the_rfc() {
    let dir = tempfile::tempdir().unwrap();
    let secret_file = dir.path().join("secret");
    std::fs::write(&secret_file, "webhook-s3cret\n").unwrap();
    let served = Served::start(&[
        "--catalog".into(),
        catalog(),
        "--toolhive-secret-file".into(),
        secret_file.display().to_string(),
        "--deny".into(),
        "forbidden*".into(),
    ]);
    let url = served.url("/toolhive");
    let send = |body: &str, signature: Option<String>, timestamp: Option<i64>| {
        let stamp = timestamp.map(|t| t.to_string());
        let mut headers = Vec::new();
        if let Some(signature) = &signature {
            headers.push(("X-ToolHive-Signature", signature.as_str()));
        }
        if let Some(stamp) = &stamp {
            headers.push(("X-ToolHive-Timestamp", stamp.as_str()));
        }
        request("POST", &url, &headers, body)
    };
    let signed = |body: &str| {
        let t = now();
        send(
            body,
            Some(toolhive_signature(b"webhook-s3cret", t, body)),
            Some(t),
        )
    };
    let call = |name: &str, arguments: Value| {
        json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call",
            "params": {"name": name, "arguments": arguments}})
    };

    // Allowed: {version, uid, allowed: true}, nothing else.
    let body = toolhive_request("u-1", call("echo", json!({"note": "HI"})));
    let reply = signed(&body);
    assert_eq!(reply.status, 200, "{reply:?}");
    assert_eq!(
        reply.json(),
        json!({"version": "v0.1.0", "uid": "u-1", "allowed": true})
    );

    // Invalid arguments: denied with code, message (toolschema's) and reason.
    let body = toolhive_request("u-2", call("echo", json!({"note": 3})));
    let denied = signed(&body).json();
    assert_eq!(denied["allowed"], false);
    assert_eq!(denied["uid"], "u-2");
    assert_eq!(denied["code"], 400);
    assert_eq!(denied["reason"], "InvalidArguments");
    assert_eq!(
        denied["message"],
        "argument 'note' must be a string (got an integer)"
    );

    // A tool the catalog lacks, and one the policy denies.
    let unknown = signed(&toolhive_request("u-3", call("ecko", json!({})))).json();
    assert_eq!(unknown["allowed"], false);
    assert_eq!(unknown["reason"], "UnknownTool");
    assert_eq!(
        unknown["message"],
        "unknown tool 'ecko' (did you mean 'echo'?)"
    );
    let forbidden = signed(&toolhive_request("u-4", call("forbidden_tool", json!({})))).json();
    assert_eq!(forbidden["allowed"], false);
    assert_eq!(forbidden["code"], 403);
    assert_eq!(forbidden["reason"], "ToolDenied");

    // Requests other than tools/call are the gateway's to judge.
    let listing = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"});
    let other = signed(&toolhive_request("u-5", listing)).json();
    assert_eq!(
        other,
        json!({"version": "v0.1.0", "uid": "u-5", "allowed": true})
    );

    // Wrong, missing, stale or mismatched signatures: 401 and no decision.
    let body = toolhive_request("u-6", call("echo", json!({"note": "HI"})));
    let t = now();
    let wrong = toolhive_signature(b"another secret", t, &body);
    let stale = now() - 3600;
    for (signature, timestamp) in [
        (Some(wrong), Some(t)),
        (None, Some(t)),
        (Some(toolhive_signature(b"webhook-s3cret", t, &body)), None),
        (
            Some(toolhive_signature(b"webhook-s3cret", stale, &body)),
            Some(stale),
        ),
        (
            Some(toolhive_signature(b"webhook-s3cret", t, "{}")),
            Some(t),
        ),
    ] {
        let reply = send(&body, signature, timestamp);
        assert_eq!(reply.status, 401, "{reply:?}");
        assert!(reply.json().get("allowed").is_none());
    }

    // A body that is not a webhook request.
    let reply = signed("{\"uid\":\"u-7\"}");
    assert_eq!(reply.status, 400, "{reply:?}");
}

/// A catalog of tools named `names` that take any object.
fn tools(names: &[&str]) -> String {
    let tools: Vec<Value> = names
        .iter()
        .map(|n| json!({"name": n, "inputSchema": {"type": "object"}}))
        .collect();
    json!({ "tools": tools }).to_string()
}

/// Rewrite `path` so that its modification time surely moves.
fn write_catalog(path: &Path, text: &str) {
    std::fs::write(path, text).unwrap();
}

#[test]
fn a_catalog_changed_and_sighup_is_used_next_and_a_broken_one_keeps_the_old() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("tools.json");
    let schema = |kind: &str| {
        json!({"tools": [{"name": "count", "inputSchema": {"type": "object",
            "properties": {"n": {"type": kind}}, "required": ["n"]}}]})
        .to_string()
    };
    write_catalog(&file, &schema("integer"));
    // Changes are looked for once a day: only SIGHUP reloads in this test.
    let served = Served::start(&[
        "--catalog".into(),
        file.display().to_string(),
        "--watch-interval".into(),
        "86400".into(),
    ]);
    let invoke = |arguments: Value| {
        let params = json!({"name": "toolschema/schema", "event": "tools/call",
            "phase": "request", "payload": {"name": "count", "arguments": arguments}});
        rpc(&served.base, "interceptor/invoke", params)
            .unwrap()
            .unwrap()
    };
    assert_eq!(invoke(json!({"n": 1}))["valid"], true);
    assert_eq!(invoke(json!({"n": "one"}))["valid"], false);

    write_catalog(&file, &schema("string"));
    signal(served.pid(), "-HUP");
    assert!(
        common::http::eventually(WAIT, || served.stderr().contains("catalogs reloaded")),
        "{}",
        served.stderr()
    );
    assert_eq!(invoke(json!({"n": "one"}))["valid"], true);
    let refused = invoke(json!({"n": 1}));
    assert_eq!(refused["valid"], false);
    assert_eq!(
        refused["messages"][0]["message"],
        "argument 'n' must be a string (got an integer)"
    );

    write_catalog(&file, "{\"tools\": [ {\"name\": ");
    signal(served.pid(), "-HUP");
    assert!(
        common::http::eventually(WAIT, || served
            .stderr()
            .contains("cannot reload the catalog")),
        "{}",
        served.stderr()
    );
    let stderr = served.stderr();
    let line = stderr
        .lines()
        .find(|l| l.contains("cannot reload the catalog"))
        .unwrap();
    assert!(line.contains(&file.display().to_string()), "{line}");
    assert!(
        line.contains("the catalog read before stays in force"),
        "{line}"
    );
    // The old catalog still decides.
    assert_eq!(invoke(json!({"n": "one"}))["valid"], true);
    assert_eq!(invoke(json!({"n": 1}))["valid"], false);
}

#[test]
fn a_catalog_file_that_changes_is_read_again_without_a_signal() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("tools.json");
    write_catalog(&file, &tools(&["first"]));
    let served = Served::start(&[
        "--catalog".into(),
        file.display().to_string(),
        "--watch-interval".into(),
        "0.1".into(),
    ]);
    let valid = |name: &str| {
        let params = json!({"name": "toolschema/schema", "event": "tools/call",
            "phase": "request", "payload": {"name": name, "arguments": {}}});
        rpc(&served.base, "interceptor/invoke", params)
            .unwrap()
            .unwrap()["valid"]
            == true
    };
    assert!(valid("first"));
    assert!(!valid("second"));
    // A later modification time than the first write's, even on a coarse clock.
    thread::sleep(Duration::from_millis(1100));
    write_catalog(&file, &tools(&["first", "second"]));
    assert!(
        common::http::eventually(WAIT, || valid("second")),
        "{}",
        served.stderr()
    );
}

#[test]
fn a_catalog_that_cannot_be_read_at_start_stops_the_service() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("broken.json");
    std::fs::write(&file, "[{").unwrap();
    let out = Command::new(toolschema())
        .args(["serve", "--catalog"])
        .arg(&file)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains(&file.display().to_string()), "{stderr}");
}

#[test]
fn the_contextforge_plugin_blocks_an_invalid_call_with_toolschemas_message() {
    let dir = tempfile::tempdir().unwrap();
    let hooks = dir.path().join("hooks.json");
    let valid = json!({"content": [], "structuredContent": {"note": "OK"}});
    let invalid = json!({"content": [], "structuredContent": {"note": "lower"}});
    std::fs::write(
        &hooks,
        json!([
            ["tool_pre_invoke", {"name": "echo", "args": {"note": "HI"}}],
            ["tool_pre_invoke", {"name": "echo", "args": {"note": 5}}],
            ["tool_pre_invoke", {"name": "ecko", "args": {}}],
            ["tool_post_invoke", {"name": "echo", "result": valid}],
            ["tool_post_invoke", {"name": "echo", "result": invalid}],
            ["prompt_pre_fetch", {"prompt_id": "p", "args": {}}],
        ])
        .to_string(),
    )
    .unwrap();
    let out = common::http::client(
        &common::http::python(),
        &[
            require("interop/contextforge-plugin-client.py")
                .display()
                .to_string(),
            hooks.display().to_string(),
            "--".into(),
            toolschema().into(),
            "serve".into(),
            "--catalog".into(),
            catalog(),
            "--output-check".into(),
            "enforce".into(),
        ],
    );
    assert_eq!(out["tools"], json!(["get_plugin_config", "invoke_hook"]));
    assert_eq!(out["config"]["name"], "ToolschemaSchemas");
    assert_eq!(
        out["config"]["hooks"],
        json!(["tool_pre_invoke", "tool_post_invoke"])
    );
    let answers = out["answers"].as_array().unwrap();
    let result = |i: usize| &answers[i]["result"];
    assert_eq!(result(0)["continue_processing"], true, "{out}");
    assert_eq!(result(1)["continue_processing"], false, "{out}");
    assert_eq!(
        result(1)["violation"]["code"],
        "TOOLSCHEMA_INVALID_ARGUMENTS"
    );
    assert_eq!(
        result(1)["violation"]["description"],
        "argument 'note' must be a string (got an integer)"
    );
    assert_eq!(result(2)["continue_processing"], false);
    assert_eq!(
        result(2)["violation"]["description"],
        "unknown tool 'ecko' (did you mean 'echo'?)"
    );
    assert_eq!(result(3)["continue_processing"], true, "{out}");
    assert_eq!(result(4)["continue_processing"], false, "{out}");
    assert_eq!(result(4)["violation"]["code"], "TOOLSCHEMA_INVALID_RESULT");
    assert!(
        result(4)["violation"]["description"]
            .as_str()
            .unwrap()
            .contains("field 'note'"),
        "{out}"
    );
    // Another hook is not the plugin's to judge.
    assert_eq!(result(5)["continue_processing"], true);
}

#[test]
fn a_catalog_pinned_in_a_lock_refuses_the_calls_of_a_tool_that_drifted() {
    let dir = tempfile::tempdir().unwrap();
    let pinned = dir.path().join("pinned.json");
    let current = dir.path().join("current.json");
    let tool = |max: u64| {
        json!({"tools": [{"name": "count", "inputSchema": {"type": "object",
            "properties": {"n": {"type": "integer", "maximum": max}}}},
            {"name": "steady", "inputSchema": {"type": "object"}}]})
        .to_string()
    };
    std::fs::write(&pinned, tool(10)).unwrap();
    std::fs::write(&current, tool(1000)).unwrap();
    let lock = dir.path().join("toolschema.lock");
    let (status, _, stderr) = common::run(
        toolschema(),
        &[
            "pin".into(),
            pinned.display().to_string(),
            "--key".into(),
            "counter".into(),
            "-o".into(),
            lock.display().to_string(),
        ],
        WAIT,
    );
    assert!(status.success(), "{stderr}");
    let served = Served::start(&[
        "--catalog".into(),
        format!("counter={}", current.display()),
        "--pin".into(),
        lock.display().to_string(),
    ]);
    let invoke = |name: &str| {
        let params = json!({"name": "toolschema/schema", "event": "tools/call",
            "phase": "request", "payload": {"name": name, "arguments": {"n": 1}},
            "context": {"server": "counter"}});
        rpc(&served.base, "interceptor/invoke", params)
            .unwrap()
            .unwrap()
    };
    let drifted = invoke("count");
    assert_eq!(drifted["valid"], false, "{drifted}");
    let message = drifted["messages"][0]["message"].as_str().unwrap();
    assert!(
        message.starts_with("tool 'count' was refused:"),
        "{message}"
    );
    assert_eq!(invoke("steady")["valid"], true);
}

#[test]
fn the_http_endpoint_has_the_guard_bounds_and_the_proxys_metrics() {
    let tokens = require("examples/tokens").display().to_string();
    let served = Served::start(&[
        "--catalog".into(),
        catalog(),
        "--auth-token-file".into(),
        tokens,
        "--max-body-bytes".into(),
        "1KiB".into(),
        "--metrics".into(),
        "127.0.0.1:0".into(),
    ]);
    let invoke = |note: Value| {
        json!({"jsonrpc": "2.0", "id": 1, "method": "interceptor/invoke",
            "params": {"name": "toolschema/schema", "event": "tools/call", "phase": "request",
                "payload": {"name": "echo", "arguments": {"note": note}}}})
        .to_string()
    };
    let url = served.url("/mcp");
    let bearer = [("Authorization", "Bearer docs-example-token-1")];
    // No token, a wrong one: 401, no decision.
    assert_eq!(request("POST", &url, &[], &invoke(json!("HI"))).status, 401);
    let wrong = [("Authorization", "Bearer nope")];
    assert_eq!(
        request("POST", &url, &wrong, &invoke(json!("HI"))).status,
        401
    );
    // A body past --max-body-bytes: 413.
    let big = invoke(json!("X".repeat(2048)));
    assert_eq!(request("POST", &url, &bearer, &big).status, 413);
    // With the token: decided.
    let reply = request("POST", &url, &bearer, &invoke(json!(1)));
    assert_eq!(reply.status, 200, "{reply:?}");
    assert_eq!(reply.json()["result"]["valid"], false);
    let reply = request("POST", &url, &bearer, &invoke(json!("HI")));
    assert_eq!(reply.json()["result"]["valid"], true);
    // The decisions are counted as the proxy counts its calls.
    let stderr = served.stderr();
    let metrics = stderr
        .split("metrics at ")
        .nth(1)
        .and_then(|rest| rest.split_once('\n'))
        .map(|(url, _)| url.trim().to_string())
        .unwrap_or_else(|| panic!("no metrics listener: {stderr}"));
    let exposition = request("GET", &metrics, &[], "").body;
    for line in [
        "toolschema_proxy_calls_total{tool=\"echo\",verdict=\"forwarded\"} 1",
        "toolschema_proxy_calls_total{tool=\"echo\",verdict=\"refused_invalid\"} 1",
        "toolschema_proxy_validation_failures_total{tool=\"echo\",keyword=\"type\"} 1",
    ] {
        assert!(
            exposition.lines().any(|l| l == line),
            "{line}:\n{exposition}"
        );
    }
}

#[test]
fn over_stdio_a_sighup_reloads_the_catalog_too() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("tools.json");
    write_catalog(&file, &tools(&["first"]));
    let mut session = Session::start(
        toolschema(),
        &[
            "serve".into(),
            "--catalog".into(),
            file.display().to_string(),
            "--watch-interval".into(),
            "86400".into(),
        ],
    );
    let ask = |session: &mut Session, id: u64, name: &str| {
        session.send(
            &json!({"jsonrpc": "2.0", "id": id, "method": "interceptor/invoke",
                "params": {"name": "toolschema/schema", "event": "tools/call", "phase": "request",
                    "payload": {"name": name, "arguments": {}}}})
            .to_string(),
        );
        session.recv()["result"]["valid"] == true
    };
    assert!(ask(&mut session, 1, "first"));
    assert!(!ask(&mut session, 2, "second"));
    write_catalog(&file, &tools(&["first", "second"]));
    signal(session.pid(), "-HUP");
    assert!(
        common::http::eventually(WAIT, || session.stderr().contains("catalogs reloaded")),
        "{}",
        session.stderr()
    );
    assert!(ask(&mut session, 3, "second"));
    session.close_stdin();
    let (status, stderr) = session.wait();
    assert!(status.success(), "{stderr}");
}

#[test]
fn the_tools_can_be_learned_from_the_server_itself() {
    // The PyPI time server, listed at start (and again on SIGHUP).
    let served = Served::start(&[
        "--".into(),
        common::http::python(),
        "-m".into(),
        "mcp_server_time".into(),
    ]);
    let invoke = |arguments: Value| {
        let params = json!({"name": "toolschema/schema", "event": "tools/call",
            "phase": "request", "payload": {"name": "get_current_time", "arguments": arguments}});
        rpc(&served.base, "interceptor/invoke", params)
            .unwrap()
            .unwrap()
    };
    let refused = invoke(json!({}));
    assert_eq!(refused["valid"], false, "{refused}");
    assert_eq!(
        refused["messages"][0]["message"],
        "missing required argument 'timezone'"
    );
    assert_eq!(invoke(json!({"timezone": "Europe/Paris"}))["valid"], true);
    signal(served.pid(), "-HUP");
    assert!(
        common::http::eventually(WAIT, || served.stderr().contains("catalogs reloaded")),
        "{}",
        served.stderr()
    );
    assert_eq!(invoke(json!({"timezone": 7}))["valid"], false);
}

#[test]
fn an_upstream_that_requires_a_token_is_listed_with_the_header() {
    // A real upstream that refuses requests without a bearer token: the proxy in front of the
    // PyPI time server, behind --auth-token-file.
    let tokens = require("examples/tokens").display().to_string();
    let upstream = common::http::Listening::start(&[
        "--auth-token-file".into(),
        tokens,
        "--".into(),
        common::http::python(),
        "-m".into(),
        "mcp_server_time".into(),
    ]);
    // Without the header the listing is refused, and the service does not start.
    let output = Command::new(toolschema())
        .args(["serve", "--upstream", &upstream.url])
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains(&upstream.url), "{stderr}");
    assert!(stderr.contains("401"), "{stderr}");
    // With it, the tools are learned and used.
    let served = Served::start(&[
        "--upstream".into(),
        format!("time={}", upstream.url),
        "--header".into(),
        "Authorization: Bearer docs-example-token-1".into(),
    ]);
    let params = json!({"name": "toolschema/schema", "event": "tools/call",
        "phase": "request", "context": {"server": "time"},
        "payload": {"name": "get_current_time", "arguments": {}}});
    let refused = rpc(&served.base, "interceptor/invoke", params)
        .unwrap()
        .unwrap();
    assert_eq!(refused["valid"], false, "{refused}");
    assert_eq!(
        refused["messages"][0]["message"],
        "missing required argument 'timezone'"
    );
    // A header that is not `Name: value` is refused before anything starts.
    let output = Command::new(toolschema())
        .args(["serve", "--upstream", &upstream.url, "--header", "no colon"])
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&output.stderr),
        "error: --header 'no colon': write it as 'Name: value'\n"
    );
}

/// `serve -- node interop/scripted-server.mjs` whose server changes its tools (and sends
/// `notifications/tools/list_changed`) once `dir/change` exists; `listings` as the script
/// takes them.
fn serve_a_changing_server(dir: &Path, listings: Value) -> Served {
    let echo = |schema: Value| json!({"name": "echo", "inputSchema": schema});
    let script = json!({
        "tools": [echo(json!({"type": "object",
            "properties": {"message": {"type": "string"}}, "required": ["message"]}))],
        "next_tools": [
            echo(json!({"type": "object",
                "properties": {"message": {"type": "string", "maxLength": 3}},
                "required": ["message"]})),
            {"name": "added", "inputSchema": {"type": "object",
                "properties": {"n": {"type": "integer"}}, "required": ["n"]}}
        ],
        "change_on_file": dir.join("change").display().to_string(),
        "listings": listings,
    });
    Served::start(&[
        "--".into(),
        common::node(),
        require("interop/scripted-server.mjs").display().to_string(),
        "--script".into(),
        script.to_string(),
    ])
}

/// The interceptor's verdict on a call of `tool` with `arguments`: valid, and the messages.
fn verdict(served: &Served, tool: &str, arguments: Value) -> (bool, Vec<String>) {
    let params = json!({"name": "toolschema/schema", "event": "tools/call",
        "phase": "request", "payload": {"name": tool, "arguments": arguments}});
    let result = rpc(&served.base, "interceptor/invoke", params)
        .unwrap()
        .unwrap();
    let messages = result["messages"]
        .as_array()
        .map(|all| {
            all.iter()
                .map(|m| m["message"].as_str().unwrap().to_string())
                .collect()
        })
        .unwrap_or_default();
    (result["valid"] == true, messages)
}

#[test]
fn a_server_that_says_its_tools_changed_is_listed_again_and_its_new_schemas_used() {
    let dir = tempfile::tempdir().unwrap();
    let served = serve_a_changing_server(dir.path(), json!(["ok"]));
    assert!(verdict(&served, "echo", json!({"message": "hello"})).0);
    assert_eq!(
        verdict(&served, "added", json!({"n": 1})),
        (false, vec!["unknown tool 'added'".to_string()])
    );
    std::fs::write(dir.path().join("change"), "").unwrap();
    assert!(
        common::http::eventually(WAIT, || verdict(&served, "added", json!({"n": 1})).0),
        "the new tool was never learned; stderr:\n{}",
        served.stderr()
    );
    // No SIGHUP was sent: the server's notification made the service list it again.
    let stderr = served.stderr();
    assert!(stderr.contains("says its tools changed"), "{stderr}");
    assert_eq!(
        verdict(&served, "added", json!({"n": "1"})),
        (
            false,
            vec!["argument 'n' must be an integer (got a string)".to_string()]
        )
    );
    let (valid, messages) = verdict(&served, "echo", json!({"message": "hello"}));
    assert!(!valid);
    assert_eq!(messages.len(), 1, "{messages:?}");
    assert!(
        messages[0].starts_with("argument 'message'"),
        "{messages:?}"
    );
}

#[test]
fn a_listing_that_fails_after_list_changed_keeps_the_old_catalog_and_says_why() {
    let dir = tempfile::tempdir().unwrap();
    // The first listing (at start) holds; every later one fails.
    let served = serve_a_changing_server(dir.path(), json!(["ok", "error"]));
    std::fs::write(dir.path().join("change"), "").unwrap();
    assert!(
        common::http::eventually(WAIT, || served
            .stderr()
            .contains("the catalog read before stays in force")),
        "{}",
        served.stderr()
    );
    let stderr = served.stderr();
    assert!(stderr.contains("listing is broken"), "{stderr}");
    // The catalog listed at start is still the one in force.
    assert!(verdict(&served, "echo", json!({"message": "hello"})).0);
    assert_eq!(
        verdict(&served, "added", json!({"n": 1})),
        (false, vec!["unknown tool 'added'".to_string()])
    );
}

#[test]
fn the_toolhive_principal_selects_its_policy_from_the_settings_file() {
    let dir = tempfile::tempdir().unwrap();
    let secret_file = dir.path().join("secret");
    std::fs::write(&secret_file, "webhook-s3cret").unwrap();
    let settings = dir.path().join("settings.toml");
    std::fs::write(
        &settings,
        r#"
[proxy.tokens.alice]
deny = ["echo"]

[proxy.tool-scopes]
"echo" = "echo:call"

[proxy.servers.time]
command = "mcp-server-time"
"#,
    )
    .unwrap();
    let served = Served::start(&[
        "--catalog".into(),
        catalog(),
        "--toolhive-secret-file".into(),
        secret_file.display().to_string(),
        "--config".into(),
        settings.display().to_string(),
    ]);
    // The servers a shared settings file declares for the proxy are not started, and it says so.
    assert!(
        served
            .stderr()
            .contains("the [proxy.servers] tables are left unused"),
        "{}",
        served.stderr()
    );
    let url = served.url("/toolhive");
    let ask = |principal: Value, tool: &str| {
        let body = json!({
            "version": "v0.1.0", "uid": "u", "timestamp": "2026-11-29T06:00:00Z",
            "principal": principal,
            "mcp_request": {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                "params": {"name": tool, "arguments": {"note": "HI"}}},
            "context": {"server_name": "echo-server"},
        })
        .to_string();
        let t = now();
        let signature = toolhive_signature(b"webhook-s3cret", t, &body);
        let stamp = t.to_string();
        let headers = [
            ("X-ToolHive-Signature", signature.as_str()),
            ("X-ToolHive-Timestamp", stamp.as_str()),
        ];
        let reply = request("POST", &url, &headers, &body);
        assert_eq!(reply.status, 200, "{reply:?}");
        reply.json()
    };
    // alice's policy denies echo; bob holds the scope echo needs, carol does not; a request
    // without a principal is anonymous, as the proxy's clients are without authentication.
    let refused = ask(json!({"sub": "alice"}), "echo");
    assert_eq!(refused["allowed"], false, "{refused}");
    assert_eq!(refused["reason"], "ToolDenied");
    assert_eq!(refused["code"], 403);
    assert_eq!(
        refused["message"],
        "tool 'echo' is not available to 'alice' (denied by 'echo' in its policy)"
    );
    let bob = json!({"sub": "bob", "claims": {"scope": "other echo:call"}});
    assert_eq!(ask(bob, "echo")["allowed"], true);
    let refused = ask(json!({"sub": "carol", "claims": {}}), "echo");
    assert_eq!(refused["reason"], "ToolDenied", "{refused}");
    assert_eq!(
        refused["message"],
        "tool 'echo' is not available to 'carol': it needs the scope echo:call"
    );
    assert_eq!(ask(Value::Null, "echo")["allowed"], true);
}
