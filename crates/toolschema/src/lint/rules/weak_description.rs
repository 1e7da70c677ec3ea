//! DESC-002.

use crate::json::Members;
use crate::lint::context::{Report, ToolContext};
use crate::lint::registry::declare_rule;
use serde_json::Value;

declare_rule! {
    /// A tool description that only repeats the name, or has fewer than three words.
    ///
    /// ## What it flags
    /// A `description` whose words are the words of the tool's name (`get_weather` and
    /// "Get weather."), or that has fewer than three words.
    ///
    /// ## Why it matters
    /// A description that says nothing the name does not leaves the model guessing when the tool
    /// applies, what it needs and what it returns.
    ///
    /// ## On real servers
    /// 1 finding on the six real servers measured, judged wrong: "Switches branches" is short
    /// but enough for git_checkout. A pedantic rule: it runs when selected.
    ///
    /// ## Example
    /// ```json
    /// {"name": "list_files", "description": "List files", "inputSchema": {"type": "object"}}
    /// ```
    ///
    /// ## Fix
    /// Say when to use the tool and what it returns: "List the files in a directory of the
    /// workspace, with their sizes; use it before reading a file." There is no automatic fix.
    pub static WEAK_DESCRIPTION = {
        code: "DESC-002",
        name: "weak-description",
        severity: Info,
        fixes: [],
        check: Tool(check),
        set: Pedantic,
    };
}

/// Fewest words a description should have.
const MIN_WORDS: usize = 3;

/// The words of a text or a name, as slices of it: split at anything not alphanumeric and where
/// a lowercase letter meets an uppercase one (`get_weather`, `getWeather`, "Get weather.").
fn words(text: &str) -> impl Iterator<Item = &str> + Clone {
    let mut rest = text;
    std::iter::from_fn(move || {
        let start = rest.find(char::is_alphanumeric)?;
        rest = &rest[start..];
        let mut previous_lower = false;
        let end = rest
            .char_indices()
            .find(|&(_, c)| {
                let boundary = !c.is_alphanumeric() || (c.is_uppercase() && previous_lower);
                previous_lower = c.is_lowercase();
                boundary
            })
            .map_or(rest.len(), |(i, _)| i);
        let word = &rest[..end];
        rest = &rest[end..];
        Some(word)
    })
}

/// How many words `text` has, as [`words`] splits them; plain ASCII is counted byte by byte.
fn word_count(text: &str) -> usize {
    word_count_up_to(text, usize::MAX)
}

/// How many words `text` has, counting no further than `limit`.
fn word_count_up_to(text: &str, limit: usize) -> usize {
    if !text.is_ascii() {
        return words(text).take(limit).count();
    }
    let mut count = 0;
    let mut previous: Option<u8> = None;
    for b in text.bytes() {
        if count >= limit {
            break;
        }
        let starts = match previous {
            _ if !b.is_ascii_alphanumeric() => false,
            Some(p) if p.is_ascii_alphanumeric() => {
                b.is_ascii_uppercase() && p.is_ascii_lowercase()
            }
            _ => true,
        };
        count += usize::from(starts);
        previous = Some(b);
    }
    count
}

/// Whether two texts have the same words, ignoring case.
fn same_words(a: &str, b: &str) -> bool {
    let lower = |w: &str| w.chars().flat_map(char::to_lowercase).collect::<String>();
    let (mut x, mut y) = (words(a), words(b));
    loop {
        match (x.next(), y.next()) {
            (None, None) => return true,
            (Some(p), Some(q)) if p.eq_ignore_ascii_case(q) || lower(p) == lower(q) => {}
            _ => return false,
        }
    }
}

fn check(cx: &ToolContext<'_>, report: &mut Report<'_>) {
    let Some(Value::String(description)) = cx.fields.and_then(|f| f.member("description")) else {
        return;
    };
    if description.trim().is_empty() {
        return; // DESC-001
    }
    // Count only as far as the counts that matter: most descriptions are much longer than names
    // and than MIN_WORDS. Compare words only when the counts match.
    let name_words = cx.name.map(word_count);
    let limit = MIN_WORDS.max(name_words.map_or(0, |n| n + 1));
    let count = word_count_up_to(description, limit);
    let repeats = cx
        .name
        .is_some_and(|name| name_words == Some(count) && same_words(name, description));
    let message = if repeats {
        "description only repeats the tool name: say when to use the tool and what it returns"
            .to_string()
    } else if count < MIN_WORDS {
        format!(
            "description has {}: say when to use the tool and what it returns",
            crate::text::count(count, "word", "words")
        )
    } else {
        return;
    };
    let span = cx.field_span("description").unwrap_or(0);
    report.add(format!("{}/description", cx.tool.pointer), span, message);
}

#[cfg(test)]
mod tests {
    use super::{same_words, word_count, word_count_up_to, words};

    #[test]
    fn splits_names_and_sentences() {
        let split = |s| words(s).collect::<Vec<_>>();
        assert_eq!(split("get_weather"), ["get", "weather"]);
        assert_eq!(split("getWeather"), ["get", "Weather"]);
        assert_eq!(split("Get weather."), ["Get", "weather"]);
        assert_eq!(split("read-file v2"), ["read", "file", "v2"]);
        assert_eq!(split(" ..."), Vec::<&str>::new());
        for text in [
            "getWeather",
            "Get weather.",
            "a-b c",
            " x ",
            "",
            "ÉtatCivil dé",
            "v2Beta",
        ] {
            assert_eq!(word_count(text), words(text).count(), "{text}");
        }
        assert!(same_words("getWeather", "Get weather."));
        assert!(same_words("ÉTAT", "état"));
        assert!(!same_words("get_weather", "Get the weather."));
    }

    #[test]
    fn counting_stops_at_the_limit() {
        for text in [
            "getWeather now",
            "Get the weather.",
            "",
            "ÉtatCivil dé x",
            "a b c d e",
        ] {
            for limit in 0..7 {
                let expected = word_count(text).min(limit);
                assert_eq!(word_count_up_to(text, limit), expected, "{text} {limit}");
            }
        }
    }

}
