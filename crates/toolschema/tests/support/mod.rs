//! Where the tests find the data `scripts/test-data.sh` downloads and captures: the JSON Schema Test
//! Suite and the real catalogs of live servers; and schemas that tests of several crates build.
//! Shared by the test and benchmark targets of every crate
//! (`#[path = ".../toolschema/tests/support/mod.rs"] mod support;`).

#![allow(dead_code)]

use std::path::{Path, PathBuf};

/// The command that puts the data in place.
const HOW_TO_GET_IT: &str =
    "run ./scripts/test.sh (or, after a build, ./scripts/test-data.sh), or point \
     TOOLSCHEMA_TEST_DATA at a folder holding json-schema-test-suite/ and catalogs/";

/// The test data folder: `$TOOLSCHEMA_TEST_DATA`, or `target/test-data` in the workspace.
pub fn test_data_dir() -> PathBuf {
    std::env::var_os("TOOLSCHEMA_TEST_DATA")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../target/test-data"))
}

/// `what` inside the test data folder; a test that needs it and cannot find it fails with a
/// message saying how to get it.
fn required(relative: &str, what: &str) -> PathBuf {
    let path = test_data_dir().join(relative);
    if !path.exists() {
        panic!("{what} is not at {}: {HOW_TO_GET_IT}", path.display());
    }
    path
}

/// The official JSON Schema Test Suite (`tests/`, `remotes/`).
pub fn json_schema_test_suite() -> PathBuf {
    required("json-schema-test-suite", "the JSON Schema Test Suite")
}

/// The `.json` files of a folder of the suite, sorted.
pub fn json_files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", dir.display()))
        .map(|entry| entry.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    files.sort();
    files
}

/// Every file under the suite's `remotes/`, with the address the suite expects it at.
pub fn suite_remotes() -> Vec<(String, PathBuf)> {
    let root = json_schema_test_suite().join("remotes");
    let mut remotes = Vec::new();
    let mut stack = vec![root.clone()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|x| x == "json") {
                let relative = path
                    .strip_prefix(&root)
                    .unwrap()
                    .to_string_lossy()
                    .replace('\\', "/");
                remotes.push((format!("http://localhost:1234/{relative}"), path));
            }
        }
    }
    remotes.sort();
    remotes
}

/// `options` with every file under the suite's `remotes/` registered at the address the suite
/// expects (nothing is fetched).
pub fn with_suite_remotes(mut options: toolschema::CompileOptions) -> toolschema::CompileOptions {
    for (uri, path) in suite_remotes() {
        let document: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        options = options.register_document(uri, document);
    }
    options
}

/// The real servers whose `tools/list` the tests capture: `everything`, `filesystem` and `memory`
/// (npm server-everything, server-filesystem, server-memory), `time`, `git` and `fetch` (PyPI
/// mcp-server-time, mcp-server-git, mcp-server-fetch).
pub const REAL_CATALOGS: [&str; 6] = ["everything", "filesystem", "memory", "time", "git", "fetch"];

/// The captured catalog of a real server, `{"tools": [...]}` as it listed them.
pub fn real_catalog_path(name: &str) -> PathBuf {
    required(
        &format!("catalogs/{name}.json"),
        &format!("the captured catalog of the '{name}' server"),
    )
}

/// The text of [`real_catalog_path`].
pub fn real_catalog_text(name: &str) -> String {
    let path = real_catalog_path(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// A schema that applies `2 * chain` subschemas in a row at each level of a value (`anyOf`, then
/// `$ref`, `chain` times), one level being `{"x": ...}`.
pub fn chained_schema(chain: usize) -> serde_json::Value {
    use serde_json::json;
    let mut defs = serde_json::Map::new();
    for i in 0..chain {
        defs.insert(
            format!("c{i}"),
            json!({"anyOf": [{"$ref": format!("#/$defs/c{}", i + 1)}, {"type": "string", "minLength": 100}]}),
        );
    }
    defs.insert(
        format!("c{chain}"),
        json!({"type": "object", "properties": {"x": {"$ref": "#/$defs/c0"}}, "required": ["x"]}),
    );
    json!({"$ref": "#/$defs/c0", "$defs": defs})
}
