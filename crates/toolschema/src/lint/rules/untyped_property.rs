//! SCH-003.

use crate::json::Members;
use crate::lint::context::{Report, SchemaDoc, ToolContext};
use crate::lint::registry::declare_rule;
use crate::lint::schema_walk::{Combinator, Role, SchemaNode};
use serde_json::Value;

declare_rule! {
    /// A property schema constrains no type.
    ///
    /// ## What it flags
    /// A property (a member of `properties`, at any depth of `inputSchema`) with no `type`,
    /// `enum` or `const`, that is not a `$ref` to a schema that has one, nor an
    /// `anyOf`/`oneOf` whose every branch has one, nor an `allOf` with a branch that has one.
    /// `true` and `{}` are flagged.
    ///
    /// ## Why it matters
    /// The model has to guess what to send, and the schema accepts whatever it guesses: a number
    /// where the server expects a string passes validation and fails in the server.
    ///
    /// ## Example
    /// ```json
    /// {"type": "object", "properties": {"filter": {"description": "What to match"}}}
    /// ```
    ///
    /// ## Fix
    /// Give the property a `type` (or an `enum` or `const`). There is no automatic fix: only the
    /// author knows the type.
    pub static UNTYPED_PROPERTY = {
        code: "SCH-003",
        name: "untyped-property",
        severity: Critical,
        fixes: [],
        check: Tool(check),
    };
}

/// Whether `schema` constrains the type of the value it describes.
pub(crate) fn constrains_type(doc: &SchemaDoc<'_>, schema: &Value, depth: usize) -> bool {
    let Some(map) = schema.as_object() else {
        // `false` accepts nothing, which is a constraint; `true` accepts anything.
        return schema == &Value::Bool(false);
    };
    if ["type", "enum", "const"]
        .iter()
        .any(|k| map.member(k).is_some())
    {
        return true;
    }
    if depth > 16 {
        return false;
    }
    if let Some(reference) = map.member("$ref").and_then(Value::as_str) {
        match doc.resolve_ref(reference) {
            Some(target) if constrains_type(doc, target, depth + 1) => return true,
            // An unresolved reference is SCH-008's finding, not this rule's.
            None => return true,
            Some(_) => {}
        }
    }
    let branches = |key: &str| {
        map.member(key)
            .and_then(Value::as_array)
            .filter(|b| !b.is_empty())
    };
    for key in ["anyOf", "oneOf"] {
        if branches(key).is_some_and(|b| b.iter().all(|s| constrains_type(doc, s, depth + 1))) {
            return true;
        }
    }
    branches("allOf").is_some_and(|b| b.iter().any(|s| constrains_type(doc, s, depth + 1)))
}

/// Whether `node`, a property inside an `allOf` branch, is declared again elsewhere in the same
/// composition (the object holding the `allOf`, or another branch): the other declaration may
/// carry its type or bounds.
pub(crate) fn declared_elsewhere_in_allof(
    doc: &SchemaDoc<'_>,
    node: &SchemaNode<'_>,
    name: &str,
) -> bool {
    let Some(branch) = node.parent.and_then(|p| doc.nodes.get(p)) else {
        return false;
    };
    if branch.role != Role::Branch(Combinator::AllOf) {
        return false;
    }
    let Some(owner) = branch.parent.and_then(|p| doc.nodes.get(p)) else {
        return false;
    };
    let declares = |schema: &Value| {
        !std::ptr::eq(schema, branch.value)
            && schema
                .member("properties")
                .and_then(|p| p.member(name))
                .is_some()
    };
    declares(owner.value)
        || owner
            .value
            .member("allOf")
            .and_then(Value::as_array)
            .is_some_and(|all| {
                all.iter()
                    .any(|b| declares(b) || b.member("$ref").is_some())
            })
}

fn check(cx: &ToolContext<'_>, report: &mut Report<'_>) {
    let Some(doc) = cx.standard_input() else {
        return;
    };
    for (node, name) in doc.properties() {
        if !doc.tightenable(node) || constrains_type(doc, node.value, 0) {
            continue;
        }
        if declared_elsewhere_in_allof(doc, node, name) {
            continue;
        }
        let what = match node.value {
            Value::Bool(_) => "is `true`, which accepts any value".to_string(),
            Value::Object(map) if map.is_empty() => "is {}, which accepts any value".to_string(),
            Value::Object(map) if map.member("$ref").is_some() => {
                "refers to a schema with no type, enum or const: any value is accepted".to_string()
            }
            Value::Object(map) if map.member("anyOf").is_some() || map.member("oneOf").is_some() => {
                "has an anyOf/oneOf branch with no type, enum or const: any value is accepted"
                    .to_string()
            }
            _ => "has no type, enum or const: any value is accepted".to_string(),
        };
        report.add(
            doc.pointer_of(node),
            node.span,
            format!("property '{name}' {what}"),
        );
    }
}
