//! Learning the server's tools: from the client's listings as they pass, and from the proxy's
//! own listing when a call needs the tools and the client has not listed them (all of them,
//! since they last changed).
//!
//! The own listing never blocks the client: calls that need it wait in the gate, every other
//! message flows. Its answers are the proxy's and never reach the client, even late. A listing
//! that fails (an error, no answer in time, an answer over the size limit, a cursor the server
//! repeats) fails the waiting calls closed, and the next call that needs the tools after a
//! growing pause lists again.

use super::calls::{AdmittedCall, Waiting};
use super::{report, Action, Gate};
use crate::message::{self, result_line, IdKey, Message, Read, RequestId};
use crate::registry::{Next, Page};
use serde_json::{json, Value};
use std::collections::HashSet;
use std::ops::Range;
use std::time::{Duration, Instant};
use toolschema::json::number::StatedNumbers;

/// The longest pause between two own listings after failures in a row.
const MAX_RETRY: Duration = Duration::from_secs(60);

/// Calls (and batches) kept waiting for the own listing at most, and their bytes: past either, a
/// call that would wait is decided as one that cannot be checked, so that a client cannot make
/// the proxy hold what it sends without bound while the server is slow to list.
pub(super) const MAX_WAITING: usize = 1024;
pub(super) const MAX_WAITING_BYTES: usize = 16 * 1024 * 1024;

/// Past this many bytes of the client's listing pages waiting to be learned, they are learned
/// at once: memory stays bounded by one listing.
const UNLEARNED_BYTES: usize = 16 * 1024 * 1024;

/// A page of a `tools/list` result passed to the client, learned the next time a call needs the
/// tools (the page goes to the client without waiting to be learned).
pub(super) struct UnlearnedPage {
    text: String,
    /// The cursor it was asked with (`None`: a first page).
    cursor: Option<String>,
    changes_at_request: u64,
}

/// The proxy's own listing.
pub(super) enum Listing {
    /// None under way; the pause to take if the next one fails.
    Idle { backoff: Duration },
    /// Under way.
    Running(Run),
    /// The last one failed: why, when a call may list again, and the pause after that.
    Failed {
        reason: String,
        retry_at: Instant,
        backoff: Duration,
    },
}

/// An own listing under way.
pub(super) struct Run {
    /// The id of the page request out now.
    request: IdKey,
    /// The cursor it asked with (`None` for the first page).
    cursor: Option<String>,
    /// Cursors seen so far: a server that repeats one would be listed forever.
    seen: HashSet<String>,
    /// The registry's change count when this page was asked for.
    changes_at_request: u64,
    /// When the server must have answered this page.
    deadline: Instant,
    /// The pause to take if this listing fails.
    backoff: Duration,
}

impl Listing {
    /// No listing yet; `retry` is the first pause after a failure.
    pub(super) fn new(retry: Duration) -> Listing {
        Listing::Idle { backoff: retry }
    }

    /// When the page out now must have been answered.
    pub(super) fn deadline(&self) -> Option<Instant> {
        match self {
            Listing::Running(run) => Some(run.deadline),
            _ => None,
        }
    }

    /// Whether `key` is the id of the page request out now.
    pub(super) fn is_waiting_for(&self, key: &IdKey) -> bool {
        matches!(self, Listing::Running(run) if run.request == *key)
    }
}

impl Gate {
    /// A call needs the tools: `Ok` when it can wait for a listing (under way, or started
    /// now), `Err` with the reason when the last listing failed and the pause is not over.
    pub(super) fn listing_for_call(
        &mut self,
        now: Instant,
        out: &mut Vec<Action>,
    ) -> Result<(), String> {
        let backoff = match &self.listing {
            Listing::Running(_) => return Ok(()),
            Listing::Failed {
                reason, retry_at, ..
            } if *retry_at > now => {
                let wait = retry_at.saturating_duration_since(now).as_secs_f64().ceil();
                return Err(format!(
                    "{reason} (the proxy lists the tools again for a call in {wait}s)"
                ));
            }
            Listing::Failed { backoff, .. } | Listing::Idle { backoff } => *backoff,
        };
        let (request, changes_at_request) = self.send_page(None, out);
        self.listing = Listing::Running(Run {
            request,
            cursor: None,
            seen: HashSet::new(),
            changes_at_request,
            deadline: now + self.config.listing_timeout,
            backoff,
        });
        Ok(())
    }

    /// The client requests that wait for the proxy's own request `key` (a page of its own
    /// listing out now): the calls, and the requests of the batches, waiting for the listing.
    /// None when `key` is not that page's id.
    pub fn waiting_on(&self, key: &IdKey) -> Vec<IdKey> {
        if !self.listing.is_waiting_for(key) {
            return Vec::new();
        }
        let mut keys = Vec::new();
        for waiting in &self.waiting {
            match waiting {
                Waiting::Call(call) => keys.push(call.key().clone()),
                Waiting::Batch(text) => {
                    if let Ok(Read::Batch(elements)) = message::read(text) {
                        keys.extend(elements.iter().filter_map(
                            |range| match message::read_object(text, range.clone()) {
                                Ok(Message {
                                    kind: message::Kind::Request { id, .. },
                                    ..
                                }) => Some(id.key().clone()),
                                _ => None,
                            },
                        ));
                    }
                }
            }
        }
        keys
    }

    /// A call that needs the tools waits for the proxy's own listing (started now if none is
    /// under way); it is decided as a call that cannot be checked when the last listing failed
    /// and the pause is not over, or when too much waits already.
    pub(super) fn wait_for_listing(
        &mut self,
        call: AdmittedCall,
        now: Instant,
        out: &mut Vec<Action>,
    ) {
        if let Some(reason) = self.waiting_full(call.text_len()) {
            return self.unchecked(call, reason, out);
        }
        // Waiting before the listing starts, so the proxy's own ids avoid the call's.
        self.waiting.push_back(Waiting::Call(Box::new(call)));
        if let Err(reason) = self.listing_for_call(now, out) {
            if let Some(Waiting::Call(call)) = self.waiting.pop_back() {
                self.unchecked(*call, reason, out);
            }
        }
    }

    /// Why a message of `more` bytes may not wait for the own listing, if it may not (one may
    /// always wait, whatever its size: the transport bounds that).
    fn waiting_full(&self, more: usize) -> Option<String> {
        let bytes = self.waiting.iter().map(Waiting::text_len).sum::<usize>();
        let full = self.waiting.len() >= MAX_WAITING
            || (!self.waiting.is_empty() && bytes + more > MAX_WAITING_BYTES);
        full.then(|| {
            format!(
                "{} calls ({bytes} bytes) already wait for the proxy's listing of the tools (at most {MAX_WAITING}, {MAX_WAITING_BYTES} bytes)",
                self.waiting.len()
            )
        })
    }

    /// A batch from the client: whether it must wait for a listing (it holds a call, and the
    /// tools are not known, or it calls a tool not known since the proxy's own listing).
    pub(super) fn batch_waits_for_listing(
        &mut self,
        text: &str,
        elements: &[Range<usize>],
        now: Instant,
        out: &mut Vec<Action>,
    ) -> bool {
        if self.config.checks_no_input() || self.server_gone.is_some() {
            return false;
        }
        self.learn_listed_pages();
        let holds_call = elements.iter().any(|range| {
            matches!(
                message::read_object(text, range.clone()),
                Ok(Message { kind: message::Kind::Request { ref method, .. }, .. }) if method == "tools/call"
            )
        });
        let needs_listing = !self.registry.is_current()
            || (!self.own_listing_holds && self.batch_calls_unknown_tool(text, elements));
        holds_call
            && needs_listing
            && self.waiting_full(text.len()).is_none()
            && self.listing_for_call(now, out).is_ok()
    }

    /// Whether a batch holds a call to a tool the proxy does not know (which the proxy lists
    /// the tools again for, before it decides that the server does not list it).
    fn batch_calls_unknown_tool(&self, text: &str, elements: &[Range<usize>]) -> bool {
        elements.iter().any(|range| {
            let Ok(message) = message::read_object(text, range.clone()) else {
                return false;
            };
            let is_call = matches!(&message.kind, message::Kind::Request { method, .. } if method == "tools/call");
            is_call
                && message::tool_call(text, &message)
                    .name
                    .is_some_and(|name| !self.registry.knows(&name))
        })
    }

    /// Ask the server for one page of tools; returns the request's id and the registry's
    /// change count at that moment.
    fn send_page(&mut self, cursor: Option<&str>, out: &mut Vec<Action>) -> (IdKey, u64) {
        let id = self.own_id();
        let mut params = serde_json::Map::new();
        if let Some(cursor) = cursor {
            params.insert("cursor".into(), json!(cursor));
        }
        if let Some(meta) = self.own_request_meta() {
            params.insert("_meta".into(), meta);
        }
        let params = match params.is_empty() {
            true => String::new(),
            false => format!(r#","params":{}"#, Value::Object(params)),
        };
        let line = format!(
            r#"{{"jsonrpc":"2.0","id":{},"method":"tools/list"{params}}}"#,
            id.raw()
        );
        out.push(Action::ToServer(line.into_bytes()));
        (id.key().clone(), self.registry.changes())
    }

    /// The server's answer to the page the proxy asked for.
    pub(super) fn own_page(
        &mut self,
        text: &str,
        message: &Message,
        now: Instant,
        out: &mut Vec<Action>,
    ) {
        let result = match (&message.result, &message.error) {
            (Some(at), _) => match message::parse_at(text, at.clone()) {
                Ok(result) => result,
                Err(e) => {
                    let reason = format!(
                        "the server's answer to the proxy's tools/list cannot be read: {e}"
                    );
                    return self.listing_failed(reason, now, out);
                }
            },
            (None, Some(at)) => {
                let reason = format!(
                    "the server answered the proxy's tools/list with an error: {}",
                    &text[at.clone()]
                );
                return self.listing_failed(reason, now, out);
            }
            (None, None) => return,
        };
        // Pages the client listed before these come first.
        self.learn_listed_pages();
        let Listing::Running(run) = &self.listing else {
            return;
        };
        let next = match message::next_cursor(&result) {
            Ok(next) => next.map(String::from),
            Err(why) => {
                let reason =
                    format!("the server's answer to the proxy's tools/list is unusable: {why}");
                return self.listing_failed(reason, now, out);
            }
        };
        let (cursor, changes_at_request) = (run.cursor.clone(), run.changes_at_request);
        let page = Page {
            cursor: cursor.as_deref(),
            next: next.as_deref().map_or(Next::Last, Next::Cursor),
            changes_at_request,
        };
        let own = RequestId::from_text(&format!("\"toolschema-proxy-{}\"", self.next_own_id));
        let lossy = match &message.result {
            Some(at) if self.config.pins.is_some() => message::lossy_tools(text, at.clone()),
            _ => Vec::new(),
        };
        self.check_pins(tools_of(&result), &lossy, Some(&own), out);
        let (warnings, completed) = self.registry.learn_page(tools_of(&result), page);
        self.own_listing_holds |= completed;
        self.learned(warnings, completed);
        let Some(next) = next else {
            self.listing = Listing::Idle {
                backoff: self.config.listing_retry,
            };
            return self.release_waiting(now, out);
        };
        let repeated = match &mut self.listing {
            Listing::Running(run) => !run.seen.insert(next.clone()),
            _ => return,
        };
        if repeated {
            let reason = format!(
                "the server returned nextCursor {} twice to the proxy's tools/list",
                Value::String(next)
            );
            return self.listing_failed(reason, now, out);
        }
        let (request, changes_at_request) = self.send_page(Some(&next), out);
        let timeout = self.config.listing_timeout;
        if let Listing::Running(run) = &mut self.listing {
            run.request = request;
            run.cursor = Some(next);
            run.changes_at_request = changes_at_request;
            run.deadline = now + timeout;
        }
    }

    /// The own listing failed: the calls waiting for it are refused (or let through, as the
    /// configuration says), and the next call that needs the tools after a pause lists again.
    pub(super) fn listing_failed(&mut self, reason: String, now: Instant, out: &mut Vec<Action>) {
        let backoff = match &self.listing {
            Listing::Running(run) => {
                // Its answer may still come: it is the proxy's, never the client's.
                self.abandoned.insert(run.request.clone());
                run.backoff
            }
            Listing::Idle { backoff } | Listing::Failed { backoff, .. } => *backoff,
        };
        report(&format!(
            "{reason}; calls to its tools cannot be checked until the proxy lists them again (on a call, after {}s)",
            backoff.as_secs_f64()
        ));
        self.listing = Listing::Failed {
            reason,
            retry_at: now + backoff,
            backoff: (backoff * 2).min(MAX_RETRY),
        };
        self.release_waiting(now, out);
    }

    /// Decide what waited for the own listing, in order.
    fn release_waiting(&mut self, now: Instant, out: &mut Vec<Action>) {
        for waiting in std::mem::take(&mut self.waiting) {
            match waiting {
                Waiting::Call(call) => self.admit(*call, now, out),
                Waiting::Batch(text) => {
                    if let Ok(Read::Batch(elements)) = message::read(&text) {
                        self.client_batch(text, elements, now, out);
                    }
                }
            }
        }
    }

    /// A `tools/list` result for the client: drop the tools the policy refuses, and leave the page
    /// to be learned. Returns the line the client gets.
    pub(super) fn tools_list_result(
        &mut self,
        text: String,
        id: &RequestId,
        cursor: Option<String>,
        changes_at_request: u64,
        out: &mut Vec<Action>,
    ) -> Vec<u8> {
        if cursor.is_none() {
            // A new listing: the pages of earlier ones not learned yet are superseded, not kept
            // (each listing completes only with its own pages).
            self.unlearned.clear();
        }
        let (learned, sent) = match self.client_view(&text, id, out) {
            Some(view) => (text, view),
            None => (text.clone(), text.into_bytes()),
        };
        // Queued before the client sees the page, so its next call is checked against it.
        self.unlearned.push(UnlearnedPage {
            text: learned,
            cursor,
            changes_at_request,
        });
        let waiting: usize = self.unlearned.iter().map(|p| p.text.len()).sum();
        if waiting > UNLEARNED_BYTES {
            self.learn_listed_pages();
        }
        sent
    }

    /// The `tools/list` response as the client sees it: without the tools the policy refuses,
    /// titles and descriptions overridden, and (when what it sees depends on who it is) no
    /// longer cacheable by others. `None` when that is the response as the server sent it.
    fn client_view(
        &mut self,
        text: &str,
        id: &RequestId,
        out: &mut Vec<Action>,
    ) -> Option<Vec<u8>> {
        if self.config.policy.is_open()
            && self.config.overrides.is_empty()
            && self.config.pins.is_none()
        {
            return None;
        }
        let mut response = message::parse(text).ok()?;
        let result = response.get_mut("result")?;
        let Some(Value::Array(tools)) = result.get_mut("tools") else {
            return None;
        };
        let lossy = match self.config.pins {
            Some(_) => message::lossy_tools_of_response(text),
            None => Vec::new(),
        };
        let left_out = self.check_pins(tools, &lossy, Some(id), out);
        let policy = &self.config.policy;
        let overrides = &self.config.overrides;
        let before = tools.len();
        tools.retain(|tool| {
            let name = tool.get("name").and_then(Value::as_str).unwrap_or_default();
            policy.refusal(name).is_none() && !left_out.iter().any(|n| n == name)
        });
        let mut changed = tools.len() != before;
        for tool in tools.iter_mut() {
            changed |= overrides.apply(tool);
        }
        if policy.is_per_client() {
            // A shared cache must not hand this token's catalog to another client.
            if let Some(scope) = result.get_mut("cacheScope") {
                changed |= *scope != "private";
                *scope = Value::String("private".into());
            }
        }
        changed.then(|| result_line(id, result))
    }

    /// Learn the pages of the client's listings that arrived since the last time.
    pub(super) fn learn_listed_pages(&mut self) {
        if !self.unlearned.is_empty() {
            // The server may have read the client's request otherwise than the proxy did.
            self.own_listing_holds = false;
        }
        for page in std::mem::take(&mut self.unlearned) {
            let Ok(response) = message::parse(&page.text) else {
                continue;
            };
            let Some(result) = response.get("result") else {
                continue;
            };
            // The numbers of the schemas as the server's text states them.
            let stated = StatedNumbers::read(&page.text).below("/result/tools");
            let (warnings, completed) = self.registry.learn_page_read(
                tools_of(result),
                &stated,
                Page {
                    cursor: page.cursor.as_deref(),
                    // A cursor that is not a string does not end the listing: the pages
                    // after it are unknown.
                    next: match message::next_cursor(result) {
                        Ok(None) => Next::Last,
                        Ok(Some(next)) => Next::Cursor(next),
                        Err(_) => Next::Unknown,
                    },
                    changes_at_request: page.changes_at_request,
                },
            );
            self.learned(warnings, completed);
        }
    }

    /// Report what learning a page found; after a complete listing, the `--allow` and `--deny`
    /// patterns that match none of the tools.
    fn learned(&mut self, warnings: Vec<String>, completed: bool) {
        for warning in warnings {
            self.report_once(warning);
        }
        if !completed {
            return;
        }
        let policy = &self.config.policy;
        let patterns = policy
            .allow
            .iter()
            .map(|glob| ("--allow", glob))
            .chain(policy.deny.iter().map(|glob| ("--deny", glob)));
        let count = self.registry.len();
        let unmatched: Vec<(String, String)> = patterns
            .filter(|(_, glob)| !self.registry.names().any(|name| glob.matches(name)))
            .map(|(flag, glob)| {
                let warning = format!(
                    "{flag} '{glob}' matches none of the {} the server lists",
                    toolschema::text::count(count, "tool", "tools")
                );
                (format!("{flag} '{glob}' matches nothing"), warning)
            })
            .collect();
        // Once per pattern, whatever the count of tools in later listings.
        for (key, warning) in unmatched {
            self.report_once_as(key, || warning);
        }
    }
}

fn tools_of(result: &Value) -> &[Value] {
    result
        .get("tools")
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice)
}
