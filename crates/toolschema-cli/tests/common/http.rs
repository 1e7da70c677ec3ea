//! Pieces of the tests that drive HTTP: a proxy listening on a port of its choosing, servers
//! started on a free port, plain HTTP/1.1 requests over a socket (so that a test can do what no
//! SDK client would: send oversized bodies, wrong tokens, go away mid-stream).
#![allow(dead_code)]

use super::{require, toolschema, Session, WAIT};
use serde_json::Value;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::thread;
use std::time::{Duration, Instant};

/// `toolschema proxy --listen 127.0.0.1:0 ARGS`, with the URL it serves at.
pub struct Listening {
    /// The process (its stderr collected).
    pub process: Session,
    /// `http://127.0.0.1:PORT/mcp`.
    pub url: String,
}

impl Listening {
    /// Start the proxy; `args` follow `--listen 127.0.0.1:0` (a server command after `--`).
    pub fn start(args: &[String]) -> Listening {
        Listening::start_in(None, args)
    }

    /// Start the proxy in directory `dir` (where it finds `toolschema.toml`).
    pub fn start_in(dir: Option<&Path>, args: &[String]) -> Listening {
        let mut all: Vec<String> = vec!["proxy".into(), "--listen".into(), "127.0.0.1:0".into()];
        all.extend(args.iter().cloned());
        let process = match dir {
            Some(dir) => Session::start_in(dir, toolschema(), &all),
            None => Session::start(toolschema(), &all),
        };
        Listening::once_listening(process)
    }

    /// Start the proxy as the command that `wrapper` (a program and its first arguments) runs.
    #[allow(dead_code)] // not every test binary starts one this way
    pub fn start_under(wrapper: &[&str], args: &[String]) -> Listening {
        let mut all: Vec<String> = wrapper[1..].iter().map(|a| a.to_string()).collect();
        all.extend([toolschema(), "proxy", "--listen", "127.0.0.1:0"].map(String::from));
        all.extend(args.iter().cloned());
        Listening::once_listening(Session::start(wrapper[0], &all))
    }

    /// Wait until `process` says where it serves.
    fn once_listening(process: Session) -> Listening {
        let start = Instant::now();
        loop {
            let stderr = process.stderr();
            if let Some(rest) = stderr.split("serving MCP at ").nth(1) {
                if let Some((url, _)) = rest.split_once('\n') {
                    return Listening {
                        url: url.trim().to_string(),
                        process,
                    };
                }
            }
            if start.elapsed() > WAIT {
                panic!("the proxy did not start listening; stderr:\n{stderr}");
            }
            thread::sleep(Duration::from_millis(20));
        }
    }

    /// Stop it with SIGTERM and wait; its stderr.
    pub fn stop(mut self) -> String {
        let _ = Command::new("kill")
            .arg("-TERM")
            .arg(self.process.pid().to_string())
            .status();
        let (status, stderr) = self.process.wait();
        assert!(status.success(), "the proxy exited with {status}: {stderr}");
        stderr
    }
}

/// A port nothing listens on now, for a server that is told its port.
///
/// The ports come from below Linux's ephemeral range (32768 and up by default), each at most
/// once per test process: a proxy started on `127.0.0.1:0` by a test running in parallel gets
/// an ephemeral port, so it cannot take this one between this check and the server's bind.
pub fn free_port() -> u16 {
    use std::sync::atomic::{AtomicU16, Ordering};
    const FIRST: u16 = 20_000;
    const SPAN: u16 = 12_000;
    // Test binaries run one after another, but a server of the last one may linger a moment:
    // each process starts at its own place in the span.
    static NEXT: AtomicU16 = AtomicU16::new(0);
    let start = (std::process::id() % u32::from(SPAN)) as u16;
    for _ in 0..SPAN {
        let offset = (start + NEXT.fetch_add(1, Ordering::Relaxed)) % SPAN;
        let port = FIRST + offset;
        if TcpListener::bind(("127.0.0.1", port)).is_ok() {
            return port;
        }
    }
    panic!("no free port between {FIRST} and {}", FIRST + SPAN);
}

/// A server started on a port of its own, killed on drop.
pub struct HttpServer {
    child: Child,
    /// Its MCP endpoint.
    pub url: String,
}

impl HttpServer {
    /// Start `program args` with `PORT` in its environment and wait until the port answers.
    pub fn start(program: &str, args: &[String], port: u16) -> HttpServer {
        let mut child = Command::new(program)
            .args(args)
            .env("PORT", port.to_string())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {program}: {e}"));
        let start = Instant::now();
        while TcpStream::connect(("127.0.0.1", port)).is_err() {
            // A server that could not bind exits: never mistake another listener for it.
            if let Ok(Some(status)) = child.try_wait() {
                panic!("{program} {args:?} exited ({status}) before it listened on port {port}");
            }
            if start.elapsed() > WAIT * 2 {
                panic!("{program} {args:?} did not listen on port {port}");
            }
            thread::sleep(Duration::from_millis(50));
        }
        HttpServer {
            child,
            url: format!("http://127.0.0.1:{port}/mcp"),
        }
    }

    /// server-everything in its Streamable HTTP mode.
    pub fn everything() -> HttpServer {
        let bin = require("interop/node_modules/.bin/mcp-server-everything");
        HttpServer::start(
            &bin.display().to_string(),
            &["streamableHttp".to_string()],
            free_port(),
        )
    }

    /// interop/py-server.py over Streamable HTTP, recording into `record`.
    pub fn python(record: &Path) -> HttpServer {
        let port = free_port();
        HttpServer::start(
            &python(),
            &[
                require("interop/py-server.py").display().to_string(),
                "--record".into(),
                record.display().to_string(),
                "http".into(),
                port.to_string(),
            ],
            port,
        )
    }

    /// interop/http-upstream.mjs (event ids, a broken stream, a huge event, a call that never
    /// ends), recording every HTTP request into `record`.
    pub fn scripted(record: &Path) -> HttpServer {
        HttpServer::start(
            &super::node(),
            &[
                require("interop/http-upstream.mjs").display().to_string(),
                "--record".into(),
                record.display().to_string(),
            ],
            free_port(),
        )
    }

    /// Kill it now.
    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        self.kill();
    }
}

/// The Python of the test environment.
pub fn python() -> String {
    require(".venv/bin/python").display().to_string()
}

/// The command that starts interop/py-server.py over stdio, recording into `record`.
pub fn python_server(record: &Path) -> Vec<String> {
    vec![
        python(),
        require("interop/py-server.py").display().to_string(),
        "--record".into(),
        record.display().to_string(),
        "stdio".into(),
    ]
}

/// Run a client script to completion and parse what it printed.
pub fn client(program: &str, args: &[String]) -> Value {
    let (status, stdout, stderr) = super::run(program, args, Duration::from_secs(90));
    assert!(
        status.success(),
        "{program} {args:?} failed: {stderr}\n{stdout}"
    );
    serde_json::from_str(stdout.trim()).unwrap_or_else(|e| panic!("not JSON ({e}): {stdout}"))
}

/// The TypeScript SDK client (interop/http-client.mjs) with `args`.
pub fn ts_client(args: &[&str]) -> Value {
    let mut all = vec![require("interop/http-client.mjs").display().to_string()];
    all.extend(args.iter().map(|s| s.to_string()));
    client(&super::node(), &all)
}

/// The Python SDK client (interop/py-http-client.py) with `args`.
pub fn py_client(args: &[&str]) -> Value {
    let mut all = vec![require("interop/py-http-client.py").display().to_string()];
    all.extend(args.iter().map(|s| s.to_string()));
    client(&python(), &all)
}

/// An HTTP answer.
#[derive(Debug)]
pub struct Reply {
    /// Its status.
    pub status: u16,
    /// Its headers, names in lower case.
    pub headers: Vec<(String, String)>,
    /// Its body (de-chunked).
    pub body: String,
}

impl Reply {
    /// A header's value.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    /// The JSON-RPC messages of the body: the JSON document, or each event's data.
    pub fn messages(&self) -> Vec<Value> {
        if self
            .header("content-type")
            .is_some_and(|t| t.starts_with("text/event-stream"))
        {
            self.body
                .lines()
                .filter_map(|line| line.strip_prefix("data: "))
                .filter_map(|data| serde_json::from_str(data).ok())
                .collect()
        } else {
            serde_json::from_str(&self.body).into_iter().collect()
        }
    }

    /// The JSON body.
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.body).unwrap_or_else(|e| panic!("not JSON ({e}): {self:?}"))
    }
}

/// Send one request (`Connection: close`) and read the whole answer.
pub fn request(method: &str, url: &str, headers: &[(&str, &str)], body: &str) -> Reply {
    let mut stream = open(method, url, headers, body);
    read_reply(&mut stream)
}

/// Send one request and return the socket, to read from it (or close it) as the test needs.
pub fn open(method: &str, url: &str, headers: &[(&str, &str)], body: &str) -> TcpStream {
    let rest = url.strip_prefix("http://").expect("an http:// URL");
    let (authority, path) = rest.split_once('/').unwrap_or((rest, ""));
    let mut stream = TcpStream::connect(authority).unwrap();
    stream.set_read_timeout(Some(WAIT * 2)).unwrap();
    let mut head =
        format!("{method} /{path} HTTP/1.1\r\nHost: {authority}\r\nConnection: close\r\n");
    let length = body.len().to_string();
    // A test may declare a length its body does not have (a body that never arrives).
    let defaults = [
        ("content-length", length.as_str()),
        ("content-type", "application/json"),
        ("accept", "application/json, text/event-stream"),
    ];
    for (name, value) in defaults {
        if !headers.iter().any(|(n, _)| n.eq_ignore_ascii_case(name)) {
            head.push_str(&format!("{name}: {value}\r\n"));
        }
    }
    for (name, value) in headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str("\r\n");
    stream.write_all(head.as_bytes()).unwrap();
    stream.write_all(body.as_bytes()).unwrap();
    stream
}

/// Read an answer to its end.
pub fn read_reply(stream: &mut TcpStream) -> Reply {
    let mut reader = BufReader::new(stream);
    let mut status_line = String::new();
    reader.read_line(&mut status_line).unwrap();
    let status = status_line
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("not an HTTP answer: {status_line:?}"));
    let mut headers = Vec::new();
    loop {
        let mut line = String::new();
        reader.read_line(&mut line).unwrap();
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        if let Some((name, value)) = line.split_once(':') {
            headers.push((name.trim().to_ascii_lowercase(), value.trim().to_string()));
        }
    }
    let chunked = headers
        .iter()
        .any(|(n, v)| n == "transfer-encoding" && v.contains("chunked"));
    let mut raw = Vec::new();
    let _ = reader.read_to_end(&mut raw);
    let body = if chunked { dechunk(&raw) } else { raw };
    Reply {
        status,
        headers,
        body: String::from_utf8_lossy(&body).into_owned(),
    }
}

fn dechunk(mut raw: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    loop {
        let Some(end) = raw.windows(2).position(|w| w == b"\r\n") else {
            return out;
        };
        let size = std::str::from_utf8(&raw[..end])
            .ok()
            .and_then(|s| usize::from_str_radix(s.split(';').next().unwrap_or("").trim(), 16).ok())
            .unwrap_or(0);
        raw = &raw[end + 2..];
        if size == 0 || raw.len() < size {
            out.extend_from_slice(&raw[..size.min(raw.len())]);
            return out;
        }
        out.extend_from_slice(&raw[..size]);
        raw = raw.get(size + 2..).unwrap_or_default();
    }
}

/// A 2025-11-25 session opened by hand: its id.
pub fn initialize(url: &str, extra: &[(&str, &str)]) -> String {
    let reply = request(
        "POST",
        url,
        extra,
        r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"test","version":"1"}}}"#,
    );
    assert_eq!(reply.status, 200, "{reply:?}");
    let id = reply
        .header("mcp-session-id")
        .expect("a session id")
        .to_string();
    let mut headers: Vec<(&str, &str)> = extra.to_vec();
    headers.push(("mcp-session-id", &id));
    headers.push(("mcp-protocol-version", "2025-11-25"));
    let ack = request(
        "POST",
        url,
        &headers,
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
    );
    assert_eq!(ack.status, 202, "{ack:?}");
    id
}

/// Post `body` in session `id`.
pub fn post(url: &str, id: &str, extra: &[(&str, &str)], body: &str) -> Reply {
    let mut headers: Vec<(&str, &str)> = extra.to_vec();
    headers.push(("mcp-session-id", id));
    headers.push(("mcp-protocol-version", "2025-11-25"));
    request("POST", url, &headers, body)
}

/// `tools/list` (request id `request`) in session `id`: the answer.
pub fn list_tools(url: &str, id: &str, request: u64) -> Reply {
    let body = format!(r#"{{"jsonrpc":"2.0","id":{request},"method":"tools/list"}}"#);
    post(url, id, &[], &body)
}

/// The path of a file in `dir`.
pub fn file(dir: &Path, name: &str) -> PathBuf {
    dir.join(name)
}

/// Wait until `check` holds, up to `limit`.
pub fn eventually(limit: Duration, mut check: impl FnMut() -> bool) -> bool {
    let start = Instant::now();
    while start.elapsed() < limit {
        if check() {
            return true;
        }
        thread::sleep(Duration::from_millis(50));
    }
    check()
}

/// Read what is there (for a stream the test reads part of).
pub fn read_some(stream: &mut TcpStream, wait: Duration) -> String {
    stream.set_read_timeout(Some(wait)).unwrap();
    let mut buffer = vec![0u8; 65536];
    match stream.read(&mut buffer) {
        Ok(n) => String::from_utf8_lossy(&buffer[..n]).into_owned(),
        Err(_) => String::new(),
    }
}

/// Read until the other side closes, or `wait` passes without a byte.
pub fn read_reply_rest(stream: &mut TcpStream, wait: Duration) -> String {
    stream.set_read_timeout(Some(wait)).unwrap();
    let mut out = Vec::new();
    let mut buffer = vec![0u8; 65536];
    while let Ok(n) = stream.read(&mut buffer) {
        if n == 0 {
            break;
        }
        out.extend_from_slice(&buffer[..n]);
    }
    String::from_utf8_lossy(&out).into_owned()
}
