//! Three `toolschema proxy --listen --upstream` replicas behind HAProxy (Debian's `haproxy`,
//! started by interop/replica-failover.mjs with a generated config that checks each replica's
//! `/readyz`) in front of one upstream that judges every call it receives. 2026-07-28 clients
//! and TypeScript SDK sessions call through HAProxy, every fifth call invalid on purpose, and
//! one replica is killed (SIGKILL) during the run. The short version of
//! scripts/bench-replicas.sh. The HAProxy config the book shows is the one the run used.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{debian_program, node, require, root, run, toolschema};
use serde_json::Value;
use std::time::Duration;

/// HAProxy's check interval in the run, and the margin after it within which calls must
/// succeed again.
const CHECK_MS: u64 = 500;
const MARGIN_MS: u64 = 1500;

#[test]
fn a_replica_killed_under_load_loses_no_call_its_client_is_not_told_of() {
    // Fails saying how to install HAProxy when it is missing (the script would too).
    debian_program("haproxy", "haproxy");
    node();
    require("interop/replica-failover.mjs");
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("haproxy.cfg");
    // The short run of the benchmark script, with the binary under test.
    let script = require("scripts/bench-replicas.sh");
    let args: Vec<String> = [
        format!("TOOLSCHEMA={}", toolschema()),
        script.display().to_string(),
        "--smoke".to_string(),
        "--check-ms".into(),
        CHECK_MS.to_string(),
        "--settle-ms".into(),
        (CHECK_MS + MARGIN_MS).to_string(),
        "--timeout-ms".into(),
        "10000".into(),
        "--config-out".into(),
        config.display().to_string(),
    ]
    .into();
    let (status, stdout, stderr) = run("env", &args, Duration::from_secs(120));
    assert!(status.success(), "{stderr}");
    let report: Value = serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{e}: {stdout}"));
    let count = |key: &str| {
        report[key]
            .as_u64()
            .unwrap_or_else(|| panic!("{key}: {report}"))
    };

    // Every call ended: served with the right answer, or its client was told.
    assert_eq!(count("wrong"), 0, "silent wrong answers: {report}");
    assert_eq!(
        count("calls"),
        count("served") + count("failed"),
        "{report}"
    );
    assert_eq!(count("timeouts"), 0, "calls with no answer: {report}");
    assert_eq!(count("failedBeforeKill"), 0, "{report}");
    for seen in report["seen"].as_object().unwrap().keys() {
        assert!(
            !seen.contains("no answer in the response"),
            "a response without the call's answer: {report}"
        );
    }
    // Calls succeed again once HAProxy's check took the dead replica out.
    assert_eq!(count("failedAfterSettle"), 0, "{report}");
    assert!(count("servedAfterSettle") > 0, "{report}");
    // Invalid calls were made and refused by the proxy: none reached the upstream.
    assert!(count("servedInvalid") > 0, "{report}");
    let upstream = &report["upstream"];
    assert_eq!(
        upstream["invalid"], 0,
        "invalid calls reached the upstream: {report}"
    );
    assert!(upstream["calls"]["echo"].as_u64().unwrap() > 0, "{report}");
    // Sessions taken over by another replica carried on: the upstream still had them.
    assert_eq!(upstream["unknownSession"], 0, "{report}");
    // Every replica got requests; the killed one is out, the others in.
    let haproxy = &report["haproxy"];
    for replica in ["replica1", "replica2", "replica3"] {
        assert!(
            haproxy["requests"][replica].as_u64().unwrap() > 0,
            "{replica} got no request: {report}"
        );
    }
    assert_eq!(haproxy["status"]["replica2"], "DOWN", "{report}");
    assert_eq!(haproxy["status"]["replica1"], "UP", "{report}");
    assert_eq!(haproxy["status"]["replica3"], "UP", "{report}");
    assert_eq!(report["replicasAlive"], 2, "{report}");
    the_book_shows_the_config_the_run_used(&std::fs::read_to_string(&config).unwrap());
}

/// Every line of the HAProxy block of the scale-out page is a line of the config the run
/// used, but for the addresses (`bind`, `server`), which the run picks free.
fn the_book_shows_the_config_the_run_used(config: &str) {
    let page = std::fs::read_to_string(root().join("docs/src/proxy/scale-out.md")).unwrap();
    let block = page
        .split("```haproxy\n")
        .nth(1)
        .and_then(|rest| rest.split("```").next())
        .expect("docs/src/proxy/scale-out.md shows an HAProxy config");
    let used: Vec<&str> = config.lines().map(str::trim_end).collect();
    let mut checked = 0;
    for line in block.lines() {
        let word = line.split_whitespace().next().unwrap_or("");
        if line.trim().is_empty() || word == "server" || word == "bind" {
            continue;
        }
        assert!(
            used.contains(&line.trim_end()),
            "the book shows `{line}`, which the run's config has not:\n{config}"
        );
        checked += 1;
    }
    assert!(checked >= 10, "{block}");
}
