//! `toolschema proxy`: a validating proxy in front of any MCP server, over stdio or Streamable
//! HTTP on either side.

use crate::input::{parse_header, InputError};
use crate::Outcome;
use std::path::Path;
use std::sync::Arc;
use toolschema::diff::{command_key, url_key, Lock};
use toolschema_http::flags::GuardArgs;
use toolschema_mcp::Runtime;
use toolschema_mcp::ServerCommand;
pub use toolschema_proxy::flags::ProxyArgs;
use toolschema_proxy::health::Health;
use toolschema_proxy::http::{self as http_proxy, HttpProxyConfig, ProxyFile, ServerSide};
use toolschema_proxy::metrics::Metrics;
use toolschema_proxy::metrics_listener::{MetricsListener, METRICS_PATH};
use toolschema_proxy::{self as proxy, GateConfig, Pins, ProxyConfig};

/// Run `toolschema proxy` until the client or the server ends it (or a signal, with --listen).
pub fn run(mut args: ProxyArgs) -> Result<Outcome, InputError> {
    if args.serve_servers {
        return crate::proxy_servers::serve(&args);
    }
    let declared = crate::proxy_servers::declared(&args)?;
    if !declared.servers.is_empty() {
        args.command = crate::proxy_servers::front_command(&args, &declared)?;
    }
    // With --metrics on another address than loopback, the access flags protect /metrics.
    if args.listen.is_none() && args.metrics.is_none() {
        refuse_guard_flags(&args.guard)?;
    }
    let mut gate = args.gate_config();
    gate.servers = declared.names();
    gate.server_checks = declared.checks();
    gate.pins = pins(&args)?;
    if args.listen.is_none() && args.upstream.is_none() {
        return run_stdio(args, gate);
    }
    let file = read_proxy_file(args.config.as_deref())?;
    let server =
        match (&args.upstream, args.command.split_first()) {
            (Some(url), _) => {
                let mut headers = http::HeaderMap::new();
                for header in &args.headers {
                    let (name, value) = parse_header(header)?;
                    let name = http::HeaderName::from_bytes(name.as_bytes())
                        .map_err(|e| InputError(format!("--header '{header}': {e}")))?;
                    let value = http::HeaderValue::from_str(&value)
                        .map_err(|e| InputError(format!("--header '{header}': {e}")))?;
                    headers.append(name, value);
                }
                ServerSide::Upstream {
                    url: url.clone(),
                    headers,
                }
            }
            (None, Some((program, rest))) => ServerSide::Command(ServerCommand::new(program, rest)),
            (None, None) => return Err(InputError(
                "say which server: -- COMMAND ARGS..., --upstream URL, --server NAME=WHERE, or \
                 [proxy.servers.NAME] in toolschema.toml"
                    .into(),
            )),
        };
    gate.overrides = file.overrides.clone();
    let mut config = HttpProxyConfig::new(server);
    config.gate = gate;
    config.audit = args.audit.clone();
    config.audit_arguments = args.audit_arguments;
    config.max_message_bytes = args.max_message_bytes;
    config.request_timeout = args.request_timeout;
    config.max_sessions = args.max_sessions as usize;
    config.trace = args.trace_config();
    config.servers = declared.servers;
    let tool_scopes = file.tool_scopes.clone();
    config.file = file;
    let runtime = toolschema_mcp::runtime()
        .map_err(|e| InputError(format!("cannot start the async runtime: {e}")))?;
    if let Some((metrics, health)) = start_metrics(&runtime, &args)? {
        config.metrics = Some(metrics);
        config.health = Some(health);
    }
    let outcome = match args.listen {
        Some(address) => {
            let guard = args.guard.into_config("/mcp", tool_scopes);
            let served = runtime.block_on(http_proxy::serve(
                config,
                &address,
                guard,
                |bound, guard| {
                    crate::log::note(&format!(
                        "toolschema proxy: serving MCP at http://{bound}/mcp"
                    ));
                    crate::log::note(&format!("toolschema proxy: {}", guard.describe()));
                },
            ));
            served
                .map(|()| Outcome::Valid)
                .map_err(|e| InputError(e.to_string()))
        }
        None => runtime
            .block_on(http_proxy::run_stdio_upstream(config))
            .map(|exit| Outcome::Exit(u8::try_from(exit.code()).unwrap_or(1)))
            .map_err(|e| InputError(e.to_string())),
    };
    // Reading stdin blocks a thread; do not wait for it.
    runtime.shutdown_background();
    outcome
}

/// The proxy over stdio on both sides.
fn run_stdio(args: ProxyArgs, gate: GateConfig) -> Result<Outcome, InputError> {
    let Some((program, rest)) = args.command.split_first() else {
        return Err(InputError(
            "say which server to start: -- COMMAND ARGS..., --server NAME=WHERE, or \
             [proxy.servers.NAME] in toolschema.toml"
                .into(),
        ));
    };
    let mut config = ProxyConfig::new(ServerCommand::new(program, rest));
    config.gate = gate;
    let runtime = toolschema_mcp::runtime()
        .map_err(|e| InputError(format!("cannot start the async runtime: {e}")))?;
    if let Some((metrics, health)) = start_metrics(&runtime, &args)? {
        config.metrics = Some(metrics);
        config.health = Some(health);
    }
    if args.config.is_some() {
        config.gate.overrides = read_proxy_file(args.config.as_deref())?.overrides;
    }
    config.trace = args.trace_config();
    config.audit = args.audit;
    config.audit_arguments = args.audit_arguments;
    config.max_message_bytes = args.max_message_bytes;
    let result = runtime.block_on(proxy::run_stdio(config));
    // Reading stdin blocks a worker thread; do not wait for it.
    runtime.shutdown_background();
    let exit = result.map_err(|e| InputError(e.to_string()))?;
    Ok(Outcome::Exit(u8::try_from(exit.code()).unwrap_or(1)))
}

/// What the proxy counts its calls in, and says its readiness to.
type Observed = (Arc<Metrics>, Arc<Health>);

/// With `--metrics ADDR`: bind its listener and serve the metrics and the probes there.
fn start_metrics(runtime: &Runtime, args: &ProxyArgs) -> Result<Option<Observed>, InputError> {
    let Some(address) = &args.metrics else {
        return Ok(None);
    };
    let guard = args
        .guard
        .clone()
        .into_config(METRICS_PATH, Default::default());
    let metrics = Arc::new(Metrics::new());
    let health = Health::new();
    let (served_metrics, served_health) = (metrics.clone(), health.clone());
    let bound = runtime
        .block_on(async move {
            let listener = MetricsListener::bind(address, &guard).await?;
            let bound = listener.local_addr();
            listener.spawn(served_metrics, served_health);
            Ok::<_, String>(bound)
        })
        .map_err(InputError)?;
    crate::log::note(&format!(
        "toolschema proxy: metrics at http://{bound}{METRICS_PATH}"
    ));
    Ok(Some((metrics, health)))
}

/// The pins of the server the proxy starts or reaches, from `--pin`.
fn pins(args: &ProxyArgs) -> Result<Option<Pins>, InputError> {
    let Some(path) = &args.pin else {
        return Ok(None);
    };
    let key = match (&args.upstream, args.command.split_first()) {
        (Some(url), _) => url_key(url),
        (None, Some((program, rest))) => command_key(program, rest),
        (None, None) => return Ok(None),
    };
    let name = path.display().to_string();
    let text = crate::input::read_file(path)?;
    let lock = Lock::from_json(&text).map_err(|e| InputError(format!("{name}: {e}")))?;
    let server = lock
        .require_server(&key)
        .map_err(|e| InputError(format!("{name}: {e}")))?;
    Ok(Some(Pins {
        server: std::sync::Arc::new(server.clone()),
        mode: args.pin_mode,
        file: name,
    }))
}

/// The access flags serve only an HTTP endpoint: given without --listen they would protect
/// nothing, so they are refused rather than ignored.
fn refuse_guard_flags(guard: &GuardArgs) -> Result<(), InputError> {
    let given = [
        ("--auth-token-file", guard.auth_token_file.is_some()),
        ("--oauth-issuer", guard.oauth_issuer.is_some()),
        ("--no-auth", guard.no_auth),
        ("--resource-url", guard.resource_url.is_some()),
        ("--allowed-host", !guard.allowed_hosts.is_empty()),
        ("--allowed-origin", !guard.allowed_origins.is_empty()),
        ("--access-log", guard.access_log.is_some()),
    ];
    match given.iter().find(|(_, set)| *set) {
        Some((flag, _)) => Err(InputError(format!(
            "{flag} protects the HTTP endpoint: use it with --listen"
        ))),
        None => Ok(()),
    }
}

/// The `[proxy]` table of the settings file named, or of the nearest `toolschema.toml`.
pub(crate) fn read_proxy_file(path: Option<&Path>) -> Result<ProxyFile, InputError> {
    Ok(read_proxy_file_at(path)?
        .map(|(_, proxy)| proxy)
        .unwrap_or_default())
}

/// [`read_proxy_file`], with the file's path; `None` when no file is named and none is found.
pub(crate) fn read_proxy_file_at(
    path: Option<&Path>,
) -> Result<Option<(std::path::PathBuf, ProxyFile)>, InputError> {
    #[derive(serde::Deserialize)]
    struct Settings {
        #[serde(default)]
        proxy: ProxyFile,
    }
    let path = match path {
        Some(path) => path.to_path_buf(),
        None => match crate::lint::config::nearest_file() {
            Some(path) => path,
            None => return Ok(None),
        },
    };
    let name = path.display().to_string();
    let text = crate::input::read_file(&path)?;
    let settings: Settings = toml::from_str(&text)
        .map_err(|e| InputError(format!("{name}: {}", e.to_string().trim_end())))?;
    Ok(Some((path, settings.proxy)))
}
