//! JSON Schema's `pattern` is an ECMA-262 regular expression; the validation engine reads Rust's
//! syntax, and translates only some of what differs (`\d` is ASCII there, as in ECMA-262). What
//! it leaves reads the same text another way, and a call the proxy passed would be refused by a
//! server that validates the ECMA-262 way (Ajv): `.` matched `\r`, U+2028 and U+2029, and `\b`
//! was a Unicode word boundary (`^a\b` refused `"aé"`). The patterns are rewritten here, before
//! the engine sees them, into Rust syntax that means what ECMA-262 means.

use serde_json::{Map, Value};
use std::collections::HashMap;

/// ECMA-262's `.`: any character but a line terminator.
const DOT: &str = "[^\n\r\u{2028}\u{2029}]";
/// ECMA-262's word characters (for `\b`, `\w`).
const WORD: &str = "0-9A-Za-z_";
/// ECMA-262's white space and line terminators (for `\s`).
const SPACE: &str =
    "\t-\r \u{a0}\u{1680}\u{2000}-\u{200a}\u{2028}\u{2029}\u{202f}\u{205f}\u{3000}\u{feff}";

/// `pattern` rewritten so that the engine reads it as ECMA-262 does, or `None` when it needs no
/// rewriting. Outside character classes, `.` becomes [`DOT`]; `\b` and `\B` become look-arounds
/// over ASCII word characters. A pattern with look-arounds (its own or these) is not translated
/// by the engine at all, so there `\d`, `\w`, `\s` and their negations are spelt out here too
/// (inside a class, only the positive ones can be).
pub(crate) fn ecma_pattern(pattern: &str) -> Option<String> {
    // Word boundaries become look-arounds only where everything else of the pattern can then
    // be spelt out here: not a `\c` control escape, nor a negated class escape inside a class
    // (`[^\W]`), which only the engine's own translation (skipped beside look-arounds) reads
    // right. Such a pattern keeps its `\b` for the engine (a Unicode word boundary).
    let traits = Traits::of(pattern);
    let has_boundary = traits.boundary && !traits.unspellable();
    let has_look_around = has_boundary || traits.look_around;
    if !traits.dot && !has_look_around {
        return None;
    }
    let mut out = String::with_capacity(pattern.len() + 16);
    let mut changed = false;
    for_each_token(pattern, |token, text| {
        let replacement = match token {
            Token::Dot => Some(DOT.to_string()),
            Token::Escape('b', false) if has_boundary => Some(format!(
                "(?:(?<=[{WORD}])(?![{WORD}])|(?<![{WORD}])(?=[{WORD}]))"
            )),
            Token::Escape('B', false) if has_boundary => Some(format!(
                "(?:(?<=[{WORD}])(?=[{WORD}])|(?<![{WORD}])(?![{WORD}]))"
            )),
            Token::Escape(class, in_class) if has_look_around => perl_class(class, in_class),
            _ => None,
        };
        match replacement {
            Some(replacement) => {
                changed = true;
                out.push_str(&replacement);
            }
            None => out.push_str(text),
        }
    });
    changed.then_some(out)
}

/// What a pattern holds that decides how it can be rewritten, found in one pass.
#[derive(Default)]
struct Traits {
    /// `.` outside a class.
    dot: bool,
    /// A word boundary: `\b` or `\B` outside a class.
    boundary: bool,
    /// A `\c` control escape.
    control_escape: bool,
    /// A negated class escape inside a class (`[^\W]`).
    negated_class_escape_in_class: bool,
    /// A look-around of its own.
    look_around: bool,
}

impl Traits {
    fn of(pattern: &str) -> Self {
        let mut traits = Traits {
            look_around: ["(?=", "(?!", "(?<=", "(?<!"]
                .iter()
                .any(|look| pattern.contains(look)),
            ..Traits::default()
        };
        for_each_token(pattern, |token, _| match token {
            Token::Dot => traits.dot = true,
            Token::Escape('b' | 'B', false) => traits.boundary = true,
            Token::Escape('c', _) => traits.control_escape = true,
            Token::Escape('W' | 'D' | 'S', true) => traits.negated_class_escape_in_class = true,
            _ => {}
        });
        traits
    }

    /// Whether it holds what keeps [`ecma_pattern`] from spelling the rest out beside
    /// look-arounds: only the engine's own translation (skipped beside look-arounds) reads it.
    fn unspellable(&self) -> bool {
        self.control_escape || self.negated_class_escape_in_class
    }
}

/// Whether `pattern` has a word boundary (`\b` or `\B` outside a class), which
/// [`ecma_pattern`] writes as look-arounds.
pub(crate) fn has_word_boundary(pattern: &str) -> bool {
    scan(pattern, |token| {
        matches!(token, Token::Escape('b' | 'B', false))
    })
}

/// `\d`, `\w`, `\s` (and, outside a class, their negations) spelt out the ECMA-262 way.
fn perl_class(class: char, in_class: bool) -> Option<String> {
    let set = match class.to_ascii_lowercase() {
        'd' => "0-9",
        'w' => WORD,
        's' => SPACE,
        _ => return None,
    };
    match (class.is_ascii_uppercase(), in_class) {
        (false, true) => Some(set.to_string()),
        (false, false) => Some(format!("[{set}]")),
        (true, false) => Some(format!("[^{set}]")),
        // A negated class inside a class has no spelling that both engines read: left as is.
        (true, true) => None,
    }
}

/// A piece of a pattern that may need rewriting.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Token {
    /// `.` outside a class.
    Dot,
    /// A backslash and the character after it, and whether it stands inside a class.
    Escape(char, bool),
    /// Anything else, copied as it is.
    Other,
}

fn scan(pattern: &str, wanted: impl Fn(Token) -> bool) -> bool {
    let mut found = false;
    for_each_token(pattern, |token, _| found |= wanted(token));
    found
}

/// Walk an ECMA-262 pattern: escapes, classes (`[...]`, where `.` is itself and `]` ends the
/// class, even first), and the rest.
fn for_each_token(pattern: &str, mut each: impl FnMut(Token, &str)) {
    let mut in_class = false;
    let mut chars = pattern.char_indices().peekable();
    while let Some((at, c)) = chars.next() {
        match c {
            '\\' => match chars.next() {
                Some((next_at, next)) => {
                    let end = next_at + next.len_utf8();
                    each(Token::Escape(next, in_class), &pattern[at..end]);
                }
                None => each(Token::Other, &pattern[at..]),
            },
            '[' if !in_class => {
                in_class = true;
                each(Token::Other, &pattern[at..at + 1]);
            }
            ']' if in_class => {
                in_class = false;
                each(Token::Other, &pattern[at..at + 1]);
            }
            '.' if !in_class => each(Token::Dot, &pattern[at..at + 1]),
            _ => each(Token::Other, &pattern[at..at + c.len_utf8()]),
        }
    }
}

/// Keywords whose values are instances, not schemas: nothing in them is rewritten.
const VALUE_KEYWORDS: [&str; 4] = ["const", "enum", "default", "examples"];

/// Keywords whose values map names to schemas: a member there is a schema whatever its name
/// (a property may be called `default`).
const NAME_MAPS: [&str; 6] = [
    "properties",
    "patternProperties",
    "$defs",
    "definitions",
    "dependentSchemas",
    "dependencies",
];

/// A copy of `schema` with every `pattern` and `patternProperties` key rewritten by
/// [`ecma_pattern`], and the original of each rewritten pattern (for messages); `None` when
/// nothing needs rewriting. Every schema object is looked at but the values of
/// [`VALUE_KEYWORDS`]: a `$ref` may reach a schema under any other keyword. Two
/// `patternProperties` keys that become one keep both schemas (`allOf`); a key that a `$ref`
/// points into is left as written (the pointer would break), and so reads the engine's way.
pub(crate) fn with_ecma_patterns(schema: &Value) -> Option<(Value, HashMap<String, String>)> {
    if !any_pattern_to_rewrite(schema) {
        return None;
    }
    let pointed_into = references_into_pattern_properties(schema);
    let mut originals = HashMap::new();
    let mut rewritten = schema.clone();
    // Each value with whether it is a map of names to schemas.
    let mut stack = vec![(&mut rewritten, false)];
    while let Some((value, names)) = stack.pop() {
        match value {
            Value::Object(map) => {
                if names {
                    stack.extend(map.values_mut().map(|v| (v, false)));
                    continue;
                }
                let engine = map
                    .get("pattern")
                    .and_then(Value::as_str)
                    .and_then(ecma_pattern);
                if let Some(engine) = engine {
                    if let Some(Value::String(original)) =
                        map.insert("pattern".into(), Value::String(engine.clone()))
                    {
                        originals.insert(engine, original);
                    }
                }
                if let Some(Value::Object(patterns)) = map.get_mut("patternProperties") {
                    rewrite_keys(patterns, &pointed_into, &mut originals);
                }
                stack.extend(
                    map.iter_mut()
                        .filter(|(key, _)| !VALUE_KEYWORDS.contains(&key.as_str()))
                        .map(|(key, child)| {
                            let names = NAME_MAPS.contains(&key.as_str());
                            (child, names)
                        }),
                );
            }
            Value::Array(items) => stack.extend(items.iter_mut().map(|v| (v, false))),
            _ => {}
        }
    }
    Some((rewritten, originals))
}

/// Rewrite the keys of one `patternProperties`, keeping their order, but those a reference in
/// `pointed_into` names; two that become one keep both schemas.
fn rewrite_keys(
    patterns: &mut Map<String, Value>,
    pointed_into: &[String],
    originals: &mut HashMap<String, String>,
) {
    let rewrites = |key: &str| {
        let step = format!(
            "/patternProperties/{}",
            key.replace('~', "~0").replace('/', "~1")
        );
        ecma_pattern(key).filter(|_| !pointed_into.iter().any(|r| r.contains(&step)))
    };
    if !patterns.keys().any(|key| rewrites(key).is_some()) {
        return;
    }
    let mut keyed = Map::new();
    for (key, value) in std::mem::take(patterns) {
        let engine = match rewrites(&key) {
            Some(engine) => {
                originals.insert(engine.clone(), key);
                engine
            }
            None => key,
        };
        match keyed.remove(&engine) {
            Some(earlier) => {
                keyed.insert(engine, serde_json::json!({"allOf": [earlier, value]}));
            }
            None => {
                keyed.insert(engine, value);
            }
        }
    }
    *patterns = keyed;
}

/// The references of `schema` (`$ref`, `$dynamicRef`, percent-decoded) that point into a
/// `patternProperties`.
fn references_into_pattern_properties(schema: &Value) -> Vec<String> {
    let mut found = Vec::new();
    let mut stack = vec![schema];
    while let Some(value) = stack.pop() {
        match value {
            Value::Object(map) => {
                for keyword in ["$ref", "$dynamicRef"] {
                    if let Some(reference) = map.get(keyword).and_then(Value::as_str) {
                        let decoded = super::document::percent_decode(reference);
                        if decoded.contains("/patternProperties/") {
                            found.push(decoded);
                        }
                    }
                }
                stack.extend(map.values());
            }
            Value::Array(items) => stack.extend(items),
            _ => {}
        }
    }
    found
}

/// Why `pattern` is not an ECMA-262 regular expression as JavaScript reads it with the `u` flag
/// (the way Ajv compiles a `pattern`), or `None` when it is one.
///
/// The engine reads Rust's syntax, which takes much that JavaScript refuses and gives it a
/// meaning of its own: `(?i)^admin$` would match `ADMIN`, `\pL` a letter, `\z` the end. A call
/// the validator passed by such a meaning is one a JavaScript server refuses, or worse, one the
/// schema's author never meant to allow; so a pattern that is not ECMA-262 is refused here,
/// before the engine reads it.
///
/// The reader (regress) recurses once per alternative and takes time that grows with the square
/// of their number: a pattern with more than [`MAX_ALTERNATIVES`] `|`, or longer than
/// [`MAX_PATTERN_BYTES`], is not read at all but refused as too large to check; one with more
/// than [`ALTERNATIVES_ON_THE_STACK`] is read on a thread of its own with a large stack
/// ([`crate::json::on_large_stack`]).
pub(crate) fn ecma_syntax_error(pattern: &str) -> Option<PatternProblem> {
    let alternatives = memchr::memchr_iter(b'|', pattern.as_bytes()).count();
    if alternatives > MAX_ALTERNATIVES || pattern.len() > MAX_PATTERN_BYTES {
        return Some(PatternProblem::TooLarge);
    }
    let read = |pattern: &str| {
        regress::Regex::with_flags(pattern, "u")
            .err()
            .map(|error| error.to_string())
    };
    let why = if alternatives <= ALTERNATIVES_ON_THE_STACK {
        match read(pattern) {
            Some(why) => why,
            None => return quantified_assertion(pattern).map(PatternProblem::NotEcma),
        }
    } else {
        let reading = crate::json::on_large_stack("pattern-check", || {
            std::panic::catch_unwind(|| read(pattern))
        });
        match reading {
            Some(Ok(Some(why))) => why,
            Some(Ok(None)) => return quantified_assertion(pattern).map(PatternProblem::NotEcma),
            // No thread to be had, or the reader failed: nothing says the pattern is sound.
            _ => return Some(PatternProblem::TooLarge),
        }
    };
    if why.contains("too deeply nested") {
        return Some(PatternProblem::TooDeep);
    }
    // The reader's messages start with a capital ("Invalid character escape").
    let mut chars = why.chars();
    Some(PatternProblem::NotEcma(match chars.next() {
        Some(first) => first.to_lowercase().chain(chars).collect(),
        None => why,
    }))
}

/// Why `pattern` is refused if it puts a quantifier after an assertion (`\b*`, `(?=a)+`,
/// `(?<!a){2}`, `^?`): ECMA-262 with the u flag has nothing there to repeat and refuses it
/// ("Nothing to repeat"), but the reader takes it.
fn quantified_assertion(pattern: &str) -> Option<String> {
    let chars: Vec<char> = pattern.chars().collect();
    let mut in_class = false;
    // The groups open, each with the assertion it is when it is a lookaround.
    let mut groups: Vec<Option<&'static str>> = Vec::new();
    // The assertion just read, if the last thing read was one.
    let mut assertion: Option<&'static str> = None;
    let mut i = 0;
    while let Some(&c) = chars.get(i) {
        let before = assertion.take();
        let mut step = 1;
        match c {
            '\\' => {
                step = 2;
                if !in_class {
                    assertion = match chars.get(i + 1) {
                        Some('b') => Some("\\b"),
                        Some('B') => Some("\\B"),
                        _ => None,
                    };
                }
            }
            '[' if !in_class => in_class = true,
            ']' if in_class => in_class = false,
            _ if in_class => {}
            '(' => {
                let ahead: String = chars[i + 1..].iter().take(3).collect();
                let (kind, prefix) = if ahead.starts_with("?<=") {
                    (Some("(?<=...)"), 4)
                } else if ahead.starts_with("?<!") {
                    (Some("(?<!...)"), 4)
                } else if ahead.starts_with("?=") {
                    (Some("(?=...)"), 3)
                } else if ahead.starts_with("?!") {
                    (Some("(?!...)"), 3)
                } else {
                    (None, 1)
                };
                groups.push(kind);
                step = prefix;
            }
            ')' => assertion = groups.pop().flatten(),
            '^' => assertion = Some("^"),
            '$' => assertion = Some("$"),
            '*' | '+' | '?' => {
                if let Some(what) = before {
                    return Some(format!(
                        "nothing to repeat: the assertion {what} takes no quantifier"
                    ));
                }
            }
            '{' => {
                let rest: String = chars[i..].iter().take(32).collect();
                let is_quantifier = rest
                    .find('}')
                    .map(|end| &rest[1..end])
                    .is_some_and(|inside| {
                        let (low, high) = inside.split_once(',').unwrap_or((inside, "0"));
                        !low.is_empty()
                            && low.bytes().all(|b| b.is_ascii_digit())
                            && high.bytes().all(|b| b.is_ascii_digit())
                    });
                if let (Some(what), true) = (before, is_quantifier) {
                    return Some(format!(
                        "nothing to repeat: the assertion {what} takes no quantifier"
                    ));
                }
            }
            _ => {}
        }
        i += step;
    }
    None
}

/// The most `|` a pattern may hold to be checked ([`ecma_syntax_error`]): 16,384 alternatives
/// take the reader about 0.3 s.
pub(crate) const MAX_ALTERNATIVES: usize = 16_384;
/// The longest pattern checked.
pub(crate) const MAX_PATTERN_BYTES: usize = 256 * 1024;
/// The most `|` read on the calling thread: a debug build's reader needs about 2 KiB of stack
/// per alternative, and threads may have 2 MiB.
const ALTERNATIVES_ON_THE_STACK: usize = 512;

/// What is wrong with a pattern, for [`ecma_syntax_error`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum PatternProblem {
    /// It is not ECMA-262 with the `u` flag: what the reader says.
    NotEcma(String),
    /// It nests groups deeper than the reader goes (about 250 levels).
    TooDeep,
    /// It is too long, or has too many alternatives, to be checked.
    TooLarge,
    /// It is ECMA-262, but the validator's engine cannot evaluate it as JavaScript does: why.
    BeyondEngine(String),
}

/// How much of a pattern a message quotes.
const QUOTED_CHARS: usize = 120;

/// A `pattern` (or `patternProperties` key) that is not an ECMA-262 regular expression, or
/// cannot be checked to be one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct NotEcmaPattern {
    /// Where, as a JSON Pointer into the schema: the `pattern` value, or the
    /// `patternProperties` member whose key it is.
    pub(crate) pointer: String,
    /// The pattern as written.
    pub(crate) pattern: String,
    /// What is wrong with it.
    pub(crate) problem: PatternProblem,
}

impl std::fmt::Display for NotEcmaPattern {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let pattern = crate::text::shorten(&self.pattern, QUOTED_CHARS);
        match &self.problem {
            PatternProblem::NotEcma(why) => write!(
                f,
                "the pattern '{pattern}' is not an ECMA-262 regular expression as JavaScript reads it with the u flag ({why}); write it in JavaScript's syntax"
            ),
            PatternProblem::TooDeep => write!(
                f,
                "the pattern '{pattern}' nests its groups too deeply to be checked as an ECMA-262 regular expression here"
            ),
            PatternProblem::TooLarge => write!(
                f,
                "the pattern '{pattern}' is too large to be checked as an ECMA-262 regular expression here (over {MAX_ALTERNATIVES} alternatives or {} KiB)",
                MAX_PATTERN_BYTES / 1024
            ),
            PatternProblem::BeyondEngine(why) => write!(
                f,
                "the pattern '{pattern}' is an ECMA-262 regular expression, but the validator's regex engine cannot evaluate it as JavaScript does ({why}), so nothing can be checked against it; write it another way"
            ),
        }
    }
}

/// One step of a JSON Pointer, borrowed from the schema.
enum Step<'a> {
    Key(&'a str),
    Index(usize),
}

/// Every `pattern` value and `patternProperties` key of `schema` that is not an ECMA-262
/// regular expression ([`ecma_syntax_error`]): each object's own before those of the schemas
/// below it, and these in the order they are written. Schema objects are walked as
/// [`with_ecma_patterns`] walks them: not into the values of [`VALUE_KEYWORDS`], and a member
/// of a [`NAME_MAPS`] keyword is a schema whatever its name.
pub(crate) fn non_ecma_patterns(schema: &Value) -> Vec<NotEcmaPattern> {
    patterns_with(schema, ecma_syntax_error)
}

/// Every pattern of `schema` the validator refuses to read: those that are not ECMA-262
/// ([`non_ecma_patterns`]), and those its engine cannot evaluate as JavaScript does
/// ([`engine_gap`]).
pub(crate) fn patterns_the_validator_refuses(schema: &Value) -> Vec<NotEcmaPattern> {
    patterns_with(schema, |pattern| {
        ecma_syntax_error(pattern).or_else(|| engine_gap(pattern))
    })
}

/// Why the validator's engine cannot evaluate an ECMA-262 `pattern` as JavaScript does, if it
/// cannot. A backreference to a group that has not matched (not yet, or not on this path)
/// matches the empty string in JavaScript and nothing in the engine, so `^(a)?\1$` would refuse
/// `""`, which JavaScript takes; `\0` the engine does not read at all.
pub(crate) fn engine_gap(pattern: &str) -> Option<PatternProblem> {
    let mut why = None;
    for_each_token(pattern, |token, text| {
        if why.is_some() {
            return;
        }
        why = match token {
            Token::Escape('1'..='9' | 'k', false) => Some(format!(
                "it holds the backreference {}, which JavaScript matches as empty when its group has not matched and the engine does not",
                if text == "\\k" { "\\k<...>" } else { text }
            )),
            Token::Escape('0', _) => Some("the engine does not read \\0; write \\x00".to_string()),
            _ => None,
        };
    });
    let traits = Traits::of(pattern);
    if why.is_none() && traits.look_around && traits.negated_class_escape_in_class {
        // Beside look-arounds the engine does not translate the pattern, and `[^\W]` has no
        // spelling both read: it would stay a Unicode class (`é` a word character).
        why = Some("it has a look-around beside a negated class escape inside a class, which the engine would read as a Unicode class".to_string());
    }
    if why.is_none() && traits.boundary && traits.unspellable() {
        // The boundary would stay the engine's, a Unicode one (`\b` between `é` and `z`).
        why = Some("it has a word boundary beside a \\c control escape or a negated class escape inside a class, and the engine would read that boundary as a Unicode one".to_string());
    }
    why.map(PatternProblem::BeyondEngine)
}

/// Every `pattern` value and `patternProperties` key of `schema` for which `problem` says what
/// is wrong, walked as [`non_ecma_patterns`] says.
fn patterns_with(
    schema: &Value,
    problem: impl Fn(&str) -> Option<PatternProblem>,
) -> Vec<NotEcmaPattern> {
    let mut found = Vec::new();
    if !crate::json::any_object(schema, |map| {
        map.contains_key("pattern") || map.contains_key("patternProperties")
    }) {
        return found;
    }
    // Each value with its depth, the step that reached it, and whether it is a map of names to
    // schemas; `path` holds the steps down to the value being looked at.
    let mut stack: Vec<(&Value, usize, Option<Step<'_>>, bool)> = vec![(schema, 0, None, false)];
    let mut path: Vec<Step<'_>> = Vec::new();
    let pointer_of = |path: &[Step<'_>], last: &[&str]| {
        let mut pointer = String::new();
        let keys = path.iter().map(|step| match step {
            Step::Key(key) => std::borrow::Cow::Borrowed(*key),
            Step::Index(i) => std::borrow::Cow::Owned(i.to_string()),
        });
        for key in keys.chain(last.iter().map(|k| std::borrow::Cow::Borrowed(*k))) {
            pointer.push('/');
            pointer.push_str(&crate::json::pointer::escape_segment(&key));
        }
        pointer
    };
    while let Some((value, depth, step, names)) = stack.pop() {
        path.truncate(depth.saturating_sub(1));
        if let Some(step) = step {
            path.push(step);
        }
        match value {
            Value::Object(map) => {
                if names {
                    stack.extend(
                        map.iter()
                            .rev()
                            .map(|(key, child)| (child, depth + 1, Some(Step::Key(key)), false)),
                    );
                    continue;
                }
                if let Some(Value::String(pattern)) = map.get("pattern") {
                    if let Some(problem) = problem(pattern) {
                        found.push(NotEcmaPattern {
                            pointer: pointer_of(&path, &["pattern"]),
                            pattern: pattern.clone(),
                            problem,
                        });
                    }
                }
                if let Some(Value::Object(patterns)) = map.get("patternProperties") {
                    for key in patterns.keys() {
                        if let Some(problem) = problem(key) {
                            found.push(NotEcmaPattern {
                                pointer: pointer_of(&path, &["patternProperties", key]),
                                pattern: key.clone(),
                                problem,
                            });
                        }
                    }
                }
                stack.extend(
                    map.iter()
                        .rev()
                        .filter(|(key, child)| {
                            !VALUE_KEYWORDS.contains(&key.as_str())
                                && (child.is_object() || child.is_array())
                        })
                        .map(|(key, child)| {
                            let names = NAME_MAPS.contains(&key.as_str());
                            (child, depth + 1, Some(Step::Key(key)), names)
                        }),
                );
            }
            Value::Array(items) => stack.extend(
                items
                    .iter()
                    .enumerate()
                    .rev()
                    .filter(|(_, child)| child.is_object() || child.is_array())
                    .map(|(i, child)| (child, depth + 1, Some(Step::Index(i)), false)),
            ),
            _ => {}
        }
    }
    found
}

/// Whether any object in `schema` has a `pattern` or a `patternProperties` key that
/// [`ecma_pattern`] rewrites: a cheap scan that lets the common schema skip the walk over its
/// subschemas (values that are not schemas may answer yes; the walk then finds nothing).
fn any_pattern_to_rewrite(schema: &Value) -> bool {
    crate::json::any_object(schema, |map| {
        let pattern = map.get("pattern").and_then(Value::as_str);
        pattern.is_some_and(|p| ecma_pattern(p).is_some())
            || map
                .get("patternProperties")
                .and_then(Value::as_object)
                .is_some_and(|patterns| patterns.keys().any(|key| ecma_pattern(key).is_some()))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn matches(pattern: &str, text: &str) -> bool {
        let validator = jsonschema::options()
            .build(&json!({"pattern": ecma_pattern(pattern).unwrap_or(pattern.to_string())}))
            .unwrap();
        validator.is_valid(&json!(text))
    }

    #[test]
    fn dot_leaves_out_line_terminators_as_ecma_262_does() {
        for text in ["ok\rSet-Cookie: x=1", "ok\u{2028}x", "ok\u{2029}x", "a\nb"] {
            assert!(!matches("^.+$", text), "{text:?}");
        }
        assert!(matches("^.+$", "ok é 😀"));
        // Escaped, or in a class, a dot is a dot.
        assert!(!matches(r"^a\.b$", "axb"));
        assert!(matches(r"^[.]$", "."));
        assert!(!matches(r"^[.]$", "x"));
        assert!(matches(r"^\\.$", "\\x"));
        assert_eq!(ecma_pattern(r"^a\.b[.]$"), None);
    }

    #[test]
    fn word_boundaries_are_ascii_as_in_ecma_262() {
        assert!(matches(r"^a\b", "aé"));
        assert!(!matches(r"^a\b", "ab"));
        assert!(matches(r"^a\B", "ab"));
        assert!(!matches(r"é\b", "é"));
        assert!(matches(r"\bcat\b", "a cat."));
        // In a class, \b is a backspace, not a boundary.
        assert_eq!(ecma_pattern(r"^[\b]$"), None);
    }

    #[test]
    fn perl_classes_stay_ascii_beside_look_arounds() {
        // Arabic-Indic three is a digit to Unicode, not to ECMA-262.
        assert!(!matches(r"^(?=.*\d)\d+$", "\u{663}"));
        assert!(matches(r"^(?=.*\d)\d+$", "42"));
        assert!(!matches(r"^\w+\b$", "é"));
        assert!(matches(r"^[\w-]+\b$", "a-b"));
        assert!(matches(r"^(?!\s)\S+$", "x"));
        assert!(!matches(r"^(?!\s)\S+$", "\u{3000}x"));
    }

    /// The verdict of the validator on `instance` against `schema`.
    fn valid(schema: Value, instance: Value) -> bool {
        crate::validate::SchemaValidator::new(&schema)
            .unwrap()
            .is_valid(&instance)
    }

    #[test]
    fn what_cannot_be_spelt_out_keeps_the_engines_reading() {
        // A negated class escape inside a class, or a control escape, beside `\b`: the
        // boundary stays the engine's, and the rest is read as before...
        assert!(!matches(r"^[^\W]$|\bzz", "é"));
        assert!(matches(r"^[^\W]$|\bzz", "a"));
        assert!(matches(r"^\bx\cJ$", "x\n"));
        // ...so the validator does not read such a pattern at all: `^K*\b\cJ*` would match
        // "ſ" with a Unicode boundary, and JavaScript's ASCII one refuses it.
        for pattern in [r"^[^\W]$|\bzz", r"^\bx\cJ$", r"^K*\b\cJ*", r"(?=é)[^\W]"] {
            assert!(
                matches!(engine_gap(pattern), Some(PatternProblem::BeyondEngine(_))),
                "{pattern}"
            );
        }
        for pattern in [r"^\bx$", r"x\cJ", r"[^\W]", r"^(a)b$"] {
            assert_eq!(engine_gap(pattern), None, "{pattern}");
        }
    }

    #[test]
    fn every_pattern_a_ref_can_reach_is_rewritten() {
        let under_unknown_keyword =
            json!({"$ref": "#/x-defs/a", "x-defs": {"a": {"pattern": "^.+$"}}});
        assert!(!valid(
            under_unknown_keyword.clone(),
            json!("ok\rSet-Cookie: x")
        ));
        assert!(valid(under_unknown_keyword, json!("ok")));
        // Values are not schemas: an enum of objects keeps its patterns as written.
        let values = json!({"enum": [{"pattern": "a.b"}]});
        assert!(valid(values, json!({"pattern": "a.b"})));
        // Two keys that become one keep both schemas.
        let both = json!({"patternProperties": {"^a.$": {"type": "string"}, "^a[^\n\r\u{2028}\u{2029}]$": {"type": "integer"}}});
        assert!(!valid(both.clone(), json!({"ab": 5})));
        assert!(!valid(both, json!({"ab": "x"})));
        // A $ref into patternProperties still resolves.
        let pointed = json!({"patternProperties": {"x.": {"type": "integer"}}, "properties": {"p": {"$ref": "#/patternProperties/x."}}});
        assert!(valid(pointed.clone(), json!({"p": 1})));
        assert!(!valid(pointed, json!({"p": "s"})));
        // ... and only that key is left as written.
        let elsewhere = json!({
            "properties": {
                "h": {"patternProperties": {"^.+$": {}}, "additionalProperties": false},
                "q": {"$ref": "#/$defs/m/patternProperties/x"}
            },
            "$defs": {"m": {"patternProperties": {"x": {}}}}
        });
        assert!(!valid(elsewhere, json!({"h": {"a\rSet-Cookie": "b"}})));
        // A property, a definition, named like a value keyword is a schema all the same.
        for schema in [
            json!({"properties": {"default": {"type": "string", "pattern": "^.+$"}}}),
            json!({"properties": {"p": {"$ref": "#/$defs/const"}}, "$defs": {"const": {"pattern": "^.+$"}}}),
        ] {
            let key = if schema["properties"].get("default").is_some() {
                "default"
            } else {
                "p"
            };
            assert!(
                !valid(schema.clone(), json!({key: "ok\rSet-Cookie: x"})),
                "{schema}"
            );
            assert!(valid(schema, json!({key: "ok"})));
        }
    }

    #[test]
    fn schemas_keep_their_originals_for_messages() {
        let schema = json!({
            "type": "object",
            "properties": {"s": {"type": "string", "pattern": "^.+$"}, "plain": {"pattern": "^[a-z]+$"}},
            "patternProperties": {"^x-.*$": {"patternProperties": {"^y.$": {"pattern": "a.b"}}}},
            "enum": [{"pattern": "not.a.schema"}]
        });
        let (rewritten, originals) = with_ecma_patterns(&schema).unwrap();
        assert_eq!(rewritten["properties"]["s"]["pattern"], format!("^{DOT}+$"));
        assert_eq!(rewritten["properties"]["plain"]["pattern"], "^[a-z]+$");
        let outer = format!("^x-{DOT}*$");
        let inner = format!("^y{DOT}$");
        assert_eq!(
            rewritten["patternProperties"][&outer]["patternProperties"][&inner]["pattern"],
            format!("a{DOT}b")
        );
        assert_eq!(rewritten["enum"], schema["enum"], "values are not schemas");
        assert_eq!(originals[&outer], "^x-.*$");
        assert_eq!(originals[&format!("^{DOT}+$")], "^.+$");
        assert_eq!(with_ecma_patterns(&json!({"pattern": "^[a-z]+$"})), None);
    }

    #[test]
    fn patterns_outside_ecma_262_are_found_where_they_are() {
        let schema = json!({
            "properties": {
                "user": {"pattern": "(?i)^admin$"},
                "pattern": {"pattern": "^ok$"},
                "default": {"const": {"pattern": "(?i)an instance, not a schema"}},
                "list": {"items": [{"pattern": "\\pL"}], "examples": [{"pattern": "\\z"}]}
            },
            "patternProperties": {"^a/b~\\z": {}, "^fine-\\p{L}$": {}},
            "allOf": [{"not": {"pattern": "a++"}}],
            "$defs": {"pattern": {"pattern": "[[:alpha:]]"}}
        });
        let found: Vec<(String, String)> = non_ecma_patterns(&schema)
            .into_iter()
            .map(|bad| (bad.pointer, bad.pattern))
            .collect();
        let expected = [
            ("/patternProperties/^a~1b~0\\z", "^a/b~\\z"),
            ("/properties/user/pattern", "(?i)^admin$"),
            ("/properties/list/items/0/pattern", "\\pL"),
            ("/allOf/0/not/pattern", "a++"),
            ("/$defs/pattern/pattern", "[[:alpha:]]"),
        ];
        assert_eq!(
            found,
            expected.map(|(pointer, pattern)| (pointer.to_string(), pattern.to_string()))
        );
    }

    #[test]
    fn quantified_assertions_are_refused_as_javascript_refuses_them() {
        // Each refused by `new RegExp(p, "u")` in Node.js 20 ("Nothing to repeat", "Invalid
        // quantifier"); the reader itself refused only the lookarounds.
        for pattern in [
            r"\b*",
            r"a\B{2}",
            r"\b{1,3}x",
            r"(?=a)*",
            r"(?!a)+",
            r"(?<=a)?",
            r"(?<!a){1,2}",
            r"^*",
            r"x$+",
            r"(a|(?=b)+)",
        ] {
            assert!(
                matches!(ecma_syntax_error(pattern), Some(PatternProblem::NotEcma(_))),
                "{pattern}"
            );
        }
        // Each taken by JavaScript: a class's \b is a backspace, an escaped backslash is no
        // assertion, groups and lookarounds unquantified, braces that are no quantifier.
        for pattern in [
            r"\b",
            r"[\b]*",
            r"\\b*",
            r"(?:a)*",
            r"(a)+",
            r"(?=a)b*",
            r"(?<!a)\d{2}",
            r"^a*$",
            r"\u{1F600}+",
            r"\p{L}{2}",
            r"[(?=a)]*",
        ] {
            assert_eq!(ecma_syntax_error(pattern), None, "{pattern}");
        }
    }

    #[test]
    fn ecma_262_patterns_are_left_alone() {
        for pattern in [
            "^[a-z0-9_./-]+$",
            "^\\p{L}[\\p{L}\\p{N}]*$",
            "^(?<year>\\d{4})-\\k<year>$",
            "(?<=a)b(?!c)",
            "[^]",
            "^\\/srv\\/",
            "[\\-a]",
            "\\u{1F600}|\\uD83D",
            "\\cJ",
            "^\\p{Script=Greek}+$",
        ] {
            assert_eq!(ecma_syntax_error(pattern), None, "{pattern}");
        }
        assert_eq!(
            ecma_syntax_error("(?i)^admin$"),
            Some(PatternProblem::NotEcma("invalid group modifier".into()))
        );
    }

    #[test]
    fn large_and_deep_patterns_are_checked_within_bounds_or_refused() {
        // Many alternatives are read on a thread with a large stack (this one has 2 MiB).
        let many = vec!["ab"; 4_000].join("|");
        assert_eq!(ecma_syntax_error(&many), None);
        let many_bad = format!("{many}|\\z");
        assert!(matches!(
            ecma_syntax_error(&many_bad),
            Some(PatternProblem::NotEcma(_))
        ));
        let too_many = vec!["ab"; MAX_ALTERNATIVES + 2].join("|");
        assert_eq!(ecma_syntax_error(&too_many), Some(PatternProblem::TooLarge));
        assert_eq!(
            ecma_syntax_error(&"a".repeat(MAX_PATTERN_BYTES + 1)),
            Some(PatternProblem::TooLarge)
        );
        let deep = format!("{}a{}", "(".repeat(100_000), ")".repeat(100_000));
        assert_eq!(ecma_syntax_error(&deep), Some(PatternProblem::TooDeep));
        let bad = NotEcmaPattern {
            pointer: "/pattern".into(),
            pattern: deep,
            problem: PatternProblem::TooDeep,
        };
        let message = bad.to_string();
        assert!(message.len() < 300, "{message}");
        assert!(message.starts_with(&format!("the pattern '{}…' nests", "(".repeat(120))));
    }

    #[test]
    fn deep_schemas_are_walked_without_recursion() {
        let mut schema = json!({"pattern": "\\z"});
        for _ in 0..20_000 {
            let mut map = Map::new();
            map.insert("items".into(), schema);
            schema = Value::Object(map);
        }
        let found = non_ecma_patterns(&schema);
        assert_eq!(found.len(), 1);
        assert_eq!(
            found[0].pointer.len(),
            "/items".len() * 20_000 + "/pattern".len()
        );
        crate::json::drop_deep(schema);
    }
}
