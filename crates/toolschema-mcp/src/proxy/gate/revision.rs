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
