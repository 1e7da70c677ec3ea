//! Characters a reader cannot see: what they are, and how to show them.
//!
//! A description can carry text a person reviewing it never sees but a model reads: zero-width
//! characters, Unicode tag characters (which spell ASCII invisibly), bidirectional controls that
//! reorder what is displayed, control characters and ANSI escapes that rewrite a terminal. The diff
//! shows them in its messages and the `SEC` lint rules flag them; both classify them here.

use std::borrow::Cow;
use std::fmt::Write as _;

/// Why a character is hidden from a reader.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum HiddenKind {
    /// Takes no space and shows nothing: zero-width spaces and joiners, the byte order mark, the
    /// soft hyphen, invisible operators, fillers, variation selectors.
    Invisible,
    /// A Unicode tag character (U+E0000..U+E007F): each one mirrors an ASCII character, unseen.
    Tag,
    /// Changes the display order of the text around it (bidirectional embedding, override,
    /// isolate and mark characters).
    Bidi,
    /// The escape character, which starts an ANSI terminal sequence.
    Escape,
    /// Any other C0 or C1 control character, except tab, line feed and carriage return.
    Control,
}

impl HiddenKind {
    /// What the kind is called in messages.
    pub fn describe(self) -> &'static str {
        match self {
            HiddenKind::Invisible => "invisible character",
            HiddenKind::Tag => "Unicode tag character",
            HiddenKind::Bidi => "bidirectional control",
            HiddenKind::Escape => "ANSI escape character",
            HiddenKind::Control => "control character",
        }
    }
}

/// Whether `c` is hidden from a reader, and why. Tab, line feed and carriage return are ordinary
/// layout and are not hidden.
///
/// ```
/// use toolschema::text::{hidden_kind, HiddenKind};
/// assert_eq!(hidden_kind('\u{200B}'), Some(HiddenKind::Invisible));
/// assert_eq!(hidden_kind('\u{202E}'), Some(HiddenKind::Bidi));
/// assert_eq!(hidden_kind('\u{1B}'), Some(HiddenKind::Escape));
/// assert_eq!(hidden_kind('\n'), None);
/// assert_eq!(hidden_kind('é'), None);
/// ```
pub fn hidden_kind(c: char) -> Option<HiddenKind> {
    match c {
        '\t' | '\n' | '\r' => None,
        '\u{1B}' => Some(HiddenKind::Escape),
        '\u{0}'..='\u{1F}' | '\u{7F}'..='\u{9F}' => Some(HiddenKind::Control),
        '\u{200E}'
        | '\u{200F}'
        | '\u{061C}'
        | '\u{202A}'..='\u{202E}'
        | '\u{2066}'..='\u{2069}' => Some(HiddenKind::Bidi),
        '\u{E0000}'..='\u{E007F}' => Some(HiddenKind::Tag),
        '\u{00AD}'
        | '\u{034F}'
        | '\u{115F}'
        | '\u{1160}'
        | '\u{17B4}'
        | '\u{17B5}'
        | '\u{180B}'..='\u{180F}'
        | '\u{200B}'..='\u{200D}'
        | '\u{2060}'..='\u{2064}'
        | '\u{206A}'..='\u{206F}'
        | '\u{3164}'
        | '\u{FE00}'..='\u{FE0F}'
        | '\u{FEFF}'
        | '\u{FFA0}'
        | '\u{FFF9}'..='\u{FFFB}'
        | '\u{1D173}'..='\u{1D17A}'
        | '\u{E0100}'..='\u{E01EF}' => Some(HiddenKind::Invisible),
        _ => None,
    }
}

/// Whether `c` is a pictograph that a zero-width joiner or a variation selector may legitimately
/// follow or join (emoji sequences such as "👩‍💻" or "❤️").
pub fn is_pictograph(c: char) -> bool {
    matches!(c,
        '\u{203C}' | '\u{2049}' | '\u{2122}' | '\u{2139}' | '\u{2194}'..='\u{21AA}'
        | '\u{231A}'..='\u{23FF}' | '\u{24C2}' | '\u{25AA}'..='\u{25FE}' | '\u{2600}'..='\u{27BF}'
        | '\u{2934}' | '\u{2935}' | '\u{2B05}'..='\u{2B55}' | '\u{3030}' | '\u{303D}'
        | '\u{3297}' | '\u{3299}' | '\u{1F000}'..='\u{1FAFF}')
}

/// The scripts in whose spelling the zero-width non-joiner (U+200C) and joiner (U+200D) take
/// part: Persian, Kurdish and the other languages written in Arabic script break a word's joining
/// with U+200C (`می‌خواهم`), and the Indic scripts choose a conjunct's form with either
/// (Devanagari `क्‍ष`, Malayalam's chillu letters, Sinhala's yansaya); so do Syriac, Thaana, N'Ko,
/// Myanmar and Khmer. Each is a list of code point ranges; Latin, Greek, Cyrillic, Hebrew or CJK
/// have no spelling use for either, so none of them is here.
const JOINING_SCRIPTS: &[&[(char, char)]] = &[
    // Arabic, Arabic Supplement, Extended-B and -A, Presentation Forms-A and -B (up to U+FEFC:
    // U+FEFF is the byte order mark).
    &[
        ('\u{0600}', '\u{06FF}'),
        ('\u{0750}', '\u{077F}'),
        ('\u{0870}', '\u{08FF}'),
        ('\u{FB50}', '\u{FDFF}'),
        ('\u{FE70}', '\u{FEFC}'),
    ],
    &[('\u{0700}', '\u{074F}')],                           // Syriac
    &[('\u{0780}', '\u{07BF}')],                           // Thaana
    &[('\u{07C0}', '\u{07FF}')],                           // N'Ko
    &[('\u{0900}', '\u{097F}'), ('\u{A8E0}', '\u{A8FF}')], // Devanagari
    &[('\u{0980}', '\u{09FF}')],                           // Bengali
    &[('\u{0A00}', '\u{0A7F}')],                           // Gurmukhi
    &[('\u{0A80}', '\u{0AFF}')],                           // Gujarati
    &[('\u{0B00}', '\u{0B7F}')],                           // Oriya
    &[('\u{0B80}', '\u{0BFF}')],                           // Tamil
    &[('\u{0C00}', '\u{0C7F}')],                           // Telugu
    &[('\u{0C80}', '\u{0CFF}')],                           // Kannada
    &[('\u{0D00}', '\u{0D7F}')],                           // Malayalam
    &[('\u{0D80}', '\u{0DFF}')],                           // Sinhala
    &[('\u{1000}', '\u{109F}')],                           // Myanmar
    &[('\u{1780}', '\u{17FF}')],                           // Khmer
];

/// Which of [`JOINING_SCRIPTS`] `c` is a letter (or a vowel sign, virama or other mark) of, if
/// any. Digits and punctuation count as none: a joiner has no spelling use beside them.
fn joining_script(c: char) -> Option<usize> {
    if c.is_ascii()
        || c.is_numeric()
        || matches!(
            c,
            '\u{060C}' | '\u{061B}' | '\u{061F}' | '\u{066A}'
                ..='\u{066D}' | '\u{06D4}' | '\u{0964}' | '\u{0965}'
        )
    {
        return None;
    }
    JOINING_SCRIPTS
        .iter()
        .position(|ranges| ranges.iter().any(|&(low, high)| (low..=high).contains(&c)))
}

/// Whether `text` holds only printable ASCII (U+0020 to U+007E): nothing in it steers a terminal
/// or hides, so it can be printed as it is.
///
/// ```
/// use toolschema::text::is_printable_ascii;
/// assert!(is_printable_ascii("Search the docs."));
/// assert!(!is_printable_ascii("tab\there") && !is_printable_ascii("café"));
/// ```
pub fn is_printable_ascii(text: &str) -> bool {
    only_printable_ascii(text, b"")
}

/// Whether `text` holds only printable ASCII and the control characters in `also`: what most
/// text is, checked 16 bytes at a time (the compiler makes one vector comparison of each block
/// instead of a branch per byte).
pub(crate) fn only_printable_ascii(text: &str, also: &[u8]) -> bool {
    let allowed = |b: u8| (0x20..0x7F).contains(&b) || also.contains(&b);
    let mut blocks = text.as_bytes().chunks_exact(16);
    for block in &mut blocks {
        // Most blocks are printable ASCII: the others are looked at byte by byte.
        let printable = block
            .iter()
            .fold(true, |all, &b| all & (0x20..0x7F).contains(&b));
        if !printable && !block.iter().all(|&b| allowed(b)) {
            return false;
        }
    }
    blocks.remainder().iter().all(|&b| allowed(b))
}

/// The hidden characters of `text` that are not part of an emoji sequence or of a word's
/// spelling: each with its byte offset and kind. A zero-width joiner between two pictographs, a
/// variation selector after one, the tag characters of a flag sequence (after U+1F3F4), and a
/// single zero-width non-joiner or joiner between two letters of one script that spells with it
/// (Arabic, the Indic scripts and others: see `JOINING_SCRIPTS`) are left out. A run of them, or
/// one beside a letter of any other script (ASCII above all), is hidden text.
pub fn hidden_chars(text: &str) -> Vec<(usize, char, HiddenKind)> {
    let mut found = Vec::new();
    // Most text is printable ASCII: nothing to look at character by character.
    if only_printable_ascii(text, b"\t\n\r") {
        return found;
    }
    let mut previous: Option<char> = None;
    // Tag characters still to come of a well-formed flag sequence (U+1F3F4, one to seven tag
    // letters or digits, the cancel tag), and whether the pictograph before has had its one
    // variation selector: anything longer is text hidden after an emoji.
    let mut flag_left: usize = 0;
    let mut selector_used = false;
    let mut chars = text.char_indices().peekable();
    while let Some((at, c)) = chars.next() {
        let next = chars.peek().map(|&(_, n)| n);
        if let Some(kind) = hidden_kind(c) {
            let after_pictograph = previous.is_some_and(is_pictograph);
            let in_word = || {
                let script = previous.and_then(joining_script);
                script.is_some() && next.and_then(joining_script) == script
            };
            // Part of an emoji sequence or of a word's spelling.
            let spelled = match c {
                '\u{200D}' if after_pictograph => next.is_some_and(is_pictograph),
                '\u{200C}' | '\u{200D}' => in_word(),
                '\u{FE0E}' | '\u{FE0F}' => after_pictograph && !selector_used,
                '\u{E0020}'..='\u{E007F}' => flag_left > 0,
                _ => false,
            };
            if !spelled {
                found.push((at, c, kind));
            }
            flag_left = if kind == HiddenKind::Tag {
                flag_left.saturating_sub(1)
            } else {
                0
            };
            selector_used |= matches!(c, '\u{FE0E}' | '\u{FE0F}');
            // Joiners and selectors keep the pictograph (or letter) before them as the one to
            // join.
            if !spelled {
                previous = Some(c);
            }
        } else {
            flag_left = if c == '\u{1F3F4}' {
                flag_tags(&text[at + c.len_utf8()..])
            } else {
                0
            };
            selector_used = false;
            previous = Some(c);
        }
    }
    found
}

/// How many characters at the start of `rest` are the tags of a well-formed emoji flag (one to
/// seven tag letters `a`-`z` or digits, then the cancel tag U+E007F), or 0.
fn flag_tags(rest: &str) -> usize {
    let spec = rest
        .chars()
        .take_while(|c| matches!(c, '\u{E0030}'..='\u{E0039}' | '\u{E0061}'..='\u{E007A}'))
        .count();
    let ends = rest.chars().nth(spec) == Some('\u{E007F}');
    if (1..=7).contains(&spec) && ends {
        spec + 1
    } else {
        0
    }
}

/// The ASCII text that Unicode tag characters in `text` spell (each tag character U+E0020..U+E007E
/// mirrors an ASCII character), or `None` when there are none.
///
/// ```
/// use toolschema::text::tag_text;
/// assert_eq!(tag_text("ok\u{E0048}\u{E0049}").as_deref(), Some("HI"));
/// ```
pub fn tag_text(text: &str) -> Option<String> {
    let spelled: String = text
        .chars()
        .filter_map(|c| match c {
            '\u{E0020}'..='\u{E007E}' => char::from_u32(c as u32 - 0xE0000),
            _ => None,
        })
        .collect();
    (!spelled.is_empty()).then_some(spelled)
}

/// `text` with every hidden character written out so a reader sees it: `<U+200B>`, and `\n`,
/// `\r`, `\t` for line breaks and tabs (so the result is one line).
///
/// ```
/// use toolschema::text::visible;
/// assert_eq!(visible("Reads\u{200B} files.\nThen"), "Reads<U+200B> files.\\nThen");
/// ```
pub fn visible(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if hidden_kind(c).is_some() || steers_terminal(c) => {
                let _ = write!(out, "<U+{:04X}>", c as u32);
            }
            c => out.push(c),
        }
    }
    out
}

/// Whether `c` printed to a terminal would steer it or reorder the text around it: the escape
/// character that starts ANSI sequences, the other C0 and C1 control characters (tab and line
/// feed aside; carriage return included, which moves the cursor back over the line),
/// bidirectional controls, and the line and paragraph separators (U+2028, U+2029), which
/// editors and log viewers break lines at, so that a name could fake a line of the report.
/// Names and texts from a catalog or a server may hold any of them.
pub fn steers_terminal(c: char) -> bool {
    matches!(c, '\r' | '\u{2028}' | '\u{2029}')
        || matches!(
            hidden_kind(c),
            Some(HiddenKind::Escape | HiddenKind::Control | HiddenKind::Bidi)
        )
}

/// `text` as it can be printed to a terminal and read: every character that
/// [steers one](steers_terminal), and every [hidden one](hidden_chars) (a zero-width space, a
/// tag character: a name could end in a suffix no reviewer sees), written `<U+001B>`; borrowed
/// when there is none. Emoji sequences and a joiner between letters of a script that spells
/// with it are shown as they are.
///
/// ```
/// use toolschema::text::terminal_safe;
/// assert_eq!(terminal_safe("x\u{1B}]0;title\u{7}\n"), "x<U+001B>]0;title<U+0007>\n");
/// assert_eq!(terminal_safe("plain\ttext"), "plain\ttext");
/// ```
pub fn terminal_safe(text: &str) -> Cow<'_, str> {
    // Printable ASCII, tab and line feed steer nothing: most text is only those.
    if only_printable_ascii(text, b"\t\n") {
        return Cow::Borrowed(text);
    }
    let hidden: Vec<usize> = hidden_chars(text)
        .into_iter()
        .map(|(at, _, _)| at)
        .collect();
    if hidden.is_empty() && !text.chars().any(steers_terminal) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    for (at, c) in text.char_indices() {
        if steers_terminal(c) || hidden.binary_search(&at).is_ok() {
            let _ = write!(out, "<U+{:04X}>", c as u32);
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// JSON `text` with each character that [steers a terminal](steers_terminal) or that a reader
/// cannot see (any [hidden](hidden_kind) one) written as a `\uXXXX` escape (a tag character as
/// a surrogate pair): the same document to a JSON reader, and nothing in it steers or hides
/// from one reading it. Line feeds, tabs and carriage returns go through: outside strings they
/// are JSON's whitespace, and inside strings a JSON writer has escaped them already.
///
/// ```
/// use toolschema::text::json_safe;
/// assert_eq!(json_safe("{\"a\":\"x\u{1B}[2J\u{200B}\"}"), r#"{"a":"x\u001b[2J\u200b"}"#);
/// ```
pub fn json_safe(text: &str) -> Cow<'_, str> {
    let escaped = |c: char| {
        !matches!(c, '\n' | '\t' | '\r') && (steers_terminal(c) || hidden_kind(c).is_some())
    };
    if !text.chars().any(escaped) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        if escaped(c) {
            for unit in c.encode_utf16(&mut [0; 2]) {
                let _ = write!(out, "\\u{unit:04x}");
            }
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// Whether `a` and `b` are the same key to a reader that matches keys without regard to case
/// (Go's `encoding/json`, which folds as `strings.EqualFold` does: `ſ` is `s`, the Kelvin sign
/// is `k`), though they differ.
///
/// ```
/// use toolschema::text::folds_alike;
/// assert!(folds_alike("Name", "name"));
/// assert!(folds_alike("argumentſ", "arguments"));
/// assert!(!folds_alike("name", "name"));
/// assert!(!folds_alike("names", "name"));
/// assert!(!folds_alike("ıd", "id"));
/// ```
pub fn folds_alike(a: &str, b: &str) -> bool {
    a != b
        && a.chars().count() == b.chars().count()
        && a.chars().zip(b.chars()).all(|(x, y)| fold(x) == fold(y))
}

/// One character as case folding reads it (single characters only, as simple folding does):
/// two names [fold alike](folds_alike) when their characters fold to the same ones.
pub fn fold(c: char) -> char {
    // The dotless and dotted i are Turkic case mappings, outside simple folding: Go folds
    // neither to i.
    if matches!(c, '\u{0130}' | '\u{0131}') {
        return c;
    }
    let mut upper = c.to_uppercase();
    let upper = match (upper.next(), upper.next()) {
        (Some(u), None) => u,
        _ => c,
    };
    let mut lower = upper.to_lowercase();
    match (lower.next(), lower.next()) {
        (Some(l), None) => l,
        _ => upper,
    }
}

/// `text` cut to its first `max` characters, with `…` where it was cut.
pub fn shorten(text: &str, max: usize) -> String {
    let mut chars = text.char_indices();
    match chars.nth(max) {
        None => text.to_string(),
        Some((end, _)) => format!("{}…", &text[..end]),
    }
}

/// The noun that goes with `n`: `one` for 1, `many` for any other count.
pub fn noun<'s>(n: u64, one: &'s str, many: &'s str) -> &'s str {
    if n == 1 {
        one
    } else {
        many
    }
}

/// `n` and the noun that goes with it: `1 warning`, `2 warnings`, `0 warnings`.
///
/// ```
/// assert_eq!(toolschema::text::count(1, "case", "cases"), "1 case");
/// assert_eq!(toolschema::text::count(0, "case", "cases"), "0 cases");
/// ```
pub fn count(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", noun(n as u64, one, many))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn printable_ascii_is_told_apart_at_every_position_of_a_block() {
        let naive = |text: &str, also: &[u8]| {
            text.bytes()
                .all(|b| (0x20..0x7F).contains(&b) || also.contains(&b))
        };
        for length in 0..40 {
            for at in 0..length {
                for odd in [
                    '\t', '\n', '\r', '\u{1F}', '\u{7F}', 'é', '\u{200B}', '~', ' ',
                ] {
                    let mut text = "a".repeat(length);
                    text.replace_range(at..at + 1, &odd.to_string());
                    for also in [&b""[..], b"\t\n", b"\t\n\r"] {
                        assert_eq!(
                            only_printable_ascii(&text, also),
                            naive(&text, also),
                            "{text:?} {also:?}"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn what_steers_a_terminal_is_escaped_and_nothing_else() {
        for c in [
            '\u{1B}', '\u{0}', '\u{7}', '\r', '\u{7F}', '\u{9B}', '\u{202E}', '\u{2066}',
            '\u{200F}', '\u{2028}', '\u{2029}',
        ] {
            assert!(steers_terminal(c), "{c:?}");
            assert_eq!(
                terminal_safe(&format!("a{c}b")),
                format!("a<U+{:04X}>b", c as u32)
            );
        }
        // Shown as they are: tab, line feed, letters of any script, emoji, a joiner inside a
        // Persian or Hindi word.
        for text in [
            "tab\tand\nline",
            "é 日本 مرحبا 👩\u{200D}💻",
            "جست\u{200C}وجو",
            "क्\u{200D}ष",
        ] {
            assert!(matches!(terminal_safe(text), Cow::Borrowed(_)), "{text:?}");
        }
    }

    #[test]
    fn what_a_reader_cannot_see_is_written_out() {
        for (text, shown) in [
            ("new\u{200B}", "new<U+200B>"),
            ("path\u{FEFF}", "path<U+FEFF>"),
            ("a\u{E0041}\u{E0042}", "a<U+E0041><U+E0042>"),
            // A joiner between ASCII letters, or at an end, spells nothing.
            ("ab\u{200C}cd", "ab<U+200C>cd"),
            ("مرحبا\u{200D}", "مرحبا<U+200D>"),
            ("日\u{200C}本", "日<U+200C>本"),
        ] {
            assert_eq!(terminal_safe(text), shown, "{text:?}");
        }
        assert_eq!(visible("a\u{2028}b"), "a<U+2028>b");
    }

    #[test]
    fn emoji_sequences_are_not_hidden_text() {
        assert!(hidden_chars("coder 👩\u{200D}💻 and ❤\u{FE0F}").is_empty());
        // A flag: black flag, tag letters, cancel tag.
        assert!(
            hidden_chars("\u{1F3F4}\u{E0067}\u{E0062}\u{E0073}\u{E0063}\u{E0074}\u{E007F}")
                .is_empty()
        );
        // Tags after a black flag that spell no flag, and a second variation selector, are
        // hidden text.
        let smuggled = format!("ok \u{1F3F4}{}\u{E007F}", "\u{E0049}\u{E0047}\u{E004E}");
        assert_eq!(hidden_chars(&smuggled).len(), 4);
        assert_eq!(hidden_chars("❤\u{FE0F}\u{FE0F}\u{FE0E}").len(), 2);
        let found = hidden_chars("a\u{200D}b\u{E0041}");
        assert_eq!(
            found,
            [
                (1, '\u{200D}', HiddenKind::Invisible),
                (5, '\u{E0041}', HiddenKind::Tag)
            ]
        );
    }

    #[test]
    fn joiners_in_words_of_scripts_that_spell_with_them_are_not_hidden_text() {
        for text in [
            // Persian "search", "I want": U+200C inside the word.
            "\u{062C}\u{0633}\u{062A}\u{200C}\u{0648}\u{062C}\u{0648} \u{062F}\u{0631} \u{0645}\u{0633}\u{062A}\u{0646}\u{062F}\u{0627}\u{062A}",
            "\u{0645}\u{06CC}\u{200C}\u{062E}\u{0648}\u{0627}\u{0647}\u{0645}",
            // Kurdish (Sorani), Arabic script.
            "\u{0628}\u{06D5}\u{200C}\u{0643}\u{0648}\u{0631}\u{062F}\u{06CC}",
            // Hindi: ka, virama, ZWJ, ssa (a half form), and ZWNJ after a virama.
            "\u{0915}\u{094D}\u{200D}\u{0937}",
            "\u{0915}\u{094D}\u{200C}\u{0937}",
            // Conjunct forms in Malayalam, Bengali and Sinhala.
            "\u{0D28}\u{0D4D}\u{200D}\u{0D28}",
            "\u{09B0}\u{09CD}\u{200D}\u{09AF}",
            "\u{0DC1}\u{0DCA}\u{200D}\u{0DBB}\u{0DD3}",
        ] {
            let found = hidden_chars(text);
            assert!(found.is_empty(), "{}: {found:?}", visible(text));
        }
    }

    #[test]
    fn joiners_that_smuggle_are_still_hidden_text() {
        let joiners = |text: &str| {
            hidden_chars(text)
                .iter()
                .map(|(_, c, _)| *c)
                .collect::<Vec<_>>()
        };
        let persian = "\u{0645}\u{06CC}";
        for (text, expected) in [
            // Between ASCII letters, Latin, Cyrillic, Greek, CJK letters.
            ("pass\u{200C}word".to_string(), vec!['\u{200C}']),
            ("r\u{200D}m".to_string(), vec!['\u{200D}']),
            ("caf\u{00E9}\u{200C}\u{00E9}".to_string(), vec!['\u{200C}']),
            ("\u{0434}\u{200C}\u{0430}".to_string(), vec!['\u{200C}']),
            ("\u{03B1}\u{200D}\u{03B2}".to_string(), vec!['\u{200D}']),
            ("\u{65E5}\u{200C}\u{672C}".to_string(), vec!['\u{200C}']),
            // Between letters of two scripts, or of one and a digit or punctuation.
            (format!("{persian}\u{200C}a"), vec!['\u{200C}']),
            ("\u{0915}\u{200D}\u{0645}".to_string(), vec!['\u{200D}']),
            (format!("{persian}\u{200C}\u{06F1}"), vec!['\u{200C}']),
            (format!("{persian}\u{200C}\u{060C}"), vec!['\u{200C}']),
            // Runs, even between Persian letters, and other invisible characters there.
            (
                format!("{persian}\u{200C}\u{200C}{persian}"),
                vec!['\u{200C}', '\u{200C}'],
            ),
            (
                format!("{persian}\u{200C}\u{200D}{persian}"),
                vec!['\u{200C}', '\u{200D}'],
            ),
            (format!("{persian}\u{200B}{persian}"), vec!['\u{200B}']),
            (
                format!("{persian}\u{200C}\u{E0041}{persian}"),
                vec!['\u{200C}', '\u{E0041}'],
            ),
            // At the start or end of the text (a word-final chillu written with U+200D too), or
            // beside a space.
            ("\u{0D28}\u{0D4D}\u{200D}".to_string(), vec!['\u{200D}']),
            (format!("\u{200C}{persian}"), vec!['\u{200C}']),
            (format!("{persian}\u{200C}"), vec!['\u{200C}']),
            (format!("{persian} \u{200C}{persian}"), vec!['\u{200C}']),
        ] {
            assert_eq!(joiners(&text), expected, "{}", visible(&text));
        }
    }

    #[test]
    fn every_hidden_character_is_shown() {
        for c in [
            '\u{0}',
            '\u{1B}',
            '\u{85}',
            '\u{202E}',
            '\u{E0041}',
            '\u{FEFF}',
        ] {
            let shown = visible(&c.to_string());
            assert_eq!(shown, format!("<U+{:04X}>", c as u32));
        }
        assert_eq!(visible("a\tb\r\n"), "a\\tb\\r\\n");
    }
}
