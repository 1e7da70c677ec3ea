//! The official TypeScript SDK client against `clap-demo mcp start` (stdio) and `clap-demo mcp
//! stream` (Streamable HTTP): tools listed, valid calls run the command, invalid calls return the
//! core's messages and never run it (the demo's run log proves which commands ran).

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use serde_json::{json, Value};
use std::path::Path;
use std::process::Command;
use std::time::Duration;

const LIMIT: Duration = Duration::from_secs(90);

/// The calls every transport makes, valid ones first.
fn calls() -> Value {
    json!([
        {"name": "clap-demo_greet", "arguments": {"name": "Ada"}},
        {"name": "clap-demo_greet", "arguments": {"name": "-rf", "times": 2, "shout": true}},
        {"name": "clap-demo_files_list", "arguments": {"paths": ["sub"], "format": "json", "limit": 1}},
        {"name": "clap-demo_files_list", "arguments": {"paths": ["sub"]}},
        {"name": "clap-demo_files_list", "arguments": {"paths": ["missing"]}},
        {"name": "clap-demo_config_set", "arguments": {"key": "retries", "value": 3}},
        {"name": "clap-demo_config_set", "arguments": {"key": "tags", "value": ["a", "-b"], "scope": "project"}},
        {"name": "clap-demo_config_set", "arguments": {"key": "mode", "value": "fast", "dry_run": true}},
        {"name": "clap-demo_greet", "arguments": {"name": "Ada", "times": 11}},
        {"name": "clap-demo_greet", "arguments": {"times": 0}},
        {"name": "clap-demo_greet", "arguments": {"name": "Ada", "tims": 2}},
        {"name": "clap-demo_files_list", "arguments": {"format": "xml", "limit": -1}},
        {"name": "clap-demo_config_set", "arguments": {"key": "k"}},
        {"name": "clap-demo_config_set", "arguments": {"key": "k", "value": null, "scope": "global"}},
        {"name": "clap-demo_greeet", "arguments": {"name": "Ada"}},
        {"name": "clap-demo_secret", "arguments": {}}
    ])
}

fn ran(stdout: &str, stderr: &str, exit_code: i64) -> Value {
    let structured = json!({"stdout": stdout, "stderr": stderr, "exitCode": exit_code});
    json!({
        "content": [{"type": "text", "text": structured.to_string()}],
        "structuredContent": structured,
        "isError": exit_code != 0
    })
}

fn refused(text: &str) -> Value {
    json!({"content": [{"type": "text", "text": text}], "isError": true})
}

/// What each call returns, in order; `home` is the demo's user configuration directory.
fn expected_calls(home: &Path) -> Vec<Value> {
    let user_config = home.join("config.json");
    let results = [
        ran("Hello, Ada!\n", "", 0),
        ran("HELLO, -RF!\nHELLO, -RF!\n", "", 0),
        ran(
            "[{\"path\":\"sub/a.txt\",\"kind\":\"file\",\"size\":3}]\n",
            "",
            0,
        ),
        ran("file\t3\tsub/a.txt\nfile\t5\tsub/b.txt\n", "", 0),
        ran(
            "",
            "clap-demo: cannot read missing: No such file or directory (os error 2)\n",
            1,
        ),
        ran(
            &format!("set retries = 3 in {}\n", user_config.display()),
            "",
            0,
        ),
        ran("set tags = [\"a\",\"-b\"] in .clap-demo.json\n", "", 0),
        ran(
            &format!(
                "would set mode = \"fast\" in {} (dry run: nothing written)\n",
                user_config.display()
            ),
            "",
            0,
        ),
        refused("argument 'times' value must be <= 10 (got 11)"),
        refused("missing required argument 'name'\nargument 'times' value must be >= 1 (got 0)"),
        refused("unexpected argument 'tims' (did you mean 'times'?)"),
        refused(
            "argument 'format' must be one of the enum values: \"json\", \"table\"\n\
             argument 'limit' value must be >= 0 (got -1)",
        ),
        refused("missing required argument 'value'"),
        refused(
            "argument 'value' must be a string, a number, a boolean, an array or an object (got null)\n\
             argument 'scope' must be one of the enum values: \"user\", \"project\"",
        ),
    ];
    let names = calls();
    let mut out: Vec<Value> = results
        .into_iter()
        .zip(names.as_array().unwrap())
        .map(|(result, call)| json!({"name": call["name"], "result": result}))
        .collect();
    for (name, message) in [
        (
            "clap-demo_greeet",
            "MCP error -32602: unknown tool 'clap-demo_greeet' (did you mean 'clap-demo_greet'?)",
        ),
        (
            "clap-demo_secret",
            "MCP error -32602: unknown tool 'clap-demo_secret'",
        ),
    ] {
        out.push(json!({"name": name, "error": {"code": -32602, "message": message}}));
    }
    out
}

/// A working directory with files to list, and the demo's environment pointing into it.
struct Workspace {
    dir: tempfile::TempDir,
}

impl Workspace {
    fn new() -> Workspace {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("sub")).unwrap();
        std::fs::write(dir.path().join("sub/a.txt"), "hi\n").unwrap();
        std::fs::write(dir.path().join("sub/b.txt"), "hello").unwrap();
        let workspace = Workspace { dir };
        workspace.set_calls(&calls());
        workspace
    }

    fn set_calls(&self, calls: &Value) {
        std::fs::write(
            self.path().join("calls.json"),
            serde_json::to_string(calls).unwrap(),
        )
        .unwrap();
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }

    fn home(&self) -> std::path::PathBuf {
        self.path().join("home")
    }

    /// A command run in the workspace with the demo's environment.
    fn command(&self, program: &Path) -> Command {
        let mut command = Command::new(program);
        command
            .current_dir(self.path())
            .env("CLAP_DEMO_LOG", self.path().join("runs.log"))
            .env("CLAP_DEMO_HOME", self.home())
            .env_remove("CLAP_DEMO_SOURCE");
        command
    }

    /// Run the Node client in `mode` with the calls of `calls.json` and return its output;
    /// `server_args` are extra arguments for the server.
    fn client(&self, mode: &str, server_args: &[&str]) -> Value {
        let mut command = self.command(Path::new("node"));
        command
            .arg(common::node_client())
            .arg(mode)
            .arg(common::demo())
            .arg("calls.json")
            .arg(serde_json::to_string(server_args).unwrap());
        let finished = common::run(command, LIMIT);
        assert_eq!(
            finished.code,
            Some(0),
            "the {mode} client failed: {}",
            finished.stderr
        );
        serde_json::from_str(&finished.stdout).unwrap()
    }

    /// The commands that ran, as the demo logged them.
    fn runs(&self) -> String {
        std::fs::read_to_string(self.path().join("runs.log")).unwrap_or_default()
    }
}

/// The tool list as a JavaScript client reads it: every number a double.
fn as_javascript_reads(value: &Value) -> Value {
    match value {
        Value::Number(n) => n
            .as_f64()
            .and_then(serde_json::Number::from_f64)
            .map_or(Value::Null, Value::Number),
        Value::Array(items) => Value::Array(items.iter().map(as_javascript_reads).collect()),
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| (k.clone(), as_javascript_reads(v)))
                .collect(),
        ),
        other => other.clone(),
    }
}

fn check_transport(mode: &str) -> (Workspace, Value) {
    let workspace = Workspace::new();
    let output = workspace.client(mode, &[]);
    assert_eq!(
        output["server"],
        json!({"name": "clap-demo", "version": env!("CARGO_PKG_VERSION")})
    );
    let calls = output["calls"].as_array().unwrap();
    let expected = expected_calls(&workspace.home());
    assert_eq!(calls.len(), expected.len());
    for (got, want) in calls.iter().zip(&expected) {
        assert_eq!(got, want, "{mode}: call {}", want["name"]);
    }
    // Only the valid calls ran, in order, with the environment default the server sets.
    assert_eq!(
        workspace.runs(),
        "mcp greet\nmcp greet\nmcp files list\nmcp files list\nmcp files list\n\
         mcp config set\nmcp config set\nmcp config set\n"
    );
    // The refused `config set` calls wrote nothing; the dry run neither.
    assert_eq!(
        std::fs::read_to_string(workspace.home().join("config.json")).unwrap(),
        "{\n  \"retries\": 3\n}\n"
    );
    assert_eq!(
        std::fs::read_to_string(workspace.path().join(".clap-demo.json")).unwrap(),
        "{\n  \"tags\": [\n    \"a\",\n    \"-b\"\n  ]\n}\n"
    );
    (workspace, output)
}

#[test]
fn typescript_client_over_stdio() {
    let (workspace, output) = check_transport("stdio");

    // `mcp tools` writes exactly what tools/list returned.
    let mut command = workspace.command(&common::demo());
    command.args(["mcp", "tools", "--output", "listed.json"]);
    let finished = common::run(command, LIMIT);
    assert_eq!(finished.code, Some(0), "{}", finished.stderr);
    assert_eq!(finished.stderr, "wrote 3 tools to listed.json\n");
    let file: Value = serde_json::from_str(
        &std::fs::read_to_string(workspace.path().join("listed.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(
        file.as_object().unwrap().keys().collect::<Vec<_>>(),
        ["tools"]
    );
    assert_eq!(
        as_javascript_reads(&file["tools"]),
        as_javascript_reads(&output["tools"])
    );
}

#[test]
fn typescript_client_over_streamable_http() {
    let (_workspace, output) = check_transport("http");
    assert_eq!(output["shutdown"], json!({"code": 0, "signal": null}));
}

#[test]
fn mcp_tools_lists_the_demo_exactly() {
    let dir = tempfile::tempdir().unwrap();
    let mut command = Command::new(common::demo());
    command
        .args(["mcp", "tools", "-o", "-"])
        .current_dir(dir.path());
    let finished = common::run(command, LIMIT);
    assert_eq!(finished.code, Some(0), "{}", finished.stderr);
    let listed: Value = serde_json::from_str(&finished.stdout).unwrap();
    let expected: Value = serde_json::from_str(include_str!("expected-tools.json")).unwrap();
    assert_eq!(listed, expected);
    assert!(!dir.path().join("mcp-tools.json").exists());
}

/// A workspace whose project configuration is a FIFO nobody writes to: `config set --scope
/// project` blocks on it until killed.
#[cfg(unix)]
fn blocking_workspace() -> Workspace {
    let workspace = Workspace::new();
    let mut mkfifo = Command::new("mkfifo");
    mkfifo.arg(workspace.path().join(".clap-demo.json"));
    assert_eq!(common::run(mkfifo, LIMIT).code, Some(0), "mkfifo failed");
    workspace
}

#[cfg(unix)]
fn blocking_call(timeout_ms: Option<u64>) -> Value {
    let mut call = json!({
        "name": "clap-demo_config_set",
        "arguments": {"key": "k", "value": "v", "scope": "project"},
        "gone": ["config", "set"]
    });
    if let Some(ms) = timeout_ms {
        call["timeoutMs"] = json!(ms);
    }
    json!([call])
}

/// The client saw the call's command running, and gone afterwards (where it can watch processes:
/// it reads /proc).
fn assert_ran_and_was_killed(call: &Value) {
    if Path::new("/proc/self/cmdline").exists() {
        assert_eq!(
            (&call["wasRunning"], &call["gone"]),
            (&json!(true), &json!(true))
        );
    }
}

#[cfg(unix)]
#[test]
fn the_timeout_kills_the_command() {
    let workspace = blocking_workspace();
    workspace.set_calls(&blocking_call(None));
    let output = workspace.client("stdio", &["--timeout", "2"]);
    let call = &output["calls"][0];
    assert_eq!(
        call["result"],
        ran(
            "",
            "[the command did not finish within 2 s and was killed]\n",
            128 + 9
        )
    );
    assert_ran_and_was_killed(call);
    assert_eq!(workspace.runs(), "mcp config set\n");
}

#[cfg(unix)]
#[test]
fn cancelling_the_call_kills_the_command() {
    let workspace = blocking_workspace();
    // The client gives up after 1 s and sends notifications/cancelled; the server's own timeout
    // (60 s) is far away, so only the cancellation can have killed the command.
    workspace.set_calls(&blocking_call(Some(1000)));
    let output = workspace.client("stdio", &[]);
    let call = &output["calls"][0];
    assert_eq!(
        call["error"],
        json!({"code": -32001, "message": "MCP error -32001: Request timed out"})
    );
    assert_ran_and_was_killed(call);
    assert_eq!(workspace.runs(), "mcp config set\n");
}

#[cfg(unix)]
#[test]
fn closing_the_connection_kills_running_commands() {
    let workspace = blocking_workspace();
    let mut calls = blocking_call(None);
    calls[0]["closeWhileRunning"] = json!(true);
    workspace.set_calls(&calls);
    let output = workspace.client("stdio", &[]);
    let call = &output["calls"][0];
    assert_eq!(
        call["error"],
        json!({"code": -32000, "message": "MCP error -32000: Connection closed"})
    );
    assert_ran_and_was_killed(call);
}

/// `clap-demo mcp start` in `dir`, spoken to line by line: the process, its input, and the lines
/// it writes as they come.
fn raw_stdio_server(
    dir: &std::path::Path,
) -> (
    std::process::Child,
    std::process::ChildStdin,
    std::sync::mpsc::Receiver<String>,
) {
    use std::io::{BufRead, BufReader};
    let mut server = Command::new(common::demo())
        .args(["mcp", "start"])
        .current_dir(dir)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let stdin = server.stdin.take().unwrap();
    let (lines, read) = std::sync::mpsc::channel();
    let stdout = server.stdout.take().unwrap();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if lines.send(line).is_err() {
                break;
            }
        }
    });
    (server, stdin, read)
}

/// Requests that are valid JSON but that the server cannot read exactly (a number past the
/// float range, a lone surrogate, an integer past 64 bits, which the command would get rounded)
/// or whose params are not MCP's are each answered with an error, not dropped unanswered.
#[test]
fn requests_the_server_cannot_read_exactly_are_answered_not_dropped() {
    use std::io::Write;
    let dir = tempfile::tempdir().unwrap();
    let (mut server, mut stdin, read) = raw_stdio_server(dir.path());
    let requests = [
        r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#,
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"clap-demo_greet","arguments":{"name":"\ud800"}}}"#,
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"clap-demo_files_list","arguments":{"limit":1e400}}}"#,
        r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"clap-demo_config_set","arguments":{"key":"k","value":123456789012345678901234567890,"dry_run":true}}}"#,
        r#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"clap-demo_greet","arguments":"{\"name\":\"x\"}"}}"#,
        r#"{"jsonrpc":"2.0","id":5,"method":"ping"}"#,
        r#"{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"clap-demo_config_set","arguments":{"key":"k","value":12345678901234567890123.0,"dry_run":true}}}"#,
        "\u{feff}{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"ping\"}",
    ];
    for request in requests {
        writeln!(stdin, "{request}").unwrap();
    }
    let mut answers = std::collections::BTreeMap::new();
    while answers.len() < 8 {
        let line = read
            .recv_timeout(Duration::from_secs(20))
            .unwrap_or_else(|_| panic!("answered only {answers:?}"));
        let answer: Value = serde_json::from_str(&line).unwrap();
        let id = answer["id"].as_i64().unwrap();
        assert!(
            answers.insert(id, answer).is_none(),
            "id {id} answered twice"
        );
    }
    drop(stdin);
    let _ = server.wait();
    let error = |id: i64| {
        let answer = &answers[&id];
        (
            answer["error"]["code"].clone(),
            answer["error"]["message"]
                .as_str()
                .unwrap_or_default()
                .to_string(),
        )
    };
    for id in [1, 2] {
        let (code, message) = error(id);
        assert_eq!(code, -32602);
        assert!(
            message.starts_with("the request is valid JSON that this server cannot read exactly"),
            "{message}"
        );
    }
    assert_eq!(
        error(3),
        (json!(-32602), "the request holds the number 123456789012345678901234567890, which this server reads as a 64-bit float and would pass on as 1.2345678901234568e+29; send it as a string".to_string())
    );
    assert_eq!(
        error(6),
        (json!(-32602), "the request holds the number 12345678901234567890123.0, which this server reads as a 64-bit float and would pass on as 1.2345678901234568e+22; send it as a string".to_string())
    );
    assert_eq!(
        answers[&7]["result"],
        json!({}),
        "a byte order mark before a message"
    );
    assert_eq!(
        error(4),
        (json!(-32602), "tools/call needs params with the tool's name (a string) and its arguments (a JSON object)".to_string())
    );
    assert_eq!(answers[&5]["result"], json!({}));
}

/// rmcp answers a line it cannot read with an error without an id, which no client can match to
/// its request: each such line is answered with the id exactly as sent (null when there is none
/// a client could match), and the server goes on serving.
#[test]
fn every_request_line_gets_an_answer_with_its_id_as_sent() {
    use std::io::Write;
    let dir = tempfile::tempdir().unwrap();
    let (mut server, mut stdin, read) = raw_stdio_server(dir.path());
    let odd = [
        // (line, the id its answer carries as JSON text, words of the message)
        (
            r#"{"jsonrpc":"2.0","id":1.5,"method":"ping"}"#,
            "1.5",
            "cannot be held exactly",
        ),
        (
            r#"{"jsonrpc":"2.0","id":1e400,"method":"tools/list"}"#,
            "1e400",
            "cannot be held exactly",
        ),
        (
            r#"{"jsonrpc":"2.0","id":18446744073709551616,"method":"ping"}"#,
            "18446744073709551616",
            "cannot be held exactly",
        ),
        (
            r#"{"jsonrpc":"2.0","id":1.0000000000000000001,"method":"ping"}"#,
            "1.0000000000000000001",
            "cannot be held exactly",
        ),
        (
            r#"{"jsonrpc":"2.0","id":"\ud800","method":"ping"}"#,
            r#""\ud800""#,
            "cannot be held exactly",
        ),
        (
            r#"{"jsonrpc":"2.0","id":true,"method":"ping"}"#,
            "null",
            "neither a string nor a number",
        ),
        (
            r#"{"jsonrpc":"2.0","id":8,"method":5}"#,
            "8",
            r#"\"method\" is not a string"#,
        ),
        (
            "{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":",
            "null",
            "not valid JSON",
        ),
        (
            r#"[{"jsonrpc":"2.0","id":10,"method":"ping"}]"#,
            "null",
            "batch",
        ),
    ];
    let init = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;
    writeln!(stdin, "{init}").unwrap();
    writeln!(
        stdin,
        r#"{{"jsonrpc":"2.0","method":"notifications/initialized"}}"#
    )
    .unwrap();
    for (line, _, _) in odd {
        writeln!(stdin, "{line}").unwrap();
    }
    writeln!(stdin, r#"{{"jsonrpc":"2.0","id":11,"method":"ping"}}"#).unwrap();
    let mut answers = Vec::new();
    while answers.len() < odd.len() + 2 {
        let line = read
            .recv_timeout(Duration::from_secs(20))
            .unwrap_or_else(|_| panic!("answered only {answers:#?}"));
        answers.push(line);
    }
    drop(stdin);
    let _ = server.wait();
    assert!(
        read.recv_timeout(Duration::from_millis(200)).is_err(),
        "nothing more is answered"
    );
    for id in [0, 11] {
        let prefix = format!(r#"{{"jsonrpc":"2.0","id":{id},"result":"#);
        assert!(
            answers.iter().any(|a| a.starts_with(&prefix)),
            "id {id} answered: {answers:#?}"
        );
    }
    for (line, id, says) in odd {
        let prefix = format!(r#"{{"jsonrpc":"2.0","id":{id},"error":{{"#);
        let answer = answers
            .iter()
            .find(|a| a.starts_with(&prefix) && a.contains(says))
            .unwrap_or_else(|| panic!("{line} not answered with id {id}: {answers:#?}"));
        assert!(answer.contains(r#""code":-32"#), "{answer}");
    }
}
