//! Newline-delimited JSON-RPC framing (the MCP stdio transport): where a line ends, with a size
//! limit. Pure: it is fed bytes and says what they make; the readers that do I/O are elsewhere.
//!
//! A line is never buffered past the limit: once it grows too long, the rest of it is read and
//! dropped, and only its length and a few bytes from each end are kept (enough to find the request
//! id of most messages, so the sender can be told what happened).

/// The default largest message accepted: 16 MiB, room for large tool results (images are sent as
/// base64 text) while a peer that never sends a newline cannot exhaust memory.
pub const DEFAULT_MAX_MESSAGE_BYTES: usize = 16 * 1024 * 1024;

/// The UTF-8 byte order mark, which some writers put before the first message of a stream.
const BYTE_ORDER_MARK: &[u8] = b"\xEF\xBB\xBF";

/// How many bytes of each end of an oversized line are kept.
pub const KEPT_ENDS: usize = 512;

/// One unit read from a newline-delimited stream.
#[derive(Debug, PartialEq, Eq)]
pub enum Frame {
    /// A whole line, without its terminating `\n` (a trailing `\r` is kept: it is part of the
    /// bytes a forwarder passes on unchanged).
    Line(Vec<u8>),
    /// A line longer than the limit, which was dropped.
    Oversized(OversizedLine),
}

/// What is kept of a line that was too long: its length and its two ends.
#[derive(Debug, PartialEq, Eq)]
pub struct OversizedLine {
    /// The line's length in bytes, without the newline.
    pub length: usize,
    /// Its first bytes.
    pub head: Vec<u8>,
    /// Its last bytes.
    pub tail: Vec<u8>,
}

/// What one chunk of input gave.
enum Step {
    /// More input is needed.
    More,
    /// A frame is complete (`None`: the stream ended).
    Done(Option<Frame>),
}

impl Step {
    /// The frame to return, if any: blank lines are skipped.
    fn frame(self) -> Option<Option<Frame>> {
        match self {
            Step::More => None,
            Step::Done(Some(Frame::Line(line))) if is_blank(&line) => None,
            Step::Done(frame) => Some(frame),
        }
    }
}

/// The framing itself, fed one buffer of input at a time, so the async and the blocking reader
/// share it.
pub struct LineSplitter {
    max_bytes: usize,
    line: Vec<u8>,
    /// The line being dropped because it is over the limit.
    oversized: Option<OversizedLine>,
    /// No line has been completed yet: a byte order mark before the first one is not part of
    /// the stream's messages.
    at_start: bool,
}

impl LineSplitter {
    /// A splitter that refuses lines longer than `max_bytes` (the newline not counted).
    pub fn new(max_bytes: usize) -> LineSplitter {
        LineSplitter {
            max_bytes,
            line: Vec::new(),
            oversized: None,
            at_start: true,
        }
    }

    /// Take what it can from `available` (empty at the end of the stream): how many bytes were
    /// used, and the frame to return if one is complete (`Some(None)`: the stream ended). Blank
    /// lines are skipped.
    pub fn next_frame(&mut self, available: &[u8]) -> (usize, Option<Option<Frame>>) {
        let (consumed, step) = self.feed(available);
        (consumed, step.frame())
    }

    /// Take what it can from `available` (empty at the end of the stream): how many bytes were
    /// used, and whether a frame is complete.
    fn feed(&mut self, available: &[u8]) -> (usize, Step) {
        let (consumed, step) = self.feed_raw(available);
        match step {
            Step::Done(Some(Frame::Line(line))) if std::mem::take(&mut self.at_start) => {
                let line = match line.strip_prefix(BYTE_ORDER_MARK) {
                    Some(rest) => rest.to_vec(),
                    None => line,
                };
                (consumed, Step::Done(Some(Frame::Line(line))))
            }
            Step::Done(Some(_)) => {
                self.at_start = false;
                (consumed, step)
            }
            step => (consumed, step),
        }
    }

    /// [`LineSplitter::feed`], byte order mark included.
    fn feed_raw(&mut self, available: &[u8]) -> (usize, Step) {
        if self.oversized.is_some() {
            return self.discard(available);
        }
        if available.is_empty() {
            if self.line.is_empty() {
                return (0, Step::Done(None));
            }
            return (
                0,
                Step::Done(Some(Frame::Line(std::mem::take(&mut self.line)))),
            );
        }
        let newline = memchr(available);
        let take = newline.unwrap_or(available.len());
        if self.line.len() + take > self.max_bytes {
            // Keep the ends of what was read so far; the rest (this buffer included) is counted
            // and dropped by `discard`.
            let head_len = self.line.len().min(KEPT_ENDS);
            let mut head = self.line[..head_len].to_vec();
            let missing = KEPT_ENDS - head.len();
            head.extend_from_slice(&available[..take.min(missing)]);
            let tail = self.line[self.line.len().saturating_sub(KEPT_ENDS)..].to_vec();
            self.oversized = Some(OversizedLine {
                length: self.line.len(),
                head,
                tail,
            });
            self.line = Vec::new();
            return (0, Step::More);
        }
        self.line.extend_from_slice(&available[..take]);
        match newline {
            Some(at) => (
                at + 1,
                Step::Done(Some(Frame::Line(std::mem::take(&mut self.line)))),
            ),
            None => (available.len(), Step::More),
        }
    }

    /// Count and drop the rest of an oversized line, keeping its last bytes.
    fn discard(&mut self, available: &[u8]) -> (usize, Step) {
        let Some(over) = self.oversized.as_mut() else {
            return (0, Step::More);
        };
        let newline = memchr(available);
        let take = newline.unwrap_or(available.len());
        let chunk = &available[..take];
        over.length += chunk.len();
        if chunk.len() >= KEPT_ENDS {
            over.tail.clear();
            over.tail
                .extend_from_slice(&chunk[chunk.len() - KEPT_ENDS..]);
        } else {
            over.tail.extend_from_slice(chunk);
            let excess = over.tail.len().saturating_sub(KEPT_ENDS);
            over.tail.drain(..excess);
        }
        let consumed = newline.map_or(available.len(), |at| at + 1);
        if newline.is_none() && !available.is_empty() {
            return (consumed, Step::More);
        }
        let Some(mut over) = self.oversized.take() else {
            return (consumed, Step::More);
        };
        if over.tail.last() == Some(&b'\r') {
            over.tail.pop();
        }
        (consumed, Step::Done(Some(Frame::Oversized(over))))
    }
}

fn memchr(bytes: &[u8]) -> Option<usize> {
    bytes.iter().position(|&b| b == b'\n')
}

fn is_blank(line: &[u8]) -> bool {
    line.iter().all(|b| matches!(b, b' ' | b'\t' | b'\r'))
}

/// A line's bytes without a trailing `\r` (and without a UTF-8 byte order mark), as parsed.
pub fn trim_line(line: &[u8]) -> &[u8] {
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    line.strip_prefix(BYTE_ORDER_MARK).unwrap_or(line)
}
