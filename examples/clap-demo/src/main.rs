//! clap-demo: a small derive-based clap CLI whose commands toolschema-clap serves as MCP tools.
//!
//! ```text
//! clap-demo greet <NAME> [--times <N>] [--shout]
//! clap-demo files list [PATHS]... [--format json|table] [--limit <N>]
//! clap-demo config set <KEY> <VALUE> [--scope user|project] [--dry-run]
//! clap-demo mcp start | stream | tools | claude|vscode|cursor enable|disable|list
//! ```
//!
//! Environment:
//! - `CLAP_DEMO_LOG`: a file each command run appends `SOURCE COMMAND` to (`SOURCE` is
//!   `CLAP_DEMO_SOURCE`, `cli` when unset; the MCP server sets it to `mcp` for the commands it
//!   runs);
//! - `CLAP_DEMO_HOME`: where the user configuration lives (default `~/.config/clap-demo`).

use clap::{CommandFactory, FromArgMatches, Parser, Subcommand, ValueEnum};
use serde_json::{json, Map, Value};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use toolschema_clap::{Config, ToolAnnotations};

/// A small CLI served as MCP tools by toolschema-clap.
#[derive(Debug, Parser)]
#[command(name = "clap-demo", version)]
struct Cli {
    #[command(subcommand)]
    command: Commands,
}

#[derive(Debug, Subcommand)]
enum Commands {
    /// Greet someone by name
    #[command(
        after_help = "Examples:\n  clap-demo greet Ada\n  clap-demo greet Ada --times 3 --shout"
    )]
    Greet {
        /// Who to greet
        name: String,
        /// How many times to say hello
        #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u8).range(1..=10))]
        times: u8,
        /// Say it in capitals
        #[arg(long)]
        shout: bool,
    },
    /// Work with files
    #[command(subcommand)]
    Files(FilesCommand),
    /// Read and change settings
    #[command(subcommand)]
    Config(ConfigCommand),
    /// Print the secret (for people only)
    #[command(hide = true)]
    Secret,
}

#[derive(Debug, Subcommand)]
enum FilesCommand {
    /// List files and directories: the entries of each directory, or the file itself
    List {
        /// Files or directories to list
        #[arg(default_value = ".")]
        paths: Vec<PathBuf>,
        /// Output format
        #[arg(long, value_enum, default_value_t = Format::Table)]
        format: Format,
        /// List at most this many entries
        // A default, so that a model's first call cannot flood its context.
        #[arg(long, default_value_t = 1000)]
        limit: usize,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Format {
    /// One JSON array of {path, kind, size}
    Json,
    /// One line per entry: kind, size, path
    Table,
}

#[derive(Debug, Subcommand)]
enum ConfigCommand {
    /// Set a configuration value
    Set {
        /// The setting's name
        key: String,
        /// The value: JSON, or else taken as a string
        value: String,
        /// Where to store it: the user's configuration, or .clap-demo.json in the current directory
        #[arg(long, value_enum, default_value_t = Scope::User)]
        scope: Scope,
        /// Show what would change without writing
        #[arg(long)]
        dry_run: bool,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Scope {
    User,
    Project,
}

/// How the MCP server presents the commands.
fn mcp_config() -> Config {
    let read_only = ToolAnnotations {
        read_only_hint: Some(true),
        open_world_hint: Some(false),
        ..ToolAnnotations::default()
    };
    Config::new()
        .env_default("CLAP_DEMO_SOURCE", "mcp")
        .annotate("greet", read_only.clone())
        .annotate("files", read_only)
        .annotate(
            "config set",
            ToolAnnotations {
                read_only_hint: Some(false),
                destructive_hint: Some(false),
                idempotent_hint: Some(true),
                open_world_hint: Some(false),
                ..ToolAnnotations::default()
            },
        )
        // Over HTTP with authentication, reading files and changing settings need scopes.
        .require_scope("files", "files:read")
        .require_scope("config set", "config:write")
        .argument_schema(
            "config set",
            "value",
            json!({
                "description": "The value, any JSON value but null",
                "type": ["string", "number", "boolean", "array", "object"],
                // A list's elements are any JSON value too; saying so is what OpenAI requires.
                "items": {}
            }),
        )
}

fn main() -> ExitCode {
    let config = mcp_config();
    let app = toolschema_clap::with_mcp(Cli::command(), &config);
    let matches = app.clone().get_matches();
    if let Some(exit) = toolschema_clap::dispatch(&app, &matches, &config) {
        return exit;
    }
    let cli = Cli::from_arg_matches(&matches).unwrap_or_else(|e| e.exit());
    log_run(&cli.command);
    let result = match cli.command {
        Commands::Greet { name, times, shout } => {
            greet(&name, times, shout);
            Ok(())
        }
        Commands::Files(FilesCommand::List {
            paths,
            format,
            limit,
        }) => list_files(&paths, format, limit),
        Commands::Config(ConfigCommand::Set {
            key,
            value,
            scope,
            dry_run,
        }) => set_config(&key, &value, scope, dry_run),
        Commands::Secret => {
            println!("the secret stays with people");
            Ok(())
        }
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("clap-demo: {message}");
            ExitCode::FAILURE
        }
    }
}

/// Append `SOURCE COMMAND` to `$CLAP_DEMO_LOG`, when set.
fn log_run(command: &Commands) {
    let Some(log) = std::env::var_os("CLAP_DEMO_LOG") else {
        return;
    };
    let source = std::env::var("CLAP_DEMO_SOURCE").unwrap_or_else(|_| "cli".to_string());
    let name = match command {
        Commands::Greet { .. } => "greet",
        Commands::Files(FilesCommand::List { .. }) => "files list",
        Commands::Config(ConfigCommand::Set { .. }) => "config set",
        Commands::Secret => "secret",
    };
    let written = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&log)
        .and_then(|mut file| writeln!(file, "{source} {name}"));
    if let Err(e) = written {
        eprintln!("clap-demo: cannot write the run log: {e}");
    }
}

fn greet(name: &str, times: u8, shout: bool) {
    let line = format!("Hello, {name}!");
    let line = if shout { line.to_uppercase() } else { line };
    for _ in 0..times {
        println!("{line}");
    }
}

fn list_files(paths: &[PathBuf], format: Format, limit: usize) -> Result<(), String> {
    let mut entries: Vec<(PathBuf, &'static str, u64)> = Vec::new();
    for path in paths {
        let metadata =
            std::fs::metadata(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        if metadata.is_dir() {
            let mut children: Vec<PathBuf> = std::fs::read_dir(path)
                .map_err(|e| format!("cannot read {}: {e}", path.display()))?
                .filter_map(|entry| entry.ok().map(|e| e.path()))
                .collect();
            children.sort();
            for child in children {
                let meta = std::fs::metadata(&child)
                    .map_err(|e| format!("cannot read {}: {e}", child.display()))?;
                entries.push((child, kind(&meta), meta.len()));
            }
        } else {
            entries.push((path.clone(), kind(&metadata), metadata.len()));
        }
    }
    entries.truncate(limit);
    match format {
        Format::Json => {
            let list: Vec<Value> = entries
                .iter()
                .map(|(path, kind, size)| {
                    json!({"path": path.display().to_string(), "kind": kind, "size": size})
                })
                .collect();
            println!("{}", Value::Array(list));
        }
        Format::Table => {
            for (path, kind, size) in &entries {
                println!("{kind}\t{size}\t{}", path.display());
            }
        }
    }
    Ok(())
}

fn kind(metadata: &std::fs::Metadata) -> &'static str {
    if metadata.is_dir() {
        "dir"
    } else {
        "file"
    }
}

fn user_config_dir() -> Result<PathBuf, String> {
    if let Some(home) = std::env::var_os("CLAP_DEMO_HOME") {
        return Ok(PathBuf::from(home));
    }
    std::env::var_os("HOME")
        .map(|home| PathBuf::from(home).join(".config").join("clap-demo"))
        .ok_or_else(|| "HOME is not set; set CLAP_DEMO_HOME".to_string())
}

fn set_config(key: &str, value: &str, scope: Scope, dry_run: bool) -> Result<(), String> {
    let path = match scope {
        Scope::User => user_config_dir()?.join("config.json"),
        Scope::Project => PathBuf::from(".clap-demo.json"),
    };
    let value: Value = serde_json::from_str(value).unwrap_or_else(|_| Value::String(value.into()));
    let mut settings = read_settings(&path)?;
    settings.insert(key.to_string(), value.clone());
    if dry_run {
        println!(
            "would set {key} = {value} in {} (dry run: nothing written)",
            path.display()
        );
        return Ok(());
    }
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)
            .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    }
    let text = serde_json::to_string_pretty(&Value::Object(settings))
        .map_err(|e| format!("cannot serialize the settings: {e}"))?;
    std::fs::write(&path, text + "\n")
        .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    println!("set {key} = {value} in {}", path.display());
    Ok(())
}

fn read_settings(path: &Path) -> Result<Map<String, Value>, String> {
    match std::fs::read_to_string(path) {
        Ok(text) => match serde_json::from_str(&text) {
            Ok(Value::Object(map)) => Ok(map),
            _ => Err(format!("{} is not a JSON object", path.display())),
        },
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Map::new()),
        Err(e) => Err(format!("cannot read {}: {e}", path.display())),
    }
}
