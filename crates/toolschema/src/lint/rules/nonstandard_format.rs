//! SCH-011.

use crate::json::Members;
use crate::lint::context::{Report, ToolContext};
use crate::lint::registry::declare_rule;
use crate::lint::source_edit::SourceEdits;
use crate::lint::Applicability;
use crate::schema::STANDARD_FORMATS;
use serde_json::Value;

declare_rule! {
    /// A `format` that JSON Schema does not define.
    ///
    /// ## What it flags
    /// A string `format` in `inputSchema` or `outputSchema` that is not one of the formats of
    /// JSON Schema draft 2020-12 (`date-time`, `date`, `time`, `duration`, `email`,
    /// `idn-email`, `hostname`, `idn-hostname`, `ipv4`, `ipv6`, `uri`, `uri-reference`, `iri`,
    /// `iri-reference`, `uuid`, `uri-template`, `json-pointer`, `relative-json-pointer`,
    /// `regex`): `uint32`, `int64`, `float`, `path` and the like.
    ///
    /// ## Why it matters
    /// Clients either ignore an unknown format or refuse it: Ajv-based clients (the TypeScript
    /// SDK) warn `unknown format "uint32" ignored` on every schema compile, or throw in strict
    /// mode. The constraint it seems to promise is never checked.
    ///
    /// ## Example
    /// ```json
    /// {"type": "integer", "format": "uint32"}
    /// ```
    ///
    /// ## Fix
    /// The safe fix removes the `format` member. Say what it meant with keywords that are
    /// checked: `"minimum": 0, "maximum": 4294967295` for `uint32`, `pattern` for a path.
    pub static NONSTANDARD_FORMAT = {
        code: "SCH-011",
        name: "nonstandard-format",
        severity: Warning,
        fixes: [Safe],
        check: Tool(check),
    };
}

fn check(cx: &ToolContext<'_>, report: &mut Report<'_>) {
    let edits = SourceEdits::new(cx.text, cx.spans());
    for doc in cx.standard_schemas() {
        for node in &doc.nodes {
            let Some(format) = node.value.member("format").and_then(Value::as_str) else {
                continue;
            };
            if STANDARD_FORMATS.contains(&format) {
                continue;
            }
            let Some(span) = cx.member_span(node.value, node.span, "format") else {
                continue;
            };
            let title = format!("remove \"format\": \"{format}\"");
            let fix = doc.fix(report, Applicability::Safe, title, || {
                edits.remove_member(node.value, node.span, "format")
            });
            report.add_with_fix(
                format!("{}{}/format", doc.pointer, node.local),
                span,
                format!(
                    "format '{format}' is not a JSON Schema format: clients ignore it or warn \
                     (Ajv: unknown format), and nothing checks it"
                ),
                fix,
            );
        }
    }
}
