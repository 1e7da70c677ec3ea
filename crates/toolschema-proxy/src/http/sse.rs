//! Server-sent events: reading an upstream's event stream with a bound on each event, and
//! writing the proxy's own.
//!
//! A decoder of its own rather than the `sse-stream` crate the snapshot uses: the proxy must
//! refuse an event past `--max-message-bytes` while it arrives, before it is buffered whole,
//! and keep each event's `id` exactly as sent (clients resume with it).

use bytes::Bytes;

/// One event: its own `id` (as sent) and its `data` (lines joined with `\n`). Events without data
/// (keep-alive comments, a `retry` alone, a priming event) are not reported.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Event {
    /// The `id` field, if the event had one.
    pub id: Option<String>,
    /// The `data` field.
    pub data: Vec<u8>,
}

/// An event larger than allowed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("an event of the upstream's stream is larger than {0} bytes")]
pub struct EventTooLarge(pub usize);

/// The byte order mark an event stream may start with (the UTF-8 decoding of the WHATWG
/// "event stream interpretation" strips it).
const BOM: &[u8] = b"\xEF\xBB\xBF";

/// Reads an event stream chunk by chunk, as the WHATWG "event stream interpretation" does: lines
/// end with CRLF, LF or CR; a leading byte order mark is dropped; `:` starts a comment; a field's
/// value loses one leading space; `data` lines are joined with `\n`; an `id` holding NUL is
/// ignored, and the last id seen stays the stream's last event id until another replaces it (an
/// event without data sets it too); an event not ended by a blank line is not dispatched.
#[derive(Debug)]
pub struct Decoder {
    max_event: usize,
    /// The first bytes of the stream while they may still be a byte order mark.
    head: Option<Vec<u8>>,
    /// The start of a line not ended yet.
    line: Vec<u8>,
    /// The event being read.
    data: Vec<u8>,
    has_data: bool,
    id: Option<String>,
    /// The last event id buffer: the last `id` field read.
    last_id_buffer: Option<String>,
    /// The last event id, as of the last event dispatched.
    last_id: Option<String>,
    /// A `\r` ended the last chunk: a `\n` starting the next one belongs to it.
    after_cr: bool,
}

impl Decoder {
    /// A decoder that refuses events (or lines) over `max_event` bytes.
    pub fn new(max_event: usize) -> Decoder {
        Decoder {
            max_event,
            head: Some(Vec::new()),
            line: Vec::new(),
            data: Vec::new(),
            has_data: false,
            id: None,
            last_id_buffer: None,
            last_id: None,
            after_cr: false,
        }
    }

    /// The stream's last event id (what a client resumes with), as of the last event ended;
    /// `None` before any `id` field, or after an empty one.
    pub fn last_event_id(&self) -> Option<&str> {
        self.last_id.as_deref().filter(|id| !id.is_empty())
    }

    /// Read `chunk`; the events it completes, in order.
    pub fn push(&mut self, chunk: &[u8]) -> Result<Vec<Event>, EventTooLarge> {
        let Some(mut head) = self.head.take() else {
            return self.push_lines(chunk);
        };
        head.extend_from_slice(chunk);
        if head.len() < BOM.len() && BOM.starts_with(&head) {
            // Too short yet to tell.
            self.head = Some(head);
            return Ok(Vec::new());
        }
        let start = if head.starts_with(BOM) { BOM.len() } else { 0 };
        self.push_lines(&head[start..])
    }

    fn push_lines(&mut self, chunk: &[u8]) -> Result<Vec<Event>, EventTooLarge> {
        let mut events = Vec::new();
        if chunk.is_empty() {
            // Nothing to read; a `\r` that ended the last chunk still waits for its `\n`.
            return Ok(events);
        }
        let mut rest = chunk;
        if self.after_cr {
            self.after_cr = false;
            if let Some(stripped) = rest.strip_prefix(b"\n") {
                rest = stripped;
            }
        }
        while let Some(end) = rest.iter().position(|b| *b == b'\n' || *b == b'\r') {
            self.line.extend_from_slice(&rest[..end]);
            let ended_by_cr = rest[end] == b'\r';
            rest = &rest[end + 1..];
            if ended_by_cr {
                match rest.first() {
                    Some(b'\n') => rest = &rest[1..],
                    None => self.after_cr = true,
                    Some(_) => {}
                }
            }
            let line = std::mem::take(&mut self.line);
            if let Some(event) = self.line_ended(&line)? {
                events.push(event);
            }
        }
        self.line.extend_from_slice(rest);
        if self.line.len() + self.data.len() > self.max_event {
            return Err(EventTooLarge(self.max_event));
        }
        Ok(events)
    }

    fn line_ended(&mut self, line: &[u8]) -> Result<Option<Event>, EventTooLarge> {
        if line.is_empty() {
            let data = std::mem::take(&mut self.data);
            let had_data = std::mem::replace(&mut self.has_data, false);
            self.last_id.clone_from(&self.last_id_buffer);
            // Each event is passed on with its own id only: the client keeps its last event id.
            let id = self.id.take();
            return Ok(had_data.then_some(Event { id, data }));
        }
        if line.starts_with(b":") {
            return Ok(None);
        }
        let (field, value) = match line.iter().position(|b| *b == b':') {
            Some(colon) => {
                let value = &line[colon + 1..];
                (&line[..colon], value.strip_prefix(b" ").unwrap_or(value))
            }
            None => (line, &b""[..]),
        };
        match field {
            b"data" => {
                if self.has_data {
                    self.data.push(b'\n');
                }
                self.data.extend_from_slice(value);
                self.has_data = true;
                if self.data.len() > self.max_event {
                    return Err(EventTooLarge(self.max_event));
                }
            }
            b"id" if !value.contains(&0) => {
                let id = String::from_utf8_lossy(value).into_owned();
                self.last_id_buffer = Some(id.clone());
                self.id = Some(id);
            }
            _ => {}
        }
        Ok(None)
    }
}

/// One message as an event of the proxy's own stream, with the upstream's `id` if it had one.
pub fn encode(id: Option<&str>, data: &[u8]) -> Bytes {
    let mut out = Vec::with_capacity(data.len() + 32);
    out.extend_from_slice(b"event: message\n");
    if let Some(id) = id.filter(|id| !id.contains(['\n', '\r'])) {
        out.extend_from_slice(b"id: ");
        out.extend_from_slice(id.as_bytes());
        out.push(b'\n');
    }
    // One line of JSON: one data field.
    out.extend_from_slice(b"data: ");
    out.extend_from_slice(data);
    out.extend_from_slice(b"\n\n");
    Bytes::from(out)
}

/// A comment that keeps a quiet stream open (and shows whether the client is still there).
pub const KEEP_ALIVE: &[u8] = b": keep-alive\n\n";

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn event(id: Option<&str>, data: &str) -> Event {
        Event {
            id: id.map(String::from),
            data: data.as_bytes().to_vec(),
        }
    }

    #[test]
    fn reads_events_across_chunks_with_every_line_ending() {
        let mut decoder = Decoder::new(1024);
        let mut events = decoder.push(b": hello\n\nid: 1\nevent: mess").unwrap();
        events.extend(
            decoder
                .push(b"age\ndata: {\"a\":\r\ndata: 1}\r\n\r")
                .unwrap(),
        );
        // An empty chunk between a `\r` and its `\n` changes nothing.
        events.extend(decoder.push(b"").unwrap());
        events.extend(decoder.push(b"\ndata:x\r\rid: 2\ndata").unwrap());
        events.extend(decoder.push(b"\n\nretry: 10\n\n").unwrap());
        assert_eq!(
            events,
            vec![
                event(Some("1"), "{\"a\":\n1}"),
                event(None, "x"),
                event(Some("2"), "")
            ]
        );
    }

    #[test]
    fn follows_the_event_stream_rules() {
        // A byte order mark at the start of the stream (cut across chunks) is dropped; one
        // later is part of a line. `data:` without a space, a field name alone, comments.
        let mut decoder = Decoder::new(1024);
        let mut events = decoder.push(b"\xEF\xBB").unwrap();
        events.extend(decoder.push(b"\xBFdata:a\n: note\ndata\n\n").unwrap());
        events.extend(decoder.push(b"\xEF\xBB\xBFdata: b\n\ndata: c\n\n").unwrap());
        assert_eq!(events, vec![event(None, "a\n"), event(None, "c")]);
        // The last event id stays until another replaces it, an event without data sets it
        // too, an id holding NUL is ignored, and an event not ended does not count.
        let mut decoder = Decoder::new(1024);
        decoder.push(b"id: 1\ndata: x\n\n").unwrap();
        assert_eq!(decoder.last_event_id(), Some("1"));
        decoder.push(b"data: y\n\nid: 2\n\n").unwrap();
        assert_eq!(decoder.last_event_id(), Some("2"));
        decoder.push(b"id: 3\x004\n\nretry: 5\n\n").unwrap();
        assert_eq!(decoder.last_event_id(), Some("2"));
        decoder.push(b"id: 9\ndata: z\n").unwrap();
        assert_eq!(decoder.last_event_id(), Some("2"));
        decoder.push(b"id\n\n").unwrap();
        assert_eq!(decoder.last_event_id(), None);
    }

    #[test]
    fn data_that_is_no_message_as_it_stands_is_refused_not_mended() {
        // Two data lines joined inside a string: a raw line break there is no JSON.
        let mut decoder = Decoder::new(1024);
        let events = decoder
            .push(b"data: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"text\":\"a\ndata: b\"}}\n\n")
            .unwrap();
        let [only] = events.as_slice() else {
            panic!("{events:?}")
        };
        let refused = super::super::wire::upstream_message(only.data.clone()).unwrap_err();
        assert!(refused.contains("not valid JSON"), "{refused}");
        // Between tokens a line break is whitespace: the message is passed on, on one line.
        let events = decoder
            .push(b"data: {\"jsonrpc\":\"2.0\",\ndata: \"id\":1,\"result\":{}}\n\n")
            .unwrap();
        assert_eq!(
            super::super::wire::upstream_message(events[0].data.clone()).unwrap(),
            b"{\"jsonrpc\":\"2.0\", \"id\":1,\"result\":{}}"
        );
    }

    #[test]
    fn refuses_an_event_past_the_limit_before_it_ends() {
        let mut decoder = Decoder::new(10);
        assert_eq!(decoder.push(b"data: 0123"), Ok(vec![]));
        assert_eq!(decoder.push(b"456789ab"), Err(EventTooLarge(10)));
        let mut decoder = Decoder::new(10);
        assert_eq!(
            decoder.push(b"data: 01234\ndata: 56789\n"),
            Err(EventTooLarge(10))
        );
    }

    #[test]
    fn writes_one_event_per_message() {
        assert_eq!(
            encode(Some("7"), b"{}"),
            Bytes::from_static(b"event: message\nid: 7\ndata: {}\n\n")
        );
        assert_eq!(
            encode(None, b"{}"),
            Bytes::from_static(b"event: message\ndata: {}\n\n")
        );
    }

    /// Whether a place in JSON text (between `before` and `after`) is inside a token: a string,
    /// a number or a literal.
    fn inside_a_token(before: &str, after: &str) -> bool {
        let word =
            |c: Option<char>| c.is_some_and(|c| c.is_ascii_alphanumeric() || ".+-".contains(c));
        inside_a_string(before) || (word(before.chars().last()) && word(after.chars().next()))
    }

    /// Whether JSON text that stops here stops inside a string.
    fn inside_a_string(text: &str) -> bool {
        let (mut inside, mut escaped) = (false, false);
        for c in text.chars() {
            match (inside, escaped, c) {
                (true, true, _) => escaped = false,
                (true, false, '\\') => escaped = true,
                (_, false, '"') => inside = !inside,
                _ => {}
            }
        }
        inside
    }

    proptest! {
        /// What the proxy writes reads back the same, however the bytes are cut into chunks.
        #[test]
        fn encoded_events_decode_in_any_chunks(
            messages in proptest::collection::vec(("[a-z0-9]{0,5}", "[ -~]{0,40}"), 0..6),
            cuts in proptest::collection::vec(0usize..400, 0..8),
        ) {
            let mut bytes = Vec::new();
            for (id, data) in &messages {
                bytes.extend_from_slice(&encode(Some(id.as_str()).filter(|i| !i.is_empty()), data.as_bytes()));
            }
            let mut cuts: Vec<usize> = cuts.into_iter().map(|c| c.min(bytes.len())).collect();
            cuts.sort_unstable();
            let mut decoder = Decoder::new(1 << 20);
            let mut events = Vec::new();
            let mut start = 0;
            for cut in cuts.into_iter().chain([bytes.len()]) {
                events.extend(decoder.push(&bytes[start..cut]).unwrap());
                start = cut;
            }
            prop_assert_eq!(events.len(), messages.len());
            for (event, (id, data)) in events.iter().zip(&messages) {
                prop_assert_eq!(event.id.as_deref(), Some(id.as_str()).filter(|i| !i.is_empty()));
                prop_assert_eq!(&event.data, data.as_bytes());
            }
        }

        /// For any event data, reached through any line endings, comments, a byte order mark
        /// and any cuts into chunks: either what is passed on reads as the same JSON value as
        /// the data, or the data is refused; never a different message. A message whose line
        /// breaks are all between tokens is passed on.
        #[test]
        fn event_data_is_passed_on_as_it_is_or_refused(
            text in "\\PC{0,12}|[a\n\r\"\\\\ ]{0,8}",
            id in 0u32..1000,
            pretty in any::<bool>(),
            breaks in proptest::collection::vec(any::<proptest::sample::Index>(), 0..4),
            endings in proptest::collection::vec(prop_oneof![Just("\n"), Just("\r\n"), Just("\r")], 1..4),
            bom in any::<bool>(),
            cuts in proptest::collection::vec(0usize..400, 0..6),
        ) {
            let value = serde_json::json!({"jsonrpc": "2.0", "id": id, "result": {"content": [{"type": "text", "text": text}]}});
            let compact = serde_json::to_string(&value).unwrap();
            let mut data = if pretty { serde_json::to_string_pretty(&value).unwrap() } else { compact.clone() };
            // Line breaks anywhere: between tokens, or inside a string (where they are no JSON).
            let mut between_tokens_only = true;
            for at in &breaks {
                let boundaries: Vec<usize> = (0..=data.len()).filter(|i| data.is_char_boundary(*i)).collect();
                let at = boundaries[at.index(boundaries.len())];
                between_tokens_only &= !inside_a_token(&data[..at], &data[at..]);
                data.insert(at, '\n');
            }
            // The event: one `data:` field per line of the data, each ended its own way.
            let mut stream = Vec::new();
            if bom {
                stream.extend_from_slice(BOM);
            }
            stream.extend_from_slice(b": comment\n");
            let mut ending = "\n";
            for (n, line) in data.split('\n').enumerate() {
                // `data:` without its space where the line does not start with one.
                let bare = n % 2 == 1 && !line.starts_with(' ');
                stream.extend_from_slice(if bare { b"data:" } else { b"data: " });
                stream.extend_from_slice(line.as_bytes());
                ending = endings[n % endings.len()];
                stream.extend_from_slice(ending.as_bytes());
            }
            // The blank line that ends the event (a LF after a CR would only finish its line).
            stream.extend_from_slice(ending.as_bytes());
            let mut cuts: Vec<usize> = cuts.into_iter().map(|c| c.min(stream.len())).collect();
            cuts.sort_unstable();
            let mut decoder = Decoder::new(1 << 20);
            let mut events = Vec::new();
            let mut start = 0;
            for cut in cuts.into_iter().chain([stream.len()]) {
                events.extend(decoder.push(&stream[start..cut]).unwrap());
                start = cut;
            }
            prop_assert_eq!(events.len(), 1);
            prop_assert_eq!(&events[0].data, data.as_bytes());
            let parse = |bytes: &[u8]| toolschema::json::parse(std::str::from_utf8(bytes).ok()?).ok();
            match super::super::wire::upstream_message(events[0].data.clone()) {
                Ok(passed) => {
                    prop_assert!(!passed.contains(&b'\n') && !passed.contains(&b'\r'));
                    let original = parse(data.as_bytes());
                    prop_assert!(original.is_some(), "passed on data that is no JSON: {:?}", data);
                    prop_assert_eq!(parse(&passed), original);
                }
                Err(_) => prop_assert!(
                    !(between_tokens_only && parse(data.as_bytes()).is_some()),
                    "refused a message: {:?}", data
                ),
            }
            if between_tokens_only {
                prop_assert_eq!(parse(data.as_bytes()), Some(serde_json::from_str(&compact).unwrap()));
            }
        }

        /// Any bytes are read without a panic, and no event is over the limit.
        #[test]
        fn any_bytes_are_read(chunks in proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..64), 0..8)) {
            let mut decoder = Decoder::new(50);
            for chunk in chunks {
                match decoder.push(&chunk) {
                    Ok(events) => prop_assert!(events.iter().all(|e| e.data.len() <= 50)),
                    Err(_) => break,
                }
            }
        }
    }
}
