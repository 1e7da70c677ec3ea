//! MCP interceptors (SEP-2624, the interceptors working group's text in
//! modelcontextprotocol/experimental-ext-interceptors): the service is an Interceptor Server
//! with one validator, [`INTERCEPTOR`], hooked on `tools/call` in both phases. In the request
//! phase it judges the payload's `arguments` against the tool's `inputSchema`; in the response
//! phase it judges the result's `structuredContent` against the `outputSchema`.
//!
//! Its answers are `ValidationResult`s: `valid`, and when not plainly valid a `severity` and
//! `messages` (toolschema's, one each). A refusal is `severity: "error"`; what was let through
//! with a warning (`--unknown-arguments warn`, a fail-open choice) is `valid: true` with
//! `severity: "warn"`. The interceptor's `mode` is the service's `--mode`: in `audit` mode the
//! calling chain never blocks on it.

use super::{Mode, Phase, Service};
use serde_json::{json, Map, Value};
use std::time::Instant;

/// The validator's name.
pub const INTERCEPTOR: &str = "toolschema/schema";

/// The event it hooks.
const EVENT: &str = "tools/call";

/// JSON-RPC error codes.
const METHOD_NOT_FOUND: i64 = -32601;
const INVALID_PARAMS: i64 = -32602;
const INVALID_REQUEST: i64 = -32600;
const INTERNAL_ERROR: i64 = -32603;

/// The MCP protocol revision answered when the client asks for one the service does not know.
const PROTOCOL: &str = "2025-06-18";

/// Answer one JSON-RPC message: `Some(response)` for a request, `None` for a notification
/// (or a response, which the service never awaits).
pub fn handle(service: &Service, message: &Value) -> Option<Value> {
    let Some(object) = message.as_object() else {
        return Some(error(
            Value::Null,
            INVALID_REQUEST,
            "a JSON-RPC message is an object",
        ));
    };
    let id = object.get("id").cloned();
    let Some(method) = object.get("method").and_then(Value::as_str) else {
        return id.map(|id| error(id, INVALID_REQUEST, "the request has no method"));
    };
    // A notification is never answered.
    let id = id?;
    let params = object.get("params").cloned().unwrap_or(Value::Null);
    let answer = match method {
        "initialize" => Ok(initialize(&params)),
        "ping" => Ok(json!({})),
        "interceptors/list" => list(service, &params),
        "interceptor/invoke" => invoke(service, &params),
        // The ContextForge external plugin's tools.
        "tools/list" => Ok(json!({"tools": super::contextforge::tools()})),
        "tools/call" => {
            super::contextforge::call(service, &params).map_err(|e| (INVALID_PARAMS, e))
        }
        other => Err((
            METHOD_NOT_FOUND,
            format!("method '{other}' is not served here"),
        )),
    };
    Some(match answer {
        Ok(result) => json!({"jsonrpc": "2.0", "id": id, "result": result}),
        Err((code, message)) => error(id, code, &message),
    })
}

/// A JSON-RPC error response.
fn error(id: Value, code: i64, message: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
}

/// The `initialize` result: the revision the client asked for, and the interceptors
/// capability.
fn initialize(params: &Value) -> Value {
    let protocol = params
        .get("protocolVersion")
        .and_then(Value::as_str)
        .unwrap_or(PROTOCOL);
    json!({
        "protocolVersion": protocol,
        "capabilities": {"interceptors": {}, "tools": {}},
        "serverInfo": {"name": "toolschema-serve", "version": env!("CARGO_PKG_VERSION")},
        "instructions": "An interceptor server (and a ContextForge external plugin): tools/call arguments and results are checked against the tool's schemas.",
    })
}

/// `interceptors/list`: the validator, unless `event` names an event it does not hook.
fn list(service: &Service, params: &Value) -> Result<Value, (i64, String)> {
    let event = match params.get("event") {
        None | Some(Value::Null) => None,
        Some(Value::String(event)) => Some(event.as_str()),
        Some(_) => return Err((INVALID_PARAMS, "'event' must be a string".into())),
    };
    if event.is_some_and(|event| event != EVENT) {
        return Ok(json!({"interceptors": []}));
    }
    Ok(json!({"interceptors": [descriptor(service.config.mode)]}))
}

/// The validator as `interceptors/list` gives it, defaults left out.
pub fn descriptor(mode: Mode) -> Value {
    let mut map = Map::new();
    map.insert("name".into(), json!(INTERCEPTOR));
    map.insert("type".into(), json!("validation"));
    map.insert(
        "description".into(),
        json!("Checks tools/call arguments against the tool's inputSchema (request) and structuredContent against its outputSchema (response)."),
    );
    map.insert(
        "hooks".into(),
        json!([
            {"events": [EVENT], "phase": "request"},
            {"events": [EVENT], "phase": "response"},
        ]),
    );
    if mode == Mode::Audit {
        map.insert("mode".into(), json!("audit"));
    }
    Value::Object(map)
}

/// `interceptor/invoke`.
fn invoke(service: &Service, params: &Value) -> Result<Value, (i64, String)> {
    let started = Instant::now();
    let text = |name: &str| params.get(name).and_then(Value::as_str);
    let name = text("name").ok_or((INVALID_PARAMS, "'name' must be a string".to_string()))?;
    if name != INTERCEPTOR {
        return Err((
            INVALID_PARAMS,
            format!("no interceptor named '{name}' (this server has '{INTERCEPTOR}')"),
        ));
    }
    let event = text("event").ok_or((INVALID_PARAMS, "'event' must be a string".to_string()))?;
    if event != EVENT {
        return Err((
            INVALID_PARAMS,
            format!("'{INTERCEPTOR}' hooks {EVENT} only, not '{event}'"),
        ));
    }
    let phase = match text("phase") {
        Some("request") => Phase::Request,
        Some("response") => Phase::Response,
        _ => {
            return Err((
                INVALID_PARAMS,
                "'phase' must be \"request\" or \"response\"".into(),
            ))
        }
    };
    let payload = params.get("payload").unwrap_or(&Value::Null);
    let Some(tool) = payload.get("name").and_then(Value::as_str) else {
        // Nothing to judge: the payload does not say which tool. Never valid.
        return Ok(result(
            phase,
            started,
            false,
            vec![(
                "the payload names no tool ('name' must be a string)".into(),
                "error",
            )],
            None,
        ));
    };
    let value = match phase {
        Phase::Request => payload.get("arguments").cloned().unwrap_or(json!({})),
        // The result beside the name, or the payload itself as the result.
        Phase::Response => payload.get("result").cloned().unwrap_or_else(|| {
            let mut result = payload.as_object().cloned().unwrap_or_default();
            result.remove("name");
            result.remove("arguments");
            Value::Object(result)
        }),
    };
    let server = server_of(params);
    match service.decide(server.as_deref(), phase, tool, &value) {
        Ok(decision) => {
            let severity = if decision.allowed { "warn" } else { "error" };
            let messages = decision
                .messages
                .iter()
                .map(|m| (m.clone(), severity))
                .collect();
            let info = decision
                .unchecked
                .as_ref()
                .map(|why| json!({"failedOpen": true, "reason": why}));
            Ok(result(phase, started, decision.allowed, messages, info))
        }
        // The service cannot decide: an error, so the chain fails as its failOpen says.
        Err(e) => Err((INTERNAL_ERROR, e.to_string())),
    }
}

/// The server a call is for, when the invocation's context names one.
fn server_of(params: &Value) -> Option<String> {
    let context = params.get("context")?;
    ["server", "serverName", "server_name"]
        .iter()
        .find_map(|key| context.get(*key).and_then(Value::as_str))
        .map(String::from)
}

/// A `ValidationResult`.
fn result(
    phase: Phase,
    started: Instant,
    valid: bool,
    messages: Vec<(String, &str)>,
    info: Option<Value>,
) -> Value {
    let mut map = Map::new();
    map.insert("interceptor".into(), json!(INTERCEPTOR));
    map.insert("type".into(), json!("validation"));
    map.insert("phase".into(), json!(phase.as_str()));
    let millis = (started.elapsed().as_secs_f64() * 1e6).round() / 1e3;
    map.insert("durationMs".into(), json!(millis));
    map.insert("valid".into(), json!(valid));
    if !messages.is_empty() {
        let severity = if valid { "warn" } else { "error" };
        map.insert("severity".into(), json!(severity));
        let messages: Vec<Value> = messages
            .into_iter()
            .map(|(message, severity)| json!({"message": message, "severity": severity}))
            .collect();
        map.insert("messages".into(), Value::Array(messages));
    }
    if let Some(info) = info {
        map.insert("info".into(), info);
    }
    Value::Object(map)
}
