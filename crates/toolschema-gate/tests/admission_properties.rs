//! [`Admission`] decides a call as the [`Gate`] does, and through `&self` from many threads at
//! once. Over random settings (`--unknown-arguments`, `--input-check`, `--unlisted`,
//! `--on-unchecked`, `--deny`) and random calls (listed and unknown tools, arguments of any
//! JSON, objects or not), the admission's verdict, input check and messages are the ones the
//! gate's audit record gives when it is driven with the call as JSON-RPC text; and every thread
//! deciding the same calls at once gets the same decisions.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use proptest::prelude::*;
use serde_json::{json, Value};
use std::time::Instant;
use toolschema::json::number::StatedNumbers;
use toolschema_gate::message::RequestId;
use toolschema_gate::{
    Action, Admission, AuditRecord, Gate, GateConfig, Glob, InputCheck, OnUnchecked, OutputCheck,
    UnknownArguments, Unlisted,
};

/// The catalog: a closed schema, an open one with bounds, one whose `$ref` is never fetched (so
/// some calls cannot be checked), one whose schema does not compile.
fn tools() -> Vec<Value> {
    vec![
        json!({"name": "search", "inputSchema": {"type": "object",
            "properties": {"query": {"type": "string", "minLength": 3},
                "limit": {"type": "integer", "maximum": 50}},
            "required": ["query"], "additionalProperties": false}}),
        json!({"name": "echo", "inputSchema": {"type": "object",
            "properties": {"message": {"type": "string"}, "n": {"type": "number", "multipleOf": 0.5}}}}),
        json!({"name": "remote", "inputSchema": {"type": "object",
            "properties": {"a": {"$ref": "https://example.com/a.json"}, "b": {"type": "boolean"}}}}),
        json!({"name": "broken", "inputSchema": {"type": "object",
            "properties": {"x": {"type": 7}}}}),
    ]
}

/// The verdict, input check and messages of a record: what both must agree on.
fn essence(record: &AuditRecord) -> (String, Option<String>, Vec<String>) {
    (
        record.verdict.as_str().to_string(),
        record.input_check.map(|i| i.as_str().to_string()),
        record.messages.clone(),
    )
}

/// The gate's record of `tool` called with `arguments`, after it learned the catalog from its
/// own listing (as the proxy does before a call it cannot place).
fn gate_record(config: &GateConfig, tool: &str, arguments: &Value) -> AuditRecord {
    let mut config = config.clone();
    config.audit = true;
    config.output_check = OutputCheck::Off;
    let mut gate = Gate::new(config);
    let listing = json!({"tools": tools()});
    let call = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": tool, "arguments": arguments}});
    let mut out = Vec::new();
    gate.client_message(call.to_string().into_bytes(), Instant::now(), &mut out);
    let mut record = None;
    while !out.is_empty() {
        let mut more = Vec::new();
        for action in out.drain(..) {
            match action {
                Action::ToServer(line) => {
                    let message: Value = serde_json::from_slice(&line).unwrap();
                    let id = message["id"].clone();
                    let answer = match message["method"].as_str() {
                        Some("tools/list") => {
                            json!({"jsonrpc": "2.0", "id": id, "result": listing})
                        }
                        Some("tools/call") => {
                            json!({"jsonrpc": "2.0", "id": id, "result": {"content": []}})
                        }
                        _ => continue,
                    };
                    gate.server_message(answer.to_string().into_bytes(), Instant::now(), &mut more);
                }
                Action::Audit(found) => record = Some(*found),
                Action::ToClient(_) => {}
            }
        }
        out = more;
    }
    record.expect("the gate audited the call")
}

fn config() -> impl Strategy<Value = GateConfig> {
    (
        prop_oneof![
            Just(UnknownArguments::Allow),
            Just(UnknownArguments::Warn),
            Just(UnknownArguments::Reject)
        ],
        prop_oneof![Just(InputCheck::Enforce), Just(InputCheck::Warn)],
        prop_oneof![Just(Unlisted::Refuse), Just(Unlisted::Forward)],
        prop_oneof![Just(OnUnchecked::Refuse), Just(OnUnchecked::Forward)],
        any::<bool>(),
    )
        .prop_map(|(unknown, input, unlisted, unchecked, deny)| {
            let mut config = GateConfig {
                unknown_arguments: unknown,
                input_check: input,
                unlisted,
                on_unchecked: unchecked,
                ..GateConfig::default()
            };
            if deny {
                config.policy.deny = vec![Glob::new("ech*")];
            }
            config
        })
}

fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        (-100.0f64..100.0).prop_map(|f| json!(f)),
        prop_oneof![
            Just("q".to_string()),
            Just("rust".to_string()),
            "[a-zA-Z]{0,6}"
        ]
        .prop_map(Value::from),
    ];
    leaf.prop_recursive(2, 12, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..3).prop_map(Value::from),
            prop::collection::btree_map(
                prop_oneof![
                    Just("query".to_string()),
                    Just("limit".to_string()),
                    Just("message".to_string()),
                    Just("n".to_string()),
                    Just("a".to_string()),
                    Just("b".to_string()),
                    Just("x".to_string()),
                    Just("Query".to_string()),
                    Just("other".to_string()),
                ],
                inner,
                0..4
            )
            .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

fn tool() -> impl Strategy<Value = &'static str> {
    prop_oneof![
        Just("search"),
        Just("echo"),
        Just("remote"),
        Just("broken"),
        Just("serch"),
        Just("nothing_like_it"),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn admission_decides_as_the_gate_does(
        config in config(),
        calls in prop::collection::vec((tool(), json_value()), 1..8),
    ) {
        let admission = Admission::new(&tools(), &StatedNumbers::default(), config.clone());
        for (tool, arguments) in &calls {
            let admitted = admission.admit(RequestId::from_text("1"), tool, arguments, None);
            let gated = gate_record(&config, tool, arguments);
            prop_assert_eq!(essence(&admitted.record), essence(&gated), "{} {}", tool, arguments);
            prop_assert_eq!(admitted.allowed, gated.verdict.as_str() == "forwarded");
        }
    }

    #[test]
    fn admission_decides_alike_from_many_threads_at_once(
        config in config(),
        calls in prop::collection::vec((tool(), json_value()), 1..16),
    ) {
        let admission = Admission::new(&tools(), &StatedNumbers::default(), config);
        let alone: Vec<_> = calls
            .iter()
            .map(|(tool, arguments)| {
                essence(&admission.admit(RequestId::from_text("1"), tool, arguments, None).record)
            })
            .collect();
        let together: Vec<Vec<_>> = std::thread::scope(|scope| {
            let handles: Vec<_> = (0..4)
                .map(|_| {
                    scope.spawn(|| {
                        calls
                            .iter()
                            .map(|(tool, arguments)| {
                                let id = RequestId::from_text("1");
                                essence(&admission.admit(id, tool, arguments, None).record)
                            })
                            .collect::<Vec<_>>()
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        for decisions in together {
            prop_assert_eq!(&decisions, &alone);
        }
    }
}
