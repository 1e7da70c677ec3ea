//! SCH-002.

use crate::json::Members;
use crate::lint::context::{Report, ToolContext};
use crate::lint::registry::declare_rule;
use crate::lint::schema_walk::{Role, SchemaNode};
use crate::lint::source_edit::SourceEdits;
use crate::lint::Applicability;
use crate::schema::Dialect;
use serde_json::Value;

declare_rule! {
    /// An object schema accepts properties it does not declare.
    ///
    /// ## What it flags
    /// Every object schema reachable from `inputSchema` (as SCH-001 lists them) whose
    /// `additionalProperties` is absent, `true` or `{}`, including a root with no properties (the
    /// MCP form for a tool without arguments is `{"type": "object", "additionalProperties":
    /// false}`). A non-empty schema there is a deliberate map and is not flagged;
    /// `unevaluatedProperties: false` counts as closed. Branches of an `allOf`, and definitions
    /// a `$ref` composes, are left alone: closing them one by one makes the whole unsatisfiable.
    ///
    /// ## Why it matters
    /// An open schema accepts a misspelled argument (`limt` for `limit`) without a word: the
    /// server never sees the value the model meant to send, and the model never learns why.
    ///
    /// ## Example
    /// ```json
    /// {"type": "object", "properties": {"limit": {"type": "integer"}}}
    /// ```
    ///
    /// ## Fix
    /// Add `"additionalProperties": false` (a safe fix: it only rejects what the schema does not
    /// declare). Replacing an explicit `true` or `{}` is an unsafe fix. An object that composes
    /// its properties with `allOf`, `anyOf`, `oneOf` or `$ref` is closed with
    /// `"unevaluatedProperties": false` in draft 2020-12; in draft-07 there is no fix, since
    /// `additionalProperties` does not see the composed properties.
    pub static OPEN_OBJECT = {
        code: "SCH-002",
        name: "open-object",
        severity: Warning,
        fixes: [Safe, Unsafe],
        check: Tool(check),
    };
}

fn is_closed(value: Option<&Value>) -> bool {
    match value {
        Some(Value::Bool(b)) => !b,
        Some(Value::Object(map)) => !map.is_empty(),
        _ => false,
    }
}

/// Whether the object takes properties from elsewhere: a `$ref` next to its keywords, or
/// `allOf`/`anyOf`/`oneOf` branches that declare properties (or refer elsewhere).
/// `additionalProperties: false` would reject those properties.
fn composes_in_place(node: &SchemaNode<'_>) -> bool {
    let Some(map) = node.object() else {
        return false;
    };
    let declares = |branch: &Value| {
        [
            "$ref",
            "properties",
            "patternProperties",
            "allOf",
            "anyOf",
            "oneOf",
        ]
        .iter()
        .any(|k| branch.member(k).is_some())
    };
    map.contains_key("$ref")
        || ["allOf", "anyOf", "oneOf"].iter().any(|k| {
            map.member(k)
                .and_then(Value::as_array)
                .is_some_and(|branches| branches.iter().any(declares))
        })
}

fn check(cx: &ToolContext<'_>, report: &mut Report<'_>) {
    let Some(doc) = cx.standard_input() else {
        return;
    };
    let edits = SourceEdits::new(cx.text, cx.spans());
    for node in &doc.nodes {
        let Some(map) = node.object() else { continue };
        if !node.is_object_schema() || !doc.tightenable(node) {
            continue;
        }
        let additional = map.member("additionalProperties");
        if is_closed(additional) || is_closed(map.member("unevaluatedProperties")) {
            continue;
        }
        let state = match additional {
            None => "additionalProperties is absent",
            Some(Value::Bool(true)) => "additionalProperties is true",
            Some(_) => "additionalProperties is {}",
        };
        let subject = if node.role == Role::Root {
            "arguments"
        } else {
            "properties"
        };
        // Concatenated rather than formatted: this rule fires on most tools of most catalogs.
        let mut message = [
            "object schema is open (",
            state,
            "): undeclared ",
            subject,
            " are accepted",
        ]
        .concat();
        let edits = &edits;
        let close = |key: &'static str| {
            move || Some(edits.insert_member(node.value, node.span, None, key, &Value::Bool(false)))
        };
        let fix = if composes_in_place(node) {
            if doc.dialect == Ok(Dialect::Draft202012) && additional.is_none() {
                report.fix(
                    Applicability::Safe,
                    "add \"unevaluatedProperties\": false",
                    close("unevaluatedProperties"),
                )
            } else {
                message.push_str(
                    "; it composes properties with allOf/anyOf/oneOf/$ref, so close it with \
                     \"unevaluatedProperties\": false (draft 2020-12)",
                );
                None
            }
        } else if additional.is_none() {
            report.fix(
                Applicability::Safe,
                "add \"additionalProperties\": false",
                close("additionalProperties"),
            )
        } else {
            report.fix(
                Applicability::Unsafe,
                "set \"additionalProperties\" to false",
                || {
                    let span = cx.member_span(node.value, node.span, "additionalProperties")?;
                    Some(edits.replace_value(node.span, span, &Value::Bool(false)))
                },
            )
        };
        report.add_with_fix(doc.pointer_of(node), node.span, message, fix);
    }
}
