//! The guard in-process, as a server calls it per request: keys generated here (P-256), tokens
//! signed here, key sets and token files written to a temporary directory.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use base64::Engine;
use bytes::Bytes;
use http::header::{AUTHORIZATION, HOST, ORIGIN, WWW_AUTHENTICATE};
use http::StatusCode;
use http_body_util::Full;
use jsonwebtoken::jwk::{Jwk, JwkSet};
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use p256::pkcs8::EncodePrivateKey;
use proptest::prelude::*;
use serde_json::{json, Value};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use toolschema_http::{
    AuthConfig, AuthMethod, Guard, GuardConfig, Limits, OAuthConfig, Principal, RefusalKind,
    StartError, ToolScopes,
};

const ISSUER: &str = "https://auth.example.com";
const AUDIENCE: &str = "https://mcp.example.com/mcp";
const ALICE: &str = "alice-token-0123456789abcdef";
const BOB: &str = "bob-token-0123456789abcdefgh";

/// A signing key made for this test, and its public JWK.
struct SigningKey {
    encoding: EncodingKey,
    jwk: Jwk,
    kid: String,
}

fn signing_key(kid: &str) -> SigningKey {
    let secret = p256::SecretKey::random(&mut rand_core::OsRng);
    let der = secret.to_pkcs8_der().unwrap();
    let encoding = EncodingKey::from_ec_der(der.as_bytes());
    let mut jwk = Jwk::from_encoding_key(&encoding, Algorithm::ES256).unwrap();
    jwk.common.key_id = Some(kid.to_string());
    SigningKey {
        encoding,
        jwk,
        kid: kid.to_string(),
    }
}

fn now() -> i64 {
    jsonwebtoken::get_current_timestamp() as i64
}

fn claims() -> Value {
    json!({"iss": ISSUER, "aud": AUDIENCE, "sub": "user-42", "exp": now() + 300, "iat": now(), "scope": "files:read"})
}

fn sign(key: &SigningKey, claims: &Value) -> String {
    let mut header = Header::new(Algorithm::ES256);
    header.kid = Some(key.kid.clone());
    jsonwebtoken::encode(&header, claims, &key.encoding).unwrap()
}

fn write_key_set(path: &Path, keys: &[&SigningKey]) {
    let set = JwkSet {
        keys: keys.iter().map(|k| k.jwk.clone()).collect(),
    };
    std::fs::write(path, serde_json::to_string(&set).unwrap()).unwrap();
}

struct Setup {
    dir: tempfile::TempDir,
    key: SigningKey,
}

impl Setup {
    fn new() -> Setup {
        let dir = tempfile::tempdir().unwrap();
        let key = signing_key("key-1");
        write_key_set(&dir.path().join("jwks.json"), &[&key]);
        std::fs::write(
            dir.path().join("tokens"),
            format!("alice:{ALICE} files:read config:write\nbob:{BOB}\n"),
        )
        .unwrap();
        Setup { dir, key }
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    fn config(&self) -> GuardConfig {
        GuardConfig {
            auth: AuthConfig {
                token_file: Some(self.path("tokens")),
                oauth: Some(OAuthConfig {
                    issuer: ISSUER.into(),
                    audience: AUDIENCE.into(),
                    jwks_file: Some(self.path("jwks.json")),
                }),
                no_auth: false,
            },
            tool_scopes: ToolScopes::new()
                .require("files_*", "files:read")
                .require("config_set", "config:write"),
            limits: Limits {
                max_body_bytes: 1024,
                max_header_bytes: 8192,
                max_sessions_per_client: 2,
                ..Limits::default()
            },
            access_log: Some(self.path("access.jsonl")),
            endpoint_path: "/mcp".into(),
            ..GuardConfig::default()
        }
    }

    async fn guard(&self) -> Guard {
        Guard::start(self.config(), loopback()).await.unwrap()
    }

    fn access_log(&self) -> String {
        std::fs::read_to_string(self.path("access.jsonl")).unwrap_or_default()
    }
}

fn loopback() -> SocketAddr {
    "127.0.0.1:8080".parse().unwrap()
}

fn request(authorization: Option<&str>) -> http::request::Parts {
    let mut builder = http::Request::post("/mcp").header(HOST, "127.0.0.1:8080");
    if let Some(value) = authorization {
        builder = builder.header(AUTHORIZATION, value);
    }
    builder.body(()).unwrap().into_parts().0
}

fn bearer(token: &str) -> Option<String> {
    Some(format!("Bearer {token}"))
}

async fn admitted(guard: &Guard, token: &str) -> Principal {
    guard
        .admit(&request(bearer(token).as_deref()))
        .await
        .expect("the request should be admitted")
}

async fn refusal(guard: &Guard, authorization: Option<&str>) -> toolschema_http::Refusal {
    guard
        .admit(&request(authorization))
        .await
        .expect_err("the request should be refused")
}

#[tokio::test]
async fn tokens_from_the_file_name_their_client() {
    let setup = Setup::new();
    let guard = setup.guard().await;
    let alice = admitted(&guard, ALICE).await;
    assert_eq!((alice.name(), alice.method()), ("alice", AuthMethod::Token));
    let bob = guard
        .admit(&request(Some(&format!("bearer   {BOB}"))))
        .await
        .unwrap();
    assert_eq!(bob.name(), "bob");

    let missing = refusal(&guard, None).await;
    assert_eq!(missing.status(), StatusCode::UNAUTHORIZED);
    assert_eq!(
        missing.challenge(),
        Some("Bearer realm=\"mcp\", resource_metadata=\"http://127.0.0.1:8080/.well-known/oauth-protected-resource/mcp\"")
    );
    let unknown = refusal(&guard, bearer("carol-token-0123456789abcdef").as_deref()).await;
    assert_eq!(unknown.kind(), RefusalKind::InvalidToken);
    assert_eq!(unknown.message(), "the token is not one this server knows");
    assert!(unknown
        .challenge()
        .unwrap()
        .contains("error=\"invalid_token\""));
    let basic = refusal(&guard, Some("Basic YWxpY2U6eA==")).await;
    assert_eq!(
        basic.message(),
        "the Authorization header is not 'Bearer TOKEN'"
    );

    // Nothing the guard wrote holds a token.
    let log = setup.access_log();
    assert_eq!(log.lines().count(), 3);
    for token in [ALICE, BOB, "carol-token-0123456789abcdef"] {
        assert!(!log.contains(token));
    }
}

/// The start-up line counts tokens and keys in words that agree with the count: one token
/// file of one line, a key set of one key, then two of each.
#[tokio::test]
async fn the_start_up_line_says_one_token_and_one_key_in_the_singular() {
    let setup = Setup::new();
    std::fs::write(setup.path("tokens"), format!("alice:{ALICE}\n")).unwrap();
    let one = setup.guard().await.describe();
    assert!(one.contains(" 1 bearer token from "), "{one}");
    assert!(one.contains(" (1 key from "), "{one}");
    std::fs::write(setup.path("tokens"), format!("alice:{ALICE}\nbob:{BOB}\n")).unwrap();
    write_key_set(
        &setup.path("jwks.json"),
        &[&setup.key, &signing_key("key-2")],
    );
    let two = setup.guard().await.describe();
    assert!(two.contains(" 2 bearer tokens from "), "{two}");
    assert!(two.contains(" (2 keys from "), "{two}");
}

#[tokio::test]
async fn jwts_are_checked_for_signature_issuer_audience_and_time() {
    let setup = Setup::new();
    let guard = setup.guard().await;
    let good = sign(&setup.key, &claims());
    let principal = admitted(&guard, &good).await;
    assert_eq!(principal.name(), "user-42");
    assert_eq!(principal.method(), AuthMethod::Jwt);
    assert!(principal.has_scope("files:read"));
    assert!(!principal.has_scope("config:write"));

    let mut cases: Vec<(String, &str)> = Vec::new();
    let mut expired = claims();
    expired["exp"] = json!(now() - 600);
    cases.push((sign(&setup.key, &expired), "the token has expired"));
    let mut early = claims();
    early["nbf"] = json!(now() + 600);
    cases.push((sign(&setup.key, &early), "the token is not valid yet (nbf)"));
    let mut audience = claims();
    audience["aud"] = json!("https://other.example.com/mcp");
    cases.push((
        sign(&setup.key, &audience),
        "the token is for another audience (this server is https://mcp.example.com/mcp)",
    ));
    let mut issuer = claims();
    issuer["iss"] = json!("https://evil.example.com");
    cases.push((
        sign(&setup.key, &issuer),
        "the token is from another issuer (this server accepts https://auth.example.com)",
    ));
    let mut no_exp = claims();
    no_exp.as_object_mut().unwrap().remove("exp");
    cases.push((
        sign(&setup.key, &no_exp),
        "the token has no valid 'exp' claim",
    ));
    // Signed by another key that claims the same key id.
    let impostor = SigningKey {
        kid: "key-1".into(),
        ..signing_key("key-1")
    };
    cases.push((
        sign(&impostor, &claims()),
        "the token's signature does not verify",
    ));
    // A signature cut off or changed.
    let mut tampered = good.clone();
    tampered.truncate(good.len() - 4);
    tampered.push_str("AAAA");
    cases.push((tampered, "the token's signature does not verify"));
    // A token that says it needs no signature.
    let b64 = base64::engine::general_purpose::URL_SAFE_NO_PAD;
    let unsigned = format!(
        "{}.{}.",
        b64.encode(r#"{"alg":"none","kid":"key-1"}"#),
        b64.encode(claims().to_string())
    );
    cases.push((unsigned, "the token is not signed (alg 'none')"));
    // A shared secret in place of the key: never accepted.
    let mut hs_header = Header::new(Algorithm::HS256);
    hs_header.kid = Some("key-1".into());
    let hs = jsonwebtoken::encode(
        &hs_header,
        &claims(),
        &EncodingKey::from_secret(b"any secret at all"),
    )
    .unwrap();
    cases.push((
        hs,
        "the token is signed with HS256, which this server does not accept (asymmetric algorithms only)",
    ));

    for (token, message) in &cases {
        let refused = refusal(&guard, bearer(token).as_deref()).await;
        assert_eq!(refused.status(), StatusCode::UNAUTHORIZED, "{message}");
        assert_eq!(refused.message(), *message);
        let challenge = refused.challenge().unwrap();
        assert!(challenge.starts_with("Bearer realm=\"mcp\", error=\"invalid_token\""));
        assert!(challenge.ends_with(
            "resource_metadata=\"http://127.0.0.1:8080/.well-known/oauth-protected-resource/mcp\""
        ));
    }
    let log = setup.access_log();
    for (token, _) in &cases {
        assert!(!log.contains(token.as_str()));
    }
}

#[tokio::test]
async fn an_unknown_key_id_reads_the_key_set_again_once() {
    let setup = Setup::new();
    let guard = setup.guard().await;
    let rotated = signing_key("key-2");
    let token = sign(&rotated, &claims());
    write_key_set(&setup.path("jwks.json"), &[&setup.key, &rotated]);
    let principal = guard.admit(&request(bearer(&token).as_deref())).await;
    assert_eq!(principal.unwrap().name(), "user-42");

    // Right after, a key id nobody has does not make the guard read the keys again.
    let stranger = signing_key("key-3");
    write_key_set(&setup.path("jwks.json"), &[&stranger]);
    let refused = refusal(&guard, bearer(&sign(&stranger, &claims())).as_deref()).await;
    assert_eq!(
        refused.message(),
        "the token's key 'key-3' is not among the issuer's keys"
    );
    // An explicit reload (SIGHUP) does.
    guard.reload().await;
    let principal = guard
        .admit(&request(bearer(&sign(&stranger, &claims())).as_deref()))
        .await;
    assert!(principal.is_ok());
}

#[tokio::test]
async fn tool_scopes_decide_calls_and_listings() {
    let setup = Setup::new();
    let guard = setup.guard().await;
    let parts = request(None);
    let jwt_user = admitted(&guard, &sign(&setup.key, &claims())).await;
    assert!(guard.may_call(&jwt_user, "files_list"));
    assert!(guard.may_call(&jwt_user, "greet"));
    assert!(!guard.may_call(&jwt_user, "config_set"));
    assert_eq!(
        guard.authorize_call(&parts, &jwt_user, "files_list", None),
        Ok(())
    );
    let refused = guard
        .authorize_call(&parts, &jwt_user, "config_set", None)
        .unwrap_err();
    assert_eq!(refused.status(), StatusCode::FORBIDDEN);
    assert_eq!(
        refused.message(),
        "'user-42' may not call the tool 'config_set': it needs the scope config:write"
    );
    assert_eq!(
        refused.challenge(),
        Some("Bearer realm=\"mcp\", error=\"insufficient_scope\", scope=\"config:write\", error_description=\"'user-42' may not call the tool 'config_set': it needs the scope config:write\", resource_metadata=\"http://127.0.0.1:8080/.well-known/oauth-protected-resource/mcp\"")
    );
    let response = refused.into_response();
    assert!(response.headers().contains_key(WWW_AUTHENTICATE));

    // A token of the file with no scopes may call only the tools that need none.
    let bob = admitted(&guard, BOB).await;
    assert!(guard.may_call(&bob, "greet"));
    assert!(!guard.may_call(&bob, "files_list"));

    let log: Vec<Value> = setup
        .access_log()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(log.len(), 2);
    assert_eq!(
        (&log[0]["client"], &log[0]["event"], &log[0]["tool"]),
        (
            &json!("user-42"),
            &json!("tools/call"),
            &json!("files_list")
        )
    );
    assert_eq!(
        (&log[1]["event"], &log[1]["status"], &log[1]["reason"]),
        (&json!("refused"), &json!(403), &json!("insufficient_scope"))
    );
}

#[tokio::test]
async fn the_metadata_document_names_issuer_resource_and_scopes() {
    let setup = Setup::new();
    let guard = setup.guard().await;
    assert!(guard.serves_metadata("/.well-known/oauth-protected-resource"));
    assert!(guard.serves_metadata("/.well-known/oauth-protected-resource/mcp"));
    assert!(!guard.serves_metadata("/.well-known/oauth-protected-resource/other"));
    assert_eq!(
        guard.metadata(&request(None)).unwrap(),
        json!({
            "resource": "http://127.0.0.1:8080/mcp",
            "authorization_servers": [ISSUER],
            "scopes_supported": ["config:write", "files:read"],
            "bearer_methods_supported": ["header"]
        })
    );
    let mut config = setup.config();
    config.resource_url = Some(AUDIENCE.into());
    let behind_proxy = Guard::start(config, loopback()).await.unwrap();
    assert_eq!(
        behind_proxy.metadata(&request(None)).unwrap()["resource"],
        AUDIENCE
    );
    let missing = refusal(&behind_proxy, None).await;
    assert!(missing.challenge().unwrap().ends_with(
        "resource_metadata=\"https://mcp.example.com/.well-known/oauth-protected-resource/mcp\""
    ));
}

#[tokio::test]
async fn starting_on_an_open_address_needs_authentication() {
    let open: SocketAddr = "0.0.0.0:8080".parse().unwrap();
    let error = match Guard::start(GuardConfig::default(), open).await {
        Err(error) => error,
        Ok(_) => panic!("started without authentication on 0.0.0.0"),
    };
    assert!(matches!(error, StartError::Unauthenticated(_)));
    // The same check, before binding.
    assert!(matches!(
        GuardConfig::default().check_address(open),
        Err(StartError::Unauthenticated(_))
    ));
    assert!(GuardConfig::default().check_address(loopback()).is_ok());
    assert_eq!(
        error.to_string(),
        "refusing to serve on 0.0.0.0:8080 without authentication: anyone who can reach it could call every tool. Use --auth-token-file FILE, or --oauth-issuer URL --oauth-audience AUDIENCE, or --no-auth to serve without authentication on purpose"
    );
    let mut config = GuardConfig::default();
    config.auth.no_auth = true;
    let guard = Guard::start(config, open).await.unwrap();
    assert!(!guard.requires_auth());
    let mut parts = request(None);
    parts
        .headers
        .insert(HOST, "localhost:8080".parse().unwrap());
    assert_eq!(guard.admit(&parts).await.unwrap(), Principal::anonymous());
    // Origin checks stay on without authentication.
    parts
        .headers
        .insert(ORIGIN, "http://evil.example.com".parse().unwrap());
    assert_eq!(
        guard.admit(&parts).await.unwrap_err().status(),
        StatusCode::FORBIDDEN
    );
    // On loopback, no authentication is needed.
    assert!(Guard::start(GuardConfig::default(), loopback())
        .await
        .is_ok());
}

#[tokio::test]
async fn bodies_heads_and_sessions_are_bounded() {
    let setup = Setup::new();
    let guard = setup.guard().await;
    let alice = admitted(&guard, ALICE).await;
    let headers = http::HeaderMap::new();
    let small = Full::new(Bytes::from(vec![b' '; 1024]));
    assert_eq!(
        guard
            .read_body(&alice, &headers, small)
            .await
            .unwrap()
            .len(),
        1024
    );
    let large = Full::new(Bytes::from(vec![b' '; 1025]));
    let refused = guard.read_body(&alice, &headers, large).await.unwrap_err();
    assert_eq!(refused.status(), StatusCode::PAYLOAD_TOO_LARGE);
    let mut declared = http::HeaderMap::new();
    declared.insert(http::header::CONTENT_LENGTH, "999999999".parse().unwrap());
    let refused = guard
        .read_body(&alice, &declared, Full::new(Bytes::new()))
        .await
        .unwrap_err();
    assert_eq!(refused.status(), StatusCode::PAYLOAD_TOO_LARGE);

    let mut big_head = request(bearer(ALICE).as_deref());
    big_head
        .headers
        .insert("x-padding", "x".repeat(9000).parse().unwrap());
    assert_eq!(
        guard.admit(&big_head).await.unwrap_err().status(),
        StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE
    );

    let first = guard.open_session(&alice).unwrap();
    let _second = guard.open_session(&alice).unwrap();
    assert_eq!(
        guard.open_session(&alice).unwrap_err().status(),
        StatusCode::TOO_MANY_REQUESTS
    );
    drop(first);
    assert!(guard.open_session(&alice).is_ok());
}

#[tokio::test]
async fn odd_requests_and_odd_claims() {
    let setup = Setup::new();
    let guard = setup.guard().await;
    let parts = request(None);
    let bob = admitted(&guard, BOB).await;

    // A batch cannot hide a call the client may not make; a body the guard cannot read is
    // refused when scopes matter, and left to the server when they do not.
    let batch = br#"[{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"greet"}},
                     {"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"files_read"}}]"#;
    assert_eq!(
        guard
            .check_calls(&parts, &bob, batch, None)
            .unwrap_err()
            .status(),
        StatusCode::FORBIDDEN
    );
    assert_eq!(
        guard
            .check_calls(&parts, &bob, b"\xff{", None)
            .unwrap_err()
            .status(),
        StatusCode::BAD_REQUEST
    );
    let open = Guard::start(GuardConfig::default(), loopback())
        .await
        .unwrap();
    assert_eq!(
        open.check_calls(&parts, &Principal::anonymous(), b"\xff{", None),
        Ok(())
    );

    // Two Authorization headers (refused as every repeated single header is), or one that is
    // not text.
    let mut twice = request(bearer(ALICE).as_deref());
    twice
        .headers
        .append(AUTHORIZATION, format!("Bearer {BOB}").parse().unwrap());
    assert_eq!(
        guard.admit(&twice).await.unwrap_err().kind(),
        RefusalKind::BadRequest
    );
    let mut binary = request(None);
    binary.headers.insert(
        AUTHORIZATION,
        http::HeaderValue::from_bytes(b"Bearer \xff\xfe").unwrap(),
    );
    assert_eq!(
        guard.admit(&binary).await.unwrap_err().message(),
        "the Authorization header is not 'Bearer TOKEN'"
    );

    // Claims of odd types and sizes.
    let cases: Vec<(Value, Result<&str, &str>)> =
        vec![
        (json!({"exp": "tomorrow"}), Err("the token has no valid 'exp' claim")),
        (json!({"exp": 1e300}), Err("the token has no valid 'exp' claim")),
        (json!({"aud": ["https://x.example", AUDIENCE]}), Ok("user-42")),
        (
            json!({"aud": ["https://x.example"]}),
            Err("the token is for another audience (this server is https://mcp.example.com/mcp)"),
        ),
        (json!({"sub": "\u{1}x\ny"}), Ok("xy")),
        (json!({"scope": 7, "scp": {"a": 1}}), Ok("user-42")),
    ];
    for (changes, expected) in cases {
        let mut token_claims = claims();
        for (key, value) in changes.as_object().unwrap() {
            token_claims[key] = value.clone();
        }
        let admitted = guard
            .admit(&request(
                bearer(&sign(&setup.key, &token_claims)).as_deref(),
            ))
            .await;
        match expected {
            Ok(name) => assert_eq!(admitted.unwrap().name(), name, "{changes}"),
            Err(message) => assert_eq!(admitted.unwrap_err().message(), message, "{changes}"),
        }
    }
    let long = "n".repeat(3_000);
    let mut token_claims = claims();
    token_claims["sub"] = json!(long);
    let principal = guard
        .admit(&request(
            bearer(&sign(&setup.key, &token_claims)).as_deref(),
        ))
        .await
        .unwrap();
    assert_eq!(principal.name().len(), 128);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Whatever a client sends as a bearer token, the guard answers without panicking and never
    /// lets it in unless it is a token of the file.
    #[test]
    fn no_made_up_token_gets_in(token in "[ -~]{0,200}") {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        let setup = Setup::new();
        runtime.block_on(async {
            let guard = setup.guard().await;
            let header = format!("Bearer {token}");
            if http::HeaderValue::from_str(&header).is_err() {
                return Ok(());
            }
            let admitted = guard.admit(&request(Some(&header))).await;
            let trimmed = token.trim();
            prop_assert_eq!(admitted.is_ok(), trimmed == ALICE || trimmed == BOB);
            Ok(())
        })?;
    }
}

/// Headers a request carries at most once, as tests write them.
const SINGLE: &[&str] = &[
    "Mcp-Name",
    "Mcp-Method",
    "MCP-Protocol-Version",
    "Mcp-Session-Id",
    "Mcp-Param-Region",
    "Last-Event-ID",
    "Authorization",
    "Content-Type",
    "Content-Length",
    "Host",
    "Origin",
];

/// `name` with the case of each letter flipped where `flips` has a bit set.
fn recased(name: &str, flips: u64) -> String {
    name.chars()
        .enumerate()
        .map(|(i, c)| {
            if flips >> (i % 64) & 1 == 1 {
                if c.is_ascii_uppercase() {
                    c.to_ascii_lowercase()
                } else {
                    c.to_ascii_uppercase()
                }
            } else {
                c
            }
        })
        .collect()
}

/// A value fit for `name` in a request to the guard of `Setup` (admitted when sent once).
fn value_for(name: &str, n: usize) -> String {
    match name.to_ascii_lowercase().as_str() {
        "authorization" => format!("Bearer {}", [ALICE, BOB][n % 2]),
        "host" => ["127.0.0.1:8080", "localhost:8080"][n % 2].to_string(),
        "origin" => ["http://127.0.0.1:8080", "http://localhost:8080"][n % 2].to_string(),
        "content-length" => ["10", "20"][n % 2].to_string(),
        "content-type" => ["application/json", "text/plain"][n % 2].to_string(),
        _ => format!("value-{n}"),
    }
}

/// A request to the guard with `headers` as given (names in any case, in order), a token of
/// the file unless they hold one, and a Host unless they hold one.
fn request_with(headers: &[(String, String)]) -> http::request::Parts {
    let mut parts = http::Request::post("/mcp").body(()).unwrap().into_parts().0;
    let has = |name: &str| headers.iter().any(|(n, _)| n.eq_ignore_ascii_case(name));
    if !has("host") {
        parts
            .headers
            .append(HOST, "127.0.0.1:8080".parse().unwrap());
    }
    if !has("authorization") {
        parts
            .headers
            .append(AUTHORIZATION, format!("Bearer {ALICE}").parse().unwrap());
    }
    for (name, value) in headers {
        parts.headers.append(
            http::HeaderName::from_bytes(name.as_bytes()).unwrap(),
            value.parse().unwrap(),
        );
    }
    parts
}

#[tokio::test]
async fn a_repeated_single_header_is_refused_before_anything_else() {
    let setup = Setup::new();
    let guard = setup.guard().await;
    // Once each: admitted.
    let once: Vec<(String, String)> = SINGLE
        .iter()
        .map(|name| (name.to_string(), value_for(name, 0)))
        .collect();
    assert_eq!(
        guard.admit(&request_with(&once)).await.unwrap().name(),
        "alice"
    );
    // Twice, in two cases, with the same value or another: 400 naming the header, before the
    // token is looked at.
    for name in SINGLE {
        for second in [0, 1] {
            let mut headers = once.clone();
            headers.push((name.to_ascii_lowercase(), value_for(name, second)));
            let refused = guard.admit(&request_with(&headers)).await.unwrap_err();
            assert_eq!(refused.status(), StatusCode::BAD_REQUEST, "{name}");
            assert_eq!(
                refused.message(),
                format!(
                    "the request has 2 '{}' headers: it is sent once (its value is compared with the request and another could say otherwise)",
                    name.to_ascii_lowercase()
                )
            );
        }
    }
    // List-valued headers may repeat.
    let mut headers = once.clone();
    for name in ["Accept", "accept", "X-Trace", "x-trace"] {
        headers.push((name.to_string(), "a".to_string()));
    }
    assert!(guard.admit(&request_with(&headers)).await.is_ok());
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    /// Any single-valued header sent 2 to 4 times, its names in any mix of cases, among the
    /// other headers once each: refused with 400 naming it, whatever the values.
    #[test]
    fn every_single_header_is_taken_once(
        index in 0..SINGLE.len(),
        flips in proptest::collection::vec(any::<u64>(), 2..5),
        values in proptest::collection::vec(0..2usize, 4),
        at in 0..SINGLE.len(),
    ) {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        let setup = Setup::new();
        let name = SINGLE[index];
        let mut headers: Vec<(String, String)> = SINGLE
            .iter()
            .filter(|other| **other != name)
            .map(|other| (other.to_string(), value_for(other, 0)))
            .collect();
        for (n, flip) in flips.iter().enumerate() {
            let place = (at + n).min(headers.len());
            headers.insert(place, (recased(name, *flip), value_for(name, values[n])));
        }
        runtime.block_on(async {
            let guard = setup.guard().await;
            let refused = guard.admit(&request_with(&headers)).await.unwrap_err();
            prop_assert_eq!(refused.status(), StatusCode::BAD_REQUEST);
            let expected = format!("the request has {} '{}' headers", flips.len(), name.to_ascii_lowercase());
            prop_assert!(refused.message().starts_with(&expected), "{}", refused.message());
            Ok(())
        })?;
    }
}

/// A JWT with the JOSE header `header` as it is (any members, any order), signed by `key`.
fn sign_with_header(key: &SigningKey, header: &str, claims: &Value) -> String {
    let engine = base64::engine::general_purpose::URL_SAFE_NO_PAD;
    let input = format!(
        "{}.{}",
        engine.encode(header),
        engine.encode(serde_json::to_vec(claims).unwrap())
    );
    let signature =
        jsonwebtoken::crypto::sign(input.as_bytes(), &key.encoding, Algorithm::ES256).unwrap();
    format!("{input}.{signature}")
}

/// What the guard should say of a token whose header has `members` besides `alg` and `kid`:
/// `None` to accept it, else a part of the refusal.
fn header_verdict(alg: &str, members: &serde_json::Map<String, Value>) -> Option<&'static str> {
    if alg.eq_ignore_ascii_case("none") {
        return Some("alg 'none'");
    }
    if alg != "ES256" {
        return Some("");
    }
    if members.contains_key("crit") {
        return Some("crit");
    }
    if members.get("b64").is_some_and(|b| b != &json!(true)) {
        return Some("b64");
    }
    if members.contains_key("zip") || members.contains_key("enc") {
        return Some("which a signed JWT has not");
    }
    if let Some(typ) = members.get("typ") {
        let ok = typ.as_str().is_some_and(|t| {
            let t = t.to_ascii_lowercase();
            let t = t.strip_prefix("application/").unwrap_or(&t).to_string();
            t == "jwt" || t == "at+jwt"
        });
        if !ok {
            return Some("typ");
        }
    }
    None
}

fn header_member() -> impl Strategy<Value = (String, Value)> {
    let names = proptest::collection::vec("[a-z0-9]{1,6}", 0..3).prop_map(|names| json!(names));
    prop_oneof![
        names.prop_map(|v| ("crit".to_string(), v)),
        prop_oneof![
            Just(json!([])),
            Just(json!("b64")),
            Just(json!(null)),
            Just(json!(1)),
            Just(json!({})),
            Just(json!(["b64"])),
            Just(json!(["exp", 1]))
        ]
        .prop_map(|v| ("crit".to_string(), v)),
        prop_oneof![
            Just(json!(false)),
            Just(json!(true)),
            Just(json!("false")),
            Just(json!(0))
        ]
        .prop_map(|v| ("b64".to_string(), v)),
        prop_oneof![
            Just(json!("JWT")),
            Just(json!("jwt")),
            Just(json!("at+jwt")),
            Just(json!("application/at+JWT")),
            Just(json!("application/jwt")),
            Just(json!("logout+jwt")),
            Just(json!("dpop+jwt")),
            Just(json!("secevent+jwt")),
            Just(json!("")),
            Just(json!(1)),
            Just(json!(null))
        ]
        .prop_map(|v| ("typ".to_string(), v)),
        prop_oneof![Just(json!("DEF")), Just(json!(null))].prop_map(|v| ("zip".to_string(), v)),
        Just(("enc".to_string(), json!("A256GCM"))),
        Just(("cty".to_string(), json!("application/example"))),
        Just(("x5t".to_string(), json!("AAAA"))),
        Just(("custom".to_string(), json!({"any": [1, 2]}))),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    /// Tokens signed with the issuer's key whose JOSE header carries any mix of `crit`, `b64`,
    /// `typ`, `zip`, `enc` and other members: accepted exactly when RFC 7515, 7797 and 8725
    /// allow (no `crit` of any kind, `b64` absent or true, no `zip` or `enc`, an access
    /// token's `typ` or none), with the reason otherwise.
    #[test]
    fn jwt_headers_are_read_as_the_rfcs_say(
        alg in prop_oneof![4 => Just("ES256"), 1 => Just("none"), 1 => Just("NONE"), 1 => Just("HS256")],
        members in proptest::collection::vec(header_member(), 0..4),
    ) {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        let setup = Setup::new();
        let mut header = serde_json::Map::new();
        header.insert("alg".into(), json!(alg));
        header.insert("kid".into(), json!(setup.key.kid));
        let mut extra = serde_json::Map::new();
        for (name, value) in members {
            extra.insert(name.clone(), value.clone());
            header.insert(name, value);
        }
        let token = sign_with_header(&setup.key, &Value::Object(header).to_string(), &claims());
        let verdict = header_verdict(alg, &extra);
        runtime.block_on(async {
            let guard = setup.guard().await;
            let admitted = guard.admit(&request(bearer(&token).as_deref())).await;
            match verdict {
                None => {
                    let principal = admitted.unwrap();
                    prop_assert_eq!(principal.name(), "user-42");
                }
                Some(reason) => {
                    let refused = admitted.unwrap_err();
                    prop_assert_eq!(refused.status(), StatusCode::UNAUTHORIZED);
                    prop_assert!(refused.message().contains(reason), "{} lacks {}", refused.message(), reason);
                }
            }
            Ok(())
        })?;
    }
}

#[tokio::test]
async fn a_jwt_header_names_no_key_the_guard_would_fetch_or_trust() {
    let setup = Setup::new();
    let guard = setup.guard().await;
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let url = format!("http://{}/jwks.json", listener.local_addr().unwrap());
    // An attacker's key, under the issuer's key id, carried in the token itself and at URLs
    // the token names.
    let attacker = signing_key(&setup.key.kid);
    let header = json!({
        "alg": "ES256", "kid": setup.key.kid, "typ": "JWT",
        "jwk": attacker.jwk, "jku": url, "x5u": url,
    });
    let forged = sign_with_header(&attacker, &header.to_string(), &claims());
    let refused = refusal(&guard, bearer(&forged).as_deref()).await;
    assert_eq!(refused.message(), "the token's signature does not verify");
    assert!(
        listener.accept().is_err(),
        "the guard fetched a URL the token named"
    );
    // The same header signed by the issuer's key: those members are ignored.
    let genuine = sign_with_header(&setup.key, &header.to_string(), &claims());
    assert_eq!(admitted(&guard, &genuine).await.name(), "user-42");
    // A header member given twice: which one counts would depend on the reader.
    let twice = format!(
        r#"{{"alg":"ES256","kid":"{}","typ":"JWT","typ":"logout+jwt"}}"#,
        setup.key.kid
    );
    let refused = refusal(
        &guard,
        bearer(&sign_with_header(&setup.key, &twice, &claims())).as_deref(),
    )
    .await;
    assert!(
        refused
            .message()
            .starts_with("the token's header is not a JSON object of unique names"),
        "{}",
        refused.message()
    );
    // The issue's case: an extension the guard does not understand, made critical.
    let critical = format!(
        r#"{{"alg":"ES256","kid":"{}","crit":["exp"],"exp":1}}"#,
        setup.key.kid
    );
    let refused = refusal(
        &guard,
        bearer(&sign_with_header(&setup.key, &critical, &claims())).as_deref(),
    )
    .await;
    assert_eq!(
        refused.message(),
        "the token's header makes 'exp' critical (crit), an extension this server does not understand (RFC 7515 section 4.1.11)"
    );
}
