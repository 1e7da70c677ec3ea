//! toolschema-proxy: a validating proxy in front of any MCP server, over stdio or Streamable
//! HTTP on either side.
//!
//! The client starts the proxy where it would start the server; the proxy starts the server and
//! passes every message through, in both directions, in order, byte for byte. It steps in only
//! for `tools/call`: arguments that break the tool's `inputSchema` are answered with an `isError`
//! result carrying the core's messages (the call never reaches the server), and with
//! `--output-check` the result's `structuredContent` is checked against the `outputSchema`.
//!
//! Why raw lines rather than rmcp's typed transport: rmcp reads messages into its model, which
//! would re-serialize every message (dropping fields it does not know, reordering keys) and
//! drops notifications whose method it does not know. A proxy must pass those through as they
//! are, so it frames and forwards the original bytes and reads only `id` and `method` to route
//! them. The few messages it writes itself are written by toolschema-gate's `message`, in the shapes
//! rmcp's model writes (a test compares them).
//!
//! The decisions live in [`Gate`] (the toolschema-gate crate), which knows no transport: it is
//! fed messages and time, and says what to write where. This crate holds the transports: the
//! stdio relay (two blocking threads, [`run`]) drives one gate per process; the HTTP front and
//! upstream ([`http`]) drive a gate per session the same way. The audit file ([`AuditLog`]) is
//! here too; the records it holds are the gate's.

mod audit_log;
#[cfg(feature = "clap")]
pub mod flags;
pub mod health;
pub mod http;
pub mod metrics;
pub mod metrics_listener;
mod own_stdio;
mod relay;
pub mod serve;
pub mod servers;
pub mod trace;

pub use audit_log::AuditLog;
pub use toolschema_gate::{
    Action, Gate, GateConfig, PinMode, Pins, DEFAULT_LISTING_RETRY, DEFAULT_LISTING_TIMEOUT,
};
/// The decisions, re-exported so that the proxy's users name one crate.
pub use toolschema_gate::{
    AuditFormat, AuditRecord, InputCheck, InputVerdict, OnUnchecked, OutputCheck, OutputVerdict,
    Verdict,
};
pub use toolschema_gate::{Glob, HolderPolicy, ToolOverride, ToolOverrides, ToolPolicy};
pub use toolschema_gate::{ServerChecks, UnknownArguments, Unlisted};

use relay::{ClientEnd, Relay};
use serde_json::json;
use std::fs::File;
use std::io::{BufReader, Read, Write};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;
use tokio::signal::unix::{signal, SignalKind};
use tokio::sync::oneshot;
use toolschema_gate::report;
use toolschema_mcp::framing::{LineReader, DEFAULT_MAX_MESSAGE_BYTES};
use toolschema_mcp::server_process::{
    describe_exit, ServerCommand, ServerProcess, SpawnError, StderrMode, DEFAULT_SHUTDOWN_GRACE,
};

/// How long one wait for the server's exit lasts before the proxy waits again.
const SERVER_WATCH: Duration = Duration::from_secs(24 * 60 * 60);

/// How much of a pipe is read at once.
const READ_BUFFER_BYTES: usize = 64 * 1024;

/// The proxy's settings.
#[derive(Debug, Clone)]
pub struct ProxyConfig {
    /// The server to start.
    pub command: ServerCommand,
    /// What the gate decides with (its audit and message-size settings are taken from the
    /// fields below).
    pub gate: GateConfig,
    /// Append one JSON line per `tools/call` to this file.
    pub audit: Option<PathBuf>,
    /// Include the arguments of each call in the audit log.
    pub audit_arguments: bool,
    /// The largest message accepted from either side.
    pub max_message_bytes: usize,
    /// How long the server gets to exit once its input is closed, and again after `SIGTERM`.
    pub shutdown_grace: Duration,
    /// Count every call here (`--metrics`).
    pub metrics: Option<Arc<metrics::Metrics>>,
    /// Say here whether the proxy is ready (the catalog is learned).
    pub health: Option<Arc<health::Health>>,
    /// Export traces over OTLP/HTTP.
    pub trace: Option<trace::TraceConfig>,
}

impl ProxyConfig {
    /// Defaults for a server command: output check `warn`, every tool allowed, no audit log,
    /// 16 MiB messages.
    pub fn new(command: ServerCommand) -> ProxyConfig {
        ProxyConfig {
            command,
            gate: GateConfig::default(),
            audit: None,
            audit_arguments: false,
            max_message_bytes: DEFAULT_MAX_MESSAGE_BYTES,
            shutdown_grace: DEFAULT_SHUTDOWN_GRACE,
            metrics: None,
            health: None,
            trace: None,
        }
    }
}

/// How the proxy ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProxyExit {
    /// The client closed its output; the server was shut down.
    ClientClosed,
    /// The server exited while the client was connected.
    ServerExited {
        /// The server's exit code (`1` if it exited with 0, `128 + n` for signal `n`).
        code: i32,
    },
    /// The proxy was asked to stop by a signal; the server was shut down.
    Signal(i32),
}

impl ProxyExit {
    /// The proxy's exit code.
    pub fn code(self) -> i32 {
        match self {
            ProxyExit::ClientClosed => 0,
            ProxyExit::ServerExited { code } => code,
            ProxyExit::Signal(signal) => 128 + signal,
        }
    }
}

/// Why the proxy could not run.
#[derive(Debug, thiserror::Error)]
pub enum ProxyError {
    /// The server could not be started.
    #[error(transparent)]
    Spawn(#[from] SpawnError),
    /// The audit log cannot be opened.
    #[error("cannot open the audit log {path}: {source}")]
    Audit {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// Signal handlers could not be installed.
    #[error("cannot install signal handlers: {0}")]
    Signals(std::io::Error),
    /// The proxy's standard streams, the server's pipes or the relay threads could not be set up.
    #[error("cannot set up the relay: {0}")]
    Stdio(std::io::Error),
    /// The trace exporter cannot be set up (the endpoint is not a URL).
    #[error("{0}")]
    Trace(String),
}

/// Run the proxy on this process's stdin and stdout.
pub async fn run_stdio(config: ProxyConfig) -> Result<ProxyExit, ProxyError> {
    let input = own_stdio::input().map_err(ProxyError::Stdio)?;
    let output = own_stdio::output().map_err(ProxyError::Stdio)?;
    run(config, input, output).await
}

/// Run the proxy between a client (`client_in`, `client_out`: blocking streams, each used by one
/// relay thread) and the server of `config`.
pub async fn run<R, W>(
    config: ProxyConfig,
    client_in: R,
    client_out: W,
) -> Result<ProxyExit, ProxyError>
where
    R: Read + Send + 'static,
    W: Write + Send + 'static,
{
    let audit = match &config.audit {
        Some(path) => Some(
            AuditLog::open(path, config.audit_arguments)
                .map_err(|source| ProxyError::Audit {
                    path: path.clone(),
                    source,
                })?
                .with_overrides(config.gate.overrides.clone()),
        ),
        None => None,
    };
    let exporter = trace::start_exporter(config.trace.as_ref(), config.metrics.as_ref())
        .map_err(ProxyError::Trace)?;
    let mut terminate = signal(SignalKind::terminate()).map_err(ProxyError::Signals)?;
    let mut interrupt = signal(SignalKind::interrupt()).map_err(ProxyError::Signals)?;
    let (mut process, stdin, stdout) =
        ServerProcess::spawn(&config.command, StderrMode::PassThrough)?;
    let server_in = File::from(stdin.into_owned_fd().map_err(ProxyError::Stdio)?);
    let server_out = File::from(stdout.into_owned_fd().map_err(ProxyError::Stdio)?);
    let tail = process.stderr_tail();
    let max = config.max_message_bytes;
    let grace = config.shutdown_grace;
    let command = config.command.clone();
    let mut gate_config = config.gate.clone();
    // The metrics count the gate's audit records; the tracer reads each call's verdict there.
    gate_config.audit = audit.is_some() || config.metrics.is_some() || exporter.is_some();
    gate_config.audit_arguments = config.audit_arguments;
    gate_config.max_message_bytes = max;
    let mut gate = Gate::new(gate_config);
    if config.metrics.is_some() {
        gate.record_operations();
    }
    let (exporter, export_task) = exporter.unzip();
    let relay = Arc::new(Relay::new(
        gate,
        Box::new(client_out),
        server_in,
        audit,
        config.metrics.clone(),
        exporter.map(|exporter| trace::SessionTracer::new(exporter, None)),
    ));
    let _session = metrics::OpenSession::new(config.metrics.clone());
    if let Some(health) = &config.health {
        let relay = Arc::downgrade(&relay);
        health.set_check(Box::new(move || match relay.upgrade() {
            Some(relay) if relay.catalog_learned() => Ok("the server's tools are learned".into()),
            Some(_) => Err("the server's tools are not learned yet (no tools/list yet)".into()),
            None => Err("the server is gone".into()),
        }));
    }
    let client_reader =
        LineReader::new(BufReader::with_capacity(READ_BUFFER_BYTES, client_in), max);
    let server_reader =
        LineReader::new(BufReader::with_capacity(READ_BUFFER_BYTES, server_out), max);
    // Each direction is a thread of its own; the runtime only watches the two, the signals, the
    // server process and the gate's deadlines. A thread still blocked in a read when the proxy
    // ends goes with it.
    let mut client_done = spawn_direction("client-to-server", {
        let relay = relay.clone();
        move || relay.client_to_server(client_reader)
    })?;
    let mut server_done = spawn_direction("server-to-client", {
        let relay = relay.clone();
        move || relay.server_to_client(server_reader)
    })?;

    enum First {
        Client(ClientEnd),
        /// The server closed its stdout.
        Server,
        /// The server exited (a child it started may still hold its stdout open).
        ServerExited,
        Signal(i32),
    }
    // A client that closed its output may have left calls waiting in the gate for the proxy's
    // own listing, forwarded late: the server gets the shutdown grace to answer what the client
    // asked before its input is closed.
    let mut client_end: Option<(ClientEnd, tokio::time::Instant)> = None;
    // A finished receiver must not be polled again.
    let mut server_finished = false;
    let first = loop {
        if let Some((end, since)) = client_end.take() {
            let waited = since.elapsed() >= grace;
            if matches!(end, ClientEnd::ServerGone) || waited || relay.settled() {
                break First::Client(end);
            }
            client_end = Some((end, since));
        }
        let deadline = relay.next_deadline().map(tokio::time::Instant::from_std);
        let closing = client_end.as_ref().map(|(_, since)| *since + grace);
        let wait = async {
            match deadline.into_iter().chain(closing).min() {
                Some(at) => tokio::time::sleep_until(at).await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            end = &mut client_done, if client_end.is_none() => {
                let end = end.unwrap_or(ClientEnd::EndOfInput);
                client_end = Some((end, tokio::time::Instant::now()));
            }
            // A server that goes once the client is done has simply finished.
            _ = &mut server_done, if !server_finished => {
                server_finished = true;
                break match client_end {
                    Some((end, _)) => First::Client(end),
                    None => First::Server,
                };
            }
            Some(_) = process.wait_for_exit(SERVER_WATCH) => break match client_end {
                Some((end, _)) => First::Client(end),
                None => First::ServerExited,
            },
            _ = terminate.recv() => break First::Signal(nix::libc::SIGTERM),
            _ = interrupt.recv() => break First::Signal(nix::libc::SIGINT),
            _ = wait => relay.tick(),
            _ = relay.changed.notified() => {}
        }
    };
    let exit = match first {
        First::Client(ClientEnd::EndOfInput) | First::Signal(_) => {
            // Closing the server's stdin asks it to exit; what it still sends is passed on.
            relay.close_server();
            process.shut_down(grace).await;
            if !server_finished {
                let _ = tokio::time::timeout(Duration::from_secs(1), &mut server_done).await;
            }
            Ok(match first {
                First::Signal(signal) => ProxyExit::Signal(signal),
                _ => ProxyExit::ClientClosed,
            })
        }
        First::Client(ClientEnd::ServerGone) | First::Server | First::ServerExited => {
            if !server_finished {
                // Pass on whatever the server wrote before it went.
                let _ = tokio::time::timeout(Duration::from_secs(1), &mut server_done).await;
            }
            // Also stops what the server left running in its process group (a child holding
            // its stdout open).
            let status = process.shut_down(grace).await;
            let described = status.map_or_else(|| "an unknown status".to_string(), describe_exit);
            let lines = tail.lines();
            relay.server_gone(
                &format!("the MCP server exited ({described}) before answering"),
                json!({"exitCode": status.and_then(|s| s.code()), "stderr": lines}),
            );
            let note = toolschema_mcp::server_process::stderr_note(tail.block().as_deref());
            report(&format!(
                "the MCP server '{command}' exited with {described}{note}"
            ));
            Ok(ProxyExit::ServerExited {
                code: exit_code(status),
            })
        }
    };
    if let Some(task) = export_task {
        task.finish(trace::EXPORT_GRACE).await;
    }
    exit
}

/// Start one direction of the relay on a thread of its own; the receiver gets what it returned.
fn spawn_direction<T: Send + 'static>(
    name: &str,
    direction: impl FnOnce() -> T + Send + 'static,
) -> Result<oneshot::Receiver<T>, ProxyError> {
    let (done, receiver) = oneshot::channel();
    std::thread::Builder::new()
        .name(name.to_string())
        .spawn(move || {
            let _ = done.send(direction());
        })
        .map_err(ProxyError::Stdio)?;
    Ok(receiver)
}

/// The proxy's exit code for a server that exited on its own: never 0, since the client lost its
/// server.
fn exit_code(status: Option<std::process::ExitStatus>) -> i32 {
    use std::os::unix::process::ExitStatusExt;
    match status {
        Some(status) => match (status.code(), status.signal()) {
            (Some(0), _) => 1,
            (Some(code), _) => code,
            (None, Some(signal)) => 128 + signal,
            (None, None) => 1,
        },
        None => 1,
    }
}
