//! `toolschema proxy --server ...`: three real servers behind one front (server-everything over
//! stdio, mcp-server-time over stdio, server-everything's Streamable HTTP mode), driven by the
//! official TypeScript client over Streamable HTTP and the Python client over stdio: the merged
//! listing, calls routed to each server and checked against its schema, a token that sees one
//! server's tools, and faults: one server killed mid-run fails only its own calls, naming it,
//! and is re-listed after a restart, with `list_changed` reaching the client.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::http::{self, HttpServer, Listening};
use common::{require, toolschema};
use serde_json::Value;
use std::path::Path;
use std::time::Duration;

fn everything() -> String {
    require("interop/node_modules/.bin/mcp-server-everything")
        .display()
        .to_string()
}

fn time() -> String {
    require(".venv/bin/mcp-server-time").display().to_string()
}

/// The `--server` flags for the three servers, the HTTP one at `web`.
fn servers(web: &str) -> Vec<String> {
    vec![
        "--server".into(),
        format!("everything={} stdio", everything()),
        "--server".into(),
        format!("time={}", time()),
        "--server".into(),
        format!("web={web}"),
    ]
}

/// The text of a call's outcome, and whether it is a tool error.
fn text_of(outcome: &Value) -> (String, bool) {
    let result = &outcome["result"];
    let text = result["content"]
        .as_array()
        .map(|blocks| {
            blocks
                .iter()
                .filter_map(|b| b["text"].as_str())
                .collect::<Vec<_>>()
                .join(" ")
        })
        .unwrap_or_default();
    (text, result["isError"] == Value::Bool(true))
}

fn names(listing: &Value) -> Vec<String> {
    listing["names"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n.as_str().unwrap().to_string())
        .collect()
}

fn write_tokens(dir: &Path) -> (&'static str, &'static str) {
    let ops = "ops-token-0123456789abcdef012";
    let clock = "clock-token-0123456789abcdef0";
    std::fs::write(dir.join("tokens"), format!("ops:{ops}\nclock:{clock}\n")).unwrap();
    std::fs::write(
        dir.join("toolschema.toml"),
        "[proxy.tokens.clock]\nallow = [\"time__*\"]\n",
    )
    .unwrap();
    (ops, clock)
}

#[test]
fn three_servers_behind_one_http_front_with_the_typescript_client() {
    let dir = tempfile::tempdir().unwrap();
    let (ops, clock) = write_tokens(dir.path());
    let web = HttpServer::everything();
    let mut args: Vec<String> = vec![
        "--auth-token-file".into(),
        "tokens".into(),
        "--audit".into(),
        "audit.jsonl".into(),
    ];
    args.extend(servers(&web.url));
    let proxy = Listening::start_in(Some(dir.path()), &args);

    let seen = http::ts_client(&["merged", "--url", &proxy.url, "--token", ops]);
    let listed = names(&seen["listing"]);
    // One page per server, every tool under its server's name.
    assert_eq!(seen["listing"]["pages"], 3, "{seen}");
    for expected in [
        "everything__echo",
        "everything__get-sum",
        "time__get_current_time",
        "time__convert_time",
        "web__echo",
        "web__get-sum",
    ] {
        assert!(
            listed.iter().any(|n| n == expected),
            "{expected}: {listed:?}"
        );
    }
    assert!(listed.iter().all(|n| n.starts_with("everything__")
        || n.starts_with("time__")
        || n.starts_with("web__")));
    // Calls routed to each server.
    assert_eq!(
        text_of(&seen["valid"]["everything"]),
        ("Echo: hello".into(), false)
    );
    let (time_text, time_error) = text_of(&seen["valid"]["time"]);
    assert!(
        !time_error && time_text.contains("\"timezone\": \"UTC\""),
        "{time_text}"
    );
    let (sum, sum_error) = text_of(&seen["valid"]["web"]);
    assert!(!sum_error && sum.contains('5'), "{sum}");
    // Invalid calls refused per each server's schema, by the proxy: the audit says they never
    // reached a server.
    let expectations = [
        ("everything", "everything__echo", "message"),
        ("time", "time__get_current_time", "timezone"),
        ("web", "web__get-sum", "a"),
    ];
    for (server, _, argument) in expectations {
        let (text, is_error) = text_of(&seen["invalid"][server]);
        assert!(is_error, "{server}: {}", seen["invalid"][server]);
        assert!(text.contains(&format!("'{argument}'")), "{server}: {text}");
    }
    let audit: Vec<Value> = std::fs::read_to_string(dir.path().join("audit.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    for (_, tool, _) in expectations {
        let verdicts: Vec<&str> = audit
            .iter()
            .filter(|r| r["tool"] == tool)
            .map(|r| r["verdict"].as_str().unwrap())
            .collect();
        assert_eq!(verdicts, ["forwarded", "rejected"], "{tool}: {audit:?}");
    }
    // The tools' own names are not served.
    assert!(
        seen["unknown"].to_string().contains("echo"),
        "{}",
        seen["unknown"]
    );
    assert!(
        seen["unknown"]["error"].is_object() || text_of(&seen["unknown"]).1,
        "{}",
        seen["unknown"]
    );

    // A token whose policy allows `time__*` sees only the time server's tools.
    let limited = http::ts_client(&["merged", "--url", &proxy.url, "--token", clock]);
    let listed = names(&limited["listing"]);
    assert!(!listed.is_empty());
    assert!(listed.iter().all(|n| n.starts_with("time__")), "{listed:?}");
    assert!(!text_of(&limited["valid"]["time"]).1);
    for server in ["everything", "web"] {
        let outcome = limited["valid"][server].to_string();
        assert!(
            outcome.contains("not allowed")
                || outcome.contains("denied")
                || outcome.contains("policy"),
            "{server}: {outcome}"
        );
    }
    proxy.stop();
}

#[test]
fn the_python_client_over_a_stdio_front() {
    let web = HttpServer::everything();
    let flags = servers(&web.url);
    let mut args = vec!["servers", "legacy", "--", toolschema(), "proxy"];
    args.extend(flags.iter().map(String::as_str));
    let seen = http::py_client(&args);
    let listed = names(&seen["listing"]);
    assert_eq!(seen["listing"]["pages"], 3, "{seen}");
    assert!(listed.iter().any(|n| n == "web__echo"), "{listed:?}");
    assert_eq!(
        text_of(&seen["valid"]["everything"]),
        ("Echo: hi".into(), false)
    );
    assert!(
        !text_of(&seen["valid"]["time"]).1,
        "{}",
        seen["valid"]["time"]
    );
    for (server, argument) in [("everything", "message"), ("time", "timezone")] {
        let (text, is_error) = text_of(&seen["invalid"][server]);
        assert!(
            is_error && text.contains(&format!("'{argument}'")),
            "{server}: {text}"
        );
    }
}

/// The port an HTTP server listens on, to start it again there.
fn port_of(server: &HttpServer) -> u16 {
    server
        .url
        .rsplit(':')
        .next()
        .unwrap()
        .trim_end_matches("/mcp")
        .parse()
        .unwrap()
}

/// The JSON lines the faults client wrote so far.
fn log_lines(log: &Path) -> Vec<Value> {
    std::fs::read_to_string(log)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
}

fn count(lines: &[Value], server: &str, ok: bool) -> usize {
    lines
        .iter()
        .filter(|l| l["server"] == server && l["ok"] == ok)
        .count()
}

#[test]
fn a_killed_server_fails_only_its_own_calls_and_is_relisted_after_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let mut web = HttpServer::everything();
    let port = port_of(&web);
    let mut args: Vec<String> = vec!["--no-auth".into(), "--request-timeout".into(), "10".into()];
    args.extend(servers(&web.url));
    let proxy = Listening::start(&args);
    let log = dir.path().join("log.jsonl");
    let stop = dir.path().join("stop");
    let client = {
        let (url, log, stop) = (proxy.url.clone(), log.clone(), stop.clone());
        std::thread::spawn(move || {
            http::ts_client(&[
                "faults",
                "--url",
                &url,
                "--log",
                &log.display().to_string(),
                "--stop",
                &stop.display().to_string(),
            ])
        })
    };
    let wait = Duration::from_secs(60);
    let tail = |log: &Path| {
        format!(
            "{:?}",
            log_lines(log).iter().rev().take(8).collect::<Vec<_>>()
        )
    };
    assert!(
        http::eventually(wait, || count(&log_lines(&log), "web", true) >= 5),
        "{}",
        tail(&log)
    );
    web.kill();
    // Its calls fail with a tool error naming it; the time server's keep succeeding.
    assert!(
        http::eventually(wait, || count(&log_lines(&log), "web", false) >= 3),
        "{}",
        tail(&log)
    );
    let at_kill = log_lines(&log);
    let time_before = count(&at_kill, "time", true);
    assert!(
        http::eventually(wait, || count(&log_lines(&log), "time", true)
            >= time_before + 5),
        "{}",
        tail(&log)
    );
    let web = HttpServer::start(&everything(), &["streamableHttp".to_string()], port);
    let failed = count(&log_lines(&log), "web", false);
    let succeeded = count(&log_lines(&log), "web", true);
    assert!(
        http::eventually(wait, || count(&log_lines(&log), "web", true) > succeeded),
        "{}",
        tail(&log)
    );
    std::fs::write(&stop, "").unwrap();
    let seen = client.join().unwrap();
    let lines = log_lines(&log);

    let failures: Vec<&Value> = lines
        .iter()
        .filter(|l| l["server"] == "web" && l["ok"] == false)
        .collect();
    assert!(failures.len() >= failed);
    for failure in &failures {
        let text = failure["text"].as_str().unwrap();
        assert!(text.contains("server `web` is unavailable"), "{text}");
    }
    // No call of the time server failed, before, during or after.
    assert_eq!(count(&lines, "time", false), 0, "{lines:?}");
    let time_ok = count(&lines, "time", true);
    assert!(time_ok >= time_before + 5, "{time_ok}");
    eprintln!(
        "time calls succeeded: {time_ok}; web calls failed while it was down: {}",
        failures.len()
    );
    // Re-listed after the restart, and told: list_changed reached the client.
    assert!(names(&seen["listing"]).iter().any(|n| n == "web__echo"));
    assert!(seen["changed"].as_u64().unwrap() >= 1, "{seen}");
    drop(web);
    proxy.stop();
}

#[test]
fn two_bare_servers_wanting_one_name_are_refused_naming_both() {
    let time = time();
    let args = vec![
        "proxy".to_string(),
        "--server".to_string(),
        format!("a:bare={time}"),
        "--server".to_string(),
        format!("b:bare={time}"),
    ];
    let mut proxy = common::Session::start(toolschema(), &args);
    proxy.initialize();
    proxy.send(r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#);
    let answer = proxy.recv_reply();
    let message = answer["error"]["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("tool `convert_time` of server `a` and tool `convert_time` of server `b`")
            && message.contains("stop exposing server `b` bare"),
        "{answer}"
    );
    proxy.close_stdin();
    proxy.wait();
}

/// The recording server's lines, parsed, once one satisfies `found` (or after [`common::WAIT`]).
fn recorded_until(record: &Path, found: impl Fn(&Value) -> bool) -> Vec<Value> {
    let mut lines = common::recorded(record);
    http::eventually(common::WAIT, || {
        lines = common::recorded(record);
        lines.iter().any(&found)
    });
    lines
}

#[test]
fn values_its_link_cannot_carry_are_refused_under_their_id_and_cancellations_reach_the_server() {
    let dir = tempfile::tempdir().unwrap();
    let record = dir.path().join("record.jsonl");
    let server = common::recording_server(&record, &[]).join(" ");
    let args = vec![
        "proxy".to_string(),
        "--server".to_string(),
        format!("rec={server}"),
    ];
    let mut proxy = common::Session::start(toolschema(), &args);
    proxy.initialize();
    // An id past 64 bits is answered as sent.
    proxy.send(r#"{"jsonrpc":"2.0","id":123456789012345678901234567890,"method":"tools/list"}"#);
    let mut listing = proxy.recv_line();
    while !listing.contains(r#""id""#) {
        listing = proxy.recv_line();
    }
    assert!(
        listing.contains(r#""id":123456789012345678901234567890"#) && listing.contains("rec__slow"),
        "{listing}"
    );

    // An integer past 64 bits in the arguments: refused under its id, never passed on rounded.
    proxy.send(r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"rec__delete_everything","arguments":{"n":123456789012345678901234567890}}}"#);
    let answer = proxy.recv_reply();
    assert_eq!(answer["id"], 2, "{answer}");
    let message = answer["error"]["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("123456789012345678901234567890") && message.contains("not forwarded"),
        "{answer}"
    );
    // A lone surrogate in the arguments: refused under its id.
    proxy.send(r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"rec__echo","arguments":{"message":"\ud800"}}}"#);
    let answer = proxy.recv_reply();
    assert_eq!(answer["id"], 3, "{answer}");
    let message = answer["error"]["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("lone surrogate") && message.contains("not forwarded"),
        "{answer}"
    );

    // A call the client cancels is cancelled at its server, under the id the server knows.
    proxy.send(r#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"rec__slow","arguments":{"ms":60000}}}"#);
    let is_slow = |l: &Value| l["method"] == "tools/call" && l["params"]["name"] == "slow";
    let lines = recorded_until(&record, is_slow);
    let slow = lines
        .iter()
        .find(|l| is_slow(l))
        .expect("the slow call reached the server");
    proxy.send(r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":4,"reason":"the user gave up"}}"#);
    let is_cancel = |l: &Value| l["method"] == "notifications/cancelled";
    let lines = recorded_until(&record, is_cancel);
    let cancel = lines.iter().find(|l| is_cancel(l));
    let cancel = cancel.unwrap_or_else(|| panic!("no cancellation reached the server: {lines:?}"));
    assert_eq!(cancel["params"]["requestId"], slow["id"], "{lines:?}");
    assert_eq!(cancel["params"]["reason"], "the user gave up", "{lines:?}");

    // What reached the server: neither refused call, and no value changed.
    for line in common::recorded_lines(&record) {
        assert!(
            !line.contains("delete_everything") || !line.contains("tools/call"),
            "{line}"
        );
        assert!(
            !line.contains("\\ufffd") && !line.contains('\u{fffd}'),
            "{line}"
        );
    }
    // The session goes on.
    proxy.send(r#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"rec__echo","arguments":{"message":"still here"}}}"#);
    let answer = proxy.recv_reply();
    assert_eq!(answer["id"], 5, "{answer}");
    assert_eq!(answer["result"]["content"][0]["text"], "echo: still here");
    proxy.close_stdin();
    proxy.wait();
}

/// A server that writes its listing's `tools` (TOOLS) and every call's result (RESULT) as
/// text, so that they hold what a 64-bit reader changes: integers past 64 bits, lone surrogate
/// escapes.
const TEXT_SERVER: &str = r#"
const rl = require("readline").createInterface({ input: process.stdin });
const send = (text) => process.stdout.write(text + "\n");
rl.on("line", (line) => {
  const m = JSON.parse(line);
  const id = JSON.stringify(m.id);
  if (m.method === "initialize") {
    send(`{"jsonrpc":"2.0","id":${id},"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"text","version":"1"}}}`);
  } else if (m.method === "tools/list") {
    send(`{"jsonrpc":"2.0","id":${id},"result":{"tools":TOOLS}}`);
  } else if (m.method === "tools/call") {
    send(`{"jsonrpc":"2.0","id":${id},"result":RESULT}`);
  } else if (m.id !== undefined) {
    send(`{"jsonrpc":"2.0","id":${id},"result":{}}`);
  }
});
"#;

/// A stdio front of one [`TEXT_SERVER`], `x`, listing `tools` and answering `result` (JSON
/// texts, `\\` doubled for the script's template strings), initialized.
fn front_of_text_server(dir: &Path, tools: &str, result: &str) -> common::Session {
    let script = dir.join("text.cjs");
    let text = TEXT_SERVER
        .replace("TOOLS", tools)
        .replace("RESULT", result);
    std::fs::write(&script, text).unwrap();
    let args = vec![
        "proxy".to_string(),
        "--server".to_string(),
        format!("x={} {}", common::node(), script.display()),
    ];
    let mut proxy = common::Session::start(toolschema(), &args);
    proxy.initialize();
    proxy
}

#[test]
fn a_result_is_passed_back_as_its_server_sent_it() {
    let dir = tempfile::tempdir().unwrap();
    let mut proxy = front_of_text_server(
        dir.path(),
        r#"[{"name":"exact","inputSchema":{"type":"object"}}]"#,
        r#"{"content":[{"type":"text","text":"\\ud800"}],"structuredContent":{"n":123456789012345678901234567890}}"#,
    );
    proxy.send(r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#);
    let listing = proxy.recv_reply();
    assert_eq!(
        listing["result"]["tools"][0]["name"], "x__exact",
        "{listing}"
    );
    proxy.send(r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"x__exact","arguments":{}}}"#);
    let mut answer = proxy.recv_line();
    while !answer.contains(r#""id""#) {
        answer = proxy.recv_line();
    }
    assert!(
        answer.contains(r#""text":"\ud800""#)
            && answer.contains(r#"{"n":123456789012345678901234567890}"#),
        "{answer}"
    );
    proxy.close_stdin();
    proxy.wait();
}

/// A tool whose schema holds a changed number first and a lone surrogate escape later is left
/// out naming that escape, not the number (which alone could be written back).
#[test]
fn a_tool_left_out_for_a_lone_surrogate_after_a_big_number_names_the_escape() {
    let dir = tempfile::tempdir().unwrap();
    let mut proxy = front_of_text_server(
        dir.path(),
        r#"[{"name":"late","inputSchema":{"type":"object","properties":{"n":{"maximum":18446744073709551617},"s":{"const":"\\udfff"}}}},{"name":"plain","inputSchema":{"type":"object"}}]"#,
        "{}",
    );
    proxy.send(r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#);
    let listing = proxy.recv_reply();
    let listed: Vec<&str> = listing["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(listed, ["x__plain"], "{listing}");
    proxy.close_stdin();
    let (_, stderr) = proxy.wait();
    assert!(
        stderr.contains(r"server `x`: tool 'late' is left out of the listing")
            && stderr.contains(r"the string holds a lone surrogate, \udfff,"),
        "{stderr}"
    );
}

/// A definition is passed on as its server wrote it: a bound past 2^64 (the Python server's
/// `maximum: 18446744073709551616`, which no 64-bit float holds) keeps its digits, so the
/// front judges calls against the schema the server wrote. A definition that cannot be written
/// back (a lone surrogate escape, read as U+FFFD) is left out of the listing, saying why, and
/// its calls are refused as calls to a tool not listed.
#[test]
fn definitions_are_listed_as_their_servers_wrote_them_or_left_out() {
    let dir = tempfile::tempdir().unwrap();
    let big = [
        http::python(),
        require("interop/py-big-numbers-server.py")
            .display()
            .to_string(),
        dir.path().join("big.jsonl").display().to_string(),
    ];
    let script = r#"{"tools": [
        {"name": "odd", "description": "\ud800", "inputSchema": {"type": "object"}},
        {"name": "plain", "inputSchema": {"type": "object", "properties": {"n": {"type": "integer"}}}}
    ]}"#;
    // (`--server` splits its command at spaces: the script goes in a file.)
    let script_file = dir.path().join("odd.json");
    std::fs::write(&script_file, script).unwrap();
    let odd = common::scripted_server(
        &dir.path().join("odd.jsonl"),
        &dir.path().join("odd-verdicts.jsonl"),
        &format!("@{}", script_file.display()),
    );
    let args = vec![
        "proxy".to_string(),
        "--server".to_string(),
        format!("big={}", big.join(" ")),
        "--server".to_string(),
        format!("odd={}", odd.join(" ")),
    ];
    let mut proxy = common::Session::start(toolschema(), &args);
    proxy.initialize();
    let mut listed = Vec::new();
    let mut cursor: Option<String> = None;
    loop {
        let params = match &cursor {
            Some(c) => format!(r#"{{"cursor":"{c}"}}"#),
            None => "{}".into(),
        };
        proxy.send(&format!(
            r#"{{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{params}}}"#
        ));
        // The first listing waits for both servers to start (Python's is slow on a loaded
        // machine).
        let mut line = proxy.recv_line_within(Duration::from_secs(120));
        while !line.contains(r#""id""#) {
            line = proxy.recv_line();
        }
        let page: Value = serde_json::from_str(&line).unwrap();
        listed.push(line);
        match page["result"]["nextCursor"].as_str() {
            Some(next) => cursor = Some(next.to_string()),
            None => break,
        }
    }
    let listing = listed.join("\n");
    assert!(
        listing.contains(r#""maximum":18446744073709551616"#)
            && listing.contains(r#""minimum":-18446744073709551616"#),
        "{listing}"
    );
    assert!(listing.contains(r#""name":"big__transfer""#), "{listing}");
    assert!(listing.contains(r#""name":"odd__plain""#), "{listing}");
    assert!(!listing.contains("odd__odd"), "{listing}");
    // The front checks against the definitions as written.
    proxy.send(r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"big__transfer","arguments":{"amount":"ten"}}}"#);
    let refused = proxy.recv_reply();
    assert_eq!(refused["result"]["isError"], true, "{refused}");
    proxy.send(r#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"big__transfer","arguments":{"amount":10}}}"#);
    let (text, is_error) = text_of(&proxy.recv_reply());
    assert_eq!((text.as_str(), is_error), ("transferred 10", false));
    proxy.send(r#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"odd__odd","arguments":{}}}"#);
    let unknown = proxy.recv_reply();
    assert!(
        unknown.to_string().contains("odd__odd") && unknown["result"]["isError"] == true
            || unknown["error"].is_object(),
        "{unknown}"
    );
    proxy.close_stdin();
    let (_, stderr) = proxy.wait();
    assert!(
        stderr.contains("server `odd`: tool 'odd' is left out of the listing")
            && stderr.contains("lone surrogate"),
        "{stderr}"
    );
    // The server never saw the call to the tool left out, nor the invalid one.
    let received = common::recorded_lines(&dir.path().join("odd.jsonl"));
    assert!(
        received
            .iter()
            .all(|l| !l.contains(r#""name":"odd""#) || !l.contains("tools/call")),
        "{received:?}"
    );
}

#[test]
fn the_audit_log_and_the_metrics_name_each_calls_server() {
    let dir = tempfile::tempdir().unwrap();
    let a = common::recording_server(&dir.path().join("a.jsonl"), &[]).join(" ");
    let b = common::recording_server(&dir.path().join("b.jsonl"), &[]).join(" ");
    let audit = dir.path().join("audit.jsonl");
    let args = vec![
        "proxy".to_string(),
        "--audit".to_string(),
        audit.display().to_string(),
        "--metrics".to_string(),
        "127.0.0.1:0".to_string(),
        "--server".to_string(),
        format!("a={a}"),
        "--server".to_string(),
        format!("b:bare={b}"),
    ];
    let mut proxy = common::Session::start(toolschema(), &args);
    let base = common::metrics_base(&proxy);
    proxy.initialize();
    proxy.send(r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#);
    proxy.recv_reply();
    let calls = [
        (2, "a__echo", r#"{"message":"to a"}"#),
        (3, "echo", r#"{"message":"to b"}"#),
        (4, "a__echo", r#"{"mesage":"to a"}"#),
    ];
    for (id, tool, arguments) in calls {
        proxy.send(&format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"{tool}","arguments":{arguments}}}}}"#
        ));
        let answer = proxy.recv_reply();
        assert_eq!(answer["id"], id, "{answer}");
    }
    let records: Vec<Value> = std::fs::read_to_string(&audit)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let seen: Vec<(&str, &str, &str, &str)> = records
        .iter()
        .map(|r| {
            (
                r["tool"].as_str().unwrap(),
                r["server"].as_str().unwrap_or("-"),
                r["server_tool"].as_str().unwrap_or("-"),
                r["verdict"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        seen,
        [
            ("a__echo", "a", "echo", "forwarded"),
            ("echo", "b", "echo", "forwarded"),
            ("a__echo", "a", "echo", "rejected"),
        ],
        "{records:?}"
    );
    let reply = http::request("GET", &format!("{base}/metrics"), &[], "");
    for series in [
        r#"toolschema_proxy_calls_total{server="a",tool="a__echo",verdict="forwarded"} 1"#,
        r#"toolschema_proxy_calls_total{server="b",tool="echo",verdict="forwarded"} 1"#,
        r#"toolschema_proxy_calls_total{server="a",tool="a__echo",verdict="refused_invalid"} 1"#,
        r#"toolschema_proxy_validation_failures_total{server="a",tool="a__echo",keyword="required"} 1"#,
        r#"mcp_server_operation_duration_seconds_count{server="a",mcp_method_name="tools/call",gen_ai_tool_name="a__echo",error_type=""} 1"#,
        r#"mcp_server_operation_duration_seconds_count{server="a",mcp_method_name="tools/call",gen_ai_tool_name="a__echo",error_type="tool_error"} 1"#,
        r#"mcp_server_operation_duration_seconds_count{server="b",mcp_method_name="tools/call",gen_ai_tool_name="echo",error_type=""} 1"#,
    ] {
        assert!(
            reply.body.lines().any(|l| l == series),
            "{series}\n{}",
            reply.body
        );
    }
    proxy.close_stdin();
    proxy.wait();
}

/// Every tool of the merged listing, page by page (request ids from 10).
fn merged_names(url: &str, session: &str) -> Vec<String> {
    let mut listed = Vec::new();
    let mut cursor: Option<String> = None;
    for request in 10.. {
        let params = match &cursor {
            Some(c) => format!(r#"{{"cursor":"{c}"}}"#),
            None => "{}".into(),
        };
        let body = format!(
            r#"{{"jsonrpc":"2.0","id":{request},"method":"tools/list","params":{params}}}"#
        );
        let reply = http::post(url, session, &[], &body);
        let page = reply
            .messages()
            .pop()
            .unwrap_or_else(|| panic!("{reply:?}"));
        for tool in page["result"]["tools"].as_array().unwrap() {
            listed.push(tool["name"].as_str().unwrap().to_string());
        }
        match page["result"]["nextCursor"].as_str() {
            Some(next) => cursor = Some(next.to_string()),
            None => break,
        }
    }
    listed
}

/// A call's answer in session `session`.
fn call_over_http(url: &str, session: &str, id: u64, tool: &str, arguments: &str) -> Value {
    let body = format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"{tool}","arguments":{arguments}}}}}"#
    );
    let reply = http::post(url, session, &[], &body);
    reply
        .messages()
        .pop()
        .unwrap_or_else(|| panic!("{reply:?}"))
}

/// `[proxy.servers.NAME]` tables in `toolschema.toml` (a command with its arguments, an HTTP
/// server with headers) are merged with `--server` flags behind one HTTP front: each server's
/// tools are listed and called, the headers reach the HTTP server, and calls are checked
/// against each server's schema.
#[test]
fn servers_declared_in_the_settings_file_are_merged_with_the_flags() {
    let dir = tempfile::tempdir().unwrap();
    let record = dir.path().join("up.jsonl");
    let upstream = HttpServer::scripted(&record);
    std::fs::write(
        dir.path().join("toolschema.toml"),
        format!(
            r#"[proxy.servers.time]
command = "{}"
args = ["--local-timezone", "UTC"]

[proxy.servers.up]
url = "{}"
headers = {{ Authorization = "Bearer up-secret", X-Team = "blue" }}
"#,
            time(),
            upstream.url
        ),
    )
    .unwrap();
    let args = vec![
        "--no-auth".to_string(),
        "--server".to_string(),
        format!("everything={} stdio", everything()),
    ];
    let proxy = Listening::start_in(Some(dir.path()), &args);
    let session = http::initialize(&proxy.url, &[]);
    let listed = merged_names(&proxy.url, &session);
    for expected in ["everything__echo", "time__get_current_time", "up__echo"] {
        assert!(
            listed.iter().any(|n| n == expected),
            "{expected}: {listed:?}"
        );
    }
    let answer = call_over_http(
        &proxy.url,
        &session,
        2,
        "everything__echo",
        r#"{"message":"hi"}"#,
    );
    assert_eq!(text_of(&answer), ("Echo: hi".into(), false), "{answer}");
    let answer = call_over_http(
        &proxy.url,
        &session,
        3,
        "time__get_current_time",
        r#"{"timezone":"Europe/Paris"}"#,
    );
    let (text, is_error) = text_of(&answer);
    assert!(!is_error && text.contains("Europe/Paris"), "{answer}");
    let answer = call_over_http(
        &proxy.url,
        &session,
        4,
        "up__echo",
        r#"{"message":"to up"}"#,
    );
    assert!(!text_of(&answer).1, "{answer}");
    // Refused by the front per the HTTP server's schema: it never reaches it.
    let answer = call_over_http(&proxy.url, &session, 5, "up__echo", r#"{"mesage":"x"}"#);
    let (text, is_error) = text_of(&answer);
    assert!(is_error && text.contains("'message'"), "{answer}");
    let calls: Vec<Value> = common::recorded(&record)
        .into_iter()
        .filter(|e| e["message"]["method"] == "tools/call")
        .collect();
    assert_eq!(calls.len(), 1, "{calls:?}");
    assert_eq!(calls[0]["message"]["params"]["name"], "echo", "{calls:?}");
    assert_eq!(calls[0]["headers"]["authorization"], "Bearer up-secret");
    assert_eq!(calls[0]["headers"]["x-team"], "blue");
    proxy.stop();
}

/// A settings file the proxy cannot use is refused at start (exit 2), naming the file and the
/// key; nothing is ignored.
#[test]
fn bad_server_tables_are_refused_naming_the_file_and_the_key() {
    let dir = tempfile::tempdir().unwrap();
    let cases: &[(&str, &[&str], &[&str])] = &[
        (
            "[proxy.servers.time]\ncommand = \"x\"\ntimeout = 3\n",
            &[],
            &["unknown field `timeout`", "line 3"],
        ),
        (
            "[proxy.servers.time]\ncommand = \"x\"\nurl = \"http://127.0.0.1:1/mcp\"\n",
            &[],
            &["[proxy.servers.time]", "`command` or `url`, not both"],
        ),
        (
            "[proxy.servers.time]\nargs = [\"a\"]\n",
            &[],
            &["[proxy.servers.time]", "give `command`"],
        ),
        (
            "[proxy.servers.web]\nurl = \"ftp://example.com/mcp\"\n",
            &[],
            &["[proxy.servers.web]", "not an http:// or https:// URL"],
        ),
        (
            "[proxy.servers.time]\ncommand = \"x\"\nheaders = { A = \"b\" }\n",
            &[],
            &["[proxy.servers.time]", "`headers` go with a `url`"],
        ),
        (
            "[proxy.servers.time]\ncommand = \"x\"\ninput-check = \"maybe\"\n",
            &[],
            &["unknown variant `maybe`", "`off`, `warn`, `enforce`", "line 3"],
        ),
        (
            "[proxy.servers.my_time]\ncommand = \"x\"\n",
            &[],
            &["[proxy.servers.my_time]", "server name `my_time` is not allowed"],
        ),
        (
            "[proxy.servers.time]\ncommand = \"x\"\n",
            &["--server", "time=y"],
            &["server `time` is declared twice: by --server time=y and by [proxy.servers.time] in"],
        ),
        (
            "[proxy.servers.time]\ncommand = \"x\"\n",
            &["--", "cat"],
            &["[proxy.servers] declares servers behind one front", "use one or the other"],
        ),
    ];
    for (text, extra, expected) in cases {
        let file = dir.path().join("settings.toml");
        std::fs::write(&file, text).unwrap();
        let mut args = vec!["proxy", "--config", "settings.toml"];
        args.extend_from_slice(extra);
        let run = common::toolschema_in(dir.path(), &args, None);
        assert_eq!(run.code, 2, "{text}: {}", run.stderr);
        assert!(
            run.stderr.contains("settings.toml"),
            "{text}: {}",
            run.stderr
        );
        for part in *expected {
            assert!(run.stderr.contains(part), "{text}: {part}: {}", run.stderr);
        }
    }
    // Two flags naming one server.
    let run = common::toolschema_in(
        dir.path(),
        &["proxy", "--server", "a=x", "--server", "a=y"],
        None,
    );
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(
        run.stderr
            .contains("server `a` is declared twice: by --server a=x and by --server a=y"),
        "{}",
        run.stderr
    );
}

/// `/readyz` of an HTTP front with several servers: 200 when all are up; 503 naming the one
/// that is down while it is, with the others' tools still listed and their calls answered;
/// 200 again once it is back.
#[test]
fn readyz_names_the_server_that_is_down_while_the_others_serve() {
    let mut web = HttpServer::everything();
    let port = port_of(&web);
    let args = vec![
        "--no-auth".to_string(),
        "--request-timeout".to_string(),
        "10".to_string(),
        "--server".to_string(),
        format!("time={}", time()),
        "--server".to_string(),
        format!("web={}", web.url),
    ];
    let proxy = Listening::start(&args);
    let readyz = format!("{}/readyz", proxy.url.trim_end_matches("/mcp"));
    let ready = || http::request("GET", &readyz, &[], "");
    let wait = Duration::from_secs(60);
    assert!(
        http::eventually(wait, || ready().status == 200),
        "{:?}",
        ready()
    );
    assert!(ready().body.contains("2 servers are up"), "{:?}", ready());
    let session = http::initialize(&proxy.url, &[]);
    let time_call = |id: u64| {
        call_over_http(
            &proxy.url,
            &session,
            id,
            "time__get_current_time",
            r#"{"timezone":"UTC"}"#,
        )
    };
    assert!(!text_of(&time_call(2)).1);

    web.kill();
    let down = ready();
    assert_eq!(down.status, 503, "{down:?}");
    assert!(
        down.body.contains("server `web` is down") && !down.body.contains("server `time`"),
        "{down:?}"
    );
    assert!(down.body.contains("1 of 2 servers are up"), "{down:?}");
    // The others' tools are still listed, and their calls answered.
    let listed = merged_names(&proxy.url, &session);
    assert!(
        listed.iter().any(|n| n == "time__get_current_time"),
        "{listed:?}"
    );
    for id in 3..8 {
        let answer = time_call(id);
        assert!(!text_of(&answer).1, "{answer}");
    }
    let answer = call_over_http(&proxy.url, &session, 8, "web__echo", r#"{"message":"x"}"#);
    let (text, is_error) = text_of(&answer);
    assert!(
        is_error && text.contains("server `web` is unavailable"),
        "{answer}"
    );
    assert_eq!(ready().status, 503);

    let web = HttpServer::start(&everything(), &["streamableHttp".to_string()], port);
    assert!(
        http::eventually(wait, || ready().status == 200),
        "{:?}",
        ready()
    );
    drop(web);
    proxy.stop();
}

/// A server command that cannot start keeps `/readyz` at 503 naming it, while the others' calls
/// are answered.
#[test]
fn readyz_names_a_server_command_that_cannot_start() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("no-such-server");
    let args = vec![
        "--no-auth".to_string(),
        "--server".to_string(),
        format!("time={}", time()),
        "--server".to_string(),
        format!("gone={}", missing.display()),
    ];
    let proxy = Listening::start(&args);
    let readyz = format!("{}/readyz", proxy.url.trim_end_matches("/mcp"));
    let down = http::request("GET", &readyz, &[], "");
    assert_eq!(down.status, 503, "{down:?}");
    assert!(
        down.body.contains("server `gone` is down") && down.body.contains("1 of 2 servers are up"),
        "{down:?}"
    );
    let session = http::initialize(&proxy.url, &[]);
    let answer = call_over_http(
        &proxy.url,
        &session,
        2,
        "time__get_current_time",
        r#"{"timezone":"UTC"}"#,
    );
    assert!(!text_of(&answer).1, "{answer}");
    proxy.stop();
}

/// `input-check` and `output-check` in a server's table apply to its tools only: the front's
/// gate judges each call with the setting of the server its tool comes from.
#[test]
fn each_server_table_sets_the_checks_of_its_own_tools() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a.jsonl"), dir.path().join("b.jsonl"));
    let table = |name: &str, record: &Path, extra: &str| {
        let words = common::recording_server(record, &[]);
        let args: Vec<String> = words[1..].iter().map(|w| format!("{w:?}")).collect();
        format!(
            "[proxy.servers.{name}]\ncommand = {:?}\nargs = [{}]\n{extra}\n",
            words[0],
            args.join(", ")
        )
    };
    let settings = dir.path().join("settings.toml");
    std::fs::write(
        &settings,
        table("a", &a, "input-check = \"off\"\noutput-check = \"enforce\"") + &table("b", &b, ""),
    )
    .unwrap();
    let audit = dir.path().join("audit.jsonl");
    let args = vec![
        "proxy".to_string(),
        "--config".to_string(),
        settings.display().to_string(),
        "--audit".to_string(),
        audit.display().to_string(),
    ];
    let mut proxy = common::Session::start(toolschema(), &args);
    proxy.initialize();
    let mut call = |id: u64, tool: &str, arguments: &str| {
        proxy.send(&format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"{tool}","arguments":{arguments}}}}}"#
        ));
        let answer = proxy.recv_reply();
        assert_eq!(answer["id"], id, "{answer}");
        answer
    };
    // Server a's input check is off: its invalid call is forwarded. Server b's is the front's.
    call(2, "a__echo", r#"{"mesage":"x"}"#);
    let refused = call(3, "b__echo", r#"{"mesage":"x"}"#);
    let (text, is_error) = text_of(&refused);
    assert!(is_error && text.contains("'message'"), "{refused}");
    // Server a's output check enforces: a result breaking the output schema is withheld.
    // Server b's is the front's (warn): passed on.
    let withheld = call(4, "a__search", r#"{"query":"bad-output"}"#);
    assert_eq!(withheld["result"]["isError"], true, "{withheld}");
    assert!(
        withheld["result"].get("structuredContent").is_none(),
        "{withheld}"
    );
    let passed = call(5, "b__search", r#"{"query":"bad-output"}"#);
    assert_eq!(
        passed["result"]["structuredContent"]["total"], "many",
        "{passed}"
    );
    proxy.close_stdin();
    proxy.wait();
    let calls = |record: &Path| -> Vec<String> {
        common::recorded(record)
            .into_iter()
            .filter(|l| l["method"] == "tools/call")
            .map(|l| l["params"]["name"].as_str().unwrap_or_default().to_string())
            .collect()
    };
    assert_eq!(calls(&a), ["echo", "search"]);
    assert_eq!(calls(&b), ["search"]);
    let records: Vec<(String, String, String)> = std::fs::read_to_string(&audit)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .map(|r| {
            (
                r["tool"].as_str().unwrap().to_string(),
                r["input_check"].as_str().unwrap_or("-").to_string(),
                r["output_check"].as_str().unwrap_or("-").to_string(),
            )
        })
        .collect();
    let seen: Vec<(&str, &str, &str)> = records
        .iter()
        .map(|(t, i, o)| (t.as_str(), i.as_str(), o.as_str()))
        .collect();
    assert_eq!(
        seen,
        [
            ("a__echo", "off", "no_schema"),
            ("b__echo", "failed", "-"),
            ("a__search", "off", "enforced"),
            ("b__search", "passed", "failed"),
        ]
    );
}
