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
            // Each column as wide as its widest cell, two spaces between columns.
            let rows: Vec<[String; 6]> = std::iter::once(
                ["CODE", "SEVERITY", "SET", "FIX", "NAME", "SUMMARY"].map(String::from),
            )
            .chain(RULES.iter().map(|rule| {
                [
                    rule.code().to_string(),
                    rule.severity().as_str().to_string(),
                    set(rule).to_string(),
                    fixes(rule),
                    rule.name().to_string(),
                    rule.summary().to_string(),
                ]
            }))
            .collect();
            let mut widths = [0; 5];
            for row in &rows {
                for (width, cell) in widths.iter_mut().zip(row) {
                    *width = (*width).max(cell.chars().count());
                }
            }
            for row in &rows {
                let mut line = String::new();
                for (width, cell) in widths.iter().zip(row) {
                    line.push_str(&format!("{cell:<width$}  "));
                }
                line.push_str(&row[5]);
                writeln!(out, "{line}")?;
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
