//! The stdio relay: moves lines between the client, the server and the [`Gate`].
//!
//! Each direction is one thread reading one line at a time with blocking I/O, so a message wakes
//! the thread that handles it directly (no reactor between the read and the write: a relay's
//! latency is mostly wake-ups). The thread hands the line to the gate, under the gate's lock, and
//! queues what the gate decided in one outbox per destination before letting go of the lock, so
//! the outboxes keep the order of the decisions. Writes happen outside the lock: whichever thread
//! finds an outbox's writer free writes everything queued in it, so neither thread waits on the
//! other's writes, and a side that stops reading never stops the gate.

use super::audit_log::AuditLog;
use super::trace::{log_span, SessionTracer};
use crate::metrics::Metrics;
use serde_json::Value;
use std::collections::VecDeque;
use std::fs::File;
use std::io::{BufRead, BufWriter, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, TryLockError};
use std::time::Instant;
use tokio::sync::Notify;
use toolschema_gate::message::{sniff_id, Read, RequestId};
use toolschema_gate::AuditRecord;
use toolschema_gate::{report, Action, Gate};
use toolschema_mcp::framing::{Frame, LineReader, OversizedLine};

/// How much of a message is gathered before it is written: most messages go out in one `write`.
const WRITE_BUFFER_BYTES: usize = 64 * 1024;

/// Lock a mutex; a panic elsewhere must not stop the proxy, so a poisoned lock is used as it is.
fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// What waits in an outbox.
enum Item {
    /// A message, without its newline.
    Line(Vec<u8>),
    /// An audit record, appended before the messages queued after it are written.
    Audit(Box<AuditRecord>),
}

/// Where queued items go.
trait Sink {
    /// Write one item (buffered).
    fn put(&mut self, item: Item, audit: Option<&AuditLog>) -> std::io::Result<()>;
    /// Flush what was buffered.
    fn flush(&mut self) -> std::io::Result<()>;
}

/// The client's stdout.
struct ClientSink(BufWriter<Box<dyn Write + Send>>);

impl Sink for ClientSink {
    fn put(&mut self, item: Item, audit: Option<&AuditLog>) -> std::io::Result<()> {
        match item {
            Item::Line(line) => {
                self.0.write_all(&line)?;
                self.0.write_all(b"\n")
            }
            Item::Audit(record) => {
                if let Some(audit) = audit {
                    audit.write(&record);
                }
                Ok(())
            }
        }
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.0.flush()
    }
}

/// The server's stdin; `None` once the proxy closed it to ask the server to exit.
struct ServerSink(Option<BufWriter<File>>);

impl Sink for ServerSink {
    fn put(&mut self, item: Item, _: Option<&AuditLog>) -> std::io::Result<()> {
        let Some(writer) = self.0.as_mut() else {
            return Err(std::io::ErrorKind::BrokenPipe.into());
        };
        match item {
            Item::Line(line) => {
                writer.write_all(&line)?;
                writer.write_all(b"\n")
            }
            Item::Audit(_) => Ok(()),
        }
    }

    fn flush(&mut self) -> std::io::Result<()> {
        match self.0.as_mut() {
            Some(writer) => writer.flush(),
            None => Err(std::io::ErrorKind::BrokenPipe.into()),
        }
    }
}

/// The items for one destination, in order, and the writer they go to.
struct Outbox<S> {
    queue: Mutex<VecDeque<Item>>,
    sink: Mutex<S>,
}

impl<S: Sink> Outbox<S> {
    fn new(sink: S) -> Self {
        Outbox {
            queue: Mutex::new(VecDeque::new()),
            sink: Mutex::new(sink),
        }
    }

    /// Write what is queued, unless another thread is writing (it writes these too).
    fn flush(&self, audit: Option<&AuditLog>) -> std::io::Result<()> {
        loop {
            let mut sink = match self.sink.try_lock() {
                Ok(sink) => sink,
                Err(TryLockError::Poisoned(poisoned)) => poisoned.into_inner(),
                Err(TryLockError::WouldBlock) => return Ok(()),
            };
            let written = loop {
                let next = lock(&self.queue).pop_front();
                match next {
                    Some(item) => {
                        if let Err(e) = sink.put(item, audit) {
                            break Err(e);
                        }
                    }
                    None => break sink.flush(),
                }
            };
            drop(sink);
            if let Err(e) = written {
                // Nothing more can reach this destination.
                lock(&self.queue).clear();
                return Err(e);
            }
            // Items queued while this thread held the writer, by a thread that found it taken.
            if lock(&self.queue).is_empty() {
                return Ok(());
            }
        }
    }
}

/// One session between a client and a server over stdio, decided by a [`Gate`].
pub struct Relay {
    gate: Mutex<Gate>,
    client: Outbox<ClientSink>,
    server: Outbox<ServerSink>,
    audit: Option<AuditLog>,
    metrics: Option<Arc<Metrics>>,
    /// Set once writing to the client failed (reported once).
    client_failed: AtomicBool,
    /// Set once writing to the server failed: the server is gone.
    server_failed: AtomicBool,
    /// Woken when the gate's next deadline moved, or its last request in flight was answered.
    pub changed: Notify,
    /// The spans of the session, when the proxy exports traces.
    tracer: Option<SessionTracer>,
}

/// Why the client-to-server direction stopped.
pub enum ClientEnd {
    /// The client closed its output.
    EndOfInput,
    /// The server's stdin is closed: the server is gone.
    ServerGone,
}

impl Relay {
    /// A relay between a client's output and a server's stdin.
    pub fn new(
        gate: Gate,
        client_out: Box<dyn Write + Send>,
        server_in: File,
        audit: Option<AuditLog>,
        metrics: Option<Arc<Metrics>>,
        tracer: Option<SessionTracer>,
    ) -> Relay {
        Relay {
            gate: Mutex::new(gate),
            client: Outbox::new(ClientSink(BufWriter::with_capacity(
                WRITE_BUFFER_BYTES,
                client_out,
            ))),
            server: Outbox::new(ServerSink(Some(BufWriter::with_capacity(
                WRITE_BUFFER_BYTES,
                server_in,
            )))),
            audit,
            metrics,
            client_failed: AtomicBool::new(false),
            server_failed: AtomicBool::new(false),
            changed: Notify::new(),
            tracer,
        }
    }

    /// Let the gate decide, queue its actions in order, then write them.
    fn decide(&self, decide: impl FnOnce(&mut Gate, &mut Vec<Action>)) {
        self.decide_on(false, decide)
    }

    /// [`decide`](Self::decide); `client`: on a message of the client's (the tracer times it).
    fn decide_on(&self, client: bool, decide: impl FnOnce(&mut Gate, &mut Vec<Action>)) {
        let mut actions = Vec::new();
        let moved = {
            let mut gate = lock(&self.gate);
            let before = (gate.next_deadline(), gate.requests_in_flight() > 0);
            let started = Instant::now();
            decide(&mut gate, &mut actions);
            if let Some(metrics) = &self.metrics {
                for operation in gate.take_operations() {
                    metrics.operation(&operation);
                }
            }
            if let Some(tracer) = &self.tracer {
                let window = client.then(|| (started, Instant::now()));
                tracer.observe(&mut actions, window);
            }
            if !actions.is_empty() {
                let mut to_client = lock(&self.client.queue);
                let mut to_server = lock(&self.server.queue);
                for action in actions {
                    match action {
                        Action::ToServer(line) => to_server.push_back(Item::Line(line)),
                        Action::ToClient(line) => to_client.push_back(Item::Line(line)),
                        Action::Audit(record) => {
                            if let Some(metrics) = &self.metrics {
                                metrics.call(&record, gate.knows_tool(&record.tool));
                            }
                            to_client.push_back(Item::Audit(record))
                        }
                    }
                }
            }
            let settled = before.1 && gate.requests_in_flight() == 0;
            gate.next_deadline() != before.0 || settled
        };
        if self.server.flush(None).is_err() {
            self.server_failed.store(true, Ordering::Relaxed);
        }
        if let Err(e) = self.client.flush(self.audit.as_ref()) {
            // A client that stopped reading is reported once, not treated as fatal: its end of
            // input ends the proxy.
            if !self.client_failed.swap(true, Ordering::Relaxed) {
                report(&format!("cannot write to the client: {e}"));
            }
        }
        // After the writes: the runtime closes the server's input once nothing waits.
        if moved {
            self.changed.notify_one();
        }
    }

    /// Whether the gate has learned the server's tools.
    pub fn catalog_learned(&self) -> bool {
        lock(&self.gate).catalog_learned()
    }

    /// When the gate must be told the time next.
    pub fn next_deadline(&self) -> Option<Instant> {
        lock(&self.gate).next_deadline()
    }

    /// Whether the client's requests are all answered, none waiting in the gate or in flight at
    /// the server.
    pub fn settled(&self) -> bool {
        let gate = lock(&self.gate);
        !gate.holds_client_messages() && gate.requests_in_flight() == 0
    }

    /// Tell the gate the time.
    pub fn tick(&self) {
        self.decide(|gate, out| gate.tick(Instant::now(), out));
    }

    /// Read the client's messages and hand them to the gate until either side is done.
    pub fn client_to_server<R: BufRead>(&self, mut reader: LineReader<R>) -> ClientEnd {
        loop {
            match reader.next_blocking() {
                Ok(Some(Frame::Line(line))) => {
                    // Entered once the gate has read the message (the tracer reads it no
                    // second time), for the lines written while the gate decides.
                    let mut _in_trace = None;
                    self.decide_on(true, |gate, out| match &self.tracer {
                        Some(tracer) => {
                            gate.client_message_seen(line, Instant::now(), out, |text, read| {
                                if let Read::One(message) = read {
                                    let trace = tracer.client_message(text, message, None);
                                    _in_trace = Some(log_span(trace).entered());
                                }
                            })
                        }
                        None => gate.client_message(line, Instant::now(), out),
                    })
                }
                Ok(Some(Frame::Oversized(over))) => {
                    let id = sniffed_id(&over);
                    self.decide(|gate, out| gate.client_message_too_large(over.length, id, out));
                }
                Ok(None) => return ClientEnd::EndOfInput,
                Err(e) => {
                    report(&format!("cannot read from the client: {e}"));
                    return ClientEnd::EndOfInput;
                }
            }
            if self.server_failed.load(Ordering::Relaxed) {
                return ClientEnd::ServerGone;
            }
        }
    }

    /// Read the server's messages and hand them to the gate until the server closes its stdout.
    pub fn server_to_client<R: BufRead>(&self, mut reader: LineReader<R>) {
        loop {
            match reader.next_blocking() {
                Ok(Some(Frame::Line(line))) => {
                    self.decide(|gate, out| gate.server_message(line, Instant::now(), out))
                }
                Ok(Some(Frame::Oversized(over))) => {
                    let id = sniffed_id(&over);
                    self.decide(|gate, out| {
                        gate.server_message_too_large(over.length, id, Instant::now(), out)
                    });
                }
                Ok(None) => return,
                Err(e) => {
                    report(&format!("cannot read from the server: {e}"));
                    return;
                }
            }
        }
    }

    /// The server is gone: every request in flight, and every request from now on, is answered
    /// with this error.
    pub fn server_gone(&self, message: &str, data: Value) {
        self.decide(|gate, out| gate.server_gone(message, data, Instant::now(), out));
    }

    /// Close the server's stdin, unless a write to it is under way (a server that does not read
    /// is stopped by signals instead).
    pub fn close_server(&self) {
        if let Ok(mut sink) = self.server.sink.try_lock() {
            sink.0.take();
        }
    }
}

/// The request id of an oversized message, from the two ends kept of it.
fn sniffed_id(over: &OversizedLine) -> Option<RequestId> {
    sniff_id(&over.head, &over.tail)
}
