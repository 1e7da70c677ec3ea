//! How a change is written: its subject, its words, and the values it shows.

use super::*;

impl SchemaDiff<'_> {
    /// A `description` or `title` changed, shown as a word diff (security).
    pub(in crate::diff) fn text_changed(
        &mut self,
        key: &str,
        o: Option<&Value>,
        n: Option<&Value>,
        at: &str,
        path: &str,
    ) {
        let text = |v: Option<&Value>| match v {
            Some(Value::String(s)) => s.clone(),
            Some(other) => other.to_string(),
            None => String::new(),
        };
        let (old, new) = (text(o), text(n));
        self.push_word_diff(
            ChangeCode::SchemaDescriptionChanged,
            key,
            (&old, &new),
            (o, n),
            at,
            path,
        );
    }

    /// A change of model-visible text at `at`, shown as a word diff of `texts` (security).
    pub(in crate::diff) fn push_word_diff(
        &mut self,
        code: ChangeCode,
        key: &str,
        (old, new): (&str, &str),
        (o, n): (Option<&Value>, Option<&Value>),
        at: &str,
        path: &str,
    ) {
        let message = format!(
            "{key} of {} changed: {}",
            self.subject(path),
            word_diff(old, new)
        );
        self.push_class(code, ChangeClass::Security, at, message, o, n);
    }

    /// Another annotation changed: `default`, `examples`, `$comment`, an unknown keyword
    /// (security).
    pub(in crate::diff) fn annotation_changed(
        &mut self,
        key: &str,
        o: Option<&Value>,
        n: Option<&Value>,
        at: &str,
        path: &str,
    ) {
        // New text is shown whole, as a description is: cut, it could hide what follows.
        let after = match n {
            Some(value) => shown(value),
            None => short(n),
        };
        let message = format!(
            "{key} of {} changed from {} to {after}",
            self.subject(path),
            short(o),
        );
        self.push_class(
            ChangeCode::SchemaAnnotationChanged,
            ChangeClass::Security,
            at,
            message,
            o,
            n,
        );
    }

    /// How the argument or output field at `path` is named in messages.
    pub(in crate::diff) fn subject(&self, path: &str) -> String {
        match (path.is_empty(), self.direction) {
            (true, Direction::Input) => "the input schema".into(),
            (true, Direction::Output) => "the output schema".into(),
            (false, Direction::Input) => format!("argument '{}'", visible(path)),
            (false, Direction::Output) => format!("field '{}'", visible(path)),
        }
    }

    /// How the object at `path` is named in messages.
    pub(super) fn object_subject(&self, path: &str) -> String {
        if path.is_empty() {
            self.subject(path)
        } else {
            format!("the object {}", self.subject(path))
        }
    }

    pub(super) fn push(
        &mut self,
        code: ChangeCode,
        effect: Effect,
        pointer: &str,
        message: String,
        before: Option<Value>,
        after: Option<Value>,
    ) {
        self.changes.push(Change {
            tool: self.tool.to_string(),
            class: class_of(effect, self.direction),
            code,
            pointer: pointer.to_string(),
            message,
            before,
            after,
        });
    }

    /// A change that brings values the model reads (`enum`, `const`): when a value holds text,
    /// it is a security change unless it is breaking (decided once the whole schema is read:
    /// under `oneOf` a compatible change becomes breaking).
    pub(super) fn push_values(
        &mut self,
        code: ChangeCode,
        effect: Effect,
        pointer: &str,
        message: String,
        before: Option<&Value>,
        after: Option<&Value>,
    ) {
        if after.is_some_and(holds_text) {
            self.bring_text.push(self.changes.len());
        }
        self.push(
            code,
            effect,
            pointer,
            message,
            before.cloned(),
            after.cloned(),
        );
    }

    pub(in crate::diff) fn push_class(
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
}

/// A path one level down: `options` + `depth` is `options.depth`.
pub(in crate::diff) fn join(path: &str, name: &str) -> String {
    match (path.is_empty(), name) {
        (_, "[]") => format!("{path}[]"),
        (true, _) => name.to_string(),
        (false, _) => format!("{path}.{name}"),
    }
}

/// Whether a value holds text the model reads: a string, or an array or object with one (or
/// with a member name).
pub(in crate::diff) fn holds_text(value: &Value) -> bool {
    let mut stack = vec![value];
    while let Some(value) = stack.pop() {
        match value {
            Value::String(_) => return true,
            Value::Object(map) if !map.is_empty() => return true,
            Value::Array(items) => stack.extend(items),
            _ => {}
        }
    }
    false
}

/// A value as canonical JSON for a message, hidden characters written out: in full when it holds
/// text the model reads (a change that brings it is there to show it), else as [`short`].
pub(in crate::diff) fn shown(value: &Value) -> String {
    if !holds_text(value) {
        return short(Some(value));
    }
    let json = serde_json_canonicalizer::to_string(value).unwrap_or_else(|_| value.to_string());
    visible(&json)
}

/// Longest value shown in a message before it is cut.
pub(super) const SHORT_LIMIT: usize = 80;

/// A value as canonical JSON (RFC 8785) for a message, hidden characters written out, cut at
/// [`SHORT_LIMIT`] characters.
pub(crate) fn short(value: Option<&Value>) -> String {
    let Some(value) = value else {
        return "(absent)".into();
    };
    // A number as written: canonical JSON writes numbers as 64-bit floats, which shows
    // 9007199254740993 as 9007199254740992.
    if let Value::Number(number) = value {
        return number.to_string();
    }
    // Canonical JSON (keys sorted): a message never depends on the order keys were written in.
    let json = serde_json_canonicalizer::to_string(value).unwrap_or_else(|_| value.to_string());
    crate::text::shorten(&visible(&json), SHORT_LIMIT)
}
