//! `toolschema diff`: what changed between two catalogs, by meaning, and who it breaks.

use crate::input::{display_name, read_text, InputError};
use crate::output::{Escapes, TerminalSafe};
use crate::snapshot::ServerArgs;
use crate::Outcome;
use std::io::Write;
use toolschema::diff::{diff_tools, Change, ChangeClass, Diff};
use toolschema::{Catalog, Tool};

/// Arguments of `toolschema diff`.
#[derive(Debug, clap::Args)]
#[command(after_help = "\
Examples:
  toolschema diff examples/catalog.json examples/catalog-v2.json
  toolschema diff examples/files-server.json -- npx -y @modelcontextprotocol/server-filesystem .
  toolschema diff tools.json --url http://127.0.0.1:3001/mcp --format markdown
  toolschema diff examples/catalog.json examples/catalog-v2.json --format json --fail-on security

Classes: breaking (callers that worked may now fail; for outputSchema, consumers of results),
security (what the model or the user is told changed or newly told), compatible (everything that worked still
works). Exit status: 0 when no change at or above --fail-on (by default security: an injected
instruction fails as a breaking change does), 1 when there is one, 2 for bad input.")]
pub struct DiffArgs {
    /// The old catalog file (`-` for standard input).
    #[arg(value_name = "OLD")]
    old: String,

    /// The new catalog file; or a live server with `-- COMMAND ARGS...` or `--url URL`.
    #[arg(value_name = "NEW")]
    new: Option<String>,

    #[command(flatten)]
    server: ServerArgs,

    /// Output format: text, json, or markdown (for a pull-request comment).
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,

    /// Fail (exit 1) on changes of this class or worse: breaking, security (breaking or security,
    /// as `verify` fails), or any.
    #[arg(long, value_enum, value_name = "CLASS", default_value_t = FailOn::Security)]
    fail_on: FailOn,
}

/// How a diff is printed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// One line per change, then a summary.
    Text,
    /// `{"changes": [...], "summary": {...}}`.
    Json,
    /// A table for a pull-request comment.
    Markdown,
}

impl Format {
    /// How what would steer a terminal is written in this format.
    pub fn escapes(self) -> Escapes {
        match self {
            Format::Json => Escapes::Json,
            Format::Text | Format::Markdown => Escapes::Text,
        }
    }
}

/// Which changes make the command fail.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum FailOn {
    /// Breaking changes.
    Breaking,
    /// Breaking or security changes.
    Security,
    /// Any change.
    Any,
}

impl FailOn {
    fn fails(self, class: ChangeClass) -> bool {
        match self {
            FailOn::Breaking => class == ChangeClass::Breaking,
            FailOn::Security => class != ChangeClass::Compatible,
            FailOn::Any => true,
        }
    }
}

/// Run `toolschema diff`.
pub fn run(args: DiffArgs, out: &mut dyn Write) -> Result<Outcome, InputError> {
    let mut out = TerminalSafe::new(out, args.format.escapes());
    let out: &mut dyn Write = &mut out;
    let old = read_catalog(&args.old)?;
    let new = match (&args.new, args.server.target()) {
        (Some(path), None) => read_catalog(path)?,
        (None, Some(target)) => args.server.catalog(&target)?,
        (Some(_), Some(_)) => return Err(InputError(
            "give the new catalog as a file, or as a live server (-- COMMAND or --url), not both"
                .into(),
        )),
        (None, None) => {
            return Err(InputError(
                "say what to compare OLD with: a catalog file, -- COMMAND ARGS..., or --url URL"
                    .into(),
            ))
        }
    };
    let diff = diff_tools(old.tools().map(Tool::fields), new.tools().map(Tool::fields));
    print(&diff, args.format, out)?;
    let failed = diff.changes.iter().any(|c| args.fail_on.fails(c.class));
    Ok(if failed {
        Outcome::Invalid
    } else {
        Outcome::Valid
    })
}

/// Read a catalog file (`-` for standard input).
pub fn read_catalog(path: &str) -> Result<Catalog, InputError> {
    let text = read_text(path)?;
    catalog_of_text(path, &text)
}

/// The catalog in `text`, read from the file at `path`.
pub fn catalog_of_text(path: &str, text: &str) -> Result<Catalog, InputError> {
    Ok(Catalog::from_json(display_name(path), text)?)
}

/// Print a diff in `format`.
pub fn print(diff: &Diff, format: Format, out: &mut dyn Write) -> Result<(), InputError> {
    let text = match format {
        Format::Text => text(diff),
        Format::Json => {
            let mut text = serde_json::to_string_pretty(&diff.to_value())
                .map_err(|e| InputError(format!("cannot write the diff: {e}")))?;
            text.push('\n');
            text
        }
        Format::Markdown => markdown(diff),
    };
    out.write_all(text.as_bytes())
        .map_err(|e| InputError(format!("cannot write output: {e}")))
}

fn counts(diff: &Diff) -> String {
    format!(
        "{} breaking, {} security, {} compatible",
        diff.count(ChangeClass::Breaking),
        diff.count(ChangeClass::Security),
        diff.count(ChangeClass::Compatible)
    )
}

fn tools_line(diff: &Diff) -> String {
    format!(
        "{} before, {} after",
        toolschema::text::count(diff.old_tools, "tool", "tools"),
        diff.new_tools
    )
}

fn text(diff: &Diff) -> String {
    let mut out = String::new();
    for change in &diff.changes {
        out.push_str(&format!(
            "{}: {} {}: {}\n",
            change.tool, change.class, change.code, change.message
        ));
    }
    if diff.is_empty() {
        out.push_str(&format!("No changes ({}).\n", tools_line(diff)));
    } else {
        let n = diff.changes.len();
        out.push_str(&format!(
            "{}: {} ({}).\n",
            toolschema::text::count(n, "change", "changes"),
            counts(diff),
            tools_line(diff)
        ));
    }
    out
}

fn markdown(diff: &Diff) -> String {
    let mut out = String::from("### toolschema diff\n\n");
    if diff.is_empty() {
        out.push_str(&format!("No changes ({}).\n", tools_line(diff)));
        return out;
    }
    out.push_str(&format!("**{}** ({}).\n\n", counts(diff), tools_line(diff)));
    out.push_str("| Class | Tool | Code | Change |\n| --- | --- | --- | --- |\n");
    for change in &diff.changes {
        out.push_str(&markdown_row(change));
    }
    out
}

fn markdown_row(change: &Change) -> String {
    format!(
        "| {} | {} | `{}` | {} |\n",
        change.class,
        escape_markdown(&change.tool),
        change.code,
        escape_markdown(&change.message)
    )
}

/// Text safe in a Markdown table cell: punctuation Markdown or HTML would read is escaped, so
/// `<IMPORTANT>` shows as written instead of being taken for a tag.
fn escape_markdown(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '&' => out.push_str("&amp;"),
            '|' | '\\' | '`' | '*' | '_' | '[' | ']' | '{' | '}' | '#' | '~' | '!' => {
                out.push('\\');
                out.push(c);
            }
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markdown_cells_show_text_as_written() {
        assert_eq!(
            escape_markdown("a | <IMPORTANT> [-x-]{+y+} `c` ~/.ssh"),
            "a \\| &lt;IMPORTANT&gt; \\[-x-\\]\\{+y+\\} \\`c\\` \\~/.ssh"
        );
    }
}
