//! This process's stdin and stdout as blocking files for the relay threads.
//!
//! Each is a duplicate of the descriptor, switched to blocking mode if a client handed it over
//! non-blocking: the relay threads wait in `read` and `write`, which is the cheapest way for a
//! relay to be woken by a message.

use nix::fcntl::{fcntl, FcntlArg, OFlag};
use std::fs::File;
use std::os::fd::{AsFd, BorrowedFd};

/// This process's stdin.
pub fn input() -> std::io::Result<File> {
    blocking_copy(std::io::stdin().as_fd())
}

/// This process's stdout.
pub fn output() -> std::io::Result<File> {
    blocking_copy(std::io::stdout().as_fd())
}

fn blocking_copy(fd: BorrowedFd<'_>) -> std::io::Result<File> {
    let file = File::from(fd.try_clone_to_owned()?);
    let flags = OFlag::from_bits_truncate(fcntl(&file, FcntlArg::F_GETFL)?);
    if flags.contains(OFlag::O_NONBLOCK) {
        fcntl(&file, FcntlArg::F_SETFL(flags - OFlag::O_NONBLOCK))?;
    }
    Ok(file)
}
