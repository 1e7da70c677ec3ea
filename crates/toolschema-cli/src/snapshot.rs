//! `toolschema snapshot`: the tools of a live MCP server, exactly as it lists them.

use crate::input::{parse_seconds, InputError};
use crate::server_args::ServerArgs;
use crate::Outcome;
use std::io::Write;
use std::time::Duration;
use toolschema_mcp::snapshot::{self, SnapshotOptions};

/// Arguments of `toolschema snapshot`.
#[derive(Debug, clap::Args)]
#[command(after_help = "\
Examples:
  toolschema snapshot -- npx -y @modelcontextprotocol/server-everything
  toolschema snapshot -o tools.json -- python -m my_server
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

    /// Give up when the server has not answered everything within this many seconds.
    #[arg(long, value_name = "SECONDS", default_value = "30", value_parser = parse_seconds)]
    timeout: Duration,
}

/// Run `toolschema snapshot`.
pub fn run(args: SnapshotArgs, out: &mut dyn Write) -> Result<Outcome, InputError> {
    let target = args.server.target()?;
    let options = SnapshotOptions {
        timeout: args.timeout,
        headers: args.server.headers()?,
        max_message_bytes: args.server.max_message_bytes,
    };
    let runtime = toolschema_mcp::runtime()
        .map_err(|e| InputError(format!("cannot start the async runtime: {e}")))?;
    let result = runtime.block_on(snapshot::take(&target, &options));
    runtime.shutdown_background();
    let snapshot = result.map_err(|e| InputError(e.to_string()))?;
    let mut text = serde_json::to_string_pretty(&snapshot.to_value())
        .map_err(|e| InputError(format!("cannot write the snapshot: {e}")))?;
    text.push('\n');
    match &args.output {
        Some(path) => {
            std::fs::write(path, &text)
                .map_err(|e| InputError(format!("{path}: cannot write: {e}")))?;
            eprintln!(
                "toolschema: wrote {} tools ({} tools/list page{}) from {target} to {path}",
                snapshot.tools.len(),
                snapshot.pages,
                if snapshot.pages == 1 { "" } else { "s" }
            );
        }
        None => out
            .write_all(text.as_bytes())
            .map_err(|e| InputError(format!("cannot write output: {e}")))?,
    }
    Ok(Outcome::Valid)
}
