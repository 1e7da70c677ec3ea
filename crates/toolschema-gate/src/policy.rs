//! Which tools the proxy lets through: `--allow` and `--deny` globs on tool names, and, over
//! HTTP, what the client's token may see and call (its policy in `toolschema.toml`, the scopes
//! tools need).

use crate::scopes::ToolScopes;
use std::collections::BTreeSet;
pub use toolschema::Glob;

/// The allow and deny lists. A tool is allowed when no deny glob matches it and, if there are
/// allow globs, one of them does; and when the client has a [`HolderPolicy`], that allows it
/// too.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ToolPolicy {
    /// `--allow` globs; empty allows every tool not denied.
    pub allow: Vec<Glob>,
    /// `--deny` globs; they win over `--allow`.
    pub deny: Vec<Glob>,
    /// What the client's token may see and call, over HTTP.
    pub holder: Option<HolderPolicy>,
}

/// The tools the holder of one token may see and call: its `[proxy.tokens.NAME]` table, and
/// the scopes each tool needs (`[tool-scopes]`) against the scopes its credential carries.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HolderPolicy {
    /// The token's name (never the token).
    pub name: String,
    /// Globs of the tools it may use; empty: every tool the proxy lets through.
    pub allow: Vec<Glob>,
    /// Globs of the tools it may not use; they win over `allow`.
    pub deny: Vec<Glob>,
    /// The scopes tools need.
    pub scopes: ToolScopes,
    /// The scopes the credential carries; `None`: every scope (authentication is off).
    pub granted: Option<BTreeSet<String>>,
}

impl HolderPolicy {
    fn refusal(&self, tool: &str) -> Option<String> {
        let name = &self.name;
        if let Some(glob) = self.deny.iter().find(|g| g.matches(tool)) {
            return Some(format!(
                "tool '{tool}' is not available to '{name}' (denied by '{glob}' in its policy)"
            ));
        }
        if !self.allow.is_empty() && !self.allow.iter().any(|g| g.matches(tool)) {
            return Some(format!(
                "tool '{tool}' is not available to '{name}' (its policy does not allow it)"
            ));
        }
        let granted = self.granted.as_ref()?;
        let missing: Vec<&str> = self
            .scopes
            .required(tool)
            .into_iter()
            .filter(|scope| !granted.contains(*scope))
            .collect();
        (!missing.is_empty()).then(|| {
            format!(
                "tool '{tool}' is not available to '{name}': it needs the scope {}",
                missing.join(" and ")
            )
        })
    }

    fn is_open(&self) -> bool {
        self.allow.is_empty()
            && self.deny.is_empty()
            && (self.scopes.is_empty() || self.granted.is_none())
    }
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
        self.holder.as_ref().and_then(|holder| holder.refusal(name))
    }

    /// Whether the policy can refuse anything at all.
    pub fn is_open(&self) -> bool {
        self.allow.is_empty()
            && self.deny.is_empty()
            && self.holder.as_ref().is_none_or(HolderPolicy::is_open)
    }

    /// Whether what a client sees depends on who it is (a listing filtered for one token must
    /// not be cached for others).
    pub fn is_per_client(&self) -> bool {
        self.holder.as_ref().is_some_and(|holder| !holder.is_open())
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
            holder: None,
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

    #[test]
    fn a_holder_sees_only_what_its_policy_and_scopes_allow() {
        let holder = HolderPolicy {
            name: "alice".into(),
            allow: vec![Glob::new("fs_*"), Glob::new("echo")],
            deny: vec![Glob::new("fs_write")],
            scopes: ToolScopes::new().require("fs_read", "files:read"),
            granted: Some(BTreeSet::new()),
        };
        let policy = ToolPolicy {
            deny: vec![Glob::new("fs_delete")],
            holder: Some(holder.clone()),
            ..ToolPolicy::default()
        };
        assert_eq!(policy.refusal("echo"), None);
        assert_eq!(
            policy.refusal("fs_delete").as_deref(),
            Some("tool 'fs_delete' is denied by this proxy (--deny fs_delete)")
        );
        assert_eq!(
            policy.refusal("fs_write").as_deref(),
            Some(
                "tool 'fs_write' is not available to 'alice' (denied by 'fs_write' in its policy)"
            )
        );
        assert_eq!(
            policy.refusal("shell").as_deref(),
            Some("tool 'shell' is not available to 'alice' (its policy does not allow it)")
        );
        assert_eq!(
            policy.refusal("fs_read").as_deref(),
            Some("tool 'fs_read' is not available to 'alice': it needs the scope files:read")
        );
        assert!(!policy.is_open() && policy.is_per_client());
        let granted = ToolPolicy {
            holder: Some(HolderPolicy {
                granted: Some(BTreeSet::from(["files:read".to_string()])),
                ..holder
            }),
            ..ToolPolicy::default()
        };
        assert_eq!(granted.refusal("fs_read"), None);
        let anyone = ToolPolicy {
            holder: Some(HolderPolicy {
                name: "anonymous".into(),
                scopes: ToolScopes::new().require("fs_read", "files:read"),
                ..HolderPolicy::default()
            }),
            ..ToolPolicy::default()
        };
        assert!(anyone.is_open() && !anyone.is_per_client());
    }
}
