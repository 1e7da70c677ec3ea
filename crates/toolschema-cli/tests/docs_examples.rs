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
//! `interop/` (the test servers the suite installs), with `node_modules` linked to
//! `interop/node_modules` (so `npx -y PACKAGE` runs the installed server, offline) and `.venv` to
//! the PyPI servers. No shell, no pipes: only `toolschema`, `clap-demo` (the example of
//! `examples/clap-demo`) and `cargo run [--release] -p toolschema-cli|clap-demo -- ARGS` (the same
//! binaries; cargo's own progress lines are not shown). `< FILE` at the end gives the command
//! that file as its standard input; `> FILE` at the end writes its standard output there, and
//! only standard error is compared. `&` at the end starts a server in the background, for the
//! page's next commands: its output is the lines it prints first (as many as shown; they say it
//! is ready), and it is stopped (SIGTERM) when the page is done. A block may be indented under a
//! list item.
//!
//! Command lines outside console blocks (in `sh`, `yaml` or `text` blocks, or inline code such as
//! `` `toolschema lint x.json --fix` ``) are found too: each must be listed in `ELSEWHERE` with
//! what runs it (another test, a step of the test command, a benchmark script in smoke mode), so
//! nothing is added to the book silently unrun.
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
    /// The block's indentation (under a list item), given back to lines written on overwrite.
    indent: usize,
}

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The pages whose console blocks are checked.
fn pages() -> Vec<PathBuf> {
    let root = repo_root();
    let mut pages = Vec::new();
    collect_files(&root.join("docs/src"), &mut pages);
    pages.retain(|p| p.extension().is_some_and(|e| e == "md"));
    pages.push(root.join("README.md"));
    pages.sort();
    pages
}

/// The fence and the info string of a line opening a fenced block: three or more backticks
/// (four let a block hold a fence of three).
fn fence_of(line: &str) -> Option<(&str, &str)> {
    let opening = line.trim();
    let len = opening.chars().take_while(|c| *c == '`').count();
    (len >= 3).then(|| opening.split_at(len))
}

/// The cases of a page's ```` ```console ```` blocks.
fn parse_cases(text: &str) -> Vec<Case> {
    let lines: Vec<&str> = text.lines().collect();
    let mut cases = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        // A fence indented under a list item has its indentation stripped from its lines.
        let indent = lines[i].len() - lines[i].trim_start().len();
        let Some((fence, "console")) = fence_of(lines[i]) else {
            i += 1;
            continue;
        };
        i += 1;
        let mut current: Option<Case> = None;
        while i < lines.len() && lines[i].trim() != fence {
            let line = unindent(lines[i], indent);
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
                    indent,
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

/// A line of a block indented by `indent` columns, without that indentation.
fn unindent(line: &str, indent: usize) -> &str {
    let spaces = line.len() - line.trim_start_matches(' ').len();
    &line[spaces.min(indent)..]
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
            '<' | '>' if !in_word && !matches!(chars.peek(), Some('<' | '>' | '&')) => {
                words.push(c.to_string());
            }
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
    // `npx -y PACKAGE` finds the npm servers here, as in a project that installed them.
    std::os::unix::fs::symlink(
        root.join("interop/node_modules")
            .canonicalize()
            .expect("interop/node_modules"),
        dir.path().join("node_modules"),
    )
    .expect("link node_modules/");
    // The PyPI servers (`.venv/bin/mcp-server-time`), when the test command has installed them.
    if let Ok(venv) = root.join(".venv").canonicalize() {
        std::os::unix::fs::symlink(venv, dir.path().join(".venv")).expect("link .venv/");
    }
    dir
}

/// Whether a line is a JSON-RPC request: a JSON object with both an `id` and a `method`.
fn is_request(line: &str) -> bool {
    serde_json::from_str::<serde_json::Value>(line)
        .is_ok_and(|message| message.get("id").is_some() && message.get("method").is_some())
}

/// Whether a line is a JSON-RPC response: a JSON object with an `id` and no `method`.
fn is_response(line: &str) -> bool {
    serde_json::from_str::<serde_json::Value>(line)
        .is_ok_and(|message| message.get("id").is_some() && message.get("method").is_none())
}

/// The executable a page's command line runs, and its arguments.
///
/// - `toolschema ARGS`: the binary this crate builds.
/// - `clap-demo ARGS`: the example CLI of `examples/clap-demo`, built beside it (the test command
///   builds the workspace first; `cargo build -p clap-demo` builds it alone).
/// - `cargo run [--release] -p toolschema-cli|clap-demo -- ARGS`: the same binaries with ARGS.
///   Cargo's own progress lines (standard error) are not shown on the pages.
fn program_of(words: &[String]) -> Result<(PathBuf, &[String]), String> {
    let Some((program, args)) = words.split_first() else {
        return Err("an empty command".into());
    };
    match program.as_str() {
        "toolschema" => Ok((PathBuf::from(env!("CARGO_BIN_EXE_toolschema")), args)),
        "clap-demo" => Ok((clap_demo()?, args)),
        "cargo" => {
            let words: Vec<&str> = args.iter().map(String::as_str).collect();
            let (package, rest) = match words.as_slice() {
                ["run", "-p", package, "--", ..] => (*package, &args[4..]),
                ["run", "--release", "-p", package, "--", ..] => (*package, &args[5..]),
                _ => {
                    return Err(
                        "of cargo, only `cargo run [--release] -p PACKAGE -- ARGS` runs here"
                            .into(),
                    )
                }
            };
            match package {
                "toolschema-cli" => Ok((PathBuf::from(env!("CARGO_BIN_EXE_toolschema")), rest)),
                "clap-demo" => Ok((clap_demo()?, rest)),
                other => Err(format!(
                    "`cargo run -p {other}`: only toolschema-cli and clap-demo run here"
                )),
            }
        }
        other => Err(format!(
            "`{other}`: only `toolschema`, `clap-demo` and `cargo run -p` of them run here"
        )),
    }
}

/// The clap-demo binary of this build, refused when missing or older than its sources (a
/// stale binary would check the page against old code).
fn clap_demo() -> Result<PathBuf, String> {
    let binary = Path::new(env!("CARGO_BIN_EXE_toolschema")).with_file_name("clap-demo");
    let built = std::fs::metadata(&binary)
        .and_then(|m| m.modified())
        .map_err(|e| {
            format!(
                "{} is missing ({e}): build it with `cargo build -p clap-demo`",
                binary.display()
            )
        })?;
    let root = repo_root();
    let mut sources = Vec::new();
    for dir in ["examples/clap-demo/src", "crates/toolschema-clap/src"] {
        collect_files(&root.join(dir), &mut sources);
    }
    for source in sources {
        let changed = std::fs::metadata(&source).and_then(|m| m.modified());
        if changed.is_ok_and(|changed| changed > built) {
            return Err(format!(
                "{} is older than {}: rebuild it with `cargo build -p clap-demo`",
                binary.display(),
                source.display()
            ));
        }
    }
    Ok(binary)
}

fn collect_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            collect_files(&path, out);
        } else {
            out.push(path);
        }
    }
}

/// Start a command of a page in its scratch directory, its output piped.
fn spawn(words: &[String], dir: &Path, stdin: Stdio) -> Result<std::process::Child, String> {
    let (program, args) = program_of(words)?;
    // The PyPI servers' venv comes first on PATH, as once activated: `python -m mcp_server_time`
    // runs the installed server.
    let path = std::env::var_os("PATH").unwrap_or_default();
    let path = std::env::join_paths(
        std::iter::once(dir.join(".venv/bin")).chain(std::env::split_paths(&path)),
    )
    .map_err(|e| format!("PATH: {e}"))?;
    Command::new(program)
        .args(args)
        .current_dir(dir)
        .env("PATH", path)
        .env("NO_COLOR", "1")
        // npx uses the servers installed in the scratch directory and never downloads one: a
        // page cannot depend on the network.
        .env("npm_config_offline", "true")
        .env_remove("RUST_LOG")
        .stdin(stdin)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot run: {e}"))
}

/// A server a page started in the background (`$ COMMAND &`), stopped when the page is done.
struct Background(std::process::Child);

impl Drop for Background {
    fn drop(&mut self) {
        // SIGTERM, as `kill %1` in a shell: the proxy then closes its sessions and their
        // servers. SIGKILL only if it has not exited 10 s later.
        let _ = Command::new("kill").arg(self.0.id().to_string()).status();
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        while std::time::Instant::now() < deadline {
            if let Ok(Some(_)) = self.0.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Start a case that ends with `&`: a server the page's next commands reach. Its first lines
/// (standard output and error, as they come), as many as the page shows, are its output: they
/// say it is ready (the address it serves), so the case waits for them, up to 60 s. The exit
/// status is 0 while it runs, and its own once it has exited (it could not listen, say).
fn start_background(case: &Case, dir: &Path) -> Result<(Background, i32, Vec<String>), String> {
    let line = case.command.trim_end();
    let words = split_words(line.strip_suffix('&').unwrap_or(line))?;
    let mut child = spawn(&words, dir, Stdio::null())?;
    let (tx, rx) = std::sync::mpsc::channel::<String>();
    let streams: [Box<dyn Read + Send>; 2] = [
        Box::new(child.stdout.take().expect("piped stdout")),
        Box::new(child.stderr.take().expect("piped stderr")),
    ];
    for stream in streams {
        let tx = tx.clone();
        // Read to the end, so the server never blocks on a full pipe.
        std::thread::spawn(move || {
            for line in std::io::BufRead::lines(std::io::BufReader::new(stream)) {
                let Ok(line) = line else { break };
                let _ = tx.send(line);
            }
        });
    }
    drop(tx);
    let mut lines = Vec::new();
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    while lines.len() < case.output.len() {
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        match rx.recv_timeout(left) {
            Ok(line) => lines.push(line),
            Err(_) => break,
        }
    }
    let status = match child.try_wait() {
        Ok(Some(status)) => status.code().unwrap_or(-1),
        _ => 0,
    };
    Ok((Background(child), status, lines))
}

/// Run one case; the exit status and output lines it gave.
fn run(case: &Case, dir: &Path) -> Result<(i32, Vec<String>), String> {
    let mut words = split_words(&case.command)?;
    // `> FILE` at the end: standard output goes to that file, and only standard error is
    // compared (as a shell shows it).
    let stdout_file = match words.iter().position(|w| w == ">") {
        Some(at) if at + 2 == words.len() => {
            let file = words.pop().unwrap_or_default();
            words.pop();
            Some(dir.join(file))
        }
        Some(_) => return Err("`>` must come last, before one file".into()),
        None => None,
    };
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
    let mut child = spawn(&words, dir, Stdio::piped())?;
    // Standard input is written from a thread, a line at a time, as a client sends: after a
    // JSON-RPC request (a line with an `id` and a `method`) it waits for an answer (a line of
    // output) before it sends the next line. Then it is held open until the last request is
    // answered: closing it sooner would race the answers with the command's own shutdown.
    let (answered_tx, answered_rx) = std::sync::mpsc::channel::<()>();
    let mut input = child.stdin.take();
    let writer = std::thread::spawn(move || {
        if let (Some(pipe), Some(text)) = (input.as_mut(), stdin) {
            for line in String::from_utf8_lossy(&text).lines() {
                if pipe.write_all(format!("{line}\n").as_bytes()).is_err() || pipe.flush().is_err()
                {
                    break;
                }
                // A command that never answers still gets its input closed, and the case fails.
                if is_request(line) && answered_rx.recv_timeout(Duration::from_secs(60)).is_err() {
                    break;
                }
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
    // Where the line being read starts: each whole line that answers a request (a JSON-RPC
    // response, not a notification) lets the writer go on.
    let mut line_start = 0;
    loop {
        match stdout.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                out.extend_from_slice(&buf[..n]);
                while let Some(end) = out[line_start..].iter().position(|b| *b == b'\n') {
                    let line = String::from_utf8_lossy(&out[line_start..line_start + end]);
                    if is_response(&line) {
                        let _ = answered_tx.send(());
                    }
                    line_start += end + 1;
                }
            }
        }
    }
    drop(answered_tx);
    let status = child.wait().map_err(|e| format!("cannot run: {e}"))?;
    let _ = writer.join();
    let err = err_reader.join().unwrap_or_default();
    let mut text = String::new();
    match stdout_file {
        Some(file) => std::fs::write(&file, &out)
            .map_err(|e| format!("cannot write {}: {e}", file.display()))?,
        None => text.push_str(&String::from_utf8_lossy(&out)),
    }
    let output = std::process::Output {
        status,
        stdout: Vec::new(),
        stderr: err,
    };
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
        // Declared after `dir`, so dropped first: the servers stop before their folder goes.
        let mut background = Vec::new();
        for case in &cases {
            count += 1;
            let where_ = format!("{}:{}", shown.display(), case.line);
            let result = if case.command.trim_end().ends_with(" &") {
                start_background(case, dir.path()).map(|(server, status, lines)| {
                    background.push(server);
                    (status, lines)
                })
            } else {
                run(case, dir.path())
            };
            match result {
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
                    let pad = " ".repeat(case.indent);
                    let new: Vec<String> = new
                        .into_iter()
                        .map(|l| if l.is_empty() { l } else { format!("{pad}{l}") })
                        .collect();
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
    assert_eq!(
        split_words("toolschema a > b").unwrap(),
        ["toolschema", "a", ">", "b"]
    );
    assert!(split_words("toolschema a>b").is_err());
    assert!(split_words("toolschema a >> b").is_err());
    // Indented under a list item: the indentation is not part of the case.
    let cases = parse_cases("1. x\n\n   ```console\n   $ toolschema b\n   out\n   ```\n");
    assert_eq!(cases.len(), 1);
    assert_eq!(cases[0].command, "toolschema b");
    assert_eq!(cases[0].output, ["out"]);
    assert_eq!(cases[0].indent, 3);
    // What each program runs.
    let words = |line: &str| split_words(line).unwrap();
    let toolschema = PathBuf::from(env!("CARGO_BIN_EXE_toolschema"));
    let cargo_run = words("cargo run --release -p toolschema-cli -- validate x");
    let (program, args) = program_of(&cargo_run).unwrap();
    assert_eq!((program, args), (toolschema.clone(), &cargo_run[6..]));
    let plain = words("toolschema lint x");
    assert_eq!(program_of(&plain).unwrap(), (toolschema, &plain[1..]));
    for refused in [
        "cargo build",
        "cargo run -p other -- x",
        "sh -c x",
        "npx toolschema",
    ] {
        assert!(program_of(&words(refused)).is_err(), "{refused}");
    }
    assert_eq!(
        split_words("toolschema a < b").unwrap(),
        ["toolschema", "a", "<", "b"]
    );
    assert!(split_words("toolschema a | b").is_err());
    assert!(split_words("toolschema \"$HOME\"").is_err());
}

/// The exit statuses each subcommand's help examples may end with: those its help documents for
/// a run that did its job (1 is a finding, an invalid call or a drift where the command reports
/// one). 2 (bad input, a server that could not be reached, a usage error) is never one.
const HELP_EXAMPLE_STATUSES: &[(&str, &[i32])] = &[
    ("validate", &[0, 1]),
    ("snapshot", &[0]),
    ("call", &[0, 1]),
    ("fuzz", &[0, 1]),
    ("proxy", &[0]),
    ("lint", &[0, 1]),
    ("diff", &[0, 1]),
    ("pin", &[0]),
    // Run after the pin examples, against the same servers: nothing drifted.
    ("verify", &[0]),
    ("adapt", &[0]),
    ("completions", &[0]),
];

/// The server the help examples' URL, `http://127.0.0.1:3001/mcp`, reaches.
const HELP_EXAMPLE_URL_SERVER: &str =
    "toolschema proxy --listen 127.0.0.1:3001 -- npx -y @modelcontextprotocol/server-everything &";

/// The `Examples:` of every subcommand's help (the generated CLI reference, which test
/// `docs_generated` keeps equal to `--help`) run as written, in order, in one scratch directory
/// as a page's console blocks do. The help shows no output, so none is compared. Each example
/// must run instead: no usage error, an exit status its command documents for a run that did
/// its job ([`HELP_EXAMPLE_STATUSES`]), and nothing on standard error saying a file is missing.
/// The examples' URL is served by the proxy in front of server-everything
/// ([`HELP_EXAMPLE_URL_SERVER`]). An example that serves (`--listen`) is started, must say
/// where it serves, must answer a snapshot of its tools there ([`listing_case`]), and is
/// stopped. A stdio proxy example is given a client's session (`examples/proxy-session.jsonl`)
/// and must answer its initialize. `> ~/FILE` writes under a home folder of the scratch
/// directory, whose folders exist (as for a user who has them).
#[test]
fn every_example_of_every_help_runs() {
    let root = repo_root();
    let page = std::fs::read_to_string(root.join(GENERATED[0])).expect("read the CLI reference");
    let examples: Vec<Shown> = command_lines(&page)
        .into_iter()
        .filter(is_help_example)
        .collect();
    let dir = scratch_dir();
    let server = Case {
        line: 0,
        command: HELP_EXAMPLE_URL_SERVER.to_string(),
        status: 0,
        output: vec![String::new()],
        expected_lines: 0..0,
        indent: 0,
    };
    let (server, status, said) = start_background(&server, dir.path()).expect("start the server");
    assert!(
        status == 0
            && said
                .iter()
                .any(|l| l.contains("serving MCP at http://127.0.0.1:3001/mcp")),
        "`{HELP_EXAMPLE_URL_SERVER}` did not start (exit {status}): {said:?}"
    );
    let mut failures = Vec::new();
    for example in &examples {
        let words = split_words(&example.command).unwrap_or_default();
        let subcommand = words.get(1).map_or("", String::as_str);
        let Some((_, statuses)) = HELP_EXAMPLE_STATUSES.iter().find(|(c, _)| *c == subcommand)
        else {
            failures.push(format!(
                "line {}: `{}`: no exit statuses for `{subcommand}` in HELP_EXAMPLE_STATUSES",
                example.line, example.command
            ));
            continue;
        };
        // `> ~/FILE`: under the scratch directory's home folder, which has that file's folder.
        let command = match example.command.split_once("> ~/") {
            Some((head, file)) => {
                let file = format!("home/{file}");
                let folder = dir.path().join(&file);
                std::fs::create_dir_all(folder.parent().expect("a folder")).expect("mkdir");
                format!("{head}> {file}")
            }
            None => example.command.clone(),
        };
        let mut case = Case {
            line: example.line,
            command,
            status: 0,
            output: Vec::new(),
            expected_lines: 0..0,
            indent: 0,
        };
        let result = if words.iter().any(|w| w == "--listen") {
            case.command.push_str(" &");
            case.output = vec![String::new()];
            start_background(&case, dir.path()).and_then(|(running, status, lines)| {
                let serving = lines.iter().any(|l| l.contains("serving MCP at http://"));
                if !serving || status != 0 {
                    return Ok((if serving { status } else { -1 }, lines));
                }
                // Serving is not enough: a client lists the tools of the server behind it.
                let listed = run(&listing_case(&words, dir.path()), dir.path());
                drop(running);
                listed.map(|(status, mut listed)| {
                    listed.splice(0..0, lines);
                    (status, listed)
                })
            })
        } else if subcommand == "proxy" {
            // A stdio proxy with no client exits at once: a client's session shows it reaches
            // its server (the initialize is answered with a result).
            case.command.push_str(" < examples/proxy-session.jsonl");
            run(&case, dir.path()).map(|(status, lines)| {
                let initialized = lines.iter().any(|l| {
                    serde_json::from_str::<serde_json::Value>(l)
                        .is_ok_and(|m| m["id"] == 1 && m.get("result").is_some())
                });
                (if initialized { status } else { -1 }, lines)
            })
        } else {
            run(&case, dir.path())
        };
        match result {
            Err(e) => failures.push(format!("line {}: `{}`: {e}", example.line, example.command)),
            Ok((status, lines)) => {
                eprintln!("line {}: exit {status}: {}", example.line, example.command);
                // clap's usage errors, and the OS's word for a missing file.
                let complaint = lines.iter().find_map(|line| {
                    [
                        "error: unexpected argument",
                        "Usage: toolschema",
                        "error: invalid value",
                    ]
                    .into_iter()
                    .find(|c| line.starts_with(c))
                    .or_else(|| line.contains("No such file").then_some("No such file"))
                });
                if !statuses.contains(&status) || complaint.is_some() {
                    failures.push(format!(
                        "line {}: `{}`\n  exited {status} (documented: {statuses:?}){}:\n{}",
                        example.line,
                        example.command,
                        complaint
                            .map(|c| format!(", saying `{c}`"))
                            .unwrap_or_default(),
                        indent(&lines.iter().take(20).cloned().collect::<Vec<_>>()),
                    ));
                }
            }
        }
    }
    drop(server);
    eprintln!("help examples: {} run", examples.len());
    assert!(
        examples.len() >= 40,
        "only {} help examples found",
        examples.len()
    );
    assert!(
        failures.is_empty(),
        "{} of {} help examples do not run as written:\n\n{}",
        failures.len(),
        examples.len(),
        failures.join("\n\n")
    );
}

/// A snapshot of what a help example that serves (`--listen ADDRESS`) serves, as a client sends
/// it: to 127.0.0.1 at its port, with the first token of its `--auth-token-file`, if any.
fn listing_case(words: &[String], dir: &Path) -> Case {
    let after = |flag: &str| {
        let at = words.iter().position(|w| w == flag)?;
        words.get(at + 1).cloned()
    };
    let port = after("--listen")
        .and_then(|a| a.rsplit_once(':').map(|(_, p)| p.to_string()))
        .unwrap_or_default();
    let mut command = format!("toolschema snapshot --url http://127.0.0.1:{port}/mcp");
    if let Some(file) = after("--auth-token-file") {
        let tokens = std::fs::read_to_string(dir.join(file)).unwrap_or_default();
        let token = tokens
            .lines()
            .filter(|l| !l.starts_with('#'))
            .find_map(|l| l.split_once(':').map(|(_, t)| t.trim().to_string()))
            .unwrap_or_default();
        command.push_str(&format!(" --header 'Authorization: Bearer {token}'"));
    }
    Case {
        line: 0,
        command,
        status: 0,
        output: Vec::new(),
        expected_lines: 0..0,
        indent: 0,
    }
}

/// The programs whose command lines a page may show. A line of any fenced block, or an inline
/// code span, starting with one of them (or with `./scripts/`) is a command line.
const PROGRAMS: &[&str] = &[
    "toolschema",
    "clap-demo",
    "myapp",
    "cargo",
    "pip",
    "pipx",
    "uv",
    "uvx",
    "npx",
    "npm",
    "pre-commit",
    "node",
    "python",
    "python3",
    "kubectl",
    "docker",
    "promtool",
];

/// Pages generated from the code whose command lines need no entry: the CLI reference is each
/// subcommand's `--help` (test `docs_generated` keeps the page equal to what the binary prints).
/// Its `toolschema` lines, the help examples, are run by [`every_example_of_every_help_runs`];
/// any other line of it is counted as not run.
const GENERATED: &[&str] = &["docs/src/reference/cli.md"];

/// Whether a command line of the CLI reference is a help example: a `toolschema` line outside
/// console blocks (the help's examples are in text blocks).
fn is_help_example(shown: &Shown) -> bool {
    !shown.console && shown.command.starts_with("toolschema ")
}

/// How a command line that no console block runs is proven instead.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Proof {
    /// The file runs the same command line; the text is its step there.
    Runs(&'static str, &'static str),
    /// The file runs it with a local artifact or a test server in place of what the page names
    /// (a wheel file for `toolschema`, `interop/faulty-server.mjs` for `dist/server.js`), or
    /// with options that keep it in the test command's build (`--debug`, a scratch `--root`).
    RunsSubstituted(&'static str, &'static str),
    /// A benchmark script the file runs in smoke mode (its own code on tiny inputs, with the
    /// debug binaries; see scripts/usage.sh); the text is that step. The script must also be
    /// executable and answer `--help` with a help that names `--smoke`.
    Smoke(&'static str, &'static str),
    /// Not run: it needs what no test machine has (a Docker engine). The file holds what is
    /// checked of it instead; the text is that step.
    NeedsMissing(&'static str, &'static str),
}

use Proof::{NeedsMissing, Runs, RunsSubstituted, Smoke};

const PACKAGES: &str = "scripts/test-packages.sh";
const TEST_SH: &str = "scripts/test.sh";
const DEPLOY: &str = "scripts/test-deploy.sh";
/// `pip install` of the wheel built into target/dist/.
const WHEEL: Proof = RunsSubstituted(
    PACKAGES,
    "pip\" install --quiet --disable-pip-version-check --no-index \"$wheel\"",
);

/// `pipx run` of the wheel built into target/dist/ (its spec), then the quick start through it.
const PIPX_RUN: Proof = RunsSubstituted(
    PACKAGES,
    "\"$pipx_tools/bin/pipx\" run --quiet --spec \"$wheel\" toolschema",
);

/// `npm install` of the launcher and platform tarballs built into target/dist/.
const NPM_TARBALLS: Proof = RunsSubstituted(
    PACKAGES,
    "npm install --offline --no-audit --no-fund --loglevel=error \"${launchers[0]}\" \"${platforms[0]}\"",
);

/// Every command line the pages show that no console block runs: the command line as the
/// pages write it (comments cut), its proof, and the pages that show it. A line with no entry
/// fails the test, as does an entry for a page that does not show it.
const ELSEWHERE: &[(&str, Proof, &[&str])] = &[
    // Install lines: scripts/test-packages.sh installs what target/dist/ holds, as users do.
    ("pip install toolschema", WHEEL, &["README.md", "docs/src/getting-started.md", "docs/src/library/python.md"]),
    ("uvx toolschema lint tools.json", RunsSubstituted(PACKAGES, "quick_start uvx"), &["README.md"]),
    ("npx toolschema lint tools.json", RunsSubstituted(PACKAGES, "quick_start npm \"$npm_dir\" npx --no-install toolschema"), &["README.md", "docs/src/getting-started.md"]),
    ("pipx run toolschema lint tools.json", PIPX_RUN, &["README.md"]),
    ("npm install --save-dev toolschema", NPM_TARBALLS, &["README.md", "docs/src/getting-started.md"]),
    ("npm install toolschema", NPM_TARBALLS, &["docs/src/library/node.md"]),
    // Not published yet: the crate `cargo package` made, its workspace dependencies patched.
    ("cargo install toolschema-cli", RunsSubstituted(TEST_SH, "cargo install --path \"$install_root/toolschema-cli-$version\" --offline"), &["README.md", "docs/src/getting-started.md"]),
    // The test command builds the packages from the dev profile it already built.
    ("./scripts/package.sh", RunsSubstituted(TEST_SH, "TOOLSCHEMA_PACKAGE_PROFILE=dev ./scripts/package.sh"), &["README.md", "docs/src/getting-started.md", "docs/src/contributing/tests.md", "docs/src/benchmarks.md"]),
    ("pip install target/dist/toolschema-*.whl", WHEEL, &["README.md", "docs/src/getting-started.md"]),
    ("cargo install --locked --path crates/toolschema-cli", RunsSubstituted(TEST_SH, "cargo install --locked --path crates/toolschema-cli --debug --target-dir target --root"), &["README.md", "docs/src/getting-started.md", "docs/src/recipes/ci.md"]),
    ("./scripts/test.sh", Runs(".ci/run", "scripts/test.sh"), &["README.md", "docs/src/getting-started.md", "docs/src/contributing/tests.md"]),
    ("./scripts/docs.sh", Runs(TEST_SH, "./scripts/docs.sh"), &["README.md"]),
    ("cargo doc -p toolschema -p toolschema-clap --no-deps --open", RunsSubstituted("scripts/docs.sh", "cargo doc -p toolschema -p toolschema-clap --no-deps"), &["README.md"]),
    ("uvx toolschema", RunsSubstituted(PACKAGES, "quick_start uvx"), &["docs/src/getting-started.md"]),
    ("pipx run toolschema", PIPX_RUN, &["docs/src/getting-started.md"]),
    ("cargo fmt --check", RunsSubstituted(TEST_SH, "cargo fmt --all -- --check"), &["docs/src/contributing/tests.md"]),
    ("./scripts/test-data.sh", Runs(TEST_SH, "./scripts/test-data.sh"), &["docs/src/contributing/tests.md", "docs/src/benchmarks.md"]),
    ("cargo run -p toolschema-cli -- generate-docs docs/src", RunsSubstituted("crates/toolschema-cli/tests/docs_generated.rs", "generate-docs"), &["docs/src/contributing/tests.md", "docs/src/contributing/design.md"]),
    ("cargo doc -p toolschema --open", RunsSubstituted("scripts/docs.sh", "cargo doc -p toolschema -p toolschema-clap --no-deps"), &["docs/src/commands/pin-verify.md", "docs/src/library/toolschema.md"]),
    ("cargo doc -p toolschema-clap --open", RunsSubstituted("scripts/docs.sh", "cargo doc -p toolschema -p toolschema-clap --no-deps"), &["docs/src/library/clap.md"]),
    ("toolschema lint servers/ --format github", RunsSubstituted(PACKAGES, "lint --format github tools.json servers"), &["docs/src/recipes/ci.md"]),
    // A CI step naming the user's own server: the page runs it on the faulty server.
    ("toolschema fuzz --seed 1 --cases 100 --format junit -- node dist/server.js > fuzz.xml", RunsSubstituted("docs/src/recipes/fuzz-ci.md", "$ toolschema fuzz --seed 1 --cases 20 --tool divide --format junit -- node interop/faulty-server.mjs > fuzz.xml"), &["docs/src/recipes/fuzz-ci.md"]),
    // A rule page (generated from the rule's doc comment) names an option adapt's page runs.
    ("toolschema adapt --restore", RunsSubstituted("docs/src/commands/adapt.md", "$ toolschema adapt examples/catalog.json --to openai-strict --restore search_docs"), &["docs/src/rules/COMPAT-005.md"]),
    ("clap-demo mcp stream", Runs("examples/clap-demo/tests/common/mod.rs", ".args([\"mcp\", \"stream\"])"), &["docs/src/library/clap-http.md"]),
    // Benchmarks: the test command runs each in smoke mode (its own code on tiny inputs, with
    // the debug binaries; scripts/usage.sh), the validation benchmark as a test.
    ("cargo bench -p toolschema --bench validate", RunsSubstituted(TEST_SH, "cargo test --workspace --all-features --locked --bench validate"), &["docs/src/benchmarks.md"]),
    ("cargo test --bench validate", RunsSubstituted(TEST_SH, "cargo test --workspace --all-features --locked --bench validate"), &["docs/src/benchmarks.md"]),
    ("./scripts/bench-lint.sh", Smoke(TEST_SH, "./scripts/bench-lint.sh --smoke"), &["docs/src/benchmarks.md"]),
    ("./scripts/bench-proxy.sh", Smoke(TEST_SH, "./scripts/bench-proxy.sh --smoke"), &["docs/src/benchmarks.md"]),
    ("./scripts/bench-proxy-http.sh", Smoke(TEST_SH, "./scripts/bench-proxy-http.sh --smoke"), &["docs/src/benchmarks.md"]),
    ("./scripts/bench-serve.sh", Smoke(TEST_SH, "./scripts/bench-serve.sh --smoke"), &["docs/src/benchmarks.md"]),
    ("./scripts/bench-servers.sh", Smoke(TEST_SH, "./scripts/bench-servers.sh --smoke"), &["docs/src/benchmarks.md"]),
    ("./scripts/soak-http.sh", Smoke("crates/toolschema-cli/tests/soak_http.rs", "\"--short\".into()"), &["docs/src/benchmarks.md"]),
    ("./scripts/bench-hostile.sh", Smoke(TEST_SH, "./scripts/bench-hostile.sh --smoke"), &["docs/src/benchmarks.md"]),
    ("./scripts/bench-clap.sh", Smoke(TEST_SH, "./scripts/bench-clap.sh --smoke"), &["docs/src/benchmarks.md", "docs/src/library/clap.md"]),
    ("./scripts/bench-fuzz.sh", Smoke(TEST_SH, "./scripts/bench-fuzz.sh --smoke"), &["docs/src/benchmarks.md"]),
    ("./scripts/bench-node.sh", Smoke(TEST_SH, "./scripts/bench-node.sh --smoke"), &["docs/src/benchmarks.md"]),
    ("./scripts/bench-adapt.sh", Smoke(TEST_SH, "./scripts/bench-adapt.sh --smoke"), &["docs/src/benchmarks.md"]),
    // The package benchmarks, in smoke mode on the packages the test command built.
    ("./scripts/bench-install.sh", Smoke(TEST_SH, "./scripts/bench-install.sh --smoke"), &["docs/src/benchmarks.md"]),
    ("./scripts/bench-python.sh", Smoke(TEST_SH, "./scripts/bench-python.sh --smoke"), &["docs/src/benchmarks.md"]),
    ("cargo test --test soak_http", Runs(TEST_SH, "cargo test --workspace"), &["docs/src/benchmarks.md"]),
    // Deploy: no Docker engine and no cluster in the tests. scripts/test-deploy.sh renders what
    // `kubectl apply -k` applies, checks the Dockerfile against the repository, creates the
    // page's Secret client side and checks it is the one the manifests read, and runs --write
    // in a scratch copy.
    ("docker build --build-arg TOOLSCHEMA_BUILD_COMMIT=$(git rev-parse HEAD) -t registry.example.com/toolschema:0.1.0 .", NeedsMissing(DEPLOY, "scripts/check-deploy.py docker"), &["docs/src/recipes/kubernetes.md"]),
    ("docker push registry.example.com/toolschema:0.1.0", NeedsMissing("deploy/kubernetes/base/deployment.yaml", "image: registry.example.com/toolschema:0.1.0"), &["docs/src/recipes/kubernetes.md"]),
    ("kubectl create secret generic toolschema-proxy-tokens --from-file=tokens=./tokens --from-file=scrape-token=./scrape-token", RunsSubstituted(DEPLOY, "kubectl create secret generic toolschema-proxy-tokens --from-file=tokens=./tokens --from-file=scrape-token=./scrape-token --dry-run=client -o yaml"), &["docs/src/recipes/kubernetes.md"]),
    ("kubectl apply -k deploy/kubernetes/overlays/upstream", RunsSubstituted(DEPLOY, "kubectl kustomize \"deploy/kubernetes/overlays/$1\""), &["docs/src/recipes/kubernetes.md"]),
    ("kubectl apply -k deploy/kubernetes/overlays/listen-command", RunsSubstituted(DEPLOY, "kubectl kustomize \"deploy/kubernetes/overlays/$1\""), &["docs/src/recipes/kubernetes.md"]),
    ("promtool test rules deploy/prometheus/toolschema-rules.test.yml", Runs(DEPLOY, "promtool test rules deploy/prometheus/toolschema-rules.test.yml"), &["docs/src/recipes/kubernetes.md"]),
    ("promtool check rules", Runs(DEPLOY, "promtool check rules deploy/prometheus/toolschema-rules.yml"), &["docs/src/recipes/kubernetes.md"]),
    ("promtool test rules", Runs(DEPLOY, "promtool test rules deploy/prometheus/toolschema-rules.test.yml"), &["docs/src/recipes/kubernetes.md"]),
    ("./scripts/test-deploy.sh", Runs(TEST_SH, "./scripts/test-deploy.sh"), &["docs/src/recipes/kubernetes.md"]),
    ("./scripts/test-deploy.sh --write", Runs(DEPLOY, "(cd \"$copy\" && ./scripts/test-deploy.sh --write)"), &["docs/src/recipes/kubernetes.md"]),
    ("./scripts/bench-replicas.sh", Smoke("crates/toolschema-cli/tests/replicas_failover.rs", "\"--smoke\".to_string()"), &["docs/src/benchmarks.md", "docs/src/proxy/scale-out.md"]),
    // A replica behind HAProxy: tests/replicas_failover.rs starts three on free ports.
    ("toolschema proxy --listen 127.0.0.1:8001 --upstream http://127.0.0.1:8080/mcp", RunsSubstituted("interop/replica-failover.mjs", "[\"proxy\", \"--listen\", \"127.0.0.1:0\", \"--upstream\", upstreamUrl"), &["docs/src/proxy/scale-out.md"]),
];

/// A command line a page shows.
struct Shown {
    /// The page's line number (1-based).
    line: usize,
    /// The command line, continuation lines joined, a trailing `# comment` cut.
    command: String,
    /// Whether it is a case of a console block (so the test above runs it).
    console: bool,
}

/// Every command line of a page: the cases of its console blocks, the lines of its other
/// fenced blocks that start with `$ ` or a program (in YAML, after `run:`), and its inline code
/// spans that are command lines (see [`inline_command`]).
fn command_lines(text: &str) -> Vec<Shown> {
    let lines: Vec<&str> = text.lines().collect();
    let mut shown = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let Some((fence, info)) = fence_of(lines[i]) else {
            for span in code_spans(lines[i]) {
                if let Some(command) = inline_command(span) {
                    shown.push(Shown {
                        line: i + 1,
                        command,
                        console: false,
                    });
                }
            }
            i += 1;
            continue;
        };
        let console = info == "console";
        i += 1;
        // A block with `$ ` lines shows sessions: its other lines are output.
        let sessions = lines[i..]
            .iter()
            .take_while(|l| l.trim() != fence)
            .any(|l| l.trim().starts_with("$ "));
        while i < lines.len() && lines[i].trim() != fence {
            let start = i;
            let line = lines[i].trim();
            let command = if let Some(rest) = line.strip_prefix("$ ") {
                Some(rest)
            } else if console || sessions {
                None
            } else {
                let rest = line.strip_prefix("- ").unwrap_or(line);
                let rest = rest.strip_prefix("run: ").unwrap_or(rest);
                starts_with_program(rest).then_some(rest)
            };
            if let Some(first) = command {
                let mut command = first.to_string();
                while command.ends_with('\\') && i + 1 < lines.len() {
                    command.pop();
                    i += 1;
                    command.push_str(lines[i].trim_start());
                }
                let (command, comment) = cut_comment(&command);
                shown.push(Shown {
                    line: start + 1,
                    command: command.to_string(),
                    console,
                });
                for form in comment_forms(comment) {
                    shown.push(Shown {
                        line: start + 1,
                        command: form,
                        console: false,
                    });
                }
            }
            i += 1;
        }
        i += 1;
    }
    shown
}

/// The inline code spans of a line (single backticks).
fn code_spans(line: &str) -> Vec<&str> {
    line.split('`').skip(1).step_by(2).collect()
}

fn starts_with_program(text: &str) -> bool {
    let first = text.split_whitespace().next().unwrap_or("");
    PROGRAMS.contains(&first) || first.starts_with("./scripts/")
}

/// An inline code span is a command line when it starts with a program and is neither a
/// name nor a form: a script's path alone is one; `toolschema lint` (a program and a
/// subcommand) names a command; a placeholder in capitals (`FILE`, `@FILE`, `SERVER...`)
/// makes a form.
fn inline_command(span: &str) -> Option<String> {
    if !starts_with_program(span) {
        return None;
    }
    let words: Vec<&str> = span.split_whitespace().collect();
    let script = words[0].starts_with("./scripts/");
    let name = words.len() == 1 || (words.len() == 2 && !words[1].starts_with('-'));
    if name && !script {
        return None;
    }
    let placeholder = |word: &str| {
        let word = word.trim_start_matches('@').trim_end_matches("...");
        word.len() >= 2
            && word.starts_with(|c: char| c.is_ascii_uppercase())
            && word
                .chars()
                .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
    };
    if words.iter().any(|w| placeholder(w) || *w == "...") {
        return None;
    }
    Some(span.trim().to_string())
}

/// A command line split from its trailing `# comment` (a `#` after a space, outside quotes).
fn cut_comment(command: &str) -> (&str, &str) {
    let mut quote = None;
    let mut previous = ' ';
    for (at, c) in command.char_indices() {
        match (quote, c) {
            (None, '\'' | '"') => quote = Some(c),
            (Some(q), c) if c == q => quote = None,
            (None, '#') if previous.is_whitespace() => {
                return (command[..at].trim_end(), &command[at + 1..]);
            }
            _ => {}
        }
        previous = c;
    }
    (command.trim_end(), "")
}

/// The other forms a comment offers: `# a wheel; or: uvx toolschema, pipx run toolschema`
/// offers `uvx toolschema` and `pipx run toolschema`.
fn comment_forms(comment: &str) -> Vec<String> {
    let Some((_, forms)) = comment.split_once("or: ") else {
        return Vec::new();
    };
    forms
        .split(", ")
        .map(str::trim)
        .filter(|form| starts_with_program(form))
        .map(str::to_string)
        .collect()
}

/// Check a proof: the file and step it names are there; a benchmark script run in smoke mode
/// answers `--help` with a help that names `--smoke`.
fn check_proof(command: &str, proof: Proof) -> Result<(), String> {
    let root = repo_root();
    let (file, step) = match proof {
        Runs(file, step) | RunsSubstituted(file, step) | NeedsMissing(file, step) => (file, step),
        Smoke(file, step) => {
            let script = root.join(command.trim_start_matches("./"));
            let mode = std::fs::metadata(&script)
                .map_err(|e| format!("{}: {e}", script.display()))?
                .permissions();
            if std::os::unix::fs::PermissionsExt::mode(&mode) & 0o111 == 0 {
                return Err(format!("{} is not executable", script.display()));
            }
            let output = Command::new(&script)
                .arg("--help")
                .current_dir(&root)
                .output()
                .map_err(|e| format!("{}: {e}", script.display()))?;
            let help = String::from_utf8_lossy(&output.stdout);
            if !output.status.success() || !help.contains("--smoke") {
                return Err(format!(
                    "`{command} --help` exited {:?} printing {help:?}, which does not name \
                     --smoke",
                    output.status.code()
                ));
            }
            (file, step)
        }
    };
    let text = std::fs::read_to_string(root.join(file)).map_err(|e| format!("{file}: {e}"))?;
    if text.contains(step) {
        Ok(())
    } else {
        Err(format!("{file} has no step `{step}`"))
    }
}

#[test]
fn every_command_line_the_docs_show_is_run_or_listed_with_its_proof() {
    let root = repo_root().canonicalize().expect("the repository");
    let mut failures = Vec::new();
    let mut used = std::collections::HashSet::new();
    let mut all_console = std::collections::HashSet::new();
    let mut per_page = Vec::new();
    for page in pages() {
        let text = std::fs::read_to_string(&page).expect("read a page");
        let shown = command_lines(&text);
        all_console.extend(
            shown
                .iter()
                .filter(|s| s.console)
                .map(|s| s.command.clone()),
        );
        let name = page
            .canonicalize()
            .ok()
            .and_then(|p| p.strip_prefix(&root).ok().map(|p| p.display().to_string()))
            .unwrap_or_else(|| page.display().to_string());
        per_page.push((name, shown));
    }
    // (run and compared here, inline repeats of a console case, run elsewhere, run elsewhere
    // with a substitute, benchmarks run in smoke mode, not run, help examples run with their
    // status checked)
    let mut totals = [0usize; 8];
    let mut report = Vec::new();
    for (page, shown) in &per_page {
        let generated = GENERATED.contains(&page.as_str());
        let mut counts = [0usize; 8];
        for s in shown {
            if s.console {
                counts[0] += 1;
                continue;
            }
            if all_console.contains(&s.command) {
                counts[1] += 1;
                continue;
            }
            if generated {
                counts[if is_help_example(s) { 6 } else { 5 }] += 1;
                continue;
            }
            let entry = ELSEWHERE
                .iter()
                .position(|(c, _, pages)| *c == s.command && pages.contains(&page.as_str()));
            let Some(at) = entry else {
                failures.push(format!(
                    "{page}:{}: `{}` is not run: show it in a console block, or list it in \
                     ELSEWHERE with what runs it",
                    s.line, s.command
                ));
                continue;
            };
            used.insert((at, page.clone()));
            let proof = ELSEWHERE[at].1;
            if let Err(e) = check_proof(&s.command, proof) {
                failures.push(format!("{page}:{}: `{}`: {e}", s.line, s.command));
            }
            counts[match proof {
                Runs(..) => 2,
                RunsSubstituted(..) => 3,
                Smoke(..) => 4,
                NeedsMissing(..) => 7,
            }] += 1;
        }
        if counts.iter().sum::<usize>() > 0 {
            report.push(format!(
                "{page}: {} run here, {} inline repeating a case, {} run by another test or \
                 step, {} run there with a substitute, {} run there in smoke mode, {} not run, {} help \
                 examples run (status checked, no output shown), {} not runnable here (no Docker \
                 engine; checked)",
                counts[0], counts[1], counts[2], counts[3], counts[4], counts[5], counts[6], counts[7]
            ));
        }
        for (total, count) in totals.iter_mut().zip(counts) {
            *total += count;
        }
    }
    for (at, (command, _, pages)) in ELSEWHERE.iter().enumerate() {
        for page in *pages {
            if !used.contains(&(at, (*page).to_string())) {
                failures.push(format!(
                    "ELSEWHERE lists `{command}` on {page}, which does not show it: remove it"
                ));
            }
        }
    }
    eprintln!("{}", report.join("\n"));
    eprintln!(
        "command lines: {} run here, {} inline repeating a case, {} run by another test or step, \
         {} run there with a substitute, {} run there in smoke mode, {} not run, {} help examples run \
         (status checked, no output shown), {} not runnable here (no Docker engine; \
         checked)",
        totals[0], totals[1], totals[2], totals[3], totals[4], totals[5], totals[6], totals[7]
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn command_lines_are_found_in_every_kind_of_block() {
    let page = "Run `toolschema lint x.json --fix` or `toolschema lint` or `toolschema lint -- COMMAND`.\n\
                ```sh\nmyapp mcp tools      # a comment; or: npx x y, not this\ncargo run -p a -- \\\n  b\necho no\n```\n\
                ```yaml\n- run: toolschema lint servers/ # c\n```\n\
                ```text\n$ myapp x\nmyapp output is not a command\n```\n\
                ```console\n$ toolschema rules\ntoolschema output\n```\n\
                Scripts: `./scripts/bench-x.sh`, `toolschema validate --args @FILE`.\n";
    let shown: Vec<(usize, String, bool)> = command_lines(page)
        .into_iter()
        .map(|s| (s.line, s.command, s.console))
        .collect();
    let want = [
        (1, "toolschema lint x.json --fix", false),
        (3, "myapp mcp tools", false),
        (3, "npx x y", false),
        (4, "cargo run -p a -- b", false),
        (9, "toolschema lint servers/", false),
        (12, "myapp x", false),
        (16, "toolschema rules", true),
        (19, "./scripts/bench-x.sh", false),
    ];
    let want: Vec<(usize, String, bool)> = want
        .iter()
        .map(|(l, c, k)| (*l, (*c).to_string(), *k))
        .collect();
    assert_eq!(shown, want);
}
