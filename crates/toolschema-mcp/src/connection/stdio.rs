//! An rmcp client transport over a child process's stdin and stdout that keeps raw results.
//!
//! rmcp's own stdio transport reads straight into typed messages (and drops notifications whose
//! method it does not know); this one reads each line with the size-limited framing, keeps the raw
//! result and notes what is out of place ([`super::raw`]), and hands rmcp the typed message.

use super::raw::{RawResults, Received, Watch};
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
    watch: Watch,
    max_message_bytes: usize,
}

impl RawStdioTransport {
    /// A transport over a server's pipes, refusing messages over `max_message_bytes`.
    pub fn new(
        stdin: ChildStdin,
        stdout: ChildStdout,
        results: RawResults,
        watch: Watch,
        max_message_bytes: usize,
    ) -> Self {
        RawStdioTransport {
            reader: LineReader::new(BufReader::new(stdout), max_message_bytes),
            writer: Arc::new(Mutex::new(Some(stdin))),
            results,
            watch,
            max_message_bytes,
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
        let watch = self.watch.clone();
        async move {
            let mut line = serde_json::to_vec(&item)?;
            watch.sent(&line);
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
            let incoming = match self.reader.next().await {
                Ok(Some(Frame::Line(line))) => self.watch.receive(trim_line(&line), &self.results),
                Ok(Some(Frame::Oversized(over))) => {
                    let limit = self.max_message_bytes;
                    self.watch
                        .oversized(over.length, limit, &over.head, &over.tail)
                }
                Ok(None) | Err(_) => return None,
            };
            if let Received::Deliver(message) = incoming {
                return Some(*message);
            }
        }
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        self.writer.lock().await.take();
        Ok(())
    }
}
