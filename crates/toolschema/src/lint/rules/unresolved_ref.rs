//! SCH-008.

use crate::json::Members;
use crate::lint::context::{Report, SchemaDoc, ToolContext};
use crate::lint::registry::declare_rule;
use crate::schema::references::check_ref_cycles;
use serde_json::Value;

declare_rule! {
    /// A `$ref` does not resolve inside the document.
    ///
    /// ## What it flags
    /// In `inputSchema` and `outputSchema`: a `$ref` whose JSON Pointer or anchor leads nowhere
    /// in the schema, a `$ref` to another document (toolschema never fetches one, and a client
    /// should not have to), and `$ref`s that lead back to themselves without ever reaching a
    /// value to check.
    ///
    /// ## Why it matters
    /// A schema with a dangling reference does not compile: validators refuse it, and the tool
    /// fails on every call.
    ///
    /// ## Example
    /// ```json
    /// {"type": "object", "properties": {"user": {"$ref": "#/$defs/User"}}}
    /// ```
    /// (with no `$defs`).
    ///
    /// ## Fix
    /// Point the `$ref` at a definition in the same schema (`#/$defs/...`, or
    /// `#/definitions/...` in draft-07), or inline the referenced schema. There is no automatic
    /// fix.
    pub static UNRESOLVED_REF = {
        code: "SCH-008",
        name: "unresolved-ref",
        severity: Critical,
        fixes: [],
        check: Tool(check),
    };
}

/// Why `reference` does not resolve in `doc`, if it does not.
fn unresolved(doc: &SchemaDoc<'_>, reference: &str) -> Option<String> {
    if reference.starts_with('#') {
        return doc
            .resolve_ref(reference)
            .is_none()
            .then(|| format!("$ref '{reference}' does not resolve inside the schema"));
    }
    // A reference to a base URI the document itself declares (`$id`) stays inside it.
    let (base, fragment) = reference.split_once('#').unwrap_or((reference, ""));
    let base = base.trim_end_matches('#');
    let holder = doc.nodes.iter().find(|n| {
        n.value
            .member("$id")
            .and_then(Value::as_str)
            .is_some_and(|id| id.trim_end_matches('#') == base)
    });
    match holder {
        Some(node) => {
            let inside = fragment.is_empty()
                || (fragment.starts_with('/')
                    && crate::json::pointer::resolve(
                        node.value,
                        &crate::schema::references::percent_decode(fragment),
                    )
                    .is_some())
                || doc.resolve_ref(&format!("#{fragment}")).is_some();
            (!inside).then(|| format!("$ref '{reference}' does not resolve inside the schema"))
        }
        None => Some(format!(
            "$ref '{reference}' points outside the schema: toolschema never fetches it, and \
             clients that do not fetch cannot validate against it"
        )),
    }
}

fn check(cx: &ToolContext<'_>, report: &mut Report<'_>) {
    for doc in cx.standard_schemas() {
        let mut any = false;
        for node in &doc.nodes {
            let Some(reference) = node.value.member("$ref") else {
                continue;
            };
            any = true;
            let span = cx
                .member_span(node.value, node.span, "$ref")
                .unwrap_or(node.span);
            let pointer = format!("{}{}/$ref", doc.pointer, node.local);
            let Some(reference) = reference.as_str() else {
                continue; // not a string: SCH-007
            };
            if let Some(message) = unresolved(doc, reference) {
                report.add(pointer, span, message);
            }
        }
        if any {
            if let Err(error) = check_ref_cycles(doc.value) {
                report.add(
                    doc.pointer.clone(),
                    doc.span,
                    format!("{}: {error}", doc.field),
                );
            }
        }
    }
}
