//! ToolHive validating webhooks (stacklok/toolhive RFC-0017, `pkg/webhook`): ToolHive POSTs
//! `{version, uid, timestamp, principal, mcp_request, context}`, where `mcp_request` is the
//! client's JSON-RPC request as sent, and reads `{version, uid, allowed, code, message,
//! reason}` from a 200 answer. Any other status is a failure, which ToolHive's
//! `failure_policy` decides (`fail`: the request is denied).
//!
//! Requests are signed: `X-ToolHive-Signature: sha256=HEX`, the HMAC-SHA256 of
//! `"{X-ToolHive-Timestamp}.{body}"` under the shared secret. A request without a valid
//! signature, or signed more than [`MAX_SKEW`] away from now (a replay), gets 401 and no
//! decision.

use super::{Mode, Phase, Service};
use serde_json::{json, Value};
use std::collections::BTreeSet;
use std::time::{Duration, SystemTime, UNIX_EPOCH};
use toolschema_gate::Verdict;
use toolschema_http::{AuthMethod, Principal};

/// The header carrying the signature.
pub const SIGNATURE_HEADER: &str = "x-toolhive-signature";
/// The header carrying the Unix time the request was signed at.
pub const TIMESTAMP_HEADER: &str = "x-toolhive-timestamp";
/// The protocol version answered.
pub const API_VERSION: &str = "v0.1.0";
/// How far a signature's timestamp may be from now.
pub const MAX_SKEW: Duration = Duration::from_secs(300);

/// Why a request was not decided.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WebhookError {
    /// The signature is missing, malformed, wrong, or too old (401).
    #[error("{0}")]
    Unauthorized(String),
    /// The body is not a webhook request (400).
    #[error("{0}")]
    BadRequest(String),
    /// The service could not decide (500: ToolHive's failure policy applies).
    #[error("{0}")]
    Internal(String),
}

/// The signature of `body` signed at `timestamp` under `secret`, as the header carries it.
pub fn sign(secret: &[u8], timestamp: i64, body: &[u8]) -> String {
    let key = ring::hmac::Key::new(ring::hmac::HMAC_SHA256, secret);
    let mut context = ring::hmac::Context::with_key(&key);
    context.update(format!("{timestamp}.").as_bytes());
    context.update(body);
    let tag = context.sign();
    let hex: String = tag.as_ref().iter().map(|b| format!("{b:02x}")).collect();
    format!("sha256={hex}")
}

/// Check the signature headers of a request whose body is `body`, at `now`.
pub fn verify(
    secret: &[u8],
    signature: Option<&str>,
    timestamp: Option<&str>,
    body: &[u8],
    now: SystemTime,
) -> Result<(), WebhookError> {
    let unauthorized = |why: &str| Err(WebhookError::Unauthorized(why.to_string()));
    let Some(signature) = signature else {
        return unauthorized("the request is not signed: X-ToolHive-Signature is missing");
    };
    let Some(timestamp) = timestamp else {
        return unauthorized("the request is not signed: X-ToolHive-Timestamp is missing");
    };
    let Ok(stamp) = timestamp.trim().parse::<i64>() else {
        return unauthorized("X-ToolHive-Timestamp is not a Unix time in seconds");
    };
    let now = now
        .duration_since(UNIX_EPOCH)
        .map(|d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX))
        .unwrap_or(0);
    if now.abs_diff(stamp) > MAX_SKEW.as_secs() {
        return unauthorized("the request was signed more than 300 s away from now (a replay?)");
    }
    let Some(hex) = signature.trim().strip_prefix("sha256=") else {
        return unauthorized("X-ToolHive-Signature is not sha256=HEX");
    };
    let Some(tag) = decode_hex(hex) else {
        return unauthorized("X-ToolHive-Signature is not sha256=HEX");
    };
    let key = ring::hmac::Key::new(ring::hmac::HMAC_SHA256, secret);
    let mut message = format!("{stamp}.").into_bytes();
    message.extend_from_slice(body);
    // Compared in constant time.
    ring::hmac::verify(&key, &message, &tag)
        .or_else(|_| unauthorized("X-ToolHive-Signature does not match the request"))
}

fn decode_hex(text: &str) -> Option<Vec<u8>> {
    if !text.len().is_multiple_of(2) || !text.is_ascii() {
        return None;
    }
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&text[i..i + 2], 16).ok())
        .collect()
}

/// Decide one webhook request (its signature already checked): the answer's JSON.
pub fn decide(service: &Service, body: &[u8]) -> Result<Value, WebhookError> {
    let request: Value = serde_json::from_slice(body)
        .map_err(|e| WebhookError::BadRequest(format!("the body is not JSON: {e}")))?;
    let uid = request.get("uid").cloned().unwrap_or(Value::Null);
    let Some(mcp) = request.get("mcp_request").filter(|m| m.is_object()) else {
        return Err(WebhookError::BadRequest(
            "the body has no mcp_request object".into(),
        ));
    };
    let answer = |allowed: bool| json!({"version": API_VERSION, "uid": uid, "allowed": allowed});
    if mcp.get("method").and_then(Value::as_str) != Some("tools/call") {
        // Only calls are checked here; every other request is the gateway's to judge.
        return Ok(answer(true));
    }
    let params = mcp.get("params").unwrap_or(&Value::Null);
    let Some(tool) = params.get("name").and_then(Value::as_str) else {
        let mut refused = answer(false);
        fill(
            &mut refused,
            400,
            "the tools/call request names no tool ('params.name' must be a string)",
            "InvalidRequest",
        );
        return Ok(refused);
    };
    let arguments = params.get("arguments").cloned().unwrap_or(json!({}));
    let context = request.get("context");
    let server = ["backend_server", "server_name"]
        .iter()
        .find_map(|key| context?.get(*key)?.as_str().filter(|s| !s.is_empty()));
    let principal = principal(request.get("principal"));
    let decision = service
        .decide_for(server, Phase::Request, tool, &arguments, &principal)
        .map_err(|e| WebhookError::Internal(e.to_string()))?;
    if decision.allowed {
        let mut allowed = answer(true);
        if let Some(why) = &decision.unchecked {
            allowed["message"] = json!(why);
            allowed["reason"] = json!("FailedOpen");
        }
        return Ok(allowed);
    }
    let (code, reason) = match decision.record.verdict {
        Verdict::Rejected => (400, "InvalidArguments"),
        Verdict::PinRefused => (403, "PinMismatch"),
        Verdict::UncheckedRefused => (422, "Unchecked"),
        _ if decision.denied => (403, "ToolDenied"),
        _ if !decision.listed => (404, "UnknownTool"),
        _ => (403, "ToolDenied"),
    };
    let message = decision.messages.join("\n");
    if service.config.mode == Mode::Audit {
        // Reported, never blocking: the answer says what would have been refused.
        let mut allowed = answer(true);
        fill(&mut allowed, code, &message, &format!("Audit{reason}"));
        return Ok(allowed);
    }
    let mut refused = answer(false);
    fill(&mut refused, code, &message, reason);
    Ok(refused)
}

/// The request's principal, as ToolHive authenticated it: known by its subject (`sub`, else
/// `email`, else `name`), as a JWT's holder is, holding the scopes of its claims (`scope`,
/// space-separated, or `scp`, a list; none when it has neither). A request without one is
/// [`Principal::anonymous`].
fn principal(given: Option<&Value>) -> Principal {
    let Some(given) = given.filter(|p| p.is_object()) else {
        return Principal::anonymous();
    };
    let name = ["sub", "email", "name"]
        .iter()
        .find_map(|key| given.get(*key)?.as_str().filter(|s| !s.is_empty()));
    let Some(name) = name else {
        return Principal::anonymous();
    };
    let claims = given.get("claims");
    let mut scopes = BTreeSet::new();
    if let Some(scope) = claims.and_then(|c| c.get("scope")).and_then(Value::as_str) {
        scopes.extend(scope.split_whitespace().map(String::from));
    }
    if let Some(list) = claims.and_then(|c| c.get("scp")).and_then(Value::as_array) {
        scopes.extend(list.iter().filter_map(Value::as_str).map(String::from));
    }
    Principal::new(name, AuthMethod::Jwt, scopes)
}

fn fill(answer: &mut Value, code: u16, message: &str, reason: &str) {
    answer["code"] = json!(code);
    answer["message"] = json!(message);
    answer["reason"] = json!(reason);
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn the_signature_is_the_hmac_of_timestamp_dot_body() {
        // What is signed is the timestamp, a dot, then the body.
        let key = b"Jefe";
        let signed = sign(key, 1, b"x");
        let key = ring::hmac::Key::new(ring::hmac::HMAC_SHA256, key);
        let tag = ring::hmac::sign(&key, b"1.x");
        let hex: String = tag.as_ref().iter().map(|b| format!("{b:02x}")).collect();
        assert_eq!(signed, format!("sha256={hex}"));
    }

    #[test]
    fn a_wrong_old_or_missing_signature_is_refused() {
        let now = SystemTime::now();
        let stamp = now.duration_since(UNIX_EPOCH).unwrap().as_secs() as i64;
        let good = sign(b"s3cret", stamp, b"{}");
        let ts = stamp.to_string();
        assert_eq!(
            verify(b"s3cret", Some(&good), Some(&ts), b"{}", now),
            Ok(())
        );
        for (signature, timestamp, body) in [
            (None, Some(ts.as_str()), b"{}".as_slice()),
            (Some(good.as_str()), None, b"{}"),
            (Some(good.as_str()), Some(ts.as_str()), b"{ }"),
            (Some("sha256=zz"), Some(ts.as_str()), b"{}"),
            (Some(&good[7..]), Some(ts.as_str()), b"{}"),
        ] {
            assert!(matches!(
                verify(b"s3cret", signature, timestamp, body, now),
                Err(WebhookError::Unauthorized(_))
            ));
        }
        let old = stamp - 301;
        let signed_old = sign(b"s3cret", old, b"{}");
        assert!(verify(
            b"s3cret",
            Some(&signed_old),
            Some(&old.to_string()),
            b"{}",
            now
        )
        .is_err());
    }
}
