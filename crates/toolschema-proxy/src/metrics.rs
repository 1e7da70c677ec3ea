//! The proxy's metrics, exposed in the Prometheus text format at `--metrics ADDR`.
//!
//! Every figure is fed where the decision is made: each `tools/call`'s audit record (the gate
//! knows its verdict, its keywords and its duration), the HTTP front (statuses, auth refusals,
//! sessions, restarts of a lane's server), the upstream clients (errors). The exposition
//! is written here rather than through a metrics crate: ten families and one histogram do not
//! need a registry, and the text format is a few lines.
//!
//! Label values are bounded: a tool name is a label only when the server listed it (a client's
//! made-up names never are), and past [`TOOL_LABELS`] distinct names every other is
//! [`OTHER_TOOL`]. Behind a front of many servers the per-tool counters and the duration of
//! each `tools/call` also carry a `server` label, whose values are the declared servers only.

use std::collections::{BTreeMap, HashSet};
use std::fmt::Write as _;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use toolschema_gate::{AuditRecord, Operation};

/// The most distinct tool names used as label values.
pub const TOOL_LABELS: usize = 200;

/// The label value of a tool that is not listed, or past [`TOOL_LABELS`].
pub const OTHER_TOOL: &str = "_other";

/// The buckets of the duration histogram, in seconds: the semantic conventions' advice for
/// `mcp.server.operation.duration`, with finer ones below 10 ms for calls the proxy answers
/// itself.
const BUCKETS: &[f64] = &[
    0.001, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0,
];

/// The content type of the exposition.
pub const CONTENT_TYPE: &str = "text/plain; version=0.0.4; charset=utf-8";

/// One histogram series.
#[derive(Default, Clone)]
struct Histogram {
    /// Observations per bucket (not cumulative), then the ones above the last bucket.
    counts: [u64; BUCKETS.len() + 1],
    sum: f64,
}

impl Histogram {
    fn observe(&mut self, seconds: f64) {
        let at = BUCKETS
            .iter()
            .position(|bound| seconds <= *bound)
            .unwrap_or(BUCKETS.len());
        self.counts[at] += 1;
        self.sum += seconds;
    }
}

/// The series keyed by their labels.
#[derive(Default)]
struct Series {
    tools: HashSet<String>,
    /// By server (empty for one server), tool and verdict.
    calls: BTreeMap<(String, String, &'static str), u64>,
    /// By server (empty for one server), tool and keyword.
    failures: BTreeMap<(String, String, String), u64>,
    /// By server (empty for one server, and for requests other than `tools/call`), method,
    /// tool and error type.
    durations: BTreeMap<(String, String, String, String), Histogram>,
    upstream_errors: BTreeMap<&'static str, u64>,
    http_requests: BTreeMap<u16, u64>,
    auth_refusals: BTreeMap<&'static str, u64>,
}

/// The proxy's metrics (shared by every session; cheap to update).
#[derive(Default)]
pub struct Metrics {
    series: Mutex<Series>,
    sessions_open: AtomicI64,
    upstream_restarts: AtomicU64,
    /// The trace exporter's count of spans that never reached the collector.
    spans_dropped: std::sync::OnceLock<Arc<crate::trace::Dropped>>,
}

impl std::fmt::Debug for Metrics {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Metrics").finish_non_exhaustive()
    }
}

/// A session counted in `toolschema_proxy_sessions_open` while this lives.
pub struct OpenSession(Option<Arc<Metrics>>);

impl OpenSession {
    /// Count a session open (nothing without metrics).
    pub fn new(metrics: Option<Arc<Metrics>>) -> OpenSession {
        if let Some(metrics) = &metrics {
            metrics.sessions(1);
        }
        OpenSession(metrics)
    }
}

impl Drop for OpenSession {
    fn drop(&mut self) {
        if let Some(metrics) = &self.0 {
            metrics.sessions(-1);
        }
    }
}

/// What the upstream did wrong, as `toolschema_proxy_upstream_errors_total` labels it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UpstreamError {
    /// It could not be reached, or the connection broke.
    Connect,
    /// It answered with an HTTP error status.
    Status,
    /// It did not answer in time.
    Timeout,
    /// Its answer could not be read.
    Protocol,
    /// A server process exited while its session was open.
    Exited,
}

impl UpstreamError {
    fn as_str(self) -> &'static str {
        match self {
            UpstreamError::Connect => "connect",
            UpstreamError::Status => "status",
            UpstreamError::Timeout => "timeout",
            UpstreamError::Protocol => "protocol",
            UpstreamError::Exited => "exited",
        }
    }
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

impl Metrics {
    /// Empty metrics.
    pub fn new() -> Metrics {
        Metrics::default()
    }

    /// Count one `tools/call` from its audit record; `listed` says whether the server listed
    /// its tool (only then is the name a label value).
    pub fn call(&self, record: &AuditRecord, listed: bool) {
        let Some(verdict) = record.outcome() else {
            return;
        };
        let mut series = lock(&self.series);
        let tool = tool_label(&mut series.tools, &record.tool, listed);
        // The gate names only the servers of the command line ([`toolschema_gate::servers::origin_of`]).
        let server = record
            .origin
            .as_ref()
            .map(|origin| origin.server.clone())
            .unwrap_or_default();
        *series
            .calls
            .entry((server.clone(), tool.clone(), verdict))
            .or_default() += 1;
        let mut keywords: Vec<&str> = record.keywords.iter().map(String::as_str).collect();
        keywords.sort_unstable();
        keywords.dedup();
        for keyword in keywords {
            *series
                .failures
                .entry((
                    server.clone(),
                    tool.clone(),
                    keyword_label(keyword).to_string(),
                ))
                .or_default() += 1;
        }
        let error_type = match (record.error_code, record.is_error) {
            (Some(code), _) => code.to_string(),
            (None, Some(true)) => "tool_error".to_string(),
            _ => String::new(),
        };
        series
            .durations
            .entry((server, "tools/call".to_string(), tool, error_type))
            .or_default()
            .observe(record.duration.as_secs_f64());
    }

    /// Time one answered request other than `tools/call` (its method is the server's
    /// vocabulary, not the client's: only requests the server answered are counted, and their
    /// methods are few).
    pub fn operation(&self, operation: &Operation) {
        let method = method_label(&operation.method);
        let error_type = operation
            .error_code
            .map(|code| code.to_string())
            .unwrap_or_default();
        lock(&self.series)
            .durations
            .entry((String::new(), method.to_string(), String::new(), error_type))
            .or_default()
            .observe(operation.duration.as_secs_f64());
    }

    /// A session opened (`+1`) or closed (`-1`).
    pub fn sessions(&self, change: i64) {
        self.sessions_open.fetch_add(change, Ordering::Relaxed);
    }

    /// The upstream failed a request.
    pub fn upstream_error(&self, kind: UpstreamError) {
        *lock(&self.series)
            .upstream_errors
            .entry(kind.as_str())
            .or_default() += 1;
    }

    /// A server process was started again for a 2026-07-28 client whose lane's server had
    /// exited.
    pub fn upstream_restart(&self) {
        self.upstream_restarts.fetch_add(1, Ordering::Relaxed);
    }

    /// The HTTP front answered with this status.
    pub fn http_request(&self, status: u16) {
        *lock(&self.series).http_requests.entry(status).or_default() += 1;
    }

    /// The guard refused a request for this reason (a [`toolschema_http::RefusalKind`] code).
    pub fn auth_refusal(&self, reason: &'static str) {
        *lock(&self.series).auth_refusals.entry(reason).or_default() += 1;
    }

    /// Export this count of the trace exporter's lost spans (a full queue, a failed export) as
    /// `toolschema_proxy_spans_dropped_total`. A proxy has one exporter: a second count is
    /// ignored.
    pub fn count_spans_dropped(&self, dropped: Arc<crate::trace::Dropped>) {
        let _ = self.spans_dropped.set(dropped);
    }

    /// The exposition, in the Prometheus text format (0.0.4).
    pub fn render(&self) -> String {
        let series = lock(&self.series);
        let mut out = String::with_capacity(4096);
        let le: Vec<String> = BUCKETS.iter().map(|b| format_float(*b)).collect();
        family(
            &mut out,
            ("mcp_server_operation_duration_seconds", "histogram"),
            "Duration of MCP requests as the proxy answered them (semconv mcp.server.operation.duration).",
            [],
        );
        for ((server, method, tool, error), histogram) in &series.durations {
            let labels = format!(
                "{}mcp_method_name=\"{}\",gen_ai_tool_name=\"{}\",error_type=\"{}\"",
                server_label(server),
                escape(method),
                escape(tool),
                escape(error)
            );
            let mut cumulative = 0;
            for (bound, count) in le.iter().zip(histogram.counts.iter()) {
                cumulative += count;
                let _ = writeln!(
                    out,
                    "mcp_server_operation_duration_seconds_bucket{{{labels},le=\"{bound}\"}} {cumulative}"
                );
            }
            cumulative += histogram.counts[BUCKETS.len()];
            let _ = writeln!(
                out,
                "mcp_server_operation_duration_seconds_bucket{{{labels},le=\"+Inf\"}} {cumulative}"
            );
            let _ = writeln!(
                out,
                "mcp_server_operation_duration_seconds_sum{{{labels}}} {}",
                format_float(histogram.sum)
            );
            let _ = writeln!(
                out,
                "mcp_server_operation_duration_seconds_count{{{labels}}} {cumulative}"
            );
        }
        let calls = series.calls.iter().map(|((server, tool, verdict), count)| {
            (
                format!(
                    "{}tool=\"{}\",verdict=\"{verdict}\"",
                    server_label(server),
                    escape(tool)
                ),
                *count,
            )
        });
        family(
            &mut out,
            ("toolschema_proxy_calls_total", "counter"),
            "tools/call requests by tool and what the proxy did with them.",
            calls,
        );
        let failures = series
            .failures
            .iter()
            .map(|((server, tool, keyword), count)| {
                let labels = format!(
                    "{}tool=\"{}\",keyword=\"{}\"",
                    server_label(server),
                    escape(tool),
                    escape(keyword)
                );
                (labels, *count)
            });
        family(
            &mut out,
            ("toolschema_proxy_validation_failures_total", "counter"),
            "tools/call requests whose arguments failed a JSON Schema keyword, by tool and keyword.",
            failures,
        );
        let open = u64::try_from(self.sessions_open.load(Ordering::Relaxed)).unwrap_or(0);
        family(
            &mut out,
            ("toolschema_proxy_sessions_open", "gauge"),
            "Sessions open (HTTP sessions and 2026-07-28 lanes, or the one stdio session).",
            [(String::new(), open)],
        );
        let errors = series
            .upstream_errors
            .iter()
            .map(|(kind, count)| (format!("kind=\"{kind}\""), *count));
        family(
            &mut out,
            ("toolschema_proxy_upstream_errors_total", "counter"),
            "Requests the upstream failed, by kind.",
            errors,
        );
        family(
            &mut out,
            ("toolschema_proxy_upstream_restarts_total", "counter"),
            "Server processes started again for a client whose server process had exited.",
            [(
                String::new(),
                self.upstream_restarts.load(Ordering::Relaxed),
            )],
        );
        let statuses = series
            .http_requests
            .iter()
            .map(|(code, count)| (format!("code=\"{code}\""), *count));
        family(
            &mut out,
            ("toolschema_proxy_http_requests_total", "counter"),
            "HTTP requests to the proxy's front, by status code.",
            statuses,
        );
        let refusals = series
            .auth_refusals
            .iter()
            .map(|(reason, count)| (format!("reason=\"{reason}\""), *count));
        family(
            &mut out,
            ("toolschema_proxy_auth_refusals_total", "counter"),
            "Requests the guard refused, by reason.",
            refusals,
        );
        family(
            &mut out,
            ("toolschema_proxy_spans_dropped_total", "counter"),
            "Trace spans dropped because the exporter's queue was full.",
            [(
                String::new(),
                self.spans_dropped.get().map_or(0, |dropped| dropped.get()),
            )],
        );
        out
    }
}

/// The `server` label and its comma, behind a front of many servers (nothing for one server).
fn server_label(server: &str) -> String {
    if server.is_empty() {
        String::new()
    } else {
        format!("server=\"{}\",", escape(server))
    }
}

/// A tool's label value: its name when the server listed it and there is room, else
/// [`OTHER_TOOL`].
fn tool_label(known: &mut HashSet<String>, name: &str, listed: bool) -> String {
    if !listed {
        return OTHER_TOOL.to_string();
    }
    if known.contains(name) {
        return name.to_string();
    }
    if known.len() < TOOL_LABELS {
        known.insert(name.to_string());
        return name.to_string();
    }
    OTHER_TOOL.to_string()
}

/// The MCP methods a request may name (2025-11-25 and 2026-07-28); any other is `_other`, so
/// that a client's made-up methods (which a server answers with an error) never grow the
/// label set.
const METHODS: &[&str] = &[
    "initialize",
    "ping",
    "tools/list",
    "tools/call",
    "resources/list",
    "resources/templates/list",
    "resources/read",
    "resources/subscribe",
    "resources/unsubscribe",
    "prompts/list",
    "prompts/get",
    "completion/complete",
    "logging/setLevel",
    "tasks/get",
    "tasks/list",
    "tasks/result",
    "tasks/cancel",
];

/// A method's label value.
fn method_label(method: &str) -> &str {
    if METHODS.contains(&method) {
        method
    } else {
        OTHER_TOOL
    }
}

/// A keyword's label value. The core names a fixed vocabulary; anything else (never expected)
/// is folded so that a schema cannot grow the label set.
fn keyword_label(keyword: &str) -> &str {
    let plain = !keyword.is_empty()
        && keyword.len() <= 64
        && keyword
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'$');
    if plain {
        keyword
    } else {
        "other"
    }
}

/// A family: its `# HELP` and `# TYPE` lines, then a line per series (its labels, written, and
/// its value).
fn family(
    out: &mut String,
    (name, kind): (&str, &str),
    help: &str,
    series: impl IntoIterator<Item = (String, u64)>,
) {
    let _ = writeln!(out, "# HELP {name} {help}");
    let _ = writeln!(out, "# TYPE {name} {kind}");
    for (labels, value) in series {
        if labels.is_empty() {
            let _ = writeln!(out, "{name} {value}");
        } else {
            let _ = writeln!(out, "{name}{{{labels}}} {value}");
        }
    }
}

/// A label value as the text format writes it: `\`, `"` and newlines escaped.
fn escape(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    for c in value.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\n' => out.push_str("\\n"),
            c => out.push(c),
        }
    }
    out
}

/// A float as the text format writes it (`1`, `0.005`, never `1e-3`).
fn format_float(value: f64) -> String {
    if value.is_finite() && value.fract() == 0.0 && value.abs() < 1e15 {
        format!("{value:.0}")
    } else {
        format!("{value}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;
    use toolschema_gate::message::RequestId;
    use toolschema_gate::{InputVerdict, Verdict};

    fn record(tool: &str, verdict: Verdict) -> AuditRecord {
        AuditRecord {
            id: RequestId::from_text("1"),
            tool: tool.into(),
            verdict,
            input_check: Some(InputVerdict::Failed),
            messages: Vec::new(),
            duration: Duration::from_millis(3),
            is_error: Some(true),
            output_check: None,
            error: None,
            error_code: None,
            keywords: vec!["minLength".into(), "minLength".into(), "type".into()],
            arguments: None,
            origin: None,
        }
    }

    #[test]
    fn counts_calls_keywords_and_durations_by_listed_tool() {
        let metrics = Metrics::new();
        metrics.call(&record("echo", Verdict::Rejected), true);
        metrics.call(&record("made-up", Verdict::Denied), false);
        let text = metrics.render();
        assert!(text.contains(
            "toolschema_proxy_calls_total{tool=\"echo\",verdict=\"refused_invalid\"} 1\n"
        ));
        assert!(text.contains(
            "toolschema_proxy_calls_total{tool=\"_other\",verdict=\"refused_policy\"} 1\n"
        ));
        assert!(text.contains(
            "toolschema_proxy_validation_failures_total{tool=\"echo\",keyword=\"minLength\"} 1\n"
        ));
        assert!(text.contains("mcp_server_operation_duration_seconds_bucket{mcp_method_name=\"tools/call\",gen_ai_tool_name=\"echo\",error_type=\"tool_error\",le=\"0.005\"} 1\n"));
        assert!(text.contains("mcp_server_operation_duration_seconds_bucket{mcp_method_name=\"tools/call\",gen_ai_tool_name=\"echo\",error_type=\"tool_error\",le=\"0.001\"} 0\n"));
        assert!(!text.contains("made-up"));
    }

    #[test]
    fn a_call_behind_a_front_of_many_servers_is_timed_under_its_server() {
        let metrics = Metrics::new();
        let mut call = record("time__now", Verdict::Forwarded);
        call.origin = Some(toolschema_gate::servers::Origin {
            server: "time".into(),
            tool: "now".into(),
        });
        metrics.call(&call, true);
        let text = metrics.render();
        assert!(
            text.contains("mcp_server_operation_duration_seconds_count{server=\"time\",mcp_method_name=\"tools/call\",gen_ai_tool_name=\"time__now\",error_type=\"tool_error\"} 1\n"),
            "{text}"
        );
    }

    #[test]
    fn label_values_are_escaped() {
        assert_eq!(escape("a\"b\\c\nd"), "a\\\"b\\\\c\\nd");
        assert_eq!(keyword_label("a\"b"), "other");
        assert_eq!(format_float(0.005), "0.005");
        assert_eq!(format_float(300.0), "300");
    }

    proptest::proptest! {
        /// Whatever names clients call, the label set holds at most TOOL_LABELS names plus
        /// `_other`, and never a name the server did not list.
        #[test]
        fn tool_labels_stay_bounded(names in proptest::collection::vec(("[a-z]{1,3}", proptest::bool::ANY), 0..600)) {
            let mut known = HashSet::new();
            for (name, listed) in &names {
                let label = tool_label(&mut known, name, *listed);
                proptest::prop_assert!(label == OTHER_TOOL || (*listed && known.contains(&label)));
            }
            proptest::prop_assert!(known.len() <= TOOL_LABELS);
        }
    }
}
