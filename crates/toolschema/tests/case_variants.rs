//! Names a server matching names without regard to case would read as others
//! (`CompiledTool::case_variant_arguments`): what is refused at any depth, what never is, and
//! that a large or deep call is looked at whole.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use proptest::prelude::*;
use serde_json::{json, Map, Value};
use std::collections::HashSet;
use toolschema::text::fold;
use toolschema::{CompiledTool, Tool};

fn compiled(schema: Value) -> CompiledTool {
    Tool::from_value(json!({"name": "t", "inputSchema": schema}))
        .unwrap()
        .compile()
        .unwrap()
}

fn folded(name: &str) -> String {
    name.chars().map(fold).collect()
}

#[test]
fn where_the_schema_cannot_be_followed_nothing_is_called_undeclared() {
    // An anchor and a dynamic reference are left to the engine: below them no name is known
    // to be undeclared, but two names folding alike still are refused.
    for schema in [
        json!({"type": "object", "properties": {"o": {"$ref": "#node"}},
               "$defs": {"node": {"$anchor": "node", "type": "object", "properties": {"path": {}}}}}),
        json!({"type": "object", "properties": {"o": {"$dynamicRef": "#node"}},
               "$defs": {"node": {"$dynamicAnchor": "node", "type": "object", "properties": {"path": {}}}}}),
    ] {
        let tool = compiled(schema);
        assert_eq!(
            tool.case_variant_arguments(&json!({"o": {"Path": "/etc"}})),
            Vec::<String>::new()
        );
        assert_eq!(
            tool.case_variant_arguments(&json!({"o": {"path": "/a", "Path": "/etc"}})),
            ["arguments 'path' and 'Path' (in 'o') differ only in case: a server that reads names without regard to case would take one for the other"]
        );
    }
}

#[test]
fn the_same_check_reaches_every_object_of_a_large_or_deep_call() {
    let tool = compiled(json!({"type": "object", "properties": {
        "rows": {"type": "array", "items": {"type": "object", "properties": {"path": {"type": "string"}}}},
        "tree": {"$ref": "#/$defs/node"}},
        "$defs": {"node": {"type": "object", "properties": {"path": {"type": "string"}, "next": {"$ref": "#/$defs/node"}}}}}));
    let mut rows: Vec<Value> = (0..100_000).map(|_| json!({"path": "/safe"})).collect();
    rows[99_999] = json!({"PATH": "/etc"});
    assert_eq!(
        tool.case_variant_arguments(&json!({"rows": rows})),
        ["argument 'rows[99999].PATH' is not declared, and a server that reads names without regard to case would take it for 'rows[99999].path'"]
    );
    // 126 objects inside the arguments: the deepest one holds the variant.
    let mut tree = json!({"Path": "/etc"});
    for _ in 0..125 {
        tree = json!({"next": tree});
    }
    let messages = tool.case_variant_arguments(&json!({"tree": tree}));
    assert_eq!(messages.len(), 1);
    let expected_place = format!("tree{}.Path", ".next".repeat(125));
    assert!(
        messages[0].starts_with(&format!("argument '{expected_place}' is not declared")),
        "{}",
        messages[0]
    );
}

/// A generated object schema: its properties, and how they are written.
#[derive(Debug, Clone)]
enum Node {
    Leaf,
    Array(Box<Node>),
    Object {
        properties: Vec<(String, Node)>,
        additional: Option<Box<Node>>,
        written: Written,
    },
}

/// How an object schema's properties are written: in `properties`, split between `allOf` or
/// `anyOf` branches, or in `$defs` behind a `$ref`.
#[derive(Debug, Clone, Copy)]
enum Written {
    Plain,
    AllOf,
    AnyOf,
    Referenced,
}

/// Names that fold alike in every way Go folds (and `ı`, which it does not fold to `i`).
const NAMES: &[&str] = &[
    "path",
    "Path",
    "PATH",
    "paſ",
    "kind",
    "\u{212A}ind",
    "id",
    "ıd",
    "ID",
    "a",
    "A",
    "b",
    "x",
];

fn node() -> impl Strategy<Value = Node> {
    let leaf = Just(Node::Leaf);
    leaf.prop_recursive(5, 40, 5, |inner| {
        let written = prop_oneof![
            Just(Written::Plain),
            Just(Written::AllOf),
            Just(Written::AnyOf),
            Just(Written::Referenced)
        ];
        prop_oneof![
            inner.clone().prop_map(|n| Node::Array(Box::new(n))),
            (
                prop::collection::vec((prop::sample::select(NAMES), inner.clone()), 0..5),
                prop::option::of(inner),
                written
            )
                .prop_map(|(properties, additional, written)| {
                    let mut seen = HashSet::new();
                    Node::Object {
                        properties: properties
                            .into_iter()
                            .filter(|(name, _)| seen.insert(*name))
                            .map(|(name, node)| (name.to_string(), node))
                            .collect(),
                        // Split between branches, the properties leave no place for an
                        // `additionalProperties` that applies to undeclared names alone.
                        additional: additional
                            .filter(|_| matches!(written, Written::Plain | Written::Referenced))
                            .map(Box::new),
                        written,
                    }
                }),
        ]
    })
}

/// The schema `node` stands for; referenced objects go into `defs`.
fn schema_of(node: &Node, defs: &mut Map<String, Value>) -> Value {
    match node {
        Node::Leaf => json!({}),
        Node::Array(items) => json!({"type": "array", "items": schema_of(items, defs)}),
        Node::Object {
            properties,
            additional,
            written,
        } => {
            let mut rendered: Vec<(String, Value)> = properties
                .iter()
                .map(|(name, node)| (name.clone(), schema_of(node, defs)))
                .collect();
            let mut schema = json!({"type": "object"});
            // `additionalProperties` applies to the names its own schema object does not list,
            // those of branches beside it included: only beside all the properties does it
            // apply to the undeclared names alone.
            let additional = additional.as_ref().map(|a| schema_of(a, defs));
            let half = rendered.split_off(rendered.len() / 2);
            let first: Map<String, Value> = rendered.into_iter().collect();
            let second: Map<String, Value> = half.into_iter().collect();
            let mut all = first.clone();
            all.extend(second.clone());
            match written {
                Written::Plain => {
                    schema["properties"] = Value::Object(all);
                    if let Some(additional) = additional {
                        schema["additionalProperties"] = additional;
                    }
                }
                Written::AllOf | Written::AnyOf => {
                    let key = if matches!(written, Written::AllOf) {
                        "allOf"
                    } else {
                        "anyOf"
                    };
                    schema[key] = json!([{"properties": first}, {"properties": second}]);
                }
                Written::Referenced => {
                    let name = format!("d{}", defs.len());
                    let mut def = json!({"properties": all});
                    if let Some(additional) = additional {
                        def["additionalProperties"] = additional;
                    }
                    defs.insert(name.clone(), def);
                    schema["$ref"] = json!(format!("#/$defs/{name}"));
                }
            }
            schema
        }
    }
}

/// A small deterministic generator, so an instance follows from its schema and a seed.
struct Seed(u64);

impl Seed {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn chance(&mut self) -> bool {
        self.next().is_multiple_of(2)
    }
}

/// An instance of `node` in which every name is declared for its object exactly or folds to
/// no name declared there, and no two names of one object fold alike unless both are declared.
fn instance_of(node: &Node, seed: &mut Seed) -> Value {
    match node {
        Node::Leaf => json!(seed.next() % 100),
        Node::Array(items) => {
            let count = (seed.next() % 3) as usize;
            Value::Array((0..count).map(|_| instance_of(items, seed)).collect())
        }
        Node::Object {
            properties,
            additional,
            ..
        } => {
            let mut object = Map::new();
            for (name, inner) in properties {
                if seed.chance() {
                    object.insert(name.clone(), instance_of(inner, seed));
                }
            }
            let declared: HashSet<String> = properties.iter().map(|(n, _)| folded(n)).collect();
            let mut taken: HashSet<String> = object.keys().map(|n| folded(n)).collect();
            // Extra names, from the same pool: those folding to nothing declared here.
            for _ in 0..(seed.next() % 4) {
                let name = NAMES[(seed.next() % NAMES.len() as u64) as usize];
                let key = folded(name);
                if declared.contains(&key) || !taken.insert(key) {
                    continue;
                }
                let value = match additional {
                    Some(inner) => instance_of(inner, seed),
                    None => json!(seed.next() % 100),
                };
                object.insert(name.to_string(), value);
            }
            Value::Object(object)
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn names_declared_exactly_or_folding_to_nothing_declared_are_never_refused(
        root in node(),
        seed in 1u64..,
    ) {
        // The arguments are an object: wrap whatever was generated in one property.
        let root = Node::Object {
            properties: vec![("root".to_string(), root)],
            additional: None,
            written: Written::Plain,
        };
        let mut defs = Map::new();
        let mut schema = schema_of(&root, &mut defs);
        schema["$defs"] = Value::Object(defs);
        let tool = compiled(schema.clone());
        let arguments = instance_of(&root, &mut Seed(seed));
        prop_assert_eq!(
            tool.case_variant_arguments(&arguments),
            Vec::<String>::new(),
            "schema {} arguments {}", schema, arguments
        );
    }
}
