//! A long-lived client session for a program that speaks to many servers at once (the proxy's
//! many-servers front): the same start, transports and raw results as `snapshot` and `fuzz`,
//! with a handler of the caller's (to hear `notifications/tools/list_changed`), any number of
//! calls in flight, and every result kept exactly as the server sent it.

use super::raw::{RawResults, Watch};
use super::{http_transport, list_all_tools, service_failure, spawn_stdio, SessionFailure, Target};
use crate::server_process::{ServerProcess, DEFAULT_SHUTDOWN_GRACE};
use rmcp::model::{
    CallToolRequestParams, CancelledNotificationParam, ClientRequest, Request, RequestNoParam,
};
use rmcp::service::{PeerRequestOptions, RoleClient, RunningService, ServiceError};
use rmcp::{ClientHandler, ServiceExt};
use serde_json::Value;
use std::future::Future;
use tokio::sync::Mutex;
use toolschema::json::number::StatedNumbers;
use toolschema::json::Loss;

/// What became of a call.
#[derive(Debug, Clone, PartialEq)]
pub enum Answered {
    /// The server's result, read without changing a value.
    Result(Value),
    /// The server's result as the JSON text it sent, where reading it would have changed a
    /// value (a number beyond 64 bits, a lone surrogate escape).
    ResultText(String),
    /// The server answered with a JSON-RPC error: its `error` object.
    Error(Value),
    /// The call was given up before an answer came, and the server was sent
    /// `notifications/cancelled` for it.
    Cancelled,
}

/// One tool of a server's listing.
#[derive(Debug, Clone, PartialEq)]
pub struct ListedTool {
    /// The definition as read.
    pub definition: Value,
    /// The numbers of the definition the value holds otherwise than the server wrote them
    /// (pointers from the tool object): [`StatedNumbers::write`] writes it back as sent.
    pub stated: StatedNumbers,
    /// A value of the definition that reading changed, if any: its lone surrogate escape where
    /// it holds one, or else its first changed number.
    pub loss: Option<Loss>,
    /// A lone surrogate escape of the definition, which reading changed to U+FFFD and no
    /// writing gives back.
    pub lone_surrogate: Option<Loss>,
}

impl ListedTool {
    /// Why the definition cannot be written back as the server wrote it, found without
    /// writing it: a lone surrogate escape (read as U+FFFD), or a number no JSON text writes
    /// (an exponent past 2^60). `None` when [`ListedTool::write_edited`] can write it with any
    /// edit that adds no number.
    pub fn unwritable(&self) -> Option<Loss> {
        if let Some(loss) = &self.lone_surrogate {
            return Some(loss.clone());
        }
        self.stated
            .in_value(&self.definition)
            .into_iter()
            .find(|(_, stated)| stated.is_beyond())
            .map(|(_, stated)| Loss::PastFloatRange {
                literal: stated.to_string(),
            })
    }

    /// The definition as the server wrote it, with the changes `edit` makes to it; `Err`
    /// saying why when that cannot be done: it holds a lone surrogate escape (read as U+FFFD),
    /// or a number no JSON text writes.
    pub fn write_edited(&self, edit: impl FnOnce(&mut Value)) -> Result<String, Loss> {
        if let Some(loss) = &self.lone_surrogate {
            return Err(loss.clone());
        }
        let mut definition = self.definition.clone();
        edit(&mut definition);
        self.stated.write(&definition).ok_or_else(|| {
            self.unwritable()
                .or_else(|| self.loss.clone())
                .unwrap_or(Loss::PastFloatRange {
                    literal: "a number".into(),
                })
        })
    }
}

/// A session with one server, over stdio (a child process of its own) or Streamable HTTP.
pub struct Client<H: ClientHandler> {
    session: RunningService<RoleClient, H>,
    results: RawResults,
    watch: Watch,
    process: Mutex<Option<ServerProcess>>,
}

impl<H: ClientHandler> Client<H> {
    /// Start the server (or reach it) and do the `initialize` handshake, with `handler`
    /// answering what the server sends. `headers` go with every HTTP request.
    pub async fn connect(
        target: &Target,
        headers: &[(String, String)],
        max_message_bytes: usize,
        handler: H,
    ) -> Result<Self, String> {
        let results = RawResults::default();
        let watch = Watch::default();
        let (session, process) = match target {
            Target::Command(command) => {
                let (process, transport) =
                    spawn_stdio(command, &results, &watch, max_message_bytes)
                        .map_err(|e| e.to_string())?;
                let session = handler.serve(transport).await.map_err(|e| {
                    format!("its initialize failed: {}", super::initialize_failure(e))
                })?;
                (session, Some(process))
            }
            Target::Url(url) => {
                let transport = http_transport(url, headers, &results, &watch, max_message_bytes)?;
                let session = handler.serve(transport).await.map_err(|e| {
                    format!("its initialize failed: {}", super::initialize_failure(e))
                })?;
                (session, None)
            }
        };
        Ok(Client {
            session,
            results,
            watch,
            process: Mutex::new(process),
        })
    }

    /// Whether the session has ended (the server exited, the connection closed).
    pub fn is_closed(&self) -> bool {
        self.session.is_transport_closed()
    }

    /// Every tool of every page of the server's `tools/list`, each with what reading it
    /// changed.
    pub async fn list_tools(&self) -> Result<Vec<ListedTool>, String> {
        let listed = list_all_tools(self.session.peer(), &self.results, &self.watch, |_| {})
            .await
            .map_err(|failure| failure.to_string())?;
        let mut losses = listed.lossy.into_iter().peekable();
        Ok(listed
            .tools
            .into_iter()
            .zip(listed.stated)
            .enumerate()
            .map(|(at, (definition, stated))| {
                let loss = losses
                    .next_if(|(lossy, _)| *lossy == at)
                    .map(|(_, loss)| loss);
                let lone_surrogate = loss
                    .clone()
                    .filter(|loss| matches!(loss, Loss::LoneSurrogate { .. }));
                ListedTool {
                    definition,
                    stated,
                    loss,
                    lone_surrogate,
                }
            })
            .collect())
    }

    /// Send one `tools/call` with `params` (its `name`, `arguments`, `_meta`) and wait for the
    /// answer, or for `cancelled` to end first: then the server is sent
    /// `notifications/cancelled` for the call, with the reason `cancelled` gives, so that it
    /// stops working on it. `Err` when no answer can come (the connection closed, the params
    /// are not a call).
    ///
    /// A result is kept as the server sent it where reading it changed a value (a number
    /// beyond 64 bits, a lone surrogate escape): [`Answered::ResultText`].
    pub async fn call(
        &self,
        params: Value,
        cancelled: impl Future<Output = Option<String>>,
    ) -> Result<Answered, String> {
        let params: CallToolRequestParams = serde_json::from_value(params)
            .map_err(|e| format!("the call's params cannot be sent: {e}"))?;
        let request = ClientRequest::CallToolRequest(Request::new(params));
        let peer = self.session.peer();
        let handle = peer
            .send_request_with_option(request, PeerRequestOptions::no_options())
            .await
            .map_err(|e| service_failure(e).to_string())?;
        let id = handle.id.clone();
        let answer = tokio::select! {
            answer = handle.await_response() => answer,
            reason = cancelled => {
                peer.notify_cancelled(CancelledNotificationParam::new(Some(id), reason))
                    .await
                    .map_err(|e| service_failure(e).to_string())?;
                return Ok(Answered::Cancelled);
            }
        };
        match answer {
            Ok(_) => {
                let (result, loss) = self.results.take_read(&id).ok_or_else(|| {
                    SessionFailure::Misbehaved("its response carried no result".into()).to_string()
                })?;
                Ok(match loss.result_as_sent {
                    Some(text) => Answered::ResultText(text),
                    None => Answered::Result(result),
                })
            }
            Err(ServiceError::McpError(error)) => {
                let error = serde_json::to_value(&error).map_err(|e| e.to_string())?;
                Ok(Answered::Error(error))
            }
            Err(error) => Err(service_failure(error).to_string()),
        }
    }

    /// Send a `ping` and wait for its answer: whether a server that is slow to answer a call is
    /// there at all.
    pub async fn ping(&self) -> Result<(), String> {
        let request = ClientRequest::PingRequest(RequestNoParam {
            method: Default::default(),
            extensions: Default::default(),
        });
        self.session
            .peer()
            .send_request(request)
            .await
            .map(drop)
            .map_err(|e| service_failure(e).to_string())
    }

    /// End the session and stop the server's process, if it has one.
    pub async fn close(self) {
        let Client {
            session, process, ..
        } = self;
        let _ = session.cancel().await;
        if let Some(mut process) = process.into_inner() {
            process.shut_down(DEFAULT_SHUTDOWN_GRACE).await;
        }
    }
}
