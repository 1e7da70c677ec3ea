//! What the HTTP side reads of a message beyond its `id` and `method`: the standard request
//! headers of MCP 2026-07-28 (`Mcp-Method`, `Mcp-Name`) and whether a request's headers agree
//! with its body, the progress token and the subscription a message belongs to. Pure functions
//! over the message text.

use toolschema::json::{self as core_json, DuplicateKeys};
use toolschema_gate::message::{self, member_at, meta_member, IdKey, Kind, Message, RequestId};

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

/// The prefix of the headers that mirror tool arguments (MCP 2026-07-28), in lower case.
pub const PARAM_PREFIX: &str = "mcp-param-";

/// An argument's value as an `Mcp-Param-*` header carries it (before encoding): a string as it
/// is, a boolean as `true` or `false`, an integer in decimal; nothing for any other value
/// (`null`, a fraction, an object), which MCP does not mirror.
pub fn argument_header_text(value: &serde_json::Value) -> Option<String> {
    match value {
        serde_json::Value::String(text) => Some(text.clone()),
        serde_json::Value::Bool(flag) => Some(flag.to_string()),
        serde_json::Value::Number(n) if n.is_i64() || n.is_u64() => Some(n.to_string()),
        _ => None,
    }
}

/// The `Mcp-Param-*` headers of a message for the upstream, as a server that reads the body
/// must see them: a 2026-07-28 `tools/call`'s mirrored arguments (`mirrored`, by tool name) are
/// compared with the client's headers, as that server compares them (an integer by its value),
/// and set from the body; the client's headers that name no mirrored argument go on as they
/// are (MCP: an intermediary forwards those it does not recognize). In any other message, where
/// no revision defines them, the client's are removed. The error says what disagrees: a header
/// missing for an argument given, given for an argument absent, or another value.
pub fn mirror_params<'a>(
    headers: &mut http::HeaderMap,
    text: &str,
    mirrored: impl FnOnce(&str) -> &'a [toolschema::tool::MirroredArgument],
) -> Result<(), String> {
    let names: Vec<http::HeaderName> = headers
        .keys()
        .filter(|name| name.as_str().starts_with(PARAM_PREFIX))
        .cloned()
        .collect();
    let mut sent = Vec::new();
    for name in names {
        for value in headers.get_all(&name) {
            sent.push((name.clone(), value.clone()));
        }
        headers.remove(&name);
    }
    let Ok(message::Read::One(message)) = message::read(text) else {
        return Ok(());
    };
    let is_call = matches!(&message.kind, Kind::Request { method, .. } if method == "tools/call");
    let modern = message::declared_revision(text, &message).is_some_and(|r| message::is_modern(&r));
    if !is_call || !modern {
        return Ok(());
    }
    let call = message::tool_call(text, &message);
    let Some(tool) = call.name.as_deref() else {
        return Ok(());
    };
    let declared = mirrored(tool);
    let arguments = match &call.arguments {
        Some(Ok(arguments)) => Some(arguments),
        _ => None,
    };
    let mut derived = Vec::new();
    for argument in declared {
        let name = format!("{PARAM_PREFIX}{}", argument.header.to_ascii_lowercase());
        let shown = format!("Mcp-Param-{}", argument.header);
        let value = arguments.and_then(|arguments| {
            argument
                .path
                .iter()
                .try_fold(arguments, |at, key| at.get(key))
        });
        let expected = value.and_then(argument_header_text);
        if expected.is_some() && call.lone_surrogates && value.is_some_and(|v| v.is_string()) {
            return Err(format!(
                "the arguments hold a lone surrogate escape, which the {shown} header cannot carry as the body does"
            ));
        }
        let given: Vec<&http::HeaderValue> = sent
            .iter()
            .filter(|(sent_name, _)| sent_name.as_str() == name)
            .map(|(_, value)| value)
            .collect();
        let place = argument.path.join(".");
        match (&expected, given.as_slice()) {
            (None, []) => {}
            (Some(_), []) => {
                return Err(format!(
                    "the {shown} header is missing for the argument '{place}'"
                ))
            }
            (None, [_, ..]) => {
                return Err(format!(
                    "the {shown} header is sent, but the call gives no argument '{place}' it could mirror"
                ))
            }
            (Some(expected), [value]) => {
                let value = decode_header_value(value.as_bytes())
                    .map_err(|why| format!("the {shown} header {why}"))?;
                let agrees = match value {
                    ref text if text == expected => true,
                    // An integer is compared by its value (`07` is `7`).
                    ref text => matches!(
                        (text.trim().parse::<i128>(), expected.parse::<i128>()),
                        (Ok(a), Ok(b)) if a == b
                    ),
                };
                if !agrees {
                    return Err(format!(
                        "the {shown} header '{value}' does not match the argument '{place}' ('{expected}')"
                    ));
                }
            }
            (Some(_), [_, _, ..]) => {
                return Err(format!("the {shown} header is sent more than once"))
            }
        }
        if let Some(expected) = expected {
            derived.push((name, encode_header_value(&expected)));
        }
    }
    for (name, value) in sent {
        let declared_here = derived.iter().any(|(derived, _)| *derived == name.as_str())
            || declared.iter().any(|a| {
                name.as_str() == format!("{PARAM_PREFIX}{}", a.header.to_ascii_lowercase())
            });
        if !declared_here {
            headers.append(name, value);
        }
    }
    for (name, value) in derived {
        if let (Ok(name), Ok(value)) = (
            http::HeaderName::from_bytes(name.as_bytes()),
            http::HeaderValue::from_str(&value),
        ) {
            headers.insert(name, value);
        }
    }
    Ok(())
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
    use proptest::prelude::*;
    use toolschema_gate::message::{declared_revision, is_modern, read, Read};

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

        /// For any arguments of a tool that mirrors three of them (a string, a boolean, a
        /// nested integer), headers a client derives from the body pass and go on as they came;
        /// one whose value differs, one missing for an argument given, and one for an argument
        /// not given are each refused.
        #[test]
        fn mirrored_headers_pass_exactly_when_they_agree_with_the_arguments(
            region in proptest::option::of("\\PC{0,20}"),
            dry in proptest::option::of(any::<bool>()),
            shard in proptest::option::of(any::<i64>()),
            break_one in 0usize..6,
        ) {
            let mirrored = vec![
                toolschema::tool::MirroredArgument { header: "Region".into(), path: vec!["region".into()] },
                toolschema::tool::MirroredArgument { header: "Dry".into(), path: vec!["dry".into()] },
                toolschema::tool::MirroredArgument { header: "Shard".into(), path: vec!["target".into(), "shard".into()] },
            ];
            let mut arguments = serde_json::Map::new();
            if let Some(region) = &region { arguments.insert("region".into(), region.clone().into()); }
            if let Some(dry) = dry { arguments.insert("dry".into(), dry.into()); }
            if let Some(shard) = shard { arguments.insert("target".into(), serde_json::json!({"shard": shard})); }
            let text = serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
                "name": "route", "arguments": arguments,
                "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}}}).to_string();
            let values = [
                ("mcp-param-region", region.clone()),
                ("mcp-param-dry", dry.map(|d| d.to_string())),
                ("mcp-param-shard", shard.map(|n| n.to_string())),
            ];
            let mut client = http::HeaderMap::new();
            for (name, value) in &values {
                if let Some(value) = value {
                    client.insert(*name, encode_header_value(value).parse().unwrap());
                }
            }
            let mut sent = client.clone();
            prop_assert_eq!(mirror_params(&mut sent, &text, |_| &mirrored), Ok(()));
            prop_assert_eq!(&sent, &client);
            // Break one header: another value where one is given, or one where none is.
            let (name, value) = &values[break_one % 3];
            let mut broken = client.clone();
            let wrong = match value {
                Some(value) if break_one < 3 => Some(format!("{value}x")),
                Some(_) => None,
                None => Some("1".to_string()),
            };
            match wrong {
                Some(wrong) => { broken.insert(*name, encode_header_value(&wrong).parse().unwrap()); }
                None => { broken.remove(*name); }
            }
            prop_assert!(mirror_params(&mut broken, &text, |_| &mirrored).is_err());
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
