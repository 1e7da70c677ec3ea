//! SCH-004.

use crate::json::Members;
use crate::lint::context::{Report, SchemaDoc, ToolContext};
use crate::lint::registry::declare_rule;
use crate::lint::rules::untyped_property::declared_elsewhere_in_allof;
use crate::lint::schema_walk::admits_type;
use serde_json::Value;

declare_rule! {
    /// A property admits strings without `maxLength`, or arrays without `maxItems`.
    ///
    /// ## What it flags
    /// A property (a member of `properties`, at any depth of `inputSchema`) whose type admits
    /// strings (`"type": "string"`, or a type list such as `["string", "null"]`) and that has no
    /// `maxLength`, `enum` or `const`; or whose type admits arrays and that has no `maxItems`.
    /// A `$ref` is followed, and `anyOf`/`oneOf` branches are read when the property has no
    /// `type` of its own.
    ///
    /// ## Why it matters
    /// Unbounded input reaches the server: a model that loops, or a prompt injection, can send a
    /// megabyte where a name was expected.
    ///
    /// ## Example
    /// ```json
    /// {"type": "object", "properties": {"query": {"type": ["string", "null"]}}}
    /// ```
    ///
    /// ## Fix
    /// Add the bound the server can handle: `"maxLength": 200`, `"maxItems": 50`. There is no
    /// automatic fix: only the author knows the limit.
    pub static UNBOUNDED_SIZE = {
        code: "SCH-004",
        name: "unbounded-size",
        severity: Warning,
        fixes: [],
        check: Tool(check),
    };
}

/// What a schema admits without a bound.
#[derive(Default)]
struct Unbounded {
    strings: bool,
    arrays: bool,
}

fn unbounded(doc: &SchemaDoc<'_>, schema: &Value, depth: usize) -> Unbounded {
    let mut found = Unbounded::default();
    let Some(schema) = doc.follow_refs(schema) else {
        return found;
    };
    let Some(map) = schema.as_object() else {
        return found;
    };
    if map.contains_key("enum") || map.contains_key("const") {
        return found;
    }
    if map.contains_key("type") {
        found.strings = admits_type(map, "string") == Some(true) && !map.contains_key("maxLength");
        found.arrays = admits_type(map, "array") == Some(true) && !map.contains_key("maxItems");
        return found;
    }
    if depth < 8 {
        for key in ["anyOf", "oneOf"] {
            for branch in map
                .member(key)
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                let inner = unbounded(doc, branch, depth + 1);
                found.strings |= inner.strings;
                found.arrays |= inner.arrays;
            }
        }
    }
    found
}

fn check(cx: &ToolContext<'_>, report: &mut Report<'_>) {
    let Some(doc) = cx.standard_input() else {
        return;
    };
    for (node, name) in doc.properties() {
        if !doc.tightenable(node) || declared_elsewhere_in_allof(doc, node, name) {
            continue;
        }
        let found = unbounded(doc, node.value, 0);
        if found.strings {
            report.add(
                doc.pointer_of(node),
                node.span,
                [
                    "property '",
                    name,
                    "' admits strings of any length: add maxLength (or an enum)",
                ]
                .concat(),
            );
        }
        if found.arrays {
            report.add(
                doc.pointer_of(node),
                node.span,
                [
                    "property '",
                    name,
                    "' admits arrays of any size: add maxItems",
                ]
                .concat(),
            );
        }
    }
}
