//! The HTTP side of rmcp's Streamable HTTP client transport, on hyper, keeping raw results.
//!
//! rmcp runs the Streamable HTTP session (session id, protocol version header, SSE streams,
//! deleting the session at the end); this client makes the requests. It exists rather than rmcp's
//! reqwest client for two reasons: it sees each response body before it is typed, so results are
//! kept exactly as sent ([`super::raw`]), and it keeps the build small: the connections are made by
//! the project's one HTTP client ([`toolschema_http::client`]).

use super::raw::{excerpt, RawResults, Received, Watch};
use crate::message::Kind;
use bytes::Bytes;
use futures::stream::BoxStream;
use futures::StreamExt;
use http::header::{ACCEPT, AUTHORIZATION, CONTENT_TYPE};
use http::{HeaderName, HeaderValue, Method, Request, Response, StatusCode};
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use rmcp::model::ClientJsonRpcMessage;
use rmcp::transport::common::http_header::{
    EVENT_STREAM_MIME_TYPE, HEADER_LAST_EVENT_ID, HEADER_SESSION_ID, JSON_MIME_TYPE,
};
use rmcp::transport::streamable_http_client::{
    SseError, StreamableHttpClient, StreamableHttpError, StreamableHttpPostResponse,
};
use sse_stream::{Sse, SseStream};
use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
pub use toolschema_http::client::HttpError;

/// Largest error body kept for a message.
const MAX_ERROR_BODY: usize = 64 * 1024;

type HttpResult<T> = Result<T, StreamableHttpError<HttpError>>;

/// A Streamable HTTP client that keeps raw results.
#[derive(Clone)]
pub struct HttpClient {
    results: RawResults,
    watch: Watch,
    max_body_bytes: usize,
    http: toolschema_http::client::HttpClient,
}

impl HttpClient {
    /// A client keeping results in `results` and noting strays in `watch`, refusing bodies over
    /// `max_body_bytes`.
    pub fn new(results: RawResults, watch: Watch, max_body_bytes: usize) -> Self {
        HttpClient {
            results,
            watch,
            max_body_bytes,
            http: toolschema_http::client::HttpClient::new(),
        }
    }

    /// Send one request on a new connection.
    async fn send(&self, request: Request<Full<Bytes>>) -> HttpResult<Response<Incoming>> {
        self.http
            .send(request)
            .await
            .map_err(StreamableHttpError::Client)
    }

    /// A body as a stream of server-sent events, its JSON-RPC results kept as they arrive. An
    /// event that cannot be read becomes the answer to `request` (what the stream was opened
    /// for), saying why, so the request ends at once.
    fn event_stream(
        &self,
        body: Incoming,
        request: Option<serde_json::Value>,
    ) -> BoxStream<'static, Result<Sse, SseError>> {
        let limit = self.max_body_bytes;
        let mut seen = 0usize;
        let over_limit = Arc::new(AtomicBool::new(false));
        let went_over = over_limit.clone();
        let bytes = body.into_data_stream().map(move |chunk| {
            let chunk = chunk.map_err(std::io::Error::other)?;
            seen += chunk.len();
            if seen > limit {
                went_over.store(true, Ordering::SeqCst);
                return Err(std::io::Error::other(HttpError::TooLarge(limit)));
            }
            Ok(chunk)
        });
        let results = self.results.clone();
        let watch = self.watch.clone();
        let ending_watch = self.watch.clone();
        let ending_request = request.clone();
        SseStream::from_bytes_stream(bytes)
            .filter_map(move |event| {
                let mut event = event;
                // Events without data (a stream's priming event) are not messages.
                if let Ok(Sse {
                    data: Some(data), ..
                }) = &mut event
                {
                    if data.trim().is_empty() {
                        return futures::future::ready(Some(event));
                    }
                    match watch.receive(data.as_bytes(), &results) {
                        // rmcp reads the data again with serde_json, which refuses some of what
                        // the core's reader takes (lone surrogates): it gets the message as read.
                        Received::Deliver(typed) => {
                            if let Ok(text) = serde_json::to_string(&typed) {
                                *data = text;
                            }
                        }
                        Received::Skip => return futures::future::ready(None),
                        Received::Unreadable(what) => {
                            let replaced = request.clone().map(|id| watch.replace_answer(id, what));
                            match replaced {
                                Some(Received::Deliver(answer)) => {
                                    *data = serde_json::to_string(&answer).unwrap_or_default();
                                }
                                _ => return futures::future::ready(None),
                            }
                        }
                    }
                }
                futures::future::ready(Some(event))
            })
            // A stream that went over the limit ends its request with an answer that says so;
            // without one, the request would wait out its whole timeout.
            .map(move |event| match (event, &ending_request) {
                (Err(e), Some(id)) if over_limit.load(Ordering::SeqCst) => {
                    match ending_watch.answer_over_limit(id.clone(), limit) {
                        Received::Deliver(answer) => Ok(Sse {
                            data: Some(serde_json::to_string(&answer).unwrap_or_default()),
                            ..Sse::default()
                        }),
                        _ => Err(e),
                    }
                }
                (event, _) => event,
            })
            .boxed()
    }

    /// The error for a response with a failure status, quoting the start of its body.
    async fn status_error(&self, response: Response<Incoming>) -> StreamableHttpError<HttpError> {
        let status = response.status();
        let body = self
            .read_body(response.into_body(), MAX_ERROR_BODY)
            .await
            .unwrap_or_default();
        status_error(status, &body)
    }

    async fn read_body(&self, body: Incoming, limit: usize) -> HttpResult<Bytes> {
        toolschema_http::client::read_body(body, limit)
            .await
            .map_err(StreamableHttpError::Client)
    }
}

fn with_headers(
    mut builder: http::request::Builder,
    session_id: Option<&str>,
    auth_token: Option<String>,
    custom_headers: HashMap<HeaderName, HeaderValue>,
) -> http::request::Builder {
    for (name, value) in custom_headers {
        builder = builder.header(name, value);
    }
    if let Some(session_id) = session_id {
        builder = builder.header(HEADER_SESSION_ID, session_id);
    }
    if let Some(token) = auth_token {
        builder = builder.header(AUTHORIZATION, format!("Bearer {token}"));
    }
    builder
}

fn content_type(response: &Response<Incoming>) -> Option<String> {
    response
        .headers()
        .get(CONTENT_TYPE)
        .map(|value| String::from_utf8_lossy(value.as_bytes()).into_owned())
}

fn status_error(status: StatusCode, body: &[u8]) -> StreamableHttpError<HttpError> {
    let body = String::from_utf8_lossy(body);
    let body = body.trim();
    let message = if body.is_empty() {
        format!("HTTP {status}")
    } else {
        format!("HTTP {status}: {body}")
    };
    StreamableHttpError::UnexpectedServerResponse(Cow::Owned(message))
}

impl StreamableHttpClient for HttpClient {
    type Error = HttpError;

    async fn post_message(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_token: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> HttpResult<StreamableHttpPostResponse> {
        let body = serde_json::to_vec(&message)?;
        self.watch.sent(&body);
        let request_id = match super::raw::kind_of(&body) {
            Some(Kind::Request { id, .. }) => Some(id.to_value()),
            _ => None,
        };
        let builder = Request::builder()
            .method(Method::POST)
            .uri(uri.as_ref())
            .header(CONTENT_TYPE, JSON_MIME_TYPE)
            .header(
                ACCEPT,
                format!("{JSON_MIME_TYPE}, {EVENT_STREAM_MIME_TYPE}"),
            );
        let request = with_headers(builder, session_id.as_deref(), auth_token, custom_headers)
            .body(Full::new(Bytes::from(body)))
            .map_err(|e| StreamableHttpError::Client(HttpError::from(e)))?;
        let response = self.send(request).await?;
        let status = response.status();
        if matches!(status, StatusCode::ACCEPTED | StatusCode::NO_CONTENT) {
            return Ok(StreamableHttpPostResponse::Accepted);
        }
        if status == StatusCode::NOT_FOUND && session_id.is_some() {
            return Err(StreamableHttpError::SessionExpired);
        }
        if !status.is_success() {
            return Err(self.status_error(response).await);
        }
        let new_session_id = response
            .headers()
            .get(HEADER_SESSION_ID)
            .and_then(|value| value.to_str().ok())
            .map(str::to_string);
        let is_request = matches!(message, ClientJsonRpcMessage::Request(_));
        match content_type(&response) {
            Some(ct) if ct.starts_with(EVENT_STREAM_MIME_TYPE) => {
                Ok(StreamableHttpPostResponse::Sse(
                    self.event_stream(response.into_body(), request_id),
                    new_session_id,
                ))
            }
            Some(ct) if ct.starts_with(JSON_MIME_TYPE) => {
                let body = match self
                    .read_body(response.into_body(), self.max_body_bytes)
                    .await
                {
                    // As on an event stream: the request ends with an answer naming the limit.
                    Err(StreamableHttpError::Client(HttpError::TooLarge(limit))) => {
                        let answer = request_id.map(|id| self.watch.answer_over_limit(id, limit));
                        return match answer {
                            Some(Received::Deliver(typed)) => {
                                Ok(StreamableHttpPostResponse::Json(*typed, new_session_id))
                            }
                            _ => Err(StreamableHttpError::Client(HttpError::TooLarge(limit))),
                        };
                    }
                    body => body?,
                };
                if body.is_empty() && !is_request {
                    return Ok(StreamableHttpPostResponse::Accepted);
                }
                match self.watch.receive(&body, &self.results) {
                    Received::Deliver(typed) => {
                        Ok(StreamableHttpPostResponse::Json(*typed, new_session_id))
                    }
                    Received::Skip => Ok(StreamableHttpPostResponse::Accepted),
                    Received::Unreadable(what) => match request_id {
                        Some(id) => match self.watch.replace_answer(id, what) {
                            Received::Deliver(typed) => {
                                Ok(StreamableHttpPostResponse::Json(*typed, new_session_id))
                            }
                            _ => Err(StreamableHttpError::UnexpectedServerResponse(Cow::Owned(
                                format!("an unreadable body: '{}'", excerpt(&body)),
                            ))),
                        },
                        None => Ok(StreamableHttpPostResponse::Accepted),
                    },
                }
            }
            _ if !is_request => Ok(StreamableHttpPostResponse::Accepted),
            other => Err(StreamableHttpError::UnexpectedContentType(other)),
        }
    }

    async fn delete_session(
        &self,
        uri: Arc<str>,
        session_id: Arc<str>,
        auth_token: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> HttpResult<()> {
        let builder = Request::builder().method(Method::DELETE).uri(uri.as_ref());
        let request = with_headers(builder, Some(&session_id), auth_token, custom_headers)
            .body(Full::new(Bytes::new()))
            .map_err(|e| StreamableHttpError::Client(HttpError::from(e)))?;
        let response = self.send(request).await?;
        let status = response.status();
        if status.is_success() || status == StatusCode::METHOD_NOT_ALLOWED {
            return Ok(());
        }
        Err(status_error(status, b""))
    }

    async fn get_stream(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_token: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> HttpResult<BoxStream<'static, Result<Sse, SseError>>> {
        let mut builder = Request::builder()
            .method(Method::GET)
            .uri(uri.as_ref())
            .header(ACCEPT, EVENT_STREAM_MIME_TYPE);
        if let Some(last_event_id) = last_event_id {
            builder = builder.header(HEADER_LAST_EVENT_ID, last_event_id);
        }
        let request = with_headers(builder, session_id.as_deref(), auth_token, custom_headers)
            .body(Full::new(Bytes::new()))
            .map_err(|e| StreamableHttpError::Client(HttpError::from(e)))?;
        let response = self.send(request).await?;
        let status = response.status();
        if status == StatusCode::METHOD_NOT_ALLOWED {
            return Err(StreamableHttpError::ServerDoesNotSupportSse);
        }
        if !status.is_success() {
            return Err(self.status_error(response).await);
        }
        match content_type(&response) {
            Some(ct) if ct.starts_with(EVENT_STREAM_MIME_TYPE) => {
                Ok(self.event_stream(response.into_body(), None))
            }
            other => Err(StreamableHttpError::UnexpectedContentType(other)),
        }
    }
}
