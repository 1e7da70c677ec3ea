//! A server over stdio behind an HTTP session: one process per session, its stdout read on a
//! thread of its own (as the stdio relay reads it), its stdin written by another, so neither
//! direction waits for the other or for the runtime.

use super::queue::{Budget, Permit};
use super::session::{lock, Session};
use serde_json::json;
use std::fs::File;
use std::io::{BufReader, BufWriter, Write};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use toolschema_mcp::framing::LineReader;
use toolschema_mcp::server_process::{
    describe_exit, ServerCommand, ServerProcess, SpawnError, StderrMode, StderrTail,
};

/// How much of a pipe is read or written at once.
const BUFFER_BYTES: usize = 64 * 1024;

/// How often the session checks whether its server exited.
const EXIT_POLL: Duration = Duration::from_millis(500);

/// A server process behind a session.
pub(crate) struct StdioServer {
    writer: Mutex<Option<mpsc::Sender<Queued>>>,
    /// What the server has not read yet may take.
    budget: Arc<Budget>,
    process: tokio::sync::Mutex<ServerProcess>,
    tail: StderrTail,
    command: ServerCommand,
    grace: Duration,
}

impl StdioServer {
    /// Start the server; returns it and its stdout, to hand to [`StdioServer::start`] once the
    /// session exists. What it has not read of its input is bounded by `budget`.
    pub fn spawn(
        command: &ServerCommand,
        grace: Duration,
        budget: Arc<Budget>,
    ) -> Result<(StdioServer, File), SpawnError> {
        let (process, stdin, stdout) = ServerProcess::spawn(command, StderrMode::PassThrough)?;
        let io_error = |source: std::io::Error| SpawnError {
            program: command.program.clone(),
            source,
        };
        let stdin = File::from(stdin.into_owned_fd().map_err(io_error)?);
        let stdout = File::from(stdout.into_owned_fd().map_err(io_error)?);
        let (sender, lines) = mpsc::channel::<Queued>();
        std::thread::Builder::new()
            .name("server-stdin".into())
            .spawn(move || {
                // A failed write: the server is gone, and its exit is reported.
                let _ = write_lines(lines, stdin);
            })
            .map_err(io_error)?;
        let tail = process.stderr_tail();
        Ok((
            StdioServer {
                writer: Mutex::new(Some(sender)),
                budget,
                process: tokio::sync::Mutex::new(process),
                tail,
                command: command.clone(),
                grace,
            },
            stdout,
        ))
    }

    /// Read the server's stdout into `session`, and tell it when the server exits.
    pub fn start(session: &Arc<Session>, stdout: File, max_message_bytes: usize) {
        let reader = Arc::downgrade(session);
        let spawned = std::thread::Builder::new()
            .name("server-stdout".into())
            .spawn(move || {
                let mut lines = LineReader::new(
                    BufReader::with_capacity(BUFFER_BYTES, stdout),
                    max_message_bytes,
                );
                while let Ok(Some(frame)) = lines.next_blocking() {
                    let Some(session) = reader.upgrade() else {
                        return;
                    };
                    session.server_frame(frame);
                }
            });
        if let Err(e) = spawned {
            session.server_gone(
                &format!("cannot read the MCP server's output: {e}"),
                json!({}),
            );
            return;
        }
        let watched = Arc::downgrade(session);
        tokio::spawn(async move {
            loop {
                let Some(session) = watched.upgrade() else {
                    return;
                };
                if session.is_closed() {
                    return;
                }
                let super::session::Backend::Stdio(server) = session.backend() else {
                    return;
                };
                let status = server.process.lock().await.wait_for_exit(EXIT_POLL).await;
                let Some(status) = status else {
                    continue;
                };
                // What the server wrote before it went reaches the client first.
                tokio::time::sleep(Duration::from_millis(100)).await;
                let described = describe_exit(status);
                let lines = server.tail.lines();
                if !session.is_closed() {
                    session.upstream_error(crate::metrics::UpstreamError::Exited);
                    super::session::report_for(
                        &session.label,
                        &format!(
                            "the MCP server '{}' exited with {described}",
                            server.command
                        ),
                    );
                }
                session.server_gone(
                    &format!("the MCP server exited ({described}) before answering"),
                    json!({"exitCode": status.code(), "stderr": lines}),
                );
                return;
            }
        });
    }

    /// Queue a line for the server's stdin; `false` when the server has not read enough of
    /// what came before to make room for it.
    pub fn send(&self, line: Vec<u8>) -> bool {
        let Some(permit) = self.budget.take(line.len()) else {
            return false;
        };
        if let Some(writer) = lock(&self.writer).as_ref() {
            // A closed writer: the server is gone, and its exit is reported.
            let _ = writer.send(Queued {
                line,
                _permit: Some(permit),
            });
        }
        true
    }

    /// Close the server's stdin, wait for it to exit, then `SIGTERM` and `SIGKILL` its group.
    pub async fn shut_down(&self) {
        lock(&self.writer).take();
        self.process.lock().await.shut_down(self.grace).await;
    }
}

/// A line waiting for a pipe, holding its room in the queue's budget until it is written.
pub(crate) struct Queued {
    pub line: Vec<u8>,
    pub _permit: Option<Permit>,
}

/// Write queued lines to a pipe (a server's stdin, a stdio client's stdout), one per line,
/// flushing whenever the queue is empty; until the queue closes or a write fails.
pub(crate) fn write_lines(
    lines: mpsc::Receiver<Queued>,
    output: impl Write,
) -> std::io::Result<()> {
    let mut out = BufWriter::with_capacity(BUFFER_BYTES, output);
    while let Ok(line) = lines.recv() {
        let mut next = Some(line);
        while let Some(Queued { line, .. }) = next {
            out.write_all(&line)?;
            out.write_all(b"\n")?;
            next = lines.try_recv().ok();
        }
        out.flush()?;
    }
    Ok(())
}
