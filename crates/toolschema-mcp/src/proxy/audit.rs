//! The audit log: one JSON line per `tools/call`, appended to a file.

use serde_json::{json, Map, Value};
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::Path;
use std::sync::Mutex;
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
}

impl Verdict {
    fn as_str(self) -> &'static str {
        match self {
            Verdict::Forwarded => "forwarded",
            Verdict::Rejected => "rejected",
            Verdict::Denied => "denied",
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
}

impl OutputVerdict {
    fn as_str(self) -> &'static str {
        match self {
            OutputVerdict::Off => "off",
            OutputVerdict::NoSchema => "no_schema",
            OutputVerdict::Skipped => "skipped",
            OutputVerdict::Passed => "passed",
            OutputVerdict::Failed => "failed",
            OutputVerdict::Enforced => "enforced",
        }
    }
}

/// One audit line.
#[derive(Debug, Clone)]
pub struct AuditRecord<'a> {
    /// The request id.
    pub id: &'a Value,
    /// The tool called.
    pub tool: &'a str,
    /// What the proxy did.
    pub verdict: Verdict,
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
    pub arguments: Option<&'a Value>,
}

/// An append-only JSON Lines file.
pub struct AuditLog {
    file: Mutex<File>,
    include_arguments: bool,
}

impl AuditLog {
    /// Open (or create) `path` for appending.
    pub fn open(path: &Path, include_arguments: bool) -> std::io::Result<AuditLog> {
        let file = OpenOptions::new().create(true).append(true).open(path)?;
        Ok(AuditLog {
            file: Mutex::new(file),
            include_arguments,
        })
    }

    /// Append one record. A failing write is reported, never fatal: the calls go on.
    pub fn write(&self, record: &AuditRecord<'_>) {
        let mut line = self.to_json(record).to_string();
        line.push('\n');
        let result = match self.file.lock() {
            Ok(mut file) => file.write_all(line.as_bytes()),
            Err(_) => Ok(()),
        };
        if let Err(e) = result {
            tracing::warn!("cannot write the audit log: {e}");
        }
    }

    fn to_json(&self, record: &AuditRecord<'_>) -> Value {
        let time = chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true);
        let mut map = Map::new();
        map.insert("time".into(), json!(time));
        map.insert("id".into(), record.id.clone());
        map.insert("tool".into(), json!(record.tool));
        map.insert("verdict".into(), json!(record.verdict.as_str()));
        map.insert("messages".into(), json!(record.messages));
        let millis = (record.duration.as_secs_f64() * 1e6).round() / 1e3;
        map.insert("duration_ms".into(), json!(millis));
        map.insert("isError".into(), json!(record.is_error));
        map.insert(
            "output_check".into(),
            json!(record.output_check.map(OutputVerdict::as_str)),
        );
        if let Some(error) = &record.error {
            map.insert("error".into(), json!(error));
        }
        if self.include_arguments {
            map.insert(
                "arguments".into(),
                record.arguments.cloned().unwrap_or(Value::Null),
            );
        }
        Value::Object(map)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_one_line_per_record_with_arguments_only_when_asked() {
        let dir = std::env::temp_dir().join(format!("toolschema-audit-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("audit.jsonl");
        let _ = std::fs::remove_file(&path);
        let arguments = json!({"q": "x"});
        let record = AuditRecord {
            id: &json!(4),
            tool: "search",
            verdict: Verdict::Rejected,
            messages: vec!["argument 'q' string length must be >= 3 (got 1)".into()],
            duration: Duration::from_micros(1500),
            is_error: None,
            output_check: None,
            error: None,
            arguments: Some(&arguments),
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
                "output_check"
            ]
        );
        assert_eq!(lines[0]["duration_ms"], json!(1.5));
        assert_eq!(lines[0]["verdict"], "rejected");
        assert_eq!(lines[1]["arguments"], arguments);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
