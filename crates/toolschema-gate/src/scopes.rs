//! `tool-scopes`: which OAuth scopes a tool needs. A call to a tool needs every scope of every
//! pattern that matches its name; `tools/list` shows a client only the tools it may call. Tools
//! no pattern matches need no scope.
//!
//! In a TOML configuration it is a table from tool-name globs to a scope or a list of scopes:
//!
//! ```toml
//! [tool-scopes]
//! "files_*" = "files:read"
//! "config_set" = ["config:write", "audit"]
//! ```

use serde::de::{self, Deserializer, MapAccess, Visitor};
use serde::Deserialize;
use std::collections::BTreeSet;
use std::fmt;
use toolschema::Glob;

/// Scopes per tool-name glob.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ToolScopes {
    rules: Vec<(Glob, String)>,
}

impl ToolScopes {
    /// No tool needs a scope.
    pub fn new() -> Self {
        Self::default()
    }

    /// Tools matching `pattern` need `scope` (as well as any other scope they need).
    pub fn require(mut self, pattern: impl Into<String>, scope: impl Into<String>) -> Self {
        self.rules.push((Glob::new(pattern), scope.into()));
        self
    }

    /// Whether no tool needs a scope.
    pub fn is_empty(&self) -> bool {
        self.rules.is_empty()
    }

    /// Every scope a call to `tool` needs.
    pub fn required(&self, tool: &str) -> BTreeSet<&str> {
        self.rules
            .iter()
            .filter(|(glob, _)| glob.matches(tool))
            .map(|(_, scope)| scope.as_str())
            .collect()
    }

    /// Every scope some tool needs (the metadata's `scopes_supported`).
    pub fn all(&self) -> BTreeSet<&str> {
        self.rules.iter().map(|(_, scope)| scope.as_str()).collect()
    }
}

/// Whether `scope` is an OAuth scope token (RFC 6749 section 3.3: printable ASCII but space, `"`
/// and `\\`); the error says why not.
pub fn check_scope(scope: &str) -> Result<(), String> {
    let valid = !scope.is_empty()
        && scope
            .bytes()
            .all(|b| b == 0x21 || (0x23..=0x5b).contains(&b) || (0x5d..=0x7e).contains(&b));
    if valid {
        Ok(())
    } else {
        Err(format!(
            "{scope:?} is not a scope (printable ASCII without spaces, quotes or backslashes)"
        ))
    }
}

impl<'de> Deserialize<'de> for ToolScopes {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Table;
        impl<'de> Visitor<'de> for Table {
            type Value = ToolScopes;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a table from tool-name globs to a scope or a list of scopes")
            }
            fn visit_map<M: MapAccess<'de>>(self, mut map: M) -> Result<ToolScopes, M::Error> {
                #[derive(Deserialize)]
                #[serde(untagged)]
                enum OneOrMany {
                    One(String),
                    Many(Vec<String>),
                }
                let mut scopes = ToolScopes::new();
                while let Some((pattern, value)) = map.next_entry::<String, OneOrMany>()? {
                    let list = match value {
                        OneOrMany::One(scope) => vec![scope],
                        OneOrMany::Many(list) => list,
                    };
                    if list.is_empty() {
                        return Err(de::Error::custom(format!(
                            "tool-scopes: '{pattern}' lists no scope"
                        )));
                    }
                    for scope in list {
                        check_scope(&scope).map_err(|reason| {
                            de::Error::custom(format!("tool-scopes: '{pattern}': {reason}"))
                        })?;
                        scopes = scopes.require(pattern.clone(), scope);
                    }
                }
                Ok(scopes)
            }
        }
        deserializer.deserialize_map(Table)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tool_needs_the_scopes_of_every_matching_pattern() {
        let scopes = ToolScopes::new()
            .require("files_*", "files:read")
            .require("files_delete", "files:write");
        assert_eq!(
            scopes.required("files_delete"),
            BTreeSet::from(["files:read", "files:write"])
        );
        assert_eq!(
            scopes.required("files_list"),
            BTreeSet::from(["files:read"])
        );
        assert!(scopes.required("greet").is_empty());
        assert_eq!(scopes.all(), BTreeSet::from(["files:read", "files:write"]));
    }

    #[test]
    fn reads_a_configuration_table() {
        let scopes: ToolScopes = serde_json::from_value(serde_json::json!({
            "files_*": "files:read",
            "config_set": ["config:write", "audit"]
        }))
        .unwrap();
        assert_eq!(
            scopes.required("config_set"),
            BTreeSet::from(["audit", "config:write"])
        );
        let error = serde_json::from_value::<ToolScopes>(serde_json::json!({"x": []}))
            .unwrap_err()
            .to_string();
        assert_eq!(error, "tool-scopes: 'x' lists no scope");
        let error = serde_json::from_value::<ToolScopes>(serde_json::json!({"x": "a b"}))
            .unwrap_err()
            .to_string();
        assert_eq!(
            error,
            "tool-scopes: 'x': \"a b\" is not a scope (printable ASCII without spaces, quotes or backslashes)"
        );
    }
}
