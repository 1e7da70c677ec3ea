//! TOOL-001.

use crate::json::Members;
use crate::lint::context::{Report, ToolContext};
use crate::lint::registry::declare_rule;
use crate::tool::check_name;
use serde_json::Value;

declare_rule! {
    /// A tool name that breaks the MCP rules.
    ///
    /// ## What it flags
    /// A tool with no `name`, a `name` that is not a string, an empty one, one longer than 128
    /// characters, or one with characters outside `A-Z a-z 0-9 _ - .`.
    ///
    /// ## Why it matters
    /// The name is how a model calls the tool. Clients refuse names outside the MCP rules, often
    /// together with the rest of the `tools/list`.
    ///
    /// ## Example
    /// ```json
    /// {"name": "search files", "inputSchema": {"type": "object"}}
    /// ```
    ///
    /// ## Fix
    /// Rename the tool: `search_files`. There is no automatic fix: callers use the name.
    pub static INVALID_NAME = {
        code: "TOOL-001",
        name: "invalid-name",
        severity: Critical,
        fixes: [],
        check: Tool(check),
    };
}

fn check(cx: &ToolContext<'_>, report: &mut Report<'_>) {
    let Some(fields) = cx.fields else { return };
    let message = match fields.member("name") {
        None | Some(Value::Null) => {
            report.add(cx.tool.pointer.clone(), 0, "tool has no name".into());
            return;
        }
        Some(Value::String(name)) => match check_name(name) {
            Ok(()) => return,
            Err(error) => error.to_string(),
        },
        Some(_) => "name must be a string".to_string(),
    };
    let span = cx.field_span("name").unwrap_or(0);
    report.add(format!("{}/name", cx.tool.pointer), span, message);
}
