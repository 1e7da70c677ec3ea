//! What the libraries report through `tracing` reaches standard error here, one line per event:
//! `toolschema proxy: MESSAGE` for the proxy, `toolschema: MESSAGE` for the rest of the runtime.
//! Events of other crates (rmcp's own logging among them) are not shown.

use std::fmt::{self, Write as _};
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::{Event, Level, Metadata, Subscriber};

/// Send the project's warnings and errors to standard error for the rest of the process.
pub fn init() {
    // Fails only when a subscriber is already set, which then keeps its place.
    let _ = tracing::subscriber::set_global_default(StderrLines);
}

/// The subscriber: no spans, only events of the project's crates at `WARN` and above.
struct StderrLines;

impl StderrLines {
    fn prefix(target: &str) -> &'static str {
        if target.starts_with("toolschema_mcp::proxy") {
            "toolschema proxy"
        } else {
            "toolschema"
        }
    }
}

impl Subscriber for StderrLines {
    fn enabled(&self, metadata: &Metadata<'_>) -> bool {
        metadata.target().starts_with("toolschema") && *metadata.level() <= Level::WARN
    }

    fn new_span(&self, _: &Attributes<'_>) -> Id {
        Id::from_u64(1)
    }

    fn record(&self, _: &Id, _: &Record<'_>) {}

    fn record_follows_from(&self, _: &Id, _: &Id) {}

    fn event(&self, event: &Event<'_>) {
        let mut line = String::from(Self::prefix(event.metadata().target()));
        line.push_str(": ");
        event.record(&mut Message(&mut line));
        line.push('\n');
        // One write per line, so lines from several threads never interleave.
        let _ = std::io::Write::write_all(&mut std::io::stderr().lock(), line.as_bytes());
    }

    fn enter(&self, _: &Id) {}

    fn exit(&self, _: &Id) {}
}

/// Writes an event's message, then its other fields as `name=value`.
struct Message<'a>(&'a mut String);

impl Visit for Message<'_> {
    fn record_str(&mut self, field: &Field, value: &str) {
        if field.name() == "message" {
            self.0.push_str(value);
        } else {
            let _ = write!(self.0, " {}={value}", field.name());
        }
    }

    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        if field.name() == "message" {
            let _ = write!(self.0, "{value:?}");
        } else {
            let _ = write!(self.0, " {}={value:?}", field.name());
        }
    }
}
