//! `proxy --upstream URL` without `--listen`: the client starts the proxy as it would start a
//! server and speaks stdio to it; the proxy speaks Streamable HTTP to the remote server.
//!
//! One session: the client's messages are read on a thread (as the stdio relay reads them),
//! decided by the gate, and posted upstream; what the upstream sends, on any stream (the GET
//! stream the proxy opens once the session is initialized included), reaches the client's
//! stdout in the order it is decided. What waits for the client to read it is bounded (1,024
//! messages, `--max-message-bytes`): past it the proxy reads neither the client nor the
//! upstream until the client reads (back-pressure, as over a pipe; nothing is dropped).

use super::queue::Budget;
use super::routes::STREAM_CAPACITY;
use super::session::{ClientSide, Session, SessionParts, StdioClient};
use super::stdio_server::{write_lines, Queued};
use super::upstream::{Upstream, UpstreamLink};
use super::{HttpProxyConfig, ServerSide};
use crate::{own_stdio, ProxyError, ProxyExit};
use std::io::BufReader;
use std::sync::mpsc;
use tokio::signal::unix::{signal, SignalKind};
use tokio::sync::oneshot;
use toolschema_gate::{report, Gate};
use toolschema_mcp::framing::{Frame, LineReader};

/// How much of a pipe is read or written at once.
const BUFFER_BYTES: usize = 64 * 1024;

/// Run the proxy between this process's stdin and stdout and the upstream of `config`, until
/// the client closes its input (the upstream's session is then deleted) or a signal.
pub async fn run_stdio_upstream(config: HttpProxyConfig) -> Result<ProxyExit, ProxyError> {
    let ServerSide::Upstream { url, headers } = &config.server else {
        return Err(ProxyError::Stdio(std::io::Error::other(
            "the stdio client needs an upstream URL",
        )));
    };
    let upstream = Upstream::new(
        url,
        headers.clone(),
        config.max_message_bytes,
        config.request_timeout,
    )
    .map_err(|e| ProxyError::Stdio(std::io::Error::other(e)))?;
    let audit = config.open_audit()?;
    let mut terminate = signal(SignalKind::terminate()).map_err(ProxyError::Signals)?;
    let mut interrupt = signal(SignalKind::interrupt()).map_err(ProxyError::Signals)?;
    let input = own_stdio::input().map_err(ProxyError::Stdio)?;
    let output = own_stdio::output().map_err(ProxyError::Stdio)?;
    let (to_client, lines) = mpsc::channel::<Queued>();
    std::thread::Builder::new()
        .name("client-stdout".into())
        .spawn(move || {
            if write_lines(lines, output).is_err() {
                report("cannot write to the client: its output is closed");
            }
        })
        .map_err(ProxyError::Stdio)?;
    let exporter = crate::trace::start_exporter(config.trace.as_ref(), config.metrics.as_ref())
        .map_err(ProxyError::Trace)?;
    let (exporter, export_task) = exporter.unzip();
    // The tracer reads each call's verdict from the gate's records.
    let gate_config = config.session_gate(audit.is_some() || exporter.is_some());
    let session = Session::new(SessionParts {
        label: format!("stdio client of {}", upstream.url()),
        gate: Gate::new(gate_config),
        client: ClientSide::Stdio(StdioClient {
            writer: to_client,
            budget: Budget::new(STREAM_CAPACITY, config.max_message_bytes),
        }),
        backend: super::session::Backend::Upstream(UpstreamLink::new(upstream, false, true)),
        audit,
        metrics: config.metrics.clone(),
        client_name: None,
        lane: false,
        tracer: exporter.map(|exporter| crate::trace::SessionTracer::new(exporter, None)),
    });
    if let Some(health) = &config.health {
        let watched = std::sync::Arc::downgrade(&session);
        health.set_check(Box::new(move || match watched.upgrade() {
            Some(session) if session.catalog_learned() => {
                Ok("the upstream's tools are learned".into())
            }
            Some(_) => Err("the upstream's tools are not learned yet (no tools/list yet)".into()),
            None => Err("the session is closed".into()),
        }));
    }
    UpstreamLink::start(&session);
    session.watch_deadlines();
    let (ended, client_done) = oneshot::channel();
    let reader = session.clone();
    let max = config.max_message_bytes;
    let runtime = tokio::runtime::Handle::current();
    std::thread::Builder::new()
        .name("client-stdin".into())
        .spawn(move || {
            let mut lines = LineReader::new(BufReader::with_capacity(BUFFER_BYTES, input), max);
            loop {
                // A client that does not read what it is sent is not read either.
                runtime.block_on(reader.client_room());
                match lines.next_blocking() {
                    Ok(Some(Frame::Line(line))) => reader.client_message(line, None),
                    Ok(Some(Frame::Oversized(over))) => reader.client_message_too_large(&over),
                    Ok(None) => break,
                    Err(e) => {
                        report(&format!("cannot read from the client: {e}"));
                        break;
                    }
                }
            }
            let _ = ended.send(());
        })
        .map_err(ProxyError::Stdio)?;
    let exit = tokio::select! {
        _ = client_done => ProxyExit::ClientClosed,
        _ = terminate.recv() => ProxyExit::Signal(nix::libc::SIGTERM),
        _ = interrupt.recv() => ProxyExit::Signal(nix::libc::SIGINT),
    };
    // Answers still under way get a moment to reach the client before the session ends.
    let settle = tokio::time::Instant::now() + std::time::Duration::from_secs(2);
    while session.is_busy() && tokio::time::Instant::now() < settle {
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    session.close().await;
    if let Some(task) = export_task {
        task.finish(crate::trace::EXPORT_GRACE).await;
    }
    Ok(exit)
}
