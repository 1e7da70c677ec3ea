//! What the libraries report through `tracing` reaches standard error here, one line per event:
//! `toolschema proxy: MESSAGE` for the proxy, `toolschema: MESSAGE` for the rest, then the
//! event's other fields as `name=value`.
//!
//! The binary decides what is shown, with one `tracing-subscriber` set-up: warnings and errors
//! of the project's crates always; and, while serving over HTTP, what the guard of
//! toolschema-http and the HTTP side of the proxy say at `INFO` (each call with its client's
//! name, each refusal and why, sessions closed). Events of other crates (rmcp's own logging
//! among them) are not shown.
//!
//! `proxy --log-format json` writes the same events as one JSON object a line (`time`,
//! `level`, `target`, `message`, the event's fields), with the `trace_id` of the request the
//! proxy was handling when there is one (the proxy's `tracing` span of a traced request).

use crate::output::{Escapes, TerminalSafe};
use serde_json::{json, Map, Value};
use std::fmt::{self, Write as _};
use std::sync::OnceLock;
use toolschema_http::access_log::now;
pub use toolschema_proxy::flags::LogFormat;
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id};
use tracing::{Event, Subscriber};
use tracing_subscriber::filter::{LevelFilter, Targets};
use tracing_subscriber::fmt::format::Writer;
use tracing_subscriber::fmt::{FmtContext, FormatEvent, FormatFields};
use tracing_subscriber::layer::{Context, Layer, SubscriberExt};
use tracing_subscriber::registry::LookupSpan;

/// The format chosen, for the lines the binary writes itself ([`note`]).
static FORMAT: OnceLock<LogFormat> = OnceLock::new();

/// How much the binary shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verbosity {
    /// Warnings and errors.
    Warnings,
    /// Also the HTTP side's events: the guard's calls and refusals, sessions.
    Http,
}

/// Send what the libraries report to standard error for the rest of the process, in `format`.
pub fn init(verbosity: Verbosity, format: LogFormat) {
    let _ = FORMAT.set(format);
    let mut filter = Targets::new()
        .with_target("toolschema", LevelFilter::WARN)
        .with_target("toolschema_mcp", LevelFilter::WARN)
        .with_target("toolschema_gate", LevelFilter::WARN)
        .with_target("toolschema_proxy", LevelFilter::WARN)
        .with_target("toolschema_http", LevelFilter::WARN);
    if verbosity == Verbosity::Http {
        filter = filter
            .with_target("toolschema_http", LevelFilter::INFO)
            .with_target("toolschema_proxy::http", LevelFilter::INFO)
            .with_target("toolschema_proxy::serve", LevelFilter::INFO);
    }
    let layer = tracing_subscriber::fmt::layer()
        .event_format(Lines { format })
        .with_writer(|| TerminalSafe::new(std::io::stderr(), Escapes::Text));
    if format == LogFormat::Json {
        // The proxy's spans of traced requests, which carry their trace ids.
        filter = filter.with_target(toolschema_proxy::trace::LOG_TARGET, LevelFilter::INFO);
    }
    let subscriber = tracing_subscriber::registry()
        .with(TraceIds)
        .with(layer)
        .with(filter);
    // Fails only when a subscriber is already set, which then keeps its place.
    let _ = tracing::subscriber::set_global_default(subscriber);
}

/// A line the binary writes itself (the address it serves at, say), in the chosen format.
pub fn note(message: &str) {
    match FORMAT.get() {
        Some(LogFormat::Json) => {
            let mut object = Map::new();
            object.insert("time".into(), json!(now()));
            object.insert("level".into(), json!("INFO"));
            object.insert("target".into(), json!("toolschema"));
            object.insert("message".into(), json!(message));
            eprintln!("{}", json_line(&object));
        }
        _ => crate::output::say!("{message}"),
    }
}

/// An object as one line that cannot steer a terminal.
fn json_line(object: &Map<String, Value>) -> String {
    let text = Value::Object(object.clone()).to_string();
    toolschema::text::json_safe(&text).into_owned()
}

/// The trace id a span of the proxy's carries (its `trace_id` field).
struct TraceIdOf(String);

/// Keeps the `trace_id` of each span that has one, for the JSON lines of the events inside it.
struct TraceIds;

impl<S> Layer<S> for TraceIds
where
    S: Subscriber + for<'a> LookupSpan<'a>,
{
    fn on_new_span(&self, attributes: &Attributes<'_>, id: &Id, ctx: Context<'_, S>) {
        let mut fields = Map::new();
        attributes.record(&mut Fields(&mut fields));
        if let (Some(Value::String(trace)), Some(span)) = (fields.remove("trace_id"), ctx.span(id))
        {
            span.extensions_mut().insert(TraceIdOf(trace));
        }
    }
}

/// An event's fields (or a span's) as JSON members.
struct Fields<'a>(&'a mut Map<String, Value>);

impl Visit for Fields<'_> {
    fn record_str(&mut self, field: &Field, value: &str) {
        self.0.insert(field.name().into(), json!(value));
    }

    fn record_i64(&mut self, field: &Field, value: i64) {
        self.0.insert(field.name().into(), json!(value));
    }

    fn record_u64(&mut self, field: &Field, value: u64) {
        self.0.insert(field.name().into(), json!(value));
    }

    fn record_bool(&mut self, field: &Field, value: bool) {
        self.0.insert(field.name().into(), json!(value));
    }

    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        // A formatted message (`tracing::warn!("{x}")`) and `%value` fields arrive here.
        self.0
            .insert(field.name().into(), json!(format!("{value:?}")));
    }
}

/// One line per event: prefixed by the part of toolschema it comes from, or a JSON object.
struct Lines {
    format: LogFormat,
}

/// Set when the process is `toolschema serve`: the gate's and the service's lines are its own.
static SERVING: OnceLock<()> = OnceLock::new();

/// Lead the proxy's and the gate's lines with `toolschema serve` (they are the service's).
pub fn serving() {
    let _ = SERVING.set(());
}

fn prefix(target: &str) -> &'static str {
    if target.starts_with("toolschema_proxy") || target.starts_with("toolschema_gate") {
        if SERVING.get().is_some() {
            return "toolschema serve";
        }
        "toolschema proxy"
    } else {
        "toolschema"
    }
}

impl<S, N> FormatEvent<S, N> for Lines
where
    S: Subscriber + for<'a> LookupSpan<'a>,
    N: for<'a> FormatFields<'a> + 'static,
{
    fn format_event(
        &self,
        ctx: &FmtContext<'_, S, N>,
        mut writer: Writer<'_>,
        event: &Event<'_>,
    ) -> fmt::Result {
        if self.format == LogFormat::Json {
            let mut object = Map::new();
            object.insert("time".into(), json!(now()));
            let metadata = event.metadata();
            object.insert("level".into(), json!(metadata.level().as_str()));
            object.insert("target".into(), json!(metadata.target()));
            event.record(&mut Fields(&mut object));
            let trace = ctx.event_scope().and_then(|scope| {
                scope
                    .from_root()
                    .filter_map(|span| span.extensions().get::<TraceIdOf>().map(|t| t.0.clone()))
                    .last()
            });
            if let Some(trace) = trace {
                object.insert("trace_id".into(), json!(trace));
            }
            return writeln!(writer, "{}", json_line(&object));
        }
        let mut line = String::from(prefix(event.metadata().target()));
        line.push_str(": ");
        event.record(&mut Message(&mut line));
        writeln!(writer, "{line}")
    }
}

/// A message as one line: messages quote clients and servers (a tool name, an argument's name),
/// and a line feed in what they quote would start a line of its own making. Only the lines of a
/// quoted block (a server's stderr, each line led by `  | `) stay lines.
fn one_line(message: &str) -> String {
    // A message that ends its last line: that line feed is the event's own.
    let message = message.strip_suffix('\n').unwrap_or(message);
    let mut out = String::with_capacity(message.len());
    let mut lines = message.split('\n').peekable();
    while let Some(line) = lines.next() {
        out.push_str(line);
        match lines.peek() {
            Some(next) if next.starts_with("  | ") => out.push('\n'),
            Some(_) => out.push_str("<U+000A>"),
            None => {}
        }
    }
    out
}

/// Writes an event's message, then its other fields as `name=value`.
struct Message<'a>(&'a mut String);

impl Visit for Message<'_> {
    fn record_str(&mut self, field: &Field, value: &str) {
        if field.name() == "message" {
            self.0.push_str(&one_line(value));
        } else {
            let value = value.replace('\n', "<U+000A>");
            let _ = write!(self.0, " {}={value}", field.name());
        }
    }

    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        if field.name() == "message" {
            // A formatted message (`tracing::warn!("{x}")`) arrives here.
            self.0.push_str(&one_line(&format!("{value:?}")));
        } else {
            let _ = write!(self.0, " {}={value:?}", field.name());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::one_line;

    #[test]
    fn a_message_is_one_line_but_for_a_quoted_block() {
        assert_eq!(
            one_line("refused 'a\ntoolschema: forged' here\n"),
            "refused 'a<U+000A>toolschema: forged' here"
        );
        assert_eq!(
            one_line("exited; the last lines of its stderr:\n  | one\n  | two"),
            "exited; the last lines of its stderr:\n  | one\n  | two"
        );
    }
}
