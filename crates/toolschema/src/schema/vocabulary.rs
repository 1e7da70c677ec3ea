//! The JSON Schema vocabulary: one table from keyword to what it does, per dialect.
//!
//! Every part of the core that needs to know what a keyword is (an applicator, an assertion on
//! strings, an annotation, a reference) asks this table instead of keeping a list of its own, so
//! a new keyword is added here once and two parts cannot disagree about it.

use super::Dialect;
use crate::json::pointer::push_segment;
use serde_json::{Map, Value};
use std::collections::HashMap;
use std::sync::OnceLock;

/// What a keyword does to the value a schema is applied to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// Refers to another schema, applied in place: `$ref`, `$dynamicRef`, `$recursiveRef`.
    Reference,
    /// Applies its subschemas to the same value: `allOf`, `not`, `if`, `dependentSchemas`, ...
    InPlace,
    /// Applies its subschemas to members or items of the value: `properties`, `items`, ...
    Child,
    /// Holds schemas that apply only where a reference leads: `$defs`, `definitions`.
    Definitions,
    /// Accepts or refuses values: `type`, `minLength`, `required`, ...
    Assertion,
    /// Describes and never refuses: `title`, `default`, `contentSchema`, ...
    Annotation,
    /// `format`: describes, and refuses only when the validator is asked to assert formats.
    Format,
    /// Names the schema or its dialect: `$id`, `$anchor`, `$schema`, ...
    Identifier,
}

/// How a keyword holds subschemas, if it does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Holds {
    /// No subschema.
    Nothing,
    /// One subschema.
    Schema,
    /// A list of subschemas.
    List,
    /// One subschema, or (draft-07 `items`) a list of them.
    SchemaOrList,
    /// A map of name to subschema.
    Map,
    /// A map of name to subschema or to a list of names (draft-07 `dependencies`).
    MapOfSchemasOrNames,
}

/// The JSON types of value a keyword speaks of; it accepts values of any other type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Family {
    /// Values of every type.
    Any,
    /// Strings.
    String,
    /// Numbers, integers among them.
    Number,
    /// Arrays.
    Array,
    /// Objects.
    Object,
}

/// Which way a bound keyword narrows what it accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Bound {
    /// A smaller value accepts less: `maxLength`, `maximum`, ...
    Upper,
    /// A larger value accepts less: `minLength`, `minimum`, ...
    Lower,
}

/// One keyword of the vocabulary.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Keyword {
    /// The keyword as written.
    pub name: &'static str,
    /// What it does.
    pub role: Role,
    /// How it holds subschemas.
    pub holds: Holds,
    /// The values it speaks of.
    pub family: Family,
    /// Which way it bounds, if it is a bound.
    pub bound: Option<Bound>,
    /// Whether draft 2020-12 defines it.
    pub in_2020_12: bool,
    /// Whether draft-07 defines it.
    pub in_draft_07: bool,
}

const fn keyword(name: &'static str, role: Role, holds: Holds, family: Family) -> Keyword {
    Keyword {
        name,
        role,
        holds,
        family,
        bound: None,
        in_2020_12: true,
        in_draft_07: true,
    }
}

impl Keyword {
    const fn only_2020_12(mut self) -> Keyword {
        self.in_draft_07 = false;
        self
    }

    const fn only_draft_07(mut self) -> Keyword {
        self.in_2020_12 = false;
        self
    }

    /// A keyword of no supported dialect that the core still reads for what it is, so that no
    /// part takes it for an unknown annotation.
    const fn in_no_dialect(mut self) -> Keyword {
        self.in_2020_12 = false;
        self.in_draft_07 = false;
        self
    }

    const fn bounds(mut self, bound: Bound) -> Keyword {
        self.bound = Some(bound);
        self
    }

    /// Whether `dialect` defines this keyword.
    pub fn in_dialect(&self, dialect: Dialect) -> bool {
        match dialect {
            Dialect::Draft202012 => self.in_2020_12,
            Dialect::Draft7 => self.in_draft_07,
        }
    }

    /// Whether its subschemas apply to the same value as the schema holding it (references
    /// included).
    pub fn applies_in_place(&self) -> bool {
        matches!(self.role, Role::Reference | Role::InPlace)
    }

    /// Whether it describes only: dropping it changes no verdict.
    pub fn is_annotation(&self) -> bool {
        self.role == Role::Annotation
    }
}

use Family::{Any, Array, Number, Object, String as Text};
use Holds::{List, Map as Members, MapOfSchemasOrNames, Nothing, Schema, SchemaOrList};
use Role::{Annotation, Assertion, Child, Definitions, Format, Identifier, InPlace, Reference};

/// Every keyword the core knows, of draft 2020-12 and draft-07, and the few of neither it still
/// reads for what they are; grouped by the type of value they speak of, in the order the core
/// writes them when it moves them (adapt's split of a type list).
pub const KEYWORDS: &[Keyword] = &[
    // Identifiers, definitions and references (the core vocabulary).
    keyword("$schema", Identifier, Nothing, Any),
    keyword("$id", Identifier, Nothing, Any),
    keyword("$anchor", Identifier, Nothing, Any).only_2020_12(),
    keyword("$dynamicAnchor", Identifier, Nothing, Any).only_2020_12(),
    keyword("$vocabulary", Identifier, Nothing, Any).only_2020_12(),
    keyword("$defs", Definitions, Members, Any).only_2020_12(),
    keyword("definitions", Definitions, Members, Any).only_draft_07(),
    keyword("$ref", Reference, Nothing, Any),
    keyword("$dynamicRef", Reference, Nothing, Any).only_2020_12(),
    // Draft 2019-09's reference: no supported dialect evaluates it, but it still leads elsewhere.
    keyword("$recursiveRef", Reference, Nothing, Any).in_no_dialect(),
    // Any value.
    keyword("allOf", InPlace, List, Any),
    keyword("anyOf", InPlace, List, Any),
    keyword("oneOf", InPlace, List, Any),
    keyword("not", InPlace, Schema, Any),
    keyword("if", InPlace, Schema, Any),
    keyword("then", InPlace, Schema, Any),
    keyword("else", InPlace, Schema, Any),
    keyword("type", Assertion, Nothing, Any),
    keyword("enum", Assertion, Nothing, Any),
    keyword("const", Assertion, Nothing, Any),
    // Strings.
    keyword("minLength", Assertion, Nothing, Text).bounds(Bound::Lower),
    keyword("maxLength", Assertion, Nothing, Text).bounds(Bound::Upper),
    keyword("pattern", Assertion, Nothing, Text),
    keyword("format", Format, Nothing, Text),
    keyword("contentMediaType", Annotation, Nothing, Text),
    keyword("contentEncoding", Annotation, Nothing, Text),
    keyword("contentSchema", Annotation, Schema, Text).only_2020_12(),
    // Numbers.
    keyword("minimum", Assertion, Nothing, Number).bounds(Bound::Lower),
    keyword("maximum", Assertion, Nothing, Number).bounds(Bound::Upper),
    keyword("exclusiveMinimum", Assertion, Nothing, Number).bounds(Bound::Lower),
    keyword("exclusiveMaximum", Assertion, Nothing, Number).bounds(Bound::Upper),
    keyword("multipleOf", Assertion, Nothing, Number),
    // Arrays.
    keyword("items", Child, SchemaOrList, Array),
    keyword("prefixItems", Child, List, Array).only_2020_12(),
    keyword("additionalItems", Child, Schema, Array).only_draft_07(),
    keyword("minItems", Assertion, Nothing, Array).bounds(Bound::Lower),
    keyword("maxItems", Assertion, Nothing, Array).bounds(Bound::Upper),
    keyword("uniqueItems", Assertion, Nothing, Array),
    keyword("contains", Child, Schema, Array),
    keyword("minContains", Assertion, Nothing, Array)
        .only_2020_12()
        .bounds(Bound::Lower),
    keyword("maxContains", Assertion, Nothing, Array)
        .only_2020_12()
        .bounds(Bound::Upper),
    keyword("unevaluatedItems", Child, Schema, Array).only_2020_12(),
    // Objects.
    keyword("properties", Child, Members, Object),
    keyword("required", Assertion, Nothing, Object),
    keyword("additionalProperties", Child, Schema, Object),
    keyword("patternProperties", Child, Members, Object),
    keyword("minProperties", Assertion, Nothing, Object).bounds(Bound::Lower),
    keyword("maxProperties", Assertion, Nothing, Object).bounds(Bound::Upper),
    keyword("propertyNames", Child, Schema, Object),
    keyword("dependentRequired", Assertion, Nothing, Object).only_2020_12(),
    keyword("dependentSchemas", InPlace, Members, Object).only_2020_12(),
    // Draft-07's `dependencies`: a member's schema applies to the whole object, in place. The
    // validator still evaluates it under 2020-12, whose meta-schema keeps it.
    keyword("dependencies", InPlace, MapOfSchemasOrNames, Object),
    keyword("unevaluatedProperties", Child, Schema, Object).only_2020_12(),
    // Annotations of any value.
    keyword("$comment", Annotation, Nothing, Any),
    keyword("title", Annotation, Nothing, Any),
    keyword("description", Annotation, Nothing, Any),
    keyword("default", Annotation, Nothing, Any),
    keyword("examples", Annotation, Nothing, Any),
    keyword("deprecated", Annotation, Nothing, Any).only_2020_12(),
    keyword("readOnly", Annotation, Nothing, Any),
    keyword("writeOnly", Annotation, Nothing, Any),
    // OpenAPI's singular `example`: no dialect defines it and every validator ignores it.
    keyword("example", Annotation, Nothing, Any).in_no_dialect(),
];

/// The keyword `name`, whatever the dialect (the core reads a keyword of one dialect for what
/// it is in a schema of the other too, as a validator's unknown keyword never harms).
pub fn lookup(name: &str) -> Option<&'static Keyword> {
    // Asked for every key of every schema the core reads: an index, built once.
    static INDEX: OnceLock<HashMap<&'static str, &'static Keyword>> = OnceLock::new();
    INDEX
        .get_or_init(|| KEYWORDS.iter().map(|k| (k.name, k)).collect())
        .get(name)
        .copied()
}

/// The keyword `name` as `dialect` defines it; `None` when `dialect` does not.
pub fn lookup_in(dialect: Dialect, name: &str) -> Option<&'static Keyword> {
    lookup(name).filter(|k| k.in_dialect(dialect))
}

/// The role of `name`, if it is a keyword.
pub fn role(name: &str) -> Option<Role> {
    lookup(name).map(|k| k.role)
}

/// Whether `name` is a reference keyword.
pub fn is_reference(name: &str) -> bool {
    role(name) == Some(Role::Reference)
}

/// Whether `name` is an annotation: it describes and never refuses.
pub fn is_annotation(name: &str) -> bool {
    role(name) == Some(Role::Annotation)
}

/// The names of the keywords for which `pick` holds, in table order.
pub fn names(pick: impl Fn(&Keyword) -> bool) -> impl Iterator<Item = &'static str> {
    KEYWORDS.iter().filter(move |k| pick(k)).map(|k| k.name)
}

/// The reference keywords.
pub fn references() -> impl Iterator<Item = &'static str> {
    names(|k| k.role == Role::Reference)
}

/// One subschema a keyword of a schema object holds.
#[derive(Debug, Clone, Copy)]
pub struct Subschema<'v> {
    /// The keyword holding it.
    pub keyword: &'v str,
    /// Its place under the keyword: `None` for a single subschema, else the list index or map
    /// member name.
    pub under: Option<Under<'v>>,
    /// The subschema.
    pub value: &'v Value,
    /// Whether it applies to the same value as the schema holding it.
    pub in_place: bool,
}

/// Where a subschema sits under its keyword.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Under<'v> {
    /// An index in a list.
    Index(usize),
    /// A member name in a map.
    Member(&'v str),
}

impl Subschema<'_> {
    /// The JSON Pointer of the subschema, below `pointer`, the schema holding it.
    pub fn pointer(&self, pointer: &str) -> String {
        self.place(&push_segment(pointer, self.keyword))
    }

    /// The JSON Pointer of the subschema, below `keyword_pointer`, where its keyword's value is.
    pub fn place(&self, keyword_pointer: &str) -> String {
        match self.under {
            None => keyword_pointer.to_string(),
            Some(Under::Index(i)) => format!("{keyword_pointer}/{i}"),
            Some(Under::Member(name)) => push_segment(keyword_pointer, name),
        }
    }
}

/// The subschemas `value`, the value of keyword `name`, holds, in document order. Only the
/// shapes the keyword takes count: an object for a single subschema, an array for a list, an
/// object for a map (every member, as a schema map's member is always a schema; a draft-07
/// `dependencies` member only when it is an object). Empty for a keyword that holds none.
pub fn subschemas_of<'v>(name: &'v str, value: &'v Value) -> Vec<Subschema<'v>> {
    let Some(keyword) = lookup(name) else {
        return Vec::new();
    };
    let in_place = keyword.applies_in_place();
    let one = |under, value| Subschema {
        keyword: name,
        under,
        value,
        in_place,
    };
    match (keyword.holds, value) {
        (Holds::Schema | Holds::SchemaOrList, Value::Object(_)) => vec![one(None, value)],
        (Holds::List | Holds::SchemaOrList, Value::Array(items)) => items
            .iter()
            .enumerate()
            .map(|(i, item)| one(Some(Under::Index(i)), item))
            .collect(),
        (Holds::Map | Holds::MapOfSchemasOrNames, Value::Object(members)) => members
            .iter()
            .filter(|(_, member)| keyword.holds == Holds::Map || member.is_object())
            .map(|(key, member)| one(Some(Under::Member(key)), member))
            .collect(),
        _ => Vec::new(),
    }
}

/// Every subschema the keywords of `schema` hold, in document order (see [`subschemas_of`]).
pub fn subschemas<'v>(schema: &'v Map<String, Value>) -> impl Iterator<Item = Subschema<'v>> {
    schema
        .iter()
        .flat_map(|(key, value)| subschemas_of(key, value))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn every_keyword_is_listed_once_and_belongs_to_a_dialect_or_says_why_not() {
        for (i, k) in KEYWORDS.iter().enumerate() {
            assert!(
                KEYWORDS[..i].iter().all(|other| other.name != k.name),
                "{} listed twice",
                k.name
            );
            if !k.in_2020_12 && !k.in_draft_07 {
                assert!(["$recursiveRef", "example"].contains(&k.name), "{}", k.name);
            }
            // A keyword holding subschemas applies them somewhere, or is an annotation or a
            // home of definitions.
            if k.holds != Holds::Nothing {
                assert!(
                    matches!(k.role, Role::InPlace | Role::Child | Role::Definitions)
                        || k.name == "contentSchema",
                    "{}",
                    k.name
                );
            }
        }
    }

    #[test]
    fn dialects_define_their_own_keywords() {
        assert!(lookup_in(Dialect::Draft7, "prefixItems").is_none());
        assert!(lookup_in(Dialect::Draft202012, "prefixItems").is_some());
        assert!(lookup_in(Dialect::Draft7, "definitions").is_some());
        assert!(lookup_in(Dialect::Draft202012, "additionalItems").is_none());
        assert!(lookup_in(Dialect::Draft7, "$recursiveRef").is_none());
        // The validator evaluates draft-07's `dependencies` in 2020-12 too.
        for dialect in [Dialect::Draft202012, Dialect::Draft7] {
            assert!(lookup_in(dialect, "dependencies").is_some());
            let validator = jsonschema::options()
                .with_draft(dialect.engine_draft())
                .build(&json!({"dependencies": {"a": false}}))
                .unwrap();
            assert!(!validator.is_valid(&json!({"a": 1})), "{dialect}");
        }
        assert!(lookup("$recursiveRef").is_some_and(Keyword::applies_in_place));
    }

    /// The keywords the validator (jsonschema) evaluates in a dialect are those the table gives
    /// that dialect: each assertion of the table refuses a value there, and is inert in a
    /// dialect without it.
    #[test]
    fn the_validator_agrees_on_which_dialect_asserts_what() {
        let refusing: &[(&str, Value, Value)] = &[
            ("prefixItems", json!([false]), json!([1])),
            ("additionalItems", json!(false), json!([1, 2])),
            ("dependentRequired", json!({"a": ["b"]}), json!({"a": 1})),
            ("dependentSchemas", json!({"a": false}), json!({"a": 1})),
            ("unevaluatedProperties", json!(false), json!({"a": 1})),
            ("minContains", json!(2), json!([1])),
        ];
        for (name, keyword_value, instance) in refusing {
            let keyword = lookup(name).unwrap();
            for dialect in [Dialect::Draft202012, Dialect::Draft7] {
                let mut schema = json!({ *name: keyword_value });
                if *name == "additionalItems" {
                    // The one leading item, as each dialect writes it.
                    let tuple = match dialect {
                        Dialect::Draft7 => "items",
                        Dialect::Draft202012 => "prefixItems",
                    };
                    schema[tuple] = json!([{}]);
                }
                if *name == "minContains" {
                    schema["contains"] = json!({});
                }
                let validator = jsonschema::options()
                    .with_draft(dialect.engine_draft())
                    .build(&schema)
                    .unwrap();
                assert_eq!(
                    !validator.is_valid(instance),
                    keyword.in_dialect(dialect),
                    "{name} in {dialect}"
                );
            }
        }
    }

    #[test]
    fn subschemas_come_in_document_order_with_their_pointers() {
        let schema = json!({
            "items": [{"type": "string"}, true],
            "properties": {"a/b": {}},
            "not": {"type": "null"},
            "dependencies": {"x": ["y"], "z": {"required": ["w"]}},
            "minLength": 2,
            "if": true
        });
        let found: Vec<(String, bool)> = subschemas(schema.as_object().unwrap())
            .map(|s| (s.pointer("/p"), s.in_place))
            .collect();
        let expected = [
            ("/p/items/0", false),
            ("/p/items/1", false),
            ("/p/properties/a~1b", false),
            ("/p/not", true),
            ("/p/dependencies/z", true),
        ];
        assert_eq!(
            found,
            expected
                .iter()
                .map(|(p, i)| (p.to_string(), *i))
                .collect::<Vec<_>>()
        );
    }
}
