//! The gate against a server that reads the members of `params` as Go's `encoding/json` does
//! (without regard to case, the last matching member winning, `ſ` read as `s` and the Kelvin sign
//! as `k`), as properties over generated messages and sessions:
//!
//! - a message whose `params` (or `params._meta`) holds a case or fold variant of a member the
//!   gate reads, or that member twice, is refused (a request with -32602, a notification
//!   dropped) and never forwarded; whatever the gate forwards, such a server (and one that takes
//!   the first of two members) reads every member the gate reads as the gate read it;
//! - whatever the client's listings ask (cursors of any spelling and value, pages followed or
//!   not), no `tools/call` reaches the server unchecked under the default configuration: every
//!   call the server receives names a tool it lists, with arguments its schema accepts, and is
//!   audited as checked.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use proptest::prelude::*;
use serde_json::{json, Map, Value};
use std::collections::VecDeque;
use std::time::Instant;
use toolschema::json::{object_members, parse_with, DuplicateKeys};
use toolschema_gate::message::{self, Kind, Read};
use toolschema_gate::{Action, Gate, GateConfig, InputVerdict, Verdict};

/// The `_meta` members the gate reads.
const META_READ: &[&str] = &[
    "progressToken",
    "io.modelcontextprotocol/protocolVersion",
    "io.modelcontextprotocol/clientCapabilities",
];

/// Methods with the members of `params` the gate reads in them, and whether they are requests.
const METHODS: &[(&str, &[&str], bool)] = &[
    ("tools/list", &["cursor"], true),
    ("tools/call", &["name", "arguments"], true),
    (
        "initialize",
        &["protocolVersion", "capabilities", "clientInfo"],
        true,
    ),
    ("notifications/cancelled", &["requestId"], false),
    ("notifications/progress", &["progressToken"], false),
    ("ping", &[], true),
];

/// A name as Go folds it for matching.
fn fold(name: &str) -> String {
    name.chars()
        .map(|c| match c {
            '\u{017F}' => 's',
            '\u{212A}' => 'k',
            c => c.to_ascii_lowercase(),
        })
        .collect()
}

/// The members of the object at the start of `text` as (key, value text), in order.
fn members(text: &str) -> Vec<(String, String)> {
    object_members(text, 0..text.len())
        .unwrap()
        .unwrap_or_default()
        .into_iter()
        .map(|m| (m.key.clone(), text[m.value].to_string()))
        .collect()
}

/// The member `key` as a reader that takes names as written reads it (the last one).
fn exact(members: &[(String, String)], key: &str) -> Option<String> {
    members
        .iter()
        .rev()
        .find(|(k, _)| k == key)
        .map(|(_, v)| v.clone())
}

/// The member `key` as a reader that takes the first of two reads it.
fn first(members: &[(String, String)], key: &str) -> Option<String> {
    members
        .iter()
        .find(|(k, _)| k == key)
        .map(|(_, v)| v.clone())
}

/// The member `key` as Go's `encoding/json` reads it (the last one folding alike).
fn folded(members: &[(String, String)], key: &str) -> Option<String> {
    members
        .iter()
        .rev()
        .find(|(k, _)| fold(k) == fold(key))
        .map(|(_, v)| v.clone())
}

/// A spelling of `name` that folds like it: each ASCII letter in either case, `s` as `ſ` and
/// `k` as the Kelvin sign where `choices` say so (`name` itself when nothing changes).
fn variant(name: &str, choices: &[u8]) -> String {
    name.chars()
        .enumerate()
        .map(|(i, c)| {
            let choice = choices.get(i % choices.len().max(1)).copied().unwrap_or(0) % 4;
            match (c, choice) {
                ('s' | 'S', 3) => '\u{017F}',
                ('k' | 'K', 3) => '\u{212A}',
                (c, 1 | 3) if c.is_ascii_alphabetic() => {
                    if c.is_ascii_lowercase() {
                        c.to_ascii_uppercase()
                    } else {
                        c.to_ascii_lowercase()
                    }
                }
                (c, _) => c,
            }
        })
        .collect()
}

/// Where a variant goes: beside the member (before or after it) or in its place.
#[derive(Debug, Clone, Copy)]
enum Placement {
    Before,
    After,
    Instead,
}

/// One variant to put in a message: of the `member`-th member read (the last ones are
/// `_meta`'s), spelled after `choices`.
#[derive(Debug, Clone)]
struct Variation {
    member: usize,
    choices: Vec<u8>,
    placement: Placement,
    value: u8,
}

/// Where `params._meta` goes while `params` is built.
const META: &str = "<meta>";

/// A value for a member the gate reads.
fn value_for(name: &str, n: u8) -> Value {
    match name {
        "cursor" => json!(format!("p{n}")),
        "name" => json!("search"),
        "arguments" => json!({"q": format!("v{n}")}),
        "protocolVersion" => json!("2025-06-18"),
        "io.modelcontextprotocol/protocolVersion" => json!("2025-11-25"),
        "requestId" | "progressToken" => json!(n),
        _ => json!({}),
    }
}

/// An object's text with `members` in order (keys may repeat).
fn object_text(members: &[(String, Value)]) -> String {
    let inner: Vec<String> = members
        .iter()
        .map(|(k, v)| format!("{}:{v}", Value::String(k.clone())))
        .collect();
    format!("{{{}}}", inner.join(","))
}

/// Put `variation` into `top` or `meta` (lists of members).
fn apply(
    variation: &Variation,
    read: &[&'static str],
    top: &mut Vec<(String, Value)>,
    meta: &mut Vec<(String, Value)>,
) {
    let all: Vec<(&str, bool)> = read
        .iter()
        .map(|n| (*n, false))
        .chain(std::iter::once(("_meta", false)))
        .chain(META_READ.iter().map(|n| (*n, true)))
        .collect();
    let (name, in_meta) = all[variation.member % all.len()];
    let target = if in_meta { meta } else { top };
    let spelled = variant(name, &variation.choices);
    let value = if name == "_meta" {
        json!({})
    } else {
        value_for(name, variation.value)
    };
    let at = target.iter().position(|(k, _)| k == name);
    match (variation.placement, at) {
        (Placement::Instead, Some(at)) => target[at] = (spelled, value),
        (Placement::Before, Some(at)) => target.insert(at, (spelled, value)),
        _ => target.push((spelled, value)),
    }
}

/// A gate that has learned one tool, `search`, from the client's listing.
fn listed_gate() -> Gate {
    let mut gate = Gate::new(GateConfig::default());
    let now = Instant::now();
    let mut out = Vec::new();
    gate.client_message(
        br#"{"jsonrpc":"2.0","id":"l","method":"tools/list"}"#.to_vec(),
        now,
        &mut out,
    );
    gate.server_message(
        br#"{"jsonrpc":"2.0","id":"l","result":{"tools":[{"name":"search","inputSchema":{"type":"object"}}]}}"#.to_vec(),
        now,
        &mut out,
    );
    gate
}

fn variation() -> impl Strategy<Value = Variation> {
    (
        0usize..12,
        proptest::collection::vec(any::<u8>(), 1..6),
        prop_oneof![
            Just(Placement::Before),
            Just(Placement::After),
            Just(Placement::Instead)
        ],
        any::<u8>(),
    )
        .prop_map(|(member, choices, placement, value)| Variation {
            member,
            choices,
            placement,
            value,
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// Variants of the members the gate reads, beside them or in their place, in `params` and in
    /// `params._meta`: refused and never forwarded; what is forwarded reads alike to a folding
    /// server.
    #[test]
    fn params_a_folding_server_reads_otherwise_are_never_forwarded(
        method in 0usize..METHODS.len(),
        variations in proptest::collection::vec(variation(), 0..3),
        with_meta in any::<bool>(),
        extra in prop_oneof![Just(None), Just(Some("Limit")), Just(Some("ıd")), Just(Some("x-Cursor"))],
    ) {
        let (method, read, request) = METHODS[method];
        let mut top: Vec<(String, Value)> = read.iter().map(|n| (n.to_string(), value_for(n, 7))).collect();
        let mut meta: Vec<(String, Value)> = Vec::new();
        if with_meta {
            meta.push(("progressToken".into(), json!(7)));
        }
        if let Some(extra) = extra {
            top.push((extra.into(), json!(1)));
        }
        for variation in &variations {
            apply(variation, read, &mut top, &mut meta);
        }
        // `_meta` goes in as a placeholder, replaced by its members' text (repeated keys kept).
        if !meta.is_empty() && !top.iter().any(|(k, _)| k == "_meta") {
            top.push(("_meta".into(), json!(META)));
        }
        let meta_text = object_text(&meta);
        let params = object_text(&top).replace(&json!(META).to_string(), &meta_text);
        let id = if request { r#""id":42,"# } else { "" };
        let text = format!(r#"{{"jsonrpc":"2.0",{id}"method":"{method}","params":{params}}}"#);

        let top_members = members(&params);
        let meta_members = exact(&top_members, "_meta")
            .filter(|t| t.starts_with('{'))
            .map(|t| members(&t))
            .unwrap_or_default();
        let misspelt = |members: &[(String, String)], names: &[&str]| {
            members.iter().any(|(k, _)| names.iter().any(|n| fold(k) == fold(n) && k != n))
        };
        let mut names: Vec<&str> = read.to_vec();
        names.push("_meta");
        let twice = |members: &[(String, String)], names: &[&str]| {
            names.iter().any(|n| members.iter().filter(|(k, _)| k == n).count() > 1)
        };
        let has_variant = misspelt(&top_members, &names)
            || misspelt(&meta_members, META_READ)
            || twice(&top_members, &names)
            || twice(&meta_members, META_READ);

        let mut gate = listed_gate();
        let mut out = Vec::new();
        gate.client_message(text.clone().into_bytes(), Instant::now(), &mut out);
        let to_server: Vec<String> = out.iter().filter_map(|a| match a {
            Action::ToServer(line) => Some(String::from_utf8(line.clone()).unwrap()),
            _ => None,
        }).collect();
        let to_client: Vec<Value> = out.iter().filter_map(|a| match a {
            Action::ToClient(line) => Some(serde_json::from_slice(line).unwrap()),
            _ => None,
        }).collect();
        let forwarded = to_server.iter().any(|line| line.contains(&params));

        if has_variant {
            prop_assert!(to_server.is_empty(), "forwarded {} as {:?}", text, to_server);
            if request {
                prop_assert_eq!(to_client.len(), 1, "{}", text);
                prop_assert_eq!(&to_client[0]["id"], &json!(42));
                prop_assert_eq!(&to_client[0]["error"]["code"], &json!(-32602), "{}", text);
            } else {
                prop_assert!(to_client.is_empty(), "{}", text);
            }
        } else {
            // Spelled as read: not refused for its spelling.
            prop_assert!(
                to_client.iter().all(|m| !m["error"]["message"].as_str().unwrap_or_default().contains("without regard to case")),
                "{} refused: {:?}", text, to_client
            );
        }
        if forwarded {
            // Go's reader, the proxy's (the last), and a reader that takes the first all agree.
            for name in &names {
                prop_assert_eq!(folded(&top_members, name), exact(&top_members, name), "{} in {}", name, text);
                prop_assert_eq!(first(&top_members, name), exact(&top_members, name), "{} in {}", name, text);
            }
            for name in META_READ {
                prop_assert_eq!(folded(&meta_members, name), exact(&meta_members, name), "{} in {}", name, text);
                prop_assert_eq!(first(&meta_members, name), exact(&meta_members, name), "{} in {}", name, text);
            }
        }
    }
}

// ----- sessions against a folding server -----

/// The server: tools listed a page at a time, cursors read as Go reads them, a tool it answers
/// but never lists, and a record of every call it received.
struct FoldingServer {
    page_size: usize,
    /// Added to every tool's `maximum` (changed by a list_changed).
    shift: u64,
    /// Calls it received that break its own schema, name no tool it lists, or were not audited as
    /// checked.
    violations: Vec<String>,
}

const TOOLS: usize = 5;

impl FoldingServer {
    fn tool(&self, i: usize) -> Value {
        json!({"name": format!("t{i}"), "inputSchema": {"type": "object", "properties": {"n": {"type": "integer", "maximum": i as u64 + self.shift}}, "required": ["n"], "additionalProperties": false}})
    }

    fn handle(&mut self, text: &str) -> Option<String> {
        let Ok(Read::One(m)) = message::read(text) else {
            return None;
        };
        let Kind::Request { id, method } = &m.kind else {
            return None;
        };
        let params = m
            .params
            .clone()
            .map(|at| text[at].to_string())
            .unwrap_or_else(|| "{}".into());
        let params_members = if params.starts_with('{') {
            members(&params)
        } else {
            Vec::new()
        };
        let answer = |result: Value| {
            Some(format!(
                r#"{{"jsonrpc":"2.0","id":{},"result":{result}}}"#,
                id.raw()
            ))
        };
        match method.as_str() {
            "tools/list" => {
                let cursor = folded(&params_members, "cursor")
                    .and_then(|c| parse_with(&c, DuplicateKeys::KeepLast).ok())
                    .and_then(|c| c.as_str().and_then(|c| c.parse::<usize>().ok()))
                    .unwrap_or(0);
                let tools: Vec<Value> = (cursor..TOOLS)
                    .take(self.page_size)
                    .map(|i| self.tool(i))
                    .collect();
                let mut result = json!({ "tools": tools });
                if cursor + self.page_size < TOOLS {
                    result["nextCursor"] = json!((cursor + self.page_size).to_string());
                }
                answer(result)
            }
            "tools/call" => {
                let name = folded(&params_members, "name")
                    .and_then(|n| parse_with(&n, DuplicateKeys::KeepLast).ok());
                let arguments = folded(&params_members, "arguments")
                    .and_then(|a| parse_with(&a, DuplicateKeys::KeepLast).ok())
                    .unwrap_or(json!({}));
                let listed = (0..TOOLS).find(|i| name == Some(json!(format!("t{i}"))));
                let valid = listed.is_some_and(|i| {
                    arguments.as_object().is_some_and(|o| {
                        o.keys().all(|k| k == "n")
                            && o.get("n")
                                .and_then(Value::as_u64)
                                .is_some_and(|n| n <= i as u64 + self.shift)
                    })
                });
                if !valid {
                    self.violations.push(text.to_string());
                }
                answer(json!({"content": []}))
            }
            _ => answer(json!({})),
        }
    }
}

/// What the client does next.
#[derive(Debug, Clone)]
enum Step {
    /// List the tools: the cursor's key spelled `key` (0: `cursor`, 1: `Cursor`, 2: `CURSOR`,
    /// 3: `curſor`, 4: `cursor` then `Cursor`, 5: none), asking for page `page` (a garbage
    /// cursor when past the end), following the pages when `follow`.
    List { key: u8, page: usize, follow: bool },
    /// Call tool `tool` (5: one the server answers and never lists, 6: one it does not know).
    Call { tool: usize, valid: bool },
    /// The server's tools change, and it says so.
    Change,
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        3 => (0u8..6, 0usize..7, any::<bool>()).prop_map(|(key, page, follow)| Step::List { key, page, follow }),
        5 => (0usize..7, any::<bool>()).prop_map(|(tool, valid)| Step::Call { tool, valid }),
        1 => Just(Step::Change),
    ]
}

struct Session {
    gate: Gate,
    server: FoldingServer,
    now: Instant,
    next_id: u64,
    /// The `nextCursor` of the last answer the client got.
    last_cursor: Option<String>,
    /// Audit records of calls that reached the server without being checked.
    unchecked: Vec<String>,
}

impl Session {
    fn send(&mut self, text: String) {
        let mut out = Vec::new();
        self.gate
            .client_message(text.into_bytes(), self.now, &mut out);
        let mut queue: VecDeque<Action> = out.into();
        while let Some(action) = queue.pop_front() {
            match action {
                Action::ToServer(line) => {
                    let text = String::from_utf8(line).unwrap();
                    if let Some(answer) = self.server.handle(&text) {
                        let mut next = Vec::new();
                        self.gate
                            .server_message(answer.into_bytes(), self.now, &mut next);
                        queue.extend(next);
                    }
                }
                Action::ToClient(line) => {
                    let value: Value = serde_json::from_slice(&line).unwrap();
                    self.last_cursor = value["result"]["nextCursor"].as_str().map(String::from);
                }
                Action::Audit(record) => {
                    let checked = record.input_check == Some(InputVerdict::Passed);
                    if record.verdict == Verdict::Forwarded && !checked {
                        self.unchecked.push(format!("{record:?}"));
                    }
                }
            }
        }
    }

    fn id(&mut self) -> u64 {
        self.next_id += 1;
        self.next_id
    }

    fn step(&mut self, step: &Step) {
        match *step {
            Step::List { key, page, follow } => {
                let cursor = if page < TOOLS {
                    page.to_string()
                } else {
                    "zz".to_string()
                };
                let value = Value::String(cursor);
                let mut params = match key {
                    0 => format!(r#"{{"cursor":{value}}}"#),
                    1 => format!(r#"{{"Cursor":{value}}}"#),
                    2 => format!(r#"{{"CURSOR":{value}}}"#),
                    3 => format!(r#"{{"curſor":{value}}}"#),
                    4 => format!(r#"{{"cursor":null,"Cursor":{value}}}"#),
                    _ => "{}".to_string(),
                };
                for _ in 0..TOOLS {
                    let id = self.id();
                    self.last_cursor = None;
                    self.send(format!(
                        r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/list","params":{params}}}"#
                    ));
                    match (&self.last_cursor, follow) {
                        (Some(next), true) => {
                            params = format!(r#"{{"cursor":{}}}"#, Value::String(next.clone()))
                        }
                        _ => return,
                    }
                }
            }
            Step::Call { tool, valid } => {
                let id = self.id();
                let name = match tool {
                    0..TOOLS => format!("t{tool}"),
                    5 => "hidden".to_string(),
                    _ => "nowhere".to_string(),
                };
                let n = if valid { 0 } else { 1000 };
                let mut arguments = Map::new();
                arguments.insert("n".into(), json!(n));
                self.send(format!(
                    r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"{name}","arguments":{}}}}}"#,
                    Value::Object(arguments)
                ));
            }
            Step::Change => {
                self.server.shift = (self.server.shift + 3) % 9;
                let mut out = Vec::new();
                self.gate.server_message(
                    br#"{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}"#.to_vec(),
                    self.now,
                    &mut out,
                );
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// Whatever the client's listings ask, and however the server reads them, no call reaches
    /// the server unchecked under the default configuration.
    #[test]
    fn no_call_reaches_a_folding_server_unchecked(
        page_size in 1usize..4,
        steps in proptest::collection::vec(step(), 1..30),
    ) {
        let config = GateConfig { audit: true, ..GateConfig::default() };
        let mut session = Session {
            gate: Gate::new(config),
            server: FoldingServer { page_size, shift: 0, violations: Vec::new() },
            now: Instant::now(),
            next_id: 0,
            last_cursor: None,
            unchecked: Vec::new(),
        };
        session.send(r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25"}}"#.to_string());
        for step in &steps {
            session.step(step);
        }
        prop_assert!(session.server.violations.is_empty(), "calls the server should not have received: {:?}", session.server.violations);
        prop_assert!(session.unchecked.is_empty(), "calls forwarded unchecked: {:?}", session.unchecked);
    }
}
