//! Admission without a session: a call's tool name, arguments and policy in, the verdict and
//! its messages out, through `&self`, so that any number of decisions run at once over one
//! catalog (`toolschema serve`). The tools are learned and compiled once, up front; the steps
//! are the [`Gate`](super::Gate)'s own (the policy, the pin, the schema, the settings), from
//! the same functions, so both decide alike.

use super::calls::{
    forwards_unlisted, judge, lets_unchecked_through, not_an_object, settle, unknown_tool,
    unlisted_forwarded, Judged, Settled, UNLEARNED,
};
use super::pins::pin_verdict;
use super::{input_of, report, GateConfig, PinMode};
use crate::audit::{AuditRecord, InputVerdict, Verdict};
use crate::message::{ErrorCode, RequestId};
use crate::registry::{Lookup, Next, Page, ToolRegistry};
use crate::{InputCheck, ToolPolicy, UnknownArguments};
use serde_json::{Map, Value};
use std::collections::HashMap;
use std::time::Instant;
use toolschema::json::number::StatedNumbers;

/// One catalog's tools, compiled, with the settings its calls are decided by.
pub struct Admission {
    config: GateConfig,
    registry: ToolRegistry,
    /// Listed tools that do not match their pins, and why.
    pin_mismatches: HashMap<String, String>,
}

/// What [`Admission::admit`] decided of a call.
#[derive(Debug, Clone, PartialEq)]
pub struct Admitted {
    /// Whether the call may go on.
    pub allowed: bool,
    /// The decision as the proxy's audit log writes a call's (no result: `isError` and the
    /// output check are absent).
    pub record: AuditRecord,
}

/// How a refused call would be answered.
enum Refusal {
    /// A tool error the model reads.
    ToolError(String),
    /// A JSON-RPC error (invalid params).
    Error(String),
}

impl Admission {
    /// The tools of one complete listing (`tools`, each a tool object; `stated`, the numbers
    /// of the text they were read from that they hold otherwise, with pointers from the
    /// `tools` array), decided as `config` says; each tool's validators are compiled now. What learning them finds (a tool that
    /// cannot be called, one that drifted from its pin) is reported.
    pub fn new(tools: &[Value], stated: &StatedNumbers, config: GateConfig) -> Admission {
        let mut registry = ToolRegistry::default();
        let page = Page {
            cursor: None,
            next: Next::Last,
            changes_at_request: registry.changes(),
        };
        let (warnings, _) = registry.learn_page_read(tools, stated, page);
        for warning in warnings {
            report(&warning);
        }
        registry.compile_all();
        let mut pin_mismatches = HashMap::new();
        if let Some(pins) = &config.pins {
            for tool in tools {
                let Some(name) = tool.get("name").and_then(Value::as_str) else {
                    continue;
                };
                if let Some(why) = pins.mismatch(tool, None) {
                    let consequence = match pins.mode {
                        PinMode::Enforce => "its calls refused (--pin-mode enforce)",
                        PinMode::Warn => "its calls passed on (--pin-mode warn)",
                    };
                    report(&format!("tool '{name}': {why}; {consequence}"));
                    pin_mismatches.insert(name.to_string(), why);
                }
            }
        }
        Admission {
            config,
            registry,
            pin_mismatches,
        }
    }

    /// The settings.
    pub fn config(&self) -> &GateConfig {
        &self.config
    }

    /// Whether the catalog lists `tool`.
    pub fn knows(&self, tool: &str) -> bool {
        self.registry.knows(tool)
    }

    /// How many tools the catalog lists.
    pub fn len(&self) -> usize {
        self.registry.len()
    }

    /// Whether the catalog lists no tool.
    pub fn is_empty(&self) -> bool {
        self.registry.len() == 0
    }

    /// Decide a call of `tool` with `arguments` (any JSON; `null` is none), under `policy`
    /// (`None`: the settings' own `--allow`/`--deny`), as the proxy decides one it reads:
    /// refused, with why, or let through, with its warnings. `id` is the record's. A call let
    /// through unchecked is not reported here: its record says so (its input check
    /// `unchecked` or `unlisted`), for the caller to report on every such decision.
    pub fn admit(
        &self,
        id: RequestId,
        tool: &str,
        arguments: &Value,
        policy: Option<&ToolPolicy>,
    ) -> Admitted {
        let started = Instant::now();
        let call = Call {
            id,
            tool,
            started,
            arguments,
            audit_arguments: self.config.audit_arguments,
        };
        // MCP treats absent arguments (and `null`, which some clients send) as none.
        let none = Value::Object(Map::new());
        let arguments = if arguments.is_null() {
            &none
        } else {
            arguments
        };
        if !arguments.is_object() {
            let reason = not_an_object(tool, arguments);
            return call.refused(Verdict::Rejected, Refusal::Error(reason), None, Vec::new());
        }
        let policy = policy.unwrap_or(&self.config.policy);
        if let Some(reason) = policy.refusal(tool) {
            return call.refused(Verdict::Denied, Refusal::Error(reason), None, Vec::new());
        }
        let input_check = self.config.input_check_of(self.registry.origin(tool));
        if input_check == InputCheck::Off {
            return call.forwarded(InputVerdict::Off, Vec::new(), Vec::new());
        }
        let mut notes = Vec::new();
        let pins = self.config.pins.as_ref();
        if let Some((reason, refuse)) =
            pin_verdict(pins, &self.pin_mismatches, self.knows(tool), tool)
        {
            if refuse {
                let refusal = Refusal::ToolError(reason);
                return call.refused(Verdict::PinRefused, refusal, None, Vec::new());
            }
            notes.push(reason);
        }
        let look_for_undeclared = self.config.unknown_arguments != UnknownArguments::Allow;
        let reason = match self.registry.compiled(tool) {
            Lookup::Compiled(compiled) => {
                match judge(compiled, arguments, None, look_for_undeclared) {
                    Judged::Checked {
                        errors,
                        undeclared,
                        mut keywords,
                    } => {
                        let settled = settle(
                            &self.config,
                            input_check,
                            tool,
                            errors,
                            undeclared,
                            &mut keywords,
                        );
                        return match settled {
                            Settled::Forward {
                                input,
                                mut messages,
                                logged,
                            } => {
                                for line in &logged {
                                    report(line);
                                }
                                messages.extend(notes);
                                call.forwarded(input, messages, keywords)
                            }
                            Settled::Refuse(errors) => {
                                let refusal = Refusal::ToolError(errors.join("\n"));
                                call.refused(Verdict::Rejected, refusal, Some(errors), keywords)
                            }
                        };
                    }
                    // Arguments given as a value hold no lone surrogate escape to look for.
                    Judged::Unchecked(reason) => reason,
                }
            }
            Lookup::Unusable { reason, .. } => reason.to_string(),
            Lookup::Unknown => {
                if forwards_unlisted(&self.config).is_some() {
                    let mut messages = vec![unlisted_forwarded(tool)];
                    messages.extend(notes);
                    return call.forwarded(InputVerdict::Unlisted, messages, Vec::new());
                }
                let reason = unknown_tool(tool, self.registry.names());
                return call.refused(Verdict::Denied, Refusal::Error(reason), None, Vec::new());
            }
        };
        if lets_unchecked_through(&self.config, input_check) {
            let mut messages = vec![reason];
            messages.extend(notes);
            return call.forwarded(InputVerdict::Unchecked, messages, Vec::new());
        }
        let refusal = Refusal::ToolError(format!("{UNLEARNED}: {reason}"));
        call.refused(Verdict::UncheckedRefused, refusal, None, Vec::new())
    }
}

/// A call being decided: what its record needs.
struct Call<'a> {
    id: RequestId,
    tool: &'a str,
    started: Instant,
    arguments: &'a Value,
    audit_arguments: bool,
}

impl Call<'_> {
    /// The record of the call, whatever became of it.
    fn record(
        self,
        verdict: Verdict,
        input_check: Option<InputVerdict>,
        messages: Vec<String>,
        keywords: Vec<String>,
    ) -> AuditRecord {
        AuditRecord {
            id: self.id,
            tool: self.tool.to_string(),
            verdict,
            input_check,
            messages,
            duration: self.started.elapsed(),
            is_error: None,
            output_check: None,
            error: None,
            error_code: None,
            keywords,
            arguments: self.audit_arguments.then(|| self.arguments.clone()),
            origin: None,
        }
    }

    /// Let through, its input check `input`, with `messages` (its warnings).
    fn forwarded(
        self,
        input: InputVerdict,
        messages: Vec<String>,
        keywords: Vec<String>,
    ) -> Admitted {
        Admitted {
            allowed: true,
            record: self.record(Verdict::Forwarded, Some(input), messages, keywords),
        }
    }

    /// Refused as `verdict`, answered with `refusal`; the record's messages are `messages`
    /// (by default, the refusal's text), as the gate's.
    fn refused(
        self,
        verdict: Verdict,
        refusal: Refusal,
        messages: Option<Vec<String>>,
        keywords: Vec<String>,
    ) -> Admitted {
        let (text, is_error, error_code) = match refusal {
            Refusal::ToolError(text) => (text, Some(true), None),
            Refusal::Error(text) => (text, None, Some(i64::from(ErrorCode::INVALID_PARAMS.0))),
        };
        let messages = messages.unwrap_or_else(|| vec![text]);
        let mut record = self.record(verdict, input_of(verdict), messages, keywords);
        record.is_error = is_error;
        record.error_code = error_code;
        Admitted {
            allowed: false,
            record,
        }
    }
}
