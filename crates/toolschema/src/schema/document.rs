//! One schema document, its local references resolved one way.
//!
//! Every part of the core that follows a `$ref` inside a schema asks [`Document`]: lint, generate,
//! validate's case analysis, adapt, restore and diff. It reads references as the validator does.
//! A reference resolves against the root's `$id`, or the validator's default base when there is
//! none. Its fragment is a JSON Pointer (percent-decoded, then `~1`/`~0` unescaped) or a plain
//! name (`$anchor`, `$dynamicAnchor`, or draft-07's `"$id": "#name"`). A subschema with its own
//! `$id` is a resource of its own: a reference reaches it by its URI, resolved against the
//! resource around it, and its anchors belong to it.
//!
//! The `referencing` crate the validator uses is not the resolver here, for two reasons. It
//! returns the target's contents without its location, and every caller needs the location: lint
//! maps it to a span, adapt and diff track which definitions they have entered, validate asks
//! whether the target sits in an embedded resource. And a `Registry` is built by walking and
//! copying the whole document, while nearly every reference in a tool catalog is a `#/$defs/...`
//! pointer that needs no index at all; lint and adapt meet 10,000 such schemas per catalog. The
//! URI functions the validator uses (`jsonschema::uri`) do resolve URIs here, so both read a URI
//! the same way. A property test below checks the two agree on generated schemas.

use super::vocabulary;
use crate::json::pointer::resolve;
use crate::json::Members;
use serde_json::{Map, Value};
use std::borrow::Cow;
use std::cell::OnceCell;

/// A schema document, with its resources and anchors indexed on first need.
pub(crate) struct Document<'v> {
    root: &'v Value,
    index: OnceCell<Index>,
}

/// What a reference names, found in a [`Document`].
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Target<'v> {
    /// The JSON Pointer of the target from the document's root (`""` is the root).
    pub(crate) pointer: String,
    /// The target.
    pub(crate) value: &'v Value,
}

/// Why a reference does not resolve inside a [`Document`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Unresolved {
    /// It is not a URI reference (a space, a lone `%`): the validator refuses it. Only
    /// [`Document::locate_strictly`] says so of a fragment alone.
    Malformed,
    /// It names another document.
    Elsewhere,
    /// Its fragment is a plain name that no anchor of the resource declares.
    NoAnchor,
    /// Its JSON Pointer leads to nothing.
    NoValue,
}

/// The resources and anchors of a document.
#[derive(Debug, Default)]
struct Index {
    /// Each resource: its absolute URI without fragment, and its pointer. The root comes first
    /// when its base URI can be read.
    resources: Vec<(String, String)>,
    /// Each plain-name anchor: the pointer of its resource, its name, and its pointer.
    anchors: Vec<(String, String, String)>,
}

impl<'v> Document<'v> {
    /// The document whose root is `root`.
    pub(crate) fn new(root: &'v Value) -> Document<'v> {
        Document {
            root,
            index: OnceCell::new(),
        }
    }

    /// The value `reference`, written at the root (outside any embedded resource), names.
    pub(crate) fn resolve(&self, reference: &str) -> Option<&'v Value> {
        self.locate(reference).ok().map(|target| target.value)
    }

    /// The value `reference`, written at the root (outside any embedded resource), names, with
    /// its pointer; or why it names none.
    pub(crate) fn locate(&self, reference: &str) -> Result<Target<'v>, Unresolved> {
        // The common case, a fragment alone, stays in the root resource whatever its base, and
        // a JSON Pointer fragment needs no index.
        let (resource, fragment) = match reference.strip_prefix('#') {
            Some(fragment) => (String::new(), Cow::Borrowed(fragment)),
            None => {
                let base = self.base();
                if base.is_empty() {
                    return Err(Unresolved::Elsewhere);
                }
                let uri = absolute(&base, reference).ok_or(Unresolved::Malformed)?;
                let (document, fragment) = uri.split_once('#').unwrap_or((&uri, ""));
                let resource = self
                    .index()
                    .resources
                    .iter()
                    .find(|(base, _)| base == document)
                    .map(|(_, pointer)| pointer.clone())
                    .ok_or(Unresolved::Elsewhere)?;
                (resource, Cow::Owned(fragment.to_string()))
            }
        };
        let pointer = if fragment.is_empty() || fragment.starts_with('/') {
            let decoded = percent_decode(&fragment);
            if resource.is_empty() {
                decoded
            } else {
                format!("{resource}{decoded}")
            }
        } else {
            let name = percent_decode(&fragment);
            // A name declared twice in one resource is an error of the schema; the validator
            // keeps the last, and so does this.
            self.index()
                .anchors
                .iter()
                .rev()
                .find(|(at, anchor, _)| *at == resource && *anchor == name)
                .map(|(_, _, pointer)| pointer.clone())
                .ok_or(Unresolved::NoAnchor)?
        };
        match resolve(self.root, &pointer) {
            Some(value) => Ok(Target { pointer, value }),
            None => Err(Unresolved::NoValue),
        }
    }

    /// [`Document::locate`], refusing as the validator does a fragment that is not one a URI
    /// may hold (a raw space, a lone `%`). [`Document::locate`] reads such a fragment as written,
    /// so that diff, pins and adapt still follow a definition name with a space in it; what
    /// reports whether a schema will compile asks this.
    pub(crate) fn locate_strictly(&self, reference: &str) -> Result<Target<'v>, Unresolved> {
        match reference.strip_prefix('#') {
            Some(fragment) if !is_fragment(fragment) => Err(Unresolved::Malformed),
            _ => self.locate(reference),
        }
    }

    /// [`Document::locate`] for a reference whose fragment is a JSON Pointer (or empty); one
    /// that names an anchor is not followed, for walks that leave anchors to the validator.
    pub(crate) fn locate_pointer(&self, reference: &str) -> Result<Target<'v>, Unresolved> {
        let fragment = reference.split_once('#').map_or("", |(_, f)| f);
        if !fragment.is_empty() && !fragment.starts_with('/') {
            return Err(Unresolved::NoAnchor);
        }
        self.locate(reference)
    }

    /// Follow `$ref`s from `schema` to a schema that is not only a reference (at most 16 steps).
    /// `None` when a reference does not resolve, or the chain is longer.
    pub(crate) fn follow(&self, mut schema: &'v Value) -> Option<&'v Value> {
        for _ in 0..16 {
            match schema.member("$ref").and_then(Value::as_str) {
                Some(reference) => schema = self.resolve(reference)?,
                None => return Some(schema),
            }
        }
        None
    }

    /// Whether the document embeds a resource of its own (a subschema with an `$id` that is not
    /// a plain name), inside which a `#...` reference means another place than at the root.
    pub(crate) fn embeds_resources(&self) -> bool {
        let mut embeds = false;
        walk(self.root, |location| {
            embeds |= !location.resource.is_empty();
        });
        embeds
    }

    /// The root's base URI: its `$id`, or the validator's default base.
    fn base(&self) -> String {
        let id = self.root.member("$id").and_then(Value::as_str);
        jsonschema::uri::from_str(id.unwrap_or_default())
            .map(|uri| without_fragment(uri.as_str()).to_string())
            .unwrap_or_default()
    }

    fn index(&self) -> &Index {
        self.index.get_or_init(|| {
            let mut index = Index::default();
            let root_base = self.base();
            let mut bases: Vec<(String, String)> = Vec::new();
            if !root_base.is_empty() {
                bases.push((String::new(), root_base));
            }
            walk(self.root, |location| {
                if location.starts_resource {
                    // Its URI resolves against the resource around it, seen before it.
                    let around = bases
                        .iter()
                        .rev()
                        .find(|(pointer, _)| contains(pointer, &location.pointer))
                        .map(|(_, base)| base.clone());
                    let id = location.map.member("$id").and_then(Value::as_str);
                    if let (Some(around), Some(id)) = (around, id) {
                        if let Some(uri) = absolute(&around, id) {
                            bases.push((location.pointer.clone(), without_fragment(&uri).into()));
                        }
                    }
                }
                let id_anchor = location
                    .map
                    .member("$id")
                    .and_then(Value::as_str)
                    .and_then(|id| id.strip_prefix('#'));
                let anchors = ["$anchor", "$dynamicAnchor"]
                    .iter()
                    .filter_map(|k| location.map.member(k).and_then(Value::as_str))
                    .chain(id_anchor);
                for name in anchors {
                    index.anchors.push((
                        location.resource.clone(),
                        name.to_string(),
                        location.pointer.clone(),
                    ));
                }
            });
            index.resources = bases
                .into_iter()
                .map(|(pointer, base)| (base, pointer))
                .collect();
            index
        })
    }
}

/// `reference` resolved against `base`, as the validator resolves it. `None` when either is
/// not a URI (reference).
fn absolute(base: &str, reference: &str) -> Option<String> {
    let base = jsonschema::uri::from_str(base).ok()?;
    let resolved = jsonschema::uri::resolve_against(&base.borrow(), reference).ok()?;
    Some(resolved.as_str().to_string())
}

/// Whether `text` is a URI fragment as RFC 3986 writes it: unreserved characters,
/// sub-delimiters, `:`, `@`, `/`, `?`, and `%` escapes of two hex digits.
fn is_fragment(text: &str) -> bool {
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'%' => {
                if !bytes
                    .get(i + 1..i + 3)
                    .is_some_and(|h| h.iter().all(u8::is_ascii_hexdigit))
                {
                    return false;
                }
                i += 3;
                continue;
            }
            b'-' | b'.' | b'_' | b'~' | b'!' | b'$' | b'&' | b'\'' | b'(' | b')' | b'*' | b'+'
            | b',' | b';' | b'=' | b':' | b'@' | b'/' | b'?' => {}
            b if b.is_ascii_alphanumeric() => {}
            _ => return false,
        }
        i += 1;
    }
    true
}

/// Whether the location at `inner` is at or below the one at `outer` (both JSON Pointers).
fn contains(outer: &str, inner: &str) -> bool {
    inner
        .strip_prefix(outer)
        .is_some_and(|rest| rest.is_empty() || rest.starts_with('/'))
}

fn without_fragment(uri: &str) -> &str {
    uri.split('#').next().unwrap_or(uri)
}

/// One subschema met by [`walk`].
pub(crate) struct Location<'v> {
    /// Its JSON Pointer from the root.
    pub(crate) pointer: String,
    /// The pointer of the resource it belongs to (`""`: the root's).
    pub(crate) resource: String,
    /// Whether it starts a resource of its own (an `$id` that is not a plain name).
    pub(crate) starts_resource: bool,
    /// The subschema.
    pub(crate) map: &'v Map<String, Value>,
}

/// Visit every subschema object of `schema` (the keywords that hold subschemas come from the
/// vocabulary), parents before children, in document order, without recursion.
pub(crate) fn walk<'v>(schema: &'v Value, mut visit: impl FnMut(&Location<'v>)) {
    let mut stack = vec![(String::new(), String::new())];
    while let Some((pointer, resource)) = stack.pop() {
        let Some(Value::Object(map)) = resolve(schema, &pointer) else {
            continue;
        };
        let starts_resource = !pointer.is_empty()
            && map
                .get("$id")
                .and_then(Value::as_str)
                .is_some_and(|id| !id.starts_with('#'));
        let resource = if starts_resource {
            pointer.clone()
        } else {
            resource
        };
        // Children in document order; pushed reversed so they are visited in that order.
        let children: Vec<String> = vocabulary::subschemas(map)
            .map(|sub| sub.pointer(&pointer))
            .collect();
        stack.extend(children.into_iter().rev().map(|c| (c, resource.clone())));
        visit(&Location {
            pointer,
            resource,
            starts_resource,
            map,
        });
    }
}

/// Every subschema location (JSON Pointer) in `schema`, with the pointer of the schema resource
/// (`$id`) it belongs to (see [`walk`]).
pub(crate) fn subschemas(schema: &Value) -> Vec<(String, String)> {
    let mut out = Vec::new();
    walk(schema, |location| {
        out.push((location.pointer.clone(), location.resource.clone()))
    });
    out
}

/// The JSON Pointer a fragment-only reference (`#`, `#/...`) names, decoded, without looking
/// it up; `None` for any other reference. For comparing references as written.
pub(crate) fn fragment_pointer(reference: &str) -> Option<String> {
    let fragment = reference.strip_prefix('#')?;
    (fragment.is_empty() || fragment.starts_with('/')).then(|| percent_decode(fragment))
}

/// Decode the `%XX` escapes of a URI fragment.
pub(crate) fn percent_decode(text: &str) -> String {
    if !text.contains('%') {
        return text.to_string();
    }
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            if let Some(byte) = text
                .get(i + 1..i + 3)
                .and_then(|h| u8::from_str_radix(h, 16).ok())
            {
                out.push(byte);
                i += 3;
                continue;
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{json, Map};

    fn pointer_of(document: &Document<'_>, reference: &str) -> Option<String> {
        document.locate(reference).ok().map(|t| t.pointer)
    }

    #[test]
    fn references_resolve_as_the_validator_reads_them() {
        let plain =
            json!({"type": "object", "$defs": {"a b": {}, "x/y": {}, "i": {"$anchor": "item"}}});
        let doc = Document::new(&plain);
        assert_eq!(pointer_of(&doc, "#").as_deref(), Some(""));
        assert_eq!(
            pointer_of(&doc, "#/$defs/a%20b").as_deref(),
            Some("/$defs/a b")
        );
        assert_eq!(
            pointer_of(&doc, "#/$defs/x~1y").as_deref(),
            Some("/$defs/x~1y")
        );
        assert_eq!(doc.resolve("#/$defs/x~1y"), Some(&plain["$defs"]["x/y"]));
        assert_eq!(pointer_of(&doc, "#item").as_deref(), Some("/$defs/i"));
        assert_eq!(doc.locate("#nothing"), Err(Unresolved::NoAnchor));
        // A raw space is no URI; the validator refuses it, a reader of the text need not.
        assert_eq!(
            pointer_of(&doc, "#/$defs/a b").as_deref(),
            Some("/$defs/a b")
        );
        assert_eq!(
            doc.locate_strictly("#/$defs/a b"),
            Err(Unresolved::Malformed)
        );
        assert_eq!(
            doc.locate_strictly("#/$defs/a%20b"),
            doc.locate("#/$defs/a%20b")
        );
        assert_eq!(doc.locate("#/$defs/z"), Err(Unresolved::NoValue));
        assert_eq!(
            doc.locate("https://example.com/s.json#/x"),
            Err(Unresolved::Elsewhere)
        );
        // Without `$id`, the validator's default base: a relative name is another document.
        assert_eq!(doc.locate("s.json#/x"), Err(Unresolved::Elsewhere));

        let with_id = json!({"$id": "https://example.com/schemas/s.json", "$defs": {"o": {}}});
        let doc = Document::new(&with_id);
        for same in [
            "https://example.com/schemas/s.json#/$defs/o",
            "s.json#/$defs/o",
            "./s.json#/$defs/o",
            "../schemas/s.json#/$defs/o",
        ] {
            assert_eq!(
                pointer_of(&doc, same).as_deref(),
                Some("/$defs/o"),
                "{same}"
            );
        }
        assert_eq!(
            doc.locate("https://example.com/s.json"),
            Err(Unresolved::Elsewhere)
        );
        assert_eq!(
            pointer_of(&doc, "https://example.com/schemas/s.json").as_deref(),
            Some("")
        );
        assert_eq!(
            doc.locate("other.json#/$defs/o"),
            Err(Unresolved::Elsewhere)
        );
    }

    #[test]
    fn embedded_resources_are_reached_by_their_uri_and_keep_their_anchors() {
        let schema = json!({"$id": "https://example.com/root.json", "$defs": {
            "a": {"$anchor": "thing"},
            "b": {"$id": "b.json", "$defs": {"c": {"$anchor": "inner"}}}}});
        let doc = Document::new(&schema);
        assert_eq!(pointer_of(&doc, "#thing").as_deref(), Some("/$defs/a"));
        assert_eq!(pointer_of(&doc, "b.json").as_deref(), Some("/$defs/b"));
        assert_eq!(
            pointer_of(&doc, "https://example.com/b.json#/$defs/c").as_deref(),
            Some("/$defs/b/$defs/c")
        );
        assert_eq!(
            pointer_of(&doc, "b.json#inner").as_deref(),
            Some("/$defs/b/$defs/c")
        );
        // An anchor belongs to its resource, not to the root's.
        assert_eq!(doc.locate("#inner"), Err(Unresolved::NoAnchor));
        assert!(doc.embeds_resources());
        assert!(!Document::new(&json!({"$defs": {"a": {"$id": "#a"}}})).embeds_resources());
        // draft-07 names a location with `"$id": "#name"`.
        let draft7 = json!({"definitions": {"a": {"$id": "#a"}}});
        assert_eq!(
            pointer_of(&Document::new(&draft7), "#a").as_deref(),
            Some("/definitions/a")
        );
    }

    /// Definition names that need escaping in a pointer (`/`, `~`), in a URI (space, `%`), or
    /// both, and one that is not ASCII.
    const NAMES: [&str; 8] = ["a", "a b", "x/y", "t~n", "p%q", "~1", "ü", "x"];

    /// `name` as a pointer segment (`~0`, `~1`), then percent-encoded where a URI needs it (and,
    /// when `extra`, every letter `a` as well, which a reader must decode the same).
    fn encoded(name: &str, extra: bool) -> String {
        let mut out = String::new();
        for c in name.replace('~', "~0").replace('/', "~1").chars() {
            match c {
                ' ' | '%' => out.push_str(&format!("%{:02X}", c as u32)),
                'a' if extra => out.push_str("%61"),
                c if !c.is_ascii() => {
                    let mut bytes = [0; 4];
                    for b in c.encode_utf8(&mut bytes).bytes() {
                        out.push_str(&format!("%{b:02X}"));
                    }
                }
                c => out.push(c),
            }
        }
        out
    }

    /// A reference, of one of the shapes a schema writes: a pointer to a definition (escaped,
    /// percent-encoded), to none, an anchor, through the root's `$id`, into the embedded
    /// resource, or to another document.
    fn reference() -> impl proptest::strategy::Strategy<Value = String> {
        use proptest::prelude::*;
        let name = proptest::sample::select(NAMES.to_vec());
        prop_oneof![
            (name.clone(), any::<bool>())
                .prop_map(|(n, extra)| format!("#/$defs/{}", encoded(n, extra))),
            name.clone().prop_map(|n| format!("#/$defs/{n}")),
            Just("#/$defs/missing".to_string()),
            Just("#".to_string()),
            "[a-c]".prop_map(|a| format!("#{a}")),
            (
                proptest::sample::select(vec!["s.json", "./s.json", "dir/s.json", "other.json"]),
                name
            )
                .prop_map(|(doc, n)| format!("{doc}#/$defs/{}", encoded(n, false))),
            proptest::sample::select(vec![
                "inner.json",
                "inner.json#/$defs/c",
                "inner.json#/$defs/a",
                "inner.json#c",
                "inner.json#a",
                "#c",
                "#/$defs/inner/$defs/c",
                "https://example.com/inner.json#c",
            ])
            .prop_map(str::to_string),
        ]
    }

    /// A schema whose property `p` holds `reference`, with definitions (each a `const` of its
    /// own, some with anchors), maybe a root `$id`, maybe an embedded resource.
    fn schema() -> impl proptest::strategy::Strategy<Value = Value> {
        use proptest::prelude::*;
        let anchors = proptest::collection::vec(proptest::option::of("[a-c]"), NAMES.len());
        let root_id = proptest::option::of(proptest::sample::select(vec![
            "https://example.com/s.json",
            "https://example.com/dir/s.json",
        ]));
        (
            proptest::collection::vec(any::<bool>(), NAMES.len()),
            anchors,
            root_id,
            any::<bool>(),
            reference(),
        )
            .prop_map(|(present, anchors, root_id, inner, reference)| {
                let mut defs = Map::new();
                for (i, name) in NAMES.iter().enumerate() {
                    if !present[i] {
                        continue;
                    }
                    let mut def = json!({"const": i});
                    if let Some(anchor) = &anchors[i] {
                        def["$anchor"] = json!(anchor);
                    }
                    defs.insert(name.to_string(), def);
                }
                if inner {
                    defs.insert(
                        "inner".into(),
                        json!({"$id": "inner.json", "$defs": {"c": {"const": 100, "$anchor": "c"}}}),
                    );
                }
                let mut schema = json!({"$defs": defs, "properties": {"p": {"$ref": reference}}});
                if let Some(id) = root_id {
                    schema["$id"] = json!(id);
                }
                schema
            })
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(1024))]

        /// The one resolver (read strictly) and the validator agree on which references
        /// resolve, and on what they reach: the `const` of the target the resolver finds is what the validator
        /// accepts through the reference.
        #[test]
        fn the_resolver_and_the_validator_agree(schema in schema()) {
            let reference = schema["properties"]["p"]["$ref"].as_str().unwrap();
            let found = Document::new(&schema).locate_strictly(reference).ok().map(|t| t.value);
            let validator = jsonschema::validator_for(&schema);
            proptest::prop_assert_eq!(
                found.is_some(),
                validator.is_ok(),
                "{} in {}: {:?}",
                reference,
                schema,
                validator.as_ref().err().map(ToString::to_string)
            );
            if let (Some(constant), Ok(validator)) =
                (found.and_then(|target| target.get("const")), validator)
            {
                let instance = json!({"p": constant});
                proptest::prop_assert!(validator.is_valid(&instance), "{} in {}", reference, schema);
                let other = json!({"p": -1});
                proptest::prop_assert!(!validator.is_valid(&other), "{} in {}", reference, schema);
            }
        }
    }

    #[test]
    fn follows_chains_of_references() {
        let schema = json!({"$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"type": "string"},
            "loop": {"$ref": "#/$defs/loop"}}});
        let doc = Document::new(&schema);
        assert_eq!(
            doc.follow(&schema["$defs"]["a"]),
            Some(&schema["$defs"]["b"])
        );
        assert_eq!(doc.follow(&schema["$defs"]["loop"]), None);
    }
}
