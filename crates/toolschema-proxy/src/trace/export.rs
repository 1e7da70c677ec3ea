//! Spans leave the proxy through a bounded queue drained by one background task, which POSTs
//! them in batches to the collector (a batch is sent when full, or half a second after its
//! first span). A call never waits for it: when the queue is full (the
//! collector is slow, down, or answers errors), spans are dropped and counted.

use super::otlp::{export_request, Origin, Span};
use bytes::Bytes;
use http::{Request, StatusCode};
use http_body_util::Full;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::mpsc;
use toolschema_http::client::PooledClient;

/// How many spans wait for export at most.
pub const QUEUE_SPANS: usize = 4096;

/// How long the proxy waits at exit for the spans still queued to be sent.
pub const EXPORT_GRACE: Duration = Duration::from_secs(2);

/// How long the first span of a batch waits for others before the batch is sent: a busy proxy
/// sends a few large exports rather than one per call (the OpenTelemetry SDKs wait 5 s).
const BATCH_DELAY: Duration = Duration::from_millis(500);

/// How many spans one POST carries at most.
const BATCH_SPANS: usize = 512;

/// How long one POST may take before its spans are counted as lost.
const EXPORT_TIMEOUT: Duration = Duration::from_secs(10);

/// Where spans go, and the queue in front of it.
#[derive(Debug, Clone)]
pub struct TraceConfig {
    /// The full URL spans are POSTed to (`…/v1/traces`).
    pub endpoint: String,
    /// `service.name` of the spans.
    pub service_name: String,
}

/// The name the proxy's spans carry unless `OTEL_SERVICE_NAME` says otherwise.
pub const DEFAULT_SERVICE_NAME: &str = "toolschema-proxy";

impl TraceConfig {
    /// The settings from `--otlp-endpoint` (a full URL, used as given) or, without it, the
    /// standard variables: `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` (a full URL), then
    /// `OTEL_EXPORTER_OTLP_ENDPOINT` (a base URL, to which `/v1/traces` is added), and
    /// `OTEL_SERVICE_NAME`. `None`: tracing is off. `env` reads a variable (empty counts as
    /// unset, as the OpenTelemetry specification says).
    pub fn resolve(flag: Option<&str>, env: impl Fn(&str) -> Option<String>) -> Option<Self> {
        let env = |name: &str| env(name).filter(|value| !value.trim().is_empty());
        let endpoint = match flag {
            Some(url) => url.to_string(),
            None => match env("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") {
                Some(url) => url,
                None => {
                    let base = env("OTEL_EXPORTER_OTLP_ENDPOINT")?;
                    format!("{}/v1/traces", base.trim_end_matches('/'))
                }
            },
        };
        Some(TraceConfig {
            endpoint,
            service_name: env("OTEL_SERVICE_NAME")
                .unwrap_or_else(|| DEFAULT_SERVICE_NAME.to_string()),
        })
    }
}

/// The spans that never reached the collector: dropped from a full queue, or in an export
/// that failed. Shared with whoever reports it (a metric, or the line at shutdown).
#[derive(Debug, Default)]
pub struct Dropped(AtomicU64);

impl Dropped {
    /// How many so far.
    pub fn get(&self) -> u64 {
        self.0.load(Ordering::Relaxed)
    }

    fn add(&self, n: u64) {
        self.0.fetch_add(n, Ordering::Relaxed);
    }
}

/// The sending end of the export queue; clones share it.
#[derive(Debug, Clone)]
pub struct Exporter {
    queue: mpsc::Sender<Span>,
    dropped: Arc<Dropped>,
    pending: Arc<AtomicU64>,
}

/// The background task that drains the queue; awaited at shutdown to send what is left.
pub struct ExportTask {
    handle: tokio::task::JoinHandle<()>,
    dropped: Arc<Dropped>,
    /// Spans queued or being sent.
    pending: Arc<AtomicU64>,
}

impl Exporter {
    /// Start the export task on the current runtime. Fails when the endpoint is not a URL the
    /// client can reach (http:// or https://).
    pub fn start(config: &TraceConfig) -> Result<(Exporter, ExportTask), String> {
        let uri: http::Uri = config
            .endpoint
            .parse()
            .map_err(|e| format!("--otlp-endpoint '{}': {e}", config.endpoint))?;
        if !matches!(uri.scheme_str(), Some("http" | "https")) || uri.host().is_none() {
            return Err(format!(
                "--otlp-endpoint '{}' is not an http:// or https:// URL",
                config.endpoint
            ));
        }
        let (queue, receiver) = mpsc::channel(QUEUE_SPANS);
        let dropped = Arc::new(Dropped::default());
        let origin = Origin {
            service_name: config.service_name.clone(),
        };
        let pending = Arc::new(AtomicU64::new(0));
        let handle = tokio::spawn(drain(
            receiver,
            uri,
            origin,
            dropped.clone(),
            pending.clone(),
        ));
        Ok((
            Exporter {
                queue,
                dropped: dropped.clone(),
                pending: pending.clone(),
            },
            ExportTask {
                handle,
                dropped,
                pending,
            },
        ))
    }

    /// Queue a finished span; never waits (a full queue drops it, and counts it).
    pub fn send(&self, span: Span) {
        // Counted before it is queued, so that the task never counts it off first.
        self.pending.fetch_add(1, Ordering::AcqRel);
        if self.queue.try_send(span).is_err() {
            self.pending.fetch_sub(1, Ordering::AcqRel);
            self.dropped.add(1);
        }
    }

    /// The count of spans lost.
    pub fn dropped(&self) -> Arc<Dropped> {
        self.dropped.clone()
    }
}

/// Start the exporter `trace` asks for, if any, its lost spans counted in `metrics` too.
pub fn start_exporter(
    trace: Option<&TraceConfig>,
    metrics: Option<&Arc<crate::metrics::Metrics>>,
) -> Result<Option<(Exporter, ExportTask)>, String> {
    let Some(trace) = trace else {
        return Ok(None);
    };
    let (exporter, task) = Exporter::start(trace)?;
    if let Some(metrics) = metrics {
        metrics.count_spans_dropped(exporter.dropped());
    }
    Ok(Some((exporter, task)))
}

impl ExportTask {
    /// Wait up to `grace` for the spans still queued to be sent, stop the task, then report
    /// the spans lost, if any.
    pub async fn finish(self, grace: Duration) {
        let deadline = tokio::time::Instant::now() + grace;
        while self.pending.load(Ordering::Acquire) > 0 && tokio::time::Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        self.handle.abort();
        // What was still queued or being sent is lost.
        self.dropped.add(self.pending.swap(0, Ordering::AcqRel));
        let dropped = self.dropped.get();
        if dropped > 0 {
            tracing::warn!(
                spans_dropped = dropped,
                "{dropped} span(s) never reached the OTLP collector (the export queue was full, \
                 or the collector failed)"
            );
        }
    }
}

/// Send what the queue holds, in batches, until every sender is gone.
async fn drain(
    mut receiver: mpsc::Receiver<Span>,
    uri: http::Uri,
    origin: Origin,
    dropped: Arc<Dropped>,
    pending: Arc<AtomicU64>,
) {
    let client = PooledClient::new(Duration::from_secs(30), 1);
    // A collector that fails is reported once, then again once it recovered and failed anew.
    let failing = AtomicBool::new(false);
    let mut batch = Vec::with_capacity(BATCH_SPANS);
    while receiver.recv_many(&mut batch, BATCH_SPANS).await > 0 {
        if batch.len() < BATCH_SPANS {
            // Asleep rather than waiting on the queue: spans queued meanwhile wake nothing.
            tokio::time::sleep(BATCH_DELAY).await;
            while batch.len() < BATCH_SPANS {
                match receiver.try_recv() {
                    Ok(span) => batch.push(span),
                    Err(_) => break,
                }
            }
        }
        let body = export_request(&origin, &batch);
        let count = batch.len() as u64;
        batch.clear();
        let request = Request::post(uri.clone())
            .header(http::header::CONTENT_TYPE, "application/x-protobuf")
            .body(Full::new(Bytes::from(body)));
        let Ok(request) = request else {
            dropped.add(count);
            pending.fetch_sub(count, Ordering::AcqRel);
            continue;
        };
        let outcome = match tokio::time::timeout(EXPORT_TIMEOUT, client.send(request)).await {
            Err(_) => Err(format!(
                "it did not answer within {} s",
                EXPORT_TIMEOUT.as_secs()
            )),
            Ok(Err(e)) => Err(e.to_string()),
            Ok(Ok(response)) => {
                let status = response.status();
                // The body is drained so that the connection can be used again.
                let _ = toolschema_http::client::read_body(response.into_body(), 64 * 1024).await;
                if status.is_success() {
                    Ok(())
                } else {
                    Err(format!("it answered HTTP {}", status_text(status)))
                }
            }
        };
        pending.fetch_sub(count, Ordering::AcqRel);
        match outcome {
            Ok(()) => failing.store(false, Ordering::Relaxed),
            Err(why) => {
                dropped.add(count);
                if !failing.swap(true, Ordering::Relaxed) {
                    tracing::warn!("cannot export spans to {uri}: {why}; calls go on untraced");
                }
            }
        }
    }
}

fn status_text(status: StatusCode) -> String {
    status.as_u16().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env<'a>(vars: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
        move |name| {
            vars.iter()
                .find(|(key, _)| *key == name)
                .map(|(_, value)| value.to_string())
        }
    }

    #[test]
    fn the_flag_wins_then_the_traces_endpoint_then_the_base() {
        let all = [
            ("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "http://t:1/x"),
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://b:2/"),
            ("OTEL_SERVICE_NAME", "gw"),
        ];
        let config = TraceConfig::resolve(Some("http://f:3/v1/traces"), env(&all)).unwrap();
        assert_eq!(config.endpoint, "http://f:3/v1/traces");
        assert_eq!(config.service_name, "gw");
        assert_eq!(
            TraceConfig::resolve(None, env(&all)).unwrap().endpoint,
            "http://t:1/x"
        );
        let base = TraceConfig::resolve(None, env(&all[1..])).unwrap();
        assert_eq!(base.endpoint, "http://b:2/v1/traces");
        assert_eq!(base.service_name, "gw");
        let unnamed = TraceConfig::resolve(None, env(&all[1..2])).unwrap();
        assert_eq!(unnamed.service_name, DEFAULT_SERVICE_NAME);
        assert!(TraceConfig::resolve(None, env(&[("OTEL_EXPORTER_OTLP_ENDPOINT", " ")])).is_none());
        assert!(TraceConfig::resolve(None, env(&[])).is_none());
    }

    /// A queue that overflows counts its lost spans in the metrics the exporter was given.
    #[tokio::test]
    async fn spans_lost_to_a_full_queue_are_counted_in_the_metrics() {
        let metrics = Arc::new(crate::metrics::Metrics::new());
        let config = TraceConfig {
            // Nothing is sent before the queue is full: the task has not run yet.
            endpoint: "http://127.0.0.1:9/v1/traces".into(),
            service_name: DEFAULT_SERVICE_NAME.into(),
        };
        let (exporter, task) = start_exporter(Some(&config), Some(&metrics))
            .unwrap()
            .unwrap();
        let span = || crate::trace::otlp::Span {
            trace: crate::trace::TraceId([1; 16]),
            id: crate::trace::SpanId([2; 8]),
            parent: None,
            trace_state: None,
            name: "tools/call echo".into(),
            kind: crate::trace::otlp::SpanKind::Server,
            start: 1,
            end: 2,
            attributes: Vec::new(),
            error: None,
        };
        for _ in 0..QUEUE_SPANS + 7 {
            exporter.send(span());
        }
        let line = |text: &str| {
            text.lines()
                .find(|l| l.starts_with("toolschema_proxy_spans_dropped_total "))
                .map(str::to_string)
        };
        assert_eq!(
            line(&metrics.render()).as_deref(),
            Some("toolschema_proxy_spans_dropped_total 7")
        );
        task.handle.abort();
    }
}
