//! COMPAT-006.

use crate::adapt::Topic;
use crate::lint::compat;
use crate::lint::context::{Report, ToolContext};
use crate::lint::registry::declare_rule;

declare_rule! {
    /// A keyword a target provider needs written another way, with the same meaning.
    ///
    /// ## What it flags
    /// With `--target`: what `toolschema adapt` rewrites without changing what the schema
    /// accepts: `const` as a one-value `enum`, a type list as `nullable` or `anyOf` (Gemini
    /// OpenAPI), a `$ref` written out in place or wrapped in an `anyOf` of one branch, draft-07
    /// keywords (`definitions`, list `items`, `dependencies`) in their 2020-12 form, `$schema`
    /// left out, a root without `"type": "object"`, an `allOf` merged, a `oneOf` of disjoint
    /// branches written `anyOf`. The same rewrite at the same place of several tools of a file
    /// (a draft-07 `$schema` on every tool) is said once, at the first of them.
    ///
    /// ## Why it matters
    /// Sent as written, the provider rejects or misreads these. Nothing is lost once rewritten,
    /// but a client that forwards the schema as it is fails.
    ///
    /// ## Example
    /// ```json
    /// {"name": "set", "inputSchema": {"type": "object", "properties": {"mode": {"const": "fast"}, "n": {"type": ["integer", "null"]}}}}
    /// ```
    ///
    /// ## Fix
    /// None needed when the tools go through `toolschema adapt`. Where a form every provider
    /// reads exists (`"enum": ["fast"]` for a `const`), prefer it. There is no automatic fix.
    pub static PROVIDER_REWRITES = {
        code: "COMPAT-006",
        name: "provider-rewrites",
        severity: Info,
        fixes: [],
        check: Tool(check),
    };
}

fn check(cx: &ToolContext<'_>, report: &mut Report<'_>) {
    compat::report_all(cx, report, compat::losses(cx, Topic::Rewrite));
}
