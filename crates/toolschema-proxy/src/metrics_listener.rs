//! The listener of `--metrics ADDR`: `/metrics` (the Prometheus text format), `/healthz` and
//! `/readyz`, apart from the MCP endpoint.
//!
//! It is for loopback by default. On another address it is refused unless clients are
//! authenticated (`--auth-token-file` or `--oauth-issuer`): the figures name the tools and how
//! they are used. There `/metrics` needs a token, checked by a guard of its own configured like
//! the HTTP front's (Host, Origin, tokens); the probes never do, since an orchestrator's probes
//! carry none.

use crate::health::Health;
use crate::metrics::{Metrics, CONTENT_TYPE};
use bytes::Bytes;
use http::{Method, Request, Response, StatusCode};
use http_body_util::Full;
use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;
use toolschema_http::serve::RequestBody;
use toolschema_http::{Guard, GuardConfig};

/// The path of the exposition.
pub const METRICS_PATH: &str = "/metrics";

/// How many connections the listener serves at once (scrapers and probes are few).
const CONNECTIONS: usize = 64;

/// A bound metrics listener, not serving yet.
pub struct MetricsListener {
    listener: tokio::net::TcpListener,
    bound: SocketAddr,
    /// Checks `/metrics` on an address that is not loopback.
    guard: Option<Arc<Guard>>,
    limits: toolschema_http::Limits,
}

impl MetricsListener {
    /// Bind `address`. A non-loopback address is refused unless `guard` authenticates
    /// clients; then `/metrics` there needs a token.
    pub async fn bind(address: &str, guard: &GuardConfig) -> Result<MetricsListener, String> {
        let listener = tokio::net::TcpListener::bind(address)
            .await
            .map_err(|e| format!("--metrics: cannot listen on {address}: {e}"))?;
        let bound = listener
            .local_addr()
            .map_err(|e| format!("--metrics: cannot listen on {address}: {e}"))?;
        let guard = if bound.ip().is_loopback() {
            None
        } else if !guard.auth.is_configured() {
            return Err(format!(
                "--metrics {address} is not a loopback address, and the metrics name the tools and how they are used: give --auth-token-file or --oauth-issuer (a scraper then sends a bearer token), or a loopback address such as 127.0.0.1:9464"
            ));
        } else {
            let mut config = guard.clone();
            config.endpoint_path = METRICS_PATH.to_string();
            // The front's access log is the front's: one writer per file.
            config.access_log = None;
            let started = Guard::start(config, bound)
                .await
                .map_err(|e| format!("--metrics {address}: {e}"))?;
            Some(Arc::new(started))
        };
        Ok(MetricsListener {
            listener,
            bound,
            guard,
            limits: toolschema_http::Limits::default(),
        })
    }

    /// The address bound.
    pub fn local_addr(&self) -> SocketAddr {
        self.bound
    }

    /// Serve until the process ends (on a task of its own).
    pub fn spawn(self, metrics: Arc<Metrics>, health: Arc<Health>) {
        let MetricsListener {
            listener,
            guard,
            limits,
            ..
        } = self;
        let make_service = move || {
            let (metrics, health, guard) = (metrics.clone(), health.clone(), guard.clone());
            hyper::service::service_fn(move |request| {
                let (metrics, health, guard) = (metrics.clone(), health.clone(), guard.clone());
                async move {
                    Ok::<_, Infallible>(answer(request, &metrics, &health, guard.as_deref()).await)
                }
            })
        };
        tokio::spawn(async move {
            let served = toolschema_http::serve::serve(
                listener,
                limits,
                CONNECTIONS,
                make_service,
                std::future::pending(),
            )
            .await;
            drop(served);
        });
    }
}

/// Answer one request to the listener.
async fn answer(
    request: Request<RequestBody>,
    metrics: &Metrics,
    health: &Health,
    guard: Option<&Guard>,
) -> Response<Full<Bytes>> {
    let path = request.uri().path().to_string();
    if request.method() != Method::GET && request.method() != Method::HEAD {
        return plain(StatusCode::METHOD_NOT_ALLOWED, "use GET\n".to_string());
    }
    if let Some((status, text)) = health.answer(&path).await {
        return plain(status, text);
    }
    if path != METRICS_PATH {
        return plain(
            StatusCode::NOT_FOUND,
            "not found: the metrics are at /metrics, the probes at /healthz and /readyz\n"
                .to_string(),
        );
    }
    if let Some(guard) = guard {
        let (parts, _) = request.into_parts();
        if let Err(refusal) = guard.admit(&parts).await {
            metrics.auth_refusal(refusal.kind().code());
            return refusal.into_response();
        }
    }
    let mut response = Response::new(Full::new(Bytes::from(metrics.render())));
    response.headers_mut().insert(
        http::header::CONTENT_TYPE,
        http::HeaderValue::from_static(CONTENT_TYPE),
    );
    response
}

/// A plain-text answer.
fn plain(status: StatusCode, text: String) -> Response<Full<Bytes>> {
    let mut response = Response::new(Full::new(Bytes::from(text)));
    *response.status_mut() = status;
    response.headers_mut().insert(
        http::header::CONTENT_TYPE,
        http::HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    response
}
