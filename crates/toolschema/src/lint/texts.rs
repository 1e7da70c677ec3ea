//! The strings of a tool with where they are in the file, for the rules that read words (`SEC`).

use super::context::ToolContext;
use crate::json::pointer::push_segment;
use aho_corasick::AhoCorasick;
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

/// A step from a container to one of its values: a member's key or an element's index.
#[derive(Debug, Clone, Copy)]
enum Segment<'a> {
    Key(&'a str),
    Index(usize),
}

/// An object or array of the tool, by the container holding it and its step from there; the
/// tool itself has no parent. Pointers are built from these only for what a rule reports.
struct Node<'a> {
    parent: Option<usize>,
    segment: Segment<'a>,
}

/// One string of a tool.
pub(crate) struct Text<'a> {
    pub kind: TextKind,
    pub text: &'a str,
    /// Byte offset of it in the file.
    pub offset: usize,
    /// The container that holds it, and its key or index there.
    node: usize,
    segment: Segment<'a>,
    /// The text as phrases are matched against it ([`normalized`]), made on first use.
    normalized: std::cell::OnceCell<String>,
}

impl Text<'_> {
    /// The text lowercased, hidden characters dropped, whitespace runs made one space.
    pub fn normalized(&self) -> &str {
        self.normalized.get_or_init(|| normalized(self.text))
    }
}

/// Every string of a tool, with what is needed to point at each.
pub(crate) struct ToolStrings<'a> {
    pub texts: Vec<Text<'a>>,
    nodes: Vec<Node<'a>>,
    /// JSON Pointer to the tool in the file.
    root: &'a str,
}

impl ToolStrings<'_> {
    /// The JSON Pointer to `text` in the file (for a member name, to the member).
    pub fn pointer(&self, text: &Text<'_>) -> String {
        let mut steps = vec![text.segment];
        let mut node = Some(text.node);
        while let Some(index) = node {
            let Some(current) = self.nodes.get(index) else {
                break;
            };
            if current.parent.is_some() {
                steps.push(current.segment);
            }
            node = current.parent;
        }
        let mut pointer = self.root.to_string();
        for step in steps.iter().rev() {
            pointer = match step {
                Segment::Key(key) => push_segment(&pointer, key),
                Segment::Index(index) => format!("{pointer}/{index}"),
            };
        }
        pointer
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
pub(super) fn strings<'a>(cx: &ToolContext<'a>) -> ToolStrings<'a> {
    let spans = cx.spans();
    let mut texts = Vec::new();
    let mut nodes = vec![Node {
        parent: None,
        segment: Segment::Index(0),
    }];
    // (value, span, node index, place); pushed reversed so they come out in order.
    let mut stack: Vec<(&'a Value, usize, usize, Place)> =
        vec![(&cx.tool.value, 0, 0, Place::Tool)];
    let text = |kind, text, offset, node, segment| Text {
        kind,
        text,
        offset,
        node,
        segment,
        normalized: std::cell::OnceCell::new(),
    };
    while let Some((value, span, node, place)) = stack.pop() {
        match value {
            Value::Object(map) => {
                let mut children = Vec::with_capacity(map.len());
                for ((key, member), child) in map.iter().zip(spans.children(span)) {
                    let entry = spans.get(child);
                    let key_kind = if place == Place::Properties {
                        TextKind::PropertyName
                    } else {
                        TextKind::Other
                    };
                    let key_offset = entry.map_or(0, |e| e.anchor() as usize);
                    texts.push(text(key_kind, key, key_offset, node, Segment::Key(key)));
                    let member_place = match (place, key.as_str()) {
                        (Place::Tool, "inputSchema" | "outputSchema") => Place::Schema,
                        (Place::Tool, "annotations") => Place::Annotations,
                        (Place::Schema, "properties") => Place::Properties,
                        (Place::Schema | Place::Properties, _) => Place::Schema,
                        _ => Place::Other,
                    };
                    match member {
                        Value::String(value) => {
                            let kind = match (place, key.as_str()) {
                                (Place::Tool, "name") => TextKind::Name,
                                (Place::Tool | Place::Annotations | Place::Schema, "title") => {
                                    TextKind::Title
                                }
                                (Place::Tool, "description") => TextKind::Description,
                                (Place::Schema, "description") => TextKind::SchemaDescription,
                                _ => TextKind::Other,
                            };
                            let offset = entry.map_or(0, |e| e.start as usize);
                            texts.push(text(kind, value, offset, node, Segment::Key(key)));
                        }
                        Value::Object(_) | Value::Array(_) => {
                            nodes.push(Node {
                                parent: Some(node),
                                segment: Segment::Key(key),
                            });
                            children.push((member, child, nodes.len() - 1, member_place));
                        }
                        _ => {}
                    }
                }
                stack.extend(children.into_iter().rev());
            }
            Value::Array(items) => {
                let mut children = Vec::with_capacity(items.len());
                // Items of a schema list (anyOf, prefixItems) are schemas.
                let item_place = if place == Place::Schema {
                    Place::Schema
                } else {
                    Place::Other
                };
                for (index, (item, child)) in items.iter().zip(spans.children(span)).enumerate() {
                    match item {
                        Value::String(value) => {
                            let offset = spans.get(child).map_or(0, |e| e.start as usize);
                            let segment = Segment::Index(index);
                            texts.push(text(TextKind::Other, value, offset, node, segment));
                        }
                        Value::Object(_) | Value::Array(_) => {
                            nodes.push(Node {
                                parent: Some(node),
                                segment: Segment::Index(index),
                            });
                            children.push((item, child, nodes.len() - 1, item_place));
                        }
                        _ => {}
                    }
                }
                stack.extend(children.into_iter().rev());
            }
            _ => {}
        }
    }
    ToolStrings {
        texts,
        nodes,
        root: &cx.tool.pointer,
    }
}

/// The prose of the tool: its title and description, `annotations.title`, and every `title` and
/// `description` inside its schemas.
pub(crate) fn prose<'c, 'a>(cx: &'c ToolContext<'a>) -> impl Iterator<Item = &'c Text<'a>> {
    cx.strings().texts.iter().filter(|t| t.kind.is_prose())
}

/// `text` lowercased, with hidden characters dropped and every run of whitespace made one space,
/// so phrases match however they are spaced, cased or salted with invisible characters.
fn normalized(text: &str) -> String {
    if text.is_ascii() {
        normalized_ascii(text)
    } else {
        normalized_chars(text)
    }
}

/// [`normalized`] character by character.
fn normalized_chars(text: &str) -> String {
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

/// [`normalized`] for ASCII text, byte by byte (most descriptions are ASCII).
fn normalized_ascii(text: &str) -> String {
    let mut out = Vec::with_capacity(text.len());
    let mut space = false;
    for &byte in text.as_bytes() {
        if matches!(byte, b' ' | b'\t' | b'\n' | b'\r') {
            space = !out.is_empty();
        } else if byte < 0x20 || byte == 0x7F {
            // Control characters are hidden: dropped, like every hidden character.
        } else {
            if space {
                out.push(b' ');
                space = false;
            }
            out.push(byte.to_ascii_lowercase());
        }
    }
    String::from_utf8(out).unwrap_or_default()
}

/// A matcher for many phrases at once, for a rule's `static` (`LazyLock::new(|| matcher(LIST))`).
pub(crate) fn matcher(phrases: &[&str]) -> Option<AhoCorasick> {
    AhoCorasick::new(phrases).ok()
}

/// The phrases of `phrases` found in `text`, each once, in list order: one pass over the text
/// with the `matcher` made from the list (a phrase at a time when there is none).
pub(crate) fn find_phrases(
    matcher: Option<&AhoCorasick>,
    phrases: &[&'static str],
    text: &str,
) -> Vec<&'static str> {
    let mut seen = vec![false; phrases.len()];
    match matcher {
        Some(matcher) => {
            for found in matcher.find_overlapping_iter(text) {
                if let Some(slot) = seen.get_mut(found.pattern().as_usize()) {
                    *slot = true;
                }
            }
        }
        None => {
            for (slot, phrase) in seen.iter_mut().zip(phrases) {
                *slot = text.contains(phrase);
            }
        }
    }
    phrases
        .iter()
        .zip(seen)
        .filter_map(|(phrase, seen)| seen.then_some(*phrase))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ascii_text_normalizes_as_any_text_does() {
        // Every string of up to five characters over letters of both cases, spaces, a tab, a line
        // feed, vertical tab, form feed, another control character and DEL.
        let alphabet = [
            'a', 'B', ' ', '\t', '\n', '\u{B}', '\u{C}', '\u{1}', '\u{7F}',
        ];
        let mut texts = vec![String::new()];
        for _ in 0..5 {
            let longer: Vec<String> = texts
                .iter()
                .filter(|t| t.len() == texts.last().map_or(0, String::len))
                .flat_map(|t| alphabet.iter().map(move |c| format!("{t}{c}")))
                .collect();
            texts.extend(longer);
        }
        assert!(texts.len() > 10_000);
        for text in &texts {
            assert_eq!(normalized_ascii(text), normalized_chars(text), "{text:?}");
        }
        assert_eq!(
            normalized("  Do NOT\ttell\n\n the   User "),
            "do not tell the user"
        );
        assert_eq!(normalized("Ignore\u{200B}  previous"), "ignore previous");
    }
}
