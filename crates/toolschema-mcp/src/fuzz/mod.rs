//! `fuzz`: call a live server's tools with the arguments their schemas allow and forbid, and
//! report what the server does wrong.
//!
//! For each tool (every page of `tools/list`), [`toolschema::generate`] makes its cases from the
//! seed; they are sent in that order, tools side by side (`jobs` at a time), one call at a time
//! per tool. Each answer goes through the [`checks`]. The first case that fails a check is
//! confirmed by sending it again (alone, for the checks that need it), then shrunk (fewer
//! properties, shorter strings, smaller numbers and arrays) while it still fails the same check
//! and the schema still judges it the same way; the finding carries the smallest case and the
//! JSON-RPC line that replays it. Two confirmations cost less: a hang is seen twice by the copy
//! of a slow call sent beside it (see `server`), and a crash, which costs a restart per call, is
//! confirmed by the first smaller case that crashes the server too (the case itself is sent again
//! only when none does). A crash restarts the server, so one crash hides nothing else; a
//! confirmed hang ends its tool's cases, each of which could cost the whole timeout again.

pub mod checks;
pub mod leaks;
pub(crate) mod server;

pub use checks::{Answer, CallRecord, Check, Observation, Severity};
pub use server::Unavailable;

use crate::connection::Target;
use checks::Sent;
use futures::StreamExt;
use leaks::Known;
use serde_json::{json, Value};
use server::{Reach, Server};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::time::{Duration, Instant};
use toolschema::generate::{self, GenerateOptions, Kind, MAX_ERRORS};
use toolschema::{CompileOptions, CompiledTool, Glob, Tool};

/// How many cases of one tool may hang before the rest of its cases are left out (each costs the
/// whole timeout).
const MAX_HANGS_PER_TOOL: usize = 3;
/// How many cases of one tool may crash the server before the rest are left out (each costs a
/// restart).
const MAX_CRASHES_PER_TOOL: usize = 10;
/// How many cases that failed a check are tried as its finding before the check is given up
/// for the tool (a case that does not fail again when sent alone is not a finding).
const CONFIRM_ATTEMPTS: usize = 3;
/// How many calls shrinking one finding may make.
const SHRINK_CALLS: usize = 48;
/// How many of those may hang or crash (each costs the timeout or a restart).
const SHRINK_COSTLY: usize = 2;

/// How a run goes.
#[derive(Debug, Clone)]
pub struct FuzzOptions {
    /// The seed; the same seed sends the same cases.
    pub seed: u64,
    /// Cases per tool.
    pub cases: usize,
    /// How long one call may take.
    pub timeout: Duration,
    /// How many tools are called side by side.
    pub jobs: usize,
    /// Only tools matching one of these (all when empty).
    pub tools: Vec<Glob>,
    /// Not the tools matching one of these.
    pub skip: Vec<Glob>,
    /// HTTP headers for every request (`--url` only).
    pub headers: Vec<(String, String)>,
    /// The largest message accepted from the server.
    pub max_message_bytes: usize,
    /// How long the whole run may take (`None`: no limit). Once it is spent no further case
    /// is sent, shrinking stops, and a call's wait is not stretched by progress notifications
    /// past it; the report says so.
    pub budget: Option<Duration>,
    /// How long shrinking one hang may take (`None`: twice the timeout). A hang found is
    /// already confirmed; when this is spent it is reported with the smallest case found so far.
    pub hang_shrink_budget: Option<Duration>,
}

impl FuzzOptions {
    /// How long shrinking one hang may take.
    fn hang_shrink_budget(&self) -> Duration {
        self.hang_shrink_budget.unwrap_or(self.timeout * 2)
    }
}

impl FuzzOptions {
    /// Whether the tool `name` is fuzzed (or replayed): it matches `--tool` (when given) and
    /// not `--skip`.
    pub fn selects(&self, name: &str) -> bool {
        (self.tools.is_empty() || self.tools.iter().any(|g| g.matches(name)))
            && !self.skip.iter().any(|g| g.matches(name))
    }
}

impl Default for FuzzOptions {
    fn default() -> Self {
        FuzzOptions {
            seed: 0,
            cases: 100,
            timeout: Duration::from_secs(10),
            jobs: 4,
            tools: Vec::new(),
            skip: Vec::new(),
            headers: Vec::new(),
            max_message_bytes: crate::framing::DEFAULT_MAX_MESSAGE_BYTES,
            budget: None,
            hang_shrink_budget: None,
        }
    }
}

/// One thing found, with the call that shows it.
#[derive(Debug, Clone, PartialEq)]
pub struct Finding {
    /// The tool; `None` for what the server did outside any call (output while idle).
    pub tool: Option<String>,
    /// The check that failed.
    pub check: Check,
    /// How bad.
    pub severity: Severity,
    /// The arguments that show it (after shrinking); `None` when absent or when there was no
    /// call.
    pub arguments: Option<Value>,
    /// What happened.
    pub message: String,
    /// The JSON-RPC line that replays it (`None` when there was no call).
    pub replay: Option<String>,
    /// What the case tried, before shrinking (`missing required 'query'`).
    pub case: Option<String>,
    /// How many cases failed this check for this tool.
    pub cases: usize,
    /// Why shrinking stopped before it was done, when it did (`its budget of 20 s was spent`):
    /// `arguments` are then the smallest case found by then.
    pub shrinking_cut: Option<String>,
}

/// What happened to one tool.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolRun {
    /// The tool's name.
    pub name: String,
    /// How many cases were sent.
    pub cases: usize,
    /// Why it was not fuzzed, or why it stopped early.
    pub note: Option<String>,
    /// The run stopped (the server could not be reached) before this tool's cases were all
    /// sent.
    pub interrupted: bool,
    /// How long it took.
    pub seconds: f64,
}

impl ToolRun {
    /// A tool before any of its cases, with `note` saying why it is left out, if it is.
    fn unsent(name: String, note: Option<String>) -> Self {
        ToolRun {
            name,
            cases: 0,
            note,
            interrupted: false,
            seconds: 0.0,
        }
    }
}

/// The result of a run.
#[derive(Debug, Clone, PartialEq)]
pub struct Report {
    /// The seed (for a replay, the seed of the run the findings came from, if known).
    pub seed: u64,
    /// Every tool fuzzed or left out, in listing order.
    pub tools: Vec<ToolRun>,
    /// The findings: by tool in listing order, then by check.
    pub findings: Vec<Finding>,
    /// How many cases were sent in all.
    pub cases: usize,
    /// How long the run took.
    pub seconds: f64,
    /// How many times the server was started or connected to, spares started ahead of a
    /// restart included (used or not).
    pub server_starts: u64,
    /// Set when the run could not finish: the server could not be restarted or reached again.
    pub stopped: Option<String>,
    /// Whether the run's budget ([`FuzzOptions::budget`]) was spent before every case was sent.
    pub budget_spent: bool,
}

impl Report {
    /// Whether anything at error or warning severity was found.
    pub fn failed(&self) -> bool {
        self.findings
            .iter()
            .any(|f| matches!(f.severity, Severity::Error | Severity::Warning))
    }
}

/// What a run tells as it goes (for a progress bar). Every method may be called from any task.
pub trait Progress {
    /// The run knows what it will do: `tools` tools, at most `cases` cases in all.
    fn planned(&self, _tools: usize, _cases: usize) {}
    /// A tool's cases were made: `fewer` than planned (its schema allows fewer).
    fn fewer_cases(&self, _fewer: usize) {}
    /// One case was sent and answered (or not).
    fn case_done(&self, _tool: &str) {}
    /// A finding was confirmed.
    fn found(&self, _finding: &Finding) {}
    /// What the run is waiting for now, when it is something slow (`confirming that 'sleep'
    /// hangs: sent again, up to 10 s`); an empty text when that wait is over.
    fn waiting(&self, _what: &str) {}
}

/// A progress listener that does nothing.
pub struct Quiet;

impl Progress for Quiet {}

/// A finding to replay (from a previous run's JSON output).
#[derive(Debug, Clone, PartialEq)]
pub struct ReplayRequest {
    /// The tool to call.
    pub tool: String,
    /// The check it failed, if known: the replay says whether the same check fails again.
    pub check: Option<Check>,
    /// The arguments (`None`: absent).
    pub arguments: Option<Value>,
}

/// A listed tool, ready to be called.
struct Prepared {
    name: String,
    compiled: CompiledTool,
    /// What the caller knows before sending anything: the command line or URL, and the tool's
    /// listing.
    known: Known,
}

/// What the whole run shares.
struct Context<'a> {
    server: Server,
    options: &'a FuzzOptions,
    /// When the run's budget is spent.
    deadline: Option<Instant>,
    progress: &'a dyn Progress,
    /// Calls a dead server took with it when it could not be reached again to tell which one
    /// killed it.
    lost: std::sync::Mutex<Vec<String>>,
}

fn reach(target: &Target, options: &FuzzOptions) -> Reach {
    Reach {
        target: target.clone(),
        headers: options.headers.clone(),
        max_message_bytes: options.max_message_bytes,
        startup: options.timeout.max(Duration::from_secs(30)),
    }
}

fn known_of(target: &Target) -> Known {
    let mut known = Known::default();
    match target {
        Target::Command(command) => {
            // The server runs here, on this machine, in this directory.
            if let Ok(here) = std::env::current_dir() {
                known.add_machine_root(&here);
            }
            let program = std::path::Path::new(&command.program);
            known.add_machine_root(program);
            // Where the program really lives: a link (a venv linked into a scratch folder)
            // or a bare name on PATH can name a folder under another top directory.
            if let Some(real) = program_location(program, std::env::var_os("PATH")) {
                known.add_machine_root(&real);
            }
            known.add(&command.program);
            for arg in &command.args {
                known.add(arg);
            }
        }
        Target::Url(url) => known.add(url),
    }
    known
}

/// The absolute path, links followed, of the program a command starts: as written when it
/// holds a slash (relative to the current directory), else the first match on `search_path`.
fn program_location(
    program: &std::path::Path,
    search_path: Option<std::ffi::OsString>,
) -> Option<std::path::PathBuf> {
    if program.components().count() > 1 {
        return std::fs::canonicalize(program).ok();
    }
    std::env::split_paths(&search_path?)
        .map(|dir| dir.join(program))
        .find(|candidate| candidate.is_file())
        .and_then(|found| std::fs::canonicalize(found).ok())
}

/// Turn the listing into tools to call: those `selected` compiled (formats asserted), the others
/// noted. `known` is what the caller knows of the server (its command line or URL).
fn prepare(
    listing: server::Listing,
    selected: impl Fn(&str) -> bool,
    known: &Known,
) -> (Vec<Prepared>, Vec<ToolRun>) {
    let mut prepared = Vec::new();
    let mut runs = Vec::new();
    let compile = CompileOptions::new().assert_format(true);
    // (The schemas compare numbers as the server's text states them.)
    for (raw, stated) in listing.tools.into_iter().zip(listing.stated) {
        let name = raw
            .get("name")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        if !selected(&name) {
            continue;
        }
        let task_only = raw
            .pointer("/execution/taskSupport")
            .and_then(Value::as_str)
            == Some("required");
        if task_only {
            runs.push(ToolRun::unsent(
                name,
                Some(
                    "not fuzzed: it can only be called as a task (execution.taskSupport is \"required\"), which the fuzzer does not do"
                        .into(),
                ),
            ));
            continue;
        }
        let mut tool_known = known.clone();
        tool_known.add(&raw.to_string());
        let compiled = Tool::from_value(raw)
            .map(|tool| tool.with_stated_numbers(stated))
            .map_err(|e| e.to_string())
            .and_then(|tool| tool.compile_with(&compile).map_err(|e| e.to_string()));
        match compiled {
            Ok(compiled) => prepared.push(Prepared {
                name,
                compiled,
                known: tool_known,
            }),
            Err(why) => runs.push(ToolRun::unsent(name, Some(format!("not fuzzed: {why}")))),
        }
    }
    (prepared, runs)
}

/// Fuzz every selected tool of a server.
pub async fn run(
    target: &Target,
    options: &FuzzOptions,
    progress: &dyn Progress,
) -> Result<Report, Unavailable> {
    let started = Instant::now();
    let context = Context {
        server: Server::new(reach(target, options), options.jobs),
        options,
        deadline: options.budget.map(|budget| started + budget),
        progress,
        lost: std::sync::Mutex::new(Vec::new()),
    };
    // A run narrowed with --tool likely needs fewer lanes than --jobs: its other lanes start
    // when a tool takes them, not beside the first, whose listing they would slow down.
    let (listing, order) = context.start_and_list(options.tools.is_empty()).await?;
    let (tools, mut runs) = prepare(listing, |name| options.selects(name), &known_of(target));
    progress.planned(tools.len(), tools.len().saturating_mul(options.cases));
    let outcomes: Vec<ToolOutcome> = futures::stream::iter(tools.into_iter().map(Arc::new))
        .map(|tool| fuzz_tool(&context, tool))
        .buffer_unordered(options.jobs.max(1))
        .collect()
        .await;
    let mut findings = Vec::new();
    let mut stopped = None;
    let mut cases = 0;
    let mut budget_spent = false;
    for outcome in outcomes {
        cases += outcome.run.cases;
        budget_spent |= outcome.budget_spent;
        runs.push(outcome.run);
        findings.extend(outcome.findings);
        if stopped.is_none() {
            stopped = outcome.stopped;
        }
    }
    let lost = std::mem::take(&mut *context.lost.lock().unwrap_or_else(|e| e.into_inner()));
    if !lost.is_empty() {
        findings.push(Finding {
            tool: None,
            check: Check::Crash,
            severity: Severity::Error,
            arguments: None,
            message: format!(
                "the server went away and could not be reached again, so the call that did it is not known; the calls in flight:\n{}",
                lost.join("\n")
            ),
            replay: None,
            case: None,
            cases: lost.len(),
            shrinking_cut: None,
        });
    }
    for stray in context.server.unclaimed_strays().await {
        findings.push(Finding {
            tool: None,
            check: Check::ProtocolViolation,
            severity: Severity::Error,
            arguments: None,
            message: format!("while no call was waiting, {stray}"),
            replay: None,
            case: None,
            cases: 0,
            shrinking_cut: None,
        });
    }
    context.server.shut_down().await;
    sort_by_listing(&mut runs, &mut findings, &order);
    Ok(Report {
        seed: options.seed,
        tools: runs,
        findings,
        cases,
        seconds: started.elapsed().as_secs_f64(),
        server_starts: context.server.starts(),
        stopped,
        budget_spent,
    })
}

/// Send each request again, one at a time and alone, and report what each shows now.
pub async fn replay(
    target: &Target,
    options: &FuzzOptions,
    requests: &[ReplayRequest],
    progress: &dyn Progress,
) -> Result<Report, Unavailable> {
    let started = Instant::now();
    let context = Context {
        server: Server::new(reach(target, options), 1),
        options,
        deadline: None,
        progress,
        lost: std::sync::Mutex::new(Vec::new()),
    };
    let (listing, order) = context.start_and_list(false).await?;
    let (tools, _) = prepare(listing, |_| true, &known_of(target));
    progress.planned(tools.len(), requests.len());
    let mut findings = Vec::new();
    let mut runs: BTreeMap<String, ToolRun> = BTreeMap::new();
    let mut stopped = None;
    for request in requests {
        let run = runs
            .entry(request.tool.clone())
            .or_insert_with(|| ToolRun::unsent(request.tool.clone(), None));
        let Some(tool) = tools.iter().find(|t| t.name == request.tool) else {
            run.note = Some(
                "the server does not list this tool (or its schema cannot be compiled)".into(),
            );
            continue;
        };
        let call_started = Instant::now();
        let observed = match context
            .observe_alone(tool, request.arguments.as_ref())
            .await
        {
            Ok(observed) => observed,
            Err(e) => {
                stopped = Some(e.0);
                run.interrupted = true;
                break;
            }
        };
        run.cases += 1;
        run.seconds += call_started.elapsed().as_secs_f64();
        progress.case_done(&tool.name);
        for observation in observed {
            if request.check.is_some_and(|c| c != observation.check) {
                continue;
            }
            let finding = Finding {
                tool: Some(tool.name.clone()),
                check: observation.check,
                severity: observation.severity,
                arguments: request.arguments.clone(),
                message: observation.message,
                replay: Some(replay_line(&tool.name, request.arguments.as_ref())),
                case: None,
                cases: 1,
                shrinking_cut: None,
            };
            progress.found(&finding);
            findings.push(finding);
        }
    }
    context.server.shut_down().await;
    let mut runs: Vec<ToolRun> = runs.into_values().collect();
    sort_by_listing(&mut runs, &mut findings, &order);
    let cases = runs.iter().map(|r| r.cases).sum();
    Ok(Report {
        seed: options.seed,
        tools: runs,
        findings,
        cases,
        seconds: started.elapsed().as_secs_f64(),
        server_starts: context.server.starts(),
        stopped,
        budget_spent: false,
    })
}

fn sort_by_listing(runs: &mut [ToolRun], findings: &mut [Finding], order: &[String]) {
    let rank = |name: Option<&str>| {
        name.and_then(|n| order.iter().position(|o| o == n))
            .unwrap_or(usize::MAX)
    };
    runs.sort_by_key(|r| rank(Some(&r.name)));
    findings.sort_by_key(|f| (rank(f.tool.as_deref()), f.check));
}

/// The `tools/call` request that sends `arguments` to `tool`, as one JSON-RPC line.
pub fn replay_line(tool: &str, arguments: Option<&Value>) -> String {
    json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params(tool, arguments)})
        .to_string()
}

/// How the schema judges a value, for shrinking: valid, or the set of failed keywords and where
/// (array indexes left out, so fewer items that fail the same way still count as the same).
#[derive(Debug, Clone, PartialEq, Eq)]
enum Verdict {
    Valid,
    Invalid(BTreeSet<(String, String)>),
}

fn judge(
    tool: &CompiledTool,
    arguments: Option<&Value>,
) -> (Kind, Vec<toolschema::ValidationError>, Verdict) {
    let empty = json!({});
    match tool.validate_input_first(arguments.unwrap_or(&empty), MAX_ERRORS) {
        Ok(()) => (Kind::Valid, Vec::new(), Verdict::Valid),
        Err(errors) => {
            let errors = errors.into_vec();
            let verdict = Verdict::Invalid(
                errors
                    .iter()
                    .map(|e| (e.keyword.clone(), without_indexes(&e.path)))
                    .collect(),
            );
            (Kind::Invalid, errors, verdict)
        }
    }
}

fn without_indexes(pointer: &str) -> String {
    pointer
        .split('/')
        .map(|segment| {
            if !segment.is_empty() && segment.bytes().all(|b| b.is_ascii_digit()) {
                "*"
            } else {
                segment
            }
        })
        .collect::<Vec<_>>()
        .join("/")
}

fn params(tool: &str, arguments: Option<&Value>) -> Value {
    let mut params = json!({"name": tool});
    if let Some(arguments) = arguments {
        params["arguments"] = arguments.clone();
    }
    params
}

struct ToolOutcome {
    run: ToolRun,
    findings: Vec<Finding>,
    stopped: Option<String>,
    /// The run's budget was spent before its cases were all sent.
    budget_spent: bool,
}

impl Context<'_> {
    /// Start the server (on every lane, or on the first only: [`Server::start_and_list`]) and
    /// list its tools: the listing, and the tools' names in its order. A server that cannot be
    /// started or listed is shut down.
    async fn start_and_list(
        &self,
        every_lane: bool,
    ) -> Result<(server::Listing, Vec<String>), Unavailable> {
        let listing = match self.server.start_and_list(every_lane).await {
            Ok(listing) => listing,
            Err(e) => {
                self.server.shut_down().await;
                return Err(e);
            }
        };
        let order = listing
            .tools
            .iter()
            .filter_map(|t| t.get("name").and_then(Value::as_str).map(String::from))
            .collect();
        Ok((listing, order))
    }

    /// Keep a call the server went away with, for the run's finding when it cannot be reached
    /// again.
    fn note_lost(&self, how: &str, tool: &Prepared, arguments: Option<&Value>) {
        if let Ok(mut lost) = self.lost.lock() {
            lost.push(format!(
                "{how} while {} was in flight",
                replay_line(&tool.name, arguments)
            ));
        }
    }

    /// The longest a call may wait in all, progress notifications included: ten times the
    /// timeout, but not past `until` (the run's budget, a shrinking's), and never less than the
    /// timeout.
    fn ceiling(&self, until: Option<Instant>) -> Duration {
        let stretched = self.options.timeout * server::PROGRESS_CEILING;
        match until {
            Some(until) => stretched.min(
                until
                    .saturating_duration_since(Instant::now())
                    .max(self.options.timeout),
            ),
            None => stretched,
        }
    }

    /// Send one call (again once if the runner interrupted it) and check its answer; its wait
    /// is stretched by progress notifications at most up to `until`. `None` when `until` came
    /// first: the call was still under way, sending progress, when it was cut short, which
    /// shows nothing of the server.
    async fn observe_call(
        &self,
        lane: usize,
        tool: &Prepared,
        arguments: Option<&Value>,
        alone: bool,
        until: Option<Instant>,
    ) -> Result<Option<(CallRecord, Vec<Observation>)>, Unavailable> {
        let ceiling = self.ceiling(until);
        let cut_short = ceiling < self.options.timeout * server::PROGRESS_CEILING;
        let send = |alone| {
            self.server.call(
                lane,
                params(&tool.name, arguments),
                self.options.timeout,
                ceiling,
                alone,
            )
        };
        let started = Instant::now();
        let mut record = send(alone).await?;
        // Past the ceiling only a call that kept sending progress can go unanswered: cut at a
        // ceiling lowered by `until`, it did not hang.
        if cut_short
            && record.answer == Answer::Hang
            && started.elapsed() + CEILING_SLACK >= ceiling
        {
            return Ok(None);
        }
        if record.answer == Answer::Interrupted {
            record = send(alone).await?;
        }
        if !record.alone && matches!(record.answer, Answer::Closed { .. }) {
            // A crash takes every call in flight with it: send the case again alone to learn
            // whether it was this one, and what it does otherwise.
            let again = send(true).await;
            match again {
                Ok(again) => record = again,
                Err(unavailable) => {
                    // Nothing can tell which call it was: the run keeps the list for a finding
                    // of the server's.
                    if let Answer::Closed { how, .. } = &record.answer {
                        self.note_lost(how, tool, arguments);
                    }
                    return Err(unavailable);
                }
            }
        }
        let (kind, errors, _) = judge(&tool.compiled, arguments);
        let sent = Sent {
            kind,
            errors: &errors,
            arguments,
            known: &tool.known,
        };
        let observations = checks::observe(&tool.compiled, &sent, &record, self.options.timeout);
        Ok(Some((record, observations)))
    }

    /// Send one call alone and check its answer.
    async fn observe_alone(
        &self,
        tool: &Prepared,
        arguments: Option<&Value>,
    ) -> Result<Vec<Observation>, Unavailable> {
        Ok(self
            .observe_call(0, tool, arguments, true, None)
            .await?
            .map(|(_, observations)| observations)
            .unwrap_or_default())
    }

    /// Send `arguments` again; the observation of `check` if it fails it again.
    async fn again(
        &self,
        lane: usize,
        tool: &Prepared,
        arguments: Option<&Value>,
        check: Check,
        until: Option<Instant>,
    ) -> Result<Option<Observation>, Unavailable> {
        let Some((_, observations)) = self
            .observe_call(lane, tool, arguments, check.needs_isolation(), until)
            .await?
        else {
            return Ok(None);
        };
        Ok(observations.into_iter().find(|o| o.check == check))
    }

    /// Confirm that a case fails `check` when sent again, and shrink it while it still does.
    /// `hang_repeated`: the case's own call already showed its hang twice (and the server
    /// answered meanwhile: it takes calls side by side, so a hang's smaller cases may be tried
    /// side by side too).
    async fn confirm_and_shrink(
        &self,
        lane: usize,
        tool: &Prepared,
        case: &generate::Case,
        first: &Observation,
        hang_repeated: bool,
    ) -> Result<Option<Finding>, Unavailable> {
        let check = first.check;
        // A crash costs a restart per call: shrinking goes first, and a smaller case that
        // crashes the server too confirms it; the case itself is sent again only when none does.
        let shrink_first = check == Check::Crash;
        let mut shrunk = if shrink_first {
            self.shrink(lane, tool, case.value.as_ref(), check, false)
                .await
        } else {
            Shrunk::default()
        };
        let confirmed = shrunk.smallest.is_some() || (check == Check::Hang && hang_repeated);
        let mut observed = first.clone();
        if !confirmed {
            if check == Check::Hang {
                self.progress.waiting(&format!(
                    "confirming that '{}' hangs: its case sent again, waiting up to {}",
                    tool.name,
                    seconds(self.ceiling(self.deadline))
                ));
            }
            let again = self
                .again(lane, tool, case.value.as_ref(), check, self.deadline)
                .await;
            self.progress.waiting("");
            match again? {
                Some(again) => observed = again,
                None => return Ok(None),
            }
        }
        if !shrink_first {
            shrunk = self
                .shrink(lane, tool, case.value.as_ref(), check, hang_repeated)
                .await;
        }
        let current = match shrunk.smallest {
            Some((smaller, again)) => {
                observed = again;
                Some(smaller)
            }
            None => case.value.clone(),
        };
        Ok(Some(Finding {
            tool: Some(tool.name.clone()),
            check,
            severity: observed.severity,
            replay: Some(replay_line(&tool.name, current.as_ref())),
            arguments: current,
            message: observed.message,
            case: Some(case.label.clone()),
            cases: 1,
            shrinking_cut: shrunk.cut,
        }))
    }

    /// Shrink a case that failed `check` while it still fails it and the schema still judges it
    /// the same way: the smallest case found and what it showed, if any smaller one failed, and
    /// why shrinking stopped early if it did. A hang is shrunk within its budget
    /// ([`FuzzOptions::hang_shrink_budget`]), `side_by_side` [`HANG_SHRINK_WIDTH`] candidates
    /// at a time (for a server seen to answer while a call of it hangs).
    async fn shrink(
        &self,
        lane: usize,
        tool: &Prepared,
        start: Option<&Value>,
        check: Check,
        side_by_side: bool,
    ) -> Shrunk {
        let mut shrunk = Shrunk::default();
        let Some(start) = start else {
            return shrunk;
        };
        let (_, _, verdict) = judge(&tool.compiled, Some(start));
        let costly = matches!(check, Check::Hang | Check::Crash);
        let hang = check == Check::Hang;
        let hang_budget = self.options.hang_shrink_budget();
        let until = match (hang, self.deadline) {
            (true, Some(deadline)) => Some(deadline.min(Instant::now() + hang_budget)),
            (true, None) => Some(Instant::now() + hang_budget),
            (false, deadline) => deadline,
        };
        let width = if hang && side_by_side {
            HANG_SHRINK_WIDTH
        } else {
            1
        };
        let (mut calls, mut costs, mut step) = (0, 0, 0);
        'shrinking: loop {
            let current = shrunk.smallest.as_ref().map_or(start, |(value, _)| value);
            let mut candidates = generate::smaller(current)
                .into_iter()
                .filter(|candidate| judge(&tool.compiled, Some(candidate)).2 == verdict);
            loop {
                if calls >= SHRINK_CALLS || (costly && costs >= SHRINK_COSTLY && !hang) {
                    break 'shrinking;
                }
                // A hang is proven only by a whole timeout without an answer: a step that
                // cannot have one before the budget ends is not started.
                if let Some(until) = until {
                    let left = until.saturating_duration_since(Instant::now());
                    if (hang && left < self.options.timeout) || left.is_zero() {
                        shrunk.cut = Some(if hang && self.deadline.is_none_or(|d| d > until) {
                            format!("its budget of {} was spent", seconds(hang_budget))
                        } else {
                            "the run's budget was spent".to_string()
                        });
                        break 'shrinking;
                    }
                }
                let batch: Vec<Value> = candidates.by_ref().take(width).collect();
                if batch.is_empty() {
                    break 'shrinking;
                }
                calls += batch.len();
                step += 1;
                if hang {
                    self.progress.waiting(&format!(
                        "shrinking the hang of '{}': {} smaller case{} sent (step {step}), waiting up to {}; {} of its budget left",
                        tool.name,
                        batch.len(),
                        if batch.len() == 1 { "" } else { "s" },
                        seconds(self.options.timeout),
                        seconds(until.map_or(hang_budget, |u| u.saturating_duration_since(Instant::now())))
                    ));
                }
                let answers = futures::future::join_all(
                    batch
                        .iter()
                        .map(|candidate| self.again(lane, tool, Some(candidate), check, until)),
                )
                .await;
                if hang {
                    self.progress.waiting("");
                }
                // The first in order that still fails: the others are dropped.
                let mut found = None;
                for (candidate, answer) in batch.into_iter().zip(answers) {
                    // A server that can no longer be reached ends the shrinking, not the
                    // finding (the run stops at its next call).
                    let Ok(answer) = answer else {
                        break 'shrinking;
                    };
                    if let (None, Some(again)) = (&found, answer) {
                        found = Some((candidate, again));
                    }
                }
                if let Some(smaller) = found {
                    if costly {
                        costs += 1;
                    }
                    // A hang seen only once the budget ran out may have been a call cut short
                    // while it sent progress: it does not count.
                    if hang && until.is_some_and(|until| Instant::now() >= until) {
                        shrunk.cut =
                            Some(format!("its budget of {} was spent", seconds(hang_budget)));
                        break 'shrinking;
                    }
                    shrunk.smallest = Some(smaller);
                    continue 'shrinking;
                }
            }
        }
        shrunk
    }
}

/// What shrinking made of a case.
#[derive(Default)]
struct Shrunk {
    /// The smallest case that still failed, and what it showed.
    smallest: Option<(Value, Observation)>,
    /// Why it stopped before it was done, if it did.
    cut: Option<String>,
}

/// How close to its ceiling a call must have waited to count as cut by it (timers fire a little
/// late or early).
const CEILING_SLACK: Duration = Duration::from_millis(100);

/// How many smaller cases of a hang are sent side by side, for a server that answers while a
/// call of it hangs: each step then costs one timeout for all of them.
const HANG_SHRINK_WIDTH: usize = 4;

/// A duration for a message: `10 s`, `2.5 s`.
fn seconds(duration: Duration) -> String {
    let s = duration.as_secs_f64();
    if s.fract() == 0.0 {
        format!("{s:.0} s")
    } else {
        format!("{s:.1} s")
    }
}

/// Make one tool's cases, send them in order, and turn what fails into findings.
async fn fuzz_tool(context: &Context<'_>, tool: Arc<Prepared>) -> ToolOutcome {
    let options = GenerateOptions {
        seed: context.options.seed,
        cases: context.options.cases,
    };
    let generated = cases_of(&tool, options).await;
    context
        .progress
        .fewer_cases(options.cases.saturating_sub(generated.cases.len()));
    let lane = context.server.take_lane();
    let outcome = fuzz_tool_on(context, lane, &tool, &generated).await;
    context.server.give_lane(lane);
    outcome
}

/// A tool's cases, made when its turn comes, so that a run holds the cases of the tools being
/// fuzzed, not of every tool (a tool's cases can take megabytes: a 1 MiB string, a
/// 100,000-item array). Made on a blocking thread: the runtime's one thread goes on serving
/// the calls in flight meanwhile.
async fn cases_of(tool: &Arc<Prepared>, options: GenerateOptions) -> generate::Generated {
    let shared = Arc::clone(tool);
    match tokio::task::spawn_blocking(move || generate::arguments(&shared.compiled, &options)).await
    {
        Ok(generated) => generated,
        Err(e) if e.is_panic() => std::panic::resume_unwind(e.into_panic()),
        // Cancelled: only when the runtime shuts down, which it does not while the run awaits.
        Err(_) => generate::arguments(&tool.compiled, &options),
    }
}

async fn fuzz_tool_on(
    context: &Context<'_>,
    lane: usize,
    tool: &Prepared,
    generated: &generate::Generated,
) -> ToolOutcome {
    let started = Instant::now();
    let mut found: BTreeMap<Check, Finding> = BTreeMap::new();
    let mut counts: BTreeMap<Check, usize> = BTreeMap::new();
    let mut attempts: BTreeMap<Check, usize> = BTreeMap::new();
    let (mut sent, mut hangs, mut crashes) = (0, 0, 0);
    let mut note = None;
    // Answers this side could not read (over the size limit, nested too deep): nothing was
    // checked of them, which the tool's note says.
    let mut unread: Option<(usize, String)> = None;
    let mut stopped = None;
    let mut budget_spent = false;
    for (i, case) in generated.cases.iter().enumerate() {
        if found.contains_key(&Check::Hang) {
            // Every further case could cost the whole timeout again, and the hang is proven.
            note = Some(format!(
                "stopped after a confirmed hang; {} not sent",
                toolschema::text::count(generated.cases.len() - i, "case", "cases")
            ));
            break;
        }
        if context
            .deadline
            .is_some_and(|deadline| Instant::now() >= deadline)
        {
            budget_spent = true;
            note = Some(format!(
                "stopped when the run's budget (--budget {}) was spent; {} not sent",
                seconds(context.options.budget.unwrap_or_default()),
                toolschema::text::count(generated.cases.len() - i, "case", "cases")
            ));
            break;
        }
        if hangs >= MAX_HANGS_PER_TOOL || crashes >= MAX_CRASHES_PER_TOOL {
            let what = if hangs >= MAX_HANGS_PER_TOOL {
                "hung"
            } else {
                "crashed the server"
            };
            let count = hangs.max(crashes);
            note = Some(format!(
                "stopped after {count} cases {what}; {} not sent",
                toolschema::text::count(generated.cases.len() - i, "case", "cases")
            ));
            break;
        }
        let outcome = context
            .observe_call(lane, tool, case.value.as_ref(), false, context.deadline)
            .await;
        let (record, observations) = match outcome {
            Ok(Some(outcome)) => outcome,
            Ok(None) => {
                budget_spent = true;
                note = Some(format!(
                    "stopped when the run's budget (--budget {}) was spent, its last call still under way (sending progress notifications); {} not sent",
                    seconds(context.options.budget.unwrap_or_default()),
                    toolschema::text::count(generated.cases.len() - i, "case", "cases")
                ));
                break;
            }
            Err(e) => {
                stopped = Some(e.0);
                break;
            }
        };
        sent += 1;
        context.progress.case_done(&tool.name);
        if let Answer::Unread(why) = &record.answer {
            unread.get_or_insert_with(|| (0, why.clone())).0 += 1;
        }
        for observation in observations {
            *counts.entry(observation.check).or_default() += 1;
            match observation.check {
                Check::Hang => hangs += 1,
                Check::Crash => crashes += 1,
                _ => {}
            }
            if found.contains_key(&observation.check) {
                continue;
            }
            let tried = attempts.entry(observation.check).or_default();
            if *tried >= CONFIRM_ATTEMPTS {
                continue;
            }
            *tried += 1;
            match context
                .confirm_and_shrink(lane, tool, case, &observation, record.hang_repeated)
                .await
            {
                Ok(Some(finding)) => {
                    context.progress.found(&finding);
                    found.insert(observation.check, finding);
                }
                Ok(None) => {}
                Err(e) => {
                    if observation.check == Check::Crash {
                        // The server went away with this call and cannot be reached to confirm
                        // it (over HTTP nothing restarts it): the run's finding names the call.
                        context.note_lost(&observation.message, tool, case.value.as_ref());
                    }
                    stopped = Some(e.0);
                    break;
                }
            }
        }
        if stopped.is_some() {
            break;
        }
    }
    let mut add_note = |more: String| {
        note = Some(match note.take() {
            Some(note) => format!("{note}; {more}"),
            None => more,
        });
    };
    if !generated.cases.iter().any(|c| c.kind == Kind::Valid) {
        if let Some(skipped) = generated.skipped.first() {
            add_note(format!(
                "no valid arguments could be made ({}), so only invalid ones were sent",
                skipped.reason
            ));
        }
    }
    if let Some((count, why)) = unread {
        add_note(format!(
            "{} could not be read here, so nothing was checked of {}: {why}",
            toolschema::text::count(count, "answer", "answers"),
            toolschema::text::noun(count as u64, "it", "them"),
        ));
    }
    let findings = found
        .into_values()
        .map(|mut finding| {
            finding.cases = counts.get(&finding.check).copied().unwrap_or(1).max(1);
            finding
        })
        .collect();
    ToolOutcome {
        run: ToolRun {
            name: tool.name.clone(),
            cases: sent,
            interrupted: stopped.is_some(),
            note,
            seconds: started.elapsed().as_secs_f64(),
        },
        findings,
        stopped,
        budget_spent,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_program_is_located_through_links_and_on_the_search_path() {
        let dir = tempfile::tempdir().unwrap();
        let real = dir.path().join("real");
        std::fs::create_dir(&real).unwrap();
        std::fs::write(real.join("server"), "#!/bin/sh\n").unwrap();
        std::os::unix::fs::symlink(&real, dir.path().join("linked")).unwrap();
        let real = std::fs::canonicalize(real.join("server")).unwrap();

        let through_link = dir.path().join("linked/server");
        assert_eq!(program_location(&through_link, None), Some(real.clone()));
        let search =
            std::env::join_paths([dir.path().join("none"), dir.path().join("linked")]).unwrap();
        assert_eq!(
            program_location(std::path::Path::new("server"), Some(search.clone())),
            Some(real)
        );
        assert_eq!(
            program_location(std::path::Path::new("absent"), Some(search)),
            None
        );
        assert_eq!(program_location(std::path::Path::new("server"), None), None);
    }

    #[test]
    fn replay_lines_are_tools_call_requests() {
        assert_eq!(
            replay_line("divide", Some(&json!({"a": 1, "b": 0}))),
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"divide","arguments":{"a":1,"b":0}}}"#
        );
        assert_eq!(
            replay_line("t", None),
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t"}}"#
        );
    }

    #[test]
    fn verdicts_ignore_array_indexes() {
        assert_eq!(without_indexes("/items/12/id"), "/items/*/id");
        assert_eq!(without_indexes(""), "");
        assert_eq!(without_indexes("/a1/0"), "/a1/*");
    }
}
