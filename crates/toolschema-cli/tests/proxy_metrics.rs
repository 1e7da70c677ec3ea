//! `toolschema proxy --metrics ADDR` and the probes: a real Prometheus (Debian's `prometheus`)
//! scrapes the proxy while the TypeScript SDK client makes valid and invalid calls through it
//! to server-everything; the counts come back through Prometheus's HTTP API; `promtool check
//! metrics` passes on the exposition. A client calling made-up tools cannot grow the label set.
//! `/readyz` follows an upstream that goes and comes back, and no probe needs a token.
//! Calls the client cancels and calls refused for pin drift are counted with their verdicts.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::http::{self, free_port, request, HttpServer, Listening};
use common::{metrics_base, node, recording_server, require, run, toolschema, Session, WAIT};
use serde_json::{json, Value};
use std::io::Write;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

fn strings(values: &[&str]) -> Vec<String> {
    values.iter().map(|s| s.to_string()).collect()
}

/// GET `url`: status and body.
fn get(url: &str, headers: &[(&str, &str)]) -> (u16, String) {
    let reply = request("GET", url, headers, "");
    (reply.status, reply.body)
}

/// Prometheus started on a free port, scraping `target` every second; killed on drop.
struct Prometheus {
    child: Child,
    url: String,
    _dir: tempfile::TempDir,
}

impl Prometheus {
    fn start(target: &str) -> Prometheus {
        let program = common::debian_program("prometheus", "prometheus");
        let dir = tempfile::tempdir().unwrap();
        let config = dir.path().join("prometheus.yml");
        std::fs::write(
            &config,
            format!(
                "global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\nscrape_configs:\n  - job_name: toolschema-proxy\n    static_configs:\n      - targets: ['{target}']\n"
            ),
        )
        .unwrap();
        let port = free_port();
        let child = Command::new(program)
            .arg(format!("--config.file={}", config.display()))
            .arg(format!(
                "--storage.tsdb.path={}",
                dir.path().join("data").display()
            ))
            .arg(format!("--web.listen-address=127.0.0.1:{port}"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let prometheus = Prometheus {
            child,
            url: format!("http://127.0.0.1:{port}"),
            _dir: dir,
        };
        let ready = http::eventually(WAIT * 2, || {
            std::net::TcpStream::connect(("127.0.0.1", port)).is_ok()
                && get(&format!("{}/-/ready", prometheus.url), &[]).0 == 200
        });
        assert!(ready, "prometheus did not become ready");
        prometheus
    }

    /// An instant query through the HTTP API: `{labels: value}` of each series, the labels
    /// written `name=value,...` in the order given.
    fn query(&self, query: &str, labels: &[&str]) -> Vec<(String, f64)> {
        let encoded: String = query
            .bytes()
            .map(|b| match b {
                b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b'_' | b'-' | b'.' => {
                    (b as char).to_string()
                }
                _ => format!("%{b:02X}"),
            })
            .collect();
        let (status, body) = get(&format!("{}/api/v1/query?query={encoded}", self.url), &[]);
        assert_eq!(status, 200, "{body}");
        let answer: Value = serde_json::from_str(&body).unwrap();
        assert_eq!(answer["status"], "success", "{answer}");
        let mut found: Vec<(String, f64)> = answer["data"]["result"]
            .as_array()
            .unwrap()
            .iter()
            .map(|series| {
                let key = labels
                    .iter()
                    .map(|l| format!("{l}={}", series["metric"][l].as_str().unwrap_or("")))
                    .collect::<Vec<_>>()
                    .join(",");
                let value = series["value"][1].as_str().unwrap().parse().unwrap();
                (key, value)
            })
            .collect();
        found.sort_by(|a, b| a.0.cmp(&b.0));
        found
    }
}

impl Drop for Prometheus {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn pairs(expected: &[(&str, f64)]) -> Vec<(String, f64)> {
    expected.iter().map(|(k, v)| (k.to_string(), *v)).collect()
}

#[test]
fn prometheus_scrapes_the_counts_of_a_typescript_clients_calls() {
    let server = require("interop/node_modules/.bin/mcp-server-everything")
        .display()
        .to_string();
    let proxy = Listening::start(&strings(&["--metrics", "127.0.0.1:0", "--", &server]));
    let base = metrics_base(&proxy.process);
    // Ready once the command started and listed its tools (probed when asked).
    let (status, body) = get(&format!("{base}/readyz"), &[]);
    assert_eq!(status, 200, "{body}");
    assert!(
        body.starts_with(&format!("ready: '{server}' listed ")),
        "{body}"
    );
    let prometheus = Prometheus::start(base.trim_start_matches("http://"));
    let client = require("interop/metrics-client.mjs").display().to_string();
    let seen = http::client(&node(), &strings(&[&client, &proxy.url, "3", "2"]));
    assert_eq!(
        seen["seen"],
        json!([
            "ok",
            "ok",
            "ok",
            "tool_error",
            "tool_error",
            "tool_error",
            "error -32602"
        ])
    );
    let calls = pairs(&[
        ("tool=_other,verdict=refused_policy", 1.0),
        ("tool=echo,verdict=forwarded", 3.0),
        ("tool=echo,verdict=refused_invalid", 2.0),
        ("tool=get-sum,verdict=refused_invalid", 1.0),
    ]);
    let mut last = Vec::new();
    let scraped = http::eventually(Duration::from_secs(30), || {
        last = prometheus.query("toolschema_proxy_calls_total", &["tool", "verdict"]);
        last == calls
    });
    assert!(scraped, "calls per tool and verdict: {last:?}");
    assert_eq!(
        prometheus.query(
            "toolschema_proxy_validation_failures_total",
            &["tool", "keyword"]
        ),
        pairs(&[
            ("tool=echo,keyword=required", 2.0),
            ("tool=get-sum,keyword=type", 1.0)
        ])
    );
    assert_eq!(
        prometheus.query(
            "mcp_server_operation_duration_seconds_count",
            &["mcp_method_name", "gen_ai_tool_name", "error_type"]
        ),
        pairs(&[
            (
                "mcp_method_name=initialize,gen_ai_tool_name=,error_type=",
                1.0
            ),
            (
                "mcp_method_name=tools/call,gen_ai_tool_name=_other,error_type=-32602",
                1.0
            ),
            (
                "mcp_method_name=tools/call,gen_ai_tool_name=echo,error_type=",
                3.0
            ),
            (
                "mcp_method_name=tools/call,gen_ai_tool_name=echo,error_type=tool_error",
                2.0
            ),
            (
                "mcp_method_name=tools/call,gen_ai_tool_name=get-sum,error_type=tool_error",
                1.0
            ),
            (
                "mcp_method_name=tools/list,gen_ai_tool_name=,error_type=",
                1.0
            ),
        ])
    );
    // The histogram's buckets are cumulative: +Inf holds every call, and a quantile is a time.
    assert_eq!(
        prometheus.query(
            "sum by (gen_ai_tool_name) (mcp_server_operation_duration_seconds_bucket{le=\"+Inf\"})",
            &["gen_ai_tool_name"]
        ),
        pairs(&[
            ("gen_ai_tool_name=", 2.0),
            ("gen_ai_tool_name=_other", 1.0),
            ("gen_ai_tool_name=echo", 5.0),
            ("gen_ai_tool_name=get-sum", 1.0)
        ])
    );
    let p99 = prometheus.query(
        "histogram_quantile(0.99, sum by (le) (mcp_server_operation_duration_seconds_bucket))",
        &[],
    );
    assert!(
        p99.len() == 1 && p99[0].1 > 0.0 && p99[0].1 <= 300.0,
        "{p99:?}"
    );
    assert_eq!(
        prometheus.query("toolschema_proxy_sessions_open", &[]),
        pairs(&[("", 1.0)])
    );
    let statuses = prometheus.query("toolschema_proxy_http_requests_total", &["code"]);
    assert!(
        statuses
            .iter()
            .any(|(code, n)| code == "code=200" && *n >= 9.0),
        "{statuses:?}"
    );
    // promtool reads the exposition as Prometheus's own tools would.
    let (status, exposition) = get(&format!("{base}/metrics"), &[]);
    assert_eq!(status, 200);
    let mut check = Command::new(common::debian_program("promtool", "prometheus"))
        .args(["check", "metrics"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    check
        .stdin
        .take()
        .unwrap()
        .write_all(exposition.as_bytes())
        .unwrap();
    let checked = check.wait_with_output().unwrap();
    assert!(
        checked.status.success(),
        "promtool check metrics: {}{}\n{exposition}",
        String::from_utf8_lossy(&checked.stdout),
        String::from_utf8_lossy(&checked.stderr)
    );
    proxy.stop();
}

#[test]
fn a_client_calling_made_up_tools_cannot_grow_the_label_set() {
    let server = require("interop/node_modules/.bin/mcp-server-everything")
        .display()
        .to_string();
    let mut proxy = Session::proxy(&["--metrics", "127.0.0.1:0"], &[server]);
    let base = metrics_base(&proxy);
    // Over stdio the proxy is ready once it learned the tools.
    let (status, body) = get(&format!("{base}/readyz"), &[]);
    assert_eq!(
        (status, body.as_str()),
        (
            503,
            "not ready: the server's tools are not learned yet (no tools/list yet)\n"
        )
    );
    assert_eq!(get(&format!("{base}/healthz"), &[]).0, 200);
    proxy.initialize();
    proxy.send(r#"{"jsonrpc":"2.0","id":"list","method":"tools/list"}"#);
    proxy.recv_reply();
    assert_eq!(get(&format!("{base}/readyz"), &[]).0, 200);
    let calls = 10_000;
    // Names with a quote and a newline in them, as a hostile client would send.
    for chunk in (0..calls).collect::<Vec<_>>().chunks(100) {
        for i in chunk {
            proxy.send(&format!(
                "{{\"jsonrpc\":\"2.0\",\"id\":{i},\"method\":\"tools/call\",\"params\":{{\"name\":\"made-up-{i}\\\"\\n\",\"arguments\":{{}}}}}}"
            ));
        }
        for _ in chunk {
            let reply = proxy.recv_reply();
            assert!(reply["error"].is_object(), "{reply}");
        }
    }
    // Made-up methods, which the server answers with an error, are timed as `_other`.
    for i in 0..1_000 {
        proxy.send(&format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":\"m{i}\",\"method\":\"made-up/{i}\"}}"
        ));
        assert!(proxy.recv_reply()["error"].is_object());
    }
    let (status, exposition) = get(&format!("{base}/metrics"), &[]);
    assert_eq!(status, 200);
    assert!(
        exposition.contains("mcp_server_operation_duration_seconds_count{mcp_method_name=\"_other\",gen_ai_tool_name=\"\",error_type=\"-32601\"} 1000\n"),
        "{exposition}"
    );
    assert!(
        exposition.contains(&format!(
            "toolschema_proxy_calls_total{{tool=\"_other\",verdict=\"refused_policy\"}} {calls}\n"
        )),
        "{exposition}"
    );
    assert!(!exposition.contains("made-up"), "{exposition}");
    // Every family, a histogram series (19 lines) for initialize, tools/list, the made-up
    // methods and the refused calls, one counter: the same lines whatever the names sent.
    assert!(exposition.lines().count() < 140, "{exposition}");
    assert!(exposition.len() < 16 * 1024, "{} bytes", exposition.len());
    proxy.close_stdin();
    proxy.wait();
}

#[test]
fn readyz_follows_the_upstream_and_probes_need_no_token() {
    let dir = tempfile::tempdir().unwrap();
    let tokens = dir.path().join("tokens");
    std::fs::write(&tokens, "scraper:s3cret-token-for-the-metrics-test\n").unwrap();
    let port = free_port();
    let bin = require("interop/node_modules/.bin/mcp-server-everything")
        .display()
        .to_string();
    let mut upstream = HttpServer::start(&bin, &strings(&["streamableHttp"]), port);
    let tokens = tokens.display().to_string();
    // Beyond loopback the metrics listener needs tokens.
    let refused = common::run(
        common::toolschema(),
        &strings(&[
            "proxy",
            "--metrics",
            "0.0.0.0:0",
            "--upstream",
            &upstream.url,
        ]),
        WAIT,
    );
    assert_eq!(refused.0.code(), Some(2), "{refused:?}");
    assert!(
        refused
            .2
            .contains("--metrics 0.0.0.0:0 is not a loopback address"),
        "{refused:?}"
    );
    let proxy = Listening::start(&strings(&[
        "--auth-token-file",
        &tokens,
        "--metrics",
        "0.0.0.0:0",
        "--upstream",
        &upstream.url,
    ]));
    let metrics_port = metrics_base(&proxy.process)
        .rsplit(':')
        .next()
        .unwrap()
        .to_string();
    let metrics = format!("http://127.0.0.1:{metrics_port}");
    let front = proxy.url.trim_end_matches("/mcp").to_string();
    let bearer = [("authorization", "Bearer s3cret-token-for-the-metrics-test")];
    for base in [&front, &metrics] {
        assert_eq!(get(&format!("{base}/healthz"), &[]), (200, "ok\n".into()));
        let (status, body) = get(&format!("{base}/readyz"), &[]);
        assert_eq!(status, 200, "{base}: {body}");
        assert!(body.starts_with("ready: http://127.0.0.1:"), "{body}");
    }
    assert_eq!(get(&proxy.url, &[]).0, 401);
    assert_eq!(get(&format!("{metrics}/metrics"), &[]).0, 401);
    let (status, exposition) = get(&format!("{metrics}/metrics"), &bearer);
    assert_eq!(status, 200);
    assert!(
        exposition.contains("toolschema_proxy_auth_refusals_total{reason=\"missing_token\"} 2\n"),
        "{exposition}"
    );
    upstream.kill();
    for base in [&front, &metrics] {
        let (status, body) = get(&format!("{base}/readyz"), &[]);
        assert_eq!(status, 503, "{body}");
        assert!(body.starts_with("not ready: http://127.0.0.1:"), "{body}");
        assert_eq!(body.lines().count(), 1, "{body}");
    }
    let _upstream = HttpServer::start(&bin, &strings(&["streamableHttp"]), port);
    for base in [&front, &metrics] {
        assert_eq!(get(&format!("{base}/readyz"), &[]).0, 200);
    }
    proxy.stop();
}

#[test]
fn cancelled_calls_and_calls_refused_for_pin_drift_are_counted() {
    let dir = tempfile::tempdir().unwrap();
    let lock = dir.path().join("toolschema.lock");
    let server = recording_server(&dir.path().join("record.jsonl"), &[]);
    let mut args = strings(&["pin", "-o", &lock.display().to_string(), "--"]);
    args.extend(server.iter().cloned());
    let (status, _, stderr) = run(toolschema(), &args, Duration::from_secs(60));
    assert!(status.success(), "{stderr}");
    let lock_arg = lock.display().to_string();
    let mut proxy = Session::proxy(&["--metrics", "127.0.0.1:0", "--pin", &lock_arg], &server);
    let base = metrics_base(&proxy);
    proxy.initialize();
    proxy.send(r#"{"jsonrpc":"2.0","id":"list","method":"tools/list"}"#);
    proxy.recv_reply();
    // A forwarded call the client cancels: the cancellation goes on, and the recording server,
    // which ignores it, answers later; that late answer is dropped, and the next answer the
    // client reads is that of a slower call sent after it.
    proxy.send(r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"slow","arguments":{"ms":300}}}"#);
    proxy.send(r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1,"reason":"the user gave up"}}"#);
    proxy.send(r#"{"jsonrpc":"2.0","id":"after","method":"tools/call","params":{"name":"slow","arguments":{"ms":1500}}}"#);
    let next = proxy.recv_reply();
    assert_eq!(next["id"], "after", "{next}");
    // The server changes `search` from its pin: the next call to it is refused.
    proxy.send(r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"change_tools","arguments":{}}}"#);
    proxy.recv_reply();
    proxy.send(r#"{"jsonrpc":"2.0","id":3,"method":"tools/list"}"#);
    proxy.recv_reply();
    proxy.send(r#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"search","arguments":{"query":"abc"}}}"#);
    let refused = proxy.recv_reply();
    assert_eq!(refused["result"]["isError"], true, "{refused}");
    let (status, exposition) = get(&format!("{base}/metrics"), &[]);
    assert_eq!(status, 200);
    let counted: Vec<&str> = exposition
        .lines()
        .filter(|l| l.starts_with("toolschema_proxy_calls_total{"))
        .collect();
    assert_eq!(
        counted,
        [
            "toolschema_proxy_calls_total{tool=\"change_tools\",verdict=\"forwarded\"} 1",
            "toolschema_proxy_calls_total{tool=\"search\",verdict=\"refused_pin_drift\"} 1",
            "toolschema_proxy_calls_total{tool=\"slow\",verdict=\"cancelled\"} 1",
            "toolschema_proxy_calls_total{tool=\"slow\",verdict=\"forwarded\"} 1",
        ],
        "{exposition}"
    );
    proxy.close_stdin();
    proxy.wait();
}

/// A call the client cancels over stdio leaves the gate at once: when the server dies with it
/// unanswered, the client gets no error for it (it got one while the gate still held it), and
/// the audit log has it once, as cancelled. The cancellation reached the server.
#[test]
fn a_cancelled_call_leaves_the_gate_over_stdio() {
    let dir = tempfile::tempdir().unwrap();
    let record = dir.path().join("record.jsonl");
    let audit = dir.path().join("audit.jsonl");
    let server = recording_server(&record, &[]);
    let audit_arg = audit.display().to_string();
    let mut proxy = Session::proxy(&["--audit", &audit_arg], &server);
    proxy.initialize();
    proxy.send(r#"{"jsonrpc":"2.0","id":"list","method":"tools/list"}"#);
    proxy.recv_reply();
    // A call the server holds for ten minutes, cancelled.
    proxy.send(r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"slow","arguments":{"ms":600000}}}"#);
    proxy.send(r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1,"reason":"the user gave up"}}"#);
    // Then the server dies: the request in flight is answered with an error, and only it.
    proxy.send(r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"crash","arguments":{}}}"#);
    let mut answered = Vec::new();
    while let Some(line) = proxy.quiet_for(WAIT) {
        let message: Value = serde_json::from_str(&line).unwrap();
        if let Some(id) = message.get("id") {
            answered.push(id.clone());
        }
    }
    proxy.wait();
    assert_eq!(answered, [json!(2)], "{}", proxy.stderr());
    let cancels: Vec<Value> = common::recorded(&record)
        .into_iter()
        .filter(|m| m["method"] == "notifications/cancelled")
        .collect();
    assert_eq!(cancels.len(), 1, "{cancels:?}");
    assert_eq!(cancels[0]["params"]["requestId"], 1);
    let audited: Vec<Value> = std::fs::read_to_string(&audit)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let first: Vec<&Value> = audited.iter().filter(|r| r["id"] == 1).collect();
    assert_eq!(first.len(), 1, "{audited:?}");
    assert_eq!(first[0]["verdict"], "cancelled", "{audited:?}");
}

/// A call the client cancels over HTTP (a 2025-11-25 session with a server process of its
/// own) leaves the gate at once: its stream ends without the server's late answer, and a call
/// the server never answers no longer keeps the session busy, so `--session-idle` closes it
/// (the gauge of open sessions returns to 0). Both cancellations reached the server, and the
/// audit log has each call once, as cancelled.
#[test]
fn a_cancelled_call_leaves_the_gate_over_http() {
    let dir = tempfile::tempdir().unwrap();
    let record = dir.path().join("record.jsonl");
    let audit = dir.path().join("audit.jsonl");
    let mut args = strings(&[
        "--metrics",
        "127.0.0.1:0",
        "--session-idle",
        "2",
        "--audit",
        &audit.display().to_string(),
        "--",
    ]);
    args.extend(recording_server(&record, &[]));
    let proxy = http::Listening::start(&args);
    let base = metrics_base(&proxy.process);
    let url = proxy.url.clone();
    let session = http::initialize(&url, &[]);
    assert_eq!(http::list_tools(&url, &session, 1).status, 200);
    let headers = [
        ("mcp-session-id", session.as_str()),
        ("mcp-protocol-version", "2025-11-25"),
    ];
    let cancel = |id: &str| {
        let body = format!(
            r#"{{"jsonrpc":"2.0","method":"notifications/cancelled","params":{{"requestId":"{id}","reason":"the user gave up"}}}}"#
        );
        assert_eq!(http::post(&url, &session, &[], &body).status, 202);
    };
    // Call `slow` for `ms` as request `id`, cancel it once its stream is open, and read the
    // stream to its end.
    let cancelled_call = |id: &str, ms: u64| {
        let body = format!(
            r#"{{"jsonrpc":"2.0","id":"{id}","method":"tools/call","params":{{"name":"slow","arguments":{{"ms":{ms}}}}}}}"#
        );
        let mut stream = http::open("POST", &url, &headers, &body);
        let head = http::read_some(&mut stream, Duration::from_secs(10));
        assert!(head.contains("text/event-stream"), "{head}");
        cancel(id);
        head + &http::read_reply_rest(&mut stream, Duration::from_secs(20))
    };
    // A call the server answers after two seconds, cancelled before: its stream ends without
    // that answer.
    let late = cancelled_call("late", 2000);
    assert!(!late.contains("slow done"), "{late}");
    // The cancellation reached the server.
    assert!(http::eventually(WAIT, || common::recorded(&record)
        .iter()
        .any(
            |m| m["method"] == "notifications/cancelled" && m["params"]["requestId"] == "late"
        )));
    // A call the server never answers, cancelled: the session is idle from then on.
    let held = cancelled_call("held", 600_000);
    assert!(!held.contains("\"id\":\"held\""), "{held}");
    let open_sessions = || {
        get(&format!("{base}/metrics"), &[])
            .1
            .lines()
            .find_map(|l| {
                l.strip_prefix("toolschema_proxy_sessions_open ")
                    .map(str::to_string)
            })
    };
    let idle = http::eventually(Duration::from_secs(30), || {
        open_sessions().as_deref() == Some("0")
    });
    assert!(idle, "sessions open: {:?}", open_sessions());
    let gone = http::post(
        &url,
        &session,
        &[],
        r#"{"jsonrpc":"2.0","id":9,"method":"ping"}"#,
    );
    assert_eq!(gone.status, 404, "{gone:?}");
    let audited: Vec<Value> = std::fs::read_to_string(&audit)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    for id in ["late", "held"] {
        let records: Vec<&Value> = audited.iter().filter(|r| r["id"] == id).collect();
        assert_eq!(records.len(), 1, "{id}: {audited:?}");
        assert_eq!(records[0]["verdict"], "cancelled", "{id}: {audited:?}");
    }
    let cancels = common::recorded(&record)
        .iter()
        .filter(|m| m["method"] == "notifications/cancelled")
        .count();
    assert_eq!(cancels, 2, "{:?}", common::recorded_lines(&record));
    proxy.stop();
}

/// A 2026-07-28 client's lane whose server process exits: its next request starts the server
/// again, and `toolschema_proxy_upstream_restarts_total` counts that restart. A 2025-11-25
/// session whose server exits ends instead (404): its client's next session starts a new
/// server, which is no restart.
#[test]
fn a_lane_whose_server_exited_starts_it_again_and_counts_the_restart() {
    let dir = tempfile::tempdir().unwrap();
    let record = dir.path().join("record.jsonl");
    let mut args = strings(&["--metrics", "127.0.0.1:0", "--"]);
    args.extend(recording_server(&record, &[]));
    let proxy = http::Listening::start(&args);
    let base = metrics_base(&proxy.process);
    let call = |name: &str, arguments: &str| {
        let body = format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"{name}","arguments":{arguments},"_meta":{{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{{}}}}}}}}"#
        );
        let reply = http::request(
            "POST",
            &proxy.url,
            &[
                ("mcp-protocol-version", "2026-07-28"),
                ("mcp-method", "tools/call"),
                ("mcp-name", name),
            ],
            &body,
        );
        assert_eq!(reply.status, 200, "{reply:?}");
        reply.messages().pop().unwrap()
    };
    // The value of a series without labels in a scrape.
    let sample = |name: &str| {
        let prefix = format!("{name} ");
        get(&format!("{base}/metrics"), &[])
            .1
            .lines()
            .find_map(|l| l.strip_prefix(prefix.as_str()).map(str::to_string))
            .unwrap()
    };
    let restarts = || sample("toolschema_proxy_upstream_restarts_total");
    let echo = |message: &str| {
        let answer = call("echo", &json!({ "message": message }).to_string());
        assert_eq!(
            answer["result"]["content"][0]["text"],
            format!("echo: {message}"),
            "{answer}"
        );
    };
    echo("one");
    assert_eq!(restarts(), "0");
    // The server exits mid-call: the call gets an error that says so.
    let crashed = call("crash", "{}");
    assert!(
        crashed["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("exited")),
        "{crashed}"
    );
    // The next request starts it again.
    echo("two");
    assert_eq!(restarts(), "1");
    // Again, and this time the lane is swept (no session open) before the next request.
    let crashed = call("crash", "{}");
    assert!(crashed.get("error").is_some(), "{crashed}");
    let swept = http::eventually(WAIT, || sample("toolschema_proxy_sessions_open") == "0");
    assert!(swept);
    echo("three");
    assert_eq!(restarts(), "2");
    // Each server was new: each got the proxy's first listing of its own.
    let started = common::recorded(&record)
        .iter()
        .filter(|m| m["method"] == "tools/list" && m["id"] == "toolschema-proxy-1")
        .count();
    assert_eq!(started, 3, "{:?}", common::recorded_lines(&record));
    // A 2025-11-25 session whose server exits ends; a new session is no restart.
    let session = http::initialize(&proxy.url, &[]);
    let crash = http::post(
        &proxy.url,
        &session,
        &[],
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"crash","arguments":{}}}"#,
    );
    assert_eq!(crash.status, 200, "{crash:?}");
    let ended = http::eventually(WAIT, || {
        http::post(
            &proxy.url,
            &session,
            &[],
            r#"{"jsonrpc":"2.0","id":3,"method":"ping"}"#,
        )
        .status
            == 404
    });
    assert!(ended);
    http::initialize(&proxy.url, &[]);
    assert_eq!(restarts(), "2");
    proxy.stop();
}
