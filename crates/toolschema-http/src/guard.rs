//! The guard every HTTP server of toolschema puts in front of its MCP endpoint.
//!
//! It is transport-agnostic: a server hands it the parts of each request and acts on its answers.
//! Per request, in this order:
//!
//! 1. [`Guard::admit`]: `Host` and `Origin` ([`crate::origin`]), header size, and who the client
//!    is ([`Principal`]): a bearer token from the token file, a JWT from the OAuth issuer, or
//!    anyone when authentication is off. A 401 carries `WWW-Authenticate: Bearer`, pointing at the
//!    protected resource metadata when OAuth is on.
//! 2. [`Guard::read_body`]: the body, at most `--max-body-bytes` (413).
//! 3. [`Guard::authorize_call`] for each `tools/call` in it ([`tool_calls`]): the tool's scopes
//!    (403 `insufficient_scope`).
//! 4. [`Guard::open_session`] before a session is opened (429 past `--max-sessions-per-token`),
//!    and [`crate::sessions::SessionRegistry`] to keep sessions to the client that opened them.
//!
//! A `tools/list` answer is cut to what the client may call with [`Guard::may_call`].
//! Decisions go to the access log and to `tracing`, naming clients, never their credentials.

use crate::access_log::{AccessEvent, AccessLog, TraceIds};
use crate::client::HttpClient;
use crate::jwks::{self, JwksError, KeySet, KeySource};
use crate::oauth::ResourceServer;
use crate::origin::OriginPolicy;
use crate::principal::Principal;
use crate::refusal::{quoted, Refusal, RefusalKind};
use crate::scopes::ToolScopes;
use crate::sessions::{SessionLimiter, SessionPermit, SessionRegistry};
use crate::tokens::{TokenFile, TokenFileError};
use bytes::Bytes;
use http::header::{AUTHORIZATION, CONTENT_LENGTH, HOST};
use http_body_util::{BodyExt, Limited};
use serde_json::{json, Value};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;

/// Where the protected resource metadata (RFC 9728) is served, before the endpoint's path.
pub const METADATA_PATH: &str = "/.well-known/oauth-protected-resource";

/// How a server authenticates its clients.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AuthConfig {
    /// `--auth-token-file`: static bearer tokens.
    pub token_file: Option<PathBuf>,
    /// `--oauth-issuer` and `--oauth-audience`: JWT access tokens.
    pub oauth: Option<OAuthConfig>,
    /// `--no-auth`: serve without authentication, on any address, on purpose.
    pub no_auth: bool,
}

impl AuthConfig {
    /// Whether clients must authenticate.
    pub fn is_configured(&self) -> bool {
        self.token_file.is_some() || self.oauth.is_some()
    }
}

/// The OAuth issuer whose tokens are accepted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OAuthConfig {
    /// The issuer (`iss`), whose metadata names its keys.
    pub issuer: String,
    /// The audience (`aud`) tokens must be for: this server.
    pub audience: String,
    /// `--jwks-file`: the issuer's keys from a file instead of from its metadata.
    pub jwks_file: Option<PathBuf>,
}

/// The limits on requests and sessions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// The largest request body (413 past it).
    pub max_body_bytes: usize,
    /// The largest request head: request line and headers (431 past it).
    pub max_header_bytes: usize,
    /// The most sessions one client may hold at once (429 past it).
    pub max_sessions_per_client: usize,
    /// How long a session may stay idle before the server closes it (clients that go away
    /// without closing their session hold their place in the count until then).
    pub session_idle: std::time::Duration,
    /// How long a client may take to send a request head, and then its body (a connection
    /// that sends nothing, or nothing between requests, is closed after it too).
    pub read_timeout: std::time::Duration,
    /// How long a client may leave what the server writes to it unread before its connection
    /// is closed.
    pub write_timeout: std::time::Duration,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_body_bytes: 4 << 20,
            max_header_bytes: 16 << 10,
            max_sessions_per_client: 64,
            session_idle: std::time::Duration::from_secs(300),
            read_timeout: std::time::Duration::from_secs(30),
            write_timeout: std::time::Duration::from_secs(30),
        }
    }
}

/// Everything the guard is told at start-up.
#[derive(Debug, Clone, Default)]
pub struct GuardConfig {
    /// How clients authenticate.
    pub auth: AuthConfig,
    /// Which scopes each tool needs.
    pub tool_scopes: ToolScopes,
    /// Request and session limits.
    pub limits: Limits,
    /// `--allowed-host`: more names the server answers to (`*`: any).
    pub allowed_hosts: Vec<String>,
    /// `--allowed-origin`: browser origins allowed besides the server's own names.
    pub allowed_origins: Vec<String>,
    /// `--resource-url`: the MCP endpoint's URL as clients see it (behind a proxy that
    /// terminates TLS, say); by default, `http://` the request's `Host` and the endpoint's path.
    pub resource_url: Option<String>,
    /// `--access-log`: the JSON Lines file of decisions.
    pub access_log: Option<PathBuf>,
    /// The MCP endpoint's path (`/mcp`).
    pub endpoint_path: String,
}

/// Why a server does not start.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    /// A non-loopback address without authentication.
    #[error(
        "refusing to serve on {0} without authentication: anyone who can reach it could call every tool. \
         Use --auth-token-file FILE, or --oauth-issuer URL --oauth-audience AUDIENCE, \
         or --no-auth to serve without authentication on purpose"
    )]
    Unauthenticated(SocketAddr),
    /// `--no-auth` together with an authentication option.
    #[error("--no-auth cannot be combined with --auth-token-file or --oauth-issuer")]
    Contradiction,
    /// The token file.
    #[error("{0}")]
    Tokens(#[from] TokenFileError),
    /// The issuer's keys.
    #[error("{0}")]
    Keys(#[from] JwksError),
    /// A setting that cannot be used.
    #[error("{0}")]
    Setting(String),
    /// The access log cannot be opened.
    #[error("{path}: cannot open the access log: {error}")]
    AccessLog {
        /// The file.
        path: String,
        /// Why.
        error: std::io::Error,
    },
}

/// The guard: one per server, shared by every connection.
pub struct Guard {
    tokens: Option<TokenFile>,
    oauth: Option<ResourceServer>,
    no_auth: bool,
    scopes: ToolScopes,
    limits: Limits,
    origins: OriginPolicy,
    sessions: SessionLimiter,
    registry: SessionRegistry,
    access_log: Option<AccessLog>,
    resource_url: Option<String>,
    endpoint_path: String,
}

impl GuardConfig {
    /// The checks of [`Guard::start`] that need only the address asked for: run before binding,
    /// so a server refused for its address says why even when the port is taken.
    pub fn check_address(&self, address: SocketAddr) -> Result<(), StartError> {
        let auth = &self.auth;
        if auth.no_auth && auth.is_configured() {
            return Err(StartError::Contradiction);
        }
        if !auth.is_configured() && !auth.no_auth && !address.ip().is_loopback() {
            return Err(StartError::Unauthenticated(address));
        }
        Ok(())
    }
}

impl Guard {
    /// The guard of a server bound to `bound`: refuses a non-loopback address without
    /// authentication, loads the tokens and the issuer's keys, opens the access log.
    pub async fn start(config: GuardConfig, bound: SocketAddr) -> Result<Guard, StartError> {
        config.check_address(bound)?;
        let auth = &config.auth;
        if config.limits.max_sessions_per_client == 0 {
            return Err(StartError::Setting(
                "--max-sessions-per-token must be at least 1".into(),
            ));
        }
        if let Some(url) = &config.resource_url {
            if !(url.starts_with("https://") || url.starts_with("http://"))
                || url.parse::<http::Uri>().is_err()
            {
                return Err(StartError::Setting(format!(
                    "--resource-url '{url}' is not an http:// or https:// URL"
                )));
            }
        }
        let tokens = match &auth.token_file {
            Some(path) => Some(TokenFile::load(path)?),
            None => None,
        };
        let oauth = match &auth.oauth {
            Some(oauth) => Some(resource_server(oauth).await?),
            None => None,
        };
        let access_log = match &config.access_log {
            Some(path) => Some(
                AccessLog::open(path).map_err(|error| StartError::AccessLog {
                    path: path.display().to_string(),
                    error,
                })?,
            ),
            None => None,
        };
        Ok(Guard {
            tokens,
            oauth,
            no_auth: auth.no_auth,
            scopes: config.tool_scopes,
            limits: config.limits,
            origins: OriginPolicy::new(bound.ip(), &config.allowed_hosts, &config.allowed_origins),
            sessions: SessionLimiter::new(config.limits.max_sessions_per_client),
            registry: SessionRegistry::new(),
            access_log,
            resource_url: config.resource_url,
            endpoint_path: config.endpoint_path,
        })
    }

    /// One line on how clients authenticate, for the server's start-up message.
    pub fn describe(&self) -> String {
        let mut ways = Vec::new();
        if let Some(tokens) = &self.tokens {
            ways.push(format!(
                "{} bearer {} from {}",
                tokens.len(),
                if tokens.len() == 1 { "token" } else { "tokens" },
                tokens.path().display()
            ));
        }
        if let Some(oauth) = &self.oauth {
            let source = match oauth.keys().source() {
                KeySource::File(path) => path.display().to_string(),
                KeySource::Url(url) => url.clone(),
            };
            let keys = oauth.keys().len();
            ways.push(format!(
                "JWTs from {} for audience {} ({} from {source})",
                oauth.issuer(),
                oauth.audience(),
                toolschema::text::count(keys, "key", "keys"),
            ));
        }
        if ways.is_empty() {
            let scopes = if self.scopes.is_empty() {
                ""
            } else {
                "; the scopes tools need apply to authenticated clients only"
            };
            if self.no_auth {
                format!("authentication: off (--no-auth): anyone who can reach this address can call every tool{scopes}")
            } else {
                format!("authentication: off (loopback only){scopes}")
            }
        } else {
            format!("authentication: {}", ways.join("; or "))
        }
    }

    /// Whether clients must authenticate.
    pub fn requires_auth(&self) -> bool {
        self.tokens.is_some() || self.oauth.is_some()
    }

    /// The limits.
    pub fn limits(&self) -> &Limits {
        &self.limits
    }

    /// The Host and Origin policy.
    pub fn origins(&self) -> &OriginPolicy {
        &self.origins
    }

    /// The open sessions and their owners.
    pub fn sessions(&self) -> &SessionRegistry {
        &self.registry
    }

    /// Check `Host`, `Origin` and the head's size, and establish who sent the request.
    pub async fn admit(&self, parts: &http::request::Parts) -> Result<Principal, Refusal> {
        let result = self.admit_inner(parts).await;
        if let Err(refusal) = &result {
            self.log_refusal(None, refusal, None);
        }
        result
    }

    async fn admit_inner(&self, parts: &http::request::Parts) -> Result<Principal, Refusal> {
        check_single_headers(&parts.headers)?;
        self.origins.check(&parts.headers)?;
        let head_bytes = parts.uri.to_string().len()
            + parts
                .headers
                .iter()
                .map(|(name, value)| name.as_str().len() + value.len() + 4)
                .sum::<usize>();
        if head_bytes > self.limits.max_header_bytes {
            return Err(Refusal::new(
                RefusalKind::HeadersTooLarge,
                format!(
                    "the request's headers are larger than {} bytes",
                    self.limits.max_header_bytes
                ),
            ));
        }
        if !self.requires_auth() {
            return Ok(Principal::anonymous());
        }
        let mut values = parts.headers.get_all(AUTHORIZATION).iter();
        let (Some(value), None) = (values.next(), values.next()) else {
            return Err(self.unauthorized(
                parts,
                RefusalKind::MissingToken,
                "this server needs a bearer token (Authorization: Bearer TOKEN)",
            ));
        };
        let token = value
            .to_str()
            .ok()
            .and_then(|v| v.split_once(' '))
            .filter(|(scheme, _)| scheme.eq_ignore_ascii_case("bearer"))
            .map(|(_, token)| token.trim())
            .filter(|token| !token.is_empty());
        let Some(token) = token else {
            return Err(self.unauthorized(
                parts,
                RefusalKind::InvalidToken,
                "the Authorization header is not 'Bearer TOKEN'",
            ));
        };
        if let Some(found) = self.tokens.as_ref().and_then(|t| t.find(token)) {
            return Ok(Principal::new(
                found.name,
                crate::principal::AuthMethod::Token,
                found.scopes,
            ));
        }
        let reason = match &self.oauth {
            Some(oauth) if ResourceServer::looks_like_jwt(token) => {
                match oauth.verify(token).await {
                    Ok(principal) => return Ok(principal),
                    Err(reason) => reason,
                }
            }
            Some(_) if self.tokens.is_none() => "the token is not a JWT".to_string(),
            _ => "the token is not one this server knows".to_string(),
        };
        Err(self.unauthorized(parts, RefusalKind::InvalidToken, &reason))
    }

    /// A 401 with its challenge: `error` only when a token was sent (RFC 6750 section 3.1).
    fn unauthorized(
        &self,
        parts: &http::request::Parts,
        kind: RefusalKind,
        message: &str,
    ) -> Refusal {
        let mut challenge = vec!["realm=\"mcp\"".to_string()];
        if kind == RefusalKind::InvalidToken {
            challenge.push("error=\"invalid_token\"".into());
            challenge.push(format!("error_description={}", quoted(message)));
        }
        if let Some(url) = self.metadata_url(parts) {
            challenge.push(format!("resource_metadata={}", quoted(&url)));
        }
        Refusal::new(kind, message).with_challenge(format!("Bearer {}", challenge.join(", ")))
    }

    /// Whether `principal` may call `tool`: it holds every scope the tool needs.
    pub fn may_call(&self, principal: &Principal, tool: &str) -> bool {
        self.scopes
            .required(tool)
            .iter()
            .all(|scope| principal.has_scope(scope))
    }

    /// Let a `tools/call` of `tool` through, or refuse it with 403 `insufficient_scope` naming
    /// the scopes it needs. Both are logged; `trace`: the trace of the request, for the access
    /// log.
    pub fn authorize_call(
        &self,
        parts: &http::request::Parts,
        principal: &Principal,
        tool: &str,
        trace: Option<&TraceIds>,
    ) -> Result<(), Refusal> {
        let required = self.scopes.required(tool);
        let missing: Vec<&str> = required
            .iter()
            .copied()
            .filter(|scope| !principal.has_scope(scope))
            .collect();
        if missing.is_empty() {
            tracing::info!(
                client = principal.name(),
                auth = principal.method().as_str(),
                tool,
                "tools/call"
            );
            if let Some(log) = &self.access_log {
                log.record(Some(principal), AccessEvent::Call(tool), trace);
            }
            return Ok(());
        }
        let scope = required.into_iter().collect::<Vec<_>>().join(" ");
        let message = format!(
            "'{}' may not call the tool '{tool}': it needs the scope {}",
            principal.name(),
            missing.join(" and ")
        );
        let mut challenge = vec![
            "realm=\"mcp\"".to_string(),
            "error=\"insufficient_scope\"".to_string(),
            format!("scope={}", quoted(&scope)),
            format!("error_description={}", quoted(&message)),
        ];
        if let Some(url) = self.metadata_url(parts) {
            challenge.push(format!("resource_metadata={}", quoted(&url)));
        }
        let refusal = Refusal::new(RefusalKind::InsufficientScope, message)
            .with_challenge(format!("Bearer {}", challenge.join(", ")));
        self.log_refusal_in(Some(principal), &refusal, Some(tool), trace);
        Err(refusal)
    }

    /// Authorize every `tools/call` in a JSON-RPC request body ([`tool_calls`]). A body that
    /// cannot be read as JSON-RPC is refused (400) when the client's scopes matter: it could hide
    /// a call the guard did not see. `trace`: the trace of the request, for the access log.
    pub fn check_calls(
        &self,
        parts: &http::request::Parts,
        principal: &Principal,
        body: &[u8],
        trace: Option<&TraceIds>,
    ) -> Result<(), Refusal> {
        match tool_calls(body) {
            Some(names) => names
                .iter()
                .try_for_each(|name| self.authorize_call(parts, principal, name, trace)),
            None if self.scopes.is_empty() || principal.scopes().is_none() => Ok(()),
            None => {
                let refusal = Refusal::new(
                    RefusalKind::BadRequest,
                    "the request body is not a JSON-RPC message this server can read",
                );
                self.log_refusal_in(Some(principal), &refusal, None, trace);
                Err(refusal)
            }
        }
    }

    /// A permit for one more session of `principal` (429 past the limit). Logged.
    pub fn open_session(&self, principal: &Principal) -> Result<SessionPermit, Refusal> {
        match self.sessions.acquire(principal) {
            Ok(permit) => Ok(permit),
            Err(refusal) => {
                self.log_refusal(Some(principal), &refusal, None);
                Err(refusal)
            }
        }
    }

    /// Record that `principal` opened session `id`: with the `permit` it held while the session
    /// was being opened, for a server that learns the id only afterwards (the session is then
    /// theirs in the registry); without, for a session the session layer created while the
    /// permit was in scope ([`SessionRegistry::opening`]), which is theirs already.
    pub fn session_opened(&self, id: &str, principal: &Principal, permit: Option<SessionPermit>) {
        if let Some(permit) = permit {
            self.registry.opened(id, permit);
        }
        tracing::info!(
            client = principal.name(),
            auth = principal.method().as_str(),
            "session opened"
        );
        if let Some(log) = &self.access_log {
            log.record(Some(principal), AccessEvent::SessionOpened, None);
        }
    }

    /// Refuse use of session `id` by a client that did not open it (404). Logged.
    pub fn check_session(&self, id: &str, principal: &Principal) -> Result<(), Refusal> {
        self.registry
            .check_owner(id, principal)
            .inspect_err(|refusal| {
                self.log_refusal(Some(principal), refusal, None);
            })
    }

    /// Read a request body of at most `--max-body-bytes`; 413 past it (before reading, when
    /// `Content-Length` says so).
    pub async fn read_body<B>(
        &self,
        principal: &Principal,
        headers: &http::HeaderMap,
        body: B,
    ) -> Result<Bytes, Refusal>
    where
        B: hyper::body::Body<Data = Bytes>,
        B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
    {
        let limit = self.limits.max_body_bytes;
        let too_large = || {
            let refusal = Refusal::new(
                RefusalKind::BodyTooLarge,
                format!("the request body is larger than {limit} bytes (--max-body-bytes)"),
            );
            self.log_refusal(Some(principal), &refusal, None);
            refusal
        };
        let declared = headers
            .get(CONTENT_LENGTH)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.parse::<u64>().ok());
        if declared.is_some_and(|length| length > limit as u64) {
            return Err(too_large());
        }
        let within = self.limits.read_timeout;
        let Ok(collected) = tokio::time::timeout(within, Limited::new(body, limit).collect()).await
        else {
            let refusal = Refusal::new(
                RefusalKind::RequestTimeout,
                format!(
                    "the request body did not arrive within {} s (--read-timeout)",
                    within.as_secs()
                ),
            );
            self.log_refusal(Some(principal), &refusal, None);
            return Err(refusal);
        };
        match collected {
            Ok(collected) => Ok(collected.to_bytes()),
            Err(e) if e.is::<http_body_util::LengthLimitError>() => Err(too_large()),
            Err(e) => Err(Refusal::new(
                RefusalKind::BadRequest,
                format!("the request body cannot be read: {e}"),
            )),
        }
    }

    /// Whether the protected resource metadata is served at `path`.
    pub fn serves_metadata(&self, path: &str) -> bool {
        self.oauth.is_some()
            && (path == METADATA_PATH
                || path.strip_prefix(METADATA_PATH) == Some(self.endpoint_path.as_str()))
    }

    /// The protected resource metadata document (RFC 9728), when OAuth is on. `Host` and
    /// `Origin` are checked as for every request.
    pub fn metadata(&self, parts: &http::request::Parts) -> Result<Value, Refusal> {
        self.origins.check(&parts.headers).inspect_err(|refusal| {
            self.log_refusal(None, refusal, None);
        })?;
        let (Some(oauth), Some(resource)) = (&self.oauth, self.resource(parts)) else {
            return Err(
                Refusal::new(RefusalKind::BadRequest, "this server has no OAuth issuer")
                    .with_status(http::StatusCode::NOT_FOUND),
            );
        };
        Ok(json!({
            "resource": resource,
            "authorization_servers": [oauth.issuer()],
            "scopes_supported": self.scopes.all(),
            "bearer_methods_supported": ["header"],
        }))
    }

    /// The MCP endpoint's URL as clients see it.
    fn resource(&self, parts: &http::request::Parts) -> Option<String> {
        if let Some(url) = &self.resource_url {
            return Some(url.clone());
        }
        let host = parts.headers.get(HOST)?.to_str().ok()?;
        Some(format!("http://{host}{}", self.endpoint_path))
    }

    /// Where the metadata is, for `WWW-Authenticate` (OAuth only).
    fn metadata_url(&self, parts: &http::request::Parts) -> Option<String> {
        self.oauth.as_ref()?;
        let resource = self.resource(parts)?;
        let uri: http::Uri = resource.parse().ok()?;
        let origin = format!("{}://{}", uri.scheme_str()?, uri.authority()?);
        let path = uri.path().trim_end_matches('/');
        Some(format!("{origin}{METADATA_PATH}{path}"))
    }

    /// Log a refusal to `tracing` and the access log.
    pub fn log_refusal(
        &self,
        principal: Option<&Principal>,
        refusal: &Refusal,
        tool: Option<&str>,
    ) {
        self.log_refusal_in(principal, refusal, tool, None)
    }

    /// [`log_refusal`](Self::log_refusal) of a request in `trace`.
    fn log_refusal_in(
        &self,
        principal: Option<&Principal>,
        refusal: &Refusal,
        tool: Option<&str>,
        trace: Option<&TraceIds>,
    ) {
        tracing::warn!(
            client = principal.map(Principal::name),
            status = refusal.status().as_u16(),
            reason = refusal.kind().code(),
            tool,
            "refused: {}",
            refusal.message()
        );
        if let Some(log) = &self.access_log {
            log.record(principal, AccessEvent::Refused(refusal, tool), trace);
        }
    }

    /// Read the token file and the key set file again (SIGHUP). On error, what was loaded
    /// before stays in force.
    pub async fn reload(&self) {
        if let Some(tokens) = &self.tokens {
            match tokens.reload() {
                Ok(count) => {
                    tracing::info!(tokens = count, path = %tokens.path().display(), "reloaded the bearer tokens")
                }
                Err(e) => {
                    tracing::error!(error = %e, "cannot reload the bearer tokens; the tokens loaded before stay in force")
                }
            }
        }
        if let Some(oauth) = &self.oauth {
            match oauth.keys().reload().await {
                Ok(count) => tracing::info!(keys = count, "reloaded the issuer's keys"),
                Err(e) => {
                    tracing::error!(error = %e, "cannot reload the issuer's keys; the keys loaded before stay in force")
                }
            }
        }
    }

    /// Reload on every SIGHUP, until the runtime ends.
    #[cfg(unix)]
    pub fn reload_on_sighup(self: &Arc<Self>) -> std::io::Result<()> {
        use tokio::signal::unix::{signal, SignalKind};
        let mut hangups = signal(SignalKind::hangup())?;
        let guard = Arc::clone(self);
        tokio::spawn(async move {
            while hangups.recv().await.is_some() {
                guard.reload().await;
            }
        });
        Ok(())
    }
}

async fn resource_server(config: &OAuthConfig) -> Result<ResourceServer, StartError> {
    let client = HttpClient::new();
    jwks::check_fetch_url(&config.issuer)
        .map_err(|e| StartError::Setting(format!("--oauth-issuer {e}")))?;
    if config.audience.trim().is_empty() {
        return Err(StartError::Setting("--oauth-audience is empty".into()));
    }
    let source = match &config.jwks_file {
        Some(path) => KeySource::File(path.clone()),
        None => KeySource::Url(jwks::discover_jwks_uri(&config.issuer, &client).await?),
    };
    let keys = KeySet::load(source, client).await?;
    Ok(ResourceServer::new(
        config.issuer.clone(),
        config.audience.clone(),
        keys,
    ))
}

/// Headers a request may carry at most once: those whose one value the guard, the server or
/// the proxy reads and compares (a second one could say something else to whoever reads it),
/// and every MCP header (`Mcp-Session-Id`, `MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name`,
/// `Mcp-Param-*`, any `Mcp-` name: all single-valued).
pub const SINGLE_HEADERS: &[&str] = &[
    "host",
    "authorization",
    "content-type",
    "content-length",
    "origin",
    "last-event-id",
];

/// Whether a request may carry header `name` (any case) at most once: see [`SINGLE_HEADERS`].
pub fn is_single_header(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    lower.starts_with("mcp-") || SINGLE_HEADERS.contains(&lower.as_str())
}

/// Refuse (400) a request that carries a single-valued header ([`is_single_header`]) more than
/// once, whatever the case of its names: which of two values counts depends on who reads it.
pub fn check_single_headers(headers: &http::HeaderMap) -> Result<(), Refusal> {
    for name in headers.keys() {
        let count = headers.get_all(name).iter().count();
        if count > 1 && is_single_header(name.as_str()) {
            return Err(Refusal::new(
                RefusalKind::BadRequest,
                format!(
                    "the request has {count} '{}' headers: it is sent once (its value is compared with the request and another could say otherwise)",
                    name.as_str()
                ),
            ));
        }
    }
    Ok(())
}

/// The tools a JSON-RPC message (or batch) calls: the `params.name` of each `tools/call`
/// request. `None` when the body is not JSON, or a `tools/call` has no string name.
pub fn tool_calls(body: &[u8]) -> Option<Vec<String>> {
    let value: Value = serde_json::from_slice(body).ok()?;
    let messages = match &value {
        Value::Array(items) => items.iter().collect(),
        _ => vec![&value],
    };
    let mut names = Vec::new();
    for message in messages {
        if message.get("method").and_then(Value::as_str) == Some("tools/call") {
            names.push(message.get("params")?.get("name")?.as_str()?.to_string());
        }
    }
    Some(names)
}

/// Whether a JSON-RPC body is an `initialize` request (a new session).
pub fn is_initialize(body: &[u8]) -> bool {
    serde_json::from_slice::<Value>(body)
        .ok()
        .and_then(|v| {
            v.get("method")
                .and_then(Value::as_str)
                .map(|m| m == "initialize")
        })
        .unwrap_or(false)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn finds_the_tools_a_body_calls() {
        let call = br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"greet","arguments":{}}}"#;
        assert_eq!(tool_calls(call), Some(vec!["greet".to_string()]));
        let batch = br#"[{"method":"tools/list"},{"method":"tools/call","params":{"name":"a"}},{"method":"tools/call","params":{"name":"b"}}]"#;
        assert_eq!(tool_calls(batch), Some(vec!["a".into(), "b".into()]));
        assert_eq!(
            tool_calls(br#"{"method":"tools/call","params":{"name":7}}"#),
            None
        );
        assert_eq!(tool_calls(b"\xef\xbb\xbf{}"), None);
        assert_eq!(tool_calls(br#"{"method":"ping"}"#), Some(vec![]));
        assert!(is_initialize(
            br#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{}}"#
        ));
        assert!(!is_initialize(br#"[{"method":"initialize"}]"#));
    }

    #[test]
    fn every_mcp_header_is_single() {
        for name in [
            "MCP-NEW-THING",
            "mcp-name",
            "Mcp-Param-X",
            "HOST",
            "last-event-id",
        ] {
            assert!(is_single_header(name), "{name}");
        }
        for name in ["accept", "x-mcp-name", "cookie", "traceparent-x"] {
            assert!(!is_single_header(name), "{name}");
        }
    }

    proptest! {
        /// Any bytes are read without panicking.
        #[test]
        fn any_body_is_read(body in proptest::collection::vec(any::<u8>(), 0..200)) {
            let _ = tool_calls(&body);
            let _ = is_initialize(&body);
        }

        /// Every tools/call of a batch is found, whatever its name, id and other keys.
        #[test]
        fn every_call_is_found(
            names in proptest::collection::vec("\\PC{0,20}", 0..5),
            id in prop_oneof![Just(json!(1)), Just(json!(1.5)), Just(json!("x")), Just(json!(u64::MAX))],
        ) {
            let batch: Vec<Value> = names
                .iter()
                .map(|name| json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": name, "arguments": {}}}))
                .collect();
            let body = serde_json::to_vec(&batch).unwrap();
            prop_assert_eq!(tool_calls(&body), Some(names));
        }
    }
}
