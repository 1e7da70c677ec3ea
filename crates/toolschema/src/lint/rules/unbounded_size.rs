//! SCH-004.

use crate::json::Members;
use crate::lint::context::{Report, SchemaDoc, ToolContext};
use crate::lint::registry::declare_rule;
use crate::lint::rules::untyped_property::declared_elsewhere_in_allof;
use crate::schema::admits_type;
use serde_json::{Map, Value};

declare_rule! {
    /// A property admits strings of any length, or arrays of any size.
    ///
    /// ## What it flags
    /// A property (a member of `properties`, at any depth of `inputSchema`) whose type admits
    /// strings (`"type": "string"`, or a type list such as `["string", "null"]`) with nothing that
    /// bounds their length; or whose type admits arrays with nothing that bounds their size.
    /// A `$ref` is followed, and `anyOf`/`oneOf` branches are read when the property has no
    /// `type` of its own.
    ///
    /// These bound a string: `maxLength`, `enum`, `const`, a `pattern` anchored at both ends
    /// whose matches have a longest length (`^[a-z]{1,10}$`), a `format` whose grammar has a
    /// longest form (`date`, `uuid`, `ipv4`, `ipv6`, `hostname`), or `anyOf`/`oneOf` branches
    /// that each bound it. These bound an array: `maxItems`, `uniqueItems` over items with a
    /// finite set of values (an `enum`, a `const`, `boolean`), and `prefixItems` with `"items":
    /// false`.
    ///
    /// A pedantic rule: it runs when selected (`--select pedantic`, `ALL`, or by code or name).
    /// Real servers leave most strings unbounded on purpose (paths, queries, file contents),
    /// and the server, not the schema, is where a size limit usually lives.
    ///
    /// ## Why it matters
    /// Unbounded input reaches the server: a model that loops, or a prompt injection, can send a
    /// megabyte where a name was expected.
    ///
    /// ## On real servers
    /// 75 findings on the six real servers measured: 69 right (names, paths, identifiers,
    /// timezones, revisions, URLs, lists of them), 6 wrong (file contents, text edits, commit and
    /// echo messages, a data URI).
    ///
    /// ## Example
    /// ```json
    /// {"type": "object", "properties": {"query": {"type": ["string", "null"]}}}
    /// ```
    ///
    /// ## Fix
    /// Add the bound the server can handle: `"maxLength": 200`, `"maxItems": 50`. There is no
    /// automatic fix: only the author knows the limit.
    pub static UNBOUNDED_SIZE = {
        code: "SCH-004",
        name: "unbounded-size",
        severity: Warning,
        fixes: [],
        check: Tool(check),
        set: Pedantic,
    };
}

/// Formats whose grammar gives every valid string a longest length.
const BOUNDED_FORMATS: &[&str] = &["date", "uuid", "ipv4", "ipv6", "hostname"];

/// How deep `anyOf`/`oneOf`/`$ref` are followed.
const MAX_DEPTH: usize = 8;

/// What a schema admits without a bound.
#[derive(Default)]
struct Unbounded {
    strings: bool,
    arrays: bool,
}

fn unbounded(doc: &SchemaDoc<'_>, schema: &Value, depth: usize) -> Unbounded {
    let mut found = Unbounded::default();
    let Some(schema) = doc.follow_refs(schema) else {
        return found;
    };
    let Some(map) = schema.as_object() else {
        return found;
    };
    if map.member("enum").is_some() || map.member("const").is_some() {
        return found;
    }
    if map.member("type").is_some() {
        found.strings =
            admits_type(map, "string") == Some(true) && !bounds_strings(doc, map, depth);
        found.arrays = admits_type(map, "array") == Some(true) && !bounds_arrays(doc, map);
        return found;
    }
    if depth < MAX_DEPTH {
        for branch in branches(map) {
            let inner = unbounded(doc, branch, depth + 1);
            found.strings |= inner.strings;
            found.arrays |= inner.arrays;
        }
    }
    found
}

/// The branches of a schema's `anyOf` and `oneOf`.
fn branches(map: &Map<String, Value>) -> impl Iterator<Item = &Value> {
    ["anyOf", "oneOf"]
        .into_iter()
        .filter_map(|key| map.member(key)?.as_array())
        .flatten()
}

/// Whether a schema that admits strings bounds their length.
fn bounds_strings(doc: &SchemaDoc<'_>, map: &Map<String, Value>, depth: usize) -> bool {
    if ["maxLength", "enum", "const"]
        .iter()
        .any(|k| map.member(k).is_some())
    {
        return true;
    }
    let format = map.member("format").and_then(Value::as_str);
    if format.is_some_and(|f| BOUNDED_FORMATS.contains(&f)) {
        return true;
    }
    let pattern = map.member("pattern").and_then(Value::as_str);
    if pattern.is_some_and(|p| longest_match(p).is_some()) {
        return true;
    }
    // Every branch bounds the strings it admits (or admits none).
    let mut any = false;
    let all = depth < MAX_DEPTH
        && branches(map).all(|branch| {
            any = true;
            doc.follow_refs(branch)
                .and_then(Value::as_object)
                .is_some_and(|b| {
                    admits_type(b, "string") == Some(false) || bounds_strings(doc, b, depth + 1)
                })
        });
    any && all
}

/// The longest string a `pattern` matches, in bytes, when it is anchored at both ends (`^...$`)
/// and its matches have a longest length. `None` when the pattern does not bound the length,
/// or is not one the parser reads (then it bounds nothing as far as the rule can tell).
pub(crate) fn longest_match(pattern: &str) -> Option<usize> {
    use regex_syntax::hir::Look;
    let hir = regex_syntax::ParserBuilder::new()
        .build()
        .parse(pattern)
        .ok()?;
    let properties = hir.properties();
    let anchored = properties.look_set_prefix().contains(Look::Start)
        && properties.look_set_suffix().contains(Look::End);
    if !anchored {
        return None;
    }
    properties.maximum_len()
}

/// Whether a schema that admits arrays bounds their size.
fn bounds_arrays(doc: &SchemaDoc<'_>, map: &Map<String, Value>) -> bool {
    if map.member("maxItems").is_some() {
        return true;
    }
    let unique = map.member("uniqueItems") == Some(&Value::Bool(true));
    let items = map.member("items");
    if unique && items.is_some_and(|items| finitely_many_values(doc, items)) {
        return true;
    }
    // A tuple with nothing after it: `prefixItems` and `items: false` (2020-12), or an `items`
    // array and `additionalItems: false` (draft-07).
    let closed_tuple = (map.member("prefixItems").is_some_and(Value::is_array)
        && items == Some(&Value::Bool(false)))
        || (items.is_some_and(Value::is_array)
            && map.member("additionalItems") == Some(&Value::Bool(false)));
    closed_tuple
}

/// Whether a schema admits only finitely many values: an `enum`, a `const`, `boolean` or
/// `null`.
fn finitely_many_values(doc: &SchemaDoc<'_>, schema: &Value) -> bool {
    let Some(map) = doc.follow_refs(schema).and_then(Value::as_object) else {
        return false;
    };
    if map.member("enum").is_some_and(Value::is_array) || map.member("const").is_some() {
        return true;
    }
    match map.member("type") {
        Some(Value::String(t)) => t == "boolean" || t == "null",
        Some(Value::Array(types)) => types
            .iter()
            .all(|t| matches!(t.as_str(), Some("boolean" | "null"))),
        _ => false,
    }
}

fn check(cx: &ToolContext<'_>, report: &mut Report<'_>) {
    let Some(doc) = cx.standard_input() else {
        return;
    };
    for (node, name) in doc.properties() {
        if !doc.tightenable(node) || declared_elsewhere_in_allof(doc, node, name) {
            continue;
        }
        let found = unbounded(doc, node.value, 0);
        if found.strings {
            report.add(
                doc.pointer_of(node),
                node.span,
                [
                    "property '",
                    name,
                    "' admits strings of any length: add maxLength (or an enum, or a pattern \
                     that bounds it)",
                ]
                .concat(),
            );
        }
        if found.arrays {
            report.add(
                doc.pointer_of(node),
                node.span,
                [
                    "property '",
                    name,
                    "' admits arrays of any size: add maxItems",
                ]
                .concat(),
            );
        }
    }
}
