//! toolschema-mcp: the MCP runtime of toolschema, the only part of it that talks to live servers.
//!
//! - [`snapshot`]: start a server (or reach one over Streamable HTTP), initialize, list every tool
//!   following `nextCursor`, and keep the tools exactly as the server sent them.
//! - [`fuzz`]: call every tool with valid and invalid arguments made from its schema, and
//!   report crashes, hangs, protocol violations, internal errors, invalid arguments accepted,
//!   results that break `outputSchema`, leaks and valid arguments refused.
//! - [`call`]: one `tools/call` by hand, after the listing, with its answer as sent.
//! - [`server_process`]: a server started as a child process, in a process group of its own,
//!   stopped with the group.
//!
//! The validating proxy is in crates of its own: its decisions in toolschema-gate, its
//! transports in toolschema-proxy (which uses [`server_process`] and [`framing`]).
//!
//! Built on rmcp, the official Rust SDK, where its model fits: the snapshot's session (handshake,
//! pings, Streamable HTTP) runs on rmcp.
//! Where a message must survive byte for byte (forwarded messages, listed tools), the runtime keeps
//! the raw JSON ([`framing`], [`message`]).
//!
//! The runtime never prints: what its user should know (a skipped message, a server that died)
//! is reported through `tracing` at `WARN`, and the binary decides what reaches the terminal.
//!
//! The runtime is async on tokio ([`runtime`] builds the single-threaded runtime the `toolschema`
//! command uses).

pub mod call;
pub mod connection;
pub mod framing;
pub mod fuzz;
pub mod server_process;
pub mod snapshot;

pub use server_process::ServerCommand;
/// The messages, read and written, are the gate's (toolschema-gate): one home for both the proxy
/// and the rest of the runtime.
pub use toolschema_gate::message;

/// The async runtime the `toolschema` command runs on.
pub type Runtime = tokio::runtime::Runtime;

/// A single-threaded tokio runtime with what the runtime needs (I/O, timers, processes,
/// signals).
pub fn runtime() -> std::io::Result<Runtime> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
}
