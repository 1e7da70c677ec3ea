//! The guard's command-line flags, defined once: `#[command(flatten)]` them into a derive
//! command, or add them to a builder command with [`clap::Args::augment_args`].

use crate::guard::{AuthConfig, GuardConfig, Limits, OAuthConfig};
use crate::scopes::ToolScopes;
use std::path::PathBuf;
use std::time::Duration;

/// The longest duration a seconds option takes: a day.
pub const MAX_SECONDS: f64 = 86_400.0;

/// Seconds as a duration (`--request-timeout 2.5`): a positive number, fractions allowed, at most
/// [`MAX_SECONDS`]. A clap value parser for every command's seconds options.
pub fn parse_seconds(value: &str) -> Result<Duration, String> {
    let seconds = value
        .trim()
        .parse::<f64>()
        .ok()
        .filter(|s| *s > 0.0 && s.is_finite())
        .ok_or_else(|| format!("'{value}' is not a positive number of seconds"))?;
    if seconds > MAX_SECONDS {
        return Err(format!(
            "'{value}' seconds is too long: at most {MAX_SECONDS} (a day)"
        ));
    }
    Duration::try_from_secs_f64(seconds)
        .ok()
        .filter(|d| !d.is_zero())
        .ok_or_else(|| format!("'{value}' is not a positive number of seconds"))
}

/// Where `--help` lists the guard's flags.
const HEADING: &str = "Access (authentication, hosts, limits)";

/// The smallest header limit: hyper reads at least this much of a request head.
const MIN_HEADER_BYTES: usize = 8 << 10;

fn parse_header_size(value: &str) -> Result<usize, String> {
    let bytes = toolschema::size::parse_size(value)?;
    if bytes < MIN_HEADER_BYTES {
        return Err(format!("'{value}' is too small: at least 8KiB"));
    }
    Ok(bytes)
}

/// Authentication, Host and Origin checks and limits of an HTTP server.
#[derive(Debug, Clone, clap::Args)]
pub struct GuardArgs {
    /// Require one of these bearer tokens: a file of `NAME:TOKEN [SCOPE...]` lines, read again on
    /// SIGHUP. Logs and the access log show the NAME, never the token
    #[arg(long, value_name = "FILE", help_heading = HEADING)]
    pub auth_token_file: Option<PathBuf>,

    /// Accept JWT access tokens from this OAuth issuer (its keys come from its metadata, or
    /// from --jwks-file)
    #[arg(
        long,
        value_name = "URL",
        requires = "oauth_audience",
        help_heading = HEADING
    )]
    pub oauth_issuer: Option<String>,

    /// The audience (`aud`) tokens must be issued for: this server
    #[arg(
        long,
        value_name = "AUDIENCE",
        requires = "oauth_issuer",
        help_heading = HEADING
    )]
    pub oauth_audience: Option<String>,

    /// The issuer's keys (a JWK Set) from this file instead of from the network
    #[arg(
        long,
        value_name = "FILE",
        requires = "oauth_issuer",
        help_heading = HEADING
    )]
    pub jwks_file: Option<PathBuf>,

    /// Serve without authentication, even on an address other machines can reach
    #[arg(
        long,
        conflicts_with_all = ["auth_token_file", "oauth_issuer"],
        help_heading = HEADING
    )]
    pub no_auth: bool,

    /// The MCP endpoint's URL as clients see it, for the OAuth metadata (when a proxy in
    /// front terminates TLS) [default: http:// and the request's Host]
    #[arg(long, value_name = "URL", help_heading = HEADING)]
    pub resource_url: Option<String>,

    /// Also answer to this host name (repeatable; `*` for any). Loopback names and the bound
    /// address are always answered
    #[arg(long = "allowed-host", value_name = "NAME", help_heading = HEADING)]
    pub allowed_hosts: Vec<String>,

    /// Also accept requests from this browser origin, like https://app.example.com (repeatable)
    // The doc comment is the flag's --help text, where a URL in <> would show the brackets.
    #[allow(rustdoc::bare_urls)]
    #[arg(long = "allowed-origin", value_name = "ORIGIN", help_heading = HEADING)]
    pub allowed_origins: Vec<String>,

    /// The largest request body: bytes, or with KiB, MiB or GiB
    #[arg(long, value_name = "SIZE", default_value = "4MiB", value_parser = toolschema::size::parse_size, help_heading = HEADING)]
    pub max_body_bytes: usize,

    /// The largest request head (request line and headers), at least 8KiB
    #[arg(long, value_name = "SIZE", default_value = "16KiB", value_parser = parse_header_size, help_heading = HEADING)]
    pub max_header_bytes: usize,

    /// The most sessions one token (or, without authentication, all clients together) may
    /// hold at once
    #[arg(long, value_name = "N", default_value_t = 64, value_parser = clap::value_parser!(u32).range(1..), help_heading = HEADING)]
    pub max_sessions_per_token: u32,

    /// Close a session idle for this many seconds (a client that goes away without closing its
    /// session holds its place in --max-sessions-per-token until then)
    #[arg(long, value_name = "SECONDS", default_value_t = 300, value_parser = clap::value_parser!(u64).range(1..), help_heading = HEADING)]
    pub session_idle: u64,

    /// Close a connection whose request head, or then body (408), does not arrive within this
    /// many seconds; also a connection that sends nothing, or nothing between requests, for as
    /// long
    #[arg(long, value_name = "SECONDS", default_value_t = 30, value_parser = clap::value_parser!(u64).range(1..), help_heading = HEADING)]
    pub read_timeout: u64,

    /// Close a connection whose client leaves what is written to it unread for this many
    /// seconds (one that stopped reading its event stream)
    #[arg(long, value_name = "SECONDS", default_value_t = 30, value_parser = clap::value_parser!(u64).range(1..), help_heading = HEADING)]
    pub write_timeout: u64,

    /// Append one JSON line per call, refusal and session to this file
    #[arg(long, value_name = "FILE", help_heading = HEADING)]
    pub access_log: Option<PathBuf>,
}

impl GuardArgs {
    /// The guard's configuration for an endpoint at `endpoint_path` whose tools need
    /// `tool_scopes`.
    pub fn into_config(self, endpoint_path: &str, tool_scopes: ToolScopes) -> GuardConfig {
        let oauth = match (self.oauth_issuer, self.oauth_audience) {
            (Some(issuer), Some(audience)) => Some(OAuthConfig {
                issuer,
                audience,
                jwks_file: self.jwks_file,
            }),
            _ => None,
        };
        GuardConfig {
            auth: AuthConfig {
                token_file: self.auth_token_file,
                oauth,
                no_auth: self.no_auth,
            },
            tool_scopes,
            limits: Limits {
                max_body_bytes: self.max_body_bytes,
                max_header_bytes: self.max_header_bytes,
                max_sessions_per_client: self.max_sessions_per_token as usize,
                session_idle: std::time::Duration::from_secs(self.session_idle),
                read_timeout: std::time::Duration::from_secs(self.read_timeout),
                write_timeout: std::time::Duration::from_secs(self.write_timeout),
            },
            allowed_hosts: self.allowed_hosts,
            allowed_origins: self.allowed_origins,
            resource_url: self.resource_url,
            access_log: self.access_log,
            endpoint_path: endpoint_path.to_string(),
        }
    }
}
