//! The strings of a tool with where they are in the file, for the rules that read words (`SEC`).

use super::context::ToolContext;
use crate::json::pointer::push_segment;
use aho_corasick::{AhoCorasick, AhoCorasickKind};
use serde_json::Value;
use std::cell::OnceCell;
use std::sync::LazyLock;

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
    normalized: OnceCell<String>,
    /// Which phrases of every [`PhraseList`] the normalized text holds, found on first use.
    phrases: OnceCell<PhrasesFound>,
}

impl Text<'_> {
    /// The text lowercased, hidden characters dropped, whitespace runs made one space.
    pub fn normalized(&self) -> &str {
        self.normalized.get_or_init(|| normalized(self.text))
    }

    /// What phrases are matched against, letter case aside: the text itself when normalizing
    /// would only lowercase it (most descriptions), else the normalized text. Saves building a
    /// lowercased copy of every description.
    pub fn comparable(&self) -> &str {
        if normalizes_to_lowercase(self.text) {
            self.text
        } else {
            self.normalized()
        }
    }

    /// The phrases of `list` in the normalized text, each once, in list order. Every list is
    /// matched in the same pass over the text, the first time any is asked.
    pub fn phrases(&self, list: PhraseList) -> Vec<&'static str> {
        let first = PHRASES.first_of(list);
        let found = self
            .phrases
            .get_or_init(|| PHRASES.find_all(self.comparable()));
        list.phrases()
            .iter()
            .enumerate()
            .filter(|(i, _)| found.contains(first + i))
            .map(|(_, phrase)| *phrase)
            .collect()
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
    // Each value has one span; a tool has about as many strings and member names as values.
    let mut texts = Vec::with_capacity(spans.entries().len());
    let mut nodes = vec![Node {
        parent: None,
        segment: Segment::Index(0),
    }];
    // (value, span, node index, place): the containers still to read, next on top.
    let mut stack: Vec<(&'a Value, usize, usize, Place)> =
        vec![(&cx.tool.value, 0, 0, Place::Tool)];
    let text = |kind, text, offset, node, segment| Text {
        kind,
        text,
        offset,
        node,
        segment,
        normalized: OnceCell::new(),
        phrases: OnceCell::new(),
    };
    while let Some((value, span, node, place)) = stack.pop() {
        match value {
            Value::Object(map) => {
                let first_child = stack.len();
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
                            stack.push((member, child, nodes.len() - 1, member_place));
                        }
                        _ => {}
                    }
                }
                // Reversed, so they come off the stack in document order.
                stack[first_child..].reverse();
            }
            Value::Array(items) => {
                let first_child = stack.len();
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
                            stack.push((item, child, nodes.len() - 1, item_place));
                        }
                        _ => {}
                    }
                }
                // Reversed, so they come off the stack in document order.
                stack[first_child..].reverse();
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

/// Whether [`normalized`] would only lowercase `text`: printable ASCII, no run of spaces, none
/// at either end.
fn normalizes_to_lowercase(text: &str) -> bool {
    let bytes = text.as_bytes();
    bytes.first() != Some(&b' ')
        && bytes.last() != Some(&b' ')
        && crate::text::only_printable_ascii(text, b"")
        && !bytes.windows(2).any(|pair| pair == b"  ")
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

/// A phrase list a word rule looks for in prose (lowercased, single-spaced). Every list is
/// matched in one pass per text: most descriptions hold none of them, and one scan costs what
/// four would not.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum PhraseList {
    /// Markup that frames text as instructions to the model (SEC-002).
    Markers,
    /// Orders that override the model's instructions or hide things from the user (SEC-002).
    Orders,
    /// Paths and names of secrets (SEC-003).
    Secrets,
    /// Words that may start an order about another tool (SEC-004).
    Cues,
}

impl PhraseList {
    const ALL: [PhraseList; 4] = [
        PhraseList::Markers,
        PhraseList::Orders,
        PhraseList::Secrets,
        PhraseList::Cues,
    ];

    /// The phrases, kept beside the rule that reads them.
    pub fn phrases(self) -> &'static [&'static str] {
        use super::rules::{model_instructions, secret_paths, tool_shadowing};
        match self {
            PhraseList::Markers => model_instructions::MARKERS,
            PhraseList::Orders => model_instructions::PHRASES,
            PhraseList::Secrets => secret_paths::SECRETS,
            PhraseList::Cues => tool_shadowing::CUES,
        }
    }
}

static PHRASES: LazyLock<PhraseSet> = LazyLock::new(PhraseSet::new);

/// Every phrase of every [`PhraseList`] in one automaton.
struct PhraseSet {
    /// `None` when the automaton cannot be built; phrases are then matched one at a time.
    matcher: Option<AhoCorasick>,
    phrases: Vec<&'static str>,
}

/// Which phrases of the [`PhraseSet`] a text holds, by their number in it.
struct PhrasesFound(Vec<bool>);

impl PhrasesFound {
    fn contains(&self, phrase: usize) -> bool {
        self.0.get(phrase).copied().unwrap_or(false)
    }
}

impl PhraseSet {
    fn new() -> Self {
        let phrases: Vec<&'static str> = PhraseList::ALL
            .iter()
            .flat_map(|l| l.phrases().iter().copied())
            .collect();
        // A DFA: a few kilobytes for these phrases, and the fastest of the automata to run.
        let matcher = AhoCorasick::builder()
            .kind(Some(AhoCorasickKind::DFA))
            // Phrases are lowercase; texts are matched as written when only their case differs
            // from their normalized form (see `Text::comparable`).
            .ascii_case_insensitive(true)
            .build(&phrases)
            .ok();
        PhraseSet { matcher, phrases }
    }

    /// The number in the set of `list`'s first phrase.
    fn first_of(&self, list: PhraseList) -> usize {
        PhraseList::ALL
            .iter()
            .take_while(|l| **l != list)
            .map(|l| l.phrases().len())
            .sum()
    }

    fn find_all(&self, text: &str) -> PhrasesFound {
        let mut found = vec![false; self.phrases.len()];
        match &self.matcher {
            // Most texts hold no phrase at all: a search that stops at the first match says
            // so at a fraction of the cost of the overlapping one that finds every phrase.
            Some(matcher) if !matcher.is_match(text) => {}
            Some(matcher) => {
                for hit in matcher.find_overlapping_iter(text) {
                    if let Some(slot) = found.get_mut(hit.pattern().as_usize()) {
                        *slot = true;
                    }
                }
            }
            None => {
                let lowercase = text.to_ascii_lowercase();
                for (slot, phrase) in found.iter_mut().zip(&self.phrases) {
                    *slot = lowercase.contains(phrase);
                }
            }
        }
        PhrasesFound(found)
    }
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
            // Phrases may be matched on the text itself, case aside, only where that is the
            // same as matching its normalized form.
            if normalizes_to_lowercase(text) {
                assert_eq!(normalized(text), text.to_ascii_lowercase(), "{text:?}");
            }
        }
        assert!(texts.iter().filter(|t| normalizes_to_lowercase(t)).count() > 20);
        assert_eq!(
            normalized("  Do NOT\ttell\n\n the   User "),
            "do not tell the user"
        );
        assert_eq!(normalized("Ignore\u{200B}  previous"), "ignore previous");
    }

    #[test]
    fn phrases_of_every_list_are_found_in_one_pass() {
        let set = PhraseSet::new();
        assert!(set.matcher.is_some(), "the automaton builds");
        for list in PhraseList::ALL {
            let first = set.first_of(list);
            for (i, phrase) in list.phrases().iter().enumerate() {
                assert_eq!(set.phrases[first + i], *phrase);
                let text = format!("x {phrase} y");
                let found = set.find_all(&text);
                // Phrases of other lists in the same text are found by the same pass.
                for (j, other) in set.phrases.iter().enumerate() {
                    assert_eq!(
                        found.contains(j),
                        text.contains(other),
                        "{other:?} in {text:?}"
                    );
                }
            }
        }
    }
}
