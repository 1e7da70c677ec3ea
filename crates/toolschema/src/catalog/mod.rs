//! Tool catalogs: tool lists read from files in every shape they come in, with the position of
//! every value.
//!
//! Accepted shapes: a `tools/list` result `{"tools": [...]}` (`nextCursor` allowed), a JSON-RPC
//! response whose `result` is that, a bare array of tools, or one tool object.
//!
//! Two ways in:
//! - [`Catalog::from_json`] reads and checks every tool (the usual way);
//! - [`CatalogLayout::scan`] checks the syntax of the whole file and finds where each tool is
//!   without building any of them; [`CatalogLayout::read_tool`] then reads one at a time. This is
//!   how very large catalogs are linted in little memory, and how tools that break the rules are
//!   still looked at; [`ByteSource`] lets a linter scan a file a block at a time instead.

mod stream;

pub use stream::ByteSource;
pub(crate) use stream::{read_piece, scan_stream, StreamScanError, BLOCK};

use crate::json::reader::{parse_range_reusing, parse_range_with_spans, Reader, SyntaxError};
use crate::json::{LineCursor, LineIndex, Position, SpanEntry, Spans};
use crate::suggest::closest;
use crate::tool::{Tool, ToolError};
use serde_json::Value;
use std::fmt;
use std::ops::Range;

/// The shape a catalog file is written in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CatalogShape {
    /// `{"tools": [...]}`, a `tools/list` result.
    ToolsList,
    /// `{"jsonrpc": "2.0", "id": ..., "result": {"tools": [...]}}`.
    JsonRpcResponse,
    /// `[...]`, a bare array of tools.
    ToolArray,
    /// One tool object.
    SingleTool,
}

/// What is wrong with a catalog.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CatalogErrorKind {
    /// The text is not JSON.
    Syntax(String),
    /// The JSON is not in any catalog shape.
    Shape(String),
    /// A tool breaks a rule.
    Tool {
        /// The tool's index in the list.
        index: usize,
        /// Its name, when it has a usable one.
        name: Option<String>,
        /// The rule it breaks.
        error: ToolError,
    },
    /// Two tools share a name.
    DuplicateName {
        /// The name.
        name: String,
        /// Index of the first tool with it.
        first: usize,
        /// Index of the repeat.
        second: usize,
    },
    /// The file could not be read (while it was read a piece at a time).
    Read(String),
}

/// A catalog that cannot be read, with the file and position of the problem.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CatalogError {
    /// The file name (`<input>` when read from a string).
    pub file: String,
    /// Where in the file, when known.
    pub position: Option<Position>,
    /// What is wrong.
    pub kind: CatalogErrorKind,
}

impl fmt::Display for CatalogError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.file)?;
        if let Some(p) = self.position {
            write!(f, ":{}:{}", p.line, p.column)?;
        }
        write!(f, ": {}", self.kind)
    }
}

impl fmt::Display for CatalogErrorKind {
    /// What is wrong, without the file and position.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CatalogErrorKind::Syntax(message) => write!(f, "invalid JSON: {message}"),
            CatalogErrorKind::Shape(message) => f.write_str(message),
            CatalogErrorKind::Tool { index, name, error } => match name {
                Some(name) => write!(f, "tool '{name}' (tools[{index}]): {error}"),
                None => write!(f, "tools[{index}]: {error}"),
            },
            CatalogErrorKind::DuplicateName {
                name,
                first,
                second,
            } => write!(
                f,
                "duplicate tool name '{name}' (tools[{first}] and tools[{second}])"
            ),
            CatalogErrorKind::Read(message) => write!(f, "cannot read: {message}"),
        }
    }
}

impl std::error::Error for CatalogError {}

impl CatalogError {
    /// The name of the tool the error is about, when it is about one tool with a usable name.
    pub fn tool_name(&self) -> Option<&str> {
        match &self.kind {
            CatalogErrorKind::Tool { name, .. } => name.as_deref(),
            CatalogErrorKind::DuplicateName { name, .. } => Some(name),
            CatalogErrorKind::Syntax(_)
            | CatalogErrorKind::Shape(_)
            | CatalogErrorKind::Read(_) => None,
        }
    }
}

/// Part of a file's text, handed with the findings in it.
#[derive(Debug, Clone, Copy)]
pub struct TextPiece<'a> {
    /// The byte of the file the piece starts at (0 for a whole text).
    pub start: usize,
    /// The text, from `start` on.
    pub text: &'a str,
}

impl<'a> TextPiece<'a> {
    /// A whole text as a piece.
    pub fn whole(text: &'a str) -> Self {
        TextPiece { start: 0, text }
    }
}

/// Where one tool sits in its file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolLocation {
    /// JSON Pointer to the tool in the file (`/tools/3`, `/result/tools/0`, `/3`, or `""`).
    pub pointer: String,
    /// Byte range of the tool's JSON text.
    pub range: Range<usize>,
    /// Nesting depth of the tool's container in the file.
    depth: usize,
    /// Where the tool starts.
    position: Position,
}

/// A catalog file's shape and where each tool is, found without building the tools.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CatalogLayout {
    /// The file's shape.
    pub shape: CatalogShape,
    /// Where each tool is, in order.
    pub tools: Vec<ToolLocation>,
    /// `nextCursor` of a `tools/list` result, when present.
    pub next_cursor: Option<String>,
}

/// One tool's JSON as written in its file, with the position of each of its values.
#[derive(Debug, Clone, PartialEq)]
pub struct SourceTool {
    /// The tool object as written.
    pub value: Value,
    /// Spans of the tool's values (offsets into the file).
    pub spans: Spans,
    /// JSON Pointer to the tool in the file.
    pub pointer: String,
}

impl SourceTool {
    /// Byte offset, in the file, of the value at `pointer` inside the tool (a member's key for an
    /// object member). Falls back to the deepest existing ancestor.
    pub fn offset_of(&self, pointer: &str) -> Option<usize> {
        self.spans
            .locate(&self.value, pointer)
            .map(|(span, _)| span.anchor() as usize)
    }
}

fn syntax_error(file: &str, text: &str, error: SyntaxError) -> CatalogError {
    CatalogError {
        file: file.to_string(),
        position: Some(crate::json::position_of(text, error.offset)),
        kind: CatalogErrorKind::Syntax(error.message),
    }
}

impl CatalogLayout {
    /// Check the syntax of the whole text and find the catalog's shape and its tools.
    ///
    /// `file` names the text in errors.
    pub fn scan(file: &str, text: &str) -> Result<CatalogLayout, CatalogError> {
        Self::scan_each(file, text, &mut |_| {})
    }

    /// Like [`CatalogLayout::scan`], handing each tool's location to `found` as soon as it is
    /// found, in order, so the tools can be read while the rest of the text is checked. The tools
    /// handed over count only if the scan succeeds.
    pub fn scan_each(
        file: &str,
        text: &str,
        found: &mut dyn FnMut(&ToolLocation),
    ) -> Result<CatalogLayout, CatalogError> {
        let mut tools = Vec::new();
        let mut layout = Self::scan_giving(file, text, &mut |location| {
            found(&location);
            tools.push(location);
        })?;
        layout.tools = tools;
        Ok(layout)
    }

    /// Like [`CatalogLayout::scan_each`], giving each tool's location away to `found` instead of
    /// keeping it: the layout returned has no tools.
    pub(crate) fn scan_giving(
        file: &str,
        text: &str,
        found: &mut dyn FnMut(ToolLocation),
    ) -> Result<CatalogLayout, CatalogError> {
        let fail = |error: SyntaxError| syntax_error(file, text, error);
        let shape_error = |offset: usize, message: String| CatalogError {
            file: file.to_string(),
            position: Some(crate::json::position_of(text, offset)),
            kind: CatalogErrorKind::Shape(message),
        };
        let mut reader = Reader::new(text, 0);
        let mut layout = CatalogLayout {
            shape: CatalogShape::ToolsList,
            tools: Vec::new(),
            next_cursor: None,
        };
        let mut found = Found {
            count: 0,
            found,
            positions: LineCursor::new(
                text,
                crate::json::text_start(text),
                Position { line: 1, column: 1 },
            ),
        };
        match reader.peek() {
            Some(b'[') => {
                layout.shape = CatalogShape::ToolArray;
                scan_tool_array(&mut reader, "", 0, &mut found).map_err(fail)?;
            }
            Some(b'{') => {
                let start = reader.offset();
                let root =
                    scan_object(&mut reader, text, "", 0, &mut layout, &mut found).map_err(fail)?;
                reader.finish().map_err(fail)?;
                let misplaced_tools = root
                    .tools_not_array
                    .or(root.result.as_ref().and_then(|r| r.tools_not_array));
                if let Some(offset) = misplaced_tools {
                    return Err(shape_error(
                        offset,
                        "\"tools\" must be an array of tools".into(),
                    ));
                }
                if root.has_tools {
                    layout.shape = CatalogShape::ToolsList;
                } else if let Some(result) = root.result {
                    layout.shape = CatalogShape::JsonRpcResponse;
                    if !result.has_tools {
                        return Err(shape_error(
                            start,
                            "the JSON-RPC result has no \"tools\" array".into(),
                        ));
                    }
                } else if let Some(message) = root.rpc_error {
                    return Err(shape_error(
                        start,
                        format!("the JSON-RPC response is an error: {message}"),
                    ));
                } else if root.looks_like_tool {
                    layout.shape = CatalogShape::SingleTool;
                    let position = found.positions.position(start);
                    (found.found)(ToolLocation {
                        pointer: String::new(),
                        range: start..reader.offset(),
                        depth: 0,
                        position,
                    });
                } else {
                    return Err(shape_error(start, NOT_A_CATALOG.into()));
                }
            }
            Some(_) => {
                // Report a syntax error if it is not JSON at all, else the shape problem.
                let start = reader.offset();
                reader.skip_value(0).map_err(fail)?;
                reader.finish().map_err(fail)?;
                return Err(shape_error(start, NOT_A_CATALOG.into()));
            }
            None => {
                return Err(fail(SyntaxError {
                    message: "unexpected end of input: expected a JSON value".into(),
                    offset: reader.offset(),
                }))
            }
        }
        reader.finish().map_err(fail)?;
        Ok(layout)
    }

    /// Read tool `index` of the layout from `text` (the text it was scanned from).
    pub fn read_tool(
        &self,
        file: &str,
        text: &str,
        index: usize,
    ) -> Result<SourceTool, CatalogError> {
        let Some(location) = self.tools.get(index) else {
            return Err(CatalogError {
                file: file.to_string(),
                position: None,
                kind: CatalogErrorKind::Shape(format!("no tool at index {index}")),
            });
        };
        location.read(file, text)
    }
}

impl ToolLocation {
    /// Where the tool starts.
    pub(crate) fn position(&self) -> Position {
        self.position
    }

    /// Read the tool at this location from `text` (the text it was found in).
    pub fn read(&self, file: &str, text: &str) -> Result<SourceTool, CatalogError> {
        self.read_reusing(file, TextPiece::whole(text), Vec::new())
    }

    /// [`ToolLocation::read`] from a piece of the file holding the tool, recording the spans in
    /// `spans` (the buffer of a tool read before). The spans are offsets into the piece; an
    /// error's position is the place in the file.
    pub(crate) fn read_reusing(
        &self,
        file: &str,
        TextPiece {
            start: piece_start,
            text: piece,
        }: TextPiece<'_>,
        spans: Vec<SpanEntry>,
    ) -> Result<SourceTool, CatalogError> {
        let start = self.range.start - piece_start;
        let (value, spans) =
            parse_range_reusing(piece, start, self.depth, spans).map_err(|e| CatalogError {
                file: file.to_string(),
                // Errors are at or after the tool's start, whose position is known.
                position: Some(LineCursor::new(piece, start, self.position).position(e.offset)),
                kind: CatalogErrorKind::Syntax(e.message),
            })?;
        Ok(SourceTool {
            value,
            spans,
            pointer: self.pointer.clone(),
        })
    }
}

const NOT_A_CATALOG: &str = "not a tool catalog: expected {\"tools\": [...]}, a JSON-RPC response whose result is that, an array of tools, or one tool object";

/// What the members of an object said about the catalog's shape.
#[derive(Default)]
struct ObjectFacts {
    has_tools: bool,
    /// Where a `"tools"` member that is not an array starts.
    tools_not_array: Option<usize>,
    result: Option<Box<ObjectFacts>>,
    rpc_error: Option<String>,
    looks_like_tool: bool,
}

/// Where the scan gives the tools it finds, and how many it gave.
struct Found<'f> {
    count: usize,
    found: &'f mut dyn FnMut(ToolLocation),
    /// Positions of the tools, found in file order.
    positions: LineCursor<'f>,
}

/// Scan an object at the reader (a file root or a JSON-RPC `result`), giving away tool locations.
fn scan_object(
    reader: &mut Reader<'_>,
    text: &str,
    pointer: &str,
    depth: usize,
    layout: &mut CatalogLayout,
    found: &mut Found<'_>,
) -> Result<ObjectFacts, SyntaxError> {
    let mut facts = ObjectFacts::default();
    reader.expect(b'{', "expected '{'")?;
    if reader.peek() == Some(b'}') {
        reader.expect(b'}', "expected '}'")?;
        return Ok(facts);
    }
    loop {
        let (key, _) = reader.read_key()?;
        let member_offset = reader.peek().map(|_| reader.offset()).unwrap_or_default();
        match key.as_str() {
            "tools" if reader.peek() == Some(b'[') => {
                facts.has_tools = true;
                let tools_pointer = format!("{pointer}/tools");
                scan_tool_array(reader, &tools_pointer, depth + 1, found)?;
            }
            "tools" => {
                // Valid JSON of another shape: the scan goes on so that a syntax error later in
                // the text still wins, and the caller reports the shape.
                facts.tools_not_array.get_or_insert(member_offset);
                reader.skip_value(depth + 1)?;
            }
            "result" if pointer.is_empty() && reader.peek() == Some(b'{') => {
                let result_pointer = "/result".to_string();
                let result = scan_object(reader, text, &result_pointer, depth + 1, layout, found)?;
                facts.result = Some(Box::new(result));
            }
            "nextCursor" if reader.peek() == Some(b'"') => {
                let (value, _) = parse_range_with_spans(text, reader.offset(), depth + 1)?;
                reader.skip_value(depth + 1)?;
                layout.next_cursor = value.as_str().map(str::to_string);
            }
            "error" if pointer.is_empty() => {
                let (value, _) = parse_range_with_spans(text, reader.offset(), depth + 1)?;
                reader.skip_value(depth + 1)?;
                let message = value
                    .get("message")
                    .and_then(Value::as_str)
                    .map(str::to_string)
                    .unwrap_or_else(|| value.to_string());
                facts.rpc_error = Some(message);
            }
            other => {
                if matches!(other, "name" | "inputSchema") {
                    facts.looks_like_tool = true;
                }
                reader.skip_value(depth + 1)?;
            }
        }
        if !reader.next_separator(b'}', "an object member")? {
            break;
        }
    }
    Ok(facts)
}

fn scan_tool_array(
    reader: &mut Reader<'_>,
    pointer: &str,
    depth: usize,
    found: &mut Found<'_>,
) -> Result<(), SyntaxError> {
    reader.expect(b'[', "expected '['")?;
    if reader.peek() == Some(b']') {
        reader.expect(b']', "expected ']'")?;
        return Ok(());
    }
    loop {
        let range = reader.skip_value(depth + 1)?;
        let position = found.positions.position(range.start);
        (found.found)(ToolLocation {
            pointer: format!("{pointer}/{}", found.count),
            range,
            depth: depth + 1,
            position,
        });
        found.count += 1;
        if !reader.next_separator(b']', "an array element")? {
            return Ok(());
        }
    }
}

/// A tool in a catalog, with where it is in the file.
#[derive(Debug, Clone)]
pub struct CatalogTool {
    /// The tool.
    pub tool: Tool,
    /// JSON Pointer to the tool in the file.
    pub pointer: String,
    spans: Spans,
}

/// A list of tools read from a file, every one checked, positions kept.
///
/// ```
/// use toolschema::Catalog;
/// let catalog = Catalog::from_json("tools.json", r#"{"tools": [
///   {"name": "search", "inputSchema": {"type": "object"}}
/// ]}"#).unwrap();
/// assert_eq!(catalog.get("search").unwrap().name(), "search");
/// assert_eq!(
///     catalog.unknown_tool("serch").to_string(),
///     "unknown tool 'serch' (did you mean 'search'?)"
/// );
/// let position = catalog.position("/tools/0/inputSchema").unwrap();
/// assert_eq!((position.line, position.column), (2, 22));
/// ```
#[derive(Debug, Clone)]
pub struct Catalog {
    file: String,
    text: String,
    lines: LineIndex,
    shape: CatalogShape,
    next_cursor: Option<String>,
    tools: Vec<CatalogTool>,
}

/// A tool name the catalog does not have, with the closest one it does.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown tool '{name}'{}", .suggestion.as_ref().map(|s| format!(" (did you mean '{s}'?)")).unwrap_or_default())]
pub struct UnknownTool {
    /// The name asked for.
    pub name: String,
    /// The closest known name, if one is close.
    pub suggestion: Option<String>,
}

impl Catalog {
    /// Read a catalog from JSON text, checking every tool. `file` names the text in errors.
    pub fn from_json(file: &str, text: &str) -> Result<Catalog, CatalogError> {
        Self::read_tools(file, text, &mut |error| Err(error))
    }

    /// Read a catalog from JSON text, leaving out the tools that break a rule (an invalid name,
    /// a malformed field, a name used twice) instead of refusing the whole file: a catalog from a
    /// real server can hold one odd tool, and its other tools still work. Returns the readable
    /// tools and one error per tool left out, in file order; only text that is not JSON or not a
    /// catalog is an error.
    ///
    /// ```
    /// use toolschema::Catalog;
    /// let text = r#"[{"name": "ok", "inputSchema": {}}, {"name": "bad name", "inputSchema": {}}]"#;
    /// let (catalog, left_out) = Catalog::from_json_lenient("c.json", text).unwrap();
    /// assert_eq!(catalog.len(), 1);
    /// assert_eq!(left_out[0].tool_name(), Some("bad name"));
    /// ```
    pub fn from_json_lenient(
        file: &str,
        text: &str,
    ) -> Result<(Catalog, Vec<CatalogError>), CatalogError> {
        let mut left_out = Vec::new();
        let catalog = Self::read_tools(file, text, &mut |error| {
            left_out.push(error);
            Ok(())
        })?;
        Ok((catalog, left_out))
    }

    /// Read the catalog, handing each tool that breaks a rule to `rejected`, which either stops
    /// the reading with the error or lets it go on without that tool.
    fn read_tools(
        file: &str,
        text: &str,
        rejected: &mut dyn FnMut(CatalogError) -> Result<(), CatalogError>,
    ) -> Result<Catalog, CatalogError> {
        let layout = CatalogLayout::scan(file, text)?;
        let lines = LineIndex::new(text);
        let stated = crate::json::number::StatedNumbers::read(text);
        let mut tools: Vec<CatalogTool> = Vec::with_capacity(layout.tools.len());
        let mut first_of_name: std::collections::HashMap<String, usize> =
            std::collections::HashMap::with_capacity(layout.tools.len());
        for index in 0..layout.tools.len() {
            let source = layout.read_tool(file, text, index)?;
            let name = source
                .value
                .get("name")
                .and_then(Value::as_str)
                .filter(|n| !n.is_empty())
                .map(str::to_string);
            let SourceTool {
                value,
                spans,
                pointer,
            } = source;
            let tool = match Tool::from_value(value.clone()) {
                Ok(tool) => tool.with_stated_numbers(stated.below(&pointer)),
                Err(error) => {
                    let field = error_field(&error);
                    let offset = spans
                        .locate(&value, &field)
                        .map(|(s, _)| s.anchor() as usize);
                    rejected(CatalogError {
                        file: file.to_string(),
                        position: offset.map(|o| lines.position(text, o)),
                        kind: CatalogErrorKind::Tool { index, name, error },
                    })?;
                    continue;
                }
            };
            if let Some(&first) = first_of_name.get(tool.name()) {
                let offset = spans.root().map(|s| s.start as usize).unwrap_or_default();
                rejected(CatalogError {
                    file: file.to_string(),
                    position: Some(lines.position(text, offset)),
                    kind: CatalogErrorKind::DuplicateName {
                        name: tool.name().to_string(),
                        first,
                        second: index,
                    },
                })?;
                continue;
            }
            first_of_name.insert(tool.name().to_string(), index);
            tools.push(CatalogTool {
                tool,
                pointer,
                spans,
            });
        }
        Ok(Catalog {
            file: file.to_string(),
            text: text.to_string(),
            lines,
            shape: layout.shape,
            next_cursor: layout.next_cursor,
            tools,
        })
    }

    /// The file name given when reading.
    pub fn file(&self) -> &str {
        &self.file
    }

    /// The file's shape.
    pub fn shape(&self) -> CatalogShape {
        self.shape
    }

    /// `nextCursor`, when the file is one page of a `tools/list` result.
    pub fn next_cursor(&self) -> Option<&str> {
        self.next_cursor.as_deref()
    }

    /// The tools, in file order.
    pub fn tools(&self) -> impl ExactSizeIterator<Item = &Tool> {
        self.tools.iter().map(|t| &t.tool)
    }

    /// The tools with their locations, in file order.
    pub fn entries(&self) -> &[CatalogTool] {
        &self.tools
    }

    /// How many tools.
    pub fn len(&self) -> usize {
        self.tools.len()
    }

    /// Whether the catalog has no tools.
    pub fn is_empty(&self) -> bool {
        self.tools.is_empty()
    }

    /// The tool with this name.
    pub fn get(&self, name: &str) -> Option<&Tool> {
        self.tools
            .iter()
            .map(|t| &t.tool)
            .find(|t| t.name() == name)
    }

    /// The tool with this name, or an error naming the closest one.
    pub fn require(&self, name: &str) -> Result<&Tool, UnknownTool> {
        self.get(name).ok_or_else(|| self.unknown_tool(name))
    }

    /// The error for a name the catalog does not have, with a did-you-mean.
    pub fn unknown_tool(&self, name: &str) -> UnknownTool {
        UnknownTool {
            name: name.to_string(),
            suggestion: closest(name, self.tools().map(Tool::name)).map(str::to_string),
        }
    }

    /// The line and column of the value at `pointer`, a JSON Pointer into the file. Points at
    /// the deepest existing value when the pointer goes further.
    pub fn position(&self, pointer: &str) -> Option<Position> {
        let entry = self.tools.iter().find(|t| {
            pointer == t.pointer
                || pointer
                    .strip_prefix(t.pointer.as_str())
                    .is_some_and(|rest| rest.starts_with('/'))
        })?;
        let inner = &pointer[entry.pointer.len()..];
        let root = Value::Object(entry.tool.fields().clone());
        let (span, _) = entry.spans.locate(&root, inner)?;
        Some(self.lines.position(&self.text, span.anchor() as usize))
    }

    /// The catalog as a `tools/list` result, `{"tools": [...]}`, every tool as read.
    pub fn to_tools_list(&self) -> Value {
        let tools = self.tools().map(Tool::to_value).collect();
        let mut map = serde_json::Map::new();
        map.insert("tools".into(), Value::Array(tools));
        if let Some(cursor) = &self.next_cursor {
            map.insert("nextCursor".into(), Value::String(cursor.clone()));
        }
        Value::Object(map)
    }
}

/// The field inside a tool that a tool error is about, as a JSON Pointer.
pub(crate) fn error_field(error: &ToolError) -> String {
    use crate::tool::{NameError, NameField};
    match error {
        ToolError::NotAnObject | ToolError::InputSchemaMissing => String::new(),
        ToolError::Name(NameError::Required(field))
        | ToolError::Name(NameError::TooLong { field, .. })
        | ToolError::Name(NameError::InvalidCharacters { field, .. }) => match field {
            NameField::Name => "/name".into(),
            NameField::Namespace => "/namespace".into(),
        },
        ToolError::FieldType { field, .. } => format!("/{}", field.replace('.', "/")),
        ToolError::TaskSupport(_) => "/execution/taskSupport".into(),
        ToolError::Version { .. } => "/version".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TOOL: &str = r#"{"name": "a", "inputSchema": {"type": "object"}}"#;

    #[test]
    fn reads_every_shape() {
        let cases = [
            (
                format!(r#"{{"tools": [{TOOL}], "nextCursor": "p2"}}"#),
                CatalogShape::ToolsList,
                "/tools/0",
            ),
            (
                format!(r#"{{"jsonrpc": "2.0", "id": 1, "result": {{"tools": [{TOOL}]}}}}"#),
                CatalogShape::JsonRpcResponse,
                "/result/tools/0",
            ),
            (format!("[{TOOL}]"), CatalogShape::ToolArray, "/0"),
            (TOOL.to_string(), CatalogShape::SingleTool, ""),
        ];
        for (text, shape, pointer) in cases {
            let catalog = Catalog::from_json("t.json", &text).unwrap();
            // A byte order mark before the document changes nothing.
            let marked = Catalog::from_json("t.json", &format!("\u{feff}{text}")).unwrap();
            assert_eq!(marked.len(), catalog.len());
            assert_eq!(catalog.shape(), shape);
            assert_eq!(catalog.len(), 1);
            assert_eq!(catalog.entries()[0].pointer, pointer);
            assert_eq!(catalog.get("a").unwrap().name(), "a");
        }
        let paged = Catalog::from_json("t.json", r#"{"tools": [], "nextCursor": "p2"}"#).unwrap();
        assert_eq!(paged.next_cursor(), Some("p2"));
        assert!(paged.is_empty());
    }

    #[test]
    fn syntax_errors_have_line_and_column() {
        let err = Catalog::from_json(
            "bad.json",
            "{\n  \"tools\": [\n    {\"name\": \"a\",}\n  ]\n}",
        )
        .unwrap_err();
        assert_eq!(
            err.to_string(),
            "bad.json:3:18: invalid JSON: expected an object key in double quotes"
        );
        let err = Catalog::from_json("e.json", "").unwrap_err();
        assert_eq!(
            err.to_string(),
            "e.json:1:1: invalid JSON: unexpected end of input: expected a JSON value"
        );
    }

    #[test]
    fn shape_errors() {
        let err = |text: &str| Catalog::from_json("c.json", text).unwrap_err().to_string();
        assert_eq!(err("42"), format!("c.json:1:1: {NOT_A_CATALOG}"));
        assert_eq!(err("{\"x\": 1}"), format!("c.json:1:1: {NOT_A_CATALOG}"));
        assert_eq!(
            err("{\"tools\": {}}"),
            "c.json:1:11: \"tools\" must be an array of tools"
        );
        assert!(matches!(
            Catalog::from_json("c.json", "{\"tools\": {}}")
                .unwrap_err()
                .kind,
            CatalogErrorKind::Shape(_)
        ));
        assert_eq!(
            err("{\"result\": {\"tools\": 3}}"),
            "c.json:1:22: \"tools\" must be an array of tools"
        );
        // A syntax error after the misplaced member is still a syntax error.
        assert_eq!(
            err("{\"tools\": {}, }"),
            "c.json:1:15: invalid JSON: expected an object key in double quotes"
        );
        assert_eq!(
            err(
                r#"{"jsonrpc": "2.0", "id": 1, "error": {"code": -32601, "message": "Method not found"}}"#
            ),
            "c.json:1:1: the JSON-RPC response is an error: Method not found"
        );
    }

    #[test]
    fn lenient_reading_leaves_out_only_the_tools_that_break_a_rule() {
        let text = "{\"tools\": [\n  {\"name\": \"ok\", \"inputSchema\": {}},\n  {\"name\": \"bad name\", \"inputSchema\": {}},\n  {\"name\": \"ok\", \"inputSchema\": {}},\n  {\"inputSchema\": {}},\n  {\"name\": \"last\", \"inputSchema\": {}}\n]}";
        let (catalog, left_out) = Catalog::from_json_lenient("c.json", text).unwrap();
        let names: Vec<_> = catalog.tools().map(Tool::name).collect();
        assert_eq!(names, ["ok", "last"]);
        assert_eq!(catalog.entries()[1].pointer, "/tools/4");
        let messages: Vec<_> = left_out.iter().map(ToString::to_string).collect();
        assert_eq!(
            messages,
            [
                "c.json:3:4: tool 'bad name' (tools[1]): name contains invalid characters: ' '",
                "c.json:4:3: duplicate tool name 'ok' (tools[0] and tools[2])",
                "c.json:5:3: tools[3]: name is required",
            ]
        );
        let named: Vec<_> = left_out.iter().map(CatalogError::tool_name).collect();
        assert_eq!(named, [Some("bad name"), Some("ok"), None]);
        // Text that is not a catalog is still an error.
        assert!(Catalog::from_json_lenient("c.json", "{\"tools\": {}}").is_err());
        assert!(Catalog::from_json_lenient("c.json", "[").is_err());
    }

    #[test]
    fn tool_errors_name_the_tool_and_the_rule() {
        let text = "{\"tools\": [\n  {\"name\": \"ok\", \"inputSchema\": {}},\n  {\"name\": \"bad name\", \"inputSchema\": {}}\n]}";
        let err = Catalog::from_json("c.json", text).unwrap_err();
        assert_eq!(
            err.to_string(),
            "c.json:3:4: tool 'bad name' (tools[1]): name contains invalid characters: ' '"
        );
        let err = Catalog::from_json("c.json", r#"[{"name": "x"}]"#).unwrap_err();
        assert_eq!(
            err.to_string(),
            "c.json:1:2: tool 'x' (tools[0]): inputSchema is required"
        );
        let err = Catalog::from_json("c.json", &format!("[{TOOL}, {TOOL}]")).unwrap_err();
        assert_eq!(
            err.to_string(),
            "c.json:1:52: duplicate tool name 'a' (tools[0] and tools[1])"
        );
    }

    #[test]
    fn layout_reads_tools_one_at_a_time() {
        let text = format!(r#"{{"tools": [{TOOL}, {{"name": "b c", "inputSchema": 1}}]}}"#);
        let layout = CatalogLayout::scan("c.json", &text).unwrap();
        assert_eq!(layout.tools.len(), 2);
        let second = layout.read_tool("c.json", &text, 1).unwrap();
        assert_eq!(second.value["name"], "b c");
        assert_eq!(
            &text[second.offset_of("/inputSchema").unwrap()..][..13],
            "\"inputSchema\""
        );
    }

    #[test]
    fn positions_point_into_the_file() {
        let text = "{\"tools\": [\n {\"name\": \"a\",\n  \"inputSchema\": {\"properties\": {\"q\": {}}}}\n]}";
        let catalog = Catalog::from_json("c.json", text).unwrap();
        let p = catalog
            .position("/tools/0/inputSchema/properties/q")
            .unwrap();
        assert_eq!((p.line, p.column), (3, 34));
        assert_eq!(catalog.position("/elsewhere"), None);
    }
}
