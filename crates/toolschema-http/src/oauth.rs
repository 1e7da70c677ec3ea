//! The OAuth 2.1 resource server: JWT access tokens from one issuer, for one audience.
//!
//! A token is accepted when its signature verifies with one of the issuer's keys (an asymmetric
//! algorithm that fits the key; never `none` or a shared secret), `iss` is the issuer, `aud`
//! names the audience, `exp` has not passed and `nbf` has (both with [`LEEWAY`] of clock skew).
//! Its scopes are read from `scope` (space-separated, RFC 9068) or `scp` (a list or a string).
//!
//! Its JOSE header is checked first, as RFC 7515 and RFC 8725 ask ([`check_header`]): no
//! parameter twice, an algorithm from the allow-list (never `none`), no `crit` (this server
//! understands no extension, and a `crit` that is not a non-empty list of names is invalid
//! anyway), no unencoded payload (`b64: false`, RFC 7797), no `zip` or `enc` (which a signed JWT
//! has not), and a `typ`, when there is one, of an access token (`JWT`, `at+jwt`). `kid` only
//! picks among the issuer's keys; `jku`, `x5u`, `jwk` and `x5c` are never fetched or used.

use crate::jwks::KeySet;
use crate::principal::{AuthMethod, Principal};
use jsonwebtoken::errors::ErrorKind;
use jsonwebtoken::{Algorithm, Validation};
use serde_json::{Map, Value};
use std::collections::BTreeSet;

/// The clock skew allowed on `exp` and `nbf`, in seconds.
pub const LEEWAY: u64 = 30;

/// The algorithms a token may be signed with.
const ACCEPTED: [Algorithm; 9] = [
    Algorithm::RS256,
    Algorithm::RS384,
    Algorithm::RS512,
    Algorithm::PS256,
    Algorithm::PS384,
    Algorithm::PS512,
    Algorithm::ES256,
    Algorithm::ES384,
    Algorithm::EdDSA,
];

/// The longest name taken from a token's claims into logs.
const MAX_NAME_CHARS: usize = 128;

/// The issuer and audience tokens are checked against, and the issuer's keys.
pub struct ResourceServer {
    issuer: String,
    audience: String,
    keys: KeySet,
}

impl ResourceServer {
    /// A resource server for tokens from `issuer` for `audience`, verified with `keys`.
    pub fn new(issuer: String, audience: String, keys: KeySet) -> Self {
        ResourceServer {
            issuer,
            audience,
            keys,
        }
    }

    /// The issuer.
    pub fn issuer(&self) -> &str {
        &self.issuer
    }

    /// The audience.
    pub fn audience(&self) -> &str {
        &self.audience
    }

    /// The issuer's keys.
    pub fn keys(&self) -> &KeySet {
        &self.keys
    }

    /// Whether `token` has the shape of a JWT (three base64url parts).
    pub fn looks_like_jwt(token: &str) -> bool {
        token.split('.').count() == 3
    }

    /// The client `token` stands for, or why it is not accepted (a sentence for the client and
    /// the log; it never quotes the token).
    pub async fn verify(&self, token: &str) -> Result<Principal, String> {
        check_header(token)?;
        let header = jsonwebtoken::decode_header(token)
            .map_err(|e| format!("the token is not a JWT: {e}"))?;
        if !ACCEPTED.contains(&header.alg) {
            return Err(format!(
                "the token is signed with {:?}, which this server does not accept (asymmetric algorithms only)",
                header.alg
            ));
        }
        let mut keys = self.keys.current();
        if let Some(kid) = &header.kid {
            if !keys.iter().any(|k| k.kid.as_ref() == Some(kid)) {
                if !self.keys.refetch_for(kid).await {
                    return Err(format!(
                        "the token's key '{}' is not among the issuer's keys",
                        printable(kid)
                    ));
                }
                keys = self.keys.current();
            }
        }
        let candidates: Vec<_> = keys
            .iter()
            .filter(|k| header.kid.is_none() || k.kid == header.kid)
            .filter(|k| k.fits(header.alg))
            .collect();
        if candidates.is_empty() {
            return Err(match &header.kid {
                Some(kid) => format!(
                    "the issuer's key '{}' cannot verify {:?} signatures",
                    printable(kid),
                    header.alg
                ),
                None => format!("no key of the issuer verifies {:?} signatures", header.alg),
            });
        }
        let mut validation = Validation::new(header.alg);
        validation.leeway = LEEWAY;
        validation.validate_nbf = true;
        validation.set_issuer(&[&self.issuer]);
        validation.set_audience(&[&self.audience]);
        validation.set_required_spec_claims(&["exp", "iss", "aud"]);
        let mut last_error = None;
        for key in candidates {
            match jsonwebtoken::decode::<Map<String, Value>>(token, &key.key, &validation) {
                Ok(data) => return Ok(principal(&data.claims)),
                Err(e) => {
                    let bad_signature = matches!(e.kind(), ErrorKind::InvalidSignature);
                    last_error = Some(self.describe(e.kind()));
                    // Another key without a kid may still verify it; a claim error is final.
                    if !bad_signature {
                        break;
                    }
                }
            }
        }
        Err(last_error.unwrap_or_else(|| "the token cannot be verified".to_string()))
    }

    fn describe(&self, kind: &ErrorKind) -> String {
        match kind {
            ErrorKind::InvalidSignature => "the token's signature does not verify".into(),
            ErrorKind::ExpiredSignature => "the token has expired".into(),
            ErrorKind::ImmatureSignature => "the token is not valid yet (nbf)".into(),
            ErrorKind::InvalidIssuer => {
                format!(
                    "the token is from another issuer (this server accepts {})",
                    self.issuer
                )
            }
            ErrorKind::InvalidAudience => format!(
                "the token is for another audience (this server is {})",
                self.audience
            ),
            ErrorKind::MissingRequiredClaim(claim) => {
                format!("the token has no valid '{claim}' claim")
            }
            ErrorKind::InvalidClaimFormat(claim) => {
                format!("the token's '{claim}' claim is malformed")
            }
            other => format!("the token is not valid: {other:?}"),
        }
    }
}

/// The `typ` values of an access token (RFC 8725 section 3.11: a JWT of another kind, a logout
/// token or a DPoP proof say, is not one), compared without case and with or without the
/// `application/` prefix (RFC 7515 section 4.1.9).
const ACCESS_TOKEN_TYPES: [&str; 2] = ["jwt", "at+jwt"];

/// Check a JWT's JOSE header before anything in it is used (see the module's documentation):
/// why it is not accepted, as a sentence for the client and the log.
pub fn check_header(token: &str) -> Result<(), String> {
    use base64::Engine as _;
    let encoded = token.split('.').next().unwrap_or_default();
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(encoded)
        .map_err(|_| "the token's header is not base64url".to_string())?;
    let text =
        std::str::from_utf8(&bytes).map_err(|_| "the token's header is not UTF-8".to_string())?;
    // Duplicate names are refused (RFC 7515 section 4): which one counts would depend on the
    // reader.
    let value = toolschema::json::parse(text).map_err(|e| {
        format!(
            "the token's header is not a JSON object of unique names: {}",
            e.message
        )
    })?;
    let Value::Object(header) = value else {
        return Err("the token's header is not a JSON object".into());
    };
    match header.get("alg") {
        Some(Value::String(alg)) if alg.eq_ignore_ascii_case("none") => {
            return Err("the token is not signed (alg 'none')".into())
        }
        Some(Value::String(_)) => {}
        _ => return Err("the token's header has no 'alg' string".into()),
    }
    if let Some(crit) = header.get("crit") {
        let names: Option<Vec<&str>> = match crit {
            Value::Array(items) if !items.is_empty() => items.iter().map(Value::as_str).collect(),
            _ => None,
        };
        return Err(match names {
            Some(names) => format!(
                "the token's header makes {} critical (crit), an extension this server does not understand (RFC 7515 section 4.1.11)",
                names
                    .iter()
                    .map(|name| format!("'{}'", printable(name)))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            None => "the token's header has a 'crit' that is not a non-empty list of names (RFC 7515 section 4.1.11)".into(),
        });
    }
    if header
        .get("b64")
        .is_some_and(|b64| b64 != &Value::Bool(true))
    {
        return Err("the token's payload is not base64url-encoded (b64, RFC 7797), which this server does not accept".into());
    }
    for name in ["zip", "enc"] {
        if header.contains_key(name) {
            return Err(format!(
                "the token's header has '{name}', which a signed JWT has not"
            ));
        }
    }
    if let Some(typ) = header.get("typ") {
        let kind = typ.as_str().map(str::to_ascii_lowercase);
        let kind = kind
            .as_deref()
            .map(|kind| kind.strip_prefix("application/").unwrap_or(kind));
        if !kind.is_some_and(|kind| ACCESS_TOKEN_TYPES.contains(&kind)) {
            return Err(format!(
                "the token's type (typ {}) is not an access token's (JWT or at+jwt)",
                printable(&typ.to_string())
            ));
        }
    }
    Ok(())
}

/// The principal of verified claims.
fn principal(claims: &Map<String, Value>) -> Principal {
    let name = ["sub", "client_id", "azp"]
        .iter()
        .find_map(|claim| claims.get(*claim).and_then(Value::as_str))
        .map_or_else(|| "(no subject)".to_string(), printable);
    Principal::new(name, AuthMethod::Jwt, scopes(claims))
}

/// The scopes of `scope` (space-separated) and `scp` (a list, or a space-separated string).
fn scopes(claims: &Map<String, Value>) -> BTreeSet<String> {
    let mut scopes = BTreeSet::new();
    for claim in ["scope", "scp"] {
        match claims.get(claim) {
            Some(Value::String(text)) => {
                scopes.extend(text.split_whitespace().map(str::to_string));
            }
            Some(Value::Array(items)) => {
                scopes.extend(items.iter().filter_map(Value::as_str).map(str::to_string));
            }
            _ => {}
        }
    }
    scopes
}

/// `text` fit for one log line: control characters dropped, at most [`MAX_NAME_CHARS`].
fn printable(text: &str) -> String {
    text.chars()
        .filter(|c| !c.is_control())
        .take(MAX_NAME_CHARS)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn scopes_come_from_scope_and_scp() {
        let claims = json!({"scope": "a  b", "scp": ["c", 1, "a"]});
        let found = scopes(claims.as_object().unwrap());
        assert_eq!(
            found.iter().map(String::as_str).collect::<Vec<_>>(),
            ["a", "b", "c"]
        );
        let named = principal(json!({"client_id": "robot\n7"}).as_object().unwrap());
        assert_eq!(named.name(), "robot7");
        let unnamed = principal(json!({"sub": 5}).as_object().unwrap());
        assert_eq!(unnamed.name(), "(no subject)");
    }
}
