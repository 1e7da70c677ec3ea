//! TOOL-004.

use crate::catalog::error_field;
use crate::lint::context::{Report, ToolContext};
use crate::lint::registry::declare_rule;
use crate::tool::{check_fields, Tool, ToolError, KNOWN_FIELDS};
use serde_json::{Map, Value};

declare_rule! {
    /// A tool that is not a JSON object, or a tool field of the wrong type or value.
    ///
    /// ## What it flags
    /// A tool that is not an object; and, in one that is, a `title` or `description` that is
    /// not a string, `annotations` hints that are not booleans, an `execution.taskSupport`
    /// other than `forbidden`, `optional` or `required`, `icons` without a string `src`, a
    /// `_meta` that is not an object, and toolschema's own `namespace`, `version` (semver) and
    /// `tags` (strings) extensions when they are malformed. Names, `inputSchema` and
    /// `outputSchema` have rules of their own.
    ///
    /// ## Why it matters
    /// Clients parse tools with the MCP schema: a malformed field makes them drop the tool, or
    /// fail on the whole list. `toolschema validate` refuses the catalog too.
    ///
    /// ## Example
    /// ```json
    /// {"name": "search", "inputSchema": {"type": "object"}, "annotations": {"readOnlyHint": "yes"}}
    /// ```
    ///
    /// ## Fix
    /// Give the field the type MCP defines. There is no automatic fix.
    pub static INVALID_FIELD = {
        code: "TOOL-004",
        name: "invalid-field",
        severity: Critical,
        fixes: [],
        check: Tool(check),
    };
}

/// Known fields with rules of their own, left out of the probe (MCP does not constrain unknown
/// fields either).
const OWN_RULES: [&str; 3] = ["name", "inputSchema", "outputSchema"];

/// The fields checked here: every field [`Tool`] knows but those with rules of their own.
fn checked() -> impl Iterator<Item = &'static str> {
    KNOWN_FIELDS
        .iter()
        .copied()
        .filter(|field| !OWN_RULES.contains(field))
}

fn check(cx: &ToolContext<'_>, report: &mut Report<'_>) {
    let Some(fields) = cx.fields else {
        report.add(
            cx.tool.pointer.clone(),
            0,
            "a tool must be a JSON object".into(),
        );
        return;
    };
    // The usual case, a tool without a problem, is checked without copying anything.
    if check_fields(fields, false).is_ok() {
        return;
    }
    let mut skipped: Vec<&str> = Vec::new();
    // Tool::from_map reports the first problem; leave each reported field out and try again.
    for _ in 0..checked().count() {
        let mut probe = Map::new();
        probe.insert("name".into(), Value::String("probe".into()));
        probe.insert("inputSchema".into(), Value::Object(Map::new()));
        for (key, value) in fields {
            let key = key.as_str();
            if checked().any(|c| c == key) && !skipped.contains(&key) {
                let value = if key == "_meta" && value.is_object() {
                    Value::Object(Map::new()) // only its type is checked; skip the copy
                } else {
                    value.clone()
                };
                probe.insert(key.into(), value);
            }
        }
        let error = match Tool::from_map(probe) {
            Ok(_) => return,
            Err(ToolError::Name(crate::tool::NameError::Required(_))) => return,
            Err(error) => error,
        };
        let field = error_field(&error);
        let top = field
            .trim_start_matches('/')
            .split('/')
            .next()
            .unwrap_or("");
        let Some(top) = checked().find(|c| *c == top) else {
            return;
        };
        let offset = cx.tool.offset_of(&field).unwrap_or(0);
        report.add_at(
            format!("{}{field}", cx.tool.pointer),
            offset,
            error.to_string(),
        );
        skipped.push(top);
    }
}
