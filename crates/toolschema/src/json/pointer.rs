//! JSON Pointers (RFC 6901) and the way a caller writes the same path (`items[0].id`).

use serde_json::Value;
use std::borrow::Cow;

/// Split a JSON Pointer into its unescaped segments. `""` is the root and has none.
pub fn split_pointer(pointer: &str) -> impl Iterator<Item = Cow<'_, str>> {
    pointer
        .strip_prefix('/')
        .map(|rest| rest.split('/'))
        .into_iter()
        .flatten()
        .map(unescape_segment)
}

fn unescape_segment(segment: &str) -> Cow<'_, str> {
    if segment.contains('~') {
        Cow::Owned(segment.replace("~1", "/").replace("~0", "~"))
    } else {
        Cow::Borrowed(segment)
    }
}

/// Escape one segment for use in a JSON Pointer.
pub fn escape_segment(segment: &str) -> Cow<'_, str> {
    if segment.contains(['~', '/']) {
        Cow::Owned(segment.replace('~', "~0").replace('/', "~1"))
    } else {
        Cow::Borrowed(segment)
    }
}

/// Append one segment to a pointer.
pub fn push_segment(pointer: &str, segment: &str) -> String {
    let mut out = String::with_capacity(pointer.len() + segment.len() + 1);
    out.push_str(pointer);
    out.push('/');
    out.push_str(&escape_segment(segment));
    out
}

/// The value at `pointer` inside `root`.
pub fn resolve<'v>(root: &'v Value, pointer: &str) -> Option<&'v Value> {
    let mut value = root;
    for segment in split_pointer(pointer) {
        value = match value {
            Value::Object(map) => map.get(segment.as_ref())?,
            Value::Array(items) => items.get(segment.parse::<usize>().ok()?)?,
            _ => return None,
        };
    }
    Some(value)
}

/// Render a pointer into `instance` the way a caller writes it: `items[0].id`, `tags[1]`.
///
/// Segments that index an array become `[n]`; object keys are joined by `.`, and a key that would
/// be ambiguous that way (empty, or holding `.`, `[`, `]`, `'`, `"` or whitespace) is written
/// `["key"]`. The root is the empty string.
pub fn caller_path(instance: &Value, pointer: &str) -> String {
    let mut out = String::new();
    let mut value = Some(instance);
    for segment in split_pointer(pointer) {
        let in_array = matches!(value, Some(Value::Array(_)));
        value = value.and_then(|v| match v {
            Value::Object(map) => map.get(segment.as_ref()),
            Value::Array(items) => segment.parse::<usize>().ok().and_then(|i| items.get(i)),
            _ => None,
        });
        if in_array {
            out.push('[');
            out.push_str(&segment);
            out.push(']');
        } else {
            push_key(&mut out, &segment);
        }
    }
    out
}

/// Append an object key to a caller-style path.
pub fn push_key(out: &mut String, key: &str) {
    let plain = !key.is_empty()
        && !key
            .chars()
            .any(|c| matches!(c, '.' | '[' | ']' | '\'' | '"') || c.is_whitespace());
    if plain {
        if !out.is_empty() {
            out.push('.');
        }
        out.push_str(key);
    } else {
        out.push('[');
        out.push_str(&Value::String(key.to_string()).to_string());
        out.push(']');
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn splits_and_escapes() {
        let segments: Vec<_> = split_pointer("/a~1b/c~0d/0").collect();
        assert_eq!(segments, ["a/b", "c~d", "0"]);
        assert_eq!(split_pointer("").count(), 0);
        assert_eq!(push_segment("/x", "a/b~"), "/x/a~1b~0");
    }

    #[test]
    fn caller_paths_follow_the_instance() {
        let instance = json!({"items": [{"id": 1}], "map": {"0": {"a.b": 1}}, "tags": ["x", "y"]});
        assert_eq!(caller_path(&instance, "/items/0/id"), "items[0].id");
        assert_eq!(caller_path(&instance, "/tags/1"), "tags[1]");
        assert_eq!(caller_path(&instance, "/map/0/a.b"), "map.0[\"a.b\"]");
        assert_eq!(caller_path(&instance, ""), "");
        // A missing leaf (a required property) is still named.
        assert_eq!(caller_path(&instance, "/items/0/name"), "items[0].name");
    }

    #[test]
    fn resolves_pointers() {
        let v = json!({"a": [{"b/c": 3}]});
        assert_eq!(resolve(&v, "/a/0/b~1c"), Some(&json!(3)));
        assert_eq!(resolve(&v, "/a/1"), None);
        assert_eq!(resolve(&v, ""), Some(&v));
    }
}
