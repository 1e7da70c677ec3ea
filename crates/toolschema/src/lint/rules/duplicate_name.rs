//! TOOL-003.

use crate::lint::context::{EarlierTools, NamedTool, Report};
use crate::lint::registry::declare_rule;

declare_rule! {
    /// Two tools with the same name.
    ///
    /// ## What it flags
    /// A tool whose `name` an earlier tool of the same file already has. The finding is on the
    /// later tool and names the line of the first.
    ///
    /// ## Why it matters
    /// A call names a tool only by its name: one of the two can never be called, and clients may
    /// keep either one, or refuse the list.
    ///
    /// ## Example
    /// ```json
    /// {"tools": [{"name": "search", "inputSchema": {"type": "object"}},
    ///            {"name": "search", "inputSchema": {"type": "object"}}]}
    /// ```
    ///
    /// ## Fix
    /// Rename one of them, or remove the duplicate. There is no automatic fix.
    pub static DUPLICATE_NAME = {
        code: "TOOL-003",
        name: "duplicate-name",
        severity: Critical,
        fixes: [],
        check: Name(check),
    };
}

fn check(tool: &NamedTool<'_>, earlier: &EarlierTools, report: &mut Report<'_>) {
    let Some(first) = earlier.get(tool.name) else {
        return;
    };
    report.add_at(
        format!("{}/name", tool.pointer),
        tool.name_offset,
        format!(
            "tool name '{}' is already used by the tool at line {} ({})",
            tool.name, first.position.line, first.pointer
        ),
    );
}
