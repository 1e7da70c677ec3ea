//! Numbers are judged as their JSON text states them: for `const`, `enum`, `multipleOf`, the
//! four bounds and `uniqueItems`, the verdict of [`SchemaValidator::validate_text`] on a value
//! read from text equals that of a reference evaluator written here on its own, with rational
//! arithmetic over big integers, on numbers at the edges (2^53 ± 1, 1e308, 1e-320, negative
//! zero, 100-digit integers, long fractions, large exponents). No value is left unchecked.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use num_bigint::BigInt;
use proptest::prelude::*;
use serde_json::Value;
use toolschema::json::number::StatedNumbers;
use toolschema::{Catalog, CompileOptions, SchemaValidator, Subject};

/// A JSON number text as a fraction `numerator / denominator`, both big integers.
#[derive(Debug, Clone)]
struct Rational {
    numerator: BigInt,
    denominator: BigInt,
}

/// The value a JSON number text states, read digit by digit.
fn rational(text: &str) -> Rational {
    let (mantissa, exponent) = match text.find(['e', 'E']) {
        Some(at) => (&text[..at], text[at + 1..].parse::<i64>().unwrap()),
        None => (text, 0),
    };
    let (whole, fraction) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    let digits: BigInt = format!("{whole}{fraction}").parse().unwrap();
    let exponent = exponent - fraction.len() as i64;
    let ten = BigInt::from(10);
    if exponent >= 0 {
        Rational {
            numerator: digits * ten.pow(exponent as u32),
            denominator: BigInt::from(1),
        }
    } else {
        Rational {
            numerator: digits,
            denominator: ten.pow((-exponent) as u32),
        }
    }
}

fn compare(a: &str, b: &str) -> std::cmp::Ordering {
    let (a, b) = (rational(a), rational(b));
    (&a.numerator * &b.denominator).cmp(&(&b.numerator * &a.denominator))
}

fn multiple_of(a: &str, b: &str) -> bool {
    // a / b = (an · bd) / (ad · bn): whole when the denominator divides the numerator.
    let (a, b) = (rational(a), rational(b));
    let numerator = &a.numerator * &b.denominator;
    let denominator = &a.denominator * &b.numerator;
    (numerator % denominator) == BigInt::from(0)
}

/// A keyword over numbers, with the schema's number(s) as text.
#[derive(Debug, Clone)]
enum Keyword {
    Const(String),
    Enum(Vec<String>),
    MultipleOf(String),
    Minimum(String),
    Maximum(String),
    ExclusiveMinimum(String),
    ExclusiveMaximum(String),
    /// The instance is an array of the numbers.
    UniqueItems,
}

impl Keyword {
    fn schema(&self) -> String {
        match self {
            Keyword::Const(n) => format!(r#"{{"const": {n}}}"#),
            Keyword::Enum(ns) => format!(r#"{{"enum": ["x", {}]}}"#, ns.join(", ")),
            Keyword::MultipleOf(n) => format!(r#"{{"multipleOf": {n}}}"#),
            Keyword::Minimum(n) => format!(r#"{{"minimum": {n}}}"#),
            Keyword::Maximum(n) => format!(r#"{{"maximum": {n}}}"#),
            Keyword::ExclusiveMinimum(n) => format!(r#"{{"exclusiveMinimum": {n}}}"#),
            Keyword::ExclusiveMaximum(n) => format!(r#"{{"exclusiveMaximum": {n}}}"#),
            Keyword::UniqueItems => r#"{"uniqueItems": true}"#.into(),
        }
    }

    /// The reference verdict on the instance numbers.
    fn holds(&self, numbers: &[String]) -> bool {
        use std::cmp::Ordering::*;
        let n = &numbers[0];
        match self {
            Keyword::Const(c) => compare(n, c) == Equal,
            Keyword::Enum(cs) => cs.iter().any(|c| compare(n, c) == Equal),
            Keyword::MultipleOf(m) => multiple_of(n, m),
            Keyword::Minimum(b) => compare(n, b) != Less,
            Keyword::Maximum(b) => compare(n, b) != Greater,
            Keyword::ExclusiveMinimum(b) => compare(n, b) == Greater,
            Keyword::ExclusiveMaximum(b) => compare(n, b) == Less,
            Keyword::UniqueItems => numbers
                .iter()
                .enumerate()
                .all(|(i, a)| numbers[..i].iter().all(|b| compare(a, b) != Equal)),
        }
    }
}

/// Integers around 2^53 and a few other places, as text.
fn edge_integer() -> impl Strategy<Value = String> {
    prop_oneof![
        (-3i64..=3).prop_map(|d| (9_007_199_254_740_992i64 + d).to_string()),
        (-3i64..=3).prop_map(|d| (-9_007_199_254_740_992i64 + d).to_string()),
        (-3i64..=3).prop_map(|d| (4_503_599_627_370_496i64 + d).to_string()),
        Just(u64::MAX.to_string()),
        Just(i64::MIN.to_string()),
        (-20i64..=20).prop_map(|n| n.to_string()),
    ]
}

/// Any number text JSON allows near the edges, the way a client may write it.
fn instance_number() -> impl Strategy<Value = String> {
    prop_oneof![
        edge_integer(),
        edge_integer().prop_map(|n| format!("{n}.0")),
        edge_integer().prop_map(|n| format!("{n}.5")),
        edge_integer().prop_map(|n| format!("{n}.0000000000000000000001")),
        (1u32..9, -2i64..=2).prop_map(|(d, e)| format!("{d}e{}", 308 + e)),
        (1u32..9, -5i64..=5).prop_map(|(d, e)| format!("{d}e-{}", 320 + e)),
        (1u32..9, -30i64..=30).prop_map(|(d, e)| format!("-{d}.25e{e}")),
        Just("1.7976931348623157e308".into()),
        Just("1e400".into()),
        Just("-1e400".into()),
        Just("1e-400".into()),
        Just("5e-324".into()),
        Just("0".into()),
        Just("-0".into()),
        Just("-0.0".into()),
        Just("0e5".into()),
        "[1-9][0-9]{99}".prop_map(|s| s),
        "-[1-9][0-9]{99}\\.0".prop_map(|s| s),
        "[1-9][0-9]{0,20}\\.[0-9]{1,25}".prop_map(|s| s),
        (0u32..1000, -3i64..=3).prop_map(|(n, e)| format!("{}e{e}", n as f64 / 10.0)),
        "0\\.[0-9]{1,3}".prop_map(|s| s),
        "0\\.(1|3|7)0{15,20}1".prop_map(|s| s),
    ]
}

/// A number a schema states: what serde_json writes for a float or an integer, and any number
/// text an instance may hold (a schema read from text is compared as its text states it).
fn schema_number() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => written_schema_number(),
        1 => instance_number(),
    ]
}

/// What serde_json writes for a float or an integer.
fn written_schema_number() -> impl Strategy<Value = String> {
    prop_oneof![
        edge_integer(),
        (1u32..=17, -2i64..=0).prop_map(|(d, e)| format!("{}e{}", f64::from(d) / 10.0, 308 + e)),
        Just("1e-320".into()),
        Just("5e-324".into()),
        Just("1.7976931348623157e308".into()),
        Just("0.1".into()),
        Just("0.3".into()),
        Just("0.0001".into()),
        Just("9007199254740992.0".into()),
        (0u32..100).prop_map(|n| format!("{}", n as f64 / 4.0)),
        (1u32..1000).prop_map(|n| format!("{}", n as f64 / 100.0)),
    ]
    .prop_map(|text| {
        // As a schema read into a `Value` holds it (a float written as its shortest decimal).
        let value: Value = serde_json::from_str(&text).unwrap();
        value.to_string()
    })
}

fn positive_schema_number() -> impl Strategy<Value = String> {
    // (A divisor below the smallest float reads as 0, which the meta-schema refuses.)
    schema_number().prop_filter("multipleOf is positive", |n| {
        !n.starts_with('-')
            && compare(n, "0") == std::cmp::Ordering::Greater
            && n.parse::<f64>().is_ok_and(|f| f > 0.0)
    })
}

fn keyword() -> impl Strategy<Value = Keyword> {
    prop_oneof![
        schema_number().prop_map(Keyword::Const),
        proptest::collection::vec(schema_number(), 1..4).prop_map(Keyword::Enum),
        positive_schema_number().prop_map(Keyword::MultipleOf),
        schema_number().prop_map(Keyword::Minimum),
        schema_number().prop_map(Keyword::Maximum),
        schema_number().prop_map(Keyword::ExclusiveMinimum),
        schema_number().prop_map(Keyword::ExclusiveMaximum),
        Just(Keyword::UniqueItems),
    ]
}

/// Instance numbers, some of them the schema's own written otherwise (so that equal values
/// are common).
fn case() -> impl Strategy<Value = (Keyword, Vec<String>)> {
    (
        keyword(),
        proptest::collection::vec(instance_number(), 1..4),
        any::<u8>(),
    )
        .prop_map(|(keyword, mut numbers, pick)| {
            let own = match &keyword {
                Keyword::Const(n)
                | Keyword::MultipleOf(n)
                | Keyword::Minimum(n)
                | Keyword::Maximum(n)
                | Keyword::ExclusiveMinimum(n)
                | Keyword::ExclusiveMaximum(n) => Some(n.clone()),
                Keyword::Enum(ns) => Some(ns[pick as usize % ns.len()].clone()),
                Keyword::UniqueItems => Some(numbers[0].clone()),
            };
            if let Some(own) = own {
                match pick % 4 {
                    0 => numbers[0] = own,
                    1 if !own.contains(['.', 'e']) => numbers[0] = format!("{own}.000"),
                    2 if !own.contains('e') => numbers.push(format!("{own}e0")),
                    2 => numbers.push(own),
                    _ => {}
                }
            }
            (keyword, numbers)
        })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 3000, ..ProptestConfig::default() })]

    #[test]
    fn verdicts_equal_the_reference_evaluators((keyword, numbers) in case()) {
        let validator = read_schema(&keyword.schema());
        let text = match keyword {
            Keyword::UniqueItems => format!("[{}]", numbers.join(", ")),
            _ => numbers[0].clone(),
        };
        let instance = toolschema::json::parse(&text).unwrap();
        let verdict = validator.validate_text(&instance, &text, Subject::Value);
        if let Err(errors) = &verdict {
            prop_assert!(!errors.is_unchecked(), "{} on {text}: {errors}", keyword.schema());
        }
        prop_assert_eq!(
            verdict.is_ok(),
            keyword.holds(&numbers),
            "{} on {}: {:?}", keyword.schema(), text, verdict
        );
        // The same value inside an object, as arguments are.
        let wrapped = format!(r#"{{"v": {text}, "w": [{text}]}}"#);
        let validator = read_schema(&format!(
            r#"{{"properties": {{"v": {}, "w": {{"items": {}}}}}}}"#,
            keyword.schema(), keyword.schema()
        ));
        let instance = toolschema::json::parse(&wrapped).unwrap();
        let verdict = validator.validate_text(&instance, &wrapped, Subject::Arguments);
        prop_assert_eq!(verdict.is_ok(), keyword.holds(&numbers), "{}: {:?}", wrapped, verdict);
    }

    /// A number where a string is expected is said to be so in the same words whether or not
    /// the schema elsewhere makes the numbers be judged exactly (an `integer` sibling does).
    #[test]
    fn a_number_of_the_wrong_type_is_told_alike_when_numbers_are_judged_exactly(
        number in instance_number()
    ) {
        let arguments = format!(r#"{{"note": {number}}}"#);
        let instance = toolschema::json::parse(&arguments).unwrap();
        let mut said = Vec::new();
        for schema in [
            r#"{"type": "object", "properties": {"note": {"type": "string"}}}"#,
            r#"{"type": "object", "properties": {"note": {"type": "string"}, "n": {"type": "integer"}}}"#,
        ] {
            let errors = read_schema(schema)
                .validate_text(&instance, &arguments, Subject::Arguments)
                .expect_err("a number is not a string");
            let messages: Vec<String> = errors.into_vec().into_iter().map(|e| e.message).collect();
            prop_assert_eq!(messages.len(), 1, "{}", arguments);
            prop_assert!(
                messages[0].starts_with("argument 'note' must be a string (got "),
                "{} against {}: {:?}", arguments, schema, messages
            );
            said.push(messages);
        }
        prop_assert_eq!(&said[0], &said[1], "{}", arguments);
    }
}

/// A schema compiled from its text, its numbers as the text states them.
fn read_schema(text: &str) -> SchemaValidator {
    let schema = toolschema::json::parse(text).unwrap();
    SchemaValidator::read_with_options(&schema, &StatedNumbers::read(text), &CompileOptions::new())
        .unwrap()
}

/// The cases the issue names, one by one, with what the command said before.
#[test]
fn the_named_edges_are_judged() {
    let judge = |schema: &str, text: &str| {
        let validator = read_schema(schema);
        let instance = toolschema::json::parse(text).unwrap();
        validator
            .validate_text(&instance, text, Subject::Value)
            .map_err(|e| e.to_string())
    };
    // The JSON Schema Test Suite's: equal up to 64-bit representation limits.
    assert_eq!(
        judge(r#"{"const": 9007199254740992}"#, "9007199254740992.0"),
        Ok(())
    );
    assert!(judge(r#"{"const": 9007199254740992}"#, "9007199254740993.0").is_err());
    assert!(judge(r#"{"maximum": 9007199254740992}"#, "9007199254740992.5").is_err());
    assert_eq!(judge(r#"{"multipleOf": 0.1}"#, "0.3"), Ok(()));
    assert_eq!(
        judge(r#"{"multipleOf": 0.1}"#, "0.30000000000000000001"),
        Err("value must be a multiple of 0.1".into())
    );
    assert_eq!(
        judge(r#"{"maximum": 0.1}"#, "0.10000000000000000001"),
        Err("value must be <= 0.1 (got 0.10000000000000000001)".into())
    );
    assert_eq!(judge(r#"{"minimum": 0}"#, "-0"), Ok(()));
    assert!(judge(r#"{"exclusiveMinimum": 0}"#, "1e-400").is_ok());
    assert!(judge(r#"{"maximum": 1.7976931348623157e308}"#, "1e400").is_err());
    assert!(judge(
        r#"{"uniqueItems": true}"#,
        "[9007199254740993, 9007199254740992.0]"
    )
    .is_ok());
    assert!(judge(r#"{"uniqueItems": true}"#, "[1e400, 10e399]").is_err());
    assert!(judge(r#"{"type": "integer"}"#, "9007199254740992.5").is_err());
    assert!(judge(r#"{"type": "integer"}"#, "1e400").is_ok());
    // Past the limit of the exponent, still compared where that can be told.
    assert!(judge(r#"{"maximum": 0.1}"#, "1e99999999999999999999").is_err());
    assert!(judge(
        r#"{"uniqueItems": true}"#,
        "[1e99999999999999999999, 1e99999999999999999998]"
    )
    .is_err_and(|e| e.contains("could not be checked")));
}

/// Big integers at the places a 64-bit reading changes: 2^53, 2^63, 2^64 and 2^65, a few
/// either side, and any integer up to 10^40.
fn big_integer() -> impl Strategy<Value = BigInt> {
    let near = |power: u32| {
        (-3i64..=3, any::<bool>()).prop_map(move |(d, negative)| {
            let n = BigInt::from(2).pow(power) + d;
            if negative {
                -n
            } else {
                n
            }
        })
    };
    prop_oneof![
        near(53),
        near(63),
        near(64),
        near(65),
        "-?[1-9][0-9]{0,40}".prop_map(|s| s.parse::<BigInt>().unwrap()),
    ]
}

/// A keyword over integers, `a` its number, and what it says of `b`.
fn integer_case() -> impl Strategy<Value = (String, BigInt, BigInt, bool)> {
    (
        0usize..7,
        big_integer(),
        big_integer(),
        any::<bool>(),
        -2i64..=2,
    )
        .prop_map(|(keyword, a, b, near, d)| {
            // Half the time `b` is `a` or right beside it, where a rounding decides.
            let b = if near { &a + d } else { b };
            let zero = BigInt::from(0);
            let (schema, holds) = match keyword {
                0 => (format!(r#"{{"maximum": {a}}}"#), b <= a),
                1 => (format!(r#"{{"minimum": {a}}}"#), b >= a),
                2 => (format!(r#"{{"exclusiveMaximum": {a}}}"#), b < a),
                3 => (format!(r#"{{"exclusiveMinimum": {a}}}"#), b > a),
                4 => (format!(r#"{{"const": {a}}}"#), b == a),
                5 => (format!(r#"{{"enum": ["{a}", {a}, [{a}]]}}"#), b == a),
                _ => {
                    let a = if a == zero {
                        BigInt::from(7)
                    } else {
                        BigInt::from_biguint(num_bigint::Sign::Plus, a.magnitude().clone())
                    };
                    let holds = &b % &a == zero;
                    (format!(r#"{{"multipleOf": {a}}}"#), holds)
                }
            };
            (schema, a, b, holds)
        })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    /// A schema read from text compares its integers as the text states them, whatever their
    /// size: directly, and as a tool of a catalog (what `validate`, the proxy and the Python
    /// module compile).
    #[test]
    fn schema_integers_are_compared_as_written((schema, _a, b, holds) in integer_case()) {
        let text = b.to_string();
        let instance = toolschema::json::parse(&text).unwrap();
        let verdict = read_schema(&schema).validate_text(&instance, &text, Subject::Value);
        if let Err(errors) = &verdict {
            prop_assert!(!errors.is_unchecked(), "{schema} on {text}: {errors}");
        }
        prop_assert_eq!(verdict.is_ok(), holds, "{} on {}: {:?}", schema, text, verdict);

        let catalog_text = format!(
            r#"{{"tools": [{{"name": "t", "inputSchema": {{"type": "object", "properties": {{"n": {schema}}}}}}}]}}"#
        );
        let catalog = Catalog::from_json("c.json", &catalog_text).unwrap();
        let compiled = catalog.get("t").unwrap().compile().unwrap();
        let arguments_text = format!(r#"{{"n": {text}}}"#);
        let arguments = toolschema::json::parse(&arguments_text).unwrap();
        let verdict = compiled.validate_input_text(&arguments, &arguments_text);
        prop_assert_eq!(verdict.is_ok(), holds, "{} on {}: {:?}", schema, arguments_text, verdict);
        // Without the arguments' text, a value that holds the number exactly is judged alike.
        if let Ok(exact) = text.parse::<i64>() {
            let verdict = compiled.validate_input(&serde_json::json!({"n": exact}));
            prop_assert_eq!(verdict.is_ok(), holds, "{} on {} as a value: {:?}", schema, text, verdict);
        }
    }
}

/// The bounds past 2^53 the Python module's tests held as known failures: a schema's float is
/// compared by the value its text states, not by the shortest decimal of the float nearest it.
#[test]
fn bounds_past_2_to_the_53_are_compared_by_their_value() {
    let judge = |schema: &str, text: &str| {
        let instance = toolschema::json::parse(text).unwrap();
        read_schema(schema)
            .validate_text(&instance, text, Subject::Value)
            .map_err(|e| e.to_string())
    };
    let two_64 = "18446744073709551616";
    let two_65 = "36893488147419103232";
    assert_eq!(
        judge(
            &format!(r#"{{"maximum": {two_64}}}"#),
            "18446744073709551617"
        ),
        Err("value must be <= 18446744073709551616 (got 18446744073709551617)".into())
    );
    assert_eq!(
        judge(&format!(r#"{{"maximum": {two_64}}}"#), two_64),
        Ok(())
    );
    assert_eq!(
        judge(&format!(r#"{{"maximum": {two_65}}}"#), two_65),
        Ok(())
    );
    assert!(judge(
        &format!(r#"{{"maximum": {two_65}}}"#),
        "36893488147419103233"
    )
    .is_err());
    // A small number against a schema number no float holds.
    assert!(judge(r#"{"minimum": 0.10000000000000000001}"#, "0.1").is_err());
    assert!(judge(r#"{"const": 0.10000000000000000001}"#, "0.1").is_err());
    assert_eq!(
        judge(
            r#"{"const": 0.10000000000000000001}"#,
            "0.10000000000000000001"
        ),
        Ok(())
    );
    // Written in a form serde_json writes, the text is still what counts.
    assert!(judge(r#"{"maximum": 3.6893488147419103e19}"#, two_65).is_err());
}

/// A schema built in code has no text: a float past 2^53 in it is compared as its value
/// (2^65 is 36893488147419103232), a smaller float as its shortest decimal (`0.1`).
#[test]
fn a_schema_built_in_code_compares_its_floats_by_their_value() {
    let two_65 = 2f64.powi(65);
    let validator = SchemaValidator::new(&serde_json::json!({"maximum": two_65})).unwrap();
    let judge = |text: &str| {
        let instance = toolschema::json::parse(text).unwrap();
        validator.validate_text(&instance, text, Subject::Value)
    };
    assert!(judge("36893488147419103232").is_ok());
    assert!(judge("36893488147419103233").is_err());
    let tenth = SchemaValidator::new(&serde_json::json!({"multipleOf": 0.1})).unwrap();
    let instance = toolschema::json::parse("0.3").unwrap();
    assert!(tenth
        .validate_text(&instance, "0.3", Subject::Value)
        .is_ok());
}
