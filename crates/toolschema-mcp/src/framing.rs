//! Newline-delimited JSON-RPC framing (the MCP stdio transport), read with a size limit.
//!
//! A line is never buffered past the limit: once it grows too long, the rest of it is read and
//! dropped, and only its length and a few bytes from each end are kept (enough to find the request
//! id of most messages, so the sender can be told what happened). The framing itself is
//! [`LineSplitter`]; this module reads streams with it.

use std::io::BufRead;
use tokio::io::{AsyncBufRead, AsyncBufReadExt};
pub use toolschema_gate::framing::{
    trim_line, Frame, LineSplitter, OversizedLine, DEFAULT_MAX_MESSAGE_BYTES, KEPT_ENDS,
};

/// Reads lines of at most `max_bytes` bytes from a buffered stream: [`LineReader::next`] for an
/// async stream, [`LineReader::next_blocking`] for a blocking one.
pub struct LineReader<R> {
    inner: R,
    splitter: LineSplitter,
}

impl<R> LineReader<R> {
    /// A reader that refuses lines longer than `max_bytes` (the newline not counted).
    pub fn new(inner: R, max_bytes: usize) -> Self {
        LineReader {
            inner,
            splitter: LineSplitter::new(max_bytes),
        }
    }
}

impl<R: AsyncBufRead + Unpin> LineReader<R> {
    /// The next line, `None` at the end of the stream. Empty lines are skipped. An unterminated
    /// last line is returned as a line.
    pub async fn next(&mut self) -> std::io::Result<Option<Frame>> {
        loop {
            let available = self.inner.fill_buf().await?;
            let (consumed, frame) = self.splitter.next_frame(available);
            self.inner.consume(consumed);
            if let Some(frame) = frame {
                return Ok(frame);
            }
        }
    }
}

impl<R: BufRead> LineReader<R> {
    /// [`LineReader::next`] on a blocking stream.
    pub fn next_blocking(&mut self) -> std::io::Result<Option<Frame>> {
        loop {
            let available = match self.inner.fill_buf() {
                Ok(available) => available,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            let (consumed, frame) = self.splitter.next_frame(available);
            self.inner.consume(consumed);
            if let Some(frame) = frame {
                return Ok(frame);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::BufReader;

    /// The frames of `input`, read by both readers (which must agree).
    async fn frames(input: &[u8], max: usize, capacity: usize) -> Vec<Frame> {
        let mut reader = LineReader::new(BufReader::with_capacity(capacity, input), max);
        let mut out = Vec::new();
        while let Some(frame) = reader.next().await.unwrap() {
            out.push(frame);
        }
        let mut blocking = LineReader::new(std::io::BufReader::with_capacity(capacity, input), max);
        let mut blocking_out = Vec::new();
        while let Some(frame) = blocking.next_blocking().unwrap() {
            blocking_out.push(frame);
        }
        assert_eq!(
            out, blocking_out,
            "the async and the blocking reader disagree"
        );
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

    #[tokio::test]
    async fn a_byte_order_mark_before_the_first_line_is_dropped() {
        let got = frames(b"\xEF\xBB\xBF{\"a\":1}\n\xEF\xBB\xBF{}\n", 100, 2).await;
        assert_eq!(
            got,
            vec![line("{\"a\":1}"), Frame::Line(b"\xEF\xBB\xBF{}".to_vec())]
        );
    }

    #[test]
    fn trimming_removes_carriage_return_and_byte_order_mark() {
        assert_eq!(trim_line(b"\xEF\xBB\xBF{}\r"), b"{}");
        assert_eq!(trim_line(b"{}"), b"{}");
    }
}
