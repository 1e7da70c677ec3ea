//! Schema input shapes and their normalization to standard JSON Schema.
//!
//! toolschema reads three shapes of `inputSchema`:
//!
//! 1. the **direct map**, argument name to property:
//!    `{"q": {"type": "string", "required": true, "minLength": 3}}`;
//! 2. the **JSON-Schema-like** shape, `{"properties": {...}, "required": [...]}` with the same
//!    property fields;
//! 3. **standard JSON Schema**, draft 2020-12 or draft-07, passed through unchanged.
//!
//! The first two are the lightweight shapes (see [`lightweight`] for their rules); clients cannot
//! read them, so they are translated to standard JSON Schema before they go on the wire or are
//! validated against.
//!
//! ```
//! use serde_json::json;
//! use toolschema::schema::{normalize, SchemaShape};
//!
//! let input = json!({"q": {"type": "string", "required": true}});
//! let normalized = normalize(&input).unwrap();
//! assert_eq!(normalized.shape, SchemaShape::DirectMap);
//! assert_eq!(*normalized.schema, json!({
//!     "type": "object",
//!     "properties": {"q": {"type": "string"}},
//!     "required": ["q"],
//!     "additionalProperties": false
//! }));
//! ```

pub mod dialect;
pub(crate) mod document;
#[cfg(feature = "schemars")]
mod from_rust;
pub mod lightweight;
pub(crate) mod patterns;
pub(crate) mod references;
pub mod value_type;
pub mod vocabulary;

#[cfg(feature = "schemars")]
pub use from_rust::input_schema_for;

pub use dialect::{detect_dialect, Dialect, SUPPORTED_DIALECTS};
pub use lightweight::{string_form, SCHEMA_VERSIONS};
pub use value_type::{has_type, value_type, JsonType};

use crate::json::Members;
use crate::json::MAX_DEPTH;
use serde_json::{Map, Value};
use std::borrow::Cow;

/// The `format` values JSON Schema 2020-12 defines. Anything else (`uint32`, `int64`, `double`,
/// ...) is a generator's private vocabulary that validators ignore or warn about.
pub const STANDARD_FORMATS: &[&str] = &[
    "date-time",
    "date",
    "time",
    "duration",
    "email",
    "idn-email",
    "hostname",
    "idn-hostname",
    "ipv4",
    "ipv6",
    "uri",
    "uri-reference",
    "iri",
    "iri-reference",
    "uuid",
    "uri-template",
    "json-pointer",
    "relative-json-pointer",
    "regex",
];

/// Why a schema cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SchemaError {
    /// The root `$schema` names a dialect toolschema does not validate.
    #[error("unsupported $schema '{uri}': supported dialects are {SUPPORTED_DIALECTS}")]
    UnsupportedDialect {
        /// The `$schema` value.
        uri: String,
    },
    /// The lightweight shape's `schemaVersion` is not one toolschema knows.
    #[error("unsupported schemaVersion '{version}': supported versions are {}", SCHEMA_VERSIONS.join(", "))]
    UnsupportedSchemaVersion {
        /// The version given.
        version: String,
    },
    /// A lightweight shape that breaks its rules.
    #[error("{pointer}: {message}")]
    Shape {
        /// Where, as a JSON Pointer into the schema.
        pointer: String,
        /// What is wrong.
        message: String,
    },
    /// A `$ref` to a document that is neither this one nor one the caller registered.
    #[error("external $ref resolution is disabled: {uri}")]
    ExternalRef {
        /// The reference.
        uri: String,
    },
    /// A `$ref` inside the document that points nowhere.
    #[error("$ref '{reference}' does not resolve inside the document")]
    UnresolvedRef {
        /// The reference.
        reference: String,
    },
    /// `$ref`s that lead back to themselves without ever reaching a value to check.
    #[error("cyclic $ref never reaches a value to check: {}", .chain.join(" -> "))]
    CyclicRef {
        /// The references along the cycle, first and last the same location.
        chain: Vec<String>,
    },
    /// The schema nests too deeply to be handled safely.
    #[error("schema nests deeper than {limit} levels of arrays and objects")]
    TooDeep {
        /// The limit.
        limit: usize,
    },
    /// The schema refers to more distinct locations than toolschema compiles.
    #[error("schema has more than {limit} distinct $ref targets, more than toolschema compiles (compiling chains of references takes time that grows with the square of their length)")]
    TooManyReferences {
        /// The limit.
        limit: usize,
    },
    /// The schema applies more subschemas in a row at one place than toolschema validates.
    #[error("schema applies more than {limit} subschemas in a row at one place of a value (through $ref, allOf, anyOf, oneOf, not, if, then, else, dependentSchemas), more than toolschema validates: validating recurses once for each, at every level of the value")]
    ChainTooLong {
        /// The limit.
        limit: usize,
    },
    /// The schema breaks its dialect's meta-schema.
    #[error("invalid schema at '{pointer}': {message}")]
    Invalid {
        /// Where, as a JSON Pointer into the schema.
        pointer: String,
        /// What is wrong.
        message: String,
    },
    /// A root that is neither an object nor a boolean.
    #[error("a schema must be a JSON object or a boolean")]
    NotASchema,
}

/// Which input shape a schema was written in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SchemaShape {
    /// A map of argument name to property.
    DirectMap,
    /// `{"properties": {...}, "required": [...]}` with lightweight property fields.
    JsonSchemaLike,
    /// Standard JSON Schema.
    Standard,
}

impl SchemaShape {
    /// Whether this is one of the lightweight shapes clients cannot read.
    pub fn is_lightweight(self) -> bool {
        !matches!(self, SchemaShape::Standard)
    }
}

/// Whether `key` is a JSON Schema keyword whose value may be an object (a schema, a map of
/// schemas, or a `const`/`default`/`examples` value); a map whose only keys are these reads as a
/// standard schema, not as arguments.
fn takes_an_object(key: &str) -> bool {
    matches!(key, "const" | "default" | "examples")
        || vocabulary::lookup(key).is_some_and(|k| {
            !matches!(
                k.holds,
                vocabulary::Holds::Nothing | vocabulary::Holds::List
            )
        })
}

/// Tell which shape `schema` is written in.
///
/// - a `$schema` makes it standard;
/// - `properties` makes it JSON-Schema-like when a property uses a lightweight feature (type
///   `float` or `enum`, `isArray`, `required: true`) or there is a `schemaVersion`, else standard;
/// - a map whose members are all property definitions (objects with a string `type`, or with a
///   lightweight feature) is a direct map, unless every key is a JSON Schema keyword and nothing
///   lightweight appears;
/// - anything else is standard.
pub fn detect_shape(schema: &Value) -> SchemaShape {
    let Some(map) = schema.as_object() else {
        return SchemaShape::Standard;
    };
    if map.contains_key("$schema") {
        return SchemaShape::Standard;
    }
    let versioned = map.contains_key("schemaVersion");
    if let Some(properties) = map.member("properties").and_then(Value::as_object) {
        let lightweight = versioned
            || properties
                .values()
                .any(lightweight::is_lightweight_property);
        return if lightweight {
            SchemaShape::JsonSchemaLike
        } else {
            SchemaShape::Standard
        };
    }
    let members: Vec<(&String, &Value)> =
        map.iter().filter(|(k, _)| *k != "schemaVersion").collect();
    let all_properties = members.iter().all(|(_, v)| {
        lightweight::is_lightweight_property(v) || v.member("type").is_some_and(Value::is_string)
    });
    let any_marker = members
        .iter()
        .any(|(_, v)| lightweight::is_lightweight_property(v));
    let all_keywords = members.iter().all(|(k, _)| takes_an_object(k));
    let is_direct_map =
        all_properties && (versioned || (!members.is_empty() && (any_marker || !all_keywords)));
    if is_direct_map {
        SchemaShape::DirectMap
    } else {
        SchemaShape::Standard
    }
}

/// A schema in standard JSON Schema, with the shape it was written in.
#[derive(Debug, Clone, PartialEq)]
pub struct Normalized<'a> {
    /// The shape of the input.
    pub shape: SchemaShape,
    /// The dialect of the result (lightweight shapes become 2020-12).
    pub dialect: Dialect,
    /// The standard schema: the input itself when it was standard.
    pub schema: Cow<'a, Value>,
}

/// Normalize any accepted shape to standard JSON Schema and check its dialect.
///
/// Standard schemas come back borrowed and unchanged; lightweight shapes are translated.
pub fn normalize(schema: &Value) -> Result<Normalized<'_>, SchemaError> {
    let (shape, schema) = normalize_shape(schema)?;
    let dialect = detect_dialect(&schema)?;
    Ok(Normalized {
        shape,
        dialect,
        schema,
    })
}

/// Translate a lightweight shape to standard JSON Schema; standard schemas come back borrowed.
/// The dialect is not checked.
pub(crate) fn normalize_shape(
    schema: &Value,
) -> Result<(SchemaShape, Cow<'_, Value>), SchemaError> {
    if !schema.is_object() && !schema.is_boolean() {
        return Err(SchemaError::NotASchema);
    }
    if crate::json::nesting_depth(schema, MAX_DEPTH) > MAX_DEPTH {
        return Err(SchemaError::TooDeep { limit: MAX_DEPTH });
    }
    let shape = detect_shape(schema);
    let Some(map) = schema.as_object().filter(|_| shape.is_lightweight()) else {
        return Ok((shape, Cow::Borrowed(schema)));
    };
    if let Some(version) = map.get("schemaVersion") {
        lightweight::check_schema_version(version)?;
    }
    let standard = match shape {
        SchemaShape::JsonSchemaLike => {
            let empty = serde_json::Map::new();
            let properties = map
                .get("properties")
                .and_then(Value::as_object)
                .unwrap_or(&empty);
            lightweight::to_standard(properties, "/properties", Some(map))?
        }
        _ => {
            let mut properties = map.clone();
            properties.shift_remove("schemaVersion");
            lightweight::to_standard(&properties, "", None)?
        }
    };
    Ok((shape, Cow::Owned(standard)))
}

/// Whether the schema's `type` admits `name` (a `number` admits integers): `None` when there is
/// no `type`.
pub(crate) fn admits_type(map: &Map<String, Value>, name: &str) -> Option<bool> {
    match map.member("type")? {
        Value::String(t) => Some(t == name || (name == "integer" && t == "number")),
        Value::Array(list) => Some(list.iter().any(|t| t.as_str() == Some(name))),
        _ => Some(false),
    }
}

/// A `pattern` compiled as the validation engine reads it (ECMA-262 regular expressions), to
/// test names and strings against; `None` when the engine refuses the pattern.
pub(crate) fn compile_pattern(pattern: &str) -> Option<jsonschema::Validator> {
    let engine = patterns::ecma_pattern(pattern);
    jsonschema::options()
        .build(&serde_json::json!({ "pattern": engine.as_deref().unwrap_or(pattern) }))
        .ok()
}

/// Whether a schema describes objects: `type: "object"`, a type list containing it, or
/// `properties`.
pub(crate) fn is_object_schema(map: &Map<String, Value>) -> bool {
    admits_type(map, "object") == Some(true)
        || map.member("properties").is_some_and(Value::is_object)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn detects_shapes() {
        let cases = [
            (json!({"q": {"type": "string"}}), SchemaShape::DirectMap),
            (json!({"q": {"type": "float"}}), SchemaShape::DirectMap),
            (
                json!({"items": {"type": "string"}, "q": {"type": "string"}}),
                SchemaShape::DirectMap,
            ),
            (
                json!({"schemaVersion": "2025-10-09"}),
                SchemaShape::DirectMap,
            ),
            (
                json!({"properties": {"q": {"type": "string", "required": true}}}),
                SchemaShape::JsonSchemaLike,
            ),
            (
                json!({"type": "object", "properties": {"q": {"type": "enum", "enum": [1]}}}),
                SchemaShape::JsonSchemaLike,
            ),
            (
                json!({"properties": {"q": {"type": "string"}}, "schemaVersion": "2025-10-09"}),
                SchemaShape::JsonSchemaLike,
            ),
            (
                json!({"type": "object", "properties": {"q": {"type": "string"}}}),
                SchemaShape::Standard,
            ),
            (
                json!({"properties": {"q": {"type": "string"}}, "required": ["q"]}),
                SchemaShape::Standard,
            ),
            (json!({"not": {"type": "string"}}), SchemaShape::Standard),
            (
                json!({"$schema": "x", "q": {"type": "float"}}),
                SchemaShape::Standard,
            ),
            (json!({}), SchemaShape::Standard),
            (json!({"type": "object"}), SchemaShape::Standard),
            (json!(true), SchemaShape::Standard),
        ];
        for (schema, shape) in cases {
            assert_eq!(detect_shape(&schema), shape, "{schema}");
        }
    }

    #[test]
    fn standard_passes_through_unchanged() {
        let schema = json!({"$schema": "http://json-schema.org/draft-07/schema#", "type": "object",
            "properties": {"z": {"type": "string"}, "a": {"type": "integer"}}});
        let n = normalize(&schema).unwrap();
        assert!(matches!(n.schema, Cow::Borrowed(_)));
        assert_eq!(n.dialect, Dialect::Draft7);
        assert_eq!(
            serde_json::to_string(&*n.schema).unwrap(),
            schema.to_string()
        );
    }

    #[test]
    fn json_schema_like_keeps_other_keys() {
        let schema = json!({"description": "Search", "properties": {"q": {"type": "string", "required": true}},
            "required": [], "additionalProperties": true});
        let n = normalize(&schema).unwrap();
        assert_eq!(n.shape, SchemaShape::JsonSchemaLike);
        assert_eq!(
            *n.schema,
            json!({"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"],
                "description": "Search", "additionalProperties": true})
        );
    }

    #[test]
    fn schema_version_is_checked() {
        let err = normalize(&json!({"schemaVersion": "2030-01-01", "q": {"type": "string"}}))
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "unsupported schemaVersion '2030-01-01': supported versions are 2025-10-09"
        );
        let input = json!({"schemaVersion": "2025-10-09", "q": {"type": "string"}});
        let ok = normalize(&input).unwrap();
        assert_eq!(ok.shape, SchemaShape::DirectMap);
        assert!(ok.schema.get("schemaVersion").is_none());
    }

    #[test]
    fn unsupported_dialect_is_named() {
        let err = normalize(&json!({"$schema": "https://json-schema.org/draft/2019-09/schema"}))
            .unwrap_err();
        assert!(err
            .to_string()
            .starts_with("unsupported $schema 'https://json-schema.org/draft/2019-09/schema': supported dialects are 2020-12"));
    }

    #[test]
    fn refuses_non_schemas_and_deep_schemas() {
        assert_eq!(normalize(&json!(3)).unwrap_err(), SchemaError::NotASchema);
        let mut deep = json!({"type": "string"});
        for _ in 0..200 {
            let mut map = serde_json::Map::new();
            map.insert("items".into(), deep);
            deep = Value::Object(map);
        }
        assert_eq!(
            normalize(&deep).unwrap_err(),
            SchemaError::TooDeep { limit: MAX_DEPTH }
        );
        crate::json::drop_deep(deep);
    }
}
