//! `toolschema lint` in the workflows around it: files that cannot be linted as results in every
//! format, `--write` on links and protected files, `--diff`, `--show-fixes`, `--statistics`,
//! `--exit-zero`, `--quiet`, `--color`, settings in `toolschema.toml`, rule names, shell
//! completions, and a live server linted in one step.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{require, toolschema, WAIT};
use serde_json::{json, Value};
use std::path::Path;
use std::process::{Command, Stdio};

struct Run {
    code: i32,
    stdout: String,
    stderr: String,
}

/// Run `toolschema ARGS` in `dir`, with NO_COLOR unset so colour follows the flags alone.
fn run_in(dir: &Path, args: &[&str]) -> Run {
    let (status, stdout, stderr) = {
        let child = Command::new(toolschema())
            .args(args)
            .current_dir(dir)
            .env_remove("NO_COLOR")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let output = child.wait_with_output().unwrap();
        (output.status, output.stdout, output.stderr)
    };
    Run {
        code: status.code().unwrap_or(-1),
        stdout: String::from_utf8(stdout).unwrap(),
        stderr: String::from_utf8(stderr).unwrap(),
    }
}

/// A folder holding `small.json` (findings of several rules), `broken.json` (not JSON) and a
/// clean catalog.
fn workspace() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(
        require("crates/toolschema-cli/tests/fixtures/lint/small.json"),
        dir.path().join("small.json"),
    )
    .unwrap();
    std::fs::write(
        dir.path().join("broken.json"),
        "{\"tools\": [\n  {\"name\": }\n]}",
    )
    .unwrap();
    std::fs::copy(
        require("crates/toolschema-cli/tests/fixtures/lint/clean.json"),
        dir.path().join("clean.json"),
    )
    .unwrap();
    dir
}

#[test]
fn a_file_that_cannot_be_linted_is_a_result_in_every_format() {
    let dir = workspace();
    let files = ["broken.json", "missing.json", "small.json"];
    let lint = |format: &str| {
        let mut args = vec!["lint", "--format", format];
        args.extend(files);
        run_in(dir.path(), &args)
    };

    let r = lint("text");
    assert_eq!(r.code, 2);
    assert!(
        r.stdout.starts_with(
            "broken.json:2:12: error: invalid JSON: expected a JSON value, found a closing bracket\n\
         missing.json: error: cannot read: No such file or directory (os error 2)\n"
        ),
        "{}",
        r.stdout
    );
    assert!(r.stdout.ends_with(
        "Found 7 problems in 3 tools in 1 file: 1 critical, 5 warnings, 1 info. 3 fixable with --fix, 1 more with --unsafe-fixes. 2 files could not be linted.\n"
    ), "{}", r.stdout);
    assert_eq!(r.stderr, "");

    let r = lint("github");
    assert_eq!(r.code, 2);
    let lines: Vec<&str> = r.stdout.lines().collect();
    assert_eq!(
        lines[..2],
        [
            "::error file=broken.json,line=2,col=12,title=toolschema::invalid JSON: expected a JSON value, found a closing bracket",
            "::error file=missing.json,title=toolschema::cannot read: No such file or directory (os error 2)",
        ]
    );
    assert!(lines
        .last()
        .unwrap()
        .ends_with("2 files could not be linted."));

    let r = lint("json");
    assert_eq!(r.code, 2);
    let document: Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(
        document["errors"],
        json!([
            {"file": "broken.json", "line": 2, "column": 12, "message": "invalid JSON: expected a JSON value, found a closing bracket"},
            {"file": "missing.json", "line": null, "column": null, "message": "cannot read: No such file or directory (os error 2)"}
        ])
    );
    assert_eq!(document["summary"]["errors"], 2);
    assert_eq!(document["summary"]["files"], 1);

    let r = lint("sarif");
    assert_eq!(r.code, 2);
    let sarif: Value = serde_json::from_str(&r.stdout).unwrap();
    let run = &sarif["runs"][0];
    let results = run["results"].as_array().unwrap();
    assert_eq!(
        results[0],
        json!({
            "ruleId": "input-error", "level": "error", "kind": "fail",
            "message": {"text": "invalid JSON: expected a JSON value, found a closing bracket"},
            "locations": [{"physicalLocation": {"artifactLocation": {"uri": "broken.json"},
                "region": {"startLine": 2, "startColumn": 12}}}]
        })
    );
    assert_eq!(results[1]["ruleId"], "input-error");
    assert_eq!(results.len(), 2 + 7);
    let invocation = &run["invocations"][0];
    assert_eq!(invocation["executionSuccessful"], false);
    assert_eq!(
        invocation["toolExecutionNotifications"][0]["message"]["text"],
        "invalid JSON: expected a JSON value, found a closing bracket"
    );
    // A run with nothing wrong says the tool ran well.
    let r = run_in(dir.path(), &["lint", "--format", "sarif", "clean.json"]);
    let sarif: Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(
        sarif["runs"][0]["invocations"][0]["executionSuccessful"],
        true
    );
}

#[cfg(unix)]
#[test]
fn write_follows_symbolic_links_keeps_hard_links_and_permissions_and_refuses_read_only_files() {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    let dir = workspace();
    let path = |name: &str| dir.path().join(name);
    std::fs::copy(path("small.json"), path("target.json")).unwrap();
    std::os::unix::fs::symlink("target.json", path("link.json")).unwrap();
    std::fs::copy(path("small.json"), path("shared.json")).unwrap();
    std::fs::hard_link(path("shared.json"), path("other-name.json")).unwrap();
    std::fs::set_permissions(path("shared.json"), std::fs::Permissions::from_mode(0o640)).unwrap();
    std::fs::copy(path("small.json"), path("locked.json")).unwrap();
    std::fs::set_permissions(path("locked.json"), std::fs::Permissions::from_mode(0o444)).unwrap();
    let expected = run_in(dir.path(), &["lint", "--fix", "small.json"]).stdout;
    assert!(expected.contains("\"additionalProperties\": false"));

    let r = run_in(
        dir.path(),
        &["lint", "--write", "link.json", "shared.json", "locked.json"],
    );
    assert_eq!(r.code, 2, "{}", r.stdout);
    // The link is still a link, and the file it points at is fixed.
    assert!(std::fs::symlink_metadata(path("link.json"))
        .unwrap()
        .file_type()
        .is_symlink());
    assert_eq!(
        std::fs::read_to_string(path("target.json")).unwrap(),
        expected
    );
    // Both names of the hard-linked file see the fix; it is still one file, with its mode.
    assert_eq!(
        std::fs::read_to_string(path("other-name.json")).unwrap(),
        expected
    );
    let shared = std::fs::metadata(path("shared.json")).unwrap();
    assert_eq!(shared.nlink(), 2);
    assert_eq!(
        shared.ino(),
        std::fs::metadata(path("other-name.json")).unwrap().ino()
    );
    assert_eq!(shared.mode() & 0o777, 0o640);
    // The read-only file is refused with a message, and left alone.
    assert!(r.stdout.contains(
        "locked.json: error: cannot write locked.json: the file is read-only; nothing was written\n"
    ), "{}", r.stdout);
    assert_eq!(
        std::fs::read_to_string(path("locked.json")).unwrap(),
        std::fs::read_to_string(path("small.json")).unwrap()
    );
    assert!(
        r.stdout.ends_with("1 file could not be linted.\n"),
        "{}",
        r.stdout
    );
    // A plain file keeps its permissions through the rename, and no temporary file is left.
    std::fs::set_permissions(path("clean.json"), std::fs::Permissions::from_mode(0o600)).unwrap();
    std::fs::copy(path("small.json"), path("plain.json")).unwrap();
    std::fs::set_permissions(path("plain.json"), std::fs::Permissions::from_mode(0o604)).unwrap();
    run_in(dir.path(), &["lint", "--write", "plain.json"]);
    assert_eq!(
        std::fs::read_to_string(path("plain.json")).unwrap(),
        expected
    );
    let mode = std::fs::metadata(path("plain.json")).unwrap().mode();
    assert_eq!(mode & 0o777, 0o604);
    let leftovers: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.starts_with('.'))
        .collect();
    assert_eq!(leftovers, Vec::<String>::new());
}

#[test]
fn diff_shows_the_fixes_and_changes_nothing() {
    let dir = workspace();
    let before = std::fs::read_to_string(dir.path().join("small.json")).unwrap();
    let r = run_in(dir.path(), &["lint", "--diff", "small.json", "clean.json"]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert_eq!(
        r.stdout,
        "--- a/small.json\n+++ b/small.json\n@@ -7,14 +7,15 @@\n         \"type\": \"object\",\n         \"properties\": {\n           \"q\": {\"type\": \"string\", \"description\": \"Words to find\"},\n-          \"limit\": {\"type\": \"integer\", \"format\": \"uint32\", \"description\": \"Most results\"}\n+          \"limit\": {\"type\": \"integer\", \"description\": \"Most results\"}\n         },\n-        \"required\": [\"q\"]\n+        \"required\": [\"q\"],\n+        \"additionalProperties\": false\n       }\n     },\n     {\n       \"name\": \"files.read\",\n-      \"inputSchema\": {\"type\": \"object\", \"properties\": {\"path\": {\"type\": \"string\", \"maxLength\": 4096}}}\n+      \"inputSchema\": {\"type\": \"object\", \"properties\": {\"path\": {\"type\": \"string\", \"maxLength\": 4096}}, \"additionalProperties\": false}\n     },\n     {\n       \"name\": \"search\",\n"
    );
    assert!(r.stderr.contains("Would fix 3 problems."), "{}", r.stderr);
    assert_eq!(
        std::fs::read_to_string(dir.path().join("small.json")).unwrap(),
        before
    );
    // Nothing to change: an empty diff, exit 0.
    let r = run_in(dir.path(), &["lint", "--diff", "clean.json"]);
    assert_eq!((r.code, r.stdout.as_str()), (0, ""));
}

#[test]
fn show_fixes_names_each_fix() {
    let dir = workspace();
    let r = run_in(dir.path(), &["lint", "--show-fixes", "small.json"]);
    assert!(
        r.stdout
            .contains("(tool 'search') [fix (safe): add \"additionalProperties\": false]\n"),
        "{}",
        r.stdout
    );
    assert!(r
        .stdout
        .contains("[fix (unsafe): require every declared property]\n"));
    let r = run_in(dir.path(), &["lint", "--show-fixes", "--fix", "small.json"]);
    assert!(
        r.stderr.ends_with(
            "Fixes applied:\n  small.json: SCH-002 add \"additionalProperties\": false (tool 'search')\n  small.json: SCH-011 remove \"format\": \"uint32\" (tool 'search')\n  small.json: SCH-002 add \"additionalProperties\": false (tool 'files.read')\n"
        ),
        "{}",
        r.stderr
    );
}

#[test]
fn statistics_count_findings_per_rule() {
    let dir = workspace();
    let r = run_in(dir.path(), &["lint", "--statistics", "small.json"]);
    assert_eq!(r.code, 1);
    assert_eq!(
        r.stdout,
        "     2  SCH-002   [*]  open-object\n     1  DESC-001       missing-description\n     1  SCH-001        missing-required\n     1  SCH-011   [*]  nonstandard-format\n     1  TOOL-002       name-clients-reject\n     1  TOOL-003       duplicate-name\nFound 7 problems in 3 tools in 1 file: 1 critical, 5 warnings, 1 info. 3 fixable with --fix, 1 more with --unsafe-fixes.\n"
    );
    let r = run_in(
        dir.path(),
        &[
            "lint",
            "--statistics",
            "--format",
            "json",
            "--select",
            "SCH",
            "small.json",
        ],
    );
    let document: Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(
        document["statistics"],
        json!([
            {"code": "SCH-002", "name": "open-object", "count": 2, "fixable": 2},
            {"code": "SCH-001", "name": "missing-required", "count": 1, "fixable": 0},
            {"code": "SCH-004", "name": "unbounded-size", "count": 1, "fixable": 0},
            {"code": "SCH-011", "name": "nonstandard-format", "count": 1, "fixable": 1}
        ])
    );
    let r = run_in(
        dir.path(),
        &["lint", "--statistics", "--format", "sarif", "small.json"],
    );
    assert_eq!(r.code, 2);
    assert!(
        r.stderr.contains("--statistics prints counts"),
        "{}",
        r.stderr
    );
}

#[test]
fn exit_zero_and_quiet() {
    let dir = workspace();
    let r = run_in(dir.path(), &["lint", "--exit-zero", "small.json"]);
    assert_eq!(r.code, 0);
    assert!(r.stdout.contains("SCH-002"));
    // Bad input still fails.
    let r = run_in(dir.path(), &["lint", "--exit-zero", "broken.json"]);
    assert_eq!(r.code, 2);
    // Quiet: findings only, no summary, no notes.
    std::fs::write(dir.path().join("package.json"), "{\"name\": \"x\"}").unwrap();
    std::fs::remove_file(dir.path().join("broken.json")).unwrap();
    let r = run_in(dir.path(), &["lint", "-q", "."]);
    assert_eq!(r.code, 1);
    assert_eq!(r.stderr, "");
    assert!(
        r.stdout.starts_with("./small.json:6:7: SCH-002 warning"),
        "{}",
        r.stdout
    );
    assert!(!r.stdout.contains("Found"), "{}", r.stdout);
    let r = run_in(dir.path(), &["lint", "."]);
    assert_eq!(
        r.stderr,
        "note: skipped ./package.json: not a tool catalog\n"
    );
}

#[test]
fn color_on_request_and_never_into_a_pipe() {
    let dir = workspace();
    let r = run_in(dir.path(), &["lint", "--color", "always", "small.json"]);
    assert!(r.stdout.starts_with(
        "\u{1b}[1msmall.json:6:7\u{1b}[0m: \u{1b}[1mSCH-002\u{1b}[0m \u{1b}[1;33mwarning\u{1b}[0m: object schema is open"
    ), "{:?}", r.stdout);
    assert!(r.stdout.contains("\u{1b}[1;31mcritical\u{1b}[0m"));
    // auto: standard output is a pipe here, so no colour; never: none either.
    for choice in ["auto", "never"] {
        let r = run_in(dir.path(), &["lint", "--color", choice, "small.json"]);
        assert!(!r.stdout.contains('\u{1b}'), "{choice}");
    }
    // Colour is for text: JSON stays JSON.
    let r = run_in(
        dir.path(),
        &[
            "lint",
            "--color",
            "always",
            "--format",
            "json",
            "small.json",
        ],
    );
    assert!(serde_json::from_str::<Value>(&r.stdout).is_ok());
}

#[test]
fn settings_give_severities_and_per_tool_ignores_and_selectors_take_names() {
    let dir = workspace();
    std::fs::write(
        dir.path().join("toolschema.toml"),
        "[lint]\nselect = [\"default\", \"pedantic\"]\n\n[lint.severity]\nSCH = \"info\"\nopen-object = \"critical\"\n\n[lint.per-tool-ignores]\n\"files.*\" = [\"SCH-001\", \"name-clients-reject\"]\n",
    )
    .unwrap();
    let r = run_in(dir.path(), &["lint", "--format", "json", "small.json"]);
    let document: Value = serde_json::from_str(&r.stdout).unwrap();
    let found: Vec<(String, String, String)> = document["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            (
                d["code"].as_str().unwrap().into(),
                d["severity"].as_str().unwrap().into(),
                d["tool"].as_str().unwrap().into(),
            )
        })
        .collect();
    let expected: Vec<(String, String, String)> = [
        ("SCH-002", "critical", "search"),
        ("SCH-004", "info", "search"),
        ("SCH-011", "info", "search"),
        ("DESC-001", "info", "files.read"),
        ("SCH-002", "critical", "files.read"),
        ("DESC-003", "info", "files.read"),
        ("TOOL-003", "critical", "search"),
    ]
    .iter()
    .map(|(a, b, c)| (a.to_string(), b.to_string(), c.to_string()))
    .collect();
    assert_eq!(found, expected);
    // Rule names select and ignore, on the command line too.
    let r = run_in(
        dir.path(),
        &[
            "lint",
            "--select",
            "open-object,nonstandard-format",
            "--ignore",
            "open-object",
            "small.json",
        ],
    );
    assert!(
        r.stdout.contains("SCH-011") && !r.stdout.contains("SCH-002"),
        "{}",
        r.stdout
    );
    // A misspelled name is bad input, with a suggestion.
    let r = run_in(
        dir.path(),
        &["lint", "--select", "open-objet", "small.json"],
    );
    assert_eq!(r.code, 2);
    assert_eq!(
        r.stderr,
        "error: command line: unknown rule code or prefix 'open-objet' (did you mean 'open-object'?)\n"
    );
    std::fs::write(
        dir.path().join("toolschema.toml"),
        "[lint.per-tool-ignores]\n\"*\" = [\"SCH-999\"]\n",
    )
    .unwrap();
    let r = run_in(dir.path(), &["lint", "small.json"]);
    assert_eq!(r.code, 2);
    assert!(
        r.stderr
            .contains("toolschema.toml: unknown rule code or prefix 'SCH-999'"),
        "{}",
        r.stderr
    );
}

#[test]
fn completions_for_each_shell() {
    let dir = workspace();
    for (shell, marker) in [
        ("bash", "_toolschema()"),
        ("zsh", "#compdef toolschema"),
        ("fish", "complete -c toolschema "),
        ("elvish", "edit:completion:arg-completer[toolschema]"),
        ("powershell", "Register-ArgumentCompleter"),
    ] {
        let r = run_in(dir.path(), &["completions", shell]);
        assert_eq!(r.code, 0, "{shell}: {}", r.stderr);
        assert!(r.stdout.contains(marker), "{shell}");
        assert!(r.stdout.contains("show-fixes"), "{shell}");
    }
    // Options with a fixed set of values complete to them.
    let bash = run_in(dir.path(), &["completions", "bash"]).stdout;
    assert!(
        bash.contains(r#"compgen -W "2020-12 draft-07""#),
        "--dialect"
    );
    let r = run_in(dir.path(), &["completions", "tcsh"]);
    assert_eq!(r.code, 2);
}

#[test]
fn a_live_server_is_linted_in_one_step() {
    let dir = tempfile::tempdir().unwrap();
    let server = require("interop/node_modules/.bin/mcp-server-everything")
        .display()
        .to_string();
    // Without -o: the snapshot is linted in memory, and said so.
    let r = run_in(dir.path(), &["lint", "--timeout", "60", "--", &server]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(
        r.stderr.starts_with(&format!(
            "toolschema: listed 13 tools (1 tools/list page) from '{server}'; -o FILE keeps"
        )),
        "{}",
        r.stderr
    );
    // The findings are named by the command that listed them.
    assert!(r.stdout.starts_with(&format!("{server}:")), "{}", r.stdout);
    // In SARIF too: the artifact's URI is the command, not a placeholder.
    let sarif = run_in(
        dir.path(),
        &[
            "lint",
            "--format",
            "sarif",
            "--timeout",
            "60",
            "--",
            &server,
        ],
    );
    assert_eq!(sarif.code, 1, "{}", sarif.stderr);
    let sarif: serde_json::Value = serde_json::from_str(&sarif.stdout).unwrap();
    let uris: std::collections::BTreeSet<&str> = sarif["runs"][0]["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
                .as_str()
                .unwrap()
        })
        .collect();
    assert_eq!(uris, std::collections::BTreeSet::from([server.as_str()]));
    assert!(r.stdout.ends_with("Found 13 problems in 13 tools in 1 file: 0 critical, 13 warnings, 0 info. 13 fixable with --fix.\n"), "{}", r.stdout);
    // With -o: the snapshot is kept, and the findings point into it.
    let r = run_in(
        dir.path(),
        &[
            "lint",
            "-o",
            "tools.json",
            "--format",
            "json",
            "--timeout",
            "60",
            "--",
            &server,
        ],
    );
    assert_eq!(r.code, 1, "{}", r.stderr);
    let kept = std::fs::read_to_string(dir.path().join("tools.json")).unwrap();
    let document: Value = serde_json::from_str(&r.stdout).unwrap();
    let first = &document["diagnostics"][0];
    assert_eq!(first["file"], "tools.json");
    let line = kept
        .lines()
        .nth(first["line"].as_u64().unwrap() as usize - 1)
        .unwrap();
    assert_eq!(line.trim_start(), "\"inputSchema\": {");
    // And it can be fixed where it was kept.
    let r = run_in(dir.path(), &["lint", "--write", "tools.json"]);
    assert_eq!(r.code, 0, "{}", r.stdout);
    // -o needs a server; a server that cannot start is bad input.
    let r = run_in(dir.path(), &["lint", "-o", "x.json", "tools.json"]);
    assert_eq!(r.code, 2);
    let r = run_in(dir.path(), &["lint", "--", "no-such-mcp-server"]);
    assert_eq!(r.code, 2);
    assert!(
        r.stderr
            .contains("cannot start the MCP server 'no-such-mcp-server'"),
        "{}",
        r.stderr
    );
    let _ = WAIT;
}

/// The bundled example's lightweight tool is linted through its translation: the same finding,
/// at the text as written, before the fix translates it and after.
#[test]
fn a_lightweight_tool_is_linted_as_it_goes_on_the_wire() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(
        require("examples/catalog.json"),
        dir.path().join("catalog.json"),
    )
    .unwrap();
    let findings = |dir: &Path| {
        let r = run_in(
            dir,
            &[
                "lint",
                "--select",
                "ALL",
                "--format",
                "json",
                "catalog.json",
            ],
        );
        let document: Value = serde_json::from_str(&r.stdout).unwrap();
        document["diagnostics"]
            .as_array()
            .unwrap()
            .iter()
            .map(|d| {
                format!(
                    "{} {}:{} {}",
                    d["code"].as_str().unwrap(),
                    d["line"],
                    d["column"],
                    d["pointer"].as_str().unwrap()
                )
            })
            .collect::<Vec<_>>()
    };
    assert_eq!(
        findings(dir.path()),
        [
            "SCH-013 43:7 /tools/1/inputSchema",
            "SCH-004 46:9 /tools/1/inputSchema/labels"
        ]
    );
    // The default run passes before the fix and after it.
    assert_eq!(run_in(dir.path(), &["lint", "catalog.json"]).code, 0);
    let r = run_in(dir.path(), &["lint", "--write", "catalog.json"]);
    assert_eq!(r.code, 0, "{}", r.stdout);
    assert_eq!(
        findings(dir.path()),
        ["SCH-004 60:11 /tools/1/inputSchema/properties/labels"]
    );
}
