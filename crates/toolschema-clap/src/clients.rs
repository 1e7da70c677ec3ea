//! MCP client configuration files: Claude Desktop, VS Code and Cursor. Adding, removing and
//! listing the server entry keeps every other entry and key in order, and backs the file up first.

use serde_json::{Map, Value};
use std::fmt;
use std::path::{Path, PathBuf};

/// An MCP client whose configuration file can be edited.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Client {
    /// Claude Desktop: `claude_desktop_config.json`, key `mcpServers`.
    Claude,
    /// VS Code: `.vscode/mcp.json`, key `servers`, entries with `type: "stdio"`.
    VsCode,
    /// Cursor: `.cursor/mcp.json`, key `mcpServers`.
    Cursor,
}

/// A server entry: how the client starts the server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ServerEntry {
    pub(crate) command: String,
    pub(crate) args: Vec<String>,
    pub(crate) env: Vec<(String, String)>,
}

/// Why a configuration file cannot be read or written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ClientError(pub(crate) String);

impl fmt::Display for ClientError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl Client {
    /// The command-line name: `claude`, `vscode`, `cursor`.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Client::Claude => "claude",
            Client::VsCode => "vscode",
            Client::Cursor => "cursor",
        }
    }

    /// The client for a command-line name.
    pub(crate) fn from_name(name: &str) -> Option<Client> {
        [Client::Claude, Client::VsCode, Client::Cursor]
            .into_iter()
            .find(|c| c.name() == name)
    }

    /// The key holding the servers.
    fn key(self) -> &'static str {
        match self {
            Client::Claude | Client::Cursor => "mcpServers",
            Client::VsCode => "servers",
        }
    }

    /// Where the client reads its configuration: Claude Desktop's file for this OS, or the
    /// project file in the current directory for VS Code and Cursor.
    pub(crate) fn default_path(self) -> Result<PathBuf, ClientError> {
        match self {
            Client::VsCode => Ok(PathBuf::from(".vscode").join("mcp.json")),
            Client::Cursor => Ok(PathBuf::from(".cursor").join("mcp.json")),
            Client::Claude => claude_config_dir().map(|d| d.join("claude_desktop_config.json")),
        }
    }

    /// The JSON entry for a server.
    fn entry(self, server: &ServerEntry) -> Value {
        let mut entry = Map::new();
        if self == Client::VsCode {
            entry.insert("type".into(), Value::String("stdio".into()));
        }
        entry.insert("command".into(), Value::String(server.command.clone()));
        entry.insert(
            "args".into(),
            Value::Array(server.args.iter().cloned().map(Value::String).collect()),
        );
        if !server.env.is_empty() {
            let env: Map<String, Value> = server
                .env
                .iter()
                .map(|(k, v)| (k.clone(), Value::String(v.clone())))
                .collect();
            entry.insert("env".into(), Value::Object(env));
        }
        Value::Object(entry)
    }
}

fn env_dir(name: &str) -> Option<PathBuf> {
    std::env::var_os(name)
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
}

fn claude_config_dir() -> Result<PathBuf, ClientError> {
    let missing = |var: &str| {
        ClientError(format!(
            "cannot find Claude Desktop's configuration: {var} is not set (give the file with --config)"
        ))
    };
    if cfg!(windows) {
        return env_dir("APPDATA")
            .map(|d| d.join("Claude"))
            .ok_or_else(|| missing("APPDATA"));
    }
    let home = env_dir("HOME");
    if cfg!(target_os = "macos") {
        return home
            .map(|h| h.join("Library").join("Application Support").join("Claude"))
            .ok_or_else(|| missing("HOME"));
    }
    env_dir("XDG_CONFIG_HOME")
        .or_else(|| home.map(|h| h.join(".config")))
        .map(|d| d.join("Claude"))
        .ok_or_else(|| missing("HOME"))
}

/// A configuration file's content: `None` when the file does not exist.
fn read(path: &Path) -> Result<Option<Map<String, Value>>, ClientError> {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(ClientError(format!("{}: cannot read: {e}", path.display()))),
    };
    if text.trim().is_empty() {
        return Ok(Some(Map::new()));
    }
    let value = toolschema::json::parse(&text).map_err(|e| {
        let p = toolschema::json::position_of(&text, e.offset);
        ClientError(format!(
            "{}:{}:{}: invalid JSON: {} (the file was not changed)",
            path.display(),
            p.line,
            p.column,
            e.message
        ))
    })?;
    match value {
        Value::Object(map) => Ok(Some(map)),
        _ => Err(ClientError(format!(
            "{}: expected a JSON object at the top level (the file was not changed)",
            path.display()
        ))),
    }
}

/// The servers object of a configuration, created when absent.
fn servers_mut<'a>(
    config: &'a mut Map<String, Value>,
    client: Client,
    path: &Path,
) -> Result<&'a mut Map<String, Value>, ClientError> {
    let servers = config
        .entry(client.key())
        .or_insert_with(|| Value::Object(Map::new()));
    match servers {
        Value::Object(map) => Ok(map),
        _ => Err(ClientError(format!(
            "{}: \"{}\" must be a JSON object (the file was not changed)",
            path.display(),
            client.key()
        ))),
    }
}

/// Write the configuration, after copying the previous file (if any) to `FILE.bak`. Returns the
/// backup's path.
fn write(
    path: &Path,
    config: &Map<String, Value>,
    existed: bool,
) -> Result<Option<PathBuf>, ClientError> {
    let failed = |what: &str, e: std::io::Error| {
        ClientError(format!("{}: cannot {what}: {e}", path.display()))
    };
    let backup = if existed {
        let mut name = path.as_os_str().to_os_string();
        name.push(".bak");
        let backup = PathBuf::from(name);
        std::fs::copy(path, &backup).map_err(|e| failed("write a backup", e))?;
        Some(backup)
    } else {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|e| failed("create its directory", e))?;
        }
        None
    };
    let mut text = serde_json::to_string_pretty(config)
        .map_err(|e| ClientError(format!("{}: cannot serialize: {e}", path.display())))?;
    text.push('\n');
    // Write beside the file, then rename over it: a failure never leaves half a file.
    let mut temporary = path.as_os_str().to_os_string();
    temporary.push(format!(".tmp-{}", std::process::id()));
    let temporary = PathBuf::from(temporary);
    std::fs::write(&temporary, text).map_err(|e| failed("write", e))?;
    std::fs::rename(&temporary, path).map_err(|e| {
        let _ = std::fs::remove_file(&temporary);
        failed("replace", e)
    })?;
    Ok(backup)
}

fn backup_note(backup: Option<PathBuf>) -> String {
    match backup {
        Some(b) => format!(" (previous version saved as {})", b.display()),
        None => String::new(),
    }
}

/// Add the server `name`, or replace its entry where it is.
pub(crate) fn enable(
    client: Client,
    path: &Path,
    name: &str,
    server: &ServerEntry,
) -> Result<String, ClientError> {
    let existing = read(path)?;
    let existed = existing.is_some();
    let mut config = existing.unwrap_or_default();
    let servers = servers_mut(&mut config, client, path)?;
    let replaced = servers
        .insert(name.to_string(), client.entry(server))
        .is_some();
    let backup = write(path, &config, existed)?;
    Ok(format!(
        "{} MCP server '{name}' in {}{}",
        if replaced { "updated" } else { "added" },
        path.display(),
        backup_note(backup)
    ))
}

/// Remove the server `name`.
pub(crate) fn disable(client: Client, path: &Path, name: &str) -> Result<String, ClientError> {
    let Some(mut config) = read(path)? else {
        return Err(ClientError(format!(
            "{}: no MCP server '{name}' (the file does not exist)",
            path.display()
        )));
    };
    let servers = servers_mut(&mut config, client, path)?;
    if servers.shift_remove(name).is_none() {
        let names: Vec<&str> = servers.keys().map(String::as_str).collect();
        let known = if names.is_empty() {
            "there are none".to_string()
        } else {
            format!("servers: {}", names.join(", "))
        };
        return Err(ClientError(format!(
            "{}: no MCP server '{name}' ({known}); the file was not changed",
            path.display()
        )));
    }
    let backup = write(path, &config, true)?;
    Ok(format!(
        "removed MCP server '{name}' from {}{}",
        path.display(),
        backup_note(backup)
    ))
}

/// The servers in the file, one per line: `NAME: COMMAND ARGS...`, then its environment.
pub(crate) fn list(client: Client, path: &Path) -> Result<String, ClientError> {
    let Some(config) = read(path)? else {
        return Ok(format!(
            "no MCP servers in {} (the file does not exist)\n",
            path.display()
        ));
    };
    let servers = match config.get(client.key()) {
        None => return Ok(format!("no MCP servers in {}\n", path.display())),
        Some(Value::Object(map)) => map,
        Some(_) => {
            return Err(ClientError(format!(
                "{}: \"{}\" must be a JSON object",
                path.display(),
                client.key()
            )))
        }
    };
    if servers.is_empty() {
        return Ok(format!("no MCP servers in {}\n", path.display()));
    }
    let mut out = format!("MCP servers in {}:\n", path.display());
    for (name, entry) in servers {
        let words: Vec<String> = entry
            .get("command")
            .and_then(Value::as_str)
            .into_iter()
            .map(str::to_string)
            .chain(
                entry
                    .get("args")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .map(|a| a.as_str().map_or_else(|| a.to_string(), str::to_string)),
            )
            .collect();
        let how = if words.is_empty() {
            entry
                .get("url")
                .and_then(Value::as_str)
                .map_or_else(|| entry.to_string(), str::to_string)
        } else {
            words.join(" ")
        };
        out.push_str(&format!("{name}: {how}\n"));
        if let Some(Value::Object(env)) = entry.get("env") {
            for (key, value) in env {
                let value = value
                    .as_str()
                    .map_or_else(|| value.to_string(), str::to_string);
                out.push_str(&format!("  {key}={value}\n"));
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn server() -> ServerEntry {
        ServerEntry {
            command: "/opt/demo".into(),
            args: vec!["mcp".into(), "start".into()],
            env: vec![("LOG".into(), "debug".into())],
        }
    }

    #[test]
    fn enable_keeps_other_entries_and_order_and_backs_up() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("claude_desktop_config.json");
        let original = r#"{"zeta": 1, "mcpServers": {"other": {"command": "x"}, "demo": {"command": "old"}}, "alpha": [true]}"#;
        std::fs::write(&path, original).unwrap();
        let message = enable(Client::Claude, &path, "demo", &server()).unwrap();
        assert_eq!(
            message,
            format!(
                "updated MCP server 'demo' in {} (previous version saved as {}.bak)",
                path.display(),
                path.display()
            )
        );
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            r#"{
  "zeta": 1,
  "mcpServers": {
    "other": {
      "command": "x"
    },
    "demo": {
      "command": "/opt/demo",
      "args": [
        "mcp",
        "start"
      ],
      "env": {
        "LOG": "debug"
      }
    }
  },
  "alpha": [
    true
  ]
}
"#
        );
        let backup = dir.path().join("claude_desktop_config.json.bak");
        assert_eq!(std::fs::read_to_string(backup).unwrap(), original);
    }

    #[test]
    fn vscode_entries_are_typed_and_files_are_created() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(".vscode").join("mcp.json");
        let server = ServerEntry {
            env: Vec::new(),
            ..server()
        };
        let message = enable(Client::VsCode, &path, "demo", &server).unwrap();
        assert_eq!(
            message,
            format!("added MCP server 'demo' in {}", path.display())
        );
        let written: Value =
            serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        assert_eq!(
            written,
            serde_json::json!({"servers": {"demo": {"type": "stdio", "command": "/opt/demo", "args": ["mcp", "start"]}}})
        );
        assert!(!dir.path().join(".vscode").join("mcp.json.bak").exists());
    }

    #[test]
    fn disable_and_list() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("mcp.json");
        assert_eq!(
            list(Client::Cursor, &path).unwrap(),
            format!(
                "no MCP servers in {} (the file does not exist)\n",
                path.display()
            )
        );
        std::fs::write(
            &path,
            r#"{"mcpServers": {"a": {"command": "a", "args": ["x y"]}, "demo": {"command": "d"}, "web": {"url": "http://localhost:1/mcp"}}}"#,
        )
        .unwrap();
        enable(Client::Cursor, &path, "demo", &server()).unwrap();
        assert_eq!(
            list(Client::Cursor, &path).unwrap(),
            format!(
                "MCP servers in {}:\na: a x y\ndemo: /opt/demo mcp start\n  LOG=debug\nweb: http://localhost:1/mcp\n",
                path.display()
            )
        );
        disable(Client::Cursor, &path, "demo").unwrap();
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            "{\n  \"mcpServers\": {\n    \"a\": {\n      \"command\": \"a\",\n      \"args\": [\n        \"x y\"\n      ]\n    },\n    \"web\": {\n      \"url\": \"http://localhost:1/mcp\"\n    }\n  }\n}\n"
        );
        assert_eq!(
            disable(Client::Cursor, &path, "demo").unwrap_err().0,
            format!(
                "{}: no MCP server 'demo' (servers: a, web); the file was not changed",
                path.display()
            )
        );
    }

    #[test]
    fn malformed_files_are_never_overwritten() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("mcp.json");
        std::fs::write(&path, "{\n  \"servers\": {,}\n}").unwrap();
        let error = enable(Client::VsCode, &path, "demo", &server()).unwrap_err();
        assert_eq!(
            error.0,
            format!(
                "{}:2:15: invalid JSON: expected an object key in double quotes (the file was not \
                 changed)",
                path.display()
            )
        );
        std::fs::write(&path, "[]").unwrap();
        assert_eq!(
            enable(Client::VsCode, &path, "demo", &server())
                .unwrap_err()
                .0,
            format!(
                "{}: expected a JSON object at the top level (the file was not changed)",
                path.display()
            )
        );
        std::fs::write(&path, r#"{"servers": []}"#).unwrap();
        assert_eq!(
            enable(Client::VsCode, &path, "demo", &server())
                .unwrap_err()
                .0,
            format!(
                "{}: \"servers\" must be a JSON object (the file was not changed)",
                path.display()
            )
        );
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            r#"{"servers": []}"#
        );
    }
}
