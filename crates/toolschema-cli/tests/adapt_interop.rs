//! `toolschema adapt` against the providers' own SDK and against the converters people use
//! (PyPI packages `scripts/test.sh` installs into .venv, driven by interop/adapt_check.py):
//!
//! - the Gemini declarations of the real catalogs load in google-genai's `FunctionDeclaration`;
//! - on the same schemas, openai-agents' `ensure_strict_json_schema` and pydantic-ai's OpenAI and
//!   Google transformers fail, stay non-strict, change what the schema accepts, or drop keywords
//!   without a word where `adapt` reports every loss or refuses with the reason.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;
#[path = "../../toolschema/tests/support/mod.rs"]
mod support;

use common::{require, root, run, toolschema};
use serde_json::Value;
use std::collections::BTreeMap;
use std::time::Duration;

/// Python scripts import pydantic-ai and google-genai, slow on a loaded machine.
const PYTHON_WAIT: Duration = Duration::from_secs(180);

fn python() -> String {
    require(".venv/bin/python").display().to_string()
}

#[test]
fn gemini_declarations_of_real_servers_load_in_google_genai() {
    let dir = tempfile::tempdir().unwrap();
    for name in support::REAL_CATALOGS {
        let catalog = support::real_catalog_path(name);
        for profile in ["gemini-openapi", "gemini"] {
            let (status, stdout, stderr) = run(
                toolschema(),
                &[
                    "adapt".into(),
                    catalog.display().to_string(),
                    "--to".into(),
                    profile.into(),
                    "--tools-only".into(),
                ],
                Duration::from_secs(60),
            );
            assert!(status.success(), "{name} to {profile}: {stderr}");
            let path = dir.path().join(format!("{name}-{profile}.json"));
            std::fs::write(&path, &stdout).unwrap();
            let count = serde_json::from_str::<Value>(&stdout)
                .unwrap()
                .as_array()
                .unwrap()
                .len();
            let (status, out, err) = run(
                &python(),
                &[
                    root().join("interop/adapt_check.py").display().to_string(),
                    "genai".into(),
                    path.display().to_string(),
                ],
                PYTHON_WAIT,
            );
            assert!(status.success(), "{name} to {profile}: {out}{err}");
            assert_eq!(
                out.trim_end(),
                format!("{count} of {count} declarations load in google-genai FunctionDeclaration")
            );
        }
    }
}

type Rows = Vec<Value>;

fn verdict<'r>(rows: &'r Rows, case: &str, target: &str, who: &str) -> &'r Value {
    rows.iter()
        .find(|r| r["case"] == case && r["target"] == target)
        .map(|r| &r["results"][who])
        .unwrap_or_else(|| panic!("no row {case} {target}"))
}

fn list<'v>(verdict: &'v Value, key: &str) -> Vec<&'v str> {
    verdict[key]
        .as_array()
        .map(|l| l.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default()
}

#[test]
fn adapt_reports_what_the_peers_lose_or_get_wrong() {
    let mut args = vec![
        root().join("interop/adapt_check.py").display().to_string(),
        "differential".into(),
        root()
            .join("interop/adapt-cases.json")
            .display()
            .to_string(),
    ];
    for name in support::REAL_CATALOGS {
        args.push(support::real_catalog_path(name).display().to_string());
    }
    args.extend(["--toolschema".into(), toolschema().into(), "--json".into()]);
    let (status, stdout, stderr) = run(&python(), &args, PYTHON_WAIT);
    assert!(status.success(), "{stderr}");
    let rows: Rows = serde_json::from_str(&stdout).unwrap();

    // adapt: whatever it writes, the provider takes, and nothing leaves without a loss line.
    let mut refused: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for row in &rows {
        let ours = &row["results"]["toolschema adapt"];
        let case = row["case"].as_str().unwrap();
        let target = row["target"].as_str().unwrap();
        if ours.get("fails").is_some() {
            refused
                .entry(target.to_string())
                .or_default()
                .push(case.to_string());
            continue;
        }
        for key in [
            "not_strict",
            "provider_refuses",
            "genai_refuses",
            "optional_made_required",
            "narrowed",
            "silent_drops",
        ] {
            assert_eq!(list(ours, key), Vec::<&str>::new(), "{case} {target} {key}");
        }
    }
    // What adapt refuses, with the reason, instead of changing the schema's meaning.
    let expect = |items: &[&str]| items.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    assert_eq!(
        refused.get("openai-strict").cloned().unwrap_or_default(),
        expect(&[
            "any_of_and_one_of",
            "array_without_items",
            "free_form_object",
            "string_map",
            "undeclared_required",
        ])
    );
    assert_eq!(
        refused.get("gemini").cloned().unwrap_or_default(),
        expect(&["any_of_and_one_of"])
    );
    assert_eq!(
        refused.get("gemini-openapi").cloned().unwrap_or_default(),
        expect(&["any_of_and_one_of", "recursive"])
    );

    // openai-agents' ensure_strict_json_schema.
    let agents = |case| verdict(&rows, case, "openai-strict", "openai-agents");
    assert_eq!(
        list(agents("optional_property"), "optional_made_required"),
        ["/properties/limit"]
    );
    assert_eq!(
        list(agents("format_uri"), "not_strict"),
        ["/properties/url: format uri"]
    );
    assert_eq!(
        list(agents("overlapping_one_of"), "silent_drops"),
        ["oneOf"]
    );
    assert_eq!(list(agents("any_of_and_one_of"), "silent_drops"), ["oneOf"]);
    assert_eq!(
        list(agents("free_form_object"), "narrowed"),
        ["/properties/meta"]
    );
    assert!(agents("root_union")["fails"].is_string());
    assert_eq!(
        list(agents("gzip-file-as-resource"), "optional_made_required"),
        [
            "/properties/name",
            "/properties/data",
            "/properties/outputType"
        ]
    );

    // pydantic-ai's OpenAI transformer.
    let pydantic = |case| verdict(&rows, case, "openai-strict", "pydantic-ai OpenAI");
    assert_eq!(pydantic("optional_property")["stays_non_strict"], true);
    assert_eq!(list(pydantic("default_value"), "silent_drops"), ["default"]);
    assert_eq!(
        list(pydantic("string_map"), "narrowed"),
        ["/properties/labels"]
    );
    assert!(pydantic("array_without_items")["fails"].is_string());

    // pydantic-ai's Google transformers.
    let google = |case| verdict(&rows, case, "gemini", "pydantic-ai Google");
    assert_eq!(
        list(google("string_bounds"), "provider_refuses"),
        [
            "/properties/q: minLength",
            "/properties/q: maxLength",
            "/properties/q: pattern"
        ]
    );
    assert_eq!(
        list(google("undeclared_required"), "provider_refuses"),
        [": required b undeclared"]
    );
    let openapi = |case| verdict(&rows, case, "gemini-openapi", "pydantic-ai GoogleOpenAPI");
    assert_eq!(
        list(openapi("nullable_type_list"), "genai_refuses").len(),
        1
    );
    assert_eq!(
        list(openapi("exclusive_bound"), "silent_drops"),
        [
            "additionalProperties",
            "exclusiveMaximum",
            "exclusiveMinimum"
        ]
    );
    assert_eq!(
        list(google("exclusive_bound"), "silent_drops"),
        ["exclusiveMaximum", "exclusiveMinimum"]
    );
    assert!(openapi("recursive")["fails"].is_string());
}
