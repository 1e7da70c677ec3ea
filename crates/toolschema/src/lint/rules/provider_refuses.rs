//! COMPAT-002.

use crate::lint::compat;
use crate::lint::context::{Report, ToolContext};
use crate::lint::registry::declare_rule;

declare_rule! {
    /// A tool a target provider refuses, with no sound rewrite.
    ///
    /// ## What it flags
    /// With `--target`: a tool that `toolschema adapt` cannot write for a target provider, with
    /// the reason. For example an array without `items` or an object that takes any keys under
    /// OpenAI strict mode (only the author knows the element type), a `$ref` cycle for Gemini's
    /// OpenAPI `parameters` (no recursion there), a root that is not an object, a root union
    /// whose forms cannot be merged into one object, a schema over OpenAI's size limits.
    ///
    /// ## Why it matters
    /// The provider rejects the request that carries the tool, and every other tool of that
    /// request with it. A converter that rewrites it anyway changes what the tool accepts.
    ///
    /// ## Example
    /// ```json
    /// {"name": "tag", "inputSchema": {"type": "object", "properties": {"tags": {"type": "array"}}}}
    /// ```
    /// With `--target openai-strict`: the array does not say what its elements are.
    ///
    /// ## Fix
    /// Change the schema as the message says (here: `"items": {"type": "string"}`). There is no
    /// automatic fix.
    pub static PROVIDER_REFUSES = {
        code: "COMPAT-002",
        name: "provider-refuses",
        severity: Critical,
        fixes: [],
        check: Tool(check),
    };
}

fn check(cx: &ToolContext<'_>, report: &mut Report<'_>) {
    compat::report_all(cx, report, compat::refusals(cx));
}
