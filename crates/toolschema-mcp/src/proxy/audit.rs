//! The audit log: one JSON line per `tools/call`, appended to a file.

use super::overrides::ToolOverrides;
use crate::message::RequestId;
use serde_json::{json, Map, Value};
use std::path::Path;
use std::time::Duration;
use toolschema_http::line_file::LineFile;

/// What the proxy did with a call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// Sent to the server.
    Forwarded,
    /// Arguments broke the tool's `inputSchema`; answered by the proxy.
    Rejected,
    /// Refused by `--allow`/`--deny`, or a call to a tool the server does not list (even to the
    /// proxy's own listing); answered by the proxy.
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
    /// The server does not list the tool, even to the proxy's own listing; forwarded unchecked
    /// with `--unlisted forward` or `--input-check warn`.
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

/// An append-only JSON Lines file. Writing a record never waits for the file's reader: a log
/// shipper that stops reading a pipe (`--audit /dev/stdout`) must not stop the calls it records
/// (see [`LineFile`]: past its backlog, records are dropped whole and counted in the log).
pub struct AuditLog {
    file: LineFile,
    include_arguments: bool,
    overrides: ToolOverrides,
}

impl AuditLog {
    /// Open (or create) `path` for appending.
    pub fn open(path: &Path, include_arguments: bool) -> std::io::Result<AuditLog> {
        Ok(AuditLog {
            file: LineFile::open(path, "audit log", Box::new(dropped_line))?,
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
        self.file.append(line.as_bytes());
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

/// The line that counts the records a stalled reader made the log drop.
fn dropped_line(dropped: u64) -> String {
    json!({
        "time": now(),
        "verdict": "audit-dropped",
        "dropped": dropped,
        "messages": [format!(
            "the audit log was not read fast enough: {dropped} record(s) were dropped"
        )],
    })
    .to_string()
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
}
