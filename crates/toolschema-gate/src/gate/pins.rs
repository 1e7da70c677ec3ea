//! Pins: the gate checks each listed tool against its pin in `toolschema.lock`.
//!
//! A tool whose definition changed since it was pinned (a new sentence in its description, an
//! annotation flipped, a schema widened), or that is not pinned at all, is reported once per
//! listing, on stderr and in the audit log. With `--pin-mode enforce` (the default with `--pin`)
//! it is also left out of `tools/list`, and its calls are refused with a tool error that says
//! the definition changed; `warn` only reports. A definition holding a value that reading
//! changes (a lone surrogate escape read as U+FFFD, a number read as another) matches no pin:
//! what was read of it cannot be told from other definitions read alike.

use super::{report, Action, Gate};
use crate::audit::{AuditRecord, Verdict};
use crate::message::RequestId;
use serde_json::Value;
use std::sync::Arc;
use std::time::Duration;
use toolschema::diff::{PinStatus, PinnedServer};
use toolschema::json::Loss;

/// What the proxy does with a tool that does not match its pin.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum PinMode {
    /// Report it; list it and pass its calls on.
    Warn,
    /// Report it, leave it out of `tools/list` and refuse its calls.
    #[default]
    Enforce,
}

/// The pins of the server behind the proxy.
#[derive(Debug, Clone)]
pub struct Pins {
    /// The server's pinned tools.
    pub server: Arc<PinnedServer>,
    /// Enforce or warn.
    pub mode: PinMode,
    /// The lock file, as messages name it.
    pub file: String,
}

impl Pins {
    /// Why `tool` (as listed) does not match its pin, or `None` when it does; `lossy`, the
    /// first value of its definition that reading changed, if any: such a definition cannot be
    /// told from others read alike, so it matches no pin.
    pub(super) fn mismatch(&self, tool: &Value, lossy: Option<&Loss>) -> Option<String> {
        if let Some(loss) = lossy {
            return Some(format!(
                "its definition cannot be checked against {}: {loss}, and a pin cannot tell it from a definition read alike",
                self.file
            ));
        }
        match self.server.check(tool) {
            PinStatus::Pinned => None,
            PinStatus::NotInLock => Some(format!("it is not pinned in {}", self.file)),
            PinStatus::Drifted(changes) => {
                let what: Vec<String> = changes
                    .iter()
                    .map(|change| format!("{}: {}", change.class.as_str(), change.message))
                    .collect();
                Some(format!(
                    "its definition changed since it was pinned in {} ({})",
                    self.file,
                    what.join("; ")
                ))
            }
        }
    }
}

impl Gate {
    /// Check the tools of a listing page against their pins: remember which do not match,
    /// report each of those once (this listing), and say which names to leave out.
    pub(super) fn check_pins(
        &mut self,
        tools: &[Value],
        lossy: &[(usize, Loss)],
        listing: Option<&RequestId>,
        out: &mut Vec<Action>,
    ) -> Vec<String> {
        let Some(pins) = self.config.pins.clone() else {
            return Vec::new();
        };
        let mut left_out = Vec::new();
        for (at, tool) in tools.iter().enumerate() {
            let Some(name) = tool.get("name").and_then(Value::as_str) else {
                continue;
            };
            let loss = lossy
                .iter()
                .find(|(place, _)| *place == at)
                .map(|(_, loss)| loss);
            let Some(why) = pins.mismatch(tool, loss) else {
                self.pin_mismatches.remove(name);
                continue;
            };
            let consequence = match pins.mode {
                PinMode::Enforce => {
                    "left out of tools/list and its calls refused (--pin-mode enforce)"
                }
                PinMode::Warn => "listed and passed on (--pin-mode warn)",
            };
            report(&format!("tool '{name}': {why}; {consequence}"));
            if let Some(id) = listing {
                let record = AuditRecord {
                    id: id.clone(),
                    tool: name.to_string(),
                    verdict: Verdict::PinDrift,
                    input_check: None,
                    messages: vec![why.clone()],
                    duration: Duration::ZERO,
                    is_error: None,
                    output_check: None,
                    error: None,
                    error_code: None,
                    keywords: Vec::new(),
                    arguments: None,
                    origin: None,
                };
                self.audit(record, out);
            }
            if pins.mode == PinMode::Enforce {
                left_out.push(name.to_string());
            }
            self.pin_mismatches.insert(name.to_string(), why);
        }
        left_out
    }

    /// Why a call to `tool` is refused or reported for its pin: `None` when it matches (or no
    /// pins are configured); the reason, and whether the call is refused.
    pub(super) fn pin_verdict(&self, tool: &str) -> Option<(String, bool)> {
        pin_verdict(
            self.config.pins.as_ref(),
            &self.pin_mismatches,
            self.registry.knows(tool),
            tool,
        )
    }
}

/// Why a call to `tool` is refused or reported for its pin, given the `pins`, the listed tools
/// that do not match theirs (`mismatches`: name, why) and whether `tool` is `listed`: `None`
/// when it matches (or no pins are configured); the reason, and whether the call is refused.
pub(super) fn pin_verdict(
    pins: Option<&Pins>,
    mismatches: &std::collections::HashMap<String, String>,
    listed: bool,
    tool: &str,
) -> Option<(String, bool)> {
    let pins = pins?;
    let why = match mismatches.get(tool) {
        Some(why) => why.clone(),
        None if listed => return None,
        None => format!("it is not pinned in {}", pins.file),
    };
    Some((
        format!("tool '{tool}' was refused: {why}"),
        pins.mode == PinMode::Enforce,
    ))
}
