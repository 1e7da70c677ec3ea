//! `toolschema proxy`: a validating proxy in front of any MCP server, over stdio or Streamable
//! HTTP on either side.

use crate::input::{parse_header, parse_seconds, parse_size, InputError};
use crate::output::say;
use crate::Outcome;
use std::path::{Path, PathBuf};
use std::time::Duration;
use toolschema::diff::{command_key, url_key, Lock};
use toolschema_http::flags::GuardArgs;
use toolschema_mcp::proxy::http::{self as http_proxy, HttpProxyConfig, ProxyFile, ServerSide};
use toolschema_mcp::proxy::{
    self, GateConfig, Glob, InputCheck, OnUnchecked, OutputCheck, PinMode, Pins, ProxyConfig,
    ToolPolicy, UnknownArguments, Unlisted,
};
use toolschema_mcp::ServerCommand;

/// Arguments of `toolschema proxy`.
#[derive(Debug, clap::Args)]
#[command(after_help = "\
Start the proxy where a client would start the server (stdio on both sides):
  toolschema proxy -- npx -y @modelcontextprotocol/server-filesystem .
  toolschema proxy --deny 'write_*' --audit calls.jsonl -- npx -y @modelcontextprotocol/server-filesystem .
Serve it over Streamable HTTP, one server process per session, or in front of a remote server:
  toolschema proxy --listen 127.0.0.1:8080 -- python -m mcp_server_time
  toolschema proxy --listen 0.0.0.0:8080 --auth-token-file examples/tokens --upstream http://127.0.0.1:3001/mcp
Or reach a remote server from a client that only speaks stdio:
  toolschema proxy --upstream http://127.0.0.1:3001/mcp --header 'Authorization: Bearer TOKEN'

Every message passes through unchanged in both directions. tools/call arguments that break the
tool's inputSchema get an isError result with one message per line, and never reach the server;
so does a call the proxy cannot check (it could not learn the tool's schema), unless
--on-unchecked forward.
Exit status: 0 when the client closed its input (or, with --listen, on SIGINT or SIGTERM), the
server's exit code when it exited on its own (1 if that was 0), 2 when the server could not be
started or the settings cannot be used.")]
pub struct ProxyArgs {
    /// The command that starts the server over stdio, after `--` (or --upstream).
    #[arg(
        last = true,
        value_name = "COMMAND",
        required_unless_present = "upstream"
    )]
    command: Vec<String>,

    /// Serve MCP over Streamable HTTP at http://ADDR/mcp (like 127.0.0.1:8080) instead of
    /// stdio: one server process per session (or the --upstream), behind the access checks
    /// below.
    #[arg(long, value_name = "ADDR")]
    listen: Option<String>,

    /// The server is remote: its Streamable HTTP endpoint (http:// or https://), instead of a
    /// command.
    #[arg(long, value_name = "URL", conflicts_with = "command")]
    upstream: Option<String>,

    /// An HTTP header for every request to the --upstream, `Name: value` (repeatable).
    #[arg(long = "header", value_name = "NAME: VALUE", requires = "upstream")]
    headers: Vec<String>,

    /// With --listen: the most sessions open at once (each has a server process with a
    /// command); a new one past it is refused with 503.
    #[arg(long, value_name = "N", default_value_t = 100, value_parser = clap::value_parser!(u32).range(1..))]
    max_sessions: u32,

    /// The longest a request may take over HTTP, in seconds: its body must arrive, and its
    /// answer come, within it (the request is then cancelled at the server).
    #[arg(long, value_name = "SECONDS", default_value = "300", value_parser = parse_seconds)]
    request_timeout: Duration,

    /// Check every listed tool against its pin in this lock file (`toolschema pin`), under the
    /// key of the server command or --upstream URL: a tool that drifted from its pin, or is not
    /// pinned, is reported once per listing (stderr and the audit log)
    #[arg(long, value_name = "FILE")]
    pin: Option<PathBuf>,

    /// With --pin: enforce (leave such tools out of tools/list and refuse their calls with a
    /// tool error saying the definition changed) or warn (report only)
    #[arg(long, value_enum, default_value_t = PinModeArg::Enforce, requires = "pin")]
    pin_mode: PinModeArg,

    /// The settings file with a [proxy] table (token policies, overrides, tool scopes)
    /// [default: the nearest toolschema.toml, from the current directory up].
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,

    /// Check tools/call arguments against the tool's inputSchema: off, warn (report on stderr and
    /// in the audit log, forward anyway: a gradual roll-out) or enforce (answer the call with an
    /// isError result; it never reaches the server).
    #[arg(long, value_enum, default_value_t = CheckArg::Enforce)]
    input_check: CheckArg,

    /// Top-level arguments the tool's schema does not declare where the schema accepts them (no
    /// additionalProperties): allow (as the schema says), warn, or reject (with a did-you-mean).
    #[arg(long, value_enum, default_value_t = UnknownArgumentsArg::Allow)]
    unknown_arguments: UnknownArgumentsArg,

    /// A call the proxy cannot check, because it could not learn the tool's schema (the
    /// listing failed, the schema does not compile, it refers to a $ref that is never fetched):
    /// refuse (an isError result that says why) or forward (with a warning for each call).
    #[arg(long, value_enum, default_value_t = OnUncheckedArg::Refuse)]
    on_unchecked: OnUncheckedArg,

    /// Check structuredContent against the tool's outputSchema: off, warn (report on stderr and
    /// in the audit log) or enforce (replace the result with an isError result).
    #[arg(long, value_enum, default_value_t = CheckArg::Warn)]
    output_check: CheckArg,

    /// How long the proxy waits for the server to answer a tools/list it sends itself, in
    /// seconds; the calls waiting for it are refused after that.
    #[arg(long, value_name = "SECONDS", default_value = "30", value_parser = parse_seconds)]
    listing_timeout: Duration,

    /// Let only tools whose name matches GLOB through (`*` and `?`; repeatable).
    #[arg(long = "allow", value_name = "GLOB")]
    allow: Vec<String>,

    /// Hide tools whose name matches GLOB from tools/list and refuse their calls (repeatable;
    /// wins over --allow).
    #[arg(long = "deny", value_name = "GLOB")]
    deny: Vec<String>,

    /// A call to a tool the server has not listed (the proxy lists the tools itself first, in
    /// case a listing it saw was short): refuse (an error with a did-you-mean; it never reaches
    /// the server) or forward (unchecked, with a warning: for servers with tools they do not
    /// list).
    #[arg(long, value_enum, default_value_t = UnlistedArg::Refuse)]
    unlisted: UnlistedArg,

    /// The same as --unlisted refuse, now the default (kept for existing command lines).
    #[arg(long, conflicts_with = "unlisted")]
    deny_unlisted: bool,

    /// Append one JSON line per tools/call to FILE: time, tool, verdict, messages, duration,
    /// isError, output check.
    #[arg(long, value_name = "FILE")]
    audit: Option<PathBuf>,

    /// Also write each call's arguments to the audit log.
    #[arg(long, requires = "audit")]
    audit_arguments: bool,

    /// The largest message accepted from either side: bytes, or with KiB, MiB or GiB. Larger
    /// messages are refused without being buffered.
    #[arg(long, value_name = "SIZE", default_value = "16MiB", value_parser = parse_size)]
    max_message_bytes: usize,

    #[command(flatten)]
    guard: GuardArgs,
}

impl ProxyArgs {
    /// Whether the proxy serves over HTTP (and so logs the guard's events).
    pub fn listens(&self) -> bool {
        self.listen.is_some()
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum CheckArg {
    Off,
    Warn,
    Enforce,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum UnknownArgumentsArg {
    Allow,
    Warn,
    Reject,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum PinModeArg {
    Warn,
    Enforce,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum UnlistedArg {
    Refuse,
    Forward,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum OnUncheckedArg {
    Refuse,
    Forward,
}

/// Run `toolschema proxy` until the client or the server ends it (or a signal, with --listen).
pub fn run(args: ProxyArgs) -> Result<Outcome, InputError> {
    if args.listen.is_none() {
        refuse_guard_flags(&args.guard)?;
    }
    let mut gate = gate_config(&args);
    gate.pins = pins(&args)?;
    if args.listen.is_none() && args.upstream.is_none() {
        return run_stdio(args, gate);
    }
    let file = read_proxy_file(args.config.as_deref())?;
    let server = match (&args.upstream, args.command.split_first()) {
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
        (None, None) => {
            return Err(InputError(
                "say which server: -- COMMAND ARGS..., or --upstream URL".into(),
            ))
        }
    };
    gate.overrides = file.overrides.clone();
    let mut config = HttpProxyConfig::new(server);
    config.gate = gate;
    config.audit = args.audit.clone();
    config.audit_arguments = args.audit_arguments;
    config.max_message_bytes = args.max_message_bytes;
    config.request_timeout = args.request_timeout;
    config.max_sessions = args.max_sessions as usize;
    let tool_scopes = file.tool_scopes.clone();
    config.file = file;
    let runtime = toolschema_mcp::runtime()
        .map_err(|e| InputError(format!("cannot start the async runtime: {e}")))?;
    let outcome = match args.listen {
        Some(address) => {
            let guard = args.guard.into_config("/mcp", tool_scopes);
            let served = runtime.block_on(http_proxy::serve(
                config,
                &address,
                guard,
                |bound, guard| {
                    say!("toolschema proxy: serving MCP at http://{bound}/mcp");
                    say!("toolschema proxy: {}", guard.describe());
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
            "say which server to start: -- COMMAND ARGS...".into(),
        ));
    };
    let mut config = ProxyConfig::new(ServerCommand::new(program, rest));
    config.gate = gate;
    if args.config.is_some() {
        config.gate.overrides = read_proxy_file(args.config.as_deref())?.overrides;
    }
    config.audit = args.audit;
    config.audit_arguments = args.audit_arguments;
    config.max_message_bytes = args.max_message_bytes;
    let runtime = toolschema_mcp::runtime()
        .map_err(|e| InputError(format!("cannot start the async runtime: {e}")))?;
    let result = runtime.block_on(proxy::run_stdio(config));
    // Reading stdin blocks a worker thread; do not wait for it.
    runtime.shutdown_background();
    let exit = result.map_err(|e| InputError(e.to_string()))?;
    Ok(Outcome::Exit(u8::try_from(exit.code()).unwrap_or(1)))
}

/// The gate's settings from the flags.
fn gate_config(args: &ProxyArgs) -> GateConfig {
    GateConfig {
        input_check: match args.input_check {
            CheckArg::Off => InputCheck::Off,
            CheckArg::Warn => InputCheck::Warn,
            CheckArg::Enforce => InputCheck::Enforce,
        },
        unknown_arguments: match args.unknown_arguments {
            UnknownArgumentsArg::Allow => UnknownArguments::Allow,
            UnknownArgumentsArg::Warn => UnknownArguments::Warn,
            UnknownArgumentsArg::Reject => UnknownArguments::Reject,
        },
        on_unchecked: match args.on_unchecked {
            OnUncheckedArg::Refuse => OnUnchecked::Refuse,
            OnUncheckedArg::Forward => OnUnchecked::Forward,
        },
        output_check: match args.output_check {
            CheckArg::Off => OutputCheck::Off,
            CheckArg::Warn => OutputCheck::Warn,
            CheckArg::Enforce => OutputCheck::Enforce,
        },
        listing_timeout: args.listing_timeout,
        policy: ToolPolicy {
            allow: args.allow.iter().map(Glob::new).collect(),
            deny: args.deny.iter().map(Glob::new).collect(),
            holder: None,
        },
        // --deny-unlisted is --unlisted refuse (clap keeps the two from meeting).
        unlisted: match (args.deny_unlisted, args.unlisted) {
            (true, _) | (false, UnlistedArg::Refuse) => Unlisted::Refuse,
            (false, UnlistedArg::Forward) => Unlisted::Forward,
        },
        ..GateConfig::default()
    }
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
        mode: match args.pin_mode {
            PinModeArg::Warn => PinMode::Warn,
            PinModeArg::Enforce => PinMode::Enforce,
        },
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
fn read_proxy_file(path: Option<&Path>) -> Result<ProxyFile, InputError> {
    #[derive(serde::Deserialize)]
    struct Settings {
        #[serde(default)]
        proxy: ProxyFile,
    }
    let path = match path {
        Some(path) => path.to_path_buf(),
        None => match crate::lint::config::nearest_file() {
            Some(path) => path,
            None => return Ok(ProxyFile::default()),
        },
    };
    let name = path.display().to_string();
    let text = crate::input::read_file(&path)?;
    let settings: Settings = toml::from_str(&text)
        .map_err(|e| InputError(format!("{name}: {}", e.to_string().trim_end())))?;
    Ok(settings.proxy)
}
