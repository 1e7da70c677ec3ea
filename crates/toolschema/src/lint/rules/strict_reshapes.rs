//! COMPAT-005.

use crate::adapt::Topic;
use crate::lint::compat;
use crate::lint::context::{Report, ToolContext};
use crate::lint::registry::declare_rule;

declare_rule! {
    /// An object OpenAI strict mode reshapes: closed, every property required.
    ///
    /// ## What it flags
    /// With `--target openai-strict`: an object schema without `"additionalProperties": false`,
    /// a schema with `properties` but no `type`, and optional properties (strict mode needs every
    /// property in `required`; an optional one is sent as `null`).
    ///
    /// ## Why it matters
    /// OpenAI refuses the tool in strict mode until it is reshaped. Reshaped, the model must send
    /// every property, with `null` for "not given", which the server's schema usually refuses:
    /// the call has to be mapped back (`toolschema adapt --restore`) before it reaches the server.
    ///
    /// ## Example
    /// ```json
    /// {"name": "read", "inputSchema": {"type": "object", "properties": {"path": {"type": "string"}, "tail": {"type": "integer"}}, "required": ["path"]}}
    /// ```
    ///
    /// ## Fix
    /// Close the objects (`"additionalProperties": false`: SCH-002's safe fix) where that is the
    /// contract. Optional properties stay optional: strict mode's `null` is a detail of the
    /// provider, and `toolschema adapt` maps it back.
    pub static STRICT_RESHAPES = {
        code: "COMPAT-005",
        name: "strict-reshapes",
        severity: Info,
        fixes: [],
        check: Tool(check),
    };
}

fn check(cx: &ToolContext<'_>, report: &mut Report<'_>) {
    compat::report_all(cx, report, compat::losses(cx, Topic::Strict));
}
