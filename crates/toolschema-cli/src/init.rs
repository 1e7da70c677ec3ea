//! toolschema as a container's first process (PID 1 of its PID namespace).
//!
//! A process whose parent exits is handed to PID 1, and only PID 1 can reap it once it exits.
//! The servers toolschema starts leave such processes: when a session's server ends, what it
//! started is killed with its process group, and becomes a zombie of PID 1. A proxy serving
//! sessions for days as PID 1 would collect one per session until the container runs out of
//! process ids. PID 1 also gets no signal it has no handler for, so `docker stop` would wait for
//! its SIGKILL.
//!
//! So toolschema started as PID 1 runs as a minimal init, as `docker run --init` (tini) does:
//! it runs itself again, with the same arguments, as its one child, passes on the signals that
//! stop or steer a process, reaps every process handed to it, and exits as the child does.

use crate::output::say;
use nix::sys::signal::{kill, SigSet, Signal};
use nix::sys::wait::{waitpid, WaitPidFlag, WaitStatus};
use nix::unistd::Pid;
use std::os::unix::process::CommandExt;
use std::process::ExitCode;

/// The signals passed on to the child.
const PASSED_ON: [Signal; 7] = [
    Signal::SIGTERM,
    Signal::SIGINT,
    Signal::SIGHUP,
    Signal::SIGQUIT,
    Signal::SIGUSR1,
    Signal::SIGUSR2,
    Signal::SIGWINCH,
];

/// When this process is PID 1, run toolschema as its child and act as its init until the child
/// exits: the exit code to end with. `None` when this is not PID 1, or when the child cannot be
/// started (then toolschema runs in this process, as before, and says so on stderr).
pub fn run_if_first_process() -> Option<ExitCode> {
    if std::process::id() != 1 {
        return None;
    }
    // Blocked before the child exists, the signals are queued even for PID 1 (which the kernel
    // spares every signal it has no handler for) and taken one at a time below: a `docker stop`
    // that comes while the child starts is passed on, not lost. The child inherits the mask and
    // clears it first thing ([`clear_inherited_mask`]).
    let signals = handled_signals();
    if signals.thread_block().is_err() {
        return None;
    }
    let mut arguments = std::env::args_os();
    let child = std::env::current_exe().and_then(|exe| {
        let mut command = std::process::Command::new(exe);
        // The same name to itself (clap's usage lines), whatever path it was started by.
        if let Some(name) = arguments.next() {
            command.arg0(name);
        }
        command.args(arguments).spawn()
    });
    let child = match child {
        Ok(child) => Pid::from_raw(child.id() as i32),
        Err(e) => {
            let _ = signals.thread_unblock();
            say!(
                "warning: toolschema runs as PID 1 but cannot start itself as the child of a reaping init ({e}); processes its servers leave behind will not be reaped (run the container with an init, such as `docker run --init`)"
            );
            return None;
        }
    };
    loop {
        match signals.wait() {
            Ok(Signal::SIGCHLD) => {
                if let Some(code) = reap(child) {
                    return Some(code);
                }
            }
            Ok(signal) => {
                let _ = kill(child, signal);
            }
            // Nothing can be waited for: wait for the child alone.
            Err(_) => return Some(wait_blocking(child)),
        }
    }
}

/// The signals the init takes: a child's exit, and those it passes on.
fn handled_signals() -> SigSet {
    let mut signals = SigSet::empty();
    signals.add(Signal::SIGCHLD);
    for signal in PASSED_ON {
        signals.add(signal);
    }
    signals
}

/// Unblock the signals an init blocks: a process inherits its parent's signal mask, and the
/// child of toolschema's init must get its signals as any process does. Called first thing;
/// signals queued meanwhile are then delivered.
pub fn clear_inherited_mask() {
    let _ = handled_signals().thread_unblock();
}

/// Wait for the child to exit: the exit code to end with.
fn wait_blocking(child: Pid) -> ExitCode {
    loop {
        match waitpid(child, None) {
            Ok(status) => {
                if let Some(code) = exit_code(status) {
                    return code;
                }
            }
            Err(_) => return ExitCode::FAILURE,
        }
    }
}

/// The exit code to end with for the child's `status`, when it ended.
fn exit_code(status: WaitStatus) -> Option<ExitCode> {
    match status {
        WaitStatus::Exited(_, code) => Some(ExitCode::from(u8::try_from(code).unwrap_or(1))),
        // As a shell reports it: 128 plus the signal's number.
        WaitStatus::Signaled(_, signal, _) => {
            Some(ExitCode::from(128u8.wrapping_add(signal as u8)))
        }
        _ => None,
    }
}

/// Reap every process that has exited; the exit code to end with when the child is one of them.
fn reap(child: Pid) -> Option<ExitCode> {
    let mut ended = None;
    loop {
        match waitpid(Pid::from_raw(-1), Some(WaitPidFlag::WNOHANG)) {
            Ok(WaitStatus::StillAlive) | Err(_) => return ended,
            Ok(status) if status.pid() == Some(child) => ended = exit_code(status).or(ended),
            Ok(_) => {}
        }
    }
}
