//! TOOL-002.

use crate::lint::context::{Report, ToolContext};
use crate::lint::registry::declare_rule;
use crate::tool::check_name;

declare_rule! {
    /// A tool name that MCP allows but some clients reject.
    ///
    /// ## What it flags
    /// A valid MCP name that is longer than 64 characters or contains a `.`.
    ///
    /// ## Why it matters
    /// OpenAI function names must match `^[a-zA-Z0-9_-]{1,64}$` and Anthropic's
    /// `^[a-zA-Z0-9_-]{1,128}$` (64 in earlier versions of its documentation). A client that
    /// passes MCP tools to those APIs has to rename the tool or drop it, and the model then calls
    /// it by a name the server does not know.
    ///
    /// ## Example
    /// ```json
    /// {"name": "files.read", "inputSchema": {"type": "object"}}
    /// ```
    ///
    /// ## Fix
    /// Use `_` or `-` instead of `.`, and at most 64 characters: `files_read`. There is no
    /// automatic fix: callers use the name.
    pub static NAME_CLIENTS_REJECT = {
        code: "TOOL-002",
        name: "name-clients-reject",
        severity: Warning,
        fixes: [],
        check: Tool(check),
    };
}

fn check(cx: &ToolContext<'_>, report: &mut Report<'_>) {
    let Some(name) = cx.name else { return };
    if check_name(name).is_err() {
        return; // TOOL-001
    }
    let length = name.chars().count();
    let mut problems = Vec::new();
    if name.contains('.') {
        problems.push("contains '.'".to_string());
    }
    if length > 64 {
        problems.push(format!("has {length} characters (more than 64)"));
    }
    if problems.is_empty() {
        return;
    }
    let span = cx.field_span("name").unwrap_or(0);
    report.add(
        format!("{}/name", cx.tool.pointer),
        span,
        format!(
            "name {}: OpenAI function names must match ^[a-zA-Z0-9_-]{{1,64}}$ (Anthropic's: no '.', at most 128)",
            problems.join(" and ")
        ),
    );
}
