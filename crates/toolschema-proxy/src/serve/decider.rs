//! One catalog's decisions, made by the proxy's own gate.
//!
//! A call's arguments are decided by the gate's [`Admission`]: the catalog compiled once, and
//! decided through `&self`, so any number of calls are decided at once. A result is judged by
//! a [`Gate`] that learned the catalog as a server's listing (its input check off): the
//! decision feeds it the `tools/call` and the server's answer that it would see in the proxy,
//! and reads its verdict from the audit record it writes (one result at a time). So the
//! service decides exactly as the proxy does: the same policies, pins, `--unknown-arguments`,
//! `--unlisted` and messages, from one home.

use serde_json::{json, Value};
use std::sync::Mutex;
use std::time::Instant;
use toolschema::json::number::StatedNumbers;
use toolschema_gate::message::RequestId;
use toolschema_gate::{
    Action, Admission, AuditRecord, Gate, GateConfig, InputCheck, InputVerdict, OutputCheck,
    OutputVerdict, ToolPolicy, Verdict,
};

/// What the service decided of one call or one result.
#[derive(Debug, Clone, PartialEq)]
pub struct Decision {
    /// Whether the call may go on (or the result may reach the client).
    pub allowed: bool,
    /// Why it was refused, or what was found and let through (one message each).
    pub messages: Vec<String>,
    /// Set when the call went on unchecked because the operator chose to fail open
    /// (`--unlisted forward`, `--on-unchecked forward`, `--input-check warn`): says so.
    pub unchecked: Option<String>,
    /// Whether the catalog lists the tool.
    pub listed: bool,
    /// Whether the policy (`--allow`, `--deny`) refused the tool.
    pub denied: bool,
    /// The gate's record of the decision (for the audit log and the metrics).
    pub record: AuditRecord,
}

/// The decisions of one catalog (one server's tools).
pub struct Decider {
    /// The listing the gates learned, answered to every listing a gate asks for.
    listing: String,
    /// Decides calls.
    input: Admission,
    /// Judges results.
    output: Mutex<Gate>,
    next_id: std::sync::atomic::AtomicU64,
}

/// A failure of the gate itself (never of a call): the service answers it as an internal error
/// and never admits the call.
#[derive(Debug, thiserror::Error)]
#[error("the gate gave no verdict: {0}")]
pub struct NoVerdict(String);

impl NoVerdict {
    /// A failure said in words.
    pub fn from_text(text: String) -> NoVerdict {
        NoVerdict(text)
    }
}

impl Decider {
    /// A decider for `tools` (the `tools` of a `tools/list` result; `stated`, the numbers of
    /// the text they were read from that they hold otherwise, with pointers from the `tools`
    /// array), deciding as `config` says: numbers are compared as the text stated them.
    pub fn new(tools: &[Value], stated: &StatedNumbers, config: &GateConfig) -> Decider {
        // (A number no JSON text writes, an exponent past 2^60, is written as read.)
        let written = stated
            .write_items(tools)
            .unwrap_or_else(|| Value::from(tools).to_string());
        let listing = format!(r#"{{"tools":{written}}}"#);
        let mut output_config = config.clone();
        output_config.input_check = InputCheck::Off;
        output_config.audit = true;
        let decider = Decider {
            input: Admission::new(tools, stated, config.clone()),
            output: Mutex::new(Gate::new(output_config)),
            listing,
            next_id: std::sync::atomic::AtomicU64::new(1),
        };
        {
            let mut gate = lock(&decider.output);
            let mut out = Vec::new();
            // The gate lists the tools itself (as the proxy does before a call it cannot place):
            // from then on a name the catalog lacks is known to be unlisted.
            let line = br#"{"jsonrpc":"2.0","id":"toolschema-serve-list","method":"tools/list"}"#;
            gate.client_message(line.to_vec(), Instant::now(), &mut out);
            decider.pump(&mut gate, out);
            // Learned now: a gate with its input check off learns nothing on a call.
            gate.catalog_learned();
        }
        decider
    }

    /// How many tools the catalog holds.
    pub fn len(&self) -> usize {
        self.input.len()
    }

    /// Whether the catalog lists `tool`.
    pub fn knows(&self, tool: &str) -> bool {
        self.input.knows(tool)
    }

    /// Whether the catalog holds no tool.
    pub fn is_empty(&self) -> bool {
        self.input.is_empty()
    }

    /// The policy of every call (`--allow`, `--deny`), before any principal's.
    pub fn policy(&self) -> &ToolPolicy {
        &self.input.config().policy
    }

    /// Judge a call of `tool` with `arguments` (any JSON: the gate says what is wrong with it),
    /// under `policy` (`None`: [`Decider::policy`]).
    pub fn check_call(
        &self,
        tool: &str,
        arguments: &Value,
        policy: Option<&ToolPolicy>,
    ) -> Result<Decision, NoVerdict> {
        let id = RequestId::from_text(&self.next_id().to_string());
        let admitted = self.input.admit(id, tool, arguments, policy);
        let mut decision = decision(admitted.allowed, admitted.record, self.knows(tool));
        decision.denied = !decision.allowed
            && policy
                .unwrap_or(self.policy())
                .refusal(&decision.record.tool)
                .is_some();
        Ok(decision)
    }

    /// Judge `result` (a `tools/call` result) of a call of `tool`.
    pub fn check_result(&self, tool: &str, result: &Value) -> Result<Decision, NoVerdict> {
        self.judge_result(tool, result).map(|d| self.with_policy(d))
    }

    /// Note whether the policy refused the decision's tool.
    fn with_policy(&self, mut decision: Decision) -> Decision {
        decision.denied = !decision.allowed
            && self
                .input
                .config()
                .policy
                .refusal(&decision.record.tool)
                .is_some();
        decision
    }

    fn judge_result(&self, tool: &str, result: &Value) -> Result<Decision, NoVerdict> {
        let mut gate = lock(&self.output);
        let (forwarded, record) = self.exchange(&mut gate, tool, &json!({}), result)?;
        // Withheld: a result that breaks the schema, or one it cannot judge, under enforce. A
        // call refused before any result (a denied tool, a pin it breaks) is refused.
        let withheld = match record.output_check {
            Some(OutputVerdict::Enforced) => true,
            Some(OutputVerdict::Unchecked) => gate.config().output_check == OutputCheck::Enforce,
            _ => !forwarded,
        };
        Ok(decision(!withheld, record, gate.knows_tool(tool)))
    }

    /// Feed `gate` a call of `tool` with `arguments` and, if it forwards the call, the server's
    /// `result`: whether it forwarded the call, and the record it wrote.
    fn exchange(
        &self,
        gate: &mut Gate,
        tool: &str,
        arguments: &Value,
        result: &Value,
    ) -> Result<(bool, AuditRecord), NoVerdict> {
        let id = self.next_id();
        let call = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": tool, "arguments": arguments}});
        let mut out = Vec::new();
        gate.client_message(call.to_string().into_bytes(), Instant::now(), &mut out);
        let seen = self.pump(gate, out);
        if let Some(record) = seen.record {
            // Refused: the gate answered the call itself.
            return Ok((false, record));
        }
        if !seen.forwarded {
            return Err(NoVerdict(format!(
                "call of tool '{tool}' neither refused nor forwarded"
            )));
        }
        let answer = json!({"jsonrpc": "2.0", "id": id, "result": result});
        let mut out = Vec::new();
        gate.server_message(answer.to_string().into_bytes(), Instant::now(), &mut out);
        let seen = self.pump(gate, out);
        let record = seen
            .record
            .ok_or_else(|| NoVerdict(format!("call of tool '{tool}' was not recorded")))?;
        Ok((true, record))
    }

    fn next_id(&self) -> u64 {
        self.next_id
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed)
    }

    /// Carry out a gate's actions: answer every listing it asks for with the catalog, note a
    /// call it forwards and the record it writes.
    fn pump(&self, gate: &mut Gate, mut out: Vec<Action>) -> Seen {
        let mut seen = Seen::default();
        while !out.is_empty() {
            let mut more = Vec::new();
            for action in out.drain(..) {
                match action {
                    Action::ToServer(line) => {
                        let message: Value = serde_json::from_slice(&line).unwrap_or(Value::Null);
                        match message.get("method").and_then(Value::as_str) {
                            Some("tools/list") => {
                                let id = message.get("id").cloned().unwrap_or(Value::Null);
                                let answer = format!(
                                    r#"{{"jsonrpc":"2.0","id":{id},"result":{}}}"#,
                                    self.listing
                                );
                                gate.server_message(answer.into_bytes(), Instant::now(), &mut more);
                            }
                            Some("tools/call") => seen.forwarded = true,
                            _ => {}
                        }
                    }
                    // A tool that drifted from its pin is reported when the catalog is learned;
                    // the decision is the call's own record.
                    Action::Audit(record) if record.verdict == Verdict::PinDrift => {}
                    Action::Audit(record) => seen.record = Some(*record),
                    Action::ToClient(_) => {}
                }
            }
            out = more;
        }
        seen
    }
}

/// What a gate did with one message.
#[derive(Default)]
struct Seen {
    forwarded: bool,
    record: Option<AuditRecord>,
}

/// The decision a gate's record makes.
fn decision(allowed: bool, record: AuditRecord, listed: bool) -> Decision {
    let unchecked = (allowed
        && matches!(
            record.input_check,
            Some(InputVerdict::Unchecked | InputVerdict::Unlisted)
        ))
    .then(|| {
        format!(
            "tool '{}' was let through unchecked because the service is set to fail open: {}",
            record.tool,
            record.messages.join("; ")
        )
    });
    let mut messages = record.messages.clone();
    if !allowed && messages.is_empty() {
        messages.push(match record.verdict {
            Verdict::Denied => format!("tool '{}' is not allowed", record.tool),
            _ => format!("the call of tool '{}' was refused", record.tool),
        });
    }
    Decision {
        allowed,
        messages,
        unchecked,
        listed,
        denied: false,
        record,
    }
}

/// Lock a gate; a panic while it was held left it as it was between two messages, which is a
/// state it can go on from.
fn lock(gate: &Mutex<Gate>) -> std::sync::MutexGuard<'_, Gate> {
    gate.lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}
