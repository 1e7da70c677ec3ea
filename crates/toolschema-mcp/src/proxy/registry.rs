//! The tools the proxy has learned from `tools/list` results, with their validators.
//!
//! Every page of every listing that passes through (or that the proxy makes itself) updates the
//! registry. A tool's validators are compiled once, on its first call, and kept until the server
//! lists a different definition under the same name. The registry knows whether it is current: a
//! full listing (every page) must have been seen since the last `notifications/tools/list_changed`.

use serde_json::Value;
use std::collections::{HashMap, HashSet};
use toolschema::{CompiledTool, Tool};

/// A listed tool.
struct Entry {
    /// The tool object as listed, as compact JSON text (a tenth of the memory of a parsed value);
    /// a relisted identical definition keeps its validators.
    raw: String,
    state: State,
}

enum State {
    /// Passes the core tool rules; validators not compiled yet.
    Listed,
    /// Validators compiled.
    Compiled(Box<CompiledTool>),
    /// Breaks the tool rules or its schemas do not compile: its calls are forwarded unchecked.
    Unusable,
}

/// A listing in progress: the names seen on its pages so far.
struct Listing {
    changes_at_request: u64,
    names: HashSet<String>,
}

/// Where a page of `tools/list` results sits in its listing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Page {
    /// Asked for without a cursor: starts a listing.
    pub first: bool,
    /// Has no `nextCursor`: ends the listing.
    pub last: bool,
    /// The registry's change count when the page was asked for.
    pub changes_at_request: u64,
}

/// What the registry says about a tool about to be called.
pub enum Lookup<'a> {
    /// Validate with these validators.
    Compiled(&'a CompiledTool),
    /// Listed, but cannot be validated (the reason was reported when it was found).
    Unusable,
    /// Not listed.
    Unknown,
}

/// The learned tools.
#[derive(Default)]
pub struct ToolRegistry {
    tools: HashMap<String, Entry>,
    listing: Option<Listing>,
    /// How many `list_changed` notifications have arrived.
    changes: u64,
    /// The change count when the last complete listing was asked for.
    current_as_of: Option<u64>,
}

impl ToolRegistry {
    /// The number of `list_changed` notifications seen; recorded with each `tools/list` request.
    pub fn changes(&self) -> u64 {
        self.changes
    }

    /// The server said its tools changed.
    pub fn tools_changed(&mut self) {
        self.changes += 1;
    }

    /// Whether a complete listing has been seen since the tools last changed.
    pub fn is_current(&self) -> bool {
        self.current_as_of == Some(self.changes)
    }

    /// Take the registry as current as of `changes` without a complete listing (the listing
    /// failed): what is known is all that will be known until the tools change again.
    pub fn settle(&mut self, changes: u64) {
        self.listing = None;
        self.current_as_of = Some(changes);
    }

    /// The listed tool names, for suggestions.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.tools.keys().map(String::as_str)
    }

    /// Learn one page of tools. Returns warnings about tools that cannot be validated.
    pub fn learn_page(&mut self, tools: &[Value], page: Page) -> Vec<String> {
        let mut warnings = Vec::new();
        if page.first {
            self.listing = Some(Listing {
                changes_at_request: page.changes_at_request,
                names: HashSet::new(),
            });
        }
        for tool in tools {
            let Some(name) = tool.get("name").and_then(Value::as_str) else {
                warnings.push(format!(
                    "a tool in tools/list has no string \"name\"; it cannot be called: {}",
                    short(tool)
                ));
                continue;
            };
            if let Some(listing) = &mut self.listing {
                listing.names.insert(name.to_string());
            }
            let raw = tool.to_string();
            if self.tools.get(name).is_some_and(|entry| entry.raw == raw) {
                continue;
            }
            let state = match Tool::from_value(tool.clone()) {
                Ok(_) => State::Listed,
                Err(e) => {
                    warnings.push(format!(
                        "tool '{name}' breaks the MCP tool rules ({e}); its calls are forwarded without validation"
                    ));
                    State::Unusable
                }
            };
            self.tools.insert(name.to_string(), Entry { raw, state });
        }
        if page.last {
            if let Some(listing) = self.listing.take() {
                self.tools.retain(|name, _| listing.names.contains(name));
                self.current_as_of = Some(listing.changes_at_request);
            }
        }
        warnings
    }

    /// The validators of `name`, compiled on first use. A warning comes back when compiling
    /// fails (reported once: the tool is then marked unusable).
    pub fn lookup(&mut self, name: &str) -> (Lookup<'_>, Option<String>) {
        let Some(entry) = self.tools.get_mut(name) else {
            return (Lookup::Unknown, None);
        };
        let mut warning = None;
        if matches!(entry.state, State::Listed) {
            let tool = serde_json::from_str(&entry.raw)
                .map_err(|e| e.to_string())
                .and_then(|value| Tool::from_value(value).map_err(|e| e.to_string()));
            entry.state = match tool.map(|tool| tool.compile()) {
                Ok(Ok(compiled)) => State::Compiled(Box::new(compiled)),
                Ok(Err(e)) => {
                    warning = Some(format!(
                        "{e}; calls to '{name}' are forwarded without validation"
                    ));
                    State::Unusable
                }
                Err(e) => {
                    warning = Some(format!(
                        "tool '{name}' breaks the MCP tool rules ({e}); its calls are forwarded without validation"
                    ));
                    State::Unusable
                }
            };
        }
        let lookup = match &entry.state {
            State::Compiled(compiled) => Lookup::Compiled(compiled),
            State::Listed | State::Unusable => Lookup::Unusable,
        };
        (lookup, warning)
    }

    /// Whether `name` has compiled validators with an output schema.
    pub fn has_output_schema(&self, name: &str) -> bool {
        self.compiled(name)
            .is_some_and(|compiled| compiled.output().is_some())
    }

    /// The compiled validators of `name`, if its calls were validated.
    pub fn compiled(&self, name: &str) -> Option<&CompiledTool> {
        match &self.tools.get(name)?.state {
            State::Compiled(compiled) => Some(compiled),
            _ => None,
        }
    }
}

/// A value shortened for a message.
fn short(value: &Value) -> String {
    let text = value.to_string();
    match text.char_indices().nth(120) {
        Some((cut, _)) => format!("{}...", &text[..cut]),
        None => text,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn tool(name: &str, max: u64) -> Value {
        json!({"name": name, "inputSchema": {"type": "object", "properties": {"n": {"type": "integer", "maximum": max}}}})
    }

    fn page(first: bool, last: bool, changes_at_request: u64) -> Page {
        Page {
            first,
            last,
            changes_at_request,
        }
    }

    fn check(registry: &mut ToolRegistry, name: &str, n: u64) -> Option<bool> {
        match registry.lookup(name).0 {
            Lookup::Compiled(c) => Some(c.validate_input(&json!({"n": n})).is_ok()),
            _ => None,
        }
    }

    #[test]
    fn learns_every_page_and_becomes_current_at_the_last() {
        let mut registry = ToolRegistry::default();
        assert!(!registry.is_current());
        registry.learn_page(&[tool("a", 10)], page(true, false, 0));
        assert!(!registry.is_current());
        assert_eq!(check(&mut registry, "a", 5), Some(true));
        registry.learn_page(&[tool("b", 10)], page(false, true, 0));
        assert!(registry.is_current());
        assert_eq!(check(&mut registry, "b", 11), Some(false));
        assert!(matches!(registry.lookup("c").0, Lookup::Unknown));
    }

    #[test]
    fn a_change_makes_it_stale_until_a_listing_asked_after_it() {
        let mut registry = ToolRegistry::default();
        registry.learn_page(&[tool("a", 10)], page(true, true, 0));
        registry.tools_changed();
        assert!(!registry.is_current());
        // A listing asked for before the change does not make it current.
        registry.learn_page(&[tool("a", 10)], page(true, true, 0));
        assert!(!registry.is_current());
        registry.learn_page(&[tool("a", 20)], page(true, true, registry.changes()));
        assert!(registry.is_current());
        assert_eq!(check(&mut registry, "a", 15), Some(true));
    }

    #[test]
    fn a_complete_listing_forgets_removed_tools() {
        let mut registry = ToolRegistry::default();
        registry.learn_page(&[tool("a", 1), tool("b", 1)], page(true, true, 0));
        registry.learn_page(&[tool("b", 1)], page(true, true, 0));
        assert!(matches!(registry.lookup("a").0, Lookup::Unknown));
        assert_eq!(registry.names().collect::<Vec<_>>(), ["b"]);
    }

    #[test]
    fn tools_that_cannot_be_validated_are_reported() {
        let mut registry = ToolRegistry::default();
        let warnings = registry.learn_page(
            &[
                json!({"name": "no schema"}),
                json!({"title": "nameless"}),
                json!({"name": "bad_ref", "inputSchema": {"$ref": "https://example.com/s.json"}}),
            ],
            page(true, true, 0),
        );
        assert_eq!(
            warnings,
            [
                "tool 'no schema' breaks the MCP tool rules (name contains invalid characters: ' '); its calls are forwarded without validation",
                "a tool in tools/list has no string \"name\"; it cannot be called: {\"title\":\"nameless\"}",
            ]
        );
        assert!(matches!(registry.lookup("no schema").0, Lookup::Unusable));
        let (lookup, warning) = registry.lookup("bad_ref");
        assert!(matches!(lookup, Lookup::Unusable));
        assert!(warning
            .unwrap()
            .ends_with("calls to 'bad_ref' are forwarded without validation"));
        assert_eq!(registry.lookup("bad_ref").1, None, "reported once");
    }
}
