//! The official TypeScript SDK client and the Python `mcp` client against the npm servers, with
//! and without `toolschema proxy` in between: valid calls give the same tools and results,
//! invalid calls are answered with the core's messages, notifications arrive, and a rejected
//! `write_file` never creates its file.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{node, require, run, toolschema, WAIT};
use serde_json::{json, Value};
use std::path::Path;

#[derive(Clone, Copy)]
enum Client {
    TypeScript,
    Python,
}

impl Client {
    /// Run a scenario of the client's script against `server`; its JSON report.
    fn run(self, scenario: &[&str], server: &[String]) -> Value {
        let (program, script) = match self {
            Client::TypeScript => (node(), require("interop/ts-client.mjs")),
            Client::Python => (
                require(".venv/bin/python").display().to_string(),
                require("interop/py-client.py"),
            ),
        };
        let mut args = vec![script.display().to_string()];
        args.extend(scenario.iter().map(|s| s.to_string()));
        args.push("--".into());
        args.extend(server.iter().cloned());
        let (status, stdout, stderr) = run(&program, &args, WAIT * 4);
        assert!(status.success(), "{program} {args:?} failed:\n{stderr}");
        serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{e}: {stdout}\n{stderr}"))
    }

    /// What a tool error result looks like in the client's report.
    fn tool_error(self, text: &str) -> Value {
        match self {
            Client::TypeScript => {
                json!({"result": {"content": [{"type": "text", "text": text}], "isError": true}})
            }
            // The Python client's model fills in the result type.
            Client::Python => json!({"result": {
                "content": [{"type": "text", "text": text}],
                "isError": true,
                "resultType": "complete"
            }}),
        }
    }
}

fn everything() -> Vec<String> {
    vec![require("interop/node_modules/.bin/mcp-server-everything")
        .display()
        .to_string()]
}

fn filesystem(dir: &Path) -> Vec<String> {
    vec![
        require("interop/node_modules/.bin/mcp-server-filesystem")
            .display()
            .to_string(),
        dir.display().to_string(),
    ]
}

fn through_proxy(server: &[String]) -> Vec<String> {
    let mut command = vec![toolschema().to_string(), "proxy".into(), "--".into()];
    command.extend(server.iter().cloned());
    command
}

fn everything_through_the_proxy(client: Client) {
    let direct = client.run(&["everything"], &everything());
    let proxied = client.run(&["everything"], &through_proxy(&everything()));
    assert_eq!(proxied["tools"], direct["tools"]);
    assert_eq!(proxied["valid"], direct["valid"]);
    assert_eq!(proxied["longRunning"], direct["longRunning"]);
    assert!(proxied["valid"]["structured"]["result"]["structuredContent"].is_object());
    // Progress notifications arrive through the proxy, in order, before the result.
    let steps: Vec<f64> = proxied["progress"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["progress"].as_f64().unwrap())
        .collect();
    match client {
        Client::Python => {
            assert_eq!(steps, [1.0, 2.0, 3.0]);
            assert_eq!(proxied["progress"], direct["progress"]);
        }
        Client::TypeScript => {
            // The SDK drops a progress notification that arrives with its response (it runs
            // notification handlers a microtask late), so what reached the client is checked.
            assert_eq!(
                proxied["wire"],
                json!([{"progress": 1, "total": 3}, {"progress": 2, "total": 3}, {"progress": 3, "total": 3}, "result"])
            );
            assert_eq!(proxied["wire"], direct["wire"]);
            assert_eq!(steps[..2], [1.0, 2.0]);
        }
    }
    // So do logging notifications.
    assert!(proxied["logCount"].as_u64().unwrap() >= 1, "{proxied}");
    // Invalid calls are answered by the proxy with the core's messages; directly, the server's
    // own checks answer them differently.
    let expected = json!({
        "echoMissing": client.tool_error("missing required argument 'message'"),
        "sumTypes": client.tool_error("argument 'a' must be a number (got a string)"),
        "structuredEnum": client.tool_error(
            "argument 'location' must be one of the enum values: \"New York\", \"Chicago\", \"Los Angeles\""
        ),
    });
    assert_eq!(proxied["invalid"], expected);
    assert_ne!(direct["invalid"], expected);
}

fn filesystem_through_the_proxy(client: Client) {
    let dir = tempfile::tempdir().unwrap();
    // Canonical: the server reports paths as it resolves them.
    let root = dir.path().canonicalize().unwrap();
    let root_arg = root.display().to_string();
    let direct = client.run(&["filesystem", &root_arg], &filesystem(&root));
    std::fs::remove_file(root.join("notes.txt")).unwrap();
    let proxied = client.run(
        &["filesystem", &root_arg],
        &through_proxy(&filesystem(&root)),
    );
    assert_eq!(proxied["tools"], direct["tools"]);
    assert_eq!(proxied["valid"], direct["valid"]);
    assert_eq!(
        std::fs::read_to_string(root.join("notes.txt")).unwrap(),
        "hello\n"
    );
    assert_eq!(
        proxied["invalid"],
        json!({
            "writeNumber": client.tool_error("argument 'content' must be a string (got an integer)"),
            "writeMissing": client.tool_error("missing required argument 'content'"),
        })
    );
    assert!(
        !root.join("rejected.txt").exists(),
        "an invalid write_file created its file"
    );
}

#[test]
fn typescript_client_with_server_everything_through_the_proxy() {
    everything_through_the_proxy(Client::TypeScript);
}

#[test]
fn python_client_with_server_everything_through_the_proxy() {
    everything_through_the_proxy(Client::Python);
}

#[test]
fn typescript_client_with_server_filesystem_through_the_proxy() {
    filesystem_through_the_proxy(Client::TypeScript);
}

#[test]
fn python_client_with_server_filesystem_through_the_proxy() {
    filesystem_through_the_proxy(Client::Python);
}
