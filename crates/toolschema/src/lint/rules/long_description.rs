//! SEC-006.

use crate::lint::context::{Report, ToolContext};
use crate::lint::registry::declare_rule;
use crate::lint::texts::{prose, TextKind};

declare_rule! {
    /// A description far longer than a description needs.
    ///
    /// ## What it flags
    /// A tool description over 2,000 characters, or a title or a description inside a schema
    /// over 500 characters. The tools of the reference MCP servers (everything, filesystem, time)
    /// stay under 500 and 200.
    ///
    /// ## Why it matters
    /// A long description hides what it says: a reviewer skims it, the model reads every word.
    /// Poisoning payloads ride in the part nobody reads, and each extra word costs context on
    /// every request.
    ///
    /// False positives: moderate. Some tools document a query language or a long list of options
    /// in their description; move that to a resource, or ignore the rule for them.
    ///
    /// ## Example
    /// ```json
    /// {"name": "add", "description": "Adds two numbers. ... (2,400 more characters) ...", "inputSchema": {"type": "object"}}
    /// ```
    ///
    /// ## Fix
    /// Say what the tool does, when to use it and what it returns, briefly. There is no automatic
    /// fix.
    pub static LONG_DESCRIPTION = {
        code: "SEC-006",
        name: "long-description",
        severity: Warning,
        fixes: [],
        check: Tool(check),
    };
}

/// Longest tool description not flagged, in characters.
const MAX_TOOL_DESCRIPTION: usize = 2_000;

/// Longest title or schema description not flagged, in characters.
const MAX_OTHER: usize = 500;

fn check(cx: &ToolContext<'_>, report: &mut Report<'_>) {
    for text in prose(cx) {
        let limit = if text.kind == TextKind::Description {
            MAX_TOOL_DESCRIPTION
        } else {
            MAX_OTHER
        };
        let length = text.text.chars().count();
        if length > limit {
            report.add_at(
                cx.strings().pointer(text),
                text.offset,
                format!(
                    "{} has {length} characters (more than {limit}): a reviewer skims it, the model reads every word",
                    text.kind.label()
                ),
            );
        }
    }
}
