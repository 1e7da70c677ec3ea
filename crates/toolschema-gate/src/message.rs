//! Reading just enough of a JSON-RPC message to route it, and writing the few messages the
//! runtime originates.
//!
//! Messages are read with the core's JSON reader, which takes everything the grammar allows (a
//! lone surrogate, a number beyond 64 bits, a byte order mark), without building a tree of their
//! contents: only the top-level members are located, and only `id` and `method` are read. The
//! bytes of a message are never rebuilt from this view; a forwarder passes on the text it read.
//!
//! Request ids are matched by their JSON value (`3`, `3.0` and `30e-1` are one id; `1` and `"1"`
//! are two) and answered with the exact text the client sent ([`RequestId`]).

use serde_json::{json, Value};
use std::fmt;
use std::ops::Range;
use toolschema::json::{self as core_json, DuplicateKeys, SyntaxError};

/// A request id as a map key: ids equal as JSON values have equal keys (`3`, `3.0`, `30e-1`;
/// `"a"` and `"\u0061"`), ids of different types never do (`1` and `"1"`).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct IdKey(String);

impl IdKey {
    /// The key of an id value.
    pub fn of(id: &Value) -> IdKey {
        IdKey::of_text(&id.to_string())
    }

    /// The key of an id given as JSON text (any JSON value).
    fn of_text(text: &str) -> IdKey {
        let trimmed = text.trim();
        match trimmed.as_bytes().first() {
            Some(b'-' | b'0'..=b'9') => IdKey(format!("n:{}", canonical_number(trimmed))),
            _ => match core_json::parse_with(trimmed, DuplicateKeys::KeepLast) {
                Ok(Value::String(s)) => IdKey(format!("s:{s}")),
                Ok(other) => IdKey(format!("v:{other}")),
                Err(_) => IdKey(format!("t:{trimmed}")),
            },
        }
    }
}

impl IdKey {
    /// The key of a client's JSON-RPC batch, the `n`-th of its session: no request id has it,
    /// so a batch's stream is never taken for a request's.
    pub fn of_batch(n: u64) -> IdKey {
        IdKey(format!("batch:{n}"))
    }

    /// A key no request id and no stream has: for an answer given at once on a stream that is
    /// no one else's.
    pub fn unrouted() -> IdKey {
        IdKey("unrouted".into())
    }
}

impl fmt::Display for IdKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// A JSON number as sign, significant digits and exponent, so that equal values read alike
/// (`3.0` is `3`, `-0` is `0`), exactly, at any size.
fn canonical_number(text: &str) -> String {
    let (negative, rest) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text),
    };
    let (mantissa, exponent) = match rest.find(['e', 'E']) {
        Some(at) => (&rest[..at], &rest[at + 1..]),
        None => (rest, "0"),
    };
    let (whole, fraction) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    let Ok(exponent) = exponent.trim_start_matches('+').parse::<i128>() else {
        // An exponent beyond 38 digits: the text itself is the key.
        return text.to_string();
    };
    let digits: String = whole.chars().chain(fraction.chars()).collect();
    let exponent = exponent - fraction.len() as i128;
    let significant = digits.trim_start_matches('0');
    let trimmed = significant.trim_end_matches('0');
    if trimmed.is_empty() {
        return "0".to_string();
    }
    let exponent = exponent + (significant.len() - trimmed.len()) as i128;
    format!("{}{trimmed}e{exponent}", if negative { "-" } else { "" })
}

/// A request id: the exact JSON text the client sent, and its key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RequestId {
    raw: String,
    key: IdKey,
}

impl RequestId {
    /// An id from its JSON text (which must be one JSON value).
    pub fn from_text(raw: &str) -> RequestId {
        RequestId {
            raw: raw.trim().to_string(),
            key: IdKey::of_text(raw),
        }
    }

    /// An id from a value (the proxy's own ids).
    pub fn from_value(value: &Value) -> RequestId {
        RequestId::from_text(&value.to_string())
    }

    /// The id exactly as sent.
    pub fn raw(&self) -> &str {
        &self.raw
    }

    /// The id's key.
    pub fn key(&self) -> &IdKey {
        &self.key
    }

    /// The id as a value (a number beyond 64 bits becomes a float).
    pub fn to_value(&self) -> Value {
        core_json::parse_with(&self.raw, DuplicateKeys::KeepLast).unwrap_or(Value::Null)
    }
}

impl fmt::Display for RequestId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.raw)
    }
}

/// What a message is, as far as routing needs to know.
#[derive(Debug, Clone, PartialEq)]
pub enum Kind {
    /// A request: has a `method` and an `id`.
    Request {
        /// The request id.
        id: RequestId,
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
        id: RequestId,
        /// Where the id is in the text.
        id_at: Range<usize>,
    },
    /// A JSON object that is none of these; passed on as it is.
    Other,
}

/// A message located in its text: what it is, and where its members are.
#[derive(Debug, Clone, PartialEq)]
pub struct Message {
    /// What it is.
    pub kind: Kind,
    /// Where `params` is, if present.
    pub params: Option<Range<usize>>,
    /// Where `result` is, if present.
    pub result: Option<Range<usize>>,
    /// Where `error` is, if present.
    pub error: Option<Range<usize>>,
}

/// A line read from the wire.
#[derive(Debug, Clone, PartialEq)]
pub enum Read {
    /// One message.
    One(Message),
    /// A JSON-RPC batch: where each element is (each may or may not be a message).
    Batch(Vec<Range<usize>>),
}

/// Why a line is not a message.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Malformed {
    /// Not valid JSON (or not UTF-8, or nested too deep to build where it must be built).
    #[error("not valid JSON: {0}")]
    Json(String),
    /// Valid JSON that is not an object (nor, on a line, an array).
    #[error("not a JSON object")]
    NotAnObject,
}

impl Malformed {
    fn syntax(text: &str, error: SyntaxError) -> Malformed {
        let column = core_json::position_of(text, error.offset).column;
        Malformed::Json(format!("{} at column {column}", error.message))
    }
}

/// The text of a line, or why it is not a message.
pub fn text_of(line: Vec<u8>) -> Result<String, (Vec<u8>, Malformed)> {
    String::from_utf8(line).map_err(|e| {
        let at = e.utf8_error().valid_up_to();
        (
            e.into_bytes(),
            Malformed::Json(format!("not UTF-8 (at byte {at})")),
        )
    })
}

/// Read a line: one message, or a batch.
pub fn read(text: &str) -> Result<Read, Malformed> {
    // One pass over a message, the common case.
    if let Some(members) = core_json::root_members(text).map_err(|e| Malformed::syntax(text, e))? {
        return Ok(Read::One(message_of(text, &members)));
    }
    let range = core_json::value_range(text).map_err(|e| Malformed::syntax(text, e))?;
    match text.as_bytes().get(range.start) {
        Some(b'[') => {
            let elements = core_json::array_elements(text, range)
                .map_err(|e| Malformed::syntax(text, e))?
                .unwrap_or_default();
            Ok(Read::Batch(elements))
        }
        _ => Err(Malformed::NotAnObject),
    }
}

/// Read the message at `range` of `text` (a line, or an element of a batch).
pub fn read_object(text: &str, range: Range<usize>) -> Result<Message, Malformed> {
    let members = core_json::object_members(text, range)
        .map_err(|e| Malformed::syntax(text, e))?
        .ok_or(Malformed::NotAnObject)?;
    Ok(message_of(text, &members))
}

/// What the members of a message say it is.
fn message_of(text: &str, members: &[core_json::Member]) -> Message {
    let find = |key: &str| member(members, key);
    let id_at = find("id").filter(|at| &text[at.clone()] != "null");
    let method = match find("method") {
        Some(at) => match core_json::parse_value_at(text, at, DuplicateKeys::KeepLast) {
            Ok(Value::String(method)) => Some(method),
            _ => None,
        },
        None => None,
    };
    let (params, result, error) = (find("params"), find("result"), find("error"));
    let kind = match (method, id_at) {
        (Some(method), Some(at)) => Kind::Request {
            id: RequestId::from_text(&text[at]),
            method,
        },
        (Some(method), None) => Kind::Notification { method },
        (None, Some(at)) if result.is_some() || error.is_some() => Kind::Response {
            id: RequestId::from_text(&text[at.clone()]),
            id_at: at,
        },
        _ => Kind::Other,
    };
    Message {
        kind,
        params,
        result,
        error,
    }
}

/// Where the member `key` of an object is. Of a key given twice the last counts, as a
/// server's own reader takes it.
pub fn member(members: &[core_json::Member], key: &str) -> Option<Range<usize>> {
    members
        .iter()
        .rev()
        .find(|m| m.key == key)
        .map(|m| m.value.clone())
}

/// The tools of a `tools/list` result (at `result` in `text`) whose definitions hold a value
/// that reading changes ([`core_json::first_lossy_value`]: a lone surrogate escape read as
/// U+FFFD, a number read as another), by their place in the page, with one such value of each:
/// its first lone surrogate escape if it holds one (no writing gives that back, whatever comes
/// before it), or else its first changed number. A pin of what was read cannot tell such a
/// definition from another read alike.
pub fn lossy_tools(text: &str, result: Range<usize>) -> Vec<(usize, core_json::Loss)> {
    // The whole result is looked at first, without reading its members: most hold none.
    if core_json::first_lossy_value(&text[result.clone()]).is_none() {
        return Vec::new();
    }
    let Some(tools) = core_json::object_members(text, result)
        .ok()
        .flatten()
        .and_then(|members| member(&members, "tools"))
    else {
        return Vec::new();
    };
    let Ok(Some(elements)) = core_json::array_elements(text, tools) else {
        return Vec::new();
    };
    elements
        .into_iter()
        .enumerate()
        .filter_map(|(at, range)| {
            let tool = &text[range];
            let first = core_json::first_lossy_value(tool)?;
            let loss = match first.loss {
                core_json::Loss::LoneSurrogate { .. } => first.loss,
                number => core_json::first_lone_surrogate(&tool[first.offset..]).unwrap_or(number),
            };
            Some((at, loss))
        })
        .collect()
}

/// [`lossy_tools`] of the result of the response `text`.
pub fn lossy_tools_of_response(text: &str) -> Vec<(usize, core_json::Loss)> {
    core_json::root_members(text)
        .ok()
        .flatten()
        .and_then(|members| member(&members, "result"))
        .map_or_else(Vec::new, |result| lossy_tools(text, result))
}

/// A member among `members` that a server may read otherwise than the proxy reads one of
/// `names`, with the name it stands for: a spelling that a server matching names without regard
/// to case (Go's `encoding/json`) takes for it (`"Name"` for `name`), or the member given a second
/// time (servers differ on which counts: the first, the last, or both merged, as Go does into a
/// map), named as sent.
pub fn misread_member(
    members: &[core_json::Member],
    names: &[&'static str],
) -> Option<(String, &'static str)> {
    members.iter().enumerate().find_map(|(at, m)| {
        names
            .iter()
            .find(|wanted| {
                toolschema::text::folds_alike(&m.key, wanted)
                    || (m.key == **wanted && members[..at].iter().any(|e| e.key == m.key))
            })
            .map(|wanted| (m.key.clone(), *wanted))
    })
}

/// Why a member `variant` standing for `meant` ([`misread_member`]) is not passed on, in words,
/// as the `reader` (a server, a client) of the message may read it.
pub fn misread_in_words(variant: &str, meant: &str, reader: &str) -> String {
    if variant == meant {
        format!("'{meant}' twice, which {reader}s read differently (the first, the last, or both merged)")
    } else {
        format!("'{variant}', which a {reader} that reads names without regard to case would take for '{meant}'")
    }
}

/// The members of a message's `params` that the proxy reads (or that name what a server acts on
/// where the proxy reads that: a call's tool and arguments), by method. `_meta` is read in every
/// message, and `META_READ` within it.
fn params_read(method: &str) -> &'static [&'static str] {
    match method {
        "tools/call" => &["name", "arguments", "_meta"],
        "tools/list" => &["cursor", "_meta"],
        "initialize" => &["protocolVersion", "capabilities", "clientInfo", "_meta"],
        "notifications/cancelled" => &["requestId", "_meta"],
        "notifications/progress" => &["progressToken", "_meta"],
        "prompts/get" => &["name", "_meta"],
        "resources/read" | "resources/subscribe" | "resources/unsubscribe" => &["uri", "_meta"],
        "tasks/get" | "tasks/update" | "tasks/cancel" => &["taskId", "_meta"],
        _ => &["_meta"],
    }
}

/// The members of `params._meta` the proxy reads.
const META_READ: &[&str] = &[
    "progressToken",
    META_PROTOCOL_VERSION,
    META_CLIENT_CAPABILITIES,
];

/// A member of a message's `params` (or of `params._meta`) that a server may read otherwise than
/// the proxy reads one: a spelling that a server matching names without regard to case (Go's
/// `encoding/json`: last one wins, `ſ` is `s`, the Kelvin sign `k`) takes for it, though it is
/// not spelled so (`{"Cursor": "p8"}` is a request for page 8 there, and a first page to a reader
/// that takes names as written), or the member given twice.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Misread {
    /// `params` or `params._meta`.
    pub within: &'static str,
    /// The member as sent (`"Cursor"`; the member itself when it is given twice).
    pub variant: String,
    /// The member it stands for (`"cursor"`).
    pub meant: &'static str,
}

impl fmt::Display for Misread {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let what = misread_in_words(&self.variant, self.meant, "server");
        let instead = if self.variant == self.meant {
            ""
        } else {
            " in place of the one checked"
        };
        write!(
            f,
            "{} holds {what}{instead}; it was not forwarded",
            self.within
        )
    }
}

/// The one home of reading a client message's `params` safely: the first member a server
/// matching names without regard to case would read otherwise than the proxy does, if any.
/// Every member the proxy reads of `params` is in `params_read` (and `META_READ`), and a
/// message this finds something in is never forwarded, so the readers of single members
/// ([`tool_call`], [`member_at`], [`meta_member`]) see every member a server would see.
pub fn params_case_variant(text: &str, message: &Message) -> Option<Misread> {
    let method = match &message.kind {
        Kind::Request { method, .. } | Kind::Notification { method } => method,
        _ => return None,
    };
    let params = message.params.clone()?;
    let members = core_json::object_members(text, params).ok()??;
    if let Some((variant, meant)) = misread_member(&members, params_read(method)) {
        return Some(Misread {
            within: "params",
            variant,
            meant,
        });
    }
    let meta = member(&members, "_meta")?;
    let meta = core_json::object_members(text, meta).ok()??;
    misread_member(&meta, META_READ).map(|(variant, meant)| Misread {
        within: "params._meta",
        variant,
        meant,
    })
}

/// What the proxy needs of a `tools/call` request: the tool's name and the arguments (a
/// message whose `params` a server could read otherwise is refused before:
/// [`params_case_variant`]).
#[derive(Debug, Default, PartialEq)]
pub struct ToolCall {
    /// `params.name`, when it is a string.
    pub name: Option<String>,
    /// `params.arguments`, as sent (`None` when absent), or why it could not be read.
    pub arguments: Option<Result<Value, Malformed>>,
    /// Whether the arguments' text holds a lone surrogate escape, read as U+FFFD in
    /// `arguments` but forwarded as sent.
    pub lone_surrogates: bool,
    /// Where the arguments are in the text (their numbers are judged as it states them).
    pub arguments_at: Option<Range<usize>>,
}

/// Read the name and arguments of a `tools/call` request, building nothing else of it (the
/// arguments are the only part validation needs as a tree).
pub fn tool_call(text: &str, message: &Message) -> ToolCall {
    let Some(params) = &message.params else {
        return ToolCall::default();
    };
    let Ok(Some(members)) = core_json::object_members(text, params.clone()) else {
        return ToolCall::default();
    };
    let find = |key: &str| member(&members, key);
    let name = find("name").and_then(|at| {
        match core_json::parse_value_at(text, at, DuplicateKeys::KeepLast) {
            Ok(Value::String(name)) => Some(name),
            _ => None,
        }
    });
    let arguments_at = find("arguments");
    let lone_surrogates = arguments_at
        .clone()
        .is_some_and(|at| core_json::has_lone_surrogate(&text[at]));
    let arguments = arguments_at.clone().map(|at| parse_at(text, at));
    ToolCall {
        name,
        arguments,
        lone_surrogates,
        arguments_at,
    }
}

/// Build the value at `range` of `text` (keys given twice: the last counts).
pub fn parse_at(text: &str, range: Range<usize>) -> Result<Value, Malformed> {
    core_json::parse_value_at(text, range, DuplicateKeys::KeepLast)
        .map_err(|e| Malformed::syntax(text, e))
}

/// Parse a whole message as a JSON value (keys in their original order; of a key given twice
/// the last counts).
pub fn parse(text: &str) -> Result<Value, Malformed> {
    core_json::parse_with(text, DuplicateKeys::KeepLast).map_err(|e| Malformed::syntax(text, e))
}

/// The `nextCursor` of a `tools/list` (or any paginated) result: `None` when it is absent or
/// null (the last page). A cursor is an opaque string; any other value is refused with what was
/// sent, since taking it for "no more pages" would silently lose the pages after it.
pub fn next_cursor(result: &Value) -> Result<Option<&str>, String> {
    match result.get("nextCursor") {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(cursor)) => Ok(Some(cursor)),
        Some(other) => {
            let kind = match other {
                Value::Bool(_) => "a boolean",
                Value::Number(_) => "a number",
                Value::Array(_) => "an array",
                _ => "an object",
            };
            Err(format!(
                "its result's \"nextCursor\" is {kind} ({}), not a string: a cursor is an opaque \
                 string, and absent or null on the last page",
                toolschema::text::shorten(&other.to_string(), 80)
            ))
        }
    }
}

/// A JSON-RPC success response to `id`, answered with the id's exact text.
pub fn result_line(id: &RequestId, result: &Value) -> Vec<u8> {
    result_text_line(id, &result.to_string())
}

/// A JSON-RPC success response to `id` whose result is the JSON text `result`, written as is:
/// a result passed on as its server wrote it keeps every number and escape.
pub fn result_text_line(id: &RequestId, result: &str) -> Vec<u8> {
    response_line(Some(id), "result", result)
}

/// A JSON-RPC error response to `id` whose `error` object is the JSON text `error`, written
/// as is (a server's own error, passed on).
pub fn error_text_line(id: &RequestId, error: &str) -> Vec<u8> {
    response_line(Some(id), "error", error)
}

/// The one place a response envelope is written: the id's exact text (`null` when unknown),
/// and `member` holding the JSON text `value`.
fn response_line(id: Option<&RequestId>, member: &str, value: &str) -> Vec<u8> {
    format!(
        r#"{{"jsonrpc":"2.0","id":{},"{member}":{value}}}"#,
        id.map_or("null", RequestId::raw),
    )
    .into_bytes()
}

/// A JSON-RPC error code: the numbers JSON-RPC 2.0 reserves, or any other (`-32000` and below
/// are the implementation's own).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ErrorCode(pub i32);

impl ErrorCode {
    /// The message is not valid JSON.
    pub const PARSE_ERROR: ErrorCode = ErrorCode(-32700);
    /// The message is not a valid JSON-RPC request.
    pub const INVALID_REQUEST: ErrorCode = ErrorCode(-32600);
    /// The request's parameters are not valid.
    pub const INVALID_PARAMS: ErrorCode = ErrorCode(-32602);
    /// The receiver failed on its side.
    pub const INTERNAL_ERROR: ErrorCode = ErrorCode(-32603);
}

/// A JSON-RPC error response to `id` (`None`: a request whose id is unknown).
pub fn error_line(
    id: Option<&RequestId>,
    code: ErrorCode,
    message: &str,
    data: Option<&Value>,
) -> Vec<u8> {
    let mut error = json!({"code": code.0, "message": message});
    if let (Some(data), Value::Object(map)) = (data, &mut error) {
        map.insert("data".into(), data.clone());
    }
    response_line(id, "error", &error.to_string())
}

/// `text` with the id at `at` replaced by `id`'s exact text.
pub fn with_id(text: &str, at: Range<usize>, id: &RequestId) -> String {
    let mut out = String::with_capacity(text.len() + id.raw().len());
    out.push_str(&text[..at.start]);
    out.push_str(id.raw());
    out.push_str(&text[at.end..]);
    out
}

/// Messages as one JSON-RPC batch.
pub fn batch_line(messages: &[Vec<u8>]) -> Vec<u8> {
    let mut line = Vec::with_capacity(messages.iter().map(|m| m.len() + 1).sum::<usize>() + 2);
    line.push(b'[');
    for (i, message) in messages.iter().enumerate() {
        if i > 0 {
            line.push(b',');
        }
        line.extend_from_slice(message);
    }
    line.push(b']');
    line
}

/// A `tools/call` result that reports a tool execution error the model can correct: one text
/// content block and `isError: true`, in the shape every protocol version up to 2025-11-25 uses
/// (without the `resultType` later versions add).
pub fn tool_error_result(text: String) -> Value {
    tool_error_result_for(text, false)
}

/// [`tool_error_result`] in the shape of the session's revision: with `resultType: "complete"`
/// when it is 2026-07-28 or later (`modern`), which requires it on every result.
pub fn tool_error_result_for(text: String, modern: bool) -> Value {
    // The shape rmcp's model writes (`CallToolResult::error` with one text block), written here
    // so that the gate needs no MCP runtime; a test compares the two.
    let mut result = serde_json::Map::new();
    if modern {
        result.insert("resultType".into(), json!("complete"));
    }
    result.insert("content".into(), json!([{"type": "text", "text": text}]));
    result.insert("isError".into(), json!(true));
    Value::Object(result)
}

/// The first protocol revision without the `initialize` handshake: every request declares its
/// revision in `params._meta`.
pub const FIRST_MODERN_REVISION: &str = "2026-07-28";

/// The `_meta` key of a request's protocol revision (2026-07-28 and later).
pub const META_PROTOCOL_VERSION: &str = "io.modelcontextprotocol/protocolVersion";

/// The `_meta` key of a request's client capabilities (2026-07-28 and later).
pub const META_CLIENT_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";

/// Whether `revision` has no `initialize` handshake (revisions are dated, so they compare as
/// text).
pub fn is_modern(revision: &str) -> bool {
    revision >= FIRST_MODERN_REVISION
}

/// The member `key` of the object at `range`, if that is an object (of a key given twice the
/// last counts).
pub fn member_at(text: &str, range: Range<usize>, key: &str) -> Option<Range<usize>> {
    let members = core_json::object_members(text, range).ok()??;
    member(&members, key)
}

/// Where `params._meta.KEY` of a message is.
pub fn meta_member(text: &str, message: &Message, key: &str) -> Option<Range<usize>> {
    let meta = member_at(text, message.params.clone()?, "_meta")?;
    member_at(text, meta, key)
}

/// The protocol revision a request declares in `params._meta` (2026-07-28 and later).
pub fn declared_revision(text: &str, message: &Message) -> Option<String> {
    let at = meta_member(text, message, META_PROTOCOL_VERSION)?;
    match core_json::parse_value_at(text, at, DuplicateKeys::KeepLast).ok()? {
        Value::String(revision) => Some(revision),
        _ => None,
    }
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
pub fn sniff_id(head: &[u8], tail: &[u8]) -> Option<RequestId> {
    sniff_id_at_end(tail).or_else(|| sniff_id_at_start(head))
}

fn sniff_id_at_end(tail: &[u8]) -> Option<RequestId> {
    let text = std::str::from_utf8(trim_end(tail)).ok()?;
    let body = text.strip_suffix('}')?.trim_end();
    // The value: a number or a string without escapes, scanning back from the end.
    let value_start = if let Some(inner) = body.strip_suffix('"') {
        let open = inner.rfind('"')?;
        if inner[..open].ends_with('\\') || inner[open + 1..].contains('\\') {
            return None;
        }
        open
    } else {
        let start = body
            .rfind(|c: char| !(c.is_ascii_digit() || matches!(c, '-' | '+' | '.' | 'e' | 'E')))
            .map_or(0, |i| i + 1);
        core_json::value_range(&body[start..]).ok()?;
        start
    };
    let before = body[..value_start].trim_end().strip_suffix(':')?.trim_end();
    let key = before.strip_suffix("\"id\"")?;
    let separator = key.trim_end();
    (separator.ends_with(',') || separator.ends_with('{'))
        .then(|| RequestId::from_text(&body[value_start..]))
}

fn sniff_id_at_start(head: &[u8]) -> Option<RequestId> {
    let text = std::str::from_utf8(head)
        .or_else(|e| std::str::from_utf8(&head[..e.valid_up_to()]))
        .ok()?;
    let mut rest = text.trim_start().strip_prefix('{')?;
    loop {
        rest = rest.trim_start();
        let key_end = scalar_end(rest)?;
        let key = core_json::parse_with(&rest[..key_end], DuplicateKeys::KeepLast).ok()?;
        rest = rest[key_end..].trim_start().strip_prefix(':')?.trim_start();
        if matches!(rest.as_bytes().first()?, b'{' | b'[') {
            return None;
        }
        let value_end = scalar_end(rest)?;
        if key == "id" {
            let raw = &rest[..value_end];
            return matches!(raw.as_bytes().first(), Some(b'"' | b'-' | b'0'..=b'9'))
                .then(|| RequestId::from_text(raw));
        }
        rest = rest[value_end..].trim_start().strip_prefix(',')?;
    }
}

/// Where the scalar at the start of `text` ends, if it is whole.
fn scalar_end(text: &str) -> Option<usize> {
    let bytes = text.as_bytes();
    let end = match bytes.first()? {
        b'"' => {
            let mut i = 1;
            loop {
                match bytes.get(i)? {
                    b'\\' => i += 2,
                    b'"' => break i + 1,
                    _ => i += 1,
                }
            }
        }
        _ => bytes
            .iter()
            .position(|b| matches!(b, b',' | b'}' | b']' | b' ' | b'\t' | b'\r' | b'\n'))
            .unwrap_or(bytes.len()),
    };
    // A scalar cut off by the end of what was kept is not whole.
    (end < bytes.len() || bytes.first() == Some(&b'"')).then_some(end)
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

    fn kind(text: &str) -> Kind {
        match read(text) {
            Ok(Read::One(message)) => message.kind,
            other => panic!("{other:?}"),
        }
    }

    /// What rmcp's model writes for a tool error with `text`, in the session's revision.
    fn rmcp_tool_error(text: &str, modern: bool) -> String {
        use rmcp::model::{CallToolResult, ContentBlock, ServerResult};
        let mut result =
            ServerResult::CallToolResult(CallToolResult::error(vec![ContentBlock::text(
                text.to_string(),
            )]));
        if !modern {
            result.strip_result_type_for_legacy_peer();
        }
        serde_json::to_string(&result).unwrap()
    }

    proptest::proptest! {
        /// The tool error the gate writes by hand is, byte for byte, the one rmcp's model
        /// writes (which the gate used to build it with), in both shapes.
        #[test]
        fn a_tool_error_is_written_as_rmcp_writes_it(text in "\\PC*|[\u{0}-\u{1f}\"\\\\\u{2028}]{0,6}", modern: bool) {
            let ours = tool_error_result_for(text.clone(), modern).to_string();
            proptest::prop_assert_eq!(ours, rmcp_tool_error(&text, modern));
        }
    }

    #[test]
    fn error_codes_are_json_rpc_s() {
        use rmcp::model::ErrorCode as Rmcp;
        for (ours, theirs) in [
            (ErrorCode::PARSE_ERROR, Rmcp::PARSE_ERROR),
            (ErrorCode::INVALID_REQUEST, Rmcp::INVALID_REQUEST),
            (ErrorCode::INVALID_PARAMS, Rmcp::INVALID_PARAMS),
            (ErrorCode::INTERNAL_ERROR, Rmcp::INTERNAL_ERROR),
        ] {
            assert_eq!(ours.0, theirs.0);
        }
    }

    #[test]
    fn a_cursor_is_a_string_or_nothing() {
        assert_eq!(next_cursor(&json!({"tools": []})), Ok(None));
        assert_eq!(next_cursor(&json!({"nextCursor": null})), Ok(None));
        assert_eq!(next_cursor(&json!({"nextCursor": ""})), Ok(Some("")));
        assert_eq!(next_cursor(&json!({"nextCursor": "p2"})), Ok(Some("p2")));
        for (cursor, said) in [
            (json!(2), "a number (2)"),
            (json!(false), "a boolean (false)"),
            (json!(["p2"]), "an array ([\"p2\"])"),
            (json!({"page": 2}), "an object ({\"page\":2})"),
        ] {
            let why = next_cursor(&json!({ "nextCursor": cursor })).unwrap_err();
            assert!(
                why.starts_with(&format!(
                    "its result's \"nextCursor\" is {said}, not a string"
                )),
                "{why}"
            );
        }
    }

    #[test]
    fn classifies_messages() {
        assert_eq!(
            kind(r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{}}"#),
            Kind::Request {
                id: RequestId::from_text("1"),
                method: "tools/call".into()
            }
        );
        assert_eq!(
            kind(r#"{"method":"notifications/progress","jsonrpc":"2.0"}"#),
            Kind::Notification {
                method: "notifications/progress".into()
            }
        );
        assert_eq!(
            kind(r#"{"result":{},"jsonrpc":"2.0","id":"a"}"#),
            Kind::Response {
                id: RequestId::from_text("\"a\""),
                id_at: 34..37
            }
        );
        assert_eq!(
            kind(r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700}}"#),
            Kind::Other
        );
        assert_eq!(kind(r#"{"x":1}"#), Kind::Other);
        // What JavaScript writes for a string cut inside an emoji, and a byte order mark.
        assert_eq!(
            kind("\u{feff}{\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{\"data\":\"cut \\ud83d\"}}"),
            Kind::Notification {
                method: "notifications/message".into()
            }
        );
    }

    #[test]
    fn reads_batches_and_reports_what_is_malformed() {
        assert_eq!(read("[1, {}]"), Ok(Read::Batch(vec![1..2, 4..6])));
        assert_eq!(read("42"), Err(Malformed::NotAnObject));
        assert_eq!(
            read("{\"id\": 1,"),
            Err(Malformed::Json(
                "unexpected end of input: expected an object key at column 10".into()
            ))
        );
        assert_eq!(
            read("Server started"),
            Err(Malformed::Json("expected a JSON value at column 1".into()))
        );
        assert_eq!(
            read("this is not JSON"),
            Err(Malformed::Json(
                "invalid literal, expected `true` at column 1".into()
            ))
        );
        // Routing does not build values, so deep messages pass; building their params does not.
        let deep = format!(
            "{{\"id\":1,\"method\":\"tools/call\",\"params\":{{\"name\":\"s\",\"arguments\":{{\"q\":{}1{}}}}}}}",
            "[".repeat(200),
            "]".repeat(200)
        );
        let Ok(Read::One(message)) = read(&deep) else {
            panic!("a deep message is a message")
        };
        let call = tool_call(&deep, &message);
        assert_eq!(call.name.as_deref(), Some("s"));
        assert!(
            matches!(call.arguments, Some(Err(Malformed::Json(m))) if m.contains("deeper than 128"))
        );
    }

    #[test]
    fn reads_the_name_and_arguments_of_a_call() {
        let call = |text: &str| {
            let Ok(Read::One(message)) = read(text) else {
                panic!("{text}")
            };
            let call = tool_call(text, &message);
            (call.name, call.arguments.map(|a| a.ok()))
        };
        assert_eq!(
            call(
                r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"_meta":{"progressToken":1},"name":"echo","arguments":{"m":"x"}}}"#
            ),
            (Some("echo".into()), Some(Some(json!({"m": "x"}))))
        );
        assert_eq!(
            call(r#"{"method":"tools/call","params":{"name":"echo"},"id":1}"#),
            (Some("echo".into()), None)
        );
        // What a server's own reader makes of unusual shapes: the last of two keys, no name.
        assert_eq!(
            call(
                r#"{"method":"tools/call","params":{"name":"a","name":"b","arguments":{"k":1,"k":2}},"id":1}"#
            ),
            (Some("b".into()), Some(Some(json!({"k": 2}))))
        );
        assert_eq!(
            call(r#"{"method":"tools/call","params":[1,2],"id":1}"#),
            (None, None)
        );
        assert_eq!(
            call(r#"{"method":"tools/call","params":{"name":7},"id":1}"#),
            (None, None)
        );
    }

    #[test]
    fn ids_match_by_value_and_keep_their_text() {
        let key = |text: &str| RequestId::from_text(text).key().clone();
        assert_eq!(key("3"), key("3.0"));
        assert_eq!(key("3"), key("30e-1"));
        assert_eq!(key("-0"), key("0.000"));
        assert_eq!(key("1e2"), key("100"));
        assert_ne!(key("1"), key("\"1\""));
        assert_ne!(key("18446744073709551617"), key("18446744073709551616"));
        assert_eq!(key("\"a\""), key("\"\\u0061\""));
        assert_ne!(key("true"), key("\"true\""));
        assert_eq!(IdKey::of(&json!(3)), key("3.0"));
        let big = RequestId::from_text("18446744073709551617");
        assert_eq!(big.raw(), "18446744073709551617");
        assert_eq!(
            String::from_utf8(error_line(
                Some(&big),
                ErrorCode::INVALID_PARAMS,
                "no",
                None
            ))
            .unwrap(),
            r#"{"jsonrpc":"2.0","id":18446744073709551617,"error":{"code":-32602,"message":"no"}}"#
        );
        assert_eq!(
            with_id(
                r#"{"id":3,"result":{}}"#,
                6..7,
                &RequestId::from_text("3.0")
            ),
            r#"{"id":3.0,"result":{}}"#
        );
    }

    #[test]
    fn sniffs_ids_from_either_end() {
        let tail = br#"aaaa"}},"jsonrpc":"2.0","id":42}"#;
        let raw = |id: Option<RequestId>| id.map(|id| id.raw().to_string());
        assert_eq!(
            raw(sniff_id(b"{\"method\":\"tools/call\",\"params\":{", tail)),
            Some("42".into())
        );
        assert_eq!(
            raw(sniff_id(b"", br#"x","id":"req-7"}"#)),
            Some("\"req-7\"".into())
        );
        assert_eq!(raw(sniff_id(b"", br#"x","id":3.0}"#)), Some("3.0".into()));
        let head =
            br#"{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"arguments":{"x":"zzzz"#;
        assert_eq!(raw(sniff_id(head, b"zzzz\"}}}")), Some("9".into()));
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
            String::from_utf8(error_line(
                Some(&RequestId::from_text("3")),
                ErrorCode::INVALID_PARAMS,
                "bad",
                None
            ))
            .unwrap(),
            r#"{"jsonrpc":"2.0","id":3,"error":{"code":-32602,"message":"bad"}}"#
        );
        assert_eq!(
            batch_line(&[b"{\"a\":1}".to_vec(), b"{}".to_vec()]),
            b"[{\"a\":1},{}]"
        );
    }

    proptest::proptest! {
        /// A page of tools, any of them holding a lone surrogate escape (or a number past 64
        /// bits) in its name, description or schema: exactly those are found, by their place,
        /// however the rest is written; and two definitions that differ only in which lone
        /// surrogate they hold read alike, which is why a pin must refuse them.
        #[test]
        fn the_tools_holding_a_value_that_reading_changes_are_found(
            tools in proptest::collection::vec(
                (0usize..4, proptest::sample::select(vec!["\\ud800", "\\udbff", "\\udc00", "\\udfff"]), "[a-z ]{0,8}"),
                0..8,
            ),
        ) {
            let mut texts = Vec::new();
            let mut lossy = Vec::new();
            for (at, (place, escape, words)) in tools.iter().enumerate() {
                let text = match place {
                    0 => format!(r#"{{"name":"t{at}","description":"{words}","inputSchema":{{"type":"object"}}}}"#),
                    1 => format!(r#"{{"name":"t{at}{escape}","inputSchema":{{"type":"object"}}}}"#),
                    2 => format!(r#"{{"name":"t{at}","description":"{words}{escape}{words}","inputSchema":{{"type":"object"}}}}"#),
                    _ => format!(r#"{{"name":"t{at}","inputSchema":{{"type":"object","properties":{{"n":{{"maximum":18446744073709551617}}}}}}}}"#),
                };
                if *place != 0 {
                    lossy.push(at);
                }
                texts.push(text);
            }
            let result = format!(r#"{{"tools":[{}],"nextCursor":"\ud800"}}"#, texts.join(","));
            let found: Vec<usize> = lossy_tools(&result, 0..result.len()).into_iter().map(|(at, _)| at).collect();
            proptest::prop_assert_eq!(found, lossy);
            let response = format!(r#"{{"jsonrpc":"2.0","id":1,"result":{result}}}"#);
            let found: Vec<usize> = lossy_tools_of_response(&response).into_iter().map(|(at, _)| at).collect();
            let expected: Vec<usize> = tools.iter().enumerate().filter(|(_, t)| t.0 != 0).map(|(at, _)| at).collect();
            proptest::prop_assert_eq!(found, expected);
        }
    }

    #[test]
    fn a_lone_surrogate_after_a_changed_number_is_the_loss_kept() {
        let result = r#"{"tools":[{"name":"a","inputSchema":{"maximum":18446744073709551617,"description":"\udfff"}},{"name":"b","inputSchema":{"maximum":18446744073709551617}}]}"#;
        let found = lossy_tools(result, 0..result.len());
        assert_eq!(
            found,
            [
                (
                    0,
                    core_json::Loss::LoneSurrogate {
                        escape: r"\udfff".into()
                    }
                ),
                (
                    1,
                    core_json::Loss::Rounded {
                        literal: "18446744073709551617".into(),
                        read: "1.8446744073709552e+19".into()
                    }
                ),
            ]
        );
    }

    #[test]
    fn definitions_differing_only_in_their_lone_surrogate_read_alike() {
        let low = parse(r#"{"description":"a\ud800"}"#).unwrap();
        let high = parse(r#"{"description":"a\udbff"}"#).unwrap();
        assert_eq!(low, high);
    }
}
