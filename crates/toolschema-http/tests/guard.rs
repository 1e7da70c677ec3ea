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
    cases.push((unsigned, "the token is not a JWT: JSON error: unknown variant `none`, expected one of `HS256`, `HS384`, `HS512`, `ES256`, `ES384`, `RS256`, `RS384`, `RS512`, `PS256`, `PS384`, `PS512`, `EdDSA` at line 1 column 13"));
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
        guard.authorize_call(&parts, &jwt_user, "files_list"),
        Ok(())
    );
    let refused = guard
        .authorize_call(&parts, &jwt_user, "config_set")
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
        guard.check_calls(&parts, &bob, batch).unwrap_err().status(),
        StatusCode::FORBIDDEN
    );
    assert_eq!(
        guard
            .check_calls(&parts, &bob, b"\xff{")
            .unwrap_err()
            .status(),
        StatusCode::BAD_REQUEST
    );
    let open = Guard::start(GuardConfig::default(), loopback())
        .await
        .unwrap();
    assert_eq!(
        open.check_calls(&parts, &Principal::anonymous(), b"\xff{"),
        Ok(())
    );

    // Two Authorization headers, or one that is not text.
    let mut twice = request(bearer(ALICE).as_deref());
    twice
        .headers
        .append(AUTHORIZATION, format!("Bearer {BOB}").parse().unwrap());
    assert_eq!(
        guard.admit(&twice).await.unwrap_err().kind(),
        RefusalKind::MissingToken
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
