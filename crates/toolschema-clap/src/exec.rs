//! Running a tool call: the application's own executable as a child process, with environment
//! defaults, no standard input, bounded output, a timeout, and a kill on timeout or cancellation.
//!
//! The command runs in a process group of its own, and a kill stops the whole group: what the
//! command started (a shell's `sleep`, a worker) dies with it, as with the proxy's servers
//! (toolschema-mcp's `server_process`).

use serde_json::{json, Value};
use std::path::Path;
use std::process::Stdio;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncReadExt};
use tokio::process::Command;
use tokio_util::sync::CancellationToken;

/// How long output is still read after the child ended (a grandchild may hold the pipes open).
const DRAIN_GRACE: Duration = Duration::from_secs(2);

/// What limits a run.
#[derive(Debug, Clone)]
pub(crate) struct Limits {
    pub(crate) timeout: Duration,
    pub(crate) output_limit: usize,
}

/// How a run ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Ending {
    /// The command exited by itself.
    Exited,
    /// The timeout passed and the command was killed.
    TimedOut(Duration),
    /// The call was cancelled and the command was killed.
    Cancelled,
}

/// What a run produced.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct RunOutput {
    pub(crate) stdout: String,
    pub(crate) stderr: String,
    /// The exit code; 128 + N when killed by signal N.
    pub(crate) exit_code: i64,
    pub(crate) ending: Ending,
}

impl RunOutput {
    /// The structured content: `{stdout, stderr, exitCode}`.
    pub(crate) fn structured(&self) -> Value {
        json!({"stdout": self.stdout, "stderr": self.stderr, "exitCode": self.exit_code})
    }

    /// Whether the result is an error: a non-zero exit code.
    pub(crate) fn is_error(&self) -> bool {
        self.exit_code != 0
    }
}

/// Captured bytes of one stream, at most `limit` kept, the rest counted.
#[derive(Debug, Default)]
struct Captured {
    bytes: Vec<u8>,
    dropped: u64,
}

impl Captured {
    fn text(&self) -> String {
        let mut text = String::from_utf8_lossy(&self.bytes).into_owned();
        if self.dropped > 0 {
            if !text.ends_with('\n') && !text.is_empty() {
                text.push('\n');
            }
            text.push_str(&format!(
                "[output cut: {} more bytes were not kept]\n",
                self.dropped
            ));
        }
        text
    }
}

/// Read a stream to its end, keeping at most `limit` bytes in `into`.
async fn read_bounded(
    mut stream: impl AsyncRead + Unpin,
    limit: usize,
    into: Arc<Mutex<Captured>>,
) {
    let mut buffer = vec![0u8; 16 * 1024];
    loop {
        let n = match stream.read(&mut buffer).await {
            Ok(0) | Err(_) => return,
            Ok(n) => n,
        };
        let mut captured = into.lock().unwrap_or_else(PoisonError::into_inner);
        let room = limit.saturating_sub(captured.bytes.len());
        let kept = n.min(room);
        captured.bytes.extend_from_slice(&buffer[..kept]);
        captured.dropped += (n - kept) as u64;
    }
}

#[cfg(unix)]
fn exit_code(status: std::process::ExitStatus) -> i64 {
    use std::os::unix::process::ExitStatusExt;
    match (status.code(), status.signal()) {
        (Some(code), _) => i64::from(code),
        (None, Some(signal)) => 128 + i64::from(signal),
        (None, None) => -1,
    }
}

#[cfg(not(unix))]
fn exit_code(status: std::process::ExitStatus) -> i64 {
    status.code().map_or(-1, i64::from)
}

/// The process group of a running command: [`Group::kill`] stops every process in it, and so does
/// dropping it before [`Group::release`] (a call whose future is dropped).
struct Group {
    #[cfg(unix)]
    id: Option<nix::unistd::Pid>,
}

impl Group {
    /// The group `child` leads (it was spawned with `process_group(0)`).
    fn of(child: &tokio::process::Child) -> Group {
        Group {
            #[cfg(unix)]
            id: child
                .id()
                .and_then(|id| i32::try_from(id).ok())
                .map(nix::unistd::Pid::from_raw),
        }
    }

    /// Kill every process in the group, then forget it: its id may be reused once they are gone.
    fn kill(&mut self) {
        #[cfg(unix)]
        if let Some(id) = self.id.take() {
            let _ = nix::sys::signal::killpg(id, nix::sys::signal::Signal::SIGKILL);
        }
    }

    /// The command exited by itself: what it left running is its own business.
    fn release(&mut self) {
        #[cfg(unix)]
        {
            self.id = None;
        }
    }
}

impl Drop for Group {
    fn drop(&mut self) {
        self.kill();
    }
}

/// Run `program` with `args`; variables in `env_defaults` are set unless the environment already
/// has them.
pub(crate) async fn run(
    program: &Path,
    args: &[String],
    env_defaults: &[(String, String)],
    limits: &Limits,
    cancel: CancellationToken,
) -> std::io::Result<RunOutput> {
    let mut command = Command::new(program);
    command
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    #[cfg(unix)]
    command.process_group(0);
    for (key, value) in env_defaults {
        if std::env::var_os(key).is_none() {
            command.env(key, value);
        }
    }
    let mut child = command.spawn()?;
    let mut group = Group::of(&child);
    let stdout = Arc::new(Mutex::new(Captured::default()));
    let stderr = Arc::new(Mutex::new(Captured::default()));
    let mut readers = tokio::task::JoinSet::new();
    if let Some(pipe) = child.stdout.take() {
        readers.spawn(read_bounded(pipe, limits.output_limit, stdout.clone()));
    }
    if let Some(pipe) = child.stderr.take() {
        readers.spawn(read_bounded(pipe, limits.output_limit, stderr.clone()));
    }
    let (status, ending) = tokio::select! {
        status = child.wait() => {
            group.release();
            (status?, Ending::Exited)
        }
        () = tokio::time::sleep(limits.timeout) => {
            group.kill();
            child.start_kill()?;
            (child.wait().await?, Ending::TimedOut(limits.timeout))
        }
        () = cancel.cancelled() => {
            group.kill();
            child.start_kill()?;
            (child.wait().await?, Ending::Cancelled)
        }
    };
    let drained = tokio::time::timeout(DRAIN_GRACE, async {
        while readers.join_next().await.is_some() {}
    })
    .await;
    if drained.is_err() {
        readers.abort_all();
    }
    let text = |captured: &Arc<Mutex<Captured>>| {
        captured
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .text()
    };
    let mut stderr_text = text(&stderr);
    match &ending {
        Ending::Exited => {}
        Ending::TimedOut(after) => stderr_text.push_str(&format!(
            "[the command did not finish within {} s and was killed]\n",
            after.as_secs_f64()
        )),
        Ending::Cancelled => {
            stderr_text.push_str("[the call was cancelled and the command was killed]\n")
        }
    }
    Ok(RunOutput {
        stdout: text(&stdout),
        stderr: stderr_text,
        exit_code: exit_code(status),
        ending,
    })
}

#[cfg(test)]
#[cfg(unix)]
mod tests {
    use super::*;

    fn limits(timeout_ms: u64, output_limit: usize) -> Limits {
        Limits {
            timeout: Duration::from_millis(timeout_ms),
            output_limit,
        }
    }

    fn sh(script: &str) -> Vec<String> {
        vec!["-c".to_string(), script.to_string()]
    }

    fn runtime() -> tokio::runtime::Runtime {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap()
    }

    /// Run a shell script to its end (or its timeout).
    fn run_script(script: &str, env: &[(String, String)], limits: Limits) -> RunOutput {
        runtime()
            .block_on(run(
                Path::new("/bin/sh"),
                &sh(script),
                env,
                &limits,
                CancellationToken::new(),
            ))
            .unwrap()
    }

    #[test]
    fn captures_output_and_exit_code() {
        let out = run_script("echo out; echo err >&2; exit 3", &[], limits(10_000, 1024));
        assert_eq!(out.stdout, "out\n");
        assert_eq!(out.stderr, "err\n");
        assert_eq!(out.exit_code, 3);
        assert!(out.is_error());
        assert_eq!(
            out.structured(),
            json!({"stdout": "out\n", "stderr": "err\n", "exitCode": 3})
        );
    }

    #[test]
    fn keeps_output_within_the_limit() {
        let out = run_script("printf 'abcdefghij'", &[], limits(10_000, 4));
        assert_eq!(
            out.stdout,
            "abcd\n[output cut: 6 more bytes were not kept]\n"
        );
        assert_eq!(out.exit_code, 0);
    }

    #[test]
    fn applies_environment_defaults_without_overriding() {
        // Cargo sets CARGO_PKG_NAME for the test process, so no test needs to change the
        // environment (which would race with the tests running beside it).
        let defaults: Vec<(String, String)> = ["CARGO_PKG_NAME", "TOOLSCHEMA_CLAP_EXEC_TEST_UNSET"]
            .iter()
            .map(|k| (k.to_string(), "default".to_string()))
            .collect();
        let out = run_script(
            "echo $CARGO_PKG_NAME $TOOLSCHEMA_CLAP_EXEC_TEST_UNSET",
            &defaults,
            limits(10_000, 1024),
        );
        assert_eq!(out.stdout, "toolschema-clap default\n");
    }

    #[test]
    fn kills_on_timeout() {
        // The limit leaves a loaded machine seconds to start the shell and print.
        let out = run_script("echo started; exec sleep 60", &[], limits(3_000, 1024));
        assert_eq!(out.ending, Ending::TimedOut(Duration::from_millis(3_000)));
        assert_eq!(out.stdout, "started\n");
        assert_eq!(out.exit_code, 128 + 9);
        assert_eq!(
            out.stderr,
            "[the command did not finish within 3 s and was killed]\n"
        );
    }

    /// Run a shell script until the call is cancelled after `after_ms`.
    fn run_cancelled(script: &str, after_ms: u64) -> RunOutput {
        let cancel = CancellationToken::new();
        let trigger = cancel.clone();
        let args = sh(script);
        runtime()
            .block_on(async move {
                tokio::spawn(async move {
                    tokio::time::sleep(Duration::from_millis(after_ms)).await;
                    trigger.cancel();
                });
                run(
                    Path::new("/bin/sh"),
                    &args,
                    &[],
                    &limits(60_000, 1024),
                    cancel,
                )
                .await
            })
            .unwrap()
    }

    #[test]
    fn kills_on_cancellation() {
        let out = run_cancelled("exec sleep 30", 200);
        assert_eq!(out.ending, Ending::Cancelled);
        assert_eq!(out.exit_code, 137);
    }

    /// Whether process `pid` is gone (a zombie waiting for its new parent counts as gone).
    fn is_gone(pid: &str) -> bool {
        match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
            Err(_) => true,
            // The state follows the command name, which is in parentheses.
            Ok(stat) => matches!(
                stat.rsplit_once(')')
                    .map(|(_, rest)| rest.trim_start().chars().next()),
                Some(Some('Z' | 'X'))
            ),
        }
    }

    /// Wait (a few seconds at most) for `pid` to be gone.
    fn dies(pid: &str) -> bool {
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        while std::time::Instant::now() < deadline {
            if is_gone(pid) {
                return true;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        false
    }

    #[test]
    fn a_kill_stops_what_the_command_started() {
        // The shell starts a grandchild that would outlive it, says its id, and waits.
        let script = "sleep 60 & echo $!; wait";
        let out = run_script(script, &[], limits(3_000, 1024));
        assert_eq!(out.ending, Ending::TimedOut(Duration::from_millis(3_000)));
        let grandchild = out.stdout.trim();
        assert!(!grandchild.is_empty(), "{out:?}");
        assert!(
            dies(grandchild),
            "the grandchild {grandchild} outlived the timeout"
        );

        let out = run_cancelled(script, 3_000);
        assert_eq!(out.ending, Ending::Cancelled);
        let grandchild = out.stdout.trim();
        assert!(!grandchild.is_empty(), "{out:?}");
        assert!(
            dies(grandchild),
            "the grandchild {grandchild} outlived the cancellation"
        );
    }

    #[test]
    fn a_dropped_call_stops_what_the_command_started() {
        let pid_file = tempfile::NamedTempFile::new().unwrap();
        let path = pid_file.path().display().to_string();
        let script = format!("sleep 60 & echo $! > '{path}'; wait");
        let args = sh(&script);
        let limits = limits(60_000, 1024);
        runtime().block_on(async {
            let call = run(
                Path::new("/bin/sh"),
                &args,
                &[],
                &limits,
                CancellationToken::new(),
            );
            // The call is dropped once the grandchild is running.
            let _ = tokio::time::timeout(Duration::from_millis(3_000), call).await;
        });
        let grandchild = std::fs::read_to_string(&path).unwrap();
        let grandchild = grandchild.trim();
        assert!(!grandchild.is_empty());
        assert!(
            dies(grandchild),
            "the grandchild {grandchild} outlived the dropped call"
        );
    }
}
