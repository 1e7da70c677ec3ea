//! The proxy over Streamable HTTP, in every combination with stdio:
//!
//! - `--listen ADDR -- CMD`: HTTP for clients, one server process per session behind;
//! - `--listen ADDR --upstream URL`: HTTP for clients, a remote server behind;
//! - `--upstream URL`: a client on stdio (it starts the proxy like a server), a remote server
//!   behind.
//!
//! The decisions are the [`Gate`](super::Gate)'s, one per session, exactly as over stdio; this
//! module moves messages between HTTP requests, event streams, processes and the upstream
//! (`session`), puts the guard of toolschema-http in front (`front`), and speaks both
//! protocol revisions: 2025-11-25 with `initialize` and sessions, 2026-07-28 with the revision
//! in every request's `_meta`, no session, and the standard request headers (`wire`).
//!
//! Nothing is shared between proxy processes but what the protocol carries: a 2026-07-28
//! request can go to any replica, and so can a request of a 2025-11-25 session at an upstream
//! (its session id is the upstream's); sessions with a server process of their own live in
//! one replica.

mod front;
mod queue;
mod routes;
mod session;
mod sse;
mod stdio_client;
mod stdio_server;
mod upstream;
mod wire;

pub use stdio_client::run_stdio_upstream;

use crate::{audit_log::AuditLog, ProxyError};
use front::Front;
use http::HeaderMap;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;
use toolschema_gate::ToolOverrides;
use toolschema_gate::{GateConfig, Glob, HolderPolicy};
use toolschema_http::{Guard, GuardConfig, ToolScopes};
use toolschema_mcp::server_process::{ServerCommand, DEFAULT_SHUTDOWN_GRACE};

/// How often idle sessions are looked for, at most.
const SWEEP: Duration = Duration::from_secs(5);

/// The server behind the proxy.
#[derive(Debug, Clone)]
pub enum ServerSide {
    /// A command started once per session, spoken to over stdio.
    Command(ServerCommand),
    /// A remote server over Streamable HTTP.
    Upstream {
        /// Its MCP endpoint.
        url: String,
        /// Headers added to every request to it (`--header`).
        headers: HeaderMap,
    },
}

/// The `[proxy]` table of `toolschema.toml`: what each token's holder may see and call, titles
/// and descriptions shown in place of the server's, and the scopes tools need.
///
/// ```toml
/// [proxy.tokens.alice]              # a name from --auth-token-file (or a JWT's subject)
/// allow = ["search", "files_*"]
/// deny = ["files_delete"]
///
/// [proxy.overrides.search]
/// description = "Search the internal documentation. Short queries work best."
///
/// [proxy.tool-scopes]
/// "files_*" = "files:read"
///
/// [proxy.servers.time]               # one of many servers behind one front
/// command = ".venv/bin/mcp-server-time"
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct ProxyFile {
    /// Tool policies per token name.
    #[serde(default)]
    pub tokens: BTreeMap<String, TokenPolicy>,
    /// Titles and descriptions per tool.
    #[serde(default)]
    pub overrides: ToolOverrides,
    /// The scopes a call to each tool needs.
    #[serde(default)]
    pub tool_scopes: ToolScopes,
    /// Servers behind one front (`toolschema proxy`), by name: merged with `--server`.
    #[serde(default)]
    pub servers: BTreeMap<String, crate::servers::ServerEntry>,
}

impl ProxyFile {
    /// What `principal` may see and call: its `[proxy.tokens.NAME]` table (none: every tool
    /// the proxy lets through), and the scopes each tool needs against those it holds.
    pub fn holder_policy(&self, principal: &toolschema_http::Principal) -> HolderPolicy {
        let rules = self.tokens.get(principal.name());
        HolderPolicy {
            name: principal.name().to_string(),
            allow: rules
                .map(|r| r.allow.iter().map(Glob::new).collect())
                .unwrap_or_default(),
            deny: rules
                .map(|r| r.deny.iter().map(Glob::new).collect())
                .unwrap_or_default(),
            scopes: self.tool_scopes.clone(),
            granted: principal.scopes().cloned(),
        }
    }

    /// Whether the file gives any principal a policy of its own (tokens' tables, tools'
    /// scopes).
    pub fn has_holder_policies(&self) -> bool {
        !self.tokens.is_empty() || !self.tool_scopes.is_empty()
    }
}

/// What one token's holder may see and call.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TokenPolicy {
    /// Tool-name globs it may use; empty: every tool the proxy lets through.
    #[serde(default)]
    pub allow: Vec<String>,
    /// Tool-name globs it may not use (they win over `allow`).
    #[serde(default)]
    pub deny: Vec<String>,
}

/// The HTTP proxy's settings.
#[derive(Debug, Clone)]
pub struct HttpProxyConfig {
    /// What every session's gate decides with (its policy gets the client's on top).
    pub gate: GateConfig,
    /// The server behind.
    pub server: ServerSide,
    /// The `[proxy]` table of the settings file.
    pub file: ProxyFile,
    /// Append one JSON line per `tools/call` to this file.
    pub audit: Option<PathBuf>,
    /// Include the arguments of each call in the audit log.
    pub audit_arguments: bool,
    /// The largest message accepted (a request body is also bounded by the guard).
    pub max_message_bytes: usize,
    /// The longest a request may take, from its first byte to its answer.
    pub request_timeout: Duration,
    /// The most sessions (and 2026-07-28 lanes) open at once.
    pub max_sessions: usize,
    /// How long a server process gets to exit once its input is closed, and after `SIGTERM`.
    pub shutdown_grace: Duration,
    /// Count every call, request and session here (`--metrics`).
    pub metrics: Option<Arc<crate::metrics::Metrics>>,
    /// Say here whether the proxy is ready (`/readyz`); `None`: the front keeps its own.
    pub health: Option<Arc<crate::health::Health>>,
    /// Export traces over OTLP/HTTP.
    pub trace: Option<crate::trace::TraceConfig>,
    /// The servers behind one front, when `server` is the proxy's own merged server: each is
    /// probed for `/readyz`.
    pub servers: Vec<crate::servers::ServerSpec>,
}

impl HttpProxyConfig {
    /// Defaults for a server side.
    pub fn new(server: ServerSide) -> HttpProxyConfig {
        HttpProxyConfig {
            gate: GateConfig::default(),
            server,
            file: ProxyFile::default(),
            audit: None,
            audit_arguments: false,
            max_message_bytes: toolschema_mcp::framing::DEFAULT_MAX_MESSAGE_BYTES,
            request_timeout: Duration::from_secs(300),
            max_sessions: 100,
            shutdown_grace: DEFAULT_SHUTDOWN_GRACE,
            metrics: None,
            health: None,
            trace: None,
            servers: Vec::new(),
        }
    }

    /// The gate's settings for a session: audit records are made for the audit log and for
    /// the metrics.
    fn session_gate(&self, audit: bool) -> GateConfig {
        let mut gate = self.gate.clone();
        gate.audit = audit || self.metrics.is_some();
        gate.audit_arguments = self.audit_arguments;
        gate.max_message_bytes = self.max_message_bytes;
        gate
    }

    /// The health the probes answer from, its readiness probing the server side.
    fn start_health(&self) -> Arc<crate::health::Health> {
        let health = self.health.clone().unwrap_or_default();
        if !self.servers.is_empty() {
            // Each server is probed itself, so that `/readyz` names the one that is down.
            health.probe_servers(&self.servers);
            return health;
        }
        match &self.server {
            ServerSide::Command(command) => health.probe_command(command.clone()),
            ServerSide::Upstream { url, headers } => health.probe_upstream(
                url,
                headers
                    .iter()
                    .filter_map(|(name, value)| {
                        Some((name.to_string(), value.to_str().ok()?.to_string()))
                    })
                    .collect(),
            ),
        }
        health
    }

    /// The audit log, with the overrides it names.
    fn open_audit(&self) -> Result<Option<Arc<AuditLog>>, ProxyError> {
        let Some(path) = &self.audit else {
            return Ok(None);
        };
        let log =
            AuditLog::open(path, self.audit_arguments).map_err(|source| ProxyError::Audit {
                path: path.clone(),
                source,
            })?;
        Ok(Some(Arc::new(
            log.with_overrides(self.gate.overrides.clone()),
        )))
    }
}

/// Why the HTTP proxy could not serve.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    /// The address cannot be bound.
    #[error("cannot listen on {address}: {source}")]
    Bind {
        /// The address.
        address: String,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The guard refused to start (no authentication on a public address, a bad token file...).
    #[error(transparent)]
    Guard(#[from] toolschema_http::StartError),
    /// The upstream URL cannot be used.
    #[error("{0}")]
    Upstream(String),
    /// The proxy itself could not be set up.
    #[error(transparent)]
    Proxy(#[from] ProxyError),
}

/// A future that completes at the first SIGTERM or SIGINT (the handlers are installed now, so
/// that a signal that comes before the future is awaited is not lost).
pub(crate) fn on_stop_signal() -> std::io::Result<impl std::future::Future<Output = ()>> {
    use tokio::signal::unix::{signal, SignalKind};
    let mut terminate = signal(SignalKind::terminate())?;
    let mut interrupt = signal(SignalKind::interrupt())?;
    Ok(async move {
        tokio::select! {
            _ = terminate.recv() => {}
            _ = interrupt.recv() => {}
        }
    })
}

/// Serve the proxy over Streamable HTTP at `http://ADDRESS/mcp` until SIGINT or SIGTERM, behind
/// a guard configured by `guard`; `ready` is told the address bound and the guard. Every
/// session is closed (its server stopped, its upstream session deleted) before it returns.
pub async fn serve(
    config: HttpProxyConfig,
    address: &str,
    mut guard: GuardConfig,
    ready: impl FnOnce(SocketAddr, &Guard),
) -> Result<(), ServeError> {
    let asked = tokio::net::lookup_host(address)
        .await
        .map_err(|source| ServeError::Bind {
            address: address.to_string(),
            source,
        })?;
    for asked in asked {
        guard.check_address(asked)?;
    }
    let listener = tokio::net::TcpListener::bind(address)
        .await
        .map_err(|source| ServeError::Bind {
            address: address.to_string(),
            source,
        })?;
    let bound = listener.local_addr().map_err(|source| ServeError::Bind {
        address: address.to_string(),
        source,
    })?;
    guard.endpoint_path = front::ENDPOINT.to_string();
    if guard.tool_scopes.is_empty() {
        guard.tool_scopes = config.file.tool_scopes.clone();
    }
    let guard = Arc::new(Guard::start(guard, bound).await?);
    guard
        .reload_on_sighup()
        .map_err(|e| ServeError::Proxy(ProxyError::Signals(e)))?;
    let upstream = match &config.server {
        ServerSide::Upstream { url, headers } => Some(
            upstream::Upstream::new(
                url,
                headers.clone(),
                config.max_message_bytes,
                config.request_timeout,
            )
            .map_err(ServeError::Upstream)?,
        ),
        ServerSide::Command(_) => None,
    };
    let audit = config.open_audit()?;
    let exporter = crate::trace::start_exporter(config.trace.as_ref(), config.metrics.as_ref())
        .map_err(ProxyError::Trace)?;
    let (exporter, export_task) = exporter.unzip();
    let stop = on_stop_signal().map_err(|e| ServeError::Proxy(ProxyError::Signals(e)))?;
    let idle = guard.limits().session_idle;
    let health = config.start_health();
    let front = Arc::new(Front::new(
        config,
        guard.clone(),
        upstream,
        audit,
        health,
        exporter,
    ));
    ready(bound, &guard);
    let sweeper = {
        let front = Arc::downgrade(&front);
        let every = (idle / 4).clamp(Duration::from_millis(200), SWEEP);
        tokio::spawn(async move {
            let mut ticks = tokio::time::interval(every);
            loop {
                ticks.tick().await;
                let Some(front) = front.upgrade() else {
                    return;
                };
                front.sweep().await;
            }
        })
    };
    let limits = *guard.limits();
    let make_service = || {
        let front = front.clone();
        hyper::service::service_fn(move |request| {
            let front = front.clone();
            async move { Ok::<_, std::convert::Infallible>(front.handle(request).await) }
        })
    };
    // Streams end with their sessions.
    toolschema_http::serve::serve_until_stopped(listener, limits, make_service, stop, || async {
        sweeper.abort();
        front.close_all().await;
    })
    .await;
    if let Some(task) = export_task {
        task.finish(crate::trace::EXPORT_GRACE).await;
    }
    Ok(())
}
