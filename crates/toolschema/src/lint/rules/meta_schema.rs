//! SCH-007.

use crate::lint::context::{Report, ToolContext};
use crate::lint::registry::declare_rule;
use crate::schema::patterns::non_ecma_patterns;
use crate::schema::Dialect;

declare_rule! {
    /// A schema breaks its dialect's meta-schema.
    ///
    /// ## What it flags
    /// An `inputSchema` or `outputSchema` that is not a valid schema of its dialect (draft-07 or
    /// draft 2020-12, from `$schema`): a misspelled type (`"type": "strng"`), a `required`
    /// that is not a list of names, a negative `maxLength`, `properties` that is not an object;
    /// and a `pattern` (or `patternProperties` key) that is not an ECMA-262 regular expression as
    /// JavaScript reads it with the `u` flag, the way Ajv compiles it (`(?i)^admin$`, `\pL`,
    /// `^a\z`, `a++`). Each finding points at the offending value.
    ///
    /// ## Why it matters
    /// Clients compile the schema before they validate against it. A schema that does not
    /// compile makes the tool fail on every call, or drops it from the list. A pattern in
    /// another regex dialect is refused by a JavaScript client, and where a reader of that
    /// dialect takes it, it means something else there (`(?i)` makes a pattern match any case):
    /// toolschema's validator and proxy refuse such a schema rather than guess.
    ///
    /// ## Example
    /// ```json
    /// {"type": "object", "properties": {"limit": {"type": "int", "minimum": -1}}}
    /// ```
    ///
    /// ## Fix
    /// Correct the value the finding points at. There is no automatic fix.
    pub static META_SCHEMA = {
        code: "SCH-007",
        name: "meta-schema",
        severity: Critical,
        fixes: [],
        check: Tool(check),
    };
}

fn check(cx: &ToolContext<'_>, report: &mut Report<'_>) {
    for doc in cx.standard_schemas() {
        let Ok(dialect) = doc.dialect else { continue };
        // The meta-schema validators are compiled once per process by the engine.
        let validator = match dialect {
            Dialect::Draft7 => jsonschema::draft7::meta::validator(),
            Dialect::Draft202012 => jsonschema::draft202012::meta::validator(),
        };
        for bad in non_ecma_patterns(doc.value) {
            let span = doc.span_of(cx.spans(), &bad.pointer).unwrap_or(doc.span);
            report.add(
                format!("{}{}", doc.pointer, bad.pointer),
                span,
                format!("{} breaks the {} meta-schema: {bad}", doc.field, dialect.name()),
            );
        }
        if validator.is_valid(doc.value) {
            continue;
        }
        let mut seen: Vec<String> = Vec::new();
        for error in validator.iter_errors(doc.value) {
            let local = error.instance_path().as_str().to_string();
            if seen.contains(&local) {
                continue;
            }
            let span = doc.span_of(cx.spans(), &local).unwrap_or(doc.span);
            let what = match error.instance() {
                // The meta-schema says `type` is anyOf(a simple type, a list of them): name them.
                value if local.ends_with("/type") || local == "/type" => format!(
                    "{value} is not a JSON Schema type (array, boolean, integer, null, number, \
                     object, string)"
                ),
                _ => error.to_string(),
            };
            report.add(
                format!("{}{local}", doc.pointer),
                span,
                format!(
                    "{} breaks the {} meta-schema: {what}",
                    doc.field,
                    dialect.name()
                ),
            );
            seen.push(local);
        }
    }
}
