//! JSON Schema dialects toolschema validates: draft 2020-12 and draft-07.

use super::SchemaError;
use crate::json::Members;
use serde_json::Value;
use std::fmt;
use std::str::FromStr;

/// A JSON Schema dialect.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Dialect {
    /// Draft 2020-12, the default when a schema has no `$schema`.
    #[default]
    Draft202012,
    /// Draft-07, what most MCP servers (TypeScript SDK with zod) put on the wire.
    Draft7,
}

/// The supported dialects, for error messages.
pub const SUPPORTED_DIALECTS: &str = "2020-12 (https://json-schema.org/draft/2020-12/schema) and draft-07 (http://json-schema.org/draft-07/schema#)";

impl Dialect {
    /// The canonical `$schema` URI.
    pub fn uri(self) -> &'static str {
        match self {
            Dialect::Draft202012 => "https://json-schema.org/draft/2020-12/schema",
            Dialect::Draft7 => "http://json-schema.org/draft-07/schema#",
        }
    }

    /// The short name used on the command line: `2020-12` or `draft-07`.
    pub fn name(self) -> &'static str {
        match self {
            Dialect::Draft202012 => "2020-12",
            Dialect::Draft7 => "draft-07",
        }
    }

    /// The dialect a `$schema` URI names: http or https, with or without a trailing `#`.
    pub fn from_uri(uri: &str) -> Option<Dialect> {
        let uri = uri.strip_suffix('#').unwrap_or(uri);
        let rest = uri
            .strip_prefix("https://")
            .or_else(|| uri.strip_prefix("http://"))?;
        match rest {
            "json-schema.org/draft-07/schema" => Some(Dialect::Draft7),
            "json-schema.org/draft/2020-12/schema" => Some(Dialect::Draft202012),
            _ => None,
        }
    }

    /// Whether a `$ref` replaces the keywords beside it (draft-07), rather than applying with
    /// them (2020-12).
    pub(crate) fn ref_ignores_siblings(self) -> bool {
        self == Dialect::Draft7
    }

    pub(crate) fn engine_draft(self) -> jsonschema::Draft {
        match self {
            Dialect::Draft202012 => jsonschema::Draft::Draft202012,
            Dialect::Draft7 => jsonschema::Draft::Draft7,
        }
    }
}

impl fmt::Display for Dialect {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Dialect {
    type Err = SchemaError;

    /// Accepts `2020-12`, `draft2020-12`, `draft-2020-12`, `draft-07`, `draft7`, `7`, or a
    /// dialect URI.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "2020-12" | "draft2020-12" | "draft-2020-12" => Ok(Dialect::Draft202012),
            "draft-07" | "draft7" | "draft-7" | "7" => Ok(Dialect::Draft7),
            other => Dialect::from_uri(other).ok_or_else(|| SchemaError::UnsupportedDialect {
                uri: other.to_string(),
            }),
        }
    }
}

/// The dialect of a standard schema from its root `$schema`: none means 2020-12; the draft-07 and
/// 2020-12 URIs are recognized; anything else is an error naming the supported dialects.
pub fn detect_dialect(schema: &Value) -> Result<Dialect, SchemaError> {
    detect_dialect_with(schema, |_| None)
}

/// Like [`detect_dialect`], but a `$schema` may also name a registered document (a custom
/// meta-schema), whose own `$schema` decides, followed through at most eight documents.
pub(crate) fn detect_dialect_with<'d>(
    schema: &Value,
    registered: impl Fn(&str) -> Option<&'d Value>,
) -> Result<Dialect, SchemaError> {
    let mut current = schema;
    for _ in 0..8 {
        let Some(uri) = current.member("$schema") else {
            return Ok(Dialect::Draft202012);
        };
        let Some(uri) = uri.as_str() else {
            return Err(SchemaError::UnsupportedDialect {
                uri: uri.to_string(),
            });
        };
        if let Some(dialect) = Dialect::from_uri(uri) {
            return Ok(dialect);
        }
        match registered(uri.strip_suffix('#').unwrap_or(uri)) {
            Some(meta) if !std::ptr::eq(meta, current) => current = meta,
            _ => {
                return Err(SchemaError::UnsupportedDialect {
                    uri: uri.to_string(),
                })
            }
        }
    }
    Err(SchemaError::UnsupportedDialect {
        uri: schema
            .member("$schema")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn refs_ignore_siblings_as_the_engine_does() {
        let schema = json!({"$ref": "#/definitions/a", "type": "string", "definitions": {"a": {}}});
        for dialect in [Dialect::Draft7, Dialect::Draft202012] {
            let engine = jsonschema::options()
                .with_draft(dialect.engine_draft())
                .build(&schema)
                .unwrap();
            assert_eq!(
                engine.is_valid(&json!(5)),
                dialect.ref_ignores_siblings(),
                "{dialect}"
            );
        }
    }

    #[test]
    fn detects_dialects() {
        assert_eq!(detect_dialect(&json!({})).unwrap(), Dialect::Draft202012);
        for uri in [
            "http://json-schema.org/draft-07/schema#",
            "http://json-schema.org/draft-07/schema",
            "https://json-schema.org/draft-07/schema#",
            "https://json-schema.org/draft-07/schema",
        ] {
            assert_eq!(
                detect_dialect(&json!({"$schema": uri})).unwrap(),
                Dialect::Draft7
            );
        }
        assert_eq!(
            detect_dialect(&json!({"$schema": "https://json-schema.org/draft/2020-12/schema"}))
                .unwrap(),
            Dialect::Draft202012
        );
        let err = detect_dialect(&json!({"$schema": "http://json-schema.org/draft-04/schema#"}))
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            format!("unsupported $schema 'http://json-schema.org/draft-04/schema#': supported dialects are {SUPPORTED_DIALECTS}")
        );
    }

    #[test]
    fn parses_dialect_names() {
        assert_eq!("2020-12".parse::<Dialect>().unwrap(), Dialect::Draft202012);
        assert_eq!("draft-07".parse::<Dialect>().unwrap(), Dialect::Draft7);
        assert!("draft-04".parse::<Dialect>().is_err());
    }

    #[test]
    fn follows_registered_meta_schemas() {
        let meta = json!({"$schema": "https://json-schema.org/draft/2020-12/schema"});
        let schema = json!({"$schema": "http://localhost:1234/meta.json"});
        let found = detect_dialect_with(&schema, |uri| {
            (uri == "http://localhost:1234/meta.json").then_some(&meta)
        });
        assert_eq!(found.unwrap(), Dialect::Draft202012);
        assert!(detect_dialect(&schema).is_err());
    }
}
