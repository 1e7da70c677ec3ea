//! toolschema-http: what toolschema's HTTP servers share, so that `mcp stream` (toolschema-clap)
//! and the proxy's HTTP front apply one guard, not two copies of it.
//!
//! - [`guard`]: the [`Guard`] in front of an MCP endpoint. Safe by default: a server bound to an
//!   address other than loopback without authentication does not start (`--no-auth` says so on
//!   purpose); `Host` and `Origin` are checked ([`origin`]); clients authenticate with bearer
//!   tokens from a file ([`tokens`]) or with JWTs from an OAuth 2.1 issuer ([`oauth`], [`jwks`]),
//!   and the protected resource metadata (RFC 9728) says where to get one; tools can need scopes
//!   ([`scopes`]); bodies, heads and sessions per client are bounded ([`sessions`]). Decisions are
//!   logged through `tracing` and, with `--access-log`, to a JSON Lines file ([`access_log`]).
//! - [`line_file`]: the append-only file behind the access log and the proxy's audit log, which
//!   never makes a request wait for the file's reader.
//! - [`serve`]: the accept loop and connection settings both servers use: timeouts on what a
//!   client sends and on what it leaves unread, and a loop that waits when descriptors run out.
//! - [`client`]: the project's one HTTP(S) client (hyper, rustls with ring, Mozilla's roots).
//! - `flags` (feature `clap`): the guard's command-line flags, defined once.
//!
//! The guard's API takes `http` request parts and bodies and answers with values (a
//! [`Principal`], a [`Refusal`] that becomes a response), so any server, on rmcp's service or on
//! raw hyper, calls it per request, and tests call it in-process.

pub mod access_log;
pub mod client;
#[cfg(feature = "clap")]
pub mod flags;
pub mod guard;
pub mod jwks;
pub mod line_file;
pub mod oauth;
pub mod origin;
pub mod principal;
pub mod refusal;
pub use toolschema_gate::scopes;
pub mod serve;
pub mod sessions;
pub mod tokens;

pub use guard::{
    check_single_headers, is_initialize, is_single_header, tool_calls, AuthConfig, Guard,
    GuardConfig, Limits, OAuthConfig, StartError,
};
pub use principal::{AuthMethod, Principal};
pub use refusal::{Refusal, RefusalKind};
pub use scopes::ToolScopes;
