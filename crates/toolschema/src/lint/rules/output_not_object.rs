//! OUT-001.

use crate::json::Members;
use crate::lint::context::{Report, ToolContext};
use crate::lint::registry::declare_rule;

declare_rule! {
    /// An `outputSchema` whose root is not an object schema.
    ///
    /// ## What it flags
    /// An `outputSchema` that is not a JSON object, or whose root does not say
    /// `"type": "object"` (no `type`, another type, or a type list).
    ///
    /// ## Why it matters
    /// MCP's `structuredContent` is always a JSON object, and the specification requires
    /// `outputSchema` to describe one. Clients validate results against it and reject the tool,
    /// or every result, when it does not.
    ///
    /// ## Example
    /// ```json
    /// {"outputSchema": {"type": "array", "items": {"type": "string"}}}
    /// ```
    ///
    /// ## Fix
    /// Wrap the result in an object: `{"type": "object", "properties": {"items": {"type":
    /// "array", "items": {"type": "string"}}}, "required": ["items"]}`. There is no automatic
    /// fix: the server's results change too.
    pub static OUTPUT_NOT_OBJECT = {
        code: "OUT-001",
        name: "output-not-object",
        severity: Critical,
        fixes: [],
        check: Tool(check),
    };
}

fn check(cx: &ToolContext<'_>, report: &mut Report<'_>) {
    let Some(fields) = cx.fields else { return };
    let Some(output) = fields.member("outputSchema").filter(|v| !v.is_null()) else {
        return;
    };
    let span = cx.field_span("outputSchema").unwrap_or(0);
    let pointer = format!("{}/outputSchema", cx.tool.pointer);
    if !output.is_object() {
        report.add(
            pointer,
            span,
            "outputSchema must be a JSON object schema".into(),
        );
        return;
    }
    const REQUIREMENT: &str =
        "structured content is an object, so MCP requires \"type\": \"object\"";
    if let Some((pointer, span, message)) = cx.root_type_finding(
        (output, span, &pointer),
        "outputSchema",
        REQUIREMENT,
        REQUIREMENT,
    ) {
        report.add(pointer, span, message);
    }
}
