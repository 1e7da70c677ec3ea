//! `toolschema rules` and `toolschema rule CODE`: the lint rules and their documentation, as
//! written in each rule's doc comment.

use crate::input::InputError;
use crate::Outcome;
use serde_json::json;
use std::io::Write;
use toolschema::lint::{Rule, RuleSet, RULES};

/// Arguments of `toolschema rules`.
#[derive(Debug, clap::Args)]
pub struct RulesArgs {
    /// Output format: text (a table) or json.
    #[arg(long, value_enum, default_value_t = ListFormat::Text)]
    format: ListFormat,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum ListFormat {
    Text,
    Json,
}

/// Arguments of `toolschema rule`.
#[derive(Debug, clap::Args)]
pub struct RuleArgs {
    /// The rule's code, like SCH-003.
    #[arg(value_name = "CODE")]
    code: String,
}

/// The rule's set as `toolschema rules` and the book write it.
pub(crate) fn set(rule: &Rule) -> &'static str {
    match rule.set() {
        RuleSet::Default => "default",
        RuleSet::Pedantic => "pedantic",
    }
}

/// The kinds of fix a rule offers (`safe/unsafe`), or `none`.
pub(crate) fn fixes(rule: &Rule) -> String {
    if rule.fixes().is_empty() {
        return "none".into();
    }
    rule.fixes()
        .iter()
        .map(|f| f.as_str())
        .collect::<Vec<_>>()
        .join("/")
}

/// Run `toolschema rules`.
pub fn list(args: RulesArgs, out: &mut dyn Write) -> Result<Outcome, InputError> {
    let written = match args.format {
        ListFormat::Json => {
            let rules: Vec<_> = RULES
                .iter()
                .map(|r| {
                    json!({
                        "code": r.code(),
                        "name": r.name(),
                        "severity": r.severity().as_str(),
                        "set": set(r),
                        "fixes": r.fixes().iter().map(|f| f.as_str()).collect::<Vec<_>>(),
                        "summary": r.summary(),
                    })
                })
                .collect();
            writeln!(out, "{}", json!(rules))
        }
        ListFormat::Text => (|| {
            writeln!(
                out,
                "{:<9} {:<9} {:<9} {:<12} {:<22} SUMMARY",
                "CODE", "SEVERITY", "SET", "FIX", "NAME"
            )?;
            for rule in RULES {
                writeln!(
                    out,
                    "{:<9} {:<9} {:<9} {:<12} {:<22} {}",
                    rule.code(),
                    rule.severity().as_str(),
                    set(rule),
                    fixes(rule),
                    rule.name(),
                    rule.summary()
                )?;
            }
            writeln!(
                out,
                "\nThe default set runs unless told otherwise; `--select pedantic` (or ALL) adds the \
                 others.\n`toolschema rule CODE` prints a rule's documentation."
            )
        })(),
    };
    written.map_err(|e| InputError(format!("cannot write output: {e}")))?;
    Ok(Outcome::Valid)
}

/// Run `toolschema rule CODE`.
pub fn show(args: RuleArgs, out: &mut dyn Write) -> Result<Outcome, InputError> {
    let rule = toolschema::lint::rule(&args.code).map_err(|e| InputError(e.to_string()))?;
    write!(
        out,
        "{} {}\nseverity: {}, set: {}, fix: {}\n\n{}",
        rule.code(),
        rule.name(),
        rule.severity(),
        set(rule),
        fixes(rule),
        rule.documentation()
    )
    .map_err(|e| InputError(format!("cannot write output: {e}")))?;
    Ok(Outcome::Valid)
}
