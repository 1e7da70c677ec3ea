//! COMPAT-004.

use crate::adapt::Topic;
use crate::lint::compat;
use crate::lint::context::{Report, ToolContext};
use crate::lint::registry::declare_rule;

declare_rule! {
    /// A composition a target provider can only take in a wider form.
    ///
    /// ## What it flags
    /// With `--target`: a `oneOf` whose branches overlap, for a provider without `oneOf` (or, like
    /// Gemini, one that reads it as `anyOf`); a root `anyOf`/`oneOf` of object forms, which every
    /// provider refuses at the root; an `allOf` whose branches close themselves; a tuple
    /// (`prefixItems`) for a provider without tuples.
    ///
    /// ## Why it matters
    /// The schema the provider holds the model to accepts more than the tool's: a value matching
    /// two branches, properties of two forms mixed, items in any order. The server then has to
    /// refuse what the model was allowed to send.
    ///
    /// ## Example
    /// ```json
    /// {"name": "find", "inputSchema": {"anyOf": [
    ///   {"type": "object", "properties": {"id": {"type": "string"}}, "required": ["id"]},
    ///   {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}]}}
    /// ```
    ///
    /// ## Fix
    /// Prefer one object whose properties say which to send (`{"by": {"enum": ["id", "name"]},
    /// "value": ...}`), disjoint `oneOf` branches (different types), or `anyOf` where overlap is
    /// fine. There is no automatic fix.
    pub static PROVIDER_WIDENS = {
        code: "COMPAT-004",
        name: "provider-widens",
        severity: Warning,
        fixes: [],
        check: Tool(check),
    };
}

fn check(cx: &ToolContext<'_>, report: &mut Report<'_>) {
    compat::report_all(cx, report, compat::losses(cx, Topic::Widening));
}
