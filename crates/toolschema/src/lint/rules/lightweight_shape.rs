//! SCH-013.

use crate::lint::context::{Report, ToolContext};
use crate::lint::registry::declare_rule;
use crate::lint::source_edit::SourceEdits;
use crate::lint::Applicability;
use crate::schema::{normalize, SchemaShape};

declare_rule! {
    /// `inputSchema` is written in a lightweight shape that clients cannot read.
    ///
    /// ## What it flags
    /// An `inputSchema` in one of the shapes toolschema translates: the direct map of argument
    /// name to property (`{"q": {"type": "string", "required": true}}`), or `properties` using
    /// lightweight features (`type: "float"`, `type: "enum"`, `isArray`, per-property
    /// `required: true`). The other rules read such a schema through its translation, the
    /// schema that goes on the wire, and point at the text each finding comes from.
    ///
    /// ## Why it matters
    /// Only standard JSON Schema goes on the wire. A client reads the direct map as a schema with
    /// unknown keywords that accepts anything, and `type: "float"` as an invalid schema.
    ///
    /// ## Example
    /// ```json
    /// {"q": {"type": "string", "required": true}, "ratio": {"type": "float"}}
    /// ```
    ///
    /// ## Fix
    /// The safe fix replaces the schema with its standard JSON Schema translation, the one
    /// toolschema validates against: `{"type": "object", "properties": {"q": {"type":
    /// "string"}, "ratio": {"type": "number"}}, "required": ["q"], "additionalProperties":
    /// false}`.
    pub static LIGHTWEIGHT_SHAPE = {
        code: "SCH-013",
        name: "lightweight-shape",
        severity: Info,
        fixes: [Safe],
        check: Tool(check),
    };
}

fn check(cx: &ToolContext<'_>, report: &mut Report<'_>) {
    let Some(doc) = cx.input.as_ref() else { return };
    let shape = match doc.shape {
        SchemaShape::Standard => return,
        SchemaShape::DirectMap => "the direct map of argument to property",
        SchemaShape::JsonSchemaLike => "JSON-Schema-like properties with lightweight fields",
    };
    match normalize(doc.written) {
        Ok(normalized) => {
            let edits = SourceEdits::new(cx.text, cx.spans());
            let fix = report.fix(
                Applicability::Safe,
                "replace with standard JSON Schema",
                || Some(edits.replace_value(0, doc.span, &normalized.schema)),
            );
            report.add_with_fix(
                doc.pointer.clone(),
                doc.span,
                format!(
                    "inputSchema is written as {shape}: clients read only standard JSON Schema"
                ),
                fix,
            );
        }
        Err(error) => {
            report.add(
                doc.pointer.clone(),
                doc.span,
                format!(
                    "inputSchema is written as {shape}, and cannot be translated to standard \
                     JSON Schema: {error}"
                ),
            );
        }
    }
}
