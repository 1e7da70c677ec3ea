//! Which tools the proxy lets through: `--allow` and `--deny` globs on tool names.

pub use toolschema::tool::Glob;

/// The allow and deny lists. A tool is allowed when no deny glob matches it and, if there are
/// allow globs, one of them does.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ToolPolicy {
    /// `--allow` globs; empty allows every tool not denied.
    pub allow: Vec<Glob>,
    /// `--deny` globs; they win over `--allow`.
    pub deny: Vec<Glob>,
}

impl ToolPolicy {
    /// Why `name` is refused, or `None` when it is allowed.
    pub fn refusal(&self, name: &str) -> Option<String> {
        if let Some(glob) = self.deny.iter().find(|g| g.matches(name)) {
            return Some(format!(
                "tool '{name}' is denied by this proxy (--deny {glob})"
            ));
        }
        if !self.allow.is_empty() && !self.allow.iter().any(|g| g.matches(name)) {
            return Some(format!(
                "tool '{name}' is not allowed by this proxy (it matches no --allow pattern)"
            ));
        }
        None
    }

    /// Whether the policy can refuse anything at all.
    pub fn is_open(&self) -> bool {
        self.allow.is_empty() && self.deny.is_empty()
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

    #[test]
    fn deny_wins_over_allow() {
        let policy = ToolPolicy {
            allow: vec![Glob::new("fs_*")],
            deny: vec![Glob::new("fs_delete*")],
        };
        assert_eq!(policy.refusal("fs_read"), None);
        assert_eq!(
            policy.refusal("fs_delete_all").as_deref(),
            Some("tool 'fs_delete_all' is denied by this proxy (--deny fs_delete*)")
        );
        assert_eq!(
            policy.refusal("shell").as_deref(),
            Some("tool 'shell' is not allowed by this proxy (it matches no --allow pattern)")
        );
        assert!(ToolPolicy::default().is_open());
    }
}
