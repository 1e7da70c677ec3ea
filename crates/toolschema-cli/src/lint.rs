//! `toolschema lint`: find what makes tool catalogs unsafe or unreadable for clients, and fix it.

pub(crate) mod config;
mod printers;

use crate::input::{display_name, read_text, InputError};
use crate::Outcome;
use printers::{Printer, Summary};
use std::io::Write;
use std::path::{Path, PathBuf};
use toolschema::catalog::{CatalogErrorKind, CatalogShape};
use toolschema::lint::{FixError, LintConfig, LintSettings, Linter, Severity};
use toolschema::CatalogLayout;

/// Arguments of `toolschema lint`.
#[derive(Debug, clap::Args)]
#[command(after_help = "\
Examples:
  toolschema lint tools.json
  toolschema lint catalogs/ --format sarif > lint.sarif
  toolschema lint tools.json --select SCH --ignore SCH-004 --fail-on critical
  toolschema lint tools.json --fix > fixed.json
  toolschema lint catalogs/ --fix --write --unsafe-fixes

Settings may also come from a toolschema.toml, found from the current directory upward:
  [lint]
  select = [\"ALL\"]
  ignore = [\"DESC-003\"]
  fail-on = \"warning\"

Exit status: 0 when nothing at or above --fail-on is found, 1 when something is, 2 for bad input
(unreadable or malformed files, unknown rule codes).")]
pub struct LintArgs {
    /// Catalog files, or directories to search for *.json catalogs; `-` reads standard input.
    #[arg(value_name = "PATH", required = true)]
    paths: Vec<String>,

    /// Output format: text (like a compiler), json, sarif (SARIF 2.1.0, for code scanning) or
    /// github (workflow annotations).
    #[arg(long, value_enum, default_value_t = printers::Format::Text)]
    format: printers::Format,

    /// Run only these rules: codes or prefixes, comma-separated (SCH, SCH-001, ALL). Replaces
    /// toolschema.toml's selection.
    #[arg(long, value_name = "CODES", value_delimiter = ',')]
    select: Option<Vec<String>>,

    /// Do not run these rules: codes or prefixes, comma-separated.
    #[arg(long, value_name = "CODES", value_delimiter = ',')]
    ignore: Vec<String>,

    /// Fail (exit 1) on findings at or above this severity [default: warning].
    #[arg(long, value_name = "SEVERITY", value_parser = parse_severity)]
    fail_on: Option<Severity>,

    /// Apply safe fixes and print the fixed catalog on standard output (one input).
    #[arg(long)]
    fix: bool,

    /// Apply fixes and rewrite the files in place (implies --fix).
    #[arg(long)]
    write: bool,

    /// Also apply unsafe fixes: they change what callers must send.
    #[arg(long)]
    unsafe_fixes: bool,

    /// Read settings from this file instead of searching for toolschema.toml.
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
}

fn parse_severity(value: &str) -> Result<Severity, String> {
    value.parse()
}

/// One input to lint.
enum Input {
    Stdin,
    /// A file named on the command line.
    File(String),
    /// A file found in a directory: skipped quietly when it is JSON but not a catalog.
    Found(String),
}

impl Input {
    fn path(&self) -> &str {
        match self {
            Input::Stdin => "-",
            Input::File(p) | Input::Found(p) => p,
        }
    }
}

/// Run `toolschema lint`.
pub fn run(args: LintArgs, out: &mut dyn Write) -> Result<Outcome, InputError> {
    let settings = resolve_settings(&args)?;
    let inputs = collect_inputs(&args.paths)?;
    let fixing = args.fix || args.write;
    if fixing
        && !args.write
        && (inputs.len() != 1 || matches!(inputs.first(), Some(Input::Found(_))))
    {
        return Err(InputError(
            "--fix prints the fixed catalog on standard output, so it takes one file; use --write to fix files in place".into(),
        ));
    }
    if args.write && inputs.iter().any(|i| matches!(i, Input::Stdin)) {
        return Err(InputError(
            "--write cannot rewrite standard input; use --fix to print the fixed catalog".into(),
        ));
    }
    // Edits are only needed to fix; reporting whether a fix exists does not build them.
    let linter = Linter::new(settings.selection.clone()).with_edits(fixing);
    let to_stdout = fixing && !args.write;
    let stderr = std::io::stderr();
    let mut err_out = std::io::BufWriter::new(stderr.lock());
    // When the fixed catalog goes to standard output, findings go to standard error as text.
    let (format, report_out): (printers::Format, &mut dyn Write) = if to_stdout {
        (printers::Format::Text, &mut err_out)
    } else {
        (args.format, out)
    };
    let mut printer = Printer::new(format, &settings, report_out);
    let mut summary = Summary::default();
    let mut bad_input = false;
    printer.begin().map_err(write_error)?;
    let mut fixed_output: Option<String> = None;
    for input in &inputs {
        let name = display_name(input.path()).to_string();
        let text = match read_text(input.path()) {
            Ok(text) => text,
            Err(e) => {
                eprintln!("error: {e}");
                bad_input = true;
                continue;
            }
        };
        if matches!(input, Input::Found(_)) && !looks_like_catalog(&name, &text) {
            eprintln!("note: skipped {name}: not a tool catalog");
            continue;
        }
        let result = if fixing {
            lint_and_fix(
                &linter,
                &name,
                &text,
                args.unsafe_fixes,
                args.write,
                &mut printer,
                &mut summary,
            )
            .map(|fixed| {
                if to_stdout {
                    fixed_output = Some(fixed);
                }
            })
        } else {
            linter
                .lint_each(&name, &text, |found| {
                    for d in found {
                        summary.count(d);
                        let _ = printer.diagnostic(&name, &text, d);
                    }
                })
                .map(|tools| summary.tools += tools)
                .map_err(FixError::from)
        };
        match result {
            Ok(()) => summary.files += 1,
            Err(FixError::Catalog(e))
                if matches!(input, Input::Found(_))
                    && matches!(e.kind, CatalogErrorKind::Shape(_)) =>
            {
                eprintln!("note: skipped {name}: not a tool catalog");
            }
            Err(e) => {
                eprintln!("error: {e}");
                bad_input = true;
            }
        }
    }
    printer.end(&summary).map_err(write_error)?;
    drop(printer);
    err_out.flush().map_err(write_error)?;
    if let Some(text) = fixed_output {
        out.write_all(text.as_bytes()).map_err(write_error)?;
    }
    Ok(if bad_input {
        Outcome::BadInput
    } else if summary.at_or_above(settings.fail_on) > 0 {
        Outcome::Invalid
    } else {
        Outcome::Valid
    })
}

/// Fix one file, report what is left, and return the fixed text (written back with `write`).
fn lint_and_fix(
    linter: &Linter,
    name: &str,
    text: &str,
    unsafe_fixes: bool,
    write: bool,
    printer: &mut Printer<'_>,
    summary: &mut Summary,
) -> Result<String, FixError> {
    let fixed = linter.fix(name, text, unsafe_fixes)?;
    summary.tools += fixed.remaining.tools;
    summary.fixed += fixed.fixed;
    for d in &fixed.remaining.diagnostics {
        summary.count(d);
        let _ = printer.diagnostic(name, &fixed.text, d);
    }
    if write && fixed.text != text {
        write_in_place(Path::new(name), &fixed.text)
            .map_err(|e| FixError::Broken(format!("cannot write {name}: {e}")))?;
    }
    Ok(fixed.text)
}

/// Replace a file's contents through a temporary file in the same directory, so a failure never
/// leaves it half written. Keeps the file's permissions.
fn write_in_place(path: &Path, text: &str) -> std::io::Result<()> {
    let permissions = std::fs::metadata(path)?.permissions();
    let file_name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let temporary = path.with_file_name(format!(".{file_name}.toolschema-fix"));
    std::fs::write(&temporary, text)?;
    std::fs::set_permissions(&temporary, permissions)?;
    std::fs::rename(&temporary, path).inspect_err(|_| {
        let _ = std::fs::remove_file(&temporary);
    })
}

/// Whether a JSON file found in a directory is a catalog: any catalog shape, but a single tool
/// only when it has an `inputSchema` (a `package.json` has a `name` too). Files that do not parse
/// count as catalogs, so their errors are reported.
fn looks_like_catalog(name: &str, text: &str) -> bool {
    match CatalogLayout::scan(name, text) {
        Ok(layout) if layout.shape == CatalogShape::SingleTool => layout
            .read_tool(name, text, 0)
            .map_or(true, |tool| tool.value.get("inputSchema").is_some()),
        Ok(_) => true,
        Err(e) => !matches!(e.kind, CatalogErrorKind::Shape(_)),
    }
}

fn write_error(e: std::io::Error) -> InputError {
    InputError(format!("cannot write output: {e}"))
}

/// Combine toolschema.toml (given, or found upward from the current directory) with the flags.
fn resolve_settings(args: &LintArgs) -> Result<LintSettings, InputError> {
    let file = match &args.config {
        Some(path) => Some(config::read(path)?),
        None => config::find()?,
    };
    let command_line = LintConfig {
        select: args.select.clone(),
        ignore: args.ignore.clone(),
        fail_on: args.fail_on,
    };
    let mut layers: Vec<(&str, &LintConfig)> = Vec::new();
    if let Some((path, contents)) = &file {
        layers.push((path.as_str(), &contents.lint));
    }
    layers.push(("command line", &command_line));
    LintSettings::resolve(layers).map_err(|e| InputError(e.to_string()))
}

/// The files to lint: `-`, files as given, and the `*.json` files under directories (sorted,
/// skipping hidden entries, node_modules and target).
fn collect_inputs(paths: &[String]) -> Result<Vec<Input>, InputError> {
    let mut inputs = Vec::new();
    for path in paths {
        if path == "-" {
            inputs.push(Input::Stdin);
            continue;
        }
        let metadata =
            std::fs::metadata(path).map_err(|e| InputError(format!("{path}: cannot read: {e}")))?;
        if !metadata.is_dir() {
            inputs.push(Input::File(path.clone()));
            continue;
        }
        let mut found = Vec::new();
        find_json_files(Path::new(path), &mut found)
            .map_err(|e| InputError(format!("{path}: cannot read directory: {e}")))?;
        found.sort();
        inputs.extend(
            found
                .into_iter()
                .map(|p| Input::Found(p.to_string_lossy().into_owned())),
        );
    }
    Ok(inputs)
}

fn find_json_files(dir: &Path, found: &mut Vec<PathBuf>) -> std::io::Result<()> {
    let mut pending = vec![dir.to_path_buf()];
    while let Some(dir) = pending.pop() {
        for entry in std::fs::read_dir(&dir)? {
            let entry = entry?;
            let name = entry.file_name();
            let name = name.to_string_lossy();
            if name.starts_with('.') || name == "node_modules" || name == "target" {
                continue;
            }
            let kind = entry.file_type()?;
            if kind.is_dir() {
                pending.push(entry.path());
            } else if name.ends_with(".json") {
                found.push(entry.path());
            }
        }
    }
    Ok(())
}
