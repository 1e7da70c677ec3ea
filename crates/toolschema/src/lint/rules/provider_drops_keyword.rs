//! COMPAT-003.

use crate::adapt::Topic;
use crate::lint::compat;
use crate::lint::context::{Report, ToolContext};
use crate::lint::registry::declare_rule;

declare_rule! {
    /// A keyword a target provider does not read.
    ///
    /// ## What it flags
    /// With `--target`: a keyword outside the target provider's documented vocabulary (Gemini's
    /// `minLength` or `pattern`, OpenAI strict mode's `default` or `format: uri`, Gemini
    /// OpenAPI's `additionalProperties`, ...), a `required` name Gemini refuses because
    /// `properties` does not declare it, an `enum` of values the provider does not take. The
    /// message says what `toolschema adapt` does instead: move it into the description in plain
    /// words, or drop it.
    ///
    /// ## Why it matters
    /// The provider rejects the schema or ignores the keyword without a word; either way the
    /// model is not held to the constraint, and the server sees arguments the schema meant to
    /// refuse.
    ///
    /// ## Example
    /// ```json
    /// {"name": "search", "inputSchema": {"type": "object", "properties": {"q": {"type": "string", "maxLength": 64}}}}
    /// ```
    /// With `--target gemini`: `maxLength` becomes "At most 64 characters." in the description.
    ///
    /// ## Fix
    /// Keep the constraint in words in the description too, and validate arguments on the server
    /// (or behind `toolschema proxy`). There is no automatic fix: the keyword is right for other
    /// clients.
    pub static PROVIDER_DROPS_KEYWORD = {
        code: "COMPAT-003",
        name: "provider-drops-keyword",
        severity: Warning,
        fixes: [],
        check: Tool(check),
    };
}

fn check(cx: &ToolContext<'_>, report: &mut Report<'_>) {
    compat::report_all(cx, report, compat::losses(cx, Topic::Unsupported));
}
