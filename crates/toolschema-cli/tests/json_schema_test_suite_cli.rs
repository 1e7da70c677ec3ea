//! The official JSON Schema Test Suite (downloaded by scripts/test-data.sh) through the command,
//! as a user runs it: each group's schema and the data of its tests are written to files as
//! the suite writes them (their text, so numbers such as `9007199254740992.0` reach the command
//! as written), and `toolschema validate --schema --instances` judges them, with the suite's
//! `remotes/` given as `--document`s. Every required test of draft 2020-12 and draft-07 must
//! agree, and no value may be left "could not be checked".

#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "../../toolschema/tests/support/mod.rs"]
mod support;

use assert_cmd::Command;
use serde_json::Value;
use std::ops::Range;
use std::path::Path;
use toolschema::json::{array_elements, object_members, value_range};

/// `--document URI=FILE` for every file of the suite's `remotes/`.
fn remote_documents() -> Vec<String> {
    support::suite_remotes()
        .into_iter()
        .map(|(uri, path)| format!("--document={uri}={}", path.display()))
        .collect()
}

fn member(text: &str, range: Range<usize>, key: &str) -> Range<usize> {
    object_members(text, range)
        .unwrap()
        .unwrap()
        .into_iter()
        .find(|m| m.key == key)
        .unwrap_or_else(|| panic!("no {key}"))
        .value
}

/// One line of JSON Lines holding the value `text` states: JSON strings hold no raw line
/// breaks, so those between tokens become spaces.
fn one_line(text: &str) -> String {
    text.replace(['\n', '\r'], " ")
}

struct Tally {
    tests: usize,
    failures: Vec<String>,
    unchecked: Vec<String>,
}

fn run_file(path: &Path, dialect: &str, documents: &[String], scratch: &Path, tally: &mut Tally) {
    let text = std::fs::read_to_string(path).unwrap();
    let file = path.file_name().unwrap().to_string_lossy().to_string();
    let groups = array_elements(&text, value_range(&text).unwrap())
        .unwrap()
        .unwrap();
    for group in groups {
        let schema = member(&text, group.clone(), "schema");
        let description: Value =
            serde_json::from_str(&text[member(&text, group.clone(), "description")]).unwrap();
        let tests = array_elements(&text, member(&text, group.clone(), "tests"))
            .unwrap()
            .unwrap();
        let schema_file = scratch.join("schema.json");
        let instances_file = scratch.join("instances.jsonl");
        std::fs::write(&schema_file, &text[schema]).unwrap();
        let mut lines = String::new();
        let mut expected = Vec::new();
        for test in &tests {
            lines.push_str(&one_line(&text[member(&text, test.clone(), "data")]));
            lines.push('\n');
            let valid: bool =
                serde_json::from_str(&text[member(&text, test.clone(), "valid")]).unwrap();
            let name: Value =
                serde_json::from_str(&text[member(&text, test.clone(), "description")]).unwrap();
            expected.push((valid, name.as_str().unwrap().to_string()));
        }
        std::fs::write(&instances_file, lines).unwrap();
        let output = Command::cargo_bin("toolschema")
            .unwrap()
            .arg("validate")
            .arg("--dialect")
            .arg(dialect)
            .arg("--schema")
            .arg(&schema_file)
            .arg("--instances")
            .arg(&instances_file)
            .args(documents)
            .timeout(std::time::Duration::from_secs(60))
            .output()
            .unwrap();
        let stdout = String::from_utf8(output.stdout).unwrap();
        let records: Vec<Value> = stdout
            .lines()
            .map(|line| serde_json::from_str(line).unwrap())
            .collect();
        let group_name = format!("{file} / {}", description.as_str().unwrap());
        if records.len() != expected.len() {
            tally.tests += expected.len();
            tally.failures.push(format!(
                "{group_name}: {} records for {} tests; stderr: {}",
                records.len(),
                expected.len(),
                String::from_utf8_lossy(&output.stderr)
            ));
            continue;
        }
        for (record, (valid, name)) in records.iter().zip(expected) {
            tally.tests += 1;
            let errors = record["errors"].to_string();
            if errors.contains("could not be checked") {
                tally
                    .unchecked
                    .push(format!("{group_name} / {name}: {errors}"));
            }
            if record["valid"] != Value::Bool(valid) {
                tally.failures.push(format!(
                    "{group_name} / {name}: expected valid={valid}, got {record}"
                ));
            }
        }
    }
}

fn run(draft: &str, dialect: &str) -> Tally {
    let dir = support::json_schema_test_suite().join("tests").join(draft);
    let documents = remote_documents();
    let scratch = tempfile::tempdir().unwrap();
    let mut tally = Tally {
        tests: 0,
        failures: Vec::new(),
        unchecked: Vec::new(),
    };
    for file in support::json_files(&dir) {
        run_file(&file, dialect, &documents, scratch.path(), &mut tally);
    }
    println!(
        "{draft} required, through the command: {}/{} tests agree, {} not checked",
        tally.tests - tally.failures.len(),
        tally.tests,
        tally.unchecked.len()
    );
    for failure in tally.failures.iter().chain(&tally.unchecked) {
        println!("  {failure}");
    }
    tally
}

#[test]
fn draft2020_12_required_tests_all_agree_through_the_command() {
    let tally = run("draft2020-12", "2020-12");
    assert!(tally.tests > 1000, "suite not found or empty");
    assert!(tally.failures.is_empty() && tally.unchecked.is_empty());
}

#[test]
fn draft7_required_tests_all_agree_through_the_command() {
    let tally = run("draft7", "draft-07");
    assert!(tally.tests > 800, "suite not found or empty");
    assert!(tally.failures.is_empty() && tally.unchecked.is_empty());
}
