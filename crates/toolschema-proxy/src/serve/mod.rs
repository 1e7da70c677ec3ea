//! `toolschema serve`: the proxy's decisions as a service that other gateways call on each
//! request, instead of a second proxy in the path of every call.
//!
//! It speaks three hooks, over HTTP (behind the guard of the other HTTP servers) and stdio:
//! - MCP interceptors (SEP-2624, [`interceptors`]): an MCP server answering
//!   `interceptors/list` and `interceptor/invoke` for `tools/call` requests (the arguments) and
//!   responses (the result's `structuredContent`);
//! - ToolHive validating webhooks (RFC-0017, [`webhook`]), signed with HMAC-SHA256;
//! - a ContextForge external plugin ([`contextforge`]): `tool_pre_invoke` and
//!   `tool_post_invoke` as the tools of the same MCP server.
//!
//! The schemas come from catalog files, read again on SIGHUP and when a file changes, or from
//! the servers themselves, listed again on SIGHUP and on their `list_changed`; a catalog that
//! cannot be read keeps the one read before, and says why. Every decision is the
//! proxy's gate's ([`Decider`]).

mod catalogs;
pub mod contextforge;
mod decider;
pub mod http;
pub mod interceptors;
pub mod stdio;
pub mod webhook;

pub use catalogs::{CatalogSource, Catalogs, Origin, ReloadError};
pub use decider::{Decider, Decision, NoVerdict};

use crate::http::ProxyFile;
use crate::metrics::Metrics;
use crate::AuditLog;
use serde_json::Value;
use std::sync::Arc;
use std::time::Duration;
use toolschema_gate::ToolPolicy;
use toolschema_http::Principal;

/// Whether the service's refusals block (`enforce`) or only report (`audit`), as the
/// interceptor's `mode` says it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
pub enum Mode {
    /// A refused call is refused.
    #[default]
    Enforce,
    /// A refused call is reported (to the hook, the audit log and the metrics) and let through.
    Audit,
}

/// What the service is told at start-up, besides its catalogs.
pub struct ServeConfig {
    /// `enforce` or `audit`.
    pub mode: Mode,
    /// The audit log, shared by every decision.
    pub audit: Option<AuditLog>,
    /// The metrics, shared by every decision.
    pub metrics: Option<Arc<Metrics>>,
    /// The ToolHive webhook's HMAC secret (`None`: the webhook endpoint is not served).
    pub webhook_secret: Option<Vec<u8>>,
    /// The longest a decision may take; past it the call is refused.
    pub decision_timeout: Duration,
    /// The most decisions made at once over HTTP; past it a request gets 503.
    pub max_concurrent: usize,
    /// The `[proxy]` table of the settings file: the policies per principal (`tokens`) and the
    /// scopes tools need, as the proxy applies them.
    pub file: ProxyFile,
}

impl Default for ServeConfig {
    fn default() -> Self {
        ServeConfig {
            mode: Mode::Enforce,
            audit: None,
            metrics: None,
            webhook_secret: None,
            decision_timeout: Duration::from_secs(5),
            max_concurrent: 256,
            file: ProxyFile::default(),
        }
    }
}

/// The service: its catalogs and its settings, shared by every request.
pub struct Service {
    /// The schemas, per server.
    pub catalogs: Arc<Catalogs>,
    /// The settings.
    pub config: ServeConfig,
}

/// The phase of a `tools/call` a decision is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// The call's arguments, before it reaches the server.
    Request,
    /// The call's result, before it reaches the client.
    Response,
}

impl Phase {
    /// The phase as the interceptor protocol writes it.
    pub fn as_str(self) -> &'static str {
        match self {
            Phase::Request => "request",
            Phase::Response => "response",
        }
    }
}

impl Service {
    /// A service over `catalogs`.
    pub fn new(catalogs: Arc<Catalogs>, config: ServeConfig) -> Service {
        Service { catalogs, config }
    }

    /// Decide a call of `tool` on `server` (`None`: the only catalog), in `phase`: its
    /// arguments, or its result. The decision is audited and counted; in `audit` mode a refusal
    /// is reported and the call allowed. A hook that names no principal decides as
    /// [`Principal::anonymous`], as the proxy does without authentication.
    pub fn decide(
        &self,
        server: Option<&str>,
        phase: Phase,
        tool: &str,
        value: &Value,
    ) -> Result<Decision, NoVerdict> {
        self.decide_for(server, phase, tool, value, &Principal::anonymous())
    }

    /// [`Service::decide`] for a call made by `principal`: its policy in the settings file
    /// (`[proxy.tokens.NAME]`, the tools' scopes) applies on top of `--allow` and `--deny`.
    pub fn decide_for(
        &self,
        server: Option<&str>,
        phase: Phase,
        tool: &str,
        value: &Value,
        principal: &Principal,
    ) -> Result<Decision, NoVerdict> {
        let (catalog, decider) = self
            .catalogs
            .decider(server)
            .map_err(NoVerdict::from_text)?;
        // Built only when the file gives principals policies: most services have none.
        let policy = self.config.file.has_holder_policies().then(|| ToolPolicy {
            holder: Some(self.config.file.holder_policy(principal)),
            ..decider.policy().clone()
        });
        let mut decision = match phase {
            Phase::Request => decider.check_call(tool, value, policy.as_ref())?,
            Phase::Response => decider.check_result(tool, value)?,
        };
        // Records and metrics name the catalog as the server (the operator's name, never the
        // request's), and the principal as the client, as the proxy does.
        if let Some(server) = catalog {
            decision.record.origin = Some(toolschema_gate::servers::Origin {
                server,
                tool: tool.to_string(),
            });
        }
        if let Some(audit) = &self.config.audit {
            audit.write_for(&decision.record, Some(principal.name()));
        }
        if let Some(metrics) = &self.config.metrics {
            metrics.call(&decision.record, decision.listed);
        }
        if let Some(why) = &decision.unchecked {
            tracing::warn!("{why}");
        }
        Ok(decision)
    }
}
