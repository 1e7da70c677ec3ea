//! `toolschema proxy --server NAME=WHERE ...`: many servers behind one front. The proxy starts
//! itself with `--serve-servers` as the server command, so its front (stdio or Streamable
//! HTTP) and gate work as they do for one server; that child serves the merged servers.

use crate::input::InputError;
use crate::Outcome;
use toolschema_proxy::flags::ProxyArgs;
use toolschema_proxy::servers::{
    check_servers, parse_server, serve_servers, ServerSpec, ServersConfig,
};

/// The command the front starts: this program, serving the `--server` list on stdio.
pub fn front_command(args: &ProxyArgs) -> Result<Vec<String>, InputError> {
    // Refused here, before a session starts one.
    servers(args)?;
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
    Ok(command)
}

/// Serve the `--server` list as one MCP server on this process's stdio.
pub fn serve(args: &ProxyArgs) -> Result<Outcome, InputError> {
    let config = ServersConfig {
        servers: servers(args)?,
        timeout: args.request_timeout,
        max_message_bytes: args.max_message_bytes,
    };
    let runtime = toolschema_mcp::runtime()
        .map_err(|e| InputError(format!("cannot start the async runtime: {e}")))?;
    let served = runtime.block_on(serve_servers(config));
    // Reading stdin blocks a thread; do not wait for it.
    runtime.shutdown_background();
    served
        .map(|()| Outcome::Exit(0))
        .map_err(|e| InputError(e.to_string()))
}

fn servers(args: &ProxyArgs) -> Result<Vec<ServerSpec>, InputError> {
    let servers = args
        .servers
        .iter()
        .map(|value| parse_server(value).map_err(InputError))
        .collect::<Result<Vec<_>, _>>()?;
    check_servers(&servers).map_err(|e| InputError(e.to_string()))?;
    Ok(servers)
}
