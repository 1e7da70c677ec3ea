//! An MCP server started as a child process speaking over stdio.
//!
//! The server runs in its own process group, so stopping it also stops what it started (`npx`
//! runs the real server as a grandchild). Its stderr is read continuously, copied through when
//! asked, and the last lines are kept for error reports.

use nix::sys::signal::{killpg, Signal};
use nix::unistd::Pid;
use std::collections::VecDeque;
use std::fmt;
use std::process::{ExitStatus, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};
use tokio::task::JoinHandle;

/// How long a server gets to exit after its stdin is closed, and again after `SIGTERM`.
pub const DEFAULT_SHUTDOWN_GRACE: Duration = Duration::from_secs(2);

/// How often a stopped server's process group is checked for what is left of it.
const GROUP_POLL: Duration = Duration::from_millis(20);

/// How many lines of the server's stderr are kept for error reports.
const TAIL_LINES: usize = 20;
/// How many bytes of one stderr line are kept.
const TAIL_LINE_BYTES: usize = 400;

/// The command that starts a server: a program and its arguments.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerCommand {
    /// The program, looked up on `PATH` when it has no slash.
    pub program: String,
    /// Its arguments.
    pub args: Vec<String>,
}

impl ServerCommand {
    /// A command from its program and arguments.
    pub fn new(
        program: impl Into<String>,
        args: impl IntoIterator<Item = impl Into<String>>,
    ) -> Self {
        ServerCommand {
            program: program.into(),
            args: args.into_iter().map(Into::into).collect(),
        }
    }
}

impl fmt::Display for ServerCommand {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.program)?;
        for arg in &self.args {
            write!(f, " {arg}")?;
        }
        Ok(())
    }
}

/// What to do with the server's stderr besides keeping its tail.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StderrMode {
    /// Copy it to this process's stderr as it arrives.
    PassThrough,
    /// Keep only the tail, for error reports.
    Capture,
}

/// The last lines a server wrote to stderr.
#[derive(Debug, Clone, Default)]
pub struct StderrTail(Arc<Mutex<TailBuffer>>);

#[derive(Debug, Default)]
struct TailBuffer {
    lines: VecDeque<String>,
    partial: Vec<u8>,
}

impl StderrTail {
    fn push(&self, chunk: &[u8]) {
        let Ok(mut buffer) = self.0.lock() else {
            return;
        };
        for &byte in chunk {
            if byte == b'\n' {
                let line = std::mem::take(&mut buffer.partial);
                buffer.push_line(&line);
            } else if buffer.partial.len() < TAIL_LINE_BYTES {
                buffer.partial.push(byte);
            }
        }
    }

    /// The kept lines, oldest first (an unterminated last line included).
    pub fn lines(&self) -> Vec<String> {
        let Ok(buffer) = self.0.lock() else {
            return Vec::new();
        };
        let mut lines: Vec<String> = buffer.lines.iter().cloned().collect();
        if !buffer.partial.is_empty() {
            lines.push(String::from_utf8_lossy(&buffer.partial).into_owned());
        }
        lines
    }

    /// The kept lines as one block for a message: each line indented, or `None` when the server
    /// wrote nothing to stderr.
    pub fn block(&self) -> Option<String> {
        let lines = self.lines();
        if lines.is_empty() {
            return None;
        }
        Some(
            lines
                .iter()
                .map(|line| format!("  | {line}"))
                .collect::<Vec<_>>()
                .join("\n"),
        )
    }
}

impl TailBuffer {
    fn push_line(&mut self, line: &[u8]) {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        if self.lines.len() == TAIL_LINES {
            self.lines.pop_front();
        }
        self.lines
            .push_back(String::from_utf8_lossy(line).into_owned());
    }
}

/// Why a server could not be started.
#[derive(Debug, thiserror::Error)]
#[error("cannot start the MCP server '{program}': {source}")]
pub struct SpawnError {
    /// The program that could not be started.
    pub program: String,
    /// What the operating system said.
    #[source]
    pub source: std::io::Error,
}

/// A running server with its stdin and stdout taken out for the transport.
pub struct ServerProcess {
    child: Child,
    pgid: Option<Pid>,
    stderr_tail: StderrTail,
    stderr_task: Option<JoinHandle<()>>,
    status: Option<ExitStatus>,
    /// Whether nothing of the server's process group is left running (known once it has been
    /// stopped to the end); until then dropping it kills the group.
    group_ended: bool,
}

impl ServerProcess {
    /// Start the server with piped stdin, stdout and stderr, in its own process group.
    pub fn spawn(
        command: &ServerCommand,
        stderr_mode: StderrMode,
    ) -> Result<(ServerProcess, ChildStdin, ChildStdout), SpawnError> {
        let spawn_error = |source| SpawnError {
            program: command.program.clone(),
            source,
        };
        let mut child = Command::new(&command.program)
            .args(&command.args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0)
            .kill_on_drop(true)
            .spawn()
            .map_err(spawn_error)?;
        let missing = || spawn_error(std::io::Error::other("a standard stream was not piped"));
        let stdin = child.stdin.take().ok_or_else(missing)?;
        let stdout = child.stdout.take().ok_or_else(missing)?;
        let stderr = child.stderr.take().ok_or_else(missing)?;
        let pgid = child
            .id()
            .and_then(|id| i32::try_from(id).ok())
            .map(Pid::from_raw);
        let stderr_tail = StderrTail::default();
        let tail = stderr_tail.clone();
        let stderr_task = tokio::spawn(async move {
            let mut stderr = stderr;
            let mut out = tokio::io::stderr();
            let mut buffer = vec![0u8; 8192];
            loop {
                match stderr.read(&mut buffer).await {
                    Ok(0) | Err(_) => break,
                    Ok(n) => {
                        tail.push(&buffer[..n]);
                        if stderr_mode == StderrMode::PassThrough {
                            // The proxy's own stderr going away must not stop the server.
                            let _ = out.write_all(&buffer[..n]).await;
                            let _ = out.flush().await;
                        }
                    }
                }
            }
        });
        Ok((
            ServerProcess {
                child,
                pgid,
                stderr_tail,
                stderr_task: Some(stderr_task),
                status: None,
                group_ended: false,
            },
            stdin,
            stdout,
        ))
    }

    /// The tail of the server's stderr, shared: it keeps filling while the server runs.
    pub fn stderr_tail(&self) -> StderrTail {
        self.stderr_tail.clone()
    }

    /// Wait for the server to exit by itself, at most `limit`. `None` if it is still running.
    pub async fn wait_for_exit(&mut self, limit: Duration) -> Option<ExitStatus> {
        if let Some(status) = self.status {
            return Some(status);
        }
        match tokio::time::timeout(limit, self.child.wait()).await {
            Ok(Ok(status)) => {
                self.status = Some(status);
                self.drain_stderr().await;
                Some(status)
            }
            Ok(Err(_)) | Err(_) => None,
        }
    }

    /// Let the stderr reader finish, so the tail holds the server's last words (bounded: a
    /// grandchild may keep the pipe open).
    async fn drain_stderr(&mut self) {
        if let Some(task) = self.stderr_task.take() {
            let _ = tokio::time::timeout(Duration::from_millis(500), task).await;
        }
    }

    /// Stop the server (its stdin must already be closed): wait `grace` for it to exit, then
    /// send its process group `SIGTERM`, wait `grace` again, then `SIGKILL`. Once the server
    /// has exited, what it started in its group gets the same: `SIGTERM`, then `SIGKILL` for
    /// what is still there after `grace`.
    pub async fn shut_down(&mut self, grace: Duration) -> Option<ExitStatus> {
        if let Some(status) = self.wait_for_exit(grace).await {
            self.end_group(grace).await;
            return Some(status);
        }
        self.signal_group(Signal::SIGTERM);
        if let Some(status) = self.wait_for_exit(grace).await {
            self.end_group(grace).await;
            return Some(status);
        }
        self.signal_group(Signal::SIGKILL);
        self.group_ended = true;
        let _ = self.child.start_kill();
        self.wait_for_exit(grace).await
    }

    /// After the server exited: its group gets `SIGTERM`, and `SIGKILL` when anything of it is
    /// still there after `grace` (a process that ignores `SIGTERM` would outlive the server).
    async fn end_group(&mut self, grace: Duration) {
        self.signal_group(Signal::SIGTERM);
        let deadline = tokio::time::Instant::now() + grace;
        while self.pgid.is_some_and(group_runs) {
            if tokio::time::Instant::now() >= deadline {
                self.signal_group(Signal::SIGKILL);
                break;
            }
            tokio::time::sleep(GROUP_POLL).await;
        }
        self.group_ended = true;
    }

    /// Signal the server's whole process group; a group already gone is fine.
    fn signal_group(&self, signal: Signal) {
        if let Some(pgid) = self.pgid {
            let _ = killpg(pgid, signal);
        }
    }
}

/// Whether a process of group `pgid` is still running. A process that has exited but was not
/// reaped still belongs to its group until its new parent reaps it (the toolschema binary reaps
/// them when it is a container's first process), so it would hold up a stop for a while; on
/// Linux the group's members are looked up and those that have exited do not count.
fn group_runs(pgid: Pid) -> bool {
    if killpg(pgid, None).is_err() {
        return false;
    }
    #[cfg(target_os = "linux")]
    if let Ok(entries) = std::fs::read_dir("/proc") {
        let group = pgid.to_string();
        return entries.flatten().any(|entry| {
            let name = entry.file_name();
            let Some(pid) = name
                .to_str()
                .filter(|n| n.bytes().all(|b| b.is_ascii_digit()))
            else {
                return false;
            };
            // `pid (command) state ppid pgrp ...`; the command may hold spaces and parentheses.
            let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
                return false;
            };
            let mut fields = stat
                .rsplit_once(") ")
                .map_or("", |(_, rest)| rest)
                .split(' ');
            let state = fields.next().unwrap_or("Z");
            let pgrp = fields.nth(1);
            !matches!(state, "Z" | "X") && pgrp == Some(group.as_str())
        });
    }
    true
}

impl Drop for ServerProcess {
    fn drop(&mut self) {
        // Whatever happened, leave nothing of the server running.
        if self.status.is_none() || !self.group_ended {
            self.signal_group(Signal::SIGKILL);
        }
    }
}

/// `; the last lines of its stderr:` and the block, for the end of a message about a server (empty
/// without a block).
pub fn stderr_note(block: Option<&str>) -> String {
    match block {
        Some(block) => format!("; the last lines of its stderr:\n{block}"),
        None => String::new(),
    }
}

/// An exit status in words: `exit code 3`, `signal 9 (SIGKILL)`.
pub fn describe_exit(status: ExitStatus) -> String {
    use std::os::unix::process::ExitStatusExt;
    if let Some(code) = status.code() {
        return format!("exit code {code}");
    }
    match status.signal() {
        Some(signal) => match Signal::try_from(signal) {
            Ok(name) => format!("signal {signal} ({name})"),
            Err(_) => format!("signal {signal}"),
        },
        None => "an unknown status".to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tail_keeps_the_last_lines() {
        let tail = StderrTail::default();
        for i in 0..30 {
            tail.push(format!("line {i}\r\n").as_bytes());
        }
        tail.push(b"partial");
        let lines = tail.lines();
        assert_eq!(lines.len(), TAIL_LINES + 1);
        assert_eq!(lines[0], "line 10");
        assert_eq!(lines[TAIL_LINES - 1], "line 29");
        assert_eq!(lines[TAIL_LINES], "partial");
        assert_eq!(StderrTail::default().block(), None);
    }

    #[test]
    fn the_tail_bounds_long_lines() {
        let tail = StderrTail::default();
        tail.push(&vec![b'x'; 10_000]);
        tail.push(b"\n");
        assert_eq!(tail.lines()[0].len(), TAIL_LINE_BYTES);
    }
}
