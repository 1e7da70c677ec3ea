//! JSON with positions: a reader that keeps where every value is, for diagnostics that point at
//! `line:column`, plus JSON Pointer helpers.

pub mod pointer;
pub(crate) mod reader;
pub mod spans;

pub use reader::{
    array_elements, object_members, parse, parse_value_at, parse_with, parse_with_spans,
    parse_wrapping, root_members, value_range, DuplicateKeys, Member, SyntaxError, MAX_DEPTH,
};
pub(crate) use spans::LineCursor;
pub use spans::{position_of, LineIndex, Position, SpanEntry, Spans};

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
pub(crate) fn any_object(
    value: &Value,
    test: impl Fn(&serde_json::Map<String, Value>) -> bool,
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
}
