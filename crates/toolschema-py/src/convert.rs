//! Python values to JSON text and back.
//!
//! Arguments given as Python objects are written as the JSON text `json.dumps` would write, then
//! read by the core's reader: the validator judges that text exactly as the command judges the
//! same text (a big integer keeps every digit; a lone surrogate stays a lone surrogate).

use crate::errors::raise;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyBytes, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};
use serde_json::Value;
use toolschema::json::host::{self, TextNotes};

/// The JSON text of a Python value: `None`, `bool`, `int`, `float`, `str`, `list`, `tuple` and
/// `dict` with `str` keys, nested at most [`toolschema::json::MAX_DEPTH`] deep (deeper values
/// are refused while writing, so a 100,000-deep list or a list holding itself never exhausts
/// the stack). A `str` or `bytes` given where a value is expected is taken as JSON text itself.
pub(crate) fn json_text_of(value: &Bound<'_, PyAny>, what: &str) -> PyResult<String> {
    if let Ok(text) = value.cast::<PyString>() {
        return text.to_cow().map(|s| s.into_owned()).map_err(|_| {
            raise(
                value.py(),
                "NotJSONError",
                format!("{what}: the JSON text is not valid Unicode (it holds a lone surrogate)"),
            )
        });
    }
    if let Ok(bytes) = value.cast::<PyBytes>() {
        return String::from_utf8(bytes.as_bytes().to_vec()).map_err(|e| {
            raise(
                value.py(),
                "NotJSONError",
                format!(
                    "{what}: the JSON text is not valid UTF-8 (at byte {})",
                    e.utf8_error().valid_up_to()
                ),
            )
        });
    }
    let mut out = Vec::with_capacity(64);
    write_value(value, &mut out, 0, what)?;
    // Only valid UTF-8 is ever written: strings come from `str` and escapes are ASCII.
    String::from_utf8(out)
        .map_err(|_| raise(value.py(), "NotJSONError", format!("{what}: not UTF-8")))
}

/// The JSON value of `text`, read by the core's reader; a syntax error raises `JSONError` with
/// the line and column.
pub(crate) fn parse(py: Python<'_>, name: &str, text: &str) -> PyResult<Value> {
    toolschema::json::parse_named(name, text).map_err(|e| json_error(py, &e))
}

/// `JSONError` for a placed syntax error.
pub(crate) fn json_error(py: Python<'_>, error: &toolschema::json::PlacedSyntaxError) -> PyErr {
    crate::errors::Raise::new(py, "JSONError", error.to_string())
        .with("file", error.name.as_str())
        .with("line", error.position.line)
        .with("column", error.position.column)
        .err()
}

fn not_json(value: &Bound<'_, PyAny>, what: &str, problem: String) -> PyErr {
    raise(value.py(), "NotJSONError", format!("{what}: {problem}"))
}

fn write_value(
    value: &Bound<'_, PyAny>,
    out: &mut Vec<u8>,
    depth: usize,
    what: &str,
) -> PyResult<()> {
    if value.is_none() {
        out.extend_from_slice(b"null");
    } else if let Ok(flag) = value.cast::<PyBool>() {
        out.extend_from_slice(if flag.is_true() { b"true" } else { b"false" });
    } else if let Ok(text) = value.cast::<PyString>() {
        write_string(text, out, what)?;
    } else if let Ok(int) = value.cast::<PyInt>() {
        if let Ok(n) = int.extract::<i64>() {
            out.extend_from_slice(n.to_string().as_bytes());
        } else {
            out.extend_from_slice(big_int_digits(int)?.as_bytes());
        }
    } else if let Ok(float) = value.cast::<PyFloat>() {
        let f = float.value();
        match serde_json::Number::from_f64(f) {
            // The shortest text that reads back as the same float, as `repr` gives.
            Some(number) => out.extend_from_slice(number.to_string().as_bytes()),
            None => return Err(not_json(value, what, format!("{f} is not a JSON number"))),
        }
    } else if let Ok(dict) = value.cast::<PyDict>() {
        enter(value, depth, what)?;
        out.push(b'{');
        for (i, (key, item)) in dict.iter().enumerate() {
            if i > 0 {
                out.push(b',');
            }
            let key = str_key(value, &key, what)?;
            write_string(key, out, what)?;
            out.push(b':');
            write_value(&item, out, depth + 1, what)?;
        }
        out.push(b'}');
    } else if let Ok(list) = value.cast::<PyList>() {
        enter(value, depth, what)?;
        out.push(b'[');
        for (i, item) in list.iter().enumerate() {
            if i > 0 {
                out.push(b',');
            }
            write_value(&item, out, depth + 1, what)?;
        }
        out.push(b']');
    } else if let Ok(tuple) = value.cast::<PyTuple>() {
        enter(value, depth, what)?;
        out.push(b'[');
        for (i, item) in tuple.iter().enumerate() {
            if i > 0 {
                out.push(b',');
            }
            write_value(&item, out, depth + 1, what)?;
        }
        out.push(b']');
    } else {
        return Err(not_a_json_value(value, what));
    }
    Ok(())
}

/// A dict's key, which must be a `str` to be JSON.
fn str_key<'a, 'py>(
    dict: &Bound<'py, PyAny>,
    key: &'a Bound<'py, PyAny>,
    what: &str,
) -> PyResult<&'a Bound<'py, PyString>> {
    key.cast::<PyString>().map_err(|_| {
        let kind = type_name(key);
        not_json(
            dict,
            what,
            format!("a dict key must be a str to be JSON (got {kind})"),
        )
    })
}

/// The name of a value's type, for messages.
fn type_name(value: &Bound<'_, PyAny>) -> String {
    value
        .get_type()
        .name()
        .map_or_else(|_| "?".to_owned(), |name| name.to_string())
}

/// The refusal of a Python value that has no JSON form.
fn not_a_json_value(value: &Bound<'_, PyAny>, what: &str) -> PyErr {
    let kind = type_name(value);
    not_json(
        value,
        what,
        format!("a {kind} is not a JSON value (use dict, list, str, int, float, bool or None)"),
    )
}

/// Every digit of an `int` past 64 bits, as Python writes the number (`int.__repr__`, not the
/// `str()` of a subclass such as an IntEnum).
fn big_int_digits(int: &Bound<'_, PyInt>) -> PyResult<String> {
    let digits = int
        .py()
        .get_type::<PyInt>()
        .call_method1("__repr__", (int,))?;
    Ok(digits.cast::<PyString>()?.to_cow()?.into_owned())
}

/// Refuse an array or object nested past the depth the core reads JSON to.
fn enter(value: &Bound<'_, PyAny>, depth: usize, what: &str) -> PyResult<()> {
    match host::too_deep(depth) {
        Some(problem) => Err(not_json(value, what, problem)),
        None => Ok(()),
    }
}

/// A `str` as a JSON string. A string holding a lone surrogate (which Python allows and UTF-8
/// cannot carry) is written with `\u` escapes, as `json.dumps` writes it.
fn write_string(text: &Bound<'_, PyString>, out: &mut Vec<u8>, what: &str) -> PyResult<()> {
    if let Ok(s) = text.to_cow() {
        return serde_json::to_writer(&mut *out, &*s)
            .map_err(|e| raise(text.py(), "NotJSONError", format!("{what}: {e}")));
    }
    let units = text.call_method1("encode", ("utf-16-le", "surrogatepass"))?;
    let units = units.cast::<PyBytes>()?.as_bytes();
    out.push(b'"');
    let mut pending = Vec::new();
    for pair in units.chunks_exact(2) {
        let unit = u16::from_le_bytes([pair[0], pair[1]]);
        if (0xD800..0xE000).contains(&unit) {
            flush_units(&mut pending, out);
            out.extend_from_slice(format!("\\u{unit:04x}").as_bytes());
        } else {
            pending.push(unit);
        }
    }
    flush_units(&mut pending, out);
    out.push(b'"');
    Ok(())
}

/// Write UTF-16 units holding no surrogate as the inside of a JSON string.
fn flush_units(units: &mut Vec<u16>, out: &mut Vec<u8>) {
    if units.is_empty() {
        return;
    }
    let text = String::from_utf16_lossy(units);
    let quoted = serde_json::Value::String(text).to_string();
    out.extend_from_slice(&quoted.as_bytes()[1..quoted.len() - 1]);
    units.clear();
}

/// A JSON value as a Python value (`json.loads` of its text: dicts keep their order).
pub(crate) fn to_python<'py>(py: Python<'py>, value: &Value) -> PyResult<Bound<'py, PyAny>> {
    let text = value.to_string();
    py.import("json")?.call_method1("loads", (text,))
}

/// A value to validate: JSON text given as a `str` or `bytes` (read by the core's reader), or a
/// Python value built straight into the core's value, with what its JSON text would have told
/// (see [`toolschema::json::host`]): no text is written or read for it.
pub(crate) enum Given {
    /// JSON text, and the value read from it.
    Text(String, Value),
    /// A Python value, what its text would have told, and how many values it holds.
    Built(Value, TextNotes, usize),
}

impl Given {
    /// Read or build `value`; errors as [`json_text_of`] and [`parse`] raise them.
    pub(crate) fn of(py: Python<'_>, value: &Bound<'_, PyAny>, what: &str) -> PyResult<Given> {
        if value.is_instance_of::<PyString>() || value.is_instance_of::<PyBytes>() {
            let text = json_text_of(value, what)?;
            let read = parse(py, what, &text)?;
            return Ok(Given::Text(text, read));
        }
        let mut notes = TextNotes::default();
        let mut builder = Builder { what, count: 0 };
        let built = builder.value(value, 0, &mut notes)?;
        Ok(Given::Built(built, notes, builder.count))
    }

    /// The value.
    pub(crate) fn value(&self) -> &Value {
        match self {
            Given::Text(_, value) | Given::Built(value, _, _) => value,
        }
    }

    /// About how many bytes its JSON text has (what decides whether to release the GIL).
    pub(crate) fn size(&self) -> usize {
        match self {
            Given::Text(text, _) => text.len(),
            // A value of a tool call's arguments writes as about this many bytes on average.
            Given::Built(_, _, count) => count * 8,
        }
    }
}

/// Builds the core's values of Python values (see [`Given::of`]).
struct Builder<'a> {
    /// What the value is, for messages.
    what: &'a str,
    /// How many values were built.
    count: usize,
}

impl Builder<'_> {
    /// The core's value of a Python value (see [`json_text_of`] for what is accepted), noting
    /// in `notes` what its JSON text would state beyond it.
    fn value(
        &mut self,
        value: &Bound<'_, PyAny>,
        depth: usize,
        notes: &mut TextNotes,
    ) -> PyResult<Value> {
        self.count += 1;
        // The exact built-in types that arguments are made of, told by one comparison each;
        // then every accepted type with its subclasses (an `IntEnum`, an `OrderedDict`), `bool`
        // before `int`, its base.
        if let Ok(text) = value.cast_exact::<PyString>() {
            return Ok(Value::String(string_of(text, notes)?));
        }
        if let Ok(dict) = value.cast_exact::<PyDict>() {
            return self.dict(value, dict, depth, notes);
        }
        if let Ok(int) = value.cast_exact::<PyInt>() {
            return self.int(value, int, notes);
        }
        if let Ok(list) = value.cast_exact::<PyList>() {
            enter(value, depth, self.what)?;
            return self.items(list.iter(), list.len(), depth, notes);
        }
        if value.is_none() {
            return Ok(Value::Null);
        }
        if let Ok(flag) = value.cast::<PyBool>() {
            return Ok(Value::Bool(flag.is_true()));
        }
        if let Ok(text) = value.cast::<PyString>() {
            return Ok(Value::String(string_of(text, notes)?));
        }
        if let Ok(int) = value.cast::<PyInt>() {
            return self.int(value, int, notes);
        }
        if let Ok(float) = value.cast::<PyFloat>() {
            let f = float.value();
            // A float is held as itself: its shortest text reads back as the same float.
            return serde_json::Number::from_f64(f)
                .map(Value::Number)
                .ok_or_else(|| not_json(value, self.what, format!("{f} is not a JSON number")));
        }
        if let Ok(dict) = value.cast::<PyDict>() {
            return self.dict(value, dict, depth, notes);
        }
        if let Ok(list) = value.cast::<PyList>() {
            enter(value, depth, self.what)?;
            return self.items(list.iter(), list.len(), depth, notes);
        }
        if let Ok(tuple) = value.cast::<PyTuple>() {
            enter(value, depth, self.what)?;
            return self.items(tuple.iter(), tuple.len(), depth, notes);
        }
        Err(not_a_json_value(value, self.what))
    }

    /// An `int`, exact at any size.
    fn int(
        &self,
        value: &Bound<'_, PyAny>,
        int: &Bound<'_, PyInt>,
        notes: &mut TextNotes,
    ) -> PyResult<Value> {
        if let Ok(n) = int.extract::<i64>() {
            return Ok(Value::from(n));
        }
        if let Ok(n) = int.extract::<u64>() {
            return Ok(Value::from(n));
        }
        // Past 64 bits: read from its literal as the reader reads it in a text.
        let digits = big_int_digits(int)?;
        host::integer_literal(&digits, notes)
            .ok_or_else(|| not_json(value, self.what, format!("{digits} is not a JSON number")))
    }

    /// A `dict` with `str` keys, as an object.
    fn dict(
        &mut self,
        value: &Bound<'_, PyAny>,
        dict: &Bound<'_, PyDict>,
        depth: usize,
        notes: &mut TextNotes,
    ) -> PyResult<Value> {
        let what = self.what;
        enter(value, depth, what)?;
        let mut map = serde_json::Map::with_capacity(dict.len());
        for (key, item) in dict.iter() {
            let key = str_key(value, &key, what)?;
            let key = string_of(key, notes)?;
            let mut inner = TextNotes::default();
            let item = self.value(&item, depth + 1, &mut inner)?;
            if !inner.is_empty() {
                notes.nest(&key, inner);
            }
            // Two keys with lone surrogates may read alike (both U+FFFD), and JSON text
            // holding both is refused as holding a duplicate key: so is the dict.
            if let Some((key, _)) = notes
                .lone_surrogates
                .then(|| map.get_key_value(&key))
                .flatten()
            {
                return Err(not_json(
                    value,
                    what,
                    format!("duplicate key '{key}' in a dict (its lone surrogates read as U+FFFD)"),
                ));
            }
            map.insert(key, item);
        }
        Ok(Value::Object(map))
    }

    /// The items of a list or tuple, as an array.
    fn items<'py>(
        &mut self,
        items: impl Iterator<Item = Bound<'py, PyAny>>,
        len: usize,
        depth: usize,
        notes: &mut TextNotes,
    ) -> PyResult<Value> {
        let mut built = Vec::with_capacity(len);
        for (i, item) in items.enumerate() {
            let mut inner = TextNotes::default();
            built.push(self.value(&item, depth + 1, &mut inner)?);
            if !inner.is_empty() {
                notes.nest(&i.to_string(), inner);
            }
        }
        Ok(Value::Array(built))
    }
}

/// A `str` as the core holds it: a lone surrogate (which Python allows and UTF-8 cannot
/// carry) as U+FFFD, noted, as the reader reads the `\u` escape `json.dumps` writes for it.
fn string_of(text: &Bound<'_, PyString>, notes: &mut TextNotes) -> PyResult<String> {
    if let Ok(s) = text.to_cow() {
        return Ok(s.into_owned());
    }
    let units = text.call_method1("encode", ("utf-16-le", "surrogatepass"))?;
    let units = units.cast::<PyBytes>()?.as_bytes();
    let units = units
        .chunks_exact(2)
        .map(|pair| u16::from_le_bytes([pair[0], pair[1]]));
    Ok(host::string_of_utf16(units, notes))
}
