//! `snapshot`: connect to a live MCP server, list every tool, and keep the tools exactly as the
//! server sent them.
//!
//! The session runs on rmcp ([`crate::connection`]). What rmcp cannot give is the tools as sent
//! (its typed `Tool` drops fields it does not know and writes keys in its own order), so the
//! transports keep each raw result beside the typed message and the tools are read from there.

use crate::connection::raw::{RawResults, Watch};
use crate::connection::{self, Session, SessionFailure};
use crate::framing::DEFAULT_MAX_MESSAGE_BYTES;
use crate::server_process::{
    describe_exit, ServerCommand, SpawnError, StderrTail, DEFAULT_SHUTDOWN_GRACE,
};
use rmcp::service::RoleClient;
use serde_json::{json, Value};
use std::fmt;
use std::sync::Mutex;
use std::time::Duration;
use tokio::signal::unix::Signal;

pub use crate::connection::Target;

/// How long a server that failed the snapshot gets to exit before it is stopped.
const FAILED_SERVER_GRACE: Duration = Duration::from_millis(300);

/// How a snapshot is taken.
#[derive(Debug, Clone)]
pub struct SnapshotOptions {
    /// How long the whole snapshot may take, server start included.
    pub timeout: Duration,
    /// HTTP headers sent with every request (`--url` only).
    pub headers: Vec<(String, String)>,
    /// The largest message accepted from the server.
    pub max_message_bytes: usize,
}

impl Default for SnapshotOptions {
    fn default() -> Self {
        SnapshotOptions {
            timeout: Duration::from_secs(30),
            headers: Vec::new(),
            max_message_bytes: DEFAULT_MAX_MESSAGE_BYTES,
        }
    }
}

/// The tools a server listed, as it sent them.
#[derive(Debug, Clone, PartialEq)]
pub struct Snapshot {
    /// Every tool of every page, in order, each exactly as sent (keys in the server's order).
    pub tools: Vec<Value>,
    /// How many `tools/list` pages the server returned.
    pub pages: usize,
    /// The tools whose definitions hold a value that reading changed (a lone surrogate escape
    /// read as U+FFFD, a number read as another), by their place in `tools`, with the first
    /// such value of each: what was read of them is not exactly what the server sent.
    pub lossy: Vec<(usize, toolschema::json::Loss)>,
}

impl Snapshot {
    /// The snapshot as a `tools/list` result: `{"tools": [...]}`.
    pub fn to_value(&self) -> Value {
        json!({"tools": self.tools})
    }
}

/// What the snapshot was waiting for when it failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// The `initialize` handshake.
    Initialize,
    /// A `tools/list` page (1-based).
    ListTools(usize),
}

impl Phase {
    /// For a timeout while waiting for a later page: that `--timeout` is for the whole listing,
    /// and how many pages came before (a server may page slowly, or forever).
    fn pages_before(&self) -> String {
        match self {
            Phase::ListTools(page) if *page > 1 => format!(
                ", the time allowed for the whole listing, of which it had sent {} page{}",
                page - 1,
                if *page == 2 { "" } else { "s" }
            ),
            _ => String::new(),
        }
    }
}

impl fmt::Display for Phase {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Phase::Initialize => f.write_str("the initialize response"),
            Phase::ListTools(1) => f.write_str("the tools/list response"),
            Phase::ListTools(page) => write!(f, "tools/list page {page}"),
        }
    }
}

/// Why a snapshot failed.
#[derive(Debug, thiserror::Error)]
pub enum SnapshotError {
    /// The server could not be started.
    #[error(transparent)]
    Spawn(#[from] SpawnError),
    /// The server exited before the snapshot was complete.
    #[error("the MCP server {target} exited with {status} while the snapshot waited for {phase}{}{}", .sent.as_ref().map(|sent| format!(", after {sent}")).unwrap_or_default(), crate::server_process::stderr_note(.stderr.as_deref()))]
    ServerExited {
        /// The server.
        target: String,
        /// How it exited.
        status: String,
        /// What the snapshot was waiting for.
        phase: Phase,
        /// What it sent last that could not be read (a line cut short), if anything.
        sent: Option<String>,
        /// The last lines of its stderr.
        stderr: Option<String>,
    },
    /// The server did not answer in time.
    #[error("the MCP server {target} did not send {phase} within {}s (--timeout){}{}", .after.as_secs_f64(), .phase.pages_before(), crate::server_process::stderr_note(.stderr.as_deref()))]
    Timeout {
        /// The server.
        target: String,
        /// What the snapshot was waiting for.
        phase: Phase,
        /// The time allowed.
        after: Duration,
        /// The last lines of its stderr.
        stderr: Option<String>,
    },
    /// The server answered with an error, with something that is not a tool list, or with a
    /// message that is not JSON-RPC.
    #[error("the MCP server {target} failed while the snapshot waited for {phase}: {message}{}", crate::server_process::stderr_note(.stderr.as_deref()))]
    Protocol {
        /// The server.
        target: String,
        /// What the snapshot was waiting for.
        phase: Phase,
        /// What went wrong.
        message: String,
        /// The last lines of its stderr.
        stderr: Option<String>,
    },
    /// The server's answer could not be taken (over the size limit, nested too deep); the
    /// server itself did nothing wrong.
    #[error("cannot read {phase} of the MCP server {target}: {why}")]
    Unread {
        /// The server.
        target: String,
        /// What the snapshot was waiting for.
        phase: Phase,
        /// Why, with how to change it.
        why: String,
    },
    /// Interrupted (Ctrl-C) before it was complete.
    #[error("interrupted; the snapshot is incomplete and was not written")]
    Interrupted,
    /// An option is unusable (a header that is not `Name: value`).
    #[error("{0}")]
    Options(String),
    /// Ctrl-C cannot be listened for.
    #[error("cannot listen for Ctrl-C: {0}")]
    Signal(std::io::Error),
}

/// Take a snapshot of a server's tools.
pub async fn take(target: &Target, options: &SnapshotOptions) -> Result<Snapshot, SnapshotError> {
    // Listen for Ctrl-C before the server starts: one that came earlier would end the process
    // with the default action, leaving the server running.
    let mut interrupt = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::interrupt())
        .map_err(SnapshotError::Signal)?;
    match target {
        Target::Command(command) => take_over_stdio(target, command, options, &mut interrupt).await,
        Target::Url(url) => take_over_http(target, url, options, &mut interrupt).await,
    }
}

async fn take_over_stdio(
    target: &Target,
    command: &ServerCommand,
    options: &SnapshotOptions,
    interrupt: &mut Signal,
) -> Result<Snapshot, SnapshotError> {
    let results = RawResults::default();
    let watch = Watch::reporting();
    let (mut process, transport) =
        connection::spawn_stdio(command, &results, &watch, options.max_message_bytes)?;
    let tail = process.stderr_tail();
    let phase = Mutex::new(Phase::Initialize);
    let session = run_session(transport, &results, &watch, &phase);
    let outcome = within_limits(options, interrupt, session).await;
    let phase = phase.into_inner().unwrap_or(Phase::Initialize);
    let result = match outcome {
        Outcome::Done(snapshot) => Ok(snapshot),
        Outcome::Failed(failure) => {
            // A closed connection or a failed write is most often a server that exited, and a
            // broken answer may be its last words: say how it exited.
            let exited = match failure.exit_wait() {
                Some(wait) => process.wait_for_exit(wait).await,
                None => None,
            };
            Err(match exited {
                Some(status) => SnapshotError::ServerExited {
                    target: target.to_string(),
                    status: describe_exit(status),
                    phase,
                    sent: failure.unreadable_sent().map(str::to_string),
                    stderr: tail.block(),
                },
                None => protocol_error(target, phase, failure, &tail),
            })
        }
        Outcome::TimedOut => Err(SnapshotError::Timeout {
            target: target.to_string(),
            phase,
            after: options.timeout,
            stderr: tail.block(),
        }),
        Outcome::Interrupted => Err(SnapshotError::Interrupted),
    };
    // A server that failed gets less time to exit than one that answered everything.
    let grace = if result.is_ok() {
        DEFAULT_SHUTDOWN_GRACE
    } else {
        FAILED_SERVER_GRACE
    };
    process.shut_down(grace).await;
    result
}

async fn take_over_http(
    target: &Target,
    url: &str,
    options: &SnapshotOptions,
    interrupt: &mut Signal,
) -> Result<Snapshot, SnapshotError> {
    let results = RawResults::default();
    let watch = Watch::reporting();
    let transport = connection::http_transport(
        url,
        &options.headers,
        &results,
        &watch,
        options.max_message_bytes,
    )
    .map_err(SnapshotError::Options)?;
    let phase = Mutex::new(Phase::Initialize);
    let session = run_session(transport, &results, &watch, &phase);
    let outcome = within_limits(options, interrupt, session).await;
    let phase = phase.into_inner().unwrap_or(Phase::Initialize);
    match outcome {
        Outcome::Done(snapshot) => Ok(snapshot),
        Outcome::Failed(failure) => Err(protocol_error(
            target,
            phase,
            failure,
            &StderrTail::default(),
        )),
        Outcome::TimedOut => Err(SnapshotError::Timeout {
            target: target.to_string(),
            phase,
            after: options.timeout,
            stderr: None,
        }),
        Outcome::Interrupted => Err(SnapshotError::Interrupted),
    }
}

/// How a session ended.
enum Outcome {
    Done(Snapshot),
    Failed(SessionFailure),
    TimedOut,
    Interrupted,
}

/// Run a session within `--timeout`, unless the user interrupts it (Ctrl-C) first.
async fn within_limits(
    options: &SnapshotOptions,
    interrupt: &mut Signal,
    session: impl std::future::Future<Output = Result<Snapshot, SessionFailure>>,
) -> Outcome {
    tokio::select! {
        outcome = tokio::time::timeout(options.timeout, session) => match outcome {
            Ok(Ok(snapshot)) => Outcome::Done(snapshot),
            Ok(Err(failure)) => Outcome::Failed(failure),
            Err(_) => Outcome::TimedOut,
        },
        _ = interrupt.recv() => Outcome::Interrupted,
    }
}

fn protocol_error(
    target: &Target,
    phase: Phase,
    failure: SessionFailure,
    tail: &StderrTail,
) -> SnapshotError {
    if let SessionFailure::Unreadable(unreadable) = &failure {
        if !unreadable.breaks_protocol {
            return SnapshotError::Unread {
                target: target.to_string(),
                phase,
                why: unreadable.why.clone(),
            };
        }
    }
    SnapshotError::Protocol {
        target: target.to_string(),
        phase,
        message: failure.to_string(),
        stderr: tail.block(),
    }
}

/// Initialize, list every page of tools, close.
async fn run_session<T, E, A>(
    transport: T,
    results: &RawResults,
    watch: &Watch,
    phase: &Mutex<Phase>,
) -> Result<Snapshot, SessionFailure>
where
    T: rmcp::transport::IntoTransport<RoleClient, E, A>,
    E: std::error::Error + Send + Sync + 'static,
{
    let session: Session = connection::handshake(transport, watch).await?;
    let listed = connection::list_all_tools(session.peer(), results, watch, |page| {
        if let Ok(mut phase) = phase.lock() {
            *phase = Phase::ListTools(page);
        }
    })
    .await;
    // Closing politely (stdin closed, or the HTTP session deleted) is best effort.
    let _ = tokio::time::timeout(Duration::from_secs(2), session.cancel()).await;
    let listed = listed?;
    Ok(Snapshot {
        tools: listed.tools,
        pages: listed.pages,
        lossy: listed.lossy,
    })
}
