//! SCH-008.

use crate::json::Members;
use crate::lint::context::{Report, SchemaDoc, ToolContext};
use crate::lint::registry::declare_rule;
use crate::schema::document::{Document, Unresolved};
use crate::schema::references::check_references;

declare_rule! {
    /// A `$ref` does not resolve inside the document.
    ///
    /// ## What it flags
    /// In `inputSchema` and `outputSchema`: a `$ref` whose JSON Pointer or anchor leads nowhere
    /// in the schema, a `$ref` to another document (toolschema never fetches one, and a client
    /// should not have to), `$ref`s that lead back to themselves without ever reaching a
    /// value to check, a schema with more than 10,000 distinct `$ref` targets (toolschema
    /// refuses to compile it: compiling a chain of references takes time that grows with the
    /// square of its length), and one that applies more than 64 subschemas in a row at one
    /// place of a value through references (validating recurses once for each, at every level
    /// of the value).
    ///
    /// ## Why it matters
    /// A schema with a dangling reference does not compile: validators refuse it, and the tool
    /// fails on every call. One with too many targets or too long a chain is refused by `toolschema validate`, the
    /// proxy and the fuzzer, and stalls validators that try.
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
    match Document::new(doc.value).locate_strictly(reference) {
        Ok(_) => None,
        Err(Unresolved::Elsewhere) => Some(format!(
            "$ref '{reference}' points outside the schema: toolschema never fetches it, and \
             clients that do not fetch cannot validate against it"
        )),
        Err(Unresolved::Malformed) => Some(format!(
            "$ref '{reference}' is not a URI reference (escape spaces and `%` as `%20` and `%25`)"
        )),
        Err(Unresolved::NoAnchor | Unresolved::NoValue) => Some(format!(
            "$ref '{reference}' does not resolve inside the schema"
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
            if let Err(error) = check_references(doc.value) {
                report.add(
                    doc.pointer.clone(),
                    doc.span,
                    format!("{}: {error}", doc.field),
                );
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::lint::{Linter, RuleSelection};
    use serde_json::json;

    #[test]
    fn schemas_with_more_reference_targets_or_longer_chains_than_are_validated_are_reported() {
        // `x` refers to d0, d0 to d1, ..., the last is a string: `length + 1` in a row.
        let chain = |length: usize| {
            let defs: serde_json::Map<String, serde_json::Value> = (0..=length)
                .map(|i| {
                    let def = if i == length {
                        json!({"type": "string"})
                    } else {
                        json!({"$ref": format!("#/$defs/d{}", i + 1)})
                    };
                    (format!("d{i}"), def)
                })
                .collect();
            json!({"type": "object", "properties": {"x": {"$ref": "#/$defs/d0"}}, "$defs": defs})
        };
        // Each of `n` properties refers to a definition of its own.
        let star = |n: usize| {
            let properties: serde_json::Map<String, serde_json::Value> = (0..n)
                .map(|i| (format!("p{i}"), json!({"$ref": format!("#/$defs/d{i}")})))
                .collect();
            let defs: serde_json::Map<String, serde_json::Value> = (0..n)
                .map(|i| (format!("d{i}"), json!({"type": "string", "maxLength": i})))
                .collect();
            json!({"type": "object", "properties": properties, "$defs": defs})
        };
        let catalog = json!({"tools": [
            {"name": "many", "inputSchema": star(10_001)},
            {"name": "enough", "inputSchema": star(10_000)},
            {"name": "long", "inputSchema": chain(64)},
            {"name": "short", "inputSchema": chain(63)},
        ]})
        .to_string();
        let mut selection = RuleSelection::all();
        selection
            .apply(Some(&["SCH-008".to_string()]), &[])
            .unwrap();
        let found = Linter::new(selection).lint("c.json", &catalog).unwrap();
        let found: Vec<_> = found
            .diagnostics
            .iter()
            .map(|d| (d.tool.as_deref(), d.pointer.as_str(), d.message.as_str()))
            .collect();
        assert_eq!(
            found,
            [
                (
                    Some("many"),
                    "/tools/0/inputSchema",
                    "inputSchema: schema has more than 10000 distinct $ref targets, more than toolschema compiles (compiling chains of references takes time that grows with the square of their length)"
                ),
                (
                    Some("long"),
                    "/tools/2/inputSchema",
                    "inputSchema: schema applies more than 64 subschemas in a row at one place of a value (through $ref, allOf, anyOf, oneOf, not, if, then, else, dependentSchemas), more than toolschema validates: validating recurses once for each, at every level of the value"
                ),
            ]
        );
    }
}
