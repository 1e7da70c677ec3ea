//! W3C trace context: the `traceparent` a request carries (in `params._meta`, or an HTTP
//! header), the ids of new traces and spans, and the `traceparent` written into a request the
//! proxy forwards so that the server's spans join the trace.

use std::collections::hash_map::RandomState;
use std::hash::{BuildHasher, Hasher};
use std::ops::Range;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;
use toolschema::json as core_json;
use toolschema_gate::message::{member_at, Message};

/// The `_meta` key (and HTTP header) of the W3C trace context.
pub const TRACEPARENT: &str = "traceparent";

/// A trace id: 16 bytes, never all zero.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct TraceId(pub [u8; 16]);

/// A span id: 8 bytes, never all zero.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct SpanId(pub [u8; 8]);

impl std::fmt::Display for TraceId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&hex(&self.0))
    }
}

impl std::fmt::Display for SpanId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&hex(&self.0))
    }
}

fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write;
    let mut out = String::with_capacity(bytes.len() * 2);
    for byte in bytes {
        let _ = write!(out, "{byte:02x}");
    }
    out
}

/// The parent a request names: its trace, the caller's span, whether the caller samples it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Parent {
    /// The trace the request belongs to.
    pub trace: TraceId,
    /// The caller's span.
    pub span: SpanId,
    /// The `sampled` flag: the caller records this trace.
    pub sampled: bool,
}

/// Read a `traceparent` strictly (W3C Trace Context, version `00`; a later version is read by
/// its first four fields, as the recommendation says). Anything else is `None`: the request
/// then starts a new trace, and the client is never told.
pub fn parse_traceparent(text: &str) -> Option<Parent> {
    let bytes = text.as_bytes();
    // version "-" trace-id "-" parent-id "-" flags: 2 + 1 + 32 + 1 + 16 + 1 + 2.
    if bytes.len() < 55 {
        return None;
    }
    let lower_hex = |range: Range<usize>| {
        bytes[range]
            .iter()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(b))
    };
    if !lower_hex(0..2) || &text[0..2] == "ff" {
        return None;
    }
    if bytes[2] != b'-' || bytes[35] != b'-' || bytes[52] != b'-' {
        return None;
    }
    if !lower_hex(3..35) || !lower_hex(36..52) || !lower_hex(53..55) {
        return None;
    }
    match &text[0..2] {
        "00" if bytes.len() != 55 => return None,
        "00" => {}
        // A later version may append fields, after a dash.
        _ if bytes.len() > 55 && bytes[55] != b'-' => return None,
        _ => {}
    }
    let mut trace = [0u8; 16];
    let mut span = [0u8; 8];
    decode_hex(&text[3..35], &mut trace)?;
    decode_hex(&text[36..52], &mut span)?;
    let mut flags = [0u8; 1];
    decode_hex(&text[53..55], &mut flags)?;
    if trace == [0; 16] || span == [0; 8] {
        return None;
    }
    Some(Parent {
        trace: TraceId(trace),
        span: SpanId(span),
        sampled: flags[0] & 1 == 1,
    })
}

fn decode_hex(text: &str, out: &mut [u8]) -> Option<()> {
    for (i, byte) in out.iter_mut().enumerate() {
        *byte = u8::from_str_radix(text.get(i * 2..i * 2 + 2)?, 16).ok()?;
    }
    Some(())
}

/// The `traceparent` naming `span` of `trace` as the parent.
pub fn format_traceparent(trace: TraceId, span: SpanId, sampled: bool) -> String {
    format!("00-{trace}-{span}-{}", if sampled { "01" } else { "00" })
}

/// 64 unpredictable bits: SipHash, keyed at random by the standard library, over a counter.
/// Trace ids need to be unique, not secret, so no random-number crate is pulled in.
fn random_u64() -> u64 {
    static KEYS: OnceLock<RandomState> = OnceLock::new();
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let mut hasher = KEYS.get_or_init(RandomState::new).build_hasher();
    hasher.write_u64(COUNTER.fetch_add(1, Ordering::Relaxed));
    hasher.finish()
}

impl TraceId {
    /// A new trace.
    pub fn random() -> TraceId {
        let mut id = [0u8; 16];
        id[..8].copy_from_slice(&random_u64().to_be_bytes());
        id[8..].copy_from_slice(&random_u64().to_be_bytes());
        if id == [0; 16] {
            id[15] = 1;
        }
        TraceId(id)
    }
}

impl SpanId {
    /// A new span.
    pub fn random() -> SpanId {
        let id = random_u64().max(1);
        SpanId(id.to_be_bytes())
    }
}

/// The parent named by `params._meta.traceparent` of a request, if it is a valid one.
pub fn meta_parent(text: &str, message: &Message) -> Option<Parent> {
    let meta = member_at(text, message.params.clone()?, "_meta")?;
    let at = member_at(text, meta, TRACEPARENT)?;
    match core_json::parse(&text[at]).ok()? {
        serde_json::Value::String(value) => parse_traceparent(&value),
        _ => None,
    }
}

/// `text` (a request) with `params._meta.traceparent` set to `traceparent`; every other byte
/// as it was (the proxy forwards what it read). `None` when the request has no `params`
/// object, or its `_meta` is not an object: it is then forwarded as it is.
pub fn with_traceparent(text: &str, message: &Message, traceparent: &str) -> Option<String> {
    let params = message.params.clone()?;
    let members = core_json::object_members(text, params.clone()).ok()??;
    let member = format!("\"{TRACEPARENT}\":\"{traceparent}\"");
    let (at, insert) = match toolschema_gate::message::member(&members, "_meta") {
        Some(meta) => {
            let meta_members = core_json::object_members(text, meta.clone()).ok()??;
            match toolschema_gate::message::member(&meta_members, TRACEPARENT) {
                // Replace the value; a reader takes the last of a key given twice, this one.
                Some(value) => (value, format!("\"{traceparent}\"")),
                None => opening(meta, meta_members.is_empty(), member),
            }
        }
        None => opening(
            params,
            members.is_empty(),
            format!("\"_meta\":{{{member}}}"),
        ),
    };
    let mut out = String::with_capacity(text.len() + insert.len());
    out.push_str(&text[..at.start]);
    out.push_str(&insert);
    out.push_str(&text[at.end..]);
    Some(out)
}

/// Where to put a first member into the object at `object`, and what.
fn opening(object: Range<usize>, empty: bool, member: String) -> (Range<usize>, String) {
    let after_brace = object.start + 1;
    let insert = if empty { member } else { format!("{member},") };
    (after_brace..after_brace, insert)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn message(text: &str) -> Message {
        toolschema_gate::message::read_object(text, 0..text.len()).unwrap()
    }

    const VALID: &str = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

    #[test]
    fn a_valid_traceparent_is_read() {
        let parent = parse_traceparent(VALID).unwrap();
        assert_eq!(parent.trace.to_string(), "4bf92f3577b34da6a3ce929d0e0e4736");
        assert_eq!(parent.span.to_string(), "00f067aa0ba902b7");
        assert!(parent.sampled);
        assert_eq!(
            format_traceparent(parent.trace, parent.span, true),
            VALID.to_string()
        );
    }

    #[test]
    fn malformed_traceparents_are_refused() {
        for bad in [
            "",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-1",
            "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",
            "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",
            "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra",
            "00_4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e473g-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01\u{e9}",
        ] {
            assert_eq!(parse_traceparent(bad), None, "{bad:?}");
        }
        // A later version may carry more fields.
        assert!(parse_traceparent(&format!("01{}-more", &VALID[2..])).is_some());
    }

    #[test]
    fn the_traceparent_goes_into_params_meta_and_nothing_else_changes() {
        let tp = "00-11111111111111111111111111111111-2222222222222222-01";
        let cases = [
            (
                r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a","arguments":{"n":1e400}}}"#,
                r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"_meta":{"traceparent":"TP"},"name":"a","arguments":{"n":1e400}}}"#,
            ),
            (
                r#"{"id":1,"method":"m","params":{}}"#,
                r#"{"id":1,"method":"m","params":{"_meta":{"traceparent":"TP"}}}"#,
            ),
            (
                r#"{"id":1,"method":"m","params":{"_meta":{ }}}"#,
                r#"{"id":1,"method":"m","params":{"_meta":{"traceparent":"TP" }}}"#,
            ),
            (
                r#"{"id":1,"method":"m","params":{"_meta":{"k":"\ud800"}}}"#,
                r#"{"id":1,"method":"m","params":{"_meta":{"traceparent":"TP","k":"\ud800"}}}"#,
            ),
            (
                r#"{"id":1,"method":"m","params":{"_meta":{"traceparent":"x","tracestate":"a=b"}}}"#,
                r#"{"id":1,"method":"m","params":{"_meta":{"traceparent":"TP","tracestate":"a=b"}}}"#,
            ),
        ];
        for (before, after) in cases {
            let out = with_traceparent(before, &message(before), tp).unwrap();
            assert_eq!(out, after.replace("TP", tp), "{before}");
            assert_eq!(
                meta_parent(&out, &message(&out)).unwrap().trace.0,
                [0x11; 16]
            );
        }
        for untouched in [
            r#"{"id":1,"method":"m"}"#,
            r#"{"id":1,"method":"m","params":[1]}"#,
            r#"{"id":1,"method":"m","params":{"_meta":null}}"#,
        ] {
            assert_eq!(with_traceparent(untouched, &message(untouched), tp), None);
        }
    }

    /// Values a hostile client may put anywhere: numbers no float holds, lone surrogates,
    /// escapes, nesting, odd whitespace.
    fn value() -> impl proptest::strategy::Strategy<Value = String> {
        use proptest::prelude::*;
        let leaf = prop_oneof![
            Just("1e400".to_string()),
            Just("123456789012345678901234567890".to_string()),
            Just("-0.0".to_string()),
            Just(r#""\ud800""#.to_string()),
            Just(r#""a\"b\u0000""#.to_string()),
            Just("null".to_string()),
            Just("{ }".to_string()),
            Just("[ 1 ,2 ]".to_string()),
            "[a-z]{0,5}".prop_map(|s| format!("\"{s}\"")),
        ];
        leaf.prop_recursive(2, 8, 3, |inner| {
            proptest::collection::vec(("[a-z_]{1,3}", inner), 0..3).prop_map(|members| {
                let body: Vec<String> = members
                    .iter()
                    .map(|(k, v)| format!("\"{k}\" : {v}"))
                    .collect();
                format!("{{ {} }}", body.join(" , "))
            })
        })
    }

    /// A `params` object: some members, maybe a `_meta` object (maybe with a traceparent).
    fn params() -> impl proptest::strategy::Strategy<Value = String> {
        use proptest::prelude::*;
        let meta = prop_oneof![
            Just(None),
            proptest::collection::vec(("[a-z]{1,3}", value()), 0..3).prop_map(Some),
        ];
        let old = prop_oneof![Just(None), Just(Some(r#""x""#)), Just(Some("7"))];
        (
            proptest::collection::vec(("[a-z]{1,3}", value()), 0..4),
            meta,
            old,
            0..5usize,
        )
            .prop_map(|(members, meta, old, at)| {
                let mut all: Vec<String> = members
                    .iter()
                    .map(|(k, v)| format!("\"{k}\":{v}"))
                    .collect();
                if let Some(mut meta) = meta {
                    let mut inner: Vec<String> = meta
                        .drain(..)
                        .map(|(k, v)| format!("\"{k}\": {v}"))
                        .collect();
                    if let Some(old) = old {
                        inner.push(format!("\"traceparent\":{old}"));
                    }
                    let at = at.min(all.len());
                    all.insert(at, format!("\"_meta\" :{{{}}}", inner.join(",")));
                }
                format!("{{{}}}", all.join(","))
            })
    }

    proptest::proptest! {
        /// The traceparent is set, and every other byte of the message is as it was: the
        /// text differs only where the member was inserted, or the old value replaced.
        #[test]
        fn only_the_traceparent_changes(params in params()) {
            let tp = "00-11111111111111111111111111111111-2222222222222222-01";
            let text = format!(r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{params}}}"#);
            let out = with_traceparent(&text, &message(&text), tp).unwrap();
            let parent = meta_parent(&out, &message(&out)).unwrap();
            proptest::prop_assert_eq!(parent.trace.0, [0x11; 16]);
            let prefix = text.bytes().zip(out.bytes()).take_while(|(a, b)| a == b).count();
            let suffix = text.bytes().rev().zip(out.bytes().rev())
                .take_while(|(a, b)| a == b).count().min(text.len() - prefix);
            let removed = &text[prefix..text.len() - suffix];
            proptest::prop_assert!(
                removed.is_empty() || removed == "\"x\"" || removed == "7" || removed == "x" ,
                "changed {:?} in {}", removed, text
            );
            proptest::prop_assert!(out.len() > text.len() - removed.len());
            // The message still parses, as every reader reads it.
            proptest::prop_assert!(toolschema_gate::message::parse(&out).is_ok());
        }

        /// Any text is read without a panic; what is read is a valid trace context, written
        /// back as the same text (for version 00).
        #[test]
        fn traceparents_are_read_strictly(text in "(00|01|ff|0g)-[0-9a-fA-F]{30,33}-[0-9a-f]{15,17}-[0-9a-f]{1,3}|.{0,60}") {
            if let Some(parent) = parse_traceparent(&text) {
                proptest::prop_assert_ne!(parent.trace.0, [0; 16]);
                proptest::prop_assert_ne!(parent.span.0, [0; 8]);
                if text.starts_with("00") {
                    let again = format_traceparent(parent.trace, parent.span, parent.sampled);
                    proptest::prop_assert_eq!(&again[..53], &text[..53]);
                    proptest::prop_assert_eq!(text.len(), 55);
                    let flags = u8::from_str_radix(&text[53..], 16).unwrap();
                    proptest::prop_assert_eq!(parent.sampled, flags & 1 == 1);
                }
            }
        }
    }

    #[test]
    fn new_ids_differ_and_are_never_zero() {
        let a = TraceId::random();
        let b = TraceId::random();
        assert_ne!(a, b);
        assert_ne!(a.0, [0; 16]);
        assert_ne!(SpanId::random().0, [0; 8]);
    }
}
