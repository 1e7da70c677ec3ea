//! The `toolschema` command: validate, lint and test MCP tool catalogs.

mod adapt;
mod call;
mod diff;
mod docs;
mod fuzz;
#[cfg(target_os = "linux")]
mod init;
mod input;
mod lint;
mod log;
mod output;
mod pin;
mod proxy;
mod proxy_servers;
mod rules;
mod serve;
mod server_args;
mod snapshot;
mod validate;

use crate::output::say;
use clap::{Parser, Subcommand};
use std::io::Write;
use std::process::ExitCode;

/// mimalloc instead of the system allocator: linting reads and drops a JSON tree per tool and a
/// finding is a few small strings, so allocation was about a fifth of a large lint's CPU time
/// with glibc's malloc. Measured on the 10,000-tool catalog of `scripts/bench-lint.sh`: wall time
/// 14% lower, peak memory the same. Without transparent huge pages (`no_thp`): with them, the
/// same run took 10 MiB more memory (each fault takes 2 MiB) for no further gain.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// What `--version` prints after the name: the version and the commit built from (build.rs).
const VERSION: &str = concat!(
    env!("CARGO_PKG_VERSION"),
    " (",
    env!("TOOLSCHEMA_BUILD_COMMIT_INFO"),
    ")"
);

/// toolschema: check the contract between an MCP server and the model that calls it.
#[derive(Debug, Parser)]
#[command(name = "toolschema", version = VERSION, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Check tool-call arguments against a catalog's inputSchema (or instances against a schema).
    Validate(validate::ValidateArgs),
    /// Print the tools of a live MCP server exactly as it lists them ({"tools": [...]}).
    Snapshot(snapshot::SnapshotArgs),
    /// Call one tool of a live MCP server by hand, its arguments checked against its schema first.
    Call(Box<call::CallArgs>),
    /// Call a live MCP server's tools with valid and invalid arguments; report what it does wrong.
    Fuzz(fuzz::FuzzArgs),
    /// Run an MCP server behind a proxy that validates tools/call arguments (stdio or HTTP).
    Proxy(Box<proxy::ProxyArgs>),
    /// Serve the proxy's checks to another gateway: MCP interceptors, ToolHive webhooks.
    Serve(Box<serve::ServeArgs>),
    /// Lint tool catalogs: unsafe or unreadable schemas, names, descriptions; fix what can be.
    Lint(lint::LintArgs),
    /// List the lint rules.
    Rules(rules::RulesArgs),
    /// Print a lint rule's documentation.
    Rule(rules::RuleArgs),
    /// Compare two catalogs (or a catalog and a live server) by meaning: breaking, security and
    /// compatible changes.
    Diff(diff::DiffArgs),
    /// Pin a server's tools (SHA-256 of their canonical JSON) in a lock file.
    Pin(pin::PinArgs),
    /// Check a server's tools against their pins; print the drift.
    Verify(pin::VerifyArgs),
    /// Write a catalog's tools for a model provider (OpenAI, Anthropic, Gemini), with every loss.
    Adapt(adapt::AdaptArgs),
    /// Print a shell completion script: bash, zsh, fish, elvish or powershell.
    Completions(CompletionsArgs),
    /// Write the book's generated pages (rule pages, CLI reference) from the code.
    #[command(hide = true)]
    GenerateDocs(docs::GenerateDocsArgs),
}

/// Arguments of `toolschema completions`.
#[derive(Debug, clap::Args)]
#[command(after_help = "\
Examples:
  toolschema completions bash > ~/.local/share/bash-completion/completions/toolschema
  toolschema completions zsh > ~/.zfunc/_toolschema
  toolschema completions fish > ~/.config/fish/completions/toolschema.fish")]
struct CompletionsArgs {
    /// The shell to complete in.
    #[arg(value_enum)]
    shell: clap_complete::Shell,
}

/// Write the completion script for `shell` (the whole command line, from its definition).
fn completions(args: CompletionsArgs, out: &mut dyn Write) -> Result<Outcome, input::InputError> {
    let mut command = <Cli as clap::CommandFactory>::command();
    clap_complete::generate(args.shell, &mut command, "toolschema", out);
    Ok(Outcome::Valid)
}

/// How a command ended, as the exit status scripts read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// Everything checked out: exit 0.
    Valid,
    /// Something was checked and found wrong: exit 1.
    Invalid,
    /// The input could not be checked: exit 2.
    BadInput,
    /// The exit status of what the command ran (the proxy exits with its server's).
    Exit(u8),
}

impl From<Outcome> for ExitCode {
    fn from(outcome: Outcome) -> Self {
        match outcome {
            Outcome::Valid => ExitCode::SUCCESS,
            Outcome::Invalid => ExitCode::from(1),
            Outcome::BadInput => ExitCode::from(2),
            Outcome::Exit(code) => ExitCode::from(code),
        }
    }
}

fn main() -> ExitCode {
    #[cfg(target_os = "linux")]
    {
        init::clear_inherited_mask();
        if let Some(code) = init::run_if_first_process() {
            return code;
        }
    }
    let cli = Cli::parse();
    let log_format = match &cli.command {
        Command::Proxy(args) => args.log_format,
        _ => log::LogFormat::Text,
    };
    log::init(
        match &cli.command {
            Command::Proxy(args) if args.listens() => log::Verbosity::Http,
            Command::Serve(_) => log::Verbosity::Http,
            _ => log::Verbosity::Warnings,
        },
        log_format,
    );
    match cli.command {
        // The proxy owns the process's stdin and stdout: nothing may hold a lock on stdout.
        Command::Proxy(args) => finish(proxy::run(*args), Ok(())),
        // The service owns stdin and stdout over stdio, as the proxy does.
        Command::Serve(args) => {
            log::serving();
            finish(serve::run(*args), Ok(()))
        }
        Command::Validate(args) => with_stdout(|out| validate::run(args, out)),
        Command::Snapshot(args) => with_stdout(|out| snapshot::run(args, out)),
        Command::Call(args) => with_stdout(|out| call::run(*args, out)),
        Command::Fuzz(args) => with_stdout(|out| fuzz::run(args, out)),
        Command::Lint(args) => with_stdout(|out| lint::run(args, out)),
        Command::Rules(args) => with_stdout(|out| rules::list(args, out)),
        Command::Rule(args) => with_stdout(|out| rules::show(args, out)),
        Command::Diff(args) => with_stdout(|out| diff::run(args, out)),
        Command::Pin(args) => finish(pin::run_pin(args), Ok(())),
        Command::Verify(args) => with_stdout(|out| pin::run_verify(args, out)),
        Command::Adapt(args) => with_stdout(|out| adapt::run(args, out)),
        Command::Completions(args) => with_stdout(|out| completions(args, out)),
        Command::GenerateDocs(args) => {
            with_stdout(|out| docs::run(args, <Cli as clap::CommandFactory>::command(), out))
        }
    }
}

/// Run a command that writes its report to a buffered, locked stdout.
fn with_stdout(run: impl FnOnce(&mut dyn Write) -> Result<Outcome, input::InputError>) -> ExitCode {
    let stdout = std::io::stdout();
    // Reports run to megabytes (a large catalog's lint): write them in 64 KiB pieces, not 8 KiB.
    let mut out = std::io::BufWriter::with_capacity(64 << 10, stdout.lock());
    let result = run(&mut out);
    let flushed = out.flush();
    finish(result, flushed)
}

/// Print the error, if any, and turn the outcome into the exit status.
fn finish(result: Result<Outcome, input::InputError>, flushed: std::io::Result<()>) -> ExitCode {
    match result {
        Ok(outcome) => {
            if let Err(e) = flushed {
                say!("error: cannot write output: {e}");
                return Outcome::BadInput.into();
            }
            outcome.into()
        }
        Err(e) => {
            say!("error: {e}");
            Outcome::BadInput.into()
        }
    }
}
