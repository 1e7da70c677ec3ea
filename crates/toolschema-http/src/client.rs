//! The one HTTP client of toolschema: HTTP/1.1 on hyper, `https` through rustls with the ring
//! provider and Mozilla's root certificates (no aws-lc build, no system OpenSSL).
//!
//! `snapshot --url` drives MCP sessions through it, and the guard fetches an OAuth issuer's
//! metadata and keys with it: [`HttpClient`] opens one connection per request, since neither
//! makes many. The proxy sends every message of many sessions to one upstream: its
//! [`PooledClient`] keeps connections open between requests (hyper's connection pool) and makes
//! them with the same TCP and TLS set-up.

use bytes::Bytes;
use http::header::HOST;
use http::{HeaderValue, Request, Response, StatusCode, Uri};
use http_body_util::{BodyExt, Full, Limited};
use hyper::body::Incoming;
use hyper_util::rt::TokioIo;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, OnceLock};
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;
use tokio_rustls::rustls;

/// Why an HTTP exchange failed.
#[derive(Debug, thiserror::Error)]
pub enum HttpError {
    /// The URL cannot be used.
    #[error("{0}")]
    Url(String),
    /// The server cannot be reached (connection or TLS handshake).
    #[error("{0}")]
    Connect(String),
    /// The HTTP exchange failed.
    #[error("HTTP error: {0}")]
    Hyper(#[from] hyper::Error),
    /// A request could not be built.
    #[error("invalid request: {0}")]
    Request(#[from] http::Error),
    /// The TLS setup failed.
    #[error("TLS error: {0}")]
    Tls(#[from] rustls::Error),
    /// A response body was larger than allowed.
    #[error("the response body is larger than {0} bytes")]
    TooLarge(usize),
    /// The server answered with a failure status.
    #[error("{url} answered HTTP {status}")]
    Status {
        /// The URL asked for.
        url: String,
        /// Its answer.
        status: StatusCode,
    },
    /// The body is not what was asked for (JSON that does not parse, say).
    #[error("{0}")]
    Body(String),
    /// The exchange took longer than allowed.
    #[error("{url} did not answer within {seconds} s")]
    Timeout {
        /// The URL asked for.
        url: String,
        /// The time allowed.
        seconds: u64,
    },
}

/// An HTTP and HTTPS client; clones share the TLS configuration.
#[derive(Clone, Default)]
pub struct HttpClient {
    tls: Arc<OnceLock<Arc<rustls::ClientConfig>>>,
}

impl HttpClient {
    /// A client; the TLS configuration is built on the first `https` request.
    pub fn new() -> Self {
        Self::default()
    }

    fn tls_config(&self) -> Result<Arc<rustls::ClientConfig>, HttpError> {
        if let Some(config) = self.tls.get() {
            return Ok(config.clone());
        }
        let roots =
            rustls::RootCertStore::from_iter(webpki_roots::TLS_SERVER_ROOTS.iter().cloned());
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let config = rustls::ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()?
            .with_root_certificates(roots)
            .with_no_client_auth();
        Ok(self.tls.get_or_init(|| Arc::new(config)).clone())
    }

    /// Open a connection (TCP, and TLS for `https`) to the host of `uri`.
    async fn connect(&self, uri: &Uri) -> Result<Stream, HttpError> {
        let https = match uri.scheme_str() {
            Some("http") => false,
            Some("https") => true,
            _ => {
                return Err(HttpError::Url(format!(
                    "'{uri}' is not an http:// or https:// URL"
                )))
            }
        };
        let host = uri
            .host()
            .ok_or_else(|| HttpError::Url(format!("'{uri}' has no host")))?;
        let host = host
            .trim_start_matches('[')
            .trim_end_matches(']')
            .to_string();
        let port = uri.port_u16().unwrap_or(if https { 443 } else { 80 });
        let authority = uri
            .authority()
            .map(|a| a.as_str().to_string())
            .unwrap_or_default();
        let tcp = TcpStream::connect((host.as_str(), port))
            .await
            .map_err(|e| HttpError::Connect(format!("cannot connect to {authority}: {e}")))?;
        // Messages are small and latency matters more than packet count.
        let _ = tcp.set_nodelay(true);
        if !https {
            return Ok(Stream::Plain(tcp));
        }
        let name = rustls::pki_types::ServerName::try_from(host.clone())
            .map_err(|e| HttpError::Url(format!("'{host}': {e}")))?;
        let connector = tokio_rustls::TlsConnector::from(self.tls_config()?);
        let tls = connector.connect(name, tcp).await.map_err(|e| {
            HttpError::Connect(format!("TLS handshake with {authority} failed: {e}"))
        })?;
        Ok(Stream::Tls(Box::new(tls)))
    }

    /// Send one request, with an absolute `http://` or `https://` URI, on a new connection.
    pub async fn send(
        &self,
        request: Request<Full<Bytes>>,
    ) -> Result<Response<Incoming>, HttpError> {
        let uri = request.uri().clone();
        let stream = self.connect(&uri).await?;
        let (mut parts, body) = request.into_parts();
        // HTTP/1.1 requests name their target by path; the host goes in the Host header.
        let authority = uri
            .authority()
            .map(|a| a.as_str().to_string())
            .unwrap_or_default();
        let path = uri.path_and_query().map_or("/", |p| p.as_str());
        parts.uri = path
            .parse::<Uri>()
            .map_err(|e| HttpError::Url(format!("'{uri}': {e}")))?;
        parts.headers.insert(
            HOST,
            HeaderValue::from_str(&authority).map_err(|e| HttpError::Url(e.to_string()))?,
        );
        let request = Request::from_parts(parts, body);
        exchange(stream, request).await
    }

    /// GET `url` and read its JSON body: a success status, at most `limit` bytes, all within
    /// `timeout`.
    pub async fn get_json(
        &self,
        url: &str,
        limit: usize,
        timeout: Duration,
    ) -> Result<serde_json::Value, HttpError> {
        let exchange = async {
            let request = Request::get(url)
                .header(http::header::ACCEPT, "application/json")
                .body(Full::new(Bytes::new()))?;
            let response = self.send(request).await?;
            let status = response.status();
            if !status.is_success() {
                return Err(HttpError::Status {
                    url: url.to_string(),
                    status,
                });
            }
            read_body(response.into_body(), limit).await
        };
        let body = tokio::time::timeout(timeout, exchange)
            .await
            .map_err(|_| HttpError::Timeout {
                url: url.to_string(),
                seconds: timeout.as_secs(),
            })??;
        serde_json::from_slice(&body)
            .map_err(|e| HttpError::Body(format!("{url} did not answer with JSON: {e}")))
    }
}

/// A whole body, refused past `limit` bytes.
pub async fn read_body(body: Incoming, limit: usize) -> Result<Bytes, HttpError> {
    Limited::new(body, limit)
        .collect()
        .await
        .map(|collected| collected.to_bytes())
        .map_err(|e| {
            if e.is::<http_body_util::LengthLimitError>() {
                HttpError::TooLarge(limit)
            } else {
                HttpError::Connect(format!("the response body broke off: {e}"))
            }
        })
}

async fn exchange<T>(io: T, request: Request<Full<Bytes>>) -> Result<Response<Incoming>, HttpError>
where
    T: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let (mut sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(io)).await?;
    tokio::spawn(async move {
        // The connection ends with its response; an error there shows up on the response body.
        let _ = connection.await;
    });
    Ok(sender.send_request(request).await?)
}

/// A connection: plain TCP, or TLS over it.
enum Stream {
    Plain(TcpStream),
    Tls(Box<tokio_rustls::client::TlsStream<TcpStream>>),
}

impl AsyncRead for Stream {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        match self.get_mut() {
            Stream::Plain(tcp) => Pin::new(tcp).poll_read(cx, buf),
            Stream::Tls(tls) => Pin::new(tls.as_mut()).poll_read(cx, buf),
        }
    }
}

impl AsyncWrite for Stream {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        match self.get_mut() {
            Stream::Plain(tcp) => Pin::new(tcp).poll_write(cx, buf),
            Stream::Tls(tls) => Pin::new(tls.as_mut()).poll_write(cx, buf),
        }
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        match self.get_mut() {
            Stream::Plain(tcp) => Pin::new(tcp).poll_flush(cx),
            Stream::Tls(tls) => Pin::new(tls.as_mut()).poll_flush(cx),
        }
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        match self.get_mut() {
            Stream::Plain(tcp) => Pin::new(tcp).poll_shutdown(cx),
            Stream::Tls(tls) => Pin::new(tls.as_mut()).poll_shutdown(cx),
        }
    }
}

impl hyper_util::client::legacy::connect::Connection for Stream {
    fn connected(&self) -> hyper_util::client::legacy::connect::Connected {
        hyper_util::client::legacy::connect::Connected::new()
    }
}

/// Makes the pool's connections the way [`HttpClient`] makes its own.
#[derive(Clone)]
struct Connector(HttpClient);

impl tower_service::Service<Uri> for Connector {
    type Response = TokioIo<Stream>;
    type Error = HttpError;
    type Future = Pin<Box<dyn Future<Output = Result<Self::Response, HttpError>> + Send>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), HttpError>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, uri: Uri) -> Self::Future {
        let client = self.0.clone();
        Box::pin(async move { client.connect(&uri).await.map(TokioIo::new) })
    }
}

/// An HTTP and HTTPS client that keeps connections open between requests; clones share the
/// pool.
#[derive(Clone)]
pub struct PooledClient {
    inner: hyper_util::client::legacy::Client<Connector, Full<Bytes>>,
}

impl PooledClient {
    /// A client whose idle connections are closed after `idle`, at most `max_idle` of them per
    /// host.
    pub fn new(idle: Duration, max_idle: usize) -> Self {
        let inner =
            hyper_util::client::legacy::Client::builder(hyper_util::rt::TokioExecutor::new())
                .pool_timer(hyper_util::rt::TokioTimer::new())
                .pool_idle_timeout(idle)
                .pool_max_idle_per_host(max_idle)
                .build(Connector(HttpClient::new()));
        PooledClient { inner }
    }

    /// Send one request, with an absolute `http://` or `https://` URI, on a pooled connection.
    pub async fn send(
        &self,
        request: Request<Full<Bytes>>,
    ) -> Result<Response<Incoming>, HttpError> {
        self.inner.request(request).await.map_err(|e| {
            // The connector's own error says best what went wrong.
            let mut source: Option<&(dyn std::error::Error + 'static)> = Some(&e);
            while let Some(error) = source {
                if let Some(http) = error.downcast_ref::<HttpError>() {
                    return HttpError::Connect(http.to_string());
                }
                source = error.source();
            }
            HttpError::Connect(format!("the HTTP exchange failed: {e}"))
        })
    }
}
