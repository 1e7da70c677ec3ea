//! The service's catalogs: one per server, read from files (read again on SIGHUP and when a
//! file changes) or listed by the server itself (listed again on SIGHUP). A catalog that cannot
//! be read keeps what was read before.

use super::Decider;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, SystemTime};
use toolschema::catalog::Catalog;
use toolschema_gate::{GateConfig, Pins};
use toolschema_mcp::snapshot::{take, SnapshotOptions, Target};

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
        let mut deciders = BTreeMap::new();
        let mut seen = Vec::new();
        for source in &sources {
            if deciders.contains_key(&source.key()) {
                return Err(ReloadError {
                    file: source.origin.name(),
                    reason: match &source.server {
                        Some(server) => format!("server '{server}' has two catalogs"),
                        None => "two catalogs for no named server: name them SERVER=FILE".into(),
                    },
                });
            }
            seen.push(modified(source));
            deciders.insert(source.key(), Arc::new(read(source, &config).await?));
        }
        Ok(Catalogs {
            sources,
            config,
            deciders: RwLock::new(deciders),
            seen: Mutex::new(seen),
        })
    }

    /// The decider for `server` (`None`, or a name no catalog has when there is only one
    /// catalog: the only one). Fails, saying why, when the server cannot be placed.
    pub fn decider(&self, server: Option<&str>) -> Result<Arc<Decider>, String> {
        let deciders = self.deciders.read().unwrap_or_else(|e| e.into_inner());
        if let Some(found) = server.and_then(|name| deciders.get(name)) {
            return Ok(found.clone());
        }
        if deciders.len() == 1 {
            if let Some(only) = deciders.values().next() {
                return Ok(only.clone());
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
        for (index, source) in self.sources.iter().enumerate() {
            let stamp = modified(source);
            match read(source, &self.config).await {
                Ok(decider) => {
                    let mut deciders = self.deciders.write().unwrap_or_else(|e| e.into_inner());
                    deciders.insert(source.key(), Arc::new(decider));
                }
                Err(e) => errors.push(e),
            }
            let mut seen = self.seen.lock().unwrap_or_else(|e| e.into_inner());
            seen[index] = stamp;
        }
        errors
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
        tokio::spawn(async move {
            let mut tick = tokio::time::interval(every);
            tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                let errors = tokio::select! {
                    _ = hangups.recv() => Some(catalogs.reload().await),
                    _ = tick.tick() => catalogs.reload_changed().await,
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
}

/// Read one catalog into a decider.
async fn read(source: &CatalogSource, config: &GateConfig) -> Result<Decider, ReloadError> {
    let file = source.origin.name();
    let path = match &source.origin {
        Origin::File(path) => path,
        Origin::Server { target, headers } => {
            let options = SnapshotOptions {
                headers: headers.clone(),
                ..SnapshotOptions::default()
            };
            let snapshot = take(target, &options).await.map_err(|e| ReloadError {
                file: file.clone(),
                reason: e.to_string(),
            })?;
            let mut config = config.clone();
            config.pins = source.pins.clone();
            return Ok(Decider::new(&snapshot.tools, &config));
        }
    };
    let text = std::fs::read_to_string(path).map_err(|e| ReloadError {
        file: file.clone(),
        reason: e.to_string(),
    })?;
    let catalog = Catalog::from_json(&file, &text).map_err(|e| ReloadError {
        file: file.clone(),
        reason: e.to_string(),
    })?;
    let listing = catalog.to_tools_list();
    let tools = listing
        .get("tools")
        .and_then(serde_json::Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default();
    let mut config = config.clone();
    config.pins = source.pins.clone();
    Ok(Decider::new(tools, &config))
}

/// When the file was last modified (`None`: it cannot be read, or it is a server).
fn modified(source: &CatalogSource) -> Option<SystemTime> {
    let Origin::File(path) = &source.origin else {
        return None;
    };
    std::fs::metadata(path).and_then(|m| m.modified()).ok()
}
