//! DESC-001.

use crate::json::Members;
use crate::lint::context::{Report, ToolContext};
use crate::lint::registry::declare_rule;
use serde_json::Value;

declare_rule! {
    /// A tool without a description.
    ///
    /// ## What it flags
    /// A tool with no `description`, a `null` one, or one that is empty or only whitespace.
    ///
    /// ## Why it matters
    /// Models choose a tool by its description. Without one the model has only the name to go
    /// on: it calls the tool when it should not, or never.
    ///
    /// ## Example
    /// ```json
    /// {"name": "sync", "inputSchema": {"type": "object", "additionalProperties": false}}
    /// ```
    ///
    /// ## Fix
    /// Say what the tool does, when to use it and what it returns. There is no automatic fix.
    pub static MISSING_DESCRIPTION = {
        code: "DESC-001",
        name: "missing-description",
        severity: Info,
        fixes: [],
        check: Tool(check),
    };
}

fn check(cx: &ToolContext<'_>, report: &mut Report<'_>) {
    let Some(fields) = cx.fields else { return };
    let (pointer, span) = match fields.member("description") {
        None | Some(Value::Null) => (cx.tool.pointer.clone(), cx.field_span("name").unwrap_or(0)),
        Some(Value::String(text)) if text.trim().is_empty() => (
            format!("{}/description", cx.tool.pointer),
            cx.field_span("description").unwrap_or(0),
        ),
        Some(_) => return,
    };
    report.add(
        pointer,
        span,
        "tool has no description: models choose tools by their description".into(),
    );
}
