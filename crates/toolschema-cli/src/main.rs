//! The `toolschema` command: validate, lint and test MCP tool catalogs.

mod input;
mod lint;
mod rules;
mod validate;

use clap::{Parser, Subcommand};
use std::io::Write;
use std::process::ExitCode;

/// toolschema: check the contract between an MCP server and the model that calls it.
#[derive(Debug, Parser)]
#[command(name = "toolschema", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Check tool-call arguments against a catalog's inputSchema (or instances against a schema).
    Validate(validate::ValidateArgs),
    /// Lint tool catalogs: unsafe or unreadable schemas, names, descriptions; fix what can be.
    Lint(lint::LintArgs),
    /// List the lint rules.
    Rules(rules::RulesArgs),
    /// Print a lint rule's documentation.
    Rule(rules::RuleArgs),
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
}

impl From<Outcome> for ExitCode {
    fn from(outcome: Outcome) -> Self {
        match outcome {
            Outcome::Valid => ExitCode::SUCCESS,
            Outcome::Invalid => ExitCode::from(1),
            Outcome::BadInput => ExitCode::from(2),
        }
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    let result = match cli.command {
        Command::Validate(args) => validate::run(args, &mut out),
        Command::Lint(args) => lint::run(args, &mut out),
        Command::Rules(args) => rules::list(args, &mut out),
        Command::Rule(args) => rules::show(args, &mut out),
    };
    let flushed = out.flush();
    match result {
        Ok(outcome) => {
            if let Err(e) = flushed {
                eprintln!("error: cannot write output: {e}");
                return Outcome::BadInput.into();
            }
            outcome.into()
        }
        Err(e) => {
            eprintln!("error: {e}");
            Outcome::BadInput.into()
        }
    }
}
