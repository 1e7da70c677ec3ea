//! `toolschema generate-docs` (hidden): the book's pages whose source is the code.
//!
//! The rule pages and their index come from the rule registry, the same text `toolschema rule
//! CODE` prints. The CLI reference comes from the clap definitions, the same text `--help`
//! prints. Nobody writes these pages by hand: `tests/docs.rs` runs `--check` and fails when the
//! committed pages differ from what the code generates.

use crate::input::InputError;
use crate::rules::{fixes, set};
use crate::Outcome;
use std::fmt::Write as _;
use std::io::Write;
use std::path::{Path, PathBuf};
use toolschema::lint::{Rule, RULES};

/// The command that regenerates the pages, as the stale-page message tells it.
const REGENERATE: &str = "cargo run -p toolschema-cli -- generate-docs docs/src";

/// The markers in `SUMMARY.md` between which the rule pages are listed.
const SUMMARY_START: &str = "<!-- generated: rule pages (toolschema generate-docs) -->";
const SUMMARY_END: &str = "<!-- end of generated rule pages -->";

/// Arguments of `toolschema generate-docs`.
#[derive(Debug, clap::Args)]
pub struct GenerateDocsArgs {
    /// The book's source directory (the one holding SUMMARY.md).
    #[arg(value_name = "DIR", default_value = "docs/src")]
    dir: PathBuf,
    /// Write nothing; exit 1 and name each page that differs from what the code generates.
    #[arg(long)]
    check: bool,
}

/// One generated file: its path under the book's source directory, and its text.
struct Page {
    path: PathBuf,
    text: String,
}

/// Run `toolschema generate-docs`.
pub fn run(
    args: GenerateDocsArgs,
    cli: clap::Command,
    out: &mut dyn Write,
) -> Result<Outcome, InputError> {
    let summary_path = args.dir.join("SUMMARY.md");
    let summary = std::fs::read_to_string(&summary_path)
        .map_err(|e| InputError(format!("cannot read {}: {e}", summary_path.display())))?;
    let mut pages = vec![Page {
        path: "SUMMARY.md".into(),
        text: summary_with_rules(&summary)?,
    }];
    pages.push(Page {
        path: "rules/index.md".into(),
        text: rule_index(),
    });
    for rule in RULES {
        pages.push(Page {
            path: format!("rules/{}.md", rule.code()).into(),
            text: rule_page(rule),
        });
    }
    pages.push(Page {
        path: "reference/cli.md".into(),
        text: cli_reference(cli),
    });

    let stale = stale_files(&args.dir, &pages)?;
    if args.check {
        if stale.is_empty() {
            return Ok(Outcome::Valid);
        }
        let mut message = String::new();
        for path in &stale {
            let _ = writeln!(message, "stale: {}", args.dir.join(path).display());
        }
        let _ = writeln!(
            message,
            "These pages differ from what the code generates. Regenerate them with:\n  {REGENERATE}"
        );
        out.write_all(message.as_bytes())
            .map_err(|e| InputError(format!("cannot write output: {e}")))?;
        return Ok(Outcome::Invalid);
    }
    for path in stale {
        let full = args.dir.join(&path);
        match pages.iter().find(|p| p.path == path) {
            Some(page) => {
                if let Some(parent) = full.parent() {
                    std::fs::create_dir_all(parent).map_err(|e| {
                        InputError(format!("cannot create {}: {e}", parent.display()))
                    })?;
                }
                std::fs::write(&full, &page.text)
                    .map_err(|e| InputError(format!("cannot write {}: {e}", full.display())))?;
            }
            None => std::fs::remove_file(&full)
                .map_err(|e| InputError(format!("cannot remove {}: {e}", full.display())))?,
        }
        writeln!(out, "wrote {}", full.display())
            .map_err(|e| InputError(format!("cannot write output: {e}")))?;
    }
    Ok(Outcome::Valid)
}

/// The generated files that differ from the committed ones, and the committed rule pages the
/// code no longer generates (a rule removed or renamed), in path order.
fn stale_files(dir: &Path, pages: &[Page]) -> Result<Vec<PathBuf>, InputError> {
    let mut stale: Vec<PathBuf> = pages
        .iter()
        .filter(|page| {
            std::fs::read_to_string(dir.join(&page.path))
                .ok()
                .as_deref()
                != Some(&page.text)
        })
        .map(|page| page.path.clone())
        .collect();
    let rules_dir = dir.join("rules");
    if let Ok(entries) = std::fs::read_dir(&rules_dir) {
        for entry in entries {
            let entry = entry
                .map_err(|e| InputError(format!("cannot read {}: {e}", rules_dir.display())))?;
            let path = Path::new("rules").join(entry.file_name());
            if !pages.iter().any(|p| p.path == path) {
                stale.push(path);
            }
        }
    }
    stale.sort();
    Ok(stale)
}

/// `SUMMARY.md` with the lines between the markers replaced by one line per rule page.
fn summary_with_rules(summary: &str) -> Result<String, InputError> {
    let (Some(start), Some(end)) = (summary.find(SUMMARY_START), summary.find(SUMMARY_END)) else {
        return Err(InputError(format!(
            "SUMMARY.md lacks the markers `{SUMMARY_START}` and `{SUMMARY_END}`"
        )));
    };
    let mut text = summary[..start + SUMMARY_START.len()].to_string();
    text.push('\n');
    for rule in RULES {
        let _ = writeln!(
            text,
            "  - [{} {}](rules/{}.md)",
            rule.code(),
            rule.name(),
            rule.code()
        );
    }
    text.push_str(&summary[end..]);
    Ok(text)
}

/// The index of the rules: one row each, linking to its page.
fn rule_index() -> String {
    let mut text = String::from(
        "<!-- Generated by `toolschema generate-docs` from the rule registry. Do not edit. -->\n\n\
         # Lint rules\n\n\
         Each rule has a stable code and a kebab-case name.\n\
         The `default` set runs unless told otherwise.\n\
         The `pedantic` set runs with `--select pedantic` or `--select ALL`.\n\
         `toolschema rule CODE` prints a rule's page in the terminal.\n\n\
         | code | name | severity | set | fix | what it flags |\n\
         | --- | --- | --- | --- | --- | --- |\n",
    );
    for rule in RULES {
        let _ = writeln!(
            text,
            "| [{code}]({code}.md) | {} | {} | {} | {} | {} |",
            rule.name(),
            rule.severity(),
            set(rule),
            fixes(rule),
            rule.summary().replace('|', "\\|"),
            code = rule.code(),
        );
    }
    text
}

/// A rule's page: its code, name, severity, set and fixes, then its documentation.
fn rule_page(rule: &Rule) -> String {
    format!(
        "<!-- Generated by `toolschema generate-docs` from the rule's doc comment. Do not edit. -->\n\n\
         # {} {}\n\n\
         | severity | set | fix |\n\
         | --- | --- | --- |\n\
         | {} | {} | {} |\n\n\
         {}",
        rule.code(),
        rule.name(),
        rule.severity(),
        set(rule),
        fixes(rule),
        rule.documentation()
    )
}

/// The CLI reference: the help of the command and of each visible subcommand, as `--help`
/// prints it.
fn cli_reference(cli: clap::Command) -> String {
    let mut cli = cli.term_width(100);
    // Building sets each subcommand's full name (`toolschema validate`) for its usage line.
    cli.build();
    let mut text = String::from(
        "<!-- Generated by `toolschema generate-docs` from the clap definitions. Do not edit. -->\n\n\
         # CLI reference\n\n\
         Each section is what `toolschema COMMAND --help` prints.\n\n\
         ## toolschema\n\n```text\n",
    );
    text.push_str(cli.render_long_help().to_string().trim_end());
    text.push_str("\n```\n");
    let names: Vec<String> = cli
        .get_subcommands()
        .filter(|sub| !sub.is_hide_set() && sub.get_name() != "help")
        .map(|sub| sub.get_name().to_string())
        .collect();
    for name in names {
        let Some(sub) = cli.find_subcommand_mut(&name) else {
            continue;
        };
        let help = sub.render_long_help().to_string();
        let _ = write!(
            text,
            "\n## toolschema {name}\n\n```text\n{}\n```\n",
            help.trim_end()
        );
    }
    text
}
