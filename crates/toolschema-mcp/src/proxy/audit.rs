//! The audit log: one JSON line per `tools/call`, appended to a file.

use super::overrides::ToolOverrides;
use crate::message::RequestId;
use nix::fcntl::{fcntl, FcntlArg, OFlag};
use serde_json::{json, Map, Value};
use std::collections::VecDeque;
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::Path;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::Duration;

/// What the proxy did with a call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// Sent to the server.
    Forwarded,
    /// Arguments broke the tool's `inputSchema`; answered by the proxy.
    Rejected,
    /// Refused by `--allow`/`--deny` or `--deny-unlisted`; answered by the proxy.
    Denied,
    /// The proxy could not learn the tool's schema, so it could not check the call; answered by
    /// the proxy.
    UncheckedRefused,
    /// Cancelled by the client while it waited for the proxy's own listing; never sent.
    Cancelled,
    /// A listed tool does not match its pin (one record per tool and listing, with the id of the
    /// listing).
    PinDrift,
    /// A call to a tool that does not match its pin; answered by the proxy.
    PinRefused,
}

impl Verdict {
    /// The verdict as the audit log writes it.
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Forwarded => "forwarded",
            Verdict::Rejected => "rejected",
            Verdict::Denied => "denied",
            Verdict::UncheckedRefused => "unchecked-refused",
            Verdict::Cancelled => "cancelled",
            Verdict::PinDrift => "pin-drift",
            Verdict::PinRefused => "pin-refused",
        }
    }
}

/// What the input check found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InputVerdict {
    /// `--input-check off`.
    Off,
    /// The arguments fit the tool's `inputSchema`.
    Passed,
    /// They do not (refused, or forwarded anyway with `--input-check warn`).
    Failed,
    /// The tool's schema could not be learned (refused, or forwarded with `--on-unchecked
    /// forward` or `--input-check warn`).
    Unchecked,
    /// The server has not listed the tool (it answers the call itself).
    Unlisted,
}

impl InputVerdict {
    /// The verdict as the audit log writes it.
    pub fn as_str(self) -> &'static str {
        match self {
            InputVerdict::Off => "off",
            InputVerdict::Passed => "passed",
            InputVerdict::Failed => "failed",
            InputVerdict::Unchecked => "unchecked",
            InputVerdict::Unlisted => "unlisted",
        }
    }
}

/// What the output check found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OutputVerdict {
    /// `--output-check off`.
    Off,
    /// Nothing to check against: the tool has no `outputSchema`, or its calls are not validated.
    NoSchema,
    /// Not checked: the result is an error (`isError: true`, or a JSON-RPC error).
    Skipped,
    /// `structuredContent` fits the `outputSchema`.
    Passed,
    /// It does not; reported (`--output-check warn`).
    Failed,
    /// It does not; the result was replaced with an error (`--output-check enforce`).
    Enforced,
    /// The tool's `outputSchema` could not be learned (with `--output-check enforce` the result
    /// was withheld).
    Unchecked,
}

impl OutputVerdict {
    /// The verdict as the audit log writes it.
    pub fn as_str(self) -> &'static str {
        match self {
            OutputVerdict::Off => "off",
            OutputVerdict::NoSchema => "no_schema",
            OutputVerdict::Skipped => "skipped",
            OutputVerdict::Passed => "passed",
            OutputVerdict::Failed => "failed",
            OutputVerdict::Enforced => "enforced",
            OutputVerdict::Unchecked => "unchecked",
        }
    }
}

/// One audit line.
#[derive(Debug, Clone, PartialEq)]
pub struct AuditRecord {
    /// The request id, as the client sent it.
    pub id: RequestId,
    /// The tool called.
    pub tool: String,
    /// What the proxy did.
    pub verdict: Verdict,
    /// What the input check found; `None` for calls refused before it (denied, malformed).
    pub input_check: Option<InputVerdict>,
    /// Why it refused, or what the output check found.
    pub messages: Vec<String>,
    /// From the call's arrival to its answer.
    pub duration: Duration,
    /// The result's `isError`; `None` when the call got no result.
    pub is_error: Option<bool>,
    /// The output check; `None` for calls that were not forwarded.
    pub output_check: Option<OutputVerdict>,
    /// A JSON-RPC error the call was answered with.
    pub error: Option<String>,
    /// The call's arguments (written only with `--audit-arguments`).
    pub arguments: Option<Value>,
}

/// An append-only JSON Lines file.
///
/// Writing a record never waits for whoever reads the file: a log shipper that stops reading a
/// pipe (`--audit /dev/stdout`) must not stop the calls it records. Records the file does not take
/// at once wait in a backlog bounded in bytes ([`BACKLOG_BYTES`]), written by a thread of the log's
/// own as the reader takes them; past that bound records are dropped, whole, counted, reported,
/// and the count is written to the log itself once it takes records again.
pub struct AuditLog {
    appender: Arc<Appender>,
    drainer: Option<std::thread::JoinHandle<()>>,
    include_arguments: bool,
    overrides: ToolOverrides,
}

/// The most bytes of records waiting for a reader that has stopped reading (one record more may
/// wait when it was written in part).
pub const BACKLOG_BYTES: usize = 4 * 1024 * 1024;

/// How long a closing log waits for a stalled reader to take what is waiting.
const CLOSE_WAIT: Duration = Duration::from_secs(2);

/// How long the drainer waits before trying a full pipe again.
const RETRY_PAUSE: Duration = Duration::from_millis(5);

/// The file and what waits to be written to it.
struct Appender {
    state: Mutex<Backlog>,
    /// The most bytes that may wait ([`BACKLOG_BYTES`] but in tests).
    bound: usize,
    /// Wakes the drainer (records waiting, or closing) and whoever waits for it to finish.
    changed: Condvar,
}

struct Backlog {
    file: File,
    /// Bytes not written yet: whole records, but for the first, which may be written in part.
    waiting: VecDeque<u8>,
    /// Records dropped since the file last took everything.
    dropped: u64,
    closing: bool,
}

/// Lock a mutex; a panic elsewhere must not stop the records, so a poisoned lock is used as it
/// is.
fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

impl Backlog {
    /// Write what the file takes now, without waiting: `Ok(true)` once nothing waits.
    fn write_waiting(&mut self) -> std::io::Result<bool> {
        while !self.waiting.is_empty() {
            let (front, _) = self.waiting.as_slices();
            match self.file.write(front) {
                Ok(0) => return Err(std::io::ErrorKind::WriteZero.into()),
                Ok(n) => drop(self.waiting.drain(..n)),
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => return Ok(false),
                Err(e) => return Err(e),
            }
        }
        Ok(true)
    }

    /// Say in the log how many records it lost (once it takes records again).
    fn note_dropped(&mut self) {
        if self.dropped == 0 {
            return;
        }
        let message = format!(
            "the audit log was not read fast enough: {} record(s) were dropped",
            self.dropped
        );
        let line = json!({
            "time": now(),
            "verdict": "audit-dropped",
            "dropped": self.dropped,
            "messages": [message],
        });
        self.waiting.extend(line.to_string().as_bytes());
        self.waiting.push_back(b'\n');
        self.dropped = 0;
    }
}

impl Appender {
    /// Append one line (with its newline), or drop it when the backlog is full.
    fn append(&self, line: &[u8]) {
        let mut backlog = lock(&self.state);
        // A record larger than the bound is still written when nothing waits: the bound is on
        // what a stalled reader leaves behind, not on a record.
        if !backlog.waiting.is_empty() && backlog.waiting.len() + line.len() > self.bound {
            if backlog.dropped == 0 {
                tracing::warn!(
                    "the audit log is not being read: records are dropped until it is (more than {} MiB wait)",
                    self.bound / (1024 * 1024)
                );
            }
            backlog.dropped += 1;
            return;
        }
        let was_empty = backlog.waiting.is_empty();
        backlog.waiting.extend(line);
        if !was_empty {
            // The drainer is at it already: the order of the records is kept.
            return;
        }
        match backlog.write_waiting() {
            Ok(true) => {}
            Ok(false) => self.changed.notify_all(),
            Err(e) => {
                backlog.waiting.clear();
                tracing::warn!("cannot write the audit log: {e}");
            }
        }
    }

    /// The drainer: writes what waits whenever the file takes it, until the log closes.
    fn drain(&self) {
        let mut backlog = lock(&self.state);
        loop {
            if backlog.waiting.is_empty() {
                if backlog.closing {
                    return;
                }
                backlog = self
                    .changed
                    .wait(backlog)
                    .unwrap_or_else(|poisoned| poisoned.into_inner());
                continue;
            }
            match backlog.write_waiting() {
                Ok(true) => {
                    backlog.note_dropped();
                    if backlog.waiting.is_empty() {
                        self.changed.notify_all();
                    }
                }
                Ok(false) => {
                    drop(backlog);
                    std::thread::sleep(RETRY_PAUSE);
                    backlog = lock(&self.state);
                }
                Err(e) => {
                    tracing::warn!("cannot write the audit log: {e}");
                    backlog.waiting.clear();
                    self.changed.notify_all();
                }
            }
        }
    }
}

impl AuditLog {
    /// Open (or create) `path` for appending.
    pub fn open(path: &Path, include_arguments: bool) -> std::io::Result<AuditLog> {
        let file = OpenOptions::new().create(true).append(true).open(path)?;
        AuditLog::over(file, include_arguments, BACKLOG_BYTES)
    }

    /// A log written to `file`, with at most `bound` bytes waiting for its reader.
    fn over(file: File, include_arguments: bool, bound: usize) -> std::io::Result<AuditLog> {
        if !file.metadata()?.is_file() {
            // A pipe, a socket or a terminal: writes that would wait return at once instead,
            // and what the reader does not take waits in the backlog.
            let flags = fcntl(&file, FcntlArg::F_GETFL).map_err(std::io::Error::from)?;
            let flags = OFlag::from_bits_truncate(flags) | OFlag::O_NONBLOCK;
            fcntl(&file, FcntlArg::F_SETFL(flags)).map_err(std::io::Error::from)?;
        }
        let appender = Arc::new(Appender {
            state: Mutex::new(Backlog {
                file,
                waiting: VecDeque::new(),
                dropped: 0,
                closing: false,
            }),
            bound,
            changed: Condvar::new(),
        });
        let drainer = {
            let appender = Arc::clone(&appender);
            std::thread::Builder::new()
                .name("audit-log".into())
                .spawn(move || appender.drain())?
        };
        Ok(AuditLog {
            appender,
            drainer: Some(drainer),
            include_arguments,
            overrides: ToolOverrides::default(),
        })
    }

    /// Name, in each call's record, the fields of the called tool that the client saw
    /// overridden (`"overridden": ["description"]`).
    pub fn with_overrides(mut self, overrides: ToolOverrides) -> AuditLog {
        self.overrides = overrides;
        self
    }

    /// Append one record. A failing write is reported, never fatal: the calls go on.
    pub fn write(&self, record: &AuditRecord) {
        self.write_for(record, None);
    }

    /// Append one record with the name of the client that made the call (a token's name, never
    /// the token). It never waits for the file's reader (see [`AuditLog`]).
    pub fn write_for(&self, record: &AuditRecord, client: Option<&str>) {
        // Names, ids and arguments come from clients and servers: nothing in the line steers a
        // terminal showing it.
        let mut line = toolschema::text::json_safe(&self.line(record, client)).into_owned();
        line.push('\n');
        self.appender.append(line.as_bytes());
    }

    /// The record as one JSON line (without its newline), the id written exactly as the client
    /// sent it.
    fn line(&self, record: &AuditRecord, client: Option<&str>) -> String {
        let time = now();
        let rest = self.to_json(record, client).to_string();
        let rest = rest.strip_prefix('{').unwrap_or(&rest);
        format!(
            "{{\"time\":{},\"id\":{},{rest}",
            json!(time),
            record.id.raw()
        )
    }

    /// The record's fields after `time` and `id`.
    fn to_json(&self, record: &AuditRecord, client: Option<&str>) -> Value {
        let mut map = Map::new();
        if let Some(client) = client {
            map.insert("client".into(), json!(client));
        }
        map.insert("tool".into(), json!(record.tool));
        map.insert("verdict".into(), json!(record.verdict.as_str()));
        map.insert("messages".into(), json!(record.messages));
        let millis = (record.duration.as_secs_f64() * 1e6).round() / 1e3;
        map.insert("duration_ms".into(), json!(millis));
        map.insert("isError".into(), json!(record.is_error));
        map.insert(
            "input_check".into(),
            json!(record.input_check.map(InputVerdict::as_str)),
        );
        map.insert(
            "output_check".into(),
            json!(record.output_check.map(OutputVerdict::as_str)),
        );
        if let Some(error) = &record.error {
            map.insert("error".into(), json!(error));
        }
        let overridden = self.overrides.fields(&record.tool);
        if !overridden.is_empty() {
            map.insert("overridden".into(), json!(overridden));
        }
        if self.include_arguments {
            map.insert(
                "arguments".into(),
                record.arguments.clone().unwrap_or(Value::Null),
            );
        }
        Value::Object(map)
    }
}

impl Drop for AuditLog {
    /// What waits for a stalled reader gets a little time to be taken before the log closes.
    fn drop(&mut self) {
        let deadline = std::time::Instant::now() + CLOSE_WAIT;
        let mut backlog = lock(&self.appender.state);
        backlog.closing = true;
        self.appender.changed.notify_all();
        while !backlog.waiting.is_empty() {
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            if left.is_zero() {
                tracing::warn!(
                    "the audit log was closed with {} byte(s) of records its reader did not take",
                    backlog.waiting.len()
                );
                backlog.waiting.clear();
                break;
            }
            backlog = self
                .appender
                .changed
                .wait_timeout(backlog, left)
                .unwrap_or_else(|poisoned| poisoned.into_inner())
                .0;
        }
        if backlog.dropped > 0 {
            tracing::warn!(
                "the audit log was closed after dropping {} record(s) its reader did not take",
                backlog.dropped
            );
        }
        drop(backlog);
        if let Some(drainer) = self.drainer.take() {
            let _ = drainer.join();
        }
    }
}

/// The time a record is written, as the log states it.
fn now() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::proxy::ToolOverride;

    #[test]
    fn writes_one_line_per_record_with_arguments_only_when_asked() {
        let dir = std::env::temp_dir().join(format!("toolschema-audit-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("audit.jsonl");
        let _ = std::fs::remove_file(&path);
        let arguments = json!({"q": "x"});
        let record = AuditRecord {
            id: RequestId::from_text("18446744073709551617"),
            tool: "search".into(),
            verdict: Verdict::Rejected,
            input_check: Some(InputVerdict::Failed),
            messages: vec!["argument 'q' string length must be >= 3 (got 1)".into()],
            duration: Duration::from_micros(1500),
            is_error: None,
            output_check: None,
            error: None,
            arguments: Some(arguments.clone()),
        };
        AuditLog::open(&path, false).unwrap().write(&record);
        AuditLog::open(&path, true).unwrap().write(&record);
        let text = std::fs::read_to_string(&path).unwrap();
        let lines: Vec<Value> = text
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(lines.len(), 2);
        let keys: Vec<&str> = lines[0]
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        assert_eq!(
            keys,
            [
                "time",
                "id",
                "tool",
                "verdict",
                "messages",
                "duration_ms",
                "isError",
                "input_check",
                "output_check"
            ]
        );
        assert!(text.starts_with("{\"time\":\""));
        assert!(text
            .lines()
            .all(|l| l.contains(",\"id\":18446744073709551617,")));
        assert_eq!(lines[0]["duration_ms"], json!(1.5));
        assert_eq!(lines[0]["input_check"], "failed");
        assert_eq!(lines[0]["verdict"], "rejected");
        assert_eq!(lines[1]["arguments"], arguments);
        let _ = std::fs::remove_file(&path);
        let mut overrides = ToolOverrides::default();
        overrides.insert(
            "search",
            ToolOverride {
                description: Some("Search the docs.".into()),
                ..ToolOverride::default()
            },
        );
        AuditLog::open(&path, false)
            .unwrap()
            .with_overrides(overrides)
            .write_for(&record, Some("alice"));
        let text = std::fs::read_to_string(&path).unwrap();
        let line: Value = serde_json::from_str(text.trim()).unwrap();
        let keys: Vec<&str> = line
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        assert_eq!(&keys[..4], ["time", "id", "client", "tool"]);
        assert_eq!(line["client"], "alice");
        assert_eq!(line["overridden"], json!(["description"]));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(16))]

        /// Whatever a reader that stops reading leaves behind: writing never waits, what waits
        /// stays within the bound (and one record), every record is kept whole or counted as
        /// dropped, and those kept are in order.
        #[test]
        fn a_stalled_reader_never_holds_the_writer_nor_more_than_the_bound(
            sizes in proptest::collection::vec(1usize..20_000, 1..80),
        ) {
            let bound = 64 * 1024;
            let (mut reader, writer) = std::io::pipe().unwrap();
            let file = File::from(std::os::fd::OwnedFd::from(writer));
            let log = AuditLog::over(file, true, bound).unwrap();
            let mut most = 0;
            for (n, size) in sizes.iter().enumerate() {
                let mut record = sample(n as u64);
                record.arguments = Some(json!({"padding": "x".repeat(*size)}));
                log.write(&record);
                most = most.max(lock(&log.appender.state).waiting.len());
            }
            let largest = sizes.iter().max().copied().unwrap_or(0) + 1024;
            proptest::prop_assert!(most <= bound + largest, "{most} waited");
            let read = std::thread::spawn(move || {
                let mut text = String::new();
                std::io::Read::read_to_string(&mut reader, &mut text).unwrap();
                text
            });
            drop(log);
            let text = read.join().unwrap();
            let lines: Vec<Value> = text
                .lines()
                .map(|l| serde_json::from_str(l).unwrap())
                .collect();
            let kept: Vec<u64> = lines.iter().filter_map(|l| l["id"].as_u64()).collect();
            let dropped: u64 = lines.iter().filter_map(|l| l["dropped"].as_u64()).sum();
            proptest::prop_assert_eq!(kept.len() as u64 + dropped, sizes.len() as u64);
            proptest::prop_assert!(kept.windows(2).all(|w| w[0] < w[1]));
        }
    }

    fn sample(id: u64) -> AuditRecord {
        AuditRecord {
            id: RequestId::from_text(&id.to_string()),
            tool: "search".into(),
            verdict: Verdict::Rejected,
            input_check: Some(InputVerdict::Failed),
            messages: vec![],
            duration: Duration::from_micros(1),
            is_error: None,
            output_check: None,
            error: None,
            arguments: None,
        }
    }
}
