//! SCH-012.

use crate::json::pointer::push_segment;
use crate::json::Members;
use crate::lint::context::{Report, ToolContext};
use crate::lint::registry::declare_rule;
use crate::lint::value_fit::{misfit, Skip};
use serde_json::{Map, Value};

declare_rule! {
    /// A schema contradicts itself: bounds that cross, or an enum, const or default it rejects.
    ///
    /// ## What it flags
    /// In `inputSchema` and `outputSchema`, at any depth: `minimum` above `maximum` (and the
    /// exclusive forms), `minLength` above `maxLength`, `minItems` above `maxItems`,
    /// `minProperties` above `maxProperties`, `minContains` above `maxContains`; an `enum`
    /// value or a `const` that breaks the schema's other keywords; a `default` that does not
    /// satisfy the schema it sits in. Values are checked against `type`, `enum`, `const`,
    /// numeric and length bounds, `pattern`, `multipleOf`, `uniqueItems`, `items`,
    /// `prefixItems`, `required`, `properties` and `additionalProperties: false`.
    ///
    /// ## Why it matters
    /// No value can satisfy crossed bounds, so every call fails. An `enum` value the schema
    /// rejects is offered to the model and refused when it picks it. A `default` the schema
    /// rejects is what the server uses when the model leaves the argument out.
    ///
    /// ## Example
    /// ```json
    /// {"type": "integer", "minimum": 10, "maximum": 1, "default": 50}
    /// ```
    ///
    /// ## Fix
    /// Correct the bound or the value. There is no automatic fix: only the author knows which
    /// side is wrong.
    pub static CONTRADICTION = {
        code: "SCH-012",
        name: "contradiction",
        severity: Critical,
        fixes: [],
        check: Tool(check),
    };
}

/// Pairs of keywords where the first must not exceed the second (`strict`: must be below it).
const BOUNDS: &[(&str, &str, bool)] = &[
    ("minimum", "maximum", false),
    ("exclusiveMinimum", "exclusiveMaximum", true),
    ("minimum", "exclusiveMaximum", true),
    ("exclusiveMinimum", "maximum", true),
    ("minLength", "maxLength", false),
    ("minItems", "maxItems", false),
    ("minProperties", "maxProperties", false),
    ("minContains", "maxContains", false),
];

fn crossed_bounds(map: &Map<String, Value>) -> impl Iterator<Item = (&'static str, String)> + '_ {
    // Most schemas have no bound at all: look at the keys once before looking pairs up.
    let bounded = map
        .keys()
        .any(|k| k.starts_with("min") || k.starts_with("max") || k.starts_with("exclusive"));
    let pairs = if bounded { BOUNDS } else { &[] };
    pairs.iter().filter_map(move |(low, high, strict)| {
        let a = map.member(low)?;
        let b = map.member(high)?;
        let (x, y) = (a.as_f64()?, b.as_f64()?);
        let crossed = if *strict { x >= y } else { x > y };
        crossed.then(|| {
            let relation = if *strict && x == y {
                "equals"
            } else {
                "is above"
            };
            (
                *low,
                format!("{low} {a} {relation} {high} {b}: no value can satisfy both"),
            )
        })
    })
}

fn check(cx: &ToolContext<'_>, report: &mut Report<'_>) {
    for doc in cx.standard_schemas() {
        for node in &doc.nodes {
            let Some(map) = node.object() else { continue };
            for (keyword, message) in crossed_bounds(map) {
                let span = cx
                    .member_span(node.value, node.span, keyword)
                    .unwrap_or(node.span);
                report.add(push_segment(&doc.pointer_of(node), keyword), span, message);
            }
            if let Some(Value::Array(values)) = map.member("enum") {
                let enum_span = cx.member_span(node.value, node.span, "enum");
                let spans = enum_span.into_iter().flat_map(|s| cx.spans().children(s));
                for ((i, value), span) in values.iter().enumerate().zip(spans) {
                    if let Some(reason) = misfit(value, map, Skip(&["enum"]), cx.cache) {
                        report.add(
                            format!("{}{}/enum/{i}", doc.pointer, node.local),
                            span,
                            format!("enum value {value} {reason}: the schema rejects it"),
                        );
                    }
                }
            }
            for (keyword, skip) in [("const", Skip(&["const"])), ("default", Skip(&[]))] {
                let Some(value) = map.member(keyword) else {
                    continue;
                };
                let Some(reason) = misfit(value, map, skip, cx.cache) else {
                    continue;
                };
                let span = cx
                    .member_span(node.value, node.span, keyword)
                    .unwrap_or(node.span);
                report.add(
                    push_segment(&doc.pointer_of(node), keyword),
                    span,
                    format!("{keyword} {value} {reason}: the schema rejects it"),
                );
            }
        }
    }
}
