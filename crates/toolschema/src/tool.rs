//! The MCP tool definition (2025-11-25) with toolschema's extensions, its name and tag rules, and
//! tool IDs.
//!
//! A [`Tool`] keeps every field it was given, in the order given, including fields it does not know;
//! writing it back loses nothing. Known fields are checked when the tool is built.

use crate::json::Members;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::fmt;
use std::str::FromStr;

/// Longest tool name MCP allows.
pub const MAX_NAME_LEN: usize = 128;
/// Longest normalized tag.
pub const MAX_TAG_LEN: usize = 64;
/// Most tags a tool keeps.
pub const MAX_TAGS: usize = 20;

/// Which of a tool's names broke a rule.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NameField {
    /// The tool's `name`.
    Name,
    /// The tool's `namespace` extension.
    Namespace,
}

impl fmt::Display for NameField {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            NameField::Name => "name",
            NameField::Namespace => "namespace",
        })
    }
}

/// A name that breaks the MCP rules: 1 to 128 characters from `[A-Za-z0-9_.-]`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NameError {
    /// The name is missing or empty.
    #[error("{0} is required")]
    Required(NameField),
    /// The name is longer than [`MAX_NAME_LEN`] characters.
    #[error("{field} exceeds {MAX_NAME_LEN} characters (it has {length})")]
    TooLong {
        /// Which name.
        field: NameField,
        /// Its length in characters.
        length: usize,
    },
    /// The name holds characters outside `[A-Za-z0-9_.-]`; each is listed once, in order.
    #[error("{field} contains invalid characters: {}", quote_chars(.chars))]
    InvalidCharacters {
        /// Which name.
        field: NameField,
        /// The offending characters, each once, in order of appearance.
        chars: Vec<char>,
    },
}

fn quote_chars(chars: &[char]) -> String {
    chars
        .iter()
        .map(|c| format!("'{}'", c.escape_debug()))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Whether `c` may appear in a tool name.
pub fn is_name_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-')
}

/// Check a tool name against the MCP rules.
///
/// ```
/// use toolschema::tool::check_name;
/// assert!(check_name("search_files").is_ok());
/// assert_eq!(
///     check_name("find files, fast").unwrap_err().to_string(),
///     "name contains invalid characters: ' ', ','"
/// );
/// ```
pub fn check_name(name: &str) -> Result<(), NameError> {
    check_name_field(name, NameField::Name)
}

fn check_name_field(name: &str, field: NameField) -> Result<(), NameError> {
    if name.is_empty() {
        return Err(NameError::Required(field));
    }
    let mut invalid: Vec<char> = Vec::new();
    for c in name.chars().filter(|c| !is_name_char(*c)) {
        if !invalid.contains(&c) {
            invalid.push(c);
        }
    }
    if !invalid.is_empty() {
        return Err(NameError::InvalidCharacters {
            field,
            chars: invalid,
        });
    }
    let length = name.chars().count();
    if length > MAX_NAME_LEN {
        return Err(NameError::TooLong { field, length });
    }
    Ok(())
}

/// An argument a tool asks Streamable HTTP clients to mirror into a request header (MCP
/// 2026-07-28): a property of its `inputSchema` annotated `"x-mcp-header": "Region"` is sent as
/// `Mcp-Param-Region` too, for intermediaries that route without reading the body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MirroredArgument {
    /// The name after `Mcp-Param-`, as annotated.
    pub header: String,
    /// The property names from the arguments' root down to the argument.
    pub path: Vec<String>,
}

/// The key of the `inputSchema` annotation that mirrors an argument into a header.
pub const MIRROR_KEYWORD: &str = "x-mcp-header";

/// The arguments `input_schema` mirrors into headers: each property annotated with a
/// [`MIRROR_KEYWORD`] whose value is an HTTP token, reached from the root through `properties`
/// alone, as MCP defines the annotation (one under `items`, a combinator or a `$ref` mirrors
/// nothing).
///
/// ```
/// use toolschema::tool::mirrored_arguments;
/// let schema = serde_json::json!({"type": "object", "properties": {
///     "region": {"type": "string", "x-mcp-header": "Region"},
///     "query": {"type": "string"}}});
/// let mirrored = mirrored_arguments(&schema);
/// assert_eq!(mirrored[0].header, "Region");
/// assert_eq!(mirrored[0].path, ["region"]);
/// ```
pub fn mirrored_arguments(input_schema: &Value) -> Vec<MirroredArgument> {
    let mut found = Vec::new();
    let mut todo: Vec<(&Value, Vec<String>)> = vec![(input_schema, Vec::new())];
    while let Some((schema, path)) = todo.pop() {
        let Some(properties) = schema.get("properties").and_then(Value::as_object) else {
            continue;
        };
        for (name, property) in properties {
            let mut at = path.clone();
            at.push(name.clone());
            if let Some(header) = property.get(MIRROR_KEYWORD).and_then(Value::as_str) {
                if is_header_token(header) {
                    found.push(MirroredArgument {
                        header: header.to_string(),
                        path: at.clone(),
                    });
                }
            }
            todo.push((property, at));
        }
    }
    found.sort_by(|a, b| a.path.cmp(&b.path));
    found
}

/// Whether `name` is an HTTP token (RFC 9110 `1*tchar`), as a header name must be.
fn is_header_token(name: &str) -> bool {
    !name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b))
}

/// Normalize one tag: lowercase, trimmed, whitespace runs become `-`, only `[a-z0-9-_.]` kept, at
/// most [`MAX_TAG_LEN`] characters. `None` when nothing is left.
pub fn normalize_tag(tag: &str) -> Option<String> {
    let mut out = String::new();
    let mut in_space = false;
    for c in tag.trim().chars() {
        if c.is_whitespace() {
            in_space = true;
            continue;
        }
        if in_space {
            out.push('-');
            in_space = false;
        }
        for lower in c.to_lowercase() {
            if lower.is_ascii_lowercase()
                || lower.is_ascii_digit()
                || matches!(lower, '-' | '_' | '.')
            {
                out.push(lower);
            }
        }
    }
    out.truncate(MAX_TAG_LEN); // only ASCII is left, so this cuts on a character boundary
    (!out.is_empty()).then_some(out)
}

/// Normalize a list of tags: each with [`normalize_tag`], empty ones dropped, duplicates removed
/// keeping the first, at most [`MAX_TAGS`] kept.
pub fn normalize_tags<'a>(tags: impl IntoIterator<Item = &'a str>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for tag in tags.into_iter().filter_map(normalize_tag) {
        if out.len() == MAX_TAGS {
            break;
        }
        if !out.contains(&tag) {
            out.push(tag);
        }
    }
    out
}

/// A tool ID: `namespace:name:version`, `namespace:name`, or `name`.
///
/// Parsing and display round-trip; the version is semver and may start with `v`.
///
/// ```
/// use toolschema::tool::ToolId;
/// let id: ToolId = "github:create_issue:v1.2.0".parse().unwrap();
/// assert_eq!(id.namespace(), Some("github"));
/// assert_eq!(id.name(), "create_issue");
/// assert_eq!(id.version().unwrap().major, 1);
/// assert_eq!(id.to_string(), "github:create_issue:v1.2.0");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ToolId {
    namespace: Option<String>,
    name: String,
    /// The version as written (with its `v`, if any) and parsed.
    version: Option<(String, semver::Version)>,
}

/// Why a string is not a tool ID.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ToolIdError {
    /// More than two `:`.
    #[error("tool ID '{0}' has more than two ':' (expected namespace:name:version)")]
    TooManyParts(String),
    /// A part between `:` is empty.
    #[error("tool ID '{id}' has an empty {part}")]
    EmptyPart {
        /// The whole ID.
        id: String,
        /// `namespace`, `name` or `version`.
        part: &'static str,
    },
    /// The name or namespace breaks the name rules.
    #[error("tool ID '{id}': {error}")]
    Name {
        /// The whole ID.
        id: String,
        /// What is wrong.
        error: NameError,
    },
    /// The version is not semver.
    #[error("tool ID '{id}': version '{version}' is not semver (like 1.2.0 or v1.2.0): {reason}")]
    Version {
        /// The whole ID.
        id: String,
        /// The version as written.
        version: String,
        /// What the semver parser said.
        reason: String,
    },
}

/// Parse a semver version that may start with `v`.
pub fn parse_version(version: &str) -> Result<semver::Version, semver::Error> {
    semver::Version::parse(version.strip_prefix('v').unwrap_or(version))
}

impl ToolId {
    /// The ID of a tool with this name, namespace and version. The version only appears in the ID
    /// when there is a namespace too.
    pub fn new(
        namespace: Option<&str>,
        name: &str,
        version: Option<&str>,
    ) -> Result<ToolId, ToolIdError> {
        let text = match (namespace, version) {
            (Some(ns), Some(v)) => format!("{ns}:{name}:{v}"),
            (Some(ns), None) => format!("{ns}:{name}"),
            (None, _) => name.to_string(),
        };
        text.parse()
    }

    /// The namespace, if any.
    pub fn namespace(&self) -> Option<&str> {
        self.namespace.as_deref()
    }

    /// The tool name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The version, if any.
    pub fn version(&self) -> Option<&semver::Version> {
        self.version.as_ref().map(|(_, v)| v)
    }
}

impl FromStr for ToolId {
    type Err = ToolIdError;

    fn from_str(id: &str) -> Result<Self, Self::Err> {
        let parts: Vec<&str> = id.split(':').collect();
        if parts.len() > 3 {
            return Err(ToolIdError::TooManyParts(id.to_string()));
        }
        let labels: &[&'static str] = match parts.len() {
            1 => &["name"],
            2 => &["namespace", "name"],
            _ => &["namespace", "name", "version"],
        };
        if let Some(i) = parts.iter().position(|p| p.is_empty()) {
            return Err(ToolIdError::EmptyPart {
                id: id.to_string(),
                part: labels[i],
            });
        }
        let name_error = |error| ToolIdError::Name {
            id: id.to_string(),
            error,
        };
        let (namespace, name) = if parts.len() == 1 {
            (None, parts[0])
        } else {
            check_name_field(parts[0], NameField::Namespace).map_err(name_error)?;
            (Some(parts[0].to_string()), parts[1])
        };
        check_name(name).map_err(name_error)?;
        let version = match parts.get(2) {
            None => None,
            Some(v) => Some((
                v.to_string(),
                parse_version(v).map_err(|e| ToolIdError::Version {
                    id: id.to_string(),
                    version: v.to_string(),
                    reason: e.to_string(),
                })?,
            )),
        };
        Ok(ToolId {
            namespace,
            name: name.to_string(),
            version,
        })
    }
}

impl fmt::Display for ToolId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(ns) = &self.namespace {
            write!(f, "{ns}:")?;
        }
        f.write_str(&self.name)?;
        if let Some((written, _)) = &self.version {
            write!(f, ":{written}")?;
        }
        Ok(())
    }
}

/// Hints a server gives about a tool's behaviour (`annotations`).
///
/// **These are hints from the server, never guarantees.** A server can claim `readOnlyHint: true`
/// and delete files. Never use them to decide what is safe to run without asking; use them to
/// order, group or describe tools.
///
/// The effective values apply MCP's defaults for hints the server did not give.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ToolAnnotations {
    /// A human-readable title.
    pub title: Option<String>,
    /// The tool does not modify its environment.
    pub read_only_hint: Option<bool>,
    /// The tool may perform destructive updates (meaningful when not read-only).
    pub destructive_hint: Option<bool>,
    /// Calling it again with the same arguments has no additional effect.
    pub idempotent_hint: Option<bool>,
    /// The tool interacts with an open world of external entities.
    pub open_world_hint: Option<bool>,
}

impl ToolAnnotations {
    /// `readOnlyHint`, defaulting to `false`. A hint, not a guarantee.
    pub fn read_only(&self) -> bool {
        self.read_only_hint.unwrap_or(false)
    }

    /// `destructiveHint`, defaulting to `true`. A hint, not a guarantee.
    pub fn destructive(&self) -> bool {
        self.destructive_hint.unwrap_or(true)
    }

    /// `idempotentHint`, defaulting to `false`. A hint, not a guarantee.
    pub fn idempotent(&self) -> bool {
        self.idempotent_hint.unwrap_or(false)
    }

    /// `openWorldHint`, defaulting to `true`. A hint, not a guarantee.
    pub fn open_world(&self) -> bool {
        self.open_world_hint.unwrap_or(true)
    }

    fn from_object(object: &Map<String, Value>) -> Result<Self, ToolError> {
        let hint = |key: &'static str| match object.member(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::Bool(b)) => Ok(Some(*b)),
            Some(_) => Err(ToolError::FieldType {
                field: format!("annotations.{key}"),
                expected: "a boolean",
            }),
        };
        let title = match object.member("title") {
            None | Some(Value::Null) => None,
            Some(Value::String(s)) => Some(s.clone()),
            Some(_) => {
                return Err(ToolError::FieldType {
                    field: "annotations.title".to_string(),
                    expected: "a string",
                })
            }
        };
        Ok(ToolAnnotations {
            title,
            read_only_hint: hint("readOnlyHint")?,
            destructive_hint: hint("destructiveHint")?,
            idempotent_hint: hint("idempotentHint")?,
            open_world_hint: hint("openWorldHint")?,
        })
    }

    /// The annotations as MCP writes them (only the fields that are set).
    pub fn to_value(&self) -> Value {
        let mut map = Map::new();
        if let Some(t) = &self.title {
            map.insert("title".into(), Value::String(t.clone()));
        }
        let hints = [
            ("readOnlyHint", self.read_only_hint),
            ("destructiveHint", self.destructive_hint),
            ("idempotentHint", self.idempotent_hint),
            ("openWorldHint", self.open_world_hint),
        ];
        for (key, hint) in hints {
            if let Some(b) = hint {
                map.insert(key.into(), Value::Bool(b));
            }
        }
        Value::Object(map)
    }
}

/// Whether a tool can run as an MCP task (`execution.taskSupport`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TaskSupport {
    /// The tool cannot run as a task (the default).
    #[default]
    Forbidden,
    /// The tool may run as a task.
    Optional,
    /// The tool must run as a task.
    Required,
}

impl TaskSupport {
    /// The wire form: `forbidden`, `optional` or `required`.
    pub fn as_str(&self) -> &'static str {
        match self {
            TaskSupport::Forbidden => "forbidden",
            TaskSupport::Optional => "optional",
            TaskSupport::Required => "required",
        }
    }
}

/// Why a JSON value is not a valid tool.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ToolError {
    /// The tool is not a JSON object.
    #[error("a tool must be a JSON object")]
    NotAnObject,
    /// The name or namespace breaks the name rules.
    #[error(transparent)]
    Name(#[from] NameError),
    /// `inputSchema` is missing.
    #[error("inputSchema is required")]
    InputSchemaMissing,
    /// A field has the wrong JSON type.
    #[error("{field} must be {expected}")]
    FieldType {
        /// The field, dotted for nested ones (`annotations.readOnlyHint`).
        field: String,
        /// What it must be (`a string`, `a JSON object`, ...).
        expected: &'static str,
    },
    /// `execution.taskSupport` is not one of the three values.
    #[error(
        "execution.taskSupport must be one of \"forbidden\", \"optional\", \"required\" (got {0})"
    )]
    TaskSupport(String),
    /// `version` is not semver.
    #[error("version '{version}' is not semver (like 1.2.0 or v1.2.0): {reason}")]
    Version {
        /// The version as written.
        version: String,
        /// What the semver parser said.
        reason: String,
    },
}

/// An MCP tool definition.
///
/// Holds every field of the tool object in its original order: the MCP 2025-11-25 fields (`name`,
/// `title`, `description`, `inputSchema`, `outputSchema`, `annotations`, `execution`, `icons`,
/// `_meta`), the extensions `namespace`, `version` and `tags`, and any other field, which is kept
/// and written back unchanged.
///
/// ```
/// use serde_json::json;
/// use toolschema::Tool;
///
/// let tool = Tool::from_value(json!({
///     "name": "search",
///     "inputSchema": {"type": "object", "properties": {"q": {"type": "string"}}},
///     "x-owner": "search-team",
///     "tags": ["  Web Search ", "web-search", "FAST"]
/// })).unwrap();
/// assert_eq!(tool.tags(), ["web-search", "fast"]);
/// assert!(tool.annotations().destructive()); // MCP's default for a hint not given
/// assert_eq!(tool.to_value()["x-owner"], "search-team");
/// ```
#[derive(Debug, Clone)]
pub struct Tool {
    /// Every field as written, in order; known fields are checked.
    fields: Map<String, Value>,
    annotations: ToolAnnotations,
    task_support: TaskSupport,
    /// The numbers of the text the tool was read from that its fields hold otherwise, when it
    /// was read from text (see [`Tool::with_stated_numbers`]).
    stated: Option<crate::json::number::StatedNumbers>,
}

/// Two tools are equal when their fields are: the text they were read from does not count.
impl PartialEq for Tool {
    fn eq(&self, other: &Tool) -> bool {
        self.fields == other.fields
            && self.annotations == other.annotations
            && self.task_support == other.task_support
    }
}

/// The fields [`Tool`] knows; anything else is kept as it is.
pub const KNOWN_FIELDS: [&str; 12] = [
    "name",
    "title",
    "description",
    "inputSchema",
    "outputSchema",
    "annotations",
    "execution",
    "icons",
    "_meta",
    "namespace",
    "version",
    "tags",
];

impl Tool {
    /// A tool with a name and an input schema (any JSON object; see [`crate::schema`] for the
    /// shapes accepted).
    pub fn new(
        name: impl Into<String>,
        input_schema: Map<String, Value>,
    ) -> Result<Tool, ToolError> {
        let mut fields = Map::new();
        fields.insert("name".into(), Value::String(name.into()));
        fields.insert("inputSchema".into(), Value::Object(input_schema));
        Tool::from_map(fields)
    }

    /// Build a tool from its JSON object, checking every known field.
    pub fn from_value(value: Value) -> Result<Tool, ToolError> {
        match value {
            Value::Object(map) => Tool::from_map(map),
            _ => Err(ToolError::NotAnObject),
        }
    }

    /// Build a tool from its JSON object's fields, checking every known field.
    pub fn from_map(fields: Map<String, Value>) -> Result<Tool, ToolError> {
        match fields.get("name") {
            Some(Value::String(name)) => check_name(name)?,
            None | Some(Value::Null) => return Err(NameError::Required(NameField::Name).into()),
            Some(_) => return Err(field_type("name", "a string")),
        }
        // The fields stay as written (tags too, normalized only when read through `tags`): they
        // are what a client receives, and what a pin covers.
        let (annotations, task_support) = check_fields(&fields, true)?;
        Ok(Tool {
            fields,
            annotations,
            task_support,
            stated: None,
        })
    }

    /// The tool's name.
    pub fn name(&self) -> &str {
        self.str_field("name").unwrap_or_default()
    }

    /// The human-readable title, if any.
    pub fn title(&self) -> Option<&str> {
        self.str_field("title")
    }

    /// The description a model reads, if any.
    pub fn description(&self) -> Option<&str> {
        self.str_field("description")
    }

    /// The input schema as given (see [`crate::schema::normalize`] for the standard form).
    pub fn input_schema(&self) -> &Map<String, Value> {
        static EMPTY: std::sync::OnceLock<Map<String, Value>> = std::sync::OnceLock::new();
        self.fields
            .get("inputSchema")
            .and_then(Value::as_object)
            .unwrap_or_else(|| EMPTY.get_or_init(Map::new))
    }

    /// The output schema, if the tool declares one.
    pub fn output_schema(&self) -> Option<&Map<String, Value>> {
        self.fields.get("outputSchema").and_then(Value::as_object)
    }

    /// The annotations, with MCP's defaults available as effective values. Hints only: see
    /// [`ToolAnnotations`].
    pub fn annotations(&self) -> &ToolAnnotations {
        &self.annotations
    }

    /// `execution.taskSupport`, `forbidden` when absent.
    pub fn task_support(&self) -> TaskSupport {
        self.task_support
    }

    /// The icons, as given.
    pub fn icons(&self) -> &[Value] {
        self.fields
            .get("icons")
            .and_then(Value::as_array)
            .map_or(&[], Vec::as_slice)
    }

    /// `_meta`, if any.
    pub fn meta(&self) -> Option<&Map<String, Value>> {
        self.fields.get("_meta").and_then(Value::as_object)
    }

    /// The `namespace` extension, if any.
    pub fn namespace(&self) -> Option<&str> {
        self.str_field("namespace")
    }

    /// The `version` extension, as written.
    pub fn version(&self) -> Option<&str> {
        self.str_field("version")
    }

    /// The tags, normalized (see [`normalize_tags`]); the `tags` field keeps them as written.
    pub fn tags(&self) -> Vec<String> {
        let written = self.fields.get("tags").and_then(Value::as_array);
        normalize_tags(written.into_iter().flatten().filter_map(Value::as_str))
    }

    /// The tool's ID: `namespace:name:version`, `namespace:name`, or `name`.
    pub fn id(&self) -> ToolId {
        let version = self
            .namespace()
            .and(self.version())
            .and_then(|v| parse_version(v).ok().map(|parsed| (v.to_string(), parsed)));
        ToolId {
            namespace: self.namespace().map(str::to_string),
            name: self.name().to_string(),
            version,
        }
    }

    /// Every field of the tool, in order, known or not.
    pub fn fields(&self) -> &Map<String, Value> {
        &self.fields
    }

    /// The fields toolschema does not know, in order.
    pub fn unknown_fields(&self) -> impl Iterator<Item = (&String, &Value)> {
        self.fields
            .iter()
            .filter(|(k, _)| !KNOWN_FIELDS.contains(&k.as_str()))
    }

    /// The tool as a JSON value, every field in its original order.
    pub fn to_value(&self) -> Value {
        Value::Object(self.fields.clone())
    }

    /// Consume the tool, returning its fields.
    pub fn into_map(self) -> Map<String, Value> {
        self.fields
    }

    /// The tool was read from JSON text, and `stated` holds the numbers of that text its
    /// fields hold otherwise (pointers from the tool object, `/inputSchema/maximum`; see
    /// [`crate::json::number::StatedNumbers`]): its schemas then compile comparing numbers as
    /// the text states them. [`crate::Catalog`] sets it for every tool it reads.
    pub fn with_stated_numbers(mut self, stated: crate::json::number::StatedNumbers) -> Self {
        self.stated = Some(stated);
        self
    }

    /// The numbers of the text the tool was read from that its fields hold otherwise; `None`
    /// when it was not read from text.
    pub fn stated_numbers(&self) -> Option<&crate::json::number::StatedNumbers> {
        self.stated.as_ref()
    }

    /// Set the title.
    pub fn with_title(mut self, title: impl Into<String>) -> Self {
        self.fields
            .insert("title".into(), Value::String(title.into()));
        self
    }

    /// Set the description.
    pub fn with_description(mut self, description: impl Into<String>) -> Self {
        self.fields
            .insert("description".into(), Value::String(description.into()));
        self
    }

    /// Set the output schema.
    pub fn with_output_schema(mut self, schema: Map<String, Value>) -> Self {
        self.fields
            .insert("outputSchema".into(), Value::Object(schema));
        self
    }

    /// Set the annotations.
    pub fn with_annotations(mut self, annotations: ToolAnnotations) -> Self {
        self.fields
            .insert("annotations".into(), annotations.to_value());
        self.annotations = annotations;
        self
    }

    /// Set `execution.taskSupport`.
    pub fn with_task_support(mut self, support: TaskSupport) -> Self {
        let execution = self
            .fields
            .entry("execution")
            .or_insert_with(|| Value::Object(Map::new()));
        if let Value::Object(map) = execution {
            map.insert("taskSupport".into(), Value::String(support.as_str().into()));
        }
        self.task_support = support;
        self
    }

    /// Set the tags (normalized).
    pub fn with_tags<'a>(mut self, tags: impl IntoIterator<Item = &'a str>) -> Self {
        let tags = normalize_tags(tags);
        self.fields.insert(
            "tags".into(),
            Value::Array(tags.into_iter().map(Value::String).collect()),
        );
        self
    }

    /// Set the namespace.
    pub fn with_namespace(mut self, namespace: impl Into<String>) -> Result<Self, ToolError> {
        let namespace = namespace.into();
        check_name_field(&namespace, NameField::Namespace)?;
        self.fields
            .insert("namespace".into(), Value::String(namespace));
        Ok(self)
    }

    /// Set the version (semver, a leading `v` allowed).
    pub fn with_version(mut self, version: impl Into<String>) -> Result<Self, ToolError> {
        let version = version.into();
        parse_version(&version).map_err(|e| ToolError::Version {
            version: version.clone(),
            reason: e.to_string(),
        })?;
        self.fields.insert("version".into(), Value::String(version));
        Ok(self)
    }

    fn str_field(&self, key: &str) -> Option<&str> {
        self.fields.get(key).and_then(Value::as_str)
    }
}

fn field_type(field: &str, expected: &'static str) -> ToolError {
    ToolError::FieldType {
        field: field.to_string(),
        expected,
    }
}

/// Check the fields of a tool object other than `name`, in the order [`Tool::from_map`] reports
/// them (`inputSchema` and `outputSchema` only when `schemas`), and read the annotations and task
/// support.
pub(crate) fn check_fields(
    fields: &Map<String, Value>,
    schemas: bool,
) -> Result<(ToolAnnotations, TaskSupport), ToolError> {
    for key in ["title", "description"] {
        expect_kind(fields, key, Value::is_string, "a string")?;
    }
    if schemas {
        match fields.member("inputSchema") {
            None | Some(Value::Null) => return Err(ToolError::InputSchemaMissing),
            Some(Value::Object(_)) => {}
            Some(_) => return Err(field_type("inputSchema", "a JSON object")),
        }
        expect_kind(fields, "outputSchema", Value::is_object, "a JSON object")?;
    }
    expect_kind(fields, "_meta", Value::is_object, "a JSON object")?;
    let annotations = match fields.member("annotations") {
        None | Some(Value::Null) => ToolAnnotations::default(),
        Some(Value::Object(object)) => ToolAnnotations::from_object(object)?,
        Some(_) => return Err(field_type("annotations", "a JSON object")),
    };
    let task_support = match fields.member("execution") {
        None | Some(Value::Null) => TaskSupport::default(),
        Some(Value::Object(execution)) => match execution.member("taskSupport") {
            None | Some(Value::Null) => TaskSupport::default(),
            Some(other) => serde_json::from_value(other.clone())
                .map_err(|_| ToolError::TaskSupport(other.to_string()))?,
        },
        Some(_) => return Err(field_type("execution", "a JSON object")),
    };
    if let Some(icons) = fields.member("icons") {
        let ok = icons.as_array().is_some_and(|icons| {
            icons
                .iter()
                .all(|icon| icon.member("src").is_some_and(Value::is_string))
        });
        if !ok {
            return Err(field_type(
                "icons",
                "an array of icon objects, each with a string \"src\"",
            ));
        }
    }
    match fields.member("namespace") {
        None | Some(Value::Null) => {}
        Some(Value::String(ns)) => check_name_field(ns, NameField::Namespace)?,
        Some(_) => return Err(field_type("namespace", "a string")),
    }
    match fields.member("version") {
        None | Some(Value::Null) => {}
        Some(Value::String(v)) => {
            parse_version(v).map_err(|e| ToolError::Version {
                version: v.clone(),
                reason: e.to_string(),
            })?;
        }
        Some(_) => return Err(field_type("version", "a string")),
    }
    if let Some(tags) = fields.member("tags") {
        let strings = tags
            .as_array()
            .is_some_and(|t| t.iter().all(Value::is_string));
        if !strings {
            return Err(field_type("tags", "an array of strings"));
        }
    }
    Ok((annotations, task_support))
}

fn expect_kind(
    fields: &Map<String, Value>,
    key: &str,
    is_kind: fn(&Value) -> bool,
    expected: &'static str,
) -> Result<(), ToolError> {
    match fields.get(key) {
        Some(v) if !v.is_null() && !is_kind(v) => Err(field_type(key, expected)),
        _ => Ok(()),
    }
}

impl Serialize for Tool {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.fields.serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for Tool {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let value = Value::deserialize(deserializer)?;
        Tool::from_value(value).map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn name_rules() {
        assert!(check_name("a").is_ok());
        assert!(check_name("get-file_info.v2").is_ok());
        assert!(check_name(&"x".repeat(128)).is_ok());
        let msg = |n: &str| check_name(n).unwrap_err().to_string();
        assert_eq!(msg(""), "name is required");
        assert_eq!(
            msg(&"x".repeat(129)),
            "name exceeds 128 characters (it has 129)"
        );
        assert_eq!(msg("a b,c d"), "name contains invalid characters: ' ', ','");
        assert_eq!(msg("tab\there"), "name contains invalid characters: '\\t'");
        assert_eq!(msg("café"), "name contains invalid characters: 'é'");
        assert_eq!(msg("a/b:c"), "name contains invalid characters: '/', ':'");
    }

    #[test]
    fn tool_ids_round_trip() {
        for id in [
            "search",
            "web:search",
            "web:search:1.2.3",
            "web:search:v2.0.0-beta.1",
        ] {
            assert_eq!(id.parse::<ToolId>().unwrap().to_string(), id);
        }
        let id: ToolId = "web:search:v2.0.0".parse().unwrap();
        assert_eq!(id.namespace(), Some("web"));
        assert_eq!(id.name(), "search");
        assert_eq!(id.version(), Some(&semver::Version::new(2, 0, 0)));
        let err = |s: &str| s.parse::<ToolId>().unwrap_err().to_string();
        assert_eq!(
            err("a:b:1.0.0:d"),
            "tool ID 'a:b:1.0.0:d' has more than two ':' (expected namespace:name:version)"
        );
        assert_eq!(err("a::1.0.0"), "tool ID 'a::1.0.0' has an empty name");
        assert_eq!(err(":b"), "tool ID ':b' has an empty namespace");
        assert_eq!(err("a:b:"), "tool ID 'a:b:' has an empty version");
        assert_eq!(err(""), "tool ID '' has an empty name");
        assert!(err("a:b:1.0").starts_with("tool ID 'a:b:1.0': version '1.0' is not semver"));
        assert_eq!(
            err("a b:c"),
            "tool ID 'a b:c': namespace contains invalid characters: ' '"
        );
        assert_eq!(
            ToolId::new(Some("ns"), "t", Some("1.0.0"))
                .unwrap()
                .to_string(),
            "ns:t:1.0.0"
        );
        // Without a namespace the version is not part of the ID.
        assert_eq!(
            ToolId::new(None, "t", Some("1.0.0")).unwrap().to_string(),
            "t"
        );
    }

    #[test]
    fn tags_are_normalized() {
        assert_eq!(normalize_tag("  Web   Search\t"), Some("web-search".into()));
        assert_eq!(normalize_tag("C++ & Rust!"), Some("c--rust".into()));
        assert_eq!(normalize_tag("v1.2_beta"), Some("v1.2_beta".into()));
        assert_eq!(normalize_tag("   "), None);
        assert_eq!(normalize_tag("ÄBC"), Some("bc".into()));
        assert_eq!(normalize_tag(&"a".repeat(100)).unwrap().len(), 64);
        let many: Vec<String> = (0..30).map(|i| format!("t{i}")).collect();
        let tags = normalize_tags(
            ["B", "b", " b "]
                .into_iter()
                .chain(many.iter().map(String::as_str)),
        );
        assert_eq!(tags.len(), 20);
        assert_eq!(&tags[..2], ["b", "t0"]);
    }

    #[test]
    fn keeps_unknown_fields_in_order() {
        let value = json!({
            "x-first": 1,
            "name": "t",
            "x-middle": {"b": 1, "a": 2},
            "inputSchema": {"type": "object"},
            "x-last": [3]
        });
        let tool = Tool::from_value(value.clone()).unwrap();
        assert_eq!(serde_json::to_string(&tool).unwrap(), value.to_string());
        let unknown: Vec<_> = tool.unknown_fields().map(|(k, _)| k.as_str()).collect();
        assert_eq!(unknown, ["x-first", "x-middle", "x-last"]);
        let back: Tool = serde_json::from_value(value).unwrap();
        assert_eq!(back, tool);
    }

    #[test]
    fn annotation_defaults() {
        let tool = Tool::new("t", Map::new()).unwrap();
        let a = tool.annotations();
        assert!(!a.read_only() && a.destructive() && !a.idempotent() && a.open_world());
        let tool = Tool::from_value(json!({"name": "t", "inputSchema": {},
            "annotations": {"readOnlyHint": true, "openWorldHint": false}}))
        .unwrap();
        assert!(tool.annotations().read_only());
        assert!(!tool.annotations().open_world());
        assert!(tool.annotations().destructive());
    }

    #[test]
    fn task_support() {
        let t = |execution: Value| {
            Tool::from_value(json!({"name": "t", "inputSchema": {}, "execution": execution}))
        };
        assert_eq!(t(json!({})).unwrap().task_support(), TaskSupport::Forbidden);
        assert_eq!(
            t(json!({"taskSupport": "optional"}))
                .unwrap()
                .task_support(),
            TaskSupport::Optional
        );
        assert_eq!(
            t(json!({"taskSupport": "sometimes"})).unwrap_err().to_string(),
            "execution.taskSupport must be one of \"forbidden\", \"optional\", \"required\" (got \"sometimes\")"
        );
    }

    #[test]
    fn field_errors_name_the_rule() {
        let err = |v: Value| Tool::from_value(v).unwrap_err().to_string();
        assert_eq!(err(json!([])), "a tool must be a JSON object");
        assert_eq!(err(json!({"inputSchema": {}})), "name is required");
        assert_eq!(
            err(json!({"name": 3, "inputSchema": {}})),
            "name must be a string"
        );
        assert_eq!(err(json!({"name": "t"})), "inputSchema is required");
        assert_eq!(
            err(json!({"name": "t", "inputSchema": []})),
            "inputSchema must be a JSON object"
        );
        assert_eq!(
            err(json!({"name": "t", "inputSchema": {}, "annotations": {"readOnlyHint": "yes"}})),
            "annotations.readOnlyHint must be a boolean"
        );
        assert_eq!(
            err(json!({"name": "t", "inputSchema": {}, "tags": [1]})),
            "tags must be an array of strings"
        );
        assert!(
            err(json!({"name": "t", "inputSchema": {}, "version": "one"}))
                .starts_with("version 'one' is not semver")
        );
        assert_eq!(
            err(json!({"name": "t", "inputSchema": {}, "namespace": ""})),
            "namespace is required"
        );
        assert_eq!(
            err(json!({"name": "t", "inputSchema": {}, "icons": [{"mimeType": "image/png"}]})),
            "icons must be an array of icon objects, each with a string \"src\""
        );
    }

    #[test]
    fn mirrored_arguments_are_reached_through_properties_alone() {
        let schema = json!({"type": "object", "properties": {
            "region": {"type": "string", "x-mcp-header": "Region"},
            "target": {"type": "object", "properties": {
                "shard": {"type": "integer", "x-mcp-header": "Shard"}}},
            "list": {"type": "array", "items": {"type": "object", "properties": {
                "x": {"type": "string", "x-mcp-header": "Nope"}}}},
            "bad": {"type": "string", "x-mcp-header": "Not a token"},
            "any": {"anyOf": [{"type": "string", "x-mcp-header": "Nope2"}]}}});
        let found: Vec<(String, Vec<String>)> = mirrored_arguments(&schema)
            .into_iter()
            .map(|m| (m.header, m.path))
            .collect();
        assert_eq!(
            found,
            [
                ("Region".to_string(), vec!["region".to_string()]),
                (
                    "Shard".to_string(),
                    vec!["target".to_string(), "shard".to_string()]
                ),
            ]
        );
    }

    #[test]
    fn builder_and_id() {
        let tool = Tool::new("search", Map::new())
            .unwrap()
            .with_description("Search the web")
            .with_namespace("web")
            .unwrap()
            .with_version("v1.0.0")
            .unwrap()
            .with_tags(["Web"])
            .with_task_support(TaskSupport::Optional);
        assert_eq!(tool.id().to_string(), "web:search:v1.0.0");
        assert_eq!(
            tool.to_value()["execution"],
            json!({"taskSupport": "optional"})
        );
        assert!(Tool::new("t", Map::new())
            .unwrap()
            .with_version("nope")
            .is_err());
    }
}
