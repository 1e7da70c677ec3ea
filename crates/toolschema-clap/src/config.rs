//! What an application decides about its tools: names, which commands and flags are exposed,
//! the child process's environment and limits, hints, and schemas for arguments that take JSON.

use serde_json::Value;
use std::time::Duration;
use toolschema::ToolAnnotations;

/// How long a command may run before it is killed, unless configured otherwise.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(60);
/// How much of each of stdout and stderr is kept, unless configured otherwise (1 MiB).
pub const DEFAULT_OUTPUT_LIMIT: usize = 1 << 20;

/// The configuration of the `mcp` subcommand and of the tools it serves.
///
/// Command paths are the subcommand names below the root, separated by spaces (`"files list"`).
/// Flags are named by their clap id or their long name. Every path and flag named here must exist:
/// a typo is an error at start-up, never a silently ignored setting.
///
/// ```
/// use std::time::Duration;
/// use toolschema_clap::{Config, ToolAnnotations};
///
/// let config = Config::new()
///     .prefix("demo")
///     .deny_command("config")
///     .deny_flag("verbose")
///     .env_default("NO_COLOR", "1")
///     .annotate("files list", ToolAnnotations {
///         read_only_hint: Some(true),
///         ..ToolAnnotations::default()
///     })
///     .timeout(Duration::from_secs(10));
/// assert_eq!(config.get_prefix(), Some("demo"));
/// ```
#[derive(Debug, Clone)]
pub struct Config {
    pub(crate) prefix: Option<String>,
    pub(crate) allowed_commands: Vec<String>,
    pub(crate) denied_commands: Vec<String>,
    pub(crate) allowed_flags: Vec<String>,
    pub(crate) denied_flags: Vec<String>,
    pub(crate) env_defaults: Vec<(String, String)>,
    pub(crate) annotations: Vec<(String, ToolAnnotations)>,
    pub(crate) argument_schemas: Vec<ArgumentSchema>,
    pub(crate) scopes: Vec<(String, String)>,
    pub(crate) timeout: Duration,
    pub(crate) output_limit: usize,
}

/// A JSON Schema given for one string argument of one command.
#[derive(Debug, Clone)]
pub(crate) struct ArgumentSchema {
    pub(crate) command: String,
    pub(crate) argument: String,
    pub(crate) schema: Value,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            prefix: None,
            allowed_commands: Vec::new(),
            denied_commands: Vec::new(),
            allowed_flags: Vec::new(),
            denied_flags: Vec::new(),
            env_defaults: Vec::new(),
            annotations: Vec::new(),
            argument_schemas: Vec::new(),
            scopes: Vec::new(),
            timeout: DEFAULT_TIMEOUT,
            output_limit: DEFAULT_OUTPUT_LIMIT,
        }
    }
}

impl Config {
    /// The defaults: tools named after the root command, every visible command and flag exposed,
    /// a 60 second timeout, 1 MiB of output kept per stream.
    pub fn new() -> Self {
        Self::default()
    }

    /// Replace the root command's name in tool names (`kubectl get pods` -> `PREFIX_get_pods`).
    /// An empty prefix leaves just the subcommand path (`get_pods`).
    pub fn prefix(mut self, prefix: impl Into<String>) -> Self {
        self.prefix = Some(prefix.into());
        self
    }

    /// The prefix, if one was set (otherwise the root command's name is used).
    pub fn get_prefix(&self) -> Option<&str> {
        self.prefix.as_deref()
    }

    /// Expose only commands at or below this path (may be given several times). Without any,
    /// every command is exposed.
    pub fn allow_command(mut self, path: impl Into<String>) -> Self {
        self.allowed_commands.push(normalize_path(&path.into()));
        self
    }

    /// Never expose the commands at or below this path. Wins over [`Config::allow_command`].
    pub fn deny_command(mut self, path: impl Into<String>) -> Self {
        self.denied_commands.push(normalize_path(&path.into()));
        self
    }

    /// Expose only these flags and options (by id or long name; may be given several times).
    /// Positional arguments are always exposed. Without any, every visible flag is exposed.
    pub fn allow_flag(mut self, name: impl Into<String>) -> Self {
        self.allowed_flags.push(name.into());
        self
    }

    /// Never expose this flag or option (by id or long name), in any command. Wins over
    /// [`Config::allow_flag`]. A required argument cannot be denied.
    pub fn deny_flag(mut self, name: impl Into<String>) -> Self {
        self.denied_flags.push(name.into());
        self
    }

    /// Set an environment variable for the commands the tools run, unless the server's own
    /// environment already sets it.
    pub fn env_default(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        self.env_defaults.push((key.into(), value.into()));
        self
    }

    /// Give the tool of this command these annotations (`readOnlyHint`, `destructiveHint`,
    /// `idempotentHint`, `openWorldHint`, `title`). Hints for clients, not guarantees.
    pub fn annotate(mut self, path: impl Into<String>, annotations: ToolAnnotations) -> Self {
        self.annotations
            .push((normalize_path(&path.into()), annotations));
        self
    }

    /// Describe a string argument that takes JSON with this JSON Schema: the tool takes the JSON
    /// value itself and passes it to the command as compact JSON text.
    pub fn argument_schema(
        mut self,
        path: impl Into<String>,
        argument: impl Into<String>,
        schema: Value,
    ) -> Self {
        self.argument_schemas.push(ArgumentSchema {
            command: normalize_path(&path.into()),
            argument: argument.into(),
            schema,
        });
        self
    }

    /// Over HTTP with authentication, calling the tools of commands at or below this path needs
    /// this OAuth scope (may be given several times: a tool needs every scope given for it).
    /// Clients whose token lacks it do not see the tool in `tools/list`, and a call to it is
    /// refused with 403 `insufficient_scope`. Without authentication (stdio, or HTTP on
    /// loopback without tokens) scopes do not apply.
    pub fn require_scope(mut self, path: impl Into<String>, scope: impl Into<String>) -> Self {
        self.scopes
            .push((normalize_path(&path.into()), scope.into()));
        self
    }

    /// How long a command may run before it is killed (default 60 seconds).
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// How many bytes of each of stdout and stderr a result keeps (default 1 MiB); the rest is
    /// read and dropped, and the result says how much was cut.
    pub fn output_limit(mut self, bytes: usize) -> Self {
        self.output_limit = bytes;
        self
    }
}

/// `" files   list "` -> `"files list"`.
fn normalize_path(path: &str) -> String {
    path.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Whether `path` is `prefix` or below it.
pub(crate) fn path_is_under(path: &[String], prefix: &str) -> bool {
    let prefix: Vec<&str> = prefix.split(' ').filter(|s| !s.is_empty()).collect();
    prefix.len() <= path.len() && prefix.iter().zip(path).all(|(a, b)| *a == b)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_match_whole_segments() {
        let path = vec!["files".to_string(), "list".to_string()];
        assert!(path_is_under(&path, "files"));
        assert!(path_is_under(&path, "files list"));
        assert!(path_is_under(&path, ""));
        assert!(!path_is_under(&path, "file"));
        assert!(!path_is_under(&path, "files list all"));
        assert_eq!(normalize_path("  files   list "), "files list");
    }
}
