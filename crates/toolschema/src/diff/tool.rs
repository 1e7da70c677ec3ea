//! Comparison of one tool's fields: what the model is told (descriptions, titles, annotations,
//! `_meta`, other fields) and its schemas.

use super::retarget::report_retargets;
use super::schema::{short, union_keys, Direction, SchemaDiff};
use super::words::word_diff;
use super::written::report_written_text;
use super::{Change, ChangeClass, ChangeCode};
use crate::json::pointer::push_segment;
use crate::json::{same_value, same_value_opt};
use crate::text::visible;
use serde_json::{Map, Value};

/// Hints whose change in this direction makes the tool less safe, with MCP's default for each:
/// (key, default, the unsafe value).
const SAFETY_HINTS: &[(&str, bool, bool)] = &[
    ("readOnlyHint", false, false),
    ("destructiveHint", true, true),
    ("openWorldHint", true, true),
];

/// Compare two prepared definitions of the tool `name`, field by field, in the old tool's order
/// then the new one's; `written` holds the two definitions as written, before they were
/// prepared. `name` itself is compared by the caller.
pub(crate) fn compare(
    name: &str,
    old: &Map<String, Value>,
    new: &Map<String, Value>,
    written: [&Map<String, Value>; 2],
    changes: &mut Vec<Change>,
) {
    let keys = union_keys(old, new);
    let mut out = ToolDiff {
        tool: name,
        written,
        changes,
    };
    for key in keys {
        let (o, n) = (old.get(key.as_str()), new.get(key.as_str()));
        // A schema is compared by meaning, but the model reads it as written: the same meaning
        // written differently (a definition renamed, a lightweight shape's text) is a change too.
        let [written_o, written_n] = written.map(|tool| tool.get(key.as_str()));
        if key == "name" || (same_value_opt(o, n) && same_value_opt(written_o, written_n)) {
            continue;
        }
        let at = push_segment("", key);
        let before = out.changes.len();
        match key.as_str() {
            "description" | "title" => out.text(key, o, n, &at),
            "inputSchema" => out.schema(o, n, &at, Direction::Input),
            "outputSchema" => out.output_schema(o, n, &at),
            "annotations" => out.annotations(o, n, &at),
            "_meta" => out.members(ChangeCode::MetaChanged, "_meta", o, n, &at),
            "execution" => out.execution(o, n, &at),
            _ => out.field(ChangeCode::FieldChanged, key, o, n, &at),
        }
        if out.changes.len() == before {
            // Different text with the same effect (`annotations: {}` for none): the client reads
            // it, so it is reported.
            let code = match key.as_str() {
                "annotations" => ChangeCode::AnnotationChanged,
                "_meta" => ChangeCode::MetaChanged,
                "inputSchema" | "outputSchema" => {
                    // Shown as written when only the writing differs.
                    let (o, n) = if same_value_opt(o, n) {
                        (written_o, written_n)
                    } else {
                        (o, n)
                    };
                    let message = format!(
                        "{key} rewritten with the same meaning: {} to {}",
                        short(o),
                        short(n)
                    );
                    out.push(
                        ChangeCode::SchemaRewritten,
                        ChangeClass::Compatible,
                        &at,
                        message,
                        o,
                        n,
                    );
                    continue;
                }
                _ => ChangeCode::FieldChanged,
            };
            out.field(code, key, o, n, &at);
        }
    }
}

struct ToolDiff<'c> {
    tool: &'c str,
    /// The old and the new definitions as written.
    written: [&'c Map<String, Value>; 2],
    changes: &'c mut Vec<Change>,
}

impl ToolDiff<'_> {
    fn push(
        &mut self,
        code: ChangeCode,
        class: ChangeClass,
        pointer: &str,
        message: String,
        before: Option<&Value>,
        after: Option<&Value>,
    ) {
        let change = Change::new(self.tool, class, code, pointer, message, before, after);
        self.changes.push(change);
    }

    /// A description or title, shown as a word diff.
    fn text(&mut self, key: &str, o: Option<&Value>, n: Option<&Value>, at: &str) {
        let (Some(Value::String(_)) | None, Some(Value::String(_)) | None) = (o, n) else {
            return self.field(ChangeCode::FieldChanged, key, o, n, at);
        };
        fn text(v: Option<&Value>) -> &str {
            v.and_then(Value::as_str).unwrap_or_default()
        }
        let verb = match (o, n) {
            (None, _) => "added",
            (_, None) => "removed",
            _ => "changed",
        };
        let code = if key == "title" || at == "/annotations/title" {
            ChangeCode::TitleChanged
        } else {
            ChangeCode::DescriptionChanged
        };
        let label = if at == "/annotations/title" {
            "annotations.title"
        } else {
            key
        };
        let message = format!("{label} {verb}: {}", word_diff(text(o), text(n)));
        self.push(code, ChangeClass::Security, at, message, o, n);
    }

    fn schema(&mut self, o: Option<&Value>, n: Option<&Value>, at: &str, direction: Direction) {
        let (Some(o), Some(n)) = (o, n) else {
            return self.field(ChangeCode::FieldChanged, "inputSchema", o, n, at);
        };
        let first = self.changes.len();
        SchemaDiff::new(self.tool, direction, self.changes).compare_schemas(o, n, at);
        let key = match direction {
            Direction::Input => "inputSchema",
            Direction::Output => "outputSchema",
        };
        if let [Some(old), Some(new)] = self.written.map(|tool| tool.get(key)) {
            report_retargets(self.tool, old, new, at, first, self.changes);
            report_written_text(self.tool, Some(old), new, n, at, self.changes);
        }
    }

    fn output_schema(&mut self, o: Option<&Value>, n: Option<&Value>, at: &str) {
        match (o, n) {
            (Some(_), Some(_)) => self.schema(o, n, at, Direction::Output),
            (None, Some(schema)) => {
                self.push(
                    ChangeCode::OutputSchemaAdded,
                    ChangeClass::Compatible,
                    at,
                    "outputSchema added: results now promise a shape".into(),
                    None,
                    n,
                );
                SchemaDiff::new(self.tool, Direction::Output, self.changes).new_text(
                    schema,
                    at,
                    "",
                    0,
                    &Default::default(),
                );
                if let Some(written) = self.written[1].get("outputSchema") {
                    report_written_text(self.tool, None, written, schema, at, self.changes);
                }
            }
            _ => self.push(
                ChangeCode::OutputSchemaRemoved,
                ChangeClass::Breaking,
                at,
                "outputSchema removed: results no longer promise a shape".into(),
                o,
                None,
            ),
        }
    }

    fn annotations(&mut self, o: Option<&Value>, n: Option<&Value>, at: &str) {
        let (Some(old), Some(new)) = (object_or_empty(o), object_or_empty(n)) else {
            return self.field(ChangeCode::AnnotationChanged, "annotations", o, n, at);
        };
        let keys = union_keys(&old, &new);
        for key in keys {
            let (a, b) = (old.get(key.as_str()), new.get(key.as_str()));
            if same_value_opt(a, b) {
                continue;
            }
            let member_at = push_segment(at, key);
            if key == "title" {
                self.text(key, a, b, &member_at);
                continue;
            }
            let hint = SAFETY_HINTS.iter().find(|(k, _, _)| k == key);
            let effective = |v: Option<&Value>, default: bool| match v {
                None | Some(Value::Null) => Some(default),
                Some(Value::Bool(b)) => Some(*b),
                Some(_) => None,
            };
            let less_safe = hint.is_some_and(|&(_, default, unsafe_value)| {
                let (before, after) = (effective(a, default), effective(b, default));
                after == Some(unsafe_value) && before != Some(unsafe_value)
                    || (after.is_none() && before == Some(!unsafe_value))
            });
            let show = |v: Option<&Value>| match (v, hint) {
                (None, Some((_, default, _))) => format!("(absent: {default} by default)"),
                _ => short(v),
            };
            let (code, note) = if less_safe {
                (ChangeCode::AnnotationLessSafe, " (less safe)")
            } else {
                (ChangeCode::AnnotationChanged, "")
            };
            let message = format!(
                "annotations.{} changed from {} to {}{note}",
                visible(key),
                show(a),
                show(b)
            );
            self.push(code, ChangeClass::Security, &member_at, message, a, b);
        }
    }

    fn execution(&mut self, o: Option<&Value>, n: Option<&Value>, at: &str) {
        let (Some(old), Some(new)) = (object_or_empty(o), object_or_empty(n)) else {
            return self.field(ChangeCode::FieldChanged, "execution", o, n, at);
        };
        let (a, b) = (old.get("taskSupport"), new.get("taskSupport"));
        if !same_value_opt(a, b) {
            let required = b.and_then(Value::as_str) == Some("required");
            let (class, note) = if required {
                (
                    ChangeClass::Breaking,
                    ": callers that do not run it as a task now fail",
                )
            } else {
                (ChangeClass::Security, "")
            };
            let show =
                |v: Option<&Value>| v.map_or("(absent: forbidden)".to_string(), |v| short(Some(v)));
            let message = format!(
                "execution.taskSupport changed from {} to {}{note}",
                show(a),
                show(b)
            );
            self.push(
                ChangeCode::TaskSupportChanged,
                class,
                &push_segment(at, "taskSupport"),
                message,
                a,
                b,
            );
        }
        let rest = |m: Map<String, Value>| {
            let mut m = m.clone();
            m.shift_remove("taskSupport");
            Value::Object(m)
        };
        let (old_rest, new_rest) = (rest(old), rest(new));
        if !same_value(&old_rest, &new_rest) {
            self.members(
                ChangeCode::FieldChanged,
                "execution",
                Some(&old_rest),
                Some(&new_rest),
                at,
            );
        }
    }

    /// An object field compared member by member (`_meta`); anything else as a whole.
    fn members(
        &mut self,
        code: ChangeCode,
        label: &str,
        o: Option<&Value>,
        n: Option<&Value>,
        at: &str,
    ) {
        let (Some(Value::Object(old)), Some(Value::Object(new))) = (o, n) else {
            return self.field(code, label, o, n, at);
        };
        let keys = union_keys(old, new);
        for key in keys {
            let (a, b) = (old.get(key.as_str()), new.get(key.as_str()));
            if !same_value_opt(a, b) {
                let label = format!("{label}.{}", visible(key));
                self.field(code, &label, a, b, &push_segment(at, key));
            }
        }
    }

    /// Any other field: security, since the model or the client reads it.
    fn field(
        &mut self,
        code: ChangeCode,
        label: &str,
        o: Option<&Value>,
        n: Option<&Value>,
        at: &str,
    ) {
        let message = match (o, n) {
            (None, _) => format!("{} added: {}", visible(label), short(n)),
            (_, None) => format!("{} removed (was {})", visible(label), short(o)),
            _ => format!(
                "{} changed from {} to {}",
                visible(label),
                short(o),
                short(n)
            ),
        };
        let class = if code == ChangeCode::FieldChanged && label == "inputSchema" {
            ChangeClass::Breaking
        } else {
            ChangeClass::Security
        };
        self.push(code, class, at, message, o, n);
    }
}

/// An object field's members, none when it is absent; `None` when it is not an object.
fn object_or_empty(value: Option<&Value>) -> Option<Map<String, Value>> {
    match value {
        None => Some(Map::new()),
        Some(value) => value.as_object().cloned(),
    }
}
