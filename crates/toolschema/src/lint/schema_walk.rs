//! Every subschema of a schema, found once per tool, with where it is and what it is for.
//!
//! Rules iterate over the nodes instead of walking the schema each on their own.

use crate::json::pointer::push_segment;
use crate::json::Spans;
use crate::schema::is_object_schema;
use serde_json::{Map, Value};

/// The composition keywords whose branches apply to the same value (named as the keywords are).
#[allow(clippy::enum_variant_names)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Combinator {
    AllOf,
    AnyOf,
    OneOf,
}

/// Why a subschema is where it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Role<'a> {
    /// The schema itself (`inputSchema`).
    Root,
    /// A member of `properties`.
    Property { name: &'a str },
    /// A member of `patternProperties`.
    PatternProperty,
    /// `additionalProperties` or `unevaluatedProperties` as a schema.
    AdditionalProperties,
    /// `items` (one schema), `additionalItems` or `unevaluatedItems`.
    Items,
    /// A member of `prefixItems`, or of a draft-07 `items` array.
    PrefixItem,
    /// A branch of `allOf`, `anyOf` or `oneOf`.
    Branch(Combinator),
    /// A member of `$defs` or `definitions`.
    Definition,
    /// Anything else: `not`, `if`, `then`, `else`, `contains`, `propertyNames`,
    /// `dependentSchemas`, `dependencies`, `contentSchema`.
    Other,
}

/// One subschema.
#[derive(Debug, Clone)]
pub(crate) struct SchemaNode<'a> {
    /// The subschema (an object or a boolean).
    pub value: &'a Value,
    /// Its index in the tool's spans.
    pub span: usize,
    /// JSON Pointer relative to the schema's root, as `$ref`s write it.
    pub local: String,
    pub role: Role<'a>,
    /// Index of the enclosing node.
    pub parent: Option<usize>,
    /// Whether it sits under a keyword where tightening would change what the schema means
    /// (`not`, `if`/`then`/`else`, `contains`, `propertyNames`, `dependentSchemas`,
    /// `dependencies`, `contentSchema`).
    pub inert: bool,
}

impl<'a> SchemaNode<'a> {
    /// The node's members, when it is an object.
    pub fn object(&self) -> Option<&'a Map<String, Value>> {
        self.value.as_object()
    }

    /// Whether it is an object schema: `type: "object"` (or a type list with it), or
    /// `properties`.
    pub fn is_object_schema(&self) -> bool {
        self.value.as_object().is_some_and(is_object_schema)
    }
}

const SINGLE: &[(&str, Kind)] = &[
    ("additionalProperties", Kind::AdditionalProperties),
    ("unevaluatedProperties", Kind::AdditionalProperties),
    ("items", Kind::Items),
    ("additionalItems", Kind::Items),
    ("unevaluatedItems", Kind::Items),
    ("not", Kind::Inert),
    ("if", Kind::Inert),
    ("then", Kind::Inert),
    ("else", Kind::Inert),
    ("contains", Kind::Inert),
    ("propertyNames", Kind::Inert),
    ("contentSchema", Kind::Inert),
];

#[derive(Clone, Copy)]
enum Kind {
    AdditionalProperties,
    Items,
    Inert,
}

/// Every subschema of `root` (whose span is `root_span` in `spans`), in document order.
pub(crate) fn walk<'a>(root: &'a Value, spans: &Spans, root_span: usize) -> Vec<SchemaNode<'a>> {
    let mut nodes: Vec<SchemaNode<'a>> = Vec::new();
    // Work items: the node, with children pushed in reverse so they come out in order.
    let mut stack: Vec<SchemaNode<'a>> = vec![SchemaNode {
        value: root,
        span: root_span,
        local: String::new(),
        role: Role::Root,
        parent: None,
        inert: false,
    }];
    let mut children: Vec<SchemaNode<'a>> = Vec::new();
    while let Some(node) = stack.pop() {
        let index = nodes.len();
        if let Some(map) = node.value.as_object() {
            let child = |value: &'a Value, span: usize, key: &str, role: Role<'a>, inert: bool| {
                SchemaNode {
                    value,
                    span,
                    local: push_segment(&node.local, key),
                    role,
                    parent: Some(index),
                    inert: node.inert || inert,
                }
            };
            for ((key, value), span) in map.iter().zip(spans.children(node.span)) {
                let is_schema = value.is_object() || value.is_boolean();
                if let Some((_, kind)) = SINGLE.iter().find(|(k, _)| k == key) {
                    match (kind, value) {
                        (Kind::Items, Value::Array(items)) if key == "items" => {
                            push_elements(&mut children, items, spans, span, |v, s, i| {
                                let mut c = child(v, s, key, Role::PrefixItem, false);
                                c.local = push_segment(&c.local, &i.to_string());
                                c
                            });
                        }
                        _ if !is_schema => {}
                        (Kind::AdditionalProperties, _) => children.push(child(
                            value,
                            span,
                            key,
                            Role::AdditionalProperties,
                            false,
                        )),
                        (Kind::Items, _) => {
                            children.push(child(value, span, key, Role::Items, false))
                        }
                        (Kind::Inert, _) => {
                            children.push(child(value, span, key, Role::Other, true))
                        }
                    }
                    continue;
                }
                let (role, inert): (fn(&'a str) -> Role<'a>, bool) = match key.as_str() {
                    "properties" => (|name| Role::Property { name }, false),
                    "patternProperties" => (|_| Role::PatternProperty, false),
                    "$defs" | "definitions" => (|_| Role::Definition, false),
                    "dependentSchemas" | "dependencies" => (|_| Role::Other, true),
                    "allOf" | "anyOf" | "oneOf" | "prefixItems" => {
                        let Value::Array(items) = value else { continue };
                        let role = match key.as_str() {
                            "allOf" => Role::Branch(Combinator::AllOf),
                            "anyOf" => Role::Branch(Combinator::AnyOf),
                            "oneOf" => Role::Branch(Combinator::OneOf),
                            _ => Role::PrefixItem,
                        };
                        push_elements(&mut children, items, spans, span, |v, s, i| {
                            let mut c = child(v, s, key, role, false);
                            c.local = push_segment(&c.local, &i.to_string());
                            c
                        });
                        continue;
                    }
                    _ => continue,
                };
                let Value::Object(members) = value else {
                    continue;
                };
                let base = child(value, span, key, Role::Other, inert);
                for ((name, member), member_span) in members.iter().zip(spans.children(span)) {
                    if member.is_object() || member.is_boolean() {
                        children.push(SchemaNode {
                            value: member,
                            span: member_span,
                            local: push_segment(&base.local, name),
                            role: role(name),
                            parent: Some(index),
                            inert: base.inert,
                        });
                    }
                }
            }
        }
        nodes.push(node);
        stack.extend(children.drain(..).rev());
    }
    nodes
}

fn push_elements<'a>(
    out: &mut Vec<SchemaNode<'a>>,
    items: &'a [Value],
    spans: &Spans,
    span: usize,
    make: impl Fn(&'a Value, usize, usize) -> SchemaNode<'a>,
) {
    for (i, (value, element_span)) in items.iter().zip(spans.children(span)).enumerate() {
        if value.is_object() || value.is_boolean() {
            out.push(make(value, element_span, i));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::parse_with_spans;

    #[test]
    fn finds_every_subschema_in_order() {
        let text = r##"{"type": "object",
          "properties": {"a": {"type": "array", "items": {"properties": {"b": true}}},
                         "c": {"anyOf": [{"type": "string"}, {"$ref": "#/$defs/d"}]}},
          "not": {"properties": {"x": {}}},
          "$defs": {"d": {"type": "integer"}},
          "prefixItems": [{"type": "null"}, 3]}"##;
        let (value, spans) = parse_with_spans(text).unwrap();
        let nodes = walk(&value, &spans, 0);
        let seen: Vec<(String, Role<'_>, bool)> = nodes
            .iter()
            .map(|n| (n.local.clone(), n.role, n.inert))
            .collect();
        assert_eq!(
            seen,
            vec![
                ("".into(), Role::Root, false),
                ("/properties/a".into(), Role::Property { name: "a" }, false),
                ("/properties/a/items".into(), Role::Items, false),
                (
                    "/properties/a/items/properties/b".into(),
                    Role::Property { name: "b" },
                    false
                ),
                ("/properties/c".into(), Role::Property { name: "c" }, false),
                (
                    "/properties/c/anyOf/0".into(),
                    Role::Branch(Combinator::AnyOf),
                    false
                ),
                (
                    "/properties/c/anyOf/1".into(),
                    Role::Branch(Combinator::AnyOf),
                    false
                ),
                ("/not".into(), Role::Other, true),
                (
                    "/not/properties/x".into(),
                    Role::Property { name: "x" },
                    true
                ),
                ("/$defs/d".into(), Role::Definition, false),
                ("/prefixItems/0".into(), Role::PrefixItem, false),
            ]
        );
        assert_eq!(nodes[3].parent, Some(2));
        let at = |i: usize| &text[spans.get(nodes[i].span).unwrap().start as usize..][..5];
        assert_eq!(at(3), "true}");
        assert_eq!(at(9), "{\"typ");
    }
}
