//! What the binary prints, kept from steering the terminal it is printed to.
//!
//! Tool names, descriptions, argument names and server messages come from catalogs and servers
//! the user may not trust, and reach reports and errors. A name holding `ESC ]0;...` would
//! retitle the user's terminal, one holding U+202E would print reversed. Every report and
//! message passes through here on its way out: in text, such characters are written
//! `<U+001B>` ([`toolschema::text::terminal_safe`]); in JSON, as `\u001b` escapes, the same
//! string to a JSON reader. Lint's text and workflow-command reports escape their parts
//! themselves, since text may be coloured; a fixed catalog and a diff of fixes are the file's
//! own text and go out as they are.

use std::io::{self, Write};
use toolschema::text::{steers_terminal, terminal_safe};

/// How the characters that steer a terminal are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Escapes {
    /// Human text: `<U+001B>`.
    Text,
    /// JSON text: `\u001b` (only inside strings can such characters occur in JSON).
    Json,
}

/// A writer that escapes what would steer a terminal, as [`Escapes`] says. Each write is
/// expected to hold whole characters, as every `write!` of a `str` does; bytes that are not
/// UTF-8 go through unchanged.
pub struct TerminalSafe<W> {
    inner: W,
    escapes: Escapes,
}

impl<W: Write> TerminalSafe<W> {
    /// Escape what is written to `inner`.
    pub fn new(inner: W, escapes: Escapes) -> Self {
        TerminalSafe { inner, escapes }
    }
}

impl<W: Write> Write for TerminalSafe<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let Ok(text) = std::str::from_utf8(buf) else {
            return self.inner.write(buf);
        };
        match self.escapes {
            Escapes::Text => self.inner.write_all(terminal_safe(text).as_bytes())?,
            Escapes::Json => write_json_escaped(&mut self.inner, text)?,
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

/// Write JSON `text` with each character that steers a terminal as a `\uXXXX` escape. Line
/// feeds, tabs and carriage returns outside strings are JSON's whitespace, and inside strings a
/// JSON writer has escaped them already: they go through.
fn write_json_escaped(out: &mut impl Write, text: &str) -> io::Result<()> {
    let mut start = 0;
    for (at, c) in text.char_indices() {
        if matches!(c, '\n' | '\t' | '\r') || !steers_terminal(c) {
            continue;
        }
        out.write_all(&text.as_bytes()[start..at])?;
        // Every such character is in the Basic Multilingual Plane: one escape each.
        write!(out, "\\u{:04x}", c as u32)?;
        start = at + c.len_utf8();
    }
    out.write_all(&text.as_bytes()[start..])
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

    fn through(escapes: Escapes, text: &str) -> String {
        let mut out = Vec::new();
        TerminalSafe::new(&mut out, escapes)
            .write_all(text.as_bytes())
            .unwrap();
        String::from_utf8(out).unwrap()
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
    }
}
