//! Newline-delimited JSON-RPC framing (the MCP stdio transport), read with a size limit.
//!
//! A line is never buffered past the limit: once it grows too long, the rest of it is read and
//! dropped, and only its length and a few bytes from each end are kept (enough to find the request
//! id of most messages, so the sender can be told what happened).

use tokio::io::{AsyncBufRead, AsyncBufReadExt};

/// The default largest message accepted: 16 MiB, room for large tool results (images are sent as
/// base64 text) while a peer that never sends a newline cannot exhaust memory.
pub const DEFAULT_MAX_MESSAGE_BYTES: usize = 16 * 1024 * 1024;

/// How many bytes of each end of an oversized line are kept.
const KEPT_ENDS: usize = 512;

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

/// Reads lines of at most `max_bytes` bytes from a buffered stream.
pub struct LineReader<R> {
    inner: R,
    max_bytes: usize,
    line: Vec<u8>,
}

impl<R: AsyncBufRead + Unpin> LineReader<R> {
    /// A reader that refuses lines longer than `max_bytes` (the newline not counted).
    pub fn new(inner: R, max_bytes: usize) -> Self {
        LineReader {
            inner,
            max_bytes,
            line: Vec::new(),
        }
    }

    /// The next line, `None` at the end of the stream. Empty lines are skipped. An unterminated
    /// last line is returned as a line.
    pub async fn next(&mut self) -> std::io::Result<Option<Frame>> {
        loop {
            let frame = self.next_frame().await?;
            match frame {
                Some(Frame::Line(line)) if is_blank(&line) => continue,
                other => return Ok(other),
            }
        }
    }

    async fn next_frame(&mut self) -> std::io::Result<Option<Frame>> {
        self.line.clear();
        loop {
            let available = self.inner.fill_buf().await?;
            if available.is_empty() {
                if self.line.is_empty() {
                    return Ok(None);
                }
                return Ok(Some(Frame::Line(std::mem::take(&mut self.line))));
            }
            let newline = memchr(available);
            let take = newline.unwrap_or(available.len());
            if self.line.len() + take > self.max_bytes {
                let head_len = self.line.len().min(KEPT_ENDS);
                let mut head = self.line[..head_len].to_vec();
                let missing = KEPT_ENDS - head.len();
                head.extend_from_slice(&available[..take.min(missing)]);
                let length = self.line.len();
                let tail = self.line[self.line.len().saturating_sub(KEPT_ENDS)..].to_vec();
                self.line.clear();
                return self.discard_rest(length, head, tail).await.map(Some);
            }
            self.line.extend_from_slice(&available[..take]);
            match newline {
                Some(at) => {
                    self.inner.consume(at + 1);
                    return Ok(Some(Frame::Line(std::mem::take(&mut self.line))));
                }
                None => {
                    let consumed = available.len();
                    self.inner.consume(consumed);
                }
            }
        }
    }

    /// Read and drop the rest of an oversized line whose first `length` bytes were already taken
    /// from the buffer (the last of them in `tail`), keeping its last bytes.
    async fn discard_rest(
        &mut self,
        mut length: usize,
        head: Vec<u8>,
        mut tail: Vec<u8>,
    ) -> std::io::Result<Frame> {
        loop {
            let available = self.inner.fill_buf().await?;
            if available.is_empty() {
                break;
            }
            let newline = memchr(available);
            let take = newline.unwrap_or(available.len());
            let chunk = &available[..take];
            length += chunk.len();
            if chunk.len() >= KEPT_ENDS {
                tail.clear();
                tail.extend_from_slice(&chunk[chunk.len() - KEPT_ENDS..]);
            } else {
                tail.extend_from_slice(chunk);
                let excess = tail.len().saturating_sub(KEPT_ENDS);
                tail.drain(..excess);
            }
            let consumed = newline.map_or(available.len(), |at| at + 1);
            self.inner.consume(consumed);
            if newline.is_some() {
                break;
            }
        }
        if tail.last() == Some(&b'\r') {
            tail.pop();
        }
        Ok(Frame::Oversized(OversizedLine { length, head, tail }))
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
    line.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(line)
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::BufReader;

    async fn frames(input: &[u8], max: usize, capacity: usize) -> Vec<Frame> {
        let mut reader = LineReader::new(BufReader::with_capacity(capacity, input), max);
        let mut out = Vec::new();
        while let Some(frame) = reader.next().await.unwrap() {
            out.push(frame);
        }
        out
    }

    fn line(s: &str) -> Frame {
        Frame::Line(s.as_bytes().to_vec())
    }

    #[tokio::test]
    async fn splits_lines_and_keeps_carriage_returns() {
        let got = frames(b"{\"a\":1}\n\n{\"b\":2}\r\n{\"c\":3}", 100, 4).await;
        assert_eq!(
            got,
            vec![line("{\"a\":1}"), line("{\"b\":2}\r"), line("{\"c\":3}")]
        );
    }

    #[tokio::test]
    async fn a_line_at_the_limit_passes_and_one_byte_more_is_dropped() {
        let exact = "x".repeat(10);
        let over = "y".repeat(11);
        let input = format!("{exact}\n{over}\nok\n");
        for capacity in [1, 3, 8, 64] {
            let got = frames(input.as_bytes(), 10, capacity).await;
            assert_eq!(
                got,
                vec![
                    line(&exact),
                    Frame::Oversized(OversizedLine {
                        length: 11,
                        head: over.as_bytes().to_vec(),
                        tail: over.as_bytes().to_vec(),
                    }),
                    line("ok"),
                ],
                "buffer capacity {capacity}"
            );
        }
    }

    #[tokio::test]
    async fn an_oversized_line_keeps_its_ends_not_its_body() {
        let body = format!(
            "{{\"method\":\"tools/call\",\"params\":{{\"x\":\"{}\"}},\"id\":7}}",
            "z".repeat(5000)
        );
        let input = format!("{body}\n{{\"id\":8}}\n");
        let got = frames(input.as_bytes(), 1000, 256).await;
        let Frame::Oversized(over) = &got[0] else {
            panic!("expected an oversized line, got {got:?}")
        };
        assert_eq!(over.length, body.len());
        assert_eq!(over.head, body.as_bytes()[..KEPT_ENDS]);
        assert_eq!(over.tail, body.as_bytes()[body.len() - KEPT_ENDS..]);
        assert_eq!(got[1], line("{\"id\":8}"));
    }

    #[test]
    fn trimming_removes_carriage_return_and_byte_order_mark() {
        assert_eq!(trim_line(b"\xEF\xBB\xBF{}\r"), b"{}");
        assert_eq!(trim_line(b"{}"), b"{}");
    }
}
