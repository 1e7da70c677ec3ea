//! `clap-demo mcp stream` behind its guard, as users and clients meet it: refused start-ups, and
//! the official TypeScript SDK client connecting with bearer tokens and with JWTs (RS256, ES256)
//! signed by keys generated in the test (`interop/http-auth.mjs`).

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use serde_json::{json, Value};
use std::path::Path;
use std::process::Command;
use std::time::Duration;

const LIMIT: Duration = Duration::from_secs(150);

fn stream(dir: &Path, args: &[&str]) -> common::Finished {
    let mut command = Command::new(common::demo());
    command.args(["mcp", "stream"]).args(args).current_dir(dir);
    common::run(command, Duration::from_secs(30))
}

#[test]
fn an_open_address_without_authentication_is_refused_at_start() {
    let dir = tempfile::tempdir().unwrap();
    let refused = stream(dir.path(), &["--host", "0.0.0.0", "--port", "0"]);
    assert_eq!(refused.code, Some(1));
    assert!(
        refused
            .stderr
            .starts_with("error: refusing to serve on 0.0.0.0:"),
        "{}",
        refused.stderr
    );
    assert!(refused.stderr.ends_with(
        " without authentication: anyone who can reach it could call every tool. \
         Use --auth-token-file FILE, or --oauth-issuer URL --oauth-audience AUDIENCE, \
         or --no-auth to serve without authentication on purpose\n"
    ));

    // --no-auth is the explicit opt-out, and it says so.
    let server = common::StreamServer::start(
        dir.path(),
        &["--host", "0.0.0.0", "--port", "0", "--no-auth"],
    );
    assert!(server.url.starts_with("http://0.0.0.0:"));
    let (code, stderr) = server.stop();
    assert_eq!(code, Some(0));
    assert!(stderr.contains(
        "authentication: off (--no-auth): anyone who can reach this address can call every tool; \
         the scopes tools need apply to authenticated clients only\n"
    ));

    // Loopback needs no authentication.
    let server = common::StreamServer::start(dir.path(), &["--port", "0"]);
    assert!(server
        .stderr()
        .contains("authentication: off (loopback only); the scopes tools need apply to authenticated clients only\n"));
    server.stop();
}

#[test]
fn broken_authentication_settings_stop_the_start() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("tokens"),
        "alice:0123456789abcdef0123\nbob\n",
    )
    .unwrap();
    let cases: [(&[&str], &str); 4] = [
        (
            &["--auth-token-file", "tokens"],
            "error: tokens:2: expected NAME:TOKEN (no ':' on this line)\n",
        ),
        (
            &["--auth-token-file", "missing"],
            "error: missing: cannot read the token file: No such file or directory (os error 2)\n",
        ),
        (
            &["--oauth-issuer", "http://auth.example.com", "--oauth-audience", "x"],
            "error: --oauth-issuer 'http://auth.example.com': OAuth documents are fetched over https (http only from this machine)\n",
        ),
        (
            &["--no-auth", "--auth-token-file", "tokens"],
            "",
        ),
    ];
    for (args, expected) in cases {
        let mut all = vec!["--port", "0"];
        all.extend_from_slice(args);
        let finished = stream(dir.path(), &all);
        assert_ne!(finished.code, Some(0), "{args:?}");
        if expected.is_empty() {
            // clap refuses the combination itself.
            assert!(
                finished.stderr.contains("cannot be used with"),
                "{}",
                finished.stderr
            );
        } else {
            assert_eq!(finished.stderr, expected, "{args:?}");
        }
        assert!(!finished.stderr.contains("0123456789abcdef0123"));
    }
    // An issuer that does not answer.
    let finished = stream(
        dir.path(),
        &[
            "--port",
            "0",
            "--oauth-issuer",
            "http://127.0.0.1:1",
            "--oauth-audience",
            "x",
        ],
    );
    assert_eq!(finished.code, Some(1));
    assert!(finished
        .stderr
        .starts_with("error: cannot find the metadata of the issuer http://127.0.0.1:1; tried http://127.0.0.1:1/.well-known/oauth-authorization-server: cannot connect to 127.0.0.1:1"));
}

/// What an SDK session saw of a call: its result's structured content or its error.
fn call<'a>(session: &'a Value, label: &str) -> &'a Value {
    &session["calls"][label]
}

fn refused_with(session: &Value, label: &str, code: i64, message: &str) {
    let error = &call(session, label)["error"];
    assert_eq!(error["code"], code, "{label}: {session}");
    let body = json!({"error": if code == 403 { "insufficient_scope" } else { "invalid_token" }, "error_description": message});
    assert_eq!(
        error["message"],
        format!("Streamable HTTP error: Error POSTing to endpoint: {body}"),
        "{label}"
    );
}

fn connect_refused(session: &Value, message: &str) {
    let body = json!({"error": "invalid_token", "error_description": message});
    assert_eq!(
        session["connectError"],
        json!({"code": 401, "message": format!("Streamable HTTP error: Error POSTing to endpoint: {body}")})
    );
}

fn ran(session: &Value, label: &str) {
    let result = &call(session, label)["result"];
    assert_eq!(result["isError"], false, "{label}: {session}");
    assert_eq!(result["structuredContent"]["exitCode"], 0, "{label}");
}

#[test]
fn typescript_client_with_bearer_tokens_and_jwts() {
    let dir = tempfile::tempdir().unwrap();
    let interop = common::interop_package("@modelcontextprotocol/sdk");
    let mut command = Command::new("node");
    command
        .arg(interop.join("http-auth.mjs"))
        .arg(common::demo())
        .current_dir(dir.path())
        .env("CLAP_DEMO_HOME", dir.path().join("home"));
    let finished = common::run(command, LIMIT);
    assert_eq!(finished.code, Some(0), "{}", finished.stderr);
    let out: Value = serde_json::from_str(&finished.stdout).unwrap();
    let url = out["url"].as_str().unwrap();
    let base = url.trim_end_matches("/mcp");
    let metadata_url = format!("{base}/.well-known/oauth-protected-resource/mcp");
    let tools = |names: &[&str]| -> Value {
        names
            .iter()
            .map(|n| json!(format!("clap-demo_{n}")))
            .collect()
    };

    // No token: 401 with a Bearer challenge pointing at the metadata.
    assert_eq!(out["noToken"]["status"], 401);
    assert_eq!(
        out["noToken"]["wwwAuthenticate"],
        format!("Bearer realm=\"mcp\", resource_metadata=\"{metadata_url}\"")
    );
    assert_eq!(
        out["noToken"]["body"],
        json!({"error": "missing_token", "error_description": "this server needs a bearer token (Authorization: Bearer TOKEN)"})
    );
    assert_eq!(out["wrongScheme"]["status"], 401);

    // Bearer tokens: alice holds both scopes, bob none; bob sees and may call only greet.
    assert_eq!(
        out["alice"]["tools"],
        tools(&["greet", "files_list", "config_set"])
    );
    for label in ["greet", "listFiles", "setConfig"] {
        ran(&out["alice"], label);
    }
    assert_eq!(out["bob"]["tools"], tools(&["greet"]));
    ran(&out["bob"], "greet");
    refused_with(
        &out["bob"],
        "listFiles",
        403,
        "'bob' may not call the tool 'clap-demo_files_list': it needs the scope files:read",
    );
    refused_with(
        &out["bob"],
        "setConfig",
        403,
        "'bob' may not call the tool 'clap-demo_config_set': it needs the scope config:write",
    );
    connect_refused(
        &out["unknownToken"],
        "the token is not one this server knows",
    );

    // JWTs: RS256 with files:read, ES256 with both scopes.
    assert_eq!(out["rs256"]["tools"], tools(&["greet", "files_list"]));
    ran(&out["rs256"], "greet");
    ran(&out["rs256"], "listFiles");
    refused_with(
        &out["rs256"],
        "setConfig",
        403,
        "'user-rs' may not call the tool 'clap-demo_config_set': it needs the scope config:write",
    );
    assert_eq!(
        out["es256"]["tools"],
        tools(&["greet", "files_list", "config_set"])
    );
    for label in ["greet", "listFiles", "setConfig"] {
        ran(&out["es256"], label);
    }
    let issuer = out["issuer"].as_str().unwrap();
    for (label, message) in [
        ("expired", "the token has expired".to_string()),
        ("notYet", "the token is not valid yet (nbf)".to_string()),
        (
            "audience",
            "the token is for another audience (this server is https://clap-demo.example/mcp)"
                .to_string(),
        ),
        (
            "issuer",
            format!("the token is from another issuer (this server accepts {issuer})"),
        ),
        (
            "signature",
            "the token's signature does not verify".to_string(),
        ),
    ] {
        connect_refused(&out["jwtRefused"][label], &message);
    }

    // A key the issuer rotated in is fetched once, on first sight of its key id.
    assert_eq!(out["keySetFetches"], 1);
    assert_eq!(out["rotated"]["tools"], tools(&["greet", "config_set"]));
    ran(&out["rotated"], "setConfig");

    // The protected resource metadata (RFC 9728), at both places clients look.
    let document = json!({
        "resource": url,
        "authorization_servers": [issuer],
        "scopes_supported": ["config:write", "files:read"],
        "bearer_methods_supported": ["header"]
    });
    for path in [
        "/.well-known/oauth-protected-resource/mcp",
        "/.well-known/oauth-protected-resource",
    ] {
        assert_eq!(
            out["metadata"][path],
            json!({"status": 200, "body": document})
        );
    }

    // Limits.
    assert_eq!(out["bodyTooLarge"]["status"], 413);
    assert_eq!(
        out["bodyTooLarge"]["body"]["error_description"],
        "the request body is larger than 65536 bytes (--max-body-bytes)"
    );
    assert_eq!(out["headTooLarge"]["status"], 431);
    assert_eq!(out["foreignOrigin"]["status"], 403);
    let statuses: Vec<&Value> = out["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| &s["status"])
        .collect();
    assert_eq!(statuses, [200, 200, 200, 429]);
    assert_eq!(
        out["sessions"][3]["body"]["error_description"],
        "'dave' already has 3 open sessions, the most allowed (--max-sessions-per-token); close one (HTTP DELETE), or wait until one has been idle for --session-idle"
    );
    assert_eq!(out["otherClientsSession"]["status"], 404);
    assert_eq!(out["deleted"], 200);
    assert_eq!(out["afterDelete"], 200);

    // SIGHUP: the token file read again.
    assert_eq!(out["reload"], json!({"carol": 200, "alice": 401}));
    assert_eq!(out["shutdown"], json!({"code": 0, "signal": null}));

    // Token names in the log and the access log; tokens nowhere.
    let stderr = out["stderr"].as_str().unwrap();
    let access = std::fs::read_to_string(dir.path().join("access.jsonl")).unwrap();
    for name in [
        "alice",
        "bob",
        "carol",
        "dave",
        "user-rs",
        "user-ec",
        "user-rotated",
    ] {
        assert!(
            stderr.contains(&format!("client=\"{name}\"")),
            "{name} not in the log"
        );
        assert!(
            access.contains(&format!("\"client\":\"{name}\"")),
            "{name} not in the access log"
        );
    }
    for secret in out["secrets"].as_array().unwrap() {
        let secret = secret.as_str().unwrap();
        assert!(!stderr.contains(secret), "a secret reached the log");
        assert!(!access.contains(secret), "a secret reached the access log");
        // Nor any part of a JWT (its signature, or its claims).
        for part in secret.split('.').filter(|p| p.len() > 16) {
            assert!(!stderr.contains(part) && !access.contains(part));
        }
    }
    let calls: Vec<Value> = access
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|l| l["event"] == "tools/call")
        .map(|l| json!([l["client"], l["tool"]]))
        .collect();
    assert!(calls.contains(&json!(["bob", "clap-demo_greet"])));
    assert!(calls.contains(&json!(["user-ec", "clap-demo_config_set"])));
    assert!(!calls.contains(&json!(["bob", "clap-demo_files_list"])));
}

/// One HTTP/1.1 POST of `body` to `url` (`http://HOST:PORT/mcp`), the connection closed after
/// it: the status, the session id header if any, and the JSON-RPC messages of the answer
/// (a JSON body, or the `data:` lines of an event stream).
fn post(url: &str, session: Option<&str>, body: &[u8]) -> (u16, Option<String>, Vec<Value>) {
    let (status, head, body) = post_raw(url, session, body);
    let session = head.lines().find_map(|line| {
        let (name, value) = line.split_once(':')?;
        name.eq_ignore_ascii_case("mcp-session-id")
            .then(|| value.trim().to_string())
    });
    let messages = body
        .lines()
        .filter_map(|line| {
            let json = line.strip_prefix("data:").unwrap_or(line).trim();
            serde_json::from_str::<Value>(json).ok()
        })
        .filter(|message| message.get("jsonrpc").is_some())
        .collect();
    (status, session, messages)
}

/// [`post`], the answer as it came: the status, the head and the body.
fn post_raw(url: &str, session: Option<&str>, body: &[u8]) -> (u16, String, String) {
    use std::io::{Read, Write};
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
    if let Some(session) = session {
        head.push_str(&format!(
            "Mcp-Session-Id: {session}\r\nMcp-Protocol-Version: 2025-06-18\r\n"
        ));
    }
    head.push_str("\r\n");
    stream.write_all(head.as_bytes()).unwrap();
    stream.write_all(body).unwrap();
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
    (status, head.to_string(), body.to_string())
}

/// Over HTTP as over stdio: a request that is valid JSON but that the server cannot read
/// exactly (a lone surrogate, a number past the float range, an integer past 64 bits) is
/// answered with -32602 saying why, and never reaches the command with a value changed; a body
/// that starts with a byte order mark is read without it.
#[test]
fn requests_the_server_cannot_read_exactly_are_answered_over_http() {
    let dir = tempfile::tempdir().unwrap();
    let server = common::StreamServer::start(dir.path(), &["--port", "0"]);
    let (status, session, answers) = post(
        &server.url,
        None,
        br#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#,
    );
    assert_eq!(status, 200, "{answers:?}");
    let session = session.expect("a session id");
    assert_eq!(answers[0]["result"]["protocolVersion"], "2025-06-18");
    let (status, _, _) = post(
        &server.url,
        Some(&session),
        br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
    );
    assert_eq!(status, 202);
    let error = |body: &[u8]| {
        let (status, _, answers) = post(&server.url, Some(&session), body);
        assert_eq!(status, 200, "{answers:?}");
        let error = &answers[0]["error"];
        (
            error["code"].as_i64().unwrap_or_default(),
            error["message"].as_str().unwrap_or_default().to_string(),
        )
    };
    for body in [
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"clap-demo_greet","arguments":{"name":"\ud800"}}}"#,
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"clap-demo_files_list","arguments":{"limit":1e400}}}"#,
    ] {
        let (code, message) = error(body.as_bytes());
        assert_eq!(code, -32602);
        assert!(
            message.starts_with("the request is valid JSON that this server cannot read exactly"),
            "{message}"
        );
    }
    assert_eq!(
        error(br#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"clap-demo_config_set","arguments":{"key":"k","value":123456789012345678901234567890,"dry_run":true}}}"#),
        (-32602, "the request holds the number 123456789012345678901234567890, which this server reads as a 64-bit float and would pass on as 1.2345678901234568e+29; send it as a string".to_string())
    );
    let (status, _, answers) = post(
        &server.url,
        Some(&session),
        b"\xEF\xBB\xBF{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"ping\"}",
    );
    assert_eq!((status, &answers[0]["result"]), (200, &json!({})));
    // rmcp answers a body it cannot read at all 415 in plain text, the id lost: it is answered
    // here with the id exactly as sent (a JSON-RPC error, 200), or 400 when there is no request.
    for (body, id, status, says) in [
        (
            r#"{"jsonrpc":"2.0","id":1.5,"method":"ping"}"#,
            "1.5",
            200,
            "cannot be held exactly",
        ),
        (
            r#"{"jsonrpc":"2.0","id":1e400,"method":"ping"}"#,
            "1e400",
            200,
            "cannot be held exactly",
        ),
        (
            r#"{"jsonrpc":"2.0","id":"\ud800","method":"ping"}"#,
            r#""\ud800""#,
            200,
            "cannot be held exactly",
        ),
        (
            r#"{"jsonrpc":"2.0","id":5,"method":5}"#,
            "5",
            200,
            "is not a string",
        ),
        (
            r#"{"jsonrpc":"2.0","id":true,"method":"ping"}"#,
            "null",
            400,
            "neither a string nor a number",
        ),
        ("{bad", "null", 400, "not valid JSON"),
    ] {
        let (got, head, answer) = post_raw(&server.url, Some(&session), body.as_bytes());
        assert_eq!(got, status, "{body}: {answer}");
        assert!(
            head.to_ascii_lowercase()
                .contains("content-type: application/json"),
            "{head}"
        );
        let prefix = format!(r#"{{"jsonrpc":"2.0","id":{id},"error":{{"#);
        assert!(
            answer.starts_with(&prefix) && answer.contains(says),
            "{body}: {answer}"
        );
    }
    server.stop();
}

/// A peer that stalls is not held by `mcp stream`: half a request head, and a connection that
/// sends nothing, are closed after `--read-timeout`; half a body is answered 408 and closed.
#[test]
fn stalled_peers_are_closed_after_the_read_timeout() {
    use std::io::{Read, Write};
    use std::net::TcpStream;
    let dir = tempfile::tempdir().unwrap();
    let server = common::StreamServer::start(dir.path(), &["--port", "0", "--read-timeout", "1"]);
    let at = server
        .url
        .strip_prefix("http://")
        .and_then(|rest| rest.split('/').next())
        .unwrap()
        .to_string();
    let mut half_head = TcpStream::connect(&at).unwrap();
    half_head
        .write_all(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Ty")
        .unwrap();
    let silent = TcpStream::connect(&at).unwrap();
    let mut half_body = TcpStream::connect(&at).unwrap();
    half_body
        .write_all(
            b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n\
              Accept: application/json, text/event-stream\r\nContent-Length: 100\r\n\r\n{\"jsonrpc\":",
        )
        .unwrap();
    // Read until the server closes (or 20 s pass): what it sent.
    let until_closed = |mut stream: TcpStream| -> Option<String> {
        stream
            .set_read_timeout(Some(Duration::from_secs(20)))
            .unwrap();
        let mut got = Vec::new();
        let mut buffer = [0u8; 4096];
        loop {
            match stream.read(&mut buffer) {
                Ok(0) => return Some(String::from_utf8_lossy(&got).into_owned()),
                Ok(n) => got.extend_from_slice(&buffer[..n]),
                Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => {
                    return Some(String::from_utf8_lossy(&got).into_owned())
                }
                Err(_) => return None,
            }
        }
    };
    assert!(until_closed(half_head).is_some(), "half a head was held");
    assert!(until_closed(silent).is_some(), "a silent peer was held");
    let answer = until_closed(half_body).expect("half a body was held");
    assert!(
        answer.starts_with("HTTP/1.1 408") && answer.contains("--read-timeout"),
        "{answer}"
    );
    server.stop();
}
