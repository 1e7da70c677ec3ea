//! The in-process side of `scripts/bench-serve.sh`: the cost of one decision of `toolschema
//! serve` without HTTP, the gate's admission as the service makes it ([`Decider::check_call`]).
//!
//!   cargo run --release -p toolschema-proxy --example serve_decisions -- CATALOG TOOL CALLS
//!
//! Calls TOOL of the catalog CALLS times, alternately with valid and invalid arguments (the
//! same as the HTTP side sends), and prints one JSON line: decisions per second, p50 and p99 in
//! microseconds.

use serde_json::json;
use std::time::Instant;
use toolschema_proxy::serve::{CatalogSource, Catalogs};
use toolschema_proxy::GateConfig;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [catalog, tool, calls] = args.as_slice() else {
        eprintln!("usage: serve_decisions CATALOG TOOL CALLS");
        std::process::exit(2);
    };
    let calls: usize = calls.parse().unwrap_or_else(|_| {
        eprintln!("CALLS must be a number, not {calls}");
        std::process::exit(2);
    });
    let runtime = toolschema_mcp::runtime().unwrap_or_else(|e| {
        eprintln!("{e}");
        std::process::exit(2);
    });
    let loading = Catalogs::load(vec![CatalogSource::parse(catalog)], GateConfig::default());
    let catalogs = runtime.block_on(loading).unwrap_or_else(|e| {
        eprintln!("{e}");
        std::process::exit(2);
    });
    let (_, decider) = catalogs.decider(None).unwrap_or_else(|e| {
        eprintln!("{e}");
        std::process::exit(2);
    });
    let valid = json!({"query": "rust", "limit": 5});
    let invalid = json!({"query": "r", "limit": 500});
    // The first call compiles the tool's schema, as the service's first decision does.
    let _ = decider.check_call(tool, &valid, None);
    let mut micros = Vec::with_capacity(calls);
    let started = Instant::now();
    for i in 0..calls {
        let arguments = if i % 2 == 0 { &valid } else { &invalid };
        let one = Instant::now();
        let decision = decider
            .check_call(tool, arguments, None)
            .unwrap_or_else(|e| {
                eprintln!("{e}");
                std::process::exit(1);
            });
        micros.push(one.elapsed().as_secs_f64() * 1e6);
        if decision.allowed != (i % 2 == 0) {
            eprintln!("decision {i} is wrong: {:?}", decision.messages);
            std::process::exit(1);
        }
    }
    let total = started.elapsed().as_secs_f64();
    micros.sort_by(f64::total_cmp);
    let at = |p: f64| micros[((p / 100.0) * micros.len() as f64) as usize % micros.len()];
    println!(
        "{}",
        json!({
            "decisions": calls,
            "decisions_per_second": (calls as f64 / total).round(),
            "p50_us": (at(50.0) * 10.0).round() / 10.0,
            "p99_us": (at(99.0) * 10.0).round() / 10.0,
            "tools": decider.len(),
        })
    );
}
