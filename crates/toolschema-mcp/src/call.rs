//! `call`: one tool call by hand. Start the server (or open a session with it), list its tools,
//! and then, if the caller still wants to, send one `tools/call` and keep its answer as sent.
//!
//! The session is the fuzzer's, on one lane: the same start, handshake, listing, answer reading
//! and failure messages. A call is sent once, never repeated beside itself, and what the server
//! writes after its answer (until it answers a ping) counts as the call's stray output.

use crate::connection::Target;
use crate::fuzz::server::{Reach, Server};
use crate::fuzz::{CallRecord, Unavailable};
use serde_json::{json, Value};
use std::time::Duration;
use toolschema::json::number::StatedNumbers;

/// How the server is reached and how long it may take.
#[derive(Debug, Clone)]
pub struct CallOptions {
    /// How long starting the server and listing its tools may take; and, separately, the call.
    /// Progress notifications stretch a call's wait, within three times this (as the fuzzer's).
    pub timeout: Duration,
    /// HTTP headers sent with every request (`--url` only).
    pub headers: Vec<(String, String)>,
    /// The largest message accepted from the server.
    pub max_message_bytes: usize,
}

/// A server started and listed, ready for one call.
pub struct Caller {
    server: Server,
    timeout: Duration,
}

impl Caller {
    /// Start the server (or open a session with it) and list its tools, each as sent, with
    /// the numbers of each tool's definition that reading changed, as the text states them
    /// (pointers from the tool object; see [`toolschema::Tool::with_stated_numbers`]).
    pub async fn open(
        target: &Target,
        options: &CallOptions,
    ) -> Result<(Caller, Vec<Value>, Vec<StatedNumbers>), Unavailable> {
        let reach = Reach {
            target: target.clone(),
            headers: options.headers.clone(),
            max_message_bytes: options.max_message_bytes,
            startup: options.timeout,
        };
        let server = Server::new(reach, 1);
        match server.start_and_list(false).await {
            Ok(listing) => Ok((
                Caller {
                    server,
                    timeout: options.timeout,
                },
                listing.tools,
                listing.stated,
            )),
            Err(unavailable) => {
                server.shut_down().await;
                Err(unavailable)
            }
        }
    }

    /// Call `name` with `arguments`, once, and wait for its answer.
    pub async fn call(&self, name: &str, arguments: Value) -> Result<CallRecord, Unavailable> {
        let params = json!({"name": name, "arguments": arguments});
        let lane = self.server.take_lane();
        let record = self
            .server
            .call(
                lane,
                params,
                self.timeout,
                self.timeout * crate::fuzz::server::PROGRESS_CEILING,
                true,
            )
            .await;
        self.server.give_lane(lane);
        record
    }

    /// End the session and stop the server.
    pub async fn close(self) {
        self.server.shut_down().await;
    }
}

/// Run `work` unless the user interrupts it (Ctrl-C) first: then `None`, and what `work` held is
/// dropped, which stops a server it started (its process group is killed).
pub async fn unless_interrupted<T>(work: impl std::future::Future<Output = T>) -> Option<T> {
    tokio::select! {
        done = work => Some(done),
        _ = tokio::signal::ctrl_c() => None,
    }
}
