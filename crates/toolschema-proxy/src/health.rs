//! `/healthz` and `/readyz`: what an orchestrator asks of the proxy, outside the MCP path and
//! never behind a token, on the HTTP front and on the metrics listener alike.
//!
//! `/healthz` answers 200 while the process serves. `/readyz` answers 200 once the server is
//! there and its tools are learned, else 503 with a one-line reason:
//!
//! - stdio front: the gate of the one session has learned the catalog;
//! - HTTP front with a command: the command started and listed its tools once (probed at
//!   `/readyz` until it succeeds, then remembered: no server is started before a probe asks);
//! - HTTP front with an `--upstream`: the upstream answers `initialize` and `tools/list` now
//!   (probed at each `/readyz`, one probe at a time);
//! - HTTP front with several servers (`--server`): each is probed as one would be (a command
//!   once, an upstream at each `/readyz`), all at once; a 503 names each server that is down.

use http::StatusCode;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use toolschema_mcp::snapshot::{self, SnapshotOptions, Target};

/// The path of the liveness probe.
pub const HEALTHZ: &str = "/healthz";

/// The path of the readiness probe.
pub const READYZ: &str = "/readyz";

/// How long one readiness probe of a server may take.
const PROBE_TIMEOUT: Duration = Duration::from_secs(5);

/// A check that says whether the proxy is ready: `Ok` with what it found, or why not.
pub type Check = Box<dyn Fn() -> Result<String, String> + Send + Sync>;

/// Where readiness comes from.
enum Source {
    /// Not known yet (the proxy is starting).
    Starting,
    /// Asked each time.
    Check(Check),
    /// One server, probed.
    Probe(Arc<Probe>),
    /// Several servers behind one front, each probed, by name: ready when all are.
    Servers(Vec<(String, Arc<Probe>)>),
}

/// A server probed at each request until a probe succeeds; with `remember`, not again after
/// that.
struct Probe {
    target: Target,
    options: SnapshotOptions,
    remember: bool,
    /// What the probe that succeeded found (with `remember`).
    found: Mutex<Option<String>>,
    /// One probe at a time: a burst of probes must not become a burst of sessions.
    running: tokio::sync::Mutex<()>,
}

impl Probe {
    /// A command may take a while to start the first time (`npx` fetching it): it is given
    /// the default time, and remembered once it lists its tools. An upstream is asked at each
    /// probe, within [`PROBE_TIMEOUT`].
    fn new(target: Target, headers: Vec<(String, String)>) -> Arc<Probe> {
        let remember = matches!(target, Target::Command(_));
        let options = match remember {
            true => SnapshotOptions::default(),
            false => SnapshotOptions {
                timeout: PROBE_TIMEOUT,
                headers,
                ..SnapshotOptions::default()
            },
        };
        Arc::new(Probe {
            target,
            options,
            remember,
            found: Mutex::new(None),
            running: tokio::sync::Mutex::new(()),
        })
    }

    /// What the server is found to be now, or why it cannot be used.
    async fn run(&self) -> Result<String, String> {
        if let Some(found) = lock(&self.found).clone() {
            return Ok(found);
        }
        let _one = self.running.lock().await;
        // A probe that ran while this one waited may have found it.
        if let Some(found) = lock(&self.found).clone() {
            return Ok(found);
        }
        let outcome = probe(&self.target, &self.options).await;
        if let (true, Ok(known)) = (self.remember, &outcome) {
            *lock(&self.found) = Some(known.clone());
        }
        outcome
    }
}

/// The proxy's health, shared by the listeners that answer the probes.
pub struct Health {
    source: Mutex<Source>,
}

impl std::fmt::Debug for Health {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Health").finish_non_exhaustive()
    }
}

impl Default for Health {
    fn default() -> Self {
        Health {
            source: Mutex::new(Source::Starting),
        }
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

impl Health {
    /// Health that answers 503 ("starting") until a source is set.
    pub fn new() -> Arc<Health> {
        Arc::new(Health::default())
    }

    /// Readiness is what `check` says.
    pub fn set_check(&self, check: Check) {
        *lock(&self.source) = Source::Check(check);
    }

    /// Readiness is whether `command` starts and lists its tools: probed at `/readyz` until it
    /// does once.
    pub fn probe_command(&self, command: toolschema_mcp::ServerCommand) {
        *lock(&self.source) = Source::Probe(Probe::new(Target::Command(command), Vec::new()));
    }

    /// Readiness is whether the upstream at `url` answers `initialize` and `tools/list` with
    /// these headers, asked at each probe.
    pub fn probe_upstream(&self, url: &str, headers: Vec<(String, String)>) {
        *lock(&self.source) = Source::Probe(Probe::new(Target::Url(url.to_string()), headers));
    }

    /// Readiness is whether every server behind one front is there, each probed as one server
    /// is (a command until it lists its tools once, an upstream at each probe), all at once: a
    /// 503 names each server that is not.
    pub fn probe_servers(&self, servers: &[crate::servers::ServerSpec]) {
        *lock(&self.source) = Source::Servers(
            servers
                .iter()
                .map(|s| {
                    (
                        s.name.clone(),
                        Probe::new(s.target.clone(), s.headers.clone()),
                    )
                })
                .collect(),
        );
    }

    /// The answer to `/readyz`: 200 or 503, and one line that says why.
    pub async fn readiness(&self) -> (StatusCode, String) {
        enum Known {
            Now(Result<String, String>),
            One(Arc<Probe>),
            Many(Vec<(String, Arc<Probe>)>),
        }
        // The lock is let go of before a probe is awaited.
        let known = match &*lock(&self.source) {
            Source::Starting => Known::Now(Err("the proxy is starting".to_string())),
            Source::Check(check) => Known::Now(check()),
            Source::Probe(probe) => Known::One(probe.clone()),
            Source::Servers(servers) => Known::Many(servers.clone()),
        };
        let outcome = match known {
            Known::Now(outcome) => outcome,
            Known::One(probe) => probe.run().await,
            Known::Many(servers) => {
                let probed =
                    futures::future::join_all(servers.iter().map(|(_, probe)| probe.run())).await;
                let down: Vec<String> = servers
                    .iter()
                    .zip(&probed)
                    .filter_map(|((name, _), outcome)| {
                        outcome
                            .as_ref()
                            .err()
                            .map(|why| format!("server `{name}` is down: {why}"))
                    })
                    .collect();
                match down.is_empty() {
                    true => Ok(format!("{} servers are up", servers.len())),
                    false => Err(format!(
                        "{}; {} of {} servers are up",
                        down.join("; "),
                        servers.len() - down.len(),
                        servers.len()
                    )),
                }
            }
        };
        match outcome {
            Ok(found) => (StatusCode::OK, format!("ready: {found}\n")),
            Err(why) => (
                StatusCode::SERVICE_UNAVAILABLE,
                format!("not ready: {}\n", one_line(&why)),
            ),
        }
    }

    /// The answer to a probe's path, or `None` for another path.
    pub async fn answer(&self, path: &str) -> Option<(StatusCode, String)> {
        match path {
            HEALTHZ => Some((StatusCode::OK, "ok\n".to_string())),
            READYZ => Some(self.readiness().await),
            _ => None,
        }
    }
}

/// Initialize and list the tools of `target`: what was learned, or why not.
async fn probe(target: &Target, options: &SnapshotOptions) -> Result<String, String> {
    match snapshot::take(target, options).await {
        Ok(found) => Ok(format!("{target} listed {} tool(s)", found.tools.len())),
        Err(e) => Err(format!("{target} cannot be used: {e}")),
    }
}

/// A reason on one line (a probe's answer is one line).
fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn answers_the_probes_from_the_check() {
        let health = Health::new();
        assert_eq!(
            health.answer(READYZ).await.unwrap().0,
            StatusCode::SERVICE_UNAVAILABLE
        );
        assert_eq!(health.answer(HEALTHZ).await.unwrap().0, StatusCode::OK);
        health.set_check(Box::new(|| Err("no\ncatalog".into())));
        assert_eq!(
            health.answer(READYZ).await.unwrap(),
            (
                StatusCode::SERVICE_UNAVAILABLE,
                "not ready: no catalog\n".to_string()
            )
        );
        health.set_check(Box::new(|| Ok("3 tools".into())));
        assert_eq!(health.answer(READYZ).await.unwrap().0, StatusCode::OK);
        assert!(health.answer("/mcp").await.is_none());
    }
}
