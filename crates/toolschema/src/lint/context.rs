//! What a rule sees of one tool, and where it reports.

use super::diagnostic::{Applicability, Diagnostic, Edit, Fix};
use super::registry::Rule;
use super::schema_walk::{walk, Combinator, Role, SchemaNode};
use super::texts::{self, ToolStrings};
use super::translated::Translated;
use crate::adapt::{self, Profile};
use crate::catalog::SourceTool;
use crate::json::pointer::{push_segment, split_pointer};
use crate::json::Members;
use crate::json::{Position, SpanEntry, Spans};
use crate::schema::document::Document;
use crate::schema::is_object_schema;
use crate::schema::{detect_dialect, detect_shape, vocabulary, Dialect, SchemaError, SchemaShape};
use serde_json::{Map, Value};
use std::collections::HashMap;
use std::sync::Arc;

/// A tool's `inputSchema` or `outputSchema`, with its subschemas.
pub(crate) struct SchemaDoc<'a> {
    /// `inputSchema` or `outputSchema`.
    pub field: &'static str,
    /// The schema the rules read (an object): as written, or the standard translation of a
    /// lightweight shape.
    pub value: &'a Value,
    /// The schema as written.
    pub written: &'a Value,
    /// Whether `value` is the translation of a lightweight shape: findings in it carry no fix.
    pub translated: bool,
    /// Its index in the tool's spans.
    pub span: usize,
    /// JSON Pointer to it in the file.
    pub pointer: String,
    /// The shape it is written in.
    pub shape: SchemaShape,
    /// Its dialect, from `$schema`.
    pub dialect: Result<Dialect, SchemaError>,
    /// Every subschema, root first; empty for a lightweight shape that does not translate.
    pub nodes: Vec<SchemaNode<'a>>,
    /// Local pointers of schemas a `$ref` composes in place (from an `allOf` branch, or next to
    /// `properties`): tightening them alone would reject what the other parts declare.
    composed: Vec<String>,
    /// The addresses of the schemas a `$ref` reaches from a place where other schemas apply to
    /// the same value (a branch, `if`/`then`/`else`, `not`, a `$ref` beside other keywords),
    /// directly or through more references: closing them alone could reject what the other
    /// schemas declare.
    shared: Vec<usize>,
    /// Each `$ref` that reaches a subschema: (index of the target in `nodes`, index of the node
    /// holding the `$ref`), sorted by target.
    references: Vec<(usize, usize)>,
    /// Whether every reference was followed to a subschema in `nodes` (see
    /// [`SchemaDoc::references_understood`]).
    references_understood: bool,
}

/// Whether `key`, beside a `$ref`, leaves it a plain use of what it points at: the `$ref` itself
/// or an annotation, which says something about the schema without constraining its value.
pub(crate) fn leaves_ref_plain(key: &str) -> bool {
    key == "$ref" || vocabulary::is_annotation(key)
}

impl<'a> SchemaDoc<'a> {
    fn new(
        field: &'static str,
        value: &'a Value,
        span: usize,
        spans: &Spans,
        tool_pointer: &str,
    ) -> Self {
        let pointer = push_segment(tool_pointer, field);
        let shape = if field == "inputSchema" {
            detect_shape(value)
        } else {
            SchemaShape::Standard
        };
        let nodes = if shape.is_lightweight() {
            Vec::new()
        } else {
            walk(value, spans, span)
        };
        let mut doc = SchemaDoc {
            field,
            value,
            written: value,
            translated: false,
            span,
            dialect: detect_dialect(value),
            pointer,
            shape,
            nodes,
            composed: Vec::new(),
            shared: Vec::new(),
            references: Vec::new(),
            references_understood: true,
        };
        doc.find_references();
        doc.composed = doc
            .nodes
            .iter()
            .filter(|n| {
                n.role == Role::Branch(Combinator::AllOf)
                    || n.object().is_some_and(|m| {
                        m.len() > 1 && n.value.as_object().is_some_and(is_object_schema)
                    })
            })
            .filter_map(|n| doc.resolve_ref(n.value.member("$ref")?.as_str()?))
            .filter_map(|target| doc.nodes.iter().find(|n| std::ptr::eq(n.value, target)))
            .map(|n| n.local.clone())
            .collect();
        doc.shared = doc.find_shared();
        doc
    }

    /// Follow every reference to the subschema it reaches, and note whether each one could be.
    fn find_references(&mut self) {
        let holds_reference = |n: &SchemaNode<'_>| {
            n.object()
                .is_some_and(|m| vocabulary::references().any(|k| m.member(k).is_some()))
        };
        // A nested `$id` starts a resource of its own, against which the references inside it
        // resolve; these are read as relative to the root only, so the lint gives up on them.
        let embeds_resources = self.nodes.iter().skip(1).any(|n| {
            n.value
                .member("$id")
                .and_then(Value::as_str)
                .is_some_and(|id| !id.starts_with('#'))
        });
        if !self.nodes.iter().any(holds_reference) && !embeds_resources {
            return;
        }
        let index_of: HashMap<usize, usize> = self
            .nodes
            .iter()
            .enumerate()
            .map(|(i, n)| (n.value as *const Value as usize, i))
            .collect();
        let mut understood = !embeds_resources;
        let mut references = Vec::new();
        for (i, node) in self.nodes.iter().enumerate() {
            let Some(map) = node.object() else { continue };
            if map.member("$dynamicRef").is_some() || map.member("$recursiveRef").is_some() {
                // Resolved at evaluation time, from where the evaluation came.
                understood = false;
            }
            let Some(reference) = map.member("$ref") else {
                continue;
            };
            let target = reference
                .as_str()
                .and_then(|r| self.resolve_ref(r))
                .and_then(|t| index_of.get(&(t as *const Value as usize)));
            match target {
                Some(&target) => references.push((target, i)),
                None => understood = false,
            }
        }
        references.sort_unstable();
        self.references = references;
        self.references_understood = understood;
    }

    /// The indexes of the nodes whose `$ref` reaches the node at `target` (an index into
    /// `nodes`): every other place the target's schema applies.
    pub fn referrers_of(&self, target: usize) -> impl Iterator<Item = usize> + '_ {
        let start = self.references.partition_point(|(t, _)| *t < target);
        self.references[start..]
            .iter()
            .take_while(move |(t, _)| *t == target)
            .map(|(_, referrer)| *referrer)
    }

    /// Whether every reference in the schema was followed to a subschema the rules see: none
    /// points outside the schema, at nothing, or at a value that is not one of `nodes`; there is
    /// no `$dynamicRef`/`$recursiveRef` and no embedded resource (a nested `$id`). When not, a
    /// rule cannot know every place a subschema applies.
    pub fn references_understood(&self) -> bool {
        self.references_understood
    }

    /// The targets of `$ref`s used where other schemas apply to the same value (see
    /// [`SchemaDoc::shares_its_value`]).
    fn find_shared(&self) -> Vec<usize> {
        let address = |v: &Value| v as *const Value as usize;
        let mut shared: Vec<usize> = Vec::new();
        let mut pending: Vec<&Value> = Vec::new();
        for node in &self.nodes {
            let Some(map) = node.object() else { continue };
            if map.member("$ref").is_none() {
                continue;
            }
            let beside_others = map.keys().any(|k| !leaves_ref_plain(k));
            if node.inert || matches!(node.role, Role::Branch(_) | Role::Other) || beside_others {
                pending.push(node.value);
            }
        }
        // Follow each reference, and the references of what it reaches.
        let mut steps = 0;
        while let Some(holder) = pending.pop() {
            steps += 1;
            if steps > 4096 {
                break;
            }
            let Some(reference) = holder.member("$ref").and_then(Value::as_str) else {
                continue;
            };
            let Some(target) = self.resolve_ref(reference) else {
                continue;
            };
            if !shared.contains(&address(target)) {
                shared.push(address(target));
                pending.push(target);
            }
        }
        shared
    }

    /// Whether other schemas apply to the same value as `node`: it is a branch of
    /// `allOf`/`anyOf`/`oneOf`, sits under `not`/`if`/`then`/`else` and the like, or a `$ref` from
    /// such a place (or from beside other keywords) reaches it.
    pub fn shares_its_value(&self, node: &SchemaNode<'_>) -> bool {
        node.inert
            || matches!(node.role, Role::Branch(_) | Role::Other)
            || self.shared.contains(&(node.value as *const Value as usize))
    }

    /// A fix for a finding in this schema; none in a translation (its edits would land in text
    /// that is not in the file).
    pub fn fix(
        &self,
        report: &Report<'_>,
        applicability: Applicability,
        title: impl Into<std::borrow::Cow<'static, str>>,
        edit: impl FnOnce() -> Option<Edit>,
    ) -> Option<Fix> {
        if self.translated {
            return None;
        }
        report.fix(applicability, title, edit)
    }

    /// The JSON Pointer of `node` in the file.
    pub fn pointer_of(&self, node: &SchemaNode<'_>) -> String {
        [self.pointer.as_str(), node.local.as_str()].concat()
    }

    /// The property schemas in the document (members of `properties` at any depth), with their
    /// names.
    pub fn properties(&self) -> impl Iterator<Item = (&SchemaNode<'a>, &'a str)> {
        self.nodes.iter().filter_map(|node| match node.role {
            Role::Property { name } => Some((node, name)),
            _ => None,
        })
    }

    /// Whether the rules that tighten a schema (SCH-001 to SCH-004, SCH-010) may flag `node`:
    /// not under `not`/`if`/`then`/`else` and the like, not an `allOf` branch, not a definition
    /// composed in place by a `$ref`.
    pub fn tightenable(&self, node: &SchemaNode<'_>) -> bool {
        !node.inert
            && !matches!(node.role, Role::Branch(Combinator::AllOf) | Role::Other)
            && !self.composed.contains(&node.local)
    }

    /// The value a `$ref` inside the schema points at (`#`, `#/json/pointer`, `#anchor`, or the
    /// same through the root's `$id`), if it resolves. `None` for references to other documents.
    pub fn resolve_ref(&self, reference: &str) -> Option<&'a Value> {
        Document::new(self.value).resolve(reference)
    }

    /// Follow `$ref`s from `schema` to a schema that is not only a reference (at most 16 steps).
    /// `None` when a reference does not resolve.
    pub fn follow_refs(&self, schema: &'a Value) -> Option<&'a Value> {
        Document::new(self.value).follow(schema)
    }

    /// The span index of the value at `local` (a pointer relative to the schema root).
    pub fn span_of(&self, spans: &Spans, local: &str) -> Option<usize> {
        let mut index = self.span;
        let mut value = self.value;
        for segment in split_pointer(local) {
            (index, value) = child_span(spans, index, value, &segment)?;
        }
        Some(index)
    }
}

/// One step down a pointer: the span index and value of `value`'s member or element named
/// `segment`, where `index` is the span of `value`.
fn child_span<'v>(
    spans: &Spans,
    index: usize,
    value: &'v Value,
    segment: &str,
) -> Option<(usize, &'v Value)> {
    match value {
        Value::Object(map) => map
            .iter()
            .zip(spans.children(index))
            .find(|((k, _), _)| *k == segment)
            .map(|((_, v), i)| (i, v)),
        Value::Array(items) => {
            let n: usize = segment.parse().ok()?;
            Some((spans.children(index).nth(n)?, items.get(n)?))
        }
        _ => None,
    }
}

/// The first tool of a file with a given name.
#[derive(Debug, Clone)]
pub(crate) struct EarlierTool {
    pub pointer: String,
    pub position: Position,
}

/// The first tool of each name seen so far in a file, by name (shared with the tool's findings),
/// and, when a rule compares names by how they look, by the skeleton of the name.
pub(crate) struct EarlierTools {
    by_name: HashMap<Arc<str>, EarlierTool>,
    by_skeleton: Option<HashMap<String, Arc<str>>>,
}

impl EarlierTools {
    /// Room for `tools` names; `skeletons` when a rule asks for [`EarlierTools::confusable`].
    pub fn new(tools: usize, skeletons: bool) -> Self {
        EarlierTools {
            by_name: HashMap::with_capacity(tools),
            by_skeleton: skeletons.then(|| HashMap::with_capacity(tools)),
        }
    }

    /// The first earlier tool named `name`.
    pub fn get(&self, name: &str) -> Option<&EarlierTool> {
        self.by_name.get(name)
    }

    /// The first earlier tool whose name is not `name` but looks the same: has the same
    /// [`skeleton`].
    pub fn confusable(&self, name: &str, skeleton: &str) -> Option<(&str, &EarlierTool)> {
        let first = self.by_skeleton.as_ref()?.get(skeleton)?;
        if **first == *name {
            return None;
        }
        Some((first, self.by_name.get(first)?))
    }

    /// Record the first tool of a name, with its [`skeleton`] when skeletons are kept; later
    /// tools of the same name change nothing.
    pub fn insert_first(
        &mut self,
        name: &Arc<str>,
        skeleton: Option<String>,
        first: impl FnOnce() -> EarlierTool,
    ) {
        if let std::collections::hash_map::Entry::Vacant(entry) =
            self.by_name.entry(Arc::clone(name))
        {
            entry.insert(first());
            if let (Some(skeletons), Some(skeleton)) = (&mut self.by_skeleton, skeleton) {
                skeletons
                    .entry(skeleton)
                    .or_insert_with(|| Arc::clone(name));
            }
        }
    }
}

/// What a name looks like: its Unicode confusable skeleton (UTS #39: Cyrillic `а` and Latin `a`,
/// `rn` and `m`, `1` and `l` fold together), lowercased.
pub(crate) fn skeleton(name: &str) -> String {
    if name.is_ascii() {
        // Most names are ASCII: each character's skeleton from a table, joined (the test
        // `ascii_skeletons_join_like_the_whole_name` shows joining matches the whole name's).
        let table = &*ASCII_SKELETONS;
        let mut out = String::with_capacity(name.len());
        for byte in name.bytes() {
            out.push_str(&table[usize::from(byte)]);
        }
        return out;
    }
    full_skeleton(name)
}

/// [`skeleton`] by the UTS #39 algorithm itself (decompose, map, decompose again).
fn full_skeleton(name: &str) -> String {
    unicode_security::skeleton(name)
        .flat_map(char::to_lowercase)
        .collect()
}

/// The skeleton of each ASCII character, by its code.
static ASCII_SKELETONS: std::sync::LazyLock<Vec<String>> = std::sync::LazyLock::new(|| {
    (0u8..128)
        .map(|byte| full_skeleton(&char::from(byte).to_string()))
        .collect()
});

/// A tool's name, for the rules that read names in file order.
pub(crate) struct NamedTool<'a> {
    pub name: &'a str,
    /// Its [`skeleton`], when a rule compares names by how they look.
    pub skeleton: Option<&'a str>,
    /// JSON Pointer to the tool.
    pub pointer: &'a str,
    /// Byte offset of the `name` member.
    pub name_offset: usize,
}

/// One tool as the rules see it.
pub(crate) struct ToolContext<'a> {
    /// The whole file.
    pub text: &'a str,
    /// The tool as written, with spans into `text`.
    pub tool: &'a SourceTool,
    /// The tool's members, when it is an object.
    pub fields: Option<&'a Map<String, Value>>,
    /// Its name, when it is a string.
    pub name: Option<&'a str>,
    /// `inputSchema`, when it is an object.
    pub input: Option<SchemaDoc<'a>>,
    /// `outputSchema`, when it is an object.
    pub output: Option<SchemaDoc<'a>>,
    /// Per-run caches shared by the tools of a file.
    pub cache: &'a RunCache,
    /// Every string of the tool, found when a rule first asks ([`ToolContext::strings`]).
    strings: std::cell::OnceCell<ToolStrings<'a>>,
    /// The providers the `COMPAT-*` rules check.
    pub targets: &'a [&'static Profile],
    /// What adapting the tool to each target finds, computed once for all `COMPAT-*` rules.
    pub compat: std::cell::OnceCell<Vec<(&'static Profile, adapt::Check)>>,
}

/// Things compiled once per run and reused across tools.
#[derive(Default)]
pub(crate) struct RunCache {
    /// Compiled `pattern`s (`None` when the engine refuses the pattern).
    pub patterns: std::cell::RefCell<HashMap<String, Option<jsonschema::Validator>>>,
    /// The spans buffer of the last tool, reused for the next one.
    pub spans: std::cell::Cell<Vec<SpanEntry>>,
}

impl<'a> ToolContext<'a> {
    /// The rules' view of `tool`; `translated` is its stand-in when its `inputSchema` is a
    /// lightweight shape (see [`super::translated`]).
    pub(crate) fn new(
        text: &'a str,
        tool: &'a SourceTool,
        translated: Option<&'a Translated>,
        cache: &'a RunCache,
        targets: &'a [&'static Profile],
    ) -> Self {
        let tool = translated.map_or(tool, |t| &t.tool);
        let fields = tool.value.as_object();
        let member = |key: &str| -> Option<(&'a Value, usize)> {
            fields?
                .iter()
                .zip(tool.spans.children(0))
                .find(|((k, _), _)| *k == key)
                .map(|((_, v), i)| (v, i))
        };
        let schema = |field: &'static str| {
            member(field)
                .filter(|(v, _)| v.is_object())
                .map(|(v, span)| SchemaDoc::new(field, v, span, &tool.spans, &tool.pointer))
        };
        let mut input = schema("inputSchema");
        if let (Some(doc), Some(translated)) = (input.as_mut(), translated) {
            doc.written = &translated.written;
            doc.shape = translated.shape;
            doc.translated = true;
        }
        ToolContext {
            text,
            tool,
            fields,
            name: fields
                .and_then(|f| f.member("name"))
                .and_then(Value::as_str),
            input,
            output: schema("outputSchema"),
            cache,
            strings: std::cell::OnceCell::new(),
            targets,
            compat: std::cell::OnceCell::new(),
        }
    }

    /// Every string of the tool, member names included, in document order, each with its kind;
    /// found once and shared by the rules that read words.
    pub fn strings(&self) -> &ToolStrings<'a> {
        self.strings.get_or_init(|| texts::strings(self))
    }

    /// The tool's spans.
    pub fn spans(&self) -> &'a Spans {
        &self.tool.spans
    }

    /// The span index of a member of the tool object.
    pub fn field_span(&self, key: &str) -> Option<usize> {
        self.member_span(&self.tool.value, 0, key)
    }

    /// The input schema in standard JSON Schema: as written, or translated from a lightweight
    /// shape. `None` for a lightweight shape that does not translate.
    pub fn standard_input(&self) -> Option<&SchemaDoc<'a>> {
        self.input
            .as_ref()
            .filter(|s| s.translated || !s.shape.is_lightweight())
    }

    /// The schemas a rule about any schema looks at: the standard input schema, then the output
    /// schema.
    pub fn standard_schemas(&self) -> impl Iterator<Item = &SchemaDoc<'a>> {
        self.standard_input()
            .into_iter()
            .chain(self.output.as_ref())
    }

    /// The span index of the value at `pointer` (a JSON Pointer into the tool), or of its deepest
    /// ancestor that exists; with the pointer of that value.
    pub fn deepest_span(&self, pointer: &str) -> (usize, String) {
        let mut index = 0;
        let mut value = &self.tool.value;
        let mut found = String::new();
        for segment in split_pointer(pointer) {
            let Some((i, v)) = child_span(self.spans(), index, value, &segment) else {
                break;
            };
            index = i;
            value = v;
            found = push_segment(&found, &segment);
        }
        (index, found)
    }

    /// The span index of `member` inside the object whose span is `object`.
    pub fn member_span(&self, object: &Value, object_span: usize, member: &str) -> Option<usize> {
        object
            .as_object()?
            .keys()
            .zip(self.spans().children(object_span))
            .find(|(k, _)| *k == member)
            .map(|(_, i)| i)
    }
}

impl ToolContext<'_> {
    /// For a schema whose root must be `"type": "object"` (SCH-005, OUT-001): when it is not, the
    /// finding (pointer, span, message), at the `type` member when there is one, else at the
    /// schema. `field` names the schema in the message; `when_missing` and `when_wrong` say what
    /// is required when `type` is absent or is something else.
    pub fn root_type_finding(
        &self,
        (schema, schema_span, schema_pointer): (&Value, usize, &str),
        field: &str,
        when_missing: &str,
        when_wrong: &str,
    ) -> Option<(String, usize, String)> {
        let message = match schema.as_object()?.member("type") {
            Some(Value::String(t)) if t == "object" => return None,
            None => format!("{field} has no \"type\": {when_missing}"),
            Some(other) => format!("{field} root has \"type\": {other}: {when_wrong}"),
        };
        Some(match self.member_span(schema, schema_span, "type") {
            Some(type_span) => (format!("{schema_pointer}/type"), type_span, message),
            None => (schema_pointer.to_string(), schema_span, message),
        })
    }
}

/// Where the rules of one tool put their findings.
pub(crate) struct Report<'a> {
    pub(crate) rule: &'static Rule,
    pub(crate) tool: Option<Arc<str>>,
    pub(crate) spans: &'a Spans,
    pub(crate) diagnostics: Vec<Diagnostic>,
    /// Whether fixes carry their edits (see [`super::Linter::with_edits`]).
    pub(crate) with_edits: bool,
}

impl Report<'_> {
    /// A fix; its edit is built only when the run wants edits.
    pub fn fix(
        &self,
        applicability: Applicability,
        title: impl Into<std::borrow::Cow<'static, str>>,
        edit: impl FnOnce() -> Option<Edit>,
    ) -> Option<Fix> {
        let edits = if self.with_edits {
            vec![edit()?]
        } else {
            Vec::new()
        };
        Some(Fix {
            applicability,
            title: title.into(),
            edits,
        })
    }

    /// Report a finding about the value at `pointer` (a JSON Pointer into the file) whose span
    /// index is `span`.
    pub fn add(&mut self, pointer: String, span: usize, message: String) -> &mut Diagnostic {
        let offset = self.spans.get(span).map_or(0, |s| s.anchor() as usize);
        self.add_at(pointer, offset, message)
    }

    /// Report a finding at byte `offset` of the file.
    pub fn add_at(&mut self, pointer: String, offset: usize, message: String) -> &mut Diagnostic {
        self.diagnostics.push(Diagnostic {
            rule: self.rule,
            tool: self.tool.clone(),
            pointer,
            offset,
            position: Position { line: 0, column: 0 },
            severity: self.rule.severity,
            message,
            fix: None,
        });
        let last = self.diagnostics.len() - 1;
        &mut self.diagnostics[last]
    }

    /// Report a finding with an optional fix.
    pub fn add_with_fix(
        &mut self,
        pointer: String,
        span: usize,
        message: String,
        fix: Option<Fix>,
    ) {
        self.add(pointer, span, message).fix = fix;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ascii_skeletons_join_like_the_whole_name() {
        // Every pair of ASCII characters: joining the characters' skeletons gives the skeleton of
        // the pair, so nothing in one character's skeleton reorders against the next one's.
        for a in 0u8..128 {
            for b in 0u8..128 {
                let pair: String = [char::from(a), char::from(b)].iter().collect();
                assert_eq!(skeleton(&pair), full_skeleton(&pair), "{pair:?}");
            }
        }
        assert_eq!(skeleton("rn_l0"), skeleton("m_I0"));
        assert_eq!(skeleton("read_file"), full_skeleton("read_file"));
        assert_eq!(skeleton("reаd_file"), skeleton("read_file"), "Cyrillic а");
    }
}
