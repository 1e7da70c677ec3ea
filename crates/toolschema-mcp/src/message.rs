//! Reading just enough of a JSON-RPC message to route it, and writing the few messages the
//! runtime originates.
//!
//! Messages are inspected without building a tree of their contents: only `id` and `method` are
//! kept, everything else is checked for syntax and skipped. The bytes of a message are never
//! rebuilt from this view; a forwarder passes on the line it read.

use rmcp::model::{CallToolResult, ContentBlock, ErrorCode, ServerResult};
use serde::de::IgnoredAny;
use serde::Deserialize;
use serde_json::{json, Value};
use std::fmt;

/// A request id as a map key: its JSON text, so `1` and `"1"` stay different ids.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct IdKey(String);

impl IdKey {
    /// The key of an id value.
    pub fn of(id: &Value) -> IdKey {
        IdKey(id.to_string())
    }
}

impl fmt::Display for IdKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// What a message is, as far as routing needs to know.
#[derive(Debug, Clone, PartialEq)]
pub enum Kind {
    /// A request: has a `method` and an `id`.
    Request {
        /// The request id.
        id: Value,
        /// The method.
        method: String,
    },
    /// A notification: a `method` without an `id`.
    Notification {
        /// The method.
        method: String,
    },
    /// A response: an `id` with `result` or `error`.
    Response {
        /// The id of the request answered.
        id: Value,
    },
    /// A JSON object that is none of these; passed on as it is.
    Other,
}

/// Why a line is not a message.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Malformed {
    /// Not valid JSON (or not UTF-8, or nested too deep).
    #[error("not valid JSON: {0}")]
    Json(String),
    /// A JSON array: a JSON-RPC batch, which MCP no longer allows.
    #[error("a JSON-RPC batch (JSON array); MCP messages are single JSON objects")]
    Batch,
    /// Valid JSON that is not an object.
    #[error("not a JSON object")]
    NotAnObject,
}

#[derive(Deserialize)]
struct Envelope {
    #[serde(default)]
    id: Option<Value>,
    #[serde(default)]
    method: Option<Value>,
    #[serde(default)]
    result: Option<IgnoredAny>,
    #[serde(default)]
    error: Option<IgnoredAny>,
}

/// Classify a line (already trimmed of `\r`) as a JSON-RPC message.
pub fn inspect(line: &[u8]) -> Result<Kind, Malformed> {
    let first = line
        .iter()
        .find(|b| !matches!(b, b' ' | b'\t' | b'\n' | b'\r'))
        .copied();
    if first != Some(b'{') {
        return Err(match serde_json::from_slice::<IgnoredAny>(line) {
            Err(e) => Malformed::Json(e.to_string()),
            Ok(_) if first == Some(b'[') => Malformed::Batch,
            Ok(_) => Malformed::NotAnObject,
        });
    }
    let envelope: Envelope =
        serde_json::from_slice(line).map_err(|e| Malformed::Json(e.to_string()))?;
    let id = envelope.id.filter(|id| !id.is_null());
    let method = match envelope.method {
        Some(Value::String(method)) => Some(method),
        _ => None,
    };
    Ok(match (method, id) {
        (Some(method), Some(id)) => Kind::Request { id, method },
        (Some(method), None) => Kind::Notification { method },
        (None, Some(id)) if envelope.result.is_some() || envelope.error.is_some() => {
            Kind::Response { id }
        }
        _ => Kind::Other,
    })
}

/// What the proxy needs of a `tools/call` request: the tool's name and the arguments.
#[derive(Debug, Default, PartialEq)]
pub struct ToolCall {
    /// `params.name`, when it is a string.
    pub name: Option<String>,
    /// `params.arguments`, as sent (`None` when absent).
    pub arguments: Option<Value>,
}

#[derive(Deserialize)]
struct CallEnvelope<P> {
    #[serde(default = "Option::default")]
    params: Option<P>,
}

/// `params` of a call, read from an object only (a derived struct would also take an array, by
/// position), so anything else falls back to the whole-value reading.
struct CallParams {
    name: Option<Value>,
    arguments: Option<Value>,
}

impl<'de> Deserialize<'de> for CallParams {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(field_identifier, rename_all = "lowercase")]
        enum Field {
            Name,
            Arguments,
            #[serde(other)]
            Other,
        }

        struct ParamsVisitor;

        impl<'de> serde::de::Visitor<'de> for ParamsVisitor {
            type Value = CallParams;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("tools/call params (an object)")
            }

            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut map: A,
            ) -> Result<CallParams, A::Error> {
                let mut params = CallParams {
                    name: None,
                    arguments: None,
                };
                while let Some(field) = map.next_key::<Field>()? {
                    match field {
                        Field::Name if params.name.is_none() => {
                            params.name = Some(map.next_value()?)
                        }
                        Field::Arguments if params.arguments.is_none() => {
                            params.arguments = Some(map.next_value()?);
                        }
                        Field::Name | Field::Arguments => {
                            return Err(serde::de::Error::custom("a key given twice"));
                        }
                        Field::Other => {
                            map.next_value::<IgnoredAny>()?;
                        }
                    }
                }
                Ok(params)
            }
        }

        deserializer.deserialize_map(ParamsVisitor)
    }
}

#[derive(Deserialize)]
struct CallName {
    #[serde(default)]
    name: Option<Value>,
}

fn string(value: Option<Value>) -> Option<String> {
    match value {
        Some(Value::String(name)) => Some(name),
        _ => None,
    }
}

/// Read the name and arguments of a `tools/call` request, building nothing else of it (the
/// arguments are the only part validation needs as a tree).
pub fn parse_call(line: &[u8]) -> Result<ToolCall, Malformed> {
    match serde_json::from_slice::<CallEnvelope<CallParams>>(line) {
        Ok(envelope) => Ok(envelope
            .params
            .map_or_else(ToolCall::default, |params| ToolCall {
                name: string(params.name),
                arguments: params.arguments,
            })),
        // Unusual shapes (`params` that is not an object, a key given twice) are read as a
        // whole value, the way any JSON reader would take them.
        Err(_) => {
            let mut request = parse(line)?;
            let mut params = request.get_mut("params").map(Value::take);
            Ok(ToolCall {
                name: string(
                    params
                        .as_mut()
                        .and_then(|p| p.get_mut("name"))
                        .map(Value::take),
                ),
                arguments: params
                    .as_mut()
                    .and_then(|p| p.get_mut("arguments"))
                    .map(Value::take),
            })
        }
    }
}

/// The tool a `tools/call` request names, read without building the rest of the message (which
/// may be nested too deep to build).
pub fn tool_name(line: &[u8]) -> Option<String> {
    let envelope: CallEnvelope<CallName> = serde_json::from_slice(line).ok()?;
    string(envelope.params?.name)
}

/// Parse a whole message as a JSON value (keys in their original order).
pub fn parse(line: &[u8]) -> Result<Value, Malformed> {
    serde_json::from_slice(line).map_err(|e| Malformed::Json(e.to_string()))
}

/// A JSON-RPC success response.
pub fn result_response(id: &Value, result: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "result": result})
}

/// A JSON-RPC error response.
pub fn error_response(id: &Value, code: ErrorCode, message: &str, data: Option<Value>) -> Value {
    let mut error = json!({"code": code.0, "message": message});
    if let (Some(data), Value::Object(map)) = (data, &mut error) {
        map.insert("data".into(), data);
    }
    json!({"jsonrpc": "2.0", "id": id, "error": error})
}

/// A `tools/call` result that reports a tool execution error the model can correct: one text
/// content block and `isError: true`, in the shape every protocol version up to 2025-11-25 uses
/// (without the `resultType` later versions add).
pub fn tool_error_result(text: String) -> Value {
    let mut result = ServerResult::CallToolResult(CallToolResult::error(vec![ContentBlock::text(
        text.clone(),
    )]));
    result.strip_result_type_for_legacy_peer();
    // Serializing the model cannot fail; if it ever did, write the same shape by hand.
    serde_json::to_value(&result)
        .unwrap_or_else(|_| json!({"content": [{"type": "text", "text": text}], "isError": true}))
}

/// A message as one line of JSON, newline included.
pub fn to_line(message: &Value) -> Vec<u8> {
    let mut bytes = serde_json::to_vec(message).unwrap_or_default();
    bytes.push(b'\n');
    bytes
}

/// Find the top-level `id` of a message from the two ends kept of an oversized line.
///
/// SDKs put `id` either first (`{"jsonrpc":"2.0","id":7,...`) or last (`...,"jsonrpc":"2.0",
/// "id":7}`). A scalar member just before the closing brace of the whole message is certainly at
/// the top level; at the start, members are read one by one while their values are scalars.
pub fn sniff_id(head: &[u8], tail: &[u8]) -> Option<Value> {
    sniff_id_at_end(tail).or_else(|| sniff_id_at_start(head))
}

fn sniff_id_at_end(tail: &[u8]) -> Option<Value> {
    let text = std::str::from_utf8(trim_end(tail)).ok()?;
    let body = text.strip_suffix('}')?.trim_end();
    // The value: a number or a string without escapes, scanning back from the end.
    let (value_start, value) = if let Some(inner) = body.strip_suffix('"') {
        let open = inner.rfind('"')?;
        if inner[..open].ends_with('\\') || inner[open + 1..].contains('\\') {
            return None;
        }
        (open, Value::String(inner[open + 1..].to_string()))
    } else {
        let start = body
            .rfind(|c: char| !(c.is_ascii_digit() || c == '-'))
            .map_or(0, |i| i + 1);
        let number: i64 = body[start..].parse().ok()?;
        (start, json!(number))
    };
    let before = body[..value_start].trim_end().strip_suffix(':')?.trim_end();
    let key = before.strip_suffix("\"id\"")?;
    let separator = key.trim_end();
    (separator.ends_with(',') || separator.ends_with('{')).then_some(value)
}

fn sniff_id_at_start(head: &[u8]) -> Option<Value> {
    let text = std::str::from_utf8(head)
        .or_else(|e| std::str::from_utf8(&head[..e.valid_up_to()]))
        .ok()?;
    let mut rest = text.trim_start().strip_prefix('{')?;
    loop {
        rest = rest.trim_start();
        let mut stream = serde_json::Deserializer::from_str(rest).into_iter::<String>();
        let key = stream.next()?.ok()?;
        rest = rest[stream.byte_offset()..]
            .trim_start()
            .strip_prefix(':')?;
        let mut stream = serde_json::Deserializer::from_str(rest).into_iter::<Value>();
        let value = match rest.trim_start().as_bytes().first()? {
            b'{' | b'[' => return None,
            _ => stream.next()?.ok()?,
        };
        if key == "id" {
            return (value.is_string() || value.is_i64() || value.is_u64()).then_some(value);
        }
        rest = rest[stream.byte_offset()..]
            .trim_start()
            .strip_prefix(',')?;
    }
}

fn trim_end(bytes: &[u8]) -> &[u8] {
    let end = bytes
        .iter()
        .rposition(|b| !b.is_ascii_whitespace())
        .map_or(0, |i| i + 1);
    &bytes[..end]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classifies_messages() {
        assert_eq!(
            inspect(br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{}}"#),
            Ok(Kind::Request {
                id: json!(1),
                method: "tools/call".into()
            })
        );
        assert_eq!(
            inspect(br#"{"method":"notifications/progress","jsonrpc":"2.0"}"#),
            Ok(Kind::Notification {
                method: "notifications/progress".into()
            })
        );
        assert_eq!(
            inspect(br#"{"result":{},"jsonrpc":"2.0","id":"a"}"#),
            Ok(Kind::Response { id: json!("a") })
        );
        assert_eq!(
            inspect(br#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700}}"#),
            Ok(Kind::Other)
        );
        assert_eq!(inspect(br#"{"x":1}"#), Ok(Kind::Other));
    }

    #[test]
    fn reports_what_is_malformed() {
        assert_eq!(inspect(b"[1,2]"), Err(Malformed::Batch));
        assert_eq!(inspect(b"42"), Err(Malformed::NotAnObject));
        assert_eq!(
            inspect(b"{\"id\": 1,"),
            Err(Malformed::Json(
                "EOF while parsing a value at line 1 column 9".into()
            ))
        );
        assert_eq!(
            inspect(b"Server started"),
            Err(Malformed::Json("expected value at line 1 column 1".into()))
        );
        // Inspection does not recurse, so deep messages pass through; a full parse refuses them.
        let deep = format!(
            "{{\"id\":1,\"method\":\"x\",\"params\":{}1{}}}",
            "[".repeat(200),
            "]".repeat(200)
        );
        assert!(inspect(deep.as_bytes()).is_ok());
        assert!(
            matches!(parse(deep.as_bytes()), Err(Malformed::Json(m)) if m.contains("recursion limit"))
        );
    }

    #[test]
    fn reads_the_name_and_arguments_of_a_call() {
        let call = |line: &str| parse_call(line.as_bytes());
        assert_eq!(
            call(
                r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"_meta":{"progressToken":1},"name":"echo","arguments":{"m":"x"}}}"#
            ),
            Ok(ToolCall {
                name: Some("echo".into()),
                arguments: Some(json!({"m": "x"}))
            })
        );
        assert_eq!(
            call(r#"{"method":"tools/call","params":{"name":"echo"},"id":1}"#),
            Ok(ToolCall {
                name: Some("echo".into()),
                arguments: None
            })
        );
        // What a whole-value reader makes of unusual shapes: the last of two keys, no name.
        assert_eq!(
            call(
                r#"{"method":"tools/call","params":{"name":"a","name":"b","arguments":1},"id":1}"#
            ),
            Ok(ToolCall {
                name: Some("b".into()),
                arguments: Some(json!(1))
            })
        );
        assert_eq!(
            call(r#"{"method":"tools/call","params":[1,2],"id":1}"#),
            Ok(ToolCall::default())
        );
        assert_eq!(
            call(r#"{"method":"tools/call","params":{"name":7},"id":1}"#),
            Ok(ToolCall::default())
        );
        let deep = format!(
            r#"{{"id":1,"method":"tools/call","params":{{"name":"s","arguments":{{"q":{}1{}}}}}}}"#,
            "[".repeat(200),
            "]".repeat(200)
        );
        assert!(matches!(call(&deep), Err(Malformed::Json(m)) if m.contains("recursion limit")));
        assert_eq!(tool_name(deep.as_bytes()), Some("s".into()));
    }

    #[test]
    fn ids_keep_their_type_as_keys() {
        assert_ne!(IdKey::of(&json!(1)), IdKey::of(&json!("1")));
        assert_eq!(IdKey::of(&json!("1")).to_string(), "\"1\"");
    }

    #[test]
    fn sniffs_ids_from_either_end() {
        let tail = br#"aaaa"}},"jsonrpc":"2.0","id":42}"#;
        assert_eq!(
            sniff_id(b"{\"method\":\"tools/call\",\"params\":{", tail),
            Some(json!(42))
        );
        assert_eq!(sniff_id(b"", br#"x","id":"req-7"}"#), Some(json!("req-7")));
        let head =
            br#"{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"arguments":{"x":"zzzz"#;
        assert_eq!(sniff_id(head, b"zzzz\"}}}"), Some(json!(9)));
        // An `id` inside params is not the message's id.
        assert_eq!(
            sniff_id(br#"{"method":"x","params":{"id":3,"#, br#"zz"}}"#),
            None
        );
        assert_eq!(sniff_id(b"", br#"{"a":{"id":5}}"#), None);
    }

    #[test]
    fn tool_errors_have_the_mcp_shape() {
        assert_eq!(
            tool_error_result("missing required argument 'q'".into()),
            json!({"content": [{"type": "text", "text": "missing required argument 'q'"}], "isError": true})
        );
        assert_eq!(
            error_response(&json!(3), ErrorCode::INVALID_PARAMS, "bad", None),
            json!({"jsonrpc": "2.0", "id": 3, "error": {"code": -32602, "message": "bad"}})
        );
    }
}
