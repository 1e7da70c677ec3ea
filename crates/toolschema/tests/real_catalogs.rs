//! The real `tools/list` results of the npm servers `server-everything` and `server-filesystem` and
//! of the PyPI server `mcp-server-time`, captured live by scripts/test-data.sh: loaded as catalogs,
//! compiled, and used to check calls against their real schemas.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use serde_json::{json, Value};
use toolschema::catalog::CatalogShape;
use toolschema::{Catalog, CompiledTool, Dialect};

fn load(name: &str) -> Catalog {
    let text = support::real_catalog_text(name);
    Catalog::from_json(&format!("{name}.json"), &text).unwrap()
}

fn compiled(catalog: &Catalog, tool: &str) -> CompiledTool {
    catalog.require(tool).unwrap().compile().unwrap()
}

fn messages(tool: &CompiledTool, arguments: Value) -> Vec<String> {
    match tool.validate_input(&arguments) {
        Ok(()) => Vec::new(),
        Err(errors) => errors.messages().into_iter().map(str::to_string).collect(),
    }
}

#[test]
fn both_catalogs_load_and_every_tool_compiles_as_draft_07() {
    for (name, count) in [("everything", 13), ("filesystem", 14)] {
        let catalog = load(name);
        assert_eq!(catalog.shape(), CatalogShape::ToolsList);
        assert_eq!(catalog.len(), count, "{name}");
        for tool in catalog.tools() {
            let compiled = tool.compile().unwrap();
            assert_eq!(
                compiled.input().dialect(),
                Dialect::Draft7,
                "{}",
                tool.name()
            );
            if let Some(output) = compiled.output() {
                assert_eq!(output.dialect(), Dialect::Draft7);
            }
        }
        // Every tool is written back exactly as read.
        let original: Value = serde_json::from_str(&support::real_catalog_text(name)).unwrap();
        assert_eq!(
            serde_json::to_string(&catalog.to_tools_list()).unwrap(),
            serde_json::to_string(&original).unwrap()
        );
    }
}

#[test]
fn everything_server_calls() {
    let catalog = load("everything");
    let echo = compiled(&catalog, "echo");
    assert_eq!(
        messages(&echo, json!({"message": "hi"})),
        Vec::<String>::new()
    );
    assert_eq!(
        messages(&echo, json!({})),
        ["missing required argument 'message'"]
    );
    assert_eq!(
        messages(&echo, json!({"message": 5})),
        ["argument 'message' must be a string (got an integer)"]
    );

    let sum = compiled(&catalog, "get-sum");
    assert_eq!(
        messages(&sum, json!({"a": 1, "b": 2.5})),
        Vec::<String>::new()
    );
    assert_eq!(
        messages(&sum, json!({"a": "1"})),
        [
            "missing required argument 'b'",
            "argument 'a' must be a number (got a string)"
        ]
    );

    let links = compiled(&catalog, "get-resource-links");
    assert_eq!(messages(&links, json!({})), Vec::<String>::new());
    assert_eq!(
        messages(&links, json!({"count": 11})),
        ["argument 'count' value must be <= 10 (got 11)"]
    );

    let weather = compiled(&catalog, "get-structured-content");
    assert_eq!(
        messages(&weather, json!({"location": "Boston"})),
        ["argument 'location' must be one of the enum values: \"New York\", \"Chicago\", \"Los Angeles\""]
    );
    // Its outputSchema is real too.
    assert!(weather
        .validate_output(
            Some(&json!({"temperature": 22.5, "conditions": "Sunny", "humidity": 40})),
            false
        )
        .is_ok());
    assert_eq!(
        weather
            .validate_output(
                Some(&json!({"temperature": "hot", "conditions": "Sunny", "humidity": 40})),
                false
            )
            .unwrap_err()
            .messages(),
        ["field 'temperature' must be a number (got a string)"]
    );
    // The real schemas are open (no additionalProperties), so extra arguments pass.
    assert_eq!(
        messages(&echo, json!({"message": "hi", "extra": 1})),
        Vec::<String>::new()
    );
}

#[test]
fn filesystem_server_calls() {
    let catalog = load("filesystem");
    let write = compiled(&catalog, "write_file");
    assert_eq!(
        messages(&write, json!({"path": "/tmp/a.txt", "content": "x"})),
        Vec::<String>::new()
    );
    assert_eq!(
        messages(&write, json!({"path": 42})),
        [
            "missing required argument 'content'",
            "argument 'path' must be a string (got an integer)"
        ]
    );

    let edit = compiled(&catalog, "edit_file");
    assert_eq!(
        messages(
            &edit,
            json!({"path": "a", "edits": [{"oldText": "x", "newText": "y"}]})
        ),
        Vec::<String>::new()
    );
    assert_eq!(
        messages(
            &edit,
            json!({"path": "a", "edits": [{"oldText": "x"}, {"newText": 3, "oldText": "z"}]})
        ),
        [
            "missing required argument 'edits[0].newText'",
            "argument 'edits[1].newText' must be a string (got an integer)",
        ]
    );

    let read_many = compiled(&catalog, "read_multiple_files");
    assert_eq!(
        messages(&read_many, json!({"paths": []})),
        ["argument 'paths' must have at least 1 item (got 0)"]
    );

    let listing = compiled(&catalog, "list_directory_with_sizes");
    assert_eq!(
        messages(&listing, json!({"path": ".", "sortBy": "date"})),
        ["argument 'sortBy' must be one of the enum values: \"name\", \"size\""]
    );
    assert_eq!(
        messages(&listing, json!([])),
        ["arguments must be an object (got an array)"]
    );
}

#[test]
fn catalog_positions_point_into_the_real_files() {
    let catalog = load("filesystem");
    let index = catalog
        .entries()
        .iter()
        .position(|t| t.tool.name() == "edit_file")
        .unwrap();
    let pointer = format!("/tools/{index}/inputSchema/properties/edits");
    let position = catalog.position(&pointer).unwrap();
    let text = support::real_catalog_text("filesystem");
    let line = text.lines().nth(position.line as usize - 1).unwrap();
    let at: String = line.chars().skip(position.column as usize - 1).collect();
    assert!(at.starts_with("\"edits\""), "{line}");
}

#[test]
fn time_server_calls() {
    let catalog = load("time");
    assert_eq!(catalog.len(), 2);
    let now = compiled(&catalog, "get_current_time");
    // No `$schema`: the 2020-12 default of MCP 2025-11-25.
    assert_eq!(now.input().dialect(), Dialect::Draft202012);
    assert_eq!(
        messages(&now, json!({"timezone": "Europe/Paris"})),
        Vec::<String>::new()
    );
    assert_eq!(
        messages(&now, json!({})),
        ["missing required argument 'timezone'"]
    );
    assert_eq!(
        now.validate_output(Some(&json!({"timezone": "UTC", "datetime": "x"})), false)
            .unwrap_err()
            .messages(),
        [
            "missing required field 'day_of_week'",
            "missing required field 'is_dst'"
        ]
    );
    let convert = compiled(&catalog, "convert_time");
    assert!(!messages(&convert, json!({"source_timezone": "UTC"})).is_empty());
}

#[test]
fn the_poisoning_rules_find_nothing_in_the_real_catalogs() {
    let mut selection = toolschema::lint::RuleSelection::none();
    selection.apply(Some(&["SEC".to_string()]), &[]).unwrap();
    assert_eq!(selection.rules().count(), 6);
    let linter = toolschema::lint::Linter::new(selection);
    for name in ["everything", "filesystem", "time"] {
        let text = support::real_catalog_text(name);
        let report = linter.lint(&format!("{name}.json"), &text).unwrap();
        assert!(report.tools > 0, "{name}");
        let found: Vec<String> = report
            .diagnostics
            .iter()
            .map(|d| d.message.clone())
            .collect();
        assert_eq!(found, Vec::<String>::new(), "{name}");
    }
}
