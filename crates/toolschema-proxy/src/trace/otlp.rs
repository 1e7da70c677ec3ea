//! The OTLP/HTTP request body: an `ExportTraceServiceRequest` in protobuf, written by hand.
//!
//! The proxy exports a handful of messages of opentelemetry-proto (`collector/trace/v1`,
//! `trace/v1`, `resource/v1`, `common/v1`). Writing them here takes about a hundred lines; the
//! `opentelemetry-otlp` exporter would bring tonic or reqwest and a second HTTP stack beside
//! the proxy's hyper client. The field numbers below are those of opentelemetry-proto v1; the
//! integration test decodes the bytes with the official Python bindings.

use super::context::{SpanId, TraceId};

/// What a span is to its trace (`Span.SpanKind`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SpanKind {
    /// Work inside the proxy (validation).
    Internal = 1,
    /// A request the proxy serves.
    Server = 2,
    /// A request the proxy makes (to the server behind it).
    Client = 3,
}

/// An attribute's value (`AnyValue`, the kinds the proxy uses).
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// A string.
    Str(String),
    /// An integer.
    Int(i64),
}

/// A finished span.
#[derive(Debug, Clone, PartialEq)]
pub struct Span {
    /// Its trace.
    pub trace: TraceId,
    /// Its own id.
    pub id: SpanId,
    /// Its parent, unless it is a root.
    pub parent: Option<SpanId>,
    /// The caller's `tracestate`, passed on as it came.
    pub trace_state: Option<String>,
    /// Its name.
    pub name: String,
    /// Its kind.
    pub kind: SpanKind,
    /// Start, in nanoseconds since the Unix epoch.
    pub start: u64,
    /// End, in nanoseconds since the Unix epoch.
    pub end: u64,
    /// Its attributes.
    pub attributes: Vec<(&'static str, Value)>,
    /// Whether it ended in error (status `ERROR`), with a message.
    pub error: Option<String>,
}

/// Who exports the spans (`Resource` and `InstrumentationScope`).
#[derive(Debug, Clone)]
pub struct Origin {
    /// `service.name`.
    pub service_name: String,
}

/// The body of one export: `ExportTraceServiceRequest { resource_spans = 1 }` with one
/// `ResourceSpans`, holding one `ScopeSpans` with `spans`.
pub fn export_request(origin: &Origin, spans: &[Span]) -> Vec<u8> {
    let mut resource = Vec::new();
    key_value(
        &mut resource,
        1,
        "service.name",
        &Value::Str(origin.service_name.clone()),
    );
    let mut scope = Vec::new();
    string(&mut scope, 1, env!("CARGO_PKG_NAME"));
    string(&mut scope, 2, env!("CARGO_PKG_VERSION"));
    let mut scope_spans = Vec::new();
    message(&mut scope_spans, 1, &scope);
    for span in spans {
        message(&mut scope_spans, 2, &encode_span(span));
    }
    let mut resource_spans = Vec::new();
    message(&mut resource_spans, 1, &resource);
    message(&mut resource_spans, 2, &scope_spans);
    let mut request = Vec::new();
    message(&mut request, 1, &resource_spans);
    request
}

/// `trace.v1.Span`.
fn encode_span(span: &Span) -> Vec<u8> {
    let mut out = Vec::with_capacity(256);
    bytes(&mut out, 1, &span.trace.0);
    bytes(&mut out, 2, &span.id.0);
    if let Some(state) = &span.trace_state {
        string(&mut out, 3, state);
    }
    if let Some(parent) = &span.parent {
        bytes(&mut out, 4, &parent.0);
    }
    string(&mut out, 5, &span.name);
    tag(&mut out, 6, 0);
    varint(&mut out, span.kind as u64);
    fixed64(&mut out, 7, span.start);
    fixed64(&mut out, 8, span.end.max(span.start));
    for (key, value) in &span.attributes {
        key_value(&mut out, 9, key, value);
    }
    // Status { message = 2; code = 3 } (STATUS_CODE_ERROR = 2); an unset status is left out.
    if let Some(message_text) = &span.error {
        let mut status = Vec::new();
        string(&mut status, 2, message_text);
        tag(&mut status, 3, 0);
        varint(&mut status, 2);
        message(&mut out, 15, &status);
    }
    out
}

/// `common.v1.KeyValue { key = 1; value = 2 }` as field `field`.
fn key_value(out: &mut Vec<u8>, field: u32, key: &str, value: &Value) {
    let mut any = Vec::new();
    match value {
        Value::Str(text) => string(&mut any, 1, text),
        Value::Int(n) => {
            tag(&mut any, 3, 0);
            // int64 is written as its two's complement, in ten bytes when negative.
            varint(&mut any, *n as u64);
        }
    }
    let mut pair = Vec::new();
    string(&mut pair, 1, key);
    message(&mut pair, 2, &any);
    message(out, field, &pair);
}

fn varint(out: &mut Vec<u8>, mut n: u64) {
    while n >= 0x80 {
        out.push((n as u8) | 0x80);
        n >>= 7;
    }
    out.push(n as u8);
}

fn tag(out: &mut Vec<u8>, field: u32, wire_type: u8) {
    varint(out, (u64::from(field) << 3) | u64::from(wire_type));
}

fn bytes(out: &mut Vec<u8>, field: u32, value: &[u8]) {
    tag(out, field, 2);
    varint(out, value.len() as u64);
    out.extend_from_slice(value);
}

fn string(out: &mut Vec<u8>, field: u32, value: &str) {
    bytes(out, field, value.as_bytes());
}

fn message(out: &mut Vec<u8>, field: u32, value: &[u8]) {
    bytes(out, field, value);
}

fn fixed64(out: &mut Vec<u8>, field: u32, value: u64) {
    tag(out, field, 1);
    out.extend_from_slice(&value.to_le_bytes());
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varints_are_little_endian_groups_of_seven_bits() {
        let mut out = Vec::new();
        varint(&mut out, 300);
        assert_eq!(out, [0xac, 0x02]);
        out.clear();
        varint(&mut out, (-1i64) as u64);
        assert_eq!(
            out,
            [0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01]
        );
    }

    /// The bytes of one small span, worked out by hand from opentelemetry-proto's field
    /// numbers (the integration test decodes real exports with the official bindings).
    #[test]
    fn a_span_is_encoded_as_opentelemetry_proto_says() {
        let span = Span {
            trace: TraceId([0x11; 16]),
            id: SpanId([0x22; 8]),
            parent: Some(SpanId([0x33; 8])),
            trace_state: None,
            name: "ab".into(),
            kind: SpanKind::Server,
            start: 1,
            end: 2,
            attributes: vec![("k", Value::Int(5))],
            error: Some("e".into()),
        };
        let mut expected = vec![0x0a, 16];
        expected.extend([0x11; 16]);
        expected.extend([0x12, 8]);
        expected.extend([0x22; 8]);
        expected.extend([0x22, 8]);
        expected.extend([0x33; 8]);
        expected.extend([0x2a, 2, b'a', b'b']);
        expected.extend([0x30, 2]);
        expected.extend([0x39, 1, 0, 0, 0, 0, 0, 0, 0]);
        expected.extend([0x41, 2, 0, 0, 0, 0, 0, 0, 0]);
        // attributes: KeyValue { key "k", value AnyValue { int_value 5 } }
        expected.extend([0x4a, 7, 0x0a, 1, b'k', 0x12, 2, 0x18, 5]);
        // status: Status { message "e", code ERROR }
        expected.extend([0x7a, 5, 0x12, 1, b'e', 0x18, 2]);
        assert_eq!(encode_span(&span), expected);
    }

    #[test]
    fn an_export_nests_resource_scope_and_spans() {
        let origin = Origin {
            service_name: "s".into(),
        };
        let body = export_request(&origin, &[]);
        // resource_spans (1) { resource (1) { attributes (1) { "service.name" = "s" } } ... }
        assert_eq!(body[0], 0x0a);
        let resource_spans = &body[2..];
        assert_eq!(resource_spans[0], 0x0a);
        let resource = &resource_spans[2..2 + usize::from(resource_spans[1])];
        let mut expected = Vec::new();
        key_value(&mut expected, 1, "service.name", &Value::Str("s".into()));
        assert_eq!(resource, expected.as_slice());
    }
}
