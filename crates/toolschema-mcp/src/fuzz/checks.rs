//! The checks: what an answer to one case says about the server. Pure functions over the case
//! and the answer; the runner does the calling.

use super::leaks::{self, Known};
use serde::Serialize;
use serde_json::Value;
use std::fmt;
use std::time::Duration;
use toolschema::generate::Kind;
use toolschema::{CompiledTool, ValidationError};

/// A check, by its stable name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Check {
    /// The server exited, or the connection dropped.
    Crash,
    /// No answer within the timeout.
    Hang,
    /// Output that is not JSON-RPC, an answer to no request, a result that is not a
    /// `CallToolResult`.
    ProtocolViolation,
    /// A JSON-RPC error for arguments that are an object, where MCP expects a tool error.
    InternalError,
    /// Arguments the schema refuses, answered as a success.
    AcceptedInvalid,
    /// `structuredContent` that breaks the `outputSchema`, or is missing though one is declared.
    OutputSchema,
    /// A stack trace, an absolute path of the server's machine, or a secret-shaped token.
    Leak,
    /// Arguments the schema accepts, refused (information only).
    RejectedValid,
}

impl Check {
    /// Every check, in report order.
    pub const ALL: [Check; 8] = [
        Check::Crash,
        Check::Hang,
        Check::ProtocolViolation,
        Check::InternalError,
        Check::AcceptedInvalid,
        Check::OutputSchema,
        Check::Leak,
        Check::RejectedValid,
    ];

    /// The stable name used in every output.
    pub fn name(self) -> &'static str {
        match self {
            Check::Crash => "crash",
            Check::Hang => "hang",
            Check::ProtocolViolation => "protocol-violation",
            Check::InternalError => "internal-error",
            Check::AcceptedInvalid => "accepted-invalid",
            Check::OutputSchema => "output-schema",
            Check::Leak => "leak",
            Check::RejectedValid => "rejected-valid",
        }
    }

    /// The check with a stable name.
    pub fn from_name(name: &str) -> Option<Check> {
        Check::ALL.into_iter().find(|c| c.name() == name)
    }

    /// Whether a finding of this check can only be told apart from other calls with nothing
    /// else in flight: a crash takes every call with it, stray output names no request, and a
    /// server busy with another call's work can miss the timeout of this one.
    pub(crate) fn needs_isolation(self) -> bool {
        matches!(self, Check::Crash | Check::ProtocolViolation | Check::Hang)
    }
}

impl fmt::Display for Check {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// How bad a finding is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// The server breaks the protocol or its own contract.
    Error,
    /// Worth fixing; fails a run too.
    Warning,
    /// Information only; never fails a run.
    Info,
}

impl Severity {
    /// The name in outputs.
    pub fn name(self) -> &'static str {
        match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
            Severity::Info => "info",
        }
    }
}

/// How a call ended.
#[derive(Debug, Clone, PartialEq)]
pub enum Answer {
    /// A result, as sent.
    Result {
        /// The result, as read here.
        result: Value,
        /// The text of its `structuredContent` as received, when it has one: the output schema
        /// judges its numbers as stated and sees a lone surrogate escape (read here as U+FFFD).
        structured_content: Option<String>,
        /// The whole result's text as received, when reading it changed a value (a rounded
        /// number, a lone surrogate).
        as_sent: Option<String>,
    },
    /// A JSON-RPC error.
    Error {
        /// The error code.
        code: i64,
        /// The message.
        message: String,
        /// The data, if any.
        data: Option<Value>,
    },
    /// An answer that is not JSON-RPC (why).
    Unreadable(String),
    /// An answer this side cannot take (larger than the size limit, or nested deeper than JSON
    /// is read here): it says nothing about the server.
    Unread(String),
    /// No answer within the timeout.
    Hang,
    /// The server exited or the connection dropped (how, and the last lines of its stderr).
    Closed {
        /// How it ended: `exit code 3`, `signal 9 (SIGKILL)`, or what the connection said.
        how: String,
        /// The last lines of its stderr.
        stderr: Option<String>,
    },
    /// The call was cut short by the runner (it restarted a server that stopped answering); it
    /// says nothing about this case.
    Interrupted,
}

/// One call: the answer and what else the server sent while it was in flight.
#[derive(Debug, Clone, PartialEq)]
pub struct CallRecord {
    /// How the call ended.
    pub answer: Answer,
    /// Stray output attributed to this call (lines that are not JSON-RPC, answers to no request).
    pub strays: Vec<String>,
    /// No other call was in flight at any time during this one, so nothing else can have caused
    /// what it shows.
    pub alone: bool,
    /// The same call, sent again beside this one while it waited, went unanswered for the whole
    /// timeout too: a hang seen twice.
    pub hang_repeated: bool,
}

/// What one case showed about the server.
#[derive(Debug, Clone, PartialEq)]
pub struct Observation {
    /// The check.
    pub check: Check,
    /// How bad.
    pub severity: Severity,
    /// What happened, in words.
    pub message: String,
}

/// What a check needs to know about the case that was sent.
pub struct Sent<'a> {
    /// Whether the schema accepts it.
    pub kind: Kind,
    /// Why the schema refuses it.
    pub errors: &'a [ValidationError],
    /// The arguments (`None`: absent).
    pub arguments: Option<&'a Value>,
    /// What the caller knows (for leaks) before the call: the command line, the listing. The
    /// arguments count as known too (the leak check adds them when it needs them).
    pub known: &'a Known,
}

/// Everything one call shows, each check at most once.
pub fn observe(
    tool: &CompiledTool,
    sent: &Sent<'_>,
    record: &CallRecord,
    timeout: Duration,
) -> Vec<Observation> {
    let mut out = Vec::new();
    let mut push = |check: Check, severity: Severity, message: String| {
        if !out.iter().any(|o: &Observation| o.check == check) {
            out.push(Observation {
                check,
                severity,
                message,
            });
        }
    };
    for stray in &record.strays {
        push(Check::ProtocolViolation, Severity::Error, stray.clone());
    }
    let arguments_are_an_object = sent.arguments.is_some_and(Value::is_object);
    match &record.answer {
        Answer::Interrupted | Answer::Unread(_) => {}
        Answer::Closed { how, stderr } => {
            let note = crate::server_process::stderr_note(stderr.as_deref());
            push(Check::Crash, Severity::Error, format!("the server {how}{note}"));
        }
        Answer::Hang => push(
            Check::Hang,
            Severity::Error,
            format!(
                "no answer within {}s (--timeout; progress notifications extend it up to {}s); the call was cancelled with notifications/cancelled{}",
                timeout.as_secs_f64(),
                (timeout * super::server::PROGRESS_CEILING).as_secs_f64(),
                if record.hang_repeated {
                    "; the same call, sent again while it waited, went unanswered too"
                } else {
                    ""
                }
            ),
        ),
        Answer::Unreadable(why) => push(Check::ProtocolViolation, Severity::Error, why.clone()),
        Answer::Error {
            code,
            message,
            data,
        } => {
            let texts = error_texts(message, data.as_ref());
            if let Some(leak) = first_leak(&texts, sent) {
                let severity = if leak.is_secret() {
                    Severity::Error
                } else {
                    Severity::Warning
                };
                push(Check::Leak, severity, format!("the error shows {}", leak.describe()));
            }
            if arguments_are_an_object {
                push(
                    Check::InternalError,
                    Severity::Warning,
                    format!(
                        "JSON-RPC error {code} ({}) for arguments that are an object; MCP expects a tool result with isError: true",
                        quote(message)
                    ),
                );
            } else if sent.kind == Kind::Valid {
                push(
                    Check::RejectedValid,
                    Severity::Info,
                    format!(
                        "refused arguments that fit the schema with JSON-RPC error {code} ({})",
                        quote(message)
                    ),
                );
            }
        }
        Answer::Result {
            result,
            structured_content,
            ..
        } => {
            if let Some(problem) = call_tool_result_problem(result) {
                push(
                    Check::ProtocolViolation,
                    Severity::Error,
                    format!("the result is not a valid CallToolResult: {problem}"),
                );
                return out;
            }
            let is_error = result.get("isError") == Some(&Value::Bool(true));
            let mut texts = Vec::new();
            collect_strings(result, &mut texts);
            if let Some(leak) = first_leak(&texts, sent) {
                let severity = if leak.is_secret() {
                    Severity::Error
                } else {
                    Severity::Warning
                };
                let whose = if is_error { "tool error" } else { "result" };
                push(Check::Leak, severity, format!("the {whose} shows {}", leak.describe()));
            }
            // A call the schema could not judge tells nothing by being refused or accepted.
            let judged = !sent.errors.iter().any(|e| e.is_unchecked());
            if is_error {
                if judged && sent.kind == Kind::Valid {
                    push(
                        Check::RejectedValid,
                        Severity::Info,
                        format!(
                            "refused arguments that fit the schema: {}",
                            quote(&first_text(result))
                        ),
                    );
                }
            } else {
                if judged && sent.kind == Kind::Invalid {
                    let format_only = !sent.errors.is_empty()
                        && sent.errors.iter().all(|e| e.keyword == "format");
                    let reasons: Vec<&str> =
                        sent.errors.iter().take(3).map(|e| e.message.as_str()).collect();
                    push(
                        Check::AcceptedInvalid,
                        if format_only {
                            Severity::Warning
                        } else {
                            Severity::Error
                        },
                        format!(
                            "accepted arguments the schema refuses: {}",
                            reasons.join("; ")
                        ),
                    );
                }
                // Judged as the text states it, as the proxy judges it. A result the schema cannot
                // judge (a lone surrogate where it may tell one from U+FFFD) is no finding.
                let structured = result.get("structuredContent");
                let verdict = match structured_content {
                    Some(text) => tool.validate_output_text(structured, false, text),
                    None => tool.validate_output(structured, false),
                };
                if let Err(errors) = verdict
                    .or_else(|errors| if errors.is_unchecked() { Ok(()) } else { Err(errors) })
                {
                    let reasons: Vec<&str> = errors.iter().take(3).map(|e| e.message.as_str()).collect();
                    push(
                        Check::OutputSchema,
                        Severity::Error,
                        format!("the result breaks the outputSchema: {}", reasons.join("; ")),
                    );
                }
            }
        }
    }
    out
}

fn quote(text: &str) -> String {
    let line = text.lines().next().unwrap_or_default();
    let mut out: String = line.chars().take(200).collect();
    if line.chars().count() > 200 || text.lines().nth(1).is_some() {
        out.push('…');
    }
    format!("'{out}'")
}

fn error_texts<'a>(message: &'a str, data: Option<&'a Value>) -> Vec<&'a str> {
    let mut texts = vec![message];
    if let Some(data) = data {
        collect_strings(data, &mut texts);
    }
    texts
}

/// Every string inside a value (keys too), without recursion.
fn collect_strings<'a>(value: &'a Value, out: &mut Vec<&'a str>) {
    let mut stack = vec![value];
    while let Some(v) = stack.pop() {
        match v {
            Value::String(s) => out.push(s),
            Value::Array(items) => stack.extend(items),
            Value::Object(map) => {
                for (key, child) in map {
                    out.push(key);
                    stack.push(child);
                }
            }
            _ => {}
        }
    }
}

fn first_leak(texts: &[&str], sent: &Sent<'_>) -> Option<leaks::Leak> {
    texts
        .iter()
        .find_map(|text| leaks::find(text, sent.known, sent.arguments))
}

/// The first text content of a result.
fn first_text(result: &Value) -> String {
    result
        .get("content")
        .and_then(Value::as_array)
        .and_then(|blocks| {
            blocks
                .iter()
                .find_map(|b| b.get("text").and_then(Value::as_str))
        })
        .unwrap_or("(no text)")
        .to_string()
}

/// What makes a result not a valid MCP `CallToolResult` (2025-11-25), if anything.
pub fn call_tool_result_problem(result: &Value) -> Option<String> {
    let Value::Object(map) = result else {
        return Some("it is not a JSON object".into());
    };
    let content = match map.get("content") {
        None => return Some("it has no \"content\" array".into()),
        Some(Value::Array(content)) => content,
        Some(other) => {
            return Some(format!(
                "\"content\" is {}, not an array",
                toolschema::json::kind_in_words(other)
            ))
        }
    };
    for (i, block) in content.iter().enumerate() {
        if let Some(problem) = content_block_problem(block) {
            return Some(format!("content[{i}] {problem}"));
        }
    }
    if let Some(flag) = map.get("isError") {
        if !flag.is_boolean() {
            return Some(format!(
                "\"isError\" is {}, not a boolean",
                toolschema::json::kind_in_words(flag)
            ));
        }
    }
    if let Some(structured) = map.get("structuredContent") {
        if !structured.is_object() {
            return Some(format!(
                "\"structuredContent\" is {}, not an object",
                toolschema::json::kind_in_words(structured)
            ));
        }
    }
    None
}

fn content_block_problem(block: &Value) -> Option<String> {
    let Value::Object(map) = block else {
        return Some(format!(
            "is {}, not an object",
            toolschema::json::kind_in_words(block)
        ));
    };
    let string = |key: &str| map.get(key).is_some_and(Value::is_string);
    let needs = |keys: &[&str]| -> Option<String> {
        keys.iter()
            .find(|k| !string(k))
            .map(|k| format!("has no string \"{k}\""))
    };
    match map.get("type").and_then(Value::as_str) {
        None => Some("has no \"type\"".into()),
        Some("text") => needs(&["text"]),
        Some("image" | "audio") => needs(&["data", "mimeType"]),
        Some("resource_link") => needs(&["uri", "name"]),
        Some("resource") => match map.get("resource") {
            Some(Value::Object(resource)) => {
                let has = |k: &str| resource.get(k).is_some_and(Value::is_string);
                if !has("uri") {
                    Some("has a resource without a string \"uri\"".into())
                } else if !has("text") && !has("blob") {
                    Some("has a resource with neither \"text\" nor \"blob\"".into())
                } else {
                    None
                }
            }
            _ => Some("has no \"resource\" object".into()),
        },
        Some(other) => Some(format!("has an unknown type '{other}'")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use toolschema::Tool;

    fn tool() -> CompiledTool {
        Tool::from_value(json!({"name": "weather", "inputSchema": {"type": "object",
            "properties": {"city": {"type": "string"}}, "required": ["city"]},
            "outputSchema": {"type": "object", "properties": {"temp": {"type": "number"}}, "required": ["temp"]}}))
        .unwrap()
        .compile()
        .unwrap()
    }

    fn checks(kind: Kind, arguments: Option<Value>, answer: Answer) -> Vec<(Check, Severity)> {
        let known = Known::default();
        let errors = match kind {
            Kind::Valid => Vec::new(),
            Kind::Invalid => tool()
                .validate_input(arguments.as_ref().unwrap_or(&json!({})))
                .err()
                .map(|e| e.into_vec())
                .unwrap_or_default(),
        };
        let sent = Sent {
            kind,
            errors: &errors,
            arguments: arguments.as_ref(),
            known: &known,
        };
        let record = CallRecord {
            answer,
            strays: Vec::new(),
            alone: true,
            hang_repeated: false,
        };
        observe(&tool(), &sent, &record, Duration::from_secs(2))
            .into_iter()
            .map(|o| (o.check, o.severity))
            .collect()
    }

    /// A result answered as `serde_json` writes it.
    fn ok(result: Value) -> Answer {
        Answer::Result {
            structured_content: result.get("structuredContent").map(Value::to_string),
            as_sent: None,
            result,
        }
    }

    #[test]
    fn a_call_the_schema_cannot_judge_is_neither_accepted_invalid_nor_rejected_valid() {
        let tool = Tool::from_value(json!({"name": "count", "inputSchema": {"type": "object",
            "properties": {"n": {"type": "integer"}}}}))
        .unwrap()
        .compile()
        .unwrap();
        // Read as a rounded float: the schema's integer type cannot be judged on it.
        let arguments = json!({"n": 1e300});
        let errors = tool.validate_input(&arguments).unwrap_err().into_vec();
        assert!(errors.iter().all(|e| e.is_unchecked()), "{errors:?}");
        let known = Known::default();
        let sent = Sent {
            kind: Kind::Invalid,
            errors: &errors,
            arguments: Some(&arguments),
            known: &known,
        };
        for answer in [
            json!({"content": [{"type": "text", "text": "counted"}]}),
            json!({"content": [{"type": "text", "text": "too large"}], "isError": true}),
        ] {
            let record = CallRecord {
                answer: ok(answer),
                strays: Vec::new(),
                alone: true,
                hang_repeated: false,
            };
            let seen = observe(&tool, &sent, &record, Duration::from_secs(2));
            assert!(
                seen.is_empty(),
                "{:?}",
                seen.iter().map(|o| o.check).collect::<Vec<_>>()
            );
        }
    }

    #[test]
    fn a_result_whose_lone_surrogate_the_schema_could_tell_from_u_fffd_is_no_finding() {
        // Read as U+FFFD, which this pattern refuses; the surrogate the server sent, it takes.
        let tool = Tool::from_value(json!({"name": "say", "inputSchema": {"type": "object"},
            "outputSchema": {"type": "object", "properties": {"s": {"pattern": "^[^\u{fffd}]*$"}}}}))
        .unwrap()
        .compile()
        .unwrap();
        let known = Known::default();
        let sent = Sent {
            kind: Kind::Valid,
            errors: &[],
            arguments: Some(&json!({})),
            known: &known,
        };
        let result = json!({"content": [], "structuredContent": {"s": "\u{fffd}"}});
        let seen = |lone_surrogates: bool| {
            let text = if lone_surrogates {
                r#"{"s": "\udc00"}"#
            } else {
                r#"{"s": "\ufffd"}"#
            };
            let record = CallRecord {
                answer: Answer::Result {
                    result: result.clone(),
                    structured_content: Some(text.into()),
                    as_sent: None,
                },
                strays: Vec::new(),
                alone: true,
                hang_repeated: false,
            };
            observe(&tool, &sent, &record, Duration::from_secs(2))
                .into_iter()
                .map(|o| o.check)
                .collect::<Vec<_>>()
        };
        assert!(seen(true).is_empty());
        // Where the text held U+FFFD itself, the schema judged what was sent.
        assert_eq!(seen(false), [Check::OutputSchema]);
    }

    #[test]
    fn a_correct_server_shows_nothing() {
        let good =
            json!({"content": [{"type": "text", "text": "21"}], "structuredContent": {"temp": 21}});
        assert!(checks(Kind::Valid, Some(json!({"city": "Oslo"})), ok(good)).is_empty());
        let refusal =
            json!({"content": [{"type": "text", "text": "missing city"}], "isError": true});
        assert!(checks(Kind::Invalid, Some(json!({})), ok(refusal)).is_empty());
        let invalid_params = Answer::Error {
            code: -32602,
            message: "arguments must be an object".into(),
            data: None,
        };
        assert!(checks(
            Kind::Invalid,
            Some(json!("{\"city\":\"x\"}")),
            invalid_params.clone()
        )
        .is_empty());
        assert!(checks(Kind::Invalid, None, invalid_params).is_empty());
    }

    #[test]
    fn each_fault_is_its_check() {
        let success =
            json!({"content": [{"type": "text", "text": "ok"}], "structuredContent": {"temp": 1}});
        assert_eq!(
            checks(Kind::Invalid, Some(json!({})), ok(success.clone())),
            [(Check::AcceptedInvalid, Severity::Error)]
        );
        let bad_output = json!({"content": [], "structuredContent": {"temp": "warm"}});
        assert_eq!(
            checks(Kind::Valid, Some(json!({"city": "x"})), ok(bad_output)),
            [(Check::OutputSchema, Severity::Error)]
        );
        let no_output = json!({"content": [{"type": "text", "text": "21"}]});
        assert_eq!(
            checks(Kind::Valid, Some(json!({"city": "x"})), ok(no_output)),
            [(Check::OutputSchema, Severity::Error)]
        );
        let internal = Answer::Error {
            code: -32603,
            message: "Cannot read properties of undefined".into(),
            data: None,
        };
        assert_eq!(
            checks(Kind::Invalid, Some(json!({})), internal),
            [(Check::InternalError, Severity::Warning)]
        );
        let trace = json!({"content": [{"type": "text", "text": "Error: x\n    at run (/srv/app/index.js:3:9)"}], "isError": true});
        assert_eq!(
            checks(Kind::Invalid, Some(json!({})), ok(trace)),
            [(Check::Leak, Severity::Warning)]
        );
        let refused = json!({"content": [{"type": "text", "text": "no"}], "isError": true});
        assert_eq!(
            checks(Kind::Valid, Some(json!({"city": "x"})), ok(refused)),
            [(Check::RejectedValid, Severity::Info)]
        );
        assert_eq!(
            checks(Kind::Valid, Some(json!({"city": "x"})), Answer::Hang),
            [(Check::Hang, Severity::Error)]
        );
        let closed = Answer::Closed {
            how: "exited with exit code 1".into(),
            stderr: Some("  | boom".into()),
        };
        assert_eq!(
            checks(Kind::Valid, Some(json!({"city": "x"})), closed),
            [(Check::Crash, Severity::Error)]
        );
        let malformed = json!({"content": "21"});
        assert_eq!(
            checks(Kind::Valid, Some(json!({"city": "x"})), ok(malformed)),
            [(Check::ProtocolViolation, Severity::Error)]
        );
        assert!(checks(Kind::Valid, Some(json!({"city": "x"})), Answer::Interrupted).is_empty());
    }

    #[test]
    fn error_results_are_exempt_from_the_output_schema() {
        let error =
            json!({"content": [{"type": "text", "text": "city not found"}], "isError": true});
        assert_eq!(
            checks(Kind::Valid, Some(json!({"city": "x"})), ok(error)),
            [(Check::RejectedValid, Severity::Info)]
        );
    }

    #[test]
    fn a_format_only_fault_accepted_is_a_warning() {
        let known = Known::default();
        let errors = vec![ValidationError {
            path: "/d".into(),
            message: "argument 'd' is not a date".into(),
            keyword: "format".into(),
        }];
        let sent = Sent {
            kind: Kind::Invalid,
            errors: &errors,
            arguments: Some(&json!({"city": "x", "d": "x"})),
            known: &known,
        };
        let record = CallRecord {
            answer: ok(json!({"content": [], "structuredContent": {"temp": 1}})),
            strays: Vec::new(),
            alone: true,
            hang_repeated: false,
        };
        let found = observe(&tool(), &sent, &record, Duration::from_secs(1));
        assert_eq!(found[0].severity, Severity::Warning);
        assert_eq!(
            found[0].message,
            "accepted arguments the schema refuses: argument 'd' is not a date"
        );
    }

    #[test]
    fn call_tool_results_are_checked_block_by_block() {
        for (result, problem) in [
            (json!([]), Some("it is not a JSON object")),
            (json!({}), Some("it has no \"content\" array")),
            (
                json!({"content": [{"type": "txt", "text": "x"}]}),
                Some("content[0] has an unknown type 'txt'"),
            ),
            (
                json!({"content": [{"type": "image", "data": "AA=="}]}),
                Some("content[0] has no string \"mimeType\""),
            ),
            (
                json!({"content": [], "isError": "yes"}),
                Some("\"isError\" is a string, not a boolean"),
            ),
            (
                json!({"content": [], "structuredContent": [1]}),
                Some("\"structuredContent\" is an array, not an object"),
            ),
            (
                json!({"content": [{"type": "resource", "resource": {"uri": "file:///x", "text": "t"}}]}),
                None,
            ),
            (
                json!({"content": [{"type": "resource_link", "uri": "file:///x", "name": "x"}], "isError": false}),
                None,
            ),
        ] {
            assert_eq!(
                call_tool_result_problem(&result).as_deref(),
                problem,
                "{result}"
            );
        }
    }

    #[test]
    fn names_round_trip() {
        for check in Check::ALL {
            assert_eq!(Check::from_name(check.name()), Some(check));
            assert_eq!(serde_json::to_value(check).unwrap(), json!(check.name()));
        }
        assert_eq!(Check::from_name("nope"), None);
    }
}
