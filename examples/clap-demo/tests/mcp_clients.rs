//! `clap-demo mcp claude|vscode|cursor enable|disable|list` on temporary configuration files.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::path::Path;
use std::process::Command;
use std::time::Duration;

const LIMIT: Duration = Duration::from_secs(30);

/// Run `clap-demo mcp ARGS...` in `dir` with `HOME` there and no `XDG_CONFIG_HOME`.
fn mcp(dir: &Path, args: &[&str]) -> common::Finished {
    let mut command = Command::new(common::demo());
    command
        .arg("mcp")
        .args(args)
        .current_dir(dir)
        .env("HOME", dir)
        .env_remove("XDG_CONFIG_HOME");
    common::run(command, LIMIT)
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap()
}

/// The demo binary's path as JSON text.
fn binary_json() -> String {
    serde_json::to_string(&common::demo().to_str().unwrap()).unwrap()
}

#[test]
fn claude_enable_keeps_everything_else_and_backs_up() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("claude.json");
    let original = r#"{
  "globalShortcut": "Ctrl+Space",
  "mcpServers": {
    "filesystem": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "/tmp"]}
  },
  "zeta": {"b": 1, "a": 2}
}
"#;
    std::fs::write(&file, original).unwrap();
    let config = file.to_str().unwrap();
    let done = mcp(
        dir.path(),
        &[
            "claude",
            "enable",
            "--config",
            config,
            "--env",
            "LOG=debug",
            "--env",
            "MODE=a=b",
        ],
    );
    assert_eq!(done.code, Some(0), "{}", done.stderr);
    assert_eq!(
        done.stdout,
        format!(
            "added MCP server 'clap-demo' in {config} (previous version saved as {config}.bak)\n"
        )
    );
    assert_eq!(
        read(&file),
        format!(
            r#"{{
  "globalShortcut": "Ctrl+Space",
  "mcpServers": {{
    "filesystem": {{
      "command": "npx",
      "args": [
        "-y",
        "@modelcontextprotocol/server-filesystem",
        "/tmp"
      ]
    }},
    "clap-demo": {{
      "command": {},
      "args": [
        "mcp",
        "start"
      ],
      "env": {{
        "LOG": "debug",
        "MODE": "a=b"
      }}
    }}
  }},
  "zeta": {{
    "b": 1,
    "a": 2
  }}
}}
"#,
            binary_json()
        )
    );
    assert_eq!(read(&dir.path().join("claude.json.bak")), original);

    let listed = mcp(dir.path(), &["claude", "list", "--config", config]);
    assert_eq!(listed.code, Some(0), "{}", listed.stderr);
    assert_eq!(
        listed.stdout,
        format!(
            "MCP servers in {config}:\nfilesystem: npx -y @modelcontextprotocol/server-filesystem /tmp\n\
             clap-demo: {} mcp start\n  LOG=debug\n  MODE=a=b\n",
            common::demo().display()
        )
    );

    let removed = mcp(dir.path(), &["claude", "disable", "--config", config]);
    assert_eq!(removed.code, Some(0), "{}", removed.stderr);
    assert_eq!(
        removed.stdout,
        format!("removed MCP server 'clap-demo' from {config} (previous version saved as {config}.bak)\n")
    );
    let after: serde_json::Value = serde_json::from_str(&read(&file)).unwrap();
    let before: serde_json::Value = serde_json::from_str(original).unwrap();
    assert_eq!(after, before);

    let again = mcp(dir.path(), &["claude", "disable", "--config", config]);
    assert_eq!(again.code, Some(1));
    assert_eq!(again.stdout, "");
    assert_eq!(
        again.stderr,
        format!("error: {config}: no MCP server 'clap-demo' (servers: filesystem); the file was not changed\n")
    );
}

#[test]
fn claude_default_file_is_found_under_home() {
    let dir = tempfile::tempdir().unwrap();
    let done = mcp(dir.path(), &["claude", "enable", "--server-name", "demo"]);
    assert_eq!(done.code, Some(0), "{}", done.stderr);
    let expected = dir.path().join(if cfg!(target_os = "macos") {
        "Library/Application Support/Claude/claude_desktop_config.json"
    } else {
        ".config/Claude/claude_desktop_config.json"
    });
    assert_eq!(
        done.stdout,
        format!("added MCP server 'demo' in {}\n", expected.display())
    );
    let written: serde_json::Value = serde_json::from_str(&read(&expected)).unwrap();
    assert_eq!(
        written,
        serde_json::json!({"mcpServers": {"demo": {
            "command": common::demo().to_str().unwrap(),
            "args": ["mcp", "start"]
        }}})
    );
}

#[test]
fn vscode_and_cursor_use_project_files() {
    let dir = tempfile::tempdir().unwrap();
    let done = mcp(dir.path(), &["vscode", "enable"]);
    assert_eq!(done.code, Some(0), "{}", done.stderr);
    assert_eq!(
        done.stdout,
        "added MCP server 'clap-demo' in .vscode/mcp.json\n"
    );
    assert_eq!(
        read(&dir.path().join(".vscode/mcp.json")),
        format!(
            "{{\n  \"servers\": {{\n    \"clap-demo\": {{\n      \"type\": \"stdio\",\n      \"command\": {},\n      \"args\": [\n        \"mcp\",\n        \"start\"\n      ]\n    }}\n  }}\n}}\n",
            binary_json()
        )
    );
    // Enabling again replaces the entry where it is and backs the file up.
    let again = mcp(dir.path(), &["vscode", "enable", "--env", "A=1"]);
    assert_eq!(
        again.stdout,
        "updated MCP server 'clap-demo' in .vscode/mcp.json (previous version saved as .vscode/mcp.json.bak)\n"
    );

    let done = mcp(dir.path(), &["cursor", "enable", "--server-name", "demo"]);
    assert_eq!(done.stdout, "added MCP server 'demo' in .cursor/mcp.json\n");
    let listed = mcp(dir.path(), &["cursor", "list"]);
    assert_eq!(
        listed.stdout,
        format!(
            "MCP servers in .cursor/mcp.json:\ndemo: {} mcp start\n",
            common::demo().display()
        )
    );
    let empty = mcp(dir.path(), &["cursor", "list", "--config", "none.json"]);
    assert_eq!(empty.code, Some(0));
    assert_eq!(
        empty.stdout,
        "no MCP servers in none.json (the file does not exist)\n"
    );
}

#[test]
fn malformed_files_are_reported_and_left_alone() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("mcp.json");
    let broken = "{\n  \"mcpServers\": {\n    \"a\": {\"command\": \"x\",}\n  }\n}\n";
    std::fs::write(&file, broken).unwrap();
    let done = mcp(dir.path(), &["cursor", "enable", "--config", "mcp.json"]);
    assert_eq!(done.code, Some(1));
    assert_eq!(
        done.stderr,
        "error: mcp.json:3:26: invalid JSON: expected an object key in double quotes (the file \
         was not changed)\n"
    );
    assert_eq!(read(&file), broken);
    assert!(!dir.path().join("mcp.json.bak").exists());

    let bad_env = mcp(dir.path(), &["cursor", "enable", "--env", "NOEQUALS"]);
    assert_eq!(bad_env.code, Some(2));
    assert!(
        bad_env.stderr.starts_with(
            "error: invalid value 'NOEQUALS' for '--env <KEY=VALUE>': expected KEY=VALUE"
        ),
        "{}",
        bad_env.stderr
    );
}
