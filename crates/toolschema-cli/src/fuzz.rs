//! `toolschema fuzz`: call a live server's tools with the arguments their schemas allow and
//! forbid, and report what it does wrong.

use crate::input::{parse_json, parse_seconds, read_text, InputError};
use crate::output::{say, Escapes, TerminalSafe};
use crate::server_args::ServerAddress;
use crate::Outcome;
use serde_json::{json, Value};
use std::io::{IsTerminal, Write};
use std::time::Duration;
use toolschema::text::count;
use toolschema::text::terminal_safe;
use toolschema::Glob;
use toolschema_mcp::fuzz::{
    self, Check, Finding, FuzzOptions, Progress, ReplayRequest, Report, Severity,
};

/// Arguments of `toolschema fuzz`.
#[derive(Debug, clap::Args)]
#[command(after_help = "\
Examples:
  toolschema fuzz -- python -m mcp_server_time
  toolschema fuzz --seed 42 --cases 50 --tool 'get-*' -- npx -y @modelcontextprotocol/server-everything
  toolschema fuzz --url http://127.0.0.1:3001/mcp --tool echo --format junit > fuzz.xml
  toolschema fuzz --format json -- python -m mcp_server_time > findings.json
  toolschema fuzz --replay findings.json -- python -m mcp_server_time

Checks: crash, hang, protocol-violation, internal-error, accepted-invalid, output-schema, leak
(errors and warnings), rejected-valid (information only). Every finding comes with its arguments,
shrunk, and the JSON-RPC line that replays it; --seed repeats a run exactly.
Exit status: 0 nothing at error or warning severity, 1 something was found, 2 the server could
not be started or reached.")]
pub struct FuzzArgs {
    #[command(flatten)]
    server: ServerAddress,

    /// The seed of the cases (printed by every run; the same seed sends the same cases).
    #[arg(long, value_name = "N")]
    seed: Option<u64>,

    /// Cases per tool.
    #[arg(long, value_name = "N", default_value_t = 100)]
    cases: usize,

    /// How long one call may take before it counts as a hang, in seconds.
    #[arg(long, value_name = "SECONDS", default_value = "10", value_parser = parse_seconds)]
    timeout: Duration,

    /// How long the whole run may take, in seconds: then no further case is sent, and the
    /// report says which tools it cut short.
    #[arg(long, value_name = "SECONDS", default_value = "50", value_parser = parse_seconds)]
    budget: Duration,

    /// How long shrinking one hang may take, in seconds (default: twice --timeout); the hang is
    /// then reported with the smallest case found by then.
    #[arg(long, value_name = "SECONDS", value_parser = parse_seconds)]
    hang_shrink_budget: Option<Duration>,

    /// How many tools are called side by side (default: one per CPU, at least 2, at most 8).
    #[arg(long, value_name = "N", default_value_t = default_jobs(), value_parser = clap::value_parser!(u16).range(1..))]
    jobs: u16,

    /// Fuzz (or replay) only the tools whose name matches GLOB (`*` and `?`; repeatable).
    #[arg(long = "tool", value_name = "GLOB")]
    tools: Vec<String>,

    /// Leave out the tools whose name matches GLOB, in a run and a replay (repeatable).
    #[arg(long = "skip", value_name = "GLOB")]
    skip: Vec<String>,

    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,

    /// Send the findings of an earlier run again (its --format json output) and report which
    /// still fail.
    #[arg(long, value_name = "FINDINGS.json")]
    replay: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum Format {
    /// Grouped by tool, like a test runner.
    Text,
    /// One JSON document: seed, findings, summary.
    Json,
    /// JUnit XML: one test case per tool, for CI test reports.
    Junit,
}

/// Run `toolschema fuzz`.
pub fn run(args: FuzzArgs, out: &mut dyn Write) -> Result<Outcome, InputError> {
    let mut out = TerminalSafe::new(
        out,
        match args.format {
            Format::Text => Escapes::Text,
            // In JUnit XML, a `\u001b` escape is text like any other.
            Format::Json | Format::Junit => Escapes::Json,
        },
    );
    let out: &mut dyn Write = &mut out;
    let target = args.server.require_target()?;
    let replaying = match &args.replay {
        Some(path) => {
            let (seed, requests, outside) = read_findings(path)?;
            if outside > 0 {
                say!(
                    "note: {} of {path} happened outside any call (output while no call waited, a crash nothing could tie to a call): nothing can send {} again; a run without --replay looks for {} anew",
                    count(outside, "finding", "findings"),
                    toolschema::text::noun(outside as u64, "it", "them"),
                    toolschema::text::noun(outside as u64, "it", "them"),
                );
            }
            Some((seed, requests))
        }
        None => None,
    };
    let seed = args
        .seed
        .or(replaying.as_ref().and_then(|(seed, _)| *seed))
        .unwrap_or_else(seed_from_clock);
    let options = FuzzOptions {
        seed,
        cases: args.cases,
        timeout: args.timeout,
        jobs: usize::from(args.jobs),
        tools: args.tools.iter().map(Glob::new).collect(),
        skip: args.skip.iter().map(Glob::new).collect(),
        headers: args.server.headers()?,
        max_message_bytes: args.server.max_message_bytes,
        budget: Some(args.budget),
        hang_shrink_budget: args.hang_shrink_budget,
    };
    // A replay sends again only the findings of the tools --tool and --skip select.
    let replaying = replaying.map(|(seed, requests)| {
        let all = requests.len();
        let kept: Vec<_> = requests
            .into_iter()
            .filter(|request| options.selects(&request.tool))
            .collect();
        if kept.len() < all {
            say!(
                "note: {} left out by --tool/--skip",
                count(all - kept.len(), "finding", "findings")
            );
        }
        (seed, kept)
    });
    let bar = ProgressBar::new();
    let runtime = toolschema_mcp::runtime()
        .map_err(|e| InputError(format!("cannot start the async runtime: {e}")))?;
    let result = match &replaying {
        Some((_, requests)) => runtime.block_on(fuzz::replay(&target, &options, requests, &bar)),
        None => runtime.block_on(fuzz::run(&target, &options, &bar)),
    };
    runtime.shutdown_background();
    bar.finish();
    let report = result.map_err(|e| InputError(e.to_string()))?;
    let replayed = replaying.as_ref().map(|(_, requests)| requests.len());
    let text = match args.format {
        Format::Text => text_report(&report, &options, replayed),
        Format::Json => json_report(&report),
        Format::Junit => junit_report(&report),
    };
    out.write_all(text.as_bytes())
        .map_err(|e| InputError(format!("cannot write output: {e}")))?;
    if let Some(why) = &report.stopped {
        say!("error: the run stopped early: {why}");
    }
    Ok(if report.failed() {
        Outcome::Invalid
    } else if report.stopped.is_some() {
        Outcome::BadInput
    } else {
        Outcome::Valid
    })
}

/// A seed for a run that was given none; kept below 2^32 so it reads easily and survives JSON
/// readers that hold numbers as doubles.
fn seed_from_clock() -> u64 {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or_default();
    u64::from((nanos ^ (nanos >> 32)) as u32)
}

/// The findings of an earlier run (`--format json`) to send again, its seed, and how many of its
/// findings happened outside any call (nothing to send again).
fn read_findings(path: &str) -> Result<(Option<u64>, Vec<ReplayRequest>, usize), InputError> {
    let text = read_text(path)?;
    let document = parse_json(path, &text)?;
    let (seed, findings) = match &document {
        Value::Object(map) => (
            map.get("seed").and_then(Value::as_u64),
            map.get("findings").and_then(Value::as_array),
        ),
        Value::Array(findings) => (None, Some(findings)),
        _ => (None, None),
    };
    let findings = findings.ok_or_else(|| {
        InputError(format!(
            "{path}: not the output of toolschema fuzz --format json (no \"findings\" array)"
        ))
    })?;
    let mut requests = Vec::new();
    let mut outside = 0;
    for (i, finding) in findings.iter().enumerate() {
        let tool = match finding.get("tool") {
            Some(Value::String(tool)) => tool.clone(),
            // A finding outside any call has nothing to send again.
            Some(Value::Null) | None => {
                outside += 1;
                continue;
            }
            Some(_) => {
                return Err(InputError(format!(
                    "{path}: findings[{i}].tool is not a string"
                )))
            }
        };
        let check = match finding.get("check").and_then(Value::as_str) {
            Some(name) => Some(Check::from_name(name).ok_or_else(|| {
                InputError(format!(
                    "{path}: findings[{i}].check '{name}' is not a check"
                ))
            })?),
            None => None,
        };
        let arguments = match finding.get("arguments") {
            None | Some(Value::Null) => None,
            Some(arguments) => Some(arguments.clone()),
        };
        requests.push(ReplayRequest {
            tool,
            check,
            arguments,
        });
    }
    Ok((seed, requests, outside))
}

/// A progress bar on stderr, only when stderr is a terminal.
struct ProgressBar(Option<indicatif::ProgressBar>);

impl ProgressBar {
    fn new() -> Self {
        if !std::io::stderr().is_terminal() {
            return ProgressBar(None);
        }
        let bar = indicatif::ProgressBar::new(0);
        if let Ok(style) =
            indicatif::ProgressStyle::with_template("{spinner} {pos}/{len} cases [{elapsed}] {msg}")
        {
            bar.set_style(style);
        }
        ProgressBar(Some(bar))
    }

    fn finish(&self) {
        if let Some(bar) = &self.0 {
            bar.finish_and_clear();
        }
    }
}

impl Progress for ProgressBar {
    fn planned(&self, tools: usize, cases: usize) {
        if let Some(bar) = &self.0 {
            bar.set_length(cases as u64);
            bar.set_message(count(tools, "tool", "tools"));
        }
    }

    fn fewer_cases(&self, fewer: usize) {
        if let Some(bar) = &self.0 {
            bar.dec_length(fewer as u64);
        }
    }

    fn case_done(&self, _tool: &str) {
        if let Some(bar) = &self.0 {
            bar.inc(1);
        }
    }

    fn waiting(&self, what: &str) {
        if let Some(bar) = &self.0 {
            bar.set_message(terminal_safe(what).to_string());
        }
    }

    fn found(&self, finding: &Finding) {
        if let Some(bar) = &self.0 {
            bar.println(format!(
                "found: {} {} ({})",
                terminal_safe(finding.tool.as_deref().unwrap_or("(server)")),
                finding.check,
                finding.severity.name()
            ));
        }
    }
}

/// Arguments as one line of text, cut when long.
fn arguments_text(arguments: Option<&Value>) -> String {
    const SHOWN: usize = 300;
    match arguments {
        None => "(absent)".into(),
        Some(arguments) => {
            let text = arguments.to_string();
            if text.chars().count() <= SHOWN {
                text
            } else {
                let head: String = text.chars().take(SHOWN).collect();
                format!("{head}… ({} bytes in all)", text.len())
            }
        }
    }
}

fn counts(findings: &[&Finding]) -> (usize, usize, usize) {
    let of = |s: Severity| findings.iter().filter(|f| f.severity == s).count();
    (
        of(Severity::Error),
        of(Severity::Warning),
        of(Severity::Info),
    )
}

fn indent(text: &str, by: &str) -> String {
    text.lines()
        .map(|line| format!("{by}{line}"))
        .collect::<Vec<_>>()
        .join("\n")
}

fn text_report(report: &Report, options: &FuzzOptions, replayed: Option<usize>) -> String {
    let mut out = String::new();
    match replayed {
        Some(n) => out.push_str(&format!(
            "toolschema fuzz --replay: {} sent again, --timeout {}s\n",
            count(n, "finding", "findings"),
            options.timeout.as_secs_f64()
        )),
        None => out.push_str(&format!(
            "toolschema fuzz: seed {}, up to {} per tool, --timeout {}s\n",
            report.seed,
            count(options.cases, "case", "cases"),
            options.timeout.as_secs_f64()
        )),
    }
    let mut groups: Vec<(Option<&str>, Option<&fuzz::ToolRun>)> = report
        .tools
        .iter()
        .map(|run| (Some(run.name.as_str()), Some(run)))
        .collect();
    if report.findings.iter().any(|f| f.tool.is_none()) {
        groups.push((None, None));
    }
    for (name, run) in groups {
        let findings: Vec<&Finding> = report
            .findings
            .iter()
            .filter(|f| f.tool.as_deref() == name)
            .collect();
        let (errors, warnings, infos) = counts(&findings);
        let verdict = if errors + warnings > 0 {
            "FAIL".to_string()
        } else if run.is_some_and(|r| r.interrupted) {
            "not finished".to_string()
        } else if infos > 0 {
            format!("ok, {infos} info")
        } else {
            "ok".to_string()
        };
        let detail = match run {
            Some(run) => format!(
                "  ({}, {:.1}s)",
                count(run.cases, "case", "cases"),
                run.seconds
            ),
            None => String::new(),
        };
        out.push_str(&format!(
            "\n{}  {verdict}{detail}\n",
            name.unwrap_or("(the server, outside any call)")
        ));
        if let Some(note) = run.and_then(|r| r.note.as_deref()) {
            out.push_str(&format!("  note: {note}\n"));
        }
        for finding in findings {
            out.push_str(&format!(
                "  {} ({}): {}\n",
                finding.check,
                finding.severity.name(),
                indent(&finding.message, "    ").trim_start()
            ));
            if let Some(replay) = &finding.replay {
                out.push_str(&format!(
                    "    arguments: {}\n",
                    arguments_text(finding.arguments.as_ref())
                ));
                if let Some(case) = &finding.case {
                    let more = if finding.cases > 1 {
                        format!("; {} cases failed this check", finding.cases)
                    } else {
                        String::new()
                    };
                    out.push_str(&format!("    case: {case}{more}\n"));
                }
                if let Some(cut) = &finding.shrinking_cut {
                    out.push_str(&format!(
                        "    shrinking stopped: {cut}; these are the smallest arguments found by then\n"
                    ));
                }
                let replay = if replay.chars().count() > 400 {
                    let head: String = replay.chars().take(400).collect();
                    format!("{head}… (the whole line is in --format json)")
                } else {
                    replay.clone()
                };
                out.push_str(&format!("    replay: {replay}\n"));
            }
        }
    }
    let all: Vec<&Finding> = report.findings.iter().collect();
    let (errors, warnings, infos) = counts(&all);
    out.push_str(&format!(
        "\n{}, {}, {} ({}, {}, {infos} info) in {:.1}s",
        count(report.tools.len(), "tool", "tools"),
        count(report.cases, "case", "cases"),
        count(report.findings.len(), "finding", "findings"),
        count(errors, "error", "errors"),
        count(warnings, "warning", "warnings"),
        report.seconds
    ));
    if replayed.is_none() {
        out.push_str(&format!(
            "; seed {} (--seed {} repeats this run)",
            report.seed, report.seed
        ));
    }
    if report.budget_spent {
        out.push_str(&format!(
            "\nthe run's budget (--budget {}s) was spent before every case was sent",
            options.budget.unwrap_or_default().as_secs_f64()
        ));
    }
    out.push('\n');
    out
}

fn json_report(report: &Report) -> String {
    let findings: Vec<Value> = report
        .findings
        .iter()
        .map(|f| {
            json!({
                "tool": f.tool,
                "check": f.check.name(),
                "severity": f.severity.name(),
                "arguments": f.arguments,
                "message": f.message,
                "replay": f.replay,
                "shrinking_cut": f.shrinking_cut,
            })
        })
        .collect();
    let tools: Vec<Value> = report
        .tools
        .iter()
        .map(|t| {
            json!({
                "name": t.name,
                "cases": t.cases,
                "seconds": (t.seconds * 1000.0).round() / 1000.0,
                "note": t.note,
            })
        })
        .collect();
    let document = json!({
        "seed": report.seed,
        "findings": findings,
        "tools": tools,
        "summary": {
            "tools": report.tools.len(),
            "cases": report.cases,
            "findings": report.findings.len(),
            "seconds": (report.seconds * 1000.0).round() / 1000.0,
            "budget_spent": report.budget_spent,
        }
    });
    let mut text = serde_json::to_string_pretty(&document).unwrap_or_default();
    text.push('\n');
    text
}

/// Text escaped for XML (and without the characters XML 1.0 cannot hold).
fn xml(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '\t' | '\n' => out.push(c),
            c if (c as u32) < 0x20 && c != '\r' || c == '\u{FFFE}' || c == '\u{FFFF}' => {
                out.push_str(&format!("\\u{{{:04x}}}", c as u32))
            }
            // Legal in XML, but they would steer a terminal showing the report, or hide from
            // its reader: character references, which read back as the same characters.
            c if toolschema::text::steers_terminal(c)
                || toolschema::text::hidden_kind(c).is_some() =>
            {
                out.push_str(&format!("&#x{:X};", c as u32))
            }
            c => out.push(c),
        }
    }
    out
}

fn junit_report(report: &Report) -> String {
    let mut cases = Vec::new();
    let mut names: Vec<(Option<&str>, f64)> = report
        .tools
        .iter()
        .map(|r| (Some(r.name.as_str()), r.seconds))
        .collect();
    if report.findings.iter().any(|f| f.tool.is_none()) {
        names.push((None, 0.0));
    }
    let mut failures = 0;
    for (name, seconds) in &names {
        let findings: Vec<&Finding> = report
            .findings
            .iter()
            .filter(|f| f.tool.as_deref() == *name)
            .collect();
        let failing: Vec<&&Finding> = findings
            .iter()
            .filter(|f| f.severity != Severity::Info)
            .collect();
        let describe = |f: &Finding| {
            let mut text = format!("{} ({}): {}", f.check, f.severity.name(), f.message);
            if let Some(replay) = &f.replay {
                text.push_str(&format!(
                    "\narguments: {}\nreplay: {replay}",
                    arguments_text(f.arguments.as_ref())
                ));
            }
            text
        };
        let mut body = String::new();
        if !failing.is_empty() {
            failures += 1;
            let checks: Vec<&str> = failing.iter().map(|f| f.check.name()).collect();
            let details: Vec<String> = failing.iter().map(|f| describe(f)).collect();
            body.push_str(&format!(
                "\n      <failure type=\"{}\" message=\"{}\">{}</failure>",
                xml(checks[0]),
                xml(&format!(
                    "{} finding(s): {}",
                    failing.len(),
                    checks.join(", ")
                )),
                xml(&details.join("\n\n"))
            ));
        }
        let infos: Vec<String> = findings
            .iter()
            .filter(|f| f.severity == Severity::Info)
            .map(|f| describe(f))
            .collect();
        if !infos.is_empty() {
            body.push_str(&format!(
                "\n      <system-out>{}</system-out>",
                xml(&infos.join("\n\n"))
            ));
        }
        let run = report.tools.iter().find(|r| Some(r.name.as_str()) == *name);
        if failing.is_empty() {
            let skipped = match run {
                Some(r) if r.interrupted => Some("the run stopped before its cases were all sent"),
                Some(r) if r.cases == 0 => r.note.as_deref(),
                _ => None,
            };
            if let Some(why) = skipped {
                body.insert_str(0, &format!("\n      <skipped message=\"{}\"/>", xml(why)));
            }
        }
        let close = if body.is_empty() {
            "/>".to_string()
        } else {
            format!(">{body}\n    </testcase>")
        };
        cases.push(format!(
            "    <testcase name=\"{}\" classname=\"toolschema.fuzz\" time=\"{seconds:.3}\"{close}",
            xml(name.unwrap_or("(server)"))
        ));
    }
    format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"toolschema fuzz\" tests=\"{n}\" failures=\"{failures}\" time=\"{t:.3}\">\n  <testsuite name=\"toolschema fuzz (seed {seed})\" tests=\"{n}\" failures=\"{failures}\" errors=\"0\" time=\"{t:.3}\">\n{cases}\n  </testsuite>\n</testsuites>\n",
        n = names.len(),
        t = report.seconds,
        seed = report.seed,
        cases = cases.join("\n"),
    )
}

/// One job per CPU, within bounds: a server process per job mostly waits, but starting one (and
/// restarting it after a crash) takes a core; two let a hang's wait overlap other tools' calls.
fn default_jobs() -> u16 {
    let cpus = std::thread::available_parallelism().map_or(2, std::num::NonZero::get);
    u16::try_from(cpus.clamp(2, 8)).unwrap_or(2)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn xml_text_is_escaped() {
        assert_eq!(
            xml("a<b & \"c\"\u{0}"),
            "a&lt;b &amp; &quot;c&quot;\\u{0000}"
        );
        // Character references for what XML holds but a terminal would obey.
        assert_eq!(xml("r\re\u{9B}2J\u{202E}"), "r&#xD;e&#x9B;2J&#x202E;");
        // And for what a reader could not see, which a JSON escape would have changed.
        assert_eq!(xml("جست\u{200C}وجو"), "جست&#x200C;وجو");
    }

    #[test]
    fn long_arguments_are_cut_in_text() {
        let big = json!({"s": "x".repeat(1000)});
        let shown = arguments_text(Some(&big));
        assert!(shown.ends_with("… (1008 bytes in all)"), "{shown}");
        assert_eq!(arguments_text(None), "(absent)");
    }
}
