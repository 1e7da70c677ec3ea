//! The interceptor server over stdio: one JSON-RPC message a line in, one answer a line out,
//! until stdin ends. A line longer than the largest message is refused without being kept.

use super::{interceptors, Service};
use serde_json::{json, Value};
use std::io::{BufRead, Write};
use toolschema_mcp::framing::{Frame, LineReader};

/// Serve `service` on `input` and `output` until `input` ends; lines past `max_line` bytes
/// are answered with an error.
pub fn run(
    service: &Service,
    input: impl BufRead,
    mut output: impl Write,
    max_line: usize,
) -> std::io::Result<()> {
    let mut reader = LineReader::new(input, max_line);
    loop {
        let answer = match reader.next_blocking()? {
            None => return Ok(()),
            Some(Frame::Line(line)) if line.iter().all(u8::is_ascii_whitespace) => continue,
            Some(Frame::Line(line)) => match serde_json::from_slice::<Value>(&line) {
                Ok(message) => interceptors::handle(service, &message),
                Err(e) => Some(error(-32700, &format!("the line is not JSON: {e}"))),
            },
            Some(Frame::Oversized(_)) => Some(error(
                -32600,
                &format!("the message is longer than {max_line} bytes"),
            )),
        };
        if let Some(answer) = answer {
            let mut line = answer.to_string();
            line.push('\n');
            output.write_all(line.as_bytes())?;
            output.flush()?;
        }
    }
}

fn error(code: i64, message: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": null, "error": {"code": code, "message": message}})
}

/// Serve `service` on the process's stdin and stdout until stdin ends, reading them on a
/// blocking thread so that the runtime goes on running what else it has (the catalogs'
/// reloads).
pub async fn serve(service: std::sync::Arc<Service>, max_line: usize) -> std::io::Result<()> {
    tokio::task::spawn_blocking(move || {
        let stdin = std::io::stdin().lock();
        let stdout = std::io::stdout().lock();
        run(&service, stdin, stdout, max_line)
    })
    .await
    .map_err(std::io::Error::other)?
}
