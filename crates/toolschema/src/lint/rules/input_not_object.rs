//! SCH-005.

use crate::json::Members;
use crate::lint::context::{Report, ToolContext};
use crate::lint::registry::declare_rule;

declare_rule! {
    /// `inputSchema` is missing, or its root is not `"type": "object"`.
    ///
    /// ## What it flags
    /// A tool without an `inputSchema`, with one that is not a JSON object, or whose root schema
    /// does not say `"type": "object"` (no `type`, another type, or a type list).
    ///
    /// ## Why it matters
    /// MCP requires `inputSchema` to be an object schema, since arguments are always a JSON
    /// object. Clients reject the tool, or the whole `tools/list`, when it is not.
    ///
    /// ## Example
    /// ```json
    /// {"name": "ping", "inputSchema": {"properties": {"host": {"type": "string"}}}}
    /// ```
    ///
    /// ## Fix
    /// Write `"type": "object"` at the root. A tool without arguments takes
    /// `{"type": "object", "additionalProperties": false}`. There is no automatic fix.
    pub static INPUT_NOT_OBJECT = {
        code: "SCH-005",
        name: "input-not-object",
        severity: Critical,
        fixes: [],
        check: Tool(check),
    };
}

fn check(cx: &ToolContext<'_>, report: &mut Report<'_>) {
    let Some(fields) = cx.fields else { return };
    let tool_pointer = &cx.tool.pointer;
    let Some(span) = cx.field_span("inputSchema") else {
        let anchor = cx.field_span("name").unwrap_or(0);
        report.add(
            tool_pointer.clone(),
            anchor,
            "tool has no inputSchema: MCP requires one (a tool without arguments takes \
             {\"type\": \"object\", \"additionalProperties\": false})"
                .into(),
        );
        return;
    };
    let pointer = || format!("{tool_pointer}/inputSchema");
    let Some(schema) = fields.member("inputSchema").filter(|s| s.is_object()) else {
        report.add(
            pointer(),
            span,
            "inputSchema must be a JSON object schema".into(),
        );
        return;
    };
    if cx.standard_input().is_none() {
        return; // a lightweight shape: SCH-013
    }
    let schema_pointer = pointer();
    let found = cx.root_type_finding(
        (schema, span, &schema_pointer),
        "inputSchema",
        "MCP requires \"type\": \"object\" at the root",
        "MCP requires \"type\": \"object\"",
    );
    if let Some((pointer, span, message)) = found {
        report.add(pointer, span, message);
    }
}
