//! `toolschema lint`: find what makes tool catalogs unsafe or unreadable for clients, and fix it.

pub(crate) mod config;
mod printers;
mod write;

use crate::input::{display_name, read_text, FileBytes, InputError, ReadError};
use crate::output::{say, Escapes, TerminalSafe};
use crate::snapshot::{describe, snapshot_text, write_snapshot, ServerArgs};
use crate::Outcome;
use printers::{FileError, Printer, Style, Summary};
use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use toolschema::catalog::{CatalogError, CatalogErrorKind, CatalogShape};
use toolschema::lint::{FixError, Fixed, LintConfig, LintSettings, Linter, Severity, TextPiece};
use toolschema::text::terminal_safe;
use toolschema::CatalogLayout;

/// Arguments of `toolschema lint`.
#[derive(Debug, clap::Args)]
#[command(after_help = "\
Examples:
  toolschema lint examples/catalog.json
  toolschema lint examples/ --format sarif > lint.sarif
  toolschema lint examples/catalog.json --select SCH,pedantic --ignore unbounded-size --fail-on critical
  toolschema lint examples/catalog.json --fix > fixed.json
  toolschema lint examples/catalog.json --diff
  toolschema lint examples/catalog-v2.json --write --unsafe-fixes
  toolschema lint --statistics examples/
  toolschema lint -o tools.json -- npx -y @modelcontextprotocol/server-everything
  toolschema lint examples/catalog.json --target openai-strict,gemini-openapi

Rules run unless told otherwise: the default set. `pedantic` names the opt-in style and hardening
rules; `ALL` every rule. Settings may also come from a toolschema.toml, found from the current
directory upward:
  [lint]
  select = [\"default\", \"pedantic\"]
  ignore = [\"DESC-003\"]
  fail-on = \"warning\"
  target = [\"openai-strict\", \"gemini-openapi\"]
  [lint.severity]
  SCH-004 = \"info\"
  [lint.per-tool-ignores]
  \"legacy_*\" = [\"SCH-002\"]

Exit status: 0 when nothing at or above --fail-on is found, 1 when something is (or, with --diff,
when a fix would change a file), 2 for bad input (unreadable or malformed files, unknown rule codes,
a server that cannot be snapshotted).")]
pub struct LintArgs {
    /// Catalog files, or directories to search for *.json catalogs; `-` reads standard input.
    #[arg(value_name = "PATH", required_unless_present_any = ["command", "url"])]
    paths: Vec<String>,

    /// Output format: text (like a compiler), json, sarif (SARIF 2.1.0, for code scanning) or
    /// github (workflow annotations).
    #[arg(long, value_enum, default_value_t = printers::Format::Text)]
    format: printers::Format,

    /// Run only these rules: codes, prefixes, names, `default`, `pedantic` or `ALL`,
    /// comma-separated. Replaces toolschema.toml's selection.
    #[arg(long, value_name = "RULES", value_delimiter = ',')]
    select: Option<Vec<String>>,

    /// Do not run these rules: codes, prefixes or names, comma-separated.
    #[arg(long, value_name = "RULES", value_delimiter = ',')]
    ignore: Vec<String>,

    /// Also report what these model providers would reject or silently change (the COMPAT
    /// rules): openai, openai-strict, anthropic, gemini, gemini-openapi, comma-separated.
    /// Replaces toolschema.toml's target.
    #[arg(long, value_name = "PROFILES", value_delimiter = ',')]
    target: Option<Vec<String>>,

    /// Fail (exit 1) on findings at or above this severity [default: warning].
    #[arg(long, value_name = "SEVERITY", value_parser = parse_severity)]
    fail_on: Option<Severity>,

    /// Apply safe fixes and print the fixed catalog on standard output (one input).
    #[arg(long)]
    fix: bool,

    /// Apply fixes and rewrite the files in place (implies --fix). Symbolic links are followed;
    /// hard links, permissions and owners are kept; read-only files are refused.
    #[arg(long, conflicts_with = "diff")]
    write: bool,

    /// Print a unified diff of what the fixes would change, and change nothing.
    #[arg(long)]
    diff: bool,

    /// Also apply unsafe fixes: they change what callers must send.
    #[arg(long)]
    unsafe_fixes: bool,

    /// Show what each fix does, and list the fixes applied.
    #[arg(long)]
    show_fixes: bool,

    /// Print how many findings each rule has instead of the findings.
    #[arg(long, conflicts_with_all = ["fix", "write", "diff"])]
    statistics: bool,

    /// Exit 0 even when findings are at or above --fail-on (bad input still exits 2).
    #[arg(long)]
    exit_zero: bool,

    /// Print the findings only: no summary line, no notes.
    #[arg(short, long)]
    quiet: bool,

    /// Colour the text output: auto (when writing to a terminal and NO_COLOR is not set),
    /// always or never.
    #[arg(long, value_enum, value_name = "WHEN", default_value_t = ColorChoice::Auto)]
    color: ColorChoice,

    /// Read settings from this file instead of searching for toolschema.toml.
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,

    /// With a server (-- COMMAND or --url): keep its snapshot in FILE, and lint that file (the
    /// findings point into it).
    #[arg(short, long, value_name = "FILE")]
    output: Option<String>,

    #[command(flatten)]
    server: ServerArgs,
}

/// When text output is coloured.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum ColorChoice {
    Auto,
    Always,
    Never,
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
    /// A live server's snapshot, not kept in a file: its name and text.
    Snapshot(String, String),
}

impl Input {
    fn path(&self) -> &str {
        match self {
            Input::Stdin => "-",
            Input::File(p) | Input::Found(p) | Input::Snapshot(p, _) => p,
        }
    }
}

/// What the run does with each file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// Report the findings.
    Check,
    /// Print the fixed catalog on standard output.
    Print,
    /// Rewrite the files.
    Write,
    /// Print a diff of the fixes.
    Diff,
}

/// Run `toolschema lint`.
pub fn run(args: LintArgs, out: &mut dyn Write) -> Result<Outcome, InputError> {
    let settings = resolve_settings(&args)?;
    if args.output.is_some() && !args.server.is_given() {
        return Err(InputError(
            "-o keeps a server's snapshot: name the server with -- COMMAND or --url URL".into(),
        ));
    }
    if args.statistics
        && matches!(
            args.format,
            printers::Format::Sarif | printers::Format::Github
        )
    {
        return Err(InputError(
            "--statistics prints counts: use it with --format text or json".into(),
        ));
    }
    let mut inputs = collect_inputs(&args.paths)?;
    if args.server.is_given() {
        inputs.push(snapshot_input(&args)?);
    }
    let mode = match (args.write, args.diff, args.fix) {
        (true, _, _) => Mode::Write,
        (_, true, _) => Mode::Diff,
        (_, _, true) => Mode::Print,
        _ => Mode::Check,
    };
    if mode == Mode::Print && (inputs.len() != 1 || matches!(inputs.first(), Some(Input::Found(_))))
    {
        return Err(InputError(
            "--fix prints the fixed catalog on standard output, so it takes one file; use --write to fix files in place, or --diff to see the changes".into(),
        ));
    }
    if mode == Mode::Write
        && inputs
            .iter()
            .any(|i| matches!(i, Input::Stdin | Input::Snapshot(..)))
    {
        return Err(InputError(
            "--write cannot rewrite standard input or a snapshot that is not kept (use -o FILE); use --fix to print the fixed catalog".into(),
        ));
    }
    let fixing = mode != Mode::Check;
    // Edits are only needed to fix; reporting whether a fix exists does not build them.
    let linter = Linter::from_settings(&settings).with_edits(fixing);
    let stderr = std::io::stderr();
    let mut err_out = std::io::BufWriter::new(stderr.lock());
    // When the fixed catalog or a diff goes to standard output, findings go to standard error
    // as text.
    let to_stderr = matches!(mode, Mode::Print | Mode::Diff);
    let mut json_report;
    let (format, report_out, terminal): (printers::Format, &mut dyn Write, bool) = if to_stderr {
        (
            printers::Format::Text,
            &mut err_out,
            std::io::stderr().is_terminal(),
        )
    } else if matches!(
        args.format,
        printers::Format::Json | printers::Format::Sarif
    ) {
        json_report = TerminalSafe::new(&mut *out, Escapes::Json);
        (
            args.format,
            &mut json_report,
            std::io::stdout().is_terminal(),
        )
    } else {
        // Text and workflow commands escape what they print themselves: text may be coloured.
        (args.format, out, std::io::stdout().is_terminal())
    };
    let color = match args.color {
        ColorChoice::Always => true,
        ColorChoice::Never => false,
        ColorChoice::Auto => terminal && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty()),
    };
    let style = Style {
        color: color && format == printers::Format::Text,
        show_fixes: args.show_fixes,
        statistics: args.statistics,
        quiet: args.quiet,
    };
    let mut printer = Printer::new(format, style, &settings, report_out);
    let mut summary = Summary {
        dry_run: mode == Mode::Diff,
        ..Summary::default()
    };
    let mut fixed_output: Option<String> = None;
    let mut diffs = String::new();
    let mut applied: Vec<String> = Vec::new();
    let note = |message: String| {
        if !args.quiet {
            say!("note: {message}");
        }
    };
    printer.begin().map_err(write_error)?;
    for input in &inputs {
        let name = display_name(input.path()).to_string();
        if let Input::Found(path) = input {
            // Only regular files (or links to them) are taken from a directory: a named pipe
            // would wait for a writer forever, a device may never end. (One that cannot be
            // looked at is reported when it is read.)
            if std::fs::metadata(path).is_ok_and(|m| !m.is_file()) {
                note(format!("skipped {name}: not a regular file"));
                continue;
            }
        }
        let streamed = match (input, mode) {
            (Input::File(path) | Input::Found(path), Mode::Check) => {
                lint_in_pieces(&linter, &name, path, &mut printer, &mut summary)
            }
            _ => Ok(None),
        };
        let result = match streamed {
            Ok(Some(result)) => result,
            Err(e) => {
                unreadable(&mut printer, &mut summary, e)?;
                continue;
            }
            Ok(None) => {
                let read = match input {
                    Input::Snapshot(_, text) => Ok(text.clone()),
                    _ => read_text(input.path()),
                };
                let text = match read {
                    Ok(text) => text,
                    Err(e) => {
                        unreadable(&mut printer, &mut summary, e)?;
                        continue;
                    }
                };
                if matches!(input, Input::Found(_)) && !looks_like_catalog(&name, &text) {
                    note(format!("skipped {name}: not a tool catalog"));
                    continue;
                }
                if fixing {
                    linter
                        .fix(&name, &text, args.unsafe_fixes)
                        .and_then(|fixed| {
                            report_left(&fixed, &name, &mut printer, &mut summary);
                            if args.show_fixes {
                                applied.extend(fixed.applied.iter().map(|f| {
                                    let tool = f
                                        .tool
                                        .as_deref()
                                        .map(|t| format!(" (tool '{t}')"))
                                        .unwrap_or_default();
                                    format!("  {name}: {} {}{tool}", f.rule.code(), f.title)
                                }));
                            }
                            let done = match mode {
                                Mode::Write if fixed.text != text => {
                                    write::write_like_an_editor(Path::new(&name), &fixed.text)
                                        .map_err(|e| {
                                            FixError::Broken(format!("cannot write {name}: {e}"))
                                        })
                                }
                                Mode::Print => {
                                    fixed_output = Some(fixed.text);
                                    Ok(())
                                }
                                Mode::Diff => {
                                    diffs.push_str(&unified_diff(&name, &text, &fixed.text));
                                    Ok(())
                                }
                                _ => Ok(()),
                            };
                            if done.is_ok() {
                                summary.tools += fixed.remaining.tools;
                                summary.fixed += fixed.fixed;
                            }
                            done
                        })
                } else {
                    linter
                        .lint_each(&name, &text, |found| {
                            for d in found {
                                summary.count(d);
                                let _ = printer.diagnostic(&name, TextPiece::whole(&text), d);
                            }
                        })
                        .map(|tools| summary.tools += tools)
                        .map_err(FixError::from)
                }
            }
        };
        match result {
            Ok(()) => summary.files += 1,
            Err(FixError::Catalog(e))
                if matches!(input, Input::Found(_))
                    && matches!(e.kind, CatalogErrorKind::Shape(_)) =>
            {
                note(format!("skipped {name}: not a tool catalog"));
            }
            Err(e) => {
                summary.errors += 1;
                printer.error(file_error(&name, &e)).map_err(write_error)?;
            }
        }
    }
    printer.end(&summary).map_err(write_error)?;
    drop(printer);
    if !applied.is_empty() {
        let list = applied.join("\n");
        writeln!(err_out, "Fixes applied:\n{}", terminal_safe(&list)).map_err(write_error)?;
    }
    err_out.flush().map_err(write_error)?;
    if let Some(text) = fixed_output {
        out.write_all(text.as_bytes()).map_err(write_error)?;
    }
    out.write_all(diffs.as_bytes()).map_err(write_error)?;
    Ok(if summary.errors > 0 {
        Outcome::BadInput
    } else if args.exit_zero {
        Outcome::Valid
    } else if (mode == Mode::Diff && !diffs.is_empty()) || summary.at_or_above(settings.fail_on) > 0
    {
        Outcome::Invalid
    } else {
        Outcome::Valid
    })
}

/// Report a file that could not be read.
fn unreadable(
    printer: &mut Printer<'_>,
    summary: &mut Summary,
    error: ReadError,
) -> Result<(), InputError> {
    summary.errors += 1;
    printer
        .error(FileError {
            file: error.file,
            position: None,
            message: error.problem,
        })
        .map_err(write_error)
}

/// Lint the file at `path` read a piece at a time, printing its findings, so that a large
/// catalog is never held whole: `Ok(None)` when it must be read whole instead (only its whole
/// text can say what is wrong with it, or it is not a regular file).
fn lint_in_pieces(
    linter: &Linter,
    name: &str,
    path: &str,
    printer: &mut Printer<'_>,
    summary: &mut Summary,
) -> Result<Option<Result<(), FixError>>, ReadError> {
    let Some(source) = FileBytes::open(path)? else {
        return Ok(None);
    };
    let linted = linter.lint_source_each(name, &source, |found, piece| {
        for d in found {
            summary.count(d);
            let _ = printer.diagnostic(name, piece, d);
        }
    });
    Ok(match linted {
        Ok(None) => None,
        Ok(Some(tools)) if source.unchanged() => {
            summary.tools += tools;
            Some(Ok(()))
        }
        Ok(Some(_)) => Some(Err(FixError::Catalog(CatalogError {
            file: name.to_string(),
            position: None,
            kind: CatalogErrorKind::Read(
                "the file changed while it was linted: lint it again".into(),
            ),
        }))),
        Err(e) => Some(Err(FixError::Catalog(e))),
    })
}

/// Count and print the findings left after fixing a file.
fn report_left(fixed: &Fixed, name: &str, printer: &mut Printer<'_>, summary: &mut Summary) {
    for d in &fixed.remaining.diagnostics {
        summary.count(d);
        let _ = printer.diagnostic(name, TextPiece::whole(&fixed.text), d);
    }
}

/// A unified diff of one file's fixes, with `a/` and `b/` headers as git writes them (empty when
/// nothing changes).
fn unified_diff(name: &str, before: &str, after: &str) -> String {
    if before == after {
        return String::new();
    }
    // Patience, not Myers: Myers costs the file's length times the number of changed lines, and
    // a fix run over a large catalog changes a line in every tool (10,000 tools: 2 s). Patience
    // anchors on lines found once in each text, which every tool's name is.
    similar::TextDiff::configure()
        .algorithm(similar::Algorithm::Patience)
        .diff_lines(before, after)
        .unified_diff()
        .context_radius(3)
        // The lines are the file's own text; its name is escaped like any name printed.
        .header(
            &format!("a/{}", terminal_safe(name)),
            &format!("b/{}", terminal_safe(name)),
        )
        .to_string()
}

/// A failure to lint or fix a file, as a result to print.
fn file_error(name: &str, error: &FixError) -> FileError {
    match error {
        FixError::Catalog(e) => catalog_error(name, e),
        FixError::Broken(message) => FileError {
            file: name.to_string(),
            position: None,
            message: message.clone(),
        },
    }
}

fn catalog_error(name: &str, error: &CatalogError) -> FileError {
    FileError {
        file: name.to_string(),
        position: error.position,
        message: error.kind.to_string(),
    }
}

/// Take the snapshot of the server the arguments name: kept in `-o FILE` (then linted as that
/// file) or in memory.
fn snapshot_input(args: &LintArgs) -> Result<Input, InputError> {
    let target = args.server.require_target()?;
    let snapshot = args.server.snapshot(&target)?;
    let text = snapshot_text(&snapshot)?;
    let listed = describe(&snapshot, &target);
    match &args.output {
        Some(path) => {
            write_snapshot(path, &text)?;
            if !args.quiet {
                say!("toolschema: wrote {listed} to {path}");
            }
            Ok(Input::File(path.clone()))
        }
        None => {
            if !args.quiet {
                say!("toolschema: listed {listed}; -o FILE keeps the snapshot the findings point into");
            }
            // Named by its command line (or URL), as its pins are: what the user typed, and in
            // SARIF a URI that says which server the findings are about.
            let name = args.server.lock_key().unwrap_or_else(|| target.to_string());
            Ok(Input::Snapshot(name, text))
        }
    }
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
        target: args.target.clone(),
        ..LintConfig::default()
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
        // A path that cannot be read is reported with the results, like any unreadable file.
        let is_dir = std::fs::metadata(path).is_ok_and(|m| m.is_dir());
        if !is_dir {
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
