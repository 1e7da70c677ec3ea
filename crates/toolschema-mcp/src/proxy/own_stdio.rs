//! This process's stdin and stdout as async streams driven by the reactor.
//!
//! `tokio::io::stdin()` and `stdout()` do each read and write on a blocking thread, which adds
//! two thread hand-offs to every message. Clients start servers with pipes (Python, Rust) or Unix
//! sockets (Node.js), and both can be polled like the server's own pipes; anything else (a file,
//! a terminal) falls back to tokio's blocking streams.

use std::fs::File;
use std::io::{ErrorKind, Write};
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::fs::FileTypeExt;
use std::pin::Pin;
use std::task::{Context, Poll};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::unix::pipe;

/// This process's stdin.
pub fn input() -> Box<dyn AsyncRead + Send + Unpin> {
    match duplicate(std::io::stdin().as_fd()) {
        Some(Stream::Pipe(fd)) => match pipe::Receiver::from_owned_fd(fd) {
            Ok(receiver) => Box::new(receiver),
            Err(_) => Box::new(tokio::io::stdin()),
        },
        Some(Stream::Socket(fd)) => match socket(fd) {
            Some(stream) => Box::new(stream),
            None => Box::new(tokio::io::stdin()),
        },
        None => Box::new(tokio::io::stdin()),
    }
}

/// This process's stdout.
pub fn output() -> Box<dyn AsyncWrite + Send + Unpin> {
    let quiet = match duplicate(std::io::stdout().as_fd()) {
        Some(Stream::Pipe(fd)) => pipe::Sender::from_owned_fd(fd)
            .and_then(pipe::Sender::into_nonblocking_fd)
            .ok()
            .map(|fd| (fd, Kind::Pipe)),
        Some(Stream::Socket(fd)) => {
            let stream = std::os::unix::net::UnixStream::from(fd);
            stream
                .set_nonblocking(true)
                .ok()
                .map(|()| (OwnedFd::from(stream), Kind::Socket))
        }
        None => None,
    };
    match quiet {
        Some((fd, kind)) => Box::new(QuietWriter {
            file: File::from(fd),
            kind,
            waiting: None,
        }),
        None => Box::new(tokio::io::stdout()),
    }
}

#[derive(Clone, Copy)]
enum Kind {
    Pipe,
    Socket,
}

/// Writes to a non-blocking descriptor that is registered with the reactor only while a write
/// would block. A Unix socket reports write readiness each time its peer reads, so a registered
/// stdout would wake the proxy once per message for nothing (Node.js clients use sockets).
struct QuietWriter {
    file: File,
    kind: Kind,
    /// A registered copy of the descriptor, while the peer is not reading.
    waiting: Option<Box<dyn AsyncWrite + Send + Unpin>>,
}

impl QuietWriter {
    fn register(&self) -> std::io::Result<Box<dyn AsyncWrite + Send + Unpin>> {
        let fd = self.file.as_fd().try_clone_to_owned()?;
        Ok(match self.kind {
            Kind::Pipe => Box::new(pipe::Sender::from_owned_fd(fd)?),
            Kind::Socket => Box::new(tokio::net::UnixStream::from_std(
                std::os::unix::net::UnixStream::from(fd),
            )?),
        })
    }
}

impl AsyncWrite for QuietWriter {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        let this = self.get_mut();
        if this.waiting.is_none() {
            loop {
                match (&this.file).write(buf) {
                    Ok(written) => return Poll::Ready(Ok(written)),
                    Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                    Err(e) if e.kind() == ErrorKind::WouldBlock => break,
                    Err(e) => return Poll::Ready(Err(e)),
                }
            }
            this.waiting = Some(this.register()?);
        }
        let Some(waiting) = this.waiting.as_mut() else {
            return Poll::Ready(Err(ErrorKind::NotConnected.into()));
        };
        let written = std::task::ready!(Pin::new(waiting).poll_write(cx, buf));
        // The peer reads again: back to unregistered writes.
        this.waiting = None;
        Poll::Ready(written)
    }

    fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn poll_shutdown(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Poll::Ready(Ok(()))
    }
}

enum Stream {
    Pipe(OwnedFd),
    Socket(OwnedFd),
}

/// A copy of the descriptor, if it is a pipe or a socket.
fn duplicate(fd: std::os::fd::BorrowedFd<'_>) -> Option<Stream> {
    let owned = fd.try_clone_to_owned().ok()?;
    let file = File::from(owned);
    let kind = file.metadata().ok()?.file_type();
    let owned = OwnedFd::from(file);
    if kind.is_fifo() {
        Some(Stream::Pipe(owned))
    } else if kind.is_socket() {
        Some(Stream::Socket(owned))
    } else {
        None
    }
}

fn socket(fd: OwnedFd) -> Option<tokio::net::UnixStream> {
    let stream = std::os::unix::net::UnixStream::from(fd);
    stream.set_nonblocking(true).ok()?;
    tokio::net::UnixStream::from_std(stream).ok()
}
