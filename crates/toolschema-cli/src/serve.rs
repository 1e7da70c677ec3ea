//! `toolschema serve`: the proxy's checks as a service that gateways call on each request
//! (MCP interceptors, ToolHive validating webhooks), over HTTP or stdio.

use crate::input::InputError;
use crate::Outcome;
use std::sync::Arc;
use toolschema::diff::Lock;
use toolschema_mcp::snapshot::Target;
use toolschema_mcp::ServerCommand;
pub use toolschema_proxy::flags::ServeArgs;
use toolschema_proxy::health::Health;
use toolschema_proxy::metrics::Metrics;
use toolschema_proxy::metrics_listener::{MetricsListener, METRICS_PATH};
use toolschema_proxy::serve::{self, CatalogSource, Catalogs, Origin, ServeConfig, Service};
use toolschema_proxy::{AuditLog, PinMode, Pins};

/// Run `toolschema serve` until a signal (over HTTP) or the end of stdin.
pub fn run(args: ServeArgs) -> Result<Outcome, InputError> {
    let headers = args
        .headers
        .iter()
        .map(|header| crate::input::parse_header(header))
        .collect::<Result<Vec<_>, _>>()?;
    let mut sources: Vec<CatalogSource> = args
        .catalogs
        .iter()
        .map(|c| CatalogSource::parse(c))
        .collect();
    for upstream in &args.upstreams {
        let (server, url) = match upstream.split_once('=') {
            Some((server, url)) if !server.is_empty() && !server.contains('/') => {
                (Some(server.to_string()), url.to_string())
            }
            _ => (None, upstream.clone()),
        };
        sources.push(CatalogSource {
            server,
            origin: Origin::Server {
                target: Target::Url(url),
                headers: headers.clone(),
            },
            pins: None,
        });
    }
    if let Some((program, rest)) = args.command.split_first() {
        sources.push(CatalogSource {
            server: None,
            origin: Origin::Server {
                target: Target::Command(ServerCommand::new(program, rest)),
                headers: Vec::new(),
            },
            pins: None,
        });
    }
    if let Some(path) = &args.pin {
        pin(&mut sources, path, args.pin_mode)?;
    }
    let runtime = toolschema_mcp::runtime()
        .map_err(|e| InputError(format!("cannot start the async runtime: {e}")))?;
    let catalogs = runtime
        .block_on(Catalogs::load(sources, args.gate.gate_config()))
        .map_err(|e| InputError(e.to_string()))?;
    let catalogs = Arc::new(catalogs);
    let (file_path, file) = crate::proxy::read_proxy_file_at(args.config.as_deref())?.unzip();
    let file = file.unwrap_or_default();
    if let (Some(path), false) = (&file_path, file.servers.is_empty()) {
        // The file may be shared with `toolschema proxy`; its servers are not serve's to start.
        eprintln!(
            "toolschema serve: {}: the [proxy.servers] tables are left unused: they declare the servers of `toolschema proxy`; serve learns its tools from --catalog, --upstream or -- COMMAND",
            path.display()
        );
    }
    let mut config = ServeConfig {
        file,
        mode: args.mode,
        decision_timeout: args.decision_timeout,
        max_concurrent: args.max_concurrent as usize,
        ..ServeConfig::default()
    };
    if let Some(path) = &args.audit {
        let log = AuditLog::open(path, args.audit_arguments).map_err(|e| {
            InputError(format!(
                "{}: cannot open the audit log: {e}",
                path.display()
            ))
        })?;
        config.audit = Some(log);
    }
    if let Some(path) = &args.toolhive_secret_file {
        let secret = crate::input::read_file(path)?;
        let secret = secret.trim_end_matches(['\r', '\n']);
        if secret.is_empty() {
            return Err(InputError(format!(
                "{}: the ToolHive secret is empty",
                path.display()
            )));
        }
        config.webhook_secret = Some(secret.as_bytes().to_vec());
    }
    if let Some(address) = &args.metrics {
        let guard = args
            .guard
            .clone()
            .into_config(METRICS_PATH, Default::default());
        let metrics = Arc::new(Metrics::new());
        let served = metrics.clone();
        let bound = runtime
            .block_on(async move {
                let listener = MetricsListener::bind(address, &guard).await?;
                let bound = listener.local_addr();
                listener.spawn(served, Health::new());
                Ok::<_, String>(bound)
            })
            .map_err(InputError)?;
        crate::log::note(&format!(
            "toolschema serve: metrics at http://{bound}{METRICS_PATH}"
        ));
        config.metrics = Some(metrics);
    }
    let watch_interval = args.watch_interval;
    let service = Arc::new(Service::new(catalogs.clone(), config));
    let tools = catalogs.tools();
    let outcome = match &args.listen {
        Some(address) => runtime.block_on(async {
            catalogs
                .watch(watch_interval)
                .map_err(|e| InputError(format!("cannot handle signals: {e}")))?;
            let guard = args
                .guard
                .clone()
                .into_config(serve::http::MCP_PATH, Default::default());
            serve::http::serve(service, address, guard, |bound, guard| {
                crate::log::note(&format!(
                    "toolschema serve: {tools} tools; interceptors at http://{bound}{}",
                    serve::http::MCP_PATH
                ));
                crate::log::note(&format!("toolschema serve: {}", guard.describe()));
            })
            .await
            .map(|()| Outcome::Valid)
            .map_err(|e| InputError(e.to_string()))
        }),
        None => {
            crate::log::note(&format!(
                "toolschema serve: {tools} tools; interceptors on stdio"
            ));
            let max_line = args.guard.max_body_bytes;
            runtime.block_on(async {
                catalogs
                    .watch(watch_interval)
                    .map_err(|e| InputError(format!("cannot handle signals: {e}")))?;
                serve::stdio::serve(service, max_line)
                    .await
                    .map(|()| Outcome::Valid)
                    .map_err(|e| InputError(format!("stdio: {e}")))
            })
        }
    };
    runtime.shutdown_background();
    outcome
}

/// Give each catalog the pins of its server in the lock file at `path`: the key named SERVER,
/// or the lock's only key for a catalog that names none.
fn pin(
    sources: &mut [CatalogSource],
    path: &std::path::Path,
    mode: PinMode,
) -> Result<(), InputError> {
    let name = path.display().to_string();
    let text = crate::input::read_file(path)?;
    let lock = Lock::from_json(&text).map_err(|e| InputError(format!("{name}: {e}")))?;
    for source in sources {
        let key = match &source.server {
            Some(server) => server.clone(),
            None => {
                let keys: Vec<&str> = lock.keys().collect();
                match keys.as_slice() {
                    [only] => only.to_string(),
                    _ => {
                        return Err(InputError(format!(
                            "{name} pins several servers ({}): name each catalog SERVER=FILE after its key",
                            keys.join(", ")
                        )))
                    }
                }
            }
        };
        let server = lock
            .require_server(&key)
            .map_err(|e| InputError(format!("{name}: {e}")))?;
        source.pins = Some(Pins {
            server: Arc::new(server.clone()),
            mode,
            file: name.clone(),
        });
    }
    Ok(())
}
