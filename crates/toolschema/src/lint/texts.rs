//! The strings of a tool with where they are in the file, for the rules that read words (`SEC`).

use super::context::ToolContext;
use crate::json::pointer::push_segment;
use serde_json::Value;

/// What a string of a tool is to the model.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TextKind {
    /// The tool's `name`.
    Name,
    /// The tool's `title` or `annotations.title`, or a `title` inside a schema.
    Title,
    /// The tool's `description`.
    Description,
    /// A `description` inside `inputSchema` or `outputSchema`.
    SchemaDescription,
    /// The name of a property (an argument or output field).
    PropertyName,
    /// Any other string or member name.
    Other,
}

impl TextKind {
    /// How the text is named in messages.
    pub fn label(self) -> &'static str {
        match self {
            TextKind::Name => "tool name",
            TextKind::Title => "title",
            TextKind::Description => "description",
            TextKind::SchemaDescription => "schema description",
            TextKind::PropertyName => "property name",
            TextKind::Other => "string",
        }
    }

    /// Whether this is prose the model reads as guidance: titles and descriptions.
    pub fn is_prose(self) -> bool {
        matches!(
            self,
            TextKind::Title | TextKind::Description | TextKind::SchemaDescription
        )
    }
}

/// One string of a tool.
pub(crate) struct Text<'a> {
    pub kind: TextKind,
    pub text: &'a str,
    /// JSON Pointer to it in the file (for a member name, to the member).
    pub pointer: String,
    /// Byte offset of it in the file.
    pub offset: usize,
    /// The text as phrases are matched against it ([`normalized`]), made on first use.
    normalized: std::cell::OnceCell<String>,
}

impl Text<'_> {
    /// The text lowercased, hidden characters dropped, whitespace runs made one space.
    pub fn normalized(&self) -> &str {
        self.normalized.get_or_init(|| normalized(self.text))
    }
}

/// Where a value sits: at the tool's top level, inside a schema, or elsewhere.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Place {
    Tool,
    Annotations,
    Schema,
    /// The map of a schema's `properties`: its keys are property names.
    Properties,
    Other,
}

/// Every string of the tool, member names included, in document order, each with its kind.
pub(super) fn strings<'a>(cx: &ToolContext<'a>) -> Vec<Text<'a>> {
    let spans = cx.spans();
    let mut out = Vec::new();
    // (value, span, pointer, place); pushed reversed so they come out in order.
    let mut stack: Vec<(&'a Value, usize, String, Place)> =
        vec![(&cx.tool.value, 0, cx.tool.pointer.clone(), Place::Tool)];
    while let Some((value, span, pointer, place)) = stack.pop() {
        match value {
            Value::Object(map) => {
                let mut children = Vec::with_capacity(map.len());
                for ((key, member), child) in map.iter().zip(spans.children(span)) {
                    let member_pointer = push_segment(&pointer, key);
                    let entry = spans.get(child);
                    let key_kind = if place == Place::Properties {
                        TextKind::PropertyName
                    } else {
                        TextKind::Other
                    };
                    out.push(Text {
                        kind: key_kind,
                        text: key,
                        pointer: member_pointer.clone(),
                        offset: entry.map_or(0, |e| e.anchor() as usize),
                        normalized: Default::default(),
                    });
                    let member_place = match (place, key.as_str()) {
                        (Place::Tool, "inputSchema" | "outputSchema") => Place::Schema,
                        (Place::Tool, "annotations") => Place::Annotations,
                        (Place::Schema, "properties") => Place::Properties,
                        (Place::Schema | Place::Properties, _) => Place::Schema,
                        _ => Place::Other,
                    };
                    if let Value::String(text) = member {
                        let kind = match (place, key.as_str()) {
                            (Place::Tool, "name") => TextKind::Name,
                            (Place::Tool | Place::Annotations | Place::Schema, "title") => {
                                TextKind::Title
                            }
                            (Place::Tool, "description") => TextKind::Description,
                            (Place::Schema, "description") => TextKind::SchemaDescription,
                            _ => TextKind::Other,
                        };
                        out.push(Text {
                            kind,
                            text,
                            pointer: member_pointer,
                            offset: entry.map_or(0, |e| e.start as usize),
                            normalized: Default::default(),
                        });
                    } else {
                        children.push((member, child, member_pointer, member_place));
                    }
                }
                stack.extend(children.into_iter().rev());
            }
            Value::Array(items) => {
                let mut children = Vec::with_capacity(items.len());
                for (index, (item, child)) in items.iter().zip(spans.children(span)).enumerate() {
                    let item_pointer = format!("{pointer}/{index}");
                    if let Value::String(text) = item {
                        out.push(Text {
                            kind: TextKind::Other,
                            text,
                            pointer: item_pointer,
                            offset: spans.get(child).map_or(0, |e| e.start as usize),
                            normalized: Default::default(),
                        });
                    } else {
                        // Items of a schema list (anyOf, prefixItems) are schemas.
                        let item_place = if place == Place::Schema {
                            Place::Schema
                        } else {
                            Place::Other
                        };
                        children.push((item, child, item_pointer, item_place));
                    }
                }
                stack.extend(children.into_iter().rev());
            }
            _ => {}
        }
    }
    out
}

/// The prose of the tool: its title and description, `annotations.title`, and every `title` and
/// `description` inside its schemas.
pub(crate) fn prose<'c, 'a>(cx: &'c ToolContext<'a>) -> impl Iterator<Item = &'c Text<'a>> {
    cx.strings().iter().filter(|t| t.kind.is_prose())
}

/// `text` lowercased, with hidden characters dropped and every run of whitespace made one space,
/// so phrases match however they are spaced, cased or salted with invisible characters.
fn normalized(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut space = false;
    for c in text.chars() {
        if crate::text::hidden_kind(c).is_some() {
            continue;
        }
        if c.is_whitespace() {
            space = !out.is_empty();
            continue;
        }
        if space {
            out.push(' ');
            space = false;
        }
        out.extend(c.to_lowercase());
    }
    out
}

/// The phrases a rule found, quoted and joined for its message: `"a", "b"`.
pub(crate) fn quoted(found: &[&str]) -> String {
    let quoted: Vec<String> = found.iter().map(|f| format!("\"{f}\"")).collect();
    quoted.join(", ")
}
