//! `toolschema fuzz` as a user runs it: against the project's faulty server (one planted fault
//! per check, one correct tool) over stdio and Streamable HTTP, against the real npm and PyPI
//! servers, with findings replayed from a file, and against servers that cannot be reached.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{node, recording_server, require, run, toolschema, HttpServer};
use serde_json::Value;
use std::collections::BTreeSet;
use std::process::Command;
use std::time::Duration;

/// How long one fuzz run may take (debug build, a loaded machine, a few hangs of `TIMEOUT`).
const RUN_LIMIT: Duration = Duration::from_secs(600);

/// `--timeout` for runs that judge hangs: long enough that a correct tool on a loaded machine
/// never looks hung. A planted hang costs it about twice per run (the case and its
/// confirmation), since a confirmed hang ends its tool's cases.
const TIMEOUT: &str = "20";

/// `--timeout` for a replay of shrunk findings: each call is small (nothing of the 1 MiB or
/// 100,000-item cases is left after shrinking) and answered in milliseconds, so a shorter wait
/// still tells lookup's hang from an answer, and the replay waits it once.
const REPLAY_TIMEOUT: &str = "5";

/// Each faulty tool of interop/faulty-server.mjs and the check its planted fault fails.
const PLANTED: [(&str, &str); 8] = [
    ("divide", "crash"),
    ("lookup", "hang"),
    ("convert", "protocol-violation"),
    ("find_user", "internal-error"),
    ("set_volume", "accepted-invalid"),
    ("weather", "output-schema"),
    ("read_file", "leak"),
    ("search", "rejected-valid"),
];

fn faulty_server() -> Vec<String> {
    vec![
        node(),
        require("interop/faulty-server.mjs").display().to_string(),
    ]
}

/// The faulty server over Streamable HTTP (stopped when dropped), and its endpoint.
fn faulty_http_server() -> (HttpServer, String) {
    let server = HttpServer::start(
        Command::new(node())
            .arg(require("interop/faulty-server.mjs"))
            .args(["--http", "0"]),
    );
    let url = format!("http://127.0.0.1:{}/mcp", server.port);
    (server, url)
}

/// A run's exit code, stdout and stderr.
type Outcome = (Option<i32>, String, String);

/// `toolschema fuzz ARGS -- SERVER...`: exit code, stdout, stderr. Without a `--budget` of its
/// own, a run has an hour: what these tests look at must not depend on how loaded the machine
/// is (the budget's own tests give one).
fn fuzz(args: &[&str], server: &[String]) -> Outcome {
    let mut all: Vec<String> = vec!["fuzz".into()];
    if !args.contains(&"--budget") && !args.contains(&"--replay") {
        all.extend(["--budget".into(), "3600".into()]);
    }
    all.extend(args.iter().map(|s| s.to_string()));
    if !server.is_empty() {
        all.push("--".into());
        all.extend(server.iter().cloned());
    }
    let (status, stdout, stderr) = run(toolschema(), &all, RUN_LIMIT);
    (status.code(), stdout, stderr)
}

fn report(stdout: &str, stderr: &str) -> Value {
    serde_json::from_str(stdout).unwrap_or_else(|e| panic!("not JSON ({e}): {stdout}\n{stderr}"))
}

/// The (tool, check) pairs of a JSON report; a finding outside any call has tool "(server)".
fn found(report: &Value) -> BTreeSet<(String, String)> {
    report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["tool"].as_str().unwrap_or("(server)").to_string(),
                f["check"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

fn planted(except: &[&str]) -> BTreeSet<(String, String)> {
    PLANTED
        .iter()
        .filter(|(tool, _)| !except.contains(tool))
        .map(|(tool, check)| (tool.to_string(), check.to_string()))
        .collect()
}

/// Every finding's replay line is the tools/call request for its tool and arguments.
fn assert_replay_lines(report: &Value) {
    for finding in report["findings"].as_array().unwrap() {
        let line: Value = serde_json::from_str(finding["replay"].as_str().unwrap()).unwrap();
        assert_eq!(line["jsonrpc"], "2.0");
        assert_eq!(line["method"], "tools/call");
        assert_eq!(line["params"]["name"], finding["tool"]);
        let arguments = line["params"]
            .get("arguments")
            .cloned()
            .unwrap_or(Value::Null);
        assert_eq!(arguments, finding["arguments"], "{finding}");
    }
}

/// Fuzz the faulty server once per (seed, cases), side by side: each run mostly waits.
fn fuzz_faulty_side_by_side(runs: &[(&str, &str)]) -> Vec<(String, Outcome)> {
    let handles: Vec<_> = runs
        .iter()
        .map(|(seed, cases)| {
            let (seed, cases) = (seed.to_string(), cases.to_string());
            std::thread::spawn(move || {
                let args = [
                    "--seed",
                    &seed,
                    "--cases",
                    &cases,
                    "--timeout",
                    TIMEOUT,
                    "--format",
                    "json",
                ];
                (seed.clone(), fuzz(&args, &faulty_server()))
            })
        })
        .collect();
    handles.into_iter().map(|h| h.join().unwrap()).collect()
}

#[test]
fn every_planted_fault_is_found_by_its_check_on_several_seeds_and_replays() {
    let server = faulty_server();
    let runs = fuzz_faulty_side_by_side(&[("11", "100"), ("22", "100"), ("33", "100")]);
    for (seed, (code, stdout, stderr)) in runs {
        let seed = seed.as_str();
        assert_eq!(code, Some(1), "{stderr}");
        let report = report(&stdout, &stderr);
        assert_eq!(report["seed"], seed.parse::<u64>().unwrap());
        // Exactly the planted faults: nothing on the correct tool, nothing else on the others.
        assert_eq!(found(&report), planted(&[]), "seed {seed}: {stdout}");
        assert_eq!(report["summary"]["tools"], 9);
        assert_eq!(report["summary"]["findings"], 8);
        assert!(report["summary"]["cases"].as_u64().unwrap() > 500);
        assert_replay_lines(&report);
        let severities: Vec<(&str, &str)> = report["findings"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| {
                (
                    f["check"].as_str().unwrap(),
                    f["severity"].as_str().unwrap(),
                )
            })
            .collect();
        for (check, severity) in severities {
            let expected = match check {
                "internal-error" | "leak" => "warning",
                "rejected-valid" => "info",
                _ => "error",
            };
            assert_eq!(severity, expected, "{check}");
        }
        if seed == "11" {
            // Every finding replays: sending its arguments again fails the same check.
            let dir = tempfile::tempdir().unwrap();
            let file = dir.path().join("findings.json");
            std::fs::write(&file, &stdout).unwrap();
            let (code, replayed, stderr) = fuzz(
                &[
                    "--replay",
                    file.to_str().unwrap(),
                    "--timeout",
                    REPLAY_TIMEOUT,
                    "--format",
                    "json",
                ],
                &server,
            );
            assert_eq!(code, Some(1), "{stderr}");
            let replayed = self::report(&replayed, &stderr);
            assert_eq!(found(&replayed), planted(&[]));
            assert_eq!(replayed["summary"]["cases"], 8);
            assert_eq!(replayed["seed"], 11);
        }
    }
}

#[test]
fn thirty_cases_per_tool_still_find_every_planted_fault() {
    // The exact bounds come early: a division by zero, a key one past its maxLength, a limit at
    // its maximum.
    for (seed, (code, stdout, stderr)) in fuzz_faulty_side_by_side(&[("44", "30"), ("55", "30")]) {
        assert_eq!(code, Some(1), "{stderr}");
        let report = report(&stdout, &stderr);
        assert_eq!(found(&report), planted(&[]), "seed {seed}: {stdout}");
        assert!(report["summary"]["cases"].as_u64().unwrap() <= 9 * 30);
        assert_replay_lines(&report);
    }
}

#[test]
fn the_correct_tool_shows_nothing_over_twenty_seeds() {
    let server = faulty_server();
    let seeds: Vec<u64> = (100..120).collect();
    // Two runs at a time: each is mostly waiting for the server.
    for pair in seeds.chunks(2) {
        let runs: Vec<_> = pair
            .iter()
            .map(|seed| {
                let server = server.clone();
                let seed = seed.to_string();
                std::thread::spawn(move || {
                    let args = [
                        "--tool",
                        "add_note",
                        "--seed",
                        &seed,
                        "--timeout",
                        TIMEOUT,
                        "--format",
                        "json",
                    ];
                    (seed.clone(), fuzz(&args, &server))
                })
            })
            .collect();
        for handle in runs {
            let (seed, (code, stdout, stderr)) = handle.join().unwrap();
            let report = report(&stdout, &stderr);
            assert_eq!(found(&report), BTreeSet::new(), "seed {seed}: {stdout}");
            assert_eq!(code, Some(0), "seed {seed}: {stderr}");
            assert_eq!(report["summary"]["tools"], 1);
            assert_eq!(report["summary"]["cases"], 100, "seed {seed}");
        }
    }
}

#[test]
fn the_same_seed_sends_the_same_cases_and_finds_the_same() {
    let server = faulty_server();
    let args = [
        "--tool",
        "search",
        "--tool",
        "set_volume",
        "--seed",
        "5",
        "--timeout",
        TIMEOUT,
        "--format",
        "json",
    ];
    let (_, one, _) = fuzz(&args, &server);
    let (_, two, _) = fuzz(&args, &server);
    let (one, two) = (report(&one, ""), report(&two, ""));
    assert_eq!(one["findings"], two["findings"]);
    assert_eq!(one["summary"]["cases"], two["summary"]["cases"]);
}

#[test]
fn a_run_narrowed_with_tool_starts_only_the_servers_its_tools_need() {
    let dir = tempfile::tempdir().unwrap();
    // The faulty server behind a shell that notes each start in `log`.
    let noting = |log: &std::path::Path| {
        vec![
            "sh".to_string(),
            "-c".to_string(),
            format!(
                "echo started >> '{}'; exec '{}' '{}'",
                log.display(),
                node(),
                require("interop/faulty-server.mjs").display()
            ),
        ]
    };
    let starts = |log: &std::path::Path| {
        let text = std::fs::read_to_string(log).unwrap_or_default();
        text.lines().count()
    };
    let common = ["--jobs", "2", "--cases", "5", "--timeout", TIMEOUT];
    // The three runs go side by side, each noting its starts in a log of its own: the second
    // mostly waits for lookup's hang.
    let (one, two, every) = (
        dir.path().join("one.log"),
        dir.path().join("two.log"),
        dir.path().join("every.log"),
    );

    // While lookup's planted hang holds the first lane, add_note takes the second, whose server
    // starts then. (lookup has seven cases in all, its hang among them, whatever the seed.) The
    // hang holds the lane for 10 s: add_note's cases, made meanwhile on a machine loaded by the
    // other two runs, are ready well before it is free.
    let narrowed = {
        let server = noting(&two);
        std::thread::spawn(move || {
            let args = [
                "--jobs",
                "2",
                "--cases",
                "10",
                "--timeout",
                "10",
                "--format",
                "json",
                "--tool",
                "lookup",
                "--tool",
                "add_note",
            ];
            fuzz(&args, &server)
        })
    };

    // Not narrowed with --tool, every lane starts beside the first, before the tools are known.
    let not_narrowed = {
        let server = noting(&every);
        std::thread::spawn(move || {
            let skip: Vec<&str> = PLANTED
                .iter()
                .flat_map(|(tool, _)| ["--skip", *tool])
                .collect();
            fuzz(&[&common[..], &skip].concat(), &server)
        })
    };

    // One tool needs one lane, so one server, though --jobs allows two.
    let (code, stdout, stderr) = fuzz(
        &[&common[..], &["--tool", "add_note"]].concat(),
        &noting(&one),
    );
    assert_eq!(code, Some(0), "{stdout}\n{stderr}");
    assert_eq!(starts(&one), 1, "{stderr}");

    let (_, stdout, stderr) = narrowed.join().unwrap();
    let runs = report(&stdout, &stderr)["summary"]["tools"].clone();
    assert_eq!(runs, 2, "{stdout}\n{stderr}");
    assert!(starts(&two) >= 2, "{stderr}");

    let (code, stdout, stderr) = not_narrowed.join().unwrap();
    assert_eq!(code, Some(0), "{stdout}\n{stderr}");
    assert_eq!(starts(&every), 2, "{stderr}");
}
/// The faulty server behind a shell that notes its process id at each start (`exec` keeps it),
/// and the file it notes them in.
fn pid_noting_faulty_server(dir: &std::path::Path) -> (Vec<String>, std::path::PathBuf) {
    let pids = dir.join("pids");
    let server = vec![
        "sh".to_string(),
        "-c".to_string(),
        format!(
            "echo $$ >> '{}'; exec '{}' '{}'",
            pids.display(),
            node(),
            require("interop/faulty-server.mjs").display()
        ),
    ];
    (server, pids)
}

/// The process ids noted in `pids` (emptied), once none of them is running: a server killed as
/// the run ended takes a moment to be reaped.
fn pids_none_running(pids: &std::path::Path) -> Vec<u32> {
    let noted: Vec<u32> = std::fs::read_to_string(pids)
        .unwrap_or_default()
        .lines()
        .map(|l| l.trim().parse().unwrap())
        .collect();
    std::fs::remove_file(pids).ok();
    let since = std::time::Instant::now();
    while noted.iter().any(|&pid| common::alive(pid)) {
        assert!(
            since.elapsed() < Duration::from_secs(5),
            "servers still running after the run: {:?}",
            noted
                .iter()
                .filter(|&&pid| common::alive(pid))
                .collect::<Vec<_>>()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    noted
}

/// No server process outlives a run: every one started (the first ones, the restarts after
/// divide's planted crashes, the spare started ahead of a restart, used or not) is gone when
/// `fuzz` exits, over seeds whose crashes fall at different cases; and a run stopped by its
/// budget while a hang is waited for leaves none either.
#[test]
fn no_server_outlives_the_run_after_crashes_and_spares() {
    // The two seeds run side by side (each mostly waits for lookup's hang), each noting its
    // servers in a file of its own.
    let seeds: Vec<_> = ["1", "2"]
        .into_iter()
        .map(|seed| {
            std::thread::spawn(move || {
                let dir = tempfile::tempdir().unwrap();
                let (server, pids) = pid_noting_faulty_server(dir.path());
                let args = ["--seed", seed, "--timeout", TIMEOUT, "--format", "json"];
                let (code, stdout, stderr) = fuzz(&args, &server);
                assert_eq!(code, Some(1), "{stdout}\n{stderr}");
                assert_eq!(found(&report(&stdout, &stderr)), planted(&[]), "{stdout}");
                // Two lanes, a restart after divide's crash and after the smaller case that
                // confirms it, and the spare started beside the first restart.
                assert!(pids_none_running(&pids).len() >= 5, "seed {seed}: {stderr}");
            })
        })
        .collect();
    let dir = tempfile::tempdir().unwrap();
    let (server, pids) = pid_noting_faulty_server(dir.path());
    // Cut by the budget while lookup's call hangs and divide's lane restarts (meanwhile).
    let args = [
        "--seed",
        "1",
        "--timeout",
        TIMEOUT,
        "--budget",
        "3",
        "--tool",
        "lookup",
        "--tool",
        "divide",
        "--format",
        "json",
    ];
    let (_, stdout, stderr) = fuzz(&args, &server);
    assert!(
        report(&stdout, &stderr)["summary"]["budget_spent"]
            .as_bool()
            .unwrap(),
        "{stdout}"
    );
    assert!(!pids_none_running(&pids).is_empty(), "{stderr}");
    for seed in seeds {
        seed.join().unwrap();
    }
}

#[test]
fn text_and_junit_reports_group_by_tool() {
    let server = faulty_server();
    let (code, text, stderr) = fuzz(
        &[
            "--tool",
            "weather",
            "--tool",
            "add_note",
            "--seed",
            "5",
            "--timeout",
            TIMEOUT,
        ],
        &server,
    );
    assert_eq!(code, Some(1), "{stderr}");
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(
        lines[0],
        format!("toolschema fuzz: seed 5, up to 100 cases per tool, --timeout {TIMEOUT}s")
    );
    let weather = lines
        .iter()
        .position(|l| l.starts_with("weather  FAIL  ("))
        .unwrap();
    assert_eq!(
        lines[weather + 1],
        "  output-schema (error): the result breaks the outputSchema: field 'temperature' must be a number (got a string)"
    );
    assert!(
        lines[weather + 2].starts_with("    arguments: {\"city\":"),
        "{text}"
    );
    assert!(lines[weather + 4].starts_with(
        "    replay: {\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"weather\""
    ));
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("add_note  ok  (100 cases, ")),
        "{text}"
    );
    let last = lines.last().unwrap();
    assert!(last.starts_with("2 tools, "), "{last}");
    assert!(last.contains(" cases, 1 finding (1 error, 0 warnings, 0 info) in "));
    assert!(last.ends_with("; seed 5 (--seed 5 repeats this run)"));

    let (code, junit, stderr) = fuzz(
        &[
            "--tool",
            "weather",
            "--tool",
            "add_note",
            "--seed",
            "5",
            "--timeout",
            TIMEOUT,
            "--format",
            "junit",
        ],
        &server,
    );
    assert_eq!(code, Some(1), "{stderr}");
    assert!(junit.starts_with("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"toolschema fuzz\" tests=\"2\" failures=\"1\" "));
    assert!(junit.contains(
        "<testsuite name=\"toolschema fuzz (seed 5)\" tests=\"2\" failures=\"1\" errors=\"0\" "
    ));
    assert!(junit.contains("<testcase name=\"weather\" classname=\"toolschema.fuzz\" time=\""));
    assert!(junit.contains("<failure type=\"output-schema\" message=\"1 finding(s): output-schema\">output-schema (error): the result breaks the outputSchema: field &apos;temperature&apos; must be a number (got a string)\narguments: {&quot;city&quot;:"));
    let add_note = junit
        .lines()
        .find(|l| l.contains("name=\"add_note\""))
        .unwrap();
    assert!(add_note.ends_with("\"/>"), "{add_note}");
    assert!(junit.ends_with("  </testsuite>\n</testsuites>\n"));
}

/// One case is said in the singular, in the run's first line, the tool's line and the summary.
#[test]
fn one_case_is_one_case_not_one_cases() {
    let (code, text, stderr) = fuzz(
        &["--tool", "add_note", "--seed", "5", "--cases", "1"],
        &faulty_server(),
    );
    assert_eq!(code, Some(0), "{stderr}");
    let lines: Vec<&str> = text.lines().collect();
    assert!(
        lines[0].starts_with("toolschema fuzz: seed 5, up to 1 case per tool, "),
        "{text}"
    );
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("add_note  ok  (1 case, ")),
        "{text}"
    );
    let last = lines.last().unwrap();
    assert!(last.starts_with("1 tool, 1 case, 0 findings "), "{last}");
}

#[test]
fn streamable_http_servers_are_fuzzed_with_headers() {
    let (_server, url) = faulty_http_server();
    // `divide` would kill the HTTP server, which nothing restarts; `convert` logs to its
    // terminal, which over HTTP is not the protocol.
    let (code, stdout, stderr) = fuzz(
        &[
            "--url",
            &url,
            "--header",
            "X-Client: fuzz-test",
            "--skip",
            "divide",
            "--seed",
            "7",
            "--timeout",
            TIMEOUT,
            "--format",
            "json",
        ],
        &[],
    );
    assert_eq!(code, Some(1), "{stderr}");
    let report = report(&stdout, &stderr);
    assert_eq!(found(&report), planted(&["divide", "convert"]), "{stdout}");
    assert_eq!(report["summary"]["tools"], 8);
}

#[test]
fn a_server_that_dies_over_http_stops_the_run_with_what_was_in_flight() {
    let (_server, url) = faulty_http_server();
    let (code, stdout, stderr) = fuzz(
        &[
            "--url",
            &url,
            "--tool",
            "divide",
            "--timeout",
            TIMEOUT,
            "--format",
            "json",
        ],
        &[],
    );
    assert_eq!(code, Some(1), "{stderr}");
    assert!(
        stderr.starts_with("error: the run stopped early: the MCP server "),
        "{stderr}"
    );
    let report = report(&stdout, &stderr);
    let findings = report["findings"].as_array().unwrap();
    assert_eq!(findings.len(), 1, "{stdout}");
    assert_eq!(findings[0]["check"], "crash");
    assert_eq!(findings[0]["tool"], Value::Null);
    let message = findings[0]["message"].as_str().unwrap();
    assert!(message.starts_with("the server went away and could not be reached again"));
    assert!(message.contains("\"name\":\"divide\""), "{message}");
}

#[test]
fn stray_output_is_a_protocol_violation() {
    let dir = tempfile::tempdir().unwrap();
    let server = recording_server(&dir.path().join("r.jsonl"), &[]);
    let (code, stdout, stderr) = fuzz(
        &[
            "--tool",
            "malformed_then_answer",
            "--cases",
            "5",
            "--seed",
            "1",
            "--timeout",
            TIMEOUT,
            "--format",
            "json",
        ],
        &server,
    );
    assert_eq!(code, Some(1), "{stderr}");
    let report = report(&stdout, &stderr);
    let violation = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["check"] == "protocol-violation")
        .unwrap_or_else(|| panic!("no protocol-violation: {stdout}"));
    assert_eq!(violation["tool"], "malformed_then_answer");
    let message = violation["message"].as_str().unwrap();
    assert!(
        message.starts_with("the server sent a line that is not JSON"),
        "{message}"
    );
    assert!(message.ends_with("'this line is not JSON'"), "{message}");
    // The recording server takes anything, JSON text for arguments included.
    assert!(found(&report).contains(&(
        "malformed_then_answer".to_string(),
        "accepted-invalid".to_string()
    )));
}

#[test]
fn a_server_that_cannot_be_started_or_reached_exits_2() {
    let (code, stdout, stderr) = fuzz(&[], &["/nonexistent/no-such-server".to_string()]);
    assert_eq!(code, Some(2));
    assert_eq!(stdout, "");
    assert_eq!(
        stderr,
        "error: cannot start the MCP server '/nonexistent/no-such-server': No such file or directory (os error 2)\n"
    );

    let dying = ["sh", "-c", "echo 'config missing' >&2; exit 3"].map(String::from);
    let (code, _, stderr) = fuzz(&[], &dying);
    assert_eq!(code, Some(2));
    assert_eq!(
        stderr,
        "error: the MCP server 'sh -c echo 'config missing' >&2; exit 3' exited with exit code 3 before it finished the initialize handshake; the last lines of its stderr:\n  | config missing\n"
    );

    // A server that answers initialize with an error was running: what it said is the reason.
    let refusing = [
        node(),
        "-e".to_string(),
        r#"process.stdin.on("data", (d) => { const m = JSON.parse(String(d).split("\n")[0]); process.stdout.write(JSON.stringify({jsonrpc: "2.0", id: m.id, error: {code: -32603, message: "boom"}}) + "\n"); });"#.to_string(),
    ];
    let (code, _, stderr) = fuzz(&[], &refusing);
    assert_eq!(code, Some(2));
    assert!(
        stderr.ends_with(
            "failed the initialize handshake: it answered with error -32603: boom
"
        ),
        "{stderr}"
    );

    let port = common::http::free_port();
    let url = format!("http://127.0.0.1:{port}/mcp");
    let (code, _, stderr) = fuzz(&["--url", &url], &[]);
    assert_eq!(code, Some(2));
    assert_eq!(
        stderr,
        format!("error: the MCP server {url} failed the initialize handshake: cannot connect to 127.0.0.1:{port}: Connection refused (os error 111)\n")
    );

    let (code, _, stderr) = fuzz(
        &["--replay", "/nonexistent/findings.json"],
        &faulty_server(),
    );
    assert_eq!(code, Some(2));
    assert!(
        stderr.starts_with("error: /nonexistent/findings.json: cannot read: "),
        "{stderr}"
    );
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("findings.json");
    std::fs::write(
        &file,
        r#"{"findings": [{"tool": "weather", "check": "nope"}]}"#,
    )
    .unwrap();
    let (code, _, stderr) = fuzz(&["--replay", file.to_str().unwrap()], &faulty_server());
    assert_eq!(code, Some(2));
    assert_eq!(
        stderr,
        format!(
            "error: {}: findings[0].check 'nope' is not a check\n",
            file.display()
        )
    );
    // A finding outside any call cannot be sent again: the replay says so, and replays the rest.
    std::fs::write(
        &file,
        r#"{"findings": [{"tool": null, "check": "protocol-violation"}, {"tool": "set_volume", "check": "accepted-invalid", "arguments": {}}]}"#,
    )
    .unwrap();
    let (code, stdout, stderr) = fuzz(
        &["--replay", file.to_str().unwrap(), "--format", "json"],
        &faulty_server(),
    );
    assert_eq!(code, Some(1), "{stderr}");
    assert!(
        stderr.contains(&format!("note: 1 finding of {} happened outside any call (output while no call waited, a crash nothing could tie to a call): nothing can send it again; a run without --replay looks for it anew\n", file.display())),
        "{stderr}"
    );
    assert_eq!(
        found(&report(&stdout, &stderr)),
        BTreeSet::from([("set_volume".to_string(), "accepted-invalid".to_string())])
    );
}

/// A real server, fuzzed to the end: every tool listed is reported, none stops the run, and the
/// server neither crashes nor breaks the protocol.
fn assert_completes(server: &[String], extra: &[&str], tools: u64) -> Value {
    let mut args = vec![
        "--seed",
        "7",
        "--cases",
        "30",
        "--timeout",
        "5",
        "--format",
        "json",
    ];
    args.extend_from_slice(extra);
    let (code, stdout, stderr) = fuzz(&args, server);
    assert!(matches!(code, Some(0 | 1)), "{code:?}: {stderr}");
    assert!(!stderr.contains("stopped early"), "{stderr}");
    let report = report(&stdout, &stderr);
    assert_eq!(report["summary"]["tools"], tools, "{stdout}");
    for (_, check) in found(&report) {
        assert!(
            !matches!(check.as_str(), "crash" | "protocol-violation"),
            "{stdout}"
        );
    }
    report
}

#[test]
fn real_servers_from_npm_and_pypi_are_fuzzed_to_the_end() {
    // Its long-running operation takes 10 s per call by design, and its progress notifications
    // stretch each timeout tenfold: fuzzing it would be minutes of waiting that prove nothing.
    let everything = require("interop/node_modules/.bin/mcp-server-everything");
    assert_completes(
        &[everything.display().to_string()],
        &["--skip", "trigger-long-running-operation"],
        12,
    );

    let root = tempfile::tempdir().unwrap();
    std::fs::write(root.path().join("notes.txt"), "hello\n").unwrap();
    let filesystem = require("interop/node_modules/.bin/mcp-server-filesystem");
    assert_completes(
        &[
            filesystem.display().to_string(),
            root.path().display().to_string(),
        ],
        &[],
        14,
    );

    let time = require(".venv/bin/mcp-server-time");
    assert_completes(&[time.display().to_string()], &[], 2);
}

#[test]
fn lying_and_odd_answers_are_told_apart() {
    // This server answers at once (plain Node, no SDK, tiny answers), so a short timeout still
    // tells its two hanging tools from the others; each hang costs it a few times over (the
    // case, its confirmation, a step of shrinking).
    const TIMEOUT: &str = "5";
    // The late answer comes 5 s after the client gave up on it, while the run still goes on.
    let late_ms = (TIMEOUT.parse::<u64>().unwrap() + 5) * 1000;
    let server = vec![
        node(),
        require("interop/lying-server.mjs").display().to_string(),
        "--late-ms".into(),
        late_ms.to_string(),
    ];
    let (code, stdout, stderr) = fuzz(
        &[
            "--timeout",
            TIMEOUT,
            "--cases",
            "10",
            "--seed",
            "1",
            "--format",
            "json",
        ],
        &server,
    );
    assert_eq!(code, Some(1), "{stderr}");
    let report = report(&stdout, &stderr);
    let expected: BTreeSet<(String, String)> = [
        ("wrong_id", "hang"),
        ("wrong_id", "protocol-violation"),
        ("no_content", "protocol-violation"),
        ("late", "hang"),
    ]
    .iter()
    .map(|(t, c)| (t.to_string(), c.to_string()))
    .collect();
    // A byte order mark before a line is read past; an id answered as `5.0` is the id `5` (ids
    // are compared as JSON values); a late answer is a hang, not a stray.
    assert_eq!(found(&report), expected, "{stdout}");
    let message = |tool: &str, check: &str| -> String {
        report["findings"]
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f["tool"] == tool && f["check"] == check)
            .unwrap()["message"]
            .as_str()
            .unwrap()
            .to_string()
    };
    assert_eq!(
        message("no_content", "protocol-violation"),
        "the result is not a valid CallToolResult: it has no \"content\" array"
    );
    // (Which request it names depends on how many were sent before it.)
    let wrong = message("wrong_id", "protocol-violation");
    let named = wrong
        .strip_prefix("the server sent an answer to request \"")
        .and_then(|rest| rest.split_once("-other\", which was never sent"))
        .map(|(id, _)| id);
    assert!(
        named.is_some_and(|id| id.parse::<u64>().is_ok()),
        "{stdout}"
    );

    let mut paging = server.clone();
    paging.push("--page-forever".into());
    // 10,000 pages take a few seconds; the start-up bound (--timeout, at least 30 s) is raised
    // so that a loaded machine still reaches the page limit this checks.
    let (code, _, stderr) = fuzz(&["--timeout", "120"], &paging);
    assert_eq!(code, Some(2));
    assert_eq!(
        stderr,
        format!(
            "error: the MCP server '{}' failed while listing its tools: it returned 10000 pages of tools and a cursor for more; the listing would never end\n",
            paging.join(" ")
        )
    );
}

#[test]
fn a_confirmed_hang_ends_its_tools_cases_with_a_note() {
    let (code, text, stderr) = fuzz(
        &["--tool", "lookup", "--seed", "3", "--timeout", "5"],
        &faulty_server(),
    );
    assert_eq!(code, Some(1), "{stderr}");
    let header = text
        .lines()
        .find(|l| l.starts_with("lookup  FAIL  ("))
        .unwrap_or_else(|| panic!("{text}"));
    let sent: usize = header["lookup  FAIL  (".len()..]
        .split(' ')
        .next()
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("{header}"));
    let note = text
        .lines()
        .find_map(|l| {
            l.trim_start()
                .strip_prefix("note: stopped after a confirmed hang; ")
        })
        .unwrap_or_else(|| panic!("{text}"));
    let not_sent: usize = note
        .strip_suffix(" cases not sent")
        .or_else(|| note.strip_suffix(" case not sent"))
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("{note}"));
    // Every case of the run is either sent or named as not sent; the hang came before the end.
    assert_eq!(sent + not_sent, 100, "{text}");
    assert!(not_sent > 0, "{text}");
    assert!(
        text.contains("  hang (error): no answer within 5s"),
        "{text}"
    );
    // The confirmation was the copy of the call sent while the first waited, not a second wait.
    assert!(
        text.contains("; the same call, sent again while it waited, went unanswered too"),
        "{text}"
    );
}

#[test]
fn a_slow_answer_in_time_is_no_hang_and_the_copy_sent_beside_it_leaves_nothing_behind() {
    // Each call answers after 0.6 s, well within the 5 s timeout but after the 0.25 s at which a
    // copy of a slow call is sent beside it: a correct tool stays without findings, the copies'
    // answers are taken quietly, and no case is held back or blamed for another's copy.
    let server = vec![
        node(),
        require("interop/lying-server.mjs").display().to_string(),
        "--slow-ms".into(),
        "600".into(),
    ];
    let (code, stdout, stderr) = fuzz(
        &[
            "--tool",
            "correct",
            "--cases",
            "8",
            "--seed",
            "5",
            "--timeout",
            "5",
            "--format",
            "json",
        ],
        &server,
    );
    let report = report(&stdout, &stderr);
    assert_eq!(found(&report), BTreeSet::new(), "{stdout}");
    assert_eq!(report["summary"]["cases"], 8, "{stdout}");
    assert_eq!(code, Some(0), "{stderr}");
}

/// An answer over `--max-message-bytes` says nothing about the server and is not checked; the
/// tool's note says how many there were and why, in every format.
#[test]
fn answers_too_large_to_read_are_counted_in_the_tools_note() {
    let dir = tempfile::tempdir().unwrap();
    // Its tool `big` answers with one event of 200,000 bytes.
    let server = common::http::HttpServer::scripted(&dir.path().join("record.jsonl"));
    let args = [
        "--url",
        &server.url,
        "--tool",
        "big",
        "--cases",
        "5",
        "--seed",
        "3",
        "--max-message-bytes",
        "64KiB",
    ];
    let (code, stdout, stderr) = fuzz(&[&args[..], &["--format", "json"]].concat(), &[]);
    assert_eq!(code, Some(0), "{stdout}\n{stderr}");
    let report = report(&stdout, &stderr);
    assert_eq!(report["findings"], serde_json::json!([]), "{stdout}");
    let tools = report["tools"].as_array().unwrap();
    assert_eq!(tools.len(), 1, "{stdout}");
    assert_eq!(tools[0]["name"], "big");
    let sent = tools[0]["cases"].as_u64().unwrap();
    assert!(sent > 0, "{stdout}");
    let note = format!(
        "{sent} answers could not be read here, so nothing was checked of them: the server sent more than the limit of 65536 bytes for one answer (raise it with --max-message-bytes)"
    );
    assert_eq!(tools[0]["note"], note.as_str(), "{stdout}");
    let (code, stdout, stderr) = fuzz(&args, &[]);
    assert_eq!(code, Some(0), "{stderr}");
    assert!(stdout.contains(&format!("  note: {note}\n")), "{stdout}");
}

#[test]
fn tools_no_finite_value_fits_get_invalid_cases_and_a_note_saying_why() {
    let dir = tempfile::tempdir().unwrap();
    // A required property that refers back to its own object (this overflowed the stack), and
    // two required properties referring to the level below, forty levels down (2^40 places:
    // this took all the memory there was).
    let endless = serde_json::json!({"type": "object", "properties": {"a": {"$ref": "#"}}, "required": ["a"]});
    let mut defs = serde_json::Map::new();
    defs.insert("a0".into(), serde_json::json!({"type": "string"}));
    for i in 1..=40 {
        let below = serde_json::json!({"$ref": format!("#/$defs/a{}", i - 1)});
        defs.insert(
            format!("a{i}"),
            serde_json::json!({"type": "object", "properties": {"l": below, "r": below}, "required": ["l", "r"]}),
        );
    }
    let doubling = serde_json::json!({"type": "object", "properties": {"x": {"$ref": "#/$defs/a40"}}, "required": ["x"], "$defs": defs});
    let script = serde_json::json!({"tools": [
        {"name": "endless", "inputSchema": endless},
        {"name": "doubling", "inputSchema": doubling},
    ]})
    .to_string();
    let server = common::scripted_server(
        &dir.path().join("record.jsonl"),
        &dir.path().join("verdicts.jsonl"),
        &script,
    );
    let args = [
        "--seed",
        "5",
        "--cases",
        "20",
        "--timeout",
        TIMEOUT,
        "--format",
        "json",
    ];
    let (code, stdout, stderr) = fuzz(&args, &server);
    // The scripted server takes every call: the invalid cases are accepted.
    assert_eq!(code, Some(1), "{stdout}\n{stderr}");
    let report = report(&stdout, &stderr);
    for (name, why) in [
        (
            "endless",
            "a value here must nest deeper than 128 levels of arrays and objects",
        ),
        ("doubling", "a value needs more than 20000 places"),
    ] {
        let tool = report["tools"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["name"] == name)
            .unwrap();
        assert!(tool["cases"].as_u64().unwrap() > 0, "{stdout}");
        assert_eq!(
            tool["note"],
            format!("no valid arguments could be made ({why}), so only invalid ones were sent")
                .as_str(),
            "{stdout}"
        );
        assert!(
            found(&report).contains(&(name.to_string(), "accepted-invalid".to_string())),
            "{stdout}"
        );
    }
}

/// Structured content is judged as its text states its numbers, as the proxy and `call` judge
/// it: 0.10000000000000000001 breaks a maximum of 0.1 (read as a float it is 0.1), 2^53 + 1
/// breaks a maximum of 2^53 (read as a float it could not be checked); 0.1000 and 2^53 written
/// as 9007199254740992.0 keep within them.
#[test]
fn structured_numbers_are_judged_as_the_server_wrote_them() {
    let dir = tempfile::tempdir().unwrap();
    let output = serde_json::json!({"type": "object", "properties": {
        "ratio": {"type": "number", "maximum": 0.1},
        "count": {"type": "integer", "maximum": 9_007_199_254_740_992_u64}}});
    let tool = |name: &str, structured: &str| {
        serde_json::json!({"name": name, "outputSchema": output,
            "inputSchema": {"type": "object", "properties": {"n": {"type": "integer"}}},
            "x-result-text": format!(r#"{{"content":[],"structuredContent":{structured}}}"#)})
    };
    let script = serde_json::json!({"tools": [
        tool("over_ratio", r#"{"ratio":0.10000000000000000001}"#),
        tool("over_count", r#"{"count":9007199254740993}"#),
        tool("at_bounds", r#"{"ratio":0.1000,"count":9007199254740992.0}"#),
    ]});
    let (code, stdout, stderr) = fuzz(
        &[
            "--seed",
            "3",
            "--cases",
            "10",
            "--timeout",
            TIMEOUT,
            "--format",
            "json",
        ],
        &common::scripted_server(
            &dir.path().join("record.jsonl"),
            &dir.path().join("verdicts.jsonl"),
            &script.to_string(),
        ),
    );
    assert_eq!(code, Some(1), "{stdout}\n{stderr}");
    let report = report(&stdout, &stderr);
    let output_findings: BTreeSet<String> = found(&report)
        .into_iter()
        .filter(|(_, check)| check == "output-schema")
        .map(|(tool, _)| tool)
        .collect();
    assert_eq!(
        output_findings,
        BTreeSet::from(["over_count".to_string(), "over_ratio".to_string()]),
        "{stdout}"
    );
}

/// `--replay` sends again only the findings of the tools `--tool` and `--skip` select, and says
/// how many it left out.
#[test]
fn replay_honours_tool_and_skip() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("findings.json");
    std::fs::write(
        &file,
        r#"{"seed": 3, "findings": [
            {"tool": "weather", "check": "output-schema", "arguments": {"city": "Oslo"}},
            {"tool": "set_volume", "check": "accepted-invalid", "arguments": {"level": 99}},
            {"tool": "divide", "check": "crash", "arguments": {"a": 1, "b": 0}}
        ]}"#,
    )
    .unwrap();
    let file = file.to_str().unwrap();
    let replayed = |selection: &[&str]| {
        let mut args = vec!["--replay", file, "--timeout", TIMEOUT, "--format", "json"];
        args.extend(selection);
        let (code, stdout, stderr) = fuzz(&args, &faulty_server());
        assert_eq!(code, Some(1), "{stderr}");
        (found(&report(&stdout, &stderr)), stderr)
    };
    let pair = |tool: &str, check: &str| (tool.to_string(), check.to_string());
    let (found, stderr) = replayed(&["--skip", "divide", "--skip", "set_*"]);
    assert_eq!(found, BTreeSet::from([pair("weather", "output-schema")]));
    assert!(
        stderr.contains("note: 2 findings left out by --tool/--skip\n"),
        "{stderr}"
    );
    let (found, stderr) = replayed(&["--tool", "set_volume"]);
    assert_eq!(
        found,
        BTreeSet::from([pair("set_volume", "accepted-invalid")])
    );
    assert!(
        stderr.contains("note: 2 findings left out by --tool/--skip\n"),
        "{stderr}"
    );
}

/// interop/scripted-server.mjs listing its built-in `slow` tool (it answers after `ms`
/// milliseconds) with `ms` up to `max_ms`.
fn slow_server(max_ms: u64) -> Vec<String> {
    let script = serde_json::json!({"tools": [{
        "name": "slow",
        "inputSchema": {
            "type": "object",
            "properties": {"ms": {"type": "integer", "minimum": 0, "maximum": max_ms}},
            "required": ["ms"],
            "additionalProperties": false
        }
    }]});
    vec![
        node(),
        require("interop/scripted-server.mjs").display().to_string(),
        "--script".into(),
        script.to_string(),
    ]
}

/// The one finding of a run's JSON report.
fn only_finding(report: &Value) -> &Value {
    let findings = report["findings"].as_array().unwrap();
    assert_eq!(findings.len(), 1, "{report:#}");
    &findings[0]
}

#[test]
fn a_hang_whose_shrinking_budget_is_spent_is_reported_with_its_smallest_case_so_far() {
    // Every `ms` past the 1.5 s timeout hangs; shrinking halves it step by step (from 60000 for
    // this seed: 1875 hangs, 937 is answered, 563 ms within the timeout even on a loaded
    // machine). A budget of 2.2 s leaves room for one step that hangs (a hang is only proven by a
    // whole timeout).
    let args = |budget: &'static str| {
        [
            "--seed",
            "1",
            "--timeout",
            "1.5",
            "--hang-shrink-budget",
            budget,
            "--format",
            "json",
        ]
    };
    let (code, stdout, stderr) = fuzz(&args("2.2"), &slow_server(60_000));
    let cut = report(&stdout, &stderr);
    assert_eq!(code, Some(1), "{stderr}");
    let finding = only_finding(&cut);
    assert_eq!(finding["check"], "hang", "{stdout}");
    assert_eq!(
        finding["shrinking_cut"], "its budget of 2.2 s was spent",
        "{stdout}"
    );
    // The case reported still hangs (it is one that did), and its replay sends it.
    let ms = finding["arguments"]["ms"]
        .as_u64()
        .unwrap_or_else(|| panic!("{stdout}"));
    assert!(ms > 1500, "{stdout}");
    assert!(finding["replay"]
        .as_str()
        .unwrap()
        .contains(&format!("\"ms\":{ms}")));

    // Given time, shrinking goes further and is not cut.
    let (_, stdout, stderr) = fuzz(&args("60"), &slow_server(60_000));
    let whole = report(&stdout, &stderr);
    let finding = only_finding(&whole);
    assert_eq!(finding["shrinking_cut"], Value::Null, "{stdout}");
    let smallest = finding["arguments"]["ms"].as_u64().unwrap();
    assert!(
        smallest > 1500 && smallest < ms,
        "{smallest} after {ms}: {stdout}"
    );

    // The text report says so too.
    let (_, text, _) = fuzz(
        &[
            "--seed",
            "1",
            "--timeout",
            "1.5",
            "--hang-shrink-budget",
            "2.2",
        ],
        &slow_server(60_000),
    );
    assert!(
        text.contains("    shrinking stopped: its budget of 2.2 s was spent; these are the smallest arguments found by then\n"),
        "{text}"
    );
}

#[test]
fn a_run_whose_budget_is_spent_sends_no_further_case_and_says_so() {
    // Every call takes up to 0.3 s and none hangs: 100 cases cannot fit in 2 s. (The scripted
    // server checks no arguments, so an invalid case it accepts is a finding; a hang never is.)
    let (code, stdout, stderr) = fuzz(
        &["--seed", "2", "--budget", "2", "--format", "json"],
        &slow_server(300),
    );
    let report = report(&stdout, &stderr);
    let findings = report["findings"].as_array().unwrap();
    assert_eq!(
        code,
        Some(if findings.is_empty() { 0 } else { 1 }),
        "{stderr}"
    );
    assert_eq!(report["summary"]["budget_spent"], true, "{stdout}");
    let tool = &report["tools"][0];
    let sent = tool["cases"].as_u64().unwrap();
    let note = tool["note"].as_str().unwrap_or_else(|| panic!("{stdout}"));
    let not_sent: u64 = note
        .strip_prefix("stopped when the run's budget (--budget 2 s) was spent; ")
        .and_then(|rest| {
            rest.strip_suffix(" cases not sent")
                .or_else(|| rest.strip_suffix(" case not sent"))
        })
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("{note}"));
    assert!(sent < 100 && not_sent > 0, "{stdout}");
    assert_eq!(sent + not_sent, 100, "{stdout}");
    // A call cut by the budget is no hang: the per-call timeout (10 s) was never reached.
    assert!(
        findings.iter().all(|f| f["check"] == "accepted-invalid"),
        "{stdout}"
    );
}
