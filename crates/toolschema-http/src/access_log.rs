//! `--access-log FILE`: one JSON line per decision of the guard that matters afterwards: each
//! `tools/call` let through or refused, each refused request, each session opened. Clients are
//! named by their token's name or their JWT's subject, never by a credential.
//!
//! ```json
//! {"time":"2026-11-22T10:00:00.000Z","client":"alice","auth":"token","event":"tools/call","tool":"greet","status":200}
//! {"time":"2026-11-22T10:00:01.000Z","client":null,"auth":null,"event":"refused","tool":null,"status":401,"reason":"missing_token","message":"..."}
//! ```
//!
//! A line about a traced request also carries `trace_id` and `span_id` ([`TraceIds`]), so a
//! line can be found from its trace and back.

use crate::line_file::LineFile;
use crate::principal::Principal;
use crate::refusal::Refusal;
use serde_json::{json, Map, Value};
use std::path::Path;

/// An append-only JSON Lines file of the guard's decisions; writing a line never waits for the
/// file's reader ([`LineFile`]).
pub struct AccessLog {
    file: LineFile,
}

impl std::fmt::Debug for AccessLog {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AccessLog").finish_non_exhaustive()
    }
}

/// What happened.
#[derive(Debug, Clone, Copy)]
pub enum AccessEvent<'a> {
    /// A `tools/call` of this tool was let through.
    Call(&'a str),
    /// A session was opened.
    SessionOpened,
    /// A request was refused; `tool` when it carried a `tools/call`.
    Refused(&'a Refusal, Option<&'a str>),
}

/// The trace of the request a line is about: the W3C trace id and the id of the request's
/// server span, in lowercase hex, as the exported spans carry them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TraceIds {
    /// 32 hex digits.
    pub trace_id: String,
    /// 16 hex digits.
    pub span_id: String,
}

impl AccessLog {
    /// Open (or create) `path` for appending.
    pub fn open(path: &Path) -> std::io::Result<AccessLog> {
        let file = LineFile::open(path, "access log", Box::new(dropped_line))?;
        Ok(AccessLog { file })
    }

    /// Append one line; `trace`: the trace of the request it is about, when it is traced. A
    /// failing write is logged, never fatal.
    pub fn record(
        &self,
        principal: Option<&Principal>,
        event: AccessEvent<'_>,
        trace: Option<&TraceIds>,
    ) {
        let mut json = to_json(principal, event);
        if let (Some(trace), Value::Object(map)) = (trace, &mut json) {
            map.insert("trace_id".into(), json!(trace.trace_id));
            map.insert("span_id".into(), json!(trace.span_id));
        }
        // Names and ids come from clients: nothing in the line steers a terminal showing it.
        let mut line = toolschema::text::json_safe(&json.to_string()).into_owned();
        line.push('\n');
        self.file.append(line.as_bytes());
    }
}

/// The line that counts the lines a stalled reader made the log drop.
fn dropped_line(dropped: u64) -> String {
    json!({
        "time": now(),
        "event": "dropped",
        "dropped": dropped,
        "message": format!("the access log was not read fast enough: {dropped} line(s) were dropped"),
    })
    .to_string()
}

/// The time a line is written, as toolschema's JSON logs state it (RFC 3339, UTC, in
/// milliseconds).
pub fn now() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}

fn to_json(principal: Option<&Principal>, event: AccessEvent<'_>) -> Value {
    let mut map = Map::new();
    map.insert("time".into(), json!(now()));
    map.insert("client".into(), json!(principal.map(Principal::name)));
    map.insert("auth".into(), json!(principal.map(|p| p.method().as_str())));
    match event {
        AccessEvent::Call(tool) => {
            map.insert("event".into(), json!("tools/call"));
            map.insert("tool".into(), json!(tool));
            map.insert("status".into(), json!(200));
        }
        AccessEvent::SessionOpened => {
            map.insert("event".into(), json!("session"));
            map.insert("tool".into(), Value::Null);
            map.insert("status".into(), json!(200));
        }
        AccessEvent::Refused(refusal, tool) => {
            map.insert("event".into(), json!("refused"));
            map.insert("tool".into(), json!(tool));
            map.insert("status".into(), json!(refusal.status().as_u16()));
            map.insert("reason".into(), json!(refusal.kind().code()));
            map.insert("message".into(), json!(refusal.message()));
        }
    }
    Value::Object(map)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::principal::AuthMethod;
    use crate::refusal::RefusalKind;

    #[test]
    fn one_line_per_event_naming_the_client() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("access.jsonl");
        let log = AccessLog::open(&path).unwrap();
        let alice = Principal::new("alice", AuthMethod::Token, Default::default());
        let trace = TraceIds {
            trace_id: "4bf92f3577b34da6a3ce929d0e0e4736".into(),
            span_id: "00f067aa0ba902b7".into(),
        };
        log.record(Some(&alice), AccessEvent::Call("greet"), Some(&trace));
        let refusal = Refusal::new(RefusalKind::MissingToken, "send a token");
        log.record(None, AccessEvent::Refused(&refusal, None), None);
        let lines: Vec<Value> = std::fs::read_to_string(&path)
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(lines.len(), 2);
        assert_eq!(lines[0]["client"], "alice");
        assert_eq!(lines[0]["auth"], "token");
        assert_eq!(lines[0]["tool"], "greet");
        assert_eq!(lines[0]["trace_id"], "4bf92f3577b34da6a3ce929d0e0e4736");
        assert_eq!(lines[0]["span_id"], "00f067aa0ba902b7");
        // An untraced request's line has no trace fields.
        assert!(lines[1].get("trace_id").is_none() && lines[1].get("span_id").is_none());
        assert_eq!(lines[1]["client"], Value::Null);
        assert_eq!(lines[1]["status"], 401);
        assert_eq!(lines[1]["reason"], "missing_token");
    }
}
