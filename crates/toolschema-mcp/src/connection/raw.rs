//! The raw side of a typed session: results kept exactly as the server sent them, and what the
//! server sent that does not belong in a session.
//!
//! rmcp reads every message into its typed model, which is right for running the session but
//! loses what a snapshot must keep (a tool's fields it does not know, the order of keys) and what
//! a fuzzer must see (a line that is not JSON-RPC, an answer to a request nobody sent). The
//! transports therefore read each incoming message as plain JSON first (keys in order), keep the
//! `result` of every response here by request id, note anything out of place in a [`Watch`], and
//! only then hand rmcp its typed copy.

use crate::message::{self, IdKey, Kind, Read};
use rmcp::model::{RequestId, ServerJsonRpcMessage};
use serde_json::{json, Value};
use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};

/// Read a message with the core's reader, which takes all the grammar allows (a lone surrogate
/// becomes U+FFFD; of a key given twice the last counts, as a server's own reader takes it).
pub fn parse_message(bytes: &[u8]) -> Result<Value, String> {
    let text = std::str::from_utf8(bytes).map_err(|e| format!("not UTF-8: {e}"))?;
    toolschema::json::parse_with(text, toolschema::json::DuplicateKeys::KeepLast)
        .map_err(|e| format!("{} at byte {}", e.message, e.offset))
}

/// What a line is (one message; a batch or a line that is not a message is none).
pub fn kind_of(bytes: &[u8]) -> Option<Kind> {
    let text = std::str::from_utf8(bytes).ok()?;
    match message::read(text).ok()? {
        Read::One(message) => Some(message.kind),
        Read::Batch(_) => None,
    }
}

/// What reading a result as received changed of it, and the text needed to judge it as sent.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ReadLoss {
    /// The text of its `structuredContent` as received, when it has one: reading may round its
    /// numbers or turn a lone surrogate escape into U+FFFD, so an output schema judges this text
    /// ([`toolschema::CompiledTool::validate_output_text`]), as the proxy does.
    pub structured_content: Option<String>,
    /// The text of the whole result as received, when reading it changed a value (a number
    /// rounded, a lone surrogate read as U+FFFD): what `toolschema call` prints as sent.
    pub result_as_sent: Option<String>,
    /// The tools of a `tools/list` result whose definitions hold a value that reading changes,
    /// by their place in the page ([`message::lossy_tools`]).
    pub lossy_tools: Vec<(usize, toolschema::json::Loss)>,
    /// The numbers of a `tools/list` result that reading changes, as the text states them,
    /// with pointers from its `tools` array: the tools' schemas compare them so.
    pub stated_tools: toolschema::json::number::StatedNumbers,
}

/// Results of responses as received, by request id, each with what reading it changed.
#[derive(Debug, Clone, Default)]
pub struct RawResults(Arc<Mutex<HashMap<IdKey, (Value, ReadLoss)>>>);

impl RawResults {
    /// Keep the `result` of a response; anything else is ignored.
    pub fn observe(&self, message: &Value, loss: ReadLoss) {
        let (Some(id), Some(result)) = (message.get("id"), message.get("result")) else {
            return;
        };
        if id.is_null() {
            return;
        }
        if let Ok(mut results) = self.0.lock() {
            results.insert(IdKey::of(id), (result.clone(), loss));
        }
    }

    /// Take the result of the response to request `id`.
    pub fn take(&self, id: &RequestId) -> Option<Value> {
        self.take_read(id).map(|(result, _)| result)
    }

    /// Take the result of the response to request `id`, with what reading it changed.
    pub fn take_read(&self, id: &RequestId) -> Option<(Value, ReadLoss)> {
        let id = serde_json::to_value(id).ok()?;
        self.0.lock().ok()?.remove(&IdKey::of(&id))
    }
}

/// The error code of the answer a transport hands rmcp in place of an answer it could not read,
/// so the request ends at once instead of waiting out its timeout. (Reserved for
/// implementation-defined server errors by JSON-RPC. No user sees it: a caller asks
/// [`Watch::unreadable_answer`] which answers were replaced, and says why instead.)
pub const UNREADABLE_ANSWER: i32 = -32099;

/// Something the server sent that does not belong in the session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stray {
    /// What it was, with an excerpt.
    pub what: String,
    /// The requests that were waiting for answers when it came.
    pub waiting: Vec<IdKey>,
    /// The last request answered before it came.
    pub last_answered: Option<IdKey>,
    /// The first request answered after it came (a server that logs to stdout mostly does it
    /// just before it answers).
    pub next_answered: Option<IdKey>,
}

/// What a transport saw of the requests it sent and of what came back.
#[derive(Debug, Clone, Default)]
pub struct Watch(Arc<Mutex<WatchState>>);

#[derive(Debug, Default)]
struct WatchState {
    /// Report strays as they come (the snapshot), instead of only keeping them.
    report: bool,
    waiting: HashSet<IdKey>,
    sent: HashSet<IdKey>,
    last_answered: Option<IdKey>,
    /// The strays, each with whether a request claimed it.
    strays: Vec<(Stray, bool)>,
    unreadable: HashMap<IdKey, Unreadable>,
}

/// An answer that could not be read, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unreadable {
    /// Why, in words.
    pub why: String,
    /// Whether the server broke the protocol (not JSON-RPC), rather than sent an answer this
    /// side cannot take (larger than the size limit, nested deeper than JSON is read here).
    pub breaks_protocol: bool,
}

/// What a transport does with an incoming message.
pub enum Received {
    /// Hand it to the session.
    Deliver(Box<ServerJsonRpcMessage>),
    /// Drop it: noted in the watch as a stray.
    Skip,
    /// Drop it: it could not be read as a message (noted as a stray; what it was is given, for a
    /// transport that knows which request it answers).
    Unreadable(String),
}

/// The first and last bytes of a line, where its `id` is found.
fn ends(bytes: &[u8]) -> (&[u8], &[u8]) {
    let keep = 512.min(bytes.len());
    (&bytes[..keep], &bytes[bytes.len() - keep..])
}

/// How much of a stray line is quoted.
const EXCERPT: usize = 160;

/// The start of `bytes` as text for a message, cut at `EXCERPT` characters.
pub fn excerpt(bytes: &[u8]) -> String {
    toolschema::text::shorten(String::from_utf8_lossy(bytes).trim(), EXCERPT)
}

impl Watch {
    /// A watch that also reports each stray (through `tracing`, at `WARN`) as it comes, for a
    /// command with nothing better to do with them.
    pub fn reporting() -> Watch {
        let watch = Watch::default();
        if let Ok(mut state) = watch.0.lock() {
            state.report = true;
        }
        watch
    }

    /// Note an outgoing message (its serialized line): a request now waits for its answer.
    pub fn sent(&self, line: &[u8]) {
        if let Some(Kind::Request { id, .. }) = kind_of(line) {
            let id = id.to_value();
            if let Ok(mut state) = self.0.lock() {
                let key = IdKey::of(&id);
                state.sent.insert(key.clone());
                state.waiting.insert(key);
            }
        }
    }

    /// How many requests sent still wait for their answer (one that timed out stays here: the
    /// server may still be working on it).
    pub fn unanswered(&self) -> usize {
        self.0.lock().map(|state| state.waiting.len()).unwrap_or(0)
    }

    fn stray(&self, what: String) {
        let Ok(mut state) = self.0.lock() else {
            return;
        };
        if state.report {
            tracing::warn!("{what}; skipped");
        }
        let mut waiting: Vec<IdKey> = state.waiting.iter().cloned().collect();
        waiting.sort_by_key(|a| a.to_string());
        let last_answered = state.last_answered.clone();
        state.strays.push((
            Stray {
                what,
                waiting,
                last_answered,
                next_answered: None,
            },
            false,
        ));
    }

    /// Read one incoming message: keep its raw result, note what is out of place, and type it
    /// for rmcp.
    pub fn receive(&self, bytes: &[u8], results: &RawResults) -> Received {
        let value: Value = match parse_message(bytes) {
            Ok(value) => value,
            Err(e) if e.contains("nests deeper than") => {
                // Valid JSON, only deeper than it is read here: not the server's fault.
                let why = format!(
                    "the answer nests deeper than {} levels, more than is read here",
                    toolschema::json::MAX_DEPTH
                );
                let (head, tail) = ends(bytes);
                return match message::sniff_id(head, tail).map(|id| id.to_value()) {
                    Some(id) if self.is_waiting(&id) => self.replace(id, why, false),
                    _ => Received::Skip,
                };
            }
            Err(e) => {
                let what = format!(
                    "the server sent a line that is not JSON ({e}): '{}'",
                    excerpt(bytes)
                );
                // A broken answer (a cut-off line) still names its request at one end: end
                // that request now rather than at its timeout.
                let (head, tail) = ends(bytes);
                if let Some(id) = message::sniff_id(head, tail)
                    .map(|id| id.to_value())
                    .filter(|id| self.is_waiting(id))
                {
                    return self.replace(id, what, true);
                }
                self.stray(what.clone());
                return Received::Unreadable(what);
            }
        };
        let answered = match kind_of(bytes) {
            Some(Kind::Response { id, .. }) => Some(id.to_value()),
            _ => None,
        };
        if let Some(id) = &answered {
            let key = IdKey::of(id);
            let known = self
                .0
                .lock()
                .map(|mut state| {
                    let known = state.waiting.remove(&key);
                    if known {
                        state.last_answered = Some(key.clone());
                        for (stray, _) in state.strays.iter_mut().rev() {
                            if stray.next_answered.is_some() {
                                break;
                            }
                            stray.next_answered = Some(key.clone());
                        }
                    }
                    (known, state.sent.contains(&key))
                })
                .unwrap_or((true, true));
            match known {
                (true, _) => {}
                (false, true) => {
                    self.stray(format!(
                        "the server answered request {id} a second time: '{}'",
                        excerpt(bytes)
                    ));
                    return Received::Skip;
                }
                (false, false) => {
                    self.stray(format!(
                        "the server sent an answer to request {id}, which was never sent: '{}'",
                        excerpt(bytes)
                    ));
                    return Received::Skip;
                }
            }
        }
        // (Looked for in the whole text first, before its members are read: a listing's pages
        // hold no structured content, and most results no value that reading changes. A key
        // spelled with an escape holds `\u`.)
        let loss = std::str::from_utf8(bytes)
            .ok()
            .filter(|_| answered.is_some())
            .map(|text| (text, toolschema::json::first_lossy_value(text).is_some()))
            .filter(|(text, lossy)| {
                *lossy || text.contains("structuredContent") || text.contains("\\u")
            })
            .and_then(|(text, lossy)| {
                let result = toolschema::json::root_members(text)
                    .ok()
                    .flatten()
                    .and_then(|members| message::member(&members, "result"))?;
                let structured_content = toolschema::json::object_members(text, result.clone())
                    .ok()
                    .flatten()
                    .and_then(|members| message::member(&members, "structuredContent"))
                    .and_then(|at| text.get(at))
                    .map(String::from);
                let (lossy_tools, stated_tools, result_as_sent) = if lossy {
                    (
                        message::lossy_tools(text, result.clone()),
                        toolschema::json::number::StatedNumbers::read(text).below("/result/tools"),
                        text.get(result).map(String::from),
                    )
                } else {
                    Default::default()
                };
                Some(ReadLoss {
                    structured_content,
                    stated_tools,
                    result_as_sent,
                    lossy_tools,
                })
            })
            .unwrap_or_default();
        results.observe(&value, loss);
        match serde_json::from_value::<ServerJsonRpcMessage>(value) {
            Ok(typed) => Received::Deliver(Box::new(typed)),
            Err(e) => {
                let what = format!(
                    "the server sent a message that is not JSON-RPC ({e}): '{}'",
                    excerpt(bytes)
                );
                match answered {
                    // An answer to a waiting request: end the request now, and say why.
                    Some(id) => self.replace(id, what, true),
                    None => {
                        self.stray(what.clone());
                        Received::Unreadable(what)
                    }
                }
            }
        }
    }

    /// An answer (to request `id`) that is not JSON-RPC, kept aside and replaced with an error.
    pub fn replace_answer(&self, id: Value, what: String) -> Received {
        self.replace(id, what, true)
    }

    fn is_waiting(&self, id: &Value) -> bool {
        self.0
            .lock()
            .map(|state| state.waiting.contains(&IdKey::of(id)))
            .unwrap_or(false)
    }

    /// End request `id` with a marked error in place of its answer. Not reported even by a
    /// reporting watch: the request's caller says why its answer could not be read.
    fn replace(&self, id: Value, why: String, breaks_protocol: bool) -> Received {
        if let Ok(mut state) = self.0.lock() {
            let key = IdKey::of(&id);
            state.waiting.remove(&key);
            state.unreadable.insert(
                key,
                Unreadable {
                    why: why.clone(),
                    breaks_protocol,
                },
            );
        }
        let error = json!({"jsonrpc": "2.0", "id": id,
            "error": {"code": UNREADABLE_ANSWER, "message": why}});
        match serde_json::from_value(error) {
            Ok(typed) => Received::Deliver(Box::new(typed)),
            Err(_) => Received::Skip,
        }
    }

    /// Why the answer to request `id` could not be read, if it could not.
    pub fn unreadable_answer(&self, id: &RequestId) -> Option<Unreadable> {
        let id = serde_json::to_value(id).ok()?;
        self.0.lock().ok()?.unreadable.remove(&IdKey::of(&id))
    }

    /// Why an answer could not be read, whichever request it answered: for a step with one
    /// request in flight whose id the caller does not see (the `initialize` handshake).
    pub fn any_unreadable_answer(&self) -> Option<Unreadable> {
        let mut state = self.0.lock().ok()?;
        let key = state.unreadable.keys().next()?.clone();
        state.unreadable.remove(&key)
    }

    /// End request `id`, whose answer came on a stream that went over the size limit of `limit`
    /// bytes before the answer was whole, with an unreadable answer that says so.
    pub fn answer_over_limit(&self, id: Value, limit: usize) -> Received {
        let what = format!(
            "the server sent more than the limit of {limit} bytes for one answer \
             (raise it with --max-message-bytes)"
        );
        self.replace(id, what, false)
    }

    /// Note a message over the size limit of `limit` bytes; when it is an answer to a waiting
    /// request (its id is found at either end of it), that request ends with an unreadable
    /// answer.
    pub fn oversized(&self, length: usize, limit: usize, head: &[u8], tail: &[u8]) -> Received {
        let what = format!(
            "the server sent a message of {length} bytes, over the limit of {limit} bytes \
             (raise it with --max-message-bytes)"
        );
        match message::sniff_id(head, tail).map(|id| id.to_value()) {
            Some(id) if self.is_waiting(&id) => self.replace(id, what, false),
            _ => {
                self.stray(what);
                Received::Skip
            }
        }
    }

    /// What was noted while one of `ids` waited for its answer, when that answer was the next
    /// to come (or no answer came after it); or right after one was answered while nothing else
    /// waited. A stray can still be claimed by more than one request; a caller that must know
    /// which one caused it repeats the request alone.
    pub fn strays_for(&self, ids: &[RequestId]) -> Vec<String> {
        let keys: Vec<IdKey> = ids
            .iter()
            .filter_map(|id| serde_json::to_value(id).ok())
            .map(|id| IdKey::of(&id))
            .collect();
        let Ok(mut state) = self.0.lock() else {
            return Vec::new();
        };
        let mut out = Vec::new();
        for (stray, claimed) in &mut state.strays {
            let waited = stray.waiting.iter().any(|w| keys.contains(w))
                && stray
                    .next_answered
                    .as_ref()
                    .is_none_or(|next| keys.contains(next) || !stray.waiting.contains(next));
            let just_answered = stray.waiting.is_empty()
                && stray
                    .last_answered
                    .as_ref()
                    .is_some_and(|l| keys.contains(l));
            if waited || just_answered {
                *claimed = true;
                out.push(stray.what.clone());
            }
        }
        out
    }

    /// What no request claimed (so far), oldest first.
    pub fn unclaimed_strays(&self) -> Vec<Stray> {
        self.0
            .lock()
            .map(|state| {
                state
                    .strays
                    .iter()
                    .filter(|(_, claimed)| !claimed)
                    .map(|(stray, _)| stray.clone())
                    .collect()
            })
            .unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_lone_surrogates_that_javascript_writes() {
        // What JSON.stringify writes for a description cut inside an emoji.
        let line = br#"{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"t","description":"cut \ud83d","inputSchema":{"type":"object"}}]}}"#;
        let value = parse_message(line).unwrap();
        assert_eq!(value["result"]["tools"][0]["description"], "cut \u{fffd}");
    }

    #[test]
    fn keeps_the_text_of_a_results_structured_content_as_sent() {
        let results = RawResults::default();
        let watch = Watch::default();
        let lines: [(&[u8], Option<&str>); 5] = [
            (br#"{"jsonrpc":"2.0","id":1,"result":{"content":[],"structuredContent":{"s":"\udc00"}}}"#, Some(r#"{"s":"\udc00"}"#)),
            // Numbers as stated, not as read.
            (br#"{"jsonrpc":"2.0","id":2,"result":{"structuredContent": {"n":0.10000000000000000001, "m":9007199254740993} ,"content":[]}}"#, Some(r#"{"n":0.10000000000000000001, "m":9007199254740993}"#)),
            // A key written with an escape is the same key.
            (br#"{"jsonrpc":"2.0","id":3,"result":{"content":[],"\u0073tructuredContent":[1e400]}}"#, Some("[1e400]")),
            (br#"{"jsonrpc":"2.0","id":4,"result":{"content":[{"type":"text","text":"\ud800"}]}}"#, None),
            // Not a result's member.
            (br#"{"jsonrpc":"2.0","id":5,"result":{"content":[{"type":"text","text":"x","structuredContent":{}}]}}"#, None),
        ];
        for (id, (line, kept)) in (1..).zip(lines) {
            watch
                .sent(format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call"}}"#).as_bytes());
            assert!(matches!(
                watch.receive(line, &results),
                Received::Deliver(_)
            ));
            let (_, said) = results.take_read(&RequestId::Number(id)).unwrap();
            assert_eq!(
                said.structured_content.as_deref(),
                kept,
                "{}",
                String::from_utf8_lossy(line)
            );
        }
    }

    #[test]
    fn keeps_results_in_server_order_by_id() {
        let results = RawResults::default();
        let line = br#"{"result":{"tools":[{"name":"t","x-extra":1,"inputSchema":{"type":"object","$schema":"s"}}]},"jsonrpc":"2.0","id":3}"#;
        let watch = Watch::default();
        watch.sent(br#"{"jsonrpc":"2.0","id":3,"method":"tools/list"}"#);
        let Received::Deliver(typed) = watch.receive(line, &results) else {
            panic!("not delivered")
        };
        assert!(matches!(*typed, ServerJsonRpcMessage::Response(_)));
        let raw = results.take(&RequestId::Number(3)).unwrap();
        assert_eq!(
            serde_json::to_string(&raw).unwrap(),
            r#"{"tools":[{"name":"t","x-extra":1,"inputSchema":{"type":"object","$schema":"s"}}]}"#
        );
        assert_eq!(results.take(&RequestId::Number(3)), None);
        // A string id is a different id.
        results.observe(&json!({"id": "3", "result": {}}), ReadLoss::default());
        assert_eq!(results.take(&RequestId::Number(3)), None);
        assert!(watch.unclaimed_strays().is_empty());
    }

    #[test]
    fn notes_lines_that_are_not_messages_with_the_requests_waiting() {
        let results = RawResults::default();
        let watch = Watch::default();
        watch.sent(br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{}}"#);
        assert!(matches!(
            watch.receive(b"Server listening", &results),
            Received::Unreadable(_)
        ));
        let strays = watch.unclaimed_strays();
        assert_eq!(strays.len(), 1);
        assert!(strays[0]
            .what
            .starts_with("the server sent a line that is not JSON"));
        assert!(strays[0].what.ends_with("'Server listening'"));
        assert_eq!(strays[0].waiting, [IdKey::of(&json!(1))]);
        assert_eq!(strays[0].next_answered, None);
        assert_eq!(
            watch.strays_for(&[RequestId::Number(2)]),
            Vec::<String>::new()
        );
        assert_eq!(watch.strays_for(&[RequestId::Number(1)]).len(), 1);
        assert!(watch.unclaimed_strays().is_empty());
        assert!(matches!(
            watch.receive(b"{", &results),
            Received::Unreadable(_)
        ));
    }

    #[test]
    fn a_stray_belongs_to_the_request_answered_next() {
        let results = RawResults::default();
        let watch = Watch::default();
        for id in [1, 2] {
            watch
                .sent(format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call"}}"#).as_bytes());
        }
        let _ = watch.receive(b"debug: converting", &results);
        let _ = watch.receive(
            br#"{"jsonrpc":"2.0","id":2,"result":{"content":[]}}"#,
            &results,
        );
        let _ = watch.receive(
            br#"{"jsonrpc":"2.0","id":1,"result":{"content":[]}}"#,
            &results,
        );
        assert!(watch.strays_for(&[RequestId::Number(1)]).is_empty());
        assert_eq!(watch.strays_for(&[RequestId::Number(2)]).len(), 1);
    }

    #[test]
    fn answers_to_nobody_and_second_answers_are_strays() {
        let results = RawResults::default();
        let watch = Watch::default();
        watch.sent(br#"{"jsonrpc":"2.0","id":5,"method":"ping"}"#);
        let answer = br#"{"jsonrpc":"2.0","id":5,"result":{}}"#;
        assert!(matches!(
            watch.receive(answer, &results),
            Received::Deliver(_)
        ));
        assert!(matches!(watch.receive(answer, &results), Received::Skip));
        let unknown = br#"{"jsonrpc":"2.0","id":"x","result":{}}"#;
        assert!(matches!(watch.receive(unknown, &results), Received::Skip));
        let strays = watch.unclaimed_strays();
        assert!(strays[0]
            .what
            .starts_with("the server answered request 5 a second time"));
        assert_eq!(strays[0].last_answered, Some(IdKey::of(&json!(5))));
        assert!(strays[1]
            .what
            .starts_with("the server sent an answer to request \"x\", which was never sent"));
    }

    #[test]
    fn an_unreadable_answer_ends_its_request_with_a_marked_error() {
        let results = RawResults::default();
        let watch = Watch::default();
        watch.sent(br#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{}}"#);
        let broken = br#"{"jsonrpc":"2.0","id":2,"error":{"code":"bad","message":7}}"#;
        let Received::Deliver(delivered) = watch.receive(broken, &results) else {
            panic!("no error delivered")
        };
        let ServerJsonRpcMessage::Error(error) = *delivered else {
            panic!("no error delivered")
        };
        assert_eq!(error.error.code.0, UNREADABLE_ANSWER);
        let unreadable = watch.unreadable_answer(&RequestId::Number(2)).unwrap();
        assert!(
            unreadable
                .why
                .starts_with("the server sent a message that is not JSON-RPC"),
            "{unreadable:?}"
        );
        assert!(unreadable.breaks_protocol);
        assert!(watch.unclaimed_strays().is_empty());
    }

    #[test]
    fn a_broken_answer_that_names_its_request_ends_it() {
        let watch = Watch::default();
        watch.sent(br#"{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{}}"#);
        // Cut or garbled in the middle, its id still readable at the end.
        let broken =
            br#"{"jsonrpc":"2.0","result":{"content":[{"type":"text","text":"\q"}]},"id":6}"#;
        assert!(matches!(
            watch.receive(broken, &RawResults::default()),
            Received::Deliver(_)
        ));
        let unreadable = watch.unreadable_answer(&RequestId::Number(6)).unwrap();
        assert!(unreadable.breaks_protocol);
        assert!(
            unreadable
                .why
                .starts_with("the server sent a line that is not JSON ("),
            "{}",
            unreadable.why
        );
    }

    #[test]
    fn an_oversized_answer_ends_its_request() {
        let watch = Watch::default();
        watch.sent(br#"{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{}}"#);
        let head = br#"{"jsonrpc":"2.0","result":{"content":[{"type":"text","text":"xxxx"#;
        let tail = br#"xxxx"}]},"id":9}"#;
        assert!(matches!(
            watch.oversized(20_000_000, 16_777_216, head, tail),
            Received::Deliver(_)
        ));
        assert_eq!(
            watch.unreadable_answer(&RequestId::Number(9)),
            Some(Unreadable {
                why: "the server sent a message of 20000000 bytes, over the limit of 16777216 \
                      bytes (raise it with --max-message-bytes)"
                    .into(),
                breaks_protocol: false
            })
        );
    }

    #[test]
    fn an_answer_too_deep_to_read_is_not_a_stray() {
        let watch = Watch::default();
        watch.sent(br#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{}}"#);
        let deep = format!(
            r#"{{"jsonrpc":"2.0","result":{{"content":[],"structuredContent":{{"x":{}{}}}}},"id":4}}"#,
            "[".repeat(200),
            "]".repeat(200)
        );
        assert!(matches!(
            watch.receive(deep.as_bytes(), &RawResults::default()),
            Received::Deliver(_)
        ));
        let unreadable = watch.unreadable_answer(&RequestId::Number(4)).unwrap();
        assert!(!unreadable.breaks_protocol);
        assert!(watch.unclaimed_strays().is_empty());
    }
}
