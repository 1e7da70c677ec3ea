//! Serving connections: the accept loop and the connection settings that `mcp stream` and the
//! proxy's `--listen` share, so that no peer can hold either one up.
//!
//! - a request head must arrive within the read timeout (hyper's header timeout, which also
//!   closes a connection that sends nothing, or nothing between requests); a body is bounded by
//!   [`Guard::read_body`](crate::Guard::read_body) with the same timeout;
//! - what the server writes must be taken within the write timeout: a client that stops
//!   reading (an event stream it no longer reads) loses its connection;
//! - when accepting fails for want of resources (descriptors, memory), the loop waits a moment
//!   before it tries again instead of spinning, and says so once.

use crate::guard::Limits;
use hyper::body::{Body, Incoming};
use hyper::service::HttpService;
use hyper_util::rt::{TokioIo, TokioTimer};
use std::future::Future;
use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};

/// How long the accept loop waits after failing for want of resources.
const ACCEPT_BACKOFF: Duration = Duration::from_millis(50);

/// The smallest read buffer hyper takes: it needs 8 KiB to read a request head.
const MIN_HEAD_BUFFER: usize = 8192;

type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// The connections being served, to drain once the loop stopped.
pub struct Served {
    graceful: hyper_util::server::graceful::GracefulShutdown,
}

impl Served {
    /// Wait for the open connections to finish, at most `within`.
    pub async fn drain(self, within: Duration) {
        let _ = tokio::time::timeout(within, self.graceful.shutdown()).await;
    }
}

/// Accept connections on `listener` and serve each with a service from `make_service`, within
/// `limits`, until `stop` completes; then the listener is closed and the connections are
/// handed back to be drained.
pub async fn serve<M, S, B>(
    listener: TcpListener,
    limits: Limits,
    mut make_service: M,
    stop: impl Future<Output = ()>,
) -> Served
where
    M: FnMut() -> S,
    S: HttpService<Incoming, ResBody = B> + Send + 'static,
    S::Future: Send + 'static,
    S::Error: Into<BoxError>,
    B: Body + Send + 'static,
    B::Data: Send,
    B::Error: Into<BoxError>,
{
    let graceful = hyper_util::server::graceful::GracefulShutdown::new();
    let mut builder = hyper::server::conn::http1::Builder::new();
    builder
        .timer(TokioTimer::new())
        .header_read_timeout(limits.read_timeout)
        .max_buf_size(limits.max_header_bytes.max(MIN_HEAD_BUFFER));
    let mut short_of_resources = false;
    tokio::pin!(stop);
    loop {
        let accepted = tokio::select! {
            accepted = listener.accept() => accepted,
            () = &mut stop => break,
        };
        let stream = match accepted {
            Ok((stream, _)) => stream,
            Err(e) if is_connection_error(&e) => continue,
            Err(e) => {
                // Out of descriptors or memory: the connection waits in the backlog and accept
                // would fail again at once. Wait a moment; connections that end free some.
                if !short_of_resources {
                    tracing::warn!(
                        "cannot accept connections: {e}; trying again every {} ms",
                        ACCEPT_BACKOFF.as_millis()
                    );
                    short_of_resources = true;
                }
                tokio::time::sleep(ACCEPT_BACKOFF).await;
                continue;
            }
        };
        if short_of_resources {
            tracing::info!("accepting connections again");
            short_of_resources = false;
        }
        let _ = stream.set_nodelay(true);
        let io = TokioIo::new(WriteDeadline::new(stream, limits.write_timeout));
        let connection = graceful.watch(builder.serve_connection(io, make_service()));
        tokio::spawn(async move {
            // A connection's end (a timeout among them) concerns only that connection.
            let _ = connection.await;
        });
    }
    drop(listener);
    Served { graceful }
}

/// Errors of one connection that went before it was accepted: nothing to wait for.
fn is_connection_error(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::ConnectionRefused
            | io::ErrorKind::ConnectionAborted
            | io::ErrorKind::ConnectionReset
    )
}

/// A connection whose writes fail once they have waited `timeout` for the client to read.
struct WriteDeadline {
    stream: TcpStream,
    timeout: Duration,
    /// Running while a write waits for the client.
    stalled: Option<Pin<Box<tokio::time::Sleep>>>,
}

impl WriteDeadline {
    fn new(stream: TcpStream, timeout: Duration) -> WriteDeadline {
        WriteDeadline {
            stream,
            timeout,
            stalled: None,
        }
    }

    /// After a write that made progress (`Ready`), the clock stops; while one waits
    /// (`Pending`), it runs, and past the timeout the write fails.
    fn watch<T>(&mut self, cx: &mut Context<'_>, poll: Poll<io::Result<T>>) -> Poll<io::Result<T>> {
        if poll.is_ready() {
            self.stalled = None;
            return poll;
        }
        let timeout = self.timeout;
        let stalled = self
            .stalled
            .get_or_insert_with(|| Box::pin(tokio::time::sleep(timeout)));
        match stalled.as_mut().poll(cx) {
            Poll::Ready(()) => Poll::Ready(Err(io::Error::new(
                io::ErrorKind::TimedOut,
                format!(
                    "the client read nothing of what was written to it for {} s",
                    timeout.as_secs()
                ),
            ))),
            Poll::Pending => Poll::Pending,
        }
    }
}

impl AsyncRead for WriteDeadline {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().stream).poll_read(cx, buf)
    }
}

impl AsyncWrite for WriteDeadline {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        let poll = Pin::new(&mut this.stream).poll_write(cx, buf);
        this.watch(cx, poll)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        let poll = Pin::new(&mut this.stream).poll_write_vectored(cx, bufs);
        this.watch(cx, poll)
    }

    fn is_write_vectored(&self) -> bool {
        self.stream.is_write_vectored()
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let poll = Pin::new(&mut this.stream).poll_flush(cx);
        this.watch(cx, poll)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let poll = Pin::new(&mut this.stream).poll_shutdown(cx);
        this.watch(cx, poll)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Guard, GuardConfig};
    use bytes::Bytes;
    use http::{Request, Response};
    use http_body_util::Full;
    use proptest::prelude::*;
    use std::net::SocketAddr;
    use std::sync::Arc;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    /// A server on loopback whose endpoint reads each body through the guard and answers 200.
    async fn echo_server(read_timeout: Duration) -> SocketAddr {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let address = listener.local_addr().unwrap();
        let limits = Limits {
            read_timeout,
            ..Limits::default()
        };
        let config = GuardConfig {
            limits,
            endpoint_path: "/mcp".into(),
            ..GuardConfig::default()
        };
        let guard = Arc::new(Guard::start(config, address).await.unwrap());
        let make_service = move || {
            let guard = guard.clone();
            hyper::service::service_fn(move |request: Request<Incoming>| {
                let guard = guard.clone();
                async move {
                    let (parts, body) = request.into_parts();
                    let answer = match guard.admit(&parts).await {
                        Ok(principal) => {
                            match guard.read_body(&principal, &parts.headers, body).await {
                                Ok(_) => Response::new(Full::new(Bytes::from_static(b"ok"))),
                                Err(refusal) => refusal.into_response(),
                            }
                        }
                        Err(refusal) => refusal.into_response(),
                    };
                    Ok::<_, std::convert::Infallible>(answer)
                }
            })
        };
        tokio::spawn(serve(
            listener,
            limits,
            make_service,
            std::future::pending(),
        ));
        address
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(24))]

        /// However much of a request a client sends before it stalls (nothing, part of the
        /// head, the head and part of the body, or all of it and nothing after), the server
        /// closes the connection within the read timeout (with a margin, never waiting for the
        /// client); a whole head with part of its body is answered 408 first, a whole request
        /// 200.
        #[test]
        fn a_client_that_stalls_anywhere_is_closed(
            body in "[ -~]{1,200}",
            cut in any::<proptest::sample::Index>(),
        ) {
            let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
            let (answer, closed) = runtime.block_on(async {
                let address = echo_server(Duration::from_millis(200)).await;
                let head = format!(
                    "POST /mcp HTTP/1.1\r\nHost: {address}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n",
                    body.len()
                );
                let request = format!("{head}{body}");
                let cut = cut.index(request.len() + 1);
                let mut client = TcpStream::connect(address).await.unwrap();
                client.write_all(&request.as_bytes()[..cut]).await.unwrap();
                let mut answer = Vec::new();
                let read = tokio::time::timeout(Duration::from_secs(10), client.read_to_end(&mut answer)).await;
                let answer = String::from_utf8_lossy(&answer).into_owned();
                let expected = if cut == request.len() {
                    Some("HTTP/1.1 200")
                } else if cut >= head.len() {
                    Some("HTTP/1.1 408")
                } else {
                    None
                };
                (expected.map(|e| (e, answer.clone())), read.is_ok())
            });
            prop_assert!(closed, "the connection was held");
            if let Some((expected, answer)) = answer {
                prop_assert!(answer.starts_with(expected), "{}", answer);
            }
        }
    }

    /// A peer that reads nothing: writes to it fail after the timeout, not before.
    #[tokio::test]
    async fn writes_to_a_peer_that_reads_nothing_fail_after_the_timeout() {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let address = listener.local_addr().unwrap();
        let _peer = TcpStream::connect(address).await.unwrap();
        let (stream, _) = listener.accept().await.unwrap();
        let mut stream = WriteDeadline::new(stream, Duration::from_millis(300));
        let chunk = vec![b'x'; 1 << 16];
        let mut written = 0usize;
        let error = loop {
            match stream.write(&chunk).await {
                Ok(n) => written += n,
                Err(e) => break e,
            }
        };
        assert_eq!(error.kind(), io::ErrorKind::TimedOut);
        assert!(written > 0, "the socket buffers took some first");
    }
}
