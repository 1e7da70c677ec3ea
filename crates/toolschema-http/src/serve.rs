//! Serving connections: the accept loop and the connection settings that `mcp stream` and the
//! proxy's `--listen` share, so that no peer can hold either one up.
//!
//! - a request head must arrive within the read timeout (hyper's header timeout, which also
//!   closes a connection that sends nothing, or nothing between requests); a body is bounded by
//!   [`Guard::read_body`](crate::Guard::read_body) with the same timeout;
//! - what the server writes must be taken within the write timeout: a client that stops
//!   reading (an event stream it no longer reads) loses its connection;
//! - when accepting fails for want of resources (descriptors, memory), the loop waits a moment
//!   before it tries again instead of spinning, and says so once;
//! - clients hold at most half the descriptors the process may open ([`connection_cap`]): the
//!   rest stays for what the server opens itself (its upstream's connections, its servers'
//!   pipes, its logs). At that cap, a new connection takes the place of one that is not being
//!   answered: a stalled one first (no request yet, or a request whose body is still arriving),
//!   the one stalled the longest first, then a keep-alive between requests. So peers that open
//!   connections and send nothing, or send a head and withhold its body, cannot keep clients
//!   out; when an answer is being made on every connection, accepting waits for one to end.

use crate::guard::Limits;
use bytes::Bytes;
use http::{Request, Response};
use hyper::body::{Body, Frame, Incoming, SizeHint};
use hyper::service::Service;
use hyper_util::rt::{TokioIo, TokioTimer};
use std::collections::HashMap;
use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::Notify;
use tokio::task::AbortHandle;

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

/// The most connections clients may hold at once: half the descriptors the process may open
/// (its soft `RLIMIT_NOFILE`), the other half (32 at least) kept for what the server opens
/// itself: a session's server process takes three pipes, a request to an upstream a connection.
pub fn connection_cap() -> usize {
    let soft = nix::sys::resource::getrlimit(nix::sys::resource::Resource::RLIMIT_NOFILE)
        .map_or(u64::MAX, |(soft, _)| soft);
    let soft = usize::try_from(soft).unwrap_or(usize::MAX).min(1 << 24);
    soft.saturating_sub((soft / 2).max(32)).max(1)
}

/// How long a stopped server gives its open connections to finish (an event stream ends when
/// its session closes) before it stops anyway.
pub const DRAIN_GRACE: Duration = Duration::from_secs(5);

/// What a server runs: [`serve`] at the process's [`connection_cap`] until `stop` completes,
/// then `on_stop` (closing sessions, so their streams end), then [`DRAIN_GRACE`] for the open
/// connections to finish.
pub async fn serve_until_stopped<M, S, B, F>(
    listener: TcpListener,
    limits: Limits,
    make_service: M,
    stop: impl Future<Output = ()>,
    on_stop: impl FnOnce() -> F,
) where
    M: FnMut() -> S,
    S: Service<Request<RequestBody>, Response = Response<B>> + Send + 'static,
    S::Future: Send + 'static,
    S::Error: Into<BoxError>,
    B: Body + Send + 'static,
    B::Data: Send,
    B::Error: Into<BoxError>,
    F: Future<Output = ()>,
{
    let served = serve(listener, limits, connection_cap(), make_service, stop).await;
    on_stop().await;
    served.drain(DRAIN_GRACE).await;
}

/// Accept connections on `listener` and serve each with a service from `make_service`, within
/// `limits` and at most `cap` connections ([`connection_cap`] for a server), until `stop`
/// completes; then the listener is closed and the connections are handed back to be drained.
pub async fn serve<M, S, B>(
    listener: TcpListener,
    limits: Limits,
    cap: usize,
    mut make_service: M,
    stop: impl Future<Output = ()>,
) -> Served
where
    M: FnMut() -> S,
    S: Service<Request<RequestBody>, Response = Response<B>> + Send + 'static,
    S::Future: Send + 'static,
    S::Error: Into<BoxError>,
    B: Body + Send + 'static,
    B::Data: Send,
    B::Error: Into<BoxError>,
{
    let table = Arc::new(Connections::default());
    let mut at_cap = false;
    let graceful = hyper_util::server::graceful::GracefulShutdown::new();
    let mut builder = hyper::server::conn::http1::Builder::new();
    builder
        .timer(TokioTimer::new())
        .header_read_timeout(limits.read_timeout)
        .max_buf_size(limits.max_header_bytes.max(MIN_HEAD_BUFFER));
    let mut short_of_resources = false;
    tokio::pin!(stop);
    loop {
        if table.len() > cap {
            // Every connection has a request under way: wait for one to end.
            tokio::select! {
                () = table.ended.notified() => continue,
                () = &mut stop => break,
            }
        }
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
        let state = Arc::new(ConnectionState::new());
        let service = Tracked {
            inner: make_service(),
            state: state.clone(),
        };
        let connection = graceful.watch(builder.serve_connection(io, service));
        let id = table.next_id();
        let ends = table.clone();
        {
            // Held until the connection is in the table: its end removes it after, never before.
            let mut open = lock(&table.open);
            let task = tokio::spawn(async move {
                // A connection's end (a timeout among them) concerns only that connection.
                let _ = connection.await;
                ends.remove(id);
            });
            open.insert(id, (state, task.abort_handle()));
        }
        if table.len() > cap {
            if !at_cap {
                tracing::warn!(
                    "{cap} connections are open, as many as this server takes: the one stalled or idle the longest makes room for each new one"
                );
                at_cap = true;
            }
            table.make_room(id);
        } else if at_cap && table.len() < cap / 2 {
            at_cap = false;
        }
    }
    drop(listener);
    Served { graceful }
}

/// The connections open, to find the one idle the longest when room is needed.
#[derive(Default)]
struct Connections {
    open: Mutex<HashMap<u64, (Arc<ConnectionState>, AbortHandle)>>,
    next: AtomicUsize,
    /// Told each time a connection ends.
    ended: Notify,
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl Connections {
    fn next_id(&self) -> u64 {
        self.next.fetch_add(1, Ordering::Relaxed) as u64
    }

    fn len(&self) -> usize {
        lock(&self.open).len()
    }

    fn remove(&self, id: u64) {
        lock(&self.open).remove(&id);
        self.ended.notify_one();
    }

    /// Close the connection that should make room first ([`ConnectionState::room_order`]), if
    /// any but `newest` (the one room is made for).
    fn make_room(&self, newest: u64) {
        let mut open = lock(&self.open);
        let longest = open
            .iter()
            .filter(|(id, _)| **id != newest)
            .filter_map(|(id, (state, _))| {
                state.room_order().map(|(kept, since)| (kept, since, *id))
            })
            .min();
        if let Some((_, _, id)) = longest {
            if let Some((_, abort)) = open.remove(&id) {
                abort.abort();
            }
        }
    }
}

/// What a connection is doing: how many requests are under way on it (a request counts until
/// its answer's body has been sent or dropped), whether the body of the one under way is still
/// arriving, since when it has been in its present state, and whether a request ever came.
struct ConnectionState {
    active: AtomicUsize,
    /// Whether the body of the request under way is still arriving.
    receiving: AtomicBool,
    /// When the connection opened, its last request ended, or its request under way began.
    since: Mutex<Instant>,
    /// Whether a whole request has come on it.
    served: AtomicBool,
}

impl ConnectionState {
    fn new() -> ConnectionState {
        ConnectionState {
            active: AtomicUsize::new(0),
            receiving: AtomicBool::new(false),
            since: Mutex::new(Instant::now()),
            served: AtomicBool::new(false),
        }
    }

    /// Where the connection stands when room is needed, the first to go first: `None` while an
    /// answer is being made on it (it is never closed for room). Stalled ones go before kept-alive
    /// ones (`false` before `true`): a connection that has sent no request yet, or whose request's
    /// body is still arriving, holds a place for nothing, while closing a keep-alive connection
    /// races its client's next request on it. Within each, the longest in that state first, so a
    /// client's new connection (which sends its head at once) outlives the peers that stall.
    fn room_order(&self) -> Option<(bool, Instant)> {
        let answering =
            self.active.load(Ordering::Acquire) > 0 && !self.receiving.load(Ordering::Acquire);
        if answering {
            return None;
        }
        let kept_alive =
            self.active.load(Ordering::Acquire) == 0 && self.served.load(Ordering::Acquire);
        Some((kept_alive, *lock(&self.since)))
    }
}

/// A request under way, until dropped.
struct Active(Arc<ConnectionState>);

impl Active {
    fn start(state: Arc<ConnectionState>, receiving: bool) -> Active {
        *lock(&state.since) = Instant::now();
        state.served.store(true, Ordering::Release);
        state.receiving.store(receiving, Ordering::Release);
        state.active.fetch_add(1, Ordering::AcqRel);
        Active(state)
    }
}

impl Drop for Active {
    fn drop(&mut self) {
        *lock(&self.0.since) = Instant::now();
        self.0.receiving.store(false, Ordering::Release);
        self.0.active.fetch_sub(1, Ordering::AcqRel);
    }
}

/// A request's body as the service reads it. Until it has all arrived (or the service lets go
/// of it), the connection counts as stalled when room is needed: a peer that sends a head and
/// then withholds its body holds a place no better than one that sends nothing.
pub struct RequestBody {
    incoming: Incoming,
    state: Arc<ConnectionState>,
}

impl RequestBody {
    fn arrived(&self) {
        self.state.receiving.store(false, Ordering::Release);
    }
}

impl Body for RequestBody {
    type Data = Bytes;
    type Error = hyper::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, hyper::Error>>> {
        let this = self.get_mut();
        let frame = Pin::new(&mut this.incoming).poll_frame(cx);
        if matches!(frame, Poll::Ready(None | Some(Err(_)))) || this.incoming.is_end_stream() {
            this.arrived();
        }
        frame
    }

    fn is_end_stream(&self) -> bool {
        self.incoming.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.incoming.size_hint()
    }
}

impl Drop for RequestBody {
    fn drop(&mut self) {
        self.arrived();
    }
}

/// A service that counts the requests under way on its connection.
struct Tracked<S> {
    inner: S,
    state: Arc<ConnectionState>,
}

impl<S, B> Service<Request<Incoming>> for Tracked<S>
where
    S: Service<Request<RequestBody>, Response = Response<B>>,
    S::Future: Send + 'static,
    B: Body,
{
    type Response = Response<TrackedBody<B>>;
    type Error = S::Error;
    type Future = Pin<Box<dyn Future<Output = Result<Self::Response, S::Error>> + Send>>;

    fn call(&self, request: Request<Incoming>) -> Self::Future {
        let active = Active::start(self.state.clone(), !request.body().is_end_stream());
        let state = self.state.clone();
        let answer = self
            .inner
            .call(request.map(|incoming| RequestBody { incoming, state }));
        Box::pin(async move {
            let response = answer.await?;
            Ok(response.map(|body| TrackedBody {
                body: Box::pin(body),
                _active: active,
            }))
        })
    }
}

/// An answer's body: its request is under way until it is sent or dropped.
struct TrackedBody<B> {
    body: Pin<Box<B>>,
    _active: Active,
}

impl<B: Body> Body for TrackedBody<B> {
    type Data = B::Data;
    type Error = B::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Self::Data>, Self::Error>>> {
        self.get_mut().body.as_mut().poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.body.size_hint()
    }
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
        echo_server_within(read_timeout, usize::MAX).await
    }

    /// [`echo_server`] taking at most `cap` connections.
    async fn echo_server_within(read_timeout: Duration, cap: usize) -> SocketAddr {
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
            hyper::service::service_fn(move |request: Request<RequestBody>| {
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
            cap,
            make_service,
            std::future::pending(),
        ));
        address
    }

    /// At the cap, peers that connect and send nothing cannot keep a client out: its connection
    /// takes the place of the one idle the longest, long before the read timeout would free one.
    #[tokio::test]
    async fn at_the_cap_a_new_connection_takes_the_place_of_the_longest_idle() {
        let address = echo_server_within(Duration::from_secs(60), 4).await;
        let mut stalled = Vec::new();
        for _ in 0..12 {
            stalled.push(TcpStream::connect(address).await.unwrap());
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        let mut client = TcpStream::connect(address).await.unwrap();
        let request = format!(
            "POST /mcp HTTP/1.1\r\nHost: {address}\r\nContent-Type: application/json\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{{}}"
        );
        client.write_all(request.as_bytes()).await.unwrap();
        let mut answer = Vec::new();
        tokio::time::timeout(Duration::from_secs(10), client.read_to_end(&mut answer))
            .await
            .expect("the client was kept out")
            .unwrap();
        assert!(answer.starts_with(b"HTTP/1.1 200"), "{answer:?}");
        // The first stalled peers were closed to make room; the last ones are still served.
        let mut first = [0u8; 1];
        let read = tokio::time::timeout(Duration::from_secs(10), stalled[0].read(&mut first)).await;
        assert!(matches!(read, Ok(Ok(0)) | Ok(Err(_))), "{read:?}");
        let last = stalled.last_mut().unwrap();
        let read = tokio::time::timeout(Duration::from_millis(300), last.read(&mut first)).await;
        assert!(read.is_err(), "the newest peer was closed: {read:?}");
    }

    /// How a peer stalls: it connects and sends nothing, part of a head, or a whole head and part
    /// of the body it announces.
    #[derive(Debug, Clone, Copy)]
    enum Stall {
        Nothing,
        PartOfHead,
        PartOfBody,
    }

    /// Open a connection to `address` that stalls as `how` says.
    async fn stall(address: SocketAddr, how: Stall) -> TcpStream {
        let mut peer = TcpStream::connect(address).await.unwrap();
        let head = format!(
            "POST /mcp HTTP/1.1\r\nHost: {address}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n"
        );
        let sent = match how {
            Stall::Nothing => String::new(),
            Stall::PartOfHead => head[..head.len() / 2].to_string(),
            Stall::PartOfBody => format!("{head}{{\"a\": "),
        };
        peer.write_all(sent.as_bytes()).await.unwrap();
        peer
    }

    /// A whole request on a new connection to `address`; the answer, or `None` when the client
    /// was kept out for 10 s.
    async fn one_request(address: SocketAddr) -> Option<Vec<u8>> {
        let mut client = TcpStream::connect(address).await.unwrap();
        let request = format!(
            "POST /mcp HTTP/1.1\r\nHost: {address}\r\nContent-Type: application/json\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{{}}"
        );
        client.write_all(request.as_bytes()).await.unwrap();
        let mut answer = Vec::new();
        let read = tokio::time::timeout(Duration::from_secs(10), client.read_to_end(&mut answer));
        read.await.ok().map(|_| answer)
    }

    /// Whether the server closed `peer` (within `wait`).
    async fn closed(peer: &mut TcpStream, wait: Duration) -> bool {
        let mut byte = [0u8; 1];
        matches!(
            tokio::time::timeout(wait, peer.read(&mut byte)).await,
            Ok(Ok(0) | Err(_))
        )
    }

    /// Peers that send a head and withhold its body have a request under way, but nothing is
    /// being answered on their connections: at the cap they make room like peers that send
    /// nothing, the oldest first, long before the read timeout would free one.
    #[tokio::test]
    async fn at_the_cap_a_peer_that_withholds_its_body_makes_room() {
        let address = echo_server_within(Duration::from_secs(60), 4).await;
        let mut stalled = Vec::new();
        for _ in 0..5 {
            stalled.push(stall(address, Stall::PartOfBody).await);
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        let answer = one_request(address).await.expect("the client was kept out");
        assert!(answer.starts_with(b"HTTP/1.1 200"), "{answer:?}");
        assert!(closed(&mut stalled[0], Duration::from_secs(10)).await);
        let newest = stalled.last_mut().unwrap();
        assert!(
            !closed(newest, Duration::from_millis(300)).await,
            "the newest peer was closed"
        );
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

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(16))]

        /// However the peers at the cap stall (nothing, part of a head, a head and part of its
        /// body, in any order), a client's request is answered, and the peer that stalled first
        /// is the one closed to make room.
        #[test]
        fn at_the_cap_stalled_peers_never_keep_a_client_out(
            stalls in proptest::collection::vec(
                prop_oneof![Just(Stall::Nothing), Just(Stall::PartOfHead), Just(Stall::PartOfBody)],
                5..12,
            ),
        ) {
            let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
            let (answer, first_closed) = runtime.block_on(async {
                let address = echo_server_within(Duration::from_secs(60), 4).await;
                let mut peers = Vec::new();
                for how in &stalls {
                    peers.push(stall(address, *how).await);
                    // Each one in place before the next: the order of arrival decides.
                    tokio::time::sleep(Duration::from_millis(10)).await;
                }
                let answer = one_request(address).await;
                let first_closed = closed(&mut peers[0], Duration::from_secs(10)).await;
                (answer, first_closed)
            });
            let answer = answer.map(|a| String::from_utf8_lossy(&a).into_owned());
            prop_assert!(answer.as_deref().is_some_and(|a| a.starts_with("HTTP/1.1 200")), "{:?}", answer);
            prop_assert!(first_closed, "the peer that stalled first is still open");
        }
    }
}
