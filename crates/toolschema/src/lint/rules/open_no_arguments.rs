//! SCH-014.

use crate::json::Members;
use crate::lint::context::{leaves_ref_plain, Report, ToolContext};
use crate::schema::vocabulary::{self, Role};
use crate::lint::registry::declare_rule;
use crate::lint::source_edit::SourceEdits;
use crate::lint::Applicability;
use serde_json::Value;

declare_rule! {
    /// An `inputSchema` that is only `{"type": "object"}`: no arguments, and any accepted.
    ///
    /// ## What it flags
    /// A tool whose whole `inputSchema` says `"type": "object"` and nothing about members: no
    /// `properties`, `patternProperties`, `additionalProperties`, `unevaluatedProperties`,
    /// `propertyNames`, `required` or member count, and no `$ref`, branch or condition.
    /// Annotations (`$schema`, `$id`, `description`, `title`, `default`, `examples`, `$comment`,
    /// definitions, `x-*`) may stand beside it. Not flagged: `"properties": {}` (SCH-002
    /// flags that), an explicit `"additionalProperties": true`, and objects below the root.
    ///
    /// ## Why it matters
    /// The tool declares no argument, yet accepts any: a model may invent arguments, and no
    /// validator says a word. MCP recommends `{"type": "object", "additionalProperties": false}`
    /// for a tool without arguments.
    ///
    /// ## Example
    /// ```json
    /// {"name": "get_time", "inputSchema": {"type": "object"}}
    /// ```
    ///
    /// ## Fix
    /// The unsafe fix (`--unsafe-fixes`) adds `"additionalProperties": false`. It is unsafe
    /// because a server may read arguments it never declared: the closed schema refuses calls
    /// that send them. Declare those arguments instead, if there are any.
    pub static OPEN_NO_ARGUMENTS = {
        code: "SCH-014",
        name: "open-no-arguments",
        severity: Warning,
        fixes: [Unsafe],
        check: Tool(check),
    };
}

/// Whether the root keyword `key` says nothing about the members of the value: `type`, a name
/// or home of definitions, an annotation (but `$ref`, which brings another schema's), or an
/// extension.
fn silent(key: &str) -> bool {
    key == "type"
        || vocabulary::role(key).is_some_and(|r| matches!(r, Role::Identifier | Role::Definitions))
        || (key != "$ref" && leaves_ref_plain(key))
        || key.starts_with("x-")
}

fn check(cx: &ToolContext<'_>, report: &mut Report<'_>) {
    let Some(doc) = cx.standard_input() else {
        return;
    };
    if doc.translated {
        return; // a lightweight shape: SCH-013
    }
    let Some(root) = doc.nodes.first() else {
        return;
    };
    let Some(map) = root.value.as_object() else {
        return;
    };
    if !map.keys().all(|key| silent(key)) || map.member("type") != Some(&Value::String("object".into())) {
        return;
    }
    let edits = SourceEdits::new(cx.text, cx.spans());
    let fix = doc.fix(
        report,
        Applicability::Unsafe,
        "add \"additionalProperties\": false",
        || {
            Some(edits.insert_member(
                root.value,
                root.span,
                None,
                "additionalProperties",
                &Value::Bool(false),
            ))
        },
    );
    report.add_with_fix(
        doc.pointer.clone(),
        root.span,
        "inputSchema declares no arguments and accepts any: a model may invent arguments no \
         validator refuses (a tool without arguments takes {\"type\": \"object\", \
         \"additionalProperties\": false})"
            .into(),
        fix,
    );
}
