//! The tools the proxy has learned from `tools/list` results, with their validators.
//!
//! Every page of every listing that passes through (or that the proxy makes itself) updates the
//! registry. A tool's validators are compiled once, on its first call, and kept until the server
//! lists a different definition under the same name. The registry knows whether it is current: a
//! full listing (every page) must have been seen since the last `notifications/tools/list_changed`.
//! Listings may run side by side (the client's and the proxy's own, or two clients'): each page
//! belongs to the listing whose last page gave the cursor it was asked with, so a listing is
//! complete only with every page of its own.
//!
//! Only the schemas matter here: a name or a field that breaks an MCP rule is lint's business,
//! and such a tool is checked like any other.

use crate::servers::{origin_of, Origin};
use serde_json::Value;
use std::collections::{HashMap, HashSet};
use toolschema::json::number::StatedNumbers;
use toolschema::tool::{mirrored_arguments, MirroredArgument};
use toolschema::{CompileOptions, CompiledTool};

/// A listed tool.
struct Entry {
    /// The tool object as listed, as compact JSON text (a tenth of the memory of a parsed value);
    /// a relisted identical definition keeps its validators.
    raw: String,
    /// The numbers of the listing's text that the tool's values hold otherwise (pointers from
    /// the tool object): its schemas compare them as the text states them.
    stated: StatedNumbers,
    state: State,
    /// The arguments its `inputSchema` mirrors into `Mcp-Param-*` headers.
    mirrored: Vec<MirroredArgument>,
    /// Where it comes from, in a merged listing of the front's own servers.
    origin: Option<Origin>,
}

enum State {
    /// Validators not compiled yet.
    Listed,
    /// Validators compiled; `output_problem` says why the output schema could not be, if it
    /// could not.
    Compiled {
        tool: Box<CompiledTool>,
        output_problem: Option<String>,
    },
    /// Its input schema cannot be learned: why.
    Unusable(String),
    /// Listed twice with different definitions in one listing: which one the server goes by is
    /// unknown, until a listing gives one.
    ListedTwice,
}

/// A listing in progress: the names seen on its pages so far, and the cursor its next page will
/// be asked with.
struct Listing {
    changes_at_request: u64,
    names: HashSet<String>,
    next: String,
}

/// Why a tool listed twice with different definitions cannot be checked.
const LISTED_TWICE: &str = "the server lists it twice, with different definitions, in one listing";

/// Listings in progress kept at most (a client may start listings it never finishes).
const MAX_LISTINGS: usize = 16;

/// Where a page of `tools/list` results sits in its listing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Page<'a> {
    /// The cursor it was asked with; `None` for a first page, which starts a listing.
    pub cursor: Option<&'a str>,
    /// What comes after it: [`Next::Last`] ends the listing.
    pub next: Next<'a>,
    /// The registry's change count when the page was asked for.
    pub changes_at_request: u64,
}

/// What a page's `nextCursor` says comes after it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Next<'a> {
    /// Nothing: the page is its listing's last.
    Last,
    /// The page asked with this cursor.
    Cursor(&'a str),
    /// A `nextCursor` that is not a string: the pages after it are unknown, and the listing
    /// never completes.
    Unknown,
}

/// What the registry says about a tool about to be called.
pub enum Lookup<'a> {
    /// Validate with these validators.
    Compiled(&'a CompiledTool),
    /// Listed, but its input schema cannot be learned: why.
    Unusable {
        /// Why.
        reason: &'a str,
        /// Whether this is the first time it was found (to be reported once).
        first_time: bool,
    },
    /// Not listed.
    Unknown,
}

/// What the registry says about a tool's output schema.
pub enum OutputSchema<'a> {
    /// Check against these validators.
    Compiled(&'a CompiledTool),
    /// It has one that cannot be learned: why.
    Unusable(&'a str),
    /// It has none (or the tool is unknown, or its input schema cannot be learned).
    None,
}

/// The learned tools.
pub struct ToolRegistry {
    tools: HashMap<String, Entry>,
    /// Listings in progress, oldest first.
    listings: Vec<Listing>,
    /// How many `list_changed` notifications have arrived.
    changes: u64,
    /// The change count when the last complete listing was asked for.
    current_as_of: Option<u64>,
    options: CompileOptions,
    /// The front's own servers (`--server`): the only ones a tool's origin may name.
    servers: Vec<String>,
}

impl Default for ToolRegistry {
    fn default() -> Self {
        ToolRegistry {
            tools: HashMap::new(),
            listings: Vec::new(),
            changes: 0,
            current_as_of: None,
            // A `$ref` the proxy will not fetch stops only the calls that reach it.
            options: CompileOptions::new().defer_external_refs(true),
            servers: Vec::new(),
        }
    }
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

    /// Believe the origins a merged listing gives its tools ([`origin_of`]) for these servers
    /// only: the front's own, from its command line.
    pub fn set_servers(&mut self, servers: Vec<String>) {
        self.servers = servers;
    }

    /// Where the listed tool `name` comes from, behind a front of many servers.
    pub fn origin(&self, name: &str) -> Option<&Origin> {
        self.tools.get(name)?.origin.as_ref()
    }

    /// The listed tool names, for suggestions and for the policy's patterns.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.tools.keys().map(String::as_str)
    }

    /// Whether a tool of this name is listed.
    pub fn knows(&self, name: &str) -> bool {
        self.tools.contains_key(name)
    }

    /// How many tools are listed.
    pub fn len(&self) -> usize {
        self.tools.len()
    }

    /// Learn one page of tools. Returns warnings about tools that cannot be called, and whether
    /// the page completed a listing.
    pub fn learn_page(&mut self, tools: &[Value], page: Page<'_>) -> (Vec<String>, bool) {
        self.learn_page_read(tools, &StatedNumbers::default(), page)
    }

    /// Learn one page of tools read from JSON text, as [`Registry::learn_page`] does: `stated`
    /// holds the numbers of the text that the values hold otherwise, with pointers from the
    /// `tools` array (`/0/inputSchema/maximum`); the tools' schemas compare them as stated.
    pub fn learn_page_read(
        &mut self,
        tools: &[Value],
        stated: &StatedNumbers,
        page: Page<'_>,
    ) -> (Vec<String>, bool) {
        let mut warnings = Vec::new();
        // The listing this page belongs to: a new one, or the one whose last page gave its
        // cursor (none when that page was not seen: its tools are learned, and complete nothing).
        let mut listing = match page.cursor {
            None => Some(Listing {
                changes_at_request: page.changes_at_request,
                names: HashSet::new(),
                next: String::new(),
            }),
            Some(cursor) => self
                .listings
                .iter()
                .position(|l| l.next == cursor)
                .map(|at| self.listings.remove(at)),
        };
        for (index, tool) in tools.iter().enumerate() {
            let Some(name) = tool.get("name").and_then(Value::as_str) else {
                warnings.push(format!(
                    "a tool in tools/list has no string \"name\"; it cannot be called: {}",
                    short(tool)
                ));
                continue;
            };
            let raw = tool.to_string();
            let tool_stated = stated.below(&format!("/{index}"));
            let entry = self.tools.get(name);
            let listed_twice = entry.is_some_and(|e| matches!(e.state, State::ListedTwice));
            // A page of no listing in progress (asked with a cursor seen before, say) does not
            // settle a tool listed twice differently: only a listing that gives one does.
            if listing.is_none() && listed_twice {
                continue;
            }
            if let Some(listing) = &mut listing {
                let again = !listing.names.insert(name.to_string());
                if again
                    && (listed_twice
                        || entry.is_some_and(|e| e.raw != raw || e.stated != tool_stated))
                {
                    if !listed_twice {
                        warnings.push(format!(
                            "tool '{name}': {LISTED_TWICE}; its calls cannot be checked"
                        ));
                        self.tools.insert(
                            name.to_string(),
                            Entry {
                                raw,
                                stated: tool_stated,
                                state: State::ListedTwice,
                                mirrored: Vec::new(),
                                origin: None,
                            },
                        );
                    }
                    continue;
                }
            }
            let unchanged = self.tools.get(name).is_some_and(|e| {
                e.raw == raw && e.stated == tool_stated && !matches!(e.state, State::ListedTwice)
            });
            if unchanged {
                continue;
            }
            let mirrored = tool
                .get("inputSchema")
                .map(mirrored_arguments)
                .unwrap_or_default();
            self.tools.insert(
                name.to_string(),
                Entry {
                    raw,
                    stated: tool_stated,
                    state: State::Listed,
                    mirrored,
                    origin: origin_of(tool, &self.servers),
                },
            );
        }
        let mut completed = false;
        if let Some(mut listing) = listing {
            match page.next {
                Next::Last => {
                    self.tools.retain(|name, _| listing.names.contains(name));
                    self.current_as_of = Some(listing.changes_at_request);
                    completed = true;
                }
                Next::Cursor(next) => {
                    listing.next = next.to_string();
                    if self.listings.len() == MAX_LISTINGS {
                        self.listings.remove(0);
                    }
                    self.listings.push(listing);
                }
                Next::Unknown => {}
            }
        }
        (warnings, completed)
    }

    /// The validators of `name`, compiled on first use.
    pub fn lookup(&mut self, name: &str) -> Lookup<'_> {
        let Some(entry) = self.tools.get_mut(name) else {
            return Lookup::Unknown;
        };
        let first_time = matches!(entry.state, State::Listed);
        if first_time {
            entry.state = compile(name, &entry.raw, &entry.stated, &self.options);
        }
        match &entry.state {
            State::Compiled { tool, .. } => Lookup::Compiled(tool),
            State::Unusable(reason) => Lookup::Unusable { reason, first_time },
            State::ListedTwice => Lookup::Unusable {
                reason: LISTED_TWICE,
                first_time,
            },
            State::Listed => Lookup::Unknown,
        }
    }

    /// Compile the validators of every listed tool now, so that [`ToolRegistry::compiled`]
    /// finds them without `&mut`.
    pub fn compile_all(&mut self) {
        for (name, entry) in &mut self.tools {
            if matches!(entry.state, State::Listed) {
                entry.state = compile(name, &entry.raw, &entry.stated, &self.options);
            }
        }
    }

    /// The validators of `name` as compiled so far, never compiling (a tool not compiled yet
    /// is [`Lookup::Unknown`]; `first_time` is always false): for lookups through `&self`,
    /// after [`ToolRegistry::compile_all`].
    pub fn compiled(&self, name: &str) -> Lookup<'_> {
        match self.tools.get(name).map(|entry| &entry.state) {
            Some(State::Compiled { tool, .. }) => Lookup::Compiled(tool),
            Some(State::Unusable(reason)) => Lookup::Unusable {
                reason,
                first_time: false,
            },
            Some(State::ListedTwice) => Lookup::Unusable {
                reason: LISTED_TWICE,
                first_time: false,
            },
            Some(State::Listed) | None => Lookup::Unknown,
        }
    }

    /// The arguments tool `name` mirrors into `Mcp-Param-*` headers (none for a tool not
    /// listed, or listed twice differently).
    pub fn mirrored(&self, name: &str) -> &[MirroredArgument] {
        self.tools.get(name).map_or(&[], |entry| &entry.mirrored)
    }

    /// The output validators of `name`, if its calls were validated.
    pub fn output_schema(&self, name: &str) -> OutputSchema<'_> {
        match self.tools.get(name).map(|entry| &entry.state) {
            Some(State::Compiled {
                output_problem: Some(problem),
                ..
            }) => OutputSchema::Unusable(problem),
            Some(State::Compiled { tool, .. }) if tool.output().is_some() => {
                OutputSchema::Compiled(tool)
            }
            _ => OutputSchema::None,
        }
    }

    /// Whether `name` has an output schema to check results against.
    pub fn has_output_schema(&self, name: &str) -> bool {
        !matches!(self.output_schema(name), OutputSchema::None)
    }
}

/// Compile a listed tool's schemas.
fn compile(name: &str, raw: &str, stated: &StatedNumbers, options: &CompileOptions) -> State {
    let tool = match serde_json::from_str::<Value>(raw) {
        Ok(tool) => tool,
        Err(e) => return State::Unusable(format!("its definition cannot be read again: {e}")),
    };
    let input = match tool.get("inputSchema") {
        Some(schema @ Value::Object(_)) => schema,
        None | Some(Value::Null) => return State::Unusable("it has no inputSchema".into()),
        Some(_) => return State::Unusable("its inputSchema is not a JSON object".into()),
    };
    let output = tool.get("outputSchema").filter(|schema| !schema.is_null());
    match CompiledTool::read_from_schemas(name, input, output, stated, options) {
        Ok(compiled) => State::Compiled {
            tool: Box::new(compiled),
            output_problem: None,
        },
        Err(e) if e.field == "outputSchema" => {
            match CompiledTool::read_from_schemas(name, input, None, stated, options) {
                Ok(compiled) => State::Compiled {
                    tool: Box::new(compiled),
                    output_problem: Some(format!("outputSchema: {}", e.error)),
                },
                Err(e) => State::Unusable(format!("{}: {}", e.field, e.error)),
            }
        }
        Err(e) => State::Unusable(format!("{}: {}", e.field, e.error)),
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

    /// A page of a listing whose pages are asked with cursors "1", "2", ...: `first` asked
    /// without one, `last` with no cursor after it.
    fn page(first: bool, last: bool, changes_at_request: u64) -> Page<'static> {
        Page {
            cursor: (!first).then_some("1"),
            next: if last { Next::Last } else { Next::Cursor("1") },
            changes_at_request,
        }
    }

    fn check(registry: &mut ToolRegistry, name: &str, n: u64) -> Option<bool> {
        match registry.lookup(name) {
            Lookup::Compiled(c) => Some(c.validate_input(&json!({"n": n})).is_ok()),
            _ => None,
        }
    }

    #[test]
    fn learns_every_page_and_becomes_current_at_the_last() {
        let mut registry = ToolRegistry::default();
        assert!(!registry.is_current());
        assert!(
            !registry
                .learn_page(&[tool("a", 10)], page(true, false, 0))
                .1
        );
        assert!(!registry.is_current());
        assert_eq!(check(&mut registry, "a", 5), Some(true));
        assert!(
            registry
                .learn_page(&[tool("b", 10)], page(false, true, 0))
                .1
        );
        assert!(registry.is_current());
        assert_eq!(check(&mut registry, "b", 11), Some(false));
        assert!(matches!(registry.lookup("c"), Lookup::Unknown));
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
    fn listings_side_by_side_each_complete_with_their_own_pages() {
        let mut registry = ToolRegistry::default();
        let page = |cursor, next| Page {
            cursor,
            next,
            changes_at_request: 0,
        };
        // One listing's first two pages; another starts before the first one's last page.
        registry.learn_page(&[tool("alpha", 1)], page(None, Next::Cursor("b2")));
        registry.learn_page(&[tool("rows", 10)], page(Some("b2"), Next::Cursor("b3")));
        registry.learn_page(&[tool("alpha", 1)], page(None, Next::Cursor("a2")));
        let (_, completed) = registry.learn_page(&[tool("gamma", 1)], page(Some("b3"), Next::Last));
        assert!(completed && registry.is_current());
        // A tool listed on an earlier page of the completed listing stays.
        assert_eq!(check(&mut registry, "rows", 11), Some(false));
        // The other listing goes on from its own cursor.
        registry.learn_page(&[tool("rows", 10)], page(Some("a2"), Next::Cursor("a3")));
        registry.learn_page(&[tool("gamma", 1)], page(Some("a3"), Next::Last));
        let mut names: Vec<&str> = registry.names().collect();
        names.sort();
        assert_eq!(names, ["alpha", "gamma", "rows"]);
        // A page asked with a cursor no page gave completes nothing and removes nothing.
        let (_, completed) = registry.learn_page(&[tool("delta", 1)], page(Some("zz"), Next::Last));
        assert!(!completed);
        assert_eq!(registry.len(), 4);
    }

    #[test]
    fn a_tool_listed_twice_differently_cannot_be_checked_until_listed_once() {
        let mut registry = ToolRegistry::default();
        let (warnings, _) = registry.learn_page(&[tool("a", 10)], page(true, false, 0));
        assert!(warnings.is_empty());
        let (warnings, _) = registry.learn_page(
            &[tool("a", 1000), tool("a", 10), tool("a", 10)],
            page(false, true, 0),
        );
        assert_eq!(
            warnings,
            ["tool 'a': the server lists it twice, with different definitions, in one listing; its calls cannot be checked"]
        );
        assert!(matches!(registry.lookup("a"), Lookup::Unusable { .. }));
        // A page of no listing in progress (asked again with a cursor already used) does not
        // settle it.
        registry.learn_page(
            &[tool("a", 1000)],
            Page {
                cursor: Some("1"),
                next: Next::Last,
                changes_at_request: 0,
            },
        );
        assert!(matches!(registry.lookup("a"), Lookup::Unusable { .. }));
        // The same definition twice is no conflict; the next listing with one settles it.
        let (warnings, _) =
            registry.learn_page(&[tool("a", 10), tool("a", 10)], page(true, true, 0));
        assert!(warnings.is_empty());
        assert_eq!(check(&mut registry, "a", 11), Some(false));
    }

    #[test]
    fn a_complete_listing_forgets_removed_tools() {
        let mut registry = ToolRegistry::default();
        registry.learn_page(&[tool("a", 1), tool("b", 1)], page(true, true, 0));
        registry.learn_page(&[tool("b", 1)], page(true, true, 0));
        assert!(matches!(registry.lookup("a"), Lookup::Unknown));
        assert_eq!(registry.names().collect::<Vec<_>>(), ["b"]);
    }

    #[test]
    fn names_mcp_frowns_on_are_checked_like_any_other() {
        let mut registry = ToolRegistry::default();
        let long = "n".repeat(129);
        let tools: Vec<Value> = ["a b", "a/b", "ä", long.as_str()]
            .iter()
            .map(|name| tool(name, 3))
            .collect();
        registry.learn_page(&tools, page(true, true, 0));
        for name in ["a b", "a/b", "ä", long.as_str()] {
            assert_eq!(check(&mut registry, name, 4), Some(false), "{name}");
            assert_eq!(check(&mut registry, name, 3), Some(true), "{name}");
        }
    }

    #[test]
    fn tools_whose_schema_cannot_be_learned_say_why_once() {
        let mut registry = ToolRegistry::default();
        let (warnings, _) = registry.learn_page(
            &[
                json!({"name": "no schema"}),
                json!({"title": "nameless"}),
                json!({"name": "bad", "inputSchema": {"type": "object", "properties": {"n": {"type": 5}}}}),
                json!({"name": "unused_ref", "inputSchema": {"type": "object", "properties": {"n": {"type": "integer"}}, "$defs": {"x": {"$ref": "https://example.com/s.json"}}}}),
                json!({"name": "bad_output", "inputSchema": {"type": "object"}, "outputSchema": {"type": "objekt"}}),
            ],
            page(true, true, 0),
        );
        assert_eq!(
            warnings,
            ["a tool in tools/list has no string \"name\"; it cannot be called: {\"title\":\"nameless\"}"]
        );
        assert!(matches!(
            registry.lookup("no schema"),
            Lookup::Unusable {
                reason: "it has no inputSchema",
                first_time: true
            }
        ));
        assert!(matches!(
            registry.lookup("no schema"),
            Lookup::Unusable {
                first_time: false,
                ..
            }
        ));
        let Lookup::Unusable { reason, .. } = registry.lookup("bad") else {
            panic!("a schema that does not compile cannot be used")
        };
        assert!(reason.starts_with("inputSchema: "), "{reason}");
        // An external `$ref` nobody reaches stops nothing.
        let Lookup::Compiled(compiled) = registry.lookup("unused_ref") else {
            panic!("the unused $ref must not stop checking")
        };
        assert!(compiled.validate_input(&json!({"n": "x"})).is_err());
        // An output schema that cannot be learned leaves the input checked.
        assert!(matches!(registry.lookup("bad_output"), Lookup::Compiled(_)));
        assert!(matches!(
            registry.output_schema("bad_output"),
            OutputSchema::Unusable(_)
        ));
    }
}
