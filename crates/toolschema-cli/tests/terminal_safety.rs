//! Names and texts from an untrusted catalog never steer the terminal the reports are printed to
//! nor hide from the person reading them: every command, in every format, on stdout and stderr,
//! writes escape, control, bidirectional and invisible characters as escapes, and JSON output
//! still reads back as the same strings.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::toolschema_in;
use serde_json::{json, Value};
use toolschema::text::{hidden_kind, steers_terminal};

/// A tool name that would retitle the terminal, turn it red, print reversed, fake a line break
/// where viewers break lines, and end in characters no reader sees.
const NAME: &str = "x\u{1B}]0;pwned\u{7}\u{1B}[31m\u{9B}2J\u{202E}eman\u{2028}\u{200B}\u{E0041}";

fn catalog(name: &str, description: &str) -> Value {
    json!({"tools": [{
        "name": name,
        "description": description,
        "inputSchema": {
            "type": "object",
            "properties": {
                "k\u{1B}[2K\u{202E}": {"type": "string", "enum": ["a\u{9B}b"]},
                "hidden\u{FEFF}": {"type": "string", "description": "a\u{200B}b\u{E0042}"},
                "n": {"type": "integer"},
                // A format no dialect defines: its safe fix's title quotes it.
                "f": {"type": "string", "format": "x\u{1B}]0;fix\u{7}"}
            },
            "required": ["r\u{202E}\u{1B}7"],
            "additionalProperties": false
        }
    }]})
}

/// What steers a terminal or cannot be seen in `text` (line feeds and tabs aside).
fn steering(text: &str) -> Vec<char> {
    text.chars()
        .filter(|&c| (steers_terminal(c) || hidden_kind(c).is_some()) && c != '\n' && c != '\t')
        .collect()
}

#[test]
fn no_command_prints_what_steers_the_terminal_and_json_keeps_every_string() {
    let dir = tempfile::tempdir().unwrap();
    // Raw characters (not JSON escapes) in the file: they reach source snippets too.
    let old = catalog(NAME, "Reads a file.\u{1B}[8m hidden");
    let new = catalog(NAME, "Reads a file. \u{202E}now");
    // A name tools may have, for the commands that refuse a catalog with a name that breaks the
    // MCP rules, with the same hostile schema.
    let named = catalog("read", "Reads a file.\u{1B}[8m hidden");
    for (file, catalog) in [("old.json", old), ("new.json", new), ("named.json", named)] {
        std::fs::write(
            dir.path().join(file),
            serde_json::to_string(&catalog).unwrap(),
        )
        .unwrap();
    }
    // A broken file: its error quotes the duplicate key. And a file whose name is hostile.
    std::fs::write(
        dir.path().join("dupes.json"),
        r#"{"tools": [{"\u001b]0;pwn\u0007": 1, "\u001b]0;pwn\u0007": 2}]}"#,
    )
    .unwrap();
    let hostile_file = "x\u{1B}[2Jname.json";
    std::fs::copy(dir.path().join("named.json"), dir.path().join(hostile_file)).unwrap();
    let args = r#"{"k\u001b[2K": 1, "n": "2"}"#;
    let runs: Vec<Vec<&str>> = vec![
        vec!["lint", "old.json"],
        vec!["lint", "old.json", "--format", "github"],
        vec!["lint", "old.json", "--format", "json"],
        vec!["lint", "old.json", "--format", "sarif"],
        vec!["lint", "old.json", "--diff", "--select", "ALL"],
        vec![
            "lint",
            "old.json",
            "--fix",
            "--show-fixes",
            "--select",
            "ALL",
        ],
        vec!["lint", "named.json", "--show-fixes", "--select", "ALL"],
        vec!["lint", "dupes.json"],
        vec!["lint", "dupes.json", "--format", "github"],
        vec!["lint", hostile_file, "--format", "github"],
        vec!["lint", hostile_file, "--diff", "--select", "ALL"],
        vec!["lint", "missing\u{1B}[2J.json"],
        vec!["validate", "old.json", "--tool", NAME, "--args", "{}"],
        vec!["validate", "named.json", "--tool", "read", "--args", args],
        vec![
            "validate",
            "named.json",
            "--tool",
            "read",
            "--args",
            args,
            "--format",
            "json",
        ],
        vec!["validate", "named.json", "--tool", "rea", "--args", "{}"],
        vec!["diff", "old.json", "new.json"],
        vec!["diff", "old.json", "new.json", "--format", "markdown"],
        vec!["diff", "old.json", "new.json", "--format", "json"],
        vec!["adapt", "old.json", "--to", "openai-strict"],
        vec!["adapt", "named.json", "--to", "anthropic"],
        vec![
            "adapt",
            "named.json",
            "--to",
            "gemini",
            "--restore",
            "read",
            "--args",
            args,
        ],
    ];
    for run in &runs {
        let out = toolschema_in(dir.path(), run, None);
        let shown = format!("{}{}", out.stdout, out.stderr);
        // Each run has something to say about the hostile names.
        assert!(!shown.is_empty(), "{run:?} said nothing");
        // A fixed catalog and a diff of fixes are the file's own text; everything else is
        // escaped (the file names in a diff's headers too).
        if run.contains(&"--diff") {
            let headers: String = out
                .stdout
                .lines()
                .filter(|l| l.starts_with("---") || l.starts_with("+++"))
                .collect();
            assert_eq!(
                steering(&headers),
                Vec::<char>::new(),
                "{run:?}:\n{}",
                out.stdout
            );
        } else if !run.contains(&"--fix") {
            assert_eq!(
                steering(&out.stdout),
                Vec::<char>::new(),
                "{run:?} stdout:\n{}",
                out.stdout
            );
        }
        assert_eq!(
            steering(&out.stderr),
            Vec::<char>::new(),
            "{run:?} stderr:\n{}",
            out.stderr
        );
        let json_out = run.contains(&"json") || run.contains(&"sarif") || run[0] == "adapt";
        if json_out && !out.stdout.is_empty() {
            let read: Value = serde_json::from_str(&out.stdout)
                .unwrap_or_else(|e| panic!("{run:?}: not JSON ({e}):\n{}", out.stdout));
            // The name reads back exactly, wherever the output holds it.
            let name = if run.contains(&"named.json") {
                "k\u{1B}[2K\u{202E}"
            } else {
                NAME
            };
            assert!(
                find_string(&read, name),
                "{run:?} lost {name:?}:\n{}",
                out.stdout
            );
        }
    }
}

/// Whether `value` holds the string `wanted` anywhere, or a string that contains it.
fn find_string(value: &Value, wanted: &str) -> bool {
    match value {
        Value::String(s) => s.contains(wanted),
        Value::Array(items) => items.iter().any(|v| find_string(v, wanted)),
        Value::Object(map) => map
            .iter()
            .any(|(k, v)| k.contains(wanted) || find_string(v, wanted)),
        _ => false,
    }
}
