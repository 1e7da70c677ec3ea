//! The OAuth issuer's signing keys (a JWK Set): read from `--jwks-file`, or fetched from the
//! `jwks_uri` of the issuer's metadata (RFC 8414, or OpenID Connect discovery), kept in memory, and
//! fetched again when a token names a key the set does not have (at most once per
//! [`REFETCH_INTERVAL`], so tokens with made-up key ids cannot make the server hammer the issuer).
//!
//! Only public signature keys are kept: RSA, EC (P-256, P-384) and Ed25519. Symmetric (`oct`)
//! keys, encryption keys (`use: enc`) and keys of unknown types are skipped with a note.

use crate::client::HttpClient;
use jsonwebtoken::jwk::{AlgorithmParameters, EllipticCurve, Jwk, PublicKeyUse};
use jsonwebtoken::{Algorithm, AlgorithmFamily, DecodingKey};
use serde_json::Value;
use std::path::PathBuf;
use std::sync::{Arc, RwLock};
use std::time::{Duration, Instant};

/// The shortest time between two fetches caused by unknown key ids.
pub const REFETCH_INTERVAL: Duration = Duration::from_secs(10);
/// How long a metadata or key set request may take.
pub const FETCH_TIMEOUT: Duration = Duration::from_secs(10);
/// The largest metadata document or key set accepted.
pub const MAX_DOCUMENT_BYTES: usize = 1 << 20;

/// Why the keys cannot be had.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct JwksError(pub String);

/// Where the keys come from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KeySource {
    /// A JWK Set file (`--jwks-file`), read again on SIGHUP and on an unknown key id.
    File(PathBuf),
    /// The issuer's `jwks_uri`.
    Url(String),
}

/// One usable public key.
#[derive(Clone)]
pub(crate) struct Key {
    pub(crate) kid: Option<String>,
    alg: Option<Algorithm>,
    family: AlgorithmFamily,
    curve: Option<EllipticCurve>,
    pub(crate) key: DecodingKey,
}

impl Key {
    /// Whether this key may verify a token signed with `alg`.
    pub(crate) fn fits(&self, alg: Algorithm) -> bool {
        if self.alg.is_some_and(|own| own != alg) || alg.family() != self.family {
            return false;
        }
        match alg {
            Algorithm::ES256 => self.curve == Some(EllipticCurve::P256),
            Algorithm::ES384 => self.curve == Some(EllipticCurve::P384),
            Algorithm::EdDSA => self.curve == Some(EllipticCurve::Ed25519),
            _ => true,
        }
    }
}

/// The issuer's keys, refreshed on demand.
pub struct KeySet {
    source: KeySource,
    client: HttpClient,
    keys: RwLock<Arc<Vec<Key>>>,
    /// When an unknown key id last caused a fetch; the lock makes concurrent ones wait for one.
    last_refetch: tokio::sync::Mutex<Option<Instant>>,
}

impl KeySet {
    /// Load the keys from `source`; at least one must be usable.
    pub async fn load(source: KeySource, client: HttpClient) -> Result<KeySet, JwksError> {
        let keys = fetch(&source, &client).await?;
        Ok(KeySet {
            source,
            client,
            keys: RwLock::new(Arc::new(keys)),
            last_refetch: tokio::sync::Mutex::new(None),
        })
    }

    /// Where the keys come from.
    pub fn source(&self) -> &KeySource {
        &self.source
    }

    /// How many usable keys are held.
    pub fn len(&self) -> usize {
        self.current().len()
    }

    /// Whether no key is held (never after a successful load).
    pub fn is_empty(&self) -> bool {
        self.current().is_empty()
    }

    pub(crate) fn current(&self) -> Arc<Vec<Key>> {
        match self.keys.read() {
            Ok(keys) => keys.clone(),
            Err(poisoned) => poisoned.into_inner().clone(),
        }
    }

    /// Load the keys again; on error the keys held stay in force.
    pub async fn reload(&self) -> Result<usize, JwksError> {
        let keys = fetch(&self.source, &self.client).await?;
        let count = keys.len();
        if let Ok(mut current) = self.keys.write() {
            *current = Arc::new(keys);
        }
        Ok(count)
    }

    /// Fetch again because a token names key `kid`, which the set lacks; `false` when the last
    /// such fetch was too recent or the fetch failed (the keys held stay in force).
    pub(crate) async fn refetch_for(&self, kid: &str) -> bool {
        let mut last = self.last_refetch.lock().await;
        // Another request may have fetched while this one waited for the lock.
        if self.current().iter().any(|k| k.kid.as_deref() == Some(kid)) {
            return true;
        }
        if last.is_some_and(|at| at.elapsed() < REFETCH_INTERVAL) {
            return false;
        }
        *last = Some(Instant::now());
        match self.reload().await {
            Ok(count) => {
                tracing::info!(
                    kid,
                    keys = count,
                    "fetched the issuer's keys again for an unknown key id"
                );
                true
            }
            Err(e) => {
                tracing::warn!(kid, error = %e, "cannot fetch the issuer's keys again");
                false
            }
        }
    }
}

async fn fetch(source: &KeySource, client: &HttpClient) -> Result<Vec<Key>, JwksError> {
    let (document, origin) = match source {
        KeySource::File(path) => {
            let text = std::fs::read_to_string(path).map_err(|e| {
                JwksError(format!("{}: cannot read the key set: {e}", path.display()))
            })?;
            let value: Value = serde_json::from_str(&text).map_err(|e| {
                JwksError(format!("{}: the key set is not JSON: {e}", path.display()))
            })?;
            (value, path.display().to_string())
        }
        KeySource::Url(url) => {
            let value = client
                .get_json(url, MAX_DOCUMENT_BYTES, FETCH_TIMEOUT)
                .await
                .map_err(|e| JwksError(format!("cannot fetch the key set {url}: {e}")))?;
            (value, url.clone())
        }
    };
    parse_key_set(&document, &origin)
}

/// The usable keys of a JWK Set document; `origin` names it in messages.
pub(crate) fn parse_key_set(document: &Value, origin: &str) -> Result<Vec<Key>, JwksError> {
    let Some(entries) = document.get("keys").and_then(Value::as_array) else {
        return Err(JwksError(format!(
            "{origin}: not a JWK Set (no \"keys\" array)"
        )));
    };
    let mut keys = Vec::new();
    for (index, entry) in entries.iter().enumerate() {
        match usable_key(entry) {
            Ok(key) => keys.push(key),
            Err(reason) => tracing::info!(key = index, origin, reason, "skipped a key"),
        }
    }
    if keys.is_empty() {
        return Err(JwksError(format!(
            "{origin}: no usable signature key (RSA, EC P-256/P-384 or Ed25519) among {} {}",
            entries.len(),
            if entries.len() == 1 { "key" } else { "keys" }
        )));
    }
    Ok(keys)
}

fn usable_key(entry: &Value) -> Result<Key, String> {
    let jwk: Jwk = serde_json::from_value(entry.clone()).map_err(|e| e.to_string())?;
    if matches!(jwk.common.public_key_use, Some(ref u) if *u != PublicKeyUse::Signature) {
        return Err("not a signature key (use is not \"sig\")".into());
    }
    let (family, curve) = match &jwk.algorithm {
        AlgorithmParameters::RSA(_) => (AlgorithmFamily::Rsa, None),
        AlgorithmParameters::EllipticCurve(ec) => (AlgorithmFamily::Ec, Some(ec.curve.clone())),
        AlgorithmParameters::OctetKeyPair(okp) => (AlgorithmFamily::Ed, Some(okp.curve.clone())),
        AlgorithmParameters::OctetKey(_) => {
            return Err("a symmetric (oct) key: never trusted from a key set".into())
        }
        _ => return Err("an unknown key type".into()),
    };
    let alg = match jwk.common.key_algorithm {
        None => None,
        Some(alg) => Some(Algorithm::try_from(alg).map_err(|_| format!("unusable alg {alg:?}"))?),
    };
    if alg.is_some_and(|a| a.family() != family) {
        return Err("its alg does not fit its key type".into());
    }
    let key = DecodingKey::from_jwk(&jwk).map_err(|e| e.to_string())?;
    Ok(Key {
        kid: jwk.common.key_id.clone(),
        alg,
        family,
        curve,
        key,
    })
}

/// Whether `url` may be fetched for keys or metadata: `https`, or `http` to this machine only.
pub fn check_fetch_url(url: &str) -> Result<(), String> {
    let uri: http::Uri = url
        .parse()
        .map_err(|e| format!("'{url}' is not a URL: {e}"))?;
    let host = uri.host().unwrap_or_default();
    match uri.scheme_str() {
        Some("https") if !host.is_empty() => Ok(()),
        Some("http") if crate::origin::is_loopback_name(host) => Ok(()),
        Some("http") => Err(format!(
            "'{url}': OAuth documents are fetched over https (http only from this machine)"
        )),
        _ => Err(format!("'{url}' is not an https:// URL")),
    }
}

/// Find the issuer's `jwks_uri` from its metadata: RFC 8414's
/// `/.well-known/oauth-authorization-server`, then OpenID Connect's `openid-configuration`, in
/// the order MCP clients use. The metadata must name the same issuer.
pub async fn discover_jwks_uri(issuer: &str, client: &HttpClient) -> Result<String, JwksError> {
    check_fetch_url(issuer).map_err(JwksError)?;
    let mut tried = Vec::new();
    for url in metadata_urls(issuer) {
        let document = match client
            .get_json(&url, MAX_DOCUMENT_BYTES, FETCH_TIMEOUT)
            .await
        {
            Ok(document) => document,
            Err(e) => {
                tried.push(format!("{url}: {e}"));
                continue;
            }
        };
        let named = document.get("issuer").and_then(Value::as_str);
        if named != Some(issuer) {
            return Err(JwksError(format!(
                "{url} names the issuer {} instead of {issuer}",
                named.map_or("(none)".to_string(), |n| format!("'{n}'"))
            )));
        }
        let Some(jwks_uri) = document.get("jwks_uri").and_then(Value::as_str) else {
            return Err(JwksError(format!("{url} has no jwks_uri")));
        };
        check_fetch_url(jwks_uri).map_err(|e| JwksError(format!("{url}: jwks_uri {e}")))?;
        return Ok(jwks_uri.to_string());
    }
    Err(JwksError(format!(
        "cannot find the metadata of the issuer {issuer}; tried {}",
        tried.join("; ")
    )))
}

/// Where an issuer's metadata may be, in order.
fn metadata_urls(issuer: &str) -> Vec<String> {
    let trimmed = issuer.trim_end_matches('/');
    // scheme://authority, and the path after it.
    let after_scheme = trimmed.find("://").map_or(0, |at| at + 3);
    let (base, path) = match trimmed[after_scheme..].find('/') {
        Some(at) => trimmed.split_at(after_scheme + at),
        None => (trimmed, ""),
    };
    if path.is_empty() {
        vec![
            format!("{base}/.well-known/oauth-authorization-server"),
            format!("{base}/.well-known/openid-configuration"),
        ]
    } else {
        vec![
            format!("{base}/.well-known/oauth-authorization-server{path}"),
            format!("{base}/.well-known/openid-configuration{path}"),
            format!("{trimmed}/.well-known/openid-configuration"),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn metadata_is_looked_for_where_clients_look() {
        assert_eq!(
            metadata_urls("https://auth.example.com"),
            [
                "https://auth.example.com/.well-known/oauth-authorization-server",
                "https://auth.example.com/.well-known/openid-configuration"
            ]
        );
        assert_eq!(
            metadata_urls("https://auth.example.com/tenant1/"),
            [
                "https://auth.example.com/.well-known/oauth-authorization-server/tenant1",
                "https://auth.example.com/.well-known/openid-configuration/tenant1",
                "https://auth.example.com/tenant1/.well-known/openid-configuration"
            ]
        );
    }

    #[test]
    fn only_https_or_this_machine_is_fetched() {
        assert_eq!(check_fetch_url("https://auth.example.com"), Ok(()));
        assert_eq!(check_fetch_url("http://127.0.0.1:9000/x"), Ok(()));
        assert_eq!(check_fetch_url("http://localhost/x"), Ok(()));
        assert_eq!(check_fetch_url("http://[::1]:80/"), Ok(()));
        assert_eq!(
            check_fetch_url("http://auth.example.com"),
            Err("'http://auth.example.com': OAuth documents are fetched over https (http only from this machine)".into())
        );
        assert!(check_fetch_url("ftp://x").is_err());
        assert!(check_fetch_url("not a url").is_err());
    }

    #[test]
    fn keeps_signature_keys_and_skips_the_rest() {
        let document = json!({"keys": [
            {"kty": "oct", "k": "c2VjcmV0", "kid": "shared"},
            {"kty": "RSA", "use": "enc", "n": "AQAB", "e": "AQAB", "kid": "enc"},
            {"kty": "XYZ", "kid": "odd"},
            {"kty": "EC", "crv": "P-256", "kid": "ec",
             "x": "MKBCTNIcKUSDii11ySs3526iDZ8AiTo7Tu6KPAqv7D4",
             "y": "4Etl6SRW2YiLUrN5vfvVHuhp7x8PxltmWWlbbM4IFyM"},
            {"kty": "RSA", "kid": "rsa", "alg": "RS256", "n": "0vx7agoebGcQSuuPiLJXZptN9nndrQmbXEps2aiAFbWhM78LhWx4cbbfAAtVT86zwu1RK7aPFFxuhDR1L6tSoc_BJECPebWKRXjBZCiFV4n3oknjhMstn64tZ_2W-5JsGY4Hc5n9yBXArwl93lqt7_RN5w6Cf0h4QyQ5v-65YGjQR0_FDW2QvzqY368QQMicAtaSqzs8KJZgnYb9c7d0zgdAZHzu6qMQvRL5hajrn1n91CbOpbISD08qNLyrdkt-bFTWhAI4vMQFh6WeZu0fM4lFd2NcRwr3XPksINHaQ-G_xBniIqbw0Ls1jF44-csFCur-kEgU8awapJzKnqDKgw", "e": "AQAB"},
            {"kty": "RSA", "kid": "mixed", "alg": "ES256", "n": "AQAB", "e": "AQAB"}
        ]});
        let keys = parse_key_set(&document, "test").unwrap();
        let kids: Vec<_> = keys.iter().map(|k| k.kid.as_deref().unwrap()).collect();
        assert_eq!(kids, ["ec", "rsa"]);
        assert!(keys[0].fits(Algorithm::ES256));
        assert!(!keys[0].fits(Algorithm::ES384));
        assert!(!keys[0].fits(Algorithm::RS256));
        assert!(keys[1].fits(Algorithm::RS256));
        assert!(!keys[1].fits(Algorithm::PS256), "the key's alg pins it");
        assert_eq!(
            parse_key_set(&json!({"keys": [{"kty": "oct", "k": "eA"}]}), "test")
                .err()
                .map(|e| e.0),
            Some(
                "test: no usable signature key (RSA, EC P-256/P-384 or Ed25519) among 1 key".into()
            )
        );
        assert_eq!(
            parse_key_set(&json!({"keys": [{"kty": "oct"}, {"kty": "oct"}]}), "test")
                .err()
                .map(|e| e.0),
            Some(
                "test: no usable signature key (RSA, EC P-256/P-384 or Ed25519) among 2 keys"
                    .into()
            )
        );
        assert_eq!(
            parse_key_set(&json!([]), "test").err().map(|e| e.0),
            Some("test: not a JWK Set (no \"keys\" array)".into())
        );
    }
}
