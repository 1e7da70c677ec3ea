//! The audit log's records: one JSON line per `tools/call` (the file they go to is the
//! transport's).

use super::overrides::ToolOverrides;
use crate::message::RequestId;
use crate::servers::Origin;
use serde_json::{json, Map, Value};
use std::time::Duration;

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
    /// Cancelled by the client: while it waited for the proxy's own listing (never sent), or
    /// once forwarded (recorded when the cancellation passes; an answer that comes anyway is
    /// not recorded again).
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
    /// The code of that JSON-RPC error (for metrics; the log writes the message).
    pub error_code: Option<i64>,
    /// The JSON Schema keywords the arguments failed (for metrics; the log writes the
    /// messages).
    pub keywords: Vec<String>,
    /// The call's arguments (written only with `--audit-arguments`).
    pub arguments: Option<Value>,
    /// Where the tool comes from, behind a front of many servers: the server's name and the
    /// tool's name there (`None` for one server, or a tool not listed).
    pub origin: Option<Origin>,
}

impl AuditRecord {
    /// The call's outcome as the proxy's metrics and traces name it (`forwarded`,
    /// `output_withheld`, `refused_invalid`, `refused_policy`, `refused_unchecked`,
    /// `refused_pin_drift`, `cancelled`); `None` for a record that is not a call's outcome (a
    /// pin drift seen in a listing: the refused calls to the tool are counted apart from it).
    pub fn outcome(&self) -> Option<&'static str> {
        Some(match self.verdict {
            Verdict::Forwarded => match self.output_check {
                Some(OutputVerdict::Enforced) => "output_withheld",
                // Unchecked with `--output-check enforce` replaces the result too.
                Some(OutputVerdict::Unchecked) if self.is_error == Some(true) => "output_withheld",
                _ => "forwarded",
            },
            Verdict::Rejected => "refused_invalid",
            Verdict::Denied => "refused_policy",
            Verdict::UncheckedRefused => "refused_unchecked",
            Verdict::PinRefused => "refused_pin_drift",
            // Cancelled by the client, before or after it was sent.
            Verdict::Cancelled => "cancelled",
            Verdict::PinDrift => return None,
        })
    }

    /// The record as one JSON line (without its newline), the id written exactly as the client
    /// sent it: `time` (as the log states it), the name of the client that made the call (a
    /// token's name, never the token), the fields of the called tool that the client saw
    /// overridden, and the arguments only when `format` asks for them.
    pub fn to_line(&self, time: &str, client: Option<&str>, format: &AuditFormat) -> String {
        let rest = self.to_json(client, format).to_string();
        let rest = rest.strip_prefix('{').unwrap_or(&rest);
        format!("{{\"time\":{},\"id\":{},{rest}", json!(time), self.id.raw())
    }

    /// The record's fields after `time` and `id`.
    fn to_json(&self, client: Option<&str>, format: &AuditFormat) -> Value {
        let mut map = Map::new();
        if let Some(client) = client {
            map.insert("client".into(), json!(client));
        }
        map.insert("tool".into(), json!(self.tool));
        if let Some(origin) = &self.origin {
            map.insert("server".into(), json!(origin.server));
            map.insert("server_tool".into(), json!(origin.tool));
        }
        map.insert("verdict".into(), json!(self.verdict.as_str()));
        map.insert("messages".into(), json!(self.messages));
        let millis = (self.duration.as_secs_f64() * 1e6).round() / 1e3;
        map.insert("duration_ms".into(), json!(millis));
        map.insert("isError".into(), json!(self.is_error));
        map.insert(
            "input_check".into(),
            json!(self.input_check.map(InputVerdict::as_str)),
        );
        map.insert(
            "output_check".into(),
            json!(self.output_check.map(OutputVerdict::as_str)),
        );
        if let Some(error) = &self.error {
            map.insert("error".into(), json!(error));
        }
        let overridden = format.overrides.fields(&self.tool);
        if !overridden.is_empty() {
            map.insert("overridden".into(), json!(overridden));
        }
        if format.include_arguments {
            map.insert(
                "arguments".into(),
                self.arguments.clone().unwrap_or(Value::Null),
            );
        }
        Value::Object(map)
    }
}

/// A request other than `tools/call` that the server answered (`tools/call` has its
/// [`AuditRecord`]): what the metrics time by method.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Operation {
    /// The request's method.
    pub method: String,
    /// From its arrival to its answer.
    pub duration: Duration,
    /// The code of the JSON-RPC error it was answered with.
    pub error_code: Option<i64>,
}

/// What a record's line says besides the record: the overridden fields of its tool, and its
/// arguments or not.
#[derive(Debug, Clone, Default)]
pub struct AuditFormat {
    /// Include the arguments of each call.
    pub include_arguments: bool,
    /// The overrides the client saw.
    pub overrides: ToolOverrides,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outcomes_are_named_as_metrics_and_traces_name_them() {
        let named = |verdict, output, is_error| {
            AuditRecord {
                id: RequestId::from_text("1"),
                tool: "echo".into(),
                verdict,
                input_check: None,
                messages: Vec::new(),
                duration: Duration::from_millis(3),
                is_error,
                output_check: output,
                error: None,
                error_code: None,
                keywords: Vec::new(),
                arguments: None,
                origin: None,
            }
            .outcome()
        };
        let enforced = Some(OutputVerdict::Enforced);
        let unchecked = Some(OutputVerdict::Unchecked);
        assert_eq!(named(Verdict::Forwarded, None, None), Some("forwarded"));
        assert_eq!(
            named(Verdict::Forwarded, enforced, Some(true)),
            Some("output_withheld")
        );
        assert_eq!(
            named(Verdict::Forwarded, unchecked, Some(true)),
            Some("output_withheld")
        );
        assert_eq!(
            named(Verdict::Forwarded, unchecked, Some(false)),
            Some("forwarded")
        );
        assert_eq!(
            named(Verdict::Rejected, None, None),
            Some("refused_invalid")
        );
        assert_eq!(named(Verdict::Denied, None, None), Some("refused_policy"));
        assert_eq!(
            named(Verdict::UncheckedRefused, None, None),
            Some("refused_unchecked")
        );
        assert_eq!(
            named(Verdict::PinRefused, None, None),
            Some("refused_pin_drift")
        );
        assert_eq!(named(Verdict::PinDrift, None, None), None);
        assert_eq!(named(Verdict::Cancelled, None, None), Some("cancelled"));
    }
}
