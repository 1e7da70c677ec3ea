//! Many servers behind one front: an MCP server over this process's stdio that speaks to each
//! declared server (a command over stdio, or a Streamable HTTP endpoint) and shows them as one.
//!
//! The proxy runs it where it would run a server command (`toolschema proxy --server ...` starts
//! itself with `--serve-servers`), so the front's gate, over stdio or Streamable HTTP, checks
//! every call against the merged listing exactly as it checks one server's: each tool's schema
//! is its server's, the token policies name the exposed names (`allow = ["time__*"]`), and the
//! audit records carry the exposed name, which starts with the server's.
//!
//! What it does itself:
//! - names each tool `SERVER__TOOL` ([`toolschema_gate::servers`]), or bare where asked;
//! - lists the merged tools one page per server, with a cursor of its own;
//! - routes each call by its exposed name, each in a task of its own, so that one server's hang
//!   never delays another's calls; a call to a server that is down, or that does not answer in
//!   time, gets a tool error naming the server and why;
//! - keeps each server connected: a server that ends is started (or reached) again, re-listed,
//!   and a change to the merged listing is announced with one `notifications/tools/list_changed`,
//!   as is a server's own `list_changed`.
//!
//! Resources and prompts are left out: the merged server declares only tools.

use serde_json::{json, Map, Value};
use std::collections::HashMap;
use std::ops::Range;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;
use tokio::io::{AsyncWriteExt, BufReader};
use tokio::sync::{mpsc, oneshot, watch, Notify};
use toolschema_gate::framing::Frame;
use toolschema_gate::message::{self, tool_error_result, ErrorCode, IdKey, Kind, Read, RequestId};
use toolschema_gate::servers::{expose, ExposedNames, NamingError, ServerTools, ORIGIN_META};
use toolschema_gate::{InputCheck, OutputCheck, ServerChecks};
use toolschema_mcp::connection::client::{Answered, Client, ListedTool};
use toolschema_mcp::connection::Target;
use toolschema_mcp::framing::LineReader;

/// How long the merged server waits before it reaches a server again after a failure.
const RECONNECT: Duration = Duration::from_secs(1);

/// How often a connected server's session is looked at, to notice one that ended.
const WATCH_EVERY: Duration = Duration::from_millis(500);

/// How long a server whose call timed out has to answer a `ping` before it is taken as down.
const PROBE: Duration = Duration::from_secs(3);

/// The protocol revisions the merged server answers `initialize` with (the client's, when it is
/// one of these).
const REVISIONS: &[&str] = &["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"];

/// One server behind the front.
#[derive(Debug, Clone)]
pub struct ServerSpec {
    /// Its name: the prefix of its tools' exposed names.
    pub name: String,
    /// Where it is.
    pub target: Target,
    /// HTTP headers for every request to it (an HTTP server only).
    pub headers: Vec<(String, String)>,
    /// Expose its tools under their own names (refused at start where another tool wants one).
    pub bare: bool,
    /// The checks of its tools' calls, where they differ from the front's: the front's gate
    /// applies them, knowing each listed tool's server.
    pub checks: ServerChecks,
}

/// A `[proxy.servers.NAME]` table of `toolschema.toml`: one server behind the front, a command
/// or a URL.
///
/// ```toml
/// [proxy.servers.time]
/// command = ".venv/bin/mcp-server-time"
/// args = ["--local-timezone", "UTC"]
///
/// [proxy.servers.web]
/// url = "https://mcp.example.com/mcp"
/// headers = { Authorization = "Bearer TOKEN" }
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct ServerEntry {
    /// The program that starts it over stdio.
    pub command: Option<String>,
    /// The program's arguments, each one word as written.
    #[serde(default)]
    pub args: Vec<String>,
    /// Its Streamable HTTP endpoint (`http://` or `https://`).
    pub url: Option<String>,
    /// HTTP headers for every request to it (a `url` only).
    #[serde(default)]
    pub headers: std::collections::BTreeMap<String, String>,
    /// Expose its tools under their own names.
    #[serde(default)]
    pub bare: bool,
    /// Its tools' `--input-check`, in place of the front's.
    #[serde(default)]
    pub input_check: Option<InputCheck>,
    /// Its tools' `--output-check`, in place of the front's.
    #[serde(default)]
    pub output_check: Option<OutputCheck>,
}

impl ServerEntry {
    /// The server this table declares under `name`; `Err` saying which key is wrong.
    pub fn spec(&self, name: &str) -> Result<ServerSpec, String> {
        toolschema_gate::servers::check_server_name(name).map_err(|e| e.to_string())?;
        let target = match (&self.command, &self.url) {
            (Some(_), Some(_)) => {
                return Err("give `command` or `url`, not both".into());
            }
            (None, None) => return Err("give `command` (and `args`) or `url`".into()),
            (Some(command), None) => {
                if !self.headers.is_empty() {
                    return Err("`headers` go with a `url`, not a `command`".into());
                }
                if command.trim().is_empty() {
                    return Err("`command` is empty".into());
                }
                Target::Command(toolschema_mcp::ServerCommand::new(command, &self.args))
            }
            (None, Some(url)) => {
                if !self.args.is_empty() {
                    return Err("`args` go with a `command`, not a `url`".into());
                }
                if !(url.starts_with("http://") || url.starts_with("https://")) {
                    return Err(format!("`url` '{url}' is not an http:// or https:// URL"));
                }
                Target::Url(url.clone())
            }
        };
        Ok(ServerSpec {
            name: name.to_string(),
            target,
            headers: self
                .headers
                .iter()
                .map(|(name, value)| (name.clone(), value.clone()))
                .collect(),
            bare: self.bare,
            checks: ServerChecks {
                input: self.input_check,
                output: self.output_check,
            },
        })
    }
}

/// The merged server's settings.
#[derive(Debug, Clone)]
pub struct ServersConfig {
    /// The servers.
    pub servers: Vec<ServerSpec>,
    /// How long a call, or a server's start and listing, may take.
    pub timeout: Duration,
    /// The largest message accepted from either side.
    pub max_message_bytes: usize,
}

/// Why the merged server stopped.
#[derive(Debug, thiserror::Error)]
pub enum ServersError {
    /// Two tools want one name, or a server name is refused.
    #[error(transparent)]
    Naming(#[from] NamingError),
    /// This process's stdio failed.
    #[error("stdio: {0}")]
    Stdio(std::io::Error),
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// The session's handler: it hears a server's `list_changed` (here, and in `serve`'s
/// catalogs learned from a server).
#[derive(Clone)]
pub(crate) struct Listener {
    /// The server's place, sent on `changed` when it says its tools changed.
    pub(crate) server: usize,
    /// Where a `list_changed` is told.
    pub(crate) changed: mpsc::UnboundedSender<usize>,
}

impl rmcp::ClientHandler for Listener {
    fn get_info(&self) -> rmcp::model::ClientConfig {
        rmcp::model::ClientConfig::new(
            rmcp::model::ClientCapabilities::default(),
            rmcp::model::Implementation::new("toolschema-servers", env!("CARGO_PKG_VERSION")),
        )
    }

    async fn on_tool_list_changed(
        &self,
        _context: rmcp::service::NotificationContext<rmcp::RoleClient>,
    ) {
        let _ = self.changed.send(self.server);
    }
}

/// A server's state as the merged server knows it.
#[derive(Default)]
struct Link {
    /// The session, while connected.
    client: Option<Arc<Client<Listener>>>,
    /// Why it is not connected (`None` while connected, or before the first attempt ends).
    down: Option<String>,
    /// Its tools as last listed (kept while it is down, so its calls are answered naming it).
    tools: Option<Vec<ListedTool>>,
}

/// The merged listing.
#[derive(Default)]
struct Merged {
    names: ExposedNames,
    /// One page per server that lists tools: the tools under their exposed names, each as the
    /// JSON text of its definition.
    pages: Vec<Vec<String>>,
    /// Changes with every new listing, so that a cursor of an old one is refused.
    generation: u64,
    /// Two tools want one name: the listing is refused, naming both, until that changes.
    refused: Option<String>,
}

struct Shared {
    config: ServersConfig,
    links: Vec<Mutex<Link>>,
    /// Wakes a server's keeper: a call found its session broken, or timed out.
    broken: Vec<Notify>,
    /// Per server: a call timed out, so the keeper pings it to learn whether it is there.
    probe: Mutex<Vec<bool>>,
    merged: Mutex<Merged>,
    /// Lines to this process's stdout.
    out: mpsc::UnboundedSender<Vec<u8>>,
    /// How many servers have had their first attempt.
    started: watch::Sender<usize>,
    /// The calls in flight, by the front's request id: a `notifications/cancelled` for one
    /// gives it up, with the client's reason.
    in_flight: Mutex<HashMap<IdKey, oneshot::Sender<Option<String>>>>,
}

impl Shared {
    fn send(&self, message: Value) {
        let _ = self.out.send(message.to_string().into_bytes());
    }

    fn send_line(&self, line: Vec<u8>) {
        let _ = self.out.send(line);
    }

    /// Recompute the merged listing from every server's last listing. `Err` when two tools want
    /// one name: the listing stays as it was.
    fn relist(&self) -> Result<bool, NamingError> {
        let listed: Vec<(usize, Vec<ListedTool>)> = self
            .links
            .iter()
            .enumerate()
            .filter_map(|(i, link)| lock(link).tools.clone().map(|tools| (i, tools)))
            .map(|(i, tools)| (i, self.passable(i, tools)))
            .collect();
        let servers: Vec<ServerTools> = listed
            .iter()
            .map(|(i, tools)| ServerTools {
                server: self.config.servers[*i].name.clone(),
                bare: self.config.servers[*i].bare,
                tools: tools.iter().map(|t| tool_name(&t.definition)).collect(),
            })
            .collect();
        let names = match expose(&servers) {
            Ok(names) => names,
            Err(collision) => {
                lock(&self.merged).refused = Some(collision.to_string());
                return Err(collision);
            }
        };
        let pages: Vec<Vec<String>> = listed
            .iter()
            .filter(|(_, tools)| !tools.is_empty())
            .map(|(i, tools)| {
                let server = &self.config.servers[*i].name;
                tools
                    .iter()
                    .filter_map(|tool| self.write_exposed(server, &names, tool))
                    .collect()
            })
            .collect();
        let mut merged = lock(&self.merged);
        let changed = merged.pages != pages || merged.refused.is_some();
        merged.refused = None;
        if changed {
            merged.generation += 1;
            merged.names = names;
            merged.pages = pages;
        }
        Ok(changed)
    }

    /// The tools of server `server` that can be passed on as the server wrote them; each other
    /// is left out of the listing (so its calls are refused as calls to an unknown tool),
    /// saying why: the front would otherwise check calls against a definition the server did
    /// not write. Judged without writing them: each is written once, for its page.
    fn passable(&self, server: usize, tools: Vec<ListedTool>) -> Vec<ListedTool> {
        let name = &self.config.servers[server].name;
        tools
            .into_iter()
            .filter(|tool| match tool.unwritable() {
                None => true,
                Some(loss) => {
                    left_out(name, tool, &loss);
                    false
                }
            })
            .collect()
    }

    /// A tool's definition as its server wrote it (numbers as stated), under its exposed name,
    /// with where it comes from in its `_meta`, for the front's audit records and metrics.
    fn write_exposed(
        &self,
        server: &str,
        names: &ExposedNames,
        tool: &ListedTool,
    ) -> Option<String> {
        let own = tool_name(&tool.definition);
        let exposed = names.exposed(server, &own).map(str::to_string);
        let written = tool.write_edited(|tool| {
            if let (Value::Object(map), Some(exposed)) = (tool, exposed) {
                map.insert("name".into(), Value::String(exposed));
                let meta = map
                    .entry("_meta")
                    .or_insert_with(|| Value::Object(Map::new()));
                if let Value::Object(meta) = meta {
                    meta.insert(ORIGIN_META.into(), json!({"server": server, "tool": own}));
                }
            }
        });
        // (`passable` kept only tools that can be written; the edit adds no number.)
        written.map_err(|loss| left_out(server, tool, &loss)).ok()
    }

    fn announce(&self) {
        self.send(json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}));
    }
}

/// Say that a tool is left out of the listing, and why.
fn left_out(server: &str, tool: &ListedTool, loss: &toolschema::json::Loss) {
    tracing::warn!(
        "toolschema proxy: server `{server}`: tool '{}' is left out of the listing: its definition cannot be passed on as the server wrote it ({loss})",
        tool_name(&tool.definition)
    );
}

/// A tool's name as listed (a tool without one is listed under the empty name, which no call
/// can reach).
fn tool_name(tool: &Value) -> String {
    tool.get("name")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string()
}

/// Refuse servers the merged server cannot serve: a name that breaks the rule, or declared
/// twice.
pub fn check_servers(servers: &[ServerSpec]) -> Result<(), NamingError> {
    let servers: Vec<ServerTools> = servers
        .iter()
        .map(|s| ServerTools {
            server: s.name.clone(),
            bare: s.bare,
            tools: Vec::new(),
        })
        .collect();
    expose(&servers).map(drop)
}

/// Serve the merged server on this process's stdin and stdout until stdin ends.
pub async fn serve_servers(config: ServersConfig) -> Result<(), ServersError> {
    check_servers(&config.servers)?;
    let (out, mut lines) = mpsc::unbounded_channel::<Vec<u8>>();
    let (changed_tx, mut changed_rx) = mpsc::unbounded_channel::<usize>();
    let count = config.servers.len();
    let shared = Arc::new(Shared {
        links: (0..count).map(|_| Mutex::new(Link::default())).collect(),
        broken: (0..count).map(|_| Notify::new()).collect(),
        probe: Mutex::new(vec![false; count]),
        merged: Mutex::new(Merged::default()),
        out,
        started: watch::channel(0).0,
        in_flight: Mutex::new(HashMap::new()),
        config,
    });
    let writer = tokio::spawn(async move {
        let mut stdout = tokio::io::stdout();
        while let Some(mut line) = lines.recv().await {
            line.push(b'\n');
            if stdout.write_all(&line).await.is_err() || stdout.flush().await.is_err() {
                break;
            }
        }
    });
    for server in 0..count {
        tokio::spawn(keep(shared.clone(), server, changed_tx.clone()));
    }
    // A server's own `list_changed`: list it again; announce once for all that came together.
    let relister = shared.clone();
    tokio::spawn(async move {
        while let Some(first) = changed_rx.recv().await {
            let mut servers = vec![first];
            while let Ok(more) = changed_rx.try_recv() {
                servers.push(more);
            }
            servers.sort_unstable();
            servers.dedup();
            for server in servers {
                relist_server(&relister, server).await;
            }
            match relister.relist() {
                Ok(_) => relister.announce(),
                Err(collision) => tracing::error!("toolschema proxy: {collision}"),
            }
        }
    });
    let mut reader = LineReader::new(
        BufReader::new(tokio::io::stdin()),
        shared.config.max_message_bytes,
    );
    loop {
        match reader.next().await {
            Ok(Some(Frame::Line(line))) => handle(&shared, line),
            Ok(Some(Frame::Oversized(_))) => shared.send_line(message::error_line(
                None,
                ErrorCode::INVALID_REQUEST,
                "the message is larger than the proxy accepts",
                None,
            )),
            Ok(None) => break,
            Err(e) => return Err(ServersError::Stdio(e)),
        }
    }
    for link in &shared.links {
        let client = lock(link).client.take();
        if let Some(client) = client.and_then(|c| Arc::try_unwrap(c).ok()) {
            client.close().await;
        }
    }
    drop(shared);
    let _ = writer.await;
    Ok(())
}

/// List one server again after its `list_changed`.
async fn relist_server(shared: &Shared, server: usize) {
    let client = lock(&shared.links[server]).client.clone();
    let Some(client) = client else { return };
    match tokio::time::timeout(shared.config.timeout, client.list_tools()).await {
        Ok(Ok(tools)) => lock(&shared.links[server]).tools = Some(tools),
        Ok(Err(why)) => fail(shared, server, format!("its tools/list failed: {why}")),
        Err(_) => fail(
            shared,
            server,
            "its tools/list did not answer in time".into(),
        ),
    }
}

/// Mark a server down and wake its keeper.
fn fail(shared: &Shared, server: usize, why: String) {
    lock(&shared.probe)[server] = false;
    let name = &shared.config.servers[server].name;
    tracing::warn!("toolschema proxy: server `{name}`: {why}");
    {
        let mut link = lock(&shared.links[server]);
        link.client = None;
        link.down = Some(why);
    }
    shared.broken[server].notify_one();
}

/// Keep one server connected: reach it, list it, watch it, and reach it again when it ends.
async fn keep(shared: Arc<Shared>, server: usize, changed: mpsc::UnboundedSender<usize>) {
    let spec = shared.config.servers[server].clone();
    let mut first = true;
    loop {
        let listener = Listener {
            server,
            changed: changed.clone(),
        };
        let attempt = async {
            let client = Client::connect(
                &spec.target,
                &spec.headers,
                shared.config.max_message_bytes,
                listener,
            )
            .await?;
            let tools = client
                .list_tools()
                .await
                .map_err(|why| format!("its tools/list failed: {why}"))?;
            Ok::<_, String>((client, tools))
        };
        let outcome = match tokio::time::timeout(shared.config.timeout, attempt).await {
            Ok(outcome) => outcome,
            Err(_) => Err(format!(
                "it did not start and list its tools within {} s",
                shared.config.timeout.as_secs()
            )),
        };
        let connected = outcome.is_ok();
        match outcome {
            Ok((client, tools)) => {
                let mut link = lock(&shared.links[server]);
                link.client = Some(Arc::new(client));
                link.down = None;
                link.tools = Some(tools);
            }
            Err(why) => {
                tracing::warn!("toolschema proxy: server `{}`: {why}", spec.name);
                lock(&shared.links[server]).down = Some(why);
            }
        }
        if connected {
            match shared.relist() {
                Ok(true) if !first => shared.announce(),
                Ok(_) => {}
                // Refused, not resolved: which of the two came first is a matter of timing.
                Err(collision) => tracing::error!("toolschema proxy: {collision}"),
            }
        }
        if first {
            first = false;
            shared.started.send_modify(|n| *n += 1);
        }
        if connected {
            // Watch the session until it ends or a call finds it broken.
            loop {
                tokio::select! {
                    () = shared.broken[server].notified() => {}
                    () = tokio::time::sleep(WATCH_EVERY) => {}
                }
                let probe = std::mem::take(&mut lock(&shared.probe)[server]);
                let client = lock(&shared.links[server]).client.clone();
                if let (true, Some(client)) = (probe, client) {
                    // A call timed out: a server that does not answer a ping either is down,
                    // and its calls fail at once until it is reached again.
                    let answered = tokio::time::timeout(PROBE, client.ping()).await;
                    if !matches!(answered, Ok(Ok(()))) {
                        let why = match answered {
                            Ok(Err(why)) => format!("it did not answer a ping: {why}"),
                            _ => format!(
                                "a call timed out and it did not answer a ping within {} s",
                                PROBE.as_secs()
                            ),
                        };
                        fail(&shared, server, why);
                    }
                }
                let mut link = lock(&shared.links[server]);
                match &link.client {
                    Some(client) if !client.is_closed() => continue,
                    Some(_) => {
                        link.client = None;
                        link.down = Some("its session ended".into());
                    }
                    None => {}
                }
                break;
            }
        }
        tokio::time::sleep(RECONNECT).await;
    }
}

/// A JSON-RPC error response.
fn error(id: &RequestId, code: i32, text: &str) -> Vec<u8> {
    message::error_line(Some(id), ErrorCode(code), text, None)
}

/// A JSON-RPC result response.
fn result(id: &RequestId, result: Value) -> Vec<u8> {
    message::result_line(id, &result)
}

/// The members of a call's `params` the merged server passes on to a server; rmcp's model of a
/// call holds these and drops any other.
const CALL_PARAMS: &[&str] = &[
    "name",
    "arguments",
    "_meta",
    "inputResponses",
    "requestState",
];

/// Why the call in `text` cannot be passed on unchanged, if it cannot: rmcp's client reads the
/// params into its model, where a number beyond what a 64-bit integer or float holds is rounded,
/// a lone surrogate escape becomes U+FFFD, and a member it does not know is dropped.
fn not_passed_on(text: &str, params: Option<Range<usize>>) -> Option<String> {
    let params = params?;
    if let Some(lossy) = toolschema::json::first_lossy_value(&text[params.clone()]) {
        return Some(format!(
            "the call was not forwarded: {}, and the proxy's link to its servers cannot pass \
             it on unchanged",
            lossy.loss
        ));
    }
    let members = toolschema::json::object_members(text, params).ok()??;
    let other = members
        .iter()
        .find(|m| !CALL_PARAMS.contains(&m.key.as_str()))?;
    Some(format!(
        "the call was not forwarded: its params hold `{}`, which the proxy's link to its \
         servers cannot pass on",
        toolschema::text::shorten(&other.key, 40)
    ))
}

/// Answer one line from the front. Lines are read with the core's reader, as the gate reads
/// them: a request is answered under its id exactly as sent, whatever its params hold.
fn handle(shared: &Arc<Shared>, line: Vec<u8>) {
    let text = match message::text_of(line) {
        Ok(text) => text,
        Err((_, why)) => {
            return shared.send_line(message::error_line(
                None,
                ErrorCode::PARSE_ERROR,
                &why.to_string(),
                None,
            ))
        }
    };
    let read = match message::read(&text) {
        Ok(Read::One(read)) => read,
        Ok(Read::Batch(_)) => {
            return shared.send_line(message::error_line(
                None,
                ErrorCode::INVALID_REQUEST,
                "a JSON-RPC batch is not served by the proxy's merged servers",
                None,
            ))
        }
        Err(why) => {
            return shared.send_line(message::error_line(
                None,
                ErrorCode::PARSE_ERROR,
                &why.to_string(),
                None,
            ))
        }
    };
    let (id, method) = match read.kind {
        Kind::Request { id, method } => (id, method),
        Kind::Notification { method } if method == "notifications/cancelled" => {
            return cancel(shared, &text, read.params)
        }
        // Other notifications: nothing to do. Responses: to requests never sent.
        _ => return,
    };
    let params = match read.params.clone().map(|at| message::parse_at(&text, at)) {
        None => Value::Null,
        Some(Ok(params)) => params,
        Some(Err(why)) => {
            return shared.send_line(error(&id, ErrorCode::INVALID_PARAMS.0, &why.to_string()))
        }
    };
    match method.as_str() {
        "initialize" => {
            let asked = params.get("protocolVersion").and_then(Value::as_str);
            let revision = asked
                .filter(|r| REVISIONS.contains(r))
                .unwrap_or("2025-11-25");
            shared.send_line(result(
                &id,
                json!({
                    "protocolVersion": revision,
                    "capabilities": {"tools": {"listChanged": true}},
                    "serverInfo": {"name": "toolschema-servers", "version": env!("CARGO_PKG_VERSION")},
                }),
            ));
        }
        "ping" => shared.send_line(result(&id, json!({}))),
        "tools/list" => {
            let shared = shared.clone();
            tokio::spawn(async move {
                let answer = list(&shared, &id, &params).await;
                shared.send_line(answer);
            });
        }
        "tools/call" => {
            if let Some(why) = not_passed_on(&text, read.params) {
                return shared.send_line(error(&id, ErrorCode::INVALID_PARAMS.0, &why));
            }
            // Known before the call's task runs, so that a cancellation right behind it finds it.
            let (cancel, cancelled) = oneshot::channel();
            lock(&shared.in_flight).insert(id.key().clone(), cancel);
            let shared = shared.clone();
            tokio::spawn(async move {
                let answer = call(&shared, &id, params, cancelled).await;
                lock(&shared.in_flight).remove(id.key());
                if let Some(answer) = answer {
                    shared.send_line(answer);
                }
            });
        }
        other => shared.send_line(error(
            &id,
            -32601,
            &format!("method `{other}` is not served by the proxy's merged servers (tools only)"),
        )),
    }
}

/// A client's `notifications/cancelled`: the call it names, if still in flight, is given up
/// and its server told, by the id the merged server's session gave it there.
fn cancel(shared: &Shared, text: &str, params: Option<Range<usize>>) {
    let Some(params) = params else { return };
    let Some(at) = message::member_at(text, params.clone(), "requestId") else {
        return;
    };
    let request = RequestId::from_text(&text[at]);
    let reason = message::member_at(text, params, "reason")
        .and_then(|at| message::parse_at(text, at).ok())
        .and_then(|reason| reason.as_str().map(String::from));
    if let Some(cancel) = lock(&shared.in_flight).remove(request.key()) {
        let _ = cancel.send(reason);
    }
}

/// One page of the merged listing: a server's tools.
async fn list(shared: &Shared, id: &RequestId, params: &Value) -> Vec<u8> {
    // The first listing waits for every server's first attempt.
    let mut started = shared.started.subscribe();
    let count = shared.config.servers.len();
    let _ = started.wait_for(|n| *n >= count).await;
    let merged = lock(&shared.merged);
    if let Some(refused) = &merged.refused {
        return error(id, -32603, refused);
    }
    let page = match params.get("cursor") {
        None | Some(Value::Null) => 0,
        Some(Value::String(cursor)) => match read_cursor(cursor, merged.generation) {
            Some(page) if page < merged.pages.len() => page,
            _ => {
                return error(
                    id,
                    -32602,
                    "the cursor is not one the proxy gave, or the listing changed since: list \
                     again from the start",
                )
            }
        },
        Some(_) => return error(id, -32602, "the cursor must be a string"),
    };
    // Written as text: each definition's numbers stay as its server wrote them.
    let tools = merged
        .pages
        .get(page)
        .map(|tools| tools.join(","))
        .unwrap_or_default();
    let next = if page + 1 < merged.pages.len() {
        format!(
            r#","nextCursor":"servers-{}-{}""#,
            merged.generation,
            page + 1
        )
    } else {
        String::new()
    };
    message::result_text_line(id, &format!(r#"{{"tools":[{tools}]{next}}}"#))
}

/// The page a cursor of the merged listing of `generation` points at.
fn read_cursor(cursor: &str, generation: u64) -> Option<usize> {
    let rest = cursor.strip_prefix("servers-")?;
    let (given, page) = rest.split_once('-')?;
    (given.parse::<u64>().ok()? == generation)
        .then(|| page.parse().ok())
        .flatten()
}

/// Route one call to its server: its answer, or `None` when the client cancelled it (the
/// cancelled call is not answered).
async fn call(
    shared: &Shared,
    id: &RequestId,
    mut params: Value,
    cancelled: oneshot::Receiver<Option<String>>,
) -> Option<Vec<u8>> {
    let exposed = params
        .get("name")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    let origin = {
        let merged = lock(&shared.merged);
        if let Some(refused) = &merged.refused {
            return Some(error(id, -32603, refused));
        }
        merged.names.origin(&exposed).cloned()
    };
    let Some(origin) = origin else {
        return Some(error(id, -32602, &format!("Unknown tool: {exposed}")));
    };
    let Some(server) = shared
        .config
        .servers
        .iter()
        .position(|s| s.name == origin.server)
    else {
        return Some(error(id, -32602, &format!("Unknown tool: {exposed}")));
    };
    let (client, down) = {
        let link = lock(&shared.links[server]);
        (link.client.clone(), link.down.clone())
    };
    let Some(client) = client else {
        let why = down.unwrap_or_else(|| "it is not connected yet".into());
        return Some(result(id, unavailable(&origin.server, &why)));
    };
    if let Value::Object(map) = &mut params {
        map.insert("name".into(), Value::String(origin.tool.clone()));
    }
    // Given up when the client cancels it, or when its time is up: either way the server is
    // told, so that it stops working on it.
    let timeout = shared.config.timeout;
    let timed_out = AtomicBool::new(false);
    let given_up = async {
        let cancelled = async {
            match cancelled.await {
                Ok(reason) => reason,
                // Its sender was dropped (another request took the id): only the time is up.
                Err(_) => std::future::pending().await,
            }
        };
        match tokio::time::timeout(timeout, cancelled).await {
            Ok(reason) => reason,
            Err(_) => {
                timed_out.store(true, Ordering::Relaxed);
                Some(format!(
                    "the proxy stopped waiting after {} s",
                    timeout.as_secs_f64()
                ))
            }
        }
    };
    match client.call(params, given_up).await {
        Ok(Answered::Result(answer)) => Some(result(id, answer)),
        Ok(Answered::ResultText(answer)) => Some(message::result_text_line(id, &answer)),
        Ok(Answered::Error(error)) => Some(message::error_text_line(id, &error.to_string())),
        Ok(Answered::Cancelled) if !timed_out.load(Ordering::Relaxed) => None,
        Ok(Answered::Cancelled) => {
            lock(&shared.probe)[server] = true;
            shared.broken[server].notify_one();
            let why = format!("it did not answer within {} s", timeout.as_secs_f64());
            Some(result(id, unavailable(&origin.server, &why)))
        }
        Err(why) => {
            fail(shared, server, why.clone());
            Some(result(id, unavailable(&origin.server, &why)))
        }
    }
}

/// The tool error of a call its server could not take.
fn unavailable(server: &str, why: &str) -> Value {
    tool_error_result(format!("server `{server}` is unavailable: {why}"))
}

/// Read a `--server NAME=WHERE` value: an `http://` or `https://` URL, or a command and its
/// arguments separated by spaces.
pub fn parse_server(value: &str) -> Result<ServerSpec, String> {
    let (name, place) = value
        .split_once('=')
        .ok_or_else(|| format!("--server '{value}': write NAME=URL or NAME=COMMAND ARGS"))?;
    let (name, bare) = match name.strip_suffix(":bare") {
        Some(name) => (name, true),
        None => (name, false),
    };
    toolschema_gate::servers::check_server_name(name).map_err(|e| format!("--server: {e}"))?;
    let target = if place.starts_with("http://") || place.starts_with("https://") {
        Target::Url(place.to_string())
    } else {
        let mut words = place.split_whitespace();
        let program = words
            .next()
            .ok_or_else(|| format!("--server '{value}': no command after `=`"))?;
        let args: Vec<String> = words.map(str::to_string).collect();
        Target::Command(toolschema_mcp::ServerCommand::new(program, &args))
    };
    Ok(ServerSpec {
        name: name.to_string(),
        target,
        headers: Vec::new(),
        bare,
        checks: ServerChecks::default(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn server_flags() {
        let time = parse_server("time=python -m mcp_server_time").unwrap();
        assert_eq!(time.name, "time");
        assert!(matches!(time.target, Target::Command(_)));
        let web = parse_server("web:bare=http://127.0.0.1:3001/mcp").unwrap();
        assert!(web.bare);
        assert_eq!(web.target, Target::Url("http://127.0.0.1:3001/mcp".into()));
        assert!(parse_server("no_underscore=x").is_err());
        assert!(parse_server("x=").is_err());
        assert!(parse_server("x").is_err());
    }

    #[test]
    fn cursors() {
        assert_eq!(read_cursor("servers-3-1", 3), Some(1));
        assert_eq!(read_cursor("servers-2-1", 3), None);
        assert_eq!(read_cursor("x", 3), None);
    }
}
