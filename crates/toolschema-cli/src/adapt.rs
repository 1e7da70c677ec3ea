//! `toolschema adapt`: write a catalog's tools in a model provider's request format, report
//! every loss, and map a model's call back to the server's tool.

use crate::input::{display_name, json_argument_text, parse_json, read_text, InputError};
use crate::output::{say, Escapes, TerminalSafe};
use crate::Outcome;
use serde_json::json;
use std::io::Write;
use toolschema::adapt::{adapt, profile, Profile, RestoreError};
use toolschema::Catalog;

/// Arguments of `toolschema adapt`.
#[derive(Debug, clap::Args)]
#[command(after_help = "\
Examples:
  toolschema adapt examples/catalog.json --to openai-strict
  toolschema adapt examples/catalog.json --to gemini-openapi --tools-only
  toolschema adapt examples/catalog.json --to openai-strict --restore search_docs --args '{\"query\": \"rust\", \"limit\": null}'

Profiles: openai, openai-strict, anthropic, gemini, gemini-openapi.

Output: {\"tools\": [...], \"losses\": [{\"tool\", \"pointer\", \"keyword\", \"action\", \"message\"}],
\"names\": {\"<provider name>\": \"<original name>\"}}; with --restore, {\"name\", \"arguments\"}.

Exit status: 0 when every tool was adapted (or the call restored), 1 when a tool cannot be adapted
(named on stderr, with why; the others are printed) or the restored arguments break the original
schema, 2 for bad input.")]
pub struct AdaptArgs {
    /// Tool catalog: {"tools": [...]}, a JSON-RPC tools/list response, an array of tools, or one
    /// tool (`-` reads standard input).
    #[arg(value_name = "CATALOG")]
    catalog: String,

    /// The provider profile to adapt to.
    #[arg(long = "to", value_name = "PROFILE", value_parser = parse_profile)]
    to: &'static Profile,

    /// Print only the list of tools, in the provider's request format.
    #[arg(long, conflicts_with = "restore")]
    tools_only: bool,

    /// Map a model's call back: the tool name the provider used (the original name works too).
    #[arg(long, value_name = "TOOL", requires = "args")]
    restore: Option<String>,

    /// The arguments the model sent: inline JSON, or @FILE (@- for standard input).
    #[arg(long = "args", value_name = "JSON", requires = "restore")]
    args: Option<String>,
}

fn parse_profile(value: &str) -> Result<&'static Profile, String> {
    profile(value).map_err(|e| e.to_string())
}

/// Run `toolschema adapt`.
pub fn run(args: AdaptArgs, out: &mut dyn Write) -> Result<Outcome, InputError> {
    let mut out = TerminalSafe::new(out, Escapes::Json);
    let out: &mut dyn Write = &mut out;
    let text = read_text(&args.catalog)?;
    let catalog = Catalog::from_json(display_name(&args.catalog), &text)?;
    drop(text);
    let adaptation = adapt(args.to, catalog.tools());
    if let (Some(name), Some(raw)) = (&args.restore, &args.args) {
        let (name_of_args, text) = json_argument_text("--args", raw)?;
        let arguments = parse_json(&name_of_args, &text)?;
        // What is printed must be what the model sent: a value reading would change is refused.
        if let Some(lossy) = toolschema::json::first_lossy_value(&text) {
            let at = toolschema::json::position_of(&text, lossy.offset);
            return Err(InputError(format!(
                "{name_of_args}:{}:{}: {}; the restored arguments would not be what the model sent",
                at.line, at.column, lossy.loss
            )));
        }
        return match adaptation.restore(name, &arguments) {
            Ok(restored) => {
                let call = json!({"name": restored.name, "arguments": restored.arguments});
                print_json(out, &call)?;
                Ok(Outcome::Valid)
            }
            Err(
                e @ (RestoreError::UnknownTool { .. }
                | RestoreError::Adapt(_)
                | RestoreError::Compile(_)),
            ) => Err(InputError(format!("{}: {e}", catalog.file()))),
            Err(RestoreError::Invalid { errors, tool, .. }) => {
                for error in errors.iter() {
                    say!("error: tool '{tool}': {}", error.message);
                }
                Ok(Outcome::Invalid)
            }
            Err(other) => {
                say!("error: {other}");
                Ok(Outcome::Invalid)
            }
        };
    }
    for failure in adaptation.failures() {
        say!("error: {failure}");
    }
    if args.tools_only {
        print_json(out, &adaptation.requests())?;
    } else {
        print_json(out, &adaptation)?;
    }
    Ok(if adaptation.failures().is_empty() {
        Outcome::Valid
    } else {
        Outcome::Invalid
    })
}

fn print_json(out: &mut dyn Write, value: &impl serde::Serialize) -> Result<(), InputError> {
    serde_json::to_writer_pretty(&mut *out, value)
        .map_err(std::io::Error::from)
        .and_then(|()| writeln!(out))
        .map_err(|e| InputError(format!("cannot write output: {e}")))
}
