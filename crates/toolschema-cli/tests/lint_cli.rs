//! `toolschema lint`, `rules` and `rule` as a user runs them: a process, real files, exact output
//! and exit codes.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;
#[path = "../../toolschema/tests/support/mod.rs"]
mod support;

use common::{toolschema_in as run_in, Run};
use serde_json::Value;
use std::path::{Path, PathBuf};

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/lint")
}

fn fixture_text(name: &str) -> String {
    std::fs::read_to_string(fixtures().join(name)).unwrap()
}

fn run(args: &[&str]) -> Run {
    run_in(&fixtures(), args, None)
}

const SMALL_TEXT: &str = r#"small.json:6:7: SCH-002 warning: object schema is open (additionalProperties is absent): undeclared arguments are accepted (tool 'search') [fix: safe]
 6 |       "inputSchema": {
   |       ^
small.json:9:11: SCH-004 warning: property 'q' admits strings of any length: add maxLength (or an enum, or a pattern that bounds it) (tool 'search')
 9 |           "q": {"type": "string", "description": "Words to find"},
   |           ^
small.json:10:40: SCH-011 warning: format 'uint32' is not a JSON Schema format: clients ignore it or warn (Ajv: unknown format), and nothing checks it (tool 'search') [fix: safe]
 10 |           "limit": {"type": "integer", "format": "uint32", "description": "Most results"}
    |                                        ^
small.json:16:7: DESC-001 info: tool has no description: models choose tools by their description (tool 'files.read')
 16 |       "name": "files.read",
    |       ^
small.json:16:7: TOOL-002 warning: name contains '.': OpenAI function names must match ^[a-zA-Z0-9_-]{1,64}$ (Anthropic's: no '.', at most 128) (tool 'files.read')
 16 |       "name": "files.read",
    |       ^
small.json:17:7: SCH-001 warning: object schema declares 1 property but has no "required", and not every one has a default: every argument is optional (tool 'files.read') [fix: unsafe]
 17 |       "inputSchema": {"type": "object", "properties": {"path": {"t…
    |       ^
small.json:17:7: SCH-002 warning: object schema is open (additionalProperties is absent): undeclared arguments are accepted (tool 'files.read') [fix: safe]
 17 |       "inputSchema": {"type": "object", "properties": {"path": {"t…
    |       ^
small.json:17:56: DESC-003 info: property 'path' has no description: the model reads it to know what to send (tool 'files.read')
 17 | …ema": {"type": "object", "properties": {"path": {"type": "string", "maxLength": 4096}}}
    |                                          ^
small.json:20:7: TOOL-003 critical: tool name 'search' is already used by the tool at line 4 (/tools/0) (tool 'search')
 20 |       "name": "search",
    |       ^
Found 9 problems in 3 tools in 1 file: 1 critical, 6 warnings, 2 info. 3 fixable with --fix, 1 more with --unsafe-fixes.
"#;

#[test]
fn text_output_reads_like_a_compiler() {
    let r = run(&["lint", "small.json", "--select", "ALL"]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert_eq!(r.stdout, SMALL_TEXT);
    assert_eq!(r.stderr, "");
}

#[test]
fn a_clean_catalog_exits_0() {
    let r = run(&["lint", "clean.json"]);
    assert_eq!(
        (r.code, r.stdout.as_str()),
        (0, "No problems in 1 tool in 1 file.\n")
    );
}

#[test]
fn json_output_is_one_document() {
    let r = run(&["lint", "small.json", "--format", "json", "--select", "ALL"]);
    assert_eq!(r.code, 1);
    let document: Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(
        document["summary"],
        serde_json::json!({"files": 1, "tools": 3, "critical": 1, "warning": 6, "info": 2, "errors": 0})
    );
    assert_eq!(document["errors"], serde_json::json!([]));
    let diagnostics = document["diagnostics"].as_array().unwrap();
    assert_eq!(diagnostics.len(), 9);
    assert_eq!(
        diagnostics[2],
        serde_json::json!({
            "code": "SCH-011",
            "severity": "warning",
            "file": "small.json",
            "tool": "search",
            "pointer": "/tools/0/inputSchema/properties/limit/format",
            "line": 10,
            "column": 40,
            "message": "format 'uint32' is not a JSON Schema format: clients ignore it or warn (Ajv: unknown format), and nothing checks it",
            "fix": "safe"
        })
    );
    let fixes: Vec<Option<&str>> = diagnostics.iter().map(|d| d["fix"].as_str()).collect();
    let (safe, not) = (Some("safe"), None);
    assert_eq!(
        fixes,
        [safe, not, safe, not, not, Some("unsafe"), safe, not, not]
    );
    // Keys in the documented order.
    let keys: Vec<&String> = diagnostics[0].as_object().unwrap().keys().collect();
    assert_eq!(
        keys,
        ["code", "severity", "file", "tool", "pointer", "line", "column", "message", "fix"]
    );
    let clean = run(&["lint", "clean.json", "--format", "json"]);
    let document: Value = serde_json::from_str(&clean.stdout).unwrap();
    assert_eq!(document["diagnostics"], serde_json::json!([]));
    assert_eq!(clean.code, 0);
}

#[test]
fn sarif_output_for_code_scanning() {
    let r = run(&[
        "lint",
        "small.json",
        "--format",
        "sarif",
        "--select",
        "SCH,TOOL-003",
    ]);
    assert_eq!(r.code, 1);
    let sarif: Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(sarif["version"], "2.1.0");
    let run = &sarif["runs"][0];
    assert_eq!(run["tool"]["driver"]["name"], "toolschema");
    assert_eq!(run["columnKind"], "unicodeCodePoints");
    let rules = run["tool"]["driver"]["rules"].as_array().unwrap();
    let ids: Vec<&str> = rules.iter().map(|r| r["id"].as_str().unwrap()).collect();
    assert_eq!(ids.len(), 15);
    assert_eq!((ids[0], ids[14]), ("SCH-001", "TOOL-003"));
    assert_eq!(rules[2]["defaultConfiguration"]["level"], "error");
    assert!(rules[2]["help"]["markdown"]
        .as_str()
        .unwrap()
        .contains("## Why it matters"));
    let results = run["results"].as_array().unwrap();
    let found: Vec<(&str, &str, u64, u64)> = results
        .iter()
        .map(|r| {
            let region = &r["locations"][0]["physicalLocation"]["region"];
            (
                r["ruleId"].as_str().unwrap(),
                r["level"].as_str().unwrap(),
                region["startLine"].as_u64().unwrap(),
                region["startColumn"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        found,
        [
            ("SCH-002", "warning", 6, 7),
            ("SCH-004", "warning", 9, 11),
            ("SCH-011", "warning", 10, 40),
            ("SCH-001", "warning", 17, 7),
            ("SCH-002", "warning", 17, 7),
            ("TOOL-003", "error", 20, 7),
        ]
    );
    let last = &results[5];
    assert_eq!(last["ruleIndex"], 14);
    assert_eq!(
        last["locations"][0]["physicalLocation"]["artifactLocation"]["uri"],
        "small.json"
    );
    assert_eq!(
        last["locations"][0]["logicalLocations"][0]["fullyQualifiedName"],
        "/tools/2/name"
    );
    assert_eq!(
        last["message"]["text"],
        "tool name 'search' is already used by the tool at line 4 (/tools/0) (tool 'search')"
    );
}

#[test]
fn github_output_is_workflow_annotations() {
    let r = run(&[
        "lint",
        "small.json",
        "--format",
        "github",
        "--select",
        "SCH-011,TOOL,DESC-003",
    ]);
    assert_eq!(r.code, 1);
    assert_eq!(
        r.stdout,
        "::warning file=small.json,line=10,col=40,title=SCH-011 nonstandard-format::format 'uint32' is not a JSON Schema format: clients ignore it or warn (Ajv: unknown format), and nothing checks it (tool 'search')
::warning file=small.json,line=16,col=7,title=TOOL-002 name-clients-reject::name contains '.': OpenAI function names must match ^[a-zA-Z0-9_-]{1,64}$ (Anthropic's: no '.', at most 128) (tool 'files.read')
::notice file=small.json,line=17,col=56,title=DESC-003 property-description::property 'path' has no description: the model reads it to know what to send (tool 'files.read')
::error file=small.json,line=20,col=7,title=TOOL-003 duplicate-name::tool name 'search' is already used by the tool at line 4 (/tools/0) (tool 'search')
Found 4 problems in 3 tools in 1 file: 1 critical, 2 warnings, 1 info. 1 fixable with --fix.
"
    );
}

#[test]
fn select_ignore_and_fail_on_decide_the_exit_code() {
    let codes = |args: &[&str]| {
        let mut all = vec!["lint", "small.json", "--format", "json"];
        all.extend_from_slice(args);
        let r = run(&all);
        let document: Value = serde_json::from_str(&r.stdout).unwrap();
        let found: Vec<String> = document["diagnostics"]
            .as_array()
            .unwrap()
            .iter()
            .map(|d| d["code"].as_str().unwrap().to_string())
            .collect();
        (r.code, found)
    };
    assert_eq!(
        codes(&["--select", "sch-00"]),
        (
            1,
            vec![
                "SCH-002".into(),
                "SCH-004".into(),
                "SCH-001".into(),
                "SCH-002".into()
            ]
        )
    );
    assert_eq!(
        codes(&["--select", "SCH-001", "--select", "DESC-003"]),
        (1, vec!["SCH-001".into(), "DESC-003".into()])
    );
    // Only infos left: the default --fail-on warning passes, --fail-on info fails.
    assert_eq!(
        codes(&["--select", "DESC-003"]),
        (0, vec!["DESC-003".into()])
    );
    assert_eq!(
        codes(&["--select", "DESC-003", "--fail-on", "info"]),
        (1, vec!["DESC-003".into()])
    );
    // Warnings do not fail a run that fails on critical; the duplicate name does.
    assert_eq!(
        codes(&["--ignore", "TOOL-003", "--fail-on", "critical"]).0,
        0
    );
    assert_eq!(codes(&["--fail-on", "critical"]).0, 1);
    assert_eq!(codes(&["--ignore", "SCH,TOOL,DESC"]), (0, vec![]));
}

#[test]
fn unknown_rule_codes_are_bad_input() {
    let r = run(&["lint", "small.json", "--select", "SCH-100"]);
    assert_eq!(r.code, 2);
    assert_eq!(
        r.stderr,
        "error: command line: unknown rule code or prefix 'SCH-100' (did you mean 'SCH-010'?)\n"
    );
    let r = run(&["lint", "small.json", "--fail-on", "error"]);
    assert_eq!(r.code, 2);
    assert!(r
        .stderr
        .contains("unknown severity 'error': use critical, warning or info"));
}

#[test]
fn settings_come_from_toolschema_toml_found_upward() {
    let root = tempfile::tempdir().unwrap();
    let nested = root.path().join("servers/search");
    std::fs::create_dir_all(&nested).unwrap();
    std::fs::copy(fixtures().join("small.json"), nested.join("tools.json")).unwrap();
    std::fs::write(
        root.path().join("toolschema.toml"),
        "[lint]\nselect = [\"TOOL\", \"DESC\"]\nignore = [\"DESC-003\"]\nfail-on = \"critical\"\n",
    )
    .unwrap();
    let r = run_in(&nested, &["lint", "tools.json", "--format", "github"], None);
    assert_eq!(r.code, 1, "{}", r.stderr);
    let titles: Vec<&str> = r
        .stdout
        .lines()
        .filter_map(|l| l.split("title=").nth(1))
        .map(|t| t.split("::").next().unwrap())
        .collect();
    assert_eq!(
        titles,
        [
            "DESC-001 missing-description",
            "TOOL-002 name-clients-reject",
            "TOOL-003 duplicate-name"
        ]
    );
    // The command line layers on top: ignoring the critical leaves only warnings, which pass.
    let r = run_in(
        &nested,
        &["lint", "tools.json", "--ignore", "TOOL-003"],
        None,
    );
    assert_eq!(r.code, 0, "{}", r.stdout);
    // --select starts over from the command line's codes.
    let r = run_in(
        &nested,
        &[
            "lint",
            "tools.json",
            "--select",
            "DESC-003",
            "--format",
            "json",
        ],
        None,
    );
    let document: Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(document["diagnostics"][0]["code"], "DESC-003");
    // --config names a file instead.
    let other = root.path().join("strict.toml");
    std::fs::write(
        &other,
        "[lint]\nselect = [\"DESC-003\"]\nfail-on = \"info\"\n",
    )
    .unwrap();
    let r = run_in(
        &nested,
        &[
            "lint",
            "tools.json",
            "--config",
            other.to_str().unwrap(),
            "--format",
            "json",
        ],
        None,
    );
    assert_eq!(r.code, 1);
    let document: Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(document["summary"]["info"], 1);
    assert_eq!(document["summary"]["warning"], 0);
}

#[test]
fn a_broken_toolschema_toml_is_bad_input_with_its_position() {
    let root = tempfile::tempdir().unwrap();
    std::fs::copy(
        fixtures().join("clean.json"),
        root.path().join("tools.json"),
    )
    .unwrap();
    std::fs::write(
        root.path().join("toolschema.toml"),
        "[lint]\nselect = [\"SCH\"\n",
    )
    .unwrap();
    let r = run_in(root.path(), &["lint", "tools.json"], None);
    assert_eq!(r.code, 2);
    assert!(
        r.stderr.starts_with(&format!(
            "error: {}: TOML parse error at line 2",
            root.path().join("toolschema.toml").display()
        )),
        "{}",
        r.stderr
    );
    std::fs::write(
        root.path().join("toolschema.toml"),
        "[lint]\nselct = [\"SCH\"]\n",
    )
    .unwrap();
    let r = run_in(root.path(), &["lint", "tools.json"], None);
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("unknown field `selct`"), "{}", r.stderr);
    // The proxy's table shares the file: lint leaves it to the proxy, but still refuses a
    // table nobody reads.
    std::fs::write(
        root.path().join("toolschema.toml"),
        "[lint]\nignore = [\"DESC-003\"]\n\n[proxy.overrides.search]\ndescription = \"Search.\"\n",
    )
    .unwrap();
    let r = run_in(root.path(), &["lint", "tools.json"], None);
    assert_ne!(r.code, 2, "{}", r.stderr);
    std::fs::write(
        root.path().join("toolschema.toml"),
        "[lnt]\nselect = [\"SCH\"]\n",
    )
    .unwrap();
    let r = run_in(root.path(), &["lint", "tools.json"], None);
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("unknown field `lnt`"), "{}", r.stderr);
    std::fs::write(
        root.path().join("toolschema.toml"),
        "[lint]\nignore = [\"DESK\"]\n",
    )
    .unwrap();
    let r = run_in(root.path(), &["lint", "tools.json"], None);
    assert_eq!(r.code, 2);
    assert!(
        r.stderr.ends_with(
            "toolschema.toml: unknown rule code or prefix 'DESK' (did you mean 'DESC'?)\n"
        ),
        "{}",
        r.stderr
    );
}

#[test]
fn malformed_files_are_bad_input_with_line_and_column() {
    let root = tempfile::tempdir().unwrap();
    std::fs::write(
        root.path().join("broken.json"),
        "{\"tools\": [\n  {\"name\": \"a\",}\n]}",
    )
    .unwrap();
    let r = run_in(root.path(), &["lint", "broken.json"], None);
    assert_eq!(r.code, 2);
    assert_eq!(
        r.stdout,
        "broken.json:2:16: error: invalid JSON: expected an object key in double quotes\n\
         No problems in 0 tools in 0 files. 1 file could not be linted.\n"
    );
    assert_eq!(r.stderr, "");
    let r = run_in(root.path(), &["lint", "missing.json"], None);
    assert_eq!(r.code, 2);
    assert!(
        r.stdout.starts_with("missing.json: error: cannot read:"),
        "{}",
        r.stdout
    );
    // A duplicate key inside one tool is found when that tool is read.
    std::fs::write(
        root.path().join("dup.json"),
        "[{\"name\": \"a\", \"name\": \"b\"}]",
    )
    .unwrap();
    let r = run_in(root.path(), &["lint", "dup.json"], None);
    assert_eq!(r.code, 2);
    assert!(
        r.stdout
            .starts_with("dup.json:1:16: error: invalid JSON: duplicate key 'name' in an object\n"),
        "{}",
        r.stdout
    );
    // Deep nesting is refused, not a crash.
    let deep = format!(
        "[{{\"name\": \"a\", \"inputSchema\": {}{}}}]",
        "[".repeat(5000),
        "]".repeat(5000)
    );
    std::fs::write(root.path().join("deep.json"), deep).unwrap();
    let r = run_in(root.path(), &["lint", "deep.json"], None);
    assert_eq!(r.code, 2);
    assert!(
        r.stdout.contains("nests deeper than 128 levels"),
        "{}",
        r.stdout
    );
}

#[test]
fn directories_and_standard_input() {
    let root = tempfile::tempdir().unwrap();
    let servers = root.path().join("servers");
    std::fs::create_dir_all(servers.join("node_modules")).unwrap();
    std::fs::copy(fixtures().join("clean.json"), servers.join("b.json")).unwrap();
    std::fs::copy(fixtures().join("small.json"), servers.join("a.json")).unwrap();
    std::fs::write(servers.join("package.json"), "{\"name\": \"x\"}").unwrap();
    std::fs::write(servers.join("node_modules/c.json"), "not even json").unwrap();
    let r = run_in(root.path(), &["lint", "servers", "--format", "json"], None);
    assert_eq!(r.code, 1, "{}", r.stderr);
    let document: Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(document["summary"]["files"], 2);
    assert_eq!(document["summary"]["tools"], 4);
    assert_eq!(document["diagnostics"][0]["file"], "servers/a.json");
    assert_eq!(
        r.stderr,
        "note: skipped servers/package.json: not a tool catalog\n"
    );

    let r = run_in(
        root.path(),
        &["lint", "-"],
        Some(&fixture_text("small.json")),
    );
    assert_eq!(r.code, 1);
    assert!(
        r.stdout.starts_with("<stdin>:6:7: SCH-002 warning:"),
        "{}",
        r.stdout
    );
}

#[test]
fn fix_prints_the_fixed_catalog_keeping_every_other_byte() {
    let r = run(&["lint", "fix_layout.json", "--fix"]);
    assert_eq!(r.stdout, fixture_text("fix_layout.fixed.json"));
    // What the safe fixes leave (an unsafe fix) goes to standard error, and fails the run.
    assert_eq!(r.code, 1);
    assert!(
        r.stderr
            .starts_with("fix_layout.json:13:25: SCH-001 warning:"),
        "{}",
        r.stderr
    );
    assert!(r.stderr.ends_with("Fixed 4 problems. Found 2 problems in 3 tools in 1 file: 0 critical, 2 warnings, 0 info. 2 fixable with --fix --unsafe-fixes.\n"), "{}", r.stderr);

    let r = run(&["lint", "fix_layout.json", "--fix", "--unsafe-fixes"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(r.stdout, fixture_text("fix_layout.unsafe.json"));
    assert_eq!(
        r.stderr,
        "Fixed 6 problems. No problems in 3 tools in 1 file.\n"
    );
}

#[test]
fn fixes_keep_key_order_and_never_touch_allof_branches() {
    let original: Value = serde_json::from_str(&fixture_text("fix_layout.json")).unwrap();
    let fixed: Value = serde_json::from_str(&fixture_text("fix_layout.unsafe.json")).unwrap();
    let keys = |v: &Value| v.as_object().unwrap().keys().cloned().collect::<Vec<_>>();
    let (before, after) = (&original["tools"][0], &fixed["tools"][0]);
    assert_eq!(keys(before), keys(after));
    assert_eq!(keys(after), ["name", "inputSchema", "description"]);
    assert_eq!(
        keys(&after["inputSchema"]),
        [
            "required",
            "type",
            "properties",
            "$schema",
            "additionalProperties"
        ]
    );
    assert_eq!(keys(&after["inputSchema"]["properties"]), ["path", "edits"]);
    // The allOf branches are byte for byte what they were.
    let branches = "                    {\"properties\": {\"id\": {\"type\": \"integer\", \"description\": \"Profile id\"}}, \"required\": [\"id\"]},\n                    {\"properties\": {\"nick\": {\"type\": \"string\", \"maxLength\": 40, \"description\": \"Nickname\"}}}\n";
    assert!(fixture_text("fix_layout.json").contains(branches));
    assert!(fixture_text("fix_layout.unsafe.json").contains(branches));
    assert_eq!(
        original["tools"][1]["inputSchema"]["allOf"],
        fixed["tools"][1]["inputSchema"]["allOf"]
    );
}

#[test]
fn fixing_a_fixed_file_changes_nothing() {
    for (file, flags) in [
        ("fix_layout.fixed.json", vec!["--fix"]),
        ("fix_layout.unsafe.json", vec!["--fix", "--unsafe-fixes"]),
    ] {
        let mut args = vec!["lint", file];
        args.extend(flags);
        let r = run(&args);
        assert_eq!(r.stdout, fixture_text(file), "{file}");
        assert!(!r.stderr.contains("Fixed"), "{}", r.stderr);
    }
}

#[test]
fn write_rewrites_in_place_byte_identical_to_fix_output() {
    let root = tempfile::tempdir().unwrap();
    for unsafe_fixes in [false, true] {
        let target = root.path().join("tools.json");
        std::fs::copy(fixtures().join("fix_layout.json"), &target).unwrap();
        let mut fix = vec!["lint", "tools.json", "--fix"];
        let mut write = vec!["lint", "tools.json", "--write", "--format", "json"];
        if unsafe_fixes {
            fix.push("--unsafe-fixes");
            write.push("--unsafe-fixes");
        }
        let printed = run_in(root.path(), &fix, None).stdout;
        let r = run_in(root.path(), &write, None);
        assert_eq!(std::fs::read_to_string(&target).unwrap(), printed);
        // The report covers what is left.
        let document: Value = serde_json::from_str(&r.stdout).unwrap();
        let left = if unsafe_fixes { 0 } else { 2 };
        assert_eq!(document["diagnostics"].as_array().unwrap().len(), left);
        assert_eq!(r.code, i32::from(left > 0));
        // Writing again changes nothing.
        run_in(root.path(), &write, None);
        assert_eq!(std::fs::read_to_string(&target).unwrap(), printed);
    }
    // No temporary file is left behind.
    let names: Vec<_> = std::fs::read_dir(root.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    assert_eq!(names, ["tools.json"]);
}

#[test]
fn fix_refuses_what_it_cannot_do() {
    let r = run(&["lint", "small.json", "clean.json", "--fix"]);
    assert_eq!(r.code, 2);
    assert_eq!(
        r.stderr,
        "error: --fix prints the fixed catalog on standard output, so it takes one file; use --write to fix files in place, or --diff to see the changes\n"
    );
    let r = run_in(&fixtures(), &["lint", "-", "--write"], Some("[]"));
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("--write cannot rewrite standard input"));
    // A file that does not parse is never rewritten.
    let root = tempfile::tempdir().unwrap();
    std::fs::write(root.path().join("bad.json"), "{\"tools\": [}").unwrap();
    let r = run_in(root.path(), &["lint", "bad.json", "--write"], None);
    assert_eq!(r.code, 2);
    assert_eq!(
        std::fs::read_to_string(root.path().join("bad.json")).unwrap(),
        "{\"tools\": [}"
    );
}

/// A folder of real catalogs beside JSON that is no catalog (`{"tools": {}}`, a package.json):
/// the others are skipped with a note, and the exit status comes from the real catalogs' findings.
#[test]
fn the_real_catalogs() {
    let root = tempfile::tempdir().unwrap();
    let servers = root.path().join("servers");
    std::fs::create_dir(&servers).unwrap();
    for name in support::REAL_CATALOGS {
        std::fs::copy(
            support::real_catalog_path(name),
            servers.join(format!("{name}.json")),
        )
        .unwrap();
    }
    std::fs::write(servers.join("not-tools.json"), "{\"tools\": {}}").unwrap();
    std::fs::write(servers.join("package.json"), "{\"name\": \"x\"}").unwrap();
    let r = run_in(root.path(), &["lint", "servers", "--format", "json"], None);
    assert_eq!(
        r.stderr,
        "note: skipped servers/not-tools.json: not a tool catalog\n\
         note: skipped servers/package.json: not a tool catalog\n"
    );
    assert_eq!(r.code, 1, "{}", r.stderr);
    let document: Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(
        document["summary"],
        serde_json::json!({"files": 6, "tools": 51, "critical": 0, "warning": 57, "info": 0, "errors": 0})
    );
    let mut counts = std::collections::BTreeMap::new();
    for d in document["diagnostics"].as_array().unwrap() {
        *counts
            .entry(d["code"].as_str().unwrap().to_string())
            .or_insert(0) += 1;
    }
    let counts: Vec<(&str, i32)> = counts.iter().map(|(k, v)| (k.as_str(), *v)).collect();
    // The default rules find only open objects (each judged right), and every one has a safe
    // fix: after --write the six real servers pass.
    assert_eq!(counts, [("SCH-002", 57)]);
    let r = run_in(root.path(), &["lint", "servers", "--write", "-q"], None);
    assert_eq!((r.code, r.stdout.as_str()), (0, ""), "{}", r.stderr);
    let r = run_in(root.path(), &["lint", "servers"], None);
    assert_eq!(r.code, 0, "{}", r.stdout);
    assert!(
        r.stdout.ends_with("No problems in 51 tools in 6 files.\n"),
        "{}",
        r.stdout
    );
}

#[test]
fn rules_lists_every_rule() {
    let r = run(&["rules"]);
    assert_eq!(r.code, 0);
    let lines: Vec<&str> = r.stdout.lines().collect();
    assert_eq!(
        lines[0],
        "CODE        SEVERITY  SET       FIX          NAME                    SUMMARY"
    );
    assert_eq!(
        lines[1],
        "SCH-001     warning   default   unsafe       missing-required        An object schema requires none of its properties, and not all of them have a `default`."
    );
    assert_eq!(
        lines[2],
        "SCH-002     warning   default   safe/unsafe  open-object             An object schema declares its properties but accepts others too."
    );
    assert_eq!(lines.len(), 1 + toolschema::lint::RULES.len() + 3);
    // Aligned: every column of every row starts where its header does, after two spaces (the
    // longest code, COMPAT-001, and name, provider-drops-keyword, included).
    let starts: Vec<usize> = ["SEVERITY", "SET ", "FIX", "NAME", "SUMMARY"]
        .iter()
        .map(|h| lines[0].find(h).unwrap())
        .collect();
    for line in &lines[1..=toolschema::lint::RULES.len()] {
        for &start in &starts {
            assert_eq!(&line[start - 2..start], "  ", "{line}");
            assert_ne!(&line[start..start + 1], " ", "{line}");
        }
    }
    for rule in toolschema::lint::RULES {
        assert!(r.stdout.contains(rule.code()), "{}", rule.code());
    }
    let r = run(&["rules", "--format", "json"]);
    let rules: Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(
        rules.as_array().unwrap().len(),
        toolschema::lint::RULES.len()
    );
    assert_eq!(
        rules[12],
        serde_json::json!({
            "code": "SCH-013",
            "name": "lightweight-shape",
            "severity": "info",
            "set": "default",
            "fixes": ["safe"],
            "summary": "`inputSchema` is written in a lightweight shape that clients cannot read."
        })
    );
}

#[test]
fn rule_prints_the_rules_own_documentation() {
    let r = run(&["rule", "sch-003"]);
    assert_eq!(r.code, 0);
    let rule = toolschema::lint::rule("SCH-003").unwrap();
    assert_eq!(
        r.stdout,
        format!(
            "SCH-003 untyped-property\nseverity: critical, set: default, fix: none\n\n{}",
            rule.documentation()
        )
    );
    assert!(r
        .stdout
        .contains("## What it flags\nA property (a member of `properties`"));
    let r = run(&["rule", "shc-003"]);
    assert_eq!(r.code, 2);
    assert_eq!(
        r.stderr,
        "error: unknown rule 'shc-003' (did you mean 'SCH-003'?)\n"
    );
}

/// A tool whose whole inputSchema is `{"type": "object"}` declares no argument and accepts any:
/// flagged at the default rules, closed only by the unsafe fix, documented by `rule`.
#[test]
fn a_no_argument_tool_left_open_is_flagged_and_closed_only_by_an_unsafe_fix() {
    let dir = tempfile::tempdir().unwrap();
    let catalog = "{\"tools\": [\n  {\"name\": \"get_time\", \"description\": \"Says the time now.\", \"inputSchema\": {\"type\": \"object\"}}\n]}\n";
    std::fs::write(dir.path().join("t.json"), catalog).unwrap();
    let r = run_in(dir.path(), &["lint", "t.json"], None);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert_eq!(
        r.stdout,
        "t.json:2:61: SCH-014 warning: inputSchema declares no arguments and accepts any: a model may invent arguments no validator refuses (a tool without arguments takes {\"type\": \"object\", \"additionalProperties\": false}) (tool 'get_time') [fix: unsafe]\n \
         2 | …\", \"description\": \"Says the time now.\", \"inputSchema\": {\"type\": \"object\"}}\n   \
         |                                          ^\n\
         Found 1 problem in 1 tool in 1 file: 0 critical, 1 warning, 0 info. 1 fixable with --fix --unsafe-fixes.\n"
    );
    // The safe fixes leave it open; the unsafe ones close it, and the lint then passes.
    let r = run_in(dir.path(), &["lint", "t.json", "--write"], None);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert_eq!(
        std::fs::read_to_string(dir.path().join("t.json")).unwrap(),
        catalog
    );
    let r = run_in(
        dir.path(),
        &["lint", "t.json", "--write", "--unsafe-fixes"],
        None,
    );
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    assert_eq!(
        std::fs::read_to_string(dir.path().join("t.json")).unwrap(),
        catalog.replace(
            "{\"type\": \"object\"}",
            "{\"type\": \"object\", \"additionalProperties\": false}"
        )
    );
    let r = run(&["rule", "SCH-014"]);
    assert_eq!(r.code, 0);
    assert!(
        r.stdout.starts_with(
            "SCH-014 open-no-arguments\nseverity: warning, set: default, fix: unsafe\n\n"
        ),
        "{}",
        r.stdout
    );
    assert!(r.stdout.contains("## Fix\nThe unsafe fix"), "{}", r.stdout);
}

#[test]
fn a_catalog_with_a_byte_order_mark_and_a_lone_surrogate_is_linted() {
    let dir = tempfile::tempdir().unwrap();
    // What JavaScript writes when a description is cut through an emoji: valid JSON.
    let catalog = "\u{feff}[{\"name\": \"count\", \"description\": \"Counts things that the caller names \\ud83d\", \"inputSchema\": {\"type\": \"object\", \"properties\": {\"n\": {\"type\": \"integer\", \"description\": \"How many\"}}, \"required\": [\"n\"], \"additionalProperties\": false}}]";
    std::fs::write(dir.path().join("cut.json"), catalog).unwrap();
    let r = run_in(dir.path(), &["lint", "cut.json", "--format", "json"], None);
    assert_ne!(r.code, 2, "{}{}", r.stdout, r.stderr);
    let report: Value = serde_json::from_str(&r.stdout).unwrap();
    assert!(report.is_array() || report.is_object(), "{report}");
    assert!(!r.stderr.contains("error"), "{}", r.stderr);
}

/// `--fix` leaves an object open where closing it would refuse an instance the schema accepted:
/// a float `minProperties` beyond the declared properties, an object `const`/`enum` with
/// undeclared members, a `not` of a `not` that declares a member, a `not` that requires one, a
/// `minProperties` the declared properties cannot meet because one accepts no value or
/// `propertyNames` refuses its name.
#[test]
fn safe_fixes_leave_open_what_closing_would_break() {
    let dir = tempfile::tempdir().unwrap();
    let catalog = |schema: &str| {
        format!(
            "{{\"tools\": [{{\"name\": \"t\", \"description\": \"Finds pages.\", \"inputSchema\": {schema}}}]}}\n"
        )
    };
    let x = r#""properties": {"x": {"type": "string"}}"#;
    const D2020: &str = "https://json-schema.org/draft/2020-12/schema";
    for (i, schema) in [
        format!(r#"{{"type": "object", {x}, "minProperties": 2.0}}"#),
        format!(r#"{{"type": "object", {x}, "const": {{"x": "1", "b": "2"}}}}"#),
        format!(r#"{{"type": "object", {x}, "enum": [{{"x": "1", "b": "2"}}, {{"x": "3"}}]}}"#),
        format!(r#"{{"type": "object", {x}, "not": {{"not": {{"required": ["b"]}}}}}}"#),
        format!(r#"{{"type": "object", {x}, "not": {{"properties": {{"b": false}}}}}}"#),
        format!(
            r#"{{"type": "object", "properties": {{"v": {{"type": "object", {x}}}}}, "not": {{"not": {{"properties": {{"v": {{"properties": {{"b": {{}}}}}}}}}}}}, "additionalProperties": false}}"#
        ),
        // `minProperties` only undeclared members can meet: closing would accept nothing.
        format!(r#"{{"$schema": "{D2020}", "type": "object", "properties": {{"a": false}}, "minProperties": 1}}"#),
        format!(
            r#"{{"$schema": "{D2020}", "type": "object", "properties": {{"a": {{}}}}, "minProperties": 1, "propertyNames": {{"pattern": "^b"}}}}"#
        ),
        format!(
            r#"{{"$schema": "{D2020}", "type": "object", "properties": {{"a": {{"not": {{}}}}}}, "minProperties": 1}}"#
        ),
        format!(
            r#"{{"$schema": "{D2020}", "type": "object", "properties": {{"a": {{"type": "string"}}}}, "minProperties": 1, "propertyNames": {{"maxLength": 0}}}}"#
        ),
    ]
    .iter()
    .enumerate()
    {
        let text = catalog(schema);
        let name = format!("case{i}.json");
        std::fs::write(dir.path().join(&name), &text).unwrap();
        let r = run_in(dir.path(), &["lint", &name, "--fix"], None);
        assert_eq!(r.stdout, text, "{schema}: {}", r.stderr);
        let r = run_in(dir.path(), &["lint", &name, "--select", "SCH-002"], None);
        assert!(
            r.stdout.contains("SCH-002") && !r.stdout.contains("[fix: safe]"),
            "{schema}: {}",
            r.stdout
        );
    }
    // Where the declared properties are enough, `2.0` counts as 2 and the object is closed.
    let text =
        catalog(r#"{"type": "object", "properties": {"x": {}, "y": {}}, "minProperties": 2.0}"#);
    std::fs::write(dir.path().join("enough.json"), &text).unwrap();
    let r = run_in(dir.path(), &["lint", "enough.json", "--fix"], None);
    assert_eq!(
        r.stdout,
        text.replace("2.0}", "2.0, \"additionalProperties\": false}"),
        "{}",
        r.stderr
    );
}

/// A `$ref` beside annotations only (`description`, OpenAPI's `example`, `contentMediaType`) is
/// a plain use of its target, which the safe fix closes as it would the schema written in place;
/// beside a keyword that constrains (`minProperties`), the target is left open.
#[test]
fn a_ref_beside_annotations_only_is_a_plain_use_and_its_target_is_closed() {
    let dir = tempfile::tempdir().unwrap();
    for (i, beside) in [
        r#""description": "The options.""#,
        r#""example": {"x": "1"}"#,
        r#""contentMediaType": "application/json""#,
        r#""minProperties": 1"#,
    ]
    .iter()
    .enumerate()
    {
        let text = format!(
            "{{\"tools\": [{{\"name\": \"t\", \"description\": \"Finds pages.\", \"inputSchema\": {{\"type\": \"object\", \"properties\": {{\"o\": {{\"$ref\": \"#/$defs/o\", {beside}}}}}, \"additionalProperties\": false, \"$defs\": {{\"o\": {{\"type\": \"object\", \"properties\": {{\"x\": {{\"type\": \"string\", \"maxLength\": 9}}}}}}}}}}}}]}}\n"
        );
        let name = format!("case{i}.json");
        std::fs::write(dir.path().join(&name), &text).unwrap();
        let r = run_in(dir.path(), &["lint", &name, "--fix"], None);
        let closed = text.replace(
            "\"maxLength\": 9}}}",
            "\"maxLength\": 9}}, \"additionalProperties\": false}",
        );
        let expected = if beside.contains("minProperties") {
            &text
        } else {
            &closed
        };
        assert_eq!(&r.stdout, expected, "{beside}: {}", r.stderr);
    }
}

/// An `inputSchema` that says `"type": "object"` beside names and annotations only (`$id`,
/// `$dynamicAnchor`, OpenAPI's `example`) declares no arguments and accepts any.
#[test]
fn a_no_argument_tool_with_annotations_beside_is_flagged() {
    let dir = tempfile::tempdir().unwrap();
    let catalog = "{\"tools\": [{\"name\": \"get_time\", \"description\": \"Says the time now.\", \"inputSchema\": {\"$schema\": \"https://json-schema.org/draft/2020-12/schema\", \"$dynamicAnchor\": \"args\", \"type\": \"object\", \"example\": {}}}]}\n";
    std::fs::write(dir.path().join("t.json"), catalog).unwrap();
    let r = run_in(dir.path(), &["lint", "t.json", "--select", "SCH-014"], None);
    assert_eq!(r.code, 1, "{}{}", r.stdout, r.stderr);
    assert!(
        r.stdout
            .contains("SCH-014 warning: inputSchema declares no arguments and accepts any"),
        "{}",
        r.stdout
    );
}

/// Persian and Hindi spell words with zero-width (non-)joiners: SEC-001 leaves those alone, and
/// still flags one between ASCII letters, or two in a row.
#[test]
fn joiners_inside_persian_and_hindi_words_are_not_hidden_text() {
    let dir = tempfile::tempdir().unwrap();
    let catalog = |description: &str| {
        format!(
            "{{\"tools\": [{{\"name\": \"search_docs\", \"description\": \"{description}\", \"inputSchema\": {{\"type\": \"object\", \"additionalProperties\": false}}}}]}}\n"
        )
    };
    // "Search in the documents" (Persian, U+200C), "field name" (Hindi, U+200D).
    for (name, description) in [
        ("persian.json", "\\u062c\\u0633\\u062a\\u200c\\u0648\\u062c\\u0648 \\u062f\\u0631 \\u0645\\u0633\\u062a\\u0646\\u062f\\u0627\\u062a"),
        ("hindi.json", "\u{0915}\u{094D}\u{200D}\u{0937}\u{0947}\u{0924}\u{094D}\u{0930} \u{0915}\u{093E} \u{0928}\u{093E}\u{092E}"),
    ] {
        std::fs::write(dir.path().join(name), catalog(description)).unwrap();
        let r = run_in(dir.path(), &["lint", name], None);
        assert_eq!(
            (r.code, r.stdout.as_str()),
            (0, "No problems in 1 tool in 1 file.\n"),
            "{name}"
        );
    }
    for description in [
        "Reads a pass\u{200C}word file.",
        "\u{0645}\u{06CC}\u{200C}\u{200C}\u{062E}\u{0648}\u{0627}\u{0647}\u{0645}",
        "\u{0645}\u{06CC}\u{200C}a",
    ] {
        std::fs::write(dir.path().join("smuggled.json"), catalog(description)).unwrap();
        let r = run_in(dir.path(), &["lint", "smuggled.json"], None);
        assert_eq!(r.code, 1, "{description:?}: {}", r.stdout);
        assert!(
            r.stdout.contains("SEC-001 critical") && r.stdout.contains("U+200C"),
            "{}",
            r.stdout
        );
    }
}

/// `n` tools that trip several rules, with characters of every width and a name used again every
/// 700 tools (so the duplicate-name findings point back at earlier tools).
fn many_tools(n: usize) -> Vec<String> {
    (0..n)
        .map(|i| {
            let name = if i % 700 == 699 { 0 } else { i };
            format!(
                r#"{{"name": "search_{name}", "description": "Sé😀rch {i}.", "inputSchema": {{"type": "object", "properties": {{"q": {{"type": "string", "format": "uint32"}}, "n": {{"type": "integer"}}}}}}}}"#
            )
        })
        .collect()
}

#[test]
fn a_large_file_is_linted_in_pieces_as_its_whole_text_is() {
    // Files over the size read at a time (256 KiB) are checked a block at a time and their tools
    // read back a few at a time; standard input is read whole. Both say the same.
    let root = tempfile::tempdir().unwrap();
    let tools = many_tools(4000);
    let pretty = format!("{{\"tools\": [\n  {}\n]}}\n", tools.join(",\n  "));
    let one_line = format!(
        "{{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{{\"tools\":[{}]}}}}",
        tools.join(",")
    );
    let mut broken = pretty.clone();
    let error_at = broken.len() - 2000;
    broken.insert_str(error_at, "\"x\": ");
    let error_line = broken[..error_at].matches('\n').count() + 1;
    for (name, text) in [
        ("pretty.json", &pretty),
        ("one-line.json", &one_line),
        ("broken.json", &broken),
    ] {
        assert!(text.len() > 600 << 10);
        std::fs::write(root.path().join(name), text).unwrap();
        for format in ["text", "json"] {
            let args = ["lint", "--select", "ALL", "--format", format];
            let file = run_in(root.path(), &[&args[..], &[name]].concat(), None);
            let stdin = run_in(root.path(), &[&args[..], &["-"]].concat(), Some(text));
            let expected_code = if name == "broken.json" { 2 } else { 1 };
            assert_eq!(file.code, expected_code, "{name}: {}", file.stderr);
            assert_eq!(file.stdout, stdin.stdout.replace("<stdin>", name), "{name}");
            assert_eq!(file.stderr, stdin.stderr.replace("<stdin>", name), "{name}");
            if name != "broken.json" && format == "text" {
                assert!(file.stdout.contains("TOOL-003"), "{name}");
                assert!(file.stdout.lines().count() > 4000 * 3, "{name}");
            }
        }
    }
    // Found in a directory, the same.
    let alone = run_in(
        root.path(),
        &["lint", "--select", "ALL", "one-line.json"],
        None,
    );
    let found = run_in(root.path(), &["lint", "--select", "ALL", "."], None);
    let lines = |text: &str| -> Vec<String> {
        let text = text.replace("./one-line.json", "one-line.json");
        let kept = text
            .lines()
            .skip_while(|l| !l.starts_with("one-line.json:"));
        kept.take_while(|l| !l.starts_with("./") && !l.starts_with("Found"))
            .map(str::to_string)
            .collect()
    };
    assert_eq!(found.code, 2, "{}", found.stderr);
    assert!(lines(&alone.stdout).len() > 4000 * 3);
    assert_eq!(lines(&found.stdout), lines(&alone.stdout));
    let r = run_in(root.path(), &["lint", "broken.json"], None);
    assert!(
        r.stdout.contains(&format!("broken.json:{error_line}:")),
        "{}",
        r.stdout
    );
    assert!(
        !r.stdout.contains("SCH-"),
        "nothing is printed before a later error"
    );
}

#[cfg(unix)]
#[test]
fn a_named_pipe_is_read_whole_once() {
    let root = tempfile::tempdir().unwrap();
    let pipe = root.path().join("tools.json");
    let made = std::process::Command::new("mkfifo").arg(&pipe).status();
    assert!(made.as_ref().is_ok_and(|s| s.success()), "mkfifo: {made:?}");
    let text = format!("{{\"tools\": [{}]}}", many_tools(3).join(", "));
    let writer = {
        let (pipe, text) = (pipe.clone(), text.clone());
        std::thread::spawn(move || std::fs::write(pipe, text))
    };
    let from_pipe = run_in(root.path(), &["lint", "tools.json"], None);
    writer.join().unwrap().unwrap();
    let from_stdin = run_in(root.path(), &["lint", "-"], Some(&text));
    assert_eq!(from_pipe.code, 1, "{}", from_pipe.stderr);
    assert_eq!(
        from_pipe.stdout,
        from_stdin.stdout.replace("<stdin>", "tools.json")
    );
}

#[cfg(unix)]
#[test]
fn a_directory_gives_only_its_regular_files_never_a_pipe_or_a_device() {
    let root = tempfile::tempdir().unwrap();
    let servers = root.path().join("servers");
    std::fs::create_dir(&servers).unwrap();
    std::fs::copy(fixtures().join("small.json"), servers.join("a.json")).unwrap();
    // A link to a regular file counts; a link to a device, a named pipe nobody writes to, and
    // a link to a directory do not (the first two were opened and read: forever, or until the
    // read bound; the pipe hung the whole run before anything was printed).
    std::os::unix::fs::symlink(servers.join("a.json"), servers.join("b.json")).unwrap();
    std::os::unix::fs::symlink("/dev/zero", servers.join("zero.json")).unwrap();
    std::os::unix::fs::symlink(root.path(), servers.join("up.json")).unwrap();
    let made = std::process::Command::new("mkfifo")
        .arg(servers.join("pipe.json"))
        .status();
    assert!(made.as_ref().is_ok_and(|s| s.success()), "mkfifo: {made:?}");
    // A dangling link is still reported as unreadable, not skipped.
    std::os::unix::fs::symlink(servers.join("gone"), servers.join("gone.json")).unwrap();

    // (Killed after 60 s, with code -1, were it to hang.)
    let r = run_in(root.path(), &["lint", "servers", "--format", "json"], None);
    assert_eq!(r.code, 2, "{}", r.stderr);
    let document: Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(document["summary"]["files"], 2, "{}", r.stdout);
    let errors = document["errors"].as_array().unwrap();
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert_eq!(errors[0]["file"], "servers/gone.json");
    for skipped in ["pipe.json", "up.json", "zero.json"] {
        assert!(
            r.stderr.contains(&format!(
                "note: skipped servers/{skipped}: not a regular file"
            )),
            "{}",
            r.stderr
        );
    }
}

#[cfg(target_os = "linux")]
#[test]
fn an_endless_input_is_refused_once_past_the_bound_not_read_until_memory_runs_out() {
    let root = tempfile::tempdir().unwrap();
    let catalog = r#"[{"name": "a", "description": "Adds.", "inputSchema": {"type": "object"}}]"#;
    std::fs::write(root.path().join("x.json"), catalog).unwrap();
    // The same bound for a device named as a file, standard input, an `@file` argument and a
    // settings file.
    let cases: [(&[&str], bool, &str); 4] = [
        (&["lint", "/dev/zero"], false, "/dev/zero: "),
        (&["lint", "-"], true, "<stdin>: "),
        (
            &["validate", "x.json", "--tool", "a", "--args", "@/dev/zero"],
            false,
            "/dev/zero: ",
        ),
        (
            &["lint", "--config", "/dev/zero", "x.json"],
            false,
            "/dev/zero: ",
        ),
    ];
    for (args, from_stdin, named) in cases {
        let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_toolschema"))
            .args(args)
            .current_dir(root.path())
            .stdin(if from_stdin {
                std::fs::File::open("/dev/zero").unwrap().into()
            } else {
                std::process::Stdio::null()
            })
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        // Without the bound the process reads until memory runs out: stopped here instead.
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
        while child.try_wait().unwrap().is_none() {
            if std::time::Instant::now() > deadline {
                let _ = child.kill();
                panic!("{args:?} still reading after 60 s");
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        // What it printed is a few lines, held by the pipes until now.
        let out = child.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        let stdout = String::from_utf8_lossy(&out.stdout);
        let said = format!("{stdout}{stderr}");
        assert_eq!(out.status.code(), Some(2), "{args:?}: {said}");
        assert!(
            said.contains(named)
                && said.contains("cannot read: it holds more than 1 GiB, the most toolschema reads of one input into memory"),
            "{args:?}: {said}"
        );
    }
}

#[test]
fn a_byte_order_mark_takes_no_column_and_is_not_shown() {
    let root = tempfile::tempdir().unwrap();
    // On one line, so that every finding is on the line the mark starts; and broken, for the
    // position of a syntax error.
    let one_line =
        serde_json::to_string(&serde_json::from_str::<Value>(&fixture_text("small.json")).unwrap())
            .unwrap();
    let broken = "[{\"name\": \"a\", \"inputSchema\": {\"type\": \"object\"},]";
    for text in [one_line.as_str(), broken] {
        std::fs::write(root.path().join("plain.json"), text).unwrap();
        std::fs::write(root.path().join("marked.json"), format!("\u{feff}{text}")).unwrap();
        for format in ["text", "json", "github"] {
            let plain = run_in(
                root.path(),
                &["lint", "plain.json", "--format", format],
                None,
            );
            let marked = run_in(
                root.path(),
                &["lint", "marked.json", "--format", format],
                None,
            );
            let piped = run_in(
                root.path(),
                &["lint", "-", "--format", format],
                Some(&format!("\u{feff}{text}")),
            );
            let on_line_1 = ["plain.json:1:", "\"line\":1,", "line=1,"];
            assert!(
                on_line_1.iter().any(|at| plain.stdout.contains(at)),
                "{}",
                plain.stdout
            );
            assert_eq!(
                marked.stdout.replace("marked.json", "plain.json"),
                plain.stdout,
                "{format}"
            );
            assert_eq!(
                piped.stdout.replace("<stdin>", "plain.json"),
                plain.stdout,
                "{format}"
            );
            assert!(!marked.stdout.contains('\u{feff}') && !marked.stdout.contains('\u{fffd}'));
        }
    }
}

/// clap-demo's tools (its live listing, which clap-demo's own tests hold equal to this file)
/// pass the default rules.
#[test]
fn clap_demo_passes_its_own_lint() {
    let tools = common::root().join("examples/clap-demo/tests/expected-tools.json");
    let r = run(&["lint", tools.to_str().unwrap()]);
    assert_eq!(
        (r.code, r.stdout.as_str()),
        (0, "No problems in 3 tools in 1 file.\n"),
        "{}",
        r.stderr
    );
}
