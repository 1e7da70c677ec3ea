//! One file per rule: its code, severity, documentation, check and tests.

pub mod array_without_items;
pub mod contradiction;
pub mod duplicate_name;
pub mod input_not_object;
pub mod invalid_field;
pub mod invalid_name;
pub mod lightweight_shape;
pub mod meta_schema;
pub mod missing_description;
pub mod missing_required;
pub mod name_clients_reject;
pub mod nonstandard_format;
pub mod open_object;
pub mod output_not_object;
pub mod property_description;
pub mod unbounded_size;
pub mod undeclared_required;
pub mod unresolved_ref;
pub mod unsupported_dialect;
pub mod untyped_property;
pub mod weak_description;
