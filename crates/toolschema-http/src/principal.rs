//! Who sent a request, as the guard established it: a name fit for logs (never a credential) and
//! the scopes the credential carries.

use std::collections::BTreeSet;
use std::fmt;
use std::sync::Arc;

/// How a client proved who it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AuthMethod {
    /// It did not: authentication is off.
    None,
    /// A bearer token from the token file.
    Token,
    /// A JWT access token from the OAuth issuer.
    Jwt,
}

impl AuthMethod {
    /// How the audit names it.
    pub fn as_str(self) -> &'static str {
        match self {
            AuthMethod::None => "none",
            AuthMethod::Token => "token",
            AuthMethod::Jwt => "jwt",
        }
    }
}

/// The client behind a request.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Principal {
    name: Arc<str>,
    method: AuthMethod,
    /// `None`: every scope (authentication is off).
    scopes: Option<Arc<BTreeSet<String>>>,
}

impl Principal {
    /// Anyone, when authentication is off: may call every tool.
    pub fn anonymous() -> Principal {
        Principal {
            name: Arc::from("anonymous"),
            method: AuthMethod::None,
            scopes: None,
        }
    }

    /// A client that authenticated with `method`, known as `name`, holding `scopes`.
    pub fn new(name: impl Into<Arc<str>>, method: AuthMethod, scopes: BTreeSet<String>) -> Self {
        Principal {
            name: name.into(),
            method,
            scopes: Some(Arc::new(scopes)),
        }
    }

    /// The name for logs and the audit: the token's name from the token file, or the JWT's
    /// subject (`sub`, else `client_id`, else `azp`).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// How the client authenticated.
    pub fn method(&self) -> AuthMethod {
        self.method
    }

    /// Whether the credential carries `scope` (always, without authentication).
    pub fn has_scope(&self, scope: &str) -> bool {
        match &self.scopes {
            None => true,
            Some(scopes) => scopes.contains(scope),
        }
    }

    /// The scopes, or `None` for "every scope" (authentication off).
    pub fn scopes(&self) -> Option<&BTreeSet<String>> {
        self.scopes.as_deref()
    }

    /// What session limits count by: the same name through the same method is the same client.
    pub(crate) fn session_key(&self) -> (AuthMethod, Arc<str>) {
        (self.method, self.name.clone())
    }
}

impl fmt::Display for Principal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({})", self.name, self.method.as_str())
    }
}
