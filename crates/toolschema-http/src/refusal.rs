//! A request the guard turns away, and the HTTP answer that says why.

use bytes::Bytes;
use http::header::{CONTENT_TYPE, WWW_AUTHENTICATE};
use http::{HeaderValue, Response, StatusCode};
use http_body_util::Full;
use serde_json::json;

/// Why a request is refused, in the words of RFC 6750 where it has some.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RefusalKind {
    /// No credential (401, `WWW-Authenticate: Bearer` without an error).
    MissingToken,
    /// A credential that is not valid: unknown, expired, for another audience... (401).
    InvalidToken,
    /// A valid credential without the scope a tool needs (403).
    InsufficientScope,
    /// `Host` or `Origin` is not one this server answers (403, or 400 without `Host`).
    ForbiddenOrigin,
    /// A session that belongs to another client, or to none (404).
    UnknownSession,
    /// The body is larger than allowed (413).
    BodyTooLarge,
    /// The headers are larger than allowed (431).
    HeadersTooLarge,
    /// The client holds as many sessions as it may (429).
    TooManySessions,
    /// The request cannot be read (400).
    BadRequest,
    /// The body did not arrive within the read timeout (408).
    RequestTimeout,
}

impl RefusalKind {
    /// The code in the answer's body and in the audit.
    pub fn code(self) -> &'static str {
        match self {
            RefusalKind::MissingToken => "missing_token",
            RefusalKind::InvalidToken => "invalid_token",
            RefusalKind::InsufficientScope => "insufficient_scope",
            RefusalKind::ForbiddenOrigin => "forbidden_origin",
            RefusalKind::UnknownSession => "unknown_session",
            RefusalKind::BodyTooLarge => "body_too_large",
            RefusalKind::HeadersTooLarge => "headers_too_large",
            RefusalKind::TooManySessions => "too_many_sessions",
            RefusalKind::BadRequest => "bad_request",
            RefusalKind::RequestTimeout => "request_timeout",
        }
    }
}

/// A refused request: status, reason and, for authentication, the `WWW-Authenticate` challenge.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    kind: RefusalKind,
    status: StatusCode,
    message: String,
    challenge: Option<String>,
}

impl Refusal {
    /// A refusal of `kind` with the status that goes with it.
    pub fn new(kind: RefusalKind, message: impl Into<String>) -> Refusal {
        let status = match kind {
            RefusalKind::MissingToken | RefusalKind::InvalidToken => StatusCode::UNAUTHORIZED,
            RefusalKind::InsufficientScope | RefusalKind::ForbiddenOrigin => StatusCode::FORBIDDEN,
            RefusalKind::UnknownSession => StatusCode::NOT_FOUND,
            RefusalKind::BodyTooLarge => StatusCode::PAYLOAD_TOO_LARGE,
            RefusalKind::HeadersTooLarge => StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE,
            RefusalKind::TooManySessions => StatusCode::TOO_MANY_REQUESTS,
            RefusalKind::BadRequest => StatusCode::BAD_REQUEST,
            RefusalKind::RequestTimeout => StatusCode::REQUEST_TIMEOUT,
        };
        Refusal {
            kind,
            status,
            message: message.into(),
            challenge: None,
        }
    }

    /// The same refusal with another status (a missing `Host` is a bad request, not forbidden).
    pub(crate) fn with_status(mut self, status: StatusCode) -> Refusal {
        self.status = status;
        self
    }

    /// The same refusal carrying a `WWW-Authenticate` challenge.
    pub(crate) fn with_challenge(mut self, challenge: String) -> Refusal {
        self.challenge = Some(challenge);
        self
    }

    /// Why.
    pub fn kind(&self) -> RefusalKind {
        self.kind
    }

    /// The HTTP status.
    pub fn status(&self) -> StatusCode {
        self.status
    }

    /// What the client is told (never a credential).
    pub fn message(&self) -> &str {
        &self.message
    }

    /// The `WWW-Authenticate` value, for 401 and 403 answers about credentials.
    pub fn challenge(&self) -> Option<&str> {
        self.challenge.as_deref()
    }

    /// The answer: the status, the challenge, and `{"error": CODE, "error_description": MESSAGE}`.
    pub fn into_response(self) -> Response<Full<Bytes>> {
        let body = json!({"error": self.kind.code(), "error_description": self.message});
        let mut response = Response::new(Full::new(Bytes::from(body.to_string())));
        *response.status_mut() = self.status;
        response
            .headers_mut()
            .insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        if let Some(challenge) = self.challenge.and_then(|c| HeaderValue::from_str(&c).ok()) {
            response.headers_mut().insert(WWW_AUTHENTICATE, challenge);
        }
        response
    }
}

/// `text` as an RFC 7230 quoted string (`\` and `"` escaped, control characters dropped).
pub(crate) fn quoted(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        match c {
            '"' | '\\' => {
                out.push('\\');
                out.push(c);
            }
            c if c.is_control() => {}
            c if c.is_ascii() => out.push(c),
            // Header values are ASCII; anything else becomes '?'.
            _ => out.push('?'),
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn challenges_quote_what_they_carry() {
        assert_eq!(quoted(r#"a "b" \c"#), r#""a \"b\" \\c""#);
        assert_eq!(quoted("line\nbreak é"), "\"linebreak ?\"");
    }

    #[test]
    fn the_answer_carries_status_challenge_and_reason() {
        let response = Refusal::new(RefusalKind::MissingToken, "send a bearer token")
            .with_challenge("Bearer realm=\"mcp\"".into())
            .into_response();
        assert_eq!(response.status(), StatusCode::UNAUTHORIZED);
        assert_eq!(response.headers()[WWW_AUTHENTICATE], "Bearer realm=\"mcp\"");
    }
}
