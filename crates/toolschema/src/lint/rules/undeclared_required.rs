//! SCH-009.

use crate::json::Members;
use crate::lint::context::{Report, ToolContext};
use crate::lint::registry::declare_rule;
use crate::lint::schema_walk::Role;
use serde_json::Value;

declare_rule! {
    /// `required` names a property the schema does not declare.
    ///
    /// ## What it flags
    /// A name in an object schema's `required` list that is not in its `properties` (for an
    /// `anyOf`/`oneOf`/`allOf` branch or an `if`/`then`/`else`, the enclosing schema's
    /// `properties` count too). Schemas with `patternProperties` are not checked.
    ///
    /// ## Why it matters
    /// Gemini rejects the whole request when a required property is not declared, and every model
    /// is asked for an argument it is told nothing about: often a typo or a renamed property.
    ///
    /// ## Example
    /// ```json
    /// {"type": "object", "properties": {"query": {"type": "string"}}, "required": ["qeury"]}
    /// ```
    ///
    /// ## Fix
    /// Declare the property, or correct or remove the name. There is no automatic fix.
    pub static UNDECLARED_REQUIRED = {
        code: "SCH-009",
        name: "undeclared-required",
        severity: Warning,
        fixes: [],
        check: Tool(check),
    };
}

fn check(cx: &ToolContext<'_>, report: &mut Report<'_>) {
    let Some(doc) = cx.standard_input() else {
        return;
    };
    for node in &doc.nodes {
        let Some(map) = node.object() else { continue };
        let Some(required) = map.member("required").and_then(Value::as_array) else {
            continue;
        };
        let parent = match node.role {
            Role::Branch(_) | Role::Other => node.parent.and_then(|p| doc.nodes.get(p)),
            _ => None,
        };
        let has_patterns = |v: &Value| v.member("patternProperties").is_some();
        if has_patterns(node.value) || parent.is_some_and(|p| has_patterns(p.value)) {
            continue;
        }
        let declared = |name: &str| {
            let in_props = |v: &Value| {
                v.member("properties")
                    .and_then(|p| p.member(name))
                    .is_some()
            };
            in_props(node.value) || parent.is_some_and(|p| in_props(p.value))
        };
        let Some(required_span) = cx.member_span(node.value, node.span, "required") else {
            continue;
        };
        for ((i, name), span) in required
            .iter()
            .enumerate()
            .zip(cx.spans().children(required_span))
        {
            let Some(name) = name.as_str() else { continue };
            if declared(name) {
                continue;
            }
            let suggestion = map
                .member("properties")
                .and_then(Value::as_object)
                .and_then(|p| crate::suggest::closest(name, p.keys().map(String::as_str)))
                .map(|s| format!(" (did you mean '{s}'?)"))
                .unwrap_or_default();
            report.add(
                format!("{}{}/required/{i}", doc.pointer, node.local),
                span,
                format!(
                    "required names '{name}', which properties does not declare{suggestion}: \
                     Gemini rejects the request"
                ),
            );
        }
    }
}
