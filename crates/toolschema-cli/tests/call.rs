//! `toolschema call` as a user runs it: a process, real servers (server-everything over stdio
//! and Streamable HTTP, mcp-server-time, the recording server that proves what reached it),
//! exact output and exit codes.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::http::HttpServer;
use common::{recorded, recording_server, require, toolschema};
use proptest::prelude::*;
use serde_json::{json, Value};
use std::path::Path;
use std::time::Duration;

struct Run {
    code: i32,
    stdout: String,
    stderr: String,
}

/// `toolschema ARGS` (a server command after `--` among them).
fn ts(args: &[String]) -> Run {
    let (status, stdout, stderr) = common::run(toolschema(), args, Duration::from_secs(120));
    Run {
        code: status.code().unwrap_or(-1),
        stdout,
        stderr,
    }
}

/// `toolschema call FLAGS... -- SERVER...`
fn call(flags: &[&str], server: &[String]) -> Run {
    let mut args: Vec<String> = ["call"]
        .iter()
        .chain(flags)
        .map(|s| s.to_string())
        .collect();
    args.push("--".into());
    args.extend(server.iter().cloned());
    ts(&args)
}

fn everything() -> Vec<String> {
    vec![require("interop/node_modules/.bin/mcp-server-everything")
        .display()
        .to_string()]
}

fn time_server() -> Vec<String> {
    vec![require(".venv/bin/mcp-server-time").display().to_string()]
}

/// What `toolschema validate` prints for these arguments against `catalog`.
fn validate(catalog: &Path, tool: &str, args: &str, format: &str) -> Run {
    ts(&[
        "validate".into(),
        catalog.display().to_string(),
        "--tool".into(),
        tool.into(),
        "--args".into(),
        args.into(),
        "--format".into(),
        format.into(),
    ])
}

/// The snapshot of `server`, written to `dir/name`.
fn snapshot(dir: &Path, name: &str, server: &[String]) -> std::path::PathBuf {
    let path = dir.join(name);
    snapshot_to(&path, server);
    path
}

/// The snapshot of `server`, written to `path`.
fn snapshot_to(path: &Path, server: &[String]) {
    let mut args: Vec<String> = vec!["snapshot".into(), "-o".into(), path.display().to_string()];
    args.push("--".into());
    args.extend(server.iter().cloned());
    let r = ts(&args);
    assert_eq!(r.code, 0, "{}", r.stderr);
}

fn methods(record: &Path) -> Vec<String> {
    recorded(record)
        .iter()
        .filter_map(|m| m.get("method").and_then(Value::as_str).map(String::from))
        .collect()
}

#[test]
fn server_everything_lists_calls_and_refuses_as_validate_does() {
    let server = everything();
    // --list: names aligned, the first line of each description.
    let r = call(&["--list"], &server);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let lines: Vec<&str> = r.stdout.lines().collect();
    assert_eq!(lines.len(), 13, "{}", r.stdout);
    assert!(lines.contains(&"echo                            Echoes back the input string"));
    assert!(lines.contains(&"get-sum                         Returns the sum of two numbers"));
    assert!(
        r.stderr.starts_with("toolschema: 13 tools listed by '"),
        "{}",
        r.stderr
    );
    let r = call(&["--list", "--format", "json"], &server);
    let listing: Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(listing["tools"].as_array().unwrap().len(), 13);

    // A valid call: its text.
    let r = call(&["echo", "--args", r#"{"message": "hi there"}"#], &server);
    assert_eq!(
        (r.code, r.stdout.as_str(), r.stderr.as_str()),
        (0, "Echo: hi there\n", "")
    );
    // The same with --format json: the whole result, as sent.
    let r = call(
        &["echo", "--args", r#"{"message": "hi"}"#, "--format", "json"],
        &server,
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(
        serde_json::from_str::<Value>(&r.stdout).unwrap(),
        json!({"content": [{"type": "text", "text": "Echo: hi"}]})
    );

    // A structured result, checked against the tool's outputSchema: printed once, as JSON
    // (the text block restating it is not printed again).
    let r = call(
        &[
            "get-structured-content",
            "--args",
            r#"{"location": "Chicago"}"#,
        ],
        &server,
    );
    assert_eq!((r.code, r.stderr.as_str()), (0, ""), "{}", r.stdout);
    let structured: Value = serde_json::from_str(&r.stdout).unwrap();
    assert!(structured["temperature"].is_number(), "{structured}");

    // Invalid arguments: the messages and exit status of `validate` against the same server's
    // listing, and nothing sent.
    let dir = tempfile::tempdir().unwrap();
    let catalog = snapshot(dir.path(), "everything.json", &server);
    let bad = r#"{"a": 1, "b": "two"}"#;
    for format in ["text", "json"] {
        let r = call(&["get-sum", "--args", bad, "--format", format], &server);
        let expected = validate(&catalog, "get-sum", bad, format);
        assert_eq!(expected.code, 1);
        assert_eq!((r.code, r.stdout.as_str()), (1, expected.stdout.as_str()));
        assert_eq!(
            r.stderr,
            "toolschema: not sent: the arguments break the inputSchema of 'get-sum' (--no-check sends them anyway)\n"
        );
    }
    assert_eq!(
        call(&["get-sum", "--args", bad], &server).stdout,
        "argument 'b' must be a number (got a string)\n"
    );

    // Sent anyway, the server answers with an error result: exit 1, said on stderr.
    let r = call(&["get-sum", "--args", bad, "--no-check"], &server);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(
        r.stdout.contains("Invalid arguments for tool get-sum"),
        "{}",
        r.stdout
    );
    assert_eq!(
        r.stderr,
        "toolschema: 'get-sum' answered with an error result (isError)\n"
    );

    // A tool it does not list: bad input, with a did-you-mean.
    let r = call(&["get-summ", "--args", r#"{"a": 1, "b": 2}"#], &server);
    assert_eq!(r.code, 2);
    assert!(
        r.stderr.contains(
            "unknown tool 'get-summ' (did you mean 'get-sum'?) (--no-check sends the call anyway)"
        ),
        "{}",
        r.stderr
    );
}

#[test]
fn mcp_server_time_results_are_checked_against_their_output_schema() {
    let server = time_server();
    let r = call(&["--list"], &server);
    assert_eq!(
        (r.code, r.stdout.as_str()),
        (
            0,
            "get_current_time  Get current time in a specific timezone\nconvert_time      Convert time between timezones\n"
        ),
        "{}",
        r.stderr
    );
    let r = call(
        &[
            "get_current_time",
            "--args",
            r#"{"timezone": "Europe/Paris"}"#,
        ],
        &server,
    );
    assert_eq!((r.code, r.stderr.as_str()), (0, ""), "{}", r.stdout);
    let now: Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(now["timezone"], "Europe/Paris");
    assert!(now["is_dst"].is_boolean());
    // The whole result: text and structured content both.
    let r = call(
        &[
            "get_current_time",
            "--args",
            r#"{"timezone": "Etc/UTC"}"#,
            "--format",
            "json",
        ],
        &server,
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let result: Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(result["structuredContent"]["timezone"], "Etc/UTC");
    assert_eq!(result["content"][0]["type"], "text");
    // The server refuses a timezone it does not know: an error result, exit 1.
    let r = call(
        &[
            "get_current_time",
            "--args",
            r#"{"timezone": "Mars/Olympus"}"#,
        ],
        &server,
    );
    assert_eq!(r.code, 1);
    assert!(r.stdout.contains("Invalid timezone"), "{}", r.stdout);
    assert_eq!(
        r.stderr,
        "toolschema: 'get_current_time' answered with an error result (isError)\n"
    );
    // Arguments the schema refuses are not sent.
    let r = call(
        &[
            "convert_time",
            "--args",
            r#"{"source_timezone": "Etc/UTC"}"#,
        ],
        &server,
    );
    assert_eq!(r.code, 1);
    assert_eq!(
        r.stdout,
        "missing required argument 'time'\nmissing required argument 'target_timezone'\n"
    );
}

/// What reaches the server: nothing of a call whose arguments break the schema (only the
/// handshake and the listing), the call itself with --no-check.
#[test]
fn an_invalid_call_never_reaches_the_server() {
    let dir = tempfile::tempdir().unwrap();
    let record = dir.path().join("record.jsonl");
    let server = recording_server(&record, &[]);
    let r = call(
        &["search", "--args", r#"{"query": "ab", "limt": 5}"#],
        &server,
    );
    assert_eq!(
        (r.code, r.stdout.as_str()),
        (1, "argument 'query' string length must be >= 3 (got 2)\nunexpected argument 'limt' (did you mean 'limit'?)\n"),
        "{}",
        r.stderr
    );
    assert_eq!(
        methods(&record),
        ["initialize", "notifications/initialized", "tools/list"]
    );
    // Arguments that cannot be read start no server at all.
    let unread = dir.path().join("unread.jsonl");
    let r = call(
        &["search", "--args", "{query"],
        &recording_server(&unread, &[]),
    );
    assert_eq!(r.code, 2);
    assert_eq!(
        r.stderr,
        "error: --args:1:2: invalid JSON: expected an object key in double quotes\n"
    );
    assert!(!unread.exists());
    // Nor do arguments reading would change: what is sent must be what was written.
    for (args, said) in [
        (
            r#"{"query": "ab\ud800c"}"#,
            "error: --args:1:14: the string holds a lone surrogate, \\ud800, which is read as U+FFFD; the call would not send what you wrote\n",
        ),
        (
            r#"{"query": "abc", "limit": 12345678901234567890123}"#,
            "error: --args:1:27: the number 12345678901234567890123 is read as the 64-bit float 1.2345678901234568e+22; the call would not send what you wrote\n",
        ),
    ] {
        let r = call(
            &["search", "--args", args, "--no-check"],
            &recording_server(&unread, &[]),
        );
        assert_eq!((r.code, r.stderr.as_str()), (2, said));
        assert!(!unread.exists());
    }
    // --no-check sends them as given.
    std::fs::remove_file(&record).unwrap();
    let r = call(
        &["search", "--args", r#"{"query": "ab"}"#, "--no-check"],
        &server,
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let calls: Vec<Value> = recorded(&record)
        .into_iter()
        .filter(|m| m["method"] == "tools/call")
        .collect();
    assert_eq!(calls.len(), 1);
    // (With a progress token in `_meta`, so that progress notifications stretch the wait.)
    assert_eq!(
        (
            &calls[0]["params"]["name"],
            &calls[0]["params"]["arguments"]
        ),
        (&json!("search"), &json!({"query": "ab"}))
    );
    // An open schema takes a misspelt argument, unless told to reject it as validate does.
    let r = call(
        &[
            "slow",
            "--args",
            r#"{"ms": 1, "mss": 2}"#,
            "--unknown-arguments",
            "reject",
        ],
        &server,
    );
    assert_eq!(
        (r.code, r.stdout.as_str()),
        (1, "unexpected argument 'mss' (did you mean 'ms'?)\n")
    );
}

/// Results the test's own server gets wrong: one that breaks its outputSchema, one without the
/// structured content the schema promises, an error result; and a server that dies or hangs.
#[test]
fn results_that_break_the_contract_are_said_and_exit_1() {
    let dir = tempfile::tempdir().unwrap();
    let record = dir.path().join("record.jsonl");
    let server = recording_server(&record, &[]);
    let r = call(&["search", "--args", r#"{"query": "rust"}"#], &server);
    assert_eq!(
        (r.code, r.stdout.as_str(), r.stderr.as_str()),
        (0, "{\n  \"total\": 10,\n  \"query\": \"rust\"\n}\n", "")
    );
    let r = call(&["search", "--args", r#"{"query": "bad-output"}"#], &server);
    assert_eq!(
        (r.code, r.stdout.as_str(), r.stderr.as_str()),
        (
            1,
            "bad\n{\n  \"total\": \"many\"\n}\n",
            "toolschema: the result of 'search' breaks its outputSchema:\n  field 'total' must be an integer (got a string)\n"
        )
    );
    let r = call(
        &["search", "--args", r#"{"query": "no-structured"}"#],
        &server,
    );
    assert_eq!(
        (r.code, r.stdout.as_str(), r.stderr.as_str()),
        (
            1,
            "nothing structured\n",
            "toolschema: the result of 'search' breaks its outputSchema:\n  structured content is missing; the tool declares an outputSchema\n"
        )
    );
    // An error result is not held to the outputSchema.
    let r = call(&["search", "--args", r#"{"query": "tool-error"}"#], &server);
    assert_eq!(
        (r.code, r.stdout.as_str(), r.stderr.as_str()),
        (
            1,
            "search backend down\n",
            "toolschema: 'search' answered with an error result (isError)\n"
        )
    );
    let r = call(&["crash"], &server);
    assert_eq!(r.code, 2);
    assert!(
        r.stderr
            .contains("exited with exit code 3 before it answered the call of 'crash'")
            && r.stderr
                .contains("recording-server: fatal: crash requested"),
        "{}",
        r.stderr
    );
    // (--timeout also bounds the start and the listing: 5 s, not 1, leaves node time to start
    // on a loaded machine.)
    let r = call(
        &["slow", "--args", r#"{"ms": 60000}"#, "--timeout", "5"],
        &server,
    );
    assert_eq!(r.code, 2);
    assert!(
        r.stderr
            .contains("did not answer the call of 'slow' within 5s (--timeout)"),
        "{}",
        r.stderr
    );
    // Output that is not JSON-RPC, beside the answer, is said.
    let r = call(&["malformed_then_answer"], &server);
    assert_eq!(r.code, 0);
    assert_eq!(r.stdout, "answered after a malformed line\n");
    assert!(
        r.stderr
            .starts_with("warning: during the call of 'malformed_then_answer', ")
            && r.stderr.contains("this line is not JSON"),
        "{}",
        r.stderr
    );
}

/// A server whose tools answer with the result texts given (numbers as written), each under
/// an outputSchema that bounds a ratio by 0.1 and a count by 2^53.
fn exact_numbers_server(dir: &Path, results: &[(&str, &str)]) -> Vec<String> {
    let output = json!({"type": "object", "properties": {
        "ratio": {"type": "number", "maximum": 0.1},
        "count": {"type": "integer", "maximum": 9_007_199_254_740_992_u64}}});
    let tools: Vec<Value> = results
        .iter()
        .map(|(name, result)| {
            json!({"name": name, "inputSchema": {"type": "object"}, "outputSchema": output,
                "x-result-text": result})
        })
        .collect();
    common::scripted_server(
        &dir.join("record.jsonl"),
        &dir.join("verdicts.jsonl"),
        &json!({ "tools": tools }).to_string(),
    )
}

/// Structured content is judged as its text states its numbers, as the proxy judges it: a
/// ratio of 0.10000000000000000001 is over a maximum of 0.1 (read as a float it is 0.1), and
/// 2^53 + 1 is over 2^53 (read as a float it could not be checked).
#[test]
fn structured_numbers_are_judged_as_the_server_wrote_them() {
    let dir = tempfile::tempdir().unwrap();
    let server = exact_numbers_server(
        dir.path(),
        &[
            (
                "over_ratio",
                r#"{"content":[],"structuredContent":{"ratio":0.10000000000000000001}}"#,
            ),
            (
                "over_count",
                r#"{"content":[],"structuredContent":{"count":9007199254740993}}"#,
            ),
            (
                "at_bounds",
                r#"{"content":[],"structuredContent":{"ratio":0.1000,"count":9007199254740992.0}}"#,
            ),
        ],
    );
    for (tool, field) in [("over_ratio", "ratio"), ("over_count", "count")] {
        let r = call(&[tool], &server);
        assert_eq!(r.code, 1, "{}\n{}", r.stdout, r.stderr);
        let said = format!("toolschema: the result of '{tool}' breaks its outputSchema:\n");
        assert!(
            r.stderr.starts_with(&said) && r.stderr.contains(&format!("'{field}'")),
            "{}",
            r.stderr
        );
    }
    let r = call(&["at_bounds"], &server);
    assert_eq!((r.code, r.stderr.as_str()), (0, ""), "{}", r.stdout);
}

/// What reading changes (a number past 64 bits, more digits than a float holds, a lone
/// surrogate) is printed as the server sent it, in text and in JSON: never a rounded number.
#[test]
fn a_result_is_printed_as_sent_when_reading_it_would_change_it() {
    let dir = tempfile::tempdir().unwrap();
    let structured =
        r#"{"count":18446744073709551617,"ratio":0.10000000000000000001,"s":"\ud800"}"#;
    let result = format!(
        r#"{{"content":[{{"type":"text","text":"see below"}}],"structuredContent":{structured}}}"#
    );
    let server = exact_numbers_server(dir.path(), &[("big", result.as_str())]);
    let r = call(&["big"], &server);
    // Over the schema's bounds (so exit 1), and printed as sent.
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert_eq!(r.stdout, format!("see below\n{structured}\n"));
    let r = call(&["big", "--format", "json"], &server);
    assert_eq!(r.stdout, format!("{result}\n"));
    // A result that reading keeps as it is is printed as JSON, pretty.
    let small = r#"{"content":[],"structuredContent":{"count":12}}"#;
    let server = exact_numbers_server(dir.path(), &[("small", small)]);
    let r = call(&["small"], &server);
    assert_eq!(
        (r.code, r.stdout.as_str()),
        (0, "{\n  \"count\": 12\n}\n"),
        "{}",
        r.stderr
    );
}

#[test]
fn over_streamable_http() {
    let server = HttpServer::everything();
    let url = &server.url;
    let r = ts(&["call".into(), "--list".into(), "--url".into(), url.clone()]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(r.stdout.lines().count(), 13);
    let r = ts(&[
        "call".into(),
        "echo".into(),
        "--args".into(),
        r#"{"message": "over http"}"#.into(),
        "--url".into(),
        url.clone(),
        "--header".into(),
        "X-Test: 1".into(),
    ]);
    assert_eq!(
        (r.code, r.stdout.as_str(), r.stderr.as_str()),
        (0, "Echo: over http\n", "")
    );
    let r = ts(&[
        "call".into(),
        "get-structured-content".into(),
        "--args".into(),
        r#"{"location": "Los Angeles"}"#.into(),
        "--url".into(),
        url.clone(),
    ]);
    assert_eq!((r.code, r.stderr.as_str()), (0, ""));
    let structured: Value = serde_json::from_str(&r.stdout).unwrap();
    assert!(structured["humidity"].is_number());
    let r = ts(&[
        "call".into(),
        "get-sum".into(),
        "--args".into(),
        r#"{"a": 1}"#.into(),
        "--url".into(),
        url.clone(),
    ]);
    assert_eq!(
        (r.code, r.stdout.as_str()),
        (1, "missing required argument 'b'\n")
    );
}

/// Arguments for the recording server's `search` (`query` a string of 3 or more characters,
/// `limit` an integer from 1 to 100, nothing else): right, wrong, misspelt and extra members.
fn search_arguments() -> impl Strategy<Value = Value> {
    let value = prop_oneof![
        "[a-z]{0,5}".prop_map(Value::from),
        (-3i64..130).prop_map(Value::from),
        any::<bool>().prop_map(Value::from),
        Just(Value::Null),
        Just(json!(2.5)),
    ];
    let any = proptest::collection::btree_map(
        prop_oneof![Just("query"), Just("limit"), Just("limt"), Just("q")],
        value,
        0..4,
    )
    .prop_map(|members| {
        Value::Object(
            members
                .into_iter()
                .map(|(k, v)| (k.to_string(), v))
                .collect(),
        )
    });
    // Valid ones as often as the others, so that both outcomes are seen in a few dozen cases.
    let valid = ("[a-z]{3,8}", proptest::option::of(1i64..=100)).prop_map(|(query, limit)| {
        let mut arguments = json!({ "query": query });
        if let Some(limit) = limit {
            arguments["limit"] = json!(limit);
        }
        arguments
    });
    prop_oneof![valid, any]
}

proptest! {
    // Each case starts `toolschema call` and a Node server: a few dozen, not thousands.
    #![proptest_config(ProptestConfig { cases: 24, failure_persistence: None, ..ProptestConfig::default() })]

    /// `call` sends exactly the calls `validate` finds valid, as written, and refuses the others
    /// with `validate`'s words; the server never sees a refused one.
    #[test]
    fn a_call_is_sent_exactly_when_validate_says_its_arguments_are_valid(
        arguments in search_arguments(),
    ) {
        let dir = tempfile::tempdir().unwrap();
        let catalog = dir.path().join("tools.json");
        let listing = dir.path().join("listing.jsonl");
        snapshot_to(&catalog, &recording_server(&listing, &[]));
        let text = arguments.to_string();
        let verdict = validate(&catalog, "search", &text, "text");
        let record = dir.path().join("record.jsonl");
        let r = call(&["search", "--args", &text], &recording_server(&record, &[]));
        let sent: Vec<Value> = recorded(&record)
            .into_iter()
            .filter(|m| m["method"] == "tools/call")
            .map(|m| m["params"]["arguments"].clone())
            .collect();
        if verdict.code == 0 {
            prop_assert_eq!(r.code, 0, "{}", r.stderr);
            prop_assert_eq!(sent, vec![arguments]);
        } else {
            prop_assert_eq!((r.code, &r.stdout), (1, &verdict.stdout));
            prop_assert!(sent.is_empty(), "sent though invalid: {:?}", sent);
        }
    }
}
