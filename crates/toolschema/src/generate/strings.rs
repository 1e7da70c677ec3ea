//! Strings: words of a given length, strings that match a `pattern`, values of the standard
//! formats (and near misses), and Unicode that breaks naive code.

use super::rng::SplitMix64;
use rand::distr::Distribution;
use regex_syntax::hir::{Hir, HirKind, Look};
use std::collections::HashMap;

/// The most extra repetitions `*`, `+` and `{n,}` get when a pattern is sampled.
const PATTERN_REPEAT: u32 = 8;

/// Patterns compiled for sampling, or why one cannot be sampled.
#[derive(Default)]
pub(crate) struct Patterns {
    compiled: HashMap<String, Result<rand_regex::Regex, String>>,
}

impl Patterns {
    /// A string matching `pattern` (an ECMA-262 regular expression, read as the validator reads
    /// it), or why none can be made.
    pub(crate) fn sample(&mut self, pattern: &str, rng: &mut SplitMix64) -> Result<String, String> {
        let compiled = self
            .compiled
            .entry(pattern.to_string())
            .or_insert_with(|| compile(pattern));
        match compiled {
            Ok(regex) => {
                let sampled: Result<String, _> = regex.sample(rng);
                sampled
                    .map_err(|_| format!("pattern '{pattern}' produced bytes that are not UTF-8"))
            }
            Err(why) => Err(why.clone()),
        }
    }
}

/// Translate an ECMA-262 pattern with the validator's own translator (`\d` is ASCII, and so on),
/// parse it, and drop the anchors at its ends: a JSON Schema pattern matches anywhere in the
/// string, so a string that is a whole match of the unanchored pattern matches the anchored one.
fn compile(pattern: &str) -> Result<rand_regex::Regex, String> {
    let unusable = |why: &str| format!("pattern '{pattern}' {why}");
    // A dot as ECMA-262 reads it; word boundaries (look-arounds once rewritten) cannot be
    // sampled either way, and say so as written.
    let ecma = if crate::schema::patterns::has_word_boundary(pattern) {
        None
    } else {
        crate::schema::patterns::ecma_pattern(pattern)
    };
    let translated = jsonschema_regex::to_rust_regex(ecma.as_deref().unwrap_or(pattern))
        .map_err(|()| unusable("is not a regular expression the generator can read"))?;
    let hir = regex_syntax::ParserBuilder::new()
        .build()
        .parse(&translated)
        .map_err(|_| {
            unusable("uses features (look-around, back-references) the generator cannot sample")
        })?;
    let hir = strip_edge_anchors(hir);
    rand_regex::Regex::with_hir(hir, PATTERN_REPEAT).map_err(|e| match e {
        rand_regex::Error::Anchor => {
            unusable("has anchors or word boundaries inside it, which the generator cannot sample")
        }
        rand_regex::Error::Unsatisfiable => unusable("can never match"),
        rand_regex::Error::Syntax(_) => {
            unusable("is not a regular expression the generator can read")
        }
    })
}

/// Remove `^`/`$` (and `\A`/`\z`) at the start and end of the pattern and of each top-level
/// alternative.
fn strip_edge_anchors(hir: Hir) -> Hir {
    let is_edge = |h: &Hir| {
        matches!(
            h.kind(),
            HirKind::Look(Look::Start | Look::End | Look::StartLF | Look::EndLF)
        )
    };
    match hir.into_kind() {
        HirKind::Look(Look::Start | Look::End | Look::StartLF | Look::EndLF) => Hir::empty(),
        HirKind::Concat(mut parts) => {
            while parts.first().is_some_and(is_edge) {
                parts.remove(0);
            }
            while parts.last().is_some_and(is_edge) {
                parts.pop();
            }
            // Only the ends can hold more anchors (`^(a|b)$`, `(^a)`); the middle stays as written.
            let last = parts.len().saturating_sub(1);
            let parts = parts
                .into_iter()
                .enumerate()
                .map(|(i, part)| {
                    if i == 0 || i == last {
                        strip_edge_anchors(part)
                    } else {
                        part
                    }
                })
                .collect();
            Hir::concat(parts)
        }
        HirKind::Alternation(branches) => {
            Hir::alternation(branches.into_iter().map(strip_edge_anchors).collect())
        }
        HirKind::Capture(capture) => {
            let sub = strip_edge_anchors(*capture.sub);
            Hir::capture(regex_syntax::hir::Capture {
                index: capture.index,
                name: capture.name,
                sub: Box::new(sub),
            })
        }
        other => other_kind(other),
    }
}

/// Rebuild a node from its kind (for kinds `strip_edge_anchors` leaves alone).
fn other_kind(kind: HirKind) -> Hir {
    match kind {
        HirKind::Empty => Hir::empty(),
        HirKind::Literal(literal) => Hir::literal(literal.0),
        HirKind::Class(class) => Hir::class(class),
        HirKind::Look(look) => Hir::look(look),
        HirKind::Repetition(repetition) => Hir::repetition(repetition),
        HirKind::Capture(capture) => Hir::capture(capture),
        HirKind::Concat(parts) => Hir::concat(parts),
        HirKind::Alternation(branches) => Hir::alternation(branches),
    }
}

/// Letters a typical generated word is made of.
const WORD_LETTERS: &[u8] = b"abcdefghijklmnopqrstuvwxyz";

/// A lowercase word of `length` characters.
pub(crate) fn word(rng: &mut SplitMix64, length: usize) -> String {
    (0..length)
        .map(|_| WORD_LETTERS[rng.index(WORD_LETTERS.len())] as char)
        .collect()
}

/// How many characters JSON Schema counts in a string (code points).
pub(crate) fn length(text: &str) -> u64 {
    text.chars().count() as u64
}

/// `text` cut or padded (with `a`) to fit `min..=max` characters.
pub(crate) fn fit_length(text: &str, min: u64, max: Option<u64>) -> String {
    let mut out: String = match max {
        Some(max) => text.chars().take(max as usize).collect(),
        None => text.to_string(),
    };
    let have = length(&out);
    if have < min {
        out.extend(std::iter::repeat_n('a', (min - have) as usize));
    }
    out
}

/// Strings that break code which assumes one byte per character, left-to-right text, or
/// C strings: each with what it tries.
pub(crate) const HOSTILE_UNICODE: &[(&str, &str)] = &[
    ("astral characters", "\u{1D11E} clef \u{1F600} grin"),
    ("combining marks", "e\u{301}te\u{301} cafe\u{301}"),
    (
        "right-to-left text",
        "\u{5E9}\u{5DC}\u{5D5}\u{5DD} \u{645}\u{631}\u{62D}\u{628}\u{627}",
    ),
    ("a NUL character", "before\u{0}after"),
    ("a right-to-left override", "\u{202E}txt.exe"),
    (
        "an emoji sequence",
        "\u{1F469}\u{200D}\u{1F4BB}\u{1F3F3}\u{FE0F}\u{200D}\u{1F308}",
    ),
    (
        "quotes, backslashes and newlines",
        "\"quoted\" \\ back\\slash\nnew line\ttab",
    ),
];

/// Values of a standard format that every validator accepts.
pub(crate) fn format_examples(format: &str) -> &'static [&'static str] {
    match format {
        "date-time" => &[
            "2024-02-29T13:45:30Z",
            "1999-12-31T23:59:59.123+05:30",
            "2024-01-01T00:00:00-08:00",
        ],
        "date" => &["2024-02-29", "1970-01-01", "2099-12-31"],
        "time" => &["13:45:30Z", "00:00:00+01:00", "23:59:59.5Z"],
        "duration" => &["P1D", "PT1H30M", "P1Y2M3DT4H5M6S", "P2W"],
        "email" => &["ada@example.com", "first.last+tag@example.org"],
        "idn-email" => &[
            "ada@example.com",
            "\u{7528}\u{6237}@\u{4F8B}\u{5B50}.\u{5E7F}\u{544A}",
        ],
        "hostname" => &["example.com", "api.example.org", "localhost"],
        "idn-hostname" => &["example.com", "b\u{FC}cher.example"],
        "ipv4" => &["192.0.2.1", "10.0.0.255", "0.0.0.0"],
        "ipv6" => &["2001:db8::1", "::1", "fe80::1:2:3:4"],
        "uri" => &[
            "https://example.com/path?q=1#frag",
            "urn:isbn:0451450523",
            "mailto:ada@example.com",
        ],
        "uri-reference" => &["/relative/path?x=1", "https://example.com/", "../up"],
        "iri" => &["https://example.com/", "https://example.com/caf\u{E9}"],
        "iri-reference" => &["/caf\u{E9}/x", "https://example.com"],
        "uuid" => &[
            "123e4567-e89b-12d3-a456-426614174000",
            "00000000-0000-0000-0000-000000000000",
        ],
        "uri-template" => &["https://example.com/{id}", "/users{?page,limit}"],
        "json-pointer" => &["/a/b~1c/0", ""],
        "relative-json-pointer" => &["0", "1/a", "2#"],
        "regex" => &["^[a-z]+$", "\\d{3}", "(a|b)*"],
        _ => &[],
    }
}

/// Strings that break a standard format, mistakes first that a model makes.
pub(crate) fn format_breakers(format: &str) -> &'static [&'static str] {
    match format {
        "date-time" => &["2024-02-29 13:45:30", "2024-13-45T25:61:00Z", "yesterday"],
        "date" => &["02/29/2024", "2024-02-30", "2024-2-9"],
        "time" => &["1:45 PM", "25:00:00Z", "13:45:30+25:00"],
        "duration" => &["1 day", "P", "PT"],
        "email" | "idn-email" => &["ada.example.com", "ada@", "@example.com"],
        "hostname" | "idn-hostname" => &["exa mple.com", "-bad-.example", "a..b"],
        "ipv4" => &["256.1.1.1", "1.2.3", "192.168.1.1/24"],
        "ipv6" => &["2001:db8:::1", "12345::", "1.2.3.4"],
        "uri" | "iri" => &["not a uri", "example.com/path", "//no-scheme"],
        "uri-reference" | "iri-reference" => &["http://[broken", "\\\\windows\\share", "a b"],
        "uuid" => &[
            "123e4567-e89b-12d3-a456",
            "not-a-uuid",
            "123e4567e89b12d3a456426614174000g",
        ],
        "uri-template" => &["{unclosed", "/x{", "/{a}}"],
        "json-pointer" => &["a/b", "/~2"],
        "relative-json-pointer" => &["/a", "-1"],
        "regex" => &["(unclosed", "[z-a]", "*"],
        _ => &[],
    }
}

/// Strings that break most patterns: empty, blank, symbols, non-ASCII, and long.
pub(crate) fn pattern_breakers() -> [String; 6] {
    [
        String::new(),
        " ".into(),
        "!@#$%^&*()".into(),
        "\u{1F600}".into(),
        "UPPER lower 123".into(),
        "x".repeat(300),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Whether the validator finds `text` matching `pattern`.
    fn matches(pattern: &str, text: &str) -> bool {
        let schema = serde_json::json!({"type": "string", "pattern": pattern});
        let validator = crate::SchemaValidator::new(&schema).unwrap();
        validator.is_valid(&serde_json::Value::String(text.into()))
    }

    #[test]
    fn samples_match_their_patterns() {
        let mut patterns = Patterns::default();
        let mut rng = SplitMix64::new(3);
        for pattern in [
            "^[a-z]{3,5}$",
            "^\\d{4}-\\d{2}-\\d{2}$",
            "^(foo|bar)+$",
            "[A-Z][a-z]*",
            "^\\w+@\\w+\\.com$",
            "^(?:a|b)c?$",
        ] {
            for _ in 0..20 {
                let sample = patterns.sample(pattern, &mut rng).unwrap();
                assert!(matches(pattern, &sample), "{pattern}: {sample:?}");
            }
        }
    }

    #[test]
    fn ecma_classes_are_ascii() {
        let mut patterns = Patterns::default();
        let mut rng = SplitMix64::new(9);
        for _ in 0..50 {
            let sample = patterns.sample("^\\d+$", &mut rng).unwrap();
            assert!(sample.bytes().all(|b| b.is_ascii_digit()), "{sample:?}");
        }
    }

    #[test]
    fn unsampleable_patterns_say_why() {
        let mut patterns = Patterns::default();
        let mut rng = SplitMix64::new(1);
        let why = patterns.sample("^(?=a)a$", &mut rng).unwrap_err();
        assert!(why.contains("look-around"), "{why}");
        let why = patterns.sample("a\\bb", &mut rng).unwrap_err();
        assert!(why.contains("inside it"), "{why}");
    }

    #[test]
    fn lengths_fit() {
        assert_eq!(
            fit_length("\u{1F600}\u{1F600}\u{1F600}", 0, Some(2)),
            "\u{1F600}\u{1F600}"
        );
        assert_eq!(fit_length("ab", 4, None), "abaa");
    }

    #[test]
    fn format_examples_are_valid_and_breakers_are_not() {
        for format in crate::schema::STANDARD_FORMATS {
            let schema = serde_json::json!({"type": "string", "format": format});
            let options = crate::CompileOptions::new().assert_format(true);
            let validator = crate::SchemaValidator::with_options(&schema, &options).unwrap();
            assert!(!format_examples(format).is_empty(), "{format}");
            for example in format_examples(format) {
                assert!(
                    validator.is_valid(&serde_json::json!(example)),
                    "{format}: {example:?}"
                );
            }
            for breaker in format_breakers(format) {
                assert!(
                    !validator.is_valid(&serde_json::json!(breaker)),
                    "{format}: {breaker:?}"
                );
            }
        }
    }
}
