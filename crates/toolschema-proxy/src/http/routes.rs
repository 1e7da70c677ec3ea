//! Which of a client's open streams each message for the client goes on.
//!
//! Over Streamable HTTP a client has a stream per request it posted (the response to that
//! request, and what the server sends about it before) and, in 2025-11-25 sessions, one stream
//! it opened with GET for everything else. The gate says what goes to the client; this table
//! says on which stream:
//!
//! - a response, on the stream of the request it answers (which it ends); a batch of responses,
//!   on the stream of the batch they answer;
//! - a progress notification, on the stream of the request that asked for progress with its
//!   token; a notification of a `subscriptions/listen` stream, on that stream;
//! - anything else the server sends on a request's stream (an upstream over HTTP says which),
//!   on the client's stream of that request; what it sends on its GET stream, on the client's;
//! - what a server over stdio sends unasked (it cannot say what it relates to): on the one
//!   request stream open, if there is one, else on the GET stream, else on the newest request
//!   stream; with no stream at all, it waits (a bounded number of messages) for the GET stream.

use super::queue::{self, Refused, StreamReceiver, StreamSender};
use super::wire;
use http::{HeaderMap, StatusCode};
use std::collections::{HashMap, VecDeque};
use toolschema_gate::message::{read, IdKey, Kind, Read, RequestId};
use toolschema_gate::report;

/// How many messages wait for a client's stream before the oldest are dropped (they are
/// bounded in bytes too, by the streams' budget).
pub const BACKLOG: usize = 1024;

/// How many messages one stream holds that the client has not read yet (they are bounded in
/// bytes too: see [`Routes::new`]).
pub const STREAM_CAPACITY: usize = 1024;

/// One message for a client's stream.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outgoing {
    /// The upstream's event id, passed on so that the client can resume with it.
    pub event_id: Option<String>,
    /// The message, one line of JSON.
    pub data: Vec<u8>,
    /// It answers the request the stream was opened for: the stream ends with it.
    pub last: bool,
}

/// What an upstream answered instead of a JSON-RPC response, passed on as it was.
#[derive(Debug, Clone)]
pub struct HttpFailure {
    /// Its status.
    pub status: StatusCode,
    /// The headers worth passing on (`WWW-Authenticate`, content type).
    pub headers: HeaderMap,
    /// Its body.
    pub body: bytes::Bytes,
}

impl HttpFailure {
    /// Whether it speaks of the client's standing (its credentials, 401 and 403, or its
    /// session, 404) rather than of one message: any request in the client's name would have
    /// met it, so a request the proxy made for the client's requests fails them with it too.
    pub fn concerns_the_client(&self) -> bool {
        matches!(
            self.status,
            StatusCode::UNAUTHORIZED | StatusCode::FORBIDDEN | StatusCode::NOT_FOUND
        )
    }
}

/// Where a message for the client came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Origin {
    /// The gate answered a client message itself.
    Client,
    /// A server over stdio: one channel, no streams.
    Stdio,
    /// The upstream's stream of the response to this request (a client's, or the proxy's own).
    Request(IdKey),
    /// The upstream's GET stream.
    Standalone,
}

/// An open request stream.
struct RequestStream {
    sender: StreamSender,
    token: Option<IdKey>,
    opened: u64,
}

/// A client's open streams.
pub struct Routes {
    /// The bytes a stream (and the backlog) may hold that the client has not read yet.
    budget: usize,
    requests: HashMap<IdKey, RequestStream>,
    /// The requests of each open batch stream, by the batch's key.
    batches: HashMap<IdKey, Vec<RequestId>>,
    batches_opened: u64,
    /// HTTP failures of the upstream for requests whose answer has not been taken yet.
    failures: HashMap<IdKey, HttpFailure>,
    tokens: HashMap<IdKey, IdKey>,
    standalone: Option<StreamSender>,
    backlog: VecDeque<Outgoing>,
    /// The bytes of the messages in the backlog.
    backlog_bytes: usize,
    opened: u64,
    dropped: u64,
}

/// Where a message for the client goes.
enum Route {
    /// It answers the request (or batch) with this key: on its stream, which it ends.
    Answer(IdKey),
    /// It is about the request with this key (progress, a subscription): on its stream.
    Related(IdKey),
    /// Neither: where it came from says where it goes.
    Unrelated,
}

/// What became of a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Delivery {
    /// On a stream.
    Sent,
    /// Waiting for the GET stream.
    Waiting,
    /// Nowhere: its stream is gone (the client disconnected or is too slow to read).
    Dropped,
}

impl Default for Routes {
    fn default() -> Self {
        Routes::new(toolschema_mcp::framing::DEFAULT_MAX_MESSAGE_BYTES)
    }
}

impl Routes {
    /// A client's streams, each holding at most [`STREAM_CAPACITY`] messages and, but for one
    /// message, `budget` bytes the client has not read; so does the backlog waiting for its GET
    /// stream.
    pub fn new(budget: usize) -> Routes {
        Routes {
            budget,
            requests: HashMap::new(),
            batches: HashMap::new(),
            batches_opened: 0,
            failures: HashMap::new(),
            tokens: HashMap::new(),
            standalone: None,
            backlog: VecDeque::new(),
            backlog_bytes: 0,
            opened: 0,
            dropped: 0,
        }
    }

    /// A stream for the response to request `id`, with the progress token it asked with. A
    /// stream already open for that id is replaced (its client gets no answer on it).
    pub fn open_request(&mut self, id: IdKey, token: Option<IdKey>) -> StreamReceiver {
        let (sender, receiver) = queue::stream(STREAM_CAPACITY, self.budget);
        self.opened += 1;
        if let Some(token) = &token {
            self.tokens.insert(token.clone(), id.clone());
        }
        let stream = RequestStream {
            sender,
            token,
            opened: self.opened,
        };
        if let Some(old) = self.requests.insert(id, stream) {
            self.forget_token(old.token.as_ref());
        }
        receiver
    }

    /// A stream for the answer to a batch holding `requests`, under a key of its own (its
    /// answer is a batch, routed by the requests it answers).
    pub fn open_batch(&mut self, requests: Vec<RequestId>) -> (IdKey, StreamReceiver) {
        self.batches_opened += 1;
        let key = IdKey::of_batch(self.batches_opened);
        self.batches.insert(key.clone(), requests);
        (key.clone(), self.open_request(key, None))
    }

    /// The requests of the batch whose stream is `key` (none when `key` is not a batch's).
    pub fn batch_requests(&self, key: &IdKey) -> Vec<RequestId> {
        self.batches.get(key).cloned().unwrap_or_default()
    }

    /// The GET stream; what waited for it comes first. Replaces an earlier one.
    pub fn open_standalone(&mut self) -> StreamReceiver {
        let (sender, receiver) = queue::stream(STREAM_CAPACITY, self.budget);
        self.backlog_bytes = 0;
        for waiting in self.backlog.drain(..) {
            if sender.try_send(waiting).is_err() {
                self.dropped += 1;
            }
        }
        self.standalone = Some(sender);
        receiver
    }

    /// Whether the request stream for `id` is open.
    pub fn is_open(&self, id: &IdKey) -> bool {
        self.requests.get(id).is_some_and(|s| !s.sender.is_closed())
    }

    /// Whether a GET stream is open.
    pub fn has_standalone(&self) -> bool {
        self.standalone.as_ref().is_some_and(|s| !s.is_closed())
    }

    /// Close the request stream for `id` (its client went away, or it timed out).
    pub fn close_request(&mut self, id: &IdKey) {
        if let Some(stream) = self.requests.remove(id) {
            self.forget_token(stream.token.as_ref());
        }
        self.forget_batch(id);
    }

    fn forget_batch(&mut self, key: &IdKey) {
        self.batches.remove(key);
    }

    /// Remember that the upstream answered the request `id` with an HTTP failure, to be passed
    /// on as it was when its answer reaches the client.
    pub fn fail_request(&mut self, id: &IdKey, failure: HttpFailure) {
        if self.is_open(id) {
            self.failures.insert(id.clone(), failure);
        }
    }

    /// The stream a message for the client ends, if it is an answer to an open request (or
    /// batch), and whether that answer is one to any request of `requests`.
    pub fn answers_any(&self, data: &[u8], requests: &[IdKey]) -> Option<IdKey> {
        let Route::Answer(key) = self.route(data) else {
            return None;
        };
        let batch = self.batches.get(&key);
        let answers = requests.iter().any(|request| {
            *request == key || batch.is_some_and(|b| b.iter().any(|r| r.key() == request))
        });
        answers.then_some(key)
    }

    /// The HTTP failure recorded for request `id`, if any.
    pub fn take_failure(&mut self, id: &IdKey) -> Option<HttpFailure> {
        self.failures.remove(id)
    }

    /// Close every stream: the session ended. The failures recorded stay, for the answers
    /// queued with them and not read yet.
    pub fn close_all(&mut self) {
        self.requests.clear();
        self.batches.clear();
        self.tokens.clear();
        self.standalone = None;
        self.backlog.clear();
        self.backlog_bytes = 0;
    }

    /// How many messages were dropped because no stream could take them.
    #[cfg(test)]
    pub fn dropped(&self) -> u64 {
        self.dropped
    }

    fn forget_token(&mut self, token: Option<&IdKey>) {
        if let Some(token) = token {
            self.tokens.remove(token);
        }
    }

    /// Put a message for the client on its stream.
    #[cfg(test)]
    pub fn deliver(
        &mut self,
        data: Vec<u8>,
        event_id: Option<String>,
        origin: &Origin,
    ) -> Delivery {
        self.deliver_shown(data, event_id, origin, |data| data)
    }

    /// Put a message for the client on its stream, routed by the ids it holds as `data` has
    /// them, and sent as `shown` makes it (a lane gives the client's own ids back only once the
    /// stream is chosen: another client of the lane may use the same ids).
    pub fn deliver_shown(
        &mut self,
        data: Vec<u8>,
        event_id: Option<String>,
        origin: &Origin,
        shown: impl FnOnce(Vec<u8>) -> Vec<u8>,
    ) -> Delivery {
        match self.route(&data) {
            Route::Answer(key) => match self.requests.remove(&key) {
                Some(stream) => {
                    self.forget_token(stream.token.as_ref());
                    self.forget_batch(&key);
                    let outgoing = Outgoing {
                        event_id,
                        data: shown(data),
                        last: true,
                    };
                    match stream.sender.try_send(outgoing) {
                        Ok(()) => Delivery::Sent,
                        Err(Refused::Full) => {
                            // Answered already: nothing to cancel, the stream just ends.
                            report(&too_slow("the stream of a request", self.budget));
                            self.drop_one()
                        }
                        Err(Refused::Closed(_)) => self.drop_one(),
                    }
                }
                // Replayed on a resumed GET stream: it goes there.
                None if *origin == Origin::Standalone => {
                    self.onto_standalone(shown(data), event_id)
                }
                None => self.drop_one(),
            },
            Route::Related(id) => self.onto_request(&id, shown(data), event_id),
            Route::Unrelated => self.unrelated(shown(data), event_id, origin),
        }
    }

    /// Where a message for the client goes, by what it holds.
    fn route(&self, data: &[u8]) -> Route {
        let Some(text) = std::str::from_utf8(data).ok() else {
            return Route::Unrelated;
        };
        match read(text) {
            Ok(Read::One(message)) => match &message.kind {
                Kind::Response { id, .. } => Route::Answer(id.key().clone()),
                _ => wire::progress_token(text, &message)
                    .and_then(|token| self.tokens.get(&token).cloned())
                    .or_else(|| wire::subscription(text, &message))
                    .filter(|id| self.is_open(id))
                    .map_or(Route::Unrelated, Route::Related),
            },
            // A batch of answers answers a client's batch: it goes on the stream of the batch
            // that holds every request it answers (one of its ids may be another request's too,
            // in flight elsewhere, whose duplicate the proxy refused).
            Ok(Read::Batch(elements)) => {
                let answered: Vec<IdKey> = elements
                    .iter()
                    .filter_map(|range| {
                        toolschema_gate::message::read_object(text, range.clone()).ok()
                    })
                    .filter_map(|message| match message.kind {
                        Kind::Response { id, .. } => Some(id.key().clone()),
                        _ => None,
                    })
                    .collect();
                self.batches
                    .iter()
                    .find(|(_, requests)| {
                        !answered.is_empty()
                            && answered
                                .iter()
                                .all(|key| requests.iter().any(|r| r.key() == key))
                    })
                    .map_or(Route::Unrelated, |(batch, _)| Route::Answer(batch.clone()))
            }
            Err(_) => Route::Unrelated,
        }
    }

    /// A message that answers nothing and names no request: where it came from says where it
    /// goes.
    fn unrelated(&mut self, data: Vec<u8>, event_id: Option<String>, origin: &Origin) -> Delivery {
        match origin {
            Origin::Request(id) if self.is_open(id) => {
                let id = id.clone();
                self.onto_request(&id, data, event_id)
            }
            Origin::Standalone => self.onto_standalone(data, event_id),
            _ => {
                let open: Vec<(&IdKey, u64)> = self
                    .requests
                    .iter()
                    .filter(|(_, s)| !s.sender.is_closed())
                    .map(|(id, s)| (id, s.opened))
                    .collect();
                if open.len() == 1 || (!open.is_empty() && !self.has_standalone()) {
                    let newest = open
                        .iter()
                        .max_by_key(|(_, opened)| *opened)
                        .map(|(id, _)| (*id).clone());
                    if let Some(id) = newest {
                        return self.onto_request(&id, data, event_id);
                    }
                }
                self.onto_standalone(data, event_id)
            }
        }
    }

    fn onto_request(&mut self, id: &IdKey, data: Vec<u8>, event_id: Option<String>) -> Delivery {
        let Some(stream) = self.requests.get(id) else {
            return self.drop_one();
        };
        let outgoing = Outgoing {
            event_id,
            data,
            last: false,
        };
        match stream.sender.try_send(outgoing) {
            Ok(()) => Delivery::Sent,
            Err(Refused::Full) => {
                // A client that does not read its stream loses it.
                report(&too_slow("the stream of a request", self.budget));
                if let Some(stream) = self.requests.remove(id) {
                    self.forget_token(stream.token.as_ref());
                    stream.sender.lose();
                }
                self.forget_batch(id);
                self.drop_one()
            }
            Err(Refused::Closed(_)) => {
                self.close_request(id);
                self.drop_one()
            }
        }
    }

    fn onto_standalone(&mut self, data: Vec<u8>, event_id: Option<String>) -> Delivery {
        let outgoing = Outgoing {
            event_id,
            data,
            last: false,
        };
        if let Some(sender) = &self.standalone {
            match sender.try_send(outgoing) {
                Ok(()) => return Delivery::Sent,
                Err(Refused::Full) => {
                    report(&too_slow("its GET stream", self.budget));
                    if let Some(sender) = self.standalone.take() {
                        sender.lose();
                    }
                    return self.drop_one();
                }
                Err(Refused::Closed(outgoing)) => {
                    self.standalone = None;
                    return self.wait(outgoing);
                }
            }
        }
        self.wait(outgoing)
    }

    /// Keep a message for the GET stream; the oldest go past [`BACKLOG`] messages or the
    /// budget (but for the newest message).
    fn wait(&mut self, outgoing: Outgoing) -> Delivery {
        let size = outgoing.data.len();
        while !self.backlog.is_empty()
            && (self.backlog.len() >= BACKLOG
                || self.backlog_bytes.saturating_add(size) > self.budget)
        {
            if let Some(oldest) = self.backlog.pop_front() {
                self.backlog_bytes -= oldest.data.len();
            }
            self.dropped += 1;
        }
        self.backlog_bytes += size;
        self.backlog.push_back(outgoing);
        Delivery::Waiting
    }

    fn drop_one(&mut self) -> Delivery {
        self.dropped += 1;
        Delivery::Dropped
    }
}

/// What the proxy reports when a client lost a stream it did not read.
fn too_slow(stream: &str, budget: usize) -> String {
    format!(
        "a client did not read {stream} and lost it: more than {STREAM_CAPACITY} messages or {budget} bytes were waiting for it (--max-message-bytes)"
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use toolschema_gate::message::RequestId;

    fn key(raw: &str) -> IdKey {
        RequestId::from_text(raw).key().clone()
    }

    fn data(value: serde_json::Value) -> Vec<u8> {
        serde_json::to_vec(&value).unwrap()
    }

    fn drain(receiver: &mut StreamReceiver) -> Vec<serde_json::Value> {
        let waker = futures::task::noop_waker();
        let mut cx = std::task::Context::from_waker(&waker);
        let mut out = Vec::new();
        while let std::task::Poll::Ready(Some(item)) = receiver.poll_recv(&mut cx) {
            out.push(serde_json::from_slice(&item.data).unwrap());
        }
        out
    }

    #[test]
    fn responses_and_progress_go_to_their_request() {
        let mut routes = Routes::default();
        let mut call = routes.open_request(key("1"), Some(key("\"tok\"")));
        let mut other = routes.open_request(key("2"), None);
        let progress = serde_json::json!({"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progressToken": "tok", "progress": 1}});
        assert_eq!(
            routes.deliver(data(progress.clone()), None, &Origin::Stdio),
            Delivery::Sent
        );
        let answer = serde_json::json!({"jsonrpc": "2.0", "id": 1.0, "result": {}});
        assert_eq!(
            routes.deliver(data(answer.clone()), None, &Origin::Stdio),
            Delivery::Sent
        );
        assert_eq!(drain(&mut call), vec![progress.clone(), answer]);
        assert!(drain(&mut other).is_empty());
        // The request is answered: its token is forgotten, and a late one goes elsewhere.
        assert_eq!(
            routes.deliver(data(progress.clone()), None, &Origin::Stdio),
            Delivery::Sent
        );
        assert_eq!(drain(&mut other), vec![progress]);
    }

    #[test]
    fn unasked_messages_prefer_the_one_request_then_the_get_stream() {
        let mut routes = Routes::default();
        let ask = serde_json::json!({"jsonrpc": "2.0", "id": "s1", "method": "sampling/createMessage", "params": {}});
        // Nothing open: it waits for the GET stream.
        assert_eq!(
            routes.deliver(data(ask.clone()), None, &Origin::Stdio),
            Delivery::Waiting
        );
        let mut get = routes.open_standalone();
        assert_eq!(drain(&mut get), vec![ask.clone()]);
        let mut call = routes.open_request(key("7"), None);
        assert_eq!(
            routes.deliver(data(ask.clone()), None, &Origin::Stdio),
            Delivery::Sent
        );
        assert_eq!(drain(&mut call), vec![ask.clone()]);
        let mut second = routes.open_request(key("8"), None);
        assert_eq!(
            routes.deliver(data(ask.clone()), None, &Origin::Stdio),
            Delivery::Sent
        );
        assert_eq!(drain(&mut get), vec![ask.clone()]);
        // An upstream says which stream it sent a message on.
        let origin = Origin::Request(key("8"));
        assert_eq!(
            routes.deliver(data(ask.clone()), Some("e1".into()), &origin),
            Delivery::Sent
        );
        assert_eq!(drain(&mut second), vec![ask]);
        assert!(drain(&mut call).is_empty());
    }

    #[test]
    fn a_response_nobody_waits_for_is_dropped_and_a_slow_client_loses_its_stream() {
        let mut routes = Routes::default();
        let answer = serde_json::json!({"jsonrpc": "2.0", "id": 3, "result": {}});
        assert_eq!(
            routes.deliver(data(answer), None, &Origin::Stdio),
            Delivery::Dropped
        );
        let _call = routes.open_request(key("4"), None);
        let note =
            serde_json::json!({"jsonrpc": "2.0", "method": "notifications/message", "params": {}});
        for _ in 0..STREAM_CAPACITY {
            assert_eq!(
                routes.deliver(data(note.clone()), None, &Origin::Request(key("4"))),
                Delivery::Sent
            );
        }
        assert_eq!(
            routes.deliver(data(note.clone()), None, &Origin::Request(key("4"))),
            Delivery::Dropped
        );
        assert!(!routes.is_open(&key("4")));
        assert_eq!(routes.dropped(), 2);
    }

    #[test]
    fn a_client_that_does_not_read_loses_its_stream_past_its_byte_budget() {
        let mut routes = Routes::new(1000);
        let mut call = routes.open_request(key("4"), None);
        let note = |n: usize| {
            data(
                serde_json::json!({"jsonrpc": "2.0", "method": "notifications/message", "params": {"data": "x".repeat(n)}}),
            )
        };
        let origin = Origin::Request(key("4"));
        for _ in 0..3 {
            assert_eq!(routes.deliver(note(250), None, &origin), Delivery::Sent);
        }
        assert_eq!(routes.deliver(note(250), None, &origin), Delivery::Dropped);
        assert!(!routes.is_open(&key("4")));
        // What was queued is read, then the stream ends, lost.
        assert_eq!(drain(&mut call).len(), 3);
        assert!(call.was_lost());
        // The backlog waiting for the GET stream keeps the newest within the budget.
        for _ in 0..10 {
            routes.deliver(note(250), None, &Origin::Stdio);
        }
        let mut get = routes.open_standalone();
        assert_eq!(drain(&mut get).len(), 3);
        // One message larger than the budget still goes on an empty stream.
        assert_eq!(
            routes.deliver(note(5000), None, &Origin::Stdio),
            Delivery::Sent
        );
        assert_eq!(drain(&mut get).len(), 1);
    }

    #[test]
    fn a_batch_answer_goes_to_its_batch_whichever_answer_comes_first() {
        let mut routes = Routes::default();
        let mut single = routes.open_request(key("1"), None);
        let (batch_key, mut batch) = routes.open_batch(vec![
            RequestId::from_text("\"c\""),
            RequestId::from_text("1"),
        ]);
        assert_eq!(
            routes.batch_requests(&batch_key),
            [RequestId::from_text("\"c\""), RequestId::from_text("1")]
        );
        // The proxy's refusal of the batch's request 1 (an id in flight elsewhere) comes first.
        let answers = serde_json::json!([
            {"jsonrpc": "2.0", "id": 1, "error": {"code": -32600, "message": "in flight"}},
            {"jsonrpc": "2.0", "id": "c", "result": {}},
        ]);
        assert_eq!(
            routes.deliver(data(answers.clone()), None, &Origin::Stdio),
            Delivery::Sent
        );
        assert_eq!(drain(&mut batch), vec![answers]);
        assert!(drain(&mut single).is_empty());
        assert!(routes.is_open(&key("1")));
        assert!(routes.batch_requests(&batch_key).is_empty());
    }

    #[test]
    fn two_batches_sharing_an_id_each_get_their_own_answer() {
        let mut routes = Routes::default();
        let (_, mut first) = routes.open_batch(vec![
            RequestId::from_text("1"),
            RequestId::from_text("\"slow\""),
        ]);
        let (_, mut second) =
            routes.open_batch(vec![RequestId::from_text("1"), RequestId::from_text("2")]);
        let refused = serde_json::json!([
            {"jsonrpc": "2.0", "id": 1, "error": {"code": -32600, "message": "in flight"}},
            {"jsonrpc": "2.0", "id": 2, "result": {}},
        ]);
        routes.deliver(data(refused.clone()), None, &Origin::Stdio);
        assert_eq!(drain(&mut second), vec![refused]);
        let answered = serde_json::json!([
            {"jsonrpc": "2.0", "id": "slow", "result": {}},
            {"jsonrpc": "2.0", "id": 1, "result": {}},
        ]);
        routes.deliver(data(answered.clone()), None, &Origin::Stdio);
        assert_eq!(drain(&mut first), vec![answered]);
    }

    #[test]
    fn the_backlog_is_bounded() {
        let mut routes = Routes::default();
        let note =
            serde_json::json!({"jsonrpc": "2.0", "method": "notifications/message", "params": {}});
        for _ in 0..BACKLOG + 5 {
            routes.deliver(data(note.clone()), None, &Origin::Stdio);
        }
        assert_eq!(routes.dropped(), 5);
        let mut get = routes.open_standalone();
        assert_eq!(drain(&mut get).len(), BACKLOG);
    }
}
