//! What the gate writes itself in the shape of the revision the client speaks.
//!
//! From 2026-07-28 on there is no `initialize`: each request declares its revision in
//! `params._meta`, every result carries `resultType`, and a request without the revision and the
//! client's capabilities in its `_meta` is refused. The gate remembers what the client's latest
//! request declared, so that its own `tools/list` carries the same and its own answers have
//! the result shape the client expects.

use super::Gate;
use crate::message::{self, Message, META_CLIENT_CAPABILITIES, META_PROTOCOL_VERSION};
use serde_json::{json, Value};

/// What a 2026-07-28 (or later) client declared in its latest request.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Declared {
    revision: String,
    capabilities: Value,
}

impl Gate {
    /// A request from the client: remember the revision it declares, if it is modern.
    pub(super) fn note_revision(&mut self, text: &str, message: &Message) {
        let Some(revision) = message::declared_revision(text, message) else {
            return;
        };
        if !message::is_modern(&revision) {
            return;
        }
        let capabilities = message::meta_member(text, message, META_CLIENT_CAPABILITIES)
            .and_then(|at| message::parse_at(text, at).ok())
            .filter(Value::is_object)
            .unwrap_or_else(|| json!({}));
        self.declared = Some(Declared {
            revision,
            capabilities,
        });
    }

    /// Whether the client speaks 2026-07-28 or later.
    pub(super) fn speaks_modern(&self) -> bool {
        self.declared.is_some()
    }

    /// A tool error result the model can read, in the client's result shape.
    pub(super) fn tool_error(&self, text: String) -> Value {
        message::tool_error_result_for(text, self.speaks_modern())
    }

    /// The `_meta` of the proxy's own requests: the client's revision and capabilities, and
    /// the proxy as the client (none before 2026-07-28, where `initialize` said all that).
    pub(super) fn own_request_meta(&self) -> Option<Value> {
        let declared = self.declared.as_ref()?;
        Some(json!({
            META_PROTOCOL_VERSION: declared.revision,
            META_CLIENT_CAPABILITIES: declared.capabilities,
            "io.modelcontextprotocol/clientInfo": {
                "name": "toolschema-proxy",
                "version": env!("CARGO_PKG_VERSION"),
            },
        }))
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::super::{Action, Gate, GateConfig};
    use crate::overrides::{ToolOverride, ToolOverrides};
    use crate::policy::{Glob, HolderPolicy, ToolPolicy};
    use serde_json::{json, Value};
    use std::time::Instant;

    fn lines(actions: Vec<Action>) -> (Vec<Value>, Vec<Value>) {
        let (mut server, mut client) = (Vec::new(), Vec::new());
        for action in actions {
            match action {
                Action::ToServer(line) => server.push(serde_json::from_slice(&line).unwrap()),
                Action::ToClient(line) => client.push(serde_json::from_slice(&line).unwrap()),
                Action::Audit(_) => {}
            }
        }
        (server, client)
    }

    fn feed(gate: &mut Gate, client: bool, message: Value) -> (Vec<Value>, Vec<Value>) {
        let mut out = Vec::new();
        let line = message.to_string().into_bytes();
        match client {
            true => gate.client_message(line, Instant::now(), &mut out),
            false => gate.server_message(line, Instant::now(), &mut out),
        }
        lines(out)
    }

    const META: &str = "io.modelcontextprotocol/protocolVersion";

    fn tools() -> Value {
        json!([
            {"name": "add", "description": "Adds.", "inputSchema": {"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]}},
            {"name": "drop_table", "inputSchema": {"type": "object"}}
        ])
    }

    /// A 2026-07-28 client calls before any listing: the proxy's own tools/list carries the
    /// client's revision and capabilities, and its refusal has `resultType`.
    #[test]
    fn the_own_listing_and_refusals_speak_the_clients_revision() {
        let mut gate = Gate::new(GateConfig::default());
        let meta = json!({META: "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {"sampling": {}}});
        let call = json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "add", "arguments": {"a": "one"}, "_meta": meta}});
        let (server, client) = feed(&mut gate, true, call);
        assert!(client.is_empty());
        assert_eq!(
            server,
            [
                json!({"jsonrpc": "2.0", "id": "toolschema-proxy-1", "method": "tools/list", "params": {"_meta": {
                    META: "2026-07-28",
                    "io.modelcontextprotocol/clientCapabilities": {"sampling": {}},
                    "io.modelcontextprotocol/clientInfo": {"name": "toolschema-proxy", "version": env!("CARGO_PKG_VERSION")}
                }}})
            ]
        );
        let listed = json!({"jsonrpc": "2.0", "id": "toolschema-proxy-1", "result": {"tools": tools(), "resultType": "complete", "ttlMs": 0, "cacheScope": "public"}});
        let (server, client) = feed(&mut gate, false, listed);
        assert!(server.is_empty());
        assert_eq!(
            client,
            [
                json!({"jsonrpc": "2.0", "id": 7, "result": {"content": [{"type": "text", "text": "argument 'a' must be an integer (got a string)"}], "isError": true, "resultType": "complete"}})
            ]
        );
    }

    /// A 2025-11-25 client gets the shape it knows: no `_meta` on the own listing, no
    /// `resultType` on refusals.
    #[test]
    fn legacy_clients_get_the_legacy_shape() {
        let mut gate = Gate::new(GateConfig::default());
        let call = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "add", "arguments": {}}});
        let (server, _) = feed(&mut gate, true, call);
        assert_eq!(
            server,
            [json!({"jsonrpc": "2.0", "id": "toolschema-proxy-1", "method": "tools/list"})]
        );
        let (_, client) = feed(
            &mut gate,
            false,
            json!({"jsonrpc": "2.0", "id": "toolschema-proxy-1", "result": {"tools": tools()}}),
        );
        assert_eq!(
            client,
            [
                json!({"jsonrpc": "2.0", "id": 1, "result": {"content": [{"type": "text", "text": "missing required argument 'a'"}], "isError": true}})
            ]
        );
    }

    /// A listing filtered for one token is no longer cacheable by others, and overridden
    /// descriptions replace the server's.
    #[test]
    fn a_listing_for_one_token_is_private_and_overridden() {
        let mut overrides = ToolOverrides::default();
        overrides.insert(
            "add",
            ToolOverride {
                description: Some("Adds two integers.".into()),
                ..ToolOverride::default()
            },
        );
        let config = GateConfig {
            policy: ToolPolicy {
                holder: Some(HolderPolicy {
                    name: "bob".into(),
                    deny: vec![Glob::new("drop_*")],
                    ..HolderPolicy::default()
                }),
                ..ToolPolicy::default()
            },
            overrides,
            ..GateConfig::default()
        };
        let mut gate = Gate::new(config);
        feed(
            &mut gate,
            true,
            json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": {META: "2026-07-28"}}}),
        );
        let (_, client) = feed(
            &mut gate,
            false,
            json!({"jsonrpc": "2.0", "id": 1, "result": {"tools": tools(), "resultType": "complete", "ttlMs": 60000, "cacheScope": "public"}}),
        );
        assert_eq!(
            client,
            [json!({"jsonrpc": "2.0", "id": 1, "result": {
                "tools": [{"name": "add", "description": "Adds two integers.", "inputSchema": {"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]}}],
                "resultType": "complete", "ttlMs": 60000, "cacheScope": "private"
            }})]
        );
        let denied = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "drop_table", "arguments": {}}});
        let (server, client) = feed(&mut gate, true, denied);
        assert!(server.is_empty());
        assert_eq!(
            client[0]["error"]["message"],
            "tool 'drop_table' is not available to 'bob' (denied by 'drop_*' in its policy)"
        );
    }
}
