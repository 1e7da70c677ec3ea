//! `toolschema snapshot`: the tools of a live MCP server, exactly as it lists them.

use crate::input::{parse_seconds, InputError};
use crate::output::{say, Escapes, TerminalSafe};
use crate::server_args::ServerAddress;
use crate::Outcome;
use std::io::Write;
use std::time::Duration;
use toolschema::Catalog;
use toolschema_mcp::snapshot::{self, Snapshot, SnapshotOptions, Target};

/// Arguments of `toolschema snapshot`.
#[derive(Debug, clap::Args)]
#[command(after_help = "\
Examples:
  toolschema snapshot -- python -m mcp_server_time
  toolschema snapshot -o tools.json -- npx -y @modelcontextprotocol/server-everything
  toolschema snapshot --url http://127.0.0.1:3001/mcp --header 'Authorization: Bearer TOKEN'

Prints {\"tools\": [...]} with every tool of every page, each exactly as the server sent it (same
keys, same order). Exit status: 0 done, 2 the server could not be started, exited early, answered
with an error, or did not answer within --timeout.")]
pub struct SnapshotArgs {
    #[command(flatten)]
    server: ServerArgs,

    /// Write the snapshot to FILE instead of standard output.
    #[arg(short, long, value_name = "FILE")]
    output: Option<String>,
}

/// Which live server to reach and how long to wait for its listing: the flags `snapshot`, `lint`,
/// `diff`, `pin` and `verify` share.
#[derive(Debug, clap::Args)]
pub struct ServerArgs {
    #[command(flatten)]
    address: ServerAddress,

    /// Give up when the server has not answered everything within this many seconds (at most
    /// 86400).
    #[arg(long, value_name = "SECONDS", default_value = "30", value_parser = parse_seconds)]
    timeout: Duration,
}

impl ServerArgs {
    /// Whether a server was named (a command or a URL).
    pub fn is_given(&self) -> bool {
        self.address.is_given()
    }

    /// The server named by `--url` or `-- COMMAND`, if either is given.
    pub fn target(&self) -> Option<Target> {
        self.address.target()
    }

    /// The key the server's pins are kept under in a lock: its command line or URL.
    pub fn lock_key(&self) -> Option<String> {
        self.address.lock_key()
    }

    /// The server named, or an error saying how to name one.
    pub fn require_target(&self) -> Result<Target, InputError> {
        self.address.require_target()
    }

    /// Connect to the server `target` and list its tools.
    pub fn snapshot(&self, target: &Target) -> Result<Snapshot, InputError> {
        let headers = self.address.headers()?;
        let options = SnapshotOptions {
            timeout: self.timeout,
            headers,
            max_message_bytes: self.address.max_message_bytes,
        };
        let runtime = toolschema_mcp::runtime()
            .map_err(|e| InputError(format!("cannot start the async runtime: {e}")))?;
        let result = runtime.block_on(snapshot::take(target, &options));
        runtime.shutdown_background();
        result.map_err(|e| InputError(e.to_string()))
    }

    /// The tools of the server `target`, read as a catalog named after it.
    pub fn catalog(&self, target: &Target) -> Result<Catalog, InputError> {
        catalog_of(&self.snapshot(target)?, target)
    }
}

/// The tools of a snapshot of `target`, read as a catalog named after it.
pub fn catalog_of(snapshot: &Snapshot, target: &Target) -> Result<Catalog, InputError> {
    let text = serde_json::to_string(&snapshot.to_value())
        .map_err(|e| InputError(format!("cannot read the snapshot: {e}")))?;
    Ok(Catalog::from_json(&target.to_string(), &text)?)
}

/// The snapshot as written: `{"tools": [...]}`, pretty-printed, with a final newline.
pub fn snapshot_text(snapshot: &Snapshot) -> Result<String, InputError> {
    let mut text = serde_json::to_string_pretty(&snapshot.to_value())
        .map_err(|e| InputError(format!("cannot write the snapshot: {e}")))?;
    text.push('\n');
    Ok(text)
}

/// What a snapshot holds and where it came from, in one line: `10 tools (3 tools/list pages)
/// from 'CMD'`. Entries that are not tools (not an object, or without a string `name`) and names
/// listed more than once are said after it: the snapshot keeps them as sent, and a client would
/// not see as many tools as entries.
pub fn describe(snapshot: &Snapshot, target: &Target) -> String {
    let plural = toolschema::text::count;
    let pages = plural(snapshot.pages, "tools/list page", "tools/list pages");
    let (mut not_objects, mut unnamed) = (0, 0);
    let mut seen = std::collections::HashSet::new();
    let mut twice: Vec<&str> = Vec::new();
    for entry in &snapshot.tools {
        match entry.as_object().map(|tool| tool.get("name")) {
            None => not_objects += 1,
            Some(Some(serde_json::Value::String(name))) => {
                if !seen.insert(name.as_str()) && !twice.contains(&name.as_str()) {
                    twice.push(name);
                }
            }
            Some(_) => unnamed += 1,
        }
    }
    let entries = snapshot.tools.len();
    if not_objects == 0 && unnamed == 0 && twice.is_empty() {
        return format!(
            "{} ({pages}) from {target}",
            plural(entries, "tool", "tools")
        );
    }
    let mut parts = vec![plural(
        entries - not_objects - unnamed,
        "named tool",
        "named tools",
    )];
    if not_objects > 0 {
        parts.push(format!("{not_objects} not an object"));
    }
    if unnamed > 0 {
        parts.push(format!("{unnamed} without a name"));
    }
    if !twice.is_empty() {
        let names: Vec<String> = twice
            .iter()
            .map(|name| format!("'{}'", toolschema::text::shorten(name, 60)))
            .collect();
        parts.push(format!("listed more than once: {}", names.join(", ")));
    }
    format!(
        "{} ({pages}) from {target}: {}",
        plural(entries, "entry", "entries"),
        parts.join("; ")
    )
}

/// Write a snapshot's text to `path`.
pub fn write_snapshot(path: &str, text: &str) -> Result<(), InputError> {
    std::fs::write(path, text).map_err(|e| InputError(format!("{path}: cannot write: {e}")))
}

/// Run `toolschema snapshot`.
pub fn run(args: SnapshotArgs, out: &mut dyn Write) -> Result<Outcome, InputError> {
    let mut out = TerminalSafe::new(out, Escapes::Json);
    let out: &mut dyn Write = &mut out;
    let target = args.server.require_target()?;
    let snapshot = args.server.snapshot(&target)?;
    let text = snapshot_text(&snapshot)?;
    match &args.output {
        Some(path) => {
            write_snapshot(path, &text)?;
            say!(
                "toolschema: wrote {} to {path}",
                describe(&snapshot, &target)
            );
        }
        None => {
            out.write_all(text.as_bytes())
                .map_err(|e| InputError(format!("cannot write output: {e}")))?;
            say!("toolschema: listed {}", describe(&snapshot, &target));
        }
    }
    Ok(Outcome::Valid)
}
