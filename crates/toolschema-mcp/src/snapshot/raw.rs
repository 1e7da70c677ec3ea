//! The raw side of a typed session: results kept exactly as the server sent them.
//!
//! rmcp reads every message into its typed model, which is right for running the session but
//! loses what a snapshot must keep: a tool's fields it does not know, and the order of keys. The
//! transports below therefore parse each incoming message as plain JSON first (keys in order),
//! keep the `result` of every response here by request id, and only then hand rmcp its typed
//! copy.

use crate::message::IdKey;
use rmcp::model::{RequestId, ServerJsonRpcMessage};
use serde_json::Value;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// Results of responses as received, by request id.
#[derive(Debug, Clone, Default)]
pub struct RawResults(Arc<Mutex<HashMap<IdKey, Value>>>);

impl RawResults {
    /// Keep the `result` of a response; anything else is ignored.
    pub fn observe(&self, message: &Value) {
        let (Some(id), Some(result)) = (message.get("id"), message.get("result")) else {
            return;
        };
        if id.is_null() {
            return;
        }
        if let Ok(mut results) = self.0.lock() {
            results.insert(IdKey::of(id), result.clone());
        }
    }

    /// Take the result of the response to request `id`.
    pub fn take(&self, id: &RequestId) -> Option<Value> {
        let id = serde_json::to_value(id).ok()?;
        self.0.lock().ok()?.remove(&IdKey::of(&id))
    }
}

/// Why an incoming message was not handed to the session.
#[derive(Debug, thiserror::Error)]
pub enum Unreadable {
    /// Not JSON.
    #[error("the server sent a line that is not JSON ({0}); skipped")]
    NotJson(String),
    /// JSON, but not a JSON-RPC message the session understands.
    #[error("the server sent a message that is not JSON-RPC ({0}); skipped")]
    NotJsonRpc(serde_json::Error),
}

/// Read a message with the core's reader, which takes all the grammar allows (a lone surrogate
/// becomes U+FFFD; of a key given twice the last counts, as a server's own reader takes it).
pub fn parse_message(bytes: &[u8]) -> Result<Value, String> {
    let text = std::str::from_utf8(bytes).map_err(|e| format!("not UTF-8: {e}"))?;
    toolschema::json::parse_with(text, toolschema::json::DuplicateKeys::KeepLast)
        .map_err(|e| format!("{} at byte {}", e.message, e.offset))
}

/// Parse one incoming message: keep its raw result, then type it for rmcp.
pub fn receive(bytes: &[u8], results: &RawResults) -> Result<ServerJsonRpcMessage, Unreadable> {
    let value = parse_message(bytes).map_err(Unreadable::NotJson)?;
    results.observe(&value);
    serde_json::from_value(value).map_err(Unreadable::NotJsonRpc)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn keeps_results_in_server_order_by_id() {
        let results = RawResults::default();
        let line = br#"{"result":{"tools":[{"name":"t","x-extra":1,"inputSchema":{"type":"object","$schema":"s"}}]},"jsonrpc":"2.0","id":3}"#;
        let typed = receive(line, &results).unwrap();
        assert!(matches!(typed, ServerJsonRpcMessage::Response(_)));
        let raw = results.take(&RequestId::Number(3)).unwrap();
        assert_eq!(
            serde_json::to_string(&raw).unwrap(),
            r#"{"tools":[{"name":"t","x-extra":1,"inputSchema":{"type":"object","$schema":"s"}}]}"#
        );
        assert_eq!(results.take(&RequestId::Number(3)), None);
        // A string id is a different id.
        results.observe(&json!({"id": "3", "result": {}}));
        assert_eq!(results.take(&RequestId::Number(3)), None);
    }

    #[test]
    fn reads_lone_surrogates_that_javascript_writes() {
        let results = RawResults::default();
        // What JSON.stringify writes for a description cut inside an emoji.
        let line = br#"{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"t","description":"cut \ud83d","inputSchema":{"type":"object"}}]}}"#;
        assert!(receive(line, &results).is_ok());
        let raw = results.take(&RequestId::Number(1)).unwrap();
        assert_eq!(raw["tools"][0]["description"], "cut \u{fffd}");
    }

    #[test]
    fn reports_lines_that_are_not_messages() {
        let results = RawResults::default();
        assert!(matches!(
            receive(b"Server listening", &results),
            Err(Unreadable::NotJson(_))
        ));
    }
}
