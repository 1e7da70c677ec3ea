//! `toolschema adapt` and `toolschema lint --target` as a user runs them: a process, real files,
//! exact output and exit codes.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;
#[path = "../../toolschema/tests/support/mod.rs"]
mod support;

use common::{toolschema_in as run_in, Run};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/adapt")
}

fn run(args: &[&str]) -> Run {
    run_in(&fixtures(), args, None)
}

/// `adapt tools.json --to PROFILE --restore TOOL --args ARGS` on the fixture.
fn restore(profile: &str, tool: &str, args: &str) -> Run {
    run(&[
        "adapt",
        "tools.json",
        "--to",
        profile,
        "--restore",
        tool,
        "--args",
        args,
    ])
}

fn snapshot(name: &str, text: &str) {
    insta::with_settings!({
        snapshot_path => "snapshots",
        prepend_module_to_snapshot => false,
        omit_expression => true,
    }, {
        insta::assert_snapshot!(name, text);
    });
}

/// Every profile's output for the fixture catalog: the request format, the losses, the names
/// map, and what is refused (stderr) with the exit status.
#[test]
fn adapt_the_fixture_to_every_profile() {
    for profile in toolschema::adapt::PROFILE_NAMES {
        let out = run(&["adapt", "tools.json", "--to", profile]);
        let document: Value = serde_json::from_str(&out.stdout).unwrap();
        assert!(document["tools"].is_array() && document["losses"].is_array());
        let text = format!(
            "exit {}\n--- stderr\n{}--- stdout\n{}",
            out.code, out.stderr, out.stdout
        );
        snapshot(&format!("adapt-{profile}"), &text);
    }
}

#[test]
fn tools_only_prints_the_list() {
    let out = run(&["adapt", "tools.json", "--to", "anthropic", "--tools-only"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let tools: Value = serde_json::from_str(&out.stdout).unwrap();
    let names: Vec<&str> = tools
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["files_read", "find", "set-mode", "tree", "tag"]);
    assert_eq!(tools[0]["input_schema"]["type"], "object");
}

#[test]
fn a_call_comes_back_to_the_server_s_tool() {
    // Strict mode: the model names the provider's tool and sends every property.
    let out = restore(
        "openai-strict",
        "files_read",
        r#"{"path": "notes.txt", "tail": null, "encoding": null}"#,
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    let call: Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(
        call,
        json!({"name": "files.read", "arguments": {"path": "notes.txt"}})
    );

    // Gemini OpenAPI: a renamed parameter goes back to its name; arguments from a file.
    let dir = tempfile::tempdir().unwrap();
    let args = dir.path().join("args.json");
    std::fs::write(&args, r#"{"my_mode": "fast", "level": null}"#).unwrap();
    let catalog = fixtures().join("tools.json");
    let out = run_in(
        dir.path(),
        &[
            "adapt",
            catalog.to_str().unwrap(),
            "--to",
            "gemini-openapi",
            "--restore",
            "set-mode",
            "--args",
            "@args.json",
        ],
        None,
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    let call: Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(
        call,
        json!({"name": "set-mode", "arguments": {"my-mode": "fast", "level": null}})
    );
}

/// What `--restore` prints is what the model sent: a value reading would change (a number a
/// float cannot hold, past the float range, a lone surrogate) is refused, exit 2, with where it
/// is, instead of being printed changed.
#[test]
fn a_call_whose_values_reading_would_change_is_refused_not_changed() {
    let restore = |args: &str| restore("openai-strict", "files_read", args);
    for (args, expected) in [
        (
            r#"{"path": "notes.txt", "tail": 123456789012345678901234567890, "encoding": null}"#,
            "error: --args:1:31: the number 123456789012345678901234567890 is read as the 64-bit float 1.2345678901234568e+29; the restored arguments would not be what the model sent\n",
        ),
        (
            r#"{"path": "notes.txt", "tail": 3.14159265358979323846, "encoding": null}"#,
            "error: --args:1:31: the number 3.14159265358979323846 is read as the 64-bit float 3.141592653589793; the restored arguments would not be what the model sent\n",
        ),
        (
            r#"{"path": "notes.txt", "tail": 1e400, "encoding": null}"#,
            "error: --args:1:31: the number 1e400 is past the range of a 64-bit float, and is read as the largest one; the restored arguments would not be what the model sent\n",
        ),
        (
            r#"{"path": "n\ud800.txt", "tail": null, "encoding": null}"#,
            "error: --args:1:12: the string holds a lone surrogate, \\ud800, which is read as U+FFFD; the restored arguments would not be what the model sent\n",
        ),
    ] {
        let out = restore(args);
        assert_eq!(out.code, 2, "{args}: {}", out.stdout);
        assert_eq!(out.stdout, "", "{args}");
        assert_eq!(out.stderr, expected, "{args}");
    }
    // The same value written another way is the same value: restored.
    let out = restore(r#"{"path": "notes.txt", "tail": 1E1, "encoding": null}"#);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let call: Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(call["arguments"]["tail"], json!(10.0));
}

#[test]
fn a_call_the_original_refuses_exits_1_with_the_reasons() {
    let out = restore(
        "openai-strict",
        "files_read",
        r#"{"path": "", "tail": 0, "encoding": null}"#,
    );
    assert_eq!(out.code, 1);
    assert_eq!(out.stdout, "");
    assert_eq!(
        out.stderr,
        "error: tool 'files.read': argument 'path' string length must be >= 1 (got 0)\n\
         error: tool 'files.read': argument 'tail' value must be >= 1 (got 0)\n"
    );
    let out = restore("openai", "find", "[1]");
    assert_eq!(out.code, 1);
    assert_eq!(
        out.stderr,
        "error: the arguments of a tool call must be a JSON object, not an array\n"
    );
}

#[test]
fn bad_input_exits_2() {
    let out = run(&["adapt", "tools.json", "--to", "openai-stric"]);
    assert_eq!(out.code, 2);
    assert!(
        out.stderr.contains(
            "unknown profile 'openai-stric': use openai, openai-strict, anthropic, gemini, \
             gemini-openapi (did you mean 'openai-strict'?)"
        ),
        "{}",
        out.stderr
    );
    let out = restore("openai", "file_read", "{}");
    assert_eq!(out.code, 2);
    assert_eq!(
        out.stderr,
        "error: tools.json: no tool named 'file_read' was adapted (did you mean 'files_read'?)\n"
    );
    let out = run_in(
        &fixtures(),
        &["adapt", "-", "--to", "gemini"],
        Some("{\"tools\": [\n  {\"name\": \"a\",}\n]}"),
    );
    assert_eq!(out.code, 2);
    assert!(
        out.stderr.starts_with("error: <stdin>:2:"),
        "{}",
        out.stderr
    );
    let out = run(&["adapt", "tools.json", "--to", "openai", "--args", "{}"]);
    assert_eq!(out.code, 2, "--args needs --restore");
}

/// The line of the first occurrence of `needle` in `text` (1-based).
fn line_of(text: &str, needle: &str) -> usize {
    text.lines().position(|l| l.contains(needle)).unwrap() + 1
}

#[test]
fn lint_target_flags_a_real_server_at_the_right_line() {
    // server-everything's gzip-file-as-resource has "format": "uri", which OpenAI strict mode
    // refuses (it documents nine formats).
    let path = support::real_catalog_path("everything");
    let text = std::fs::read_to_string(&path).unwrap();
    let out = run(&[
        "lint",
        path.to_str().unwrap(),
        "--target",
        "openai-strict",
        "--select",
        "COMPAT-003",
        "--format",
        "json",
    ]);
    assert_eq!(out.code, 1, "{}", out.stderr);
    let report: Value = serde_json::from_str(&out.stdout).unwrap();
    let format = report["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["pointer"].as_str().unwrap().ends_with("/data/format"))
        .expect("the format finding");
    assert_eq!(format["tool"], "gzip-file-as-resource");
    assert_eq!(format["line"], line_of(&text, "\"format\": \"uri\""));
    assert_eq!(
        format["message"],
        "OpenAI (openai-strict) does not read format (the formats it takes are date-time, time, \
         date, duration, email, hostname, ipv4, ipv6, uuid): the description says \"Format: \
         uri.\" instead"
    );
    // Without a target the COMPAT rules find nothing.
    let out = run(&[
        "lint",
        path.to_str().unwrap(),
        "--select",
        "COMPAT",
        "--format",
        "json",
    ]);
    assert_eq!(out.code, 0, "{}", out.stdout);
}

#[test]
fn lint_target_from_toolschema_toml_and_its_errors() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(fixtures().join("tools.json"), dir.path().join("tools.json")).unwrap();
    std::fs::write(
        dir.path().join("toolschema.toml"),
        "[lint]\nselect = [\"COMPAT-002\"]\ntarget = [\"gemini-openapi\", \"openai-strict\"]\n",
    )
    .unwrap();
    let out = run_in(dir.path(), &["lint", "tools.json"], None);
    assert_eq!(out.code, 1);
    let critical: Vec<&str> = out
        .stdout
        .lines()
        .filter(|l| l.contains("COMPAT-002"))
        .collect();
    assert_eq!(
        critical,
        [
            "tools.json:47:114: COMPAT-002 critical: the $ref cycle #/$defs/node -> #/$defs/node cannot be written out: Gemini (gemini-openapi) takes no recursive schemas here (tool 'tree')",
            "tools.json:53:54: COMPAT-002 critical: this array does not say what its elements are; OpenAI (openai-strict) needs a typed items schema, and only the tool's author knows the type (tool 'tag')",
        ]
    );
    // The command line replaces the file's targets.
    let out = run_in(
        dir.path(),
        &["lint", "tools.json", "--target", "anthropic"],
        None,
    );
    assert_eq!(out.code, 0, "{}", out.stdout);
    std::fs::write(
        dir.path().join("toolschema.toml"),
        "[lint]\ntarget = [\"gemni\"]\n",
    )
    .unwrap();
    let out = run_in(dir.path(), &["lint", "tools.json"], None);
    assert_eq!(out.code, 2);
    assert!(
        out.stderr
            .contains("unknown target profile 'gemni' (did you mean 'gemini'?)"),
        "{}",
        out.stderr
    );
}

/// A tool whose `$ref` cannot be followed is left out by every profile with the reason, and a
/// call for it is refused with that reason (exit 2) rather than read against a schema that
/// does not compile.
#[test]
fn a_tool_with_an_unusable_ref_is_refused_and_so_is_a_call_for_it() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("tools.json"),
        r#"{"tools": [
            {"name": "remote", "inputSchema": {"type": "object",
                "properties": {"p": {"$ref": "https://example.com/s.json"}}}},
            {"name": "ok", "inputSchema": {"type": "object", "properties": {"p": {"type": "string"}}}}
        ]}"#,
    )
    .unwrap();
    for profile in toolschema::adapt::PROFILE_NAMES {
        let out = run_in(dir.path(), &["adapt", "tools.json", "--to", profile], None);
        assert_eq!(out.code, 1, "{profile}");
        assert_eq!(
            out.stderr,
            format!(
                "error: tool 'remote' cannot be adapted to {profile} at \
                 /inputSchema/properties/p: $ref https://example.com/s.json points outside the \
                 schema; adapt follows only references inside it\n"
            )
        );
        let document: Value = serde_json::from_str(&out.stdout).unwrap();
        assert_eq!(document["tools"].as_array().unwrap().len(), 1, "{profile}");
    }
    let out = run_in(
        dir.path(),
        &[
            "adapt",
            "tools.json",
            "--to",
            "openai",
            "--restore",
            "remote",
            "--args",
            "{}",
        ],
        None,
    );
    assert_eq!(out.code, 2);
    assert_eq!(out.stdout, "");
    assert_eq!(
        out.stderr,
        "error: tools.json: tool 'remote' cannot be adapted to openai at \
         /inputSchema/properties/p: $ref https://example.com/s.json points outside the schema; \
         adapt follows only references inside it\n"
    );
}

/// A call that gives one parameter both under the name the provider was given and under its
/// original name is refused, naming both: mapped back, one value would silently replace the
/// other.
#[test]
fn a_call_giving_a_renamed_parameter_twice_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("tools.json"),
        r#"{"tools": [{"name": "t", "inputSchema": {"type": "object", "properties": {
            "x-y": {"type": "string"}, "x_y": {"type": "integer"}, "x.y": {"type": "string"}
        }}}]}"#,
    )
    .unwrap();
    let out = run_in(
        dir.path(),
        &["adapt", "tools.json", "--to", "gemini-openapi"],
        None,
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    let document: Value = serde_json::from_str(&out.stdout).unwrap();
    let sent: Vec<String> = document["tools"][0]["parameters"]["properties"]
        .as_object()
        .unwrap()
        .keys()
        .cloned()
        .collect();
    let (dash, dot) = (&sent[0], &sent[2]);
    assert!(
        dash.starts_with("x_y_") && dot.starts_with("x_y_"),
        "{sent:?}"
    );
    let restore = |args: String| {
        run_in(
            dir.path(),
            &[
                "adapt",
                "tools.json",
                "--to",
                "gemini-openapi",
                "--restore",
                "t",
                "--args",
                &args,
            ],
            None,
        )
    };
    let out = restore(format!(r#"{{"x-y": "w", "{dash}": "v", "x_y": 1}}"#));
    assert_eq!(out.code, 1);
    assert_eq!(out.stdout, "");
    assert_eq!(
        out.stderr,
        format!(
            "error: the arguments of tool 't' give parameter 'x-y' more than once: as 'x-y' and \
             '{dash}'; send it once, by the name the provider was given\n"
        )
    );
    // Each parameter once, by either name: restored.
    let out = restore(format!(r#"{{"{dash}": "v", "x_y": 1, "x.y": "d"}}"#));
    assert_eq!(out.code, 0, "{}", out.stderr);
    let call: Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(call["arguments"], json!({"x-y": "v", "x_y": 1, "x.y": "d"}));
}

/// Strict mode sends null for an optional argument left out; where the original takes null
/// itself (`["string", "null"]` where null means "clear", `const: null`) the null may be meant,
/// and `--restore` keeps it; a null strict mode introduced still goes.
#[test]
fn restore_keeps_a_null_the_original_takes() {
    let dir = tempfile::tempdir().unwrap();
    let catalog = json!({"tools": [{"name": "notes.set", "inputSchema": {"type": "object",
        "properties": {
            "id": {"type": "string"},
            "note": {"type": ["string", "null"], "description": "The note; null clears it."},
            "reset": {"const": null},
            "limit": {"type": "integer"}
        }, "required": ["id"]}}]});
    std::fs::write(dir.path().join("notes.json"), catalog.to_string()).unwrap();
    let restore = |args: &str| {
        run_in(
            dir.path(),
            &[
                "adapt",
                "notes.json",
                "--to",
                "openai-strict",
                "--restore",
                "notes_set",
                "--args",
                args,
            ],
            None,
        )
    };
    let out = restore(r#"{"id": "a", "note": null, "reset": null, "limit": null}"#);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let call: Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(
        call,
        json!({"name": "notes.set", "arguments": {"id": "a", "note": null, "reset": null}})
    );
    let out = restore(r#"{"id": "a", "note": "n", "reset": null, "limit": 3}"#);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let call: Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(
        call,
        json!({"name": "notes.set", "arguments": {"id": "a", "note": "n", "reset": null, "limit": 3}})
    );
    // The adapted tool says so among its losses.
    let out = run_in(
        dir.path(),
        &["adapt", "notes.json", "--to", "openai-strict"],
        None,
    );
    assert!(
        out.stdout
            .contains("optional 'note', 'reset' already accept null"),
        "{}",
        out.stdout
    );
}

/// On a real draft-07 catalog (server-filesystem, 14 tools each with `$schema`), with every
/// target: the `$schema` drop is said once for the file, in one sentence per thing the providers
/// do, providers joined as a list is, verbs agreeing with them.
#[test]
fn lint_target_says_each_drop_once_in_grammatical_sentences() {
    let path = support::real_catalog_path("filesystem");
    let targets = "openai,openai-strict,anthropic,gemini,gemini-openapi";
    let lint = |select: &str| {
        let out = run(&[
            "lint",
            path.to_str().unwrap(),
            "--target",
            targets,
            "--select",
            select,
            "--format",
            "json",
        ]);
        let report: Value = serde_json::from_str(&out.stdout).unwrap();
        report["diagnostics"]
            .as_array()
            .unwrap()
            .iter()
            .map(|d| {
                (
                    d["tool"].as_str().unwrap().to_string(),
                    d["message"].as_str().unwrap().to_string(),
                )
            })
            .collect::<Vec<_>>()
    };
    assert_eq!(
        lint("COMPAT-006"),
        [(
            "read_file".to_string(),
            "$schema \"http://json-schema.org/draft-07/schema#\" is left out: OpenAI \
             (openai-strict), Anthropic (anthropic) and Gemini (gemini) read the schema as JSON \
             Schema 2020-12 (draft-07 keywords are translated); Gemini (gemini-openapi) reads the \
             schema as an OpenAPI 3.0 schema object"
                .to_string()
        )]
    );
    let dropped = lint("COMPAT-003");
    assert!(!dropped.is_empty());
    for (_, message) in &dropped {
        assert!(
            message.starts_with("OpenAI (openai-strict) and Gemini (gemini) do not read "),
            "{message}"
        );
    }
}
