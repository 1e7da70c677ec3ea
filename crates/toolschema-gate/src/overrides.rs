//! Titles and descriptions the proxy shows in place of the server's, per tool: what a platform
//! team wants the model to read (a clearer description, a warning) without changing the server.
//! Only what the client sees changes; calls are checked against the server's own schemas.

use serde::Deserialize;
use serde_json::Value;
use std::collections::BTreeMap;

/// What the proxy shows of one tool in place of what the server says.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ToolOverride {
    /// The tool's `title`.
    pub title: Option<String>,
    /// The tool's `description`.
    pub description: Option<String>,
}

/// Overrides by tool name.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(transparent)]
pub struct ToolOverrides(BTreeMap<String, ToolOverride>);

impl ToolOverrides {
    /// Override `tool`'s fields with `with`.
    pub fn insert(&mut self, tool: impl Into<String>, with: ToolOverride) {
        self.0.insert(tool.into(), with);
    }

    /// Whether nothing is overridden.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The fields overridden for `tool` (`title`, `description`), for the audit log.
    pub fn fields(&self, tool: &str) -> Vec<&'static str> {
        let Some(with) = self.0.get(tool) else {
            return Vec::new();
        };
        let mut fields = Vec::new();
        if with.title.is_some() {
            fields.push("title");
        }
        if with.description.is_some() {
            fields.push("description");
        }
        fields
    }

    /// Apply the overrides to one tool of a listing; whether anything changed.
    pub fn apply(&self, tool: &mut Value) -> bool {
        let Some(name) = tool.get("name").and_then(Value::as_str) else {
            return false;
        };
        let Some(with) = self.0.get(name) else {
            return false;
        };
        let Value::Object(fields) = tool else {
            return false;
        };
        let mut changed = false;
        for (key, value) in [("title", &with.title), ("description", &with.description)] {
            if let Some(value) = value {
                // An existing key keeps its place; a new one goes last.
                fields.insert(key.to_string(), Value::String(value.clone()));
                changed = true;
            }
        }
        changed
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn replaces_what_is_overridden_in_place() {
        let overrides: ToolOverrides = serde_json::from_value(json!({
            "search": {"description": "Search the internal docs; short queries work best."},
            "echo": {"title": "Echo", "description": "Repeats the message."}
        }))
        .unwrap();
        let mut search =
            json!({"name": "search", "description": "Search.", "inputSchema": {"type": "object"}});
        assert!(overrides.apply(&mut search));
        assert_eq!(
            serde_json::to_string(&search).unwrap(),
            r#"{"name":"search","description":"Search the internal docs; short queries work best.","inputSchema":{"type":"object"}}"#
        );
        let mut other = json!({"name": "other", "description": "Other."});
        assert!(!overrides.apply(&mut other));
        assert_eq!(overrides.fields("echo"), ["title", "description"]);
        assert!(overrides.fields("other").is_empty());
        let unknown = serde_json::from_value::<ToolOverrides>(json!({"x": {"name": "y"}}));
        assert!(unknown.is_err());
    }
}
