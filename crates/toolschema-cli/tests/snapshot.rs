//! `toolschema snapshot` against real servers: the npm servers compared byte for byte with what
//! the TypeScript SDK client receives, the project's recording server for pagination and key
//! order, Streamable HTTP on loopback, and servers that fail.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{
    node, recorded, recording_server, require, run, scripted_server, toolschema, HttpServer, WAIT,
};
use serde_json::{json, Value};
use std::process::Command;
use std::time::{Duration, Instant};

fn snapshot(args: &[String]) -> (Option<i32>, String, String) {
    let mut all = vec!["snapshot".to_string()];
    all.extend(args.iter().cloned());
    let (status, stdout, stderr) = run(toolschema(), &all, WAIT);
    (status.code(), stdout, stderr)
}

fn snapshot_of(command: &[String]) -> Vec<Value> {
    let mut args = vec!["--".to_string()];
    args.extend(command.iter().cloned());
    let (code, stdout, stderr) = snapshot(&args);
    assert_eq!(code, Some(0), "{stderr}");
    let output: Value = serde_json::from_str(&stdout).unwrap();
    let object = output.as_object().unwrap();
    assert_eq!(object.keys().collect::<Vec<_>>(), ["tools"]);
    output["tools"].as_array().unwrap().clone()
}

/// The tool objects of the tools/list responses exactly as the server sent them (byte slices of
/// the raw lines), and the tools as the TypeScript client returns them.
fn typescript_client_view(command: &[String]) -> (Vec<String>, Vec<Value>) {
    let mut args = vec![
        require("interop/ts-client.mjs").display().to_string(),
        "list".to_string(),
        "--".to_string(),
    ];
    args.extend(command.iter().cloned());
    let (status, stdout, stderr) = run(&node(), &args, WAIT * 3);
    assert!(status.success(), "ts-client failed: {stderr}");
    let seen: Value = serde_json::from_str(&stdout).unwrap();
    let mut raw_tools = Vec::new();
    for page in seen["rawToolPages"].as_array().unwrap() {
        let line = page.as_str().unwrap();
        let (value, spans) = toolschema::json::parse_with_spans(line).unwrap();
        for i in 0..value["result"]["tools"].as_array().unwrap().len() {
            let (span, found) = spans.locate(&value, &format!("/result/tools/{i}")).unwrap();
            assert!(found);
            raw_tools.push(line[span.start as usize..span.end as usize].to_string());
        }
    }
    (raw_tools, seen["tools"].as_array().unwrap().clone())
}

fn assert_snapshot_matches_the_wire(server: &[String]) {
    let tools = snapshot_of(server);
    let (raw_tools, client_tools) = typescript_client_view(server);
    assert!(tools.len() >= 10, "only {} tools", tools.len());
    assert_eq!(tools.len(), raw_tools.len());
    assert_eq!(tools.len(), client_tools.len());
    for ((tool, raw), client) in tools.iter().zip(&raw_tools).zip(&client_tools) {
        // Byte for byte what the server sent: same keys, same order, same values.
        assert_eq!(&serde_json::to_string(tool).unwrap(), raw);
        // The client's schema parsing reorders keys; the content is the same.
        assert_eq!(tool, client, "the TypeScript client sees {client}");
    }
}

#[test]
fn server_everything_snapshot_is_byte_for_byte_what_the_typescript_client_receives() {
    let server = vec![require("interop/node_modules/.bin/mcp-server-everything")
        .display()
        .to_string()];
    assert_snapshot_matches_the_wire(&server);
}

#[test]
fn server_filesystem_snapshot_is_byte_for_byte_what_the_typescript_client_receives() {
    let dir = tempfile::tempdir().unwrap();
    let server = vec![
        require("interop/node_modules/.bin/mcp-server-filesystem")
            .display()
            .to_string(),
        dir.path().display().to_string(),
    ];
    assert_snapshot_matches_the_wire(&server);
}

#[test]
fn a_paginating_server_is_listed_page_by_page_with_keys_in_its_order() {
    let dir = tempfile::tempdir().unwrap();
    let record = dir.path().join("received.jsonl");
    let tools = snapshot_of(&recording_server(&record, &["--page-size", "3"]));
    let names: Vec<&str> = tools.iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(
        names,
        [
            "search",
            "echo",
            "delete_everything",
            "crash",
            "slow",
            "malformed_then_answer",
            "big",
            "change_tools",
            "progress",
            "ask_client"
        ]
    );
    assert_eq!(
        serde_json::to_string(&tools[1]).unwrap(),
        r#"{"inputSchema":{"additionalProperties":false,"required":["message"],"properties":{"message":{"type":"string"}},"type":"object"},"name":"echo"}"#
    );
    let keys: Vec<&String> = tools[0].as_object().unwrap().keys().collect();
    assert_eq!(
        keys,
        [
            "name",
            "description",
            "x-owner",
            "inputSchema",
            "outputSchema",
            "annotations"
        ]
    );
    let lists: Vec<Value> = recorded(&record)
        .into_iter()
        .filter(|m| m["method"] == "tools/list")
        .map(|m| m["params"]["cursor"].clone())
        .collect();
    assert_eq!(
        lists,
        [
            Value::Null,
            json!("page-3"),
            json!("page-6"),
            json!("page-9")
        ]
    );
}

#[test]
fn the_snapshot_is_written_to_a_file_with_a_summary_on_stderr() {
    let dir = tempfile::tempdir().unwrap();
    let record = dir.path().join("received.jsonl");
    let out = dir.path().join("tools.json");
    let server = recording_server(&record, &["--page-size", "4"]);
    let mut args = vec![
        "-o".to_string(),
        out.display().to_string(),
        "--".to_string(),
    ];
    args.extend(server.iter().cloned());
    let (code, stdout, stderr) = snapshot(&args);
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(stdout, "");
    assert_eq!(
        stderr,
        format!(
            "toolschema: wrote 10 tools (3 tools/list pages) from '{}' to {}\n",
            server.join(" "),
            out.display()
        )
    );
    let written = std::fs::read_to_string(&out).unwrap();
    assert!(written.starts_with("{\n  \"tools\": [\n    {\n      \"name\": \"search\",\n"));
    assert!(written.ends_with("}\n"));
    assert_eq!(
        serde_json::from_str::<Value>(&written).unwrap()["tools"]
            .as_array()
            .unwrap()
            .len(),
        10
    );
}

#[test]
fn a_server_that_cannot_start_is_reported_with_exit_2() {
    let (code, stdout, stderr) = snapshot(&["--".into(), "no-such-mcp-server".into()]);
    assert_eq!(code, Some(2));
    assert_eq!(stdout, "");
    assert_eq!(
        stderr,
        "error: cannot start the MCP server 'no-such-mcp-server': No such file or directory (os error 2)\n"
    );
}

#[test]
fn a_server_that_exits_early_is_reported_with_its_exit_code_and_stderr() {
    let script = "echo 'loading config' >&2; echo 'fatal: MCP_TOKEN is not set' >&2; exit 4";
    let (code, stdout, stderr) = snapshot(&["--".into(), "sh".into(), "-c".into(), script.into()]);
    assert_eq!(code, Some(2));
    assert_eq!(stdout, "");
    assert_eq!(
        stderr,
        format!(
            "error: the MCP server 'sh -c {script}' exited with exit code 4 while the snapshot waited for the initialize response; the last lines of its stderr:\n  | loading config\n  | fatal: MCP_TOKEN is not set\n"
        )
    );
}

#[test]
fn a_server_that_never_answers_is_given_up_on_after_the_timeout() {
    let script = "echo 'waiting for something' >&2; exec sleep 60";
    let (code, _, stderr) = snapshot(&[
        "--timeout".into(),
        "1".into(),
        "--".into(),
        "sh".into(),
        "-c".into(),
        script.into(),
    ]);
    assert_eq!(code, Some(2));
    assert_eq!(
        stderr,
        format!(
            "error: the MCP server 'sh -c {script}' did not send the initialize response within 1s (--timeout); the last lines of its stderr:\n  | waiting for something\n"
        )
    );
}

#[test]
fn a_server_that_never_lists_its_tools_is_given_up_on_after_the_timeout() {
    // Answers initialize, then never answers anything else. The limit leaves node seconds to
    // start on a loaded machine, so the wait that runs out is always the one for tools/list.
    let script = r#"process.stdin.on("data", (d) => { for (const l of d.toString().split("\n")) { if (!l) continue; const m = JSON.parse(l); if (m.method === "initialize") console.log(JSON.stringify({jsonrpc: "2.0", id: m.id, result: {protocolVersion: "2025-11-25", capabilities: {tools: {}}, serverInfo: {name: "mute", version: "1"}}})); } });"#;
    let (code, _, stderr) = snapshot(&[
        "--timeout".into(),
        "8".into(),
        "--".into(),
        node(),
        "-e".into(),
        script.into(),
    ]);
    assert_eq!(code, Some(2));
    assert!(
        stderr.starts_with("error: the MCP server 'node -e ")
            && stderr.ends_with("did not send the tools/list response within 8s (--timeout)\n"),
        "{stderr}"
    );
}

#[test]
fn a_server_that_answers_tools_list_with_an_error_is_reported() {
    let dir = tempfile::tempdir().unwrap();
    let server = recording_server(&dir.path().join("r.jsonl"), &["--fail-list"]);
    let mut args = vec!["--".to_string()];
    args.extend(server.iter().cloned());
    let (code, _, stderr) = snapshot(&args);
    assert_eq!(code, Some(2));
    assert_eq!(
        stderr,
        format!(
            "error: the MCP server '{}' failed while the snapshot waited for the tools/list response: it answered with error -32603: listing is broken\n",
            server.join(" ")
        )
    );
}

/// server-everything serving Streamable HTTP.
fn everything_over_http() -> HttpServer {
    let port = common::http::free_port();
    HttpServer::start(
        Command::new(require("interop/node_modules/.bin/mcp-server-everything"))
            .arg("streamableHttp")
            .env("PORT", port.to_string()),
    )
}

#[test]
fn streamable_http_gives_the_same_snapshot_as_stdio() {
    let server = everything_over_http();
    let (code, over_http, stderr) = snapshot(&[
        "--url".into(),
        format!("http://127.0.0.1:{}/mcp", server.port),
        "--header".into(),
        "X-Client: toolschema-test".into(),
    ]);
    assert_eq!(code, Some(0), "{stderr}");
    let everything = require("interop/node_modules/.bin/mcp-server-everything")
        .display()
        .to_string();
    let (code, over_stdio, stderr) = snapshot(&["--".into(), everything]);
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(over_http, over_stdio);
}

#[test]
fn an_unreachable_url_is_reported_with_exit_2() {
    let port = common::http::free_port();
    let url = format!("http://127.0.0.1:{port}/mcp");
    let (code, _, stderr) = snapshot(&["--url".into(), url.clone()]);
    assert_eq!(code, Some(2));
    assert_eq!(
        stderr,
        format!("error: the MCP server {url} failed while the snapshot waited for the initialize response: cannot connect to 127.0.0.1:{port}: Connection refused (os error 111)\n")
    );
}

#[test]
fn https_is_spoken_and_an_untrusted_certificate_is_refused() {
    let server = HttpServer::start(Command::new(node()).arg(require("interop/tls-server.mjs")));
    let authority = format!("127.0.0.1:{}", server.port);
    let url = format!("https://{authority}/mcp");
    let (code, _, stderr) = snapshot(&["--url".into(), url.clone()]);
    assert_eq!(code, Some(2));
    assert_eq!(
        stderr,
        format!("error: the MCP server {url} failed while the snapshot waited for the initialize response: TLS handshake with {authority} failed: invalid peer certificate: UnknownIssuer\n")
    );
}

#[test]
fn an_interrupted_snapshot_stops_the_server() {
    let dir = tempfile::tempdir().unwrap();
    let pidfile = dir.path().join("server.pid");
    let script = format!("echo $$ > {}; exec sleep 60", pidfile.display());
    let mut session = common::Session::start(
        toolschema(),
        &[
            "snapshot".into(),
            "--".into(),
            "sh".into(),
            "-c".into(),
            script,
        ],
    );
    let start = Instant::now();
    while !pidfile.exists() && start.elapsed() < WAIT {
        std::thread::sleep(Duration::from_millis(20));
    }
    let server: u32 = std::fs::read_to_string(&pidfile)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    let status = Command::new("kill")
        .args(["-INT", &session.pid().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let (status, stderr) = session.wait();
    assert_eq!(status.code(), Some(2));
    assert_eq!(
        stderr,
        "error: interrupted; the snapshot is incomplete and was not written\n"
    );
    assert!(!common::alive(server), "the server is still running");
}

#[test]
fn a_url_that_is_not_http_is_refused() {
    let (code, _, stderr) = snapshot(&["--url".into(), "ftp://example.com/mcp".into()]);
    assert_eq!(code, Some(2));
    assert_eq!(
        stderr,
        "error: 'ftp://example.com/mcp' is not an http:// or https:// URL with a host (like http://127.0.0.1:3001/mcp)\n"
    );
    let (code, _, stderr) = snapshot(&[
        "--url".into(),
        "http://127.0.0.1:1/mcp".into(),
        "--header".into(),
        "no colon here".into(),
    ]);
    assert_eq!(code, Some(2));
    assert_eq!(
        stderr,
        "error: --header 'no colon here': write it as 'Name: value'\n"
    );
}

#[test]
fn a_server_that_repeats_a_cursor_is_reported_as_such() {
    let dir = tempfile::tempdir().unwrap();
    let server = recording_server(
        &dir.path().join("received.jsonl"),
        &["--page-size", "4", "--repeat-cursor"],
    );
    let mut args = vec!["--".to_string()];
    args.extend(server.iter().cloned());
    let (code, stdout, stderr) = snapshot(&args);
    assert_eq!(code, Some(2));
    assert_eq!(stdout, "");
    assert_eq!(
        stderr,
        format!(
            "error: the MCP server '{}' failed while the snapshot waited for tools/list page 2: it repeated nextCursor \"page-1\", which an earlier page already returned; the listing would never end\n",
            server.join(" ")
        )
    );
}

#[test]
fn durations_are_checked_before_anything_starts() {
    for (value, message) in [
        ("1e20", "'1e20' seconds is too long: at most 86400 (a day)"),
        ("0", "'0' is not a positive number of seconds"),
        ("NaN", "'NaN' is not a positive number of seconds"),
        ("-5", "'-5' is not a positive number of seconds"),
    ] {
        let (code, stdout, stderr) = snapshot(&[
            format!("--timeout={value}"),
            "--".into(),
            "no-such-mcp-server".into(),
        ]);
        assert_eq!(code, Some(2), "{value}");
        assert_eq!(stdout, "");
        assert!(
            stderr.starts_with(&format!(
                "error: invalid value '{value}' for '--timeout <SECONDS>': {message}\n"
            )),
            "{stderr}"
        );
        assert!(!stderr.contains("panicked"), "{stderr}");
    }
}

#[test]
fn a_snapshot_on_standard_output_says_what_it_listed_on_stderr() {
    let dir = tempfile::tempdir().unwrap();
    let server = recording_server(&dir.path().join("received.jsonl"), &["--page-size", "4"]);
    let mut args = vec!["--".to_string()];
    args.extend(server.iter().cloned());
    let (code, stdout, stderr) = snapshot(&args);
    assert_eq!(code, Some(0), "{stderr}");
    assert!(stdout.starts_with("{\n  \"tools\": ["));
    assert_eq!(
        stderr,
        format!(
            "toolschema: listed 10 tools (3 tools/list pages) from '{}'\n",
            server.join(" ")
        )
    );
}

/// The scripted server listing two tools, one per page, each `tools/list` answered as `listing`
/// says (see interop/scripted-server.mjs).
fn scripted(dir: &std::path::Path, listing: &str) -> Vec<String> {
    let object = json!({"type": "object"});
    let script = json!({
        "tools": [{"name": "first", "inputSchema": object}, {"name": "second", "inputSchema": object}],
        "page_size": 1,
        "listings": [listing],
    });
    scripted_server(
        &dir.join("received.jsonl"),
        &dir.join("verdicts.jsonl"),
        &script.to_string(),
    )
}

fn command_args(command: &str, before: &[&str], server: &[String]) -> Vec<String> {
    let mut args: Vec<String> = std::iter::once(command)
        .chain(before.iter().copied())
        .map(String::from)
        .collect();
    args.push("--".into());
    args.extend(server.iter().cloned());
    args
}

#[test]
fn a_cursor_that_is_not_a_string_is_refused_not_taken_for_the_last_page() {
    let dir = tempfile::tempdir().unwrap();
    let server = scripted(dir.path(), "number_cursor");
    let lock = dir.path().join("tools.lock");
    let lock = lock.display().to_string();
    // Every command that lists a live server's tools lists them the same way.
    for args in [
        command_args("snapshot", &[], &server),
        command_args("lint", &[], &server),
        command_args("pin", &["-o", &lock], &server),
    ] {
        let (status, stdout, stderr) = run(toolschema(), &args, WAIT);
        assert_eq!(status.code(), Some(2), "{args:?}: {stderr}");
        assert_eq!(stdout, "", "{args:?}");
        assert!(
            stderr.starts_with("error: the MCP server '")
                && stderr.ends_with(
                    "' failed while the snapshot waited for the tools/list response: its result's \
                     \"nextCursor\" is a number (1), not a string: a cursor is an opaque string, \
                     and absent or null on the last page\n"
                ),
            "{args:?}: {stderr}"
        );
    }
    assert!(!dir.path().join("tools.lock").exists());
}

#[test]
fn a_server_that_dies_in_the_middle_of_its_answer_is_reported_with_its_exit_and_stderr() {
    for listing in ["cut", "cut_line"] {
        let dir = tempfile::tempdir().unwrap();
        let server = scripted(dir.path(), listing);
        let (status, stdout, stderr) =
            run(toolschema(), &command_args("snapshot", &[], &server), WAIT);
        assert_eq!(status.code(), Some(2), "{listing}: {stderr}");
        assert_eq!(stdout, "");
        assert!(
            stderr.starts_with("error: the MCP server '")
                && stderr.contains(
                    "' exited with exit code 3 while the snapshot waited for the tools/list \
                     response, after the server sent a line that is not JSON ("
                )
                && stderr.ends_with(
                    "): '{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"tools\":['; the last lines \
                     of its stderr:\n  | scripted-server: out of memory while listing\n"
                ),
            "{listing}: {stderr}"
        );
        assert!(!stderr.contains("answered with error"), "{stderr}");
    }
}

#[test]
fn an_answer_over_the_size_limit_says_the_limit_and_how_to_raise_it() {
    let dir = tempfile::tempdir().unwrap();
    let server = scripted(dir.path(), "oversize:100000");
    let args = command_args("snapshot", &["--max-message-bytes", "64KiB"], &server);
    let (status, stdout, stderr) = run(toolschema(), &args, WAIT);
    assert_eq!(status.code(), Some(2), "{stderr}");
    assert_eq!(stdout, "");
    assert!(
        stderr.starts_with("error: cannot read the tools/list response of the MCP server '")
            && stderr.contains("': the server sent a message of 100")
            && stderr.ends_with(
                " bytes, over the limit of 65536 bytes (raise it with --max-message-bytes)\n"
            ),
        "{stderr}"
    );
    assert!(!stderr.contains("answered with error"), "{stderr}");
    // Raised, the same answer is read.
    let args = command_args("snapshot", &["--max-message-bytes", "1MiB"], &server);
    let (status, _, stderr) = run(toolschema(), &args, WAIT);
    assert_eq!(status.code(), Some(0), "{stderr}");
}

/// Over Streamable HTTP, an answer that goes over `--max-message-bytes` on its event stream
/// ends its request at once with the limit named, not after the whole `--timeout`.
#[test]
fn an_answer_over_the_limit_on_an_event_stream_says_the_limit() {
    let server = everything_over_http();
    let url = format!("http://127.0.0.1:{}/mcp", server.port);
    let (code, stdout, stderr) = snapshot(&[
        "--url".into(),
        url.clone(),
        "--max-message-bytes".into(),
        "4KiB".into(),
    ]);
    assert_eq!((code, stdout.as_str()), (Some(2), ""), "{stderr}");
    assert_eq!(
        stderr,
        format!("error: cannot read the tools/list response of the MCP server {url}: the server sent more than the limit of 4096 bytes for one answer (raise it with --max-message-bytes)\n")
    );
}

/// Over Streamable HTTP, an answer sent as a plain JSON body (not an event stream) that goes over
/// `--max-message-bytes` is reported the same way: the limit and the flag that raises it.
#[test]
fn an_answer_over_the_limit_in_a_json_body_says_the_limit() {
    let dir = tempfile::tempdir().unwrap();
    let record = dir.path().join("record.jsonl").display().to_string();
    // Its initialize answer is about 200 bytes, its tools/list answer about 2,500.
    let server = common::http::HttpServer::start(
        &node(),
        &[
            require("interop/http-upstream.mjs").display().to_string(),
            "--record".into(),
            record,
            "--pad-listing".into(),
            "2000".into(),
        ],
        common::http::free_port(),
    );
    let (code, stdout, stderr) = snapshot(&[
        "--url".into(),
        server.url.clone(),
        "--max-message-bytes".into(),
        "1KiB".into(),
    ]);
    assert_eq!((code, stdout.as_str()), (Some(2), ""), "{stderr}");
    assert_eq!(
        stderr,
        format!("error: cannot read the tools/list response of the MCP server {}: the server sent more than the limit of 1024 bytes for one answer (raise it with --max-message-bytes)\n", server.url)
    );
}

/// The one-line summary counts tools, not entries: entries that are not tools and names listed
/// more than once are said, while the snapshot keeps every entry as sent.
#[test]
fn the_summary_says_which_entries_are_not_tools_and_which_names_repeat() {
    let dir = tempfile::tempdir().unwrap();
    let object = json!({"type": "object"});
    let script = json!({
        "tools": [
            {"name": "search", "inputSchema": object},
            7,
            {"description": "no name", "inputSchema": object},
            {"name": "search", "inputSchema": object},
            {"name": "fetch", "inputSchema": object},
        ],
        "page_size": 2,
    });
    let server = scripted_server(
        &dir.path().join("received.jsonl"),
        &dir.path().join("verdicts.jsonl"),
        &script.to_string(),
    );
    let mut args = vec!["--".to_string()];
    args.extend(server.iter().cloned());
    let (code, stdout, stderr) = snapshot(&args);
    assert_eq!(code, Some(0), "{stderr}");
    let listed: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(listed["tools"], script["tools"], "kept as sent");
    assert_eq!(
        stderr,
        format!(
            "toolschema: listed 5 entries (3 tools/list pages) from '{}': 3 named tools; 1 not an object; 1 without a name; listed more than once: 'search'\n",
            server.join(" ")
        )
    );
}

/// `--timeout` is for the whole listing: a timeout while waiting for a later page says so, and
/// how many pages had come.
#[test]
fn a_timeout_on_a_later_page_says_the_time_was_for_the_whole_listing() {
    let dir = tempfile::tempdir().unwrap();
    let object = json!({"type": "object"});
    let script = json!({
        "tools": [{"name": "a", "inputSchema": object}, {"name": "b", "inputSchema": object}, {"name": "c", "inputSchema": object}],
        "page_size": 1,
        "listings": ["ok", "ok", "hang"],
    });
    let server = scripted_server(
        &dir.path().join("received.jsonl"),
        &dir.path().join("verdicts.jsonl"),
        &script.to_string(),
    );
    let mut args = vec!["--timeout".to_string(), "2".into(), "--".into()];
    args.extend(server.iter().cloned());
    let (code, stdout, stderr) = snapshot(&args);
    assert_eq!(code, Some(2), "{stdout}");
    assert!(
        stderr.contains("did not send tools/list page 3 within 2s (--timeout), the time allowed for the whole listing, of which it had sent 2 pages"),
        "{stderr}"
    );
}
