//! The flags that say where a live server is, shared by the commands that talk to one.

use crate::input::{parse_size, InputError};
use toolschema_mcp::snapshot::Target;
use toolschema_mcp::ServerCommand;

/// Where the server is: a command after `--`, or `--url` with `--header`s.
#[derive(Debug, clap::Args)]
pub struct ServerArgs {
    /// A Streamable HTTP endpoint instead of a command.
    #[arg(long, value_name = "URL", conflicts_with = "command")]
    url: Option<String>,

    /// The command that starts the server over stdio, after `--`.
    #[arg(last = true, value_name = "COMMAND", required_unless_present = "url")]
    command: Vec<String>,

    /// An HTTP header for every request, `Name: value` (with --url; repeatable).
    #[arg(long = "header", value_name = "NAME: VALUE", requires = "url")]
    headers: Vec<String>,

    /// The largest message accepted from the server: bytes, or with KiB, MiB or GiB.
    #[arg(long, value_name = "SIZE", default_value = "16MiB", value_parser = parse_size)]
    pub max_message_bytes: usize,
}

impl ServerArgs {
    /// The server to reach.
    pub fn target(&self) -> Result<Target, InputError> {
        match (&self.url, self.command.split_first()) {
            (Some(url), _) => Ok(Target::Url(url.clone())),
            (None, Some((program, rest))) => Ok(Target::Command(ServerCommand::new(program, rest))),
            (None, None) => Err(InputError(
                "say which server: -- COMMAND ARGS..., or --url URL".into(),
            )),
        }
    }

    /// The `--header`s as names and values.
    pub fn headers(&self) -> Result<Vec<(String, String)>, InputError> {
        self.headers
            .iter()
            .map(|header| match header.split_once(':') {
                Some((name, value)) => Ok((name.trim().to_string(), value.trim().to_string())),
                None => Err(InputError(format!(
                    "--header '{header}': write it as 'Name: value'"
                ))),
            })
            .collect()
    }
}
