//! Semantic diff of two catalogs, and pins of the definitions a model reads.
//!
//! [`diff_tools`] compares two lists of tools by meaning: tools are matched by name (a removed
//! tool and an added one with the same schemas are a rename), schemas are compared after
//! lightweight shapes are translated to standard JSON Schema and local `$ref`s are inlined, key
//! order never matters and numbers compare by value. Each [`Change`] has a stable [`ChangeCode`],
//! a JSON Pointer into the tool, the values before and after, and a [`ChangeClass`]:
//!
//! - **breaking**: callers that worked may now fail (for `outputSchema`, the reverse direction:
//!   a client that relied on what the server promised may now fail);
//! - **security**: what the model or the user is told changed (descriptions, titles,
//!   annotations, `_meta`, other fields, a new tool), or arrived with something new (the text of
//!   an added argument, branch or output field, a new `enum` value holding text, a new member
//!   name, a new or changed `pattern` or `format`);
//! - **compatible**: everything that worked still works.
//!
//! ```
//! use serde_json::json;
//! use toolschema::diff::{diff_tools, ChangeClass, ChangeCode};
//!
//! let old = json!({"name": "search", "inputSchema": {"type": "object",
//!     "properties": {"q": {"type": "string", "maxLength": 64}}}});
//! let new = json!({"name": "search", "inputSchema": {"type": "object",
//!     "properties": {"q": {"type": "string", "maxLength": 32}}}});
//! let diff = diff_tools([old.as_object().unwrap()], [new.as_object().unwrap()]);
//! let change = &diff.changes[0];
//! assert_eq!(change.code, ChangeCode::BoundTightened);
//! assert_eq!(change.class, ChangeClass::Breaking);
//! assert_eq!(change.pointer, "/inputSchema/properties/q/maxLength");
//! assert_eq!(change.message, "maxLength of argument 'q' tightened from 64 to 32");
//! ```
//!
//! The model reads a schema as written, so what the comparison by meaning does not see is
//! reported too: new text only the written form holds (a definition's name, a `$ref`, a
//! lightweight shape's root `type`) as `schema-text-changed`, and any other difference of writing
//! as `schema-rewritten`.
//!
//! [`lock`] holds pins: a SHA-256 of each tool's canonical JSON (RFC 8785) as listed, so a pin
//! drifts exactly when the diff finds a change.

mod location;
pub mod lock;
mod new_text;
mod prepare;
mod retarget;
mod schema;
mod tool;
mod words;
mod written;

pub use lock::{
    command_key, pin_hash, url_key, Lock, LockError, PinStatus, PinnedServer, PinnedTool,
};

use serde_json::{Map, Value};
use std::collections::{HashMap, VecDeque};
use std::fmt;

/// How a change affects the people and programs that rely on a tool.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ChangeClass {
    /// Callers (or, for `outputSchema`, consumers of results) that worked may now fail.
    Breaking,
    /// What the model or the user is told changed: review it before trusting the new version.
    Security,
    /// Everything that worked still works.
    Compatible,
}

impl ChangeClass {
    /// `breaking`, `security` or `compatible`.
    pub fn as_str(self) -> &'static str {
        match self {
            ChangeClass::Breaking => "breaking",
            ChangeClass::Security => "security",
            ChangeClass::Compatible => "compatible",
        }
    }
}

impl fmt::Display for ChangeClass {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

macro_rules! change_codes {
    ($($(#[doc = $doc:literal])* $variant:ident = $code:literal,)*) => {
        /// What changed, as a stable code (`tool-removed`, `required-added`, ...).
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub enum ChangeCode {
            $($(#[doc = $doc])* $variant,)*
        }

        impl ChangeCode {
            /// Every code, in the order they are documented.
            pub const ALL: &'static [ChangeCode] = &[$(ChangeCode::$variant,)*];

            /// The stable code, like `required-added`.
            pub fn as_str(self) -> &'static str {
                match self {
                    $(ChangeCode::$variant => $code,)*
                }
            }

            /// One line saying what the code means.
            pub fn summary(self) -> &'static str {
                match self {
                    $(ChangeCode::$variant => concat!($($doc),*).trim_start(),)*
                }
            }
        }
    };
}

change_codes! {
    /// A tool of the old catalog is gone (breaking).
    ToolRemoved = "tool-removed",
    /// A tool is gone and a new one has the same schemas under another name (breaking).
    ToolRenamed = "tool-renamed",
    /// A tool the old catalog did not have (security: a new capability to review).
    ToolAdded = "tool-added",
    /// The tool's description changed (security), shown as a word diff.
    DescriptionChanged = "description-changed",
    /// The tool's title (or `annotations.title`) changed (security).
    TitleChanged = "title-changed",
    /// A hint changed toward less safety: `readOnlyHint` true to false, `destructiveHint` false to true, `openWorldHint` false to true (security).
    AnnotationLessSafe = "annotation-less-safe",
    /// Any other change of `annotations` (security).
    AnnotationChanged = "annotation-changed",
    /// `_meta` changed (security).
    MetaChanged = "meta-changed",
    /// `execution.taskSupport` changed (breaking when it becomes `required`, else security).
    TaskSupportChanged = "task-support-changed",
    /// Any other field of the tool changed: icons, execution, namespace, version, tags, unknown fields (security).
    FieldChanged = "field-changed",
    /// An argument (or output field) became required.
    RequiredAdded = "required-added",
    /// An argument (or output field) is no longer required.
    RequiredRemoved = "required-removed",
    /// A new optional argument (or output field) is declared.
    PropertyAdded = "property-added",
    /// A declared argument (or output field) is gone.
    PropertyRemoved = "property-removed",
    /// The accepted types became fewer (`number` to `integer`, a type removed from a list).
    TypeNarrowed = "type-narrowed",
    /// The accepted types became more.
    TypeWidened = "type-widened",
    /// The accepted types changed to others.
    TypeChanged = "type-changed",
    /// An `enum` value is no longer accepted (or an `enum` appeared).
    EnumValueRemoved = "enum-value-removed",
    /// An `enum` value is newly accepted (or the `enum` is gone); security when it holds text the model reads.
    EnumValueAdded = "enum-value-added",
    /// A bound tightened or appeared (`maxLength` 64 to 32, `minimum` raised).
    BoundTightened = "bound-tightened",
    /// A bound loosened or disappeared.
    BoundLoosened = "bound-loosened",
    /// A `pattern` appeared.
    PatternAdded = "pattern-added",
    /// The `pattern` changed.
    PatternChanged = "pattern-changed",
    /// The `pattern` is gone.
    PatternRemoved = "pattern-removed",
    /// A `format` appeared.
    FormatAdded = "format-added",
    /// The `format` changed.
    FormatChanged = "format-changed",
    /// The `format` is gone.
    FormatRemoved = "format-removed",
    /// An object no longer accepts undeclared members (`additionalProperties: false`).
    ObjectClosed = "object-closed",
    /// An object now accepts undeclared members.
    ObjectOpened = "object-opened",
    /// An `anyOf`/`oneOf` branch appeared or an `allOf` branch disappeared: more is accepted.
    BranchAdded = "branch-added",
    /// An `anyOf`/`oneOf` branch disappeared or an `allOf` branch appeared: less is accepted.
    BranchRemoved = "branch-removed",
    /// Another validation keyword appeared (`not`, `const`, `multipleOf`, `uniqueItems`, ...): less is accepted.
    ConstraintAdded = "constraint-added",
    /// Another validation keyword disappeared: more is accepted.
    ConstraintRemoved = "constraint-removed",
    /// Another validation keyword changed in a way that is not simply tighter or looser.
    ConstraintChanged = "constraint-changed",
    /// A keyword written differently that accepts the same values: an enum or `required` reordered, an equivalent type list, `true` for `{}` (compatible).
    SchemaRewritten = "schema-rewritten",
    /// `$schema` changed: the same keywords may mean something else.
    DialectChanged = "dialect-changed",
    /// A `description` or `title` inside a schema changed, or arrived with a new subschema (security), shown as a word diff.
    SchemaDescriptionChanged = "schema-description-changed",
    /// Another annotation inside a schema changed, or arrived with a new subschema: `default`, `examples`, `deprecated`, unknown keywords (security).
    SchemaAnnotationChanged = "schema-annotation-changed",
    /// Text the model reads in a keyword that also validates changed or arrived: a member's name (`properties`, `patternProperties`, `required`, `dependentRequired` ...), a `pattern`, a `format` (security), shown as a word diff.
    SchemaTextChanged = "schema-text-changed",
    /// The tool now declares an `outputSchema` (compatible: results are promised a shape).
    OutputSchemaAdded = "output-schema-added",
    /// The tool no longer declares an `outputSchema` (breaking: nothing is promised any more).
    OutputSchemaRemoved = "output-schema-removed",
}

impl fmt::Display for ChangeCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One difference between an old and a new tool definition.
#[derive(Debug, Clone, PartialEq)]
pub struct Change {
    /// The tool's name (the old name for a rename).
    pub tool: String,
    /// Who it affects.
    pub class: ChangeClass,
    /// What changed.
    pub code: ChangeCode,
    /// JSON Pointer into the tool (schemas as compared: lightweight shapes translated, local
    /// `$ref`s inlined; for text only the written schema holds, into the schema as written);
    /// empty for the whole tool.
    pub pointer: String,
    /// What changed, for a person: `maxLength of argument 'q' tightened from 64 to 32`.
    pub message: String,
    /// The old value at the pointer, if there was one.
    pub before: Option<Value>,
    /// The new value at the pointer, if there is one.
    pub after: Option<Value>,
}

impl Change {
    /// A change of `tool`'s value at `pointer` from `before` to `after`.
    pub(crate) fn new(
        tool: &str,
        class: ChangeClass,
        code: ChangeCode,
        pointer: &str,
        message: String,
        before: Option<&Value>,
        after: Option<&Value>,
    ) -> Change {
        Change {
            tool: tool.to_string(),
            class,
            code,
            pointer: pointer.to_string(),
            message,
            before: before.cloned(),
            after: after.cloned(),
        }
    }

    /// The change as JSON: `{"tool", "class", "code", "pointer", "message", "before", "after"}`.
    pub fn to_value(&self) -> Value {
        let mut map = Map::new();
        map.insert("tool".into(), Value::String(self.tool.clone()));
        map.insert("class".into(), Value::String(self.class.as_str().into()));
        map.insert("code".into(), Value::String(self.code.as_str().into()));
        map.insert("pointer".into(), Value::String(self.pointer.clone()));
        map.insert("message".into(), Value::String(self.message.clone()));
        map.insert("before".into(), self.before.clone().unwrap_or(Value::Null));
        map.insert("after".into(), self.after.clone().unwrap_or(Value::Null));
        Value::Object(map)
    }
}

/// Every change between two catalogs, old tools first in their order, then new tools.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Diff {
    /// The changes.
    pub changes: Vec<Change>,
    /// How many tools the old catalog has.
    pub old_tools: usize,
    /// How many tools the new catalog has.
    pub new_tools: usize,
}

impl Diff {
    /// Whether nothing changed.
    pub fn is_empty(&self) -> bool {
        self.changes.is_empty()
    }

    /// How many changes are of `class`.
    pub fn count(&self, class: ChangeClass) -> usize {
        self.changes.iter().filter(|c| c.class == class).count()
    }

    /// The counts as JSON: `{"breaking", "security", "compatible", "old_tools", "new_tools"}`.
    pub fn summary(&self) -> Value {
        let mut map = Map::new();
        for class in [
            ChangeClass::Breaking,
            ChangeClass::Security,
            ChangeClass::Compatible,
        ] {
            map.insert(class.as_str().into(), Value::from(self.count(class)));
        }
        map.insert("old_tools".into(), Value::from(self.old_tools));
        map.insert("new_tools".into(), Value::from(self.new_tools));
        Value::Object(map)
    }

    /// The whole diff as JSON: `{"changes": [...], "summary": {...}}`.
    pub fn to_value(&self) -> Value {
        let mut map = Map::new();
        let changes = self.changes.iter().map(Change::to_value).collect();
        map.insert("changes".into(), Value::Array(changes));
        map.insert("summary".into(), self.summary());
        Value::Object(map)
    }
}

/// Compare two catalogs' tools (each a tool object's fields, as [`crate::Tool::fields`] gives
/// them). Tools are matched by name; among the unmatched, an old tool and a new tool whose
/// prepared `inputSchema` and `outputSchema` are equal are a rename (first match in order).
/// Tools without a string `name` are matched under the empty name.
pub fn diff_tools<'a>(
    old: impl IntoIterator<Item = &'a Map<String, Value>>,
    new: impl IntoIterator<Item = &'a Map<String, Value>>,
) -> Diff {
    let old_written: Vec<&Map<String, Value>> = old.into_iter().collect();
    let new_written: Vec<&Map<String, Value>> = new.into_iter().collect();
    let old: Vec<Map<String, Value>> = old_written
        .iter()
        .map(|t| prepare::prepare_tool(t))
        .collect();
    let new: Vec<Map<String, Value>> = new_written
        .iter()
        .map(|t| prepare::prepare_tool(t))
        .collect();
    let name = |tool: &Map<String, Value>| {
        tool.get("name")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string()
    };
    let mut changes = Vec::new();
    let mut new_matched = vec![false; new.len()];
    let mut removed = Vec::new();
    // Each name's tools in the new catalog, in order (a catalog file has one per name; a raw
    // listing may repeat one).
    let mut by_name: HashMap<String, VecDeque<usize>> = HashMap::new();
    for (i, tool) in new.iter().enumerate() {
        by_name.entry(name(tool)).or_default().push_back(i);
    }
    for (old_index, old_tool) in old.iter().enumerate() {
        let old_name = name(old_tool);
        match by_name.get_mut(&old_name).and_then(VecDeque::pop_front) {
            Some(i) => {
                new_matched[i] = true;
                let written = [old_written[old_index], new_written[i]];
                tool::compare(&old_name, old_tool, &new[i], written, &mut changes);
            }
            None => removed.push(old_index),
        }
    }
    // Renames: a removed tool whose schemas an added tool has, found by the canonical JSON of
    // both schemas (equal exactly when the schemas compare equal).
    let schemas_key = |tool: &Map<String, Value>| {
        let schemas = [tool.get("inputSchema"), tool.get("outputSchema")];
        serde_json_canonicalizer::to_string(&schemas).ok()
    };
    let mut added_by_schemas: HashMap<String, VecDeque<usize>> = HashMap::new();
    for (i, tool) in new.iter().enumerate() {
        if let (false, Some(key)) = (new_matched[i], schemas_key(tool)) {
            added_by_schemas.entry(key).or_default().push_back(i);
        }
    }
    let mut renamed = Vec::new();
    for &old_index in &removed {
        let found = schemas_key(&old[old_index])
            .and_then(|key| added_by_schemas.get_mut(&key))
            .and_then(VecDeque::pop_front);
        if let Some(i) = found {
            new_matched[i] = true;
            renamed.push((old_index, i));
        }
    }
    for &old_index in &removed {
        let old_tool = &old[old_index];
        let old_name = name(old_tool);
        match renamed.iter().find(|(o, _)| *o == old_index) {
            Some(&(_, new_index)) => {
                changes.push(rename_change(&old_name, &name(&new[new_index])));
                let written = [old_written[old_index], new_written[new_index]];
                tool::compare(&old_name, old_tool, &new[new_index], written, &mut changes);
            }
            None => changes.push(Change {
                tool: old_name.clone(),
                class: ChangeClass::Breaking,
                code: ChangeCode::ToolRemoved,
                pointer: String::new(),
                message: format!("tool '{old_name}' removed"),
                before: Some(Value::Object(old_tool.clone())),
                after: None,
            }),
        }
    }
    for (i, new_tool) in new.iter().enumerate() {
        if new_matched[i] {
            continue;
        }
        let new_name = name(new_tool);
        changes.push(Change {
            tool: new_name.clone(),
            class: ChangeClass::Security,
            code: ChangeCode::ToolAdded,
            pointer: String::new(),
            message: format!("new tool '{new_name}'"),
            before: None,
            after: Some(Value::Object(new_tool.clone())),
        });
    }
    Diff {
        changes,
        old_tools: old.len(),
        new_tools: new.len(),
    }
}

fn rename_change(old_name: &str, new_name: &str) -> Change {
    Change::new(
        old_name,
        ChangeClass::Breaking,
        ChangeCode::ToolRenamed,
        "/name",
        format!("tool '{old_name}' renamed to '{new_name}': calls to '{old_name}' now fail"),
        Some(&Value::String(old_name.to_string())),
        Some(&Value::String(new_name.to_string())),
    )
}

/// Compare one tool's old and new definitions (already matched, by name or otherwise).
pub fn diff_tool(old: &Map<String, Value>, new: &Map<String, Value>) -> Vec<Change> {
    let written = [old, new];
    let old = prepare::prepare_tool(old);
    let new = prepare::prepare_tool(new);
    let name = old
        .get("name")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    let mut changes = Vec::new();
    if old.get("name") != new.get("name") {
        let new_name = new.get("name").and_then(Value::as_str).unwrap_or_default();
        changes.push(rename_change(&name, new_name));
    }
    tool::compare(&name, &old, &new, written, &mut changes);
    changes
}
