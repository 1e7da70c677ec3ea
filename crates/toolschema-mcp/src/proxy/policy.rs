//! Which tools the proxy lets through: `--allow` and `--deny` globs on tool names.

pub use toolschema::Glob;

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
