//! Where each value of a parsed JSON text sits: byte spans in pre-order, and line/column lookup.

use super::pointer::split_pointer;
use serde::Serialize;
use serde_json::{Map, Value};

/// Marks a span whose value is not an object member.
pub(crate) const NO_KEY: u32 = u32::MAX;

/// The location of one value in the text. Offsets are bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SpanEntry {
    /// First byte of the value.
    pub start: u32,
    /// One past the last byte of the value (after its closing bracket for containers).
    pub end: u32,
    /// First byte of the member's key (its opening quote) when the value is an object member.
    pub key_start: u32,
    /// Index of the first span after this value's subtree; lets a walk skip a sibling in O(1).
    pub next: u32,
}

impl SpanEntry {
    pub(crate) fn open(start: u32, key_start: u32) -> Self {
        SpanEntry {
            start,
            end: start,
            key_start,
            next: 0,
        }
    }

    pub(crate) fn close(&mut self, end: u32, next: u32) {
        self.end = end;
        self.next = next;
    }

    /// The byte offset diagnostics should point at: the key of a member, else the value.
    pub fn anchor(&self) -> u32 {
        if self.key_start == NO_KEY {
            self.start
        } else {
            self.key_start
        }
    }

    /// Whether this value is an object member (has a key).
    pub fn has_key(&self) -> bool {
        self.key_start != NO_KEY
    }
}

/// The spans of every value in one parsed JSON value, in pre-order (a container before its
/// children, children in order).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Spans {
    entries: Vec<SpanEntry>,
}

impl Spans {
    pub(crate) fn new(entries: Vec<SpanEntry>) -> Self {
        Spans { entries }
    }

    /// The buffer of spans, to record another value's in.
    pub(crate) fn into_entries(self) -> Vec<SpanEntry> {
        self.entries
    }

    /// All spans, in pre-order.
    pub fn entries(&self) -> &[SpanEntry] {
        &self.entries
    }

    /// The span of the root value.
    pub fn root(&self) -> Option<SpanEntry> {
        self.entries.first().copied()
    }

    /// The span of the value at `pointer` (relative to the root), walking `root` alongside the
    /// spans. When the pointer leads nowhere, returns the span of its deepest existing ancestor and
    /// `false`.
    ///
    /// `root` must be the value the spans were recorded for, or one whose objects have the same
    /// keys in the same order (arrays are walked by the spans alone).
    pub fn locate(&self, root: &Value, pointer: &str) -> Option<(SpanEntry, bool)> {
        let mut index = 0usize;
        let mut value = Some(root);
        for segment in split_pointer(pointer) {
            let current = self.entries.get(index)?;
            let found = match value {
                Some(Value::Object(map)) => self
                    .child_of_object(index, map, &segment)
                    .map(|(i, v)| (i, Some(v))),
                Some(Value::Array(_)) | None => segment
                    .parse::<usize>()
                    .ok()
                    .and_then(|k| self.nth_child(index, k))
                    .map(|i| {
                        let child = value
                            .and_then(Value::as_array)
                            .and_then(|a| segment.parse::<usize>().ok().and_then(|k| a.get(k)));
                        (i, child)
                    }),
                Some(_) => None,
            };
            match found {
                Some((i, v)) => {
                    index = i;
                    value = v;
                }
                None => return Some((*current, false)),
            }
        }
        self.entries.get(index).map(|e| (*e, true))
    }

    /// The span at `index` (an index into [`Spans::entries`]).
    pub fn get(&self, index: usize) -> Option<SpanEntry> {
        self.entries.get(index).copied()
    }

    /// The indices of the direct children of the value whose span is at `index`: an array's
    /// elements or an object's members, in text order.
    pub fn children(&self, index: usize) -> impl Iterator<Item = usize> + '_ {
        let end = self.entries.get(index).map_or(0, |e| e.next as usize);
        let mut child = index + 1;
        std::iter::from_fn(move || {
            if child >= end {
                return None;
            }
            let current = child;
            child = self.entries.get(current).map_or(end, |e| e.next as usize);
            Some(current)
        })
    }

    fn nth_child(&self, parent: usize, n: usize) -> Option<usize> {
        let end = self.entries.get(parent)?.next as usize;
        let mut child = parent + 1;
        for _ in 0..n {
            if child >= end {
                return None;
            }
            child = self.entries.get(child)?.next as usize;
        }
        (child < end).then_some(child)
    }

    fn child_of_object<'v>(
        &self,
        parent: usize,
        map: &'v Map<String, Value>,
        key: &str,
    ) -> Option<(usize, &'v Value)> {
        let end = self.entries.get(parent)?.next as usize;
        let mut child = parent + 1;
        for (k, v) in map {
            if child >= end {
                return None;
            }
            if k == key {
                return Some((child, v));
            }
            child = self.entries.get(child)?.next as usize;
        }
        None
    }
}

/// A 1-based line and column (columns count characters, not bytes).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct Position {
    /// Line number, from 1.
    pub line: u32,
    /// Column number in characters, from 1.
    pub column: u32,
}

impl std::fmt::Display for Position {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}", self.line, self.column)
    }
}

/// Turns byte offsets of one text into line and column numbers.
#[derive(Debug, Clone)]
pub struct LineIndex {
    line_starts: Vec<u32>,
}

impl LineIndex {
    /// Index the line starts of `text`.
    pub fn new(text: &str) -> Self {
        let mut line_starts = vec![0u32];
        line_starts.extend(memchr::memchr_iter(b'\n', text.as_bytes()).map(|i| (i + 1) as u32));
        LineIndex { line_starts }
    }

    /// The position of byte `offset` in `text` (the text this index was built from).
    pub fn position(&self, text: &str, offset: usize) -> Position {
        let offset = offset.min(text.len());
        let line = self
            .line_starts
            .partition_point(|&start| start as usize <= offset)
            .max(1);
        let line_start = self.line_starts[line - 1] as usize;
        position_in_line(text, line, line_start, offset)
    }
}

/// The position of `offset` on the line that starts at byte `line_start`; columns count characters.
fn position_in_line(text: &str, line: usize, line_start: usize, offset: usize) -> Position {
    let column = columns_before(text, line_start, offset);
    Position {
        line: line as u32,
        column: column as u32 + 1,
    }
}

/// The columns before byte `offset` on the line that starts at byte `line_start`: its characters,
/// but a byte order mark starting the text takes none (editors neither show nor count it).
fn columns_before(text: &str, line_start: usize, offset: usize) -> usize {
    let line_start = if line_start == 0 {
        text_start(text).min(offset)
    } else {
        line_start
    };
    text.get(line_start..offset)
        .map_or(offset.saturating_sub(line_start), |s| s.chars().count())
}

/// Where a document's text starts: after the UTF-8 byte order mark, if there is one (readers skip
/// it, and line 1, column 1 is after it).
pub fn text_start(text: &str) -> usize {
    if text.starts_with('\u{feff}') {
        '\u{feff}'.len_utf8()
    } else {
        0
    }
}

impl LineIndex {
    /// Like [`LineIndex::position`], searching from line `hint` (0-based, updated to the line
    /// found): close to free when offsets come in increasing order, as a file's findings do.
    pub fn position_from(&self, text: &str, offset: usize, hint: &mut usize) -> Position {
        let offset = offset.min(text.len());
        let starts = &self.line_starts;
        let at = |i: usize| starts.get(i).map_or(usize::MAX, |&s| s as usize);
        let mut line = (*hint).min(starts.len().saturating_sub(1));
        if at(line) > offset {
            line = starts
                .partition_point(|&start| start as usize <= offset)
                .max(1)
                - 1;
        } else {
            // Gallop forward, then search the last step.
            let mut step = 1;
            while at(line + step) <= offset {
                line += step;
                step *= 2;
            }
            let upper = (line + step).min(starts.len());
            line += starts[line..upper].partition_point(|&start| start as usize <= offset) - 1;
        }
        *hint = line;
        let column = columns_before(text, at(line), offset);
        Position {
            line: line as u32 + 1,
            column: column as u32 + 1,
        }
    }
}

/// Positions of increasing offsets into one text, each byte looked at once: a minified catalog is
/// one line of megabytes, and counting each finding's column from the start of its line made
/// linting one quadratic in the size of the file.
pub(crate) struct LineCursor<'a> {
    text: &'a str,
    /// The last offset looked up (or the starting place).
    offset: usize,
    /// Its line, from 1.
    line: usize,
    /// The characters before it on its line.
    column: usize,
}

impl<'a> LineCursor<'a> {
    /// A cursor at byte `offset` of `text`, whose position is `at`.
    pub(crate) fn new(text: &'a str, offset: usize, at: Position) -> Self {
        LineCursor {
            text,
            offset: offset.min(text.len()),
            line: at.line as usize,
            column: at.column.saturating_sub(1) as usize,
        }
    }

    /// The position of byte `offset`, as [`LineIndex::position`] finds it. Offsets before the
    /// last one are counted from the beginning of the text.
    pub(crate) fn position(&mut self, offset: usize) -> Position {
        let offset = offset.min(self.text.len());
        if offset < self.offset {
            return position_of(self.text, offset);
        }
        let between = &self.text.as_bytes()[self.offset..offset];
        let mut last_break = None;
        for line_break in memchr::memchr_iter(b'\n', between) {
            self.line += 1;
            last_break = Some(line_break);
        }
        match last_break {
            Some(last) => self.column = char_count(&between[last + 1..]),
            None => self.column += char_count(between),
        }
        self.offset = offset;
        Position {
            line: self.line as u32,
            column: self.column as u32 + 1,
        }
    }
}

/// The characters in `bytes`, whole UTF-8 characters: every byte but continuation bytes.
fn char_count(bytes: &[u8]) -> usize {
    bytes.iter().filter(|&&b| (b as i8) >= -0x40).count()
}

/// The position of byte `offset` in `text`, without building an index (for a single lookup).
pub fn position_of(text: &str, offset: usize) -> Position {
    let offset = offset.min(text.len());
    let before = &text.as_bytes()[..offset];
    let line = before.iter().filter(|&&b| b == b'\n').count() + 1;
    let line_start = before
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(0, |i| i + 1);
    position_in_line(text, line, line_start, offset)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::parse_with_spans;

    #[test]
    fn a_byte_order_mark_takes_no_column() {
        let plain = "{\"a\": 1,\n \"b\": 2}";
        let marked = format!("\u{feff}{plain}");
        let shift = text_start(&marked);
        assert_eq!((shift, text_start(plain)), (3, 0));
        let index = LineIndex::new(&marked);
        let mut hint = 0;
        for offset in 0..plain.len() {
            let expected = position_of(plain, offset);
            assert_eq!(position_of(&marked, offset + shift), expected, "{offset}");
            assert_eq!(
                index.position(&marked, offset + shift),
                expected,
                "{offset}"
            );
            assert_eq!(
                index.position_from(&marked, offset + shift, &mut hint),
                expected
            );
        }
        // Inside the mark itself: the first column.
        for offset in 0..shift {
            assert_eq!(
                position_of(&marked, offset),
                Position { line: 1, column: 1 }
            );
        }
        // Only the text's first character is a mark; one later on is a character.
        assert_eq!(position_of("a\u{feff}b", 4).column, 3);
    }

    #[test]
    fn locates_values_by_pointer() {
        let text = "{\n  \"tools\": [\n    {\"name\": \"a\"},\n    {\"name\": \"b\", \"x/y\": [true]}\n  ]\n}";
        let (value, spans) = parse_with_spans(text).unwrap();
        let index = LineIndex::new(text);
        let at = |pointer: &str| {
            let (span, exact) = spans.locate(&value, pointer).unwrap();
            (index.position(text, span.anchor() as usize), exact)
        };
        assert_eq!(at(""), (Position { line: 1, column: 1 }, true));
        assert_eq!(at("/tools"), (Position { line: 2, column: 3 }, true));
        assert_eq!(at("/tools/1/name"), (Position { line: 4, column: 6 }, true));
        assert_eq!(
            at("/tools/1/x~1y/0"),
            (
                Position {
                    line: 4,
                    column: 27
                },
                true
            )
        );
        assert_eq!(
            at("/tools/1/missing"),
            (Position { line: 4, column: 5 }, false)
        );
        assert_eq!(at("/tools/7"), (Position { line: 2, column: 3 }, false));
    }

    #[test]
    fn positions_from_a_hint_match_plain_lookups() {
        let text = "a\nbb\n\nccc é\nd\n";
        let index = LineIndex::new(text);
        for start in [0, 3, 5, 9] {
            let mut hint = start;
            for offset in (0..=text.len()).chain([3, 0, 12, 1]) {
                if !text.is_char_boundary(offset) {
                    continue;
                }
                assert_eq!(
                    index.position_from(text, offset, &mut hint),
                    index.position(text, offset),
                    "offset {offset}"
                );
            }
        }
    }

    #[test]
    fn cursors_match_the_index() {
        let text = "a\nbb\n\nccc é\nd\n\n";
        let index = LineIndex::new(text);
        let boundaries: Vec<usize> = (0..=text.len() + 2)
            .filter(|&o| o > text.len() || text.is_char_boundary(o))
            .collect();
        for &start in &boundaries {
            let mut cursor = LineCursor::new(text, start, index.position(text, start));
            for &offset in boundaries.iter().filter(|&&o| o >= start) {
                assert_eq!(
                    cursor.position(offset),
                    index.position(text, offset),
                    "from {start} to {offset}"
                );
            }
            // Going back is answered too.
            assert_eq!(cursor.position(0), index.position(text, 0));
        }
    }

    #[test]
    fn columns_count_characters() {
        let text = "{\"é\": \"ü\", \"k\": 1}";
        assert_eq!(position_of(text, text.find("\"k\"").unwrap()).column, 12);
        let index = LineIndex::new(text);
        assert_eq!(
            index.position(text, text.find("\"k\"").unwrap()),
            position_of(text, text.find("\"k\"").unwrap())
        );
    }
}
