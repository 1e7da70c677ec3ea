//! SCH-001.

use crate::json::Members;
use crate::lint::context::{Report, ToolContext};
use crate::lint::registry::declare_rule;
use crate::lint::source_edit::SourceEdits;
use crate::lint::Applicability;
use serde_json::Value;

declare_rule! {
    /// An object schema declares properties but no `required` list, or an empty one.
    ///
    /// ## What it flags
    /// Every object schema reachable from `inputSchema` (the root, `properties`, `items`,
    /// `prefixItems`, `additionalProperties`, `anyOf`/`oneOf` branches, `$defs`) that declares
    /// properties with no `required`, or with `"required": []`. Branches of an `allOf` are left
    /// alone: their `required` composes with the other branches.
    ///
    /// ## Why it matters
    /// Without `required` every argument is optional: the model may leave any of them out and the
    /// server must cope with each absence. Usually some arguments cannot be missing.
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
        let required = map.member("required");
        let state = match required {
            None => "has no \"required\"",
            Some(Value::Array(list)) if list.is_empty() => "has \"required\": []",
            Some(_) => continue,
        };
        let fix = report.fix(
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
                "object schema declares {} but {state}: every argument is optional",
                count(properties.len(), "property", "properties")
            ),
            fix,
        );
    }
}

pub(crate) fn count(n: usize, one: &str, many: &str) -> String {
    if n == 1 {
        format!("1 {one}")
    } else {
        format!("{n} {many}")
    }
}
