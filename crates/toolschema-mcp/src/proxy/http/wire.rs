//! What the HTTP side reads of a message beyond its `id` and `method`: the standard request
//! headers of MCP 2026-07-28 (`Mcp-Method`, `Mcp-Name`) and whether a request's headers agree
//! with its body, the progress token and the subscription a message belongs to. Pure functions
//! over the message text.

use crate::message::{self, member_at, meta_member, IdKey, Kind, Message, RequestId};
use toolschema::json::{self as core_json, DuplicateKeys};

/// The `_meta` key that ties a notification to its `subscriptions/listen` request.
pub const META_SUBSCRIPTION_ID: &str = "io.modelcontextprotocol/subscriptionId";

/// The standard request headers the proxy derives from each message it sends upstream
/// ([`standard_headers`]); a client's own never go on.
pub const DERIVED_HEADERS: &[&str] = &["mcp-method", "mcp-name"];

/// JSON-RPC error code of 2026-07-28 for headers that disagree with the body.
pub const HEADER_MISMATCH: i32 = -32020;

/// The sentinel around a Base64 header value (`=?base64?...?=`).
const BASE64_PREFIX: &str = "=?base64?";
const BASE64_SUFFIX: &str = "?=";

/// The string at `range`, if it is one.
fn string_at(text: &str, range: std::ops::Range<usize>) -> Option<String> {
    match core_json::parse_value_at(text, range, DuplicateKeys::KeepLast).ok()? {
        serde_json::Value::String(s) => Some(s),
        _ => None,
    }
}

/// The key of the progress token a message carries: a request's `params._meta.progressToken`,
/// or a progress notification's `params.progressToken`.
pub fn progress_token(text: &str, message: &Message) -> Option<IdKey> {
    let at = match &message.kind {
        Kind::Notification { method } if method == "notifications/progress" => {
            member_at(text, message.params.clone()?, "progressToken")?
        }
        Kind::Request { .. } => meta_member(text, message, "progressToken")?,
        _ => return None,
    };
    Some(RequestId::from_text(&text[at]).key().clone())
}

/// The key of the `subscriptions/listen` request a notification belongs to.
pub fn subscription(text: &str, message: &Message) -> Option<IdKey> {
    let at = meta_member(text, message, META_SUBSCRIPTION_ID)?;
    Some(RequestId::from_text(&text[at]).key().clone())
}

/// The parameter `Mcp-Name` carries for `method`, if any.
fn name_parameter(method: &str) -> Option<&'static str> {
    match method {
        "tools/call" | "prompts/get" => Some("name"),
        "resources/read" | "resources/subscribe" | "resources/unsubscribe" => Some("uri"),
        "tasks/get" | "tasks/update" | "tasks/cancel" => Some("taskId"),
        _ => None,
    }
}

/// The standard request headers of a request: `Mcp-Method`, and `Mcp-Name` where the method
/// names something (encoded for a header).
pub fn standard_headers(text: &str, message: &Message) -> Option<(String, Option<String>)> {
    let Kind::Request { method, .. } = &message.kind else {
        return None;
    };
    let name = name_parameter(method)
        .and_then(|key| member_at(text, message.params.clone()?, key))
        .and_then(|at| string_at(text, at))
        .map(|name| encode_header_value(&name));
    Some((method.clone(), name))
}

/// A value as an HTTP header value: as it is when it is visible ASCII without leading or
/// trailing blanks, otherwise Base64 in the `=?base64?...?=` sentinel.
pub fn encode_header_value(value: &str) -> String {
    use base64::Engine as _;
    let blank_edge = value.starts_with([' ', '\t']) || value.ends_with([' ', '\t']);
    let visible = value.chars().all(|c| (' '..='~').contains(&c));
    let looks_encoded = value.starts_with(BASE64_PREFIX) && value.ends_with(BASE64_SUFFIX);
    let plain = !blank_edge && visible && !looks_encoded;
    if plain {
        value.to_string()
    } else {
        let encoded = base64::engine::general_purpose::STANDARD.encode(value.as_bytes());
        format!("{BASE64_PREFIX}{encoded}{BASE64_SUFFIX}")
    }
}

/// A header value as the value it carries (Base64 in the sentinel decoded).
pub fn decode_header_value(value: &[u8]) -> Result<String, String> {
    use base64::Engine as _;
    let text = std::str::from_utf8(value).map_err(|_| "is not ASCII".to_string())?;
    if !text
        .bytes()
        .all(|b| b == b'\t' || (b' '..=b'~').contains(&b))
    {
        return Err("contains characters a header value may not".into());
    }
    match text
        .strip_prefix(BASE64_PREFIX)
        .and_then(|rest| rest.strip_suffix(BASE64_SUFFIX))
    {
        Some(encoded) => {
            let bytes = base64::engine::general_purpose::STANDARD
                .decode(encoded)
                .map_err(|e| format!("is not valid Base64: {e}"))?;
            String::from_utf8(bytes).map_err(|_| "is not UTF-8 once decoded".to_string())
        }
        None => Ok(text.to_string()),
    }
}

/// Check a 2026-07-28 request's standard headers against its body, as a server that reads the
/// body must (a load balancer may have routed or authorized it by its headers): the revision,
/// the method and the name. The error says what disagrees.
pub fn check_standard_headers(
    headers: &http::HeaderMap,
    text: &str,
    message: &Message,
    revision: &str,
) -> Result<(), String> {
    let header = |name: &str| headers.get(name).map(|v| v.as_bytes());
    match header("mcp-protocol-version") {
        None => return Err("the MCP-Protocol-Version header is missing".into()),
        Some(value) if value != revision.as_bytes() => {
            return Err(format!(
                "the MCP-Protocol-Version header '{}' does not match the request's protocol version '{revision}'",
                String::from_utf8_lossy(value)
            ))
        }
        Some(_) => {}
    }
    let Some((method, name)) = standard_headers(text, message) else {
        return Ok(());
    };
    match header("mcp-method") {
        None => return Err("the Mcp-Method header is missing".into()),
        Some(value) if value != method.as_bytes() => {
            return Err(format!(
                "the Mcp-Method header '{}' does not match the request's method '{method}'",
                String::from_utf8_lossy(value)
            ))
        }
        Some(_) => {}
    }
    let Some(expected) = name.map(|n| decode_header_value(n.as_bytes()).unwrap_or(n)) else {
        return Ok(());
    };
    match header("mcp-name").map(decode_header_value) {
        None => Err("the Mcp-Name header is missing".into()),
        Some(Err(why)) => Err(format!("the Mcp-Name header {why}")),
        Some(Ok(value)) if value != expected => Err(format!(
            "the Mcp-Name header '{value}' does not match the request's name '{expected}'"
        )),
        Some(Ok(_)) => Ok(()),
    }
}

/// A message from the upstream (an event's data, or a JSON body), on one line for the gate and
/// the client's stream; or why it is refused.
///
/// The data must be one JSON-RPC message (or batch) as it stands: SSE joins the `data:` lines of
/// an event with `\n`, and a line break inside a string is no JSON. Such data is refused, never
/// mended (replacing the break with anything would pass on a message the upstream did not send).
/// In valid JSON a raw line break can only be whitespace between tokens, so putting the message
/// on one line keeps its value.
pub fn upstream_message(data: Vec<u8>) -> Result<Vec<u8>, String> {
    let text = message::text_of(data).map_err(|(_, malformed)| malformed.to_string())?;
    message::read(&text).map_err(|malformed| malformed.to_string())?;
    Ok(one_line(text.into_bytes()))
}

/// A message's bytes on one line: raw line breaks become spaces (only for valid JSON, where
/// they are whitespace between tokens; see [`upstream_message`]).
fn one_line(mut data: Vec<u8>) -> Vec<u8> {
    for byte in &mut data {
        if *byte == b'\n' || *byte == b'\r' {
            *byte = b' ';
        }
    }
    data
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::message::{declared_revision, is_modern, read, Read};
    use proptest::prelude::*;

    fn message(text: &str) -> Message {
        match read(text).unwrap() {
            Read::One(message) => message,
            Read::Batch(_) => panic!("a batch"),
        }
    }

    fn headers(pairs: &[(&str, &str)]) -> http::HeaderMap {
        let mut map = http::HeaderMap::new();
        for (name, value) in pairs {
            map.append(
                http::HeaderName::from_bytes(name.as_bytes()).unwrap(),
                http::HeaderValue::from_str(value).unwrap(),
            );
        }
        map
    }

    const CALL: &str = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_weather","arguments":{},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","progressToken":"p-1"}}}"#;

    #[test]
    fn reads_the_revision_the_progress_token_and_the_standard_headers() {
        let call = message(CALL);
        assert_eq!(
            declared_revision(CALL, &call).as_deref(),
            Some("2026-07-28")
        );
        assert!(is_modern("2026-07-28") && !is_modern("2025-11-25"));
        assert_eq!(
            progress_token(CALL, &call),
            Some(RequestId::from_text("\"p-1\"").key().clone())
        );
        assert_eq!(
            standard_headers(CALL, &call),
            Some(("tools/call".into(), Some("get_weather".into())))
        );
        let progress = r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"p-1","progress":1}}"#;
        assert_eq!(
            progress_token(progress, &message(progress)),
            progress_token(CALL, &call)
        );
        let listed = r#"{"jsonrpc":"2.0","method":"notifications/tools/list_changed","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":7.0}}}"#;
        assert_eq!(
            subscription(listed, &message(listed)),
            Some(RequestId::from_text("7").key().clone())
        );
        let legacy = r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#;
        assert_eq!(declared_revision(legacy, &message(legacy)), None);
    }

    #[test]
    fn headers_must_agree_with_the_body() {
        let call = message(CALL);
        let good = headers(&[
            ("MCP-Protocol-Version", "2026-07-28"),
            ("Mcp-Method", "tools/call"),
            ("Mcp-Name", "get_weather"),
        ]);
        assert_eq!(
            check_standard_headers(&good, CALL, &call, "2026-07-28"),
            Ok(())
        );
        let encoded = headers(&[
            ("MCP-Protocol-Version", "2026-07-28"),
            ("Mcp-Method", "tools/call"),
            ("Mcp-Name", &encode_header_value("get_weather ")),
        ]);
        assert_eq!(
            check_standard_headers(&encoded, CALL, &call, "2026-07-28"),
            Err("the Mcp-Name header 'get_weather ' does not match the request's name 'get_weather'".into())
        );
        let other = headers(&[
            ("MCP-Protocol-Version", "2026-07-28"),
            ("Mcp-Method", "tools/call"),
            ("Mcp-Name", "delete_everything"),
        ]);
        assert_eq!(
            check_standard_headers(&other, CALL, &call, "2026-07-28"),
            Err("the Mcp-Name header 'delete_everything' does not match the request's name 'get_weather'".into())
        );
        let missing = headers(&[("MCP-Protocol-Version", "2026-07-28")]);
        assert_eq!(
            check_standard_headers(&missing, CALL, &call, "2026-07-28"),
            Err("the Mcp-Method header is missing".into())
        );
        assert_eq!(
            check_standard_headers(&headers(&[]), CALL, &call, "2026-07-28"),
            Err("the MCP-Protocol-Version header is missing".into())
        );
    }

    #[test]
    fn header_values_use_the_base64_sentinel_where_plain_text_cannot_go() {
        assert_eq!(encode_header_value("us-west1"), "us-west1");
        assert_eq!(
            encode_header_value("Hello, 世界"),
            "=?base64?SGVsbG8sIOS4lueVjA==?="
        );
        assert_eq!(encode_header_value(" padded "), "=?base64?IHBhZGRlZCA=?=");
        assert_eq!(
            encode_header_value("=?base64?literal?="),
            "=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?="
        );
        assert_eq!(
            decode_header_value(b"=?base64?bGluZTEKbGluZTI=?=").as_deref(),
            Ok("line1\nline2")
        );
        assert!(decode_header_value(b"=?base64?***?=").is_err());
    }

    #[test]
    fn line_breaks_between_tokens_become_spaces() {
        let text = b"{\r\n  \"id\": 1,\n  \"result\": {\"text\": \"a\\nb\"}\n}".to_vec();
        let line = one_line(text);
        assert!(!line.contains(&b'\n'));
        let value: serde_json::Value = serde_json::from_slice(&line).unwrap();
        assert_eq!(value["result"]["text"], "a\nb");
    }

    proptest! {
        /// Every string survives a header: encoded, then decoded, it is itself.
        #[test]
        fn header_values_round_trip(value in "\\PC{0,40}|[ -~]{0,40}") {
            let encoded = encode_header_value(&value);
            prop_assert!(http::HeaderValue::from_str(&encoded).is_ok());
            prop_assert_eq!(decode_header_value(encoded.as_bytes()), Ok(value));
        }

        /// Any JSON value, pretty-printed over many lines, reads the same on one line.
        #[test]
        fn one_line_keeps_the_value(value in proptest::arbitrary::any::<(String, Vec<u32>, bool)>()) {
            let value = serde_json::json!({"s": value.0, "n": value.1, "b": value.2});
            let pretty = serde_json::to_vec_pretty(&value).unwrap();
            let line = one_line(pretty);
            prop_assert!(!line.contains(&b'\n') && !line.contains(&b'\r'));
            prop_assert_eq!(serde_json::from_slice::<serde_json::Value>(&line).unwrap(), value);
        }
    }
}
