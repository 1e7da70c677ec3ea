//! One clap argument as a tool sees it: its JSON Schema property, and how its value is written
//! back on the command line.
//!
//! The mapping, action first, then value parser:
//!
//! | clap | JSON Schema |
//! | --- | --- |
//! | `SetTrue` / `SetFalse` | `boolean`; the flag is given when the value differs from the default |
//! | `Count` | `integer`, 0 to 255 (clap counts in a `u8`) |
//! | `Append`, or more than one value per occurrence | `array`, `minItems`/`maxItems` from `num_args` |
//! | integer parsers | `integer` with the type's bounds, narrowed to a `.range()` |
//! | `f32`, `f64` | `number` |
//! | `bool` parsers with `Set` | `boolean` |
//! | possible values (`ValueEnum`, `PossibleValuesParser`) | `enum` of the visible values |
//! | parsers that refuse `""` (`NonEmptyStringValueParser`, `PathBuf`) | `minLength: 1` |
//! | `char` | string of exactly one character |
//! | `Ipv4Addr`, `Ipv6Addr`, `IpAddr` | string, `format: ipv4`/`ipv6` (both as `anyOf` for `IpAddr`) |
//! | `SocketAddrV4`, `SocketAddrV6`, `SocketAddr` | string with a `pattern` (`192.0.2.1:80`, `[::1]:80`) |
//! | `Duration` (a parser such as `humantime::parse_duration`) | string with a `pattern` for the forms the parser accepts (`10s`, `1h30m`, `1.5`) |
//! | anything else | `string`; paths and URLs say so in the description |
//!
//! Defaults become `default` (not empty strings or lists); env fallbacks, `requires`, conflicts,
//! and value delimiters are stated in the description.

use crate::probe::{Requirement, ValueProbe};
use clap::builder::ValueHint;
use clap::{Arg, ArgAction};
use serde_json::{json, Map, Number, Value};
use std::any::TypeId;
use std::ffi::OsString;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, SocketAddrV4, SocketAddrV6};
use std::num::{
    NonZeroI16, NonZeroI32, NonZeroI64, NonZeroI8, NonZeroIsize, NonZeroU16, NonZeroU32,
    NonZeroU64, NonZeroU8, NonZeroUsize,
};
use std::path::PathBuf;
use std::time::Duration;

/// How an argument is written on the command line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Form {
    /// `--name`.
    Long(String),
    /// `-n`.
    Short(char),
    /// A positional argument, with clap's index (1-based).
    Positional(usize),
}

impl Form {
    /// The flag itself: `--name` or `-n` (positionals have none).
    pub(crate) fn flag(&self) -> Option<String> {
        match self {
            Form::Long(long) => Some(format!("--{long}")),
            Form::Short(short) => Some(format!("-{short}")),
            Form::Positional(_) => None,
        }
    }
}

/// How the JSON value of an argument becomes command-line values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Item {
    /// A string, passed as is.
    Text,
    /// An integer.
    Integer,
    /// A number.
    Number,
    /// `true` or `false`.
    Boolean,
    /// Any JSON value, passed as compact JSON text (the per-argument schema escape hatch).
    Json,
}

/// How an argument's JSON value maps to occurrences on the command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// A flag without a value, given when the JSON boolean equals `given_when` (`true` for
    /// `SetTrue`, `false` for `SetFalse`).
    Flag {
        /// The value that makes the flag appear.
        given_when: bool,
    },
    /// A flag given as many times as the integer says.
    Count,
    /// One value.
    Single(Item),
    /// An array; each item is one occurrence (`--tag a --tag b`).
    Repeated(Item),
    /// An array given in one occurrence (`--files a b c`, or positional values).
    Grouped(Item),
    /// An array of arrays; each inner array is one occurrence (`--point 1 2 --point 3 4`).
    GroupedRepeated(Item),
}

/// One argument of a tool.
#[derive(Debug, Clone)]
pub(crate) struct ArgSpec {
    /// The clap id: the property name.
    pub(crate) id: String,
    pub(crate) form: Form,
    pub(crate) kind: Kind,
    pub(crate) required: bool,
    /// Whether values starting with `-` are read as values (else as options) after the flag.
    pub(crate) hyphen_values: bool,
    /// A positional that only takes values after `--` (`last(true)`).
    pub(crate) last: bool,
    /// Whether negative numbers are read as values after the flag.
    pub(crate) negative_numbers: bool,
    /// What giving this argument requires.
    pub(crate) requires: Vec<Requirement>,
    /// The JSON Schema property.
    pub(crate) schema: Map<String, Value>,
}

/// Integer types clap has value parsers for, with their bounds.
fn integer_bounds(arg: &Arg) -> Option<(i128, i128)> {
    macro_rules! table {
        ($($t:ty: $min:expr, $max:expr;)*) => {
            $(if is_type::<$t>(arg) { return Some(($min as i128, $max as i128)); })*
        };
    }
    table! {
        u8: u8::MIN, u8::MAX; u16: u16::MIN, u16::MAX; u32: u32::MIN, u32::MAX;
        u64: u64::MIN, u64::MAX; usize: usize::MIN, usize::MAX;
        i8: i8::MIN, i8::MAX; i16: i16::MIN, i16::MAX; i32: i32::MIN, i32::MAX;
        i64: i64::MIN, i64::MAX; isize: isize::MIN, isize::MAX;
        NonZeroU8: 1, u8::MAX; NonZeroU16: 1, u16::MAX; NonZeroU32: 1, u32::MAX;
        NonZeroU64: 1, u64::MAX; NonZeroUsize: 1, usize::MAX;
        NonZeroI8: i8::MIN, i8::MAX; NonZeroI16: i16::MIN, i16::MAX;
        NonZeroI32: i32::MIN, i32::MAX; NonZeroI64: i64::MIN, i64::MAX;
        NonZeroIsize: isize::MIN, isize::MAX;
    }
    None
}

fn is_type<T: 'static>(arg: &Arg) -> bool {
    arg.get_value_parser().type_id() == TypeId::of::<T>()
}

/// A JSON integer for an `i128` within the `i64`/`u64` range.
fn integer_value(n: i128) -> Value {
    if let Ok(n) = i64::try_from(n) {
        Value::from(n)
    } else if let Ok(n) = u64::try_from(n) {
        Value::from(n)
    } else {
        Value::Null
    }
}

/// The item's JSON Schema, and how values are written.
fn item_schema(arg: &Arg, json_schema: Option<&Value>) -> (Item, Map<String, Value>) {
    let mut schema = Map::new();
    if let Some(Value::Object(given)) = json_schema {
        return (Item::Json, given.clone());
    }
    if let Some(given) = json_schema {
        // A boolean schema (`true`/`false`): kept as the whole property.
        schema.insert("allOf".into(), json!([given]));
        return (Item::Json, schema);
    }
    if is_type::<bool>(arg) {
        schema.insert("type".into(), json!("boolean"));
        return (Item::Boolean, schema);
    }
    let visible: Vec<Value> = arg
        .get_possible_values()
        .iter()
        .filter(|v| !v.is_hide_set())
        .map(|v| Value::String(v.get_name().to_string()))
        .collect();
    if !visible.is_empty() {
        schema.insert("type".into(), json!("string"));
        schema.insert("enum".into(), Value::Array(visible));
        return (Item::Text, schema);
    }
    let mut probe = ValueProbe::new(arg.get_value_parser());
    if let Some((type_min, type_max)) = integer_bounds(arg) {
        let seeds: Vec<i128> = arg
            .get_default_values()
            .iter()
            .filter_map(|d| d.to_str()?.parse().ok())
            .collect();
        let (min, max) = probe
            .integer_bounds(type_min, type_max, &seeds)
            .unwrap_or((type_min, type_max));
        schema.insert("type".into(), json!("integer"));
        schema.insert("minimum".into(), integer_value(min));
        schema.insert("maximum".into(), integer_value(max));
        return (Item::Integer, schema);
    }
    if is_type::<f64>(arg) || is_type::<f32>(arg) {
        schema.insert("type".into(), json!("number"));
        return (Item::Number, schema);
    }
    schema.insert("type".into(), json!("string"));
    if let Some(network) = network_schema(arg) {
        schema.extend(network);
        return (Item::Text, schema);
    }
    if is_type::<Duration>(arg) {
        if let Some(pattern) = duration_pattern(&mut probe) {
            schema.insert("pattern".into(), json!(pattern));
        }
        return (Item::Text, schema);
    }
    if is_type::<char>(arg) {
        schema.insert("minLength".into(), json!(1));
        schema.insert("maxLength".into(), json!(1));
    } else if !probe.accepts("") {
        schema.insert("minLength".into(), json!(1));
    }
    if let Some(delimiter) = arg.get_value_delimiter() {
        schema.insert(
            "pattern".into(),
            json!(format!("^[^{}]*$", regex_class_escape(delimiter))),
        );
    }
    (Item::Text, schema)
}

/// One octet of an IPv4 address in decimal, without leading zeros (as `Ipv4Addr` reads it).
const OCTET: &str = "(25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])";

/// An IPv4 socket address, `192.0.2.1:8080`.
fn socket_v4_pattern() -> String {
    format!("{OCTET}(\\.{OCTET}){{3}}:[0-9]{{1,5}}")
}

/// An IPv6 socket address, `[2001:db8::1]:8080` (with a scope id, `[fe80::1%2]:8080`): the
/// address is checked loosely, the parser says exactly what is wrong.
const SOCKET_V6_PATTERN: &str = "\\[[0-9A-Fa-f:.]{2,45}(%[0-9]{1,10})?\\]:[0-9]{1,5}";

/// The schema of an IP or socket address value parser: a `format` for addresses, a `pattern`
/// for socket addresses (as Ophis gives `ip` and `ipNet` flags), and the longest form.
fn network_schema(arg: &Arg) -> Option<Map<String, Value>> {
    let mut schema = Map::new();
    if is_type::<Ipv4Addr>(arg) {
        schema.insert("format".into(), json!("ipv4"));
        schema.insert("maxLength".into(), json!(15));
    } else if is_type::<Ipv6Addr>(arg) {
        schema.insert("format".into(), json!("ipv6"));
        schema.insert("maxLength".into(), json!(45));
    } else if is_type::<IpAddr>(arg) {
        schema.insert(
            "anyOf".into(),
            json!([{"format": "ipv4"}, {"format": "ipv6"}]),
        );
        schema.insert("maxLength".into(), json!(45));
    } else if is_type::<SocketAddrV4>(arg) {
        schema.insert(
            "pattern".into(),
            json!(format!("^{}$", socket_v4_pattern())),
        );
        schema.insert("maxLength".into(), json!(21));
    } else if is_type::<SocketAddrV6>(arg) {
        schema.insert("pattern".into(), json!(format!("^{SOCKET_V6_PATTERN}$")));
        schema.insert("maxLength".into(), json!(65));
    } else if is_type::<SocketAddr>(arg) {
        schema.insert(
            "pattern".into(),
            json!(format!("^({}|{SOCKET_V6_PATTERN})$", socket_v4_pattern())),
        );
        schema.insert("maxLength".into(), json!(65));
    } else {
        return None;
    }
    Some(schema)
}

/// A `pattern` for the durations a parser accepts, found by asking it: plain seconds (`10`,
/// `1.5`), numbers with units (`10s`, `1.5s`, `10 s`), and several of those (`1h30m`,
/// `1h 30m`). `None` when it accepts none of these forms.
fn duration_pattern(probe: &mut ValueProbe) -> Option<String> {
    let number = |fraction: bool| {
        if fraction {
            "[0-9]+(\\.[0-9]+)?"
        } else {
            "[0-9]+"
        }
    };
    let mut forms = Vec::new();
    if probe.accepts("10") {
        forms.push(number(probe.accepts("1.5")).to_string());
    }
    if probe.accepts("10s") {
        let gap = if probe.accepts("10 s") { "\\s*" } else { "" };
        let term = format!("{}{gap}[A-Za-zµ]+", number(probe.accepts("1.5s")));
        if probe.accepts("1h 30m") {
            forms.push(format!("{term}(\\s*{term})*"));
        } else if probe.accepts("1h30m") {
            forms.push(format!("({term})+"));
        } else {
            forms.push(term);
        }
    }
    if forms.is_empty() {
        return None;
    }
    Some(format!("^({})$", forms.join("|")))
}

/// `c` escaped for use inside a regular-expression character class.
fn regex_class_escape(c: char) -> String {
    if matches!(c, '\\' | ']' | '[' | '^' | '-') {
        format!("\\{c}")
    } else {
        c.to_string()
    }
}

/// What an argument is, in words, for the description.
fn value_kind_note(arg: &Arg) -> Option<&'static str> {
    match arg.get_value_hint() {
        ValueHint::FilePath => Some("A file path."),
        ValueHint::DirPath => Some("A directory path."),
        ValueHint::ExecutablePath => Some("A path to an executable."),
        ValueHint::AnyPath => Some("A file system path."),
        ValueHint::Url => Some("A URL."),
        ValueHint::EmailAddress => Some("An email address."),
        ValueHint::Hostname => Some("A host name."),
        ValueHint::Username => Some("A user name."),
        ValueHint::CommandName => Some("A command name."),
        _ if is_type::<PathBuf>(arg) => Some("A file system path."),
        _ if is_type::<Ipv4Addr>(arg) => Some("An IPv4 address, like 192.0.2.1."),
        _ if is_type::<Ipv6Addr>(arg) => Some("An IPv6 address, like 2001:db8::1."),
        _ if is_type::<IpAddr>(arg) => Some("An IPv4 or IPv6 address."),
        _ if is_type::<SocketAddrV4>(arg) => Some("An IPv4 address and port, like 192.0.2.1:8080."),
        _ if is_type::<SocketAddrV6>(arg) => {
            Some("An IPv6 address and port, like [2001:db8::1]:8080.")
        }
        _ if is_type::<SocketAddr>(arg) => {
            Some("An address and port, like 192.0.2.1:8080 or [2001:db8::1]:8080.")
        }
        _ if is_type::<Duration>(arg) => Some("A duration."),
        _ => None,
    }
}

/// A JSON value for one default given on the command line, as the item reads it.
fn default_item(item: Item, text: &str) -> Option<Value> {
    match item {
        Item::Text => Some(Value::String(text.to_string())),
        Item::Integer => text.parse::<i128>().ok().map(integer_value),
        Item::Number => text
            .parse::<f64>()
            .ok()
            .and_then(Number::from_f64)
            .map(Value::Number),
        Item::Boolean => text.parse::<bool>().ok().map(Value::Bool),
        Item::Json => serde_json::from_str(text).ok(),
    }
}

/// `text`, ending with a full stop unless it already ends with punctuation.
fn with_period(text: String) -> String {
    if text.ends_with(['.', '!', '?', ':', ')']) {
        text
    } else {
        text + "."
    }
}

fn quote_list(ids: &[String]) -> String {
    ids.iter()
        .map(|id| format!("'{id}'"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Why an argument cannot be given the JSON Schema the configuration sets for it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct NotAStringArgument;

/// What the mapping needs besides the argument.
pub(crate) struct MapContext<'a> {
    /// The JSON Schema the configuration gives this argument.
    pub(crate) json_schema: Option<&'a Value>,
    /// What giving the argument requires.
    pub(crate) requires: Vec<Requirement>,
    /// The ids of the arguments it conflicts with.
    pub(crate) conflicts: Vec<String>,
}

/// The tool's view of `arg`; `Ok(None)` for arguments that are not part of a call (help, version).
pub(crate) fn map_argument(
    arg: &Arg,
    context: MapContext<'_>,
) -> Result<Option<ArgSpec>, NotAStringArgument> {
    let id = arg.get_id().to_string();
    let form = if arg.is_positional() {
        Form::Positional(arg.get_index().unwrap_or(usize::MAX))
    } else if let Some(long) = arg.get_long() {
        Form::Long(long.to_string())
    } else if let Some(short) = arg.get_short() {
        Form::Short(short)
    } else {
        Form::Positional(arg.get_index().unwrap_or(usize::MAX))
    };
    let num_args = arg.get_num_args();
    let (min_values, max_values) = num_args.map_or((1, 1), |r| (r.min_values(), r.max_values()));
    let positional = matches!(form, Form::Positional(_));
    let takes_json = context.json_schema.is_some();
    let (kind, item_schema) = match arg.get_action() {
        ArgAction::SetTrue if !takes_json => (Kind::Flag { given_when: true }, None),
        ArgAction::SetFalse if !takes_json => (Kind::Flag { given_when: false }, None),
        ArgAction::Count if !takes_json => (Kind::Count, None),
        ArgAction::Set | ArgAction::Append if max_values == 0 && !takes_json => {
            (Kind::Flag { given_when: true }, None)
        }
        action @ (ArgAction::Set | ArgAction::Append) => {
            let (item, schema) = item_schema(arg, context.json_schema);
            let append = matches!(action, ArgAction::Append);
            let kind = if positional {
                if max_values > 1 {
                    Kind::Grouped(item)
                } else {
                    Kind::Single(item)
                }
            } else {
                match (append, max_values > 1) {
                    (false, false) => Kind::Single(item),
                    (false, true) => Kind::Grouped(item),
                    (true, false) => Kind::Repeated(item),
                    (true, true) => Kind::GroupedRepeated(item),
                }
            };
            if takes_json && (kind != Kind::Single(Item::Json) || !accepts_any_text(arg)) {
                return Err(NotAStringArgument);
            }
            (kind, Some(schema))
        }
        ArgAction::SetTrue | ArgAction::SetFalse | ArgAction::Count => {
            return Err(NotAStringArgument)
        }
        _ => return Ok(None),
    };
    let required = arg.is_required_set();

    let mut schema = Map::new();
    let description = describe(arg, &form, kind, &context);
    if !description.is_empty() {
        schema.insert("description".into(), Value::String(description));
    }
    let item = match kind {
        Kind::Single(item)
        | Kind::Repeated(item)
        | Kind::Grouped(item)
        | Kind::GroupedRepeated(item) => Some(item),
        Kind::Flag { .. } | Kind::Count => None,
    };
    let item_schema = item_schema.unwrap_or_default();
    match kind {
        Kind::Flag { .. } => {
            schema.insert("type".into(), json!("boolean"));
        }
        Kind::Count => {
            schema.insert("type".into(), json!("integer"));
            schema.insert("minimum".into(), json!(0));
            schema.insert("maximum".into(), json!(u8::MAX));
        }
        Kind::Single(_) => schema.extend(item_schema),
        Kind::Repeated(_) => {
            schema.insert("type".into(), json!("array"));
            schema.insert("items".into(), Value::Object(item_schema));
            if required {
                schema.insert("minItems".into(), json!(1));
            }
        }
        Kind::Grouped(_) => schema.extend(array_of(item_schema, min_values, max_values)),
        Kind::GroupedRepeated(_) => {
            let inner = array_of(item_schema, min_values, max_values);
            schema.insert("type".into(), json!("array"));
            schema.insert("items".into(), Value::Object(inner));
            if required {
                schema.insert("minItems".into(), json!(1));
            }
        }
    }
    if let Some(default) = default_value(arg, kind, item) {
        schema.insert("default".into(), default);
    }
    Ok(Some(ArgSpec {
        id,
        form,
        kind,
        required,
        hyphen_values: arg.is_allow_hyphen_values_set(),
        last: arg.is_last_set(),
        negative_numbers: arg.is_allow_negative_numbers_set(),
        requires: context.requires,
        schema,
    }))
}

/// An array of `items` with `num_args`' bounds (`usize::MAX` is unbounded).
fn array_of(items: Map<String, Value>, min: usize, max: usize) -> Map<String, Value> {
    let mut array = Map::new();
    array.insert("type".into(), json!("array"));
    array.insert("items".into(), Value::Object(items));
    if min > 0 {
        array.insert("minItems".into(), json!(min));
    }
    if max != usize::MAX {
        array.insert("maxItems".into(), json!(max));
    }
    array
}

/// Whether an argument takes any text, so JSON text can be given to it.
fn accepts_any_text(arg: &Arg) -> bool {
    (is_type::<String>(arg) || is_type::<OsString>(arg)) && arg.get_possible_values().is_empty()
}

/// The `default` keyword's value: clap's defaults read as the property's type; none for empty
/// strings, empty lists, or defaults the application hides.
fn default_value(arg: &Arg, kind: Kind, item: Option<Item>) -> Option<Value> {
    let defaults: Vec<&str> = arg
        .get_default_values()
        .iter()
        .map(|d| d.to_str())
        .collect::<Option<_>>()?;
    if defaults.is_empty()
        || defaults.iter().any(|d| d.is_empty())
        || arg.is_hide_default_value_set()
    {
        return None;
    }
    match (kind, defaults.as_slice()) {
        (Kind::Flag { .. }, [one]) => default_item(Item::Boolean, one),
        (Kind::Count, [one]) => default_item(Item::Integer, one),
        (Kind::Single(item), [one]) => default_item(item, one),
        (Kind::Repeated(_) | Kind::Grouped(_), many) => {
            let item = item?;
            let values: Option<Vec<Value>> = many.iter().map(|d| default_item(item, d)).collect();
            values.map(Value::Array)
        }
        _ => None,
    }
}

/// The argument's help, then what the schema cannot say.
fn describe(arg: &Arg, form: &Form, kind: Kind, context: &MapContext<'_>) -> String {
    let mut sentences: Vec<String> = Vec::new();
    let help = arg
        .get_long_help()
        .or(arg.get_help())
        .map(|h| h.to_string().trim().to_string())
        .unwrap_or_default();
    if !help.is_empty() {
        sentences.push(with_period(help));
    }
    let flag = form.flag().unwrap_or_default();
    match kind {
        Kind::Flag { given_when: false } => {
            sentences.push(format!("Set to false to pass {flag}."));
        }
        Kind::Count => sentences.push(format!("How many times to pass {flag}.")),
        Kind::Single(Item::Json) => {
            sentences.push("Passed to the command as JSON text.".to_string())
        }
        _ => {}
    }
    if matches!(
        kind,
        Kind::Single(Item::Text)
            | Kind::Repeated(Item::Text)
            | Kind::Grouped(Item::Text)
            | Kind::GroupedRepeated(Item::Text)
    ) {
        if let Some(note) = value_kind_note(arg) {
            sentences.push(note.to_string());
        }
    }
    let helped: Vec<String> = arg
        .get_possible_values()
        .iter()
        .filter(|v| !v.is_hide_set())
        .filter_map(|v| {
            let help = v.get_help()?.to_string();
            Some(format!(
                "'{}': {}",
                v.get_name(),
                help.trim().trim_end_matches('.')
            ))
        })
        .collect();
    if !helped.is_empty() {
        sentences.push(format!("Values: {}.", helped.join("; ")));
    }
    if let Some(delimiter) = arg.get_value_delimiter() {
        sentences.push(format!("Values must not contain '{delimiter}'."));
    }
    if let Some(env) = arg.get_env() {
        if !arg.is_hide_env_set() {
            sentences.push(format!(
                "Falls back to the environment variable {} when not given.",
                env.to_string_lossy()
            ));
        }
    }
    for requirement in &context.requires {
        sentences.push(match requirement {
            Requirement::Argument(id) => format!("Requires '{id}'."),
            Requirement::OneOf(ids) => format!("Requires one of {}.", quote_list(ids)),
        });
    }
    if !context.conflicts.is_empty() {
        sentences.push(format!(
            "Cannot be used with {}.",
            quote_list(&context.conflicts)
        ));
    }
    sentences.join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::{value_parser, Command, ValueEnum};

    /// Map the argument `id` of a command built from `args`.
    fn map(args: Vec<Arg>, id: &str) -> ArgSpec {
        map_with(args, id, None)
    }

    fn map_with(args: Vec<Arg>, id: &str, json_schema: Option<&Value>) -> ArgSpec {
        let mut cmd = Command::new("t").args(args);
        cmd.build();
        let arg = cmd.get_arguments().find(|a| a.get_id() == id).unwrap();
        let context = MapContext {
            json_schema,
            requires: Vec::new(),
            conflicts: Vec::new(),
        };
        map_argument(arg, context).unwrap().unwrap()
    }

    fn schema(args: Vec<Arg>, id: &str) -> Value {
        Value::Object(map(args, id).schema)
    }

    #[test]
    fn set_true_and_set_false_are_booleans() {
        let spec = map(
            vec![Arg::new("shout").long("shout").action(ArgAction::SetTrue)],
            "shout",
        );
        assert_eq!(spec.kind, Kind::Flag { given_when: true });
        assert_eq!(
            Value::Object(spec.schema),
            json!({"type": "boolean", "default": false})
        );
        let spec = map(
            vec![Arg::new("color")
                .long("no-color")
                .help("Colour the output")
                .action(ArgAction::SetFalse)],
            "color",
        );
        assert_eq!(spec.kind, Kind::Flag { given_when: false });
        assert_eq!(
            Value::Object(spec.schema),
            json!({
                "description": "Colour the output. Set to false to pass --no-color.",
                "type": "boolean",
                "default": true
            })
        );
    }

    #[test]
    fn count_is_a_bounded_integer() {
        let spec = map(
            vec![Arg::new("verbose").short('v').action(ArgAction::Count)],
            "verbose",
        );
        assert_eq!(spec.kind, Kind::Count);
        assert_eq!(
            Value::Object(spec.schema),
            json!({
                "description": "How many times to pass -v.",
                "type": "integer", "minimum": 0, "maximum": 255, "default": 0
            })
        );
    }

    #[test]
    fn integers_carry_their_type_bounds_and_ranges() {
        let s = |parser: clap::builder::ValueParser| {
            schema(vec![Arg::new("n").long("n").value_parser(parser)], "n")
        };
        assert_eq!(
            s(value_parser!(u8).into()),
            json!({"type": "integer", "minimum": 0, "maximum": 255})
        );
        assert_eq!(
            s(value_parser!(i16).into()),
            json!({"type": "integer", "minimum": -32768, "maximum": 32767})
        );
        assert_eq!(
            s(value_parser!(u64).into()),
            json!({"type": "integer", "minimum": 0, "maximum": u64::MAX})
        );
        assert_eq!(
            s(value_parser!(i64).into()),
            json!({"type": "integer", "minimum": i64::MIN, "maximum": i64::MAX})
        );
        assert_eq!(
            s(value_parser!(usize).into()),
            json!({"type": "integer", "minimum": 0, "maximum": usize::MAX})
        );
        assert_eq!(
            s(value_parser!(NonZeroU32).into()),
            json!({"type": "integer", "minimum": 1, "maximum": u32::MAX})
        );
        assert_eq!(
            s(value_parser!(u8).range(1..=10).into()),
            json!({"type": "integer", "minimum": 1, "maximum": 10})
        );
        assert_eq!(
            s(value_parser!(i32).range(-3..7).into()),
            json!({"type": "integer", "minimum": -3, "maximum": 6})
        );
        assert_eq!(
            s(value_parser!(u16).range(1024..).into()),
            json!({"type": "integer", "minimum": 1024, "maximum": 65535})
        );
    }

    #[test]
    fn floats_are_numbers() {
        for parser in [value_parser!(f64), value_parser!(f32)] {
            assert_eq!(
                schema(vec![Arg::new("x").long("x").value_parser(parser)], "x"),
                json!({"type": "number"})
            );
        }
    }

    #[test]
    fn bool_values_are_booleans() {
        let spec = map(
            vec![Arg::new("cache")
                .long("cache")
                .action(ArgAction::Set)
                .value_parser(value_parser!(bool))],
            "cache",
        );
        assert_eq!(spec.kind, Kind::Single(Item::Boolean));
        assert_eq!(Value::Object(spec.schema), json!({"type": "boolean"}));
    }

    #[derive(Clone, Copy, ValueEnum)]
    enum Format {
        /// Machine-readable
        Json,
        Table,
        #[value(hide = true)]
        Debug,
    }

    #[test]
    fn possible_values_are_an_enum_of_the_visible_ones() {
        assert_eq!(
            schema(
                vec![Arg::new("format")
                    .long("format")
                    .value_parser(value_parser!(Format))
                    .default_value("table")],
                "format"
            ),
            json!({
                "description": "Values: 'json': Machine-readable.",
                "type": "string",
                "enum": ["json", "table"],
                "default": "table"
            })
        );
        assert_eq!(
            schema(
                vec![Arg::new("scope")
                    .long("scope")
                    .value_parser(["user", "project"])],
                "scope"
            ),
            json!({"type": "string", "enum": ["user", "project"]})
        );
    }

    #[test]
    fn strings_paths_and_non_empty_strings() {
        assert_eq!(
            schema(vec![Arg::new("name").long("name")], "name"),
            json!({"type": "string"})
        );
        assert_eq!(
            schema(
                vec![Arg::new("name")
                    .long("name")
                    .value_parser(clap::builder::NonEmptyStringValueParser::new())],
                "name"
            ),
            json!({"type": "string", "minLength": 1})
        );
        assert_eq!(
            schema(
                vec![Arg::new("out")
                    .long("out")
                    .help("Where to write")
                    .value_parser(value_parser!(PathBuf))],
                "out"
            ),
            json!({
                "description": "Where to write. A file system path.",
                "type": "string",
                "minLength": 1
            })
        );
        assert_eq!(
            schema(
                vec![Arg::new("dir")
                    .long("dir")
                    .value_hint(ValueHint::DirPath)
                    .value_parser(value_parser!(PathBuf))],
                "dir"
            ),
            json!({"description": "A directory path.", "type": "string", "minLength": 1})
        );
        assert_eq!(
            schema(
                vec![Arg::new("sep")
                    .long("sep")
                    .value_parser(value_parser!(char))],
                "sep"
            ),
            json!({"type": "string", "minLength": 1, "maxLength": 1})
        );
    }

    #[test]
    fn repeated_and_grouped_arrays() {
        let spec = map(
            vec![Arg::new("tag")
                .long("tag")
                .action(ArgAction::Append)
                .required(true)],
            "tag",
        );
        assert_eq!(spec.kind, Kind::Repeated(Item::Text));
        assert_eq!(
            Value::Object(spec.schema),
            json!({"type": "array", "items": {"type": "string"}, "minItems": 1})
        );
        let spec = map(
            vec![Arg::new("files").long("files").num_args(2..=4)],
            "files",
        );
        assert_eq!(spec.kind, Kind::Grouped(Item::Text));
        assert_eq!(
            Value::Object(spec.schema),
            json!({"type": "array", "items": {"type": "string"}, "minItems": 2, "maxItems": 4})
        );
        let spec = map(
            vec![Arg::new("point")
                .long("point")
                .num_args(2)
                .action(ArgAction::Append)
                .value_parser(value_parser!(i32))],
            "point",
        );
        assert_eq!(spec.kind, Kind::GroupedRepeated(Item::Integer));
        assert_eq!(
            Value::Object(spec.schema),
            json!({"type": "array", "items": {
                "type": "array",
                "items": {"type": "integer", "minimum": i32::MIN, "maximum": i32::MAX},
                "minItems": 2, "maxItems": 2
            }})
        );
        let spec = map(
            vec![Arg::new("paths")
                .num_args(1..)
                .value_parser(value_parser!(PathBuf))],
            "paths",
        );
        assert_eq!(spec.kind, Kind::Grouped(Item::Text));
        assert_eq!(spec.form, Form::Positional(1));
        assert_eq!(
            Value::Object(spec.schema),
            json!({
                "description": "A file system path.",
                "type": "array",
                "items": {"type": "string", "minLength": 1},
                "minItems": 1
            })
        );
    }

    #[test]
    fn delimited_values_may_not_hold_the_delimiter() {
        assert_eq!(
            schema(
                vec![Arg::new("ids")
                    .long("ids")
                    .value_delimiter(',')
                    .action(ArgAction::Append)],
                "ids"
            ),
            json!({
                "description": "Values must not contain ','.",
                "type": "array",
                "items": {"type": "string", "pattern": "^[^,]*$"}
            })
        );
        assert_eq!(regex_class_escape('-'), "\\-");
    }

    #[test]
    fn defaults_are_typed_and_skipped_when_empty_or_hidden() {
        let s = |arg: Arg| schema(vec![arg], "x");
        assert_eq!(
            s(Arg::new("x")
                .long("x")
                .value_parser(value_parser!(u8))
                .default_value("3")),
            json!({"type": "integer", "minimum": 0, "maximum": 255, "default": 3})
        );
        assert_eq!(
            s(Arg::new("x")
                .long("x")
                .value_parser(value_parser!(f64))
                .default_value("0.5")),
            json!({"type": "number", "default": 0.5})
        );
        assert_eq!(
            s(Arg::new("x").long("x").default_value("")),
            json!({"type": "string"})
        );
        assert_eq!(
            s(Arg::new("x")
                .long("x")
                .default_value("secret")
                .hide_default_value(true)),
            json!({"type": "string"})
        );
        assert_eq!(
            s(Arg::new("x")
                .long("x")
                .action(ArgAction::Append)
                .default_values(["a", "b"])),
            json!({"type": "array", "items": {"type": "string"}, "default": ["a", "b"]})
        );
    }

    #[test]
    fn env_requires_and_conflicts_are_described() {
        let mut cmd = Command::new("t").arg(Arg::new("token").long("token").env("API_TOKEN"));
        cmd.build();
        let arg = cmd.get_arguments().find(|a| a.get_id() == "token").unwrap();
        let spec = map_argument(
            arg,
            MapContext {
                json_schema: None,
                requires: vec![
                    Requirement::Argument("user".into()),
                    Requirement::OneOf(vec!["json".into(), "yaml".into()]),
                ],
                conflicts: vec!["anonymous".into()],
            },
        )
        .unwrap()
        .unwrap();
        assert_eq!(
            spec.schema["description"],
            "Falls back to the environment variable API_TOKEN when not given. Requires 'user'. \
             Requires one of 'json', 'yaml'. Cannot be used with 'anonymous'."
        );
    }

    #[test]
    fn json_schema_escape_hatch_applies_to_string_arguments_only() {
        let given = json!({"type": "object", "properties": {"a": {"type": "integer"}}});
        let spec = map_with(vec![Arg::new("value").long("value")], "value", Some(&given));
        assert_eq!(spec.kind, Kind::Single(Item::Json));
        assert_eq!(
            Value::Object(spec.schema),
            json!({
                "description": "Passed to the command as JSON text.",
                "type": "object",
                "properties": {"a": {"type": "integer"}}
            })
        );
        let mut cmd = Command::new("t")
            .arg(Arg::new("n").long("n").value_parser(value_parser!(u8)))
            .arg(Arg::new("f").long("f").action(ArgAction::SetTrue))
            .arg(Arg::new("l").long("l").action(ArgAction::Append));
        cmd.build();
        for id in ["n", "f", "l"] {
            let arg = cmd.get_arguments().find(|a| a.get_id() == id).unwrap();
            let context = MapContext {
                json_schema: Some(&given),
                requires: Vec::new(),
                conflicts: Vec::new(),
            };
            assert_eq!(map_argument(arg, context).unwrap_err(), NotAStringArgument);
        }
    }

    #[test]
    fn help_and_version_are_not_arguments() {
        let mut cmd = Command::new("t").version("1.0");
        cmd.build();
        for arg in cmd.get_arguments() {
            let context = MapContext {
                json_schema: None,
                requires: Vec::new(),
                conflicts: Vec::new(),
            };
            assert!(map_argument(arg, context).unwrap().is_none());
        }
    }

    /// A duration parser like humantime's: one or more `<integer><unit>` terms, spaces allowed
    /// between terms.
    fn parse_duration(text: &str) -> Result<Duration, String> {
        let mut total = 0u64;
        let mut rest = text.trim();
        if rest.is_empty() {
            return Err("empty".into());
        }
        while !rest.is_empty() {
            let digits = rest
                .find(|c: char| !c.is_ascii_digit())
                .unwrap_or(rest.len());
            let number: u64 = rest[..digits]
                .parse()
                .map_err(|_| "no number".to_string())?;
            rest = &rest[digits..];
            let letters = rest
                .find(|c: char| !c.is_ascii_alphabetic())
                .unwrap_or(rest.len());
            let unit = match &rest[..letters] {
                "s" => 1,
                "m" => 60,
                "h" => 3600,
                _ => return Err("no unit".into()),
            };
            total += number * unit;
            rest = rest[letters..].trim_start();
        }
        Ok(Duration::from_secs(total))
    }

    fn seconds(text: &str) -> Result<Duration, String> {
        text.parse::<f64>()
            .ok()
            .and_then(|s| Duration::try_from_secs_f64(s).ok())
            .ok_or_else(|| "not seconds".to_string())
    }

    #[test]
    fn addresses_get_formats_and_patterns() {
        let arg = |id: &'static str, parser: clap::builder::ValueParser| {
            Arg::new(id).long(id).value_parser(parser)
        };
        let args = || {
            vec![
                arg("v4", value_parser!(Ipv4Addr).into()),
                arg("v6", value_parser!(Ipv6Addr).into()),
                arg("ip", value_parser!(IpAddr).into()),
                arg("listen", value_parser!(SocketAddr).into()),
                arg("listen4", value_parser!(SocketAddrV4).into()),
                arg("listen6", value_parser!(SocketAddrV6).into()),
            ]
        };
        assert_eq!(
            schema(args(), "v4"),
            json!({"description": "An IPv4 address, like 192.0.2.1.", "type": "string", "format": "ipv4", "maxLength": 15})
        );
        assert_eq!(schema(args(), "v6")["format"], "ipv6");
        assert_eq!(
            schema(args(), "ip")["anyOf"],
            json!([{"format": "ipv4"}, {"format": "ipv6"}])
        );
        let listen = schema(args(), "listen");
        assert_eq!(listen["type"], "string");
        assert!(listen["pattern"].as_str().unwrap().starts_with("^("));
        assert_eq!(
            listen["description"],
            "An address and port, like 192.0.2.1:8080 or [2001:db8::1]:8080."
        );
    }

    #[test]
    fn durations_get_the_pattern_their_parser_reads() {
        type Parser = fn(&str) -> Result<Duration, String>;
        let parsers: [Parser; 2] = [parse_duration, seconds];
        let mut patterns = Vec::new();
        for parser in parsers {
            let property = schema(
                vec![Arg::new("wait").long("wait").value_parser(parser)],
                "wait",
            );
            assert_eq!(property["type"], "string");
            assert_eq!(property["description"], "A duration.");
            patterns.push(property["pattern"].as_str().unwrap().to_string());
        }
        assert_eq!(
            patterns,
            [
                "^([0-9]+[A-Za-zµ]+(\\s*[0-9]+[A-Za-zµ]+)*)$",
                "^([0-9]+(\\.[0-9]+)?)$"
            ]
        );
        let validator = |pattern: &str| {
            toolschema::SchemaValidator::new(&json!({"type": "string", "pattern": pattern}))
                .unwrap()
        };
        let humantime = validator(&patterns[0]);
        for text in ["10s", "1h30m", "1h 30m", "2h"] {
            assert!(humantime.is_valid(&json!(text)), "{text}");
        }
        for text in ["10", "ten seconds", "1.5s", ""] {
            assert!(!humantime.is_valid(&json!(text)), "{text}");
        }
        let plain = validator(&patterns[1]);
        assert!(plain.is_valid(&json!("1.5")) && !plain.is_valid(&json!("10s")));
    }

    proptest::proptest! {
        /// Every address the value parser accepts in its display form fits the schema, formats
        /// asserted: the schema never refuses what the command line takes.
        #[test]
        fn every_address_fits_its_schema(
            v4: Ipv4Addr,
            v6: Ipv6Addr,
            port: u16,
            scope: u32,
        ) {
            let assert_formats = toolschema::CompileOptions::new().assert_format(true);
            let args = || {
                vec![
                    Arg::new("v4").long("v4").value_parser(value_parser!(Ipv4Addr)),
                    Arg::new("v6").long("v6").value_parser(value_parser!(Ipv6Addr)),
                    Arg::new("ip").long("ip").value_parser(value_parser!(IpAddr)),
                    Arg::new("sa").long("sa").value_parser(value_parser!(SocketAddr)),
                    Arg::new("sa4").long("sa4").value_parser(value_parser!(SocketAddrV4)),
                    Arg::new("sa6").long("sa6").value_parser(value_parser!(SocketAddrV6)),
                ]
            };
            let socket4 = SocketAddrV4::new(v4, port);
            let socket6 = SocketAddrV6::new(v6, port, 0, scope);
            let cases = [
                ("v4", v4.to_string()),
                ("v6", v6.to_string()),
                ("ip", v4.to_string()),
                ("ip", v6.to_string()),
                ("sa", socket4.to_string()),
                ("sa", socket6.to_string()),
                ("sa4", socket4.to_string()),
                ("sa6", socket6.to_string()),
            ];
            for (id, text) in cases {
                let property = schema(args(), id);
                let validator =
                    toolschema::SchemaValidator::with_options(&property, &assert_formats).unwrap();
                proptest::prop_assert!(validator.is_valid(&json!(text)), "{id}: {text} refused by {property}");
            }
        }
    }
}
