//! The server under test: started (or reached) on demand, restarted after a crash or a hang
//! that leaves it deaf, and called with one case at a time per tool.
//!
//! Tools are called side by side on lanes, one lane per job. For a command, each lane is a
//! process of its own, so a crash, a line of stray output or a stuck event loop belongs to the
//! one case in flight on it (a slow call of a case may have a copy beside it: `repeat_after`). Over HTTP the lanes are sessions with one server; there a call that
//! must be told apart from every other one runs alone: the gate lets it in only when nothing else
//! is in flight, and holds the others back until it is done.

use super::checks::{Answer, CallRecord};
use crate::connection::raw::{RawResults, Watch};
use crate::connection::{self, Session, SessionFailure, Target};
use crate::server_process::{describe_exit, ServerProcess, StderrTail};
use rmcp::model::{ClientRequest, CustomRequest, RequestId};
use rmcp::service::{Peer, PeerRequestOptions, RoleClient, ServiceError};
use serde_json::Value;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::{Mutex, RwLock};

/// How long a server that answered nothing in time gets to answer a ping before it is restarted.
const PING_LIMIT: Duration = Duration::from_secs(5);
/// How many times the timeout a call that keeps sending progress notifications may take in all:
/// past that it counts as a hang. Three: a hang that says how it is doing (progress forever)
/// costs 30 s at the default timeout, not the 100 s that ten times made every step of its
/// shrinking cost.
pub(crate) const PROGRESS_CEILING: u32 = 3;
/// How long a case's call over a process of its own may go unanswered before the same call is
/// sent again beside it (a twentieth of the timeout, within bounds): when the first hangs, the
/// second is already under way to confirm it, so a confirmed hang costs about one timeout, not
/// two. Only while nothing else is unanswered on that process: a call that timed out stays
/// unanswered, so a process that has had one sends no more copies.
fn repeat_after(timeout: Duration) -> Duration {
    (timeout / 20).clamp(Duration::from_millis(50), Duration::from_secs(1))
}
/// The largest call sent again beside itself (its `params` as JSON).
const MAX_REPEATED_BYTES: usize = 16 * 1024;
/// How long a stopped server gets to exit before it is killed.
const STOP_GRACE: Duration = Duration::from_millis(500);
/// How many times the server may be started in one run (first starts and spares included).
const MAX_STARTS: u64 = 200;

/// How to reach the server.
#[derive(Debug, Clone)]
pub(crate) struct Reach {
    pub(crate) target: Target,
    pub(crate) headers: Vec<(String, String)>,
    pub(crate) max_message_bytes: usize,
    /// How long starting (or reconnecting) and listing may take.
    pub(crate) startup: Duration,
}

/// Why the server cannot be used.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{0}")]
pub struct Unavailable(pub String);

/// One connection to the server (one process, for a command).
struct Live {
    peer: Peer<RoleClient>,
    /// The session, taken when the connection is closed.
    session: Mutex<Option<Session>>,
    results: RawResults,
    watch: Watch,
    process: Mutex<Option<ServerProcess>>,
    stderr: Option<StderrTail>,
    /// The runner stopped it; calls that end with it say nothing about their case.
    stopped: AtomicBool,
    /// It is gone; the next call starts another.
    dead: AtomicBool,
}

impl Live {
    /// End the session (closing the server's input, or the HTTP session) and stop the server:
    /// `grace` to exit by itself, then signals.
    async fn close(&self, grace: Duration) {
        if let Some(session) = self.session.lock().await.take() {
            let _ = tokio::time::timeout(Duration::from_secs(2), session.cancel()).await;
        }
        if let Some(mut process) = self.process.lock().await.take() {
            process.shut_down(grace).await;
        }
    }
}

/// The server under test.
pub(crate) struct Server {
    reach: Reach,
    /// The lanes, each with its connection (when started).
    lanes: Vec<Mutex<Option<Arc<Live>>>>,
    /// Whether each lane has had a server (so the next start is a restart).
    started: Vec<AtomicBool>,
    /// The lanes no tool is using.
    free: std::sync::Mutex<Vec<usize>>,
    gate: RwLock<()>,
    starts: AtomicU64,
    /// A server process started ahead once one has had to be restarted (a tool that crashed the
    /// server once tends to do it again): the next restart takes it instead of waiting for a
    /// start (a command only). One: two gained nothing measurable on two cores, where the starts
    /// compete for the same CPU as the calls.
    spare: std::sync::Mutex<Option<tokio::task::JoinHandle<Result<Live, Unavailable>>>>,
    /// Calls in flight now, and calls started so far: a call that began with none in flight and
    /// ended with no other started was alone.
    in_flight: AtomicU64,
    calls: AtomicU64,
}

/// Either side of the gate.
enum Pass<'a> {
    Shared(#[allow(dead_code)] tokio::sync::RwLockReadGuard<'a, ()>),
    Alone(#[allow(dead_code)] tokio::sync::RwLockWriteGuard<'a, ()>),
}

/// A server's tools as listed, each with the numbers of its definition that reading changed,
/// as the text states them (see [`toolschema::json::number::StatedNumbers`]).
pub(crate) struct Listing {
    /// The tools, in order.
    pub tools: Vec<Value>,
    /// For each tool, its stated numbers (pointers from the tool object).
    pub stated: Vec<toolschema::json::number::StatedNumbers>,
}

impl Server {
    /// A server called on `lanes` lanes (at least one).
    pub(crate) fn new(reach: Reach, lanes: usize) -> Self {
        let lanes = lanes.max(1);
        Server {
            reach,
            lanes: (0..lanes).map(|_| Mutex::new(None)).collect(),
            started: (0..lanes).map(|_| AtomicBool::new(false)).collect(),
            free: std::sync::Mutex::new((0..lanes).rev().collect()),
            gate: RwLock::new(()),
            starts: AtomicU64::new(0),
            spare: std::sync::Mutex::new(None),
            in_flight: AtomicU64::new(0),
            calls: AtomicU64::new(0),
        }
    }

    /// A lane no tool is using (lane 0 if, against the plan, all are taken).
    pub(crate) fn take_lane(&self) -> usize {
        self.free
            .lock()
            .ok()
            .and_then(|mut free| free.pop())
            .unwrap_or(0)
    }

    /// Give a lane back.
    pub(crate) fn give_lane(&self, lane: usize) {
        if let Ok(mut free) = self.free.lock() {
            if !free.contains(&lane) {
                free.push(lane);
            }
        }
    }

    /// Start the server and list its tools on the first lane (every page, each as sent). With
    /// `every_lane`, the other lanes start meanwhile, so that their first calls do not wait for a
    /// start (one that fails is started again at its first call); without it, a lane starts at
    /// its first call, so a run that needs fewer lanes starts fewer servers. Server processes
    /// starting side by side slow each other down: two Node servers take about 0.7 s where one
    /// takes 0.5 s on two cores.
    pub(crate) async fn start_and_list(&self, every_lane: bool) -> Result<Listing, Unavailable> {
        let others = (1..self.lanes.len())
            .filter(|_| every_lane)
            .map(|lane| self.current(lane));
        let (listed, _) =
            futures::join!(self.list_on_first_lane(), futures::future::join_all(others));
        listed
    }

    async fn list_on_first_lane(&self) -> Result<Listing, Unavailable> {
        let live = self.current(0).await?;
        let listing = tokio::time::timeout(
            self.reach.startup,
            connection::list_all_tools(&live.peer, &live.results, &live.watch, |_| {}),
        )
        .await;
        match listing {
            Ok(Ok(listed)) => Ok(Listing {
                tools: listed.tools,
                stated: listed.stated,
            }),
            Ok(Err(failure)) => Err(self.unavailable(&live, "listing its tools", failure).await),
            Err(_) => Err(Unavailable(format!(
                "the MCP server {} did not list its tools within {}s",
                self.reach.target,
                self.reach.startup.as_secs_f64()
            ))),
        }
    }

    /// How many times the server was started (or connected to).
    pub(crate) fn starts(&self) -> u64 {
        self.starts.load(Ordering::Relaxed)
    }

    /// The live connection of a lane, started when there is none.
    async fn current(&self, lane: usize) -> Result<Arc<Live>, Unavailable> {
        let lane = lane.min(self.lanes.len() - 1);
        let mut slot = self.lanes[lane].lock().await;
        if let Some(live) = slot.as_ref() {
            if !live.dead.load(Ordering::SeqCst) {
                return Ok(live.clone());
            }
        }
        // (A retired server has left its slot empty already.)
        let restart = self.started[lane].swap(true, Ordering::SeqCst);
        let spare = restart
            .then(|| self.spare.lock().ok().and_then(|mut spare| spare.take()))
            .flatten();
        if restart && matches!(self.reach.target, Target::Command(_)) {
            // A server restarted once is likely to be again (the tool that crashed it has more
            // cases): the next one starts now, beside this one.
            self.start_spare();
        }
        let live = match spare {
            Some(started) => match started.await {
                Ok(Ok(live)) => live,
                // A spare that failed to start says nothing a fresh start would not.
                _ => self.start().await?,
            },
            None => self.start().await?,
        };
        let live = Arc::new(live);
        *slot = Some(live.clone());
        Ok(live)
    }

    /// Count a start (within the limit) and make it.
    async fn start(&self) -> Result<Live, Unavailable> {
        self.count_start()?;
        connect(self.reach.clone()).await
    }

    fn count_start(&self) -> Result<(), Unavailable> {
        if self.starts.fetch_add(1, Ordering::SeqCst) >= MAX_STARTS {
            return Err(Unavailable(format!(
                "the MCP server {} was started {MAX_STARTS} times in this run (spares started ahead of a restart included); giving up",
                self.reach.target
            )));
        }
        Ok(())
    }

    /// Start a spare server in the background, unless one is there.
    fn start_spare(&self) {
        let Ok(mut spare) = self.spare.lock() else {
            return;
        };
        if spare.is_none() && self.count_start().is_ok() {
            *spare = Some(tokio::spawn(connect(self.reach.clone())));
        }
    }

    async fn unavailable(&self, live: &Live, doing: &str, failure: SessionFailure) -> Unavailable {
        let exited = match (failure.exit_wait(), live.process.lock().await.as_mut()) {
            (Some(wait), Some(process)) => process.wait_for_exit(wait).await,
            _ => None,
        };
        let target = &self.reach.target;
        let mut message = match exited {
            Some(status) => format!(
                "the MCP server {target} exited with {} while {doing}{}",
                describe_exit(status),
                after_sending(&failure)
            ),
            None => format!("the MCP server {target} failed while {doing}: {failure}"),
        };
        if let Some(tail) = &live.stderr {
            push_stderr(&mut message, tail);
        }
        Unavailable(message)
    }

    /// Call a tool with `params` (`{"name", "arguments"}`) on a lane, waiting at most `timeout`
    /// for an answer or a progress notification, and `ceiling` in all. With `alone`, nothing else is in flight meanwhile (for a command, a lane is its own
    /// process, so that holds by itself), and stray output that follows the answer (until the
    /// server answers a ping) counts too.
    pub(crate) async fn call(
        &self,
        lane: usize,
        params: Value,
        timeout: Duration,
        ceiling: Duration,
        alone: bool,
    ) -> Result<CallRecord, Unavailable> {
        let own_process = matches!(self.reach.target, Target::Command(_));
        let _pass = match (own_process, alone) {
            (true, _) => None,
            (false, true) => Some(Pass::Alone(self.gate.write().await)),
            (false, false) => Some(Pass::Shared(self.gate.read().await)),
        };
        let others_before = self.in_flight.fetch_add(1, Ordering::SeqCst);
        let number = self.calls.fetch_add(1, Ordering::SeqCst);
        let record = self
            .call_in_flight(lane, params, timeout, ceiling, alone)
            .await;
        self.in_flight.fetch_sub(1, Ordering::SeqCst);
        let others_started = self.calls.load(Ordering::SeqCst) != number + 1;
        record.map(|mut record| {
            record.alone = own_process || alone || (others_before == 0 && !others_started);
            record
        })
    }

    async fn call_in_flight(
        &self,
        lane: usize,
        params: Value,
        timeout: Duration,
        ceiling: Duration,
        alone: bool,
    ) -> Result<CallRecord, Unavailable> {
        let live = self.current(lane).await?;
        // A copy only of a call that need not be alone (not a confirmation, a shrinking step or a
        // replay), over a process of its own.
        let may_repeat = !alone && matches!(self.reach.target, Target::Command(_));
        let peer = live.peer.clone();
        let send = || {
            let request = ClientRequest::CustomRequest(CustomRequest::new(
                "tools/call",
                Some(params.clone()),
            ));
            // Progress notifications extend the wait (a long operation that says how it is doing
            // is not hanging), within a ceiling.
            let options = PeerRequestOptions::with_timeout(timeout)
                .reset_timeout_on_progress()
                .with_max_total_timeout(ceiling);
            peer.send_request_with_option(request, options)
        };
        let handle = match send().await {
            Ok(handle) => handle,
            Err(error) => {
                let answer = self.closed(lane, &live, error).await;
                return Ok(CallRecord {
                    answer,
                    strays: Vec::new(),
                    alone,
                    hang_repeated: false,
                });
            }
        };
        let id = handle.id.clone();
        let mut ids = vec![id.clone()];
        let first = handle.await_response();
        tokio::pin!(first);
        let mut repeat = None;
        // A ping sent right after the copy: a server that answers it while the copy waits takes
        // calls side by side (see below).
        let mut ping_beside = None;
        let mut copy_outlived_ping = false;
        let mut alive_after_hang = false;
        let response = tokio::select! {
            response = &mut first => response,
            () = tokio::time::sleep(repeat_after(timeout)), if may_repeat => {
                // Slow so far: the same call again beside it, so that a hang is seen twice in
                // about one timeout. Only on a process that has nothing else unanswered, which
                // could hold the second call back and make it look like a hang of its own, and
                // only a small call: a large copy written to a server that is stuck would fill
                // the pipe and hold back the cancellation behind it. (Measured here, not for
                // every call: most calls are answered before this.)
                if live.watch.unanswered() == 1
                    && params.to_string().len() <= MAX_REPEATED_BYTES
                {
                    if let Ok(handle) = send().await {
                        ids.push(handle.id.clone());
                        // Its own task: its timeout runs from now, not from when it is awaited.
                        repeat = Some((
                            handle.id.clone(),
                            tokio::spawn(async move {
                                let response = handle.await_response().await;
                                (response, Instant::now())
                            }),
                        ));
                        ping_beside = send_ping(&peer, timeout.min(PING_LIMIT)).await;
                        if let Some((ping, _)) = &ping_beside {
                            ids.push(ping.clone());
                        }
                    }
                }
                first.await
            }
        };
        let answer = match response {
            Ok(_) => match live.results.take_read(&id) {
                Some((result, loss)) => Answer::Result {
                    result,
                    structured_content: loss.structured_content,
                    as_sent: loss.result_as_sent,
                },
                None => Answer::Unreadable("the answer carried no result".into()),
            },
            Err(ServiceError::McpError(error)) => match live.watch.unreadable_answer(&id) {
                Some(unreadable) if unreadable.breaks_protocol => {
                    Answer::Unreadable(unreadable.why)
                }
                Some(unreadable) => Answer::Unread(unreadable.why),
                None => Answer::Error {
                    code: i64::from(error.code.0),
                    message: error.message.to_string(),
                    data: error.data,
                },
            },
            Err(ServiceError::Timeout { .. }) => {
                let alive = self.after_hang(lane, &live).await;
                alive_after_hang = alive;
                // The copy counts only if the server answered a ping while the copy still
                // waited: a server that takes one request at a time has then finished the first
                // call, and would have answered the copy (sent before the ping) had it not hung
                // too; a copy that timed out earlier may only have waited its turn. The ping
                // sent beside the copy shows that too, and does not depend on how soon this one
                // is answered (on a loaded machine, often after the copy's own timeout).
                copy_outlived_ping = alive
                    && repeat
                        .as_ref()
                        .is_some_and(|(_, pending)| !pending.is_finished());
                Answer::Hang
            }
            Err(error) => self.closed(lane, &live, error).await,
        };
        let mut hang_repeated = false;
        // Waited for even when the first call was answered, so that nothing of this case is
        // still in flight when the next one is sent.
        let ping_answered = match ping_beside {
            Some((_, answered)) => answered.await.ok().flatten(),
            None => None,
        };
        if let Some((repeat_id, pending)) = repeat {
            match pending.await.map(|(response, ended)| {
                let outlived = ping_answered.is_some_and(|answered| answered < ended);
                (response, outlived)
            }) {
                Ok((Ok(_), _)) => drop(live.results.take(&repeat_id)),
                Ok((Err(ServiceError::McpError(_)), _)) => {
                    drop(live.watch.unreadable_answer(&repeat_id))
                }
                Ok((Err(ServiceError::Timeout { .. }), outlived)) if answer == Answer::Hang => {
                    hang_repeated = copy_outlived_ping || (alive_after_hang && outlived);
                }
                // The first was answered but its copy not: the server may still be working on
                // the copy. It answers a ping (or is restarted) before the next case is sent.
                Ok((Err(ServiceError::Timeout { .. }), _)) => {
                    self.after_hang(lane, &live).await;
                }
                // The connection ended under the copy alone: the next call needs a fresh server.
                Ok((Err(error), _))
                    if !matches!(answer, Answer::Closed { .. } | Answer::Interrupted) =>
                {
                    self.closed(lane, &live, error).await;
                }
                Ok((Err(_), _)) | Err(_) => {}
            }
        }
        if alone && !matches!(answer, Answer::Closed { .. } | Answer::Interrupted) {
            // Whatever the server writes after its answer comes before its answer to a ping.
            if let Some(ping) = self.ping(&live, timeout.min(PING_LIMIT)).await {
                ids.push(ping);
            }
        }
        let strays = live.watch.strays_for(&ids);
        Ok(CallRecord {
            answer,
            strays,
            alone,
            hang_repeated,
        })
    }

    /// Ping; the ping's request id when it was answered in time.
    async fn ping(&self, live: &Live, limit: Duration) -> Option<RequestId> {
        let request = ClientRequest::CustomRequest(CustomRequest::new("ping", None));
        let handle = live
            .peer
            .send_request_with_option(request, PeerRequestOptions::with_timeout(limit))
            .await
            .ok()?;
        let id = handle.id.clone();
        handle.await_response().await.ok().map(|_| id)
    }

    /// After a call got no answer: a server that answers no ping either is stuck, and is
    /// restarted (the calls still in flight on it are interrupted).
    /// Whether the server answered the ping.
    async fn after_hang(&self, lane: usize, live: &Arc<Live>) -> bool {
        if self.ping(live, PING_LIMIT).await.is_some() {
            return true;
        }
        live.stopped.store(true, Ordering::SeqCst);
        self.retire(lane, live).await;
        false
    }

    /// Mark a connection gone and stop its server in the background.
    async fn retire(&self, lane: usize, live: &Arc<Live>) {
        live.dead.store(true, Ordering::SeqCst);
        let mut slot = self.lanes[lane.min(self.lanes.len() - 1)].lock().await;
        if slot
            .as_ref()
            .is_some_and(|current| Arc::ptr_eq(current, live))
        {
            *slot = None;
        }
        drop(slot);
        let live = live.clone();
        tokio::spawn(async move { live.close(STOP_GRACE).await });
    }

    /// The answer of a call whose connection ended.
    async fn closed(&self, lane: usize, live: &Arc<Live>, error: ServiceError) -> Answer {
        if live.stopped.load(Ordering::SeqCst) {
            return Answer::Interrupted;
        }
        live.dead.store(true, Ordering::SeqCst);
        let how = {
            let mut process = live.process.lock().await;
            match process.as_mut() {
                Some(process) => match process.wait_for_exit(Duration::from_secs(2)).await {
                    Some(status) => format!("exited with {}", describe_exit(status)),
                    None => format!(
                        "closed the connection ({})",
                        connection::service_failure(error)
                    ),
                },
                None => format!(
                    "dropped the connection: {}",
                    connection::service_failure(error)
                ),
            }
        };
        let stderr = live.stderr.as_ref().and_then(StderrTail::block);
        self.retire(lane, live).await;
        Answer::Closed { how, stderr }
    }

    /// Stray output no call claimed (written while nothing was in flight).
    pub(crate) async fn unclaimed_strays(&self) -> Vec<String> {
        let mut out = Vec::new();
        for lane in &self.lanes {
            if let Some(live) = lane.lock().await.as_ref() {
                out.extend(live.watch.unclaimed_strays().into_iter().map(|s| s.what));
            }
        }
        out
    }

    /// Stop the server: close its input (or the HTTP session) and let it exit, on every lane.
    pub(crate) async fn shut_down(&self) {
        let mut lives = Vec::new();
        let spare = self.spare.lock().ok().and_then(|mut spare| spare.take());
        if let Some(spare) = spare {
            if spare.is_finished() {
                if let Ok(Ok(live)) = spare.await {
                    lives.push(Arc::new(live));
                }
            } else {
                // Dropping a start half made kills the process (its group is signalled).
                spare.abort();
            }
        }
        for lane in &self.lanes {
            lives.extend(lane.lock().await.take());
        }
        futures::future::join_all(
            lives
                .iter()
                .map(|live| live.close(crate::server_process::DEFAULT_SHUTDOWN_GRACE)),
        )
        .await;
    }
}

/// Send a ping now: its request id, and a task that says when it was answered (`None`: not
/// within `limit`).
async fn send_ping(
    peer: &Peer<RoleClient>,
    limit: Duration,
) -> Option<(RequestId, tokio::task::JoinHandle<Option<Instant>>)> {
    let request = ClientRequest::CustomRequest(CustomRequest::new("ping", None));
    let handle = peer
        .send_request_with_option(request, PeerRequestOptions::with_timeout(limit))
        .await
        .ok()?;
    let id = handle.id.clone();
    let answered =
        tokio::spawn(async move { handle.await_response().await.ok().map(|_| Instant::now()) });
    Some((id, answered))
}

/// Start the server (or open a session with it) and finish the initialize handshake.
async fn connect(reach: Reach) -> Result<Live, Unavailable> {
    let results = RawResults::default();
    let watch = Watch::default();
    let target = &reach.target;
    let startup = reach.startup;
    // The transports differ in type, so each arm makes its own handshake.
    let (session, mut process) = match target {
        Target::Command(command) => {
            let (process, transport) =
                connection::spawn_stdio(command, &results, &watch, reach.max_message_bytes)
                    .map_err(|e| Unavailable(e.to_string()))?;
            let session =
                tokio::time::timeout(startup, connection::handshake(transport, &watch)).await;
            (session, Some(process))
        }
        Target::Url(url) => {
            let transport = connection::http_transport(
                url,
                &reach.headers,
                &results,
                &watch,
                reach.max_message_bytes,
            )
            .map_err(Unavailable)?;
            let session =
                tokio::time::timeout(startup, connection::handshake(transport, &watch)).await;
            (session, None)
        }
    };
    let stderr = process.as_ref().map(ServerProcess::stderr_tail);
    let mut message = match session {
        Ok(Ok(session)) => {
            return Ok(Live {
                peer: session.peer().clone(),
                session: Mutex::new(Some(session)),
                results,
                watch,
                process: Mutex::new(process),
                stderr,
                stopped: AtomicBool::new(false),
                dead: AtomicBool::new(false),
            })
        }
        Ok(Err(failure)) => {
            // Only a closed connection (or a broken answer, maybe cut short) is said to be an
            // exit: a server that answered with an error was running, whatever it did after.
            let exited = match (&mut process, failure.exit_wait()) {
                (Some(process), Some(wait)) => process.wait_for_exit(wait).await,
                _ => None,
            };
            match exited {
                Some(status) => format!(
                    "the MCP server {target} exited with {} before it finished the initialize handshake{}",
                    describe_exit(status),
                    after_sending(&failure)
                ),
                None => format!(
                    "the MCP server {target} failed the initialize handshake: {failure}"
                ),
            }
        }
        Err(_) => {
            let wrote = watch
                .unclaimed_strays()
                .into_iter()
                .next()
                .map(|stray| format!("; meanwhile {}", stray.what))
                .unwrap_or_default();
            format!(
                "the MCP server {target} did not finish the initialize handshake within {}s{wrote}",
                startup.as_secs_f64()
            )
        }
    };
    if let Some(stderr) = &stderr {
        push_stderr(&mut message, stderr);
    }
    if let Some(mut process) = process {
        process.shut_down(STOP_GRACE).await;
    }
    Err(Unavailable(message))
}

/// `, after the server sent …` when what it sent last could not be read.
fn after_sending(failure: &SessionFailure) -> String {
    failure
        .unreadable_sent()
        .map(|sent| format!(", after {sent}"))
        .unwrap_or_default()
}

fn push_stderr(message: &mut String, tail: &StderrTail) {
    message.push_str(&crate::server_process::stderr_note(tail.block().as_deref()));
}
