//! SEC-005.

use crate::lint::context::{EarlierTools, NamedTool, Report};
use crate::lint::registry::declare_rule;
use crate::text::visible;

declare_rule! {
    /// A tool name that looks like another tool's name.
    ///
    /// ## What it flags
    /// A tool whose name is not an earlier tool's name but folds to the same one under Unicode
    /// confusable folding (the skeletons of Unicode Technical Standard #39, ignoring case):
    /// Cyrillic `а` for Latin `a`, `rn` for `m`, `1` or `I` for `l`, `0` for `O`,
    /// `Read_File` for `read_file`. The finding is on the later tool and names the line of the
    /// first.
    ///
    /// ## Why it matters
    /// A person approving tools, and often the model choosing one, cannot tell the two names
    /// apart. A look-alike tool catches the calls meant for the real one.
    ///
    /// False positives: low. Two tools whose names differ only in case or in `1`/`l` are confusing
    /// even when no one meant harm.
    ///
    /// ## Example
    /// ```json
    /// {"tools": [{"name": "read_file", "inputSchema": {"type": "object"}},
    ///            {"name": "read_fiIe", "inputSchema": {"type": "object"}}]}
    /// ```
    ///
    /// ## Fix
    /// Rename one of them so the names differ visibly, or remove the look-alike. There is no
    /// automatic fix.
    pub static CONFUSABLE_NAME = {
        code: "SEC-005",
        name: "confusable-name",
        severity: Critical,
        fixes: [],
        check: Name(check),
    };
}

fn check(tool: &NamedTool<'_>, earlier: &EarlierTools, report: &mut Report<'_>) {
    let Some((first_name, first)) = earlier.confusable(tool.name) else {
        return;
    };
    report.add_at(
        format!("{}/name", tool.pointer),
        tool.name_offset,
        format!(
            "tool name '{}' looks like '{}', the tool at line {} ({}): a look-alike catches calls meant for the other",
            visible(tool.name),
            visible(first_name),
            first.position.line,
            first.pointer
        ),
    );
}
