//! `toolschema::adapt` on the real catalogs the test command captures from live servers
//! (server-everything, server-filesystem, mcp-server-time): for every profile, the adapted tools
//! pass a checker of the provider's published rules held here (apart from the profiles), the
//! Anthropic schemas pass the JSON Schema 2020-12 meta-schema, and every keyword the adapted
//! schema uses less than the original is in the loss report.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod provider_rules;
mod support;

use serde_json::{json, Value};
use std::collections::BTreeSet;
use toolschema::adapt::{adapt, LossAction, PROFILES};
use toolschema::json::pointer::resolve;
use toolschema::Catalog;

fn catalog(name: &str) -> Catalog {
    Catalog::from_json(&format!("{name}.json"), &support::real_catalog_text(name)).unwrap()
}

#[test]
fn every_profile_takes_every_real_tool_and_reports_every_loss() {
    let meta = jsonschema::draft202012::meta::validator();
    for name in support::REAL_CATALOGS {
        let catalog = catalog(name);
        for profile in PROFILES {
            let adaptation = adapt(profile, catalog.tools());
            assert_eq!(adaptation.failures(), [], "{name} to {profile}");
            assert_eq!(adaptation.tools().len(), catalog.len());
            let check = provider_rules::checker(profile.name);
            for tool in adaptation.tools() {
                let request = tool.to_request();
                let what = format!("{name}/{} to {profile}", tool.original().name());
                assert_eq!(check(&request), Vec::<String>::new(), "{what}: {request}");
                let schema = provider_rules::schema_of(&request);
                if profile.name == "anthropic" {
                    assert!(meta.is_valid(schema), "{what}: not 2020-12");
                }
                let original = tool.original().to_value();
                let lost = provider_rules::keywords_lost(&original["inputSchema"], schema);
                let reported: BTreeSet<&str> =
                    tool.losses().iter().map(|l| l.keyword.as_str()).collect();
                for keyword in &lost {
                    assert!(
                        reported.contains(keyword.as_str()),
                        "{what}: {keyword} left the schema without a loss line"
                    );
                }
                for loss in tool.losses() {
                    assert_eq!(loss.tool, tool.original().name());
                    assert!(
                        resolve(&original, &loss.pointer).is_some(),
                        "{what}: {} points at nothing",
                        loss.pointer
                    );
                }
            }
        }
    }
}

#[test]
fn what_each_provider_loses_of_server_everything() {
    let catalog = catalog("everything");
    let summary = |profile: &str| -> Vec<(String, String, LossAction)> {
        let profile = toolschema::adapt::profile(profile).unwrap();
        let adaptation = adapt(profile, catalog.tools());
        let mut kinds: Vec<(String, String, LossAction)> = adaptation
            .losses()
            .map(|l| (l.tool.clone(), l.keyword.clone(), l.action))
            .filter(|(tool, _, _)| tool == "gzip-file-as-resource")
            .collect();
        kinds.sort();
        kinds
    };
    let strict = summary("openai-strict");
    let line = |keyword: &str, action| {
        (
            "gzip-file-as-resource".to_string(),
            keyword.to_string(),
            action,
        )
    };
    assert!(strict.contains(&line("format", LossAction::MovedToDescription)));
    assert!(strict.contains(&line("default", LossAction::MovedToDescription)));
    assert!(strict.contains(&line("required", LossAction::Rewritten)));
    assert!(strict.contains(&line("additionalProperties", LossAction::Rewritten)));
    // OpenAI's non-strict function tools take these schemas as they are.
    assert_eq!(summary("openai"), []);
    // The OpenAPI subset reads default and format: only the draft-07 $schema goes.
    assert_eq!(
        summary("gemini-openapi"),
        [line("$schema", LossAction::Dropped)]
    );

    // What strict mode makes of the tool, and a call back.
    let strict = toolschema::adapt::profile("openai-strict").unwrap();
    let adaptation = adapt(strict, catalog.tools());
    let tool = adaptation.tool("gzip-file-as-resource").unwrap();
    assert_eq!(
        tool.schema()["properties"]["data"],
        json!({
            "type": ["string", "null"],
            "description": "URL or data URI of the file content to compress. Default: \
                \"https://raw.githubusercontent.com/modelcontextprotocol/servers/refs/heads/main/README.md\". \
                Format: uri."
        })
    );
    let sent = json!({"name": "out.gz", "data": null, "outputType": null});
    assert_eq!(
        tool.restore_arguments(&sent).unwrap(),
        json!({"name": "out.gz"})
    );
    let wrong = json!({"name": 3, "data": null, "outputType": "nope"});
    let error = tool.restore_arguments(&wrong).unwrap_err().to_string();
    assert!(error.contains("argument 'name'"), "{error}");
}

#[test]
fn time_server_titles_survive_where_providers_read_them() {
    let catalog = catalog("time");
    for profile in PROFILES {
        let adaptation = adapt(profile, catalog.tools());
        let tool = adaptation.tool("convert_time").unwrap();
        let title = &tool.schema()["properties"]["time"]["title"];
        assert_eq!(title, &Value::String("Time".into()), "{profile}");
    }
}
