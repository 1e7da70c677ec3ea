//! The JSON Schema types a value has, as the validator reads them.

use serde_json::Value;

/// A JSON Schema type name, as `type` writes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum JsonType {
    /// `null`.
    Null,
    /// `true` or `false`.
    Boolean,
    /// A number without a fraction (`2.0` too).
    Integer,
    /// Any number.
    Number,
    /// A string.
    String,
    /// An array.
    Array,
    /// An object.
    Object,
}

impl JsonType {
    /// Every type.
    pub const ALL: [JsonType; 7] = [
        JsonType::Null,
        JsonType::Boolean,
        JsonType::Integer,
        JsonType::Number,
        JsonType::String,
        JsonType::Array,
        JsonType::Object,
    ];

    /// The name `type` gives it.
    pub fn name(self) -> &'static str {
        match self {
            JsonType::Null => "null",
            JsonType::Boolean => "boolean",
            JsonType::Integer => "integer",
            JsonType::Number => "number",
            JsonType::String => "string",
            JsonType::Array => "array",
            JsonType::Object => "object",
        }
    }

    /// The type `name` names, if any.
    pub fn named(name: &str) -> Option<JsonType> {
        JsonType::ALL.into_iter().find(|t| t.name() == name)
    }
}

/// The narrowest JSON Schema type of `value`: `integer` for a number whose value has no
/// fraction, however it is written (`2`, `2.0`, `-0.0`, `1e300`, an integer past 64 bits), as
/// JSON Schema (draft-06 on, 2020-12 among them) and the validator read it; `number` for any
/// other number.
pub fn value_type(value: &Value) -> JsonType {
    match value {
        Value::Null => JsonType::Null,
        Value::Bool(_) => JsonType::Boolean,
        Value::Number(n) if n.is_i64() || n.is_u64() => JsonType::Integer,
        // Every float serde_json holds is finite: a whole one is an integer.
        Value::Number(n) if n.as_f64().is_some_and(|f| f.fract() == 0.0) => JsonType::Integer,
        Value::Number(_) => JsonType::Number,
        Value::String(_) => JsonType::String,
        Value::Array(_) => JsonType::Array,
        Value::Object(_) => JsonType::Object,
    }
}

/// Whether `value` has the JSON Schema type `t`: its own type, or `number` for an integer.
pub fn has_type(value: &Value, t: JsonType) -> bool {
    let own = value_type(value);
    own == t || (own == JsonType::Integer && t == JsonType::Number)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::Dialect;
    use proptest::prelude::*;
    use serde_json::{json, Map};

    /// Numbers as JSON texts: whole floats, signed zeros, the largest floats, integers past 64
    /// bits, exact decimal spellings of integers, and plain fractions.
    fn number_text() -> impl Strategy<Value = String> {
        prop_oneof![
            any::<i64>().prop_map(|i| i.to_string()),
            any::<u64>().prop_map(|u| u.to_string()),
            any::<i64>().prop_map(|i| format!("{i}.0")),
            (any::<i32>(), 0u32..400).prop_map(|(m, e)| format!("{m}e{e}")),
            (any::<i32>(), 0u32..30).prop_map(|(m, e)| format!("{m}.5e-{e}")),
            "-?[1-9][0-9]{19,40}",
            "-?[1-9][0-9]{0,5}\\.[0-9]{1,5}",
            any::<f64>()
                .prop_filter("finite", |f| f.is_finite())
                .prop_map(|f| serde_json::to_string(&f).unwrap()),
            prop::sample::select(vec![
                "2.0",
                "-0.0",
                "0.0",
                "-0",
                "1e300",
                "1E300",
                "1.7976931348623157e308",
                "9007199254740993",
                "9007199254740993.0",
                "1.0e2",
                "100e-2",
                "5e-324",
                "0.1",
                "18446744073709551616",
                "-9223372036854775809",
            ])
            .prop_map(str::to_string),
        ]
    }

    fn value() -> impl Strategy<Value = Value> {
        prop_oneof![
            // Read as the JSON reader holds them.
            4 => number_text().prop_filter_map("a JSON number", |t| crate::json::reader::parse(&t).ok()),
            1 => Just(Value::Null),
            1 => any::<bool>().prop_map(Value::Bool),
            1 => "[a-z0-9.]{0,4}".prop_map(Value::String),
            1 => Just(json!([2.0])),
            1 => Just(json!({"a": 2.0})),
        ]
    }

    fn validators() -> Vec<(JsonType, Dialect, jsonschema::Validator)> {
        let mut out = Vec::new();
        for t in JsonType::ALL {
            for dialect in [Dialect::Draft202012, Dialect::Draft7] {
                let validator = jsonschema::options()
                    .with_draft(dialect.engine_draft())
                    .build(&json!({"type": t.name()}))
                    .unwrap();
                out.push((t, dialect, validator));
            }
        }
        out
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(512))]

        /// The one value-type function, the validator (`{"type": T}`) and each former copy's
        /// caller agree: lint's value fit, generate's type facts, and the type adapt writes for
        /// a `const`.
        #[test]
        fn every_reader_of_value_types_agrees_with_the_validator(value in value()) {
            let cache = crate::lint::context::RunCache::default();
            for (t, dialect, validator) in validators() {
                let valid = validator.is_valid(&value);
                prop_assert_eq!(has_type(&value, t), valid, "{} {} {}", value, t.name(), dialect);
                // lint: a value that fits a schema of one type.
                let mut schema = Map::new();
                schema.insert("type".into(), Value::String(t.name().into()));
                let misfit = crate::lint::value_fit::misfit(
                    &value,
                    &schema,
                    crate::lint::value_fit::Skip(&[]),
                    &cache,
                );
                prop_assert_eq!(misfit.is_none(), valid, "lint {} {} {:?}", value, t.name(), misfit);
                // generate: an enum value kept among the allowed types.
                let facts = crate::generate::facts::Types::named(t.name());
                prop_assert_eq!(facts.any(crate::generate::facts::type_of(&value)), valid, "generate {} {}", value, t.name());
            }
            // adapt: the type written for a `const` accepts it.
            let written = value_type(&value);
            let validator = jsonschema::validator_for(&json!({"type": written.name()})).unwrap();
            prop_assert!(validator.is_valid(&value), "adapt {} {}", value, written.name());
        }
    }

    #[test]
    fn whole_numbers_are_integers_however_written() {
        for text in ["2", "2.0", "-0.0", "1e300", "18446744073709551616", "1.0e2"] {
            let value: Value = serde_json::from_str(text).unwrap();
            assert_eq!(value_type(&value), JsonType::Integer, "{text}");
            assert!(has_type(&value, JsonType::Number), "{text}");
        }
        for text in ["2.5", "5e-324", "0.1"] {
            let value: Value = serde_json::from_str(text).unwrap();
            assert_eq!(value_type(&value), JsonType::Number, "{text}");
            assert!(!has_type(&value, JsonType::Integer), "{text}");
        }
    }
}
