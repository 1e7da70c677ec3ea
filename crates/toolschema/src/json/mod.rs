//! JSON with positions: a reader that keeps where every value is, for diagnostics that point at
//! `line:column`, plus JSON Pointer helpers.

pub mod host;
pub mod number;
pub mod pointer;
pub(crate) mod reader;
pub mod spans;

pub use reader::{
    array_elements, has_lone_surrogate, lone_surrogate_at, object_members, parse, parse_value_at,
    parse_with, parse_with_spans, parse_wrapping, root_members, value_range, DuplicateKeys, Member,
    SyntaxError, MAX_DEPTH,
};
pub(crate) use spans::LineCursor;
pub use spans::{position_of, text_start, LineIndex, Position, SpanEntry, Spans};

use serde_json::{Map, Number, Value};
use std::cmp::Ordering;

/// Object members looked up without hashing the key.
///
/// `Map::get` hashes the key (SipHash) on every call. The objects of tools and schemas have a
/// handful of members, and comparing that many short keys costs a fraction of a hash; linting a
/// large catalog looks up hundreds of thousands of keys.
pub trait Members {
    /// The member `key`, as `get` finds it.
    fn member(&self, key: &str) -> Option<&Value>;
}

/// Objects up to this many members are searched in order; larger ones through their hash table.
const SEARCHED_IN_ORDER: usize = 8;

impl Members for Map<String, Value> {
    fn member(&self, key: &str) -> Option<&Value> {
        if self.len() > SEARCHED_IN_ORDER {
            return self.get(key);
        }
        self.iter().find(|(k, _)| *k == key).map(|(_, v)| v)
    }
}

impl Members for Value {
    fn member(&self, key: &str) -> Option<&Value> {
        self.as_object()?.member(key)
    }
}

/// A JSON text that is not JSON, placed in the text it came from: read as
/// `name:line:column: invalid JSON: message`, the way every toolschema front end reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlacedSyntaxError {
    /// What the text is called in the message: a file, a flag, `arguments`.
    pub name: String,
    /// Where the problem is (1-based line, column in characters).
    pub position: Position,
    /// What is wrong, without the name and position.
    pub message: String,
}

impl std::fmt::Display for PlacedSyntaxError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}:{}:{}: invalid JSON: {}",
            self.name, self.position.line, self.position.column, self.message
        )
    }
}

impl std::error::Error for PlacedSyntaxError {}

/// [`parse`] the JSON `text` called `name`, a syntax error placed at its line and column.
///
/// ```
/// let error = toolschema::json::parse_named("args.json", "{\n  \"a\": }").unwrap_err();
/// assert_eq!((error.position.line, error.position.column), (2, 8));
/// assert!(error.to_string().starts_with("args.json:2:8: invalid JSON: "));
/// ```
pub fn parse_named(name: &str, text: &str) -> Result<Value, PlacedSyntaxError> {
    parse(text).map_err(|e| PlacedSyntaxError {
        name: name.to_string(),
        position: position_of(text, e.offset),
        message: e.message,
    })
}

/// What a value is, in words for a message: `an object`, `a string`, `null`.
pub fn kind_in_words(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// Whether any object in `value` (itself included) satisfies `test`: a scan without
/// recursion that allocates nothing but its stack.
pub(crate) fn any_object<'v>(
    value: &'v Value,
    mut test: impl FnMut(&'v serde_json::Map<String, Value>) -> bool,
) -> bool {
    let mut stack = vec![value];
    while let Some(value) = stack.pop() {
        match value {
            Value::Object(map) => {
                if test(map) {
                    return true;
                }
                stack.extend(map.values().filter(|v| v.is_object() || v.is_array()));
            }
            Value::Array(items) => {
                stack.extend(items.iter().filter(|v| v.is_object() || v.is_array()));
            }
            _ => {}
        }
    }
    false
}

/// A value that reading a JSON text changes, not just rewrites: found by [`first_lossy_value`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LossyValue {
    /// Byte offset of the value (a number, or the escape inside a string or key).
    pub offset: usize,
    /// What reading does to it.
    pub loss: Loss,
}

/// How reading a JSON value changes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Loss {
    /// A number read as a 64-bit float that is another number: an integer past the 64-bit
    /// integers that a float does not hold exactly, more digits than a float holds, a value too
    /// small for a float (read as 0).
    Rounded {
        /// The number as written.
        literal: String,
        /// The number as it is read, and written back.
        read: String,
    },
    /// A number past the float range, read as the largest float.
    PastFloatRange {
        /// The number as written.
        literal: String,
    },
    /// A lone surrogate escape in a string or key, read as U+FFFD.
    LoneSurrogate {
        /// The escape as written (`\ud800`).
        escape: String,
    },
}

impl std::fmt::Display for Loss {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Loss::Rounded { literal, read } => write!(
                f,
                "the number {} is read as the 64-bit float {read}",
                crate::text::shorten(literal, 40)
            ),
            Loss::PastFloatRange { literal } => write!(
                f,
                "the number {} is past the range of a 64-bit float, and is read as the largest one",
                crate::text::shorten(literal, 40)
            ),
            Loss::LoneSurrogate { escape } => write!(
                f,
                "the string holds a lone surrogate, {escape}, which is read as U+FFFD"
            ),
        }
    }
}

/// The first value of `text` (valid JSON) that reading it as a [`Value`] changes ([`Loss`]):
/// a number written back otherwise than as the same decimal value (integers that fit 64 bits
/// are read exactly; `0.1`, `1.50`, `1E2` and `-0` come back as the same values), or a lone
/// surrogate escape.
///
/// For what must come out as it went in: `adapt --restore` prints the model's arguments back,
/// and a CLI served by toolschema-clap hands them to a command as text; such a value is refused
/// rather than passed on changed.
pub fn first_lossy_value(text: &str) -> Option<LossyValue> {
    let bytes = text.as_bytes();
    let mut at = 0;
    while at < bytes.len() {
        match bytes[at] {
            b'"' => {
                let (end, lone) = scan_string_for_lone_surrogate(bytes, at + 1);
                if let Some(escape_at) = lone {
                    let escape = text.get(escape_at..escape_at + 6).unwrap_or_default();
                    return Some(LossyValue {
                        offset: escape_at,
                        loss: Loss::LoneSurrogate {
                            escape: escape.to_string(),
                        },
                    });
                }
                at = end;
            }
            b'-' | b'0'..=b'9' => {
                let end = bytes[at..]
                    .iter()
                    .position(|b| !matches!(b, b'0'..=b'9' | b'-' | b'+' | b'.' | b'e' | b'E'))
                    .map_or(bytes.len(), |n| at + n);
                if let Some(loss) = lossy_number(&text[at..end]) {
                    return Some(LossyValue { offset: at, loss });
                }
                at = end;
            }
            _ => at += 1,
        }
    }
    None
}

/// The first lone surrogate escape of `text` (valid JSON), as the [`Loss`] reading it makes,
/// wherever it stands: after a changed number too, which [`first_lossy_value`] would name
/// instead.
pub fn first_lone_surrogate(text: &str) -> Option<Loss> {
    let at = lone_surrogate_at(text)?;
    Some(Loss::LoneSurrogate {
        escape: text.get(at..at + 6).unwrap_or_default().to_string(),
    })
}

/// Past the string whose contents start at `at` (after its quote): the offset after its
/// closing quote, and the offset of its first lone surrogate escape, if any.
fn scan_string_for_lone_surrogate(bytes: &[u8], mut at: usize) -> (usize, Option<usize>) {
    let hex = |from: usize| -> Option<u16> {
        let digits = std::str::from_utf8(bytes.get(from..from + 4)?).ok()?;
        u16::from_str_radix(digits, 16).ok()
    };
    let mut lone = None;
    while at < bytes.len() {
        match bytes[at] {
            b'"' => return (at + 1, lone),
            b'\\' if bytes.get(at + 1) == Some(&b'u') => {
                let unit = hex(at + 2).unwrap_or(0);
                if (0xD800..0xDC00).contains(&unit) {
                    let low = (bytes.get(at + 6) == Some(&b'\\')
                        && bytes.get(at + 7) == Some(&b'u'))
                    .then(|| hex(at + 8))
                    .flatten();
                    if low.is_some_and(|low| (0xDC00..0xE000).contains(&low)) {
                        at += 12;
                        continue;
                    }
                    lone = lone.or(Some(at));
                } else if (0xDC00..0xE000).contains(&unit) {
                    lone = lone.or(Some(at));
                }
                at += 6;
            }
            b'\\' => at += 2,
            _ => at += 1,
        }
    }
    (at, lone)
}

/// What reading the number `literal` as a JSON value does to it, if it changes it.
fn lossy_number(literal: &str) -> Option<Loss> {
    if literal.parse::<i64>().is_ok() || literal.parse::<u64>().is_ok() {
        return None;
    }
    let float: f64 = literal.parse().ok()?;
    let Some(read) = serde_json::Number::from_f64(float) else {
        return Some(Loss::PastFloatRange {
            literal: literal.to_string(),
        });
    };
    (decimal(literal) != decimal(&format!("{float:e}"))).then(|| Loss::Rounded {
        literal: literal.to_string(),
        read: read.to_string(),
    })
}

/// A decimal number as sign, significant digits and the exponent of its last digit, so that
/// `1.50`, `15e-1` and `0.15e1` compare equal (and every zero is the same).
fn decimal(literal: &str) -> (bool, String, i64) {
    let negative = literal.starts_with('-');
    let unsigned = literal.trim_start_matches(['-', '+']);
    let (mantissa, exponent) = match unsigned.find(['e', 'E']) {
        Some(at) => (
            &unsigned[..at],
            unsigned[at + 1..].parse::<i64>().unwrap_or(0),
        ),
        None => (unsigned, 0),
    };
    let (whole, fraction) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    let digits = format!("{whole}{fraction}");
    let mut exponent = exponent.saturating_sub(fraction.len() as i64);
    let trimmed = digits.trim_start_matches('0');
    let significant = trimmed.trim_end_matches('0');
    exponent = exponent.saturating_add((trimmed.len() - significant.len()) as i64);
    if significant.is_empty() {
        return (false, String::new(), 0);
    }
    (negative, significant.to_string(), exponent)
}

/// A count keyword's value (`minProperties`, `maxLength`, ...) read by its value, as the
/// validator reads it: `2.0` counts as 2. `None` for anything that is not a non-negative whole
/// number.
pub(crate) fn as_count(value: &Value) -> Option<u64> {
    value.as_u64().or_else(|| {
        value
            .as_f64()
            .filter(|f| *f >= 0.0 && f.fract() == 0.0)
            .map(|f| f as u64)
    })
}

/// How deep `value` nests arrays and objects (a scalar is 0), counted without recursion.
///
/// Stops counting at `limit + 1`, so it is cheap on values that are far too deep.
pub fn nesting_depth(value: &Value, limit: usize) -> usize {
    let mut deepest = 0;
    let mut stack: Vec<(&Value, usize)> = vec![(value, 0)];
    while let Some((v, depth)) = stack.pop() {
        let depth = depth + 1;
        match v {
            Value::Array(items) if !items.is_empty() => {
                stack.extend(items.iter().map(|c| (c, depth)));
            }
            Value::Object(map) if !map.is_empty() => {
                stack.extend(map.values().map(|c| (c, depth)));
            }
            Value::Array(_) | Value::Object(_) => {}
            _ => continue,
        }
        deepest = deepest.max(depth);
        if deepest > limit {
            return deepest;
        }
    }
    deepest
}

/// The stack of a thread that runs recursive work too deep for the caller's (reserved, not
/// touched unless needed): a thread may have 2 MiB, and a debug build's frames are large.
const LARGE_STACK: usize = 256 * 1024 * 1024;

/// Run `work` on a thread of its own with a [`LARGE_STACK`], borrowing what it needs; `None` when
/// no thread could be started. A panic in `work` is the caller's.
pub(crate) fn on_large_stack<T: Send>(name: &str, work: impl FnOnce() -> T + Send) -> Option<T> {
    std::thread::scope(|scope| {
        let thread = std::thread::Builder::new()
            .name(name.to_string())
            .stack_size(LARGE_STACK)
            .spawn_scoped(scope, work)
            .ok()?;
        match thread.join() {
            Ok(done) => Some(done),
            Err(panic) => std::panic::resume_unwind(panic),
        }
    })
}

/// Drop a value of any depth without recursion (serde_json drops recursively).
pub fn drop_deep(value: Value) {
    let mut stack = vec![value];
    while let Some(v) = stack.pop() {
        match v {
            Value::Array(items) => stack.extend(items),
            Value::Object(map) => stack.extend(map.into_iter().map(|(_, v)| v)),
            _ => {}
        }
    }
}

/// Whether two values are equal as JSON Schema compares them: numbers by value (`1` and `1.0`
/// are the same), object members in any order. Iterative, so no depth overflows the stack.
pub(crate) fn same_value(a: &Value, b: &Value) -> bool {
    let mut stack = vec![(a, b)];
    while let Some((a, b)) = stack.pop() {
        match (a, b) {
            (Value::Number(x), Value::Number(y)) => {
                if compare_numbers(x, y) != Some(Ordering::Equal) {
                    return false;
                }
            }
            (Value::Array(x), Value::Array(y)) => {
                if x.len() != y.len() {
                    return false;
                }
                stack.extend(x.iter().zip(y));
            }
            (Value::Object(x), Value::Object(y)) => {
                if x.len() != y.len() {
                    return false;
                }
                for (key, value) in x {
                    match y.get(key) {
                        Some(other) => stack.push((value, other)),
                        None => return false,
                    }
                }
            }
            (x, y) => {
                if x != y {
                    return false;
                }
            }
        }
    }
    true
}

/// The order of two JSON numbers by their exact values. Integers compare as integers and an
/// integer with a float exactly: `9007199254740993` is above `9007199254740992.0`, though as
/// 64-bit floats the two are equal; `1` and `1.0` (and `0` and `-0.0`) are equal. `None` only for
/// a NaN, which no JSON number holds.
pub(crate) fn compare_numbers(a: &Number, b: &Number) -> Option<Ordering> {
    match (exact_integer(a), exact_integer(b)) {
        (Some(x), Some(y)) => Some(x.cmp(&y)),
        (Some(x), None) => compare_integer_with_float(x, b.as_f64()?),
        (None, Some(y)) => compare_integer_with_float(y, a.as_f64()?).map(Ordering::reverse),
        (None, None) => a.as_f64()?.partial_cmp(&b.as_f64()?),
    }
}

/// A number held as an integer (`u64` or `i64`), widened so both fit.
fn exact_integer(number: &Number) -> Option<i128> {
    number
        .as_i64()
        .map(i128::from)
        .or_else(|| number.as_u64().map(i128::from))
}

/// The order of an integer held as `u64` or `i64` and a float, without rounding the integer.
fn compare_integer_with_float(integer: i128, float: f64) -> Option<Ordering> {
    /// 2^64: beyond every integer a `u64` or an `i64` holds, on either side.
    const BEYOND_INTEGERS: f64 = 18_446_744_073_709_551_616.0;
    if float.is_nan() {
        return None;
    }
    if float >= BEYOND_INTEGERS {
        return Some(Ordering::Less);
    }
    if float <= -BEYOND_INTEGERS {
        return Some(Ordering::Greater);
    }
    // Below 2^64 in magnitude the whole part of a float is an integer an i128 holds exactly.
    let whole = float.trunc();
    match integer.cmp(&(whole as i128)) {
        // Equal whole parts: the fraction decides (positive: the float is above).
        Ordering::Equal => 0.0f64.partial_cmp(&(float - whole)),
        order => Some(order),
    }
}

/// [`same_value`] for optional values: both absent is the same.
pub(crate) fn same_value_opt(a: Option<&Value>, b: Option<&Value>) -> bool {
    match (a, b) {
        (Some(a), Some(b)) => same_value(a, b),
        (None, None) => true,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn counts_are_read_by_value() {
        assert_eq!(as_count(&json!(2)), Some(2));
        assert_eq!(as_count(&json!(2.0)), Some(2));
        assert_eq!(as_count(&json!(0.0)), Some(0));
        assert_eq!(as_count(&json!(-0.0)), Some(0));
        for not_a_count in [json!(2.5), json!(-1), json!(-1.0), json!("2"), json!(null)] {
            assert_eq!(as_count(&not_a_count), None, "{not_a_count}");
        }
    }

    #[test]
    fn members_are_found_like_get_finds_them() {
        for n in [0, 1, 3, SEARCHED_IN_ORDER, SEARCHED_IN_ORDER + 1, 20] {
            let map: Map<String, Value> = (0..n).map(|i| (format!("k{i}"), json!(i))).collect();
            for key in ["k0", "k3", "k8", "k19", "k", "k00", ""] {
                assert_eq!(map.member(key), map.get(key), "{n} {key}");
                let value = Value::Object(map.clone());
                assert_eq!(value.member(key), value.get(key), "{n} {key}");
            }
        }
        assert_eq!(json!([1]).member("0"), None);
    }

    #[test]
    fn measures_depth() {
        assert_eq!(nesting_depth(&json!(1), 10), 0);
        assert_eq!(nesting_depth(&json!([]), 10), 1);
        assert_eq!(nesting_depth(&json!({"a": [[1]], "b": 2}), 10), 3);
        let mut deep = json!(null);
        for _ in 0..1000 {
            deep = json!([deep]);
        }
        assert_eq!(nesting_depth(&deep, 10), 11);
        drop_deep(deep);
    }

    #[test]
    fn numbers_compare_by_exact_value() {
        let order = |a: Value, b: Value| {
            compare_numbers(a.as_number().unwrap(), b.as_number().unwrap()).unwrap()
        };
        use Ordering::{Equal, Greater, Less};
        // Equal as 64-bit floats, different as integers.
        assert_eq!(
            order(
                json!(9_007_199_254_740_993u64),
                json!(9_007_199_254_740_992u64)
            ),
            Greater
        );
        assert_eq!(
            order(
                json!(9_007_199_254_740_993u64),
                json!(9_007_199_254_740_992.0)
            ),
            Greater
        );
        assert_eq!(
            order(
                json!(9_007_199_254_740_992.0),
                json!(9_007_199_254_740_993u64)
            ),
            Less
        );
        assert_eq!(
            order(
                json!(-9_007_199_254_740_993i64),
                json!(-9_007_199_254_740_992.0)
            ),
            Less
        );
        assert_eq!(
            order(json!(u64::MAX), json!(18_446_744_073_709_551_616.0)),
            Less
        );
        assert_eq!(
            order(json!(i64::MIN), json!(-18_446_744_073_709_551_616.0)),
            Greater
        );
        assert_eq!(order(json!(i64::MIN), json!(u64::MAX)), Less);
        assert_eq!(order(json!(1), json!(1.0)), Equal);
        assert_eq!(order(json!(0), json!(-0.0)), Equal);
        assert_eq!(order(json!(1), json!(1.5)), Less);
        assert_eq!(order(json!(-1), json!(-1.5)), Greater);
        assert_eq!(order(json!(-1), json!(-0.5)), Less);
        assert_eq!(order(json!(2.5), json!(2.25)), Greater);
        assert!(!same_value(
            &json!(9_007_199_254_740_993u64),
            &json!(9_007_199_254_740_992.0)
        ));
        assert!(same_value(
            &json!([1, {"a": -0.0}]),
            &json!([1.0, {"a": 0}])
        ));
    }

    #[test]
    fn values_reading_changes_are_found_and_rewritings_are_not() {
        for same in [
            r#"{"n": 1E2, "z": -0, "f": 0.10, "b": 1.50, "big": 18446744073709551615, "neg": -9223372036854775808}"#,
            r#"{"exact": 100000000000000000000, "tiny": 5e-324, "e": 1e300, "d": 9007199254740993, "c": 2.5e-3}"#,
            r#"{"pair": "\ud83d\ude00", "plain": "\\ud800 is text here", "key\u00e9": [1, 2.5e3], "s": "123456789012345678901234567890"}"#,
        ] {
            assert_eq!(first_lossy_value(same), None, "{same}");
        }
        let found = |text: &str| {
            first_lossy_value(text).map(|lossy| (lossy.offset, lossy.loss.to_string()))
        };
        assert_eq!(
            found(r#"{"id": 123456789012345678901234567890}"#),
            Some((7, "the number 123456789012345678901234567890 is read as the 64-bit float 1.2345678901234568e+29".into()))
        );
        assert_eq!(
            found(r#"[18446744073709551616, 1.00000000000000000001]"#).map(|(at, _)| at),
            Some(1)
        );
        assert_eq!(
            found(r#"[1.00000000000000000001]"#),
            Some((
                1,
                "the number 1.00000000000000000001 is read as the 64-bit float 1.0".into()
            ))
        );
        assert_eq!(
            found(r#"[1, -1e400]"#),
            Some((4, "the number -1e400 is past the range of a 64-bit float, and is read as the largest one".into()))
        );
        assert_eq!(
            found(r#"[1.5e-324]"#),
            Some((
                1,
                "the number 1.5e-324 is read as the 64-bit float 0.0".into()
            ))
        );
        assert_eq!(
            found(r#"{"s": "ok \ud800x"}"#),
            Some((
                10,
                r"the string holds a lone surrogate, \ud800, which is read as U+FFFD".into()
            ))
        );
        assert_eq!(
            found(r#"{"\udc00": 1}"#).map(|(at, _)| at),
            Some(2),
            "a key's lone surrogate counts too"
        );
        assert_eq!(found(r#"["\ude00\ud83d"]"#).map(|(at, _)| at), Some(2));
        assert_eq!(decimal("1.50"), decimal("15e-1"));
        assert_eq!(decimal("0.15e1"), decimal("1.5"));
        assert_eq!(decimal("-0.0"), decimal("0"));
    }
}
