//! Traces of the proxy in OpenTelemetry's terms, exported over OTLP/HTTP: a server span per
//! request, a `validate` span for the gate's decision on a `tools/call`, a client span for the
//! call to the server, whose id the server receives in `params._meta.traceparent`
//! ([`SessionTracer`]). Spans leave through a bounded queue that never makes a call wait
//! ([`Exporter`]).

mod context;
mod export;
mod otlp;
mod session;

pub use context::{parse_traceparent, SpanId, TraceId, TRACEPARENT};
pub use export::{
    start_exporter, Dropped, ExportTask, Exporter, TraceConfig, DEFAULT_SERVICE_NAME, EXPORT_GRACE,
    QUEUE_SPANS,
};
pub use session::{SessionTracer, TraceStart, TOOL_ERROR};

/// The `tracing` target of the span a log line written during a traced request is in: a
/// subscriber that wants `trace_id` on those lines enables it at `INFO`.
pub const LOG_TARGET: &str = "toolschema_proxy::trace";

/// The `tracing` span that gives the log lines written inside it the request's trace id.
pub fn log_span(trace: Option<TraceId>) -> tracing::Span {
    match trace {
        Some(trace) => {
            tracing::info_span!(target: "toolschema_proxy::trace", "request", trace_id = %trace)
        }
        None => tracing::Span::none(),
    }
}

/// The HTTP `traceparent` header of a request, when it is one value of text (it is read
/// strictly later; a request's `params._meta.traceparent` wins over it).
pub fn traceparent_header(headers: &http::HeaderMap) -> Option<&str> {
    let mut values = headers.get_all(TRACEPARENT).iter();
    match (values.next(), values.next()) {
        (Some(value), None) => value.to_str().ok(),
        _ => None,
    }
}
