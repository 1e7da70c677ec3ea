//! Fixes as text edits on the file as written: members are added, removed or replaced where
//! they are, in the layout of their neighbours, and every other byte stays as it was.

use super::diagnostic::Edit;
use crate::json::Spans;
use serde_json::Value;

/// How the members of one object are laid out in the file.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Layout {
    /// Members on their own lines.
    multiline: bool,
    /// The whitespace before each member's key (multi-line objects).
    member_indent: String,
    /// One level of indentation.
    unit: String,
    /// What sits between a key and its value (`": "`).
    colon: String,
    /// What follows the comma between two members of a one-line object (`" "`).
    gap: String,
    /// The line break the file uses (`"\n"` or `"\r\n"`).
    newline: &'static str,
}

/// Builds edits on one file's text.
pub(crate) struct SourceEdits<'a> {
    text: &'a str,
    spans: &'a Spans,
}

/// One member of an object in the file: its key start, value start and value end.
#[derive(Debug, Clone, Copy)]
struct Member {
    key_start: usize,
    value_start: usize,
    value_end: usize,
}

impl<'a> SourceEdits<'a> {
    pub fn new(text: &'a str, spans: &'a Spans) -> Self {
        SourceEdits { text, spans }
    }

    fn members(&self, object_span: usize) -> Vec<Member> {
        self.spans
            .children(object_span)
            .filter_map(|i| self.spans.get(i))
            .map(|s| Member {
                key_start: s.key_start as usize,
                value_start: s.start as usize,
                value_end: s.end as usize,
            })
            .collect()
    }

    /// The indentation of the line holding byte `offset`.
    fn line_indent(&self, offset: usize) -> &'a str {
        let line_start = self.text[..offset].rfind('\n').map_or(0, |i| i + 1);
        let line = &self.text[line_start..];
        let width = line.len() - line.trim_start_matches([' ', '\t']).len();
        &line[..width]
    }

    fn layout(&self, object_span: usize) -> Layout {
        let text = self.text;
        let (start, end) = self
            .spans
            .get(object_span)
            .map_or((0, text.len()), |s| (s.start as usize, s.end as usize));
        let members = self.members(object_span);
        // Indentation and line breaks matter only to an object written on several lines, and
        // are looked for only inside it: searching the file from each edit made fixing a
        // catalog written on one line quadratic in its size.
        let mut layout = Layout {
            multiline: false,
            member_indent: "  ".into(),
            unit: "  ".into(),
            colon: ": ".into(),
            gap: " ".into(),
            // The object's first line break says which kind the file uses.
            newline: match text[start..end].find('\n') {
                Some(i) if i > 0 && text.as_bytes()[start + i - 1] == b'\r' => "\r\n",
                _ => "\n",
            },
        };
        let Some(first) = members.first() else {
            return layout;
        };
        let before_first = &text[start + 1..first.key_start];
        if let Some(newline) = before_first.rfind('\n') {
            let outer = self.line_indent(start);
            layout.multiline = true;
            layout.member_indent = before_first[newline + 1..]
                .trim_end_matches('\r')
                .to_string();
            if let Some(unit) = layout.member_indent.strip_prefix(outer) {
                if !unit.is_empty() {
                    layout.unit = unit.to_string();
                }
            }
        }
        let key_end = string_end(text, first.key_start);
        layout.colon = text[key_end..first.value_start].to_string();
        if let Some(second) = members.get(1) {
            let between = &text[first.value_end..second.key_start];
            if let Some(comma) = between.find(',') {
                if !between[comma..].contains('\n') {
                    layout.gap = between[comma + 1..].to_string();
                }
            }
        }
        layout
    }

    /// Render `value` for a member of the object at `object_span`.
    fn render(&self, layout: &Layout, value: &Value) -> String {
        let mut out = String::new();
        if layout.multiline {
            render_pretty(value, &layout.member_indent, layout, &mut out);
        } else {
            render_inline(value, layout, &mut out);
        }
        out
    }

    fn member_text(&self, layout: &Layout, key: &str, value: &Value) -> String {
        let mut out = Value::String(key.to_string()).to_string();
        out.push_str(&layout.colon);
        out.push_str(&self.render(layout, value));
        out
    }

    /// Add `"key": value` to the object at `object_span`: after the member `after` when given
    /// (and present), else at the end.
    pub fn insert_member(
        &self,
        object: &Value,
        object_span: usize,
        after: Option<&str>,
        key: &str,
        value: &Value,
    ) -> Edit {
        let layout = self.layout(object_span);
        let members = self.members(object_span);
        let position = after
            .and_then(|name| object.as_object()?.keys().position(|k| k == name))
            .or(members.len().checked_sub(1));
        let member = self.member_text(&layout, key, value);
        let Some(anchor) = position.and_then(|p| members.get(p)) else {
            // An empty object: rewrite it whole, so no other edit can land inside it.
            let span = self.spans.get(object_span);
            let range = span.map_or(0..0, |s| s.start as usize..s.end as usize);
            return Edit::replace(range, format!("{{{member}}}"));
        };
        let separator = if layout.multiline {
            format!(",{}{}", layout.newline, layout.member_indent)
        } else {
            format!(",{}", layout.gap)
        };
        Edit::insert(anchor.value_end, format!("{separator}{member}"))
    }

    /// Remove the member `key` of the object at `object_span`, with its comma.
    pub fn remove_member(&self, object: &Value, object_span: usize, key: &str) -> Option<Edit> {
        let position = object.as_object()?.keys().position(|k| k == key)?;
        let members = self.members(object_span);
        let this = members.get(position)?;
        if members.len() == 1 {
            let span = self.spans.get(object_span)?;
            return Some(Edit::delete(span.start as usize + 1..span.end as usize - 1));
        }
        Some(match position.checked_sub(1).and_then(|p| members.get(p)) {
            Some(previous) => Edit::delete(previous.value_end..this.value_end),
            None => Edit::delete(this.key_start..members.get(1)?.key_start),
        })
    }

    /// Replace the value at `value_span`, a member of the object at `object_span`, with `value`.
    pub fn replace_value(&self, object_span: usize, value_span: usize, value: &Value) -> Edit {
        let mut layout = self.layout(object_span);
        let range = self
            .spans
            .get(value_span)
            .map_or(0..0, |s| s.start as usize..s.end as usize);
        if layout.multiline {
            layout.member_indent = self.line_indent(range.start).to_string();
        }
        Edit::replace(range, self.render(&layout, value))
    }
}

/// The byte after the closing quote of the JSON string starting at `start`.
fn string_end(text: &str, start: usize) -> usize {
    let bytes = text.as_bytes();
    let mut i = start + 1;
    while let Some(&b) = bytes.get(i) {
        match b {
            b'\\' => i += 2,
            b'"' => return i + 1,
            _ => i += 1,
        }
    }
    text.len()
}

fn render_scalar(value: &Value, out: &mut String) {
    out.push_str(&value.to_string());
}

/// Pretty-print like `JSON.stringify(value, null, unit)`, continuing lines at `indent`.
fn render_pretty(value: &Value, indent: &str, layout: &Layout, out: &mut String) {
    match value {
        Value::Array(items) if !items.is_empty() => {
            let inner = format!("{indent}{}", layout.unit);
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                out.push_str(if i == 0 { "" } else { "," });
                out.push_str(layout.newline);
                out.push_str(&inner);
                render_pretty(item, &inner, layout, out);
            }
            out.push_str(layout.newline);
            out.push_str(indent);
            out.push(']');
        }
        Value::Object(map) if !map.is_empty() => {
            let inner = format!("{indent}{}", layout.unit);
            out.push('{');
            for (i, (key, item)) in map.iter().enumerate() {
                out.push_str(if i == 0 { "" } else { "," });
                out.push_str(layout.newline);
                out.push_str(&inner);
                out.push_str(&Value::String(key.clone()).to_string());
                out.push_str(&layout.colon);
                render_pretty(item, &inner, layout, out);
            }
            out.push_str(layout.newline);
            out.push_str(indent);
            out.push('}');
        }
        _ => render_scalar(value, out),
    }
}

/// Print on one line with the file's separators.
fn render_inline(value: &Value, layout: &Layout, out: &mut String) {
    match value {
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                    out.push_str(&layout.gap);
                }
                render_inline(item, layout, out);
            }
            out.push(']');
        }
        Value::Object(map) => {
            out.push('{');
            for (i, (key, item)) in map.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                    out.push_str(&layout.gap);
                }
                out.push_str(&Value::String(key.clone()).to_string());
                out.push_str(&layout.colon);
                render_inline(item, layout, out);
            }
            out.push('}');
        }
        _ => render_scalar(value, out),
    }
}

/// Apply edits to `text`. Edits must not overlap (see [`conflicts`]); they are applied in order
/// of position, insertions at the same place in the order given.
pub(crate) fn apply_edits(text: &str, edits: &[&Edit]) -> String {
    let mut sorted: Vec<&Edit> = edits.to_vec();
    sorted.sort_by_key(|e| (e.range.start, e.range.end));
    let mut out = String::with_capacity(text.len() + 256);
    let mut cursor = 0;
    for edit in sorted {
        out.push_str(&text[cursor..edit.range.start]);
        out.push_str(&edit.replacement);
        cursor = edit.range.end;
    }
    out.push_str(&text[cursor..]);
    out
}

/// Whether two edits cannot both be applied: their ranges overlap, or one inserts at or inside
/// the range the other replaces (text inserted next to a removed member could lose its comma).
pub(crate) fn conflicts(a: &Edit, b: &Edit) -> bool {
    let (a_empty, b_empty) = (a.range.is_empty(), b.range.is_empty());
    if a_empty && b_empty {
        return false;
    }
    if a_empty {
        return b.range.start <= a.range.start && a.range.start <= b.range.end;
    }
    if b_empty {
        return a.range.start <= b.range.start && b.range.start <= a.range.end;
    }
    a.range.start < b.range.end && b.range.start < a.range.end
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::parse_with_spans;
    use serde_json::json;

    fn edit(text: &str, f: impl Fn(&SourceEdits<'_>, &Value) -> Edit) -> String {
        let (value, spans) = parse_with_spans(text).unwrap();
        let edits = SourceEdits::new(text, &spans);
        let e = f(&edits, &value);
        apply_edits(text, &[&e])
    }

    #[test]
    fn inserts_in_the_layout_of_the_siblings() {
        let pretty = "{\n    \"a\": 1,\n    \"b\": 2\n}";
        assert_eq!(
            edit(pretty, |e, v| e.insert_member(v, 0, None, "c", &json!(["x", "y"]))),
            "{\n    \"a\": 1,\n    \"b\": 2,\n    \"c\": [\n        \"x\",\n        \"y\"\n    ]\n}"
        );
        assert_eq!(
            edit(pretty, |e, v| e.insert_member(
                v,
                0,
                Some("a"),
                "c",
                &json!(false)
            )),
            "{\n    \"a\": 1,\n    \"c\": false,\n    \"b\": 2\n}"
        );
        let inline = "{\"a\":1,\"b\":{\"c\":2}}";
        assert_eq!(
            edit(inline, |e, v| e.insert_member(
                v,
                0,
                None,
                "d",
                &json!({"e": [1, 2]})
            )),
            "{\"a\":1,\"b\":{\"c\":2},\"d\":{\"e\":[1,2]}}"
        );
        let spaced = "[{\"a\": 1, \"b\": 2}]";
        assert_eq!(
            edit(spaced, |e, v| e.insert_member(
                &v[0],
                1,
                None,
                "c",
                &json!(["x", "y"])
            )),
            "[{\"a\": 1, \"b\": 2, \"c\": [\"x\", \"y\"]}]"
        );
        assert_eq!(
            edit("{\"x\": {}}", |e, v| e.insert_member(
                &v["x"],
                1,
                None,
                "c",
                &json!(false)
            )),
            "{\"x\": {\"c\": false}}"
        );
    }

    #[test]
    fn keeps_crlf_line_breaks() {
        let text = "{\r\n  \"a\": {\r\n    \"b\": 1\r\n  }\r\n}\r\n";
        assert_eq!(
            edit(text, |e, v| e.insert_member(&v["a"], 1, None, "c", &json!([true]))),
            "{\r\n  \"a\": {\r\n    \"b\": 1,\r\n    \"c\": [\r\n      true\r\n    ]\r\n  }\r\n}\r\n"
        );
    }

    #[test]
    fn removes_a_member_with_its_comma() {
        let text = "{\n  \"a\": 1,\n  \"format\": \"uint32\",\n  \"b\": 2\n}";
        let remove =
            |key: &'static str| edit(text, move |e, v| e.remove_member(v, 0, key).unwrap());
        assert_eq!(remove("format"), "{\n  \"a\": 1,\n  \"b\": 2\n}");
        assert_eq!(remove("a"), "{\n  \"format\": \"uint32\",\n  \"b\": 2\n}");
        assert_eq!(remove("b"), "{\n  \"a\": 1,\n  \"format\": \"uint32\"\n}");
        assert_eq!(
            edit("{\"format\": \"x\"}", |e, v| e
                .remove_member(v, 0, "format")
                .unwrap()),
            "{}"
        );
    }

    #[test]
    fn replaces_a_value_at_its_indentation() {
        let text = "{\n  \"tool\": {\n    \"schema\": {\"q\": 1},\n    \"x\": 2\n  }\n}";
        let out = edit(text, |e, _| {
            e.replace_value(1, 2, &json!({"type": "object", "p": {}}))
        });
        assert_eq!(
            out,
            "{\n  \"tool\": {\n    \"schema\": {\n      \"type\": \"object\",\n      \"p\": {}\n    },\n    \"x\": 2\n  }\n}"
        );
    }

    #[test]
    fn conflicting_edits() {
        let insert = Edit::insert(5, "x");
        assert!(!conflicts(&insert, &Edit::insert(5, "y")));
        assert!(conflicts(&insert, &Edit::delete(2..5)));
        assert!(conflicts(&Edit::delete(5..7), &insert));
        assert!(!conflicts(&Edit::delete(6..7), &insert));
        assert!(conflicts(&Edit::delete(1..4), &Edit::delete(3..6)));
        assert!(!conflicts(&Edit::delete(1..3), &Edit::delete(3..6)));
    }
}
