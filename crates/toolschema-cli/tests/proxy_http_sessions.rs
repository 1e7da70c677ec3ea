//! Sessions of `toolschema proxy --listen --upstream` under attack, the proxy as a process in
//! front of a real upstream whose session ids are predictable (`interop/session-upstream.mjs`:
//! `s-1`, `s-2`, ...): concurrent `initialize`s against `--max-sessions` and
//! `--max-sessions-per-token`, each session kept to the token that opened it, session ids
//! claimed before the upstream gave them, and standard headers sent twice.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::http::{self, free_port, HttpServer, Listening, Reply};
use common::{node, require};
use proptest::prelude::*;
use serde_json::{json, Value};
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::sync::{Arc, Barrier};

const TOKENS: [(&str, &str); 3] = [
    ("alice", "alice-token-0123456789abcdef"),
    ("bob", "bob-token-0123456789abcdefgh"),
    ("mallory", "mallory-token-0123456789abcd"),
];

/// The predictable-id upstream, each `initialize` answered `delay_ms` after its session exists.
fn upstream(delay_ms: u64, record: &Path) -> HttpServer {
    upstream_with(delay_ms, record, &[])
}

/// The predictable-id upstream with `extra` options (`--expire-after-ms MS`).
fn upstream_with(delay_ms: u64, record: &Path, extra: &[&str]) -> HttpServer {
    let script = require("interop/session-upstream.mjs")
        .display()
        .to_string();
    let mut args = vec![
        script,
        "--init-delay-ms".into(),
        delay_ms.to_string(),
        "--record".into(),
        record.display().to_string(),
    ];
    args.extend(extra.iter().map(|s| s.to_string()));
    HttpServer::start(&node(), &args, free_port())
}

/// The proxy in front of `upstream`, with the three tokens and `extra` options.
fn proxy(dir: &Path, upstream: &HttpServer, extra: &[&str]) -> Listening {
    let tokens: String = TOKENS
        .iter()
        .map(|(name, token)| format!("{name}:{token}\n"))
        .collect();
    std::fs::write(dir.join("tokens"), tokens).unwrap();
    let mut args: Vec<String> = vec![
        "--auth-token-file".into(),
        dir.join("tokens").display().to_string(),
    ];
    args.extend(extra.iter().map(|s| s.to_string()));
    args.extend(["--upstream".to_string(), upstream.url.clone()]);
    Listening::start(&args)
}

fn bearer(client: usize) -> String {
    format!("Bearer {}", TOKENS[client].1)
}

fn initialize_body(client: usize) -> String {
    json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": TOKENS[client].0, "version": "1"}}})
    .to_string()
}

/// `initialize` as `client`: the answer.
fn initialize(url: &str, client: usize) -> Reply {
    let auth = bearer(client);
    http::request(
        "POST",
        url,
        &[("authorization", auth.as_str())],
        &initialize_body(client),
    )
}

/// `tools/call whoami` in session `id` as `client`: the answer.
fn call_whoami(url: &str, id: &str, client: usize) -> Reply {
    let auth = bearer(client);
    http::post(
        url,
        id,
        &[("authorization", auth.as_str())],
        r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"whoami","arguments":{}}}"#,
    )
}

/// `tools/call whoami` in session `id` as `client`: the status, and the session and client
/// the upstream served it for.
fn whoami(url: &str, id: &str, client: usize) -> (u16, Option<Value>) {
    let reply = call_whoami(url, id, client);
    let served = (reply.status == 200)
        .then(|| reply.messages().into_iter().next())
        .flatten()
        .and_then(|m| m["result"]["content"][0]["text"].as_str().map(String::from))
        .and_then(|text| serde_json::from_str(&text).ok());
    (reply.status, served)
}

/// `clients[i]` sends `initialize` at the same moment as every other: each one's client and
/// answer.
fn initialize_all_at_once(url: &str, clients: &[usize]) -> Vec<(usize, Reply)> {
    let barrier = Arc::new(Barrier::new(clients.len()));
    let threads: Vec<_> = clients
        .iter()
        .map(|&client| {
            let (url, barrier) = (url.to_string(), barrier.clone());
            std::thread::spawn(move || {
                barrier.wait();
                (client, initialize(&url, client))
            })
        })
        .collect();
    threads.into_iter().map(|t| t.join().unwrap()).collect()
}

/// After `clients` initialized at once under `--max-sessions max` and
/// `--max-sessions-per-token per_token`: exactly as many sessions as the limits allow were
/// opened (no more, and no request refused while there was room), the others refused with 429
/// or 503, and every session is its opener's alone: it serves its opener, and every other
/// token gets 404 in it.
fn check_concurrent_initializes(
    url: &str,
    clients: &[usize],
    max: usize,
    per_token: usize,
) -> Result<(), TestCaseError> {
    let results = initialize_all_at_once(url, clients);
    let mut opened: BTreeMap<usize, Vec<String>> = BTreeMap::new();
    for (client, reply) in &results {
        match reply.status {
            200 => opened
                .entry(*client)
                .or_default()
                .push(reply.header("mcp-session-id").unwrap().to_string()),
            429 | 503 => {}
            other => prop_assert!(false, "initialize answered {other}: {reply:?}"),
        }
    }
    let mut wanted: BTreeMap<usize, usize> = BTreeMap::new();
    for client in clients {
        *wanted.entry(*client).or_default() += 1;
    }
    let room: usize = wanted.values().map(|n| (*n).min(per_token)).sum();
    let total: usize = opened.values().map(Vec::len).sum();
    prop_assert_eq!(total, room.min(max), "opened {:?}", opened);
    for (client, ids) in &opened {
        prop_assert!(
            ids.len() <= per_token,
            "{} opened {:?}",
            TOKENS[*client].0,
            ids
        );
    }
    let ids: BTreeSet<&String> = opened.values().flatten().collect();
    prop_assert_eq!(ids.len(), total, "two clients were given one session");
    for (owner, ids) in &opened {
        for id in ids {
            for (other, (other_name, _)) in TOKENS.iter().enumerate() {
                let (status, served) = whoami(url, id, other);
                if other == *owner {
                    prop_assert_eq!(status, 200);
                    let served = served.unwrap();
                    prop_assert_eq!(&served["session"], &json!(id));
                    prop_assert_eq!(&served["client"], &json!(TOKENS[*owner].0));
                } else {
                    prop_assert_eq!(
                        status,
                        404,
                        "{} was served in {}'s session {}",
                        other_name,
                        TOKENS[*owner].0,
                        id
                    );
                }
            }
        }
    }
    Ok(())
}

/// The issue's case: ten simultaneous initializes with one token under a limit of 2.
#[test]
fn ten_simultaneous_initializes_of_one_token_open_two_sessions_both_its_own() {
    let dir = tempfile::tempdir().unwrap();
    let upstream = upstream(300, &dir.path().join("record.jsonl"));
    let proxy = proxy(dir.path(), &upstream, &["--max-sessions-per-token", "2"]);
    check_concurrent_initializes(&proxy.url, &[0; 10], 100, 2).unwrap();
    proxy.stop();
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(6))]

    /// Any number of simultaneous initializes from any mix of tokens, under any limits: never
    /// more sessions than the limits allow, each owned by exactly the client that opened it.
    #[test]
    fn simultaneous_initializes_keep_both_limits_and_every_session_has_its_opener_as_owner(
        clients in proptest::collection::vec(0..3usize, 2..12),
        max in 1..8usize,
        per_token in 1..4usize,
    ) {
        let dir = tempfile::tempdir().unwrap();
        let upstream = upstream(200, &dir.path().join("record.jsonl"));
        let proxy = proxy(
            dir.path(),
            &upstream,
            &["--max-sessions", &max.to_string(), "--max-sessions-per-token", &per_token.to_string()],
        );
        check_concurrent_initializes(&proxy.url, &clients, max, per_token)?;
        proxy.stop();
    }
}

/// The requests the upstream recorded for session `id`.
fn recorded_for(record: &Path, id: &str) -> Vec<Value> {
    std::fs::read_to_string(record)
        .unwrap_or_default()
        .lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .filter(|entry| entry["session"] == id || entry["created"] == id || entry["expired"] == id)
        .collect()
}

/// Mallory claims the id the upstream will give next before it exists, by every way a client
/// names a session (a request, a notification, a GET stream, a request racing the next
/// client's initialize): the upstream refuses each claim, the proxy remembers none of them, and
/// the next client's `initialize` gets its session, which stays its own.
#[test]
fn a_session_id_claimed_before_it_exists_is_never_handed_to_the_claimer() {
    let dir = tempfile::tempdir().unwrap();
    let record = dir.path().join("record.jsonl");
    let upstream = upstream(400, &record);
    let proxy = proxy(dir.path(), &upstream, &[]);
    let url = proxy.url.as_str();
    let (alice, mallory) = (0, 2);
    let mallory_auth = bearer(mallory);
    let claim = |id: &str, how: &str| -> u16 {
        let headers = [
            ("authorization", mallory_auth.as_str()),
            ("mcp-session-id", id),
            ("mcp-protocol-version", "2025-11-25"),
        ];
        match how {
            // A ping goes to the upstream as it is (a call would have the proxy list the
            // tools in the session first, and get the 404 of that listing).
            "request" => {
                http::request(
                    "POST",
                    url,
                    &headers,
                    r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#,
                )
                .status
            }
            "notification" => {
                http::request(
                    "POST",
                    url,
                    &headers,
                    r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
                )
                .status
            }
            _ => {
                let mut stream = http::open(
                    "GET",
                    url,
                    &[
                        headers[0],
                        headers[1],
                        headers[2],
                        ("accept", "text/event-stream"),
                    ],
                    "",
                );
                http::read_reply(&mut stream).status
            }
        }
    };
    for (n, how) in ["request", "notification", "get"].into_iter().enumerate() {
        let id = format!("s-{}", n + 1);
        let status = claim(&id, how);
        match how {
            // The upstream's 404, passed on.
            "request" | "get" => assert_eq!(status, 404, "{how}"),
            // Accepted for delivery; the upstream refuses it after.
            _ => {
                assert_eq!(status, 202, "{how}");
                assert!(http::eventually(std::time::Duration::from_secs(20), || {
                    recorded_for(&record, &id)
                        .iter()
                        .any(|entry| entry["status"] == 404)
                }));
            }
        }
        let reply = initialize(url, alice);
        assert_eq!(reply.status, 200, "after a claim by {how}: {reply:?}");
        assert_eq!(reply.header("mcp-session-id"), Some(id.as_str()));
        let (status, served) = whoami(url, &id, alice);
        assert_eq!(
            (status, served),
            (200, Some(json!({"session": id, "client": "alice"})))
        );
        assert_eq!(whoami(url, &id, mallory).0, 404, "after a claim by {how}");
    }
    // A claim racing the initialize: sent while the upstream holds its answer, so it may reach
    // the upstream after the session exists and be served there. The session is still alice's.
    let racing = std::thread::spawn({
        let url = url.to_string();
        move || initialize(&url, alice)
    });
    let claimed = http::eventually(std::time::Duration::from_secs(20), || {
        recorded_for(&record, "s-4")
            .iter()
            .any(|e| e["created"] == "s-4")
    });
    assert!(claimed, "the upstream never saw the initialize");
    let (status, _) = whoami(url, "s-4", mallory);
    assert!(status == 200 || status == 404, "{status}");
    let reply = racing.join().unwrap();
    assert_eq!(reply.status, 200, "{reply:?}");
    assert_eq!(reply.header("mcp-session-id"), Some("s-4"));
    assert_eq!(
        whoami(url, "s-4", alice),
        (200, Some(json!({"session": "s-4", "client": "alice"})))
    );
    assert_eq!(whoami(url, "s-4", mallory).0, 404);

    // Taking over a session another replica opened still works, for whoever names it first
    // once the upstream confirms it: a second proxy in front of the same upstream.
    let replica_dir = tempfile::tempdir().unwrap();
    let replica = self::proxy(replica_dir.path(), &upstream, &[]);
    assert_eq!(
        whoami(&replica.url, "s-1", alice),
        (200, Some(json!({"session": "s-1", "client": "alice"})))
    );
    assert_eq!(whoami(&replica.url, "s-1", mallory).0, 404);
    replica.stop();
    proxy.stop();
}

/// A session the upstream expired answers 404, as the upstream did, to every request in it:
/// a `tools/call` too, whether the proxy still knows the tools (the call goes on and comes back
/// 404), must list them first in a session it opened (its own listing comes back 404) or takes
/// the session over in another replica. Never a tool error, which would tell the client the call
/// ran, nor a 200: the client learns to open a new session, as MCP asks of a 404.
#[test]
fn a_session_the_upstream_expired_answers_every_call_with_its_404() {
    let dir = tempfile::tempdir().unwrap();
    let record = dir.path().join("record.jsonl");
    let upstream = upstream_with(0, &record, &["--expire-after-ms", "1500"]);
    let proxy = proxy(dir.path(), &upstream, &[]);
    let replica_dir = tempfile::tempdir().unwrap();
    let replica = self::proxy(replica_dir.path(), &upstream, &[]);
    let alice = 0;
    let expired = |id: &str| {
        assert!(
            http::eventually(std::time::Duration::from_secs(20), || {
                recorded_for(&record, id).iter().any(|e| e["expired"] == id)
            }),
            "the upstream never expired {id}"
        );
    };
    let refused = |url: &str, id: &str, how: &str| {
        let reply = call_whoami(url, id, alice);
        assert_eq!(reply.status, 404, "{how}: {reply:?}");
        assert_eq!(reply.json()["error"]["code"], -32001, "{how}: {reply:?}");
    };
    let open = |client: usize| {
        let reply = initialize(&proxy.url, client);
        reply.header("mcp-session-id").unwrap().to_string()
    };
    // The proxy knows the tools: the call goes on, its 404 comes back; and again.
    let known = open(alice);
    assert_eq!(whoami(&proxy.url, &known, alice).0, 200);
    expired(&known);
    refused(&proxy.url, &known, "tools known");
    refused(&proxy.url, &known, "tools known, again");
    // The proxy has not listed the tools in the session yet: its own listing meets the 404.
    let unlisted = open(alice);
    expired(&unlisted);
    refused(&proxy.url, &unlisted, "tools not listed yet");
    refused(&proxy.url, &unlisted, "tools not listed yet, again");
    // Another replica takes the session over, and lists the tools first.
    let other = open(alice);
    assert_eq!(whoami(&proxy.url, &other, alice).0, 200);
    expired(&other);
    refused(&replica.url, &other, "taken over");
    refused(&replica.url, &other, "taken over, again");
    replica.stop();
    proxy.stop();
}

/// An upstream that answers a GET 404 (no GET route) while the session lives: the 404 reaches
/// the client, and the session stays its opener's (a 404 to a GET ends nothing, or another
/// token could take the live session over by naming it).
#[test]
fn a_404_to_a_get_stream_ends_no_session() {
    let dir = tempfile::tempdir().unwrap();
    let record = dir.path().join("record.jsonl");
    let upstream = upstream_with(0, &record, &["--no-get"]);
    let proxy = proxy(dir.path(), &upstream, &[]);
    let (alice, mallory) = (0, 2);
    let id = initialize(&proxy.url, alice)
        .header("mcp-session-id")
        .unwrap()
        .to_string();
    let auth = bearer(alice);
    let mut stream = http::open(
        "GET",
        &proxy.url,
        &[
            ("authorization", auth.as_str()),
            ("mcp-session-id", id.as_str()),
            ("mcp-protocol-version", "2025-11-25"),
            ("accept", "text/event-stream"),
        ],
        "",
    );
    assert_eq!(http::read_reply(&mut stream).status, 404);
    assert_eq!(whoami(&proxy.url, &id, mallory).0, 404);
    assert_eq!(
        whoami(&proxy.url, &id, alice),
        (200, Some(json!({"session": id, "client": "alice"})))
    );
    proxy.stop();
}

/// Standard headers sent twice, in two cases, reach no server: 400 saying which.
#[test]
fn a_standard_header_sent_twice_is_refused_before_the_upstream() {
    let dir = tempfile::tempdir().unwrap();
    let record = dir.path().join("record.jsonl");
    let upstream = upstream(0, &record);
    let proxy = proxy(dir.path(), &upstream, &[]);
    let auth = bearer(0);
    let reply = initialize(&proxy.url, 0);
    let id = reply.header("mcp-session-id").unwrap().to_string();
    let before = std::fs::read_to_string(&record).unwrap().lines().count();
    let modern = r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"whoami","arguments":{},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}"#;
    let cases: [(&str, &str, &str, &str); 5] = [
        ("Mcp-Name", "whoami", "mcp-name", "other"),
        ("Mcp-Method", "tools/call", "MCP-METHOD", "tools/list"),
        (
            "MCP-Protocol-Version",
            "2026-07-28",
            "mcp-protocol-version",
            "2025-11-25",
        ),
        ("Mcp-Session-Id", &id, "mcp-session-id", "s-99"),
        (
            "Authorization",
            &auth,
            "AUTHORIZATION",
            "Bearer bob-token-0123456789abcdefgh",
        ),
    ];
    for (first, first_value, second, second_value) in cases {
        let mut headers = vec![
            ("Mcp-Method", "tools/call"),
            ("Mcp-Name", "whoami"),
            ("MCP-Protocol-Version", "2026-07-28"),
            ("authorization", auth.as_str()),
        ];
        headers.retain(|(name, _)| !name.eq_ignore_ascii_case(first));
        headers.push((first, first_value));
        headers.push((second, second_value));
        let reply = http::request("POST", &proxy.url, &headers, modern);
        assert_eq!(reply.status, 400, "{first}: {reply:?}");
        assert!(
            reply.body.contains(&format!(
                "the request has 2 '{}' headers",
                first.to_ascii_lowercase()
            )),
            "{first}: {}",
            reply.body
        );
    }
    let after = std::fs::read_to_string(&record).unwrap().lines().count();
    assert_eq!(after, before, "a refused request reached the upstream");
    proxy.stop();
}

/// A client that goes away while its `initialize` waits for the upstream: the session is
/// closed (ended at the upstream) and its places in `--max-sessions` and
/// `--max-sessions-per-token` are given back, so the next client can open one.
#[test]
fn an_initialize_its_client_abandons_gives_its_places_back() {
    let dir = tempfile::tempdir().unwrap();
    let record = dir.path().join("record.jsonl");
    let upstream = upstream(1500, &record);
    let proxy = proxy(
        dir.path(),
        &upstream,
        &["--max-sessions", "1", "--max-sessions-per-token", "1"],
    );
    let auth = bearer(0);
    let stream = http::open(
        "POST",
        &proxy.url,
        &[("authorization", auth.as_str())],
        &initialize_body(0),
    );
    assert!(http::eventually(std::time::Duration::from_secs(20), || {
        recorded_for(&record, "s-1")
            .iter()
            .any(|e| e["created"] == "s-1")
    }));
    drop(stream);
    // The abandoned session is ended at the upstream once its answer comes.
    assert!(
        http::eventually(std::time::Duration::from_secs(20), || {
            recorded_for(&record, "s-1")
                .iter()
                .any(|e| e["http"] == "DELETE")
        }),
        "the abandoned session was never ended at the upstream"
    );
    // Then its places are given back: the next initialize opens a session.
    let mut last = None;
    let opened = http::eventually(std::time::Duration::from_secs(20), || {
        let reply = initialize(&proxy.url, 0);
        let ok = reply.status == 200;
        last = Some(reply);
        ok
    });
    assert!(opened, "{last:?}");
    assert_eq!(last.unwrap().header("mcp-session-id"), Some("s-2"));
    proxy.stop();
}

/// The standard headers the upstream gets say what the message is, whatever the client sent:
/// a 2025-11-25 call with `Mcp-Method`/`Mcp-Name` of another method and tool reaches the
/// upstream without them (that revision has none), so an intermediary that routes or
/// authorizes by header never sees something other than what the proxy checked.
#[test]
fn the_upstream_never_gets_standard_headers_that_disagree_with_the_message() {
    let dir = tempfile::tempdir().unwrap();
    let record = dir.path().join("record.jsonl");
    let upstream = upstream(0, &record);
    let proxy = proxy(dir.path(), &upstream, &[]);
    let auth = bearer(0);
    let id = initialize(&proxy.url, 0)
        .header("mcp-session-id")
        .unwrap()
        .to_string();
    let reply = http::post(
        &proxy.url,
        &id,
        &[
            ("authorization", auth.as_str()),
            ("Mcp-Method", "tools/list"),
            ("Mcp-Name", "delete_everything"),
        ],
        r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"whoami","arguments":{}}}"#,
    );
    assert_eq!(reply.status, 200, "{reply:?}");
    let calls: Vec<Value> = recorded_for(&record, &id)
        .into_iter()
        .filter(|e| e["method"] == "tools/call")
        .collect();
    assert_eq!(calls.len(), 1, "{calls:?}");
    assert_eq!(calls[0]["headers"], json!({}), "{calls:?}");
    proxy.stop();
}
