//! The short version of the HTTP proxy's soak (`scripts/soak-http.sh --short`): well-behaved
//! TypeScript SDK sessions call a recording server's echo tool through `toolschema proxy --listen
//! --upstream`, alone and then beside hostile peers (connections stalled mid-head and mid-body up
//! to the proxy's descriptor limit, clients that stop reading while the server floods them,
//! calls with invalid arguments, guessed tokens). Every goal of the soak must be met: no
//! well-behaved error, no invalid call reaching the server, the proxy's memory under its bound
//! and its descriptors back where they were once the hostile peers stop.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{node, require, run, toolschema};
use serde_json::Value;
use std::time::Duration;

#[test]
fn the_proxy_serves_well_behaved_sessions_beside_hostile_peers() {
    let script = require("scripts/soak-http.sh");
    require("interop/node_modules/@modelcontextprotocol/sdk");
    node();
    // The soak bounds itself (its phases, its settling, two minutes for the rest); this limit
    // is only for a harness that hangs.
    let (status, stdout, stderr) = run(
        "bash",
        &[
            script.display().to_string(),
            "--short".into(),
            "--binary".into(),
            toolschema().into(),
        ],
        Duration::from_secs(300),
    );
    let summary: Value = stdout
        .lines()
        .find_map(|line| line.strip_prefix("soak-summary: "))
        .map(|json| serde_json::from_str(json).unwrap())
        .unwrap_or_else(|| panic!("no summary ({status}); stderr:\n{stderr}\nstdout:\n{stdout}"));
    let report = format!("{stdout}\nstderr:\n{stderr}");
    assert!(
        status.success(),
        "the soak missed a goal ({status}):\n{report}"
    );
    assert_eq!(summary["passed"], true, "{report}");
    for check in summary["checks"].as_array().unwrap() {
        assert_eq!(check["ok"], true, "{check}\n{report}");
    }

    // Each phase served calls, and none failed.
    for phase in ["A", "B", "after"] {
        let figures = &summary["phases"][phase];
        assert!(figures["calls"].as_u64().unwrap() > 0, "{phase}: {report}");
        assert_eq!(figures["errors"], 0, "{phase}: {report}");
    }
    assert_eq!(summary["server"]["invalid"], 0, "{report}");
    assert!(summary["peakRssMiB"].as_f64().unwrap() < 256.0, "{report}");

    // Each hostile peer did what it is there for, and the proxy answered it as it should.
    let hostile = &summary["hostile"];
    let stalled = &hostile["stalled"];
    assert!(
        stalled["connected"].as_u64().unwrap() >= stalled["target"].as_u64().unwrap(),
        "the stalled connections reached the descriptor limit: {report}"
    );
    assert!(
        hostile["readers"]["sessions"].as_u64().unwrap() > 0,
        "{report}"
    );
    assert!(
        summary["server"]["floodNotifications"].as_u64().unwrap() > 0,
        "{report}"
    );
    // Under attack a hostile request may wait too long for a descriptor; every one answered was
    // answered as it should be.
    let invalid = &hostile["invalid"];
    assert!(invalid["refused"].as_u64().unwrap() > 0, "{report}");
    assert_eq!(invalid["passed"], 0, "{report}");
    let guess = &hostile["guess"];
    assert_eq!(guess["accepted"], 0, "{report}");
    let statuses = guess["statuses"].as_object().unwrap();
    assert!(
        statuses.get("401").and_then(Value::as_u64).unwrap_or(0) > 0
            && statuses.keys().all(|status| status == "401"),
        "every guessed token that was answered was answered 401: {report}"
    );
}
