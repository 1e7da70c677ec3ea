//! What the binary prints, kept from steering the terminal it is printed to.
//!
//! Tool names, descriptions, argument names and server messages come from catalogs and servers
//! the user may not trust, and reach reports and errors. A name holding `ESC ]0;...` would
//! retitle the user's terminal, one holding U+202E would print reversed. Every report and
//! message passes through here on its way out: in text, such characters, and those a reader
//! cannot see (a name ending in a zero-width space), are written `<U+001B>`
//! ([`toolschema::text::terminal_safe`]); in JSON, as `\u001b` escapes, the same string to a
//! JSON reader. Lint's text and workflow-command reports escape their parts
//! themselves, since text may be coloured; a fixed catalog and a diff of fixes are the file's
//! own text and go out as they are.

use std::io::{self, Write};
use toolschema::text::{json_safe, terminal_safe};

/// How the characters that steer a terminal are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Escapes {
    /// Human text: `<U+001B>`.
    Text,
    /// JSON text: `\u001b` (only inside strings can such characters occur in JSON).
    Json,
}

/// A writer that escapes what would steer a terminal, as [`Escapes`] says. A character cut
/// between two writes is kept until the next completes it (or a flush); bytes that are not
/// UTF-8 at all are written as U+FFFD, so nothing goes out unlooked at.
pub struct TerminalSafe<W: Write> {
    inner: W,
    escapes: Escapes,
    /// The start of a character the last write cut (at most three bytes).
    carry: Vec<u8>,
}

impl<W: Write> TerminalSafe<W> {
    /// Escape what is written to `inner`.
    pub fn new(inner: W, escapes: Escapes) -> Self {
        TerminalSafe {
            inner,
            escapes,
            carry: Vec::new(),
        }
    }

    fn emit(&mut self, text: &str) -> io::Result<()> {
        match self.escapes {
            Escapes::Text => self.inner.write_all(terminal_safe(text).as_bytes()),
            Escapes::Json => self.inner.write_all(json_safe(text).as_bytes()),
        }
    }
}

impl<W: Write> Write for TerminalSafe<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let joined;
        let mut rest: &[u8] = if self.carry.is_empty() {
            buf
        } else {
            let mut carried = std::mem::take(&mut self.carry);
            carried.extend_from_slice(buf);
            joined = carried;
            &joined
        };
        loop {
            match std::str::from_utf8(rest) {
                Ok(text) => {
                    self.emit(text)?;
                    return Ok(buf.len());
                }
                Err(e) => {
                    let (valid, after) = rest.split_at(e.valid_up_to());
                    self.emit(std::str::from_utf8(valid).unwrap_or_default())?;
                    match e.error_len() {
                        // A character cut at the end: the next write completes it.
                        None => {
                            self.carry = after.to_vec();
                            return Ok(buf.len());
                        }
                        Some(bad) => {
                            self.emit("\u{FFFD}")?;
                            rest = &after[bad..];
                        }
                    }
                }
            }
        }
    }

    /// A character still cut when the output is flushed is shown as U+FFFD: a flush ends what
    /// was written so far.
    fn flush(&mut self) -> io::Result<()> {
        if !std::mem::take(&mut self.carry).is_empty() {
            self.emit("\u{FFFD}")?;
        }
        self.inner.flush()
    }
}

/// Print a line to standard error, escaped as text (what `eprintln!` does, made safe).
macro_rules! say {
    ($($arg:tt)*) => {
        eprintln!("{}", toolschema::text::terminal_safe(&format!($($arg)*)))
    };
}
pub(crate) use say;

#[cfg(test)]
mod tests {
    use super::*;
    use toolschema::text::steers_terminal;

    fn through(escapes: Escapes, text: &str) -> String {
        let mut out = Vec::new();
        TerminalSafe::new(&mut out, escapes)
            .write_all(text.as_bytes())
            .unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn characters_cut_between_writes_and_bytes_that_are_not_utf8_are_escaped_too() {
        let text = "a\u{9B}2J\u{202E}b";
        for cut in 0..=text.len() {
            let mut out = Vec::new();
            {
                let mut safe = TerminalSafe::new(&mut out, Escapes::Text);
                safe.write_all(&text.as_bytes()[..cut]).unwrap();
                safe.write_all(&text.as_bytes()[cut..]).unwrap();
            }
            assert_eq!(
                String::from_utf8(out).unwrap(),
                "a<U+009B>2J<U+202E>b",
                "cut at {cut}"
            );
        }
        let mut out = Vec::new();
        {
            let mut safe = TerminalSafe::new(&mut out, Escapes::Text);
            safe.write_all(b"x\xff\x1b[2J\xe2\x80").unwrap();
            safe.flush().unwrap();
        }
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "x\u{FFFD}<U+001B>[2J\u{FFFD}"
        );
    }

    #[test]
    fn text_and_json_are_escaped_each_its_own_way() {
        let name = "x\u{1B}]0;pwned\u{7}\u{9B}31m\u{202E}abc";
        assert_eq!(
            through(Escapes::Text, &format!("tool '{name}'\n")),
            "tool 'x<U+001B>]0;pwned<U+0007><U+009B>31m<U+202E>abc'\n"
        );
        let json = serde_json::to_string_pretty(&serde_json::json!({ "tool": name })).unwrap();
        let escaped = through(Escapes::Json, &json);
        assert!(
            escaped.chars().all(|c| !steers_terminal(c) || c == '\n'),
            "{escaped}"
        );
        // The same document to a JSON reader.
        let read: serde_json::Value = serde_json::from_str(&escaped).unwrap();
        assert_eq!(read["tool"], name);
        // What a reader cannot see is escaped too, tag characters as surrogate pairs.
        let hidden = "new\u{200B}\u{E0041}\u{2028}";
        let json = serde_json::to_string(&serde_json::json!({ "name": hidden })).unwrap();
        let escaped = through(Escapes::Json, &json);
        assert_eq!(escaped, r#"{"name":"new\u200b\udb40\udc41\u2028"}"#);
        let read: serde_json::Value = serde_json::from_str(&escaped).unwrap();
        assert_eq!(read["name"], hidden);
    }
}
