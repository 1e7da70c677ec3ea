//! SCH-001.

use crate::json::Members;
use crate::lint::context::{Report, SchemaDoc, ToolContext};
use crate::lint::registry::declare_rule;
use crate::lint::source_edit::SourceEdits;
use crate::lint::Applicability;
use serde_json::Value;

declare_rule! {
    /// An object schema requires none of its properties, and not all of them have a `default`.
    ///
    /// ## What it flags
    /// Every object schema reachable from `inputSchema` (the root, `properties`, `items`,
    /// `prefixItems`, `additionalProperties`, `anyOf`/`oneOf` branches, `$defs`) that declares
    /// properties with no `required`, or with `"required": []`, unless every property has a
    /// `default` (its own, or on the schema its `$ref` points at). Branches of an `allOf` are
    /// left alone: their `required` composes with the other branches.
    ///
    /// A property with a `default` says what the server does when it is left out, so leaving it
    /// out is intended: when every property has one, nothing is missing. (On the six real
    /// servers measured below, every object schema without `required` was of that kind.)
    ///
    /// ## Why it matters
    /// Without `required` every argument is optional: the model may leave any of them out and the
    /// server must cope with each absence, with no default to say how. Usually some arguments
    /// cannot be missing.
    ///
    /// ## On real servers
    /// None of the six real servers measured (see the table in the rules' module docs) has a
    /// finding; before this rule read defaults it had 4 there, all wrong.
    ///
    /// ## Example
    /// ```json
    /// {"type": "object", "properties": {"path": {"type": "string"}}}
    /// ```
    ///
    /// ## Fix
    /// List the arguments callers must send: `"required": ["path"]`. The unsafe fix
    /// (`--unsafe-fixes`) lists every declared property in declaration order; it changes the
    /// contract, so check which arguments are really optional.
    pub static MISSING_REQUIRED = {
        code: "SCH-001",
        name: "missing-required",
        severity: Warning,
        fixes: [Unsafe],
        check: Tool(check),
    };
}

fn check(cx: &ToolContext<'_>, report: &mut Report<'_>) {
    let Some(doc) = cx.standard_input() else {
        return;
    };
    let edits = SourceEdits::new(cx.text, cx.spans());
    for node in &doc.nodes {
        let Some(map) = node.object() else { continue };
        let Some(properties) = map.member("properties").and_then(Value::as_object) else {
            continue;
        };
        if properties.is_empty() || !doc.tightenable(node) {
            continue;
        }
        if properties.values().all(|p| has_default(doc, p)) {
            continue;
        }
        let required = map.member("required");
        let state = match required {
            None => "has no \"required\"",
            Some(Value::Array(list)) if list.is_empty() => "has \"required\": []",
            Some(_) => continue,
        };
        let fix = doc.fix(
            report,
            Applicability::Unsafe,
            "require every declared property",
            || {
                let names = Value::Array(properties.keys().cloned().map(Value::String).collect());
                match required {
                    Some(_) => cx
                        .member_span(node.value, node.span, "required")
                        .map(|span| edits.replace_value(node.span, span, &names)),
                    None => Some(edits.insert_member(
                        node.value,
                        node.span,
                        Some("properties"),
                        "required",
                        &names,
                    )),
                }
            },
        );
        report.add_with_fix(
            doc.pointer_of(node),
            node.span,
            format!(
                "object schema declares {} but {state}, and not every one has a default: every \
                 argument is optional",
                crate::text::count(properties.len(), "property", "properties")
            ),
            fix,
        );
    }
}

/// Whether a property schema says what its value is when left out: a `default` of its own, or
/// on the schema its `$ref` points at.
fn has_default(doc: &SchemaDoc<'_>, property: &Value) -> bool {
    property.member("default").is_some()
        || doc
            .follow_refs(property)
            .is_some_and(|target| target.member("default").is_some())
}

