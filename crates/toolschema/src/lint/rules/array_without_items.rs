//! SCH-010.

use crate::lint::context::{Report, ToolContext};
use crate::lint::registry::declare_rule;
use crate::schema::admits_type;

declare_rule! {
    /// An array schema without `items`.
    ///
    /// ## What it flags
    /// Any schema in `inputSchema` whose type admits arrays (`"type": "array"`, or a type list
    /// with `"array"`) and that has no `items`. Where the elements are described another way
    /// (`prefixItems`, or `items` under `allOf` or a `$ref`), the message says so: only OpenAI's
    /// refusal stands.
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

/// Keywords beside which the elements may be described after all, though not by `items`.
const DESCRIBE_ELEMENTS: [&str; 8] = [
    "prefixItems",
    "allOf",
    "anyOf",
    "oneOf",
    "$ref",
    "$dynamicRef",
    "if",
    "unevaluatedItems",
];

fn check(cx: &ToolContext<'_>, report: &mut Report<'_>) {
    let Some(doc) = cx.standard_input() else {
        return;
    };
    for node in &doc.nodes {
        let Some(map) = node.object() else { continue };
        if admits_type(map, "array") == Some(true) && !map.contains_key("items") && !node.inert {
            // Elements described by other keywords are not "anything"; OpenAI still wants
            // `items` on the array itself.
            let elsewhere: Vec<&str> = DESCRIBE_ELEMENTS
                .iter()
                .copied()
                .filter(|k| map.contains_key(*k))
                .collect();
            let message = if elsewhere.is_empty() {
                "array schema has no items: OpenAI rejects it, and the elements can be anything"
                    .to_string()
            } else {
                format!(
                    "array schema has no items of its own: OpenAI rejects it (it does not read the elements from {})",
                    elsewhere.join(", ")
                )
            };
            report.add(doc.pointer_of(node), node.span, message);
        }
    }
}
