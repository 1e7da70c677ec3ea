//! JSON with positions: a reader that keeps where every value is, for diagnostics that point at
//! `line:column`, plus JSON Pointer helpers.

pub mod pointer;
pub(crate) mod reader;
pub mod spans;

pub use reader::{parse, parse_with_spans, SyntaxError, MAX_DEPTH};
pub use spans::{position_of, LineIndex, Position, SpanEntry, Spans};

use serde_json::Value;

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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

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
