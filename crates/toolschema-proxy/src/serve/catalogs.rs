//! The service's catalogs: one per server, read from files (read again on SIGHUP and when a
//! file changes) or listed by the server itself over a session kept open (listed again on
//! SIGHUP and when the server sends `notifications/tools/list_changed`). A catalog that cannot
//! be read keeps what was read before.

use super::Decider;
use crate::servers::Listener;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, SystemTime};
use tokio::sync::mpsc;
use toolschema::catalog::Catalog;
use toolschema::json::number::StatedNumbers;
use toolschema_gate::{GateConfig, Pins};
use toolschema_mcp::connection::client::{Client, ListedTool};
use toolschema_mcp::snapshot::{SnapshotOptions, Target};

/// A session with a server the tools are learned from (`None` until connected, and after it
/// failed).
type Session = tokio::sync::Mutex<Option<Client<Listener>>>;

/// Where a catalog's tools are read.
#[derive(Debug, Clone)]
pub enum Origin {
    /// A catalog file: a `tools/list` result, an array of tools, or one tool.
    File(PathBuf),
    /// The server itself, listed as `toolschema snapshot` lists it (`--upstream`, `-- CMD`),
    /// with `headers` on every HTTP request to it (`--header`).
    Server {
        /// The server's command or URL.
        target: Target,
        /// The HTTP headers sent with every request (a URL's only).
        headers: Vec<(String, String)>,
    },
}

impl Origin {
    /// The file or the server, as messages name it.
    fn name(&self) -> String {
        match self {
            Origin::File(path) => path.display().to_string(),
            Origin::Server { target, .. } => target.to_string(),
        }
    }
}

/// Where one server's tools come from.
#[derive(Debug, Clone)]
pub struct CatalogSource {
    /// The server the catalog is for, as hooks name it (`None`: the only server).
    pub server: Option<String>,
    /// Where its tools are read.
    pub origin: Origin,
    /// The pins its tools must match (`--pin`).
    pub pins: Option<Pins>,
}

impl CatalogSource {
    /// `[SERVER=]FILE`, as `--catalog` takes it.
    pub fn parse(text: &str) -> CatalogSource {
        match text.split_once('=') {
            Some((server, path)) if !server.is_empty() && !server.contains('/') => CatalogSource {
                server: Some(server.to_string()),
                origin: Origin::File(PathBuf::from(path)),
                pins: None,
            },
            _ => CatalogSource {
                server: None,
                origin: Origin::File(PathBuf::from(text)),
                pins: None,
            },
        }
    }

    /// The key the catalog is kept under.
    fn key(&self) -> String {
        self.server.clone().unwrap_or_default()
    }
}

/// Why a catalog file could not be read.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{file}: {reason}")]
pub struct ReloadError {
    /// The file.
    pub file: String,
    /// Why.
    pub reason: String,
}

/// The catalogs in force.
pub struct Catalogs {
    sources: Vec<CatalogSource>,
    config: GateConfig,
    deciders: RwLock<BTreeMap<String, Arc<Decider>>>,
    /// When each file was last seen changed (to notice changes).
    seen: Mutex<Vec<Option<SystemTime>>>,
    /// Per source: the session with its server (a file's stays `None`).
    sessions: Vec<Session>,
    /// Told a source's place when its server sends `list_changed`.
    changed: mpsc::UnboundedSender<usize>,
    /// Where [`Catalogs::watch`] hears them (taken by the first watch).
    heard: Mutex<Option<mpsc::UnboundedReceiver<usize>>>,
}

impl Catalogs {
    /// Read every source; any file that cannot be read is an error (the service does not start
    /// without its schemas).
    pub async fn load(
        sources: Vec<CatalogSource>,
        config: GateConfig,
    ) -> Result<Catalogs, ReloadError> {
        if sources.is_empty() {
            return Err(ReloadError {
                file: "--catalog".into(),
                reason: "give at least one catalog file".into(),
            });
        }
        let (changed, heard) = mpsc::unbounded_channel();
        let catalogs = Catalogs {
            seen: Mutex::new(vec![None; sources.len()]),
            sessions: sources.iter().map(|_| Session::default()).collect(),
            sources,
            config,
            deciders: RwLock::new(BTreeMap::new()),
            changed,
            heard: Mutex::new(Some(heard)),
        };
        for (index, source) in catalogs.sources.iter().enumerate() {
            let taken = {
                let deciders = catalogs.deciders.read().unwrap_or_else(|e| e.into_inner());
                deciders.contains_key(&source.key())
            };
            if taken {
                return Err(ReloadError {
                    file: source.origin.name(),
                    reason: match &source.server {
                        Some(server) => format!("server '{server}' has two catalogs"),
                        None => "two catalogs for no named server: name them SERVER=FILE".into(),
                    },
                });
            }
            catalogs.reload_one(index).await?;
        }
        Ok(catalogs)
    }

    /// The decider for calls to `server` (the only catalog when there is one), with the
    /// catalog's own name: the operator's `NAME` of `--catalog NAME=FILE`, never the name a
    /// request gave (records and metrics name it).
    pub fn decider(&self, server: Option<&str>) -> Result<(Option<String>, Arc<Decider>), String> {
        let deciders = self.deciders.read().unwrap_or_else(|e| e.into_inner());
        let named = |(key, decider): (&String, &Arc<Decider>)| {
            ((!key.is_empty()).then(|| key.clone()), decider.clone())
        };
        if let Some(found) = server.and_then(|name| deciders.get_key_value(name)) {
            return Ok(named(found));
        }
        if deciders.len() == 1 {
            if let Some(only) = deciders.iter().next() {
                return Ok(named(only));
            }
        }
        let known: Vec<&str> = deciders.keys().map(String::as_str).collect();
        Err(match server {
            Some(name) => format!(
                "the service has no catalog for server '{name}' (it has: {})",
                known.join(", ")
            ),
            None => format!(
                "the request names no server, and the service has catalogs for several: {}",
                known.join(", ")
            ),
        })
    }

    /// How many tools the catalogs hold together.
    pub fn tools(&self) -> usize {
        let deciders = self.deciders.read().unwrap_or_else(|e| e.into_inner());
        deciders.values().map(|d| d.len()).sum()
    }

    /// Read every file again. A file that cannot be read keeps its catalog, and its error is
    /// returned (one per file); the others are replaced.
    pub async fn reload(&self) -> Vec<ReloadError> {
        let mut errors = Vec::new();
        for index in 0..self.sources.len() {
            if let Err(e) = self.reload_one(index).await {
                errors.push(e);
            }
        }
        errors
    }

    /// Read one source again (list its server again): its catalog is replaced, or kept when
    /// it cannot be read.
    async fn reload_one(&self, index: usize) -> Result<(), ReloadError> {
        let source = &self.sources[index];
        let stamp = modified(source);
        let read = self.read(index).await;
        {
            let mut seen = self.seen.lock().unwrap_or_else(|e| e.into_inner());
            seen[index] = stamp;
        }
        let decider = read?;
        let mut deciders = self.deciders.write().unwrap_or_else(|e| e.into_inner());
        deciders.insert(source.key(), Arc::new(decider));
        Ok(())
    }

    /// Read again the files whose modification time changed since they were last read; the
    /// errors as [`Catalogs::reload`]'s. `None` when nothing changed.
    pub async fn reload_changed(&self) -> Option<Vec<ReloadError>> {
        let changed = {
            let seen = self.seen.lock().unwrap_or_else(|e| e.into_inner());
            self.sources
                .iter()
                .zip(seen.iter())
                .any(|(source, stamp)| modified(source) != *stamp)
        };
        if !changed {
            return None;
        }
        Some(self.reload().await)
    }

    /// Reload on SIGHUP and when a file changes (looked at every `every`), logging what was
    /// loaded and what was not, until the runtime ends.
    pub fn watch(self: &Arc<Self>, every: Duration) -> std::io::Result<()> {
        use tokio::signal::unix::{signal, SignalKind};
        let mut hangups = signal(SignalKind::hangup())?;
        let catalogs = self.clone();
        let mut heard = self.heard.lock().unwrap_or_else(|e| e.into_inner()).take();
        tokio::spawn(async move {
            let mut tick = tokio::time::interval(every);
            tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                let errors = tokio::select! {
                    _ = hangups.recv() => Some(catalogs.reload().await),
                    _ = tick.tick() => catalogs.reload_changed().await,
                    changed = next_change(&mut heard) => Some(catalogs.relist(changed, &mut heard).await),
                };
                let Some(errors) = errors else { continue };
                for error in &errors {
                    tracing::error!(
                        "cannot reload the catalog {error}; the catalog read before stays in force"
                    );
                }
                tracing::info!(tools = catalogs.tools(), "catalogs reloaded");
            }
        });
        Ok(())
    }

    /// List again the servers that said their tools changed: `first`, and any other heard
    /// meanwhile (each once).
    async fn relist(
        &self,
        first: usize,
        heard: &mut Option<mpsc::UnboundedReceiver<usize>>,
    ) -> Vec<ReloadError> {
        let mut changed = vec![first];
        if let Some(heard) = heard {
            while let Ok(more) = heard.try_recv() {
                if !changed.contains(&more) {
                    changed.push(more);
                }
            }
        }
        let mut errors = Vec::new();
        for index in changed {
            tracing::info!(
                "{} says its tools changed; listing them again",
                self.sources[index].origin.name()
            );
            if let Err(e) = self.reload_one(index).await {
                errors.push(e);
            }
        }
        errors
    }

    /// Read one catalog into a decider.
    async fn read(&self, index: usize) -> Result<Decider, ReloadError> {
        let source = &self.sources[index];
        let file = source.origin.name();
        let failed = |reason: String| ReloadError {
            file: file.clone(),
            reason,
        };
        let mut config = self.config.clone();
        config.pins = source.pins.clone();
        let path = match &source.origin {
            Origin::File(path) => path,
            Origin::Server { target, headers } => {
                let mut session = self.sessions[index].lock().await;
                let options = SnapshotOptions::default();
                let listener = Listener {
                    server: index,
                    changed: self.changed.clone(),
                };
                let listed = tokio::time::timeout(
                    options.timeout,
                    list(&mut session, target, headers, &options, listener),
                )
                .await
                .unwrap_or_else(|_| {
                    Err(format!(
                        "it did not list its tools within {} s",
                        options.timeout.as_secs()
                    ))
                });
                let listed = match listed {
                    Ok(listed) => listed,
                    Err(reason) => {
                        // Reached again at the next listing.
                        if let Some(client) = session.take() {
                            client.close().await;
                        }
                        return Err(failed(reason));
                    }
                };
                let mut stated = StatedNumbers::default();
                for (at, tool) in listed.iter().enumerate() {
                    stated.push_under(&format!("/{at}"), &tool.stated);
                }
                let tools: Vec<Value> = listed.into_iter().map(|tool| tool.definition).collect();
                return Ok(Decider::new(&tools, &stated, &config));
            }
        };
        let text = std::fs::read_to_string(path).map_err(|e| failed(e.to_string()))?;
        let catalog = Catalog::from_json(&file, &text).map_err(|e| failed(e.to_string()))?;
        let mut stated = StatedNumbers::default();
        let mut tools = Vec::new();
        for (at, tool) in catalog.tools().enumerate() {
            if let Some(numbers) = tool.stated_numbers() {
                stated.push_under(&format!("/{at}"), numbers);
            }
            tools.push(tool.to_value());
        }
        Ok(Decider::new(&tools, &stated, &config))
    }
}

/// The next source whose server said its tools changed (never, without a receiver).
async fn next_change(heard: &mut Option<mpsc::UnboundedReceiver<usize>>) -> usize {
    if let Some(heard) = heard {
        // The catalogs hold a sender, so the channel stays open while they live.
        if let Some(index) = heard.recv().await {
            return index;
        }
    }
    std::future::pending().await
}

/// List a server's tools over `session`, reaching it first when there is no session or the
/// one there ended.
async fn list(
    session: &mut Option<Client<Listener>>,
    target: &Target,
    headers: &[(String, String)],
    options: &SnapshotOptions,
    listener: Listener,
) -> Result<Vec<ListedTool>, String> {
    if session.as_ref().is_some_and(Client::is_closed) {
        if let Some(ended) = session.take() {
            ended.close().await;
        }
    }
    let client = match session {
        Some(client) => client,
        None => session
            .insert(Client::connect(target, headers, options.max_message_bytes, listener).await?),
    };
    client.list_tools().await
}

/// When the file was last modified (`None`: it cannot be read, or it is a server).
fn modified(source: &CatalogSource) -> Option<SystemTime> {
    let Origin::File(path) = &source.origin else {
        return None;
    };
    std::fs::metadata(path).and_then(|m| m.modified()).ok()
}
