//! Globs on names (tool names, mostly): `*` matches any run of characters, `?` one character.
//! The proxy's `--allow`/`--deny` and the HTTP guard's tool scopes match tool names with them.

use std::fmt;

/// A glob on tool names: `*` matches any run of characters, `?` one character, anything else
/// itself.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Glob(String);

impl Glob {
    /// A glob from its pattern.
    pub fn new(pattern: impl Into<String>) -> Glob {
        Glob(pattern.into())
    }

    /// Whether `name` matches the whole pattern.
    pub fn matches(&self, name: &str) -> bool {
        let pattern: Vec<char> = self.0.chars().collect();
        let name: Vec<char> = name.chars().collect();
        // Iterative matching with backtracking to the last `*`: linear in practice, no recursion.
        let (mut p, mut n) = (0, 0);
        let mut star: Option<(usize, usize)> = None;
        while n < name.len() {
            match pattern.get(p) {
                Some('*') => {
                    star = Some((p, n));
                    p += 1;
                }
                Some('?') => {
                    p += 1;
                    n += 1;
                }
                Some(c) if *c == name[n] => {
                    p += 1;
                    n += 1;
                }
                _ => match star {
                    Some((star_p, star_n)) => {
                        p = star_p + 1;
                        n = star_n + 1;
                        star = Some((star_p, star_n + 1));
                    }
                    None => return false,
                },
            }
        }
        pattern[p..].iter().all(|c| *c == '*')
    }
}

impl fmt::Display for Glob {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs_match_whole_names() {
        let cases = [
            ("*", "anything", true),
            ("read_*", "read_file", true),
            ("read_*", "unread_file", false),
            ("*_file", "write_file", true),
            ("*file*", "list_files_fast", true),
            ("get-?", "get-a", true),
            ("get-?", "get-ab", false),
            ("a*b*c", "aXbYbZc", true),
            ("a*b*c", "aXbYbZ", false),
            ("exact", "exact", true),
            ("exact", "exactly", false),
            ("", "", true),
            ("**", "x", true),
        ];
        for (pattern, name, expected) in cases {
            assert_eq!(
                Glob::new(pattern).matches(name),
                expected,
                "{pattern} vs {name}"
            );
        }
    }
}
