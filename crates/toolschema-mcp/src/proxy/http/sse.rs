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

/// Reads an event stream chunk by chunk.
#[derive(Debug)]
pub struct Decoder {
    max_event: usize,
    /// The start of a line not ended yet.
    line: Vec<u8>,
    /// The event being read.
    data: Vec<u8>,
    has_data: bool,
    id: Option<String>,
    /// A `\r` ended the last chunk: a `\n` starting the next one belongs to it.
    after_cr: bool,
}

impl Decoder {
    /// A decoder that refuses events (or lines) over `max_event` bytes.
    pub fn new(max_event: usize) -> Decoder {
        Decoder {
            max_event,
            line: Vec::new(),
            data: Vec::new(),
            has_data: false,
            id: None,
            after_cr: false,
        }
    }

    /// Read `chunk`; the events it completes, in order.
    pub fn push(&mut self, chunk: &[u8]) -> Result<Vec<Event>, EventTooLarge> {
        let mut events = Vec::new();
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
                self.id = Some(String::from_utf8_lossy(value).into_owned());
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
