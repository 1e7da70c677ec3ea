//! The flags that say where a live server is, shared by every command that talks to one.

use crate::input::{parse_size, InputError};
use toolschema_mcp::snapshot::Target;
use toolschema_mcp::ServerCommand;

/// Where the server is: a command after `--`, or `--url` with `--header`s. How long to wait for it
/// is each command's own flag: a whole listing and one tool call take different times.
#[derive(Debug, clap::Args)]
pub struct ServerAddress {
    /// A Streamable HTTP endpoint instead of a command.
    #[arg(long, value_name = "URL", conflicts_with = "command")]
    pub url: Option<String>,

    /// The command that starts the server over stdio, after `--`.
    #[arg(last = true, value_name = "COMMAND")]
    pub command: Vec<String>,

    /// An HTTP header for every request, `Name: value` (with --url; repeatable).
    #[arg(long = "header", value_name = "NAME: VALUE", requires = "url")]
    headers: Vec<String>,

    /// The largest message accepted from the server: bytes, or with KiB, MiB or GiB.
    #[arg(long, value_name = "SIZE", default_value = "16MiB", value_parser = parse_size)]
    pub max_message_bytes: usize,
}

impl ServerAddress {
    /// Whether a server was named (a command or a URL).
    pub fn is_given(&self) -> bool {
        self.url.is_some() || !self.command.is_empty()
    }

    /// The server named by `--url` or `-- COMMAND`, if either is given.
    pub fn target(&self) -> Option<Target> {
        match (&self.url, self.command.split_first()) {
            (Some(url), _) => Some(Target::Url(url.clone())),
            (None, Some((program, rest))) => {
                Some(Target::Command(ServerCommand::new(program, rest)))
            }
            (None, None) => None,
        }
    }

    /// The server named, or an error saying how to name one.
    pub fn require_target(&self) -> Result<Target, InputError> {
        self.target()
            .ok_or_else(|| InputError("say which server: -- COMMAND ARGS..., or --url URL".into()))
    }

    /// The key the server's pins are kept under in a lock: its command line or URL.
    pub fn lock_key(&self) -> Option<String> {
        match (&self.url, self.command.split_first()) {
            (Some(url), _) => Some(toolschema::diff::url_key(url)),
            (None, Some((program, rest))) => Some(toolschema::diff::command_key(program, rest)),
            (None, None) => None,
        }
    }

    /// The `--header`s as names and values.
    pub fn headers(&self) -> Result<Vec<(String, String)>, InputError> {
        self.headers
            .iter()
            .map(|header| crate::input::parse_header(header))
            .collect()
    }
}
