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

use serde_json::{Map, Value};

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
                let exact = match (x.as_i64(), y.as_i64(), x.as_u64(), y.as_u64()) {
                    (Some(p), Some(q), _, _) => Some(p == q),
                    (_, _, Some(p), Some(q)) => Some(p == q),
                    _ => None,
                };
                let equal = match exact {
                    Some(equal) => equal,
                    None if (x.is_f64() || y.is_f64()) => x.as_f64() == y.as_f64(),
                    None => false, // one negative, one beyond i64
                };
                if !equal {
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
}
