//! `toolschema lint` on what real MCP servers send: the npm `server-everything` and
//! `server-filesystem` are started, their tools captured with `toolschema snapshot`, and the
//! result is linted and fixed.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use assert_cmd::Command;
use common::{require, run, toolschema, WAIT};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

/// The tools of an npm server, as `toolschema snapshot` writes them.
fn snapshot(server: &str, args: &[&str]) -> String {
    let mut all = vec![
        "snapshot".to_string(),
        "--".to_string(),
        require(&format!("interop/node_modules/.bin/{server}"))
            .display()
            .to_string(),
    ];
    all.extend(args.iter().map(|a| a.to_string()));
    let (status, stdout, stderr) = run(toolschema(), &all, WAIT);
    assert!(status.success(), "snapshot of {server} failed: {stderr}");
    stdout
}

fn lint(dir: &Path, args: &[&str]) -> (i32, String, String) {
    let output = Command::cargo_bin("toolschema")
        .unwrap()
        .current_dir(dir)
        .arg("lint")
        .args(args)
        .timeout(Duration::from_secs(60))
        .output()
        .unwrap();
    (
        output.status.code().unwrap_or(-1),
        String::from_utf8(output.stdout).unwrap(),
        String::from_utf8(output.stderr).unwrap(),
    )
}

fn counts(document: &Value) -> BTreeMap<String, usize> {
    let mut counts = BTreeMap::new();
    for d in document["diagnostics"].as_array().unwrap() {
        *counts
            .entry(d["code"].as_str().unwrap().to_string())
            .or_insert(0) += 1;
    }
    counts
}

#[test]
fn live_catalogs_lint_and_fix() {
    let work = tempfile::tempdir().unwrap();
    let allowed = tempfile::tempdir().unwrap();
    let everything = snapshot("mcp-server-everything", &[]);
    let filesystem = snapshot("mcp-server-filesystem", &[allowed.path().to_str().unwrap()]);
    std::fs::write(work.path().join("everything.json"), &everything).unwrap();
    std::fs::write(work.path().join("filesystem.json"), &filesystem).unwrap();

    let (code, stdout, stderr) = lint(
        work.path(),
        &["everything.json", "filesystem.json", "--format", "json"],
    );
    assert_eq!(code, 1, "{stderr}");
    let document: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(
        document["summary"],
        serde_json::json!({"files": 2, "tools": 27, "critical": 0, "warning": 28, "info": 0, "errors": 0})
    );
    // The default rules: only open objects, each one right (see the precision table).
    let expected: BTreeMap<String, usize> = [("SCH-002", 28)]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect();
    assert_eq!(counts(&document), expected);

    // Every open schema the servers send is closed by the safe fixes, and nothing else changes:
    // the fixed catalogs hold the same tools, in the same order, with the same keys first.
    let (code, _, stderr) = lint(
        work.path(),
        &["everything.json", "filesystem.json", "--write"],
    );
    assert_eq!(code, 0, "{stderr}");
    let (_, stdout, _) = lint(
        work.path(),
        &["everything.json", "filesystem.json", "--format", "json"],
    );
    let after: Value = serde_json::from_str(&stdout).unwrap();
    assert!(!counts(&after).contains_key("SCH-002"), "{stdout}");
    for (name, original) in [
        ("everything.json", &everything),
        ("filesystem.json", &filesystem),
    ] {
        let before: Value = serde_json::from_str(original).unwrap();
        let fixed: Value =
            serde_json::from_str(&std::fs::read_to_string(work.path().join(name)).unwrap())
                .unwrap();
        let tools = |v: &Value| v["tools"].as_array().unwrap().clone();
        assert_eq!(tools(&before).len(), tools(&fixed).len());
        for (b, f) in tools(&before).iter().zip(tools(&fixed).iter()) {
            // Undo the fix: what remains must be the tool exactly as the server sent it.
            let mut f = f.clone();
            strip_added_closing(&mut f, b);
            assert_eq!(
                serde_json::to_string(b).unwrap(),
                serde_json::to_string(&f).unwrap()
            );
        }
    }
}

/// Remove `"additionalProperties": false` members that `fixed` has and `original` has not.
fn strip_added_closing(fixed: &mut Value, original: &Value) {
    match (fixed, original) {
        (Value::Object(f), Value::Object(o)) => {
            if !o.contains_key("additionalProperties")
                && f.get("additionalProperties") == Some(&Value::Bool(false))
            {
                f.shift_remove("additionalProperties");
            }
            for (key, value) in f.iter_mut() {
                if let Some(counterpart) = o.get(key) {
                    strip_added_closing(value, counterpart);
                }
            }
        }
        (Value::Array(f), Value::Array(o)) => {
            for (value, counterpart) in f.iter_mut().zip(o) {
                strip_added_closing(value, counterpart);
            }
        }
        _ => {}
    }
}
