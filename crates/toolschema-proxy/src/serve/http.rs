//! The service over HTTP: the interceptor server at `POST /mcp` (one JSON-RPC message a
//! request, answered with JSON), the ToolHive webhook at `POST /toolhive`, and `GET /healthz`.
//!
//! `/mcp` is behind the guard of the other HTTP servers (bearer tokens or JWTs, Host and
//! Origin, body size, read and write timeouts; a non-loopback address needs authentication).
//! `/toolhive` is authenticated by its HMAC signature instead (ToolHive sends no bearer
//! token), and is served only with a secret. Each decision runs on a blocking thread, at most
//! `max_concurrent` at once (503 past it), within the decision timeout (refused past it).

use super::{interceptors, webhook, Service};
use bytes::Bytes;
use http::{HeaderMap, Method, Request, Response, StatusCode};
use http_body_util::Full;
use serde_json::{json, Value};
use std::net::SocketAddr;
use std::sync::Arc;
use tokio::sync::Semaphore;
use toolschema_http::serve::RequestBody;
use toolschema_http::{Guard, GuardConfig, Principal};

/// The interceptor server's path.
pub const MCP_PATH: &str = "/mcp";
/// The ToolHive webhook's path.
pub const TOOLHIVE_PATH: &str = "/toolhive";

/// Why the service does not serve.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    /// The address cannot be bound.
    #[error("cannot listen on {address}: {source}")]
    Bind {
        /// The address.
        address: String,
        /// Why.
        source: std::io::Error,
    },
    /// The guard does not start (no authentication on a public address, a token file).
    #[error("{0}")]
    Guard(#[from] toolschema_http::StartError),
    /// Signals cannot be handled.
    #[error("cannot handle signals: {0}")]
    Signals(std::io::Error),
}

/// Serve `service` on `address` until SIGINT or SIGTERM; `ready` is told the address bound.
pub async fn serve(
    service: Arc<Service>,
    address: &str,
    mut guard: GuardConfig,
    ready: impl FnOnce(SocketAddr, &Guard),
) -> Result<(), ServeError> {
    let bind_error = |source| ServeError::Bind {
        address: address.to_string(),
        source,
    };
    let listener = tokio::net::TcpListener::bind(address)
        .await
        .map_err(bind_error)?;
    let bound = listener.local_addr().map_err(bind_error)?;
    guard.endpoint_path = MCP_PATH.to_string();
    let guard = Arc::new(Guard::start(guard, bound).await?);
    guard.reload_on_sighup().map_err(ServeError::Signals)?;
    let stop = crate::http::on_stop_signal().map_err(ServeError::Signals)?;
    let front = Arc::new(Front {
        permits: Semaphore::new(service.config.max_concurrent.max(1)),
        service,
        guard: guard.clone(),
    });
    ready(bound, &guard);
    let make_service = || {
        let front = front.clone();
        hyper::service::service_fn(move |request| {
            let front = front.clone();
            async move { Ok::<_, std::convert::Infallible>(front.handle(request).await) }
        })
    };
    toolschema_http::serve::serve_until_stopped(
        listener,
        *guard.limits(),
        make_service,
        stop,
        || async {},
    )
    .await;
    Ok(())
}

/// What every connection shares.
struct Front {
    service: Arc<Service>,
    guard: Arc<Guard>,
    permits: Semaphore,
}

impl Front {
    async fn handle(&self, request: Request<RequestBody>) -> Response<Full<Bytes>> {
        let path = request.uri().path().to_string();
        match (request.method().clone(), path.as_str()) {
            (Method::GET, "/healthz") => text(StatusCode::OK, "ok\n"),
            (Method::POST, MCP_PATH) => self.mcp(request).await,
            (Method::POST, TOOLHIVE_PATH) => self.toolhive(request).await,
            (_, MCP_PATH | TOOLHIVE_PATH) => text(StatusCode::METHOD_NOT_ALLOWED, "use POST\n"),
            _ => text(
                StatusCode::NOT_FOUND,
                "not found: the interceptor server is at POST /mcp, the ToolHive webhook at POST /toolhive\n",
            ),
        }
    }

    /// One JSON-RPC message to the interceptor server.
    async fn mcp(&self, request: Request<RequestBody>) -> Response<Full<Bytes>> {
        let (parts, body) = request.into_parts();
        let principal = match self.guard.admit(&parts).await {
            Ok(principal) => principal,
            Err(refusal) => return refusal.into_response(),
        };
        let body = match self.guard.read_body(&principal, &parts.headers, body).await {
            Ok(body) => body,
            Err(refusal) => return refusal.into_response(),
        };
        let message: Value = match serde_json::from_slice(&body) {
            Ok(message) => message,
            Err(e) => {
                let answer = json!({"jsonrpc": "2.0", "id": null,
                    "error": {"code": -32700, "message": format!("the body is not JSON: {e}")}});
                return json_response(StatusCode::BAD_REQUEST, &answer);
            }
        };
        let id = message.get("id").cloned().unwrap_or(Value::Null);
        let service = self.service.clone();
        let answered = self
            .decide(move || interceptors::handle(&service, &message))
            .await;
        match answered {
            Ok(Some(answer)) => json_response(StatusCode::OK, &answer),
            Ok(None) => empty(StatusCode::ACCEPTED),
            Err((status, why)) => {
                let answer = json!({"jsonrpc": "2.0", "id": id,
                    "error": {"code": -32603, "message": why}});
                json_response(status, &answer)
            }
        }
    }

    /// One ToolHive webhook request.
    async fn toolhive(&self, request: Request<RequestBody>) -> Response<Full<Bytes>> {
        let Some(secret) = self.service.config.webhook_secret.clone() else {
            return text(
                StatusCode::NOT_FOUND,
                "the ToolHive webhook is not served: start with --toolhive-secret-file\n",
            );
        };
        let (parts, body) = request.into_parts();
        if let Err(refusal) = self.guard.origins().check(&parts.headers) {
            return refusal.into_response();
        }
        let anonymous = Principal::anonymous();
        let body = match self.guard.read_body(&anonymous, &parts.headers, body).await {
            Ok(body) => body,
            Err(refusal) => return refusal.into_response(),
        };
        let header = |headers: &HeaderMap, name| {
            headers
                .get(name)
                .and_then(|v| v.to_str().ok())
                .map(String::from)
        };
        let signature = header(&parts.headers, webhook::SIGNATURE_HEADER);
        let timestamp = header(&parts.headers, webhook::TIMESTAMP_HEADER);
        if let Err(e) = webhook::verify(
            &secret,
            signature.as_deref(),
            timestamp.as_deref(),
            &body,
            std::time::SystemTime::now(),
        ) {
            tracing::warn!("refused a ToolHive webhook request: {e}");
            return json_response(StatusCode::UNAUTHORIZED, &json!({"error": e.to_string()}));
        }
        let service = self.service.clone();
        let answered = self.decide(move || webhook::decide(&service, &body)).await;
        match answered {
            Ok(Ok(answer)) => json_response(StatusCode::OK, &answer),
            Ok(Err(webhook::WebhookError::BadRequest(why))) => {
                json_response(StatusCode::BAD_REQUEST, &json!({"error": why}))
            }
            Ok(Err(e)) => json_response(
                StatusCode::INTERNAL_SERVER_ERROR,
                &json!({"error": e.to_string()}),
            ),
            Err((status, why)) => json_response(status, &json!({"error": why})),
        }
    }

    /// Run a decision on a blocking thread, within the concurrency and time bounds.
    async fn decide<T: Send + 'static>(
        &self,
        work: impl FnOnce() -> T + Send + 'static,
    ) -> Result<T, (StatusCode, String)> {
        let Ok(_permit) = self.permits.try_acquire() else {
            return Err((
                StatusCode::SERVICE_UNAVAILABLE,
                format!(
                    "the service is making {} decisions already (--max-concurrent); try again",
                    self.service.config.max_concurrent
                ),
            ));
        };
        let within = self.service.config.decision_timeout;
        match tokio::time::timeout(within, tokio::task::spawn_blocking(work)).await {
            Ok(Ok(done)) => Ok(done),
            Ok(Err(e)) => Err((
                StatusCode::INTERNAL_SERVER_ERROR,
                format!("the decision failed: {e}"),
            )),
            Err(_) => Err((
                StatusCode::SERVICE_UNAVAILABLE,
                format!(
                    "no decision within {} s (--decision-timeout): the call is not admitted",
                    within.as_secs_f64()
                ),
            )),
        }
    }
}

fn json_response(status: StatusCode, value: &Value) -> Response<Full<Bytes>> {
    let mut response = Response::new(Full::new(Bytes::from(value.to_string())));
    *response.status_mut() = status;
    response.headers_mut().insert(
        http::header::CONTENT_TYPE,
        http::HeaderValue::from_static("application/json"),
    );
    response
}

fn text(status: StatusCode, body: &'static str) -> Response<Full<Bytes>> {
    let mut response = Response::new(Full::new(Bytes::from_static(body.as_bytes())));
    *response.status_mut() = status;
    response.headers_mut().insert(
        http::header::CONTENT_TYPE,
        http::HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    response
}

fn empty(status: StatusCode) -> Response<Full<Bytes>> {
    let mut response = Response::new(Full::new(Bytes::new()));
    *response.status_mut() = status;
    response
}
