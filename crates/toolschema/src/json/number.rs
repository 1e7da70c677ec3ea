//! Numbers as their JSON text states them, exactly.
//!
//! A `serde_json::Value` holds a number as a 64-bit integer or float, so `9007199254740993.0`,
//! `1e400` and `1e-400` are read with rounding. A [`Decimal`] holds what the text says: a sign,
//! digits and a power of ten. It compares and divides exactly, which is all JSON Schema asks of
//! numbers (`const`, `enum`, `multipleOf`, the bounds, `uniqueItems`, `integer`).

use super::pointer::push_segment;
use serde_json::{Number, Value};
use std::cmp::Ordering;

/// A decimal number held exactly: `digits × 10^exponent`, with a sign.
///
/// The digits have no leading or trailing zeros, so each number has one form: `1.0`, `1` and
/// `10e-1` are the same `Decimal`. Zero has no digits and is never negative (JSON Schema does
/// not tell `-0` from `0`).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Decimal {
    negative: bool,
    /// ASCII digits, the first and last not `0`; empty for zero.
    digits: Vec<u8>,
    exponent: i64,
    /// Whether the text's power of ten was past ±2^60 and `exponent` holds that limit instead
    /// (see [`Decimal::is_beyond`]).
    beyond: bool,
}

impl Decimal {
    /// The number a JSON number text states; `None` when the text is not a JSON number.
    pub fn parse(text: &str) -> Option<Decimal> {
        let bytes = text.as_bytes();
        let (negative, mut rest) = match bytes.split_first() {
            Some((b'-', rest)) => (true, rest),
            _ => (false, bytes),
        };
        let integer_len = rest.iter().take_while(|b| b.is_ascii_digit()).count();
        if integer_len == 0 || (integer_len > 1 && rest[0] == b'0') {
            return None;
        }
        let mut digits: Vec<u8> = rest[..integer_len].to_vec();
        rest = &rest[integer_len..];
        let mut exponent: i64 = 0;
        if let Some((b'.', after)) = rest.split_first() {
            let fraction_len = after.iter().take_while(|b| b.is_ascii_digit()).count();
            if fraction_len == 0 {
                return None;
            }
            digits.extend_from_slice(&after[..fraction_len]);
            exponent = -i64::try_from(fraction_len).ok()?;
            rest = &after[fraction_len..];
        }
        if let Some((b'e' | b'E', after)) = rest.split_first() {
            let (sign, after) = match after.split_first() {
                Some((b'-', after)) => (-1i64, after),
                Some((b'+', after)) => (1, after),
                _ => (1, after),
            };
            let exponent_len = after.iter().take_while(|b| b.is_ascii_digit()).count();
            if exponent_len == 0 || exponent_len != after.len() {
                return None;
            }
            let mut stated: i64 = 0;
            for digit in &after[..exponent_len] {
                stated = stated
                    .saturating_mul(10)
                    .saturating_add(i64::from(digit - b'0'))
                    .min(MAX_EXPONENT + 1);
            }
            exponent = exponent.checked_add(sign * stated)?;
        } else if !rest.is_empty() {
            return None;
        }
        Some(Decimal::normalized(negative, digits, exponent))
    }

    /// The number `number` holds: an integer exactly, a float as the shortest decimal that
    /// reads back as it (what serde_json writes for it).
    pub fn of(number: &Number) -> Decimal {
        // Every `Number` is finite, and its text is a JSON number.
        Decimal::parse(&number.to_string()).unwrap_or_else(Decimal::zero)
    }

    /// The value `number` holds, for a number that has no text of its own (a schema built in
    /// code): an integer exactly; a float past 2^53, where every float is a whole number, as
    /// that number (`2^65` as `36893488147419103232`, not as its shortest decimal
    /// `36893488147419103000`); a smaller float as its shortest decimal, what a program writing
    /// `0.1` means (its binary value would make `multipleOf: 0.1` refuse `0.3`).
    pub fn held_by(number: &Number) -> Decimal {
        match number.as_f64() {
            Some(float) if number.is_f64() && float.abs() >= TWO_TO_THE_53 => {
                Decimal::of_whole_float(float)
            }
            _ => Decimal::of(number),
        }
    }

    /// A finite float that is a whole number, exactly: its 53-bit significand times a power
    /// of two, doubled digit by digit.
    fn of_whole_float(float: f64) -> Decimal {
        let bits = float.to_bits();
        let biased = ((bits >> 52) & 0x7ff) as i64;
        let significand = (bits & ((1u64 << 52) - 1)) | (1u64 << 52);
        let mut digits: Vec<u8> = significand.to_string().into_bytes();
        // float = significand × 2^(biased - 1075); whole floats past 2^53 have a power >= 1.
        for _ in 0..(biased - 1075).max(0) {
            let mut carry = 0u8;
            for digit in digits.iter_mut().rev() {
                let doubled = (*digit - b'0') * 2 + carry;
                *digit = b'0' + doubled % 10;
                carry = doubled / 10;
            }
            if carry > 0 {
                digits.insert(0, b'0' + carry);
            }
        }
        Decimal::normalized(float < 0.0, digits, 0)
    }

    pub(crate) fn zero() -> Decimal {
        Decimal {
            negative: false,
            digits: Vec::new(),
            exponent: 0,
            beyond: false,
        }
    }

    fn normalized(negative: bool, mut digits: Vec<u8>, mut exponent: i64) -> Decimal {
        let leading = digits.iter().take_while(|d| **d == b'0').count();
        digits.drain(..leading);
        while digits.last() == Some(&b'0') {
            digits.pop();
            exponent += 1;
        }
        if digits.is_empty() {
            return Decimal::zero();
        }
        // Past the limit, the place of the leading digit is all that can be told.
        let beyond = exponent.abs() > MAX_EXPONENT;
        if beyond {
            exponent = exponent.signum() * (MAX_EXPONENT + 1);
        }
        Decimal {
            negative,
            digits,
            exponent,
            beyond,
        }
    }

    /// Whether its power of ten is past ±2^60, where it is held as 2^60 + 1: it still compares
    /// rightly with every number that is not (it is further from 1 than any of them), divides as
    /// it should, and is whole or not as it should be, but two such numbers cannot be told
    /// apart.
    pub fn is_beyond(&self) -> bool {
        self.beyond
    }

    /// Whether it is zero.
    pub fn is_zero(&self) -> bool {
        self.digits.is_empty()
    }

    /// Whether it is a whole number.
    pub fn is_integer(&self) -> bool {
        self.exponent >= 0 || self.is_zero()
    }

    /// Whether dividing it by `divisor` gives a whole number (`multipleOf`); never for a zero
    /// divisor.
    pub fn is_multiple_of(&self, divisor: &Decimal) -> bool {
        if divisor.is_zero() {
            return false;
        }
        if self.is_zero() {
            return true;
        }
        // self / divisor = (a / b) × 10^k, where a and b are the digits. Neither `a` nor `b`
        // ends in 0, so for k < 0 the quotient needs 10 to divide `a`: never whole. For k >= 0
        // it is whole when b divides a × 10^k: b with its factors 2 and 5 taken out (at most k
        // of each, which 10^k supplies) must divide a.
        let k = self.exponent - divisor.exponent;
        if k < 0 {
            return false;
        }
        let mut b = divisor.digits.clone();
        for factor in [2u32, 5] {
            let mut taken: i64 = 0;
            while taken < k {
                let (quotient, remainder) = divide_small(&b, factor);
                if remainder != 0 {
                    break;
                }
                b = quotient;
                taken += 1;
            }
        }
        is_zero_digits(&remainder(&self.digits, &b))
    }

    /// Its position among powers of ten: the exponent of its leading digit.
    fn magnitude(&self) -> i64 {
        self.exponent + self.digits.len() as i64
    }

    fn cmp_magnitude(&self, other: &Decimal) -> Ordering {
        match (self.is_zero(), other.is_zero()) {
            (true, true) => return Ordering::Equal,
            (true, false) => return Ordering::Less,
            (false, true) => return Ordering::Greater,
            _ => {}
        }
        // Same leading power of ten: digit strings compare as fractions 0.d1d2...
        self.magnitude()
            .cmp(&other.magnitude())
            .then_with(|| self.digits.cmp(&other.digits))
    }
}

/// 2^53: from there up every float is a whole number, and not every whole number a float.
const TWO_TO_THE_53: f64 = 9_007_199_254_740_992.0;

/// The largest power of ten a [`Decimal`] holds exactly (it keeps sums of two exponents and
/// of a text's length far inside 64 bits).
const MAX_EXPONENT: i64 = 1 << 60;

impl Ord for Decimal {
    fn cmp(&self, other: &Decimal) -> Ordering {
        match (self.negative, other.negative) {
            (false, false) => self.cmp_magnitude(other),
            (true, true) => other.cmp_magnitude(self),
            (false, true) => Ordering::Greater,
            (true, false) => Ordering::Less,
        }
    }
}

impl PartialOrd for Decimal {
    fn partial_cmp(&self, other: &Decimal) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl std::fmt::Display for Decimal {
    /// Every digit, plain, with up to 20 zeros after them or 5 before; scientific notation
    /// beyond.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.is_zero() {
            return f.write_str("0");
        }
        if self.negative {
            f.write_str("-")?;
        }
        let digits = std::str::from_utf8(&self.digits).unwrap_or("0");
        let magnitude = self.magnitude();
        if self.exponent >= 0 && self.exponent <= 20 {
            write!(f, "{digits}{}", "0".repeat(self.exponent as usize))
        } else if self.exponent < 0 && magnitude > 0 {
            let (whole, fraction) = digits.split_at(magnitude as usize);
            write!(f, "{whole}.{fraction}")
        } else if self.exponent < 0 && magnitude > -6 {
            write!(f, "0.{}{digits}", "0".repeat((-magnitude) as usize))
        } else {
            let (first, rest) = digits.split_at(1);
            let dot = if rest.is_empty() { "" } else { "." };
            if self.beyond {
                let sign = if self.exponent < 0 { "-" } else { "" };
                write!(f, "{first}{dot}{rest}e{sign}(more than 2^60)")
            } else {
                write!(f, "{first}{dot}{rest}e{}", magnitude - 1)
            }
        }
    }
}

/// `digits` (ASCII, most significant first) divided by a small `divisor`.
fn divide_small(digits: &[u8], divisor: u32) -> (Vec<u8>, u32) {
    let mut quotient = Vec::with_capacity(digits.len());
    let mut remainder = 0u32;
    for digit in digits {
        let current = remainder * 10 + u32::from(digit - b'0');
        quotient.push(b'0' + (current / divisor) as u8);
        remainder = current % divisor;
    }
    let leading = quotient.iter().take_while(|d| **d == b'0').count();
    quotient.drain(..leading);
    (quotient, remainder)
}

fn is_zero_digits(digits: &[u8]) -> bool {
    digits.iter().all(|d| *d == b'0')
}

/// Compare two digit strings without leading zeros as whole numbers.
fn cmp_whole(a: &[u8], b: &[u8]) -> Ordering {
    a.len().cmp(&b.len()).then_with(|| a.cmp(b))
}

/// `a mod b` for whole numbers as ASCII digit strings (`b` not zero): long division, one digit
/// of `a` at a time, costing the product of their lengths.
fn remainder(a: &[u8], b: &[u8]) -> Vec<u8> {
    let mut current: Vec<u8> = Vec::with_capacity(b.len() + 1);
    for digit in a {
        if !(current.is_empty() && *digit == b'0') {
            current.push(*digit);
        }
        while cmp_whole(&current, b) != Ordering::Less {
            subtract(&mut current, b);
        }
    }
    current
}

/// `a -= b` for whole numbers as digit strings, `a >= b`; the result has no leading zeros.
fn subtract(a: &mut Vec<u8>, b: &[u8]) {
    let mut borrow = 0u8;
    let offset = a.len() - b.len();
    for i in (0..a.len()).rev() {
        let subtrahend = if i >= offset { b[i - offset] - b'0' } else { 0 } + borrow;
        let digit = a[i] - b'0';
        if digit >= subtrahend {
            a[i] = b'0' + digit - subtrahend;
            borrow = 0;
        } else {
            a[i] = b'0' + digit + 10 - subtrahend;
            borrow = 1;
        }
    }
    let leading = a.iter().take_while(|d| **d == b'0').count();
    a.drain(..leading);
}

/// The numbers of a JSON text that its `Value` holds otherwise than the text states them
/// (`9007199254740993.0`, `1e400`, `1e-400`, `0.10000000000000000001`), each with its JSON
/// Pointer and what the text states. Empty for most texts: a number written with at most 15 digits and no
/// exponent reads back as written, and such texts are passed over without being read.
pub fn numbers_read_inexactly(text: &str) -> Vec<(String, Decimal)> {
    if !may_hold_inexact_number(text) {
        return Vec::new();
    }
    let mut found = Vec::new();
    let mut scanner = Scanner {
        bytes: text.as_bytes(),
        text,
        pos: super::text_start(text),
    };
    // Containers being read: the pointer of each, and the next index (arrays) or the key of
    // the member being read (objects).
    let mut stack: Vec<(String, Step)> = Vec::new();
    let mut pointer = String::new();
    loop {
        scanner.skip_whitespace();
        let Some(byte) = scanner.peek() else { break };
        match byte {
            b'{' => {
                scanner.pos += 1;
                stack.push((pointer.clone(), Step::Key));
                continue;
            }
            b'[' => {
                scanner.pos += 1;
                stack.push((pointer.clone(), Step::Index(0)));
                pointer = format!("{pointer}/0");
                continue;
            }
            b'}' | b']' => {
                scanner.pos += 1;
                let Some((outer, _)) = stack.pop() else { break };
                pointer = outer;
            }
            b',' => {
                scanner.pos += 1;
                match stack.last_mut() {
                    Some((outer, Step::Index(i))) => {
                        *i += 1;
                        pointer = format!("{outer}/{i}");
                    }
                    Some((_, step)) => *step = Step::Key,
                    None => break,
                }
                continue;
            }
            b'"' => {
                let string = scanner.string();
                if let Some((outer, step @ Step::Key)) = stack.last_mut() {
                    scanner.skip_whitespace();
                    if scanner.peek() == Some(b':') {
                        scanner.pos += 1;
                        pointer = push_segment(outer, &string.unwrap_or_default());
                        *step = Step::Value;
                        // A key given again: the last value counts, as a server reads it.
                        let below = format!("{pointer}/");
                        found.retain(|(at, _): &(String, Decimal)| {
                            at != &pointer && !at.starts_with(&below)
                        });
                    }
                }
                continue;
            }
            b'-' | b'0'..=b'9' => {
                let start = scanner.pos;
                scanner.pos += 1;
                while scanner.peek().is_some_and(|b| {
                    b.is_ascii_digit() || matches!(b, b'.' | b'e' | b'E' | b'+' | b'-')
                }) {
                    scanner.pos += 1;
                }
                let written = &text[start..scanner.pos];
                // (Not a number JSON reads: the text was not JSON, and the value not read from it.)
                let Some(stated) = Decimal::parse(written) else {
                    continue;
                };
                let held = serde_json::from_str::<Number>(written)
                    .ok()
                    .map(|n| Decimal::of(&n));
                // serde_json reads as this crate's reader does, except past the float range,
                // where it refuses (the reader takes the largest float): inexact either way.
                if held.as_ref() != Some(&stated) {
                    found.push((pointer.clone(), stated));
                }
                continue;
            }
            _ => scanner.pos += 1,
        }
    }
    found
}

/// The numbers of a JSON text that its `Value` holds otherwise than the text states them
/// (see [`numbers_read_inexactly`]), kept beside the value read: what lets a schema read from
/// text compare `{"maximum": 18446744073709551616}` as 2^64 and not as the float nearest it.
///
/// Each number is kept with the `Number` the value holds at its pointer, and applies only
/// where the value still holds that number: a part of the value replaced since it was read
/// is not given the old text's numbers.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StatedNumbers(Vec<StatedNumber>);

#[derive(Debug, Clone, PartialEq, Eq)]
struct StatedNumber {
    pointer: String,
    held: Number,
    stated: Decimal,
}

impl StatedNumbers {
    /// The numbers of `text` held inexactly by the value read from it (none for most texts,
    /// found without reading them: see [`numbers_read_inexactly`]).
    pub fn read(text: &str) -> StatedNumbers {
        let found = numbers_read_inexactly(text);
        if found.is_empty() {
            return StatedNumbers::default();
        }
        // (Read again only when a number was found: what the value holds at each pointer.)
        let Ok(value) = super::reader::parse_with(text, super::DuplicateKeys::KeepLast) else {
            return StatedNumbers::default();
        };
        StatedNumbers(
            found
                .into_iter()
                .filter_map(|(pointer, stated)| {
                    let held = value.pointer(&pointer)?.as_number()?.clone();
                    Some(StatedNumber {
                        pointer,
                        held,
                        stated,
                    })
                })
                .collect(),
        )
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The numbers inside the value at `pointer`, with pointers from that value.
    pub fn below(&self, pointer: &str) -> StatedNumbers {
        StatedNumbers(
            self.0
                .iter()
                .filter_map(|number| {
                    let rest = number.pointer.strip_prefix(pointer)?;
                    (rest.is_empty() || rest.starts_with('/')).then(|| StatedNumber {
                        pointer: rest.to_string(),
                        ..number.clone()
                    })
                })
                .collect(),
        )
    }

    /// Add the numbers of `inner`, kept with pointers from the value at `pointer`, under that
    /// pointer: the inverse of [`StatedNumbers::below`] (the numbers of the tools of a listing
    /// put together, each from its tool, `/0`, `/1`...).
    pub fn push_under(&mut self, pointer: &str, inner: &StatedNumbers) {
        self.0.extend(inner.0.iter().map(|number| StatedNumber {
            pointer: format!("{pointer}{}", number.pointer),
            ..number.clone()
        }));
    }

    /// What the text stated at `pointer`, where `held` (the value there) is still the number
    /// read.
    pub fn stated_at(&self, pointer: &str, held: &Value) -> Option<&Decimal> {
        self.0
            .iter()
            .find(|number| number.pointer == pointer && held.as_number() == Some(&number.held))
            .map(|number| &number.stated)
    }

    /// `value` as compact JSON text, each number kept here written as the text stated it
    /// (where `value` still holds there the number read), so that the text reads back to the
    /// same numbers: what lets a program that changed a value read from text (a listing it
    /// renames) pass it on without rounding its numbers. `None` when a number kept here cannot
    /// be written as a JSON number (an exponent past 2^60).
    pub fn write(&self, value: &Value) -> Option<String> {
        if self.is_empty() {
            return Some(value.to_string());
        }
        let mut out = String::new();
        let mut pointer = String::new();
        self.write_at(value, &mut pointer, &mut out).then_some(out)
    }

    /// [`StatedNumbers::write`] of the array `items`, without making that array: the tools
    /// of a listing, held as a slice, written as one JSON array.
    pub fn write_items(&self, items: &[Value]) -> Option<String> {
        if self.is_empty() {
            return serde_json::to_string(items).ok();
        }
        let mut out = String::from("[");
        for (at, item) in items.iter().enumerate() {
            if at > 0 {
                out.push(',');
            }
            let mut pointer = push_segment("", &at.to_string());
            if !self.write_at(item, &mut pointer, &mut out) {
                return None;
            }
        }
        out.push(']');
        Some(out)
    }

    fn write_at(&self, value: &Value, pointer: &mut String, out: &mut String) -> bool {
        match value {
            Value::Number(_) => match self.stated_at(pointer, value) {
                Some(stated) if stated.beyond => return false,
                Some(stated) => out.push_str(&stated.to_string()),
                None => out.push_str(&value.to_string()),
            },
            Value::Array(items) => {
                out.push('[');
                for (at, item) in items.iter().enumerate() {
                    if at > 0 {
                        out.push(',');
                    }
                    let length = pointer.len();
                    *pointer = push_segment(pointer, &at.to_string());
                    let written = self.write_at(item, pointer, out);
                    pointer.truncate(length);
                    if !written {
                        return false;
                    }
                }
                out.push(']');
            }
            Value::Object(members) => {
                out.push('{');
                for (at, (key, member)) in members.iter().enumerate() {
                    if at > 0 {
                        out.push(',');
                    }
                    out.push_str(&Value::String(key.clone()).to_string());
                    out.push(':');
                    let length = pointer.len();
                    *pointer = push_segment(pointer, key);
                    let written = self.write_at(member, pointer, out);
                    pointer.truncate(length);
                    if !written {
                        return false;
                    }
                }
                out.push('}');
            }
            other => out.push_str(&other.to_string()),
        }
        true
    }

    /// The number `root` holds at each pointer, with what the text stated, where `root` still
    /// holds there the number read.
    pub fn in_value<'v>(&self, root: &'v Value) -> Vec<(&'v Value, &Decimal)> {
        self.0
            .iter()
            .filter_map(|number| {
                let value = root.pointer(&number.pointer)?;
                (value.as_number() == Some(&number.held)).then_some((value, &number.stated))
            })
            .collect()
    }
}

#[derive(Debug)]
enum Step {
    Index(usize),
    Key,
    Value,
}

/// Whether `text` may hold a number read inexactly: a run of 16 digits (with a point among
/// them), or an exponent. Strings count too: this only decides whether to look.
fn may_hold_inexact_number(text: &str) -> bool {
    let bytes = text.as_bytes();
    let mut run = 0usize;
    for (i, byte) in bytes.iter().enumerate() {
        match byte {
            b'0'..=b'9' => {
                run += 1;
                if run >= 16 {
                    return true;
                }
            }
            b'.' => {}
            b'e' | b'E' if i > 0 && bytes[i - 1].is_ascii_digit() => return true,
            _ => run = 0,
        }
    }
    false
}

struct Scanner<'a> {
    bytes: &'a [u8],
    text: &'a str,
    pos: usize,
}

impl Scanner<'_> {
    fn skip_whitespace(&mut self) {
        while self
            .bytes
            .get(self.pos)
            .is_some_and(|b| matches!(b, b' ' | b'\t' | b'\n' | b'\r'))
        {
            self.pos += 1;
        }
    }

    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.pos).copied()
    }

    /// The string at the opening quote, decoded (a key, for pointers); `None` when it is not
    /// one JSON reads.
    fn string(&mut self) -> Option<String> {
        let start = self.pos;
        self.pos += 1;
        while let Some(byte) = self.peek() {
            self.pos += 1;
            match byte {
                b'\\' => self.pos += 1,
                b'"' => break,
                _ => {}
            }
        }
        let raw = self.text.get(start..self.pos.min(self.text.len()))?;
        super::reader::parse_with(raw, super::DuplicateKeys::KeepLast)
            .ok()
            .and_then(|v| match v {
                Value::String(s) => Some(s),
                _ => None,
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Written back, a value read from text states each number as the text did, inside arrays
    /// and under keys a pointer escapes, after other members changed, and the value is the same.
    #[test]
    fn stated_numbers_are_written_back_as_stated() {
        for text in [
            r#"{"maximum": 18446744073709551617, "minimum": -18446744073709551617}"#,
            r#"{"a/b": {"c~d": [1, 123456789012345678901234567890, 0.1000000000000000000001]}}"#,
            r#"[1e400, -1e400, 2.5e-400, 18446744073709551616, 3]"#,
            r#"{"enum": [9007199254740993, "x", null, true, {"k": 1.00000000000000000001e5}]}"#,
        ] {
            let mut value = super::super::reader::parse(text).unwrap();
            let stated = StatedNumbers::read(text);
            assert!(!stated.is_empty(), "{text}");
            if let Value::Object(members) = &mut value {
                members.insert("name".into(), Value::String("renamed \"x\"".into()));
            }
            let written = stated.write(&value).unwrap();
            assert_eq!(
                super::super::reader::parse(&written).unwrap(),
                value,
                "{written}"
            );
            let mut before = numbers_read_inexactly(text);
            let mut after = numbers_read_inexactly(&written);
            before.sort_by(|a, b| a.0.cmp(&b.0));
            after.sort_by(|a, b| a.0.cmp(&b.0));
            assert_eq!(before, after, "{text} written as {written}");
        }
        // A part replaced since the text was read is written as it is now.
        let text = r#"{"n": 18446744073709551617}"#;
        let stated = StatedNumbers::read(text);
        assert_eq!(
            stated.write(&serde_json::json!({"n": 5})).unwrap(),
            r#"{"n":5}"#
        );
        // Put under a pointer, as the tools of a listing are.
        let mut listing = StatedNumbers::default();
        listing.push_under("/1", &stated);
        let tools = serde_json::json!([{"n": 1}, super::super::reader::parse(text).unwrap()]);
        assert_eq!(
            listing.write(&tools).unwrap(),
            r#"[{"n":1},{"n":18446744073709551617}]"#
        );
        assert_eq!(listing.below("/1"), stated);
        // The same, from the tools held as a slice.
        let items = tools.as_array().unwrap();
        assert_eq!(listing.write_items(items), listing.write(&tools));
        assert_eq!(
            StatedNumbers::default().write_items(items).unwrap(),
            tools.to_string()
        );
        // Nothing stated: the plain text.
        let plain = serde_json::json!({"a": [1, 2.5]});
        assert_eq!(
            StatedNumbers::default().write(&plain).unwrap(),
            plain.to_string()
        );
    }

    fn d(text: &str) -> Decimal {
        Decimal::parse(text).unwrap()
    }

    #[test]
    fn one_form_per_number() {
        assert_eq!(d("1.0"), d("1"));
        assert_eq!(d("10e-1"), d("1"));
        assert_eq!(d("-0"), d("0"));
        assert_eq!(d("-0.0e5"), d("0"));
        assert_eq!(d("9007199254740992.0"), d("9007199254740992"));
        assert_ne!(d("9007199254740993"), d("9007199254740992"));
        assert_eq!(d("1E+2"), d("100"));
        for bad in ["", "-", "01", "1.", ".5", "1e", "1e+", "+1", "1x", "1.5.2"] {
            assert_eq!(Decimal::parse(bad), None, "{bad}");
        }
    }

    #[test]
    fn orders_exactly() {
        let ordered = [
            "-1e400",
            "-9007199254740993",
            "-9007199254740992",
            "-1",
            "-1e-400",
            "0",
            "1e-400",
            "1e-320",
            "0.1",
            "0.10000000000000000001",
            "1",
            "9007199254740992",
            "9007199254740993",
            "1e308",
            "1e400",
        ];
        for (i, a) in ordered.iter().enumerate() {
            for (j, b) in ordered.iter().enumerate() {
                assert_eq!(d(a).cmp(&d(b)), i.cmp(&j), "{a} vs {b}");
            }
        }
    }

    #[test]
    fn divides_exactly() {
        let cases = [
            ("0.3", "0.1", true),
            ("0.0075", "0.0001", true),
            ("0.00751", "0.0001", false),
            ("1e308", "0.123456789", false),
            ("12391239123", "1e-8", true),
            ("9007199254740993", "3", true),
            ("9007199254740994", "3", false),
            ("1e400", "7", false),
            ("7e400", "7", true),
            ("1e400", "2e399", true),
            ("1e400", "3e399", false),
            ("4.5", "1.5", true),
            ("0", "0.7", true),
            ("-6", "4", false),
            ("-6", "-1.5", true),
            ("1", "0", false),
        ];
        for (a, b, whole) in cases {
            assert_eq!(d(a).is_multiple_of(&d(b)), whole, "{a} / {b}");
        }
    }

    #[test]
    fn exponents_past_the_limit_keep_their_place() {
        let huge = d("1e99999999999999999999");
        let tiny = d("-2.5e-99999999999999999999");
        assert!(huge.is_beyond() && tiny.is_beyond() && !d("1e400").is_beyond());
        assert!(huge > d("1e1000000") && tiny < d("0") && tiny > d("-1e-1000000"));
        assert!(huge.is_integer() && !d("1e-99999999999999999999").is_integer());
        assert!(huge.is_multiple_of(&d("2e7")) && !huge.is_multiple_of(&d("3")));
        assert!(!d("1e-99999999999999999999").is_multiple_of(&d("1e-30")));
    }

    #[test]
    fn writes_the_number() {
        for (text, written) in [
            ("1.50", "1.5"),
            ("1e400", "1e400"),
            ("-1.25e-7", "-1.25e-7"),
            ("0.000123", "0.000123"),
            ("9007199254740993", "9007199254740993"),
            ("1e20", "100000000000000000000"),
            ("1e21", "1e21"),
            ("123e30", "1.23e32"),
            ("-5e-7", "-5e-7"),
        ] {
            assert_eq!(d(text).to_string(), written);
        }
    }

    #[test]
    fn a_float_past_2_to_the_53_is_held_as_its_value() {
        let held = |v: Value| Decimal::held_by(v.as_number().unwrap()).to_string();
        // 2^65 is a float; its shortest decimal, 3.6893488147419103e19, is another number.
        assert_eq!(
            held(serde_json::json!(2f64.powi(65))),
            "36893488147419103232"
        );
        assert_eq!(
            held(serde_json::json!(-(2f64.powi(64)))),
            "-18446744073709551616"
        );
        assert_eq!(held(serde_json::json!(2f64.powi(53))), "9007199254740992");
        // The largest float, every digit of it.
        assert_eq!(
            held(serde_json::json!(f64::MAX)),
            format!("{:.0}", f64::MAX)
        );
        assert_eq!(held(serde_json::json!(1e23)), "99999999999999991611392");
        // Smaller floats keep their shortest decimal; integers are exact.
        assert_eq!(held(serde_json::json!(0.1)), "0.1");
        assert_eq!(held(serde_json::json!(u64::MAX)), u64::MAX.to_string());
        assert_eq!(held(serde_json::json!(i64::MIN)), i64::MIN.to_string());
    }

    #[test]
    fn stated_numbers_apply_where_the_value_still_holds_them() {
        let text = r#"{"tools": [{"inputSchema": {"maximum": 18446744073709551617, "minimum": 0.1}}],
            "x": 1e400}"#;
        let stated = StatedNumbers::read(text);
        let value = crate::json::parse(text).unwrap();
        let tool = stated.below("/tools/0");
        let schema = &value["tools"][0]["inputSchema"];
        assert_eq!(
            tool.stated_at("/inputSchema/maximum", &schema["maximum"])
                .map(ToString::to_string),
            Some("18446744073709551617".into())
        );
        // Below the schema: pointers from the schema.
        let in_schema = tool.below("/inputSchema");
        let found: Vec<String> = in_schema
            .in_value(schema)
            .into_iter()
            .map(|(_, d)| d.to_string())
            .collect();
        assert_eq!(found, ["18446744073709551617"]);
        // A value replaced since is not given the old text's number.
        let replaced = serde_json::json!({"maximum": 5});
        assert!(in_schema.in_value(&replaced).is_empty());
        assert!(in_schema
            .stated_at("/maximum", &replaced["maximum"])
            .is_none());
        // `/tools/0` is not `/tools/01`; nothing is found in a text of short numbers.
        assert!(stated.below("/tools/01").is_empty());
        assert!(StatedNumbers::read(r#"{"maximum": 10, "minimum": 0.5}"#).is_empty());
    }

    #[test]
    fn finds_the_numbers_read_inexactly() {
        let text = r#"{"a": 1, "b": [0.1, 9007199254740993.0, 1e400], "c\"d": {"e": 1e-400},
            "f": "9007199254740993.0", "g": 12345678901234567890123, "h": 1.5e3}"#;
        let found: Vec<(String, String)> = numbers_read_inexactly(text)
            .into_iter()
            .map(|(pointer, stated)| (pointer, stated.to_string()))
            .collect();
        assert_eq!(
            found,
            [
                ("/b/1".to_string(), "9007199254740993".to_string()),
                ("/b/2".into(), "1e400".into()),
                ("/c\"d/e".into(), "1e-400".into()),
                ("/g".into(), "12345678901234567890123".into()),
            ]
        );
        assert!(numbers_read_inexactly(r#"{"a": [1.5, 2, -3.25e2]}"#).is_empty());
    }
}
