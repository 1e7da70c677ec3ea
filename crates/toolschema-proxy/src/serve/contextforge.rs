//! A ContextForge external plugin (the plugin framework `cpex`, `framework/external/mcp`): an
//! MCP server with two tools the gateway calls. `get_plugin_config {name}` answers the plugin's
//! configuration; `invoke_hook {hook_type, plugin_name, payload, context}` runs a hook and
//! answers `{"result": PluginResult}` (or `{"error": …}`), each as the text of the tool's result.
//!
//! `tool_pre_invoke` (payload `{name, args}`) judges the arguments; `tool_post_invoke` (payload
//! `{name, result}`) judges the result. A refusal is `continue_processing: false` with a
//! `violation` whose description is toolschema's messages. The plugin keeps the catalog: the
//! gateway sends no schema.

use super::{Mode, Phase, Service};
use serde_json::{json, Value};

/// The hooks the plugin serves.
const HOOKS: [&str; 2] = ["tool_pre_invoke", "tool_post_invoke"];

/// The tools of the plugin's MCP server, as `tools/list` gives them.
pub fn tools() -> Value {
    json!([
        {
            "name": "get_plugin_config",
            "description": "The configuration of the plugin named: the hooks it serves.",
            "inputSchema": {"type": "object", "properties": {"name": {"type": "string"}},
                "required": ["name"]}
        },
        {
            "name": "invoke_hook",
            "description": "Run a hook: tool_pre_invoke checks a call's arguments against the tool's inputSchema, tool_post_invoke its result against the outputSchema.",
            "inputSchema": {"type": "object", "properties": {
                "hook_type": {"type": "string"},
                "plugin_name": {"type": "string"},
                "payload": {"type": "object"},
                "context": {"type": "object"}
            }, "required": ["hook_type", "payload"]}
        }
    ])
}

/// Answer a `tools/call` of one of the plugin's tools: the `CallToolResult`, or `Err` with a
/// JSON-RPC error's message for a tool it does not have.
pub fn call(service: &Service, params: &Value) -> Result<Value, String> {
    let arguments = params.get("arguments").unwrap_or(&Value::Null);
    let answer = match params.get("name").and_then(Value::as_str) {
        Some("get_plugin_config") => config(service, arguments),
        Some("invoke_hook") => invoke(service, arguments),
        Some(other) => return Err(format!("no tool named '{other}'")),
        None => return Err("'name' must be a string".into()),
    };
    Ok(json!({"content": [{"type": "text", "text": answer.to_string()}], "isError": false}))
}

/// The plugin's configuration (the gateway's own settings win over it).
fn config(service: &Service, arguments: &Value) -> Value {
    let name = arguments
        .get("name")
        .and_then(Value::as_str)
        .unwrap_or("toolschema");
    let mode = match service.config.mode {
        Mode::Enforce => "sequential",
        Mode::Audit => "audit",
    };
    json!({
        "name": name,
        // The plugin as the server knows it (a native kind: "external" is the gateway's word).
        "kind": "toolschema.serve",
        "description": "Checks tool calls against the tools' inputSchema and their results against the outputSchema (toolschema serve).",
        "author": "toolschema",
        "version": env!("CARGO_PKG_VERSION"),
        "hooks": HOOKS,
        "mode": mode,
        "tags": ["schema", "validation"],
    })
}

/// Run a hook: `{"result": PluginResult}` or `{"error": PluginErrorModel}`.
fn invoke(service: &Service, arguments: &Value) -> Value {
    let plugin = arguments
        .get("plugin_name")
        .and_then(Value::as_str)
        .unwrap_or("toolschema");
    let error = |message: String| json!({"error": {"message": message, "plugin_name": plugin}});
    let hook = arguments.get("hook_type").and_then(Value::as_str);
    let payload = arguments.get("payload").unwrap_or(&Value::Null);
    let (phase, value) = match hook {
        Some("tool_pre_invoke") => (
            Phase::Request,
            payload.get("args").cloned().unwrap_or(json!({})),
        ),
        Some("tool_post_invoke") => (
            Phase::Response,
            payload.get("result").cloned().unwrap_or(Value::Null),
        ),
        // Not a hook of this plugin: nothing to say.
        _ => return json!({"result": {"continue_processing": true}}),
    };
    let Some(tool) = payload.get("name").and_then(Value::as_str) else {
        return error("the payload names no tool ('name' must be a string)".into());
    };
    let server = arguments
        .get("context")
        .and_then(|c| c.get("global_context"))
        .and_then(|g| g.get("server_id"))
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty());
    let decision = match service.decide(server, phase, tool, &value) {
        Ok(decision) => decision,
        // The gateway's on_error decides (by default the call is blocked).
        Err(e) => return error(e.to_string()),
    };
    let mut metadata = serde_json::Map::new();
    if let Some(why) = &decision.unchecked {
        metadata.insert("failed_open".into(), json!(why));
    }
    if decision.allowed {
        if !decision.messages.is_empty() {
            metadata.insert("warnings".into(), json!(decision.messages));
        }
        return json!({"result": {"continue_processing": true, "metadata": metadata}});
    }
    let (reason, code) = match (phase, decision.denied, decision.listed) {
        (_, true, _) => ("Tool denied", "TOOLSCHEMA_TOOL_DENIED"),
        (_, false, false) => ("Unknown tool", "TOOLSCHEMA_UNKNOWN_TOOL"),
        (Phase::Request, ..) => ("Invalid arguments", "TOOLSCHEMA_INVALID_ARGUMENTS"),
        (Phase::Response, ..) => ("Invalid result", "TOOLSCHEMA_INVALID_RESULT"),
    };
    let violation = json!({
        "reason": reason,
        "description": decision.messages.join("\n"),
        "code": code,
        "details": {"tool": tool, "messages": decision.messages},
        "mcp_error_code": -32602,
    });
    if service.config.mode == Mode::Audit {
        // Reported, never blocking.
        metadata.insert("violation".into(), violation);
        return json!({"result": {"continue_processing": true, "metadata": metadata}});
    }
    json!({"result": {"continue_processing": false, "violation": violation, "metadata": metadata}})
}
