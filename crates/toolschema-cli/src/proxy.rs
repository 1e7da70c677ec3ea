//! `toolschema proxy`: a validating stdio proxy in front of any MCP server.

use crate::input::{parse_seconds, parse_size, InputError};
use crate::Outcome;
use std::path::PathBuf;
use std::time::Duration;
use toolschema_mcp::proxy::{
    self, Glob, InputCheck, OnUnchecked, OutputCheck, ProxyConfig, ToolPolicy, UnknownArguments,
};
use toolschema_mcp::ServerCommand;

/// Arguments of `toolschema proxy`.
#[derive(Debug, clap::Args)]
#[command(after_help = "\
Start the proxy where a client would start the server:
  toolschema proxy -- npx -y @modelcontextprotocol/server-filesystem /srv/files
  toolschema proxy --deny 'delete_*' --audit calls.jsonl -- python -m my_server

Every message passes through unchanged in both directions. tools/call arguments that break the
tool's inputSchema get an isError result with one message per line, and never reach the server;
so does a call the proxy cannot check (it could not learn the tool's schema), unless
--on-unchecked forward.
Exit status: 0 when the client closed its input, the server's exit code when it exited on its own
(1 if that was 0), 2 when the server could not be started.")]
pub struct ProxyArgs {
    /// The command that starts the server over stdio, after `--`.
    #[arg(last = true, required = true, value_name = "COMMAND")]
    command: Vec<String>,

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

    /// Refuse calls to tools the server has not listed (by default the server answers them).
    #[arg(long)]
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
enum OnUncheckedArg {
    Refuse,
    Forward,
}

/// Run `toolschema proxy` on this process's stdin and stdout until one side ends.
pub fn run(args: ProxyArgs) -> Result<Outcome, InputError> {
    let Some((program, rest)) = args.command.split_first() else {
        return Err(InputError(
            "say which server to start: -- COMMAND ARGS...".into(),
        ));
    };
    let mut config = ProxyConfig::new(ServerCommand::new(program, rest));
    config.gate.input_check = match args.input_check {
        CheckArg::Off => InputCheck::Off,
        CheckArg::Warn => InputCheck::Warn,
        CheckArg::Enforce => InputCheck::Enforce,
    };
    config.gate.unknown_arguments = match args.unknown_arguments {
        UnknownArgumentsArg::Allow => UnknownArguments::Allow,
        UnknownArgumentsArg::Warn => UnknownArguments::Warn,
        UnknownArgumentsArg::Reject => UnknownArguments::Reject,
    };
    config.gate.on_unchecked = match args.on_unchecked {
        OnUncheckedArg::Refuse => OnUnchecked::Refuse,
        OnUncheckedArg::Forward => OnUnchecked::Forward,
    };
    config.gate.output_check = match args.output_check {
        CheckArg::Off => OutputCheck::Off,
        CheckArg::Warn => OutputCheck::Warn,
        CheckArg::Enforce => OutputCheck::Enforce,
    };
    config.gate.listing_timeout = args.listing_timeout;
    config.gate.policy = ToolPolicy {
        allow: args.allow.into_iter().map(Glob::new).collect(),
        deny: args.deny.into_iter().map(Glob::new).collect(),
    };
    config.gate.deny_unlisted = args.deny_unlisted;
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
