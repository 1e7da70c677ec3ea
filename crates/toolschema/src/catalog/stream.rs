//! Scanning a catalog file read a block at a time, so that linting a large file never holds all of
//! it: the scan keeps only the text from the value it is reading onward, and the tools are read
//! back a few at a time by offset ([`ByteSource`]).
//!
//! For the shapes large catalogs come in (a `tools/list` result, a JSON-RPC response, an array of
//! tools) the scan checks the same syntax and finds the same tools at the same places as
//! [`CatalogLayout::scan_giving`](super::CatalogLayout) over the whole text. Each step (a key, a
//! separator, one tool skipped over) is taken on the text read so far, and taken again with more
//! text when it failed or reached the end of what was read. What the scan cannot settle alone (a
//! syntax error, a byte that is not UTF-8, any other shape) it leaves to the whole-text scan,
//! which says it in its own words: [`StreamScanError::NeedsWholeText`].

use super::{CatalogShape, ToolLocation};
use crate::json::reader::{Reader, SyntaxError};
use crate::json::{LineCursor, Position};
use std::io;
use std::ops::Range;

/// A file's bytes, read at any offset (a regular file: `std::os::unix::fs::FileExt::read_at`).
pub trait ByteSource: Sync {
    /// How many bytes the file holds.
    fn byte_len(&self) -> usize;

    /// Fill `buf` with the bytes from `offset` on; fails when the file holds fewer.
    fn read_exact_at(&self, buf: &mut [u8], offset: usize) -> io::Result<()>;
}

impl ByteSource for &[u8] {
    fn byte_len(&self) -> usize {
        self.len()
    }

    fn read_exact_at(&self, buf: &mut [u8], offset: usize) -> io::Result<()> {
        let bytes = offset
            .checked_add(buf.len())
            .and_then(|end| self.get(offset..end))
            .ok_or_else(|| io::Error::from(io::ErrorKind::UnexpectedEof))?;
        buf.copy_from_slice(bytes);
        Ok(())
    }
}

/// Why a streamed scan stopped.
#[derive(Debug)]
pub(crate) enum StreamScanError {
    /// Reading the source failed.
    Read(io::Error),
    /// Something only the whole text can settle, or say in the words the whole-text scan uses.
    NeedsWholeText,
}

/// What a streamed scan found besides the tools.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct StreamedLayout {
    pub(crate) shape: CatalogShape,
    pub(crate) next_cursor: Option<String>,
}

/// How much a block read at a time holds.
pub(crate) const BLOCK: usize = 256 << 10;

/// Check the syntax of the file `source` holds and give each tool's location to `found`, in
/// order, reading `block` bytes at a time. The locations count only if the scan succeeds.
pub(crate) fn scan_stream(
    source: &dyn ByteSource,
    block: usize,
    found: &mut dyn FnMut(ToolLocation),
) -> Result<StreamedLayout, StreamScanError> {
    let mut window = Window {
        source,
        len: source.byte_len(),
        block: block.max(16),
        base: 0,
        text: String::new(),
        pending: Vec::new(),
        cursor: (0, Position { line: 1, column: 1 }),
    };
    window.refill(0)?;
    let mut scan = Scan {
        window,
        at: 0,
        count: 0,
        next_cursor: None,
        found,
    };
    scan.at = crate::json::text_start(&scan.window.text);
    scan.window.cursor = (scan.at, Position { line: 1, column: 1 });
    let shape = match scan.step(|r| Ok(r.peek()))? {
        Some(b'[') => {
            scan.tool_array("", 0)?;
            CatalogShape::ToolArray
        }
        Some(b'{') => {
            let root = scan.object("", 0)?;
            match root.result_has_tools {
                _ if root.has_tools => CatalogShape::ToolsList,
                Some(true) => CatalogShape::JsonRpcResponse,
                // One tool, an error response, or not a catalog: small, or for the whole-text
                // scan to report.
                _ => return Err(StreamScanError::NeedsWholeText),
            }
        }
        _ => return Err(StreamScanError::NeedsWholeText),
    };
    scan.step(|r| r.finish())?;
    Ok(StreamedLayout {
        shape,
        next_cursor: scan.next_cursor,
    })
}

/// The text read so far, from byte `base` of the file on.
struct Window<'s> {
    source: &'s dyn ByteSource,
    /// The file's length.
    len: usize,
    block: usize,
    base: usize,
    text: String,
    /// Bytes read after `text` that do not form a whole character yet.
    pending: Vec<u8>,
    /// The last place whose position was found (an offset into the file, never before `base`)
    /// and that position.
    cursor: (usize, Position),
}

impl Window<'_> {
    /// Whether the whole file has been read.
    fn read_to_end(&self) -> bool {
        self.base + self.text.len() + self.pending.len() >= self.len
    }

    /// Drop the text before `keep` (an offset into `text`) and read more: a block, or as much as
    /// is kept, whichever is more, so that a value longer than a block is read in as many reads
    /// as doublings.
    fn refill(&mut self, keep: usize) -> Result<(), StreamScanError> {
        self.advance_cursor(keep);
        self.text.drain(..keep);
        self.base += keep;
        let read_end = self.base + self.text.len() + self.pending.len();
        let more = self
            .block
            .max(self.text.len())
            .min(self.len.saturating_sub(read_end));
        let mut bytes = std::mem::take(&mut self.pending);
        let carried = bytes.len();
        bytes.resize(carried + more, 0);
        self.source
            .read_exact_at(&mut bytes[carried..], read_end)
            .map_err(StreamScanError::Read)?;
        match std::str::from_utf8(&bytes) {
            Ok(valid) => self.text.push_str(valid),
            // A character cut at the end of the block: kept for the next read.
            Err(e) if e.error_len().is_none() => {
                let whole = e.valid_up_to();
                let valid = std::str::from_utf8(&bytes[..whole])
                    .map_err(|_| StreamScanError::NeedsWholeText)?;
                self.text.push_str(valid);
                self.pending = bytes[whole..].to_vec();
            }
            Err(_) => return Err(StreamScanError::NeedsWholeText),
        }
        if self.read_to_end() && !self.pending.is_empty() {
            return Err(StreamScanError::NeedsWholeText);
        }
        Ok(())
    }

    /// Find the position of `offset` (into `text`, at or after the last place found).
    fn advance_cursor(&mut self, offset: usize) -> Position {
        let (at, position) = self.cursor;
        let position = LineCursor::new(&self.text, at - self.base, position).position(offset);
        self.cursor = (self.base + offset, position);
        position
    }
}

/// The scan's progress.
struct Scan<'s, 'f> {
    window: Window<'s>,
    /// Where the next step starts, in the window's text.
    at: usize,
    /// Tools found so far: their pointers count on across arrays, as the whole-text scan's do.
    count: usize,
    next_cursor: Option<String>,
    found: &'f mut dyn FnMut(ToolLocation),
}

/// What the members of an object said about the catalog's shape.
#[derive(Default)]
struct ObjectSeen {
    has_tools: bool,
    /// Whether the last `result` object had a `tools` array, when there was one.
    result_has_tools: Option<bool>,
}

impl Scan<'_, '_> {
    /// Take one step of the reader from where the last one ended, with more of the file when it
    /// failed or ran to the end of what was read (a number or a value cut there may go on).
    fn step<T>(
        &mut self,
        op: impl Fn(&mut Reader<'_>) -> Result<T, SyntaxError>,
    ) -> Result<T, StreamScanError> {
        loop {
            let mut reader = Reader::within(&self.window.text, self.at);
            let result = op(&mut reader);
            let end = reader.offset();
            if !self.window.read_to_end() && (result.is_err() || end >= self.window.text.len()) {
                self.window.refill(self.at)?;
                self.at = 0;
                continue;
            }
            return match result {
                Ok(value) => {
                    self.at = end;
                    Ok(value)
                }
                Err(_) => Err(StreamScanError::NeedsWholeText),
            };
        }
    }

    /// Skip the value at the reader (in a container `depth` deep): its range in the window.
    fn skip(&mut self, depth: usize) -> Result<Range<usize>, StreamScanError> {
        self.step(|r| r.skip_value(depth))
    }

    fn peek(&mut self) -> Result<Option<u8>, StreamScanError> {
        self.step(|r| Ok(r.peek()))
    }

    /// An object at the reader (the file's root or a JSON-RPC `result`), as
    /// `CatalogLayout::scan_giving`'s `scan_object` reads it.
    fn object(&mut self, pointer: &str, depth: usize) -> Result<ObjectSeen, StreamScanError> {
        let mut seen = ObjectSeen::default();
        self.step(|r| r.expect(b'{', "expected '{'"))?;
        if self.peek()? == Some(b'}') {
            self.step(|r| r.expect(b'}', "expected '}'"))?;
            return Ok(seen);
        }
        loop {
            let key = self.step(|r| r.read_key().map(|(key, _)| key))?;
            let next = self.peek()?;
            match key.as_str() {
                "tools" if next == Some(b'[') => {
                    seen.has_tools = true;
                    self.tool_array(&format!("{pointer}/tools"), depth + 1)?;
                }
                // A shape error, or an error response: for the whole-text scan to report.
                "tools" => return Err(StreamScanError::NeedsWholeText),
                "error" if pointer.is_empty() => return Err(StreamScanError::NeedsWholeText),
                "result" if pointer.is_empty() && next == Some(b'{') => {
                    let result = self.object("/result", depth + 1)?;
                    seen.result_has_tools = Some(result.has_tools);
                }
                "nextCursor" if next == Some(b'"') => {
                    let range = self.skip(depth + 1)?;
                    let value = crate::json::parse(&self.window.text[range])
                        .map_err(|_| StreamScanError::NeedsWholeText)?;
                    self.next_cursor = value.as_str().map(str::to_string);
                }
                _ => {
                    self.skip(depth + 1)?;
                }
            }
            if !self.step(|r| r.next_separator(b'}', "an object member"))? {
                return Ok(seen);
            }
        }
    }

    /// An array of tools at the reader, giving each tool's location away.
    fn tool_array(&mut self, pointer: &str, depth: usize) -> Result<(), StreamScanError> {
        self.step(|r| r.expect(b'[', "expected '['"))?;
        if self.peek()? == Some(b']') {
            self.step(|r| r.expect(b']', "expected ']'"))?;
            return Ok(());
        }
        loop {
            let range = self.skip(depth + 1)?;
            let position = self.window.advance_cursor(range.start);
            let base = self.window.base;
            (self.found)(ToolLocation {
                pointer: format!("{pointer}/{}", self.count),
                range: base + range.start..base + range.end,
                depth: depth + 1,
                position,
            });
            self.count += 1;
            if !self.step(|r| r.next_separator(b']', "an array element"))? {
                return Ok(());
            }
        }
    }
}

/// Read the text of `range` of `source` with `margin` bytes more on either side where the file has
/// them, cut to whole characters: `(where the text starts in the file, the text)`. The bytes go
/// into `buffer` (emptied first), which is handed back in the text.
pub(crate) fn read_piece(
    source: &dyn ByteSource,
    range: Range<usize>,
    margin: usize,
    buffer: Vec<u8>,
) -> io::Result<(usize, String)> {
    let len = source.byte_len();
    let start = range.start.saturating_sub(margin);
    let end = range.end.saturating_add(margin).min(len);
    let mut bytes = buffer;
    bytes.clear();
    bytes.resize(end.saturating_sub(start), 0);
    source.read_exact_at(&mut bytes, start)?;
    // A margin may begin or end inside a character: those bytes are left out.
    let skip = if start == 0 {
        0
    } else {
        bytes
            .iter()
            .take(3)
            .take_while(|&&b| (b as i8) < -0x40)
            .count()
    };
    bytes.drain(..skip);
    let changed = || {
        io::Error::new(
            io::ErrorKind::InvalidData,
            "the file changed while it was read: it is no longer UTF-8 text",
        )
    };
    let text = match String::from_utf8(bytes) {
        Ok(text) => text,
        // A character cut at the end of the margin is left out.
        Err(e) if e.utf8_error().error_len().is_none() && end < len => {
            let keep = e.utf8_error().valid_up_to();
            let mut bytes = e.into_bytes();
            bytes.truncate(keep);
            String::from_utf8(bytes).map_err(|_| changed())?
        }
        Err(_) => return Err(changed()),
    };
    Ok((start + skip, text))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::CatalogLayout;

    /// The streamed scan of `text`, read `block` bytes at a time: its layout and tools, or `None`
    /// when it leaves the text to the whole-text scan.
    fn streamed(text: &str, block: usize) -> Option<(StreamedLayout, Vec<ToolLocation>)> {
        let mut tools = Vec::new();
        match scan_stream(&text.as_bytes(), block, &mut |t| tools.push(t)) {
            Ok(layout) => Some((layout, tools)),
            Err(StreamScanError::NeedsWholeText) => None,
            Err(StreamScanError::Read(e)) => panic!("reading a slice failed: {e}"),
        }
    }

    #[test]
    fn finds_what_the_whole_text_scan_finds_at_any_block_size() {
        let texts = [
            "{\"tools\": [{\"name\": \"a\"}, {\"name\": \"b\", \"x\": [1, 2.5e3, \"\\u00e9\"]}]}",
            "\u{feff}[{\"name\": \"é😀\"},\r\n  {\"name\": \"b\"}]  \n",
            "{\"jsonrpc\": \"2.0\", \"id\": 1, \"result\": {\"tools\": [{\"name\": \"a\"}], \"nextCursor\": \"n\\\"x\"}}",
            "{\"x\": 123456789012345678901234567890, \"tools\": [], \"tools\": [{\"name\": \"t\"}]}",
            "[  ]",
            "{\"tools\": [1, true, null, \"s\", {\"name\": \"deep\", \"a\": [[[[[]]]]]}]}",
        ];
        for text in texts {
            let whole = CatalogLayout::scan("f", text).unwrap();
            for block in [16, 17, 19, 23, 31, 64, 1000] {
                let (layout, tools) = streamed(text, block).unwrap_or_else(|| panic!("{text}"));
                assert_eq!(layout.shape, whole.shape, "{text} in blocks of {block}");
                assert_eq!(layout.next_cursor, whole.next_cursor, "{text}");
                assert_eq!(tools, whole.tools, "{text} in blocks of {block}");
            }
        }
    }

    #[test]
    fn leaves_errors_and_other_shapes_to_the_whole_text_scan() {
        let texts = [
            "",
            "{\"tools\": [{\"name\": \"a\"},]}",
            "{\"tools\": [{\"name\": \"a\"}]} x",
            "{\"tools\": [{\"name\": \"a\"}",
            "{\"tools\": {}}",
            "{\"name\": \"one tool\", \"inputSchema\": {}}",
            "{\"jsonrpc\": \"2.0\", \"id\": 1, \"error\": {\"code\": 1, \"message\": \"no\"}}",
            "{\"tools\": [1e]}",
            "{\"tools\": [tru]}",
            "{}",
            "7",
            "{\"tools\": [\"\u{0}\"]}",
        ];
        for text in texts {
            for block in [16, 19, 1000] {
                assert!(
                    streamed(text, block).is_none(),
                    "{text:?} in blocks of {block}"
                );
            }
        }
        let mut bytes = b"{\"tools\": [\"".to_vec();
        bytes.extend([0xff, b'"', b']', b'}']);
        assert!(matches!(
            scan_stream(&bytes.as_slice(), 16, &mut |_| {}),
            Err(StreamScanError::NeedsWholeText)
        ));
    }

    #[test]
    fn pieces_are_whole_characters_around_the_range() {
        let text = "ab😀cd{\"x\": 1}é😀fg";
        let start = text.find('{').unwrap();
        let end = text.find('}').unwrap() + 1;
        for margin in 0..12 {
            let (at, piece) = read_piece(&text.as_bytes(), start..end, margin, Vec::new()).unwrap();
            assert!(at <= start && at + piece.len() >= end, "margin {margin}");
            assert_eq!(&text[at..at + piece.len()], piece, "margin {margin}");
            assert!(start - at + 3 >= margin.min(start), "margin {margin}");
        }
    }
}
