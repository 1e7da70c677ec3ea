//! toolschema-gate: the decisions of toolschema's MCP proxy, apart from any transport.
//!
//! A [`Gate`] sees the messages of one session as they arrive from either side, and the passing
//! of time; it answers each with [`Action`]s: a message to write to the server or to the
//! client, an audit record to append. Around it live what it decides with: the tools it learned
//! ([`registry`](ToolPolicy)), the policies ([`ToolPolicy`], [`HolderPolicy`], [`ToolScopes`]),
//! the overrides ([`ToolOverrides`]), the pins ([`Pins`]), the audit records ([`AuditRecord`]),
//! and the messages themselves ([`message`], [`framing`]).
//!
//! The crate depends on no async runtime and no HTTP stack: it does no I/O and never waits. The
//! transports (the stdio relay, the Streamable HTTP front and upstream, the audit file) are in
//! toolschema-proxy, which drives one gate per session.

mod audit;
pub mod framing;
mod gate;
pub mod message;
mod modes;
mod overrides;
mod policy;
mod registry;
pub mod scopes;
pub mod servers;

pub use audit::{AuditFormat, AuditRecord, InputVerdict, Operation, OutputVerdict, Verdict};
pub use gate::{
    in_flight_already, report, Action, Admission, Admitted, Gate, GateConfig, PinMode, Pins,
    ServerChecks, DEFAULT_LISTING_RETRY, DEFAULT_LISTING_TIMEOUT,
};
pub use modes::{InputCheck, OnUnchecked, OutputCheck, UnknownArguments, Unlisted};
pub use overrides::{ToolOverride, ToolOverrides};
pub use policy::{Glob, HolderPolicy, ToolPolicy};
pub use scopes::ToolScopes;
