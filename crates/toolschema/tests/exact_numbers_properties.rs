//! Numbers are judged as their JSON text states them: for `const`, `enum`, `multipleOf`, the
//! four bounds and `uniqueItems`, the verdict of [`SchemaValidator::validate_text`] on a value
//! read from text equals that of a reference evaluator written here on its own, with rational
//! arithmetic over big integers, on numbers at the edges (2^53 ± 1, 1e308, 1e-320, negative
//! zero, 100-digit integers, long fractions, large exponents). No value is left unchecked.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use num_bigint::BigInt;
use proptest::prelude::*;
use serde_json::Value;
use toolschema::{SchemaValidator, Subject};

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

/// A number a schema holds exactly: what serde_json writes for a float or an integer.
fn schema_number() -> impl Strategy<Value = String> {
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
    schema_number().prop_filter("multipleOf is positive", |n| {
        !n.starts_with('-') && compare(n, "0") == std::cmp::Ordering::Greater
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
        let schema: Value = serde_json::from_str(&keyword.schema()).unwrap();
        let validator = SchemaValidator::new(&schema).unwrap();
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
        let schema: Value = serde_json::from_str(&format!(
            r#"{{"properties": {{"v": {}, "w": {{"items": {}}}}}}}"#,
            keyword.schema(), keyword.schema()
        )).unwrap();
        let validator = SchemaValidator::new(&schema).unwrap();
        let instance = toolschema::json::parse(&wrapped).unwrap();
        let verdict = validator.validate_text(&instance, &wrapped, Subject::Arguments);
        prop_assert_eq!(verdict.is_ok(), keyword.holds(&numbers), "{}: {:?}", wrapped, verdict);
    }
}

/// The cases the issue names, one by one, with what the command said before.
#[test]
fn the_named_edges_are_judged() {
    let judge = |schema: &str, text: &str| {
        let schema: Value = serde_json::from_str(schema).unwrap();
        let validator = SchemaValidator::new(&schema).unwrap();
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
