//! The `mcp` subcommand: its definition and what each of its subcommands does.

use crate::clients::{self, Client, ServerEntry};
use crate::config::Config;
use crate::http;
use crate::server::{self, ServeError, ToolServer};
use crate::tools::{ToolSet, MCP_COMMAND};
use clap::{value_parser, Arg, ArgAction, ArgMatches, Args, Command, FromArgMatches};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;
use toolschema_http::flags::GuardArgs;

/// The `mcp` subcommand to add to `app`.
///
/// `mcp start` serves MCP over stdio, `mcp stream` over Streamable HTTP (behind the guard of
/// toolschema-http: authentication, Host and Origin checks, limits), `mcp tools` writes the
/// tool list, and `mcp claude|vscode|cursor enable|disable|list` edits the client's configuration.
pub fn mcp_command(app: &Command, config: &Config) -> Command {
    let server_name = config
        .get_prefix()
        .filter(|p| !p.is_empty())
        .unwrap_or(app.get_name())
        .to_string();
    let timeout = Arg::new("timeout")
        .long("timeout")
        .value_name("SECONDS")
        .value_parser(value_parser!(u64).range(1..))
        .help(format!(
            "Kill a command that runs longer than this [default: {}]",
            config.timeout.as_secs()
        ));
    let config_file = Arg::new("config")
        .long("config")
        .value_name("FILE")
        .value_parser(value_parser!(PathBuf))
        .help("The configuration file to edit instead of the client's usual one");
    let name = Arg::new("server-name")
        .long("server-name")
        .value_name("NAME")
        .default_value(server_name)
        .help("The name of the server entry");
    let client = |client: Client, title: &str| {
        Command::new(client.name())
            .about(format!(
                "Add or remove this MCP server in {title}'s configuration"
            ))
            .subcommand_required(true)
            .subcommand(
                Command::new("enable")
                    .about(format!(
                        "Add this server (running `{} mcp start`) to {title}",
                        app.get_name()
                    ))
                    .arg(name.clone())
                    .arg(
                        Arg::new("env")
                            .long("env")
                            .value_name("KEY=VALUE")
                            .action(ArgAction::Append)
                            .value_parser(parse_env)
                            .help("An environment variable for the server (repeatable)"),
                    )
                    .arg(config_file.clone()),
            )
            .subcommand(
                Command::new("disable")
                    .about(format!("Remove this server from {title}"))
                    .arg(name.clone())
                    .arg(config_file.clone()),
            )
            .subcommand(
                Command::new("list")
                    .about(format!("List the MCP servers configured for {title}"))
                    .arg(config_file.clone()),
            )
    };
    Command::new(MCP_COMMAND)
        .about("Serve this program's commands as MCP tools")
        .subcommand_required(true)
        .subcommand(
            Command::new("start")
                .about("Serve MCP over standard input and output")
                .arg(timeout.clone()),
        )
        .subcommand(
            GuardArgs::augment_args(Command::new("stream"))
                .about("Serve MCP over Streamable HTTP at http://HOST:PORT/mcp until SIGINT or SIGTERM")
                .long_about(
                    "Serve MCP over Streamable HTTP at http://HOST:PORT/mcp until SIGINT or SIGTERM.\n\n\
                     On an address other than loopback, clients must authenticate (--auth-token-file, \
                     or --oauth-issuer and --oauth-audience) unless --no-auth says otherwise. \
                     SIGHUP reads the token file and the key set file again.",
                )
                .arg(
                    Arg::new("host")
                        .long("host")
                        .default_value("127.0.0.1")
                        .help("The address to listen on"),
                )
                .arg(
                    Arg::new("port")
                        .long("port")
                        .default_value("8080")
                        .value_parser(value_parser!(u16))
                        .help("The port to listen on (0 picks a free one)"),
                )
                .arg(timeout),
        )
        .subcommand(
            Command::new("tools")
                .about("Write the tool list, exactly as tools/list returns it")
                .arg(
                    Arg::new("output")
                        .long("output")
                        .short('o')
                        .value_name("FILE")
                        .default_value("mcp-tools.json")
                        .value_parser(value_parser!(PathBuf))
                        .help("Where to write it (- for standard output)"),
                ),
        )
        .subcommand(client(Client::Claude, "Claude Desktop"))
        .subcommand(client(Client::VsCode, "VS Code"))
        .subcommand(client(Client::Cursor, "Cursor"))
}

fn parse_env(text: &str) -> Result<(String, String), String> {
    match text.split_once('=') {
        Some((key, value)) if !key.is_empty() => Ok((key.to_string(), value.to_string())),
        _ => Err("expected KEY=VALUE".to_string()),
    }
}

/// `app` with the `mcp` subcommand added.
pub fn with_mcp(app: Command, config: &Config) -> Command {
    let mcp = mcp_command(&app, config);
    app.subcommand(mcp)
}

/// Run the `mcp` subcommand if `matches` (the whole application's) chose it; `None` otherwise,
/// for the application to handle its own commands.
pub fn dispatch(app: &Command, matches: &ArgMatches, config: &Config) -> Option<ExitCode> {
    match matches.subcommand() {
        Some((MCP_COMMAND, mcp)) => Some(run(app, mcp, config)),
        _ => None,
    }
}

/// Run the `mcp` subcommand, given its own matches. Errors are printed to standard error; the
/// exit code is 0 on success and 1 on failure.
pub fn run(app: &Command, matches: &ArgMatches, config: &Config) -> ExitCode {
    match run_inner(app, matches, config) {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("error: {message}");
            ExitCode::FAILURE
        }
    }
}

fn run_inner(app: &Command, matches: &ArgMatches, config: &Config) -> Result<(), String> {
    let Some((name, sub)) = matches.subcommand() else {
        return Err("choose an mcp subcommand (see --help)".to_string());
    };
    let mut config = config.clone();
    if let Some(seconds) = sub.try_get_one::<u64>("timeout").ok().flatten() {
        config = config.timeout(Duration::from_secs(*seconds));
    }
    match name {
        "start" => {
            let server = tool_server(app, &config)?;
            runtime()?
                .block_on(server::serve_stdio(server))
                .map_err(|e| e.to_string())
        }
        "stream" => {
            let server = tool_server(app, &config)?;
            let host = sub
                .get_one::<String>("host")
                .map_or("127.0.0.1", String::as_str);
            let port = sub.get_one::<u16>("port").copied().unwrap_or(8080);
            let guard = GuardArgs::from_arg_matches(sub)
                .map_err(|e| e.to_string())?
                .into_config(http::ENDPOINT, server.tools().tool_scopes());
            log_to_stderr();
            runtime()?
                .block_on(http::serve_http(
                    server,
                    host,
                    port,
                    guard,
                    |address, guard| {
                        eprintln!("serving MCP at http://{address}{}", http::ENDPOINT);
                        eprintln!("{}", guard.describe());
                    },
                ))
                .map_err(|e| e.to_string())
        }
        "tools" => {
            let tools = ToolSet::new(app, &config).map_err(|e| e.to_string())?;
            let wire = server::wire_tools(&tools).map_err(|e| e.to_string())?;
            let list = serde_json::json!({ "tools": wire });
            let mut text = serde_json::to_string_pretty(&list).map_err(|e| e.to_string())?;
            text.push('\n');
            let output = sub
                .get_one::<PathBuf>("output")
                .cloned()
                .unwrap_or_else(|| PathBuf::from("mcp-tools.json"));
            if output.as_os_str() == "-" {
                print!("{text}");
            } else {
                std::fs::write(&output, text)
                    .map_err(|e| format!("{}: cannot write: {e}", output.display()))?;
                eprintln!(
                    "wrote {} to {}",
                    toolschema::text::count(tools.tools().len(), "tool", "tools"),
                    output.display()
                );
            }
            Ok(())
        }
        other => {
            let client = Client::from_name(other)
                .ok_or_else(|| format!("unknown mcp subcommand '{other}'"))?;
            client_command(app, client, sub)
        }
    }
}

fn client_command(app: &Command, client: Client, matches: &ArgMatches) -> Result<(), String> {
    let Some((action, sub)) = matches.subcommand() else {
        return Err(format!(
            "choose enable, disable or list for {}",
            client.name()
        ));
    };
    let path = match sub.get_one::<PathBuf>("config") {
        Some(path) => path.clone(),
        None => client.default_path().map_err(|e| e.to_string())?,
    };
    let server_name = sub
        .try_get_one::<String>("server-name")
        .ok()
        .flatten()
        .cloned()
        .unwrap_or_else(|| app.get_name().to_string());
    let message = match action {
        "enable" => {
            let exe = std::env::current_exe()
                .map_err(|e| format!("cannot find the current executable: {e}"))?;
            let command = exe
                .to_str()
                .ok_or_else(|| format!("the executable's path is not UTF-8: {}", exe.display()))?
                .to_string();
            let env = sub
                .get_many::<(String, String)>("env")
                .map(|pairs| pairs.cloned().collect())
                .unwrap_or_default();
            let server = ServerEntry {
                command,
                args: vec![MCP_COMMAND.to_string(), "start".to_string()],
                env,
            };
            clients::enable(client, &path, &server_name, &server)
        }
        "disable" => clients::disable(client, &path, &server_name),
        _ => {
            let text = clients::list(client, &path).map_err(|e| e.to_string())?;
            print!("{text}");
            return Ok(());
        }
    }
    .map_err(|e| e.to_string())?;
    println!("{message}");
    Ok(())
}

fn tool_server(app: &Command, config: &Config) -> Result<ToolServer, String> {
    let tools = ToolSet::new(app, config).map_err(|e| e.to_string())?;
    let program = std::env::current_exe().map_err(|e| ServeError::CurrentExe(e).to_string())?;
    let name = config
        .get_prefix()
        .filter(|p| !p.is_empty())
        .unwrap_or(app.get_name());
    let version = app.get_version().unwrap_or("0.0.0");
    ToolServer::new(tools, name, version, program).map_err(|e| e.to_string())
}

/// Send the server's log (each call with its client's name, each refusal and why) to standard
/// error, unless the application already chose where its `tracing` events go.
fn log_to_stderr() {
    use tracing_subscriber::filter::{LevelFilter, Targets};
    use tracing_subscriber::layer::SubscriberExt;
    let filter = Targets::new()
        .with_default(LevelFilter::WARN)
        .with_target("toolschema_http", LevelFilter::INFO)
        .with_target("toolschema_clap", LevelFilter::INFO);
    let subscriber = tracing_subscriber::registry()
        .with(tracing_subscriber::fmt::layer().with_writer(std::io::stderr))
        .with(filter);
    // Fails only when a subscriber is set already: the application's choice stands.
    let _ = tracing::subscriber::set_global_default(subscriber);
}

fn runtime() -> Result<tokio::runtime::Runtime, String> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the async runtime: {e}"))
}
