//! COMPAT-007.

use crate::adapt::Topic;
use crate::json::pointer::resolve;
use crate::lint::compat;
use crate::lint::context::{Report, ToolContext};
use crate::lint::registry::declare_rule;
use crate::lint::source_edit::SourceEdits;
use crate::lint::Applicability;
use serde_json::{Map, Value};

declare_rule! {
    /// An array without `items` or an object without `properties`, which OpenAI rejects.
    ///
    /// ## What it flags
    /// With `--target openai`: an array schema without `items` and an object schema without
    /// `properties` (OpenAI answers "array schema missing items" and "object schema missing
    /// properties" and refuses the request).
    ///
    /// ## Why it matters
    /// One such schema in one tool makes every request that offers the tool fail, whatever the
    /// model was asked.
    ///
    /// ## Example
    /// ```json
    /// {"name": "tag", "inputSchema": {"type": "object", "properties": {"tags": {"type": "array"}, "meta": {"type": "object"}}}}
    /// ```
    ///
    /// ## Fix
    /// Adding `"properties": {}` to an object is a safe fix: it changes nothing the object
    /// accepts. There is no fix for an array: `"items": {}` would satisfy OpenAI's check but say
    /// nothing about the elements, and strict mode still refuses it; describe the elements
    /// (`"items": {"type": "string"}`), which only the author can.
    pub static PROVIDER_REQUIRES = {
        code: "COMPAT-007",
        name: "provider-requires",
        severity: Warning,
        fixes: [Safe],
        check: Tool(check),
    };
}

fn check(cx: &ToolContext<'_>, report: &mut Report<'_>) {
    let edits = SourceEdits::new(cx.text, cx.spans());
    for group in compat::losses(cx, Topic::Missing) {
        let (pointer, span) = compat::place(cx, &group);
        let mut message = group.message();
        if group.keyword.as_deref() == Some("items") {
            message.push_str(
                "; no fix: \"items\": {} passes OpenAI's check but says nothing about the \
                 elements, and only the author knows their type",
            );
        }
        let standard = cx.standard_input().is_some();
        let fix = if standard && group.keyword.as_deref() == Some("properties") {
            // The object is where the finding points (the file has no `properties` there).
            resolve(&cx.tool.value, &group.pointer)
                .filter(|v| v.is_object() && v.get("properties").is_none())
                .and_then(|object| {
                    report.fix(Applicability::Safe, "add \"properties\": {}", || {
                        Some(edits.insert_member(
                            object,
                            span,
                            None,
                            "properties",
                            &Value::Object(Map::new()),
                        ))
                    })
                })
        } else {
            None
        };
        report.add_with_fix(pointer, span, message, fix);
    }
}
