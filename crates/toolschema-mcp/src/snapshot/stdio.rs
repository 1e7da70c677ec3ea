//! An rmcp client transport over a child process's stdin and stdout that keeps raw results.
//!
//! rmcp's own stdio transport reads straight into typed messages (and drops notifications whose
//! method it does not know); this one reads each line with the size-limited framing, keeps the raw
//! result ([`super::raw`]), and hands rmcp the typed message.

use super::raw::{self, RawResults};
use crate::framing::{trim_line, Frame, LineReader};
use rmcp::service::{RoleClient, RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use std::future::Future;
use std::sync::Arc;
use tokio::io::{AsyncWriteExt, BufReader};
use tokio::process::{ChildStdin, ChildStdout};
use tokio::sync::Mutex;

/// The transport; closing it closes the server's stdin.
pub struct RawStdioTransport {
    reader: LineReader<BufReader<ChildStdout>>,
    writer: Arc<Mutex<Option<ChildStdin>>>,
    results: RawResults,
}

impl RawStdioTransport {
    /// A transport over a server's pipes, refusing messages over `max_message_bytes`.
    pub fn new(
        stdin: ChildStdin,
        stdout: ChildStdout,
        results: RawResults,
        max_message_bytes: usize,
    ) -> Self {
        RawStdioTransport {
            reader: LineReader::new(BufReader::new(stdout), max_message_bytes),
            writer: Arc::new(Mutex::new(Some(stdin))),
            results,
        }
    }
}

impl Transport<RoleClient> for RawStdioTransport {
    type Error = std::io::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleClient>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let writer = self.writer.clone();
        async move {
            let mut line = serde_json::to_vec(&item)?;
            line.push(b'\n');
            let mut writer = writer.lock().await;
            let stdin = writer.as_mut().ok_or_else(|| {
                std::io::Error::new(
                    std::io::ErrorKind::NotConnected,
                    "the server's stdin is closed",
                )
            })?;
            stdin.write_all(&line).await?;
            stdin.flush().await
        }
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleClient>> {
        loop {
            match self.reader.next().await {
                Ok(Some(Frame::Line(line))) => {
                    match raw::receive(trim_line(&line), &self.results) {
                        Ok(message) => return Some(message),
                        Err(e) => tracing::warn!("{e}"),
                    }
                }
                Ok(Some(Frame::Oversized(over))) => tracing::warn!(
                    "the server sent a message of {} bytes, over the limit; skipped",
                    over.length
                ),
                Ok(None) | Err(_) => return None,
            }
        }
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        self.writer.lock().await.take();
        Ok(())
    }
}
