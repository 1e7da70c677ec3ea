//! Runs the official JSON Schema Test Suite (downloaded by scripts/test-data.sh) through the public
//! validation API: every required test of draft 2020-12 and draft-07, with `remotes/` registered as
//! local documents (nothing is fetched), and the optional format tests with format assertion on.
//!
//! Both entry points must agree with the suite: the fast `is_valid` and the message-producing
//! `validate_as`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use serde_json::Value;
use std::path::{Path, PathBuf};
use toolschema::{CompileOptions, Dialect, SchemaValidator, Subject};

fn suite_dir() -> PathBuf {
    support::json_schema_test_suite()
}

#[derive(Default, Debug)]
struct Tally {
    groups: usize,
    tests: usize,
    failures: Vec<String>,
}

/// The tests whose value (a `Value` alone, without its text) the validator deliberately does
/// not judge. The float 9007199254740992.0 (2^53) is also what 9007199254740993.0 reads as, so a
/// validator that only sees the float cannot tell whether it equals an exact `const`; toolschema
/// says so ("could not be checked") rather than judge it valid. Given the text
/// ([`SchemaValidator::validate_text`], as the command reads values), it judges it: the command's
/// run of the suite (toolschema-cli's `json_schema_test_suite_cli`) agrees on every test.
const UNJUDGED_ON_PURPOSE: [&str; 1] = [
    "const.json / float and integers are equal up to 64-bit representation limits / float is valid",
];

fn run_file(path: &Path, options: &CompileOptions, tally: &mut Tally) {
    let groups: Vec<Value> = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let file = path.file_name().unwrap().to_string_lossy().to_string();
    for group in groups {
        tally.groups += 1;
        let description = group["description"].as_str().unwrap_or_default();
        let tests = group["tests"].as_array().unwrap();
        let validator = match SchemaValidator::with_options(&group["schema"], options) {
            Ok(v) => v,
            Err(e) => {
                tally.tests += tests.len();
                tally.failures.push(format!(
                    "{file} / {description}: schema did not compile: {e}"
                ));
                continue;
            }
        };
        for test in tests {
            tally.tests += 1;
            let expected = test["valid"].as_bool().unwrap();
            let data = &test["data"];
            let fast = validator.is_valid(data);
            let full = validator.validate_as(data, Subject::Value);
            let test_name = format!(
                "{file} / {description} / {}",
                test["description"].as_str().unwrap_or_default()
            );
            if UNJUDGED_ON_PURPOSE.contains(&test_name.as_str()) {
                // Refused as "could not be checked", never judged either way.
                assert!(
                    !fast && full.as_ref().is_err_and(|e| e.is_unchecked()),
                    "{test_name}: {full:?}"
                );
                continue;
            }
            if fast != expected || full.is_ok() != expected {
                tally.failures.push(format!(
                    "{file} / {description} / {}: expected valid={expected}, is_valid={fast}, validate={:?}",
                    test["description"].as_str().unwrap_or_default(),
                    full.err().map(|e| e.to_string())
                ));
            }
            if let Err(errors) = validator.validate_as(data, Subject::Value) {
                for error in &errors {
                    assert!(
                        !error.message.is_empty(),
                        "empty message in {file} / {description}"
                    );
                }
            }
        }
    }
}

fn run(draft: &str, dialect: Dialect, subdir: Option<&str>, assert_format: bool) -> Tally {
    let options = support::with_suite_remotes(
        CompileOptions::new()
            .dialect(dialect)
            .assert_format(assert_format),
    );
    let mut dir = suite_dir().join("tests").join(draft);
    if let Some(sub) = subdir {
        dir = dir.join(sub);
    }
    let mut tally = Tally::default();
    for file in support::json_files(&dir) {
        run_file(&file, &options, &mut tally);
    }
    tally
}

fn report(name: &str, tally: &Tally) {
    let passed = tally.tests - tally.failures.len();
    println!(
        "{name}: {passed}/{} tests agree ({} schema groups)",
        tally.tests, tally.groups
    );
    for failure in &tally.failures {
        println!("  DISAGREES: {failure}");
    }
}

#[test]
fn draft2020_12_required_tests_all_agree() {
    let tally = run("draft2020-12", Dialect::Draft202012, None, false);
    report("draft2020-12 required", &tally);
    assert!(tally.tests > 1000, "suite not found or empty");
    assert!(
        tally.failures.is_empty(),
        "{} disagreements",
        tally.failures.len()
    );
}

#[test]
fn draft7_required_tests_all_agree() {
    let tally = run("draft7", Dialect::Draft7, None, false);
    report("draft7 required", &tally);
    assert!(tally.tests > 800, "suite not found or empty");
    assert!(
        tally.failures.is_empty(),
        "{} disagreements",
        tally.failures.len()
    );
}

#[test]
fn draft2020_12_optional_format_tests_agree_with_format_assertion() {
    let tally = run(
        "draft2020-12",
        Dialect::Draft202012,
        Some("optional/format"),
        true,
    );
    report("draft2020-12 optional/format", &tally);
    assert!(tally.tests > 100, "suite not found or empty");
    assert!(
        tally.failures.is_empty(),
        "{} disagreements",
        tally.failures.len()
    );
}

#[test]
fn draft7_optional_format_tests_agree_with_format_assertion() {
    let tally = run("draft7", Dialect::Draft7, Some("optional/format"), true);
    report("draft7 optional/format", &tally);
    assert!(tally.tests > 100, "suite not found or empty");
    assert!(
        tally.failures.is_empty(),
        "{} disagreements",
        tally.failures.len()
    );
}
