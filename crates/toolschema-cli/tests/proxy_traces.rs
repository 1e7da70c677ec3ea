//! Traces and JSON logs of `toolschema proxy`: a real proxy process between the TypeScript SDK
//! client (interop/traced-client.mjs) and the recording server, exporting over OTLP/HTTP to a
//! receiver that decodes with the official OpenTelemetry protobuf definitions
//! (interop/otlp-receiver.py, PyPI opentelemetry-proto).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::http::{client, python, Listening};
use common::{node, recorded, recording_server, require, toolschema, HttpServer, WAIT};
use serde_json::Value;
use std::path::Path;
use std::process::Command;
use std::thread;
use std::time::Instant;

/// The traceparent the client sends with its valid call (interop/traced-client.mjs).
const PARENT_TRACE: &str = "0af7651916cd43dd8448eb211c80319c";
const PARENT_SPAN: &str = "b7ad6b7169203331";

/// The OTLP receiver, writing the spans it decodes into `out`; `mode` as the script takes it.
fn receiver(out: &Path, mode: &[&str]) -> HttpServer {
    HttpServer::start(
        Command::new(python())
            .arg(require("interop/otlp-receiver.py"))
            .arg(out)
            .args(mode),
    )
}

/// A receiver of spans, and the files of one test.
struct Traced {
    /// Holds the files below while the test runs.
    _dir: tempfile::TempDir,
    /// The spans received, one JSON line each.
    out: std::path::PathBuf,
    /// What the recording server received.
    record: std::path::PathBuf,
    collector: HttpServer,
    /// Where the proxy sends its spans.
    endpoint: String,
}

impl Traced {
    /// Where the spans go, what the server received, and the endpoint.
    fn paths(&self) -> (&Path, &Path, &str) {
        (&self.out, &self.record, &self.endpoint)
    }

    /// A receiver in `mode` (as interop/otlp-receiver.py takes it).
    fn start(mode: &[&str]) -> Traced {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("spans.jsonl");
        let record = dir.path().join("record.jsonl");
        let collector = receiver(&out, mode);
        let endpoint = format!("http://127.0.0.1:{}/v1/traces", collector.port);
        Traced {
            _dir: dir,
            out,
            record,
            collector,
            endpoint,
        }
    }
}

/// The spans received, once at least `least` arrived (or the wait is over).
fn spans(out: &Path, least: usize) -> Vec<Value> {
    let start = Instant::now();
    loop {
        let spans: Vec<Value> = std::fs::read_to_string(out)
            .unwrap_or_default()
            .lines()
            .map(|line| serde_json::from_str(line).unwrap())
            .collect();
        if spans.len() >= least || start.elapsed() > WAIT {
            return spans;
        }
        thread::sleep(std::time::Duration::from_millis(20));
    }
}

/// The traced client over stdio, starting `toolschema proxy ARGS -- SERVER`.
fn stdio_client(scenario: &[&str], proxy_args: &[&str], server: &[String]) -> Value {
    let mut args = vec![require("interop/traced-client.mjs").display().to_string()];
    args.extend(scenario.iter().map(|s| s.to_string()));
    args.extend(["--".into(), toolschema().into(), "proxy".into()]);
    args.extend(proxy_args.iter().map(|s| s.to_string()));
    args.push("--".into());
    args.extend(server.iter().cloned());
    client(&node(), &args)
}

/// The one span of `spans` named `name` of `kind` in `trace`.
fn find<'a>(spans: &'a [Value], trace: &str, name: &str, kind: &str) -> &'a Value {
    let found: Vec<&Value> = spans
        .iter()
        .filter(|s| s["trace_id"] == trace && s["name"] == name && s["kind"] == kind)
        .collect();
    assert_eq!(found.len(), 1, "{name} {kind} in {trace}: {spans:#?}");
    found[0]
}

/// The server span of the `tools/call` with this JSON-RPC id.
fn call_span(spans: &[Value], id: &str) -> Value {
    spans
        .iter()
        .find(|s| s["kind"] == "SPAN_KIND_SERVER" && s["attributes"]["jsonrpc.request.id"] == id)
        .unwrap_or_else(|| panic!("no server span for request {id}: {spans:#?}"))
        .clone()
}

/// What the three calls of the `calls` scenario must have produced, whatever the transport.
fn check_calls(spans: &[Value], record: &Path, outcomes: &Value, session: Option<&str>) {
    assert!(
        outcomes["valid"]["result"]["isError"].is_null(),
        "{outcomes}"
    );
    assert_eq!(outcomes["invalid"]["result"]["isError"], true, "{outcomes}");
    assert_eq!(
        outcomes["toolError"]["result"]["isError"], true,
        "{outcomes}"
    );
    let calls: Vec<Value> = recorded(record)
        .into_iter()
        .filter(|m| m["method"] == "tools/call")
        .collect();
    // The invalid call never reached the server.
    assert_eq!(calls.len(), 2, "{calls:#?}");

    // A valid call, in the client's trace: server span, validate and the upstream call.
    let server = find(spans, PARENT_TRACE, "tools/call search", "SPAN_KIND_SERVER");
    assert_eq!(server["parent_span_id"], PARENT_SPAN);
    assert_eq!(server["trace_state"], "vendor=opaque");
    assert_eq!(server["status"], "STATUS_CODE_UNSET");
    let attributes = &server["attributes"];
    assert_eq!(attributes["mcp.method.name"], "tools/call");
    assert_eq!(attributes["gen_ai.tool.name"], "search");
    assert_eq!(attributes["gen_ai.operation.name"], "execute_tool");
    assert!(attributes["jsonrpc.request.id"].is_string(), "{attributes}");
    assert_eq!(attributes["mcp.protocol.version"], "2025-11-25");
    assert_eq!(attributes["toolschema.proxy.verdict"], "forwarded");
    assert!(attributes.get("error.type").is_none(), "{attributes}");
    match session {
        Some(id) => assert_eq!(attributes["mcp.session.id"], id),
        None => assert!(attributes.get("mcp.session.id").is_none()),
    }
    let validate = find(spans, PARENT_TRACE, "validate", "SPAN_KIND_INTERNAL");
    assert_eq!(validate["parent_span_id"], server["span_id"]);
    assert_eq!(validate["status"], "STATUS_CODE_UNSET");
    let upstream = find(spans, PARENT_TRACE, "tools/call search", "SPAN_KIND_CLIENT");
    assert_eq!(upstream["parent_span_id"], server["span_id"]);
    for child in [validate, upstream] {
        assert!(
            child["start"].as_u64() >= server["start"].as_u64(),
            "{child}"
        );
        assert!(child["end"].as_u64() <= server["end"].as_u64(), "{child}");
    }
    // The server received the trace, with the proxy's upstream span as the parent.
    let meta = &calls[0]["params"]["_meta"];
    assert_eq!(
        meta["traceparent"],
        format!(
            "00-{PARENT_TRACE}-{}-01",
            upstream["span_id"].as_str().unwrap()
        )
    );
    assert_eq!(meta["tracestate"], "vendor=opaque");

    // The invalid call (its traceparent is malformed: a new trace), refused by the proxy.
    let refused = call_span(
        spans,
        outcomes_id(spans, "refused_invalid").as_str().unwrap(),
    );
    let trace = refused["trace_id"].as_str().unwrap();
    assert_ne!(trace, PARENT_TRACE);
    assert_eq!(refused["parent_span_id"], "");
    assert_eq!(refused["status"], "STATUS_CODE_ERROR");
    assert_eq!(refused["attributes"]["error.type"], "tool_error");
    let validate = find(spans, trace, "validate", "SPAN_KIND_INTERNAL");
    assert_eq!(validate["attributes"]["error.type"], "refused_invalid");
    assert_eq!(validate["status"], "STATUS_CODE_ERROR");
    assert!(
        !spans
            .iter()
            .any(|s| s["trace_id"] == trace && s["kind"] == "SPAN_KIND_CLIENT"),
        "a refused call has no upstream span"
    );

    // The tool error: `error.type` is `tool_error` on the server span and the upstream call.
    let failed = spans
        .iter()
        .find(|s| {
            s["kind"] == "SPAN_KIND_SERVER"
                && s["attributes"]["toolschema.proxy.verdict"] == "forwarded"
                && s["attributes"]["error.type"] == "tool_error"
        })
        .unwrap_or_else(|| panic!("no tool error span: {spans:#?}"));
    let trace = failed["trace_id"].as_str().unwrap();
    assert_eq!(failed["status"], "STATUS_CODE_ERROR");
    let upstream = find(spans, trace, "tools/call search", "SPAN_KIND_CLIENT");
    assert_eq!(upstream["attributes"]["error.type"], "tool_error");
    assert_eq!(
        calls[1]["params"]["_meta"]["traceparent"],
        format!("00-{trace}-{}-01", upstream["span_id"].as_str().unwrap())
    );
}

/// The request id of the call whose server span has this verdict.
fn outcomes_id(spans: &[Value], verdict: &str) -> Value {
    spans
        .iter()
        .find(|s| {
            s["kind"] == "SPAN_KIND_SERVER"
                && s["attributes"]["toolschema.proxy.verdict"] == verdict
        })
        .map(|s| s["attributes"]["jsonrpc.request.id"].clone())
        .unwrap_or_else(|| panic!("no {verdict} span: {spans:#?}"))
}

#[test]
fn stdio_spans_follow_the_mcp_conventions_and_the_server_joins_the_trace() {
    let traced = Traced::start(&[]);
    let (out, record, endpoint) = traced.paths();
    let seen = stdio_client(
        &["calls"],
        &["--otlp-endpoint", endpoint],
        &recording_server(record, &[]),
    );
    // initialize, tools/list, three calls: 2 + 2 + 3 + 2 + 3.
    let spans = spans(out, 12);
    check_calls(&spans, record, &seen["outcomes"], None);
    for span in &spans {
        assert_eq!(span["resource"]["service.name"], "toolschema-proxy");
        assert_eq!(span["scope"], "toolschema-proxy");
    }
    let initialize = spans
        .iter()
        .find(|s| s["name"] == "initialize" && s["kind"] == "SPAN_KIND_SERVER")
        .unwrap();
    assert!(initialize["attributes"].get("gen_ai.tool.name").is_none());
}

#[test]
fn http_spans_carry_the_session_and_the_standard_variables_configure_the_export() {
    let traced = Traced::start(&[]);
    let (out, record) = (&traced.out, &traced.record);
    // The base URL, without /v1/traces: the proxy adds it.
    let base = format!(
        "OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:{}/",
        traced.collector.port
    );
    let mut args = vec!["--".to_string()];
    args.extend(recording_server(record, &[]));
    let proxy = Listening::start_under(&["env", &base, "OTEL_SERVICE_NAME=gateway-7"], &args);
    let seen = client(
        &node(),
        &[
            require("interop/traced-client.mjs").display().to_string(),
            "calls".into(),
            "--http".into(),
            proxy.url.clone(),
        ],
    );
    let spans = spans(out, 12);
    let session = spans
        .iter()
        .find_map(|s| s["attributes"]["mcp.session.id"].as_str())
        .unwrap_or_else(|| panic!("no mcp.session.id: {spans:#?}"))
        .to_string();
    check_calls(&spans, record, &seen["outcomes"], Some(&session));
    assert!(spans
        .iter()
        .all(|s| s["resource"]["service.name"] == "gateway-7"));
    proxy.stop();
}

#[test]
fn json_log_lines_carry_the_trace_id_of_the_call() {
    let traced = Traced::start(&[]);
    let (out, record, endpoint) = traced.paths();
    // With --input-check warn the invalid call is reported (a log line) and forwarded.
    let seen = stdio_client(
        &["calls"],
        &[
            "--otlp-endpoint",
            endpoint,
            "--log-format",
            "json",
            "--input-check",
            "warn",
        ],
        &recording_server(record, &[]),
    );
    let lines: Vec<Value> = seen["stderr"]
        .as_array()
        .unwrap()
        .iter()
        .map(|line| {
            let line = line.as_str().unwrap();
            serde_json::from_str(line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}"))
        })
        .collect();
    // initialize, tools/list, three calls forwarded: 2 + 2 + 3 * 3.
    let spans = spans(out, 13);
    let warned: Vec<&Value> = lines
        .iter()
        .filter(|l| l["message"].as_str().unwrap_or("").contains("'query'"))
        .collect();
    assert_eq!(warned.len(), 1, "{lines:#?}");
    let warned = warned[0];
    assert_eq!(warned["level"], "WARN");
    assert!(warned["time"].is_string());
    let trace = warned["trace_id"]
        .as_str()
        .unwrap_or_else(|| panic!("{warned}"));
    // The trace of the invalid call: its server span is the one with that trace.
    let server = spans
        .iter()
        .find(|s| s["trace_id"] == trace && s["kind"] == "SPAN_KIND_SERVER")
        .unwrap_or_else(|| panic!("no span in trace {trace}: {spans:#?}"));
    assert_eq!(server["name"], "tools/call search");
    assert_ne!(trace, PARENT_TRACE);
    // Lines written outside a traced call have none.
    assert!(lines
        .iter()
        .all(|l| l["trace_id"].is_null() || l["trace_id"] == trace));
}

#[test]
fn a_collector_that_never_answers_or_fails_never_stops_the_calls() {
    for (mode, calls) in [(&["--hang"][..], 2000), (&["--status", "500"][..], 100)] {
        let traced = Traced::start(mode);
        let (out, record, endpoint) = traced.paths();
        let seen = stdio_client(
            &["load", &calls.to_string()],
            &["--otlp-endpoint", endpoint, "--log-format", "json"],
            &recording_server(record, &[]),
        );
        assert_eq!(
            seen["outcomes"]["load"],
            serde_json::json!({"passed": calls, "failed": 0}),
            "{mode:?}"
        );
        // The spans that never reached the collector are counted and reported at exit.
        let dropped = seen["stderr"]
            .as_array()
            .unwrap()
            .iter()
            .map(|l| serde_json::from_str::<Value>(l.as_str().unwrap()).unwrap())
            .find_map(|l| l["spans_dropped"].as_u64())
            .unwrap_or_else(|| panic!("{mode:?}: no count of dropped spans: {seen}"));
        // Every call has three spans; a collector that never answers takes none of them.
        assert!(dropped > 0, "{mode:?}: {dropped}");
        if mode[0] == "--status" {
            assert!(dropped >= 3 * calls, "{mode:?}: {dropped}");
        }
        assert!(spans(out, 0).is_empty());
    }
}

#[test]
fn http_traceparent_header_names_the_parent_unless_meta_does_and_guard_lines_carry_it() {
    use common::http::{initialize, list_tools, post};
    let traced = Traced::start(&[]);
    let (out, record, endpoint) = traced.paths();
    let access = traced._dir.path().join("access.jsonl");
    let mut args: Vec<String> = [
        "proxy",
        "--listen",
        "127.0.0.1:0",
        "--log-format",
        "json",
        "--otlp-endpoint",
        endpoint,
        "--access-log",
        access.to_str().unwrap(),
        "--",
    ]
    .map(String::from)
    .to_vec();
    args.extend(recording_server(record, &[]));
    let mut proxy = common::Session::start(toolschema(), &args);
    // The address it serves at, from its JSON lines.
    let start = Instant::now();
    let url = loop {
        let found = proxy.stderr().lines().find_map(|line| {
            let line: Value = serde_json::from_str(line).ok()?;
            let message = line["message"].as_str()?;
            Some(message.split_once("serving MCP at ")?.1.to_string())
        });
        if let Some(url) = found {
            break url;
        }
        assert!(start.elapsed() < WAIT, "not serving: {}", proxy.stderr());
        thread::sleep(std::time::Duration::from_millis(20));
    };
    let session = initialize(&url, &[]);
    assert_eq!(list_tools(&url, &session, 1).status, 200);
    let header = format!("00-{PARENT_TRACE}-{PARENT_SPAN}-01");
    let call = r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"search","arguments":{"query":"header"}}}"#;
    let reply = post(&url, &session, &[("traceparent", &header)], call);
    assert_eq!(reply.status, 200, "{reply:?}");
    let meta = "00-11111111111111111111111111111111-2222222222222222-00";
    let call = format!(
        r#"{{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{{"name":"search","arguments":{{"query":"meta"}},"_meta":{{"traceparent":"{meta}"}}}}}}"#
    );
    let reply = post(&url, &session, &[("traceparent", &header)], &call);
    assert_eq!(reply.status, 200, "{reply:?}");
    // initialize, tools/list, one call: 2 + 2 + 3 (the unsampled call exports nothing).
    let spans = spans(out, 7);
    let by_header = call_span(&spans, "2");
    assert_eq!(by_header["trace_id"], PARENT_TRACE);
    assert_eq!(by_header["parent_span_id"], PARENT_SPAN);
    // The caller of call 3 does not sample its trace: no spans, but the server gets the trace.
    assert!(!spans.iter().any(|s| s["trace_id"] == "11".repeat(16)));
    let calls: Vec<Value> = recorded(record)
        .into_iter()
        .filter(|m| m["method"] == "tools/call")
        .collect();
    let sent = calls[1]["params"]["_meta"]["traceparent"].as_str().unwrap();
    assert!(
        sent.starts_with(&format!("00-{}-", "11".repeat(16))),
        "{sent}"
    );
    assert!(sent.ends_with("-00"), "{sent}");
    assert_ne!(sent, meta);
    let stderr = proxy.stderr();
    let lines: Vec<Value> = stderr
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}")))
        .collect();
    // The guard's line for each call carries its trace.
    let guard: Vec<&Value> = lines
        .iter()
        .filter(|l| l["message"] == "tools/call" && l["tool"] == "search")
        .collect();
    assert_eq!(guard.len(), 2, "{stderr}");
    assert_eq!(guard[0]["trace_id"], PARENT_TRACE);
    assert_eq!(guard[1]["trace_id"], "11".repeat(16));
    // So does the access log's line, with the id of the call's server span.
    let access: Vec<Value> = std::fs::read_to_string(&access)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let calls: Vec<&Value> = access
        .iter()
        .filter(|l| l["event"] == "tools/call")
        .collect();
    assert_eq!(calls.len(), 2, "{access:#?}");
    assert_eq!(calls[0]["trace_id"], PARENT_TRACE);
    assert_eq!(calls[0]["span_id"], by_header["span_id"], "{by_header:#}");
    assert_eq!(calls[1]["trace_id"], "11".repeat(16));
    let span = calls[1]["span_id"].as_str().unwrap();
    assert!(
        span.len() == 16 && span.bytes().all(|b| b.is_ascii_hexdigit()) && span != PARENT_SPAN,
        "{span}"
    );
    // A line about no traced request has no trace fields.
    let session = access.iter().find(|l| l["event"] == "session").unwrap();
    assert!(session.get("trace_id").is_none(), "{session}");
    proxy.close_stdin();
    let _ = Command::new("kill")
        .arg("-TERM")
        .arg(proxy.pid().to_string())
        .status();
    let (_, stderr) = proxy.wait();
    for line in stderr.lines() {
        serde_json::from_str::<Value>(line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}"));
    }
}
