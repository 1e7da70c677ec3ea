//! DESC-003.

use crate::json::Members;
use crate::lint::context::{Report, ToolContext};
use crate::lint::registry::declare_rule;
use serde_json::Value;

declare_rule! {
    /// A property without a description.
    ///
    /// ## What it flags
    /// A property (a member of `properties`, at any depth of `inputSchema`) with no
    /// `description`, neither its own nor on the schema its `$ref` points at. `true` and
    /// `false` properties are left to SCH-003.
    ///
    /// ## Why it matters
    /// The model fills in arguments from the property name and its description. A name like
    /// `path` does not say relative to what, or `limit` of what.
    ///
    /// ## On real servers
    /// 45 findings on the six real servers measured: 30 right (`path`, `target`, `files`,
    /// `pattern`: the name leaves the model guessing), 15 wrong (names that say it all, arrays
    /// whose items are described). A pedantic rule: it runs when selected.
    ///
    /// ## Example
    /// ```json
    /// {"type": "object", "properties": {"path": {"type": "string"}}}
    /// ```
    ///
    /// ## Fix
    /// Describe what the argument is and what values make sense: `"description": "File to
    /// read, relative to the workspace root"`. There is no automatic fix.
    pub static PROPERTY_DESCRIPTION = {
        code: "DESC-003",
        name: "property-description",
        severity: Info,
        fixes: [],
        check: Tool(check),
        set: Pedantic,
    };
}

fn has_description(schema: &Value) -> bool {
    schema
        .member("description")
        .and_then(Value::as_str)
        .is_some_and(|d| !d.trim().is_empty())
}

fn check(cx: &ToolContext<'_>, report: &mut Report<'_>) {
    let Some(doc) = cx.standard_input() else {
        return;
    };
    for (node, name) in doc.properties() {
        if !node.value.is_object() || node.inert || has_description(node.value) {
            continue;
        }
        if doc.follow_refs(node.value).is_some_and(has_description) {
            continue;
        }
        report.add(
            doc.pointer_of(node),
            node.span,
            [
                "property '",
                name,
                "' has no description: the model reads it to know what to send",
            ]
            .concat(),
        );
    }
}
