//! A JSON reader that builds `serde_json::Value`s and records where every value sits in the text.
//!
//! serde_json drops positions once a value is built, and diagnostics must point at `line:column`
//! like a compiler does. The reader is a pull parser: callers can build a whole value with its
//! spans, or skip a value (checking its syntax without building anything). Skipping is what lets a
//! 10,000-tool catalog be linted one tool at a time instead of holding the whole tree in memory.
//!
//! It never recurses, so no input can overflow the stack, and it refuses nesting deeper than
//! [`MAX_DEPTH`] (the limit serde_json applies too) so that nothing built from it can be too deep to
//! drop, compare or validate.
//!
//! It reads everything the JSON grammar allows, including what a Rust value cannot hold exactly:
//! a `\u` escape of a lone surrogate (what JavaScript writes for a string cut inside an emoji)
//! becomes U+FFFD, a number beyond the range of a 64-bit float becomes the largest float of its
//! sign, and a UTF-8 byte order mark before the document is skipped.

use super::spans::{SpanEntry, Spans, NO_KEY};
use serde_json::map::Entry;
use serde_json::{Map, Number, Value};
use std::cell::Cell;
use std::ops::Range;

/// Deepest nesting of arrays and objects the reader accepts.
pub const MAX_DEPTH: usize = 128;

/// A syntax error: what is wrong and the byte offset where it was found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SyntaxError {
    /// What is wrong, for example `expected ',' or '}' after an object member`.
    pub message: String,
    /// Byte offset into the text.
    pub offset: usize,
}

/// What the reader does with a key an object already has.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum DuplicateKeys {
    /// A syntax error: a file a person edits should say each key once.
    #[default]
    Refuse,
    /// The last one wins, as JavaScript, Python and serde_json read it: what a server reading
    /// the same message sees.
    KeepLast,
}

/// A pull parser over one JSON text.
pub(crate) struct Reader<'a> {
    text: &'a str,
    bytes: &'a [u8],
    pos: usize,
    duplicates: DuplicateKeys,
    /// Deepest nesting read ([`MAX_DEPTH`] unless raised for a wrapping format).
    max_depth: usize,
}

thread_local! {
    /// The stack of containers being read, kept from one value to the next: a catalog's tools
    /// are read one after the other on a few threads.
    static OPEN_CONTAINERS: Cell<Vec<Frame>> = const { Cell::new(Vec::new()) };
}

enum Frame {
    Array {
        items: Vec<Value>,
        span: usize,
    },
    Object {
        map: Map<String, Value>,
        span: usize,
        key: String,
        key_start: usize,
    },
}

impl<'a> Reader<'a> {
    /// A reader over `text`, starting at byte `start` (after a byte order mark, at the start of
    /// the text).
    pub(crate) fn new(text: &'a str, start: usize) -> Self {
        let start = if start == 0 {
            super::text_start(text)
        } else {
            start
        };
        Reader::within(text, start)
    }

    /// A reader over `text` from byte `start`, where `text` is a piece of a longer document
    /// read from some offset: nothing at its start is taken for a byte order mark.
    pub(crate) fn within(text: &'a str, start: usize) -> Self {
        Reader {
            text,
            bytes: text.as_bytes(),
            pos: start,
            duplicates: DuplicateKeys::Refuse,
            max_depth: MAX_DEPTH,
        }
    }

    /// Read keys an object already has as `duplicates` says.
    pub(crate) fn with_duplicates(mut self, duplicates: DuplicateKeys) -> Self {
        self.duplicates = duplicates;
        self
    }

    /// Current byte offset.
    pub(crate) fn offset(&self) -> usize {
        self.pos
    }

    fn error<T>(&self, message: impl Into<String>) -> Result<T, SyntaxError> {
        Err(SyntaxError {
            message: message.into(),
            offset: self.pos,
        })
    }

    // This and the small helpers below run a few times per token: they are inlined into the
    // loops that read and skip values.
    #[inline]
    pub(crate) fn skip_whitespace(&mut self) {
        loop {
            match self.bytes.get(self.pos) {
                Some(b' ') => self.pos = end_of_spaces(self.bytes, self.pos),
                Some(b'\t' | b'\n' | b'\r') => self.pos += 1,
                _ => return,
            }
        }
    }

    /// The next significant byte, without consuming it.
    #[inline]
    pub(crate) fn peek(&mut self) -> Option<u8> {
        self.skip_whitespace();
        self.bytes.get(self.pos).copied()
    }

    /// Consume `byte` (after whitespace) or fail with `message`.
    #[inline]
    pub(crate) fn expect(&mut self, byte: u8, message: &str) -> Result<(), SyntaxError> {
        if self.peek() == Some(byte) {
            self.pos += 1;
            Ok(())
        } else if self.pos >= self.bytes.len() {
            self.error(format!("unexpected end of input: {message}"))
        } else {
            self.error(message)
        }
    }

    /// After the whole document: only whitespace may follow.
    pub(crate) fn finish(&mut self) -> Result<(), SyntaxError> {
        if self.peek().is_some() {
            return self.error("unexpected characters after the JSON value");
        }
        Ok(())
    }

    /// Read an object key and the `:` after it; the reader must be at the key's opening quote.
    pub(crate) fn read_key(&mut self) -> Result<(String, usize), SyntaxError> {
        if self.peek() != Some(b'"') {
            return if self.pos >= self.bytes.len() {
                self.error("unexpected end of input: expected an object key")
            } else {
                self.error("expected an object key in double quotes")
            };
        }
        let key_start = self.pos;
        let key = self.read_string()?;
        self.expect(b':', "expected ':' after an object key")?;
        Ok((key, key_start))
    }

    /// After a member or element: consume `,` and return true, or consume `close` and return false.
    #[inline]
    pub(crate) fn next_separator(&mut self, close: u8, what: &str) -> Result<bool, SyntaxError> {
        match self.peek() {
            Some(b',') => {
                self.pos += 1;
                Ok(true)
            }
            Some(b) if b == close => {
                self.pos += 1;
                Ok(false)
            }
            None => self.error(format!(
                "unexpected end of input: expected ',' or '{}' after {what}",
                close as char
            )),
            Some(_) => self.error(format!("expected ',' or '{}' after {what}", close as char)),
        }
    }

    /// Build the value at the current position, appending one span per value, in pre-order, to
    /// `spans`. `depth` is the nesting depth of the value's container (0 for a document root).
    pub(crate) fn read_value(
        &mut self,
        spans: &mut Vec<SpanEntry>,
        key_start: u32,
        depth: usize,
    ) -> Result<Value, SyntaxError> {
        let mut stack = OPEN_CONTAINERS.take();
        let value = self.read_value_on(&mut stack, spans, key_start, depth);
        // After an error the stack still holds what was read (never deeper than MAX_DEPTH).
        stack.clear();
        OPEN_CONTAINERS.set(stack);
        value
    }

    /// [`Reader::read_value`] with `stack` (empty) for the containers being read.
    fn read_value_on(
        &mut self,
        stack: &mut Vec<Frame>,
        spans: &mut Vec<SpanEntry>,
        key_start: u32,
        depth: usize,
    ) -> Result<Value, SyntaxError> {
        let mut pending_key_start = key_start;
        loop {
            // Read one value; containers push a frame and continue with their first child.
            let start = self.peek_value_start()?;
            let span_index = spans.len();
            spans.push(SpanEntry::open(start as u32, pending_key_start));
            let mut value = match self.bytes[start] {
                b'{' | b'[' => {
                    if depth + stack.len() >= self.max_depth {
                        return self.error(format!(
                            "JSON nests deeper than {} levels of arrays and objects",
                            self.max_depth
                        ));
                    }
                    let is_object = self.bytes[start] == b'{';
                    self.pos += 1;
                    let close = if is_object { b'}' } else { b']' };
                    if self.peek() == Some(close) {
                        self.pos += 1;
                        let next = spans.len() as u32;
                        spans[span_index].close(self.pos as u32, next);
                        if is_object {
                            Value::Object(Map::new())
                        } else {
                            Value::Array(Vec::new())
                        }
                    } else if is_object {
                        let (key, ks) = self.read_key()?;
                        stack.push(Frame::Object {
                            // Most objects of a tool have one to four members: making room
                            // for four up front saves the map most of its growing steps.
                            map: Map::with_capacity(4),
                            span: span_index,
                            key,
                            key_start: ks,
                        });
                        pending_key_start = ks as u32;
                        continue;
                    } else {
                        stack.push(Frame::Array {
                            items: Vec::new(),
                            span: span_index,
                        });
                        pending_key_start = NO_KEY;
                        continue;
                    }
                }
                _ => {
                    let scalar = self.read_scalar()?;
                    let next = spans.len() as u32;
                    spans[span_index].close(self.pos as u32, next);
                    scalar
                }
            };
            // Hand the finished value to its container, closing every container it completes.
            loop {
                match stack.last_mut() {
                    None => return Ok(value),
                    Some(Frame::Array { items, span }) => {
                        items.push(value);
                        if self.next_separator(b']', "an array element")? {
                            pending_key_start = NO_KEY;
                            break;
                        }
                        let span = *span;
                        let Some(Frame::Array { items, .. }) = stack.pop() else {
                            unreachable!("the top frame was just matched as an array")
                        };
                        let next = spans.len() as u32;
                        spans[span].close(self.pos as u32, next);
                        value = Value::Array(items);
                    }
                    Some(Frame::Object {
                        map,
                        span,
                        key,
                        key_start,
                    }) => {
                        match map.entry(std::mem::take(key)) {
                            Entry::Vacant(member) => {
                                member.insert(value);
                            }
                            Entry::Occupied(member)
                                if self.duplicates == DuplicateKeys::KeepLast
                                    && member.key().contains(char::REPLACEMENT_CHARACTER) =>
                            {
                                // Read here as one key, but if either was written with a lone
                                // surrogate, a reader that keeps lone surrogates (JavaScript,
                                // Python) sees two: what it sees cannot be known from this
                                // reading. (Which one was is not kept: any such duplicate is
                                // refused.)
                                return Err(SyntaxError {
                                    message: format!(
                                        "duplicate key '{}' in an object, holding U+FFFD, which a lone surrogate (\\uD800-\\uDFFF) also reads as here: other readers may see two keys",
                                        member.key()
                                    ),
                                    offset: *key_start,
                                });
                            }
                            Entry::Occupied(mut member)
                                if self.duplicates == DuplicateKeys::KeepLast =>
                            {
                                member.insert(value);
                            }
                            Entry::Occupied(member) => {
                                return Err(SyntaxError {
                                    message: format!(
                                        "duplicate key '{}' in an object",
                                        member.key()
                                    ),
                                    offset: *key_start,
                                });
                            }
                        }
                        if self.next_separator(b'}', "an object member")? {
                            let (next_key, ks) = self.read_key()?;
                            *key = next_key;
                            *key_start = ks;
                            pending_key_start = ks as u32;
                            break;
                        }
                        let span = *span;
                        let Some(Frame::Object { map, .. }) = stack.pop() else {
                            unreachable!("the top frame was just matched as an object")
                        };
                        let next = spans.len() as u32;
                        spans[span].close(self.pos as u32, next);
                        value = Value::Object(map);
                    }
                }
            }
        }
    }

    /// Check the syntax of the value at the current position without building it; returns its
    /// byte range. `depth` is the nesting depth of the value's container.
    pub(crate) fn skip_value(&mut self, depth: usize) -> Result<Range<usize>, SyntaxError> {
        self.skip_value_within(depth, self.max_depth)
    }

    /// [`Reader::skip_value`] for values nested at most `limit` deep: nothing is built, so
    /// `usize::MAX` skips any depth.
    pub(crate) fn skip_value_within(
        &mut self,
        depth: usize,
        limit: usize,
    ) -> Result<Range<usize>, SyntaxError> {
        // Each stack entry is the closing byte of an open container and whether it is an object.
        let mut stack: Vec<u8> = Vec::new();
        let start = self.peek_value_start()?;
        loop {
            let value_start = self.peek_value_start()?;
            match self.bytes[value_start] {
                open @ (b'{' | b'[') => {
                    if depth.saturating_add(stack.len()) >= limit {
                        return self.error(format!(
                            "JSON nests deeper than {limit} levels of arrays and objects"
                        ));
                    }
                    self.pos += 1;
                    let close = if open == b'{' { b'}' } else { b']' };
                    if self.peek() == Some(close) {
                        self.pos += 1;
                    } else {
                        if open == b'{' {
                            self.skip_key()?;
                        }
                        stack.push(close);
                        continue;
                    }
                }
                _ => self.skip_scalar()?,
            }
            loop {
                let Some(&close) = stack.last() else {
                    return Ok(start..self.pos);
                };
                let what = if close == b'}' {
                    "an object member"
                } else {
                    "an array element"
                };
                if self.next_separator(close, what)? {
                    if close == b'}' {
                        self.skip_key()?;
                    }
                    break;
                }
                stack.pop();
            }
        }
    }

    #[inline]
    fn skip_key(&mut self) -> Result<(), SyntaxError> {
        if self.peek() != Some(b'"') {
            return if self.pos >= self.bytes.len() {
                self.error("unexpected end of input: expected an object key")
            } else {
                self.error("expected an object key in double quotes")
            };
        }
        self.scan_string(None)?;
        self.expect(b':', "expected ':' after an object key")
    }

    #[inline]
    fn peek_value_start(&mut self) -> Result<usize, SyntaxError> {
        match self.peek() {
            None => self.error("unexpected end of input: expected a JSON value"),
            Some(b'{' | b'[' | b'"' | b'-' | b'0'..=b'9' | b't' | b'f' | b'n') => Ok(self.pos),
            Some(b'}' | b']') => self.error("expected a JSON value, found a closing bracket"),
            Some(_) => self.error("expected a JSON value"),
        }
    }

    fn read_scalar(&mut self) -> Result<Value, SyntaxError> {
        match self.bytes[self.pos] {
            b'"' => Ok(Value::String(self.read_string()?)),
            b't' => self.read_literal("true", Value::Bool(true)),
            b'f' => self.read_literal("false", Value::Bool(false)),
            b'n' => self.read_literal("null", Value::Null),
            _ => self.read_number().map(Value::Number),
        }
    }

    #[inline]
    fn skip_scalar(&mut self) -> Result<(), SyntaxError> {
        match self.bytes[self.pos] {
            b'"' => self.scan_string(None),
            b't' => self.read_literal("true", ()),
            b'f' => self.read_literal("false", ()),
            b'n' => self.read_literal("null", ()),
            _ => self.scan_number().map(|_| ()),
        }
    }

    fn read_literal<T>(&mut self, word: &str, value: T) -> Result<T, SyntaxError> {
        if self.bytes[self.pos..].starts_with(word.as_bytes()) {
            self.pos += word.len();
            Ok(value)
        } else {
            self.error(format!("invalid literal, expected `{word}`"))
        }
    }

    /// Scan a number and return its text.
    fn scan_number(&mut self) -> Result<&'a str, SyntaxError> {
        let start = self.pos;
        let b = self.bytes;
        let mut p = self.pos;
        if b.get(p) == Some(&b'-') {
            p += 1;
        }
        match b.get(p) {
            Some(b'0') => p += 1,
            Some(b'1'..=b'9') => {
                while matches!(b.get(p), Some(b'0'..=b'9')) {
                    p += 1;
                }
            }
            _ => {
                self.pos = p;
                return self.error("invalid number: expected a digit");
            }
        }
        if b.get(p) == Some(&b'.') {
            p += 1;
            if !matches!(b.get(p), Some(b'0'..=b'9')) {
                self.pos = p;
                return self.error("invalid number: expected a digit after the decimal point");
            }
            while matches!(b.get(p), Some(b'0'..=b'9')) {
                p += 1;
            }
        }
        if matches!(b.get(p), Some(b'e' | b'E')) {
            p += 1;
            if matches!(b.get(p), Some(b'+' | b'-')) {
                p += 1;
            }
            if !matches!(b.get(p), Some(b'0'..=b'9')) {
                self.pos = p;
                return self.error("invalid number: expected a digit in the exponent");
            }
            while matches!(b.get(p), Some(b'0'..=b'9')) {
                p += 1;
            }
        }
        self.pos = p;
        Ok(&self.text[start..p])
    }

    fn read_number(&mut self) -> Result<Number, SyntaxError> {
        let start = self.pos;
        let text = self.scan_number()?;
        let is_integer = !text.contains(['.', 'e', 'E']);
        if is_integer {
            if let Ok(n) = text.parse::<u64>() {
                return Ok(Number::from(n));
            }
            if let Ok(n) = text.parse::<i64>() {
                return Ok(Number::from(n));
            }
        }
        // Beyond the range of a float, Rust reads an infinity, which no JSON value holds: the
        // largest float of the same sign keeps every comparison with a finite bound right.
        let float = match text.parse::<f64>() {
            Ok(f) if f.is_infinite() => f64::MAX.copysign(f),
            Ok(f) => f,
            Err(_) => {
                return Err(SyntaxError {
                    message: "invalid number".to_string(),
                    offset: start,
                })
            }
        };
        match Number::from_f64(float) {
            Some(n) => Ok(n),
            None => Err(SyntaxError {
                message: "invalid number".to_string(),
                offset: start,
            }),
        }
    }

    fn read_string(&mut self) -> Result<String, SyntaxError> {
        // Most strings have no escape: copied in one allocation of the right size, not grown.
        let start = self.pos + 1;
        let end = end_of_plain_run(self.bytes, start);
        if self.bytes.get(end) == Some(&b'"') {
            self.pos = end + 1;
            return Ok(self.text[start..end].to_string());
        }
        let mut out = String::new();
        self.scan_string(Some(&mut out))?;
        Ok(out)
    }

    /// Scan a string starting at its opening quote; unescape into `out` when given.
    fn scan_string(&mut self, mut out: Option<&mut String>) -> Result<(), SyntaxError> {
        let b = self.bytes;
        self.pos += 1; // opening quote
        let mut run_start = self.pos;
        loop {
            self.pos = end_of_plain_run(b, self.pos);
            match b.get(self.pos) {
                None => return self.error("unexpected end of input inside a string"),
                Some(b'"') => {
                    if let Some(out) = out.as_deref_mut() {
                        out.push_str(&self.text[run_start..self.pos]);
                    }
                    self.pos += 1;
                    return Ok(());
                }
                Some(b'\\') => {
                    if let Some(out) = out.as_deref_mut() {
                        out.push_str(&self.text[run_start..self.pos]);
                    }
                    self.pos += 1;
                    let Some(&escape) = b.get(self.pos) else {
                        return self.error("unexpected end of input inside a string");
                    };
                    self.pos += 1;
                    let decoded = match escape {
                        b'"' => '"',
                        b'\\' => '\\',
                        b'/' => '/',
                        b'b' => '\u{8}',
                        b'f' => '\u{c}',
                        b'n' => '\n',
                        b'r' => '\r',
                        b't' => '\t',
                        b'u' => self.read_unicode_escape()?,
                        _ => {
                            self.pos -= 1;
                            return self.error("invalid escape sequence in a string");
                        }
                    };
                    if let Some(out) = out.as_deref_mut() {
                        out.push(decoded);
                    }
                    run_start = self.pos;
                }
                Some(_) => {
                    return self.error("control character in a string (escape it, e.g. \\n)");
                }
            }
        }
    }

    fn read_hex4(&mut self) -> Result<u16, SyntaxError> {
        let Some(digits) = self.text.get(self.pos..self.pos + 4) else {
            return self.error("invalid \\u escape: expected four hex digits");
        };
        match u16::from_str_radix(digits, 16) {
            Ok(v) if digits.bytes().all(|c| c.is_ascii_hexdigit()) => {
                self.pos += 4;
                Ok(v)
            }
            _ => self.error("invalid \\u escape: expected four hex digits"),
        }
    }

    /// The character of a `\\u` escape (the reader stands after the `u`). A surrogate that is
    /// not half of a pair is valid JSON but no character: it reads as U+FFFD.
    fn read_unicode_escape(&mut self) -> Result<char, SyntaxError> {
        let first = self.read_hex4()?;
        let code = if (0xD800..0xDC00).contains(&first) {
            if !self.bytes[self.pos..].starts_with(b"\\u") {
                return Ok(char::REPLACEMENT_CHARACTER);
            }
            let second_at = self.pos;
            self.pos += 2;
            let second = self.read_hex4()?;
            if !(0xDC00..0xE000).contains(&second) {
                // The next escape is a character of its own.
                self.pos = second_at;
                return Ok(char::REPLACEMENT_CHARACTER);
            }
            0x10000 + (((first as u32) - 0xD800) << 10) + ((second as u32) - 0xDC00)
        } else if (0xDC00..0xE000).contains(&first) {
            return Ok(char::REPLACEMENT_CHARACTER);
        } else {
            first as u32
        };
        Ok(char::from_u32(code).unwrap_or(char::REPLACEMENT_CHARACTER))
    }
}

/// Whether JSON `text` (already read: valid) holds a `\u` escape of a lone surrogate, which
/// reads here as U+FFFD but stays what it was for a reader that keeps lone surrogates
/// (JavaScript, Python): a check of the text read here may then judge another text than theirs.
pub fn has_lone_surrogate(text: &str) -> bool {
    lone_surrogate_at(text).is_some()
}

/// Where the first `\u` escape of a lone surrogate in JSON `text` (valid) starts, if any
/// ([`has_lone_surrogate`]).
pub fn lone_surrogate_at(text: &str) -> Option<usize> {
    let bytes = text.as_bytes();
    let escape_at = |at: usize| -> Option<u16> {
        let digits = bytes.get(at + 2..at + 6)?;
        (bytes.get(at..at + 2)? == b"\\u")
            .then(|| std::str::from_utf8(digits).ok())
            .flatten()
            .and_then(|d| u16::from_str_radix(d, 16).ok())
    };
    let mut at = 0;
    // Backslashes stand only in strings in valid JSON, each starting an escape.
    while let Some(found) = memchr::memchr(b'\\', &bytes[at..]) {
        at += found;
        match escape_at(at) {
            Some(0xD800..=0xDBFF) if matches!(escape_at(at + 6), Some(0xDC00..=0xDFFF)) => at += 12,
            Some(0xD800..=0xDFFF) => return Some(at),
            Some(_) => at += 6,
            // Any other escape is two bytes (`\\` among them, which must not start another).
            None => at += 2,
        }
    }
    None
}

/// Eight copies of a byte, one per byte of a word.
const fn eight(byte: u8) -> u64 {
    0x0101_0101_0101_0101 * byte as u64
}

/// The next eight bytes from `pos` as a little-endian word (the first byte lowest), if there
/// are eight.
fn word_at(bytes: &[u8], pos: usize) -> Option<u64> {
    let chunk: [u8; 8] = bytes.get(pos..pos + 8)?.try_into().ok()?;
    Some(u64::from_le_bytes(chunk))
}

/// Index of the first byte at or after `pos` that is not a space (or `bytes.len()`).
///
/// Pretty-printed catalogs are about a third indentation, so runs of spaces are stepped over
/// a word at a time.
fn end_of_spaces(bytes: &[u8], mut pos: usize) -> usize {
    while let Some(word) = word_at(bytes, pos) {
        let others = word ^ eight(b' ');
        if others != 0 {
            // The lowest non-zero byte is the first one that is not a space.
            return pos + (others.trailing_zeros() / 8) as usize;
        }
        pos += 8;
    }
    while bytes.get(pos) == Some(&b' ') {
        pos += 1;
    }
    pos
}

/// Index of the first byte at or after `pos` that ends a plain run inside a string: a quote, a
/// backslash or a control character (or `bytes.len()`).
///
/// Strings are most of a catalog's bytes, so they are scanned a word at a time. For each of the
/// three tests, `(x - 0x01..) & !x & 0x80..` sets the high bit of every byte of `x` that is zero
/// (or, with 0x20, below 0x20); borrows can only flag bytes above a real match, so the lowest
/// flagged byte is always the first real one.
fn end_of_plain_run(bytes: &[u8], mut pos: usize) -> usize {
    const HIGH_BITS: u64 = eight(0x80);
    while let Some(word) = word_at(bytes, pos) {
        let quote = word ^ eight(b'"');
        let backslash = word ^ eight(b'\\');
        let flagged = ((quote.wrapping_sub(eight(1)) & !quote)
            | (backslash.wrapping_sub(eight(1)) & !backslash)
            | (word.wrapping_sub(eight(0x20)) & !word))
            & HIGH_BITS;
        if flagged != 0 {
            return pos + (flagged.trailing_zeros() / 8) as usize;
        }
        pos += 8;
    }
    while let Some(&c) = bytes.get(pos) {
        if c == b'"' || c == b'\\' || c < 0x20 {
            break;
        }
        pos += 1;
    }
    pos
}

/// Parse a whole JSON text into a value and the spans of every value in it.
pub fn parse_with_spans(text: &str) -> Result<(Value, Spans), SyntaxError> {
    parse_range_with_spans(text, 0, 0)
}

/// Parse the value that starts at byte `start` of `text`, at nesting `depth`, with spans whose
/// offsets are absolute in `text`. Only whitespace may follow the value when `start` is 0.
pub(crate) fn parse_range_with_spans(
    text: &str,
    start: usize,
    depth: usize,
) -> Result<(Value, Spans), SyntaxError> {
    parse_range_reusing(text, start, depth, Vec::new())
}

/// [`parse_range_with_spans`], recording the spans in `entries` (emptied first): a caller that
/// reads many values hands back the buffer of the last one instead of growing a new one.
pub(crate) fn parse_range_reusing(
    text: &str,
    start: usize,
    depth: usize,
    mut entries: Vec<SpanEntry>,
) -> Result<(Value, Spans), SyntaxError> {
    if text.len() >= u32::MAX as usize {
        return Err(SyntaxError {
            message: "input larger than 4 GiB".to_string(),
            offset: 0,
        });
    }
    let mut reader = Reader::new(text, start);
    entries.clear();
    let value = reader.read_value(&mut entries, NO_KEY, depth)?;
    if start == 0 {
        reader.finish()?;
    }
    Ok((value, Spans::new(entries)))
}

/// Parse a whole JSON text into a value (no spans kept), with the reader's depth limit and errors.
pub fn parse(text: &str) -> Result<Value, SyntaxError> {
    parse_with_spans(text).map(|(value, _)| value)
}

/// One member of an object, found without building its value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Member {
    /// The key, unescaped.
    pub key: String,
    /// Where the value is in the text.
    pub value: Range<usize>,
}

/// The byte range of the one JSON value `text` holds (after a byte order mark and whitespace),
/// its syntax checked at any depth and nothing built.
pub fn value_range(text: &str) -> Result<Range<usize>, SyntaxError> {
    let mut reader = Reader::new(text, 0);
    let range = reader.skip_value_within(0, usize::MAX)?;
    reader.finish()?;
    Ok(range)
}

/// The members of the object at `range` of `text` (a range [`value_range`] or a scan gave), in
/// order, each key unescaped and each value's range found without building it. `Ok(None)` when
/// the value there is not an object.
pub fn object_members(text: &str, range: Range<usize>) -> Result<Option<Vec<Member>>, SyntaxError> {
    members_at(&mut Reader::new(text, range.start))
}

/// The members of the object that is the whole of `text` (after a byte order mark and
/// whitespace; only whitespace may follow it), as [`object_members`] finds them: one pass over a
/// message. `Ok(None)` when the text does not start with an object.
pub fn root_members(text: &str) -> Result<Option<Vec<Member>>, SyntaxError> {
    let mut reader = Reader::new(text, 0);
    let members = members_at(&mut reader)?;
    if members.is_some() {
        reader.finish()?;
    }
    Ok(members)
}

/// The members of the object at the reader, which is left after it.
fn members_at(reader: &mut Reader<'_>) -> Result<Option<Vec<Member>>, SyntaxError> {
    if reader.peek() != Some(b'{') {
        return Ok(None);
    }
    reader.expect(b'{', "expected '{'")?;
    let mut members = Vec::new();
    if reader.peek() == Some(b'}') {
        return Ok(Some(members));
    }
    loop {
        let (key, _) = reader.read_key()?;
        reader.skip_whitespace();
        let value = reader.skip_value_within(0, usize::MAX)?;
        members.push(Member { key, value });
        if !reader.next_separator(b'}', "an object member")? {
            return Ok(Some(members));
        }
    }
}

/// The ranges of the elements of the array at `range` of `text`, in order, found without
/// building them. `Ok(None)` when the value there is not an array.
pub fn array_elements(
    text: &str,
    range: Range<usize>,
) -> Result<Option<Vec<Range<usize>>>, SyntaxError> {
    let mut reader = Reader::new(text, range.start);
    if reader.peek() != Some(b'[') {
        return Ok(None);
    }
    reader.expect(b'[', "expected '['")?;
    let mut elements = Vec::new();
    if reader.peek() == Some(b']') {
        return Ok(Some(elements));
    }
    loop {
        reader.skip_whitespace();
        elements.push(reader.skip_value_within(0, usize::MAX)?);
        if !reader.next_separator(b']', "an array element")? {
            return Ok(Some(elements));
        }
    }
}

/// Build the value at `range` of `text` (no deeper than [`MAX_DEPTH`]), reading keys an object
/// already has as `duplicates` says.
pub fn parse_value_at(
    text: &str,
    range: Range<usize>,
    duplicates: DuplicateKeys,
) -> Result<Value, SyntaxError> {
    let mut reader = Reader::new(text, range.start).with_duplicates(duplicates);
    let mut spans = Vec::new();
    let value = reader.read_value(&mut spans, NO_KEY, 0)?;
    if reader.offset() != range.end {
        return Err(SyntaxError {
            message: "unexpected characters after the JSON value".to_string(),
            offset: reader.offset(),
        });
    }
    Ok(value)
}

/// Parse a whole JSON text into a value, reading keys an object already has as `duplicates`
/// says.
pub fn parse_with(text: &str, duplicates: DuplicateKeys) -> Result<Value, SyntaxError> {
    parse_whole(Reader::new(text, 0).with_duplicates(duplicates))
}

/// Parse a whole JSON text that holds values read elsewhere `wrapping` levels deeper than
/// where they were read (a lock file keeps a tool up to five levels deeper than a catalog does): the
/// depth limit is [`MAX_DEPTH`] plus `wrapping`, so that what was read once can be read back.
pub fn parse_wrapping(text: &str, wrapping: usize) -> Result<Value, SyntaxError> {
    let mut reader = Reader::new(text, 0);
    reader.max_depth = MAX_DEPTH.saturating_add(wrapping);
    parse_whole(reader)
}

fn parse_whole(mut reader: Reader<'_>) -> Result<Value, SyntaxError> {
    if reader.text.len() >= u32::MAX as usize {
        return Err(SyntaxError {
            message: "input larger than 4 GiB".to_string(),
            offset: 0,
        });
    }
    let mut spans = Vec::new();
    let value = reader.read_value(&mut spans, NO_KEY, 0)?;
    reader.finish()?;
    Ok(value)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn parses_like_serde_json() {
        let text = r#" {"a": [1, -2, 3.5, 1e3, 18446744073709551615, -9223372036854775808],
            "b": {"c": null, "d": true, "e": false}, "s": "x\"\\\/\b\f\n\r\t\u00e9\ud83d\ude00y"} "#;
        let value = parse(text).unwrap();
        let expected: Value = serde_json::from_str(text).unwrap();
        assert_eq!(value, expected);
        // Key order is kept.
        let keys: Vec<_> = value.as_object().unwrap().keys().cloned().collect();
        assert_eq!(keys, ["a", "b", "s"]);
    }

    #[test]
    fn records_spans_in_pre_order() {
        let text = "{\"a\": [1, {\"b\": 2}], \"c\": \"x\"}";
        let (_, spans) = parse_with_spans(text).unwrap();
        let slices: Vec<&str> = spans
            .entries()
            .iter()
            .map(|e| &text[e.start as usize..e.end as usize])
            .collect();
        assert_eq!(
            slices,
            [text, "[1, {\"b\": 2}]", "1", "{\"b\": 2}", "2", "\"x\""]
        );
        assert_eq!(spans.entries()[1].key_start, 1);
        assert_eq!(spans.entries()[0].next, 6);
        assert_eq!(spans.entries()[1].next, 5);
    }

    #[test]
    fn reports_errors_with_offsets() {
        let cases = [
            ("{\"a\": 1,}", 8, "expected an object key in double quotes"),
            ("[1 2]", 3, "expected ',' or ']' after an array element"),
            ("{\"a\" 1}", 5, "expected ':' after an object key"),
            ("[1,", 3, "unexpected end of input: expected a JSON value"),
            ("\"abc", 4, "unexpected end of input inside a string"),
            ("[01]", 2, "expected ',' or ']' after an array element"),
            ("tru", 0, "invalid literal, expected `true`"),
            ("1 2", 2, "unexpected characters after the JSON value"),
            ("{\"a\":1,\"a\":2}", 7, "duplicate key 'a' in an object"),
            ("\"\\x\"", 2, "invalid escape sequence in a string"),
            ("", 0, "unexpected end of input: expected a JSON value"),
        ];
        for (text, offset, message) in cases {
            let err = parse(text).unwrap_err();
            assert_eq!(
                (err.offset, err.message.as_str()),
                (offset, message),
                "{text}"
            );
        }
    }

    #[test]
    fn refuses_deep_nesting_without_overflowing() {
        let deep = "[".repeat(100_000) + &"]".repeat(100_000);
        let err = parse(&deep).unwrap_err();
        assert_eq!(err.offset, MAX_DEPTH);
        assert!(err.message.contains("deeper than 128"));
        let mut reader = Reader::new(&deep, 0);
        assert!(reader.skip_value(0).is_err());
        let ok = "[".repeat(MAX_DEPTH) + &"]".repeat(MAX_DEPTH);
        assert!(parse(&ok).is_ok());
    }

    #[test]
    fn skip_checks_syntax_and_returns_the_range() {
        let text = r#"  {"a": [1, {"b": "}"}], "c": "x"} "#;
        let mut reader = Reader::new(text, 0);
        let range = reader.skip_value(0).unwrap();
        assert_eq!(&text[range], r#"{"a": [1, {"b": "}"}], "c": "x"}"#);
        let mut reader = Reader::new("[1, {\"a\" 2}]", 0);
        assert_eq!(
            reader.skip_value(0).unwrap_err().message,
            "expected ':' after an object key"
        );
    }

    #[test]
    fn word_scans_match_byte_scans() {
        let plain_end = |bytes: &[u8], from: usize| {
            (from..bytes.len())
                .find(|&i| matches!(bytes[i], b'"' | b'\\' | 0..=0x1f))
                .unwrap_or(bytes.len())
        };
        let spaces_end = |bytes: &[u8], from: usize| {
            (from..bytes.len())
                .find(|&i| bytes[i] != b' ')
                .unwrap_or(bytes.len())
        };
        // Every byte value at every place of a word, among plain ASCII, UTF-8 or spaces, alone
        // or just before a zero byte (whose borrow must not move the answer).
        for filler in [b'a', 0xc3, 0xff, b' ', 0x21] {
            for special in 0..=255u8 {
                for (at, zero_after) in (0..20).flat_map(|at| [(at, false), (at, true)]) {
                    let mut bytes = vec![filler; 20];
                    bytes[at] = special;
                    if zero_after {
                        bytes[(at + 1) % 20] = 0;
                    }
                    for from in [0, 1, 7, 8, 13, 19, 20] {
                        let case = format!("{filler} {special} at {at} ({zero_after}) from {from}");
                        assert_eq!(
                            end_of_plain_run(&bytes, from),
                            plain_end(&bytes, from),
                            "{case}"
                        );
                        assert_eq!(
                            end_of_spaces(&bytes, from),
                            spaces_end(&bytes, from),
                            "{case}"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn reads_what_the_grammar_allows_that_no_rust_value_holds() {
        // Lone surrogates, leading or trailing, alone or before another escape, become U+FFFD;
        // pairs stay characters.
        assert_eq!(parse(r#""a\ud83d""#).unwrap(), json!("a\u{fffd}"));
        assert_eq!(parse(r#""\ude00b""#).unwrap(), json!("\u{fffd}b"));
        assert_eq!(parse(r#""\ud83d\u0041""#).unwrap(), json!("\u{fffd}A"));
        assert_eq!(
            parse(r#""\ud83d\ud83d\ude00""#).unwrap(),
            json!("\u{fffd}😀")
        );
        assert_eq!(parse(r#"{"\udc00": 1}"#).unwrap(), json!({"\u{fffd}": 1}));
        // Keys that differ only in lone surrogates read alike here, but not everywhere: where
        // the last key would win, they are refused instead.
        for merged in [
            r#"{"k\ud800": "x", "k\uDC00": 1}"#,
            r#"{"k\ud800": "x", "k\ufffd": 1}"#,
            r#"{"k\ufffd": "x", "k\ud800": 1}"#,
        ] {
            let refused = parse_with(merged, DuplicateKeys::KeepLast).unwrap_err();
            assert!(refused.message.contains("lone surrogate"), "{merged}");
        }
        let last = parse_with(
            r#"{"k\u00e9": "x", "k\u00e9": 1, "\ud83d\ude00": 2}"#,
            DuplicateKeys::KeepLast,
        );
        assert_eq!(last.unwrap(), json!({"k\u{e9}": 1, "😀": 2}));
        // Numbers beyond a float's range keep their sign and their order against any bound.
        let huge = format!("1{}", "0".repeat(400));
        assert_eq!(parse(&huge).unwrap(), json!(f64::MAX));
        assert_eq!(parse(&format!("-{huge}")).unwrap(), json!(-f64::MAX));
        assert_eq!(parse("1e999").unwrap(), json!(f64::MAX));
        assert_eq!(parse("1e-999").unwrap(), json!(0.0));
        assert!(parse("18446744073709551617").unwrap().is_f64());
        // A byte order mark before the document, and only there.
        assert_eq!(parse("\u{feff} {\"a\": 1}").unwrap(), json!({"a": 1}));
        assert!(parse("[\u{feff}1]").is_err());
    }

    #[test]
    fn duplicate_keys_are_refused_or_the_last_one_wins() {
        let text = r#"{"a": 1, "b": 2, "a": {"c": 3}}"#;
        assert_eq!(
            parse(text).unwrap_err().message,
            "duplicate key 'a' in an object"
        );
        let value = parse_with(text, DuplicateKeys::KeepLast).unwrap();
        assert_eq!(value, json!({"a": {"c": 3}, "b": 2}));
        assert_eq!(value, serde_json::from_str::<Value>(text).unwrap());
    }

    #[test]
    fn tells_lone_surrogates_from_pairs_and_other_escapes() {
        let cases = [
            (r#"{"a": "\ud800"}"#, true),
            (r#"{"a": "\udc00x"}"#, true),
            (r#"{"a": "\ud83d\ud83d\ude00"}"#, true),
            (r#"{"a": "x\uD83D"}"#, true),
            (r#"{"\udfff": 1}"#, true),
            (r#"{"a": "\ud83d\ude00"}"#, false),
            (r#"{"a": "\\ud800"}"#, false),
            (r#"{"a": "\\\ud800"}"#, true),
            (r#"{"a": "\u00e9\n\"\/"}"#, false),
            (r#"{"a": "\ufffd"}"#, false),
            ("{\"a\": \"\u{fffd}\"}", false),
        ];
        for (text, lone) in cases {
            assert_eq!(has_lone_surrogate(text), lone, "{text}");
            // What the reader makes of it agrees: U+FFFD where a lone surrogate stood.
            assert!(parse(text).is_ok(), "{text}");
        }
    }

    use proptest::strategy::Strategy as _;

    proptest::proptest! {
        /// Against UTF-16 decoding of the escapes written: a lone surrogate is found exactly
        /// where a decoder keeping code units meets an unpaired one.
        #[test]
        fn lone_surrogates_are_found_where_utf16_decoding_meets_one(
            pieces in proptest::collection::vec(
                proptest::prop_oneof![
                    // Around the surrogates, and any code unit.
                    (0xD7F0u16..0xE010).prop_map(Some),
                    proptest::num::u16::ANY.prop_map(Some),
                    proptest::strategy::Just(None),
                ],
                0..12,
            ),
            plain in "[a-z\\\\é]{0,3}",
        ) {
            let mut text = String::from("[\"");
            let mut units = Vec::new();
            for piece in &pieces {
                match piece {
                    Some(unit) => {
                        text.push_str(&format!("\\u{unit:04x}"));
                        units.push(*unit);
                    }
                    // An escaped backslash then what would be a lone surrogate's escape
                    // after a single one: six characters, no escape.
                    None => {
                        text.push_str("\\\\ud800");
                        units.extend("\\ud800".encode_utf16());
                    }
                }
                for c in plain.chars() {
                    if c == '\\' {
                        text.push_str("\\\\");
                    } else {
                        text.push(c);
                    }
                    units.extend(c.encode_utf16(&mut [0; 2]).iter());
                }
            }
            text.push_str("\"]");
            let unpaired = char::decode_utf16(units.iter().copied()).any(|c| c.is_err());
            proptest::prop_assert!(parse(&text).is_ok(), "{}", text);
            proptest::prop_assert_eq!(has_lone_surrogate(&text), unpaired, "{}", text);
        }
    }

    #[test]
    fn scans_members_and_elements_without_building_them() {
        let deep = format!("{}1{}", "[".repeat(300), "]".repeat(300));
        let text = format!("\u{feff} {{\"id\": 3.0, \"k\\u0065y\": [1, {{}}], \"deep\": {deep}}} ");
        let whole = value_range(&text).unwrap();
        assert!(text[whole.clone()].starts_with('{') && text[whole.clone()].ends_with('}'));
        let members = object_members(&text, whole).unwrap().unwrap();
        let found: Vec<(&str, &str)> = members
            .iter()
            .map(|m| (m.key.as_str(), &text[m.value.clone()]))
            .collect();
        assert_eq!(
            found,
            [("id", "3.0"), ("key", "[1, {}]"), ("deep", deep.as_str())]
        );
        let elements = array_elements(&text, members[1].value.clone())
            .unwrap()
            .unwrap();
        let elements: Vec<&str> = elements.iter().map(|r| &text[r.clone()]).collect();
        assert_eq!(elements, ["1", "{}"]);
        assert_eq!(object_members(&text, members[0].value.clone()), Ok(None));
        assert_eq!(array_elements("[]", 0..2), Ok(Some(Vec::new())));
        // Built values keep the depth limit.
        let err = parse_value_at(&text, members[2].value.clone(), DuplicateKeys::KeepLast);
        assert!(err.unwrap_err().message.contains("deeper than 128"));
        assert_eq!(
            parse_value_at(&text, members[1].value.clone(), DuplicateKeys::Refuse),
            Ok(json!([1, {}]))
        );
        assert!(value_range("[1,").is_err());
        assert!(value_range("1 2").is_err());
        // The whole text as one object, in one pass.
        assert_eq!(root_members(&text).unwrap().unwrap(), members);
        assert_eq!(root_members("[1]"), Ok(None));
        assert!(root_members(r#"{"a": 1} {}"#).is_err());
    }

    #[test]
    fn numbers_keep_their_kind() {
        assert_eq!(parse("1").unwrap(), json!(1));
        assert!(parse("1.0").unwrap().is_f64());
        assert!(parse("-1").unwrap().is_i64());
        assert!(parse("18446744073709551616").unwrap().is_f64());
    }
}
