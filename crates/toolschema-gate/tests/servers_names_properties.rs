//! The names of many servers' tools behind one front, as properties over generated servers and
//! tool names (names of any length and any characters, bare servers among prefixed ones):
//!
//! - when `expose` accepts a set, every exposed name follows the rule every provider accepts,
//!   no two are equal, and each maps back to exactly the one (server, tool) that maps to it;
//!   every tool listed gets a name;
//! - it accepts every set without bare servers whose servers each list distinct names;
//! - a refusal names two origins that really want one name;
//! - the names do not depend on the order of the servers or of their tools.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use proptest::prelude::*;
use std::collections::HashSet;
use toolschema_gate::servers::{expose, NamingError, ServerTools, EXPOSED_NAME, SEPARATOR};

/// A tool name: mostly plausible, sometimes long, sometimes with characters no provider takes.
fn tool_name() -> impl Strategy<Value = String> {
    prop_oneof![
        "[a-z][a-z_]{0,6}",
        "[a-zA-Z0-9_.:/ -]{1,20}",
        "[a-z]{55,90}",
        "\\PC{1,12}",
        Just("a__b".to_string()),
        Just("x".to_string()),
    ]
}

/// A server: a valid name, bare or not, a few tools (distinct or not).
fn server() -> impl Strategy<Value = ServerTools> {
    (
        "[a-z][a-z0-9-]{0,23}",
        prop::bool::weighted(0.25),
        prop::collection::vec(tool_name(), 0..8),
    )
        .prop_map(|(server, bare, tools)| ServerTools {
            server,
            bare,
            tools,
        })
}

fn servers() -> impl Strategy<Value = Vec<ServerTools>> {
    prop::collection::vec(server(), 1..6).prop_map(|mut servers| {
        let mut seen = HashSet::new();
        servers.retain(|s| seen.insert(s.server.clone()));
        servers
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn exposed_names_are_unique_valid_and_map_back(servers in servers()) {
        match expose(&servers) {
            Ok(exposed) => {
                let mut seen = HashSet::new();
                for (name, origin) in exposed.iter() {
                    prop_assert!(EXPOSED_NAME.accepts(name), "{name:?}");
                    prop_assert!(seen.insert(name.to_string()), "{name:?} twice");
                    prop_assert_eq!(exposed.exposed(&origin.server, &origin.tool), Some(name));
                }
                let listed: usize = servers.iter().map(|s| s.tools.len()).sum();
                prop_assert_eq!(exposed.len(), listed);
                for server in &servers {
                    for tool in &server.tools {
                        let name = exposed.exposed(&server.server, tool).unwrap();
                        let origin = exposed.origin(name).unwrap();
                        prop_assert_eq!(&origin.server, &server.server);
                        prop_assert_eq!(&origin.tool, tool);
                        let plain = format!("{}{SEPARATOR}{tool}", server.server);
                        if !server.bare && EXPOSED_NAME.accepts(&plain) {
                            // A name that fits is never changed.
                            prop_assert_eq!(name, plain.as_str());
                        }
                    }
                }
                // The order of servers and tools does not change a name.
                let mut reversed = servers.clone();
                reversed.reverse();
                for server in &mut reversed {
                    server.tools.reverse();
                }
                prop_assert_eq!(expose(&reversed).unwrap(), exposed);
            }
            Err(NamingError::Collision { name, first, second, .. }) => {
                if first == second {
                    // One origin twice: its server lists the tool twice.
                    let s = servers.iter().find(|s| s.server == first.server).unwrap();
                    prop_assert!(s.tools.iter().filter(|t| **t == first.tool).count() >= 2);
                }
                let wants = |server: &str, tool: &str| {
                    let s = servers.iter().find(|s| s.server == server).unwrap();
                    prop_assert!(s.tools.iter().any(|t| t == tool));
                    Ok(if s.bare { tool.to_string() } else { format!("{server}{SEPARATOR}{tool}") })
                };
                prop_assert_eq!(&wants(&first.server, &first.tool)?, &name);
                prop_assert_eq!(&wants(&second.server, &second.tool)?, &name);
            }
            Err(other) => prop_assert!(false, "unexpected refusal: {other}"),
        }
    }

    #[test]
    fn prefixed_servers_with_distinct_tools_are_always_exposed(servers in servers()) {
        let servers: Vec<ServerTools> = servers
            .into_iter()
            .map(|mut s| {
                s.bare = false;
                let mut seen = HashSet::new();
                s.tools.retain(|t| seen.insert(t.clone()));
                s
            })
            .collect();
        let exposed = expose(&servers);
        prop_assert!(exposed.is_ok(), "{:?}", exposed.err());
    }
}
