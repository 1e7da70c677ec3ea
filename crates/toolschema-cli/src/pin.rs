//! `toolschema pin` and `toolschema verify`: record what a server's tools look like, and check
//! later that they still do.

use crate::diff::{catalog_of_text, print, Format};
use crate::input::{read_text, InputError};
use crate::output::{say, TerminalSafe};
use crate::snapshot::{catalog_of, ServerArgs};
use crate::Outcome;
use std::io::Write;
use std::path::Path;
use toolschema::diff::Lock;
use toolschema::{Catalog, Tool};
use toolschema_mcp::snapshot::Target;

/// Arguments of `toolschema pin`.
#[derive(Debug, clap::Args)]
#[command(after_help = "\
Examples:
  toolschema pin -- npx -y @modelcontextprotocol/server-filesystem .
  toolschema pin -o toolschema.lock --url http://127.0.0.1:3001/mcp
  toolschema pin tools.json --key 'node server.js'

Each tool is pinned by the SHA-256 of its canonical JSON (RFC 8785) as the server lists it: name,
title, description, inputSchema and outputSchema as written ($defs names and $refs included),
annotations, execution, icons, _meta and every other field. Pins are kept under the command line or URL, never the server's own name; pinning
again replaces that server's pins and keeps the others in the file.")]
pub struct PinArgs {
    /// A catalog file to pin instead of a live server.
    #[arg(value_name = "CATALOG")]
    catalog: Option<String>,

    #[command(flatten)]
    server: ServerArgs,

    /// The lock file to write (other servers' pins in it are kept).
    #[arg(short, long, value_name = "FILE", default_value = "toolschema.lock")]
    output: String,

    /// Keep the pins under this key instead of the command line, URL or catalog path.
    #[arg(long, value_name = "KEY")]
    key: Option<String>,
}

/// Arguments of `toolschema verify`.
#[derive(Debug, clap::Args)]
#[command(after_help = "\
Examples:
  toolschema verify toolschema.lock -- npx -y @modelcontextprotocol/server-filesystem .
  toolschema verify toolschema.lock --url http://127.0.0.1:3001/mcp --format json
  toolschema verify toolschema.lock tools.json --key 'node server.js'

Exit status: 0 when every tool matches its pin, 1 on any drift (a changed, removed or new tool; the
diff against the pinned definitions is printed), 2 for bad input or an unreachable server.")]
pub struct VerifyArgs {
    /// The lock file written by `toolschema pin`.
    #[arg(value_name = "LOCK")]
    lock: String,

    /// A catalog file to check instead of a live server.
    #[arg(value_name = "CATALOG")]
    catalog: Option<String>,

    #[command(flatten)]
    server: ServerArgs,

    /// Check against the pins kept under this key instead of the command line, URL or catalog
    /// path.
    #[arg(long, value_name = "KEY")]
    key: Option<String>,

    /// Output format for the drift: text, json, or markdown.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
}

/// Where the tools to pin or verify come from.
enum Source<'a> {
    /// A catalog file.
    File(&'a str),
    /// A live server, with its lock key.
    Live(Target, String),
}

impl<'a> Source<'a> {
    fn from_args(catalog: Option<&'a str>, server: &ServerArgs) -> Result<Self, InputError> {
        match (catalog, server.target(), server.lock_key()) {
            (Some(path), None, _) => Ok(Source::File(path)),
            (None, Some(target), Some(key)) => Ok(Source::Live(target, key)),
            (Some(_), Some(_), _) => Err(InputError(
                "give the tools as a catalog file or as a live server (-- COMMAND or --url), not both"
                    .into(),
            )),
            _ => Err(InputError(
                "say which tools: a catalog file, -- COMMAND ARGS..., or --url URL".into(),
            )),
        }
    }

    /// The key pins go under unless `--key` says otherwise: the catalog path, the command line
    /// or the URL.
    fn default_key(&self) -> &str {
        match self {
            Source::File(path) => path,
            Source::Live(_, key) => key,
        }
    }

    /// The tools, refused when a definition holds a value that reading changes (a lone
    /// surrogate escape read as U+FFFD, a number read as another): a pin of what was read
    /// could not tell it from a definition read alike, so it would pin, or verify, what the
    /// server did not send.
    fn load(&self, server: &ServerArgs) -> Result<Catalog, InputError> {
        match self {
            Source::File(path) => {
                let text = read_text(path)?;
                if let Some(lossy) = toolschema::json::first_lossy_value(&text) {
                    let place = format!("{path}: at byte {}", lossy.offset);
                    return Err(unpinnable(&place, &lossy.loss));
                }
                catalog_of_text(path, &text)
            }
            Source::Live(target, _) => {
                let snapshot = server.snapshot(target)?;
                if let Some((at, loss)) = snapshot.lossy.first() {
                    let name = snapshot.tools[*at]
                        .get("name")
                        .and_then(serde_json::Value::as_str)
                        .unwrap_or("(no name)");
                    let place = format!("{target}: tool '{name}' (tool {} listed)", at + 1);
                    return Err(unpinnable(&place, loss));
                }
                catalog_of(&snapshot, target)
            }
        }
    }
}

/// Why the tools at `place` cannot be pinned or verified: `loss`.
fn unpinnable(place: &str, loss: &toolschema::json::Loss) -> InputError {
    InputError(format!(
        "{place}: {loss}; a pin cannot tell such a definition from another read alike, so nothing was pinned or verified (write the character itself, or a whole surrogate pair, or the number a 64-bit float holds)"
    ))
}

fn read_lock(path: &str) -> Result<Lock, InputError> {
    let text = read_text(path)?;
    Lock::from_json(&text).map_err(|e| InputError(format!("{path}: {e}")))
}

/// Run `toolschema pin`.
pub fn run_pin(args: PinArgs) -> Result<Outcome, InputError> {
    // Read the existing lock first: a broken one is reported, never overwritten.
    let mut lock = if Path::new(&args.output).exists() {
        read_lock(&args.output)?
    } else {
        Lock::default()
    };
    let source = Source::from_args(args.catalog.as_deref(), &args.server)?;
    let key = args
        .key
        .clone()
        .unwrap_or_else(|| source.default_key().to_string());
    let catalog = source.load(&args.server)?;
    lock.pin(&key, catalog.tools().map(Tool::fields))
        .map_err(|e| InputError(e.to_string()))?;
    std::fs::write(&args.output, lock.to_json())
        .map_err(|e| InputError(format!("{}: cannot write: {e}", args.output)))?;
    say!(
        "toolschema: pinned {} tool{} of '{key}' in {}",
        catalog.len(),
        if catalog.len() == 1 { "" } else { "s" },
        args.output
    );
    Ok(Outcome::Valid)
}

/// Run `toolschema verify`.
pub fn run_verify(args: VerifyArgs, out: &mut dyn Write) -> Result<Outcome, InputError> {
    let lock = read_lock(&args.lock)?;
    let source = Source::from_args(args.catalog.as_deref(), &args.server)?;
    let key = args
        .key
        .clone()
        .unwrap_or_else(|| source.default_key().to_string());
    // Find the pins before starting a server: a wrong key needs no server to report.
    let pins = lock
        .require_server(&key)
        .map_err(|e| InputError(format!("{}: {e}", args.lock)))?;
    let catalog = source.load(&args.server)?;
    let diff = pins.verify(catalog.tools().map(Tool::fields));
    let mut out = TerminalSafe::new(out, args.format.escapes());
    if diff.is_empty() {
        // JSON is for programs: they get the empty list of changes, not nothing.
        if args.format == Format::Json {
            print(&diff, args.format, &mut out)?;
        }
        say!(
            "toolschema: all {} pinned tools of '{key}' match {}",
            pins.tools().len(),
            args.lock
        );
        return Ok(Outcome::Valid);
    }
    print(&diff, args.format, &mut out)?;
    Ok(Outcome::Invalid)
}
