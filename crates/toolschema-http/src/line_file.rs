//! An append-only file of lines that never makes its writer wait for the file's reader.
//!
//! The audit log and the access log are often a pipe (`--audit /dev/stdout` in a container, read
//! by a log shipper). A blocking write to a pipe whose reader stalls would stop every request
//! that writes a line, so a pipe, socket or terminal is written without blocking. What it does
//! not take at once waits in a backlog bounded in bytes, written by a thread of the file's own as
//! the reader takes it. Past the bound, lines are dropped whole and counted; the count is reported
//! through `tracing` and written to the file itself, as a line the owner shapes, once the reader
//! catches up.

use nix::fcntl::{fcntl, FcntlArg, OFlag};
use std::collections::VecDeque;
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::Path;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// The most bytes of lines waiting for a reader that has stopped reading, by default (one line
/// more may wait when it was written in part).
pub const BACKLOG_BYTES: usize = 4 * 1024 * 1024;

/// How long a closing file waits for a stalled reader to take what is waiting.
const CLOSE_WAIT: Duration = Duration::from_secs(2);

/// How long the drainer waits before trying a full pipe again.
const RETRY_PAUSE: Duration = Duration::from_millis(5);

/// The line written once the reader catches up, saying how many lines were dropped.
pub type DroppedNote = Box<dyn Fn(u64) -> String + Send + Sync>;

/// An append-only file of lines (see the module's documentation). Dropping it gives a stalled
/// reader a little time to take what waits, then closes the file.
pub struct LineFile {
    shared: Arc<Shared>,
    drainer: Option<JoinHandle<()>>,
}

struct Shared {
    state: Mutex<Backlog>,
    /// Wakes the drainer (lines waiting, or closing) and whoever waits for it to finish.
    changed: Condvar,
    /// The most bytes that may wait.
    bound: usize,
    /// What the file is, as reports name it (`audit log`).
    name: &'static str,
    dropped_note: DroppedNote,
}

struct Backlog {
    file: File,
    /// Bytes not written yet: whole lines, but for the first, which may be written in part.
    waiting: VecDeque<u8>,
    /// Lines dropped since the file last took everything.
    dropped: u64,
    closing: bool,
}

/// Lock a mutex; a panic elsewhere must not stop the lines, so a poisoned lock is used as it is.
fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl LineFile {
    /// Open (or create) `path` for appending, with the default backlog. `name` says what the
    /// file is in reports; `dropped_note` makes the line that counts dropped lines.
    pub fn open(
        path: &Path,
        name: &'static str,
        dropped_note: DroppedNote,
    ) -> std::io::Result<LineFile> {
        let file = OpenOptions::new().create(true).append(true).open(path)?;
        LineFile::over(file, BACKLOG_BYTES, name, dropped_note)
    }

    /// Lines written to `file`, with at most `bound` bytes waiting for its reader.
    pub fn over(
        file: File,
        bound: usize,
        name: &'static str,
        dropped_note: DroppedNote,
    ) -> std::io::Result<LineFile> {
        if !file.metadata()?.is_file() {
            // A pipe, a socket or a terminal: a write that would wait returns at once instead,
            // and what the reader does not take waits in the backlog.
            let flags = fcntl(&file, FcntlArg::F_GETFL).map_err(std::io::Error::from)?;
            let flags = OFlag::from_bits_truncate(flags) | OFlag::O_NONBLOCK;
            fcntl(&file, FcntlArg::F_SETFL(flags)).map_err(std::io::Error::from)?;
        }
        let shared = Arc::new(Shared {
            state: Mutex::new(Backlog {
                file,
                waiting: VecDeque::new(),
                dropped: 0,
                closing: false,
            }),
            changed: Condvar::new(),
            bound,
            name,
            dropped_note,
        });
        let drainer = {
            let shared = Arc::clone(&shared);
            std::thread::Builder::new()
                .name(name.replace(' ', "-"))
                .spawn(move || shared.drain())?
        };
        Ok(LineFile {
            shared,
            drainer: Some(drainer),
        })
    }

    /// Append one line (`line` holds its newline), or drop it whole when the backlog is full.
    /// It never waits for the reader; a failing write is reported, never fatal.
    pub fn append(&self, line: &[u8]) {
        let shared = &*self.shared;
        let mut backlog = lock(&shared.state);
        // A line longer than the bound is still written when nothing waits: the bound is on what
        // a stalled reader leaves behind, not on a line.
        if !backlog.waiting.is_empty() && backlog.waiting.len() + line.len() > shared.bound {
            if backlog.dropped == 0 {
                tracing::warn!(
                    "the {} is not being read: lines are dropped until it is (more than {} KiB wait)",
                    shared.name,
                    shared.bound / 1024
                );
            }
            backlog.dropped += 1;
            return;
        }
        let was_empty = backlog.waiting.is_empty();
        backlog.waiting.extend(line);
        if !was_empty {
            // The drainer is at it already: the order of the lines is kept.
            return;
        }
        match backlog.write_waiting() {
            Ok(true) => {}
            Ok(false) => shared.changed.notify_all(),
            Err(e) => {
                backlog.waiting.clear();
                tracing::warn!("cannot write the {}: {e}", shared.name);
            }
        }
    }

    /// How many bytes wait for the reader now.
    pub fn waiting_bytes(&self) -> usize {
        lock(&self.shared.state).waiting.len()
    }
}

impl Backlog {
    /// Write what the file takes now, without waiting: `Ok(true)` once nothing waits.
    fn write_waiting(&mut self) -> std::io::Result<bool> {
        while !self.waiting.is_empty() {
            let (front, _) = self.waiting.as_slices();
            match self.file.write(front) {
                Ok(0) => return Err(std::io::ErrorKind::WriteZero.into()),
                Ok(n) => drop(self.waiting.drain(..n)),
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => return Ok(false),
                Err(e) => return Err(e),
            }
        }
        Ok(true)
    }
}

impl Shared {
    /// The drainer: writes what waits whenever the file takes it, until the file closes.
    fn drain(&self) {
        let mut backlog = lock(&self.state);
        loop {
            if backlog.waiting.is_empty() {
                if backlog.closing {
                    return;
                }
                backlog = self
                    .changed
                    .wait(backlog)
                    .unwrap_or_else(std::sync::PoisonError::into_inner);
                continue;
            }
            match backlog.write_waiting() {
                Ok(true) => {
                    if backlog.dropped > 0 {
                        // Said in the file itself, in its place among the lines.
                        let mut note = (self.dropped_note)(backlog.dropped);
                        note.push('\n');
                        backlog.waiting.extend(note.as_bytes());
                        backlog.dropped = 0;
                    } else {
                        self.changed.notify_all();
                    }
                }
                Ok(false) => {
                    drop(backlog);
                    std::thread::sleep(RETRY_PAUSE);
                    backlog = lock(&self.state);
                }
                Err(e) => {
                    tracing::warn!("cannot write the {}: {e}", self.name);
                    backlog.waiting.clear();
                    self.changed.notify_all();
                }
            }
        }
    }
}

impl Drop for LineFile {
    fn drop(&mut self) {
        let shared = &*self.shared;
        let deadline = Instant::now() + CLOSE_WAIT;
        let mut backlog = lock(&shared.state);
        backlog.closing = true;
        shared.changed.notify_all();
        while !backlog.waiting.is_empty() {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                tracing::warn!(
                    "the {} was closed with {} byte(s) of lines its reader did not take",
                    shared.name,
                    backlog.waiting.len()
                );
                backlog.waiting.clear();
                break;
            }
            backlog = shared
                .changed
                .wait_timeout(backlog, left)
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .0;
        }
        if backlog.dropped > 0 {
            tracing::warn!(
                "the {} was closed after dropping {} line(s) its reader did not take",
                shared.name,
                backlog.dropped
            );
        }
        drop(backlog);
        if let Some(drainer) = self.drainer.take() {
            let _ = drainer.join();
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn note(dropped: u64) -> String {
        format!("dropped {dropped}")
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(32))]

        /// Whatever a reader that stops reading leaves behind: appending never waits, what waits
        /// stays within the bound and one line, every line is kept whole or counted as dropped,
        /// and those kept are in order.
        #[test]
        fn a_stalled_reader_never_holds_the_writer_nor_more_than_the_bound(
            sizes in proptest::collection::vec(1usize..40_000, 1..120),
        ) {
            let bound = 64 * 1024;
            let (mut reader, writer) = std::io::pipe().unwrap();
            let file = File::from(std::os::fd::OwnedFd::from(writer));
            let lines = LineFile::over(file, bound, "test log", Box::new(note)).unwrap();
            let mut most = 0;
            for (n, size) in sizes.iter().enumerate() {
                let mut line = format!("{n} {}", "x".repeat(*size));
                line.push('\n');
                lines.append(line.as_bytes());
                most = most.max(lines.waiting_bytes());
            }
            let largest = sizes.iter().max().copied().unwrap_or(0) + 16;
            proptest::prop_assert!(most <= bound + largest, "{most} waited");
            let read = std::thread::spawn(move || {
                let mut text = String::new();
                std::io::Read::read_to_string(&mut reader, &mut text).unwrap();
                text
            });
            drop(lines);
            let text = read.join().unwrap();
            let mut kept = Vec::new();
            let mut dropped = 0;
            for line in text.lines() {
                match line.strip_prefix("dropped ") {
                    Some(count) => dropped += count.parse::<u64>().unwrap(),
                    None => {
                        let (n, rest) = line.split_once(' ').unwrap();
                        let n: usize = n.parse().unwrap();
                        proptest::prop_assert_eq!(rest.len(), sizes[n]);
                        kept.push(n);
                    }
                }
            }
            proptest::prop_assert_eq!(kept.len() as u64 + dropped, sizes.len() as u64);
            proptest::prop_assert!(kept.windows(2).all(|w| w[0] < w[1]));
        }
    }

    #[test]
    fn a_regular_file_takes_every_line_at_once() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("log.jsonl");
        let lines = LineFile::open(&path, "test log", Box::new(note)).unwrap();
        for n in 0..1000 {
            lines.append(format!("{n}\n").as_bytes());
            assert_eq!(lines.waiting_bytes(), 0);
        }
        // Written before `append` returned, not when the file closes.
        let text = std::fs::read_to_string(&path).unwrap();
        assert_eq!(text.lines().count(), 1000);
    }
}
