//! `toolschema proxy`'s command-line flags, defined once: `#[command(flatten)]` them into a
//! derive command (as the `toolschema` binary does), or add them to a builder command with
//! [`clap::Args::augment_args`]. The check modes are the gate's own types.

use std::path::PathBuf;
use std::time::Duration;
use toolschema::size::parse_size;
use toolschema_gate::{
    GateConfig, Glob, InputCheck, OnUnchecked, OutputCheck, PinMode, ToolPolicy, UnknownArguments,
    Unlisted,
};
use toolschema_http::flags::{parse_seconds, GuardArgs};

/// How the proxy writes its log lines.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum LogFormat {
    /// `toolschema proxy: MESSAGE`, one line each.
    Text,
    /// One JSON object a line.
    Json,
}

/// Arguments of `toolschema proxy`.
#[derive(Debug, Clone, clap::Args)]
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
    #[allow(rustdoc::broken_intra_doc_links)]
    /// The command that starts the server over stdio, after `--` (or --upstream, --server, or
    /// [proxy.servers.NAME] tables in the settings file).
    #[arg(last = true, value_name = "COMMAND")]
    pub command: Vec<String>,

    /// A server behind one front, NAME=URL (http:// or https://) or NAME=COMMAND ARGS (words
    /// split at spaces); repeatable. Its tools are exposed as NAME__TOOL (NAME:bare=...: under
    /// their own names, refused where another tool wants one).
    #[arg(
        long = "server",
        value_name = "NAME=WHERE",
        conflicts_with_all = ["command", "upstream", "pin"]
    )]
    pub servers: Vec<String>,

    /// Serve the --server list as one MCP server on stdio, with no gate: the proxy starts
    /// itself with it behind its front.
    #[arg(long, hide = true)]
    pub serve_servers: bool,

    /// Serve MCP over Streamable HTTP at http://ADDR/mcp (like 127.0.0.1:8080) instead of
    /// stdio: one server process per session (or the --upstream), behind the access checks
    /// below.
    #[arg(long, value_name = "ADDR")]
    pub listen: Option<String>,

    /// The server is remote: its Streamable HTTP endpoint (http:// or https://), instead of a
    /// command.
    #[arg(long, value_name = "URL", conflicts_with = "command")]
    pub upstream: Option<String>,

    /// An HTTP header for every request to the --upstream, `Name: value` (repeatable).
    #[arg(long = "header", value_name = "NAME: VALUE", requires = "upstream")]
    pub headers: Vec<String>,

    /// With --listen: the most sessions open at once (each has a server process with a
    /// command); a new one past it is refused with 503.
    #[arg(long, value_name = "N", default_value_t = 100, value_parser = clap::value_parser!(u32).range(1..))]
    pub max_sessions: u32,

    /// The longest a request may take over HTTP, in seconds: its body must arrive, and its
    /// answer come, within it (the request is then cancelled at the server).
    #[arg(long, value_name = "SECONDS", default_value = "300", value_parser = parse_seconds)]
    pub request_timeout: Duration,

    /// Check every listed tool against its pin in this lock file (`toolschema pin`), under the
    /// key of the server command or --upstream URL: a tool that drifted from its pin, or is not
    /// pinned, is reported once per listing (stderr and the audit log)
    #[arg(long, value_name = "FILE")]
    pub pin: Option<PathBuf>,

    /// With --pin: enforce (leave such tools out of tools/list and refuse their calls with a
    /// tool error saying the definition changed) or warn (report only)
    #[arg(long, value_enum, default_value_t = PinMode::Enforce, requires = "pin")]
    pub pin_mode: PinMode,

    // The help shows `[proxy]` as written; rustdoc would read it as a link.
    #[allow(rustdoc::broken_intra_doc_links)]
    /// The settings file with a [proxy] table (token policies, overrides, tool scopes,
    /// servers behind one front) [default: the nearest toolschema.toml, from the current
    /// directory up].
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,

    /// The checks and policies of every call.
    #[command(flatten)]
    pub gate: GateArgs,

    /// How long the proxy waits for the server to answer a tools/list it sends itself, in
    /// seconds; the calls waiting for it are refused after that.
    #[arg(long, value_name = "SECONDS", default_value = "30", value_parser = parse_seconds)]
    pub listing_timeout: Duration,

    /// Append one JSON line per tools/call to FILE: time, tool, verdict, messages, duration,
    /// isError, output check.
    #[arg(long, value_name = "FILE")]
    pub audit: Option<PathBuf>,

    /// Also write each call's arguments to the audit log.
    #[arg(long, requires = "audit")]
    pub audit_arguments: bool,

    /// The largest message accepted from either side: bytes, or with KiB, MiB or GiB. Larger
    /// messages are refused without being buffered.
    #[arg(long, value_name = "SIZE", default_value = "16MiB", value_parser = parse_size)]
    pub max_message_bytes: usize,

    /// Serve metrics at http://ADDR/metrics (Prometheus text format), and the probes /healthz
    /// and /readyz, on a listener of their own (like 127.0.0.1:9464). A non-loopback ADDR needs
    /// --auth-token-file or --oauth-issuer: /metrics there takes a bearer token; the probes
    /// never do.
    #[arg(long, value_name = "ADDR")]
    pub metrics: Option<String>,

    /// Export traces over OTLP/HTTP (protobuf) to this URL, like
    /// http://127.0.0.1:4318/v1/traces: a span per request, with the validation and the call to
    /// the server as children [default: $OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, or
    /// $OTEL_EXPORTER_OTLP_ENDPOINT/v1/traces; the service name is $OTEL_SERVICE_NAME, or
    /// toolschema-proxy].
    #[arg(long, value_name = "URL")]
    pub otlp_endpoint: Option<String>,

    /// How the proxy's own log lines on stderr are written: text, or json (one object a line,
    /// with the trace_id of the request being handled).
    #[arg(long, value_enum, default_value_t = LogFormat::Text)]
    pub log_format: LogFormat,

    /// The access checks of the HTTP endpoint (with --listen).
    #[command(flatten)]
    pub guard: GuardArgs,
}

impl ProxyArgs {
    /// Whether the proxy serves over HTTP (and so logs the guard's events).
    pub fn listens(&self) -> bool {
        self.listen.is_some()
    }

    /// The trace exporter's settings from --otlp-endpoint, or from the standard variables
    /// (`None`: no traces).
    pub fn trace_config(&self) -> Option<crate::trace::TraceConfig> {
        crate::trace::TraceConfig::resolve(self.otlp_endpoint.as_deref(), |name| {
            std::env::var(name).ok()
        })
    }

    /// The gate's settings from the flags (the pins and the settings file's overrides are read
    /// by the caller).
    pub fn gate_config(&self) -> GateConfig {
        GateConfig {
            listing_timeout: self.listing_timeout,
            // Only the names of the command line: a value a server gave is never a label.
            servers: self
                .servers
                .iter()
                .filter_map(|value| crate::servers::parse_server(value).ok())
                .map(|server| server.name)
                .collect(),
            ..self.gate.gate_config()
        }
    }
}

/// The checks and policies of every call: the flags `toolschema proxy` and `toolschema serve`
/// share.
#[derive(Debug, Clone, clap::Args)]
pub struct GateArgs {
    /// Check tools/call arguments against the tool's inputSchema: off, warn (report on stderr and
    /// in the audit log, forward anyway: a gradual roll-out) or enforce (answer the call with an
    /// isError result; it never reaches the server).
    #[arg(long, value_enum, default_value_t = InputCheck::Enforce)]
    pub input_check: InputCheck,

    /// Top-level arguments the tool's schema does not declare where the schema accepts them (no
    /// additionalProperties): allow (as the schema says), warn, or reject (with a did-you-mean).
    #[arg(long, value_enum, default_value_t = UnknownArguments::Allow)]
    pub unknown_arguments: UnknownArguments,

    /// A call the proxy cannot check, because it could not learn the tool's schema (the
    /// listing failed, the schema does not compile, it refers to a $ref that is never fetched):
    /// refuse (an isError result that says why) or forward (with a warning for each call).
    #[arg(long, value_enum, default_value_t = OnUnchecked::Refuse)]
    pub on_unchecked: OnUnchecked,

    /// Check structuredContent against the tool's outputSchema: off, warn (report on stderr and
    /// in the audit log) or enforce (replace the result with an isError result).
    #[arg(long, value_enum, default_value_t = OutputCheck::Warn)]
    pub output_check: OutputCheck,

    /// Let only tools whose name matches GLOB through (`*` and `?`; repeatable).
    #[arg(long = "allow", value_name = "GLOB")]
    pub allow: Vec<String>,

    /// Hide tools whose name matches GLOB from tools/list and refuse their calls (repeatable;
    /// wins over --allow).
    #[arg(long = "deny", value_name = "GLOB")]
    pub deny: Vec<String>,

    /// A call to a tool the server has not listed (the proxy lists the tools itself first, in
    /// case a listing it saw was short): refuse (an error with a did-you-mean; it never reaches
    /// the server) or forward (unchecked, with a warning: for servers with tools they do not
    /// list).
    #[arg(long, value_enum, default_value_t = Unlisted::Refuse)]
    pub unlisted: Unlisted,

    /// The same as --unlisted refuse, now the default (kept for existing command lines).
    #[arg(long, conflicts_with = "unlisted")]
    pub deny_unlisted: bool,
}

impl GateArgs {
    /// The gate's settings from the flags (the pins and the settings file's overrides are read
    /// by the caller).
    pub fn gate_config(&self) -> GateConfig {
        GateConfig {
            input_check: self.input_check,
            unknown_arguments: self.unknown_arguments,
            on_unchecked: self.on_unchecked,
            output_check: self.output_check,
            policy: ToolPolicy {
                allow: self.allow.iter().map(Glob::new).collect(),
                deny: self.deny.iter().map(Glob::new).collect(),
                holder: None,
            },
            // --deny-unlisted is --unlisted refuse (clap keeps the two from meeting).
            unlisted: match (self.deny_unlisted, self.unlisted) {
                (true, _) => Unlisted::Refuse,
                (false, unlisted) => unlisted,
            },
            ..GateConfig::default()
        }
    }
}

/// Arguments of `toolschema serve`.
#[derive(Debug, Clone, clap::Args)]
#[command(after_help = "\
Over HTTP (--listen), the MCP interceptors are at /mcp and the ToolHive webhook at /toolhive;
without it, the interceptors are served on stdio. The book's page on serve shows examples.

A call to a tool no catalog lists is refused with why, unless --unlisted forward (then every such
decision says it was let through unchecked). The catalogs are read again on SIGHUP and when a
file changes; a file that cannot be read keeps the catalog read before, and the log says why.
Exit status: 0 on SIGINT or SIGTERM (or, over stdio, at the end of its input), 2 when the
catalogs or the settings cannot be used.")]
pub struct ServeArgs {
    /// The tools to check calls against: a catalog file (a tools/list result, an array of tools,
    /// or one tool), for the server SERVER as hooks name it (repeatable: one per server).
    #[arg(long = "catalog", value_name = "[SERVER=]FILE", required_unless_present_any = ["upstreams", "command"])]
    pub catalogs: Vec<String>,

    /// Learn the tools of the server SERVER from its Streamable HTTP endpoint, listed at start
    /// and again on SIGHUP and when it sends tools/list_changed (repeatable).
    #[arg(long = "upstream", value_name = "[SERVER=]URL")]
    pub upstreams: Vec<String>,

    /// An HTTP header for every request to the --upstream servers, `Name: value` (repeatable).
    #[arg(long = "header", value_name = "NAME: VALUE", requires = "upstreams")]
    pub headers: Vec<String>,

    /// Learn the tools from the server this command starts (after `--`), listed at start and
    /// again on SIGHUP and when it sends tools/list_changed.
    #[arg(last = true, value_name = "COMMAND")]
    pub command: Vec<String>,

    /// Serve over HTTP at ADDR (like 127.0.0.1:8090) instead of stdio, behind the access checks
    /// below.
    #[arg(long, value_name = "ADDR")]
    pub listen: Option<String>,

    /// enforce (a refused call is refused) or audit (reported to the hook, the audit log and the
    /// metrics, and let through; the interceptor is listed with mode audit).
    #[arg(long, value_enum, default_value_t = crate::serve::Mode::Enforce)]
    pub mode: crate::serve::Mode,

    /// Serve the ToolHive validating webhook at /toolhive, its requests signed with the secret
    /// in FILE (HMAC-SHA256, X-ToolHive-Signature); unsigned or wrongly signed requests get 401.
    #[arg(long, value_name = "FILE")]
    pub toolhive_secret_file: Option<PathBuf>,

    /// The longest a decision may take, in seconds; past it the call is not admitted.
    #[arg(long, value_name = "SECONDS", default_value = "5", value_parser = parse_seconds)]
    pub decision_timeout: Duration,

    /// The most decisions made at once over HTTP; a request past it gets 503.
    #[arg(long, value_name = "N", default_value_t = 256, value_parser = clap::value_parser!(u32).range(1..))]
    pub max_concurrent: u32,

    /// How often the catalog files are looked at for changes, in seconds.
    #[arg(long, value_name = "SECONDS", default_value = "1", value_parser = parse_seconds)]
    pub watch_interval: Duration,

    /// Check every catalog's tools against their pins in this lock file (`toolschema pin`),
    /// under the key of the catalog's SERVER (or the lock's only key): a call to a tool that
    /// drifted from its pin, or is not pinned, is refused (or reported, with --pin-mode warn).
    #[arg(long, value_name = "FILE")]
    pub pin: Option<PathBuf>,

    /// With --pin: enforce (refuse the calls of tools that do not match their pins) or warn
    /// (report only).
    #[arg(long, value_enum, default_value_t = PinMode::Enforce, requires = "pin")]
    pub pin_mode: PinMode,

    // The help shows `[proxy]` as written; rustdoc would read it as a link.
    #[allow(rustdoc::broken_intra_doc_links)]
    /// The settings file with a [proxy] table: the policies per principal ([proxy.tokens.NAME],
    /// the ToolHive webhook's principal by its sub) and the tools' scopes, as the proxy reads
    /// them [default: the nearest toolschema.toml, from the current directory up].
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,

    /// Append one JSON line per decision to FILE, as the proxy's audit log.
    #[arg(long, value_name = "FILE")]
    pub audit: Option<PathBuf>,

    /// Also write each call's arguments to the audit log.
    #[arg(long, requires = "audit")]
    pub audit_arguments: bool,

    /// Serve metrics at http://ADDR/metrics and the probes /healthz and /readyz, as the proxy's
    /// --metrics.
    #[arg(long, value_name = "ADDR")]
    pub metrics: Option<String>,

    /// The checks and policies of every call.
    #[command(flatten)]
    pub gate: GateArgs,

    /// The access checks of the HTTP endpoint (with --listen).
    #[command(flatten)]
    pub guard: GuardArgs,
}
