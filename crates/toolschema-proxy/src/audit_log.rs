//! The audit log: one JSON line per `tools/call`, appended to a file.

use serde_json::json;
use std::path::Path;
use toolschema_gate::ToolOverrides;
use toolschema_gate::{AuditFormat, AuditRecord};
use toolschema_http::line_file::LineFile;

/// An append-only JSON Lines file. Writing a record never waits for the file's reader: a log
/// shipper that stops reading a pipe (`--audit /dev/stdout`) must not stop the calls it records
/// (see [`LineFile`]: past its backlog, records are dropped whole and counted in the log).
pub struct AuditLog {
    file: LineFile,
    format: AuditFormat,
}

impl AuditLog {
    /// Open (or create) `path` for appending.
    pub fn open(path: &Path, include_arguments: bool) -> std::io::Result<AuditLog> {
        Ok(AuditLog {
            file: LineFile::open(path, "audit log", Box::new(dropped_line))?,
            format: AuditFormat {
                include_arguments,
                overrides: ToolOverrides::default(),
            },
        })
    }

    /// Name, in each call's record, the fields of the called tool that the client saw
    /// overridden (`"overridden": ["description"]`).
    pub fn with_overrides(mut self, overrides: ToolOverrides) -> AuditLog {
        self.format.overrides = overrides;
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
        let mut line =
            toolschema::text::json_safe(&record.to_line(&now(), client, &self.format)).into_owned();
        line.push('\n');
        self.file.append(line.as_bytes());
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
    use serde_json::Value;
    use std::time::Duration;
    use toolschema_gate::message::RequestId;
    use toolschema_gate::ToolOverride;
    use toolschema_gate::{InputVerdict, Verdict};

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
            error_code: None,
            keywords: vec!["minLength".into()],
            arguments: Some(arguments.clone()),
            origin: None,
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
