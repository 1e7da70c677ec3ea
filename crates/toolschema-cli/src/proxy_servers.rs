//! `toolschema proxy --server NAME=WHERE ...` (or `[proxy.servers.NAME]` in `toolschema.toml`):
//! many servers behind one front. The proxy starts itself with `--serve-servers` as the server
//! command, so its front (stdio or Streamable HTTP) and gate work as they do for one server;
//! that child serves the merged servers.

use crate::input::InputError;
use crate::Outcome;
use std::path::PathBuf;
use toolschema_proxy::flags::ProxyArgs;
use toolschema_proxy::servers::{
    check_servers, parse_server, serve_servers, ServerSpec, ServersConfig,
};
use toolschema_proxy::ServerChecks;

/// The servers behind one front, from the `--server` flags and the settings file.
#[derive(Debug, Default)]
pub struct Declared {
    /// The servers: the flags' in their order, then the file's by name.
    pub servers: Vec<ServerSpec>,
    /// The settings file, when it declares servers: the child reads them there.
    pub file: Option<PathBuf>,
}

impl Declared {
    /// The servers' names: the only values of the metrics' `server` label.
    pub fn names(&self) -> Vec<String> {
        self.servers.iter().map(|s| s.name.clone()).collect()
    }

    /// The checks servers set for their own tools, by name, for the front's gate.
    pub fn checks(&self) -> std::collections::BTreeMap<String, ServerChecks> {
        self.servers
            .iter()
            .filter(|s| s.checks != ServerChecks::default())
            .map(|s| (s.name.clone(), s.checks))
            .collect()
    }
}

/// The servers declared by the `--server` flags and the `[proxy.servers]` tables of the
/// settings file (read where the proxy reads it for its other tables, and where no server is
/// named on the command line). A name declared twice is refused, naming both places; so are
/// servers in the file beside a `-- COMMAND` or `--upstream`, which front one server.
pub fn declared(args: &ProxyArgs) -> Result<Declared, InputError> {
    let mut servers: Vec<(ServerSpec, String)> = args
        .servers
        .iter()
        .map(|value| {
            parse_server(value)
                .map(|spec| (spec, format!("--server {value}")))
                .map_err(InputError)
        })
        .collect::<Result<_, _>>()?;
    // The stdio proxy of one command reads the file only when named (as before servers could
    // be declared there).
    let reads_file = args.config.is_some()
        || args.listen.is_some()
        || args.upstream.is_some()
        || !args.servers.is_empty()
        || args.command.is_empty();
    let mut file = None;
    if reads_file {
        if let Some((path, proxy)) = crate::proxy::read_proxy_file_at(args.config.as_deref())? {
            let shown = path.display().to_string();
            if !proxy.servers.is_empty() {
                if !args.command.is_empty() || args.upstream.is_some() {
                    return Err(InputError(format!(
                        "{shown}: [proxy.servers] declares servers behind one front, and -- \
                         COMMAND or --upstream names one server: use one or the other"
                    )));
                }
                if args.pin.is_some() {
                    return Err(InputError(format!(
                        "--pin cannot be used with servers behind one front ([proxy.servers] \
                         in {shown})"
                    )));
                }
                file = Some(std::fs::canonicalize(&path).unwrap_or(path));
            }
            for (name, entry) in &proxy.servers {
                let spec = entry
                    .spec(name)
                    .map_err(|why| InputError(format!("{shown}: [proxy.servers.{name}]: {why}")))?;
                servers.push((spec, format!("[proxy.servers.{name}] in {shown}")));
            }
        }
    }
    for (at, (spec, place)) in servers.iter().enumerate() {
        if let Some((_, first)) = servers[..at].iter().find(|(s, _)| s.name == spec.name) {
            return Err(InputError(format!(
                "server `{}` is declared twice: by {first} and by {place}",
                spec.name
            )));
        }
    }
    let servers: Vec<ServerSpec> = servers.into_iter().map(|(spec, _)| spec).collect();
    check_servers(&servers).map_err(|e| InputError(e.to_string()))?;
    Ok(Declared { servers, file })
}

/// The command the front starts: this program, serving the declared servers on stdio.
pub fn front_command(args: &ProxyArgs, declared: &Declared) -> Result<Vec<String>, InputError> {
    let program = std::env::current_exe()
        .map_err(|e| InputError(format!("cannot find this program to start it: {e}")))?;
    let mut command = vec![
        program.display().to_string(),
        "proxy".to_string(),
        "--serve-servers".to_string(),
        "--request-timeout".to_string(),
        args.request_timeout.as_secs_f64().to_string(),
        "--max-message-bytes".to_string(),
        args.max_message_bytes.to_string(),
    ];
    for server in &args.servers {
        command.push(format!("--server={server}"));
    }
    if let Some(file) = &declared.file {
        command.push(format!("--config={}", file.display()));
    }
    Ok(command)
}

/// Serve the declared servers as one MCP server on this process's stdio.
pub fn serve(args: &ProxyArgs) -> Result<Outcome, InputError> {
    let config = ServersConfig {
        servers: declared(args)?.servers,
        timeout: args.request_timeout,
        max_message_bytes: args.max_message_bytes,
    };
    if config.servers.is_empty() {
        return Err(InputError(
            "--serve-servers: no server is declared (--server or [proxy.servers])".into(),
        ));
    }
    let runtime = toolschema_mcp::runtime()
        .map_err(|e| InputError(format!("cannot start the async runtime: {e}")))?;
    let served = runtime.block_on(serve_servers(config));
    // Reading stdin blocks a thread; do not wait for it.
    runtime.shutdown_background();
    served
        .map(|()| Outcome::Exit(0))
        .map_err(|e| InputError(e.to_string()))
}
