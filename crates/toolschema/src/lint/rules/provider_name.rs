//! COMPAT-001.

use crate::adapt::Topic;
use crate::lint::compat;
use crate::lint::context::{Report, ToolContext};
use crate::lint::registry::declare_rule;

declare_rule! {
    /// A tool or parameter name a target provider refuses.
    ///
    /// ## What it flags
    /// With `--target` (or `target` in `toolschema.toml`): a tool name that breaks a target
    /// provider's name rule (OpenAI: `^[a-zA-Z0-9_-]{1,64}$`; Anthropic: the same up to 128
    /// characters; Gemini: a letter or `_` first, then letters, digits, `_`, `.`, `:` or `-`, up
    /// to 128), and, for `gemini-openapi`, a root property name that is not a valid parameter name
    /// (`^[a-zA-Z_][a-zA-Z0-9_]{0,63}$`). The rules come from `toolschema::adapt`'s profiles.
    ///
    /// ## Why it matters
    /// The provider rejects the whole request. A client that renames the tool on its own calls it
    /// by a name the server does not know unless it keeps a map back.
    ///
    /// ## Example
    /// ```json
    /// {"name": "files.read", "inputSchema": {"type": "object", "properties": {"my-path": {"type": "string"}}}}
    /// ```
    ///
    /// ## Fix
    /// Rename the tool (`files_read`) or the parameter (`my_path`). There is no automatic fix:
    /// callers use the names. `toolschema adapt` sends a fixed name and maps calls back.
    pub static PROVIDER_NAME = {
        code: "COMPAT-001",
        name: "provider-name",
        severity: Warning,
        fixes: [],
        check: Tool(check),
    };
}

fn check(cx: &ToolContext<'_>, report: &mut Report<'_>) {
    compat::report_all(cx, report, compat::losses(cx, Topic::Name));
}
