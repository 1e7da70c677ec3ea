//! Every command line the book and the README show runs, and prints what they show.
//!
//! A ```` ```console ```` block in `docs/src/**/*.md` or `README.md`
//! holds cases, written as trycmd writes them:
//!
//! ```text
//! $ toolschema validate examples/catalog.json --tool search_docs --args '{"query": "rust"}'
//! ? 1
//! the output, standard output then standard error
//! ```
//!
//! A block may open with four backticks (```` ````console ````) when its output holds a fence.
//! `? N` is the exit status (0 when absent). In the output, a line `...` stands for any number
//! of lines and `[..]` for any text within a line (timings, paths of the machine). The commands
//! of one page run in order, in a scratch directory of their own holding a copy of `examples/`
//! (so `pin` then `verify` work, and nothing is written into the repository) and a link to
//! `interop/` (the test servers the suite installs). Only `toolschema` runs: no shell, no pipes;
//! `< FILE` at the end gives the command that file as its standard input.
//!
//! `DOCS_EXAMPLES=overwrite cargo test -p toolschema-cli --test docs_examples` writes each
//! failing case's actual status and output into its page, to review with `git diff`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

/// One command line of a page and what the page says it does.
struct Case {
    /// The page's line number of the `$` line (1-based), for messages.
    line: usize,
    /// The command line after `$ `, continuation lines joined.
    command: String,
    /// The exit status shown (`? N`), 0 when none is.
    status: i32,
    /// The expected output lines.
    output: Vec<String>,
    /// The page's lines (0-based, end exclusive) holding the status and output, to overwrite.
    expected_lines: std::ops::Range<usize>,
}

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The pages whose console blocks are checked.
fn pages() -> Vec<PathBuf> {
    let root = repo_root();
    let mut pages = Vec::new();
    collect_markdown(&root.join("docs/src"), &mut pages);
    pages.push(root.join("README.md"));
    pages.sort();
    pages
}

fn collect_markdown(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            collect_markdown(&path, out);
        } else if path.extension().is_some_and(|e| e == "md") {
            out.push(path);
        }
    }
}

/// The cases of a page's ```` ```console ```` blocks.
fn parse_cases(text: &str) -> Vec<Case> {
    let lines: Vec<&str> = text.lines().collect();
    let mut cases = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        // A fence of three or more backticks: four let the output hold a fence of three.
        let opening = lines[i].trim_end();
        let fence_len = opening.chars().take_while(|c| *c == '`').count();
        if fence_len < 3 || &opening[fence_len..] != "console" {
            i += 1;
            continue;
        }
        let fence = &opening[..fence_len];
        i += 1;
        let mut current: Option<Case> = None;
        while i < lines.len() && lines[i].trim_end() != fence {
            let line = lines[i];
            if let Some(rest) = line.strip_prefix("$ ") {
                if let Some(mut case) = current.take() {
                    case.expected_lines.end = i;
                    cases.push(case);
                }
                let start = i;
                let mut command = rest.to_string();
                while command.ends_with('\\') && i + 1 < lines.len() {
                    command.pop();
                    i += 1;
                    command.push_str(lines[i].trim_start());
                }
                current = Some(Case {
                    line: start + 1,
                    command,
                    status: 0,
                    output: Vec::new(),
                    expected_lines: i + 1..i + 1,
                });
            } else if let Some(case) = current.as_mut() {
                match line.strip_prefix("? ") {
                    Some(code) if case.output.is_empty() && case.status == 0 => {
                        case.status = code.trim().parse().unwrap_or(-1);
                    }
                    _ => case.output.push(line.to_string()),
                }
            }
            i += 1;
        }
        if let Some(mut case) = current.take() {
            case.expected_lines.end = i;
            cases.push(case);
        }
        i += 1;
    }
    cases
}

/// Split a command line as a POSIX shell would, for the forms the pages use: words, single
/// quotes, double quotes with `\"` and `\\`. Anything a shell would read as more than a command
/// (pipes, redirections, variables) is refused, so a page cannot show what this does not run.
fn split_words(line: &str) -> Result<Vec<String>, String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            ' ' | '\t' => {
                if in_word {
                    words.push(std::mem::take(&mut word));
                    in_word = false;
                }
            }
            '\'' => {
                in_word = true;
                loop {
                    match chars.next() {
                        Some('\'') => break,
                        Some(c) => word.push(c),
                        None => return Err("an unclosed single quote".into()),
                    }
                }
            }
            '"' => {
                in_word = true;
                loop {
                    match chars.next() {
                        Some('"') => break,
                        Some('\\') if matches!(chars.peek(), Some('"' | '\\' | '$' | '`')) => {
                            word.extend(chars.next());
                        }
                        Some('$' | '`') => return Err("a variable or command substitution".into()),
                        Some(c) => word.push(c),
                        None => return Err("an unclosed double quote".into()),
                    }
                }
            }
            '<' if !in_word => words.push("<".into()),
            '|' | '>' | '<' | '&' | ';' | '$' | '`' | '*' | '?' => {
                return Err(format!("`{c}`, which only a shell reads"));
            }
            c => {
                in_word = true;
                word.push(c);
            }
        }
    }
    if in_word {
        words.push(word);
    }
    Ok(words)
}

/// Whether `actual` matches `expected`, where a line `...` matches any lines and `[..]` any
/// text within a line.
fn matches(expected: &[String], actual: &[&str]) -> bool {
    match expected.split_first() {
        None => actual.is_empty(),
        Some((first, rest)) if first == "..." => {
            (0..=actual.len()).any(|skip| matches(rest, &actual[skip..]))
        }
        Some((first, rest)) => match actual.split_first() {
            Some((line, others)) => line_matches(first, line) && matches(rest, others),
            None => false,
        },
    }
}

fn line_matches(expected: &str, actual: &str) -> bool {
    let mut parts = expected.split("[..]");
    let Some(head) = parts.next() else {
        return expected == actual;
    };
    let Some(mut rest) = actual.strip_prefix(head) else {
        return false;
    };
    let parts: Vec<&str> = parts.collect();
    for (n, part) in parts.iter().enumerate() {
        if n + 1 == parts.len() {
            return rest.ends_with(part);
        }
        match rest.find(part) {
            Some(at) => rest = &rest[at + part.len()..],
            None => return false,
        }
    }
    rest.is_empty()
}

/// A scratch directory for one page: a copy of the example catalogs, a link to the test
/// servers.
fn scratch_dir() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let root = repo_root();
    let examples = dir.path().join("examples");
    std::fs::create_dir(&examples).expect("create examples/");
    for entry in std::fs::read_dir(root.join("examples"))
        .expect("read examples/")
        .flatten()
    {
        if entry.path().is_file() {
            std::fs::copy(entry.path(), examples.join(entry.file_name())).expect("copy an example");
        }
    }
    std::os::unix::fs::symlink(
        root.join("interop").canonicalize().expect("interop/"),
        dir.path().join("interop"),
    )
    .expect("link interop/");
    dir
}

/// The JSON-RPC requests in a file of JSON lines: lines with both an `id` and a `method`.
fn count_requests(text: &[u8]) -> usize {
    String::from_utf8_lossy(text)
        .lines()
        .filter_map(|line| serde_json::from_str::<serde_json::Value>(line).ok())
        .filter(|message| message.get("id").is_some() && message.get("method").is_some())
        .count()
}

/// Run one case; the exit status and output lines it gave.
fn run(case: &Case, dir: &Path) -> Result<(i32, Vec<String>), String> {
    let mut words = split_words(&case.command)?;
    // `< FILE` at the end: the command's standard input (otherwise it reads an empty one).
    let stdin = match words.iter().position(|w| w == "<") {
        Some(at) if at + 2 == words.len() => {
            let file = words.pop().unwrap_or_default();
            words.pop();
            let text =
                std::fs::read(dir.join(&file)).map_err(|e| format!("cannot read {file}: {e}"))?;
            Some(text)
        }
        Some(_) => return Err("`<` must come last, before one file".into()),
        None => None,
    };
    let Some((program, args)) = words.split_first() else {
        return Err("an empty command".into());
    };
    if program != "toolschema" {
        return Err(format!("`{program}`: only `toolschema` commands run here"));
    }
    let mut child = Command::new(env!("CARGO_BIN_EXE_toolschema"))
        .args(args)
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .env_remove("RUST_LOG")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot run: {e}"))?;
    // Standard input is written from a thread, and held open as a client holds its end open:
    // until the command has answered each JSON-RPC request of the file (a line with an `id`
    // and a `method`), one line per answer. Closing it sooner would race the answers with the
    // command's own shutdown.
    let requests = stdin.as_deref().map_or(0, count_requests);
    let (answered_tx, answered_rx) = std::sync::mpsc::channel::<()>();
    let mut input = child.stdin.take();
    let writer = std::thread::spawn(move || {
        if let (Some(pipe), Some(text)) = (input.as_mut(), stdin) {
            let _ = pipe.write_all(&text);
            let _ = pipe.flush();
        }
        for _ in 0..requests {
            // A command that never answers still gets its input closed, and the case fails.
            if answered_rx.recv_timeout(Duration::from_secs(60)).is_err() {
                break;
            }
        }
        drop(input);
    });
    let mut stdout = child.stdout.take().expect("piped stdout");
    let mut stderr = child.stderr.take().expect("piped stderr");
    let err_reader = std::thread::spawn(move || {
        let mut text = Vec::new();
        let _ = stderr.read_to_end(&mut text);
        text
    });
    let mut out = Vec::new();
    let mut buf = [0u8; 8192];
    loop {
        match stdout.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                for _ in buf[..n].iter().filter(|b| **b == b'\n') {
                    let _ = answered_tx.send(());
                }
                out.extend_from_slice(&buf[..n]);
            }
        }
    }
    drop(answered_tx);
    let status = child.wait().map_err(|e| format!("cannot run: {e}"))?;
    let _ = writer.join();
    let err = err_reader.join().unwrap_or_default();
    let output = std::process::Output {
        status,
        stdout: out,
        stderr: err,
    };
    let mut text = String::from_utf8_lossy(&output.stdout).into_owned();
    text.push_str(&String::from_utf8_lossy(&output.stderr));
    let lines = text.lines().map(str::to_string).collect();
    Ok((output.status.code().unwrap_or(-1), lines))
}

#[test]
fn every_command_line_in_the_docs_runs_and_prints_what_the_docs_show() {
    let overwrite = std::env::var("DOCS_EXAMPLES").is_ok_and(|v| v == "overwrite");
    let root = repo_root().canonicalize().expect("the repository");
    let mut failures = Vec::new();
    let mut count = 0;
    for page in pages() {
        let text = std::fs::read_to_string(&page).expect("read a page");
        let cases = parse_cases(&text);
        if cases.is_empty() {
            continue;
        }
        let shown = page
            .canonicalize()
            .ok()
            .and_then(|p| p.strip_prefix(&root).ok().map(Path::to_path_buf))
            .unwrap_or_else(|| page.clone());
        let dir = scratch_dir();
        let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
        let mut rewrites = Vec::new();
        for case in &cases {
            count += 1;
            let where_ = format!("{}:{}", shown.display(), case.line);
            match run(case, dir.path()) {
                Err(e) => failures.push(format!("{where_}: `{}`: {e}", case.command)),
                Ok((status, actual)) => {
                    let refs: Vec<&str> = actual.iter().map(String::as_str).collect();
                    if status == case.status && matches(&case.output, &refs) {
                        continue;
                    }
                    failures.push(format!(
                        "{where_}: `{}`\n  expected exit {}:\n{}\n  got exit {status}:\n{}",
                        case.command,
                        case.status,
                        indent(&case.output),
                        indent(&actual),
                    ));
                    let mut new = Vec::new();
                    if status != 0 {
                        new.push(format!("? {status}"));
                    }
                    new.extend(actual);
                    rewrites.push((case.expected_lines.clone(), new));
                }
            }
        }
        if overwrite && !rewrites.is_empty() {
            for (range, new) in rewrites.into_iter().rev() {
                lines.splice(range, new);
            }
            let mut new_text = lines.join("\n");
            new_text.push('\n');
            std::fs::write(&page, new_text).expect("overwrite a page");
        }
    }
    eprintln!("docs examples: {count} command lines checked");
    assert!(count > 0, "no console block found in the docs");
    assert!(
        failures.is_empty(),
        "{} of {count} documented command lines differ from what they do:\n\n{}\n\n\
         Fix the page or the code; `DOCS_EXAMPLES=overwrite cargo test -p toolschema-cli --test \
         docs_examples` writes what the commands print into the pages, to review with git diff.",
        failures.len(),
        failures.join("\n\n")
    );
}

fn indent(lines: &[String]) -> String {
    lines
        .iter()
        .map(|l| format!("    | {l}"))
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn the_harness_reads_pages_as_described() {
    let page = "text\n```console\n$ toolschema a 'b c' \"d\\\"e\" \\\n  f\n? 2\nout [..] here\n...\nend\n$ toolschema g\n```\n";
    let cases = parse_cases(page);
    assert_eq!(cases.len(), 2);
    assert_eq!(
        split_words(&cases[0].command).unwrap(),
        ["toolschema", "a", "b c", "d\"e", "f"]
    );
    assert_eq!(cases[0].status, 2);
    assert_eq!(cases[0].output, ["out [..] here", "...", "end"]);
    assert_eq!(cases[1].status, 0);
    assert!(cases[1].output.is_empty());
    assert!(matches(
        &cases[0].output,
        &["out 1.2 s here", "x", "y", "end"]
    ));
    assert!(!matches(&cases[0].output, &["out 1.2 s here", "x"]));
    assert!(!matches(&cases[0].output, &["out here", "end"]));
    assert!(split_words("toolschema a > b").is_err());
    assert_eq!(
        split_words("toolschema a < b").unwrap(),
        ["toolschema", "a", "<", "b"]
    );
    assert!(split_words("toolschema a | b").is_err());
    assert!(split_words("toolschema \"$HOME\"").is_err());
}
