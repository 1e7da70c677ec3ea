use super::*;
use crate::{CompileOptions, Tool};
use serde_json::json;

fn tool(schema: Value) -> CompiledTool {
    Tool::from_value(json!({"name": "t", "inputSchema": schema}))
        .unwrap()
        .compile_with(&CompileOptions::new().assert_format(true))
        .unwrap()
}

fn labels(generated: &Generated) -> Vec<&str> {
    generated.cases.iter().map(|c| c.label.as_str()).collect()
}

fn options(seed: u64, cases: usize) -> GenerateOptions {
    GenerateOptions { seed, cases }
}

/// Every case is what it says, by the tool's own validator.
fn assert_judged(compiled: &CompiledTool, generated: &Generated) {
    for case in &generated.cases {
        let arguments = case.value.clone().unwrap_or(json!({}));
        let verdict = compiled.validate_input(&arguments);
        assert_eq!(
            verdict.is_ok(),
            case.kind == Kind::Valid,
            "{}: {arguments}",
            case.label
        );
        assert_eq!(
            case.errors.is_empty(),
            case.kind == Kind::Valid,
            "{}",
            case.label
        );
    }
}

#[test]
fn a_search_tool_gets_every_kind_of_case() {
    let compiled = tool(json!({
        "type": "object",
        "properties": {
            "query": {"type": "string", "minLength": 1, "maxLength": 20},
            "limit": {"type": "integer", "minimum": 1, "maximum": 100},
            "sort": {"enum": ["relevance", "newest"]},
            "since": {"type": "string", "format": "date"},
            "code": {"type": "string", "pattern": "^[A-Z]{3}$"},
            "tags": {"type": "array", "items": {"type": "string"}, "maxItems": 3, "uniqueItems": true},
            "strict": {"type": "boolean"}
        },
        "required": ["query"],
        "additionalProperties": false
    }));
    let generated = arguments(&compiled, &options(1, 1_000));
    assert_judged(&compiled, &generated);
    let labels = labels(&generated);
    for expected in [
        "every optional property",
        "only the required properties",
        "arguments absent",
        "arguments {}",
        "arguments sent as JSON text",
        "missing required 'query'",
        "'limit' at its minimum (1)",
        "'limit' at its maximum (100)",
        "'limit' below its minimum (0)",
        "'limit' above its maximum (101)",
        "'limit' as a string (\"",
        "'limit' a fraction where an integer is expected",
        "'query' at its maxLength (20)",
        "'query' longer than its maxLength (21)",
        "'query' shorter than its minLength (0)",
        "'query' with astral characters",
        "'query' with a NUL character",
        "'query' is null",
        "'sort' = \"relevance\" (enum)",
        "'sort' = \"newest\" (enum)",
        "'sort' = \"RELEVANCE\", not one of its allowed values",
        "'since' is not a valid date",
        "'code' does not match its pattern",
        "'tags' with a repeated item",
        "'tags' with more items than its maxItems (4)",
        "'tags' sent as JSON text",
        "'tags' as one item instead of a list",
        "'strict' as a string (\"",
        "the arguments with undeclared property",
        "an invented extra argument",
    ] {
        assert!(
            labels.iter().any(|l| l.starts_with(expected)),
            "no case starts with {expected:?}; got {labels:#?}"
        );
    }
    let kinds: HashSet<Kind> = generated.cases.iter().map(|c| c.kind).collect();
    assert_eq!(kinds.len(), 2);
    assert!(generated
        .cases
        .iter()
        .any(|c| c.category == Category::Oversized && c.kind == Kind::Invalid));
    assert!(generated
        .cases
        .iter()
        .any(|c| c.category == Category::DeepNesting));
    // Absent arguments are judged as `{}`: invalid here, since `query` is required.
    let absent = generated.cases.iter().find(|c| c.value.is_none()).unwrap();
    assert_eq!(absent.kind, Kind::Invalid);
    assert_eq!(
        absent.errors[0].message,
        "missing required argument 'query'"
    );
}

#[test]
fn the_same_seed_gives_the_same_cases_and_another_seed_other_ones() {
    let compiled = tool(json!({"type": "object", "properties": {
        "a": {"type": "string", "pattern": "^[a-f0-9]{4,8}$"}, "b": {"type": "number"},
        "c": {"type": "array", "items": {"type": "integer"}}}}));
    let one = arguments(&compiled, &options(42, 60));
    let again = arguments(&compiled, &options(42, 60));
    assert_eq!(one.cases, again.cases);
    let other = arguments(&compiled, &options(43, 60));
    assert_ne!(one.cases, other.cases);
}

#[test]
fn the_first_cases_cover_every_category_in_turn() {
    let compiled = tool(json!({"type": "object", "properties": {
        "n": {"type": "integer", "maximum": 5}, "s": {"type": "string", "format": "email"}},
        "required": ["n"], "additionalProperties": false}));
    let generated = arguments(&compiled, &options(3, 14));
    assert_eq!(generated.cases[0].category, Category::Typical);
    let categories: HashSet<Category> = generated.cases.iter().map(|c| c.category).collect();
    assert!(categories.len() >= 10, "{categories:?}");
}

#[test]
fn cases_are_capped_and_filled_up_to_the_count() {
    let compiled = tool(json!({"type": "object", "properties": {"x": {"type": "integer"}}}));
    assert_eq!(arguments(&compiled, &options(1, 5)).cases.len(), 5);
    assert!(arguments(&compiled, &options(1, 0)).cases.is_empty());
    let many = arguments(&compiled, &options(1, 200));
    assert!(many.cases.len() > 60, "{}", many.cases.len());
    assert_judged(&compiled, &many);
}

#[test]
fn a_pattern_that_cannot_be_sampled_is_skipped_and_counted_not_guessed() {
    let compiled = tool(json!({"type": "object", "properties": {
        "word": {"type": "string", "pattern": "^(?!admin)[a-z]+$"}}, "required": ["word"]}));
    let generated = arguments(&compiled, &options(1, 100));
    assert_judged(&compiled, &generated);
    assert!(
        generated
            .skipped
            .iter()
            .any(|s| s.reason.contains("look-around")),
        "{:?}",
        generated.skipped
    );
    // No valid case can be made without a matching word; faults still can.
    assert!(generated.cases.iter().all(|c| c.kind == Kind::Invalid));
    assert!(generated
        .cases
        .iter()
        .any(|c| c.label == "arguments absent"));
}

#[test]
fn references_and_combinators_are_followed() {
    let compiled = tool(json!({
        "type": "object",
        "$defs": {"point": {"type": "object", "properties": {"x": {"type": "number"}, "y": {"type": "number"}},
            "required": ["x", "y"], "additionalProperties": false}},
        "properties": {
            "at": {"$ref": "#/$defs/point"},
            "shape": {"oneOf": [{"const": "circle"}, {"type": "object", "properties": {"sides": {"type": "integer", "minimum": 3}}, "required": ["sides"]}]},
            "maybe": {"anyOf": [{"type": "string", "maxLength": 3}, {"type": "null"}]}
        },
        "required": ["at"]
    }));
    let generated = arguments(&compiled, &options(5, 300));
    assert_judged(&compiled, &generated);
    let labels = labels(&generated);
    assert!(labels.contains(&"'at' missing required 'x'"), "{labels:#?}");
    assert!(labels
        .iter()
        .any(|l| l.starts_with("'at' with undeclared property")));
    assert!(generated
        .cases
        .iter()
        .any(|c| c.kind == Kind::Valid
            && c.value.as_ref().and_then(|v| v.pointer("/at/x")).is_some()));
}

#[test]
fn any_schema_gets_values_too() {
    for schema in [
        json!(true),
        json!({"type": "string"}),
        json!({"minimum": 3}),
        json!(false),
        json!({"enum": [1, [2], {"a": 3}]}),
    ] {
        let validator = SchemaValidator::new(&schema).unwrap();
        let generated = values(&validator, &options(9, 50));
        for case in &generated.cases {
            let value = case.value.as_ref().unwrap();
            assert_eq!(
                validator.is_valid(value),
                case.kind == Kind::Valid,
                "{schema}: {}",
                case.label
            );
        }
        if schema != json!(false) {
            assert!(
                generated.cases.iter().any(|c| c.kind == Kind::Valid),
                "{schema}"
            );
        }
    }
    let never = values(
        &SchemaValidator::new(&json!(false)).unwrap(),
        &options(1, 20),
    );
    assert!(never.cases.iter().all(|c| c.kind == Kind::Invalid));
    assert!(!never.cases.is_empty());
}

#[test]
fn heavy_values_are_the_promised_size() {
    let compiled = tool(json!({"type": "object", "properties": {
        "text": {"type": "string"}, "list": {"type": "array", "items": {"type": "integer"}}},
        "required": ["text", "list"]}));
    let generated = arguments(&compiled, &options(2, 1_000));
    let big_string = generated
        .cases
        .iter()
        .find(|c| c.label == "'text' as a 1 MiB string")
        .unwrap();
    assert_eq!(big_string.kind, Kind::Valid);
    assert_eq!(
        big_string.value.as_ref().unwrap()["text"]
            .as_str()
            .map(str::len),
        Some(1 << 20)
    );
    let big_array = generated
        .cases
        .iter()
        .find(|c| c.label == "'list' with 100,000 items")
        .unwrap();
    assert_eq!(
        big_array.value.as_ref().unwrap()["list"]
            .as_array()
            .map(Vec::len),
        Some(100_000)
    );
    let deep = generated
        .cases
        .iter()
        .find(|c| c.category == Category::DeepNesting)
        .unwrap();
    assert_eq!(deep.kind, Kind::Invalid);
}

/// An object of `n` string properties, all required.
fn all_required(n: usize) -> Value {
    let properties: serde_json::Map<String, Value> = (0..n)
        .map(|i| (format!("p{i}"), json!({"type": "string"})))
        .collect();
    let required: Vec<String> = (0..n).map(|i| format!("p{i}")).collect();
    json!({"type": "object", "properties": properties, "required": required, "additionalProperties": false})
}

/// The names of the required properties the cases leave out, each once.
fn missing_ones(generated: &Generated) -> Vec<String> {
    let mut missing: Vec<String> = generated
        .cases
        .iter()
        .filter(|c| c.category == Category::MissingRequired)
        .map(|c| c.label.clone())
        .collect();
    missing.sort();
    missing.dedup();
    missing
}

#[test]
fn every_required_property_goes_missing_in_an_object_of_a_few() {
    let compiled = tool(all_required(MAX_MISSING_FEW));
    let generated = arguments(&compiled, &options(3, 10_000));
    assert_judged(&compiled, &generated);
    assert_eq!(missing_ones(&generated).len(), MAX_MISSING_FEW);
}

/// The most required properties of one object that each get a case leaving them out.
const MAX_MISSING_FEW: usize = mutate::MAX_MISSING_REQUIRED;

#[test]
fn a_value_of_thousands_of_places_gets_a_bounded_seeded_choice_of_changes() {
    // Each case is a whole copy: a copy per place and per required name made this quadratic in
    // time and memory (4,000 properties: 7 s and 3.5 GB; 12,500: killed for want of memory).
    let schema = all_required(1_500);
    let validator = crate::validate::SchemaValidator::new(&schema).unwrap();
    let systematic = |seed: u64| {
        let mut run = Run::new(&validator, Checker::Schema(&validator), "the value", seed);
        // Every systematic case is made whatever the number wanted; one wanted: no filling up.
        run.make(1);
        let missing: Vec<String> = run
            .cases
            .iter()
            .filter(|c| c.category == Category::MissingRequired)
            .map(|c| c.label.clone())
            .collect();
        let heavy = run.cases.iter().any(|c| c.category == Category::Oversized);
        (missing, run.cases.len(), heavy)
    };
    let (first, made, heavy) = systematic(1);
    let (second, _, _) = systematic(2);
    assert_eq!(first.len(), MAX_MISSING_FEW, "{first:?}");
    // Copies of the value within the budget, plus the few made otherwise (probes, heavy values).
    assert!(made <= mutate::copies_for(1_501) + 64, "{made} cases made");
    assert_ne!(first, second, "the seed chooses");
    // The heavy values still come, whatever the size.
    assert!(heavy);
    // What comes out is still judged right.
    let compiled = tool(all_required(1_500));
    assert_judged(&compiled, &arguments(&compiled, &options(1, 100)));
}

#[test]
fn a_schema_whose_required_values_never_end_gets_invalid_cases_and_the_reason() {
    // A required property that refers back to its own object: no finite value fits.
    let endless = json!({"type": "object", "properties": {"a": {"$ref": "#"}}, "required": ["a"]});
    // Two required properties referring to the level below, forty levels down: 2^40 places.
    let mut defs = serde_json::Map::new();
    defs.insert("a0".into(), json!({"type": "string"}));
    for i in 1..=40 {
        let below = json!({"$ref": format!("#/$defs/a{}", i - 1)});
        defs.insert(
            format!("a{i}"),
            json!({"type": "object", "properties": {"l": below, "r": below}, "required": ["l", "r"]}),
        );
    }
    let doubling = json!({"type": "object", "properties": {"x": {"$ref": "#/$defs/a40"}}, "required": ["x"], "$defs": defs});
    for (schema, reason) in [
        (
            endless,
            "a value here must nest deeper than 128 levels of arrays and objects",
        ),
        (doubling, "a value needs more than 20000 places"),
    ] {
        let compiled = tool(schema);
        let generated = arguments(&compiled, &options(3, 100));
        assert!(!generated.cases.is_empty());
        assert!(generated.cases.iter().all(|c| c.kind == Kind::Invalid));
        assert_judged(&compiled, &generated);
        assert!(
            generated.skipped.iter().any(|s| s.reason == reason),
            "{:?}",
            generated.skipped
        );
    }
}

#[test]
fn values_too_large_to_build_are_not_built() {
    // A string of 10^12 characters took every byte of memory there was.
    for (schema, reason) in [
        (
            json!({"type": "object", "properties": {"s": {"type": "string", "minLength": 1_000_000_000_000_u64}}, "required": ["s"]}),
            "a string of at least 1000000000000 characters is too long to build",
        ),
        (
            json!({"type": "object", "properties": {"a": {"type": "array", "minItems": 1_000_000_000}}, "required": ["a"]}),
            "1000000000 items are too many to build",
        ),
    ] {
        let compiled = tool(schema);
        let generated = arguments(&compiled, &options(1, 50));
        assert!(generated.cases.iter().all(|c| c.kind == Kind::Invalid));
        assert!(!generated.cases.is_empty());
        assert_judged(&compiled, &generated);
        assert!(
            generated.skipped.iter().any(|s| s.reason == reason),
            "{:?}",
            generated.skipped
        );
    }
    // At the limit, a string is built, and it is valid.
    let compiled = tool(
        json!({"type": "object", "properties": {"s": {"type": "string", "minLength": 1 << 20}}, "required": ["s"]}),
    );
    let generated = arguments(&compiled, &options(1, 10));
    assert!(generated.cases.iter().any(|c| c.kind == Kind::Valid));
    assert_judged(&compiled, &generated);
}
