//! Validating tool-call arguments against the real catalog schemas (captured by scripts/test-data.sh):
//! toolschema's `CompiledTool::validate_input` next to the jsonschema engine used raw on the same
//! schemas, for valid and invalid calls. Prints the ratios at the end.
//!
//! Run: `cargo bench -p toolschema --bench validate`. The test command runs it as a test
//! (`cargo test --bench validate`): criterion then runs each benchmark once, in the dev profile,
//! and there are no figures to print.

#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

#[path = "../tests/support/mod.rs"]
mod support;

use criterion::Criterion;
use serde_json::{json, Value};
use std::hint::black_box;
use std::path::Path;
use toolschema::{Catalog, CompiledTool};

struct Case {
    compiled: CompiledTool,
    raw: jsonschema::Validator,
    arguments: Value,
}

fn catalog(name: &str) -> Catalog {
    Catalog::from_json(name, &support::real_catalog_text(name)).unwrap()
}

/// Calls against the real schemas: (catalog, tool, valid arguments, invalid arguments).
fn calls() -> Vec<(&'static str, &'static str, Value, Value)> {
    vec![
        (
            "everything",
            "echo",
            json!({"message": "hello"}),
            json!({"message": 5}),
        ),
        (
            "everything",
            "get-sum",
            json!({"a": 1, "b": 2.5}),
            json!({"a": "1"}),
        ),
        (
            "everything",
            "get-resource-links",
            json!({"count": 3}),
            json!({"count": 11}),
        ),
        (
            "everything",
            "get-structured-content",
            json!({"location": "Chicago"}),
            json!({"location": "Boston"}),
        ),
        (
            "everything",
            "trigger-long-running-operation",
            json!({"duration": 5, "steps": 3}),
            json!({"duration": "5"}),
        ),
        (
            "filesystem",
            "write_file",
            json!({"path": "/tmp/a.txt", "content": "hello world"}),
            json!({"path": 42}),
        ),
        (
            "filesystem",
            "edit_file",
            json!({"path": "/tmp/a.txt", "edits": [{"oldText": "a", "newText": "b"}, {"oldText": "c", "newText": "d"}], "dryRun": true}),
            json!({"path": "/tmp/a.txt", "edits": [{"oldText": "a"}, {"newText": 3}]}),
        ),
        (
            "filesystem",
            "read_multiple_files",
            json!({"paths": ["/a", "/b", "/c"]}),
            json!({"paths": []}),
        ),
        (
            "filesystem",
            "list_directory_with_sizes",
            json!({"path": "/tmp", "sortBy": "size"}),
            json!({"path": "/tmp", "sortBy": "date"}),
        ),
        (
            "filesystem",
            "search_files",
            json!({"path": "/tmp", "pattern": "*.rs", "excludePatterns": ["target"]}),
            json!({"pattern": 1}),
        ),
    ]
}

fn cases(valid: bool) -> Vec<Case> {
    let catalogs = [
        ("everything", catalog("everything")),
        ("filesystem", catalog("filesystem")),
    ];
    calls()
        .into_iter()
        .map(|(cat, tool, good, bad)| {
            let catalog = &catalogs.iter().find(|(n, _)| *n == cat).unwrap().1;
            let tool = catalog.require(tool).unwrap();
            let compiled = tool.compile().unwrap();
            let schema = Value::Object(tool.input_schema().clone());
            let raw = jsonschema::options()
                .with_draft(jsonschema::Draft::Draft7)
                .build(&schema)
                .unwrap();
            let arguments = if valid { good } else { bad };
            assert_eq!(
                compiled.validate_input(&arguments).is_ok(),
                valid,
                "{arguments}"
            );
            Case {
                compiled,
                raw,
                arguments,
            }
        })
        .collect()
}

fn bench(c: &mut Criterion) {
    let valid = cases(true);
    let invalid = cases(false);

    let mut group = c.benchmark_group("valid");
    group.bench_function("toolschema_validate_input", |b| {
        b.iter(|| {
            for case in &valid {
                black_box(
                    case.compiled
                        .validate_input(black_box(&case.arguments))
                        .is_ok(),
                );
            }
        })
    });
    group.bench_function("jsonschema_is_valid", |b| {
        b.iter(|| {
            for case in &valid {
                black_box(case.raw.is_valid(black_box(&case.arguments)));
            }
        })
    });
    group.bench_function("jsonschema_validate", |b| {
        b.iter(|| {
            for case in &valid {
                black_box(case.raw.validate(black_box(&case.arguments)).is_ok());
            }
        })
    });
    group.finish();

    let mut group = c.benchmark_group("invalid");
    group.bench_function("toolschema_validate_input", |b| {
        b.iter(|| {
            for case in &invalid {
                black_box(
                    case.compiled
                        .validate_input(black_box(&case.arguments))
                        .unwrap_err(),
                );
            }
        })
    });
    group.bench_function("jsonschema_iter_errors_messages", |b| {
        b.iter(|| {
            for case in &invalid {
                let messages: Vec<String> = case
                    .raw
                    .iter_errors(black_box(&case.arguments))
                    .map(|e| e.to_string())
                    .collect();
                black_box(messages);
            }
        })
    });
    group.finish();
}

/// Mean time in ns of one benchmark, from criterion's saved estimates.
fn mean_ns(group: &str, function: &str) -> Option<f64> {
    let dir = std::env::var("CARGO_TARGET_DIR").unwrap_or_else(|_| {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../target")
            .to_string_lossy()
            .into_owned()
    });
    let path = Path::new(&dir)
        .join("criterion")
        .join(group)
        .join(function)
        .join("new/estimates.json");
    let estimates: Value = serde_json::from_str(&std::fs::read_to_string(path).ok()?).ok()?;
    estimates["mean"]["point_estimate"].as_f64()
}

fn main() {
    let mut criterion = Criterion::default().configure_from_args();
    bench(&mut criterion);
    criterion.final_summary();
    // Only `cargo bench` passes `--bench`; without it criterion ran each benchmark once, as a
    // test, and the estimates on disk are an earlier run's.
    if !std::env::args().any(|arg| arg == "--bench") {
        return;
    }
    let n = calls().len() as f64;
    let ratio = |group: &str, ours: &str, raw: &str| {
        if let (Some(a), Some(b)) = (mean_ns(group, ours), mean_ns(group, raw)) {
            println!(
                "{group}: toolschema {:.0} ns/call, {raw} {:.0} ns/call, ratio {:.3}",
                a / n,
                b / n,
                a / b
            );
        }
    };
    println!(
        "\nper call, over {} calls on the real catalog schemas:",
        calls().len()
    );
    ratio("valid", "toolschema_validate_input", "jsonschema_is_valid");
    ratio("valid", "toolschema_validate_input", "jsonschema_validate");
    ratio(
        "invalid",
        "toolschema_validate_input",
        "jsonschema_iter_errors_messages",
    );
}
