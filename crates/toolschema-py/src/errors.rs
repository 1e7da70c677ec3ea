//! Raising the exceptions of `toolschema.errors` (defined in Python, so that each can also derive
//! from the built-in exception a caller expects).

use pyo3::prelude::*;

/// An exception of `toolschema.errors` being built.
pub(crate) struct Raise<'py> {
    exception: PyResult<Bound<'py, PyAny>>,
}

impl<'py> Raise<'py> {
    /// The exception `class` with `message`.
    pub(crate) fn new(py: Python<'py>, class: &str, message: String) -> Self {
        let exception = py
            .import("toolschema.errors")
            .and_then(|module| module.getattr(class))
            .and_then(|class| class.call1((message,)));
        Raise { exception }
    }

    /// Set attribute `name` to `value`.
    pub(crate) fn with<V: IntoPyObject<'py>>(self, name: &str, value: V) -> Self {
        if let Ok(exception) = &self.exception {
            if let Err(e) = exception.setattr(name, value) {
                return Raise { exception: Err(e) };
            }
        }
        self
    }

    /// The exception as an error to return.
    pub(crate) fn err(self) -> PyErr {
        match self.exception {
            Ok(exception) => PyErr::from_value(exception),
            Err(e) => e,
        }
    }
}

/// The exception `class` of `toolschema.errors` with `message`.
pub(crate) fn raise(py: Python<'_>, class: &str, message: String) -> PyErr {
    Raise::new(py, class, message).err()
}

/// `CatalogError` (or `JSONError` for text that is not JSON) for a catalog that cannot be read.
pub(crate) fn catalog_error(py: Python<'_>, error: &toolschema::CatalogError) -> PyErr {
    let class = match error.kind {
        toolschema::catalog::CatalogErrorKind::Syntax(_) => "JSONError",
        _ => "CatalogError",
    };
    Raise::new(py, class, error.to_string())
        .with("file", error.file.as_str())
        .with("line", error.position.map(|p| p.line))
        .with("column", error.position.map(|p| p.column))
        .err()
}
