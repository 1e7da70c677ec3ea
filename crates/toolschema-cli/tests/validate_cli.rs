//! `toolschema validate` as a user runs it: a process, real files, exact output and exit codes.

#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "../../toolschema/tests/support/mod.rs"]
mod support;

use assert_cmd::Command;
use std::path::{Path, PathBuf};

fn toolschema() -> Command {
    Command::cargo_bin("toolschema").unwrap()
}

fn example_catalog() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/catalog.json")
}

fn real_catalog(name: &str) -> PathBuf {
    support::real_catalog_path(name)
}

struct Run {
    code: i32,
    stdout: String,
    stderr: String,
}

fn run(cmd: &mut Command) -> Run {
    let output = cmd
        .timeout(std::time::Duration::from_secs(60))
        .output()
        .unwrap();
    Run {
        code: output.status.code().unwrap_or(-1),
        stdout: String::from_utf8(output.stdout).unwrap(),
        stderr: String::from_utf8(output.stderr).unwrap(),
    }
}

fn validate(args: &[&str]) -> Run {
    run(toolschema().arg("validate").args(args))
}

#[test]
fn valid_arguments_exit_0() {
    let catalog = example_catalog();
    let r = validate(&[
        catalog.to_str().unwrap(),
        "--tool",
        "search_docs",
        "--args",
        r#"{"query": "install"}"#,
    ]);
    assert_eq!(
        (r.code, r.stdout.as_str(), r.stderr.as_str()),
        (0, "valid\n", "")
    );
}

#[test]
fn invalid_arguments_exit_1_with_one_message_per_line() {
    let catalog = example_catalog();
    let r = validate(&[
        catalog.to_str().unwrap(),
        "--tool",
        "search_docs",
        "--args",
        r#"{"query": "x", "limt": 5, "sections": ["guides", "guides", "api"]}"#,
    ]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert_eq!(
        r.stdout,
        "argument 'query' string length must be >= 3 (got 1)\n\
         argument 'sections' must not contain duplicate items (items 0 and 1 are equal)\n\
         argument 'sections[2]' must be one of the enum values: \"guides\", \"reference\", \"changelog\"\n\
         unexpected argument 'limt' (did you mean 'limit'?)\n"
    );
    assert_eq!(r.stderr, "");
}

#[test]
fn json_format_for_a_single_call() {
    let catalog = example_catalog();
    let r = validate(&[
        catalog.to_str().unwrap(),
        "--tool",
        "create_ticket",
        "--args",
        r#"{"title": "Printer", "labels": ["ok", 7]}"#,
        "--format",
        "json",
    ]);
    assert_eq!(r.code, 1);
    assert_eq!(
        r.stdout,
        "{\"valid\":false,\"errors\":[{\"path\":\"/labels/1\",\"message\":\"argument 'labels[1]' must be a string (got an integer)\"}]}\n"
    );
    let ok = validate(&[
        catalog.to_str().unwrap(),
        "--tool",
        "create_ticket",
        "--args",
        r#"{"title": "Printer jam"}"#,
        "--format",
        "json",
    ]);
    assert_eq!(
        (ok.code, ok.stdout.as_str()),
        (0, "{\"valid\":true,\"errors\":[]}\n")
    );
}

#[test]
fn arguments_from_a_file_and_catalog_from_stdin() {
    let dir = tempfile::tempdir().unwrap();
    let args = dir.path().join("args.json");
    std::fs::write(&args, r#"{"query": "how to install", "limit": 0}"#).unwrap();
    let catalog = std::fs::read_to_string(example_catalog()).unwrap();
    let r = run(toolschema()
        .args(["validate", "-", "--tool", "search_docs", "--args"])
        .arg(format!("@{}", args.display()))
        .write_stdin(catalog));
    assert_eq!(
        (r.code, r.stdout.as_str()),
        (1, "argument 'limit' value must be >= 1 (got 0)\n")
    );
}

#[test]
fn unknown_tool_exit_2_with_a_suggestion() {
    let catalog = example_catalog();
    let r = validate(&[
        catalog.to_str().unwrap(),
        "--tool",
        "search_doc",
        "--args",
        "{}",
    ]);
    assert_eq!(r.code, 2);
    assert_eq!(r.stdout, "");
    assert!(
        r.stderr
            .ends_with("catalog.json: unknown tool 'search_doc' (did you mean 'search_docs'?)\n"),
        "{}",
        r.stderr
    );
}

#[test]
fn malformed_catalog_exit_2_with_line_and_column() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("broken.json");
    std::fs::write(
        &path,
        "{\n  \"tools\": [\n    {\"name\": \"a\" \"inputSchema\": {}}\n  ]\n}\n",
    )
    .unwrap();
    let r = validate(&[path.to_str().unwrap(), "--tool", "a", "--args", "{}"]);
    assert_eq!(r.code, 2);
    assert_eq!(
        r.stderr,
        format!(
            "error: {}:3:18: invalid JSON: expected ',' or '}}' after an object member\n",
            path.display()
        )
    );
}

/// A real server's catalog can hold one odd tool: the others are still checked, with a warning
/// naming the odd one; asking for the odd one is bad input.
#[test]
fn a_bad_tool_elsewhere_in_the_catalog_does_not_stop_validation() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("mixed.json");
    std::fs::write(
        &path,
        r#"[{"name": "find files", "inputSchema": {}},
 {"name": "count", "inputSchema": {"type": "object", "properties": {"n": {"type": "integer"}}}}]"#,
    )
    .unwrap();
    let catalog = path.to_str().unwrap();
    let bad_tool = format!(
        "{catalog}:1:3: tool 'find files' (tools[0]): name contains invalid characters: ' '"
    );
    let warning =
        format!("warning: {catalog}: left out 1 tool that cannot be read:\n  {bad_tool}\n");

    let r = validate(&[catalog, "--tool", "count", "--args", r#"{"n": 2}"#]);
    assert_eq!((r.code, r.stdout.as_str()), (0, "valid\n"));
    assert_eq!(r.stderr, warning);

    let r = validate(&[catalog, "--tool", "count", "--args", r#"{"n": "2"}"#]);
    assert_eq!(r.code, 1);
    assert_eq!(r.stderr, warning);

    let r = validate(&[catalog, "--tool", "find files", "--args", "{}"]);
    assert_eq!(r.code, 2);
    assert_eq!(r.stderr, format!("error: {bad_tool}\n"));

    // --calls: each line is judged against its own tool.
    let calls = dir.path().join("calls.jsonl");
    std::fs::write(
        &calls,
        "{\"name\": \"count\", \"arguments\": {\"n\": 1}}\n{\"name\": \"find files\", \"arguments\": {}}\n",
    )
    .unwrap();
    let r = validate(&[catalog, "--calls", calls.to_str().unwrap()]);
    assert_eq!(r.code, 2);
    assert_eq!(
        r.stdout,
        format!(
            "{{\"line\":1,\"tool\":\"count\",\"valid\":true,\"errors\":[]}}\n{{\"line\":2,\"tool\":\"find files\",\"error\":{}}}\n",
            serde_json::to_string(&bad_tool).unwrap()
        )
    );
    assert_eq!(r.stderr, warning);
    let only_good = dir.path().join("good.jsonl");
    std::fs::write(
        &only_good,
        "{\"name\": \"count\", \"arguments\": {\"n\": 1}}\n",
    )
    .unwrap();
    let r = validate(&[catalog, "--calls", only_good.to_str().unwrap()]);
    assert_eq!(r.code, 0, "{}", r.stderr);
}

#[test]
fn malformed_arguments_exit_2() {
    let catalog = example_catalog();
    let r = validate(&[
        catalog.to_str().unwrap(),
        "--tool",
        "search_docs",
        "--args",
        r#"{"query": "x",}"#,
    ]);
    assert_eq!(r.code, 2);
    assert_eq!(
        r.stderr,
        "error: --args:1:15: invalid JSON: expected an object key in double quotes\n"
    );
}

#[test]
fn unreadable_files_exit_2() {
    let r = validate(&["/nonexistent/catalog.json", "--tool", "a", "--args", "{}"]);
    assert_eq!(r.code, 2);
    assert!(
        r.stderr
            .starts_with("error: /nonexistent/catalog.json: cannot read: "),
        "{}",
        r.stderr
    );
}

#[test]
fn arguments_nested_100000_deep_get_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("deep.json");
    let deep = format!(
        "{{\"query\": {}{}}}",
        "[".repeat(100_000),
        "]".repeat(100_000)
    );
    std::fs::write(&path, deep).unwrap();
    let catalog = example_catalog();
    let r = validate(&[
        catalog.to_str().unwrap(),
        "--tool",
        "search_docs",
        "--args",
        &format!("@{}", path.display()),
    ]);
    assert_eq!(r.code, 2);
    assert_eq!(
        r.stderr,
        format!(
            "error: {}:1:138: invalid JSON: JSON nests deeper than 128 levels of arrays and objects\n",
            path.display()
        )
    );
}

#[test]
fn schema_nested_20000_deep_gets_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let schema = format!(
        "{}{{\"type\": \"string\"}}{}",
        "{\"items\": ".repeat(20_000),
        "}".repeat(20_000)
    );
    let catalog = dir.path().join("deep-catalog.json");
    std::fs::write(
        &catalog,
        format!("{{\"tools\": [{{\"name\": \"deep\", \"inputSchema\": {schema}}}]}}"),
    )
    .unwrap();
    let r = validate(&[catalog.to_str().unwrap(), "--tool", "deep", "--args", "{}"]);
    assert_eq!(r.code, 2);
    assert!(
        r.stderr
            .contains("invalid JSON: JSON nests deeper than 128 levels of arrays and objects"),
        "{}",
        r.stderr
    );
    let schema_file = dir.path().join("deep-schema.json");
    std::fs::write(&schema_file, &schema).unwrap();
    let instances = dir.path().join("values.jsonl");
    std::fs::write(&instances, "[]\n").unwrap();
    let r = validate(&[
        "--schema",
        schema_file.to_str().unwrap(),
        "--instances",
        instances.to_str().unwrap(),
    ]);
    assert_eq!(r.code, 2);
    assert_eq!(
        r.stderr,
        format!(
            "error: {}:1:1281: invalid JSON: JSON nests deeper than 128 levels of arrays and objects\n",
            schema_file.display()
        )
    );
}

#[test]
fn a_50_mb_string_against_max_length_gets_a_verdict() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("big.json");
    let size = 50 * 1024 * 1024;
    std::fs::write(&path, format!("{{\"query\": \"{}\"}}", "x".repeat(size))).unwrap();
    let catalog = example_catalog();
    let r = validate(&[
        catalog.to_str().unwrap(),
        "--tool",
        "search_docs",
        "--args",
        &format!("@{}", path.display()),
    ]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert_eq!(
        r.stdout,
        format!("argument 'query' string length must be <= 200 (got {size})\n")
    );
}

#[test]
fn recorded_calls_one_json_line_each() {
    let dir = tempfile::tempdir().unwrap();
    let calls = dir.path().join("calls.jsonl");
    std::fs::write(
        &calls,
        concat!(
            // A byte order mark before the first line is not part of it.
            "\u{feff}{\"name\": \"write_file\", \"arguments\": {\"path\": \"/tmp/x\", \"content\": \"hi\"}}\n",
            "{\"name\": \"edit_file\", \"arguments\": {\"path\": \"/tmp/x\", \"edits\": [{\"oldText\": \"a\"}]}}\n",
            "\n",
            "{\"name\": \"list_allowed_directories\"}\n",
            "{\"name\": \"writ_file\", \"arguments\": {}}\n",
            "{\"name\": \"write_file\", \"arguments\": [1]}\n",
            "{not json}\n",
            // `null` arguments are no arguments, as the proxy takes them.
            "{\"name\": \"list_allowed_directories\", \"arguments\": null}\n",
        ),
    )
    .unwrap();
    let catalog = real_catalog("filesystem");
    let r = validate(&[
        catalog.to_str().unwrap(),
        "--calls",
        calls.to_str().unwrap(),
    ]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    let lines: Vec<&str> = r.stdout.lines().collect();
    assert_eq!(
        lines,
        [
            r#"{"line":1,"tool":"write_file","valid":true,"errors":[]}"#,
            r#"{"line":2,"tool":"edit_file","valid":false,"errors":[{"path":"/edits/0/newText","message":"missing required argument 'edits[0].newText'"}]}"#,
            r#"{"line":4,"tool":"list_allowed_directories","valid":true,"errors":[]}"#,
            r#"{"line":5,"tool":"writ_file","error":"unknown tool 'writ_file' (did you mean 'write_file'?)"}"#,
            r#"{"line":6,"tool":"write_file","valid":false,"errors":[{"path":"","message":"arguments must be an object (got an array)"}]}"#,
            &format!(
                r#"{{"line":7,"error":"{}:7:2: invalid JSON: expected an object key in double quotes"}}"#,
                calls.display()
            ),
            r#"{"line":8,"tool":"list_allowed_directories","valid":true,"errors":[]}"#,
        ]
    );
    // Without the bad lines, invalid calls make it exit 1.
    std::fs::write(&calls, "{\"name\": \"read_file\", \"arguments\": {}}\n").unwrap();
    let r = validate(&[
        catalog.to_str().unwrap(),
        "--calls",
        calls.to_str().unwrap(),
    ]);
    assert_eq!(r.code, 1);
}

#[test]
fn instances_against_a_schema() {
    let dir = tempfile::tempdir().unwrap();
    let schema = dir.path().join("schema.json");
    std::fs::write(&schema, r#"{"$schema": "http://json-schema.org/draft-07/schema#", "type": "object", "properties": {"when": {"type": "string", "format": "date"}}, "required": ["when"]}"#).unwrap();
    let instances = dir.path().join("values.jsonl");
    std::fs::write(
        &instances,
        "{\"when\": \"2024-01-31\"}\n{\"when\": \"soon\"}\n{}\n",
    )
    .unwrap();
    let r = validate(&[
        "--schema",
        schema.to_str().unwrap(),
        "--instances",
        instances.to_str().unwrap(),
    ]);
    assert_eq!(r.code, 1);
    assert_eq!(
        r.stdout,
        concat!(
            "{\"line\":1,\"valid\":true,\"errors\":[]}\n",
            "{\"line\":2,\"valid\":true,\"errors\":[]}\n",
            "{\"line\":3,\"valid\":false,\"errors\":[{\"path\":\"/when\",\"message\":\"missing required value 'when'\"}]}\n",
        )
    );
    let r = validate(&[
        "--schema",
        schema.to_str().unwrap(),
        "--instances",
        instances.to_str().unwrap(),
        "--assert-format",
    ]);
    assert!(r.stdout.contains(r#"{"line":2,"valid":false,"errors":[{"path":"/when","message":"value 'when' must be a date like 2024-01-31 (format 'date')"}]}"#), "{}", r.stdout);
}

#[test]
fn schema_mode_messages_say_what_was_received_and_suggest() {
    let dir = tempfile::tempdir().unwrap();
    let schema = dir.path().join("schema.json");
    std::fs::write(&schema, r#"{"type": "object", "properties": {"n": {"type": "integer", "maximum": 3}, "mode": {"enum": ["oneline", "full"]}, "meta": {"type": "object", "additionalProperties": false}}}"#).unwrap();
    let instances = dir.path().join("values.jsonl");
    // A lone surrogate is valid JSON: read, and judged like any string.
    std::fs::write(
        &instances,
        "{\"n\": 9, \"mode\": \"onelin\", \"meta\": {\"x\": 1}}\n{\"n\": \"\\ud83d\"}\n",
    )
    .unwrap();
    let r = validate(&[
        "--schema",
        schema.to_str().unwrap(),
        "--instances",
        instances.to_str().unwrap(),
    ]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert_eq!(
        r.stdout,
        concat!(
            "{\"line\":1,\"valid\":false,\"errors\":[{\"path\":\"/n\",\"message\":\"value 'n' must be <= 3 (got 9)\"},{\"path\":\"/mode\",\"message\":\"value 'mode' must be one of the enum values: \\\"oneline\\\", \\\"full\\\" (did you mean \\\"oneline\\\"?)\"},{\"path\":\"/meta/x\",\"message\":\"unexpected value 'meta.x'\"}]}\n",
            "{\"line\":2,\"valid\":false,\"errors\":[{\"path\":\"/n\",\"message\":\"value 'n' must be an integer (got a string)\"}]}\n",
        )
    );
}

#[test]
fn dialect_override_and_unsupported_dialects() {
    let dir = tempfile::tempdir().unwrap();
    let schema = dir.path().join("schema.json");
    std::fs::write(
        &schema,
        r#"{"$schema": "http://json-schema.org/draft-04/schema#", "items": [{"type": "string"}]}"#,
    )
    .unwrap();
    let instances = dir.path().join("values.jsonl");
    std::fs::write(&instances, "[\"a\", 1]\n").unwrap();
    let r = validate(&[
        "--schema",
        schema.to_str().unwrap(),
        "--instances",
        instances.to_str().unwrap(),
    ]);
    assert_eq!(r.code, 2);
    assert_eq!(
        r.stderr,
        format!("error: {}: unsupported $schema 'http://json-schema.org/draft-04/schema#': supported dialects are 2020-12 (https://json-schema.org/draft/2020-12/schema) and draft-07 (http://json-schema.org/draft-07/schema#)\n", schema.display())
    );
    // As draft-07, `items` is a tuple: ["a", 1] fits.
    let r = validate(&[
        "--schema",
        schema.to_str().unwrap(),
        "--instances",
        instances.to_str().unwrap(),
        "--dialect",
        "draft-07",
    ]);
    assert_eq!(
        (r.code, r.stdout.as_str()),
        (0, "{\"line\":1,\"valid\":true,\"errors\":[]}\n")
    );
    // As 2020-12, the array form of `items` is not allowed.
    let r = validate(&[
        "--schema",
        schema.to_str().unwrap(),
        "--instances",
        instances.to_str().unwrap(),
        "--dialect",
        "2020-12",
    ]);
    assert_eq!(r.code, 2, "{}", r.stdout);
    let r = validate(&[
        "--schema",
        schema.to_str().unwrap(),
        "--instances",
        instances.to_str().unwrap(),
        "--dialect",
        "draft-04",
    ]);
    assert_eq!(r.code, 2);
    assert!(
        r.stderr
            .contains("unsupported dialect 'draft-04': use 2020-12 or draft-07"),
        "{}",
        r.stderr
    );
}

#[test]
fn remote_refs_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let catalog = dir.path().join("remote.json");
    std::fs::write(
        &catalog,
        r#"{"name": "fetchy", "inputSchema": {"type": "object", "properties": {"user": {"$ref": "https://example.com/user.json"}}}}"#,
    )
    .unwrap();
    let r = validate(&[
        catalog.to_str().unwrap(),
        "--tool",
        "fetchy",
        "--args",
        "{}",
    ]);
    assert_eq!(r.code, 2);
    assert_eq!(
        r.stderr,
        format!("error: {}: tool 'fetchy': inputSchema: external $ref resolution is disabled: https://example.com/user.json\n", catalog.display())
    );
}

#[test]
fn real_draft_07_catalog() {
    let catalog = real_catalog("everything");
    let r = validate(&[
        catalog.to_str().unwrap(),
        "--tool",
        "get-sum",
        "--args",
        r#"{"a": 1, "b": "2"}"#,
    ]);
    assert_eq!(
        (r.code, r.stdout.as_str()),
        (1, "argument 'b' must be a number (got a string)\n")
    );
}

#[test]
fn every_catalog_shape_through_the_cli() {
    let tool = r#"{"name": "echo", "inputSchema": {"type": "object", "properties": {"message": {"type": "string"}}, "required": ["message"]}}"#;
    let shapes = [
        format!(r#"{{"tools": [{tool}], "nextCursor": "page-2"}}"#),
        format!(r#"{{"jsonrpc": "2.0", "id": 7, "result": {{"tools": [{tool}]}}}}"#),
        format!("[{tool}]"),
        tool.to_string(),
    ];
    let dir = tempfile::tempdir().unwrap();
    for (i, text) in shapes.iter().enumerate() {
        let path = dir.path().join(format!("shape{i}.json"));
        std::fs::write(&path, text).unwrap();
        let r = validate(&[path.to_str().unwrap(), "--tool", "echo", "--args", "{}"]);
        assert_eq!(
            (r.code, r.stdout.as_str()),
            (1, "missing required argument 'message'\n"),
            "{text}"
        );
    }
}

/// Standard input is read once: a command given `-` twice says so, rather than reading the
/// second as empty.
#[test]
fn standard_input_named_twice_is_an_error_not_an_empty_input() {
    let catalog = r#"{"tools": [{"name": "t", "inputSchema": {"type": "object"}}]}"#;
    let runs: [&[&str]; 2] = [
        &["validate", "-", "--tool", "t", "--args", "@-"],
        &["diff", "-", "-"],
    ];
    for args in runs {
        let output = Command::cargo_bin("toolschema")
            .unwrap()
            .args(args)
            .write_stdin(catalog)
            .output()
            .unwrap();
        assert_eq!(output.status.code(), Some(2), "{args:?}");
        assert_eq!(
            String::from_utf8_lossy(&output.stderr),
            "error: <stdin>: standard input was read already for another input of this command: give `-` (or `@-`) once\n",
            "{args:?}"
        );
    }
}

/// `pattern` is an ECMA-262 regular expression: `.` matches no line terminator, `\b` is an
/// ASCII word boundary, and the message quotes the pattern as written.
#[test]
fn patterns_are_read_as_ecma_262_reads_them() {
    let dir = tempfile::tempdir().unwrap();
    let schema = dir.path().join("schema.json");
    std::fs::write(
        &schema,
        r#"{"type": "object", "properties": {"line": {"type": "string", "pattern": "^.+$"}, "word": {"type": "string", "pattern": "^a\\b"}}}"#,
    )
    .unwrap();
    let instances = dir.path().join("values.jsonl");
    std::fs::write(
        &instances,
        concat!(
            "{\"line\": \"ok\\rSet-Cookie: x=1\"}\n",
            "{\"line\": \"ok\\u2028x\"}\n",
            "{\"line\": \"ok é\", \"word\": \"aé\"}\n",
            "{\"word\": \"ab\"}\n",
        ),
    )
    .unwrap();
    let r = validate(&[
        "--schema",
        schema.to_str().unwrap(),
        "--instances",
        instances.to_str().unwrap(),
    ]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert_eq!(
        r.stdout,
        concat!(
            "{\"line\":1,\"valid\":false,\"errors\":[{\"path\":\"/line\",\"message\":\"value 'line' must match the pattern ^.+$\"}]}\n",
            "{\"line\":2,\"valid\":false,\"errors\":[{\"path\":\"/line\",\"message\":\"value 'line' must match the pattern ^.+$\"}]}\n",
            "{\"line\":3,\"valid\":true,\"errors\":[]}\n",
            "{\"line\":4,\"valid\":false,\"errors\":[{\"path\":\"/word\",\"message\":\"value 'word' must match the pattern ^a\\\\b\"}]}\n",
        )
    );
}

/// A `pattern` JavaScript refuses (with the u flag, as Ajv compiles it) is not read with the
/// meaning Rust's regex syntax gives it: the schema is refused, exit 2, naming the pattern and
/// where it is. `(?i)^admin$` would otherwise pass `ADMIN`, `\pL` any letter.
#[test]
fn patterns_javascript_cannot_read_are_refused_not_read_as_rust_reads_them() {
    let dir = tempfile::tempdir().unwrap();
    let instances = dir.path().join("values.jsonl");
    std::fs::write(&instances, "{\"user\": \"R2D2\"}\n{\"user\": \"Émile\"}\n").unwrap();
    let instances = instances.to_str().unwrap();
    // The pattern as it stands in the JSON text (backslashes doubled).
    let validate_with = |pattern: &str| {
        let schema = dir.path().join("schema.json");
        std::fs::write(
            &schema,
            format!(r#"{{"type": "object", "properties": {{"user": {{"type": "string", "pattern": "{pattern}"}}}}}}"#),
        )
        .unwrap();
        validate(&[
            "--schema",
            schema.to_str().unwrap(),
            "--instances",
            instances,
        ])
    };
    for (pattern, at, why) in [
        (
            r"(?i)^admin$",
            "/properties/user/pattern",
            "invalid group modifier",
        ),
        (
            r"^\\pL+$",
            "/properties/user/pattern",
            "invalid character at property escape start",
        ),
        (
            r"^a\\z",
            "/properties/user/pattern",
            "invalid character escape",
        ),
        (
            r"^\\b+\\w+$",
            "/properties/user/pattern",
            "nothing to repeat: the assertion \\b takes no quantifier",
        ),
    ] {
        let r = validate_with(pattern);
        assert_eq!(r.code, 2, "{pattern}: {}", r.stdout);
        assert!(r.stdout.is_empty(), "{pattern}: {}", r.stdout);
        let written = pattern.replace(r"\\", r"\");
        assert!(
            r.stderr.contains(&format!(
                "invalid schema at '{at}': the pattern '{written}' is not an ECMA-262 regular expression as JavaScript reads it with the u flag ({why}); write it in JavaScript's syntax"
            )),
            "{pattern}: {}",
            r.stderr
        );
    }
    // ECMA-262's own syntax is read as before: `\p{L}` with the u flag, named groups.
    let r = validate_with(r"^(?<first>\\p{L})\\p{L}*$");
    assert_eq!(r.code, 1, "{}{}", r.stdout, r.stderr);
    assert_eq!(
        r.stdout,
        concat!(
            "{\"line\":1,\"valid\":false,\"errors\":[{\"path\":\"/user\",\"message\":\"value 'user' must match the pattern ^(?<first>\\\\p{L})\\\\p{L}*$\"}]}\n",
            "{\"line\":2,\"valid\":true,\"errors\":[]}\n",
        )
    );
}

/// `--assert-format` asserts every `format` or refuses the schema: a format toolschema does not
/// know is not passed unchecked. Without it, formats only annotate and an unknown one is fine.
/// A `$ref` to an anchor the document lacks names the anchor.
#[test]
fn asserted_formats_are_all_checked_or_the_schema_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let catalog = dir.path().join("tools.json");
    std::fs::write(
        &catalog,
        r##"{"tools": [
            {"name": "mail", "inputSchema": {"type": "object", "properties": {"to": {"type": "string", "format": "emial"}}}},
            {"name": "anchor", "inputSchema": {"type": "object", "properties": {"r": {"$ref": "#nowhere"}}}}
        ]}"##,
    )
    .unwrap();
    let catalog = catalog.to_str().unwrap();
    let r = validate(&[
        catalog,
        "--tool",
        "mail",
        "--args",
        r#"{"to": "x"}"#,
        "--assert-format",
    ]);
    assert_eq!(r.code, 2, "{}", r.stdout);
    assert!(
        r.stderr.contains("tool 'mail': inputSchema: invalid schema at '/properties/to/format': format 'emial' is not one toolschema knows, so it cannot be asserted"),
        "{}",
        r.stderr
    );
    let r = validate(&[catalog, "--tool", "mail", "--args", r#"{"to": "x"}"#]);
    assert_eq!((r.code, r.stdout.as_str()), (0, "valid\n"), "{}", r.stderr);
    let r = validate(&[catalog, "--tool", "anchor", "--args", r#"{"r": 1}"#]);
    assert_eq!(r.code, 2, "{}", r.stdout);
    assert!(
        r.stderr.contains(
            "tool 'anchor': inputSchema: $ref '#nowhere' does not resolve inside the document"
        ),
        "{}",
        r.stderr
    );
}

#[test]
fn a_lone_surrogate_is_not_called_valid_where_the_schema_could_tell_it_from_u_fffd() {
    let dir = tempfile::tempdir().unwrap();
    let catalog = dir.path().join("tools.json");
    // `\P{C}` takes U+FFFD (what a lone surrogate escape reads as here), not a surrogate (what
    // a JavaScript or Python server keeps): "valid" would be a verdict on another text.
    std::fs::write(
        &catalog,
        r#"[{"name": "say", "inputSchema": {"type": "object", "properties": {"s": {"type": "string", "pattern": "^\\P{C}*$"}}}},
            {"name": "count", "inputSchema": {"type": "object", "properties": {"s": {"type": "string", "maxLength": 3}}}}]"#,
    )
    .unwrap();
    let catalog = catalog.to_str().unwrap();
    let unchecked = "arguments could not be checked: a lone surrogate escape (\\uD800 to \\uDFFF) reads here as U+FFFD, and the schema examines characters (`pattern`), which a server keeping the surrogate may judge otherwise";
    let cases = [
        ("say", r#"{"s": "ok\ud800"}"#, 1, unchecked.to_string()),
        ("say", r#"{"s": "ok\ud83d\ude00"}"#, 0, "valid".into()),
        ("say", r#"{"s": "ok\\ud800"}"#, 0, "valid".into()),
        // Nothing in this schema tells them apart: judged as read.
        ("count", r#"{"s": "ok\udfff"}"#, 0, "valid".into()),
    ];
    for (tool, arguments, code, said) in cases {
        let r = validate(&[catalog, "--tool", tool, "--args", arguments]);
        assert_eq!(
            (r.code, r.stdout.trim_end()),
            (code, said.as_str()),
            "{arguments}"
        );
    }

    let calls = dir.path().join("calls.jsonl");
    std::fs::write(
        &calls,
        "{\"name\": \"say\", \"arguments\": {\"s\": \"\\udc00\"}}\n{\"name\": \"say\", \"arguments\": {\"s\": \"ok\"}}\n",
    )
    .unwrap();
    let r = validate(&[catalog, "--calls", calls.to_str().unwrap()]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    let lines: Vec<serde_json::Value> = r
        .stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines[0]["errors"][0]["message"], unchecked);
    assert_eq!(lines[1]["valid"], true);

    let schema = dir.path().join("schema.json");
    std::fs::write(&schema, r#"{"enum": ["ok", "\ufffd"]}"#).unwrap();
    let values = dir.path().join("values.jsonl");
    std::fs::write(&values, "\"\\ud800\"\n\"\\ufffd\"\n").unwrap();
    let r = validate(&[
        "--schema",
        schema.to_str().unwrap(),
        "--instances",
        values.to_str().unwrap(),
    ]);
    let lines: Vec<serde_json::Value> = r
        .stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(
        lines[0]["errors"][0]["message"],
        "value could not be checked: a lone surrogate escape (\\uD800 to \\uDFFF) reads here as U+FFFD, and the schema examines characters (a string holding U+FFFD), which a server keeping the surrogate may judge otherwise"
    );
    assert_eq!(lines[1]["valid"], true);
}

/// The filesystem server's schemas are open: a misspelt `taill` passes them, as the schema says,
/// unless `--unknown-arguments reject` refuses it with the proxy's words (after the schema's own
/// errors), in a single call and in a batch alike.
#[test]
fn unknown_arguments_reject_refuses_a_misspelt_argument_of_an_open_schema() {
    let catalog = real_catalog("filesystem");
    let catalog = catalog.to_str().unwrap();
    let typo = r#"{"path": "/tmp/a.txt", "taill": 5}"#;
    let r = validate(&[catalog, "--tool", "read_text_file", "--args", typo]);
    assert_eq!((r.code, r.stdout.as_str()), (0, "valid\n"), "{}", r.stderr);
    let reject = ["--unknown-arguments", "reject"];
    let r = validate(
        &[
            &[catalog, "--tool", "read_text_file", "--args", typo][..],
            &reject,
        ]
        .concat(),
    );
    assert_eq!(
        (r.code, r.stdout.as_str(), r.stderr.as_str()),
        (
            1,
            "unexpected argument 'taill' (did you mean 'tail'?)\n",
            ""
        )
    );
    // The schema's own errors come first; declared arguments pass.
    let r = validate(
        &[
            &[
                catalog,
                "--tool",
                "read_text_file",
                "--args",
                r#"{"taill": 5}"#,
            ][..],
            &reject,
        ]
        .concat(),
    );
    assert_eq!(
        (r.code, r.stdout.as_str()),
        (
            1,
            "missing required argument 'path'\nunexpected argument 'taill' (did you mean 'tail'?)\n"
        )
    );
    let r = validate(
        &[
            &[
                catalog,
                "--tool",
                "read_text_file",
                "--args",
                r#"{"path": "/a", "tail": 5}"#,
            ][..],
            &reject,
        ]
        .concat(),
    );
    assert_eq!((r.code, r.stdout.as_str()), (0, "valid\n"));
    let dir = tempfile::tempdir().unwrap();
    let calls = dir.path().join("calls.jsonl");
    std::fs::write(
        &calls,
        format!("{{\"name\": \"read_text_file\", \"arguments\": {typo}}}\n"),
    )
    .unwrap();
    let r = validate(&[&[catalog, "--calls", calls.to_str().unwrap()][..], &reject].concat());
    assert_eq!(
        (r.code, r.stdout.as_str()),
        (
            1,
            "{\"line\":1,\"tool\":\"read_text_file\",\"valid\":false,\"errors\":[{\"path\":\"/taill\",\"message\":\"unexpected argument 'taill' (did you mean 'tail'?)\"}]}\n"
        )
    );
}

/// Numbers are judged as the text states them, with `--args` and `--calls` (what the command
/// said before: "arguments could not be checked: the number at 'id' (read as
/// 9.007199254740992e15) is past 2^52 ...", for both).
#[test]
fn numbers_are_judged_as_written() {
    let dir = tempfile::tempdir().unwrap();
    let catalog = dir.path().join("tools.json");
    std::fs::write(
        &catalog,
        r#"{"tools": [{"name": "get", "inputSchema": {"type": "object", "properties": {
            "id": {"const": 9007199254740992}, "step": {"multipleOf": 0.1}}}}]}"#,
    )
    .unwrap();
    let catalog = catalog.to_str().unwrap();
    let r = validate(&[
        catalog,
        "--tool",
        "get",
        "--args",
        r#"{"id": 9007199254740992.0}"#,
    ]);
    assert_eq!((r.code, r.stdout.as_str()), (0, "valid\n"));
    let r = validate(&[
        catalog,
        "--tool",
        "get",
        "--args",
        r#"{"id": 9007199254740993.0}"#,
    ]);
    assert_eq!(
        (r.code, r.stdout.as_str()),
        (1, "argument 'id' must be exactly 9007199254740992\n")
    );
    let calls = dir.path().join("calls.jsonl");
    std::fs::write(
        &calls,
        concat!(
            r#"{"name": "get", "arguments": {"id": 9007199254740992.0, "step": 0.3}}"#,
            "\n",
            r#"{"arguments": {"step": 0.30000000000000000001}, "name": "get"}"#,
            "\n",
        ),
    )
    .unwrap();
    let r = validate(&[catalog, "--calls", calls.to_str().unwrap()]);
    assert_eq!(
        r.stdout,
        concat!(
            r#"{"line":1,"tool":"get","valid":true,"errors":[]}"#,
            "\n",
            r#"{"line":2,"tool":"get","valid":false,"errors":[{"path":"/step","message":"argument 'step' must be a multiple of 0.1"}]}"#,
            "\n",
        ),
        "{}",
        r.stderr
    );
    assert_eq!(r.code, 1);
}

/// A schema's integers are compared as its text writes them, past 2^53, 2^63, 2^64 and
/// 2^65: `validate --schema` and `validate --calls` (a catalog) as processes, on generated
/// cases, agree with `i128` arithmetic.
#[test]
fn schema_integers_past_64_bits_are_compared_as_written() {
    use proptest::strategy::{Strategy, ValueTree};
    use proptest::test_runner::{Config, TestRunner};

    let near = |power: u32| (-2i128..=2).prop_map(move |d| (1i128 << power) + d);
    let integer = proptest::prop_oneof![
        near(53),
        near(63),
        near(64),
        near(65),
        near(65).prop_map(|n| -n),
        (-(10i128.pow(38))..10i128.pow(38)),
    ];
    let mut runner = TestRunner::new(Config {
        rng_seed: proptest::test_runner::RngSeed::Fixed(33),
        ..Config::default()
    });
    let dir = tempfile::tempdir().unwrap();
    for case in 0..6 {
        let a = integer.new_tree(&mut runner).unwrap().current();
        // The schema's number and the values either side of it, and a few others.
        let mut values: Vec<i128> = (-2..=2).map(|d| a + d).collect();
        for _ in 0..4 {
            values.push(integer.new_tree(&mut runner).unwrap().current());
        }
        let divisor = if a == 0 { 7 } else { a.abs() };
        type Holds = fn(i128, i128) -> bool;
        let keywords: [(&str, String, Holds); 6] = [
            ("maximum", a.to_string(), |b, a| b <= a),
            ("minimum", a.to_string(), |b, a| b >= a),
            ("exclusiveMaximum", a.to_string(), |b, a| b < a),
            ("exclusiveMinimum", a.to_string(), |b, a| b > a),
            ("const", a.to_string(), |b, a| b == a),
            ("multipleOf", divisor.to_string(), |b, a| b % a == 0),
        ];
        for (keyword, number, holds) in keywords {
            let limit: i128 = number.parse().unwrap();
            let schema = format!(r#"{{"{keyword}": {number}}}"#);
            let schema_path = dir.path().join(format!("schema-{case}-{keyword}.json"));
            std::fs::write(&schema_path, &schema).unwrap();
            let instances = dir.path().join(format!("values-{case}-{keyword}.jsonl"));
            let lines: Vec<String> = values.iter().map(i128::to_string).collect();
            std::fs::write(&instances, lines.join("\n") + "\n").unwrap();
            let r = validate(&[
                "--schema",
                schema_path.to_str().unwrap(),
                "--instances",
                instances.to_str().unwrap(),
            ]);
            let catalog = dir.path().join(format!("catalog-{case}-{keyword}.json"));
            std::fs::write(
                &catalog,
                format!(
                    r#"{{"tools": [{{"name": "t", "inputSchema": {{"type": "object", "properties": {{"n": {schema}}}}}}}]}}"#
                ),
            )
            .unwrap();
            let calls = dir.path().join(format!("calls-{case}-{keyword}.jsonl"));
            let call_lines: Vec<String> = values
                .iter()
                .map(|b| format!(r#"{{"name": "t", "arguments": {{"n": {b}}}}}"#))
                .collect();
            std::fs::write(&calls, call_lines.join("\n") + "\n").unwrap();
            let c = validate(&[
                catalog.to_str().unwrap(),
                "--calls",
                calls.to_str().unwrap(),
            ]);
            for (record, call) in [(&r, "--schema"), (&c, "--calls")] {
                let verdicts: Vec<bool> = record
                    .stdout
                    .lines()
                    .map(|line| {
                        let v: serde_json::Value = serde_json::from_str(line).unwrap();
                        v["valid"].as_bool().unwrap()
                    })
                    .collect();
                let expected: Vec<bool> = values.iter().map(|b| holds(*b, limit)).collect();
                assert_eq!(
                    verdicts, expected,
                    "{call} {schema} on {values:?}: {}{}",
                    record.stdout, record.stderr
                );
            }
        }
    }
}
