//! Property tests of `toolschema::generate`: over every schema of the JSON Schema Test Suite
//! (draft 2020-12 and draft-07, `remotes/` registered) and every tool of the real catalogs, the
//! generator and the validator agree: a valid case validates, an invalid one does not, with the
//! errors the case carries. The same seed gives the same cases. And the generator is useful:
//! where the suite shows a schema has valid (invalid) values, it finds some for most schemas.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use proptest::prelude::*;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::PathBuf;
use toolschema::generate::{self, GenerateOptions, Kind};
use toolschema::{Catalog, CompileOptions, Dialect, SchemaValidator, Subject};

fn suite_dir() -> PathBuf {
    support::json_schema_test_suite()
}

/// One schema of the suite, compiled, and whether the suite shows valid and invalid values for it.
struct SuiteSchema {
    name: String,
    validator: SchemaValidator,
    has_valid: bool,
    has_invalid: bool,
}

fn suite_schemas(draft: &str, dialect: Dialect, assert_format: bool) -> Vec<SuiteSchema> {
    let options = support::with_suite_remotes(
        CompileOptions::new()
            .dialect(dialect)
            .assert_format(assert_format),
    );
    let mut out = Vec::new();
    for file in support::json_files(&suite_dir().join("tests").join(draft)) {
        let groups: Vec<Value> =
            serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
        let file_name = file.file_name().unwrap().to_string_lossy().to_string();
        for group in groups {
            let Ok(validator) = SchemaValidator::with_options(&group["schema"], &options) else {
                continue;
            };
            let tests = group["tests"].as_array().unwrap();
            out.push(SuiteSchema {
                name: format!(
                    "{file_name} / {}",
                    group["description"].as_str().unwrap_or_default()
                ),
                validator,
                has_valid: tests.iter().any(|t| t["valid"] == Value::Bool(true)),
                has_invalid: tests.iter().any(|t| t["valid"] == Value::Bool(false)),
            });
        }
    }
    out
}

#[derive(Default, Debug)]
struct Tally {
    schemas: usize,
    cases: usize,
    valid: usize,
    invalid: usize,
    found_valid: usize,
    could_have_valid: usize,
    found_invalid: usize,
    could_have_invalid: usize,
    skip_reasons: BTreeMap<String, usize>,
}

/// Generate for every schema with a few seeds; every case must be what it says.
fn check_suite(schemas: &[SuiteSchema], seeds: &[u64]) -> Tally {
    let mut tally = Tally::default();
    let mut disagreements = Vec::new();
    for schema in schemas {
        tally.schemas += 1;
        let (mut any_valid, mut any_invalid) = (false, false);
        for &seed in seeds {
            let generated =
                generate::values(&schema.validator, &GenerateOptions { seed, cases: 40 });
            for case in &generated.cases {
                tally.cases += 1;
                let value = case.value.as_ref().expect("values always have a value");
                let fast = schema.validator.is_valid(value);
                let full =
                    schema
                        .validator
                        .validate_first(value, Subject::Value, generate::MAX_ERRORS);
                let valid = case.kind == Kind::Valid;
                if fast != valid || full.is_ok() != valid {
                    disagreements.push(format!(
                        "{} / seed {seed} / {}: {value}",
                        schema.name, case.label
                    ));
                }
                if let Err(errors) = &full {
                    let messages: Vec<&str> = errors.iter().map(|e| e.message.as_str()).collect();
                    let carried: Vec<&str> =
                        case.errors.iter().map(|e| e.message.as_str()).collect();
                    assert_eq!(carried, messages, "{} / {}", schema.name, case.label);
                }
                if valid {
                    tally.valid += 1;
                    any_valid = true;
                } else {
                    tally.invalid += 1;
                    any_invalid = true;
                }
            }
            for skipped in &generated.skipped {
                let reason = skipped
                    .reason
                    .split(':')
                    .next()
                    .unwrap_or_default()
                    .to_string();
                *tally.skip_reasons.entry(reason).or_default() += 1;
            }
        }
        if schema.has_valid {
            tally.could_have_valid += 1;
            tally.found_valid += usize::from(any_valid);
        }
        if schema.has_invalid {
            tally.could_have_invalid += 1;
            tally.found_invalid += usize::from(any_invalid);
        }
    }
    assert!(
        disagreements.is_empty(),
        "{} disagreements:\n{}",
        disagreements.len(),
        disagreements.join("\n")
    );
    tally
}

fn report(name: &str, tally: &Tally) {
    println!(
        "{name}: {} schemas, {} cases ({} valid, {} invalid); valid values found for {}/{} schemas that have them, invalid for {}/{}",
        tally.schemas, tally.cases, tally.valid, tally.invalid, tally.found_valid, tally.could_have_valid,
        tally.found_invalid, tally.could_have_invalid
    );
    for (reason, count) in &tally.skip_reasons {
        println!("  skipped {count}x: {reason}");
    }
}

/// The share of schemas with valid (invalid) values the generator must find them for. Measured
/// with seeds 0 and 1: valid 98-99%, invalid 94-97% (what is left is mostly `$ref`s through
/// relative `$id`s, and faults only `dependentSchemas` or `if`/`then` can express); the bounds
/// sit a little below, so the test fails when the generator gets worse, not when the suite grows.
const VALID_FOUND: f64 = 0.97;
const INVALID_FOUND: f64 = 0.92;

fn assert_useful(tally: &Tally) {
    let valid = tally.found_valid as f64 / tally.could_have_valid as f64;
    let invalid = tally.found_invalid as f64 / tally.could_have_invalid as f64;
    assert!(
        valid >= VALID_FOUND,
        "valid values found for only {:.1}% of schemas",
        valid * 100.0
    );
    assert!(
        invalid >= INVALID_FOUND,
        "invalid values found for only {:.1}% of schemas",
        invalid * 100.0
    );
}

#[test]
fn draft2020_12_schemas_generator_and_validator_agree() {
    let schemas = suite_schemas("draft2020-12", Dialect::Draft202012, false);
    assert!(schemas.len() > 300, "suite not found or empty");
    let tally = check_suite(&schemas, &[0, 1]);
    report("draft2020-12", &tally);
    assert_useful(&tally);
}

#[test]
fn draft7_schemas_generator_and_validator_agree() {
    let schemas = suite_schemas("draft7", Dialect::Draft7, false);
    assert!(schemas.len() > 250, "suite not found or empty");
    let tally = check_suite(&schemas, &[0, 1]);
    report("draft7", &tally);
    assert_useful(&tally);
}

#[test]
fn format_schemas_agree_with_format_assertion_on() {
    for (draft, dialect) in [
        ("draft2020-12", Dialect::Draft202012),
        ("draft7", Dialect::Draft7),
    ] {
        let options =
            support::with_suite_remotes(CompileOptions::new().dialect(dialect).assert_format(true));
        let mut schemas = Vec::new();
        for file in support::json_files(
            &suite_dir()
                .join("tests")
                .join(draft)
                .join("optional/format"),
        ) {
            let groups: Vec<Value> =
                serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
            for group in groups {
                let validator = SchemaValidator::with_options(&group["schema"], &options).unwrap();
                schemas.push(SuiteSchema {
                    name: format!(
                        "{} / {}",
                        file.display(),
                        group["description"].as_str().unwrap_or_default()
                    ),
                    validator,
                    has_valid: true,
                    has_invalid: true,
                });
            }
        }
        let tally = check_suite(&schemas, &[0, 1]);
        report(&format!("{draft} formats"), &tally);
        assert_useful(&tally);
    }
}

fn catalogs() -> Vec<Catalog> {
    support::REAL_CATALOGS
        .into_iter()
        .map(|name| {
            Catalog::from_json(&format!("{name}.json"), &support::real_catalog_text(name)).unwrap()
        })
        .collect()
}

#[test]
fn real_catalog_tools_generator_and_validator_agree() {
    let options = CompileOptions::new().assert_format(true);
    let mut tools = 0;
    for catalog in catalogs() {
        for tool in catalog.tools() {
            tools += 1;
            let compiled = tool.compile_with(&options).unwrap();
            let mut kinds = (0, 0);
            for seed in 0..5 {
                let generated =
                    generate::arguments(&compiled, &GenerateOptions { seed, cases: 150 });
                for case in &generated.cases {
                    let arguments = case.value.clone().unwrap_or(serde_json::json!({}));
                    let verdict = compiled.validate_input(&arguments);
                    assert_eq!(
                        verdict.is_ok(),
                        case.kind == Kind::Valid,
                        "{} / {}: {arguments}",
                        tool.name(),
                        case.label
                    );
                    if case.kind == Kind::Valid {
                        kinds.0 += 1;
                    } else {
                        kinds.1 += 1;
                    }
                }
                let labels: Vec<&str> = generated.cases.iter().map(|c| c.label.as_str()).collect();
                assert!(labels.contains(&"arguments absent"), "{}", tool.name());
                assert!(
                    labels.contains(&"arguments sent as JSON text"),
                    "{}",
                    tool.name()
                );
                for required in tool
                    .input_schema()
                    .get("required")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                {
                    let missing = format!("missing required '{}'", required.as_str().unwrap());
                    assert!(
                        labels.contains(&missing.as_str()),
                        "{}: {missing}",
                        tool.name()
                    );
                }
            }
            assert!(kinds.0 > 0 && kinds.1 > 0, "{}: {kinds:?}", tool.name());
        }
    }
    assert!(tools >= 29, "{tools}");
}

#[test]
fn the_same_seed_gives_the_same_cases_for_every_catalog_tool() {
    for catalog in catalogs() {
        for tool in catalog.tools() {
            let compiled = tool.compile().unwrap();
            let options = GenerateOptions {
                seed: 77,
                cases: 60,
            };
            let one = generate::arguments(&compiled, &options);
            let two = generate::arguments(&compiled, &options);
            assert_eq!(one.cases, two.cases, "{}", tool.name());
        }
    }
}

/// Schemas that exercise every kind of keyword, for arbitrary seeds.
fn keyword_schemas() -> Vec<Value> {
    serde_json::from_str(r##"[
        {"type": "object", "properties": {"q": {"type": "string", "pattern": "^[a-z0-9_-]{2,16}$"},
            "n": {"type": "integer", "exclusiveMinimum": 0, "multipleOf": 5}, "tags": {"type": "array",
            "items": {"enum": ["a", "b", "c"]}, "uniqueItems": true, "maxItems": 3}}, "required": ["q"],
            "additionalProperties": false},
        {"$defs": {"node": {"type": "object", "properties": {"value": {"type": "number"},
            "next": {"$ref": "#/$defs/node"}}, "required": ["value"]}}, "$ref": "#/$defs/node"},
        {"oneOf": [{"type": "string", "format": "email"}, {"type": "integer", "minimum": 10}]},
        {"type": "array", "prefixItems": [{"type": "string"}, {"type": "boolean"}], "items": false},
        {"type": "object", "patternProperties": {"^x-": {"type": "string"}}, "minProperties": 1,
            "unevaluatedProperties": false},
        {"type": "object", "properties": {"a": {"type": "string"}}, "dependentRequired": {"a": ["b"]}},
        {"if": {"properties": {"kind": {"const": "n"}}}, "then": {"properties": {"v": {"type": "number"}}},
            "else": {"properties": {"v": {"type": "string"}}}, "type": "object"},
        {"type": ["string", "null"], "maxLength": 0},
        {"not": {"type": "object"}},
        {"type": "string", "format": "date-time"},
        {"type": "number", "minimum": -1e308, "maximum": 1e308}
    ]"##).unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn any_seed_gives_cases_that_are_what_they_say(seed in any::<u64>(), which in 0usize..11) {
        let schema = &keyword_schemas()[which];
        let options = CompileOptions::new().assert_format(true);
        let validator = SchemaValidator::with_options(schema, &options).unwrap();
        let generated = generate::values(&validator, &GenerateOptions { seed, cases: 60 });
        let again = generate::values(&validator, &GenerateOptions { seed, cases: 60 });
        prop_assert_eq!(&generated.cases, &again.cases);
        prop_assert!(generated.cases.iter().any(|c| c.kind == Kind::Valid), "{}", schema);
        for case in &generated.cases {
            let value = case.value.as_ref().unwrap();
            prop_assert_eq!(validator.is_valid(value), case.kind == Kind::Valid, "{}: {}", case.label, value);
        }
    }

    #[test]
    fn shrinking_never_grows_a_generated_case(seed in any::<u64>(), which in 0usize..11) {
        let schema = &keyword_schemas()[which];
        let validator = SchemaValidator::new(schema).unwrap();
        let generated = generate::values(&validator, &GenerateOptions { seed, cases: 20 });
        for case in &generated.cases {
            let value = case.value.as_ref().unwrap();
            let size = value.to_string().len() + 1;
            for smaller in generate::smaller(value) {
                prop_assert!(smaller.to_string().len() <= size);
                prop_assert_ne!(&smaller, value);
            }
        }
    }
}
