//! Smaller versions of a value, for shrinking a case that fails: fewer properties, shorter
//! strings, smaller numbers and arrays.

use serde_json::{Map, Value};

/// How many smaller versions of each child are tried inside a larger value.
const PER_CHILD: usize = 4;
/// How many children of one array are shrunk one by one.
const ITEMS_SHRUNK: usize = 8;
/// How deep inside the value children are shrunk.
const MAX_DEPTH: usize = 32;

/// Smaller versions of `value`, the largest reductions first: each differs from `value` in one
/// place. A shrinker tries them in order and starts again from the first that still fails.
///
/// ```
/// use serde_json::json;
/// use toolschema::generate::smaller;
///
/// let versions = smaller(&json!({"a": "hello", "b": 7}));
/// assert_eq!(versions[0], json!({}));
/// assert_eq!(versions[1], json!({"b": 7}));
/// assert_eq!(versions[2], json!({"a": "hello"}));
/// assert!(versions.contains(&json!({"a": "", "b": 7})));
/// assert!(versions.contains(&json!({"a": "hello", "b": 0})));
/// ```
pub fn smaller(value: &Value) -> Vec<Value> {
    let mut out = Vec::new();
    versions(value, &mut out, 0, usize::MAX);
    out.retain(|v| v != value);
    out
}

/// Push smaller versions of `value` onto `out`, in order, stopping once it holds `limit` (the
/// last step may add a few more): a child of a larger value needs only its first few, and
/// making the rest would copy large values for nothing.
fn versions(value: &Value, out: &mut Vec<Value>, depth: usize, limit: usize) {
    match value {
        Value::Object(map) => object_versions(map, out, depth, limit),
        Value::Array(items) => array_versions(items, out, depth, limit),
        Value::String(text) => string_versions(text, out),
        Value::Number(n) => {
            if let Some(i) = n.as_i64() {
                if i != 0 {
                    out.push(Value::from(0));
                }
                if i.unsigned_abs() > 1 {
                    out.push(Value::from(i / 2));
                }
            } else if let Some(u) = n.as_u64() {
                out.push(Value::from(0));
                out.push(Value::from(u / 2));
            } else if let Some(f) = n.as_f64() {
                out.push(Value::from(0));
                if f.trunc() != f {
                    if let Some(t) = serde_json::Number::from_f64(f.trunc()) {
                        out.push(Value::Number(t));
                    }
                }
                if f.abs() > 1.0 {
                    if let Some(h) = serde_json::Number::from_f64((f / 2.0).trunc()) {
                        out.push(Value::Number(h));
                    }
                }
            }
        }
        Value::Bool(true) => out.push(Value::Bool(false)),
        Value::Bool(false) | Value::Null => {}
    }
}

fn object_versions(map: &Map<String, Value>, out: &mut Vec<Value>, depth: usize, limit: usize) {
    // The largest reduction first, as for arrays: a failure that needs none of the properties
    // (a hang on any call) shrinks in one step, where one property at a time costs a call (and
    // for a hang, a whole timeout) per property.
    if map.len() > 1 && out.len() < limit {
        out.push(Value::Object(Map::new()));
    }
    for key in map.keys() {
        if out.len() >= limit {
            return;
        }
        let mut without = map.clone();
        without.shift_remove(key);
        out.push(Value::Object(without));
    }
    if depth >= MAX_DEPTH {
        return;
    }
    for (key, child) in map {
        if out.len() >= limit {
            return;
        }
        let mut smaller_children = Vec::new();
        versions(child, &mut smaller_children, depth + 1, PER_CHILD);
        for version in smaller_children.into_iter().take(PER_CHILD) {
            if out.len() >= limit {
                return;
            }
            let mut copy = map.clone();
            copy.insert(key.clone(), version);
            out.push(Value::Object(copy));
        }
    }
}

fn array_versions(items: &[Value], out: &mut Vec<Value>, depth: usize, limit: usize) {
    if items.is_empty() {
        return;
    }
    out.push(Value::Array(Vec::new()));
    if items.len() > 1 {
        out.push(Value::Array(items[..items.len() / 2].to_vec()));
        out.push(Value::Array(items[..items.len() - 1].to_vec()));
    }
    if items.len() <= ITEMS_SHRUNK {
        for i in 0..items.len().saturating_sub(1) {
            if out.len() >= limit {
                return;
            }
            let mut without = items.to_vec();
            without.remove(i);
            out.push(Value::Array(without));
        }
    }
    if depth >= MAX_DEPTH {
        return;
    }
    for (i, child) in items.iter().enumerate().take(ITEMS_SHRUNK) {
        if out.len() >= limit {
            return;
        }
        let mut smaller_children = Vec::new();
        versions(child, &mut smaller_children, depth + 1, PER_CHILD);
        for version in smaller_children.into_iter().take(PER_CHILD) {
            if out.len() >= limit {
                return;
            }
            let mut copy = items.to_vec();
            copy[i] = version;
            out.push(Value::Array(copy));
        }
    }
}

fn string_versions(text: &str, out: &mut Vec<Value>) {
    if text.is_empty() {
        return;
    }
    out.push(Value::String(String::new()));
    let count = text.chars().count();
    if count > 1 {
        out.push(Value::String(text.chars().take(count / 2).collect()));
        out.push(Value::String(text.chars().take(count - 1).collect()));
    }
    if !text.is_ascii() {
        let plain: String = text
            .chars()
            .map(|c| if c.is_ascii() { c } else { 'a' })
            .collect();
        out.push(Value::String(plain));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_limit_keeps_the_first_versions_in_order() {
        let values = [
            json!({"a": "hello", "b": [1, 2, {"c": "dé"}], "d": {"e": 9, "f": true}}),
            json!([[1, 2, 3], "xyz", {"k": [4.5, -7]}, null, 10]),
            json!("hello"),
        ];
        for value in values {
            let mut all = Vec::new();
            versions(&value, &mut all, 0, usize::MAX);
            for limit in 0..all.len() + 2 {
                let mut some = Vec::new();
                versions(&value, &mut some, 0, limit);
                // What the caller takes, the first `limit`, is the same; a step may add a few more.
                assert!(some.len() >= limit.min(all.len()), "{value} limit {limit}");
                assert_eq!(some[..], all[..some.len()], "{value} limit {limit}");
            }
        }
    }

    #[test]
    fn an_object_loses_all_its_properties_first() {
        // A failure that needs none of them (a hang on any call) then shrinks in one call.
        let value = json!({"duration": 48, "steps": 76.66, "label": "x"});
        assert_eq!(smaller(&value)[0], json!({}));
        // One property: removing it is the one step that does it.
        assert_eq!(smaller(&json!({"a": 1})), [json!({}), json!({"a": 0})]);
        // Inside a value, an emptied child is among the child's first versions.
        assert!(smaller(&json!({"o": {"a": 1, "b": 2}})).contains(&json!({"o": {}})));
    }

    #[test]
    fn every_version_is_smaller_and_different() {
        for value in [
            json!({"a": [1, 2, 3], "b": {"c": "text"}}),
            json!([[["x"]], true, 2.5]),
            json!("\u{1F600}abc"),
            json!(-17),
            json!(u64::MAX),
            json!(null),
        ] {
            // `false` is one character longer than `true`, and smaller all the same.
            let size = value.to_string().len() + 1;
            for version in smaller(&value) {
                assert_ne!(version, value);
                assert!(version.to_string().len() <= size, "{version} from {value}");
            }
        }
        assert!(smaller(&json!(null)).is_empty());
        assert!(smaller(&json!("")).is_empty());
        assert!(smaller(&json!(0)).is_empty());
    }

    #[test]
    fn a_huge_string_halves() {
        let big = "x".repeat(1 << 20);
        let versions = smaller(&json!(big));
        assert_eq!(versions[0], json!(""));
        assert_eq!(versions[1].as_str().map(str::len), Some(1 << 19));
    }

    #[test]
    fn deep_values_do_not_exhaust_the_stack() {
        let deep = super::super::mutate::deeply_nested(super::super::mutate::DEEP_NESTING);
        let versions = smaller(&deep);
        assert_eq!(versions[0], json!([]));
        crate::json::drop_deep(deep);
        for v in versions {
            crate::json::drop_deep(v);
        }
    }
}
