//! Values of a host language (a Python object, a JavaScript value) built straight into a
//! `Value`, with what their JSON text would have told the validator: the language modules
//! judge a host value as the command judges the text the host would write for it, without
//! writing and reading that text.
//!
//! A host's walk over its own values stays in its crate; what the text would add lives here
//! once: a big integer's literal, a string's lone surrogates, and the depth the reader allows.

use super::number::{numbers_read_inexactly, Decimal};
use super::pointer::escape_segment;
use serde_json::Value;

/// What the JSON text of a host value would have told the validator beyond the value read
/// from it (see [`crate::validate::SchemaValidator::validate_noted`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TextNotes {
    /// A string held a lone surrogate (which the text writes as a `\u` escape, and the value
    /// holds as U+FFFD): see [`super::has_lone_surrogate`].
    pub lone_surrogates: bool,
    /// The numbers the value holds otherwise than the text states them, by JSON Pointer (see
    /// [`numbers_read_inexactly`]): integers past 64 bits.
    pub inexact: Vec<(String, Decimal)>,
}

impl TextNotes {
    /// Notes of a value read from JSON `text` (what the text states beyond the value).
    pub fn of_text(text: &str) -> TextNotes {
        TextNotes {
            lone_surrogates: super::has_lone_surrogate(text),
            inexact: numbers_read_inexactly(text),
        }
    }

    /// Whether the text would have told nothing beyond the value.
    pub fn is_empty(&self) -> bool {
        !self.lone_surrogates && self.inexact.is_empty()
    }

    /// Take `inner`'s notes, made for the value at `segment` (an object's key or an array's
    /// index) of the value these notes are about.
    pub fn nest(&mut self, segment: &str, inner: TextNotes) {
        self.lone_surrogates |= inner.lone_surrogates;
        let segment = escape_segment(segment);
        self.inexact.extend(
            inner
                .inexact
                .into_iter()
                .map(|(pointer, number)| (format!("/{segment}{pointer}"), number)),
        );
    }
}

/// The value of an integer written as the decimal `literal` (an optional `-` and digits, as
/// Python's `int.__repr__` or JavaScript's `BigInt.prototype.toString` write it), as the
/// reader reads that literal in a text, with the decimal noted when the value holds it
/// otherwise (past 64 bits). `None` when `literal` is not such an integer.
pub fn integer_literal(literal: &str, notes: &mut TextNotes) -> Option<Value> {
    let digits = literal.strip_prefix('-').unwrap_or(literal);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let value = super::parse(literal).ok()?;
    notes.inexact.extend(numbers_read_inexactly(literal));
    Some(value)
}

/// A string given as UTF-16 code units, which may hold lone surrogates (Python's `str` and
/// JavaScript's strings allow them): each lone surrogate becomes U+FFFD, as the reader reads
/// its `\u` escape, and is noted. A surrogate pair is the character it encodes.
pub fn string_of_utf16(units: impl IntoIterator<Item = u16>, notes: &mut TextNotes) -> String {
    char::decode_utf16(units)
        .map(|unit| {
            unit.unwrap_or_else(|_| {
                notes.lone_surrogates = true;
                char::REPLACEMENT_CHARACTER
            })
        })
        .collect()
}

/// The message for a host value nesting deeper than the reader reads (or holding itself):
/// its arrays and objects at `depth` (0 for the outermost) open one level too many when
/// `depth` reaches [`super::MAX_DEPTH`].
pub fn too_deep(depth: usize) -> Option<String> {
    (depth >= super::MAX_DEPTH).then(|| {
        format!(
            "nests deeper than {} levels of arrays and objects (or holds itself)",
            super::MAX_DEPTH
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_big_integer_is_read_as_its_literal_and_noted() {
        let literal = "123456789012345678901234567890";
        let mut notes = TextNotes::default();
        let value = integer_literal(literal, &mut notes).unwrap();
        assert_eq!(value, super::super::parse(literal).unwrap());
        assert_eq!(notes.inexact, numbers_read_inexactly(literal));
        assert_eq!(notes.inexact.len(), 1);
        let mut outer = TextNotes::default();
        outer.nest("a/b", notes);
        assert_eq!(outer.inexact[0].0, "/a~1b");
    }

    #[test]
    fn a_64_bit_integer_is_not_noted() {
        let mut notes = TextNotes::default();
        assert_eq!(
            integer_literal("-9223372036854775808", &mut notes),
            Some(Value::from(i64::MIN))
        );
        assert_eq!(
            integer_literal("18446744073709551615", &mut notes),
            Some(Value::from(u64::MAX))
        );
        assert!(notes.is_empty());
        assert_eq!(integer_literal("1e3", &mut notes), None);
        assert_eq!(integer_literal("-", &mut notes), None);
    }

    #[test]
    fn lone_surrogates_read_as_the_reader_reads_their_escapes() {
        for text in [
            r#""a\ud800b""#,
            r#""\udc00\ud83d\ude00\ud83d""#,
            r#""plain""#,
        ] {
            let read = super::super::parse(text).unwrap();
            let Value::String(read) = read else { panic!() };
            let units: Vec<u16> = serde_json::from_str::<String>(text)
                .map(|s| s.encode_utf16().collect())
                .unwrap_or_else(|_| escaped_units(text));
            let mut notes = TextNotes::default();
            assert_eq!(string_of_utf16(units, &mut notes), read, "{text}");
            assert_eq!(
                notes.lone_surrogates,
                super::super::has_lone_surrogate(text)
            );
        }
    }

    /// The UTF-16 units of a JSON string of ASCII and `\u` escapes.
    fn escaped_units(text: &str) -> Vec<u16> {
        let inner = &text[1..text.len() - 1];
        let mut units = Vec::new();
        let mut rest = inner;
        while !rest.is_empty() {
            if let Some(hex) = rest.strip_prefix("\\u") {
                units.push(u16::from_str_radix(&hex[..4], 16).unwrap());
                rest = &hex[4..];
            } else {
                units.push(u16::from(rest.as_bytes()[0]));
                rest = &rest[1..];
            }
        }
        units
    }
}
