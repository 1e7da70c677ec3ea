//! The keywords that compare numbers, judged on the numbers a JSON text states.
//!
//! The engine reads numbers as 64-bit integers and floats, so `9007199254740993.0` is to it
//! `9007199254740992`. Where a value was read from text, the numbers its `Value` holds otherwise
//! than the text states are known ([`crate::json::number::numbers_read_inexactly`]); the engine
//! built with these keywords in place of its own (`const`, `enum`, `multipleOf`, the bounds,
//! `uniqueItems`, `type`) judges them as [`Decimal`]s. A number's decimal is looked up by the
//! address of its `Value` in the value being validated, which stays put while it is validated.
//!
//! The schema's own numbers are read likewise ([`SchemaNumbers`]): as its text states them
//! where it was read from text, by the address of each number in the schema the engine borrows
//! while it compiles.

use crate::json::number::Decimal;
use serde_json::{Map, Value};
use std::cell::RefCell;
use std::collections::{HashMap, HashSet};

/// The keywords replaced.
pub(super) const EXACT_KEYWORDS: [&str; 9] = [
    "const",
    "enum",
    "multipleOf",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "uniqueItems",
    "type",
];

/// The message of an error of these keywords; the renderer words it from the schema, as it does
/// the engine's own errors (see [`is_exact_error`]).
const MARKER: &str = "\u{0}exact";

/// Whether an engine error is one of these keywords'.
pub(super) fn is_exact_error(kind: &jsonschema::error::ValidationErrorKind) -> bool {
    matches!(kind, jsonschema::error::ValidationErrorKind::Custom { message, .. } if message == MARKER)
}

thread_local! {
    /// The numbers of the value being validated on this thread that their `Value` holds
    /// inexactly, by address: what the text states.
    static STATED: RefCell<HashMap<usize, Decimal>> = RefCell::new(HashMap::new());
    /// The first number on this thread that could not be judged, with its address.
    static UNREADABLE: RefCell<Option<usize>> = const { RefCell::new(None) };
}

/// Run `work` with the numbers of a value stated by its text: `stated` maps the address of each
/// number `Value` held inexactly to what the text says. Returns what `work` returns, and the
/// address of a number that could not be judged if one was met.
pub(super) fn with_stated<T>(
    stated: HashMap<usize, Decimal>,
    work: impl FnOnce() -> T,
) -> (T, Option<usize>) {
    STATED.with(|cell| *cell.borrow_mut() = stated);
    UNREADABLE.with(|cell| cell.borrow_mut().take());
    let out = work();
    STATED.with(|cell| cell.borrow_mut().clear());
    (out, UNREADABLE.with(|cell| cell.borrow_mut().take()))
}

/// The number an instance value states (`None` for a value that is not a number).
fn stated(value: &Value) -> Option<Decimal> {
    let Value::Number(number) = value else {
        return None;
    };
    let address = value as *const Value as usize;
    STATED
        .with(|cell| cell.borrow().get(&address).cloned())
        .or_else(|| Some(Decimal::of(number)))
}

/// What two numbers past the exponent limit cannot tell (see [`Decimal::is_beyond`]): the value
/// is then recorded as not judged.
fn cannot_tell(value: &Value) {
    let address = value as *const Value as usize;
    UNREADABLE.with(|cell| {
        cell.borrow_mut().get_or_insert(address);
    });
}

/// The number an instance value states, written out, where its `Value` holds it otherwise
/// (for messages: `(got 0.10000000000000000001)`, not `(got 0.1)`).
pub(super) fn stated_otherwise(value: &Value) -> Option<String> {
    let address = value as *const Value as usize;
    STATED.with(|cell| cell.borrow().get(&address).map(ToString::to_string))
}

/// A value a schema holds (`const`, an `enum` member), its numbers as the schema states them.
enum Expected {
    Number(Decimal),
    Array(Vec<Expected>),
    Object(HashMap<String, Expected>),
    /// A string, boolean or null: compared as it is.
    Other(Value),
}

impl Expected {
    /// `value` (held in the schema the engine is built from), each number as `number` reads it.
    fn of(value: &Value, number: &dyn Fn(&Value) -> Decimal) -> Expected {
        match value {
            Value::Number(_) => Expected::Number(number(value)),
            Value::Array(items) => {
                Expected::Array(items.iter().map(|v| Expected::of(v, number)).collect())
            }
            Value::Object(map) => Expected::Object(
                map.iter()
                    .map(|(k, v)| (k.clone(), Expected::of(v, number)))
                    .collect(),
            ),
            other => Expected::Other(other.clone()),
        }
    }
}

/// Whether an instance value equals a schema value, numbers compared exactly.
fn equal_to_schema(instance: &Value, schema: &Expected) -> bool {
    match (instance, schema) {
        (Value::Number(_), Expected::Number(expected)) => {
            stated(instance).is_some_and(|n| &n == expected)
        }
        (Value::Array(a), Expected::Array(b)) => {
            a.len() == b.len() && a.iter().zip(b).all(|(a, b)| equal_to_schema(a, b))
        }
        (Value::Object(a), Expected::Object(b)) => {
            a.len() == b.len()
                && a.iter()
                    .all(|(k, v)| b.get(k).is_some_and(|w| equal_to_schema(v, w)))
        }
        (a, Expected::Other(b)) => a == b,
        _ => false,
    }
}

/// A form of an instance value that two values share exactly when they are equal: numbers as
/// their decimal, members in key order. `None` when a number is past the exponent limit (and
/// then recorded as [`cannot_tell`]).
fn canonical(value: &Value, out: &mut String) -> Option<()> {
    match value {
        Value::Number(_) => {
            let decimal = stated(value)?;
            if decimal.is_beyond() {
                cannot_tell(value);
                return None;
            }
            out.push_str(&format!("#{decimal}"));
        }
        Value::Array(items) => {
            out.push('[');
            for item in items {
                canonical(item, out)?;
                out.push(',');
            }
            out.push(']');
        }
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            out.push('{');
            for key in keys {
                out.push_str(&Value::String(key.clone()).to_string());
                out.push(':');
                canonical(&map[key], out)?;
                out.push(',');
            }
            out.push('}');
        }
        other => out.push_str(&other.to_string()),
    }
    Some(())
}

enum Bound {
    Minimum,
    Maximum,
    ExclusiveMinimum,
    ExclusiveMaximum,
}

enum Exact {
    Const(Expected),
    Enum(Vec<Expected>),
    MultipleOf(Decimal),
    Bound(Bound, Decimal),
    UniqueItems,
    /// Always valid (`uniqueItems: false`, or a form the schema's meta-schema check refuses).
    Nothing,
    Type(Vec<String>),
}

impl Exact {
    fn holds(&self, instance: &Value) -> bool {
        match self {
            Exact::Const(expected) => equal_to_schema(instance, expected),
            Exact::Enum(options) => options.iter().any(|o| equal_to_schema(instance, o)),
            Exact::MultipleOf(divisor) => match instance {
                Value::Number(_) => stated(instance).is_some_and(|n| n.is_multiple_of(divisor)),
                _ => true,
            },
            Exact::Bound(bound, limit) => match instance {
                Value::Number(_) => stated(instance).is_some_and(|n| match bound {
                    Bound::Minimum => n >= *limit,
                    Bound::Maximum => n <= *limit,
                    Bound::ExclusiveMinimum => n > *limit,
                    Bound::ExclusiveMaximum => n < *limit,
                }),
                _ => true,
            },
            Exact::UniqueItems => match instance {
                Value::Array(items) => {
                    let mut seen = HashSet::with_capacity(items.len());
                    items.iter().all(|item| {
                        let mut form = String::new();
                        canonical(item, &mut form).is_some() && seen.insert(form)
                    })
                }
                _ => true,
            },
            Exact::Nothing => true,
            Exact::Type(names) => names.iter().any(|name| match (name.as_str(), instance) {
                ("null", Value::Null)
                | ("boolean", Value::Bool(_))
                | ("object", Value::Object(_))
                | ("array", Value::Array(_))
                | ("string", Value::String(_))
                | ("number", Value::Number(_)) => true,
                ("integer", Value::Number(_)) => stated(instance).is_some_and(|n| n.is_integer()),
                _ => false,
            }),
        }
    }
}

impl<'i> jsonschema::Keyword<'i> for Exact {
    fn validate(&self, instance: &'i Value) -> Result<(), jsonschema::ValidationError<'i>> {
        if self.holds(instance) {
            Ok(())
        } else {
            Err(jsonschema::ValidationError::custom(MARKER))
        }
    }

    fn is_valid(&self, instance: &'i Value) -> bool {
        self.holds(instance)
    }
}

/// The keyword `name` of a schema, compiled to judge numbers exactly; `number` reads each
/// number the schema holds (see [`SchemaNumbers`]).
pub(super) fn compile(
    name: &str,
    value: &Value,
    number: &dyn Fn(&Value) -> Decimal,
) -> Box<dyn for<'i> jsonschema::Keyword<'i>> {
    let bound = || value.is_number().then(|| number(value));
    let exact = match name {
        "const" => Exact::Const(Expected::of(value, number)),
        "enum" => match value {
            Value::Array(options) => {
                Exact::Enum(options.iter().map(|o| Expected::of(o, number)).collect())
            }
            _ => Exact::Nothing,
        },
        "multipleOf" => bound().map_or(Exact::Nothing, Exact::MultipleOf),
        "minimum" => bound().map_or(Exact::Nothing, |n| Exact::Bound(Bound::Minimum, n)),
        "maximum" => bound().map_or(Exact::Nothing, |n| Exact::Bound(Bound::Maximum, n)),
        "exclusiveMinimum" => {
            bound().map_or(Exact::Nothing, |n| Exact::Bound(Bound::ExclusiveMinimum, n))
        }
        "exclusiveMaximum" => {
            bound().map_or(Exact::Nothing, |n| Exact::Bound(Bound::ExclusiveMaximum, n))
        }
        "uniqueItems" if value == &Value::Bool(true) => Exact::UniqueItems,
        "type" => match value {
            Value::String(name) => Exact::Type(vec![name.clone()]),
            Value::Array(names) => Exact::Type(
                names
                    .iter()
                    .filter_map(Value::as_str)
                    .map(str::to_string)
                    .collect(),
            ),
            _ => Exact::Nothing,
        },
        _ => Exact::Nothing,
    };
    Box::new(exact)
}

/// How the numbers of a schema read: as its text states them where the `Value` holds them
/// otherwise (by the address of the number in the schema the engine is built from, which the
/// engine borrows while it compiles), else as the `Value` holds them ([`Decimal::of`] for a
/// schema read from text, whose other numbers read back as written; [`Decimal::held_by`] for
/// one built in code).
pub(super) struct SchemaNumbers {
    /// The stated numbers, by address.
    pub(super) stated: HashMap<usize, Decimal>,
    /// Whether the schema was read from text.
    pub(super) from_text: bool,
}

impl SchemaNumbers {
    /// The number `value` (a number of the schema) states.
    pub(super) fn read(&self, value: &Value) -> Decimal {
        let address = value as *const Value as usize;
        if let Some(stated) = self.stated.get(&address) {
            return stated.clone();
        }
        match value {
            Value::Number(n) if self.from_text => Decimal::of(n),
            Value::Number(n) => Decimal::held_by(n),
            // (Only numbers are asked for.)
            _ => Decimal::zero(),
        }
    }
}

/// Whether `schema` anywhere holds a keyword that compares numbers: then a number its value
/// holds inexactly may be judged otherwise than its text says.
pub(super) fn compares_numbers(schema: &Value) -> bool {
    crate::json::any_object(schema, |map: &Map<String, Value>| {
        map.iter().any(|(key, member)| match key.as_str() {
            "multipleOf" | "minimum" | "maximum" | "exclusiveMinimum" | "exclusiveMaximum" => {
                member.is_number()
            }
            "uniqueItems" => member == &Value::Bool(true),
            "type" => match member {
                Value::String(t) => t == "integer",
                Value::Array(types) => types.iter().any(|t| t == "integer"),
                _ => false,
            },
            "const" | "enum" => holds_number(member),
            _ => false,
        })
    })
}

fn holds_number(value: &Value) -> bool {
    match value {
        Value::Number(_) => true,
        Value::Array(items) => items.iter().any(holds_number),
        Value::Object(map) => map.values().any(holds_number),
        _ => false,
    }
}
