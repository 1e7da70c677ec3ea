//! `clap-demo mcp stream` behind its guard, under attack: simultaneous `initialize`s of one
//! token against `--max-sessions-per-token`, each session kept to the token that opened it, and
//! standard headers sent twice. Plain HTTP/1.1 over sockets, as no SDK client would send it.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::io::{Read, Write};
use std::sync::{Arc, Barrier};
use std::time::Duration;

const ALICE: &str = "alice-token-0123456789abcdef";
const BOB: &str = "bob-token-0123456789abcdefgh";

/// One POST to `url` with `headers` (names as written, in order) and `body`: the status, the
/// session id it gave, and the body.
fn post(url: &str, headers: &[(&str, &str)], body: &str) -> (u16, Option<String>, String) {
    let address = url
        .strip_prefix("http://")
        .and_then(|rest| rest.strip_suffix("/mcp"))
        .unwrap();
    let mut stream = std::net::TcpStream::connect(address).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    let mut head = format!(
        "POST /mcp HTTP/1.1\r\nHost: {address}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nContent-Length: {}\r\nConnection: close\r\n",
        body.len()
    );
    for (name, value) in headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str("\r\n");
    stream.write_all(head.as_bytes()).unwrap();
    stream.write_all(body.as_bytes()).unwrap();
    let mut answer = Vec::new();
    // An event stream may stay open after its answer: what came before the timeout is enough.
    let _ = stream.read_to_end(&mut answer);
    let answer = String::from_utf8_lossy(&answer).into_owned();
    let (head, body) = answer.split_once("\r\n\r\n").unwrap_or((&answer, ""));
    let status = head
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    let session = head.lines().find_map(|line| {
        let (name, value) = line.split_once(':')?;
        name.eq_ignore_ascii_case("mcp-session-id")
            .then(|| value.trim().to_string())
    });
    (status, session, body.to_string())
}

const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;
const PING: &str = r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#;

fn server(dir: &std::path::Path) -> common::StreamServer {
    std::fs::write(dir.join("tokens"), format!("alice:{ALICE}\nbob:{BOB}\n")).unwrap();
    common::StreamServer::start(
        dir,
        &[
            "--port",
            "0",
            "--auth-token-file",
            "tokens",
            "--max-sessions-per-token",
            "2",
        ],
    )
}

#[test]
fn simultaneous_initializes_of_one_token_keep_its_limit_and_its_sessions_are_its_own() {
    let dir = tempfile::tempdir().unwrap();
    let server = server(dir.path());
    let barrier = Arc::new(Barrier::new(10));
    let threads: Vec<_> = (0..10)
        .map(|_| {
            let (url, barrier) = (server.url.clone(), barrier.clone());
            std::thread::spawn(move || {
                barrier.wait();
                let auth = format!("Bearer {ALICE}");
                post(&url, &[("Authorization", &auth)], INITIALIZE)
            })
        })
        .collect();
    let results: Vec<_> = threads.into_iter().map(|t| t.join().unwrap()).collect();
    let opened: Vec<String> = results
        .iter()
        .filter(|(status, _, _)| *status == 200)
        .map(|(_, id, _)| id.clone().unwrap())
        .collect();
    assert_eq!(opened.len(), 2, "{results:?}");
    assert!(results
        .iter()
        .all(|(status, _, _)| *status == 200 || *status == 429));
    for id in &opened {
        let alice = format!("Bearer {ALICE}");
        let bob = format!("Bearer {BOB}");
        let in_session = |auth: &str| {
            post(
                &server.url,
                &[
                    ("Authorization", auth),
                    ("Mcp-Session-Id", id),
                    ("Mcp-Protocol-Version", "2025-06-18"),
                ],
                PING,
            )
            .0
        };
        assert_eq!(in_session(&bob), 404, "bob in alice's session {id}");
        assert_ne!(in_session(&alice), 404, "alice in her session {id}");
    }
    server.stop();
}

#[test]
fn a_standard_header_sent_twice_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let server = server(dir.path());
    let alice = format!("Bearer {ALICE}");
    let bob = format!("Bearer {BOB}");
    let cases: [(&str, &str, &str, &str); 4] = [
        ("Mcp-Method", "initialize", "mcp-method", "tools/list"),
        (
            "MCP-Protocol-Version",
            "2025-06-18",
            "mcp-protocol-version",
            "2025-06-18",
        ),
        ("Authorization", &alice, "AUTHORIZATION", &bob),
        ("Mcp-Session-Id", "a", "mcp-session-id", "b"),
    ];
    for (first, first_value, second, second_value) in cases {
        let mut headers = vec![("Authorization", alice.as_str())];
        headers.retain(|(name, _)| !name.eq_ignore_ascii_case(first));
        headers.push((first, first_value));
        headers.push((second, second_value));
        let (status, session, body) = post(&server.url, &headers, INITIALIZE);
        assert_eq!((status, session), (400, None), "{first}: {body}");
        assert!(
            body.contains(&format!(
                "the request has 2 '{}' headers",
                first.to_ascii_lowercase()
            )),
            "{first}: {body}"
        );
    }
    server.stop();
}

/// The Python SDK client ends its session with a DELETE and logs "Session termination failed:
/// 202" unless it is answered 200 or 204: `mcp stream` answers 200, as the proxy does.
#[test]
fn the_python_client_ends_its_session_without_a_warning() {
    let dir = tempfile::tempdir().unwrap();
    let server = common::StreamServer::start(dir.path(), &["--port", "0"]);
    let python = common::workspace().join(".venv/bin/python");
    assert!(
        python.exists(),
        "the Python MCP client is not installed in .venv: run ./scripts/test.sh"
    );
    let script = [
        "import sys, anyio",
        "from mcp import Client",
        "async def main():",
        "    async with Client(sys.argv[1], mode='legacy', cache=None) as client:",
        "        print(len((await client.list_tools()).tools))",
        "anyio.run(main)",
    ]
    .join("\n");
    let mut command = std::process::Command::new(python);
    command.args(["-c", &script, &server.url]);
    let finished = common::run(command, Duration::from_secs(60));
    assert_eq!(finished.code, Some(0), "{}", finished.stderr);
    assert!(finished.stdout.trim().parse::<usize>().unwrap() > 0);
    assert!(
        !finished.stderr.contains("Session termination failed"),
        "{}",
        finished.stderr
    );
    server.stop();
}
