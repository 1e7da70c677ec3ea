//! SCH-006.

use crate::lint::context::{Report, ToolContext};
use crate::lint::registry::declare_rule;

declare_rule! {
    /// A schema's `$schema` names a dialect that is not draft-07 or draft 2020-12.
    ///
    /// ## What it flags
    /// An `inputSchema` or `outputSchema` whose root `$schema` is not the draft-07 or the draft
    /// 2020-12 meta-schema URI (`http` or `https`, with or without a trailing `#`), or is not a
    /// string.
    ///
    /// ## Why it matters
    /// MCP schemas default to draft 2020-12 and most servers send draft-07. A client that meets
    /// another dialect may refuse the schema, or read keywords such as `exclusiveMinimum` or
    /// `items` with a different meaning.
    ///
    /// ## Example
    /// ```json
    /// {"$schema": "http://json-schema.org/draft-04/schema#", "type": "object"}
    /// ```
    ///
    /// ## Fix
    /// Write the schema in draft 2020-12 (`https://json-schema.org/draft/2020-12/schema`) or
    /// draft-07 (`http://json-schema.org/draft-07/schema#`), or drop `$schema` for 2020-12.
    /// There is no automatic fix: keywords may need rewriting too.
    pub static UNSUPPORTED_DIALECT = {
        code: "SCH-006",
        name: "unsupported-dialect",
        severity: Critical,
        fixes: [],
        check: Tool(check),
    };
}

fn check(cx: &ToolContext<'_>, report: &mut Report<'_>) {
    for doc in cx.standard_schemas() {
        let Err(error) = &doc.dialect else { continue };
        let span = cx
            .member_span(doc.value, doc.span, "$schema")
            .unwrap_or(doc.span);
        report.add(
            format!("{}/$schema", doc.pointer),
            span,
            format!("{}: {error}", doc.field),
        );
    }
}
