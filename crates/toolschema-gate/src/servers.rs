//! Names for many servers behind one front: each server's tools are exposed as `SERVER__TOOL`
//! (or bare, where the operator asked and the name is unique), in a form every provider
//! accepts, with a map back to the one (server, tool) each exposed name stands for.
//!
//! Why a separator rather than `serverInfo.name`: MCP asks aggregators for their own
//! disambiguation, and the server's self-given name is neither unique nor stable. Server names
//! may not hold `_`, so the first `__` of a prefixed name always ends the server's name and two
//! servers' prefixed names never meet. The exposed names follow the core's
//! [`PORTABLE_TOOL_NAME`]: a name that breaks it (too long, a `.` or `/` in it) is fixed by the
//! core's [`assign`], the same deterministic shortening `adapt` uses (the start kept, a short
//! hash of the original added).
//!
//! Two tools that want one name are never resolved silently: [`expose`] refuses them, naming
//! both origins.

use std::collections::{BTreeMap, HashMap};
use std::fmt;
use toolschema::adapt::names::assign;
use toolschema::adapt::{NameRule, PORTABLE_TOOL_NAME};

/// The key of a merged listing's tool `_meta` that says where the tool comes from:
/// `{"server": "time", "tool": "convert_time"}`. The merged server writes it; the front believes
/// it only for the servers of its own command line ([`origin_of`]).
pub const ORIGIN_META: &str = "dev.toolschema/origin";

/// Where a tool of a merged listing comes from, as its `_meta` says ([`ORIGIN_META`]), if the
/// server it names is one of `servers`: a label value is never taken from a server or a client.
pub fn origin_of(tool: &serde_json::Value, servers: &[String]) -> Option<Origin> {
    let origin = tool.get("_meta")?.get(ORIGIN_META)?;
    let server = origin.get("server")?.as_str()?;
    let found = servers.iter().find(|s| *s == server)?;
    Some(Origin {
        server: found.clone(),
        tool: origin.get("tool")?.as_str()?.to_string(),
    })
}

/// What goes between a server's name and its tool's name.
pub const SEPARATOR: &str = "__";

/// The longest server name: short enough to leave a tool most of the 64 characters.
pub const MAX_SERVER_NAME: usize = 24;

/// The rule exposed names follow.
pub const EXPOSED_NAME: NameRule = PORTABLE_TOOL_NAME;

/// A server name the proxy refuses.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "server name `{name}` is not allowed: use 1 to {MAX_SERVER_NAME} ASCII letters, digits and \
     `-`, starting with a letter (`_` is kept for the `{SEPARATOR}` between server and tool)"
)]
pub struct BadServerName {
    /// The name as given.
    pub name: String,
}

/// Whether `name` may name a server: `^[a-zA-Z][a-zA-Z0-9-]{0,23}$`.
pub fn check_server_name(name: &str) -> Result<(), BadServerName> {
    let mut chars = name.chars();
    let first_ok = chars.next().is_some_and(|c| c.is_ascii_alphabetic());
    if first_ok
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '-')
        && name.len() <= MAX_SERVER_NAME
    {
        Ok(())
    } else {
        Err(BadServerName {
            name: name.to_string(),
        })
    }
}

/// Where an exposed tool comes from.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Origin {
    /// The server's name, as the operator declared it.
    pub server: String,
    /// The tool's name, as the server lists it.
    pub tool: String,
}

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "tool `{}` of server `{}`", self.tool, self.server)
    }
}

/// One server and the tools it lists.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerTools {
    /// The server's name (see [`check_server_name`]).
    pub server: String,
    /// Expose its tools under their own names rather than `SERVER__TOOL`.
    pub bare: bool,
    /// Its tools' names, as it lists them.
    pub tools: Vec<String>,
}

/// Why a set of servers cannot be exposed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NamingError {
    /// A server's name breaks the rule.
    #[error(transparent)]
    BadServerName(#[from] BadServerName),
    /// Two servers were given one name.
    #[error("server `{0}` is declared twice")]
    DuplicateServer(String),
    /// Two tools would be exposed under one name.
    #[error("{first} and {second} would both be exposed as `{name}`; {remedy}")]
    Collision {
        /// The name both want.
        name: String,
        /// One tool that wants it.
        first: Box<Origin>,
        /// The other.
        second: Box<Origin>,
        /// What the operator can do about it.
        remedy: String,
    },
}

/// The exposed names of every server's tools, both ways.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ExposedNames {
    by_name: BTreeMap<String, Origin>,
    by_origin: HashMap<Origin, String>,
}

impl ExposedNames {
    /// The (server, tool) an exposed name stands for.
    pub fn origin(&self, exposed: &str) -> Option<&Origin> {
        self.by_name.get(exposed)
    }

    /// The name a server's tool is exposed as.
    pub fn exposed(&self, server: &str, tool: &str) -> Option<&str> {
        let origin = Origin {
            server: server.to_string(),
            tool: tool.to_string(),
        };
        self.by_origin.get(&origin).map(String::as_str)
    }

    /// Every exposed name with its origin, in the order of the names.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &Origin)> {
        self.by_name
            .iter()
            .map(|(name, origin)| (name.as_str(), origin))
    }

    /// How many tools are exposed.
    pub fn len(&self) -> usize {
        self.by_name.len()
    }

    /// Whether no tool is exposed.
    pub fn is_empty(&self) -> bool {
        self.by_name.is_empty()
    }
}

/// The name a tool asks for before any fix: `SERVER__TOOL`, or the tool's own for a bare server.
fn wanted(server: &ServerTools, tool: &str) -> String {
    if server.bare {
        tool.to_string()
    } else {
        format!("{}{SEPARATOR}{tool}", server.server)
    }
}

/// Expose every server's tools under names that are unique, follow [`EXPOSED_NAME`], and map
/// back to exactly one (server, tool). The result depends on the set of tools only, not on the
/// order they are given in. Two tools that want one name (a tool listed twice by one server, or
/// a bare name another tool also wants) are refused with both origins named.
pub fn expose(servers: &[ServerTools]) -> Result<ExposedNames, NamingError> {
    let mut declared: HashMap<&str, ()> = HashMap::with_capacity(servers.len());
    for server in servers {
        check_server_name(&server.server)?;
        if declared.insert(server.server.as_str(), ()).is_some() {
            return Err(NamingError::DuplicateServer(server.server.clone()));
        }
    }
    // Sorted by origin, so that the fixes (which depend on the order of the names) do not
    // depend on the order of the servers or of their listings.
    let mut wants: Vec<(Origin, String, bool)> = servers
        .iter()
        .flat_map(|server| {
            server.tools.iter().map(move |tool| {
                let origin = Origin {
                    server: server.server.clone(),
                    tool: tool.clone(),
                };
                (origin, wanted(server, tool), server.bare)
            })
        })
        .collect();
    wants.sort();
    let mut first_want: HashMap<&str, (&Origin, bool)> = HashMap::with_capacity(wants.len());
    for (origin, name, bare) in &wants {
        if let Some((first, first_bare)) = first_want.insert(name.as_str(), (origin, *bare)) {
            let remedy = match (first_bare, *bare) {
                (_, true) => format!("stop exposing server `{}` bare", origin.server),
                (true, false) => format!("stop exposing server `{}` bare", first.server),
                (false, false) => "the server lists one tool twice".to_string(),
            };
            return Err(NamingError::Collision {
                name: name.clone(),
                first: Box::new(first.clone()),
                second: Box::new(origin.clone()),
                remedy,
            });
        }
    }
    let names: Vec<&str> = wants.iter().map(|(_, name, _)| name.as_str()).collect();
    let assigned = assign(&EXPOSED_NAME, &names);
    let mut exposed = ExposedNames::default();
    for ((origin, _, _), name) in wants.iter().zip(assigned) {
        // Every wanted name is distinct (checked above), so each gets one.
        let Some(name) = name else { continue };
        exposed.by_origin.insert(origin.clone(), name.clone());
        exposed.by_name.insert(name, origin.clone());
    }
    Ok(exposed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_origin_is_believed_only_for_the_fronts_own_servers() {
        let tool = |server: &str| serde_json::json!({"name": "t", "_meta": {ORIGIN_META: {"server": server, "tool": "own"}}});
        let ours = vec!["time".to_string()];
        assert_eq!(
            origin_of(&tool("time"), &ours),
            Some(Origin {
                server: "time".into(),
                tool: "own".into()
            })
        );
        // A server (or a plain proxy's upstream) naming another: no label from it.
        assert_eq!(origin_of(&tool("made-up"), &ours), None);
        assert_eq!(origin_of(&tool("time"), &[]), None);
        assert_eq!(origin_of(&serde_json::json!({"name": "t"}), &ours), None);
    }

    fn server(name: &str, bare: bool, tools: &[&str]) -> ServerTools {
        ServerTools {
            server: name.to_string(),
            bare,
            tools: tools.iter().map(|t| t.to_string()).collect(),
        }
    }

    #[test]
    fn prefixed_names_map_back() {
        let exposed = expose(&[
            server("time", false, &["get_current_time", "convert_time"]),
            server("everything", false, &["echo", "get-sum"]),
        ])
        .unwrap();
        assert_eq!(
            exposed.exposed("time", "convert_time"),
            Some("time__convert_time")
        );
        assert_eq!(
            exposed.exposed("everything", "get-sum"),
            Some("everything__get-sum")
        );
        let origin = exposed.origin("everything__echo").unwrap();
        assert_eq!(
            (origin.server.as_str(), origin.tool.as_str()),
            ("everything", "echo")
        );
        assert_eq!(exposed.len(), 4);
        assert_eq!(exposed.origin("echo"), None);
    }

    #[test]
    fn long_and_odd_names_are_fixed_deterministically() {
        let long = "x".repeat(80);
        let exposed = expose(&[server("fs", false, &["files.read", "files_read", &long])]).unwrap();
        assert_eq!(exposed.exposed("fs", "files_read"), Some("fs__files_read"));
        let fixed = exposed.exposed("fs", "files.read").unwrap();
        assert!(
            fixed.starts_with("fs__files_read_") && fixed.len() == 23,
            "{fixed}"
        );
        let short = exposed.exposed("fs", &long).unwrap();
        assert_eq!(short.len(), 64);
        assert!(short.starts_with("fs__xxx"));
        assert_eq!(exposed.origin(short).unwrap().tool, long);
    }

    #[test]
    fn bare_names_where_unique_and_collisions_refused_with_both_origins() {
        let exposed = expose(&[
            server("time", true, &["get_current_time"]),
            server("everything", false, &["echo"]),
        ])
        .unwrap();
        assert_eq!(
            exposed.exposed("time", "get_current_time"),
            Some("get_current_time")
        );
        let err =
            expose(&[server("a", true, &["echo"]), server("b", true, &["echo"])]).unwrap_err();
        assert_eq!(
            err.to_string(),
            "tool `echo` of server `a` and tool `echo` of server `b` would both be exposed as \
             `echo`; stop exposing server `b` bare"
        );
        // A bare tool that spells another server's prefixed name.
        let err = expose(&[server("a", false, &["b"]), server("z", true, &["a__b"])]).unwrap_err();
        assert!(matches!(err, NamingError::Collision { ref name, .. } if name == "a__b"));
        assert!(err.to_string().contains("server `z` bare"), "{err}");
        // One server listing a tool twice.
        let err = expose(&[server("a", false, &["x", "x"])]).unwrap_err();
        assert!(
            err.to_string()
                .ends_with("`a__x`; the server lists one tool twice"),
            "{err}"
        );
    }

    #[test]
    fn server_names() {
        for ok in ["time", "GitHub-2", "a"] {
            check_server_name(ok).unwrap();
        }
        for bad in ["", "2x", "my_server", "a.b", "é", &"a".repeat(25)] {
            assert!(check_server_name(bad).is_err(), "{bad}");
        }
        let err = expose(&[server("a_b", false, &[])]).unwrap_err();
        assert!(err
            .to_string()
            .starts_with("server name `a_b` is not allowed"));
        let err = expose(&[server("a", false, &[]), server("a", true, &[])]).unwrap_err();
        assert_eq!(err, NamingError::DuplicateServer("a".into()));
    }
}
