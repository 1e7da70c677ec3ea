//! SCH-010.

use crate::lint::context::{Report, ToolContext};
use crate::lint::registry::declare_rule;
use crate::schema::admits_type;

declare_rule! {
    /// An array schema without `items`.
    ///
    /// ## What it flags
    /// Any schema in `inputSchema` whose type admits arrays (`"type": "array"`, or a type list
    /// with `"array"`) and that has no `items`.
    ///
    /// ## Why it matters
    /// OpenAI rejects function parameters with an array that has no `items`, so the tool cannot
    /// be offered there at all; and every model has to guess what the elements are.
    ///
    /// ## Example
    /// ```json
    /// {"type": "object", "properties": {"tags": {"type": "array"}}}
    /// ```
    ///
    /// ## Fix
    /// Describe the elements: `"items": {"type": "string"}`. There is no automatic fix: only the
    /// author knows the element type.
    pub static ARRAY_WITHOUT_ITEMS = {
        code: "SCH-010",
        name: "array-without-items",
        severity: Warning,
        fixes: [],
        check: Tool(check),
    };
}

fn check(cx: &ToolContext<'_>, report: &mut Report<'_>) {
    let Some(doc) = cx.standard_input() else {
        return;
    };
    for node in &doc.nodes {
        let Some(map) = node.object() else { continue };
        if admits_type(map, "array") == Some(true) && !map.contains_key("items") && !node.inert {
            report.add(
                doc.pointer_of(node),
                node.span,
                "array schema has no items: OpenAI rejects it, and the elements can be anything"
                    .into(),
            );
        }
    }
}
