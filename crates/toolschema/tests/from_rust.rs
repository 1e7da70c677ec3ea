//! MCP-ready input schemas from Rust types (feature `schemars`), checked end to end: the schema's
//! shape, and that the core validates calls against it.

#![cfg(feature = "schemars")]
#![allow(clippy::unwrap_used, clippy::expect_used, dead_code)]

use schemars::JsonSchema;
use serde_json::{json, Value};
use toolschema::schema::input_schema_for;
use toolschema::Tool;

#[derive(JsonSchema)]
struct SearchInput {
    query: String,
    max_results: Option<u32>,
    case_sensitive: Option<bool>,
}

#[test]
fn search_input_from_the_issue() {
    let schema = input_schema_for::<SearchInput>().unwrap();
    assert_eq!(
        serde_json::to_string(&schema).unwrap(),
        json!({
            "type": "object",
            "properties": {
                "query": {"type": "string"},
                "max_results": {"type": ["integer", "null"], "minimum": 0},
                "case_sensitive": {"type": ["boolean", "null"]}
            },
            "required": ["query"],
            "additionalProperties": false
        })
        .to_string()
    );
    let tool = Tool::new("search", schema).unwrap();
    let compiled = tool.compile().unwrap();
    assert!(compiled
        .validate_input(&json!({"query": "rust", "max_results": 5}))
        .is_ok());
    assert_eq!(
        compiled
            .validate_input(&json!({"max_results": -1, "case": true}))
            .unwrap_err()
            .messages(),
        [
            "missing required argument 'query'",
            "argument 'max_results' value must be >= 0 (got -1)",
            "unexpected argument 'case' (did you mean 'case_sensitive'?)",
        ]
    );
}

#[derive(JsonSchema)]
struct Filter {
    field: String,
    limit: u8,
}

#[derive(JsonSchema)]
#[serde(rename_all = "lowercase")]
enum Order {
    Asc,
    Desc,
}

#[derive(JsonSchema)]
struct QueryInput {
    filters: Vec<Filter>,
    order: Option<Order>,
}

#[test]
fn nested_types_are_inlined_and_closed() {
    let schema = Value::Object(input_schema_for::<QueryInput>().unwrap());
    let text = schema.to_string();
    assert!(!text.contains("$ref") && !text.contains("$defs"), "{text}");
    assert!(!text.contains("\"format\""), "{text}");
    assert_eq!(
        schema["properties"]["filters"]["items"],
        json!({
            "type": "object",
            "properties": {
                "field": {"type": "string"},
                "limit": {"type": "integer", "minimum": 0, "maximum": 255}
            },
            "required": ["field", "limit"],
            "additionalProperties": false
        })
    );
    assert!(schema.get("title").is_none() && schema.get("$schema").is_none());
}

#[derive(JsonSchema)]
struct TreeNode {
    name: String,
    children: Vec<TreeNode>,
}

#[test]
fn recursive_types_keep_their_reference() {
    let schema = Value::Object(input_schema_for::<TreeNode>().unwrap());
    assert!(schema.to_string().contains("$ref"), "{schema}");
    let tool = Tool::new("tree", schema.as_object().unwrap().clone()).unwrap();
    let compiled = tool.compile().unwrap();
    assert!(compiled
        .validate_input(&json!({"name": "root", "children": [{"name": "leaf", "children": []}]}))
        .is_ok());
    assert_eq!(
        compiled
            .validate_input(&json!({"name": "root", "children": [{"name": "leaf"}]}))
            .unwrap_err()
            .messages(),
        ["missing required argument 'children[0].children'"]
    );
}

#[test]
fn non_object_types_are_refused() {
    let err = input_schema_for::<Vec<String>>().unwrap_err();
    assert!(err.to_string().contains("is not an object"), "{err}");
}
