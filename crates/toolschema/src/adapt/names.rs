//! Names a provider accepts: the original when it fits, else a deterministic fix (invalid
//! characters become `_`; a name too long keeps its start and gains a short hash of the
//! original), unique among the names given.

use super::profile::NameRule;
use std::collections::HashSet;

/// Eight hex digits of the FNV-1a hash of `text`: short, stable across machines and versions.
pub(crate) fn short_hash(text: &str) -> String {
    let mut hash: u32 = 0x811c_9dc5;
    for byte in text.bytes() {
        hash ^= u32::from(byte);
        hash = hash.wrapping_mul(0x0100_0193);
    }
    format!("{hash:08x}")
}

/// `name` with every character the rule refuses replaced by `_` (and `_` in front when the first
/// character may not start a name).
fn sanitized(rule: &NameRule, name: &str) -> String {
    let mut out: String = name
        .chars()
        .map(|c| if rule.allows(c) { c } else { '_' })
        .collect();
    if !out.chars().next().is_some_and(|c| rule.allows_first(c)) {
        out.insert(0, '_');
    }
    out
}

/// A name of at most `rule.max_len` characters: the start of `base`, `_`, and a hash of
/// `original` (and of `attempt`, when an earlier attempt was taken).
fn hashed(rule: &NameRule, base: &str, original: &str, attempt: usize) -> String {
    let hash = if attempt == 0 {
        short_hash(original)
    } else {
        short_hash(&format!("{original}#{attempt}"))
    };
    let keep = rule.max_len.saturating_sub(hash.len() + 1);
    // `base` is ASCII: every character it holds passed `rule.allows`.
    let start = &base[..base.len().min(keep)];
    format!("{start}_{hash}")
}

/// The names a provider gets for `names` (in order): a name the rule accepts stays as it is;
/// the others are fixed, never taking a name already given. `None` for a name that repeats an
/// earlier one (a catalog with two tools of one name cannot be mapped back).
///
/// The proxy's many-servers front uses it too, to expose `SERVER__TOOL` names.
pub fn assign(rule: &NameRule, names: &[&str]) -> Vec<Option<String>> {
    let mut taken: HashSet<String> = HashSet::with_capacity(names.len());
    let mut seen: HashSet<&str> = HashSet::with_capacity(names.len());
    let mut out: Vec<Option<String>> = vec![None; names.len()];
    // Names that fit keep them, whatever their position: fixing another name never moves them.
    for (i, name) in names.iter().enumerate() {
        if !seen.insert(name) {
            continue;
        }
        if rule.accepts(name) {
            taken.insert((*name).to_string());
            out[i] = Some((*name).to_string());
        }
    }
    let mut fixed_seen: HashSet<&str> = HashSet::new();
    for (i, name) in names.iter().enumerate() {
        if rule.accepts(name) || !fixed_seen.insert(name) {
            continue;
        }
        let base = sanitized(rule, name);
        let mut candidate = if base.len() <= rule.max_len {
            base.clone()
        } else {
            hashed(rule, &base, name, 0)
        };
        let mut attempt = 0;
        while taken.contains(&candidate) {
            candidate = hashed(rule, &base, name, attempt);
            attempt += 1;
        }
        taken.insert(candidate.clone());
        out[i] = Some(candidate);
    }
    // Repeats of a name get nothing: which tool the provider's name means would be unknown.
    let mut first: HashSet<&str> = HashSet::new();
    for (i, name) in names.iter().enumerate() {
        if !first.insert(name) {
            out[i] = None;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const OPENAI: NameRule = NameRule {
        max_len: 64,
        extra: "_-",
        letter_first: false,
    };

    #[test]
    fn fits_stay_and_others_are_fixed_uniquely() {
        let long = "a".repeat(70);
        let names = ["files.read", "files_read", "ok", long.as_str(), "ok", "x y"];
        let out = assign(&OPENAI, &names);
        assert_eq!(out[1].as_deref(), Some("files_read"));
        // `files_read` is taken by the tool that has it: the fixed name gains a hash.
        let fixed = out[0].as_deref().unwrap();
        assert_eq!(fixed, format!("files_read_{}", short_hash("files.read")));
        assert_eq!(out[2].as_deref(), Some("ok"));
        let shortened = out[3].as_deref().unwrap();
        assert_eq!(shortened.len(), 64);
        assert!(shortened.starts_with("aaaa"));
        assert!(shortened.ends_with(&short_hash(&long)));
        assert_eq!(out[4], None);
        assert_eq!(out[5].as_deref(), Some("x_y"));
        for name in out.iter().flatten() {
            assert!(OPENAI.accepts(name), "{name}");
        }
        // Deterministic.
        assert_eq!(assign(&OPENAI, &names), out);
    }

    #[test]
    fn first_character_rules() {
        let gemini = NameRule {
            max_len: 128,
            extra: "_.:-",
            letter_first: true,
        };
        assert_eq!(assign(&gemini, &["2fast"])[0].as_deref(), Some("_2fast"));
        assert_eq!(assign(&gemini, &["é"])[0].as_deref(), Some("_"));
        assert_eq!(short_hash(""), "811c9dc5");
    }
}
